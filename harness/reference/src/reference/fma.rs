//! The bit-exact software reference for the arithmetic of **HFMA2** (and HFMA2.MMA), the
//! packed two-lane FP16/BF16 fused multiply-add `a * b + c`, independent of the
//! [`crate::isa::Inst`] instruction type: an [`FmaOp`] names the modifiers nvdisasm prints,
//! [`Fma`] is an op prepared under a [`Policy`], [`fma_lane`] gives one lane and
//! [`eval_fma`] / [`eval_fma_batch`] the destination register's 32 bits for three source
//! words (the values the operands read: RZ reads 0, an immediate is its packed 32 bits).
//! Guard predicates, RZ destinations and operand forms are the caller's, as for [`super::add`].
//!
//! # Per lane
//!
//! Each lane: select a half of each of the three sources ([`Swizzle`]), |x| then -x
//! (`abs-neg-order`), flush subnormal inputs under .FTZ (factors: `ftz-inputs`; the addend:
//! `fma-ftz-addend` as well), optionally flush a tiny exact product (`fma-ftz-product`),
//! then `a * b + c` computed exactly and **rounded once** to the lane format: round to
//! nearest even, gradual underflow, overflow to Inf. Then: a NaN operand or result (0 x Inf,
//! Inf - Inf) gives the NaN of `nan-result` (operands in the order a, b, c); an exact zero
//! sum takes the sign `fma-signed-zero` says (IEEE 754: +0 unless the product and c are
//! both -0); under .FTZ a result that is tiny (`ftz-tininess`, applied to the exact sum) is
//! flushed to zero of its own sign (the PTX ISA: "sign-preserving zero"); .SAT clamps to
//! [+0, 1] (`sat-nan`, `sat-negative-zero`, `sat-bf16`); .RELU clamps negative results to +0
//! (`fma-relu-negative-zero`) and makes a NaN result `fma-relu-nan`'s NaN.
//!
//! .FMZ: a product with a zero factor (after modifiers and input flushing) is the zero of
//! `fmz-zero-product`, even against Inf or NaN; `fma-fmz-addend` says how it meets c;
//! `fmz-flushes` and `flush-bf16` apply as for HMUL2.
//!
//! # Why the result is rounded exactly once
//!
//! The factors are exact in f64 and so is their product (at most 22 significant bits for
//! FP16, 16 for BF16; exponents from 2^-266 to 2^256, far inside f64's normal range). The
//! sum `x = p + c` is not always exact in f64, so the rounded sum `s` and its error `e`
//! come from TwoSum (Knuth; exact in binary64 barring overflow, which cannot happen here),
//! `x = s + e` exactly. **Round to odd**: if `e != 0` and `s`'s last significand bit is 0,
//! `s` moves one f64 ulp toward `e` (onto an odd significand). That gives `RO(x)`, the f64
//! neighbour of `x` with an odd significand, or `x` itself when exact.
//! Proof that rounding `RO(x)` to nearest even in FP16/BF16 is rounding `x`: every FP16
//! or BF16 value and every midpoint between two of them (at most 12 significant bits, and
//! within f64's normal range) is an f64 with an **even** significand (53 >= 12 + 1). If
//! `x` is on the f64 grid, `RO(x) = x`. Otherwise `x` lies strictly between two adjacent
//! f64 values, one odd (`RO(x)`) and one even, so no even f64 value, hence no target value
//! and no midpoint, lies between `x` and `RO(x)` or equals `RO(x)`: both sit strictly on the
//! same side of every decision point of the target's round to nearest, which therefore
//! returns the same value for both (Boldo and Melquiond's round-to-odd theorem, needing
//! 53 >= p + 2; here p is 11 or 8). The same argument covers the subnormal range (the
//! target grid there is coarser, its points still even f64 values), overflow (the threshold
//! `max + ulp/2` is a midpoint like any other), and tininess before rounding (the smallest
//! normal is an even f64 value, so `|RO(x)| < min` exactly when `|x| < min`).
//! An exact zero sum is `s = 0, e = 0`, and f64's own round-to-nearest addition gives it
//! IEEE 754's sign. `harness/reference/tests/reference_fma.rs` checks all this against
//! rustc_apfloat's correctly rounded `mul_add` on 10^9 random triples of each format.
//!
//! # Speed
//!
//! [`eval_fma_batch`] takes lanes without flushing, .FMZ or zero-sign override (.SAT and
//! .RELU come after the rounding, on the 16-bit results) straight from the packed words with AVX2 and F16C where the CPU has them
//! (`avx2.rs`): FP16 in f32, 8 lanes to a vector (the product, 22 bits, and TwoSum are exact
//! in f32 too: every value a multiple of 2^-48, below 2^33 in magnitude; round to odd at
//! 24 bits is enough, 24 >= 11 + 2, the same argument; F16C's conversion is the final round
//! to nearest even), BF16 with one f32 fused multiply-add per 8 lanes where the CPU has FMA
//! (rounding once to 24 bits, then at bit 16: BF16's rounding but for a result that lands
//! on a midpoint of BF16's grid, see there), and in f64, 4 to a vector, rounded by one f64
//! addition, for the 4 lanes around such a result and without FMA.
//! Other lanes, and every lane without AVX2, work in blocks with straight-line code (masks
//! and selects, no branch on the values, never an f64 subnormal operand) that the compiler
//! vectorises.
//!
//! [`Fma::batch_row`] (a sweep's rows: operands 1 and 3 fixed) takes BF16 rows without
//! flushing or .FMZ on CPUs with AVX-512 BF16 through `bf16row.rs`: 16 words a step whose
//! operand-2 halves share sign and exponent, in f32 arithmetic scaled once per step so that
//! it is exact (no double rounding, no f32 subnormal), rounded by `VCVTNE2PS2BF16` or
//! integer steps; see there for the proof. `harness/reference/tests/reference_fma.rs`
//! checks it against rustc_apfloat on whole rows.
//!
//! # What has no value here
//!
//! - `.OOB` ([`Undefined::Fma`]): the PTX ISA defines `fma.oob` as forcing +0 when an
//!   operand is the tensor unit's "OOB NaN", a bit pattern it does not give.
//! - `.F32` (a format value of [`Format::F32`]): no document or compiler output says what
//!   HFMA2.F32 computes.
//! - `.SAT` with `.RELU`: the PTX ISA has no fma with both, so no order of the two is
//!   documented.
//! - `HFMA2.MMA` under the alternative of `fma-mma`.

use super::policy::{FmzZero, ReluNan, ZeroSum};
use super::{mask, mods_masks, sel, shifts, Policy, Undefined, BLOCK};
use crate::isa::{Flush, Format, SrcMods, Swizzle};

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod bf16row;

/// The modifiers of one HFMA2 or HFMA2.MMA: what the arithmetic depends on. The fields
/// mirror what nvdisasm prints: `.BF16_V2` ([`Format::Bf16`]), `.FTZ` / `.FMZ`
/// ([`Flush`]), `.SAT`, `.RELU`, `.OOB`, `.F32` ([`Format::F32`]), `.MMA`, and each
/// source's `-`, `|x|` and `.H0_H0` / `.H1_H1`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FmaOp {
    /// FP16 or BF16 (`.BF16_V2`); an INVALIDn value is [`Undefined::Format`], `.F32`
    /// [`Undefined::Fma`].
    pub format: Format,
    /// Operand 1's (factor a) half select, |x| and -x.
    pub a_mods: SrcMods,
    /// Operand 2's (factor b).
    pub b_mods: SrcMods,
    /// Operand 3's (the addend c).
    pub c_mods: SrcMods,
    /// None, .FTZ or .FMZ; INVALID3 is [`Undefined::Flush`].
    pub flush: Flush,
    pub sat: bool,
    pub relu: bool,
    /// `.OOB`: [`Undefined::Fma`] (see the module's text).
    pub oob: bool,
    /// `HFMA2.MMA` rather than `HFMA2` (`fma-mma`).
    pub mma: bool,
}

/// Whether `op` is a fused multiply-add of the family (HFMA2, HFMA2.MMA).
pub fn is_fma(op: crate::isa::Op) -> bool {
    matches!(super::family_of(op), Some(super::Family::Fma { .. }))
}

/// The lane operation of a decoded HFMA2 or HFMA2.MMA: its format, flush, `.SAT`, `.RELU`
/// and each source's modifiers (immediates have none). A `.RELU` guarded by another
/// predicate than PT is [`Undefined::Fma`]: what that predicate does is not known.
pub fn fma_op(inst: &crate::isa::Inst) -> Result<FmaOp, Undefined> {
    use crate::isa::Operand2;
    if !is_fma(inst.op) {
        return Err(Undefined::Instruction(inst.op));
    }
    if inst.relu.is_some_and(|p| p != crate::isa::Pred::ALWAYS) {
        return Err(Undefined::Fma(why::RELU_PREDICATE));
    }
    let no_imm = |o: Option<Operand2>, m: SrcMods| if matches!(o, Some(Operand2::Imm { .. })) { SrcMods::default() } else { m };
    Ok(FmaOp {
        format: inst.format,
        a_mods: inst.a_mods,
        b_mods: no_imm(Some(inst.b), inst.b_mods),
        c_mods: no_imm(inst.c, inst.c_mods),
        flush: if inst.flush == Flush::Oob { Flush::None } else { inst.flush },
        sat: inst.sat,
        relu: inst.relu.is_some(),
        oob: inst.flush == Flush::Oob,
        mma: super::family_of(inst.op) == Some(super::Family::Fma { mma: true }),
    })
}

/// Why an [`FmaOp`] has no value (the texts of [`Undefined::Fma`]).
pub mod why {
    pub const OOB: &str = ".OOB: the PTX ISA's fma.oob forces +0 for an operand that is the tensor unit's OOB NaN, whose bit pattern no document gives";
    pub const F32: &str = ".F32: no document or compiler output says what HFMA2.F32 computes";
    pub const SAT_RELU: &str = ".SAT with .RELU: the PTX ISA has no fma with both, so their order is not documented";
    pub const RELU_PREDICATE: &str = ".RELU with a predicate operand other than PT: what the predicate selects is not documented";
    pub const MMA: &str = "HFMA2.MMA: under fma-mma's alternative its arithmetic is not HFMA2's";
}

/// Lane format constants.
#[derive(Clone, Copy, Debug)]
struct Fmt {
    bf16: bool,
    /// Exponent field mask, quiet bit, 1.0, Inf.
    exp: u16,
    quiet: u16,
    one: u16,
    /// Significand bits with the implicit one, smallest normal exponent, bias.
    prec: i32,
    emin: i32,
    bias: i32,
    min_normal: f64,
}

const F16: Fmt = Fmt { bf16: false, exp: 0x7c00, quiet: 0x0200, one: 0x3c00, prec: 11, emin: -14, bias: 15, min_normal: 6.103515625e-05 };
const BF16: Fmt = Fmt {
    bf16: true,
    exp: 0x7f80,
    quiet: 0x0040,
    one: 0x3f80,
    prec: 8,
    emin: -126,
    bias: 127,
    // 2^-126
    min_normal: 1.1754943508222875e-38,
};

/// `x` where `m`, else `y`.
#[inline(always)]
fn sel64(m: bool, x: u64, y: u64) -> u64 {
    let m = 0u64.wrapping_sub(m as u64);
    (x & m) | (y & !m)
}

impl Fmt {
    /// The lane value as an f64, exactly (Inf and NaN included; a NaN's payload is not
    /// kept, the NaN rule uses the lane bits). Branch-free, and never an f64 subnormal
    /// operand (those cost a microcode assist on some CPUs): the significand, an integer
    /// of at most 11 bits, times a normal power of two.
    #[inline(always)]
    fn widen(&self, v: u16) -> f64 {
        let fb = self.prec - 1;
        let e = ((v & 0x7fff) >> fb) as i32;
        let frac = (v & ((1 << fb) - 1)) as i32;
        let m = frac | ((e != 0) as i32) << fb;
        let scale = f64::from_bits(((e.max(1) - self.bias - fb + 1023) as u64) << 52);
        let finite = (m as f64 * scale).to_bits();
        let special = 0x7ff0_0000_0000_0000 | (frac as u64) << (52 - fb);
        let sign = ((v as u64) & 0x8000) << 48;
        f64::from_bits(sel64(e == (self.exp >> fb) as i32, special, finite) | sign)
    }

    /// A finite f64 rounded to nearest even in this format (overflow to Inf, gradual
    /// underflow). Exact for any f64 that is `RO(x)` (see the module's text) of the `x` to
    /// round; never called on Inf or NaN, never on f64 subnormals (none arise).
    #[inline(always)]
    fn round(&self, x: f64) -> u16 {
        let bits = x.to_bits();
        let sign = ((bits >> 48) & 0x8000) as u16;
        let mag = bits & 0x7fff_ffff_ffff_ffff;
        let e = (mag >> 52) as i32 - 1023;
        let m = (mag & ((1u64 << 52) - 1)) | 1u64 << 52;
        // the exponent of the result's leading bit position: the subnormal range is
        // fixed-point at emin
        let q = e.max(self.emin);
        // m x 2^(e - 52) to an integer M x 2^(q - prec + 1): shift right by r >= 42; a
        // zero x (mag 0) gives a huge r and M = 0
        let r = (q - e + 52 - (self.prec - 1)).min(62) as u32;
        // (signed 64-bit arithmetic: every value is below 2^63, and AVX2 compares only signed)
        let m = m as i64;
        let kept = m >> r;
        let rem = m & ((1i64 << r) - 1);
        let half = 1i64 << (r - 1);
        let up = (rem > half) | ((rem == half) & (kept & 1 == 1));
        let kept = kept + up as i64;
        // biased exponent - 1 above the significand M (implicit bit included): a carry
        // out of M, a subnormal M reaching the smallest normal and overflow all fall out
        let enc = ((((q + self.bias - 1) as i64) << (self.prec - 1)) + kept).min(self.exp as i64);
        sign | enc as u16
    }
}

/// An [`FmaOp`] decided once under a [`Policy`]: what every lane needs.
#[derive(Clone, Copy, Debug)]
pub struct Fma {
    f: Fmt,
    mods: [(u16, u16); 3],
    sh: [[u32; 2]; 3],
    /// Flush subnormal factors; the addend (all-ones / zero masks).
    ftz_ab: u16,
    ftz_c: u16,
    /// Flush a tiny exact product; .FMZ's zero product is special; XorSign's sign.
    ftz_prod: bool,
    fmz: bool,
    fmz_xor_sign: bool,
    /// .FMZ with a zero product gives c itself (`fma-fmz-addend`'s alternative).
    fmz_c_direct: u16,
    /// Masks: flush tiny results; tininess after rounding; canonical NaN.
    ftz_out: u16,
    after_rounding: u16,
    canonical: u16,
    /// An exact zero sum: replaced (not IEEE), by `(product | c) & zero_or` sign.
    zero_override: u16,
    zero_or: u16,
    sat: u16,
    sat_nan_zero: u16,
    sat_keep_neg_zero: u16,
    relu: u16,
    /// .RELU of NaN: `sel(relu_nan_pass, r, relu_nan_value)`; of -0: `0x8000 & relu_keep_neg_zero`.
    relu_nan_pass: u16,
    relu_nan_value: u16,
    relu_keep_neg_zero: u16,
}

impl Fma {
    /// Prepares `op` under `p`; [`Undefined`] when `op` has no value (see the module's text).
    pub fn new(op: &FmaOp, p: &Policy) -> Result<Fma, Undefined> {
        let f = match op.format {
            Format::F16 => F16,
            Format::Bf16 => BF16,
            Format::F32 => return Err(Undefined::Fma(why::F32)),
            other => return Err(Undefined::Format(other)),
        };
        if op.flush == Flush::Invalid3 {
            return Err(Undefined::Flush);
        }
        for (k, m) in [op.a_mods, op.b_mods, op.c_mods].iter().enumerate() {
            // INVALID1, and the three-bit values 4..7 of HFMA2's operand 2 (H0_NH1 and
            // INVALID5..7), which this model does not compute yet
            if !matches!(m.swizzle, Swizzle::H1H0 | Swizzle::H0H0 | Swizzle::H1H1) {
                return Err(Undefined::Swizzle { operand: k as u8 + 1 });
            }
        }
        if op.oob {
            return Err(Undefined::Fma(why::OOB));
        }
        if op.sat && op.relu {
            return Err(Undefined::Fma(why::SAT_RELU));
        }
        if op.mma && !p.fma_mma_same {
            return Err(Undefined::Fma(why::MMA));
        }
        let flush_ok = !f.bf16 || p.flush_bf16;
        let (ftz, fmz) = match op.flush {
            Flush::Ftz => (flush_ok, false),
            Flush::Fmz => (flush_ok && p.fmz_flushes, flush_ok && p.fmz != FmzZero::Ieee),
            _ => (false, false),
        };
        let m = |s: SrcMods| mods_masks(s.neg, s.abs, p);
        Ok(Fma {
            f,
            mods: [m(op.a_mods), m(op.b_mods), m(op.c_mods)],
            sh: [shifts(op.a_mods.swizzle), shifts(op.b_mods.swizzle), shifts(op.c_mods.swizzle)],
            ftz_ab: mask(ftz && p.ftz_inputs),
            ftz_c: mask(ftz && p.ftz_inputs && p.fma_ftz_addend),
            ftz_prod: ftz && p.fma_ftz_product,
            fmz,
            fmz_xor_sign: p.fmz == FmzZero::XorSign,
            fmz_c_direct: mask(fmz && !p.fma_fmz_addend_ieee),
            ftz_out: mask(ftz),
            after_rounding: mask(p.ftz_after_rounding),
            canonical: mask(p.nan_canonical),
            zero_override: mask(p.fma_zero_sum != ZeroSum::Ieee),
            zero_or: if p.fma_zero_sum == ZeroSum::MinusUnlessBothPlus { 0x8000 } else { 0 },
            sat: mask(op.sat && (!f.bf16 || p.sat_bf16)),
            sat_nan_zero: mask(p.sat_nan_to_zero),
            sat_keep_neg_zero: mask(!p.sat_neg_zero_to_plus),
            relu: mask(op.relu),
            relu_nan_pass: mask(p.fma_relu_nan == ReluNan::Pass),
            relu_nan_value: if p.fma_relu_nan == ReluNan::Canonical { 0x7fff } else { 0 },
            relu_keep_neg_zero: mask(!p.fma_relu_neg_zero_to_plus),
        })
    }

    /// Source `k` (0: a, 1: b, 2: c) of lane `lane` of `word`: half select, modifiers, input
    /// flushing.
    #[inline(always)]
    fn src(&self, k: usize, word: u32, lane: usize) -> u16 {
        self.modded(k, (word >> self.sh[k][lane]) as u16)
    }

    /// |x| / -x and input flushing of source `k` on a lane value.
    #[inline(always)]
    fn modded(&self, k: usize, v: u16) -> u16 {
        let (and, xor) = self.mods[k];
        let v = (v & and) ^ xor;
        let flush = if k == 2 { self.ftz_c } else { self.ftz_ab };
        sel(flush & mask(v & self.f.exp == 0), v & 0x8000, v)
    }

    /// The NaN of a lane whose result is NaN: canonical, or the first NaN operand quieted
    /// (a and b only where `ab` is all ones).
    #[inline(always)]
    fn nan(&self, a: u16, b: u16, c: u16, ab: u16) -> u16 {
        let (exp, q) = (self.f.exp, self.f.quiet);
        let a_nan = mask(a & 0x7fff > exp) & ab;
        let b_nan = mask(b & 0x7fff > exp) & ab;
        let c_nan = mask(c & 0x7fff > exp);
        sel(self.canonical, 0x7fff, sel(a_nan, a | q, sel(b_nan, b | q, sel(c_nan, c | q, 0x7fff))))
    }

    /// Whether only the NaN rule applies after the rounding: no flushing, .FMZ, .SAT,
    /// .RELU or zero-sign override ([`Fma::lane_raw`] without `FULL`).
    fn plain(&self) -> bool {
        self.plain_arith() && self.sat == 0 && self.relu == 0
    }

    /// Whether the arithmetic is plain: no flushing, .FMZ or zero-sign override (.SAT and
    /// .RELU, which only look at the rounded result, may be set).
    fn plain_arith(&self) -> bool {
        self.ftz_out == 0 && !self.fmz && !self.ftz_prod && self.zero_override == 0
    }

    /// One lane on source values already selected, modified and flushed. Straight-line
    /// code (masks and selects, no branch on the values) so the batch loop vectorises.
    #[inline(always)]
    fn lane_raw<const FULL: bool>(&self, a: u16, b: u16, c: u16) -> u16 {
        let f = &self.f;
        let exp = f.exp;
        let (fa, fb, fc) = (f.widen(a), f.widen(b), f.widen(c));
        // the product, exact; .FMZ's zero product; a flushed tiny product
        let zero_factor = (a & 0x7fff == 0) | (b & 0x7fff == 0);
        let fmz_zero = FULL && self.fmz & zero_factor;
        let prod = fa * fb;
        let fmz_value = if self.fmz_xor_sign { ((a ^ b) as u64 & 0x8000) << 48 } else { 0 };
        let pb = sel64(fmz_zero, fmz_value, prod.to_bits());
        let tiny_prod = FULL && self.ftz_prod & (f64::from_bits(pb).abs() < f.min_normal);
        let p = f64::from_bits(sel64(tiny_prod, pb & 1 << 63, pb));
        // TwoSum: s + e = p + fc exactly (e is NaN when s is Inf or NaN)
        let s = p + fc;
        let bb = s - p;
        let e = (p - (s - bb)) + (fc - bb);
        // round to odd: onto the odd neighbour toward e when s is inexact and even
        let sb = s.to_bits();
        let finite = sb & 0x7ff0_0000_0000_0000 != 0x7ff0_0000_0000_0000;
        let adjust = finite & (e != 0.0) & (sb & 1 == 0);
        let step = sel64((e.to_bits() ^ sb) >> 63 == 0, 1, u64::MAX);
        let ro = f64::from_bits(sb.wrapping_add(sel64(adjust, step, 0)));
        let mut r = f.round(ro);
        if !FULL {
            return sel(mask(s.is_nan()), self.nan(a, b, c, 0xffff), r);
        }
        // an exact zero sum: IEEE's sign is f64's own; or the policy's
        let exact_zero = mask((s == 0.0) & (e == 0.0));
        let zero = (((pb >> 48) as u16 | c) & 0x8000) & self.zero_or;
        r = sel(exact_zero & self.zero_override, zero, r);
        r = sel(mask(fmz_zero) & self.fmz_c_direct, c, r);
        // NaN: an operand (a, b not under an .FMZ zero product) or 0 x Inf, Inf - Inf
        r = sel(mask(s.is_nan()), self.nan(a, b, c, mask(!fmz_zero)), r);
        // .FTZ: a tiny result to zero of its sign (tininess before rounding: |x| < min
        // exactly when |RO(x)| < min, see the module's text)
        let tiny = sel(self.after_rounding, mask(r & exp == 0), mask(ro.abs() < f.min_normal));
        r = sel(self.ftz_out & tiny, r & 0x8000, r);
        // .SAT and .RELU
        let is_nan = mask(r & 0x7fff > exp);
        let neg = mask(r & 0x8000 != 0);
        let neg_zero = mask(r == 0x8000);
        let sat = sel(is_nan, r & !self.sat_nan_zero, sel(neg, 0x8000 & self.sat_keep_neg_zero & neg_zero, sel(mask(r > f.one), f.one, r)));
        r = sel(self.sat, sat, r);
        let relu = sel(is_nan, sel(self.relu_nan_pass, r, self.relu_nan_value), sel(neg, 0x8000 & self.relu_keep_neg_zero & neg_zero, r));
        sel(self.relu, relu, r)
    }

    /// One lane: `a`, `b`, `c` are the lane's halves before |x| / -x (half selection is
    /// the caller's here), flushed and combined as the module's text says.
    #[inline(always)]
    pub fn lane(&self, a: u16, b: u16, c: u16) -> u16 {
        self.lane_raw::<true>(self.modded(0, a), self.modded(1, b), self.modded(2, c))
    }

    /// The destination's 32 bits for the source words `a`, `b`, `c` (lane 0 = bits 0..15).
    #[inline(always)]
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let mut out = 0;
        for l in 0..2 {
            let r = self.lane_raw::<true>(self.src(0, a, l), self.src(1, b, l), self.src(2, c, l));
            out |= (r as u32) << (16 * l);
        }
        out
    }

    /// [`Fma::eval`] over slices: `out[i]` is the result for `(a[i], b[i], c[i])`. Works in
    /// blocks of lanes (select and modify, then the straight-line lane arithmetic as one
    /// loop the compiler vectorises, AVX2 where the CPU has it). Panics if the four slices
    /// differ in length (a caller's bug, not input).
    pub fn batch(&self, a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
        assert!(
            a.len() == b.len() && b.len() == c.len() && c.len() == out.len(),
            "eval_fma_batch: {} / {} / {} operands, {} results",
            a.len(),
            b.len(),
            c.len(),
            out.len()
        );
        #[cfg(target_arch = "x86_64")]
        if let Some(done) = self.plain_x8(avx2::Words::each(a), b, avx2::Words::each(c), out, false) {
            for (((o, &a), &b), &c) in out[done..].iter_mut().zip(&a[done..]).zip(&b[done..]).zip(&c[done..]) {
                *o = self.eval(a, b, c);
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX2 and F16C, checked just above
            unsafe { self.blocks_avx2(a, b, c, out) };
            return;
        }
        self.blocks(a, b, c, out);
    }

    /// [`Fma::batch`] on a row: `out[i]` is the result for `(a, b[i], c)`, operands 1 and 3
    /// the same word for every input (exhaustive mode's). The vector kernels read the two
    /// fixed words in place (BF16 through `bf16row.rs` where it applies); elsewhere
    /// `scratch` holds their copies. Panics if `out` is shorter than `b`.
    pub fn batch_row(&self, a: u32, b: &[u32], c: u32, out: &mut [u32], scratch: &mut Vec<u32>) {
        assert!(out.len() >= b.len(), "Fma::batch_row: {} results for {} inputs", out.len(), b.len());
        let (n, out) = (b.len(), &mut out[..b.len()]);
        #[cfg(target_arch = "x86_64")]
        {
            if self.f.bf16 && self.plain_arith() && bf16row::available() {
                // SAFETY: the CPU has what bf16row::available checks; BF16, plain arithmetic
                if unsafe { bf16row::row(self, a, b, c, out) }.is_some() {
                    return;
                }
            }
            let (fa, fc) = ([a; avx2::STEP], [c; avx2::STEP]);
            if let Some(done) = self.plain_x8(avx2::Words::fixed(&fa), b, avx2::Words::fixed(&fc), out, true) {
                for (o, &b) in out[done..].iter_mut().zip(&b[done..]) {
                    *o = self.eval(a, b, c);
                }
                return;
            }
        }
        scratch.clear();
        scratch.resize(n, a);
        scratch.resize(2 * n, c);
        let (aw, cw) = scratch.split_at(n);
        self.batch(aw, b, cw, out);
    }

    /// The AVX2 kernels for plain arithmetic ([`Fma::plain_arith`]), or their AVX-512 form
    /// where the CPU has AVX-512 FP16: FP16's fused multiply-add in hardware, and for a
    /// `row` (a sweep's) BF16 in f64 8 lanes a vector, whose cost does not depend on the
    /// values (the FMA kernel, faster on random operands, is three times slower on rows
    /// whose operand 3 has a subnormal half: `avx2::bf16_f64_x8`). `Some(done)`: the words
    /// they did (the caller does the rest); `None` where they do not apply (modifiers, or a
    /// CPU without AVX2 and F16C). `b` and `out` are as long, and so is an operand given
    /// by [`avx2::Words::each`].
    #[cfg(target_arch = "x86_64")]
    fn plain_x8(&self, a: avx2::Words, b: &[u32], c: avx2::Words, out: &mut [u32], row: bool) -> Option<usize> {
        assert_eq!(b.len(), out.len(), "Fma::plain_x8: operand 2 and results");
        if !(self.plain_arith() && std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c")) {
            return None;
        }
        Some(if super::ph::available() && (!self.f.bf16 || row) {
            // SAFETY: the CPU has what ph::available checks; plain arithmetic; the operands
            // as the caller says
            unsafe { avx2::plain_ph(self, a, b, c, out) }
        } else if self.f.bf16 && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2, F16C and FMA (checked); plain arithmetic; BF16; the
            // operands as the caller says
            unsafe { avx2::plain_bf16_fma(self, a, b, c, out) }
        } else {
            // SAFETY: the CPU has AVX2 and F16C (checked); plain arithmetic; the operands as
            // the caller says
            unsafe { avx2::plain(self, a, b, c, out) }
        })
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,f16c")]
    fn blocks_avx2(&self, a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
        self.blocks(a, b, c, out)
    }

    /// The blocks of the portable path (and of lanes with modifiers).
    #[inline(always)]
    fn blocks(&self, a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
        let mut la = [0u16; 2 * BLOCK];
        let mut lb = [0u16; 2 * BLOCK];
        let mut lc = [0u16; 2 * BLOCK];
        let mut r = [0u16; 2 * BLOCK];
        let plain = self.plain();
        for (((a, b), c), out) in a.chunks(BLOCK).zip(b.chunks(BLOCK)).zip(c.chunks(BLOCK)).zip(out.chunks_mut(BLOCK)) {
            let n = a.len();
            // lane 0 of input i at i, lane 1 at n + i
            for i in 0..n {
                la[i] = self.src(0, a[i], 0);
                la[n + i] = self.src(0, a[i], 1);
                lb[i] = self.src(1, b[i], 0);
                lb[n + i] = self.src(1, b[i], 1);
                lc[i] = self.src(2, c[i], 0);
                lc[n + i] = self.src(2, c[i], 1);
            }
            let (la, lb, lc, r) = (&la[..2 * n], &lb[..2 * n], &lc[..2 * n], &mut r[..2 * n]);
            if plain {
                for k in 0..2 * n {
                    r[k] = self.lane_raw::<false>(la[k], lb[k], lc[k]);
                }
            } else {
                for k in 0..2 * n {
                    r[k] = self.lane_raw::<true>(la[k], lb[k], lc[k]);
                }
            }
            for i in 0..n {
                out[i] = r[i] as u32 | (r[n + i] as u32) << 16;
            }
        }
    }
}

/// One lane of `op` under `p`: `a * b + c` on lane values (|x| and -x applied, half
/// selects ignored: a lane is already one half).
pub fn fma_lane(op: &FmaOp, p: &Policy, a: u16, b: u16, c: u16) -> Result<u16, Undefined> {
    Ok(Fma::new(op, p)?.lane(a, b, c))
}

/// The destination register's 32 bits after HFMA2 with modifiers `op` reads `a`, `b` and
/// `c` (operands 1, 2, 3), under policy `p` (usually [`Policy::current`]).
pub fn eval_fma(op: &FmaOp, p: &Policy, a: u32, b: u32, c: u32) -> Result<u32, Undefined> {
    Ok(Fma::new(op, p)?.eval(a, b, c))
}

/// [`eval_fma`] for many operand triples: `out[i]` is the result for `(a[i], b[i], c[i])`.
/// Panics if the slices differ in length (a caller's bug, not input).
pub fn eval_fma_batch(op: &FmaOp, p: &Policy, a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) -> Result<(), Undefined> {
    Fma::new(op, p)?.batch(a, b, c, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(format: Format) -> FmaOp {
        FmaOp { format, ..Default::default() }
    }

    #[test]
    fn widen_is_exact_for_every_f16() {
        for v in 0..=u16::MAX {
            let w = F16.widen(v);
            let want = half::f16::from_bits(v).to_f64();
            assert!(w.to_bits() == want.to_bits() || (w.is_nan() && want.is_nan()), "{v:#06x}: {w} vs {want}");
        }
    }

    /// rustc_apfloat's conversion of an f64 to the lane format, round to nearest even.
    fn apfloat_round(f: &Fmt, x: f64) -> u16 {
        use rustc_apfloat::ieee::{BFloat, Double, Half};
        use rustc_apfloat::{Float, FloatConvert, Round};
        let d = Double::from_bits(x.to_bits() as u128);
        let mut lost = false;
        if f.bf16 {
            FloatConvert::<BFloat>::convert_r(d, Round::NearestTiesToEven, &mut lost).value.to_bits() as u16
        } else {
            FloatConvert::<Half>::convert_r(d, Round::NearestTiesToEven, &mut lost).value.to_bits() as u16
        }
    }

    /// `round` on every lane value, each midpoint between neighbours and the f64 values
    /// just around it, against rustc_apfloat.
    #[test]
    fn round_is_apfloat_on_every_value_and_midpoint() {
        for f in [F16, BF16] {
            for v in 0..0x7fffu16 {
                let x = f.widen(v);
                if !x.is_finite() {
                    continue;
                }
                assert_eq!(f.round(x), v, "{v:#06x}");
                assert_eq!(f.round(-x), v | 0x8000, "-{v:#06x}");
                // the next value up; past the largest finite, the overflow threshold's neighbour
                let next = if (v + 1) & 0x7fff == f.exp { x + (x - f.widen(v - 1)) } else { f.widen(v + 1) };
                let mid = (x + next) / 2.0;
                for y in [mid, f64::from_bits(mid.to_bits() + 1), f64::from_bits(mid.to_bits() - 1)] {
                    assert_eq!(f.round(y), apfloat_round(&f, y), "{y:e}");
                    assert_eq!(f.round(-y), apfloat_round(&f, -y), "-{y:e}");
                }
            }
        }
    }

    #[test]
    fn small_cases() {
        let p = Policy::current();
        let f16 = op(Format::F16);
        // (1 x 2 + 3, 2 x 2 + -4) = (5, +0)
        assert_eq!(eval_fma(&f16, p, 0x4000_3c00, 0x4000_4000, 0xc400_4200), Ok(0x0000_4500));
        // -0 x 1 + -0 = -0; +0 x 1 + -0 = +0
        assert_eq!(eval_fma(&f16, p, 0x0000_8000, 0x3c00_3c00, 0x8000_8000), Ok(0x0000_8000));
        // 0 x Inf + 1 = NaN; Inf + -Inf = NaN
        assert_eq!(eval_fma(&f16, p, 0x7c00_0000, 0x3c00_7c00, 0xfc00_3c00), Ok(0x7fff_7fff));
        // once rounded: (1 + 2^-10)(1 + 2^-9) - 1 = 3 x 2^-10 + 2^-19 exactly (rounding the
        // product first would lose the 2^-19); (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20 is a tie
        assert_eq!(fma_lane(&f16, p, 0x3c01, 0x3c02, 0xbc00), Ok(0x1a01));
        assert_eq!(fma_lane(&f16, p, 0x3c01, 0x3c01, 0xbc00), Ok(0x1800));
        // BF16: (1 + 2^-7)^2 + -(1 + 2^-6) = 2^-14
        assert_eq!(fma_lane(&op(Format::Bf16), p, 0x3f81, 0x3f81, 0xbf82), Ok(0x3880));
    }

    #[test]
    fn undefined_modifiers_are_named() {
        let p = Policy::current();
        assert_eq!(eval_fma(&FmaOp { oob: true, ..op(Format::F16) }, p, 0, 0, 0), Err(Undefined::Fma(why::OOB)));
        assert_eq!(eval_fma(&op(Format::F32), p, 0, 0, 0), Err(Undefined::Fma(why::F32)));
        assert_eq!(eval_fma(&FmaOp { sat: true, relu: true, ..op(Format::F16) }, p, 0, 0, 0), Err(Undefined::Fma(why::SAT_RELU)));
        assert_eq!(eval_fma(&op(Format::Invalid3), p, 0, 0, 0), Err(Undefined::Format(Format::Invalid3)));
        let inv = SrcMods { swizzle: Swizzle::Invalid1, ..Default::default() };
        assert_eq!(eval_fma(&FmaOp { c_mods: inv, ..op(Format::F16) }, p, 0, 0, 0), Err(Undefined::Swizzle { operand: 3 }));
        assert_eq!(eval_fma(&FmaOp { flush: Flush::Invalid3, ..op(Format::F16) }, p, 0, 0, 0), Err(Undefined::Flush));
    }
}
