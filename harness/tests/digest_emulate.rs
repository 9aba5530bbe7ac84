//! Exhaustive mode's digest kernel, checked without a GPU:
//! - nvdisasm prints the whole patched `.text` as planned, the word under test unchanged,
//!   and the loop's branch lands on the loop's first instruction;
//! - the library emulator (`kernel::emu`) runs every thread of a small request over an
//!   output buffer filled with 0xA5 (the driver's canary); its hook checks at each HMUL2
//!   that it reads exactly the effective inputs of its k, counts the iterations of each
//!   thread, and computes the word by `reference::eval`; the per-thread partials the
//!   kernel stores (one store each) must add up to the reference digests the runner
//!   computes (`exhaustive::reference_digests` through `RealBackend`).
//!
//! Fails when nvdisasm is missing.

use crate::common;

use common::{CANARY, IN, OUT};
use hmul2_harness::inputs::Inputs;
use hmul2_harness::isa::{decode, encode, Form, Inst, Operand2, RZ};
use hmul2_harness::kernel::digest::{build, digest_inputs, DigestBuilt, DigestError};
use hmul2_harness::kernel::elf;
use hmul2_harness::kernel::emu::{self, Launch, Logged, Program, Regions, Site};
use hmul2_harness::kernel::helpers::Op;
use hmul2_harness::kernel::runnable_words;
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::run::exhaustive::{reference_digests, sum_partials, DigestRequest, THREADS};
use hmul2_harness::run::pipeline::{Backend, RealBackend};
use std::collections::HashMap;

fn seed() -> u64 {
    common::seed(0x5eed_0003)
}

/// The digest kernel's ops (the batch kernel's loads and R2UR are not in this program).
const DIGEST_OPS: [Op; 19] = [
    Op::Nop,
    Op::S2rTidX,
    Op::S2rCtaidX,
    Op::Iadd3Imm,
    Op::R2p,
    Op::Mov,
    Op::ImadImm,
    Op::ImadIadd,
    Op::ImadWideU32Imm,
    Op::PrmtImm,
    Op::LopXor,
    Op::ShfRU64Imm,
    Op::ShfRU32HiImm,
    Op::IsetpNeU32,
    Op::BraBack,
    Op::Ldc64,
    Op::Uldc64,
    Op::StgE64,
    // a uniform-register operand 3
    Op::R2ur,
];

/// Run every thread of the job; the per-thread partials, as the output buffer the runner reads.
fn emulate(b: &DigestBuilt, req: &DigestRequest) -> Vec<u8> {
    let image = elf::image(&b.job.cubin).unwrap();
    assert_eq!(image.text, b.program, ".text is the program");
    assert_eq!(image.regcount, b.regcount);
    assert_eq!(b.job.grid, [req.chunks, 1, 1]);
    assert_eq!(b.job.block, [THREADS, 1, 1]);
    // the word under test once, at its place; helpers of this kernel; only the output pointer read
    for (pc, &w) in b.program.iter().enumerate() {
        match emu::classify(w) {
            _ if pc == b.iut => assert_eq!(w, req.word, "the word under test, unchanged"),
            Some((Op::Exit | Op::BraSelf, _)) => {}
            Some((op, a)) => {
                assert!(DIGEST_OPS.contains(&op), "word {pc}: {op:?} in a digest kernel");
                if op == Op::Ldc64 {
                    assert_eq!((a[1], a[2]), (0x218, 0), "word {pc}: only the output pointer is read");
                }
            }
            None => panic!("word {pc}: {} is neither a helper nor the word under test", hmul2_harness::isa::format_hex(w)),
        }
    }
    let inst = decode(req.word).unwrap();
    let reg_b = matches!(inst.b, Operand2::Reg(_));
    let imm_c = matches!(inst.c, Some(Operand2::Imm { .. }));
    let iterations = 1u64 << (req.chunk_bits - 8);
    let n = req.chunks as usize * THREADS as usize;
    // at each HMUL2: the thread's next k, its inputs (P0..P6 true)
    let mut runs = vec![0u64; n];
    let mut hook = |s: &Site| -> u32 {
        let (ctaid, tid) = (s.ctaid, s.tid);
        assert_eq!((s.index, s.word), (b.iut, req.word), "block {ctaid} thread {tid}: the word under test");
        let r = &mut runs[ctaid as usize * THREADS as usize + tid as usize];
        let k = ((req.first_chunk + ctaid as u64) << req.chunk_bits) + tid as u64 + THREADS as u64 * *r;
        *r += 1;
        let want = digest_inputs(req.word, &[req.inputs(k)]).unwrap()[0];
        let got = s.inputs;
        // immediate forms: b (or c) is in the encoding and the emulator reads nothing
        let fix = |x: Inputs, b: u32, c: u32| Inputs { b: if reg_b { x.b } else { b }, c: if imm_c { c } else { x.c }, ..x };
        assert_eq!(fix(got, want.b, want.c), want, "block {ctaid} thread {tid} k {k}: the word's inputs");
        if !reg_b {
            assert_eq!(got.b, 0, "immediate form");
        }
        if imm_c {
            assert_eq!(got.c, 0, "immediate operand 3");
        }
        // the reference must ignore inputs.b (c) there: give it a value the kernel never
        // generated (the digests must still match)
        let x = fix(got, !want.b, !want.c);
        hmul2_harness::reference::eval(&inst, &x).expect("test words are defined everywhere")
    };
    let launch = Launch { grid: b.job.grid, block: b.job.block, params: [IN, OUT] };
    // the request at IN, the output buffer at OUT filled with 0xA5, every write logged
    let mut dev = Logged { mem: Regions(vec![(IN, b.job.input.clone()), (OUT, vec![CANARY; b.job.output_bytes])]), writes: Vec::new() };
    let stats = emu::run(&Program::load(&image).unwrap(), &launch, &mut dev, &mut hook).unwrap_or_else(|f| panic!("{f}"));
    for (i, &r) in runs.iter().enumerate() {
        assert_eq!(r, iterations, "block {} thread {}: iterations", i / THREADS as usize, i % THREADS as usize);
    }
    assert_eq!(stats.hmul2, n as u64 * iterations);
    assert_eq!(stats.warps, n as u64 / 32);
    // one 8-byte store per thread, at output + 8 (256 c + t)
    dev.one_store_per_word(OUT, n, 8).unwrap_or_else(|e| panic!("the stores: {e}"));
    assert_eq!(b.job.output_bytes, 8 * n);
    dev.mem.0.swap_remove(1).1
}

/// nvdisasm's listing of the kernel: instruction texts by offset, and branch labels' offsets.
fn listing(cubin: &[u8]) -> (Vec<String>, HashMap<String, usize>) {
    let nv = find_tool("nvdisasm").expect("nvdisasm is required (bash ci/install-tools.sh)");
    // unique per call: the tests of this file run in parallel
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!("hmul2-digest-test-{}-{n}.cubin", std::process::id()));
    std::fs::write(&p, cubin).unwrap();
    let out = std::process::Command::new(nv).arg("-c").arg(&p).output().expect("run nvdisasm");
    let _ = std::fs::remove_file(&p);
    assert!(out.status.success(), "nvdisasm failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut texts = Vec::new();
    let mut labels = HashMap::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let l = l.trim();
        if let Some(name) = l.strip_suffix(':').filter(|n| n.starts_with(".L_x_")) {
            labels.insert(name.to_string(), texts.len());
        } else if let Some(rest) = l.strip_prefix("/*") {
            if let Some(end) = rest.find("*/") {
                if rest[..end].chars().all(|c| c.is_ascii_hexdigit()) {
                    texts.push(rest[end + 2..].trim().trim_end_matches(';').trim().to_string());
                }
            }
        }
    }
    (texts, labels)
}

fn check_listing(b: &DigestBuilt, label: &str) {
    let (got, labels) = listing(&b.job.cubin);
    assert_eq!(got.len(), b.texts.len(), "{label}: instruction count");
    for (i, (g, want)) in got.iter().zip(&b.texts).enumerate() {
        let g_cut = g.find("BRA").map(|j| &g[..j + 3]).unwrap_or(g);
        assert_eq!(g_cut, want, "{label}: instruction {i} at {:#x}", i * 16);
    }
    assert_eq!(got[b.iut], b.texts[b.iut], "{label}: the word under test, unchanged");
    // the loop's branch lands on the loop's first instruction
    let bra = &got[b.branch];
    let target = bra.split("`(").nth(1).and_then(|t| t.strip_suffix(')')).unwrap_or_else(|| panic!("{label}: branch text {bra:?}"));
    assert_eq!(labels.get(target), Some(&b.loop_head), "{label}: {bra} at instruction {}", b.branch);
}

/// Whether exhaustive mode sweeps `op` (HMUL2, HADD2, HFMA2, HFMA2.MMA).
fn swept(op: hmul2_harness::isa::Op) -> bool {
    use hmul2_harness::reference::{family_of, Family};
    matches!(family_of(op), Some(Family::Mul | Family::Add | Family::Fma { .. }))
}

/// Words of each supported form, including RZ operands, coinciding registers and
/// guards on P0 (the loop predicate moves to P1) and negated guards.
fn words(seed: u64) -> Vec<u128> {
    let mut out = Vec::new();
    // two sources here; three-source words (operand 3 fixed by the request) in `words3`;
    // the instructions exhaustive mode sweeps (no comparison: `DigestError::NotSwept`)
    let two: Vec<hmul2_harness::isa::Op> = hmul2_harness::reference::IMPLEMENTED.iter().copied().filter(|o| o.spec().sources == 2 && swept(*o)).collect();
    for form in [Form::Rrr, Form::Imm] {
        let base = hmul2_harness::kernel::runnable_words_of(seed, &two, Some(form), 11).unwrap();
        out.extend(&base[..6]);
        for (j, &w) in base[6..].iter().enumerate() {
            let mut i: Inst = decode(w).unwrap();
            match j {
                0 => i.a = RZ,
                1 => i.dst = RZ,
                2 => i.dst = i.a,
                3 => {
                    i.pred.index = 0;
                    i.pred.negated = false;
                    i.a = 252; // the highest a kernel may name (R253, R254 are the hardware's)
                }
                _ => {
                    i.pred.index = 1;
                    i.pred.negated = true;
                }
            }
            if form == Form::Rrr {
                match j {
                    0 => i.b = Operand2::Reg(RZ),
                    1 => i.b = Operand2::Reg(i.a),
                    2 => i.b = Operand2::Reg(i.dst),
                    _ => {}
                }
            }
            if let Ok(v) = encode(&i) {
                if decode(v).is_ok() && hmul2_harness::kernel::runnable(v).is_ok() {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// Three-source words the sweep takes (operand 3 a register, immediates, a UR or a bank-3
/// word), with a defined result for every input, and operand 3 coinciding with the
/// destination, with operand 1, and RZ.
fn words3(seed: u64) -> Vec<u128> {
    let three: Vec<hmul2_harness::isa::Op> = hmul2_harness::reference::IMPLEMENTED.iter().copied().filter(|o| o.spec().sources == 3).collect();
    let defined = |w: &u128| hmul2_harness::reference::eval(&decode(*w).unwrap(), &Inputs::default()).is_ok();
    let mut out = Vec::new();
    for form in [Form::Rrrr, Form::Imm, Form::ImmC, Form::UrC, Form::ConstC] {
        let base: Vec<u128> = hmul2_harness::kernel::runnable_words_of(seed, &three, Some(form), 200).unwrap().into_iter().filter(defined).take(5).collect();
        assert_eq!(base.len(), 5, "{form:?}: five defined words in 200");
        out.extend(&base[..2]);
        for (j, &w) in base[2..].iter().enumerate() {
            let mut i: Inst = decode(w).unwrap();
            if matches!(i.c, Some(Operand2::Reg(_))) {
                i.c = Some(Operand2::Reg([i.dst, i.a, RZ][j]));
            } else {
                i.b = Operand2::Reg([i.dst, i.a, RZ][j]);
            }
            if let Ok(v) = encode(&i) {
                if decode(v).is_ok() && hmul2_harness::kernel::runnable(v).is_ok() {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// Operand 3's values for the three-source sweeps: zeros, ones of both signs, infinities,
/// a NaN, subnormals, the largest finite values (FP16 and BF16 patterns alike).
const C_VALUES: [u32; 8] = [0x0000_8000, 0x3c00_bc00, 0x7c00_fc00, 0x7e00_0001, 0x0001_8001, 0x7bff_fbff, 0x3f80_bf80, 0x7f7f_ff7f];

#[test]
fn digest_kernel_disassembles_and_its_partials_add_up_to_the_reference_digests() {
    let seed = seed();
    let two = words(seed);
    let n_two = two.len();
    let ws: Vec<u128> = two.into_iter().chain(words3(seed)).collect();
    // the variants really are there
    let insts: Vec<Inst> = ws.iter().map(|&w| decode(w).unwrap()).collect();
    for f in [Form::Rrrr, Form::ImmC, Form::UrC, Form::ConstC] {
        assert!(insts.iter().any(|i| i.form() == f), "no {f:?} word");
    }
    assert!(insts.iter().any(|i| i.c == Some(Operand2::Reg(i.dst)) && i.dst != RZ) && insts.iter().any(|i| i.c == Some(Operand2::Reg(RZ))));
    let has = |f: &dyn Fn(&Inst) -> bool| insts.iter().any(f);
    assert!(has(&|i| i.form() == Form::Imm) && has(&|i| i.form() == Form::Rrr));
    assert!(has(&|i| i.a == RZ) && has(&|i| i.dst == RZ) && has(&|i| i.b == Operand2::Reg(RZ)));
    assert!(has(&|i| i.dst == i.a && i.a != RZ) && has(&|i| i.b == Operand2::Reg(i.a) && i.a != RZ));
    assert!(has(&|i| i.pred.index == 0 && !i.pred.negated) && has(&|i| i.pred.negated));
    // nvdisasm reading each word's cubin is most of this test's time (~0.6 s a call): every
    // word at the full level, every 4th at the quick one (every word is still emulated)
    let listed = hmul2_harness::testlevel::rows("digest cubins listed by nvdisasm", ws.len() as u32, ws.len().div_ceil(4) as u32);
    // the words are independent: two threads take them in turn, the counts are summed after
    let next = std::sync::atomic::AtomicUsize::new(0);
    let tally = std::sync::Mutex::new((0usize, 0usize, 0usize, Vec::<(usize, String)>::new()));
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&w) = ws.get(n) else { break };
                let (r, f, s) = digest_word(n, w, n_two, listed.contains(&(n as u32)));
                let mut t = tally.lock().unwrap();
                t.0 += r as usize;
                t.1 += (r && n >= n_two) as usize;
                t.2 += f as usize;
                t.3.extend(s.map(|l| (n, l)));
            });
        }
    });
    let (ran, ran3, fused, mut skipped) = tally.into_inner().unwrap();
    skipped.sort();
    let skipped: Vec<String> = skipped.into_iter().map(|(_, l)| l).collect();
    eprintln!("emulated {ran} words ({ran3} of three sources, {fused} by the fused sweep too); skipped (some result undefined): {skipped:?}");
    assert!(fused >= 8, "too few words took the fused sweep: {fused}");
    assert!(ran >= 16, "too few words emulated: {ran}");
    assert!(ran3 >= 12, "too few three-source words emulated: {ran3}");
}

/// One word of the test above: (emulated, taken by the fused sweep, skipped label).
fn digest_word(n: usize, w: u128, n_two: usize, list: bool) -> (bool, bool, Option<String>) {
    let mut fused = false;
    {
        let c = if n < n_two { 0 } else { C_VALUES[n % C_VALUES.len()] };
        let req = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 1 + (n as u64 * 37) % 250, chunks: 3, c };
        let b = build(&req).unwrap_or_else(|e| panic!("{}: {e}", hmul2_harness::isa::format_hex(w)));
        let label = format!("word {n} {}", hmul2_harness::isa::format_hex(w));
        if list {
            check_listing(&b, &label);
        }
        // the runner's reference digests: effective inputs, eval_batch
        let inst = decode(w).unwrap();
        let backend = RealBackend::default();
        let expect = |xs: &[Inputs], out: &mut [u32]| {
            let eff = backend.digest_inputs(w, xs)?;
            backend.expect_batch(&inst, &eff, out)
        };
        let refs = reference_digests(&req, &expect);
        // the runner's fast path, where it applies, is the same digests
        if let Some(f) = backend.fused_digests(&req) {
            assert_eq!(f, refs, "{label}: fused sweep vs reference digests");
            fused = true;
        }
        if refs.iter().any(Option::is_none) {
            return (false, fused, Some(label));
        }
        let out = emulate(&b, &req);
        let dev = sum_partials(&out, req.chunks).unwrap();
        let refs: Vec<u64> = refs.into_iter().flatten().collect();
        assert_eq!(dev, refs, "{label}: device partials vs reference digests");
        // and the protocol's own definition, on the inputs the kernel reads
        let plain = req.compute(|w, x| hmul2_harness::reference::eval(&decode(w).unwrap(), &digest_inputs(w, &[*x]).unwrap()[0]).unwrap());
        assert_eq!(dev, plain, "{label}: DigestRequest::compute");
        // the simulated executor's format is the same
        let sim: Vec<u8> = req
            .partials(|w, x| hmul2_harness::reference::eval(&decode(w).unwrap(), &digest_inputs(w, &[*x]).unwrap()[0]).unwrap())
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(sim, out, "{label}: DigestRequest::partials is the kernel's output");
    }
    (true, fused, None)
}

#[test]
fn digest_jobs_refuse_what_they_cannot_sweep() {
    let seed = seed();
    let two: Vec<hmul2_harness::isa::Op> = hmul2_harness::reference::IMPLEMENTED.iter().copied().filter(|o| o.spec().sources == 2 && swept(*o)).collect();
    for form in [Form::Ur, Form::Const, Form::ConstUr] {
        let w = hmul2_harness::kernel::runnable_words_of(seed, &two, Some(form), 1).unwrap()[0];
        let req = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 0, chunks: 1, c: 0 };
        match build(&req) {
            Err(e @ DigestError::Form { .. }) => {
                let m = e.to_string();
                assert!(m.contains("cannot be swept") && !m.contains('\n'), "{m}");
                assert!(RealBackend::default().digest_job(&req).unwrap_err().contains("cannot be swept"));
            }
            other => panic!("{form:?}: {:?}", other.map(|b| b.program.len())),
        }
    }
    // the comparisons and min/max: no sweep (HSETP2 also writes predicates, which the
    // digest does not fold), each refused in one line
    use hmul2_harness::isa::Op as IsaOp;
    for (op, why) in [(IsaOp::Hset2, "has no sweep"), (IsaOp::Hsetp2, "writes predicates"), (IsaOp::Hmnmx2, "has no sweep")] {
        let w = hmul2_harness::kernel::runnable_words_of(seed, &[op], Some(Form::Rrr), 1).unwrap()[0];
        let req = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 0, chunks: 1, c: 0 };
        let e = build(&req).err().unwrap_or_else(|| panic!("{op}: built")).to_string();
        assert!(e.contains(why) && !e.contains('\n'), "{op}: {e}");
        assert!(RealBackend::default().digest_job(&req).unwrap_err().contains(why), "{op}");
    }
    let w = hmul2_harness::kernel::runnable_words_of(seed, &[IsaOp::Hmul2, IsaOp::Hadd2], Some(Form::Rrr), 1).unwrap()[0];
    let small = DigestRequest { word: w, space_bits: 20, chunk_bits: 7, first_chunk: 0, chunks: 1, c: 0 };
    assert!(matches!(build(&small), Err(DigestError::Request(_))));
    let past = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 255, chunks: 2, c: 0 };
    assert!(matches!(build(&past), Err(DigestError::Request(_))));
    // a three-source word whose operand 3 is cx[] (it would need a bindless handle), and
    // one whose operand 2 is not per thread
    for form in [Form::ConstUrC, Form::Ur] {
        let w = runnable_words(seed, Some(form), 40).unwrap().into_iter().find(|&w| decode(w).unwrap().c.is_some()).expect("a three-source word");
        let req = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 0, chunks: 1, c: 0x3c00_3c00 };
        match build(&req) {
            Err(e @ DigestError::Operand3Bindless) if form == Form::ConstUrC => assert!(e.to_string().contains("bindless"), "{e}"),
            Err(e @ DigestError::Form { .. }) if form == Form::Ur => assert!(e.to_string().contains("cannot be swept"), "{e}"),
            other => panic!("{form:?}: {:?}", other.map(|b| b.program.len())),
        }
    }
    let illegal = DigestRequest { word: 0, space_bits: 20, chunk_bits: 12, first_chunk: 0, chunks: 1, c: 0 };
    assert!(matches!(build(&illegal), Err(DigestError::NotRunnable(_))));
}

/// The prologue's helpers (before the loop), as (op, args).
fn prologue(b: &DigestBuilt) -> Vec<(Op, [u32; 4])> {
    b.program[..b.loop_head].iter().map(|&w| emu::classify(w).unwrap_or_else(|| panic!("prologue word {}", hmul2_harness::isa::format_hex(w)))).collect()
}

/// A sweep of all 2^32 pairs as one chunk (too long to emulate): one block of THREADS
/// threads, k starting at the thread id (no block term), 2^32 / THREADS iterations each;
/// and the last 2^20 chunk of the space: k = block * 2^20 + thread + its base, 2^12 iterations.
#[test]
fn a_full_chunk_of_2_pow_32_is_one_block() {
    let w = hmul2_harness::kernel::runnable_words_of(seed(), &[hmul2_harness::isa::Op::Hmul2, hmul2_harness::isa::Op::Hadd2], Some(Form::Rrr), 1).unwrap()[0];
    let req = DigestRequest { word: w, space_bits: 32, chunk_bits: 32, first_chunk: 0, chunks: 1, c: 0 };
    let b = build(&req).unwrap();
    check_listing(&b, "2^32");
    assert_eq!((b.job.grid, b.job.block), ([1, 1, 1], [THREADS, 1, 1]));
    assert_eq!(b.job.output_bytes, 8 * THREADS as usize, "one partial per thread");
    let p = prologue(&b);
    let tid = p.iter().find(|(op, _)| *op == Op::S2rTidX).expect("S2R tid").1[0];
    assert!(p.iter().all(|(op, _)| *op != Op::ImadImm), "no block term in k: {p:?}");
    assert!(p.iter().any(|(op, a)| *op == Op::Mov && a[1] == tid), "k = thread id: {p:?}");
    assert!(p.iter().any(|(op, a)| *op == Op::Iadd3Imm && a[1] == RZ as u32 && a[2] == 1 << 24), "2^24 iterations per thread: {p:?}");

    let req = DigestRequest { word: w, space_bits: 32, chunk_bits: 20, first_chunk: 4095, chunks: 1, c: 0 };
    let b = build(&req).unwrap();
    check_listing(&b, "last chunk");
    assert_eq!(b.job.grid, [1, 1, 1]);
    let p = prologue(&b);
    let ctaid = p.iter().find(|(op, _)| *op == Op::S2rCtaidX).expect("S2R ctaid").1[0];
    let k = p
        .iter()
        .find(|(op, a)| *op == Op::ImadImm && a[1] == ctaid && a[2] == 1 << 20)
        .map(|(_, a)| a[0])
        .unwrap_or_else(|| panic!("k = block * 2^20 + thread: {p:?}"));
    assert!(p.iter().any(|(op, a)| *op == Op::Iadd3Imm && a[0] == k && a[1] == k && a[2] == 4095 << 20), "k += the chunk's base: {p:?}");
    assert!(p.iter().any(|(op, a)| *op == Op::Iadd3Imm && a[1] == RZ as u32 && a[2] == 1 << 12), "2^12 iterations per thread: {p:?}");
}
