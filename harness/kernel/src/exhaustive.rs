//! Exhaustive mode: every 16-bit × 16-bit input pair for one instruction, generated on the
//! device and checked by chunked digests, so 2^32 results never cross the bus.
//!
//! Protocol (the device kernel must compute exactly this):
//! - Input index k in 0..2^space_bits (32 in a real run). x = (k >> 16) & 0xffff,
//!   y = k & 0xffff; a = x·0x10001 and b = y·0x10001 (the value in both halves, so every
//!   half-select reads x and y), d = [`D_FILL`], predicates = 0x7f (P0..P6 true).
//! - A three-source word (HFMA2) has 2^48 inputs, too many to sweep: a request fixes its
//!   operand 3 to the request's `c` (a register, UR or `c[0x3][]` word holding it, or the
//!   encoding's immediates, which ignore it) and sweeps every (a, b) pair, so that a few
//!   chosen c values (zeros, infinities, NaN, subnormals, values that cancel) cover the
//!   addend's cases, each with all 2^32 products.
//! - Chunk c holds k in [c·2^chunk_bits, (c+1)·2^chunk_bits).
//! - digest(c) = Σ mix(k, r_k) mod 2^64 over the chunk, r_k = destination after, with
//!   mix(k, r) = splitmix64_finalize(k·2^32 + r). A sum of a strong mix is order-free, so
//!   threads and warps may reduce in any order.
//! - A job asks for `chunks` consecutive chunks starting at `first_chunk`. Its grid is one
//!   block of [`THREADS`] threads per chunk; thread t of block c runs the chunk's k with
//!   k mod 256 = t and outputs its partial sum as a little-endian u64 at byte 8·(256c + t)
//!   (one u64 per thread: no atomics, and no output zeroing, since the driver fills it
//!   with 0xA5). The CPU adds a chunk's 256 partials ([`sum_partials`]). Needs at least
//!   8 chunk bits. Its input buffer is [`DigestRequest::encode`] (the kernel takes its
//!   numbers as immediates; the buffer documents the job).
//!
//! The CPU computes the same digests from the reference, on the inputs the kernel really
//! reads (coinciding registers, RZ: `kernel::digest::digest_inputs`); a chunk whose digests
//! differ, or that holds inputs with an undefined result, is fetched: re-run as an
//! ordinary batch with explicit inputs and compared element by element.

use crate::inputs::Inputs;

pub mod sweep;

pub const D_FILL: u32 = 0x5a5a_a5a5;
pub const PRED_ALL: u8 = 0x7f;
/// Threads per block (per chunk) of a digest job.
pub const THREADS: u32 = 256;
/// Inputs per reference batch: large enough for `eval_batch`'s vector paths, small enough
/// for the cache.
const REF_BLOCK: u64 = 4096;

/// The inputs of index k (operand 3, when there is one, is the request's: [`DigestRequest::inputs`]).
pub fn inputs_for(k: u64) -> Inputs {
    let x = ((k >> 16) & 0xffff) as u32;
    let y = (k & 0xffff) as u32;
    Inputs { a: x * 0x10001, b: y * 0x10001, d: D_FILL, pred: PRED_ALL, c: 0 }
}

pub fn mix(k: u64, r: u32) -> u64 {
    let mut z = (k << 32) ^ r as u64;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Σ mix(k0 + i, r\[i\]) mod 2^64: the digest of consecutive results. A sum is
/// order-free, so the loop vectorises: with AVX-512 (`mix_x8::avx512`, 64-bit lane
/// multiplies) where the CPU has it, else with AVX2 (`mix_sum_x8`).
pub fn mix_sum(k0: u64, r: &[u32]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if has_avx512dq() {
        // SAFETY: the CPU has AVX-512 F and DQ (checked); r holds r.len() u32
        return unsafe { mix_x8::avx512::<false>(k0, r.as_ptr() as *const u8, r.len(), 0) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return mix_sum_x8(k0, r);
    }
    mix_sum_plain(k0, r)
}

/// [`mix_sum`] with AVX2: [`mix_x8::avx2`] where k is below 2^32, else the compiler's loop.
/// Panics without AVX2.
#[cfg(target_arch = "x86_64")]
fn mix_sum_x8(k0: u64, r: &[u32]) -> u64 {
    assert!(std::arch::is_x86_feature_detected!("avx2"), "mix_sum_x8 needs AVX2");
    split_x8(
        k0,
        r.len(),
        &|k, i, j| {
            // SAFETY: the CPU has AVX2 (asserted above)
            unsafe { mix_sum_avx2(k, &r[i..j]) }
        },
        &|k, i, j| {
            // SAFETY: the CPU has AVX2 (asserted above); split_x8 gives an 8-aligned k below
            // 2^32 whose range stays in one 2^30 segment, and i..j within r
            unsafe { mix_x8::avx2::<false>(k, r[i..j].as_ptr() as *const u8, j - i, 0) }
        },
    )
}

#[inline(always)]
fn mix_sum_plain(k0: u64, r: &[u32]) -> u64 {
    r.iter().enumerate().fold(0u64, |s, (i, &v)| s.wrapping_add(mix(k0.wrapping_add(i as u64), v)))
}

/// [`mix_sum_plain`] compiled for AVX2 (the compiler's vectorisation; the tests compare
/// [`mix_x8`] with it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mix_sum_avx2(k0: u64, r: &[u32]) -> u64 {
    mix_sum_plain(k0, r)
}

/// Whether the CPU has AVX-512 F and DQ (64-bit lane multiplies: [`mix_x8::avx512`]).
#[cfg(target_arch = "x86_64")]
fn has_avx512dq() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512dq")
}

/// Σ over n inputs from k0 by [`mix_x8`] where it applies: `plain(k, i, j)` / `fast(k, i, j)`
/// give the sum over inputs i..j (k = k0 + i). `fast` gets an 8-aligned k with k + (j - i)
/// at most 2^32 and k..k + (j - i) in one 2^30 segment; `plain` the rest (the first inputs
/// up to an 8-aligned k, k at or above 2^32).
#[cfg(target_arch = "x86_64")]
fn split_x8(k0: u64, n: usize, plain: &dyn Fn(u64, usize, usize) -> u64, fast: &dyn Fn(u64, usize, usize) -> u64) -> u64 {
    let n64 = n as u64;
    if k0 >= 1 << 32 || k0.checked_add(n64).is_none_or(|e| e > 1 << 32) {
        return plain(k0, 0, n);
    }
    let head = (k0.wrapping_neg() & 7).min(n64) as usize;
    let mut s = plain(k0, 0, head);
    let mut i = head;
    while i < n {
        let k = k0 + i as u64;
        let seg = ((k | ((1 << 30) - 1)) + 1 - k).min((n - i) as u64) as usize;
        s = s.wrapping_add(fast(k, i, i + seg));
        i += seg;
    }
    s
}

/// mix with AVX2 eight inputs at a time, for k below 2^32 (K = k fits 32 bits), built on
/// the structure of z = K·2^32 + r: z ^ (z >> 30) has high half H = K ^ (K >> 30) and low
/// half L = r ^ (r >> 30) ^ (K << 2), so z's first multiply by C1 is
/// L·C1lo + ((L·C1hi + H·C1lo) mod 2^32)·2^32: one 32-bit multiply for eight L·C1hi, two
/// `vpmuludq` for the eight L·C1lo, and H·C1lo by additions (with k 8-aligned and
/// K >> 30 = t fixed, K = G + j gives H = G + (j ^ t)). The second multiply is the usual
/// three `vpmuludq`. The compiler's loop ([`mix_sum_plain`]) takes six `vpmuludq` for four
/// inputs.
#[cfg(target_arch = "x86_64")]
mod mix_x8 {
    use std::arch::x86_64::*;

    const C1: u64 = 0xbf58_476d_1ce4_e5b9;
    const C2: u64 = 0x94d0_49bb_1331_11eb;

    /// Two mixes per 64-bit lane of z: the sum of mix for the eight 32-bit lanes of
    /// (k, r) as four u64.
    #[inline(always)]
    unsafe fn mix8(kv: __m256i, hc: __m256i, r: __m256i) -> __m256i {
        let c1lo = _mm256_set1_epi64x(C1 as u32 as i64);
        let c1hi = _mm256_set1_epi32((C1 >> 32) as u32 as i32);
        let himask = _mm256_set1_epi64x(0xffff_ffff_0000_0000u64 as i64);
        let l = _mm256_xor_si256(_mm256_xor_si256(r, _mm256_srli_epi32::<30>(r)), _mm256_slli_epi32::<2>(kv));
        let cross = _mm256_add_epi32(_mm256_mullo_epi32(l, c1hi), hc);
        let lo_e = _mm256_mul_epu32(l, c1lo);
        let lo_o = _mm256_mul_epu32(_mm256_srli_epi64::<32>(l), c1lo);
        let z_e = _mm256_add_epi64(lo_e, _mm256_slli_epi64::<32>(cross));
        let z_o = _mm256_add_epi64(lo_o, _mm256_and_si256(cross, himask));
        _mm256_add_epi64(fin(z_e), fin(z_o))
    }

    /// The rest of mix after the first multiply, four u64 lanes.
    #[inline(always)]
    unsafe fn fin(z: __m256i) -> __m256i {
        let c2lo = _mm256_set1_epi64x(C2 as u32 as i64);
        let c2hi = _mm256_set1_epi64x((C2 >> 32) as i64);
        let s = _mm256_xor_si256(z, _mm256_srli_epi64::<27>(z));
        let lo = _mm256_mul_epu32(s, c2lo);
        let t = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64::<32>(s), c2lo), _mm256_mul_epu32(s, c2hi));
        let z = _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(t));
        _mm256_xor_si256(z, _mm256_srli_epi64::<31>(z))
    }

    /// Σ mix(k0 + i, r_i) for i in 0..n as [`avx2`] sums it, with AVX-512: eight inputs to
    /// a vector as u64 z = k·2^32 ^ r, and `vpmullq` for both multiplies (no limit on k).
    /// Two vectors per step, so the multiplies' latency overlaps.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and DQ; `p` is valid for n reads of the element.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub unsafe fn avx512<const LANES: bool>(k0: u64, p: *const u8, n: usize, keep: u32) -> u64 {
        let c1 = _mm512_set1_epi64(C1 as i64);
        let c2 = _mm512_set1_epi64(C2 as i64);
        let keepv = _mm512_set1_epi64(keep as i64);
        // k·2^32 mod 2^64 for the vector's eight k, and the step of eight
        let mut kz = _mm512_slli_epi64::<32>(_mm512_add_epi64(_mm512_set1_epi64(k0 as i64), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7)));
        let step = _mm512_set1_epi64((8u64 << 32) as i64);
        let load = |i: usize| {
            if LANES {
                // SAFETY: the caller's i + 8 <= n u16 lanes
                let v = _mm512_cvtepu16_epi64(_mm_loadu_si128(p.add(2 * i) as *const __m128i));
                _mm512_and_si512(_mm512_or_si512(v, _mm512_slli_epi64::<16>(v)), keepv)
            } else {
                // SAFETY: the caller's i + 8 <= n u32 results
                _mm512_cvtepu32_epi64(_mm256_loadu_si256(p.add(4 * i) as *const __m256i))
            }
        };
        let mix = |z: __m512i| {
            let z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64::<30>(z)), c1);
            let z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64::<27>(z)), c2);
            _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z))
        };
        let (mut acc0, mut acc1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        let m = n / 16 * 16;
        let mut i = 0;
        while i < m {
            let kz1 = _mm512_add_epi64(kz, step);
            acc0 = _mm512_add_epi64(acc0, mix(_mm512_xor_si512(kz, load(i))));
            acc1 = _mm512_add_epi64(acc1, mix(_mm512_xor_si512(kz1, load(i + 8))));
            kz = _mm512_add_epi64(kz1, step);
            i += 16;
        }
        let mut s = _mm512_reduce_add_epi64(_mm512_add_epi64(acc0, acc1)) as u64;
        for i in m..n {
            let r = if LANES { (*(p.add(2 * i) as *const u16) as u32 * 0x10001) & keep } else { (p.add(4 * i) as *const u32).read_unaligned() };
            s = s.wrapping_add(super::mix(k0.wrapping_add(i as u64), r));
        }
        s
    }

    /// Σ mix(k0 + i, r_i) for i in 0..n, r_i the u32 at `p` + 4i, or with `LANES` the u16
    /// lane at `p` + 2i times 0x10001 and `keep`.
    ///
    /// # Safety
    /// The CPU has AVX2; `p` is valid for n reads of the element; k0 is a multiple of 8,
    /// k0 + n is at most 2^32 and k0..k0 + n lies in one 2^30 segment.
    #[target_feature(enable = "avx2")]
    pub unsafe fn avx2<const LANES: bool>(k0: u64, p: *const u8, n: usize, keep: u32) -> u64 {
        debug_assert!(k0.is_multiple_of(8) && k0 + n as u64 <= 1 << 32 && (n == 0 || k0 >> 30 == (k0 + n as u64 - 1) >> 30));
        let c1lo = C1 as u32;
        let t = (k0 >> 30) as u32;
        let j = |j: u32| ((j ^ t).wrapping_mul(c1lo)) as i32;
        let mut kv = _mm256_add_epi32(_mm256_set1_epi32(k0 as u32 as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        let mut hc =
            _mm256_add_epi32(_mm256_set1_epi32((k0 as u32).wrapping_mul(c1lo) as i32), _mm256_setr_epi32(j(0), j(1), j(2), j(3), j(4), j(5), j(6), j(7)));
        let step_k = _mm256_set1_epi32(8);
        let step_h = _mm256_set1_epi32(c1lo.wrapping_mul(8) as i32);
        let keepv = _mm256_set1_epi32(keep as i32);
        let mut acc = _mm256_setzero_si256();
        let m = n / 8 * 8;
        let mut i = 0;
        while i < m {
            let r = if LANES {
                // SAFETY: i + 8 <= n u16 lanes
                let v = _mm256_cvtepu16_epi32(_mm_loadu_si128(p.add(2 * i) as *const __m128i));
                _mm256_and_si256(_mm256_or_si256(v, _mm256_slli_epi32::<16>(v)), keepv)
            } else {
                // SAFETY: i + 8 <= n u32 results
                _mm256_loadu_si256(p.add(4 * i) as *const __m256i)
            };
            acc = _mm256_add_epi64(acc, mix8(kv, hc, r));
            kv = _mm256_add_epi32(kv, step_k);
            hc = _mm256_add_epi32(hc, step_h);
            i += 8;
        }
        let mut a = [0u64; 4];
        _mm256_storeu_si256(a.as_mut_ptr() as *mut __m256i, acc);
        let mut s = a.iter().fold(0u64, |s, &v| s.wrapping_add(v));
        for i in m..n {
            let r = if LANES { (*(p.add(2 * i) as *const u16) as u32 * 0x10001) & keep } else { (p.add(4 * i) as *const u32).read_unaligned() };
            s = s.wrapping_add(super::mix(k0 + i as u64, r));
        }
        s
    }
}

/// Σ mix(k0 + i, (lanes\[i\]·0x10001) & keep) mod 2^64: [`mix_sum`] of results given as
/// 16-bit lanes that stand in both halves (`keep` 0: an RZ destination), without the words.
/// With AVX-512 where the CPU has it, else with AVX2 (`mix_sum_lanes_x8`), else the
/// plain loop.
pub fn mix_sum_lanes(k0: u64, lanes: &[u16], keep: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if has_avx512dq() {
        // SAFETY: the CPU has AVX-512 F and DQ (checked); lanes holds lanes.len() u16
        return unsafe { mix_x8::avx512::<true>(k0, lanes.as_ptr() as *const u8, lanes.len(), keep) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return mix_sum_lanes_x8(k0, lanes, keep);
    }
    mix_sum_lanes_plain(k0, lanes, keep)
}

/// [`mix_sum_lanes`] with AVX2: [`mix_x8::avx2`] where k is below 2^32, else the
/// compiler's loop. Panics without AVX2.
#[cfg(target_arch = "x86_64")]
fn mix_sum_lanes_x8(k0: u64, lanes: &[u16], keep: u32) -> u64 {
    assert!(std::arch::is_x86_feature_detected!("avx2"), "mix_sum_lanes_x8 needs AVX2");
    split_x8(
        k0,
        lanes.len(),
        &|k, i, j| {
            // SAFETY: the CPU has AVX2 (asserted above)
            unsafe { mix_sum_lanes_avx2(k, &lanes[i..j], keep) }
        },
        &|k, i, j| {
            // SAFETY: the CPU has AVX2 (asserted above); split_x8 gives an 8-aligned k
            // below 2^32 whose range stays in one 2^30 segment, and i..j within lanes
            unsafe { mix_x8::avx2::<true>(k, lanes[i..j].as_ptr() as *const u8, j - i, keep) }
        },
    )
}

#[inline(always)]
fn mix_sum_lanes_plain(k0: u64, lanes: &[u16], keep: u32) -> u64 {
    lanes.iter().enumerate().fold(0u64, |s, (i, &v)| s.wrapping_add(mix(k0.wrapping_add(i as u64), (v as u32 * 0x10001) & keep)))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mix_sum_lanes_avx2(k0: u64, lanes: &[u16], keep: u32) -> u64 {
    mix_sum_lanes_plain(k0, lanes, keep)
}

/// One digest job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestRequest {
    pub word: u128,
    pub space_bits: u32,
    pub chunk_bits: u32,
    pub first_chunk: u64,
    pub chunks: u32,
    /// Operand 3's value for every input of a three-source word; 0 for two sources.
    pub c: u32,
}

impl DigestRequest {
    /// The inputs of index k: [`inputs_for`], with operand 3 the request's.
    pub fn inputs(&self, k: u64) -> Inputs {
        Inputs { c: self.c, ..inputs_for(k) }
    }
    /// Layout: word (u128 LE), space_bits, chunk_bits (u32), first_chunk (u64), chunks (u32), c (u32).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.word.to_le_bytes().to_vec();
        v.extend_from_slice(&self.space_bits.to_le_bytes());
        v.extend_from_slice(&self.chunk_bits.to_le_bytes());
        v.extend_from_slice(&self.first_chunk.to_le_bytes());
        v.extend_from_slice(&self.chunks.to_le_bytes());
        v.extend_from_slice(&self.c.to_le_bytes());
        v
    }
    pub fn decode(p: &[u8]) -> Result<DigestRequest, String> {
        if p.len() != 40 {
            return Err(format!("digest request of {} bytes, want 40", p.len()));
        }
        let u32_at = |i: usize| u32::from_le_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]);
        let mut w = [0u8; 16];
        w.copy_from_slice(&p[..16]);
        let mut f = [0u8; 8];
        f.copy_from_slice(&p[24..32]);
        let r = DigestRequest {
            word: u128::from_le_bytes(w),
            space_bits: u32_at(16),
            chunk_bits: u32_at(20),
            first_chunk: u64::from_le_bytes(f),
            chunks: u32_at(32),
            c: u32_at(36),
        };
        if r.space_bits > 32 || r.chunk_bits > r.space_bits || (r.first_chunk + r.chunks as u64) << r.chunk_bits > 1u64 << r.space_bits {
            return Err(format!("digest request out of range: {r:?}"));
        }
        Ok(r)
    }
    pub fn chunk_range(&self, c: u64) -> std::ops::Range<u64> {
        (c << self.chunk_bits)..((c + 1) << self.chunk_bits)
    }
    /// Bytes of a digest job's output: one u64 per thread.
    pub fn output_bytes(&self) -> usize {
        self.chunks as usize * THREADS as usize * 8
    }
    /// Digests of this request's chunks under `eval` (the fake device, or a reference that
    /// is defined everywhere).
    pub fn compute(&self, eval: impl Fn(u128, &Inputs) -> u32) -> Vec<u64> {
        (self.first_chunk..self.first_chunk + self.chunks as u64)
            .map(|c| self.chunk_range(c).fold(0u64, |s, k| s.wrapping_add(mix(k, eval(self.word, &self.inputs(k))))))
            .collect()
    }
    /// What a digest job outputs under `eval`: per chunk, per thread t, Σ mix over the
    /// chunk's k with k mod 256 = t (the simulated executor's answer).
    pub fn partials(&self, eval: impl Fn(u128, &Inputs) -> u32) -> Vec<u64> {
        let t = THREADS as u64;
        let mut out = Vec::with_capacity(self.chunks as usize * THREADS as usize);
        for c in self.first_chunk..self.first_chunk + self.chunks as u64 {
            let r = self.chunk_range(c);
            for th in 0..t {
                out.push((r.start + th..r.end).step_by(t as usize).fold(0u64, |s, k| s.wrapping_add(mix(k, eval(self.word, &self.inputs(k))))));
            }
        }
        out
    }
}

/// A digest job's output (one u64 per thread) as one digest per chunk.
pub fn sum_partials(out: &[u8], chunks: u32) -> Result<Vec<u64>, String> {
    let want = chunks as usize * THREADS as usize * 8;
    if out.len() != want {
        return Err(format!("digest job returned {} bytes, want {want} (one u64 per thread)", out.len()));
    }
    Ok(out
        .chunks_exact(8 * THREADS as usize)
        .map(|c| c.chunks_exact(8).map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])).fold(0u64, u64::wrapping_add))
        .collect())
}

/// Results of the reference for a slice of generated inputs (it maps them to the inputs
/// the kernel reads first); `Err` when any result is undefined.
pub type BatchExpect<'a> = dyn Fn(&[Inputs], &mut [u32]) -> Result<(), String> + Sync + 'a;

/// The reference's digest of one chunk, or None when some input's result is undefined
/// (then the chunk must be fetched and compared element by element). Evaluated in blocks
/// of `REF_BLOCK` inputs.
pub fn reference_digest(req: &DigestRequest, chunk: u64, expect: &BatchExpect) -> Option<u64> {
    let r = req.chunk_range(chunk);
    let mut s = 0u64;
    let mut inputs = Vec::with_capacity(REF_BLOCK as usize);
    let mut out = vec![0u32; REF_BLOCK as usize];
    let mut k0 = r.start;
    while k0 < r.end {
        let k1 = (k0 + REF_BLOCK).min(r.end);
        inputs.clear();
        inputs.extend((k0..k1).map(|k| req.inputs(k)));
        let o = &mut out[..inputs.len()];
        expect(&inputs, o).ok()?;
        s = s.wrapping_add(mix_sum(k0, o));
        k0 = k1;
    }
    Some(s)
}

/// Reference digests for all chunks of `req`, on all cores.
pub fn reference_digests(req: &DigestRequest, expect: &BatchExpect) -> Vec<Option<u64>> {
    per_chunk(req, || (), |c, _| reference_digest(req, c, expect))
}

/// `digest(chunk, scratch)` for every chunk of `req`, on all cores, in chunk order: the
/// threads take chunks in turn from one counter (a thread slowed by anything else on its
/// core takes fewer), each with its own `scratch()`. A thread that died leaves its chunks
/// `None` ("undefined"), which are then fetched and compared.
pub(crate) fn per_chunk<S>(req: &DigestRequest, scratch: impl Fn() -> S + Sync, digest: impl Fn(u64, &mut S) -> Option<u64> + Sync) -> Vec<Option<u64>> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(req.chunks.max(1) as usize);
    let next = AtomicU64::new(0);
    let (next, scratch, digest) = (&next, &scratch, &digest);
    let got: Vec<(u64, Option<u64>)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || {
                    let mut sc = scratch();
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= req.chunks as u64 {
                            break mine;
                        }
                        mine.push((i, digest(req.first_chunk + i, &mut sc)));
                    }
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    let mut out = vec![None; req.chunks as usize];
    for (i, d) in got {
        out[i as usize] = d;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> DigestRequest {
        DigestRequest { word: 0x1234_5678_9abc, space_bits: 20, chunk_bits: 10, first_chunk: 5, chunks: 3, c: 0 }
    }
    fn eval(w: u128, i: &Inputs) -> u32 {
        (i.a ^ i.b.rotate_left(7) ^ w as u32).wrapping_mul(0x9e37_79b9)
    }

    /// per_chunk gives every chunk's digest at its own index, and a chunk whose thread died
    /// stays undefined (None) rather than taking another chunk's value.
    #[test]
    fn per_chunk_keeps_chunk_order_and_leaves_a_dead_threads_chunks_undefined() {
        let r = DigestRequest { chunks: 1000, first_chunk: 77, ..req() };
        let got = per_chunk(
            &r,
            || 0u64,
            |c, n| {
                *n += 1;
                Some(c * 3 + 1)
            },
        );
        assert_eq!(got, (77..1077).map(|c| Some(c * 3 + 1)).collect::<Vec<_>>());
        let got = per_chunk(&r, || (), |c, _| if c == 500 { panic!("chunk {c}: a thread dies (expected by this test)") } else { Some(c) });
        assert_eq!(got.len(), 1000);
        assert_eq!(got[500 - 77], None, "the dead thread's chunk");
        for (i, d) in got.iter().enumerate() {
            assert!(d.is_none() || *d == Some(77 + i as u64), "chunk {}: {d:?}", 77 + i);
        }
    }

    #[test]
    fn mix_sum_is_the_sum_of_mixes() {
        let mut g = crate::rng::Rng::fork(5, 5);
        for n in [0usize, 1, 7, 8, 63, 4096, 4099] {
            let r: Vec<u32> = (0..n).map(|_| g.next_u32()).collect();
            let k0 = g.next_u64() >> 1;
            let want = r.iter().enumerate().fold(0u64, |s, (i, &v)| s.wrapping_add(mix(k0 + i as u64, v)));
            assert_eq!(mix_sum(k0, &r), want, "n = {n}");
            assert_eq!(mix_sum_plain(k0, &r), want, "n = {n}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked)
                assert_eq!(unsafe { mix_sum_avx2(k0, &r) }, want, "n = {n}");
            }
            let lanes: Vec<u16> = r.iter().map(|&v| v as u16).collect();
            let low = k0 >> 32;
            for k in [low, low & !3, (1 << 30) - 4, (2 << 30) - 8, (3 << 30) + (low & !3 & 0x3fff_ffff), (1 << 32) - n as u64 / 4 * 4 - 4] {
                for keep in [0u32, u32::MAX] {
                    let want = lanes.iter().enumerate().fold(0u64, |s, (i, &v)| s.wrapping_add(mix(k + i as u64, (v as u32 * 0x10001) & keep)));
                    assert_eq!(mix_sum_lanes(k, &lanes, keep), want, "n = {n}, k0 = {k:#x}, keep = {keep:#x}");
                }
            }
        }
    }

    /// The hand-written AVX2 mix ([`mix_x8`]) and its split ([`split_x8`]) against the
    /// plain loop: 8-aligned and unaligned k in every 2^30 segment of 2^32, ranges that
    /// cross a segment or end at 2^32, u32 results and u16 lanes with both keeps.
    #[test]
    fn mix_x8_is_the_sum_of_mixes() {
        #[cfg(not(target_arch = "x86_64"))]
        println!("not x86-64: there is no AVX2 mix to check");
        #[cfg(target_arch = "x86_64")]
        if !std::arch::is_x86_feature_detected!("avx2") {
            harness_isa::testlevel::not_checked(&["avx2"], "the CPU has no AVX2: the AVX2 mix is not checked");
        } else {
            let seed = 0x5eed_0818;
            println!("seed: {seed}");
            let mut g = crate::rng::Rng::new(seed);
            for n in [0usize, 1, 7, 8, 9, 63, 4096, 4099, 20000] {
                let r: Vec<u32> = (0..n).map(|_| g.next_u32()).collect();
                let lanes: Vec<u16> = r.iter().map(|&v| v as u16).collect();
                for seg in 0..4u64 {
                    let rnd = (g.next_u64() & 0x3fff_ffff) & !7;
                    let end = ((seg + 1) << 30) - (n as u64).div_ceil(8) * 8;
                    for k in [seg << 30, (seg << 30) + rnd.min(end - (seg << 30)), end] {
                        let want = mix_sum_plain(k, &r);
                        // SAFETY: AVX2 checked; k is 8-aligned, k..k + n in segment seg
                        assert_eq!(unsafe { mix_x8::avx2::<false>(k, r.as_ptr() as *const u8, n, 0) }, want, "seed {seed}: n = {n}, k = {k:#x}");
                        for keep in [0u32, u32::MAX] {
                            let want = mix_sum_lanes_plain(k, &lanes, keep);
                            // SAFETY: as above
                            assert_eq!(
                                unsafe { mix_x8::avx2::<true>(k, lanes.as_ptr() as *const u8, n, keep) },
                                want,
                                "seed {seed}: n = {n}, k = {k:#x}, keep = {keep:#x}"
                            );
                        }
                    }
                }
                // through split_x8: unaligned starts, ranges across a 2^30 boundary, at
                // and past 2^32
                for k in [0u64, 3, (1 << 30) - 4099, (1 << 30) - 5, (2 << 30) - 1, (1 << 32) - n as u64, (1 << 32) - 3, 1 << 32, g.next_u64() >> 33] {
                    let want = mix_sum_plain(k, &r);
                    assert_eq!(mix_sum_x8(k, &r), want, "seed {seed}: n = {n}, k = {k:#x}");
                    assert_eq!(mix_sum(k, &r), want, "seed {seed}: n = {n}, k = {k:#x}");
                    for keep in [0u32, u32::MAX] {
                        let want = mix_sum_lanes_plain(k, &lanes, keep);
                        assert_eq!(mix_sum_lanes_x8(k, &lanes, keep), want, "seed {seed}: n = {n}, k = {k:#x}");
                        assert_eq!(mix_sum_lanes(k, &lanes, keep), want, "seed {seed}: n = {n}, k = {k:#x}");
                    }
                }
            }
        }
    }

    /// The AVX-512 mix ([`mix_x8::avx512`]) against the plain loop, where the CPU has it:
    /// any k (unaligned, past 2^32, wrapping past 2^64), u32 results and u16 lanes with
    /// both keeps, lengths around its step of 16.
    #[test]
    fn mix_avx512_is_the_sum_of_mixes() {
        #[cfg(not(target_arch = "x86_64"))]
        println!("not x86-64: there is no AVX-512 mix to check");
        #[cfg(target_arch = "x86_64")]
        if !has_avx512dq() {
            harness_isa::testlevel::not_checked(
                &["avx512f", "avx512dq"],
                "the CPU has no AVX-512 DQ: mix_sum takes the AVX2 mix here, and the AVX-512 one is not checked",
            );
        } else {
            let seed = 0x5eed_0512;
            println!("seed: {seed}");
            let mut g = crate::rng::Rng::new(seed);
            for n in [0usize, 1, 7, 8, 15, 16, 17, 31, 4096, 4099] {
                let r: Vec<u32> = (0..n).map(|_| g.next_u32()).collect();
                let lanes: Vec<u16> = r.iter().map(|&v| v as u16).collect();
                for k in [0u64, 3, (1 << 32) - 5, 1 << 32, u64::MAX - 2, g.next_u64(), g.next_u64() >> 32] {
                    // SAFETY: AVX-512 F and DQ checked; r holds n u32
                    assert_eq!(unsafe { mix_x8::avx512::<false>(k, r.as_ptr() as *const u8, n, 0) }, mix_sum_plain(k, &r), "seed {seed}: n = {n}, k = {k:#x}");
                    for keep in [0u32, u32::MAX] {
                        // SAFETY: as above, lanes holds n u16
                        let got = unsafe { mix_x8::avx512::<true>(k, lanes.as_ptr() as *const u8, n, keep) };
                        assert_eq!(got, mix_sum_lanes_plain(k, &lanes, keep), "seed {seed}: n = {n}, k = {k:#x}, keep = {keep:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn per_thread_partials_sum_to_the_chunk_digests() {
        let r = req();
        let bytes: Vec<u8> = r.partials(eval).iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(bytes.len(), r.output_bytes());
        assert_eq!(sum_partials(&bytes, r.chunks).unwrap(), r.compute(eval));
        let e = sum_partials(&bytes[8..], r.chunks).unwrap_err();
        assert!(e.contains("one u64 per thread"), "{e}");
    }

    #[test]
    fn reference_digests_match_compute_and_mark_undefined_chunks() {
        let r = req();
        let ok = |xs: &[Inputs], out: &mut [u32]| {
            for (o, x) in out.iter_mut().zip(xs) {
                *o = eval(r.word, x);
            }
            Ok(())
        };
        let got: Vec<u64> = reference_digests(&r, &ok).into_iter().map(|d| d.unwrap()).collect();
        assert_eq!(got, r.compute(eval));
        // an undefined result anywhere in chunk 6 (k = 6·1024 + 77) leaves that chunk None
        let undefined_at = |xs: &[Inputs], out: &mut [u32]| {
            if xs.contains(&inputs_for(6 * 1024 + 77)) {
                return Err("undefined".to_string());
            }
            ok(xs, out)
        };
        let got = reference_digests(&r, &undefined_at);
        assert_eq!((got[0].is_some(), got[1].is_none(), got[2].is_some()), (true, true, true));
    }
}
