//! harness-reference: what each packed-half instruction computes, bit for bit, on any machine.
//!
//! [`mod@reference`] is the arithmetic (FP16 and BF16 lanes, every modifier, every undocumented
//! choice named by its policy); [`inputs`] the source values one execution reads; [`vectors`]
//! the recorded results (JSON Lines) and [`replay`] their check against the reference.
//! Depends only on `harness-isa`.

pub mod inputs;
pub mod reference;
pub mod replay;
pub mod vectors;

pub use harness_isa::{cli, gen, isa, rng, spec, testlevel};
