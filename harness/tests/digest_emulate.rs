//! Exhaustive mode's digest kernel, checked without a GPU:
//! - nvdisasm prints the whole patched `.text` as planned, the word under test unchanged,
//!   and the loop's branch lands on the loop's first instruction;
//! - a CPU emulator runs every thread of a small request (every word of `.text` decoded
//!   back through the helper spec, the HMUL2 computed by `reference::eval` on the registers
//!   and predicates it reads), checks at each HMUL2 that it reads exactly the effective
//!   inputs of its k, and the per-thread partials it stores must add up to the reference
//!   digests the runner computes (`exhaustive::reference_digests` through `RealBackend`).
//!
//! Fails when nvdisasm is missing.

use hmul2_harness::inputs::Inputs;
use hmul2_harness::isa::{decode, encode, Form, Hmul2, Operand2, PT, RZ};
use hmul2_harness::kernel::command::runnable_words;
use hmul2_harness::kernel::digest::{build, digest_inputs, DigestBuilt, DigestError};
use hmul2_harness::kernel::helpers::{op_spec, Op};
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::run::exhaustive::{inputs_for, reference_digests, sum_partials, DigestRequest, THREADS};
use hmul2_harness::run::pipeline::{Backend, RealBackend};
use hmul2_harness::spec::layout;
use object::{Object, ObjectSection};
use std::collections::HashMap;

const OUT: u64 = 0x7f56_7800_0000;

fn seed() -> u64 {
    let s = std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_0003);
    eprintln!("seed: {s}");
    s
}

fn text(cubin: &[u8]) -> Vec<u128> {
    let f = object::File::parse(cubin).unwrap();
    let d = f.section_by_name(".text.hmul2_kernel").unwrap().data().unwrap().to_vec();
    d.chunks(16).map(|c| u128::from_le_bytes(c.try_into().unwrap())).collect()
}

/// A helper word as (op, field values), fields in the JSON's order.
fn classify(word: u128) -> Option<(Op, Vec<u32>)> {
    let l = layout();
    let ctrl = l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask;
    Op::ALL.into_iter().find_map(|op| {
        let s = op_spec(op);
        let fields = s.fields.iter().fold(0u128, |m, f| m | f.mask);
        (word & !(ctrl | fields) == s.fixed).then(|| (op, s.fields.iter().map(|f| f.get(word) * f.scale).collect()))
    })
}

/// Run thread `tid` of block `ctaid`; returns its stores (address, value).
fn run_thread(words: &[u128], word: u128, req: &DigestRequest, ctaid: u32, tid: u32) -> Vec<(u64, u64)> {
    let inst = decode(word).unwrap();
    let decoded: Vec<Option<(Op, Vec<u32>)>> = words.iter().map(|&w| if w == word { None } else { classify(w) }).collect();
    let mut g = [0u32; 256];
    let mut pr = 0u8; // P0..P6; PT always true
    let mut ur = [0u32; 64];
    let mut stores = Vec::new();
    let mut k_expected = ((req.first_chunk + ctaid as u64) << req.chunk_bits) + tid as u64;
    let mut runs = 0u64;
    let mut pc = 0usize;
    for _ in 0..50_000_000u64 {
        let rd = |g: &[u32; 256], r: u32| if r == RZ as u32 { 0 } else { g[r as usize] };
        let pair = |g: &[u32; 256], r: u32| if r == RZ as u32 { 0 } else { g[r as usize] as u64 | (g[r as usize + 1] as u64) << 32 };
        let set64 = |g: &mut [u32; 256], r: u32, v: u64| {
            g[r as usize] = v as u32;
            g[r as usize + 1] = (v >> 32) as u32;
        };
        let Some((op, a)) = &decoded[pc] else {
            // the word under test: inputs of this k, P0..P6 true
            let want = digest_inputs(word, &[inputs_for(k_expected)]).unwrap()[0];
            let got = Inputs {
                a: rd(&g, inst.a as u32),
                b: match inst.b {
                    Operand2::Reg(r) => rd(&g, r as u32),
                    // from the encoding, not a register: the reference must ignore inputs.b, so
                    // give it a value the kernel never generated (the digests must still match)
                    Operand2::Imm { .. } => !want.b,
                    other => panic!("form {other:?} in a digest kernel"),
                },
                d: rd(&g, inst.dst as u32),
                pred: pr,
            };
            let reg_b = matches!(inst.b, Operand2::Reg(_));
            assert_eq!(Inputs { b: if reg_b { got.b } else { want.b }, ..got }, want, "block {ctaid} thread {tid} k {k_expected}: the word's inputs");
            let r = hmul2_harness::reference::eval(&inst, &got).expect("test words are defined everywhere");
            if inst.dst != RZ {
                g[inst.dst as usize] = r;
            }
            k_expected += THREADS as u64;
            runs += 1;
            pc += 1;
            continue;
        };
        let a = a.as_slice();
        let mut next = pc + 1;
        match op {
            Op::Nop => {}
            Op::S2rTidX => g[a[0] as usize] = tid,
            Op::S2rCtaidX => g[a[0] as usize] = ctaid,
            Op::Iadd3Imm => g[a[0] as usize] = rd(&g, a[1]).wrapping_add(a[2]),
            Op::R2p => pr = (rd(&g, a[0]) & a[1] & 0x7f) as u8,
            Op::Mov => g[a[0] as usize] = rd(&g, a[1]),
            Op::ImadImm => g[a[0] as usize] = rd(&g, a[1]).wrapping_mul(a[2]).wrapping_add(rd(&g, a[3])),
            Op::ImadIadd => g[a[0] as usize] = rd(&g, a[1]).wrapping_add(rd(&g, a[2])),
            Op::ImadWideU32Imm => {
                let v = (rd(&g, a[1]) as u64 * a[2] as u64).wrapping_add(pair(&g, a[3]));
                set64(&mut g, a[0], v);
            }
            Op::PrmtImm => {
                let bytes = [rd(&g, a[1]).to_le_bytes(), rd(&g, a[3]).to_le_bytes()].concat();
                let v = (0..4).fold(0u32, |v, i| {
                    let s = (a[2] >> (4 * i)) & 0xf;
                    assert!(s < 8, "PRMT sign-replicating selector");
                    v | (bytes[s as usize] as u32) << (8 * i)
                });
                g[a[0] as usize] = v;
            }
            Op::LopXor => g[a[0] as usize] = rd(&g, a[1]) ^ rd(&g, a[2]),
            Op::ShfRU64Imm => g[a[0] as usize] = (((rd(&g, a[3]) as u64) << 32 | rd(&g, a[1]) as u64) >> a[2]) as u32,
            Op::ShfRU32HiImm => g[a[0] as usize] = rd(&g, a[3]) >> a[2],
            Op::IsetpNeU32 => {
                let p = a[0];
                assert!(p < 7, "ISETP into PT");
                let v = rd(&g, a[1]) != rd(&g, a[2]);
                pr = (pr & !(1 << p)) | (v as u8) << p;
            }
            Op::BraBack => {
                let taken = a[0] == PT as u32 || (pr >> a[0]) & 1 == 1;
                if taken {
                    let delta = (a[1] as i32 as i64) * 4;
                    next = ((pc as i64 + 1) * 16 + delta) as usize / 16;
                }
            }
            Op::Ldc64 => {
                assert_eq!((a[1], a[2]), (0x218, 0), "only the output pointer is read");
                set64(&mut g, a[0], OUT);
            }
            Op::Uldc64 => {
                assert_eq!((a[1], a[2]), (0x208, 0));
                ur[a[0] as usize] = 0xdead;
                ur[a[0] as usize + 1] = 0xbeef;
            }
            Op::StgE64 => {
                assert_eq!((ur[a[2] as usize], ur[a[2] as usize + 1]), (0xdead, 0xbeef), "descriptor");
                stores.push((pair(&g, a[0]), pair(&g, a[1])));
            }
            Op::Exit => {
                assert_eq!(runs, 1u64 << (req.chunk_bits - 8), "iterations");
                return stores;
            }
            other => panic!("{other:?} in a digest kernel"),
        }
        g[255] = 0;
        pc = next;
    }
    panic!("block {ctaid} thread {tid}: no EXIT after 50M instructions");
}

/// The per-thread partials of the whole grid, as the output buffer the runner reads.
fn emulate(b: &DigestBuilt, req: &DigestRequest) -> Vec<u8> {
    let words = text(&b.job.cubin);
    assert_eq!(words, b.program, ".text is the program");
    assert_eq!(b.job.grid, [req.chunks, 1, 1]);
    assert_eq!(b.job.block, [THREADS, 1, 1]);
    let mut mem: HashMap<u64, u64> = HashMap::new();
    let threads: Vec<(u32, u32)> = (0..req.chunks).flat_map(|c| (0..THREADS).map(move |t| (c, t))).collect();
    let per = threads.len().div_ceil(2);
    let parts: Vec<Vec<(u64, u64)>> = std::thread::scope(|s| {
        let hs: Vec<_> = threads
            .chunks(per)
            .map(|ts| {
                let words = &words;
                s.spawn(move || ts.iter().flat_map(|&(c, t)| run_thread(words, req.word, req, c, t)).collect::<Vec<_>>())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (addr, v) in parts.into_iter().flatten() {
        assert!(mem.insert(addr, v).is_none(), "two stores to {addr:#x}");
    }
    let n = req.chunks as usize * THREADS as usize;
    assert_eq!(mem.len(), n, "one store per thread");
    assert_eq!(b.job.output_bytes, 8 * n);
    (0..n as u64).flat_map(|i| mem[&(OUT + 8 * i)].to_le_bytes()).collect()
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

/// Words of each supported form, including RZ operands, coinciding registers and
/// guards on P0 (the loop predicate moves to P1) and negated guards.
fn words(seed: u64) -> Vec<u128> {
    let mut out = Vec::new();
    for form in [Form::Rrr, Form::Imm] {
        let base = runnable_words(seed, Some(form), 11).unwrap();
        out.extend(&base[..6]);
        for (j, &w) in base[6..].iter().enumerate() {
            let mut i: Hmul2 = decode(w).unwrap();
            match j {
                0 => i.a = RZ,
                1 => i.dst = RZ,
                2 => i.dst = i.a,
                3 => {
                    i.pred.index = 0;
                    i.pred.negated = false;
                    i.a = 254;
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

#[test]
fn digest_kernel_disassembles_and_its_partials_add_up_to_the_reference_digests() {
    let seed = seed();
    let ws = words(seed);
    // the variants really are there
    let insts: Vec<Hmul2> = ws.iter().map(|&w| decode(w).unwrap()).collect();
    let has = |f: &dyn Fn(&Hmul2) -> bool| insts.iter().any(f);
    assert!(has(&|i| i.form() == Form::Imm) && has(&|i| i.form() == Form::Rrr));
    assert!(has(&|i| i.a == RZ) && has(&|i| i.dst == RZ) && has(&|i| i.b == Operand2::Reg(RZ)));
    assert!(has(&|i| i.dst == i.a && i.a != RZ) && has(&|i| i.b == Operand2::Reg(i.a) && i.a != RZ));
    assert!(has(&|i| i.pred.index == 0 && !i.pred.negated) && has(&|i| i.pred.negated));
    let mut ran = 0;
    let mut skipped = Vec::new();
    for (n, w) in ws.into_iter().enumerate() {
        let req = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 1 + (n as u64 * 37) % 250, chunks: 3 };
        let b = build(&req).unwrap_or_else(|e| panic!("{}: {e}", hmul2_harness::isa::format_hex(w)));
        let label = format!("word {n} {}", hmul2_harness::isa::format_hex(w));
        check_listing(&b, &label);
        // the runner's reference digests: effective inputs, eval_batch
        let inst = decode(w).unwrap();
        let backend = RealBackend;
        let expect = |xs: &[Inputs], out: &mut [u32]| {
            let eff = backend.digest_inputs(w, xs)?;
            backend.expect_batch(&inst, &eff, out)
        };
        let refs = reference_digests(&req, &expect);
        if refs.iter().any(Option::is_none) {
            skipped.push(label);
            continue;
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
        ran += 1;
    }
    eprintln!("emulated {ran} words; skipped (some result undefined): {skipped:?}");
    assert!(ran >= 16, "too few words emulated: {ran}");
}

#[test]
fn digest_jobs_refuse_what_they_cannot_sweep() {
    let seed = seed();
    for form in [Form::Ur, Form::Const, Form::ConstUr] {
        let w = runnable_words(seed, Some(form), 1).unwrap()[0];
        let req = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 0, chunks: 1 };
        match build(&req) {
            Err(e @ DigestError::Form { .. }) => {
                let m = e.to_string();
                assert!(m.contains("cannot be swept") && !m.contains('\n'), "{m}");
                assert!(RealBackend.digest_job(&req).unwrap_err().contains("cannot be swept"));
            }
            other => panic!("{form:?}: {:?}", other.map(|b| b.program.len())),
        }
    }
    let w = runnable_words(seed, Some(Form::Rrr), 1).unwrap()[0];
    let small = DigestRequest { word: w, space_bits: 20, chunk_bits: 7, first_chunk: 0, chunks: 1 };
    assert!(matches!(build(&small), Err(DigestError::Request(_))));
    let past = DigestRequest { word: w, space_bits: 20, chunk_bits: 12, first_chunk: 255, chunks: 2 };
    assert!(matches!(build(&past), Err(DigestError::Request(_))));
    let illegal = DigestRequest { word: 0, space_bits: 20, chunk_bits: 12, first_chunk: 0, chunks: 1 };
    assert!(matches!(build(&illegal), Err(DigestError::NotRunnable(_))));
}

#[test]
fn a_full_chunk_of_2_pow_32_is_one_block() {
    let w = runnable_words(seed(), Some(Form::Rrr), 1).unwrap()[0];
    let req = DigestRequest { word: w, space_bits: 32, chunk_bits: 32, first_chunk: 0, chunks: 1 };
    let b = build(&req).unwrap();
    check_listing(&b, "2^32");
    let req = DigestRequest { word: w, space_bits: 32, chunk_bits: 20, first_chunk: 4095, chunks: 1 };
    let b = build(&req).unwrap();
    check_listing(&b, "last chunk");
}
