//! The HFMA2 arithmetic of the reference (`reference::fma`) against an independent oracle,
//! `rustc_apfloat` (software IEEE arithmetic sharing no code with the reference, `half` or
//! the CPU's floating point): its correctly rounded `mul_add_r` on 10^9 random triples per
//! format, drawn toward the hard cases, plus TestFloat-style special values crossed in all
//! three positions with every modifier combination and every option of every knob HFMA2
//! reads, against expectations written here from apfloat and explicit modifier logic
//! (never calls of the code under test).
//!
//! The random test prints its seed; `HMUL2_SEED` repeats it and `HMUL2_FMA_TRIPLES` sets
//! the count per format (default 10^9; 3·10^6 at the quick test level of a plain `cargo test`,
//! see `testlevel`).

use harness_reference::isa::{Flush, Format, SrcMods, Swizzle};
use harness_reference::reference::fma::{eval_fma, eval_fma_batch, why, Fma, FmaOp};
use harness_reference::reference::policy::KNOBS;
use harness_reference::reference::{bf16_specials, f16_specials, FmzZero, Policy, ReluNan, Undefined, ZeroSum};
use harness_reference::rng::{resolve_seed, Rng};
use rustc_apfloat::ieee::{BFloat, Double, Half};
use rustc_apfloat::{Float, FloatConvert, Round, Status, StatusAnd};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Fmt {
    F16,
    Bf16,
}

impl Fmt {
    fn exp(self) -> u16 {
        match self {
            Fmt::F16 => 0x7c00,
            Fmt::Bf16 => 0x7f80,
        }
    }
    fn quiet(self) -> u16 {
        match self {
            Fmt::F16 => 0x0200,
            Fmt::Bf16 => 0x0040,
        }
    }
    fn one(self) -> u16 {
        match self {
            Fmt::F16 => 0x3c00,
            Fmt::Bf16 => 0x3f80,
        }
    }
    fn frac_bits(self) -> u32 {
        match self {
            Fmt::F16 => 10,
            Fmt::Bf16 => 7,
        }
    }
    fn is_nan(self, v: u16) -> bool {
        v & 0x7fff > self.exp()
    }
    fn is_zero(self, v: u16) -> bool {
        v & 0x7fff == 0
    }
    fn is_sub(self, v: u16) -> bool {
        v & self.exp() == 0 && v & 0x7fff != 0
    }
    fn format(self) -> Format {
        match self {
            Fmt::F16 => Format::F16,
            Fmt::Bf16 => Format::Bf16,
        }
    }
    /// apfloat's fused `a * b + c`, rounded once with `round`.
    fn mul_add(self, a: u16, b: u16, c: u16, round: Round) -> StatusAnd<u16> {
        fn go<F: Float>(a: u16, b: u16, c: u16, round: Round) -> StatusAnd<u16> {
            let r = F::from_bits(a as u128).mul_add_r(F::from_bits(b as u128), F::from_bits(c as u128), round);
            r.map(|v| v.to_bits() as u16)
        }
        match self {
            Fmt::F16 => go::<Half>(a, b, c, round),
            Fmt::Bf16 => go::<BFloat>(a, b, c, round),
        }
    }
    /// apfloat's sum `a + b`, round to nearest even.
    fn add(self, a: u16, b: u16) -> u16 {
        fn go<F: Float>(a: u16, b: u16) -> u16 {
            F::from_bits(a as u128).add_r(F::from_bits(b as u128), Round::NearestTiesToEven).value.to_bits() as u16
        }
        match self {
            Fmt::F16 => go::<Half>(a, b),
            Fmt::Bf16 => go::<BFloat>(a, b),
        }
    }
    /// Whether the exact product `a * b` (non-NaN factors) is nonzero and below the smallest
    /// normal in magnitude: apfloat's product in Double, which holds it exactly.
    fn product_tiny(self, a: u16, b: u16) -> bool {
        fn wide<F: Float + FloatConvert<Double>>(v: u16) -> Double {
            let mut lost = false;
            F::from_bits(v as u128).convert(&mut lost).value
        }
        if self.is_zero(a) || self.is_zero(b) || a & 0x7fff == self.exp() || b & 0x7fff == self.exp() {
            return false;
        }
        let (x, y, min) = match self {
            Fmt::F16 => (wide::<Half>(a), wide::<Half>(b), wide::<Half>(0x0400)),
            Fmt::Bf16 => (wide::<BFloat>(a), wide::<BFloat>(b), wide::<BFloat>(0x0080)),
        };
        let p = x.mul_r(y, Round::NearestTiesToEven);
        assert!(p.status == Status::OK, "a product of two lane values is exact in Double");
        !p.value.is_zero() && p.value.abs() < min
    }
}

/// What one test case asks: the modifiers that change a lane's arithmetic.
#[derive(Clone, Copy, Debug)]
struct Mods {
    flush: Flush,
    sat: bool,
    relu: bool,
}

/// The NaN of `nan-result` for the operands `ops` (in operand order).
fn nan_of(p: &Policy, f: Fmt, ops: &[u16]) -> u16 {
    if p.nan_canonical {
        return 0x7fff;
    }
    ops.iter().find(|&&v| f.is_nan(v)).map_or(0x7fff, |&v| v | f.quiet())
}

fn flush_in(f: Fmt, v: u16) -> u16 {
    if f.is_sub(v) {
        v & 0x8000
    } else {
        v
    }
}

/// The expected lane value of `a * b + c` (a, b, c after half select and |x| / -x), step by
/// step from the policy's flags, the module's documented rules and apfloat.
fn expect_lane(p: &Policy, f: Fmt, m: Mods, a: u16, b: u16, c: u16) -> u16 {
    let flush_ok = f == Fmt::F16 || p.flush_bf16;
    let ftz = flush_ok && (m.flush == Flush::Ftz || (m.flush == Flush::Fmz && p.fmz_flushes));
    let fmz = flush_ok && m.flush == Flush::Fmz && p.fmz != FmzZero::Ieee;
    let (mut a, mut b, mut c) = (a, b, c);
    if ftz && p.ftz_inputs {
        a = flush_in(f, a);
        b = flush_in(f, b);
        if p.fma_ftz_addend {
            c = flush_in(f, c);
        }
    }
    // r: the rounded result; tiny: the exact result is below the smallest normal
    let (mut r, tiny) = if fmz && (f.is_zero(a) || f.is_zero(b)) {
        let zero = if p.fmz == FmzZero::XorSign { (a ^ b) & 0x8000 } else { 0 };
        if f.is_nan(c) {
            (nan_of(p, f, &[c]), false)
        } else if !p.fma_fmz_addend_ieee {
            (c, f.is_sub(c))
        } else if f.is_zero(c) {
            (zero_sum(p, zero, c, f.add(zero, c)), false)
        } else {
            (c, f.is_sub(c))
        }
    } else if f.is_nan(a) || f.is_nan(b) || f.is_nan(c) {
        (nan_of(p, f, &[a, b, c]), false)
    } else if ftz && p.fma_ftz_product && f.product_tiny(a, b) {
        let zero = (a ^ b) & 0x8000;
        let r = if f.is_zero(c) { zero_sum(p, zero, c, f.add(zero, c)) } else { c };
        (r, f.is_sub(c))
    } else {
        let rn = f.mul_add(a, b, c, Round::NearestTiesToEven);
        if f.is_nan(rn.value) {
            (nan_of(p, f, &[a, b, c]), false)
        } else {
            let mut r = rn.value;
            if f.is_zero(r) && !rn.status.contains(Status::INEXACT) {
                // an exact zero sum
                r = zero_sum(p, (a ^ b) & 0x8000, c, r);
            }
            // |x| < the smallest normal exactly when its rounding toward zero is (asked only
            // when it matters: it doubles apfloat's work)
            let tiny = ftz && !p.ftz_after_rounding && f.mul_add(a, b, c, Round::TowardZero).value & f.exp() == 0;
            (r, tiny)
        }
    };
    if ftz && !f.is_nan(r) && r & 0x7fff != 0 && r & 0x7fff < f.exp() {
        let flush = if p.ftz_after_rounding { f.is_sub(r) } else { tiny };
        if flush {
            r &= 0x8000;
        }
    }
    if m.sat && (f == Fmt::F16 || p.sat_bf16) {
        r = if f.is_nan(r) {
            if p.sat_nan_to_zero {
                0
            } else {
                r
            }
        } else if r == 0x8000 {
            if p.sat_neg_zero_to_plus {
                0
            } else {
                r
            }
        } else if r & 0x8000 != 0 {
            0
        } else if r > f.one() {
            f.one()
        } else {
            r
        };
    }
    if m.relu {
        r = if f.is_nan(r) {
            match p.fma_relu_nan {
                ReluNan::Canonical => 0x7fff,
                ReluNan::Pass => r,
                ReluNan::Zero => 0,
            }
        } else if r == 0x8000 {
            if p.fma_relu_neg_zero_to_plus {
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

/// An exact zero sum of a zero-or-not product with sign bit `prod` and addend `c`:
/// IEEE's (apfloat's `ieee`) or the policy's other rule.
fn zero_sum(p: &Policy, prod: u16, c: u16, ieee: u16) -> u16 {
    match p.fma_zero_sum {
        ZeroSum::Ieee => ieee,
        ZeroSum::Plus => 0,
        ZeroSum::MinusUnlessBothPlus => (prod | c) & 0x8000,
    }
}

/// Source modifiers written out: half select, then |x| and -x in the policy's order.
fn modded(p: &Policy, word: u32, m: SrcMods, lane: u32) -> u16 {
    let half = match m.swizzle {
        Swizzle::H1H0 => lane,
        Swizzle::H0H0 => 0,
        Swizzle::H1H1 => 1,
        other => unreachable!("the cases use defined half selects, not {other:?}"),
    };
    let mut v = (word >> (16 * half)) as u16;
    if p.abs_then_neg {
        if m.abs {
            v &= 0x7fff;
        }
        if m.neg {
            v ^= 0x8000;
        }
    } else {
        if m.neg {
            v ^= 0x8000;
        }
        if m.abs {
            v &= 0x7fff;
        }
    }
    v
}

fn plain(f: Fmt) -> FmaOp {
    FmaOp { format: f.format(), ..Default::default() }
}

// ---------------------------------------------------------------------------------------
// Random triples
// ---------------------------------------------------------------------------------------

/// A lane value with exponent field `base + below(span)` (clamped to the finite range) and random fraction.
fn with_exp(f: Fmt, r: &mut Rng, base: i32, span: u32) -> u16 {
    let e = base + r.below(span) as i32;
    let top = (f.exp() >> f.frac_bits()) as i32 - 1;
    let e = e.clamp(0, top) as u16;
    let frac = (r.next_u32() as u16) & ((1 << f.frac_bits()) - 1);
    (e << f.frac_bits()) | frac | if r.chance(0.5) { 0x8000 } else { 0 }
}

/// A finite lane value near `x` (f64): its rounding, give or take two ulps.
fn near(f: Fmt, r: &mut Rng, x: f64) -> u16 {
    let v = match f {
        Fmt::F16 => half::f16::from_f64(x).to_bits(),
        Fmt::Bf16 => half::bf16::from_f64(x).to_bits(),
    };
    let step = r.below(5) as i32 - 2;
    let m = ((v & 0x7fff) as i32 + step).clamp(0, f.exp() as i32 - 1) as u16;
    (v & 0x8000) | m
}

fn widen(f: Fmt, v: u16) -> f64 {
    match f {
        Fmt::F16 => half::f16::from_bits(v).to_f64(),
        Fmt::Bf16 => half::bf16::from_bits(v).to_f64(),
    }
}

/// One random triple, drawn toward one of the hard cases (`kind`), with specials mixed in.
fn triple(f: Fmt, r: &mut Rng, specials: &[u16]) -> (u16, u16, u16) {
    let bias = (f.exp() >> f.frac_bits()) as i32 / 2; // exponent field of 1.0
    let top = (f.exp() >> f.frac_bits()) as i32 - 1;
    let any = |r: &mut Rng| (r.next_u32() >> 16) as u16;
    let (mut a, mut b, mut c) = match r.below(8) {
        // anything
        0 => (any(r), any(r), any(r)),
        // exact cancellation and its neighbours: c = -(a x b) rounded, +-2 ulps
        1 => {
            let (a, b) = (with_exp(f, r, bias - 4, 9), with_exp(f, r, bias - 4, 9));
            (a, b, near(f, r, -widen(f, a) * widen(f, b)))
        }
        // products around the smallest normal, small addends
        2 => {
            let ea = r.below(bias as u32) as i32;
            let a = with_exp(f, r, ea, 1);
            let b = with_exp(f, r, bias + 1 - ea - 2, 5);
            (a, b, with_exp(f, r, 0, 4))
        }
        // ties: a times 1.5, 1.25, 1 + 2^-p... with c zero, tiny or similar
        3 => {
            let a = with_exp(f, r, bias - 3, 7);
            let k = 1 + r.below(f.frac_bits());
            let b = (bias as u16) << f.frac_bits() | 1 << (f.frac_bits() - k.min(f.frac_bits()));
            let c = match r.below(4) {
                0 => 0,
                1 => 1 | if r.chance(0.5) { 0x8000 } else { 0 },
                2 => with_exp(f, r, bias - 2, 5),
                _ => with_exp(f, r, bias - f.frac_bits() as i32 - 2, 4),
            };
            (a, b, c)
        }
        // around the overflow threshold
        4 => {
            let ea = top - r.below(4) as i32;
            let a = with_exp(f, r, ea, 1) & 0x7fff;
            let b = with_exp(f, r, top - ea + bias - 1, 3) & 0x7fff;
            let c = if r.chance(0.5) { with_exp(f, r, top - 2 - f.frac_bits() as i32, 3 + f.frac_bits()) } else { with_exp(f, r, 0, top as u32) };
            (a, b, c)
        }
        // addends of wildly different exponent
        5 => {
            let (a, b) = (any(r), any(r));
            let c = if r.chance(0.5) { with_exp(f, r, 0, 3) } else { with_exp(f, r, top - 2, 3) };
            (a, b, c)
        }
        // short significands: sums often exactly at a midpoint
        6 => {
            let short = |r: &mut Rng| with_exp(f, r, bias - 4, 9) & !((1 << (f.frac_bits() - 2)) - 1);
            (short(r), short(r), with_exp(f, r, bias - 6, 13))
        }
        // subnormal operands
        _ => (with_exp(f, r, 0, 2), with_exp(f, r, bias - 4, 9), with_exp(f, r, 0, 2)),
    };
    for v in [&mut a, &mut b, &mut c] {
        if r.below(16) == 0 {
            *v = *r.pick(specials);
        }
    }
    (a, b, c)
}

/// Random triples of format `f`, two per input word, on two threads, against apfloat.
fn random_triples(f: Fmt) {
    let seed = resolve_seed(std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()));
    eprintln!("(set HMUL2_SEED={seed} to repeat this run)");
    let n: u64 = match std::env::var("HMUL2_FMA_TRIPLES").ok().and_then(|v| v.parse().ok()) {
        Some(n) => n,
        None => harness_reference::testlevel::sized(&format!("{f:?} random triples"), 1_000_000_000, 3_000_000),
    };
    let p = *Policy::current();
    let op = plain(f);
    let specials: Vec<u16> = match f {
        Fmt::F16 => f16_specials().to_vec(),
        Fmt::Bf16 => bf16_specials().to_vec(),
    };
    const CHUNK: u64 = 1 << 16;
    let chunks = n.div_ceil(CHUNK);
    let (bad, checked) = (AtomicU64::new(0), AtomicU64::new(0));
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (bad, checked, specials) = (&bad, &checked, &specials);
            s.spawn(move || {
                let mut trip = Vec::with_capacity(CHUNK as usize);
                let (mut a, mut b, mut c) = (vec![0u32; CHUNK as usize / 2], vec![0u32; CHUNK as usize / 2], vec![0u32; CHUNK as usize / 2]);
                let mut out = vec![0u32; CHUNK as usize / 2];
                for k in (t..chunks).step_by(2) {
                    let mut r = Rng::fork(seed, k);
                    let len = CHUNK.min(n - k * CHUNK) as usize & !1;
                    trip.clear();
                    trip.extend((0..len).map(|_| triple(f, &mut r, specials)));
                    let w = len / 2;
                    for i in 0..w {
                        let (x, y) = (trip[2 * i], trip[2 * i + 1]);
                        a[i] = x.0 as u32 | (y.0 as u32) << 16;
                        b[i] = x.1 as u32 | (y.1 as u32) << 16;
                        c[i] = x.2 as u32 | (y.2 as u32) << 16;
                    }
                    eval_fma_batch(&op, &p, &a[..w], &b[..w], &c[..w], &mut out[..w]).expect("plain HFMA2 is defined");
                    for (i, &(x, y, z)) in trip.iter().enumerate() {
                        let got = (out[i / 2] >> (16 * (i % 2))) as u16;
                        let want = expect_lane(&p, f, Mods { flush: Flush::None, sat: false, relu: false }, x, y, z);
                        if got != want && bad.fetch_add(1, Relaxed) < 20 {
                            eprintln!("{f:?}: {x:#06x} x {y:#06x} + {z:#06x}: reference {got:#06x}, apfloat {want:#06x} (chunk {k})");
                        }
                    }
                    checked.fetch_add(len as u64, Relaxed);
                }
            });
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    let checked = checked.into_inner();
    println!("{f:?}: {checked} random triples against rustc_apfloat mul_add in {secs:.1} s ({:.1} M/s on 2 threads)", checked as f64 / secs / 1e6);
    assert!(checked >= n & !1, "{f:?}: {checked} of {n} triples checked");
    assert_eq!(bad.into_inner(), 0, "{f:?}: mismatches against rustc_apfloat (the first ones above; seed {seed})");
}

#[test]
fn random_f16_triples_against_apfloat() {
    random_triples(Fmt::F16);
}

#[test]
fn random_bf16_triples_against_apfloat() {
    random_triples(Fmt::Bf16);
}

/// BF16 rows as exhaustive mode's sweep reads them (operand 1 `x·0x10001`, every operand 2
/// `y·0x10001` in order, one operand 3), through `Fma::batch_row` (its AVX-512 row kernel
/// where the CPU has one), against apfloat on every lane: rows whose x and c cover every
/// exponent distance (c zero, subnormal, tiny, huge; the benchmark's 0x3f80_8001), and
/// rows with an exact cancellation (c = -x·2^k).
#[test]
fn bf16_rows_against_apfloat() {
    let seed = resolve_seed(std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()));
    eprintln!("(set HMUL2_SEED={seed} to repeat this run)");
    let rows = harness_reference::testlevel::sized("BF16 rows of 2^16 against apfloat", 8192, 256);
    let p = *Policy::current();
    let (f, op) = (Fmt::Bf16, plain(Fmt::Bf16));
    let fma = Fma::new(&op, &p).expect("plain HFMA2 is defined");
    let ys: Vec<u32> = (0..1u32 << 16).map(|y| y * 0x10001).collect();
    let bad = AtomicU64::new(0);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (bad, ys, fma) = (&bad, &ys, &fma);
            s.spawn(move || {
                let mut out = vec![0u32; 4096];
                let mut scratch = Vec::new();
                for k in (t..rows).step_by(2) {
                    let mut r = Rng::fork(seed, k);
                    // x: any normal or subnormal value (zero, Inf and NaN rows take the
                    // general kernels, which the random test covers)
                    let x = r.next_u32() as u16;
                    let c = match k % 4 {
                        0 => 0x3f80_8001,
                        1 => r.next_u32(),
                        // -x·2^k in lane 0: an exact zero where y = 2^-k
                        2 => (x ^ 0x8000).wrapping_add(((r.next_u32() % 64) as u16) << 7) as u32 | (r.next_u32() & 0xffff_0000),
                        _ => with_exp(f, &mut r, 0, 24) as u32 | (with_exp(f, &mut r, 200, 54) as u32) << 16,
                    };
                    let a = x as u32 * 0x10001;
                    for blk in ys.chunks(4096) {
                        fma.batch_row(a, blk, c, &mut out, &mut scratch);
                        for (&b, &got) in blk.iter().zip(&out) {
                            let want = expect_word(&p, f, &op, a, b, c);
                            if got != want && bad.fetch_add(1, Relaxed) < 20 {
                                eprintln!("BF16 row: {a:#010x} x {b:#010x} + {c:#010x}: reference {got:#010x}, apfloat {want:#010x} (row {k})");
                            }
                        }
                    }
                }
            });
        }
    });
    println!("{rows} BF16 rows of 2^16 against rustc_apfloat in {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(bad.into_inner(), 0, "BF16 rows: mismatches against rustc_apfloat (the first ones above; seed {seed})");
}

// ---------------------------------------------------------------------------------------
// Special values, modifiers, knobs
// ---------------------------------------------------------------------------------------

/// The TestFloat-style values: ±0, ±min and max subnormal, ±min normal, ±1 and
/// neighbours, ±max, ±Inf, NaNs of both signs with payloads (quiet and signalling), and
/// values whose products and sums land on ties, on cancellation, and on the overflow and
/// subnormal thresholds.
fn specials(f: Fmt) -> Vec<u16> {
    let mut v = match f {
        Fmt::F16 => f16_specials().to_vec(),
        Fmt::Bf16 => bf16_specials().to_vec(),
    };
    v.extend(match f {
        // 2^-11, 3 x 2^-12, 8, 16, the smallest normal + 1 ulp, -1.5
        Fmt::F16 => [0x1000, 0x0e00, 0x4800, 0x4c00, 0x0401, 0xbe00],
        Fmt::Bf16 => [0x3b80, 0x3b40, 0x7300, 0x7380, 0x0081, 0xbfc0],
    });
    v
}

fn all_mods() -> Vec<SrcMods> {
    let mut v = Vec::new();
    for neg in [false, true] {
        for abs in [false, true] {
            for swizzle in [Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1] {
                v.push(SrcMods { neg, abs, swizzle });
            }
        }
    }
    v
}

/// (flush, sat, relu) of every defined combination.
fn all_finishes() -> Vec<Mods> {
    let mut v = Vec::new();
    for flush in [Flush::None, Flush::Ftz, Flush::Fmz] {
        for (sat, relu) in [(false, false), (true, false), (false, true)] {
            v.push(Mods { flush, sat, relu });
        }
    }
    v
}

/// The expected 32 bits of `op` on words `a`, `b`, `c`.
fn expect_word(p: &Policy, f: Fmt, op: &FmaOp, a: u32, b: u32, c: u32) -> u32 {
    let m = Mods { flush: op.flush, sat: op.sat, relu: op.relu };
    (0..2).fold(0, |acc, l| {
        let x = modded(p, a, op.a_mods, l);
        let y = modded(p, b, op.b_mods, l);
        let z = modded(p, c, op.c_mods, l);
        acc | (expect_lane(p, f, m, x, y, z) as u32) << (16 * l)
    })
}

/// Every special value in every position (all triples), under every flush / .SAT / .RELU
/// combination, HFMA2 and HFMA2.MMA, against the model; returns the results (for the
/// knob tests) and counts mismatches into `bad`.
fn special_cube(p: &Policy, f: Fmt, bad: &mut u64) -> Vec<u32> {
    let sp = specials(f);
    let mut results = Vec::new();
    for m in all_finishes() {
        for mma in [false, true] {
            let op = FmaOp { flush: m.flush, sat: m.sat, relu: m.relu, mma, ..plain(f) };
            // lane 1 holds the same triple negated in c: both signs of every sum
            for &x in &sp {
                for &y in &sp {
                    let a: Vec<u32> = sp.iter().map(|_| x as u32 * 0x1_0001).collect();
                    let b: Vec<u32> = sp.iter().map(|_| y as u32 * 0x1_0001).collect();
                    let c: Vec<u32> = sp.iter().map(|&z| z as u32 | ((z ^ 0x8000) as u32) << 16).collect();
                    let mut out = vec![0u32; sp.len()];
                    match eval_fma_batch(&op, p, &a, &b, &c, &mut out) {
                        Ok(()) => {
                            for i in 0..sp.len() {
                                let want = expect_word(p, f, &op, a[i], b[i], c[i]);
                                if out[i] != want {
                                    *bad += 1;
                                    if *bad <= 20 {
                                        eprintln!(
                                            "{op:?} {p:?}: a={:#010x} b={:#010x} c={:#010x}: expected {want:#010x}, reference {:#010x}",
                                            a[i], b[i], c[i], out[i]
                                        );
                                    }
                                }
                            }
                            results.extend_from_slice(&out);
                        }
                        Err(u) => {
                            if !(mma && !p.fma_mma_same && u == Undefined::Fma(why::MMA)) {
                                *bad += 1;
                                eprintln!("{op:?}: unexpectedly undefined: {u}");
                            }
                            results.extend(std::iter::repeat_n(u32::MAX, sp.len()));
                        }
                    }
                }
            }
        }
    }
    results
}

#[test]
fn special_values_in_every_position_with_every_flush_sat_relu() {
    let p = *Policy::current();
    let mut bad = 0;
    let mut n = 0;
    for f in [Fmt::F16, Fmt::Bf16] {
        n += special_cube(&p, f, &mut bad).len() * 2;
    }
    println!("special cube: {n} lanes");
    assert_eq!(bad, 0, "mismatches (the first ones above)");
}

/// Every source modifier combination of the three sources (12^3) with every flush / .SAT
/// / .RELU, on words of special values (two per word, so lanes and half selects see
/// different values).
#[test]
fn special_values_times_every_source_modifier() {
    let p = *Policy::current();
    let mods = all_mods();
    let (mut checked, mut bad) = (0u64, 0u64);
    let t0 = Instant::now();
    for f in [Fmt::F16, Fmt::Bf16] {
        let sp = specials(f);
        let n = sp.len();
        let mut r = Rng::new(0xf4a2);
        let words: Vec<(u32, u32, u32)> = (0..24)
            .map(|_| {
                let w = |r: &mut Rng| *r.pick(&sp) as u32 | (*r.pick(&sp) as u32) << 16;
                (w(&mut r), w(&mut r), w(&mut r))
            })
            .chain((0..n).map(|j| {
                (
                    sp[j] as u32 | (sp[(j * 7 + 3) % n] as u32) << 16,
                    sp[(j * 5 + 1) % n] as u32 | (sp[j] as u32) << 16,
                    sp[(j * 3 + 2) % n] as u32 | (sp[(j * 11 + 5) % n] as u32) << 16,
                )
            }))
            .collect();
        for am in &mods {
            for bm in &mods {
                for cm in &mods {
                    for m in all_finishes() {
                        let op = FmaOp { a_mods: *am, b_mods: *bm, c_mods: *cm, flush: m.flush, sat: m.sat, relu: m.relu, ..plain(f) };
                        for &(a, b, c) in &words {
                            let want = expect_word(&p, f, &op, a, b, c);
                            let got = eval_fma(&op, &p, a, b, c);
                            if got != Ok(want) {
                                bad += 1;
                                if bad <= 20 {
                                    eprintln!("{op:?}: a={a:#010x} b={b:#010x} c={c:#010x}: expected {want:#010x}, reference {got:x?}");
                                }
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    println!("source modifiers: {checked} words in {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(bad, 0, "mismatches (the first ones above)");
}

/// Every option of every knob HFMA2 reads, one at a time: the special cube agrees with
/// the model under each, and each option gives results no other option of its knob gives
/// (the cube tells the options apart, so a knob the code ignored would show).
#[test]
fn every_fma_knob_in_every_option() {
    let read = [
        "nan-result",
        "abs-neg-order",
        "ftz-inputs",
        "ftz-tininess",
        "fmz-zero-product",
        "fmz-flushes",
        "flush-bf16",
        "sat-negative-zero",
        "sat-nan",
        "sat-bf16",
        "fma-signed-zero",
        "fma-ftz-addend",
        "fma-ftz-product",
        "fma-fmz-addend",
        "fma-relu-negative-zero",
        "fma-relu-nan",
        "fma-mma",
    ];
    for (id, _) in KNOBS.iter().filter(|(id, _)| id.starts_with("fma-")) {
        assert!(read.contains(id), "{id}: a new fma knob this test does not exercise");
    }
    let mut bad = 0;
    // every knob at the full level; a sample of them (printed, with its seed) at the quick one
    let picked = harness_reference::testlevel::rows("fma knobs told apart option by option", read.len() as u32, 5);
    for id in picked.iter().map(|&i| read[i as usize]) {
        let k = KNOBS.iter().position(|(i, _)| *i == id).unwrap_or_else(|| panic!("{id}: no such knob"));
        // abs-neg-order shows only with modifiers: its own small check
        if id == "abs-neg-order" {
            continue;
        }
        let mut seen: Vec<Vec<u32>> = Vec::new();
        for o in 0..KNOBS[k].1.len() {
            let mut p = *Policy::current();
            p.set(k, o);
            // fma-relu-nan's options coincide under a canonical nan-result
            if id == "fma-relu-nan" {
                let n = KNOBS.iter().position(|(i, _)| *i == "nan-result").unwrap();
                p.set(n, 1);
            }
            let mut r = special_cube(&p, Fmt::F16, &mut bad);
            r.extend(special_cube(&p, Fmt::Bf16, &mut bad));
            assert!(!seen.contains(&r), "{id}: option {o} gives the same results as another option on every special triple");
            seen.push(r);
        }
        println!("{id}: {} options told apart", seen.len());
    }
    assert_eq!(bad, 0, "mismatches (the first ones above)");
    // abs-neg-order: -|x| against |-x| on c
    let k = KNOBS.iter().position(|(i, _)| *i == "abs-neg-order").unwrap();
    let op = FmaOp { c_mods: SrcMods { neg: true, abs: true, swizzle: Swizzle::H1H0 }, ..plain(Fmt::F16) };
    for o in 0..2 {
        let mut p = *Policy::current();
        p.set(k, o);
        let want = expect_word(&p, Fmt::F16, &op, 0x3c00_3c00, 0x3c00_3c00, 0x4000_c000);
        assert_eq!(eval_fma(&op, &p, 0x3c00_3c00, 0x3c00_3c00, 0x4000_c000), Ok(want));
        assert_eq!(want, if o == 0 { 0xbc00_bc00 } else { 0x4200_4200 });
    }
}

/// The NaN policy in both settings on hand-written cases: payloads, signs, which operand
/// wins, 0 x Inf and Inf - Inf.
#[test]
fn nan_policy_both_ways() {
    let k = KNOBS.iter().position(|(i, _)| *i == "nan-result").unwrap();
    let op = plain(Fmt::F16);
    for (a, b, c, canonical, propagated) in [
        (0x7e5a, 0x3c00, 0x3c00, 0x7fff, 0x7e5a),
        (0x3c00, 0xfd55, 0x7e00, 0x7fff, 0xff55),
        (0x3c00, 0x3c00, 0x7c01, 0x7fff, 0x7e01),
        (0x0000, 0x7c00, 0x3c00, 0x7fff, 0x7fff),
        (0x7c00, 0x3c00, 0xfc00, 0x7fff, 0x7fff),
        (0x0000, 0x7c00, 0xfe12, 0x7fff, 0xfe12),
    ] {
        for (o, want) in [(0, canonical), (1, propagated)] {
            let mut p = *Policy::current();
            p.set(k, o);
            let w = |v: u16| v as u32 * 0x1_0001;
            assert_eq!(eval_fma(&op, &p, w(a), w(b), w(c)), Ok(w(want)), "nan-result option {o}: {a:#06x} x {b:#06x} + {c:#06x}");
        }
    }
}

/// What has no value is refused, whatever the inputs, with its reason.
#[test]
fn undefined_modifiers() {
    let p = Policy::current();
    for f in [Fmt::F16, Fmt::Bf16] {
        assert_eq!(eval_fma(&FmaOp { oob: true, ..plain(f) }, p, 0x3c00, 0x3c00, 0), Err(Undefined::Fma(why::OOB)));
        assert_eq!(eval_fma(&FmaOp { sat: true, relu: true, ..plain(f) }, p, 0, 0, 0), Err(Undefined::Fma(why::SAT_RELU)));
    }
    assert_eq!(eval_fma(&plain(Fmt::F16).with_format(Format::F32), p, 0, 0, 0), Err(Undefined::Fma(why::F32)));
    assert_eq!(eval_fma(&plain(Fmt::F16).with_format(Format::Invalid1), p, 0, 0, 0), Err(Undefined::Format(Format::Invalid1)));
    let inv = SrcMods { swizzle: Swizzle::Invalid1, ..Default::default() };
    for (k, op) in
        [FmaOp { a_mods: inv, ..plain(Fmt::F16) }, FmaOp { b_mods: inv, ..plain(Fmt::F16) }, FmaOp { c_mods: inv, ..plain(Fmt::F16) }].iter().enumerate()
    {
        assert_eq!(eval_fma(op, p, 0, 0, 0), Err(Undefined::Swizzle { operand: k as u8 + 1 }));
    }
}

trait WithFormat {
    fn with_format(self, f: Format) -> Self;
}

impl WithFormat for FmaOp {
    fn with_format(self, format: Format) -> FmaOp {
        FmaOp { format, ..self }
    }
}
