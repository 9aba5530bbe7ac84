//! Decode + render throughput against nvdisasm on the same 100,000 words: one word a call
//! (`decode_render_into`), and the batch the `decode` command makes of them
//! (`decode_lines_into`: each word's line and a newline).
//! `decode_per_architecture_<ARCH>`: the same for every other architecture's words (its
//! generator's), a word a call (`decode_render_into_for`: the target's fast-path tables, built
//! from its spec) and as the `decode --arch` command's batch (`decode_lines_into_for`),
//! against `nvdisasm -b <ARCH>` on the same words.
//! Run: `cargo bench -p hmul2-benches --bench decode` (needs `bash ci/install-tools.sh`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hmul2_harness::gen::{self, GenOptions};
use hmul2_harness::isa::{decode_lines_into, decode_lines_into_for, decode_render_into, decode_render_into_for, LineCache, Op};
use hmul2_harness::nvdisasm::find_tool;
use std::hint::black_box;
use std::io::Write;

const N: u64 = 100_000;

fn words() -> Vec<u128> {
    let o = GenOptions { invalid_share: 0.25, ..GenOptions::legal(1) };
    gen::generate(&o, 0, N)
}

fn bench(c: &mut Criterion) {
    let words = words();
    // the wide programs, where the CPU takes them (`decode_render_into` uses them once made)
    hmul2_harness::isa::prepare_decode();
    let mut g = c.benchmark_group("decode_render_100k");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.bench_function("hmul2-harness", |b| {
        let mut s = String::with_capacity(128);
        b.iter(|| {
            let mut total = 0usize;
            for &w in &words {
                s.clear();
                // equal to decode + render_into (isa::fused's test checks it)
                let _ = decode_render_into(black_box(w), &mut s);
                total += s.len();
            }
            black_box(total)
        })
    });
    g.bench_function("hmul2-harness-lines", |b| {
        let mut s = String::with_capacity(words.len() * 128);
        let mut cache = LineCache::default();
        b.iter(|| {
            s.clear();
            // the lines `decode` prints (isa::fused's test checks them against one at a time)
            decode_lines_into(black_box(&words), &mut s, &mut cache);
            black_box(s.len())
        })
    });
    match find_tool("nvdisasm") {
        Ok(nv) => {
            let path = std::env::temp_dir().join(format!("hmul2-bench-{}.bin", std::process::id()));
            let mut f = std::fs::File::create(&path).expect("temp file");
            for w in &words {
                f.write_all(&w.to_le_bytes()).expect("write");
            }
            drop(f);
            g.bench_function("nvdisasm", |b| {
                b.iter(|| {
                    let out = std::process::Command::new(&nv).args(["-b", "SM90"]).arg(&path).output().expect("nvdisasm runs");
                    assert!(out.status.success(), "nvdisasm rejected the legal words");
                    black_box(out.stdout.len())
                })
            });
            let _ = std::fs::remove_file(&path);
        }
        Err(e) => panic!("the comparison needs nvdisasm: {e}"),
    }
    g.finish();
}

/// nvdisasm -b `arch` on `words` (written to a file once), timed by `g`.
fn bench_nvdisasm(g: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>, name: &str, arch: &str, words: &[u128]) {
    let nv = find_tool("nvdisasm").unwrap_or_else(|e| panic!("the comparison needs nvdisasm: {e}"));
    let path = std::env::temp_dir().join(format!("hmul2-bench-{}-{arch}.bin", std::process::id()));
    let mut f = std::fs::File::create(&path).expect("temp file");
    for w in words {
        f.write_all(&w.to_le_bytes()).expect("write");
    }
    drop(f);
    g.bench_function(name, |b| {
        b.iter(|| {
            let out = std::process::Command::new(&nv).args(["-b", arch]).arg(&path).output().expect("nvdisasm runs");
            assert!(out.status.success(), "nvdisasm -b {arch} rejected the legal words");
            black_box(out.stdout.len())
        })
    });
    let _ = std::fs::remove_file(&path);
}

/// Every architecture other than SM90: 100,000 of its generator's words (seed 1), decoded and
/// rendered through its spec, against nvdisasm -b on them.
fn bench_architectures(c: &mut Criterion) {
    for t in hmul2_harness::target::Target::ALL.into_iter().filter(|t| t.spec_overlay.is_some()) {
        let ops: Vec<Op> = Op::all_for(t).collect();
        let words: Vec<u128> = (0..N)
            .filter_map(|i| {
                let mut r = hmul2_harness::rng::Rng::fork(1, i);
                let op = *r.pick(&ops);
                gen::random_word_for(t, op, &mut r)
            })
            .collect();
        let mut g = c.benchmark_group(format!("decode_per_architecture_{}", t.nvdisasm));
        g.throughput(Throughput::Elements(words.len() as u64));
        g.sample_size(10);
        g.bench_function("hmul2-harness", |b| {
            let mut s = String::with_capacity(128);
            b.iter(|| {
                let mut total = 0usize;
                for &w in &words {
                    s.clear();
                    // equal to decode_for + render_into_for (isa::fused's test checks it)
                    let _ = decode_render_into_for(t, black_box(w), &mut s);
                    total += s.len();
                }
                black_box(total)
            })
        });
        g.bench_function("hmul2-harness-lines", |b| {
            let mut s = String::with_capacity(words.len() * 128);
            let mut cache = LineCache::default();
            b.iter(|| {
                s.clear();
                // the lines `decode --arch` prints: the target's fast-path tables, built from its spec
                decode_lines_into_for(t, black_box(&words), &mut s, &mut cache);
                black_box(s.len())
            })
        });
        bench_nvdisasm(&mut g, "nvdisasm", t.nvdisasm, &words);
        g.finish();
    }
}

criterion_group!(benches, bench, bench_architectures);
criterion_main!(benches);
