//! The scaffold road: kernels ptxas compiled around each instruction form, one word rewritten.
//!
//! Why: the batch kernel is our own code around the word under test; on an H200 only its
//! one-case shape ran. A scaffold is ptxas's own code (`kernels/scaffold/*.ptx`, built by
//! `kernels/build-scaffolds.sh` with the pinned ptxas for each target, cubins committed as
//! `<name>.<sm_NN>.cubin`; [`Scaffold::cubin`] picks a target's): thread `t` loads
//! a record `(a, b, c, x)` (four u32) from `in + 16 t`, the instruction stands in the code
//! as ptxas placed it, and four words go to `out + 16 t` (the result among them). The
//! patcher rewrites that one word and nothing else; its registers, predicate, control bits
//! and unused bits stay ptxas's. So a case runs as the word [`fit`] gives: the case's
//! opcode, modifiers and immediates on the scaffold's registers and control bits; that word
//! is the one recorded.
//!
//! Each scaffold is read from its code once a target ([`scaffolds_for`]): the instruction's
//! word is the only word in `.text` of the op, form and register pattern the scaffold's
//! name says (a scaffold of two-source ops or of HFMA2 holds a second family instruction
//! ptxas needs to pick the non-MMA opcode: a decoy on other inputs, whose result lands in
//! another output word; sm_80's ptxas makes some instructions HFMA2.MMA all the same, and
//! such a build serves no case there, its error saying why); which record word feeds
//! each of its register sources and which output word holds its result are found by
//! running the scaffold once on the emulator with marked inputs.
//!
//! `c[0x3][offset]` sources: ptxas 13.0 never wrote one for these instructions (it loads a
//! `.const` word or a parameter with `LDC` into a register first), so a `c[]` case stands on
//! its register form's scaffold, that register operand rewritten into the case's bank and
//! offset, and the case's bank word written into ptxas's `.nv.constant3` (data, read by
//! every thread).
//!
//! Predicate results: HSETP2 stands on `hsetp2_rrr`, whose `selp`s store its two predicate
//! results as values (1 or 0, 2 or 0); the marker run finds where each comes back
//! ([`Loaded::pred_slots`]), a case's predicate results are fitted to the scaffold's as its
//! registers are, and [`ScaffoldBuilt::preds`] rebuilds the predicate file after the word. The
//! other scaffolds store no predicate, and serve no word that writes one.
//!
//! Predicate sources: `hset2_rrr_p` and `hsetp2_rrr_p` (`_p`) set the predicate their
//! instruction reads per thread from the record's x word (`setp.ne.u32`, ptxas's
//! `ISETP.NE.U32.AND P0, PT, Rx, RZ, PT`); a second marker run (record word k set where bit k
//! of the thread index is) finds which record word sets it and which predicate it is
//! ([`Loaded::psrc_slot`]). A word whose predicate source (HSET2, HSETP2) or selector (HMNMX2,
//! at the same bits) reads P0..P6 stands on a `_p` scaffold only, its source index the
//! scaffold's and its negation its own; [`build_for`] writes x from the case input's bit of
//! that predicate, which [`ScaffoldBuilt::effective_inputs`] reports as the file the word
//! read. A word whose source is PT or !PT stands on a scaffold that sets none. sm_80..sm_89's
//! `hsetp2_rrr_p` opens with ptxas's `IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]`, which the
//! emulator reads as a ptxas-only helper (`helpers::Op::ImadMovU32Const`).
//!
//! What maps onto no scaffold is "not runnable on this road" ([`runnable`]), never run as
//! something else: forms ptxas was not made to emit from PTX here (`cx[]`: PTX has no
//! bindless constant bank; `UR`: ptxas kept the values in general registers in every kernel
//! tried), words with a `.RELU` predicate operand other than PT (no scaffold sets one; a
//! guard predicate becomes the scaffold's PT, like its registers), a predicate source P0..P6
//! where no `_p` scaffold serves the word (its register pattern or form), and register
//! patterns with no scaffold (which operands coincide, RZ).

use super::{Case, LaunchJob, NotRunnable, PatchError, KERNEL_NAME};
use crate::inputs::Inputs;
use crate::isa::{decode, encode, Form, Inst, Op, Operand2, Pred, PT, RZ};
use crate::target::Target;
use std::sync::OnceLock;

/// One committed scaffold: its name (`<instruction>_<form>[_<pattern>]`: `ab` Ra = Rb, `da`
/// Rd = Ra, `abc` Ra = Rb = Rc; none: distinct registers; `p`: distinct registers and a
/// predicate source P0..P6 set from a record word), PTX and one cubin per target.
#[derive(Debug)]
pub struct Scaffold {
    pub name: &'static str,
    pub ptx: &'static str,
    /// ptxas's build for each target, in [`Target::ALL`]'s order ([`Scaffold::cubin`]).
    cubins: [&'static [u8]; Target::ALL.len()],
}

impl Scaffold {
    /// ptxas's build of this scaffold for `target` (`kernels/scaffold/<name>.<sm_NN>.cubin`).
    pub fn cubin(&self, target: &Target) -> &'static [u8] {
        // a target outside Target::ALL has no build: an empty file, which no ELF reader takes
        Target::ALL.iter().position(|t| t.sm == target.sm).map_or(&[][..], |k| self.cubins[k])
    }

    /// The committed file of [`Scaffold::cubin`], relative to the repository root: the one
    /// naming rule (`kernels/build-scaffolds.sh` writes these names).
    pub fn cubin_file(&self, target: &Target) -> String {
        format!("kernels/scaffold/{}.{}.cubin", self.name, target.ptxas)
    }
}

/// A scaffold's files: its PTX and its cubins, one per target in [`Target::ALL`]'s order
/// (a test checks each cubin's ELF names that target).
macro_rules! scaffold {
    ($name:literal) => {
        Scaffold {
            name: $name,
            ptx: include_str!(concat!("../../../../kernels/scaffold/", $name, ".ptx")),
            cubins: [
                include_bytes!(concat!("../../../../kernels/scaffold/", $name, ".sm_80.cubin")),
                include_bytes!(concat!("../../../../kernels/scaffold/", $name, ".sm_86.cubin")),
                include_bytes!(concat!("../../../../kernels/scaffold/", $name, ".sm_89.cubin")),
                include_bytes!(concat!("../../../../kernels/scaffold/", $name, ".sm_90.cubin")),
                include_bytes!(concat!("../../../../kernels/scaffold/", $name, ".sm_100.cubin")),
                include_bytes!(concat!("../../../../kernels/scaffold/", $name, ".sm_120.cubin")),
            ],
        }
    };
}

/// Every committed scaffold (`kernels/scaffold/`).
pub const SCAFFOLDS: &[Scaffold] = &[
    scaffold!("hmul2_rrr"),
    scaffold!("hmul2_rrr_ab"),
    scaffold!("hmul2_rrr_da"),
    scaffold!("hmul2_imm"),
    scaffold!("hmul2_imm_da"),
    scaffold!("hadd2_rrr"),
    scaffold!("hadd2_rrr_ab"),
    scaffold!("hadd2_rrr_da"),
    scaffold!("hadd2_imm"),
    scaffold!("hadd2_imm_da"),
    scaffold!("hfma2_rrrr"),
    scaffold!("hfma2_rrrr_da"),
    scaffold!("hfma2_rrrr_abc"),
    scaffold!("hfma2_imm"),
    scaffold!("hfma2_imm_da"),
    scaffold!("hfma2_imm_c"),
    scaffold!("hfma2_imm_c_da"),
    scaffold!("hfma2_mma_rrrr"),
    scaffold!("hsetp2_rrr"),
    scaffold!("hset2_rrr_p"),
    scaffold!("hsetp2_rrr_p"),
];

/// Words of one record (input) and one output record, per thread.
pub const RECORD_WORDS: usize = 4;

/// A scaffold as read from its code.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub scaffold: &'static Scaffold,
    /// The target whose build this is.
    pub target: &'static Target,
    /// The instruction as ptxas wrote it.
    pub word: u128,
    pub inst: Inst,
    pub form: Form,
    /// Byte offset of the word in the cubin file.
    pub file_offset: usize,
    /// Index of the word in `.text`.
    pub index: usize,
    /// Record word (0..4) each register source reads: a, b, c (None: not a register).
    pub slots: [Option<usize>; 3],
    /// Output word (0..4) holding the register result (None: the instruction writes none).
    pub out_slot: Option<usize>,
    /// Where its predicate results come back (None: it writes none), one per predicate it
    /// writes, in `pdst`'s order: the output word holding the `selp` value and the value it
    /// holds where the predicate is true (0 where false).
    pub pred_slots: Option<[PredSlot; 2]>,
    /// Where its predicate source P0..P6 is set (None: it reads none, or PT): the record
    /// word (0..4) whose being non-zero makes the predicate true, and the predicate (0..=6)
    /// the word reads, as the second marker run found them.
    pub psrc_slot: Option<(usize, u8)>,
}

/// Where one predicate result comes back: the output word and the value it holds where the
/// predicate is true (0 where false).
pub type PredSlot = (usize, u32);

impl Loaded {
    /// ptxas's cubin this was read from.
    pub fn cubin(&self) -> &'static [u8] {
        self.scaffold.cubin(self.target)
    }

    /// Byte offset of the word in `.text` (as nvdisasm numbers it).
    pub fn file_offset_in_text(&self) -> usize {
        16 * self.index
    }
}

/// Which operands name the same register: dst, a, b, c as classes (first-seen numbering;
/// RZ is its own class, `u8::MAX`; a non-register source is absent).
/// Source `drop` (1: b, 2: c) is left out: the operand a `c[]` case puts in the bank,
/// whatever register the scaffold has there.
fn pattern_without(i: &Inst, drop: Option<usize>) -> Vec<u8> {
    let reg = |o: Option<Operand2>| match o {
        Some(Operand2::Reg(r)) => Some(r),
        _ => None,
    };
    let (b, c) = (if drop == Some(1) { None } else { Some(i.b) }, if drop == Some(2) { None } else { i.c });
    let regs: Vec<u8> = [Some(i.dst), Some(i.a), reg(b), reg(c)].into_iter().flatten().collect();
    let mut seen: Vec<u8> = Vec::new();
    regs.iter()
        .map(|&r| {
            if r == RZ {
                return u8::MAX;
            }
            match seen.iter().position(|&s| s == r) {
                Some(k) => k as u8,
                None => {
                    seen.push(r);
                    (seen.len() - 1) as u8
                }
            }
        })
        .collect()
}

/// The op a scaffold stands for, from its name.
fn op_of_name(name: &str) -> Option<Op> {
    [("hfma2_mma_", Op::Hfma2Mma), ("hfma2_", Op::Hfma2), ("hmul2_", Op::Hmul2), ("hadd2_", Op::Hadd2), ("hsetp2_", Op::Hsetp2), ("hset2_", Op::Hset2)]
        .into_iter()
        .find(|(p, _)| name.starts_with(p))
        .map(|(_, o)| o)
}

/// What a scaffold's name says its instruction is: op, form, which registers coincide
/// (as [`pattern_without`] numbers them) and whether it reads a predicate source P0..P6
/// (`_p`). ptxas's code may hold other words of the op beside it (a decoy, or a constant's
/// move); this picks the one the scaffold stands for.
fn shape_of_name(name: &str) -> Option<(Op, Form, Vec<u8>, bool)> {
    let op = op_of_name(name)?;
    let rest = name
        .trim_start_matches("hfma2_mma_")
        .trim_start_matches("hfma2_")
        .trim_start_matches("hmul2_")
        .trim_start_matches("hadd2_")
        .trim_start_matches("hsetp2_")
        .trim_start_matches("hset2_");
    let (form, pattern) = [("rrrr", Form::Rrrr), ("rrr", Form::Rrr), ("imm_c", Form::ImmC), ("imm", Form::Imm)]
        .into_iter()
        .find_map(|(p, f)| rest.strip_prefix(p).map(|r| (f, r.trim_start_matches('_'))))?;
    // dst, a, then the register sources the form has
    let regs = 2 + match form {
        Form::Rrrr => 2,
        Form::Rrr | Form::ImmC => 1,
        _ => usize::from(op.spec().sources == 3),
    };
    let psrc = pattern == "p";
    let classes: &[u8] = match pattern {
        "" | "p" => &[0, 1, 2, 3],
        "ab" => &[0, 1, 1, 2],
        "da" => &[0, 0, 1, 2],
        "abc" => &[0, 1, 1, 1],
        _ => return None,
    };
    // an instruction that writes no register names RZ there (its own class); its sources
    // are numbered from 0
    if !op.layout().writes_reg {
        let mut v = vec![u8::MAX];
        v.extend(classes[1..regs].iter().map(|&c| c - 1));
        return Some((op, form, v, psrc));
    }
    Some((op, form, classes[..regs].to_vec(), psrc))
}

/// Marks of the marker run: record word `k` of thread `t` holds `IN_MARK + k << 16 + t`;
/// the instruction's result is `OUT_MARK + t`.
const IN_MARK: u32 = 0x5100_0000;
const OUT_MARK: u32 = 0x7e57_0000;

/// The predicate file thread `t`'s word leaves in the marker run: t's low seven bits (the
/// threads of one run set and clear each of P0..P4 among them).
fn pred_mark(t: u32) -> u8 {
    (t & 0x7f) as u8
}

/// Read one scaffold's build for `target`: find its instruction's word (the only word of
/// its op, form and register pattern in `.text`) and where its sources and result live.
/// Where ptxas's code for `target` holds no such word (SM80's ptxas computes some of them
/// with HFMA2.MMA), the error says so and the scaffold serves no case there.
fn load(s: &'static Scaffold, target: &'static Target) -> Result<Loaded, String> {
    let name = format!("{} ({target})", s.name);
    let (op, want_form, want_pattern, want_psrc) = shape_of_name(s.name).ok_or_else(|| format!("{name}: the name names no instruction form"))?;
    let cubin = s.cubin(target);
    let image = super::elf::image(cubin).map_err(|e| format!("{name}: {e}"))?;
    if image.target != target {
        return Err(format!("{name}: the cubin is {}'s", image.target));
    }
    // an op with the same sources serves as well (the opcode is among the bits a case
    // rewrites): sm_80's ptxas makes HFMA2's scaffolds HFMA2.MMA, SM86..SM120's make
    // `hfma2_mma_rrrr` an HFMA2; the name's own op is preferred where both are there
    let shape = |w: u128| -> Option<(Inst, Form)> {
        let i = decode(w).ok().filter(|i| same_sources(i.op, op))?;
        let (_, f) = crate::isa::decode::form_of(w).ok()?;
        (f == want_form && pattern_without(&i, None) == want_pattern && reads_psrc(&i) == want_psrc).then_some((i, f))
    };
    let mut at: Vec<usize> = image.text.iter().enumerate().filter(|(_, &w)| shape(w).is_some()).map(|(k, _)| k).collect();
    if at.len() > 1 {
        at.retain(|&k| shape(image.text[k]).is_some_and(|(i, _)| i.op == op));
    }
    let [index] = at[..] else {
        return Err(format!("{name}: {} words of {op} {} with registers {want_pattern:?} in .text, want one", at.len(), want_form.cli_name()));
    };
    let word = image.text[index];
    let Some((inst, form)) = shape(word) else { return Err(format!("{name}: its word does not decode")) };
    let bytes = word.to_le_bytes();
    let hits: Vec<usize> = cubin.windows(16).enumerate().filter(|(_, w)| *w == bytes).map(|(k, _)| k).collect();
    let [file_offset] = hits[..] else { return Err(format!("{name}: its instruction's bytes occur {} times in the file", hits.len())) };
    let s_name = name.as_str();
    // the marker run: which record word each source reads, which output word is the result
    let program = super::emu::Program::load(&image).map_err(|e| format!("{s_name}: {e}"))?;
    let threads = super::road::SINGLE_THREADS;
    // predicate results: thread t's word leaves the file P0..P6 = t's low seven bits
    let writes_preds = crate::reference::writes_preds(inst.op);
    // one run of the scaffold on the emulator with record word k of thread t `mark(t, k)`:
    // what each thread's word read (None: it never ran there) and the output
    let marked = |mark: &dyn Fn(usize, usize) -> u32| -> Result<(Vec<Option<Inputs>>, Vec<u8>), String> {
        const IN: u64 = 0x7f00_0000_0000;
        const OUT: u64 = 0x7f10_0000_0000;
        let input: Vec<u8> = (0..threads).flat_map(|t| (0..RECORD_WORDS).flat_map(move |k| mark(t, k).to_le_bytes())).collect();
        let mut mem = super::emu::Regions(vec![(IN, input), (OUT, vec![0; threads * RECORD_WORDS * 4])]);
        let launch = super::emu::Launch { grid: [1, 1, 1], block: [threads as u32, 1, 1], params: [IN, OUT] };
        let mut seen: Vec<Option<Inputs>> = vec![None; threads];
        let mut hook = |site: &super::emu::Site| {
            if site.index == index {
                if let Some(v) = seen.get_mut(site.tid as usize) {
                    *v = Some(site.inputs);
                }
                super::emu::Written { dst: OUT_MARK + site.tid, preds: writes_preds.then_some(pred_mark(site.tid)) }
            } else {
                super::emu::reference_effects(site)
            }
        };
        super::emu::run_effects(&program, &launch, &mut mem, &mut hook).map_err(|e| format!("{s_name}: the emulator cannot run it: {e}"))?;
        let out = mem.0.pop().map(|(_, o)| o).unwrap_or_default();
        Ok((seen, out))
    };
    let (seen, out) = marked(&|t, k| IN_MARK + ((k as u32) << 16) + t as u32)?;
    let x = seen.first().copied().flatten().ok_or_else(|| format!("{s_name}: its instruction never ran"))?;
    let slot = |v: u32, what: &str| -> Result<usize, String> {
        (0..RECORD_WORDS).find(|&k| v == IN_MARK + ((k as u32) << 16)).ok_or_else(|| format!("{s_name}: operand {what} reads {v:#x}, no record word"))
    };
    let is_reg = |o: Option<Operand2>| matches!(o, Some(Operand2::Reg(r)) if r != RZ);
    let slots = [
        if inst.a == RZ { None } else { Some(slot(x.a, "a")?) },
        if is_reg(Some(inst.b)) { Some(slot(x.b, "b")?) } else { None },
        if is_reg(inst.c) { Some(slot(x.c, "c")?) } else { None },
    ];
    let word_at = |k: usize| u32::from_le_bytes([out[4 * k], out[4 * k + 1], out[4 * k + 2], out[4 * k + 3]]);
    let out_slot = (0..RECORD_WORDS).find(|&k| (0..threads).all(|t| word_at(t * RECORD_WORDS + k) == OUT_MARK + t as u32));
    if out_slot.is_none() && inst.op.layout().writes_reg {
        return Err(format!("{s_name}: no output word holds its result"));
    }
    let pred_slots = match inst.pdst.filter(|_| writes_preds) {
        None => None,
        Some(pd) => {
            // the output word that is v where thread t's predicate is true and 0 where false
            let slot_of = |p: u8| -> Result<PredSlot, String> {
                let on = |t: usize| p < 7 && pred_mark(t as u32) >> p & 1 == 1;
                (0..RECORD_WORDS)
                    .find_map(|k| {
                        let v = (0..threads).find(|&t| on(t)).map(|t| word_at(t * RECORD_WORDS + k))?;
                        (v != 0 && (0..threads).all(|t| word_at(t * RECORD_WORDS + k) == if on(t) { v } else { 0 })).then_some((k, v))
                    })
                    .ok_or_else(|| format!("{s_name}: no output word holds its predicate result P{p}"))
            };
            Some([slot_of(pd[0])?, slot_of(pd[1])?])
        }
    };
    if pred_slots.is_some_and(|[x, y]| x.0 == y.0) {
        return Err(format!("{s_name}: its two predicate results come back in one word"));
    }
    // a predicate source P0..P6: the second marker run sets record word k of thread t where
    // bit k of t is set (0 elsewhere); the record word whose pattern the predicate the word
    // reads follows, thread by thread, is the one that sets it
    let psrc_slot = match inst.psrc.filter(|p| p.index != PT) {
        None => None,
        Some(p) => {
            let on = |t: usize, k: usize| t >> k & 1 == 1;
            let (seen, _) = marked(&|t, k| if on(t, k) { IN_MARK + ((k as u32) << 16) + t as u32 } else { 0 })?;
            let read: Vec<Option<bool>> = seen.iter().map(|x| x.map(|x| x.pred >> p.index & 1 == 1)).collect();
            let k = (0..RECORD_WORDS)
                .find(|&k| read.iter().enumerate().all(|(t, &r)| r == Some(on(t, k))))
                .ok_or_else(|| format!("{s_name}: no record word sets its predicate source P{}", p.index))?;
            if slots.contains(&Some(k)) {
                return Err(format!("{s_name}: record word {k} sets its predicate source and feeds a register source"));
            }
            Some((k, p.index))
        }
    };
    Ok(Loaded { scaffold: s, target, word, inst, form, file_offset, index, slots, out_slot, pred_slots, psrc_slot })
}

/// Every scaffold of SM90, read once (an error says what is wrong with one; the tests
/// require none on SM90).
pub fn scaffolds() -> &'static [Result<Loaded, String>] {
    scaffolds_for(Target::DEFAULT)
}

/// Every scaffold of `target`, read once, in [`SCAFFOLDS`]' order: an error says why ptxas's
/// build for `target` serves no case (the cases it would have served are not runnable on
/// this road there, unless another scaffold serves them).
pub fn scaffolds_for(target: &'static Target) -> &'static [Result<Loaded, String>] {
    static ALL: [OnceLock<Vec<Result<Loaded, String>>>; Target::ALL.len()] = [const { OnceLock::new() }; Target::ALL.len()];
    let Some(k) = Target::ALL.iter().position(|t| t.sm == target.sm) else { return &[] };
    ALL[k].get_or_init(|| SCAFFOLDS.iter().map(|s| load(s, Target::ALL[k])).collect())
}

/// Whether `i` reads a predicate source P0..P6 (not PT or !PT).
fn reads_psrc(i: &Inst) -> bool {
    i.psrc.is_some_and(|p| p.index != PT)
}

/// Ops whose words share a layout of sources, so one may stand on the other's scaffold
/// (the opcode is among the bits the patcher rewrites).
fn same_sources(a: Op, b: Op) -> bool {
    a.spec().sources == b.spec().sources
}

/// The word `word` runs as on the scaffold road, and the scaffold: the case's opcode,
/// modifiers and immediates on the scaffold's registers, guard predicate (PT: no scaffold
/// sets a guard, so a guarded word runs unguarded), predicate source (a P0..P6 source
/// becomes a `_p` scaffold's, its negation kept), control bits and unused bits. A scaffold of the same instruction is preferred; one of an instruction with the
/// same sources serves otherwise (HMUL2 / HADD2, HFMA2 / HFMA2.MMA). SM90's scaffolds.
pub fn fit(word: u128) -> Result<(u128, &'static Loaded), NotRunnable> {
    fit_for(Target::DEFAULT, word)
}

/// [`fit`] on `target`'s scaffolds. A target other than SM90 fits only the words it reads
/// as SM90 does ([`super::reads_as_sm90`]) other than `c[]`/`cx[]` words; the others are not
/// runnable here, never run as something else.
pub fn fit_for(target: &'static Target, word: u128) -> Result<(u128, &'static Loaded), NotRunnable> {
    let case = decode(word).map_err(|e| NotRunnable::Illegal(e.to_string()))?;
    super::runnable_fields(&case)?;
    // the fit below decodes and encodes with SM90's tables: another target fits only the
    // words it reads as SM90 does, and no c[]/cx[] word (its scaffolds hold no bank case)
    if target != Target::DEFAULT && !super::reads_as_sm90(target, word) {
        return Err(NotRunnable::NoScaffold(format!("{target} reads this word otherwise than SM90 does: the scaffold road fits words with SM90's tables")));
    }
    if case.relu.is_some_and(|p| p.index != PT) {
        return Err(NotRunnable::NoScaffold("a .RELU predicate operand other than PT: no scaffold sets one".into()));
    }
    let (_, form) = crate::isa::decode::form_of(word).map_err(|e| NotRunnable::Illegal(e.to_string()))?;
    if target != Target::DEFAULT && matches!(form, Form::Const | Form::ConstUr | Form::ConstC | Form::ConstUrC) {
        return Err(NotRunnable::NoScaffold(format!("a c[] or cx[] word: {target}'s scaffolds hold no constant-bank case (SM90's alone do)")));
    }
    // c[0x3][offset] stands on the register form's scaffold: the operand's register becomes
    // the bank word (ptxas loads `.const` data with LDC into a register, never as an operand)
    let (on_form, bank) = match (form, case.c.is_some()) {
        (Form::Const, false) => (Form::Rrr, Some(1)),
        (Form::Const, true) => (Form::Rrrr, Some(1)),
        (Form::ConstC, _) => (Form::Rrrr, Some(2)),
        (f, _) => (f, None),
    };
    let want = pattern_without(&case, bank);
    let mut candidates: Vec<&Loaded> = scaffolds_for(target)
        .iter()
        .flatten()
        .filter(|l| {
            l.form == on_form
                && pattern_without(&l.inst, bank) == want
                && same_sources(l.inst.op, case.op)
                // predicate results come back only from a scaffold that stores them
                && (l.pred_slots.is_some() == crate::reference::writes_preds(case.op))
                // a predicate source P0..P6 is read only where a scaffold sets one
                && (l.psrc_slot.is_some() == reads_psrc(&case))
        })
        .collect();
    candidates.sort_by_key(|l| l.inst.op != case.op);
    for l in candidates {
        let s = &l.inst;
        let mut i = case;
        i.dst = s.dst;
        i.a = s.a;
        if matches!(i.b, Operand2::Reg(_)) {
            i.b = s.b;
        }
        if matches!(i.c, Some(Operand2::Reg(_))) {
            i.c = s.c;
        }
        i.pred = s.pred;
        // predicate results: the scaffold's, which its `selp`s store
        if i.pdst.is_some() {
            i.pdst = s.pdst;
        }
        // a predicate source P0..P6: the scaffold's, which its record word sets; the
        // negation stays the case's
        if let (Some(p), Some((_, q))) = (i.psrc.filter(|_| reads_psrc(&case)), l.psrc_slot) {
            i.psrc = Some(Pred { index: q, negated: p.negated });
        }
        i.ctrl = s.ctrl;
        i.ignored = if s.op == case.op && bank.is_none() { s.ignored } else { 0 };
        if let Ok(w) = encode(&i) {
            if target == Target::DEFAULT || super::reads_as_sm90(target, w) {
                return Ok((w, l));
            }
        }
    }
    let forms: Vec<String> = scaffolds_for(target).iter().flatten().map(|l| l.scaffold.name.to_string()).collect();
    Err(NotRunnable::NoScaffold(format!(
        "no {target} scaffold of {} {} with its registers' pattern {want:?}{} (scaffolds: {})",
        case.op,
        form.cli_name(),
        if reads_psrc(&case) { " and a predicate source P0..P6" } else { "" },
        forms.join(", ")
    )))
}

/// Whether `word` runs on the scaffold road as it is: it must be its own [`fit`] (a word
/// is never run as another).
pub fn runnable(word: u128) -> Result<&'static Loaded, NotRunnable> {
    runnable_for(Target::DEFAULT, word)
}

/// [`runnable`] on `target`'s scaffolds.
pub fn runnable_for(target: &'static Target, word: u128) -> Result<&'static Loaded, NotRunnable> {
    let (w, l) = fit_for(target, word)?;
    if w != word {
        return Err(NotRunnable::NoScaffold(format!("runs only as {} (the scaffold's registers and control bits)", crate::isa::format_hex(w))));
    }
    Ok(l)
}

/// A patched scaffold: one case, [`RECORD_WORDS`] output words per thread.
#[derive(Clone, Debug)]
pub struct ScaffoldBuilt {
    pub job: LaunchJob,
    /// The scaffold it was patched from (`kernels/scaffold/<name>.ptx`).
    pub name: &'static str,
    slots: [Option<usize>; 3],
    /// A `c[0x3]` source (1: b, 2: c) and the bank word written for it.
    konst: Option<(usize, u32)>,
    out_slot: Option<usize>,
    /// The predicates the word writes (`pdst`, the scaffold's) and where they come back.
    preds: Option<([u8; 2], [PredSlot; 2])>,
    /// The predicate source P0..P6 the word reads (the scaffold's) and the record word that
    /// sets it (None: it reads none).
    psrc: Option<(usize, u8)>,
    /// The predicate file before the word per thread: the source predicate's bit as its
    /// record word set it, every other predicate 0.
    pred_in: Vec<u8>,
    threads: usize,
}

impl ScaffoldBuilt {
    /// Destination values per thread. An instruction that writes no register (HSETP2) has
    /// RZ there, which reads 0 (the reference's value for it); its results are its
    /// predicates ([`ScaffoldBuilt::preds`]).
    pub fn results(&self, output: &[u8]) -> Result<Vec<u32>, PatchError> {
        let records = self.records(output)?;
        Ok(records.map(|r| self.out_slot.map_or(0, |k| r[k])).collect())
    }

    /// The predicate file after the word per thread (bit i = Pi), where the word writes
    /// predicates (None: it writes none, and the scaffold reads no predicate back): its
    /// results from the scaffold's `selp` stores; every other predicate as the file was
    /// before it ([`ScaffoldBuilt::effective_inputs`]: a predicate source's bit as its record
    /// word set it where no result overwrites it, the others 0). A stored value that is
    /// neither the predicate's true value nor 0 is an error.
    pub fn preds(&self, output: &[u8]) -> Result<Option<Vec<u8>>, PatchError> {
        let Some((pd, slots)) = self.preds else { return Ok(None) };
        let records = self.records(output)?;
        let mut file = Vec::with_capacity(self.threads);
        let written = pd.iter().filter(|&&p| p < 7).fold(0u8, |m, &p| m | 1 << p);
        for (t, r) in records.enumerate() {
            let mut f = self.pred_in.get(t).copied().unwrap_or(0) & !written;
            for (&p, &(k, on)) in pd.iter().zip(&slots) {
                match r[k] {
                    0 => {}
                    v if v == on => f |= 1 << p,
                    v => return Err(PatchError::Malformed(format!("thread {t}: P{p}'s stored value {v:#x}, want {on:#x} or 0"))),
                }
            }
            file.push(f);
        }
        Ok(Some(file))
    }

    /// The output's records, [`RECORD_WORDS`] words each, one per thread.
    fn records<'o>(&self, output: &'o [u8]) -> Result<impl Iterator<Item = [u32; RECORD_WORDS]> + 'o, PatchError> {
        let want = self.threads * RECORD_WORDS * 4;
        if output.len() != want {
            return Err(PatchError::OutputSize { got: output.len(), expected: want });
        }
        Ok(output.chunks_exact(RECORD_WORDS * 4).map(|r| std::array::from_fn(|k| u32::from_le_bytes([r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]]))))
    }

    /// The inputs the case's threads really read: a, and b and c where registers, from
    /// their record words (a source sharing another's register reads that one's value);
    /// immediates as given; d 0 (no register of it is loaded before it writes); the
    /// predicate file: the predicate source's bit where the word reads one P0..P6 (its
    /// record word was written from the case input's bit), every other predicate 0 (the
    /// word is not guarded, and the scaffold sets no other).
    pub fn effective_inputs(&self, case: &Case) -> Result<Vec<Inputs>, PatchError> {
        Ok(case
            .inputs
            .iter()
            .enumerate()
            .map(|(t, x)| {
                let given = [x.a, x.b, x.c];
                let of = |k: usize, own: u32| self.slots[k].map_or(own, |s| (0..3).find(|&j| self.slots[j] == Some(s)).map_or(own, |j| given[j]));
                let pred = if self.psrc.is_some() { self.pred_in.get(t).copied().unwrap_or(0) } else { 0 };
                let mut v = Inputs { a: of(0, x.a), b: of(1, x.b), c: of(2, x.c), d: 0, pred };
                match self.konst {
                    Some((1, k)) => v.b = k,
                    Some((_, k)) => v.c = k,
                    None => {}
                }
                v
            })
            .collect())
    }
}

/// Where `.nv.constant3`'s bytes start in a cubin file.
fn bank3_file_offset(cubin: &[u8]) -> Result<usize, PatchError> {
    use object::{Object, ObjectSection};
    let f = object::File::parse(cubin).map_err(|e| PatchError::Malformed(format!("ELF: {e}")))?;
    let s = f.section_by_name(".nv.constant3").ok_or_else(|| PatchError::MissingSection(".nv.constant3".into()))?;
    let (at, _) = s.file_range().ok_or_else(|| PatchError::Malformed(".nv.constant3 holds no file bytes".into()))?;
    Ok(at as usize)
}

/// The patched scaffold of one case: ptxas's cubin with the instruction's word replaced by
/// the case's (which must be its own [`fit`]); every other byte as ptxas wrote it, but for
/// a `c[0x3][offset]` case the bank word at that offset (data: the case's first input's
/// operand, read by every thread). SM90's scaffolds.
pub fn build(case: &Case) -> Result<ScaffoldBuilt, PatchError> {
    build_for(Target::DEFAULT, case)
}

/// [`build`] on `target`'s scaffold (the case's word must be its own [`fit_for`] there).
pub fn build_for(target: &'static Target, case: &Case) -> Result<ScaffoldBuilt, PatchError> {
    let n = case.inputs.len();
    if n == 0 || n > super::MAX_THREADS {
        return Err(PatchError::InputCount { case: 0, got: n, expected: super::MAX_THREADS });
    }
    let l = runnable_for(target, case.word).map_err(|reason| PatchError::NotRunnable { case: 0, word: crate::isa::format_hex(case.word), reason })?;
    let inst = decode(case.word).map_err(|e| PatchError::NotRunnable {
        case: 0,
        word: crate::isa::format_hex(case.word),
        reason: NotRunnable::Illegal(e.to_string()),
    })?;
    let mut cubin = l.cubin().to_vec();
    cubin[l.file_offset..l.file_offset + 16].copy_from_slice(&case.word.to_le_bytes());
    // a c[0x3][offset] source: its word, the case's first input's, in ptxas's bank 3 (data)
    let mut slots = l.slots;
    let mut konst = None;
    for (k, o) in [(1, Some(inst.b)), (2, inst.c)] {
        if let Some(Operand2::Const { offset, .. }) = o {
            let v = if k == 1 { case.inputs[0].b } else { case.inputs[0].c };
            let at = bank3_file_offset(l.cubin())? + offset as usize;
            cubin.get_mut(at..at + 4).ok_or_else(|| PatchError::Malformed(format!("c[0x3][{offset:#x}] is past the bank")))?.copy_from_slice(&v.to_le_bytes());
            slots[k] = None;
            konst = Some((k, v));
        }
    }
    // a predicate source P0..P6: its record word is 1 where the case input's bit of the
    // word's source predicate (the scaffold's) is set, 0 where not
    let psrc = l.psrc_slot.filter(|_| reads_psrc(&inst));
    let pred_in: Vec<u8> = case.inputs.iter().map(|x| psrc.map_or(0, |(_, p)| x.pred & 1 << p)).collect();
    let mut input = vec![0u8; n * RECORD_WORDS * 4];
    for ((rec, x), &pi) in input.chunks_exact_mut(RECORD_WORDS * 4).zip(&case.inputs).zip(&pred_in) {
        for (slot, v) in slots.iter().zip([x.a, x.b, x.c]) {
            if let Some(k) = slot {
                rec[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        if let Some((k, _)) = psrc {
            rec[4 * k..4 * k + 4].copy_from_slice(&u32::from(pi != 0).to_le_bytes());
        }
    }
    Ok(ScaffoldBuilt {
        job: LaunchJob {
            cubin,
            kernel_name: KERNEL_NAME.to_string(),
            grid: [1, 1, 1],
            block: [n as u32, 1, 1],
            shared_bytes: 0,
            input,
            output_bytes: n * RECORD_WORDS * 4,
        },
        name: l.scaffold.name,
        slots,
        konst,
        out_slot: l.out_slot,
        preds: l.inst.pdst.zip(l.pred_slots),
        psrc,
        pred_in,
        threads: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Pred;

    /// Every target's build of every scaffold is that target's cubin, reads as its name says
    /// (its form and register pattern; its op, or one with the same sources) and serves
    /// cases. The builds that hold the other op are those probed with ptxas 13.0.88 (nvdisasm
    /// -c of each): sm_80 computes `fma.rn.f16x2` with HFMA2.MMA in four of HFMA2's
    /// scaffolds, and on SM86..SM120 `hfma2_mma_rrrr` is an HFMA2 (SM100 and SM120 have no
    /// HFMA2.MMA); sm_80's HMUL2 and HADD2 scaffolds have their own PTX
    /// (`<name>.sm_80.ptx`, an fma decoy), without which ptxas makes them HFMA2.MMA too.
    /// Every build serves cases, sm_80's, sm_86's and sm_89's `hsetp2_rrr_p` among them,
    /// whose prologue ptxas writes as `IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]` (and a move
    /// as `IMAD.MOV.U32 R10, RZ, RZ, R6`): the SM80 family's helper spec reads both.
    #[test]
    fn every_targets_scaffolds_are_its_own_and_serve_cases() {
        let mut other_op = Vec::new();
        for t in Target::ALL {
            for (s, l) in SCAFFOLDS.iter().zip(scaffolds_for(t)) {
                assert_eq!(super::super::elf::image(s.cubin(t)).unwrap().target, t, "{}", s.cubin_file(t));
                let l = l.as_ref().unwrap_or_else(|e| panic!("{t}: {e}"));
                let (op, form, pattern, psrc) = shape_of_name(s.name).unwrap();
                assert_eq!((l.target, l.form, pattern_without(&l.inst, None)), (t, form, pattern), "{}", s.cubin_file(t));
                assert_eq!((reads_psrc(&l.inst), l.psrc_slot.is_some()), (psrc, psrc), "{}", s.cubin_file(t));
                assert!(same_sources(l.inst.op, op), "{}: {}", s.cubin_file(t), l.inst.op);
                assert_eq!(l.inst.pred, Pred::ALWAYS);
                if l.inst.op != op {
                    other_op.push(format!("{t}/{}", s.name));
                }
            }
        }
        eprintln!("scaffold builds holding another op with the same sources: {}", other_op.join(", "));
        let mut want: Vec<String> = ["hfma2_rrrr", "hfma2_rrrr_da", "hfma2_imm_da", "hfma2_imm_c_da"].iter().map(|n| format!("SM80/{n}")).collect();
        want.extend(["SM86", "SM89", "SM100", "SM120"].map(|t| format!("{t}/hfma2_mma_rrrr")));
        assert_eq!(other_op, want);
    }

    #[test]
    fn every_scaffold_loads_and_stands_for_its_form() {
        for (s, l) in SCAFFOLDS.iter().zip(scaffolds()) {
            let l = l.as_ref().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(Some(l.inst.op), op_of_name(s.name), "{}", s.name);
            let form = s.name.trim_start_matches("hfma2_mma_").split('_').skip_while(|p| p.starts_with('h')).collect::<Vec<_>>();
            assert!(form.first().is_some_and(|f| l.form.cli_name().replace('-', "_").starts_with(f)), "{}: {:?}", s.name, l.form);
            assert_eq!(l.inst.pred, Pred::ALWAYS);
        }
    }

    #[test]
    fn a_word_runs_on_its_scaffold_with_ptxas_registers_and_control() {
        let w = encode(&Inst::new(0, 1, Operand2::Reg(2))).unwrap();
        let (fitted, l) = fit(w).unwrap();
        assert_eq!(l.scaffold.name, "hmul2_rrr");
        let f = decode(fitted).unwrap();
        assert_eq!((f.dst, f.a, f.b, f.ctrl), (l.inst.dst, l.inst.a, l.inst.b, l.inst.ctrl));
        assert!(runnable(w).is_err(), "the case's own registers are not the scaffold's");
        assert!(runnable(fitted).is_ok());
        // Ra = Rb and Rd = Ra have their own scaffolds
        let (_, l) = fit(encode(&Inst::new(0, 1, Operand2::Reg(1))).unwrap()).unwrap();
        assert_eq!(l.scaffold.name, "hmul2_rrr_ab");
        let (_, l) = fit(encode(&Inst::new(1, 1, Operand2::Reg(2))).unwrap()).unwrap();
        assert_eq!(l.scaffold.name, "hmul2_rrr_da");
        // a guarded word runs unguarded, as the scaffold's own word is
        let guarded = Inst { pred: Pred { index: 2, negated: false }, ..Inst::new(0, 1, Operand2::Reg(2)) };
        let (w, _) = fit(encode(&guarded).unwrap()).unwrap();
        assert_eq!(decode(w).unwrap().pred, Pred::ALWAYS);
        // c[0x3] stands on the register form's scaffold, its b operand rewritten
        let k = Inst::new(0, 1, Operand2::Const { bank: 3, offset: 0x40 });
        let (w, l) = fit(encode(&k).unwrap()).unwrap();
        assert_eq!(l.form, Form::Rrr);
        assert_eq!(decode(w).unwrap().b, Operand2::Const { bank: 3, offset: 0x40 });
        let x = Inputs { a: 0x3c00_3c00, b: 0x4000_4000, ..Default::default() };
        let b = build(&Case { word: w, inputs: vec![x; 32] }).unwrap();
        let at = bank3_file_offset(&b.job.cubin).unwrap() + 0x40;
        assert_eq!(b.job.cubin[at..at + 4], 0x4000_4000u32.to_le_bytes());
        // a word whose registers coincide as no scaffold's do maps onto none (Rd = Rb)
        let db = Inst::new(2, 1, Operand2::Reg(2));
        assert!(matches!(fit(encode(&db).unwrap()), Err(NotRunnable::NoScaffold(_))));
    }

    /// HSETP2 stands on its own scaffold (the only one that stores predicates): its
    /// predicate results become the scaffold's P0 and P1, which the `selp`s store; the
    /// marker run found where each comes back on every target. A predicate source of
    /// P0..P6 takes `hsetp2_rrr_p` instead (below), and HMUL2 never stands on it, nor HSETP2
    /// on HMUL2's.
    #[test]
    fn hsetp2_fits_its_scaffold_and_its_predicates_come_back() {
        for t in Target::ALL {
            let mut i = Inst::of(Op::Hsetp2, 0, 3, Operand2::Reg(4));
            i.pdst = Some([5, PT]);
            i.cmp = Some(crate::isa::Cmp::Lt);
            let w = encode(&i).unwrap();
            let (fitted, l) = fit_for(t, w).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert_eq!(l.scaffold.name, "hsetp2_rrr", "{t}");
            let f = decode(fitted).unwrap();
            assert_eq!((f.pdst, f.cmp, f.a, f.b), (l.inst.pdst, i.cmp, l.inst.a, l.inst.b), "{t}");
            let [(k0, v0), (k1, v1)] = l.pred_slots.unwrap();
            assert_eq!((k0, v0, k1, v1), (0, 1, 1, 2), "{t}: the selp values of the PTX");
            assert_eq!(l.out_slot, None, "{t}");
            // read back: P0 from word 0, P1 from word 1, the rest of the file 0
            let b = build_for(t, &Case { word: fitted, inputs: vec![Inputs::default(); 3] }).unwrap();
            let out: Vec<u8> = [[1u32, 0, 7, 7], [0, 2, 7, 7], [1, 2, 7, 7]].iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(b.preds(&out).unwrap(), Some(vec![1, 2, 3]));
            assert_eq!(b.results(&out).unwrap(), vec![0; 3], "HSETP2 writes no register");
            let mut bad = out.clone();
            bad[0] = 3;
            assert!(b.preds(&bad).is_err(), "a stored value neither 1 nor 0");
        }
        // HMUL2 with RZ as its destination is no HSETP2 (its registers' pattern alike)
        let rz = encode(&Inst::new(RZ, 3, Operand2::Reg(4))).unwrap();
        assert!(fit(rz).map_or(true, |(_, l)| l.scaffold.name != "hsetp2_rrr"));
    }

    /// A predicate source P0..P6 (P3 or !P3 here) stands on a `_p` scaffold: HSET2's and
    /// HMNMX2's (its selector at HSET2's bits; the opcode rewritten, the word still reads as
    /// HMNMX2) on `hset2_rrr_p`, HSETP2's on `hsetp2_rrr_p`, on every target.
    /// The source becomes the scaffold's predicate (P0, which the second marker run found
    /// set by record word 3, x), its negation the case's; `build_for` writes x per thread
    /// from the case input's bit of it, and `effective_inputs` reports that bit alone.
    #[test]
    fn predicate_sources_stand_on_the_p_scaffolds() {
        use crate::isa::{BoolOp, Cmp};
        for t in Target::ALL {
            for op in [Op::Hset2, Op::Hmnmx2, Op::Hsetp2] {
                for negated in [false, true] {
                    let mut i = Inst::of(op, 0, 3, Operand2::Reg(4));
                    if op != Op::Hmnmx2 {
                        i.cmp = Some(Cmp::Lt);
                        i.bool_op = Some(BoolOp::Xor);
                    }
                    if op == Op::Hsetp2 {
                        i.pdst = Some([5, PT]);
                    }
                    i.psrc = Some(Pred { index: 3, negated });
                    let w = encode(&i).unwrap();
                    let want = if op == Op::Hsetp2 { "hsetp2_rrr_p" } else { "hset2_rrr_p" };
                    let (fitted, l) = fit_for(t, w).unwrap_or_else(|e| panic!("{t} {op}: {e}"));
                    assert_eq!(l.scaffold.name, want, "{t} {op}");
                    assert_eq!(l.psrc_slot, Some((3, 0)), "{t} {op}: x sets P0");
                    let f = decode(fitted).unwrap();
                    assert_eq!((f.op, f.psrc, f.cmp, f.bool_op), (op, Some(Pred { index: 0, negated }), i.cmp, i.bool_op), "{t} {op}");
                    assert_eq!((f.dst, f.a, f.b), (l.inst.dst, l.inst.a, l.inst.b), "{t} {op}");
                    assert!(runnable_for(t, fitted).is_ok(), "{t} {op}");
                    // x per thread from the input's P0 (the fitted word's source); the file
                    // the word reads: that bit alone
                    let inputs: Vec<Inputs> = (0..4u8).map(|k| Inputs { a: 0x3c00_3c00, b: 0x4000_4000, pred: 0x7e | k & 1, ..Default::default() }).collect();
                    let b = build_for(t, &Case { word: fitted, inputs: inputs.clone() }).unwrap();
                    let x: Vec<u32> = b.job.input.chunks_exact(16).map(|r| u32::from_le_bytes([r[12], r[13], r[14], r[15]])).collect();
                    assert_eq!(x, [0, 1, 0, 1], "{t} {op}");
                    let eff = b.effective_inputs(&Case { word: fitted, inputs }).unwrap();
                    assert_eq!(eff.iter().map(|e| e.pred).collect::<Vec<_>>(), [0, 1, 0, 1], "{t} {op}");
                    if op == Op::Hsetp2 {
                        // its first result overwrites the source P0: the file after is the
                        // results alone
                        let out: Vec<u8> = [[0u32, 0, 7, 7], [0, 2, 7, 7], [1, 0, 7, 7], [1, 2, 7, 7]].iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
                        assert_eq!(b.preds(&out).unwrap(), Some(vec![0, 2, 1, 3]), "{t}");
                        // were its results P1 and P2, the source's bit would stay in the file
                        let mut moved = b.clone();
                        moved.preds = moved.preds.map(|(_, slots)| ([1, 2], slots));
                        assert_eq!(moved.preds(&out).unwrap(), Some(vec![0, 5, 2, 7]), "{t}");
                    } else {
                        assert_eq!(b.preds(&[0; 64]).unwrap(), None, "{t} {op}");
                    }
                }
            }
            // ptxas's ISETP.NE.U32 that sets the source is the emulator's helper word (its
            // control bits aside), on the record word's register, in each `_p` build
            let ctrl = {
                let c = Op::Hmul2.layout();
                c.stall.mask | c.yield_.mask | c.wr_bar.mask | c.rd_bar.mask | c.wait.mask | c.reuse.mask
            };
            for (s, l) in SCAFFOLDS.iter().zip(scaffolds_for(t)).filter(|(s, _)| s.name.ends_with("_p")) {
                let text = super::super::elf::image(s.cubin(t)).unwrap().text;
                let helper = |r: u32| {
                    use super::super::helpers::{encode_for, Op as H, Sched};
                    encode_for(t, H::IsetpNeU32, &[0, r, u32::from(RZ)], Sched::safe(H::IsetpNeU32)).unwrap() & !ctrl
                };
                let hits: Vec<(usize, u32)> =
                    (0..u32::from(RZ)).flat_map(|r| text.iter().enumerate().filter(move |(_, &w)| w & !ctrl == helper(r)).map(move |(k, _)| (k, r))).collect();
                assert_eq!(hits.len(), 1, "{t} {}: ISETP.NE.U32 words {hits:?}", s.name);
                let l = l.as_ref().unwrap_or_else(|e| panic!("{t}: {e}"));
                assert!(hits[0].0 < l.index, "{t} {}: the ISETP is before the word", s.name);
            }
            // a predicate source with registers no `_p` scaffold has (Rd = Ra) is refused,
            // and says so
            let mut i = Inst::of(Op::Hset2, 3, 3, Operand2::Reg(4));
            i.psrc = Some(Pred { index: 3, negated: false });
            let e = fit_for(t, encode(&i).unwrap()).unwrap_err().to_string();
            assert!(e.contains("a predicate source P0..P6"), "{t}: {e}");
            // PT and !PT stay on the scaffolds that set no predicate
            let mut i = Inst::of(Op::Hset2, 0, 3, Operand2::Reg(4));
            i.psrc = Some(Pred { index: PT, negated: true });
            let (_, l) = fit_for(t, encode(&i).unwrap()).unwrap();
            assert_eq!((l.scaffold.name, l.psrc_slot), ("hmul2_rrr", None), "{t}");
        }
    }

    /// ptxas's prologue loads R1 (the stack pointer) with an `LDC` on no scoreboard; the
    /// emulator runs that, and faults on code that then reads R1.
    #[test]
    fn the_unsynchronized_stack_pointer_is_never_read() {
        use super::super::{elf, emu, helpers};
        let l = scaffolds()[0].as_ref().unwrap();
        let mut cubin = l.cubin().to_vec();
        let mov = helpers::encode(helpers::Op::Mov, &[l.inst.dst as u32, 1], helpers::Sched::safe(helpers::Op::Mov)).unwrap();
        cubin[l.file_offset..l.file_offset + 16].copy_from_slice(&mov.to_le_bytes());
        let p = emu::Program::load(&elf::image(&cubin).unwrap()).unwrap();
        let mut mem = emu::Regions(vec![(1 << 40, vec![0; 512]), (2 << 40, vec![0; 512])]);
        let launch = emu::Launch { grid: [1, 1, 1], block: [32, 1, 1], params: [1 << 40, 2 << 40] };
        match emu::run(&p, &launch, &mut mem, &mut emu::reference_hook) {
            Err(emu::Fault::Hazard { what, .. }) => assert!(what.contains("reads R1"), "{what}"),
            r => panic!("reading R1 ran: {r:?}"),
        }
    }
}
