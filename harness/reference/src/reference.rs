//! The bit-exact software reference for HMUL2: what the destination holds afterwards.
//!
//! Each lane: select a half, apply |x| / -x, flush subnormal inputs (.FTZ/.FMZ), multiply in
//! f32 (an FP16 x FP16 product is exact there), round once to the lane format with `half`'s
//! `from_f32` ([`eval_batch`] BF16: an equal branch-free rounding), then fix up NaN, .FMZ
//! zeros, flushed results and .SAT. Every choice no document settles comes from [`Policy`]
//! (`harness/spec/semantics.json`); field values nvdisasm names INVALIDn give [`Undefined`]
//! instead of a guess.

pub mod add;
#[cfg(target_arch = "x86_64")]
mod bf16x32;
pub mod compare;
pub mod fma;
pub mod minmax;
pub mod operation;
#[cfg(target_arch = "x86_64")]
pub mod ph;
pub mod policy;

pub use operation::{family_of, operation, writes_preds, Family, Operation, OPERATIONS};
pub use policy::{Assumption, F32Nan, FmzZero, Policy, ReluNan, ZeroSum};

use crate::inputs::Inputs;
use crate::isa::{Flush, Form, Format, Inst, Operand2, Swizzle, PT, RZ, URZ};
use crate::rng::Rng;
use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
use half::{bf16, f16};
use harness_isa::target::Target;

/// Why the reference gives no value: the instruction holds a field value with no meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Undefined {
    #[error("format field is {0:?} (INVALIDn): no lane format is defined")]
    Format(Format),
    #[error("flush field is INVALID3: no denormal mode is defined")]
    Flush,
    #[error("operand {operand} half select is INVALID1: no lane selection is defined")]
    Swizzle { operand: u8 },
    /// The instruction is one whose arithmetic this module does not implement (yet).
    #[error("the reference has no arithmetic for {0}")]
    Instruction(crate::isa::Op),
    /// HADD2 ([`add`]) only.
    #[error("HADD2 flush field is {0:?}: only none and .FTZ have a meaning assumed for HADD2")]
    AddFlush(Flush),
    /// HADD2 ([`add`]) only.
    #[error("HADD2 .F32 with .BF16_V2: nvdisasm rejects the combination; no result is defined")]
    AddBf16F32,
    /// HFMA2 ([`fma`]) only: a modifier or combination with no documented meaning.
    #[error("HFMA2 {0}")]
    Fma(&'static str),
    /// HSET2 and HSETP2 ([`compare`]): the boolean operation field holds value 3.
    #[error("boolean operation field is INVALID3: no operation is defined")]
    BoolOp,
    /// HSETP2 ([`compare`]): both results name one predicate and differ; which write wins
    /// is no named assumption.
    #[error("both predicate results are P{0} and get different values: which write wins is not known")]
    SamePredicate(u8),
    /// HMNMX2 ([`minmax`]): `.IS_A` and its two predicate results have no public meaning.
    #[error("HMNMX2 .IS_A: its predicate results have no public meaning, so no result is defined")]
    IsA,
}

/// The instructions the whole pipeline runs: reference arithmetic, and a kernel that stages
/// their inputs (`run`'s and `build-kernel`'s default). Every instruction of the family: those
/// of the operation table ([`OPERATIONS`]).
pub const IMPLEMENTED: &[crate::isa::Op] = &operation::OPS;

/// The instructions whose arithmetic this module computes ([`eval`], `verify`, `eval`):
/// today the same as [`IMPLEMENTED`]; an instruction may be computed before the kernel
/// stages it (as HFMA2 was).
pub const COMPUTED: &[crate::isa::Op] = IMPLEMENTED;

/// What every instruction of the family reads and writes besides its arithmetic: source
/// words as `x.a & a_keep` and `(x.b & b_keep) | b_fixed` (RZ and URZ read 0, an immediate
/// is its packed 32 bits), a destination RZ, and the guard.
#[derive(Clone, Copy, Debug)]
struct Operands {
    a_keep: u32,
    b_keep: u32,
    b_fixed: u32,
    /// Operand 3 (three-source instructions) as `(x.c & c_keep) | c_fixed`; 0 without one.
    c_keep: u32,
    c_fixed: u32,
    dst_rz: bool,
    /// The guard as `((x.pred | 0x80) >> pred_shift) & 1 != pred_flip`: PT is bit 7.
    pred_shift: u32,
    pred_flip: u32,
}

impl Operands {
    fn of(inst: &Inst, p: &Policy) -> Operands {
        // what a source word is: a register, uniform register or constant-bank word from
        // the inputs, zero for RZ/URZ, or the packed immediates
        let source = |o: Operand2| match o {
            Operand2::Reg(RZ) | Operand2::Ur(URZ) => (0, 0),
            Operand2::Imm { first, second } => {
                let (lo, hi) = if p.imm_second_is_lane0 { (second, first) } else { (first, second) };
                (0, lo as u32 | (hi as u32) << 16)
            }
            _ => (u32::MAX, 0),
        };
        let (b_keep, b_fixed) = source(inst.b);
        let (c_keep, c_fixed) = inst.c.map_or((0, 0), source);
        Operands {
            a_keep: if inst.a == RZ { 0 } else { u32::MAX },
            b_keep,
            b_fixed,
            c_keep,
            c_fixed,
            dst_rz: inst.dst == RZ,
            pred_shift: inst.pred.index.min(PT) as u32,
            pred_flip: inst.pred.negated as u32,
        }
    }
    #[inline(always)]
    fn pred(&self, pred: u8) -> bool {
        ((pred as u32 | 0x80) >> self.pred_shift) & 1 != self.pred_flip
    }
    #[inline(always)]
    fn a_word(&self, x: &Inputs) -> u32 {
        x.a & self.a_keep
    }
    #[inline(always)]
    fn b_word(&self, x: &Inputs) -> u32 {
        (x.b & self.b_keep) | self.b_fixed
    }
    #[inline(always)]
    fn c_word(&self, x: &Inputs) -> u32 {
        (x.c & self.c_keep) | self.c_fixed
    }
    /// The destination after the instruction: 0 for RZ, `x.d` when the guard is false,
    /// else the computed `v`.
    #[inline(always)]
    fn write(&self, x: &Inputs, v: impl FnOnce() -> u32) -> u32 {
        if self.dst_rz {
            0
        } else if !self.pred(x.pred) {
            x.d
        } else {
            v()
        }
    }
}

/// An HFMA2 or HFMA2.MMA on one input: the operand words of [`Operands`], the lanes of
/// [`fma`].
fn eval_fma_inst(p: &Policy, inst: &Inst, x: &Inputs) -> Result<u32, Undefined> {
    let f = fma::Fma::new(&fma::fma_op(inst)?, p)?;
    let o = Operands::of(inst, p);
    Ok(o.write(x, || f.eval(o.a_word(x), o.b_word(x), o.c_word(x))))
}

/// [`eval_fma_inst`] for many inputs, through [`fma::Fma::batch`].
fn eval_fma_batch_inst(p: &Policy, inst: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), Undefined> {
    let f = fma::Fma::new(&fma::fma_op(inst)?, p)?;
    let o = Operands::of(inst, p);
    let a: Vec<u32> = xs.iter().map(|x| o.a_word(x)).collect();
    let b: Vec<u32> = xs.iter().map(|x| o.b_word(x)).collect();
    let c: Vec<u32> = xs.iter().map(|x| o.c_word(x)).collect();
    f.batch(&a, &b, &c, &mut out[..xs.len()]);
    for (r, x) in out.iter_mut().zip(xs) {
        *r = o.write(x, || *r);
    }
    Ok(())
}

/// [`eval_add_inst`] for many inputs, through [`add::eval_add_batch`] (its AVX2 kernel
/// where the CPU has one): the operand words of [`Operands`] per input, then the guard and
/// RZ destination as [`Operands::write`] applies them.
fn eval_add_batch_inst(p: &Policy, inst: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), Undefined> {
    let op = add::add_op(inst);
    let o = Operands::of(inst, p);
    let a: Vec<u32> = xs.iter().map(|x| o.a_word(x)).collect();
    let b: Vec<u32> = xs.iter().map(|x| o.b_word(x)).collect();
    add::eval_add_batch(&op, p, &a, &b, &mut out[..xs.len()])?;
    for (r, x) in out.iter_mut().zip(xs) {
        *r = o.write(x, || *r);
    }
    Ok(())
}

/// An HADD2 on one input: the guard, RZ and operand words of [`Operands`], the lanes of
/// [`add`]. An undefined instruction is undefined whatever the inputs.
fn eval_add_inst(p: &Policy, inst: &Inst, x: &Inputs) -> Result<u32, Undefined> {
    let op = add::add_op(inst);
    let o = Operands::of(inst, p);
    let v = add::eval_add(&op, p, o.a_word(x), o.b_word(x))?;
    Ok(if o.dst_rz {
        0
    } else if !o.pred(x.pred) {
        x.d
    } else {
        v
    })
}

/// Everything about one instruction that the lanes need, decided once.
#[derive(Clone, Copy, Debug)]
struct Ctx {
    bf16: bool,
    /// Exponent mask, quiet bit and the bits of 1.0 of the lane format.
    exp: u16,
    quiet: u16,
    one: u16,
    /// Source modifiers as `(x & and) ^ xor`.
    a_and: u16,
    a_xor: u16,
    b_and: u16,
    b_xor: u16,
    /// Shift (0 or 16) that gives each lane's half, per source.
    a_sh: [u32; 2],
    b_sh: [u32; 2],
    /// Operand words, RZ destination and guard: no per-input branch on RZ or the operand-2
    /// source.
    o: Operands,
    /// Policy and modifier switches as all-ones / zero masks, so `finish` is straight-line
    /// bit arithmetic the compiler vectorises.
    m: Masks,
}

#[derive(Clone, Copy, Debug)]
struct Masks {
    ftz_in: u16,
    ftz_out: u16,
    after_rounding: u16,
    canonical: u16,
    fmz: u16,
    fmz_xor_sign: u16,
    sat: u16,
    sat_nan_zero: u16,
    sat_keep_neg_zero: u16,
}

impl Masks {
    /// No result flushing, .FMZ or .SAT: [`Ctx::finish`] reduces to [`Ctx::finish_nan`].
    fn plain(&self) -> bool {
        self.ftz_out | self.fmz | self.sat == 0
    }
}

#[inline(always)]
fn mask(c: bool) -> u16 {
    0u16.wrapping_sub(c as u16)
}

/// `x` where `m` is all ones, `y` where it is zero.
#[inline(always)]
fn sel(m: u16, x: u16, y: u16) -> u16 {
    (x & m) | (y & !m)
}

fn mods_masks(neg: bool, abs: bool, p: &Policy) -> (u16, u16) {
    match (abs, neg) {
        (false, false) => (0xffff, 0),
        (false, true) => (0xffff, 0x8000),
        (true, false) => (0x7fff, 0),
        (true, true) if p.abs_then_neg => (0x7fff, 0x8000),
        (true, true) => (0x7fff, 0),
    }
}

fn shifts(s: Swizzle) -> [u32; 2] {
    match s {
        Swizzle::H0H0 => [0, 0],
        Swizzle::H1H1 => [16, 16],
        // Invalid1 and the three-bit values (HFMA2's operand 2) never get here: ctx() refuses
        // HMUL2's INVALID1 and every instruction without a reference first
        Swizzle::H1H0 | Swizzle::Invalid1 | Swizzle::Code4 | Swizzle::Code5 | Swizzle::Code6 | Swizzle::Code7 => [0, 16],
    }
}

impl Ctx {
    fn new(inst: &Inst, p: &Policy) -> Result<Ctx, Undefined> {
        // the lanes below multiply: HMUL2's (HADD2 is `add`, through `eval_with`)
        if family_of(inst.op) != Some(Family::Mul) {
            return Err(Undefined::Instruction(inst.op));
        }
        let bf16 = match inst.format {
            Format::F16 => false,
            Format::Bf16 => true,
            f => return Err(Undefined::Format(f)),
        };
        if inst.flush == Flush::Invalid3 {
            return Err(Undefined::Flush);
        }
        if inst.a_mods.swizzle == Swizzle::Invalid1 {
            return Err(Undefined::Swizzle { operand: 1 });
        }
        let b_mods = if inst.form().has_b_mods() { inst.b_mods } else { Default::default() };
        if b_mods.swizzle == Swizzle::Invalid1 {
            return Err(Undefined::Swizzle { operand: 2 });
        }
        let flush_ok = !bf16 || p.flush_bf16;
        let (ftz, fmz) = match inst.flush {
            Flush::Ftz => (flush_ok, false),
            Flush::Fmz => (flush_ok && p.fmz_flushes, flush_ok && p.fmz != FmzZero::Ieee),
            _ => (false, false),
        };
        let (a_and, a_xor) = mods_masks(inst.a_mods.neg, inst.a_mods.abs, p);
        let (b_and, b_xor) = mods_masks(b_mods.neg, b_mods.abs, p);
        let o = Operands::of(inst, p);
        Ok(Ctx {
            bf16,
            exp: if bf16 { 0x7f80 } else { 0x7c00 },
            quiet: if bf16 { 0x0040 } else { 0x0200 },
            one: if bf16 { 0x3f80 } else { 0x3c00 },
            a_and,
            a_xor,
            b_and,
            b_xor,
            a_sh: shifts(inst.a_mods.swizzle),
            b_sh: shifts(b_mods.swizzle),
            o,
            m: Masks {
                ftz_in: mask(ftz && p.ftz_inputs),
                ftz_out: mask(ftz),
                after_rounding: mask(p.ftz_after_rounding),
                canonical: mask(p.nan_canonical),
                fmz: mask(fmz),
                fmz_xor_sign: mask(p.fmz == FmzZero::XorSign),
                sat: mask(inst.sat && (!bf16 || p.sat_bf16)),
                sat_nan_zero: mask(p.sat_nan_to_zero),
                sat_keep_neg_zero: mask(!p.sat_neg_zero_to_plus),
            },
        })
    }

    /// Operand lane `l` of a source after half select, modifiers and input flushing.
    #[inline(always)]
    fn src(&self, word: u32, sh: u32, and: u16, xor: u16) -> u16 {
        let v = ((word >> sh) as u16 & and) ^ xor;
        sel(self.m.ftz_in & mask(v & self.exp == 0), v & 0x8000, v)
    }

    #[inline(always)]
    fn lane_f32(&self, v: u16) -> f32 {
        if self.bf16 {
            f32::from_bits((v as u32) << 16)
        } else {
            f16::from_bits(v).to_f32()
        }
    }

    /// The one rounding of the lane: `half`'s `from_f32`.
    #[inline(always)]
    fn round(&self, prod: f32) -> u16 {
        if self.bf16 {
            bf16::from_f32(prod).to_bits()
        } else {
            f16::from_f32(prod).to_bits()
        }
    }

    /// Everything after the rounding: NaN, .FMZ zero factors, flushed results, .SAT.
    /// Straight-line masks and selects (no branches) so the batch loop vectorises; the
    /// policy's choices arrive as masks in `self.m`.
    #[inline(always)]
    fn finish(&self, a: u16, b: u16, prod: f32, rounded: u16) -> u16 {
        let (exp, m) = (self.exp, &self.m);
        let a_nan = mask(a & 0x7fff > exp);
        let b_nan = mask(b & 0x7fff > exp);
        let sign = (a ^ b) & 0x8000;
        let zero_factor = mask(a & 0x7fff == 0) | mask(b & 0x7fff == 0);
        let propagated = sel(a_nan, a | self.quiet, sel(b_nan, b | self.quiet, 0x7fff));
        let nan = sel(m.canonical, 0x7fff, propagated);
        let min_normal = if self.bf16 { f32::from_bits(0x0080_0000) } else { f32::from_bits(0x3880_0000) };
        let tiny = sel(m.after_rounding, mask(rounded & exp == 0), mask(prod.abs() < min_normal));
        let mut r = sel(m.ftz_out & tiny, sign, rounded);
        // 0 x Inf, or a NaN operand
        r = sel(mask(r & 0x7fff > exp) | a_nan | b_nan, nan, r);
        r = sel(m.fmz & zero_factor, sign & m.fmz_xor_sign, r);
        let r_nan = mask(r & 0x7fff > exp);
        let neg = mask(r & 0x8000 != 0);
        let sat = sel(r_nan, r & !m.sat_nan_zero, sel(neg, 0x8000 & m.sat_keep_neg_zero & mask(r == 0x8000), sel(mask(r > self.one), self.one, r)));
        sel(m.sat, sat, r)
    }

    /// [`Ctx::finish`] when the masks are [`Masks::plain`]: only the NaN rule applies.
    #[inline(always)]
    fn finish_nan(&self, a: u16, b: u16, rounded: u16) -> u16 {
        let (exp, m) = (self.exp, &self.m);
        let a_nan = mask(a & 0x7fff > exp);
        let b_nan = mask(b & 0x7fff > exp);
        let propagated = sel(a_nan, a | self.quiet, sel(b_nan, b | self.quiet, 0x7fff));
        let nan = sel(m.canonical, 0x7fff, propagated);
        sel(mask(rounded & 0x7fff > exp) | a_nan | b_nan, nan, rounded)
    }

    #[inline(always)]
    fn lane(&self, a: u16, b: u16) -> u16 {
        let prod = self.lane_f32(a) * self.lane_f32(b);
        self.finish(a, b, prod, self.round(prod))
    }

    fn eval_one(&self, x: &Inputs) -> u32 {
        if self.o.dst_rz {
            return 0;
        }
        if !self.o.pred(x.pred) {
            return x.d;
        }
        let (aw, bw) = (self.o.a_word(x), self.o.b_word(x));
        let mut out = 0u32;
        for l in 0..2 {
            let a = self.src(aw, self.a_sh[l], self.a_and, self.a_xor);
            let b = self.src(bw, self.b_sh[l], self.b_and, self.b_xor);
            out |= (self.lane(a, b) as u32) << (16 * l);
        }
        out
    }
}

/// The policy of the calls that name no architecture ([`eval`], [`eval_batch`], [`MulRow`],
/// [`add_row`], [`eval_words`]): SM90's, [`Target::DEFAULT`]. Another architecture's vectors
/// are computed with [`eval_with`] / [`eval_batch_with`] and [`Policy::for_target`].
fn default_policy() -> &'static Policy {
    Policy::for_target(Target::DEFAULT)
}

#[cfg(test)]
fn ctx_for(inst: &Inst) -> Result<Ctx, Undefined> {
    Ctx::new(inst, default_policy())
}

/// The destination register's value after `inst` runs on `x`, under SM90's policy (the
/// default target's; [`eval_with`] and [`Policy::for_target`] for another architecture's).
///
/// RZ and URZ read zero whatever `x` says; a destination RZ reads 0 afterwards. A false guard
/// predicate leaves `x.d`. An INVALIDn field is [`Undefined`] (see `invalid-predicated-off`
/// in `semantics.json` for the predicated-off case).
pub fn eval(inst: &Inst, x: &Inputs) -> Result<u32, Undefined> {
    eval_with(default_policy(), inst, x)
}

/// [`eval`] under another policy than the committed one: what each option of an unsettled
/// point would give (`settle` weighs hardware vectors with it).
pub fn eval_with(p: &Policy, inst: &Inst, x: &Inputs) -> Result<u32, Undefined> {
    match operation(inst.op) {
        Some(o) => (o.eval)(p, inst, x).or_else(|u| predicated_off(inst, p, x).ok_or(u)),
        None => predicated_off(inst, p, x).ok_or(Undefined::Instruction(inst.op)),
    }
}

/// An HMUL2 on one input: the lanes of [`Ctx`].
fn eval_mul_inst(p: &Policy, inst: &Inst, x: &Inputs) -> Result<u32, Undefined> {
    Ctx::new(inst, p).map(|c| c.eval_one(x))
}

/// Under the alternative `invalid-predicated-off` policy, the value of a predicated-off
/// INVALIDn instruction.
/// The predicate file P0..P6 (bit i = Pi) after `inst` on `x`: what it writes where it
/// writes predicates ([`Operation::preds`]), the file as it was everywhere else (an
/// instruction of the four writes none: a word that changes one is a mismatch like a wrong
/// register). `Err` where the instruction's predicates are undefined.
pub fn preds_after(inst: &Inst, x: &Inputs) -> Result<u8, Undefined> {
    preds_after_with(Policy::current(), inst, x)
}

/// [`preds_after`] under another policy than the committed one, as [`eval_with`] is [`eval`]'s.
pub fn preds_after_with(p: &Policy, inst: &Inst, x: &Inputs) -> Result<u8, Undefined> {
    let before = x.pred & 0x7f;
    match operation(inst.op) {
        Some(Operation { preds: None, .. }) => Ok(before),
        // guarded off, it writes nothing: the file stays as it was
        Some(Operation { preds: Some(f), .. }) => f(p, inst, x).or_else(|u| predicated_off(inst, p, x).map(|_| before).ok_or(u)),
        None => predicated_off(inst, p, x).map(|_| before).ok_or(Undefined::Instruction(inst.op)),
    }
}

fn predicated_off(inst: &Inst, p: &Policy, x: &Inputs) -> Option<u32> {
    if p.invalid_even_if_off {
        return None;
    }
    let v = inst.pred.index >= PT || (x.pred >> inst.pred.index) & 1 == 1;
    if v != inst.pred.negated {
        None
    } else if inst.dst == RZ {
        Some(0)
    } else {
        Some(x.d)
    }
}

/// Inputs per inner block of [`eval_batch`]: small enough for L1, long enough to vectorise.
const BLOCK: usize = 1024;

/// [`eval`] for many inputs: `out[i]` is the result for `xs[i]`.
///
/// Works in blocks of lanes so each step (select, convert, multiply, round, fix up) is a
/// straight loop over arrays the compiler vectorises; `half`'s slice conversion uses F16C
/// where the CPU has it. BF16 rounds with its own branch-free code (`bf16_rne`,
/// `bf16_mul_rne`) rather than `half`'s: the exhaustive test against rustc_apfloat proves
/// them equal. Plain BF16 instructions on AVX-512 CPUs skip the blocks for `bf16x32`, one
/// integer pass from inputs to results. Panics if `out` is shorter than `xs` (a caller's
/// bug, not input).
pub fn eval_batch(inst: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), Undefined> {
    eval_batch_with(default_policy(), inst, xs, out)
}

/// [`eval_batch`] under another policy than the committed one, as [`eval_with`] is
/// [`eval`]'s: the batch paths that only another policy takes (a propagated NaN, say) are
/// held equal to [`eval_with`] under every policy the table allows.
pub fn eval_batch_with(p: &Policy, inst: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), Undefined> {
    assert!(out.len() >= xs.len(), "eval_batch: out holds {} results for {} inputs", out.len(), xs.len());
    let done = match operation(inst.op) {
        Some(o) => (o.batch)(p, inst, xs, out),
        None => Err(Undefined::Instruction(inst.op)),
    };
    match done {
        Err(u) => xs.iter().zip(out.iter_mut()).try_for_each(|(x, o)| predicated_off(inst, p, x).ok_or(u).map(|v| *o = v)),
        ok => ok,
    }
}

/// [`eval_mul_inst`] for many inputs: the batch path the CPU allows.
fn eval_mul_batch_inst(p: &Policy, inst: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), Undefined> {
    let c = Ctx::new(inst, p)?;
    match batch_path(&c) {
        // SAFETY (each arm): the CPU has what batch_path checked for it; c is as it says
        // (plain BF16, plain FP16); out is at least as long as xs (asserted above)
        #[cfg(target_arch = "x86_64")]
        BatchPath::Bf16x32 => unsafe { bf16x32::eval(&c, xs, out) },
        #[cfg(target_arch = "x86_64")]
        BatchPath::F16x32 => unsafe { bf16x32::eval_f16(&c, xs, out) },
        #[cfg(target_arch = "x86_64")]
        BatchPath::Ph => unsafe { blocks_ph(&c, xs, out) },
        #[cfg(target_arch = "x86_64")]
        BatchPath::Avx512 => unsafe { blocks_avx512(&c, xs, out) },
        #[cfg(target_arch = "x86_64")]
        BatchPath::Avx2 => unsafe { blocks_avx2(&c, xs, out) },
        _ => blocks_for::<false, false, false>(&c, xs, out),
    }
    Ok(())
}

/// The kernel [`eval_batch`] takes for an HMUL2 context on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BatchPath {
    /// Plain BF16 with AVX-512 F, BW and CD: `bf16x32`'s integer products, 16 inputs a
    /// step from the records.
    Bf16x32,
    /// Plain FP16 with AVX-512 FP16: `bf16x32`'s steps with `VMULPH`.
    F16x32,
    /// FP16 with AVX-512 FP16: [`blocks_ph`].
    Ph,
    Avx512,
    Avx2,
    Portable,
}

fn batch_path(c: &Ctx) -> BatchPath {
    #[cfg(target_arch = "x86_64")]
    {
        let has = |f: &[bool]| f.iter().all(|&b| b);
        use std::arch::is_x86_feature_detected as cpu;
        if c.bf16 && c.m.plain() && has(&[cpu!("avx512f"), cpu!("avx512bw"), cpu!("avx512cd")]) {
            return BatchPath::Bf16x32;
        }
        if !c.bf16 && ph::available() {
            return if c.m.plain() { BatchPath::F16x32 } else { BatchPath::Ph };
        }
        if has(&[cpu!("avx512bw"), cpu!("avx512vl")]) {
            return BatchPath::Avx512;
        }
        if has(&[cpu!("avx2"), cpu!("f16c")]) {
            return BatchPath::Avx2;
        }
    }
    BatchPath::Portable
}

/// HMUL2 on symmetric operands, one lane computed for both: where operand 1 and every
/// operand 2 hold the same value in both halves (exhaustive mode's a = x·0x10001,
/// b = y·0x10001), every half select reads that value and both lanes compute the same
/// product, so the destination is one lane times 0x10001. Built only when operand 2 is
/// symmetric too (a register, RZ, or immediates with equal halves); the guard is taken as
/// true (the caller handles a false one). The lanes are [`eval_batch`]'s own (`lanes`).
#[derive(Clone, Copy, Debug)]
pub struct MulRow {
    c: Ctx,
}

impl MulRow {
    /// `Ok(None)`: operand 2 is immediates with unequal halves (the lanes differ). Under
    /// SM90's policy; [`MulRow::new_with`] another's.
    pub fn new(inst: &Inst) -> Result<Option<MulRow>, Undefined> {
        MulRow::new_with(default_policy(), inst)
    }

    /// [`MulRow::new`] under policy `p` (an architecture's, [`Policy::for_target`]).
    pub fn new_with(p: &Policy, inst: &Inst) -> Result<Option<MulRow>, Undefined> {
        let c = Ctx::new(inst, p)?;
        let f = c.o.b_fixed;
        Ok((f >> 16 == f & 0xffff).then_some(MulRow { c }))
    }

    /// Lanes per inner block.
    pub const BLOCK: usize = BLOCK;

    /// The destination word of a lane value: `lane`·0x10001, or 0 for an RZ destination.
    #[inline(always)]
    pub fn word(&self, lane: u16) -> u32 {
        (lane as u32 * 0x1_0001) & self.word_keep()
    }
}

/// A row of symmetric operands, one lane computed for both ([`MulRow`] and
/// [`add::AddRow`]): operand 1 fixed at `a`·0x10001, operand 2 running over `b[i]`·0x10001
/// (an immediate or RZ operand 2 ignores `b`), the guard true. [`Row::eval`] dispatches to
/// the row's blocks compiled for AVX-512 FP16 (FP16 arithmetic in hardware, [`ph`]) or for
/// AVX2 and F16C where the CPU has them.
pub trait Row {
    /// What the destination word keeps of `lane`·0x10001: all of it, or nothing for an RZ
    /// destination.
    fn word_keep(&self) -> u32;

    /// [`Row::eval`]'s work; `X8` true only when called from code compiled with AVX2 and
    /// F16C, `PH` only from code compiled with AVX-512 FP16 as well, after the CPU check
    /// (the kernels they select need them).
    #[doc(hidden)]
    fn blocks<const X8: bool, const PH: bool>(&self, a: u16, b: &[u16], out: &mut [u16]);

    /// `out[i]` = the lane of the destination after the instruction for operand-2 lane
    /// `b[i]`. Panics if `out` is shorter than `b`.
    fn eval(&self, a: u16, b: &[u16], out: &mut [u16]) {
        #[cfg(target_arch = "x86_64")]
        if ph::available() {
            assert!(out.len() >= b.len(), "Row::eval: {} results for {} inputs", out.len(), b.len());
            // SAFETY: the CPU has what ph::available checks, just above
            unsafe { row_ph(self, a, b, out) };
            return;
        }
        self.eval_without_ph(a, b, out)
    }

    /// [`Row::eval`] without AVX-512 FP16's arithmetic, whatever the CPU (the tests hold the
    /// two equal).
    #[doc(hidden)]
    fn eval_without_ph(&self, a: u16, b: &[u16], out: &mut [u16]) {
        assert!(out.len() >= b.len(), "Row::eval: {} results for {} inputs", out.len(), b.len());
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX2 and F16C, checked just above
            unsafe { row_avx2(self, a, b, out) };
            return;
        }
        self.blocks::<false, false>(a, b, out)
    }
}

/// [`Row::blocks`] compiled for AVX2 and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn row_avx2<R: Row + ?Sized>(r: &R, a: u16, b: &[u16], out: &mut [u16]) {
    r.blocks::<true, false>(a, b, out)
}

/// [`Row::blocks`] compiled for AVX-512 FP16 (with AVX2 and F16C for the paths it leaves
/// to them).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512fp16,avx512bw,avx512vl,avx512cd,avx512f,avx2,f16c")]
unsafe fn row_ph<R: Row + ?Sized>(r: &R, a: u16, b: &[u16], out: &mut [u16]) {
    r.blocks::<true, true>(a, b, out)
}

impl Row for MulRow {
    fn word_keep(&self) -> u32 {
        if self.c.o.dst_rz {
            0
        } else {
            u32::MAX
        }
    }

    /// `X8`: FP16 with [`f16_mul_x8`]; `PH`: plain FP16 lanes with [`ph::mul`].
    #[inline(always)]
    fn blocks<const X8: bool, const PH: bool>(&self, a: u16, b: &[u16], out: &mut [u16]) {
        let c = &self.c;
        let mut la = [0u16; BLOCK];
        let mut lb = [0u16; BLOCK];
        let mut fa = [0f32; BLOCK];
        let mut fb = [0f32; BLOCK];
        // the operand words as the reference reads them (RZ, immediates), lane 0's half
        let av = c.src(c.o.a_word(&Inputs { a: a as u32 * 0x10001, ..Default::default() }), 0, c.a_and, c.a_xor);
        let (b_keep, b_fixed) = (c.o.b_keep as u16, c.o.b_fixed as u16);
        #[cfg(target_arch = "x86_64")]
        if PH && c.m.plain() {
            // one pass from operand 2 to the lanes (no input flushing in plain lanes): FP16
            // by VMULPH, BF16 by integer products (f32 products meet microcode assists on
            // BF16's subnormals)
            let src = bf16x32::RowSrc { keep: b_keep, fixed: b_fixed, and: c.b_and, xor: c.b_xor };
            // SAFETY: PH is true only in row_ph, called after ph::available(); plain lanes
            unsafe { bf16x32::row_for(false, c.bf16, c.m.canonical != 0, c.quiet, av, src, b, out) };
            return;
        }
        for (b, r) in b.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let n = b.len();
            let (la, lb, fa, fb) = (&mut la[..n], &mut lb[..n], &mut fa[..n], &mut fb[..n]);
            for (l, &v) in lb.iter_mut().zip(b) {
                *l = c.src(((v & b_keep) | b_fixed) as u32, 0, c.b_and, c.b_xor);
            }
            la.fill(av);
            if c.m.plain() {
                lanes::<false, X8, false, false>(c, la, lb, fa, fb, &mut r[..n]);
            } else {
                lanes::<false, X8, true, false>(c, la, lb, fa, fb, &mut r[..n]);
            }
        }
    }
}

/// HADD2 on symmetric operands, one lane for both ([`add::AddRow`], [`MulRow`]'s for
/// sums): `Ok(Some)` for an HADD2 whose operand 2 is a register (not RZ), but not `.F32`;
/// the guard is taken as true (the caller handles a false one).
pub fn add_row(inst: &Inst) -> Result<Option<add::AddRow>, Undefined> {
    add_row_with(default_policy(), inst)
}

/// [`add_row`] under policy `p` (an architecture's, [`Policy::for_target`]).
pub fn add_row_with(p: &Policy, inst: &Inst) -> Result<Option<add::AddRow>, Undefined> {
    let o = Operands::of(inst, p);
    if family_of(inst.op) != Some(Family::Add) || o.b_keep != u32::MAX || o.b_fixed != 0 {
        return Ok(None);
    }
    add::AddRow::new(&add::add_op(inst), p, o.a_keep, if o.dst_rz { 0 } else { u32::MAX })
}

/// The destination after `inst` with the guard true, operand-1 register value `a`, operand-2
/// register values `b[i]` and operand-3 value `c` (a register, UR or constant-bank word; RZ
/// and immediates as the instruction says): [`eval`] without `Inputs` records, through the
/// word-level batch kernels of HADD2 ([`add::eval_add_batch`]) and HFMA2 ([`fma::Fma::batch`]).
/// `scratch` holds the repeated operand words. HMUL2 is [`MulRow`]'s; it gives
/// [`Undefined::Instruction`] here. Panics if `out` is shorter than `b`.
pub fn eval_words(inst: &Inst, a: u32, b: &[u32], c: u32, out: &mut [u32], scratch: &mut Vec<u32>) -> Result<(), Undefined> {
    eval_words_with(default_policy(), inst, a, b, c, out, scratch)
}

/// [`eval_words`] under policy `p` (an architecture's, [`Policy::for_target`]).
pub fn eval_words_with(p: &Policy, inst: &Inst, a: u32, b: &[u32], c: u32, out: &mut [u32], scratch: &mut Vec<u32>) -> Result<(), Undefined> {
    assert!(out.len() >= b.len(), "eval_words: {} results for {} inputs", out.len(), b.len());
    let o = Operands::of(inst, p);
    let n = b.len();
    let x = Inputs { a, b: 0, d: 0, pred: PRED_TRUE, c };
    let out = &mut out[..n];
    match operation(inst.op).and_then(|op| op.words) {
        Some(words) => words(p, inst, &o, &x, b, out, scratch)?,
        None => return Err(Undefined::Instruction(inst.op)),
    }
    if o.dst_rz {
        out.fill(0);
    }
    Ok(())
}

/// [`eval_words`] of an HADD2: two inputs to a word where both halves hold one value.
fn words_add(p: &Policy, inst: &Inst, o: &Operands, x: &Inputs, b: &[u32], out: &mut [u32], scratch: &mut Vec<u32>) -> Result<(), Undefined> {
    let n = b.len();
    // a fixed operand 2 (immediates, RZ) is read as the reference reads it
    let bw = |v: u32| (v & o.b_keep) | o.b_fixed;
    let op = add::add_op(inst);
    let aw = o.a_word(x);
    // (a fold, not `all`: no early exit, so it vectorises)
    let sym = |v: u32| v >> 16 == v & 0xffff;
    // operand words that hold one value in both halves (exhaustive mode's) make both
    // lanes compute the same (but .F32's one FP32 value), so two inputs share a word:
    // lane l reads half l of operand 2 (its select is .H1_H0), one lane per input
    if !op.f32_out
        && shifts(op.b_mods.swizzle) == [0, 16]
        && o.b_keep == u32::MAX
        && o.b_fixed == 0
        && n.is_multiple_of(2)
        && sym(aw)
        && b.iter().fold(true, |s, &v| s & sym(v))
    {
        let m = n / 2;
        scratch.clear();
        scratch.resize(m, aw);
        scratch.extend(b.chunks_exact(2).map(|p| (p[0] & 0xffff) | (p[1] << 16)));
        let (aws, bs) = scratch.split_at(m);
        add::eval_add_batch(&op, p, aws, bs, &mut out[..m])?;
        // spread from the end: word i lands at 2i and 2i + 1, never below i
        for i in (0..m).rev() {
            let w = out[i];
            out[2 * i + 1] = (w >> 16) * 0x10001;
            out[2 * i] = (w & 0xffff) * 0x10001;
        }
        return Ok(());
    }
    scratch.clear();
    scratch.resize(n, o.a_word(x));
    scratch.extend(b.iter().map(|&v| bw(v)));
    let (aw, bs) = scratch.split_at(n);
    add::eval_add_batch(&op, p, aw, bs, out)?;
    Ok(())
}

/// [`eval_words`] of an HFMA2 or HFMA2.MMA: [`fma::Fma`]'s row and batch kernels.
fn words_fma(p: &Policy, inst: &Inst, o: &Operands, x: &Inputs, b: &[u32], out: &mut [u32], scratch: &mut Vec<u32>) -> Result<(), Undefined> {
    let n = b.len();
    let bw = |v: u32| (v & o.b_keep) | o.b_fixed;
    let f = fma::Fma::new(&fma::fma_op(inst)?, p)?;
    if o.b_keep == u32::MAX && o.b_fixed == 0 {
        // operand 2 a register: its words as they are, operands 1 and 3 read in place
        f.batch_row(o.a_word(x), b, o.c_word(x), out, scratch);
    } else {
        // operand 2 fixed (immediates, RZ): every operand as the reference reads it
        scratch.clear();
        scratch.resize(n, o.a_word(x));
        scratch.resize(2 * n, o.c_word(x));
        scratch.extend(b.iter().map(|&v| bw(v)));
        let (ac, bs) = scratch.split_at(2 * n);
        let (aw, cw) = ac.split_at(n);
        f.batch(aw, bs, cw, out);
    }
    Ok(())
}

/// Guard bits with P0..P6 true (exhaustive mode's predicates).
const PRED_TRUE: u8 = 0x7f;

/// [`blocks`] compiled for AVX-512 FP16: plain FP16 lanes multiplied in hardware
/// ([`ph::mul`], 32 a vector), the rest as [`blocks_avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512fp16,avx512f,avx512bw,avx512vl,avx2,f16c")]
unsafe fn blocks_ph(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    blocks_for::<true, false, true>(c, xs, out)
}

/// [`blocks`] with `FULL` as the masks need it (false where they are [`Masks::plain`]).
#[inline(always)]
fn blocks_for<const AVX512: bool, const X8: bool, const PH: bool>(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    if c.m.plain() {
        blocks::<AVX512, X8, false, PH>(c, xs, out)
    } else {
        blocks::<AVX512, X8, true, PH>(c, xs, out)
    }
}

/// [`blocks`] compiled for AVX-512 (16 f32 or 32 u16 a vector).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
unsafe fn blocks_avx512(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    blocks_for::<true, false, false>(c, xs, out)
}

/// FP16 lanes `a[k] * b[k]`, 16 at a time: F16C-form widening (exact, as `half`'s `to_f32`),
/// multiply, and VCVTPS2PH round to nearest (what `half`'s `from_f32` itself uses on F16C
/// CPUs); `half` for the tail. The f32 products go to `prod` only when `KEEP` (tininess
/// before rounding needs them). The exhaustive test against rustc_apfloat covers this path.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
unsafe fn f16_mul_x16<const KEEP: bool>(a: &[u16], b: &[u16], prod: &mut [f32], r: &mut [u16]) {
    use std::arch::x86_64::*;
    let len = a.len().min(b.len()).min(prod.len()).min(r.len());
    let n = len / 16 * 16;
    for k in (0..n).step_by(16) {
        // SAFETY: k + 16 <= n <= len of every slice
        let va = _mm512_cvtph_ps(_mm256_loadu_si256(a.as_ptr().add(k) as *const __m256i));
        let vb = _mm512_cvtph_ps(_mm256_loadu_si256(b.as_ptr().add(k) as *const __m256i));
        let p = _mm512_mul_ps(va, vb);
        if KEEP {
            _mm512_storeu_ps(prod.as_mut_ptr().add(k), p);
        }
        _mm256_storeu_si256(r.as_mut_ptr().add(k) as *mut __m256i, _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(p));
    }
    for k in n..len {
        let p = f16::from_bits(a[k]).to_f32() * f16::from_bits(b[k]).to_f32();
        prod[k] = p;
        r[k] = f16::from_f32(p).to_bits();
    }
}

/// [`f16_mul_x16`] 8 at a time with AVX2 and F16C (VCVTPH2PS, VCVTPS2PH round to nearest:
/// what `half`'s slice conversions use on F16C CPUs), for CPUs without AVX-512.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_mul_x8<const KEEP: bool>(a: &[u16], b: &[u16], prod: &mut [f32], r: &mut [u16]) {
    use std::arch::x86_64::*;
    let len = a.len().min(b.len()).min(prod.len()).min(r.len());
    let n = len / 8 * 8;
    for k in (0..n).step_by(8) {
        // SAFETY: k + 8 <= n <= len of every slice
        let va = _mm256_cvtph_ps(_mm_loadu_si128(a.as_ptr().add(k) as *const __m128i));
        let vb = _mm256_cvtph_ps(_mm_loadu_si128(b.as_ptr().add(k) as *const __m128i));
        let p = _mm256_mul_ps(va, vb);
        if KEEP {
            _mm256_storeu_ps(prod.as_mut_ptr().add(k), p);
        }
        _mm_storeu_si128(r.as_mut_ptr().add(k) as *mut __m128i, _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(p));
    }
    for k in n..len {
        let p = f16::from_bits(a[k]).to_f32() * f16::from_bits(b[k]).to_f32();
        prod[k] = p;
        r[k] = f16::from_f32(p).to_bits();
    }
}

/// [`blocks`] compiled for AVX2, twice as wide as the x86-64 baseline, with FP16 lanes
/// converted, multiplied and rounded 8 at a time in one pass ([`f16_mul_x8`], F16C) where
/// the baseline makes a pass per conversion.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn blocks_avx2(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    if c.m.plain() {
        let done = match (!c.bf16 && c.m.ftz_in == 0 && !c.o.dst_rz && c.o.pred_shift == PT as u32 && c.o.pred_flip == 0, c.m.canonical != 0) {
            (false, _) => 0,
            (true, true) => f16_words_x8::<true>(c, xs, out),
            (true, false) => f16_words_x8::<false>(c, xs, out),
        };
        if done < xs.len() {
            // the blocks' arrays are 40 KB to clear: not for nothing
            blocks::<false, true, false, false>(c, &xs[done..], &mut out[done..])
        }
    } else {
        blocks::<false, true, true, false>(c, xs, out)
    }
}

/// [`blocks`] for the commonest instructions, 8 inputs at a time in registers: FP16 lanes,
/// no input flush, no flush, .FMZ or .SAT after rounding, a guard that is always true and
/// a destination that is not RZ. Each input's two source words come in as one 64-bit load
/// (`a` and `b` are neighbours in [`Inputs`]); one byte shuffle per four inputs makes the
/// half selects of both operands and parts the `a` words from the `b` words; the modifiers
/// act on whole words; F16C converts, multiplies and rounds 8 lanes at a time; the NaN rule
/// ([`Ctx::finish_nan`]) runs on 16 lanes at once, and the results go straight to `out`.
/// Returns how many inputs it did (all but the last `xs.len() % 8`, which [`blocks`] does).
/// `CANONICAL`: the policy's NaN result is 0x7fff (a NaN operand makes the f32 product a
/// NaN, so a NaN result is all that needs testing). Held equal to [`eval`] by the batch
/// tests and, on all 2^32 FP16 pairs, to rustc_apfloat.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_words_x8<const CANONICAL: bool>(c: &Ctx, xs: &[Inputs], out: &mut [u32]) -> usize {
    use std::arch::x86_64::*;
    let n = xs.len().min(out.len()) / 8 * 8;
    // the byte shuffle, alike in both 128-bit halves: the words [a, b, a', b'] of two inputs
    // become [A, A', B, B'], each with lane 0 from bit sh[0] of its word and lane 1 from
    // bit sh[1] ([`Ctx::src`]'s shifts)
    let mut ctl = [0u8; 16];
    for (slot, (word, sh)) in [(0u8, c.a_sh), (2, c.a_sh), (1, c.b_sh), (3, c.b_sh)].into_iter().enumerate() {
        for (l, sh) in sh.into_iter().enumerate() {
            let byte = word * 4 + (sh / 8) as u8;
            ctl[4 * slot + 2 * l..][..2].copy_from_slice(&[byte, byte + 1]);
        }
    }
    let ctl = _mm256_broadcastsi128_si256(_mm_loadu_si128(ctl.as_ptr() as *const __m128i));
    // the modifiers as (w & and) ^ xor on both halves; an operand that is not read (RZ,
    // URZ, immediates) is its fixed word's lanes, all in xor
    let word = |v: u16| v as u32 * 0x1_0001;
    let fixed = |keep: u32, fixed: u32, sh: [u32; 2], and: u16, xor: u16| {
        let lanes = (((fixed >> sh[0]) & 0xffff | (fixed >> sh[1]) << 16) & word(and)) ^ word(xor);
        if keep == 0 {
            (_mm256_setzero_si256(), _mm256_set1_epi32(lanes as i32))
        } else {
            (_mm256_set1_epi32(word(and) as i32), _mm256_set1_epi32(word(xor) as i32))
        }
    };
    let (and_a, xor_a) = fixed(c.o.a_keep, 0, c.a_sh, c.a_and, c.a_xor);
    let (and_b, xor_b) = fixed(c.o.b_keep, c.o.b_fixed, c.b_sh, c.b_and, c.b_xor);
    let (magnitude, exp, quiet) = (_mm256_set1_epi16(0x7fff), _mm256_set1_epi16(c.exp as i16), _mm256_set1_epi16(c.quiet as i16));
    for k in (0..n).step_by(8) {
        let pair = |i: usize| {
            // SAFETY: k + 8 <= n <= xs.len()
            let x = xs.get_unchecked(k + i);
            (x.a as u64 | (x.b as u64) << 32) as i64
        };
        // [A0 A1 B0 B1 | A2 A3 B2 B3] and [A4 A5 B4 B5 | A6 A7 B6 B7]
        let q0 = _mm256_shuffle_epi8(_mm256_setr_epi64x(pair(0), pair(1), pair(2), pair(3)), ctl);
        let q1 = _mm256_shuffle_epi8(_mm256_setr_epi64x(pair(4), pair(5), pair(6), pair(7)), ctl);
        // inputs in the order 0 1 4 5 2 3 6 7, put right by the store
        let la = _mm256_xor_si256(_mm256_and_si256(_mm256_unpacklo_epi64(q0, q1), and_a), xor_a);
        let lb = _mm256_xor_si256(_mm256_and_si256(_mm256_unpackhi_epi64(q0, q1), and_b), xor_b);
        let prod = |a: __m128i, b: __m128i| _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_mul_ps(_mm256_cvtph_ps(a), _mm256_cvtph_ps(b)));
        let lo = prod(_mm256_castsi256_si128(la), _mm256_castsi256_si128(lb));
        let hi = prod(_mm256_extracti128_si256::<1>(la), _mm256_extracti128_si256::<1>(lb));
        let r = _mm256_set_m128i(hi, lo);
        // the NaN rule on 16 lanes: magnitudes are below 0x8000, so signed compares do
        let is_nan = |v: __m256i| _mm256_cmpgt_epi16(_mm256_and_si256(v, magnitude), exp);
        let v = if CANONICAL {
            _mm256_blendv_epi8(r, magnitude, is_nan(r))
        } else {
            let (a_nan, b_nan) = (is_nan(la), is_nan(lb));
            let propagated = _mm256_blendv_epi8(_mm256_blendv_epi8(magnitude, _mm256_or_si256(lb, quiet), b_nan), _mm256_or_si256(la, quiet), a_nan);
            _mm256_blendv_epi8(r, propagated, _mm256_or_si256(_mm256_or_si256(a_nan, b_nan), is_nan(r)))
        };
        // SAFETY: k + 8 <= n <= out.len()
        _mm256_storeu_si256(out.as_mut_ptr().add(k) as *mut __m256i, _mm256_permute4x64_epi64::<0b11_01_10_00>(v));
    }
    n
}

/// f32 -> BF16 round to nearest even: bit for bit `half`'s `bf16::from_f32` (a NaN keeps
/// its high half, quieted), but branch-free so the block loop vectorises; `half`'s version
/// branches per value and was the BF16 bottleneck.
#[inline(always)]
fn bf16_rne(x: f32) -> u16 {
    let b = x.to_bits();
    let rounded = (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16;
    sel(mask(b & 0x7fff_ffff > 0x7f80_0000), (b >> 16) as u16 | 0x0040, rounded)
}

/// The BF16 product `a * b` rounded to nearest even in u32 integer steps only: f32
/// products and operands below 2^-126 take microcode assists on x86 (about a quarter of
/// all BF16 pairs), and u32 lanes run 16 to an AVX-512 vector where f64 runs 8. The 8-bit
/// significands multiply exactly; the product's top bit comes from its (exact, normal)
/// f32 conversion, which vectorises where a leading-zero count may not. Equal to `bf16_rne`
/// of the f32 product on every BF16 pair (a NaN result may differ in payload; the NaN rule
/// replaces it): the exhaustive test proves it where AVX-512 is absent, and
/// `bf16_paths_agree_on_every_pair` against `bf16x32` where it is present.
#[inline(always)]
fn bf16_mul_rne(a: u16, b: u16) -> u16 {
    let (a, b) = (a as u32, b as u32);
    let (ma, mb) = (a & 0x7fff, b & 0x7fff);
    let (ea, eb) = (ma >> 7, mb >> 7);
    // a subnormal has no hidden bit and the exponent of the smallest normal
    let sa = (a & 0x7f) | if ea != 0 { 0x80 } else { 0 };
    let sb = (b & 0x7f) | if eb != 0 { 0x80 } else { 0 };
    let p = sa * sb;
    // p < 2^16: exact in f32; its biased exponent is 127 + the top bit's index
    let fp = (p as i32 as f32).to_bits();
    let m24 = (fp & 0x7f_ffff) | 0x80_0000;
    // biased BF16 exponent of the product: top + ea + eb - 127 - 14
    let e = (fp >> 23) as i32 + ea.max(1) as i32 + eb.max(1) as i32 - 268;
    // normal: exponent over the 23 fraction bits, round at bit 16; overflow clamps to Inf
    let w = ((e as u32) << 23).wrapping_add(m24 & 0x7f_ffff);
    let normal = (w.wrapping_add(0x7fff + ((w >> 16) & 1)) >> 16).min(0x7f80);
    // subnormal: shift right by 17 - e with round to nearest even (sticky in the add)
    let sh = (17 - e).clamp(17, 31) as u32;
    let sub = (m24 + (1 << (sh - 1)) - 1 + ((m24 >> sh) & 1)) >> sh;
    let r = if e >= 1 { normal } else { sub };
    let inf = ea == 0xff || eb == 0xff;
    let nan = ma > 0x7f80 || mb > 0x7f80 || (inf && (ma == 0 || mb == 0));
    let r = if inf { 0x7f80 } else { r };
    let r = if nan { 0x7fc0 } else { r };
    (r | (a ^ b) & 0x8000) as u16
}

/// The body of [`eval_batch`] once the instruction is known to be defined.
/// `AVX512`: convert FP16 with 16-wide AVX-512 instructions (only called from
/// [`blocks_avx512`], after the CPU check). `X8`: FP16 lanes with [`f16_mul_x8`] (only from
/// [`blocks_avx2`], after the CPU check; BF16 lanes keep `bf16_mul_rne`). `FULL`: some
/// flush, .FMZ or .SAT step is on; without them the fix-up after rounding is the NaN rule alone.
///
/// The lanes stay where the words hold them: each source word is copied out of its
/// `Inputs` once, its half selects and modifiers applied to whole words, and the words then
/// read as 16-bit lanes, lane `l` of input `i` at `2i + l` ([`as_lanes`]). Every step after
/// the copy is a unit-stride loop over one array, and the results are the output words as
/// they stand, with no split into lanes and no join back.
#[inline(always)]
fn blocks<const AVX512: bool, const X8: bool, const FULL: bool, const PH: bool>(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    let mut wa = [0u32; BLOCK];
    let mut wb = [0u32; BLOCK];
    let mut fa = [0f32; 2 * BLOCK];
    let mut fb = [0f32; 2 * BLOCK];
    let mut r = [0u32; BLOCK];
    let dst_keep = if c.o.dst_rz { 0 } else { u32::MAX };
    let always = c.o.pred_shift == PT as u32 && c.o.pred_flip == 0;
    let mut ab = [0u64; BLOCK];
    // a word's lanes after the selects: lane 0 from bit sh[0], lane 1 from bit sh[1] (each
    // 0 or 16), then the modifiers on both halves at once
    let select = |w: u32, sh: [u32; 2], and: u16, xor: u16| (((w >> sh[0]) & 0xffff | (w >> sh[1]) << 16) & (and as u32 * 0x1_0001)) ^ (xor as u32 * 0x1_0001);
    for (xs, out) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
        let n = xs.len();
        let (ab, wa, wb, r) = (&mut ab[..n], &mut wa[..n], &mut wb[..n], &mut r[..n]);
        // the two source words of each input as one u64: a plain copy, where gathering
        // each into its own array made the compiler assemble vectors a word at a time
        for (x, p) in xs.iter().zip(ab.iter_mut()) {
            *p = x.a as u64 | (x.b as u64) << 32;
        }
        for ((&p, a), b) in ab.iter().zip(wa.iter_mut()).zip(wb.iter_mut()) {
            let x = Inputs { a: p as u32, b: (p >> 32) as u32, ..Inputs::default() };
            *a = select(c.o.a_word(&x), c.a_sh, c.a_and, c.a_xor);
            *b = select(c.o.b_word(&x), c.b_sh, c.b_and, c.b_xor);
        }
        let (la, lb, rl) = (as_lanes(wa), as_lanes(wb), as_lanes(r));
        if c.m.ftz_in != 0 {
            for v in la.iter_mut().chain(lb.iter_mut()) {
                *v = sel(mask(*v & c.exp == 0), *v & 0x8000, *v);
            }
        }
        let (fa, fb) = (&mut fa[..2 * n], &mut fb[..2 * n]);
        if X8 && !c.bf16 {
            lanes::<AVX512, true, FULL, PH>(c, la, lb, fa, fb, rl);
        } else {
            lanes::<AVX512, false, FULL, PH>(c, la, lb, fa, fb, rl);
        }
        if always {
            // no need to read x.d and x.pred: a strided gather otherwise
            for (o, &v) in out[..n].iter_mut().zip(r.iter()) {
                *o = v & dst_keep;
            }
        } else {
            for ((x, o), &v) in xs.iter().zip(out.iter_mut()).zip(r.iter()) {
                let v = if c.o.pred(x.pred) { v } else { x.d };
                *o = v & dst_keep;
            }
        }
    }
}

/// Words as their 16-bit halves in memory order: the halves of `w[i]` at `2i` and `2i + 1`.
/// Which of the two is lane 0 depends on the byte order, but [`blocks`] reads its sources
/// and writes its results through this same view and treats every lane alike, so the words
/// it hands back are right on either.
#[inline(always)]
fn as_lanes(w: &mut [u32]) -> &mut [u16] {
    // SAFETY: a u32 is two u16s with no padding and at least u16's alignment; the new slice
    // covers exactly w's bytes and borrows w mutably for its whole life
    unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut u16, 2 * w.len()) }
}

/// The lanes of [`blocks`] after select and modifiers: `r[k]` = lane `la[k] x lb[k]`
/// converted, multiplied, rounded once and fixed up ([`Ctx::finish`] / [`Ctx::finish_nan`]);
/// `fa` and `fb` are scratch as long as `la`. `AVX512` and `FULL` as in [`blocks`]; `X8`:
/// FP16 with 8-wide F16C instructions (only from [`MulRow`]'s and [`blocks_avx2`]'s AVX2
/// paths, after the CPU check).
#[inline(always)]
fn lanes<const AVX512: bool, const X8: bool, const FULL: bool, const PH: bool>(c: &Ctx, la: &[u16], lb: &[u16], fa: &mut [f32], fb: &mut [f32], r: &mut [u16]) {
    let n = la.len();
    let (lb, fa, fb, r) = (&lb[..n], &mut fa[..n], &mut fb[..n], &mut r[..n]);
    // convert, multiply and round in one pass; the products land in fa
    if c.bf16 && FULL {
        for k in 0..la.len() {
            let p = f32::from_bits((la[k] as u32) << 16) * f32::from_bits((lb[k] as u32) << 16);
            fa[k] = p;
            r[k] = bf16_rne(p);
        }
    } else if c.bf16 && X8 {
        // `eval`'s own lane (the f32 product, rounded once): in MulRow's rows operand 1 is
        // fixed, and this measured faster there than `bf16_mul_rne`
        for k in 0..la.len() {
            r[k] = bf16_rne(f32::from_bits((la[k] as u32) << 16) * f32::from_bits((lb[k] as u32) << 16));
        }
    } else if c.bf16 {
        for k in 0..la.len() {
            r[k] = bf16_mul_rne(la[k], lb[k]);
        }
    } else {
        #[cfg(target_arch = "x86_64")]
        if PH && !FULL {
            // SAFETY: PH is true only in blocks_ph, called after ph::available()
            unsafe { ph::mul(la, lb, r) };
        } else if AVX512 {
            // SAFETY: AVX512 is true only in blocks_avx512 and blocks_ph, called after the
            // CPU check
            unsafe { f16_mul_x16::<FULL>(la, lb, fa, r) };
        } else if X8 {
            // SAFETY: X8 is true only in row_avx2 and blocks_avx2, called after the CPU check
            unsafe { f16_mul_x8::<FULL>(la, lb, fa, r) };
        } else {
            f16_mul_slices(la, lb, fa, fb, r);
        }
        #[cfg(not(target_arch = "x86_64"))]
        f16_mul_slices(la, lb, fa, fb, r);
    }
    let prod = &*fa;
    if FULL {
        for k in 0..la.len() {
            r[k] = c.finish(la[k], lb[k], prod[k], r[k]);
        }
    } else {
        for k in 0..la.len() {
            r[k] = c.finish_nan(la[k], lb[k], r[k]);
        }
    }
}

/// FP16 lanes `a[k] * b[k]` with `half`'s slice conversions (F16C where the CPU has it):
/// products in `fa`, rounded lanes in `r`.
#[inline(always)]
fn f16_mul_slices(la: &[u16], lb: &[u16], fa: &mut [f32], fb: &mut [f32], r: &mut [u16]) {
    HalfBitsSliceExt::reinterpret_cast::<f16>(la).convert_to_f32_slice(fa);
    HalfBitsSliceExt::reinterpret_cast::<f16>(lb).convert_to_f32_slice(fb);
    for (a, &b) in fa.iter_mut().zip(fb.iter()) {
        *a *= b;
    }
    HalfBitsSliceExt::reinterpret_cast_mut::<f16>(r).convert_from_f32_slice(fa);
}

/// FP16 values every input set and targeted test draws from: zeros, the subnormal and normal
/// extremes, ±1, ±Inf, quiet and signalling NaNs with payloads, factors whose products land
/// on a rounding tie or just around the overflow (65504) and subnormal (2^-14) thresholds.
pub fn f16_specials() -> &'static [u16] {
    &[
        0x0000, 0x8000, // ±0
        0x0001, 0x8001, 0x03ff, 0x83ff, // smallest, largest subnormal
        0x0400, 0x8400, 0x7bff, 0xfbff, // smallest, largest normal
        0x3c00, 0xbc00, 0x3bff, 0x3c01, // ±1 and its neighbours
        0x7c00, 0xfc00, // ±Inf
        0x7e00, 0xfe00, 0x7fff, 0x7e5a, // quiet NaNs with payloads
        0x7c01, 0xfd55, 0x7dff, // signalling NaNs with payloads
        0x3e00, 0x3d00, // 1.5, 1.25: 1.5 x (1 + 2^-10) is a tie
        0x2000, 0x1fff, 0x2001, // 2^-7 and neighbours: squares straddle 2^-14
        0x5bff, 0x5c00, 0x5bfe, // ~256: squares straddle 65504 / 65520
        0x0200, 0x3800, 0x4000, // 2^-15 (subnormal), 0.5, 2
    ]
}

/// BF16 values for the same purposes (BF16 shares f32's exponent range: 2^-126, 2^127).
pub fn bf16_specials() -> &'static [u16] {
    &[
        0x0000, 0x8000, // ±0
        0x0001, 0x8001, 0x007f, 0x807f, // smallest, largest subnormal
        0x0080, 0x8080, 0x7f7f, 0xff7f, // smallest, largest normal
        0x3f80, 0xbf80, 0x3f7f, 0x3f81, // ±1 and its neighbours
        0x7f80, 0xff80, // ±Inf
        0x7fc0, 0xffc0, 0x7fff, 0x7fd5, // quiet NaNs with payloads
        0x7f81, 0xffa0, 0x7fbf, // signalling NaNs with payloads
        0x3fc0, 0x3fa0, // 1.5, 1.25: 1.5 x (1 + 2^-7) is a tie
        0x2000, 0x1fff, 0x2001, // 2^-63 and neighbours: squares straddle 2^-126
        0x5f80, 0x5f7f, 0x5f7e, // ~2^64: squares straddle the largest normal
        0x0040, 0x3f00, 0x4000, // 2^-127 (subnormal), 0.5, 2
    ]
}

/// One 32-bit source word: each half a special value (60%) or random bits.
///
/// Each half takes two draws, the coin and then `pick`'s draw or the random bits, so both
/// outcomes are computed from the second draw and one is selected without a branch (the
/// coin is a 40% misprediction otherwise); the stream is the one `chance`, `pick` and
/// `next_u32` would consume.
fn draw_word(r: &mut Rng, specials: &[u16]) -> u32 {
    let mut half = || {
        let special = r.chance(0.6);
        let v = r.next_u32();
        let s = specials[((v as u64 * specials.len() as u64) >> 32) as usize] as u32;
        let keep = (special as u32).wrapping_neg();
        (s & keep) | (v >> 16 & !keep)
    };
    let lo = half();
    let hi = half();
    lo | hi << 16
}

/// Inputs for running `inst` on hardware: `n` of them, seeded, drawn half by half from
/// [`f16_specials`] / [`bf16_specials`] (by `inst.format`) and at random.
///
/// They obey what the register file forces, so hardware cannot contradict them:
/// - operand 1 RZ ⇒ `a = 0`; operand 2 RZ or URZ ⇒ `b = 0`; the immediate form ⇒ `b = 0`
///   (the value is in the encoding);
/// - operand 1 and 2 the same register ⇒ `a == b`;
/// - destination equal to a source register ⇒ `d` equals that source's value; destination
///   RZ ⇒ `d = 0`;
/// - UR form: `b` is the same for each warp of 32 consecutive inputs (a uniform register
///   holds one value per warp); both constant forms: `b` is the same for all `n` inputs (a
///   constant-bank word is the same for the whole launch).
///
/// Input `i` depends only on `(seed, i)` (and the warp or launch for `b`).
pub fn input_set(inst: &Inst, seed: u64, n: usize) -> Vec<Inputs> {
    let specials = if inst.format == Format::Bf16 { bf16_specials() } else { f16_specials() };
    const B_SALT: u64 = 0x5bd1_e995_0b5e_55ed;
    const C_SALT: u64 = 0x9e37_79b9_7f4a_7c15;
    let launch_b = draw_word(&mut Rng::fork(seed ^ B_SALT, u64::MAX), specials);
    (0..n)
        .map(|i| {
            let mut r = Rng::fork(seed, i as u64);
            let mut a = draw_word(&mut r, specials);
            let mut b = draw_word(&mut r, specials);
            let mut d = r.next_u32();
            let pred = (r.next_u32() & 0x7f) as u8;
            if inst.a == RZ {
                a = 0;
            }
            match inst.b {
                Operand2::Reg(RZ) | Operand2::Ur(URZ) | Operand2::Imm { .. } => b = 0,
                Operand2::Reg(reg) if reg == inst.a => b = a,
                Operand2::Reg(_) => {}
                Operand2::Ur(_) => b = draw_word(&mut Rng::fork(seed ^ B_SALT, (i / 32) as u64), specials),
                Operand2::Const { .. } | Operand2::ConstUr { .. } => b = launch_b,
            }
            // operand 3 from its own stream, so two-source input sets are what they were
            let mut c = match inst.c {
                None | Some(Operand2::Reg(RZ) | Operand2::Ur(URZ) | Operand2::Imm { .. }) => 0,
                Some(Operand2::Reg(reg)) if reg == inst.a => a,
                Some(Operand2::Reg(reg)) if inst.b == Operand2::Reg(reg) => b,
                Some(Operand2::Reg(_)) => draw_word(&mut Rng::fork(seed ^ C_SALT, i as u64), specials),
                Some(Operand2::Ur(_)) => draw_word(&mut Rng::fork(seed ^ C_SALT, u64::MAX - 1 - (i / 32) as u64), specials),
                Some(Operand2::Const { .. } | Operand2::ConstUr { .. }) => draw_word(&mut Rng::fork(seed ^ C_SALT, u64::MAX), specials),
            };
            if inst.dst == RZ {
                d = 0;
            } else if inst.dst == inst.a {
                d = a;
            } else if inst.b == Operand2::Reg(inst.dst) {
                d = b;
            } else if inst.c == Some(Operand2::Reg(inst.dst)) {
                d = c;
            }
            if inst.c.is_none() {
                c = 0;
            }
            Inputs { a, b, d, pred, c }
        })
        .collect()
}

/// Whether `form`'s operand 2 is read from [`Inputs::b`].
pub fn reads_b(form: Form) -> bool {
    form != Form::Imm
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{factorial, random_inst};

    /// `draw_word` is the plain `chance` / `pick` / `next_u32` draw without its branch: the
    /// same words and the same stream left behind, so recorded seeds keep their inputs.
    #[test]
    fn draw_word_is_the_branchy_draw() {
        for specials in [f16_specials(), bf16_specials()] {
            let (mut x, mut y) = (Rng::fork(11, 0), Rng::fork(11, 0));
            for _ in 0..100_000 {
                let mut half = || if y.chance(0.6) { *y.pick(specials) as u32 } else { y.next_u32() >> 16 };
                let lo = half();
                let want = lo | half() << 16;
                assert_eq!(draw_word(&mut x, specials), want);
            }
            assert_eq!(x.next_u64(), y.next_u64());
        }
    }
    use crate::isa::{Pred, SrcMods};

    /// eval and eval_batch are two code paths (scalar conversions vs slice conversions):
    /// they must agree on every factorial modifier combination.
    #[test]
    fn batch_agrees_with_scalar_on_every_modifier_combination() {
        let seed = 0x00c0_ffee;
        println!("seed: {seed}");
        for (op, form) in Form::TWO_SOURCE.iter().flat_map(|&f| [(crate::isa::Op::Hmul2, f), (crate::isa::Op::Hadd2, f)]) {
            if !op.has_form(form) {
                continue;
            }
            for (k, inst) in factorial(op, form, seed).iter().enumerate() {
                let xs = input_set(inst, seed ^ k as u64, 600);
                let mut out = vec![0u32; xs.len()];
                match eval_batch(inst, &xs, &mut out) {
                    Ok(()) => {
                        for (x, &o) in xs.iter().zip(&out) {
                            assert_eq!(eval(inst, x), Ok(o), "{inst:?} {x:?}");
                        }
                    }
                    Err(u) => assert!(inst.has_invalid_value(), "{inst:?}: {u}"),
                }
            }
        }
    }

    /// The same under every option of every knob of the policy, one knob away from the
    /// committed policy: the batch paths only another policy takes (a propagated NaN
    /// rather than 0x7fff, say) against [`eval_with`], for HMUL2 and HADD2 in every form.
    /// 35 inputs: the 8-at-a-time kernels and the blocks after them both run.
    #[test]
    fn batch_agrees_with_scalar_under_every_policy_option() {
        let seed = 0x0b47_c400;
        println!("seed: {seed}");
        // HFMA2's batch under other policies: fma's own tests
        let cases: Vec<(Inst, Vec<Inputs>)> = [crate::isa::Op::Hmul2, crate::isa::Op::Hadd2]
            .into_iter()
            .flat_map(|op| Form::ALL.into_iter().filter(move |&f| op.has_form(f)).map(move |f| (op, f)))
            .flat_map(|(op, form)| factorial(op, form, seed))
            .enumerate()
            .map(|(i, inst)| {
                let xs = input_set(&inst, seed ^ i as u64, 35);
                (inst, xs)
            })
            .collect();
        let mut checked = 0;
        for k in 0..super::policy::KNOBS.len() {
            for option in 0..super::policy::KNOBS[k].1.len() {
                let mut p = *Policy::current();
                p.set(k, option);
                for (inst, xs) in &cases {
                    let mut out = vec![0u32; xs.len()];
                    match eval_batch_with(&p, inst, xs, &mut out) {
                        Ok(()) => {
                            for (x, &o) in xs.iter().zip(&out) {
                                assert_eq!(eval_with(&p, inst, x), Ok(o), "knob {} option {option}: {inst:?} {x:?}", super::policy::KNOBS[k].0);
                            }
                            checked += 1;
                        }
                        Err(u) => assert!(xs.iter().any(|x| eval_with(&p, inst, x).is_err()), "{inst:?}: the batch says {u}, eval_with defines every input"),
                    }
                }
            }
        }
        assert!(checked > 1000, "only {checked} instructions checked");
    }

    /// AddRow (HADD2, one lane for both) against `eval` on symmetric operands, for every
    /// modifier combination of the register forms (operand 1 RZ and a destination RZ among
    /// them) and values drawn from the specials; which instructions get no AddRow.
    #[test]
    fn add_row_is_eval_on_symmetric_operands() {
        let seed = 0x0002_0018;
        println!("seed: {seed}");
        let mut r = Rng::new(seed);
        let (mut rows, mut none) = (0, 0);
        for form in Form::TWO_SOURCE.iter().copied().filter(|&f| crate::isa::Op::Hadd2.has_form(f)) {
            for (k, inst) in factorial(crate::isa::Op::Hadd2, form, seed).into_iter().enumerate() {
                let mut inst = Inst { pred: Pred { index: PT, negated: false }, ..inst };
                match k % 5 {
                    1 => inst.a = RZ,
                    2 => inst.dst = RZ,
                    _ => {}
                }
                let m = match add_row(&inst) {
                    Ok(Some(m)) => m,
                    Ok(None) => {
                        let b_reg = matches!(inst.b, Operand2::Reg(b) if b != RZ);
                        assert!(!b_reg || add::add_op(&inst).f32_out, "{inst:?}: no AddRow");
                        none += 1;
                        continue;
                    }
                    Err(u) => {
                        assert!(inst.has_invalid_value() || eval(&inst, &Inputs::default()).is_err(), "{inst:?}: {u}");
                        continue;
                    }
                };
                rows += 1;
                row_is_eval_on_drawn_lanes(&inst, &m, &mut r, seed);
            }
        }
        assert!(rows > 200 && none > 10, "{rows} instructions checked, {none} without an AddRow");
        whole_rows_are_eval(crate::isa::Op::Hadd2, |inst| add_row(inst).unwrap().unwrap(), &mut r, seed);
    }

    /// `m`, the row of `inst`, against `eval` for one operand-1 lane and 37 operand-2 lanes,
    /// each a special value or random bits.
    fn row_is_eval_on_drawn_lanes(inst: &Inst, m: &impl Row, r: &mut Rng, seed: u64) {
        let sp = if inst.format == Format::Bf16 { bf16_specials() } else { f16_specials() };
        let half = |r: &mut Rng| if r.chance(0.5) { *r.pick(sp) } else { r.next_u32() as u16 };
        let a = half(r);
        let b: Vec<u16> = (0..37).map(|_| half(r)).collect();
        let mut out = vec![0u16; b.len()];
        m.eval(a, &b, &mut out);
        for (&b, &l) in b.iter().zip(&out) {
            let x = Inputs { a: a as u32 * 0x10001, b: b as u32 * 0x10001, d: 0x5a5a_a5a5, pred: 0x7f, c: 0 };
            assert_eq!(Ok((l as u32 * 0x10001) & m.word_keep()), eval(inst, &x), "seed {seed}: {inst:?} {x:?}");
        }
    }

    /// Whole rows (every operand-2 value) of `op`'s plain FP16 and BF16 row kernel (`row`)
    /// against `eval`, for the specials and 16 random operand-1 values.
    fn whole_rows_are_eval<R: Row>(op: crate::isa::Op, row: impl Fn(&Inst) -> R, r: &mut Rng, seed: u64) {
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let mut out = vec![0u16; all.len()];
        for format in [Format::F16, Format::Bf16] {
            let mut inst = Inst::new(0, 1, Operand2::Reg(2));
            inst.op = op;
            inst.format = format;
            let m = row(&inst);
            let sp = if format == Format::Bf16 { bf16_specials() } else { f16_specials() };
            let xs: Vec<u16> = sp.iter().copied().chain((0..16).map(|_| r.next_u32() as u16)).collect();
            for a in xs {
                m.eval(a, &all, &mut out);
                for (&b, &l) in all.iter().zip(&out) {
                    let x = Inputs { a: a as u32 * 0x10001, b: b as u32 * 0x10001, d: 0, pred: 0x7f, c: 0 };
                    assert_eq!(Ok(l as u32 * 0x10001), eval(&inst, &x), "seed {seed}: {op} {format:?} {a:#06x}, {b:#06x}");
                }
            }
        }
    }

    /// MulRow (one lane for both, F16C on AVX2 CPUs) against `eval` on symmetric operands,
    /// for every modifier combination of both forms and values drawn from the specials.
    #[test]
    fn mul_row_is_eval_on_symmetric_operands() {
        let seed = 0x0001_0018;
        println!("seed: {seed}");
        let mut r = Rng::new(seed);
        let mut rows = 0;
        for form in [Form::Rrr, Form::Imm] {
            for inst in factorial(crate::isa::Op::Hmul2, form, seed) {
                let inst = Inst { pred: Pred { index: PT, negated: false }, ..inst };
                let m = match MulRow::new(&inst) {
                    Ok(Some(m)) => m,
                    Ok(None) => continue,
                    Err(u) => {
                        assert!(inst.has_invalid_value(), "{inst:?}: {u}");
                        continue;
                    }
                };
                rows += 1;
                row_is_eval_on_drawn_lanes(&inst, &m, &mut r, seed);
            }
        }
        assert!(rows > 1000, "{rows} instructions checked");
        whole_rows_are_eval(crate::isa::Op::Hmul2, |inst| MulRow::new(inst).unwrap().unwrap(), &mut r, seed);
    }

    /// The rows with AVX-512 FP16's arithmetic ([`ph`]) and BF16's AVX-512 kernels
    /// (`bf16x32::mul_row`, `bf16x32::add_row`) against the rows without them (f32), on
    /// every FP16 or BF16 pair (sampled rows at the quick level), for HMUL2 and HADD2
    /// plain, with source modifiers, and HADD2 with .FTZ and .SAT (which finish the
    /// hardware's sum).
    #[test]
    fn ph_rows_are_the_f32_rows_on_every_pair() {
        #[cfg(target_arch = "x86_64")]
        {
            if !ph::available() {
                crate::testlevel::not_checked(
                    &["avx512_fp16", "avx512bw", "avx512vl", "avx512cd", "avx512f", "avx2", "f16c"],
                    "the CPU has no AVX-512 FP16: the rows take the f32 kernels here, and the AVX-512 ones are not checked",
                );
                return;
            }
            // a row's eval, with (true) or without (false) AVX-512 FP16's arithmetic
            type RowFn = Box<dyn Fn(u16, &[u16], &mut [u16], bool)>;
            let rows: Vec<RowFn> = [
                "HMUL2 R0, R1, R2",
                "HMUL2 R0, -R1, |R2|",
                "HMUL2 RZ, R1, R2",
                "HADD2 R0, R1, R2",
                "HADD2 R0, -|R1|, -R2",
                "HADD2.FTZ R0, R1, R2",
                "HADD2.SAT R0, R1, R2",
                "HMUL2.BF16_V2 R0, R1, R2",
                "HMUL2.BF16_V2 R0, -R1, |R2|",
                "HADD2.BF16_V2 R0, R1, R2",
                "HADD2.BF16_V2 R0, |R1|, -R2",
                "HADD2.BF16_V2 RZ, R1, R2",
            ]
            .into_iter()
            .map(|t| {
                let inst = crate::isa::parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
                let f: RowFn = match add_row(&inst).unwrap() {
                    Some(m) => Box::new(move |a, b, o, with| if with { m.eval(a, b, o) } else { m.eval_without_ph(a, b, o) }),
                    None => {
                        let m = MulRow::new(&inst).unwrap().unwrap();
                        Box::new(move |a, b, o, with| if with { m.eval(a, b, o) } else { m.eval_without_ph(a, b, o) })
                    }
                };
                f
            })
            .collect();
            let all: Vec<u16> = (0..=u16::MAX).collect();
            let (mut got, mut want) = (vec![0u16; all.len()], vec![0u16; all.len()]);
            for a in crate::testlevel::rows("FP16 and BF16 pairs of the AVX-512 rows (rows of 2^16)", 1 << 16, 512) {
                for (i, row) in rows.iter().enumerate() {
                    row(a as u16, &all, &mut got, true);
                    row(a as u16, &all, &mut want, false);
                    if let Some(b) = (0..all.len()).find(|&b| got[b] != want[b]) {
                        panic!("row {i}: a {a:#06x}, b {b:#06x}: {:#06x} with AVX-512 FP16, {:#06x} without", got[b], want[b]);
                    }
                }
            }
        }
    }

    /// eval_words against eval for HADD2 of every modifier combination: symmetric operand
    /// words (two inputs a word, where the select allows), odd counts and asymmetric ones
    /// (lane by lane).
    #[test]
    fn eval_words_is_eval_for_hadd2() {
        let seed = 0x000a_0018;
        println!("seed: {seed}");
        let mut r = Rng::new(seed);
        let mut scratch = Vec::new();
        let mut n_inst = 0;
        for inst in factorial(crate::isa::Op::Hadd2, Form::Rrr, seed) {
            let inst = Inst { pred: Pred { index: PT, negated: false }, ..inst };
            let sp = if inst.format == Format::Bf16 { bf16_specials() } else { f16_specials() };
            let half = |r: &mut Rng| if r.chance(0.5) { *r.pick(sp) as u32 } else { r.next_u32() >> 16 };
            let a = half(&mut r) * 0x10001;
            for (len, symmetric) in [(64usize, true), (33, true), (64, false)] {
                let b: Vec<u32> = (0..len).map(|_| if symmetric { half(&mut r) * 0x10001 } else { half(&mut r) | half(&mut r) << 16 }).collect();
                let mut out = vec![0u32; len];
                let Ok(()) = eval_words(&inst, a, &b, 0, &mut out, &mut scratch) else { continue };
                n_inst += 1;
                for (&b, &o) in b.iter().zip(&out) {
                    let x = Inputs { a, b, d: 0x5a5a_a5a5, pred: 0x7f, c: 0 };
                    assert_eq!(Ok(o), eval(&inst, &x), "seed {seed}: {inst:?} {x:?}");
                }
            }
        }
        assert!(n_inst > 100, "{n_inst} checked");
    }

    /// eval_batch's own BF16 rounding against `half`'s, which `eval` uses: every f32.
    #[test]
    fn bf16_rne_is_half_from_f32_for_every_f32() {
        // every f32 at the full test level; rows of 2^16 of them at the quick one
        let rows = crate::testlevel::rows("f32 values (rows of 2^16)", 1 << 16, 1024);
        let bad = rows
            .iter()
            .flat_map(|&hi| (0..1u32 << 16).map(move |lo| hi << 16 | lo))
            .filter(|&b| bf16_rne(f32::from_bits(b)) != bf16::from_f32(f32::from_bits(b)).to_bits())
            .count();
        assert_eq!(bad, 0);
    }

    /// The f64 BF16 product against the f32 one `eval` uses, on pairs around every
    /// threshold (the exhaustive integration test covers all 2^32).
    #[test]
    fn bf16_mul_rne_is_the_f32_product_rounded() {
        let mut r = Rng::new(3);
        let sp = bf16_specials();
        for k in 0..2_000_000u32 {
            let a = if k % 3 == 0 { *r.pick(sp) } else { (r.next_u32() >> 16) as u16 };
            let b = if k % 5 == 0 { *r.pick(sp) } else { (r.next_u32() >> 16) as u16 };
            let want = bf16_rne(f32::from_bits((a as u32) << 16) * f32::from_bits((b as u32) << 16));
            let got = bf16_mul_rne(a, b);
            let nan = |v: u16| v & 0x7fff > 0x7f80;
            assert!(got == want || (nan(got) && nan(want)), "{a:#06x} x {b:#06x}: {got:#06x} vs {want:#06x}");
        }
    }

    /// On AVX-512 machines plain BF16 takes `bf16x32`, so the exhaustive integration test no
    /// longer reaches `bf16_mul_rne`: `eval_batch` against the portable scalar blocks on all
    /// 2^32 pairs. (Against the AVX2 blocks it would compare a path with itself on a CPU
    /// without AVX-512, where `eval_batch` takes the AVX2 blocks.)
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn bf16_paths_agree_on_every_pair() {
        let mut inst = Inst::new(0, 1, Operand2::Reg(2));
        inst.format = Format::Bf16;
        let c = ctx_for(&inst).unwrap();
        let fast_path = batch_path(&c);
        assert_ne!(
            fast_path,
            BatchPath::Portable,
            "no SIMD path on this CPU: eval_batch runs the portable blocks, which this test would compare with themselves"
        );
        println!("eval_batch takes {fast_path:?} here; checked against the portable blocks");
        let mut xs = vec![Inputs::default(); 1 << 15];
        let (mut fast, mut portable) = (vec![0u32; xs.len()], vec![0u32; xs.len()]);
        for x in crate::testlevel::rows("BF16 pairs (rows of 2^16)", 1 << 16, 1024) {
            for (k, v) in xs.iter_mut().enumerate() {
                let y = 2 * k as u32;
                *v = Inputs { a: x | x << 16, b: y | (y + 1) << 16, d: 0, pred: 0, c: 0 };
            }
            eval_batch(&inst, &xs, &mut fast).unwrap();
            blocks::<false, false, false, false>(&c, &xs, &mut portable);
            if let Some(k) = (0..xs.len()).find(|&k| fast[k] != portable[k]) {
                panic!("{:#x} x {:#x}: {:#x} vs {:#x}", xs[k].a, xs[k].b, fast[k], portable[k]);
            }
        }
    }

    /// `eval_batch` takes the in-register kernels (`bf16x32`) for plain BF16 and FP16 where
    /// the CPU has what they need, with modifiers, immediates and guards too: a layout check
    /// that sent every batch elsewhere once left them unused without any test failing.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn eval_batch_takes_the_in_register_kernels() {
        use std::arch::is_x86_feature_detected as cpu;
        let cases = [
            (Format::Bf16, BatchPath::Bf16x32, cpu!("avx512f") && cpu!("avx512bw") && cpu!("avx512cd"), &["avx512f", "avx512bw", "avx512cd"][..]),
            (Format::F16, BatchPath::F16x32, ph::available(), &["avx512_fp16", "avx512bw", "avx512vl", "avx512cd", "avx512f", "avx2", "f16c"][..]),
        ];
        for (format, want, has, flags) in cases {
            if !has {
                crate::testlevel::not_checked(
                    flags,
                    &format!(
                        "{format:?}: the CPU lacks what {want:?} needs; eval_batch takes {:?}, and the kernel is not checked here",
                        batch_path(&ctx_for(&Inst { format, ..Inst::new(0, 1, Operand2::Reg(2)) }).unwrap())
                    ),
                );
                continue;
            }
            let mods = SrcMods { neg: true, abs: true, swizzle: Swizzle::H0H0 };
            let insts = [
                Inst { format, ..Inst::new(0, 1, Operand2::Reg(2)) },
                Inst { format, a_mods: mods, b_mods: mods, pred: Pred { index: 3, negated: true }, ..Inst::new(0, 1, Operand2::Reg(2)) },
                Inst { format, ..Inst::new(0, 1, Operand2::Imm { first: 0x3c00, second: 0x4000 }) },
                Inst { format, ..Inst::new(RZ, 1, Operand2::Reg(2)) },
            ];
            for inst in insts {
                assert_eq!(batch_path(&ctx_for(&inst).unwrap()), want, "{inst:?}");
            }
            // and not where the masks are not plain
            let ftz = Inst { format, flush: Flush::Ftz, ..Inst::new(0, 1, Operand2::Reg(2)) };
            assert_ne!(batch_path(&ctx_for(&ftz).unwrap()), want, "{ftz:?}");
        }
    }

    #[test]
    fn invalid_values_are_undefined_and_named() {
        let mut i = Inst::new(0, 1, Operand2::Reg(2));
        let x = Inputs { a: 0x3c00_3c00, b: 0x3c00_3c00, d: 0, pred: 0, c: 0 };
        assert_eq!(eval(&i, &x), Ok(0x3c00_3c00));
        i.format = Format::Invalid3;
        assert_eq!(eval(&i, &x), Err(Undefined::Format(Format::Invalid3)));
        i.format = Format::F16;
        i.flush = Flush::Invalid3;
        assert_eq!(eval(&i, &x), Err(Undefined::Flush));
        i.flush = Flush::None;
        i.b_mods = SrcMods { swizzle: Swizzle::Invalid1, ..Default::default() };
        assert_eq!(eval(&i, &x), Err(Undefined::Swizzle { operand: 2 }));
        i.pred = Pred { index: 3, negated: false };
        assert!(eval(&i, &x).is_err(), "predicated off is still undefined under the committed policy");
    }

    #[test]
    fn input_set_obeys_the_register_file() {
        let seed = 7;
        println!("seed: {seed}");
        let mut r = Rng::new(seed);
        for k in 0..2000u64 {
            let form = Form::TWO_SOURCE[(k % 5) as usize];
            let mut inst = random_inst(&mut r, crate::isa::Op::Hmul2, form, false, false);
            if k % 7 == 0 {
                inst.dst = inst.a;
            }
            if k % 11 == 0 {
                inst.b = Operand2::Reg(inst.a);
            }
            let xs = input_set(&inst, seed + k, 70);
            assert_eq!(xs, input_set(&inst, seed + k, 70), "same seed, same inputs");
            for (i, x) in xs.iter().enumerate() {
                if inst.a == RZ {
                    assert_eq!(x.a, 0);
                }
                match inst.b {
                    Operand2::Reg(RZ) | Operand2::Ur(URZ) | Operand2::Imm { .. } => assert_eq!(x.b, 0),
                    Operand2::Reg(b) if b == inst.a => assert_eq!(x.a, x.b),
                    Operand2::Ur(_) => assert_eq!(x.b, xs[i / 32 * 32].b),
                    Operand2::Const { .. } | Operand2::ConstUr { .. } => assert_eq!(x.b, xs[0].b),
                    Operand2::Reg(_) => {}
                }
                if inst.dst == RZ {
                    assert_eq!(x.d, 0);
                } else if inst.dst == inst.a {
                    assert_eq!(x.d, x.a);
                } else if inst.b == Operand2::Reg(inst.dst) {
                    assert_eq!(x.d, x.b);
                }
                assert!(x.pred < 0x80);
            }
        }
    }
}
