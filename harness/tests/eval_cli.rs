//! `eval` from the command line: an instruction and its operand values in, the result word,
//! its lanes and the named assumptions it rests on out.

use crate::common;

use common::{bin, text};

fn eval(args: &[&str]) -> (Option<i32>, String, String) {
    let o = bin().arg("eval").args(args).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn the_natural_guess_gives_the_product_word_and_lanes() {
    let (code, out, err) = eval(&["HMUL2 R0, R1, R2", "0x3e003c00", "0x40004000"]);
    assert_eq!(code, Some(0), "{out}{err}");
    // 1.5 x 2 = 3 in lane 1, 1 x 2 = 2 in lane 0
    assert!(out.contains("result  0x42004000  H1 3  H0 2"), "{out}");
    assert!(out.contains("rests on no named assumption"), "{out}");
    // the same through flags, with lanes as numbers
    let (code, flags, _) = eval(&["HMUL2 R0, R1, R2", "--a", "1.5,1", "--b", "2"]);
    assert_eq!(code, Some(0));
    assert_eq!(flags, out);
}

#[test]
fn hfma2_reads_c_and_a_word_may_stand_for_the_text() {
    let (code, out, err) = eval(&["HFMA2 R0, R1, R2, R3", "--a", "1.5,1", "--b", "2", "--c", "0x3c003c00"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("result  0x44004200  H1 4  H0 3"), "{out}");
    let (_, by_word, _) = eval(&["0x000fc200000000030000000201007231", "--a", "1.5,1", "--b", "2", "--c", "0x3c003c00"]);
    assert_eq!(by_word, out);
}

#[test]
fn a_nan_result_names_the_assumption_it_rests_on_and_what_the_other_option_gives() {
    let (code, out, _) = eval(&["HMUL2 R0, R1, R2", "0x7e013c00", "2"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("H1 NaN(0x7fff)"), "{out}");
    assert!(out.contains("nan-result (assumed): the other option gives 0x7e014000"), "{out}");
    // another architecture's: where the entry stands there
    let (code, out, _) = eval(&["HMUL2 R0, R1, R2", "0x7e013c00", "2", "--arch", "SM86"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("of harness/spec/semantics.json on SM86:") && out.contains("nan-result (assumed on SM86): the other option gives 0x7e014000"),
        "{out}"
    );
    let (code, json, _) = eval(&["HMUL2 R0, R1, R2", "0x7e013c00", "2", "--json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["result"]["word"], "0x7fff4000");
    assert_eq!(v["result"]["lanes"]["H0"], "2");
    assert_eq!(v["rests_on"][0]["id"], "nan-result");
    assert_eq!(v["rests_on"][0]["other_options_give"][0], "0x7e014000");
}

#[test]
fn a_false_guard_keeps_d_and_bf16_lanes_are_bf16() {
    let (_, out, _) = eval(&["@P0 HMUL2 R0, R1, R2", "1", "2", "--d", "0x12345678", "--pred", "0x02"]);
    assert!(out.contains("guard @P0 is false") && out.contains("result  0x12345678"), "{out}");
    let (_, out, _) = eval(&["@P0 HMUL2 R0, R1, R2", "1", "2", "--d", "0x12345678", "--pred", "P0"]);
    assert!(out.contains("result  0x40004000"), "{out}");
    let (_, out, _) = eval(&["HMUL2.BF16_V2 R0, R1, R2", "1.5,1", "2"]);
    assert!(out.contains("0x3fc03f80") && out.contains("result  0x40404000  H1 3  H0 2"), "{out}");
}

#[test]
fn missing_extra_or_misread_values_are_one_line_errors() {
    for (args, want) in [
        (&["HMUL2 R0, R1, R2", "1"][..], "operand 2 (R2) needs a value: --b"),
        (&["HMUL2 R0, R1, 2, 1", "1", "2"][..], "operand 2 is an immediate"),
        (&["HMUL2 R0, R1, R2", "1", "2", "3"][..], "HMUL2 has no operand 3"),
        (&["HMUL2 R0, R1, R2", "1", "--a", "2", "--b", "1"][..], "operand 1 given twice"),
        (&["HMUL2 R0, R1, R2", "one", "2"][..], "is not a number"),
        (&["HMUL2 R0, R1, R2", "0x123456789", "2"][..], "1 to 8 hex digits"),
        (&["HMUL2 R0, R1, R1", "1", "2"][..], "R1"),
        (&["HMUL2 R0, R1, R2", "1", "2", "--pred", "P9"][..], "--pred"),
        (&["--a", "1"][..], "need an instruction"),
    ] {
        let o = bin().arg("eval").args(args).output().unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.starts_with("error: ") && t.lines().count() == 1 && t.contains(want), "{args:?}: {t}");
    }
}

#[test]
fn help_shows_the_vector_line_format() {
    let o = bin().args(["eval", "--help"]).output().unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains(r#"{"encoding":"0x<32 hex>","a":"0x<8 hex>""#) && t.contains("`c` only for HFMA2"), "{t}");
}

#[test]
fn an_undefined_vector_says_why_not_blames_invalidn() {
    use std::io::Write;
    // HFMA2.F32 (format value .F32): defined by no document, no INVALIDn field in it
    let w = hmul2_harness::isa::encode(&hmul2_harness::isa::parse("HFMA2.F32 R0, R1, R2, R3").unwrap()).unwrap();
    let line =
        format!(r#"{{"encoding":"{}","a":"0x00000000","b":"0x00000000","c":"0x00000000","d":"0x00000000","pred":"0x00"}}"#, hmul2_harness::isa::format_hex(w));
    let mut child =
        bin().arg("eval").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all((line + "\n").as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("stdin:1: HFMA2 .F32") && !err.contains("INVALIDn"), "{err}");
}

#[test]
fn a_verify_mismatch_line_holds_operand_3() {
    let d = common::tmp("verify-c");
    let w = hmul2_harness::isa::encode(&hmul2_harness::isa::parse("HFMA2 R0, R1, R2, R3").unwrap()).unwrap();
    let line = format!(
        r#"{{"encoding":"{}","a":"0x3e003c00","b":"0x40004000","c":"0x3c003c00","d":"0x00000000","pred":"0x00","expect":"0x00000000","origin":"test"}}"#,
        hmul2_harness::isa::format_hex(w)
    );
    std::fs::write(d.join("v.jsonl"), line + "\n").unwrap();
    let o = bin().arg("verify").arg(d.join("v.jsonl")).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("mismatch: HFMA2 R0, R1, R2, R3  a=0x3e003c00 b=0x40004000 c=0x3c003c00 d=0x00000000"), "{out}");
}

/// Issue 41 item 3: an instruction that writes predicates shows the file after it (text and
/// JSON), with the assumptions they rest on; both results into one predicate with different
/// values is undefined (exit 1).
#[test]
fn hsetp2_shows_the_predicates_after_and_what_they_rest_on() {
    // lane 0: 2 < 1 false, lane 1: 1 < 2 true; P6 set before, PT the source
    let (code, out, err) = eval(&["HSETP2.LT.AND P0, P3, R1, R2, PT", "--a", "1,2", "--b", "2,1", "--pred", "0x40"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("  preds   0x48  P0..P6 after: P3,P6"), "{out}");
    let (_, json, _) = eval(&["HSETP2.LT.AND P0, P3, R1, R2, PT", "--a", "1,2", "--b", "2,1", "--pred", "0x40", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["pred_after"], "0x48", "{json}");
    // .H_AND's predicates rest on hsetp2-h-and
    let (_, out, _) = eval(&["HSETP2.LT.H_AND.AND P0, P3, R1, R2, PT", "--a", "1,2", "--b", "2,1"]);
    assert!(out.contains("hsetp2-h-and (assumed): the other options give 0x00000000 (preds 0x00)"), "{out}");
    let (code, out, _) = eval(&["HSETP2.LT.AND P4, P4, R1, R2, PT", "--a", "1,2", "--b", "2,1"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("preds   undefined: both predicate results are P4"), "{out}");
    // an instruction that writes none shows no predicates
    let (_, out, _) = eval(&["HMUL2 R0, R1, R2", "1", "2"]);
    assert!(!out.contains("preds"), "{out}");
}
