//! Every helper op of every architecture, encoded from its helper spec (spec/sm90/helpers.json,
//! spec/arch/sm80/helpers.json for SM80..SM89, spec/arch/sm100/helpers.json for SM100 and
//! SM120) with random field values, is what `nvdisasm -b <arch>` says it is (same check as
//! for HMUL2: encode, disassemble, compare text). Fails when nvdisasm is missing.

use crate::common;
use hmul2_harness::kernel::helpers::{encode_for, op_spec_for, render_for, Op, Sched};
use hmul2_harness::nvdisasm::{Nvdisasm, Verdict};
use hmul2_harness::rng::Rng;
use hmul2_harness::target::Target;

#[test]
fn helpers_disassemble_to_their_text() {
    let seed = std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(7u64);
    eprintln!("seed: {seed}");
    let nv = Nvdisasm::find().expect("nvdisasm is required (bash ci/install-tools.sh)");
    for t in Target::ALL {
        let (words, texts) = random_helpers(t, &mut Rng::new(seed));
        let got: Vec<Verdict> = if t == Target::DEFAULT {
            nv.disassemble(&words).expect("nvdisasm runs")
        } else {
            common::disassemble_as(t.nvdisasm, &words).into_iter().map(Verdict::Text).collect()
        };
        compare(t, &words, &texts, &got);
    }
}

/// 40 words of each op of `t`'s helper spec, random field values (as the kernel uses them),
/// and the text each should print.
fn random_helpers(t: &Target, r: &mut Rng) -> (Vec<u128>, Vec<String>) {
    let mut words = Vec::new();
    let mut texts = Vec::new();
    // a ptxas-only op a family leaves out (SM100/SM120 have no MOV or IMAD.WIDE.U32 with c[])
    for op in Op::ALL.into_iter().filter(|&op| op_spec_for(t, op).present) {
        for k in 0..40 {
            let spec = op_spec_for(t, op);
            let args: Vec<u32> = spec
                .fields
                .iter()
                .map(|f| {
                    // registers: even where the op needs pairs or quads (the kernel's use)
                    let v = match (f.kind.as_str(), op, f.name.as_str()) {
                        ("reg", Op::LdgE128, "dst") | ("reg", Op::StgE128, "data") => r.below(63) * 4,
                        ("reg", Op::Ldc64 | Op::ImadWideU32Imm | Op::ImadWideU32Const, "dst") | ("reg", Op::ImadWideU32Imm, "c") => r.below(127) * 2,
                        ("reg", Op::LdgE128 | Op::StgE | Op::StgE64 | Op::StgE128, "addr") | ("reg", Op::StgE64, "data") => r.below(127) * 2,
                        ("pred", _, _) => r.below(7),
                        // nvdisasm prints IMAD with a = RZ, and IMAD.IADD with c = RZ, as IMAD.MOV
                        // (the digest kernel never places those)
                        ("reg", Op::ImadIadd | Op::ImadImm, "a") | ("reg", Op::ImadIadd, "c") => r.below(255),
                        // IMAD with the immediate 1 is IMAD_IADD (its own op, tested as such)
                        (_, Op::ImadImm, "imm") if k == 2 => 0x10001,
                        (_, Op::ImadImm, "imm") => r.next_u32() | 2,
                        // a backward branch: the sign extension above the field is fixed to ones
                        (_, Op::BraBack, "offset") => (-(1 + r.below(1 << 20) as i32)) as u32,
                        (_, Op::PrmtImm, "sel") => r.below(0x10000),
                        ("ureg", Op::Uldc64, _) => r.below(31) * 2,
                        ("ureg", _, _) => r.below(63),
                        ("reg", _, _) => {
                            if k == 0 {
                                255
                            } else {
                                r.below(255)
                            }
                        }
                        (_, Op::R2p, "mask") => 0x7f,
                        // the kernel reads P0..P6 back; other masks print alike
                        (_, Op::P2r, "mask") if k < 2 => 0x7f,
                        (_, Op::P2r, "mask") => 1 + r.below(0xff),
                        // LDCU.64 (SM100/SM120's ULDC_64) prints offset 0 as [URZ], its index register
                        (_, Op::Uldc64, "offset") if t.sm >= 100 => (1 + r.below(0x3fff)) * 4,
                        (_, Op::Ldc64 | Op::Uldc64 | Op::MovConst | Op::ImadMovU32Const | Op::ImadWideU32Const, "offset") => r.below(0x4000) * 4 % 0x10000,
                        // offset 0 prints as [RZ], the index register (ptxas writes `LDC R9, c[0x3][RZ]`)
                        (_, Op::Ldc, "offset") => (1 + r.below(0x3fff)) * 4,
                        (_, Op::Ldc64 | Op::Ldc | Op::Uldc64 | Op::MovConst | Op::ImadMovU32Const, "bank") => r.below(18),
                        (_, Op::ShfRU64Imm | Op::ShfRU32HiImm, "imm") => r.below(32),
                        _ => {
                            if k == 1 {
                                0x8000_0000
                            } else {
                                r.next_u32() >> r.below(32)
                            }
                        }
                    };
                    v
                })
                .collect();
            words.push(encode_for(t, op, &args, Sched::safe(op)).expect("fits"));
            texts.push(render_for(t, op, &args));
        }
    }
    (words, texts)
}

fn compare(arch: &Target, words: &[u128], texts: &[String], verdicts: &[Verdict]) {
    assert_eq!(verdicts.len(), words.len(), "{arch}");
    for ((v, t), w) in verdicts.iter().zip(texts).zip(words) {
        match v {
            Verdict::Text(got) => {
                // raw disassembly prints branch targets as addresses, the cubin listing as labels
                // (the digest program's targets are checked in tests/digest_emulate.rs)
                let upto_bra = |s: &str| s.find("BRA").map(|i| s[..i + 3].to_string());
                let want = upto_bra(t).unwrap_or_else(|| t.clone());
                let got = upto_bra(got).unwrap_or_else(|| got.trim_end_matches(';').trim().to_string());
                assert_eq!(got, want, "{arch}: word {}", hmul2_harness::isa::format_hex(*w));
            }
            Verdict::Rejected(m) => panic!("nvdisasm -b {arch} rejected {} ({t}): {m}", hmul2_harness::isa::format_hex(*w)),
            Verdict::Empty => panic!("nvdisasm -b {arch} printed nothing for {} ({t})", hmul2_harness::isa::format_hex(*w)),
        }
    }
}
