//! Executing patched cubins on an SM90 GPU: driver detection ([`detect`]), the real
//! cudarc-backed executor ([`driver`]), the worker process that isolates faults ([`worker`]),
//! its wire format ([`protocol`]) and a simulated executor for CPU-only tests ([`fake`]).
//!
//! Everything above this module talks to an [`Executor`]; nothing above it knows whether a
//! GPU, a worker process or a simulation answered.

pub mod detect;
pub mod driver;
pub mod fake;
pub mod protocol;
pub mod worker;

/// What one launch needs (made by the patcher, run by a worker).
pub use crate::kernel::LaunchJob;

/// Why a job produced no output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The GPU raised an error while running the job (illegal instruction, misaligned
    /// address, ...): the instructions are to blame, and the process's context is lost.
    #[error("GPU fault {name} ({code}) during {stage}")]
    Fault { code: i32, name: String, stage: String },
    /// The worker process exited or was killed without answering (e.g. a driver abort).
    #[error("worker died: {0}")]
    WorkerDied(String),
    /// The worker did not answer within the time limit (a hung kernel); it was killed.
    #[error("worker timed out after {} s", .0.as_secs_f64())]
    Timeout(std::time::Duration),
    /// Driver or setup failure not attributable to one instruction (no device, out of
    /// memory, module rejected...): retrying smaller batches will not help.
    #[error("setup: {0}")]
    Setup(String),
    /// The worker answered something that is not the protocol.
    #[error("worker protocol: {0}")]
    Protocol(String),
}

impl ExecError {
    /// Whether the failure may be caused by an instruction in the batch, so that bisecting
    /// the batch can find it.
    pub fn blames_instructions(&self) -> bool {
        matches!(self, ExecError::Fault { .. } | ExecError::WorkerDied(_) | ExecError::Timeout(_))
    }
}

/// Runs launch jobs somewhere (a GPU, a worker process, a simulation).
pub trait Executor {
    fn execute(&mut self, job: &LaunchJob) -> Result<Vec<u8>, ExecError>;
    /// Where the driver's time went so far, as one line (`driver::StageTimes`), for an
    /// executor that measures it.
    fn stage_times(&self) -> Option<String> {
        None
    }
}

impl<E: Executor + ?Sized> Executor for Box<E> {
    fn execute(&mut self, job: &LaunchJob) -> Result<Vec<u8>, ExecError> {
        (**self).execute(job)
    }
    fn stage_times(&self) -> Option<String> {
        (**self).stage_times()
    }
}

/// The env var that replaces the GPU by [`fake::FakeExecutor`] in workers and selects the
/// fake backend in `run` (CPU-only tests; never reports hardware).
pub const FAKE_ENV: &str = "HMUL2_FAKE_EXECUTOR";

/// The env var that makes each worker say on standard error, as it ends, where its
/// driver's time went (`driver::StageTimes`): module load, copies, launch, unload.
pub const STAGE_TIMES_ENV: &str = "HMUL2_STAGE_TIMES";
