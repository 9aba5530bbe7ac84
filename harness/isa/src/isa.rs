//! Typed instructions of the packed-half family and their four conversions: encode, decode,
//! render, parse.
//!
//! Text exists only at the edges ([`render()`], [`parse()`]); everything in between is [`Inst`],
//! whose [`Op`] names the instruction. [`Op`] is generated from the spec files in
//! `harness/spec/sm90/` (one variant per file), and every bit position comes from
//! [`crate::spec`]: adding an instruction of the same shape is adding its spec file.

pub mod decode;
pub mod encode;
pub mod floattext;
pub mod fused;
// its builder runs in build.rs; in the library, the fused decoder reads its layout and the
// tests rebuild its table
pub mod hex;
#[allow(dead_code)]
mod immtable;
pub mod parse;
pub mod render;
pub mod strtable;

pub use decode::{decode, decode_for, Illegal};
pub use encode::{encode, encode_for, EncodeError};
pub use fused::{decode_line_into, decode_lines_into, decode_lines_into_for, decode_render_into, decode_render_into_for, prepare_decode, LineCache};
pub use hex::{format_hex, listing_text, parse_hex, pasted, HexError, Pasted};
pub use parse::{parse, parse_for, ParseError};
pub use render::{render, render_for, render_into, render_into_for};

use crate::target::Target;
use serde::{Deserialize, Serialize};

/// The guard predicate index meaning "always" (PT).
pub const PT: u8 = 7;
/// The zero register.
pub const RZ: u8 = 255;
/// The zero uniform register.
pub const URZ: u8 = 63;

include!(concat!(env!("OUT_DIR"), "/ops.rs"));

impl Op {
    /// Position in [`Op::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
    /// The instruction of this mnemonic (as nvdisasm prints it; case-insensitive).
    pub fn from_mnemonic(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.mnemonic().eq_ignore_ascii_case(name))
    }
    /// The instruction whose opcode field holds `opcode`.
    pub fn from_opcode(opcode: u32) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.opcode_value() == opcode)
    }
    /// The instruction's compiled spec.
    pub fn spec(self) -> &'static crate::spec::Spec {
        crate::spec::spec_of(self)
    }
    /// The instruction's field handles.
    pub fn layout(self) -> &'static crate::spec::Layout {
        crate::spec::layout_of(self)
    }
    /// The instruction's compiled spec on `target` (SM90's is [`Op::spec`]); None where the
    /// target lacks the instruction.
    pub fn spec_for(self, target: &'static Target) -> Option<&'static crate::spec::Spec> {
        crate::spec::spec_for(target, self)
    }
    /// The instruction's field handles on `target`; None where the target lacks it.
    pub fn layout_for(self, target: &'static Target) -> Option<&'static crate::spec::Layout> {
        crate::spec::layout_for(target, self)
    }
    /// The instructions `target` has, in [`Op::ALL`]'s order.
    pub fn all_for(target: &'static Target) -> impl Iterator<Item = Op> {
        Op::ALL.into_iter().filter(move |o| o.layout_for(target).is_some())
    }
    /// The forms the instruction has on `target` (none where it lacks the instruction).
    pub fn forms_for(self, target: &'static Target) -> impl Iterator<Item = Form> {
        let l = self.layout_for(target);
        Form::ALL.into_iter().filter(move |f| l.is_some_and(|l| l.form_index[*f as usize].is_some()))
    }
    /// Whether the instruction has operand form `form`.
    pub fn has_form(self, form: Form) -> bool {
        self.layout().form_index[form as usize].is_some()
    }
    /// The forms the instruction has, in [`Form::ALL`]'s order.
    pub fn forms(self) -> impl Iterator<Item = Form> {
        Form::ALL.into_iter().filter(move |&f| self.has_form(f))
    }
    /// The spec's description of form `form`; None when the instruction lacks it.
    pub fn form_spec(self, form: Form) -> Option<&'static crate::spec::FormSpec> {
        self.layout().form_index[form as usize].map(|k| &self.spec().forms[k])
    }
    /// Index of form `form` in the instruction's spec (`forms`), for the spec's rule tables.
    pub fn form_index(self, form: Form) -> Option<usize> {
        self.layout().form_index[form as usize]
    }
    /// The key of form `form` in this instruction's spec, e.g. `HADD2_R_R_R` (the mnemonic
    /// and the form's syntax when the instruction lacks it).
    pub fn form_key(self, form: Form) -> &'static str {
        self.form_spec(form).map(|f| f.key.as_str()).unwrap_or(form.syntax())
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mnemonic())
    }
}

/// A comma-separated list of mnemonics (`--instruction HMUL2,HADD2`); the error lists the known ones.
pub fn parse_ops(list: &str) -> Result<Vec<Op>, String> {
    let mut ops = Vec::new();
    for name in list.split(',').map(str::trim) {
        let op = Op::from_mnemonic(name).ok_or_else(|| {
            let known: Vec<&str> = Op::ALL.iter().map(|o| o.mnemonic()).collect();
            format!("unknown instruction {name:?}; one of {}", known.join(", "))
        })?;
        if !ops.contains(&op) {
            ops.push(op);
        }
    }
    Ok(ops)
}

/// The operand forms of the family: which kind of special source (register, two immediates,
/// c[], cx[], uniform register) an instruction has and, for a three-source instruction
/// (the reads of the spec's `shape`), whether it is operand 2 or operand 3 (the form's `special`). Each
/// instruction's spec names the forms it has, by `cli`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Form {
    /// `R,R,R`
    Rrr,
    /// `R,R,F,F`: two 16-bit immediates (`R,R,F,F,R` with three sources).
    Imm,
    /// `R,R,c[bank][offset]` (`R,R,c[..][..],R` with three sources)
    Const,
    /// `R,R,cx[UR][offset]` (`R,R,cx[..][..],R` with three sources)
    ConstUr,
    /// `R,R,UR` (`R,R,UR,R` with three sources)
    Ur,
    /// `R,R,R,R`: three register sources.
    Rrrr,
    /// `R,R,R,F,F`: the immediates are operand 3.
    ImmC,
    /// `R,R,R,c[bank][offset]`: the constant is operand 3.
    ConstC,
    /// `R,R,R,cx[UR][offset]`: the constant is operand 3.
    ConstUrC,
    /// `R,R,R,UR`: the uniform register is operand 3.
    UrC,
}

impl Form {
    pub const ALL: [Form; 10] = [Form::Rrr, Form::Imm, Form::Const, Form::ConstUr, Form::Ur, Form::Rrrr, Form::ImmC, Form::ConstC, Form::ConstUrC, Form::UrC];
    /// The forms of a two-source instruction (HMUL2, HADD2), in their order.
    pub const TWO_SOURCE: [Form; 5] = [Form::Rrr, Form::Imm, Form::Const, Form::ConstUr, Form::Ur];

    /// Short name for the command line (`rrr`, `imm`, `const`, `constx`, `ur`, `rrrr`,
    /// `imm-c`, `const-c`, `constx-c`, `ur-c`); a spec's form names its kind by this (`cli`).
    pub fn cli_name(self) -> &'static str {
        ["rrr", "imm", "const", "constx", "ur", "rrrr", "imm-c", "const-c", "constx-c", "ur-c"][self as usize]
    }
    /// The operand syntax of the seed pages, e.g. `R,R,c[I][I]`.
    pub fn syntax(self) -> &'static str {
        ["R,R,R", "R,R,F,F", "R,R,c[I][I]", "R,R,cx[UR][I]", "R,R,UR", "R,R,R,R", "R,R,R,F,F", "R,R,R,c[I][I]", "R,R,R,cx[UR][I]", "R,R,R,UR"][self as usize]
    }
    /// A form by its command-line name, or by a spec key of any instruction (`HMUL2_R_R_R`).
    pub fn from_cli(name: &str) -> Option<Form> {
        Form::ALL.into_iter().find(|f| f.cli_name().eq_ignore_ascii_case(name) || Op::ALL.iter().any(|o| o.form_key(*f).eq_ignore_ascii_case(name)))
    }
    /// The kind of the form's special source, as the two-source form of that kind
    /// (`ConstC` → `Const`, `Rrrr` → `Rrr`).
    pub fn kind(self) -> Form {
        match self {
            Form::Rrrr => Form::Rrr,
            Form::ImmC => Form::Imm,
            Form::ConstC => Form::Const,
            Form::ConstUrC => Form::ConstUr,
            Form::UrC => Form::Ur,
            f => f,
        }
    }
    /// The form whose special source of kind `kind` is operand 3 (`Const` → `ConstC`).
    pub fn as_operand3(kind: Form) -> Form {
        match kind.kind() {
            Form::Rrr => Form::Rrrr,
            Form::Imm => Form::ImmC,
            Form::Const => Form::ConstC,
            Form::ConstUr => Form::ConstUrC,
            _ => Form::UrC,
        }
    }
    /// Which source (2 or 3) holds the form's special operand; 2 for the register forms.
    pub fn special_source(self) -> u8 {
        if matches!(self, Form::ImmC | Form::ConstC | Form::ConstUrC | Form::UrC) {
            3
        } else {
            2
        }
    }
    /// Whether operand 2 takes neg/abs/half-select modifiers in this form.
    pub fn has_b_mods(self) -> bool {
        self != Form::Imm
    }
    /// Whether operand 3 (of a three-source instruction) takes modifiers in this form.
    pub fn has_c_mods(self) -> bool {
        self != Form::ImmC
    }
}

/// A form named on the command line (`rrr`, `imm`, ... or the seed-page key); the error lists the names.
pub fn parse_form(name: &str) -> Result<Form, String> {
    Form::from_cli(name).ok_or_else(|| {
        let names: Vec<&str> = Form::ALL.iter().map(|f| f.cli_name()).collect();
        format!("unknown form {name:?}; one of {}", names.join(", "))
    })
}

impl std::fmt::Display for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.cli_name())
    }
}

/// Guard predicate: `@P3`, `@!P0`, `@!PT`, or none (PT, not negated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Pred {
    /// 0..=6 for P0..P6, 7 for PT.
    pub index: u8,
    pub negated: bool,
}

impl Pred {
    pub const ALWAYS: Pred = Pred { index: PT, negated: false };
}

/// Half select of a source: which 16-bit half feeds each lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[repr(u8)]
pub enum Swizzle {
    /// Default: lane i reads half i.
    #[default]
    H1H0 = 0,
    /// Printed `.INVALID1`; no documented meaning.
    Invalid1 = 1,
    /// Both lanes read the low half.
    H0H0 = 2,
    /// Both lanes read the high half.
    H1H1 = 3,
    /// Values 4..7 of a three-bit half select (HFMA2's operand 2: `H0_NH1`, then
    /// `INVALID5`..`INVALID7`). A half select is typed by its field value; the spec names
    /// each value (HFMA2 prints value 1 of operand 2 as `.F32`, HMUL2 as `.INVALID1`).
    Code4 = 4,
    Code5 = 5,
    Code6 = 6,
    Code7 = 7,
}

impl Swizzle {
    /// The four values of a two-bit half select, in field order.
    pub const ALL: [Swizzle; 4] = [Swizzle::H1H0, Swizzle::Invalid1, Swizzle::H0H0, Swizzle::H1H1];
    /// The eight values of a three-bit half select (HFMA2's operand 2), in field order.
    pub const EVERY: [Swizzle; 8] =
        [Swizzle::H1H0, Swizzle::Invalid1, Swizzle::H0H0, Swizzle::H1H1, Swizzle::Code4, Swizzle::Code5, Swizzle::Code6, Swizzle::Code7];
    pub fn from_bits(v: u32) -> Swizzle {
        Swizzle::EVERY[(v & 7) as usize]
    }
}

/// A float comparison of SASS (HSET2's and HSETP2's), in the order of its 4-bit field: the
/// field's bits are less, equal, greater, unordered (the codes Mesa's NAK encodes for every
/// Volta+ float comparison).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Cmp {
    /// Always false.
    #[default]
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Ne,
    Ge,
    /// Neither operand is NaN (ordered).
    Num,
    /// Some operand is NaN (unordered).
    Nan,
    Ltu,
    Equ,
    Leu,
    Gtu,
    Neu,
    Geu,
    /// Always true.
    T,
}

impl Cmp {
    /// Every comparison, in field order ([`Cmp::code`] is the index).
    pub const ALL: [Cmp; 16] =
        [Cmp::F, Cmp::Lt, Cmp::Eq, Cmp::Le, Cmp::Gt, Cmp::Ne, Cmp::Ge, Cmp::Num, Cmp::Nan, Cmp::Ltu, Cmp::Equ, Cmp::Leu, Cmp::Gtu, Cmp::Neu, Cmp::Geu, Cmp::T];

    /// The value of the comparison field.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The comparison of field value `code` (None above 15).
    pub fn from_code(code: u8) -> Option<Cmp> {
        Cmp::ALL.get(code as usize).copied()
    }

    /// The name nvdisasm prints (`LT`, `GEU`, ...).
    pub fn name(self) -> &'static str {
        ["F", "LT", "EQ", "LE", "GT", "NE", "GE", "NUM", "NAN", "LTU", "EQU", "LEU", "GTU", "NEU", "GEU", "T"][self as usize]
    }

    /// The comparison printed `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Cmp> {
        Cmp::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(name))
    }
}

/// The boolean operation that combines a lane's comparison with the predicate source
/// (HSET2's and HSETP2's 2-bit field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BoolOp {
    #[default]
    And,
    Or,
    Xor,
    /// Field value 3: printed `.INVALID3`, no operation is defined.
    Invalid3,
}

impl BoolOp {
    /// Every value of the 2-bit field, in field order.
    pub const ALL: [BoolOp; 4] = [BoolOp::And, BoolOp::Or, BoolOp::Xor, BoolOp::Invalid3];

    /// The name nvdisasm prints (`AND`, `OR`, `XOR`, `INVALID3`).
    pub fn name(self) -> &'static str {
        ["AND", "OR", "XOR", "INVALID3"][self as usize]
    }

    /// The operation printed `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<BoolOp> {
        BoolOp::ALL.into_iter().find(|b| b.name().eq_ignore_ascii_case(name))
    }
}

/// Source modifiers of operand 1, 2 or 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct SrcMods {
    pub neg: bool,
    pub abs: bool,
    pub swizzle: Swizzle,
}

impl SrcMods {
    pub fn is_default(&self) -> bool {
        *self == SrcMods::default()
    }
}

/// Denormal handling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[repr(u8)]
pub enum Flush {
    #[default]
    None = 0,
    Fmz = 1,
    Ftz = 2,
    /// Printed `.INVALID3`.
    Invalid3 = 3,
    /// `.OOB` (HFMA2's flush value 3, where HMUL2 prints `.INVALID3`).
    Oob = 4,
}

impl Flush {
    /// The four values of HMUL2's flush field, in field order.
    pub const ALL: [Flush; 4] = [Flush::None, Flush::Fmz, Flush::Ftz, Flush::Invalid3];
    /// Every flush mode of the family (what a spec's value names may mean).
    pub const EVERY: [Flush; 5] = [Flush::None, Flush::Fmz, Flush::Ftz, Flush::Invalid3, Flush::Oob];
}

/// Lane format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[repr(u8)]
pub enum Format {
    #[default]
    F16 = 0,
    /// Printed `.INVALID1`.
    Invalid1 = 1,
    Bf16 = 2,
    /// Printed `.INVALID3`.
    Invalid3 = 3,
    /// `.F32` (HADD2): FP16 sources, one FP32 result from the selected halves.
    F32 = 4,
}

impl Format {
    /// The four values of HMUL2's format field, in field order.
    pub const ALL: [Format; 4] = [Format::F16, Format::Invalid1, Format::Bf16, Format::Invalid3];
    /// Every lane format of the family (what a spec's value names may mean).
    pub const EVERY: [Format; 5] = [Format::F16, Format::Invalid1, Format::Bf16, Format::Invalid3, Format::F32];
}

/// Operand 2, whose kind fixes the form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand2 {
    /// A register, 255 = RZ.
    Reg(u8),
    /// Two 16-bit immediates: `first` is printed first and sits in bits 48..63.
    Imm { first: u16, second: u16 },
    /// `c[bank][offset]`: byte offset, a multiple of 4 in -0x8000..=0x7ffc.
    Const { bank: u8, offset: i32 },
    /// `cx[URn][offset]`: byte offset, a multiple of 4 in 0..=0xfffc.
    ConstUr { ureg: u8, offset: u32 },
    /// A uniform register, 63 = URZ.
    Ur(u8),
}

impl Operand2 {
    pub fn form(&self) -> Form {
        match self {
            Operand2::Reg(_) => Form::Rrr,
            Operand2::Imm { .. } => Form::Imm,
            Operand2::Const { .. } => Form::Const,
            Operand2::ConstUr { .. } => Form::ConstUr,
            Operand2::Ur(_) => Form::Ur,
        }
    }
}

/// Scheduling control bits (not printed by nvdisasm, except the reuse flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Control {
    pub stall: u8,
    pub yield_: bool,
    /// Scoreboard set on write, 7 = none.
    pub wr_bar: u8,
    /// Scoreboard set on read, 7 = none.
    pub rd_bar: u8,
    /// Scoreboards waited on.
    pub wait: u8,
    /// Reuse flags: bit 0 operand 1, bit 1 operand 2, bit 2 a third source. nvdisasm prints
    /// them (`.reuse`) only when `yield_` is set; without it their meaning is unknown.
    pub reuse: u8,
}

impl Control {
    /// Whether reuse bit `bit` shows (`.reuse` on its operand): only with the yield bit.
    pub fn shows_reuse(&self, bit: u8) -> bool {
        self.yield_ && self.reuse >> bit & 1 != 0
    }
}

impl Default for Control {
    /// A safe, legal control word: stall 1, no yield, no barriers, no wait.
    fn default() -> Self {
        Control { stall: 1, yield_: false, wr_bar: 7, rd_bar: 7, wait: 0, reuse: 0 }
    }
}

/// One instruction of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Inst {
    /// Which instruction: its spec gives every bit position below.
    pub op: Op,
    pub pred: Pred,
    /// Destination register, 255 = RZ.
    pub dst: u8,
    /// Operand 1 register, 255 = RZ.
    pub a: u8,
    pub a_mods: SrcMods,
    pub b: Operand2,
    /// Operand 2 modifiers; always default in the immediate form, which has none.
    pub b_mods: SrcMods,
    pub format: Format,
    pub flush: Flush,
    pub sat: bool,
    /// Operand 3 of a three-source instruction (the spec's `shape`): a register, or the
    /// form's special source when the form's `special` is 3; None for two sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<Operand2>,
    /// Operand 3's modifiers (default when there is no operand 3, or it is immediates).
    #[serde(default, skip_serializing_if = "SrcMods::is_default")]
    pub c_mods: SrcMods,
    /// `.RELU` and its predicate operand (printed after the last source), for instructions
    /// whose spec has a `relu` field; None: no `.RELU`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relu: Option<Pred>,
    /// Predicate results, 0..=6 = P0..P6, 7 = PT: HSETP2's two always, HMNMX2's with
    /// `.IS_A` only (`.IS_A` is `pdst.is_some()`, as `.RELU` is `relu.is_some()`); None for
    /// an instruction that writes no predicate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdst: Option<[u8; 2]>,
    /// The predicate source: HSET2's and HSETP2's, combined with the comparison by
    /// [`Inst::bool_op`]; HMNMX2's min/max selector (PT = min, !PT = max as ptxas writes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psrc: Option<Pred>,
    /// The comparison of HSET2 and HSETP2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmp: Option<Cmp>,
    /// The boolean operation of HSET2 and HSETP2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bool_op: Option<BoolOp>,
    /// HSET2 `.BF`: a true lane is the lane format's 1.0 rather than an all-ones mask.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bf: bool,
    /// HSETP2 `.H_AND`: both lanes' results are ANDed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub h_and: bool,
    /// HMNMX2 `.NAN`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub nan: bool,
    /// HMNMX2 `.XORSIGN`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub xorsign: bool,
    pub ctrl: Control,
    /// Bits that no field of the form covers and that nvdisasm ignores. Kept so that
    /// `encode(decode(w)) == w` for every legal word; no text shows them.
    pub ignored: u128,
}

/// For serde: skip a flag that is off, so that the JSON of an instruction without it is unchanged.
fn is_false(b: &bool) -> bool {
    !*b
}

/// The name the project's first instruction type had; an [`Inst`] of any op.
pub type Hmul2 = Inst;

impl Inst {
    /// The general registers the word names as sources, in operand order: operand 1, and
    /// operands 2 and 3 where they are registers (RZ included).
    pub fn source_regs(&self) -> impl Iterator<Item = u8> {
        let reg = |o: Operand2| if let Operand2::Reg(r) = o { Some(r) } else { None };
        std::iter::once(self.a).chain(reg(self.b)).chain(self.c.and_then(reg))
    }

    /// Every general register the word names: the destination, then [`Inst::source_regs`].
    pub fn named_regs(&self) -> impl Iterator<Item = u8> {
        std::iter::once(self.dst).chain(self.source_regs())
    }

    /// The form: operand 2's kind, or with an operand 3 the place of the special source
    /// (both special is not a form: [`encode()`] refuses it, and `form` names operand 2's).
    pub fn form(&self) -> Form {
        match (self.b, self.c) {
            (_, None) => self.b.form(),
            (Operand2::Reg(_), Some(Operand2::Reg(_))) => Form::Rrrr,
            (Operand2::Reg(_), Some(c)) => Form::as_operand3(c.form()),
            (b, Some(_)) => b.form(),
        }
    }

    /// The spec's description of this instruction's form (None when its op lacks the form:
    /// `encode` refuses such an instruction).
    pub fn form_spec(&self) -> Option<&'static crate::spec::FormSpec> {
        self.op.form_spec(self.form())
    }

    /// The form's key in the op's spec, e.g. `HMUL2_R_R_R`.
    pub fn form_key(&self) -> &'static str {
        self.op.form_key(self.form())
    }

    /// An instruction of `op` with every other field at its empty value: `RZ` operands, no
    /// modifiers, no operand 3, and none of the comparison and min/max parts (predicate results,
    /// predicate source, comparison, boolean operation, flags). The base of a struct literal
    /// (`Inst { dst, a, .., ..Inst::bare(op) }`) that sets the fields it knows, so that each
    /// field's empty value is written here once. Not itself an encodable instruction of every op:
    /// [`Inst::of`] gives a plain one.
    pub fn bare(op: Op) -> Inst {
        Inst {
            op,
            pred: Pred::ALWAYS,
            dst: RZ,
            a: RZ,
            a_mods: SrcMods::default(),
            b: Operand2::Reg(RZ),
            b_mods: SrcMods::default(),
            format: Format::F16,
            flush: Flush::None,
            sat: false,
            c: None,
            c_mods: SrcMods::default(),
            relu: None,
            pdst: None,
            psrc: None,
            cmp: None,
            bool_op: None,
            bf: false,
            h_and: false,
            nan: false,
            xorsign: false,
            ctrl: Control::default(),
            ignored: 0,
        }
    }

    /// A plain instruction: `OP dst, a, b` with no modifiers.
    pub fn of(op: Op, dst: u8, a: u8, b: Operand2) -> Inst {
        let l = op.layout();
        Inst {
            // an instruction that writes no register names RZ
            dst: if l.writes_reg { dst } else { RZ },
            a,
            b,
            // a three-source instruction accumulates into its destination by default
            c: (op.spec().sources == 3).then_some(Operand2::Reg(dst)),
            // the shape's other parts at their plain values: predicate results P0 and P1
            // where always written, the predicate source PT, the comparison F, AND
            pdst: (l.p_dst.is_some() && l.is_a.is_none()).then_some([0, 1]),
            psrc: l.psrc.is_some().then_some(Pred::ALWAYS),
            cmp: l.cmp.is_some().then_some(Cmp::F),
            bool_op: l.bool_op.is_some().then_some(BoolOp::And),
            ..Inst::bare(op)
        }
    }

    /// Whether operand 1 shows `.reuse` (the op's spec says which reuse bit is operand 1's).
    pub fn shows_reuse_a(&self) -> bool {
        self.ctrl.shows_reuse(self.op.spec().reuse_a)
    }
    /// Whether operand 2 shows `.reuse`.
    pub fn shows_reuse_b(&self) -> bool {
        self.ctrl.shows_reuse(self.op.spec().reuse_b)
    }
    /// Whether operand 3 shows `.reuse`.
    pub fn shows_reuse_c(&self) -> bool {
        self.ctrl.shows_reuse(self.op.spec().reuse_c)
    }

    /// The bits nvdisasm ignores in this instruction because of its modifiers (the spec's
    /// `hidden` rules speak of format, flush and sat only).
    pub fn hidden_mask(&self) -> u128 {
        self.hidden_mask_in(self.op.layout())
    }

    /// [`Inst::hidden_mask`] by layout `l` (a target's).
    pub fn hidden_mask_in(&self, l: &crate::spec::Layout) -> u128 {
        let Some(k) = l.form_index[self.form() as usize] else { return 0 };
        let mut w = 0u128;
        if let Some(v) = l.format_code[self.format as usize] {
            w = l.format.set(w, v).unwrap_or(w);
        }
        if let Some(v) = l.flush_code[self.flush as usize] {
            w = l.flush.set(w, v).unwrap_or(w);
        }
        w = l.sat.set(w, self.sat as u32).unwrap_or(w);
        if let Some(f) = &l.relu {
            w = f.set(w, self.relu.is_some() as u32).unwrap_or(w);
        }
        if let Some(f) = &l.is_a {
            w = f.set(w, self.pdst.is_some() as u32).unwrap_or(w);
        }
        l.spec.hidden_mask(k, w)
    }

    /// The instruction with every field its modifiers hide set to zero (the generator draws
    /// values for them; [`encode()`] refuses a value in a hidden field).
    pub fn without_hidden(mut self) -> Inst {
        let hidden = self.hidden_mask();
        if hidden == 0 {
            return self;
        }
        let l = self.op.layout();
        let hid = |f: &crate::spec::Field| f.mask & hidden != 0;
        if hid(&l.a_neg) {
            self.a_mods.neg = false;
        }
        if hid(&l.a_abs) {
            self.a_mods.abs = false;
        }
        if l.a_swizzle.as_ref().is_some_and(hid) {
            self.a_mods.swizzle = Swizzle::H1H0;
        }
        if hid(&l.b_neg) {
            self.b_mods.neg = false;
        }
        if hid(&l.b_abs) {
            self.b_mods.abs = false;
        }
        if l.b_swizzle.as_ref().is_some_and(hid) {
            self.b_mods.swizzle = Swizzle::H1H0;
        }
        if let Operand2::Imm { second, .. } = self.b {
            if hid(&l.imm_hi) {
                self.b = Operand2::Imm { first: 0, second };
            }
        }
        if let Some(p) = self.relu.as_mut() {
            if l.relu_pred.as_ref().is_some_and(&hid) {
                p.index = 0;
            }
            if l.relu_pred_neg.as_ref().is_some_and(&hid) {
                p.negated = false;
            }
        }
        self
    }

    /// A plain HMUL2: `HMUL2 dst, a, b` with no modifiers.
    pub fn new(dst: u8, a: u8, b: Operand2) -> Inst {
        Inst::of(Op::Hmul2, dst, a, b)
    }

    /// Whether any field holds a value that nvdisasm names `INVALIDn`: its meaning is unknown.
    pub fn has_invalid_value(&self) -> bool {
        let l = self.op.layout();
        let invalid = |names: &[String], s: Swizzle| names.get(s as usize).is_some_and(|n| n.starts_with("INVALID"));
        invalid(&l.a_swz_names, self.a_mods.swizzle)
            || (self.form().has_b_mods() && invalid(&l.b_swz_names, self.b_mods.swizzle))
            || (self.c.is_some() && self.form().has_c_mods() && invalid(&l.c_swz_names, self.c_mods.swizzle))
            || matches!(self.format, Format::Invalid1 | Format::Invalid3)
            || self.flush == Flush::Invalid3
            || self.bool_op == Some(BoolOp::Invalid3)
    }
}
