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

/// FNV-1a, 64-bit: a fingerprint of a file's bytes.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The bytes of every file `build-kernel` writes stay those of the patcher as it was when this
/// test was written (commit 835a52d): the benchmark's batch, every instruction and form mixed,
/// the bindless form, and HFMA2's operand 3 from bank 3. A faster patcher must write the same.
/// A file's name, length and [`fnv1a`].
type Pin = (&'static str, usize, u64);

#[test]
fn build_kernel_output_is_pinned_byte_for_byte() {
    #[rustfmt::skip]
    let pins: [(&[&str], [Pin; 3]); 4] = [
        (&["--seed", "1", "--count", "4096", "--instruction", "HMUL2"],
         [("kernel.cubin", 1312880, 0x08c1_1a07_3ea6_7d7a), ("input.bin", 17063424, 0xd952_9706_6a37_334c), ("manifest.json", 1627089, 0xd73f_a73b_a960_5b2c)]),
        (&["--seed", "5", "--count", "600", "--threads", "64"],
         [("kernel.cubin", 274672, 0x973b_6011_7b38_2607), ("input.bin", 760960, 0xe556_ba1b_30dc_ed97), ("manifest.json", 273776, 0xd8b0_31c0_32bc_c365)]),
        (&["--seed", "9", "--count", "300", "--threads", "96", "--form", "constx"],
         [("kernel.cubin", 202864, 0xeb92_99c3_5b07_f57f), ("input.bin", 644992, 0x6828_9252_36e4_b1e6), ("manifest.json", 162220, 0x0699_35b3_2775_55ee)]),
        (&["--seed", "9", "--count", "300", "--threads", "32", "--form", "const", "--instruction", "HFMA2"],
         [("kernel.cubin", 183536, 0xebd9_a71c_0a1e_3e21), ("input.bin", 192000, 0x394e_d593_ee8a_615f), ("manifest.json", 172740, 0x0a23_ff66_39c7_e8fc)]),
    ];
    for (n, (args, files)) in pins.iter().enumerate() {
        let dir = tmp(&format!("pin{n}"));
        let out = bin().arg("build-kernel").args(*args).arg("--out").arg(&dir).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        for (name, len, digest) in files {
            let b = std::fs::read(dir.join(name)).unwrap();
            assert_eq!((b.len(), fnv1a(&b)), (*len, *digest), "{args:?}: {name} differs from the pinned bytes");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
