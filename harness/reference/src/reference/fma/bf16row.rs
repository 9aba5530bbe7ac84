//! BF16 HFMA2 rows ([`Fma::batch_row`]: operands 1 and 3 one word for every input) with
//! AVX-512, 16 words a step, in f32 arithmetic that is **exact**: no rounding happens until
//! the final one to BF16, so there is no double rounding to redo and no f32 subnormal to
//! cost a microcode assist.
//!
//! # The step
//!
//! A step takes 16 words of operand 2 whose selected halves share their sign and exponent
//! field (a sweep's rows count operand 2 up in order, so 16 aligned words always do), the
//! field normal (1..=254), with a normal `a` and a finite `c` in each lane; every other
//! step, and every other row, takes the general kernels ([`Fma::plain_x8`]).
//!
//! In a lane, with `a = X`, the step's `b = Y` and `c = C` (modifiers applied), `X = ±mx·2^ex`,
//! `Y = ±my·2^ey` with `mx`, `my` in [1, 2) of 8 significant bits, `P = X·Y`, `ep = ex + ey`,
//! `C = ±mc·2^ec` (a subnormal c normalised) and `d = ec - ep`, chosen once per step:
//!
//! - `ep >= 129`: the result is the Inf of the product's sign;
//! - `d >= 11`: the result is `C` itself;
//! - `-14 <= d <= 10`: `s = X'·my + C'` by one f32 fused multiply-add, with `X' = ±mx` (the
//!   product's sign: `Y`'s sign and exponent are the step's) and `C' = C·2^-ep`; the lane's
//!   value is `s·2^K`, `K = ep`;
//! - `d <= -15`: the same with `C' = ±2^-20` (c's sign; `C' = C` when c is zero).
//!
//! **`ep >= 129`.** `|P| >= 2^ep >= 2^129`, and a finite BF16 `C` is below 2^128 in
//! magnitude, so `|P + C| > 2^128`, above the overflow threshold of round to nearest (the
//! largest finite plus half its ulp, `(2 - 2^-8)·2^127`): the sum rounds to Inf, with `P`'s
//! sign. (A sweep's rows meet this in about one step in eight, which the integer steps
//! would otherwise take.)
//!
//! **`d >= 11`.** `|P| < 2^(ep+2) <= 2^(ec-9)`, and the nearest decision point of BF16's round to
//! nearest from `C` (a BF16 value) is at least 2^(ec-9) away: half the spacing below a
//! power of two (2^(ec-8)), more elsewhere, and for a subnormal `C` half of 2^-133, far
//! more than 2^(ec-9) <= 2^-142; the overflow threshold is half an ulp (2^(ec-8)) above the
//! largest finite. So `C + P` rounds to `C`.
//!
//! **Exact, or as good.** `X'·my` is exact: at most 16 significant bits, in [1, 4) and a
//! multiple of 2^-14 (at most 255·255·2^-14 = 4 - 2^-5 + 2^-14). `C'` has at most 8 bits.
//! Where `d <= -15` the sum `S = X'·my + C'` is below 4 and a multiple of 2^-20: at most 22 bits, so
//! `s = S`. Where `-14 <= d <= 10` and `|S| < 2^10` (always for `d <= 9`:
//! `|C'| <= 2^(d+1) - 2^(d-6)`), `S` is a multiple of 2^min(-14, d-7) below 2^max(3, 10),
//! at most 24 bits again. Only where `d = 10` and `|S| >= 2^10` may the fused multiply-add
//! round (to a multiple of 2^-13, by at most 2^-14), and there BF16's rounding of `s` is
//! still that of `S`: its decision points (midpoints of BF16's grid, normal or subnormal,
//! and the overflow threshold) in [2^10, 2^11) are multiples of 4, and `S`, a multiple of 8
//! (`C'`) plus a product `1 <= |X'·my| <= 4 - 2^-5 + 2^-14`, is at least 2^-5 - 2^-14 from
//! every multiple of 4, more than the rounding's 2^-14, so none lies between `S` and `s`.
//! And `s` is zero (an exact cancellation) or at least 2^-21: never an f32 subnormal.
//!
//! **The stand-in.** Where `d <= -15`, `C' = ±2^-20` stands for `C·2^-ep`: both have c's
//! sign, are nonzero, and are smaller in magnitude than 2^-14 (`|C·2^-ep| < 2^(d+1)`).
//! `X'·my` is a multiple of 2^-14, and so is every decision point of BF16's round to nearest
//! near it (BF16's midpoints there are multiples of 2^-9 or coarser), so none lies strictly
//! between `X'·my` and `X'·my ± 2^-14`: the sum rounds the same for every term of one sign
//! and magnitude below 2^-14, the true one and its stand-in among them.
//!
//! **The rounding.** The lane's value is `s·2^K`: BF16's biased exponent `E = es + K`
//! (`es`, `s`'s f32 exponent field). Where `E` is in 1..=254 (and `s != 0`), BF16's round to
//! nearest even is that of `s` at 8 significant bits (`VCVTNE2PS2BF16`, which rounds a
//! normal f32 so; it flushes subnormals, and `s` is never one), then `K` is added to the
//! exponent field: a carry out of the significand, the largest finite rounding to Inf
//! included, lands in it. The step checks that on the rounded words: an exponent field
//! `e >= 1` with `e + K` in 2..=254 means `s != 0` and `E` (`e`, or `e - 1` after a carry) in
//! 1..=254. A word that fails (a few more fail than need to) sends the whole step to
//! integer steps: the significand with its hidden bit shifted right by 16,
//! or `17 - E` for a subnormal result (`E <= 0`), rounded to nearest even, under the
//! exponent field `max(E, 1) - 1` (a carry from the largest subnormal gives the smallest
//! normal), at most Inf; an exact zero sum is +0, as IEEE 754 says for `x·y + c` under
//! round to nearest.
//!
//! No NaN can arise (the operands are finite, `X` and `Y` nonzero), so the NaN rule has
//! nothing to do; `.SAT` and `.RELU` apply to the results as in the module `avx2`.

use super::avx2;
use super::Fma;
use std::arch::x86_64::*;

/// Words per step.
const STEP: usize = 16;

/// Whether the CPU has what [`row`] needs: AVX-512 F, BW and BF16, AVX2, F16C and FMA.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512bf16")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("fma")
}

/// Whether `v` (a lane value, modifiers applied) is a normal BF16 number.
fn normal(v: u16) -> bool {
    (1..=254).contains(&((v >> 7) & 0xff))
}

/// One lane's scalars for the steps whose operand-2 lane has sign `y_sign` and exponent
/// field `ey_field` (the module's text): `s = X'·my + C'`, the lane's value `s·2^K`; or,
/// where `konst` is set, the result `c` itself.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Lane {
    xp: f32,
    cp: f32,
    k: i32,
    konst: Option<u16>,
}

impl Lane {
    /// `x`: a normal lane value of operand 1, `c` a finite one of operand 3 (modifiers
    /// applied); `ey_field` in 1..=254. Integer steps only: every value built here is an
    /// f32 with at most 8 significant bits and a normal exponent.
    #[inline(always)]
    fn new(x: u16, c: u16, y_sign: u16, ey_field: u16) -> Lane {
        let ep = ((x >> 7) & 0xff) as i32 + ey_field as i32 - 254;
        // ±1.m·2^e with m's 7 bits
        let f32_of = |sign: u16, e: i32, m: u16| f32::from_bits((sign as u32 & 0x8000) << 16 | ((e + 127) as u32) << 23 | (m as u32 & 0x7f) << 16);
        if ep >= 129 {
            // |P| >= 2^129 > 2|C|: the sum overflows to P's sign's Inf (the module's text)
            return Lane { xp: 1.0, cp: 1.0, k: 0, konst: Some(((x ^ y_sign) & 0x8000) | 0x7f80) };
        }
        let xp = f32_of(x ^ y_sign, 0, x);
        let (cf, cm) = ((c >> 7) & 0xff, c & 0x7f);
        if cf == 0 && cm == 0 {
            return Lane { xp, cp: f32::from_bits((c as u32) << 16), k: ep, konst: None };
        }
        // c = ±1.m·2^ec, a subnormal one normalised (p of 0..=6 its leading one)
        let (ec, cm) = if cf == 0 {
            let p = 15 - cm.leading_zeros() as i32;
            (p - 133, cm << (7 - p))
        } else {
            (cf as i32 - 127, cm)
        };
        match ec - ep {
            d if d <= -15 => Lane { xp, cp: f32_of(c, -20, 0), k: ep, konst: None },
            d if d <= 10 => Lane { xp, cp: f32_of(c, d, cm), k: ep, konst: None },
            _ => Lane { xp: 1.0, cp: 1.0, k: 0, konst: Some(c) },
        }
    }
}

/// Both lanes' scalars as vectors, interleaved as a word's halves are (dword `2i`: lane
/// 0, `2i + 1`: lane 1), built once for the steps that share them.
#[derive(Clone, Copy)]
struct Consts {
    xp: __m512,
    cp: __m512,
    k: __m512i,
    /// Each 16-bit word of `s` rounded to BF16 ([`step`]): its magnitude minus `lo` below
    /// `span` when its exponent field `e` has `e + K` in 2..=254 (so `s != 0`, and before
    /// the rounding's carry `E` was in 1..=254); a constant lane's words always.
    lo: __m512i,
    span: __m512i,
    /// Each 16-bit word: its lane's `K` in the exponent field (`K·2^7`).
    k16: __m512i,
    /// The words of a constant lane, and their value.
    konst: __mmask32,
    konst_value: __m512i,
    /// Whether a step must check `lo` and `span`: false where every lane is constant or its
    /// `s` is bounded so that the check always passes (see [`Consts::new`]).
    check: bool,
}

impl Consts {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(l: [Lane; 2]) -> Consts {
        let pair = |a: u32, b: u32| _mm512_set1_epi64((a as u64 | (b as u64) << 32) as i64);
        let mut lo = [0u16; 2];
        let mut span = [0u16; 2];
        for j in 0..2 {
            // the rounded exponent field e in a..=b: e + k in 2..=254, e >= 1
            let (a, b) = ((2 - l[j].k).max(1), (254 - l[j].k).min(254));
            (lo[j], span[j]) = match l[j].konst {
                Some(_) => (0, u16::MAX),
                None if a <= b => ((a as u16) << 7, ((b - a + 1) as u16) << 7),
                None => (0, 0),
            };
        }
        // A lane whose `|C'|` is at most 2^-20 (the stand-in, or a zero c) has `1 - 2^-20 <=
        // |s| <= 255·255·2^-14 + 2^-20 = 4 - 2^-5 + 2^-14 + 2^-20`, which BF16 rounds into
        // [1, 4 - 2^-6] (the midpoints beyond are 1 - 2^-9 and 4 - 2^-7): exponent field 127
        // or 128, which the check passes for every K in -125..=126. A constant lane passes
        // always. Where both lanes are one or the other, the check is skipped: the same
        // steps take the fast way, without it.
        let bounded = |l: &Lane| l.konst.is_some() || (l.cp.abs() <= 2f32.powi(-20) && (-125..=126).contains(&l.k));
        let words = |v: [u16; 2]| _mm512_set1_epi32((v[0] as u32 | (v[1] as u32) << 16) as i32);
        let k16 = |l: &Lane| ((l.k << 7) as u16) as u32;
        let value = |l: &Lane| l.konst.unwrap_or(0) as u32;
        Consts {
            xp: _mm512_castsi512_ps(pair(l[0].xp.to_bits(), l[1].xp.to_bits())),
            cp: _mm512_castsi512_ps(pair(l[0].cp.to_bits(), l[1].cp.to_bits())),
            k: pair(l[0].k as u32, l[1].k as u32),
            lo: words(lo),
            span: words(span),
            k16: _mm512_set1_epi32((k16(&l[0]) | k16(&l[1]) << 16) as i32),
            konst: (if l[0].konst.is_some() { 0x5555_5555 } else { 0 }) | (if l[1].konst.is_some() { 0xaaaa_aaaa } else { 0 }),
            konst_value: _mm512_set1_epi32((value(&l[0]) | value(&l[1]) << 16) as i32),
            check: !l.iter().all(bounded),
        }
    }
}

/// The exact sums `s` of 16 lanes (8 words), their BF16 rounding by integer steps: the
/// results in the low 16 bits of each dword (the module's text).
#[inline]
#[target_feature(enable = "avx512f")]
fn round_general(v: &Consts, s: __m512) -> __m512i {
    let c = _mm512_set1_epi32;
    let one = c(1);
    let si = _mm512_castps_si512(s);
    let abs = _mm512_and_si512(si, c(0x7fff_ffff));
    let e = _mm512_add_epi32(_mm512_srli_epi32::<23>(abs), v.k);
    let sig = _mm512_ternarylogic_epi32::<0xEA>(abs, c(0x7f_ffff), c(0x80_0000));
    // the shift to BF16's significand: 16, more for a subnormal result (32 and more: 0)
    let sh = _mm512_max_epi32(_mm512_sub_epi32(c(17), e), c(16));
    let half_less = _mm512_sub_epi32(_mm512_sllv_epi32(one, _mm512_sub_epi32(sh, one)), one);
    let lsb = _mm512_and_si512(_mm512_srlv_epi32(sig, sh), one);
    let rounded = _mm512_srlv_epi32(_mm512_add_epi32(_mm512_add_epi32(sig, half_less), lsb), sh);
    let field = _mm512_add_epi32(_mm512_slli_epi32::<7>(_mm512_max_epi32(_mm512_sub_epi32(e, one), _mm512_setzero_si512())), rounded);
    let field = _mm512_min_epi32(field, c(0x7f80));
    // an exact zero sum is +0 (s is +0 then)
    let field = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(abs, abs), field);
    // sign | field
    _mm512_ternarylogic_epi32::<0xEA>(_mm512_srli_epi32::<16>(si), c(0x8000), field)
}

/// One step: the 16 result words for the 16 operand-2 words `w`, whose lanes' sign and
/// exponent fields are those `v` was built for; `sel`: the vpermw indices that put each
/// lane's half of `w` in the upper half of its dword (`lo8`: words 0-7, `hi8`: 8-15).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
fn step(v: &Consts, w: __m512i, sel: &[__m512i; 2]) -> __m512i {
    let c = _mm512_set1_epi32;
    // each lane's significand as f32 in [1, 2): its 7 fraction bits under 1's exponent
    // (the odd words hold the halves; the mask clears the even ones)
    let my = |idx| _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xEA>(_mm512_permutexvar_epi16(idx, w), c(0x007f_0000), c(0x3f80_0000)));
    let s0 = _mm512_fmadd_ps(v.xp, my(sel[0]), v.cp);
    let s1 = _mm512_fmadd_ps(v.xp, my(sel[1]), v.cp);
    // round to nearest even at bit 16 (s is a normal f32 or zero)
    let r = _mm512_cvtne2ps_pbh(s1, s0);
    // SAFETY: two 512-bit vectors, every bit pattern valid for both
    let r = unsafe { std::mem::transmute::<__m512bh, __m512i>(r) };
    let passes = || _mm512_cmplt_epu16_mask(_mm512_sub_epi16(_mm512_and_si512(r, _mm512_set1_epi16(0x7fff)), v.lo), v.span) == u32::MAX;
    if !v.check || passes() {
        // every lane's E + carry in 2..=254, so E was in 1..=254: K into the exponent
        // field (E stays in 1..=255: a carry from the largest finite gives Inf)
        return _mm512_mask_mov_epi16(_mm512_add_epi16(r, v.k16), v.konst, v.konst_value);
    }
    let lo = _mm512_cvtepi32_epi16(round_general(v, s0));
    let hi = _mm512_cvtepi32_epi16(round_general(v, s1));
    _mm512_mask_mov_epi16(_mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi), v.konst, v.konst_value)
}

/// The words of `f`'s row (`a`, `b[i]`, `c`) for `b` and `out` as long; `Some(n)`: done
/// (the whole row, fast steps and general ones alike), `None`: the row is not one this
/// kernel takes (the caller's general kernels do it all).
///
/// # Safety
/// The CPU has what [`available`] checks; `f` is BF16 with plain arithmetic
/// ([`Fma::plain_arith`]).
#[target_feature(enable = "avx512f,avx512bw,avx512bf16,avx2,f16c,fma")]
pub(super) unsafe fn row(f: &Fma, a: u32, b: &[u32], c: u32, out: &mut [u32]) -> Option<usize> {
    assert_eq!(b.len(), out.len(), "bf16row::row: operand 2 and results");
    let x = [f.src(0, a, 0), f.src(0, a, 1)];
    let cl = [f.src(2, c, 0), f.src(2, c, 1)];
    // the lanes' operand-2 halves must be whole halves (0 or 16), as every select is
    let shb = f.sh[1];
    if !(x.iter().all(|&v| normal(v)) && cl.iter().all(|&v| v & 0x7f80 != 0x7f80) && shb.iter().all(|&s| s == 0 || s == 16)) {
        return None;
    }
    let n = out.len();
    let post = f.sat != 0 || f.relu != 0;
    let (fa, fc) = ([a; avx2::STEP], [c; avx2::STEP]);
    let general = |lo: usize, hi: usize, out: &mut [u32]| {
        let done = f.plain_x8(avx2::Words::fixed(&fa), &b[lo..hi], avx2::Words::fixed(&fc), &mut out[lo..hi], true);
        debug_assert_eq!(done, Some(hi - lo));
    };
    // vpermw indices: the odd word of dword 2i + l (words i of 0-7, or of 8-15) is word i's
    // half of lane l
    let sel = [0usize, 8].map(|base| {
        let mut idx = [0u16; 32];
        for (j, v) in idx.iter_mut().enumerate() {
            let (word, lane) = (base + j / 4, (j / 2) % 2);
            *v = (2 * word + shb[lane] as usize / 16) as u16;
        }
        // SAFETY: 64 bytes, an unaligned load
        unsafe { _mm512_loadu_si512(idx.as_ptr() as *const _) }
    });
    let c32 = _mm512_set1_epi32;
    // the steps' sign and exponent fields, both halves
    let sign_exp = 0xff80_ff80u32;
    let mut key = None;
    let mut consts: Option<Consts> = None;
    let mut i = 0;
    while i + STEP <= n {
        let w0 = b[i];
        // SAFETY: i + 16 <= n = b.len()
        let w = unsafe { _mm512_loadu_si512(b.as_ptr().add(i) as *const _) };
        let same = _mm512_testn_epi32_mask(_mm512_xor_si512(w, c32(w0 as i32)), c32(sign_exp as i32)) == 0xffff;
        if same && key != Some(w0 & sign_exp) {
            key = Some(w0 & sign_exp);
            let (y0, y1) = (f.modded(1, (w0 >> shb[0]) as u16), f.modded(1, (w0 >> shb[1]) as u16));
            consts = (normal(y0) && normal(y1)).then(|| {
                let lane = |l: usize, y: u16| Lane::new(x[l], cl[l], y & 0x8000, (y >> 7) & 0xff);
                Consts::new([lane(0, y0), lane(1, y1)])
            });
        }
        match (same, &consts) {
            (true, Some(v)) => {
                let mut r = step(v, w, &sel);
                if post {
                    let h0 = avx2::sat_relu(f, _mm512_castsi512_si256(r));
                    let h1 = avx2::sat_relu(f, _mm512_extracti64x4_epi64::<1>(r));
                    r = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(h0), h1);
                }
                // SAFETY: i + 16 <= n = out.len()
                unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(i) as *mut _, r) };
            }
            _ => general(i, i + STEP, out),
        }
        i += STEP;
    }
    if i < n {
        // the tail: whole steps of 8 by the general kernels, then word by word
        let done = n - (n - i) % avx2::STEP;
        if done > i {
            general(i, done, out);
        }
        for (o, &bw) in out[done..].iter_mut().zip(&b[done..]) {
            *o = f.eval(a, bw, c);
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::super::{Fma, FmaOp};
    use crate::isa::{Format, SrcMods, Swizzle};
    use crate::reference::policy::ReluNan;
    use crate::reference::Policy;
    use crate::rng::Rng;

    /// Whether the CPU runs [`super::row`]; the test says so where it does not.
    fn cpu() -> bool {
        let f = super::available();
        if !f {
            crate::testlevel::not_checked(&["avx512f"], "the CPU has no AVX-512 F: the BF16 row kernel is not taken here, and not checked");
        }
        f
    }

    /// A BF16 lane value for operand 1 or 3: every exponent, subnormals, zeros and
    /// specials, and values whose exponent is near another's (cancellation).
    fn value(s: &mut Rng) -> u16 {
        const SPECIAL: [u16; 10] = [0x0000, 0x8000, 0x0001, 0x007f, 0x0080, 0x3f80, 0x7f7f, 0x7f80, 0x7fc0, 0x0040];
        let r = s.next_u64();
        match r % 6 {
            0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()] | ((r >> 63) as u16) << 15,
            // the exponent range's two ends, where products and sums leave the normal range
            1 => ((r >> 16) as u16 & 0x807f) | [0x0080, 0x0100, 0x7f00, 0x7e80, 0x0000, 0x0200][(r >> 8) as usize % 6],
            _ => (r >> 16) as u16,
        }
    }

    /// The row kernel against the scalar lane on every operand-2 value (all 2^16 words
    /// y·0x10001, as a sweep's rows read them, then random words) for seeded random rows
    /// that cover each case of the module's text: every exponent distance of c and the
    /// product, stand-ins, round to odd, cancellation to zero and to subnormals, overflow,
    /// specials (which the general kernels take), modifiers, .SAT and .RELU.
    #[test]
    fn row_kernel_is_the_scalar_lane() {
        if !cpu() {
            return;
        }
        let seed = std::env::var("HMUL2_FMA_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_b16au64);
        println!("row_kernel_is_the_scalar_lane: seed {seed} (HMUL2_FMA_SEED)");
        let mut s = Rng::new(seed);
        let ys: Vec<u32> = (0..1u32 << 16).map(|y| y * 0x10001).collect();
        let mut out = vec![0u32; ys.len()];
        let swz = [Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1];
        let (mut rows, mut taken) = (0, 0);
        let n_rows = crate::testlevel::sized("BF16 HFMA2 rows of 2^16 operand-2 words", 6000, 600);
        for round in 0..n_rows {
            let mut m = |on: bool| {
                let r = s.next_u64();
                if on {
                    SrcMods { neg: r & 1 == 1, abs: r & 2 == 2, swizzle: swz[(r >> 2) as usize % 3] }
                } else {
                    SrcMods::default()
                }
            };
            let mods = round % 4 == 3;
            let (am, bm, cm) = (m(mods), m(mods), m(mods));
            let r = s.next_u64();
            let (sat, relu) = if round % 8 == 7 { (r & 1 == 0, r & 1 == 1) } else { (false, false) };
            let op = FmaOp { format: Format::Bf16, a_mods: am, b_mods: bm, c_mods: cm, sat, relu, ..Default::default() };
            let mut p = *Policy::current();
            p.nan_canonical = r & 4 != 0;
            p.fma_relu_nan = [ReluNan::Canonical, ReluNan::Pass, ReluNan::Zero][(r >> 8) as usize % 3];
            let f = Fma::new(&op, &p).unwrap();
            // both halves one value (a sweep's), or two; in every seventh row a significand
            // of 151 or 217 (151·217 = 2^15 - 1: with y's significand the other, a product
            // 2^-14 from a midpoint of BF16's grid)
            let a = (value(&mut s) as u32 * 0x10001) ^ if round % 5 == 0 { (s.next_u64() as u32) & 0xffff } else { 0 };
            let a = if round % 7 == 0 { (a & 0xff80_ff80) | ([23, 89][(a & 1) as usize] * 0x10001) } else { a };
            // c: random, or -(a's value times some y) for an exact cancellation (y a power
            // of two) or a near one somewhere in the row
            let c = match round % 3 {
                0 => value(&mut s) as u32 | (value(&mut s) as u32) << 16,
                1 => {
                    let r = s.next_u64();
                    let y = (r >> 48) as u16 & if r & 1 == 0 { 0xff80 } else { 0xffff };
                    let xv = f32::from_bits((a & 0xffff) << 16) as f64 * f32::from_bits((y as u32) << 16) as f64;
                    let neg = (((-xv) as f32).to_bits() >> 16) as u16;
                    neg as u32 | (value(&mut s) as u32) << 16
                }
                _ => {
                    let v = value(&mut s) as u32;
                    v | v << 16
                }
            };
            // every y in order, then random words (steps whose words differ)
            let random: Vec<u32> = (0..1000).map(|_| s.next_u64() as u32).collect();
            for b in [&ys[..], &random[..]] {
                let out = &mut out[..b.len()];
                // SAFETY: the CPU checked above; BF16 with plain arithmetic
                let done = unsafe { super::row(&f, a, b, c, out) };
                rows += 1;
                let Some(done) = done else { continue };
                taken += 1;
                assert_eq!(done, b.len());
                for (&bw, &o) in b.iter().zip(out.iter()) {
                    let want = f.eval(a, bw, c);
                    assert_eq!(o, want, "seed {seed}, {op:?}: a {a:#010x} b {bw:#010x} c {c:#010x}: {o:#010x}, scalar {want:#010x}");
                }
            }
        }
        // the specials' rows are the general kernels' (a subnormal or special a, an Inf or NaN c)
        assert!(taken * 10 > rows * 7, "only {taken} of {rows} rows took the kernel");
        println!("{rows} rows ({taken} by the kernel) agree");
    }

    /// Each case of the module's text on the lane scalars, by hand.
    #[test]
    fn lane_cases() {
        use super::Lane;
        // x = 1.5 (0x3fc0), y exponent field 127 (ey = 0): ep = 0
        let l = Lane::new(0x3fc0, 0x3f80, 0, 127);
        assert_eq!(l, Lane { xp: 1.5, cp: 1.0, k: 0, konst: None });
        // c = 2^-15: d = -15, the stand-in
        let l = Lane::new(0x3fc0, 0x3800, 0x8000, 127);
        assert_eq!(l, Lane { xp: -1.5, cp: 2f32.powi(-20), k: 0, konst: None });
        // c = -2^-14: d = -14, scaled
        let l = Lane::new(0x3fc0, 0xb880, 0, 127);
        assert_eq!(l, Lane { xp: 1.5, cp: -(2f32.powi(-14)), k: 0, konst: None });
        // c = 1.5·2^10: d = 10, scaled
        assert_eq!(Lane::new(0x3fc0, 0x44c0, 0, 127), Lane { xp: 1.5, cp: 1536.0, k: 0, konst: None });
        // c = 3·2^10: d = 11, the result is c
        assert_eq!(Lane::new(0x3fc0, 0x4540, 0x8000, 127), Lane { xp: 1.0, cp: 1.0, k: 0, konst: Some(0x4540) });
        // a subnormal c, -2^-133, and a product near 2^-200: d = 67
        assert_eq!(Lane::new(0x0dc0, 0x8001, 0, 27).konst, Some(0x8001));
        // a subnormal c, 3·2^-133 = 1.5·2^-132, and the product 1.5·2^-120: d = -12
        assert_eq!(Lane::new(0x3fc0, 0x0003, 0, 7), Lane { xp: 1.5, cp: 1.5 * 2f32.powi(-12), k: -120, konst: None });
        // zero c
        assert_eq!(Lane::new(0x3fc0, 0x8000, 0, 200), Lane { xp: 1.5, cp: -0.0, k: 73, konst: None });
        // x = 1.5·2^127 (0x7f40), y's exponent field 129: ep = 129, the product's Inf whatever
        // c, the largest finite of the other sign among them; ep = 128 is not taken so
        let inf = |x: u16, c: u16, ys: u16| Lane::new(x, c, ys, 129).konst;
        assert_eq!(inf(0x7f40, 0xff7f, 0), Some(0x7f80));
        assert_eq!(inf(0x7f40, 0x7f7f, 0x8000), Some(0xff80));
        assert_eq!(inf(0xff40, 0x0001, 0x8000), Some(0x7f80));
        assert_eq!(Lane::new(0x7f40, 0xff7f, 0, 128).konst, None);
    }
}
