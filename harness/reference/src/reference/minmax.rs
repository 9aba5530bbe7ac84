//! The bit-exact software reference for **HMNMX2**, the packed-half minimum or maximum,
//! a [`MinMaxOp`] (from a decoded word: [`minmax_op`], the operation table's row) names the modifiers, [`hmnmx2`] gives the destination's 32 bits for
//! two source words and the value of the predicate operand that selects min (true) or max
//! (false), as ptxas writes `HMNMX2 Rd, Ra, Rb, PT` for `min` and `..., !PT` for `max`.
//! Guard predicates and RZ destinations are the caller's.
//!
//! # Per lane
//!
//! Select a half of each source, |x| then -x (`abs-neg-order`), flush subnormal inputs to
//! zero of the same sign under .FTZ (`mnmx-ftz`). Then, as the PTX ISA defines `min` and
//! `max` (IEEE 754-2008 minNum / maxNum):
//! - one NaN input: the other input;
//! - both NaN: `mnmx-nan`'s NaN;
//! - `.NAN`: any NaN input gives `mnmx-nan-modifier`'s NaN (PTX: the canonical NaN);
//! - zeros of opposite signs: `mnmx-signed-zero`;
//! - otherwise the smaller (min) or larger (max) input, bits unchanged (an input is
//!   returned, never computed, so nothing rounds and no result needs flushing).
//!
//! `.XORSIGN` then gives the result the exclusive or of the two inputs' signs
//! (`mnmx-xorsign-sign`: taken before or after the source modifiers), except a NaN result
//! under `mnmx-xorsign-nan`'s assumption. ptxas writes PTX's `min.xorsign.abs` as
//! `HMNMX2.XORSIGN Rd, |Ra|, |Rb|`: the magnitudes are compared and the sign is the
//! exclusive or of the signs before `.abs`.

use super::compare::{check_swizzles, flushes, lane_bf16, relation};
use super::policy::{MinMaxNan, MinMaxZero, XorSignFrom};
use super::{mods_masks, shifts, Operands, Policy, Undefined};
use crate::inputs::Inputs;
use crate::isa::{Flush, Format, Inst, Pred, SrcMods, PT};
use std::cmp::Ordering;

/// The modifiers of one HMNMX2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MinMaxOp {
    /// FP16 or BF16 (`.BF16_V2`); another value is [`Undefined::Format`].
    pub format: Format,
    pub ftz: bool,
    /// `.NAN`: a NaN input gives a NaN.
    pub nan: bool,
    /// `.XORSIGN`: the result's sign is the exclusive or of the inputs' signs.
    pub xorsign: bool,
    /// Operand 1's half select, |x| and -x.
    pub a_mods: SrcMods,
    /// Operand 2's.
    pub b_mods: SrcMods,
}

/// Everything the lanes need, decided once per [`MinMaxOp`] and [`Policy`].
#[derive(Clone, Copy, Debug)]
struct MinMaxCtx {
    exp: u16,
    quiet: u16,
    a_and: u16,
    a_xor: u16,
    b_and: u16,
    b_xor: u16,
    a_sh: [u32; 2],
    b_sh: [u32; 2],
    ftz: bool,
    nan_mode: bool,
    xorsign: bool,
    xorsign_raw: bool,
    xorsign_nan: bool,
    both_nan: MinMaxNan,
    nan_modifier: MinMaxNan,
    zero: MinMaxZero,
}

impl MinMaxCtx {
    fn new(op: &MinMaxOp, p: &Policy) -> Result<MinMaxCtx, Undefined> {
        let bf16 = lane_bf16(op.format)?;
        check_swizzles(op.a_mods, op.b_mods)?;
        let (a_and, a_xor) = mods_masks(op.a_mods.neg, op.a_mods.abs, p);
        let (b_and, b_xor) = mods_masks(op.b_mods.neg, op.b_mods.abs, p);
        Ok(MinMaxCtx {
            exp: if bf16 { 0x7f80 } else { 0x7c00 },
            quiet: if bf16 { 0x0040 } else { 0x0200 },
            a_and,
            a_xor,
            b_and,
            b_xor,
            a_sh: shifts(op.a_mods.swizzle),
            b_sh: shifts(op.b_mods.swizzle),
            ftz: op.ftz && flushes(p.mnmx_ftz, bf16),
            nan_mode: op.nan,
            xorsign: op.xorsign,
            xorsign_raw: p.mnmx_xorsign_from == XorSignFrom::Sources,
            xorsign_nan: !p.mnmx_xorsign_nan_keeps,
            both_nan: p.mnmx_nan,
            nan_modifier: p.mnmx_nan_modifier,
            zero: p.mnmx_zero,
        })
    }

    #[inline(always)]
    fn is_nan(&self, v: u16) -> bool {
        v & 0x7fff > self.exp
    }

    /// The NaN `rule` gives for inputs `x`, `y`, at least one of them NaN.
    #[inline(always)]
    fn nan(&self, rule: MinMaxNan, x: u16, y: u16) -> u16 {
        let first = if self.is_nan(x) { x } else { y };
        match rule {
            MinMaxNan::Canonical => 0x7fff,
            MinMaxNan::FirstQuieted => first | self.quiet,
            MinMaxNan::FirstAsIs => first,
        }
    }

    /// Lane `l` of the result.
    #[inline(always)]
    fn lane(&self, a: u32, b: u32, l: usize, min: bool) -> u16 {
        let (ra, rb) = ((a >> self.a_sh[l]) as u16, (b >> self.b_sh[l]) as u16);
        let (mut x, mut y) = ((ra & self.a_and) ^ self.a_xor, (rb & self.b_and) ^ self.b_xor);
        let sign = if self.xorsign_raw { (ra ^ rb) & 0x8000 } else { (x ^ y) & 0x8000 };
        if self.ftz {
            if x & self.exp == 0 {
                x &= 0x8000;
            }
            if y & self.exp == 0 {
                y &= 0x8000;
            }
        }
        let r = match relation(self.exp, x, y) {
            None if self.nan_mode => self.nan(self.nan_modifier, x, y),
            None if self.is_nan(x) && self.is_nan(y) => self.nan(self.both_nan, x, y),
            None if self.is_nan(x) => y,
            None => x,
            // both zeros (equal nonzero values have equal bits)
            Some(Ordering::Equal) if x != y => match self.zero {
                MinMaxZero::MinusBelowPlus if min => x | y,
                MinMaxZero::MinusBelowPlus => x & y,
                MinMaxZero::Operand1 => x,
                MinMaxZero::Operand2 => y,
            },
            Some(Ordering::Less) if !min => y,
            Some(Ordering::Greater) if min => y,
            Some(_) => x,
        };
        if self.xorsign && (self.xorsign_nan || !self.is_nan(r)) {
            (r & 0x7fff) | sign
        } else {
            r
        }
    }
}

/// The destination of one HMNMX2: `min` is the predicate operand's value after its `!`
/// (true: minimum, false: maximum).
pub fn hmnmx2(op: &MinMaxOp, p: &Policy, a: u32, b: u32, min: bool) -> Result<u32, Undefined> {
    let ctx = MinMaxCtx::new(op, p)?;
    Ok(ctx.lane(a, b, 0, min) as u32 | (ctx.lane(a, b, 1, min) as u32) << 16)
}

/// The modifiers of a decoded HMNMX2; `.IS_A` (predicate results of no public meaning) is
/// [`Undefined::IsA`], a flush value other than `.FTZ` [`Undefined::Flush`].
pub fn minmax_op(inst: &Inst) -> Result<MinMaxOp, Undefined> {
    if inst.pdst.is_some() {
        return Err(Undefined::IsA);
    }
    let ftz = match inst.flush {
        Flush::None => false,
        Flush::Ftz => true,
        _ => return Err(Undefined::Flush),
    };
    let b_mods = if inst.form().has_b_mods() { inst.b_mods } else { SrcMods::default() };
    Ok(MinMaxOp { format: inst.format, ftz, nan: inst.nan, xorsign: inst.xorsign, a_mods: inst.a_mods, b_mods })
}

/// The selector of `inst` on `x`: its predicate, `!` applied; true is min (PT where none).
fn selects_min(inst: &Inst, x: &Inputs) -> bool {
    let s = inst.psrc.unwrap_or(Pred::ALWAYS);
    (s.index >= PT || (x.pred >> s.index) & 1 == 1) != s.negated
}

/// The operation table's HMNMX2 (one input): the destination, `x.d` where the guard is false.
pub(super) fn eval_hmnmx2_inst(p: &Policy, inst: &Inst, x: &Inputs) -> Result<u32, Undefined> {
    let o = Operands::of(inst, p);
    let v = hmnmx2(&minmax_op(inst)?, p, o.a_word(x), o.b_word(x), selects_min(inst, x))?;
    Ok(o.write(x, || v))
}

/// [`eval_hmnmx2_inst`] for many inputs (the selector per input).
pub(super) fn eval_hmnmx2_batch_inst(p: &Policy, inst: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), Undefined> {
    let ctx = MinMaxCtx::new(&minmax_op(inst)?, p)?;
    let o = Operands::of(inst, p);
    for (r, x) in out.iter_mut().zip(xs) {
        let (a, b, min) = (o.a_word(x), o.b_word(x), selects_min(inst, x));
        *r = o.write(x, || ctx.lane(a, b, 0, min) as u32 | (ctx.lane(a, b, 1, min) as u32) << 16);
    }
    Ok(())
}

/// [`hmnmx2`] for many inputs with one predicate value (`out` at least as long as the
/// shorter of `a`, `b`).
pub fn hmnmx2_batch(op: &MinMaxOp, p: &Policy, a: &[u32], b: &[u32], min: bool, out: &mut [u32]) -> Result<(), Undefined> {
    let ctx = MinMaxCtx::new(op, p)?;
    for ((r, &a), &b) in out.iter_mut().zip(a).zip(b) {
        *r = ctx.lane(a, b, 0, min) as u32 | (ctx.lane(a, b, 1, min) as u32) << 16;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Swizzle;

    #[test]
    fn min_and_max_of_ordinary_values() {
        let p = Policy::current();
        let op = MinMaxOp::default();
        // lane 0: 1 vs 2; lane 1: -3 vs -0
        let (a, b) = (0xc200_3c00, 0x8000_4000);
        assert_eq!(hmnmx2(&op, p, a, b, true), Ok(0xc200_3c00));
        assert_eq!(hmnmx2(&op, p, a, b, false), Ok(0x8000_4000));
        // one NaN: the other input
        assert_eq!(hmnmx2(&op, p, 0x7e00_3c00, 0x4000_7c01, true), Ok(0x4000_3c00));
        let bf = MinMaxOp { format: Format::Bf16, ..op };
        assert_eq!(hmnmx2(&bf, p, 0x3f80_c000, 0x4000_bf80, true), Ok(0x3f80_c000));
    }

    #[test]
    fn xorsign_with_abs_sources_is_ptx_xorsign_abs() {
        let mut p = *Policy::current();
        p.mnmx_xorsign_from = XorSignFrom::Sources;
        let abs = SrcMods { abs: true, neg: false, swizzle: Swizzle::H1H0 };
        let op = MinMaxOp { xorsign: true, a_mods: abs, b_mods: abs, ..Default::default() };
        // |-2| vs |3|, signs differ: min magnitude 2 with sign -; lane 1: |-1| vs |-4|: 1, +
        assert_eq!(hmnmx2(&op, &p, 0xbc00_c000, 0xc400_4200, true), Ok(0x3c00_c000));
    }

    #[test]
    fn invalid_fields_are_undefined() {
        let p = Policy::current();
        let op = MinMaxOp { format: Format::Invalid3, ..Default::default() };
        assert_eq!(hmnmx2(&op, p, 0, 0, true), Err(Undefined::Format(Format::Invalid3)));
        let op = MinMaxOp { b_mods: SrcMods { swizzle: Swizzle::Invalid1, ..Default::default() }, ..Default::default() };
        assert_eq!(hmnmx2(&op, p, 0, 0, true), Err(Undefined::Swizzle { operand: 2 }));
    }
}
