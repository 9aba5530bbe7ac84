//! The roads onto the GPU (`run --road batch|single|scaffold`, `kernel::road`) and `run
//! --words FILE`, through the emulated driver (`harness/fake-cuda`): each road runs every
//! form of every instruction, its preflight included, and says which road it took.

use crate::common::{seed, summary, text, tmp, BIN};
use crate::fake_driver::harness;
use hmul2_harness::isa::{format_hex, Op};
use hmul2_harness::kernel::road::Road;
use serde_json::Value;
use std::path::Path;

/// A words file holding `per` runnable words of every form of every implemented instruction
/// (one per line, with a comment line and a blank one, as the format allows).
fn every_form_words(dir: &Path, seed: u64, per: usize) -> (std::path::PathBuf, usize) {
    let mut body = String::from("# every form of every instruction\n\n");
    let mut n = 0;
    for &op in hmul2_harness::reference::IMPLEMENTED {
        for form in op.forms() {
            // words the reference has a value for (HFMA2's undocumented modifiers have none)
            let defined = |w: &u128| {
                let i = hmul2_harness::isa::decode(*w).unwrap();
                !matches!(hmul2_harness::reference::eval(&i, &Default::default()), Err(hmul2_harness::reference::Undefined::Fma(_)))
            };
            let drawn = hmul2_harness::kernel::runnable_words_of(seed, &[op], Some(form), 16 * per).unwrap();
            for w in drawn.into_iter().filter(defined).take(per) {
                body.push_str(&format!("{}  # {}\n", format_hex(w), op.form_key(form)));
                n += 1;
            }
        }
    }
    let p = dir.join("words.txt");
    std::fs::write(&p, body).unwrap();
    (p, n)
}

/// Forms of every implemented instruction.
fn all_forms() -> usize {
    hmul2_harness::reference::IMPLEMENTED.iter().map(|o| o.forms().count()).sum()
}

/// `run --words` of every form on `road` through the emulated driver; the summary.
fn run_road(road: Road, seed: u64, per: usize) -> Value {
    let d = tmp(&format!("road-{road}"));
    let (words, n) = every_form_words(&d, seed, per);
    let out = d.join("r");
    let o = harness(
        "",
        &["run", "--seed", &seed.to_string(), "--road", road.name(), "--words", words.to_str().unwrap(), "--inputs", "64", "--out", out.to_str().unwrap()],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{road}: {t}");
    assert!(t.contains(&format!("in all 32 threads, on the {road} road")), "{road}: the preflight runs on the run's road: {t}");
    assert!(t.contains("PASSED (simulated, not hardware"), "{t}");
    let s = summary(&out);
    assert_eq!(s["road"], road.name());
    assert_eq!(s["mode"], "words");
    assert_eq!(s["config"]["words"]["count"], n as u64);
    if road == Road::Batch {
        assert!(s["config"].get("road").is_none(), "the batch road's journal is as before roads");
    } else {
        assert_eq!(s["config"]["road"], road.name());
    }
    assert_eq!(s["hardware"]["used"], false);
    assert_eq!(s["totals"]["instructions"], n as u64);
    s
}

/// Every form ran and compared on `road`, none was not runnable, nothing differed.
fn every_form_compared(road: Road, s: &Value) {
    let forms = s["by_form"].as_object().unwrap();
    assert_eq!(forms.len(), all_forms(), "{road}: {forms:?}");
    for (f, t) in forms {
        assert_eq!(t["not_runnable"], 0, "{road} {f}: {t}");
        assert!(t["inputs"].as_u64().unwrap() > 0, "{road} {f}: {t}");
        assert_eq!(t["compared"].as_u64().unwrap() + t["undefined"].as_u64().unwrap(), t["inputs"].as_u64().unwrap(), "{road} {f}: {t}");
    }
    assert_eq!((s["totals"]["mismatches"].as_u64(), s["totals"]["faults"].as_u64()), (Some(0), Some(0)), "{road}");
    let by_op: Vec<Op> = hmul2_harness::reference::IMPLEMENTED.to_vec();
    for op in by_op {
        let compared: u64 = forms.iter().filter(|(f, _)| op.forms().any(|x| op.form_key(x) == f.as_str())).map(|(_, t)| t["compared"].as_u64().unwrap()).sum();
        assert!(compared > 0, "{road} {op}: nothing compared");
    }
}

#[test]
fn the_batch_road_runs_every_form_of_every_instruction() {
    let s = run_road(Road::Batch, seed(38), 2);
    every_form_compared(Road::Batch, &s);
}

#[test]
fn the_single_road_runs_every_form_of_every_instruction() {
    let s = run_road(Road::Single, seed(38), 2);
    every_form_compared(Road::Single, &s);
}

#[test]
fn a_words_file_with_a_bad_line_is_one_error_naming_the_line() {
    let d = tmp("words-bad");
    let out = d.join("r");
    for (body, want) in [
        ("# ok\nHMUL2 R0, R1, R2 ;\n0x1234\n", "words.txt:3: \"0x1234\""),
        ("HMUL2 R0, R1, R2\nHMUL3 R0, R1, R2\n", "words.txt:2: cannot parse"),
        ("# nothing\n\n", "no word in it"),
    ] {
        std::fs::write(d.join("words.txt"), body).unwrap();
        let o = std::process::Command::new(BIN)
            .args(["run", "--words", d.join("words.txt").to_str().unwrap(), "--out", out.to_str().unwrap()])
            .env_remove("HMUL2_FAKE_EXECUTOR")
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{body:?}: {t}");
        assert!(t.contains(want) && t.lines().filter(|l| l.starts_with("error")).count() == 1, "{body:?}: {t}");
        assert!(!t.contains("panicked"), "{t}");
    }
    let o = std::process::Command::new(BIN)
        .args(["run", "--words", d.join("words.txt").to_str().unwrap(), "--mode", "factorial", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.code() == Some(2) && text(&o).contains("--words: runs the words given"), "{}", text(&o));
    std::fs::write(d.join("words.txt"), "HMUL2 R0, R1, R2\n").unwrap();
    for (flag, value) in [("--form", "rrr"), ("--instruction", "HADD2"), ("--control", "fixed")] {
        let o = std::process::Command::new(BIN)
            .args(["run", "--words", d.join("words.txt").to_str().unwrap(), flag, value, "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.code() == Some(2) && text(&o).contains(&format!("{flag}: chooses what a run draws")), "{}", text(&o));
    }
}

#[test]
fn a_words_run_runs_exactly_its_words_and_says_what_it_cannot() {
    let d = tmp("words-exact");
    let out = d.join("r");
    // R254 is the hardware's: never placed elsewhere on a --words run, counted not runnable
    let body = "HMUL2 R0, R1, R2\nHADD2 R4, R5, R6\nHMUL2 R254, R1, R2\n";
    std::fs::write(d.join("w.txt"), body).unwrap();
    let o = harness(
        "",
        &["run", "--seed", "1", "--road", "single", "--words", d.join("w.txt").to_str().unwrap(), "--inputs", "32", "--out", out.to_str().unwrap()],
    );
    let t = text(&o);
    assert!(t.contains("w.txt:3:") && t.contains("not runnable on the single road"), "{t}");
    let s = summary(&out);
    assert_eq!(s["totals"]["instructions"], 3, "{t}");
    assert_eq!(s["totals"]["not_runnable"], 1, "{t}");
    assert_eq!(s["totals"]["compared"], 64, "{t}");
}

#[test]
fn the_scaffold_road_runs_what_its_scaffolds_hold_and_counts_the_rest() {
    let seed = seed(38);
    let s = run_road(Road::Scaffold, seed, 8);
    let forms = s["by_form"].as_object().unwrap();
    assert_eq!(forms.len(), all_forms(), "every form is reported, runnable or not: {forms:?}");
    let n = |t: &Value, k: &str| t[k].as_u64().unwrap();
    // each form with a scaffold of its instruction (or of one with the same sources) ran
    // and compared; every other word is counted not runnable, never run as another
    let mut ran = std::collections::BTreeSet::new();
    for (f, t) in forms {
        // what ran was compared (or has no reference value); what did not is counted
        assert_eq!(n(t, "compared") + n(t, "undefined"), n(t, "inputs"), "{f}: {t}");
        assert_eq!(n(t, "inputs"), 64 * (n(t, "instructions") - n(t, "not_runnable")), "{f}: {t}");
        if n(t, "compared") > 0 {
            ran.insert(f.clone());
        }
    }
    eprintln!("ran on the scaffold road: {ran:?}");
    let key = |op: Op, f: hmul2_harness::isa::Form| op.form_key(f).to_string();
    use hmul2_harness::isa::Form;
    // every register, immediate and c[] form of every instruction runs (HFMA2.MMA's
    // immediate and c[] forms on HFMA2's scaffolds); cx[] and UR forms are counted, never run
    // An instruction that writes predicates runs only on HSETP2's scaffolds, and one with a
    // predicate source P0..P6 only on a `_p` scaffold (distinct registers, register form):
    // random words seldom fit those, so those forms are not asked to have run (what ran was
    // compared, above)
    for &op in hmul2_harness::reference::IMPLEMENTED {
        let plain = hmul2_harness::isa::Inst::of(op, 0, 1, hmul2_harness::isa::Operand2::Reg(2));
        let reads_preds = plain.psrc.is_some() || plain.pdst.is_some();
        for f in op.forms() {
            if reads_preds && matches!(f, Form::Rrr | Form::Imm | Form::Const) {
                continue;
            }
            let held = matches!(f, Form::Rrr | Form::Imm | Form::Const | Form::Rrrr | Form::ImmC | Form::ConstC);
            let t = &forms[&key(op, f)];
            if held {
                assert!(ran.contains(&key(op, f)), "{} did not run on the scaffold road: {ran:?}", key(op, f));
            } else {
                assert_eq!(n(t, "inputs"), 0, "{}: {t}", key(op, f));
                assert_eq!(n(t, "not_runnable"), n(t, "instructions"), "{}: {t}", key(op, f));
            }
        }
    }
    assert_eq!((s["totals"]["mismatches"].as_u64(), s["totals"]["faults"].as_u64()), (Some(0), Some(0)));
}

#[test]
fn a_words_run_on_the_scaffold_road_says_and_records_the_word_that_ran() {
    let d = tmp("words-scaffold");
    let out = d.join("r");
    let vec_dir = d.join("v");
    // one word that runs on ptxas's registers, one form no scaffold holds
    std::fs::write(d.join("w.txt"), "HMUL2 R0, R1, R2\nHMUL2 R0, R1, UR4\n").unwrap();
    let o = harness(
        "",
        &[
            "run",
            "--seed",
            "1",
            "--road",
            "scaffold",
            "--words",
            d.join("w.txt").to_str().unwrap(),
            "--inputs",
            "32",
            "--out",
            out.to_str().unwrap(),
            "--vectors",
            vec_dir.to_str().unwrap(),
        ],
    );
    let t = text(&o);
    let (ran_as, _) =
        hmul2_harness::kernel::scaffold::fit(hmul2_harness::isa::encode(&hmul2_harness::isa::parse("HMUL2 R0, R1, R2").unwrap()).unwrap()).unwrap();
    assert!(t.contains("w.txt:1: 0x") && t.contains(&format!("runs as {} on the scaffold road", format_hex(ran_as))), "{t}");
    assert!(t.contains("w.txt:2:") && t.contains("not runnable on the scaffold road"), "{t}");
    let s = summary(&out);
    assert_eq!(
        (s["totals"]["instructions"].as_u64(), s["totals"]["not_runnable"].as_u64(), s["totals"]["compared"].as_u64()),
        (Some(2), Some(1), Some(32)),
        "{t}"
    );
    // the vectors are of the word that ran, never of the one asked for
    let files: Vec<_> = std::fs::read_dir(vec_dir.join("simulated")).unwrap().map(|e| e.unwrap().path()).collect();
    let body = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(body.lines().count(), 32);
    assert!(body.lines().all(|l| hmul2_harness::vectors::parse_line(l).unwrap().encoding == ran_as), "{body}");
}
