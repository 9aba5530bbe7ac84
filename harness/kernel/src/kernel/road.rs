//! The roads onto the GPU: three ways of putting cases on the device, one runner option.
//!
//! Why several: on an H200 (docs/hardware/2026-12-04-h200) a batch kernel holding one case
//! (32 threads, no branch) ran and agreed with the reference, while batches of two or more
//! cases made no progress and the digest kernel faulted. A device session must come back
//! with vectors whatever the hardware does, so it has roads that differ in how much of our
//! own code stands around the word under test:
//!
//! - [`Road::Batch`]: the patched batch kernel ([`super::build`]): many cases a launch,
//!   up to [`MAX_THREADS`] threads each; cases of more inputs run as slices of that many,
//!   in one launch. The cheapest per case, and the shape that did not run on the H200.
//! - [`Road::Single`]: exactly the shape that ran: one case per module, [`SINGLE_THREADS`]
//!   threads, no branch; a case of more inputs runs as one module load and launch per
//!   [`SINGLE_THREADS`] of them (so a case's inputs must be a multiple of it).
//! - [`Road::Scaffold`]: a kernel ptxas itself compiled around the instruction
//!   ([`super::scaffold`]), one word of it rewritten.
//!
//! Every road builds [`RoadBuilt`]: the launches to run, in order, and what reads their
//! outputs back as the runner's `[case][input]`.

use super::{Built, Case, LaunchJob, NotRunnable, PatchError, MAX_THREADS};
use crate::inputs::Inputs;
use crate::target::Target;

/// Threads of one launch on the single road: one warp, as on the H200.
pub const SINGLE_THREADS: usize = 32;

/// How the cases reach the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Road {
    /// Many cases in one patched batch kernel (and the digest kernel for exhaustive runs).
    #[default]
    Batch,
    /// One case per module, one warp per launch, no branch.
    Single,
    /// One case per module, in a kernel ptxas compiled around the instruction.
    Scaffold,
}

impl Road {
    pub const ALL: [Road; 3] = [Road::Batch, Road::Single, Road::Scaffold];

    /// The road's name, as the runner's option and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Road::Batch => "batch",
            Road::Single => "single",
            Road::Scaffold => "scaffold",
        }
    }

    /// The road named `s` ([`Road::name`]).
    pub fn parse(s: &str) -> Result<Road, String> {
        Road::ALL.into_iter().find(|r| r.name() == s).ok_or_else(|| format!("road {s:?}: want one of batch, single, scaffold"))
    }

    /// The most cases one [`Road::build`] should be given: one on the roads of one case per
    /// module (a fault there is that case's alone, with nothing to bisect), any on the batch.
    pub fn cases_per_build(self) -> Option<usize> {
        match self {
            Road::Batch => None,
            Road::Single | Road::Scaffold => Some(1),
        }
    }

    /// Whether `word` can run on this road (SM90's kernels); `Err` says why not ("not
    /// runnable on this road").
    pub fn runnable(self, word: u128) -> Result<(), NotRunnable> {
        self.runnable_for(Target::DEFAULT, word)
    }

    /// [`Road::runnable`] of a word as `target` reads it, with `target`'s kernels (on the
    /// scaffold road, its scaffolds).
    pub fn runnable_for(self, target: &'static Target, word: u128) -> Result<(), NotRunnable> {
        match self {
            Road::Batch | Road::Single => super::runnable_for(target, word),
            Road::Scaffold => super::scaffold::runnable_for(target, word).map(|_| ()),
        }
    }

    /// The word `word` runs as on this road: itself, except on the scaffold road, where a
    /// word that maps onto a scaffold takes the scaffold's registers, predicate and control
    /// bits ([`super::scaffold::fit`]; unchanged when none fits, and then not runnable).
    /// The runner runs and records this word, so a result is never filed under another.
    /// SM90's scaffolds.
    pub fn fit(self, word: u128) -> u128 {
        self.fit_for(Target::DEFAULT, word)
    }

    /// [`Road::fit`] with `target`'s scaffolds.
    pub fn fit_for(self, target: &'static Target, word: u128) -> u128 {
        match self {
            Road::Batch | Road::Single => word,
            Road::Scaffold => super::scaffold::fit_for(target, word).map_or(word, |(w, _)| w),
        }
    }

    /// The launches that run `cases` on this road (SM90's kernels).
    pub fn build(self, cases: &[Case]) -> Result<RoadBuilt, PatchError> {
        self.build_for(Target::DEFAULT, cases)
    }

    /// The launches that run `cases` on this road, as `target`'s kernels (on the scaffold
    /// road, ptxas's builds of the scaffolds for `target`).
    pub fn build_for(self, target: &'static Target, cases: &[Case]) -> Result<RoadBuilt, PatchError> {
        match self {
            Road::Batch => build_batch(target, cases),
            Road::Single => build_sliced(self, cases, SINGLE_THREADS, |c| super::build_for(target, std::slice::from_ref(c)).map(Reader::Patched)),
            Road::Scaffold => build_sliced(self, cases, MAX_THREADS, |c| super::scaffold::build_for(target, c).map(Reader::Scaffold)),
        }
    }
}

impl std::fmt::Display for Road {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What reads one launch's output back.
#[derive(Debug)]
enum Reader {
    /// A patched template (batch or single road): its own results and effective inputs.
    Patched(Built),
    /// A ptxas scaffold: one case, one output word per thread.
    Scaffold(super::scaffold::ScaffoldBuilt),
}

impl Reader {
    fn job_mut(&mut self) -> &mut LaunchJob {
        match self {
            Reader::Patched(b) => &mut b.job,
            Reader::Scaffold(b) => &mut b.job,
        }
    }
}

/// One launch: its job (taken by [`RoadBuilt::take_jobs`]), its reader, and the kernel
/// cases it runs: per kernel case, the runner case and the inputs (a range) it holds.
#[derive(Debug)]
struct Launch {
    reader: Reader,
    slices: Vec<(usize, std::ops::Range<usize>)>,
}

/// The launches of some cases on one road, and how their outputs become results.
#[derive(Debug)]
pub struct RoadBuilt {
    pub road: Road,
    launches: Vec<Launch>,
    /// Inputs per runner case.
    counts: Vec<usize>,
}

impl RoadBuilt {
    /// The launch jobs, in order (their buffers move out; what reads the outputs stays).
    pub fn take_jobs(&mut self) -> Vec<LaunchJob> {
        self.launches
            .iter_mut()
            .map(|l| {
                let j = l.reader.job_mut();
                LaunchJob { cubin: std::mem::take(&mut j.cubin), input: std::mem::take(&mut j.input), kernel_name: j.kernel_name.clone(), ..*j }
            })
            .collect()
    }

    /// Launches built.
    pub fn launches(&self) -> usize {
        self.launches.len()
    }

    /// Destination values, `[case][input]`, from the launches' outputs (one per launch, in
    /// the order of [`RoadBuilt::take_jobs`]).
    pub fn results(&self, outputs: &[Vec<u8>]) -> Result<Vec<Vec<u32>>, PatchError> {
        if outputs.len() != self.launches.len() {
            return Err(PatchError::Malformed(format!("{} outputs for {} launches", outputs.len(), self.launches.len())));
        }
        let mut per_case: Vec<Vec<u32>> = self.counts.iter().map(|&n| vec![0; n]).collect();
        for (l, out) in self.launches.iter().zip(outputs) {
            let got = match &l.reader {
                Reader::Patched(b) => b.results(out)?,
                Reader::Scaffold(b) => vec![b.results(out)?],
            };
            for ((case, range), vals) in l.slices.iter().zip(got) {
                per_case[*case][range.clone()].copy_from_slice(&vals);
            }
        }
        Ok(per_case)
    }

    /// The predicate file after each case's word (`[case][input]`, bit i = Pi), from the
    /// launches' outputs as [`RoadBuilt::results`] reads them; a case is None where its
    /// kernel does not read the file back (on the scaffold road, a word that writes no
    /// predicate: ptxas's code around it stores none, and the patcher changes no word of it
    /// but the instruction's; a word that writes predicates stands on a scaffold that stores
    /// them, [`super::scaffold::ScaffoldBuilt::preds`]).
    pub fn preds(&self, outputs: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, PatchError> {
        if outputs.len() != self.launches.len() {
            return Err(PatchError::Malformed(format!("{} outputs for {} launches", outputs.len(), self.launches.len())));
        }
        let mut per_case: Vec<Option<Vec<u8>>> = self.counts.iter().map(|&n| Some(vec![0; n])).collect();
        for (l, out) in self.launches.iter().zip(outputs) {
            let got = match &l.reader {
                Reader::Patched(b) => b.preds(out)?.into_iter().map(Some).collect(),
                Reader::Scaffold(b) => vec![b.preds(out)?],
            };
            for ((case, range), vals) in l.slices.iter().zip(got) {
                match (&mut per_case[*case], vals) {
                    (Some(p), Some(v)) => p[range.clone()].copy_from_slice(&v),
                    (p, _) => *p = None,
                }
            }
        }
        Ok(per_case)
    }

    /// The inputs each case really sees (`[case][input]`): the patcher may normalise them
    /// (shared constants, coinciding registers; [`super::effective_inputs`]). `cases` are
    /// those this was built from.
    pub fn effective_inputs(&self, cases: &[Case]) -> Result<Vec<Vec<Inputs>>, PatchError> {
        let mut per_case: Vec<Vec<Inputs>> = self.counts.iter().map(|&n| vec![Inputs::default(); n]).collect();
        for l in &self.launches {
            let kc: Vec<Case> = l.slices.iter().map(|(c, r)| Case { word: cases[*c].word, inputs: cases[*c].inputs[r.clone()].to_vec() }).collect();
            let eff = match &l.reader {
                Reader::Patched(b) => b.effective_inputs(&kc)?,
                Reader::Scaffold(b) => vec![b.effective_inputs(&kc[0])?],
            };
            for ((case, range), vals) in l.slices.iter().zip(eff) {
                per_case[*case][range.clone()].copy_from_slice(&vals);
            }
        }
        Ok(per_case)
    }
}

/// The batch road: one launch; when any case has more than [`MAX_THREADS`] inputs (an
/// exhaustive fetch), every case runs as slices of that many, each a kernel case of the
/// same word (then every case's count must be a multiple of it: one launch runs the same
/// number of inputs per kernel case).
fn build_batch(target: &'static Target, cases: &[Case]) -> Result<RoadBuilt, PatchError> {
    let counts: Vec<usize> = cases.iter().map(|c| c.inputs.len()).collect();
    let max = MAX_THREADS;
    let slices: Vec<(usize, std::ops::Range<usize>)> = if counts.iter().all(|&n| n <= max) {
        counts.iter().enumerate().map(|(i, &n)| (i, 0..n)).collect()
    } else {
        let mut v = Vec::new();
        for (i, &n) in counts.iter().enumerate() {
            if n == 0 || !n.is_multiple_of(max) {
                return Err(PatchError::InputCount { case: i, got: n, expected: max });
            }
            v.extend((0..n).step_by(max).map(|s| (i, s..s + max)));
        }
        v
    };
    let built = if slices.len() == cases.len() {
        super::build_for(target, cases)?
    } else {
        let kc: Vec<Case> = slices.iter().map(|(c, r)| Case { word: cases[*c].word, inputs: cases[*c].inputs[r.clone()].to_vec() }).collect();
        super::build_for(target, &kc)?
    };
    Ok(RoadBuilt { road: Road::Batch, launches: vec![Launch { reader: Reader::Patched(built), slices }], counts })
}

/// A road of one case per module: each case's inputs in launches of `per` (a case of more
/// runs as several launches, each its own module; its count must be a multiple of `per`
/// when it is more than `per`).
fn build_sliced(road: Road, cases: &[Case], per: usize, one: impl Fn(&Case) -> Result<Reader, PatchError>) -> Result<RoadBuilt, PatchError> {
    let counts: Vec<usize> = cases.iter().map(|c| c.inputs.len()).collect();
    let mut launches = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let n = c.inputs.len();
        if n == 0 || (n > per && !n.is_multiple_of(per)) {
            return Err(PatchError::InputCount { case: i, got: n, expected: per });
        }
        for s in (0..n).step_by(per) {
            let r = s..(s + per).min(n);
            let reader = one(&Case { word: c.word, inputs: c.inputs[r.clone()].to_vec() })?;
            launches.push(Launch { reader, slices: vec![(i, r)] });
        }
    }
    Ok(RoadBuilt { road, launches, counts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Form;

    fn case(seed: u64, form: Form, n: usize) -> Case {
        let word = crate::kernel::runnable_words(seed, Some(form), 1).unwrap()[0];
        let mut r = crate::rng::Rng::new(seed);
        Case { word, inputs: crate::kernel::random_inputs(word, n, &mut r) }
    }

    #[test]
    fn names_round_trip() {
        for r in Road::ALL {
            assert_eq!(Road::parse(r.name()), Ok(r));
        }
        assert!(Road::parse("bus").unwrap_err().contains("batch, single, scaffold"));
    }

    #[test]
    fn the_single_road_is_one_warp_one_case_per_module() {
        let cases = [case(1, Form::Rrr, 96), case(2, Form::Const, 32)];
        let mut b = Road::Single.build(&cases).unwrap();
        assert_eq!(b.launches(), 4);
        let jobs = b.take_jobs();
        for (j, (l, c)) in jobs.iter().zip(b.launches.iter().zip([0, 0, 0, 1])) {
            assert_eq!((j.grid, j.block), ([1, 1, 1], [32, 1, 1]));
            assert_eq!(l.slices.len(), 1);
            assert_eq!(l.slices[0].0, c);
            let Reader::Patched(built) = &l.reader else { panic!("single road builds patched templates") };
            // the shape that ran on the H200: one case, no taken branch before EXIT
            assert_eq!(built.manifest.cases.len(), 1);
            assert_eq!(built.manifest.threads_per_case, 32);
        }
        // slice k of case 0 is exactly kernel::build of those 32 inputs
        let by_hand = crate::kernel::build(&[Case { word: cases[0].word, inputs: cases[0].inputs[32..64].to_vec() }]).unwrap();
        assert_eq!(jobs[1].cubin, by_hand.job.cubin);
        assert_eq!(jobs[1].input, by_hand.job.input);
        // outputs come back per case, in order
        // (a record each: the destination, then the predicates)
        let outs: Vec<Vec<u8>> =
            (0..4u32).map(|k| (0..32u32).flat_map(|t| [(k * 100 + t).to_le_bytes(), ((k + t) & 0x7f).to_le_bytes()].concat()).collect()).collect();
        let r = b.results(&outs).unwrap();
        assert_eq!(r[0].len(), 96);
        assert_eq!((r[0][0], r[0][33], r[0][95], r[1][5]), (0, 101, 231, 305));
        let p: Vec<Vec<u8>> = b.preds(&outs).unwrap().into_iter().map(|p| p.expect("the single road reads the predicates back")).collect();
        assert_eq!((p[0][0], p[0][33], p[0][95], p[1][5]), (0, 2, 33, 8));
        let mut bad = outs.clone();
        bad[2][4..8].copy_from_slice(&0x80u32.to_le_bytes());
        assert!(b.preds(&bad).is_err(), "a bit above P6 is no predicate");
        let eff = b.effective_inputs(&cases).unwrap();
        assert_eq!(eff[0].len(), 96);
        assert_eq!(eff[0][40], crate::kernel::effective_inputs(cases[0].word, &cases[0].inputs[32..64], &by_hand.bank3).unwrap()[8]);
        assert!(b.results(&outs[..3]).is_err(), "an output missing is an error");
    }

    #[test]
    fn a_single_road_case_must_fill_whole_warps() {
        let e = Road::Single.build(&[case(3, Form::Rrr, 48)]).unwrap_err();
        assert!(matches!(e, PatchError::InputCount { case: 0, got: 48, expected: 32 }), "{e}");
    }

    #[test]
    fn the_batch_road_is_one_launch_and_slices_big_cases() {
        let cases = [case(1, Form::Rrr, 4 * MAX_THREADS), case(2, Form::Const, 2 * MAX_THREADS)];
        let mut b = Road::Batch.build(&cases).unwrap();
        let jobs = b.take_jobs();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].block, [MAX_THREADS as u32, 1, 1]);
        let slices: Vec<Case> = cases.iter().flat_map(|c| c.inputs.chunks(MAX_THREADS).map(|s| Case { word: c.word, inputs: s.to_vec() })).collect();
        let by_hand = crate::kernel::build(&slices).unwrap();
        assert_eq!(by_hand.job.cubin, jobs[0].cubin);
        let out: Vec<u8> = (0..jobs[0].output_bytes / 4).flat_map(|k| (k as u32).to_le_bytes()).collect();
        let got = b.results(std::slice::from_ref(&out)).unwrap();
        assert_eq!(got.concat(), by_hand.results(&out).unwrap().concat());
        let eff = b.effective_inputs(&cases).unwrap();
        assert_eq!(eff.concat(), by_hand.effective_inputs(&slices).unwrap().concat());
        let e = Road::Batch.build(&[case(5, Form::Rrr, 2 * MAX_THREADS), case(6, Form::Rrr, 64)]).unwrap_err();
        assert!(matches!(e, PatchError::InputCount { case: 1, got: 64, .. }), "{e}");
    }
}
