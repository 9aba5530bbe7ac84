//! The fused sweep: the reference digests of exhaustive mode without `Inputs` records.
//!
//! [`reference_digests`](super::reference_digests) builds a 16-byte record per input, maps
//! it to what the kernel reads (`digest_inputs`), evaluates a generic batch and mixes. For
//! the words whose kernel reads the generated values as they are (no two source operands
//! in one register), the inputs of a row (x fixed, y = 0..65535) are known in advance:
//! a = x·0x10001, b = y·0x10001, d = [`D_FILL`], P0..P6 true, operand 3 the request's c.
//! So each block of a row is generated, evaluated with the reference's own kernels and
//! mixed in one pass ([`Fused::digest`]):
//! - HMUL2 with operand 2 a register: both halves of a and b hold the same value, so every
//!   half select reads it and both lanes compute the same product: one lane
//!   ([`reference::MulRow`]), times 0x10001;
//! - HADD2 (not `.F32`) with operand 2 a register: likewise one lane
//!   ([`reference::add_row`]);
//! - HADD2 `.F32`, HFMA2, HFMA2.MMA with operand 2 a register: the word-level batch
//!   kernels ([`reference::eval_words`]; operand 3 and `.F32` make the lanes differ);
//! - operand 2 immediates or RZ: the result depends on x alone, one [`reference::eval`] per row;
//! - a false guard (`@!Pn`, `@!PT`): the destination's fill value (0 for RZ) everywhere.
//!
//! Everything else is [`plan`]'s `Err` and takes the general path: coinciding source
//! registers, a false guard whose destination is a source register, a form exhaustive mode
//! refuses, an instruction with no defined result (the general path applies the
//! `invalid-predicated-off` policy). The tests check the fused digests against the general
//! path's on every form and modifier.

use super::{mix_sum, mix_sum_lanes, DigestRequest, D_FILL, PRED_ALL};
use crate::inputs::Inputs;
use crate::isa::{Inst, Operand2, RZ};
use crate::reference::{self, add::AddRow, MulRow, Policy, Row};

/// Inputs per fused block (divides a row of 2^16).
const BLOCK: u64 = 4096;

/// y for y = 0..2^16 (operand 2's half of a row), and y·0x10001 (its word).
static Y16: [u16; 1 << 16] = {
    let mut t = [0u16; 1 << 16];
    let mut i = 0;
    while i < t.len() {
        t[i] = i as u16;
        i += 1;
    }
    t
};
static Y32: [u32; 1 << 16] = {
    let mut t = [0u32; 1 << 16];
    let mut i = 0;
    while i < t.len() {
        t[i] = i as u32 * 0x10001;
        i += 1;
    }
    t
};

/// How the fused sweep evaluates a word's rows.
#[derive(Clone, Copy, Debug)]
pub enum Eval {
    /// HMUL2, operand 2 a register: one lane per input.
    MulLanes(MulRow),
    /// HADD2 but `.F32`, operand 2 a register: one lane per input.
    AddLanes(AddRow),
    /// HADD2 / HFMA2 / HFMA2.MMA, operand 2 a register: the word-level batch kernels.
    Words,
    /// Operand 2 immediates or RZ: one result per row.
    PerRow,
    /// A false guard: this destination value for every input.
    Const(u32),
}

/// A word the fused sweep computes.
#[derive(Clone, Debug)]
pub struct Fused {
    pub inst: Inst,
    pub eval: Eval,
    /// The policy its rows are computed under.
    pub policy: &'static Policy,
}

/// The fused sweep of `word` under SM90's policy ([`plan_with`] another's), or why the
/// general path must compute it.
pub fn plan(word: u128) -> Result<Fused, String> {
    plan_with(Policy::current(), word)
}

/// [`plan`] under policy `p`: the run's architecture's ([`Policy::for_target`]), as the
/// general path's reference and the emulated digest kernel compute.
pub fn plan_with(p: &'static Policy, word: u128) -> Result<Fused, String> {
    let inst = crate::kernel::digest::check_form(word).map_err(|e| e.to_string())?;
    let Some(operation) = reference::operation(inst.op) else {
        return Err(format!("no fused sweep for {:?}", inst.op));
    };
    // the instruction must be defined (an undefined one is the general path's, with its
    // invalid-predicated-off policy)
    let mul = if operation.family == reference::Family::Mul {
        Some(MulRow::new_with(p, &inst).map_err(|u| u.to_string())?)
    } else {
        let mut out = [0u32; 1];
        reference::eval_words_with(p, &inst, 0x3c00_3c00, &[0x3c00_3c00], 0x3c00_3c00, &mut out, &mut Vec::new()).map_err(|u| u.to_string())?;
        None
    };
    // the kernel reads the generated values as they are: no two source operands in one
    // register (RZ reads 0, which the reference models)
    let reg = |o: Operand2| match o {
        Operand2::Reg(r) if r != RZ => Some(r),
        _ => None,
    };
    let sources: Vec<u8> = [Some(inst.a).filter(|&r| r != RZ), reg(inst.b), inst.c.and_then(reg)].into_iter().flatten().collect();
    if sources.iter().enumerate().any(|(i, r)| sources[..i].contains(r)) {
        return Err("two source operands in one register".to_string());
    }
    // P0..P6 and PT are all true: the guard is true unless negated
    if inst.pred.negated {
        if inst.dst == RZ {
            return Ok(Fused { inst, eval: Eval::Const(0), policy: p });
        }
        if sources.contains(&inst.dst) {
            return Err("a false guard and a destination that is a source register".to_string());
        }
        return Ok(Fused { inst, eval: Eval::Const(D_FILL), policy: p });
    }
    let add = reference::add_row_with(p, &inst).map_err(|u| u.to_string())?;
    let eval = match (reg(inst.b), mul, add) {
        (None, _, _) => Eval::PerRow,
        (Some(_), Some(Some(m)), _) => Eval::MulLanes(m),
        (Some(_), Some(None), _) => Eval::PerRow, // unreachable: a register operand 2 is symmetric
        (Some(_), None, Some(a)) => Eval::AddLanes(a),
        (Some(_), None, None) => Eval::Words,
    };
    Ok(Fused { inst, eval, policy: p })
}

/// Per-thread buffers of one block.
struct Scratch {
    lanes: Vec<u16>,
    out: Vec<u32>,
    words: Vec<u32>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch { lanes: vec![0; BLOCK as usize], out: vec![0; BLOCK as usize], words: Vec::new() }
    }
}

impl Fused {
    /// The digest of chunk `chunk` of `req` (whose word this is).
    pub fn digest(&self, req: &DigestRequest, chunk: u64) -> u64 {
        let mut s = Scratch::new();
        self.digest_with(req, chunk, &mut s)
    }

    fn digest_with(&self, req: &DigestRequest, chunk: u64, s: &mut Scratch) -> u64 {
        let r = req.chunk_range(chunk);
        let step = BLOCK.min(r.end - r.start);
        let mut sum = 0u64;
        // PerRow: the last row's result
        let mut row: Option<(u32, u32)> = None;
        let mut k0 = r.start;
        while k0 < r.end {
            let n = step as usize;
            let x = ((k0 >> 16) & 0xffff) as u32;
            let y0 = (k0 & 0xffff) as u32;
            let ys = y0 as usize..y0 as usize + n;
            let out = &mut s.out[..n];
            let d = match self.eval {
                Eval::Const(v) => {
                    out.fill(v);
                    mix_sum(k0, out)
                }
                Eval::PerRow => {
                    let v = match row {
                        Some((rx, v)) if rx == x => v,
                        _ => {
                            let i = Inputs { c: req.c, ..super::inputs_for(k0) };
                            // plan checked that the instruction is defined
                            let v = reference::eval_with(self.policy, &self.inst, &Inputs { pred: PRED_ALL, ..i }).unwrap_or(0);
                            row = Some((x, v));
                            v
                        }
                    };
                    out.fill(v);
                    mix_sum(k0, out)
                }
                Eval::MulLanes(m) => {
                    let lanes = &mut s.lanes[..n];
                    m.eval(x as u16, &Y16[ys], lanes);
                    mix_sum_lanes(k0, lanes, m.word_keep())
                }
                Eval::AddLanes(a) => {
                    let lanes = &mut s.lanes[..n];
                    a.eval(x as u16, &Y16[ys], lanes);
                    mix_sum_lanes(k0, lanes, a.word_keep())
                }
                Eval::Words => {
                    // plan checked that the instruction is defined
                    let _ = reference::eval_words_with(self.policy, &self.inst, x * 0x10001, &Y32[ys], req.c, out, &mut s.words);
                    mix_sum(k0, out)
                }
            };
            sum = sum.wrapping_add(d);
            k0 += step;
        }
        sum
    }
}

/// The reference digests of every chunk of `req` by the fused sweep, on all cores; `None`
/// when the word is not one [`plan`] fuses (then the general path must compute them).
pub fn fused_digests(req: &DigestRequest) -> Option<Vec<Option<u64>>> {
    fused_digests_with(Policy::current(), req)
}

/// [`fused_digests`] under policy `p` (the run's architecture's).
pub fn fused_digests_with(p: &'static Policy, req: &DigestRequest) -> Option<Vec<Option<u64>>> {
    let f = plan_with(p, req.word).ok()?;
    Some(super::per_chunk(req, Scratch::new, |c, sc| Some(f.digest_with(req, c, sc))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{encode, parse, Form, Op};
    use crate::rng::Rng;

    /// The general path's digests: records, the inputs the kernel reads, `eval_batch`.
    fn general(req: &DigestRequest) -> Vec<Option<u64>> {
        let inst = crate::isa::decode(req.word).unwrap();
        let expect = |xs: &[Inputs], out: &mut [u32]| {
            let eff = crate::kernel::digest::digest_inputs(req.word, xs).map_err(|e| e.to_string())?;
            reference::eval_batch(&inst, &eff, out).map_err(|e| e.to_string())
        };
        super::super::reference_digests(req, &expect)
    }

    fn word(text: &str) -> u128 {
        encode(&parse(text).unwrap()).unwrap()
    }

    /// Operand-3 values the tests fix: zeros, infinities, NaN, subnormals, halves that differ.
    const CS: [u32; 8] = [0, 0x8000_8000, 0x7c00_fc00, 0x7e00_3c00, 0x0001_03ff, 0x7f80_ff80, 0x3c00_bc00, 0x1234_abcd];

    /// Whether the general path must take `inst` (what `plan` refuses), decided apart
    /// from `plan`: a form exhaustive mode refuses, an undefined instruction, coinciding
    /// source registers, a false guard whose destination is a source.
    fn must_fall_back(word: u128, inst: &Inst) -> bool {
        if crate::kernel::digest::check_form(word).is_err() {
            return true;
        }
        let x = Inputs { a: 0x3c00_3c00, b: 0x3c00_3c00, d: 0, pred: 0x7f, c: 0 };
        let guard_true = Inst { pred: crate::isa::Pred { index: 7, negated: false }, ..*inst };
        if reference::eval(&guard_true, &x).is_err() {
            return true;
        }
        let regs: Vec<u8> = inst.source_regs().filter(|&r| r != RZ).collect();
        let coincide = (0..regs.len()).any(|i| regs[..i].contains(&regs[i]));
        coincide || (inst.pred.negated && regs.contains(&inst.dst))
    }

    fn ops() -> [Op; 4] {
        [Op::Hmul2, Op::Hadd2, Op::Hfma2, Op::Hfma2Mma]
    }

    /// Random words of every instruction, form and modifier (some with coinciding
    /// registers, RZ, false guards): the fused digests equal the general path's on sampled
    /// chunks of 2^32, and the fused path is taken exactly where it should be.
    #[test]
    fn fused_equals_general_on_random_words() {
        let seed = 0x5eed_0018;
        println!("seed: {seed}");
        let mut r = Rng::new(seed);
        let mut taken = std::collections::BTreeMap::<String, u32>::new();
        for op in ops() {
            for form in op.forms() {
                for k in 0..40u32 {
                    let mut inst = crate::gen::random_inst(&mut r, op, form, k % 10 == 9, false);
                    match k % 8 {
                        1 => inst.dst = inst.a,
                        2 => inst.a = RZ,
                        3 => inst.b = if form == Form::Rrr || form == Form::Rrrr { Operand2::Reg(inst.a) } else { inst.b },
                        4 => inst.dst = RZ,
                        5 => inst.pred.negated = true,
                        _ => {}
                    }
                    let Ok(w) = encode(&inst) else { continue };
                    let inst = crate::isa::decode(w).unwrap();
                    let p = plan(w);
                    assert_eq!(p.is_err(), must_fall_back(w, &inst), "seed {seed}: {inst:?}: {:?}", p.as_ref().err());
                    let kind = match &p {
                        Ok(f) => format!("{:?} {:?}", op, std::mem::discriminant(&f.eval)),
                        Err(_) => format!("{op:?} general"),
                    };
                    *taken.entry(kind).or_default() += 1;
                    if crate::kernel::digest::check_form(w).is_err() {
                        continue;
                    }
                    let c = if inst.c.is_some() { CS[r.below(CS.len() as u32) as usize] } else { 0 };
                    // two chunks of 2^12 at a random place, and one of 2^8 (under a block)
                    for (bits, chunks) in [(12u32, 2u32), (8, 1)] {
                        let first_chunk = r.next_u64() % ((1u64 << (32 - bits)) - chunks as u64);
                        let req = DigestRequest { word: w, space_bits: 32, chunk_bits: bits, first_chunk, chunks, c };
                        if let Some(got) = fused_digests(&req) {
                            assert_eq!(got, general(&req), "seed {seed}: {} c = {c:#x}, {req:?}", crate::isa::render(&inst));
                        }
                    }
                }
            }
        }
        println!("{taken:#?}");
        // every instruction took its fused path for some words
        for op in ops() {
            let n: u32 = taken.iter().filter(|(k, _)| k.starts_with(&format!("{op:?} ")) && !k.ends_with("general")).map(|(_, v)| v).sum();
            assert!(n >= 20, "{op:?}: fused path taken for only {n} words");
        }
    }

    /// Whole rows of special values (zeros, infinities, NaNs, subnormals, max finite) for
    /// FP16 and BF16 words of each instruction, with modifiers: fused equals general.
    #[test]
    fn fused_equals_general_on_rows_of_special_values() {
        let words = [
            "HMUL2 R0, R1, R2",
            "HMUL2.BF16_V2 R0, R1, R2",
            "HMUL2.FTZ.SAT R0, -R1.H1_H1, |R2|",
            "HMUL2.BF16_V2.FMZ R0, |R1|, -R2.H0_H0",
            "HMUL2.FMZ R0, R1, R2",
            "HMUL2 R0, R1, 1.5, -2",
            "HADD2 R0, R1, R2",
            "HADD2.BF16_V2 R0, -R1, R2",
            "HADD2.F32 R0, R1, -R2",
            "HADD2.FTZ.SAT R0, R1, |R2|",
            "HADD2.BF16_V2.SAT RZ, RZ, -R2.H0_H0",
            "HFMA2 R0, R1, R2, R3",
            "HFMA2.BF16_V2 R0, R1, R2, R3",
            "HFMA2.FTZ.SAT R0, -R1, R2, -R3",
            "HFMA2.MMA R0, R1, R2, R3",
            "HFMA2.MMA.BF16_V2 R0, R1, R2, R3",
        ];
        let f16 = [0x0000u32, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x3c00];
        let bf16 = [0x0000u32, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x3f80];
        for text in words {
            let Ok(inst) = parse(text) else { panic!("{text} does not parse") };
            let w = encode(&inst).unwrap();
            assert!(plan(w).is_ok(), "{text}: {:?}", plan(w).err());
            let sp = if inst.format == crate::isa::Format::Bf16 { bf16 } else { f16 };
            for (i, &x) in sp.iter().enumerate() {
                let c = if inst.c.is_some() { sp[(i * 7 + 3) % sp.len()] * 0x10001 } else { 0 };
                let req = DigestRequest { word: w, space_bits: 32, chunk_bits: 14, first_chunk: (x as u64) << 2, chunks: 4, c };
                assert_eq!(fused_digests(&req).unwrap(), general(&req), "{text}, row {x:#06x}, c = {c:#x}");
            }
        }
    }

    /// Under another architecture's policy the fused sweep computes as the general path
    /// does under it (a run's `fused_digests_with` its target's): here `nan-result` settled
    /// apart, on rows whose products are NaN, where the two policies' digests differ.
    #[test]
    fn the_fused_sweep_computes_under_the_policy_it_is_given() {
        let mut alt = *Policy::current();
        alt.nan_canonical = !alt.nan_canonical;
        let alt: &'static Policy = Box::leak(Box::new(alt));
        let general_with = |p: &Policy, req: &DigestRequest| {
            let inst = crate::isa::decode(req.word).unwrap();
            let expect = |xs: &[Inputs], out: &mut [u32]| {
                let eff = crate::kernel::digest::digest_inputs(req.word, xs).map_err(|e| e.to_string())?;
                reference::eval_batch_with(p, &inst, &eff, out).map_err(|e| e.to_string())
            };
            super::super::reference_digests(req, &expect)
        };
        for text in ["HMUL2 R0, R1, R2", "HADD2 R0, R1, R2", "HFMA2 R0, R1, R2, R3", "HMUL2 R0, R1, 1.5, -2"] {
            let w = word(text);
            // x = a NaN with a payload: every product or sum of the row is NaN
            let req = DigestRequest { word: w, space_bits: 32, chunk_bits: 14, first_chunk: 0x7e01 << 2, chunks: 4, c: 0x3c00_3c00 };
            let (mine, theirs) = (fused_digests_with(alt, &req).unwrap(), fused_digests(&req).unwrap());
            assert_eq!(mine, general_with(alt, &req), "{text}: the fused sweep under the other policy");
            assert_eq!(theirs, general_with(Policy::current(), &req), "{text}: under SM90's");
            assert_ne!(mine, theirs, "{text}: the two policies' NaN results differ on this row");
        }
    }

    /// Which words take which path.
    #[test]
    fn the_fused_path_is_taken_where_it_applies() {
        let kind = |t: &str| plan(word(t)).map(|f| std::mem::discriminant(&f.eval));
        let d = |e: Eval| Ok(std::mem::discriminant(&e));
        let m = MulRow::new(&parse("HMUL2 R0, R1, R2").unwrap()).unwrap().unwrap();
        assert_eq!(kind("HMUL2 R0, R1, R2"), d(Eval::MulLanes(m)));
        assert_eq!(kind("HMUL2.BF16_V2.FTZ R5, -R1.H1_H1, R2.H0_H0"), d(Eval::MulLanes(m)));
        assert_eq!(kind("HMUL2 R0, R1, R0"), d(Eval::MulLanes(m)), "a destination that is a source, guard true");
        let a = reference::add_row(&parse("HADD2 R0, R1, R2").unwrap()).unwrap().unwrap();
        assert_eq!(kind("HADD2 R0, R1, R2"), d(Eval::AddLanes(a)));
        assert_eq!(kind("HADD2.BF16_V2.FTZ.SAT RZ, -RZ, |R2|.H1_H1"), d(Eval::AddLanes(a)));
        assert_eq!(kind("HADD2.F32 R0, R1, R2"), d(Eval::Words), ".F32: one FP32 value, not two like lanes");
        assert_eq!(kind("HFMA2 R0, R1, R2, R3"), d(Eval::Words));
        assert_eq!(kind("HFMA2.MMA R0, R1, R2, c[0x3][0x10]"), d(Eval::Words));
        assert_eq!(kind("HMUL2 R0, R1, 1, 2"), d(Eval::PerRow));
        assert_eq!(kind("HMUL2 R0, R1, RZ"), d(Eval::PerRow));
        assert_eq!(kind("@!P0 HMUL2 R0, R1, R2"), d(Eval::Const(D_FILL)));
        assert!(kind("HMUL2 R0, R1, R1").is_err(), "coinciding sources");
        assert!(kind("HFMA2 R0, R1, R2, R1").is_err(), "coinciding sources");
        assert!(kind("@!P0 HMUL2 R1, R1, R2").is_err(), "false guard, destination a source");
        assert!(kind("HMUL2 R0, R1, UR4").is_err(), "operand 2 not swept");
    }
}
