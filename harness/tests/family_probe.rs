//! The SM90 specs of HMNMX2, HSET2 and HSETP2 (`harness/spec/sm90/`, or `harness/spec/proposed/sm90/`
//! while one is not in the build; issue 41) and their report (`docs/family.md`,
//! `harness/spec/sm90/family/evidence.json`) are what the
//! pinned tools say now: `python3 ci/probe/family.py --check` decodes about 22,000 words with the
//! specs, asks nvdisasm (SM80 .. SM120), ptxas and cuobjdump again, and exits non-zero on any
//! difference or any word the specs read differently from nvdisasm. An outside truth: a missing
//! python3 or tool fails this test, never skips it (`bash ci/install-tools.sh` installs the tools).

use crate::common;

use hmul2_harness::nvdisasm::find_tool;
use std::process::Command;

#[test]
fn the_proposed_specs_and_their_evidence_are_what_the_tools_say() {
    let mut c = Command::new("python3");
    c.current_dir(common::root()).args(["ci/probe/family.py", "--check"]);
    // the tools by the project's one rule, handed to the script by the variables it honours
    for name in ["nvdisasm", "ptxas", "cuobjdump"] {
        let path = find_tool(name).unwrap_or_else(|e| panic!("{name} is needed for this check (bash ci/install-tools.sh): {e}"));
        c.env(format!("HMUL2_{}", name.to_ascii_uppercase()), path);
    }
    let o = c.output().unwrap_or_else(|e| panic!("python3 is needed for this check: {e}"));
    let t = common::text(&o);
    assert!(o.status.success(), "python3 ci/probe/family.py --check: {}\n{t}", o.status);
    // the random words' seed is printed, and both generated files were compared
    assert!(t.contains("seed 41"), "{t}");
    assert_eq!(t.matches(": ok").count(), 2, "{t}");
}

#[test]
fn the_committed_evidence_has_no_word_the_specs_misread() {
    let path = common::root().join("harness/spec/sm90/family/evidence.json");
    let ev: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let ins = ev["instructions"].as_object().unwrap();
    assert_eq!(ins.keys().collect::<Vec<_>>(), ["hmnmx2", "hset2", "hsetp2"]);
    for (name, r) in ins {
        let bad = r["spec_mismatches"].as_array().unwrap();
        assert!(bad.is_empty(), "{name}: {bad:?}");
        let corpus = r["ptxas_corpus"].as_array().unwrap();
        assert!(corpus.len() >= 20, "{name}: {} ptxas words", corpus.len());
        for w in corpus {
            assert_eq!(w["spec"], "agrees", "{name}: {w}");
            assert_eq!(w["cuobjdump"].as_str().unwrap().replace(".reuse", ""), w["nvdisasm"].as_str().unwrap().replace(".reuse", ""), "{name}");
        }
        assert!(r["illegal"]["words_asked"].as_u64().unwrap() > 7000, "{name}");
    }
}

#[test]
fn a_missing_tool_fails_the_check_with_exit_2_never_a_pass() {
    let o = Command::new("python3")
        .current_dir(common::root())
        .args(["ci/probe/family.py", "--check"])
        .env("HMUL2_NVDISASM", "/nonexistent/nvdisasm")
        .output()
        .unwrap_or_else(|e| panic!("python3 is needed for this check: {e}"));
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("$HMUL2_NVDISASM = /nonexistent/nvdisasm, which is not a file"), "{t}");
    assert!(!t.contains(": ok"), "{t}");
}
