//! hmul2-harness: the command line over the packed-half family of SM90, bit for bit.
//!
//! Data flows one way, through crates: `harness-isa` ([`spec`], [`isa`], [`gen`],
//! [`nvdisasm`], [`oracle`]) → `harness-reference` ([`mod@reference`], [`vectors`], [`replay`]) →
//! `harness-kernel` ([`kernel`], [`exhaustive`]) → `harness-runner` ([`gpu`], the run
//! engine) → this crate: the subcommands ([`commands`], [`mod@eval`], [`explain`], [`verify`],
//! [`build_kernel`], [`run`], [`settle`]) and the HTML [`report`]. The lower crates are
//! re-exported here under their module names, so `hmul2_harness::isa` is `harness_isa::isa`.
//! [`schema`] is the one home of every file format the tool writes and reads.

pub mod build_kernel;
pub mod commands;
pub mod eval;
pub mod explain;
pub mod ladder;
pub mod probe;
pub mod report;
pub mod run;
pub mod settle;
pub mod verify;

pub use harness_isa::{cli, errln, errp, gen, isa, nvdisasm, oracle, out, outfile, outln, rng, seedpage, spec, target, testlevel};
pub use harness_kernel::{exhaustive, kernel};
pub use harness_reference::{inputs, reference, replay, vectors};
pub use harness_runner::{gpu, schema};
