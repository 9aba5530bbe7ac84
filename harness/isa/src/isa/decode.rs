//! 128-bit word → [`Hmul2`], or the typed reason the word is not a legal SM90 HMUL2.
//! Never panics: every `u128` is one or the other.

use super::*;
use crate::spec::{layout, spec, Field};

/// Why a word is not a legal SM90 HMUL2.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
pub enum Illegal {
    /// The opcode bits name another instruction.
    #[error("not HMUL2: opcode field is {opcode:#05x}, HMUL2 is {expected:#05x}")]
    NotHmul2 { opcode: u32, expected: u32 },
    /// No form has this operand-kind selector.
    #[error("no HMUL2 form has operand_form = {value} with ureg_flag = {ureg}")]
    UnknownForm { value: u32, ureg: u32 },
    /// A cross-field rule of the spec is broken (see the rule's doc in the spec).
    #[error("{form}: rule {rule}: {field} = {value} is not allowed here")]
    Constraint { form: Form, rule: String, field: String, value: u32 },
}

impl Illegal {
    /// A short stable name of the reason, for coverage tables and reports.
    pub fn kind(&self) -> String {
        match self {
            Illegal::NotHmul2 { .. } => "not-hmul2".into(),
            Illegal::UnknownForm { .. } => "unknown-form".into(),
            Illegal::Constraint { rule, .. } => rule.clone(),
        }
    }
}

/// Which form a word is, from its fixed fields; the error says why none fits.
#[inline(always)]
pub fn form_of(word: u128) -> Result<Form, Illegal> {
    let l = layout();
    let opcode = l.opcode.get(word);
    if opcode != l.opcode_value {
        return Err(Illegal::NotHmul2 { opcode, expected: l.opcode_value });
    }
    let (of, uf) = (l.operand_form.get(word), l.ureg_flag.get(word));
    let slot = (of as usize) << l.ureg_flag.width | uf as usize;
    match l.form_by_selector.get(slot).copied().flatten() {
        Some(k) => Ok(Form::ALL[k]),
        None => Err(Illegal::UnknownForm { value: of, ureg: uf }),
    }
}

#[inline(always)]
fn flag(f: &Field, w: u128) -> bool {
    f.get(w) != 0
}

#[inline(always)]
fn mods(neg: &Field, abs: &Field, swz: &Field, w: u128) -> SrcMods {
    SrcMods { neg: flag(neg, w), abs: flag(abs, w), swizzle: Swizzle::from_bits(swz.get(w)) }
}

/// Sign-extend a `width`-bit value.
#[inline(always)]
fn sext(v: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((v << shift) as i32) >> shift
}

/// Decode one word.
pub fn decode(word: u128) -> Result<Hmul2, Illegal> {
    let form = form_of(word)?;
    let s = spec();
    let fs = form.spec();
    if let Err(v) = s.check(form.index(), word) {
        return Err(Illegal::Constraint { form, rule: v.rule, field: v.field, value: v.value });
    }
    let l = layout();
    let b = match form {
        Form::Rrr => Operand2::Reg(l.b_reg.get(word) as u8),
        Form::Imm => Operand2::Imm { first: l.imm_hi.get(word) as u16, second: l.imm_lo.get(word) as u16 },
        Form::Const => Operand2::Const { bank: l.cb_bank.get(word) as u8, offset: sext(l.cb_offset.get(word), l.cb_offset.width) * l.cb_offset.scale as i32 },
        Form::ConstUr => Operand2::ConstUr { ureg: l.b_ureg.get(word) as u8, offset: l.cb_offset.get(word) * l.cb_offset.scale },
        Form::Ur => Operand2::Ur(l.b_ureg.get(word) as u8),
    };
    let b_mods = if form.has_b_mods() { mods(&l.b_neg, &l.b_abs, &l.b_swizzle, word) } else { SrcMods::default() };
    Ok(Hmul2 {
        pred: Pred { index: l.pred.get(word) as u8, negated: flag(&l.pred_neg, word) },
        dst: l.dst.get(word) as u8,
        a: l.a.get(word) as u8,
        a_mods: mods(&l.a_neg, &l.a_abs, &l.a_swizzle, word),
        b,
        b_mods,
        format: Format::ALL[l.format.get(word) as usize & 3],
        flush: Flush::ALL[l.flush.get(word) as usize & 3],
        sat: flag(&l.sat, word),
        ctrl: Control {
            stall: l.stall.get(word) as u8,
            yield_: flag(&l.yield_, word),
            wr_bar: l.wr_bar.get(word) as u8,
            rd_bar: l.rd_bar.get(word) as u8,
            wait: l.wait.get(word) as u8,
            reuse: l.reuse.get(word) as u8,
        },
        ignored: word & fs.ignored_mask,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTRL: u128 = 0x000fe20000000000u128 << 64;

    #[test]
    fn decodes_each_form() {
        let rrr = decode(0x0000000201007232 | CTRL).unwrap();
        assert_eq!(rrr.b, Operand2::Reg(2));
        assert_eq!(rrr.a, 1);
        let imm = decode(0x40003c0000007832 | CTRL).unwrap();
        assert_eq!(imm.b, Operand2::Imm { first: 0x4000, second: 0x3c00 });
        let c = decode(0x0000000001007a32 | CTRL).unwrap();
        assert_eq!(c.b, Operand2::Const { bank: 0, offset: 0 });
    }

    #[test]
    fn rejects_with_reasons() {
        assert!(matches!(decode(0x0000000201007233 | CTRL), Err(Illegal::NotHmul2 { .. })));
        assert!(matches!(decode(0x0000000201007032 | CTRL), Err(Illegal::UnknownForm { .. })));
        assert!(matches!(decode(0x0000000201007232 | CTRL | 1u128 << 124), Err(Illegal::Constraint { .. })));
    }
}
