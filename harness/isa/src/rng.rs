//! A small seeded generator (SplitMix64): the same seed gives the same stream on every
//! machine and every version of every dependency, which is why it lives here.

/// SplitMix64 (Steele, Lea, Flood 2014).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// An independent stream for item `i` of a run: lets shards and workers draw the same
    /// values for the same item whatever order they visit items in.
    pub fn fork(seed: u64, i: u64) -> Rng {
        let mut r = Rng(seed ^ i.wrapping_mul(0xd1b5_4a32_d192_ed03));
        r.next_u64();
        r
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }
    /// The next `out.len()` draws of [`Rng::next_u64`], in order. A draw depends only on its
    /// place in the stream (the state after draw j is the start plus (j + 1) steps), so they
    /// are independent, and a CPU with AVX-512 DQ makes eight at a time.
    pub fn fill(&mut self, out: &mut [u64]) {
        self.fill_lanes(out)
    }
    /// The high halves of the next `out.len()` draws ([`Rng::next_u32`] repeated) as
    /// little-endian bytes, eight at a time where the CPU has AVX-512 DQ.
    pub fn fill_u32_le(&mut self, out: &mut [[u8; 4]]) {
        self.fill_lanes(out)
    }
    fn fill_lanes<T: Lane>(&mut self, out: &mut [T]) {
        fill_at(self.0, out);
        self.0 = state_at(self.0, out.len());
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in `0..n` (n > 0), without modulo bias worth measuring (Lemire's multiply).
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.next_u32() as u64 * n as u64) >> 32) as u32
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u32) as usize]
    }
}

/// SplitMix64's step (the golden ratio's fraction in 64 bits).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function's multipliers.
const MIX: [u64; 2] = [0xbf58_476d_1ce4_e5b9, 0x94d0_49bb_1331_11eb];

/// SplitMix64's output function of a state.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MIX[0]);
    z = (z ^ (z >> 27)).wrapping_mul(MIX[1]);
    z ^ (z >> 31)
}

/// The state `n` steps after `s`.
#[inline(always)]
fn state_at(s: u64, n: usize) -> u64 {
    s.wrapping_add((n as u64).wrapping_mul(GAMMA))
}

/// The draws of a stream whose state is `s`, one per element of `out` (draw j is the state
/// after j + 1 steps, mixed).
#[inline(always)]
fn fill_from<T: Lane>(s: u64, out: &mut [T]) {
    for (j, o) in out.iter_mut().enumerate() {
        *o = T::of(mix(state_at(s, j + 1)));
    }
}

/// [`fill_from`], eight draws at a time where the CPU has AVX-512 DQ.
fn fill_at<T: Lane>(s: u64, out: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512dq") {
        // SAFETY: AVX-512 F and DQ (DQ implies F) were detected on this CPU.
        return unsafe { fill_avx512(s, out) };
    }
    fill_from(s, out)
}

/// What [`fill_avx512`] makes of a draw: the draw, or its high half as little-endian bytes.
trait Lane: Copy {
    /// Store the draws `z` at `p` (eight lanes).
    ///
    /// # Safety
    /// `p` is valid for eight writes of Self; AVX-512 F is available.
    #[cfg(target_arch = "x86_64")]
    unsafe fn store8(p: *mut Self, z: std::arch::x86_64::__m512i);
    /// The lane of draw `z`.
    fn of(z: u64) -> Self;
}

impl Lane for u64 {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn store8(p: *mut u64, z: std::arch::x86_64::__m512i) {
        // SAFETY: the caller's: 64 bytes at p, AVX-512 F
        unsafe { std::arch::x86_64::_mm512_storeu_si512(p.cast(), z) }
    }
    fn of(z: u64) -> u64 {
        z
    }
}

impl Lane for [u8; 4] {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn store8(p: *mut [u8; 4], z: std::arch::x86_64::__m512i) {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: 32 bytes at p, AVX-512 F (x86 is little-endian)
        unsafe { _mm256_storeu_si256(p.cast(), _mm512_cvtepi64_epi32(_mm512_srli_epi64::<32>(z))) }
    }
    fn of(z: u64) -> [u8; 4] {
        ((z >> 32) as u32).to_le_bytes()
    }
}

/// [`fill_from`] with AVX-512 DQ, eight draws to a vector: the states step by 8·GAMMA (an
/// addition; the compiler's loop multiplied each index by GAMMA, a third 64-bit multiply
/// per eight draws), two vectors at a time so that the multiplies' latency overlaps.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn fill_avx512<T: Lane>(s: u64, out: &mut [T]) {
    use std::arch::x86_64::*;
    let at = |j: usize| state_at(s, j + 1) as i64;
    let mut z0 = _mm512_setr_epi64(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
    let mut z1 = _mm512_add_epi64(z0, _mm512_set1_epi64(GAMMA.wrapping_mul(8) as i64));
    let step = _mm512_set1_epi64(GAMMA.wrapping_mul(16) as i64);
    let (c1, c2) = (_mm512_set1_epi64(MIX[0] as i64), _mm512_set1_epi64(MIX[1] as i64));
    let mix8 = |z: __m512i| {
        let z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64::<30>(z)), c1);
        let z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64::<27>(z)), c2);
        _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z))
    };
    let done = out.len() / 16 * 16;
    for b in out[..done].chunks_exact_mut(16) {
        // SAFETY: b holds 16 lanes, two unaligned stores of eight
        unsafe {
            T::store8(b.as_mut_ptr(), mix8(z0));
            T::store8(b.as_mut_ptr().add(8), mix8(z1));
        }
        z0 = _mm512_add_epi64(z0, step);
        z1 = _mm512_add_epi64(z1, step);
    }
    fill_from(state_at(s, done), &mut out[done..]);
}

/// A seed given on the command line, or one drawn from the clock; always printed.
pub fn resolve_seed(seed: Option<u64>) -> u64 {
    let s = seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        (t as u64) ^ (t >> 64) as u64 ^ std::process::id() as u64
    });
    // written by hand rather than with `errln!`, which lives in the `tools` feature's `cli`
    {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "seed: {s}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_fixed_forever() {
        // Reference values of SplitMix64 with seed 0: a change here breaks every recorded seed.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220a8397b1dcdaf);
        assert_eq!(r.next_u64(), 0x6e789e6aa1b965f4);
    }

    /// `fill` is `next_u64` repeated, on every length (the vector loop's tails), and leaves
    /// the stream where the single draws would.
    #[test]
    fn fill_is_the_single_draws() {
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1000, 1285] {
            let (mut a, mut b) = (Rng::fork(0x5eed, n as u64), Rng::fork(0x5eed, n as u64));
            let mut v = vec![0; n];
            a.fill(&mut v);
            let want: Vec<u64> = (0..n).map(|_| b.next_u64()).collect();
            assert_eq!(v, want, "{n} draws");
            let want_after = b.next_u64();
            assert_eq!(a.next_u64(), want_after, "after {n} draws");
            let mut plain = vec![0; n];
            fill_from(Rng::fork(0x5eed, n as u64).0, &mut plain);
            assert_eq!(plain, want, "{n} draws without AVX-512");
            let halves: Vec<[u8; 4]> = want.iter().map(|&x| ((x >> 32) as u32).to_le_bytes()).collect();
            let (mut c, mut half) = (Rng::fork(0x5eed, n as u64), vec![[0u8; 4]; n]);
            c.fill_u32_le(&mut half);
            assert_eq!(half, halves, "{n} high halves");
            assert_eq!(c.next_u64(), want_after, "after {n} high halves");
            fill_from(Rng::fork(0x5eed, n as u64).0, &mut half);
            assert_eq!(half, halves, "{n} high halves without AVX-512");
        }
    }
}
