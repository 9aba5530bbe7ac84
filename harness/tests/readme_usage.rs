//! The README's usage block, run as written and in order (each command sees the files the
//! earlier ones wrote), on the no-GPU path: documentation that no longer runs fails here.
//! Every command must exit 0, print something, and never panic; the few whose output says
//! what the README promises are checked for it. Fails when nvdisasm is missing (the oracle
//! line and the run's software checks need it).

use crate::common;

use common::{root, text, tmp, BIN};
use std::process::Command;

/// The commands of the README's `## Usage` block, comments dropped, `B=` lines skipped.
fn usage_commands(readme: &str) -> Vec<String> {
    let section = readme.split("\n## Usage").nth(1).expect("README has a ## Usage section");
    let block = section.split("```sh\n").nth(1).and_then(|b| b.split("\n```").next()).expect("## Usage has a ```sh block");
    block.lines().filter(|l| !l.starts_with("B=")).map(|l| l.split("  #").next().unwrap().trim().to_string()).filter(|l| !l.is_empty()).collect()
}

#[test]
fn the_readme_usage_block_runs_as_written() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let commands = usage_commands(&readme);
    assert!(commands.len() >= 15, "only {} commands found in the usage block", commands.len());
    assert!(commands.iter().all(|c| c.starts_with("$B ")), "{commands:#?}");
    let dir = tmp("usage");
    // the inputs the block reads, and the committed vectors where the README expects them
    std::fs::write(dir.join("words.txt"), "0x000fe200000000000000000201007232\n0x02008e0000200a00f17be60006853a32\n0x00000000000000000000000000000000\n")
        .unwrap();
    let case = r#"{"encoding":"0x000fe200000000000000000201007232","a":"0x3c003c00","b":"0x40004000","d":"0x00000000","pred":"0x01"}"#;
    std::fs::write(dir.join("cases.jsonl"), format!("{case}\n")).unwrap();
    std::os::unix::fs::symlink(root().join("vectors"), dir.join("vectors")).unwrap();
    // the output checks below, by name: each must meet its command (a reworded README line
    // must not turn its check off silently)
    let mut fired = std::collections::BTreeMap::<&str, usize>::new();
    for c in &commands {
        let o = Command::new("sh")
            .arg("-c")
            .arg(c)
            .current_dir(&dir)
            .env("B", BIN)
            .env("CUDA_VISIBLE_DEVICES", "")
            .env_remove("HMUL2_FAKE_EXECUTOR")
            .output()
            .unwrap();
        let t = text(&o);
        assert!(o.status.success(), "`{c}` exited {:?}:\n{t}", o.status.code());
        assert!(!t.contains("panicked"), "`{c}`:\n{t}");
        assert!(!o.stdout.is_empty() || !o.stderr.is_empty(), "`{c}` printed nothing");
        let out = String::from_utf8_lossy(&o.stdout);
        if c.contains("decode 0x000fe200000000000000000201007232") {
            *fired.entry("decode word").or_default() += 1;
            assert_eq!(out.trim(), "HMUL2 R0, R1, R2", "`{c}`");
        }
        if c.contains("decode 0x000fe200000000000000000201007230") {
            *fired.entry("decode HADD2 word").or_default() += 1;
            assert_eq!(out.trim(), "HADD2 R0, R1, R2", "`{c}`");
        }
        if c.contains("decode 0x000fe200000000030000000201007231") {
            *fired.entry("decode HFMA2 word").or_default() += 1;
            assert_eq!(out.trim(), "HFMA2 R0, R1, R2, R3", "`{c}`");
        }
        if c.contains("decode 0x000fe200000000030000000201007635") {
            *fired.entry("decode HFMA2.MMA word").or_default() += 1;
            assert_eq!(out.trim(), "HFMA2.MMA R0, R1, R3, c[0x0][0x0]", "`{c}`");
        }
        if c.contains("generate --instruction HADD2") {
            *fired.entry("generate one instruction").or_default() += 1;
            let words: Vec<&str> = out.lines().collect();
            assert_eq!(words.len(), 3, "{out}");
            assert!(words.iter().all(|w| w.ends_with("30") && hmul2_harness::isa::parse_hex(w).is_ok_and(|x| x & 0x1ff == 0x030)), "{out}");
        }
        if c.contains("encode 'HADD2.F32") {
            *fired.entry("encode HADD2.F32").or_default() += 1;
            let w = hmul2_harness::isa::parse_hex(out.trim()).unwrap();
            assert_eq!(hmul2_harness::isa::render(&hmul2_harness::isa::decode(w).unwrap()), "HADD2.F32 R25, -RZ, R4.H0_H0");
        }
        if c.contains("probe --word") {
            *fired.entry("probe").or_default() += 1;
            assert!(out.contains("bit 78:") && out.contains("HADD2.F32 R0, R1, R2") && out.contains("bit 80:") && out.contains("HADD2.FTZ"), "{out}");
        }
        if c.contains("decode < words.txt") {
            *fired.entry("decode stdin").or_default() += 1;
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 3, "one line out per line in: {out}");
            assert!(lines[2].starts_with("illegal: "), "{out}");
        }
        if c.contains("eval < cases.jsonl") {
            *fired.entry("eval").or_default() += 1;
            // 1.0 × 2.0 in both FP16 lanes
            assert!(out.contains(r#""expect":"0x40004000""#), "{out}");
        }
        if c.contains("settle ") {
            *fired.entry("settle").or_default() += 1;
            assert!(out.contains("confirmed") && !out.contains("CONTRADICTED"), "{out}");
        }
        if c.starts_with("$B run ") {
            *fired.entry("run").or_default() += 1;
            assert!(t.contains("did not run"), "`{c}` says the hardware did not run:\n{t}");
        }
    }
    let want: std::collections::BTreeMap<&str, usize> = [
        ("decode word", 1),
        ("decode HADD2 word", 1),
        ("decode HFMA2 word", 1),
        ("decode HFMA2.MMA word", 1),
        ("decode stdin", 1),
        ("generate one instruction", 1),
        ("encode HADD2.F32", 1),
        ("probe", 1),
        ("eval", 1),
        ("settle", 1),
        ("run", 3),
    ]
    .into();
    assert_eq!(fired, want, "each output check met its README command");
    // what the block promises it wrote
    for f in ["oracle.json", "k/kernel.cubin", "k/manifest.json", "out/run/summary.json", "out/all/summary.json", "report.html"] {
        assert!(dir.join(f).is_file(), "{f} was not written");
    }
    let essence = |p: &str| {
        let s = common::summary(&dir.join(p));
        let o = &s["software_checks"]["oracle"];
        serde_json::json!([
            s["totals"],
            s["by_form"],
            s["software_checks"]["verify"],
            o["words"],
            o["agreed_text"],
            o["agreed_illegal"],
            o["mismatches"],
            o["ok"]
        ])
    };
    assert_eq!(essence("out/all"), essence("out/run"), "merged shards equal the single run");
}
