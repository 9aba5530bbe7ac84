//! Where the runner meets the patcher (`kernel`) and the reference (`reference`, `verify`).
//!
//! The runner only ever sees a [`Backend`]: [`RealBackend`] for hardware runs, and
//! [`FakeBackend`] (tests) with the simulated executor's job format.

use crate::gpu::LaunchJob;
use crate::inputs::Inputs;
use crate::isa::Hmul2;
use crate::run::exhaustive::DigestRequest;
use std::any::Any;
use std::path::Path;

/// One instruction and the register files to run it with (mirrors `kernel::Case`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub word: u128,
    pub inputs: Vec<Inputs>,
}

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
    /// The inputs each case's kernel really reads (`kernel::Built::inputs`), which the patcher
    /// may have normalised; by default the cases' own.
    fn effective_inputs(&self, _prepared: &Prepared, cases: &[Case]) -> Vec<Vec<Inputs>> {
        cases.iter().map(|c| c.inputs.clone()).collect()
    }
    /// `reference::eval(inst, inputs)`; `Err` = the result is undefined (the text says why).
    fn expect(&self, inst: &Hmul2, inputs: &Inputs) -> Result<u32, String>;
    /// `reference::input_set(inst, seed, n)`.
    fn input_set(&self, inst: &Hmul2, seed: u64, n: usize) -> Vec<Inputs>;
    /// The exhaustive mode's device-side kernel (pending in the patcher): a job whose
    /// output is one little-endian u64 digest per chunk of `req` (see `exhaustive`).
    fn digest_job(&self, _req: &DigestRequest) -> Result<LaunchJob, String> {
        Err("exhaustive mode needs the patcher's device-side input-generating digest kernel, which is not merged yet".into())
    }
}

/// The real backend: the patcher builds the kernels, the reference judges the results.
pub struct RealBackend;

impl Backend for RealBackend {
    fn runnable(&self, w: u128) -> Result<(), String> {
        crate::kernel::runnable(w).map_err(|e| e.to_string())
    }
    fn build(&self, cases: &[Case]) -> Result<Prepared, String> {
        let kc: Vec<crate::kernel::Case> = cases.iter().map(|c| crate::kernel::Case { word: c.word, inputs: c.inputs.clone() }).collect();
        let b = crate::kernel::build(&kc).map_err(|e| e.to_string())?;
        Ok(Prepared { job: b.job.clone(), state: Box::new(b) })
    }
    fn results(&self, p: &Prepared, out: &[u8]) -> Result<Vec<Vec<u32>>, String> {
        let b = p.state.downcast_ref::<crate::kernel::Built>().ok_or("prepared state is not a kernel::Built")?;
        b.results(out).map_err(|e| e.to_string())
    }
    fn effective_inputs(&self, p: &Prepared, cases: &[Case]) -> Vec<Vec<Inputs>> {
        match p.state.downcast_ref::<crate::kernel::Built>() {
            Some(b) => b.inputs.clone(),
            None => cases.iter().map(|c| c.inputs.clone()).collect(),
        }
    }
    fn expect(&self, i: &Hmul2, x: &Inputs) -> Result<u32, String> {
        crate::reference::eval(i, x).map_err(|e| e.to_string())
    }
    fn input_set(&self, i: &Hmul2, seed: u64, n: usize) -> Vec<Inputs> {
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
    match crate::verify::replay(&[dir], &mut sink) {
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
    fn expect(&self, inst: &Hmul2, inputs: &Inputs) -> Result<u32, String> {
        let w = crate::isa::encode(inst).map_err(|e| e.to_string())?;
        Ok(crate::gpu::fake::fake_eval(w, inputs))
    }
    fn input_set(&self, _inst: &Hmul2, seed: u64, n: usize) -> Vec<Inputs> {
        let mut r = crate::rng::Rng::new(seed);
        (0..n)
            .map(|_| Inputs {
                a: r.next_u32(),
                b: r.next_u32(),
                d: r.next_u32(),
                pred: r.next_u32() as u8 & 0x7f,
            })
            .collect()
    }
    fn digest_job(&self, req: &DigestRequest) -> Result<LaunchJob, String> {
        Ok(LaunchJob {
            cubin: crate::gpu::fake::FAKE_DIGEST_CUBIN.to_vec(),
            kernel_name: "fake-digest".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared_bytes: 0,
            input: req.encode(),
            output_bytes: 8 * req.chunks as usize,
        })
    }
}
