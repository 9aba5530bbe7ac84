//! The one table that finds an instruction's arithmetic: each instruction the reference
//! computes is a row ([`Operation`]) naming its family and the functions that compute it, one
//! input ([`Operation::eval`]), many ([`Operation::batch`]) or many operand-2 words
//! ([`super::eval_words`]). Everything else asks this table, never the mnemonic: adding an
//! instruction's arithmetic is its semantics module and one row here.

use super::{Operands, Policy, Undefined};
use crate::inputs::Inputs;
use crate::isa::{Inst, Op};

/// The kind of arithmetic an instruction does: what the lane code that knows it asks for
/// (the multiply's lanes are [`super::MulRow`]'s, the add's [`super::add::AddRow`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// HMUL2: a product rounded once.
    Mul,
    /// HADD2: a sum rounded once (and `.F32`'s single FP32 result).
    Add,
    /// HFMA2 and HFMA2.MMA: a fused multiply-add; `mma` is HFMA2.MMA's (`fma-mma`).
    Fma { mma: bool },
}

/// The destination after one input record.
pub type EvalFn = fn(&Policy, &Inst, &Inputs) -> Result<u32, Undefined>;
/// The destinations after many input records (`out` at least as long as the inputs).
pub type BatchFn = fn(&Policy, &Inst, &[Inputs], &mut [u32]) -> Result<(), Undefined>;
/// [`super::eval_words`]'s arithmetic: the guard true, operand 1 and 3 in the input record,
/// operand 2 from the words; the caller clears a destination RZ.
pub(super) type WordsFn = fn(&Policy, &Inst, &Operands, &Inputs, &[u32], &mut [u32], &mut Vec<u32>) -> Result<(), Undefined>;

/// One instruction's arithmetic.
#[derive(Clone, Copy, Debug)]
pub struct Operation {
    pub op: Op,
    pub family: Family,
    pub eval: EvalFn,
    pub batch: BatchFn,
    /// The word-level batch; None: the instruction's lanes are [`super::MulRow`]'s.
    pub(super) words: Option<WordsFn>,
}

/// Every instruction the reference computes, registered here once.
pub const OPERATIONS: [Operation; 4] = [
    Operation { op: Op::Hmul2, family: Family::Mul, eval: super::eval_mul_inst, batch: super::eval_mul_batch_inst, words: None },
    Operation { op: Op::Hadd2, family: Family::Add, eval: super::eval_add_inst, batch: super::eval_add_batch_inst, words: Some(super::words_add) },
    Operation {
        op: Op::Hfma2,
        family: Family::Fma { mma: false },
        eval: super::eval_fma_inst,
        batch: super::eval_fma_batch_inst,
        words: Some(super::words_fma),
    },
    Operation {
        op: Op::Hfma2Mma,
        family: Family::Fma { mma: true },
        eval: super::eval_fma_inst,
        batch: super::eval_fma_batch_inst,
        words: Some(super::words_fma),
    },
];

/// The instructions of [`OPERATIONS`], in its order.
pub const OPS: [Op; OPERATIONS.len()] = {
    let mut ops = [Op::Hmul2; OPERATIONS.len()];
    let mut i = 0;
    while i < OPERATIONS.len() {
        ops[i] = OPERATIONS[i].op;
        i += 1;
    }
    ops
};

/// `op`'s arithmetic; None for an instruction the reference does not compute.
pub fn operation(op: Op) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.op == op)
}

/// `op`'s family of arithmetic; None for an instruction the reference does not compute.
pub fn family_of(op: Op) -> Option<Family> {
    operation(op).map(|o| o.family)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_instruction_has_one_row() {
        for op in Op::ALL {
            let rows = OPERATIONS.iter().filter(|o| o.op == op).count();
            // the comparisons and min/max (a shape with its own text order) compute in
            // `compare` and `minmax` until the kernel reads their predicates back: their rows
            // come with it (issue 41); every other instruction has its row
            let want = if op.spec().text.is_some() { rows.min(1) } else { 1 };
            assert_eq!(rows, want, "{op}: one row of the operation table");
        }
        assert_eq!(super::super::IMPLEMENTED, &OPS[..]);
    }
}
