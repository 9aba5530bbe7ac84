//! `settle`: weighs recorded hardware vectors against every option of every point
//! `harness/spec/semantics.json` names, and says which option the hardware shows.
//!
//! For one knob, a vector *tells* when the knob's options give different results for it
//! (the other knobs held where they are); it then agrees with some options and not others
//! (an option under which the result is undefined claims nothing and agrees with any
//! value). A knob is settled when one option agrees with every telling vector, or, of those
//! that do, one predicts the most of them exactly. Knobs meet
//! (`.SAT` of a NaN depends on `sat-nan` and `nan-result`), so a settled knob that moved is
//! adopted and every knob weighed again, until nothing moves. What no single option
//! explains is reported, never guessed at; vectors the final policy still mismatches are
//! listed as unexplained (an arithmetic defect, or two knobs wrong at once in a way one
//! at a time cannot see).
//!
//! Each instruction is weighed on its own too: a knob several instructions read (the NaN
//! rule, the source modifiers' order) is told apart by each instruction's vectors alone,
//! and the report says what each showed. When two instructions show different options the
//! knob is SPLIT: the table holds one option for all of them, so nothing is recorded for it
//! and the exit status is 1.
//!
//! Each architecture is weighed on its own: a vector is evidence of the architecture that
//! produced it (its `"arch"`; none is SM90), starting from that architecture's policy (what
//! its hardware settled before, else the named assumptions). What SM90 vectors show settles
//! nothing on SM86. The report has a part per architecture that has vectors, says per
//! architecture what it settled and what stays an assumption (an architecture without
//! vectors: all of it), and names every knob two architectures show differently: reported,
//! each kept for its own architecture, never merged into one.
//!
//! `--write` records the result: each knob an architecture settled gets a `settled` record for
//! that architecture (the option, the GPU and date of the vectors' origin, the first telling
//! vector as evidence, how many told), the `assumption` other architectures use is left as it
//! is, and `docs/semantics.md`'s table is regenerated. The reference compiled into the binary
//! reads the table at build time: rebuild, then refresh `vectors/reference` with `eval`.

use crate::cli::{path_arg, CliError, CliResult};
use crate::isa::{Inst, Op};
use crate::reference::eval_with;
use crate::reference::policy::{self, Assumption, Policy, Settled, KNOBS};
use crate::target::Target;
use crate::vectors::{self, check, to_line, Vector};
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
#[command(after_help = "\
Each knob of semantics.json is reported, per architecture, against the option the table holds \
for it there (its settlement, else the assumption), as:
  confirmed      every vector that tells its options apart agrees with that option.
  CONTRADICTED   every such vector agrees with another option (shown): the table is wrong there.
  narrowed       the telling vectors rule some options out but leave more than one.
  untold         no vector tells the options apart.
  INCONSISTENT   no option agrees with every telling vector.
  SPLIT          the instructions' vectors show different options (one table cannot hold both).
When more than one instruction's vectors tell a knob apart, a line per instruction follows \
with what that instruction's vectors alone show.
Each architecture's vectors (their \"arch\"; none = SM90) are weighed apart, from that \
architecture's policy, in a part headed `== SM86: N vectors ==`; a line per architecture says \
what it settled and what stays an assumption, and `DIFFERS` names a knob two architectures \
show differently (each keeps its own; reported, not an error).
Under an entry whose vectors show another option than its outside evidence (a compiler or a \
document, the `outside` list) supports, a line `hardware disagrees with SOURCE: ...` follows.
Exit 0 when nothing is contradicted (or --write recorded it), inconsistent or unexplained; \
1 otherwise; 2 when a path cannot be read, holds no vectors of the origin, or the table is bad.")]
pub struct SettleArgs {
    /// Vector files or folders (searched recursively for *.jsonl).
    #[arg(required = true, value_parser = path_arg)]
    pub paths: Vec<PathBuf>,
    /// Only vectors whose origin starts with this are weighed.
    #[arg(long, default_value = "hardware:")]
    pub origin: String,
    /// Only vectors of this architecture are weighed (a vector naming none is SM90's);
    /// default: every architecture among the vectors, each apart.
    #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE)]
    pub arch: Option<&'static Target>,
    /// Record what the vectors settle in --semantics (each settled entry's `settled` record
    /// for the vectors' architecture; the assumption stays) and regenerate --doc's table.
    #[arg(long)]
    pub write: bool,
    /// The semantics table weighed against (and rewritten by --write); default: the
    /// checkout's harness/spec/semantics.json, found from the current folder upwards, else
    /// (without --write) the table built into this binary.
    #[arg(long, value_name = "FILE", value_parser = path_arg)]
    pub semantics: Option<PathBuf>,
    /// The document whose generated table --write regenerates; default: docs/semantics.md
    /// beside the table's checkout.
    #[arg(long, value_parser = path_arg)]
    pub doc: Option<PathBuf>,
}

/// The checkout holding `harness/spec/semantics.json`, from the current folder upwards.
fn checkout() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().find(|d| d.join("harness/spec/semantics.json").is_file()).map(|d| d.to_path_buf())
}

/// One vector to weigh: its instruction, and where it came from.
pub struct Case {
    pub inst: Inst,
    pub vector: Vector,
    /// `file:line`.
    pub at: String,
}

impl Case {
    /// The architecture that produced the vector (SM90 when it names none).
    pub fn target(&self) -> &'static Target {
        self.vector.arch.unwrap_or(Target::DEFAULT)
    }
}

/// What the telling vectors say of one knob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No vector gives different results under the knob's options.
    Untold,
    /// Exactly one option agrees with all `told` telling vectors; `evidence` is the first.
    Shows { option: usize, told: usize, evidence: String, at: String },
    /// More than one option agrees with all `told` telling vectors.
    Narrowed { options: Vec<usize>, told: usize },
    /// No option agrees with all of them; `best` agrees with the most.
    Inconsistent { told: usize, best: usize, best_agree: usize, counter: String },
    /// Each instruction's vectors alone agree with one option, but not all the same one:
    /// `(instruction, option, telling vectors)` for each that shows one.
    Split { shows: Vec<(Op, usize, usize)> },
}

/// One knob's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobReport {
    /// Index into [`KNOBS`].
    pub knob: usize,
    /// The option the table held before weighing, for the vectors' architecture (its
    /// settlement there, else the assumption).
    pub assumed: usize,
    /// What all the vectors show together (or [`Verdict::Split`]).
    pub verdict: Verdict,
    /// What each instruction's vectors show alone, for every instruction among the vectors
    /// (in [`Op::ALL`]'s order).
    pub by_instruction: Vec<(Op, Verdict)>,
}

/// The whole outcome.
#[derive(Clone, Debug)]
pub struct Settlement {
    /// The policy the vectors lead to (the start, with every settled knob moved).
    pub policy: Policy,
    pub knobs: Vec<KnobReport>,
    /// Vectors the final policy gives another value than recorded: `at: line`.
    pub unexplained: Vec<String>,
}

/// The verdict on knob `k`, the other knobs as in `p`.
///
/// An option under which the result is undefined (an INVALIDn field: `invalid-predicated-off`)
/// claims nothing, so it agrees with whatever the device gave; among the options that agree
/// with every telling vector, the one that predicted the most of them exactly is shown.
fn judge<'c>(p: &Policy, k: usize, cases: &[&'c Case]) -> Verdict {
    let n = KNOBS[k].1.len();
    let pols: Vec<Policy> = (0..n)
        .map(|o| {
            let mut q = *p;
            q.set(k, o);
            q
        })
        .collect();
    let (mut told, mut agree, mut exact) = (0usize, vec![0usize; n], vec![0usize; n]);
    // per option: the first telling vector it agrees with while another option does not
    // (the evidence), and the first it does not agree with
    let mut first_for: Vec<Option<&'c Case>> = vec![None; n];
    let mut first_exact: Vec<Option<&'c Case>> = vec![None; n];
    let mut first_against: Vec<Option<&'c Case>> = vec![None; n];
    for &c in cases {
        let Some(expect) = c.vector.expect else { continue };
        let rs: Vec<Option<u32>> = pols.iter().map(|q| eval_with(q, &c.inst, &c.vector.inputs).ok()).collect();
        if rs.iter().all(|r| *r == rs[0]) {
            continue;
        }
        told += 1;
        let ok: Vec<bool> = rs.iter().map(|r| r.is_none_or(|v| v == expect)).collect();
        for o in 0..n {
            if ok[o] {
                agree[o] += 1;
                if rs[o] == Some(expect) {
                    exact[o] += 1;
                    first_exact[o].get_or_insert(c);
                }
                if ok.contains(&false) {
                    first_for[o].get_or_insert(c);
                }
            } else {
                first_against[o].get_or_insert(c);
            }
        }
    }
    if told == 0 {
        return Verdict::Untold;
    }
    let all: Vec<usize> = (0..n).filter(|&o| agree[o] == told).collect();
    let most = all.iter().map(|&o| exact[o]).max().unwrap_or(0);
    let best: Vec<usize> = all.iter().copied().filter(|&o| exact[o] == most).collect();
    match (all.as_slice(), best.as_slice()) {
        ([], _) => {
            let best = (0..n).max_by_key(|&o| (agree[o], std::cmp::Reverse(o))).unwrap_or(0);
            let counter = first_against[best].map(|c| format!("{}: {}", c.at, to_line(&c.vector))).unwrap_or_default();
            Verdict::Inconsistent { told, best, best_agree: agree[best], counter }
        }
        ([o], _) | (_, [o]) if most > 0 || all.len() == 1 => {
            // the evidence: a vector that rules another option out, else one it predicted
            match first_for[*o].or(first_exact[*o]) {
                Some(c) => Verdict::Shows { option: *o, told, evidence: to_line(&c.vector), at: c.at.clone() },
                None => Verdict::Narrowed { options: all.clone(), told },
            }
        }
        (many, _) => Verdict::Narrowed { options: many.to_vec(), told },
    }
}

/// The verdict on knob `k` of all `cases` and of each instruction's alone: when the
/// instructions each show an option but not the same one, the verdict is [`Verdict::Split`]
/// (what all of them together show would be an inconsistency or a narrowing that hides it).
fn judge_each(p: &Policy, k: usize, cases: &[&Case]) -> (Verdict, Vec<(Op, Verdict)>) {
    let all = judge(p, k, cases);
    let mut by_instruction = Vec::new();
    for op in Op::ALL {
        let mine: Vec<&Case> = cases.iter().copied().filter(|c| c.inst.op == op).collect();
        if !mine.is_empty() {
            by_instruction.push((op, judge(p, k, &mine)));
        }
    }
    let shows: Vec<(Op, usize, usize)> = by_instruction
        .iter()
        .filter_map(|(op, v)| match v {
            Verdict::Shows { option, told, .. } => Some((*op, *option, *told)),
            _ => None,
        })
        .collect();
    // an option that agrees with every vector is the answer, even if one instruction's
    // vectors alone prefer another that claims nothing where the first is exact
    let split = !matches!(all, Verdict::Shows { .. }) && shows.iter().any(|s| s.1 != shows[0].1);
    (if split { Verdict::Split { shows } } else { all }, by_instruction)
}

/// Weigh `cases` against every knob, starting from `start`; see the module's text. The
/// cases are taken as one architecture's ([`weigh_by_arch`] parts them).
pub fn weigh(start: &Policy, cases: &[Case]) -> Settlement {
    weigh_refs(start, &cases.iter().collect::<Vec<_>>())
}

fn weigh_refs(start: &Policy, all: &[&Case]) -> Settlement {
    let mut p = *start;
    // each round moves at least one knob to an option it did not hold; a knob moved twice
    // would be a cycle, so the rounds are bounded by the knobs' options in all
    let bound: usize = KNOBS.iter().map(|(_, o)| o.len()).sum();
    for _ in 0..bound {
        let mut moved = false;
        for k in 0..KNOBS.len() {
            if let Verdict::Shows { option, .. } = judge(&p, k, all) {
                if option != p.option(k) {
                    p.set(k, option);
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
    let knobs = (0..KNOBS.len())
        .map(|k| {
            let (verdict, by_instruction) = judge_each(&p, k, all);
            KnobReport { knob: k, assumed: start.option(k), verdict, by_instruction }
        })
        .collect();
    let unexplained = all
        .iter()
        .filter(|c| matches!((eval_with(&p, &c.inst, &c.vector.inputs), c.vector.expect), (Ok(got), Some(e)) if got != e))
        .map(|c| format!("{}: {}", c.at, to_line(&c.vector)))
        .collect();
    Settlement { policy: p, knobs, unexplained }
}

impl KnobReport {
    /// The report's lines: [`KnobReport::line`], then, when more than one instruction's
    /// vectors tell the knob apart, one line per instruction.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![self.line()];
        let told = self.by_instruction.iter().filter(|(_, v)| !matches!(v, Verdict::Untold)).count();
        if told > 1 || matches!(self.verdict, Verdict::Split { .. }) {
            for (op, v) in &self.by_instruction {
                out.push(format!("{:<24}   {}: {}", "", op.mnemonic(), self.describe(v)));
            }
        }
        out
    }

    /// One line of the report.
    pub fn line(&self) -> String {
        format!("{:<24} {}", KNOBS[self.knob].0, self.describe(&self.verdict))
    }

    fn describe(&self, v: &Verdict) -> String {
        let opts = KNOBS[self.knob].1;
        match v {
            Verdict::Untold => "untold: no vector tells its options apart".to_string(),
            Verdict::Shows { option, told, at, .. } if *option == self.assumed => {
                format!("confirmed: {told} telling vectors agree with the table's option (first: {at})")
            }
            Verdict::Shows { option, told, at, .. } => {
                format!("CONTRADICTED: {told} telling vectors show {:?} (first: {at})", opts[*option])
            }
            Verdict::Narrowed { options, told } => format!("narrowed: {told} telling vectors leave options {options:?}"),
            Verdict::Inconsistent { told, best, best_agree, counter } => {
                format!("INCONSISTENT: no option agrees with all {told} telling vectors (option {best} with {best_agree}; against it: {counter})")
            }
            Verdict::Split { shows } => {
                let each: Vec<String> = shows.iter().map(|(op, o, told)| format!("{} shows option {o} ({told} telling)", op.mnemonic())).collect();
                format!("SPLIT: the instructions show different options: {}; one table cannot hold both, nothing is recorded", each.join(", "))
            }
        }
    }
}

/// The vectors of `origin` under `paths`, checked; counts of what was left out.
fn load(a: &SettleArgs) -> Result<(Vec<Case>, String), CliError> {
    let lines = vectors::read_paths(&a.paths)?;
    let (mut other, mut bad, mut no_expect, mut other_arch) = (0usize, 0usize, 0usize, 0usize);
    let mut cases = Vec::new();
    for l in lines {
        let Ok(v) = l.item else {
            bad += 1;
            continue;
        };
        if !v.origin.starts_with(&a.origin) {
            other += 1;
            continue;
        }
        if v.expect.is_none() {
            no_expect += 1;
            continue;
        }
        if a.arch.is_some_and(|t| v.arch.unwrap_or(Target::DEFAULT) != t) {
            other_arch += 1;
            continue;
        }
        match check(&v) {
            Ok(inst) => cases.push(Case { inst, vector: v, at: format!("{}:{}", l.file.display(), l.line) }),
            Err(_) => bad += 1,
        }
    }
    let names: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
    let of_arch = a.arch.map(|t| format!(" of arch {t}")).unwrap_or_default();
    if cases.is_empty() {
        return Err(CliError::input(format!("no vectors of origin {:?}{of_arch} in {}", a.origin, names.join(" "))));
    }
    let other_arch = if a.arch.is_some() { format!(", {other_arch} of other architectures") } else { String::new() };
    let note = format!(
        "{} vectors of origin {:?}{of_arch} weighed; left out: {other} of other origins, {bad} malformed or invalid (see verify), {no_expect} without expect{other_arch}",
        cases.len(),
        a.origin
    );
    Ok((cases, note))
}

pub fn settle(a: SettleArgs) -> CliResult {
    let json = a.semantics.clone().or_else(|| checkout().map(|c| c.join("harness/spec/semantics.json")));
    let (json_name, text) = match &json {
        Some(p) => (p.display().to_string(), std::fs::read_to_string(p).map_err(|e| CliError::input(format!("{}: {e}", p.display())))?),
        None if a.write => return Err(CliError::input("--write: no harness/spec/semantics.json in this folder or above; give --semantics and --doc")),
        None => ("the built-in semantics.json".to_string(), policy::SEMANTICS_JSON.to_string()),
    };
    let bad_table = |e: policy::PolicyError| CliError::input(format!("{json_name}: {}", e.to_string().trim_start_matches("semantics.json: ")));
    let mut table = policy::parse_table(&text).map_err(bad_table)?;
    Policy::check_table(&table).map_err(bad_table)?;
    let (cases, note) = load(&a)?;
    crate::outln!("settle: {note}")?;
    let weighed = weigh_by_arch(&table, &cases).map_err(bad_table)?;
    let (mut contradicted, mut inconsistent, mut unexplained) = (false, false, false);
    for w in &weighed {
        crate::outln!("== {}: {} vectors ==", w.target, w.vectors)?;
        let s = &w.settlement;
        for k in &s.knobs {
            let lines = k.lines();
            crate::outln!("{}", lines[0])?;
            for o in outside_against(&table, k) {
                crate::outln!("{:<24} hardware disagrees with {}: {}", "", o.source, o.says)?;
            }
            for l in &lines[1..] {
                crate::outln!("{l}")?;
            }
        }
        for u in s.unexplained.iter().take(10) {
            crate::outln!("unexplained: {u}")?;
        }
        if !s.unexplained.is_empty() {
            crate::outln!("unexplained: {} {} vectors differ from the reference under the settled policy", s.unexplained.len(), w.target)?;
        }
        contradicted |= s.knobs.iter().any(|k| matches!(&k.verdict, Verdict::Shows { option, .. } if *option != k.assumed));
        inconsistent |= s.knobs.iter().any(|k| matches!(k.verdict, Verdict::Inconsistent { .. } | Verdict::Split { .. }));
        unexplained |= !s.unexplained.is_empty();
    }
    for l in arch_summary(&table, &weighed, a.arch) {
        crate::outln!("{l}")?;
    }
    for l in differences(&weighed) {
        crate::outln!("{l}")?;
    }
    if let (true, Some(json)) = (a.write, &json) {
        let doc_path = a.doc.clone().or_else(|| json.parent()?.parent()?.parent().map(|c| c.join("docs/semantics.md")));
        let doc_path = doc_path.ok_or_else(|| CliError::input(format!("--write: no docs/semantics.md beside {json_name}; give --doc")))?;
        let changed: usize = weighed.iter().map(|w| record(&mut table, w.target, &w.settlement)).sum();
        let body = serde_json::to_string_pretty(&table).map_err(|e| CliError::input(format!("{json_name}: {e}")))? + "\n";
        Policy::check_table(&policy::parse_table(&body).map_err(bad_table)?).map_err(bad_table)?;
        // the document first: a document that cannot take the table leaves both as they were
        let doc_name = doc_path.display().to_string();
        let doc = std::fs::read_to_string(&doc_path).map_err(|e| CliError::input(format!("{doc_name}: {e}")))?;
        let doc = crate::verify::render_doc(&doc, &body).map_err(|e| CliError::input(format!("{doc_name}: {e}")))?;
        // both files or neither: a table that says `confirmed` never sits beside a document that says `assumed`
        crate::outfile::write_all_or_none(&[(doc_path.as_path(), doc.as_bytes()), (json.as_path(), body.as_bytes())])
            .map_err(|e| CliError::input(format!("settle --write: {e}; neither {doc_name} nor {json_name} was changed")))?;
        crate::outln!("settle: wrote {json_name} ({changed} settlements changed) and {doc_name}")?;
        if contradicted {
            crate::outln!(
                "settle: the reference changed: rebuild, then refresh the regression set (hmul2-harness eval < vectors/reference/FILE) and run hmul2-harness verify vectors"
            )?;
        }
    }
    Ok(if (contradicted && !a.write) || inconsistent || unexplained { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// One architecture's vectors weighed from its own policy.
pub struct ArchSettlement {
    pub target: &'static Target,
    /// How many vectors of it were weighed.
    pub vectors: usize,
    pub settlement: Settlement,
}

/// Weighs each architecture's vectors apart (in [`Target::ALL`]'s order), each from the
/// policy `table` gives that architecture: one architecture's evidence never moves another's.
pub fn weigh_by_arch(table: &[Assumption], cases: &[Case]) -> Result<Vec<ArchSettlement>, policy::PolicyError> {
    let mut by: BTreeMap<u32, Vec<&Case>> = BTreeMap::new();
    for c in cases {
        by.entry(c.target().sm).or_default().push(c);
    }
    let mut out = Vec::new();
    for t in Target::ALL {
        let Some(mine) = by.get(&t.sm) else { continue };
        let start = Policy::from_table(table, t)?;
        out.push(ArchSettlement { target: t, vectors: mine.len(), settlement: weigh_refs(&start, mine) });
    }
    Ok(out)
}

/// Per architecture (`only`, or all six): what its vectors settled and what stays an
/// assumption there; an architecture with no vectors keeps every entry about it assumed.
pub fn arch_summary(table: &[Assumption], weighed: &[ArchSettlement], only: Option<&Target>) -> Vec<String> {
    let mut out = Vec::new();
    for t in Target::ALL.into_iter().filter(|t| only.is_none_or(|o| o == *t)) {
        let about: Vec<&Assumption> = table.iter().filter(|e| e.architectures().contains(&t)).collect();
        let Some(w) = weighed.iter().find(|w| w.target == t) else {
            let before = about.iter().filter(|e| e.settled_on(t).is_some()).count();
            out.push(format!(
                "{t}: no vectors: nothing settled now; {} entries stay as they were ({before} settled before, {} assumed)",
                about.len(),
                about.len() - before
            ));
            continue;
        };
        let shown: Vec<&str> = w.settlement.knobs.iter().filter(|k| matches!(k.verdict, Verdict::Shows { .. })).map(|k| KNOBS[k.knob].0).collect();
        let assumed: Vec<&str> = about.iter().filter(|e| e.settled_on(t).is_none() && !shown.contains(&e.id.as_str())).map(|e| e.id.as_str()).collect();
        out.push(format!(
            "{t}: settled by these vectors {} ({}); still assumptions on {t} {} ({})",
            shown.len(),
            if shown.is_empty() { "none".to_string() } else { shown.join(", ") },
            assumed.len(),
            if assumed.is_empty() { "none".to_string() } else { assumed.join(", ") }
        ));
    }
    out
}

/// The knobs two architectures' vectors show differently: a `DIFFERS` line each, naming what
/// each architecture showed. Each keeps its own (`--write` records each for its architecture).
pub fn differences(weighed: &[ArchSettlement]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, (id, _)) in KNOBS.iter().enumerate() {
        let shows: Vec<(&Target, usize, &str)> = weighed
            .iter()
            .filter_map(|w| match &w.settlement.knobs[k].verdict {
                Verdict::Shows { option, at, .. } => Some((w.target, *option, at.as_str())),
                _ => None,
            })
            .collect();
        if shows.iter().any(|s| s.1 != shows[0].1) {
            let each: Vec<String> = shows.iter().map(|(t, o, at)| format!("{t} shows option {o} (first: {at})")).collect();
            out.push(format!("DIFFERS {id}: the architectures show different options: {}; each is its own architecture's, none is merged", each.join(", ")));
        }
    }
    out
}

/// The outside evidence (compiler, documents) of `k`'s entry that supports another option
/// than the one the vectors show: worth a line, since then a compiler or a document is wrong
/// about the hardware, or the vectors are.
pub fn outside_against<'t>(table: &'t [Assumption], k: &KnobReport) -> Vec<&'t policy::Outside> {
    let Verdict::Shows { option, .. } = &k.verdict else { return Vec::new() };
    let (id, opts) = KNOBS[k.knob];
    table.iter().filter(|e| e.id == id).flat_map(|e| &e.outside).filter(|o| o.supports != opts[*option]).collect()
}

/// Writes the knobs `target`'s vectors settled into `table`, as `target`'s settlements (the
/// assumption other architectures use is left as it is); returns how many entries changed.
pub fn record(table: &mut [Assumption], target: &Target, s: &Settlement) -> usize {
    let mut changed = 0;
    for k in &s.knobs {
        let Verdict::Shows { option, evidence, told, .. } = &k.verdict else { continue };
        let (id, opts) = KNOBS[k.knob];
        let Some(e) = table.iter_mut().find(|e| e.id == id) else { continue };
        let (gpu, date) = crate::vectors::parse_line(evidence).map(|v| gpu_and_date(&v.origin)).unwrap_or_default();
        let new = Settled { option: opts[*option].to_string(), gpu, date, evidence: evidence.clone(), told: *told };
        let before = e.settled.insert(target.nvdisasm.to_string(), new.clone());
        changed += (before.as_ref() != Some(&new)) as usize;
    }
    changed
}

/// The GPU and the date of a vector's origin, `hardware:<GPU>:<driver>:<date>` (the runner's):
/// the text between the first `:` and the driver, and the last part. Another shape gives what
/// follows the first `:` as the GPU and no date.
pub fn gpu_and_date(origin: &str) -> (String, String) {
    let rest = origin.split_once(':').map_or(origin, |(_, r)| r);
    let parts: Vec<&str> = rest.rsplitn(3, ':').collect();
    match parts.as_slice() {
        [date, _driver, gpu] if date.len() == 10 && date.as_bytes()[4] == b'-' => (gpu.to_string(), date.to_string()),
        _ => (rest.to_string(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::Inputs;
    use crate::isa::{decode, encode, parse};
    use crate::reference::eval;

    fn knob(id: &str) -> usize {
        KNOBS.iter().position(|(k, _)| *k == id).unwrap()
    }

    /// "Hardware" vectors of `texts` on `inputs`, computed under `truth`.
    fn recorded(truth: &Policy, texts: &[&str], inputs: &[Inputs]) -> Vec<Case> {
        let mut out = Vec::new();
        for t in texts {
            let inst = decode(encode(&parse(t).unwrap()).unwrap()).unwrap();
            for x in inputs {
                let Ok(e) = eval_with(truth, &inst, x) else { continue };
                let vector = Vector {
                    encoding: encode(&inst).unwrap(),
                    inputs: *x,
                    expect: Some(e),
                    expect_pred: None,
                    origin: "hardware:test:0:2026-12-03".into(),
                    arch: None,
                };
                out.push(Case { inst, vector, at: format!("t:{}", out.len() + 1) });
            }
        }
        out
    }

    fn inputs() -> Vec<Inputs> {
        // NaNs with payloads, zeros, infinities, subnormals, ordinary values, in both lanes
        let v: [u32; 10] = [0x7e01_fc02, 0x0000_8000, 0x7c00_fc00, 0x0001_8001, 0x3c00_4000, 0xbc00_c200, 0x7f81_ff82, 0x0400_8400, 0x03ff_83ff, 0x7bff_fbff];
        let mut out = Vec::new();
        for &a in &v {
            for &b in &v {
                out.push(Inputs { a, b, d: 0x1234_5678, pred: 0x7f, c: 0 });
            }
        }
        out
    }

    const TEXTS: [&str; 8] = [
        "HMUL2 R0, R1, R2",
        "HMUL2.SAT R0, R1, R2",
        "HMUL2.FTZ R0, -|R1|, R2",
        "HMUL2.FMZ R0, R1, R2",
        "HMUL2.BF16_V2 R0, R1, R2",
        "HMUL2.BF16_V2.FTZ.SAT R0, R1, R2",
        "HMUL2.BF16_V2.FMZ R0, R1, R2",
        "HMUL2.FMZ.SAT R0, R1.H1_H1, -R2.H0_H0",
    ];

    #[test]
    fn vectors_of_the_committed_semantics_confirm_what_they_tell() {
        let p = *Policy::current();
        let s = weigh(&p, &recorded(&p, &TEXTS, &inputs()));
        assert_eq!(s.policy, p);
        assert!(s.unexplained.is_empty());
        for k in &s.knobs {
            assert!(matches!(&k.verdict, Verdict::Untold) || matches!(&k.verdict, Verdict::Shows { option, .. } if *option == k.assumed), "{}", k.line());
        }
        let confirmed = s.knobs.iter().filter(|k| matches!(k.verdict, Verdict::Shows { .. })).count();
        assert!(confirmed >= 8, "these vectors tell most knobs apart: {:#?}", s.knobs.iter().map(KnobReport::line).collect::<Vec<_>>());
    }

    #[test]
    fn a_wrong_assumption_is_found_and_the_one_hardware_shows_named() {
        // the "GPU" propagates NaN payloads and keeps -0 under .SAT: two knobs wrong at once
        let mut truth = *Policy::current();
        truth.set(knob("nan-result"), 1);
        truth.set(knob("sat-negative-zero"), 1);
        let cases = recorded(&truth, &TEXTS, &inputs());
        let s = weigh(Policy::current(), &cases);
        assert_eq!(s.policy, truth, "{:#?}", s.knobs.iter().map(KnobReport::line).collect::<Vec<_>>());
        assert!(s.unexplained.is_empty(), "{:?}", s.unexplained);
        let nan = &s.knobs[knob("nan-result")];
        assert!(matches!(nan.verdict, Verdict::Shows { option: 1, .. }) && nan.assumed == 0);
        assert!(nan.line().contains("CONTRADICTED"), "{}", nan.line());
        // and --write's table: SM90's settlement holds the shown option; the assumption (what
        // the other architectures use) is as it was
        let mut table = policy::parse_table(policy::SEMANTICS_JSON).unwrap();
        let settled = s.knobs.iter().filter(|k| matches!(k.verdict, Verdict::Shows { .. })).count();
        assert_eq!(record(&mut table, &Target::SM90, &s), settled, "every settled entry gains a settlement on SM90");
        assert_eq!(Policy::from_table(&table, &Target::SM90).unwrap(), truth);
        assert_eq!(&Policy::from_table(&table, &Target::SM86).unwrap(), Policy::current(), "SM90's vectors settle nothing on SM86");
        let e = table.iter().find(|e| e.id == "nan-result").unwrap();
        assert_eq!((e.status_on(&Target::SM90), e.status_on(&Target::SM80)), (policy::Status::HardwareConfirmed, policy::Status::Assumed));
        let sm90 = e.settled_on(&Target::SM90).unwrap();
        assert_eq!((sm90.gpu.as_str(), sm90.date.as_str(), sm90.option.as_str()), ("test", "2026-12-03", KNOBS[knob("nan-result")].1[1]));
        let ev = crate::vectors::parse_line(&sm90.evidence).unwrap();
        let inst = check(&ev).unwrap();
        assert_ne!(eval(&inst, &ev.inputs).ok(), ev.expect, "the evidence is a vector the old assumption gets wrong");
    }

    #[test]
    fn hardware_against_a_compiler_backed_assumption_names_the_compiler() {
        // ptxas relies on -|x|; a "GPU" computing |-x| contradicts the compiler, not only us
        let mut truth = *Policy::current();
        truth.set(knob("abs-neg-order"), 1);
        let s = weigh(Policy::current(), &recorded(&truth, &TEXTS, &inputs()));
        let table = policy::parse_table(policy::SEMANTICS_JSON).unwrap();
        let k = &s.knobs[knob("abs-neg-order")];
        assert!(k.line().contains("CONTRADICTED"), "{}", k.line());
        let against = outside_against(&table, k);
        assert!(!against.is_empty() && against.iter().all(|o| o.source.starts_with("ptxas")), "{against:?}");
        // where the vectors agree with the outside evidence, nothing is said
        let s = weigh(Policy::current(), &recorded(Policy::current(), &TEXTS, &inputs()));
        assert!(s.knobs.iter().all(|k| outside_against(&table, k).is_empty()));
    }

    /// `@P0 HMUL2.INVALID3 R4, R1, R2` with P0 false, its result `got` on each input.
    fn predicated_off_invalid(got: impl Fn(&Inputs) -> u32) -> Vec<Case> {
        let mut inst = Inst::new(4, 1, crate::isa::Operand2::Reg(2));
        inst.flush = crate::isa::Flush::Invalid3;
        inst.pred = crate::isa::Pred { index: 0, negated: false };
        let inst = decode(encode(&inst).unwrap()).unwrap();
        (0..20u32)
            .map(|k| {
                let x = Inputs { a: 0x3c00_4000 ^ k, b: 0x4000_3c00, d: 0x1111_0000 + k, pred: 0x7e, c: 0 };
                let vector = Vector {
                    encoding: encode(&inst).unwrap(),
                    inputs: x,
                    expect: Some(got(&x)),
                    expect_pred: None,
                    origin: "hardware:test:0:2026-12-03".into(),
                    arch: None,
                };
                Case { inst, vector, at: format!("t:{}", k + 1) }
            })
            .collect()
    }

    #[test]
    fn an_undefined_option_claims_nothing_and_a_definite_one_is_shown_when_it_holds() {
        let k = knob("invalid-predicated-off");
        let p = *Policy::current();
        assert_eq!(p.option(k), 0, "the committed table calls these undefined");
        // the device leaves the destination: the option that says so is shown
        let s = weigh(&p, &predicated_off_invalid(|x| x.d));
        assert!(matches!(s.knobs[k].verdict, Verdict::Shows { option: 1, told: 20, .. }), "{}", s.knobs[k].line());
        // the device writes something else: "leaves it" is ruled out, "undefined" stands
        let s = weigh(&p, &predicated_off_invalid(|_| 0x7fff_7fff));
        assert!(matches!(s.knobs[k].verdict, Verdict::Shows { option: 0, told: 20, .. }), "{}", s.knobs[k].line());
        assert!(s.knobs[k].line().contains("confirmed"));
        assert!(s.unexplained.is_empty(), "undefined results are never unexplained");
    }

    #[test]
    fn each_instruction_is_weighed_alone_and_a_split_is_named() {
        let k = knob("nan-result");
        let p = *Policy::current();
        let fma = ["HFMA2 R0, R1, R2, R3", "HFMA2.MMA R0, R1, R2, R3"];
        // all agree: each instruction's verdict is a line of its own under the knob's
        let mut cases = recorded(&p, &TEXTS[..2], &inputs());
        cases.extend(recorded(&p, &fma, &inputs()));
        let s = weigh(&p, &cases);
        let r = &s.knobs[k];
        assert!(matches!(r.verdict, Verdict::Shows { option: 0, .. }), "{}", r.line());
        let ops: Vec<Op> = r.by_instruction.iter().map(|(op, _)| *op).collect();
        assert_eq!(ops, [Op::Hmul2, Op::Hfma2, Op::Hfma2Mma]);
        assert!(r.by_instruction.iter().all(|(_, v)| matches!(v, Verdict::Shows { option: 0, .. })));
        let lines = r.lines();
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert!(lines[1].trim_start().starts_with("HMUL2: confirmed") && lines[3].trim_start().starts_with("HFMA2.MMA: confirmed"), "{lines:#?}");
        // HFMA2 propagates payloads, HMUL2 does not: no one option is right. (HFMA2.MMA is
        // left out: vectors of it that differ from HFMA2 would move `fma-mma` instead.)
        let mut truth = p;
        truth.set(k, 1);
        let mut cases = recorded(&p, &TEXTS[..2], &inputs());
        cases.extend(recorded(&truth, &["HFMA2 R0, R1, R2, R3", "HFMA2 R0, -R1, R2, R3"], &inputs()));
        let s = weigh(&p, &cases);
        let r = &s.knobs[k];
        let Verdict::Split { shows } = &r.verdict else { panic!("{}", r.line()) };
        let picked: Vec<(Op, usize)> = shows.iter().map(|(op, o, _)| (*op, *o)).collect();
        assert_eq!(picked, [(Op::Hmul2, 0), (Op::Hfma2, 1)]);
        assert!(r.line().contains("SPLIT") && r.lines().len() == 3, "{:#?}", r.lines());
        assert_eq!(s.policy.option(k), 0, "a split knob does not move");
        // and --write records nothing for it
        let mut table = policy::parse_table(policy::SEMANTICS_JSON).unwrap();
        record(&mut table, &Target::SM90, &s);
        assert_eq!(table.iter().find(|e| e.id == "nan-result").unwrap().status_on(&Target::SM90), policy::Status::Assumed);
    }

    /// [`recorded`] as `target`'s hardware: the texts `target` has, its words, `"arch"` set.
    fn recorded_on(target: &'static Target, truth: &Policy, texts: &[&str], inputs: &[Inputs]) -> Vec<Case> {
        let mut out = Vec::new();
        for t in texts {
            let Ok(i) = crate::isa::parse_for(target, t) else { continue };
            let word = crate::isa::encode_for(target, &i).unwrap();
            let inst = crate::isa::decode_for(target, word).unwrap();
            for x in inputs {
                let Ok(e) = eval_with(truth, &inst, x) else { continue };
                let arch = (target != Target::DEFAULT).then_some(target);
                let vector =
                    Vector { encoding: word, inputs: *x, expect: Some(e), expect_pred: None, origin: format!("hardware:GPU of {target}:1:2026-12-07"), arch };
                out.push(Case { inst, vector, at: format!("{target}:{}", out.len() + 1) });
            }
        }
        out
    }

    #[test]
    fn sm86_vectors_settle_sm86_alone_and_sm90_stays_an_assumption() {
        let k = knob("nan-result");
        let table = policy::parse_table(policy::SEMANTICS_JSON).unwrap();
        let mut truth = *Policy::for_target(&Target::SM86);
        truth.set(k, 1);
        let cases = recorded_on(&Target::SM86, &truth, &TEXTS, &inputs());
        assert!(cases.len() > 100 && cases.iter().all(|c| c.target() == &Target::SM86));
        let w = weigh_by_arch(&table, &cases).unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].target, w[0].vectors), (&Target::SM86, cases.len()));
        assert!(matches!(w[0].settlement.knobs[k].verdict, Verdict::Shows { option: 1, .. }), "{}", w[0].settlement.knobs[k].line());
        let summary = arch_summary(&table, &w, None);
        let line = |t: &str| summary.iter().find(|l| l.starts_with(&format!("{t}:"))).cloned().unwrap_or_default();
        assert!(line("SM86").contains("nan-result") && line("SM86").starts_with("SM86: settled by these vectors"), "{summary:#?}");
        assert!(line("SM90").starts_with("SM90: no vectors: nothing settled now"), "{summary:#?}");
        let mut written = table.clone();
        assert!(record(&mut written, w[0].target, &w[0].settlement) > 0);
        let e = written.iter().find(|e| e.id == "nan-result").unwrap();
        assert_eq!((e.status_on(&Target::SM86), e.status_on(&Target::SM90)), (policy::Status::HardwareConfirmed, policy::Status::Assumed));
        assert_eq!(e.assumption, table.iter().find(|e| e.id == "nan-result").unwrap().assumption, "the assumption others use is unchanged");
        assert_eq!(e.settled_on(&Target::SM86).map(|s| (s.gpu.as_str(), s.date.as_str())), Some(("GPU of SM86", "2026-12-07")));
        assert_eq!(Policy::from_table(&written, &Target::SM86).unwrap().option(k), 1);
        assert_eq!(Policy::from_table(&written, &Target::SM90).unwrap().option(k), 0);
        // and the written table, read back, weighs SM86's vectors from SM86's settled policy
        let again = weigh_by_arch(&written, &cases).unwrap();
        assert!(again[0].settlement.knobs[k].line().contains("confirmed:"), "{}", again[0].settlement.knobs[k].line());
    }

    #[test]
    fn mixed_architectures_are_weighed_apart_and_a_disagreement_is_shown() {
        let k = knob("sat-negative-zero");
        let table = policy::parse_table(policy::SEMANTICS_JSON).unwrap();
        let sm90 = *Policy::for_target(&Target::SM90);
        let mut other = *Policy::for_target(&Target::SM80);
        other.set(k, 1);
        // SM90 as assumed, SM80 keeping -0 under .SAT: weighed together they would be
        // INCONSISTENT; apart, each shows its own
        let mut cases = recorded_on(&Target::SM90, &sm90, &TEXTS, &inputs());
        cases.extend(recorded_on(&Target::SM80, &other, &TEXTS, &inputs()));
        let together = weigh(&sm90, &cases);
        assert!(!matches!(together.knobs[k].verdict, Verdict::Shows { .. }), "{}", together.knobs[k].line());
        let w = weigh_by_arch(&table, &cases).unwrap();
        let archs: Vec<&Target> = w.iter().map(|w| w.target).collect();
        assert_eq!(archs, [&Target::SM80, &Target::SM90]);
        assert!(matches!(w[0].settlement.knobs[k].verdict, Verdict::Shows { option: 1, .. }));
        assert!(matches!(w[1].settlement.knobs[k].verdict, Verdict::Shows { option: 0, .. }));
        assert!(w.iter().all(|w| w.settlement.unexplained.is_empty()));
        let d = differences(&w);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert!(d[0].starts_with("DIFFERS sat-negative-zero") && d[0].contains("SM80 shows option 1") && d[0].contains("SM90 shows option 0"), "{}", d[0]);
        // each is recorded for its own architecture
        let mut written = table.clone();
        for w in &w {
            record(&mut written, w.target, &w.settlement);
        }
        let e = written.iter().find(|e| e.id == "sat-negative-zero").unwrap();
        assert_eq!(e.option_on(&Target::SM80), KNOBS[k].1[1]);
        assert_eq!(e.option_on(&Target::SM90), KNOBS[k].1[0]);
        assert_eq!(e.status_on(&Target::SM86), policy::Status::Assumed, "no SM86 vectors: still the assumption");
    }

    #[test]
    fn a_settlement_on_an_architecture_without_the_instruction_is_refused() {
        let mut table = policy::parse_table(policy::SEMANTICS_JSON).unwrap();
        let e = table.iter_mut().find(|e| e.id == "fma-mma").unwrap();
        let line = "x".to_string();
        e.settled.insert("SM100".into(), Settled { option: e.assumption.clone(), gpu: String::new(), date: String::new(), evidence: line, told: 1 });
        let err = Policy::check_table(&table).unwrap_err().to_string();
        assert!(err.contains("fma-mma") && err.contains("SM100"), "{err}");
        assert_eq!(gpu_and_date("hardware:NVIDIA H100 80GB HBM3:580.95.05:2026-12-02"), ("NVIDIA H100 80GB HBM3".into(), "2026-12-02".into()));
        assert_eq!(gpu_and_date("hardware:x"), ("x".into(), String::new()));
    }

    #[test]
    fn what_no_option_explains_is_reported_not_guessed() {
        let p = *Policy::current();
        let mut cases = recorded(&p, &TEXTS[..1], &inputs());
        // a "GPU" that gets an ordinary product wrong: no knob explains it
        let c = cases.iter_mut().find(|c| c.vector.inputs.a == 0x3c00_4000 && c.vector.inputs.b == 0x3c00_4000).unwrap();
        c.vector.expect = Some(c.vector.expect.unwrap() ^ 1);
        let s = weigh(&p, &cases);
        assert_eq!(s.policy, p);
        assert_eq!(s.unexplained.len(), 1, "{:?}", s.unexplained);
    }
}
