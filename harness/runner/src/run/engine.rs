//! One batch from instructions to findings: inputs, build, execute (bisecting faults down
//! to single instructions), compare bit for bit with the reference, minimize mismatches.
//! Pure over a [`Backend`] and an [`Executor`]: the same code runs on hardware and in tests.

use super::journal::{BatchRecord, ItemRecord};
use super::minimize::minimize;
use super::pipeline::{Backend, Case};
use super::report::{self, hex32, Finding, FindingInputs, Totals};
use crate::gpu::{ExecError, Executor};
use crate::inputs::Inputs;
use crate::isa::{format_hex, render, Inst};

/// Settings of a batch run.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Register files per instruction.
    pub inputs: usize,
    pub seed: u64,
    /// Most executions spent minimizing one mismatch (0: do not minimize).
    pub minimize_budget: usize,
    /// Results kept as [`Observed`] per instruction: `None` all of them, `Some(n)` the first
    /// `n` inputs (the special values come first) and every mismatching one.
    pub keep_vectors: Option<usize>,
    /// End the run at the first failed launch instead of bisecting it: a device session
    /// leaves a road that fails for the next one at once (`run --stop-on-launch-failure`).
    pub stop_on_launch_failure: bool,
}

/// One hardware observation: the stuff of a hardware vector line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub word: u128,
    pub inputs: Inputs,
    pub got: u32,
    /// The predicate file P0..P6 the word left; None where the road does not read it back.
    pub pred: Option<u8>,
}

pub struct BatchOutcome {
    pub record: BatchRecord,
    /// Results whose reference value is defined (written as vectors when asked).
    pub observed: Vec<Observed>,
}

/// Extra text beside a fault (nvdisasm's view of the word, when available).
pub type Describe<'a> = &'a (dyn Fn(u128) -> Option<String> + Sync);

/// The seed of item `index`'s inputs: its own stream, so shards agree.
pub fn input_seed(seed: u64, index: u64) -> u64 {
    crate::rng::Rng::fork(seed ^ 0x1f1f_0000_2e2e_0001, index).next_u64()
}

/// The decoder's view of a word for a finding: its text, and its classification.
pub fn classify(word: u128) -> (String, String) {
    classify_for(crate::target::Target::DEFAULT, word)
}

/// An instruction's text as `target` prints it.
fn text_for(target: &'static crate::target::Target, i: &Inst) -> String {
    crate::isa::render_for(target, i).unwrap_or_else(|| render(i))
}

/// [`classify`] of a word as `target` reads and prints it.
pub fn classify_for(target: &'static crate::target::Target, word: u128) -> (String, String) {
    let text = |i: &Inst| text_for(target, i);
    match crate::isa::decode_for(target, word) {
        Ok(i) if i.has_invalid_value() => (text(&i), "decoder: legal, with INVALIDn values (meaning unknown)".into()),
        Ok(i) => (text(&i), "decoder: legal".into()),
        Err(e) => (format!("illegal: {e}"), format!("decoder: illegal ({})", e.kind())),
    }
}

/// What one input gave: the inputs the kernel actually used, the destination it produced
/// and the predicate file after it (None where the road does not read it back).
type Got = (Inputs, u32, Option<u8>);

/// Outcome of one attempt to run some cases: Ok(per case, per input) | Err(failure blamed
/// on them).
type Attempt = Result<Vec<Vec<Got>>, String>;

/// A mismatching input: the inputs, the destination expected and got, and where they
/// differ the predicates after expected and got.
type Bad = (Inputs, u32, u32, Option<(u8, u8)>);

/// Threads of the smallest case the patcher builds (one warp).
pub const MIN_THREADS: usize = 32;

/// Build and run `cases` once. `Err` only for failures that bisecting cannot help.
pub fn attempt(backend: &dyn Backend, exec: &mut dyn Executor, cases: &[Case]) -> Result<Attempt, ExecError> {
    let prepared = match backend.build(cases) {
        Ok(p) => p,
        Err(e) => return Ok(Err(format!("patcher could not build the kernel: {e}"))),
    };
    // every launch of the build, in order; a failure blamed on the instructions fails them all
    let mut outs = Vec::with_capacity(prepared.jobs.len());
    for job in &prepared.jobs {
        match exec.execute(job) {
            Ok(out) => outs.push(out),
            Err(e) if e.blames_instructions() => return Ok(Err(e.to_string())),
            Err(e) => return Err(e),
        }
    }
    let preds = match backend.preds(&prepared, &outs) {
        Ok(Some(p)) if p.len() != cases.len() || !p.iter().zip(cases).all(|(v, c)| v.as_ref().is_none_or(|v| v.len() == c.inputs.len())) => {
            return Ok(Err(format!("predicates of {} cases, want {}", p.len(), cases.len())))
        }
        Ok(p) => p,
        Err(e) => return Ok(Err(format!("predicates unreadable: {e}"))),
    };
    Ok(match backend.results(&prepared, &outs) {
        Ok(r) if shaped(&r, cases) => {
            // the patcher may normalise inputs (shared constants, coinciding registers):
            // judge each result by what the kernel really read
            match backend.effective_inputs(&prepared, cases) {
                Ok(used) => Ok(used
                    .into_iter()
                    .zip(r)
                    .enumerate()
                    .map(|(i, (ins, res))| {
                        let p = |k: usize| preds.as_ref().and_then(|p| p[i].as_ref()).map(|p| p[k]);
                        ins.into_iter().zip(res).enumerate().map(|(k, (x, v))| (x, v, p(k))).collect()
                    })
                    .collect()),
                Err(e) => Err(format!("inputs the kernel read: {e}")),
            }
        }
        Ok(r) => Err(format!("output holds {} cases, want {}", r.len(), cases.len())),
        Err(e) => Err(format!("output unreadable: {e}")),
    })
}

/// Whether `r` holds one result per input of each of `cases`.
fn shaped<T>(r: &[Vec<T>], cases: &[Case]) -> bool {
    r.len() == cases.len() && r.iter().zip(cases).all(|(v, c)| v.len() == c.inputs.len())
}

/// Run `cases`, splitting on blamed failures until single instructions are left. Each slot
/// of the answer is the case's results or the failure its lone run raised. A group that
/// fails while none of its halves does is reported in `group_faults` (never silently lost).
fn bisect(
    backend: &dyn Backend,
    exec: &mut dyn Executor,
    cases: &[Case],
    out: &mut Vec<Result<Vec<Got>, String>>,
    group_faults: &mut Vec<(usize, usize, String)>,
    base: usize,
    stop: bool,
) -> Result<usize, ExecError> {
    match attempt(backend, exec, cases)? {
        Ok(r) => {
            out.extend(r.into_iter().map(Ok));
            Ok(0)
        }
        Err(e) if stop => {
            say_failed(&format!("a launch of {} instructions: {e}; not bisected (--stop-on-launch-failure)", cases.len()));
            Err(ExecError::Setup(format!("a launch of {} instructions failed ({e}); the run stops at its first failed launch", cases.len())))
        }
        Err(e) if cases.len() == 1 => {
            say_failed(&format!("{} alone: {e}", crate::isa::format_hex(cases[0].word)));
            out.push(Err(e));
            Ok(1)
        }
        Err(e) => {
            say_failed(&format!("a launch of {} instructions: {e}; running each half", cases.len()));
            let mid = cases.len() / 2;
            let f = bisect(backend, exec, &cases[..mid], out, group_faults, base, false)?
                + bisect(backend, exec, &cases[mid..], out, group_faults, base + mid, false)?;
            if f == 0 {
                group_faults.push((base, cases.len(), e));
            }
            Ok(f.max(1))
        }
    }
}

/// A failed launch, said on stderr as it happens (a run bisecting a fault or a hang would
/// otherwise be silent for minutes): the first 20 of a process, then every 500th.
fn say_failed(what: &str) {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if n <= 20 || n.is_multiple_of(500) {
        crate::errln!("launch failed ({n} so far): {what}");
    }
}

/// One case's results (input, result per thread), or why its lone launch failed.
type CaseResult = Result<Vec<Got>, String>;

/// The constant-bank words (byte offset / 4) an instruction reads: through operand 2 (the
/// `const` forms) or, for a three-source word, through operand 3 (`HFMA2 R0, R1, R2,
/// c[0x3][0x10]`, the `const-c` forms). The kernel fills each bank word once a launch, from
/// the first case that reads it, whichever operand that case reads it through.
fn bank_words(inst: &Inst) -> Vec<i32> {
    std::iter::once(inst.b)
        .chain(inst.c)
        .filter_map(|o| match o {
            crate::isa::Operand2::Const { offset, .. } => Some(offset / 4),
            _ => None,
        })
        .collect()
}

/// Cases (by position) grouped into launches so that no two of a launch read the same
/// constant-bank word; each case goes to the first group it fits, so a batch without such
/// clashes is one launch, in order. At most `most` cases a group (the road's
/// `cases_per_build`).
fn launch_groups(words: impl Iterator<Item = Vec<i32>>, most: Option<usize>) -> Vec<Vec<usize>> {
    if let Some(n) = most {
        return words.enumerate().map(|(i, _)| i).collect::<Vec<_>>().chunks(n.max(1)).map(<[usize]>::to_vec).collect();
    }
    let mut groups: Vec<(Vec<usize>, std::collections::BTreeSet<i32>)> = Vec::new();
    for (i, read) in words.enumerate() {
        let fits = |g: &(Vec<usize>, std::collections::BTreeSet<i32>)| read.iter().all(|w| !g.1.contains(w));
        let k = match groups.iter().position(fits) {
            Some(k) => k,
            None => {
                groups.push((Vec::new(), Default::default()));
                groups.len() - 1
            }
        };
        groups[k].0.push(i);
        groups[k].1.extend(read);
    }
    groups.into_iter().map(|g| g.0).collect()
}

/// Run a batch of `(index, word)` items.
pub fn run_batch(
    backend: &dyn Backend,
    exec: &mut dyn Executor,
    items: &[(u64, u128)],
    o: &EngineOptions,
    describe: Describe,
) -> Result<BatchOutcome, ExecError> {
    let mut rec = BatchRecord::default();
    let mut observed = Vec::new();
    // instructions that can run, with their inputs; None = a word the decoder calls illegal
    // that the patcher still places (the hardware decides; the reference has no value)
    let mut run: Vec<(usize, Option<Inst>)> = Vec::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut item_totals: Vec<Totals> = vec![Totals { instructions: 1, ..Default::default() }; items.len()];
    let forms: Vec<String> =
        items.iter().map(|&(_, w)| backend.decode(w).map(|i| i.op.form_key(i.form()).to_string()).unwrap_or_else(|_| "illegal".into())).collect();
    for (k, &(index, word)) in items.iter().enumerate() {
        let inst = backend.decode(word).ok();
        match backend.runnable(word) {
            Ok(()) => {
                let proxy = Inst::new(0, 1, crate::isa::Operand2::Reg(2));
                let inputs = backend.input_set(inst.as_ref().unwrap_or(&proxy), input_seed(o.seed, index), o.inputs);
                item_totals[k].inputs = inputs.len() as u64;
                run.push((k, inst));
                cases.push(Case { word, inputs });
            }
            Err(_) => item_totals[k].not_runnable = 1,
        }
    }
    let mut results = Vec::with_capacity(cases.len());
    let mut group_faults = Vec::new();
    let (mut ins, mut want): (Vec<Inputs>, Vec<u32>) = (Vec::new(), Vec::new());
    // one launch per group of cases that read distinct words of constant bank 3: the bank
    // holds one value per offset, so a case's c[] operand is its own input, whatever else
    // the batch holds (and a shard's results equal the unsharded run's)
    let groups = launch_groups(run.iter().map(|(_, inst)| inst.as_ref().map(bank_words).unwrap_or_default()), backend.cases_per_build());
    let mut slots: Vec<Option<CaseResult>> = vec![None; cases.len()];
    for g in groups {
        let part: Vec<Case> = g.iter().map(|&i| cases[i].clone()).collect();
        let mut got = Vec::with_capacity(part.len());
        let mut faults = Vec::new();
        bisect(backend, exec, &part, &mut got, &mut faults, 0, o.stop_on_launch_failure)?;
        for (&i, r) in g.iter().zip(got) {
            slots[i] = Some(r);
        }
        group_faults.extend(faults.into_iter().map(|(base, n, e)| (g[base], n, e)));
    }
    results.extend(slots.into_iter().map(|r| r.unwrap_or_else(|| Err("not launched".into()))));
    for (base, n, e) in group_faults {
        let (k, _) = &run[base];
        // a fault finding is a fault in the totals too: the verdict, the exit code, the
        // totals and JUnit are all read from the same counts
        item_totals[*k].faults += 1;
        rec.findings.push(Finding::fault(
            format_hex(items[*k].1),
            classify_for(backend.target(), items[*k].1).0,
            format!("a batch of {n} instructions starting here failed ({e}) but no single one of them does alone"),
        ));
    }
    for (((k, inst), case), res) in run.iter().zip(&cases).zip(results) {
        let t = &mut item_totals[*k];
        let got = match res {
            Ok(g) => g,
            Err(e) => {
                t.faults = 1;
                let nv = describe(case.word).map(|s| format!("; nvdisasm: {s}")).unwrap_or_default();
                let (text, class) = classify_for(backend.target(), case.word);
                rec.findings.push(Finding {
                    kind: report::FindingKind::Fault,
                    encoding: format_hex(case.word),
                    text,
                    minimized: None,
                    minimized_text: None,
                    inputs: None,
                    expected: None,
                    got: None,
                    detail: format!("{e}; {class}{nv}"),
                });
                continue;
            }
        };
        let Some(inst) = inst else {
            // ran without a fault, but there is no reference value for an illegal word
            t.undefined += got.len() as u64;
            continue;
        };
        let mut first_bad: Option<Bad> = None;
        // the reference for all inputs at once; one by one only when some are undefined
        ins.clear();
        ins.extend(got.iter().map(|x| x.0));
        want.clear();
        want.resize(ins.len(), 0);
        let all_defined = backend.expect_batch(inst, &ins, &mut want).is_ok();
        for (k, &(inp, g, gp)) in got.iter().enumerate() {
            let e = if all_defined { Ok(want[k]) } else { backend.expect(inst, &inp) };
            // the predicates where the road read them back: what the word must leave there
            // (the file as it was, for an instruction that writes none)
            let e = e.and_then(|e| match gp {
                Some(gp) => backend.expect_preds(inst, &inp).map(|ep| (e, (ep != gp).then_some((ep, gp)))),
                None => Ok((e, None)),
            });
            match e {
                Ok((e, bad_pred)) => {
                    t.compared += 1;
                    let bad = e != g || bad_pred.is_some();
                    if bad {
                        t.mismatches += 1;
                        first_bad.get_or_insert((inp, e, g, bad_pred));
                    }
                    if bad || o.keep_vectors.is_none_or(|n| k < n) {
                        observed.push(Observed { word: case.word, inputs: inp, got: g, pred: gp });
                    }
                }
                Err(_) => {
                    // no reference value (an INVALIDn field), but what the device did is
                    // the only evidence of it: kept like any result (verify counts it
                    // `undefined`; settle weighs it for `invalid-predicated-off`)
                    t.undefined += 1;
                    if o.keep_vectors.is_none_or(|n| k < n) {
                        observed.push(Observed { word: case.word, inputs: inp, got: g, pred: gp });
                    }
                }
            }
        }
        if let Some((inp, e, g, bad_pred)) = first_bad {
            let min = if o.minimize_budget > 0 {
                let mut still = |c: &Inst| -> bool {
                    let Ok(w) = crate::isa::encode_for(backend.target(), c) else { return false };
                    let Ok(want) = backend.expect(c, &inp) else { return false };
                    let want_pred = backend.expect_preds(c, &inp).ok();
                    // one warp of the same input: the kernel runs whole warps (32 threads at least)
                    let case = Case { word: w, inputs: vec![inp; MIN_THREADS] };
                    let differs = |&(_, v, p): &Got| v != want || p.zip(want_pred).is_some_and(|(p, w)| p != w);
                    matches!(attempt(backend, exec, &[case]), Ok(Ok(r)) if r[0][0].0 == inp && differs(&r[0][0]))
                };
                let m = minimize(inst, o.minimize_budget, &mut still);
                (m != *inst).then_some(m)
            } else {
                None
            };
            rec.findings.push(Finding {
                kind: report::FindingKind::Mismatch,
                encoding: format_hex(case.word),
                text: text_for(backend.target(), inst),
                minimized: min.as_ref().and_then(|m| crate::isa::encode_for(backend.target(), m).ok()).map(format_hex),
                minimized_text: min.as_ref().map(|m| text_for(backend.target(), m)),
                inputs: Some(FindingInputs::of(&inp)),
                expected: Some(hex32(e)),
                got: Some(hex32(g)),
                detail: match bad_pred {
                    // the destination may agree: the first difference is in the predicates
                    Some((ep, gp)) => {
                        format!("{} of {} inputs differ; here the predicates P0..P6 after are {gp:#04x}, expected {ep:#04x}", t.mismatches, t.compared)
                    }
                    None => format!("{} of {} inputs differ", t.mismatches, t.compared),
                },
            });
        }
    }
    rec.items = items.iter().zip(item_totals).zip(forms).map(|((&(index, _), totals), form)| ItemRecord { index, form, totals }).collect();
    Ok(BatchOutcome { record: rec, observed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake::FakeExecutor;
    use crate::gpu::LaunchJob;
    use crate::isa::decode;
    use crate::run::pipeline::FakeBackend;

    /// Counts launches, to check bisection stays logarithmic.
    struct Counting(FakeExecutor, u64);
    impl Executor for Counting {
        fn execute(&mut self, job: &LaunchJob) -> Result<Vec<u8>, ExecError> {
            self.1 += 1;
            self.0.execute(job)
        }
    }

    fn opts() -> EngineOptions {
        EngineOptions { inputs: 3, seed: 9, minimize_budget: 16, keep_vectors: None, stop_on_launch_failure: false }
    }

    #[test]
    fn bisection_isolates_each_faulting_instruction_in_few_launches() {
        let words = crate::gen::generate(&crate::gen::GenOptions::legal_of(4, crate::reference::IMPLEMENTED), 0, 64);
        let items: Vec<(u64, u128)> = words.iter().enumerate().map(|(i, &w)| (i as u64, w)).collect();
        let mut exec = Counting(FakeExecutor { fault_on: vec![words[3], words[40]], ..Default::default() }, 0);
        let out = run_batch(&FakeBackend::default(), &mut exec, &items, &opts(), &|_| Some("nv text".into())).unwrap();
        let faults: Vec<&str> = out.record.findings.iter().filter(|f| f.kind == report::FindingKind::Fault).map(|f| f.encoding.as_str()).collect();
        assert_eq!(faults, [format_hex(words[3]), format_hex(words[40])]);
        assert!(out.record.findings.iter().all(|f| f.detail.contains("ILLEGAL_INSTRUCTION") && f.detail.contains("nvdisasm: nv text")));
        let t: Vec<&Totals> = out.record.items.iter().map(|i| &i.totals).collect();
        assert_eq!(t.iter().map(|t| t.faults).sum::<u64>(), 2);
        // the predicates come back and are compared too: an HSETP2 that writes one predicate
        // twice with different results has none the reference defines
        let undefined: u64 = t.iter().map(|t| t.undefined).sum();
        assert_eq!(t.iter().map(|t| t.compared).sum::<u64>() + undefined, 62 * 3);
        assert!(t.iter().zip(&words).all(|(t, &w)| t.undefined == 0 || decode(w).is_ok_and(|i| i.op == crate::isa::Op::Hsetp2)));
        assert!(exec.1 <= 1 + 2 * 2 * 6, "{} launches", exec.1);
        assert_eq!(out.observed.len(), 62 * 3);
    }

    /// The simulated executor answers the batch road's record (destination, then P0..P6
    /// after): HSETP2's predicate results are the reference's and compared on every input;
    /// `pred-flip-if` on one word makes that word, alone, a mismatch of its predicates. The
    /// four's records leave the file as it was, so their observations are what they were.
    #[test]
    fn a_simulated_run_compares_hsetp2_predicates_and_finds_a_wrong_one() {
        use crate::isa::Op;
        let words = crate::gen::generate(&crate::gen::GenOptions::legal_of(11, &[Op::Hsetp2]), 0, 24);
        let items: Vec<(u64, u128)> = words.iter().enumerate().map(|(i, &w)| (i as u64, w)).collect();
        let o = EngineOptions { inputs: 32, ..opts() };
        let out = run_batch(&FakeBackend::default(), &mut FakeExecutor::default(), &items, &o, &|_| None).unwrap();
        assert!(out.record.findings.is_empty(), "{:?}", out.record.findings);
        let compared: u64 = out.record.items.iter().map(|i| i.totals.compared).sum();
        assert!(compared >= 20 * 32, "{compared} results compared");
        // every observation carries the predicates after: the reference's, and some not the
        // file as it was (the comparison results land in P0..P6)
        assert!(out.observed.iter().all(|x| x.pred == FakeBackend::default().expect_preds(&decode(x.word).unwrap(), &x.inputs).ok()));
        assert!(out.observed.iter().filter(|x| x.pred != Some(x.inputs.pred & 0x7f)).count() > out.observed.len() / 4);
        // one word's P0 wrong after it
        let bad = words[5];
        let mut exec = FakeExecutor { pred_flip_if: vec![(u128::MAX, bad)], ..Default::default() };
        let out = run_batch(&FakeBackend::default(), &mut exec, &items, &o, &|_| None).unwrap();
        let [f] = &out.record.findings[..] else { panic!("{:?}", out.record.findings) };
        assert_eq!((f.kind, f.encoding.as_str()), (report::FindingKind::Mismatch, format_hex(bad).as_str()));
        assert!(f.detail.contains("the predicates P0..P6 after are"), "{f:?}");
        assert_eq!(f.expected, f.got, "the destination agrees: {f:?}");
        let t = &out.record.items[5].totals;
        assert_eq!(t.mismatches, t.compared, "every input of the word differs: {t:?}");
        // the four (HFMA2.MMA among HFMA2's forms): the file as it was after every input
        let words = crate::gen::generate(&crate::gen::GenOptions::legal_of(12, &[Op::Hmul2, Op::Hadd2, Op::Hfma2]), 0, 16);
        let items: Vec<(u64, u128)> = words.iter().enumerate().map(|(i, &w)| (i as u64, w)).collect();
        let out = run_batch(&FakeBackend::default(), &mut FakeExecutor::default(), &items, &o, &|_| None).unwrap();
        assert!(out.record.findings.is_empty() && !out.observed.is_empty());
        assert!(out.observed.iter().all(|x| x.pred == Some(x.inputs.pred & 0x7f)));
        // and the same word clobbering P0 is a mismatch
        let mut exec = FakeExecutor { pred_flip_if: vec![(u128::MAX, words[3])], ..Default::default() };
        let out = run_batch(&FakeBackend::default(), &mut exec, &items, &o, &|_| None).unwrap();
        assert_eq!(out.record.findings.iter().map(|f| f.encoding.as_str()).collect::<Vec<_>>(), [format_hex(words[3]).as_str()]);
    }

    #[test]
    fn stop_on_launch_failure_ends_the_run_at_the_first_failed_launch_without_bisecting() {
        let words = crate::gen::generate(&crate::gen::GenOptions::legal_of(4, crate::reference::IMPLEMENTED), 0, 64);
        let items: Vec<(u64, u128)> = words.iter().enumerate().map(|(i, &w)| (i as u64, w)).collect();
        let mut exec = Counting(FakeExecutor { fault_on: vec![words[3]], ..Default::default() }, 0);
        let stop = EngineOptions { stop_on_launch_failure: true, ..opts() };
        let e = run_batch(&FakeBackend::default(), &mut exec, &items, &stop, &|_| None).err().unwrap();
        // (the first launch: the words that read no constant-bank word another reads)
        assert!(matches!(&e, ExecError::Setup(m) if m.contains("instructions failed") && m.contains("ILLEGAL_INSTRUCTION")), "{e}");
        assert_eq!(exec.1, 1, "one launch, not bisected");
        // a clean batch is unaffected
        let mut exec = Counting(FakeExecutor::default(), 0);
        assert_eq!(run_batch(&FakeBackend::default(), &mut exec, &items, &stop, &|_| None).unwrap().observed.len(), 64 * 3);
    }

    #[test]
    fn a_clean_batch_is_one_launch_and_a_setup_error_stops() {
        let words = crate::gen::generate(&crate::gen::GenOptions::legal_of(5, crate::reference::IMPLEMENTED), 0, 10);
        let items: Vec<(u64, u128)> = words.iter().enumerate().map(|(i, &w)| (i as u64, w)).collect();
        let mut exec = Counting(FakeExecutor::default(), 0);
        let out = run_batch(&FakeBackend::default(), &mut exec, &items, &opts(), &|_| None).unwrap();
        assert_eq!(exec.1, 1);
        assert!(out.record.findings.is_empty());
        struct Broken;
        impl Executor for Broken {
            fn execute(&mut self, _: &LaunchJob) -> Result<Vec<u8>, ExecError> {
                Err(ExecError::Setup("out of memory".into()))
            }
        }
        assert!(matches!(run_batch(&FakeBackend::default(), &mut Broken, &items, &opts(), &|_| None), Err(ExecError::Setup(_))));
    }

    #[test]
    fn cases_reading_one_bank_word_never_share_a_launch() {
        let w = |o: &[i32]| o.iter().map(|o| o / 4).collect::<Vec<i32>>();
        let g = launch_groups([w(&[]), w(&[8]), w(&[8]), w(&[]), w(&[9]), w(&[12]), w(&[8])].into_iter(), None);
        // 8 and 9 are the same 32-bit word of the bank; 12 is the next
        assert_eq!(g, vec![vec![0, 1, 3, 5], vec![2], vec![4], vec![6]]);
        assert_eq!(launch_groups([w(&[]), w(&[0]), w(&[4])].into_iter(), None), vec![vec![0, 1, 2]], "no clash: one launch");
        assert_eq!(launch_groups([w(&[]), w(&[0]), w(&[0])].into_iter(), Some(1)), vec![vec![0], vec![1], vec![2]], "one case a build");
    }

    /// Issue 39 item 10: a three-source word reads the bank through operand 3 as well; the
    /// grouping once looked at operand 2 only, so an `HFMA2 ..., c[0x3][X]` shared a launch
    /// with an `HMUL2 ..., c[0x3][X]` and one of them read the other's value: the item's
    /// inputs depended on the batch (on the emulated driver and on a GPU alike).
    #[test]
    fn operand_3_in_the_bank_counts_as_reading_it() {
        use crate::isa::{Op, Operand2};
        let mut fma = Inst::new(0, 1, Operand2::Reg(2));
        fma.op = Op::Hfma2;
        fma.c = Some(Operand2::Const { bank: 3, offset: 0x10 });
        let mul = Inst::new(0, 1, Operand2::Const { bank: 3, offset: 0x10 });
        assert_eq!(bank_words(&fma), vec![4]);
        assert_eq!(bank_words(&mul), vec![4]);
        assert_eq!(launch_groups([bank_words(&mul), bank_words(&fma), bank_words(&fma)].into_iter(), None), vec![vec![0], vec![1], vec![2]]);
    }

    /// A worker killed mid-batch (its first launch dies, the retries run clean): the batch's
    /// fault finding is counted in the totals, so the verdict, the totals and JUnit agree.
    #[test]
    fn a_batch_that_died_once_is_a_counted_fault() {
        let words = crate::gen::generate(&crate::gen::GenOptions::legal_of(8, crate::reference::IMPLEMENTED), 0, 8);
        let items: Vec<(u64, u128)> = words.iter().map(|&w| crate::kernel::place(w)).enumerate().map(|(i, w)| (i as u64, w)).collect();
        struct DiesOnce(FakeExecutor, bool);
        impl Executor for DiesOnce {
            fn execute(&mut self, job: &LaunchJob) -> Result<Vec<u8>, ExecError> {
                if std::mem::replace(&mut self.1, true) {
                    self.0.execute(job)
                } else {
                    Err(ExecError::WorkerDied("killed by signal 9".into()))
                }
            }
        }
        let out = run_batch(&FakeBackend::default(), &mut DiesOnce(FakeExecutor::default(), false), &items, &opts(), &|_| None).unwrap();
        let faults: u64 = out.record.items.iter().map(|i| i.totals.faults).sum();
        let listed = out.record.findings.iter().filter(|f| f.kind == report::FindingKind::Fault).count() as u64;
        assert_eq!((faults, listed), (1, 1), "{:?}", out.record.findings);
        let mut s: report::Summary = serde_json::from_value(serde_json::json!({
            "tool_version": "t", "seed": 8, "shard": "0/1", "started": "", "finished": "",
            "hardware": {"used": true, "reason": null, "gpu": "g", "driver": null, "devices": 1},
            "totals": {"instructions": 8, "inputs": 0, "compared": 0, "mismatches": 0, "faults": faults, "undefined": 0},
            "by_form": {}, "mismatches": [], "faults": out.record.findings, "software_checks": {"verify": null, "oracle": null}, "coverage": null
        }))
        .unwrap();
        assert!(!s.hardware_clean());
        s.totals.faults = 0;
        assert!(!s.hardware_clean(), "a listed fault fails the run even when a count says 0");
    }

    #[test]
    fn illegal_words_run_where_placeable_and_faults_carry_the_decoders_classification() {
        let o = crate::gen::GenOptions { illegal_share: 0.5, ..crate::gen::GenOptions::legal_of(6, crate::reference::IMPLEMENTED) };
        let words = crate::gen::generate(&o, 0, 40);
        let bad = *words.iter().find(|&&w| decode(w).is_err()).unwrap();
        let items: Vec<(u64, u128)> = words.iter().enumerate().map(|(i, &w)| (i as u64, w)).collect();
        let mut exec = FakeExecutor { fault_on: vec![bad], ..Default::default() };
        let out = run_batch(&FakeBackend::default(), &mut exec, &items, &opts(), &|_| None).unwrap();
        assert_eq!(out.record.findings.len(), 1);
        let f = &out.record.findings[0];
        assert_eq!(f.encoding, format_hex(bad));
        assert!(f.text.starts_with("illegal: ") && f.detail.contains("decoder: illegal ("), "{f:?}");
        let illegal = words.iter().filter(|&&w| decode(w).is_err()).count() as u64;
        let undefined: u64 = out.record.items.iter().map(|i| i.totals.undefined).sum();
        assert_eq!(undefined, (illegal - 1) * 3, "illegal words that ran have no reference value");
        assert!(out.observed.iter().all(|x| decode(x.word).is_ok()), "no vectors of words that are not instructions");
    }

    #[test]
    fn results_without_a_reference_value_are_kept_as_evidence() {
        let o = crate::gen::GenOptions { invalid_share: 1.0, ..crate::gen::GenOptions::legal_of(7, crate::reference::IMPLEMENTED) };
        let words: Vec<u128> = crate::gen::generate(&o, 0, 20).into_iter().map(crate::kernel::place).collect();
        let items: Vec<(u64, u128)> = words.iter().enumerate().map(|(i, &w)| (i as u64, w)).collect();
        let invalid = words.iter().filter(|&&w| decode(w).is_ok_and(|i| i.has_invalid_value())).count();
        assert!(invalid >= 10, "{invalid} of 20 words have an INVALIDn field");
        // the fake backend, but with the reference's word on INVALIDn fields: no value
        struct NoValueForInvalid;
        impl Backend for NoValueForInvalid {
            fn runnable(&self, w: u128) -> Result<(), String> {
                FakeBackend::default().runnable(w)
            }
            fn build(&self, cases: &[Case]) -> Result<crate::run::pipeline::Prepared, String> {
                FakeBackend::default().build(cases)
            }
            fn results(&self, p: &crate::run::pipeline::Prepared, out: &[Vec<u8>]) -> Result<Vec<Vec<u32>>, String> {
                FakeBackend::default().results(p, out)
            }
            fn expect(&self, inst: &Inst, x: &Inputs) -> Result<u32, String> {
                if inst.has_invalid_value() {
                    return Err("INVALIDn field".into());
                }
                FakeBackend::default().expect(inst, x)
            }
            fn input_set(&self, inst: &Inst, seed: u64, n: usize) -> Vec<Inputs> {
                FakeBackend::default().input_set(inst, seed, n)
            }
            fn digest_job(&self, req: &crate::run::exhaustive::DigestRequest) -> Result<crate::gpu::LaunchJob, String> {
                FakeBackend::default().digest_job(req)
            }
        }
        let keep = EngineOptions { keep_vectors: Some(2), ..opts() };
        let out = run_batch(&NoValueForInvalid, &mut FakeExecutor::default(), &items, &keep, &|_| None).unwrap();
        let undefined: u64 = out.record.items.iter().map(|i| i.totals.undefined).sum();
        assert_eq!(undefined, invalid as u64 * 3, "every result of each is undefined");
        let kept_invalid = out.observed.iter().filter(|x| decode(x.word).is_ok_and(|i| i.has_invalid_value())).count();
        assert_eq!(kept_invalid, invalid * 2, "the first 2 results of each, like any instruction's");
    }
}
