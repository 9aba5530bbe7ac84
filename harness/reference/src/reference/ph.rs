//! FP16 lanes with AVX-512 FP16's own arithmetic (`VMULPH`, `VADDPH`, `VFMADD213PH`):
//! IEEE 754 binary16 operations rounded once to nearest even (MXCSR's rounding, which Rust
//! code leaves at nearest even), subnormal operands and results kept, 32 lanes a vector. They give the rounded lane
//! only; the callers apply the instruction's own NaN rule and modifiers after them, as they
//! do after their f32 paths. The tests hold every kernel equal to the f32 paths (which the
//! exhaustive rustc_apfloat tests prove) on every FP16 pair.
//!
//! Masked loads and stores take each slice's tail, so there is no scalar tail.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

/// Whether the CPU has what the kernels here (and the code compiled around them, BF16's
/// integer row products among it) need: AVX-512 FP16, BW, VL, CD and F, AVX2 and F16C.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512fp16")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512cd")
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("f16c")
}

/// The mask of the first `n` (at most 32) lanes of a vector.
#[inline(always)]
fn first(n: usize) -> __mmask32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// `r[k]` = `a[k]` op `b[k]` for k below the shortest length, through `op` on 32 lanes.
#[inline(always)]
unsafe fn binary(a: &[u16], b: &[u16], r: &mut [u16], op: impl Fn(__m512h, __m512h) -> __m512h) {
    let n = a.len().min(b.len()).min(r.len());
    let mut k = 0;
    while k < n {
        let m = first(n - k);
        // SAFETY: the mask covers lanes k..min(k + 32, n), inside every slice; masked-off
        // lanes are neither read nor written
        let (va, vb) = unsafe { (_mm512_maskz_loadu_epi16(m, a.as_ptr().add(k) as *const i16), _mm512_maskz_loadu_epi16(m, b.as_ptr().add(k) as *const i16)) };
        let v = op(_mm512_castsi512_ph(va), _mm512_castsi512_ph(vb));
        // SAFETY: as above
        unsafe { _mm512_mask_storeu_epi16(r.as_mut_ptr().add(k) as *mut i16, m, _mm512_castph_si512(v)) };
        k += 32;
    }
}

/// `r[k]` = `a[k]`·`b[k]` rounded once to nearest even (FP16 bits).
///
/// # Safety
/// The CPU has AVX-512 FP16, BW and F ([`available`]).
#[target_feature(enable = "avx512fp16,avx512bw,avx512vl,avx512f")]
pub unsafe fn mul(a: &[u16], b: &[u16], r: &mut [u16]) {
    // SAFETY: the caller's CPU check
    unsafe { binary(a, b, r, |x, y| _mm512_mul_ph(x, y)) }
}

/// `r[k]` = `a[k]` + `b[k]` rounded once to nearest even (FP16 bits).
///
/// # Safety
/// As [`mul`].
#[target_feature(enable = "avx512fp16,avx512bw,avx512vl,avx512f")]
pub unsafe fn add(a: &[u16], b: &[u16], r: &mut [u16]) {
    // SAFETY: the caller's CPU check
    unsafe { binary(a, b, r, |x, y| _mm512_add_ph(x, y)) }
}

/// `r[k]` = `a[k]`·`b[k]` + `c[k]` rounded once to nearest even (FP16 bits), for k below
/// the shortest length.
///
/// # Safety
/// As [`mul`].
#[target_feature(enable = "avx512fp16,avx512bw,avx512vl,avx512f")]
pub unsafe fn fma(a: &[u16], b: &[u16], c: &[u16], r: &mut [u16]) {
    let n = a.len().min(b.len()).min(c.len()).min(r.len());
    let mut k = 0;
    while k < n {
        let m = first(n - k);
        // SAFETY: the mask covers lanes k..min(k + 32, n), inside every slice
        let (va, vb, vc) = unsafe {
            (
                _mm512_maskz_loadu_epi16(m, a.as_ptr().add(k) as *const i16),
                _mm512_maskz_loadu_epi16(m, b.as_ptr().add(k) as *const i16),
                _mm512_maskz_loadu_epi16(m, c.as_ptr().add(k) as *const i16),
            )
        };
        let v = _mm512_fmadd_ph(_mm512_castsi512_ph(va), _mm512_castsi512_ph(vb), _mm512_castsi512_ph(vc));
        // SAFETY: as above
        unsafe { _mm512_mask_storeu_epi16(r.as_mut_ptr().add(k) as *mut i16, m, _mm512_castph_si512(v)) };
        k += 32;
    }
}
