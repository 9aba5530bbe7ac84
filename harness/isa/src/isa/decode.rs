//! 128-bit word → [`Inst`], or the typed reason the word is not a legal SM90 instruction of
//! the family. Never panics: every `u128` is one or the other.

use super::*;
use crate::spec::Field;

/// Why a word is not a legal instruction of the family.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
pub enum Illegal {
    /// The opcode bits name no instruction of the family.
    #[error("not {}: opcode field is {opcode:#05x}", known_mnemonics())]
    UnknownOpcode { opcode: u32 },
    /// No form of the instruction has this operand-kind selector.
    #[error("no {op} form has operand_form = {value} with ureg_flag = {ureg}")]
    UnknownForm { op: Op, value: u32, ureg: u32 },
    /// A cross-field rule of the spec is broken (see the rule's doc in the spec).
    #[error("{}: rule {rule}: {field} = {value} is not allowed here", op.form_key(*form))]
    Constraint { op: Op, form: Form, rule: String, field: String, value: u32 },
    /// nvdisasm prints nothing at all for the word (exits 0 with no line at its address): a
    /// rule of the spec marked `"nvdisasm": "prints nothing"` is broken.
    #[error("nvdisasm prints nothing for this word ({}: rule {rule}: {field} = {value})", op.form_key(*form))]
    Silent { op: Op, form: Form, rule: String, field: String, value: u32 },
    /// The opcode is an instruction of the family the architecture lacks (SM100 and SM120 have
    /// no HFMA2.MMA): to nvdisasm a word it rejects or another instruction.
    #[error("{arch} has no {op} (opcode field {:#05x})", op.opcode_value())]
    Absent { op: Op, arch: String },
    /// The architecture has the instruction, but the typed layer does not read it there yet
    /// (its overlay says nothing of it: [`crate::spec::TargetSpecError::Untyped`]).
    #[error("{arch} {op}: not typed yet on this architecture (opcode field {:#05x})", op.opcode_value())]
    Untyped { op: Op, arch: String },
}

/// `HMUL2 or HADD2 ...`: what a word of the family can be.
fn known_mnemonics() -> String {
    Op::ALL.iter().map(|o| o.mnemonic()).collect::<Vec<_>>().join(" or ")
}

impl Illegal {
    /// A short stable name of the reason, for coverage tables and reports.
    pub fn kind(&self) -> String {
        match self {
            Illegal::UnknownOpcode { .. } => "unknown-opcode".into(),
            Illegal::Absent { .. } => "absent-instruction".into(),
            Illegal::Untyped { .. } => "untyped-instruction".into(),
            Illegal::UnknownForm { .. } => "unknown-form".into(),
            Illegal::Constraint { rule, .. } | Illegal::Silent { rule, .. } => rule.clone(),
        }
    }
    /// Whether the word is no instruction of the family on its architecture: an unknown
    /// opcode, or an instruction the architecture lacks (nvdisasm rejects it or prints another).
    pub fn is_other_instruction(&self) -> bool {
        matches!(self, Illegal::UnknownOpcode { .. } | Illegal::Absent { .. })
    }
    /// Whether nvdisasm prints nothing for the word (rather than rejecting it).
    pub fn prints_nothing(&self) -> bool {
        matches!(self, Illegal::Silent { .. })
    }
    /// The error of a broken rule of `op`'s spec, by the rule's kind.
    pub fn of_violation(op: Op, form: Form, v: crate::spec::Violation) -> Illegal {
        Illegal::of_violation_in(op.spec(), op, form, v)
    }
    /// [`Illegal::of_violation`] of a rule of spec `s` (a target's spec of `op`).
    pub fn of_violation_in(s: &crate::spec::Spec, op: Op, form: Form, v: crate::spec::Violation) -> Illegal {
        if s.constraints.iter().any(|c| c.id == v.rule && c.silent) {
            Illegal::Silent { op, form, rule: v.rule, field: v.field, value: v.value }
        } else {
            Illegal::Constraint { op, form, rule: v.rule, field: v.field, value: v.value }
        }
    }
}

/// Which instruction a word is, from its opcode field (at the same bits for the whole family).
#[inline(always)]
pub fn op_of(word: u128) -> Result<Op, Illegal> {
    // every spec puts the opcode in the same bits (spec's tests check it)
    let field = &Op::ALL[0].layout().opcode;
    let opcode = field.get(word);
    // by opcode value: 1 + the instruction's index in Op::ALL, or 0 (a load, not a search
    // whose branch a stream of mixed instructions mispredicts)
    static BY_OPCODE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let table = BY_OPCODE.get_or_init(|| {
        let mut t = vec![0u8; 1 << field.width.min(16)];
        for (i, op) in Op::ALL.iter().enumerate() {
            if let Some(e) = t.get_mut(op.opcode_value() as usize) {
                *e = i as u8 + 1;
            }
        }
        t
    });
    match table.get(opcode as usize) {
        Some(&i) if i > 0 => Op::ALL.get(i as usize - 1).copied().ok_or(Illegal::UnknownOpcode { opcode }),
        Some(_) => Err(Illegal::UnknownOpcode { opcode }),
        // an opcode field too wide for the table
        None => Op::ALL.into_iter().find(|op| op.opcode_value() == opcode).ok_or(Illegal::UnknownOpcode { opcode }),
    }
}

/// Which instruction and form a word is, from its fixed fields; the error says why none fits.
#[inline(always)]
pub fn form_of(word: u128) -> Result<(Op, Form), Illegal> {
    let op = op_of(word)?;
    form_in(op.layout(), op, word).map(|f| (op, f))
}

/// The form of `word`, an `op` word, by layout `l` (a target's).
#[inline(always)]
pub(crate) fn form_in(l: &crate::spec::Layout, op: Op, word: u128) -> Result<Form, Illegal> {
    let (of, uf) = (l.operand_form.get(word), l.ureg_flag.get(word));
    let slot = (of as usize) << l.ureg_flag.width | uf as usize;
    match l.form_by_selector.get(slot).copied().flatten() {
        Some(k) => Ok(l.form_kind[k]),
        None => Err(Illegal::UnknownForm { op, value: of, ureg: uf }),
    }
}

/// Which instruction, of those `target` has, a word is (the opcode bits are the same on
/// every target; an instruction the target lacks is an unknown opcode there).
pub fn op_of_for(target: &'static Target, word: u128) -> Result<(Op, &'static crate::spec::Layout), Illegal> {
    let op = op_of(word)?;
    match crate::spec::layout_for(target, op) {
        Some(l) => Ok((op, l)),
        None if crate::spec::untyped(target, op) => Err(Illegal::Untyped { op, arch: target.nvdisasm.into() }),
        None => Err(Illegal::Absent { op, arch: target.nvdisasm.into() }),
    }
}

/// [`form_of`] of a word as `target` reads it.
pub fn form_of_for(target: &'static Target, word: u128) -> Result<(Op, Form), Illegal> {
    let (op, l) = op_of_for(target, word)?;
    form_in(l, op, word).map(|f| (op, f))
}

/// Decode one word as `target` prints it ([`decode()`] is SM90's).
pub fn decode_for(target: &'static Target, word: u128) -> Result<Inst, Illegal> {
    let (op, l) = op_of_for(target, word)?;
    let form = form_in(l, op, word)?;
    decode_in(l, op, form, word)
}

#[inline(always)]
fn flag(f: &Field, w: u128) -> bool {
    f.get(w) != 0
}

#[inline(always)]
fn mods(neg: &Field, abs: &Field, swz: &Field, w: u128) -> SrcMods {
    SrcMods { neg: flag(neg, w), abs: flag(abs, w), swizzle: Swizzle::from_bits(swz.get(w)) }
}

/// A source's modifiers; no half select where the spec has none (HFMA2.MMA).
#[inline(always)]
fn slot_mods(l: &crate::spec::Layout, neg: &Field, abs: &Field, swz: Option<&Field>, w: u128) -> SrcMods {
    match swz {
        Some(swz) if l.has_swizzle => mods(neg, abs, swz, w),
        _ => SrcMods { neg: flag(neg, w), abs: flag(abs, w), swizzle: Swizzle::H1H0 },
    }
}

/// Sign-extend a `width`-bit value.
#[inline(always)]
fn sext(v: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((v << shift) as i32) >> shift
}

/// Decode one word (SM90's; [`decode_for`] another target's).
pub fn decode(word: u128) -> Result<Inst, Illegal> {
    let (op, form) = form_of(word)?;
    decode_in(op.layout(), op, form, word)
}

/// Decode `word`, of `op` and `form`, by layout `l` (SM90's or a target's).
#[inline(always)]
fn decode_in(l: &crate::spec::Layout, op: Op, form: Form, word: u128) -> Result<Inst, Illegal> {
    let s = l.spec;
    let k = l.form_index[form as usize].unwrap_or(0);
    if let Err(v) = s.check(k, word) {
        return Err(Illegal::of_violation_in(s, op, form, v));
    }
    Ok(read_in(l, op, form, word))
}

/// What `word`, of `op` and `form`, holds by layout `l`, its rules unchecked: the fields
/// [`decode_in`] reads from a word its rules keep (the fused decoder's tables are made from
/// it, for words that hold a few fields and zeros elsewhere).
#[inline(always)]
pub(super) fn read_in(l: &crate::spec::Layout, op: Op, form: Form, word: u128) -> Inst {
    let s = l.spec;
    let k = l.form_index[form as usize].unwrap_or(0);
    let fs = &s.forms[k];
    // fields nvdisasm ignores in this word are ignored bits, not values
    let hidden = s.hidden_mask(k, word);
    let (word, kept) = (word & !hidden, word & (fs.ignored_mask | hidden));
    // the special slot (bits of b_reg / imm / c[] / cx[] / UR) holds the form's special source
    let special = match form.kind() {
        Form::Imm => Operand2::Imm { first: l.imm_hi.get(word) as u16, second: l.imm_lo.get(word) as u16 },
        Form::Const => Operand2::Const { bank: l.cb_bank.get(word) as u8, offset: sext(l.cb_offset.get(word), l.cb_offset.width) * l.cb_offset.scale as i32 },
        Form::ConstUr => Operand2::ConstUr { ureg: l.b_ureg.get(word) as u8, offset: l.cb_offset.get(word) * l.cb_offset.scale },
        Form::Ur => Operand2::Ur(l.b_ureg.get(word) as u8),
        _ => Operand2::Reg(l.b_reg.get(word) as u8),
    };
    let special_mods = if form.kind() != Form::Imm { slot_mods(l, &l.b_neg, &l.b_abs, l.b_swizzle.as_ref(), word) } else { SrcMods::default() };
    let (b, mut b_mods, c, c_mods) = match (&l.c_reg, s.sources) {
        (Some(c_reg), 3) => {
            let reg = Operand2::Reg(c_reg.get(word) as u8);
            let reg_mods = match (&l.c_neg, &l.c_abs) {
                (Some(n), Some(a)) => slot_mods(l, n, a, l.c_swizzle.as_ref(), word),
                _ => SrcMods::default(),
            };
            if form.special_source() == 3 {
                (reg, reg_mods, Some(special), special_mods)
            } else {
                (special, special_mods, Some(reg), reg_mods)
            }
        }
        _ => (special, special_mods, None, SrcMods::default()),
    };
    // operand 2's half select may have a third bit, wherever operand 2 sits
    if let (Some(hi), true, true) = (&l.b_swizzle_hi, form.has_b_mods(), l.has_swizzle) {
        b_mods.swizzle = Swizzle::from_bits(b_mods.swizzle as u32 | hi.get(word) << 2);
    }
    let relu = match (&l.relu, &l.relu_pred, &l.relu_pred_neg) {
        (Some(r), Some(p), Some(n)) if flag(r, word) => Some(Pred { index: p.get(word) as u8, negated: flag(n, word) }),
        _ => None,
    };
    Inst {
        op,
        pred: Pred { index: l.pred.get(word) as u8, negated: flag(&l.pred_neg, word) },
        dst: if l.writes_reg { l.dst.get(word) as u8 } else { RZ },
        a: l.a.get(word) as u8,
        a_mods: slot_mods(l, &l.a_neg, &l.a_abs, l.a_swizzle.as_ref(), word),
        b,
        b_mods,
        format: l.format_of.get(l.format.get(word) as usize).copied().unwrap_or(Format::Invalid3),
        flush: l.flush_of.get(l.flush.get(word) as usize).copied().unwrap_or(Flush::Invalid3),
        sat: flag(&l.sat, word),
        c,
        c_mods,
        relu,
        pdst: match (&l.p_dst, &l.q_dst) {
            (Some(p), Some(q)) if l.is_a.as_ref().is_none_or(|g| flag(g, word)) => Some([p.get(word) as u8, q.get(word) as u8]),
            _ => None,
        },
        psrc: l.psrc.as_ref().map(|p| Pred { index: p.get(word) as u8, negated: l.psrc_neg.as_ref().is_some_and(|n| flag(n, word)) }),
        cmp: l.cmp.as_ref().and_then(|f| Cmp::from_code(f.get(word) as u8)),
        bool_op: l.bool_op.as_ref().map(|f| BoolOp::ALL[f.get(word) as usize & 3]),
        bf: l.bf.as_ref().is_some_and(|f| flag(f, word)),
        h_and: l.h_and.as_ref().is_some_and(|f| flag(f, word)),
        nan: l.nan.as_ref().is_some_and(|f| flag(f, word)),
        xorsign: l.xorsign.as_ref().is_some_and(|f| flag(f, word)),
        ctrl: Control {
            stall: l.stall.get(word) as u8,
            yield_: flag(&l.yield_, word),
            wr_bar: l.wr_bar.get(word) as u8,
            rd_bar: l.rd_bar.get(word) as u8,
            wait: l.wait.get(word) as u8,
            reuse: l.reuse.get(word) as u8,
        },
        ignored: kept,
    }
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
    fn hadd2_hidden_fields_are_ignored_bits_not_values() {
        // HADD2.F32 R0, R1, R2 (format value 1 at bit 78); nvdisasm prints the same with bit 73 (|R1|) set
        let f32 = 0x0000000201007230 | 1u128 << 78 | CTRL;
        let plain = decode(f32).unwrap();
        assert_eq!((plain.op, plain.format), (Op::Hadd2, Format::F32));
        let with_abs = decode(f32 | 1 << 73).unwrap();
        assert!(!with_abs.a_mods.abs, "a hidden field has no value");
        assert_eq!(with_abs.ignored, 1 << 73, "its bit is kept as an ignored bit");
        assert_eq!(super::super::encode(&with_abs).unwrap(), f32 | 1 << 73, "and re-encodes");
        let mut typed = plain;
        typed.a_mods.abs = true;
        assert!(matches!(super::super::encode(&typed), Err(super::super::EncodeError::Hidden { .. })), "a value in a hidden field is refused");
        // without .F32 the same bit is operand 1's |x|
        assert!(decode(0x0000000201007230 | 1 << 73 | CTRL).unwrap().a_mods.abs);
    }

    #[test]
    fn three_source_forms_put_the_special_source_where_the_spec_says() {
        // HFMA2 R0, R1, R3, c[0x3] [0x14]: the constant sits at 32..63 and is operand 3; R3 (64..71) is operand 2
        let i = decode(0x00c0050201007631 | CTRL | 3u128 << 64).unwrap();
        assert_eq!((i.op, i.form()), (Op::Hfma2, Form::ConstC));
        assert_eq!((i.b, i.c), (Operand2::Reg(3), Some(Operand2::Const { bank: 3, offset: 0x14 })));
        // the same bits with operand_form 5: the constant is operand 2
        let j = decode(0x00c0050201007a31 | CTRL | 3u128 << 64).unwrap();
        assert_eq!((j.form(), j.b, j.c), (Form::Const, Operand2::Const { bank: 3, offset: 0x14 }, Some(Operand2::Reg(3))));
        // operand 2's three-bit half select: bit 86 is its bit 2 in either slot
        let k = decode(0x0000000201007231 | CTRL | 3u128 << 64 | 1u128 << 86).unwrap();
        assert_eq!(k.b_mods.swizzle, Swizzle::Code4);
        assert_eq!(super::super::encode(&k).unwrap(), 0x0000000201007231 | CTRL | 3u128 << 64 | 1u128 << 86);
        // .F32 with .BF16_V2: the word nvdisasm prints nothing for
        let e = decode(0x0000000201007231 | CTRL | 1u128 << 78 | 1u128 << 85).unwrap_err();
        assert!(e.prints_nothing() && e.to_string().starts_with("nvdisasm prints nothing"), "{e}");
    }

    #[test]
    fn rejects_with_reasons() {
        assert!(matches!(decode(0x0000000201007237 | CTRL), Err(Illegal::UnknownOpcode { .. })));
        assert!(matches!(decode(0x0000000201007032 | CTRL), Err(Illegal::UnknownForm { .. })));
        assert!(matches!(decode(0x0000000201007232 | CTRL | 1u128 << 124), Err(Illegal::Constraint { .. })));
    }
}
