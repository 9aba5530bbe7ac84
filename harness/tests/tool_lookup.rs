//! The NVIDIA tools are found by one rule (a flag, a variable, the project's .tools, PATH),
//! never in a `.tools` up the working folder's ancestors: a planted one must not run.

use crate::common;

use common::BIN;
use std::process::Command;

#[test]
fn a_tools_folder_planted_above_the_working_folder_is_not_run() {
    let d = std::env::temp_dir().join(format!("hmul2-planted-{}", std::process::id()));
    let bin = d.join(".tools").join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = d.join("planted-ran");
    let script = bin.join("nvdisasm");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\necho planted\n", marker.display())).unwrap();
    let mut perm = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&script, perm).unwrap();
    let work = d.join("a").join("b");
    std::fs::create_dir_all(&work).unwrap();
    let o = Command::new(BIN).args(["oracle", "--seed", "1", "--count", "20"]).current_dir(&work).env_remove("HMUL2_NVDISASM").output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!marker.exists(), "the planted nvdisasm ran: {text}");
    // the project's own (pinned) nvdisasm judged the words instead
    assert!(o.status.success() && text.contains("0 mismatches") && text.contains("V13.2"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The rule's order: a command's flag before the variable; a flag or variable naming no
/// file is an error naming it, never a fall-back to another tool.
#[test]
fn the_flag_comes_before_the_variable_and_neither_falls_back() {
    let nv = common::root().join(".tools/bin/nvdisasm");
    let o = Command::new(BIN)
        .args(["oracle", "--seed", "1", "--count", "5", "--nvdisasm"])
        .arg(&nv)
        .env("HMUL2_NVDISASM", "/nonexistent/nvdisasm")
        .output()
        .unwrap();
    let t = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && t.contains("0 mismatches"), "{t}");
    let o = Command::new(BIN).args(["oracle", "--seed", "1", "--count", "5", "--nvdisasm", "/nonexistent/nvdisasm"]).output().unwrap();
    let t = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("--nvdisasm /nonexistent/nvdisasm, which is not a file"), "{t}");
    let o = Command::new(BIN).args(["oracle", "--seed", "1", "--count", "5"]).env("HMUL2_NVDISASM", "/nonexistent/nvdisasm").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("$HMUL2_NVDISASM = /nonexistent/nvdisasm, which is not a file"));
}

/// `run` takes `--nvdisasm` like `oracle` and `probe`: the flag before the variable for the
/// oracle check of its words; a flag naming no file is refused before anything runs.
#[test]
fn run_takes_the_nvdisasm_flag_by_the_same_rule() {
    let d = common::tmp("run-nvdisasm");
    let nv = common::root().join(".tools/bin/nvdisasm");
    let run = |out: &str, nvdisasm: &std::path::Path| {
        Command::new(BIN)
            .args(["run", "--seed", "1", "--count", "5", "--inputs", "32", "--nvdisasm"])
            .arg(nvdisasm)
            .arg("--out")
            .arg(d.join(out))
            // the no-GPU path, whatever this machine has; the variable names no file
            .env("CUDA_VISIBLE_DEVICES", "")
            .env_remove("HMUL2_FAKE_EXECUTOR")
            .env("HMUL2_NVDISASM", "/nonexistent/nvdisasm")
            .output()
            .unwrap()
    };
    let o = run("r", &nv);
    let t = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{t}");
    let oracle = &common::summary(&d.join("r"))["software_checks"]["oracle"];
    assert!(oracle["ran"] == true && oracle["ok"] == true && oracle["words"] == 5, "the flag's nvdisasm judged the words: {oracle}\n{t}");
    assert!(oracle["nvdisasm"].as_str().is_some_and(|v| v.contains("13.2")), "{oracle}");
    let o = run("bad", std::path::Path::new("/nonexistent/nvdisasm"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("--nvdisasm /nonexistent/nvdisasm, which is not a file"), "{err}");
    assert!(!d.join("bad").exists(), "nothing ran");
}
