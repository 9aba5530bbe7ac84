//! Replay: every recorded vector through the reference, each line classified (pass,
//! mismatch, malformed, invalid, undefined) and tallied by origin and form. Each vector is
//! read and computed as its architecture's (its `"arch"`, else `--arch`, else SM90), under
//! that architecture's policy ([`crate::reference::policy::Policy::for_target`]). `verify` prints
//! it; the runner replays the project's vectors as one of its software checks.

use crate::isa::{render, Form};
use crate::reference;
use crate::vectors::{self, check_as, Vector};
use harness_isa::target::Target;
use std::collections::BTreeMap;
use std::io::Write;

/// Why a replay could not finish: a path that cannot be read, the report's output, or
/// nothing to replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Read(#[from] vectors::ReadError),
    #[error("output: {0}")]
    Output(std::io::Error),
    #[error("no vectors in {0}")]
    Empty(String),
}

#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    undefined: usize,
}

/// Totals of one replay.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Replay {
    pub vectors: usize,
    pub pass: usize,
    pub mismatch: usize,
    pub malformed: usize,
    pub invalid: usize,
    pub undefined: usize,
    /// The report lines of the failures (file:line and what), in order.
    pub failures: Vec<String>,
}

impl Replay {
    pub fn ok(&self) -> bool {
        self.mismatch + self.malformed + self.invalid == 0
    }
}

/// Replay every vector under `paths` through the reference, writing the report to `out`.
/// Replays the vectors of `paths` line by line as they are read (memory stays flat whatever
/// the files hold), writing each failing or undefined line and then the tallies to `out`.
pub fn replay<P: AsRef<std::path::Path>>(paths: &[P], out: &mut dyn Write) -> Result<Replay, ReplayError> {
    replay_as(paths, None, out)
}

/// [`replay`], each vector's encoding read by the architecture its line names (`"arch"`),
/// and a line that names none by `arch` (SM90 where None). A line naming another
/// architecture than `arch` (where given) is invalid: the reader asked for one the vector
/// was not run on.
pub fn replay_as<P: AsRef<std::path::Path>>(paths: &[P], arch: Option<&'static Target>, out: &mut dyn Write) -> Result<Replay, ReplayError> {
    let mut vectors = 0usize;
    let mut failures = Vec::new();
    let mut by_origin: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_form: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_op: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut malformed, mut invalid, mut mismatch, mut undefined, mut pass) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let w = |o: &mut dyn Write, s: String| writeln!(o, "{s}").map_err(ReplayError::Output);
    let mut fail = |o: &mut dyn Write, s: String| {
        if failures.len() < 100 {
            failures.push(s.clone());
        }
        w(o, s)
    };
    vectors::for_each_line(paths, |l| -> Result<(), ReplayError> {
        vectors += 1;
        let at = l.at();
        let v = match &l.item {
            Ok(v) => v,
            Err(e) => {
                malformed += 1;
                fail(out, format!("{at}: malformed: {e}"))?;
                return Ok(());
            }
        };
        let target = match (v.arch, arch) {
            (Some(named), Some(asked)) if named != asked => {
                invalid += 1;
                by_origin.entry(v.origin.clone()).or_default().fail += 1;
                fail(out, format!("{at}: invalid: the vector names arch {named}, but --arch {asked} was asked for"))?;
                return Ok(());
            }
            (named, asked) => named.or(asked).unwrap_or(Target::DEFAULT),
        };
        let inst = match check_as(v, target) {
            Ok(i) => i,
            Err(e) => {
                invalid += 1;
                by_origin.entry(v.origin.clone()).or_default().fail += 1;
                fail(out, format!("{at}: invalid: {e}"))?;
                return Ok(());
            }
        };
        let origin = by_origin.entry(v.origin.clone()).or_default();
        let op = by_op.entry(inst.op.mnemonic().to_string()).or_default();
        let form = by_form.entry(inst.form().cli_name().to_string()).or_default();
        let x = v.inputs;
        // operand 3 too where the instruction has one: a line says all a reader needs to repeat it
        let c = if inst.c.is_some() { format!(" c={:#010x}", x.c) } else { String::new() };
        let text = crate::isa::render_for(target, &inst).unwrap_or_else(|| render(&inst));
        let what = format!("{text}  a={:#010x} b={:#010x}{c} d={:#010x} pred={:#04x}", x.a, x.b, x.d, x.pred);
        let Some(expect) = v.expect else {
            malformed += 1;
            origin.fail += 1;
            form.fail += 1;
            op.fail += 1;
            fail(out, format!("{at}: malformed: no \"expect\" to check: {what}"))?;
            return Ok(());
        };
        // the destination, and the predicates after where the line records them (an
        // instruction that writes some, or hardware that changed one it should not have),
        // under the vector's architecture's policy; a result the reference leaves undefined
        // is judged as a whole, as the run judges it
        let policy = reference::policy::Policy::for_target(target);
        let reference = reference::eval_with(policy, &inst, &x).and_then(|got| match v.expect_pred {
            Some(_) => reference::preds_after_with(policy, &inst, &x).map(|p| (got, Some(p))),
            None => Ok((got, None)),
        });
        match reference {
            Ok((got, p)) if got == expect && p == v.expect_pred => {
                pass += 1;
                origin.pass += 1;
                form.pass += 1;
                op.pass += 1;
            }
            Ok((got, p)) => {
                mismatch += 1;
                origin.fail += 1;
                form.fail += 1;
                op.fail += 1;
                let why = match (p, v.expect_pred) {
                    (Some(p), Some(e)) if got == expect => format!("expected predicates {e:#04x}, reference {p:#04x}"),
                    (Some(p), Some(e)) if p != e => format!("expected {expect:#010x}, reference {got:#010x}; expected predicates {e:#04x}, reference {p:#04x}"),
                    _ => format!("expected {expect:#010x}, reference {got:#010x}"),
                };
                fail(out, format!("{at}: mismatch: {what}  {why}"))?;
            }
            Err(u) if v.origin == "reference" => {
                mismatch += 1;
                origin.fail += 1;
                form.fail += 1;
                op.fail += 1;
                fail(out, format!("{at}: mismatch: origin \"reference\" claims {expect:#010x} but the reference is undefined ({u}): {what}"))?;
            }
            Err(u) => {
                undefined += 1;
                origin.undefined += 1;
                form.undefined += 1;
                op.undefined += 1;
                w(out, format!("{at}: undefined: {u}: {what}  (recorded {expect:#010x})"))?;
            }
        }
        Ok(())
    })?;
    if vectors == 0 {
        let names: Vec<String> = paths.iter().map(|p| p.as_ref().display().to_string()).collect();
        return Err(ReplayError::Empty(names.join(" ")));
    }
    w(out, format!("{vectors} vectors: {pass} pass, {mismatch} mismatch, {malformed} malformed, {invalid} invalid, {undefined} undefined"))?;
    for (title, map) in [("origin", &by_origin), ("instruction", &by_op), ("form", &by_form)] {
        for (k, t) in map {
            w(out, format!("  by {title} {k:?}: {} pass, {} fail, {} undefined", t.pass, t.fail, t.undefined))?;
        }
    }
    Ok(Replay { vectors, pass, mismatch, malformed, invalid, undefined, failures })
}

/// Lines of the committed reference set by form, for the coverage test.
pub fn forms_of(vs: &[Vector]) -> BTreeMap<Form, usize> {
    let mut m = BTreeMap::new();
    for v in vs {
        if let Ok(i) = crate::isa::decode(v.encoding) {
            *m.entry(i.form()).or_insert(0) += 1;
        }
    }
    m
}
