//! HSET2, HSETP2 and HMNMX2 of the reference (`reference::compare`, `reference::minmax`)
//! against an independent oracle, `rustc_apfloat`'s IEEE comparison (`partial_cmp`, sharing
//! no code with the reference): all 2^32 lane pairs of FP16 and of BF16 through every one of
//! the 16 comparisons (HSET2's mask result) and through min and max with and without
//! `.NAN` and `.XORSIGN`; plus TestFloat-style special values crossed with every source
//! modifier, `.FTZ`, every boolean operation and predicate value, `.BF`, `.H_AND`, and every
//! option of every knob these instructions read, against expectations written out here
//! (never calls of the code under test).
//!
//! The sweep runs whole at the full test level (`HMUL2_TEST_LEVEL=full`, ci/test.sh); a
//! plain `cargo test` checks a sample of operand-1 rows, each whole, and says which (with
//! the seed that repeats it, `HMUL2_SEED`), and the rows of the special values.

use harness_reference::isa::{Format, SrcMods, Swizzle};
use harness_reference::reference::compare::{hset2, hset2_batch, hsetp2, BoolOp, Cmp, CmpOp, Hset2Op, Hsetp2Op};
use harness_reference::reference::minmax::{hmnmx2, hmnmx2_batch, MinMaxOp};
use harness_reference::reference::policy::{parse_table, FlushLanes, HAnd, MinMaxNan, MinMaxZero, XorSignFrom, KNOBS, PENDING, SEMANTICS_JSON};
use harness_reference::reference::{bf16_specials, f16_specials, Policy, Undefined};
use rustc_apfloat::ieee::{BFloat, Half};
use rustc_apfloat::Float;
use std::cmp::Ordering;
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
    /// apfloat's IEEE relation of two lane values (None: unordered).
    fn ord(self, a: u16, b: u16) -> Option<Ordering> {
        match self {
            Fmt::F16 => Half::from_bits(a as u128).partial_cmp(&Half::from_bits(b as u128)),
            Fmt::Bf16 => BFloat::from_bits(a as u128).partial_cmp(&BFloat::from_bits(b as u128)),
        }
    }
}

/// What each comparison means, from its name (IEEE 754's predicates; a name ending in U is
/// also true unordered).
fn holds(c: Cmp, ord: Option<Ordering>) -> bool {
    use Ordering::*;
    let name = c.name();
    let (base, unordered) = match name {
        "F" | "T" | "NUM" | "NAN" => (name, false),
        n if n.ends_with('U') => (&n[..n.len() - 1], true),
        n => (n, false),
    };
    match (base, ord) {
        ("T", _) => true,
        ("F", _) => false,
        ("NUM", o) => o.is_some(),
        ("NAN", o) => o.is_none(),
        (_, None) => unordered,
        ("LT", Some(o)) => o == Less,
        ("EQ", Some(o)) => o == Equal,
        ("LE", Some(o)) => o != Greater,
        ("GT", Some(o)) => o == Greater,
        ("NE", Some(o)) => o != Equal,
        ("GE", Some(o)) => o != Less,
        (n, _) => panic!("no comparison {n}"),
    }
}

/// The NaN a min/max rule gives for inputs `x`, `y` (one of them NaN).
fn nan_of(f: Fmt, rule: MinMaxNan, x: u16, y: u16) -> u16 {
    let first = if f.is_nan(x) { x } else { y };
    match rule {
        MinMaxNan::Canonical => 0x7fff,
        MinMaxNan::FirstQuieted => first | f.quiet(),
        MinMaxNan::FirstAsIs => first,
    }
}

/// Min or max of two inputs (after modifiers and flushing), step by step: the PTX ISA's
/// minNum / maxNum with apfloat's ordering, the policy's NaNs and zeros, then .XORSIGN with
/// `sign` (the sign bit the policy takes).
#[allow(clippy::too_many_arguments)]
fn expect_minmax(p: &Policy, f: Fmt, min: bool, nan: bool, xorsign: bool, x: u16, y: u16, sign: u16, ord: Option<Ordering>) -> u16 {
    let r = match ord {
        None if nan => nan_of(f, p.mnmx_nan_modifier, x, y),
        None if f.is_nan(x) && f.is_nan(y) => nan_of(f, p.mnmx_nan, x, y),
        None if f.is_nan(x) => y,
        None => x,
        Some(Ordering::Equal) if x != y => match p.mnmx_zero {
            // x and y are +0 and -0
            MinMaxZero::MinusBelowPlus => {
                if (x == 0x8000) == min {
                    x
                } else {
                    y
                }
            }
            MinMaxZero::Operand1 => x,
            MinMaxZero::Operand2 => y,
        },
        Some(Ordering::Less) => {
            if min {
                x
            } else {
                y
            }
        }
        Some(Ordering::Greater) => {
            if min {
                y
            } else {
                x
            }
        }
        Some(Ordering::Equal) => x,
    };
    if xorsign && !(f.is_nan(r) && p.mnmx_xorsign_nan_keeps) {
        (r & 0x7fff) | sign
    } else {
        r
    }
}

/// Compares a row's results (lane 0 of word i: operand 2 = 2i, lane 1: 2i + 1) with
/// `want` per lane; counts mismatches into `bad` (printing the first) and returns the lanes
/// checked.
fn check(f: Fmt, x: u16, bad: &AtomicU64, out: &[u32], want: impl Fn(u16) -> u16, what: impl Fn() -> String) -> u64 {
    for (i, &o) in out.iter().enumerate() {
        let (y0, y1) = ((2 * i) as u16, (2 * i + 1) as u16);
        let w = want(y0) as u32 | (want(y1) as u32) << 16;
        if o != w {
            for (l, y) in [(0, y0), (1, y1)] {
                let (got, want) = ((o >> (16 * l)) as u16, (w >> (16 * l)) as u16);
                if got != want && bad.fetch_add(1, Relaxed) < 20 {
                    eprintln!("{f:?} {}: a={x:#06x} b={y:#06x}: reference {got:#06x}, expected {want:#06x}", what());
                }
            }
        }
    }
    2 * out.len() as u64
}

/// Every row (operand-1 value) at the full level, a printed sample otherwise; two threads.
fn sweep(f: Fmt) {
    let p = *Policy::current();
    let t0 = Instant::now();
    let mut rows = harness_reference::testlevel::rows(&format!("{f:?} comparison and min/max rows"), 1 << 16, 256);
    // the special values' rows always (zeros, subnormals, infinities, NaNs: where the rules are)
    let specials = match f {
        Fmt::F16 => f16_specials(),
        Fmt::Bf16 => bf16_specials(),
    };
    rows.extend(specials.iter().map(|&v| v as u32));
    rows.sort_unstable();
    rows.dedup();
    let (bad, checked) = (AtomicU64::new(0), AtomicU64::new(0));
    let minmax: Vec<MinMaxOp> = [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .map(|(nan, xorsign)| MinMaxOp { format: f.format(), nan, xorsign, ..Default::default() })
        .collect();
    std::thread::scope(|s| {
        for t in 0..2usize {
            let (bad, checked, rows, p, minmax) = (&bad, &checked, &rows, &p, &minmax);
            s.spawn(move || {
                let ys: Vec<u32> = (0..1u32 << 15).map(|i| (2 * i) | (2 * i + 1) << 16).collect();
                let c = vec![true; ys.len()];
                let mut out = vec![0u32; ys.len()];
                for &x in rows.iter().skip(t).step_by(2) {
                    let x = x as u16;
                    let xs = vec![x as u32 * 0x1_0001; ys.len()];
                    // apfloat's relation of (x, y) for every y: 0 less, 1 equal, 2 greater, 3 unordered
                    let rel = |o: Option<Ordering>| match o {
                        Some(Ordering::Less) => 0usize,
                        Some(Ordering::Equal) => 1,
                        Some(Ordering::Greater) => 2,
                        None => 3,
                    };
                    let ords: Vec<u8> = (0..=u16::MAX).map(|y| rel(f.ord(x, y)) as u8).collect();
                    let back = [Some(Ordering::Less), Some(Ordering::Equal), Some(Ordering::Greater), None];
                    let mut n = 0u64;
                    for cmp in Cmp::ALL {
                        let op = Hset2Op { cmp: CmpOp { format: f.format(), cmp, bool_op: BoolOp::And, ..Default::default() }, bf: false };
                        hset2_batch(&op, p, &xs, &ys, &c, &mut out).expect("HSET2 without INVALIDn is defined");
                        let want = back.map(|o| if holds(cmp, o) { 0xffffu16 } else { 0 });
                        n += check(f, x, bad, &out, |y| want[ords[y as usize] as usize], || format!("HSET2.{}", cmp.name()));
                    }
                    for op in minmax {
                        for min in [true, false] {
                            hmnmx2_batch(op, p, &xs, &ys, min, &mut out).expect("HMNMX2 without INVALIDn is defined");
                            let want = |y: u16| expect_minmax(p, f, min, op.nan, op.xorsign, x, y, (x ^ y) & 0x8000, back[ords[y as usize] as usize]);
                            n += check(f, x, bad, &out, want, || format!("HMNMX2 {} {op:?}", if min { "min" } else { "max" }));
                        }
                    }
                    checked.fetch_add(n, Relaxed);
                }
            });
        }
    });
    let per_variant = rows.len() as u64 * (1 << 16);
    let variants = Cmp::ALL.len() as u64 + 2 * minmax.len() as u64;
    println!(
        "{f:?}: {per_variant} pairs x {variants} operations (16 comparisons, min and max x {{plain, .NAN, .XORSIGN, .NAN.XORSIGN}}) against rustc_apfloat in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(checked.into_inner(), per_variant * variants, "every pair of the rows checked once per operation");
    if harness_reference::testlevel::is_full() {
        assert_eq!(per_variant, 1u64 << 32, "the full level checks all 2^32 pairs");
    }
    assert_eq!(bad.into_inner(), 0, "{f:?}: mismatches against rustc_apfloat (the first ones above)");
}

#[test]
fn exhaustive_f16_compare_and_minmax_against_apfloat() {
    sweep(Fmt::F16);
}

#[test]
fn exhaustive_bf16_compare_and_minmax_against_apfloat() {
    sweep(Fmt::Bf16);
}

/// A source half after half select and the modifiers, in the policy's order.
fn modded(p: &Policy, word: u32, m: SrcMods, lane: u32) -> (u16, u16) {
    let half = match m.swizzle {
        Swizzle::H1H0 => lane,
        Swizzle::H0H0 => 0,
        Swizzle::H1H1 => 1,
        s => unreachable!("targeted cases use defined half selects, not {s:?}"),
    };
    let raw = (word >> (16 * half)) as u16;
    let mut v = raw;
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
    (raw, v)
}

fn flushed(f: Fmt, scope: FlushLanes, ftz: bool, v: u16) -> u16 {
    let on = ftz
        && match scope {
            FlushLanes::Both => true,
            FlushLanes::F16Only => f == Fmt::F16,
            FlushLanes::Neither => false,
        };
    if on && f.is_sub(v) {
        v & 0x8000
    } else {
        v
    }
}

fn combined(op: BoolOp, t: bool, c: bool) -> bool {
    match op.name() {
        "AND" => t && c,
        "OR" => t || c,
        "XOR" => t != c,
        n => panic!("no boolean operation {n}"),
    }
}

/// Every policy the targeted tests run under: the committed one, and each option of each
/// knob these instructions read with the others committed.
fn policies() -> Vec<Policy> {
    let mut out = vec![*Policy::current()];
    let ours = [
        "cmp-ftz",
        "hset2-bf-bf16",
        "hsetp2-h-and",
        "mnmx-ftz",
        "mnmx-nan",
        "mnmx-nan-modifier",
        "mnmx-signed-zero",
        "mnmx-xorsign-sign",
        "mnmx-xorsign-nan",
        "abs-neg-order",
    ];
    for id in ours {
        let k = KNOBS.iter().position(|(i, _)| *i == id).unwrap_or_else(|| panic!("{id}: no such knob"));
        for o in 0..KNOBS[k].1.len() {
            let mut p = *Policy::current();
            p.set(k, o);
            out.push(p);
        }
    }
    for (id, _) in KNOBS.iter().filter(|(id, _)| id.starts_with("cmp-") || id.starts_with("hset") || id.starts_with("mnmx-")) {
        assert!(ours.contains(id), "{id}: a knob of these instructions this test does not exercise");
    }
    out
}

fn mods() -> Vec<SrcMods> {
    [false, true]
        .into_iter()
        .flat_map(|neg| {
            [false, true]
                .into_iter()
                .flat_map(move |abs| [Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1].into_iter().map(move |swizzle| SrcMods { neg, abs, swizzle }))
        })
        .collect()
}

/// Special values crossed (two per word, so lanes and half selects see different values)
/// with every modifier (operand 2's rotating with operand 1's), every comparison, .FTZ, every boolean operation and predicate value, .BF and .H_AND,
/// both formats, under every option of every knob: HSET2 and HSETP2.
#[test]
fn targeted_comparisons_times_every_modifier_and_option() {
    let mut checked = 0u64;
    let mut bad = 0u64;
    let mods = mods();
    for p in policies() {
        for f in [Fmt::F16, Fmt::Bf16] {
            let sp = match f {
                Fmt::F16 => f16_specials(),
                Fmt::Bf16 => bf16_specials(),
            };
            let n = sp.len();
            let word = |j: usize| sp[j] as u32 | (sp[(j * 7 + 3) % n] as u32) << 16;
            for (mi, am) in mods.iter().enumerate() {
                // operand 2's modifiers rotate with operand 1's to keep the count down
                let bm = mods[(mi * 5 + 1) % mods.len()];
                // four comparisons per modifier pair, every comparison with three pairs
                for cmp in Cmp::ALL.into_iter().filter(|c| (c.code() as usize + mi).is_multiple_of(4)) {
                    for bool_op in [BoolOp::And, BoolOp::Or, BoolOp::Xor] {
                        for ftz in [false, true] {
                            let op = CmpOp { format: f.format(), cmp, bool_op, ftz, a_mods: *am, b_mods: bm };
                            for i in 0..n {
                                for j in 0..n {
                                    let (a, b) = (word(i), word(j));
                                    let t: Vec<bool> = (0..2)
                                        .map(|l| {
                                            let x = flushed(f, p.cmp_ftz, ftz, modded(&p, a, *am, l).1);
                                            let y = flushed(f, p.cmp_ftz, ftz, modded(&p, b, bm, l).1);
                                            holds(cmp, f.ord(x, y))
                                        })
                                        .collect();
                                    for c in [false, true] {
                                        for bf in [false, true] {
                                            let one = match (bf, f == Fmt::Bf16 && p.hset2_bf_bf16_one) {
                                                (false, _) => 0xffff,
                                                (true, true) => 0x3f80,
                                                (true, false) => 0x3c00,
                                            };
                                            let want = (0..2).fold(0u32, |acc, l| acc | if combined(bool_op, t[l], c) { one << (16 * l) } else { 0 });
                                            let got = hset2(&Hset2Op { cmp: op, bf }, &p, a, b, c);
                                            if got != Ok(want) {
                                                bad += 1;
                                                if bad <= 20 {
                                                    eprintln!("HSET2 {op:?} bf={bf} c={c}: a={a:#010x} b={b:#010x}: expected {want:#010x}, reference {got:x?}");
                                                }
                                            }
                                        }
                                        for h_and in [false, true] {
                                            let want = if !h_and {
                                                (combined(bool_op, t[0], c), combined(bool_op, t[1], c))
                                            } else {
                                                let both = t[0] && t[1];
                                                let first = combined(bool_op, both, c);
                                                match p.hsetp2_h_and {
                                                    HAnd::Complement => (first, combined(bool_op, !both, c)),
                                                    HAnd::Same => (first, first),
                                                    HAnd::NotFirst => (first, !first),
                                                }
                                            };
                                            let got = hsetp2(&Hsetp2Op { cmp: op, h_and }, &p, a, b, c);
                                            if got != Ok(want) {
                                                bad += 1;
                                                if bad <= 20 {
                                                    eprintln!(
                                                        "HSETP2 {op:?} h_and={h_and} c={c}: a={a:#010x} b={b:#010x}: expected {want:?}, reference {got:?}"
                                                    );
                                                }
                                            }
                                        }
                                        checked += 6;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    println!("targeted comparisons: {checked} cases");
    assert_eq!(bad, 0, "mismatches (the first ones above)");
    assert!(checked > 10_000_000);
}

/// The same for HMNMX2: min and max, .NAN, .XORSIGN, .FTZ, every modifier.
#[test]
fn targeted_minmax_times_every_modifier_and_option() {
    let mut checked = 0u64;
    let mut bad = 0u64;
    let mods = mods();
    for p in policies() {
        for f in [Fmt::F16, Fmt::Bf16] {
            let sp = match f {
                Fmt::F16 => f16_specials(),
                Fmt::Bf16 => bf16_specials(),
            };
            let n = sp.len();
            let word = |j: usize| sp[j] as u32 | (sp[(j * 7 + 3) % n] as u32) << 16;
            for am in &mods {
                for bm in &mods {
                    for (ftz, nan, xorsign) in (0..8).map(|k| (k & 1 != 0, k & 2 != 0, k & 4 != 0)) {
                        let op = MinMaxOp { format: f.format(), ftz, nan, xorsign, a_mods: *am, b_mods: *bm };
                        for i in 0..n {
                            for j in 0..n {
                                let (a, b) = (word(i), word(j));
                                for min in [true, false] {
                                    let want = (0..2).fold(0u32, |acc, l| {
                                        let ((ra, x), (rb, y)) = (modded(&p, a, *am, l), modded(&p, b, *bm, l));
                                        let (x, y) = (flushed(f, p.mnmx_ftz, ftz, x), flushed(f, p.mnmx_ftz, ftz, y));
                                        let sign = match p.mnmx_xorsign_from {
                                            XorSignFrom::Sources => (ra ^ rb) & 0x8000,
                                            XorSignFrom::Modified => (x ^ y) & 0x8000,
                                        };
                                        acc | (expect_minmax(&p, f, min, nan, xorsign, x, y, sign, f.ord(x, y)) as u32) << (16 * l)
                                    });
                                    let got = hmnmx2(&op, &p, a, b, min);
                                    if got != Ok(want) {
                                        bad += 1;
                                        if bad <= 20 {
                                            eprintln!("HMNMX2 {op:?} min={min}: a={a:#010x} b={b:#010x}: expected {want:#010x}, reference {got:x?}");
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
    println!("targeted min/max: {checked} cases");
    assert_eq!(bad, 0, "mismatches (the first ones above)");
    assert!(checked > 10_000_000);
}

/// Each knob these instructions read changes some result on the special values: no option
/// is dead code, each is told apart from the others (what a hardware vector must do to
/// settle it), and the instructions whose results its options change are exactly those its
/// entry's `pending_instructions` names (as `semantics_scope` checks `instructions`).
#[test]
fn every_option_of_every_knob_changes_some_result() {
    let table = parse_table(SEMANTICS_JSON).expect("semantics.json parses");
    let ours =
        ["cmp-ftz", "hset2-bf-bf16", "hsetp2-h-and", "mnmx-ftz", "mnmx-nan", "mnmx-nan-modifier", "mnmx-signed-zero", "mnmx-xorsign-sign", "mnmx-xorsign-nan"];
    let abs = SrcMods { abs: true, ..Default::default() };
    for id in ours {
        let k = KNOBS.iter().position(|(i, _)| *i == id).unwrap();
        // per option: the results of HSET2, HSETP2 and HMNMX2 (PENDING's order)
        let mut seen: Vec<[Vec<Result<u32, Undefined>>; 3]> = Vec::new();
        for o in 0..KNOBS[k].1.len() {
            let mut p = *Policy::current();
            p.set(k, o);
            let mut r: [Vec<Result<u32, Undefined>>; 3] = Default::default();
            for (f, sp) in [(Format::F16, f16_specials()), (Format::Bf16, bf16_specials())] {
                for &x in sp {
                    for &y in sp {
                        let (a, b) = (x as u32 | (y as u32) << 16, y as u32 | (x as u32) << 16);
                        for cmp in [Cmp::Eq, Cmp::Lt] {
                            for ftz in [false, true] {
                                for (h_and, c) in [(false, true), (true, true), (true, false)] {
                                    let op = Hsetp2Op { cmp: CmpOp { format: f, cmp, ftz, ..Default::default() }, h_and };
                                    r[1].push(hsetp2(&op, &p, a, b, c).map(|(x, y)| x as u32 | (y as u32) << 1));
                                }
                                for bf in [false, true] {
                                    r[0].push(hset2(&Hset2Op { cmp: CmpOp { format: f, cmp, ftz, ..Default::default() }, bf }, &p, a, b, true));
                                }
                            }
                        }
                        for (ftz, nan, xorsign) in (0..8).map(|k| (k & 1 != 0, k & 2 != 0, k & 4 != 0)) {
                            for m in [SrcMods::default(), abs] {
                                let op = MinMaxOp { format: f, ftz, nan, xorsign, a_mods: m, b_mods: m };
                                r[2].push(hmnmx2(&op, &p, a, b, true));
                                r[2].push(hmnmx2(&op, &p, a, b, false));
                            }
                        }
                    }
                }
            }
            assert!(!seen.contains(&r), "{id}: option {o} gives the same results as another option on every special pair");
            seen.push(r);
        }
        let changed: Vec<&str> = PENDING.iter().enumerate().filter(|(i, _)| seen.iter().any(|r| r[*i] != seen[0][*i])).map(|(_, n)| *n).collect();
        let e = table.iter().find(|e| e.id == id).unwrap_or_else(|| panic!("{id}: no entry"));
        let mut said: Vec<&str> = e.pending_instructions.iter().map(|s| s.as_str()).collect();
        said.sort_unstable();
        let mut changed_sorted = changed.clone();
        changed_sorted.sort_unstable();
        assert_eq!(said, changed_sorted, "{id}: the entry names {said:?}, its options change {changed:?}");
    }
}
