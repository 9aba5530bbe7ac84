//! Building and patching a batch of 4,096 HMUL2 under test (256 inputs each) against ptxas
//! compiling a PTX kernel with the same number of packed multiplies.
//!
//! `cargo bench -p hmul2-benches --bench patch` (needs `.tools/bin/ptxas`; fails without it).
//! Prints the ratio ptxas / patcher first, then criterion's numbers. Seed: HMUL2_SEED or 1.

use criterion::{criterion_group, Criterion};
use hmul2_harness::kernel::runnable_words;
use hmul2_harness::kernel::{build, random_inputs, Case};
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::rng::Rng;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const COUNT: usize = 4096;
const THREADS: usize = 256;

fn seed() -> u64 {
    std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1)
}

fn batch() -> Vec<Case> {
    let s = seed();
    let words = match runnable_words(s, None, COUNT) {
        Ok(w) => w,
        Err(e) => panic!("seed {s}: {e}"),
    };
    let mut r = Rng::fork(s, u64::MAX);
    words.iter().map(|&w| Case { word: w, inputs: random_inputs(w, THREADS, &mut r) }).collect()
}

/// A PTX kernel doing what the patched one does, with ptxas's freedom: per multiply, load
/// two operands, multiply (packed f16x2), store.
fn ptx(count: usize) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\
         .reg .b32 %a<3>;\n.reg .b64 %rd<6>;\n\
         ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\ncvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %a0, %tid.x;\nmul.wide.u32 %rd3, %a0, 4;\nadd.s64 %rd4, %rd1, %rd3;\nadd.s64 %rd5, %rd2, %rd3;\n",
    );
    for i in 0..count {
        let (la, lb, st) = (i * 2048, i * 2048 + 1024, i * 1024);
        s.push_str(&format!(
            "ld.global.u32 %a1, [%rd4+{la}];\nld.global.u32 %a2, [%rd4+{lb}];\nmul.rn.f16x2 %a1, %a1, %a2;\nst.global.u32 [%rd5+{st}], %a1;\n"
        ));
    }
    s.push_str("ret;\n}\n");
    s
}

fn ptxas_once(ptxas: &PathBuf, src: &PathBuf, out: &PathBuf) -> Duration {
    let t = Instant::now();
    let st = Command::new(ptxas).args(["-arch=sm_90", "-O3"]).arg(src).arg("-o").arg(out).status().expect("run ptxas");
    assert!(st.success(), "ptxas failed");
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ratio_report() {
    let ptxas = find_tool("ptxas").expect("ptxas is required (bash ci/install-tools.sh)");
    let dir = std::env::temp_dir();
    let src = dir.join(format!("hmul2-bench-{}.ptx", std::process::id()));
    let out = dir.join(format!("hmul2-bench-{}.cubin", std::process::id()));
    std::fs::write(&src, ptx(COUNT)).expect("write PTX");
    let cases = batch();
    let patch: Vec<Duration> = (0..11)
        .map(|_| {
            let t = Instant::now();
            black_box(build(black_box(&cases)).expect("build"));
            t.elapsed()
        })
        .collect();
    let ptx_times: Vec<Duration> = (0..3).map(|_| ptxas_once(&ptxas, &src, &out)).collect();
    let (p, x) = (median(patch), median(ptx_times));
    println!(
        "seed {}: build+patch of {COUNT} HMUL2 x {THREADS} inputs: {:.2} ms; ptxas on {COUNT} packed multiplies: {:.1} ms; ratio {:.0}x",
        seed(),
        p.as_secs_f64() * 1e3,
        x.as_secs_f64() * 1e3,
        x.as_secs_f64() / p.as_secs_f64()
    );
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&out);
}

fn bench(c: &mut Criterion) {
    let cases = batch();
    c.bench_function("build_patch_4096x256", |b| b.iter(|| build(black_box(&cases)).expect("build")));
    let ptxas = find_tool("ptxas").expect("ptxas is required (bash ci/install-tools.sh)");
    let src = std::env::temp_dir().join(format!("hmul2-bench-c-{}.ptx", std::process::id()));
    let out = src.with_extension("cubin");
    std::fs::write(&src, ptx(COUNT)).expect("write PTX");
    let mut g = c.benchmark_group("ptxas");
    g.sample_size(10);
    g.bench_function("ptxas_4096_mul_f16x2", |b| b.iter(|| ptxas_once(&ptxas, &src, &out)));
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    eprintln!("seed: {}", seed());
    ratio_report();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
