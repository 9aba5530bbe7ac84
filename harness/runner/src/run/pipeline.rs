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

/// A built job plus whatever the builder needs to read its output back
/// (for the patcher: its `Built`, whose `results` decodes the output buffer).
pub struct Prepared {
    pub job: LaunchJob,
    pub state: Box<dyn Any + Send>,
}

/// What the runner needs from the patcher and the reference.
pub trait Backend: Sync {
    /// `kernel::runnable(word)`: whether the patcher can place this word in a kernel.
    fn runnable(&self, word: u128) -> Result<(), String>;
    /// `kernel::build(cases)`.
    fn build(&self, cases: &[Case]) -> Result<Prepared, String>;
    /// `Built::results(output)`: `[case][input]` = the destination register after.
    fn results(&self, prepared: &Prepared, output: &[u8]) -> Result<Vec<Vec<u32>>, String>;
    /// The inputs each case's kernel really reads (`kernel::Built::effective_inputs`), which
    /// the patcher may have normalised; by default the cases' own.
    fn effective_inputs(&self, _prepared: &Prepared, cases: &[Case]) -> Result<Vec<Vec<Inputs>>, String> {
        Ok(cases.iter().map(|c| c.inputs.clone()).collect())
    }
    /// `reference::eval(inst, inputs)`; `Err` = the result is undefined (the text says why).
    fn expect(&self, inst: &Inst, inputs: &Inputs) -> Result<u32, String>;
    /// `reference::input_set(inst, seed, n)`.
    fn input_set(&self, inst: &Inst, seed: u64, n: usize) -> Vec<Inputs>;
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

/// The real backend: the patcher builds the kernels, the reference judges the results.
///
/// A kernel case runs at most [`crate::kernel::MAX_THREADS`] inputs (one block). A case
/// with more (exhaustive mode fetches a chunk of 2^20 inputs for one instruction) is run as
/// that many-input slices of the same word, one kernel case each, in one launch; results
/// and effective inputs are joined back in order.
pub struct RealBackend;

/// A built batch and, per runner case, how many kernel cases it became.
struct RealState {
    built: crate::kernel::Built,
    parts: Vec<usize>,
}

/// The kernel cases of `cases`: each split into slices of `MAX_THREADS` inputs when any
/// case has more than that (then every case's count must be a multiple of it, since one
/// launch runs the same number of inputs per kernel case); the count per runner case.
fn kernel_cases(cases: &[Case]) -> Result<(std::borrow::Cow<'_, [Case]>, Vec<usize>), String> {
    let max = crate::kernel::MAX_THREADS;
    if cases.iter().all(|c| c.inputs.len() <= max) {
        return Ok((std::borrow::Cow::Borrowed(cases), vec![1; cases.len()]));
    }
    let mut kc = Vec::new();
    let mut parts = Vec::with_capacity(cases.len());
    for (i, c) in cases.iter().enumerate() {
        if c.inputs.is_empty() || c.inputs.len() % max != 0 {
            return Err(format!(
                "case {i} has {} inputs: a batch with a case of more than {max} inputs needs a multiple of {max} in every case",
                c.inputs.len()
            ));
        }
        kc.extend(c.inputs.chunks(max).map(|s| Case { word: c.word, inputs: s.to_vec() }));
        parts.push(c.inputs.len() / max);
    }
    Ok((std::borrow::Cow::Owned(kc), parts))
}

/// `per_kernel_case` joined back into one vector per runner case.
fn join<T>(per_kernel_case: Vec<Vec<T>>, parts: &[usize]) -> Vec<Vec<T>> {
    let mut it = per_kernel_case.into_iter();
    parts.iter().map(|&n| it.by_ref().take(n).flatten().collect()).collect()
}

impl Backend for RealBackend {
    fn runnable(&self, w: u128) -> Result<(), String> {
        crate::kernel::runnable(w).map_err(|e| e.to_string())
    }
    fn build(&self, cases: &[Case]) -> Result<Prepared, String> {
        let (kc, parts) = kernel_cases(cases)?;
        let mut built = crate::kernel::build(&kc).map_err(|e| e.to_string())?;
        // the job's buffers move to the launch; what reads the output back keeps the rest
        let job = LaunchJob {
            cubin: std::mem::take(&mut built.job.cubin),
            input: std::mem::take(&mut built.job.input),
            kernel_name: built.job.kernel_name.clone(),
            ..built.job
        };
        Ok(Prepared { job, state: Box::new(RealState { built, parts }) })
    }
    fn results(&self, p: &Prepared, out: &[u8]) -> Result<Vec<Vec<u32>>, String> {
        let s = p.state.downcast_ref::<RealState>().ok_or("prepared state is not the real backend's")?;
        Ok(join(s.built.results(out).map_err(|e| e.to_string())?, &s.parts))
    }
    fn effective_inputs(&self, p: &Prepared, cases: &[Case]) -> Result<Vec<Vec<Inputs>>, String> {
        let s = p.state.downcast_ref::<RealState>().ok_or("prepared state is not the real backend's")?;
        let (kc, _) = kernel_cases(cases)?;
        Ok(join(s.built.effective_inputs(&kc).map_err(|e| e.to_string())?, &s.parts))
    }
    fn expect(&self, i: &Inst, x: &Inputs) -> Result<u32, String> {
        crate::reference::eval(i, x).map_err(|e| e.to_string())
    }
    fn expect_batch(&self, i: &Inst, xs: &[Inputs], out: &mut [u32]) -> Result<(), String> {
        if out.len() < xs.len() {
            return Err(format!("expect_batch: {} results for {} inputs", out.len(), xs.len()));
        }
        crate::reference::eval_batch(i, xs, out).map_err(|e| e.to_string())
    }
    fn digest_inputs(&self, word: u128, xs: &[Inputs]) -> Result<Vec<Inputs>, String> {
        crate::kernel::digest::digest_inputs(word, xs).map_err(|e| e.to_string())
    }
    fn digest_job(&self, req: &DigestRequest) -> Result<LaunchJob, String> {
        crate::kernel::digest::build(req).map(|b| b.job).map_err(|e| e.to_string())
    }
    fn fused_digests(&self, req: &DigestRequest) -> Option<Vec<Option<u64>>> {
        crate::run::exhaustive::sweep::fused_digests(req)
    }
    fn input_set(&self, i: &Inst, seed: u64, n: usize) -> Vec<Inputs> {
        crate::reference::input_set(i, seed, n)
    }
}

/// The backend of a hardware run.
pub fn hardware_backend() -> Result<Box<dyn Backend>, String> {
    Ok(Box::new(RealBackend))
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

/// A backend for CPU-only tests: jobs in [`crate::gpu::fake`]'s format, the reference
/// replaced by [`crate::gpu::fake::fake_eval`]. Nothing here touches a GPU.
pub struct FakeBackend;

impl Backend for FakeBackend {
    fn runnable(&self, _word: u128) -> Result<(), String> {
        Ok(())
    }
    fn build(&self, cases: &[Case]) -> Result<Prepared, String> {
        let refs: Vec<(u128, &[Inputs])> = cases.iter().map(|c| (c.word, &c.inputs[..])).collect();
        let shape: Vec<usize> = cases.iter().map(|c| c.inputs.len()).collect();
        let n: usize = shape.iter().sum();
        let job = LaunchJob {
            cubin: crate::gpu::fake::FAKE_CUBIN.to_vec(),
            kernel_name: "fake".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared_bytes: 0,
            input: crate::gpu::fake::encode_cases(&refs),
            output_bytes: 4 * n,
        };
        Ok(Prepared { job, state: Box::new(shape) })
    }
    fn results(&self, p: &Prepared, out: &[u8]) -> Result<Vec<Vec<u32>>, String> {
        let shape = p.state.downcast_ref::<Vec<usize>>().ok_or("fake state")?;
        if out.len() != 4 * shape.iter().sum::<usize>() {
            return Err(format!("output of {} bytes", out.len()));
        }
        let mut words = out.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        Ok(shape.iter().map(|&n| words.by_ref().take(n).collect()).collect())
    }
    fn expect(&self, inst: &Inst, inputs: &Inputs) -> Result<u32, String> {
        let w = crate::isa::encode(inst).map_err(|e| e.to_string())?;
        Ok(crate::gpu::fake::fake_eval(w, inputs))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Form;
    use crate::kernel::MAX_THREADS;

    fn case(seed: u64, form: Form, n: usize) -> Case {
        let word = crate::kernel::runnable_words(seed, Some(form), 1).unwrap()[0];
        let mut r = crate::rng::Rng::new(seed);
        Case { word, inputs: crate::kernel::random_inputs(word, n, &mut r) }
    }

    #[test]
    fn a_case_of_many_inputs_runs_as_slices_and_comes_back_whole() {
        let cases = [case(1, Form::Rrr, 4 * MAX_THREADS), case(2, Form::Const, 2 * MAX_THREADS)];
        let p = RealBackend.build(&cases).unwrap();
        assert_eq!(p.job.block, [MAX_THREADS as u32, 1, 1]);
        let s = p.state.downcast_ref::<RealState>().unwrap();
        assert_eq!(s.built.manifest.cases.len(), 6);
        // the same program as building the slices by hand
        let slices: Vec<crate::kernel::Case> =
            cases.iter().flat_map(|c| c.inputs.chunks(MAX_THREADS).map(|s| crate::kernel::Case { word: c.word, inputs: s.to_vec() })).collect();
        let by_hand = crate::kernel::build(&slices).unwrap();
        assert_eq!(by_hand.job.cubin, p.job.cubin);
        assert_eq!(by_hand.job.input, p.job.input);
        // output word k holds k: results and effective inputs come back per runner case, in order
        let out: Vec<u8> = (0..p.job.output_bytes / 4).flat_map(|k| (k as u32).to_le_bytes()).collect();
        let want = by_hand.results(&out).unwrap().concat();
        let got = RealBackend.results(&p, &out).unwrap();
        assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), vec![4 * MAX_THREADS, 2 * MAX_THREADS]);
        assert_eq!(got.concat(), want);
        let eff = RealBackend.effective_inputs(&p, &cases).unwrap();
        assert_eq!(eff.concat(), by_hand.effective_inputs(&slices).unwrap().concat());
        // a constant-bank case reads one b for the whole launch, whatever it asked for
        assert!(eff[1].iter().all(|i| i.b == eff[1][0].b));
    }

    #[test]
    fn small_cases_are_built_as_they_are() {
        let cases = [case(3, Form::Rrr, 64), case(4, Form::Ur, 64)];
        let p = RealBackend.build(&cases).unwrap();
        let s = p.state.downcast_ref::<RealState>().unwrap();
        assert_eq!((s.built.manifest.cases.len(), s.parts.clone()), (2, vec![1, 1]));
    }

    #[test]
    fn a_split_batch_needs_whole_slices_in_every_case() {
        let cases = [case(5, Form::Rrr, 2 * MAX_THREADS), case(6, Form::Rrr, 64)];
        let e = RealBackend.build(&cases).err().unwrap();
        assert!(e.contains("case 1 has 64 inputs") && e.contains("multiple of 256"), "{e}");
    }
}
