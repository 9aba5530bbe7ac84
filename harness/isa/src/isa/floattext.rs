//! FP16/BF16 immediates spelled exactly as nvdisasm spells them.
//!
//! Measured on all 2^16 patterns of both formats (the oracle test re-checks them):
//! `0`; `-0.0 `; `+INF `/`-INF `; `+QNAN `/`-QNAN ` (quiet bit set) and `+SNAN `/`-SNAN `;
//! otherwise C's `%.20g` below 1e9 in magnitude and `%.20e` from there on. The special
//! spellings carry a trailing space, which nvdisasm prints before the following comma.

use std::sync::OnceLock;

/// Which 16-bit float an immediate is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    F16,
    Bf16,
}

/// The value of a pattern as f64 (exact for both formats).
pub fn to_f64(h: Half, bits: u16) -> f64 {
    match h {
        Half::F16 => half::f16::from_bits(bits).to_f64(),
        Half::Bf16 => half::bf16::from_bits(bits).to_f64(),
    }
}

pub(crate) fn spell(h: Half, bits: u16) -> String {
    let (exp_mask, quiet) = match h {
        Half::F16 => (0x7c00u16, 0x0200u16),
        Half::Bf16 => (0x7f80u16, 0x0040u16),
    };
    let sign = if bits & 0x8000 != 0 { '-' } else { '+' };
    let mag = bits & 0x7fff;
    if mag & exp_mask == exp_mask {
        return if mag == exp_mask {
            format!("{sign}INF ")
        } else if mag & quiet != 0 {
            format!("{sign}QNAN ")
        } else {
            format!("{sign}SNAN ")
        };
    }
    if bits == 0x8000 {
        return "-0.0 ".to_string();
    }
    let x = to_f64(h, bits);
    if x.abs() < 1e9 {
        c_g(x, 20)
    } else {
        c_e(x, 20, false) // %.20e: 20 digits after the point
    }
}

/// Split Rust's `{:.Ne}` output into (mantissa, exponent).
fn sci(x: f64, decimals: usize) -> (String, i32) {
    let s = format!("{:.*e}", decimals, x);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.to_string(), e.parse().unwrap_or(0))
}

fn exp_text(e: i32) -> String {
    format!("e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn strip_zeros(m: &str) -> &str {
    if m.contains('.') {
        m.trim_end_matches('0').trim_end_matches('.')
    } else {
        m
    }
}

/// C's `%.{decimals}e` (or with trailing zeros stripped when `strip`).
fn c_e(x: f64, decimals: usize, strip: bool) -> String {
    let (m, e) = sci(x, decimals);
    let m = if strip { strip_zeros(&m).to_string() } else { m };
    format!("{m}{}", exp_text(e))
}

/// C's `%.{p}g`.
fn c_g(x: f64, p: usize) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let (_, e) = sci(x, p - 1);
    if e < -4 || e >= p as i32 {
        c_e(x, p - 1, true)
    } else {
        let decimals = (p as i32 - 1 - e) as usize;
        strip_zeros(&format!("{:.*}", decimals, x)).to_string()
    }
}

fn table(h: Half) -> &'static super::strtable::StrTable {
    static F16: OnceLock<super::strtable::StrTable> = OnceLock::new();
    static BF16: OnceLock<super::strtable::StrTable> = OnceLock::new();
    let cell = match h {
        Half::F16 => &F16,
        Half::Bf16 => &BF16,
    };
    cell.get_or_init(|| (0..=u16::MAX).map(|b| spell(h, b)).collect())
}

/// nvdisasm's text for an immediate (possibly with a trailing space, see the module doc).
/// The first [`SPELL_CALLS`] calls spell each value (about a microsecond); after that a
/// 2^16-entry table is built once (about 0.1 s a format), so short inputs never pay for
/// it and long ones run fast.
pub fn imm_text(h: Half, bits: u16) -> std::borrow::Cow<'static, str> {
    use std::sync::atomic::Ordering;
    if IMM_CALLS.load(Ordering::Relaxed) < SPELL_CALLS {
        IMM_CALLS.fetch_add(1, Ordering::Relaxed);
        return std::borrow::Cow::Owned(spell(h, bits));
    }
    std::borrow::Cow::Borrowed(&table(h)[bits as usize])
}

const SPELL_CALLS: usize = 1 << 16;

static IMM_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The pattern nvdisasm's text stands for. NaN spellings name a class, not a payload:
/// they map to the canonical pattern of that class (quiet: quiet bit only; signalling: lowest payload).
pub fn parse_imm(h: Half, text: &str) -> Option<u16> {
    let t = text.trim();
    let (exp_mask, quiet) = match h {
        Half::F16 => (0x7c00u16, 0x0200u16),
        Half::Bf16 => (0x7f80u16, 0x0040u16),
    };
    let special = |s: &str| -> Option<u16> {
        Some(match s {
            "INF" => exp_mask,
            "QNAN" => exp_mask | quiet,
            "SNAN" => exp_mask | 1,
            _ => return None,
        })
    };
    if let Some(rest) = t.strip_prefix('+') {
        if let Some(v) = special(rest) {
            return Some(v);
        }
    }
    if let Some(rest) = t.strip_prefix('-') {
        if let Some(v) = special(rest) {
            return Some(0x8000 | v);
        }
    }
    if t == "-0.0" || t == "-0" {
        return Some(0x8000);
    }
    let x: f64 = t.parse().ok()?;
    if !x.is_finite() {
        return None;
    }
    // Exact values only: the text must name a pattern, not a value to round.
    let bits = match h {
        Half::F16 => half::f16::from_f64(x).to_bits(),
        Half::Bf16 => half::bf16::from_f64(x).to_bits(),
    };
    (to_f64(h, bits) == x).then_some(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_seen_in_nvdisasm() {
        assert_eq!(imm_text(Half::F16, 0x0001), "5.9604644775390625e-08");
        assert_eq!(imm_text(Half::F16, 0x03e7), "5.9545040130615234375e-05");
        assert_eq!(imm_text(Half::F16, 0x3c00), "1");
        assert_eq!(imm_text(Half::F16, 0x7c00), "+INF ");
        assert_eq!(imm_text(Half::F16, 0x7c01), "+SNAN ");
        assert_eq!(imm_text(Half::F16, 0xffff), "-QNAN ");
        assert_eq!(imm_text(Half::F16, 0x8000), "-0.0 ");
        assert_eq!(imm_text(Half::F16, 0x0000), "0");
        assert_eq!(imm_text(Half::F16, 0x0800), "0.0001220703125");
        assert_eq!(imm_text(Half::Bf16, 0x0001), "9.183549615799121156e-41");
        assert_eq!(imm_text(Half::Bf16, 0x4e6f), "1.00243865600000000000e+09");
        assert_eq!(imm_text(Half::Bf16, 0xff7f), "-3.38953138925153547590e+38");
        assert_eq!(imm_text(Half::Bf16, 0x7c00), "2.65845599156983174581e+36");
    }

    #[test]
    fn every_pattern_parses_back() {
        for h in [Half::F16, Half::Bf16] {
            for b in 0..=u16::MAX {
                let back = parse_imm(h, &imm_text(h, b)).unwrap();
                if to_f64(h, b).is_nan() {
                    assert!(to_f64(h, back).is_nan());
                    assert_eq!(imm_text(h, back), imm_text(h, b));
                } else {
                    assert_eq!(back, b, "{h:?} {b:#06x} {}", imm_text(h, b));
                }
            }
        }
    }
}
