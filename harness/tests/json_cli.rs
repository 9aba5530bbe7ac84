//! `--json` everywhere results are printed: each command's output parses as JSON (one
//! value a line) and holds the result its text shows.

use crate::common;

use common::{bin, text};

fn json_lines(args: &[&str]) -> Vec<serde_json::Value> {
    let o = bin().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}"))).collect()
}

const WORD: &str = "0x000fe200000000000000000201007232";

#[test]
fn every_result_printing_command_speaks_json() {
    let d = json_lines(&["decode", "--json", WORD]);
    assert_eq!(d[0]["text"], "HMUL2 R0, R1, R2");
    let e = json_lines(&["encode", "--json", "HMUL2 R0, R1, R2"]);
    assert_eq!(e[0]["text"], "HMUL2 R0, R1, R2");
    let x = json_lines(&["explain", "--json", WORD]);
    assert_eq!(x[0]["text"], "HMUL2 R0, R1, R2");
    assert!(x[0]["fields"].as_array().unwrap().iter().any(|f| f["field"] == "dst" && f["meaning"] == "R0"), "{}", x[0]);
    let v = json_lines(&["verify", "--json", "vectors/reference"]);
    assert_eq!(v[0]["ok"], true);
    assert!(v[0]["pass"].as_u64().unwrap() > 1000);
    let g = json_lines(&["generate", "--json", "--seed", "3", "--count", "2"]);
    assert_eq!(g.len(), 2);
    let r = json_lines(&["eval", "--json", "HMUL2 R0, R1, R2", "1", "2"]);
    assert_eq!(r[0]["result"]["word"], "0x40004000");
    // gpu-info's one object is pretty-printed (ci/device-session greps it as such)
    let o = bin().args(["gpu-info", "--json"]).output().unwrap();
    let i: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(i.is_object() && String::from_utf8_lossy(&o.stdout).contains("\"problem\": "), "{i}");
}

#[test]
fn files_are_named_by_flags_that_say_what_they_are() {
    let o = bin().args(["oracle", "--help"]).output().unwrap();
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(h.contains("--report <FILE>") && !h.contains("--json"), "{h}");
    let o = bin().args(["settle", "--help"]).output().unwrap();
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(h.contains("--semantics <FILE>") && !h.contains("--json"), "{h}");
}
