//! The per-architecture evidence (`docs/architectures.md`, `harness/spec/arch/*/evidence.json`)
//! is what the pinned tools say now: `python3 ci/probe/arch.py --check` asks nvdisasm (SM80 ..
//! SM120), ptxas and cuobjdump again (about 30 s) and exits non-zero on any difference. An
//! outside truth: a missing python3 or tool fails this test, never skips it
//! (`bash ci/install-tools.sh` installs the tools).

use crate::common;

use hmul2_harness::nvdisasm::find_tool;
use std::process::Command;

#[test]
fn the_committed_architecture_evidence_is_what_the_tools_say() {
    let mut c = Command::new("python3");
    c.current_dir(common::root()).args(["ci/probe/arch.py", "--check"]);
    // the tools by the project's one rule, handed to the script by the variables it honours
    for name in ["nvdisasm", "ptxas", "cuobjdump"] {
        let path = find_tool(name).unwrap_or_else(|e| panic!("{name} is needed for this check (bash ci/install-tools.sh): {e}"));
        c.env(format!("HMUL2_{}", name.to_ascii_uppercase()), path);
    }
    let o = c.output().unwrap_or_else(|e| panic!("python3 is needed for this check: {e}"));
    let t = common::text(&o);
    assert!(o.status.success(), "python3 ci/probe/arch.py --check: {}\n{t}", o.status);
    // every generated file was compared, none missing from the script's list
    let arch = std::fs::read_dir(common::root().join("harness/spec/arch")).unwrap().count();
    assert_eq!(t.matches(": ok").count(), arch + 1, "{t}");
}
