//! The test kernel: one program that runs a batch of encodings of the family (HMUL2, HADD2,
//! HFMA2, HFMA2.MMA, mixed), each byte for byte as
//! generated, written into the committed template cubin (`kernels/`).
//!
//! Design. One block of `T` threads (T = inputs per case: a multiple of 32, at most 256;
//! 256 recommended), grid 1. Thread `t` runs every case `i` in turn, on input record
//! `i*T + t` (16 bytes: a, b, d, pred) of the input buffer (1st parameter) and writes
//! output record `i*T + t` of the output buffer (2nd parameter): the destination, then the
//! predicate file P0..P6 after the word (8 bytes). For each case:
//!
//! 1. `S2R`, `LDC.64 c[0][0x210]`, `ULDC.64 UR4, c[0][0x208]` (memory descriptor),
//!    `IADD3`/`IMAD.WIDE.U32` to address the record, `LDG.E.128` into a staging quad
//!    `Rq..Rq+3` (the lowest 4-aligned quad not named by the case's encoding). A
//!    three-source case (HFMA2, HFMA2.MMA) first loads its operand 3 the same way with
//!    `LDG.E` from the c plane (one u32 per thread, after all records) into `Re`, the lowest
//!    register neither named nor in the quad;
//! 2. `R2P PR, Rq+3, 0x7f` (P0..P6); `R2UR URn, Rq+1` (or `Re` when the uniform register is
//!    operand 3); `MOV dst, Rq+2`; `MOV c, Re`; `MOV b, Rq+1` (register forms); `MOV a, Rq`
//!    (later moves win when registers coincide: see [`effective_inputs`]);
//! 3. `NOP` waiting on every scoreboard, the case's instruction as generated, `NOP` likewise;
//! 4. `P2R Rq+3, PR, RZ, 0x7f` (the predicates the word left, whether or not it writes
//!    any: a word that clobbers them is seen), the output address in `Rq..Rq+1`,
//!    `MOV Rq+2, dst` and `STG.E.64 [..], Rq+2` (destination and predicates together).
//!
//! Every helper stalls 15 cycles and waits on all six scoreboards; variable-latency helpers
//! set scoreboard 0, stores scoreboard 1. So the HMUL2's own control bits (stall, yield,
//! barriers, wait mask, reuse) cannot change what it reads or what is stored.
//!
//! Operand 2: register form from a register like operand 1; immediates from the encoding;
//! `c[0x3][offset]` (0 <= offset < 0x10000) from the template's 64 KiB constant bank 3,
//! whose initial bytes are written into the cubin (one word per offset for the whole launch:
//! cases reading the same offset share a value, the first case's); `URn` from `R2UR` of b
//! (one value per warp: lane 0's). `cx[URn][offset]` is a bindless constant-bank read whose
//! 64-bit handle lives in URn:URn+1 (Mesa NAK sets bit 91 "bindless" for this form; NVK's
//! Hopper handle, `nvk_bindless_cbuf_2`, is `base_addr >> 6` in bits 0..50 and `size >> 4`
//! in bits 51..63). The kernel builds that handle per warp, pointing into the input buffer:
//! the record's b slot holds `base / 64` (relative to the buffer), `IMAD.WIDE.U32` adds the
//! buffer address, `SHF` shifts, `IADD3` adds the size, `R2UR` x2 sets URn, URn+1; the word
//! at `base + offset` holds the warp's b. Unverified on hardware: run cx cases in their own
//! batch first. On an H200 (2026-12-04) a one-case kernel ran and agreed with the reference;
//! batches of 256 cases made no progress (docs/hardware/2026-12-04-h200/README.md).
//! Needs the input buffer 64-byte aligned (cuMemAlloc: 256).

pub mod digest;
pub mod elf;
pub mod emu;
pub mod helpers;
pub mod road;
pub mod scaffold;

use crate::inputs::Inputs;
use crate::isa::{decode, format_hex, render, Form, Operand2, RZ, URZ};
use crate::spec::FieldOverflow;
use crate::target::Target;
use helpers::Op;
use serde::Serialize;

pub use elf::{BANK3_BYTES, KERNEL_NAME};

/// The committed template cubin (`kernels/build.sh` rebuilds it): [`Target::template`].
pub const TEMPLATE: &[u8] = Target::SM90.template;
/// The same PTX from ptxas 12.9.86 (`kernels/build.sh`): the same code, but no
/// `EIATTR_MERCURY_ISA_VERSION`, which ptxas 13.0 writes into sm_90 cubins and by which the
/// driver may re-finalize code (rewriting what was patched). `run --template 12.9`.
/// ([`Target::template_ptxas_12_9`]; a target without one has none, and patching an empty
/// template fails as not an ELF file).
pub const TEMPLATE_PTXAS_12_9: &[u8] = match Target::SM90.template_ptxas_12_9 {
    Some(t) => t,
    None => &[],
};

/// The template cubin the patcher writes into, one per process ([`choose_template`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Template {
    /// [`TEMPLATE`], from the pinned ptxas 13.0.88.
    #[default]
    Ptxas13_0,
    /// [`TEMPLATE_PTXAS_12_9`].
    Ptxas12_9,
}

impl Template {
    /// SM90's template of this ptxas.
    pub fn bytes(self) -> &'static [u8] {
        self.bytes_for(Target::DEFAULT)
    }
    /// `target`'s template of this ptxas (empty where the target has none: patching it
    /// fails as not an ELF file).
    pub fn bytes_for(self, target: &Target) -> &'static [u8] {
        match self {
            Template::Ptxas13_0 => target.template,
            Template::Ptxas12_9 => target.template_ptxas_12_9.unwrap_or_default(),
        }
    }
    /// The ptxas version that made it: `13.0` or `12.9`.
    pub fn name(self) -> &'static str {
        match self {
            Template::Ptxas13_0 => "13.0",
            Template::Ptxas12_9 => "12.9",
        }
    }
    pub fn parse(s: &str) -> Result<Template, String> {
        match s {
            "13.0" => Ok(Template::Ptxas13_0),
            "12.9" => Ok(Template::Ptxas12_9),
            _ => Err(format!("{s:?}: want 13.0 or 12.9 (the ptxas that built the template)")),
        }
    }
}

static CHOSEN: std::sync::OnceLock<Template> = std::sync::OnceLock::new();

/// Make `t` the template of every kernel this process builds from now on; once a process
/// (Err with the template already chosen when it differs).
pub fn choose_template(t: Template) -> Result<(), Template> {
    let got = *CHOSEN.get_or_init(|| t);
    if got == t {
        Ok(())
    } else {
        Err(got)
    }
}

static NOP_PADDING: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Grow every batch kernel this process builds by `nops` NOPs after its last instruction
/// (never executed; a multiple of 8): `.text` grown by NOPs only, to tell a kernel's size
/// from what it runs (the device session's ladder). Once a process; Err with the padding
/// already chosen when it differs or `nops` is no multiple of 8.
pub fn choose_nop_padding(nops: usize) -> Result<(), String> {
    if !nops.is_multiple_of(8) {
        return Err(format!("{nops} NOPs: want a multiple of 8 (128 bytes)"));
    }
    let got = *NOP_PADDING.get_or_init(|| nops);
    if got == nops {
        Ok(())
    } else {
        Err(format!("this process already pads kernels with {got} NOPs"))
    }
}

/// The template's bytes: [`choose_template`]'s, [`TEMPLATE`] when none was chosen.
pub fn template() -> &'static [u8] {
    template_for(Target::DEFAULT)
}

/// `target`'s template of the ptxas [`choose_template`] chose (13.0 when none was).
pub fn template_for(target: &Target) -> &'static [u8] {
    CHOSEN.get().copied().unwrap_or_default().bytes_for(target)
}

/// The template's PTX source.
pub const TEMPLATE_PTX: &str = include_str!("../../../kernels/hmul2_template.ptx");
/// Bytes of one input record: a, b, d, pred as little-endian u32.
pub const INPUT_RECORD: usize = 16;
/// Bytes of one output record: the destination, then the predicate file P0..P6 after the
/// word (`P2R`), as little-endian u32.
pub const OUTPUT_RECORD: usize = 8;
/// Where an output record holds the predicates.
const OUTPUT_PRED: usize = 4;
/// Most threads per case (one block; 255 registers x 256 threads fill the register file).
pub const MAX_THREADS: usize = 256;
/// The buffers' layout, as the manifest states it.
pub const LAYOUT: &str = "grid 1, block threads_per_case; thread t of case i reads input record i*T+t (16 bytes at input_offset + 16 t: a, b, d, pred as little-endian u32; pred bits 0..6 are P0..P6) and writes the destination as a little-endian u32 at output_offset + 8 t, and the predicate file after the instruction (P2R: bits 0..6 are P0..P6) as a little-endian u32 at output_offset + 8 t + 4. cx cases: the record's b holds the bindless base / 64 and warp w's b is the u32 at first_slot + 64 w. c[0x3] cases: b is the constant-bank word (in the cubin). UR cases: b of lane 0 of each warp. Three-source cases (HFMA2) also read operand 3 from the c plane, a u32 per thread at c_input_offset + 4 t (after every record), by its own LDG.E into c_staging; operand 3 as c[0x3], cx[] or UR is read as b is in those forms (a cx base / 64 in the c-plane word).";
/// Registers the hardware keeps above a kernel's own: on Volta and later two registers of
/// each thread's allocation hold its program counter, so a cubin declares the registers its
/// code names plus these two. ptxas 13.0 does so (the committed template names R0..R7 and
/// declares 10; Mesa NAK adds `hw_reserved_gprs() = 2`). Declaring only the registers the
/// code names let the code overwrite them: on an H200 such a kernel ran with one warp and no
/// branch, and faulted with a taken branch (docs/hardware/2026-12-04-h200/README.md).
pub const HW_RESERVED_GPRS: u32 = 2;
/// The most registers a cubin can declare.
pub const MAX_REGCOUNT: u32 = 255;
/// The lowest register a word may not name: with [`MAX_REGCOUNT`] declared, this one and
/// the next are the hardware's (R253, R254; RZ is no register).
pub const FIRST_HARDWARE_REG: u8 = (MAX_REGCOUNT - HW_RESERVED_GPRS) as u8;

/// The register count to declare for code naming registers below `needed`: `needed` plus
/// [`HW_RESERVED_GPRS`], at most [`MAX_REGCOUNT`] ([`runnable`] refuses words naming R253 or
/// R254, which would leave the hardware less than its two).
pub fn declared_regcount(needed: u32) -> u32 {
    (needed + HW_RESERVED_GPRS).min(MAX_REGCOUNT)
}

/// Constant bank the `c[bank][offset]` form must name to be runnable.
pub const DATA_BANK: u8 = 3;

/// One instruction under test and its inputs, one per thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub word: u128,
    pub inputs: Vec<Inputs>,
}

/// Why an encoding cannot run in this kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotRunnable {
    #[error("names R{0}: a kernel declares at most {MAX_REGCOUNT} registers and the top {HW_RESERVED_GPRS} are the hardware's, so code may name R0..R{max}", max = FIRST_HARDWARE_REG - 1)]
    HardwareRegister(u8),
    #[error("not a legal encoding: {0}")]
    Illegal(String),
    #[error("{0}: the reference has no arithmetic for it yet, so the kernel does not run it")]
    Unimplemented(crate::isa::Op),
    #[error("c[{bank:#x}][{}] is outside the harness's constant data (bank 3, offsets 0..=0x7ffc)", crate::isa::hex::SignedHex(*offset as i64))]
    ConstBank { bank: u8, offset: i32 },
    #[error("cx[UR{ureg}][{offset:#x}]: the bindless handle would be UR{ureg}:UR{}, an odd or URZ-including pair the harness cannot set (only even URn, n <= 60)", ureg + 1)]
    BindlessHandlePair { ureg: u8, offset: u32 },
    #[error("{0}")]
    NoScaffold(String),
    #[error("UR{0}: the target's R2UR, which sets the uniform register, cannot name it")]
    UniformRegister(u8),
}

/// Whether `word` can run in the kernel: legal, its arithmetic implemented, and its
/// special source (operand 2, or operand 3 in the `-c` forms) is data the harness fills.
pub fn runnable(word: u128) -> Result<(), NotRunnable> {
    runnable_for(Target::DEFAULT, word)
}

/// [`runnable`] of a word as `target` reads it ([`crate::isa::decode_for`]).
pub fn runnable_for(target: &'static Target, word: u128) -> Result<(), NotRunnable> {
    runnable_inst(target, word).map(|_| ())
}

/// [`runnable_for`], with the decoded word for the caller (one decode, not two).
fn runnable_inst(target: &'static Target, word: u128) -> Result<crate::isa::Inst, NotRunnable> {
    let inst = crate::isa::decode_for(target, word).map_err(|e| NotRunnable::Illegal(e.to_string()))?;
    runnable_fields(&inst)?;
    // a target whose instructions name more uniform registers than its R2UR can set
    for o in std::iter::once(inst.b).chain(inst.c) {
        if let Operand2::Ur(u) = o {
            if u != URZ && helpers::encode_safe_for(target, Op::R2ur, &[u as u32, 0]).is_err() {
                return Err(NotRunnable::UniformRegister(u));
            }
        }
    }
    Ok(inst)
}

/// What [`runnable`] asks of a legal word's fields (instruction, registers, operands), asked
/// of the instruction itself.
pub(crate) fn runnable_fields(inst: &crate::isa::Inst) -> Result<(), NotRunnable> {
    if !crate::reference::IMPLEMENTED.contains(&inst.op) {
        return Err(NotRunnable::Unimplemented(inst.op));
    }
    if let Some(r) = inst.named_regs().find(|&r| (FIRST_HARDWARE_REG..RZ).contains(&r)) {
        return Err(NotRunnable::HardwareRegister(r));
    }
    for o in std::iter::once(inst.b).chain(inst.c) {
        match o {
            Operand2::Const { bank, offset } if bank != DATA_BANK || !(0..BANK3_BYTES as i32).contains(&offset) => {
                return Err(NotRunnable::ConstBank { bank, offset })
            }
            Operand2::ConstUr { ureg, offset } if ureg % 2 != 0 || ureg > 60 => return Err(NotRunnable::BindlessHandlePair { ureg, offset }),
            _ => {}
        }
    }
    Ok(())
}

/// The nearest word the kernel can run: a legal word whose special source names data the
/// harness cannot fill gets bank 3 (offset folded into 0..=0x7ffc) or an even handle pair
/// (URn, n <= 60), and a register above R252 (the hardware's, [`NotRunnable::HardwareRegister`];
/// the generator draws R254 often, as an edge value: three random words in ten name it)
/// becomes the highest register the word does not name otherwise, equal ones alike, so
/// which operands coincide is kept; every other field, modifiers included, is kept.
/// Runnable and illegal words come back unchanged. Random `c[]` words name bank 3 one time
/// in 32, so without this a random run would hardly ever put the constant form on the GPU.
pub fn place(word: u128) -> u128 {
    place_for(Target::DEFAULT, word)
}

/// [`place`] of a word as `target` reads and encodes it.
pub fn place_for(target: &'static Target, word: u128) -> u128 {
    if runnable_for(target, word).is_ok() {
        return word;
    }
    let Ok(mut inst) = crate::isa::decode_for(target, word) else { return word };
    fn fix(o: Operand2) -> Operand2 {
        match o {
            Operand2::Const { offset, .. } => Operand2::Const { bank: DATA_BANK, offset: offset & 0x7ffc },
            Operand2::ConstUr { ureg, offset } => Operand2::ConstUr { ureg: (ureg & !1).min(60), offset },
            // one R2UR can set on every target (UR0..UR62; URZ stays)
            Operand2::Ur(u) if u != URZ && u > 62 => Operand2::Ur(u % 63),
            o => o,
        }
    }
    inst.b = fix(inst.b);
    inst.c = inst.c.map(fix);
    let named: Vec<u8> = inst.named_regs().collect();
    let mut free = (0..FIRST_HARDWARE_REG).rev().filter(|r| !named.contains(r));
    // from the top down (R254, then R253): each distinct one gets its own register
    let moves: Vec<(u8, u8)> = (FIRST_HARDWARE_REG..RZ).rev().filter(|r| named.contains(r)).filter_map(|r| free.next().map(|to| (r, to))).collect();
    let mv = |r: u8| moves.iter().find(|(from, _)| *from == r).map_or(r, |&(_, to)| to);
    inst.dst = mv(inst.dst);
    inst.a = mv(inst.a);
    for o in std::iter::once(&mut inst.b).chain(inst.c.as_mut()) {
        if let Operand2::Reg(r) = o {
            *r = mv(*r);
        }
    }
    match crate::isa::encode_for(target, &inst) {
        Ok(w) if runnable_for(target, w).is_ok() => w,
        _ => word,
    }
}

/// A batch the patcher cannot build, or a cubin it cannot patch.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("not an ELF file")]
    NotElf,
    #[error("not a 64-bit little-endian ELF file")]
    NotElf64Le,
    #[error("ELF machine {machine}, not EM_CUDA (190)")]
    NotCuda { machine: u16 },
    #[error("cubin is for sm_{sm} (e_flags {flags:#x}), not {want}")]
    WrongArch { sm: u32, flags: u32, want: &'static str },
    #[error("cubin has no section {0}")]
    MissingSection(String),
    #[error("cubin has no symbol {0}")]
    MissingSymbol(String),
    #[error("{section} has no attribute {attr:#x}")]
    MissingAttribute { section: String, attr: u8 },
    #[error("malformed cubin: {0}")]
    Malformed(String),
    #[error("empty batch")]
    EmptyBatch,
    #[error("case {case} has {got} inputs; the batch's first case has {expected} (a multiple of 32, at most 256)")]
    InputCount { case: usize, got: usize, expected: usize },
    #[error("case {case} ({word}) is not runnable: {reason}")]
    NotRunnable { case: usize, word: String, reason: NotRunnable },
    #[error("encoding a helper: {0}")]
    Encode(#[from] FieldOverflow),
    #[error("output buffer holds {got} bytes; the kernel writes {expected}")]
    OutputSize { got: usize, expected: usize },
}

/// Where a case's operand 2 (or operand 3) comes from. For operand 3, "the record's b"
/// below reads "the case's c-plane word".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BSource {
    /// Register loaded from the record's b (255 = RZ: zero, nothing loaded).
    Register { reg: u8 },
    /// The encoding's immediates; the record's b is not read.
    Immediate,
    /// Constant bank word, written into the cubin (shared by every thread and case that reads it).
    ConstBank { bank: u8, offset: u32 },
    /// Uniform register set by R2UR from the record's b (63 = URZ: zero); one value per warp.
    Uniform { ureg: u8 },
    /// Bindless constant bank: URn:URn+1 hold a handle to `first_slot - offset`; warp w reads
    /// b from input-buffer byte `first_slot + 64 w`. The record's b slot holds base / 64.
    Bindless { ureg: u8, offset: u32, first_slot: usize },
}

/// Where one case's inputs and output live.
#[derive(Clone, Debug, Serialize)]
pub struct CaseEntry {
    pub index: usize,
    /// As `decode` takes it: 0x + 32 hex digits.
    pub encoding: String,
    pub text: String,
    pub form: String,
    /// Byte offset of the case's first input record (thread t at + 16 t).
    pub input_offset: usize,
    /// Registers that receive a, d (255 = RZ: not loaded); P0..P6 receive pred.
    pub a_reg: u8,
    pub b: BSource,
    /// Operand 3 of a three-source instruction, as `b`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c: Option<BSource>,
    /// Byte offset of the case's first c-plane word (thread t at + 4 t): operand 3's value,
    /// or for `cx[]` the bindless base / 64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c_input_offset: Option<usize>,
    /// The register operand 3's word is loaded into (`LDG.E`) before it moves or is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c_staging: Option<u8>,
    pub d_reg: u8,
    /// Staging registers Rq..Rq+3 used to load the record and to address the output.
    pub staging: u8,
    /// Byte offset of the HMUL2 in `.text`.
    pub code_offset: usize,
    /// Byte offset of the case's first output record (thread t at + 8 t: the destination,
    /// then the predicates).
    pub output_offset: usize,
}

/// The layout of a built batch, for people and for the runner's reports.
#[derive(Clone, Debug, Serialize)]
pub struct Manifest {
    pub kernel: String,
    /// The architecture the kernel is for, in nvdisasm's spelling (`SM86`); absent for SM90,
    /// so that an SM90 manifest is byte for byte what it was.
    #[serde(skip_serializing_if = "is_sm90")]
    pub arch: &'static str,
    /// How to read the buffers, in words.
    pub layout: String,
    pub threads_per_case: usize,
    pub input_record_bytes: usize,
    pub output_record_bytes: usize,
    pub regcount: u32,
    pub instructions: usize,
    pub cases: Vec<CaseEntry>,
}

fn is_sm90(arch: &&'static str) -> bool {
    *arch == Target::DEFAULT.nvdisasm
}

/// One kernel launch, as plain bytes and numbers: all the runner needs from the patcher.
/// The kernel takes exactly two u64 device pointers: the input buffer and the output buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchJob {
    pub cubin: Vec<u8>,
    pub kernel_name: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    pub input: Vec<u8>,
    pub output_bytes: usize,
}

/// A patched cubin and everything needed to launch it and read its results.
#[derive(Clone, Debug)]
pub struct Built {
    /// The cubin, its launch geometry, the input buffer image (1st parameter) and the output
    /// buffer size (2nd parameter).
    pub job: LaunchJob,
    pub manifest: Manifest,
    /// The program written into `.text`.
    pub program: Vec<u128>,
    /// Constant bank 3 as patched into the cubin (what `c[0x3][..]` operands read), kept
    /// for [`Built::effective_inputs`].
    pub bank3: Vec<u8>,
    /// The architecture the cubin is for, which reads the words under test.
    pub target: &'static Target,
}

impl Built {
    /// The inputs each case of `cases`, the batch this was built from, really sees
    /// ([`effective_inputs`]): `[case][thread]`. Worked out when asked (after the run, where
    /// the results are checked), not by [`build`]: 20 bytes a thread that the launch does
    /// not need. A case that is not runnable (only in another batch than the built one) is
    /// an error.
    pub fn effective_inputs(&self, cases: &[Case]) -> Result<Vec<Vec<Inputs>>, PatchError> {
        effective_all(self.target, cases, &self.bank3)
    }

    /// Destination values after the run, `[case][thread]`, from the output buffer.
    pub fn results(&self, output: &[u8]) -> Result<Vec<Vec<u32>>, PatchError> {
        self.words_at(output, 0)
    }

    /// The predicate file after the word (bit i = Pi, i < 7), `[case][thread]`, from the
    /// output buffer.
    pub fn preds(&self, output: &[u8]) -> Result<Vec<Vec<u8>>, PatchError> {
        let words = self.words_at(output, OUTPUT_PRED)?;
        // P2R's mask names P0..P6 only: a bit above them is no predicate the kernel read back
        if let Some(w) = words.iter().flatten().find(|&&w| w & !PREDICATES != 0) {
            return Err(PatchError::Malformed(format!("a predicate word {w:#x} sets bits above P6")));
        }
        Ok(words.into_iter().map(|c| c.into_iter().map(|w| w as u8).collect()).collect())
    }

    /// The u32 at byte `at` of every output record, `[case][thread]`.
    fn words_at(&self, output: &[u8], at: usize) -> Result<Vec<Vec<u32>>, PatchError> {
        if output.len() != self.job.output_bytes {
            return Err(PatchError::OutputSize { got: output.len(), expected: self.job.output_bytes });
        }
        let t = self.manifest.threads_per_case;
        Ok((0..self.manifest.cases.len())
            .map(|i| {
                (0..t)
                    .map(|k| {
                        let at = (i * t + k) * OUTPUT_RECORD + at;
                        u32::from_le_bytes([output[at], output[at + 1], output[at + 2], output[at + 3]])
                    })
                    .collect()
            })
            .collect())
    }
}

/// What a case's thread really reads, given the kernel's loading order (d, then c, then b,
/// then a, later moves winning): a register named twice reads the value of the last move
/// into it (a == b register: b = a; dst == c: d = c; ...); RZ reads 0. A uniform-register
/// source reads lane 0's value in each warp (URZ: 0); `c[3][off]` reads the word `bank3`
/// holds; `cx[]` reads the warp's lane 0 value. Immediate sources keep their value as given
/// (not read). `c` is 0 for a two-source word. Used by [`build`] and by the reference side
/// to compute expected values.
pub fn effective_inputs(word: u128, inputs: &[Inputs], bank3: &[u8]) -> Result<Vec<Inputs>, NotRunnable> {
    effective_inputs_for(Target::DEFAULT, word, inputs, bank3)
}

/// [`effective_inputs`] of a word as `target` reads it.
pub fn effective_inputs_for(target: &'static Target, word: u128, inputs: &[Inputs], bank3: &[u8]) -> Result<Vec<Inputs>, NotRunnable> {
    effective_inputs_with(target, word, inputs, &|o| u32::from_le_bytes([bank3[o], bank3[o + 1], bank3[o + 2], bank3[o + 3]]))
}

/// [`effective_inputs`] with constant bank 3's word at each byte offset from `bank_word`.
pub(crate) fn effective_inputs_with(
    target: &'static Target,
    word: u128,
    inputs: &[Inputs],
    bank_word: &dyn Fn(usize) -> u32,
) -> Result<Vec<Inputs>, NotRunnable> {
    let inst = runnable_inst(target, word)?;
    let reg_of = |o: Option<Operand2>| match o {
        Some(Operand2::Reg(r)) => Some(r),
        _ => None,
    };
    let (rb, rc) = (reg_of(Some(inst.b)), reg_of(inst.c));
    const A: Pick = Pick { a: !0, ..Pick::ZERO };
    const B: Pick = Pick { b: !0, ..Pick::ZERO };
    const C: Pick = Pick { c: !0, ..Pick::ZERO };
    const D: Pick = Pick { d: !0, ..Pick::ZERO };
    // a register's value after the loads: the last move into it wins
    let reg = |r: u8| {
        if r == RZ {
            Pick::ZERO
        } else if r == inst.a {
            A
        } else if Some(r) == rb {
            B
        } else if Some(r) == rc {
            C
        } else {
            D
        }
    };
    // a source operand: `own` is what its immediates keep, `warp` its warp-uniform value
    let source = |o: Operand2, own: Pick, warp: Pick| match o {
        Operand2::Reg(r) => reg(r),
        Operand2::Imm { .. } => own,
        Operand2::Ur(u) if u == URZ => Pick::ZERO,
        Operand2::Ur(_) | Operand2::ConstUr { .. } => warp,
        Operand2::Const { offset, .. } => Pick { konst: bank_word(offset as usize), ..Pick::ZERO },
    };
    let (pa, pd) = (reg(inst.a), reg(inst.dst));
    let pb = source(inst.b, B, Pick { warp_b: !0, ..Pick::ZERO });
    let pc = inst.c.map_or(Pick::ZERO, |o| source(o, C, Pick { warp_c: !0, ..Pick::ZERO }));
    let mut out = inputs.to_vec();
    if (pa, pb, pd) == (A, B, D) && (inst.c.is_none() || pc == C) {
        // distinct registers, none RZ: every value as given
        let keep_c = if inst.c.is_some() { !0 } else { 0 };
        out.iter_mut().for_each(|x| {
            x.pred &= PREDICATES as u8;
            x.c &= keep_c;
        });
        return Ok(out);
    }
    // the same selects for every input, warp by warp, without a branch
    for warp in out.chunks_mut(32) {
        let (warp_b, warp_c) = (warp[0].b, warp[0].c);
        for x in warp {
            let of = |p: Pick| p.of(x, warp_b, warp_c);
            *x = Inputs { a: of(pa), b: of(pb), d: of(pd), pred: x.pred & PREDICATES as u8, c: of(pc) };
        }
    }
    Ok(out)
}

/// Where one register's value comes from after the loads: masks (all ones or zero) over
/// the given a, b, c and d and the warp's first b and c, or a constant.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Pick {
    a: u32,
    b: u32,
    c: u32,
    d: u32,
    warp_b: u32,
    warp_c: u32,
    konst: u32,
}

impl Pick {
    const ZERO: Pick = Pick { a: 0, b: 0, c: 0, d: 0, warp_b: 0, warp_c: 0, konst: 0 };

    #[inline(always)]
    fn of(&self, x: &Inputs, warp_b: u32, warp_c: u32) -> u32 {
        (x.a & self.a) | (x.b & self.b) | (x.c & self.c) | (x.d & self.d) | (warp_b & self.warp_b) | (warp_c & self.warp_c) | self.konst
    }
}

/// The `MOV dst, src` that load d, c, b and a (held in registers `d`, `c`, `b`, `a`) into
/// the registers `inst` names, in this order, so a later move into a shared register wins,
/// as [`effective_inputs`] assumes. RZ is never written; b and c only where they are
/// registers. Both programs (this batch kernel and `digest`) place operands with it.
pub(crate) fn load_moves(inst: &crate::isa::Inst, d: u32, c: u32, b: u32, a: u32) -> [Option<[u32; 2]>; 4] {
    let to = |r: u8, src: u32| (r != RZ).then_some([r as u32, src]);
    let mov = |o: Option<Operand2>, src: u32| match o {
        Some(Operand2::Reg(r)) => to(r, src),
        _ => None,
    };
    [to(inst.dst, d), mov(inst.c, c), mov(Some(inst.b), b), to(inst.a, a)]
}

/// One instruction of the program, before encoding.
#[derive(Clone, Debug)]
pub enum Planned {
    /// An op and its field values (in the JSON's field order; unused ones 0).
    Helper(Op, [u32; 4]),
    /// The case with this index.
    Iut(usize),
}

/// The program for `cases` (checked), its bank 3 image and the register count it needs.
pub struct Plan {
    /// The architecture the program is planned for: its helper encodings, parameter offsets
    /// and template.
    pub target: &'static Target,
    pub insts: Vec<Planned>,
    pub bank3: Vec<u8>,
    pub regcount: u32,
    pub entries: Vec<CaseEntry>,
    pub threads: usize,
    /// The input buffer image.
    pub input: Vec<u8>,
}

/// Which source holds a case's special (non-register) operand, and where its data is staged.
#[derive(Clone, Copy)]
enum Special {
    /// Operand 2: the record's b slot, staged in Rq+1.
    B,
    /// Operand 3: the case's c-plane word, staged in the extra register.
    C,
}

impl Special {
    fn value(self, x: &Inputs) -> u32 {
        match self {
            Special::B => x.b,
            Special::C => x.c,
        }
    }
}

/// The input record of `x`: a, b, d, pred as little-endian u32.
#[inline(always)]
fn record(x: &Inputs) -> [u8; INPUT_RECORD] {
    (x.a as u128 | (x.b as u128) << 32 | (x.d as u128) << 64 | (x.pred as u128) << 96).to_le_bytes()
}

/// Where a record holds b (see [`record`]).
const RECORD_B: std::ops::Range<usize> = 4..8;

/// The predicates an input sets (`R2P PR, Rq+3, 0x7f`): P0..P6; PT is always true.
const PREDICATES: u32 = 0x7f;

/// Append the records of `inputs` to `image` (appended whole, not zero-filled first, and
/// without a capacity check per record).
fn push_records(image: &mut Vec<u8>, inputs: &[Inputs]) {
    let n = inputs.len() * INPUT_RECORD;
    image.reserve(n);
    fill_records(&mut image.spare_capacity_mut()[..n], inputs);
    let len = image.len() + n;
    // SAFETY: the n bytes past the old length were written by fill_records
    unsafe { image.set_len(len) };
}

/// Write the records of `inputs` into `dst` (`inputs.len()` records long).
fn fill_records(dst: &mut [std::mem::MaybeUninit<u8>], inputs: &[Inputs]) {
    for (rec, x) in dst.chunks_exact_mut(INPUT_RECORD).zip(inputs) {
        for (d, b) in rec.iter_mut().zip(record(x)) {
            d.write(b);
        }
    }
}

/// Write the records of every case of `cases` into `dst`, in order (exactly their length).
fn fill_cases(mut dst: &mut [std::mem::MaybeUninit<u8>], cases: &[Case]) {
    for c in cases {
        let (now, rest) = dst.split_at_mut(c.inputs.len() * INPUT_RECORD);
        fill_records(now, &c.inputs);
        dst = rest;
    }
}

/// One case's inputs as the planner reads them: as values, or as the records of its input
/// image already made (and operand 3's values).
#[derive(Clone, Copy)]
pub enum CaseInputs<'a> {
    Values(&'a [Inputs]),
    /// [`INPUT_RECORD`] bytes a thread, and for a three-source case each thread's c (else empty)
    Records {
        records: &'a [u8],
        c: &'a [u32],
    },
}

impl CaseInputs<'_> {
    /// The value `which` names of thread `k`.
    fn value(&self, which: Special, k: usize) -> u32 {
        match (self, which) {
            (CaseInputs::Values(v), _) => which.value(&v[k]),
            (CaseInputs::Records { records, .. }, Special::B) => {
                let mut b = [0; 4];
                b.copy_from_slice(&records[k * INPUT_RECORD..][RECORD_B]);
                u32::from_le_bytes(b)
            }
            (CaseInputs::Records { c, .. }, Special::C) => c[k],
        }
    }
    /// Append the threads' records to `image`.
    fn push_records(&self, image: &mut Vec<u8>) {
        match self {
            CaseInputs::Values(v) => push_records(image, v),
            CaseInputs::Records { records, .. } => image.extend_from_slice(records),
        }
    }
    /// Append the threads' c, a little-endian u32 each, to `plane`.
    fn push_plane(&self, plane: &mut Vec<u8>) {
        match self {
            CaseInputs::Values(v) => plane.extend(v.iter().flat_map(|x| x.c.to_le_bytes())),
            CaseInputs::Records { c, .. } => plane.extend(c.iter().flat_map(|x| x.to_le_bytes())),
        }
    }
}

/// A batch as [`plan_source`] reads it: each case's encoding and, once and in order, its inputs.
pub trait CaseSource {
    /// Cases in the batch.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Case `i`'s encoding.
    fn word(&self, i: usize) -> u128;
    /// How many inputs case `i` has (before they are asked for).
    fn input_count(&self, i: usize) -> usize;
    /// Case `i`'s inputs. The planner asks for each case once, in order 0, 1, 2, ...
    fn inputs(&mut self, i: usize) -> CaseInputs<'_>;
}

/// A batch held as [`Case`]s.
pub struct Cases<'a>(pub &'a [Case]);

impl CaseSource for Cases<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn word(&self, i: usize) -> u128 {
        self.0[i].word
    }
    fn input_count(&self, i: usize) -> usize {
        self.0[i].inputs.len()
    }
    fn inputs(&mut self, i: usize) -> CaseInputs<'_> {
        CaseInputs::Values(&self.0[i].inputs)
    }
}

/// A batch of `words` with [`random_inputs`] drawn from one generator, as
/// `words.iter().map(|&w| Case { word: w, inputs: random_inputs(w, threads, &mut rng) })`
/// would draw them, without holding the whole batch's inputs: drawn on another thread,
/// straight into input records ([`random_records_into`]), while the planner works on the
/// cases before them. At most [`DrawnAhead::AHEAD`]
/// groups of [`DrawnAhead::GROUP`] cases wait, so memory stays flat; groups the planner is
/// done with go back to be filled again.
pub struct DrawnAhead<'a> {
    words: &'a [u128],
    threads: usize,
    next: usize,
    /// the group holding case `first`..
    group: Drawn,
    first: usize,
    groups: std::sync::mpsc::Receiver<Drawn>,
    back: std::sync::mpsc::Sender<Drawn>,
}

/// A group of cases' inputs: their records, and the c values of the three-source ones
/// (case k of the group's from `c_at[k]` to `c_at[k + 1]`).
#[derive(Default)]
struct Drawn {
    records: Vec<u8>,
    c: Vec<u32>,
    c_at: Vec<usize>,
}

impl<'a> DrawnAhead<'a> {
    /// Cases per group handed over at once.
    pub const GROUP: usize = 16;
    /// Groups drawn and waiting, at most.
    pub const AHEAD: usize = 8;

    /// Start drawing on a thread of `scope`: the cases of `words`, `threads` inputs each from
    /// `rng`.
    pub fn start<'scope>(scope: &'scope std::thread::Scope<'scope, 'a>, words: &'a [u128], threads: usize, rng: crate::rng::Rng) -> DrawnAhead<'a> {
        Self::start_for(scope, Target::DEFAULT, words, threads, rng)
    }

    /// [`DrawnAhead::start`] of words as `target` reads them.
    pub fn start_for<'scope>(
        scope: &'scope std::thread::Scope<'scope, 'a>,
        target: &'static Target,
        words: &'a [u128],
        threads: usize,
        mut rng: crate::rng::Rng,
    ) -> DrawnAhead<'a> {
        let (tx, groups) = std::sync::mpsc::sync_channel::<Drawn>(Self::AHEAD);
        let (back, spare) = std::sync::mpsc::channel::<Drawn>();
        scope.spawn(move || {
            for ws in words.chunks(Self::GROUP) {
                let mut g = spare.try_recv().unwrap_or_else(|_| Drawn {
                    records: Vec::with_capacity(Self::GROUP * threads * INPUT_RECORD),
                    c: Vec::new(),
                    c_at: Vec::with_capacity(Self::GROUP + 1),
                });
                g.records.clear();
                g.c.clear();
                g.c_at.clear();
                for &w in ws {
                    g.c_at.push(g.c.len());
                    random_records_into_for(target, w, threads, &mut rng, &mut g.records, &mut g.c);
                }
                g.c_at.push(g.c.len());
                // a planner that stopped (a refused batch) takes no more
                if tx.send(g).is_err() {
                    return;
                }
            }
        });
        DrawnAhead { words, threads, next: 0, group: Drawn::default(), first: 0, groups, back }
    }
}

impl CaseSource for DrawnAhead<'_> {
    fn len(&self) -> usize {
        self.words.len()
    }
    fn word(&self, i: usize) -> u128 {
        self.words[i]
    }
    fn input_count(&self, _: usize) -> usize {
        self.threads
    }
    fn inputs(&mut self, i: usize) -> CaseInputs<'_> {
        assert_eq!(i, self.next, "DrawnAhead asked for case {i} out of order");
        self.next += 1;
        if i.is_multiple_of(Self::GROUP) {
            // the drawing thread makes every group, in order, unless it panicked (which the
            // scope's join then raises)
            let g = self.groups.recv().unwrap_or_else(|_| panic!("the thread drawing the inputs of case {i} stopped"));
            let _ = self.back.send(std::mem::replace(&mut self.group, g));
            self.first = i;
        }
        let (k, n) = (i - self.first, self.threads * INPUT_RECORD);
        let g = &self.group;
        CaseInputs::Records { records: &g.records[k * n..(k + 1) * n], c: &g.c[g.c_at[k]..g.c_at[k + 1]] }
    }
}

/// Plan the SM90 program for a batch.
pub fn plan(cases: &[Case]) -> Result<Plan, PatchError> {
    plan_for(Target::DEFAULT, cases)
}

/// Plan `target`'s program for a batch.
pub fn plan_for(target: &'static Target, cases: &[Case]) -> Result<Plan, PatchError> {
    plan_inner(target, &mut Cases(cases), None, Some(cases))
}

/// Plan the SM90 program for a batch read from `src` ([`plan`] of its cases).
pub fn plan_source(src: &mut impl CaseSource) -> Result<Plan, PatchError> {
    plan_source_for(Target::DEFAULT, src)
}

/// [`plan_source`] for `target`.
pub fn plan_source_for(target: &'static Target, src: &mut impl CaseSource) -> Result<Plan, PatchError> {
    plan_inner(target, src, None, None)
}

/// [`plan_source`], handing the input image to `sink` piece by piece as it is made (pieces
/// of whole cases' records, each about `chunk` bytes or a little more; the c plane and the
/// bindless slots last), so that it can be written while the rest is planned. The pieces,
/// joined, are [`plan_source`]'s `Plan::input`; the returned plan's `input` is empty.
/// Nothing is handed over when the batch is refused. The sink may give back a buffer for
/// the next piece (a piece it has written, emptied), so that memory is reused, not taken
/// fresh from the system piece after piece.
pub fn plan_streamed(src: &mut impl CaseSource, chunk: usize, sink: &mut dyn FnMut(Vec<u8>) -> Option<Vec<u8>>) -> Result<Plan, PatchError> {
    plan_streamed_for(Target::DEFAULT, src, chunk, sink)
}

/// [`plan_streamed`] for `target`.
pub fn plan_streamed_for(
    target: &'static Target,
    src: &mut impl CaseSource,
    chunk: usize,
    sink: &mut dyn FnMut(Vec<u8>) -> Option<Vec<u8>>,
) -> Result<Plan, PatchError> {
    plan_inner(target, src, Some((chunk.max(1), sink)), None)
}

/// Where a streamed plan's input image goes: the piece size and the receiver.
type Stream<'a> = Option<(usize, &'a mut dyn FnMut(Vec<u8>) -> Option<Vec<u8>>)>;

/// The planner. `held`: the batch's cases, where the caller holds them all (`src` reads
/// them); then, unless streaming, their records are written on a second thread while the
/// program is planned on this one.
fn plan_inner(target: &'static Target, src: &mut impl CaseSource, mut stream: Stream<'_>, held: Option<&[Case]>) -> Result<Plan, PatchError> {
    // where the kernel's two parameters (input, output) and the memory descriptor are in
    // constant bank 0 on this target
    let (input_param, output_param, descriptor) = (target.param_base, target.param_base + 8, target.descriptor_offset);
    let n = src.len();
    if n == 0 {
        return Err(PatchError::EmptyBatch);
    }
    let t = src.input_count(0);
    if t == 0 || !t.is_multiple_of(32) || t > MAX_THREADS {
        return Err(PatchError::InputCount { case: 0, got: t, expected: t });
    }
    let mut insts = Vec::with_capacity(n * 24 + 8);
    let mut bank3 = vec![0u8; BANK3_BYTES];
    let mut bank3_set = vec![false; BANK3_BYTES / 4];
    let mut maxreg = 0u32;
    let mut entries = Vec::with_capacity(n);
    let h = |insts: &mut Vec<Planned>, op: Op, args: &[u32]| {
        let mut a = [0u32; 4];
        a[..args.len()].copy_from_slice(args);
        insts.push(Planned::Helper(op, a))
    };
    let mut decoded = Vec::with_capacity(n);
    for i in 0..n {
        let got = src.input_count(i);
        if got != t {
            return Err(PatchError::InputCount { case: i, got, expected: t });
        }
        let word = src.word(i);
        let not = |reason| PatchError::NotRunnable { case: i, word: format_hex(word), reason };
        decoded.push(runnable_inst(target, word).map_err(not)?);
    }
    // records; then the c plane (one u32 per thread of each three-source case); then
    // (64-byte aligned, past 64 KiB so that base = slot - offset >= 0) the bindless slots:
    // one 64-byte line per warp of each cx case
    let records = n * t * INPUT_RECORD;
    let plane_at = records;
    let plane_len = decoded.iter().filter(|d| d.c.is_some()).count() * t * 4;
    let slots_at = (records + plane_len).div_ceil(64) * 64 + BANK3_BYTES;
    let cx = |o: Option<Operand2>| matches!(o, Some(Operand2::ConstUr { .. }));
    let slots_len = decoded.iter().filter(|d| cx(Some(d.b)) || cx(d.c)).count() * (t / 32) * 64;
    let image_len = if slots_len == 0 { records + plane_len } else { slots_at + slots_len };
    // the input image (its whole size reserved: grown past it, the vector would double and
    // copy), or while streaming the piece not yet handed over (after `flushed` bytes)
    let cap = stream.as_ref().map_or(image_len, |(chunk, _)| chunk + t * INPUT_RECORD);
    // a batch held whole, not streamed: its records are written into `image` by a second
    // thread meanwhile, and the handles to write into them wait here (byte offset, value)
    let held_cases = held.filter(|_| stream.is_none());
    let held = held_cases.is_some();
    let mut image: Vec<u8> = Vec::with_capacity(if held { image_len } else { 0 });
    let mut patches: Vec<(usize, u32)> = Vec::new();
    let mut input = Vec::with_capacity(if held { 0 } else { cap });
    let mut flushed = 0usize;
    let mut plane: Vec<u8> = Vec::with_capacity(plane_len);
    let mut slots: Vec<u8> = Vec::new();
    // each case's text is made here, then copied to a string of its length
    let mut scratch = String::new();
    std::thread::scope(|s| {
        // (a small image is written here: a thread costs more than it saves)
        let writer = held_cases.and_then(|cases| {
            let spare = &mut image.spare_capacity_mut()[..records];
            if records < 1 << 20 {
                fill_cases(spare, cases);
                return None;
            }
            Some(s.spawn(move || fill_cases(spare, cases)))
        });
        for (i, inst) in decoded.iter().enumerate() {
            let word = src.word(i);
            let inputs = src.inputs(i);
            let named: Vec<u8> = inst.named_regs().collect();
            for &r in &named {
                if r != RZ {
                    maxreg = maxreg.max(r as u32);
                }
            }
            // lowest 4-aligned quad (not the one holding RZ) free of the case's registers
            let q = (0u8..63).map(|k| k * 4).find(|&q| named.iter().all(|&r| r < q || r > q + 3)).unwrap_or(0);
            maxreg = maxreg.max(q as u32 + 3);
            let (q0, q1, q2, q3) = (q as u32, q as u32 + 1, q as u32 + 2, q as u32 + 3);
            // a three-source case whose operand 3 reads data (a register, UR or cx[], not RZ or
            // URZ) loads it into the lowest register neither named nor in the quad
            let loads_c = match inst.c {
                Some(Operand2::Reg(r)) => r != RZ,
                Some(Operand2::Ur(u)) => u != URZ,
                Some(Operand2::ConstUr { .. }) => true,
                _ => false,
            };
            let extra = loads_c.then(|| (0u8..RZ).find(|&r| !named.contains(&r) && !(q..=q + 3).contains(&r)).unwrap_or(0));
            if let Some(e) = extra {
                maxreg = maxreg.max(e as u32);
            }
            let special = match (inst.b, inst.c) {
                (Operand2::Reg(_), Some(o)) if !matches!(o, Operand2::Reg(_)) => Some((o, Special::C)),
                (Operand2::Reg(_), _) => None,
                (o, _) => Some((o, Special::B)),
            };
            let base = (i * t) as u32;
            // a held batch's records are written by the writer thread (`fill_cases`)
            let first_record = if held { i * t * INPUT_RECORD } else { input.len() };
            if !held {
                inputs.push_records(&mut input);
            }
            let first_plane = plane.len();
            if inst.c.is_some() {
                inputs.push_plane(&mut plane);
            }
            if let Some(e) = extra {
                // load operand 3 into the extra register: word plane_at / 4 + first_plane / 4 + tid
                h(&mut insts, Op::S2rTidX, &[q2]);
                h(&mut insts, Op::Ldc64, &[q0, input_param, 0]);
                h(&mut insts, Op::Uldc64, &[4, descriptor, 0]);
                let word = ((plane_at + first_plane) / 4) as u32;
                if word != 0 {
                    h(&mut insts, Op::Iadd3Imm, &[q2, q2, word]);
                }
                h(&mut insts, Op::ImadWideU32Imm, &[q0, q2, 4, q0]);
                h(&mut insts, Op::LdgE, &[e as u32, q0, 4]);
            }
            // load the record
            h(&mut insts, Op::S2rTidX, &[q2]);
            h(&mut insts, Op::Ldc64, &[q0, input_param, 0]);
            h(&mut insts, Op::Uldc64, &[4, descriptor, 0]);
            if base != 0 {
                h(&mut insts, Op::Iadd3Imm, &[q2, q2, base]);
            }
            h(&mut insts, Op::ImadWideU32Imm, &[q0, q2, INPUT_RECORD as u32, q0]);
            h(&mut insts, Op::LdgE128, &[q0, q0, 4]);
            h(&mut insts, Op::R2p, &[q3, PREDICATES]);
            // the register that holds the special operand's data (asked only of a UR other than
            // URZ and of cx[], for which operand 3 is loaded: `extra` is then set)
            let staged = |which: Special| match which {
                Special::B => q1,
                Special::C => extra.map_or(q1, |e| e as u32),
            };
            let mut handle = None;
            let spec_source = special.map(|(o, which)| match o {
                Operand2::Reg(r) => BSource::Register { reg: r },
                Operand2::Imm { .. } => BSource::Immediate,
                Operand2::Ur(u) => {
                    if u != URZ {
                        h(&mut insts, Op::R2ur, &[u as u32, staged(which)]);
                    }
                    BSource::Uniform { ureg: u }
                }
                Operand2::Const { bank, offset } => {
                    let o = offset as usize;
                    if !bank3_set[o / 4] {
                        bank3_set[o / 4] = true;
                        bank3[o..o + 4].copy_from_slice(&inputs.value(which, 0).to_le_bytes());
                    }
                    BSource::ConstBank { bank, offset: offset as u32 }
                }
                Operand2::ConstUr { ureg, offset } => {
                    let o = offset as usize;
                    let first_slot = slots_at + slots.len() + o % 64;
                    for w in 0..t / 32 {
                        let slot = slots_at + slots.len() + o % 64;
                        let handle_base = ((slot - o) / 64) as u32;
                        slots.resize(slots.len() + 64, 0);
                        let at = slot - slots_at;
                        slots[at..at + 4].copy_from_slice(&inputs.value(which, w * 32).to_le_bytes());
                        // the handle's base / 64 goes where the operand's value would
                        for k in 0..32 {
                            let (buf, at) = match which {
                                Special::B if held => {
                                    // into the record once it is written
                                    patches.push((first_record + (w * 32 + k) * INPUT_RECORD + RECORD_B.start, handle_base));
                                    continue;
                                }
                                Special::B => (&mut input, first_record + (w * 32 + k) * INPUT_RECORD + RECORD_B.start),
                                Special::C => (&mut plane, first_plane + (w * 32 + k) * 4),
                            };
                            buf[at..at + 4].copy_from_slice(&handle_base.to_le_bytes());
                        }
                    }
                    handle = Some((ureg, offset, staged(which)));
                    BSource::Bindless { ureg, offset, first_slot }
                }
            });
            let [mov_d, mov_c, mov_b, mov_a] = load_moves(inst, q2, extra.map_or(RZ as u32, u32::from), q1, q0);
            if let Some(m) = mov_d {
                h(&mut insts, Op::Mov, &m);
            }
            if let Some((ureg, offset, x)) = handle {
                // handle = ((in + 64 * base64) >> 6) | (ceil((offset + 4) / 16) << 51), base64 in x
                let size16 = (offset + 4).div_ceil(16);
                h(&mut insts, Op::Ldc64, &[q2, input_param, 0]);
                h(&mut insts, Op::ImadWideU32Imm, &[q2, x, 64, q2]);
                h(&mut insts, Op::ShfRU64Imm, &[x, q2, 6, q3]);
                h(&mut insts, Op::ShfRU32HiImm, &[q3, RZ as u32, 6, q3]);
                h(&mut insts, Op::Iadd3Imm, &[q3, q3, size16 << 19]);
                h(&mut insts, Op::R2ur, &[ureg as u32, x]);
                h(&mut insts, Op::R2ur, &[ureg as u32 + 1, q3]);
            }
            for m in mov_c.into_iter().chain(mov_b).chain(mov_a) {
                h(&mut insts, Op::Mov, &m);
            }
            h(&mut insts, Op::Nop, &[]);
            let code_offset = insts.len() * 16;
            insts.push(Planned::Iut(i));
            h(&mut insts, Op::Nop, &[]);
            // store the destination and the predicate file after the word (the quad is
            // free of the case's registers: the destination is read, never overwritten)
            h(&mut insts, Op::P2r, &[q3, PREDICATES]);
            h(&mut insts, Op::S2rTidX, &[q2]);
            h(&mut insts, Op::Ldc64, &[q0, output_param, 0]);
            h(&mut insts, Op::Uldc64, &[4, descriptor, 0]);
            if base != 0 {
                h(&mut insts, Op::Iadd3Imm, &[q2, q2, base]);
            }
            h(&mut insts, Op::ImadWideU32Imm, &[q0, q2, OUTPUT_RECORD as u32, q0]);
            h(&mut insts, Op::Mov, &[q2, inst.dst as u32]);
            h(&mut insts, Op::StgE64, &[q0, q2, 4]);
            // the sources other than the special one are registers
            let reg_source = |o: Operand2| match o {
                Operand2::Reg(r) => BSource::Register { reg: r },
                _ => BSource::Immediate,
            };
            let (b, c_source) = match (special, spec_source) {
                (Some((_, Special::B)), Some(sp)) => (sp, inst.c.map(reg_source)),
                (Some((_, Special::C)), sp) => (reg_source(inst.b), sp),
                _ => (reg_source(inst.b), inst.c.map(reg_source)),
            };
            entries.push(CaseEntry {
                index: i,
                encoding: format_hex(word),
                // the fused path's text, the plain renderer's (`isa::fused`'s tests) made faster;
                // the word decoded above, so the plain one is not reached
                text: {
                    scratch.clear();
                    match crate::isa::decode_render_into_for(target, word, &mut scratch) {
                        Ok(()) => scratch.as_str().into(),
                        Err(_) => render(inst),
                    }
                },
                form: inst.form().cli_name().to_string(),
                input_offset: i * t * INPUT_RECORD,
                a_reg: inst.a,
                b,
                c: c_source,
                c_input_offset: inst.c.map(|_| plane_at + first_plane),
                c_staging: extra,
                d_reg: inst.dst,
                staging: q,
                code_offset,
                output_offset: i * t * OUTPUT_RECORD,
            });
            if let Some((chunk, sink)) = stream.as_mut() {
                if input.len() >= *chunk {
                    flushed += input.len();
                    let mut next = sink(std::mem::take(&mut input)).unwrap_or_default();
                    next.clear();
                    next.reserve(cap);
                    input = next;
                }
            }
        }
        if let Some(w) = writer {
            w.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
    });
    if held {
        // SAFETY: the writer thread, joined above, wrote the first `records` bytes (each of
        // the n cases has t inputs, checked above, a record each)
        unsafe { image.set_len(records) };
        input = image;
        for (at, v) in patches {
            input[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    h(&mut insts, Op::Exit, &[]);
    h(&mut insts, Op::BraSelf, &[]);
    // pad to the 128-byte .text alignment
    while insts.len() % 8 != 0 {
        h(&mut insts, Op::Nop, &[]);
    }
    // the bindless slots' region: zeros from the end of the c plane, then the slots
    let tail = |mut v: Vec<u8>, from: usize| {
        if !slots.is_empty() {
            v.resize(v.len() + slots_at - from, 0);
            v.extend_from_slice(&slots);
        }
        v
    };
    match stream {
        Some((_, sink)) => {
            // the records not yet handed over, the c plane and the slots go as pieces of
            // their own (appended to the last piece, they would grow it past its capacity)
            let pieces = [std::mem::take(&mut input), plane, tail(Vec::new(), records + plane_len)];
            debug_assert_eq!(flushed + pieces.iter().map(Vec::len).sum::<usize>(), image_len);
            for piece in pieces {
                if !piece.is_empty() {
                    let _ = sink(piece);
                }
            }
        }
        None => {
            input.extend_from_slice(&plane);
            input = tail(input, records + plane_len);
            // the size reserved above, so that the image never grew past its capacity
            debug_assert_eq!(input.len(), image_len);
        }
    }
    Ok(Plan { target, insts, bank3, regcount: declared_regcount(maxreg + 1), entries, threads: t, input })
}

/// Words of a planned program.
pub fn encode_plan(plan: &Plan, cases: &[Case]) -> Result<Vec<u128>, PatchError> {
    encode_words(plan, &|i| cases[i].word)
}

/// Words of a planned program, case `i`'s encoding from `word(i)`.
fn encode_words(plan: &Plan, word: &dyn Fn(usize) -> u128) -> Result<Vec<u128>, PatchError> {
    plan.insts
        .iter()
        .map(|p| match p {
            Planned::Iut(i) => Ok(word(*i)),
            Planned::Helper(op, a) => Ok(helpers::encode_safe_for(plan.target, *op, a)?),
        })
        .collect()
}

/// The text nvdisasm should print for each instruction of a plan.
pub fn render_plan(plan: &Plan, cases: &[Case]) -> Vec<String> {
    plan.insts
        .iter()
        .map(|p| match p {
            Planned::Iut(i) => match crate::isa::decode_for(plan.target, cases[*i].word) {
                Ok(inst) => crate::isa::render_for(plan.target, &inst).unwrap_or_else(|| render(&inst)),
                Err(e) => format!("illegal: {e}"),
            },
            Planned::Helper(op, a) => helpers::render_for(plan.target, *op, a),
        })
        .collect()
}

/// Write `program` into `template` with `regcount` registers and constant bank 3 `bank3`
/// (64 KiB). Checks the template first: ELF64 little-endian, EM_CUDA, the target's SM, the kernel
/// symbol, its sections and attributes. The program must end in its only EXIT.
pub fn patch_cubin(template: &[u8], program: &[u128], regcount: u32, bank3: &[u8]) -> Result<Vec<u8>, PatchError> {
    patch_cubin_for(Target::DEFAULT, template, program, regcount, bank3)
}

/// [`patch_cubin`] for `target`: the template must be that target's cubin, and the
/// program's EXIT that target's.
pub fn patch_cubin_for(target: &Target, template: &[u8], program: &[u128], regcount: u32, bank3: &[u8]) -> Result<Vec<u8>, PatchError> {
    let t = elf::inspect(template, target)?;
    let exit = helpers::op_spec_for(target, Op::Exit).fixed;
    let ctrl = {
        let l = crate::spec::control_layout();
        l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask
    };
    let exits: Vec<usize> = program.iter().enumerate().filter(|(_, w)| **w & !ctrl == exit).map(|(i, _)| i).collect();
    if exits.len() != 1 {
        return Err(PatchError::Malformed(format!("the program has {} EXITs; the template's attributes describe one", exits.len())));
    }
    if !program.len().is_multiple_of(8) {
        return Err(PatchError::Malformed("program length is not a multiple of 8 instructions (128 bytes)".into()));
    }
    let mut code = Vec::with_capacity(program.len() * 16);
    for w in program {
        code.extend_from_slice(&w.to_le_bytes());
    }
    elf::write(template, &t, &code, (exits[0] * 16) as u32, regcount, bank3)
}

/// A planned batch encoded and patched into the committed template: everything of a
/// [`Built`] but the input image (the plan's) and the effective inputs.
#[derive(Clone, Debug)]
pub struct Patched {
    pub cubin: Vec<u8>,
    pub manifest: Manifest,
    pub program: Vec<u128>,
}

/// Encode `plan` (of the batch whose encodings are `words`) and patch the committed
/// template. `plan.input` is not used: a caller may take it first (to write it meanwhile).
pub fn patch_plan(mut plan: Plan, words: &[u128]) -> Result<Patched, PatchError> {
    let manifest = take_manifest(&mut plan);
    let (cubin, program) = encode_and_patch(&plan, words)?;
    Ok(Patched { cubin, manifest, program })
}

/// The manifest of `plan`, its case entries taken out of it (so that it can be written while
/// [`encode_and_patch`] runs on the rest of the plan).
pub fn take_manifest(plan: &mut Plan) -> Manifest {
    Manifest {
        kernel: KERNEL_NAME.to_string(),
        arch: plan.target.nvdisasm,
        layout: LAYOUT.to_string(),
        threads_per_case: plan.threads,
        input_record_bytes: INPUT_RECORD,
        output_record_bytes: OUTPUT_RECORD,
        regcount: plan.regcount,
        // one word per planned instruction
        instructions: plan.insts.len(),
        cases: std::mem::take(&mut plan.entries),
    }
}

/// The program of `plan` (of the batch whose encodings are `words`) and the committed
/// template patched with it: the cubin and the program.
pub fn encode_and_patch(plan: &Plan, words: &[u128]) -> Result<(Vec<u8>, Vec<u128>), PatchError> {
    let mut program = encode_words(plan, &|i| words[i])?;
    if let Some(&n) = NOP_PADDING.get().filter(|&&n| n > 0) {
        let nop = helpers::encode_for(plan.target, Op::Nop, &[], helpers::Sched::safe(Op::Nop)).map_err(PatchError::from)?;
        program.resize(program.len() + n, nop);
    }
    let cubin = patch_cubin_for(plan.target, template_for(plan.target), &program, plan.regcount, &plan.bank3)?;
    Ok((cubin, program))
}

impl Manifest {
    /// The manifest as `build-kernel` writes it (`manifest.json`): pretty JSON, written into
    /// one buffer sized for it up front.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        // a case entry takes about 400 bytes of pretty JSON
        let mut out = Vec::with_capacity(self.cases.len() * 512 + self.layout.len() + 1024);
        serde_json::to_writer_pretty(&mut out, self)?;
        Ok(out)
    }
}

/// [`effective_inputs`] of every case, or the first case that is not runnable.
fn effective_all(target: &'static Target, cases: &[Case], bank3: &[u8]) -> Result<Vec<Vec<Inputs>>, PatchError> {
    let mut effective = Vec::with_capacity(cases.len());
    for (i, c) in cases.iter().enumerate() {
        let e =
            effective_inputs_for(target, c.word, &c.inputs, bank3).map_err(|reason| PatchError::NotRunnable { case: i, word: format_hex(c.word), reason })?;
        effective.push(e);
    }
    Ok(effective)
}

/// Build the kernel for a batch: plan, encode, patch the committed template. What each
/// case's threads really read is [`Built::effective_inputs`], worked out when asked.
pub fn build(cases: &[Case]) -> Result<Built, PatchError> {
    build_for(Target::DEFAULT, cases)
}

/// [`build`] for `target`: its helper encodings, parameter offsets and template.
pub fn build_for(target: &'static Target, cases: &[Case]) -> Result<Built, PatchError> {
    let mut plan = plan_for(target, cases)?;
    let input = std::mem::take(&mut plan.input);
    let bank3 = plan.bank3.clone();
    let t = plan.threads;
    let words: Vec<u128> = cases.iter().map(|c| c.word).collect();
    let Patched { cubin, manifest, program } = patch_plan(plan, &words)?;
    Ok(Built {
        job: LaunchJob {
            cubin,
            kernel_name: KERNEL_NAME.to_string(),
            grid: [1, 1, 1],
            block: [t as u32, 1, 1],
            shared_bytes: 0,
            input,
            output_bytes: cases.len() * t * OUTPUT_RECORD,
        },
        manifest,
        program,
        bank3,
        target,
    })
}

/// A simple seeded input plan for `word`: random a, b, d, pred (and c for a three-source
/// word) per thread, with the special source's value equal across each warp (UR form) or
/// the whole case (constant forms), as the kernel reads them.
pub fn random_inputs(word: u128, threads: usize, rng: &mut crate::rng::Rng) -> Vec<Inputs> {
    random_inputs_for(Target::DEFAULT, word, threads, rng)
}

/// [`random_inputs`] of a word as `target` reads it.
pub fn random_inputs_for(target: &'static Target, word: u128, threads: usize, rng: &mut crate::rng::Rng) -> Vec<Inputs> {
    let mut v = Vec::with_capacity(threads);
    random_inputs_into_for(target, word, threads, rng, &mut v);
    v
}

/// [`random_inputs`] appended to `v`, drawing the same values.
pub fn random_inputs_into(word: u128, threads: usize, rng: &mut crate::rng::Rng, v: &mut Vec<Inputs>) {
    random_inputs_into_for(Target::DEFAULT, word, threads, rng, v)
}

/// [`random_inputs_into`] of a word as `target` reads it.
pub fn random_inputs_into_for(target: &'static Target, word: u128, threads: usize, rng: &mut crate::rng::Rng, v: &mut Vec<Inputs>) {
    let d = Draws::of(target, word);
    let start = v.len();
    v.reserve(threads);
    d.each_block(threads, rng, |x| v.extend(x.chunks_exact(d.per).map(Draws::inputs)));
    let Some((lead, which)) = d.lead else { return };
    let v = &mut v[start..];
    for k in 0..threads {
        let l = lead.of(k);
        match which {
            Special::B => v[k].b = v[l].b,
            Special::C => v[k].c = v[l].c,
        }
    }
}

/// The records of [`random_inputs`] (appended to `records`, as the planner writes them)
/// and, for a three-source instruction, each thread's c (appended to `c`): the same values,
/// without making [`Inputs`] first.
pub fn random_records_into(word: u128, threads: usize, rng: &mut crate::rng::Rng, records: &mut Vec<u8>, c: &mut Vec<u32>) {
    random_records_into_for(Target::DEFAULT, word, threads, rng, records, c)
}

/// [`random_records_into`] of a word as `target` reads it.
pub fn random_records_into_for(target: &'static Target, word: u128, threads: usize, rng: &mut crate::rng::Rng, records: &mut Vec<u8>, c: &mut Vec<u32>) {
    let d = Draws::of(target, word);
    let (start, c_start) = (records.len(), c.len());
    if d.per == 4 {
        // a thread's draws are its record's words (but pred's bits past the predicates): one
        // fill draws the stream the blocks of 64 threads would
        records.resize(start + threads * INPUT_RECORD, 0);
        let (words, _) = records[start..].as_chunks_mut::<4>();
        rng.fill_u32_le(words);
        for r in words.as_chunks_mut::<4>().0 {
            r[3] = (u32::from_le_bytes(r[3]) & PREDICATES).to_le_bytes();
        }
    } else {
        records.reserve(threads * INPUT_RECORD);
        d.each_block(threads, rng, |x| {
            for x in x.as_chunks::<5>().0 {
                let i = Draws::inputs(x);
                records.extend_from_slice(&record(&i));
                c.push(i.c);
            }
        });
    }
    // a lead thread comes before the threads that read its value
    match d.lead {
        None => {}
        Some((lead, Special::B)) => {
            let mut v = [0u8; 4];
            for (k, r) in records[start..].as_chunks_mut::<INPUT_RECORD>().0.iter_mut().enumerate() {
                let b = &mut r[RECORD_B];
                if lead.of(k) == k {
                    v.copy_from_slice(b);
                } else {
                    b.copy_from_slice(&v);
                }
            }
        }
        Some((lead, Special::C)) => {
            let c = &mut c[c_start..];
            for k in 0..c.len() {
                c[k] = c[lead.of(k)];
            }
        }
    }
}

/// How a case's random inputs are drawn: `per` draws a thread (their high halves: a, b, d,
/// pred and, for a three-source instruction, c), and whose special-source value each thread
/// reads where not its own.
struct Draws {
    per: usize,
    lead: Option<(Lead, Special)>,
}

/// The thread whose special-source value a thread reads.
#[derive(Clone, Copy)]
enum Lead {
    /// its warp's first (a uniform register)
    Warp,
    /// the case's first (a constant)
    Case,
}

impl Lead {
    #[inline(always)]
    fn of(self, k: usize) -> usize {
        match self {
            Lead::Warp => k - k % 32,
            Lead::Case => 0,
        }
    }
}

impl Draws {
    fn of(target: &'static Target, word: u128) -> Draws {
        let inst = crate::isa::decode_for(target, word).ok();
        let form = inst.as_ref().map_or(Form::Rrr, |i| i.form());
        let per = if inst.is_some_and(|i| i.c.is_some()) { 5 } else { 4 };
        let lead = match form.kind() {
            Form::Ur => Lead::Warp,
            Form::Const | Form::ConstUr => Lead::Case,
            _ => return Draws { per, lead: None },
        };
        Draws { per, lead: Some((lead, if form.special_source() == 3 { Special::C } else { Special::B })) }
    }
    /// The draws of `threads` threads, handed to `f` up to 64 threads at a time (the same
    /// stream whatever the count).
    fn each_block(&self, threads: usize, rng: &mut crate::rng::Rng, mut f: impl FnMut(&[[u8; 4]])) {
        let mut draws = [[0u8; 4]; 5 * 64];
        let mut left = threads;
        while left > 0 {
            let n = left.min(64);
            let d = &mut draws[..n * self.per];
            rng.fill_u32_le(d);
            f(d);
            left -= n;
        }
    }
    /// One thread's inputs from its draws.
    #[inline(always)]
    fn inputs(x: &[[u8; 4]]) -> Inputs {
        let v = |k: usize| x.get(k).map_or(0, |&b| u32::from_le_bytes(b));
        Inputs { a: v(0), b: v(1), d: v(2), pred: (v(3) & PREDICATES) as u8, c: v(4) }
    }
}

/// `count` legal, runnable encodings of seed `seed`: generator items in order, skipping the
/// ones the kernel cannot run (an error when none of the first many items is runnable).
pub fn runnable_words(seed: u64, form: Option<crate::isa::Form>, count: usize) -> Result<Vec<u128>, String> {
    runnable_words_of(seed, crate::reference::IMPLEMENTED, form, count)
}

/// [`runnable_words_of`] for `target`: SM90's words as they are; for another target, words
/// of the target's own generator ([`crate::gen::random_word_for`]: its forms, fields and
/// ignored bits, so a word may mean there what it does not on SM90, as HMUL2 with bit 85
/// set, BF16_V2 on SM90 and FP16 on SM8x), item `i` drawn from `Rng::fork(seed, i)`, in
/// item order, skipping the ones the kernel cannot run as the target reads them
/// ([`runnable_for`]), so that a seed names the same words on every run of that target; no
/// INVALID values, as [`runnable_words_of`]'s.
pub fn runnable_words_for(
    target: &'static Target,
    seed: u64,
    ops: &[crate::isa::Op],
    form: Option<crate::isa::Form>,
    count: usize,
) -> Result<Vec<u128>, String> {
    if target == Target::DEFAULT {
        return runnable_words_of(seed, ops, form, count);
    }
    let ops: Vec<crate::isa::Op> = ops.iter().copied().filter(|op| op.forms_for(target).any(|f| form.is_none_or(|want| f == want))).collect();
    if ops.is_empty() {
        return Err(format!("{target} has none of these instructions{}", form.map_or_else(String::new, |f| format!(" in form {}", f.cli_name()))));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(count).map_err(|_| format!("{count} words: too many to hold in memory"))?;
    let limit = 1000 + 1000 * count as u64;
    let mut last = None;
    for i in 0..limit {
        if out.len() == count {
            break;
        }
        match target_item(target, seed, i, &ops, form, 0.0).and_then(|w| runnable_for(target, w).map(|()| w).map_err(Some)) {
            Ok(w) => out.push(w),
            Err(e) => last = e.or(last),
        }
    }
    if out.len() < count {
        return Err(format!(
            "{target}: only {} of {count} items were runnable after {limit} draws (last reason: {})",
            out.len(),
            last.map_or_else(|| "no word of the form asked for".into(), |e| e.to_string())
        ));
    }
    Ok(out)
}

/// Item `i` of seed `seed` of `target`'s own generator ([`crate::gen::random_word_for`]):
/// one of `ops` (which the target has) drawn from `Rng::fork(seed, i)`, of `form` where one is
/// asked for, with no INVALID value except in a share `invalid_share` of the items (as
/// [`crate::gen::GenOptions::invalid_share`]); Err(None) when 64 draws of the instruction
/// hold none such.
pub fn target_item(
    target: &'static Target,
    seed: u64,
    i: u64,
    ops: &[crate::isa::Op],
    form: Option<crate::isa::Form>,
    invalid_share: f64,
) -> Result<u128, Option<NotRunnable>> {
    let invalid = crate::rng::Rng::fork(seed ^ INVALID_SALT, i).chance(invalid_share);
    if ops.is_empty() {
        return Err(None);
    }
    let mut r = crate::rng::Rng::fork(seed, i);
    let op = *r.pick(ops);
    (0..64)
        .filter_map(|_| crate::gen::random_word_for(target, op, &mut r))
        .find(|&w| crate::isa::decode_for(target, w).is_ok_and(|inst| form.is_none_or(|f| inst.form() == f) && (invalid || !inst.has_invalid_value())))
        .ok_or(None)
}

/// The stream of [`target_item`]'s coin for INVALID values.
const INVALID_SALT: u64 = 0x1a7a_11d0_5a17_0002;

/// Whether `target` reads `word` as SM90 does: legal on both, the same instruction and the
/// same text (what the paths that decode with SM90's tables, exhaustive mode's digests and the
/// scaffold fit, need of a word). The text counts: SM80's HADD2.F32 shows an immediate SM90's
/// hides, in the same instruction.
pub fn reads_as_sm90(target: &'static Target, word: u128) -> bool {
    match (crate::isa::decode_for(target, word), decode(word)) {
        (Ok(a), Ok(b)) => a == b && crate::isa::render_for(target, &a).is_some_and(|t| t == render(&b)),
        _ => false,
    }
}

/// [`runnable_words`] of the instructions `ops` only.
pub fn runnable_words_of(seed: u64, ops: &[crate::isa::Op], form: Option<crate::isa::Form>, count: usize) -> Result<Vec<u128>, String> {
    let mut opts = crate::gen::GenOptions::legal_of(seed, ops);
    opts.form = form;
    let mut out = Vec::new();
    out.try_reserve_exact(count).map_err(|_| format!("{count} words: too many to hold in memory"))?;
    let limit = 1000 + 1000 * count as u64;
    // items `from..to` drawn: the runnable words in order, and the last reason one was not
    let draw = |from: u64, to: u64, stop_at: usize| {
        let mut words = Vec::new();
        let mut last = None;
        for i in from..to {
            // an item whose instruction's fields the kernel cannot run is refused before its
            // word is made (the same items as `runnable` of every word: `runnable_fields` is
            // what it asks of the decoded word, which is the instruction; a test checks)
            match crate::gen::generate_one_unless(&opts, i, runnable_fields).and_then(|w| runnable(w).map(|()| w)) {
                Ok(w) => words.push(w),
                Err(e) => last = Some(e),
            }
            if words.len() == stop_at {
                break;
            }
        }
        (words, last)
    };
    let fail = |got: usize, index: u64, last: Option<NotRunnable>| {
        format!("only {got} of {count} items were runnable after {index} draws (last reason: {})", last.map_or_else(String::new, |e| e.to_string()))
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8) as u64;
    if count == 0 {
        return Ok(out);
    }
    if count < 1024 || threads == 1 {
        // one at a time: a few words draw no more items than they need
        let (words, last) = draw(0, limit + 1, count);
        return if words.len() == count { Ok(words) } else { Err(fail(words.len(), limit + 1, last)) };
    }
    // chunks of items taken in order by `threads` threads, each drawing until the chunks
    // before the next one to take hold `count` runnable words; kept in item order, they give
    // the same words as one at a time
    const CHUNK: u64 = 512;
    struct Done {
        /// drawn chunks by index, until they are counted into the prefix
        chunks: std::collections::BTreeMap<u64, (Vec<u128>, Option<NotRunnable>)>,
        /// the counted prefix: its chunks, in order, and the runnable words in them
        prefix: Vec<(Vec<u128>, Option<NotRunnable>)>,
        words: usize,
    }
    let next = std::sync::atomic::AtomicU64::new(0);
    // the index of the first chunk not needed (u64::MAX until the prefix holds `count`)
    let enough = std::sync::atomic::AtomicU64::new(u64::MAX);
    let done = std::sync::Mutex::new(Done { chunks: Default::default(), prefix: Vec::new(), words: 0 });
    let work = || {
        use std::sync::atomic::Ordering::Relaxed;
        loop {
            let c = next.fetch_add(1, Relaxed);
            if c >= enough.load(Relaxed) || c * CHUNK > limit {
                return;
            }
            let r = draw(c * CHUNK, (c + 1) * CHUNK, usize::MAX);
            let mut d = done.lock().unwrap_or_else(|p| p.into_inner());
            d.chunks.insert(c, r);
            while d.words < count {
                let k = d.prefix.len() as u64;
                let Some(r) = d.chunks.remove(&k) else { break };
                d.words += r.0.len();
                d.prefix.push(r);
                if d.words >= count {
                    enough.store(k + 1, Relaxed);
                }
            }
        }
    };
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        work();
        for h in helpers {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
    });
    let d = done.into_inner().unwrap_or_else(|p| p.into_inner());
    let drawn = d.prefix.len() as u64 * CHUNK;
    let mut last = None;
    for (words, l) in d.prefix {
        let room = count - out.len();
        out.extend(words.into_iter().take(room));
        last = l.or(last);
    }
    if out.len() < count {
        return Err(fail(out.len(), drawn, last));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nop_padding_and_template_names_are_checked_before_anything_is_chosen() {
        // neither call sets the process's choice: both are refused first
        assert!(choose_nop_padding(5).unwrap_err().contains("multiple of 8"));
        assert!(Template::parse("12.8").unwrap_err().contains("want 13.0 or 12.9"));
        assert_eq!(Template::parse("12.9").map(Template::bytes), Ok(TEMPLATE_PTXAS_12_9));
        assert_eq!(Template::default().bytes(), TEMPLATE);
    }

    /// Drawn in parallel rounds (a count of 1024 or more) or one at a time, the words are
    /// the first runnable ones in item order.
    #[test]
    fn runnable_words_are_the_first_runnable_items() {
        let seed = 0x5eed;
        eprintln!("seed: {seed}");
        for (ops, form, count) in
            [(&crate::isa::Op::ALL[..], None, 2500), (&[crate::isa::Op::Hmul2][..], Some(Form::Const), 1100), (&crate::isa::Op::ALL[..], None, 7)]
        {
            let mut opts = crate::gen::GenOptions::legal_of(seed, ops);
            opts.form = form;
            let want: Vec<u128> = (0..).map(|i| crate::gen::generate_one(&opts, i)).filter(|&w| runnable(w).is_ok()).take(count).collect();
            assert_eq!(runnable_words_of(seed, ops, form, count).unwrap(), want, "{form:?} x {count}");
        }
    }

    /// The generator's filter on the drawn instruction (`runnable_fields`) refuses exactly the
    /// items whose words `runnable` refuses for their fields, with the same reason, and
    /// passes the others' words unchanged: on items of every instruction and form, with
    /// INVALIDn values, ignored bits and illegal words among them.
    #[test]
    fn refusing_an_item_before_its_word_is_refusing_its_word() {
        let seed = 0xf1e1d;
        eprintln!("seed: {seed}");
        let o = crate::gen::GenOptions { invalid_share: 0.3, ignored_share: 0.3, illegal_share: 0.1, ..crate::gen::GenOptions::legal(seed) };
        let (mut refused, mut passed) = (0, 0);
        for i in 0..60_000 {
            let w = crate::gen::generate_one(&o, i);
            match crate::gen::generate_one_unless(&o, i, runnable_fields) {
                Ok(v) => {
                    assert_eq!(v, w, "item {i}");
                    // what the filter passes, `runnable` refuses only as illegal
                    assert!(!matches!(runnable(w), Err(e) if !matches!(e, NotRunnable::Illegal(_))), "item {i}: {:?}", runnable(w));
                    passed += 1;
                }
                Err(e) => {
                    assert_eq!(runnable(w), Err(e), "item {i}");
                    refused += 1;
                }
            }
        }
        // about half the items name a hardware register, a foreign bank or an odd handle pair
        assert!(refused > 10_000 && passed > 10_000, "{refused} refused, {passed} passed");
    }

    /// The inputs are the stream read as it always was (a seed draws the same inputs in
    /// every version), and the records drawn straight from it are those inputs' records, for
    /// every form, two and three sources, and thread counts past one block of 64; the stream
    /// is left where the values leave it.
    #[test]
    fn random_records_are_the_records_of_random_inputs() {
        let seed = 0x2ec0;
        eprintln!("seed: {seed}");
        let (mut checked, mut three_source, mut led) = (0, 0, 0);
        for form in [None, Some(Form::Rrr), Some(Form::Imm), Some(Form::Const), Some(Form::ConstUr), Some(Form::Ur)] {
            for ops in [&[crate::isa::Op::Hmul2][..], &[crate::isa::Op::Hfma2][..], crate::reference::IMPLEMENTED] {
                let Ok(words) = runnable_words_of(seed, ops, form, 40) else { continue };
                for (n, &w) in words.iter().enumerate() {
                    let threads = [32, 64, 96, 256][n % 4];
                    let (mut a, mut b) = (crate::rng::Rng::fork(seed, n as u64), crate::rng::Rng::fork(seed, n as u64));
                    let inputs = random_inputs(w, threads, &mut a);
                    // the stream as it has always been read: per thread, one draw's high half
                    // for each of a, b, d, pred (and c), the special source's value the lead's
                    let inst = decode(w).unwrap();
                    let mut r = crate::rng::Rng::fork(seed, n as u64);
                    let mut want: Vec<Inputs> = (0..threads)
                        .map(|_| {
                            let [a, b, d, p] = [(); 4].map(|_| r.next_u32());
                            Inputs { a, b, d, pred: (p & 0x7f) as u8, c: if inst.c.is_some() { r.next_u32() } else { 0 } }
                        })
                        .collect();
                    for k in 0..threads {
                        let lead = match inst.form().kind() {
                            Form::Ur => k / 32 * 32,
                            Form::Const | Form::ConstUr => 0,
                            _ => k,
                        };
                        if inst.form().special_source() == 3 {
                            want[k].c = want[lead].c;
                        } else {
                            want[k].b = want[lead].b;
                        }
                    }
                    assert_eq!(inputs, want, "{form:?} {}", format_hex(w));
                    let (mut records, mut c) = (vec![0xee; 3], vec![7]);
                    random_records_into(w, threads, &mut b, &mut records, &mut c);
                    let mut want = vec![0xee; 3];
                    push_records(&mut want, &inputs);
                    assert_eq!(records, want, "{form:?} {}", format_hex(w));
                    let three = decode(w).unwrap().c.is_some();
                    let want_c: Vec<u32> = [7].into_iter().chain(inputs.iter().map(|x| x.c).filter(|_| three)).collect();
                    assert_eq!(c, want_c, "{form:?} {}", format_hex(w));
                    assert_eq!(a.next_u64(), b.next_u64());
                    checked += 1;
                    three_source += three as usize;
                    led += Draws::of(Target::DEFAULT, w).lead.is_some() as usize;
                }
            }
        }
        eprintln!("{checked} cases, {three_source} three-source, {led} with a lead thread");
        // every form and both kinds were drawn (a form an instruction lacks draws no words)
        assert!(checked >= 500 && three_source >= 100 && led >= 200, "{checked} cases, {three_source} three-source, {led} with a lead thread");
    }

    #[test]
    fn drawn_and_streamed_plans_equal_the_plan_of_the_cases() {
        let seed = 0x57ea;
        eprintln!("seed: {seed}");
        // the last two: images of over 1 MiB, whose records `plan` writes on a second thread
        // (with bindless handles written into them after)
        for (form, threads, count) in [
            (None, 64, 150),
            (Some(Form::ConstUr), 96, 150),
            (Some(Form::Const), 32, 150),
            (Some(Form::Ur), 256, 150),
            (Some(Form::ConstUr), 256, 300),
            (None, 256, 300),
        ] {
            let words = runnable_words(seed, form, count).unwrap();
            let mut rng = crate::rng::Rng::fork(seed, 7);
            let cases: Vec<Case> = words.iter().map(|&w| Case { word: w, inputs: random_inputs(w, threads, &mut rng) }).collect();
            let p = plan(&cases).unwrap();
            // the whole image's size was reserved up front: it never grew (and doubled) past it
            assert_eq!(p.input.capacity(), p.input.len(), "{form:?}");
            let drawn = std::thread::scope(|s| plan_source(&mut DrawnAhead::start(s, &words, threads, crate::rng::Rng::fork(seed, 7)))).unwrap();
            assert_eq!(drawn.input, p.input, "{form:?}, drawn ahead");
            for chunk in [1, 5000, 1 << 20] {
                let mut pieces = Vec::new();
                let s = std::thread::scope(|sc| {
                    plan_streamed(&mut DrawnAhead::start(sc, &words, threads, crate::rng::Rng::fork(seed, 7)), chunk, &mut |v| {
                        pieces.push(v);
                        // every other piece gives back a used buffer, to be emptied by the planner
                        (pieces.len() % 2 == 0).then(|| vec![0xee; 3])
                    })
                })
                .unwrap();
                assert!(s.input.is_empty() && pieces.iter().all(|v| !v.is_empty()));
                assert_eq!(pieces.concat(), p.input, "{form:?}, pieces of {chunk}");
                assert_eq!((s.bank3 == p.bank3, s.regcount, s.insts.len()), (true, p.regcount, p.insts.len()));
                let (a, b) = (patch_plan(s, &words).unwrap(), build(&cases).unwrap());
                assert_eq!((a.cubin, a.program), (b.job.cubin, b.program), "{form:?}");
                assert_eq!(serde_json::to_string(&a.manifest).unwrap(), serde_json::to_string(&b.manifest).unwrap());
            }
        }
        // a batch refused at its last case, drawn ahead: the drawing thread, blocked with its
        // groups waiting, stops when the planner drops them (no deadlock)
        let mut words = runnable_words(seed, None, 400).unwrap();
        words.push(0);
        let r = std::thread::scope(|s| plan_source(&mut DrawnAhead::start(s, &words, 32, crate::rng::Rng::fork(seed, 7))));
        assert!(matches!(r, Err(PatchError::NotRunnable { case: 400, .. })), "{:?}", r.err());
        // a refused batch hands nothing over
        let mut pieces = 0;
        let bad = [Case { word: 0, inputs: vec![Inputs::default(); 32] }];
        assert!(plan_streamed(&mut Cases(&bad), 1, &mut |_| {
            pieces += 1;
            None
        })
        .is_err());
        assert_eq!(pieces, 0);
    }

    /// Whether `w` names R253 or R254 (so `place` moves a register of it).
    fn hardware_moved(w: u128) -> bool {
        matches!(runnable(w), Err(NotRunnable::HardwareRegister(_)))
    }

    #[test]
    fn place_makes_every_legal_word_runnable_and_keeps_everything_but_the_operand_2_address() {
        let seed = 0x91ace;
        eprintln!("seed: {seed}");
        let (mut moved, mut hardware) = ([0usize; 2], 0);
        for form in [Form::Const, Form::ConstUr, Form::Rrr] {
            let o = crate::gen::GenOptions { form: Some(form), ..crate::gen::GenOptions::legal_of(seed, crate::reference::IMPLEMENTED) };
            for w in crate::gen::generate(&o, 0, 3000) {
                let p = place(w);
                assert!(runnable(p).is_ok(), "{} -> {}", format_hex(w), format_hex(p));
                let (mut before, after) = (decode(w).unwrap(), decode(p).unwrap());
                // R253 and R254 become registers the word does not name otherwise, equal ones alike
                let regs = |i: &crate::isa::Inst| {
                    let r = |o: Operand2| if let Operand2::Reg(r) = o { Some(r) } else { None };
                    [Some(i.dst), Some(i.a), r(i.b), i.c.and_then(r)]
                };
                let (rb, ra) = (regs(&before), regs(&after));
                if rb.iter().flatten().any(|&r| r == 253 || r == 254) {
                    hardware += 1;
                    for (x, y) in rb.iter().zip(&ra) {
                        for (u, v) in rb.iter().zip(&ra) {
                            assert_eq!(x == u, y == v, "{} -> {}: which registers coincide changed", format_hex(w), format_hex(p));
                        }
                        match (x, y) {
                            (Some(x), Some(y)) if *x == 253 || *x == 254 => assert!(*y < 253 && !rb.contains(&Some(*y)), "{}", format_hex(w)),
                            _ => assert_eq!(x, y),
                        }
                    }
                    before = crate::isa::Inst { dst: after.dst, a: after.a, ..before };
                    if let (Operand2::Reg(_), Operand2::Reg(_)) = (before.b, after.b) {
                        before.b = after.b;
                    }
                    if let (Some(Operand2::Reg(_)), Some(Operand2::Reg(_))) = (before.c, after.c) {
                        before.c = after.c;
                    }
                }
                assert_eq!(crate::isa::Inst { b: before.b, ..after }, before, "only operand 2's address may change");
                match (before.b, after.b) {
                    (Operand2::Const { bank, offset }, Operand2::Const { bank: 3, offset: o }) if before.b != after.b => {
                        assert!(bank != 3 || offset < 0);
                        assert_eq!(o, offset & 0x7ffc);
                        moved[0] += 1;
                    }
                    (Operand2::ConstUr { ureg, offset }, Operand2::ConstUr { ureg: u, offset: o }) if before.b != after.b => {
                        assert_eq!((u, o), ((ureg & !1).min(60), offset));
                        moved[1] += 1;
                    }
                    _ if hardware_moved(w) => {}
                    _ => assert_eq!(p, w, "{}: a runnable word is left alone", format_hex(w)),
                }
            }
        }
        assert!(moved[0] > 1000 && moved[1] > 500, "{moved:?}");
        // the generator draws R254 as an edge value: about three words in ten
        assert!((1000..5000).contains(&hardware), "{hardware} of 9000 name R253 or R254");
        // illegal words are left for the run to report
        assert_eq!(place(0), 0);
    }
}
