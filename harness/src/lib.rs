//! hmul2-harness: the truth about one NVIDIA SM90 instruction, HMUL2.
//!
//! Data flows one way: [`spec`] (the encoding as data) → [`isa`] (typed instructions:
//! encode, decode, render, parse) → [`gen`] (seeded random and factorial encodings) →
//! [`reference`] (the arithmetic, bit for bit) → [`kernel`] (template cubin + patcher) →
//! [`gpu`] and [`run`] (worker processes, journal, shards) → [`report`] and [`explain`].
//! [`nvdisasm`] and [`oracle`] bring in NVIDIA's disassembler as the judge of syntax and
//! legality; [`vectors`] and [`verify`] replay recorded results anywhere.

pub mod cli;
pub mod commands;
pub mod explain;
pub mod gen;
pub mod gpu;
pub mod inputs;
pub mod isa;
pub mod kernel;
pub mod nvdisasm;
pub mod oracle;
pub mod probe;
pub mod reference;
pub mod report;
pub mod rng;
pub mod run;
pub mod seedpage;
pub mod settle;
pub mod spec;
pub mod vectors;
pub mod verify;
