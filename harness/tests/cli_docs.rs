//! Shell completions and man pages, made from the command definitions themselves.

use crate::common;

use common::{bin, tmp};

#[test]
fn completions_name_every_command_and_parse_in_bash() {
    let o = bin().args(["completions", "bash"]).output().unwrap();
    assert!(o.status.success());
    let script = String::from_utf8_lossy(&o.stdout);
    for word in ["decode", "encode", "eval", "verify", "run", "merge", "--json", "--sched", "--nvdisasm"] {
        assert!(script.contains(word), "the bash completions lack {word}");
    }
    let d = tmp("completions");
    std::fs::write(d.join("c.bash"), script.as_bytes()).unwrap();
    let check = std::process::Command::new("bash").arg("-n").arg(d.join("c.bash")).output().unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        assert!(o.status.success() && o.stdout.len() > 1000, "{shell}");
    }
    let o = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn man_pages_come_from_the_command_definitions() {
    let o = bin().arg("man").output().unwrap();
    let page = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && page.contains(".TH hmul2-harness 1") && page.contains("eval"), "{page}");
    let d = tmp("man");
    let o = bin().args(["man", "--out"]).arg(&d).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eval = std::fs::read_to_string(d.join("hmul2-harness-eval.1")).unwrap();
    assert!(eval.contains("\\-\\-pred"), "{eval}");
    // hidden commands (the worker) get no page
    assert!(!d.join("hmul2-harness-worker.1").exists());
}

/// Texts that said HMUL2 alone where the four instructions are meant, and the smaller
/// promises of the help texts.
#[test]
fn help_and_docs_speak_of_the_whole_family() {
    let top = bin().arg("--help").output().unwrap();
    let top = String::from_utf8_lossy(&top.stdout);
    assert!(top.lines().next().is_some_and(|l| ["HMUL2", "HADD2", "HFMA2", "HFMA2.MMA"].iter().all(|m| l.contains(m))), "{top}");
    for cmd in ["run", "build-kernel"] {
        let h = bin().args([cmd, "--help"]).output().unwrap();
        let h = String::from_utf8_lossy(&h.stdout);
        assert!(["rrrr", "imm-c", "const-c", "constx-c", "ur-c"].iter().all(|f| h.contains(f)), "{cmd} --help leaves forms out:\n{h}");
    }
    let d = tmp("report-title");
    let o = bin().args(["report", "--vectors", "vectors", "--out"]).arg(d.join("r.html")).output().unwrap();
    assert!(o.status.success());
    let page = std::fs::read_to_string(d.join("r.html")).unwrap();
    let family: Vec<&str> = hmul2_harness::isa::Op::ALL.iter().map(|o| o.mnemonic()).collect();
    assert!(page.contains(&format!("<title>{} on SM90: what is proven, per bit</title>", family.join(", "))), "{page}");
    let root = common::root();
    for (doc, first) in [("docs/runner.md", "the packed-half family"), ("docs/semantics.md", "the packed-half family")] {
        let t = std::fs::read_to_string(root.join(doc)).unwrap();
        assert!(t.lines().next().is_some_and(|l| l.contains(first)), "{doc}'s title");
    }
    // the runner's status does not deny the GPU sessions docs/hardware records
    let sessions = std::fs::read_dir(root.join("docs/hardware")).unwrap().filter(|e| e.as_ref().is_ok_and(|e| e.path().is_dir())).count();
    let runner = std::fs::read_to_string(root.join("docs/runner.md")).unwrap();
    assert!(sessions == 0 || !runner.contains("has not been executed on a GPU"), "docs/runner.md says no GPU ran, docs/hardware has {sessions} session(s)");
}

/// `ci/nightly --help` prints its usage; an option is never taken as the output folder.
#[test]
fn nightly_help_is_help_and_an_option_is_no_folder() {
    let root = common::root();
    let d = tmp("nightly-help");
    let o = std::process::Command::new("bash").arg(root.join("ci/nightly")).arg("--help").current_dir(&d).output().unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && t.contains("ci/nightly [OUT_DIR]"), "{t}");
    for bad in [&["--out", "x"][..], &["a", "b"][..]] {
        let o = std::process::Command::new("bash").arg(root.join("ci/nightly")).args(bad).current_dir(&d).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    assert!(!root.join("--help").exists() && !root.join("--out").exists());
}
