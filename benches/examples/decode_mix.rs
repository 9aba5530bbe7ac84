//! Times decode + render in process on the decode benchmark's 100,000 words, and on parts
//! of them, to see what the mix of forms costs (for a developer's loop between runs of
//! `ci/bench-ratios`, whose `decode` benchmark times the first two lines' calls):
//!
//!     cargo run --release -p hmul2-benches --example decode_mix [rounds]
//!
//! It prints ns a word, best of `rounds` (default 50): a word a call
//! (`decode_render_into`) and in a batch (`decode_lines_into`) on all the words; in a batch
//! on each form's words alone (cycled to 100,000), on the words without immediates, and on
//! one word repeated; then all the words in pieces whose text stays in cache (as the `decode`
//! command renders them), and split in two halves on two threads (each with its own text,
//! the two then joined in order).
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

/// `words` a piece of `piece` at a time into one reused text.
fn pieces(words: &[u128], piece: usize, rounds: usize) -> f64 {
    let mut s = String::with_capacity(piece * 128);
    let mut cache = LineCache::default();
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        let mut n = 0;
        for p in words.chunks(piece) {
            s.clear();
            decode_lines_into(black_box(p), &mut s, &mut cache);
            n += s.len();
        }
        black_box(n);
        best = best.min(t.elapsed().as_secs_f64());
    }
    best / words.len() as f64 * 1e9
}

/// `words` in two halves, one a thread, each into its own text, then joined in order.
fn two_threads(words: &[u128], rounds: usize) -> f64 {
    let (a, b) = words.split_at(words.len() / 2);
    let (mut ta, mut tb) = (String::with_capacity(a.len() * 128), String::with_capacity(b.len() * 128));
    let mut all = String::with_capacity(words.len() * 128);
    let (mut ca, mut cb) = (LineCache::default(), LineCache::default());
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        std::thread::scope(|sc| {
            sc.spawn(|| {
                tb.clear();
                decode_lines_into(black_box(b), &mut tb, &mut cb);
            });
            ta.clear();
            decode_lines_into(black_box(a), &mut ta, &mut ca);
        });
        all.clear();
        all.push_str(&ta);
        all.push_str(&tb);
        black_box(all.len());
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
    for piece in [128, 2048, 16384] {
        println!("all words, in pieces of {piece} into one reused text: {:.1} ns a word", pieces(&words, piece, rounds));
    }
    println!("all words, two halves on two threads, joined: {:.1} ns a word", two_threads(&words, rounds));
}
