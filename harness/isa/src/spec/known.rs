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

/// A field as [`check_names`] reads it: its name, kind and value names (a shared field's
/// taken from the included file).
pub struct NamedField<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub values: &'a [String],
}

/// Refuse what the typed layer would not understand: a field it does not read, a required one
/// missing, a value name whose meaning it does not know (or a half select named at another
/// value than the one the typed layer gives that name). `build.rs` runs it on every spec, so
/// that such a spec fails the build; the spec compiler runs it again.
pub fn check_names(fields: &[NamedField], operand2_half_selects: &[String]) -> Result<(), String> {
    let bad = |m: String| Err(m);
    for f in fields {
        if !REQUIRED_FIELDS.contains(&f.name) && !OPTIONAL_FIELDS.contains(&f.name) {
            return bad(format!("field {}: the typed layer does not read it (spec/known.rs lists the fields it does)", f.name));
        }
    }
    if let Some(r) = REQUIRED_FIELDS.iter().find(|r| !fields.iter().any(|f| f.name == **r)) {
        return bad(format!("no field {r}, which the typed layer reads"));
    }
    let half_select = |field: &str, names: &[String]| -> Result<(), String> {
        for (v, n) in names.iter().enumerate() {
            match HALF_SELECT_NAMES.iter().find(|(k, _)| k == n) {
                Some((_, at)) if *at == v as u32 => {}
                Some((_, at)) => return bad(format!("field {field}: value {v} is named {n:?}, which the typed layer reads as value {at}")),
                None => return bad(format!("field {field}: value {v} is named {n:?}, a half select the typed layer does not know")),
            }
        }
        Ok(())
    };
    for f in fields {
        let meanings: Option<Vec<&str>> = match f.name {
            "flush" => Some(FLUSH_NAMES.iter().map(|(n, _)| *n).collect()),
            "format" => Some(FORMAT_NAMES.iter().map(|(n, _)| *n).collect()),
            n => FLAG_NAMES.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_vec()),
        };
        match meanings {
            Some(names) => {
                if let Some((v, n)) = f.values.iter().enumerate().find(|(_, n)| !names.contains(&n.as_str())) {
                    return bad(format!("field {}: value {v} is named {n:?}, which the typed layer does not know (one of {names:?})", f.name));
                }
            }
            None if f.kind == "swizzle" => half_select(f.name, f.values)?,
            None if !f.values.is_empty() => return bad(format!("field {}: names values the typed layer does not read", f.name)),
            None => {}
        }
    }
    half_select("operand2_half_selects", operand2_half_selects)
}
