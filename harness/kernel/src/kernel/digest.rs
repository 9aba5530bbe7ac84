//! Exhaustive mode's device kernel: generates the inputs of `run::exhaustive`'s protocol
//! itself, runs the word under test on each, and leaves one partial digest per thread.
//!
//! Shape. Grid = the request's chunks (block c runs chunk `first_chunk + c`), block =
//! [`THREADS`]. Thread t of block c runs k = ((first_chunk + c) << chunk_bits) + t + 256 i
//! for i in 0..2^chunk_bits / 256 (so chunk_bits >= 8), and stores Σ mix(k, r_k) mod 2^64
//! as a little-endian u64 at output byte 8 (256 c + t). The CPU adds a chunk's 256
//! partials: no atomics, no zeroed output (the driver fills it with 0xA5 before launch).
//! Everything but SR_TID.X / SR_CTAID.X is known when the job is built, so chunk_bits,
//! first_chunk and the iteration count are immediates.
//!
//! Per iteration (34 instructions at most): `PRMT` x2 build a = x·0x10001 and b = y·0x10001
//! from k (selectors 0x3232 / 0x1010: bytes of k's upper / lower half, twice); `MOV` d, b, a
//! into the registers the word names, in the patcher's order (so coinciding registers read
//! [`super::effective_inputs`]); `NOP` waiting on every scoreboard; the word unchanged;
//! `NOP`; the splitmix64 finalizer of k·2^32 + r in 32-bit halves (per round `SHF.R.U32.HI`,
//! `SHF.R.U64`, two `LOP3` xor, `IMAD` x2 + `IMAD.WIDE.U32` + `IMAD.IADD` for the 64-bit
//! multiply by a constant); the 64-bit accumulate as `IMAD.WIDE.U32 acc, lo, 1, acc` +
//! `IMAD.IADD` (no carry predicate: a predicate write could reach P0..P6, which the word
//! must see true); k += 256, counter −1, `ISETP.NE.U32` into a loop predicate other than the
//! word's guard, `@P BRA` back. R2P sets P0..P6 before the loop; the loop predicate is true
//! whenever the branch is taken, so the word always runs with P0..P6 true.
//!
//! Working registers are the lowest ones (pairs even-aligned) the word does not name.
//! Operand-2 forms that read one value per warp (UR) or launch (c[], cx[]) cannot sweep b
//! per thread and are refused with [`DigestError::Form`]. A three-source word's operand 3
//! is the request's fixed c: `IADD3 Rc', RZ, c` before the loop and `MOV` into its
//! register in the loop (d, c, b, a: the batch kernel's order), `R2UR` for a uniform
//! register, the bank word for `c[0x3][]`; `cx[]` is refused ([`DigestError::Operand3Bindless`]).
//!
//! Verified by CPU emulation (tests/digest_emulate.rs) and nvdisasm. On hardware (an H200,
//! 2026-12-04) it **faults** with `CUDA_ERROR_ILLEGAL_INSTRUCTION` for every word tried,
//! while a one-case batch kernel runs: docs/hardware/2026-12-04-h200/README.md.

use super::helpers::{self, Op, Sched};
use super::{decode, effective_inputs_with, patch_cubin_for, runnable, LaunchJob, NotRunnable, PatchError, Planned, KERNEL_NAME};
use crate::exhaustive::{DigestRequest, D_FILL, PRED_ALL, THREADS};
use crate::inputs::Inputs;
use crate::isa::{Operand2, PT, RZ};
use crate::reference::Family;
use crate::target::Target;

/// Why no digest kernel can be built for a request.
#[derive(Debug, thiserror::Error)]
pub enum DigestError {
    #[error("{0}")]
    NotRunnable(#[from] NotRunnable),
    #[error("exhaustive mode needs operand 2 per thread (R,R,R or R,R,imm,imm); the {form} form reads one operand-2 value per {per}, so b cannot be swept")]
    Form { form: String, per: &'static str },
    #[error("exhaustive mode fixes operand 3 to the request's c; a cx[] operand 3 would need a bindless handle, which the digest kernel does not build (use R,R,R,R, an immediate, c[0x3][] or UR operand 3)")]
    Operand3Bindless,
    #[error("{0} writes predicates: exhaustive mode's digest folds the destination alone, so its predicate results would go unchecked (run it with `run`, whose batch and single roads read them back)")]
    WritesPredicates(crate::isa::Op),
    #[error("exhaustive mode sweeps HMUL2, HADD2, HFMA2 and HFMA2.MMA; {0} has no sweep (its reference has no word-level path): run it with `run`")]
    NotSwept(crate::isa::Op),
    #[error("digest request: {0}")]
    Request(String),
    #[error("{0}")]
    Patch(#[from] PatchError),
}

/// A built digest job, with what the tests need to check it.
#[derive(Clone, Debug)]
pub struct DigestBuilt {
    pub job: LaunchJob,
    /// The program written into `.text`.
    pub program: Vec<u128>,
    /// What nvdisasm should print for each instruction (branch targets as `BRA`).
    pub texts: Vec<String>,
    pub regcount: u32,
    /// Instruction indices: the loop's first instruction, the word under test, the branch.
    pub loop_head: usize,
    pub iut: usize,
    pub branch: usize,
}

/// The word's form, if exhaustive mode can sweep it.
pub fn check_form(word: u128) -> Result<crate::isa::Inst, DigestError> {
    runnable(word)?;
    let inst = decode(word).map_err(|e| NotRunnable::Illegal(e.to_string()))?;
    // the digest folds the destination alone: a result in predicates would not be summed
    if crate::reference::writes_preds(inst.op) {
        return Err(DigestError::WritesPredicates(inst.op));
    }
    // the sweep and its reference digests know the arithmetic families alone
    if !matches!(crate::reference::family_of(inst.op), Some(Family::Mul | Family::Add | Family::Fma { .. })) {
        return Err(DigestError::NotSwept(inst.op));
    }
    if let Some(Operand2::ConstUr { .. }) = inst.c {
        return Err(DigestError::Operand3Bindless);
    }
    let per = match inst.b {
        Operand2::Reg(_) | Operand2::Imm { .. } => return Ok(inst),
        Operand2::Ur(_) => "warp",
        Operand2::Const { .. } | Operand2::ConstUr { .. } => "launch",
    };
    Err(DigestError::Form { form: inst.form().cli_name().to_string(), per })
}

/// The inputs the digest kernel of `word` really reads for these generated ones
/// (coinciding registers, RZ): what the CPU reference must be given.
pub fn digest_inputs(word: u128, inputs: &[Inputs]) -> Result<Vec<Inputs>, DigestError> {
    check_form(word)?;
    // operand 2 is never a constant; a c[0x3][] operand 3 reads the request's c, which every
    // input carries
    let c = inputs.first().map_or(0, |x| x.c);
    Ok(effective_inputs_with(Target::DEFAULT, word, inputs, &|_| c)?)
}

/// The request's range, and the kernel's own limit (at least one iteration per thread).
fn check_request(req: &DigestRequest) -> Result<(), DigestError> {
    let min = THREADS.trailing_zeros();
    let fits = req.space_bits <= 32
        && req.chunk_bits <= req.space_bits
        && req.chunks >= 1
        && req.first_chunk.checked_add(req.chunks as u64).is_some_and(|end| end << req.chunk_bits <= 1u64 << req.space_bits);
    if !fits {
        return Err(DigestError::Request(format!("out of range: {req:?}")));
    }
    if req.chunk_bits < min {
        return Err(DigestError::Request(format!("chunk_bits {} < {min}: a chunk must give each of the {THREADS} threads at least one input", req.chunk_bits)));
    }
    Ok(())
}

/// Working registers: `pairs` even-aligned pairs, then `singles`, lowest first, none named.
fn allocate(named: &[u8], pairs: usize, singles: usize) -> (Vec<u32>, Vec<u32>) {
    let free = |r: u32| r < RZ as u32 && !named.contains(&(r as u8));
    let ps: Vec<u32> = (0..127u32).map(|q| 2 * q).filter(|&q| free(q) && free(q + 1)).take(pairs).collect();
    let ss: Vec<u32> = (0..RZ as u32).filter(|&r| free(r) && !ps.iter().any(|&p| r == p || r == p + 1)).take(singles).collect();
    (ps, ss)
}

/// Append a helper; its index.
fn push(v: &mut Vec<Planned>, op: Op, args: &[u32]) -> usize {
    let mut a = [0u32; 4];
    a[..args.len()].copy_from_slice(args);
    v.push(Planned::Helper(op, a));
    v.len() - 1
}

/// Plan the program of a digest job: (instructions, regcount, loop head, word, branch).
fn plan(target: &Target, req: &DigestRequest, inst: &crate::isa::Inst) -> (Vec<Planned>, u32, usize, usize, usize) {
    let mut named: Vec<u8> = inst.named_regs().collect();
    named.retain(|&r| r != RZ);
    // at most 4 named registers: 2 pairs and 11 singles always fit below R32
    let (ps, ss) = allocate(&named, 2, 11);
    let (p, acc) = (ps[0], ps[1]);
    let [k, ctr, wa, wb, wd, t0, t1, h, tid, ctaid, wc] = [ss[0], ss[1], ss[2], ss[3], ss[4], ss[5], ss[6], ss[7], ss[8], ss[9], ss[10]];
    let rz = RZ as u32;
    let mut v: Vec<Planned> = Vec::with_capacity(64);
    // prologue: ids, P0..P6, k, counter, d, accumulator
    push(&mut v, Op::S2rTidX, &[tid]);
    push(&mut v, Op::S2rCtaidX, &[ctaid]);
    push(&mut v, Op::Iadd3Imm, &[t0, rz, PRED_ALL as u32]);
    push(&mut v, Op::R2p, &[t0, PRED_ALL as u32]);
    if req.chunk_bits < 32 {
        push(&mut v, Op::ImadImm, &[k, ctaid, 1u32 << req.chunk_bits, tid]);
    } else {
        // one chunk of 2^32: block 0 only
        push(&mut v, Op::Mov, &[k, tid]);
    }
    let base = (req.first_chunk << req.chunk_bits) as u32;
    if base != 0 {
        push(&mut v, Op::Iadd3Imm, &[k, k, base]);
    }
    push(&mut v, Op::Iadd3Imm, &[ctr, rz, ((1u64 << req.chunk_bits) / THREADS as u64) as u32]);
    push(&mut v, Op::Iadd3Imm, &[wd, rz, D_FILL]);
    // operand 3, fixed for the sweep: in a register (moved in the loop, in the batch kernel's
    // order) or a uniform register; a c[0x3][] word is in the bank, immediates in the word
    match inst.c {
        Some(Operand2::Reg(r)) if r != RZ => {
            push(&mut v, Op::Iadd3Imm, &[wc, rz, req.c]);
        }
        Some(Operand2::Ur(u)) if u != crate::isa::URZ => {
            push(&mut v, Op::Iadd3Imm, &[wc, rz, req.c]);
            push(&mut v, Op::R2ur, &[u as u32, wc]);
        }
        _ => {}
    }
    push(&mut v, Op::Mov, &[acc, rz]);
    push(&mut v, Op::Mov, &[acc + 1, rz]);
    // the loop
    let head = push(&mut v, Op::PrmtImm, &[wa, k, 0x3232, rz]);
    push(&mut v, Op::PrmtImm, &[wb, k, 0x1010, rz]);
    for m in super::load_moves(inst, wd, wc, wb, wa).into_iter().flatten() {
        push(&mut v, Op::Mov, &m);
    }
    push(&mut v, Op::Nop, &[]);
    v.push(Planned::Iut(0));
    let iut = v.len() - 1;
    push(&mut v, Op::Nop, &[]);
    // z = k:r; three xor-shift rounds, two multiplies
    let (mut zh, mut zl) = (k, inst.dst as u32);
    for (shift, mul) in [(30u32, Some(0xbf58_476d_1ce4_e5b9u64)), (27, Some(0x94d0_49bb_1331_11eb)), (31, None)] {
        push(&mut v, Op::ShfRU32HiImm, &[t1, rz, shift, zh]);
        push(&mut v, Op::ShfRU64Imm, &[t0, zl, shift, zh]);
        push(&mut v, Op::LopXor, &[t1, zh, t1]);
        push(&mut v, Op::LopXor, &[t0, zl, t0]);
        (zh, zl) = (t1, t0);
        if let Some(m) = mul {
            let (lo, hi) = (m as u32, (m >> 32) as u32);
            push(&mut v, Op::ImadImm, &[h, zh, lo, rz]);
            push(&mut v, Op::ImadImm, &[h, zl, hi, h]);
            push(&mut v, Op::ImadWideU32Imm, &[p, zl, lo, rz]);
            push(&mut v, Op::ImadIadd, &[p + 1, p + 1, h]);
            (zh, zl) = (p + 1, p);
        }
    }
    push(&mut v, Op::ImadWideU32Imm, &[acc, zl, 1, acc]);
    push(&mut v, Op::ImadIadd, &[acc + 1, zh, acc + 1]);
    push(&mut v, Op::Iadd3Imm, &[k, k, THREADS]);
    push(&mut v, Op::Iadd3Imm, &[ctr, ctr, u32::MAX]);
    let lp: u8 = if inst.pred.index == 0 { 1 } else { 0 };
    let lp32 = lp as u32;
    debug_assert!(lp != inst.pred.index && lp != PT);
    push(&mut v, Op::IsetpNeU32, &[lp32, ctr, rz]);
    let branch = v.len();
    // target = next instruction + 4·offset bytes
    let offset = (head as i64 - (branch as i64 + 1)) * 4;
    push(&mut v, Op::BraBack, &[lp32, offset as i32 as u32]);
    // store the partial at output + 8 (256 c + t)
    push(&mut v, Op::ImadImm, &[t0, ctaid, THREADS, tid]);
    // the output buffer (the second parameter) and the memory descriptor, where `target` has them
    push(&mut v, Op::Ldc64, &[p, target.param_base + 8, 0]);
    push(&mut v, Op::Uldc64, &[4, target.descriptor_offset, 0]);
    push(&mut v, Op::ImadWideU32Imm, &[p, t0, 8, p]);
    push(&mut v, Op::StgE64, &[p, acc, 4]);
    push(&mut v, Op::Exit, &[]);
    push(&mut v, Op::BraSelf, &[]);
    while !v.len().is_multiple_of(8) {
        push(&mut v, Op::Nop, &[]);
    }
    let maxreg = named.iter().map(|&r| r as u32).chain(ss.iter().copied()).chain([p + 1, acc + 1]).max().unwrap_or(0);
    (v, super::declared_regcount(maxreg + 1), head, iut, branch)
}

/// Build the SM90 digest job for `req`: plan, encode, patch the committed template.
pub fn build(req: &DigestRequest) -> Result<DigestBuilt, DigestError> {
    build_for(Target::DEFAULT, req)
}

/// [`build`] for `target`: its helper encodings (branches included), parameter offsets and
/// template.
pub fn build_for(target: &'static Target, req: &DigestRequest) -> Result<DigestBuilt, DigestError> {
    check_request(req)?;
    let inst = check_form(req.word)?;
    let (insts, regcount, loop_head, iut, branch) = plan(target, req, &inst);
    let mut program = Vec::with_capacity(insts.len());
    let mut texts = Vec::with_capacity(insts.len());
    for p in &insts {
        match p {
            Planned::Iut(_) => {
                program.push(req.word);
                texts.push(crate::isa::render(&inst));
            }
            Planned::Helper(op, a) => {
                program.push(helpers::encode_for(target, *op, a, Sched::safe(*op)).map_err(PatchError::from)?);
                let t = helpers::render_for(target, *op, a);
                // nvdisasm prints the target as a label or address: compared up to `BRA`
                texts.push(match t.find("BRA") {
                    Some(i) => t[..i + 3].to_string(),
                    None => t,
                });
            }
        }
    }
    let mut bank3 = vec![0u8; super::BANK3_BYTES];
    if let Some(Operand2::Const { offset, .. }) = inst.c {
        // runnable: bank 3, 0 <= offset < 64 KiB
        let o = offset as usize;
        bank3[o..o + 4].copy_from_slice(&req.c.to_le_bytes());
    }
    let cubin = patch_cubin_for(target, super::template_for(target), &program, regcount, &bank3)?;
    Ok(DigestBuilt {
        job: LaunchJob {
            cubin,
            kernel_name: KERNEL_NAME.to_string(),
            grid: [req.chunks, 1, 1],
            block: [THREADS, 1, 1],
            shared_bytes: 0,
            input: req.encode(),
            output_bytes: req.output_bytes(),
        },
        program,
        texts,
        regcount,
        loop_head,
        iut,
        branch,
    })
}
