//! The plain FP16 and BF16 lane product of the reference against an independent oracle,
//! `rustc_apfloat` (a port of LLVM's APFloat: software IEEE arithmetic that shares no code
//! with `half` or the CPU's conversions), on all 2^32 operand pairs of each format, plus
//! TestFloat-style targeted cases crossed with every modifier, checked against expectations
//! written here from apfloat and explicit modifier logic (not calls of the code under test).

use hmul2_harness::inputs::Inputs;
use hmul2_harness::isa::{Flush, Format, Inst, Operand2, Pred, SrcMods, Swizzle, RZ};
use hmul2_harness::reference::{bf16_specials, eval, eval_batch, f16_specials, FmzZero, Policy};
use rustc_apfloat::ieee::{BFloat, Half};
use rustc_apfloat::{Float, Round};
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
    /// apfloat's IEEE product, round to nearest even, and whether the exact product is
    /// below the smallest normal in magnitude (apfloat's underflow flag tells tininess
    /// after rounding, so the before-rounding test compares the exact product in Double).
    fn mul(self, a: u16, b: u16) -> u16 {
        match self {
            Fmt::F16 => Half::from_bits(a as u128).mul_r(Half::from_bits(b as u128), Round::NearestTiesToEven).value.to_bits() as u16,
            Fmt::Bf16 => BFloat::from_bits(a as u128).mul_r(BFloat::from_bits(b as u128), Round::NearestTiesToEven).value.to_bits() as u16,
        }
    }
    fn exact_below_min_normal(self, a: u16, b: u16) -> bool {
        use rustc_apfloat::ieee::Double;
        use rustc_apfloat::FloatConvert;
        let mut lost = false;
        let (x, y, min) = match self {
            Fmt::F16 => {
                let x: Double = Half::from_bits(a as u128).convert(&mut lost).value;
                let y: Double = Half::from_bits(b as u128).convert(&mut lost).value;
                let m: Double = Half::from_bits(0x0400).convert(&mut lost).value;
                (x, y, m)
            }
            Fmt::Bf16 => {
                let x: Double = BFloat::from_bits(a as u128).convert(&mut lost).value;
                let y: Double = BFloat::from_bits(b as u128).convert(&mut lost).value;
                let m: Double = BFloat::from_bits(0x0080).convert(&mut lost).value;
                (x, y, m)
            }
        };
        // both factors have at most 11 significant bits: the Double product is exact
        let p = (x * y).value.abs();
        p < min && !p.is_zero()
    }
}

/// The documented NaN policy, written out here: what a NaN result must be.
fn expected_nan(p: &Policy, f: Fmt, a: u16, b: u16) -> u16 {
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

fn plain(format: Format) -> Inst {
    let mut i = Inst::new(0, 1, Operand2::Reg(2));
    i.format = format;
    i
}

/// All 2^32 (x, y) pairs through `eval_batch`: input k of a batch holds x in both lanes of a
/// and (y, y+1) in b, so 2^31 inputs cover every pair. apfloat is asked only for the 2^30
/// magnitude pairs (|x|, |y|): round to nearest even is symmetric in sign, so the product of
/// signed operands is the magnitudes' product with sign x ^ y (NaN: the NaN policy, from the
/// signed operands). Two threads split |x|; each checks x and -x against one apfloat row.
fn sweep(f: Fmt) {
    let p = *Policy::current();
    let inst = plain(if f == Fmt::F16 { Format::F16 } else { Format::Bf16 });
    // every magnitude row at the full level (ci/test.sh); a sample of them in a plain cargo test
    let rows = hmul2_harness::testlevel::rows(&format!("{f:?} pairs"), 1 << 15, 256);
    let t0 = Instant::now();
    let bad = std::sync::atomic::AtomicU64::new(0);
    let checked = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..2u32 {
            let (bad, checked, rows) = (&bad, &checked, &rows);
            s.spawn(move || {
                let mut xs = vec![Inputs::default(); 1 << 15];
                let mut out = vec![0u32; 1 << 15];
                let mut row = vec![0u16; 1 << 15];
                let mut n = 0u64;
                for &mag in rows.iter().skip(t as usize).step_by(2) {
                    for (y, r) in row.iter_mut().enumerate() {
                        *r = f.mul(mag as u16, y as u16);
                    }
                    for x in [mag, mag | 0x8000] {
                        for (k, i) in xs.iter_mut().enumerate() {
                            let y = 2 * k as u32;
                            *i = Inputs { a: x | x << 16, b: y | (y + 1) << 16, d: 0, pred: 0, c: 0 };
                        }
                        eval_batch(&inst, &xs, &mut out).expect("plain instruction is defined");
                        for (k, &o) in out.iter().enumerate() {
                            for l in 0..2u32 {
                                let y = (2 * k as u32 + l) as u16;
                                let got = (o >> (16 * l)) as u16;
                                let m = row[(y & 0x7fff) as usize];
                                let want = if f.is_nan(m) { expected_nan(&p, f, x as u16, y) } else { m ^ ((x as u16 ^ y) & 0x8000) };
                                n += 1;
                                if got != want {
                                    let e = bad.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                    if e < 20 {
                                        eprintln!("{f:?}: {x:#06x} x {y:#06x}: reference {got:#06x}, apfloat {want:#06x}");
                                    }
                                }
                            }
                        }
                    }
                }
                checked.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    let pairs = (rows.len() as u64) << 17;
    println!("{f:?}: {pairs} pairs against rustc_apfloat in {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(checked.into_inner(), pairs, "every pair of the rows checked once");
    if hmul2_harness::testlevel::is_full() {
        assert_eq!(pairs, 1u64 << 32, "the full level checks all 2^32 pairs");
    }
    assert_eq!(bad.into_inner(), 0, "{f:?}: mismatches against rustc_apfloat (first ones above)");
}

#[test]
fn exhaustive_f16_against_apfloat() {
    sweep(Fmt::F16);
}

#[test]
fn exhaustive_bf16_against_apfloat() {
    sweep(Fmt::Bf16);
}

/// Source modifiers written out: half select, then |x|, then negation (or the other order).
fn modded(p: &Policy, word: u32, m: SrcMods, lane: u32) -> u16 {
    let half = match m.swizzle {
        Swizzle::H1H0 => lane,
        Swizzle::H0H0 => 0,
        Swizzle::H1H1 => 1,
        Swizzle::Invalid1 | Swizzle::Code4 | Swizzle::Code5 | Swizzle::Code6 | Swizzle::Code7 => {
            unreachable!("targeted cases use HMUL2's defined half selects")
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

/// The expected lane value, from apfloat and the policy's flags, step by step.
fn expect_lane(p: &Policy, f: Fmt, flush: Flush, sat: bool, a: u16, b: u16) -> u16 {
    let on = f == Fmt::F16 || p.flush_bf16;
    let ftz = on && (flush == Flush::Ftz || (flush == Flush::Fmz && p.fmz_flushes));
    let fmz = on && flush == Flush::Fmz && p.fmz != FmzZero::Ieee;
    let (a, b) = if ftz && p.ftz_inputs { (if f.is_sub(a) { a & 0x8000 } else { a }, if f.is_sub(b) { b & 0x8000 } else { b }) } else { (a, b) };
    let sign = (a ^ b) & 0x8000;
    let mut r;
    if fmz && (a & 0x7fff == 0 || b & 0x7fff == 0) {
        r = if p.fmz == FmzZero::XorSign { sign } else { 0 };
    } else {
        r = f.mul(a, b);
        if f.is_nan(r) {
            r = expected_nan(p, f, a, b);
        } else if ftz {
            let tiny = if p.ftz_after_rounding { f.is_sub(r) } else { f.exact_below_min_normal(a, b) };
            if tiny {
                r = sign;
            }
        }
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

/// Every special value crossed with every special value (packed two per word so lanes and
/// half selects see different values), times every defined modifier combination, both
/// formats, guard true and false.
#[test]
fn targeted_specials_times_every_modifier() {
    let p = *Policy::current();
    let mut checked = 0u64;
    let mods: Vec<SrcMods> = [false, true]
        .into_iter()
        .flat_map(|neg| {
            [false, true]
                .into_iter()
                .flat_map(move |abs| [Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1].into_iter().map(move |swizzle| SrcMods { neg, abs, swizzle }))
        })
        .collect();
    for (f, format, specials) in [(Fmt::F16, Format::F16, f16_specials()), (Fmt::Bf16, Format::Bf16, bf16_specials())] {
        let n = specials.len();
        // word j: specials[j] in H0, specials[(j*7+3) % n] in H1
        let word = |j: usize| specials[j] as u32 | (specials[(j * 7 + 3) % n] as u32) << 16;
        for am in &mods {
            for bm in &mods {
                for flush in [Flush::None, Flush::Fmz, Flush::Ftz] {
                    for sat in [false, true] {
                        for guard in [false, true] {
                            let mut inst = plain(format);
                            inst.a_mods = *am;
                            inst.b_mods = *bm;
                            inst.flush = flush;
                            inst.sat = sat;
                            inst.pred = Pred { index: 2, negated: !guard };
                            for i in 0..n {
                                for j in 0..n {
                                    let x = Inputs { a: word(i), b: word(j), d: 0xdead_beef, pred: 0b100, c: 0 };
                                    let want = if guard {
                                        (0..2).fold(0u32, |acc, l| {
                                            let a = modded(&p, x.a, *am, l);
                                            let b = modded(&p, x.b, *bm, l);
                                            acc | (expect_lane(&p, f, flush, sat, a, b) as u32) << (16 * l)
                                        })
                                    } else {
                                        0xdead_beef
                                    };
                                    assert_eq!(eval(&inst, &x), Ok(want), "{inst:?} {x:x?}");
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
    assert!(checked > 1_000_000);
}

/// The instruction-level rules the targeted sweep does not vary: RZ reads zero, a
/// destination RZ reads zero afterwards, the immediate's lanes, PT and negated PT.
#[test]
fn zero_registers_immediates_and_pt() {
    let x = Inputs { a: 0x4000_3c00, b: 0x4400_4200, d: 0x1234_5678, pred: 0, c: 0 };
    let mut i = Inst::new(0, RZ, Operand2::Reg(2));
    assert_eq!(eval(&i, &x), Ok(0), "RZ x (2, 3) = +0 in both lanes");
    i.a = 1;
    i.b = Operand2::Reg(RZ);
    assert_eq!(eval(&i, &x), Ok(0));
    i.b = Operand2::Ur(hmul2_harness::isa::URZ);
    assert_eq!(eval(&i, &x), Ok(0));
    i.b = Operand2::Reg(2);
    assert_eq!(eval(&i, &x), Ok(0x4800_4200), "(1, 2) x (3, 4) = (3, 8)");
    i.dst = RZ;
    assert_eq!(eval(&i, &x), Ok(0));
    i.dst = 0;
    i.pred = Pred { index: 7, negated: true };
    assert_eq!(eval(&i, &x), Ok(0x1234_5678), "@!PT never writes");
    // immediate: bits 32..63 hold the packed operand; second (bits 32..47) is lane 0
    let i = Inst::new(0, 1, Operand2::Imm { first: 0x4000, second: 0x4200 });
    let want = if Policy::current().imm_second_is_lane0 { 0x4400_4200 } else { 0x4200_4400 };
    assert_eq!(eval(&i, &x), Ok(want), "(1, 2) x (3 in lane 0, 2 in lane 1)");
}
