//! What NVIDIA's compiler relies on HMUL2 to do, against the reference.
//!
//! ptxas compiles documented PTX into HMUL2 words; the PTX ISA says what that PTX computes.
//! So for each case below: ptxas must emit HMUL2 with the modifiers named, and the reference,
//! given the emitted word, must compute what the PTX means on a witness input. The witness
//! is chosen so that each other option of the semantics entry gives a different result:
//! the test fails if it stops telling them apart. This is outside evidence, never a hardware
//! result: it shows what the compiler assumes, and hardware that disagrees would mean a
//! miscompilation (see `outside` in harness/spec/semantics.json, which this file must cover).
//! Fails (does not skip) when ptxas or cuobjdump is missing.

use hmul2_harness::inputs::Inputs;
use hmul2_harness::isa::{decode, render, Flush, Format, Inst, Operand2, Swizzle};
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::reference::policy::{parse_table, KNOBS, SEMANTICS_JSON};
use hmul2_harness::reference::{eval, eval_with, Policy};
use std::process::Command;

const THIS_FILE: &str = "harness/tests/ptxas_semantics.rs";

struct Case {
    /// The semantics.json entry the case is evidence for; None for a check of the encoding's
    /// meaning that is no named assumption.
    id: Option<&'static str>,
    /// One copy of the PTX: `%rA`, `%rB` the loaded operands, `%rD` the stored result,
    /// `%rT`, `%rU` and `%hX`, `%hY` temporaries. Eight copies go into one kernel, since
    /// ptxas alternates HFMA2.MMA and HMUL2 only when there are several multiplies.
    ptx: &'static str,
    /// What the emitted HMUL2 must carry, and its description.
    sass: fn(&Inst) -> bool,
    sass_text: &'static str,
    /// Operand values (both 32-bit registers) and the result the PTX ISA defines for them.
    a: u32,
    b: u32,
    ptx_result: u32,
    why: &'static str,
}

const CASES: &[Case] = &[
    Case {
        id: Some("imm-lanes"),
        // a packed constant: PTX's lane 0 is the low half (1.0), lane 1 the high half (2.0)
        ptx: "mov.b32 %rT, 0x40003C00; mul.rn.f16x2 %rD, %rA, %rT;",
        // bits 32..63 hold the constant verbatim: 0x4000 in bits 48..63 (printed first), 0x3c00 in 32..47
        sass: |i| i.b == Operand2::Imm { first: 0x4000, second: 0x3c00 } && i.flush == Flush::None && !i.sat,
        sass_text: "HMUL2 Rd, Ra, 2, 1",
        a: 0x4200_4200, // 3.0, 3.0
        b: 0,           // not read: the immediate is operand 2
        ptx_result: 0x4600_4200,
        why: "lane 0 = 3.0 x 1.0 (the low half), lane 1 = 3.0 x 2.0",
    },
    Case {
        id: Some("abs-neg-order"),
        ptx: "abs.f16x2 %rT, %rA; neg.f16x2 %rU, %rT; mul.rn.f16x2 %rD, %rU, %rB;",
        sass: |i| i.a_mods.abs && i.a_mods.neg && i.flush == Flush::None && !i.sat,
        sass_text: "HMUL2 Rd, -|Ra|, Rb",
        a: 0x4000_4000, // 2.0, 2.0
        b: 0x3c00_3c00, // 1.0, 1.0
        ptx_result: 0xc000_c000,
        why: "neg(abs(2.0)) x 1.0 = -2.0",
    },
    Case {
        id: Some("ftz-inputs"),
        ptx: "mul.rn.ftz.f16x2 %rD, %rA, %rB;",
        sass: |i| i.flush == Flush::Ftz && !i.sat && i.format == Format::F16,
        sass_text: "HMUL2.FTZ",
        a: 0x0001_0001, // the smallest subnormal, 2^-24
        b: 0x7bff_7bff, // 65504
        ptx_result: 0,
        why: "the subnormal input is flushed to +0 first; unflushed, 2^-24 x 65504 is a normal 0x1bff",
    },
    Case {
        id: Some("sat-nan"),
        ptx: "mul.rn.sat.f16x2 %rD, %rA, %rB;",
        sass: |i| i.sat && i.flush == Flush::None && i.format == Format::F16,
        sass_text: "HMUL2.SAT",
        a: 0x7e00_fe00, // NaN, -NaN
        b: 0x3c00_3c00,
        ptx_result: 0,
        why: ".sat flushes NaN results to +0.0",
    },
    Case {
        id: None,
        ptx: "mul.rn.bf16x2 %rD, %rA, %rB;",
        sass: |i| i.format == Format::Bf16 && i.flush == Flush::None && !i.sat,
        sass_text: "HMUL2.BF16_V2",
        a: 0x3fc0_4040, // 1.5, 3.0
        b: 0x3fc0_c000, // 1.5, -2.0
        ptx_result: 0x4010_c0c0,
        why: "BF16 lanes: 1.5 x 1.5 = 2.25, 3.0 x -2.0 = -6.0",
    },
    Case {
        id: None,
        ptx: "neg.f16x2 %rT, %rB; mul.rn.f16x2 %rD, %rA, %rT;",
        sass: |i| i.b_mods.neg && !i.b_mods.abs && i.a_mods == Default::default() && matches!(i.b, Operand2::Reg(_)),
        sass_text: "HMUL2 Rd, Ra, -Rb",
        a: 0x4000_4000, // 2.0, 2.0
        b: 0x4200_c200, // 3.0, -3.0
        ptx_result: 0xc600_4600,
        why: "2.0 x neg(3.0) = -6.0, 2.0 x neg(-3.0) = 6.0",
    },
    Case {
        id: None,
        ptx: "mov.b32 {%hX, %hY}, %rA; mov.b32 %rT, {%hX, %hX}; mul.rn.f16x2 %rD, %rT, %rB;",
        sass: |i| i.a_mods.swizzle == Swizzle::H0H0 && i.b_mods == Default::default() && i.format == Format::F16,
        sass_text: "HMUL2 Rd, Ra.H0_H0, Rb",
        a: 0x4200_4000, // lane 1 = 3.0, lane 0 = 2.0
        b: 0x3c00_3c00,
        ptx_result: 0x4000_4000,
        why: "both lanes read the low half (2.0)",
    },
];

fn kernel(op: &str) -> String {
    let mut body = String::new();
    for i in 1..=8 {
        let line = op
            .replace("%rA", &format!("%r{i}"))
            .replace("%rB", &format!("%r{}", 10 + i))
            .replace("%rD", &format!("%r{}", 20 + i))
            .replace("%rT", &format!("%r{}", 30 + i))
            .replace("%rU", &format!("%r{}", 40 + i))
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
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.v4.b32 {{%r1,%r2,%r3,%r4}}, [%rd2];
  ld.global.v4.b32 {{%r5,%r6,%r7,%r8}}, [%rd2+16];
  ld.global.v4.b32 {{%r11,%r12,%r13,%r14}}, [%rd2+32];
  ld.global.v4.b32 {{%r15,%r16,%r17,%r18}}, [%rd2+48];
{body}  st.global.v4.b32 [%rd2], {{%r21,%r22,%r23,%r24}};
  st.global.v4.b32 [%rd2+16], {{%r25,%r26,%r27,%r28}};
  ret;
}}
"#
    )
}

fn hex_comment(line: &str) -> Option<u64> {
    let s = line.rsplit("/* 0x").next()?;
    u64::from_str_radix(s.split_whitespace().next()?, 16).ok()
}

/// The HMUL2 words ptxas emits for `ptx`, decoded.
fn compile(name: &str, ptx: &str) -> Vec<Inst> {
    let ptxas = find_tool("ptxas").expect("ptxas is needed for this check (bash ci/install-tools.sh)");
    let cuobjdump = find_tool("cuobjdump").expect("cuobjdump is needed for this check (bash ci/install-tools.sh)");
    let dir = std::env::temp_dir().join(format!("hmul2-ptxas-semantics-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, cubin) = (dir.join("k.ptx"), dir.join("k.cubin"));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(&ptxas).args(["-arch=sm_90", "-O3"]).arg(&src).arg("-o").arg(&cubin).output().expect("run ptxas");
    assert!(out.status.success(), "{name}: ptxas failed: {}\n{ptx}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&cuobjdump).arg("-sass").arg(&cubin).output().expect("run cuobjdump");
    assert!(out.status.success(), "{name}: cuobjdump failed: {}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        if !l.contains("HMUL2") {
            continue;
        }
        let lo = hex_comment(l).unwrap_or_else(|| panic!("{name}: no low word in {l:?}"));
        let hi = lines.get(k + 1).and_then(|n| hex_comment(n)).unwrap_or_else(|| panic!("{name}: no high word after {l:?}"));
        let word = (hi as u128) << 64 | lo as u128;
        let inst = decode(word).unwrap_or_else(|e| panic!("{name}: ptxas's word {word:#034x} does not decode: {e}"));
        let ours = render(&inst);
        let theirs = l.split("*/").nth(1).and_then(|s| s.split(';').next()).map(str::trim).unwrap_or_default();
        assert_eq!(ours, theirs, "{name}: our rendering of ptxas's word {word:#034x} differs from cuobjdump's");
        found.push(inst);
    }
    assert!(!found.is_empty(), "{name}: ptxas emitted no HMUL2:\n{text}");
    found
}

#[test]
fn ptxas_emits_hmul2_that_the_reference_computes_as_the_ptx_isa_defines() {
    let x = |a: u32, b: u32| Inputs { a, b, d: 0, pred: 0, c: 0 };
    for (n, c) in CASES.iter().enumerate() {
        let name = c.id.unwrap_or(c.sass_text);
        let emitted = compile(&format!("case{n}"), &kernel(c.ptx));
        for inst in &emitted {
            assert!((c.sass)(inst), "{name}: ptxas emitted {}, expected {}", render(inst), c.sass_text);
            let got = eval(inst, &x(c.a, c.b));
            assert_eq!(got, Ok(c.ptx_result), "{name}: {} on a={:#010x} b={:#010x}: {}", render(inst), c.a, c.b, c.why);
            let Some(id) = c.id else { continue };
            // the witness must tell the entry's options apart
            let k = KNOBS.iter().position(|(k, _)| *k == id).unwrap_or_else(|| panic!("{id}: no such semantics entry"));
            let current = Policy::current().option(k);
            for o in (0..KNOBS[k].1.len()).filter(|&o| o != current) {
                let mut p = *Policy::current();
                p.set(k, o);
                let other = eval_with(&p, inst, &x(c.a, c.b));
                assert_ne!(other, got, "{id}: the witness does not tell option {o} ({:?}) from the assumption", KNOBS[k].1[o]);
            }
        }
        println!("{name}: ptxas emitted {} x {}; reference = PTX ISA ({})", emitted.len(), c.sass_text, c.why);
    }
}

/// Every `outside` record of semantics.json that names this file has a case here, and every
/// case's entry records it (supporting the assumption the reference makes).
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
