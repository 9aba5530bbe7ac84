//! The run engine's parts: batches of cases through a backend ([`pipeline`], [`engine`]),
//! fault bisection and mismatch minimization ([`minimize`]), the journal that makes a run
//! resumable ([`journal`]), the report files ([`report`]) and hardware vectors
//! ([`vector_out`]). The `run` subcommand (harness/src/run.rs) plans and drives them.

pub mod engine;
pub mod journal;
pub mod minimize;
pub mod pipeline;
pub mod report;
pub mod vector_out;

pub use crate::exhaustive;
