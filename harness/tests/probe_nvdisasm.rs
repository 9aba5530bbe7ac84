//! The `probe` tool against nvdisasm. These tests FAIL when nvdisasm is missing:
//! `bash ci/install-tools.sh` installs the pinned one (CI runs it first).

use crate::common;

use common::bin;
use hmul2_harness::nvdisasm::Nvdisasm;
use hmul2_harness::probe::{flips, probe, values, Outcome};

/// `HADD2 R0, R1, R2`.
const HADD2: u128 = 0x000fe200000000000000000201007230;

fn nvdisasm() -> Nvdisasm {
    Nvdisasm::find().unwrap_or_else(|e| panic!("the probe cannot run: {e}"))
}

fn text(o: &Outcome) -> &str {
    match o {
        Outcome::Text(t) => t,
        other => panic!("expected a text, got {other:?}"),
    }
}

#[test]
fn flips_and_values_of_hadd2() {
    let mut variants = flips(HADD2, 76, 80);
    variants.extend(values(HADD2, 9, 11).unwrap());
    // nvdisasm lists nothing for this word (exit 0): the probe names it and goes on
    variants.push(("empty".into(), 0x000fe20000000000000000020100720e));
    let (base, vs) = probe(&nvdisasm(), HADD2, variants).unwrap();
    assert_eq!(text(&base), "HADD2 R0, R1, R2");
    let by = |l: &str| &vs.iter().find(|v| v.label == l).unwrap().outcome;
    assert_eq!(*by("bit 76"), Outcome::Same, "HADD2 has no FMZ bit");
    assert_eq!(text(by("bit 77")), "HADD2.SAT R0, R1, R2");
    assert_eq!(text(by("bit 78")), "HADD2.F32 R0, R1, R2");
    assert_eq!(*by("bit 79"), Outcome::Same);
    assert_eq!(text(by("bit 80")), "HADD2.FTZ R0, R1, R2");
    assert_eq!(text(by("bits 9..11 = 0x2")), "HADD2 R0, R1, 0, 1.1920928955078125e-07");
    assert_eq!(text(by("bits 9..11 = 0x3")), "HADD2 R0, R1, c[0x0] [0x0]");
    assert_eq!(*by("bits 9..11 = 0x1"), Outcome::Same);
    assert!(matches!(by("bits 9..11 = 0x4"), Outcome::Illegal(_)));
    assert_eq!(*by("empty"), Outcome::Empty);
}

#[test]
fn probe_command_prints_each_bit() {
    let out = bin().args(["probe", "--word", "0x000fe200000000000000000201007230", "--bits", "76..78"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "base 0x000fe200000000000000000201007230: HADD2 R0, R1, R2",
            "bit 77: 0x000fe200000020000000000201007230  HADD2.SAT R0, R1, R2",
            "bit 78: 0x000fe200000040000000000201007230  HADD2.F32 R0, R1, R2",
            "same text (ignored here): 76",
        ]
    );
}
