//! Plain lanes (no flush, .FMZ or .SAT) 32 to an AVX-512 vector, each a u16:
//!
//! - [`super::eval_batch`] for plain BF16 instructions ([`eval`], integer products) and
//!   plain FP16 ones on AVX-512 FP16 ([`eval_f16`], `VMULPH`): 16 inputs a step, in one pass
//!   from the loaded [`Inputs`] records (their fields gathered by permutes, whatever the
//!   record's size) to the stored results;
//! - the exhaustive sweep's rows of HMUL2 and HADD2, FP16 and BF16 ([`row`]): one pass from
//!   operand 2's values to the lanes.
//!
//! The BF16 lane product works on integers only: the 8-bit significands multiply exactly in a
//! u16, a leading-zero count normalises the product (subnormal operands included), and
//! round to nearest even is one add and one shift by a per-lane amount (more than 7 for a
//! subnormal result). Zeros, infinities, overflow and the NaN rule are masked selects, so
//! no input takes another path: the bench and the vector input sets draw a special value
//! in most lanes, and f32 arithmetic on BF16 subnormals takes microcode assists on x86.
//! The exhaustive tests against rustc_apfloat cover every FP16 and BF16 pair through
//! `eval_batch`'s paths; the rows are held to the f32 rows on every pair.

use super::Ctx;
use crate::inputs::Inputs;
use std::arch::x86_64::*;
use std::mem::{offset_of, size_of};

/// Dword index of `Inputs::a`, `b`, `d` and of the dword holding `pred`, and `pred`'s byte
/// within it: the loads split 16 inputs into fields without assuming a field order.
const WA: usize = offset_of!(Inputs, a) / 4;
const WB: usize = offset_of!(Inputs, b) / 4;
const WD: usize = offset_of!(Inputs, d) / 4;
const WP: usize = offset_of!(Inputs, pred) / 4;
const PRED_BYTE: u32 = offset_of!(Inputs, pred) as u32 % 4;

/// Dwords per `Inputs` record: 16 records are `S` 512-bit vectors, whatever the record's
/// size (a multiple of 4 bytes: it holds u32 fields).
const S: usize = size_of::<Inputs>() / 4;
const _: () = assert!(size_of::<Inputs>().is_multiple_of(4) && S >= 1 && S <= 16);
/// The vector pairs (32 dwords, one two-table permute) that 16 records span.
const PAIRS: usize = S.div_ceil(2);

/// Where dword `f` of each of 16 records lies: for each vector pair, the permute indices
/// (within its 32 dwords) of the records it holds, and their slots as a mask.
const fn field_plan(f: usize) -> ([[i32; 16]; PAIRS], [u16; PAIRS]) {
    let mut idx = [[0i32; 16]; PAIRS];
    let mut k = [0u16; PAIRS];
    let mut i = 0;
    while i < 16 {
        let dw = S * i + f;
        let pair = dw / 32;
        idx[pair][i] = (dw - 32 * pair) as i32;
        k[pair] |= 1 << i;
        i += 1;
    }
    (idx, k)
}

/// One field of 16 records as permutes ([`field_plan`]).
struct Field {
    idx: [__m512i; PAIRS],
    k: [__mmask16; PAIRS],
}

impl Field {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(f: usize) -> Field {
        let (idx, k) = field_plan(f);
        // SAFETY: each is 64 bytes; unaligned loads
        Field { idx: idx.map(|v| unsafe { _mm512_loadu_si512(v.as_ptr() as *const _) }), k }
    }

    /// The field of the 16 records in `v` ([`load`]), in record order.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn of(&self, v: &[__m512i; S]) -> __m512i {
        let mut r = _mm512_setzero_si512();
        for j in 0..PAIRS {
            // a pair past the records' end (S odd) reads its one vector twice: its indices
            // are all below 16
            let t = _mm512_permutex2var_epi32(v[2 * j], self.idx[j], v[(2 * j + 1).min(S - 1)]);
            r = if j == 0 { t } else { _mm512_mask_mov_epi32(r, self.k[j], t) };
        }
        r
    }
}

/// The 16 records at `p` as `S` vectors.
///
/// # Safety
/// `p` points at 16 readable `Inputs`; the CPU has AVX-512F.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load(p: *const Inputs) -> [__m512i; S] {
    // SAFETY: the caller's: 16·S dwords from p
    std::array::from_fn(|j| unsafe { _mm512_loadu_si512((p as *const u32).add(16 * j) as *const _) })
}

/// The lane result of a NaN operand, per the NaN rule: `(x & and) | or` gives the operand
/// quieted or the canonical NaN.
struct NanRule {
    and: __m512i,
    or: __m512i,
}

/// Half select, |x| / -x and RZ of one source as vector constants.
struct Src {
    /// vpshufb control: which half of its word each lane takes.
    shuffle: __m512i,
    /// `(word & keep) | fixed` before the shuffle (RZ, the immediate form).
    keep: __m512i,
    fixed: __m512i,
    /// `(lane & and) ^ xor` after it.
    and: __m512i,
    xor: __m512i,
}

impl Src {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn new(sh: [u32; 2], keep: u32, fixed: u32, and: u16, xor: u16) -> Src {
        let mut ctl = [0u8; 64];
        for (k, b) in ctl.iter_mut().enumerate() {
            // within each 128-bit lane: dword k / 4, lane (k / 2) % 2, byte k % 2 of it
            let dword = (k % 16) / 4 * 4;
            *b = (dword as u32 + sh[(k / 2) % 2] / 8 + (k % 2) as u32) as u8;
        }
        Src {
            // SAFETY: ctl is 64 bytes; an unaligned load
            shuffle: unsafe { _mm512_loadu_si512(ctl.as_ptr() as *const _) },
            keep: _mm512_set1_epi32(keep as i32),
            fixed: _mm512_set1_epi32(fixed as i32),
            and: _mm512_set1_epi16(and as i16),
            xor: _mm512_set1_epi16(xor as i16),
        }
    }

    /// 32 source lanes from 16 operand words.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn lanes(&self, words: __m512i) -> __m512i {
        // (w & keep) | fixed, then (x & and) ^ xor, as ternary logic
        let w = _mm512_ternarylogic_epi32::<0xEA>(words, self.keep, self.fixed);
        _mm512_ternarylogic_epi32::<0x6A>(_mm512_shuffle_epi8(w, self.shuffle), self.and, self.xor)
    }
}

/// 32 BF16 lane products `a * b`, rounded to nearest even, with the NaN rule applied.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd")]
fn mul(a: __m512i, b: __m512i, nan: &NanRule) -> __m512i {
    let c = _mm512_set1_epi16;
    let (exp, low7) = (c(0x7f80), c(0x7f));
    let ma = _mm512_and_si512(a, c(0x7fff));
    let mb = _mm512_and_si512(b, c(0x7fff));
    // significand with its hidden bit: min(|x|, (x & 0x7f) | 0x80) is x's 7 fraction bits
    // alone exactly when the exponent field is 0 (subnormal)
    let sa = _mm512_min_epu16(ma, _mm512_ternarylogic_epi32::<0xEA>(ma, low7, c(0x80)));
    let sb = _mm512_min_epu16(mb, _mm512_ternarylogic_epi32::<0xEA>(mb, low7, c(0x80)));
    // exponent fields, a subnormal's as 1 (the smallest normal's)
    let one = c(1);
    let ea = _mm512_max_epu16(_mm512_srli_epi16::<7>(ma), one);
    let eb = _mm512_max_epu16(_mm512_srli_epi16::<7>(mb), one);
    // exact: at most 0xff * 0xff
    let p = _mm512_mullo_epi16(sa, sb);
    // leading zeros of each u16 lane from two dword counts: the high lane's directly, the
    // low lane's after a rotate by 16
    let lz_hi = _mm512_lzcnt_epi32(p);
    let lz_lo = _mm512_lzcnt_epi32(_mm512_rol_epi32::<16>(p));
    let lz = _mm512_or_si512(lz_lo, _mm512_slli_epi32::<16>(lz_hi));
    // 1.f x 2^14 with the bit shifted out kept as a sticky bit
    let p16 = _mm512_sllv_epi16(p, lz);
    let p15 = _mm512_ternarylogic_epi32::<0xF8>(_mm512_srli_epi16::<1>(p16), p16, one);
    // g = ea + eb + (15 - lz): the product's biased exponent is g - 141
    let g = _mm512_sub_epi16(_mm512_add_epi16(ea, eb), _mm512_sub_epi16(lz, c(15)));
    // a subnormal result shifts right 8 - exponent (at most 16) instead of 7
    let extra = _mm512_min_epu16(_mm512_subs_epu16(c(142), g), c(9));
    let shift = _mm512_add_epi16(extra, c(7));
    let half_less = _mm512_sub_epi16(_mm512_sllv_epi16(c(0x40), extra), one);
    // round to nearest even: add half minus one plus the kept lsb; at most 0xffff
    let lsb = _mm512_and_si512(_mm512_srlv_epi16(p15, shift), one);
    let sum = _mm512_add_epi16(_mm512_add_epi16(p15, half_less), lsb);
    let sig = _mm512_srlv_epi16(sum, shift);
    // exponent field - 1 above the hidden bit: a carry out of rounding lands in it, and the
    // largest normal rounding up gives Inf
    let r = _mm512_add_epi16(_mm512_slli_epi16::<7>(_mm512_subs_epu16(g, c(142))), sig);
    let a_zero = _mm512_testn_epi16_mask(ma, ma);
    let b_zero = _mm512_testn_epi16_mask(mb, mb);
    let a_inf = _mm512_cmpeq_epi16_mask(ma, exp);
    let b_inf = _mm512_cmpeq_epi16_mask(mb, exp);
    // exponent 255 or more before rounding, or an Inf operand
    let inf = _mm512_cmpgt_epu16_mask(g, c(395)) | a_inf | b_inf;
    let r = _mm512_mask_mov_epi16(r, inf, exp);
    let r = _mm512_maskz_mov_epi16(!(a_zero | b_zero), r);
    // the sign bit from a ^ b over the magnitude
    let r = _mm512_ternarylogic_epi32::<0xB8>(_mm512_xor_si512(a, b), c(0x7fff), r);
    // 0 x Inf has no NaN operand: the rule gives 0x7fff whatever the policy
    let r = _mm512_mask_mov_epi16(r, (a_inf & b_zero) | (a_zero & b_inf), c(0x7fff));
    let b_nan = _mm512_cmpgt_epu16_mask(mb, exp);
    let r = _mm512_mask_mov_epi16(r, b_nan, _mm512_ternarylogic_epi32::<0xEA>(b, nan.and, nan.or));
    let a_nan = _mm512_cmpgt_epu16_mask(ma, exp);
    _mm512_mask_mov_epi16(r, a_nan, _mm512_ternarylogic_epi32::<0xEA>(a, nan.and, nan.or))
}

/// 32 FP16 lane products `a * b` by `VMULPH` (rounded once to nearest even, subnormals
/// kept: [`super::ph`]), with the NaN rule applied as [`super::Ctx::finish_nan`] does: a
/// NaN `a`, else a NaN `b`, gives its quieted self (or the canonical NaN), and a NaN product
/// of no NaN operand (0 x Inf) 0x7fff.
///
/// # Safety
/// The CPU has AVX-512 FP16, F and BW (the caller's target features include them).
#[inline(always)]
unsafe fn mul_f16(a: __m512i, b: __m512i, nan: &NanRule) -> __m512i {
    // SAFETY: the caller's CPU
    unsafe {
        let c = _mm512_set1_epi16;
        let exp = c(0x7c00);
        let p = _mm512_castph_si512(_mm512_mul_ph(_mm512_castsi512_ph(a), _mm512_castsi512_ph(b)));
        let is_nan = |v| _mm512_cmpgt_epu16_mask(_mm512_and_si512(v, c(0x7fff)), exp);
        let r = _mm512_mask_mov_epi16(p, is_nan(p), c(0x7fff));
        let r = _mm512_mask_mov_epi16(r, is_nan(b), _mm512_ternarylogic_epi32::<0xEA>(b, nan.and, nan.or));
        _mm512_mask_mov_epi16(r, is_nan(a), _mm512_ternarylogic_epi32::<0xEA>(a, nan.and, nan.or))
    }
}

/// How a row kernel ([`row`]) reads operand 2's lanes: `(((v & keep) | fixed) & and) ^
/// xor` (RZ and immediates, then |x| and -x; no input flushing).
#[derive(Clone, Copy, Debug)]
pub(super) struct RowSrc {
    pub keep: u16,
    pub fixed: u16,
    pub and: u16,
    pub xor: u16,
}

/// A row kernel's lane operation: [`ROW_MUL`] or [`ROW_ADD`], of [`ROW_F16`] or BF16 lanes.
const ROW_MUL: u8 = 0;
const ROW_ADD: u8 = 1;
const ROW_F16: u8 = 2;

/// `r[k]` = `a` op `b'[k]` (`b'` as `src` reads `b`) for the lanes of a row (operand 1
/// fixed, already selected and modified: [`super::MulRow`], [`super::add::AddRow`]), 32 a
/// step, in one pass from `b` to `r`, with the NaN rule of [`super::Ctx::finish_nan`] and
/// `AddCtx::finish_nan` (the same): a NaN `a`, else a NaN `b'[k]`, gives its quieted self, a
/// NaN result of no NaN operand (0 x Inf, Inf - Inf) 0x7fff, and `canonical` makes every NaN
/// 0x7fff. The operation, `OP` ([`ROW_MUL`] or [`ROW_ADD`], plus [`ROW_F16`] for FP16):
///
/// - FP16: `VMULPH` or `VADDPH` (IEEE 754 binary16, rounded once to nearest even,
///   subnormals kept: [`super::ph`]);
/// - BF16 products: [`mul`]'s integer steps (f32 products take microcode assists on BF16's
///   subnormals);
/// - BF16 sums: each half of the step as f32, one f32 addition (exact, or rounded
///   harmlessly: the module `add`'s text), round to nearest even at bit 16 in integer steps
///   (`bf16_rne`'s; BF16's subnormals are the upper halves of f32's, and additions take no
///   microcode assist on them), the upper halves gathered by one permute.
///
/// Only for plain lanes: no flushing, .FMZ or .SAT (and for sums, the IEEE sign of an exact
/// zero sum, which f32's and binary16's own additions give). Masked loads and stores take
/// the tail.
///
/// # Safety
/// The CPU has what [`super::ph::available`] checks: only from code compiled for it
/// (`row_ph`).
#[inline(always)]
unsafe fn row<const OP: u8>(canonical: bool, quiet: u16, a: u16, src: RowSrc, b: &[u16], r: &mut [u16]) {
    let f16 = OP & ROW_F16 != 0;
    let add = OP & ROW_ADD != 0;
    // SAFETY (the whole body): the caller's CPU; the masks cover lanes k..min(k + 32, n),
    // inside both slices, for every load and store
    unsafe {
        let c16 = _mm512_set1_epi16;
        let c32 = _mm512_set1_epi32;
        let nan = NanRule { and: c16(if canonical { 0 } else { -1 }), or: c16(if canonical { 0x7fff } else { quiet as i16 }) };
        let exp = c16(if f16 { 0x7c00 } else { 0x7f80 });
        let is_nan = |v| _mm512_cmpgt_epu16_mask(_mm512_and_si512(v, c16(0x7fff)), exp);
        let va = c16(a as i16);
        let a_nan = is_nan(va) != 0;
        let (keep, fixed, and, xor) = (c16(src.keep as i16), c16(src.fixed as i16), c16(src.and as i16), c16(src.xor as i16));
        let fa = _mm512_castsi512_ps(c32(((a as u32) << 16) as i32));
        // word i of a BF16 sum: the upper half of dword i of the low sums, then of the high
        let mut odd = [0u16; 32];
        for (i, v) in odd.iter_mut().enumerate() {
            *v = (2 * i + 1) as u16;
        }
        let odd = _mm512_loadu_si512(odd.as_ptr() as *const _);
        let rne = |s: __m512| {
            let s = _mm512_castps_si512(s);
            _mm512_add_epi32(_mm512_add_epi32(s, c32(0x7fff)), _mm512_and_si512(_mm512_srli_epi32::<16>(s), c32(1)))
        };
        let wide = |h: __m256i| _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h)));
        let ph = |v: __m512i| _mm512_castsi512_ph(v);
        let n = b.len().min(r.len());
        let mut k = 0;
        while k < n {
            let m: __mmask32 = if n - k >= 32 { u32::MAX } else { (1u32 << (n - k)) - 1 };
            let vb = _mm512_maskz_loadu_epi16(m, b.as_ptr().add(k) as *const i16);
            let vb = _mm512_ternarylogic_epi32::<0x6A>(_mm512_ternarylogic_epi32::<0xEA>(vb, keep, fixed), and, xor);
            let v = match (add, f16) {
                // the integer product applies the NaN rule itself
                (false, false) => mul(va, vb, &nan),
                (false, true) => _mm512_castph_si512(_mm512_mul_ph(ph(va), ph(vb))),
                (true, true) => _mm512_castph_si512(_mm512_add_ph(ph(va), ph(vb))),
                (true, false) => {
                    let lo = rne(_mm512_add_ps(fa, wide(_mm512_castsi512_si256(vb))));
                    let hi = rne(_mm512_add_ps(fa, wide(_mm512_extracti64x4_epi64::<1>(vb))));
                    _mm512_permutex2var_epi16(lo, odd, hi)
                }
            };
            let v = if add || f16 {
                let v = _mm512_mask_mov_epi16(v, is_nan(v), c16(0x7fff));
                let v = _mm512_mask_mov_epi16(v, is_nan(vb), _mm512_ternarylogic_epi32::<0xEA>(vb, nan.and, nan.or));
                if a_nan {
                    _mm512_ternarylogic_epi32::<0xEA>(va, nan.and, nan.or)
                } else {
                    v
                }
            } else {
                v
            };
            _mm512_mask_storeu_epi16(r.as_mut_ptr().add(k) as *mut i16, m, v);
            k += 32;
        }
    }
}

/// [`row`] for a product (`add` false) or a sum of BF16 (`bf16`) or FP16 lanes: the one
/// place that picks the kernel's instantiation, outside its loop.
///
/// # Safety
/// As [`row`]'s.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn row_for(add: bool, bf16: bool, canonical: bool, quiet: u16, a: u16, src: RowSrc, b: &[u16], r: &mut [u16]) {
    // SAFETY: the caller's
    unsafe {
        match (add, bf16) {
            (false, true) => row::<ROW_MUL>(canonical, quiet, a, src, b, r),
            (false, false) => row::<{ ROW_MUL | ROW_F16 }>(canonical, quiet, a, src, b, r),
            (true, true) => row::<ROW_ADD>(canonical, quiet, a, src, b, r),
            (true, false) => row::<{ ROW_ADD | ROW_F16 }>(canonical, quiet, a, src, b, r),
        }
    }
}

/// Everything the steps need, built once per call.
struct Setup {
    a: Src,
    b: Src,
    nan: NanRule,
    /// The fields a, b, d and the dword of pred.
    fa: Field,
    fb: Field,
    fd: Field,
    fp: Field,
    /// The guard: `pred | pt` has `guard_bit` set, negated when `flip`.
    pt: __m512i,
    guard_bit: __m512i,
    flip: bool,
}

/// The plain BF16 body of [`super::eval_batch`].
///
/// # Safety
/// The CPU has AVX-512 F, BW and CD; `c` is BF16 with [`super::Masks::plain`] masks;
/// `out` holds at least `xs.len()` values.
#[target_feature(enable = "avx512f,avx512bw,avx512cd")]
pub(super) unsafe fn eval(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    // SAFETY: the caller's
    unsafe { eval_body::<false>(c, xs, out) }
}

/// The plain FP16 body of [`super::eval_batch`], [`eval`]'s steps with [`mul_f16`].
///
/// # Safety
/// The CPU has what [`super::ph::available`] checks; `c` is FP16 with
/// [`super::Masks::plain`] masks; `out` holds at least `xs.len()` values.
#[target_feature(enable = "avx512fp16,avx512f,avx512bw,avx512cd,avx512vl")]
pub(super) unsafe fn eval_f16(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    // SAFETY: the caller's
    unsafe { eval_body::<true>(c, xs, out) }
}

/// [`eval`] and [`eval_f16`]: `F16` picks the lane product.
///
/// # Safety
/// As theirs (only from them: the CPU features are theirs).
#[inline(always)]
unsafe fn eval_body<const F16: bool>(c: &Ctx, xs: &[Inputs], out: &mut [u32]) {
    if c.o.dst_rz {
        out[..xs.len()].fill(0);
        return;
    }
    let canonical = c.m.canonical != 0;
    let s = Setup {
        a: Src::new(c.a_sh, c.o.a_keep, 0, c.a_and, c.a_xor),
        b: Src::new(c.b_sh, c.o.b_keep, c.o.b_fixed, c.b_and, c.b_xor),
        nan: NanRule { and: _mm512_set1_epi16(if canonical { 0 } else { -1 }), or: _mm512_set1_epi16(if canonical { 0x7fff } else { c.quiet as i16 }) },
        fa: Field::new(WA),
        fb: Field::new(WB),
        fd: Field::new(WD),
        fp: Field::new(WP),
        // the guard bit within the pred dword, PT (bit 7) always set
        pt: _mm512_set1_epi32(0x80 << (8 * PRED_BYTE)),
        guard_bit: _mm512_set1_epi32((1u32 << (c.o.pred_shift + 8 * PRED_BYTE)) as i32),
        flip: c.o.pred_flip != 0,
    };
    // both operands' words as they are: no half select, modifier, RZ or immediate
    let direct = c.a_sh == [0, 16]
        && c.b_sh == [0, 16]
        && (c.o.a_keep, c.o.b_keep, c.o.b_fixed) == (u32::MAX, u32::MAX, 0)
        && (c.a_and, c.a_xor, c.b_and, c.b_xor) == (0xffff, 0, 0xffff, 0);
    let always = c.o.pred_shift == crate::isa::PT as u32 && c.o.pred_flip == 0;
    let n = xs.len() / 16 * 16;
    // SAFETY: the caller's promises, and n <= xs.len() <= out.len()
    unsafe {
        match (direct, always) {
            (true, true) => steps::<true, true, F16>(&s, &xs[..n], out),
            (true, false) => steps::<true, false, F16>(&s, &xs[..n], out),
            (false, true) => steps::<false, true, F16>(&s, &xs[..n], out),
            (false, false) => steps::<false, false, F16>(&s, &xs[..n], out),
        }
    }
    for (x, o) in xs[n..].iter().zip(&mut out[n..]) {
        *o = c.eval_one(x);
    }
}

/// 16 inputs a step; `xs.len()` a multiple of 16. `DIRECT`: the lanes are the operand
/// words' halves as they are. `ALWAYS`: the guard is PT (no d or pred to read). `F16`: the
/// lanes are FP16 ([`mul_f16`]), else BF16 ([`mul`]).
///
/// # Safety
/// As [`eval`]'s, or [`eval_f16`]'s with `F16` (only from them).
#[inline(always)]
unsafe fn steps<const DIRECT: bool, const ALWAYS: bool, const F16: bool>(s: &Setup, xs: &[Inputs], out: &mut [u32]) {
    // SAFETY (the whole body): the CPU features of the callers; k + 16 <= xs.len() <=
    // out.len() for every load and store
    unsafe {
        for k in (0..xs.len()).step_by(16) {
            let v = load(xs.as_ptr().add(k));
            let (aw, bw) = (s.fa.of(&v), s.fb.of(&v));
            let (a, b) = if DIRECT { (aw, bw) } else { (s.a.lanes(aw), s.b.lanes(bw)) };
            let mut r = if F16 { mul_f16(a, b, &s.nan) } else { mul(a, b, &s.nan) };
            if !ALWAYS {
                let (d, pred) = (s.fd.of(&v), s.fp.of(&v));
                let set = _mm512_test_epi32_mask(_mm512_or_si512(pred, s.pt), s.guard_bit);
                r = _mm512_mask_mov_epi32(d, if s.flip { !set } else { set }, r);
            }
            _mm512_storeu_si512(out.as_mut_ptr().add(k) as *mut _, r);
        }
    }
}
