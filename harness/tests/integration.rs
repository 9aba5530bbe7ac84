//! The integration tests across the crates, one test binary: cargo runs test binaries one
//! after another, so one binary lets every file's tests share the cores (a file that waits
//! on a child process, a timeout or a tool no longer holds the next file back), and one link
//! replaces twenty. Each module is one file of this folder; `cargo test --test integration
//! MODULE::` runs one file's tests. `run_gpu.rs` stays its own binary: `ci/device-bundle`
//! ships it to a GPU machine alone.

mod common;

mod arch_nvdisasm;
mod arch_probe;
mod arch_run;
mod bad_input;
mod cli_docs;
mod digest_emulate;
mod eval_cli;
mod fake_driver;
mod family_probe;
mod faults;
mod isa_roundtrip;
mod json_cli;
mod kernel_arch;
mod kernel_cli;
mod kernel_emulate;
mod kernel_helpers;
mod kernel_patch;
mod kernel_scaffold;
mod kernel_template;
mod oracle_nvdisasm;
mod paste_cli;
mod probe_nvdisasm;
mod ptxas_add_semantics;
mod ptxas_semantics;
mod readme_usage;
mod reference_add_exhaustive;
mod reference_exhaustive;
mod rehearsal;
mod report_browser;
mod resume;
mod roads;
mod run_cli;
mod tool_lookup;
mod vectors_cli;
