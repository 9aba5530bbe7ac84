//! The scaffold road: kernels ptxas compiled around each instruction form, one word rewritten.
//! (Being built: until the scaffolds are committed, no word maps onto one.)

use super::{Case, LaunchJob, NotRunnable, PatchError};
use crate::inputs::Inputs;

/// A patched scaffold: one case, one output word per thread.
#[derive(Clone, Debug)]
pub struct ScaffoldBuilt {
    pub job: LaunchJob,
}

impl ScaffoldBuilt {
    /// Destination values per thread.
    pub fn results(&self, _output: &[u8]) -> Result<Vec<u32>, PatchError> {
        Err(PatchError::Malformed("no scaffold".into()))
    }
    /// The inputs the case's threads really read.
    pub fn effective_inputs(&self, _case: &Case) -> Result<Vec<Inputs>, PatchError> {
        Err(PatchError::Malformed("no scaffold".into()))
    }
}

/// The scaffold `word` maps onto, or why none does.
pub fn runnable(_word: u128) -> Result<(), NotRunnable> {
    Err(NotRunnable::NoScaffold("no scaffold is committed yet".into()))
}

/// The patched scaffold of one case.
pub fn build(case: &Case) -> Result<ScaffoldBuilt, PatchError> {
    Err(PatchError::NotRunnable {
        case: 0,
        word: crate::isa::format_hex(case.word),
        reason: runnable(case.word).err().unwrap_or(NotRunnable::NoScaffold(String::new())),
    })
}
