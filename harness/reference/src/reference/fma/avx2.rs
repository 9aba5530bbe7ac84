//! HFMA2 lanes whose arithmetic is plain ([`Fma::plain_arith`]: no flushing, .FMZ or
//! zero-sign override; `.SAT` and `.RELU` are allowed) eight
//! source words, sixteen lanes, at a time with AVX2 and F16C, straight from the packed words:
//! half select, |x| and -x on the words, both lanes in one vector, no copies in between.
//!
//! - **FP16** in f32, as the module's text says: F16C widens exactly, the product (22 bits)
//!   and TwoSum are exact, round to odd at 24 bits, F16C's conversion rounds to nearest even.
//! - **BF16** in f64 (the product's exponent, 2^-266 to 2^256, is outside f32's range):
//!   widening is a shift then an exact f32 to f64 conversion, then the product, TwoSum and
//!   round to odd at 53 bits. The final rounding is one f64 addition: with `C` the power of
//!   two 2^45 times the result's leading-bit weight (at least 2^-126, the subnormal range's
//!   fixed point; at most 2^127), `|x| + C` lies in `C`'s binade, whose ulp is BF16's ulp at
//!   `|x|`, so the addition rounds `|x|` to nearest even on BF16's grid (gradual underflow
//!   included) and `(|x| + C) - C` is exact. That value is a BF16 value or at least 2^128, so
//!   the conversion to f32 is exact or Inf, and BF16 is the f32's upper 16 bits.
//! - **BF16 with FMA** (where the CPU has it, [`plain_bf16_fma`]), 8 lanes to a vector: the
//!   operands widen to f32 exactly (BF16 is f32's upper half) and one fused multiply-add
//!   gives `s = RN24(x)`, `x = a * b + c` rounded once to f32 as IEEE 754 says, whatever
//!   the product's exponent (the fma keeps the exact product): gradual underflow, overflow
//!   to Inf, and an exact zero sum's sign included. Then round to nearest even at bit 16
//!   (add 0x7fff and bit 16, keep the upper half): that is BF16's rounding of `s`, subnormals
//!   included (BF16's subnormals are the upper halves of f32's), a carry into the exponent
//!   (the next binade, or Inf from the largest finite) included.
//!   **Why `RN8(s) = RN8(x)`** unless `s` is a midpoint of BF16's grid: the decision points
//!   of BF16's round to nearest are its midpoints (the overflow threshold
//!   `2^128 - 2^119` among them), and each is an f32 value (9 significant bits at most,
//!   within f32's range, subnormal ones included: odd multiples of 2^-134). If a midpoint
//!   `M` lay strictly between `x` and `s`, `M` would be an f32 nearer to `x` than
//!   `s = RN24(x)`; so `x` and `s` lie on the same side of every decision point, or `s` is
//!   one. In that last case `x` may still be off it by less than half an f32 ulp (a sticky
//!   bit the rounding dropped, the double rounding's one failure), so where a lane's `s`
//!   has the low 16 bits 0x8000 (a midpoint, normal or subnormal), the 4 lanes around it
//!   are done again by the f64 kernel above (0.8% of the benchmark's lanes are such). The
//!   low 16 bits 0x8000 are exactly the midpoints: halfway between two neighbouring upper
//!   halves, which are neighbouring BF16 values (0 and the smallest subnormal, the largest
//!   finite and Inf included). `s` is Inf only when `x` is at least f32's overflow
//!   threshold `2^128 - 2^103`, past BF16's: Inf. A nonzero `x` that rounds to a zero `s`
//!   has `|x| <= 2^-150`, and BF16 rounds it to the zero of its sign too. A NaN `s` (an
//!   operand's quieted, or the default NaN) has the low 16 bits 0, so the rounding adds no
//!   carry and its upper half is a NaN, which the NaN rule then replaces.
//!
//! Round to odd without a branch or a parity test's select: with `x = s + e` from TwoSum,
//! `RO(x)`'s bits are `(s - d) | n` where `n` is 1 when `e != 0` and `d` is 1 when moreover `e`
//! and `s` differ in sign (an even `s` moves one ulp toward `e`, an odd one stays).
//!
//! The NaN rule runs on the 16-bit lanes: a NaN result (an operand NaN, 0 x Inf, Inf - Inf)
//! becomes the canonical NaN or the first NaN operand quieted; then `.SAT` or `.RELU`, which
//! only look at the rounded result, as [`Fma::lane_raw`] applies them.

use super::Fma;
use std::arch::x86_64::*;

/// Words per step.
pub(super) const STEP: usize = 8;

/// Operand 1 or 3 of the kernels: a word per output word, or one word for all of them (a
/// row's fixed operand: eight copies, read again at every step).
#[derive(Clone, Copy)]
pub(super) struct Words<'a> {
    w: &'a [u32],
    /// usize::MAX for a word per output word, 0 for the eight copies.
    step_mask: usize,
}

impl<'a> Words<'a> {
    /// A word per output word (as long as the output).
    pub(super) fn each(w: &'a [u32]) -> Words<'a> {
        Words { w, step_mask: usize::MAX }
    }

    /// One word for every output word.
    pub(super) fn fixed(w: &'a [u32; STEP]) -> Words<'a> {
        Words { w, step_mask: 0 }
    }

    /// The 8 words of step `i`. Safety: `i + 8` is at most the output's length, which
    /// [`Words::each`]'s slice has.
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> *const u32 {
        // SAFETY: the caller's; a fixed operand's offset is 0 of its 8 words
        unsafe { self.w.as_ptr().add(i & self.step_mask) }
    }
}

/// The prepared source words: half select and |x| / -x for each operand.
struct Srcs {
    /// The two lanes' right shifts of each operand, `None` for the plain `H1_H0`.
    sh: [Option<(__m128i, __m128i)>; 3],
    and: [__m256i; 3],
    xor: [__m256i; 3],
}

impl Srcs {
    #[target_feature(enable = "avx2,f16c")]
    #[inline]
    fn new(f: &Fma) -> Srcs {
        let mut s = Srcs { sh: [None; 3], and: [_mm256_setzero_si256(); 3], xor: [_mm256_setzero_si256(); 3] };
        for k in 0..3 {
            let [s0, s1] = f.sh[k];
            if [s0, s1] != [0, 16] {
                s.sh[k] = Some((_mm_cvtsi32_si128(s0 as i32), _mm_cvtsi32_si128(s1 as i32)));
            }
            let (and, xor) = f.mods[k];
            s.and[k] = _mm256_set1_epi32((and as u32 | (and as u32) << 16) as i32);
            s.xor[k] = _mm256_set1_epi32((xor as u32 | (xor as u32) << 16) as i32);
        }
        s
    }

    /// Operand `k`'s 8 words at `p`, each half the lane's selected and modified value.
    /// Safety: `p` points at 8 readable words.
    #[target_feature(enable = "avx2,f16c")]
    #[inline]
    unsafe fn load(&self, k: usize, p: *const u32) -> __m256i {
        // SAFETY: the caller's
        let mut w = unsafe { _mm256_loadu_si256(p as *const __m256i) };
        if let Some((s0, s1)) = self.sh[k] {
            let lo = _mm256_and_si256(_mm256_srl_epi32(w, s0), _mm256_set1_epi32(0xffff));
            let hi = _mm256_slli_epi32::<16>(_mm256_srl_epi32(w, s1));
            w = _mm256_or_si256(lo, hi);
        }
        _mm256_xor_si256(_mm256_and_si256(w, self.and[k]), self.xor[k])
    }
}

/// The NaN rule on 16 lanes: where `r` is NaN, the canonical NaN or the first NaN of `a`,
/// `b`, `c` quieted.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn fix_nan(f: &Fma, a: __m256i, b: __m256i, c: __m256i, r: __m256i) -> __m256i {
    let abs = _mm256_set1_epi16(0x7fff);
    let exp = _mm256_set1_epi16(f.f.exp as i16);
    let is_nan = |v| _mm256_cmpgt_epi16(_mm256_and_si256(v, abs), exp);
    let value = if f.canonical != 0 {
        abs
    } else {
        let q = _mm256_set1_epi16(f.f.quiet as i16);
        let v = _mm256_blendv_epi8(abs, _mm256_or_si256(c, q), is_nan(c));
        let v = _mm256_blendv_epi8(v, _mm256_or_si256(b, q), is_nan(b));
        _mm256_blendv_epi8(v, _mm256_or_si256(a, q), is_nan(a))
    };
    _mm256_blendv_epi8(r, value, is_nan(r))
}

/// `.SAT` and `.RELU` on 16 results, as [`Fma::lane_raw`] applies them (NaN, negative and
/// -0 judged on the result before either).
#[target_feature(enable = "avx2,f16c")]
#[inline]
pub(super) fn sat_relu(f: &Fma, r: __m256i) -> __m256i {
    let m = |x: u16| _mm256_set1_epi16(x as i16);
    let is_nan = _mm256_cmpgt_epi16(_mm256_and_si256(r, m(0x7fff)), m(f.f.exp));
    let neg = _mm256_srai_epi16::<15>(r);
    let neg_zero = _mm256_and_si256(_mm256_cmpeq_epi16(r, m(0x8000)), m(0x8000));
    // a positive value above 1 (negatives and NaNs are decided before)
    let above_one = _mm256_cmpgt_epi16(r, m(f.f.one));
    let sat = _mm256_blendv_epi8(_mm256_blendv_epi8(r, m(f.f.one), above_one), _mm256_and_si256(neg_zero, m(f.sat_keep_neg_zero)), neg);
    let sat = _mm256_blendv_epi8(sat, _mm256_andnot_si256(m(f.sat_nan_zero), r), is_nan);
    let r = _mm256_blendv_epi8(r, sat, m(f.sat));
    let relu = _mm256_blendv_epi8(r, _mm256_and_si256(neg_zero, m(f.relu_keep_neg_zero)), neg);
    let relu_nan = _mm256_blendv_epi8(m(f.relu_nan_value), r, m(f.relu_nan_pass));
    let relu = _mm256_blendv_epi8(relu, relu_nan, is_nan);
    _mm256_blendv_epi8(r, relu, m(f.relu))
}

/// Round to odd of `s + e` (TwoSum's pair), f32 lanes.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn ro32(s: __m256, e: __m256) -> __m256 {
    let nz = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_NEQ_OQ>(e, _mm256_setzero_ps()));
    let si = _mm256_castps_si256(s);
    let d = _mm256_srli_epi32::<31>(_mm256_and_si256(_mm256_xor_si256(_mm256_castps_si256(e), si), nz));
    _mm256_castsi256_ps(_mm256_or_si256(_mm256_sub_epi32(si, d), _mm256_srli_epi32::<31>(nz)))
}

/// Round to odd of `s + e`, f64 lanes.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn ro64(s: __m256d, e: __m256d) -> __m256d {
    let nz = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_NEQ_OQ>(e, _mm256_setzero_pd()));
    let si = _mm256_castpd_si256(s);
    let d = _mm256_srli_epi64::<63>(_mm256_and_si256(_mm256_xor_si256(_mm256_castpd_si256(e), si), nz));
    _mm256_castsi256_pd(_mm256_or_si256(_mm256_sub_epi64(si, d), _mm256_srli_epi64::<63>(nz)))
}

/// FP16: `a * b + c` on 8 lanes, rounded to odd at 24 bits.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn f16_lanes(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
    let (a, b, c) = (_mm256_cvtph_ps(a), _mm256_cvtph_ps(b), _mm256_cvtph_ps(c));
    let p = _mm256_mul_ps(a, b);
    let s = _mm256_add_ps(p, c);
    let bb = _mm256_sub_ps(s, p);
    let e = _mm256_add_ps(_mm256_sub_ps(p, _mm256_sub_ps(s, bb)), _mm256_sub_ps(c, bb));
    // imm 0: round to nearest even
    _mm256_cvtps_ph::<0>(ro32(s, e))
}

/// BF16: `a * b + c` on 4 lanes given as f32, the results as f32 whose upper halves are
/// the BF16 results.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn bf16_lanes(a: __m128, b: __m128, c: __m128) -> __m128 {
    let (a, b, c) = (_mm256_cvtps_pd(a), _mm256_cvtps_pd(b), _mm256_cvtps_pd(c));
    let p = _mm256_mul_pd(a, b);
    let s = _mm256_add_pd(p, c);
    let bb = _mm256_sub_pd(s, p);
    let e = _mm256_add_pd(_mm256_sub_pd(p, _mm256_sub_pd(s, bb)), _mm256_sub_pd(c, bb));
    let x = ro64(s, e);
    let sign = _mm256_and_pd(x, _mm256_set1_pd(-0.0));
    let mag = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    // the leading bit's weight (Inf for Inf and NaN), kept within [2^-126, 2^127]
    let lead = _mm256_and_pd(x, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7ff0_0000_0000_0000)));
    let lead = _mm256_min_pd(_mm256_max_pd(lead, _mm256_set1_pd(f64::from_bits((1023 - 126) << 52))), _mm256_set1_pd(f64::from_bits((1023 + 127) << 52)));
    let big = _mm256_mul_pd(lead, _mm256_set1_pd(f64::from_bits((1023 + 45) << 52)));
    let r = _mm256_sub_pd(_mm256_add_pd(mag, big), big);
    _mm256_cvtpd_ps(_mm256_or_pd(r, sign))
}

/// BF16: 8 lanes given as f32 (BF16 is f32's upper half), in f64 4 at a time
/// ([`bf16_lanes`]); the results as f32 whose upper halves are the BF16 results.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn bf16_f64(a: __m256, b: __m256, c: __m256) -> __m256 {
    let half = |v: __m256| (_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let (a0, a1) = half(a);
    let (b0, b1) = half(b);
    let (c0, c1) = half(c);
    _mm256_set_m128(bf16_lanes(a1, b1, c1), bf16_lanes(a0, b0, c0))
}

/// [`bf16_lanes`] on 8 lanes at once with AVX-512 (the same f64 operations, 8 lanes to a
/// vector); the results as f32 whose upper halves are the BF16 results. No midpoint to
/// redo: every lane costs the same, where [`plain_bf16_fma`]'s cost depends on the values
/// (on this project's 2-core machine, one core, a sweep's rows with operand 3
/// 0x3f80_8001: 6.1 ns an input by [`plain_bf16_fma`], 2.2 by this; with 0x3f80_3f80:
/// 2.1 and 2.2).
#[target_feature(enable = "avx512f,avx2,f16c")]
#[inline]
fn bf16_f64_x8(a: __m256, b: __m256, c: __m256) -> __m256 {
    let (a, b, c) = (_mm512_cvtps_pd(a), _mm512_cvtps_pd(b), _mm512_cvtps_pd(c));
    let p = _mm512_mul_pd(a, b);
    let s = _mm512_add_pd(p, c);
    let bb = _mm512_sub_pd(s, p);
    let e = _mm512_add_pd(_mm512_sub_pd(p, _mm512_sub_pd(s, bb)), _mm512_sub_pd(c, bb));
    // round to odd (ro64's steps)
    let nz = _mm512_cmp_pd_mask::<_CMP_NEQ_OQ>(e, _mm512_setzero_pd());
    let si = _mm512_castpd_si512(s);
    let d = _mm512_maskz_srli_epi64::<63>(nz, _mm512_xor_si512(_mm512_castpd_si512(e), si));
    let x = _mm512_or_si512(_mm512_sub_epi64(si, d), _mm512_maskz_set1_epi64(nz, 1));
    let sign = _mm512_and_si512(x, _mm512_set1_epi64(i64::MIN));
    let mag = _mm512_castsi512_pd(_mm512_andnot_si512(_mm512_set1_epi64(i64::MIN), x));
    // the leading bit's weight (Inf for Inf and NaN), kept within [2^-126, 2^127]
    let lead = _mm512_castsi512_pd(_mm512_and_si512(x, _mm512_set1_epi64(0x7ff0_0000_0000_0000)));
    let lead = _mm512_min_pd(_mm512_max_pd(lead, _mm512_set1_pd(f64::from_bits((1023 - 126) << 52))), _mm512_set1_pd(f64::from_bits((1023 + 127) << 52)));
    let big = _mm512_mul_pd(lead, _mm512_set1_pd(f64::from_bits((1023 + 45) << 52)));
    let r = _mm512_sub_pd(_mm512_add_pd(mag, big), big);
    _mm512_cvtpd_ps(_mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(r), sign)))
}

/// BF16 in f64 ([`bf16_f64`], or [`bf16_f64_x8`] with `X512`, only from AVX-512 code):
/// the 16 lanes of 8 words, each half a lane's selected and modified value, the results
/// packed as the words are.
#[inline(always)]
unsafe fn bf16_words<const X512: bool>(wa: __m256i, wb: __m256i, wc: __m256i) -> __m256i {
    let hi_mask = _mm256_set1_epi32(0xffff_0000u32 as i32);
    // lane 0 and lane 1 of the 8 words as f32
    let lo = |w| _mm256_castsi256_ps(_mm256_slli_epi32::<16>(w));
    let hi = |w| _mm256_castsi256_ps(_mm256_and_si256(w, hi_mask));
    let f = |a, b, c| if X512 { bf16_f64_x8(a, b, c) } else { bf16_f64(a, b, c) };
    let r_lo = _mm256_castps_si256(f(lo(wa), lo(wb), lo(wc)));
    let r_hi = _mm256_castps_si256(f(hi(wa), hi(wb), hi(wc)));
    _mm256_or_si256(_mm256_srli_epi32::<16>(r_lo), _mm256_and_si256(r_hi, hi_mask))
}

/// The lanes of `f` for the first `out.len() / 8 * 8` words; returns how many words that
/// is (the caller does the rest).
///
/// Safety: the CPU has AVX2 and F16C; `f.plain_arith()`; `b` and `out` are as long, and
/// so is `a` or `c` given by [`Words::each`].
#[target_feature(enable = "avx2,f16c")]
pub(super) unsafe fn plain(f: &Fma, a: Words, b: &[u32], c: Words, out: &mut [u32]) -> usize {
    // SAFETY: the caller's
    unsafe { plain_body::<false>(f, a, b, c, out) }
}

/// [`plain`] with AVX-512: FP16's fused multiply-add in hardware (`VFMADD213PH`, rounded
/// once to nearest even, subnormals kept: [`super::super::ph`]), both lanes of 8 words in
/// one vector; BF16 in f64 as [`plain`], 8 lanes to a vector ([`bf16_f64_x8`]).
///
/// Safety: the CPU has what [`super::super::ph::available`] checks; otherwise as [`plain`].
#[target_feature(enable = "avx512fp16,avx512bw,avx512vl,avx512f,avx2,f16c")]
pub(super) unsafe fn plain_ph(f: &Fma, a: Words, b: &[u32], c: Words, out: &mut [u32]) -> usize {
    // SAFETY: the caller's
    unsafe { plain_body::<true>(f, a, b, c, out) }
}

/// [`plain`]'s body; `PH` only from [`plain_ph`].
#[inline(always)]
unsafe fn plain_body<const PH: bool>(f: &Fma, a: Words, b: &[u32], c: Words, out: &mut [u32]) -> usize {
    let n = out.len() / STEP * STEP;
    // SAFETY (every load and store below): i + 8 <= n <= each slice's length
    unsafe {
        let srcs = Srcs::new(f);
        let post = f.sat != 0 || f.relu != 0;
        let fin = |wa, wb, wc, r| {
            let r = fix_nan(f, wa, wb, wc, r);
            if post {
                sat_relu(f, r)
            } else {
                r
            }
        };
        let mut i = 0;
        if f.f.bf16 {
            while i < n {
                let wa = srcs.load(0, a.at(i));
                let wb = srcs.load(1, b.as_ptr().add(i));
                let wc = srcs.load(2, c.at(i));
                _mm256_storeu_si256(out.as_mut_ptr().add(i) as *mut __m256i, fin(wa, wb, wc, bf16_words::<PH>(wa, wb, wc)));
                i += STEP;
            }
        } else {
            while i < n {
                let wa = srcs.load(0, a.at(i));
                let wb = srcs.load(1, b.as_ptr().add(i));
                let wc = srcs.load(2, c.at(i));
                let r = if PH {
                    _mm256_castph_si256(_mm256_fmadd_ph(_mm256_castsi256_ph(wa), _mm256_castsi256_ph(wb), _mm256_castsi256_ph(wc)))
                } else {
                    let lo = f16_lanes(_mm256_castsi256_si128(wa), _mm256_castsi256_si128(wb), _mm256_castsi256_si128(wc));
                    let hi = f16_lanes(_mm256_extracti128_si256::<1>(wa), _mm256_extracti128_si256::<1>(wb), _mm256_extracti128_si256::<1>(wc));
                    _mm256_set_m128i(hi, lo)
                };
                _mm256_storeu_si256(out.as_mut_ptr().add(i) as *mut __m256i, fin(wa, wb, wc, r));
                i += STEP;
            }
        }
    }
    n
}

/// BF16 where the CPU has FMA: the lanes of `f` for the first `out.len() / 8 * 8` words;
/// returns how many words that is (the caller does the rest). One fused multiply-add per 8
/// lanes, then round to nearest even at bit 16; the 4 lanes (one [`bf16_lanes`]) around a
/// lane that lands on a midpoint of BF16's grid are done again in f64 (see the module's
/// text). Without a branch on the values: each block of words first goes the FMA way,
/// noting the words to redo and which 4 lanes, then those are redone.
///
/// Safety: the CPU has AVX2, F16C and FMA; `f.plain_arith()`; BF16; the operands as
/// [`plain`] says.
#[target_feature(enable = "avx2,f16c,fma")]
pub(super) unsafe fn plain_bf16_fma(f: &Fma, a: Words, b: &[u32], c: Words, out: &mut [u32]) -> usize {
    /// Steps (of 8 words) per block.
    const BLOCK_STEPS: usize = 256;
    let n = out.len() / STEP * STEP;
    // SAFETY (every load and store below): i + 8 <= n <= each slice's length (the words
    // to redo are such i)
    unsafe {
        let srcs = Srcs::new(f);
        let post = f.sat != 0 || f.relu != 0;
        let hi_mask = _mm256_set1_epi32(0xffff_0000u32 as i32);
        let m = |x: u32| _mm256_set1_epi32(x as i32);
        // lane 0 and lane 1 of the 8 words at i as f32 (exactly: BF16 is f32's upper half)
        let lanes = |i: usize| {
            let wa = srcs.load(0, a.at(i));
            let wb = srcs.load(1, b.as_ptr().add(i));
            let wc = srcs.load(2, c.at(i));
            let lo = |w| _mm256_castsi256_ps(_mm256_slli_epi32::<16>(w));
            let hi = |w| _mm256_castsi256_ps(_mm256_and_si256(w, hi_mask));
            ((wa, wb, wc), [lo(wa), lo(wb), lo(wc)], [hi(wa), hi(wb), hi(wc)])
        };
        // s = RN24(a * b + c)
        let fma = |[a, b, c]: [__m256; 3]| _mm256_castps_si256(_mm256_fmadd_ps(a, b, c));
        // round to nearest even at bit 16: add 0x7fff and the kept part's last bit
        let rne = |s| _mm256_add_epi32(_mm256_add_epi32(s, m(0x7fff)), _mm256_and_si256(_mm256_srli_epi32::<16>(s), m(1)));
        // the NaN rule, .SAT, .RELU on the two halves' results (BF16 in the upper 16 bits)
        let outp = out.as_mut_ptr();
        let store = |i: usize, (wa, wb, wc), r_lo, r_hi| {
            let r = _mm256_or_si256(_mm256_srli_epi32::<16>(r_lo), _mm256_and_si256(r_hi, hi_mask));
            let r = fix_nan(f, wa, wb, wc, r);
            let r = if post { sat_relu(f, r) } else { r };
            _mm256_storeu_si256(outp.add(i) as *mut __m256i, r);
        };
        // the words to redo: i << 16, and bit l set for a midpoint in lane l of the 16
        // (lane 0 of word w: bit w; lane 1: bit 8 + w)
        let mut redo = [0usize; BLOCK_STEPS];
        let mut i = 0;
        while i < n {
            let end = n.min(i + BLOCK_STEPS * STEP);
            // the steps noted in this block, fewer than those done
            let mut k = 0;
            while i < end {
                let (w, lo, hi) = lanes(i);
                let (s_lo, s_hi) = (fma(lo), fma(hi));
                // a midpoint of BF16's grid: the low 16 bits are 0x8000
                let at_mid = |s| _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(s, m(0xffff)), m(0x8000)))) as usize;
                let mids = at_mid(s_lo) | at_mid(s_hi) << 8;
                redo[k] = i << 16 | mids;
                k += (mids != 0) as usize;
                store(i, w, rne(s_lo), rne(s_hi));
                i += STEP;
            }
            for &e in &redo[..k] {
                let (j, mids) = (e >> 16, e & 0xffff);
                let (w, lo, hi) = lanes(j);
                // 4 lanes in f64 where one of them is at a midpoint
                let redo4 = |r: __m256i, [a, b, c]: [__m256; 3], mids: usize| {
                    let mut r = _mm256_castsi256_ps(r);
                    if mids & 0x0f != 0 {
                        let q = bf16_lanes(_mm256_castps256_ps128(a), _mm256_castps256_ps128(b), _mm256_castps256_ps128(c));
                        r = _mm256_insertf128_ps::<0>(r, q);
                    }
                    if mids & 0xf0 != 0 {
                        let q = bf16_lanes(_mm256_extractf128_ps::<1>(a), _mm256_extractf128_ps::<1>(b), _mm256_extractf128_ps::<1>(c));
                        r = _mm256_insertf128_ps::<1>(r, q);
                    }
                    _mm256_castps_si256(r)
                };
                let r_lo = redo4(rne(fma(lo)), lo, mids & 0xff);
                let r_hi = redo4(rne(fma(hi)), hi, mids >> 8);
                store(j, w, r_lo, r_hi);
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::super::{Fma, FmaOp};
    use crate::isa::{Format, SrcMods, Swizzle};
    use crate::reference::policy::ReluNan;
    use crate::reference::Policy;
    use crate::rng::Rng;

    /// A lane value: a special (zeros, Infs, NaNs, subnormal and normal edges, one), a
    /// value near one (cancellation), a random exponent with a significand of 1, 1.5,
    /// 1 + ulp or 1.5 + ulp (exact products on a midpoint of the grid next to any addend:
    /// the FMA kernel's f64 lanes; products near overflow and underflow), or random bits.
    fn half(s: &mut Rng, bf16: bool) -> u16 {
        const F16: [u16; 12] = [0x0000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x3bff, 0x7bff, 0x7c00, 0x7c01, 0x7e00, 0x7fff, 0x0200];
        const BF16: [u16; 12] = [0x0000, 0x0001, 0x007f, 0x0080, 0x3f80, 0x3f7f, 0x7f7f, 0x7f80, 0x7f81, 0x7fc0, 0x7fff, 0x0040];
        let r = s.next_u64();
        let sign = (r >> 63) as u16 * 0x8000;
        let (exp, half_bit) = if bf16 { (0x7f80, 0x0040) } else { (0x7c00, 0x0200) };
        match r % 8 {
            0 => (if bf16 { BF16 } else { F16 })[(r >> 8) as usize % 12] | sign,
            1 => ((if bf16 { 0x3f00 } else { 0x3800 }) + (r >> 8) as u16 % 0x200) | sign,
            2 => ((r >> 16) as u16 & exp) | [0, half_bit, 1, half_bit | 1][(r >> 8) as usize % 4] | sign,
            _ => (r >> 16) as u16,
        }
    }

    /// The AVX2 kernel against the scalar lane on seeded random triples with specials, for
    /// both formats, every half select, |x| / -x, .SAT and .RELU, and their policy choices.
    #[test]
    fn plain_kernel_is_the_scalar_lane() {
        // a CPU without them never takes these kernels, and this test would check nothing
        assert!(
            std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c"),
            "the CPU has no AVX2 and F16C: the AVX2 kernels cannot be checked here"
        );
        let fma = std::arch::is_x86_feature_detected!("fma");
        if !fma {
            crate::testlevel::not_checked(&["fma"], "the CPU has no FMA: eval takes the f64 BF16 kernel here, and the FMA one is not checked");
        }
        let ph = crate::reference::ph::available();
        if !ph {
            crate::testlevel::not_checked(
                &["avx512_fp16", "avx512bw", "avx512vl", "avx512cd", "avx512f", "avx2", "f16c"],
                "the CPU has no AVX-512 FP16: eval takes the AVX2 kernels here, and the AVX-512 ones are not checked",
            );
        }
        let seed = std::env::var("HMUL2_FMA_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_f3a2u64);
        println!("plain_kernel_is_the_scalar_lane: seed {seed} (HMUL2_FMA_SEED)");
        let mut s = Rng::new(seed);
        let swz = [Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1];
        let n = 1 << 12;
        let (mut a, mut b, mut c, mut out) = (vec![0u32; n], vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        let mut lanes = 0u64;
        for round in 0..192 {
            let format = if round % 2 == 0 { Format::F16 } else { Format::Bf16 };
            let bf16 = format == Format::Bf16;
            let mut m = || {
                let r = s.next_u64();
                SrcMods { neg: r & 1 == 1, abs: r & 2 == 2, swizzle: swz[(r >> 2) as usize % 3] }
            };
            // the first rounds have no modifiers (the benchmark's case)
            let (am, bm, cm) = if round < 8 { Default::default() } else { (m(), m(), m()) };
            // then .SAT or .RELU (never both) under each of their policy choices
            let r = if round < 8 { 0 } else { s.next_u64() };
            let op = FmaOp { format, a_mods: am, b_mods: bm, c_mods: cm, sat: r % 3 == 1, relu: r % 3 == 2, ..Default::default() };
            let mut p = *Policy::current();
            p.nan_canonical = round % 4 < 2;
            if round >= 8 {
                p.sat_nan_to_zero = r & 8 != 0;
                p.sat_neg_zero_to_plus = r & 16 != 0;
                p.sat_bf16 = r & 32 != 0;
                p.fma_relu_neg_zero_to_plus = r & 64 != 0;
                p.fma_relu_nan = [ReluNan::Canonical, ReluNan::Pass, ReluNan::Zero][(r >> 8) as usize % 3];
            }
            let f = Fma::new(&op, &p).unwrap();
            assert!(f.plain_arith());
            for _ in 0..4 {
                for k in 0..n {
                    a[k] = half(&mut s, bf16) as u32 | (half(&mut s, bf16) as u32) << 16;
                    b[k] = half(&mut s, bf16) as u32 | (half(&mut s, bf16) as u32) << 16;
                    c[k] = half(&mut s, bf16) as u32 | (half(&mut s, bf16) as u32) << 16;
                }
                // the f32 (FP16) or f64 (BF16) kernel, the FMA one (BF16, where the CPU has
                // FMA) and the AVX-512 one (FP16 in hardware, BF16 in f64 8 lanes a vector,
                // where the CPU has AVX-512 FP16); each with
                // operands 1 and 3 a word per input, then fixed (a row's: a[0], c[0])
                let kernels = [Some(0), (bf16 && fma).then_some(1), ph.then_some(2)];
                for (kernel, fixed) in kernels.into_iter().flatten().flat_map(|k| [(k, false), (k, true)]) {
                    let (fa, fc) = ([a[0]; super::STEP], [c[0]; super::STEP]);
                    let (wa, wc) = if fixed { (super::Words::fixed(&fa), super::Words::fixed(&fc)) } else { (super::Words::each(&a), super::Words::each(&c)) };
                    let done = match kernel {
                        // SAFETY: AVX2 and F16C checked above; plain; the slices are as long
                        0 => unsafe { super::plain(&f, wa, &b, wc, &mut out) },
                        // SAFETY: AVX2, F16C and FMA checked above; plain; BF16; as long
                        1 => unsafe { super::plain_bf16_fma(&f, wa, &b, wc, &mut out) },
                        // SAFETY: ph::available() checked above; plain; as long
                        _ => unsafe { super::plain_ph(&f, wa, &b, wc, &mut out) },
                    };
                    assert_eq!(done, n);
                    for k in 0..n {
                        let (ak, ck) = if fixed { (a[0], c[0]) } else { (a[k], c[k]) };
                        let want = f.eval(ak, b[k], ck);
                        assert_eq!(
                            out[k], want,
                            "seed {seed}, kernel {kernel}, fixed {fixed}, {op:?}, {p:?}: a {ak:#010x} b {:#010x} c {ck:#010x}: {:#010x}, scalar {want:#010x}",
                            b[k], out[k]
                        );
                    }
                    lanes += 2 * n as u64;
                }
            }
        }
        println!("{lanes} lanes agree");
    }
}
