//! What NVIDIA's compiler relies on HADD2 to do, against the HADD2 reference
//! (`reference::add`), as `ptxas_semantics.rs` does for HMUL2.
//!
//! For each case: ptxas must emit HADD2 with the operand shape named (registers as `Rn`),
//! and the reference, given those modifiers, must compute what the PTX means on the witness
//! inputs; for a case naming a semantics entry, every other option of the entry must give
//! another result on at least one witness. Outside evidence, never a hardware result (see
//! `outside` in harness/spec/semantics.json, which this file must cover). Fails (does not
//! skip) when ptxas or cuobjdump is missing.

use hmul2_harness::isa::{Flush, Format, SrcMods, Swizzle};
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::reference::add::{eval_add, AddOp};
use hmul2_harness::reference::policy::{parse_table, KNOBS, SEMANTICS_JSON};
use hmul2_harness::reference::Policy;
use std::process::Command;

const THIS_FILE: &str = "harness/tests/ptxas_add_semantics.rs";

struct Case {
    id: Option<&'static str>,
    /// One copy of the PTX: `%rA`, `%rB` loaded 32-bit operands, `%rD` a stored 32-bit
    /// result, `%fD` a stored f32 result, `%hX`, `%hY` 16-bit temporaries.
    ptx: &'static str,
    /// The HADD2 text ptxas must emit, registers written `Rn`.
    sass: &'static str,
    op: AddOp,
    /// (operand 1's word, operand 2's word, what the PTX ISA defines the result to be)
    witnesses: &'static [(u32, u32, u32)],
    why: &'static str,
}

const NEG: SrcMods = SrcMods { neg: true, abs: false, swizzle: Swizzle::H1H0 };
const H0: SrcMods = SrcMods { neg: false, abs: false, swizzle: Swizzle::H0H0 };
const NEG_H0: SrcMods = SrcMods { neg: true, abs: false, swizzle: Swizzle::H0H0 };
const H1: SrcMods = SrcMods { neg: false, abs: false, swizzle: Swizzle::H1H1 };
const PLAIN: SrcMods = SrcMods { neg: false, abs: false, swizzle: Swizzle::H1H0 };

const fn op(format: Format, a_mods: SrcMods, b_mods: SrcMods, flush: Flush, sat: bool, f32_out: bool) -> AddOp {
    AddOp { format, a_mods, b_mods, flush, sat, f32_out }
}

const CASES: &[Case] = &[
    Case {
        id: Some("add-signed-zero"),
        ptx: "mov.b32 {%hX, %hY}, %rA; cvt.f32.f16 %fD, %hX; mov.b32 %rD, 0;",
        sass: "HADD2.F32 Rn, -RZ, Rn.H0_H0",
        // operand 1 is -RZ: the word read is 0, negated by the modifier
        op: op(Format::F16, NEG, H0, Flush::None, false, true),
        witnesses: &[(0, 0x1234_0000, 0x0000_0000), (0, 0x1234_8000, 0x8000_0000), (0, 0x0001, 0x3380_0000), (0, 0xc400, 0xc080_0000)],
        why: "cvt.f32.f16 is exact: +0 -> +0 (-0 + +0), -0 -> -0 (-0 + -0), 2^-24, -4",
    },
    Case {
        id: Some("add-signed-zero"),
        ptx: "mov.b32 {%hX, %hY}, %rA; neg.f16 %hX, %hX; cvt.f32.f16 %fD, %hX; mov.b32 %rD, 0;",
        sass: "HADD2.F32 Rn, -RZ, -Rn.H0_H0",
        op: op(Format::F16, NEG, NEG_H0, Flush::None, false, true),
        witnesses: &[(0, 0x0000, 0x8000_0000), (0, 0x8000, 0x0000_0000)],
        why: "neg then exact cvt: +0 -> -0 (-0 + -0), -0 -> +0 (-0 + +0)",
    },
    Case {
        id: Some("add-ftz-sign"),
        ptx: "add.rn.ftz.f16x2 %rD, %rA, %rB; mov.f32 %fD, 0f00000000;",
        sass: "HADD2.FTZ Rn, Rn, Rn",
        op: op(Format::F16, PLAIN, PLAIN, Flush::Ftz, false, false),
        // lane 0: (2^-14 + 2^-24) - 2^-14 = +2^-24; lane 1: its negation
        witnesses: &[(0x8401_0401, 0x0400_8400, 0x8000_0000)],
        why: ".ftz flushes subnormal results to sign-preserving zero",
    },
    Case {
        id: None,
        ptx: "mov.b32 {%hX, %hY}, %rA; cvt.f32.f16 %fD, %hY; mov.b32 %rD, 0;",
        sass: "HADD2.F32 Rn, -RZ, Rn.H1_H1",
        op: op(Format::F16, NEG, H1, Flush::None, false, true),
        witnesses: &[(0, 0x3c00_4000, 0x3f80_0000), (0, 0x7bff_0000, 0x477f_e000)],
        why: "the high half, exactly: 1.0, 65504",
    },
    Case {
        id: None,
        ptx: "add.rn.f16x2 %rD, %rA, %rB; mov.f32 %fD, 0f00000000;",
        sass: "HADD2 Rn, Rn, Rn",
        op: op(Format::F16, PLAIN, PLAIN, Flush::None, false, false),
        witnesses: &[(0x4000_3c00, 0xc000_4200, 0x0000_4400), (0x7bff_7bff, 0x4c00_4800, 0x7c00_7bff)],
        why: "(1, 2) + (3, -2) = (4, +0); 65504 + 8 = 65504, 65504 + 16 ties to Inf",
    },
    Case {
        id: None,
        ptx: "sub.rn.f16x2 %rD, %rA, %rB; mov.f32 %fD, 0f00000000;",
        sass: "HADD2 Rn, Rn, -Rn",
        op: op(Format::F16, PLAIN, NEG, Flush::None, false, false),
        witnesses: &[(0x4200_8000, 0x4200_0000, 0x0000_8000)],
        why: "3 - 3 = +0, -0 - +0 = -0",
    },
    Case {
        id: None,
        ptx: "add.rn.bf16x2 %rD, %rA, %rB; mov.f32 %fD, 0f00000000;",
        sass: "HADD2.BF16_V2 Rn, Rn, Rn",
        op: op(Format::Bf16, PLAIN, PLAIN, Flush::None, false, false),
        witnesses: &[(0x3f80_3f80, 0x3c40_3b80, 0x3f82_3f80)],
        why: "1 + 2^-8 ties to even 1.0; 1 + 3 x 2^-8 ties to even 1 + 2^-6",
    },
    Case {
        id: None,
        ptx: "add.rn.sat.f16x2 %rD, %rA, %rB; mov.f32 %fD, 0f00000000;",
        sass: "HADD2.SAT Rn, Rn, Rn",
        op: op(Format::F16, PLAIN, PLAIN, Flush::None, true, false),
        witnesses: &[(0x3c00_7e00, 0x3c00_3c00, 0x3c00_0000), (0xc000_8000, 0x3c00_8000, 0x0000_0000)],
        why: ".sat: NaN -> +0, 2 -> 1, -1 -> +0, -0 -> +0",
    },
];

fn kernel(op: &str) -> String {
    let mut body = String::new();
    for i in 1..=8 {
        let line = op
            .replace("%rA", &format!("%r{i}"))
            .replace("%rB", &format!("%r{}", 10 + i))
            .replace("%rD", &format!("%r{}", 20 + i))
            .replace("%fD", &format!("%f{i}"))
            .replace("%hX", &format!("%h{i}"))
            .replace("%hY", &format!("%h{}", 10 + i));
        body += &format!("  {line}\n");
    }
    format!(
        r#".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<50>;
  .reg .b16 %h<20>;
  .reg .f32 %f<20>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.v4.b32 {{%r1,%r2,%r3,%r4}}, [%rd2];
  ld.global.v4.b32 {{%r5,%r6,%r7,%r8}}, [%rd2+16];
  ld.global.v4.b32 {{%r11,%r12,%r13,%r14}}, [%rd2+32];
  ld.global.v4.b32 {{%r15,%r16,%r17,%r18}}, [%rd2+48];
{body}  st.global.v4.b32 [%rd2], {{%r21,%r22,%r23,%r24}};
  st.global.v4.b32 [%rd2+16], {{%r25,%r26,%r27,%r28}};
  st.global.v4.f32 [%rd2+64], {{%f1,%f2,%f3,%f4}};
  st.global.v4.f32 [%rd2+80], {{%f5,%f6,%f7,%f8}};
  ret;
}}
"#
    )
}

/// `R12` -> `Rn` (RZ stays).
fn shape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == 'R' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('n');
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        }
    }
    out
}

/// The HADD2 instructions ptxas emits for `ptx`, as cuobjdump prints them (shaped).
fn compile(name: &str, ptx: &str) -> Vec<String> {
    let ptxas = find_tool("ptxas").expect("ptxas is needed for this check (bash ci/install-tools.sh)");
    let cuobjdump = find_tool("cuobjdump").expect("cuobjdump is needed for this check (bash ci/install-tools.sh)");
    let dir = tempfile::tempdir().unwrap();
    let (src, cubin) = (dir.path().join("k.ptx"), dir.path().join("k.cubin"));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(&ptxas).args(["-arch=sm_90", "-O3"]).arg(&src).arg("-o").arg(&cubin).output().expect("run ptxas");
    assert!(out.status.success(), "{name}: ptxas failed: {}\n{ptx}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&cuobjdump).arg("-sass").arg(&cubin).output().expect("run cuobjdump");
    assert!(out.status.success(), "{name}: cuobjdump failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let found: Vec<String> = text
        .lines()
        .filter_map(|l| l.split("*/").nth(1)?.split(';').next().map(str::trim))
        .filter(|t| t.starts_with("HADD2"))
        .map(|t| shape(&t.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect();
    assert!(!found.is_empty(), "{name}: ptxas emitted no HADD2:\n{text}");
    found
}

#[test]
fn ptxas_emits_hadd2_that_the_reference_computes_as_the_ptx_isa_defines() {
    for (n, c) in CASES.iter().enumerate() {
        let name = c.id.unwrap_or(c.sass);
        let emitted = compile(&format!("case{n}"), &kernel(c.ptx));
        for t in &emitted {
            assert_eq!(t, c.sass, "{name}: ptxas emitted {t}, expected {}", c.sass);
        }
        let p = Policy::current();
        let run = |p: &Policy| c.witnesses.iter().map(|&(a, b, _)| eval_add(&c.op, p, a, b)).collect::<Vec<_>>();
        let got = run(p);
        for (&(a, b, want), g) in c.witnesses.iter().zip(&got) {
            assert_eq!(*g, Ok(want), "{name}: {} on a={a:#010x} b={b:#010x}: {}", c.sass, c.why);
        }
        if let Some(id) = c.id {
            let k = KNOBS.iter().position(|(k, _)| *k == id).unwrap_or_else(|| panic!("{id}: no such semantics entry"));
            for o in (0..KNOBS[k].1.len()).filter(|&o| o != p.option(k)) {
                let mut q = *p;
                q.set(k, o);
                assert_ne!(run(&q), got, "{id}: the witnesses do not tell option {o} ({:?}) from the assumption", KNOBS[k].1[o]);
            }
        }
        println!("{name}: ptxas emitted {} x {}; reference = PTX ISA ({})", emitted.len(), c.sass, c.why);
    }
}

/// Every `outside` record naming this file has a case here and supports the assumption;
/// every case's entry exists.
#[test]
fn semantics_json_and_these_cases_name_each_other() {
    let table = parse_table(SEMANTICS_JSON).expect("semantics.json parses");
    for e in &table {
        let mine: Vec<_> = e.outside.iter().filter(|o| o.test.as_deref() == Some(THIS_FILE)).collect();
        let cases = CASES.iter().filter(|c| c.id == Some(e.id.as_str())).count();
        assert_eq!(!mine.is_empty(), cases > 0, "{}: semantics.json names this test {} times, this test has {cases} cases for it", e.id, mine.len());
        for o in mine {
            assert_eq!(o.supports, e.assumption, "{}: the reference's assumption is what ptxas relies on", e.id);
        }
    }
    for c in CASES.iter().filter_map(|c| c.id) {
        assert!(table.iter().any(|e| e.id == c), "{c}: no such entry in semantics.json");
    }
}
