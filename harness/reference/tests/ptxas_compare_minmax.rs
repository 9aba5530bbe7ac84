//! What NVIDIA's compiler makes of PTX min/max/set/setp on f16x2 and bf16x2, and the
//! reference (`reference::compare`, `reference::minmax`) against the PTX ISA's definition of
//! each, on the SASS ptxas chose.
//!
//! The corpus is `kernels/corpus/compare_minmax.{ptx,sass}`, made by
//! `kernels/corpus/compare_minmax.sh` (one kernel per PTX operation; the listing is each
//! kernel's SASS as cuobjdump prints it). [`the_corpus_is_what_ptxas_makes_of_it`] runs the
//! script again with the pinned ptxas 13.0 and cuobjdump and fails if either file differs
//! (or a tool is missing: it never skips). [`the_reference_computes_the_ptx_isa_on_ptxas_sass`]
//! reads each kernel's HSET2, HSETP2 or HMNMX2 through the isa's parser (`isa::parse`: the
//! typed instruction, its comparison, boolean operation, predicate source, selector and
//! predicate results), maps its registers and predicates to the PTX operands through the
//! kernel's loads, ISETP and SELs, computes it through the reference's operation table
//! (`eval_with` for a register result, `preds_after_with` for HSETP2's predicates, the
//! predicate source read from the input's predicate file), and compares that with the PTX
//! ISA's definition,
//! written out here, on every pair of special values (NaNs with payloads, zeros of both
//! signs, subnormals, infinities) and both predicate values. Where the PTX ISA leaves a
//! result open (the NaN of min/max without `.NaN`, which zero `min(+0, -0)` is), any NaN or
//! any zero is accepted, and the test says how often.

use half::{bf16, f16};
use harness_isa::nvdisasm::find_tool;
use harness_reference::inputs::Inputs;
use harness_reference::isa::{parse, Inst, Op, Operand2, PT};
use harness_reference::reference::policy::{parse_table, KNOBS, SEMANTICS_JSON};
use harness_reference::reference::{bf16_specials, eval_with, f16_specials, preds_after_with, Policy};
use std::path::PathBuf;
use std::process::Command;

const THIS_FILE: &str = "harness/reference/tests/ptxas_compare_minmax.rs";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_corpus_is_what_ptxas_makes_of_it() {
    let ptxas = find_tool("ptxas").expect("ptxas is needed for this check (bash ci/install-tools.sh)");
    let cuobjdump = find_tool("cuobjdump").expect("cuobjdump is needed for this check (bash ci/install-tools.sh)");
    let dir = std::env::temp_dir().join(format!("hmul2-corpus-compare-minmax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new("bash")
        .arg(root().join("kernels/corpus/compare_minmax.sh"))
        .env("HMUL2_PTXAS", &ptxas)
        .env("HMUL2_CUOBJDUMP", &cuobjdump)
        .env("HMUL2_CORPUS_OUT", &dir)
        .output()
        .expect("run kernels/corpus/compare_minmax.sh");
    assert!(out.status.success(), "compare_minmax.sh failed: {}", String::from_utf8_lossy(&out.stderr));
    for name in ["compare_minmax.ptx", "compare_minmax.sass"] {
        let made = std::fs::read_to_string(dir.join(name)).unwrap();
        let committed = std::fs::read_to_string(root().join("kernels/corpus").join(name)).unwrap();
        assert!(made == committed, "kernels/corpus/{name} is not what the script and ptxas make now: run `bash kernels/corpus/compare_minmax.sh`");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A PTX operation of the corpus, parsed from its text.
#[derive(Debug)]
enum Ptx {
    MinMax {
        min: bool,
        nan: bool,
        xorsign_abs: bool,
        ftz: bool,
        bf16: bool,
    },
    /// `set` (`pred: false`, with the destination's true value) or `setp`.
    Set {
        cmp: String,
        bool_op: Option<String>,
        c_negated: bool,
        ftz: bool,
        bf16: bool,
        pred: bool,
        one: u16,
    },
}

fn parse_ptx(text: &str) -> Ptx {
    let (head, operands) = text.split_once(' ').unwrap_or_else(|| panic!("{text}: no operands"));
    let parts: Vec<&str> = head.split('.').collect();
    let bf16 = head.ends_with(".bf16x2");
    let ftz = parts.contains(&"ftz");
    match parts[0] {
        "min" | "max" => Ptx::MinMax { min: parts[0] == "min", nan: parts.contains(&"NaN"), xorsign_abs: parts.contains(&"xorsign"), ftz, bf16 },
        "set" | "setp" => {
            let bool_op = parts.iter().find(|p| ["and", "or", "xor"].contains(p)).map(|s| s.to_string());
            let pred = parts[0] == "setp";
            // set.CMP[.BOOL][.ftz].DTYPE.STYPE: the destination type is the second to last
            let one = match (pred, parts[parts.len() - 2]) {
                (true, _) => 0,
                (false, "f16x2") => 0x3c00,
                (false, "bf16x2") => 0x3f80,
                (false, "u32") => 0xffff,
                (false, d) => panic!("{text}: destination type {d}"),
            };
            Ptx::Set { cmp: parts[1].to_string(), bool_op, c_negated: operands.contains("!%p3"), ftz, bf16, pred, one }
        }
        o => panic!("{text}: not an operation of the corpus ({o})"),
    }
}

/// What the PTX ISA defines for one lane: a value, or a class it leaves open.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Want {
    Exact(u16),
    AnyNan,
    AnyZero,
}

fn is_nan(bf: bool, v: u16) -> bool {
    v & 0x7fff > if bf { 0x7f80 } else { 0x7c00 }
}

fn value(bf: bool, v: u16) -> f32 {
    if bf {
        bf16::from_bits(v).to_f32()
    } else {
        f16::from_bits(v).to_f32()
    }
}

/// `.ftz`: a subnormal input becomes zero of its sign (PTX allows it on f16 types only).
fn ftz(bf: bool, on: bool, v: u16) -> u16 {
    let exp = if bf { 0x7f80 } else { 0x7c00 };
    if on && v & exp == 0 {
        v & 0x8000
    } else {
        v
    }
}

/// The PTX ISA's comparison, through f32 (exact for both formats).
fn ptx_compare(cmp: &str, x: f32, y: f32) -> bool {
    let un = x.is_nan() || y.is_nan();
    match cmp {
        "eq" => x == y,
        "ne" => !un && x != y,
        "lt" => x < y,
        "le" => x <= y,
        "gt" => x > y,
        "ge" => x >= y,
        "equ" => un || x == y,
        "neu" => x != y,
        "ltu" => un || x < y,
        "leu" => un || x <= y,
        "gtu" => un || x > y,
        "geu" => un || x >= y,
        "num" => !un,
        "nan" => un,
        c => panic!("no PTX comparison {c}"),
    }
}

fn ptx_bool(op: &Option<String>, t: bool, c: bool) -> bool {
    match op.as_deref() {
        None => t,
        Some("and") => t && c,
        Some("or") => t || c,
        Some("xor") => t != c,
        Some(o) => panic!("no PTX boolean operation {o}"),
    }
}

/// min/max of one lane as the PTX ISA's pseudo-code defines it.
fn ptx_minmax(min: bool, nan: bool, xorsign_abs: bool, bf: bool, a: u16, b: u16) -> Want {
    let sign = (a ^ b) & 0x8000;
    let (a, b) = if xorsign_abs { (a & 0x7fff, b & 0x7fff) } else { (a, b) };
    let d = if is_nan(bf, a) && is_nan(bf, b) {
        return Want::AnyNan;
    } else if nan && (is_nan(bf, a) || is_nan(bf, b)) {
        // "the result is canonical NaN"; .xorsign and .abs are ignored for a NaN result
        return Want::Exact(0x7fff);
    } else if is_nan(bf, a) {
        b
    } else if is_nan(bf, b) {
        a
    } else if a & 0x7fff == 0 && b & 0x7fff == 0 && a != b {
        // `(a < b) ? a : b` does not order -0 and +0 and no sentence says which
        return Want::AnyZero;
    } else {
        let (x, y) = (value(bf, a), value(bf, b));
        if (x < y) == min {
            a
        } else {
            b
        }
    };
    Want::Exact(if xorsign_abs { (d & 0x7fff) | sign } else { d })
}

/// The SASS of one kernel, read: the instruction under test with its typed parameters,
/// operands mapped to the PTX's.
#[derive(Debug)]
struct Kernel {
    name: String,
    ptx: String,
    sass_text: String,
    /// The instruction as the isa reads ptxas's text.
    inst: Inst,
    /// The predicate the kernel's ISETP sets from the PTX's %p3 (the word at +8), if any.
    c_pred: Option<u8>,
    /// HSETP2: the predicates the kernel stores as the PTX's first and second results
    /// (through its SELs).
    results: Option<(u8, u8)>,
}

/// A predicate operand's index (`P3`, `PT`).
fn pred_index(text: &str) -> u8 {
    match text.trim_start_matches('!') {
        "PT" => PT,
        p => p.strip_prefix('P').and_then(|n| n.parse().ok()).filter(|&n| n < PT).unwrap_or_else(|| panic!("{text}: not a predicate")),
    }
}

fn kernels() -> Vec<Kernel> {
    let text = std::fs::read_to_string(root().join("kernels/corpus/compare_minmax.sass")).expect("kernels/corpus/compare_minmax.sass");
    let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        let mut f = line.split('\t');
        let (k, ptx, sass) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap_or_else(|| panic!("{line}: three fields")));
        match groups.last_mut() {
            Some((name, _, lines)) if name == k => lines.push(sass.to_string()),
            _ => groups.push((k.to_string(), ptx.to_string(), vec![sass.to_string()])),
        }
    }
    groups.into_iter().map(|(name, ptx, lines)| read_kernel(name, ptx, &lines)).collect()
}

fn read_kernel(name: String, ptx: String, lines: &[String]) -> Kernel {
    let ops = |l: &str| -> Vec<String> { l.split_once(' ').map_or("", |(_, o)| o).split(", ").map(str::to_string).collect() };
    // operand 1 of the PTX is the first register of the 64-bit load, operand 2 the next
    let ldg = lines.iter().find(|l| l.starts_with("LDG.E.64 ")).unwrap_or_else(|| panic!("{name}: no LDG.E.64"));
    let a_reg: u8 = ops(ldg)[0].strip_prefix('R').and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{name}: {ldg}: not a register"));
    // %p3 = (word at +8 != 0)
    let c_pred = lines.iter().find(|l| l.starts_with("ISETP")).map(|l| {
        let o = ops(l);
        assert!(l.starts_with("ISETP.NE.U32.AND ") && o[1] == "PT" && o[3] == "RZ" && o[4] == "PT", "{name}: {l}: not the ISETP of %p3");
        pred_index(&o[0])
    });
    let (i, text) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| ["HSET2", "HSETP2", "HMNMX2"].iter().any(|m| l.starts_with(&format!("{m} ")) || l.starts_with(&format!("{m}."))))
        .unwrap_or_else(|| panic!("{name}: no HSET2, HSETP2 or HMNMX2"));
    let inst = parse(text).unwrap_or_else(|e| panic!("{name}: the isa does not read ptxas's {text}: {e}"));
    assert_eq!((inst.a, inst.b), (a_reg, Operand2::Reg(a_reg + 1)), "{name}: {text}: the sources are not the PTX's a and b in order");
    let src = inst.psrc.unwrap_or_else(|| panic!("{name}: {text}: no predicate source or selector"));
    assert!(src.index == PT || Some(src.index) == c_pred, "{name}: {text}: the predicate source is neither PT nor the ISETP's");
    let results = (inst.op == Op::Hsetp2).then(|| {
        // SEL Rx, RZ, 0x1, !Pn stores %p1 (1 when Pn): which predicate is %p1, which %p2
        let sel_of = |k: &str| {
            let l = lines[i..].iter().find(|l| l.starts_with("SEL ") && ops(l)[2] == k).unwrap_or_else(|| panic!("{name}: no SEL of {k}"));
            pred_index(&ops(l)[3])
        };
        let (p, q) = (sel_of("0x1"), sel_of("0x2"));
        let pdst = inst.pdst.unwrap_or_else(|| panic!("{name}: {text}: no predicate results"));
        assert!([[p, q], [q, p]].contains(&pdst), "{name}: the SELs read P{p}, P{q}, not {text}'s results");
        (p, q)
    });
    Kernel { name, ptx, sass_text: text.clone(), inst, c_pred, results }
}

/// Checks one kernel on every pair of special values and both predicate values under
/// policy `p`: the mismatches (described) and how many lanes the PTX ISA left open.
fn check(k: &Kernel, p: &Policy) -> (Vec<String>, u64, u64) {
    let def = parse_ptx(&k.ptx);
    let bf = match &def {
        Ptx::MinMax { bf16, .. } | Ptx::Set { bf16, .. } => *bf16,
    };
    let mut sp: Vec<u16> = if bf { bf16_specials() } else { f16_specials() }.to_vec();
    sp.extend(if bf { [0x0002, 0x8002, 0xffc1] } else { [0x0002, 0x8002, 0xfe01] });
    let (mut bad, mut open, mut checked) = (Vec::new(), 0u64, 0u64);
    for (i, &x0) in sp.iter().enumerate() {
        for &y0 in &sp {
            let (x1, y1) = (sp[(i * 7 + 3) % sp.len()], y0 ^ 0x8000);
            let (a, b) = (x0 as u32 | (x1 as u32) << 16, y0 as u32 | (y1 as u32) << 16);
            for c in [false, true] {
                // the predicate file: the ISETP's predicate holds %p3 (c), every other is false
                let pred = k.c_pred.map_or(0, |i| (c as u8) << i);
                let x = Inputs { a, b, d: 0, c: 0, pred };
                let lanes = [(x0, y0), (x1, y1)];
                let reg = || eval_with(p, &k.inst, &x).unwrap_or_else(|e| panic!("{}: {e}", k.name));
                let (want, got): (Vec<Want>, Vec<u16>) = match (&def, k.inst.op) {
                    (Ptx::MinMax { min, nan, xorsign_abs, ftz: z, .. }, Op::Hmnmx2) => {
                        let r = reg();
                        (
                            lanes.iter().map(|&(x, y)| ptx_minmax(*min, *nan, *xorsign_abs, bf, ftz(bf, *z, x), ftz(bf, *z, y))).collect(),
                            vec![r as u16, (r >> 16) as u16],
                        )
                    }
                    (Ptx::Set { cmp, bool_op, c_negated, ftz: z, pred, one, .. }, op) => {
                        let cv = c != *c_negated;
                        let t: Vec<bool> =
                            lanes.iter().map(|&(x, y)| ptx_bool(bool_op, ptx_compare(cmp, value(bf, ftz(bf, *z, x)), value(bf, ftz(bf, *z, y))), cv)).collect();
                        match (op, pred, k.results) {
                            (Op::Hset2, false, _) => {
                                let r = reg();
                                (t.iter().map(|&t| Want::Exact(if t { *one } else { 0 })).collect(), vec![r as u16, (r >> 16) as u16])
                            }
                            (Op::Hsetp2, true, Some((p1, p2))) => {
                                let after = preds_after_with(p, &k.inst, &x).unwrap_or_else(|e| panic!("{}: {e}", k.name));
                                (t.iter().map(|&t| Want::Exact(t as u16)).collect(), vec![(after >> p1 & 1) as u16, (after >> p2 & 1) as u16])
                            }
                            _ => panic!("{}: {} is not what {} compiles to", k.name, k.sass_text, k.ptx),
                        }
                    }
                    _ => panic!("{}: {} is not what {} compiles to", k.name, k.sass_text, k.ptx),
                };
                for (l, (w, g)) in want.iter().zip(&got).enumerate() {
                    let ok = match *w {
                        Want::Exact(v) => *g == v,
                        Want::AnyNan => is_nan(bf, *g),
                        Want::AnyZero => *g & 0x7fff == 0,
                    };
                    open += !matches!(w, Want::Exact(_)) as u64;
                    checked += 1;
                    if !ok {
                        bad.push(format!(
                            "{}: {} as {}: a={a:#010x} b={b:#010x} c={c}: lane {l}: reference {g:#06x}, PTX ISA {w:x?}",
                            k.name, k.ptx, k.sass_text
                        ));
                    }
                }
            }
        }
    }
    (bad, open, checked)
}

#[test]
fn the_reference_computes_the_ptx_isa_on_ptxas_sass() {
    let ks = kernels();
    assert!(ks.len() >= 100, "the corpus has {} kernels", ks.len());
    let p = Policy::current();
    let (mut bad, mut open, mut checked) = (Vec::new(), 0, 0);
    for k in &ks {
        let (b, o, c) = check(k, p);
        bad.extend(b);
        open += o;
        checked += c;
    }
    for k in &ks {
        println!("{:<48} -> {}", k.ptx, k.sass_text);
    }
    println!("{} kernels, {checked} lanes checked, {open} of them left open by the PTX ISA (any NaN or any zero accepted)", ks.len());
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad[..bad.len().min(30)].join("\n"));
}

/// Every `outside` record naming this file supports the entry's assumption, and the corpus
/// tells the assumption from at least one other option (the ones it cannot tell are
/// printed): what ptxas relies on is evidence only where it would differ.
#[test]
fn semantics_json_outside_records_of_this_corpus_hold() {
    let table = parse_table(SEMANTICS_JSON).expect("semantics.json parses");
    let ks = kernels();
    let mut named = 0;
    for e in &table {
        for o in e.outside.iter().filter(|o| o.test.as_deref() == Some(THIS_FILE)) {
            named += 1;
            assert_eq!(o.supports, e.assumption, "{}: the reference's assumption is what ptxas relies on", e.id);
            let k = KNOBS.iter().position(|(id, _)| *id == e.id).unwrap_or_else(|| panic!("{}: no such knob", e.id));
            let at = Policy::current().option(k);
            let mut told = Vec::new();
            for alt in (0..KNOBS[k].1.len()).filter(|&a| a != at) {
                let mut q = *Policy::current();
                q.set(k, alt);
                if ks.iter().any(|kn| !check(kn, &q).0.is_empty()) {
                    told.push(alt);
                } else {
                    println!("{}: the corpus does not tell option {alt} ({:?}) from the assumption", e.id, KNOBS[k].1[alt]);
                }
            }
            assert!(!told.is_empty(), "{}: the corpus agrees with every option: it is no evidence for the assumption", e.id);
            println!("{}: the corpus rules out options {told:?}", e.id);
        }
    }
    assert!(named > 0, "semantics.json names this test in no outside record");
}
