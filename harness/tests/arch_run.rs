//! `--arch` on the commands that build and run kernels, through the emulated driver
//! (`harness/fake-cuda`, its device's compute capability set with `cc=`): `build-kernel
//! --arch` writes that architecture's cubin, `run` takes the GPU's architecture when none is
//! named, refuses one that disagrees with the GPU before any launch, and records the
//! architecture in its summary; a device of one architecture does not load another's cubin.
//! The simulated executor (`HMUL2_FAKE_EXECUTOR`) is of the run's architecture too.

use crate::common::{self, summary, text, tmp};
use crate::fake_driver::harness;
use hmul2_harness::isa::{encode, format_hex, parse, Op};
use hmul2_harness::target::Target;

#[test]
fn build_kernel_writes_the_named_architectures_cubin_and_refuses_unknown_ones() {
    let d = tmp("arch-build-kernel");
    for (arg, t) in [("sm_86", &Target::SM86), ("SM120", &Target::SM120), ("SM90", &Target::SM90)] {
        let out = d.join(arg);
        let o = common::bin()
            .args(["build-kernel", "--seed", "3", "--count", "16", "--threads", "32", "--arch", arg, "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{arg}: {}", text(&o));
        assert!(text(&o).contains(&format!("for {t}")), "{}", text(&o));
        let cubin = std::fs::read(out.join("kernel.cubin")).unwrap();
        assert_eq!(u32::from_le_bytes(cubin[48..52].try_into().unwrap()), t.e_flags(), "{arg}");
        assert_eq!(hmul2_harness::kernel::elf::image(&cubin).unwrap().target, t);
        let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        // an SM90 manifest is as it was (no arch key), another names its architecture
        assert_eq!(m.get("arch").and_then(|a| a.as_str()).unwrap_or("SM90"), t.nvdisasm);
        assert_eq!(m.get("arch").is_some(), t != Target::DEFAULT);
    }
    for bad in ["SM75", "sm90", "sm_100a"] {
        let o = common::bin().args(["build-kernel", "--count", "4", "--arch", bad, "--out", d.join("bad").to_str().unwrap()]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("--arch") && text(&o).contains("sm_90"), "{}", text(&o));
        assert!(!d.join("bad").exists());
    }
}

#[test]
fn a_run_takes_the_gpus_architecture_and_refuses_another_before_any_launch() {
    let d = tmp("arch-run");
    let run = |cc: &str, extra: &[&str], out: &std::path::Path| {
        let mut args = vec!["run", "--seed", "40", "--count", "24", "--batch", "8", "--inputs", "32", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        harness(&format!("cc={cc}"), &args)
    };
    // an SM86 device: the run is SM86's, every word compared, none refused
    let out = d.join("sm86");
    let o = run("8.6", &[], &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = summary(&out);
    assert_eq!(s["arch"], "SM86", "{}", text(&o));
    assert_eq!(s["config"]["arch"], "SM86");
    assert_eq!(s["hardware"]["simulated"], true);
    assert_eq!(s["totals"]["instructions"], 24);
    assert_eq!(s["totals"]["mismatches"], 0);
    assert_eq!(s["totals"]["faults"], 0);
    assert_eq!(s["totals"]["not_runnable"], 0, "{}", s["totals"]);
    assert!(s["totals"]["compared"].as_u64().unwrap() > 0);
    // its vectors name the architecture (an SM90 run's lines have no arch key: SM90)
    let o = run("8.6", &["--vectors", d.join("v86").to_str().unwrap()], &d.join("sm86-vectors"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let f = std::fs::read_dir(d.join("v86/simulated")).unwrap().next().unwrap().unwrap().path();
    let body = std::fs::read_to_string(f).unwrap();
    assert!(body.lines().count() > 0 && body.lines().all(|l| l.contains(",\"arch\":\"SM86\",\"origin\":")), "{}", &body[..body.len().min(400)]);
    let o = common::bin().arg("verify").arg(d.join("v86/simulated")).output().unwrap();
    assert!(o.status.success(), "the SM86 vectors replay through the reference: {}", text(&o));
    // the same, named: SM86 and sm_86 alike
    let named = d.join("named");
    let o = run("8.6", &["--arch", "sm_86"], &named);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(summary(&named)["arch"], "SM86");
    // --arch that disagrees with the device: refused before anything runs or is written
    let wrong = d.join("wrong");
    let o = run("8.6", &["--arch", "SM90"], &wrong);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--arch SM90") && text(&o).contains("is SM86"), "{}", text(&o));
    assert!(!text(&o).contains("preflight"), "nothing launched: {}", text(&o));
    assert!(!wrong.join("journal.jsonl").exists());
    // an SM90 device and no --arch: SM90, as before
    let sm90 = d.join("sm90");
    let o = run("9.0", &[], &sm90);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(summary(&sm90)["arch"], "SM90");
    assert!(summary(&sm90)["config"].get("arch").is_none(), "an SM90 run's options are as before");
    // resuming a run on a device of another architecture is refused (its options differ)
    let o = run("8.9", &["--resume"], &out);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(summary(&out)["arch"], "SM86", "the SM86 run's report is kept");
}

#[test]
fn without_a_gpu_the_named_architecture_is_recorded_and_what_it_lacks_is_refused() {
    let d = tmp("arch-no-gpu");
    let no_gpu = |args: &[&str]| common::bin().args(args).env("CUDA_VISIBLE_DEVICES", "").env_remove("HMUL2_FAKE_EXECUTOR").output().unwrap();
    let out = d.join("sm100");
    let o = no_gpu(&["run", "--seed", "5", "--count", "8", "--inputs", "32", "--arch", "SM100", "--out", out.to_str().unwrap()]);
    assert!(text(&o).contains("no usable GPU") || text(&o).contains("no hardware results"), "{}", text(&o));
    assert_eq!(summary(&out)["arch"], "SM100");
    for (extra, want) in [(&["--form", "const"][..], "SM100 has no such form"), (&["--instruction", "HFMA2.MMA"][..], "no HFMA2.MMA")] {
        let x = d.join("x");
        let mut args = vec!["run", "--count", "8", "--inputs", "32", "--arch", "SM100", "--out", x.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = no_gpu(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{extra:?}: {}", text(&o));
    }
}

/// Each of the six architectures, on an emulated device of its own compute capability,
/// on the batch road, the single road (one case a module) and the scaffold road (ptxas's
/// build of the scaffolds for that architecture, one word rewritten): every result
/// compared, none differing, the run recorded as that architecture's. The scaffold road
/// runs `--words`: twelve words that architecture runs (`kernel::runnable_words_for`) and a
/// `c[0x3]` word; a word no scaffold of the architecture holds (register patterns without a
/// scaffold, UR forms; the `c[]` word on every architecture but SM90, as on its batch road)
/// is counted as not runnable and said, never run as another.
#[test]
fn every_architecture_runs_on_the_batch_single_and_scaffold_roads_through_the_driver() {
    use hmul2_harness::kernel::road::Road;
    let d = tmp("arch-roads");
    let mut ran = Vec::new();
    for t in Target::ALL {
        let (ma, mi) = t.compute_capability;
        // the scaffold road's words, and how many of them t's scaffolds refuse
        let ops = [Op::Hmul2, Op::Hadd2, Op::Hfma2];
        let mut words = hmul2_harness::kernel::runnable_words_for(t, 6, &ops, None, 12).unwrap();
        words.push(encode(&parse("HMUL2 R0, R1, c[0x3][0x40]").unwrap()).unwrap());
        let list = d.join(format!("{t}-words.txt"));
        std::fs::write(&list, words.iter().map(|&w| format!("{}\n", format_hex(w))).collect::<String>()).unwrap();
        let refused = words.iter().filter(|&&w| Road::Scaffold.runnable_for(t, Road::Scaffold.fit_for(t, w)).is_err()).count() as u64;
        for road in ["batch", "single", "scaffold"] {
            let out = d.join(format!("{t}-{road}"));
            let mut args = vec!["run", "--seed", "6", "--batch", "6", "--inputs", "32", "--road", road, "--out", out.to_str().unwrap()];
            args.extend(if road == "scaffold" { ["--words", list.to_str().unwrap()] } else { ["--count", "12"] });
            let o = harness(&format!("cc={ma}.{mi}"), &args);
            assert_eq!(o.status.code(), Some(0), "{t} {road}: {}", text(&o));
            let s = summary(&out);
            assert_eq!(s["arch"], t.nvdisasm, "{t} {road}");
            assert_eq!(s["road"], road);
            let n = |k: &str| s["totals"][k].as_u64().unwrap_or(u64::MAX);
            assert!(n("compared") > 0, "{t} {road}: {}", s["totals"]);
            if road != "scaffold" {
                assert_eq!((n("instructions"), n("mismatches"), n("faults"), n("not_runnable")), (12, 0, 0, 0), "{t} {road}: {}", s["totals"]);
                ran.push(format!("{t}/{road}: {} compared", n("compared")));
                continue;
            }
            assert_eq!((n("instructions"), n("mismatches"), n("faults")), (13, 0, 0), "{t} {road}: {}", s["totals"]);
            assert_eq!(n("not_runnable"), refused, "{t}: {}", s["totals"]);
            assert!(refused < 12, "{t}: {refused} of 13 words refused");
            // the c[] word: runs on SM90's scaffolds, is refused (and said) on the others
            let all = text(&o);
            let line = all.lines().find(|l| l.contains("-words.txt:13: ")).unwrap_or_default();
            assert_eq!(line.contains("not runnable on the scaffold road"), t != Target::DEFAULT, "{t}: {line:?}");
            ran.push(format!("{t}/scaffold: {} compared, {} not runnable", n("compared"), n("not_runnable")));
        }
    }
    eprintln!("{}", ran.join(", "));
}

/// Exhaustive mode on another architecture: the digest kernel of SM100, through the driver
/// of an SM100 device, and a word that architecture does not run (BF16_V2) refused first.
#[test]
fn exhaustive_mode_runs_another_architectures_digest_kernel() {
    let d = tmp("arch-exhaustive");
    let out = d.join("sm100");
    let args = |word: &'static str, out: &std::path::Path| -> Vec<String> {
        ["run", "--mode", "exhaustive", "--encoding", word, "--space-bits", "12", "--chunk-bits", "8", "--out", out.to_str().unwrap()]
            .map(String::from)
            .to_vec()
    };
    let a = args("0x000fe200000000000000000201007232", &out);
    let o = harness("cc=10.0", &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = summary(&out);
    assert_eq!((s["arch"].as_str(), s["mode"].as_str()), (Some("SM100"), Some("exhaustive")), "{s}");
    assert_eq!(s["totals"]["mismatches"], 0);
    assert_eq!(s["totals"]["faults"], 0);
    assert!(s["totals"]["compared"].as_u64().unwrap_or(0) >= 1 << 12, "{}", s["totals"]);
    // HMUL2.BF16_V2 R0, R1, R2 on SM90: SM86 ignores bit 85 (HMUL2 R0, R1, R2 there), and the
    // digest kernel reads words as SM90 does
    let a = args("0x000fe200002000000000000201007232", &d.join("bf16"));
    let o = harness("cc=8.6", &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("SM86 reads this one otherwise"), "{}", text(&o));
}

/// The target's encodings, end to end: an emulated SM86 run draws SM86's own words (among
/// them ones SM86 reads otherwise than SM90, as HMUL2 with bit 85 set: FP16 there, BF16_V2 on
/// SM90), the emulated device runs them as SM86 reads them and every result is the
/// reference's; `verify` replays its vectors as SM86 (their `arch`), refuses them under
/// `--arch SM90`, and without their `arch` key they pass as SM86 and fail as SM90.
#[test]
fn an_sm86_run_is_read_as_sm86_and_its_vectors_fail_as_sm90() {
    use hmul2_harness::kernel::reads_as_sm90;
    let d = tmp("arch-encodings");
    let (out, vectors) = (d.join("run"), d.join("v"));
    let seed = "86";
    eprintln!("seed: {seed}");
    let o = harness(
        "cc=8.6",
        &["run", "--seed", seed, "--count", "96", "--batch", "32", "--inputs", "32", "--vectors", vectors.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = summary(&out);
    assert_eq!(s["arch"], "SM86");
    let n = |k: &str| s["totals"][k].as_u64().unwrap_or(u64::MAX);
    assert_eq!((n("instructions"), n("mismatches"), n("faults")), (96, 0, 0), "{}", s["totals"]);
    assert!(n("compared") > 0, "{}", s["totals"]);
    // the oracle check judged the run's words with nvdisasm's SM86 (every one legal there)
    let oracle = &s["software_checks"]["oracle"];
    if oracle["ran"] == true {
        assert_eq!(
            (oracle["ok"].as_bool(), oracle["agreed_text"].as_u64(), oracle["agreed_illegal"].as_u64()),
            (Some(true), oracle["words"].as_u64(), Some(0)),
            "{oracle}"
        );
    }
    let f = std::fs::read_dir(vectors.join("simulated")).unwrap().next().unwrap().unwrap().path();
    let body = std::fs::read_to_string(&f).unwrap();
    let word = |l: &str| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        hmul2_harness::isa::parse_hex(v["encoding"].as_str().unwrap()).unwrap()
    };
    // words SM86 reads otherwise than SM90 (or SM90 not at all) ran, and their results are SM86's
    let differ: Vec<u128> = body.lines().map(word).filter(|&w| !reads_as_sm90(&Target::SM86, w)).collect();
    assert!(!differ.is_empty(), "no vector of a word SM86 reads otherwise than SM90");
    let bit85 = |w: u128| w >> 85 & 1 == 1 && hmul2_harness::isa::decode_for(&Target::SM86, w).is_ok_and(|i| i.op == hmul2_harness::isa::Op::Hmul2);
    assert!(body.lines().map(word).any(bit85), "no HMUL2 with bit 85 set (BF16_V2 on SM90) ran");
    let verify = |args: &[&str], p: &std::path::Path| common::bin().arg("verify").args(args).arg(p).output().unwrap();
    let o = verify(&[], &f);
    assert!(o.status.success(), "as SM86 (the lines' arch): {}", text(&o));
    let o = verify(&["--arch", "SM86"], &f);
    assert!(o.status.success(), "--arch SM86: {}", text(&o));
    let o = verify(&["--arch", "sm_90"], &f);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("invalid: the vector names arch SM86, but --arch SM90 was asked for"), "{}", text(&o));
    // the same lines without their arch: SM86's when asked for, wrong as SM90's
    let bare = d.join("bare.jsonl");
    std::fs::write(&bare, body.replace(",\"arch\":\"SM86\"", "")).unwrap();
    let o = verify(&["--arch", "SM86"], &bare);
    assert!(o.status.success(), "bare, --arch SM86: {}", text(&o));
    let o = verify(&[], &bare);
    assert_eq!(o.status.code(), Some(1), "bare lines read as SM90 must fail: {}", text(&o));
    assert!(text(&o).contains("mismatch:") || text(&o).contains("invalid:"), "{}", text(&o));
}

/// The simulated executor reads and computes a run's words as the run's architecture does
/// (`FakeBackend { target }`, its jobs naming the target): a simulated `run --arch SM86` of
/// words SM86 reads otherwise than SM90 (HSETP2 with SM90's BF16_V2 lane format, which SM86
/// ignores; HMNMX2 with SM90's `.IS_A`, ignored there; HMUL2 with SM90's BF16_V2 and INVALID1
/// formats, FP16 and `.F32` there) compares every result clean, its predicates SM86's
/// reading's, and its vector lines name SM86. The same words under `--arch SM90` are SM90's
/// reading, whose HSETP2 compares BF16 lanes: on NaN lanes of one format and not the other,
/// the two runs' predicates after differ. Were the executor to read them as SM90 and the
/// engine as SM86, those would be mismatches.
#[test]
fn a_simulated_run_reads_and_computes_its_words_as_its_architecture() {
    use hmul2_harness::kernel::reads_as_sm90;
    use hmul2_harness::reference::{preds_after_with, Policy};
    use hmul2_harness::vectors::{parse_line, Vector};
    let d = tmp("arch-simulated");
    let hsetp2 = 0x000fc200039040020000000201007234u128;
    let words = [hsetp2, 0x000fe200038000ae0000000201007240, 0x000fe200002000000000000201007232, 0x000fe200000040000000000201007232];
    assert!(words.iter().all(|&w| !reads_as_sm90(&Target::SM86, w)));
    let file = d.join("words.txt");
    std::fs::write(&file, words.map(format_hex).join("\n")).unwrap();
    let inputs = 256;
    let sim = |arch: &'static Target| -> Vec<(String, Vector)> {
        let (out, vectors) = (d.join(arch.nvdisasm), d.join(format!("{}-vectors", arch.nvdisasm)));
        let o = common::bin()
            .env("HMUL2_FAKE_EXECUTOR", "ok")
            .args(["run", "--words", file.to_str().unwrap(), "--seed", "3", "--inputs", &inputs.to_string(), "--arch", arch.nvdisasm])
            .args(["--vectors", vectors.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{arch}: {}", text(&o));
        let s = summary(&out);
        assert_eq!(s["arch"], arch.nvdisasm);
        assert_eq!(s["hardware"]["simulated"], true);
        let n = |k: &str| s["totals"][k].as_u64().unwrap_or(u64::MAX);
        let all = (words.len() * inputs) as u64;
        assert_eq!((n("instructions"), n("compared"), n("mismatches"), n("undefined")), (words.len() as u64, all, 0, 0), "{arch}: {}", s["totals"]);
        let f = std::fs::read_dir(vectors.join("simulated")).unwrap().next().unwrap().unwrap().path();
        let body = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<(String, Vector)> = body.lines().map(|l| (l.to_string(), parse_line(l).unwrap_or_else(|e| panic!("{e}: {l}")))).collect();
        assert_eq!(lines.len() as u64, all, "{arch}: every result a line");
        // each line's predicates after are the run's architecture's reading's, under its policy
        for (l, v) in &lines {
            let inst = hmul2_harness::isa::decode_for(arch, v.encoding).unwrap();
            let want = preds_after_with(Policy::for_target(arch), &inst, &v.inputs).unwrap();
            assert_eq!(v.expect_pred.unwrap_or(v.inputs.pred & 0x7f), want, "{arch}: {l}");
        }
        lines
    };
    let sm86 = sim(&Target::SM86);
    assert!(sm86.iter().all(|(l, _)| l.contains(",\"arch\":\"SM86\",\"origin\":\"simulated:")), "{}", sm86[0].0);
    let sm90 = sim(&Target::SM90);
    assert!(sm90.iter().all(|(l, _)| !l.contains("\"arch\"")), "{}", sm90[0].0);
    // the same inputs in both runs (drawn from the seed and the word's place): the readings differ
    let key = |v: &Vector| (v.encoding, v.inputs.a, v.inputs.b, v.inputs.d, v.inputs.pred);
    let preds90: std::collections::BTreeMap<_, _> = sm90.iter().map(|(_, v)| (key(v), v.expect_pred)).collect();
    assert_eq!(preds90.len(), sm86.len());
    let telling: Vec<&Vector> = sm86.iter().map(|(_, v)| v).filter(|v| preds90[&key(v)] != v.expect_pred).collect();
    assert!(!telling.is_empty() && telling.iter().all(|v| v.encoding == hsetp2), "{} lines tell SM86's reading from SM90's", telling.len());
}

/// One `--arch` parser: every command that takes it shows the same spellings in `--help`
/// (the architectures there are) and refuses a bad one with the same words.
#[test]
fn every_arch_option_shows_the_spellings_and_refuses_alike() {
    let names: Vec<&str> = Target::ALL.iter().map(|t| t.nvdisasm).collect();
    assert_eq!(hmul2_harness::commands::ARCH_VALUE, format!("{}|sm_NN", names.join("|")));
    let mut refusals = std::collections::BTreeSet::new();
    for cmd in ["decode", "encode", "generate", "oracle", "probe", "explain", "eval", "verify", "build-kernel", "run", "worker"] {
        let o = common::bin().args([cmd, "--help"]).output().unwrap();
        assert!(text(&o).contains(&format!("--arch <{}>", hmul2_harness::commands::ARCH_VALUE)), "{cmd} --help: {}", text(&o));
        let o = common::bin().args([cmd, "--arch", "SM75"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        let line = text(&o).lines().find(|l| l.contains("SM75")).unwrap_or_default().to_string();
        assert!(line.contains("sm_90"), "{cmd}: {}", text(&o));
        refusals.insert(line);
    }
    assert_eq!(refusals.len(), 1, "{refusals:#?}");
}
