//! Exhaustive mode: every 16-bit × 16-bit input pair for one instruction, generated on the
//! device and checked by chunked digests, so 2^32 results never cross the bus.
//!
//! Protocol (the device kernel must compute exactly this):
//! - Input index k in 0..2^space_bits (32 in a real run). x = (k >> 16) & 0xffff,
//!   y = k & 0xffff; a = x·0x10001 and b = y·0x10001 (the value in both halves, so every
//!   half-select reads x and y), d = [`D_FILL`], predicates = 0x7f (P0..P6 true).
//! - Chunk c holds k in [c·2^chunk_bits, (c+1)·2^chunk_bits).
//! - digest(c) = Σ mix(k, r_k) mod 2^64 over the chunk, r_k = destination after, with
//!   mix(k, r) = splitmix64_finalize(k·2^32 + r). A sum of a strong mix is order-free, so
//!   threads and warps may reduce in any order.
//! - A job asks for `chunks` consecutive chunks starting at `first_chunk` and outputs one
//!   little-endian u64 per chunk. Its input buffer is [`DigestRequest::encode`].
//!
//! The CPU computes the same digests from the reference; a chunk whose digests differ, or
//! that holds inputs with an undefined result, is fetched: re-run as an ordinary batch
//! with explicit inputs and compared element by element.

use crate::inputs::Inputs;

pub const D_FILL: u32 = 0x5a5a_a5a5;
pub const PRED_ALL: u8 = 0x7f;

/// The inputs of index k.
pub fn inputs_for(k: u64) -> Inputs {
    let x = ((k >> 16) & 0xffff) as u32;
    let y = (k & 0xffff) as u32;
    Inputs {
        a: x * 0x10001,
        b: y * 0x10001,
        d: D_FILL,
        pred: PRED_ALL,
    }
}

pub fn mix(k: u64, r: u32) -> u64 {
    let mut z = (k << 32) ^ r as u64;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One digest job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestRequest {
    pub word: u128,
    pub space_bits: u32,
    pub chunk_bits: u32,
    pub first_chunk: u64,
    pub chunks: u32,
}

impl DigestRequest {
    /// Layout: word (u128 LE), space_bits, chunk_bits (u32), first_chunk (u64), chunks (u32).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.word.to_le_bytes().to_vec();
        v.extend_from_slice(&self.space_bits.to_le_bytes());
        v.extend_from_slice(&self.chunk_bits.to_le_bytes());
        v.extend_from_slice(&self.first_chunk.to_le_bytes());
        v.extend_from_slice(&self.chunks.to_le_bytes());
        v
    }
    pub fn decode(p: &[u8]) -> Result<DigestRequest, String> {
        if p.len() != 36 {
            return Err(format!("digest request of {} bytes, want 36", p.len()));
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
        };
        if r.space_bits > 32 || r.chunk_bits > r.space_bits || (r.first_chunk + r.chunks as u64) << r.chunk_bits > 1u64 << r.space_bits {
            return Err(format!("digest request out of range: {r:?}"));
        }
        Ok(r)
    }
    pub fn chunk_range(&self, c: u64) -> std::ops::Range<u64> {
        (c << self.chunk_bits)..((c + 1) << self.chunk_bits)
    }
    /// Digests of this request's chunks under `eval` (the fake device, or a reference that
    /// is defined everywhere).
    pub fn compute(&self, eval: impl Fn(u128, &Inputs) -> u32) -> Vec<u64> {
        (self.first_chunk..self.first_chunk + self.chunks as u64)
            .map(|c| self.chunk_range(c).fold(0u64, |s, k| s.wrapping_add(mix(k, eval(self.word, &inputs_for(k))))))
            .collect()
    }
}

/// The reference's digest of one chunk, or None when some input's result is undefined
/// (then the chunk must be fetched and compared element by element).
pub fn reference_digest(req: &DigestRequest, chunk: u64, expect: &(dyn Fn(&Inputs) -> Result<u32, String> + Sync)) -> Option<u64> {
    let mut s = 0u64;
    for k in req.chunk_range(chunk) {
        s = s.wrapping_add(mix(k, expect(&inputs_for(k)).ok()?));
    }
    Some(s)
}

/// Reference digests for all chunks of `req`, on all cores.
pub fn reference_digests(req: &DigestRequest, expect: &(dyn Fn(&Inputs) -> Result<u32, String> + Sync)) -> Vec<Option<u64>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(req.chunks.max(1) as usize);
    let chunks: Vec<u64> = (req.first_chunk..req.first_chunk + req.chunks as u64).collect();
    let per = chunks.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let hs: Vec<_> = chunks
            .chunks(per)
            .map(|cs| {
                (
                    cs.len(),
                    s.spawn(move || cs.iter().map(|&c| reference_digest(req, c, expect)).collect::<Vec<_>>()),
                )
            })
            .collect();
        // a thread that died yields "undefined" chunks, which are then fetched and compared
        hs.into_iter().flat_map(|(n, h)| h.join().unwrap_or_else(|_| vec![None; n])).collect()
    })
}
