//! Bad input, subcommand by subcommand, through the built binary: each case must end with
//! exactly one line `error: ...` on stderr naming the input (file, argument or line), with
//! nothing else there but the seed line some commands always print; the documented exit
//! status (2 bad input or a missing tool, 5 a broken worker stream); and no panic. One row
//! per case; every row runs in its own folder under the temp dir.
//!
//! No row needs nvdisasm: a missing tool is simulated with `HMUL2_NVDISASM` naming no file
//! (a set variable is never silently replaced by another nvdisasm), so nothing is skipped.

use crate::common;

use common::{root, tmp, BIN};
use hmul2_harness::isa::{encode, format_hex, Inst, Operand2};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const WORD: &str = "0x000fe200000000000000000201007232";
/// `HFMA2 R0, R1, R2, R3`
const HFMA2_WORD: &str = "0x000fe200000000030000000201007231";
const GOOD_VECTOR: &str = r#"{"encoding":"0x000fe200000000000000000201007232","a":"0x3c003c00","b":"0x3c003c00","d":"0x00000000","pred":"0x00","expect":"0x3c003c00","origin":"reference"}"#;

/// One bad-input case.
struct Case {
    args: Vec<OsString>,
    stdin: Option<Vec<u8>>,
    /// Created in the case's folder first: a name ending in `/` is a folder; a file starting
    /// with `#!` is made executable (a stand-in tool).
    files: Vec<(&'static str, Vec<u8>)>,
    env: Vec<(&'static str, String)>,
    /// Stdout is /dev/full: every write to it fails.
    stdout_full: bool,
    code: i32,
    /// What the one `error:` line must contain (the input's name).
    names: &'static str,
    /// Something stdout must still hold (a result obtained before the bad input).
    stdout_has: Option<&'static str>,
}

fn case(args: &[&str], code: i32, names: &'static str) -> Case {
    Case { args: args.iter().map(OsString::from).collect(), stdin: None, files: Vec::new(), env: Vec::new(), stdout_full: false, code, names, stdout_has: None }
}

impl Case {
    fn stdin(mut self, b: impl Into<Vec<u8>>) -> Case {
        self.stdin = Some(b.into());
        self
    }
    fn file(mut self, name: &'static str, b: impl Into<Vec<u8>>) -> Case {
        self.files.push((name, b.into()));
        self
    }
    fn env(mut self, k: &'static str, v: impl Into<String>) -> Case {
        self.env.push((k, v.into()));
        self
    }
    /// The simulated executor instead of a GPU (the run reaches its journal and workers).
    fn fake(self, spec: &str) -> Case {
        self.env("HMUL2_FAKE_EXECUTOR", spec)
    }
    fn stdout_full(mut self) -> Case {
        self.stdout_full = true;
        self
    }
    fn stdout_has(mut self, s: &'static str) -> Case {
        self.stdout_has = Some(s);
        self
    }
    fn arg(mut self, a: impl Into<OsString>) -> Case {
        self.args.push(a.into());
        self
    }

    fn run(&self, dir: &Path) -> Output {
        for (name, bytes) in &self.files {
            let p = dir.join(name);
            if name.ends_with('/') {
                std::fs::create_dir_all(&p).unwrap();
            } else {
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, bytes).unwrap();
                if bytes.starts_with(b"#!") {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
                }
            }
        }
        let mut c = Command::new(BIN);
        c.current_dir(dir).args(&self.args);
        // the no-GPU path, whatever this machine has; no tool or simulation from outside
        c.env("CUDA_VISIBLE_DEVICES", "").env_remove("HMUL2_FAKE_EXECUTOR").env_remove("HMUL2_FAKE_CUDA").env_remove("HMUL2_NVDISASM");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        c.stdout(if self.stdout_full { Stdio::from(std::fs::File::create("/dev/full").unwrap()) } else { Stdio::piped() });
        c.stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        if let Some(b) = &self.stdin {
            use std::io::Write;
            let mut s = child.stdin.take().unwrap();
            // the program may stop reading early: a broken pipe here is not the test's concern
            let _ = s.write_all(b);
        }
        child.wait_with_output().unwrap()
    }
}

/// An executable that answers `--version` as nvdisasm does and runs `then` for anything else.
fn nvdisasm_stand_in(then: &str) -> String {
    format!("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'nvdisasm: NVIDIA (R) CUDA disassembler'; echo 'Cuda compilation tools, release 13.2, V13.2.78'; echo 'Build stand-in'; exit 0; fi\n{then}\n")
}

/// A summary.json as `run` writes it, for merge cases.
fn summary(seed: u64, shard: &str) -> Vec<u8> {
    let zero = serde_json::json!({"instructions": 0, "inputs": 0, "compared": 0, "mismatches": 0, "faults": 0, "undefined": 0});
    serde_json::json!({
        "tool_version": "0.1.0", "seed": seed, "shard": shard, "mode": "random",
        "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:00:01Z",
        "hardware": {"used": false, "reason": "fixture", "gpu": null, "driver": null, "devices": 0},
        "totals": zero, "by_form": {}, "mismatches": [], "faults": [],
        "software_checks": {"verify": null, "oracle": null}, "coverage": null
    })
    .to_string()
    .into_bytes()
}

/// `run`'s configuration (journal header, summary `config`) for random mode.
fn config(seed: u64, count: u64, shard: &str) -> serde_json::Value {
    serde_json::json!({
        "seed": seed, "mode": "random", "form": null, "count": count, "inputs": 32, "shard": shard,
        "encoding": null, "space_bits": 32, "chunk_bits": 20, "invalid_share": 0.0, "illegal_share": 0.0,
    })
}

/// A journal header line for random mode.
fn journal_header(seed: u64, count: u64, shard: &str) -> String {
    serde_json::json!({"type": "header", "config": config(seed, count, shard)}).to_string() + "\n"
}

/// A summary.json that keeps its run's options (`config`), as `run` writes it now.
fn summary_with_config(seed: u64, count: u64, shard: &str) -> Vec<u8> {
    let mut s: serde_json::Value = serde_json::from_slice(&summary(seed, shard)).unwrap();
    s["config"] = config(seed, count, shard);
    s.to_string().into_bytes()
}

/// `run` with small work into `out`, then `extra`.
fn run(extra: &[&'static str]) -> Vec<&'static str> {
    let mut a = vec!["run", "--seed", "1", "--count", "8", "--inputs", "32", "--out", "out"];
    a.extend_from_slice(extra);
    a
}

fn cases() -> Vec<(&'static str, Case)> {
    let preflight_word = format_hex(encode(&Inst::new(0, 1, Operand2::Reg(2))).unwrap());
    let invalid_utf8_arg = {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(vec![b'H', 0xff, 0xfe])
    };
    // a journal of --count 7 with one (empty) batch
    let other_run = journal_header(1, 7, "0/1") + r#"{"type":"batch","items":[],"findings":[]}"# + "\n";
    vec![
        // decode
        ("decode: short hex", case(&["decode", "0x12"], 2, "\"0x12\"")),
        ("decode: too-long hex", case(&["decode", "0x000fe200000000000000000201007232000"], 2, "0x000fe200000000000000000201007232000")),
        ("decode: empty word", case(&["decode", ""], 2, "first: \"\"")),
        ("decode: garbage on stdin", case(&["decode"], 2, "stdin:2: \"zz\"").stdin(format!("{WORD}\nzz\n")).stdout_has("HMUL2 R0, R1, R2")),
        (
            "decode: a stdin line that is not UTF-8 costs only itself",
            case(&["decode"], 2, "stdin:2: not UTF-8")
                .stdin([WORD.as_bytes(), b"\n\xff\xfe\n", WORD.as_bytes()].concat())
                .stdout_has("HMUL2 R0, R1, R2\nerror"),
        ),
        ("decode: stdout full", case(&["decode", WORD], 2, "stdout").stdout_full()),
        // encode
        ("encode: garbage text", case(&["encode", "garbage"], 2, "\"garbage\"")),
        ("encode: bank out of range", case(&["encode", "HMUL2 R0, R1, c[0x99] [0x10]"], 2, "cb_bank")),
        // a negative offset is named as written, not as its two's complement
        ("encode: misaligned offset", case(&["encode", "HMUL2 R0, R1, c[0x3] [-0x41]"], 2, "offset -0x41 is not a multiple of 4")),
        ("encode: offset out of range", case(&["encode", "HMUL2 R0, R1, c[0x3] [-0x8004]"], 2, "-0x8004 is outside -0x8000..=0x7ffc")),
        ("encode: argument not UTF-8", case(&["encode"], 2, "UTF-8").arg(invalid_utf8_arg)),
        ("encode: garbage on stdin", case(&["encode"], 2, "stdin:2").stdin("HMUL2 R0, R1, R2\nzz\n").stdout_has("0x000fc200000000000000000201007232\nerror: ")),
        ("encode: a runaway argument is quoted in part", case(&["encode"], 2, "(100014 bytes)").arg(format!("HMUL2 R0, R1, {}", "R".repeat(100_000)))),
        ("encode: --sched out of range", case(&["encode", "HMUL2 R0, R1, R2", "--sched", "stall=16"], 2, "stall=16")),
        // explain
        ("explain: short hex", case(&["explain", "0x12"], 2, "\"0x12\"")),
        ("explain: stdout full", case(&["explain", WORD], 2, "stdout").stdout_full()),
        // generate
        ("generate: --count not a number", case(&["generate", "--count", "x"], 2, "--count")),
        ("generate: --count negative", case(&["generate", "--count", "-1"], 2, "-1")),
        ("generate: --seed too large", case(&["generate", "--seed", "99999999999999999999999"], 2, "--seed")),
        ("generate: unknown form", case(&["generate", "--form", "bogus"], 2, "--form")),
        ("generate: share out of range", case(&["generate", "--illegal-share", "2"], 2, "--illegal-share")),
        ("generate: --factorial without --form", case(&["generate", "--factorial"], 2, "--form")),
        ("generate: stdout full", case(&["generate", "--seed", "1", "--count", "3"], 2, "stdout").stdout_full()),
        // oracle (nvdisasm named by HMUL2_NVDISASM: missing, not runnable, or a dummy)
        ("oracle: nvdisasm missing", case(&["oracle", "--count", "3"], 2, "HMUL2_NVDISASM").env("HMUL2_NVDISASM", "/nonexistent/nvdisasm")),
        (
            "oracle: nvdisasm not runnable",
            case(&["oracle", "--seed", "1", "--count", "3"], 2, "not-a-tool").file("not-a-tool", "text").env("HMUL2_NVDISASM", "./not-a-tool"),
        ),
        (
            "oracle: nvdisasm fails naming no word",
            case(&["oracle", "--seed", "1", "--count", "3"], 2, "Memory allocation failure")
                .file("nv", nvdisasm_stand_in("echo 'nvdisasm fatal   : Memory allocation failure' >&2; exit 1"))
                .env("HMUL2_NVDISASM", "./nv"),
        ),
        (
            "oracle: nvdisasm killed by a signal",
            case(&["oracle", "--seed", "1", "--count", "3"], 2, "signal").file("nv", nvdisasm_stand_in("kill -9 $$")).env("HMUL2_NVDISASM", "./nv"),
        ),
        (
            "oracle: --count beyond memory",
            case(&["oracle", "--seed", "1", "--count", "18446744073709551615"], 2, "--count").file("nv", "").env("HMUL2_NVDISASM", "./nv"),
        ),
        // errata
        ("errata: stdout full", case(&["errata"], 2, "stdout").stdout_full()),
        // verify
        ("verify: empty file", case(&["verify", "empty.jsonl"], 2, "empty.jsonl").file("empty.jsonl", "")),
        ("verify: folder without vectors", case(&["verify", "none"], 2, "none").file("none/", "").file("none/notes.txt", "x")),
        ("verify: missing file", case(&["verify", "missing.jsonl"], 2, "missing.jsonl")),
        ("verify: empty path", case(&["verify", ""], 2, "an empty path")),
        ("settle: no hardware vectors", case(&["settle", "v.jsonl"], 2, "v.jsonl").file("v.jsonl", format!("{GOOD_VECTOR}\n"))),
        ("settle: --write outside a checkout", case(&["settle", "v.jsonl", "--write"], 2, "--write").file("v.jsonl", format!("{GOOD_VECTOR}\n"))),
        ("settle: table missing", case(&["settle", "v.jsonl", "--semantics", "none.json"], 2, "none.json").file("v.jsonl", format!("{GOOD_VECTOR}\n"))),
        (
            "settle: table corrupt",
            case(&["settle", "v.jsonl", "--semantics", "s.json"], 2, "s.json").file("v.jsonl", format!("{GOOD_VECTOR}\n")).file("s.json", "[{}]"),
        ),
        ("build-kernel: empty --out", case(&["build-kernel", "--seed", "1", "--count", "3", "--out", ""], 2, "--out")),
        ("run: empty --out", case(&["run", "--seed", "1", "--out", ""], 2, "--out")),
        ("merge: empty --out", case(&["merge", "a", "--out", ""], 2, "--out").file("a/summary.json", summary(1, "0/1"))),
        ("report: empty --vectors", case(&["report", "--vectors", "", "--out", "p.html"], 2, "--vectors")),
        ("decode: - reads stdin", case(&["decode", "-"], 2, "stdin:2").stdin(format!("{WORD}\nnot hex\n")).stdout_has("HMUL2 R0, R1, R2")),
        ("verify: no path", case(&["verify"], 2, "<PATHS>")),
        // eval
        ("eval: stdin not UTF-8", case(&["eval"], 2, "stdin:2: not UTF-8").stdin([GOOD_VECTOR.as_bytes(), b"\n\xff\n"].concat())),
        ("eval: bad JSON on stdin", case(&["eval"], 2, "stdin:1").stdin("{bad json\n")),
        (
            "eval: the vectors before a bad line are written",
            case(&["eval"], 2, "stdin:2").stdin(format!("{GOOD_VECTOR}\n{{bad json\n")).stdout_has("\"origin\":\"reference\""),
        ),
        ("eval: wrong type", case(&["eval"], 2, "stdin:1: key \"a\"").stdin(r#"{"encoding":"0x000fe200000000000000000201007232","a":5}"#)),
        (
            "eval: contradiction named by line",
            case(&["eval"], 2, "stdin:3: pred").stdin(format!("\n\n{}\n", GOOD_VECTOR.replace("\"pred\":\"0x00\"", "\"pred\":\"0xff\""))),
        ),
        ("eval: bad encodings file", case(&["eval", "--seed", "1", "--encodings", "enc.txt"], 2, "enc.txt:2").file("enc.txt", format!("{WORD}\n0x12\n"))),
        ("eval: encodings from stdin", case(&["eval", "--seed", "1", "--encodings", "-"], 2, "stdin:1").stdin("zz\n")),
        ("eval: missing encodings file", case(&["eval", "--seed", "1", "--encodings", "missing.txt"], 2, "missing.txt")),
        (
            "eval: --inputs beyond memory",
            case(&["eval", "--seed", "1", "--encodings", "enc.txt", "--inputs", "18446744073709551615"], 2, "--inputs").file("enc.txt", format!("{WORD}\n")),
        ),
        // build-kernel
        ("build-kernel: --out is a file", case(&["build-kernel", "--seed", "1", "--count", "1", "--out", "afile"], 2, "afile").file("afile", "x")),
        ("build-kernel: --count beyond memory", case(&["build-kernel", "--seed", "1", "--count", "18446744073709551615", "--out", "k"], 2, "--count")),
        ("build-kernel: --threads not a warp multiple", case(&["build-kernel", "--threads", "33", "--out", "k"], 2, "--threads")),
        ("build-kernel: unknown form", case(&["build-kernel", "--form", "bogus", "--out", "k"], 2, "--form")),
        // run: options
        ("run: --shard 3/2", case(&run(&["--shard", "3/2"]), 2, "--shard")),
        ("run: --shard 0/0", case(&run(&["--shard", "0/0"]), 2, "--shard")),
        ("run: --shard x/y", case(&run(&["--shard", "x/y"]), 2, "--shard")),
        ("run: --inputs 0", case(&run(&["--inputs", "0"]), 2, "--inputs")),
        ("run: --inputs too many for a launch", case(&run(&["--inputs", "18446744073709551615"]), 2, "--inputs")),
        ("run: --count beyond memory", case(&run(&["--count", "18446744073709551615"]), 2, "--count")),
        ("run: --timeout not a number", case(&run(&["--timeout", "x"]), 2, "--timeout")),
        ("run: --timeout 0", case(&run(&["--timeout", "0"]), 2, "--timeout")),
        ("run: --timeout negative", case(&run(&["--timeout=-1"]), 2, "--timeout")),
        ("run: --timeout infinite", case(&run(&["--timeout", "inf"]), 2, "--timeout")),
        ("run: --batch negative", case(&run(&["--batch", "-3"]), 2, "-3")),
        ("run: --devices garbage", case(&run(&["--devices", "x"]), 2, "--devices").fake("ok")),
        ("run: --devices repeated", case(&run(&["--devices", "0,0"]), 2, "--devices").fake("ok")),
        ("run: --host-threads absurd", case(&run(&["--host-threads", "100000000"]), 2, "--host-threads").fake("ok")),
        ("run: --verify-dir missing", case(&run(&["--verify-dir", "nowhere"]), 2, "nowhere")),
        ("run: --out is a file", case(&["run", "--seed", "1", "--count", "8", "--out", "afile"], 2, "afile").file("afile", "x")),
        ("run: exhaustive, illegal --encoding", case(&["run", "--mode", "exhaustive", "--encoding", &format!("0x{}", "f".repeat(32))], 2, "--encoding")),
        ("run: --undocumented-share out of range", case(&run(&["--undocumented-share", "2"]), 2, "--undocumented-share 2 is outside 0..1")),
        (
            "generate: a form none of the instructions has",
            case(&["generate", "--seed", "1", "--instruction", "HMUL2", "--form", "rrrr"], 2, "--form rrrr: no form of HMUL2"),
        ),
        // a three-source word's sweep needs its operand 3
        (
            "run: exhaustive, HFMA2 without --c",
            case(&["run", "--mode", "exhaustive", "--encoding", HFMA2_WORD], 2, "HFMA2 has a third source (2^48 inputs): give its value with --c HEX"),
        ),
        ("run: exhaustive, HFMA2, --c malformed", case(&["run", "--mode", "exhaustive", "--encoding", HFMA2_WORD, "--c", "3c00"], 2, "--c")),
        ("build-kernel: --instruction not of the family", case(&["build-kernel", "--seed", "1", "--instruction", "HFMA3", "--out", "k"], 2, "--instruction")),
        (
            "eval: an HFMA2 vector without operand 3",
            case(&["eval"], 2, "missing key \"c\"")
                .stdin(format!("{{\"encoding\":\"{HFMA2_WORD}\",\"a\":\"0x00000000\",\"b\":\"0x00000000\",\"d\":\"0x00000000\",\"pred\":\"0x00\"}}\n")),
        ),
        ("run: exhaustive, --chunk-bits too small", case(&["run", "--mode", "exhaustive", "--encoding", WORD, "--chunk-bits", "4"], 2, "--chunk-bits")),
        ("run: HMUL2_FAKE_EXECUTOR garbage", case(&run(&[]), 2, "HMUL2_FAKE_EXECUTOR").fake("garbage")),
        ("run: --require-gpu without a GPU", case(&run(&["--require-gpu"]), 2, "--require-gpu")),
        ("run: --vectors is a file", case(&run(&["--vectors", "vf"]), 2, "vf").file("vf", "x").fake("ok")),
        // run: journals
        ("run: journal exists without --resume", case(&run(&[]), 2, "out/journal.jsonl").file("out/journal.jsonl", journal_header(1, 8, "0/1")).fake("ok")),
        (
            "run: --resume, corrupt journal line",
            case(&run(&["--resume"]), 2, "out/journal.jsonl:2").file("out/journal.jsonl", journal_header(1, 8, "0/1") + "garbage\n{}\n").fake("ok"),
        ),
        ("run: --resume, journal not UTF-8", case(&run(&["--resume"]), 2, "out/journal.jsonl:1").file("out/journal.jsonl", b"\xff\xfe\n".to_vec()).fake("ok")),
        ("run: --resume, empty journal", case(&run(&["--resume"]), 2, "out/journal.jsonl:1").file("out/journal.jsonl", "").fake("ok")),
        ("run: --resume, journal of other options", case(&run(&["--resume"]), 2, "another run").file("out/journal.jsonl", other_run).fake("ok")),
        ("run: --resume, journal is a folder", case(&run(&["--resume"]), 2, "out/journal.jsonl").file("out/journal.jsonl/", "").fake("ok")),
        // run: a fault in the harness's own known-good instruction stops the run
        ("run: GPU fault in the preflight", case(&run(&[]), 2, "preflight").fake(&format!("fault-on:{preflight_word}"))),
        // merge
        (
            "merge: corrupt summary",
            case(&["merge", "a", "bad", "--out", "m"], 2, "bad/summary.json").file("a/summary.json", summary(1, "0/2")).file("bad/summary.json", "{"),
        ),
        ("merge: summary not UTF-8", case(&["merge", "bad", "--out", "m"], 2, "bad/summary.json").file("bad/summary.json", b"\xff".to_vec())),
        ("merge: missing folder", case(&["merge", "nosuch", "--out", "m"], 2, "nosuch/summary.json")),
        (
            "merge: different seeds",
            case(&["merge", "a", "b", "--out", "m"], 2, "b/summary.json").file("a/summary.json", summary(1, "0/2")).file("b/summary.json", summary(2, "1/2")),
        ),
        ("merge: duplicate shards", case(&["merge", "a", "a", "--out", "m"], 2, "a/summary.json").file("a/summary.json", summary(1, "0/2"))),
        (
            "merge: shard index out of range",
            case(&["merge", "a", "b", "--out", "m"], 2, "3/2").file("a/summary.json", summary(1, "0/2")).file("b/summary.json", summary(1, "3/2")),
        ),
        (
            "merge: a shard missing",
            case(&["merge", "a", "--out", "m"], 2, "incomplete merge").file("a/summary.json", summary(1, "0/2")).stdout_has("report: m"),
        ),
        (
            "merge: --out is a shard folder",
            case(&["merge", "a", "b", "--out", "a"], 2, "--out").file("a/summary.json", summary(1, "0/2")).file("b/summary.json", summary(1, "1/2")),
        ),
        (
            "merge: shards of different options",
            case(&["merge", "a", "b", "--out", "m"], 2, "b/journal.jsonl")
                .file("a/summary.json", summary(1, "0/2"))
                .file("a/journal.jsonl", journal_header(1, 8, "0/2"))
                .file("b/summary.json", summary(1, "1/2"))
                .file("b/journal.jsonl", journal_header(1, 9, "1/2")),
        ),
        (
            "merge: shards of different options, no journals",
            case(&["merge", "a", "b", "--out", "m"], 2, "b/summary.json")
                .file("a/summary.json", summary_with_config(1, 8, "0/2"))
                .file("b/summary.json", summary_with_config(1, 9, "1/2")),
        ),
        // report
        ("report: corrupt run summary", case(&["report", "--run", "r", "--out", "p.html"], 2, "r/summary.json").file("r/summary.json", "[")),
        ("report: oracle file not UTF-8", case(&["report", "--oracle", "o.json", "--out", "p.html"], 2, "o.json").file("o.json", b"\xff".to_vec())),
        (
            "report: vector line malformed",
            case(&["report", "--vectors", "v.jsonl", "--out", "p.html"], 2, "v.jsonl:2").file("v.jsonl", format!("{GOOD_VECTOR}\n{{\n")),
        ),
        (
            "report: vectors folder without vectors",
            case(&["report", "--vectors", "none", "--out", "p.html"], 2, "none: no vectors").file("none/", "").file("none/README.md", "x"),
        ),
        ("report: --out is a folder", case(&["report", "--out", "page.html"], 2, "page.html").file("page.html/", "")),
        // worker (internal): a broken stream is exit 5 with one line
        ("worker: garbage on stdin", case(&["worker"], 5, "stdin").stdin("garbage that is no frame at all\n").fake("ok")),
        ("worker: unknown frame kind", case(&["worker"], 5, "frame kind 7").stdin(*b"HMW1\x07\0\0\0\0").fake("ok")),
        ("worker: header cut short", case(&["worker"], 5, "stdin").stdin(*b"HMW1\x01\x04").fake("ok")),
        ("worker: --device not a number", case(&["worker", "--device", "x"], 2, "--device")),
        // gpu-info
        ("gpu-info: stdout full", case(&["gpu-info"], 2, "stdout").stdout_full()),
        ("gpu-info: unknown option", case(&["gpu-info", "--bogus"], 2, "--bogus")),
        // the hidden semantics-doc, and the command line itself
        (
            "semantics-doc: no markers",
            case(&["semantics-doc", "--doc", "d.md", "--semantics"], 2, "d.md").arg(root().join("harness/spec/semantics.json")).file("d.md", "no markers\n"),
        ),
        ("semantics-doc: bad table", case(&["semantics-doc", "--doc", "d.md", "--semantics", "t.json"], 2, "t.json").file("t.json", "[1]").file("d.md", "")),
        ("no subcommand", case(&[], 2, "subcommand")),
        ("unknown subcommand", case(&["bogus"], 2, "bogus")),
    ]
}

#[test]
fn every_bad_input_is_one_error_line_naming_it() {
    let base = tmp("table");
    // runs look for the project's vectors/ from their folder upwards (and refuse to start
    // without them): every case's folder sits below a link to the checkout's
    std::os::unix::fs::symlink(root().join("vectors"), base.join("vectors")).unwrap();
    let cases = cases();
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for (i, (name, c)) in cases.iter().enumerate() {
        let dir = base.join(format!("{i:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        let t = std::time::Instant::now();
        let o = c.run(&dir);
        let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        let mut bad = Vec::new();
        if o.status.code() != Some(c.code) {
            bad.push(format!("exit {:?}, want {}", o.status.code(), c.code));
        }
        if errors.len() != 1 {
            bad.push(format!("{} error lines, want 1", errors.len()));
        } else if !errors[0].contains(c.names) {
            bad.push(format!("the error line does not name {:?}", c.names));
        }
        // one line: besides it, stderr holds at most the seed a command always prints
        let other = stderr.lines().filter(|l| !l.starts_with("error:") && !l.starts_with("seed: ")).count();
        if other > 0 {
            bad.push(format!("{other} more lines on stderr"));
        }
        if stdout.contains("panicked") || stderr.contains("panicked") {
            bad.push("panicked".into());
        }
        // a command that fails never says it passed, not even before its error (an
        // incomplete merge once printed PASSED first)
        if stdout.lines().any(|l| l.starts_with("PASSED")) {
            bad.push("stdout says PASSED".into());
        }
        if let Some(s) = c.stdout_has.filter(|s| !stdout.contains(s)) {
            bad.push(format!("stdout lacks {s:?}"));
        }
        if t.elapsed().as_secs() > 10 {
            bad.push(format!("took {:.1} s", t.elapsed().as_secs_f64()));
        }
        if !bad.is_empty() {
            failures.push(format!(
                "[{i}] {name}: {}\n    args {:?}\n    stderr: {stderr}\n    stdout: {}",
                bad.join("; "),
                c.args,
                stdout.chars().take(400).collect::<String>()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// A vector line that is not UTF-8 is one malformed vector (a failed check, exit 1, named by
/// file and line), not a file that cannot be read: the other vectors are still replayed.
#[test]
fn a_vector_line_that_is_not_utf8_fails_only_itself() {
    let d = tmp("utf8");
    std::fs::write(d.join("v.jsonl"), [GOOD_VECTOR.as_bytes(), b"\n\xff\xfe\n", GOOD_VECTOR.as_bytes(), b"\n"].concat()).unwrap();
    let o = Command::new(BIN).current_dir(&d).args(["verify", "v.jsonl"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("v.jsonl:2: malformed: the line is not UTF-8"), "{out}");
    assert!(out.contains("3 vectors: 2 pass, 0 mismatch, 1 malformed"), "{out}");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    let _ = std::fs::remove_dir_all(&d);
}

/// A run that cannot write its report keeps every result in its journal, and `--resume`
/// finishes the report without running anything again.
#[test]
fn a_run_that_cannot_write_its_report_loses_nothing() {
    let d = tmp("report");
    let out = d.join("out");
    std::fs::create_dir_all(out.join("summary.json")).unwrap(); // a folder where the file goes
    std::fs::write(d.join("v.jsonl"), format!("{GOOD_VECTOR}\n")).unwrap();
    let args = ["run", "--seed", "4", "--count", "24", "--inputs", "4", "--batch", "8", "--verify-dir", "v.jsonl", "--out", "out"];
    let harness = |extra: &[&str]| Command::new(BIN).current_dir(&d).args(args).args(extra).env("HMUL2_FAKE_EXECUTOR", "ok").output().unwrap();
    let o = harness(&[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("summary.json"), "{stderr}");
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 1 + 3, "header and all three batches are journaled: {journal}");
    std::fs::remove_dir(out.join("summary.json")).unwrap();
    let o = harness(&["--resume"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("resume: 24 items already journaled in 3 batches"), "{stdout}");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["totals"]["instructions"], 24);
    // every result once: compared, or undefined (an HSETP2 writing one predicate twice)
    assert_eq!(s["totals"]["compared"].as_u64().unwrap() + s["totals"]["undefined"].as_u64().unwrap(), 24 * 4);
    assert_eq!(s["timing"]["compared"], 0, "nothing ran twice");
    let _ = std::fs::remove_dir_all(&d);
}
