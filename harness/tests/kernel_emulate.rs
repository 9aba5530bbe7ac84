//! The patched batch program's data flow, run by the library emulator (`kernel::emu`) over
//! the built input buffer and an output buffer filled with 0xA5 (the driver's canary): at
//! each HMUL2 under test the hook sees the case's word at its manifest offset, in case
//! order, reading exactly the case's effective inputs; every thread runs every case once;
//! the stores write each case's destination to the output word the runner reads, once.
//! With `emu::reference_hook` the results are the reference's. This proves the plan (not
//! the GPU's arithmetic) without a GPU.
//!
//! And the emulator catches planted defects: a register count below a register the program
//! uses, a variable-latency helper's scoreboard not waited on (or not set), a store's
//! sources overwritten before its read scoreboard is waited on, input and output pointers
//! outside their allocations or misaligned, a branch to itself.

use crate::common;

use common::{CANARY, IN, OUT};
use hmul2_harness::isa::{decode, format_hex, Form, Operand2, RZ};
use hmul2_harness::kernel::emu::{self, Fault, Launch, Logged, Program, Regions, Site, Stats};
use hmul2_harness::kernel::helpers::{encode, op_spec, Op, Sched};
use hmul2_harness::kernel::runnable_words;
use hmul2_harness::kernel::{build, elf, patch_cubin, plan, random_inputs, Built, Case, TEMPLATE};
use hmul2_harness::reference::input_set;
use hmul2_harness::rng::Rng;
fn layout() -> &'static hmul2_harness::spec::Layout {
    hmul2_harness::spec::control_layout()
}

fn seed() -> u64 {
    common::seed(0x5eed_0002)
}

/// `count` generated words, then a few of each form (so that every form is there).
fn cases(seed: u64, count: usize, threads: usize) -> Vec<Case> {
    let mut words = runnable_words(seed, None, count).unwrap();
    for f in Form::ALL {
        words.extend(runnable_words(seed, Some(f), 8).unwrap());
    }
    let mut rng = Rng::new(seed);
    words.iter().map(|&w| Case { word: w, inputs: random_inputs(w, threads, &mut rng) }).collect()
}

/// Emulated device memory as the runner sets it up (the input buffer at [`IN`], the output
/// buffer at [`OUT`], 0xA5), logging every write.
fn device(built: &Built) -> Logged {
    Logged { mem: Regions(vec![(IN, built.job.input.clone()), (OUT, vec![CANARY; built.job.output_bytes])]), writes: Vec::new() }
}

fn output(dev: &Logged) -> &[u8] {
    &dev.mem.0[1].1
}

fn launch(built: &Built, params: [u64; 2]) -> Launch {
    Launch { grid: built.job.grid, block: built.job.block, params }
}

fn load(cubin: &[u8]) -> Program {
    Program::load(&elf::image(cubin).unwrap()).unwrap()
}

/// Run `cubin` as the runner would launch `built`'s job.
fn run(built: &Built, cubin: &[u8], params: [u64; 2], hook: &mut dyn FnMut(&Site) -> u32) -> (Result<Stats, Fault>, Logged) {
    let mut dev = device(built);
    let r = emu::run(&load(cubin), &launch(built, params), &mut dev, hook);
    (r, dev)
}

/// What the test's hook writes for case `i`, thread `k`: a value only this case and thread
/// produce, never the canary's word.
fn stand_in(i: usize, t: usize, k: usize) -> u32 {
    let n = i * t + k;
    assert!(n < 1 << 16);
    n as u32 ^ 0x3c3c_0000
}

/// The batch kernel's ops (the digest kernel's are not in this program).
const BATCH_OPS: [Op; 18] = [
    Op::Nop,
    Op::S2rTidX,
    Op::Ldc64,
    Op::Uldc64,
    Op::Iadd3Imm,
    Op::ImadWideU32Imm,
    Op::LdgE,
    Op::LdgE128,
    Op::StgE,
    Op::Mov,
    Op::R2p,
    Op::P2r,
    Op::StgE64,
    Op::R2ur,
    Op::ShfRU64Imm,
    Op::ShfRU32HiImm,
    Op::Exit,
    Op::BraSelf,
];

fn emulate(built: &Built, cases: &[Case]) {
    let t = built.manifest.threads_per_case;
    let image = elf::image(&built.job.cubin).unwrap();
    assert_eq!(image.text, built.program, ".text is the program");
    assert_eq!(image.regcount, built.manifest.regcount);
    assert_eq!(built.job.grid, [1, 1, 1]);
    assert_eq!(built.job.block, [t as u32, 1, 1]);
    // every word is a helper of this kernel or a case's word as generated, at its offset, in order
    let mut iut = Vec::new();
    for (pc, &w) in built.program.iter().enumerate() {
        match emu::classify(w) {
            Some((op, _)) => assert!(BATCH_OPS.contains(&op), "word {pc}: {op:?} is not an op of the test kernel"),
            None => {
                decode(w).unwrap_or_else(|e| panic!("word {pc} is neither a helper nor HMUL2: {e}"));
                iut.push(pc);
            }
        }
    }
    assert_eq!(iut.len(), cases.len(), "one HMUL2 per case");
    for (i, (&pc, c)) in iut.iter().zip(cases).enumerate() {
        assert_eq!(built.manifest.cases[i].code_offset, pc * 16, "case {i}: code offset");
        assert_eq!(built.program[pc], c.word, "case {i} byte for byte");
    }

    // at each HMUL2: the next case of this thread, its word, its effective inputs
    let mut next_case = vec![0usize; t];
    let mut checked = 0usize;
    let effective = built.effective_inputs(cases).unwrap();
    let mut hook = |s: &Site| -> u32 {
        assert_eq!(s.ctaid, 0, "grid 1");
        let k = s.tid as usize;
        let case = next_case[k];
        assert!(case < cases.len(), "thread {k}: more HMUL2 executions than cases");
        assert_eq!(s.word, cases[case].word, "case {case} byte for byte");
        assert_eq!(s.index * 16, built.manifest.cases[case].code_offset, "case {case}: code offset");
        let e = effective[case][k];
        assert_eq!(s.inputs.a, e.a, "case {case} thread {k}: a");
        assert_eq!(s.inputs.d, e.d, "case {case} thread {k}: d");
        assert_eq!(s.inputs.pred, e.pred & 0x7f, "case {case} thread {k}: predicates");
        match s.inst.b {
            // the value is in the encoding; the emulator reads nothing
            Operand2::Imm { .. } => assert_eq!(s.inputs.b, 0, "case {case}: immediate form"),
            b => assert_eq!(s.inputs.b, e.b, "case {case} thread {k}: b ({b:?})"),
        }
        match s.inst.c {
            None => assert_eq!((s.inputs.c, e.c), (0, 0), "case {case}: two sources read no c"),
            Some(Operand2::Imm { .. }) => assert_eq!(s.inputs.c, 0, "case {case}: immediate operand 3"),
            Some(c) => assert_eq!(s.inputs.c, e.c, "case {case} thread {k}: c ({c:?})"),
        }
        next_case[k] += 1;
        checked += 1;
        stand_in(case, t, k)
    };
    let (r, dev) = run(built, &built.job.cubin, [IN, OUT], &mut hook);
    let stats = r.unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(checked, cases.len() * t);
    for (k, &n) in next_case.iter().enumerate() {
        assert_eq!(n, cases.len(), "thread {k}: every case ran once");
    }
    assert_eq!(stats.hmul2, checked as u64);
    assert_eq!(stats.warps, (t / 32) as u64);

    // the stores: one 8-byte write per case and thread, each to its own output record
    dev.one_store_per_word(OUT, cases.len() * t, 8).unwrap_or_else(|e| panic!("the stores: {e}"));
    // and each holds its case's destination, then the predicates (the four write none:
    // the file the record set), where the manifest and the runner read them
    let out = output(&dev);
    let results = built.results(out).unwrap();
    let preds = built.preds(out).unwrap();
    assert_eq!(results.len(), cases.len());
    for (i, (c, got)) in cases.iter().zip(&results).enumerate() {
        let dst = decode(c.word).unwrap().dst;
        let off = built.manifest.cases[i].output_offset;
        assert_eq!(got.len(), t);
        for (k, &r) in got.iter().enumerate() {
            let want = if dst == RZ { 0 } else { stand_in(i, t, k) };
            let o = off + 8 * k;
            assert_eq!(u32::from_le_bytes(out[o..o + 4].try_into().unwrap()), want, "case {i} thread {k}: stored destination");
            assert_eq!(r, want, "case {i} thread {k}: Built::results");
            let p = c.inputs[k].pred & 0x7f;
            assert_eq!(u32::from_le_bytes(out[o + 4..o + 8].try_into().unwrap()), p as u32, "case {i} thread {k}: stored predicates");
            assert_eq!(preds[i][k], p, "case {i} thread {k}: Built::preds");
        }
    }
}

#[test]
fn the_program_feeds_every_case_its_inputs_and_stores_its_destination() {
    let cases = cases(seed(), 600, 64);
    for f in Form::ALL {
        assert!(cases.iter().any(|c| decode(c.word).unwrap().form() == f), "no {f:?} case");
    }
    let built = build(&cases).unwrap();
    emulate(&built, &cases);
}

#[test]
fn with_the_reference_hook_the_results_are_the_references() {
    // every form; inputs drawn half from the reference's specials, half at random
    let seed = seed() ^ 0x7e57;
    let mut rng = Rng::new(seed);
    let cases: Vec<Case> = Form::ALL
        .iter()
        .flat_map(|&f| runnable_words(seed, Some(f), 40).unwrap())
        .enumerate()
        .map(|(i, w)| {
            let inputs = if i % 2 == 0 { input_set(&decode(w).unwrap(), seed ^ i as u64, 64) } else { random_inputs(w, 64, &mut rng) };
            Case { word: w, inputs }
        })
        .collect();
    let built = build(&cases).unwrap();
    let (r, dev) = run(&built, &built.job.cubin, [IN, OUT], &mut emu::reference_hook);
    let stats = r.unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(stats.hmul2, (cases.len() * 64) as u64);
    let results = built.results(output(&dev)).unwrap();
    let (mut defined, mut undefined) = (0usize, 0usize);
    let effective = built.effective_inputs(&cases).unwrap();
    for (i, c) in cases.iter().enumerate() {
        let inst = decode(c.word).unwrap();
        for (k, x) in effective[i].iter().enumerate() {
            match hmul2_harness::reference::eval(&inst, x) {
                Ok(v) => {
                    assert_eq!(results[i][k], v, "case {i} {} thread {k}: {x:?}", format_hex(c.word));
                    defined += 1;
                }
                Err(_) => {
                    let want = if inst.dst == RZ { 0 } else { emu::UNDEFINED_RESULT };
                    assert_eq!(results[i][k], want, "case {i} thread {k}: undefined result");
                    undefined += 1;
                }
            }
        }
    }
    eprintln!("{defined} results compared, {undefined} undefined");
    assert!(defined >= cases.len() * 64 / 2, "too few defined results: {defined}");
}

/// The registers a helper names in its `reg` (`ureg`) fields, pairs and quads in full.
fn named(op: Op, a: &[u32; 4], kind: &str) -> Vec<u32> {
    let wide = |field: &str| -> u32 {
        match (op, field) {
            (Op::LdgE128, "dst") => 4,
            (Op::Ldc64 | Op::Uldc64 | Op::ImadWideU32Imm, "dst" | "udst") | (_, "addr" | "desc") | (Op::ImadWideU32Imm, "c") | (Op::StgE64, "data") => 2,
            _ => 1,
        }
    };
    let rz = if kind == "ureg" { 63 } else { RZ as u32 };
    op_spec(op).fields.iter().zip(a).filter(|(f, _)| f.kind == kind).flat_map(|(f, &v)| (v..v + wide(&f.name)).filter(move |&r| r < rz)).collect()
}

/// The registers (`reg`) or uniform registers (`ureg`) the word at `pc` names.
fn touches(program: &[u128], pc: usize, kind: &str) -> Vec<u32> {
    match emu::classify(program[pc]) {
        Some((op, a)) => named(op, &a, kind),
        None => {
            let i = decode(program[pc]).unwrap();
            let mut v = Vec::new();
            if kind == "reg" {
                v.extend([i.a, i.dst].into_iter().filter(|&r| r != RZ).map(u32::from));
            }
            for o in std::iter::once(i.b).chain(i.c) {
                match (kind, o) {
                    ("reg", Operand2::Reg(r)) => v.extend((r != RZ).then_some(r as u32)),
                    ("ureg", Operand2::Ur(u)) if u != 63 => v.push(u as u32),
                    ("ureg", Operand2::ConstUr { ureg, .. }) => v.extend([ureg as u32, ureg as u32 + 1]),
                    _ => {}
                }
            }
            v
        }
    }
}

fn clear_wait(w: u128) -> u128 {
    layout().wait.set(w, 0).unwrap()
}

/// `w` without its wait on scoreboard `bar`.
fn clear_wait_on(w: u128, bar: u32) -> u128 {
    let l = &layout().wait;
    l.set(w, l.get(w) & !(1 << bar)).unwrap()
}

/// A small batch, every form interleaved, 32 threads, for the planted defects.
fn small() -> (Vec<Case>, Built) {
    let seed = seed() ^ 0xdefec7;
    // every form, a two-source one first (the address tests expect a case's LDG.E.128 first)
    let per: Vec<Vec<u128>> = Form::ALL.iter().map(|&f| runnable_words(seed, Some(f), 5).unwrap()).collect();
    let mut rng = Rng::new(seed);
    let cases: Vec<Case> = (0..5).flat_map(|i| per.iter().map(move |ws| ws[i])).map(|w| Case { word: w, inputs: random_inputs(w, 32, &mut rng) }).collect();
    let built = build(&cases).unwrap();
    (cases, built)
}

fn must_fault(built: &Built, cubin: &[u8], params: [u64; 2], what: &str) -> Fault {
    match run(built, cubin, params, &mut emu::reference_hook).0 {
        Err(f) => f,
        Ok(s) => panic!("{what}: ran to EXIT ({s:?})"),
    }
}

#[test]
fn a_register_count_below_a_register_the_program_uses_is_a_register_fault() {
    let (cases, built) = small();
    let rc = built.manifest.regcount;
    let bank3 = plan(&cases).unwrap().bank3;
    // the same program at its own register count runs
    let same = patch_cubin(TEMPLATE, &built.program, rc, &bank3).unwrap();
    assert_eq!(same, built.job.cubin);
    run(&built, &same, [IN, OUT], &mut emu::reference_hook).0.unwrap();
    // rc - 2 is what the patcher declared before the first GPU session: just the registers
    // its code names, so the code overwrote the hardware's two (a fault on the H200)
    for low in [rc - 1, rc - 2, rc / 2, 1] {
        let cubin = patch_cubin(TEMPLATE, &built.program, low, &bank3).unwrap();
        match must_fault(&built, &cubin, [IN, OUT], &format!("regcount {low}")) {
            f @ Fault::Register { .. } => {
                assert_eq!(f.cuda_code(), 719);
                let Fault::Register { regcount, what, pc } = f else { unreachable!() };
                assert_eq!(regcount, low);
                let r: u32 = what
                    .split_once("uses R")
                    .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                    .unwrap_or_else(|| panic!("{what}"));
                // a register at or above the count, or one of the hardware's two below it
                let usable = low.saturating_sub(hmul2_harness::kernel::HW_RESERVED_GPRS);
                assert!(r >= usable && r < rc, "regcount {low}: {what} at {pc:#x}");
                assert_eq!(r >= low, !what.contains("the hardware's"), "{what}");
            }
            f => panic!("regcount {low} (program needs {rc}): {f}"),
        }
    }
}

#[test]
fn a_variable_latency_result_read_before_its_scoreboard_is_waited_on_is_a_hazard() {
    let (cases, built) = small();
    let bank3 = plan(&cases).unwrap().bank3;
    let p = &built.program;
    let mut planted = 0;
    let mut ldg = 0;
    let mut ldg32 = 0;
    let mut r2ur = 0;
    for (i, &w) in p.iter().enumerate() {
        let Some((op, a)) = emu::classify(w) else { continue };
        if !op.variable_latency() {
            continue;
        }
        // what it writes, and the first instruction after it that names any of it
        let (kind, writes) = match op {
            Op::R2ur => ("ureg", vec![a[0]]),
            Op::Ldc64 => ("reg", vec![a[0], a[0] + 1]),
            Op::LdgE128 => ("reg", (a[0]..a[0] + 4).collect()),
            Op::LdgE => ("reg", vec![a[0]]),
            _ => ("reg", vec![a[0]]),
        };
        let j = (i + 1..p.len()).find(|&j| touches(p, j, kind).iter().any(|r| writes.contains(r))).unwrap_or_else(|| panic!("{op:?} at {i}: no reader"));
        // (1) no wait on its scoreboard on the way to the reader (the word under test's own
        // wait mask included, where it is the reader)
        let bar = layout().wr_bar.get(w);
        let mut bad = p.clone();
        for x in &mut bad[i + 1..=j] {
            *x = clear_wait_on(*x, bar);
        }
        let cubin = patch_cubin(TEMPLATE, &bad, built.manifest.regcount, &bank3).unwrap();
        let what = format!("{op:?} at {:#x}, waits cleared up to {:#x}", i * 16, j * 16);
        match must_fault(&built, &cubin, [IN, OUT], &what) {
            Fault::Hazard { pc, what: w } => assert!(pc == j * 16 && w.contains("before"), "{what}: hazard at {pc:#x}: {w}"),
            f => panic!("{what}: {f}"),
        }
        // (2) no write scoreboard set
        let mut bad = p.clone();
        bad[i] = layout().wr_bar.set(bad[i], 7).unwrap();
        let cubin = patch_cubin(TEMPLATE, &bad, built.manifest.regcount, &bank3).unwrap();
        match must_fault(&built, &cubin, [IN, OUT], &format!("{op:?} at {:#x} without a scoreboard", i * 16)) {
            Fault::Hazard { pc, what } => assert!(pc == i * 16 && what.contains("sets no write scoreboard"), "{pc:#x}: {what}"),
            f => panic!("{op:?} at {:#x} without a scoreboard: {f}", i * 16),
        }
        planted += 1;
        ldg += (op == Op::LdgE128) as usize;
        ldg32 += (op == Op::LdgE) as usize;
        r2ur += (op == Op::R2ur) as usize;
    }
    eprintln!("{planted} scoreboard defects planted, {ldg} of them after LDG.E.128, {ldg32} after LDG.E, {r2ur} after R2UR");
    assert_eq!(ldg, cases.len(), "every case's LDG.E.128");
    // operand 3 is loaded where it reads data: a register, UR or cx[] (not RZ, URZ, c[] or immediates)
    let reads_c = |c: &Case| match decode(c.word).unwrap().c {
        Some(Operand2::Reg(r)) => r != RZ,
        Some(Operand2::Ur(u)) => u != 63,
        Some(Operand2::ConstUr { .. }) => true,
        _ => false,
    };
    assert_eq!(ldg32, cases.iter().filter(|c| reads_c(c)).count(), "every three-source case's LDG.E");
    assert_eq!(ldg32, built.manifest.cases.iter().filter(|e| e.c_staging.is_some()).count(), "the manifest names each staging register");
    assert!(ldg32 > 0, "no three-source case");
    assert_eq!(
        r2ur,
        cases
            .iter()
            .flat_map(|c| {
                let i = decode(c.word).unwrap();
                std::iter::once(i.b).chain(i.c)
            })
            .map(|o| match o {
                Operand2::Ur(u) => (u != 63) as usize,
                Operand2::ConstUr { .. } => 2,
                _ => 0,
            })
            .sum::<usize>(),
        "every R2UR"
    );
    assert!(planted >= 5 * cases.len(), "too few defects planted: {planted}");
}

#[test]
fn a_stores_source_overwritten_before_its_read_scoreboard_is_waited_on_is_a_hazard() {
    let (cases, built) = small();
    let bank3 = plan(&cases).unwrap().bank3;
    let p = &built.program;
    let stores: Vec<usize> = (0..p.len()).filter(|&i| matches!(emu::classify(p[i]), Some((Op::StgE64, _)))).collect();
    assert_eq!(stores.len(), cases.len());
    let mut planted = 0;
    for (n, &s) in stores.iter().enumerate().take(cases.len() - 1) {
        let m = &built.manifest.cases;
        if m[n].staging != m[n + 1].staging {
            continue;
        }
        // the next case's S2R into the store's data pair (destination and predicates), then
        // LDC.64 into its address pair
        let (Some((Op::S2rTidX, s2r)), Some((Op::Ldc64, ldc))) = (emu::classify(p[s + 1]), emu::classify(p[s + 2])) else {
            panic!("after the store at {:#x}", s * 16)
        };
        assert_eq!((s2r[0], ldc[0]), (m[n].staging as u32 + 2, m[n].staging as u32));
        let mut bad = p.clone();
        bad[s + 1] = clear_wait(bad[s + 1]);
        let cubin = patch_cubin(TEMPLATE, &bad, built.manifest.regcount, &bank3).unwrap();
        match must_fault(&built, &cubin, [IN, OUT], &format!("store at {:#x}", s * 16)) {
            Fault::Hazard { pc, what } => assert!(pc == (s + 1) * 16 && what.contains("store"), "{pc:#x}: {what}"),
            f => panic!("store at {:#x}: {f}", s * 16),
        }
        planted += 1;
    }
    assert!(planted > 0, "no two consecutive cases share a staging quad");
}

#[test]
fn pointers_outside_the_buffers_are_illegal_addresses() {
    let (_, built) = small();
    let p = &built.program;
    let first = |op: Op| (0..p.len()).find(|&i| matches!(emu::classify(p[i]), Some((o, _)) if o == op)).unwrap() * 16;
    let (ldg, stg) = (first(Op::LdgE128), first(Op::StgE64));
    let len = built.job.input.len() as u64;
    for (params, pc, addr) in [
        ([IN - 16, OUT], ldg, IN - 16),
        ([IN + len, OUT], ldg, IN + len),
        ([0x10_0000, OUT], ldg, 0x10_0000),
        ([IN, OUT + 4 * built.job.output_bytes as u64], stg, OUT + 4 * built.job.output_bytes as u64),
        ([IN, 0], stg, 0),
    ] {
        match must_fault(&built, &built.job.cubin, params, &format!("{params:x?}")) {
            f @ Fault::IllegalAddress { .. } => {
                assert_eq!(f, Fault::IllegalAddress { pc, addr, len: if pc == ldg { 16 } else { 8 } }, "{params:x?}");
                assert_eq!(f.cuda_code(), 700);
            }
            f => panic!("{params:x?}: {f}"),
        }
    }
    match must_fault(&built, &built.job.cubin, [IN + 4, OUT], "misaligned input") {
        Fault::Misaligned { pc, addr, len } => assert_eq!((pc, addr, len), (ldg, IN + 4, 16)),
        f => panic!("misaligned input: {f}"),
    }
}

#[test]
fn a_branch_to_itself_is_a_hang_reported_at_once() {
    let (cases, built) = small();
    let bank3 = plan(&cases).unwrap().bank3;
    let nop = built.program.iter().position(|&w| matches!(emu::classify(w), Some((Op::Nop, _)))).unwrap();
    let mut bad = built.program.clone();
    bad[nop] = encode(Op::BraSelf, &[], Sched::safe(Op::BraSelf)).unwrap();
    let cubin = patch_cubin(TEMPLATE, &bad, built.manifest.regcount, &bank3).unwrap();
    match must_fault(&built, &cubin, [IN, OUT], "BRA_SELF") {
        f @ Fault::Timeout { .. } => {
            assert_eq!(f.cuda_code(), 702);
            let Fault::Timeout { pc, steps } = f else { unreachable!() };
            assert_eq!(pc, nop * 16);
            assert_eq!(steps, nop as u64 + 1, "reported when first reached, not after the step limit");
        }
        f => panic!("BRA_SELF: {f}"),
    }
}

/// A `c[0x3]` read at a negative offset (which the patcher never emits, but a cubin can hold)
/// is refused as unsupported, named as written, and never panics the emulator.
#[test]
fn a_negative_constant_offset_is_refused_not_a_panic() {
    let (cases, built) = small();
    let bank3 = plan(&cases).unwrap().bank3;
    let at = built.program.iter().position(|&w| matches!(decode(w).map(|i| i.b), Ok(Operand2::Const { .. }))).expect("a c[] case in every small batch");
    let mut inst = decode(built.program[at]).unwrap();
    inst.b = Operand2::Const { bank: 3, offset: -4 };
    let mut bad = built.program.clone();
    bad[at] = hmul2_harness::isa::encode(&inst).unwrap();
    let cubin = patch_cubin(TEMPLATE, &bad, built.manifest.regcount, &bank3).unwrap();
    match must_fault(&built, &cubin, [IN, OUT], "c[0x3][-0x4]") {
        Fault::Unsupported { pc, what } => {
            assert_eq!(pc, at * 16);
            assert!(what.contains("c[0x3][-0x4] outside the bank"), "{what}");
        }
        f => panic!("c[0x3][-0x4]: {f}"),
    }
}

/// The predicates a word leaves come back in its output record: a hook that writes a file of
/// its own per case and thread (as an instruction writing predicates would, through
/// `emu::run_effects`) finds it in [`Built::preds`], next to the destination; the next case
/// starts from its own record's predicates, not from what the word before left.
#[test]
fn the_predicates_a_word_leaves_are_read_back_with_its_destination() {
    let (cases, built) = small();
    let t = built.manifest.threads_per_case;
    let mut next_case = vec![0usize; t];
    let leaves = |i: usize, k: usize| ((i * 7 + k * 3) as u8 ^ 0x55) & 0x7f;
    let mut hook = |s: &Site| {
        let k = s.tid as usize;
        let i = next_case[k];
        next_case[k] += 1;
        assert_eq!(s.inputs.pred, cases[i].inputs[k].pred & 0x7f, "case {i} thread {k}: the record's predicates before the word");
        emu::Written { dst: stand_in(i, t, k), preds: Some(leaves(i, k)) }
    };
    let mut dev = device(&built);
    emu::run_effects(&load(&built.job.cubin), &launch(&built, [IN, OUT]), &mut dev, &mut hook).unwrap_or_else(|f| panic!("{f}"));
    let (results, preds) = (built.results(output(&dev)).unwrap(), built.preds(output(&dev)).unwrap());
    for (i, c) in cases.iter().enumerate() {
        let dst = decode(c.word).unwrap().dst;
        for k in 0..t {
            assert_eq!(preds[i][k], leaves(i, k), "case {i} thread {k}: predicates after");
            assert_eq!(results[i][k], if dst == RZ { 0 } else { stand_in(i, t, k) }, "case {i} thread {k}: destination");
        }
    }
}
