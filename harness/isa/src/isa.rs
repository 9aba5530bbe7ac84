//! Typed HMUL2 instructions and their four conversions: encode, decode, render, parse.
//!
//! Text exists only at the edges ([`render`], [`parse`]); everything in between is
//! [`Hmul2`]. All bit positions come from [`crate::spec`].

pub mod decode;
pub mod encode;
pub mod floattext;
pub mod fused;
pub mod hex;
pub mod parse;
pub mod render;
pub mod strtable;

pub use decode::{decode, Illegal};
pub use encode::{encode, EncodeError};
pub use fused::decode_render_into;
pub use hex::{format_hex, parse_hex, HexError};
pub use parse::{parse, ParseError};
pub use render::{render, render_into};

use serde::{Deserialize, Serialize};

/// The guard predicate index meaning "always" (PT).
pub const PT: u8 = 7;
/// The zero register.
pub const RZ: u8 = 255;
/// The zero uniform register.
pub const URZ: u8 = 63;

/// The five operand forms, in the order of the spec's `forms` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Form {
    /// `R,R,R`
    Rrr,
    /// `R,R,F,F`: two 16-bit immediates.
    Imm,
    /// `R,R,c[bank][offset]`
    Const,
    /// `R,R,cx[UR][offset]`
    ConstUr,
    /// `R,R,UR`
    Ur,
}

impl Form {
    pub const ALL: [Form; 5] = [Form::Rrr, Form::Imm, Form::Const, Form::ConstUr, Form::Ur];

    /// Index into the spec's `forms`.
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn spec(self) -> &'static crate::spec::FormSpec {
        &crate::spec::spec().forms[self.index()]
    }
    /// The seed page's key, e.g. `HMUL2_R_R_R`.
    pub fn key(self) -> &'static str {
        &self.spec().key
    }
    /// Short name for the command line (`rrr`, `imm`, `const`, `constx`, `ur`).
    pub fn cli_name(self) -> &'static str {
        &self.spec().cli
    }
    pub fn from_cli(name: &str) -> Option<Form> {
        Form::ALL.into_iter().find(|f| f.cli_name().eq_ignore_ascii_case(name) || f.key().eq_ignore_ascii_case(name))
    }
    /// Whether operand 2 takes neg/abs/half-select modifiers in this form.
    pub fn has_b_mods(self) -> bool {
        self != Form::Imm
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
        f.write_str(self.key())
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
}

impl Swizzle {
    pub const ALL: [Swizzle; 4] = [Swizzle::H1H0, Swizzle::Invalid1, Swizzle::H0H0, Swizzle::H1H1];
    pub fn from_bits(v: u32) -> Swizzle {
        Swizzle::ALL[(v & 3) as usize]
    }
}

/// Source modifiers of operand 1 or operand 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct SrcMods {
    pub neg: bool,
    pub abs: bool,
    pub swizzle: Swizzle,
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
}

impl Flush {
    pub const ALL: [Flush; 4] = [Flush::None, Flush::Fmz, Flush::Ftz, Flush::Invalid3];
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
}

impl Format {
    pub const ALL: [Format; 4] = [Format::F16, Format::Invalid1, Format::Bf16, Format::Invalid3];
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
    /// Whether operand 1 shows `.reuse`.
    pub fn shows_reuse_a(&self) -> bool {
        self.yield_ && self.reuse & 1 != 0
    }
    /// Whether operand 2 shows `.reuse`.
    pub fn shows_reuse_b(&self) -> bool {
        self.yield_ && self.reuse & 2 != 0
    }
}

impl Default for Control {
    /// A safe, legal control word: stall 1, no yield, no barriers, no wait.
    fn default() -> Self {
        Control { stall: 1, yield_: false, wr_bar: 7, rd_bar: 7, wait: 0, reuse: 0 }
    }
}

/// One HMUL2 instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hmul2 {
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
    pub ctrl: Control,
    /// Bits that no field of the form covers and that nvdisasm ignores. Kept so that
    /// `encode(decode(w)) == w` for every legal word; no text shows them.
    pub ignored: u128,
}

impl Hmul2 {
    pub fn form(&self) -> Form {
        self.b.form()
    }

    /// A plain instruction: `HMUL2 dst, a, b` with no modifiers.
    pub fn new(dst: u8, a: u8, b: Operand2) -> Hmul2 {
        Hmul2 {
            pred: Pred::ALWAYS,
            dst,
            a,
            a_mods: SrcMods::default(),
            b,
            b_mods: SrcMods::default(),
            format: Format::F16,
            flush: Flush::None,
            sat: false,
            ctrl: Control::default(),
            ignored: 0,
        }
    }

    /// Whether any field holds a value that nvdisasm names `INVALIDn`: its meaning is unknown.
    pub fn has_invalid_value(&self) -> bool {
        self.a_mods.swizzle == Swizzle::Invalid1
            || (self.form().has_b_mods() && self.b_mods.swizzle == Swizzle::Invalid1)
            || matches!(self.format, Format::Invalid1 | Format::Invalid3)
            || self.flush == Flush::Invalid3
    }
}
