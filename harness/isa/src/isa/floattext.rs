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
    let mut s = String::with_capacity(32);
    spell_into(h, bits, &mut s);
    s
}

/// The exponent field and the quiet bit of a 16-bit format: what makes a value Inf or NaN.
fn special_masks(h: Half) -> (u16, u16) {
    match h {
        Half::F16 => (0x7c00, 0x0200),
        Half::Bf16 => (0x7f80, 0x0040),
    }
}

/// [`spell`], appended to `out`: integer arithmetic on the exact decimal expansion, no
/// float formatting (all 2^17 patterns take a few milliseconds, where `format!("{:.*e}")`'s
/// exact path took a third of a second).
pub(crate) fn spell_into(h: Half, bits: u16, out: &mut String) {
    let (exp_mask, quiet) = special_masks(h);
    let sign = if bits & 0x8000 != 0 { "-" } else { "+" };
    let mag = bits & 0x7fff;
    if mag & exp_mask == exp_mask {
        out.push_str(sign);
        out.push_str(if mag == exp_mask {
            "INF "
        } else if mag & quiet != 0 {
            "QNAN "
        } else {
            "SNAN "
        });
        return;
    }
    match (bits, mag) {
        (0x8000, _) => return out.push_str("-0.0 "),
        (_, 0) => return out.push('0'),
        _ => {}
    }
    if bits & 0x8000 != 0 {
        out.push('-');
    }
    let d = Decimal::of(h, mag);
    // |x| < 1e9: exactly when its first digit is below the 10^9 place
    if d.exp < 9 {
        d.c_g(20, out)
    } else {
        d.c_e(21, false, out) // %.20e: 20 digits after the point
    }
}

/// A positive value's exact decimal expansion, cut after its first [`Decimal::KEEP`] digits:
/// the value is `d1.d2d3... × 10^exp` (digits as 0..=9, `d1` nonzero), and `sticky` says
/// whether any digit past those kept is nonzero (all that rounding needs of them).
struct Decimal {
    digits: [u8; Decimal::KEEP],
    len: usize,
    sticky: bool,
    exp: i32,
}

/// Base-10^9 limbs of a power of two or five, least significant first, and how many are used.
type Limbs = ([u64; 12], usize);

const BASE: u64 = 1_000_000_000;

/// `limbs × f`, for `f` below 2^31 (so that a limb × `f` + carry stays within 64 bits).
fn times(x: &mut Limbs, f: u64) {
    let mut carry = 0u64;
    for l in x.0[..x.1].iter_mut() {
        let v = *l * f + carry;
        *l = v % BASE;
        carry = v / BASE;
    }
    while carry > 0 && x.1 < x.0.len() {
        x.0[x.1] = carry % BASE;
        carry /= BASE;
        x.1 += 1;
    }
}

/// 2^0..=2^120 and 5^0..=5^133 (BF16's range), computed once (microseconds).
fn powers() -> &'static [Vec<Limbs>; 2] {
    static P: OnceLock<[Vec<Limbs>; 2]> = OnceLock::new();
    P.get_or_init(|| {
        let run = |f: u64, n: usize| {
            let mut x: Limbs = ([0; 12], 1);
            x.0[0] = 1;
            (0..=n)
                .map(|i| {
                    if i > 0 {
                        times(&mut x, f);
                    }
                    x
                })
                .collect()
        };
        [run(2, 120), run(5, 133)]
    })
}

impl Decimal {
    /// Digits kept: one more than the most any spelling shows (21), to round on.
    const KEEP: usize = 22;

    /// The expansion of a nonzero finite magnitude `mag` (sign bit clear): the value is
    /// `m × 2^e`; for `e < 0` that is `m × 5^-e` shifted `-e` decimal places.
    fn of(h: Half, mag: u16) -> Decimal {
        let (frac_bits, bias_shift) = match h {
            Half::F16 => (10u32, 25i32),
            Half::Bf16 => (7u32, 134i32),
        };
        let biased = (mag >> frac_bits) as i32;
        let frac = (mag & ((1 << frac_bits) - 1)) as u64;
        let (m, e) = if biased == 0 { (frac, 1 - bias_shift) } else { (frac | 1 << frac_bits, biased - bias_shift) };
        let two = e >= 0;
        let mut x = powers()[!two as usize].get(e.unsigned_abs() as usize).copied().unwrap_or(([0; 12], 1));
        times(&mut x, m);
        let (limbs, n) = (&x.0[..x.1], x.1);
        let mut d = Decimal { digits: [0; Decimal::KEEP], len: 0, sticky: false, exp: 0 };
        let mut total = 0usize;
        for (i, &l) in limbs.iter().enumerate().rev() {
            let width = if i == n - 1 { (l.max(1).ilog10() + 1) as usize } else { 9 };
            total += width;
            if d.len == Decimal::KEEP {
                d.sticky |= l != 0;
                continue;
            }
            let mut chunk = [0u8; 9];
            let mut v = l;
            for c in chunk[..width].iter_mut().rev() {
                *c = (v % 10) as u8;
                v /= 10;
            }
            for &c in &chunk[..width] {
                if d.len < Decimal::KEEP {
                    d.digits[d.len] = c;
                    d.len += 1;
                } else {
                    d.sticky |= c != 0;
                }
            }
        }
        d.exp = total as i32 - 1 - if two { 0 } else { e.unsigned_abs() as i32 };
        d
    }

    /// Rounded to `p` significant digits (ties to even, as the exact formatting does),
    /// zero-padded to `p`.
    fn rounded(&self, p: usize) -> Decimal {
        let mut r = Decimal { digits: [0; Decimal::KEEP], len: p, sticky: false, exp: self.exp };
        let keep = self.len.min(p);
        r.digits[..keep].copy_from_slice(&self.digits[..keep]);
        if self.len > p {
            let next = self.digits[p];
            let sticky = self.sticky || self.digits[p + 1..self.len].iter().any(|&c| c != 0);
            let up = next > 5 || (next == 5 && (sticky || r.digits[p - 1] % 2 == 1));
            if up {
                let mut i = p;
                loop {
                    if i == 0 {
                        // 99...9 rounded up: 10...0, one place higher
                        r.digits[0] = 1;
                        r.exp += 1;
                        break;
                    }
                    i -= 1;
                    if r.digits[i] == 9 {
                        r.digits[i] = 0;
                    } else {
                        r.digits[i] += 1;
                        break;
                    }
                }
            }
        }
        r
    }

    /// C's `%.{p-1}e` (`p` significant digits), trailing zeros stripped when `strip`.
    fn c_e(&self, p: usize, strip: bool, out: &mut String) {
        let r = self.rounded(p);
        let mut frac = &r.digits[1..p];
        if strip {
            let n = frac.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            frac = &frac[..n];
        }
        out.push((b'0' + r.digits[0]) as char);
        if !frac.is_empty() {
            out.push('.');
            out.extend(frac.iter().map(|&c| (b'0' + c) as char));
        }
        out.push_str(if r.exp < 0 { "e-" } else { "e+" });
        let x = r.exp.unsigned_abs();
        if x < 10 {
            out.push('0');
        }
        out.push_str(&x.to_string());
    }

    /// C's `%.{p}g` of a nonzero value.
    fn c_g(&self, p: usize, out: &mut String) {
        let r = self.rounded(p);
        if r.exp < -4 || r.exp >= p as i32 {
            return self.c_e(p, true, out);
        }
        // fixed notation: the same digits (rounded at the same place), point placed by exp,
        // trailing zeros of the fraction and a bare point stripped
        let digit = |i: i32| if (0..p as i32).contains(&i) { r.digits[i as usize] } else { 0 };
        let int_digits = r.exp.max(0) + 1;
        for i in 0..int_digits {
            out.push((b'0' + digit(i - (int_digits - 1 - r.exp))) as char);
        }
        // fraction places 1..: digit index exp + place
        let last = (1..p as i32).rev().find(|&k| r.digits[k as usize] != 0).unwrap_or(0);
        let places = last - r.exp; // how many fraction places hold the last nonzero digit
        if places > 0 {
            out.push('.');
            for place in 1..=places {
                out.push((b'0' + digit(r.exp + place)) as char);
            }
        }
    }
}

fn table(h: Half) -> &'static super::strtable::StrTable {
    static F16: OnceLock<super::strtable::StrTable> = OnceLock::new();
    static BF16: OnceLock<super::strtable::StrTable> = OnceLock::new();
    let cell = match h {
        Half::F16 => &F16,
        Half::Bf16 => &BF16,
    };
    cell.get_or_init(|| super::strtable::StrTable::build(1 << 16, |b, out| spell_into(h, b as u16, out)))
}

/// nvdisasm's text for an immediate (possibly with a trailing space, see the module doc).
/// The first `SPELL_CALLS` calls spell each value (about a tenth of a microsecond); after
/// that a 2^16-entry table is built once (as long as that many spellings: a few
/// milliseconds a format), so short inputs never pay for it and long ones run fast.
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
    let (exp_mask, quiet) = special_masks(h);
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

    /// The spelling as it was first written: Rust's exact float formatting (`format!("{:.*e}")`),
    /// which nvdisasm's text was measured against.
    fn exact_spell(h: Half, bits: u16) -> String {
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

    #[test]
    fn integer_spelling_equals_the_exact_float_formatting() {
        for h in [Half::F16, Half::Bf16] {
            for b in 0..=u16::MAX {
                assert_eq!(spell(h, b), exact_spell(h, b), "{h:?} {b:#06x}");
            }
        }
    }

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
