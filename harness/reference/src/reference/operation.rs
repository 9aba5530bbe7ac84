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
    /// HSET2 and HSETP2: a comparison per lane, combined with a predicate source
    /// ([`super::compare`]).
    Compare,
    /// HMNMX2: the minimum or maximum per lane, a predicate selecting which ([`super::minmax`]).
    MinMax,
}

/// The destination after one input record.
pub type EvalFn = fn(&Policy, &Inst, &Inputs) -> Result<u32, Undefined>;
/// The destinations after many input records (`out` at least as long as the inputs).
pub type BatchFn = fn(&Policy, &Inst, &[Inputs], &mut [u32]) -> Result<(), Undefined>;
/// The predicate file P0..P6 (bit i = Pi) after one input record, of an instruction that
/// writes predicates ([`Operation::preds`]).
pub type PredsFn = fn(&Policy, &Inst, &Inputs) -> Result<u8, Undefined>;
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
    /// The word-level batch; None: none (HMUL2's lanes are [`super::MulRow`]'s; the
    /// comparisons have no word-level path, and exhaustive mode does not sweep them).
    pub(super) words: Option<WordsFn>,
    /// The predicates it writes ([`super::preds_after`]); None: it writes none, and the
    /// file after it is the file before.
    pub preds: Option<PredsFn>,
}

/// Every instruction the reference computes, registered here once.
pub const OPERATIONS: [Operation; 7] = [
    Operation { op: Op::Hmul2, family: Family::Mul, eval: super::eval_mul_inst, batch: super::eval_mul_batch_inst, words: None, preds: None },
    Operation { op: Op::Hadd2, family: Family::Add, eval: super::eval_add_inst, batch: super::eval_add_batch_inst, words: Some(super::words_add), preds: None },
    Operation {
        op: Op::Hfma2,
        family: Family::Fma { mma: false },
        eval: super::eval_fma_inst,
        batch: super::eval_fma_batch_inst,
        words: Some(super::words_fma),
        preds: None,
    },
    Operation {
        op: Op::Hfma2Mma,
        family: Family::Fma { mma: true },
        eval: super::eval_fma_inst,
        batch: super::eval_fma_batch_inst,
        words: Some(super::words_fma),
        preds: None,
    },
    Operation {
        op: Op::Hset2,
        family: Family::Compare,
        eval: super::compare::eval_hset2_inst,
        batch: super::compare::eval_hset2_batch_inst,
        words: None,
        preds: None,
    },
    Operation {
        op: Op::Hsetp2,
        family: Family::Compare,
        eval: super::compare::eval_hsetp2_inst,
        batch: super::compare::eval_hsetp2_batch_inst,
        words: None,
        preds: Some(super::compare::preds_hsetp2_inst),
    },
    // `.IS_A`'s predicate results have no public meaning: it is undefined (Undefined::IsA),
    // so HMNMX2 has no preds entry
    Operation {
        op: Op::Hmnmx2,
        family: Family::MinMax,
        eval: super::minmax::eval_hmnmx2_inst,
        batch: super::minmax::eval_hmnmx2_batch_inst,
        words: None,
        preds: None,
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

/// Whether `op` writes predicates ([`Operation::preds`]); false for an instruction the
/// reference does not compute.
pub fn writes_preds(op: Op) -> bool {
    operation(op).is_some_and(|o| o.preds.is_some())
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
            assert_eq!(rows, 1, "{op}: one row of the operation table");
        }
        assert_eq!(super::super::IMPLEMENTED, &OPS[..]);
    }

    /// HSETP2 writes its two results into the predicates it names (PT takes none), keeps
    /// the others, and writes nothing where its guard is false.
    #[test]
    fn hsetp2_writes_its_two_predicates_and_no_other() {
        assert!(writes_preds(Op::Hsetp2));
        let p = |t: &str| crate::isa::parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        // 1.0 < 2.0 in lane 0, 2.0 < 1.0 false in lane 1 (H1 first in the word)
        let x = |pred: u8| Inputs { a: 0x4000_3c00, b: 0x3c00_4000, pred, ..Inputs::default() };
        let after = |t: &str, pred: u8| super::super::preds_after(&p(t), &x(pred));
        assert_eq!(after("HSETP2.LT.AND P0, P1, R1, R2, PT", 0x7c), Ok(0x7d), "P0 lane 0 true, P1 lane 1 false");
        assert_eq!(after("HSETP2.LT.AND P3, P5, R1, R2, PT", 0x00), Ok(0x08));
        assert_eq!(after("HSETP2.LT.AND PT, P5, R1, R2, PT", 0x7f), Ok(0x5f), "PT takes the first result");
        assert_eq!(after("HSETP2.LT.OR P0, P1, R1, R2, P6", 0x40), Ok(0x43), "OR with a true source");
        assert_eq!(after("HSETP2.LT.AND P0, P1, R1, R2, !P6", 0x40), Ok(0x40), "AND with a false source");
        assert_eq!(after("@P2 HSETP2.LT.AND P0, P1, R1, R2, PT", 0x02), Ok(0x02), "guarded off: nothing written");
        assert_eq!(after("HSETP2.LT.AND P4, P4, R1, R2, PT", 0), Err(Undefined::SamePredicate(4)));
        assert_eq!(after("HSETP2.T.AND P4, P4, R1, R2, PT", 0), Ok(0x10), "one value, one write");
        // its register result: none (RZ)
        assert_eq!(super::super::eval(&p("HSETP2.LT.AND P0, P1, R1, R2, PT"), &x(0)), Ok(0));
        assert_eq!(super::super::eval(&p("HSET2.LT.AND R0, R1, R2, PT"), &x(0)), Ok(0x0000_ffff));
    }

    /// HMNMX2's selector is its predicate per thread, true = min; `.IS_A` is undefined.
    #[test]
    fn hmnmx2_selects_min_by_its_predicate_and_is_a_is_undefined() {
        let p = |t: &str| crate::isa::parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        let x = |pred: u8| Inputs { a: 0x4000_3c00, b: 0x3c00_4000, pred, ..Inputs::default() };
        let eval = |t: &str, pred: u8| super::super::eval(&p(t), &x(pred));
        assert_eq!(eval("HMNMX2 R0, R1, R2, PT", 0), Ok(0x3c00_3c00), "min");
        assert_eq!(eval("HMNMX2 R0, R1, R2, !PT", 0), Ok(0x4000_4000), "max");
        assert_eq!(eval("HMNMX2 R0, R1, R2, P3", 0x08), Ok(0x3c00_3c00), "P3 true: min");
        assert_eq!(eval("HMNMX2 R0, R1, R2, P3", 0x00), Ok(0x4000_4000), "P3 false: max");
        let is_a = Inst { pdst: Some([0, 1]), ..p("HMNMX2 R0, R1, R2, PT") };
        assert_eq!(super::super::eval(&is_a, &x(0)), Err(Undefined::IsA));
    }

    #[test]
    fn an_instruction_that_writes_no_predicate_leaves_the_file_as_it_was() {
        let inst = crate::isa::parse("HFMA2 R0, R1, R2, R3").expect("an instruction of the family");
        for op in [Op::Hmul2, Op::Hadd2, Op::Hfma2, Op::Hfma2Mma, Op::Hset2, Op::Hmnmx2] {
            assert!(!writes_preds(op), "{op}: a row with no preds entry");
            let i = Inst::of(op, 0, 1, crate::isa::Operand2::Reg(2));
            let i = Inst { c: if op.spec().sources == 3 { inst.c } else { None }, ..i };
            for pred in [0u8, 0x2a, 0x7f] {
                let x = Inputs { a: 0x3c00_3c00, b: 0x4000_4000, c: 0x3c00_3c00, pred, ..Inputs::default() };
                assert_eq!(super::super::preds_after(&i, &x), Ok(pred), "{op} with P0..P6 = {pred:#04x}");
            }
        }
    }
}
