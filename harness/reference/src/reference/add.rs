//! The bit-exact software reference for the arithmetic of **HADD2**, the packed two-lane
//! FP16/BF16 add, independent of the [`crate::isa::Inst`] instruction type: an [`AddOp`]
//! names the modifiers, [`eval_add`] gives the destination register's 32 bits for two source
//! words (the values the operands read: RZ reads 0, an immediate is its packed 32 bits).
//! Guard predicates, RZ destinations and operand forms are the caller's.
//!
//! # Per lane
//!
//! Each lane: select a half of each source ([`Swizzle`]), |x| then -x (`abs-neg-order`),
//! flush subnormal inputs under .FTZ (`ftz-inputs`, `flush-bf16`), add in f32, round once to
//! the lane format (round to nearest even, overflow to Inf, gradual underflow), then:
//! a NaN operand or result gives the NaN of `nan-result` (Inf + -Inf is a NaN made from
//! non-NaN operands: 0x7fff under either option); an exact zero sum takes the sign
//! `add-signed-zero` says (IEEE 754: +0, except -0 + -0 = -0); under .FTZ a subnormal sum is
//! flushed to zero (`add-ftz-sign`: of the sum's sign); .SAT clamps to [+0, 1] with the
//! same `sat-nan`, `sat-negative-zero` and `sat-bf16` entries as HMUL2.
//!
//! `ftz-tininess` has no effect on a sum: the exact sum of two FP16 values is a multiple of
//! 2^-24 (BF16: 2^-133), and every such multiple below the smallest normal in magnitude is
//! an FP16 (BF16) subnormal. So a sum is tiny before rounding exactly when it is tiny after,
//! and a tiny sum is never rounded at all.
//!
//! # Why f32 addition then one rounding is the correctly rounded sum
//!
//! The f32 addition rounds the exact sum s to 24 bits, and `from_f32` rounds that again, to
//! 11 (FP16) or 8 (BF16) bits. Double rounding to nearest is innocuous when the first
//! precision p' and the second p satisfy p' >= 2p + 2 (Figueroa, "When is double rounding
//! innocuous?", 1995; p' >= 2p + 1 suffices for addition): 24 >= 24 for FP16, 24 >= 18 for
//! BF16. The theorem assumes neither rounding is in the other format's underflow or
//! overflow range, so check the ends:
//! - underflow: as above, a sum below the lane format's smallest normal is exact, and exact
//!   in f32 too (a multiple of 2^-24 or 2^-133, with few bits), so no rounding happens at
//!   all. This covers BF16, whose subnormals are f32 subnormals (shared exponent range):
//!   f32's subnormal grid (2^-149) is finer than BF16's (2^-133).
//! - overflow: FP16 sums (at most 131008) are far inside f32. A BF16 sum can overflow f32
//!   (2 x 0x7f7f), but BF16's overflow threshold 2^128 - 2^119 is below f32's and is an f32
//!   value; rounding is monotonic, so f32 gives Inf or a value at or above the threshold
//!   exactly when the exact sum is at or above it. A sum just below the threshold that
//!   f32 rounded up onto it would be a double-rounding error; by the theorem it cannot
//!   happen, since the threshold is a BF16 midpoint like any other.
//!
//! The theorem is the argument, not the proof: `harness/tests/reference_add_exhaustive.rs`
//! compares every one of the 2^32 operand pairs of each format with rustc_apfloat's
//! correctly rounded `add_r`.
//!
//! # .F32
//!
//! `HADD2.F32 Rd, Ra, Rb` writes one FP32 value to the whole 32-bit destination: the sum of
//! the two halves that feed lane 0 after half selection and modifiers (`add-f32-lane`;
//! ptxas only emits it with broadcast selects such as `-RZ, R4.H0_H0` for cvt.f32.f16, where
//! both lanes agree). FP16 only: nvdisasm rejects `.BF16_V2` with `.F32`, which gives
//! [`Undefined::AddBf16F32`]. The FP32 sum of two FP16 values is not always exact (65504 +
//! 2^-24 needs 40 bits); it is rounded once, to nearest even, as f32 addition of the two
//! exactly widened halves does (the exhaustive test checks it against apfloat `Single`). It
//! is never subnormal (a nonzero multiple of 2^-24) and never overflows. A NaN result is
//! `add-f32-nan`'s; zero sums follow `add-signed-zero`; .FTZ flushes FP16 subnormal inputs
//! (`add-f32-ftz`, with `ftz-inputs`); .SAT clamps to [+0, 1.0] (`add-f32-sat`, with
//! `sat-nan` and `sat-negative-zero`).
//!
//! # Flush field
//!
//! [`Flush::None`] and [`Flush::Ftz`]; [`Flush::Fmz`] and [`Flush::Invalid3`] give
//! [`Undefined::AddFlush`] (whether HADD2 has .FMZ is not settled).

use super::policy::{F32Nan, ZeroSum};
use super::{bf16_rne, mask, mods_masks, sel, shifts, Policy, Undefined, BLOCK};
use crate::isa::{Flush, Format, SrcMods, Swizzle};
use half::f16;
use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};

/// The modifiers of one HADD2: what the arithmetic depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AddOp {
    /// FP16 or BF16 (`.BF16_V2`); an INVALIDn value is [`Undefined::Format`].
    pub format: Format,
    /// Operand 1's half select, |x| and -x.
    pub a_mods: SrcMods,
    /// Operand 2's.
    pub b_mods: SrcMods,
    /// None or .FTZ; see the module's text for the other values.
    pub flush: Flush,
    pub sat: bool,
    /// `.F32`: one FP32 sum in the whole destination.
    pub f32_out: bool,
}

/// Everything the lanes need, decided once per [`AddOp`] and [`Policy`].
#[derive(Clone, Copy, Debug)]
struct AddCtx {
    bf16: bool,
    exp: u16,
    quiet: u16,
    one: u16,
    a_and: u16,
    a_xor: u16,
    b_and: u16,
    b_xor: u16,
    a_sh: [u32; 2],
    b_sh: [u32; 2],
    /// .F32: the lane whose halves are added.
    f32_lane: usize,
    f32_out: bool,
    /// Masks (all ones or zero).
    ftz_in: u16,
    ftz_out: u16,
    canonical: u16,
    /// A zero sum's sign: `((a & b) & zero_and) | ((a | b) & zero_or)`.
    zero_and: u16,
    zero_or: u16,
    /// A flushed sum: `r & ftz_sign`.
    ftz_sign: u16,
    sat: u16,
    sat_nan_zero: u16,
    sat_keep_neg_zero: u16,
    f32_nan: F32Nan,
}

impl AddCtx {
    fn new(op: &AddOp, p: &Policy) -> Result<AddCtx, Undefined> {
        let bf16 = match op.format {
            Format::F16 => false,
            Format::Bf16 => true,
            f => return Err(Undefined::Format(f)),
        };
        if !matches!(op.flush, Flush::None | Flush::Ftz) {
            return Err(Undefined::AddFlush(op.flush));
        }
        if op.a_mods.swizzle == Swizzle::Invalid1 {
            return Err(Undefined::Swizzle { operand: 1 });
        }
        if op.b_mods.swizzle == Swizzle::Invalid1 {
            return Err(Undefined::Swizzle { operand: 2 });
        }
        if bf16 && op.f32_out {
            return Err(Undefined::AddBf16F32);
        }
        let ftz = op.flush == Flush::Ftz && (!bf16 || p.flush_bf16);
        let (a_and, a_xor) = mods_masks(op.a_mods.neg, op.a_mods.abs, p);
        let (b_and, b_xor) = mods_masks(op.b_mods.neg, op.b_mods.abs, p);
        let (zero_and, zero_or) = match p.add_zero_sum {
            ZeroSum::Ieee => (0x8000, 0),
            ZeroSum::Plus => (0, 0),
            ZeroSum::MinusUnlessBothPlus => (0, 0x8000),
        };
        let sat = op.sat && if op.f32_out { p.add_f32_sat } else { !bf16 || p.sat_bf16 };
        Ok(AddCtx {
            bf16,
            exp: if bf16 { 0x7f80 } else { 0x7c00 },
            quiet: if bf16 { 0x0040 } else { 0x0200 },
            one: if bf16 { 0x3f80 } else { 0x3c00 },
            a_and,
            a_xor,
            b_and,
            b_xor,
            a_sh: shifts(op.a_mods.swizzle),
            b_sh: shifts(op.b_mods.swizzle),
            f32_lane: if p.add_f32_lane0 { 0 } else { 1 },
            f32_out: op.f32_out,
            ftz_in: mask(ftz && p.ftz_inputs && (!op.f32_out || p.add_f32_ftz_inputs)),
            ftz_out: mask(ftz && !op.f32_out),
            canonical: mask(p.nan_canonical),
            zero_and,
            zero_or,
            ftz_sign: if p.add_ftz_keeps_sign { 0x8000 } else { 0 },
            sat: mask(sat),
            sat_nan_zero: mask(p.sat_nan_to_zero),
            sat_keep_neg_zero: mask(!p.sat_neg_zero_to_plus),
            f32_nan: p.add_f32_nan,
        })
    }

    /// One source half after select, modifiers and input flushing.
    #[inline(always)]
    fn src(&self, word: u32, sh: u32, and: u16, xor: u16) -> u16 {
        let v = ((word >> sh) as u16 & and) ^ xor;
        sel(self.ftz_in & mask(v & self.exp == 0), v & 0x8000, v)
    }

    #[inline(always)]
    fn a(&self, word: u32, lane: usize) -> u16 {
        self.src(word, self.a_sh[lane], self.a_and, self.a_xor)
    }

    #[inline(always)]
    fn b(&self, word: u32, lane: usize) -> u16 {
        self.src(word, self.b_sh[lane], self.b_and, self.b_xor)
    }

    #[inline(always)]
    fn widen(&self, v: u16) -> f32 {
        if self.bf16 {
            f32::from_bits((v as u32) << 16)
        } else {
            f16::from_bits(v).to_f32()
        }
    }

    #[inline(always)]
    fn round(&self, s: f32) -> u16 {
        if self.bf16 {
            bf16_rne(s)
        } else {
            f16::from_f32(s).to_bits()
        }
    }

    /// A lane after its rounding `r` of `a + b`: NaN, zero sums, .FTZ, .SAT. Straight-line
    /// masks, so the batch loop vectorises.
    #[inline(always)]
    fn finish(&self, a: u16, b: u16, r: u16) -> u16 {
        let exp = self.exp;
        let (is_nan, nan) = self.nan_rule(a, b, r);
        // a rounded zero is an exact zero: a tiny sum is exact
        let zero = mask(r & 0x7fff == 0);
        let tiny = mask(r & exp == 0) & !zero;
        let mut r = sel(zero, ((a & b) & self.zero_and) | ((a | b) & self.zero_or), r);
        r = sel(self.ftz_out & tiny, r & self.ftz_sign, r);
        r = sel(is_nan, nan, r);
        let neg = mask(r & 0x8000 != 0);
        let sat = sel(
            mask(r & 0x7fff > exp),
            r & !self.sat_nan_zero,
            sel(neg, 0x8000 & self.sat_keep_neg_zero & mask(r == 0x8000), sel(mask(r > self.one), self.one, r)),
        );
        sel(self.sat, sat, r)
    }

    /// Whether [`AddCtx::finish`] reduces to the NaN rule for a sum rounded once as IEEE 754
    /// says (the hardware FP16 sum, and the f32 paths'): no flushing, no .SAT, and the IEEE
    /// sign of an exact zero sum (-0 only from two -0s under round to nearest).
    fn ieee_plain(&self) -> bool {
        self.ftz_out == 0 && self.sat == 0 && self.zero_and == 0x8000 && self.zero_or == 0
    }

    /// [`AddCtx::finish`] when [`AddCtx::ieee_plain`]: only the NaN rule applies.
    #[inline(always)]
    fn finish_nan(&self, a: u16, b: u16, r: u16) -> u16 {
        let (is_nan, nan) = self.nan_rule(a, b, r);
        sel(is_nan, nan, r)
    }

    /// The NaN rule for operands `a`, `b` and rounded sum `r`: where it applies (all ones
    /// where an operand or `r` is a NaN) and the NaN it gives (canonical, or the first NaN
    /// operand quieted).
    #[inline(always)]
    fn nan_rule(&self, a: u16, b: u16, r: u16) -> (u16, u16) {
        let exp = self.exp;
        let a_nan = mask(a & 0x7fff > exp);
        let b_nan = mask(b & 0x7fff > exp);
        let r_nan = mask(r & 0x7fff > exp);
        let nan = sel(self.canonical, 0x7fff, sel(a_nan, a | self.quiet, sel(b_nan, b | self.quiet, 0x7fff)));
        (a_nan | b_nan | r_nan, nan)
    }

    /// The .F32 result from the added halves `a`, `b` (FP16) and their f32 sum `s`.
    #[inline(always)]
    fn finish_f32(&self, a: u16, b: u16, s: f32) -> u32 {
        let a_nan = a & 0x7fff > 0x7c00;
        let b_nan = b & 0x7fff > 0x7c00;
        let mut r = s.to_bits();
        if a_nan || b_nan || s.is_nan() {
            r = match self.f32_nan {
                F32Nan::Canonical => 0x7fff_ffff,
                F32Nan::WidenedF16 => 0x7fff_e000,
                F32Nan::Propagate if a_nan => widen_nan(a),
                F32Nan::Propagate if b_nan => widen_nan(b),
                F32Nan::Propagate => 0x7fff_ffff,
            };
        } else if r & 0x7fff_ffff == 0 {
            r = ((((a & b) & self.zero_and) | ((a | b) & self.zero_or)) as u32) << 16;
        }
        if self.sat != 0 {
            r = if r & 0x7fff_ffff > 0x7f80_0000 {
                if self.sat_nan_zero != 0 {
                    0
                } else {
                    r
                }
            } else if r == 0x8000_0000 {
                if self.sat_keep_neg_zero != 0 {
                    r
                } else {
                    0
                }
            } else if r & 0x8000_0000 != 0 {
                0
            } else {
                r.min(0x3f80_0000)
            };
        }
        r
    }

    fn eval_one(&self, a: u32, b: u32) -> u32 {
        if self.f32_out {
            let (x, y) = (self.a(a, self.f32_lane), self.b(b, self.f32_lane));
            return self.finish_f32(x, y, self.widen(x) + self.widen(y));
        }
        let mut out = 0;
        for l in 0..2 {
            let (x, y) = (self.a(a, l), self.b(b, l));
            out |= (self.finish(x, y, self.round(self.widen(x) + self.widen(y))) as u32) << (16 * l);
        }
        out
    }
}

/// An FP16 NaN converted exactly to FP32 (sign, payload in the top fraction bits), quieted.
#[inline(always)]
fn widen_nan(v: u16) -> u32 {
    ((v as u32 & 0x8000) << 16) | 0x7fc0_0000 | ((v as u32 & 0x3ff) << 13)
}

/// The destination register's 32 bits after HADD2 with modifiers `op` reads `a` (operand 1)
/// and `b` (operand 2), under policy `p` (usually [`Policy::current`]).
/// The modifiers of an HADD2 instruction as an [`AddOp`]: `.F32` is FP16 sources with an
/// FP32 result.
pub fn add_op(inst: &crate::isa::Inst) -> AddOp {
    let (format, f32_out) = match inst.format {
        Format::F32 => (Format::F16, true),
        f => (f, false),
    };
    AddOp { format, a_mods: inst.a_mods, b_mods: inst.b_mods, flush: inst.flush, sat: inst.sat, f32_out }
}

pub fn eval_add(op: &AddOp, p: &Policy, a: u32, b: u32) -> Result<u32, Undefined> {
    Ok(AddCtx::new(op, p)?.eval_one(a, b))
}

/// [`eval_add`] for many operand pairs: `out[i]` is the result for `(a[i], b[i])`. Works in
/// blocks of lanes (select, widen, add, round, fix up, each a straight loop the compiler
/// vectorises; FP16 conversions use F16C through `half` where the CPU has it). Panics if the
/// three slices differ in length (a caller's bug, not input).
pub fn eval_add_batch(op: &AddOp, p: &Policy, a: &[u32], b: &[u32], out: &mut [u32]) -> Result<(), Undefined> {
    assert!(a.len() == b.len() && b.len() == out.len(), "eval_add_batch: {} / {} / {} operands and results", a.len(), b.len(), out.len());
    let c = AddCtx::new(op, p)?;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: the CPU has AVX2 and F16C, checked just above
        unsafe { blocks_avx2(&c, a, b, out) };
        return Ok(());
    }
    blocks::<false>(&c, a, b, out);
    Ok(())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c,fma")]
unsafe fn blocks_avx2(c: &AddCtx, a: &[u32], b: &[u32], out: &mut [u32]) {
    blocks::<true>(c, a, b, out)
}

/// FP16 lanes `a[k] + b[k]`, 8 at a time with F16C: exact widening (VCVTPH2PS, as `half`'s
/// `to_f32`), f32 add, sums in `sum`; with `round` also VCVTPS2PH to nearest (what
/// `half`'s `from_f32` uses on F16C CPUs) in `r`. Inline, where `half`'s slice
/// conversions call a function per 8 lanes. `half` for the tail.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_add_x8(a: &[u16], b: &[u16], sum: &mut [f32], r: &mut [u16], round: bool) {
    use std::arch::x86_64::*;
    let len = a.len().min(b.len()).min(sum.len()).min(r.len());
    let n = len / 8 * 8;
    for k in (0..n).step_by(8) {
        // SAFETY: k + 8 <= n <= len of every slice
        let va = _mm256_cvtph_ps(_mm_loadu_si128(a.as_ptr().add(k) as *const __m128i));
        let vb = _mm256_cvtph_ps(_mm_loadu_si128(b.as_ptr().add(k) as *const __m128i));
        let s = _mm256_add_ps(va, vb);
        _mm256_storeu_ps(sum.as_mut_ptr().add(k), s);
        if round {
            _mm_storeu_si128(r.as_mut_ptr().add(k) as *mut __m128i, _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(s));
        }
    }
    for k in n..len {
        sum[k] = f16::from_bits(a[k]).to_f32() + f16::from_bits(b[k]).to_f32();
        r[k] = f16::from_f32(sum[k]).to_bits();
    }
}

/// The body of [`eval_add_batch`]. `X8`: FP16 through [`f16_add_x8`] (only from
/// [`blocks_avx2`], after the CPU check).
#[inline(always)]
fn blocks<const X8: bool>(c: &AddCtx, a: &[u32], b: &[u32], out: &mut [u32]) {
    let mut la = [0u16; 2 * BLOCK];
    let mut lb = [0u16; 2 * BLOCK];
    let mut fa = [0f32; 2 * BLOCK];
    let mut fb = [0f32; 2 * BLOCK];
    let mut r = [0u16; 2 * BLOCK];
    for ((a, b), out) in a.chunks(BLOCK).zip(b.chunks(BLOCK)).zip(out.chunks_mut(BLOCK)) {
        let n = a.len();
        // lane 0 of input i at i, lane 1 at n + i (.F32: only the added lane, at i)
        let lanes = if c.f32_out { n } else { 2 * n };
        if c.f32_out {
            for i in 0..n {
                la[i] = c.a(a[i], c.f32_lane);
                lb[i] = c.b(b[i], c.f32_lane);
            }
        } else {
            for i in 0..n {
                la[i] = c.a(a[i], 0);
                la[n + i] = c.a(a[i], 1);
                lb[i] = c.b(b[i], 0);
                lb[n + i] = c.b(b[i], 1);
            }
        }
        let (la, lb, fa, fb, r) = (&la[..lanes], &lb[..lanes], &mut fa[..lanes], &mut fb[..lanes], &mut r[..lanes]);
        add_lanes::<X8>(c, la, lb, fa, fb, r, !c.f32_out);
        if c.f32_out {
            for i in 0..n {
                out[i] = c.finish_f32(la[i], lb[i], fa[i]);
            }
            continue;
        }
        for i in 0..n {
            out[i] = r[i] as u32 | (r[n + i] as u32) << 16;
        }
    }
}

/// The f32 sums `fa[k]` = `la[k] + lb[k]` (exact widening; `fb` is scratch) and, with
/// `round`, the finished lanes `r[k]`: the sum rounded once and [`AddCtx::finish`]ed.
/// `X8`: FP16 through [`f16_add_x8`] (only from AVX2 code, after the CPU check).
#[inline(always)]
fn add_lanes<const X8: bool>(c: &AddCtx, la: &[u16], lb: &[u16], fa: &mut [f32], fb: &mut [f32], r: &mut [u16], round: bool) {
    let lanes = la.len();
    let (lb, fa, fb, r) = (&lb[..lanes], &mut fa[..lanes], &mut fb[..lanes], &mut r[..lanes]);
    // FP16 on F16C CPUs: sums and rounded lanes in one pass
    let mut rounded = false;
    if c.bf16 {
        for k in 0..lanes {
            fa[k] = f32::from_bits((la[k] as u32) << 16) + f32::from_bits((lb[k] as u32) << 16);
        }
    } else if X8 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: X8 is true only in AVX2 code called after the CPU check
            unsafe { f16_add_x8(la, lb, fa, r, round) };
            rounded = true;
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("X8 off x86-64");
    } else {
        HalfBitsSliceExt::reinterpret_cast::<f16>(la).convert_to_f32_slice(fa);
        HalfBitsSliceExt::reinterpret_cast::<f16>(lb).convert_to_f32_slice(fb);
        for (x, &y) in fa.iter_mut().zip(fb.iter()) {
            *x += y;
        }
    }
    if !round {
        return;
    }
    if c.bf16 {
        for k in 0..lanes {
            r[k] = bf16_rne(fa[k]);
        }
    } else if !rounded {
        HalfBitsSliceExt::reinterpret_cast_mut::<f16>(r).convert_from_f32_slice(fa);
    }
    finish_lanes(c, la, lb, r);
}

/// `r[k]` = [`AddCtx::finish`] of the rounded sums `r[k]` of `la[k]` + `lb[k]`. A sum
/// rounded once (f32's rounding then the lane format's is innocuous: see the module's
/// text; the hardware FP16 sum) has IEEE 754's zero sign, and a nonzero sum of two lane
/// values rounds to a nonzero: under the IEEE zero rule only the NaN rule is left.
#[inline(always)]
fn finish_lanes(c: &AddCtx, la: &[u16], lb: &[u16], r: &mut [u16]) {
    let n = r.len();
    let (la, lb) = (&la[..n], &lb[..n]);
    if c.ieee_plain() {
        for k in 0..n {
            r[k] = c.finish_nan(la[k], lb[k], r[k]);
        }
    } else {
        for k in 0..n {
            r[k] = c.finish(la[k], lb[k], r[k]);
        }
    }
}

/// HADD2 on symmetric operands, one lane computed for both: where operand 1 and every
/// operand 2 hold one value in both halves (exhaustive mode's a = x·0x10001, b = y·0x10001),
/// every half select reads that value and both lanes compute the same sum (`.F32`, one FP32
/// value, excepted). [`super::MulRow`] for sums; the lanes are [`eval_add_batch`]'s own
/// (`add_lanes`).
/// Built by [`super::add_row`] from an instruction.
#[derive(Clone, Copy, Debug)]
pub struct AddRow {
    c: AddCtx,
    /// Operand 1's register value as read: all of it, or nothing for RZ.
    a_keep: u32,
    /// What its [`Row::word_keep`](super::Row::word_keep) says.
    word_keep: u32,
}

impl AddRow {
    /// `Ok(None)`: `.F32`, whose result is not two like lanes. `a_keep` and `word_keep`: 0
    /// for an RZ operand 1 or destination, else all ones.
    pub(crate) fn new(op: &AddOp, p: &Policy, a_keep: u32, word_keep: u32) -> Result<Option<AddRow>, Undefined> {
        let c = AddCtx::new(op, p)?;
        Ok((!c.f32_out).then_some(AddRow { c, a_keep, word_keep }))
    }
}

impl super::Row for AddRow {
    fn word_keep(&self) -> u32 {
        self.word_keep
    }

    /// `PH`: FP16 sums with [`super::ph::add`].
    #[inline(always)]
    fn blocks<const X8: bool, const PH: bool>(&self, a: u16, b: &[u16], out: &mut [u16]) {
        let c = &self.c;
        let mut la = [0u16; BLOCK];
        let mut lb = [0u16; BLOCK];
        let mut fa = [0f32; BLOCK];
        let mut fb = [0f32; BLOCK];
        let av = c.a((a as u32 * 0x1_0001) & self.a_keep, 0);
        #[cfg(target_arch = "x86_64")]
        if PH && c.ieee_plain() {
            // operand 2's lanes read and modified in the kernel (no input flushing here)
            let src = super::bf16x32::RowSrc { keep: u16::MAX, fixed: 0, and: c.b_and, xor: c.b_xor };
            // SAFETY: PH is true only in Row::eval's AVX-512 FP16 code, after its CPU
            // check; plain lanes under the IEEE zero rule
            unsafe { super::bf16x32::row_for(true, c.bf16, c.canonical != 0, c.quiet, av, src, b, out) };
            return;
        }
        for (b, r) in b.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let n = b.len();
            let (la, lb) = (&mut la[..n], &mut lb[..n]);
            la.fill(av);
            for (l, &v) in lb.iter_mut().zip(b) {
                *l = c.b(v as u32 * 0x1_0001, 0);
            }
            #[cfg(target_arch = "x86_64")]
            if PH && !c.bf16 {
                let r = &mut r[..n];
                // SAFETY: PH is true only in Row::eval's AVX-512 FP16 code, after its CPU check
                unsafe { super::ph::add(la, lb, r) };
                finish_lanes(c, la, lb, r);
                continue;
            }
            add_lanes::<X8>(c, la, lb, &mut fa[..n], &mut fb[..n], &mut r[..n], true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::policy::KNOBS;
    use crate::reference::{bf16_specials, f16_specials};
    use crate::rng::Rng;

    fn op(format: Format) -> AddOp {
        AddOp { format, ..Default::default() }
    }

    #[test]
    fn small_sums() {
        let p = Policy::current();
        // (1, 2) + (3, -2) = (4, 0): +0 from 2 + -2
        assert_eq!(eval_add(&op(Format::F16), p, 0x4000_3c00, 0xc000_4200), Ok(0x0000_4400));
        // -0 + -0 = -0, +0 + -0 = +0
        assert_eq!(eval_add(&op(Format::F16), p, 0x8000_8000, 0x0000_8000), Ok(0x0000_8000));
        // 65504 + 8 rounds to 65504; 65504 + 16 = 65520 is a tie, to even: Inf
        assert_eq!(eval_add(&op(Format::F16), p, 0x7bff_7bff, 0x4c00_4800), Ok(0x7c00_7bff));
        // BF16: 1 + 2^-8 is a tie, to even 1.0; 1 + 3 * 2^-8 rounds up
        assert_eq!(eval_add(&op(Format::Bf16), p, 0x3f80_3f80, 0x3c40_3b80), Ok(0x3f82_3f80));
        // .F32: 65504 + 2^-24 is not exact in f32 (rounds to 65504)
        let f32op = AddOp { f32_out: true, ..op(Format::F16) };
        assert_eq!(eval_add(&f32op, p, 0x7bff, 0x0001), Ok(65504f32.to_bits()));
        assert_eq!(eval_add(&f32op, p, 0x3c00, 0x0001), Ok((1.0f32 + 2f32.powi(-24)).to_bits()));
        // cvt.f32.f16 as ptxas writes it: -RZ + x.H0_H0
        let cvt = AddOp { a_mods: SrcMods { neg: true, ..Default::default() }, b_mods: SrcMods { swizzle: Swizzle::H0H0, ..Default::default() }, ..f32op };
        assert_eq!(eval_add(&cvt, p, 0, 0x1234_8000), Ok(0x8000_0000));
        assert_eq!(eval_add(&cvt, p, 0, 0x1234_0000), Ok(0));
        assert_eq!(eval_add(&cvt, p, 0, 0x1234_0001), Ok(2f32.powi(-24).to_bits()));
    }

    #[test]
    fn undefined_combinations() {
        let p = Policy::current();
        assert_eq!(eval_add(&AddOp { f32_out: true, ..op(Format::Bf16) }, p, 0, 0), Err(Undefined::AddBf16F32));
        assert_eq!(eval_add(&AddOp { flush: Flush::Fmz, ..op(Format::F16) }, p, 0, 0), Err(Undefined::AddFlush(Flush::Fmz)));
        assert_eq!(eval_add(&op(Format::Invalid1), p, 0, 0), Err(Undefined::Format(Format::Invalid1)));
        let inv = SrcMods { swizzle: Swizzle::Invalid1, ..Default::default() };
        assert_eq!(eval_add(&AddOp { b_mods: inv, ..op(Format::F16) }, p, 0, 0), Err(Undefined::Swizzle { operand: 2 }));
    }

    /// `ftz-tininess` cannot change a sum (see the module's text): every option of it gives
    /// the same result on every special pair with .FTZ.
    #[test]
    fn ftz_tininess_does_not_matter_for_sums() {
        let k = KNOBS.iter().position(|(id, _)| *id == "ftz-tininess").unwrap();
        for (format, sp) in [(Format::F16, f16_specials()), (Format::Bf16, bf16_specials())] {
            let o = AddOp { flush: Flush::Ftz, ..op(format) };
            for &x in sp {
                for &y in sp {
                    let w = |v: u16| v as u32 | (v as u32 ^ 0x8000) << 16;
                    let r: Vec<_> = (0..KNOBS[k].1.len())
                        .map(|opt| {
                            let mut p = *Policy::current();
                            p.set(k, opt);
                            eval_add(&o, &p, w(x), y as u32 * 0x1_0001)
                        })
                        .collect();
                    assert!(r.iter().all(|v| *v == r[0]), "{x:#06x} + {y:#06x}: {r:x?}");
                }
            }
        }
    }

    /// The batch path against the scalar one, every modifier combination, random and special
    /// operands, under the committed policy and with every add knob at another option.
    #[test]
    fn batch_agrees_with_scalar() {
        let mut rng = Rng::new(0x0add);
        let mods: Vec<SrcMods> = [false, true]
            .into_iter()
            .flat_map(|neg| {
                [false, true]
                    .into_iter()
                    .flat_map(move |abs| [Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1].into_iter().map(move |swizzle| SrcMods { neg, abs, swizzle }))
            })
            .collect();
        let mut policies = vec![*Policy::current()];
        for (k, (id, opts)) in KNOBS.iter().enumerate() {
            if id.starts_with("add-") {
                for o in 1..opts.len() {
                    let mut p = *Policy::current();
                    p.set(k, o);
                    policies.push(p);
                }
            }
        }
        for p in &policies {
            for (format, sp) in [(Format::F16, f16_specials()), (Format::Bf16, bf16_specials())] {
                let word = |r: &mut Rng| {
                    let h = |r: &mut Rng| if r.chance(0.5) { *r.pick(sp) as u32 } else { r.next_u32() >> 16 };
                    h(r) | h(r) << 16
                };
                let a: Vec<u32> = (0..1500).map(|_| word(&mut rng)).collect();
                let b: Vec<u32> = (0..1500).map(|_| word(&mut rng)).collect();
                let mut out = vec![0u32; a.len()];
                for am in &mods {
                    for bm in &mods {
                        for flush in [Flush::None, Flush::Ftz] {
                            for sat in [false, true] {
                                for f32_out in [false, true] {
                                    let o = AddOp { format, a_mods: *am, b_mods: *bm, flush, sat, f32_out };
                                    match eval_add_batch(&o, p, &a, &b, &mut out) {
                                        Ok(()) => {
                                            // the portable blocks too (eval_add_batch takes F16C ones where it can)
                                            let mut plain = vec![0u32; a.len()];
                                            blocks::<false>(&AddCtx::new(&o, p).unwrap(), &a, &b, &mut plain);
                                            assert_eq!(plain, out, "{o:?}");
                                            for i in 0..a.len() {
                                                assert_eq!(eval_add(&o, p, a[i], b[i]), Ok(out[i]), "{o:?} {:#x} + {:#x}", a[i], b[i]);
                                            }
                                        }
                                        Err(u) => assert_eq!((u, format, f32_out), (Undefined::AddBf16F32, Format::Bf16, true)),
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
