//! The vector format and the `verify` / `eval` subcommands, driven through the real binary.

use crate::common;

use common::{bin, root, tmp};
use hmul2_harness::isa::{decode, Format};
use hmul2_harness::vectors::{read_paths, Vector};
use std::collections::BTreeSet;
use std::process::Stdio;

fn committed() -> Vec<Vector> {
    read_paths(&[root().join("vectors")]).unwrap().into_iter().map(|l| l.item.unwrap_or_else(|e| panic!("{}: {e}", l.file.display()))).collect()
}

#[test]
fn verify_passes_on_the_committed_vectors() {
    let out = bin().args(["verify", "vectors"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "verify failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let n = committed().len();
    assert!(n >= 2000, "only {n} committed vectors");
    assert!(text.contains(&format!("{n} vectors: {n} pass, 0 mismatch, 0 malformed, 0 invalid, 0 undefined")), "{text}");
}

/// The coverage keys of one instruction: operand 1's and 2's neg x abs x half select,
/// format x flush x .SAT, guard (PT or not) x negation; each prefixed with the instruction
/// and its form.
fn coverage_keys(i: &hmul2_harness::isa::Inst) -> Vec<String> {
    let (op, f) = (i.op, i.form());
    let mut k = vec![
        format!("{op} {f:?} a.neg={} a.abs={} a.{:?}", i.a_mods.neg, i.a_mods.abs, i.a_mods.swizzle),
        format!("{op} {f:?} {:?} {:?} sat={}", i.format, i.flush, i.sat),
        format!("{op} {f:?} pt={} negated={}", i.pred.index == 7, i.pred.negated),
    ];
    if f.has_b_mods() {
        k.push(format!("{op} {f:?} b.neg={} b.abs={} b.{:?}", i.b_mods.neg, i.b_mods.abs, i.b_mods.swizzle));
    }
    // the comparisons: each comparison with each boolean operation
    if let (Some(c), Some(b)) = (i.cmp, i.bool_op) {
        k.push(format!("{op} {f:?} {} {}", c.name(), b.name()));
    }
    k
}

/// The regression set exercises every form of every instruction the pipeline runs, and
/// every combination of [`coverage_keys`] that a word of the form's full factorial
/// (`gen::factorial`: every modifier value the spec allows) has where the reference
/// defines its result.
#[test]
fn committed_vectors_cover_every_form_and_modifier_value() {
    let mut seen = BTreeSet::new();
    for v in committed() {
        assert_eq!(v.origin, "reference");
        seen.extend(coverage_keys(&decode(v.encoding).unwrap()));
    }
    let mut want = BTreeSet::new();
    for &op in hmul2_harness::reference::IMPLEMENTED {
        for f in op.forms() {
            let before = want.len();
            for i in hmul2_harness::gen::factorial(op, f, 0) {
                if hmul2_harness::reference::eval(&i, &Default::default()).is_ok() {
                    want.extend(coverage_keys(&i));
                }
            }
            assert!(want.len() >= before + 20, "{op} {f:?}: only {} combinations with a defined result", want.len() - before);
        }
    }
    // HMUL2's half selects, FMZ and BF16 are among them (the list is the spec's, not empty)
    for k in ["HMUL2 Rrr a.neg=true a.abs=true a.H0H0", "HMUL2 Const Bf16 Fmz sat=true", "HFMA2 Rrrr b.neg=false b.abs=true b.H1H1"] {
        assert!(want.contains(k), "{k}");
    }
    let missing: Vec<&String> = want.iter().filter(|k| !seen.contains(*k)).collect();
    assert!(missing.is_empty(), "the reference vectors lack: {missing:#?}");
}

fn good_line() -> String {
    // ptxas's word `HMUL2 R5, R5, 2, 1`: dst == a, so d == a; (3, 3) x (1, 2) = (3, 6)
    r#"{"encoding":"0x000fe2000000000040003c0005057832","a":"0x42004200","b":"0x00000000","d":"0x42004200","pred":"0x00","expect":"0x46004200","origin":"reference"}"#.to_string()
}

#[test]
fn a_good_temp_vector_passes() {
    let d = tmp("good");
    std::fs::write(d.join("one.jsonl"), good_line() + "\n").unwrap();
    let out = bin().arg("verify").arg(&d).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 vectors: 1 pass"), "{text}");
}

#[test]
fn malformed_contradictory_and_wrong_lines_fail_with_file_and_line() {
    let d = tmp("bad");
    let good = good_line();
    let lines = [
        good.clone(),                                                 // 1 pass
        "{not json".to_string(),                                      // 2 malformed
        good.replace("\"d\":\"0x42004200\"", "\"d\":\"0x00000001\""), // 3 invalid: dst == a, d != a
        good.replace("0x46004200", "0x46004201"),                     // 4 mismatch
        good.replace(",\"expect\":\"0x46004200\"", ""),               // 5 malformed: no expect
        good.replace("\"a\":\"0x42004200\"", "\"a\":\"0x4200\""),     // 6 malformed hex
    ];
    let sub = d.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("cases.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::write(d.join("ignored.txt"), "not a vector").unwrap();
    let out = bin().arg("verify").arg(&d).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let f = sub.join("cases.jsonl").display().to_string();
    assert!(text.contains(&format!("{f}:2: malformed")), "{text}");
    assert!(text.contains(&format!("{f}:3: invalid: destination R5 is also operand 1")), "{text}");
    assert!(text.contains(&format!("{f}:4: mismatch: HMUL2 R5, R5, 2, 1")), "{text}");
    assert!(text.contains("expected 0x46004201, reference 0x46004200"), "{text}");
    assert!(text.contains(&format!("{f}:5: malformed: no \"expect\"")), "{text}");
    assert!(text.contains(&format!("{f}:6: malformed: key \"a\"")), "{text}");
    assert!(text.contains("6 vectors: 1 pass, 1 mismatch, 3 malformed, 1 invalid, 0 undefined"), "{text}");
}

#[test]
fn rz_read_nonzero_and_same_register_are_invalid() {
    use hmul2_harness::inputs::Inputs;
    use hmul2_harness::isa::{encode, Inst, Operand2, RZ};
    use hmul2_harness::vectors::{check, Contradiction};
    let v = |i: Inst, x: Inputs| Vector { encoding: encode(&i).unwrap(), inputs: x, expect: None, expect_pred: None, origin: String::new(), arch: None };
    let x = Inputs { a: 1, b: 2, d: 0, pred: 0, c: 0 };
    assert_eq!(check(&v(Inst::new(0, RZ, Operand2::Reg(2)), x)), Err(Contradiction::RzA(1)));
    assert_eq!(check(&v(Inst::new(0, 1, Operand2::Reg(RZ)), x)), Err(Contradiction::RzB(2)));
    assert_eq!(check(&v(Inst::new(0, 1, Operand2::Ur(63)), x)), Err(Contradiction::RzB(2)));
    assert_eq!(check(&v(Inst::new(0, 3, Operand2::Reg(3)), x)), Err(Contradiction::SameReg { reg: 3, a: 1, b: 2 }));
    assert!(check(&v(Inst::new(0, 3, Operand2::Reg(4)), x)).is_ok());
}

#[test]
fn undefined_vectors_are_counted_not_passed() {
    // format INVALID3 on ptxas's word: bits of the format field set via the typed form
    use hmul2_harness::isa::{encode, parse_hex};
    let mut i = decode(parse_hex("0x000fe2000000000040003c0005057832").unwrap()).unwrap();
    i.format = Format::Invalid3;
    let word = hmul2_harness::isa::format_hex(encode(&i).unwrap());
    let d = tmp("undef");
    let hw = good_line()
        .replace("0x000fe2000000000040003c0005057832", &word)
        .replace("\"origin\":\"reference\"", "\"origin\":\"hardware:NVIDIA H100:580.65:2026-01-01\"");
    std::fs::write(d.join("hw.jsonl"), hw.clone() + "\n").unwrap();
    let out = bin().arg("verify").arg(&d).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("1 vectors: 0 pass, 0 mismatch, 0 malformed, 0 invalid, 1 undefined"), "{text}");
    assert!(text.contains(":1: undefined: format field"), "{text}");
    // the same vector claiming a reference result fails
    let claim = hw.replace("\"origin\":\"hardware:NVIDIA H100:580.65:2026-01-01\"", "\"origin\":\"reference\"");
    std::fs::write(d.join("hw.jsonl"), claim + "\n").unwrap();
    let out = bin().arg("verify").arg(&d).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn verify_of_nothing_is_an_error() {
    let d = tmp("empty");
    let out = bin().arg("verify").arg(&d).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin().arg("verify").arg(d.join("absent.jsonl")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn eval_fills_expect_and_round_trips_through_verify() {
    use std::io::Write;
    let input = good_line().replace(",\"expect\":\"0x46004200\"", "").replace(",\"origin\":\"reference\"", "");
    let mut child = bin().arg("eval").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all((input + "\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), good_line());
    // generation mode: encodings x input_set, then verify
    let d = tmp("evalgen");
    std::fs::write(d.join("words.txt"), "0x000fe2000000000040003c0005057832\n").unwrap();
    let out = bin().args(["eval", "--seed", "5", "--inputs", "40", "--encodings"]).arg(d.join("words.txt")).output().unwrap();
    assert!(out.status.success());
    std::fs::write(d.join("v.jsonl"), &out.stdout).unwrap();
    let v = bin().arg("verify").arg(d.join("v.jsonl")).output().unwrap();
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(v.status.success() && text.contains("40 vectors: 40 pass"), "{text}");
}

#[test]
fn docs_semantics_md_is_generated_from_the_json() {
    let doc = std::fs::read_to_string(root().join("docs/semantics.md")).unwrap();
    let json = std::fs::read_to_string(root().join("harness/spec/semantics.json")).unwrap();
    let want = hmul2_harness::verify::render_doc(&doc, &json).unwrap();
    assert!(doc == want, "docs/semantics.md is stale: run `cargo run -p hmul2-harness -- semantics-doc`");
    assert!(doc.contains("| `nan-result` |"));
}

/// `settle` through the binary, on "hardware" vectors made by a reference whose `sat-nan`
/// choice is the alternative: the contradiction is reported (exit 1), `--write` records the
/// option the vectors show with its evidence and regenerates the document's table, and
/// the rewritten table is then confirmed (exit 0).
#[test]
fn settle_finds_a_contradicted_assumption_and_records_it() {
    use hmul2_harness::reference::policy::{parse_table, Policy, KNOBS};
    let d = tmp("settle");
    let k = KNOBS.iter().position(|(id, _)| *id == "sat-nan").unwrap();
    let mut truth = *Policy::current();
    truth.set(k, 1);
    // the regression set's instructions and inputs, with what that "GPU" gives
    let mut body = String::new();
    for v in committed() {
        let inst = hmul2_harness::vectors::check(&v).unwrap();
        if let Ok(e) = hmul2_harness::reference::eval_with(&truth, &inst, &v.inputs) {
            let h = Vector { expect: Some(e), origin: "hardware:fixture:0:2026-12-03".into(), ..v };
            body += &(hmul2_harness::vectors::to_line(&h) + "\n");
        }
    }
    std::fs::write(d.join("h.jsonl"), body).unwrap();
    std::fs::copy(root().join("harness/spec/semantics.json"), d.join("semantics.json")).unwrap();
    std::fs::copy(root().join("docs/semantics.md"), d.join("semantics.md")).unwrap();
    let settle = |extra: &[&str]| {
        let mut c = bin();
        c.arg("settle").arg(d.join("h.jsonl")).arg("--semantics").arg(d.join("semantics.json")).arg("--doc").arg(d.join("semantics.md")).args(extra);
        c.output().unwrap()
    };
    let o = settle(&[]);
    let t = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{t}");
    let line = t.lines().find(|l| l.starts_with("sat-nan")).unwrap_or_default();
    assert!(line.contains("CONTRADICTED") && line.contains(KNOBS[k].1[1]), "{t}");
    // one knob line (each instruction's line under it may say so too)
    assert_eq!(t.lines().filter(|l| !l.starts_with(' ') && l.contains("CONTRADICTED")).count(), 1, "only sat-nan: {t}");
    let per: Vec<&str> = t.lines().skip_while(|l| !l.starts_with("sat-nan")).skip(1).take_while(|l| l.starts_with(' ')).collect();
    assert!(per.iter().any(|l| l.trim_start().starts_with("HMUL2: CONTRADICTED")), "sat-nan's lines per instruction: {t}");
    // the PTX ISA and ptxas rely on sat-nan's assumption: said beside the contradiction
    let next = t.lines().skip_while(|l| !l.starts_with("sat-nan")).nth(1).unwrap_or_default();
    assert!(next.contains("hardware disagrees with PTX ISA (half-precision mul) and ptxas"), "{t}");
    assert_eq!(t.matches("hardware disagrees").count(), 1, "{t}");
    assert!(!t.contains("INCONSISTENT") && !t.contains("unexplained"), "{t}");
    // --write records it
    let o = settle(&["--write"]);
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let table = parse_table(&std::fs::read_to_string(d.join("semantics.json")).unwrap()).unwrap();
    // as SM90's (the vectors name no arch): SM90's policy moves, the others' do not
    let sm90 = hmul2_harness::target::Target::DEFAULT;
    assert_eq!(Policy::from_table(&table, sm90).unwrap(), truth);
    assert_eq!(&Policy::from_table(&table, &hmul2_harness::target::Target::SM80).unwrap(), Policy::current());
    let e = table.iter().find(|e| e.id == "sat-nan").unwrap();
    assert_eq!((e.option_on(sm90), e.status_on(sm90).name()), (KNOBS[k].1[1], "hardware-confirmed"));
    assert_eq!((e.assumption.as_str(), e.settled.len()), (KNOBS[k].1[0], 1), "the assumption other architectures use stays");
    let s = e.settled_on(sm90).unwrap();
    assert!(s.evidence.contains("hardware:fixture") && s.gpu == "fixture" && s.date == "2026-12-03", "{s:?}");
    let doc = std::fs::read_to_string(d.join("semantics.md")).unwrap();
    let row = doc.lines().find(|l| l.starts_with("| `sat-nan` |")).unwrap();
    assert!(row.contains("SM90: hardware-confirmed, alternative 1 (fixture, 2026-12-03,"), "the document's table is regenerated: {row}");
    assert!(row.contains("assumed on SM80, SM86, SM89, SM100, SM120"), "{row}");
    // and now it agrees
    let o = settle(&[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // nothing of the origin: an error naming it
    let o = bin().args(["settle", "vectors"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no vectors of origin \"hardware:\" in vectors"));
}

/// `settle` on the vectors of two architectures: SM90's "GPU" passes NaN through `.SAT`,
/// SM86's does what the table assumes. Each is weighed apart: SM90's part contradicts
/// `sat-nan`, SM86's confirms it, a `DIFFERS` line names the two, `--arch SM86` weighs SM86's
/// alone, and `--write` records each for its own architecture.
#[test]
fn settle_weighs_each_architecture_apart_and_shows_where_they_differ() {
    use hmul2_harness::reference::policy::{parse_table, Policy, Status, KNOBS};
    use hmul2_harness::target::Target;
    let d = tmp("settle-arch");
    let k = KNOBS.iter().position(|(id, _)| *id == "sat-nan").unwrap();
    let mut truth = *Policy::current();
    truth.set(k, 1);
    let (mut sm90, mut sm86) = (String::new(), String::new());
    for v in committed() {
        let inst = hmul2_harness::vectors::check(&v).unwrap();
        if let Ok(e) = hmul2_harness::reference::eval_with(&truth, &inst, &v.inputs) {
            sm90 += &(hmul2_harness::vectors::to_line(&Vector { expect: Some(e), origin: "hardware:gpu90:0:2026-12-03".into(), ..v }) + "\n");
        }
        // the same word as SM86's, where SM86 reads it as the same instruction
        let v86 = Vector { arch: Some(&Target::SM86), ..v };
        let Ok(i86) = hmul2_harness::vectors::check(&v86) else { continue };
        if i86 != inst {
            continue;
        }
        if let Ok(e) = hmul2_harness::reference::eval_with(Policy::for_target(&Target::SM86), &i86, &v.inputs) {
            sm86 += &(hmul2_harness::vectors::to_line(&Vector { expect: Some(e), origin: "hardware:gpu86:0:2026-12-05".into(), ..v86 }) + "\n");
        }
    }
    assert!(sm86.lines().count() > 100, "{} SM86 lines", sm86.lines().count());
    std::fs::write(d.join("sm90.jsonl"), sm90).unwrap();
    std::fs::write(d.join("sm86.jsonl"), sm86).unwrap();
    std::fs::copy(root().join("harness/spec/semantics.json"), d.join("semantics.json")).unwrap();
    std::fs::copy(root().join("docs/semantics.md"), d.join("semantics.md")).unwrap();
    let settle = |extra: &[&str]| {
        let mut c = bin();
        c.arg("settle")
            .arg(d.join("sm90.jsonl"))
            .arg(d.join("sm86.jsonl"))
            .arg("--semantics")
            .arg(d.join("semantics.json"))
            .arg("--doc")
            .arg(d.join("semantics.md"))
            .args(extra);
        let o = c.output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stdout).to_string())
    };
    let (code, t) = settle(&[]);
    assert_eq!(code, Some(1), "SM90's contradiction: {t}");
    let part = |arch: &str| t.split(&format!("== {arch}: ")).nth(1).map(|p| p.split("\n== ").next().unwrap_or_default().to_string()).unwrap_or_default();
    let knob = |p: &str| p.lines().find(|l| l.starts_with("sat-nan")).unwrap_or_default().to_string();
    assert!(knob(&part("SM90")).contains("CONTRADICTED"), "{t}");
    assert!(knob(&part("SM86")).contains("confirmed:"), "{t}");
    assert!(t.lines().any(|l| l.starts_with("DIFFERS sat-nan") && l.contains("SM86 shows option 0") && l.contains("SM90 shows option 1")), "{t}");
    assert!(t.lines().any(|l| l.starts_with("SM80: no vectors")), "{t}");
    assert!(t.lines().any(|l| l.starts_with("SM86: settled by these vectors") && l.contains("sat-nan")), "{t}");
    // one architecture alone
    let (code, t86) = settle(&["--arch", "sm_86"]);
    assert_eq!(code, Some(0), "{t86}");
    assert!(t86.contains("== SM86: ") && !t86.contains("== SM90") && !t86.contains("DIFFERS"), "{t86}");
    assert!(t86.lines().next().unwrap_or_default().contains("of other architectures"), "{t86}");
    // --write: each architecture's own record; the assumption stays
    let (code, w) = settle(&["--write"]);
    assert_eq!(code, Some(0), "{w}");
    let table = parse_table(&std::fs::read_to_string(d.join("semantics.json")).unwrap()).unwrap();
    let e = table.iter().find(|e| e.id == "sat-nan").unwrap();
    assert_eq!((e.option_on(&Target::SM90), e.option_on(&Target::SM86)), (KNOBS[k].1[1], KNOBS[k].1[0]));
    assert_eq!((e.status_on(&Target::SM86), e.status_on(&Target::SM89)), (Status::HardwareConfirmed, Status::Assumed));
    assert_eq!(e.settled_on(&Target::SM86).map(|s| s.gpu.as_str()), Some("gpu86"));
    assert_eq!(Policy::from_table(&table, &Target::SM90).unwrap().option(k), 1);
    assert_eq!(Policy::from_table(&table, &Target::SM89).unwrap().option(k), 0);
}

/// What the line mutations insert: JSON's own characters, hex digits, and multi-byte ones.
const LINE_CHARS: &[char] = &['"', '{', '}', ':', ',', 'x', '0', 'f', '7', '-', ' ', '\\', 'é', '\u{0}', 'e', '.'];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 20_000,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(common::fresh_seed()),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// A vector line with a few characters deleted, inserted or replaced: parsing, checking
    /// and evaluating it answer without panicking, and a line that parses re-parses from its
    /// own printing to the same vector.
    #[test]
    fn vector_lines_never_panic_under_mutation(
        w in hmul2_harness::gen::strategies::legal_word(),
        x in proptest::prelude::any::<(u32, u32, u32, u8)>(),
        edits in proptest::collection::vec((0usize..200, 0u8..3, proptest::sample::select(LINE_CHARS.to_vec())), 1..5),
    ) {
        use hmul2_harness::vectors::{check, parse_line, to_line};
        let v = Vector {
            encoding: w,
            inputs: hmul2_harness::inputs::Inputs { a: x.0, b: x.1, d: x.2, pred: x.3 & 0x7f, c: 0 },
            expect: Some(x.0 ^ x.1),
            expect_pred: None,
            origin: "reference".into(),
            arch: None,
        };
        let line = common::mutate(&to_line(&v), &edits);
        match parse_line(&line) {
            Ok(p) => {
                proptest::prop_assert_eq!(parse_line(&to_line(&p)), Ok(p.clone()), "{:?}", line);
                if let Ok(i) = check(&p) {
                    let _ = hmul2_harness::reference::eval(&i, &p.inputs);
                }
            }
            Err(e) => proptest::prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// Issue 41 item 3: `expect_pred`, the predicate file after. HMUL2 writes no predicate, so a
/// line recording P0..P6 as they were passes, one recording another file (a clobbered
/// predicate) is a mismatch naming both files, and a malformed key is a malformed line named
/// by its file and line; `eval` writes the reference's line back, which for HMUL2 has no key.
#[test]
fn verify_compares_recorded_predicates_and_eval_writes_the_references() {
    let d = tmp("vectors-pred");
    let plain = hmul2_harness::isa::format_hex(hmul2_harness::isa::encode(&hmul2_harness::isa::parse("HMUL2 R0, R1, R2").unwrap()).unwrap());
    let line = |p: &str| {
        format!(
            r#"{{"encoding":"{plain}","a":"0x3e003c00","b":"0x40004000","d":"0x00000000","pred":"0x2a","expect":"0x42004000"{p},"origin":"hardware:test:0:2026-12-07"}}"#
        )
    };
    let verify = |lines: &[String]| {
        let f = d.join("v.jsonl");
        std::fs::write(&f, lines.join("\n") + "\n").unwrap();
        let o = bin().arg("verify").arg(&f).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (code, out) = verify(&[line(""), line(r#","expect_pred":"0x2a""#)]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("2 vectors: 2 pass, 0 mismatch"), "{out}");
    let (code, out) = verify(&[line(""), line(r#","expect_pred":"0x2b""#)]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("v.jsonl:2: mismatch: HMUL2 R0, R1, R2") && out.contains("expected predicates 0x2b, reference 0x2a"), "{out}");
    assert!(out.contains("2 vectors: 1 pass, 1 mismatch"), "{out}");
    for bad in [r#","expect_pred":"0xaa""#, r#","expect_pred":"0x2""#, r#","expect_pred":42"#] {
        let (code, out) = verify(&[line(bad)]);
        assert_eq!(code, Some(1), "{bad}: {out}");
        assert!(out.contains("v.jsonl:1: malformed: key \"expect_pred\""), "{bad}: {out}");
    }
    // eval: the reference's line, with P0..P6 as they were (no key for HMUL2)
    let mut child = bin().arg("eval").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all((line(r#","expect_pred":"0x2b""#) + "\n").as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let got = String::from_utf8_lossy(&o.stdout);
    assert!(!got.contains("expect_pred") && got.contains(r#""expect":"0x42004000","origin":"reference""#), "{got}");
}
