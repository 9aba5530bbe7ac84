//! The names the typed layer understands: the fields `Layout` reads and the value names whose
//! meaning it knows. `build.rs` (compiled with this file) and the spec compiler refuse a spec
//! that declares anything else, so that a misspelt name is a build error, never a field
//! nobody reads or a value quietly taken for `INVALID3`.

/// Fields every instruction spec defines: `Layout` reads each of them.
pub const REQUIRED_FIELDS: &[&str] = &[
    "opcode",
    "operand_form",
    "ureg_flag",
    "pred",
    "pred_neg",
    "dst",
    "a",
    "a_neg",
    "a_abs",
    "b_reg",
    "b_ureg",
    "imm_lo",
    "imm_hi",
    "cb_offset",
    "cb_bank",
    "b_neg",
    "b_abs",
    "flush",
    "sat",
    "format",
    "stall",
    "yield",
    "wr_bar",
    "rd_bar",
    "wait",
    "reuse",
];

/// Fields a spec may define (half selects, three-source fields): `Layout` reads them when present.
pub const OPTIONAL_FIELDS: &[&str] = &["a_swizzle", "b_swizzle", "c_reg", "c_neg", "c_abs", "c_swizzle", "b_swizzle_hi", "relu", "relu_pred", "relu_pred_neg"];

/// The value names of `flush` and what each means: its index in `Flush::EVERY`.
pub const FLUSH_NAMES: &[(&str, u8)] = &[("", 0), ("FMZ", 1), ("FTZ", 2), ("INVALID3", 3), ("OOB", 4)];

/// The value names of `format` and what each means: its index in `Format::EVERY`. A value
/// nvdisasm rejects, or prints nothing for, has no meaning of its own (the spec's rules make
/// its words illegal); it is typed as `INVALID3`.
pub const FORMAT_NAMES: &[(&str, u8)] = &[("", 0), ("INVALID1", 1), ("BF16_V2", 2), ("INVALID3", 3), ("F32", 4), ("(rejected)", 3), ("(prints nothing)", 3)];

/// The half-select names and the field value each must have: the typed layer reads a half
/// select by its value (`Swizzle`), so a name elsewhere would print one thing and mean another.
pub const HALF_SELECT_NAMES: &[(&str, u32)] =
    &[("", 0), ("INVALID1", 1), ("F32", 1), ("H0_H0", 2), ("H1_H1", 3), ("H0_NH1", 4), ("INVALID5", 5), ("INVALID6", 6), ("INVALID7", 7)];

/// The value names of the one-bit modifiers.
pub const FLAG_NAMES: &[(&str, [&str; 2])] = &[("sat", ["", "SAT"]), ("relu", ["", "RELU"])];

/// What an instruction may write, by the name its spec's `shape` gives, and whether the typed
/// layer handles it yet (a predicate result is declared by name; HSETP2 brings its typing).
pub const WRITE_KINDS: &[(&str, bool)] = &[("reg", true), ("pred", false)];

/// What an instruction may read, in its spec's `shape`: a register, the form's special source
/// (a register, two immediates, c[], cx[] or a uniform register, as the spec's forms say), a
/// predicate with negation (`.RELU`'s); and the kinds the comparisons and min/max bring,
/// known by name and not handled yet.
pub const READ_KINDS: &[(&str, bool)] = &[("reg", true), ("special", true), ("pred", true), ("bool_op", false), ("compare", false), ("selector", false)];
