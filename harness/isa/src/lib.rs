//! harness-isa: packed-half instructions as data, for every architecture that has them.
//!
//! The bottom of the project's data flow: [`spec`] (the encoding, read from
//! `harness/spec/sm90/*.json`, and for every other [`target`] its overlay,
//! `harness/spec/arch/<sm>/overlay.json`) → [`isa`] (typed instructions: encode, decode,
//! render, parse; `*_for(target, ..)` on another architecture) → [`gen`] (seeded random and
//! factorial encodings). [`archdoc`] writes the table of what each architecture has. [`nvdisasm`] and [`oracle`] bring in
//! NVIDIA's disassembler as the judge of syntax and legality; [`seedpage`] reads the ISA-viewer
//! page the spec started from; [`lines`] reads input with bounded memory.
//!
//! With the `tools` feature (the default; the project's other crates turn it on, a user of
//! the reference needs none of it): [`nvdisasm`] and [`oracle`] bring in NVIDIA's
//! disassembler as the judge of syntax and legality, [`cli`] holds the clap-free plumbing
//! the commands share (one-line errors with the exit code scripts rely on, stdout that never
//! panics), [`outfile`] is how the tools write files (never through a link, whole or not at
//! all), and `gen::strategies` gives proptest strategies. Nothing here depends on another
//! crate of the project.
//!
//! # Example
//!
//! ```
//! use harness_isa::isa;
//!
//! let word = isa::parse_hex("0x000fe200000000000000000201007232").expect("a word");
//! let inst = isa::decode(word).expect("a legal HMUL2");
//! assert_eq!(isa::render(&inst), "HMUL2 R0, R1, R2");
//! assert_eq!(isa::encode(&isa::parse("HMUL2 R0, R1, R2").expect("text")).map(|w| w & 0xffff_ffff), Ok(0x0100_7232));
//! ```

pub mod archdoc;
#[cfg(feature = "tools")]
pub mod cli;
pub mod gen;
pub mod isa;
pub mod lines;
#[cfg(feature = "tools")]
pub mod nvdisasm;
#[cfg(feature = "tools")]
pub mod oracle;
#[cfg(feature = "tools")]
pub mod outfile;
pub mod rng;
pub mod seedpage;
pub mod spec;
pub mod target;
pub mod testlevel;
