//! The host side of a hardware run, with the GPU taken out: how many instructions × inputs
//! per second the CPU can prepare (inputs, patched cubin), judge (read back, reference,
//! compare bit for bit) and record (journal record, sampled vector lines). The device
//! answers instantly with the output the hardware would give when it agrees with the
//! reference (computed once, outside the timing), so this is the ceiling the host puts on
//! `run`, to set against the end-to-end target of 50,000 instructions × 256 inputs per
//! second. The GPU's own share is measured only on a GPU machine (`ci/device-session`).
//!
//! `cargo bench -p hmul2-benches --bench pipeline`. Prints per-core rates and the ratio to
//! the target first, then criterion's numbers. Seed: HMUL2_SEED or 1.

use criterion::{criterion_group, Criterion, Throughput};
use hmul2_harness::gpu::{ExecError, Executor, LaunchJob};
use hmul2_harness::isa::{decode, Operand2};
use hmul2_harness::kernel::{runnable_words, OUTPUT_RECORD};
use hmul2_harness::run::engine::{input_seed, run_batch, EngineOptions};
use hmul2_harness::run::pipeline::{Backend, Case, RealBackend};
use hmul2_harness::run::vector_out::VectorWriter;
use std::hint::black_box;
use std::time::Instant;

const BATCH: usize = 256;
const BATCHES: usize = 8;
const INPUTS: usize = 256;
/// The end-to-end goal: 50,000 instructions with 256 inputs each, per second.
const TARGET: f64 = 50_000.0 * 256.0;

fn seed() -> u64 {
    std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1)
}

fn opts() -> EngineOptions {
    EngineOptions { inputs: INPUTS, seed: seed(), minimize_budget: 64, keep_vectors: Some(8), stop_on_launch_failure: false }
}

/// Batches of (index, word) over all five forms, as `run` makes them.
fn batches() -> Vec<Vec<(u64, u128)>> {
    let s = seed();
    let words = runnable_words(s, None, BATCH * BATCHES).unwrap_or_else(|e| panic!("seed {s}: {e}"));
    let items: Vec<(u64, u128)> = words.into_iter().enumerate().map(|(i, w)| (i as u64, w)).collect();
    items.chunks(BATCH).map(|c| c.to_vec()).collect()
}

/// What an agreeing GPU would write for `items`, launch by launch: the cases grouped as
/// `run_batch` groups them (a case joins the first launch none of whose cases reads a word
/// of constant bank 3 it reads: the kernel fills each bank word once a launch), each launch
/// built the way `run_batch` builds it, each output record the reference's destination and
/// predicate file for the inputs the kernel really reads.
fn agreeing_output(items: &[(u64, u128)]) -> Vec<Vec<u8>> {
    let b = RealBackend::default();
    let o = opts();
    let cases: Vec<Case> = items
        .iter()
        .map(|&(i, w)| {
            let inst = decode(w).expect("runnable words decode");
            Case { word: w, inputs: b.input_set(&inst, input_seed(o.seed, i), o.inputs) }
        })
        .collect();
    let bank_words = |c: &Case| -> Vec<i32> {
        let inst = decode(c.word).expect("decodes");
        std::iter::once(inst.b)
            .chain(inst.c)
            .filter_map(|o| match o {
                Operand2::Const { offset, .. } => Some(offset / 4),
                _ => None,
            })
            .collect()
    };
    let mut groups: Vec<(Vec<Case>, std::collections::BTreeSet<i32>)> = Vec::new();
    for c in cases {
        let read = bank_words(&c);
        match groups.iter_mut().find(|g| read.iter().all(|w| !g.1.contains(w))) {
            Some(g) => {
                g.1.extend(read);
                g.0.push(c);
            }
            None => groups.push((vec![c], read.into_iter().collect())),
        }
    }
    groups
        .into_iter()
        .map(|(cases, _)| {
            let p = b.build(&cases).expect("build");
            let used = b.effective_inputs(&p, &cases).expect("effective inputs of a built batch");
            let mut out = Vec::with_capacity(p.jobs[0].output_bytes);
            for (c, ins) in cases.iter().zip(used) {
                let inst = decode(c.word).expect("decodes");
                let mut r = vec![0u32; ins.len()];
                // a word the reference leaves undefined (HFMA2 .RELU with a predicate operand,
                // an INVALIDn field) is counted undefined by `run`, not compared: any output will do
                if b.expect_batch(&inst, &ins, &mut r).is_err() {
                    r.fill(0);
                }
                // each input's record: the destination, then the predicate file after the word (P2R)
                for (v, x) in r.iter().zip(&ins) {
                    let preds = b.expect_preds(&inst, x).unwrap_or(x.pred) as u32;
                    out.extend(v.to_le_bytes());
                    out.extend(preds.to_le_bytes());
                }
            }
            assert_eq!(out.len(), p.jobs[0].output_bytes, "the output layout is case after case, {OUTPUT_RECORD} bytes per input");
            out
        })
        .collect()
}

/// A device that answers each launch with its prepared output, in order.
struct Replay<'a>(std::slice::Iter<'a, Vec<u8>>);
impl Executor for Replay<'_> {
    fn execute(&mut self, job: &LaunchJob) -> Result<Vec<u8>, ExecError> {
        let out = self.0.next().expect("an output prepared for every launch");
        assert_eq!(job.output_bytes, out.len());
        Ok(out.clone())
    }
}

/// One batch as `run` handles it: run_batch, then the journal record and vector lines.
fn host_batch(items: &[(u64, u128)], out: &[Vec<u8>], sink: &mut Vec<u8>) -> u64 {
    let mut exec = Replay(out.iter());
    let r = run_batch(&RealBackend::default(), &mut exec, items, &opts(), &|_| None).expect("no setup error");
    let compared: u64 = r.record.items.iter().map(|i| i.totals.compared).sum();
    assert_eq!(r.record.items.iter().map(|i| i.totals.mismatches).sum::<u64>(), 0, "the agreeing output agrees");
    sink.clear();
    let mut w = VectorWriter::new("hardware:bench:none:2026-01-01");
    w.write(&r.observed, sink).expect("vectors to memory");
    sink.extend(serde_json::to_string(&r.record).expect("record").as_bytes());
    compared
}

fn ratio_report(bs: &[Vec<(u64, u128)>], outs: &[Vec<Vec<u8>>]) {
    let mut sink = Vec::new();
    let mut best = f64::MAX;
    let mut compared = 0;
    for _ in 0..5 {
        let t = Instant::now();
        compared = bs.iter().zip(outs).map(|(b, o)| host_batch(b, o, &mut sink)).sum::<u64>();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let per_core = compared as f64 / best;
    println!(
        "seed {}: host side of {} batches of {BATCH} instructions x {INPUTS} inputs: {:.1} ms per batch, \
         {:.2} M instruction-inputs/s on one core ({:.0} instructions/s) = {:.2}x the 12.8 M/s target",
        seed(),
        bs.len(),
        best * 1e3 / bs.len() as f64,
        per_core / 1e6,
        per_core / INPUTS as f64,
        per_core / TARGET
    );
    // every core at once, as `run --host-threads` uses them
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut rate = 0f64;
    for _ in 0..3 {
        let t = Instant::now();
        let all: u64 = std::thread::scope(|s| {
            let hs: Vec<_> = (0..cores)
                .map(|_| {
                    s.spawn(|| {
                        let mut sink = Vec::new();
                        (0..4).map(|_| bs.iter().zip(outs).map(|(b, o)| host_batch(b, o, &mut sink)).sum::<u64>()).sum::<u64>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("host thread")).sum()
        });
        rate = rate.max(all as f64 / t.elapsed().as_secs_f64());
    }
    println!("{cores} cores at once: {:.2} M instruction-inputs/s ({:.0} instructions/s) = {:.2}x the target", rate / 1e6, rate / INPUTS as f64, rate / TARGET);
}

/// The host share of one exhaustive sweep: the reference digests of every chunk, on all
/// cores, as `run` computes them (`Backend::fused_digests`, the fused sweep, where it
/// applies; else inputs generated as the device does, mapped to what the kernel reads,
/// `eval_batch`, the digest mix, which is also timed as "general"), for FP16 and BF16 words
/// of each instruction: the first 2^24 of the 2^32 inputs by both paths (which must agree),
/// then, where the fused sweep applies, all 2^32 timed as a run sweeps them (best of 3).
fn exhaustive_report() {
    use hmul2_harness::run::exhaustive::{reference_digests, DigestRequest};
    let b = RealBackend::default();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    for (name, text, c) in [
        ("HMUL2 FP16", "HMUL2 R0, R1, R2", 0),
        ("HMUL2 BF16", "HMUL2.BF16_V2 R0, R1, R2", 0),
        ("HADD2 FP16", "HADD2 R0, R1, R2", 0),
        ("HADD2 BF16", "HADD2.BF16_V2 R0, R1, R2", 0),
        ("HFMA2 FP16", "HFMA2 R0, R1, R2, R3", 0x3c00_8001),
        ("HFMA2 BF16", "HFMA2.BF16_V2 R0, R1, R2, R3", 0x3f80_8001),
        ("HFMA2.MMA FP16", "HFMA2.MMA R0, R1, R2, R3", 0x3c00_8001),
    ] {
        let inst = hmul2_harness::isa::parse(text).expect("parses");
        let word = hmul2_harness::isa::encode(&inst).expect("encodes");
        let req = DigestRequest { word, space_bits: 32, chunk_bits: 20, first_chunk: 0, chunks: 16, c };
        let expect = |xs: &[hmul2_harness::inputs::Inputs], out: &mut [u32]| {
            let eff = b.digest_inputs(word, xs)?;
            b.expect_batch(&inst, &eff, out)
        };
        let time = |f: &dyn Fn() -> Vec<Option<u64>>| {
            let mut best = f64::MAX;
            let mut d = Vec::new();
            for _ in 0..3 {
                let t = Instant::now();
                d = f();
                best = best.min(t.elapsed().as_secs_f64());
            }
            (best, d)
        };
        let fused = b.fused_digests(&req).is_some();
        let (run, d) = time(&|| b.fused_digests(&req).unwrap_or_else(|| reference_digests(&req, &expect)));
        assert!(d.iter().all(Option::is_some), "plain R,R,R results are all defined");
        let (general, g) = time(&|| reference_digests(&req, &expect));
        assert_eq!(d, g, "{name}: the runner's digests are the general path's");
        // the whole space, timed as a run sweeps it (best of 3, as every row of issue 18's
        // table): the first 2^24 inputs are the rows of the 256 smallest x (zeros and
        // subnormals), no sample of the rest; the general path (minutes for 2^32) stays
        // scaled from them
        let all = if fused {
            let whole = DigestRequest { chunks: 1 << 12, ..req };
            let (best, d) = time(&|| b.fused_digests(&whole).expect("fused above"));
            assert!(d.iter().all(Option::is_some), "plain R,R,R results are all defined");
            best
        } else {
            run * 256.0
        };
        println!(
            "{name} exhaustive, host side ({}): {} on {cores} cores = {all:.2} s for all 2^32 here \
             ({:.1} s per core-equivalent; the first 2^24 inputs took {:.0} ms, x 256 = {:.2} s); general path {:.1} s",
            if fused { "fused sweep" } else { "general path" },
            if fused { "all 2^32 inputs timed, best of 3" } else { "the first 2^24 inputs scaled" },
            all * cores as f64,
            run * 1e3,
            run * 256.0,
            general * 256.0,
        );
    }
}

fn bench(c: &mut Criterion) {
    exhaustive_report();
    let bs = batches();
    let outs: Vec<Vec<Vec<u8>>> = bs.iter().map(|b| agreeing_output(b)).collect();
    ratio_report(&bs, &outs);
    let mut g = c.benchmark_group("host");
    g.throughput(Throughput::Elements((BATCH * INPUTS) as u64));
    g.sample_size(20);
    let mut sink = Vec::new();
    g.bench_function("batch_256x256", |b| b.iter(|| black_box(host_batch(&bs[0], &outs[0], &mut sink))));
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    eprintln!("seed: {}", seed());
    benches();
    Criterion::default().configure_from_args().final_summary();
}
