//! HFMA2 lanes per second: the reference's `eval_fma_batch` against `rustc_apfloat`'s
//! correctly rounded `mul_add` on the same lanes (the oracle of the FMA tests), FP16 and
//! BF16, on the seeded inputs runs draw (specials and random halves).
//!
//! `cargo bench -p hmul2-benches --bench fma`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hmul2_harness::isa::{Format, Inst, Operand2};
use hmul2_harness::reference::fma::{eval_fma_batch, FmaOp};
use hmul2_harness::reference::{input_set, Policy};
use rustc_apfloat::ieee::{BFloat, Half};
use rustc_apfloat::{Float, Round};
use std::hint::black_box;

const N: usize = 1 << 14;

fn apfloat_lane<F: Float>(a: u16, b: u16, c: u16) -> u16 {
    F::from_bits(a as u128).mul_add_r(F::from_bits(b as u128), F::from_bits(c as u128), Round::NearestTiesToEven).value.to_bits() as u16
}

fn lanes(c: &mut Criterion) {
    let p = Policy::current();
    for (name, format) in [("f16", Format::F16), ("bf16", Format::Bf16)] {
        let mut i = Inst::new(0, 1, Operand2::Reg(2));
        i.format = format;
        let xs = input_set(&i, 1, N);
        let cs = input_set(&i, 2, N);
        let a: Vec<u32> = xs.iter().map(|x| x.a).collect();
        let b: Vec<u32> = xs.iter().map(|x| x.b).collect();
        let cc: Vec<u32> = cs.iter().map(|x| x.a).collect();
        let op = FmaOp { format, ..Default::default() };
        let mut out = vec![0u32; N];
        let mut g = c.benchmark_group(format!("fma_lanes_{name}"));
        g.throughput(Throughput::Elements(2 * N as u64));
        g.bench_function("eval_fma_batch", |bn| bn.iter(|| eval_fma_batch(&op, p, black_box(&a), black_box(&b), black_box(&cc), &mut out).unwrap()));
        g.bench_function("rustc_apfloat", |bn| {
            bn.iter(|| {
                for k in 0..N {
                    let mut v = 0u32;
                    for l in 0..2 {
                        let (x, y, z) = ((a[k] >> (16 * l)) as u16, (b[k] >> (16 * l)) as u16, (cc[k] >> (16 * l)) as u16);
                        let r = if format == Format::F16 { apfloat_lane::<Half>(x, y, z) } else { apfloat_lane::<BFloat>(x, y, z) };
                        v |= (r as u32) << (16 * l);
                    }
                    out[k] = black_box(v);
                }
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = lanes
}
criterion_main!(benches);
