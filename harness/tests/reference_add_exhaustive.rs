//! The HADD2 arithmetic of the reference (`reference::add`) against an independent oracle,
//! `rustc_apfloat` (software IEEE arithmetic sharing no code with `half` or the CPU): all
//! 2^32 operand pairs of FP16 lanes, of BF16 lanes and of the FP16 `.F32` sum, plus
//! TestFloat-style special values crossed with every modifier, against expectations
//! written here from apfloat and explicit modifier logic (never calls of the code under
//! test).

use hmul2_harness::isa::{Flush, Format, SrcMods, Swizzle};
use hmul2_harness::reference::add::{eval_add, eval_add_batch, AddOp};
use hmul2_harness::reference::{bf16_specials, f16_specials, F32Nan, Policy, Undefined, ZeroSum};
use rustc_apfloat::ieee::{BFloat, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round};
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
    fn is_nan(self, v: u16) -> bool {
        v & 0x7fff > self.exp()
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
    /// apfloat's IEEE sum, round to nearest even.
    fn add(self, a: u16, b: u16) -> u16 {
        match self {
            Fmt::F16 => Half::from_bits(a as u128).add_r(Half::from_bits(b as u128), Round::NearestTiesToEven).value.to_bits() as u16,
            Fmt::Bf16 => BFloat::from_bits(a as u128).add_r(BFloat::from_bits(b as u128), Round::NearestTiesToEven).value.to_bits() as u16,
        }
    }
}

/// apfloat's FP32 sum of two FP16 values, each converted exactly first.
fn add32(a: u16, b: u16) -> u32 {
    let mut lost = false;
    let x: Single = Half::from_bits(a as u128).convert(&mut lost).value;
    let y: Single = Half::from_bits(b as u128).convert(&mut lost).value;
    assert!(!lost, "FP16 to FP32 is exact");
    x.add_r(y, Round::NearestTiesToEven).value.to_bits() as u32
}

/// The documented lane NaN policy, written out.
fn nan16(p: &Policy, f: Fmt, a: u16, b: u16) -> u16 {
    if p.nan_canonical {
        0x7fff
    } else if f.is_nan(a) {
        a | f.quiet()
    } else if f.is_nan(b) {
        b | f.quiet()
    } else {
        0x7fff
    }
}

/// The `.F32` NaN policy, written out.
fn nan32(p: &Policy, a: u16, b: u16) -> u32 {
    let widen = |v: u16| (v as u32 & 0x8000) << 16 | 0x7f80_0000 | 0x0040_0000 | (v as u32 & 0x3ff) << 13;
    match p.add_f32_nan {
        F32Nan::Canonical => 0x7fff_ffff,
        F32Nan::WidenedF16 => 0x7fff_e000,
        F32Nan::Propagate if Fmt::F16.is_nan(a) => widen(a),
        F32Nan::Propagate if Fmt::F16.is_nan(b) => widen(b),
        F32Nan::Propagate => 0x7fff_ffff,
    }
}

/// The sign bit (0 or 0x8000) of an exact zero sum of `a` and `b`, per the policy. Under
/// IEEE's rule apfloat's own zero is taken instead (see the callers).
fn zero_sign(p: &Policy, a: u16, b: u16) -> u16 {
    match p.add_zero_sum {
        ZeroSum::Ieee => a & b & 0x8000,
        ZeroSum::Plus => 0,
        ZeroSum::MinusUnlessBothPlus => (a | b) & 0x8000,
    }
}

/// Lane expectation without modifiers: apfloat, then the policy's NaN and zero-sum rules.
fn plain_lane(p: &Policy, f: Fmt, a: u16, b: u16, apf: u16) -> u16 {
    if f.is_nan(a) || f.is_nan(b) || f.is_nan(apf) {
        nan16(p, f, a, b)
    } else if apf & 0x7fff == 0 && p.add_zero_sum != ZeroSum::Ieee {
        zero_sign(p, a, b)
    } else {
        apf
    }
}

fn plain_f32(p: &Policy, a: u16, b: u16, apf: u32) -> u32 {
    if Fmt::F16.is_nan(a) || Fmt::F16.is_nan(b) || apf & 0x7fff_ffff > 0x7f80_0000 {
        nan32(p, a, b)
    } else if apf & 0x7fff_ffff == 0 && p.add_zero_sum != ZeroSum::Ieee {
        (zero_sign(p, a, b) as u32) << 16
    } else {
        apf
    }
}

/// apfloat's sums of operand pairs, most of them read from tables of canonical pairs
/// instead of asked one by one (2^30 apfloat calls would take minutes on two cores).
///
/// Scaling both operands by 2^k scales their exact sum by 2^k, and round to nearest
/// commutes with the scaling while the result is a normal number at both scales. So for
/// `|x| <= |y|`, both normal, with exponent fields `ex` and `ey = ex + d`, the sum equals
/// that of the canonical pair (the same significands and signs, x's exponent field
/// `canon[d]`) with `k = ex - canon[d]` added to the result's exponent field: an exponent
/// above the largest normal overflows to Inf (round to nearest, the result rounded as if
/// the exponent were unbounded is above the largest finite value), one below 1 (a
/// subnormal result) is asked of apfloat directly, and so is everything else: subnormal
/// operands, Inf, and a canonical result that is not a normal number when `k != 0`. The
/// canonical exponent keeps every canonical result normal (a nonzero sum is a multiple of
/// x's ulp). NaN operands are not asked at all: their expectation is the NaN policy's.
struct Oracle {
    /// Operand format: fraction bits, largest normal exponent field.
    m: u32,
    top: u32,
    /// Result format: fraction bits, largest normal exponent field, sign bit.
    rm: u32,
    rtop: u32,
    rsign: u32,
    canon: Vec<u32>,
    /// `tables[2 * d + opposite_signs][(x fraction << m) | y fraction]`.
    tables: Vec<Vec<u32>>,
    direct: fn(u16, u16) -> u32,
    /// What a NaN operand gives (any NaN: the caller applies the policy).
    nan: u32,
}

/// The FP16 lane oracle, built once per test process (the sweeps and the table check share it).
fn f16_oracle() -> &'static Oracle {
    static O: std::sync::OnceLock<Oracle> = std::sync::OnceLock::new();
    O.get_or_init(|| Oracle::new(10, 30, 11, 10, 30, |a, b| Fmt::F16.add(a, b) as u32))
}

/// The BF16 lane oracle, built once per test process.
fn bf16_oracle() -> &'static Oracle {
    static O: std::sync::OnceLock<Oracle> = std::sync::OnceLock::new();
    O.get_or_init(|| Oracle::new(7, 254, 8, 7, 254, |a, b| Fmt::Bf16.add(a, b) as u32))
}

/// The FP16 `.F32` sum oracle, built once per test process.
fn f32_oracle() -> &'static Oracle {
    static O: std::sync::OnceLock<Oracle> = std::sync::OnceLock::new();
    O.get_or_init(|| Oracle::new(10, 30, 11, 23, 254, add32))
}

impl Oracle {
    fn new(m: u32, top: u32, min_canon: u32, rm: u32, rtop: u32, direct: fn(u16, u16) -> u32) -> Oracle {
        let rsign = 1 << (rm + (if rtop == 254 { 8 } else { 5 }));
        let canon: Vec<u32> = (0..top).map(|d| min_canon.min(top - d)).collect();
        let jobs: Vec<(u32, bool)> = (0..top).flat_map(|d| [(d, false), (d, true)]).collect();
        let mut tables: Vec<Vec<u32>> = vec![Vec::new(); jobs.len()];
        std::thread::scope(|s| {
            let (lo, hi) = tables.split_at_mut(jobs.len() / 2);
            for (part, jobs) in [(lo, &jobs[..jobs.len() / 2]), (hi, &jobs[jobs.len() / 2..])] {
                let canon = &canon;
                s.spawn(move || {
                    for (t, &(d, opp)) in part.iter_mut().zip(jobs) {
                        let c = canon[d as usize];
                        *t = (0..1u32 << (2 * m))
                            .map(|i| {
                                let (fx, fy) = (i >> m, i & ((1 << m) - 1));
                                let x = (c << m | fx) as u16;
                                let y = ((c + d) << m | fy) as u16 | if opp { 0x8000 } else { 0 };
                                direct(x, y)
                            })
                            .collect();
                    }
                });
            }
        });
        Oracle { m, top, rm, rtop, rsign, canon, tables, direct, nan: if rtop == 254 && rm == 23 { 0x7fff_ffff } else { 0x7fff } }
    }

    /// The raw IEEE sum `x + y`, x a magnitude not above y's.
    fn sum(&self, x: u16, y: u16) -> u32 {
        let (ex, ey) = ((x as u32) >> self.m, (y as u32 & 0x7fff) >> self.m);
        let frac = (1u32 << self.m) - 1;
        if ey > self.top && y as u32 & frac != 0 {
            return self.nan;
        }
        if ex == 0 || ey > self.top {
            return (self.direct)(x, y);
        }
        let d = ey - ex;
        let k = ex as i32 - self.canon[d as usize] as i32;
        let r = self.tables[(2 * d + (y >> 15) as u32) as usize][((x as u32 & frac) << self.m | (y as u32 & frac)) as usize];
        let mag = r & (self.rsign - 1);
        let er = mag >> self.rm;
        if mag == 0 || k == 0 {
            return r;
        }
        if er == 0 || er > self.rtop {
            return (self.direct)(x, y);
        }
        let e = er as i32 + k;
        if e > self.rtop as i32 {
            (r & self.rsign) | (self.rtop + 1) << self.rm
        } else if e < 1 {
            (self.direct)(x, y)
        } else {
            r.wrapping_add((k << self.rm) as u32)
        }
    }
}

/// The ordered signed pairs one row of magnitude `x` covers, with their expected raw IEEE
/// sums, from `s_pos = x + y` and `s_neg = x + (-y)` for a magnitude `y >= x`: negating
/// both operands negates a sum (round to nearest is symmetric) and addition commutes. A
/// zero got by negation may be wrong in sign (x + -x = +0 both ways), so the caller asks
/// apfloat directly for every zero.
fn derived<T: Copy>(x: u16, y: u16, s_pos: T, s_neg: T, neg: impl Fn(T) -> T) -> impl Iterator<Item = (u16, u16, T)> {
    let (nx, ny) = (x | 0x8000, y | 0x8000);
    let v =
        [(x, y, s_pos), (x, ny, s_neg), (nx, y, neg(s_neg)), (nx, ny, neg(s_pos)), (y, x, s_pos), (y, nx, neg(s_neg)), (ny, x, s_neg), (ny, nx, neg(s_pos))];
    v.into_iter().take(if y == x { 4 } else { 8 })
}

/// Runs `check_row` for every magnitude row on two threads (rows interleaved so both get
/// the same work) and reports the count of pairs and mismatches.
///
/// Every row at the full level (ci/test.sh); a sample of rows in a plain `cargo test`
/// (printed), each still checked whole.
fn two_threads(name: &str, t0: Instant, check_row: impl Fn(u16, &AtomicU64) -> u64 + Sync) {
    let rows = hmul2_harness::testlevel::rows(name, 1 << 15, 64);
    let (bad, checked) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for t in 0..2usize {
            let (bad, checked, check_row, rows) = (&bad, &checked, &check_row, &rows);
            s.spawn(move || {
                let n: u64 = rows.iter().skip(t).step_by(2).map(|&x| check_row(x as u16, bad)).sum();
                checked.fetch_add(n, Relaxed);
            });
        }
    });
    // row x holds the pairs of magnitudes (x, y >= x) with their signs and order: 8 each, 4 for y = x
    let pairs: u64 = rows.iter().map(|&x| 8 * ((1u64 << 15) - x as u64) - 4).sum();
    println!("{name}: {pairs} pairs against rustc_apfloat in {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(checked.into_inner(), pairs, "{name}: every ordered pair of the rows checked once");
    if hmul2_harness::testlevel::is_full() {
        assert_eq!(pairs, 1u64 << 32, "{name}: the full level checks all 2^32 pairs");
    }
    assert_eq!(bad.into_inner(), 0, "{name}: mismatches against rustc_apfloat (the first ones above)");
}

fn report(bad: &AtomicU64, what: std::fmt::Arguments) {
    if bad.fetch_add(1, Relaxed) < 20 {
        eprintln!("{what}");
    }
}

/// All 2^32 lane pairs of format `f`, two pairs per input word (lane 0 and lane 1).
fn sweep_lanes(f: Fmt) {
    let p = *Policy::current();
    let op = AddOp { format: f.format(), ..Default::default() };
    let t0 = Instant::now();
    let oracle = match f {
        Fmt::F16 => f16_oracle(),
        Fmt::Bf16 => bf16_oracle(),
    };
    println!("{f:?}: tables in {:.1} s", t0.elapsed().as_secs_f64());
    two_threads(&format!("{f:?} lanes"), t0, |x, bad| {
        let mut pairs = Vec::with_capacity(8 << 15);
        for y in x..1 << 15 {
            let (s_pos, s_neg) = (oracle.sum(x, y) as u16, oracle.sum(x, y | 0x8000) as u16);
            for (a, b, s) in derived(x, y, s_pos, s_neg, |v: u16| v ^ 0x8000) {
                let s = match s {
                    s if s & 0x7fff != 0 => s,
                    _ if f.is_nan(a) || f.is_nan(b) => 0x7fff,
                    _ => f.add(a, b),
                };
                pairs.push((a, b, plain_lane(&p, f, a, b, s)));
            }
        }
        // pair 2i in lane 0 of input i, pair 2i + 1 in lane 1 (a row has an even count)
        let a: Vec<u32> = pairs.chunks(2).map(|q| q[0].0 as u32 | (q[1].0 as u32) << 16).collect();
        let b: Vec<u32> = pairs.chunks(2).map(|q| q[0].1 as u32 | (q[1].1 as u32) << 16).collect();
        let mut out = vec![0u32; a.len()];
        eval_add_batch(&op, &p, &a, &b, &mut out).expect("plain HADD2 is defined");
        for (i, &o) in out.iter().enumerate() {
            for l in 0..2 {
                let (pa, pb, want) = pairs[2 * i + l];
                let got = (o >> (16 * l)) as u16;
                if got != want {
                    report(bad, format_args!("{f:?}: {pa:#06x} + {pb:#06x}: reference {got:#06x}, apfloat {want:#06x}"));
                }
            }
        }
        pairs.len() as u64
    });
}

#[test]
fn exhaustive_f16_add_against_apfloat() {
    sweep_lanes(Fmt::F16);
}

#[test]
fn exhaustive_bf16_add_against_apfloat() {
    sweep_lanes(Fmt::Bf16);
}

/// All 2^32 FP16 pairs through `.F32`, against apfloat `Single`. The pair sits in the lane
/// the policy adds; the other lane holds a NaN, which would show if it were read.
#[test]
fn exhaustive_f32_sum_against_apfloat() {
    let p = *Policy::current();
    let op = AddOp { format: Format::F16, f32_out: true, ..Default::default() };
    let (at, other) = if p.add_f32_lane0 { (0, 16) } else { (16, 0) };
    let t0 = Instant::now();
    let oracle = f32_oracle();
    println!("F32: tables in {:.1} s", t0.elapsed().as_secs_f64());
    two_threads("F16 .F32", t0, |x, bad| {
        let mut pairs = Vec::with_capacity(8 << 15);
        for y in x..1 << 15 {
            let (s_pos, s_neg) = (oracle.sum(x, y), oracle.sum(x, y | 0x8000));
            for (a, b, s) in derived(x, y, s_pos, s_neg, |v: u32| v ^ 0x8000_0000) {
                let s = match s {
                    s if s & 0x7fff_ffff != 0 => s,
                    _ if Fmt::F16.is_nan(a) || Fmt::F16.is_nan(b) => 0x7fff_ffff,
                    _ => add32(a, b),
                };
                pairs.push((a, b, plain_f32(&p, a, b, s)));
            }
        }
        let a: Vec<u32> = pairs.iter().map(|q| (q.0 as u32) << at | 0x7e01 << other).collect();
        let b: Vec<u32> = pairs.iter().map(|q| (q.1 as u32) << at | 0xfe02 << other).collect();
        let mut out = vec![0u32; pairs.len()];
        eval_add_batch(&op, &p, &a, &b, &mut out).expect("HADD2.F32 is defined");
        for (&(pa, pb, want), &got) in pairs.iter().zip(&out) {
            if got != want {
                report(bad, format_args!("F32: {pa:#06x} + {pb:#06x}: reference {got:#010x}, apfloat {want:#010x}"));
            }
        }
        pairs.len() as u64
    });
}

/// The table oracle against apfloat asked directly, on a sample of every kind of pair
/// (the sweeps rely on it: a wrong table would show as mismatches, never hide one, unless
/// the reference had the very same error).
#[test]
fn oracle_tables_are_apfloat() {
    let (f16, bf16, f32s) = (f16_oracle(), bf16_oracle(), f32_oracle());
    let mut n = 0u64;
    // every 7th magnitude at the full level; a sample of those rows (printed) otherwise
    let xs: Vec<u16> = (0..1u16 << 15).step_by(7).collect();
    let keep = hmul2_harness::testlevel::rows("magnitude rows of the table oracle check", xs.len() as u32, xs.len() as u32 / 16);
    for x in keep.into_iter().map(|i| xs[i as usize]) {
        for y in (x..1 << 15).step_by(61).chain([x, 0x7bff, 0x7c00, 0x7f7f, 0x7f80]) {
            if y < x {
                continue;
            }
            for y in [y, y | 0x8000] {
                if !Fmt::F16.is_nan(x) && !Fmt::F16.is_nan(y) {
                    assert_eq!(f16.sum(x, y), Fmt::F16.add(x, y) as u32, "F16 {x:#06x} + {y:#06x}");
                    assert_eq!(f32s.sum(x, y), add32(x, y), "F32 {x:#06x} + {y:#06x}");
                }
                if !Fmt::Bf16.is_nan(x) && !Fmt::Bf16.is_nan(y) {
                    assert_eq!(bf16.sum(x, y), Fmt::Bf16.add(x, y) as u32, "BF16 {x:#06x} + {y:#06x}");
                }
                n += 1;
            }
        }
    }
    println!("{n} pairs");
}

/// Source modifiers written out: half select, then |x| and -x in the policy's order.
fn modded(p: &Policy, word: u32, m: SrcMods, lane: u32) -> u16 {
    let half = match m.swizzle {
        Swizzle::H1H0 => lane,
        Swizzle::H0H0 => 0,
        Swizzle::H1H1 => 1,
        Swizzle::Invalid1 | Swizzle::Code4 | Swizzle::Code5 | Swizzle::Code6 | Swizzle::Code7 => {
            unreachable!("targeted cases use HADD2's defined half selects")
        }
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

fn flush_in(f: Fmt, v: u16) -> u16 {
    if f.is_sub(v) {
        v & 0x8000
    } else {
        v
    }
}

/// The expected lane value, step by step from the policy's flags and apfloat.
fn expect_lane(p: &Policy, f: Fmt, ftz: bool, sat: bool, a: u16, b: u16) -> u16 {
    let ftz = ftz && (f == Fmt::F16 || p.flush_bf16);
    let (a, b) = if ftz && p.ftz_inputs { (flush_in(f, a), flush_in(f, b)) } else { (a, b) };
    let mut r = plain_lane(p, f, a, b, f.add(a, b));
    if ftz && f.is_sub(r) {
        r = if p.add_ftz_keeps_sign { r & 0x8000 } else { 0 };
    }
    if sat && (f == Fmt::F16 || p.sat_bf16) {
        if f.is_nan(r) {
            if p.sat_nan_to_zero {
                r = 0;
            }
        } else if r == 0x8000 {
            if p.sat_neg_zero_to_plus {
                r = 0;
            }
        } else if r & 0x8000 != 0 {
            r = 0;
        } else if r > f.one() {
            r = f.one();
        }
    }
    r
}

/// The expected `.F32` value.
fn expect_f32(p: &Policy, ftz: bool, sat: bool, a: u16, b: u16) -> u32 {
    let (a, b) = if ftz && p.ftz_inputs && p.add_f32_ftz_inputs { (flush_in(Fmt::F16, a), flush_in(Fmt::F16, b)) } else { (a, b) };
    let mut r = plain_f32(p, a, b, add32(a, b));
    if sat && p.add_f32_sat {
        if r & 0x7fff_ffff > 0x7f80_0000 {
            if p.sat_nan_to_zero {
                r = 0;
            }
        } else if r == 0x8000_0000 {
            if p.sat_neg_zero_to_plus {
                r = 0;
            }
        } else if r & 0x8000_0000 != 0 {
            r = 0;
        } else if f32::from_bits(r) > 1.0 {
            r = 1f32.to_bits();
        }
    }
    r
}

/// Special values, plus addends that land on ties, on cancellation, and around the
/// overflow and subnormal thresholds of a sum.
fn specials(f: Fmt) -> Vec<u16> {
    let mut v = match f {
        Fmt::F16 => f16_specials().to_vec(),
        Fmt::Bf16 => bf16_specials().to_vec(),
    };
    v.extend(match f {
        // 2^-11 (a tie against 1), 3 x 2^-12, 8 and 16 (65504 + 16 = 65520 ties to Inf),
        // the two smallest normals + 1 ulp (their difference with 0x0400 is subnormal)
        Fmt::F16 => [0x1000, 0x0e00, 0x4800, 0x4c00, 0x0401, 0x8401],
        Fmt::Bf16 => [0x3b80, 0x3b40, 0x7300, 0x7380, 0x0081, 0x8081],
    });
    v
}

/// Every special value crossed with every special value (two per word, so lanes and half
/// selects see different values), every defined modifier combination, .FTZ, .SAT and .F32,
/// both formats.
#[test]
fn targeted_specials_times_every_modifier() {
    let p = *Policy::current();
    let mods: Vec<SrcMods> = [false, true]
        .into_iter()
        .flat_map(|neg| {
            [false, true]
                .into_iter()
                .flat_map(move |abs| [Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1].into_iter().map(move |swizzle| SrcMods { neg, abs, swizzle }))
        })
        .collect();
    let mut checked = 0u64;
    let mut bad = 0u64;
    for f in [Fmt::F16, Fmt::Bf16] {
        let sp = specials(f);
        let n = sp.len();
        let word = |j: usize| sp[j] as u32 | (sp[(j * 7 + 3) % n] as u32) << 16;
        for am in &mods {
            for bm in &mods {
                for ftz in [false, true] {
                    for sat in [false, true] {
                        for f32_out in [false, true] {
                            let op = AddOp { format: f.format(), a_mods: *am, b_mods: *bm, flush: if ftz { Flush::Ftz } else { Flush::None }, sat, f32_out };
                            for i in 0..n {
                                for j in 0..n {
                                    let (a, b) = (word(i), word(j));
                                    let want = if f32_out && f == Fmt::Bf16 {
                                        Err(Undefined::AddBf16F32)
                                    } else if f32_out {
                                        let l = if p.add_f32_lane0 { 0 } else { 1 };
                                        Ok(expect_f32(&p, ftz, sat, modded(&p, a, *am, l), modded(&p, b, *bm, l)))
                                    } else {
                                        Ok((0..2).fold(0u32, |acc, l| {
                                            acc | (expect_lane(&p, f, ftz, sat, modded(&p, a, *am, l), modded(&p, b, *bm, l)) as u32) << (16 * l)
                                        }))
                                    };
                                    let got = eval_add(&op, &p, a, b);
                                    if got != want {
                                        bad += 1;
                                        if bad <= 20 {
                                            eprintln!("{op:?}: a={a:#010x} b={b:#010x}: expected {want:x?}, reference {got:x?}");
                                        }
                                    }
                                    checked += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    println!("targeted: {checked} cases");
    assert_eq!(bad, 0, "mismatches (the first ones above)");
    assert!(checked > 1_000_000);
}
