//! harness-runner: patched kernels on SM90 GPUs through cudarc, results kept.
//!
//! [`gpu`] is the driver (dynamic loading, so nothing here needs CUDA to build), device
//! detection, the worker processes that isolate faults, and a fake executor for CPU-only
//! tests; [`run`] is the engine that compares results with the reference, bisects faults,
//! minimizes mismatches, journals batches and writes run reports. No clap here: the
//! `hmul2-harness` crate turns its command line into these calls. [`schema`] is the home of
//! every file format the tool writes and reads.

pub mod gpu;
pub mod run;
pub mod schema;

pub use harness_isa::{cli, errln, errp, gen, isa, nvdisasm, oracle, out, outfile, outln, rng, spec, target};
pub use harness_kernel::{exhaustive, kernel};
pub use harness_reference::{inputs, reference, replay, vectors};
