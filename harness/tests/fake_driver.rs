//! The real driver path without a GPU: `harness/fake-cuda` builds a `libcuda.so` whose
//! entry points run the patched cubins on the CPU emulator (`kernel::emu`). With it first on
//! `LD_LIBRARY_PATH`, everything the GPU job runs, runs: cudarc's loader, symbol
//! resolution, detection, worker processes, `CudaExecutor` (module load, copies, canary,
//! launch, synchronize, sticky faults), the real batch and digest kernels, the real backend,
//! fault bisection and minimization over real launches. And every result says it is not
//! hardware. What it cannot show is the GPU's arithmetic: the emulator computes HMUL2 with
//! the reference.
//!
//! The library is built here with cargo (its own target folder, so the build this test
//! runs in is not waited on); a failed build fails the test.

use crate::common;

use common::{root, run_words, run_words_of, sat_mask, seed, summary, text, tmp, BIN};
use hmul2_harness::isa::{decode, encode, format_hex, parse_hex, Form, Inst, Op, Operand2};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The folder holding the fake `libcuda.so`, built once per test process (release code,
/// rebuilt incrementally: the workspace's `fake` profile).
pub(crate) fn fake_lib() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let target = root().join("target").join("fake-cuda");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let o = Command::new(cargo)
            .current_dir(root())
            .args(["build", "--profile", "fake", "--locked", "-p", "hmul2-fake-cuda", "--target-dir"])
            .arg(&target)
            .output()
            .expect("run cargo to build harness/fake-cuda");
        assert!(o.status.success(), "building the fake libcuda failed:\n{}", String::from_utf8_lossy(&o.stderr));
        let dir = target.join("fake");
        assert!(dir.join("libcuda.so").is_file(), "no libcuda.so in {}", dir.display());
        dir
    })
}

/// The harness with the fake driver configured by `config` (HMUL2_FAKE_CUDA).
pub(crate) fn harness(config: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(root())
        .args(args)
        .env("LD_LIBRARY_PATH", fake_lib())
        .env("HMUL2_FAKE_CUDA", config)
        .env_remove("HMUL2_FAKE_EXECUTOR")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .output()
        .unwrap()
}

#[test]
fn gpu_info_finds_the_fake_and_says_it_is_not_hardware() {
    let o = harness("", &["gpu-info", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(d["driver"], "13.0 (13000)");
    assert!(d["emulated"].as_str().unwrap().contains("CPU emulation"), "{d}");
    assert_eq!(d["devices"][0]["compute_capability"], "9.0");
    assert!(d["problem"].is_null(), "{d}");
    let o = harness("", &["gpu-info"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("EMULATED"), "{}", text(&o));
    // what a machine without a usable device looks like, through the real detection code
    for (config, want) in [
        ("cc=7.5", "no device of an architecture the harness speaks"),
        ("devices=0", "the driver reports no CUDA device"),
        ("init=100", "cuInit failed: CUDA_ERROR_NO_DEVICE (100)"),
        ("driver=12040,cc=8.7", "8.7"),
        ("bogus", "cuInit failed: CUDA_ERROR_INVALID_VALUE"),
    ] {
        let o = harness(config, &["gpu-info"]);
        let t = text(&o);
        assert!(o.status.success() && t.contains("no usable GPU") && t.contains(want), "{config}: {t}");
    }
    assert!(text(&harness("driver=12040,cc=8.7", &["gpu-info"])).contains("12.4 (12040)"));
    // every architecture the harness speaks is usable, and named
    for t in hmul2_harness::target::Target::ALL {
        let (ma, mi) = t.compute_capability;
        let o = harness(&format!("cc={ma}.{mi}"), &["gpu-info"]);
        let t_ = text(&o);
        assert!(o.status.success() && t_.contains(&format!("{ma}.{mi}), {t}")) && t_.contains("usable devices: [0]"), "{t}: {t_}");
    }
    // CUDA_VISIBLE_DEVICES hides devices from the fake as from a driver: the no-GPU tests
    // stay no-GPU tests even where this library is on the path
    for (visible, want) in [("", "cuInit failed: CUDA_ERROR_NO_DEVICE (100)"), ("1", "cuInit failed: CUDA_ERROR_NO_DEVICE (100)")] {
        let o = Command::new(BIN)
            .arg("gpu-info")
            .env("LD_LIBRARY_PATH", fake_lib())
            .env("HMUL2_FAKE_CUDA", "")
            .env("CUDA_VISIBLE_DEVICES", visible)
            .output()
            .unwrap();
        assert!(text(&o).contains(want), "CUDA_VISIBLE_DEVICES={visible:?}: {}", text(&o));
    }
    let o = Command::new(BIN)
        .arg("gpu-info")
        .env("LD_LIBRARY_PATH", fake_lib())
        .env("HMUL2_FAKE_CUDA", "devices=2")
        .env("CUDA_VISIBLE_DEVICES", "1")
        .output()
        .unwrap();
    assert!(text(&o).contains("usable devices: [0]"), "{}", text(&o));
}

#[test]
fn a_random_run_of_every_form_runs_through_the_driver_and_is_labelled_emulated() {
    let seed = seed(21);
    let d = tmp("random");
    let out = d.join("r");
    let vec_dir = d.join("v");
    let o = harness(
        "",
        &["run", "--seed", &seed.to_string(), "--count", "400", "--batch", "128", "--out", out.to_str().unwrap(), "--vectors", vec_dir.to_str().unwrap()],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("hardware: not used") && t.contains("hmul2-fake-cuda"), "{t}");
    assert!(t.contains("PASSED (simulated, not hardware: the CUDA driver is hmul2-fake-cuda"), "{t}");
    assert!(t.contains("preflight: device 0: HMUL2 R0, R1, R2 gave the reference's 0x42004200 in all 32 threads"), "{t}");
    let s = summary(&out);
    assert_eq!(s["hardware"]["used"], false, "an emulation is never a hardware result");
    assert_eq!(s["hardware"]["simulated"], true);
    assert!(s["hardware"]["reason"].as_str().unwrap().contains("CPU emulation"));
    // every form of every instruction ran, every input compared (the run places c[] and cx[]
    // words where the kernel can fill them)
    let forms = s["by_form"].as_object().unwrap();
    let want: usize = hmul2_harness::reference::IMPLEMENTED.iter().map(|o| o.forms().count()).sum();
    assert_eq!(forms.len(), want, "{forms:?}");
    // every input compared, except HFMA2's where the reference has no value (.F32, .OOB, .RELU
    // with a predicate, .SAT with .RELU): those are kept for `settle`
    // (three in four random HFMA2 words carry one), so a form may hold none compared, but
    // every instruction has compared results
    let n = |t: &serde_json::Value, k: &str| t[k].as_u64().unwrap();
    let mut compared_by_op = std::collections::BTreeMap::new();
    for (f, t) in forms {
        assert!(n(t, "inputs") > 0, "{f}: {t}");
        assert_eq!(t["not_runnable"], 0, "{f}: {t}");
        assert_eq!(n(t, "compared") + n(t, "undefined"), n(t, "inputs"), "{f}: {t}");
        let op = Op::ALL.into_iter().find(|o| o.forms().any(|x| o.form_key(x) == f)).unwrap();
        // (HSETP2's two results into one predicate, with different values, have none, and
        // HMNMX2's `.IS_A`, which random words draw, none either)
        if matches!(op, Op::Hmul2 | Op::Hadd2 | Op::Hset2) {
            assert_eq!(t["undefined"], 0, "{f}: {t}");
        }
        *compared_by_op.entry(op.mnemonic()).or_insert(0) += n(t, "compared");
    }
    assert_eq!(compared_by_op.len(), hmul2_harness::reference::IMPLEMENTED.len(), "{compared_by_op:?}");
    assert!(compared_by_op.values().all(|&c| c > 0), "{compared_by_op:?}");
    assert_eq!(s["totals"]["instructions"], 400);
    assert_eq!(n(&s["totals"], "compared") + n(&s["totals"], "undefined"), 400 * 256);
    assert_eq!((s["totals"]["mismatches"].as_u64(), s["totals"]["faults"].as_u64()), (Some(0), Some(0)));
    assert_eq!(s["software_checks"]["verify"]["ok"], true, "{}", s["software_checks"]);
    // vectors only beside the simulated ones, with the fake named in their origin
    assert!(!vec_dir.join("hardware").exists());
    let files: Vec<_> = std::fs::read_dir(vec_dir.join("simulated")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1);
    let body = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(body.lines().count(), 400 * 256);
    let v = hmul2_harness::vectors::parse_line(body.lines().next().unwrap()).unwrap();
    assert!(v.origin.starts_with("simulated:fake-cuda:"), "{}", v.origin);
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("hmul2.simulated") && !junit.contains("hmul2.hardware"), "{junit}");
    // and the vectors replay through the reference on any machine
    let o = Command::new(BIN).arg("verify").arg(vec_dir.join("simulated")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn faults_are_bisected_and_mismatches_minimized_over_real_launches() {
    let seed = seed(7);
    // the two-source instructions, whose .SAT bit is the same and always has a reference
    // value (what a flipped result is judged against)
    let ws = run_words_of(seed, 300, &[Op::Hmul2, Op::Hadd2]);
    let faulty = ws[123];
    let m = format_hex(sat_mask());
    let d = tmp("faults");
    let config = format!("fault-on:{},flip-if:{m}:{m}", format_hex(faulty));
    let o = harness(&config, &["run", "--seed", &seed.to_string(), "--count", "300", "--instruction", "HMUL2,HADD2", "--out", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = summary(&d);
    // the fault: isolated to its word by bisection, raised at synchronize like a GPU's
    let faults = s["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0]["encoding"], format_hex(faulty));
    let detail = faults[0]["detail"].as_str().unwrap();
    assert!(detail.contains("CUDA_ERROR_ILLEGAL_INSTRUCTION (715) during cuCtxSynchronize") && detail.contains("nvdisasm:"), "{detail}");
    // every other word was compared: the lost context was replaced
    assert_eq!(s["totals"]["compared"], 299 * 256);
    // the mismatches: exactly the .SAT words that write a register (RZ shows no result),
    // each shrunk to .SAT alone (a real launch per try)
    let sat: Vec<String> =
        ws.iter().filter(|&&w| w != faulty && w & sat_mask() != 0 && decode(w).unwrap().dst != hmul2_harness::isa::RZ).map(|&w| format_hex(w)).collect();
    let ms = s["mismatches"].as_array().unwrap();
    let found: Vec<String> = ms.iter().map(|f| f["encoding"].as_str().unwrap().to_string()).collect();
    let missed: Vec<&String> = sat.iter().filter(|w| !found.contains(w)).collect();
    assert!(missed.is_empty() && ms.len() == sat.len(), "missed {missed:?}; {} found", found.len());
    for f in ms {
        let orig = decode(parse_hex(f["encoding"].as_str().unwrap()).unwrap()).unwrap();
        let min = decode(parse_hex(f["minimized"].as_str().unwrap_or_else(|| panic!("not minimized: {f}"))).unwrap()).unwrap();
        assert!(orig.sat && min.sat, "{f}");
        assert_eq!((min.a_mods, min.b_mods, min.flush, min.format), Default::default(), "{}", f["minimized_text"]);
        assert_eq!(min.pred, hmul2_harness::isa::Pred::ALWAYS);
        assert_eq!(min.form(), orig.form());
    }
}

/// Issue 41 item 3: the kernels read the predicate file back after the word (`P2R`). A
/// device whose word leaves P0 flipped (HMUL2 and HADD2 write no predicate: a clobber) is a
/// mismatch on the batch and single roads even where the destination agrees; the finding
/// says so, the vector lines record it in `expect_pred` (the other lines are what they
/// always were) and `verify` fails them.
#[test]
fn a_clobbered_predicate_is_a_mismatch_on_the_roads_that_read_it_back() {
    let seed = seed(41);
    let ws = run_words_of(seed, 48, &[Op::Hmul2, Op::Hadd2]);
    let m = format_hex(sat_mask());
    let sat: Vec<String> = ws.iter().filter(|&&w| w & sat_mask() != 0).map(|&w| format_hex(w)).collect();
    assert!(sat.len() >= 4 && sat.len() < ws.len(), "{} of {} words .SAT", sat.len(), ws.len());
    for road in ["batch", "single"] {
        let d = tmp(&format!("pred-flip-{road}"));
        let (out, vec) = (d.join("r"), d.join("v"));
        let args = ["run", "--seed", &seed.to_string(), "--count", "48", "--instruction", "HMUL2,HADD2", "--inputs", "32", "--road", road, "--out"];
        let o = harness(&format!("pred-flip-if:{m}:{m}"), &[&args[..], &[out.to_str().unwrap(), "--vectors", vec.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(1), "{road}: {}", text(&o));
        let s = summary(&out);
        let ms = s["mismatches"].as_array().unwrap();
        let mut found: Vec<String> = ms.iter().map(|f| f["encoding"].as_str().unwrap().to_string()).collect();
        found.sort();
        let mut want = sat.clone();
        want.sort();
        assert_eq!(found, want, "{road}: the .SAT words, whatever their destination");
        for f in ms {
            let detail = f["detail"].as_str().unwrap();
            assert!(detail.contains("the predicates P0..P6 after are"), "{road}: {detail}");
            assert_eq!(f["expected"], f["got"], "{road}: the destination agrees: {f}");
        }
        // every result of a .SAT word differs; the others compare clean
        assert_eq!(s["totals"]["mismatches"].as_u64(), Some(sat.len() as u64 * 32), "{road}: {}", s["totals"]);
        let body = std::fs::read_to_string(vec.join("simulated").read_dir().unwrap().next().unwrap().unwrap().path()).unwrap();
        let (with, without): (Vec<&str>, Vec<&str>) = body.lines().partition(|l| l.contains("\"expect_pred\""));
        assert_eq!(with.len(), sat.len() * 32, "{road}: a line of each clobbered result records it");
        for l in &with {
            let v = hmul2_harness::vectors::parse_line(l).unwrap();
            assert!(sat.contains(&format_hex(v.encoding)), "{road}: {l}");
            assert_eq!(v.expect_pred, Some(v.inputs.pred ^ 1), "{road}: {l}");
        }
        assert!(!without.is_empty());
        let o = Command::new(BIN).arg("verify").arg(vec.join("simulated")).output().unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{road}: {t}");
        assert!(t.contains("mismatch:") && t.contains("expected predicates"), "{road}: {t}");
        assert!(t.contains(&format!("{} mismatch", sat.len() * 32)), "{road}: {t}");
    }
}

/// Issue 41 item 3 on the scaffold road: HSETP2 words stand on the scaffold whose `selp`s
/// store its two predicates; an emulated run through the fake driver compares them with the
/// reference (every result of every word compared, none wrong), and a device whose word
/// leaves P0 flipped (`pred-flip-if`, the word's first predicate result, which the scaffold
/// stores) is a mismatch of that word's predicates alone, its register result agreeing.
#[test]
fn hsetp2_predicates_are_compared_on_the_scaffold_road() {
    use hmul2_harness::kernel::scaffold;
    let seed = seed(41);
    let mut words: Vec<u128> = hmul2_harness::kernel::runnable_words_of(seed, &[Op::Hsetp2], Some(Form::Rrr), 256)
        .unwrap()
        .into_iter()
        .filter_map(|w| scaffold::fit(w).ok().map(|(f, _)| f))
        .collect();
    words.sort();
    words.dedup();
    words.truncate(8);
    assert!(words.len() >= 4, "{} HSETP2 words fit the scaffold", words.len());
    let d = tmp("scaffold-hsetp2");
    let list = d.join("words.txt");
    std::fs::write(&list, words.iter().map(|&w| format!("{}\n", format_hex(w))).collect::<String>()).unwrap();
    let run = |config: &str, name: &str| -> (Output, Value) {
        let out = d.join(name);
        let args =
            ["run", "--seed", &seed.to_string(), "--inputs", "32", "--road", "scaffold", "--words", list.to_str().unwrap(), "--out", out.to_str().unwrap()];
        let o = harness(config, &args);
        let s = summary(&out);
        (o, s)
    };
    let n = |s: &Value, k: &str| s["totals"][k].as_u64().unwrap_or(u64::MAX);
    let (o, s) = run("", "clean");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!((n(&s, "instructions"), n(&s, "not_runnable"), n(&s, "mismatches")), (words.len() as u64, 0, 0), "{}", s["totals"]);
    assert!(n(&s, "compared") > 0, "{}", s["totals"]);
    // one word's P0 flipped after it: that word's predicates mismatch, the others compare clean
    let bad = words[1];
    let (o, s) = run(&format!("pred-flip-if:{}:{}", format_hex(u128::MAX), format_hex(bad)), "flipped");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let ms = s["mismatches"].as_array().unwrap();
    let found: Vec<&str> = ms.iter().map(|f| f["encoding"].as_str().unwrap()).collect();
    assert_eq!(found, [format_hex(bad).as_str()], "{}", s["totals"]);
    for f in ms {
        let detail = f["detail"].as_str().unwrap();
        assert!(detail.contains("the predicates P0..P6 after are"), "{detail}");
        assert_eq!(f["expected"], f["got"], "the register result (RZ) agrees: {f}");
    }
}

/// Words whose predicate source is P0..P6 run on `run --road scaffold`: HSET2 and HMNMX2
/// (its selector at HSET2's bits) on `hset2_rrr_p`, on SM90 and on an SM80 device (its
/// own build), and HSETP2 on `hsetp2_rrr_p` on SM90 and on an SM86 device (whose build ptxas
/// opens with `IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]`); the source is set per thread from the
/// case input's bit by ptxas's ISETP, which the emulated driver runs. Every result compares
/// clean; a word whose result has bit 0 flipped (HSET2, HMNMX2) or whose P0 after it is
/// flipped (HSETP2) is a mismatch, and only that word.
#[test]
fn predicate_sources_p0_to_p6_are_compared_on_the_scaffold_road() {
    use hmul2_harness::kernel::scaffold;
    use hmul2_harness::target::Target;
    let seed = seed(43);
    let reads_p = |w: &u128| decode(*w).is_ok_and(|i| i.psrc.is_some_and(|p| p.index != hmul2_harness::isa::PT));
    // `n` words of `op` that fit `name` on `t`, fitted
    let words_of = |t: &'static Target, op: Op, name: &str, n: usize| -> Vec<u128> {
        let mut ws: Vec<u128> = hmul2_harness::kernel::runnable_words_for(t, seed, &[op], Some(Form::Rrr), 512)
            .unwrap()
            .into_iter()
            .filter(reads_p)
            .filter_map(|w| scaffold::fit_for(t, w).ok().filter(|(_, l)| l.scaffold.name == name).map(|(f, _)| f))
            .collect();
        ws.sort();
        ws.dedup();
        ws.truncate(n);
        assert!(ws.len() >= 3, "{t}: {} {op} words fit {name}", ws.len());
        ws
    };
    let (sm80, sm86) = (Target::ALL[0], Target::ALL[1]);
    assert_eq!((sm80.sm, sm86.sm), (Target::SM80.sm, Target::SM86.sm));
    let d = tmp("scaffold-psrc");
    let n = |s: &Value, k: &str| s["totals"][k].as_u64().unwrap_or(u64::MAX);
    for (t, ops, fault) in [
        (Target::DEFAULT, [Op::Hset2, Op::Hmnmx2], "flip-if"),
        (sm80, [Op::Hset2, Op::Hmnmx2], "flip-if"),
        (Target::DEFAULT, [Op::Hsetp2, Op::Hsetp2], "pred-flip-if"),
        (sm86, [Op::Hsetp2, Op::Hsetp2], "pred-flip-if"),
    ] {
        let name = if ops[0] == Op::Hsetp2 { "hsetp2_rrr_p" } else { "hset2_rrr_p" };
        let mut words = words_of(t, ops[0], name, 4);
        if ops[1] != ops[0] {
            words.extend(words_of(t, ops[1], name, 4));
        }
        let tag = format!("{t}-{name}");
        let list = d.join(format!("{tag}.txt"));
        std::fs::write(&list, words.iter().map(|&w| format!("{}\n", format_hex(w))).collect::<String>()).unwrap();
        let (ma, mi) = t.compute_capability;
        let run = |extra: &str, out: &str| -> (Output, Value) {
            let out = d.join(format!("{tag}-{out}"));
            let args =
                ["run", "--seed", &seed.to_string(), "--inputs", "32", "--road", "scaffold", "--words", list.to_str().unwrap(), "--out", out.to_str().unwrap()];
            let o = harness(&format!("cc={ma}.{mi}{extra}"), &args);
            let s = summary(&out);
            (o, s)
        };
        let (o, s) = run("", "clean");
        assert_eq!(o.status.code(), Some(0), "{tag}: {}", text(&o));
        assert_eq!((n(&s, "instructions"), n(&s, "not_runnable"), n(&s, "mismatches")), (words.len() as u64, 0, 0), "{tag}: {}", s["totals"]);
        let compared = n(&s, "compared");
        assert!(compared > 0, "{tag}: {}", s["totals"]);
        // the first word of each op faulted: those, and only those, mismatch
        let mut bad: Vec<u128> = vec![words[0]];
        if ops[1] != ops[0] {
            bad.push(words[words.len() - 1]);
        }
        let config: String = bad.iter().map(|&w| format!(",{fault}:{}:{}", format_hex(u128::MAX), format_hex(w))).collect();
        let (o, s) = run(&config, "faulted");
        assert_eq!(o.status.code(), Some(1), "{tag}: {}", text(&o));
        let mut found: Vec<String> = s["mismatches"].as_array().unwrap().iter().map(|f| f["encoding"].as_str().unwrap().to_string()).collect();
        found.sort();
        let mut want: Vec<String> = bad.iter().map(|&w| format_hex(w)).collect();
        want.sort();
        assert_eq!(found, want, "{tag}: {}", s["totals"]);
        eprintln!("{tag}: {} words, {compared} results compared clean; the {} faulted found", words.len(), found.len());
    }
}

#[test]
fn rejected_images_and_crashing_drivers_are_isolated_too() {
    let seed = seed(9);
    let ws = run_words(seed, 64);
    let d = tmp("reject");
    let config = format!("reject-on:{},abort-on:{}", format_hex(ws[10]), format_hex(ws[40]));
    let o = harness(&config, &["run", "--seed", &seed.to_string(), "--count", "64", "--out", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = summary(&d);
    let faults = s["faults"].as_array().unwrap();
    let by_word = |w: u128| faults.iter().find(|f| f["encoding"] == format_hex(w)).unwrap_or_else(|| panic!("{} not isolated: {faults:?}", format_hex(w)));
    assert!(by_word(ws[10])["detail"].as_str().unwrap().contains("CUDA_ERROR_INVALID_IMAGE (200) during cuModuleLoadData"));
    assert!(by_word(ws[40])["detail"].as_str().unwrap().contains("worker died"), "{}", by_word(ws[40]));
    assert_eq!(faults.len(), 2);
    let n = |k: &str| s["totals"][k].as_u64().unwrap();
    assert_eq!(n("compared") + n("undefined"), 62 * 256);
}

#[test]
fn exhaustive_mode_runs_the_digest_kernel_through_the_driver() {
    let seed = seed(16);
    // a space of 2^20 inputs (64 chunks) at the full level; 2^16 (4 chunks) at the quick one
    let bits = hmul2_harness::testlevel::sized("space bits of the emulated exhaustive runs (2^bits inputs each)", 20, 16);
    let space = bits.to_string();
    for form in [Form::Rrr, Form::Imm] {
        // a word whose result shows: its guard holds with P0..P6 true (the digest kernel's
        // predicates) and it writes a register, so a flipped result changes the digests
        let shows = |w: &u128| decode(*w).is_ok_and(|i| !i.pred.negated && i.dst != hmul2_harness::isa::RZ);
        let w = hmul2_harness::kernel::runnable_words_of(seed, &[Op::Hmul2, Op::Hadd2], Some(form), 64).unwrap().into_iter().find(shows).unwrap();
        let hex = format_hex(w);
        let d = tmp(&format!("exh-{form:?}"));
        let args = ["run", "--seed", "1", "--mode", "exhaustive", "--encoding", &hex, "--space-bits", &space, "--chunk-bits", "14", "--out"];
        let clean = d.join("clean");
        let o = harness("", &[&args[..], &[clean.to_str().unwrap()]].concat());
        assert!(o.status.success(), "{form:?}: {}", text(&o));
        let s = summary(&clean);
        assert_eq!(s["totals"]["compared"], 1u64 << bits, "{form:?}");
        assert_eq!(s["totals"]["mismatches"], 0, "{form:?}");
        assert_eq!(s["hardware"]["simulated"], true);
        // a "GPU" that gets this word wrong: every chunk's digest differs, and is fetched
        let flip = format!("flip-if:{}:{hex}", format_hex(u128::MAX));
        let bad = d.join("bad");
        let o = harness(&flip, &[&args[..], &[bad.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(1), "{form:?}: {}", text(&o));
        let s = summary(&bad);
        assert_eq!(s["totals"]["compared"], 1u64 << bits, "{form:?}");
        assert!(s["totals"]["mismatches"].as_u64().unwrap() > 0, "{form:?}: {}", s["totals"]);
    }
    // a three-source word: operand 3 fixed by --c, every (a, b) of the space swept
    let hfma2 = "0x000fc200000000030000000201007231"; // HFMA2 R0, R1, R2, R3
    for c in ["0x3c00bc00", "0x7e00fc00"] {
        let d = tmp(&format!("exh-hfma2-{c}"));
        let args = ["run", "--seed", "1", "--mode", "exhaustive", "--encoding", hfma2, "--c", c, "--space-bits", &space, "--chunk-bits", "14", "--out"];
        let o = harness("", &[&args[..], &[d.to_str().unwrap()]].concat());
        assert!(o.status.success(), "--c {c}: {}", text(&o));
        let s = summary(&d);
        assert_eq!((s["totals"]["compared"].as_u64(), s["totals"]["mismatches"].as_u64()), (Some(1 << bits), Some(0)), "--c {c}: {}", s["totals"]);
        assert_eq!(s["config"]["c"].as_u64(), Some(u32::from_str_radix(&c[2..], 16).unwrap() as u64), "the journal and summary name operand 3");
        // a device whose FMA ignores the addend is caught
        let flip = format!("flip-if:{}:{hfma2}", format_hex(u128::MAX));
        let bad = d.join("bad");
        let o = harness(&flip, &[&args[..], &[bad.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(1), "--c {c}: {}", text(&o));
    }
}

#[test]
fn a_broken_harness_stops_at_the_preflight_instead_of_blaming_every_instruction() {
    let plain = format_hex(encode(&Inst::new(0, 1, Operand2::Reg(2))).unwrap());
    let m = format_hex(u128::MAX);
    for (config, want) in [
        // the known-good word faults: the kernel, driver or device is at fault
        (format!("fault-on:{plain}"), "the known-good HMUL2 R0, R1, R2 failed (GPU fault CUDA_ERROR_ILLEGAL_INSTRUCTION (715)"),
        // every result wrong: the data path is broken
        (format!("flip-if:{m}:{plain}"), "HMUL2 R0, R1, R2 gave 32 of 32 results other than 0x42004200 (first: 0x42004201)"),
        // the predicates after it wrong: the readback of the predicate file is broken
        (
            format!("pred-flip-if:{m}:{plain}"),
            "HMUL2 R0, R1, R2 gave 32 of 32 results other than 0x42004200 (first: 0x42004200 with predicates 0x7e (want 0x7f))",
        ),
    ] {
        let d = tmp("preflight");
        let o = harness(&config, &["run", "--seed", "3", "--count", "64", "--out", d.to_str().unwrap()]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{config}: {t}");
        let errors: Vec<&str> = t.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{t}");
        assert!(errors[0].contains("preflight") && errors[0].contains(want) && errors[0].ends_with("no instruction under test was run"), "{}", errors[0]);
        assert!(!d.join("summary.json").exists(), "no report of a run that did not run");
    }
}

#[test]
fn two_devices_get_a_worker_each_and_agree_with_one() {
    let seed = seed(31);
    let run = |config: &str, name: &str| -> Value {
        let d = tmp(name);
        let o = harness(config, &["run", "--seed", &seed.to_string(), "--count", "256", "--batch", "32", "--out", d.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{config}: {}", text(&o));
        let t = text(&o);
        let s = summary(&d);
        let devices = s["hardware"]["devices"].as_u64().unwrap();
        for dev in 0..devices {
            assert!(t.contains(&format!("preflight: device {dev}: ")), "{t}");
        }
        assert_eq!(s["hardware"]["simulated"], true);
        s
    };
    let one = run("devices=1", "one");
    let two = run("devices=2", "two");
    assert_eq!((one["hardware"]["devices"].as_u64(), two["hardware"]["devices"].as_u64()), (Some(1), Some(2)));
    for k in ["totals", "by_form", "mismatches", "faults", "coverage"] {
        assert_eq!(one[k], two[k], "{k}");
    }
    let n = |k: &str| two["totals"][k].as_u64().unwrap();
    assert_eq!(n("compared") + n("undefined"), 256 * 256);
    assert!(n("compared") >= 256 * 256 * 3 / 4, "{}", two["totals"]);
}

/// `ci/nightly`, the one script a nightly GPU job runs, end to end through the driver:
/// every form in random and factorial mode, merged index, vectors kept apart as simulated;
/// and on a machine with no GPU it fails instead of passing.
#[test]
fn the_nightly_script_runs_every_form_and_mode_and_fails_without_a_gpu() {
    let d = tmp("nightly");
    // the emulated night runs every form at the full level; at the quick level a sample of
    // them (printed, with its seed), named by FORMS. The night without a GPU below runs
    // with FORMS unset at both levels, so the script's own default still reaches every form.
    let picked = hmul2_harness::testlevel::rows("forms of the emulated night", Form::ALL.len() as u32, 3);
    let night_forms: Vec<Form> = picked.iter().map(|&i| Form::ALL[i as usize]).collect();
    let nightly = |out: &Path, fake: bool| {
        let mut c = Command::new("bash");
        c.current_dir(root()).arg("ci/nightly").arg(out).env("BIN", BIN).env("SEED", "5").env("COUNT", "30").env("INPUTS", "32");
        c.env("FACTORIAL_INSTRUCTIONS", factorial_list()).env_remove("FORMS");
        c.env("VECTORS", d.join("v")).env_remove("EXHAUSTIVE").env_remove("SHARD").env_remove("HMUL2_FAKE_EXECUTOR");
        if fake {
            if night_forms.len() < Form::ALL.len() {
                c.env("FORMS", night_forms.iter().map(|f| f.cli_name()).collect::<Vec<_>>().join(","));
            }
            c.env("LD_LIBRARY_PATH", fake_lib()).env("HMUL2_FAKE_CUDA", "").env_remove("CUDA_VISIBLE_DEVICES");
        } else {
            c.env("CUDA_VISIBLE_DEVICES", "");
        }
        c.output().unwrap()
    };
    let out = d.join("night");
    let o = nightly(&out, true);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("nightly: done, status 0"), "{t}");
    let index = std::fs::read_to_string(out.join("index.txt")).unwrap();
    let runs: Vec<&str> = index.lines().collect();
    assert_eq!(runs.len(), 2 * night_forms.len(), "{index}");
    let mut random_forms = std::collections::BTreeSet::new();
    for r in &runs {
        let s = summary(Path::new(r));
        assert_eq!((s["hardware"]["used"].as_bool(), s["hardware"]["simulated"].as_bool()), (Some(false), Some(true)), "{r}");
        assert_eq!(s["seed"], 5, "{r}");
        assert!(s["totals"]["compared"].as_u64().unwrap() > 0, "{r}: {}", s["totals"]);
        assert_eq!((s["totals"]["mismatches"].as_u64(), s["totals"]["faults"].as_u64()), (Some(0), Some(0)), "{r}");
        // one operand form a run, of every instruction the reference implements
        let keys: Vec<&String> = s["by_form"].as_object().unwrap().keys().collect();
        let forms: std::collections::BTreeSet<Form> = keys.iter().map(|k| Form::from_cli(k).unwrap_or_else(|| panic!("{r}: form key {k}"))).collect();
        assert_eq!(forms.len(), 1, "{r}: one form a run: {keys:?}");
        let form = Form::from_cli(r.rsplit_once("random-").or(r.rsplit_once("factorial-")).unwrap().1).unwrap();
        let ops = hmul2_harness::reference::IMPLEMENTED.iter().filter(|o| o.has_form(form));
        let want = if r.contains("/random-") { ops.count() } else { ops.filter(|o| factorial_ops().contains(o)).count() };
        assert_eq!(keys.len(), want, "{r}: every instruction of the form: {keys:?}");
        if r.contains("/random-") {
            assert_eq!(s["totals"]["instructions"], 30, "{r}");
            random_forms.extend(forms.iter().copied());
        }
    }
    assert_eq!(random_forms, night_forms.iter().copied().collect::<std::collections::BTreeSet<Form>>(), "{random_forms:?}");
    assert!(!d.join("v").join("hardware").exists(), "an emulated night writes no hardware vectors");
    // one vector file a run (its name says which: mode, form, options), never one shared by
    // the night's forms, where a resume of one form cut the lines of the others (issue 39)
    let files: Vec<String> = std::fs::read_dir(d.join("v").join("simulated")).unwrap().map(|f| f.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(files.len(), runs.len(), "one vector file a run: {files:?}");
    for f in &night_forms {
        assert_eq!(files.iter().filter(|n| n.contains(&format!("-{}-shard", f.cli_name()))).count(), 2, "{f:?}: {files:?}");
    }
    // no GPU: every run is refused (--require-gpu), and the night fails
    let o = nightly(&d.join("nogpu"), false);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert_eq!(t.matches("--require-gpu").count(), 2 * Form::ALL.len(), "{t}");
    // a form it does not know stops it before anything runs
    let o = Command::new("bash").current_dir(root()).arg("ci/nightly").arg(d.join("bad")).env("BIN", BIN).env("FORMS", "rrr,rrx").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("FORMS: unknown form 'rrx'") && !d.join("bad").exists(), "{}", text(&o));
}

/// The kernel runs one thread per input set in whole warps: an --inputs it cannot run is
/// refused before anything runs, not blamed on every instruction as a build fault.
#[test]
fn inputs_the_kernel_cannot_run_are_refused_up_front() {
    for n in ["8", "48", "288"] {
        let d = tmp(&format!("inputs-{n}"));
        let o = harness("", &["run", "--seed", "5", "--count", "10", "--inputs", n, "--out", d.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(lines[0].contains(&format!("--inputs {n}")) && lines[0].contains("multiple of 32"), "{err}");
        assert!(!d.join("journal.jsonl").exists(), "nothing ran");
    }
}

/// A stand-in for Slurm's `sbatch`: an array script's tasks run here one after another
/// (SLURM_ARRAY_TASK_ID set), a `--wrap` command at once; `--export=ALL,K=V` exports K=V.
/// Each job's exit status is appended to `$SLURM_LOGS/status`.
const SBATCH: &str = r#"#!/usr/bin/env bash
set -u
parsable=0 wrap="" script=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --parsable) parsable=1 ;;
    --wrap) wrap="$2"; shift ;;
    --export=*) IFS=, read -ra kv <<< "${1#--export=}"; for x in "${kv[@]}"; do [[ $x == *=* ]] && export "$x"; done ;;
    --*) ;;
    *) script="$1" ;;
  esac
  shift
done
if [[ -n "$wrap" ]]; then
  bash -c "$wrap" > "$SLURM_LOGS/merge.out" 2>&1; echo "merge exit $?" >> "$SLURM_LOGS/status"; exit 0
fi
array="$(sed -n 's/^#SBATCH --array=//p' "$script")"
for i in $(seq "${array%-*}" "${array#*-}"); do
  SLURM_ARRAY_TASK_ID=$i bash "$script" > "$SLURM_LOGS/task-$i.out" 2>&1
  echo "task $i exit $?" >> "$SLURM_LOGS/status"
done
[[ $parsable == 1 ]] && echo 4242
exit 0
"#;

/// `ci/examples/slurm-array.sh` as written, with the stand-in sbatch: eight array tasks
/// each run their shard of the nightly job through the driver, and the dependent merge
/// joins every kind of run into one report of all eight shards.
#[test]
fn the_slurm_example_runs_its_array_and_merges_it() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmp("slurm");
    let stub = d.join("bin");
    std::fs::create_dir_all(&stub).unwrap();
    std::fs::write(stub.join("sbatch"), SBATCH).unwrap();
    std::fs::set_permissions(stub.join("sbatch"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", stub.display(), std::env::var("PATH").unwrap_or_default());
    let reports = d.join("reports");
    // the script as written (8 tasks); at the quick test level a copy with 2 tasks, which
    // runs the same steps on fewer shards
    let script = root().join("ci/examples/slurm-array.sh");
    let text_of = std::fs::read_to_string(&script).unwrap();
    assert!(text_of.lines().any(|l| l == "#SBATCH --array=0-7") && text_of.lines().any(|l| l == "N=8"), "the example's array is 0-7 of N=8");
    let tasks = hmul2_harness::testlevel::sized("tasks of the Slurm example's array", 8, 2) as usize;
    let script = if tasks == 8 {
        script
    } else {
        let copy = d.join("slurm-array.sh");
        let cut = text_of.replace("#SBATCH --array=0-7", &format!("#SBATCH --array=0-{}", tasks - 1)).replace("\nN=8\n", &format!("\nN={tasks}\n"));
        std::fs::write(&copy, cut).unwrap();
        copy
    };
    let o = Command::new("bash")
        .current_dir(root())
        .arg(&script)
        .env("PATH", path)
        .env("SLURM_LOGS", &d)
        .env("SLURM_SUBMIT_DIR", root())
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env("OUT", &reports)
        .env("VECTORS", d.join("v"))
        .env("BIN", BIN)
        .env("SEED", "9")
        .env("COUNT", NIGHT_COUNT)
        .env("INPUTS", "32")
        .env("FACTORIAL_INSTRUCTIONS", factorial_list())
        .env("FORMS", shard_forms_env())
        .env_remove("SHARD")
        .env_remove("EXHAUSTIVE")
        .env("LD_LIBRARY_PATH", fake_lib())
        .env("HMUL2_FAKE_CUDA", "")
        .env_remove("HMUL2_FAKE_EXECUTOR")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("submitted array 4242 (seed 9)"), "{}", text(&o));
    let status = std::fs::read_to_string(d.join("status")).unwrap();
    let want: String = (0..tasks).map(|i| format!("task {i} exit 0\n")).chain(["merge exit 0\n".to_string()]).collect();
    let logs = |name: &str| std::fs::read_to_string(d.join(name)).unwrap_or_default();
    assert_eq!(status, want, "task 1:\n{}\nmerge:\n{}", logs("task-1.out"), logs("merge.out"));
    merged_nights_are_complete(&reports.join("merged"), tasks, NIGHT_COUNT.parse().unwrap());
}

/// Random instructions per form in the sharded emulated nights: each of 8 shards gets about
/// 8 of a form, so that a shard's random run compares something (a random HFMA2 word has a
/// reference value four times in five, and a run that compares nothing fails).
const NIGHT_COUNT: &str = "64";

/// The instructions of the emulated nights' factorial runs (`FACTORIAL_INSTRUCTIONS`):
/// HFMA2's full factorial (1.8 M words) is a real night's, not an emulated test's. At the
/// quick test level (a plain `cargo test`) HADD2's are left out too: HMUL2's and HFMA2.MMA's
/// still give every form a factorial run.
fn factorial_list() -> &'static str {
    static LIST: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        if hmul2_harness::testlevel::is_full() {
            "HMUL2,HADD2,HFMA2.MMA"
        } else {
            hmul2_harness::testlevel::sized("factorial runs of the emulated nights: instructions", 3, 2);
            "HMUL2,HFMA2.MMA"
        }
    })
}

/// The forms of the sharded emulated nights (the Slurm and matrix examples, `FORMS`): every
/// one at the full test level; at the quick level one two-source and one three-source form
/// (the nightly script's own test samples other forms at the quick level).
fn shard_forms() -> &'static [Form] {
    static FORMS: std::sync::OnceLock<Vec<Form>> = std::sync::OnceLock::new();
    FORMS.get_or_init(|| {
        let n = hmul2_harness::testlevel::sized("forms of the sharded emulated nights", Form::ALL.len() as u64, 2);
        if n as usize == Form::ALL.len() {
            Form::ALL.to_vec()
        } else {
            vec![Form::Rrr, Form::ImmC]
        }
    })
}

/// [`shard_forms`] as `FORMS` spells them.
fn shard_forms_env() -> String {
    shard_forms().iter().map(|f| f.cli_name()).collect::<Vec<_>>().join(",")
}

fn factorial_ops() -> Vec<Op> {
    hmul2_harness::isa::parse_ops(factorial_list()).unwrap()
}

/// Instructions in a factorial run of `form`: every modifier combination of every instruction
/// of [`factorial_list`] (HMUL2's R,R,R alone is 8192).
fn factorial_size(form: Form) -> u64 {
    factorial_ops().into_iter().filter(|o| o.has_form(form)).map(|o| hmul2_harness::gen::factorial(o, form, 0).len() as u64).sum()
}

/// The merged reports of one night of `n` shards: every kind of run, each the whole of it.
fn merged_nights_are_complete(merged: &Path, n: usize, count: u64) {
    let kinds: Vec<String> = std::fs::read_dir(merged).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(kinds.len(), 2 * shard_forms().len(), "{kinds:?}");
    for f in shard_forms() {
        for mode in ["random", "factorial"] {
            assert!(kinds.contains(&format!("{mode}-{}", f.cli_name())), "{mode}-{}: {kinds:?}", f.cli_name());
        }
    }
    for k in &kinds {
        let s = summary(&merged.join(k));
        assert_eq!(s["shard"], format!("all/{n}"), "{k}");
        assert_eq!((s["hardware"]["used"].as_bool(), s["hardware"]["simulated"].as_bool()), (Some(false), Some(true)), "{k}");
        assert!(s["totals"]["compared"].as_u64().unwrap() > 0, "{k}: {}", s["totals"]);
        assert_eq!((s["totals"]["mismatches"].as_u64(), s["totals"]["faults"].as_u64()), (Some(0), Some(0)), "{k}");
        let want = match k.strip_prefix("factorial-") {
            Some(f) => factorial_size(Form::from_cli(f).unwrap()),
            None => count,
        };
        assert_eq!(s["totals"]["instructions"], want, "{k}");
        assert_eq!(s["software_checks"]["oracle"]["ok"], true, "{k}: {}", s["software_checks"]);
    }
}

/// The `run:` steps of a workflow, in order: `run: CMD` or `run: |` and its indented block.
fn run_steps(yml: &str) -> Vec<String> {
    let lines: Vec<&str> = yml.lines().collect();
    let mut steps = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let Some(cmd) = t.strip_prefix("run: ") else { continue };
        if cmd.trim() != "|" {
            steps.push(cmd.trim().to_string());
            continue;
        }
        let indent = l.len() - t.len();
        let block: Vec<&str> = lines[i + 1..].iter().take_while(|b| b.trim().is_empty() || b.len() - b.trim_start().len() > indent).map(|b| b.trim()).collect();
        steps.push(block.join("\n"));
    }
    steps
}

/// `ci/examples/gpu-matrix.yml` as written: its shard step once per matrix value, each in a
/// fresh workspace (the repository's `ci/`, as a runner's checkout has it) through the
/// emulated driver; the artifacts laid out as upload- and download-artifact lay them out
/// (`shards/shard-N/reports/...`); then its merge step. The runner's environment supplies
/// what the workflow leaves to it: a small COUNT, the seed, and BIN (so nothing is rebuilt).
#[test]
fn the_ci_matrix_example_runs_its_shards_and_merges_them() {
    let yml = std::fs::read_to_string(root().join("ci/examples/gpu-matrix.yml")).unwrap();
    let steps = run_steps(&yml);
    assert_eq!(steps.len(), 2, "a shard step and a merge step: {steps:?}");
    let list = yml.lines().find_map(|l| l.trim().strip_prefix("shard: [")).expect("matrix shard list");
    let all: Vec<&str> = list.trim_end_matches(']').split(',').map(str::trim).collect();
    let shard_env = yml.lines().find_map(|l| l.trim().strip_prefix("SHARD: ")).expect("the SHARD env of the shard step");
    assert_eq!(shard_env, format!("${{{{ matrix.shard }}}}/{}", all.len()), "the shard step's SHARD counts the matrix");
    // every shard of the matrix; at the quick test level the first 2, as a 2-shard matrix
    let n_shards = hmul2_harness::testlevel::sized("shards of the CI matrix example", all.len() as u64, 2) as usize;
    let shards = &all[..n_shards];
    let shard_env = format!("${{{{ matrix.shard }}}}/{n_shards}");
    let nvdisasm = hmul2_harness::nvdisasm::find_tool("nvdisasm").expect("nvdisasm (bash ci/install-tools.sh)");
    let d = tmp("matrix");
    let bash = |ws: &Path, cmd: &str, shard: Option<&str>| {
        let mut c = Command::new("bash");
        c.current_dir(ws).args(["--noprofile", "--norc", "-eo", "pipefail", "-c", cmd]);
        if let Some(s) = shard {
            c.env("SHARD", s);
        } else {
            c.env_remove("SHARD");
        }
        c.env("BIN", BIN)
            .env("SEED", "11")
            .env("COUNT", NIGHT_COUNT)
            .env("INPUTS", "32")
            .env("HMUL2_NVDISASM", &nvdisasm)
            .env("FACTORIAL_INSTRUCTIONS", factorial_list())
            .env("FORMS", shard_forms_env());
        c.env_remove("VECTORS").env_remove("EXHAUSTIVE").env_remove("HMUL2_FAKE_EXECUTOR").env_remove("CUDA_VISIBLE_DEVICES");
        c.env("LD_LIBRARY_PATH", fake_lib()).env("HMUL2_FAKE_CUDA", "");
        c.output().unwrap()
    };
    let checkout = |ws: &Path| {
        std::fs::create_dir_all(ws).unwrap();
        let st = Command::new("cp").arg("-r").arg(root().join("ci")).arg(ws).status().unwrap();
        assert!(st.success());
        // the job's checkout has the project's vectors (the software check replays them)
        std::fs::create_dir_all(ws.join("vectors")).unwrap();
        let st = Command::new("cp").arg("-r").arg(root().join("vectors/reference")).arg(ws.join("vectors")).status().unwrap();
        assert!(st.success());
    };
    let merge_ws = d.join("merge");
    checkout(&merge_ws);
    // the matrix's jobs run side by side, as CI runs them (each in its own checkout)
    std::thread::scope(|sc| {
        for n in shards {
            let (d, merge_ws, steps, shard_env, bash, checkout) = (&d, &merge_ws, &steps, &shard_env, &bash, &checkout);
            sc.spawn(move || {
                let ws = d.join(format!("shard-job-{n}"));
                checkout(&ws);
                let cmd = steps[0].replace("${{ matrix.shard }}", n);
                let o = bash(&ws, &cmd, Some(&shard_env.replace("${{ matrix.shard }}", n)));
                assert!(o.status.success(), "shard {n}: {cmd}\n{}", text(&o));
                // upload-artifact of reports/ and vectors/hardware/, downloaded into shards/shard-N/
                let artifact = merge_ws.join("shards").join(format!("shard-{n}"));
                std::fs::create_dir_all(&artifact).unwrap();
                let st = Command::new("cp").arg("-r").arg(ws.join("reports")).arg(&artifact).status().unwrap();
                assert!(st.success(), "shard {n} left no reports/");
                assert!(!ws.join("vectors/hardware").exists(), "an emulated shard writes no hardware vectors");
            });
        }
    });
    let o = bash(&merge_ws, &steps[1], None);
    assert!(o.status.success(), "{}\n{}", steps[1], text(&o));
    assert!(text(&o).contains(&format!("{} kinds of run from {} shards", 2 * shard_forms().len(), shards.len())), "{}", text(&o));
    merged_nights_are_complete(&merge_ws.join("merged"), shards.len(), NIGHT_COUNT.parse().unwrap());
    // a shard that left nothing fails the merge instead of shrinking the night
    std::fs::remove_dir_all(merge_ws.join("shards/shard-1")).unwrap();
    std::fs::remove_dir_all(merge_ws.join("merged")).unwrap();
    let o = bash(&merge_ws, &steps[1], None);
    assert!(!o.status.success() && text(&o).contains("shards are missing"), "{}", text(&o));
}

/// Issue 17, class 12, and issue 39 item 10: a `c[]` operand's value depends only on the
/// item (seed, index), not on which words share a launch: the vector lines of two shards, or
/// of another batch size, are exactly those of the unsharded run, through the real patcher
/// and the emulated driver, for words reading the bank through operand 2 (`const`) and
/// through operand 3 (`const-c`, which once shared launches with `const` words of the same
/// bank word: 1,152 of 48,000 lines differed at seed 4242).
#[test]
fn constant_bank_inputs_do_not_depend_on_the_batch() {
    let seed = seed(4242).to_string();
    let d = tmp("const-shards");
    let run = |form: &str, shard: &str, batch: &str, name: &str| -> Vec<String> {
        let (out, vec) = (d.join(name), d.join(format!("{name}-v")));
        let mut args = vec!["run", "--seed", &seed, "--count", "400", "--inputs", "32", "--batch", batch, "--shard", shard];
        if form != "all" {
            args.extend(["--form", form]);
        }
        args.extend(["--out", out.to_str().unwrap(), "--vectors", vec.to_str().unwrap()]);
        let o = harness("devices=1", &args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let dir = vec.join("simulated");
        let mut lines: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flat_map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap().lines().map(str::to_string).collect::<Vec<_>>())
            .collect();
        lines.sort();
        lines
    };
    for form in ["const", "all"] {
        let one = run(form, "0/1", "200", &format!("{form}-one"));
        let mut parts = run(form, "0/2", "64", &format!("{form}-s0"));
        parts.extend(run(form, "1/2", "200", &format!("{form}-s1")));
        parts.sort();
        if form == "const" {
            assert_eq!(one.len(), 400 * 32);
        }
        let differ = one.iter().zip(&parts).filter(|(a, b)| a != b).count();
        assert!(one == parts, "{form}: the shards' vector lines differ from the unsharded run's ({differ} of {} lines)", one.len());
        if form == "all" {
            assert!(run(form, "0/1", "50", &format!("{form}-b50")) == one, "{form}: --batch 50 changes the lines");
        }
    }
}

/// Issue 39 item 13: detection runs in a child with a time limit, like a launch: a `cuInit`
/// that never returns, a driver that segfaults and a device count of 2^31 - 1 are each a
/// problem reported (`gpu-info` exit 0, `run --require-gpu` exit 2), never a hang or a crash.
#[test]
fn a_hanging_crashing_or_lying_driver_is_reported_not_waited_on() {
    let d = tmp("detect-hostile");
    // the fake library is built (by cargo, once per test process) before any clock starts:
    // its build is not the detection's time
    fake_lib();
    for (config, want) in [
        ("init=hang", "driver detection did not finish within 1.0 s"),
        ("init=segv", "driver detection crashed (killed by signal 11)"),
        ("devices=2147483647", "the driver reports 2147483647 devices"),
    ] {
        let t0 = std::time::Instant::now();
        let o = harness(config, &["gpu-info", "--timeout", "1"]);
        let t = text(&o);
        assert!(o.status.success() && t.contains("no usable GPU") && t.contains(want), "{config}: {t}");
        let out = d.join(config.replace('=', "-"));
        let o = harness(config, &["run", "--require-gpu", "--count", "8", "--timeout", "1", "--detect-timeout", "1", "--out", out.to_str().unwrap()]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{config}: {t}");
        assert!(t.contains(want) && !t.contains("panicked"), "{config}: {t}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(30), "{config}: {:?}", t0.elapsed());
    }
}

/// Issue 39 item 9: a run begun on the simulated executor is not resumed on the emulated
/// driver (which would credit the driver with every journaled result), nor the other way;
/// resumed on its own executor, it completes.
#[test]
fn a_run_is_resumed_only_on_the_executor_that_began_it() {
    let d = tmp("resume-executor");
    let out = d.join("r");
    let args = ["run", "--seed", "9", "--count", "64", "--inputs", "32", "--batch", "16", "--out", out.to_str().unwrap()];
    let simulated = |extra: &[&str]| Command::new(BIN).current_dir(root()).args(args).args(extra).env("HMUL2_FAKE_EXECUTOR", "ok").output().unwrap();
    assert_eq!(simulated(&["--stop-after-batches", "2"]).status.code(), Some(2));
    let journal = std::fs::read(out.join("journal.jsonl")).unwrap();
    let o = harness("", &[&args[..], &["--resume"]].concat());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("executor \"simulated\" vs this run's \"emulated:hmul2-fake-cuda"), "{t}");
    assert_eq!(std::fs::read(out.join("journal.jsonl")).unwrap(), journal, "the journal is left as it is");
    let o = simulated(&["--resume"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(summary(&out)["totals"]["instructions"], 64);
}

/// Issue 41 item 3: HSET2 and HSETP2 run through the driver on the batch and single roads,
/// HSETP2's predicate results read back and compared (every input of every word whose
/// results are defined), and its vector lines carry `expect_pred` that `verify` replays;
/// a device whose HSETP2 leaves P0 wrong after it (injected: `pred-flip-if`) is a mismatch
/// on every compared input, where the destination (RZ: none) agrees.
#[test]
fn hsetp2_predicate_results_come_back_and_a_wrong_one_is_a_mismatch() {
    let seed = seed(43);
    let hsetp2 = format_hex(encode(&Inst::of(Op::Hsetp2, 0, 1, Operand2::Reg(2))).unwrap());
    // the opcode field (bits 0..8) and the register-form bit: every HSETP2 word
    let opcode = format_hex(0x1ff);
    let hsetp2_op = format_hex(parse_hex(&hsetp2).unwrap() & 0x1ff);
    for road in ["batch", "single"] {
        let d = tmp(&format!("hsetp2-{road}"));
        let (out, vec) = (d.join("r"), d.join("v"));
        let args = ["run", "--seed", &seed.to_string(), "--count", "40", "--instruction", "HSET2,HSETP2", "--inputs", "32", "--road", road, "--out"];
        let o = harness("", &[&args[..], &[out.to_str().unwrap(), "--vectors", vec.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(0), "{road}: {}", text(&o));
        let s = summary(&out);
        let n = |t: &Value, k: &str| t[k].as_u64().unwrap();
        let by_form = s["by_form"].as_object().unwrap();
        let compared = |op: &str| by_form.iter().filter(|(f, _)| f.starts_with(&format!("{op}_"))).map(|(_, t)| n(t, "compared")).sum::<u64>();
        assert!(compared("HSET2") > 0 && compared("HSETP2") > 0, "{road}: {by_form:?}");
        assert_eq!(s["software_checks"]["verify"]["ok"], true, "{road}: {}", s["software_checks"]);
        // HSETP2's lines record the predicates after; HSET2's (no predicate result) none
        let body = std::fs::read_to_string(vec.join("simulated").read_dir().unwrap().next().unwrap().unwrap().path()).unwrap();
        let mut p_lines = 0;
        for l in body.lines() {
            let v = hmul2_harness::vectors::parse_line(l).unwrap();
            let op = decode(v.encoding).unwrap().op;
            assert_eq!(v.expect_pred.is_some(), op == Op::Hsetp2, "{road}: {l}");
            p_lines += v.expect_pred.is_some() as usize;
        }
        assert!(p_lines > 0);
        let o = Command::new(BIN).arg("verify").arg(vec.join("simulated")).output().unwrap();
        assert!(o.status.success(), "{road}: {}", text(&o));
        // a wrong predicate after every HSETP2
        let bad = d.join("bad");
        let o = harness(&format!("pred-flip-if:{opcode}:{hsetp2_op}"), &[&args[..], &[bad.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(1), "{road}: {}", text(&o));
        let s = summary(&bad);
        let ms = s["mismatches"].as_array().unwrap();
        assert!(!ms.is_empty());
        for f in ms {
            assert!(f["text"].as_str().unwrap().starts_with("HSETP2") || f["text"].as_str().unwrap().contains(" HSETP2"), "{road}: only HSETP2 is wrong: {f}");
            assert!(f["detail"].as_str().unwrap().contains("the predicates P0..P6 after are"), "{road}: {f}");
            assert_eq!((f["expected"].as_str(), f["got"].as_str()), (Some("0x00000000"), Some("0x00000000")), "{road}: {f}");
        }
        let by_form = s["by_form"].as_object().unwrap();
        for (f, t) in by_form.iter().filter(|(f, _)| f.starts_with("HSETP2_")) {
            assert_eq!(n(t, "mismatches"), n(t, "compared"), "{road}: {f}: every compared input of HSETP2 differs: {t}");
        }
        assert!(by_form.iter().filter(|(f, _)| f.starts_with("HSET2_")).all(|(_, t)| n(t, "mismatches") == 0), "{road}: {by_form:?}");
    }
}
