//! nvdisasm judges every architecture's encodings: for SM80, SM86, SM89, SM100 and SM120,
//! random words of each instruction the target has (legal or not: the fixed fields of one of
//! its forms, every other bit random) and every value of every field of every form render as
//! `nvdisasm -b SMxx` prints them, and are rejected (or print nothing) where it says so. SM90 is
//! `oracle_nvdisasm`'s. These tests FAIL when nvdisasm is missing (`bash ci/install-tools.sh`).

use crate::common;

use hmul2_harness::gen;
use hmul2_harness::isa::*;
use hmul2_harness::nvdisasm::Nvdisasm;
use hmul2_harness::oracle::{compare, OracleReport};
use hmul2_harness::rng::Rng;
use hmul2_harness::target::Target;

/// The targets other than SM90 (whose encodings `oracle_nvdisasm` judges).
fn others() -> impl Iterator<Item = &'static Target> {
    Target::ALL.into_iter().filter(|t| t.spec_overlay.is_some())
}

fn nvdisasm(t: &'static Target) -> Nvdisasm {
    match Nvdisasm::find() {
        Ok(n) => n.without_cache().for_target(t),
        Err(e) => panic!("the nvdisasm oracle cannot run: {e}"),
    }
}

/// Whether nvdisasm and the project agree on every word, the disagreements listed.
fn agrees(what: &str, rep: &OracleReport) -> bool {
    for m in rep.mismatches.iter().take(30) {
        eprintln!("mismatch {m}");
    }
    eprintln!(
        "{what}: {} words, {} same text, {} rejected by both ({} printing nothing), {} mismatches",
        rep.words,
        rep.agreed_text,
        rep.agreed_illegal,
        rep.agreed_empty,
        rep.mismatches.len()
    );
    rep.ok()
}

/// Random words of every instruction on every target, legal or not (fresh seed, printed;
/// HMUL2_SEED repeats it): decode + render agree with nvdisasm on each, text or rejection.
#[test]
fn random_words_on_every_architecture() {
    let seed = common::fresh_seed();
    eprintln!("random words per architecture, seed {seed}");
    let n = hmul2_harness::testlevel::sized("random words per instruction and architecture", 20_000, 1_500);
    let mut failed = Vec::new();
    for t in others() {
        let mut r = Rng::fork(seed, t.sm as u64);
        let mut words = Vec::new();
        for op in Op::ALL {
            words.extend((0..n).filter_map(|_| gen::candidate_word_for(t, op, &mut r)));
            // the generator's legal words, and the words of an instruction the target lacks
            words.extend((0..n / 10).filter_map(|_| gen::random_word_for(t, op, &mut r)));
            if op.layout_for(t).is_none() {
                words.extend((0..n / 10).map(|_| (r.next_u64() as u128) << 64 | r.next_u64() as u128 & !0x1ff | op.opcode_value() as u128));
            }
        }
        let rep = compare(&nvdisasm(t), &words).expect("nvdisasm ran");
        let legal: Vec<Inst> = words.iter().filter_map(|&w| decode_for(t, w).ok()).collect();
        let forms: std::collections::BTreeSet<_> = legal.iter().map(|i| (i.op, i.form())).collect();
        assert_eq!(forms.len(), Op::ALL.iter().map(|o| o.forms_for(t).count()).sum::<usize>(), "{t}: every form of every instruction drawn");
        assert!(rep.agreed_text > words.len() / 10 && rep.agreed_illegal > words.len() / 10, "{t}: legal and illegal words both");
        // every legal word round-trips through the target's encoder
        for (w, i) in words.iter().filter_map(|&w| decode_for(t, w).ok().map(|i| (w, i))) {
            assert_eq!(encode_for(t, &i), Ok(w), "{t}: {w:#034x}");
        }
        if !agrees(&format!("{t} random words, seed {seed}"), &rep) {
            failed.push(t.nvdisasm);
        }
    }
    assert!(failed.is_empty(), "random words, seed {seed}: mismatches with nvdisasm on {failed:?} (listed above)");
}

/// Every value of every field of every form each target has, one at a time on a plain
/// instruction, and every bit no field covers: as nvdisasm prints or rejects them.
#[test]
fn every_field_value_on_every_architecture() {
    let mut failed = Vec::new();
    for t in others() {
        let words: Vec<u128> = Op::ALL.into_iter().flat_map(|op| gen::one_field_at_a_time_for(t, op)).collect();
        assert!(words.len() > 1000, "{t}: {} words", words.len());
        let rep = compare(&nvdisasm(t), &words).expect("nvdisasm ran");
        if !agrees(&format!("{t} every field value"), &rep) {
            failed.push(t.nvdisasm);
        }
    }
    assert!(failed.is_empty(), "every field value: mismatches with nvdisasm on {failed:?} (listed above)");
}
