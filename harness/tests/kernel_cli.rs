//! `hmul2-harness build-kernel`: files written, manifest complete, bad arguments one line, exit 2.

mod common;

use common::{bin, tmp};

#[test]
fn build_kernel_writes_cubin_and_manifest() {
    let dir = tmp("build").join("k");
    let out = bin().args(["build-kernel", "--seed", "11", "--count", "40", "--threads", "64", "--out"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("seed: 11"));
    let cubin = std::fs::read(dir.join("kernel.cubin")).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let cases = m["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 40);
    assert_eq!(m["threads_per_case"], 64);
    for (i, c) in cases.iter().enumerate() {
        let w = hmul2_harness::isa::parse_hex(c["encoding"].as_str().unwrap()).unwrap();
        assert_eq!(hmul2_harness::kernel::runnable(w), Ok(()));
        assert_eq!(c["output_offset"], i * 64 * 4);
        assert!(cubin.len() > c["code_offset"].as_u64().unwrap() as usize);
    }
}

#[test]
fn bad_arguments_are_one_line_errors() {
    for args in [
        vec!["build-kernel", "--count", "0", "--out", "/tmp/x"],
        vec!["build-kernel", "--seed", "1", "--count", "3", "--form", "nope", "--out", "/tmp/x"],
        vec!["build-kernel", "--seed", "1", "--count", "3", "--threads", "48", "--out", "/tmp/x"],
    ] {
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{err}");
    }
}
