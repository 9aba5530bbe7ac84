//! What one execution of an instruction reads besides its encoding.

use serde::{Deserialize, Serialize};

/// The register file around one execution of an instruction of the family, as the reference and the GPU runner see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Inputs {
    /// Value of operand 1's register (0 when it is RZ).
    pub a: u32,
    /// Value operand 2 reads: its register, uniform register or constant-bank word
    /// (0 for RZ/URZ). Not read in the immediate form, whose value is in the encoding.
    pub b: u32,
    /// The destination register's value before the instruction.
    pub d: u32,
    /// Value operand 3 reads, for three-source instructions (HFMA2): its register, uniform
    /// register or constant-bank word (0 for RZ/URZ; not read when it is immediates). Always
    /// 0 for two-source instructions, and absent from their vector lines.
    #[serde(default)]
    pub c: u32,
    /// Predicate file: bit i is Pi (i < 7); PT is always true.
    pub pred: u8,
}
