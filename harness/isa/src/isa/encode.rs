//! [`Inst`] → 128-bit word. Every value is checked against its field: nothing is truncated,
//! and an instruction that nvdisasm would reject is refused with the same reason decode gives.

use super::hex::SignedHex;
use super::*;
use crate::spec::FieldOverflow;

/// Why an instruction cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error(transparent)]
    Overflow(#[from] FieldOverflow),
    #[error("constant offset {} is not a multiple of 4", SignedHex(*offset))]
    Misaligned { offset: i64 },
    #[error("constant offset {} is outside {}..={}", SignedHex(*offset), SignedHex(*min), SignedHex(*max))]
    OffsetRange { offset: i64, min: i64, max: i64 },
    #[error("the immediate form has no operand 2 modifiers")]
    ImmediateMods,
    #[error("ignored bits {bits:#034x} lie outside the bits this form ignores")]
    Ignored { bits: u128 },
    #[error("illegal: {0}")]
    Illegal(#[from] Illegal),
    #[error("{op} has no {form} form")]
    NoForm { op: Op, form: Form },
    #[error("{op} has no {what}")]
    NoModifier { op: Op, what: &'static str },
    #[error("{op}: field {field} is ignored by nvdisasm here (rule {rule}): give it as ignored bits, not a value")]
    Hidden { op: Op, rule: String, field: String },
    #[error("{op} has {sources} sources: {what}")]
    Sources { op: Op, sources: u8, what: &'static str },
    #[error("{target} has no {op}")]
    NoInstruction { op: Op, target: &'static str },
}

/// Encode one instruction (SM90's encoding; [`encode_for`] another target's).
pub fn encode(i: &Inst) -> Result<u128, EncodeError> {
    encode_in(i, i.op.layout())
}

/// Encode one instruction as `target` has it; an instruction the target lacks is refused.
pub fn encode_for(target: &'static Target, i: &Inst) -> Result<u128, EncodeError> {
    match i.op.layout_for(target) {
        Some(l) => encode_in(i, l),
        None => Err(EncodeError::NoInstruction { op: i.op, target: target.nvdisasm }),
    }
}

/// Encode `i` by layout `l` (SM90's or a target's).
fn encode_in(i: &Inst, l: &crate::spec::Layout) -> Result<u128, EncodeError> {
    let op = i.op;
    let s = l.spec;
    let form = i.form();
    let k = l.form_index[form as usize].ok_or(EncodeError::NoForm { op, form })?;
    let fs = &s.forms[k];
    let mut w = 0u128;
    for &(f, v) in &fs.fixed {
        w = s.fields[f].set(w, v)?;
    }
    w = l.pred.set(w, i.pred.index as u32)?;
    w = l.pred_neg.set(w, i.pred.negated as u32)?;
    if l.writes_reg {
        w = l.dst.set(w, i.dst as u32)?;
    } else if i.dst != RZ {
        return Err(EncodeError::NoModifier { op, what: "register result (its destination is RZ)" });
    }
    w = l.a.set(w, i.a as u32)?;
    w = l.a_neg.set(w, i.a_mods.neg as u32)?;
    w = l.a_abs.set(w, i.a_mods.abs as u32)?;
    w = set_swizzle(w, l, l.a_swizzle.as_ref(), i.a_mods.swizzle)?;
    // which operand sits in the special slot (b_* fields) and which in the register slot (c_*)
    let (special, special_mods, reg_slot) = match (s.sources, i.c) {
        (2, None) => (i.b, i.b_mods, None),
        (3, Some(c)) => {
            let (sp, spm, reg, regm) = if form.special_source() == 3 { (c, i.c_mods, i.b, i.b_mods) } else { (i.b, i.b_mods, c, i.c_mods) };
            match reg {
                Operand2::Reg(r) => (sp, spm, Some((r, regm))),
                _ => return Err(EncodeError::Sources { op, sources: 3, what: "only one of operands 2 and 3 can be other than a register" }),
            }
        }
        (n, _) => return Err(EncodeError::Sources { op, sources: n, what: if n == 3 { "operand 3 is missing" } else { "there is no operand 3" } }),
    };
    // operand 2's half select may have a third bit, in its own field wherever operand 2 sits
    let (b_swz, b_hi) = (i.b_mods.swizzle as u32 & 3, i.b_mods.swizzle as u32 >> 2);
    let low = |m: SrcMods, is_b: bool| -> SrcMods {
        if is_b {
            SrcMods { swizzle: Swizzle::from_bits(b_swz), ..m }
        } else {
            m
        }
    };
    let special_is_b = s.sources == 2 || form.special_source() == 2;
    let special_mods = low(special_mods, special_is_b);
    if let Some((r, m)) = reg_slot {
        let m = low(m, !special_is_b);
        let (Some(cr), Some(cn), Some(ca)) = (&l.c_reg, &l.c_neg, &l.c_abs) else {
            return Err(EncodeError::Sources { op, sources: 3, what: "its spec has no register slot (c_reg, c_neg, c_abs)" });
        };
        w = cr.set(w, r as u32)?;
        w = cn.set(w, m.neg as u32)?;
        w = ca.set(w, m.abs as u32)?;
        match &l.c_swizzle {
            Some(f) => w = set_swizzle(w, l, Some(f), m.swizzle)?,
            None if m.swizzle != Swizzle::H1H0 => return Err(EncodeError::NoModifier { op, what: "half select" }),
            None => {}
        }
    }
    if form.has_b_mods() && b_hi != 0 {
        match (&l.b_swizzle_hi, l.has_swizzle) {
            (Some(f), true) => w = f.set(w, b_hi)?,
            _ => return Err(EncodeError::NoModifier { op, what: "three-bit half select" }),
        }
    }
    match (i.relu, &l.relu, &l.relu_pred, &l.relu_pred_neg) {
        (None, _, _, _) => {}
        (Some(p), Some(r), Some(pf), Some(nf)) => {
            w = r.set(w, 1)?;
            w = pf.set(w, p.index as u32)?;
            w = nf.set(w, p.negated as u32)?;
        }
        (Some(_), _, _, _) => return Err(EncodeError::NoModifier { op, what: ".RELU" }),
    }
    w = set_shaped(w, i, l)?;
    let (b_operand, b_mods_in_slot) = (special, special_mods);
    match b_operand {
        Operand2::Reg(r) => w = l.b_reg.set(w, r as u32)?,
        Operand2::Imm { first, second } => {
            w = l.imm_hi.set(w, first as u32)?;
            w = l.imm_lo.set(w, second as u32)?;
        }
        Operand2::Const { bank, offset } => {
            w = l.cb_bank.set(w, bank as u32)?;
            let scale = l.cb_offset.scale as i64;
            let half = 1i64 << (l.cb_offset.width - 1);
            let (min, max) = (-half * scale, (half - 1) * scale);
            let off = offset as i64;
            if off % scale != 0 {
                return Err(EncodeError::Misaligned { offset: off });
            }
            if off < min || off > max {
                return Err(EncodeError::OffsetRange { offset: off, min, max });
            }
            w = l.cb_offset.set(w, ((off / scale) as u32) & l.cb_offset.max())?;
        }
        Operand2::ConstUr { ureg, offset } => {
            w = l.b_ureg.set(w, ureg as u32)?;
            let scale = l.cb_offset.scale as i64;
            let off = offset as i64;
            let max = l.cb_offset.max() as i64 * scale;
            if off % scale != 0 {
                return Err(EncodeError::Misaligned { offset: off });
            }
            if off > max {
                return Err(EncodeError::OffsetRange { offset: off, min: 0, max });
            }
            w = l.cb_offset.set(w, (off / scale) as u32)?;
        }
        Operand2::Ur(u) => w = l.b_ureg.set(w, u as u32)?,
    }
    if form.kind() != Form::Imm {
        w = l.b_neg.set(w, b_mods_in_slot.neg as u32)?;
        w = l.b_abs.set(w, b_mods_in_slot.abs as u32)?;
        w = set_swizzle(w, l, l.b_swizzle.as_ref(), b_mods_in_slot.swizzle)?;
    } else if b_mods_in_slot != SrcMods::default() {
        return Err(EncodeError::ImmediateMods);
    }
    let format = l.format_code[i.format as usize].ok_or(EncodeError::NoModifier { op, what: format_name(i.format) })?;
    w = l.format.set(w, format)?;
    let flush = l.flush_code[i.flush as usize].ok_or(EncodeError::NoModifier { op, what: flush_name(i.flush) })?;
    w = l.flush.set(w, flush)?;
    if i.sat && l.sat.width == 0 {
        return Err(EncodeError::NoModifier { op, what: ".SAT" });
    }
    w = l.sat.set(w, i.sat as u32)?;
    let c = &i.ctrl;
    w = l.stall.set(w, c.stall as u32)?;
    w = l.yield_.set(w, c.yield_ as u32)?;
    w = l.wr_bar.set(w, c.wr_bar as u32)?;
    w = l.rd_bar.set(w, c.rd_bar as u32)?;
    w = l.wait.set(w, c.wait as u32)?;
    w = l.reuse.set(w, c.reuse as u32)?;
    let hidden = s.hidden_mask(k, w);
    if w & hidden != 0 {
        let h = s.hidden.iter().find(|h| w & s.fields[h.field].mask & hidden != 0);
        let (rule, field) = h.map(|h| (h.id.clone(), s.fields[h.field].name.clone())).unwrap_or_default();
        return Err(EncodeError::Hidden { op, rule, field });
    }
    let may_ignore = fs.ignored_mask | hidden;
    if i.ignored & !may_ignore != 0 {
        return Err(EncodeError::Ignored { bits: i.ignored & !may_ignore });
    }
    w |= i.ignored;
    if let Err(v) = s.check(k, w) {
        return Err(EncodeError::Illegal(Illegal::of_violation(op, form, v)));
    }
    Ok(w)
}

/// The fields of the comparisons' and min/max's shape: predicate results, the predicate
/// source, the comparison, the boolean operation and the flags. Each is refused where the
/// spec lacks it, and required where the spec always has it.
fn set_shaped(mut w: u128, i: &Inst, l: &crate::spec::Layout) -> Result<u128, EncodeError> {
    let op = i.op;
    let missing = |what| Err(EncodeError::NoModifier { op, what });
    match (i.pdst, &l.p_dst, &l.q_dst) {
        (Some([p, q]), Some(pf), Some(qf)) => {
            w = pf.set(w, p as u32)?;
            w = qf.set(w, q as u32)?;
            if let Some(g) = &l.is_a {
                w = g.set(w, 1)?;
            }
        }
        (Some(_), _, _) => return missing("predicate result"),
        (None, Some(_), _) if l.is_a.is_none() => return missing("instruction without its predicate results"),
        (None, _, _) => {}
    }
    match (i.psrc, &l.psrc) {
        (Some(p), Some(f)) => {
            w = f.set(w, p.index as u32)?;
            match &l.psrc_neg {
                Some(n) => w = n.set(w, p.negated as u32)?,
                None if p.negated => return missing("negated predicate source"),
                None => {}
            }
        }
        (Some(_), None) => return missing("predicate source"),
        (None, Some(_)) => return missing("instruction without its predicate source"),
        (None, None) => {}
    }
    match (i.cmp, &l.cmp) {
        (Some(c), Some(f)) => w = f.set(w, c.code() as u32)?,
        (Some(_), None) => return missing("comparison"),
        (None, Some(_)) => return missing("instruction without its comparison"),
        (None, None) => {}
    }
    match (i.bool_op, &l.bool_op) {
        (Some(b), Some(f)) => w = f.set(w, b as u32)?,
        (Some(_), None) => return missing("boolean operation"),
        (None, Some(_)) => return missing("instruction without its boolean operation"),
        (None, None) => {}
    }
    for (on, f, what) in [(i.bf, &l.bf, ".BF"), (i.h_and, &l.h_and, ".H_AND"), (i.nan, &l.nan, ".NAN"), (i.xorsign, &l.xorsign, ".XORSIGN")] {
        match f {
            Some(f) => w = f.set(w, on as u32)?,
            None if on => return missing(what),
            None => {}
        }
    }
    Ok(w)
}

/// A half select into its field; an instruction without half selects (HFMA2.MMA) takes only the default.
fn set_swizzle(w: u128, l: &crate::spec::Layout, f: Option<&crate::spec::Field>, s: Swizzle) -> Result<u128, EncodeError> {
    if let Some(f) = f.filter(|_| l.has_swizzle) {
        Ok(f.set(w, s as u32)?)
    } else if s == Swizzle::H1H0 {
        Ok(w)
    } else {
        Err(EncodeError::NoModifier { op: l.op, what: "half select" })
    }
}

fn format_name(f: Format) -> &'static str {
    ["FP16 format", ".INVALID1 format", ".BF16_V2", ".INVALID3 format", ".F32"][f as usize]
}

fn flush_name(f: Flush) -> &'static str {
    ["flush-free mode", ".FMZ", ".FTZ", ".INVALID3 flush mode", ".OOB"][f as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_known_words() {
        let mut i = Inst::new(0, 1, Operand2::Reg(2));
        i.ctrl.stall = 1;
        i.ctrl.yield_ = true;
        assert_eq!(encode(&i).unwrap(), 0x000fe20000000000u128 << 64 | 0x0000000201007232);
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let i = Inst::new(0, 1, Operand2::Ur(64));
        assert!(matches!(encode(&i), Err(EncodeError::Overflow(_))));
        let i = Inst::new(0, 1, Operand2::Const { bank: 0, offset: 2 });
        assert!(matches!(encode(&i), Err(EncodeError::Misaligned { .. })));
        let i = Inst::new(0, 1, Operand2::Const { bank: 0, offset: 0x8000 });
        assert!(matches!(encode(&i), Err(EncodeError::OffsetRange { .. })));
        let mut i = Inst::new(0, 1, Operand2::Reg(2));
        i.ctrl.yield_ = true;
        i.ctrl.stall = 0;
        assert!(matches!(encode(&i), Err(EncodeError::Illegal(Illegal::Constraint { .. }))));
    }
}
