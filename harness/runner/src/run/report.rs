//! The report folder: `summary.json` (its types here are the schema; the HTML report and
//! `merge` read them through [`crate::schema`]), `junit.xml` (CI dashboards) and the text
//! table printed at the end of a run; and `merge` of shard reports.
//!
//! Every type of `summary.json` reads tolerantly: a missing key takes its default (summaries
//! of earlier versions lack the newer keys), an unknown key is ignored.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a finding is.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum FindingKind {
    /// The device's result differs from the reference's.
    #[default]
    Mismatch,
    /// The launch failed (a fault, a crash, a hang) and the instruction is blamed.
    Fault,
}

impl FindingKind {
    /// The word `summary.json` uses.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Mismatch => "mismatch",
            FindingKind::Fault => "fault",
        }
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How far a run got: only a `complete` run's summary covers every item it was given.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every item ran (or, without hardware, the software checks ran).
    #[default]
    Complete,
    /// An error stopped it (the summary holds what was journaled; `--resume` continues).
    Stopped,
    /// A signal (SIGINT, SIGTERM) stopped it.
    Interrupted,
}

/// A count that does not fit 64 bits (a hostile or corrupt summary or journal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a count overflows 64 bits")]
pub struct Overflow;

/// One mismatch or fault, as `summary.json` lists it (and a journal's batch line).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(default)]
pub struct Finding {
    pub kind: FindingKind,
    pub encoding: String,
    /// The decoder's text (or "illegal: why").
    pub text: String,
    pub minimized: Option<String>,
    pub minimized_text: Option<String>,
    pub inputs: Option<FindingInputs>,
    pub expected: Option<String>,
    pub got: Option<String>,
    pub detail: String,
}

impl Finding {
    /// A fault: the instruction's word and text, and what went wrong.
    pub fn fault(encoding: String, text: String, detail: String) -> Finding {
        Finding { kind: FindingKind::Fault, encoding, text, minimized: None, minimized_text: None, inputs: None, expected: None, got: None, detail }
    }

    /// The word the finding is about: the minimized one when there is one.
    pub fn word(&self) -> Option<u128> {
        self.minimized.as_deref().and_then(|m| crate::isa::parse_hex(m).ok()).or_else(|| crate::isa::parse_hex(&self.encoding).ok())
    }
}

/// A finding's inputs, as hex text.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(default)]
pub struct FindingInputs {
    pub a: String,
    pub b: String,
    pub d: String,
    pub pred: String,
    /// Operand 3's value (three-source instructions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<String>,
}

impl FindingInputs {
    pub fn of(i: &crate::inputs::Inputs) -> FindingInputs {
        FindingInputs { a: hex32(i.a), b: hex32(i.b), d: hex32(i.d), pred: format!("0x{:02x}", i.pred), c: (i.c != 0).then(|| hex32(i.c)) }
    }

    /// (name, value) in operand order: a, b, c (three-source instructions only), d, pred.
    pub fn pairs(&self) -> Vec<(&'static str, &str)> {
        let mut v = vec![("a", self.a.as_str()), ("b", self.b.as_str())];
        if let Some(c) = &self.c {
            v.push(("c", c.as_str()));
        }
        v.extend([("d", self.d.as_str()), ("pred", self.pred.as_str())]);
        v
    }
}

pub fn hex32(v: u32) -> String {
    format!("0x{v:08x}")
}

/// Counts of one run, one form or one batch. `not_runnable` (beyond the HTML schema's
/// six) counts instructions the patcher cannot place in a kernel: never executed.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Totals {
    pub instructions: u64,
    pub inputs: u64,
    pub compared: u64,
    pub mismatches: u64,
    pub faults: u64,
    pub undefined: u64,
    #[serde(default)]
    pub not_runnable: u64,
}

impl Totals {
    /// Add `o`'s counts; Err (and `self` unchanged) when one would overflow.
    pub fn add(&mut self, o: &Totals) -> Result<(), Overflow> {
        let add = |x: u64, y: u64| x.checked_add(y).ok_or(Overflow);
        *self = Totals {
            instructions: add(self.instructions, o.instructions)?,
            inputs: add(self.inputs, o.inputs)?,
            compared: add(self.compared, o.compared)?,
            mismatches: add(self.mismatches, o.mismatches)?,
            faults: add(self.faults, o.faults)?,
            undefined: add(self.undefined, o.undefined)?,
            not_runnable: add(self.not_runnable, o.not_runnable)?,
        };
        Ok(())
    }
}

/// Whether and where a run used a GPU.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Hardware {
    pub used: bool,
    pub reason: Option<String>,
    pub gpu: Option<String>,
    pub driver: Option<String>,
    pub devices: u64,
    /// True when the simulated executor answered (tests): no hardware was involved.
    pub simulated: bool,
    /// True in a test fixture shaped like a run (never written by `run`): no hardware result.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fixture: bool,
}

/// The software checks' own JSON (`verify`, `oracle`), as each check writes it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SoftwareChecks {
    pub verify: Option<serde_json::Value>,
    pub oracle: Option<serde_json::Value>,
}

/// A run report folder's `summary.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Summary {
    pub tool_version: String,
    pub seed: u64,
    pub shard: String,
    /// Whether the run got to its end (absent in summaries of earlier versions: complete).
    pub status: RunStatus,
    /// Items this run (this shard) was to execute: instructions, or exhaustive chunk
    /// groups; a merge checks the shards' totals against it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned: Option<u64>,
    pub mode: String,
    /// The road the cases took to the GPU (`batch`, `single`, `scaffold`: `kernel::road`);
    /// absent in summaries written before roads existed (the batch road).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub road: Option<String>,
    /// The architecture the run's kernels were built for, in nvdisasm's spelling (`SM86`);
    /// SM90 in summaries written before other architectures were run.
    #[serde(default = "default_arch")]
    pub arch: String,
    pub started: String,
    pub finished: String,
    pub hardware: Hardware,
    pub totals: Totals,
    pub by_form: BTreeMap<String, Totals>,
    /// Findings of kind `mismatch` (a reader takes a finding's kind from its list).
    pub mismatches: Vec<Finding>,
    /// Findings of kind `fault`.
    pub faults: Vec<Finding>,
    pub software_checks: SoftwareChecks,
    /// Field-value coverage of the run's words.
    pub coverage: Option<crate::gen::Coverage>,
    /// Where this process's wall time went (absent in merged reports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    /// The run's options, as its journal's header holds them (`merge` refuses shards run
    /// with different ones; a merged report's `shard` is `all/N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
}

fn default_arch() -> String {
    crate::target::Target::DEFAULT.nvdisasm.to_string()
}

/// Where a run's wall time went.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Timing {
    /// Seconds from the first batch taken to the last result journaled: inputs, build,
    /// launches, reference and compare, overlapped across host threads and devices.
    pub execute_s: f64,
    /// Results compared in that time by this process (instruction × input; a resumed
    /// run's journaled results are not counted).
    pub compared: u64,
    /// `compared / execute_s`.
    pub compared_per_s: f64,
    /// Seconds of the software checks afterwards (vector replay, nvdisasm oracle).
    pub software_checks_s: f64,
}

impl Summary {
    /// A finding's list says its kind: a finding without `kind` (or with the other one) in
    /// `faults` is a fault, in `mismatches` a mismatch. Readers call this after parsing.
    pub fn kinds_from_lists(&mut self) {
        for f in &mut self.mismatches {
            f.kind = FindingKind::Mismatch;
        }
        for f in &mut self.faults {
            f.kind = FindingKind::Fault;
        }
    }

    /// Whether the hardware part ran and found nothing wrong.
    pub fn hardware_clean(&self) -> bool {
        // the counts and the lists are both read: a finding never hides behind a zero count
        self.totals.mismatches == 0 && self.totals.faults == 0 && self.mismatches.is_empty() && self.faults.is_empty()
    }
    /// Whether every software check that ran passed.
    pub fn software_ok(&self) -> bool {
        [&self.software_checks.verify, &self.software_checks.oracle].iter().all(|c| CheckState::of(c) != CheckState::Failed)
    }

    /// Sort findings so reports of the same work compare equal whatever the order of arrival.
    pub fn canonicalize(&mut self) {
        self.mismatches.sort();
        self.faults.sort();
    }

    /// The table printed at the end of a run.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let hw = if self.hardware.used {
            format!(
                "hardware: {} (driver {}), {} device(s)",
                self.hardware.gpu.as_deref().unwrap_or("?"),
                self.hardware.driver.as_deref().unwrap_or("?"),
                self.hardware.devices
            )
        } else if self.hardware.simulated {
            format!("hardware: not used; these results are simulated ({})", self.hardware.reason.as_deref().unwrap_or("no reason recorded"))
        } else {
            format!("hardware: did not run ({})", self.hardware.reason.as_deref().unwrap_or("no reason recorded"))
        };
        s += &format!("{hw}\nseed {} shard {} mode {}\n", self.seed, self.shard, self.mode);
        if !self.hardware.used && !self.hardware.simulated && self.by_form.is_empty() && self.totals == Totals::default() {
            // a table of zeros reads as a run that checked nothing; say what it is
            s += "no hardware results: nothing ran on a GPU (the software checks follow)\n";
            return s;
        }
        s += &format!("{:<18} {:>8} {:>10} {:>10} {:>6} {:>6} {:>9} {:>6}\n", "form", "instrs", "inputs", "compared", "mism", "faults", "undefined", "skip");
        let mut row = |name: &str, t: &Totals| {
            s += &format!(
                "{:<18} {:>8} {:>10} {:>10} {:>6} {:>6} {:>9} {:>6}\n",
                name, t.instructions, t.inputs, t.compared, t.mismatches, t.faults, t.undefined, t.not_runnable
            );
        };
        for (k, t) in &self.by_form {
            row(k, t);
        }
        row("total", &self.totals);
        s
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// JUnit XML: one testcase per form×mode (hardware) and one per software check. Hardware
/// testcases are `skipped` with the reason when the hardware did not run.
pub fn junit(s: &Summary) -> String {
    let mut cases = Vec::new();
    let mut failures = 0;
    let mut skipped = 0;
    let forms: Vec<String> = if s.by_form.is_empty() {
        crate::reference::IMPLEMENTED.iter().flat_map(|o| o.forms().map(|f| o.form_key(f).to_string())).collect()
    } else {
        s.by_form.keys().cloned().collect()
    };
    for form in &forms {
        let name = format!("{}/{}", s.mode, form);
        let body = if !s.hardware.used && !s.hardware.simulated {
            skipped += 1;
            format!("<skipped message=\"hardware did not run: {}\"/>", esc(s.hardware.reason.as_deref().unwrap_or("")))
        } else {
            let bad: Vec<&Finding> = s.mismatches.iter().chain(&s.faults).filter(|f| finding_form(f).as_deref() == Some(form.as_str())).collect();
            if bad.is_empty() {
                String::new()
            } else {
                failures += 1;
                let list: Vec<String> = bad
                    .iter()
                    .map(|f| {
                        format!(
                            "{} {} {} expected {} got {} {}",
                            f.kind,
                            f.encoding,
                            f.text,
                            f.expected.as_deref().unwrap_or("-"),
                            f.got.as_deref().unwrap_or("-"),
                            f.detail
                        )
                    })
                    .collect();
                format!("<failure message=\"{} finding(s)\">{}</failure>", bad.len(), esc(&list.join("\n")))
            }
        };
        // a simulated run is labelled as such: a dashboard never shows it as a hardware pass
        let class = if s.hardware.simulated && !s.hardware.used { "hmul2.simulated" } else { "hmul2.hardware" };
        cases.push(format!("    <testcase classname=\"{class}\" name=\"{}\">{}</testcase>", esc(&name), body));
    }
    for (name, check) in [("verify", &s.software_checks.verify), ("oracle", &s.software_checks.oracle)] {
        let body = match CheckState::of(check) {
            CheckState::NotRun => {
                skipped += 1;
                format!("<skipped message=\"{}\"/>", esc(check.as_ref().map_or("not run", |_| not_run_reason(check))))
            }
            CheckState::Failed => {
                failures += 1;
                format!("<failure message=\"{name} failed\">{}</failure>", esc(&check.as_ref().map(|v| v.to_string()).unwrap_or_default()))
            }
            CheckState::Passed => String::new(),
        };
        cases.push(format!("    <testcase classname=\"hmul2.software\" name=\"{name}\">{body}</testcase>"));
    }
    if let Some(why) = incomplete(s) {
        // a run that did not get to its end never reads as a clean suite
        failures += 1;
        cases.push(format!("    <testcase classname=\"hmul2.run\" name=\"complete\"><failure message=\"incomplete run\">{}</failure></testcase>", esc(&why)));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"hmul2-harness seed {} shard {}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" timestamp=\"{}\">\n{}\n  </testsuite>\n</testsuites>\n",
        s.seed,
        esc(&s.shard),
        cases.len(),
        esc(&s.started),
        cases.join("\n")
    )
}

/// The form key of a finding's encoding.
pub fn finding_form(f: &Finding) -> Option<String> {
    let w = crate::isa::parse_hex(&f.encoding).ok()?;
    crate::isa::decode::form_of(w).ok().map(|(o, f)| o.form_key(f).to_string())
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{0}: {1}")]
    Read(String, String),
    #[error("{0}")]
    Mismatch(String),
    #[error("{0}: {1}; a merge of it would claim work that was not done")]
    Incomplete(String, String),
    #[error("{0}: {1}")]
    Overflow(String, Overflow),
}

/// How a software check went, as its JSON says (`ok: false`, `ran: false`, or neither);
/// ordered worst last, so a merge keeps the greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckState {
    Passed,
    /// Absent, or `ran: false` (with its `reason`).
    NotRun,
    Failed,
}

impl CheckState {
    pub fn of(c: &Option<serde_json::Value>) -> CheckState {
        let flag = |k: &str| c.as_ref().and_then(|v| v.get(k)).and_then(|b| b.as_bool());
        match (c, flag("ok"), flag("ran")) {
            (_, Some(false), _) => CheckState::Failed,
            (None, _, _) | (_, _, Some(false)) => CheckState::NotRun,
            _ => CheckState::Passed,
        }
    }
}

/// A check that did not run: its recorded reason.
pub fn not_run_reason(c: &Option<serde_json::Value>) -> &str {
    c.as_ref().and_then(|v| v.get("reason")).and_then(|r| r.as_str()).unwrap_or("no reason recorded")
}

/// The counts of an oracle check that add up over shards (each shard judges its own words).
const ORACLE_COUNTS: [&str; 4] = ["words", "agreed_text", "agreed_illegal", "mismatches"];

/// Fold one more shard's software checks into `acc`. `verify` replays the same vectors in
/// every shard, so one result stands for all, the worst one; `oracle` judges each shard's
/// own words, so where both ran its counts add up and it passes only if both passed; where
/// one did not run, the worse of the two stands. A check taken from a later shard names it
/// (`from`), so a failure in any shard is never hidden behind the first shard's pass.
fn merge_checks(acc: &mut SoftwareChecks, s: &SoftwareChecks, name: &str) -> Result<(), Overflow> {
    let from = |v: &Option<serde_json::Value>| {
        let mut v = v.clone();
        if let Some(serde_json::Value::Object(m)) = &mut v {
            m.insert("from".into(), name.into());
        }
        v
    };
    if CheckState::of(&s.verify) > CheckState::of(&acc.verify) {
        acc.verify = from(&s.verify);
    }
    let ran = |c: &Option<serde_json::Value>| c.as_ref().and_then(|v| v.get("ran")).and_then(|r| r.as_bool()) == Some(true);
    let both_ran = ran(&acc.oracle) && ran(&s.oracle);
    let worse = CheckState::of(&s.oracle) > CheckState::of(&acc.oracle);
    match (&mut acc.oracle, &s.oracle) {
        (Some(serde_json::Value::Object(a)), Some(serde_json::Value::Object(b))) if both_ran => {
            for key in ORACLE_COUNTS {
                if let (Some(x), Some(y)) = (a.get(key).and_then(|x| x.as_u64()), b.get(key).and_then(|y| y.as_u64())) {
                    a.insert(key.into(), x.checked_add(y).ok_or(Overflow)?.into());
                }
            }
            let ok = |m: &serde_json::Map<String, serde_json::Value>| m.get("ok").and_then(|o| o.as_bool()).unwrap_or(false);
            let both = ok(a) && ok(b);
            a.insert("ok".into(), both.into());
            for key in ["first_mismatch", "reason"] {
                if a.get(key).is_none_or(|v| v.is_null()) {
                    if let Some(v) = b.get(key).filter(|v| !v.is_null()) {
                        a.insert(key.into(), v.clone());
                    }
                }
            }
        }
        _ if worse => acc.oracle = from(&s.oracle),
        _ => {}
    }
    Ok(())
}

/// Why a shard's summary does not cover all of its work, if it does not.
pub fn incomplete(s: &Summary) -> Option<String> {
    match s.status {
        RunStatus::Complete => {}
        RunStatus::Stopped => return Some(format!("the run stopped early ({})", s.hardware.reason.as_deref().unwrap_or("no reason recorded"))),
        RunStatus::Interrupted => return Some("the run was interrupted by a signal".into()),
    }
    // summaries written before `status` existed said so only here
    if let Some(r) = s.hardware.reason.as_deref().filter(|r| r.starts_with("run stopped early")) {
        return Some(r.to_string());
    }
    let ran = s.hardware.used || s.hardware.simulated;
    match s.planned {
        Some(p) if ran && s.mode != "exhaustive" && s.totals.instructions != p => Some(format!("{} of its {p} instructions are in it", s.totals.instructions)),
        _ => None,
    }
}

/// What gave a summary's results, in words: the hardware (which GPU), a simulation (the
/// simulated executor or the emulated driver), a test fixture, or nothing (the hardware
/// part did not run).
pub fn executor(s: &Summary) -> String {
    let h = &s.hardware;
    let gpu = h.gpu.as_deref().unwrap_or("an unnamed device");
    match (h.used, h.simulated, h.fixture) {
        (_, _, true) => "a test fixture".into(),
        (true, _, _) => format!("the hardware ({gpu})"),
        (false, true, _) if h.gpu.is_some() => format!("the emulated driver ({gpu})"),
        (false, true, _) => "the simulated executor".into(),
        (false, false, _) => "no executor (the hardware part did not run)".into(),
    }
}

/// Join shard summaries (each `I/N` of the same seed and mode, harness version and executor) into one.
pub fn merge(parts: &[(String, Summary)]) -> Result<Summary, MergeError> {
    let Some((first_name, first)) = parts.first() else {
        return Err(MergeError::Mismatch("nothing to merge".into()));
    };
    let n_of = |s: &Summary| s.shard.split_once('/').and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
    let (_, n) = n_of(first).ok_or_else(|| MergeError::Mismatch(format!("{first_name}: shard {:?} is not I/N", first.shard)))?;
    let mut seen = std::collections::BTreeSet::new();
    let mut out = first.clone();
    out.timing = None;
    out.totals = Totals::default();
    out.by_form.clear();
    out.mismatches.clear();
    out.faults.clear();
    out.coverage = None;
    out.hardware.devices = 0;
    for (k, (name, s)) in parts.iter().enumerate() {
        if s.seed != first.seed || s.mode != first.mode || s.road != first.road {
            let road = |s: &Summary| s.road.clone().unwrap_or_else(|| "batch".into());
            return Err(MergeError::Mismatch(format!(
                "{name}: seed {} mode {} road {} differs from {first_name}'s seed {} mode {} road {}",
                s.seed,
                s.mode,
                road(s),
                first.seed,
                first.mode,
                road(first)
            )));
        }
        if s.arch != first.arch {
            return Err(MergeError::Mismatch(format!(
                "{name}: its kernels are {}'s, {first_name}'s {}'s: runs of different architectures are not one run",
                s.arch, first.arch
            )));
        }
        if s.tool_version != first.tool_version {
            return Err(MergeError::Mismatch(format!(
                "{name}: harness version {} differs from {first_name}'s {}: merge shards of one version",
                s.tool_version, first.tool_version
            )));
        }
        if executor(s) != executor(first) {
            return Err(MergeError::Mismatch(format!(
                "{name}: its results are from {}, {first_name}'s from {}: results of different executors are not one run (merge each executor's shards on their own)",
                executor(s),
                executor(first)
            )));
        }
        let (i, ni) = n_of(s).filter(|&(i, n)| i < n).ok_or_else(|| MergeError::Mismatch(format!("{name}: shard {:?} is not I/N with I < N", s.shard)))?;
        if ni != n || !seen.insert(i) {
            return Err(MergeError::Mismatch(format!("{name}: shard {} repeats or does not fit {n} shards", s.shard)));
        }
        if let Some(why) = incomplete(s) {
            return Err(MergeError::Incomplete(format!("{name} (shard {})", s.shard), why));
        }
        let over = |e| MergeError::Overflow(name.clone(), e);
        out.totals.add(&s.totals).map_err(over)?;
        for (k, t) in &s.by_form {
            out.by_form.entry(k.clone()).or_default().add(t).map_err(over)?;
        }
        out.planned = match (out.planned.filter(|_| k > 0), s.planned) {
            (Some(x), Some(y)) => Some(x.checked_add(y).ok_or(Overflow).map_err(over)?),
            (None, y) if k == 0 => y,
            _ => None,
        };
        out.mismatches.extend(s.mismatches.iter().cloned());
        out.faults.extend(s.faults.iter().cloned());
        out.started = out.started.clone().min(s.started.clone());
        out.finished = out.finished.clone().max(s.finished.clone());
        out.hardware.used &= s.hardware.used;
        out.hardware.simulated |= s.hardware.simulated;
        out.hardware.fixture |= s.hardware.fixture;
        out.hardware.devices += s.hardware.devices;
        if k > 0 {
            merge_checks(&mut out.software_checks, &s.software_checks, name).map_err(over)?;
        }
        if out.hardware.reason.is_none() {
            out.hardware.reason = s.hardware.reason.clone();
        }
        match (&mut out.coverage, &s.coverage) {
            (Some(a), Some(b)) => a.merge(b).ok_or(Overflow).map_err(over)?,
            (a @ None, Some(b)) => *a = Some(b.clone()),
            _ => {}
        }
    }
    out.shard = if seen.len() as u64 == n { format!("all/{n}") } else { format!("{:?}/{n}", seen) };
    if seen.len() as u64 != n {
        out.hardware.reason = Some(format!("incomplete merge: shards {seen:?} of {n}"));
    }
    if let Some(serde_json::Value::Object(c)) = &mut out.config {
        c.insert("shard".into(), out.shard.clone().into());
    }
    out.canonicalize();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shard(i: u64, verify: serde_json::Value, oracle: serde_json::Value) -> (String, Summary) {
        let mut s: Summary = serde_json::from_value(json!({
            "tool_version": "t", "seed": 7, "shard": format!("{i}/2"), "mode": "random",
            "started": "2026-12-03T00:00:00Z", "finished": "2026-12-03T00:00:01Z",
            "hardware": {"used": false, "simulated": false, "devices": 0, "reason": "no GPU"},
            "totals": Totals::default(), "by_form": {}, "mismatches": [], "faults": [],
            "software_checks": {"verify": null, "oracle": null}
        }))
        .unwrap();
        s.software_checks = SoftwareChecks { verify: Some(verify), oracle: Some(oracle) };
        (format!("out/shard{i}/summary.json"), s)
    }

    fn oracle(words: u64, mismatches: u64) -> serde_json::Value {
        json!({"ran": true, "ok": mismatches == 0, "words": words, "agreed_text": words - mismatches, "agreed_illegal": 0,
               "mismatches": mismatches, "first_mismatch": if mismatches > 0 { json!("0x1: differs") } else { json!(null) }})
    }

    fn verify(ok: bool) -> serde_json::Value {
        json!({"ran": true, "ok": ok, "vectors": 3000, "pass": if ok { 3000 } else { 2999 }, "mismatch": if ok { 0 } else { 1 }})
    }

    #[test]
    fn shards_of_different_executors_or_versions_are_not_merged() {
        let ok = json!({"ran": true, "ok": true});
        let (a, b) = (shard(0, ok.clone(), ok.clone()), shard(1, ok.clone(), ok.clone()));
        assert!(merge(&[a.clone(), b.clone()]).is_ok(), "neither ran the hardware: one kind");
        let mut sim = a.clone();
        sim.1.hardware.simulated = true;
        sim.1.planned = Some(0);
        let e = merge(&[sim.clone(), b.clone()]).err().unwrap().to_string();
        assert!(e.contains("different executors") && e.contains("simulated executor") && e.contains("did not run"), "{e}");
        let mut emulated = b.clone();
        emulated.1.hardware = Hardware { simulated: true, gpu: Some("HMUL2 fake SM90".into()), ..Default::default() };
        let e = merge(&[sim, emulated]).err().unwrap().to_string();
        assert!(e.contains("emulated driver"), "{e}");
        let mut h100 = a.clone();
        h100.1.hardware = Hardware { used: true, gpu: Some("NVIDIA H100".into()), ..Default::default() };
        let mut h200 = b.clone();
        h200.1.hardware = Hardware { used: true, gpu: Some("NVIDIA H200".into()), ..Default::default() };
        assert!(merge(&[h100, h200]).err().unwrap().to_string().contains("NVIDIA H200"));
        let mut sm86 = b.clone();
        sm86.1.arch = "SM86".into();
        let e = merge(&[a.clone(), sm86]).err().unwrap().to_string();
        assert!(e.contains("SM86") && e.contains("different architectures"), "{e}");
        // a summary written before architectures were recorded is SM90's
        assert_eq!(a.1.arch, "SM90");
        let mut other = b;
        other.1.tool_version = "u".into();
        assert!(merge(&[a, other]).err().unwrap().to_string().contains("harness version u"));
    }

    #[test]
    fn merged_oracle_counts_add_up_over_shards() {
        let m = merge(&[shard(0, verify(true), oracle(10_000, 0)), shard(1, verify(true), oracle(10_000, 0))]).unwrap();
        let o = m.software_checks.oracle.as_ref().unwrap();
        assert_eq!((o["words"].as_u64(), o["agreed_text"].as_u64(), o["ok"].as_bool()), (Some(20_000), Some(20_000), Some(true)));
        assert_eq!(m.software_checks.verify.as_ref().unwrap()["vectors"], 3000, "the same vectors are not counted twice");
        assert!(m.software_ok());
    }

    #[test]
    fn a_failing_check_in_a_later_shard_fails_the_merge() {
        let m = merge(&[shard(0, verify(true), oracle(10_000, 0)), shard(1, verify(true), oracle(10_000, 2))]).unwrap();
        let o = m.software_checks.oracle.as_ref().unwrap();
        assert_eq!((o["mismatches"].as_u64(), o["ok"].as_bool()), (Some(2), Some(false)));
        assert_eq!(o["first_mismatch"], "0x1: differs");
        assert!(!m.software_ok());
        let m = merge(&[shard(0, verify(true), oracle(10_000, 0)), shard(1, verify(false), oracle(10_000, 0))]).unwrap();
        let v = m.software_checks.verify.as_ref().unwrap();
        assert_eq!((v["ok"].as_bool(), v["from"].as_str()), (Some(false), Some("out/shard1/summary.json")));
        assert!(!m.software_ok());
        assert!(junit(&m).contains("<failure message=\"verify failed\""));
    }

    #[test]
    fn a_check_that_did_not_run_in_one_shard_is_not_reported_as_passed() {
        let not_run = json!({"ran": false, "reason": "nvdisasm not available"});
        let m = merge(&[shard(0, verify(true), oracle(10_000, 0)), shard(1, verify(true), not_run)]).unwrap();
        let o = m.software_checks.oracle.as_ref().unwrap();
        assert_eq!((o["ran"].as_bool(), o["from"].as_str()), (Some(false), Some("out/shard1/summary.json")));
        // and a failure outranks it, whichever shard comes first
        let not_run = json!({"ran": false, "reason": "nvdisasm not available"});
        let m = merge(&[shard(0, verify(true), not_run), shard(1, verify(true), oracle(10_000, 1))]).unwrap();
        assert_eq!(m.software_checks.oracle.as_ref().unwrap()["ok"], false);
    }
}
