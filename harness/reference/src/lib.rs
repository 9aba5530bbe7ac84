//! harness-reference: what each packed-half instruction computes, bit for bit, on any machine.
//!
//! [`mod@reference`] is the arithmetic (FP16 and BF16 lanes, every modifier, every undocumented
//! choice named by its policy); [`inputs`] the source values one execution reads; [`vectors`]
//! the recorded results (JSON Lines) and [`replay`] their check against the reference.
//! Depends only on `harness-isa`.
//!
//! # Example
//!
//! What HFMA2 gives for two lanes, and the word of its text (the README's example):
//!
//! ```
//! use harness_reference::inputs::Inputs;
//! use harness_reference::isa;
//! use harness_reference::reference;
//!
//! let inst = isa::parse("HFMA2 R0, R1, R2, R3").expect("an instruction of the family");
//! // 1.5 and 1 (FP16, lane 1 in the high half) times 2, plus 1
//! let x = Inputs { a: 0x3e00_3c00, b: 0x4000_4000, c: 0x3c00_3c00, ..Inputs::default() };
//! assert_eq!(reference::eval(&inst, &x), Ok(0x4400_4200));
//! let word = isa::encode(&inst).expect("encodable");
//! assert_eq!(isa::render(&isa::decode(word).expect("legal")), "HFMA2 R0, R1, R2, R3");
//! ```

pub mod inputs;
pub mod reference;
pub mod replay;
pub mod vectors;

pub use harness_isa::{gen, isa, lines, rng, spec, testlevel};
