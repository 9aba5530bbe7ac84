//! Lane products per second of the reference's `eval_batch` against `rustc_apfloat` and a
//! plain scalar loop (`eval` per input), then the time of one exhaustive sweep: one
//! instruction over all 2^32 (x, y) lane pairs, in chunks, on 2 threads.
//!
//! `cargo bench -p hmul2-benches --bench reference`

use criterion::{criterion_group, Criterion, Throughput};
use hmul2_harness::inputs::Inputs;
use hmul2_harness::isa::{Format, Inst, Operand2};
use hmul2_harness::reference::{eval, eval_batch, input_set};
use rustc_apfloat::ieee::{BFloat, Half};
use rustc_apfloat::{Float, Round};
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1 << 14;

fn inst(format: Format) -> Inst {
    let mut i = Inst::new(0, 1, Operand2::Reg(2));
    i.format = format;
    i
}

fn lanes(c: &mut Criterion) {
    for (name, format) in [("f16", Format::F16), ("bf16", Format::Bf16)] {
        let i = inst(format);
        let xs = input_set(&i, 1, N);
        let mut out = vec![0u32; N];
        let mut g = c.benchmark_group(format!("lane_products_{name}"));
        g.throughput(Throughput::Elements(2 * N as u64));
        g.bench_function("eval_batch", |b| b.iter(|| eval_batch(&i, black_box(&xs), &mut out).unwrap()));
        g.bench_function("scalar_eval_loop", |b| {
            b.iter(|| {
                for (o, x) in out.iter_mut().zip(black_box(&xs)) {
                    *o = eval(&i, x).unwrap();
                }
            })
        });
        g.bench_function("rustc_apfloat", |b| {
            b.iter(|| {
                for (o, x) in out.iter_mut().zip(black_box(&xs)) {
                    let mut v = 0u32;
                    for l in 0..2 {
                        let (a, bb) = ((x.a >> (16 * l)) as u16 as u128, (x.b >> (16 * l)) as u16 as u128);
                        let r = if format == Format::F16 {
                            Half::from_bits(a).mul_r(Half::from_bits(bb), Round::NearestTiesToEven).value.to_bits()
                        } else {
                            BFloat::from_bits(a).mul_r(BFloat::from_bits(bb), Round::NearestTiesToEven).value.to_bits()
                        };
                        v |= (r as u32) << (16 * l);
                    }
                    *o = v;
                }
            })
        });
        g.finish();
    }
}

/// One instruction over all 2^32 lane pairs: 2^31 inputs (x in both lanes of a, (y, y+1) in
/// b), 2^15 at a time, x split over 2 threads. Prints the seconds taken.
fn exhaustive_sweep(format: Format) -> f64 {
    let i = inst(format);
    let t0 = Instant::now();
    let sums: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2u32)
            .map(|t| {
                let i = &i;
                s.spawn(move || {
                    let mut xs = vec![Inputs::default(); 1 << 15];
                    let mut out = vec![0u32; 1 << 15];
                    let mut sum = 0u64;
                    for x in (t..1 << 16).step_by(2) {
                        for (k, v) in xs.iter_mut().enumerate() {
                            let y = 2 * k as u32;
                            *v = Inputs { a: x | x << 16, b: y | (y + 1) << 16, d: 0, pred: 0, c: 0 };
                        }
                        eval_batch(i, &xs, &mut out).unwrap();
                        sum = out.iter().fold(sum, |s, &o| s.wrapping_add(o as u64));
                    }
                    sum
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    black_box(sums);
    t0.elapsed().as_secs_f64()
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = lanes
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    for (name, format) in [("f16", Format::F16), ("bf16", Format::Bf16)] {
        println!("exhaustive sweep {name}: 2^32 lane pairs in {:.2} s on 2 threads", exhaustive_sweep(format));
    }
}
