//! Times the fused sweep (the host side of exhaustive mode) of one instruction on all
//! cores, as `fused_digests` runs it, three times, for a developer's loop between runs of
//! `ci/bench-ratios` (whose `pipeline` benchmark times the same call):
//!
//!     cargo run --release -p hmul2-benches --example sweep_time -- "HFMA2.BF16_V2 R0, R1, R2, R3" 0x3f808001 [chunks] [first_chunk]
//!
//! Operand 3's word is hex; a chunk is 2^20 inputs (16 rows of operand 1), 4096 chunks the
//! whole 2^32 space. It prints the time, the time per input and the digests' sum (which a
//! change of kernel must leave as it is).
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = args.get(1).map(String::as_str).unwrap_or("HFMA2.BF16_V2 R0, R1, R2, R3");
    let fail = |what: &str| -> ! {
        eprintln!("sweep_time: {what}");
        std::process::exit(2)
    };
    let c = args
        .get(2)
        .map(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| fail(&format!("operand 3 {s:?}: not hex"))))
        .unwrap_or(0x3f80_8001);
    let chunks: u32 = args.get(3).map(|s| s.parse().unwrap_or_else(|_| fail(&format!("chunks {s:?}: not a number")))).unwrap_or(1 << 12);
    let first_chunk: u64 = args.get(4).map(|s| s.parse().unwrap_or_else(|_| fail(&format!("first chunk {s:?}: not a number")))).unwrap_or(0);
    let inst = hmul2_harness::isa::parse(text).unwrap_or_else(|e| fail(&format!("{text:?}: {e}")));
    let word = hmul2_harness::isa::encode(&inst).unwrap_or_else(|e| fail(&format!("{text:?}: {e}")));
    let req = hmul2_harness::exhaustive::DigestRequest { word, space_bits: 32, chunk_bits: 20, first_chunk, chunks, c };
    for _ in 0..3 {
        let t = Instant::now();
        let d =
            hmul2_harness::exhaustive::sweep::fused_digests(&req).unwrap_or_else(|| fail(&format!("{text:?}: not an instruction the fused sweep computes")));
        let s = t.elapsed().as_secs_f64();
        let x: u64 = d.iter().map(|v| v.unwrap_or_else(|| fail("a chunk without a digest"))).fold(0, u64::wrapping_add);
        println!(
            "{text} c {c:#010x}: {chunks} chunks from {first_chunk}: {s:.3} s ({:.3} ns an input), sum {x:#018x}",
            s * 1e9 / (chunks as f64 * (1 << 20) as f64)
        );
    }
}
