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
use super::{mods_masks, shifts, Policy, Undefined};
use crate::isa::{Flush, Format, SrcMods, Swizzle};

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

/// Why an [`FmaOp`] has no value (the texts of [`Undefined::Fma`]).
pub mod why {
    pub const OOB: &str = ".OOB: the PTX ISA's fma.oob forces +0 for an operand that is the tensor unit's OOB NaN, whose bit pattern no document gives";
    pub const F32: &str = ".F32: no document or compiler output says what HFMA2.F32 computes";
    pub const SAT_RELU: &str = ".SAT with .RELU: the PTX ISA has no fma with both, so their order is not documented";
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

/// 2^1008: rescales an FP16 bit pattern placed in an f64's exponent and fraction fields.
const TWO_1008: f64 = f64::from_bits((1023 + 1008) << 52);

impl Fmt {
    /// The lane value as an f64, exactly (Inf and NaN included; a NaN's payload is not
    /// kept, the NaN rule uses the lane bits).
    #[inline(always)]
    fn widen(&self, v: u16) -> f64 {
        if self.bf16 {
            f32::from_bits((v as u32) << 16) as f64
        } else {
            // exponent field E and fraction f land in the f64's fields: 2^(E-1023) x 1.f
            // (E > 0) or f x 2^-1032 (E = 0), times 2^1008 is the FP16 value exactly
            let mag = (v & 0x7fff) as u64;
            let sign = ((v as u64) & 0x8000) << 48;
            let finite = f64::from_bits(mag << 42) * TWO_1008;
            let bits = if mag >= 0x7c00 { 0x7ff0_0000_0000_0000 | (mag & 0x3ff) << 42 } else { finite.to_bits() };
            f64::from_bits(bits | sign)
        }
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
        let r = (q - e + 52 - (self.prec - 1)).min(63) as u32;
        let kept = m >> r;
        let rem = m & ((1u64 << r) - 1);
        let half = 1u64 << (r - 1);
        let up = (rem > half) | ((rem == half) & (kept & 1 == 1));
        let kept = kept + up as u64;
        // biased exponent - 1 above the significand M (implicit bit included): a carry
        // out of M, a subnormal M reaching the smallest normal and overflow all fall out
        let enc = ((((q + self.bias - 1) as u64) << (self.prec - 1)) + kept).min(self.exp as u64);
        sign | enc as u16
    }

    #[inline(always)]
    fn is_nan(&self, v: u16) -> bool {
        v & 0x7fff > self.exp
    }
}

/// An [`FmaOp`] decided once under a [`Policy`]: what every lane needs.
#[derive(Clone, Copy, Debug)]
pub struct Fma {
    f: Fmt,
    mods: [(u16, u16); 3],
    sh: [[u32; 2]; 3],
    /// Flush subnormal factors; the addend; a tiny exact product; a tiny result.
    ftz_ab: bool,
    ftz_c: bool,
    ftz_prod: bool,
    ftz_out: bool,
    after_rounding: bool,
    /// .FMZ's zero product (None: no .FMZ special case).
    fmz: Option<FmzZero>,
    fmz_addend_ieee: bool,
    canonical: bool,
    zero_sum: ZeroSum,
    sat: bool,
    sat_nan_zero: bool,
    sat_neg_zero_to_plus: bool,
    relu: bool,
    relu_nan: ReluNan,
    relu_neg_zero_to_plus: bool,
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
            if m.swizzle == Swizzle::Invalid1 {
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
            ftz_ab: ftz && p.ftz_inputs,
            ftz_c: ftz && p.ftz_inputs && p.fma_ftz_addend,
            ftz_prod: ftz && p.fma_ftz_product,
            ftz_out: ftz,
            after_rounding: p.ftz_after_rounding,
            fmz: if fmz { Some(p.fmz) } else { None },
            fmz_addend_ieee: p.fma_fmz_addend_ieee,
            canonical: p.nan_canonical,
            zero_sum: p.fma_zero_sum,
            sat: op.sat && (!f.bf16 || p.sat_bf16),
            sat_nan_zero: p.sat_nan_to_zero,
            sat_neg_zero_to_plus: p.sat_neg_zero_to_plus,
            relu: op.relu,
            relu_nan: p.fma_relu_nan,
            relu_neg_zero_to_plus: p.fma_relu_neg_zero_to_plus,
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
        if flush && v & self.f.exp == 0 {
            v & 0x8000
        } else {
            v
        }
    }

    /// The lane's NaN: canonical, or the first NaN operand quieted.
    #[inline(always)]
    fn nan(&self, ops: &[u16]) -> u16 {
        if self.canonical {
            return 0x7fff;
        }
        ops.iter().find(|&&v| self.f.is_nan(v)).map_or(0x7fff, |&v| v | self.f.quiet)
    }

    /// One lane on source values already selected, modified and flushed.
    #[inline(always)]
    fn lane_raw(&self, a: u16, b: u16, c: u16) -> u16 {
        let f = &self.f;
        let (fa, fb, fc) = (f.widen(a), f.widen(b), f.widen(c));
        let mut p = fa * fb;
        let zero_factor = a & 0x7fff == 0 || b & 0x7fff == 0;
        let fmz_zero = self.fmz.is_some() && zero_factor;
        if fmz_zero {
            p = match self.fmz {
                Some(FmzZero::XorSign) => f64::from_bits(((a ^ b) as u64 & 0x8000) << 48),
                _ => 0.0,
            };
            if !self.fmz_addend_ieee {
                return self.finish(if f.is_nan(c) { self.nan(&[c]) } else { c }, fc.abs() < f.min_normal);
            }
        } else if self.ftz_prod && p != 0.0 && p.abs() < f.min_normal {
            p = f64::from_bits(p.to_bits() & 1 << 63);
        }
        let s = p + fc;
        if s.is_nan() {
            // a NaN factor under an .FMZ zero product does not count
            let r = if fmz_zero { self.nan(&[c]) } else { self.nan(&[a, b, c]) };
            return self.finish(r, false);
        }
        if s.is_infinite() {
            return self.finish(((s.to_bits() >> 48) as u16 & 0x8000) | f.exp, false);
        }
        // TwoSum: s + e = p + fc exactly
        let bb = s - p;
        let e = (p - (s - bb)) + (fc - bb);
        let r = if e == 0.0 {
            if s == 0.0 {
                // an exact zero sum
                let (ps, cs) = (p.is_sign_negative(), fc.is_sign_negative());
                return self.finish(
                    match self.zero_sum {
                        ZeroSum::Ieee => ((s.to_bits() >> 48) as u16) & 0x8000,
                        ZeroSum::Plus => 0,
                        ZeroSum::MinusUnlessBothPlus => ((ps || cs) as u16) << 15,
                    },
                    false,
                );
            }
            s
        } else {
            // round to odd: onto the odd neighbour toward e when s's significand is even
            let bits = s.to_bits();
            let toward_up = (e > 0.0) == (s > 0.0);
            let odd = if bits & 1 == 1 {
                bits
            } else if toward_up {
                bits + 1
            } else {
                bits - 1
            };
            f64::from_bits(odd)
        };
        self.finish(f.round(r), r.abs() < f.min_normal)
    }

    /// A rounded lane value after flushing, .SAT and .RELU; `tiny_exact`: the exact result
    /// is below the smallest normal in magnitude (tininess before rounding).
    #[inline(always)]
    fn finish(&self, r: u16, tiny_exact: bool) -> u16 {
        let f = &self.f;
        let mut r = r;
        if self.ftz_out && r & 0x7fff != 0 && r & 0x7fff < f.exp {
            let tiny = if self.after_rounding { r & f.exp == 0 } else { tiny_exact };
            if tiny {
                r &= 0x8000;
            }
        }
        if self.sat {
            r = if f.is_nan(r) {
                if self.sat_nan_zero {
                    0
                } else {
                    r
                }
            } else if r == 0x8000 {
                if self.sat_neg_zero_to_plus {
                    0
                } else {
                    r
                }
            } else if r & 0x8000 != 0 {
                0
            } else {
                r.min(f.one)
            };
        }
        if self.relu {
            r = if f.is_nan(r) {
                match self.relu_nan {
                    ReluNan::Canonical => 0x7fff,
                    ReluNan::Pass => r,
                    ReluNan::Zero => 0,
                }
            } else if r == 0x8000 {
                if self.relu_neg_zero_to_plus {
                    0
                } else {
                    r
                }
            } else if r & 0x8000 != 0 {
                0
            } else {
                r
            };
        }
        r
    }

    /// One lane: `a`, `b`, `c` are the lane's halves before |x| / -x (half selection is
    /// the caller's here), flushed and combined as the module's text says.
    #[inline(always)]
    pub fn lane(&self, a: u16, b: u16, c: u16) -> u16 {
        self.lane_raw(self.modded(0, a), self.modded(1, b), self.modded(2, c))
    }

    /// The destination's 32 bits for the source words `a`, `b`, `c` (lane 0 = bits 0..15).
    #[inline(always)]
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let mut out = 0;
        for l in 0..2 {
            let r = self.lane_raw(self.src(0, a, l), self.src(1, b, l), self.src(2, c, l));
            out |= (r as u32) << (16 * l);
        }
        out
    }

    /// [`Fma::eval`] over slices: `out[i]` is the result for `(a[i], b[i], c[i])`. Panics
    /// if the four slices differ in length (a caller's bug, not input).
    pub fn batch(&self, a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
        assert!(
            a.len() == b.len() && b.len() == c.len() && c.len() == out.len(),
            "eval_fma_batch: {} / {} / {} operands, {} results",
            a.len(),
            b.len(),
            c.len(),
            out.len()
        );
        for i in 0..a.len() {
            out[i] = self.eval(a[i], b[i], c[i]);
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
