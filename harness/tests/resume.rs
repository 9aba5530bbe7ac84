//! `--resume` and `merge` trust nothing they cannot check: each hostile edit a user (or a
//! crash, or a second run) can make to a journal, a vector file or a shard, injected for
//! real, and what docs/runner.md promises under it: nothing obtained is lost, no byte the
//! run did not write is cut, and nothing incomplete or mixed passes.

use crate::common;

use common::{reseal, summary, text, tmp, BIN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SMALL: [&str; 6] = ["--inputs", "8", "--batch", "16", "--count", "200"];

fn run(args: &[String]) -> Output {
    Command::new(BIN).args(args).env("HMUL2_FAKE_EXECUTOR", "ok").output().unwrap()
}

/// `run --seed SEED` into `out` (vectors into `vec` when given) with the small options and `extra`.
fn args(seed: u64, out: &Path, vec: Option<&Path>, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["run", "--seed", &seed.to_string(), "--out", out.to_str().unwrap()].iter().map(|s| s.to_string()).collect();
    if let Some(v) = vec {
        a.extend(["--vectors".into(), v.to_str().unwrap().into()]);
    }
    a.extend(SMALL.iter().chain(extra).map(|s| s.to_string()));
    a
}

/// `a` with one warp of inputs: a run that may find no GPU takes only whole warps (the
/// simulated executor alone takes `SMALL`'s 8).
fn one_warp(mut a: Vec<String>) -> Vec<String> {
    if let Some(i) = a.iter().position(|x| x == "--inputs") {
        a[i + 1] = "32".into();
    }
    a
}

fn with(a: &[String], extra: &[&str]) -> Vec<String> {
    a.iter().cloned().chain(extra.iter().map(|s| s.to_string())).collect()
}

/// The vector files of a `--vectors DIR` (simulated results), by name.
fn vector_files(dir: &Path) -> Vec<PathBuf> {
    let mut f: Vec<PathBuf> = std::fs::read_dir(dir.join("simulated")).map(|r| r.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    f.sort();
    f
}

fn journal(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("journal.jsonl")).unwrap().lines().map(str::to_string).collect()
}

/// The positions of a journal's batch lines (between them, `pending` lines announce each
/// batch's vector bytes).
fn batch_lines(j: &[String]) -> Vec<usize> {
    j.iter().enumerate().filter(|(_, l)| l.starts_with("{\"type\":\"batch\"")).map(|(k, _)| k).collect()
}

fn write_journal(out: &Path, lines: &[String]) {
    std::fs::write(out.join("journal.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn sorted_lines(p: &Path) -> Vec<String> {
    let mut l: Vec<String> = std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect();
    l.sort();
    l
}

/// Exit 2 with `want` in the output.
fn refused(o: &Output, want: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains(want), "want {want:?} in: {t}");
    assert!(!t.contains("PASSED") && !t.contains("panicked"), "{t}");
}

/// Item 1: a journal names files only inside its own vectors folder, and only its own: a
/// batch line pointing anywhere else is a corrupt journal, and nothing is cut.
#[test]
fn a_journal_naming_another_file_is_corrupt_and_nothing_is_cut() {
    let d = tmp("resume-path");
    let (out, vec) = (d.join("r"), d.join("v"));
    let a = args(21, &out, Some(&vec), &[]);
    assert_eq!(run(&with(&a, &["--stop-after-batches", "3"])).status.code(), Some(2));
    let victim = d.join("victim.jsonl");
    std::fs::write(&victim, "precious\n".repeat(1000)).unwrap();
    let f = &vector_files(&vec)[0];
    let (j0, f0) = (journal(&out), std::fs::read(f).unwrap());
    let k = batch_lines(&j0)[1];
    for (name, at) in [(victim.to_str().unwrap().to_string(), k), ("../../victim.jsonl".into(), k), ("../../victim.jsonl".into(), k - 1)] {
        // a batch line, or the pending line announcing its bytes, names another file
        let mut j = j0.clone();
        let mut b: Value = serde_json::from_str(&j[at]).unwrap();
        let m = if at == k { &mut b["vectors"] } else { &mut b };
        m["file"] = name.clone().into();
        m["end"] = 1.into();
        j[at] = b.to_string();
        // as edited (the chain breaks) and with its checks recomputed (the marks do not fit)
        for seal in [false, true] {
            if seal {
                reseal(&mut j);
            }
            write_journal(&out, &j);
            refused(&run(&with(&a, &["--resume"])), &format!("journal.jsonl:{}: corrupt", at + 1));
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n".repeat(1000), "{name}");
            assert_eq!(std::fs::read(f).unwrap(), f0, "the run's own file is untouched too");
        }
    }
    write_journal(&out, &j0);
    let o = run(&with(&a, &["--resume"]));
    assert!(o.status.success(), "{}", text(&o));
}

/// Item 2: runs sharing a vectors folder each have their own file (its name says which run:
/// form, options, vector flags, executor); a resume of one never cuts another's lines, and a
/// second run of the same identity is refused rather than appending to the first one's file.
#[test]
fn runs_sharing_a_vectors_folder_keep_their_own_files() {
    let d = tmp("resume-shared");
    let vec = d.join("v");
    let rrr = args(22, &d.join("rrr"), Some(&vec), &["--form", "rrr"]);
    let imm = args(22, &d.join("imm"), Some(&vec), &["--form", "imm"]);
    assert_eq!(run(&with(&rrr, &["--stop-after-batches", "2"])).status.code(), Some(2));
    assert!(run(&imm).status.success());
    let files = vector_files(&vec);
    assert_eq!(files.len(), 2, "{files:?}");
    let imm_file = files.iter().find(|f| f.to_str().unwrap().contains("-imm-")).unwrap().clone();
    let imm_bytes = std::fs::read(&imm_file).unwrap();
    let o = run(&with(&rrr, &["--resume"]));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&imm_file).unwrap(), imm_bytes, "the other run's lines are all there");
    // the same run again in another folder: the file is the first one's, never appended to
    refused(&run(&args(22, &d.join("imm2"), Some(&vec), &["--form", "imm"])), "another run's");
    assert_eq!(std::fs::read(&imm_file).unwrap(), imm_bytes);
    assert!(!d.join("imm2").join("journal.jsonl").exists(), "nothing begun");
    // at the same time: a copy of a running run's journal, resumed in another folder, cannot
    // take the running run's file (the run holds an OS lock on it)
    let running = args(22, &d.join("running"), Some(&vec), &["--form", "ur"]);
    let mut child = Command::new(BIN)
        .args(&running)
        .env("HMUL2_FAKE_EXECUTOR", "slow:300")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string(d.join("running/journal.jsonl")).map(|j| j.lines().count()).unwrap_or(0) < 2 {
        assert!(t0.elapsed().as_secs() < 60, "the run never journaled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::create_dir_all(d.join("copy")).unwrap();
    std::fs::copy(d.join("running/journal.jsonl"), d.join("copy/journal.jsonl")).unwrap();
    let o = run(&with(&args(22, &d.join("copy"), Some(&vec), &["--form", "ur"]), &["--resume"]));
    child.kill().unwrap();
    child.wait().unwrap();
    refused(&o, "another run is writing this vector file");
    // the resumed run's own file holds each of its results once
    let rrr_file = vector_files(&vec).into_iter().find(|f| f.to_str().unwrap().contains("-rrr-")).unwrap();
    // (a line for every result: those compared, and those the reference leaves undefined)
    let t = &summary(&d.join("rrr"))["totals"];
    assert_eq!(std::fs::read_to_string(&rrr_file).unwrap().lines().count() as u64, t["compared"].as_u64().unwrap() + t["undefined"].as_u64().unwrap());
}

/// Item 3: the vector flags are part of a run's identity: a resume that adds, drops or
/// redirects `--vectors`, or changes `--vectors-per-instruction`, is refused; the resume
/// with the run's own flags ends with exactly the lines of a run never stopped.
#[test]
fn resume_with_other_vector_flags_is_refused() {
    let d = tmp("resume-flags");
    let (out, vec) = (d.join("r"), d.join("v"));
    let a = args(23, &out, Some(&vec), &["--vectors-per-instruction", "4"]);
    assert_eq!(run(&with(&a, &["--stop-after-batches", "3"])).status.code(), Some(2));
    let f = vector_files(&vec)[0].clone();
    let before = std::fs::read(&f).unwrap();
    for other in [
        args(23, &out, None, &[]),
        args(23, &out, Some(&d.join("v2")), &["--vectors-per-instruction", "4"]),
        args(23, &out, Some(&vec), &["--vectors-per-instruction", "8"]),
        args(23, &out, Some(&vec), &[]),
    ] {
        refused(&run(&with(&other, &["--resume"])), "vector flags");
        assert_eq!(std::fs::read(&f).unwrap(), before);
    }
    // a run begun without vectors cannot gain them on resume
    let out2 = d.join("r2");
    assert_eq!(run(&with(&args(23, &out2, None, &[]), &["--stop-after-batches", "3"])).status.code(), Some(2));
    refused(&run(&with(&args(23, &out2, Some(&d.join("v3")), &[]), &["--resume"])), "vector flags");
    let o = run(&with(&a, &["--resume"]));
    assert!(o.status.success(), "{}", text(&o));
    let whole = d.join("whole");
    assert!(run(&args(23, &d.join("w"), Some(&whole), &["--vectors-per-instruction", "4"])).status.success());
    assert_eq!(sorted_lines(&f), sorted_lines(&vector_files(&whole)[0]), "every result once, as an unstopped run writes them");
}

/// Item 4: each journaled batch carries a checksum of the bytes it appended; a vector file
/// converted to CRLF, given a BOM, with a line repeated or removed, or deleted, does not
/// verify: the resume is refused and the file left as it is. Restored, it resumes.
#[test]
fn a_vector_file_that_does_not_verify_is_never_built_on() {
    let d = tmp("resume-verify");
    let (out, vec) = (d.join("r"), d.join("v"));
    let a = args(24, &out, Some(&vec), &[]);
    assert_eq!(run(&with(&a, &["--stop-after-batches", "3"])).status.code(), Some(2));
    let f = vector_files(&vec)[0].clone();
    let good = std::fs::read_to_string(&f).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let damaged: Vec<(&str, Option<String>)> = vec![
        ("crlf", Some(good.replace('\n', "\r\n"))),
        ("bom", Some(format!("\u{feff}{good}"))),
        ("repeated line", Some([&lines[..5], &lines[4..]].concat().join("\n") + "\n")),
        ("removed line", Some([&lines[..5], &lines[6..]].concat().join("\n") + "\n")),
        ("deleted", None),
    ];
    for (what, text) in damaged {
        match &text {
            Some(t) => std::fs::write(&f, t).unwrap(),
            None => std::fs::remove_file(&f).unwrap(),
        }
        let o = run(&with(&a, &["--resume"]));
        refused(&o, f.file_name().unwrap().to_str().unwrap());
        match &text {
            Some(t) => assert_eq!(&std::fs::read_to_string(&f).unwrap(), t, "{what}: nothing cut"),
            None => assert!(!f.exists(), "{what}: not made anew"),
        }
    }
    std::fs::write(&f, &good).unwrap();
    let o = run(&with(&a, &["--resume"]));
    assert!(o.status.success(), "{}", text(&o));
    let whole = d.join("whole");
    assert!(run(&args(24, &d.join("w"), Some(&whole), &[])).status.success());
    assert_eq!(sorted_lines(&f), sorted_lines(&vector_files(&whole)[0]));
}

/// Items 5 and 6: a torn header is refused, never padded and appended to; journal lines that
/// are valid JSON but wrong (counts, a moved item, a removed batch, an edited vector end)
/// are corrupt, whether their checks were recomputed or not.
#[test]
fn journal_lines_that_parse_but_lie_are_corrupt() {
    let d = tmp("resume-lies");
    let (out, vec) = (d.join("r"), d.join("v"));
    let a = args(25, &out, Some(&vec), &[]);
    assert_eq!(run(&with(&a, &["--stop-after-batches", "4"])).status.code(), Some(2));
    let j0 = journal(&out);
    let f = vector_files(&vec)[0].clone();
    let f0 = std::fs::read(&f).unwrap();
    // a torn header
    std::fs::write(out.join("journal.jsonl"), &j0[0]).unwrap();
    refused(&run(&with(&a, &["--resume"])), "torn");
    assert_eq!(std::fs::read_to_string(out.join("journal.jsonl")).unwrap(), j0[0], "not padded");
    let bl = batch_lines(&j0);
    assert_eq!(bl.len(), 4, "{j0:?}");
    // each batch line k is announced by the pending line k - 1
    type Edit<'a> = (usize, &'a dyn Fn(&mut Value));
    let edit = |edits: &[Edit]| {
        let mut j = j0.clone();
        for (k, f) in edits {
            let mut b: Value = serde_json::from_str(&j[*k]).unwrap();
            f(&mut b);
            j[*k] = b.to_string();
        }
        j
    };
    let less = |v: &Value| (v.as_u64().unwrap() - 10).into();
    // --count 200: item 200 is no item of the run
    let other_shard = 200u64;
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        ("compared 33 of 8", edit(&[(bl[0], &|b| b["items"][0]["totals"]["compared"] = 33.into())]), "counts no run"),
        ("an item moved out of the run", edit(&[(bl[0], &|b| b["items"][0]["index"] = other_shard.into())]), "not one of this run's"),
        ("a batch removed", [&j0[..bl[1] - 1], &j0[bl[1] + 1..]].concat(), "batch before ends at"),
        ("an edited end", edit(&[(bl[1], &|b| b["vectors"]["end"] = less(&b["vectors"]["end"]))]), "not announced"),
        (
            "the last end edited, announced",
            edit(&[(bl[3] - 1, &|b| b["end"] = less(&b["end"])), (bl[3], &|b| b["vectors"]["end"] = less(&b["vectors"]["end"]))]),
            "not the lines the run wrote",
        ),
        (
            "an end and the next start edited",
            edit(&[
                (bl[1] - 1, &|b| b["end"] = less(&b["end"])),
                (bl[1], &|b| b["vectors"]["end"] = less(&b["vectors"]["end"])),
                (bl[2] - 1, &|b| b["start"] = less(&b["start"])),
                (bl[2], &|b| b["vectors"]["start"] = less(&b["vectors"]["start"])),
            ]),
            "not the lines the run wrote",
        ),
    ];
    for (what, mut j, why) in cases {
        write_journal(&out, &j);
        refused(&run(&with(&a, &["--resume"])), "integrity check");
        reseal(&mut j);
        write_journal(&out, &j);
        let o = run(&with(&a, &["--resume"]));
        refused(&o, why);
        assert_eq!(journal(&out), j, "{what}: the journal is left as it is");
        assert_eq!(std::fs::read(&f).unwrap(), f0, "{what}: nothing cut");
    }
    write_journal(&out, &j0);
    let o = run(&with(&a, &["--resume"]));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(summary(&out)["totals"]["instructions"], 200);
}

/// Items 8 and 9: a resume on a machine without a driver, or on another executor, is
/// refused and the journaled items stay the report's; `merge` refuses shards of different
/// executors or harness versions.
#[test]
fn resume_and_merge_refuse_other_executors_and_versions() {
    let d = tmp("resume-refuses-executor");
    let out = d.join("r");
    let a = one_warp(args(26, &out, None, &["--shard", "0/2"]));
    assert_eq!(run(&with(&a, &["--stop-after-batches", "2"])).status.code(), Some(2));
    let j0 = journal(&out);
    let no_gpu = |args: &[String]| Command::new(BIN).args(args).env_remove("HMUL2_FAKE_EXECUTOR").env("CUDA_VISIBLE_DEVICES", "").output().unwrap();
    refused(&no_gpu(&with(&a, &["--resume"])), "no usable GPU");
    refused(&no_gpu(&a), "journal");
    assert_eq!(journal(&out), j0);
    assert!(!out.join("summary.json").exists(), "no report without the journaled items");
    // an executor or a version of the harness other than the journal's
    let mut j = j0.clone();
    for (key, value) in [("executor", "emulated:fake-cuda"), ("tool_version", "0.0.0")] {
        let mut h: Value = serde_json::from_str(&j0[0]).unwrap();
        h[key] = value.into();
        j[0] = h.to_string();
        reseal(&mut j);
        write_journal(&out, &j);
        refused(&run(&with(&a, &["--resume"])), if key == "executor" { "executor" } else { "version" });
    }
    write_journal(&out, &j0);
    assert!(run(&with(&a, &["--resume"])).status.success());
    // merge: shard 1 without hardware beside a simulated shard 0
    let b = d.join("b");
    assert!(no_gpu(&one_warp(args(26, &b, None, &["--shard", "1/2"]))).status.success());
    let m = d.join("m");
    let merge =
        |x: &Path, y: &Path| Command::new(BIN).args(["merge", x.to_str().unwrap(), y.to_str().unwrap(), "--out", m.to_str().unwrap()]).output().unwrap();
    refused(&merge(&out, &b), "different executors");
    assert!(!m.join("summary.json").exists());
    // shard 1 simulated, but by another version of the harness
    let c = d.join("c");
    assert!(run(&one_warp(args(26, &c, None, &["--shard", "1/2"]))).status.success());
    assert!(merge(&out, &c).status.success());
    let mut s = summary(&c);
    s["tool_version"] = "0.0.0".into();
    std::fs::write(c.join("summary.json"), s.to_string()).unwrap();
    refused(&merge(&out, &c), "version");
}

/// Item 12: a reader that quits (`run | head -1`) does not end the run before its report is
/// written: the run goes on, writes its whole summary and says on stderr (exit 2) that its
/// stdout was closed; an error said to a closed stderr is exit 2, never a panic (101).
#[test]
fn a_closed_stdout_or_stderr_loses_no_report_and_never_panics() {
    use std::io::BufRead;
    let d = tmp("resume-pipe");
    let out = d.join("r");
    let mut child = Command::new(BIN)
        .args(args(27, &out, None, &["--host-threads", "1"]))
        .env("HMUL2_FAKE_EXECUTOR", "ok")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    // the reader is gone (dropped): the run's next line meets a closed pipe
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{first}{err}");
    assert!(err.contains("stdout: closed before the run ended") && !err.contains("panicked"), "{err}");
    let s = summary(&out);
    assert_eq!((s["status"].as_str(), s["totals"]["instructions"].as_u64()), (Some("complete"), Some(200)), "{s}");
    // errors to closed descriptors: a one-line error that nobody reads, exit 2
    for cmd in ["\"$0\" decode 0x12 2>&-", "\"$0\" decode 0x12 >&- 2>&-", "\"$0\" --no-such-flag 2>&-", "\"$0\" 2>&-"] {
        let o = Command::new("bash").arg("-c").arg(cmd).arg(BIN).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
    }
}

/// Item 11: a host paused for longer than `--timeout` (SIGSTOP of the run for 3 s with
/// `--timeout 1`) blames no instruction: a worker is timed out only for time in which the
/// run was there to see it answer.
#[test]
fn a_paused_host_blames_no_instruction() {
    let d = tmp("resume-pause");
    let out = d.join("r");
    // launches of 0.4 s: the run is waiting on its worker most of the time it is stopped
    let a =
        ["run", "--seed", "28", "--count", "256", "--inputs", "32", "--batch", "64", "--host-threads", "1", "--timeout", "1", "--out", out.to_str().unwrap()];
    let child = Command::new(BIN)
        .args(a)
        .env("HMUL2_FAKE_EXECUTOR", "slow:400")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string(out.join("journal.jsonl")).map(|j| j.lines().count()).unwrap_or(0) < 2 {
        assert!(t0.elapsed().as_secs() < 60, "the run never journaled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(Command::new("kill").args(["-CONT", &pid]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = summary(&out);
    assert_eq!((s["totals"]["faults"].as_u64(), s["totals"]["instructions"].as_u64()), (Some(0), Some(256)), "{}", s["faults"]);
}
