//! The README's examples, run as written and in order (each command sees the files the
//! earlier ones wrote), on the no-GPU path: every `console` block's `$ ` commands, each
//! command's standard output compared with the lines the README shows under it. A line
//! `...` stands for any number of lines, and `...` inside a line for any text (what names
//! the machine: paths, the reason no GPU is usable). Documentation that no longer runs, or
//! shows output the tool no longer prints, fails here. Needs nvdisasm (the run's software
//! checks).

use crate::common;

use common::{root, text, tmp, BIN};
use std::path::Path;
use std::process::Command;

/// One command of a `console` block and the output the README shows for it.
struct Shown {
    command: String,
    output: Vec<String>,
    /// the `## ` section it is in
    section: String,
}

/// Every `$ ` command of every ```console block, in order; `$ B=...` lines (which name the
/// binary) are left out.
fn shown(readme: &str) -> Vec<Shown> {
    let mut out: Vec<Shown> = Vec::new();
    let (mut section, mut in_block) = (String::new(), false);
    for line in readme.lines() {
        if let Some(s) = line.strip_prefix("## ") {
            section = s.to_string();
        }
        if line.starts_with("```") {
            in_block = line == "```console";
            continue;
        }
        if !in_block {
            continue;
        }
        match line.strip_prefix("$ ") {
            Some(c) if c.starts_with("B=") => {}
            Some(c) => out.push(Shown { command: c.to_string(), output: Vec::new(), section: section.clone() }),
            None => out.last_mut().expect("output before any command").output.push(line.to_string()),
        }
    }
    out
}

/// Whether `line` matches `pattern`, where `...` in the pattern stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || !line[first.len()..].ends_with(last) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `got` matches `want`, where a line `...` stands for any number of lines.
fn lines_match(want: &[String], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((w, rest)) if w == "..." => (0..=got.len()).any(|k| lines_match(rest, &got[k..])),
        Some((w, rest)) => got.split_first().is_some_and(|(g, more)| line_matches(w, g) && lines_match(rest, more)),
    }
}

/// Runs the README's console commands with `bin` as `$B`, in `dir`; returns the quick
/// start's commands run.
fn run_readme(bin: &Path, dir: &Path, only_quick_start: bool, path: Option<&std::ffi::OsStr>) -> usize {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let all = shown(&readme);
    let mut quick = 0;
    for s in all.iter().filter(|s| !only_quick_start || s.section == "Quick start") {
        let mut c = Command::new("sh");
        if let Some(p) = path {
            c.env("PATH", p).env_remove("HMUL2_NVDISASM");
        }
        let o = c.arg("-c").arg(&s.command).current_dir(dir).env("B", bin).env("CUDA_VISIBLE_DEVICES", "").env_remove("HMUL2_FAKE_EXECUTOR").output().unwrap();
        let t = text(&o);
        assert!(o.status.success(), "`{}` exited {:?}:\n{t}", s.command, o.status.code());
        assert!(!t.contains("panicked"), "`{}`:\n{t}", s.command);
        let out = String::from_utf8_lossy(&o.stdout);
        let got: Vec<&str> = out.lines().collect();
        assert!(lines_match(&s.output, &got), "`{}` printed\n{out}\nwhere the README shows\n{}", s.command, s.output.join("\n"));
        if s.command.starts_with("$B run ") {
            // the reason the hardware did not run is said once
            assert_eq!(out.matches("hardware: did not run").count(), 1, "{out}");
        }
        quick += (s.section == "Quick start") as usize;
    }
    quick
}

#[test]
fn the_readme_examples_run_and_print_what_it_shows() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.lines().count() <= 200, "the README is a guide of at most 200 lines");
    for c in ["bash ci/main.sh", "bash ci/test.sh"] {
        assert!(readme.contains(&format!("\n{c} ")), "the set-up command {c} is gone");
    }
    let dir = tmp("readme");
    std::os::unix::fs::symlink(root().join("vectors"), dir.join("vectors")).unwrap();
    let quick = run_readme(Path::new(BIN), &dir, false, None);
    assert!(quick >= 4, "the quick start has {quick} commands");
    assert!(dir.join("out/quick/summary.json").is_file() && dir.join("out/quick/junit.xml").is_file());
}

/// A binary copied out of the checkout works from any folder: the quick start, run in a
/// folder with no `vectors/` and nothing of the tree above it, prints what the README shows
/// (the specs, semantics table and reference vectors are built in; nvdisasm is found on
/// PATH, as a user who installed it would have it).
#[test]
fn a_copied_binary_runs_the_quick_start_from_any_folder() {
    let d = tmp("copied");
    std::fs::create_dir_all(d.join("bin")).unwrap();
    std::fs::create_dir_all(d.join("work")).unwrap();
    let copy = d.join("bin").join("hmul2-harness");
    // copied by another process: a file this (threaded) test process held open for writing
    // could leak into another test's fork and make the exec fail with ETXTBSY
    assert!(Command::new("cp").arg(BIN).arg(&copy).status().unwrap().success());
    let tools = root().join(".tools").join("bin");
    let path = std::env::join_paths(std::iter::once(tools).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let quick = run_readme(&copy, &d.join("work"), true, Some(&path));
    assert!(quick >= 4);
    let s = common::summary(&d.join("work/out/quick"));
    let verify = &s["software_checks"]["verify"];
    assert_eq!(verify["ok"], true, "{verify}");
    assert!(verify["dir"].as_str().unwrap().starts_with("built-in:"), "{verify}");
    assert!(verify["pass"].as_u64().unwrap() > 1000, "{verify}");
    assert_eq!(s["software_checks"]["oracle"]["ok"], true);
    let _ = std::fs::remove_dir_all(&d);
}

/// The README's Rust example is the reference crate's doc example, which `cargo test
/// --doc` compiles and runs: the same lines, so the README's cannot go stale unseen.
#[test]
fn the_readme_rust_example_is_the_crate_doctest() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme.split("```rust\n").nth(1).and_then(|b| b.split("\n```").next()).expect("a ```rust block");
    let lib = std::fs::read_to_string(root().join("harness/reference/src/lib.rs")).unwrap();
    let doc: String = lib.lines().filter_map(|l| l.strip_prefix("//!")).map(|l| l.strip_prefix(' ').unwrap_or(l)).collect::<Vec<_>>().join("\n");
    assert!(doc.contains(&format!("```\n{block}\n```")), "README's Rust example is not harness-reference's doc example:\n{block}");
}

#[test]
fn the_matcher_takes_what_it_should_and_nothing_else() {
    let w = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&w(&["a", "...", "z"]), &["a", "b", "c", "z"]));
    assert!(lines_match(&w(&["a", "...", "z"]), &["a", "z"]));
    assert!(!lines_match(&w(&["a", "z"]), &["a", "b", "z"]));
    assert!(!lines_match(&w(&["a"]), &["a", "b"]));
    assert!(line_matches("x (no GPU: ...)", "x (no GPU: none here)"));
    assert!(!line_matches("x (no GPU: ...)", "y (no GPU: none here)"));
    assert!(!line_matches("ab...ba", "aba"));
}
