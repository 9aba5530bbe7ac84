//! Where the runner meets the patcher (`kernel`) and the reference (`reference`, `verify`).
//!
//! The runner only ever sees a [`Backend`]: [`RealBackend`] for hardware runs, and
//! [`FakeBackend`] (tests) with the simulated executor's job format.

use crate::gpu::LaunchJob;
use crate::inputs::Inputs;
use crate::isa::Inst;
use crate::run::exhaustive::DigestRequest;
use std::any::Any;
use std::path::Path;

/// One instruction and the register files to run it with: the patcher's own case.
pub use crate::kernel::Case;

/// Built jobs, run in order, plus whatever the builder needs to read their outputs back
/// (for the patcher: its `RoadBuilt`, whose `results` decodes the output buffers).
pub struct Prepared {
    pub jobs: Vec<LaunchJob>,
    pub state: Box<dyn Any + Send>,
}

/// What the runner needs from the patcher and the reference.
pub trait Backend: Sync {
    /// `Road::runnable(word)`: whether the patcher can place this word in a kernel of the
    /// backend's road.
    fn runnable(&self, word: u128) -> Result<(), String>;
    /// `Road::build(cases)`: the launches that run them.
    fn build(&self, cases: &[Case]) -> Result<Prepared, String>;
    /// `RoadBuilt::results(outputs)` (one output per job, in order): `[case][input]` = the
    /// destination register after.
    fn results(&self, prepared: &Prepared, outputs: &[Vec<u8>]) -> Result<Vec<Vec<u32>>, String>;
    /// `RoadBuilt::preds(outputs)`: `[case][input]` = the predicate file P0..P6 after the
    /// word; a case None where its kernel does not read it back (on the scaffold road, a
    /// word that writes no predicate), all None by default.
    fn preds(&self, _prepared: &Prepared, _outputs: &[Vec<u8>]) -> Result<Option<Vec<Option<Vec<u8>>>>, String> {
        Ok(None)
    }
    /// `reference::preds_after(inst, inputs)`: the predicate file P0..P6 the word must
    /// leave; `Err` = undefined. By default the file as it was (an instruction that writes
    /// no predicate).
    fn expect_preds(&self, _inst: &Inst, inputs: &Inputs) -> Result<u8, String> {
        Ok(inputs.pred & 0x7f)
    }
    /// The most cases one [`Backend::build`] should be given (`Road::cases_per_build`):
    /// `None` any number.
    fn cases_per_build(&self) -> Option<usize> {
        None
    }
    /// The road its kernels take to the GPU.
    fn road(&self) -> crate::kernel::road::Road {
        crate::kernel::road::Road::Batch
    }
    /// The word `word` runs as on the road (`Road::fit`): what the runner runs and records.
    fn fit(&self, word: u128) -> u128 {
        word
    }
    /// The inputs each case's kernel really reads (`kernel::Built::effective_inputs`), which
    /// the patcher may have normalised; by default the cases' own.
    fn effective_inputs(&self, _prepared: &Prepared, cases: &[Case]) -> Result<Vec<Vec<Inputs>>, String> {
        Ok(cases.iter().map(|c| c.inputs.clone()).collect())
    }
    /// `reference::eval(inst, inputs)`; `Err` = the result is undefined (the text says why).
    fn expect(&self, inst: &Inst, inputs: &Inputs) -> Result<u32, String>;
    /// `reference::input_set(inst, seed, n)`.
    fn input_set(&self, inst: &Inst, seed: u64, n: usize) -> Vec<Inputs>;
    /// The architecture whose kernels run the words: what reads them ([`Backend::decode`]).
    fn target(&self) -> &'static crate::target::Target {
        crate::target::Target::DEFAULT
    }
    /// A word of the run as [`Backend::target`] reads it.
    fn decode(&self, word: u128) -> Result<Inst, crate::isa::Illegal> {
        crate::isa::decode_for(self.target(), word)
    }
    /// `reference::eval_batch`: results of one instruction for many inputs into `out`
    /// (as long as `inputs`); `Err` when any result is undefined. By default one
    /// [`Backend::expect`] per input.
    fn expect_batch(&self, inst: &Inst, inputs: &[Inputs], out: &mut [u32]) -> Result<(), String> {
        if out.len() < inputs.len() {
            return Err(format!("expect_batch: {} results for {} inputs", out.len(), inputs.len()));
        }
        for (o, x) in out.iter_mut().zip(inputs) {
            *o = self.expect(inst, x)?;
        }
        Ok(())
    }
    /// The inputs the digest kernel of `word` really reads for these generated ones
    /// (`kernel::digest::digest_inputs`); by default the same.
    fn digest_inputs(&self, _word: u128, inputs: &[Inputs]) -> Result<Vec<Inputs>, String> {
        Ok(inputs.to_vec())
    }
    /// Exhaustive mode's device-side kernel: a job whose output is one little-endian u64
    /// partial digest per thread, 256 threads per chunk of `req` (see `exhaustive`).
    fn digest_job(&self, req: &DigestRequest) -> Result<LaunchJob, String>;
    /// Exhaustive mode's reference digests of `req`'s chunks by the fused sweep
    /// (`exhaustive::sweep`), where it applies to the word: equal to
    /// `exhaustive::reference_digests` over [`Backend::digest_inputs`] and
    /// [`Backend::expect_batch`], which `None` (the default) asks the caller to use.
    fn fused_digests(&self, _req: &DigestRequest) -> Option<Vec<Option<u64>>> {
        None
    }
}

/// The real backend: the patcher builds the kernels on its road, the reference judges the
/// results. How a road runs cases of many inputs (exhaustive mode fetches a chunk of 2^20
/// inputs for one instruction) is the road's (`kernel::road`).
#[derive(Clone, Copy, Debug)]
pub struct RealBackend {
    pub road: crate::kernel::road::Road,
    /// The architecture the kernels are built for.
    pub target: &'static crate::target::Target,
}

impl Default for RealBackend {
    fn default() -> RealBackend {
        RealBackend { road: Default::default(), target: crate::target::Target::DEFAULT }
    }
}

impl RealBackend {
    /// The policy of the run's architecture: what its hardware has settled, else the
    /// assumptions (`harness/spec/semantics.json`), so that a run compares against what the
    /// table says of that architecture.
    fn policy(&self) -> &'static crate::reference::Policy {
        crate::reference::Policy::for_target(self.target)
    }
    fn built<'a>(&self, p: &'a Prepared) -> Result<&'a crate::kernel::road::RoadBuilt, String> {
        p.state.downcast_ref::<crate::kernel::road::RoadBuilt>().ok_or_else(|| "prepared state is not the real backend's".to_string())
    }
}

impl Backend for RealBackend {
    fn runnable(&self, w: u128) -> Result<(), String> {
        self.road.runnable_for(self.target, w).map_err(|e| e.to_string())
    }
    fn build(&self, cases: &[Case]) -> Result<Prepared, String> {
        let mut built = self.road.build_for(self.target, cases).map_err(|e| e.to_string())?;
        // the jobs' buffers move to the launches; what reads the outputs back keeps the rest
        let jobs = built.take_jobs();
        Ok(Prepared { jobs, state: Box::new(built) })
    }
    fn results(&self, p: &Prepared, outs: &[Vec<u8>]) -> Result<Vec<Vec<u32>>, String> {
        self.built(p)?.results(outs).map_err(|e| e.to_string())
    }
    fn preds(&self, p: &Prepared, outs: &[Vec<u8>]) -> Result<Option<Vec<Option<Vec<u8>>>>, String> {
        self.built(p)?.preds(outs).map(Some).map_err(|e| e.to_string())
    }
    fn expect_preds(&self, i: &Inst, x: &Inputs) -> Result<u8, String> {
        crate::reference::preds_after_with(self.policy(), i, x).map_err(|e| e.to_string())
    }
    fn effective_inputs(&self, p: &Prepared, cases: &[Case]) -> Result<Vec<Vec<Inputs>>, String> {
        self.built(p)?.effective_inputs(cases).map_err(|e| e.to_string())
    }
    fn cases_per_build(&self) -> Option<usize> {
        self.road.cases_per_build()
    }
    fn road(&self) -> crate::kernel::road::Road {
        self.road
    }
    fn fit(&self, word: u128) -> u128 {
        self.road.fit_for(self.target, word)
    }
    fn expect(&self, i: &Inst, x: &Inputs) -> Result<u32, String> {
        crate::reference::eval_with(self.policy(), i, x).map_err(|e| e.to_string())
    }
    fn expect_batch(&self, i: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), String> {
        if out.len() < xs.len() {
            return Err(format!("expect_batch: {} results for {} inputs", out.len(), xs.len()));
        }
        crate::reference::eval_batch_with(self.policy(), i, xs, out).map_err(|e| e.to_string())
    }
    fn digest_inputs(&self, word: u128, xs: &[Inputs]) -> Result<Vec<Inputs>, String> {
        crate::kernel::digest::digest_inputs(word, xs).map_err(|e| e.to_string())
    }
    fn digest_job(&self, req: &DigestRequest) -> Result<LaunchJob, String> {
        // the digest kernel's inputs and the sweep's reference read the word as SM90 does
        if !crate::kernel::reads_as_sm90(self.target, req.word) {
            return Err(format!("exhaustive mode reads words as SM90 does, and {} reads this one otherwise", self.target));
        }
        crate::kernel::digest::build_for(self.target, req).map(|b| b.job).map_err(|e| e.to_string())
    }
    fn fused_digests(&self, req: &DigestRequest) -> Option<Vec<Option<u64>>> {
        // under the run's architecture's policy, as `expect_batch` (the general path) computes
        crate::run::exhaustive::sweep::fused_digests_with(self.policy(), req)
    }
    fn input_set(&self, i: &Inst, seed: u64, n: usize) -> Vec<Inputs> {
        crate::reference::input_set(i, seed, n)
    }
    fn target(&self) -> &'static crate::target::Target {
        self.target
    }
}

/// The backend of a hardware run on `road`, its kernels `target`'s.
pub fn hardware_backend(road: crate::kernel::road::Road, target: &'static crate::target::Target) -> Result<Box<dyn Backend>, String> {
    Ok(Box::new(RealBackend { road, target }))
}

/// The outcome of replaying the vectors under a folder: `{"ran": bool, "ok": bool, ...}`.
pub type VerifyReport = serde_json::Value;

/// Replay every vector file under `dir` through the reference (what `verify DIR` does).
pub fn verify_vectors(dir: &Path) -> VerifyReport {
    let mut sink = std::io::sink();
    match crate::replay::replay(&[dir], &mut sink) {
        Ok(r) => serde_json::json!({
            "ran": true,
            "ok": r.ok(),
            "dir": dir.display().to_string(),
            "vectors": r.vectors,
            "pass": r.pass,
            "mismatch": r.mismatch,
            "malformed": r.malformed,
            "invalid": r.invalid,
            "undefined": r.undefined,
            "first_failures": r.failures.iter().take(10).collect::<Vec<_>>(),
        }),
        Err(e) => serde_json::json!({"ran": false, "ok": false, "reason": e.to_string()}),
    }
}

/// A backend for CPU-only tests: jobs in [`crate::gpu::fake`]'s format, the reference's
/// destination replaced by [`crate::gpu::fake::fake_eval`] (its predicates after are the
/// reference's, read back and compared as on the batch road). Nothing here touches a GPU.
///
/// Like [`RealBackend`], it is of one architecture: `target` reads the words (here, and in
/// the simulated executor, whose jobs name it) and its policy computes the predicates.
#[derive(Clone, Copy, Debug)]
pub struct FakeBackend {
    pub target: &'static crate::target::Target,
}

impl Default for FakeBackend {
    fn default() -> FakeBackend {
        FakeBackend { target: crate::target::Target::DEFAULT }
    }
}

impl Backend for FakeBackend {
    fn runnable(&self, _word: u128) -> Result<(), String> {
        Ok(())
    }
    fn build(&self, cases: &[Case]) -> Result<Prepared, String> {
        let refs: Vec<(u128, &[Inputs])> = cases.iter().map(|c| (c.word, &c.inputs[..])).collect();
        let shape: Vec<usize> = cases.iter().map(|c| c.inputs.len()).collect();
        let n: usize = shape.iter().sum();
        let job = LaunchJob {
            cubin: crate::gpu::fake::fake_cubin(self.target),
            kernel_name: "fake".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared_bytes: 0,
            input: crate::gpu::fake::encode_cases(&refs),
            output_bytes: crate::gpu::fake::RECORD * n,
        };
        Ok(Prepared { jobs: vec![job], state: Box::new(shape) })
    }
    fn results(&self, p: &Prepared, outs: &[Vec<u8>]) -> Result<Vec<Vec<u32>>, String> {
        fake_words(p, outs, 0)
    }
    /// The predicates after every input of every case, as the batch road reads them back.
    fn preds(&self, p: &Prepared, outs: &[Vec<u8>]) -> Result<Option<Vec<Option<Vec<u8>>>>, String> {
        let words = fake_words(p, outs, crate::gpu::fake::RECORD_PRED)?;
        // P2R's mask names P0..P6 only, as on the batch road
        if let Some(w) = words.iter().flatten().find(|&&w| w & !0x7f != 0) {
            return Err(format!("a predicate word {w:#x} sets bits above P6"));
        }
        Ok(Some(words.into_iter().map(|c| Some(c.into_iter().map(|w| w as u8).collect())).collect()))
    }
    /// The reference's, as the simulated executor's predicates are (under the policy of
    /// [`Backend::target`]).
    fn expect_preds(&self, inst: &Inst, inputs: &Inputs) -> Result<u8, String> {
        crate::reference::preds_after_with(crate::reference::Policy::for_target(self.target()), inst, inputs).map_err(|e| e.to_string())
    }
    fn expect(&self, inst: &Inst, inputs: &Inputs) -> Result<u32, String> {
        let w = crate::isa::encode_for(self.target, inst).map_err(|e| e.to_string())?;
        Ok(crate::gpu::fake::fake_eval(w, inputs))
    }
    fn target(&self) -> &'static crate::target::Target {
        self.target
    }
    fn input_set(&self, _inst: &Inst, seed: u64, n: usize) -> Vec<Inputs> {
        let mut r = crate::rng::Rng::new(seed);
        (0..n).map(|_| Inputs { a: r.next_u32(), b: r.next_u32(), d: r.next_u32(), pred: r.next_u32() as u8 & 0x7f, c: 0 }).collect()
    }
    fn digest_job(&self, req: &DigestRequest) -> Result<LaunchJob, String> {
        Ok(LaunchJob {
            cubin: crate::gpu::fake::FAKE_DIGEST_CUBIN.to_vec(),
            kernel_name: "fake-digest".into(),
            grid: [req.chunks, 1, 1],
            block: [crate::run::exhaustive::THREADS, 1, 1],
            shared_bytes: 0,
            input: req.encode(),
            output_bytes: req.output_bytes(),
        })
    }
}

/// The u32 at byte `at` of every record of the fake job's one output, `[case][input]`.
fn fake_words(p: &Prepared, outs: &[Vec<u8>], at: usize) -> Result<Vec<Vec<u32>>, String> {
    let shape = p.state.downcast_ref::<Vec<usize>>().ok_or("fake state")?;
    let [out] = outs else { return Err(format!("{} outputs for one job", outs.len())) };
    let record = crate::gpu::fake::RECORD;
    if out.len() != record * shape.iter().sum::<usize>() {
        return Err(format!("output of {} bytes", out.len()));
    }
    let mut words = out.chunks_exact(record).map(|r| u32::from_le_bytes([r[at], r[at + 1], r[at + 2], r[at + 3]]));
    Ok(shape.iter().map(|&n| words.by_ref().take(n).collect()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Form;
    use crate::kernel::road::Road;

    fn case(seed: u64, form: Form, n: usize) -> Case {
        let word = crate::kernel::runnable_words(seed, Some(form), 1).unwrap()[0];
        let mut r = crate::rng::Rng::new(seed);
        Case { word, inputs: crate::kernel::random_inputs(word, n, &mut r) }
    }

    #[test]
    fn the_real_backend_builds_on_its_road() {
        let cases = [case(3, Form::Rrr, 64), case(4, Form::Ur, 64)];
        let batch = RealBackend::default().build(&cases).unwrap();
        assert_eq!(batch.jobs.len(), 1);
        let single = RealBackend { road: Road::Single, ..Default::default() };
        assert_eq!(single.cases_per_build(), Some(1));
        let p = single.build(&cases).unwrap();
        assert_eq!(p.jobs.len(), 4, "two warps of each case, a module each");
        let outs: Vec<Vec<u8>> = p.jobs.iter().map(|j| vec![0; j.output_bytes]).collect();
        let r = single.results(&p, &outs).unwrap();
        assert_eq!(r.iter().map(Vec::len).collect::<Vec<_>>(), [64, 64]);
        assert!(single.results(&batch, &outs).is_err() || batch.jobs.len() != outs.len());
    }
}
