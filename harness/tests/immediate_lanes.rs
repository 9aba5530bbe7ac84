//! Which immediate of `HMUL2 Rd, Ra, F1, F2` feeds which lane, as ptxas emits it: a
//! `mul.rn.f16x2` by the packed constant 0x40003C00 (lane 0 = 1.0, lane 1 = 2.0) must become
//! an HMUL2 whose bits 32..63 are that constant, so the second-printed immediate (bits 32..47)
//! is lane 0. Fails (does not skip) when ptxas or cuobjdump is missing.

use hmul2_harness::inputs::Inputs;
use hmul2_harness::isa::{decode, render, Operand2};
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::reference::eval;
use std::process::Command;

/// Eight independent multiplies: with one, ptxas picks HFMA2.MMA; with several it
/// alternates HFMA2.MMA and HMUL2 to spread the pipes.
const PTX: &str = r#".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.v4.b32 {%r1,%r2,%r3,%r4}, [%rd2];
  ld.global.v4.b32 {%r5,%r6,%r7,%r8}, [%rd2+16];
  mov.b32 %r9, 0x40003C00;
  mul.rn.f16x2 %r11, %r1, %r9;
  mul.rn.f16x2 %r12, %r2, %r9;
  mul.rn.f16x2 %r13, %r3, %r9;
  mul.rn.f16x2 %r14, %r4, %r9;
  mul.rn.f16x2 %r15, %r5, %r9;
  mul.rn.f16x2 %r16, %r6, %r9;
  mul.rn.f16x2 %r17, %r7, %r9;
  mul.rn.f16x2 %r18, %r8, %r9;
  st.global.v4.b32 [%rd2], {%r11,%r12,%r13,%r14};
  st.global.v4.b32 [%rd2+16], {%r15,%r16,%r17,%r18};
  ret;
}
"#;

fn hex_comment(line: &str) -> Option<u64> {
    let s = line.rsplit("/* 0x").next()?;
    u64::from_str_radix(s.split_whitespace().next()?, 16).ok()
}

#[test]
fn ptxas_packs_the_f16x2_constant_into_hmul2_bits_32_to_63() {
    let ptxas = find_tool("ptxas").expect("ptxas is needed for this check (bash ci/install-tools.sh)");
    let cuobjdump = find_tool("cuobjdump").expect("cuobjdump is needed for this check (bash ci/install-tools.sh)");
    let dir = std::env::temp_dir().join(format!("hmul2-imm-lanes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ptx, cubin) = (dir.join("imm.ptx"), dir.join("imm.cubin"));
    std::fs::write(&ptx, PTX).unwrap();
    let st = Command::new(&ptxas).args(["-arch=sm_90", "-O3"]).arg(&ptx).arg("-o").arg(&cubin).status().expect("run ptxas");
    assert!(st.success(), "ptxas failed");
    let out = Command::new(&cuobjdump).arg("-sass").arg(&cubin).output().expect("run cuobjdump");
    assert!(out.status.success(), "cuobjdump failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
    let lines: Vec<&str> = text.lines().collect();
    let mut seen = 0;
    for (k, l) in lines.iter().enumerate() {
        if !l.contains("HMUL2 ") {
            continue;
        }
        let lo = hex_comment(l).expect("low word comment");
        let hi = hex_comment(lines[k + 1]).expect("high word comment");
        let word = (hi as u128) << 64 | lo as u128;
        assert_eq!((word >> 32) as u32, 0x4000_3c00, "bits 32..63 hold the PTX constant verbatim: {l}");
        let inst = decode(word).expect("ptxas's word decodes");
        assert_eq!(inst.b, Operand2::Imm { first: 0x4000, second: 0x3c00 }, "{}", render(&inst));
        assert!(l.contains(", 2, 1 "), "nvdisasm prints bits 48..63 (2.0) first: {l}");
        // PTX: lane 0 (low half) x 1.0, lane 1 (high half) x 2.0. Give both lanes 3.0.
        let x = Inputs { a: 0x4200_4200, b: 0, d: 0, pred: 0 };
        assert_eq!(eval(&inst, &x), Ok(0x4600_4200), "reference: lane 0 = 3 x 1, lane 1 = 3 x 2");
        seen += 1;
    }
    assert!(seen > 0, "ptxas emitted no HMUL2 with an immediate:\n{text}");
    println!("{seen} HMUL2 immediates checked");
}
