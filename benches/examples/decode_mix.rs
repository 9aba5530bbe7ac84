//! Times decode + render in process on the decode benchmark's 100,000 words, and on parts
//! of them, to see what the mix of forms costs (for a developer's loop between runs of
//! `ci/bench-ratios`, whose `decode` benchmark times the first two lines' calls):
//!
//!     cargo run --release -p hmul2-benches --example decode_mix [rounds]
//!
//! It prints ns a word, best of `rounds` (default 50): a word a call
//! (`decode_render_into`) and in a batch (`decode_lines_into`) on all the words; in a batch
//! on each form's words alone (cycled to 100,000), on the words without immediates, and on
//! one word repeated.
use hmul2_harness::gen::{self, GenOptions};
use hmul2_harness::isa::{decode, decode_lines_into, decode_render_into, prepare_decode, Form, LineCache};
use std::hint::black_box;
use std::time::Instant;

const N: usize = 100_000;

fn batch(words: &[u128], rounds: usize) -> f64 {
    let mut s = String::with_capacity(words.len() * 128);
    let mut cache = LineCache::default();
    let mut best = f64::MAX;
    for _ in 0..rounds {
        s.clear();
        let t = Instant::now();
        decode_lines_into(black_box(words), &mut s, &mut cache);
        best = best.min(t.elapsed().as_secs_f64());
    }
    best / words.len() as f64 * 1e9
}

fn one_at_a_time(words: &[u128], rounds: usize) -> f64 {
    let mut s = String::with_capacity(256);
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        let mut n = 0;
        for &w in words {
            s.clear();
            let _ = decode_render_into(black_box(w), &mut s);
            n += s.len();
        }
        black_box(n);
        best = best.min(t.elapsed().as_secs_f64());
    }
    best / words.len() as f64 * 1e9
}

fn main() {
    let rounds: usize = match std::env::args().nth(1).map(|s| s.parse()) {
        None => 50,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("decode_mix: rounds: a positive number");
            std::process::exit(2)
        }
    };
    // the decode benchmark's words (benches/benches/decode.rs)
    let words = gen::generate(&GenOptions { invalid_share: 0.25, ..GenOptions::legal(1) }, 0, N as u64);
    prepare_decode();
    let cycled = |keep: &dyn Fn(Form) -> bool| -> Vec<u128> {
        let some: Vec<u128> = words.iter().copied().filter(|&w| decode(w).is_ok_and(|i| keep(i.form()))).collect();
        some.iter().cycle().take(N).copied().collect()
    };
    println!("all words, a word a call: {:.1} ns a word", one_at_a_time(&words, rounds));
    println!("all words, in a batch: {:.1} ns a word", batch(&words, rounds));
    for form in [Form::Rrr, Form::Imm, Form::Const, Form::ConstUr, Form::Ur, Form::Rrrr] {
        let some = cycled(&|f| f == form);
        if !some.is_empty() {
            println!("{} words alone, in a batch: {:.1} ns a word", form.cli_name(), batch(&some, rounds));
        }
    }
    println!("words without immediates, in a batch: {:.1} ns a word", batch(&cycled(&|f| f != Form::Imm), rounds));
    println!("one word repeated, in a batch: {:.1} ns a word", batch(&vec![words[0]; N], rounds));
}
