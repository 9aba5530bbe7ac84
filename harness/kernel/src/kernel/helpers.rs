//! The instructions placed around each HMUL2 under test, encoded from the target's helper spec
//! ([`Target::helpers_json`]: `spec/sm90/helpers.json` for SM90, one file per family of the
//! others). The `_for` functions take the target; the plain ones are SM90's ([`Target::DEFAULT`]).
//!
//! Control bits use the HMUL2 spec's fields ([`crate::spec::control_layout`]: one control layout
//! for every instruction of the target),
//! so each bit position is named once in the project's data.

use crate::isa::parse_hex;
use crate::spec::{control_layout as layout, Field, FieldOverflow};
use crate::target::Target;
use serde::Deserialize;
use std::sync::OnceLock;

/// SM90's helper spec, compiled in.
pub const HELPERS_JSON: &str = Target::SM90.helpers_json;

/// The helper instructions, in the order of [`Op::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Nop,
    S2rTidX,
    Ldc64,
    Uldc64,
    Iadd3Imm,
    ImadWideU32Imm,
    LdgE,
    LdgE128,
    StgE,
    Mov,
    R2p,
    /// `P2R Rd, PR, RZ, mask`: the predicate file after the word under test, read back.
    P2r,
    R2ur,
    ShfRU64Imm,
    ShfRU32HiImm,
    S2rCtaidX,
    PrmtImm,
    LopXor,
    ImadIadd,
    ImadImm,
    IsetpNeU32,
    BraBack,
    StgE64,
    Exit,
    BraSelf,
    Ldc,
    StgE128,
    /// `MOV Rd, c[bank][offset]`: ptxas's sm_80..sm_89 prologue (the scaffolds'); see
    /// [`Op::ptxas_only`].
    MovConst,
    /// `MOV Rd, imm32`: ptxas's sm_86/sm_89 scaffolds.
    MovImm,
    /// `IMAD.WIDE.U32 Rd, Ra, Rb, c[0x0][offset]`: ptxas's sm_80..sm_89 address arithmetic.
    ImadWideU32Const,
    /// `SEL Rd, Ra, imm32, !Pp`: Rd = Pp ? imm : Ra; ptxas's `selp` of a predicate result
    /// (the HSETP2 scaffold stores its two predicates so).
    SelNotP,
    /// `IMAD.MOV.U32 Rd, RZ, RZ, c[bank][offset]`: ptxas's sm_80..sm_89 prologue where it
    /// writes `MOV Rd, c[][]` as an IMAD (the `hsetp2_rrr_p` scaffolds: the stack pointer).
    ImadMovU32Const,
    /// `IMAD.MOV.U32 Rd, RZ, RZ, Rc`: ptxas's sm_80..sm_89 register move written as an IMAD.
    ImadMovU32,
}

impl Op {
    /// In the order a decoder should try them: `IMAD_IADD` (IMAD with the immediate 1)
    /// before `IMAD_IMM`.
    pub const ALL: [Op; 33] = [
        Op::Nop,
        Op::S2rTidX,
        Op::Ldc64,
        Op::Uldc64,
        Op::Iadd3Imm,
        Op::ImadWideU32Imm,
        Op::LdgE,
        Op::LdgE128,
        Op::StgE,
        Op::Mov,
        Op::R2p,
        Op::P2r,
        Op::R2ur,
        Op::ShfRU64Imm,
        Op::ShfRU32HiImm,
        Op::S2rCtaidX,
        Op::PrmtImm,
        Op::LopXor,
        Op::ImadIadd,
        Op::ImadImm,
        Op::IsetpNeU32,
        Op::BraBack,
        Op::StgE64,
        Op::Exit,
        Op::BraSelf,
        Op::Ldc,
        Op::StgE128,
        Op::MovConst,
        Op::MovImm,
        Op::ImadWideU32Const,
        Op::SelNotP,
        Op::ImadMovU32Const,
        Op::ImadMovU32,
    ];
    /// The op's name in the JSON file.
    pub fn name(self) -> &'static str {
        match self {
            Op::Nop => "NOP",
            Op::S2rTidX => "S2R_TID_X",
            Op::Ldc64 => "LDC_64",
            Op::Uldc64 => "ULDC_64",
            Op::Iadd3Imm => "IADD3_IMM",
            Op::ImadWideU32Imm => "IMAD_WIDE_U32_IMM",
            Op::LdgE => "LDG_E",
            Op::LdgE128 => "LDG_E_128",
            Op::StgE => "STG_E",
            Op::Mov => "MOV",
            Op::R2p => "R2P",
            Op::P2r => "P2R",
            Op::R2ur => "R2UR",
            Op::ShfRU64Imm => "SHF_R_U64_IMM",
            Op::ShfRU32HiImm => "SHF_R_U32_HI_IMM",
            Op::S2rCtaidX => "S2R_CTAID_X",
            Op::PrmtImm => "PRMT_IMM",
            Op::LopXor => "LOP3_XOR",
            Op::ImadIadd => "IMAD_IADD",
            Op::ImadImm => "IMAD_IMM",
            Op::IsetpNeU32 => "ISETP_NE_U32",
            Op::BraBack => "BRA_BACK",
            Op::StgE64 => "STG_E_64",
            Op::Exit => "EXIT",
            Op::BraSelf => "BRA_SELF",
            Op::Ldc => "LDC",
            Op::StgE128 => "STG_E_128",
            Op::MovConst => "MOV_CONST",
            Op::MovImm => "MOV_IMM",
            Op::ImadWideU32Const => "IMAD_WIDE_U32_CONST",
            Op::SelNotP => "SEL_NOT_P",
            Op::ImadMovU32Const => "IMAD_MOV_U32_CONST",
            Op::ImadMovU32 => "IMAD_MOV_U32",
        }
    }
    /// Ops the patcher never places: they are read from ptxas's own code (the scaffold road's
    /// kernels, `kernel::scaffold`), so that the emulator runs it. A family whose
    /// architectures have no such encoding (SM100 and SM120 reject `MOV` and `IMAD.WIDE.U32`
    /// with a `c[]` operand; ptxas loads with `LDC` there) leaves them out of its file.
    pub fn ptxas_only(self) -> bool {
        matches!(self, Op::MovConst | Op::MovImm | Op::ImadWideU32Const | Op::SelNotP | Op::ImadMovU32Const | Op::ImadMovU32)
    }
    /// Whether the op completes after a variable delay (it must set a scoreboard).
    pub fn variable_latency(self) -> bool {
        matches!(self, Op::S2rTidX | Op::S2rCtaidX | Op::Ldc64 | Op::Ldc | Op::LdgE | Op::LdgE128 | Op::R2ur)
    }
}

/// One helper op: its fixed bits, its fields (in the JSON's order) and its text.
#[derive(Debug, Clone)]
pub struct OpSpec {
    /// False for a [`Op::ptxas_only`] op the family's file leaves out: it matches no word.
    pub present: bool,
    pub name: String,
    pub fixed: u128,
    pub fields: Vec<Field>,
    pub text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHelpers {
    /// The architectures the file is for, in nvdisasm's spelling, separated by spaces.
    arch: String,
    #[allow(dead_code)]
    doc: String,
    ops: Vec<RawOp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    name: String,
    fixed: String,
    text: String,
    fields: Vec<RawField>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawField {
    name: String,
    bits: Vec<[u8; 2]>,
    kind: String,
    #[serde(default)]
    scale: Option<u32>,
}

/// Why the helper spec text is inconsistent.
#[derive(Debug, thiserror::Error)]
pub enum HelperSpecError {
    #[error("helpers JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("helpers spec: {0}")]
    Invalid(String),
}

/// Parse and check a helper spec: every op known, fields disjoint from each other, from the
/// fixed bits and from the control bits.
pub fn compile(text: &str) -> Result<Vec<OpSpec>, HelperSpecError> {
    compile_raw(serde_json::from_str(text)?)
}

/// [`compile`], the spec also required to name `target` among its architectures.
pub fn compile_for(target: &Target, text: &str) -> Result<Vec<OpSpec>, HelperSpecError> {
    let raw: RawHelpers = serde_json::from_str(text)?;
    if !raw.arch.split_whitespace().any(|a| a == target.nvdisasm) {
        return Err(HelperSpecError::Invalid(format!("the spec is for {}, not {target}", raw.arch)));
    }
    compile_raw(raw)
}

fn compile_raw(raw: RawHelpers) -> Result<Vec<OpSpec>, HelperSpecError> {
    let l = layout();
    let control = l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask;
    let mut out = Vec::new();
    for op in Op::ALL {
        let Some(r) = raw.ops.iter().find(|o| o.name == op.name()) else {
            if op.ptxas_only() {
                out.push(OpSpec { present: false, name: op.name().to_string(), fixed: 0, fields: Vec::new(), text: String::new() });
                continue;
            }
            return Err(HelperSpecError::Invalid(format!("op {} missing", op.name())));
        };
        let fixed = parse_hex(&r.fixed).map_err(|e| HelperSpecError::Invalid(format!("{}: {e}", r.name)))?;
        if fixed & control != 0 {
            return Err(HelperSpecError::Invalid(format!("{}: fixed word sets control bits", r.name)));
        }
        let mut covered = control;
        let mut fields = Vec::new();
        for f in &r.fields {
            let mut mask = 0u128;
            let mut width = 0;
            let mut segments = Vec::new();
            for [lo, hi] in &f.bits {
                if lo > hi || *hi > 127 {
                    return Err(HelperSpecError::Invalid(format!("{}.{}: bad segment", r.name, f.name)));
                }
                for b in *lo..=*hi {
                    mask |= 1u128 << b;
                }
                width += (hi - lo + 1) as u32;
                segments.push((*lo, *hi));
            }
            if mask & covered != 0 || mask & fixed != 0 || width > 32 {
                return Err(HelperSpecError::Invalid(format!("{}.{}: overlaps another field or the fixed bits", r.name, f.name)));
            }
            covered |= mask;
            fields.push(Field::from_segments(f.name.clone(), segments, f.kind.clone(), vec![], f.scale.unwrap_or(1), String::new()));
        }
        out.push(OpSpec { present: true, name: r.name.clone(), fixed, fields, text: r.text.clone() });
    }
    Ok(out)
}

/// SM90's built-in helper spec.
pub fn ops() -> &'static [OpSpec] {
    ops_for(Target::DEFAULT)
}

/// Where `target` is in [`Target::ALL`] (its per-target tables' index).
fn index_of(target: &Target) -> usize {
    Target::ALL.iter().position(|t| t.sm == target.sm).unwrap_or(0)
}

/// The built-in helper spec of `target`.
pub fn ops_for(target: &Target) -> &'static [OpSpec] {
    static OPS: [OnceLock<Vec<OpSpec>>; Target::ALL.len()] = [const { OnceLock::new() }; Target::ALL.len()];
    let t = Target::ALL[index_of(target)];
    OPS[index_of(target)].get_or_init(|| match compile_for(t, t.helpers_json) {
        Ok(o) => o,
        // compiled into the binary and checked by tests: failing here is a build defect
        Err(e) => panic!("built-in helper spec of {t} is inconsistent: {e}"),
    })
}

/// The SM90 spec of one op.
pub fn op_spec(op: Op) -> &'static OpSpec {
    &ops()[op as usize]
}

/// The spec of one op of `target`.
pub fn op_spec_for(target: &Target, op: Op) -> &'static OpSpec {
    &ops_for(target)[op as usize]
}

/// Scheduling of a helper: conservative, so that no hazard can reach the instruction under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sched {
    pub stall: u8,
    pub yield_: bool,
    pub wr_bar: u8,
    pub rd_bar: u8,
    pub wait: u8,
}

impl Sched {
    /// Full stall, wait on every scoreboard; variable-latency ops set scoreboard 0 on write
    /// (`LDG.E`, operand 3's load, whose reader comes several loads later, sets scoreboard
    /// 2), stores set scoreboard 1 on read, so that the next instruction waits for them.
    pub fn safe(op: Op) -> Sched {
        Sched {
            stall: 15,
            // nvdisasm rejects the yield bit with a stall of 12..15
            yield_: false,
            wr_bar: match op {
                Op::LdgE => 2,
                _ if op.variable_latency() => 0,
                _ => 7,
            },
            rd_bar: if matches!(op, Op::StgE | Op::StgE64) { 1 } else { 7 },
            wait: 0x3f,
        }
    }
}

/// Encode SM90's `op` with field values in the JSON's field order (byte offsets unscaled:
/// `scale` divides).
pub fn encode(op: Op, args: &[u32], s: Sched) -> Result<u128, FieldOverflow> {
    encode_for(Target::DEFAULT, op, args, s)
}

/// [`encode`] for `target`.
pub fn encode_for(target: &Target, op: Op, args: &[u32], s: Sched) -> Result<u128, FieldOverflow> {
    let spec = op_spec_for(target, op);
    let mut w = spec.fixed;
    for (f, &v) in spec.fields.iter().zip(args) {
        w = f.set(w, v / f.scale)?;
    }
    let l = layout();
    w = l.stall.set(w, s.stall as u32)?;
    w = l.yield_.set(w, s.yield_ as u32)?;
    w = l.wr_bar.set(w, s.wr_bar as u32)?;
    w = l.rd_bar.set(w, s.rd_bar as u32)?;
    w = l.wait.set(w, s.wait as u32)?;
    w = l.reuse.set(w, 0)?;
    Ok(w)
}

/// [`encode`] with [`Sched::safe`], as the batch kernel's helpers are: each op's fixed bits
/// and control bits are set once and kept, then only its fields are set. Words equal
/// `encode(op, args, Sched::safe(op))`: an op whose fields share a bit with the control bits
/// (none of the built-in ones) is encoded the long way.
pub fn encode_safe(op: Op, args: &[u32]) -> Result<u128, FieldOverflow> {
    encode_safe_for(Target::DEFAULT, op, args)
}

/// [`encode_safe`] for `target`.
pub fn encode_safe_for(target: &Target, op: Op, args: &[u32]) -> Result<u128, FieldOverflow> {
    static BASES: [OnceLock<Vec<Option<u128>>>; Target::ALL.len()] = [const { OnceLock::new() }; Target::ALL.len()];
    let bases = BASES[index_of(target)].get_or_init(|| {
        let l = layout();
        let ctrl = l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask;
        let mut v = vec![None; ops_for(target).len()];
        for op in Op::ALL {
            if op_spec_for(target, op).fields.iter().all(|f| f.mask & ctrl == 0) {
                v[op as usize] = encode_for(target, op, &[], Sched::safe(op)).ok();
            }
        }
        v
    });
    let Some(Some(mut w)) = bases.get(op as usize).copied() else { return encode_for(target, op, args, Sched::safe(op)) };
    for (f, &v) in op_spec_for(target, op).fields.iter().zip(args) {
        w = f.set(w, v / f.scale)?;
    }
    Ok(w)
}

/// The text nvdisasm prints for SM90's `op` with these field values (no guard, no `;`).
pub fn render(op: Op, args: &[u32]) -> String {
    render_for(Target::DEFAULT, op, args)
}

/// [`render`] for `target` (`nvdisasm -b <target>`).
pub fn render_for(target: &Target, op: Op, args: &[u32]) -> String {
    let spec = op_spec_for(target, op);
    let mut t = spec.text.clone();
    for (f, &v) in spec.fields.iter().zip(args) {
        let s = match f.kind.as_str() {
            "reg" if v == 255 => "RZ".to_string(),
            "reg" => format!("R{v}"),
            "ureg" if v == 63 => "URZ".to_string(),
            "ureg" => format!("UR{v}"),
            "pred" if v == 7 => "PT".to_string(),
            "pred" => format!("P{v}"),
            "shex" if (v as i32) < 0 => format!("-{:#x}", (v as i32).unsigned_abs()),
            "soffset" if (v / f.scale) >> (f.width - 1) & 1 == 1 => {
                format!("-{:#x}", ((1i64 << f.width) - (v / f.scale) as i64) * f.scale as i64)
            }
            _ => format!("{v:#x}"),
        };
        t = t.replace(&format!("{{{}}}", f.name), &s);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helper_spec_is_the_targets() {
        let raw: RawHelpers = serde_json::from_str(HELPERS_JSON).unwrap();
        assert_eq!(crate::target::Target::parse(&raw.arch), Ok(&crate::target::Target::SM90));
        assert_eq!(HELPERS_JSON, crate::target::Target::SM90.helpers_json);
    }

    #[test]
    fn every_targets_helper_spec_compiles_and_names_it() {
        for t in Target::ALL {
            let raw: RawHelpers = serde_json::from_str(t.helpers_json).unwrap();
            assert!(raw.arch.split_whitespace().any(|a| a == t.nvdisasm), "{t}: {}", raw.arch);
            assert_eq!(ops_for(t).len(), Op::ALL.len(), "{t}");
        }
        // a family file names only its own targets
        let e = compile_for(&Target::SM90, Target::SM80.helpers_json).unwrap_err();
        assert!(e.to_string().contains("not SM90"), "{e}");
        // the families differ where nvdisasm says they do (docs/architectures.md)
        assert_ne!(op_spec_for(&Target::SM86, Op::R2ur).fixed, op_spec(Op::R2ur).fixed);
        assert_ne!(op_spec_for(&Target::SM120, Op::Uldc64).fixed, op_spec(Op::Uldc64).fixed);
        assert_eq!(op_spec_for(&Target::SM100, Op::Uldc64).text, op_spec_for(&Target::SM120, Op::Uldc64).text);
    }

    #[test]
    fn the_families_reproduce_ptxas_words() {
        // ptxas 13.0.88's sm_100 template: LDCU.64 UR4, c[0x0][0x358]
        let s = Sched { stall: 7, yield_: true, wr_bar: 1, rd_bar: 7, wait: 0 };
        let w = encode_for(&Target::SM100, Op::Uldc64, &[4, 0x358, 0], s).unwrap();
        assert_eq!(w, 0x000e6e0008000a00u128 << 64 | 0x00006b00ff0477ac);
        assert_eq!(render_for(&Target::SM100, Op::Uldc64, &[4, 0x358, 0]), "LDCU.64 UR4, c[0x0][0x358]");
        // ptxas 13.0.88's sm_80 template: ULDC.64 UR4, c[0x0][0x118] and STG.E [R4.64], R7
        let s = Sched { stall: 9, yield_: false, wr_bar: 7, rd_bar: 7, wait: 0 };
        let w = encode_for(&Target::SM80, Op::Uldc64, &[4, 0x118, 0], s).unwrap();
        assert_eq!(w, 0x000fd20000000a00u128 << 64 | 0x0000460000047ab9);
        let s = Sched { stall: 1, yield_: true, wr_bar: 7, rd_bar: 7, wait: 0 };
        let w = encode_for(&Target::SM80, Op::StgE, &[4, 7, 4], s).unwrap();
        assert_eq!(w, 0x000fe2000c101904u128 << 64 | 0x0000000704007986);
        assert_eq!(render_for(&Target::SM80, Op::StgE, &[4, 7, 4]), "STG.E [R4.64], R7");
    }

    #[test]
    fn builtin_helpers_compile_and_reproduce_ptxas_words() {
        // words ptxas 13.0.88 emitted for the template (control bits included)
        let nop = encode(Op::Nop, &[], Sched { stall: 0, yield_: false, wr_bar: 7, rd_bar: 7, wait: 0 }).unwrap();
        assert_eq!(nop, 0x000fc00000000000u128 << 64 | 0x0000000000007918);
        let ldc = encode(Op::Ldc64, &[2, 0x210, 0], Sched { stall: 1, yield_: true, wr_bar: 0, rd_bar: 7, wait: 0 }).unwrap();
        assert_eq!(ldc, 0x000e220000000a00u128 << 64 | 0x00008400ff027b82);
        let stg = encode(Op::StgE, &[4, 7, 4], Sched { stall: 1, yield_: true, wr_bar: 7, rd_bar: 7, wait: 0 }).unwrap();
        assert_eq!(stg, 0x000fe2000c101904u128 << 64 | 0x0000000704007986);
        assert_eq!(render(Op::Ldc64, &[2, 0x210, 0]), "LDC.64 R2, c[0x0][0x210]");
    }

    #[test]
    fn encode_safe_is_encode_with_the_safe_schedule() {
        let seed = 0x5afe;
        eprintln!("seed: {seed}");
        let mut r = crate::rng::Rng::new(seed);
        for op in Op::ALL {
            for k in 0..200 {
                // small values (that fit) and any values (that may overflow: the same error)
                let args: [u32; 4] = std::array::from_fn(|_| if k % 2 == 0 { r.below(256) * 4 } else { r.next_u32() });
                let (fast, slow) = (encode_safe(op, &args), encode(op, &args, Sched::safe(op)));
                assert_eq!(fast.as_ref().ok(), slow.as_ref().ok(), "{op:?} {args:?}");
                assert_eq!(fast.is_err(), slow.is_err(), "{op:?} {args:?}");
            }
        }
    }
}
