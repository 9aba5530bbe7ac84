//! The runner end to end through the built binary, on CPU: the no-GPU path, and the
//! hardware path with the simulated executor in real worker processes.

use crate::common;

use common::{run_words as words, sat_mask, summary, text, tmp, BIN};
use hmul2_harness::isa::{decode, format_hex, Form};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn harness(fake: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args);
    match fake {
        Some(f) => c.env("HMUL2_FAKE_EXECUTOR", f),
        // CUDA_VISIBLE_DEVICES="" hides every GPU from the driver: the no-GPU path runs
        // the same on a machine with or without one
        None => c.env_remove("HMUL2_FAKE_EXECUTOR").env("CUDA_VISIBLE_DEVICES", ""),
    };
    c.output().unwrap()
}

/// The parts of a summary that must not depend on sharding, resuming or timing.
fn essence(s: &Value) -> Value {
    serde_json::json!({"totals": s["totals"], "by_form": s["by_form"], "mismatches": s["mismatches"], "faults": s["faults"], "coverage": s["coverage"]})
}

#[test]
fn without_a_gpu_the_report_says_the_hardware_did_not_run() {
    let info = harness(None, &["gpu-info", "--json"]);
    assert!(info.status.success(), "{}", text(&info));
    let det: Value = serde_json::from_slice(&info.stdout).unwrap();
    assert!(det["problem"].is_string(), "{det}");
    let o = harness(None, &["gpu-info"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("no usable GPU"), "{}", text(&o));
    let d = tmp("nogpu");
    let out = d.join("r");
    let o = harness(None, &["run", "--seed", "3", "--count", "20", "--out", out.to_str().unwrap()]);
    let t = text(&o);
    assert!(t.contains("hardware") && t.contains("did not run"), "{t}");
    assert!(t.contains("seed: 3"), "{t}");
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("PASSED: software checks passed; the hardware part did not run (no usable GPU"), "the verdict says what ran: {last}");
    // read by a person: no table of zeros, each check in words (the JSON is in summary.json)
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("no hardware results: nothing ran on a GPU") && !stdout.contains("instrs"), "{stdout}");
    let checks: Vec<&str> = stdout.lines().filter(|l| l.starts_with("software check ")).collect();
    assert_eq!(checks.len(), 2, "{stdout}");
    assert!(checks[0].starts_with("software check verify: passed: ") && checks[0].contains("vectors in") && checks[0].contains("agree"), "{stdout}");
    assert!(checks[1].starts_with("software check oracle: passed: 20 words: nvdisasm prints the decoder's text for "), "{stdout}");
    assert!(checks.iter().all(|l| !l.contains('{')), "{stdout}");
    let s = summary(&out);
    assert_eq!(s["hardware"]["used"], false);
    let reason = s["hardware"]["reason"].as_str().unwrap();
    assert!(!reason.is_empty());
    assert!(t.contains(reason), "the reason is printed: {t}");
    assert_eq!(s["totals"]["compared"], 0, "no hardware pass reported");
    assert!(s["software_checks"]["verify"].is_object() && s["software_checks"]["oracle"].is_object());
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    // one test case per form of every instruction the run draws
    let forms: usize = hmul2_harness::reference::IMPLEMENTED.iter().map(|o| o.forms().count()).sum();
    assert_eq!(junit.matches("<skipped message=\"hardware did not run").count(), forms, "{junit}");
    assert!(!junit.contains("<failure"));
    // a job that was promised a GPU fails loudly instead
    let o = harness(None, &["run", "--seed", "3", "--count", "20", "--require-gpu", "--out", d.join("r2").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().filter(|l| l.starts_with("error:")).count(), 1);
}

/// `--inputs` in whole warps is refused without a GPU as on one (the same command would
/// fail on the GPU machine), before the driver is asked; only the simulated executor, which
/// runs no kernel, takes any count.
#[test]
fn inputs_not_in_whole_warps_are_refused_without_a_gpu_too() {
    let d = tmp("inputs-nogpu");
    for n in ["33", "4", "288"] {
        let out = d.join(format!("r{n}"));
        let o = harness(None, &["run", "--seed", "3", "--count", "4", "--inputs", n, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(lines[0].contains(&format!("--inputs {n}")) && lines[0].contains("multiple of 32"), "{err}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("PASSED") && !out.exists(), "nothing ran: {}", text(&o));
    }
    let out = d.join("sim");
    let o = harness(Some("ok"), &["run", "--seed", "3", "--count", "4", "--inputs", "33", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(summary(&out)["totals"]["inputs"], 4 * 33);
}

#[test]
fn a_crashing_worker_is_survived_and_the_fault_isolated() {
    let d = tmp("crash");
    let ws = words(11, 40);
    let (bad1, bad2) = (ws[5], ws[29]);
    let fake = format!("crash-on:{},fault-on:{}", format_hex(bad1), format_hex(bad2));
    let o = harness(Some(&fake), &["run", "--seed", "11", "--count", "40", "--inputs", "8", "--batch", "16", "--out", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = summary(&d);
    assert_eq!(s["hardware"]["used"], false, "the simulation is never reported as hardware");
    assert_eq!(s["hardware"]["simulated"], true);
    let faults: Vec<&str> = s["faults"].as_array().unwrap().iter().map(|f| f["encoding"].as_str().unwrap()).collect();
    let mut want = [format_hex(bad1), format_hex(bad2)];
    want.sort();
    assert_eq!(faults, want.iter().map(String::as_str).collect::<Vec<_>>());
    for f in s["faults"].as_array().unwrap() {
        let w = hmul2_harness::isa::parse_hex(f["encoding"].as_str().unwrap()).unwrap();
        assert_eq!(f["text"].as_str().unwrap(), hmul2_harness::isa::render(&decode(w).unwrap()));
    }
    assert_eq!(s["totals"]["instructions"], 40);
    assert_eq!(s["totals"]["faults"], 2);
    assert_eq!(s["totals"]["compared"], 38 * 8, "every other instruction still ran");
    assert_eq!(s["totals"]["mismatches"], 0);
}

#[test]
fn a_hung_worker_times_out_and_is_replaced() {
    let d = tmp("hang");
    let ws = words(12, 6);
    let fake = format!("hang-on:{}", format_hex(ws[2]));
    // a short limit, as a fraction: each level of the bisection down to the hung word waits it
    // out (1.25 s leaves a loaded machine room to answer the healthy launches in time)
    let o = harness(Some(&fake), &["run", "--seed", "12", "--count", "6", "--inputs", "2", "--batch", "6", "--timeout", "1.25", "--out", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = summary(&d);
    assert_eq!(s["totals"]["faults"], 1);
    assert_eq!(s["faults"][0]["encoding"], format_hex(ws[2]));
    assert!(s["faults"][0]["detail"].as_str().unwrap().contains("timed out after 1.25 s"), "{s}");
    assert_eq!(s["totals"]["compared"], 5 * 2);
}

#[test]
fn journal_and_resume_lose_nothing() {
    let d = tmp("resume");
    let m = format_hex(sat_mask());
    let fake = format!("flip-if:{m}:{m},fault-on:{}", format_hex(words(13, 60)[17]));
    let args = |out: &Path| -> Vec<String> {
        ["run", "--seed", "13", "--count", "60", "--inputs", "4", "--batch", "8", "--minimize-budget", "0", "--out", out.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let whole = d.join("whole");
    let a = args(&whole);
    let o = harness(Some(&fake), &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let want = summary(&whole);
    assert!(want["totals"]["mismatches"].as_u64().unwrap() > 0 && want["totals"]["faults"] == 1);

    let part = d.join("part");
    let mut a = args(&part);
    a.extend(["--stop-after-batches".into(), "3".into()]);
    let o = harness(Some(&fake), &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!part.join("summary.json").exists());
    let journal = std::fs::read_to_string(part.join("journal.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 4, "header + 3 batches");
    // a kill in the middle of a write leaves a torn line: it is dropped and redone
    std::fs::write(part.join("journal.jsonl"), format!("{journal}{{\"type\":\"batch\",\"items\":[{{\"ind")).unwrap();
    // resuming without --resume refuses to overwrite
    let o = harness(Some(&fake), &args(&part).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let mut a = args(&part);
    a.push("--resume".into());
    let o = harness(Some(&fake), &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("24 items already journaled"), "{}", text(&o));
    assert_eq!(essence(&summary(&part)), essence(&want));
    // the rate counts only what this process compared, not the journaled part
    let (t, all) = (&summary(&part)["timing"], summary(&part)["totals"]["compared"].as_u64().unwrap());
    assert!(t["compared"].as_u64().unwrap() < all && t["execute_s"].as_f64().unwrap() > 0.0, "{t}");
    assert_eq!(want["timing"]["compared"].as_u64().unwrap(), want["totals"]["compared"].as_u64().unwrap());

    // damage before the end is a one-line error naming the file
    let j = std::fs::read_to_string(part.join("journal.jsonl")).unwrap();
    let mut lines: Vec<&str> = j.lines().collect();
    lines[2] = "{not json";
    std::fs::write(part.join("journal.jsonl"), lines.join("\n") + "\n").unwrap();
    let o = harness(Some(&fake), &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("journal.jsonl:3: corrupt journal line"), "{err}");
}

#[test]
fn a_run_killed_mid_batch_resumes_without_loss() {
    let d = tmp("kill");
    let ws = words(17, 80);
    let m = format_hex(sat_mask());
    let args = |out: &Path| -> Vec<String> {
        // one host thread: batches finish in order, so the kill lands after exactly 10
        // (with more, a batch still minimizing when the hang takes the device waits on it)
        ["run", "--seed", "17", "--count", "80", "--inputs", "2", "--batch", "5", "--timeout", "600", "--host-threads", "1", "--out", out.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let strs = |v: &[String]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let whole = d.join("whole");
    let o = harness(Some(&format!("flip-if:{m}:{m}")), &strs(&args(&whole)).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // the same run, with item 52 hanging its batch: kill the process there (SIGKILL)
    let part = d.join("part");
    let mut child = Command::new(BIN)
        .args(args(&part))
        .env("HMUL2_FAKE_EXECUTOR", format!("flip-if:{m}:{m},hang-on:{}", format_hex(ws[52])))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let journal = part.join("journal.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::fs::read_to_string(&journal).map(|j| j.lines().count()).unwrap_or(0) < 11 {
        assert!(std::time::Instant::now() < deadline, "the run never reached the hanging batch");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let o = harness(Some(&format!("flip-if:{m}:{m}")), &[strs(&args(&part)), vec!["--resume".into()]].concat().iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("50 items already journaled"), "{}", text(&o));
    assert_eq!(essence(&summary(&part)), essence(&summary(&whole)));
}

#[test]
fn shards_merged_equal_one_unsharded_run() {
    let d = tmp("shard");
    let m = format_hex(sat_mask());
    let fake = format!("flip-if:{m}:{m},crash-on:{}", format_hex(words(14, 50)[7]));
    let run_on = |out: &Path, shard: &str, devices: &str| {
        let o = harness(
            Some(&fake),
            &[
                "run",
                "--seed",
                "14",
                "--count",
                "50",
                "--inputs",
                "4",
                "--batch",
                "7",
                "--shard",
                shard,
                "--minimize-budget",
                "8",
                "--devices",
                devices,
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    };
    let run = |out: &Path, shard: &str| run_on(out, shard, "0");
    run(&d.join("one"), "0/1");
    // two workers (one per device) share the batches: same results
    run_on(&d.join("two"), "0/1", "0,1");
    assert_eq!(essence(&summary(&d.join("two"))), essence(&summary(&d.join("one"))));
    run(&d.join("s0"), "0/2");
    run(&d.join("s1"), "1/2");
    let o = harness(None, &["merge", d.join("s0").to_str().unwrap(), d.join("s1").to_str().unwrap(), "--out", d.join("merged").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let (one, merged) = (summary(&d.join("one")), summary(&d.join("merged")));
    assert_eq!(essence(&merged), essence(&one));
    assert_eq!(merged["shard"], "all/2");
    // the options travel with the report: the merged ones are the run's, for all shards
    let mut want = one["config"].clone();
    want["shard"] = "all/2".into();
    assert_eq!(merged["config"], want);
    assert!(merged["timing"].is_null() && !one["timing"].is_null(), "a merged report has no one wall clock");
    assert!(std::fs::read_to_string(d.join("merged/junit.xml")).unwrap().contains("<failure"));
    // the shards split by index: disjoint and complete
    let (a, b) = (summary(&d.join("s0")), summary(&d.join("s1")));
    assert_eq!(a["totals"]["instructions"].as_u64().unwrap() + b["totals"]["instructions"].as_u64().unwrap(), 50);
    // a shard twice is refused
    let o = harness(None, &["merge", d.join("s0").to_str().unwrap(), d.join("s0").to_str().unwrap(), "--out", d.join("bad").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_mismatch_is_minimized_to_its_essential_field_and_written_as_vectors() {
    let d = tmp("minimize");
    let m = format_hex(sat_mask());
    let fake = format!("flip-if:{m}:{m}");
    let vec_dir = d.join("vectors");
    let o = harness(
        Some(&fake),
        &[
            "run",
            "--seed",
            "15",
            "--mode",
            "factorial",
            "--instruction",
            "HMUL2",
            "--form",
            "imm",
            "--inputs",
            "2",
            "--batch",
            "64",
            "--out",
            d.join("r").to_str().unwrap(),
            "--vectors",
            vec_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = summary(&d.join("r"));
    let ms = s["mismatches"].as_array().unwrap();
    assert_eq!(ms.len(), 256, "half of the 512 factorial words are .SAT");
    for f in ms {
        let orig = decode(hmul2_harness::isa::parse_hex(f["encoding"].as_str().unwrap()).unwrap()).unwrap();
        assert!(orig.sat);
        let min = f["minimized"].as_str().map(|h| decode(hmul2_harness::isa::parse_hex(h).unwrap()).unwrap()).unwrap_or(orig);
        assert!(min.sat, "the essential field stays");
        assert!(min.form() == Form::Imm);
        assert_eq!((min.a_mods, min.flush, min.format), Default::default(), "{}", f["minimized_text"]);
        assert_eq!(min.pred, hmul2_harness::isa::Pred::ALWAYS);
        assert!(f["expected"].is_string() && f["got"].is_string() && f["inputs"]["a"].is_string());
    }
    // every observed result is a vector line in the agreed format
    assert!(!vec_dir.join("hardware").exists(), "a simulation never writes hardware vectors");
    let files: Vec<_> = std::fs::read_dir(vec_dir.join("simulated")).unwrap().collect();
    assert_eq!(files.len(), 1);
    let body = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    assert_eq!(body.lines().count(), 512 * 2);
    let v: Value = serde_json::from_str(body.lines().next().unwrap()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["a", "b", "d", "encoding", "expect", "origin", "pred"]);
    assert!(v["origin"].as_str().unwrap().starts_with("simulated:"));
}

#[test]
fn vectors_per_instruction_keeps_the_first_inputs_and_every_mismatch() {
    let d = tmp("keep");
    let m = format_hex(sat_mask());
    let vec_dir = d.join("vectors");
    let o = harness(
        Some(&format!("flip-if:{m}:{m}")),
        &[
            "run",
            "--seed",
            "16",
            "--mode",
            "factorial",
            "--instruction",
            "HMUL2",
            "--form",
            "imm",
            "--inputs",
            "6",
            "--batch",
            "64",
            "--minimize-budget",
            "0",
            "--vectors-per-instruction",
            "2",
            "--host-threads",
            "3",
            "--out",
            d.join("r").to_str().unwrap(),
            "--vectors",
            vec_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let files: Vec<_> = std::fs::read_dir(vec_dir.join("simulated")).unwrap().collect();
    let body = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    let mut per_word: std::collections::BTreeMap<u128, usize> = Default::default();
    for l in body.lines() {
        let v = hmul2_harness::vectors::parse_line(l).unwrap_or_else(|e| panic!("{l}: {e}"));
        *per_word.entry(v.encoding).or_default() += 1;
    }
    assert_eq!(per_word.len(), 512, "every factorial word has vectors");
    for (w, n) in per_word {
        // a .SAT word mismatches on all 6 inputs (all kept), any other keeps its first 2
        let want = if decode(w).unwrap().sat { 6 } else { 2 };
        assert_eq!(n, want, "{}", format_hex(w));
    }
    let bad = harness(Some("ok"), &["run", "--vectors-per-instruction", "some", "--out", d.join("x").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("want a number or `all`"), "{}", text(&bad));
}

#[test]
fn exhaustive_digests_find_the_differing_chunks() {
    let d = tmp("exhaustive");
    // a word the sweep can run on a GPU too: operand 2 per thread (R or immediates)
    // (two sources: a three-source word needs --c)
    let two = |w: u128| decode(w).is_ok_and(|i| i.c.is_none());
    let w = format_hex(words(16, 64).into_iter().find(|&w| hmul2_harness::kernel::digest::check_form(w).is_ok() && two(w)).unwrap());
    // operand 1 = 0x0007 in both halves: one row of the 2^20-input test space differs
    let o = harness(
        Some("flip-a:0x00070007"),
        &[
            "run",
            "--seed",
            "1",
            "--mode",
            "exhaustive",
            "--encoding",
            &w,
            "--space-bits",
            "20",
            "--chunk-bits",
            "12",
            "--out",
            d.to_str().unwrap(),
            "--vectors",
            d.join("v").to_str().unwrap(),
            "--vectors-per-instruction",
            "3",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = summary(&d);
    assert_eq!(s["totals"]["inputs"], 1u64 << 20);
    assert_eq!(s["totals"]["compared"], 1u64 << 20);
    assert_eq!(s["totals"]["mismatches"], 1u64 << 16, "every b for a = 7");
    let ms = s["mismatches"].as_array().unwrap();
    assert!(!ms.is_empty() && ms.iter().all(|f| f["inputs"]["a"] == "0x00070007"));
    // vectors of the fetched chunks: every mismatch (at most 4096 per chunk, here exactly
    // 4096 per chunk) and the first 3 results of each fetched chunk, nothing more
    let files: Vec<_> = std::fs::read_dir(d.join("v").join("simulated")).unwrap().collect();
    let body = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    let vs: Vec<_> = body.lines().map(|l| hmul2_harness::vectors::parse_line(l).unwrap()).collect();
    let row = vs.iter().filter(|v| v.inputs.a == 0x0007_0007).count();
    assert_eq!(row, 1 << 16, "every mismatching result is a vector");
    assert!(vs.len() - row <= 3 * 16, "{} vectors beside the mismatches", vs.len() - row);
    // clean: nothing differs, nothing fetched
    let o = harness(
        Some("ok"),
        &[
            "run",
            "--seed",
            "1",
            "--mode",
            "exhaustive",
            "--encoding",
            &w,
            "--space-bits",
            "20",
            "--chunk-bits",
            "12",
            "--out",
            d.join("clean").to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(summary(&d.join("clean"))["totals"]["mismatches"], 0);
}

/// A job frame whose payload is not a job: the worker answers it with a setup frame naming
/// the protocol error (no output, no fault), stays up, and ends cleanly at end of input.
#[test]
fn a_worker_fed_a_garbage_job_answers_a_setup_error_not_a_panic() {
    use std::io::Write;
    let mut c = Command::new(BIN)
        .args(["worker", "--device", "0"])
        .env("HMUL2_FAKE_EXECUTOR", "ok")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // a job frame: its tag (sequence number 1, any digest), then five bytes that are no job
    c.stdin.take().unwrap().write_all(b"HMW1\x01\x15\0\0\0\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0abcde").unwrap();
    let o = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "a bad job is answered, then EOF ends the worker: {err}");
    assert!(!err.contains("panicked"), "{err}");
    use hmul2_harness::gpu::protocol::{decode_answer, read_frame, KIND_SETUP};
    let mut out = &o.stdout[..];
    let (hello, _) = read_frame(&mut out).expect("the hello frame");
    assert_eq!(hello, 5, "hello first");
    let (kind, payload) = read_frame(&mut out).expect("an answer to the bad job");
    assert_eq!(kind, KIND_SETUP, "{}", String::from_utf8_lossy(&payload));
    match decode_answer(kind, payload) {
        Ok((tag, Err(hmul2_harness::gpu::ExecError::Setup(m)))) => {
            assert!(m.starts_with("worker protocol:"), "{m}");
            assert_eq!((tag.seq, tag.digest), (1, 0), "the answer carries the job's tag");
        }
        other => panic!("not a setup answer: {other:?}"),
    }
    assert!(out.is_empty(), "nothing after the answer: {out:?}");
}

/// Every instruction the isa knows has a row in the reference's operation table, so
/// `build-kernel` builds cases of the comparisons and min/max (issue 41); the exhaustive mode,
/// whose digest kernel sums destinations, refuses them with one line naming each, exit 2.
#[test]
fn every_instruction_of_the_isa_is_computed_and_builds_and_exhaustive_mode_refuses_what_it_does_not_sweep() {
    use hmul2_harness::isa::{encode, Inst, Op, Operand2};
    // the reference computes every instruction the isa knows: none is drawn, built or run
    // without its arithmetic (the refusal `run` keeps for such an instruction has no subject now)
    let pending: Vec<Op> = Op::ALL.into_iter().filter(|&o| hmul2_harness::reference::operation(o).is_none()).collect();
    assert!(pending.is_empty(), "instructions the reference does not compute: {pending:?}");
    assert_eq!(hmul2_harness::reference::IMPLEMENTED.len(), Op::ALL.len());
    for op in [Op::Hset2, Op::Hsetp2, Op::Hmnmx2] {
        let m = op.mnemonic();
        let out = tmp(&format!("computed-{m}")).join("kernel");
        let o = harness(None, &["build-kernel", "--seed", "5", "--count", "24", "--instruction", m, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "build-kernel --instruction {m}: {}", String::from_utf8_lossy(&o.stderr));
        let manifest: Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        let cases = manifest["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 24, "{m}");
        for c in cases {
            let w = hmul2_harness::isa::parse_hex(c["encoding"].as_str().unwrap()).unwrap();
            assert_eq!(hmul2_harness::isa::decode(w).map(|i| i.op), Ok(op), "{m}: a case of another instruction");
        }
        // the digest kernel sums destinations: exhaustive mode refuses the comparisons and
        // min/max in one line naming the instruction, and writes nothing
        let word = format_hex(encode(&Inst::of(op, 0, 1, Operand2::Reg(2))).unwrap());
        let o = harness(None, &["run", "--mode", "exhaustive", "--encoding", &word]);
        let err = String::from_utf8_lossy(&o.stderr);
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(o.status.code(), Some(2), "exhaustive {m}: {err}");
        assert!(errors.len() == 1 && errors[0].contains(m), "exhaustive {m}: one line naming {m}: {err}");
    }
}

/// The simulated executor answers the batch road's record, destination then P0..P6 after:
/// a simulated run of HSETP2 compares its predicate results on every input (and its vector
/// lines carry them, as a line of an instruction that writes predicates must), and a device
/// that leaves P0 wrong after every HSETP2 (`pred-flip-if` on its register form's opcode; the
/// preflight's HMUL2 stays right) is a mismatch of the predicates on every compared input,
/// the destination agreeing.
#[test]
fn a_simulated_run_of_hsetp2_compares_its_predicates_and_finds_a_wrong_one() {
    let d = tmp("sim-hsetp2");
    let vec_dir = d.join("v");
    let args = ["run", "--seed", "21", "--count", "40", "--instruction", "HSETP2", "--form", "rrr", "--inputs", "32", "--out"];
    let o = harness(Some("ok"), &[&args[..], &[d.join("r").to_str().unwrap(), "--vectors", vec_dir.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = summary(&d.join("r"));
    let n = |k: &str| s["totals"][k].as_u64().unwrap();
    assert!(n("compared") >= 30 * 32 && n("mismatches") == 0, "{}", s["totals"]);
    assert_eq!(n("compared") + n("undefined"), 40 * 32, "{}", s["totals"]);
    let files: Vec<_> = std::fs::read_dir(vec_dir.join("simulated")).unwrap().collect();
    let body = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    assert!(body.lines().count() > 0);
    for l in body.lines() {
        let v = hmul2_harness::vectors::parse_line(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v.expect_pred.is_some(), "an HSETP2 line records the predicates after: {l}");
    }
    use hmul2_harness::isa::{encode, Inst, Op, Operand2};
    // the opcode field (bits 0..8) and the register-form bit: every HSETP2 word of the run
    let hsetp2 = encode(&Inst::of(Op::Hsetp2, 0, 1, Operand2::Reg(2))).unwrap() & 0x1ff;
    let every = format!("pred-flip-if:{}:{}", format_hex(0x1ff), format_hex(hsetp2));
    let o = harness(Some(&every), &[&args[..], &[d.join("bad").to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = summary(&d.join("bad"));
    let t = &s["totals"];
    assert!(t["compared"].as_u64().unwrap() > 0 && t["mismatches"] == t["compared"], "every compared input differs: {t}");
    let ms = s["mismatches"].as_array().unwrap();
    assert!(!ms.is_empty());
    for f in ms {
        assert!(f["detail"].as_str().unwrap().contains("the predicates P0..P6 after are"), "{f}");
        assert_eq!(f["expected"], f["got"], "the destination agrees: {f}");
    }
    let o = harness(Some(&format!("pred-flip-if:{}", format_hex(0))), &[&args[..], &[d.join("refused").to_str().unwrap()]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("HMUL2_FAKE_EXECUTOR") && err.contains("want pred-flip-if:MASK:VALUE") && !err.contains("panicked"), "{err}");
}
