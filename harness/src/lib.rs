//! hmul2-harness: the truth about one NVIDIA SM90 instruction, HMUL2.
//!
//! Data flows one way: [`spec`] (the encoding as data) → [`isa`] (typed instructions:
//! encode, decode, render, parse) → [`gen`] (seeded random and factorial encodings) →
//! [`nvdisasm`] (NVIDIA's disassembler as the judge of syntax and legality).

pub mod cli;
pub mod commands;
pub mod gen;
pub mod inputs;
pub mod isa;
pub mod nvdisasm;
pub mod oracle;
pub mod reference;
pub mod rng;
pub mod spec;
pub mod vectors;
pub mod verify;
