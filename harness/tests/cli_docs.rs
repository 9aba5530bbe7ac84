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
