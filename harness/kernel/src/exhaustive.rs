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
/// order-free, so the loop vectorises; with AVX-512 (64-bit lane multiplies) where the CPU
/// has it.
pub fn mix_sum(k0: u64, r: &[u32]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512dq") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { mix_sum_avx512(k0, r) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { mix_sum_avx2(k0, r) };
    }
    mix_sum_plain(k0, r)
}

#[inline(always)]
fn mix_sum_plain(k0: u64, r: &[u32]) -> u64 {
    r.iter().enumerate().fold(0u64, |s, (i, &v)| s.wrapping_add(mix(k0.wrapping_add(i as u64), v)))
}

/// [`mix_sum_plain`] with AVX2: four 64-bit lanes a vector, the multiplies by constants
/// built from 32-bit `vpmuludq`s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mix_sum_avx2(k0: u64, r: &[u32]) -> u64 {
    mix_sum_plain(k0, r)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn mix_sum_avx512(k0: u64, r: &[u32]) -> u64 {
    mix_sum_plain(k0, r)
}

/// Σ mix(k0 + i, (lanes\[i\]·0x10001) & keep) mod 2^64: [`mix_sum`] of results given as
/// 16-bit lanes that stand in both halves (`keep` 0: an RZ destination), without the words.
/// The loop vectorises; with AVX2 (four 64-bit lanes, the multiplies by constants built
/// from `vpmuludq`) where the CPU has it. (A hand-written AVX2 loop that saves one
/// `vpmuludq` of the first multiply measured slower than the compiler's.)
pub fn mix_sum_lanes(k0: u64, lanes: &[u16], keep: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { mix_sum_lanes_avx2(k0, lanes, keep) };
    }
    mix_sum_lanes_plain(k0, lanes, keep)
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
/// of [`REF_BLOCK`] inputs.
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
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(req.chunks.max(1) as usize);
    let chunks: Vec<u64> = (req.first_chunk..req.first_chunk + req.chunks as u64).collect();
    let per = chunks.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let hs: Vec<_> =
            chunks.chunks(per).map(|cs| (cs.len(), s.spawn(move || cs.iter().map(|&c| reference_digest(req, c, expect)).collect::<Vec<_>>()))).collect();
        // a thread that died yields "undefined" chunks, which are then fetched and compared
        hs.into_iter().flat_map(|(n, h)| h.join().unwrap_or_else(|_| vec![None; n])).collect()
    })
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
