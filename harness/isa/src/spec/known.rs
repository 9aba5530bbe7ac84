//! The names the typed layer understands: the fields `Layout` reads and the value names whose
//! meaning it knows. `build.rs` (compiled with this file) and the spec compiler refuse a spec
//! that declares anything else, so that a misspelt name is a build error, never a field
//! nobody reads or a value quietly taken for `INVALID3`.

/// Fields every instruction spec defines, whatever its shape: `Layout` reads each of them.
pub const REQUIRED_FIELDS: &[&str] = &[
    "opcode",
    "operand_form",
    "ureg_flag",
    "pred",
    "pred_neg",
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
    "format",
    "stall",
    "yield",
    "wr_bar",
    "rd_bar",
    "wait",
    "reuse",
];

/// Fields a spec may define (half selects, saturation, the modifiers of the comparisons and
/// min/max): `Layout` reads them when present. The fields of a shape's kinds are
/// [`SHAPE_FIELDS`]'.
pub const OPTIONAL_FIELDS: &[&str] = &["a_swizzle", "b_swizzle", "sat", "bf", "h_and", "nan", "xorsign"];

/// The fields each kind of the shape brings, by (writes or reads, kind): a spec has them
/// exactly when its shape names the kind (a register write its `dst`, a third source its
/// register slot, a predicate read `.RELU`'s, ...). `writes_when` names a flag field that
/// gates the writes it lists (HMNMX2's `.IS_A`): the flag comes with them.
pub const SHAPE_FIELDS: &[(&str, &str, &[&str])] = &[
    ("writes", "reg", &["dst"]),
    ("writes", "pred", &["p_dst", "q_dst"]),
    ("reads", "reg3", &["c_reg", "c_neg", "c_abs", "c_swizzle", "b_swizzle_hi"]),
    ("reads", "pred", &["relu", "relu_pred", "relu_pred_neg"]),
    ("reads", "compare", &["cmp"]),
    ("reads", "bool_op", &["bool_op", "src_pred", "src_pred_neg"]),
    ("reads", "selector", &["sel_pred", "sel_pred_neg"]),
];

/// Of [`SHAPE_FIELDS`], those a spec may leave out although its shape names their kind
/// (a third source without its own half select or three-bit operand-2 select).
pub const SHAPE_FIELDS_OPTIONAL: &[&str] = &["c_neg", "c_abs", "c_swizzle", "b_swizzle_hi", "relu_pred_neg"];

/// The flag fields `writes_when` may name, gating the writes it lists.
pub const WRITE_GATES: &[&str] = &["is_a"];

/// The fields a shape brings: `writes` and `reads` as the spec gives them (a second `reg`
/// read after the special source is a third source), and `writes_when`'s gates.
pub fn shape_fields(writes: &[&str], reads: &[&str], gates: &[&str]) -> Vec<&'static str> {
    let mut kinds: Vec<(&str, &str)> = writes.iter().map(|w| ("writes", *w)).collect();
    let mut regs = 0;
    for r in reads {
        let r = if *r == "reg" {
            regs += 1;
            if regs > 1 {
                "reg3"
            } else {
                "reg"
            }
        } else {
            r
        };
        kinds.push(("reads", r));
    }
    let mut out: Vec<&'static str> = Vec::new();
    for (side, kind, names) in SHAPE_FIELDS {
        if kinds.contains(&(side, kind)) {
            for n in names.iter() {
                if !out.contains(n) {
                    out.push(n);
                }
            }
        }
    }
    out.extend(WRITE_GATES.iter().filter(|g| gates.contains(g)));
    out
}

/// Every field some shape brings (the names [`check_names`] knows besides the required and
/// optional ones).
pub fn any_shape_field(name: &str) -> bool {
    SHAPE_FIELDS.iter().any(|(_, _, names)| names.contains(&name)) || WRITE_GATES.contains(&name)
}

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
pub const FLAG_NAMES: &[(&str, [&str; 2])] = &[
    ("sat", ["", "SAT"]),
    ("relu", ["", "RELU"]),
    ("bf", ["", "BF"]),
    ("h_and", ["", "H_AND"]),
    ("nan", ["", "NAN"]),
    ("xorsign", ["", "XORSIGN"]),
    ("is_a", ["", "IS_A"]),
];

/// The value names of the comparison field `cmp`, in field order (`Cmp::ALL`'s names).
pub const CMP_NAMES: &[&str] = &["F", "LT", "EQ", "LE", "GT", "NE", "GE", "NUM", "NAN", "LTU", "EQU", "LEU", "GTU", "NEU", "GEU", "T"];

/// The value names of the boolean-operation field `bool_op`, in field order (`BoolOp::ALL`'s).
pub const BOOL_OP_NAMES: &[&str] = &["AND", "OR", "XOR", "INVALID3"];

/// What an instruction may write, by the name its spec's `shape` gives, and whether the typed
/// layer handles it: a register, or a predicate result (two, HSETP2's and HMNMX2's).
pub const WRITE_KINDS: &[(&str, bool)] = &[("reg", true), ("pred", true)];

/// What an instruction may read, in its spec's `shape`: a register, the form's special source
/// (a register, two immediates, c[], cx[] or a uniform register, as the spec's forms say), a
/// predicate with negation (`.RELU`'s), a comparison (HSET2's and HSETP2's `cmp`), a
/// predicate source combined by a boolean operation (their `bool_op`), a min/max selector
/// (HMNMX2's predicate).
pub const READ_KINDS: &[(&str, bool)] = &[("reg", true), ("special", true), ("pred", true), ("bool_op", true), ("compare", true), ("selector", true)];

/// A field as [`check_names`] reads it: its name, kind and value names (a shared field's
/// taken from the included file).
pub struct NamedField<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub values: &'a [String],
}

/// Refuse what the typed layer would not understand: a field it does not read (or one of a
/// kind the spec's shape does not name: `shape` is the fields [`shape_fields`] gives), a
/// required one missing, a value name whose meaning it does not know (or a half select named at
/// another value than the one the typed layer gives that name). `build.rs` runs it on every
/// spec, so that such a spec fails the build; the spec compiler runs it again.
pub fn check_names(fields: &[NamedField], operand2_half_selects: &[String], shape: &[&str]) -> Result<(), String> {
    let bad = |m: String| Err(m);
    for f in fields {
        if !REQUIRED_FIELDS.contains(&f.name) && !OPTIONAL_FIELDS.contains(&f.name) && !any_shape_field(f.name) {
            return bad(format!("field {}: the typed layer does not read it (spec/known.rs lists the fields it does)", f.name));
        }
        if any_shape_field(f.name) && !shape.contains(&f.name) {
            return bad(format!("field {}: the spec's shape names no kind that reads it (spec/known.rs SHAPE_FIELDS)", f.name));
        }
    }
    if let Some(r) = REQUIRED_FIELDS.iter().find(|r| !fields.iter().any(|f| f.name == **r)) {
        return bad(format!("no field {r}, which the typed layer reads"));
    }
    if let Some(r) = shape.iter().find(|r| !SHAPE_FIELDS_OPTIONAL.contains(r) && !fields.iter().any(|f| f.name == **r)) {
        return bad(format!("no field {r}, which the spec's shape needs"));
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
        // names that must sit at their value (the typed layer reads the field's value)
        let at_value: Option<&[&str]> = match f.name {
            "cmp" => Some(CMP_NAMES),
            "bool_op" => Some(BOOL_OP_NAMES),
            _ => None,
        };
        if let Some(names) = at_value {
            if let Some((v, n)) = f.values.iter().enumerate().find(|(v, n)| names.get(*v) != Some(&n.as_str())) {
                return bad(format!("field {}: value {v} is named {n:?}, which the typed layer does not know there (it reads {names:?})", f.name));
            }
            continue;
        }
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
