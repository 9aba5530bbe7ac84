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
            // an instruction the target has but whose overlay is not written yet: the library
            // says so (`Illegal::Untyped`) rather than reading it; nothing to judge here
            if hmul2_harness::spec::untyped(t, op) {
                eprintln!("{t} {op}: not typed yet on this architecture, left out");
                continue;
            }
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
            // and its text through the target's parser (the text holds no control bits and
            // ignored bits: the parsed instruction prints the same text)
            let text = render_for(t, &i).unwrap();
            let back = parse_for(t, &text).unwrap_or_else(|e| panic!("{t}: {w:#034x}: {e}"));
            let again = encode_for(t, &back).unwrap_or_else(|e| panic!("{t}: {w:#034x} {text}: {e}"));
            assert_eq!(render_for(t, &decode_for(t, again).unwrap()).as_deref(), Some(text.as_str()), "{t}: {w:#034x}");
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

/// `--arch` on the commands that read or write words: both spellings, the default SM90, an
/// error naming the input, and each target's own text (the words of its overlay's evidence).
#[test]
fn arch_option_on_the_word_commands() {
    let run = |args: &[&str]| {
        let o = common::bin().args(args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    // format 3 of HADD2: rejected on SM90, .F32 on SM86
    let w = "0x000fe200002040000000000201007230";
    assert_eq!(run(&["decode", w]).1, format!("illegal: HADD2_R_R_R: rule format-f32-bf16: format = 3 is not allowed here\n"));
    for arch in ["SM86", "sm_86"] {
        assert_eq!(run(&["decode", "--arch", arch, w]).1, "HADD2.F32 R0, R1, R2\n", "{arch}");
    }
    assert_eq!(run(&["decode", "--arch", "SM90", w]), run(&["decode", w]));
    for cmd in [
        &["decode", "--arch", "sm86", w][..],
        &["encode", "--arch", "sm86", "HMUL2 R0, R1, R2"],
        &["explain", "--arch", "sm86", w],
        &["generate", "--arch", "sm86"],
    ] {
        let (code, _, err) = run(cmd);
        assert_eq!(code, Some(2), "{cmd:?}");
        assert!(err.contains("architecture \"sm86\"") && err.contains("sm_90") && err.contains("SM120"), "{cmd:?}: {err}");
    }
    // 8-bit uniform registers on SM100: UR63 is a register, URZ is 255
    let (code, out, _) = run(&["encode", "--arch", "SM100", "HADD2 R0, R1, UR63"]);
    assert_eq!((code, out.trim()), (Some(0), "0x000fc200080000000000003f01007e30"));
    let (_, out, _) = run(&["decode", "--arch", "SM100", "--json", "0x000fe20008000000000000ff01007e30"]);
    assert!(out.contains("\"text\":\"HADD2 R0, R1, URZ\""), "{out}");
    let (code, out, _) = run(&["explain", "--arch", "SM100", "--json", "0x000fe200080000000000003f01007e30"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("\"text\":\"HADD2 R0, R1, UR63\"") && out.contains("\"meaning\":\"UR63\""), "{out}");
    let (_, out, _) = run(&["explain", "--arch", "SM120", "--json", "0x000fe200000000030000000201007235"]);
    assert!(out.contains("SM120 has no HFMA2.MMA"), "{out}");
    // an instruction or form the target lacks is refused by name
    let (code, _, err) = run(&["encode", "--arch", "SM120", "HFMA2.MMA R0, R1, R2, R3"]);
    assert!(code == Some(2) && err.contains("HFMA2.MMA"), "{err}");
    let (code, _, err) = run(&["generate", "--arch", "SM100", "--instruction", "HFMA2.MMA"]);
    assert!(code == Some(2) && err.contains("--arch SM100 has no HFMA2.MMA"), "{err}");
    let (code, _, err) = run(&["generate", "--arch", "SM100", "--form", "rrr"]);
    assert!(code == Some(2) && err.contains("--form with --arch SM100"), "{err}");
    // every target's generated words decode there and encode back (the seed is printed)
    for t in Target::ALL {
        let (code, out, err) = run(&["generate", "--arch", t.ptxas, "--count", "200", "--illegal-share", "0.1"]);
        assert_eq!(code, Some(0), "{t}: {err}");
        assert!(err.contains("seed: "), "{t}: {err}");
        let words: Vec<u128> = out.lines().map(|l| parse_hex(l).unwrap()).collect();
        assert_eq!(words.len(), 200, "{t}");
        let legal: Vec<u128> = words.iter().copied().filter(|&w| decode_for(t, w).is_ok()).collect();
        assert!(legal.len() > 150 && legal.len() < 200, "{t}: {} legal", legal.len());
        let texts: Vec<String> = legal.iter().map(|&w| render_for(t, &decode_for(t, w).unwrap()).unwrap()).collect();
        let mut args = vec!["encode", "--arch", t.nvdisasm];
        args.extend(texts.iter().map(|s| s.as_str()));
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(0), "{t}: {err}");
        // the text holds no control bits: re-encoded words print the same text
        for (line, text) in out.lines().zip(&texts) {
            assert_eq!(&render_for(t, &decode_for(t, parse_hex(line).unwrap()).unwrap()).unwrap(), text, "{t}");
        }
    }
    // the oracle and the probe ask nvdisasm about the target
    let (code, out, err) = run(&["oracle", "--arch", "sm_89", "--count", "500", "--fields", "--seed", "7"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("oracle SM89: ") && out.contains(" 0 mismatches"), "{out}");
    let (code, out, err) = run(&["probe", "--arch", "SM80", "--word", "0x000fe200000000030000000201007231", "--bits", "86..86"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("same text (ignored here): 86"), "{out}");
}
