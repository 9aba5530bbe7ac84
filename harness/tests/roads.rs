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
