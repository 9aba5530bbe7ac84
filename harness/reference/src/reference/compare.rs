//! The bit-exact software reference for the packed-half comparisons **HSET2** (a 32-bit
//! result: per lane a mask or a float 1.0) and **HSETP2** (two predicates). The isa decodes
//! them ([`crate::isa::Inst`]'s `cmp`, `bool_op`, `psrc`, `pdst`, `bf`, `h_and`); until the
//! operation table has their rows (issue 41) a caller builds a [`CmpOp`] from a decoded word
//! and calls [`hset2`] or [`hsetp2`].
//! Guard predicates and RZ destinations are the caller's, as for [`super::add`].
//!
//! # Per lane
//!
//! Each lane: select a half of each source ([`Swizzle`]), |x| then -x (`abs-neg-order`),
//! flush subnormal inputs to zero of the same sign under .FTZ (`cmp-ftz`), then compare
//! by IEEE 754 rules: -0 equals +0, and a NaN operand makes the pair *unordered*, for which
//! the ordered comparisons (LT, EQ, LE, GT, NE, GE, NUM) are false and the unordered ones
//! (LTU, EQU, LEU, GTU, NEU, GEU, NAN) true; F is always false, T always true. The lane's
//! comparison `t` is then combined with the predicate source `c` (its `!` applied by the
//! caller) by the boolean operation: `t AND c`, `t OR c`, `t XOR c`.
//!
//! - HSET2 writes, per lane, 0 for false and for true either 0xffff (no `.BF`) or the lane
//!   format's 1.0 (`.BF`: 0x3c00; with `.BF16_V2` per `hset2-bf-bf16`).
//! - HSETP2 writes lane 0's result to its first predicate and lane 1's to its second;
//!   with `.H_AND` both lanes' comparisons are ANDed first (`hsetp2-h-and` says what each
//!   predicate gets).
//!
//! The comparison codes are those of the 4-bit field Mesa's NAK encodes for every Volta+
//! float comparison (F = 0, LT = 1, ..., GEU = 14, T = 15, [`Cmp::code`]).

use super::policy::FlushLanes;
use super::{mask, mods_masks, sel, shifts, Policy, Undefined};
use crate::isa::{Format, SrcMods, Swizzle};
use std::cmp::Ordering;

pub use crate::isa::{BoolOp, Cmp};

/// What a comparison means: [`Cmp`] is the isa's (its field and names); its truth lives here.
pub trait CmpSemantics {
    /// Whether the comparison holds for operands in relation `ord` (None: unordered, a NaN
    /// operand).
    fn holds(self, ord: Option<Ordering>) -> bool;
    /// Bit `r` set when the comparison holds for relation `r` (0 less, 1 equal, 2 greater,
    /// 3 unordered): the field's bits are less, equal, greater, unordered.
    fn truth_table(self) -> u8;
}

impl CmpSemantics for Cmp {
    fn holds(self, ord: Option<Ordering>) -> bool {
        (self.truth_table() >> relation_bit(ord)) & 1 != 0
    }

    #[inline(always)]
    fn truth_table(self) -> u8 {
        self.code()
    }
}

/// The bit of a relation in [`CmpSemantics::truth_table`].
#[inline(always)]
fn relation_bit(ord: Option<Ordering>) -> u8 {
    match ord {
        Some(Ordering::Less) => 0,
        Some(Ordering::Equal) => 1,
        Some(Ordering::Greater) => 2,
        None => 3,
    }
}

/// What a boolean operation does: [`BoolOp`] is the isa's; its truth lives here.
pub trait BoolOpSemantics {
    /// `t op c`; None for [`BoolOp::Invalid3`].
    fn apply(self, t: bool, c: bool) -> Option<bool>;
}

impl BoolOpSemantics for BoolOp {
    fn apply(self, t: bool, c: bool) -> Option<bool> {
        match self {
            BoolOp::And => Some(t & c),
            BoolOp::Or => Some(t | c),
            BoolOp::Xor => Some(t ^ c),
            BoolOp::Invalid3 => None,
        }
    }
}

/// What an HSET2 or HSETP2 compares, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CmpOp {
    /// FP16 or BF16 (`.BF16_V2`); another value is [`Undefined::Format`].
    pub format: Format,
    pub cmp: Cmp,
    pub bool_op: BoolOp,
    pub ftz: bool,
    /// Operand 1's half select, |x| and -x.
    pub a_mods: SrcMods,
    /// Operand 2's.
    pub b_mods: SrcMods,
}

/// An HSET2: the comparison and the result kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hset2Op {
    pub cmp: CmpOp,
    /// `.BF`: a true lane is the lane format's 1.0; otherwise 0xffff.
    pub bf: bool,
}

/// An HSETP2: the comparison and whether both lanes are ANDed into one result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hsetp2Op {
    pub cmp: CmpOp,
    /// `.H_AND`.
    pub h_and: bool,
}

/// Everything a lane comparison needs, decided once per [`CmpOp`] and [`Policy`].
#[derive(Clone, Copy, Debug)]
pub(super) struct CmpCtx {
    exp: u16,
    a_and: u16,
    a_xor: u16,
    b_and: u16,
    b_xor: u16,
    a_sh: [u32; 2],
    b_sh: [u32; 2],
    ftz: bool,
    table: u8,
    /// Which of AND, OR, XOR the boolean operation is.
    bool_masks: [bool; 3],
    bf16: bool,
}

/// The lane format of `format`, or why it has none: true for BF16.
pub(super) fn lane_bf16(format: Format) -> Result<bool, Undefined> {
    match format {
        Format::F16 => Ok(false),
        Format::Bf16 => Ok(true),
        f => Err(Undefined::Format(f)),
    }
}

/// Refuses a half select with no meaning.
pub(super) fn check_swizzles(a: SrcMods, b: SrcMods) -> Result<(), Undefined> {
    for (operand, m) in [(1, a), (2, b)] {
        if !matches!(m.swizzle, Swizzle::H1H0 | Swizzle::H0H0 | Swizzle::H1H1) {
            return Err(Undefined::Swizzle { operand });
        }
    }
    Ok(())
}

/// Whether a flush modifier acts on lanes of this format under `scope`.
pub(super) fn flushes(scope: FlushLanes, bf16: bool) -> bool {
    match scope {
        FlushLanes::Both => true,
        FlushLanes::F16Only => !bf16,
        FlushLanes::Neither => false,
    }
}

/// The IEEE relation of two lane values of a format with exponent mask `exp`: None when
/// either is NaN; -0 equals +0.
#[inline(always)]
pub(super) fn relation(exp: u16, a: u16, b: u16) -> Option<Ordering> {
    if a & 0x7fff > exp || b & 0x7fff > exp {
        return None;
    }
    Some(order_key(a).cmp(&order_key(b)))
}

impl CmpCtx {
    pub(super) fn new(op: &CmpOp, p: &Policy) -> Result<CmpCtx, Undefined> {
        let bf16 = lane_bf16(op.format)?;
        check_swizzles(op.a_mods, op.b_mods)?;
        if op.bool_op == BoolOp::Invalid3 {
            return Err(Undefined::BoolOp);
        }
        let (a_and, a_xor) = mods_masks(op.a_mods.neg, op.a_mods.abs, p);
        let (b_and, b_xor) = mods_masks(op.b_mods.neg, op.b_mods.abs, p);
        Ok(CmpCtx {
            exp: if bf16 { 0x7f80 } else { 0x7c00 },
            a_and,
            a_xor,
            b_and,
            b_xor,
            a_sh: shifts(op.a_mods.swizzle),
            b_sh: shifts(op.b_mods.swizzle),
            ftz: op.ftz && flushes(p.cmp_ftz, bf16),
            table: op.cmp.truth_table(),
            bool_masks: [op.bool_op == BoolOp::And, op.bool_op == BoolOp::Or, op.bool_op == BoolOp::Xor],
            bf16,
        })
    }

    #[inline(always)]
    fn src(&self, word: u32, sh: u32, and: u16, xor: u16) -> u16 {
        let v = ((word >> sh) as u16 & and) ^ xor;
        sel(mask(self.ftz) & mask(v & self.exp == 0), v & 0x8000, v)
    }

    /// Lane comparison `t` of `x` and `y` (after modifiers and flushing), straight-line so
    /// that batches vectorise: the relation as one bit of [`CmpSemantics::truth_table`]'s four,
    /// from order-preserving keys of the sign-magnitude values (both zeros one key).
    #[inline(always)]
    fn holds(&self, x: u16, y: u16) -> bool {
        let (kx, ky) = (order_key(x), order_key(y));
        let unordered = (x & 0x7fff > self.exp) | (y & 0x7fff > self.exp);
        let rel = ((kx < ky) as u8) | ((kx == ky) as u8) << 1 | ((kx > ky) as u8) << 2;
        let rel = if unordered { 8 } else { rel };
        self.table & rel != 0
    }

    /// Each lane's comparison `t`, before the boolean operation.
    #[inline(always)]
    pub(super) fn lanes(&self, a: u32, b: u32) -> [bool; 2] {
        let (x0, y0) = (self.src(a, self.a_sh[0], self.a_and, self.a_xor), self.src(b, self.b_sh[0], self.b_and, self.b_xor));
        let (x1, y1) = (self.src(a, self.a_sh[1], self.a_and, self.a_xor), self.src(b, self.b_sh[1], self.b_and, self.b_xor));
        [self.holds(x0, y0), self.holds(x1, y1)]
    }

    /// `t op c` ([`CmpCtx::new`] refused INVALID3), without a branch on the operation.
    #[inline(always)]
    fn combine(&self, t: bool, c: bool) -> bool {
        let [and, or, xor] = self.bool_masks;
        ((t & c) & and) | ((t | c) & or) | ((t ^ c) & xor)
    }
}

/// An order-preserving unsigned key of a sign-magnitude lane value (not NaN): both zeros
/// get one key.
#[inline(always)]
fn order_key(v: u16) -> u16 {
    let neg = 0u16.wrapping_sub(v >> 15);
    sel(mask(v & 0x7fff == 0), 0x8000, v ^ (neg | 0x8000))
}

/// The lane value of a true HSET2 result.
fn hset2_true(op: &Hset2Op, ctx: &CmpCtx, p: &Policy) -> u16 {
    match (op.bf, ctx.bf16 && p.hset2_bf_bf16_one) {
        (false, _) => 0xffff,
        (true, true) => 0x3f80,
        (true, false) => 0x3c00,
    }
}

/// The destination of one HSET2: per lane 0 or the true value, `c` the predicate source
/// after its `!`.
pub fn hset2(op: &Hset2Op, p: &Policy, a: u32, b: u32, c: bool) -> Result<u32, Undefined> {
    let ctx = CmpCtx::new(&op.cmp, p)?;
    let one = hset2_true(op, &ctx, p) as u32;
    let [t0, t1] = ctx.lanes(a, b);
    Ok(if ctx.combine(t0, c) { one } else { 0 } | if ctx.combine(t1, c) { one << 16 } else { 0 })
}

/// [`hset2`] for many inputs (`out` at least as long as the shortest of `a`, `b`, `c`).
pub fn hset2_batch(op: &Hset2Op, p: &Policy, a: &[u32], b: &[u32], c: &[bool], out: &mut [u32]) -> Result<(), Undefined> {
    let ctx = CmpCtx::new(&op.cmp, p)?;
    let one = hset2_true(op, &ctx, p) as u32;
    for (((r, &a), &b), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
        let [t0, t1] = ctx.lanes(a, b);
        *r = (one & 0u32.wrapping_sub(ctx.combine(t0, c) as u32)) | (one << 16 & 0u32.wrapping_sub(ctx.combine(t1, c) as u32));
    }
    Ok(())
}

/// The two predicates one HSETP2 writes (first, second), `c` the predicate source after
/// its `!`.
pub fn hsetp2(op: &Hsetp2Op, p: &Policy, a: u32, b: u32, c: bool) -> Result<(bool, bool), Undefined> {
    use super::policy::HAnd;
    let ctx = CmpCtx::new(&op.cmp, p)?;
    let [t0, t1] = ctx.lanes(a, b);
    if !op.h_and {
        return Ok((ctx.combine(t0, c), ctx.combine(t1, c)));
    }
    let both = t0 & t1;
    let first = ctx.combine(both, c);
    Ok(match p.hsetp2_h_and {
        HAnd::Complement => (first, ctx.combine(!both, c)),
        HAnd::Same => (first, first),
        HAnd::NotFirst => (first, !first),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_names_and_truth_tables_agree() {
        for (i, c) in Cmp::ALL.into_iter().enumerate() {
            assert_eq!(c.code() as usize, i);
            assert_eq!(Cmp::from_code(i as u8), Some(c));
            assert_eq!(Cmp::from_name(&c.name().to_lowercase()), Some(c));
        }
        assert_eq!(Cmp::from_code(16), None);
        use Ordering::*;
        let rows: [(Cmp, [bool; 4]); 16] = [
            (Cmp::F, [false, false, false, false]),
            (Cmp::Lt, [true, false, false, false]),
            (Cmp::Eq, [false, true, false, false]),
            (Cmp::Le, [true, true, false, false]),
            (Cmp::Gt, [false, false, true, false]),
            (Cmp::Ne, [true, false, true, false]),
            (Cmp::Ge, [false, true, true, false]),
            (Cmp::Num, [true, true, true, false]),
            (Cmp::Nan, [false, false, false, true]),
            (Cmp::Ltu, [true, false, false, true]),
            (Cmp::Equ, [false, true, false, true]),
            (Cmp::Leu, [true, true, false, true]),
            (Cmp::Gtu, [false, false, true, true]),
            (Cmp::Neu, [true, false, true, true]),
            (Cmp::Geu, [false, true, true, true]),
            (Cmp::T, [true, true, true, true]),
        ];
        for (c, want) in rows {
            let got = [Some(Less), Some(Equal), Some(Greater), None].map(|o| c.holds(o));
            assert_eq!(got, want, "{}", c.name());
        }
    }

    #[test]
    fn relation_orders_values_and_equates_zeros() {
        let f16 = [0xfc00u16, 0xc000, 0x8001, 0x8000, 0x0000, 0x0001, 0x3c00, 0x7bff, 0x7c00];
        for (i, &x) in f16.iter().enumerate() {
            for (j, &y) in f16.iter().enumerate() {
                let zeros = x & 0x7fff == 0 && y & 0x7fff == 0;
                let want = if zeros { Ordering::Equal } else { i.cmp(&j) };
                assert_eq!(relation(0x7c00, x, y), Some(want), "{x:#06x} {y:#06x}");
            }
            assert_eq!(relation(0x7c00, x, 0x7e00), None);
            assert_eq!(relation(0x7c00, 0xfc01, x), None);
        }
    }

    #[test]
    fn invalid_fields_are_undefined() {
        let p = Policy::current();
        let op = Hset2Op { cmp: CmpOp { bool_op: BoolOp::Invalid3, ..Default::default() }, bf: false };
        assert_eq!(hset2(&op, p, 0, 0, true), Err(Undefined::BoolOp));
        let op = Hsetp2Op { cmp: CmpOp { format: Format::Invalid1, ..Default::default() }, h_and: false };
        assert_eq!(hsetp2(&op, p, 0, 0, true), Err(Undefined::Format(Format::Invalid1)));
        let op = Hsetp2Op { cmp: CmpOp { a_mods: SrcMods { swizzle: Swizzle::Invalid1, ..Default::default() }, ..Default::default() }, h_and: false };
        assert_eq!(hsetp2(&op, p, 0, 0, true), Err(Undefined::Swizzle { operand: 1 }));
    }

    #[test]
    fn batch_is_the_single_evaluation() {
        let p = Policy::current();
        let words: Vec<u32> = (0..4000u32).map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7)).collect();
        let b: Vec<u32> = words.iter().map(|w| w.rotate_left(13)).collect();
        let c: Vec<bool> = words.iter().map(|w| w & 1 != 0).collect();
        for format in [Format::F16, Format::Bf16] {
            for cmp in Cmp::ALL {
                for bool_op in [BoolOp::And, BoolOp::Or, BoolOp::Xor] {
                    for bf in [false, true] {
                        let op = Hset2Op { cmp: CmpOp { format, cmp, bool_op, ftz: bf, ..Default::default() }, bf };
                        let mut out = vec![0; words.len()];
                        hset2_batch(&op, p, &words, &b, &c, &mut out).unwrap();
                        for i in 0..words.len() {
                            assert_eq!(Ok(out[i]), hset2(&op, p, words[i], b[i], c[i]), "{op:?}");
                        }
                    }
                }
            }
        }
    }
}
