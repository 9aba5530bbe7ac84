//! harness-isa: SM90 packed-half instructions as data.
//!
//! The bottom of the project's data flow: [`spec`] (the encoding, read from
//! `harness/spec/sm90/*.json`) → [`isa`] (typed instructions: encode, decode, render, parse)
//! → [`gen`] (seeded random and factorial encodings). [`nvdisasm`] and [`oracle`] bring in
//! NVIDIA's disassembler as the judge of syntax and legality; [`seedpage`] reads the ISA-viewer
//! page the spec started from. [`cli`] holds the clap-free plumbing every layer's commands
//! share (one-line errors with the exit code scripts rely on, stdout that never panics);
//! [`outfile`] is how every layer writes files (never through a link, whole or not at all).
//! Nothing here depends on another crate of the project.

pub mod cli;
pub mod gen;
pub mod isa;
pub mod nvdisasm;
pub mod oracle;
pub mod outfile;
pub mod rng;
pub mod seedpage;
pub mod spec;
pub mod testlevel;
