//! harness-kernel: from instruction words to a runnable sm_90 cubin, and back.
//!
//! [`kernel`] holds the template kernel, the cubin patcher and its ELF writer, the helper
//! instructions around the one under test, and a CPU emulator of the patched programs;
//! [`exhaustive`] is the device-side digest protocol of exhaustive mode, which the digest
//! kernel implements and the runner checks. Depends on `harness-isa` and `harness-reference`.

pub mod exhaustive;
pub mod kernel;

pub use harness_isa::{cli, gen, isa, rng, spec, target};
pub use harness_reference::{inputs, reference};
