//! The patched cubin, judged by NVIDIA's own tools (no GPU): nvdisasm prints exactly the
//! planned program, every HMUL2 under test sits in `.text` byte for byte as generated,
//! cuobjdump reports the register count the program needs. Fails when the tools are missing.

use crate::common;

use hmul2_harness::inputs::Inputs;
use hmul2_harness::isa::{decode, encode, Form, Inst, Operand2};
use hmul2_harness::kernel::runnable_words;
use hmul2_harness::kernel::{self, build, plan, random_inputs, render_plan, runnable, Case, NotRunnable};
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::rng::Rng;
use object::{Object, ObjectSection};
use std::process::Command;

fn seed() -> u64 {
    common::seed(0x5eed_0001)
}

fn cases(words: &[u128], threads: usize, seed: u64) -> Vec<Case> {
    let mut r = Rng::new(seed);
    words.iter().map(|&w| Case { word: w, inputs: random_inputs(w, threads, &mut r) }).collect()
}

fn tmp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("hmul2-kernel-test-{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).expect("write temp file");
    p
}

/// Instruction texts of nvdisasm's listing of a cubin's kernel.
fn listing(cubin: &[u8], name: &str) -> Vec<String> {
    let nv = find_tool("nvdisasm").expect("nvdisasm is required (bash ci/install-tools.sh)");
    let p = tmp(name, cubin);
    let out = Command::new(nv).arg("-c").arg(&p).output().expect("run nvdisasm");
    let _ = std::fs::remove_file(&p);
    assert!(out.status.success(), "nvdisasm failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("/*")?;
            let end = rest.find("*/")?;
            Some(rest[end + 2..].trim().trim_end_matches(';').trim().to_string())
        })
        .collect()
}

/// The kernel's `.text` bytes, read with the object crate (not the patcher's own reader).
fn text_words(cubin: &[u8]) -> Vec<u128> {
    let f = object::File::parse(cubin).expect("patched cubin parses");
    let s = f.section_by_name(".text.hmul2_kernel").expect(".text.hmul2_kernel");
    let d = s.data().expect("text data");
    assert_eq!(d.len() % 16, 0);
    d.chunks(16).map(|c| u128::from_le_bytes(c.try_into().unwrap())).collect()
}

fn check_batch(cs: &[Case], label: &str) {
    let built = build(cs).expect("build");
    let p = plan(cs).expect("plan");
    let expected = render_plan(&p, cs);
    let got = listing(&built.job.cubin, label);
    assert_eq!(got.len(), expected.len(), "{label}: instruction count");
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "{label}: instruction {i} at {:#x}", i * 16);
    }
    let words = text_words(&built.job.cubin);
    assert_eq!(words, built.program, "{label}: .text bytes are the program");
    for (c, e) in cs.iter().zip(&built.manifest.cases) {
        assert_eq!(words[e.code_offset / 16], c.word, "{label}: case {} byte for byte", e.index);
    }
    // every helper is NVIDIA-legal and the HMUL2 texts match the project's renderer
    // an output record per thread and case: the destination, then the predicates after
    assert_eq!(built.job.output_bytes, cs.len() * cs[0].inputs.len() * 8);
    // the records, then one c-plane word per thread of each three-source case, then (cx[]
    // cases) the bindless slots
    let t = cs[0].inputs.len();
    let records = cs.len() * t * 16;
    let plane = cs.iter().filter(|c| decode(c.word).unwrap().c.is_some()).count() * t * 4;
    let has_cx = cs.iter().any(|c| matches!(decode(c.word).unwrap().form(), Form::ConstUr | Form::ConstUrC));
    let len = built.job.input.len();
    assert!(if has_cx { len > records + plane } else { len == records + plane }, "{label}: input {len} bytes, records {records}, c plane {plane}");
    for (c, e) in cs.iter().zip(&built.manifest.cases) {
        let inst = decode(c.word).unwrap();
        assert_eq!(e.c_input_offset.is_some(), inst.c.is_some(), "{label}: case {}: c plane", e.index);
        if let (Some(at), Some(Operand2::Reg(_))) = (e.c_input_offset, inst.c) {
            // operand 3 as given, thread by thread
            for (k, x) in c.inputs.iter().enumerate() {
                assert_eq!(built.job.input[at + 4 * k..at + 4 * k + 4], x.c.to_le_bytes(), "{label}: case {} thread {k}: c", e.index);
            }
        }
    }
}

#[test]
fn nvdisasm_prints_the_planned_program_for_every_runnable_form() {
    let s = seed();
    // every instruction in one batch
    // (and a few of each form: the three-source forms are two instructions of seven, and
    // their rarer forms may miss a draw of any size)
    let mut mixed = runnable_words(s ^ 1, None, 1200).expect("runnable words");
    for f in Form::ALL {
        mixed.extend(runnable_words(s ^ 2, Some(f), 8).expect("runnable words"));
    }
    let forms: std::collections::BTreeSet<_> = mixed.iter().map(|&w| decode(w).unwrap().form()).collect();
    assert_eq!(forms.len(), Form::ALL.len(), "a mixed batch holds every form");
    let ops: std::collections::BTreeSet<_> = mixed.iter().map(|&w| decode(w).unwrap().op.mnemonic()).collect();
    assert_eq!(ops.len(), hmul2_harness::reference::IMPLEMENTED.len(), "a mixed batch holds every instruction: {ops:?}");
    // the batches are independent (one nvdisasm call each, most of the time): two threads
    let mut batches: Vec<(Vec<Case>, &str)> =
        Form::ALL.iter().map(|&form| (cases(&runnable_words(s, Some(form), 150).expect("runnable words"), 32, s), form.cli_name())).collect();
    batches.push((cases(&mixed, 64, s), "mixed"));
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| {
                while let Some((cs, label)) = batches.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    check_batch(cs, label);
                }
            });
        }
    });
}

#[test]
fn ptxas_declares_two_registers_above_the_highest_its_code_names() {
    // outside truth for kernel::HW_RESERVED_GPRS: the committed template, as ptxas built it
    let cu = find_tool("cuobjdump").expect("cuobjdump is required (bash ci/install-tools.sh)");
    let p = tmp("template-sass", hmul2_harness::kernel::TEMPLATE);
    let out = Command::new(cu).arg("-sass").arg(&p).output().expect("run cuobjdump");
    let _ = std::fs::remove_file(&p);
    assert!(out.status.success(), "cuobjdump failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let highest = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|t| t.strip_prefix('R').and_then(|n| n.parse::<u32>().ok()))
        .max()
        .unwrap_or_else(|| panic!("no register in the template's SASS:\n{text}"));
    let declared = resource_regs(hmul2_harness::kernel::TEMPLATE, "template");
    assert_eq!(declared, highest + 1 + hmul2_harness::kernel::HW_RESERVED_GPRS, "the template names up to R{highest}");
    assert_eq!(hmul2_harness::kernel::declared_regcount(highest + 1), declared);
}

fn resource_regs(cubin: &[u8], name: &str) -> u32 {
    let cu = find_tool("cuobjdump").expect("cuobjdump is required (bash ci/install-tools.sh)");
    let p = tmp(name, cubin);
    let out = Command::new(cu).arg("--dump-resource-usage").arg(&p).output().expect("run cuobjdump");
    let _ = std::fs::remove_file(&p);
    assert!(out.status.success(), "cuobjdump failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let at = text.find("REG:").unwrap_or_else(|| panic!("no REG: in {text}"));
    text[at + 4..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().expect("REG count")
}

#[test]
fn cuobjdump_reports_the_register_count_the_program_needs() {
    // R0..R3 staging; the HMUL2 names R9 and R17: 18 registers, and the hardware's two
    // (its program counter) above them, as ptxas declares them: 20
    let mut i = Inst::new(17, 9, Operand2::Reg(5));
    let w1 = encode(&i).unwrap();
    let small = build(&cases(&[w1], 32, 1)).unwrap();
    assert_eq!(small.manifest.regcount, 20);
    assert_eq!(resource_regs(&small.job.cubin, "small"), 20);
    i.dst = 252;
    let w2 = encode(&i).unwrap();
    let big = build(&cases(&[w1, w2], 32, 2)).unwrap();
    assert_eq!(big.manifest.regcount, 255);
    assert_eq!(resource_regs(&big.job.cubin, "big"), 255);
    // R253 and R254 leave no room for the hardware's two under the most a cubin declares
    for r in [253, 254] {
        i.dst = r;
        let w3 = encode(&i).unwrap();
        assert!(matches!(hmul2_harness::kernel::runnable(w3), Err(hmul2_harness::kernel::NotRunnable::HardwareRegister(x)) if x == r));
        let e = build(&cases(&[w1, w3], 32, 2)).unwrap_err().to_string();
        assert!(e.contains(&format!("names R{r}")) && e.contains("R0..R252"), "{e}");
    }
    // only the staging quad: RZ everywhere
    let z = encode(&Inst::new(255, 255, Operand2::Reg(255))).unwrap();
    let zb = build(&cases(&[z], 32, 3)).unwrap();
    assert_eq!(zb.manifest.regcount, 6);
    assert_eq!(resource_regs(&zb.job.cubin, "zero"), 6);
}

#[test]
fn unusable_handle_pairs_and_foreign_banks_are_refused_with_reasons() {
    for u in [5u8, 61, 62, 63] {
        let w = encode(&Inst::new(1, 2, Operand2::ConstUr { ureg: u, offset: 0x10 })).unwrap();
        assert!(matches!(runnable(w), Err(NotRunnable::BindlessHandlePair { ureg, offset: 0x10 }) if ureg == u));
    }
    let cx = encode(&Inst::new(1, 2, Operand2::ConstUr { ureg: 61, offset: 0x10 })).unwrap();
    let even = encode(&Inst::new(1, 2, Operand2::ConstUr { ureg: 60, offset: 0xfffc })).unwrap();
    assert_eq!(runnable(even), Ok(()));
    let c0 = encode(&Inst::new(1, 2, Operand2::Const { bank: 0, offset: 0x210 })).unwrap();
    assert!(matches!(runnable(c0), Err(NotRunnable::ConstBank { bank: 0, offset: 0x210 })));
    let neg = encode(&Inst::new(1, 2, Operand2::Const { bank: 3, offset: -4 })).unwrap();
    assert!(matches!(runnable(neg), Err(NotRunnable::ConstBank { bank: 3, offset: -4 })));
    let ok = encode(&Inst::new(1, 2, Operand2::Const { bank: 3, offset: 0x7ffc })).unwrap();
    assert_eq!(runnable(ok), Ok(()));
    let err = build(&cases(&[ok, cx], 32, 4)).unwrap_err();
    assert!(matches!(err, kernel::PatchError::NotRunnable { case: 1, .. }), "{err}");
}

#[test]
fn effective_inputs_follow_the_load_order_and_results_are_read_back() {
    // a == b == dst: everything is a
    let w = encode(&Inst::new(7, 7, Operand2::Reg(7))).unwrap();
    let ins: Vec<Inputs> = (0..32).map(|k| Inputs { a: k, b: 100 + k, d: 200 + k, pred: 0xff, c: 0 }).collect();
    let cases = [Case { word: w, inputs: ins }];
    let built = build(&cases).unwrap();
    for (k, e) in built.effective_inputs(&cases).unwrap()[0].iter().enumerate() {
        assert_eq!((e.a, e.b, e.d, e.pred), (k as u32, k as u32, k as u32, 0x7f));
    }
    // cx[UR4][0x44]: handle base + 0x44 is the warp's slot, which holds lane 0's b
    let cx = encode(&Inst::new(1, 2, Operand2::ConstUr { ureg: 4, offset: 0x44 })).unwrap();
    let ins: Vec<Inputs> = (0..64).map(|k| Inputs { a: 1, b: 1000 + k, d: 2, pred: 0, c: 0 }).collect();
    let cases = [Case { word: cx, inputs: ins }];
    let built = build(&cases).unwrap();
    let effective = built.effective_inputs(&cases).unwrap();
    for w in 0..2usize {
        let rec = (w * 32 + 5) * 16 + 4;
        let base = u32::from_le_bytes(built.job.input[rec..rec + 4].try_into().unwrap()) as usize * 64;
        let slot = base + 0x44;
        assert_eq!(u32::from_le_bytes(built.job.input[slot..slot + 4].try_into().unwrap()), 1000 + 32 * w as u32);
        assert_eq!(effective[0][w * 32 + 7].b, 1000 + 32 * w as u32);
    }
    // two cases reading c[3][0x40]: the first one's value
    let c = encode(&Inst::new(1, 2, Operand2::Const { bank: 3, offset: 0x40 })).unwrap();
    let mk = |b: u32| Case { word: c, inputs: vec![Inputs { a: 1, b, d: 2, pred: 0, c: 0 }; 32] };
    let cases = [mk(0x3c00_3c00), mk(0x4000_4000)];
    let built = build(&cases).unwrap();
    assert_eq!(built.effective_inputs(&cases).unwrap()[1][0].b, 0x3c00_3c00);
    // records of (destination, predicates): thread 3 of case 1 is record 35
    let out: Vec<u8> = (0..built.job.output_bytes as u32 / 8).flat_map(|v| [v.to_le_bytes(), (v & 0x7f).to_le_bytes()].concat()).collect();
    let r = built.results(&out).unwrap();
    assert_eq!(r[1][3], 32 + 3);
    assert_eq!(built.preds(&out).unwrap()[1][3], 32 + 3);
    assert!(built.results(&out[4..]).is_err());
    assert!(built.preds(&out[8..]).is_err());
}
