//! nvdisasm judges the project's decode + render. These tests FAIL when nvdisasm is missing:
//! `bash ci/install-tools.sh` installs the pinned one (CI runs it first).

use crate::common;

use hmul2_harness::commands::errata_words;
use hmul2_harness::gen::{self, GenOptions};
use hmul2_harness::isa::*;
use hmul2_harness::nvdisasm::Nvdisasm;
use hmul2_harness::oracle::{compare, OracleReport};

fn nvdisasm() -> Nvdisasm {
    match Nvdisasm::find() {
        Ok(n) => {
            eprintln!("nvdisasm: {} ({})", n.path.display(), n.version().unwrap_or_default());
            n
        }
        Err(e) => panic!("the nvdisasm oracle cannot run: {e}"),
    }
}

/// nvdisasm for words that differ from run to run (a fresh seed's, a quick run's sample from
/// a fresh offset) or that are too many to keep (every immediate): every one asked of the
/// tool and none kept in its verdict cache, where they would push out the verdicts of the
/// fixed words, which come again.
fn nvdisasm_uncached() -> Nvdisasm {
    nvdisasm().without_cache()
}

fn assert_agrees(what: &str, rep: &OracleReport) {
    for m in rep.mismatches.iter().take(50) {
        eprintln!("mismatch {m}");
    }
    eprintln!(
        "{what}: {} words, {} same text, {} rejected by both, {} mismatches, {} nvdisasm calls, {} verdicts from its cache",
        rep.words,
        rep.agreed_text,
        rep.agreed_illegal,
        rep.mismatches.len(),
        rep.nvdisasm_calls,
        rep.cached
    );
    assert!(rep.ok(), "{what}: {} mismatches with nvdisasm (listed above)", rep.mismatches.len());
}

fn random_run(seed: u64, nv: Nvdisasm) {
    eprintln!("oracle run, seed {seed}");
    let o = GenOptions { seed, ops: Op::ALL.to_vec(), form: None, illegal_share: 0.01, invalid_share: 0.25, ignored_share: 0.1 };
    let words = gen::generate(&o, 0, 20_000);
    let rep = compare(&nv, &words).expect("nvdisasm ran");
    assert!(rep.agreed_illegal > 50, "the run must include rejected words");
    let forms: std::collections::BTreeSet<_> = words.iter().filter_map(|&w| decode(w).ok()).map(|i| (i.op, i.form())).collect();
    assert_eq!(forms.len(), Op::ALL.iter().map(|o| o.forms().count()).sum::<usize>(), "every form of every instruction drawn");
    assert_agrees(&format!("random seed {seed}"), &rep);
}

/// HFMA2 and HFMA2.MMA alone: 40000 random words (INVALIDn values, ignored bits and broken
/// rules included), a fresh seed each run (printed; HMUL2_SEED repeats it).
#[test]
fn random_three_source_encodings_fresh_seed() {
    let seed = common::fresh_seed();
    eprintln!("three-source oracle run, seed {seed}");
    let o = GenOptions { seed, ops: vec![Op::Hfma2, Op::Hfma2Mma], form: None, illegal_share: 0.05, invalid_share: 0.25, ignored_share: 0.2 };
    let n = hmul2_harness::testlevel::sized("random three-source words of the oracle run", 40_000, 10_000);
    let words = gen::generate(&o, 0, n);
    let rep = compare(&nvdisasm_uncached(), &words).expect("nvdisasm ran");
    let forms: std::collections::BTreeSet<_> = words.iter().filter_map(|&w| decode(w).ok()).map(|i| (i.op, i.form())).collect();
    assert_eq!(forms.len(), 18, "every form of both instructions drawn");
    // about one word in twenty is rejected: over 500 of the 40,000 of the full level
    assert!(rep.agreed_illegal as u64 > n / 80, "the run must include rejected words");
    assert_agrees(&format!("HFMA2 / HFMA2.MMA random seed {seed}"), &rep);
}

/// Any bits at all with HFMA2's or HFMA2.MMA's opcode (and the form selector, ureg flag and
/// control bits drawn from values some form accepts, so that most words are legal): decode's
/// verdict, text, rejection or "prints nothing", is nvdisasm's. Fresh seed, printed.
#[test]
fn arbitrary_words_with_the_three_source_opcodes() {
    let seed = common::fresh_seed();
    eprintln!("arbitrary three-source words, seed {seed}");
    let mut r = hmul2_harness::rng::Rng::new(seed);
    let n = hmul2_harness::testlevel::sized("arbitrary three-source words", 40_000, 10_000);
    let words: Vec<u128> = (0..n)
        .map(|k| {
            let w = (r.next_u64() as u128) << 64 | r.next_u64() as u128;
            let op = if k % 2 == 0 { 0x031 } else { 0x035 };
            let (of, uf) = *r.pick(&[(1u128, 0u128), (2, 0), (3, 0), (3, 1), (4, 0), (5, 0), (5, 1), (6, 1), (7, 1)]);
            // stall 1..11 with the yield bit, no reuse flag: the control rules hold
            let ctrl = (1 + r.below(11) as u128) << 105 | 1 << 109;
            let keep = !(0x1ffu128 | 7 << 9 | 1 << 91 | 0x1f << 105 | 7 << 122);
            (w & keep) | op | of << 9 | uf << 91 | ctrl
        })
        .collect();
    let rep = compare(&nvdisasm_uncached(), &words).expect("nvdisasm ran");
    eprintln!("{} words nvdisasm printed nothing for", rep.agreed_empty);
    // about one word in nine has format 3: over 1,000 of the 40,000 of the full level
    assert!(rep.agreed_empty as u64 > n / 40, "format 3 words are among them");
    assert_agrees(&format!("arbitrary three-source words, seed {seed}"), &rep);
}

#[test]
fn random_encodings_fixed_seed() {
    random_run(1, nvdisasm());
}

#[test]
fn random_encodings_fresh_seed() {
    random_run(common::fresh_seed(), nvdisasm_uncached());
}

#[test]
fn every_field_value_one_at_a_time_and_errata() {
    let mut words: Vec<u128> = Op::ALL.iter().flat_map(|&o| gen::one_field_at_a_time(o)).collect();
    let n_fields = words.len();
    words.extend(errata_words(&Op::ALL));
    for op in Op::ALL {
        // every value of the control fields the cross-field rules mention, in every form and format
        let s = op.spec();
        let (y, st, re, fmt) = (s.field("yield"), s.field("stall"), s.field("reuse"), s.field("format"));
        for form in op.forms() {
            let special = match form.kind() {
                Form::Rrr => Operand2::Reg(5),
                Form::Imm => Operand2::Imm { first: 0x3c00, second: 0xc000 },
                Form::Const => Operand2::Const { bank: 3, offset: 16 },
                Form::ConstUr => Operand2::ConstUr { ureg: 4, offset: 16 },
                _ => Operand2::Ur(5),
            };
            let base = encode(&gen::plain_inst(op, form, 3, 4, special, 6)).unwrap();
            for fv in 0..=fmt.max() {
                for yv in 0..=y.max() {
                    for sv in 0..=st.max() {
                        for rv in 0..=re.max() {
                            words.push(re.set(st.set(y.set(fmt.set(base, fv).unwrap(), yv).unwrap(), sv).unwrap(), rv).unwrap());
                        }
                    }
                }
            }
        }
        // every operand-form selector with both ureg_flag values
        let (of, uf) = (s.field("operand_form"), s.field("ureg_flag"));
        let base = encode(&Inst::of(op, 0, 1, Operand2::Reg(2))).unwrap();
        for v in 0..=of.max() {
            for u in 0..=uf.max() {
                words.push(uf.set(of.set(base, v).unwrap(), u).unwrap());
            }
        }
    }
    eprintln!("{n_fields} one-field words, {} in all", words.len());
    let rep = compare(&nvdisasm(), &words).expect("nvdisasm ran");
    assert_agrees("fields one at a time, errata, control combinations", &rep);
    // HFMA2's format 3 (.F32 with .BF16_V2) in every form: nvdisasm printed nothing, decode said so
    eprintln!("{} words nvdisasm printed nothing for, as the spec says", rep.agreed_empty);
    assert!(rep.agreed_empty >= 9, "the words nvdisasm prints nothing for are among them");
}

/// Every combination of modifiers of the three-source forms (factorial3: every half select,
/// neg and abs of the three sources, format, flush, none / .SAT / .RELU), judged by nvdisasm:
/// every form of HFMA2.MMA, and HFMA2's all-register form, both immediate forms and c[] as
/// operand 3.
#[test]
fn three_source_factorials() {
    let mut words = Vec::new();
    let mut sets = Vec::new();
    for (op, forms) in [(Op::Hfma2Mma, Op::Hfma2Mma.forms().collect::<Vec<_>>()), (Op::Hfma2, vec![Form::Rrrr, Form::Imm, Form::ImmC, Form::ConstC])] {
        for form in forms {
            let insts = gen::factorial(op, form, 11);
            sets.push(format!("{op} {form}: {}", insts.len()));
            words.extend(insts.iter().map(|i| encode(i).unwrap()));
        }
    }
    eprintln!("{}", sets.join(", "));
    // every word at the full level; the quick one judges every 16th (from a printed offset)
    let keep = hmul2_harness::testlevel::rows("three-source factorial words", words.len() as u32, words.len() as u32 / 16);
    let words: Vec<u128> = keep.into_iter().map(|k| words[k as usize]).collect();
    let rep = compare(&nvdisasm_uncached(), &words).expect("nvdisasm ran");
    assert_agrees("three-source factorials", &rep);
    assert_eq!(rep.agreed_text, words.len(), "every factorial word is legal");
}

#[test]
fn every_immediate_pattern_in_both_formats() {
    let mut words = Vec::new();
    // all 65,536 patterns at the full level; the quick one every 16th (from a printed offset)
    let patterns = hmul2_harness::testlevel::rows("immediate patterns", 1 << 16, 1 << 12);
    for op in Op::ALL {
        for format in [Format::F16, Format::Bf16, Format::F32].into_iter().filter(|f| op.layout().format_code[*f as usize].is_some()) {
            for v in patterns.iter().map(|&v| v as u16) {
                let mut i = Inst::of(op, 0, 1, Operand2::Imm { first: v, second: v.rotate_left(7) });
                i.format = format;
                words.push(encode(&i.without_hidden()).unwrap());
            }
        }
    }
    let rep = compare(&nvdisasm_uncached(), &words).expect("nvdisasm ran");
    assert_agrees("all immediates", &rep);
    assert_eq!(rep.agreed_text, words.len());
}

/// The verdict cache gives back nvdisasm's own answers: words judged once come back without
/// a call, equal to what the tool says when asked again, and words outside the family (whose
/// text can hold an address: a branch's target is printed from the word's place in the
/// file) are always asked.
#[test]
fn cached_verdicts_are_the_tools_own_and_cost_no_call() {
    use hmul2_harness::nvdisasm::cache::{cacheable, VerdictCache};
    use hmul2_harness::nvdisasm::Verdict;
    let same = |what: &str, got: &[Verdict], want: &[Verdict], words: &[u128]| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if cacheable(words[i]) {
                assert_eq!(g, w, "{what}: word {i} {}", format_hex(words[i]));
            } else {
                // a branch: the same instruction, its target from wherever it sat in the file
                assert!(matches!(g, Verdict::Text(t) if t.starts_with("BRA ")), "{what}: word {i}: {g:?}");
            }
        }
    };
    let live = nvdisasm().without_cache();
    let dir = tempfile::tempdir().unwrap();
    let mut nv = live.clone();
    nv.calls = Default::default();
    nv.cache = VerdictCache::at(dir.path(), &live.path, Nvdisasm::arch());
    assert!(nv.cache.is_some());
    let seed = common::fresh_seed();
    eprintln!("cache check, seed {seed}");
    let o = GenOptions { seed, ops: Op::ALL.to_vec(), form: None, illegal_share: 0.2, invalid_share: 0.25, ignored_share: 0.1 };
    let mut words = gen::generate(&o, 0, 3000);
    let bra = 0x000fea0003800000_0000000000007947u128;
    assert!(!cacheable(bra));
    words.push(bra);
    words.push(words[5]);
    let truth = live.disassemble_live(&words).unwrap();
    let first = nv.disassemble(&words).unwrap();
    same("first pass", &first, &truth, &words);
    assert!(nv.calls.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let second = nv.disassemble(&words).unwrap();
    same("second pass", &second, &truth, &words);
    let foreign = words.iter().filter(|&&w| !cacheable(w)).count();
    // the first pass took nothing from the cache (the repeated word was asked once); the
    // second took every family word from it
    assert_eq!(nv.cached.load(std::sync::atomic::Ordering::Relaxed), (words.len() - foreign) as u64);
    let family: Vec<u128> = words.iter().copied().filter(|&w| cacheable(w)).collect();
    let before = nv.calls.load(std::sync::atomic::Ordering::Relaxed);
    same("family words", &nv.disassemble(&family).unwrap(), &live.disassemble_live(&family).unwrap(), &family);
    assert_eq!(nv.calls.load(std::sync::atomic::Ordering::Relaxed), before, "every family word came from the cache");
    let rep = compare(&nv, &family).unwrap();
    assert_agrees("cached words", &rep);
    assert_eq!((rep.cached, rep.nvdisasm_calls), (family.len() as u64, 0));
}
