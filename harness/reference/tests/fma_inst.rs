//! HFMA2 and HFMA2.MMA as instructions: what `reference::eval` reads for each operand (the
//! registers, RZ, immediates, constant-bank and uniform words as operand 2 or operand 3),
//! the modifiers on each source, the guard and the destination — with instructions written
//! as nvdisasm prints them and values worked out by hand (products and sums exact in FP16),
//! so the mapping from a word to the lane arithmetic is checked apart from that arithmetic
//! (which `reference_fma.rs` judges against rustc_apfloat).

use harness_reference::inputs::Inputs;
use harness_reference::isa::parse;
use harness_reference::reference::{eval, eval_batch, Undefined};
use harness_reference::vectors::{check, parse_line, to_line, Vector, VectorError};

/// Two FP16 lanes: lane 0 in bits 0..15.
fn h2(lo: f32, hi: f32) -> u32 {
    let h = |v: f32| half::f16::from_f32(v).to_bits() as u32;
    h(lo) | h(hi) << 16
}

fn x(a: u32, b: u32, c: u32) -> Inputs {
    Inputs { a, b, c, d: 0xdead_beef, pred: 0x7f }
}

fn run(text: &str, i: Inputs) -> Result<u32, Undefined> {
    let inst = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let one = eval(&inst, &i);
    // the batch path agrees with the one-input path
    let mut out = [0u32; 3];
    let b = eval_batch(&inst, &[i, i, i], &mut out).map(|_| out[1]);
    assert_eq!(one, b, "{text}: eval and eval_batch differ");
    one
}

#[test]
fn registers_and_the_addend() {
    let v = run("HFMA2 R0, R1, R2, R3", x(h2(1.5, 2.0), h2(2.0, 3.0), h2(0.25, -6.0)));
    assert_eq!(v, Ok(h2(3.25, 0.0)));
    // the exact zero sum 2 * 3 - 6 is +0 (fma-signed-zero), not -0
    assert_eq!(v.unwrap() >> 16, 0);
    // BF16 lanes
    let b2 = |lo: f32, hi: f32| (lo.to_bits() >> 16) | (hi.to_bits() >> 16) << 16;
    assert_eq!(run("HFMA2.BF16_V2 R0, R1, R2, R3", x(b2(1.5, 2.0), b2(2.0, 3.0), b2(0.25, 1.0))), Ok(b2(3.25, 7.0)));
}

#[test]
fn immediates_and_rz() {
    // what ptxas emits for a multiply by a constant: lane 0 takes the immediate printed
    // second (imm-lanes), the addend -RZ is -0, so x * k + -0 is x * k exactly
    assert_eq!(run("HFMA2.MMA R5, R0, 2, 1, -RZ", x(h2(3.0, 5.0), 0, 0)), Ok(h2(3.0, 10.0)));
    // a +0 product plus -0 is +0; with +RZ it is +0 too
    assert_eq!(run("HFMA2.MMA R5, R0, 2, 1, -RZ", x(h2(0.0, 0.0), 0, 0)), Ok(0));
    // immediates as operand 3: a * b + (1, 2)
    assert_eq!(run("HFMA2 R0, R1, R2, 2, 1", x(h2(2.0, 2.0), h2(3.0, 4.0), 0)), Ok(h2(7.0, 10.0)));
    // RZ as operand 1 reads 0 whatever the inputs say
    assert_eq!(run("HFMA2 R0, RZ, R2, R3", x(h2(9.0, 9.0), h2(3.0, 4.0), h2(1.0, 2.0))), Ok(h2(1.0, 2.0)));
}

#[test]
fn bank_and_uniform_words_in_either_place() {
    let i = x(h2(2.0, 3.0), h2(4.0, 5.0), h2(1.0, -1.0));
    let want = Ok(h2(9.0, 14.0));
    assert_eq!(run("HFMA2 R0, R1, c[0x3] [0x10], R3", i), want);
    assert_eq!(run("HFMA2 R0, R1, R2, c[0x3] [0x10]", i), want);
    assert_eq!(run("HFMA2.MMA R0, R1, c[0x3][0x10], R3", i), want);
    assert_eq!(run("HFMA2 R0, R1, UR4, R3", i), want);
    assert_eq!(run("HFMA2 R0, R1, R2, UR4", i), want);
}

#[test]
fn source_modifiers_guard_and_destination() {
    // |a| * b.H0_H0 + -(c.H1_H1)
    let i = x(h2(-2.0, 3.0), h2(4.0, 100.0), h2(100.0, 1.0));
    assert_eq!(run("HFMA2 R0, |R1|, R2.H0_H0, -R3.H1_H1", i), Ok(h2(7.0, 11.0)));
    // a false guard leaves the destination; RZ as destination reads 0
    let mut off = x(h2(1.0, 1.0), h2(1.0, 1.0), 0);
    off.pred = 0;
    assert_eq!(run("@P0 HFMA2 R0, R1, R2, R3", off), Ok(0xdead_beef));
    assert_eq!(run("HFMA2 RZ, R1, R2, R3", off), Ok(0));
    // .RELU clamps a negative result to +0 lane by lane
    assert_eq!(run("HFMA2.RELU R0, R1, R2, R3", x(h2(-1.0, 1.0), h2(2.0, 2.0), h2(0.5, 0.5))), Ok(h2(0.0, 2.5)));
    // .SAT clamps to [0, 1]
    assert_eq!(run("HFMA2.SAT R0, R1, R2, R3", x(h2(-1.0, 1.0), h2(2.0, 2.0), h2(0.5, 0.5))), Ok(h2(0.0, 1.0)));
}

#[test]
fn what_the_model_does_not_compute_is_undefined_not_guessed() {
    let i = x(h2(1.0, 1.0), h2(1.0, 1.0), h2(1.0, 1.0));
    for text in ["HFMA2.OOB R0, R1, R2, R3", "HFMA2.F32 R0, R1, R2, R3", "HFMA2.RELU R0, R1, R2, R3, P1", "HFMA2 R0, R1, R2.H0_NH1, R3"] {
        assert!(run(text, i).is_err(), "{text}: {:?}", run(text, i));
    }
}

#[test]
fn vector_lines_carry_operand_3() {
    let w = harness_reference::isa::encode(&parse("HFMA2 R0, R1, R2, R3").unwrap()).unwrap();
    let v = Vector { encoding: w, inputs: x(1, 2, 3), expect: Some(4), expect_pred: None, origin: "reference".into(), arch: None };
    let line = to_line(&v);
    assert!(line.contains(r#""b":"0x00000002","c":"0x00000003","d":"#), "{line}");
    assert_eq!(parse_line(&line), Ok(v.clone()));
    // three sources without c, or two with one, is malformed
    assert_eq!(parse_line(&line.replace(r#","c":"0x00000003""#, "")), Err(VectorError::Missing("c")));
    let two = harness_reference::isa::encode(&parse("HMUL2 R0, R1, R2").unwrap()).unwrap();
    let v2 = Vector { encoding: two, ..v.clone() };
    assert!(!to_line(&Vector { inputs: x(1, 2, 0), ..v2.clone() }).contains("\"c\""));
    let bad = to_line(&Vector { inputs: x(1, 2, 0), ..v2 }).replace(r#","d":"#, r#","c":"0x00000000","d":"#);
    assert_eq!(parse_line(&bad), Err(VectorError::NoOperand3));
    // operand 3 obeys the register file: RZ reads 0, a register shared with a source has its value
    let rz = harness_reference::isa::encode(&parse("HFMA2 R0, R1, R2, RZ").unwrap()).unwrap();
    assert!(check(&Vector { encoding: rz, ..v.clone() }).is_err());
    let same = harness_reference::isa::encode(&parse("HFMA2 R0, R1, R2, R1").unwrap()).unwrap();
    assert!(check(&Vector { encoding: same, ..v.clone() }).is_err());
    assert!(check(&Vector { encoding: same, inputs: x(3, 2, 3), ..v }).is_ok());
}
