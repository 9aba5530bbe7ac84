//! What NVIDIA's compiler relies on HFMA2 to do, against the HFMA2 reference
//! (`reference::fma`), as `harness/tests/ptxas_add_semantics.rs` does for HADD2.
//!
//! For each case: ptxas must emit only instructions of the shapes named (registers as
//! `Rn`; HFMA2 and HFMA2.MMA are both accepted where the case says so, ptxas picks either
//! for the same PTX), and the reference, given those modifiers, must compute what the PTX
//! means on the witness inputs; for a case naming a semantics entry, every other option of
//! the entry must give another result on at least one witness. Outside evidence, never a
//! hardware result (see `outside` in harness/spec/semantics.json, which this file must
//! cover). Fails (does not skip) when ptxas or cuobjdump is missing.

use harness_isa::nvdisasm::find_tool;
use harness_reference::isa::{Flush, Format, Inst, Operand2, SrcMods, Swizzle};
use harness_reference::reference::fma::{eval_fma, FmaOp};
use harness_reference::reference::policy::{parse_table, KNOBS, SEMANTICS_JSON};
use harness_reference::reference::{eval_with, Policy};
use std::process::Command;

const THIS_FILE: &str = "harness/reference/tests/ptxas_fma_semantics.rs";

struct Case {
    id: Option<&'static str>,
    /// One copy of the PTX: `%rA`, `%rB`, `%rC` loaded 32-bit operands, `%rD` the stored
    /// result, `%rT` a 32-bit temporary.
    ptx: &'static str,
    /// The instruction texts ptxas may emit (registers written `Rn`); every one it emits
    /// must be one of them.
    sass: &'static [&'static str],
    op: FmaOp,
    /// (operand 1's word, operand 2's word, operand 3's word, what the PTX ISA defines)
    witnesses: &'static [(u32, u32, u32, u32)],
    /// Other knobs set (id, option) before the options of `id` are compared: a knob whose
    /// options coincide under the committed policy.
    under: &'static [(&'static str, usize)],
    /// The PTX also compiles to HMUL2 with the same modifiers: the HMUL2 reference must
    /// agree on the witnesses.
    hmul2: bool,
    why: &'static str,
}

const PLAIN: SrcMods = SrcMods { neg: false, abs: false, swizzle: Swizzle::H1H0 };
const NEG: SrcMods = SrcMods { neg: true, abs: false, swizzle: Swizzle::H1H0 };

const fn op(format: Format, a_mods: SrcMods, flush: Flush, sat: bool, relu: bool) -> FmaOp {
    FmaOp { format, a_mods, b_mods: PLAIN, c_mods: PLAIN, flush, sat, relu, oob: false, mma: false }
}

const F16: Format = Format::F16;
const BF16: Format = Format::Bf16;

const CASES: &[Case] = &[
    Case {
        id: Some("fma-signed-zero"),
        ptx: "mov.b32 %rT, 0x80008000; fma.rn.f16x2 %rD, %rA, %rB, %rT;",
        sass: &["HMUL2 Rn, Rn, Rn", "HFMA2.MMA Rn, Rn, Rn, -RZ", "HFMA2 Rn, Rn, Rn, -RZ"],
        op: op(F16, PLAIN, Flush::None, false, false),
        // lane 0: +0 x 1 + -0 = +0; lane 1: -0 x 1 + -0 = -0; then 1.5 x 3 + -0 = 4.5
        witnesses: &[(0x8000_0000, 0x3c00_3c00, 0x8000_8000, 0x8000_0000), (0x3e00_3e00, 0x4200_c200, 0x8000_8000, 0x4480_c480)],
        under: &[],
        hmul2: true,
        why: "x * y + -0 is x * y, signed zeros included: ptxas emits HMUL2 or HFMA2 with -RZ",
    },
    Case {
        // a +0 addend tells IEEE's rule from only one alternative: no id
        id: None,
        ptx: "mov.b32 %rT, 0; fma.rn.f16x2 %rD, %rA, %rB, %rT;",
        sass: &["HFMA2.MMA Rn, Rn, Rn, RZ", "HFMA2 Rn, Rn, Rn, RZ", "HFMA2.MMA Rn, Rn, Rn, RZ.H0_H0", "HFMA2 Rn, Rn, Rn, RZ.H0_H0"],
        op: op(F16, PLAIN, Flush::None, false, false),
        // -0 x 1 + +0 = +0 (so ptxas keeps the +0 addend); +0 x 1 + +0 = +0
        witnesses: &[(0x8000_0000, 0x3c00_3c00, 0, 0)],
        under: &[],
        hmul2: false,
        why: "x * y + +0 turns a -0 product into +0",
    },
    Case {
        id: Some("fma-ftz-addend"),
        ptx: "fma.rn.ftz.f16x2 %rD, %rA, %rB, %rC;",
        sass: &["HFMA2.MMA.FTZ Rn, Rn, Rn, Rn", "HFMA2.FTZ Rn, Rn, Rn, Rn"],
        op: op(F16, PLAIN, Flush::Ftz, false, false),
        // 2^-14 x 1 + (+-2^-24 flushed to +-0) = 2^-14 in both lanes
        witnesses: &[(0x0400_0400, 0x3c00_3c00, 0x8001_0001, 0x0400_0400)],
        under: &[],
        hmul2: false,
        why: ".ftz flushes subnormal inputs, the addend among them, to sign-preserving zero",
    },
    Case {
        id: Some("fma-relu-nan"),
        ptx: "fma.rn.relu.f16x2 %rD, %rA, %rB, %rC;",
        sass: &["HFMA2.RELU Rn, Rn, Rn, Rn", "HFMA2.MMA.RELU Rn, Rn, Rn, Rn"],
        op: op(F16, PLAIN, Flush::None, false, true),
        // a NaN operand with a payload: the canonical NaN; 1 x 1 + -3 = -2: +0
        witnesses: &[(0x3c00_7e5a, 0x3c00_3c00, 0xc200_3c00, 0x0000_7fff), (0x3c00_3c00, 0xfd55_3c00, 0x0000_0000, 0x7fff_3c00)],
        // under a canonical nan-result, passing the NaN through gives 0x7fff as well
        under: &[("nan-result", 1)],
        hmul2: false,
        why: ".relu clamps negative results to 0 and converts a NaN result to the canonical NaN",
    },
    Case {
        id: Some("fma-relu-nan"),
        ptx: "fma.rn.f16x2 %rT, %rA, %rB, %rC; mov.b32 %rD, 0; max.NaN.f16x2 %rD, %rT, %rD;",
        sass: &["HFMA2.RELU Rn, Rn, Rn, Rn", "HFMA2.MMA.RELU Rn, Rn, Rn, Rn"],
        op: op(F16, PLAIN, Flush::None, false, true),
        witnesses: &[(0x3c00_7e5a, 0x3c00_3c00, 0xc200_3c00, 0x0000_7fff)],
        under: &[("nan-result", 1)],
        hmul2: false,
        why: "max.NaN(x, 0) after fma: a NaN gives the canonical NaN, a negative result 0; ptxas fuses the two",
    },
    Case {
        id: Some("fma-mma"),
        ptx: "fma.rn.f16x2 %rD, %rA, %rB, %rC;",
        sass: &["HFMA2.MMA Rn, Rn, Rn, Rn", "HFMA2 Rn, Rn, Rn, Rn"],
        op: op(F16, PLAIN, Flush::None, false, false),
        // (1 x 2 + 3, 2 x 2 + -4) = (5, +0); (1 + 2^-10)(1 + 2^-9) - 1, rounded once
        witnesses: &[(0x4000_3c00, 0x4000_4000, 0xc400_4200, 0x0000_4500), (0x3c01_3c01, 0x3c02_3c02, 0xbc00_bc00, 0x1a01_1a01)],
        under: &[],
        hmul2: false,
        why: "one fused multiply-add, rounded once",
    },
    Case {
        id: Some("fma-mma"),
        ptx: "fma.rn.bf16x2 %rD, %rA, %rB, %rC;",
        sass: &["HFMA2.MMA.BF16_V2 Rn, Rn, Rn, Rn", "HFMA2.BF16_V2 Rn, Rn, Rn, Rn"],
        op: op(BF16, PLAIN, Flush::None, false, false),
        // (1 + 2^-7)^2 - (1 + 2^-6) = 2^-14, exactly
        witnesses: &[(0x3f81_3f81, 0x3f81_3f81, 0xbf82_bf82, 0x3880_3880)],
        under: &[],
        hmul2: false,
        why: "one fused multiply-add, rounded once",
    },
    Case {
        id: None,
        ptx: "neg.f16x2 %rT, %rA; fma.rn.f16x2 %rD, %rT, %rB, %rC;",
        sass: &["HFMA2.MMA Rn, -Rn, Rn, Rn", "HFMA2 Rn, -Rn, Rn, Rn"],
        op: op(F16, NEG, Flush::None, false, false),
        witnesses: &[(0x4000_3c00, 0x4000_4000, 0x4400_4200, 0x0000_3c00)],
        under: &[],
        hmul2: false,
        why: "(-1 x 2 + 3, -2 x 2 + 4) = (1, +0)",
    },
    Case {
        id: None,
        ptx: "fma.rn.sat.f16x2 %rD, %rA, %rB, %rC;",
        sass: &["HFMA2.SAT Rn, Rn, Rn, Rn", "HFMA2.MMA.SAT Rn, Rn, Rn, Rn"],
        op: op(F16, PLAIN, Flush::None, true, false),
        witnesses: &[(0x3c00_7e00, 0x3c00_3c00, 0x3c00_3c00, 0x3c00_0000), (0xc000_3800, 0x3c00_3800, 0x3c00_8000, 0x0000_3400)],
        under: &[],
        hmul2: false,
        why: ".sat: NaN -> +0, 2 -> 1, -1 -> +0, 0.25 stays",
    },
    Case {
        id: None,
        ptx: "fma.rn.relu.bf16x2 %rD, %rA, %rB, %rC;",
        sass: &["HFMA2.MMA.BF16_V2.RELU Rn, Rn, Rn, Rn", "HFMA2.BF16_V2.RELU Rn, Rn, Rn, Rn"],
        op: op(BF16, PLAIN, Flush::None, false, true),
        witnesses: &[(0x3f80_3f80, 0x3f80_3f80, 0xc000_3f80, 0x0000_4000)],
        under: &[],
        hmul2: false,
        why: ".relu on BF16: (1 + 1, 1 - 2) = (2, +0)",
    },
];

fn kernel(op: &str) -> String {
    let mut body = String::new();
    for i in 1..=8 {
        let line = op
            .replace("%rA", &format!("%r{i}"))
            .replace("%rB", &format!("%r{}", 10 + i))
            .replace("%rC", &format!("%r{}", 30 + i))
            .replace("%rD", &format!("%r{}", 20 + i))
            .replace("%rT", &format!("%r{}", 40 + i));
        body += &format!("  {line}\n");
    }
    format!(
        r#".version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<50>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.v4.b32 {{%r1,%r2,%r3,%r4}}, [%rd2];
  ld.global.v4.b32 {{%r5,%r6,%r7,%r8}}, [%rd2+16];
  ld.global.v4.b32 {{%r11,%r12,%r13,%r14}}, [%rd2+32];
  ld.global.v4.b32 {{%r15,%r16,%r17,%r18}}, [%rd2+48];
  ld.global.v4.b32 {{%r31,%r32,%r33,%r34}}, [%rd2+64];
  ld.global.v4.b32 {{%r35,%r36,%r37,%r38}}, [%rd2+80];
{body}  st.global.v4.b32 [%rd2], {{%r21,%r22,%r23,%r24}};
  st.global.v4.b32 [%rd2+16], {{%r25,%r26,%r27,%r28}};
  ret;
}}
"#
    )
}

/// `R12` -> `Rn` (RZ stays); `.reuse` dropped.
fn shape(text: &str) -> String {
    let text = text.replace(".reuse", "");
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

/// The packed-half arithmetic instructions ptxas emits for `ptx`, as cuobjdump prints them
/// (shaped).
fn compile(name: &str, ptx: &str) -> Vec<String> {
    let ptxas = find_tool("ptxas").expect("ptxas is needed for this check (bash ci/install-tools.sh)");
    let cuobjdump = find_tool("cuobjdump").expect("cuobjdump is needed for this check (bash ci/install-tools.sh)");
    let dir = std::env::temp_dir().join(format!("hmul2-ptxas-fma-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, cubin) = (dir.join("k.ptx"), dir.join("k.cubin"));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(&ptxas).args(["-arch=sm_90", "-O3"]).arg(&src).arg("-o").arg(&cubin).output().expect("run ptxas");
    assert!(out.status.success(), "{name}: ptxas failed: {}\n{ptx}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&cuobjdump).arg("-sass").arg(&cubin).output().expect("run cuobjdump");
    assert!(out.status.success(), "{name}: cuobjdump failed: {}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let found: Vec<String> = text
        .lines()
        .filter_map(|l| l.split("*/").nth(1)?.split(';').next().map(str::trim))
        .filter(|t| ["HFMA2", "HMUL2", "HADD2", "HMNMX2"].iter().any(|o| t.starts_with(o)))
        .map(|t| shape(&t.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect();
    assert!(!found.is_empty(), "{name}: ptxas emitted no packed-half arithmetic:\n{text}");
    found
}

#[test]
fn ptxas_emits_hfma2_that_the_reference_computes_as_the_ptx_isa_defines() {
    for (n, c) in CASES.iter().enumerate() {
        let name = c.id.unwrap_or(c.sass[0]);
        let emitted = compile(&format!("case{n}"), &kernel(c.ptx));
        for t in &emitted {
            assert!(c.sass.contains(&t.as_str()), "{name}: ptxas emitted {t}, expected one of {:?}", c.sass);
        }
        // each HFMA2 shape emitted, as HFMA2 or HFMA2.MMA; an RZ operand 3 reads 0 (the
        // witnesses' c is then the value it stands for: -RZ is -0, RZ is +0)
        let mut ops: Vec<(FmaOp, Option<u32>)> = emitted
            .iter()
            .filter(|t| t.starts_with("HFMA2"))
            .map(|t| {
                let mut op = FmaOp { mma: t.contains(".MMA"), ..c.op };
                let t = match t.strip_suffix(".H0_H0") {
                    Some(rest) => {
                        op.c_mods.swizzle = Swizzle::H0H0;
                        rest
                    }
                    None => t,
                };
                if t.ends_with(", -RZ") {
                    (FmaOp { c_mods: SrcMods { neg: true, ..op.c_mods }, ..op }, Some(0))
                } else if t.ends_with(", RZ") {
                    (op, Some(0))
                } else {
                    (op, None)
                }
            })
            .collect();
        ops.dedup();
        if ops.is_empty() {
            ops.push((c.op, None));
        }
        let mut p = *Policy::current();
        for &(id, o) in c.under {
            p.set(KNOBS.iter().position(|(k, _)| *k == id).unwrap(), o);
        }
        // every emitted shape on every witness, in one list
        let run = |p: &Policy| {
            ops.iter().flat_map(|(op, rz)| c.witnesses.iter().map(move |&(a, b, cc, _)| eval_fma(op, p, a, b, rz.unwrap_or(cc)))).collect::<Vec<_>>()
        };
        let got = run(&p);
        for (i, g) in got.iter().enumerate() {
            let (op, (a, b, cc, want)) = (ops[i / c.witnesses.len()].0, c.witnesses[i % c.witnesses.len()]);
            assert_eq!(*g, Ok(want), "{name}: {op:?} on a={a:#010x} b={b:#010x} c={cc:#010x}: {}", c.why);
        }
        if let Some(id) = c.id {
            let k = KNOBS.iter().position(|(k, _)| *k == id).unwrap_or_else(|| panic!("{id}: no such semantics entry"));
            for o in (0..KNOBS[k].1.len()).filter(|&o| o != p.option(k)) {
                let mut q = p;
                q.set(k, o);
                assert_ne!(run(&q), got, "{id}: the witnesses do not tell option {o} ({:?}) from the assumption", KNOBS[k].1[o]);
            }
        }
        if c.hmul2 {
            let inst = Inst::new(0, 1, Operand2::Reg(2));
            for &(a, b, _, want) in c.witnesses {
                let x = harness_reference::inputs::Inputs { a, b, d: 0, pred: 0, c: 0 };
                assert_eq!(eval_with(&p, &inst, &x), Ok(want), "{name}: HMUL2 on a={a:#010x} b={b:#010x}");
            }
        }
        println!("{name}: ptxas emitted {emitted:?}; reference = PTX ISA ({})", c.why);
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
