//! `ladder`: what the GPU runs, asked one change at a time, and the road a device session
//! takes from the answers.
//!
//! The first GPU session ran one patched `HMUL2 R0, R1, R2` (one case, 32 threads) and
//! nothing bigger, and could not tell the word from the shape. Each rung here keeps that
//! proven shape and changes one thing: the threads, the cases, the modifier class of the
//! word, its scheduling bits, the road, the digest kernel. `ladder plan` writes the rungs
//! (`rungs.tsv`: name, what changes, the `run` options; `words/NAME.txt` for `--words`);
//! `ci/device-session` runs each under its own time and writes `results.tsv` (name, exit
//! status, seconds); `ladder verdict` reads both and writes `verdict.json` and
//! `verdict.txt` (KEY=VALUE lines for the script): the roads that work, cheapest first
//! (a road that fails later is left for the next at once), whether the digest kernel runs,
//! the random runs' scheduling bits and the operand forms a failed rung rules out. The
//! logic lives here, typed and tested; the script only runs what the plan names.

use crate::cli::{path_arg, CliError, CliResult};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct LadderArgs {
    #[command(subcommand)]
    pub cmd: LadderCmd,
}

#[derive(Subcommand)]
pub enum LadderCmd {
    /// Write the rungs: DIR/rungs.tsv (name, change, run options) and DIR/words/NAME.txt.
    Plan {
        #[arg(long, value_parser = path_arg)]
        dir: PathBuf,
    },
    /// Read DIR/rungs.tsv and DIR/results.tsv (name, rc, seconds); write DIR/verdict.json
    /// and DIR/verdict.txt, print the verdict.
    Verdict {
        #[arg(long, value_parser = path_arg)]
        dir: PathBuf,
        /// The architecture the session runs (SM86 or sm_86): the vectors step runs only
        /// the instructions and forms it has. Default: the GPU's (detected), SM90 without one.
        #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE)]
        arch: Option<&'static crate::target::Target>,
    },
}

/// A way onto the GPU (`run --road`), cheapest per case first.
pub const ROADS: [&str; 3] = ["batch", "single", "scaffold"];

/// The word every rung starts from: the preflight's, the one the H200 ran.
pub const BASE_WORD: &str = "HMUL2 R0, R1, R2";
/// Its encoding with the seed page's scheduling bits, for the digest rungs.
pub const BASE_HEX: &str = "0x000fe200000000000000000201007232";

/// What a rung runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum What {
    /// These words (SASS text), one case each, in batches of `batch`.
    Words { words: Vec<&'static str>, batch: usize },
    /// Random words of one instruction and form with the given `--control`.
    Random { instruction: &'static str, form: &'static str, count: usize, control: &'static str },
    /// The digest kernel (exhaustive mode) of the base word: 2^bits inputs in chunks of 2^8.
    Digest { space_bits: u32 },
}

/// One rung: the proven shape with one thing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rung {
    pub name: &'static str,
    /// What differs from `base`, in words.
    pub change: &'static str,
    pub road: &'static str,
    /// Threads a case (`--inputs`).
    pub threads: usize,
    pub what: What,
    /// The operand forms this rung speaks for: when it fails, random runs leave them out.
    pub forms: &'static [&'static str],
    /// More `run` options (the template).
    pub extra: &'static [&'static str],
}

fn words(name: &'static str, change: &'static str, w: &'static str, forms: &'static [&'static str]) -> Rung {
    Rung { name, change, road: "batch", threads: 32, what: What::Words { words: vec![w], batch: 1 }, forms, extra: &[] }
}

/// The ladder, in order: the proven shape first, then one change a rung.
pub fn rungs() -> Vec<Rung> {
    let two = What::Words { words: vec![BASE_WORD, "HMUL2 R3, R4, R5"], batch: 2 };
    let mut v = vec![
        words("base", "nothing: the shape that ran on the H200 (batch kernel, 1 case, 32 threads)", BASE_WORD, &[]),
        Rung { name: "threads256", change: "256 threads", threads: 256, ..words("", "", BASE_WORD, &[]) },
        Rung { name: "two-cases", change: "two cases in one kernel", what: two, ..words("", "", BASE_WORD, &[]) },
        Rung {
            name: "nops",
            change: "`.text` grown by 2048 NOPs only (32 KiB, never run; about a 256-case kernel's size)",
            extra: &["--pad-nops", "2048"],
            ..words("", "", BASE_WORD, &[])
        },
        Rung {
            name: "batch256",
            change: "the batch road's size: 256 cases x 256 threads (random HMUL2 R,R,R, fixed bits)",
            threads: 256,
            what: What::Random { instruction: "HMUL2", form: "rrr", count: 256, control: "fixed" },
            ..words("", "", BASE_WORD, &[])
        },
        words("ftz", "modifier class .FTZ", "HMUL2.FTZ R0, R1, R2", &[]),
        words("fmz", "modifier class .FMZ", "HMUL2.FMZ R0, R1, R2", &[]),
        words("sat", "modifier class .SAT", "HMUL2.SAT R0, R1, R2", &[]),
        words("bf16", "modifier class .BF16_V2", "HMUL2.BF16_V2 R0, R1, R2", &[]),
        words("const", "operand class c[] (constant bank 3)", "HMUL2 R0, R1, c[0x3] [0x0]", &["const", "const-c"]),
        words("constx", "operand class cx[] (bindless bank)", "HMUL2 R0, R1, cx[UR4] [0x0]", &["constx", "constx-c"]),
        words("ur", "operand class UR (uniform register)", "HMUL2 R0, R1, UR4", &["ur", "ur-c"]),
        words("imm", "operand class immediate", "HMUL2 R0, R1, 1, 1", &["imm", "imm-c"]),
        words("hadd2", "instruction HADD2", "HADD2 R0, R1, R2", &[]),
        words("hfma2", "instruction HFMA2 (three sources)", "HFMA2 R0, R1, R2, R3", &["rrrr"]),
        words("hfma2-mma", "instruction HFMA2.MMA", "HFMA2.MMA R0, R1, R2, R3", &[]),
        Rung {
            name: "control-fixed",
            change: "a random HMUL2 R,R,R word, fixed scheduling bits (stall 1, nothing else)",
            what: What::Random { instruction: "HMUL2", form: "rrr", count: 1, control: "fixed" },
            ..words("", "", BASE_WORD, &[])
        },
        Rung {
            name: "control-drawn",
            change: "the same word with its drawn scheduling bits (scoreboards, waits, stall, reuse)",
            what: What::Random { instruction: "HMUL2", form: "rrr", count: 1, control: "drawn" },
            ..words("", "", BASE_WORD, &[])
        },
    ];
    for road in ["single", "scaffold"].into_iter().filter(|r| *r == "single" || run_has_roads()) {
        v.push(Rung {
            name: if road == "single" { "road-single" } else { "road-scaffold" },
            change: if road == "single" { "the single road (one case a module)" } else { "the scaffold road (ptxas's kernel, one word patched)" },
            road,
            ..words("", "", BASE_WORD, &[])
        });
    }
    v.push(Rung {
        name: "template-12.9",
        change: "the template from ptxas 12.9 (no EIATTR_MERCURY_ISA_VERSION)",
        extra: &["--template", "12.9"],
        ..words("", "", BASE_WORD, &[])
    });
    v.push(Rung {
        name: "digest",
        change: "the digest kernel, 1 block x 1 iteration",
        what: What::Digest { space_bits: 8 },
        threads: 256,
        ..words("", "", BASE_WORD, &[])
    });
    v.push(Rung {
        name: "digest16",
        change: "the digest kernel, 16 blocks",
        what: What::Digest { space_bits: 12 },
        threads: 256,
        ..words("", "", BASE_WORD, &[])
    });
    // what decides a road first, so that a short budget still reaches it
    v.sort_by_key(|r| FIRST.iter().position(|n| *n == r.name).unwrap_or(FIRST.len()));
    v
}

/// The rungs run first, in this order; the others follow in [`rungs`]' order.
const FIRST: [&str; 8] = ["base", "road-single", "two-cases", "batch256", "digest", "digest16", "threads256", "nops"];

/// Changes the issue asks for that this build cannot make yet, and why: said in every
/// verdict, never passed over in silence.
pub const NOT_ASKED: [(&str, &str); 0] = [];

/// Whether this build's `run` takes `--road` (the roads of `kernel::road`). Without it the
/// single road is the batch kernel holding one case (the same one-case, 32-thread shape, a
/// module a case) and the scaffold road does not exist: its rung is not asked.
pub fn run_has_roads() -> bool {
    use clap::Args as _;
    crate::run::RunArgs::augment_args(clap::Command::new("run")).get_arguments().any(|a| a.get_long() == Some("road"))
}

/// The `run` options that put random cases on `road`: its batch size and threads a case.
pub fn road_args(road: &str) -> Vec<String> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
    match road {
        "batch" => s(&["--batch", "256", "--inputs", "256"]),
        r if run_has_roads() => s(&["--road", r, "--batch", "1", "--inputs", "32"]),
        _ => s(&["--batch", "1", "--inputs", "32"]),
    }
}

impl Rung {
    /// The `run` options of this rung (besides `--require-gpu --seed --timeout --out`);
    /// `words` is where its words file lies.
    pub fn args(&self, words: &Path) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        match &self.what {
            What::Words { batch, .. } => {
                a.extend(["--words".into(), words.display().to_string(), "--batch".into(), batch.to_string()]);
            }
            What::Random { instruction, form, count, control } => {
                for (k, v) in [
                    ("--instruction", instruction.to_string()),
                    ("--form", form.to_string()),
                    ("--count", count.to_string()),
                    ("--batch", count.to_string()),
                    ("--control", control.to_string()),
                ] {
                    a.extend([k.to_string(), v]);
                }
            }
            What::Digest { space_bits } => {
                for (k, v) in [
                    ("--mode", "exhaustive".to_string()),
                    ("--encoding", BASE_HEX.into()),
                    ("--space-bits", space_bits.to_string()),
                    ("--chunk-bits", "8".into()),
                ] {
                    a.extend([k.to_string(), v]);
                }
                return a;
            }
        }
        a.extend(["--inputs".into(), self.threads.to_string()]);
        if self.road != "batch" && run_has_roads() {
            a.extend(["--road".into(), self.road.into()]);
        }
        a.extend(self.extra.iter().map(|x| x.to_string()));
        a
    }
}

/// Write the plan into `dir`: rungs.tsv and words/NAME.txt.
pub fn write_plan(dir: &Path) -> Result<Vec<Rung>, String> {
    let wdir = dir.join("words");
    std::fs::create_dir_all(&wdir).map_err(|e| format!("{}: {e}", wdir.display()))?;
    let rungs = rungs();
    let mut tsv = String::from("# name\tchange\trun options (tab-separated)\n");
    for r in &rungs {
        let file = wdir.join(format!("{}.txt", r.name));
        if let What::Words { words, .. } = &r.what {
            // encoded here, so the file holds exactly the words asked (hex, text as a comment)
            let mut text = String::new();
            for w in words {
                let inst = crate::isa::parse(w).map_err(|e| format!("rung {}: {w:?}: {e}", r.name))?;
                let hex = crate::isa::encode(&inst).map_err(|e| format!("rung {}: {w:?}: {e}", r.name))?;
                text.push_str(&format!("{}  # {w}\n", crate::isa::format_hex(hex)));
            }
            std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        tsv.push_str(&format!("{}\t{}\t{}\n", r.name, r.change, r.args(&file).join("\t")));
    }
    let f = dir.join("rungs.tsv");
    std::fs::write(&f, tsv).map_err(|e| format!("{}: {e}", f.display()))?;
    Ok(rungs)
}

/// One rung's outcome from results.tsv.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub name: String,
    pub change: String,
    /// The run's exit status; None when the rung did not run (the time was spent).
    pub rc: Option<i32>,
    pub seconds: Option<f64>,
}

impl Outcome {
    fn passed(&self) -> bool {
        self.rc == Some(0)
    }
}

/// What the session does next.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Verdict {
    /// The architecture the session runs, in nvdisasm's spelling (`SM90`).
    pub arch: String,
    /// Roads whose rungs passed, cheapest per case first: the session takes the first and
    /// leaves it for the next at its first failed launch.
    pub roads: Vec<String>,
    /// Why each road is in or out.
    pub why: Vec<String>,
    /// The template every road patches (`run --template`): 12.9 only where the base shape
    /// failed from 13.0's template and ran from 12.9's.
    pub template: String,
    /// Whether the digest kernel ran (the 2^32 sweeps are worth their time).
    pub digest: bool,
    /// The random runs' `--control`: drawn when the drawn word ran, else fixed.
    pub control: String,
    /// Operand forms a failed rung rules out.
    pub skip_forms: Vec<String>,
    /// Modifier and instruction rungs that failed (their words still run; said here).
    pub failed_classes: Vec<String>,
    pub rungs: Vec<Outcome>,
    /// What the ladder could not ask in this build, and why.
    pub not_asked: Vec<String>,
}

/// Decide from the rungs' outcomes (by name; a rung absent or not run has not passed).
pub fn verdict(plan: &[Rung], outcomes: &[Outcome]) -> Verdict {
    let ok = |n: &str| outcomes.iter().any(|o| o.name == n && o.passed());
    let said =
        |n: &str| outcomes.iter().find(|o| o.name == n).map_or("did not run".to_string(), |o| o.rc.map_or("did not run".into(), |rc| format!("rc {rc}")));
    let mut roads = Vec::new();
    let mut why = Vec::new();
    let batch_rungs = ["base", "threads256", "two-cases", "nops", "batch256"];
    let failed: Vec<&str> = batch_rungs.iter().copied().filter(|n| !ok(n)).collect();
    if failed.is_empty() {
        roads.push("batch".to_string());
        why.push("batch: the base shape, 256 threads, two cases, a grown .text and 256 cases all ran".into());
    } else {
        why.push(format!("batch: left out: {}", failed.iter().map(|n| format!("{n} {}", said(n))).collect::<Vec<_>>().join(", ")));
    }
    for (road, rung) in [("single", "road-single"), ("scaffold", "road-scaffold")] {
        if ok(rung) {
            roads.push(road.to_string());
            why.push(format!("{road}: the preflight word ran on it ({rung})"));
        } else {
            why.push(format!("{road}: left out: {rung} {}", said(rung)));
        }
    }
    let template = if !ok("base") && ok("template-12.9") {
        // the proven shape ran only from ptxas 12.9's template: the one-case road from it
        roads = vec!["single".to_string()];
        why.push("template: 12.9: the base shape failed from ptxas 13.0's template and ran from 12.9's; the one-case road from it".into());
        "12.9"
    } else {
        "13.0"
    }
    .to_string();
    let digest = ok("digest") && ok("digest16");
    let control = if ok("control-drawn") { "drawn" } else { "fixed" }.to_string();
    let mut skip_forms = Vec::new();
    let mut failed_classes = Vec::new();
    for r in plan
        .iter()
        .filter(|r| matches!(r.what, What::Words { batch: 1, .. }) && r.road == "batch" && !["base", "threads256", "nops", "template-12.9"].contains(&r.name))
    {
        // a rung that did not run rules nothing out (the budget, not the GPU, stopped it)
        if outcomes.iter().any(|o| o.name == r.name && o.rc.is_some_and(|rc| rc != 0)) {
            failed_classes.push(format!("{} ({}): {}", r.name, r.change, said(r.name)));
            skip_forms.extend(r.forms.iter().map(|f| f.to_string()));
        }
    }
    let rungs = plan
        .iter()
        .map(|r| {
            let o = outcomes.iter().find(|o| o.name == r.name);
            Outcome { name: r.name.into(), change: r.change.into(), rc: o.and_then(|o| o.rc), seconds: o.and_then(|o| o.seconds) }
        })
        .collect();
    Verdict {
        arch: crate::target::Target::DEFAULT.nvdisasm.to_string(),
        roads,
        why,
        template,
        digest,
        control,
        skip_forms,
        failed_classes,
        rungs,
        not_asked: NOT_ASKED.iter().map(|(n, w)| format!("{n}: {w}")).collect(),
    }
}

/// results.tsv: `name<TAB>rc<TAB>seconds` a line (`#` lines and blank ones skipped).
pub fn read_results(path: &Path) -> Result<Vec<Outcome>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut v = Vec::new();
    for (k, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#')) {
        let mut f = line.split('\t');
        let bad = || format!("{}:{}: want name<TAB>rc<TAB>seconds, got {line:?}", path.display(), k + 1);
        let name = f.next().filter(|n| !n.is_empty()).ok_or_else(bad)?.to_string();
        let rc = f.next().ok_or_else(bad)?.trim().parse::<i32>().map_err(|_| bad())?;
        let seconds = f.next().map(|s| s.trim().parse::<f64>().map_err(|_| bad())).transpose()?;
        v.push(Outcome { name, change: String::new(), rc: Some(rc), seconds });
    }
    Ok(v)
}

impl Verdict {
    /// KEY=VALUE lines for `ci/device-session` (values without quotes or newlines).
    pub fn env_text(&self) -> String {
        let mut t =
            format!("ROADS={}\nDIGEST={}\nCONTROL={}\nSKIP_FORMS={}\n", self.roads.join(" "), self.digest as u8, self.control, self.skip_forms.join(" "));
        for r in ROADS {
            t.push_str(&format!("ARGS_{r}={} --template {}\n", road_args(r).join(" "), self.template));
        }
        t.push_str(&format!("UNITS={}\n", self.units().join(" ")));
        t.push_str(&format!("ARCH={}\n", self.arch));
        t
    }

    /// The verdict for a session on `target`: its units are the instructions and forms the
    /// target has ([`Verdict::units`]; SM100 and SM120 have no HFMA2.MMA and no c[] or cx[]
    /// forms).
    pub fn for_target(mut self, target: &crate::target::Target) -> Verdict {
        self.arch = target.nvdisasm.to_string();
        self
    }

    /// The random runs of the vectors step, `INSTRUCTION:FORM` (every form of each of the
    /// four instructions), less the forms a failed rung rules out: one run each, so every
    /// instruction gets its share of vectors in every form whatever the generator draws.
    pub fn units(&self) -> Vec<String> {
        let target = crate::target::Target::parse(&self.arch).unwrap_or(crate::target::Target::DEFAULT);
        crate::reference::IMPLEMENTED
            .iter()
            .flat_map(|&op| op.forms_for(target).map(move |f| (op, f)))
            .filter(|(_, f)| !self.skip_forms.iter().any(|s| s == f.cli_name()))
            .map(|(op, f)| format!("{}:{}", op.mnemonic(), f.cli_name()))
            .collect()
    }

    /// What a person reads in the summary.
    pub fn text(&self) -> String {
        let mut t = String::new();
        for o in &self.rungs {
            let rc = o.rc.map_or("--".to_string(), |r| r.to_string());
            let s = o.seconds.map_or(String::new(), |s| format!("{s:.1}s"));
            t.push_str(&format!("rung {:<14} rc {rc:<4} {s:>7}  {}\n", o.name, o.change));
        }
        let road = self.roads.first().map_or("none: no road ran the preflight word; no random run is worth its time".to_string(), |r| r.clone());
        t.push_str(&format!("road: {road} (usable, cheapest first: {})\n", if self.roads.is_empty() { "none".into() } else { self.roads.join(", ") }));
        for w in &self.why {
            t.push_str(&format!("  {w}\n"));
        }
        t.push_str(&format!("template: ptxas {}\n", self.template));
        t.push_str(&format!("architecture: {}\n", self.arch));
        t.push_str(&format!(
            "digest kernel: {}\n",
            if self.digest { "ran (the exhaustive steps follow)" } else { "did not run: the exhaustive steps are skipped" }
        ));
        t.push_str(&format!("scheduling bits for random runs: {}\n", self.control));
        if !self.skip_forms.is_empty() {
            t.push_str(&format!("forms left out of random runs: {}\n", self.skip_forms.join(" ")));
        }
        for c in &self.failed_classes {
            t.push_str(&format!("failed rung: {c}\n"));
        }
        for n in &self.not_asked {
            t.push_str(&format!("not asked: {n}\n"));
        }
        t
    }
}

/// The architecture of the first usable GPU (detected in a child, as `run` does), SM90
/// without one.
fn detected_target() -> &'static crate::target::Target {
    let Ok(exe) = std::env::current_exe() else { return crate::target::Target::DEFAULT };
    let det = crate::gpu::detect::detect_in_worker(&exe, std::time::Duration::from_secs(30), &[]);
    det.devices.iter().find_map(|d| d.target()).filter(|_| det.problem.is_none()).unwrap_or(crate::target::Target::DEFAULT)
}

pub fn ladder(a: LadderArgs) -> CliResult {
    match a.cmd {
        LadderCmd::Plan { dir } => {
            let rungs = write_plan(&dir).map_err(CliError::input)?;
            crate::outln!("ladder: {} rungs in {}", rungs.len(), dir.join("rungs.tsv").display())?;
        }
        LadderCmd::Verdict { dir, arch } => {
            let outcomes = read_results(&dir.join("results.tsv")).map_err(CliError::input)?;
            let target = match arch {
                Some(t) => t,
                None => detected_target(),
            };
            let v = verdict(&rungs(), &outcomes).for_target(target);
            let json = serde_json::to_string_pretty(&v).map_err(|e| CliError::input(format!("verdict: {e}")))?;
            for (name, text) in [("verdict.json", json + "\n"), ("verdict.txt", v.env_text())] {
                let f = dir.join(name);
                std::fs::write(&f, text).map_err(|e| CliError::input(format!("{}: {e}", f.display())))?;
            }
            crate::out!("{}", v.text())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(failing: &[&str]) -> Vec<Outcome> {
        rungs()
            .iter()
            .map(|r| Outcome { name: r.name.into(), change: String::new(), rc: Some(if failing.contains(&r.name) { 1 } else { 0 }), seconds: Some(1.0) })
            .collect()
    }

    #[test]
    fn every_rung_word_parses_is_runnable_and_names_are_unique() {
        let dir = std::env::temp_dir().join(format!("hmul2-ladder-{}", std::process::id()));
        let plan = write_plan(&dir).unwrap();
        let mut names: Vec<&str> = plan.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), plan.len());
        for r in &plan {
            if let What::Words { words, batch } = &r.what {
                assert_eq!(words.len(), *batch, "{}: one batch", r.name);
                let text = std::fs::read_to_string(dir.join("words").join(format!("{}.txt", r.name))).unwrap();
                for line in text.lines() {
                    let w = crate::isa::parse_hex(line.split_whitespace().next().unwrap()).unwrap();
                    assert_eq!(crate::kernel::runnable(w), Ok(()), "{}: {line}", r.name);
                }
            }
        }
        let tsv = std::fs::read_to_string(dir.join("rungs.tsv")).unwrap();
        assert!(tsv.contains("road-single\t"));
        assert_eq!(tsv.contains("--road\tsingle"), run_has_roads());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn all_passing_takes_the_batch_road_with_drawn_bits_and_the_digest() {
        let v = verdict(&rungs(), &outcomes(&[]));
        assert_eq!(v.roads, if run_has_roads() { &["batch", "single", "scaffold"][..] } else { &["batch", "single"][..] });
        assert!(v.digest && v.control == "drawn" && v.skip_forms.is_empty() && v.failed_classes.is_empty());
        assert!(
            v.env_text()
                .starts_with("ROADS=batch single scaffold\nDIGEST=1\nCONTROL=drawn\nSKIP_FORMS=\nARGS_batch=--batch 256 --inputs 256 --template 13.0\n")
                || !run_has_roads()
        );
    }

    #[test]
    fn the_h200_as_seen_takes_the_single_road_without_the_digest() {
        // two cases and more fail, the digest kernel faults, drawn bits were never tried
        let v = verdict(&rungs(), &outcomes(&["two-cases", "batch256", "digest", "digest16", "control-drawn"]));
        assert_eq!(v.roads[0], "single");
        assert!(!v.digest && v.control == "fixed");
        assert!(v.why[0].contains("two-cases rc 1") && v.why[0].contains("batch256 rc 1"), "{:?}", v.why);
        assert!(v.text().contains("road: single"));
    }

    #[test]
    fn a_base_that_runs_only_from_the_12_9_template_takes_the_one_case_road_from_it() {
        let v = verdict(&rungs(), &outcomes(&["base", "threads256", "two-cases", "batch256", "road-single", "road-scaffold"]));
        assert_eq!((v.roads.clone(), v.template.as_str()), (vec!["single".to_string()], "12.9"));
        assert!(v.env_text().contains("--template 12.9\n"));
        assert_eq!(verdict(&rungs(), &outcomes(&["template-12.9"])).template, "13.0", "the 13.0 template ran: kept");
        assert_eq!(verdict(&rungs(), &outcomes(&[])).template, "13.0");
    }

    #[test]
    fn a_failed_class_rung_leaves_its_forms_out_and_a_missing_rung_has_not_passed() {
        let mut o = outcomes(&["constx", "sat"]);
        o.retain(|o| o.name != "road-scaffold");
        let v = verdict(&rungs(), &o);
        assert_eq!(v.skip_forms, ["constx", "constx-c"]);
        assert_eq!(v.failed_classes.len(), 2);
        assert_eq!(v.roads, ["batch", "single"]);
        assert!(v.why.iter().any(|w| w == "scaffold: left out: road-scaffold did not run"));
        let none = verdict(&rungs(), &[]);
        assert!(none.roads.is_empty() && !none.digest);
        assert!(none.text().contains("road: none"));
        assert_eq!(none.not_asked.len(), NOT_ASKED.len());
        // a class rung the budget never reached rules its forms out no more than a passed one
        let mut o = outcomes(&[]);
        o.retain(|o| o.name != "ur");
        assert!(verdict(&rungs(), &o).skip_forms.is_empty());
    }

    #[test]
    fn the_rungs_that_decide_a_road_come_first() {
        let names: Vec<&str> = rungs().iter().map(|r| r.name).collect();
        assert_eq!(names[..FIRST.len()], FIRST);
    }

    #[test]
    fn another_architecture_runs_what_it_has() {
        let v = verdict(&rungs(), &outcomes(&[]));
        assert_eq!(v.clone().for_target(&crate::target::Target::SM90), v, "SM90's verdict is as before");
        let sm100 = v.clone().for_target(&crate::target::Target::SM100);
        assert!(sm100.digest == v.digest && sm100.env_text().ends_with("ARCH=SM100\n"));
        let units = sm100.units();
        assert!(!units.is_empty() && units.len() < v.units().len());
        assert!(units.iter().all(|u| !u.starts_with("HFMA2.MMA:") && !u.contains(":const")), "{units:?}");
        for op in ["HMUL2:", "HADD2:", "HFMA2:"] {
            assert!(units.iter().any(|u| u.starts_with(op)), "{op} {units:?}");
        }
        assert!(sm100.text().contains("architecture: SM100"));
        // SM86 has every form SM90 has, HFMA2.MMA included
        assert_eq!(v.clone().for_target(&crate::target::Target::SM86).units(), v.units());
    }

    #[test]
    fn units_cover_every_form_of_the_four_instructions_less_the_skipped() {
        let all = verdict(&rungs(), &outcomes(&[])).units();
        for op in ["HMUL2", "HADD2", "HFMA2", "HFMA2.MMA"] {
            assert!(all.iter().any(|u| u.starts_with(&format!("{op}:"))), "{op}: {all:?}");
        }
        assert!(all.contains(&"HFMA2:const-c".to_string()) && all.contains(&"HMUL2:constx".to_string()), "{all:?}");
        let some = verdict(&rungs(), &outcomes(&["constx"])).units();
        assert!(!some.iter().any(|u| u.ends_with(":constx") || u.ends_with(":constx-c")));
        assert_eq!(some.len(), all.len() - all.iter().filter(|u| u.contains(":constx")).count());
    }

    #[test]
    fn results_tsv_is_read_strictly() {
        let dir = std::env::temp_dir().join(format!("hmul2-ladder-r-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("results.tsv");
        std::fs::write(&f, "# name rc s\nbase\t0\t1.5\ntwo-cases\t124\n").unwrap();
        let r = read_results(&f).unwrap();
        assert_eq!((r[0].rc, r[0].seconds, r[1].rc, r[1].seconds), (Some(0), Some(1.5), Some(124), None));
        std::fs::write(&f, "base\tok\t1\n").unwrap();
        assert!(read_results(&f).unwrap_err().contains("results.tsv:1"));
        assert!(read_results(&dir.join("absent.tsv")).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
