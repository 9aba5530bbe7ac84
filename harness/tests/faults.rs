//! The fault-injection suite: each fault a nightly run can meet, injected for real, and
//! what docs/runner.md promises under it (nothing obtained is lost; nothing passes that
//! did not).
//!
//! Faults: a write that fails part way (a full disk: a file-size limit set on the process),
//! a shard that stopped early merged with a complete one, two runs on one folder, a
//! journal with a batch written twice, links planted in the report folder, SIGTERM and
//! SIGINT mid-run, counts that overflow in a merge, and runs of nothing.

use crate::common;

use common::{summary, text, tmp, BIN};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn harness(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).env("HMUL2_FAKE_EXECUTOR", "ok");
    c
}

fn run(args: &[&str]) -> Output {
    harness(args).output().unwrap()
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p).unwrap_or_default().lines().map(str::to_string).collect()
}

/// The one vector file of a run's `--vectors DIR` (simulated results).
fn vector_file(dir: &Path) -> std::path::PathBuf {
    let d = dir.join("simulated");
    let files: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn journaled_results(out: &Path) -> u64 {
    lines(&out.join("journal.jsonl"))
        .iter()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|b| b["type"] == "batch")
        .flat_map(|b| b["items"].as_array().unwrap().iter().map(|i| results(&i["totals"])).collect::<Vec<_>>())
        .sum()
}

/// Results a run's vectors hold a line for: those compared, and those the reference leaves
/// undefined (an HSETP2 that writes one predicate twice with different results: kept as
/// evidence like any result).
fn results(totals: &Value) -> u64 {
    totals["compared"].as_u64().unwrap() + totals["undefined"].as_u64().unwrap()
}

const SMALL: [&str; 6] = ["--inputs", "8", "--batch", "16", "--count", "600"];

/// Class 1: a write of vectors fails part way (the file-size limit of the process stands in
/// for a full disk: the write fails with EFBIG where a full disk gives ENOSPC). The batch
/// whose lines could not be written is not journaled; a resume redoes it, and in the end
/// every result is a vector line exactly once.
#[test]
fn a_failing_vector_write_loses_nothing_and_resume_completes_it() {
    let d = tmp("fault-disk");
    let (out, vec) = (d.join("r"), d.join("v"));
    let mut args = vec!["run", "--seed", "11", "--out", out.to_str().unwrap(), "--vectors", vec.to_str().unwrap()];
    args.extend(SMALL);
    // 384 KiB: the vectors (about 170 bytes a result, 4800 results) outgrow it after a few
    // batches; the journal and the summary (about 270 KiB with its coverage of seven
    // instructions' bits) stay below it. SIGXFSZ is ignored so the write returns an error.
    let script = "trap '' XFSZ; ulimit -f 768; exec \"$0\" \"$@\"";
    let o = Command::new("bash").arg("-c").arg(script).arg(BIN).args(&args).env("HMUL2_FAKE_EXECUTOR", "ok").output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains(".jsonl") && t.contains("not journaled"), "the error names the vector file: {t}");
    let s = summary(&out);
    assert_eq!(s["status"], "stopped", "{s}");
    let f = vector_file(&vec);
    let written = lines(&f);
    assert!(!written.is_empty() && written.iter().all(|l| l.ends_with('}')), "whole lines only");
    assert_eq!(written.len() as u64, journaled_results(&out), "every journaled result is a line, and nothing else is");
    // without the limit the resume finishes the run: every result exactly once
    args.push("--resume");
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let all = lines(&f);
    let s = summary(&out);
    assert_eq!(s["status"], "complete");
    assert_eq!(all.len() as u64, results(&s["totals"]));
    let unique: std::collections::BTreeSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "no line written twice");
}

/// Class 1, the other half: lines written after the last journaled batch (a kill between
/// the vector write and the batch's journal line) and a torn last line are cut on resume,
/// because the journal announced them (a `pending` line before the write); bytes no line
/// announced (another writer's) are never cut.
#[test]
fn resume_cuts_vector_lines_no_journaled_batch_accounts_for() {
    let d = tmp("fault-torn");
    let (out, vec) = (d.join("r"), d.join("v"));
    let mut args = vec!["run", "--seed", "12", "--out", out.to_str().unwrap(), "--vectors", vec.to_str().unwrap()];
    args.extend(SMALL);
    let mut first = args.clone();
    first.extend(["--stop-after-batches", "3"]);
    assert_eq!(run(&first).status.code(), Some(2));
    let f = vector_file(&vec);
    let before = std::fs::read_to_string(&f).unwrap();
    let extra = before.lines().next().unwrap().to_string() + "\n{\"encoding\": \"0x";
    std::fs::write(&f, before.clone() + &extra).unwrap();
    args.push("--resume");
    // no journal line announced these bytes: refused, nothing cut
    let o = run(&args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("announced no write there") && t.contains("nothing was cut"), "{t}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), before.clone() + &extra);
    // as a run killed mid-write leaves them: announced by the journal's last line
    let mut j = lines(&out.join("journal.jsonl"));
    let end = before.len() as u64;
    let pending =
        serde_json::json!({"type": "pending", "file": f.file_name().unwrap().to_str().unwrap(), "start": end, "end": end + 2 * extra.len() as u64, "sum": "0"});
    j.push(pending.to_string());
    common::reseal(&mut j);
    std::fs::write(out.join("journal.jsonl"), j.join("\n") + "\n").unwrap();
    let o = run(&args);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("cutting"), "the cut is said: {t}");
    let all = lines(&f);
    assert_eq!(all.len() as u64, results(&summary(&out)["totals"]));
    assert!(std::fs::read_to_string(&f).unwrap().starts_with(&before));
}

/// Class 2 and 11: a shard that stopped early makes the merge fail, naming it; counts that
/// overflow make it fail too.
#[test]
fn a_merge_with_an_incomplete_shard_or_overflowing_counts_fails() {
    let d = tmp("fault-merge");
    let (a, b, m) = (d.join("a"), d.join("b"), d.join("m"));
    let mut args = vec!["run", "--seed", "13", "--shard", "0/2", "--out", a.to_str().unwrap()];
    args.extend(SMALL);
    assert!(run(&args).status.success());
    // shard 1 is killed after two batches
    let mut args = vec!["run", "--seed", "13", "--shard", "1/2", "--out", b.to_str().unwrap()];
    args.extend(SMALL);
    let mut killed = args.clone();
    killed.extend(["--stop-after-batches", "2"]);
    assert_eq!(run(&killed).status.code(), Some(2));
    // the killed shard has no summary: the merge says which folder lacks one
    let o = run(&["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--out", m.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // a partial summary (an interrupted or stopped run writes one)
    let mut s = summary(&a);
    s["shard"] = "1/2".into();
    s["status"] = "stopped".into();
    std::fs::write(b.join("summary.json"), s.to_string()).unwrap();
    let o = run(&["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--out", m.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("shard 1/2") && t.contains("stopped early") && !t.contains("PASSED"), "{t}");
    // a complete-looking summary with fewer instructions than it planned
    s["status"] = "complete".into();
    s["totals"]["instructions"] = (s["planned"].as_u64().unwrap() - 1).into();
    std::fs::write(b.join("summary.json"), s.to_string()).unwrap();
    let t = text(&run(&["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--out", m.to_str().unwrap()]));
    assert!(t.contains("shard 1/2") && t.contains("instructions are in it"), "{t}");
    // counts that wrap
    s["totals"]["instructions"] = s["planned"].clone();
    s["totals"]["inputs"] = u64::MAX.into();
    std::fs::write(b.join("summary.json"), s.to_string()).unwrap();
    let o = run(&["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--out", m.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("overflows"), "{t}");
}

/// Class 3: a second run on a folder in use is refused; a journal that holds an item twice
/// (two writers) or an item outside the run is corrupt, not more work done.
#[test]
fn two_runs_on_one_folder_and_a_doubled_journal_are_refused() {
    let d = tmp("fault-lock");
    let out = d.join("r");
    let o_s = out.to_str().unwrap();
    let mut long = harness(&["run", "--seed", "14", "--count", "400000", "--out", o_s])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // wait until the first run holds the folder (its journal has a batch)
    let t0 = std::time::Instant::now();
    while lines(&out.join("journal.jsonl")).len() < 2 {
        assert!(t0.elapsed().as_secs() < 60, "the first run never journaled");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // the lock is the folder's own (flock on the folder): no file in it can be deleted to get past it
    assert!(!out.join(".lock").exists());
    let o = run(&["run", "--seed", "14", "--count", "400000", "--out", o_s, "--resume"]);
    let t = text(&o);
    long.kill().unwrap();
    long.wait().unwrap();
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("another run"), "{t}");

    let out = d.join("doubled");
    let mut args = vec!["run", "--seed", "15", "--out", out.to_str().unwrap()];
    args.extend(SMALL);
    assert!(run(&args).status.success());
    let mut j = lines(&out.join("journal.jsonl"));
    j.push(j[1].clone());
    std::fs::write(out.join("journal.jsonl"), j.join("\n") + "\n").unwrap();
    args.push("--resume");
    let t = text(&run(&args));
    assert!(t.contains(&format!("journal.jsonl:{}: corrupt", j.len())) && t.contains("integrity check"), "{t}");
    // the same line with its check recomputed (a writer that seals its lines): still two writers
    common::reseal(&mut j);
    std::fs::write(out.join("journal.jsonl"), j.join("\n") + "\n").unwrap();
    let t = text(&run(&args));
    assert!(t.contains("corrupt") && t.contains("journaled twice"), "{t}");
    // an item of another shard
    j.pop();
    let mut b: Value = serde_json::from_str(&j[1]).unwrap();
    b["items"][0]["index"] = 10_000_000.into();
    j[1] = b.to_string();
    common::reseal(&mut j);
    std::fs::write(out.join("journal.jsonl"), j.join("\n") + "\n").unwrap();
    let t = text(&run(&args));
    assert!(t.contains("corrupt") && t.contains("10000000"), "{t}");
}

/// Class 8: links planted in the report folder are never written through.
#[test]
fn links_planted_in_output_folders_are_not_followed() {
    let d = tmp("fault-links");
    let victim = d.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = d.join("r");
    std::fs::create_dir_all(&out).unwrap();
    for f in ["summary.json", "junit.xml"] {
        std::os::unix::fs::symlink(&victim, out.join(f)).unwrap();
    }
    let mut args = vec!["run", "--seed", "16", "--out", out.to_str().unwrap()];
    args.extend(SMALL);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(summary(&out)["totals"]["compared"].as_u64().unwrap() > 0);
    // a planted journal and a planted vector file are refused
    let out = d.join("r2");
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("journal.jsonl")).unwrap();
    let mut args = vec!["run", "--seed", "16", "--out", out.to_str().unwrap(), "--resume"];
    args.extend(SMALL);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let out = d.join("r3");
    let vec = d.join("v");
    let mut args = vec!["run", "--seed", "16", "--out", out.to_str().unwrap(), "--vectors", vec.to_str().unwrap()];
    args.extend(SMALL);
    let mut first = args.clone();
    first.extend(["--stop-after-batches", "1"]);
    assert_eq!(run(&first).status.code(), Some(2));
    // the run's vector file replaced by a link: a resume refuses to write through it
    let f = vector_file(&vec);
    std::fs::remove_file(&f).unwrap();
    std::os::unix::fs::symlink(&victim, &f).unwrap();
    args.push("--resume");
    let o = run(&args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("symbolic link"), "{t}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // build-kernel replaces a planted link by its file
    let k = d.join("k");
    std::fs::create_dir_all(&k).unwrap();
    std::os::unix::fs::symlink(&victim, k.join("kernel.cubin")).unwrap();
    let o = Command::new(BIN).args(["build-kernel", "--count", "4", "--seed", "1", "--out", k.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// Class 14: SIGTERM (and SIGINT) mid-run: the batches in flight finish, an honest partial
/// summary says the run was interrupted, the exit is 2, and a resume completes the run.
#[test]
fn a_signal_leaves_an_interrupted_summary_and_resume_completes() {
    // the two signals' runs are independent (their own folders): side by side
    std::thread::scope(|sc| {
        for (sig, name) in [("TERM", "SIGTERM"), ("INT", "SIGINT")] {
            sc.spawn(move || signal_then_resume(sig, name));
        }
    });
}

fn signal_then_resume(sig: &str, name: &str) {
    {
        let d = tmp(&format!("fault-signal-{sig}"));
        let out = d.join("r");
        let args = ["run", "--seed", "17", "--count", "60000", "--inputs", "32", "--out", out.to_str().unwrap()];
        let child = harness(&args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let t0 = std::time::Instant::now();
        while lines(&out.join("journal.jsonl")).len() < 3 {
            assert!(t0.elapsed().as_secs() < 60, "the run never journaled");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(Command::new("kill").args([&format!("-{sig}"), &child.id().to_string()]).status().unwrap().success());
        let o = child.wait_with_output().unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains(&format!("interrupted by {name}")), "{t}");
        let s = summary(&out);
        assert_eq!(s["status"], "interrupted", "{s}");
        let done = s["totals"]["instructions"].as_u64().unwrap();
        assert!(done > 0 && done < 60000, "{done}");
        assert_eq!(s["faults"].as_array().unwrap().len(), 0, "stopping is never blamed on an instruction");
        assert!(std::fs::read_to_string(out.join("junit.xml")).unwrap().contains("incomplete run"));
        let mut resume = args.to_vec();
        resume.push("--resume");
        let o = run(&resume);
        assert!(o.status.success(), "{}", text(&o));
        let s = summary(&out);
        assert_eq!((s["status"].as_str(), s["totals"]["instructions"].as_u64()), (Some("complete"), Some(60000)));
    }
}

/// Class 13: a run of nothing is an error; a word exhaustive mode cannot sweep is refused
/// before any report file exists.
#[test]
fn runs_of_nothing_and_unsweepable_words_are_refused_up_front() {
    let d = tmp("fault-nothing");
    let out = d.join("r");
    let o = run(&["run", "--count", "0", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("a run of nothing"));
    let o = run(&["run", "--count", "1", "--shard", "1/4", "--seed", "1", "--out", out.to_str().unwrap()]);
    // shard 1/4 does not own item 0 (the deal is a fixed hash of the index)
    assert!(!hmul2_harness_shard_owns(1, 4, 0));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("shard 1/4: none of the 1 instructions"), "{}", text(&o));
    assert!(!out.join("summary.json").exists());
    // a c[] word: operand 2 is one value per launch, not per thread
    // placed in the harness's bank 3, so only the sweep itself can refuse it
    let c_word = hmul2_harness::isa::format_hex(hmul2_harness::kernel::place(hmul2_harness::isa::parse_hex("0x02008e0000200a00f17be60006853a32").unwrap()));
    let c_word = c_word.as_str();
    let out2 = d.join("r2");
    let o = run(&["run", "--mode", "exhaustive", "--encoding", c_word, "--out", out2.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("b cannot be swept"), "{t}");
    assert!(!out2.exists(), "nothing written for a refused run");
    // a three-source word needs its operand 3 (--c); a two-source word has none; --c is
    // for exhaustive mode only; a malformed value is refused by name
    let hfma2 = "0x000fc200000000030000000201007231"; // HFMA2 R0, R1, R2, R3
    let hmul2 = "0x000fe200000000000000000201007232"; // HMUL2 R0, R1, R2
    let o2 = out2.to_str().unwrap();
    for (args, want) in [
        (vec!["--mode", "exhaustive", "--encoding", hfma2], "give its value with --c HEX"),
        (vec!["--mode", "exhaustive", "--encoding", hmul2, "--c", "0x3c003c00"], "--c: HMUL2 has no third source"),
        (vec!["--count", "4", "--c", "0x3c003c00"], "--c is for --mode exhaustive"),
        (vec!["--mode", "exhaustive", "--encoding", hfma2, "--c", "0x3c00"], "want 0x + 8 hex digits"),
    ] {
        let o = run(&[&["run"][..], &args, &["--out", o2]].concat());
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(want) && !t.contains("panicked"), "{args:?}: {t}");
        assert!(!out2.exists(), "{args:?}: nothing written for a refused run");
    }
}

fn hmul2_harness_shard_owns(index: u64, count: u64, item: u64) -> bool {
    hmul2_harness::run::Shard::parse(&format!("{index}/{count}")).unwrap().owns(item)
}

/// Class 5: a disassembler that hangs is killed at the tool time limit; `oracle` and `run`
/// end with exit 2 naming the tool and the limit, and the run's report is written.
#[test]
fn a_hanging_tool_is_killed_at_its_limit() {
    let d = tmp("fault-hang");
    let tool = d.join("nvdisasm");
    std::fs::write(&tool, "#!/bin/sh\nsleep 600\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let t0 = std::time::Instant::now();
    let o = Command::new(BIN).args(["oracle", "--count", "10", "--seed", "1"]).env("HMUL2_NVDISASM", &tool).env("HMUL2_TOOL_TIMEOUT", "1").output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("nvdisasm did not finish within 1 s") && t.contains("HMUL2_TOOL_TIMEOUT"), "{t}");
    assert!(t0.elapsed().as_secs() < 30, "{:?}", t0.elapsed());
    let out = d.join("r");
    let mut args = vec!["run", "--seed", "18", "--out", out.to_str().unwrap()];
    args.extend(SMALL);
    let o = harness(&args).env("HMUL2_NVDISASM", &tool).env("HMUL2_TOOL_TIMEOUT", "1").output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("did not finish within 1 s"), "{t}");
    let s = summary(&out);
    assert_eq!(s["software_checks"]["oracle"]["ok"], false);
    assert_eq!(s["totals"]["instructions"], 600, "every batch is in the report");
    let o = Command::new(BIN).args(["oracle", "--count", "1"]).env("HMUL2_TOOL_TIMEOUT", "soon").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// Class 6: stray answer frames on a worker's stdout never shift answers onto other jobs:
/// an answer whose tag is not its job's restarts the worker and the job is retried; the run
/// reports exactly what a clean run reports.
#[test]
fn stray_frames_on_a_workers_stdout_change_nothing() {
    let d = tmp("fault-stray");
    let essence = |out: &Path| {
        let s = summary(out);
        serde_json::json!({"totals": s["totals"], "by_form": s["by_form"], "mismatches": s["mismatches"], "faults": s["faults"]})
    };
    let clean = d.join("clean");
    let mut args = vec!["run", "--seed", "19", "--out", clean.to_str().unwrap(), "--host-threads", "1"];
    args.extend(SMALL);
    assert!(run(&args).status.success());
    let stray = d.join("stray");
    args[4] = stray.to_str().unwrap();
    let o = Command::new(BIN).args(&args).env("HMUL2_FAKE_EXECUTOR", "stray-every:3").output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("answer for another job") && t.contains("retrying"), "the misfit is said: {t}");
    assert_eq!(essence(&stray), essence(&clean));
    assert_eq!(summary(&stray)["totals"]["faults"], 0);
}

/// Class 10: hostile vector files and inputs. A key named twice is malformed; a folder
/// reached twice through a link loop is read once; FIFOs and devices are refused, not read
/// forever; a runaway line is an error of its own whose bytes are neither held nor echoed.
#[test]
fn hostile_vector_files_and_inputs_are_bounded_errors() {
    let d = tmp("fault-vectors");
    let v = d.join("v");
    std::fs::create_dir_all(&v).unwrap();
    let root = common::root();
    let first =
        std::fs::read_dir(root.join("vectors/reference")).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|x| x == "jsonl")).unwrap();
    let line = std::fs::read_to_string(&first).unwrap().lines().next().unwrap().to_string();
    std::fs::write(v.join("a.jsonl"), format!("{line}\n")).unwrap();
    std::fs::write(v.join("dup.jsonl"), format!("{},\"expect\":\"0x00000000\"}}\n", line.trim_end_matches('}'))).unwrap();
    std::os::unix::fs::symlink(&v, v.join("loop")).unwrap();
    let o = Command::new(BIN).arg("verify").arg(&v).output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("dup.jsonl:1") && t.contains("\"expect\" appears twice"), "{t}");
    assert!(t.contains("2 vectors: 1 pass, 0 mismatch, 1 malformed"), "each file once, the loop not followed: {t}");
    let fifo = d.join("f.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for p in [fifo.as_path(), Path::new("/dev/zero")] {
        let t0 = std::time::Instant::now();
        let o = Command::new(BIN).arg("verify").arg(p).output().unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains("not a regular file") && t0.elapsed().as_secs() < 10, "{t}");
    }
    // a line of 8 MiB: one error line naming its length, not the line
    let mut c = Command::new(BIN)
        .arg("decode")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = c.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = input.write_all(format!("0x{}\n0x{}\n", "1".repeat(8 << 20), "0".repeat(32)).as_bytes());
    });
    let o = c.wait_with_output().unwrap();
    writer.join().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{}", common::excerpt(&t));
    assert!(t.contains("stdin:1: a line of 8388610 bytes (at most 65536)"), "{}", common::excerpt(&t));
    assert!(t.len() < 4096, "nothing echoed: {} bytes of output", t.len());
    // a vector whose hex value runs long is quoted in part
    std::fs::write(v.join("a.jsonl"), format!("{{\"encoding\":\"0x{}\"}}\n", "f".repeat(100_000))).unwrap();
    let o = Command::new(BIN).arg("verify").arg(v.join("a.jsonl")).output().unwrap();
    assert!(text(&o).len() < 4096, "{}", common::excerpt(&text(&o)));
}

/// Processes whose command line holds `marker` (a `ps` listing: no procfs parsing here).
fn alive(marker: &str) -> usize {
    let out = Command::new("ps").args(["-eo", "args"]).output().expect("ps");
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains(marker) && !l.contains("ps -eo")).count()
}

/// `ci/device-session` runs each step so that a hung one costs its own time and no more:
/// on the first GPU session a worker in its own process group outlived its step's
/// `timeout` and held the session's output pipe until the machine's limit. The stand-in
/// here is such a worker: a process in its own group that holds the log open and never
/// ends, beside a parent that never ends either.
#[test]
fn a_hung_device_session_step_is_killed_with_its_workers() {
    let dir = tmp("bounded");
    let script = common::root().join("ci/device-session");
    let marker = format!("hmul2-bounded-{}", std::process::id());
    let log = dir.join("step.log");
    let hung = format!("set -m; (exec -a {marker}-worker sleep 300) & echo started; exec -a {marker}-parent sleep 300");
    let t0 = std::time::Instant::now();
    let out = Command::new("bash").arg(&script).args(["--bounded", "2"]).arg(&log).args(["bash", "-c", &hung]).output().unwrap();
    let took = t0.elapsed();
    assert_eq!(out.status.code(), Some(124), "{}", text(&out));
    assert!(took.as_secs() < 20, "a 2 s step took {took:?}: something held it");
    let l = std::fs::read_to_string(&log).unwrap();
    assert!(l.contains("started") && l.contains("stopped after 2s"), "{l}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(alive(&marker), 0, "processes of the killed step are left");

    // a step that ends by itself: its status, its output, and what it left behind killed
    let log2 = dir.join("ok.log");
    let leaves = format!("set -m; (exec -a {marker}-left sleep 300) & echo done; exit 3");
    let out = Command::new("bash").arg(&script).args(["--bounded", "30"]).arg(&log2).args(["bash", "-c", &leaves]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(std::fs::read_to_string(&log2).unwrap().contains("done"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(alive(&marker), 0, "a process the step left behind is still running");
}
