//! [`Hmul2`] → the text `nvdisasm -b SM90` prints for it (without address, `;` and comments).
//!
//! Shapes seen in nvdisasm's output:
//! `@!P2 HMUL2.BF16_V2.FMZ.SAT R0, -|R1|.reuse.H1_H1, -|R2|.reuse.H0_H0`,
//! `HMUL2 R0, R1, -|c[0x3] [0x14].H0_H0|` (the half select sits inside the bars unless the
//! operand is a register), `HMUL2 R0, R1, -1, +INF`.

use super::floattext::{imm_text, Half};
use super::*;
use crate::spec::layout;
/// Decimal digits without the formatting machinery (the renderer is on a hot path).
fn push_dec(out: &mut String, mut v: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("?"));
}

/// `0x` and lower-case hex digits, as nvdisasm prints offsets and banks.
fn push_hex(out: &mut String, mut v: u64) {
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b"0123456789abcdef"[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.push_str("0x");
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("?"));
}

fn push_reg(out: &mut String, prefix: &str, r: u8, zero: u8) {
    out.push_str(prefix);
    if r == zero {
        out.push('Z');
    } else {
        push_dec(out, r as u32);
    }
}

fn push_swizzle(out: &mut String, s: Swizzle, field: &crate::spec::Field) {
    if let Some(name) = field.value_name(s as u32) {
        if !name.is_empty() {
            out.push('.');
            out.push_str(name);
        }
    }
}

/// A register source: `-|R1|.reuse.H1_H1`.
fn push_reg_src(out: &mut String, r: u8, m: SrcMods, reuse: bool, swz_field: &crate::spec::Field) {
    if m.neg {
        out.push('-');
    }
    if m.abs {
        out.push('|');
    }
    push_reg(out, "R", r, RZ);
    if m.abs {
        out.push('|');
    }
    if reuse {
        out.push_str(".reuse");
    }
    push_swizzle(out, m.swizzle, swz_field);
}

fn push_hex_signed(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_hex(out, v.unsigned_abs());
}

/// Append the text of `i` to `out`.
pub fn render_into(i: &Hmul2, out: &mut String) {
    let l = layout();
    if i.pred.index != PT || i.pred.negated {
        out.push('@');
        if i.pred.negated {
            out.push('!');
        }
        if i.pred.index == PT {
            out.push_str("PT");
        } else {
            out.push('P');
            push_dec(out, i.pred.index as u32);
        }
        out.push(' ');
    }
    out.push_str("HMUL2");
    for (f, v) in [(&l.format, i.format as u32), (&l.flush, i.flush as u32), (&l.sat, i.sat as u32)] {
        if let Some(name) = f.value_name(v) {
            if !name.is_empty() {
                out.push('.');
                out.push_str(name);
            }
        }
    }
    out.push(' ');
    push_reg(out, "R", i.dst, RZ);
    out.push_str(", ");
    push_reg_src(out, i.a, i.a_mods, i.ctrl.shows_reuse_a(), &l.a_swizzle);
    out.push_str(", ");
    let m = i.b_mods;
    match i.b {
        Operand2::Reg(r) => push_reg_src(out, r, m, i.ctrl.shows_reuse_b(), &l.b_swizzle),
        Operand2::Imm { first, second } => {
            let h = if i.format == Format::Bf16 { Half::Bf16 } else { Half::F16 };
            out.push_str(&imm_text(h, first));
            out.push_str(", ");
            out.push_str(&imm_text(h, second));
        }
        _ => {
            if m.neg {
                out.push('-');
            }
            if m.abs {
                out.push('|');
            }
            match i.b {
                Operand2::Const { bank, offset } => {
                    out.push_str("c[");
                    push_hex(out, bank as u64);
                    out.push_str("] [");
                    push_hex_signed(out, offset as i64);
                    out.push(']');
                }
                Operand2::ConstUr { ureg, offset } => {
                    push_reg(out, "cx[UR", ureg, URZ);
                    out.push_str("] [");
                    push_hex(out, offset as u64);
                    out.push(']');
                }
                Operand2::Ur(u) => push_reg(out, "UR", u, URZ),
                _ => {}
            }
            push_swizzle(out, m.swizzle, &l.b_swizzle);
            if m.abs {
                out.push('|');
            }
        }
    }
    // Special immediates end in a space that nvdisasm prints before a comma, not before ';'.
    while out.ends_with(' ') {
        out.pop();
    }
}

/// The text of `i`.
pub fn render(i: &Hmul2) -> String {
    let mut s = String::with_capacity(64);
    render_into(i, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTRL: u128 = 0x000fe20000000000u128 << 64;

    fn text(w: u128) -> String {
        render(&decode(w).unwrap())
    }

    #[test]
    fn matches_nvdisasm_samples() {
        // Texts below were printed by nvdisasm 13.2 for these words.
        let a = (1u128 << 72) | (1 << 73) | (3 << 74) | (1 << 122);
        let b = (1u128 << 63) | (1 << 62) | (2 << 60);
        let rrr = (0x232u128 | (2 << 12) | (1 << 15) | (1 << 24) | (2 << 32)) | CTRL;
        assert_eq!(text(rrr | a | b | 1 << 123), "@!P2 HMUL2 R0, -|R1|.reuse.H1_H1, -|R2|.reuse.H0_H0");
        let rrc = (0xa32u128 | (7 << 12) | (1 << 24) | (3 << 54) | (5 << 40)) | CTRL;
        assert_eq!(text(rrc | a | b), "HMUL2 R0, -|R1|.reuse.H1_H1, -|c[0x3] [0x14].H0_H0|");
        let rri = (0x832u128 | (7 << 12) | (1 << 24) | (0xbc00 << 48) | (0x7c00 << 32)) | CTRL;
        assert_eq!(text(rri | a), "HMUL2 R0, -|R1|.reuse.H1_H1, -1, +INF");
        assert_eq!(
            text(rri | 1 << 76 | 1 << 77 | 1 << 85),
            "HMUL2.BF16_V2.FMZ.SAT R0, R1, -0.0078125, 2.65845599156983174581e+36"
        );
        let rrur = (0xc32u128 | (7 << 12) | (1 << 24) | (1 << 91) | (2 << 32)) | CTRL;
        assert_eq!(text(rrur | a | b), "HMUL2 R0, -|R1|.reuse.H1_H1, -|UR2.H0_H0|");
        assert_eq!(text(rrr | 255 << 24 | 1 << 122 | 1 << 72), "@!P2 HMUL2 R0, -RZ.reuse, R2");
        let neg = (0xa32u128 | (7 << 12) | (1 << 24) | (0x1f << 54) | (0x3fff << 40)) | CTRL;
        assert_eq!(text(neg), "HMUL2 R0, R1, c[0x1f] [-0x4]");
        let cx = (0xa32u128 | (7 << 12) | (1 << 24) | (1 << 91) | (63 << 32)) | CTRL;
        assert_eq!(text(cx), "HMUL2 R0, R1, cx[URZ] [0x0]");
        assert_eq!(text(0x40007c0000007832 | CTRL), "HMUL2 R0, R0, 2, +INF");
        assert_eq!(text(0x3c00800000007832 | CTRL), "HMUL2 R0, R0, 1, -0.0");
        assert_eq!(text(0x80003c0000007832 | CTRL), "HMUL2 R0, R0, -0.0 , 1");
    }
}
