//! A CPU emulation of the programs the patcher writes: every word of `.text` is decoded
//! back through the helper spec or as HMUL2 (anything else is an illegal instruction),
//! then run warp by warp in lock step over emulated global memory, with the launch's
//! parameters in constant bank 0 and `.nv.constant3` as bank 3.
//!
//! It proves the plan, not the GPU's arithmetic: the HMUL2 under test is computed by a
//! hook (by default the reference, under the semantics policy of the architecture the cubin
//! is for), so the emulator cannot find a wrong reference. What it
//! does check, and a GPU would not report: every register touched lies under the cubin's
//! register count; a variable-latency helper sets a write scoreboard and nothing reads or
//! overwrites its destination before waiting on it; a store's sources are not overwritten
//! before its read scoreboard is waited on; `R2UR` reads a warp-uniform value; a branch
//! does not diverge; the global-memory descriptor of `c[0x0][0x208]` is what loads and
//! stores use; every access lies inside an allocation and is aligned.
//!
//! Used by the fake CUDA driver (`harness/fake-cuda`, the driver path without a GPU) and by
//! the kernel tests. The `cx[]` bindless handle format is the patcher's assumption
//! ([`cx_handle`]), not a hardware fact.

use super::elf::Image;
use super::helpers::{op_spec_for, Op};
use crate::inputs::Inputs;
use crate::isa::{Inst, Operand2, PT, RZ, URZ};
use crate::reference::policy::Policy;
use crate::spec::control_layout as layout;
use crate::target::Target;

/// What `c[0x0][0x208]` holds: the emulated global-memory descriptor.
pub const DESCRIPTOR: u64 = 0x0000_beef_0000_dead;
/// Byte offset of SM90's first kernel parameter in constant bank 0 ([`Target::param_base`]:
/// the emulator reads the program's target's).
pub const PARAM_BASE: u32 = Target::SM90.param_base;
/// Byte offset of SM90's global-memory descriptor in constant bank 0
/// ([`Target::descriptor_offset`]: the emulator reads the program's target's).
pub const DESCRIPTOR_OFFSET: u32 = Target::SM90.descriptor_offset;
/// Lanes per warp.
pub const WARP: usize = 32;
/// Instructions one warp may execute before the launch counts as hung.
pub const STEP_LIMIT: u64 = 1 << 32;
/// Register file widths: every 8-bit (6-bit) register field plus the 3 more a 128-bit
/// access names fits, so no field value can index outside them; what lands at RZ (URZ) or
/// beyond is dropped after each instruction.
const R_FILE: usize = 260;
const UR_FILE: usize = 68;
/// What an HMUL2 writes when the reference leaves its result undefined.
pub const UNDEFINED_RESULT: u32 = 0x7e7e_7e7e;

/// Why an emulated launch stopped. Each maps to the CUDA error a driver would return
/// ([`Fault::cuda_code`]); checks no GPU would make (hazards, register count) map to
/// `CUDA_ERROR_LAUNCH_FAILED`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    #[error("illegal instruction at {pc:#x}: {why}")]
    IllegalInstruction { pc: usize, why: String },
    #[error("illegal address at {pc:#x}: {len} bytes at {addr:#x} lie outside every allocation")]
    IllegalAddress { pc: usize, addr: u64, len: usize },
    #[error("misaligned address at {pc:#x}: {len} bytes at {addr:#x}")]
    Misaligned { pc: usize, addr: u64, len: usize },
    #[error("hazard at {pc:#x}: {what}")]
    Hazard { pc: usize, what: String },
    #[error("register at {pc:#x}: {what} (the cubin allocates {regcount})")]
    Register { pc: usize, what: String, regcount: u32 },
    #[error("unsupported at {pc:#x}: {what}")]
    Unsupported { pc: usize, what: String },
    #[error("no EXIT after {steps} instructions (last at {pc:#x})")]
    Timeout { pc: usize, steps: u64 },
    #[error("launch: {0}")]
    Launch(String),
}

impl Fault {
    /// The CUDA driver error code a launch with this fault returns.
    pub fn cuda_code(&self) -> i32 {
        match self {
            Fault::IllegalInstruction { .. } => 715,
            Fault::IllegalAddress { .. } => 700,
            Fault::Misaligned { .. } => 716,
            Fault::Timeout { .. } => 702,
            Fault::Launch(_) => 1,
            Fault::Hazard { .. } | Fault::Register { .. } | Fault::Unsupported { .. } => 719,
        }
    }
}

/// Emulated device memory.
pub trait Memory {
    /// Fill `out` from `addr`; false when the range is not inside one allocation.
    fn read(&self, addr: u64, out: &mut [u8]) -> bool;
    /// Write `data` at `addr`; false when the range is not inside one allocation.
    fn write(&mut self, addr: u64, data: &[u8]) -> bool;
}

/// Allocations as (base address, bytes).
#[derive(Clone, Debug, Default)]
pub struct Regions(pub Vec<(u64, Vec<u8>)>);

impl Regions {
    fn find(&self, addr: u64, len: usize) -> Option<(usize, usize)> {
        self.0.iter().enumerate().find_map(|(i, (base, bytes))| {
            let off = addr.checked_sub(*base)? as usize;
            (off.checked_add(len)? <= bytes.len()).then_some((i, off))
        })
    }
}

impl Memory for Regions {
    fn read(&self, addr: u64, out: &mut [u8]) -> bool {
        match self.find(addr, out.len()) {
            Some((i, off)) => {
                out.copy_from_slice(&self.0[i].1[off..off + out.len()]);
                true
            }
            None => false,
        }
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.find(addr, data.len()) {
            Some((i, off)) => {
                self.0[i].1[off..off + data.len()].copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}

/// [`Regions`] that log every write as (address, bytes): what a test needs to see that a
/// program stores each output word exactly once.
#[derive(Clone, Debug, Default)]
pub struct Logged {
    pub mem: Regions,
    pub writes: Vec<(u64, usize)>,
}

impl Memory for Logged {
    fn read(&self, addr: u64, out: &mut [u8]) -> bool {
        self.mem.read(addr, out)
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        self.writes.push((addr, data.len()));
        self.mem.write(addr, data)
    }
}

impl Logged {
    /// Err unless the writes are exactly one `len`-byte store to each of the `count`
    /// consecutive `len`-byte words from `base`.
    pub fn one_store_per_word(&self, base: u64, count: usize, len: usize) -> Result<(), String> {
        if let Some(&(a, n)) = self.writes.iter().find(|w| w.1 != len) {
            return Err(format!("a store of {n} bytes at {a:#x}, not {len}"));
        }
        let mut at: Vec<u64> = self.writes.iter().map(|w| w.0).collect();
        at.sort_unstable();
        if let Some(w) = at.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("two stores to {:#x}", w[0]));
        }
        let want: Vec<u64> = (0..count as u64).map(|i| base + i * len as u64).collect();
        if at != want {
            return Err(format!(
                "{} stores, want one to each of the {count} words from {base:#x}; first stray: {:?}",
                at.len(),
                at.iter().find(|a| !want.contains(a))
            ));
        }
        Ok(())
    }
}

/// One execution of the HMUL2 under test, for the hook that computes it.
#[derive(Clone, Copy, Debug)]
pub struct Site<'a> {
    /// Instruction index in `.text`.
    pub index: usize,
    /// The architecture of the program it runs in (its cubin's): whose semantics policy the
    /// reference computes it under ([`reference_hook`]).
    pub target: &'static Target,
    pub word: u128,
    pub inst: &'a Inst,
    pub ctaid: u32,
    pub tid: u32,
    /// What the instruction reads: registers (0 for RZ/URZ), the constant word, P0..P6.
    /// An immediate source (`b`, or `c` in the immediate-as-operand-3 form) reads 0: the
    /// value is in the encoding. `c` is 0 for a two-source instruction.
    pub inputs: Inputs,
}

/// The reference's result under the policy of the site's architecture
/// ([`Policy::for_target`]: what its hardware settled, else the named assumptions),
/// [`UNDEFINED_RESULT`] where it has none.
pub fn reference_hook(s: &Site) -> u32 {
    reference_hook_with(Policy::for_target(s.target), s)
}

/// [`reference_hook`] under the policy `p` (one not compiled in: a table a test builds).
pub fn reference_hook_with(p: &Policy, s: &Site) -> u32 {
    crate::reference::eval_with(p, s.inst, &s.inputs).unwrap_or(UNDEFINED_RESULT)
}

/// What one execution of the word under test leaves behind: its destination and, where it
/// writes predicates, the predicate file P0..P6 after it (None: the file as it was).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub dst: u32,
    pub preds: Option<u8>,
}

/// The reference's destination ([`reference_hook`]) and, for an instruction that writes
/// predicates, the reference's predicates after ([`crate::reference::preds_after_with`]; where
/// they are undefined the file is left as it was, and the destination says undefined), both
/// under the policy of the site's architecture.
pub fn reference_effects(s: &Site) -> Written {
    reference_effects_with(Policy::for_target(s.target), s)
}

/// [`reference_effects`] under the policy `p`.
pub fn reference_effects_with(p: &Policy, s: &Site) -> Written {
    let preds = crate::reference::writes_preds(s.inst.op).then(|| crate::reference::preds_after_with(p, s.inst, &s.inputs).ok()).flatten();
    Written { dst: reference_hook_with(p, s), preds }
}

/// A `cx[]` handle (a uniform register pair) as (base address, size in bytes): the patcher's
/// assumption, bits 0..50 the base / 64, bits 51..63 the size / 16.
pub fn cx_handle(lo: u32, hi: u32) -> (u64, u64) {
    let base = (lo as u64 | ((hi as u64) & 0x7_ffff) << 32) << 6;
    (base, ((hi >> 19) as u64) << 4)
}

#[derive(Clone, Debug)]
enum Insn {
    Helper(Op, [u32; 4]),
    UnderTest(Box<Inst>),
    Illegal(String),
}

/// Registers an instruction reads and writes: (reads, uniform reads, writes, uniform writes).
type Operands = (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>);

#[derive(Clone, Debug)]
struct Decoded {
    insn: Insn,
    /// A helper's registers, found once at load.
    regs: Operands,
    word: u128,
    wr_bar: u8,
    rd_bar: u8,
    wait: u8,
}

/// A helper word as (op, field values in the JSON's order, byte offsets scaled). Where
/// several ops match, the one with the fewest field bits: `BRA_SELF` is a `BRA_BACK` with
/// every field fixed (PT, offset -4), and is named as such.
pub fn classify(word: u128) -> Option<(Op, [u32; 4])> {
    classify_for(Target::DEFAULT, word)
}

/// [`classify`] by `target`'s helper spec.
pub fn classify_for(target: &Target, word: u128) -> Option<(Op, [u32; 4])> {
    let l = layout();
    let ctrl = l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask;
    Op::ALL
        .into_iter()
        .filter_map(|op| {
            let s = op_spec_for(target, op);
            let fields = s.fields.iter().fold(0u128, |m, f| m | f.mask);
            (s.present && word & !(ctrl | fields) == s.fixed).then_some((fields.count_ones(), op))
        })
        .min_by_key(|&(bits, _)| bits)
        .map(|(_, op)| {
            let s = op_spec_for(target, op);
            let mut a = [0u32; 4];
            for (v, f) in a.iter_mut().zip(&s.fields) {
                *v = f.get(word).wrapping_mul(f.scale);
            }
            (op, a)
        })
}

/// A loaded program, decoded once.
#[derive(Clone, Debug)]
pub struct Program {
    /// The architecture the cubin is for (its ELF's), whose helper encodings and constant
    /// bank 0 layout the program is decoded and run with.
    target: &'static Target,
    code: Vec<Decoded>,
    bank3: Vec<u8>,
    regcount: u32,
}

impl Program {
    /// Decode an image; refuses one whose `EIATTR_EXIT_INSTR_OFFSETS` do not name EXITs.
    pub fn load(image: &Image) -> Result<Program, String> {
        let l = layout();
        let target = image.target;
        let code: Vec<Decoded> = image
            .text
            .iter()
            .map(|&w| Decoded {
                insn: match classify_for(target, w) {
                    Some((op, a)) => Insn::Helper(op, a),
                    None => match crate::isa::decode_for(target, w) {
                        Ok(i) => Insn::UnderTest(Box::new(i)),
                        Err(e) => Insn::Illegal(e.to_string()),
                    },
                },
                regs: classify_for(target, w).map(|(op, a)| operands(op, &a)).unwrap_or_default(),
                word: w,
                wr_bar: l.wr_bar.get(w) as u8,
                rd_bar: l.rd_bar.get(w) as u8,
                wait: l.wait.get(w) as u8,
            })
            .collect();
        if image.exits.is_empty() {
            return Err("EIATTR_EXIT_INSTR_OFFSETS lists no EXIT".into());
        }
        for &e in &image.exits {
            let ok = e % 16 == 0 && matches!(code.get(e as usize / 16).map(|d| &d.insn), Some(Insn::Helper(Op::Exit, _)));
            if !ok {
                return Err(format!("EIATTR_EXIT_INSTR_OFFSETS names {e:#x}, which is not an EXIT"));
            }
        }
        if image.regcount == 0 || image.regcount > 255 {
            return Err(format!("register count {}", image.regcount));
        }
        Ok(Program { target, code, bank3: image.bank3.clone(), regcount: image.regcount })
    }

    /// The architecture the program is for.
    pub fn target(&self) -> &'static Target {
        self.target
    }

    /// Registers per thread the image allocates.
    pub fn regcount(&self) -> u32 {
        self.regcount
    }
    pub fn len(&self) -> usize {
        self.code.len()
    }
    /// Words of `.text` that are no helper: the cases under test (one per case of a batch
    /// kernel, one in a digest kernel), illegal words included.
    pub fn cases(&self) -> usize {
        self.code.iter().filter(|d| !matches!(d.insn, Insn::Helper(..))).count()
    }
    /// Whether some word of `.text` is the helper `op`.
    pub fn uses(&self, op: Op) -> bool {
        self.code.iter().any(|d| matches!(d.insn, Insn::Helper(o, _) if o == op))
    }
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }
}

/// A launch: one-dimensional grid and block (the patcher's kernels), two pointer parameters.
#[derive(Clone, Copy, Debug)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub params: [u64; 2],
}

/// Counts of what ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub warps: u64,
    pub instructions: u64,
    pub hmul2: u64,
}

/// Per-warp state.
struct Warp {
    r: Vec<[u32; R_FILE]>,
    ur: [u32; UR_FILE],
    pr: [u8; WARP],
    /// Scoreboard + 1 a register's pending write is on (0 none); same for reads by stores.
    wr_pending: [u8; 256],
    ur_pending: [u8; 64],
    rd_pending: [u8; 256],
    /// Whether any scoreboard may still be pending (skips the clearing when none is).
    pending: bool,
}

/// Run every warp of a launch to its EXIT; `hmul2` computes each execution of an HMUL2
/// (the destination; the predicates stay as they were: [`run_effects`] sets them too).
pub fn run(p: &Program, launch: &Launch, mem: &mut dyn Memory, hmul2: &mut dyn FnMut(&Site) -> u32) -> Result<Stats, Fault> {
    run_effects(p, launch, mem, &mut |s: &Site| Written { dst: hmul2(s), preds: None })
}

/// [`run`], `hook` computing each execution's destination and the predicates it writes.
pub fn run_effects(p: &Program, launch: &Launch, mem: &mut dyn Memory, hmul2: &mut dyn FnMut(&Site) -> Written) -> Result<Stats, Fault> {
    let [gx, gy, gz] = launch.grid;
    let [bx, by, bz] = launch.block;
    if gy != 1 || gz != 1 || by != 1 || bz != 1 || gx == 0 || bx == 0 || bx > 1024 {
        return Err(Fault::Launch(format!("grid {:?} block {:?}: the emulator runs 1-D launches of 1..1024 threads", launch.grid, launch.block)));
    }
    let mut stats = Stats::default();
    for ctaid in 0..gx {
        for w in 0..bx.div_ceil(WARP as u32) {
            let lanes = (bx - w * WARP as u32).min(WARP as u32) as usize;
            run_warp(p, launch, mem, hmul2, ctaid, w * WARP as u32, lanes, &mut stats)?;
            stats.warps += 1;
        }
    }
    Ok(stats)
}

#[allow(clippy::too_many_arguments)]
fn run_warp(
    p: &Program,
    launch: &Launch,
    mem: &mut dyn Memory,
    hmul2: &mut dyn FnMut(&Site) -> Written,
    ctaid: u32,
    tid0: u32,
    lanes: usize,
    stats: &mut Stats,
) -> Result<(), Fault> {
    let mut s = Warp {
        r: vec![[0u32; R_FILE]; lanes],
        ur: [0; UR_FILE],
        pr: [0; WARP],
        wr_pending: [0; 256],
        ur_pending: [0; 64],
        rd_pending: [0; 256],
        pending: false,
    };
    let rc = p.regcount;
    let mut pc = 0usize;
    let mut steps = 0u64;
    loop {
        let Some(d) = p.code.get(pc) else {
            return Err(Fault::IllegalInstruction { pc: pc * 16, why: "execution ran past the end of .text".into() });
        };
        steps += 1;
        if steps > STEP_LIMIT {
            return Err(Fault::Timeout { pc: pc * 16, steps });
        }
        let at = pc * 16;
        // scoreboards waited on complete before issue
        for b in 0..6u8 {
            if s.pending && d.wait >> b & 1 == 1 {
                for x in s.wr_pending.iter_mut().chain(s.ur_pending.iter_mut()).chain(s.rd_pending.iter_mut()) {
                    if *x == b + 1 {
                        *x = 0;
                    }
                }
            }
        }
        if s.pending && d.wait != 0 {
            s.pending = s.wr_pending.iter().chain(&s.ur_pending).chain(&s.rd_pending).any(|&x| x != 0);
        }
        let mut next = pc + 1;
        match &d.insn {
            Insn::Illegal(why) => return Err(Fault::IllegalInstruction { pc: at, why: format!("{}: {why}", crate::isa::format_hex(d.word)) }),
            Insn::UnderTest(inst) => {
                let sources: Vec<Operand2> = std::iter::once(inst.b).chain(inst.c).collect();
                let mut reads = vec![inst.a as u32, inst.dst as u32];
                let mut ureads: Vec<u32> = vec![];
                for o in &sources {
                    match *o {
                        Operand2::Reg(r) => reads.push(r as u32),
                        Operand2::Ur(u) => ureads.push(u as u32),
                        Operand2::ConstUr { ureg, .. } if ureg != URZ => ureads.extend([ureg as u32, ureg as u32 + 1]),
                        _ => {}
                    }
                }
                check_regs(&s, at, rc, &reads, &ureads, &[inst.dst as u32], &[], inst.op.mnemonic())?;
                // a cx[] handle is a uniform register pair: ptxas names only even ones
                for o in &sources {
                    if let Operand2::ConstUr { ureg, .. } = *o {
                        if ureg != URZ && ureg % 2 != 0 {
                            return Err(Fault::Register {
                                pc: at,
                                what: format!("{} reads its cx[] handle from UR{ureg}, an odd pair", inst.op.mnemonic()),
                                regcount: rc,
                            });
                        }
                    }
                }
                for lane in 0..lanes {
                    let g = &s.r[lane];
                    let reg = |x: u8| if x == RZ { 0 } else { g[x as usize] };
                    // a source's value: registers, uniform registers, constant banks; immediates read 0
                    let value = |o: Operand2| -> Result<u32, Fault> {
                        Ok(match o {
                            Operand2::Reg(x) => reg(x),
                            Operand2::Imm { .. } => 0,
                            Operand2::Ur(u) => {
                                if u == URZ {
                                    0
                                } else {
                                    s.ur[u as usize]
                                }
                            }
                            Operand2::Const { bank, offset } => {
                                if bank != super::DATA_BANK {
                                    return Err(Fault::Unsupported { pc: at, what: format!("c[{bank:#x}]: only bank 3 is emulated") });
                                }
                                let bytes = usize::try_from(offset).ok().and_then(|o| p.bank3.get(o..o.checked_add(4)?)).ok_or_else(|| Fault::Unsupported {
                                    pc: at,
                                    what: format!("c[0x3][{}] outside the bank", crate::isa::hex::SignedHex(offset as i64)),
                                })?;
                                u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
                            }
                            Operand2::ConstUr { ureg, offset } => {
                                let (base, size) = cx_handle(s.ur[ureg as usize], s.ur[ureg as usize + 1]);
                                if offset as u64 + 4 > size {
                                    return Err(Fault::IllegalAddress { pc: at, addr: base + offset as u64, len: 4 });
                                }
                                load32(mem, at, base + offset as u64)?
                            }
                        })
                    };
                    let b = value(inst.b)?;
                    let c = match inst.c {
                        Some(o) => value(o)?,
                        None => 0,
                    };
                    let inputs = Inputs { a: reg(inst.a), b, d: reg(inst.dst), pred: s.pr[lane] & 0x7f, c };
                    let w = hmul2(&Site { index: pc, target: p.target, word: d.word, inst, ctaid, tid: tid0 + lane as u32, inputs });
                    if inst.dst != RZ {
                        s.r[lane][inst.dst as usize] = w.dst;
                    }
                    if let Some(p) = w.preds {
                        s.pr[lane] = (s.pr[lane] & !0x7f) | (p & 0x7f);
                    }
                }
                stats.hmul2 += lanes as u64;
            }
            Insn::Helper(op, a) => {
                let (reads, ureads, writes, uwrites) = &d.regs;
                check_regs(&s, at, rc, reads, ureads, writes, uwrites, op.name())?;
                if let Some(what) = misaligned(*op, a) {
                    return Err(Fault::Register { pc: at, what, regcount: rc });
                }
                // ptxas's prologue `LDC R1, c[0x0][0x28]` (the stack pointer, in the scaffolds)
                // sets no scoreboard where nothing reads R1: its result is never safe to read
                // (marked pending on no scoreboard, so a read or rewrite faults); any other
                // variable-latency op without one is refused at once
                let unsynced = *op == Op::Ldc && d.wr_bar > 5;
                if op.variable_latency() && d.wr_bar > 5 && !unsynced {
                    return Err(Fault::Hazard { pc: at, what: format!("{} has a variable latency but sets no write scoreboard", op.name()) });
                }
                match op {
                    Op::Exit => {
                        stats.instructions += steps;
                        return Ok(());
                    }
                    Op::BraSelf => return Err(Fault::Timeout { pc: at, steps }),
                    Op::BraBack => {
                        let taken: Vec<bool> = (0..lanes).map(|l| a[0] == PT as u32 || s.pr[l] >> a[0] & 1 == 1).collect();
                        if taken.iter().any(|&t| t != taken[0]) {
                            return Err(Fault::Unsupported { pc: at, what: "divergent branch".into() });
                        }
                        if taken[0] {
                            let target = (pc as i64 + 1) * 16 + (a[1] as i32 as i64) * 4;
                            if target < 0 || target % 16 != 0 {
                                return Err(Fault::IllegalInstruction { pc: at, why: format!("branch target {target:#x}") });
                            }
                            next = target as usize / 16;
                            // nothing a taken branch to itself reads can change: a hang
                            if next == pc {
                                return Err(Fault::Timeout { pc: at, steps });
                            }
                        }
                    }
                    Op::Uldc64 => {
                        let v = const0(p.target, launch, at, a[2], a[1])?;
                        for (k, half) in [v as u32, (v >> 32) as u32].into_iter().enumerate() {
                            if a[0] as usize + k < URZ as usize {
                                s.ur[a[0] as usize + k] = half;
                            }
                        }
                    }
                    Op::Ldc | Op::MovConst | Op::ImadMovU32Const => {
                        // a 32-bit constant: bank 0's stack pointer (ptxas's prologue) or bank 3's data
                        let v = match (a[2], a[1]) {
                            (0, o) if o == p.target.stack_pointer_offset => STACK_TOP,
                            (3, o) => {
                                let o = o as usize;
                                let b = p.bank3.get(o..o + 4).ok_or_else(|| Fault::Unsupported { pc: at, what: format!("c[0x3][{o:#x}] outside the bank") })?;
                                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
                            }
                            (bank, o) => const0(p.target, launch, at, bank, o & !7).map(|v| if o & 4 == 0 { v as u32 } else { (v >> 32) as u32 })?,
                        };
                        if a[0] != RZ as u32 {
                            for g in s.r.iter_mut() {
                                g[a[0] as usize] = v;
                            }
                        }
                    }
                    Op::R2ur => {
                        let v = s.r[0][a[1] as usize];
                        let v = if a[1] == RZ as u32 { 0 } else { v };
                        if a[1] != RZ as u32 && s.r.iter().any(|g| g[a[1] as usize] != v) {
                            return Err(Fault::Unsupported { pc: at, what: format!("R2UR of R{} differs across the warp", a[1]) });
                        }
                        if a[0] != URZ as u32 {
                            s.ur[a[0] as usize] = v;
                        }
                    }
                    Op::LdgE | Op::LdgE128 | Op::StgE | Op::StgE64 | Op::StgE128 => {
                        let ur = |x: u32| if x >= URZ as u32 { 0 } else { s.ur[x as usize] };
                        let desc = ur(a[2]) as u64 | (ur(a[2] + 1) as u64) << 32;
                        if desc != DESCRIPTOR {
                            return Err(Fault::IllegalAddress { pc: at, addr: desc, len: 0 });
                        }
                        for lane in 0..lanes {
                            let g = &mut s.r[lane];
                            // RZ reads zero, also as the upper half of a pair
                            let rd = |x: u32| if x >= RZ as u32 { 0 } else { g[x as usize] };
                            let base = if matches!(op, Op::LdgE | Op::LdgE128) { a[1] } else { a[0] };
                            let addr = rd(base) as u64 | (rd(base + 1) as u64) << 32;
                            match op {
                                Op::LdgE | Op::LdgE128 => {
                                    let words = if *op == Op::LdgE { 1 } else { 4 };
                                    let mut b = [0u8; 16];
                                    access(at, addr, 4 * words)?;
                                    if !mem.read(addr, &mut b[..4 * words]) {
                                        return Err(Fault::IllegalAddress { pc: at, addr, len: 4 * words });
                                    }
                                    for k in (0..words).filter(|&k| a[0] as usize + k < RZ as usize) {
                                        g[a[0] as usize + k] = u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]]);
                                    }
                                }
                                Op::StgE => {
                                    access(at, addr, 4)?;
                                    if !mem.write(addr, &rd(a[1]).to_le_bytes()) {
                                        return Err(Fault::IllegalAddress { pc: at, addr, len: 4 });
                                    }
                                }
                                Op::StgE128 => {
                                    access(at, addr, 16)?;
                                    let v: Vec<u8> = (0..4).flat_map(|k| rd(a[1] + k).to_le_bytes()).collect();
                                    if !mem.write(addr, &v) {
                                        return Err(Fault::IllegalAddress { pc: at, addr, len: 16 });
                                    }
                                }
                                _ => {
                                    access(at, addr, 8)?;
                                    let v = rd(a[1]) as u64 | (rd(a[1] + 1) as u64) << 32;
                                    if !mem.write(addr, &v.to_le_bytes()) {
                                        return Err(Fault::IllegalAddress { pc: at, addr, len: 8 });
                                    }
                                }
                            }
                        }
                    }
                    _ => {
                        for lane in 0..lanes {
                            lane_op(p.target, *op, a, &mut s.r[lane], &mut s.pr[lane], launch, at, ctaid, tid0 + lane as u32)?;
                        }
                    }
                }
                if unsynced {
                    for &w in writes {
                        s.wr_pending[w as usize] = UNSYNCED;
                        s.pending = true;
                    }
                }
                // what this instruction leaves pending
                if d.wr_bar <= 5 && op.variable_latency() {
                    for &w in writes {
                        s.wr_pending[w as usize] = d.wr_bar + 1;
                        s.pending = true;
                    }
                    for &u in uwrites {
                        s.ur_pending[u as usize] = d.wr_bar + 1;
                        s.pending = true;
                    }
                }
                if d.rd_bar <= 5 {
                    for &x in reads {
                        s.rd_pending[x as usize] = d.rd_bar + 1;
                        s.pending = true;
                    }
                }
            }
        }
        for g in s.r.iter_mut() {
            g[RZ as usize..].fill(0);
        }
        s.ur[URZ as usize..].fill(0);
        pc = next;
    }
}

/// The registers an op reads and writes (RZ/URZ dropped), from its field values.
fn operands(op: Op, a: &[u32; 4]) -> Operands {
    // a base of RZ (URZ) reads zeros and drops writes; any other base must fit below it
    let r = |x: u32, n: u32| -> Vec<u32> {
        if x == RZ as u32 {
            vec![]
        } else {
            (0..n).map(|k| x + k).collect()
        }
    };
    let u = |x: u32, n: u32| -> Vec<u32> {
        if x == URZ as u32 {
            vec![]
        } else {
            (0..n).map(|k| x + k).collect()
        }
    };
    let none = Vec::new;
    match op {
        Op::Nop | Op::Exit | Op::BraSelf | Op::BraBack => (none(), none(), none(), none()),
        Op::S2rTidX | Op::S2rCtaidX => (none(), none(), r(a[0], 1), none()),
        Op::Ldc64 => (none(), none(), r(a[0], 2), none()),
        Op::Ldc | Op::MovConst | Op::ImadMovU32Const | Op::MovImm => (none(), none(), r(a[0], 1), none()),
        Op::ImadWideU32Const => ([r(a[1], 1), r(a[2], 1)].concat(), none(), r(a[0], 2), none()),
        Op::Uldc64 => (none(), none(), none(), u(a[0], 2)),
        Op::Iadd3Imm | Op::Mov | Op::ImadMovU32 | Op::SelNotP => (r(a[1], 1), none(), r(a[0], 1), none()),
        Op::ImadWideU32Imm => ([r(a[1], 1), r(a[3], 2)].concat(), none(), r(a[0], 2), none()),
        Op::LdgE => (r(a[1], 2), u(a[2], 2), r(a[0], 1), none()),
        Op::LdgE128 => (r(a[1], 2), u(a[2], 2), r(a[0], 4), none()),
        Op::StgE => ([r(a[0], 2), r(a[1], 1)].concat(), u(a[2], 2), none(), none()),
        Op::StgE64 => ([r(a[0], 2), r(a[1], 2)].concat(), u(a[2], 2), none(), none()),
        Op::StgE128 => ([r(a[0], 2), r(a[1], 4)].concat(), u(a[2], 2), none(), none()),
        Op::R2p => (r(a[0], 1), none(), none(), none()),
        Op::P2r => (none(), none(), r(a[0], 1), none()),
        Op::IsetpNeU32 => ([r(a[1], 1), r(a[2], 1)].concat(), none(), none(), none()),
        Op::R2ur => (r(a[1], 1), none(), none(), u(a[0], 1)),
        Op::ShfRU64Imm | Op::ShfRU32HiImm | Op::PrmtImm | Op::ImadImm => ([r(a[1], 1), r(a[3], 1)].concat(), none(), r(a[0], 1), none()),
        Op::LopXor => ([r(a[1], 1), r(a[2], 1)].concat(), none(), r(a[0], 1), none()),
        Op::ImadIadd => ([r(a[1], 1), r(a[2], 1)].concat(), none(), r(a[0], 1), none()),
    }
}

/// A register pair (quad) a helper names that does not start at a multiple of 2 (4), which
/// ptxas never emits and the hardware may refuse: `why`, or None. RZ (URZ) reads zeros
/// whatever its number.
fn misaligned(op: Op, a: &[u32; 4]) -> Option<String> {
    // (field index, registers, uniform?)
    let groups: &[(usize, u32, bool)] = match op {
        Op::Ldc64 => &[(0, 2, false)],
        Op::Uldc64 => &[(0, 2, true)],
        Op::ImadWideU32Imm => &[(0, 2, false), (3, 2, false)],
        Op::ImadWideU32Const => &[(0, 2, false)],
        Op::LdgE => &[(1, 2, false), (2, 2, true)],
        Op::LdgE128 => &[(0, 4, false), (1, 2, false), (2, 2, true)],
        Op::StgE => &[(0, 2, false), (2, 2, true)],
        Op::StgE64 => &[(0, 2, false), (1, 2, false), (2, 2, true)],
        _ => &[],
    };
    groups.iter().find_map(|&(i, n, uniform)| {
        let (x, zero, name) = if uniform { (a[i], URZ as u32, "UR") } else { (a[i], RZ as u32, "R") };
        (x != zero && x % n != 0).then(|| format!("{} names {n} registers from {name}{x}, not a multiple of {n}", op.name()))
    })
}

/// Register-count and scoreboard checks before an instruction issues. Lists hold register
/// numbers as the instruction names them; RZ (URZ) alone reads zero and is skipped.
#[allow(clippy::too_many_arguments)]
fn check_regs(s: &Warp, at: usize, rc: u32, reads: &[u32], ureads: &[u32], writes: &[u32], uwrites: &[u32], name: &str) -> Result<(), Fault> {
    let rz = |x: &&u32| **x != RZ as u32;
    let urz = |x: &&u32| **x != URZ as u32;
    // the top two registers of the declared count are the hardware's (each thread's program
    // counter, `super::HW_RESERVED_GPRS`): code that names them corrupts it
    let usable = rc.saturating_sub(super::HW_RESERVED_GPRS);
    for &x in reads.iter().chain(writes).filter(rz) {
        if x >= rc {
            return Err(Fault::Register { pc: at, what: format!("{name} uses R{x}"), regcount: rc });
        }
        if x >= usable {
            return Err(Fault::Register { pc: at, what: format!("{name} uses R{x}, one of the hardware's two registers at the top"), regcount: rc });
        }
    }
    for &x in ureads.iter().chain(uwrites).filter(urz) {
        if x >= URZ as u32 {
            return Err(Fault::Register { pc: at, what: format!("{name} uses UR{x}, past UR62"), regcount: rc });
        }
    }
    for &x in reads.iter().filter(rz) {
        if s.wr_pending[x as usize] != 0 {
            let on = match s.wr_pending[x as usize] {
                UNSYNCED => "its variable-latency write, which set no scoreboard".to_string(),
                b => format!("scoreboard {}", b - 1),
            };
            return Err(Fault::Hazard { pc: at, what: format!("{name} reads R{x} before waiting on {on}") });
        }
    }
    for &x in ureads.iter().filter(urz) {
        if s.ur_pending[x as usize] != 0 {
            return Err(Fault::Hazard { pc: at, what: format!("{name} reads UR{x} before waiting on scoreboard {}", s.ur_pending[x as usize] - 1) });
        }
    }
    for &x in uwrites.iter().filter(urz) {
        if s.ur_pending[x as usize] != 0 {
            return Err(Fault::Hazard { pc: at, what: format!("{name} overwrites UR{x} before its pending write completes") });
        }
    }
    for &x in writes.iter().filter(rz) {
        if s.wr_pending[x as usize] != 0 {
            return Err(Fault::Hazard { pc: at, what: format!("{name} overwrites R{x} before its pending write completes") });
        }
        if s.rd_pending[x as usize] != 0 {
            return Err(Fault::Hazard {
                pc: at,
                what: format!("{name} overwrites R{x} before the store reading it is done (scoreboard {})", s.rd_pending[x as usize] - 1),
            });
        }
    }
    Ok(())
}

fn access(at: usize, addr: u64, len: usize) -> Result<(), Fault> {
    if !addr.is_multiple_of(len as u64) {
        return Err(Fault::Misaligned { pc: at, addr, len });
    }
    Ok(())
}

fn load32(mem: &dyn Memory, at: usize, addr: u64) -> Result<u32, Fault> {
    access(at, addr, 4)?;
    let mut b = [0u8; 4];
    if !mem.read(addr, &mut b) {
        return Err(Fault::IllegalAddress { pc: at, addr, len: 4 });
    }
    Ok(u32::from_le_bytes(b))
}

/// A register's pending mark for a variable-latency write on no scoreboard: no wait clears
/// it (scoreboard 7 does not exist), so reading it faults.
const UNSYNCED: u8 = 8;

/// The stack pointer the emulated driver gives (the scaffolds never use their stack).
pub const STACK_TOP: u32 = 0x00ff_fc00;

/// A 64-bit word of constant bank 0: the descriptor and the two pointer parameters, where
/// `target` has them.
fn const0(target: &Target, launch: &Launch, at: usize, bank: u32, offset: u32) -> Result<u64, Fault> {
    match (bank, offset) {
        (0, o) if o == target.descriptor_offset => Ok(DESCRIPTOR),
        (0, o) if o == target.param_base => Ok(launch.params[0]),
        (0, o) if o == target.param_base + 8 => Ok(launch.params[1]),
        _ => Err(Fault::Unsupported { pc: at, what: format!("c[{bank:#x}][{offset:#x}]: only the descriptor and the two parameters are emulated") }),
    }
}

#[allow(clippy::too_many_arguments)]
fn lane_op(target: &Target, op: Op, a: &[u32; 4], g: &mut [u32; R_FILE], pr: &mut u8, launch: &Launch, at: usize, ctaid: u32, tid: u32) -> Result<(), Fault> {
    // RZ reads zero and takes no write, also as a half of a pair (RZ as a pair is RZ:RZ)
    let rd = |g: &[u32; R_FILE], x: u32| if x >= RZ as u32 { 0 } else { g[x as usize] };
    let pair = |g: &[u32; R_FILE], x: u32| rd(g, x) as u64 | (rd(g, x + 1) as u64) << 32;
    let set = |g: &mut [u32; R_FILE], x: u32, v: u32| {
        if x != RZ as u32 {
            g[x as usize] = v;
        }
    };
    let set64 = |g: &mut [u32; R_FILE], x: u32, v: u64| {
        for (k, half) in [v as u32, (v >> 32) as u32].into_iter().enumerate() {
            if x as usize + k < RZ as usize {
                g[x as usize + k] = half;
            }
        }
    };
    match op {
        Op::Nop => {}
        Op::S2rTidX => set(g, a[0], tid),
        Op::S2rCtaidX => set(g, a[0], ctaid),
        Op::Ldc64 => set64(g, a[0], const0(target, launch, at, a[2], a[1])?),
        Op::Iadd3Imm => set(g, a[0], rd(g, a[1]).wrapping_add(a[2])),
        Op::Mov | Op::ImadMovU32 => set(g, a[0], rd(g, a[1])),
        Op::MovImm => set(g, a[0], a[1]),
        // PT (7) is true: its negation selects Ra
        Op::SelNotP => set(g, a[0], if a[3] < PT as u32 && *pr >> a[3] & 1 == 1 { a[2] } else { rd(g, a[1]) }),
        Op::ImadWideU32Const => set64(g, a[0], (rd(g, a[1]) as u64 * rd(g, a[2]) as u64).wrapping_add(const0(target, launch, at, 0, a[3])?)),
        Op::R2p => {
            // P0..P6 named by the mask take the source's bits; the others keep theirs
            let m = (a[1] & 0x7f) as u8;
            *pr = (*pr & !m) | (rd(g, a[0]) as u8 & m);
        }
        // the register operand is RZ: the predicates the mask names, the other bits zero (PT
        // is no bit of the file)
        Op::P2r => set(g, a[0], *pr as u32 & a[1] & 0x7f),
        Op::ImadImm => set(g, a[0], rd(g, a[1]).wrapping_mul(a[2]).wrapping_add(rd(g, a[3]))),
        Op::ImadIadd => set(g, a[0], rd(g, a[1]).wrapping_add(rd(g, a[2]))),
        Op::ImadWideU32Imm => set64(g, a[0], (rd(g, a[1]) as u64 * a[2] as u64).wrapping_add(pair(g, a[3]))),
        Op::PrmtImm => {
            let bytes = [rd(g, a[1]).to_le_bytes(), rd(g, a[3]).to_le_bytes()].concat();
            let mut v = 0u32;
            for i in 0..4 {
                let sel = (a[2] >> (4 * i)) & 0xf;
                if sel >= 8 {
                    return Err(Fault::Unsupported { pc: at, what: format!("PRMT selector {:#x} (sign replication)", a[2]) });
                }
                v |= (bytes[sel as usize] as u32) << (8 * i);
            }
            set(g, a[0], v);
        }
        Op::LopXor => set(g, a[0], rd(g, a[1]) ^ rd(g, a[2])),
        Op::ShfRU64Imm => set(g, a[0], ((rd(g, a[3]) as u64) << 32 | rd(g, a[1]) as u64).wrapping_shr(a[2]) as u32),
        Op::ShfRU32HiImm => set(g, a[0], rd(g, a[3]).checked_shr(a[2]).unwrap_or(0)),
        Op::IsetpNeU32 => {
            if a[0] >= PT as u32 {
                return Err(Fault::Unsupported { pc: at, what: "ISETP into PT".into() });
            }
            let v = rd(g, a[1]) != rd(g, a[2]);
            *pr = (*pr & !(1 << a[0])) | (v as u8) << a[0];
        }
        other => return Err(Fault::Unsupported { pc: at, what: format!("{} per lane", other.name()) }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cx_handle_round_trips_the_patchers_layout() {
        let (base, size) = cx_handle(0x1234_5678, 0x0000_0003 | (0x40 << 19));
        assert_eq!(base, (0x3_1234_5678u64) << 6);
        assert_eq!(size, 0x400);
    }

    #[test]
    fn classify_names_the_most_specific_op() {
        use super::super::helpers::{encode, Sched};
        let w = encode(Op::BraSelf, &[], Sched::safe(Op::BraSelf)).unwrap();
        assert_eq!(classify(w), Some((Op::BraSelf, [0; 4])), "not a BRA_BACK: the emulator would loop on it");
        let back = encode(Op::BraBack, &[PT as u32, -8i32 as u32], Sched::safe(Op::BraBack)).unwrap();
        assert_eq!(classify(back).map(|c| c.0), Some(Op::BraBack));
    }

    #[test]
    fn a_register_pair_at_rz_reads_zero_and_takes_no_write() {
        use super::super::helpers::{encode, Sched};
        let rz = RZ as u32;
        let prog: Vec<(Op, Vec<u32>)> = vec![
            (Op::S2rTidX, vec![0]),
            // R2:R3 = tid * 0x10001 + RZ:RZ
            (Op::ImadWideU32Imm, vec![2, 0, 0x10001, rz]),
            // into RZ:RZ: no write, no fault
            (Op::ImadWideU32Imm, vec![rz, 0, 3, 2]),
            (Op::Ldc64, vec![4, PARAM_BASE + 8, 0]),
            (Op::Uldc64, vec![4, 0x208, 0]),
            (Op::ImadWideU32Imm, vec![4, 0, 16, 4]),
            (Op::StgE64, vec![4, 2, 4]),
            (Op::Iadd3Imm, vec![4, 4, 8]),
            (Op::StgE64, vec![4, rz, 4]),
            (Op::Exit, vec![]),
        ];
        let mut text: Vec<u128> = prog.iter().map(|(op, a)| encode(*op, a, Sched::safe(*op)).unwrap()).collect();
        let exit = (text.len() as u32 - 1) * 16;
        text.resize(16, encode(Op::Nop, &[], Sched::safe(Op::Nop)).unwrap());
        let p = Program::load(&Image { target: Target::DEFAULT, text, bank3: vec![0; 16], regcount: 8, exits: vec![exit] }).unwrap();
        let out = 0x1_0000u64;
        let mut mem = Regions(vec![(out, vec![0xa5; 32 * 16])]);
        let launch = Launch { grid: [1, 1, 1], block: [32, 1, 1], params: [0, out] };
        let stats = run(&p, &launch, &mut mem, &mut reference_hook).unwrap();
        assert_eq!(stats.warps, 1);
        for (t, rec) in mem.0[0].1.chunks_exact(16).enumerate() {
            assert_eq!(u64::from_le_bytes(rec[..8].try_into().unwrap()), t as u64 * 0x10001, "thread {t}");
            assert_eq!(u64::from_le_bytes(rec[8..].try_into().unwrap()), 0, "thread {t}: RZ:RZ stored");
        }
    }

    /// SM80..SM89's ptxas writes moves as IMADs of RZ by RZ (the `hsetp2_rrr_p` builds):
    /// ptxas's own words read as the family's ptxas-only helpers, and run as `MOV`s do, the
    /// stack pointer's offset giving the driver's stack pointer; SM90's file has neither.
    #[test]
    fn sm8x_imad_moves_read_and_run_as_moves() {
        use super::super::helpers::{encode_for, Sched};
        let sm80 = Target::ALL[0];
        let sp = 0x000f_e400_078e_00ff_0000_0a00_ff01_7624u128;
        let mov = 0x000f_d600_078e_0006_0000_00ff_ff0a_7224u128;
        assert_eq!(classify_for(sm80, sp), Some((Op::ImadMovU32Const, [1, 0x28, 0, 0])));
        assert_eq!(classify_for(sm80, mov), Some((Op::ImadMovU32, [10, 6, 0, 0])));
        assert_eq!((classify(sp), classify(mov)), (None, None), "SM90 reads neither");
        let out = sm80.param_base + 8;
        let prog: Vec<(Op, Vec<u32>)> = vec![
            (Op::S2rTidX, vec![0]),
            (Op::ImadMovU32Const, vec![1, sm80.stack_pointer_offset, 0]),
            (Op::ImadMovU32, vec![2, 0]),
            (Op::ImadMovU32, vec![3, 1]),
            // R4:R5 = the output pointer, halves read apart
            (Op::ImadMovU32Const, vec![4, out, 0]),
            (Op::ImadMovU32Const, vec![5, out + 4, 0]),
            (Op::ImadWideU32Imm, vec![4, 0, 8, 4]),
            (Op::Uldc64, vec![6, sm80.descriptor_offset, 0]),
            (Op::StgE64, vec![4, 2, 6]),
            (Op::Exit, vec![]),
        ];
        let mut text: Vec<u128> = prog.iter().map(|(op, a)| encode_for(sm80, *op, a, Sched::safe(*op)).unwrap()).collect();
        let exit = (text.len() as u32 - 1) * 16;
        text.resize(16, encode_for(sm80, Op::Nop, &[], Sched::safe(Op::Nop)).unwrap());
        let p = Program::load(&Image { target: sm80, text, bank3: vec![0; 16], regcount: 16, exits: vec![exit] }).unwrap();
        let base = 0x1_0000u64;
        let mut mem = Regions(vec![(base, vec![0xa5; 32 * 8])]);
        let launch = Launch { grid: [1, 1, 1], block: [32, 1, 1], params: [0, base] };
        run(&p, &launch, &mut mem, &mut reference_hook).unwrap();
        for (t, rec) in mem.0[0].1.chunks_exact(8).enumerate() {
            let got = [u32::from_le_bytes(rec[..4].try_into().unwrap()), u32::from_le_bytes(rec[4..].try_into().unwrap())];
            assert_eq!(got, [t as u32, STACK_TOP], "thread {t}: R2 = tid, R3 = R1 = the stack pointer");
        }
    }

    #[test]
    fn misaligned_register_pairs_and_quads_are_refused() {
        use super::super::helpers::{encode, Sched};
        let run_one = |op: Op, args: Vec<u32>| {
            let text: Vec<u128> = [(Op::S2rTidX, vec![0]), (op, args), (Op::Exit, vec![])]
                .iter()
                .map(|(op, a)| encode(*op, a, Sched::safe(*op)).unwrap())
                .chain(std::iter::repeat_n(encode(Op::Nop, &[], Sched::safe(Op::Nop)).unwrap(), 5))
                .collect();
            let p = Program::load(&Image { target: Target::DEFAULT, text, bank3: vec![0; 16], regcount: 16, exits: vec![32] }).unwrap();
            let launch = Launch { grid: [1, 1, 1], block: [32, 1, 1], params: [0, 0x1_0000] };
            run(&p, &launch, &mut Regions(vec![(0x1_0000, vec![0; 4096])]), &mut reference_hook)
        };
        for (op, args, want) in [
            (Op::Ldc64, vec![3, PARAM_BASE + 8, 0], "LDC_64 names 2 registers from R3"),
            (Op::Uldc64, vec![5, 0x208, 0], "from UR5"),
            (Op::ImadWideU32Imm, vec![2, 0, 3, 5], "from R5"),
        ] {
            match run_one(op, args) {
                Err(Fault::Register { what, .. }) => assert!(what.contains(want), "{what}"),
                other => panic!("{op:?}: {other:?}"),
            }
        }
        // aligned, and RZ as a pair: no fault
        assert!(run_one(Op::Ldc64, vec![4, PARAM_BASE + 8, 0]).is_ok());
        assert!(run_one(Op::ImadWideU32Imm, vec![2, 0, 3, RZ as u32]).is_ok());
        assert_eq!(misaligned(Op::LdgE128, &[6, 4, 4, 0]).unwrap(), "LDG_E_128 names 4 registers from R6, not a multiple of 4");
        assert_eq!(misaligned(Op::StgE64, &[4, 2, URZ as u32, 0]), None);
    }

    #[test]
    fn logged_stores_must_cover_each_word_once() {
        let mut m = Logged { mem: Regions(vec![(0x100, vec![0; 16])]), writes: Vec::new() };
        for a in [0x108, 0x100, 0x10c, 0x104] {
            assert!(m.write(a, &[1, 2, 3, 4]));
        }
        assert_eq!(m.one_store_per_word(0x100, 4, 4), Ok(()));
        assert!(m.one_store_per_word(0x100, 5, 4).unwrap_err().contains("4 stores"));
        assert!(m.one_store_per_word(0x100, 2, 8).unwrap_err().contains("not 8"));
        m.write(0x104, &[0; 4]);
        assert!(m.one_store_per_word(0x100, 4, 4).unwrap_err().contains("two stores to 0x104"));
    }

    #[test]
    fn regions_refuse_accesses_outside_one_allocation() {
        let mut m = Regions(vec![(0x1000, vec![0; 16]), (0x2000, vec![0; 16])]);
        assert!(m.write(0x100c, &7u32.to_le_bytes()));
        let mut b = [0u8; 4];
        assert!(m.read(0x100c, &mut b) && u32::from_le_bytes(b) == 7);
        assert!(!m.read(0x100e, &mut b), "straddles the end");
        assert!(!m.write(0x1ffc, &b), "between allocations");
    }
}
