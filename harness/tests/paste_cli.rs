//! Input as users paste it: `decode` and `encode` take nvdisasm's and cuobjdump's listings,
//! the two halves on one line, blank and `#` lines; line N in is line N out.

use crate::common;

use common::bin;
use std::io::Write;
use std::process::{Output, Stdio};

/// Lines of `nvdisasm -hex` on the committed template cubin (kernels/), as it printed them.
const LISTING: &str = "\
        /*0090*/                   HFMA2.MMA R3, R2, R3, -RZ ;       /* 0x0000000302037235 */
                                                                     /* 0x008fd400001000ff */
        /*00a0*/                   HMUL2 R7, R3, R0 ;                /* 0x0000000003077232 */
                                                                     /* 0x004fca0000000000 */
";

fn with_stdin(args: &[&str], input: &str) -> Output {
    let mut c = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn decode_takes_listings_halves_and_comments_line_for_line() {
    let input = format!("# from nvdisasm -hex\n\n{LISTING}0x0000000201007232 0x000fe20000000000\n0x000fe200000000000000000201007232\n");
    let o = with_stdin(&["decode"], &input);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let want = ["# from nvdisasm -hex", "", "HFMA2.MMA R3, R2, R3, -RZ", "", "HMUL2 R7, R3, R0", "", "HMUL2 R0, R1, R2", "HMUL2 R0, R1, R2"];
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
    assert_eq!(out.lines().count(), input.lines().count(), "line N in is line N out");
    // the same halves as one argument
    let o = bin().args(["decode", "0x0000000003077232 0x004fca0000000000"]).output().unwrap();
    assert_eq!(stdout(&o).trim(), "HMUL2 R7, R3, R0");
    // --json: one object an instruction, named by its first line
    let o = with_stdin(&["decode", "--json"], &input);
    let v: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(v.len(), 4);
    assert_eq!(v[1]["input"], "stdin:5");
    assert_eq!(v[1]["encoding"], "0x004fca00000000000000000003077232");
    assert_eq!(v[1]["text"], "HMUL2 R7, R3, R0");
}

#[test]
fn a_listing_line_without_its_high_half_is_an_error_and_the_rest_still_decodes() {
    let first = LISTING.lines().nth(2).unwrap();
    let o = with_stdin(&["decode"], &format!("{first}\n0x000fe200000000000000000201007232\n"));
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(out.starts_with("error: stdin:1: a listing line without its high half") && out.ends_with("HMUL2 R0, R1, R2\n"), "{out}");
    let high = LISTING.lines().nth(1).unwrap();
    let o = with_stdin(&["decode"], &format!("{high}\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("without the listing line before it"));
}

#[test]
fn encode_takes_the_listing_back_and_says_which_scheduling_bits_it_used() {
    let o = with_stdin(&["encode"], LISTING);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!((lines[1], lines[3]), ("", ""));
    // the text re-encodes to the listing's word but for the scheduling bits (bits 105 up)
    let sched_mask = !0u128 >> 23;
    let got = hmul2_harness::isa::parse_hex(lines[2]).unwrap();
    assert_eq!(got & sched_mask, 0x004fca00000000000000000003077232 & sched_mask);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("scheduling bits stall=1,yield=0,wbar=none,rbar=none,wait=0x00 (not in the text"), "{err}");
    // with the listing's own scheduling bits (as explain shows them), the very word
    let o = bin().args(["encode", LISTING.lines().nth(2).unwrap(), "--sched", "stall=5,yield=0,wbar=none,rbar=none,wait=0x4"]).output().unwrap();
    assert_eq!(stdout(&o).trim(), "0x004fca00000000000000000003077232", "{}", String::from_utf8_lossy(&o.stderr));
    // .reuse shows only with the yield bit: asking for none is refused
    let o = bin().args(["encode", "HMUL2 R0, R1.reuse, R2", "--sched", "yield=0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn encode_takes_constants_without_the_space_and_bounds_what_it_quotes() {
    let a = bin().args(["encode", "HMUL2 R0, R1, c[0x3][0x10]"]).output().unwrap();
    let b = bin().args(["encode", "HMUL2 R0, R1, c[0x3] [0x10]"]).output().unwrap();
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    let long = format!("HMUL2 R0, R1, {}", "R".repeat(100_000));
    let o = bin().args(["encode", &long]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stderr.len() < 1000, "{} bytes of error", o.stderr.len());
    let o = bin().args(["encode", "--json", "HMUL2 R0, R1, c[0x3][0x10]"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["text"], "HMUL2 R0, R1, c[0x3] [0x10]");
    assert_eq!(v["sched"], "stall=1,yield=0,wbar=none,rbar=none,wait=0x00");
}
