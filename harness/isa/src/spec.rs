//! The encoding specs: `harness/spec/sm90/<instruction>.json`, each loaded once and compiled
//! into masks.
//!
//! Every bit position of an instruction lives in its file. This module checks it (no field
//! wider than its value, no two fields of a form sharing a bit, every name known) and
//! turns it into [`Field`]s that the encoder and decoder use through [`Layout`].

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::isa::{Flush, Form, Format, Op};
use crate::target::Target;

pub mod known;
pub mod overlay;

/// The fields the target's specs share (`harness/spec/sm90/common.json`, [`Target::common_json`]),
/// which a spec includes with `"include": "common.json"` and names by name in its `fields`.
pub const COMMON_JSON: &str = Target::SM90.common_json;

/// The text of a file a spec may include, by the name its `include` gives (`common`: the
/// shared fields' text, SM90's or a target's copy changed by its overlay).
fn included<'a>(name: &str, common: &'a str) -> Option<&'a str> {
    match name {
        "common.json" => Some(common),
        _ => None,
    }
}

/// The seed page the spec was started from (an automatically derived, untrusted "ISA viewer" page).
pub const SEED_PAGE: &str = Target::SM90.seed_page;

/// One field: where its bits are, what its values are called.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    /// Inclusive `(lo, hi)` segments, least significant first.
    pub segments: Vec<(u8, u8)>,
    pub kind: String,
    pub values: Vec<String>,
    pub scale: u32,
    pub doc: String,
    /// All bits of the field, as a mask of the 128-bit word.
    pub mask: u128,
    pub width: u32,
    /// Largest value (all ones in `width` bits).
    vmax: u32,
    /// The lowest bit, for the one-segment fast path.
    lo: u32,
    single: bool,
}

impl Field {
    /// A field from its segments (inclusive `(lo, hi)`, least significant first); the caller
    /// has checked that they lie inside the word and do not overlap.
    pub fn from_segments(name: String, segments: Vec<(u8, u8)>, kind: String, values: Vec<String>, scale: u32, doc: String) -> Field {
        let mut mask = 0u128;
        let mut width = 0u32;
        for &(lo, hi) in &segments {
            for b in lo..=hi {
                mask |= 1u128 << b;
            }
            width += (hi - lo + 1) as u32;
        }
        Field {
            name,
            kind,
            values,
            scale,
            doc,
            mask,
            width,
            vmax: if width >= 32 { u32::MAX } else { (1u32 << width) - 1 },
            lo: segments.first().map(|s| s.0 as u32).unwrap_or(0),
            single: segments.len() == 1,
            segments,
        }
    }

    /// The field's value in `word`.
    #[inline(always)]
    pub fn get(&self, word: u128) -> u32 {
        if self.single {
            // the common case, kept branch-light for the decoder's hot path
            return ((word >> self.lo) as u32) & self.vmax;
        }
        let mut v = 0u32;
        let mut at = 0u32;
        for &(lo, hi) in &self.segments {
            let w = (hi - lo + 1) as u32;
            v |= (((word >> lo) & ((1u128 << w) - 1)) as u32) << at;
            at += w;
        }
        v
    }

    /// `word` with the field set to `value`; a value that does not fit is an error, never truncated.
    #[inline(always)]
    pub fn set(&self, word: u128, value: u32) -> Result<u128, FieldOverflow> {
        if value & !self.vmax != 0 {
            return Err(self.overflow(value));
        }
        if self.single {
            // the common case (the encoder sets some 30 fields a word)
            return Ok(word & !self.mask | (value as u128) << self.lo);
        }
        Ok(self.set_segments(word, value))
    }

    #[cold]
    #[inline(never)]
    fn overflow(&self, value: u32) -> FieldOverflow {
        FieldOverflow { field: self.name.clone(), value, width: self.width }
    }

    /// [`Field::set`] of a field in several segments, `value` known to fit.
    fn set_segments(&self, word: u128, value: u32) -> u128 {
        let mut w = word & !self.mask;
        let mut at = 0u32;
        for &(lo, hi) in &self.segments {
            let n = (hi - lo + 1) as u32;
            let part = ((value >> at) as u128) & ((1u128 << n) - 1);
            w |= part << lo;
            at += n;
        }
        w
    }

    /// Largest value the field holds.
    #[inline]
    pub fn max(&self) -> u32 {
        self.vmax
    }

    /// Name of a value for enumerated fields ("" for the default); None when the field has no names.
    pub fn value_name(&self, v: u32) -> Option<&str> {
        self.values.get(v as usize).map(|s| s.as_str())
    }
}

/// A value written into a field that cannot hold it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("value {value} does not fit the {width}-bit field {field}")]
pub struct FieldOverflow {
    pub field: String,
    pub value: u32,
    pub width: u32,
}

/// One operand form of HMUL2.
#[derive(Debug, Clone)]
pub struct FormSpec {
    pub key: String,
    pub syntax: String,
    pub cli: String,
    /// Which source (2 or 3) holds the form's special operand (the spec's `special`, 2 when
    /// absent). With 3, operand 2 is read from the register slot (`c_*` fields) and operand
    /// 3 from the special slot (`b_*` fields).
    pub special: u8,
    /// Fields with a required value (opcode, form selector), as indices into [`Spec::fields`].
    pub fixed: Vec<(usize, u32)>,
    /// Fields the form uses: the common ones and its own.
    pub fields: Vec<usize>,
    /// Fields read as two's complement in this form.
    pub signed: Vec<usize>,
    /// Bits nvdisasm ignores in this form: those of no field above.
    pub ignored_mask: u128,
    /// The form's cross-field rules, tabulated: the fields they mention (at most 12 bits in
    /// all) index a bit set of legal combinations. Filled by [`compile`] from `constraints`.
    pub rule_fields: Vec<usize>,
    pub rule_legal: Vec<u64>,
}

/// A cross-field legality rule: in the listed forms (all when empty), when every `when`
/// field lies in its ranges, `field` must lie in one of the `allowed` ranges.
#[derive(Debug, Clone)]
pub struct Constraint {
    pub id: String,
    pub forms: Vec<usize>,
    pub when: Vec<(usize, Vec<(u32, u32)>)>,
    pub field: usize,
    pub allowed: Vec<(u32, u32)>,
    pub doc: String,
    /// A word breaking the rule is one nvdisasm prints nothing for (exit 0, no line at its
    /// address), not one it rejects: the spec's `"nvdisasm": "prints nothing"`.
    pub silent: bool,
    /// The same rule as bit sets, for the decoder's hot path: bit f of `form_set` is form f;
    /// bit v of a value set is value v (rules speak of fields at most 6 bits wide).
    form_set: u32,
    when_sets: Vec<(usize, u64)>,
    allowed_set: u64,
}

fn range_set(ranges: &[(u32, u32)]) -> u64 {
    let mut s = 0u64;
    for &(lo, hi) in ranges {
        for v in lo..=hi.min(63) {
            s |= 1 << v;
        }
    }
    s
}

fn in_ranges(v: u32, ranges: &[(u32, u32)]) -> bool {
    ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&v))
}

impl Constraint {
    /// Whether the rule speaks about `word` of form `form` (its conditions hold).
    #[inline]
    pub fn applies(&self, spec: &Spec, form: usize, word: u128) -> bool {
        self.form_set >> form & 1 == 1 && self.applies_fields(&spec.fields, word)
    }
    fn applies_fields(&self, fields: &[Field], word: u128) -> bool {
        self.when_sets.iter().all(|&(f, set)| set >> fields[f].get(word) & 1 == 1)
    }
    /// Whether `value` of the constrained field is allowed.
    #[inline]
    pub fn allows(&self, value: u32) -> bool {
        debug_assert_eq!(self.allowed_set >> value.min(63) & 1 == 1, in_ranges(value, &self.allowed));
        value < 64 && self.allowed_set >> value & 1 == 1
    }
}

/// A correction of the seed page, with the words that show it.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct Erratum {
    pub id: String,
    pub forms: Vec<String>,
    pub fields: Vec<String>,
    pub seed: String,
    pub nvdisasm: String,
    /// Demonstrating words and the text nvdisasm prints for each (or `illegal`).
    pub words: Vec<ErratumWord>,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct ErratumWord {
    pub hex: String,
    pub nvdisasm: String,
}

/// The whole compiled spec.
#[derive(Debug)]
pub struct Spec {
    pub mnemonic: String,
    pub arch: String,
    pub fields: Vec<Field>,
    pub forms: Vec<FormSpec>,
    pub constraints: Vec<Constraint>,
    pub errata: Vec<Erratum>,
    /// Fields nvdisasm ignores (legal, printed nowhere) when the modifiers hold given values.
    pub hidden: Vec<Hidden>,
    /// The bit of the `reuse` field that marks operand 1 and operand 2 (`operand_reuse`).
    pub reuse_a: u8,
    pub reuse_b: u8,
    /// The reuse bit of operand 3 (the third entry of `operand_reuse`; three-source specs).
    pub reuse_c: u8,
    /// What the instruction writes and reads (the spec's `shape`).
    pub shape: Shape,
    /// How many sources the instruction has: 2 (HMUL2, HADD2) or 3 (HFMA2), the register and
    /// special reads of its `shape`.
    pub sources: u8,
    /// What nvdisasm prints between a constant's bank and offset (`c[0x0] [0x0]` or
    /// `c[0x0][0x0]`): the spec's `const_space`, one space when absent.
    pub const_space: String,
    /// Names of operand 2's half-select values when it has more than two bits (the spec's
    /// `operand2_half_selects`: the slot's two bits and `b_swizzle_hi` as bit 2).
    pub operand2_half_selects: Vec<String>,
    /// The order nvdisasm prints the modifiers and operands in (the spec's `text`); None for
    /// the family's first shape (format, flush, sat, `.RELU`; destination, sources, `.RELU`'s
    /// predicate), which the renderer's tables know.
    pub text: Option<TextOrder>,
    by_name: BTreeMap<String, usize>,
}

/// nvdisasm's order: the suffix fields after the mnemonic (each printed as its value's name,
/// nothing for an empty name), then the operands, by field name (`b`: the special source).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextOrder {
    pub suffixes: Vec<String>,
    pub operands: Vec<String>,
}

/// The operands a spec's `text` may name: the destination, the predicate results, operand 1,
/// the special source (`b`), the predicate source of a boolean operation, the selector.
pub const TEXT_OPERANDS: &[&str] = &["dst", "p_dst", "q_dst", "a", "b", "src_pred", "sel_pred"];

/// What an instruction writes: a register, or a predicate result ([`crate::isa::Inst::pdst`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Reg,
    Pred,
}

/// What an instruction reads, in slot order: operand 1's register, the special slot (the
/// form's special source: a register, two immediates, c[], cx[] or a uniform register; a
/// three-source form's `special` says whether it prints as operand 2 or 3), the register slot
/// of a third source, and `.RELU`'s predicate with its negation.
/// A comparison ([`crate::isa::Inst::cmp`]), a predicate source combined by a boolean
/// operation ([`crate::isa::Inst::bool_op`], [`crate::isa::Inst::psrc`]) and a min/max
/// selector (HMNMX2's [`crate::isa::Inst::psrc`]) follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    Reg,
    Special,
    Pred,
    Compare,
    BoolOp,
    Selector,
}

/// An instruction's shape, from its spec: what it writes and reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub writes: Vec<Write>,
    /// Writes that exist only when a flag is set (HMNMX2's two predicates with `.IS_A`): the
    /// flag field's name, and the writes.
    pub writes_when: Option<(String, Vec<Write>)>,
    pub reads: Vec<Read>,
}

impl Shape {
    /// The register and special sources (2 or 3).
    pub fn sources(&self) -> u8 {
        self.reads.iter().filter(|r| matches!(r, Read::Reg | Read::Special)).count() as u8
    }
    /// Whether the instruction writes a general register.
    pub fn writes_reg(&self) -> bool {
        self.writes.contains(&Write::Reg)
    }
    /// Whether the instruction may write predicates (always, or with its `writes_when` flag).
    pub fn writes_pred(&self) -> bool {
        self.writes.contains(&Write::Pred) || self.writes_when.as_ref().is_some_and(|(_, w)| w.contains(&Write::Pred))
    }
    /// Whether the shape is beyond the family's first (one register result; registers, the
    /// special source and `.RELU`'s predicate read): its text order is the spec's `text`.
    pub fn is_extended(&self) -> bool {
        !self.writes_reg() || self.writes_pred() || self.reads.iter().any(|r| matches!(r, Read::Compare | Read::BoolOp | Read::Selector))
    }
}

/// A field nvdisasm ignores in some words: in the listed forms (all when empty), when every
/// `when` field (format, flush or sat) lies in its ranges, `field`'s bits are ignored bits.
#[derive(Debug, Clone)]
pub struct Hidden {
    pub id: String,
    pub forms: Vec<usize>,
    pub when: Vec<(usize, Vec<(u32, u32)>)>,
    pub field: usize,
    pub doc: String,
}

impl Spec {
    pub fn field(&self, name: &str) -> &Field {
        &self.fields[self.index(name)]
    }
    pub fn index(&self, name: &str) -> usize {
        match self.by_name.get(name) {
            Some(&i) => i,
            None => panic!("{} spec has no field {name:?} (harness/isa/build.rs checks the fields the code reads)", self.mnemonic),
        }
    }
    pub fn try_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    mnemonic: String,
    /// A file of shared fields (`common.json`), whose `arch`, `word_bits` and fields the spec
    /// takes; its `fields` then name shared fields by name.
    #[serde(default)]
    include: Option<String>,
    #[serde(default)]
    arch: Option<String>,
    #[serde(default)]
    word_bits: Option<u32>,
    #[allow(dead_code)]
    #[serde(default)]
    seed_page: Option<String>,
    #[allow(dead_code)]
    doc: String,
    /// Each entry a field of the spec's own (an object with `bits`), a shared field by its
    /// name (a string), or a shared field with the spec's own doc (`{"name", "doc"}`).
    fields: Vec<serde_json::Value>,
    common_fields: Vec<String>,
    forms: Vec<RawForm>,
    constraints: Vec<RawConstraint>,
    #[serde(default)]
    errata: Vec<Erratum>,
    /// Like `errata`, for an instruction with no seed page: the words that show its fields.
    #[serde(default)]
    evidence: Vec<Erratum>,
    #[serde(default)]
    hidden: Vec<RawHidden>,
    #[serde(default)]
    operand_reuse: Option<Vec<u8>>,
    shape: RawShape,
    #[serde(default)]
    const_space: Option<String>,
    #[serde(default)]
    operand2_half_selects: Vec<String>,
    #[serde(default)]
    text: Option<TextOrder>,
    /// Field values of the probe's base word (`ci/probe/family.py`), not read by the typed layer.
    #[allow(dead_code)]
    #[serde(default)]
    base: BTreeMap<String, u32>,
}

/// `{"writes": [...], "reads": [...]}`, by the kinds of [`known::WRITE_KINDS`] and
/// [`known::READ_KINDS`]; `writes_when` gates writes by a flag field (`{"is_a": ["pred", "pred"]}`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShape {
    writes: Vec<String>,
    #[serde(default)]
    writes_when: BTreeMap<String, Vec<String>>,
    reads: Vec<String>,
}

impl RawShape {
    /// The fields the shape brings ([`known::shape_fields`]).
    fn fields(&self) -> Vec<&'static str> {
        fn refs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        let mut writes = refs(&self.writes);
        for w in self.writes_when.values() {
            writes.extend(refs(w));
        }
        let gates: Vec<&str> = self.writes_when.keys().map(String::as_str).collect();
        known::shape_fields(&writes, &refs(&self.reads), &gates)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHidden {
    id: String,
    #[serde(default)]
    forms: Vec<String>,
    when: BTreeMap<String, Vec<[u32; 2]>>,
    field: String,
    doc: String,
}

/// An included file of shared fields (`common.json`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCommon {
    arch: String,
    word_bits: u32,
    #[allow(dead_code)]
    doc: String,
    fields: Vec<RawField>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawField {
    name: String,
    /// Absent in a spec's entry that gives a shared field its own doc.
    #[serde(default)]
    bits: Option<Vec<[u8; 2]>>,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    values: Vec<String>,
    #[serde(default)]
    scale: Option<u32>,
    doc: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawForm {
    key: String,
    syntax: String,
    cli: String,
    #[serde(default)]
    special: Option<u8>,
    fixed: BTreeMap<String, u32>,
    fields: Vec<String>,
    #[serde(default)]
    signed: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConstraint {
    id: String,
    #[serde(default)]
    forms: Vec<String>,
    when: BTreeMap<String, Vec<[u32; 2]>>,
    field: String,
    allowed: Vec<[u32; 2]>,
    /// `"prints nothing"`: nvdisasm lists nothing for a word breaking the rule.
    #[serde(default)]
    nvdisasm: Option<String>,
    doc: String,
}

/// Why a spec text is not a consistent spec.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("spec JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("spec: {0}")]
    Invalid(String),
}

/// The spec's architecture, word size and full field definitions, its `include`d shared
/// fields resolved: a name (or `{"name", "doc"}`) takes the shared field, an object with
/// `bits` defines one of the spec's own. The spec's order is kept (the typed layer and the
/// report list fields in it).
fn resolve_fields(raw: &mut RawSpec, common_text: &str) -> Result<(String, u32, Vec<RawField>), SpecError> {
    let bad = |m: String| Err(SpecError::Invalid(m));
    let common = match &raw.include {
        None => None,
        Some(name) => match included(name, common_text) {
            Some(text) => Some(serde_json::from_str::<RawCommon>(text).map_err(|e| SpecError::Invalid(format!("included {name}: {e}")))?),
            None => return bad(format!("include {name:?}: no such shared file (the only one is \"common.json\")")),
        },
    };
    let (arch, word_bits) = match (&common, raw.arch.take(), raw.word_bits) {
        (Some(c), None, None) => (c.arch.clone(), c.word_bits),
        (None, Some(a), Some(w)) => (a, w),
        (Some(_), _, _) => return bad("arch and word_bits come from the included file; the spec repeats them".into()),
        (None, _, _) => return bad("no arch and word_bits: give both, or include a file that has them".into()),
    };
    let shared = |name: &str| common.as_ref().and_then(|c| c.fields.iter().find(|f| f.name == name));
    let mut fields = Vec::new();
    for entry in std::mem::take(&mut raw.fields) {
        let f = match entry {
            serde_json::Value::String(name) => match shared(&name) {
                Some(c) => RawField { name, bits: c.bits.clone(), kind: c.kind.clone(), values: c.values.clone(), scale: c.scale, doc: c.doc.clone() },
                None => return bad(format!("field {name:?} is named but no included file defines it")),
            },
            v => {
                let f: RawField = serde_json::from_value(v).map_err(|e| SpecError::Invalid(format!("a field: {e}")))?;
                match (shared(&f.name), &f.bits) {
                    (Some(_), Some(_)) => return bad(format!("field {} is defined in the included file: name it, do not define it again", f.name)),
                    (Some(c), None) if f.kind.is_empty() && f.values.is_empty() && f.scale.is_none() => {
                        RawField { bits: c.bits.clone(), kind: c.kind.clone(), values: c.values.clone(), scale: c.scale, ..f }
                    }
                    (Some(_), None) => return bad(format!("field {}: a shared field takes only its own doc here", f.name)),
                    (None, None) => return bad(format!("field {} has no bits", f.name)),
                    (None, Some(_)) => f,
                }
            }
        };
        fields.push(f);
    }
    Ok((arch, word_bits, fields))
}

/// Refuse what the typed layer would not understand: a field it does not read, a required one
/// missing, a value name whose meaning it does not know (or a half select named at another value
/// than the one the typed layer gives that name).
fn check_names(fields: &[RawField], operand2_half_selects: &[String], shape: &RawShape) -> Result<(), SpecError> {
    let named: Vec<known::NamedField> = fields.iter().map(|f| known::NamedField { name: &f.name, kind: &f.kind, values: &f.values }).collect();
    known::check_names(&named, operand2_half_selects, &shape.fields()).map_err(SpecError::Invalid)
}

/// The spec's `shape`, in the kinds the typed layer handles and in the order it reads them:
/// operand 1's register, the special slot, a third source's register slot, then any of
/// `.RELU`'s predicate, a comparison, a boolean operation with its predicate source, a
/// selector, each once. It writes one register, two predicates, or a register and two
/// predicates gated by a flag (`writes_when`). The fields each kind brings are checked by
/// [`check_names`].
fn compile_shape(raw: &RawShape) -> Result<Shape, SpecError> {
    let bad = |m: String| Err(SpecError::Invalid(m));
    let kind = |table: &[(&str, bool)], what: &str, name: &str| -> Result<(), SpecError> {
        match table.iter().find(|(k, _)| *k == name) {
            Some((_, true)) => Ok(()),
            Some((_, false)) => Err(SpecError::Invalid(format!("shape: {what} {name:?} is a kind the typed layer does not handle yet"))),
            None => Err(SpecError::Invalid(format!("shape: {what} {name:?} is no kind the typed layer knows (spec/known.rs lists them)"))),
        }
    };
    let writes_of = |ws: &[String]| -> Result<Vec<Write>, SpecError> {
        ws.iter().map(|w| kind(known::WRITE_KINDS, "write", w).map(|_| if w == "reg" { Write::Reg } else { Write::Pred })).collect()
    };
    let writes = writes_of(&raw.writes)?;
    let mut reads = Vec::new();
    for r in &raw.reads {
        kind(known::READ_KINDS, "read", r)?;
        reads.push(match r.as_str() {
            "reg" => Read::Reg,
            "special" => Read::Special,
            "compare" => Read::Compare,
            "bool_op" => Read::BoolOp,
            "selector" => Read::Selector,
            _ => Read::Pred,
        });
    }
    let writes_when = match raw.writes_when.iter().collect::<Vec<_>>().as_slice() {
        [] => None,
        [(gate, ws)] if known::WRITE_GATES.contains(&gate.as_str()) => Some(((*gate).clone(), writes_of(ws)?)),
        _ => return bad(format!("shape: writes_when {:?}: one flag of {:?}", raw.writes_when.keys().collect::<Vec<_>>(), known::WRITE_GATES)),
    };
    let preds = [Write::Pred, Write::Pred];
    match (writes.as_slice(), &writes_when) {
        ([Write::Reg], None) => {}
        ([Write::Pred, Write::Pred], None) => {}
        ([Write::Reg], Some((_, w))) if *w == preds => {}
        _ => {
            return bad(format!(
                "shape: writes {:?} (when {:?}); the typed layer writes one register, two predicates, or a register and two predicates under a flag",
                raw.writes, raw.writes_when
            ))
        }
    }
    let rest = match reads.as_slice() {
        [Read::Reg, Read::Special, Read::Reg, rest @ ..] => rest,
        [Read::Reg, Read::Special, rest @ ..] => rest,
        _ => return bad(format!("shape: reads {:?}; the typed layer reads \"reg\", \"special\", then an optional \"reg\" and the other kinds", raw.reads)),
    };
    for (i, r) in rest.iter().enumerate() {
        if *r == Read::Reg || *r == Read::Special || rest[..i].contains(r) {
            return bad(format!("shape: reads {:?}; after the sources each other kind once", raw.reads));
        }
    }
    Ok(Shape { writes, writes_when, reads })
}

/// Parse and check a spec text (its shared fields SM90's `common.json`).
pub fn compile(text: &str) -> Result<Spec, SpecError> {
    compile_in(text, COMMON_JSON)
}

/// Parse and check a spec text whose `include` is `common_text`.
pub fn compile_in(text: &str, common_text: &str) -> Result<Spec, SpecError> {
    let mut raw: RawSpec = serde_json::from_str(text)?;
    let bad = |m: String| Err(SpecError::Invalid(m));
    let (arch, word_bits, raw_fields) = resolve_fields(&mut raw, common_text)?;
    let shape = compile_shape(&raw.shape)?;
    check_names(&raw_fields, &raw.operand2_half_selects, &raw.shape)?;
    check_text(&raw, &raw_fields, &shape)?;
    if word_bits != 128 {
        return bad(format!("word_bits is {word_bits}, expected 128"));
    }
    let mut fields = Vec::new();
    let mut by_name = BTreeMap::new();
    for f in raw_fields {
        let bits = f.bits.unwrap_or_default();
        if bits.is_empty() {
            return bad(format!("field {} has no bits", f.name));
        }
        let mut mask = 0u128;
        let mut width = 0u32;
        let mut segments = Vec::new();
        for [lo, hi] in bits {
            if lo > hi || hi > 127 {
                return bad(format!("field {}: bad segment [{lo}, {hi}]", f.name));
            }
            for b in lo..=hi {
                if mask >> b & 1 == 1 {
                    return bad(format!("field {} names bit {b} twice", f.name));
                }
                mask |= 1u128 << b;
            }
            width += (hi - lo + 1) as u32;
            segments.push((lo, hi));
        }
        if width > 32 {
            return bad(format!("field {} is {width} bits wide; at most 32", f.name));
        }
        if !f.values.is_empty() && f.values.len() as u64 != 1u64 << width {
            return bad(format!("field {} has {} value names for {width} bits", f.name, f.values.len()));
        }
        if by_name.insert(f.name.clone(), fields.len()).is_some() {
            return bad(format!("field {} defined twice", f.name));
        }
        fields.push(Field {
            name: f.name,
            kind: f.kind,
            values: f.values,
            scale: f.scale.unwrap_or(1),
            doc: f.doc,
            mask,
            width,
            vmax: if width >= 32 { u32::MAX } else { (1u32 << width) - 1 },
            lo: segments[0].0 as u32,
            single: segments.len() == 1,
            segments,
        });
    }
    let idx = |n: &str| -> Result<usize, SpecError> { by_name.get(n).copied().ok_or_else(|| SpecError::Invalid(format!("unknown field {n:?}"))) };
    let common: Vec<usize> = raw.common_fields.iter().map(|n| idx(n)).collect::<Result<_, _>>()?;
    let mut forms = Vec::new();
    for f in raw.forms {
        let fixed: Vec<(usize, u32)> = f.fixed.iter().map(|(n, v)| Ok((idx(n)?, *v))).collect::<Result<_, SpecError>>()?;
        let mut used: Vec<usize> = common.clone();
        for n in &f.fields {
            used.push(idx(n)?);
        }
        let signed: Vec<usize> = f.signed.iter().map(|n| idx(n)).collect::<Result<_, _>>()?;
        let mut covered = 0u128;
        for &i in fixed.iter().map(|(i, _)| i).chain(used.iter()) {
            if covered & fields[i].mask != 0 {
                return bad(format!("form {}: field {} overlaps another field", f.key, fields[i].name));
            }
            covered |= fields[i].mask;
        }
        for &(i, v) in &fixed {
            if v > fields[i].max() {
                return bad(format!("form {}: fixed {} = {v} does not fit", f.key, fields[i].name));
            }
        }
        let special = f.special.unwrap_or(2);
        if !(2..=shape.sources()).contains(&special) {
            return bad(format!("form {}: special source {special} is not one of the instruction's sources", f.key));
        }
        forms.push(FormSpec {
            key: f.key,
            syntax: f.syntax,
            cli: f.cli,
            special,
            fixed,
            fields: used,
            signed,
            ignored_mask: !covered,
            rule_fields: Vec::new(),
            rule_legal: Vec::new(),
        });
    }
    let mut constraints = Vec::new();
    let ranges = |v: &[[u32; 2]]| v.iter().map(|[a, b]| (*a, *b)).collect::<Vec<_>>();
    for c in raw.constraints {
        let mut cforms = Vec::new();
        for k in &c.forms {
            match forms.iter().position(|f| &f.key == k) {
                Some(i) => cforms.push(i),
                None => return bad(format!("constraint {}: unknown form {k}", c.id)),
            }
        }
        let when = c.when.iter().map(|(n, r)| Ok((idx(n)?, ranges(r)))).collect::<Result<Vec<_>, SpecError>>()?;
        let field = idx(&c.field)?;
        for &i in when.iter().map(|(i, _)| i).chain([&field]) {
            if fields[i].width > 6 {
                return bad(format!("constraint {}: field {} is wider than the 6 bits rules may speak of", c.id, fields[i].name));
            }
        }
        let allowed = ranges(&c.allowed);
        let form_set = if cforms.is_empty() { u32::MAX } else { cforms.iter().fold(0, |s, &f| s | 1 << f) };
        let when_sets = when.iter().map(|(i, r)| (*i, range_set(r))).collect();
        let allowed_set = range_set(&allowed);
        let silent = match c.nvdisasm.as_deref() {
            None => false,
            Some("prints nothing") => true,
            Some(o) => return bad(format!("constraint {}: nvdisasm {o:?}: the only value is \"prints nothing\"", c.id)),
        };
        constraints.push(Constraint { id: c.id, forms: cforms, when, field, allowed, doc: c.doc, silent, form_set, when_sets, allowed_set });
    }
    let mut spec_fields = fields;
    // forms under the same rules share their table (computed once: most of a compile)
    let mut done: Vec<(Vec<usize>, Vec<usize>, Vec<u64>)> = Vec::new();
    for (k, form) in forms.iter_mut().enumerate() {
        let which: Vec<usize> = (0..constraints.len()).filter(|&c| constraints[c].form_set >> k & 1 == 1).collect();
        if let Some((_, involved, legal)) = done.iter().find(|(w, _, _)| *w == which) {
            form.rule_fields = involved.clone();
            form.rule_legal = legal.clone();
            continue;
        }
        let rules: Vec<&Constraint> = which.iter().map(|&c| &constraints[c]).collect();
        let mut involved: Vec<usize> = Vec::new();
        for c in &rules {
            for i in c.when.iter().map(|(i, _)| *i).chain([c.field]) {
                if !involved.contains(&i) {
                    involved.push(i);
                }
            }
        }
        let bits: u32 = involved.iter().map(|&i| spec_fields[i].width).sum();
        if bits > 12 {
            return bad(format!("form {}: its rules mention {bits} bits; at most 12", form.key));
        }
        let mut legal = vec![0u64; (1usize << bits).div_ceil(64)];
        // fields on disjoint bits (the usual case) read back what was set: the rules see
        // each field's part of `combo` directly, with no word built (most of a start-up's
        // compile time); otherwise through a word, as the decoder would read it
        let disjoint = involved.iter().enumerate().all(|(j, &a)| involved[..j].iter().all(|&b| spec_fields[a].mask & spec_fields[b].mask == 0));
        let mut vals = vec![0u32; spec_fields.len()];
        let through_word = |combo: u32| {
            let mut w = 0u128;
            let mut k2 = combo;
            for &i in &involved {
                let f = &spec_fields[i];
                w = f.set(w, k2 & f.max()).unwrap_or(w);
                k2 >>= f.width;
            }
            rules.iter().all(|c| !c.applies_fields(&spec_fields, w) || c.allows(spec_fields[c.field].get(w)))
        };
        for combo in 0..1u32 << bits {
            let ok = if disjoint {
                let mut k2 = combo;
                for &i in &involved {
                    let f = &spec_fields[i];
                    vals[i] = k2 & f.max();
                    k2 >>= f.width;
                }
                let ok = rules.iter().all(|c| !c.when_sets.iter().all(|&(f, set)| set >> vals[f] & 1 == 1) || c.allows(vals[c.field]));
                // (tests build with debug assertions: every compile checks the two ways agree)
                debug_assert_eq!(ok, through_word(combo), "form {}: combination {combo:#x}", form.key);
                ok
            } else {
                through_word(combo)
            };
            if ok {
                legal[combo as usize / 64] |= 1 << (combo % 64);
            }
        }
        form.rule_fields = involved.clone();
        form.rule_legal = legal.clone();
        done.push((which, involved, legal));
    }
    let fields = std::mem::take(&mut spec_fields);
    for e in &raw.errata {
        for n in &e.fields {
            idx(n)?;
        }
        for k in &e.forms {
            if !forms.iter().any(|f| &f.key == k) {
                return bad(format!("erratum {}: unknown form {k}", e.id));
            }
        }
    }
    let mut hidden = Vec::new();
    for h in raw.hidden {
        let mut hforms = Vec::new();
        for k in &h.forms {
            match forms.iter().position(|f| &f.key == k) {
                Some(i) => hforms.push(i),
                None => return bad(format!("hidden {}: unknown form {k}", h.id)),
            }
        }
        let when = h.when.iter().map(|(n, r)| Ok((idx(n)?, ranges(r)))).collect::<Result<Vec<_>, SpecError>>()?;
        // the typed layer decides what is hidden from the modifiers alone (render, generator)
        for (i, _) in &when {
            if !["format", "flush", "sat", "relu", "is_a"].contains(&fields[*i].name.as_str()) {
                return bad(format!("hidden {}: `when` may speak of format, flush, sat, relu and is_a only, not {}", h.id, fields[*i].name));
            }
        }
        hidden.push(Hidden { id: h.id, forms: hforms, when, field: idx(&h.field)?, doc: h.doc });
    }
    let sources = shape.sources();
    let reuse = raw.operand_reuse.unwrap_or(vec![0, 1, 2]);
    let (reuse_a, reuse_b, reuse_c) = match reuse.as_slice() {
        [a, b] if sources == 2 => (*a, *b, 2),
        [a, b, c] => (*a, *b, *c),
        _ => return bad(format!("operand_reuse {reuse:?}: one bit a source ({sources})")),
    };
    if reuse_a.max(reuse_b).max(reuse_c) as u32 >= fields[idx("reuse")?].width {
        return bad(format!("operand_reuse {reuse:?} lies outside the reuse field"));
    }
    if !raw.operand2_half_selects.is_empty() && raw.operand2_half_selects.len() != 8 {
        return bad("operand2_half_selects names the 8 values of a three-bit half select".into());
    }
    let mut errata = raw.errata;
    for e in &raw.evidence {
        if let Some(n) = e.fields.iter().find(|n| idx(n).is_err()) {
            return bad(format!("evidence {}: unknown field {n:?}", e.id));
        }
    }
    errata.extend(raw.evidence);
    Ok(Spec {
        mnemonic: raw.mnemonic,
        arch,
        fields,
        forms,
        constraints,
        errata,
        hidden,
        reuse_a,
        reuse_b,
        reuse_c,
        shape,
        sources,
        const_space: raw.const_space.unwrap_or_else(|| " ".into()),
        operand2_half_selects: raw.operand2_half_selects,
        text: raw.text,
        by_name,
    })
}

/// A shape beyond the family's first needs its `text` (the renderer's order), and the `text`
/// names fields of the spec: suffixes with value names, operands of [`TEXT_OPERANDS`], each of
/// the shape's fields that prints once.
fn check_text(raw: &RawSpec, fields: &[RawField], shape: &Shape) -> Result<(), SpecError> {
    let bad = |m: String| Err(SpecError::Invalid(m));
    let Some(t) = &raw.text else {
        if shape.is_extended() {
            return bad("shape: beyond one register result and .RELU's predicate, the spec gives its text order (`text`)".into());
        }
        return Ok(());
    };
    let field = |n: &str| fields.iter().find(|f| f.name == n);
    for n in &t.suffixes {
        match field(n) {
            Some(f) if !f.values.is_empty() => {}
            Some(_) => return bad(format!("text: suffix {n} has no value names")),
            None => return bad(format!("text: suffix {n} is no field of the spec")),
        }
    }
    for n in &t.operands {
        if !TEXT_OPERANDS.contains(&n.as_str()) || (n != "b" && field(n).is_none()) {
            return bad(format!("text: operand {n} is not one of the spec's operands {TEXT_OPERANDS:?}"));
        }
    }
    let all: Vec<&String> = t.suffixes.iter().chain(&t.operands).collect();
    if let Some(n) = all.iter().enumerate().find(|(i, n)| all[..*i].contains(n)).map(|(_, n)| n) {
        return bad(format!("text: {n} is named twice"));
    }
    for n in ["format", "flush", "cmp", "bool_op", "bf", "h_and", "nan", "xorsign", "is_a", "sat"] {
        if field(n).is_some() && !t.suffixes.iter().any(|s| s == n) {
            return bad(format!("text: the spec's field {n} prints nowhere"));
        }
    }
    for n in ["dst", "p_dst", "q_dst", "src_pred", "sel_pred"] {
        if field(n).is_some() && !t.operands.iter().any(|s| s == n) {
            return bad(format!("text: the spec's operand {n} prints nowhere"));
        }
    }
    Ok(())
}

impl Spec {
    /// The bits of `word` (of form index `form`) that nvdisasm ignores by the `hidden` rules.
    #[inline]
    pub fn hidden_mask(&self, form: usize, word: u128) -> u128 {
        self.hidden_mask_of(form, word, |_| true)
    }

    /// [`Spec::hidden_mask`] of the rules `rule` keeps.
    #[inline]
    pub fn hidden_mask_of(&self, form: usize, word: u128, rule: impl Fn(&Hidden) -> bool) -> u128 {
        let mut m = 0;
        for h in &self.hidden {
            if rule(h) && (h.forms.is_empty() || h.forms.contains(&form)) && h.when.iter().all(|(f, r)| in_ranges(self.fields[*f].get(word), r)) {
                m |= self.fields[h.field].mask;
            }
        }
        m
    }
}

/// A broken cross-field rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: String,
    pub field: String,
    pub value: u32,
}

impl Spec {
    /// The first cross-field rule `word` (of form index `form`) breaks.
    #[inline(always)]
    pub fn check(&self, form: usize, word: u128) -> Result<(), Violation> {
        let fs = &self.forms[form];
        let mut combo = 0usize;
        let mut at = 0u32;
        for &i in &fs.rule_fields {
            let f = &self.fields[i];
            combo |= (f.get(word) as usize) << at;
            at += f.width;
        }
        if fs.rule_legal[combo / 64] >> (combo % 64) & 1 == 1 {
            return Ok(());
        }
        // illegal: find the rule to name; a word nvdisasm rejects is rejected whatever else it
        // breaks, so the rules of words it prints nothing for come last
        for c in self.constraints.iter().filter(|c| !c.silent).chain(self.constraints.iter().filter(|c| c.silent)) {
            if c.applies(self, form, word) {
                let v = self.fields[c.field].get(word);
                if !c.allows(v) {
                    return Err(Violation { rule: c.id.clone(), field: self.fields[c.field].name.clone(), value: v });
                }
            }
        }
        // the table is built from these rules, so this is not reached; decode still never panics
        Err(Violation { rule: "rule-table".into(), field: String::new(), value: combo as u32 })
    }
}

impl Spec {
    /// How many values of `field` occur in some legal word of form index `form`: all of them,
    /// unless the cross-field rules exclude some whatever the other fields hold. Found by
    /// enumerating every combination of the fields the form's rules mention.
    pub fn reachable_values(&self, form: usize, field: usize) -> u64 {
        let f = &self.fields[field];
        if f.width > 16 {
            return 1u64 << f.width.min(63);
        }
        (0..=f.max()).filter(|&v| self.value_reachable(form, field, v)).count() as u64
    }

    /// Whether value `v` of `field` occurs in some legal word of form index `form` (the
    /// cross-field rules may exclude it whatever the other fields hold).
    pub fn value_reachable(&self, form: usize, field: usize, v: u32) -> bool {
        let f = &self.fields[field];
        let rules: Vec<&Constraint> = self.constraints.iter().filter(|c| c.forms.is_empty() || c.forms.contains(&form)).collect();
        let mut involved: Vec<usize> = Vec::new();
        for c in &rules {
            for i in c.when.iter().map(|(i, _)| *i).chain([c.field]) {
                if !involved.contains(&i) {
                    involved.push(i);
                }
            }
        }
        if !involved.contains(&field) {
            return v <= f.max();
        }
        let others: Vec<usize> = involved.into_iter().filter(|&i| i != field).collect();
        let combos: u64 = others.iter().map(|&i| 1u64 << self.fields[i].width).product();
        let Ok(base) = f.set(0, v) else { return false };
        (0..combos).any(|mut k| {
            let mut w = base;
            for &i in &others {
                let fi = &self.fields[i];
                w = fi.set(w, (k & fi.max() as u64) as u32).unwrap_or(w);
                k >>= fi.width;
            }
            self.check(form, w).is_ok()
        })
    }
}

/// The spec of `op`, compiled on first use.
pub fn spec_of(op: Op) -> &'static Spec {
    static SPECS: [OnceLock<Spec>; Op::ALL.len()] = [const { OnceLock::new() }; Op::ALL.len()];
    SPECS[op.index()].get_or_init(|| match compile(op.spec_json()) {
        Ok(s) if s.mnemonic == op.mnemonic() => s,
        Ok(s) => panic!("built-in {} names {} (build.rs generated Op from it)", op.spec_path(), s.mnemonic),
        // The spec is compiled into the binary and checked by tests: failing here is a build defect.
        Err(e) => panic!("built-in {} is inconsistent: {e}", op.spec_path()),
    })
}

/// Field handles resolved once by name, so hot paths do no lookups.
#[derive(Debug)]
pub struct Layout {
    pub op: Op,
    /// The opcode value every form fixes.
    pub opcode_value: u32,
    /// Index in the spec's `forms` of each operand kind ([`Form`] order), by the forms' `cli`,
    /// and the kind of each of the spec's forms.
    pub form_index: [Option<usize>; 10],
    pub form_kind: Vec<Form>,
    /// What each value of the `flush` field means, by its name in the spec ("", "FMZ", "FTZ";
    /// any other name, such as `INVALID3`, is [`Flush::Invalid3`]), and the value of each mode
    /// (None: the instruction has no such mode).
    pub flush_of: Vec<Flush>,
    pub flush_code: [Option<u32>; 5],
    /// The same for the `format` field ("", "BF16_V2", "F32"; others are INVALIDn).
    pub format_of: Vec<Format>,
    pub format_code: [Option<u32>; 5],
    /// The reuse bits of operand 1 and operand 2 (the spec's `operand_reuse`).
    pub reuse_a: u8,
    pub reuse_b: u8,
    pub reuse_c: u8,
    /// Whether the forms use the half-select fields (HFMA2.MMA has none: its bits are ignored).
    pub has_swizzle: bool,
    /// Names of each half-select value of operand 1, 2 and 3 (operand 2's has eight when the
    /// spec names `operand2_half_selects`).
    pub a_swz_names: Vec<String>,
    pub b_swz_names: Vec<String>,
    pub c_swz_names: Vec<String>,
    /// Form index by (operand_form, ureg_flag) when the form's fixed fields are exactly these two
    /// and the opcode; derived from the spec's `fixed` lists.
    pub form_by_selector: Vec<Option<usize>>,
    pub opcode: Field,
    pub operand_form: Field,
    pub ureg_flag: Field,
    pub pred: Field,
    pub pred_neg: Field,
    pub dst: Field,
    pub a: Field,
    pub b_reg: Field,
    pub b_ureg: Field,
    pub imm_lo: Field,
    pub imm_hi: Field,
    pub cb_offset: Field,
    pub cb_bank: Field,
    /// Operand 1's and the special slot's half selects (None: the instruction has none, as
    /// HFMA2.MMA).
    pub b_swizzle: Option<Field>,
    pub b_abs: Field,
    pub b_neg: Field,
    pub a_neg: Field,
    pub a_abs: Field,
    pub a_swizzle: Option<Field>,
    pub flush: Field,
    pub sat: Field,
    pub format: Field,
    pub stall: Field,
    pub yield_: Field,
    pub wr_bar: Field,
    pub rd_bar: Field,
    pub wait: Field,
    pub reuse: Field,
    /// Three-source fields (None in a two-source spec): the register slot, operand 2's
    /// half-select bit 2, `.RELU` and its predicate operand.
    pub c_reg: Option<Field>,
    pub c_neg: Option<Field>,
    pub c_abs: Option<Field>,
    pub c_swizzle: Option<Field>,
    pub b_swizzle_hi: Option<Field>,
    pub relu: Option<Field>,
    pub relu_pred: Option<Field>,
    pub relu_pred_neg: Option<Field>,
    /// Whether the instruction writes a general register (HSETP2 does not: its `dst` is a
    /// field of no bits, and [`crate::isa::Inst::dst`] is RZ).
    pub writes_reg: bool,
    /// The predicate results (HSETP2's always, HMNMX2's with `is_a`), and the flag that gates
    /// them.
    pub p_dst: Option<Field>,
    pub q_dst: Option<Field>,
    pub is_a: Option<Field>,
    /// The predicate source and its negation: a boolean operation's (HSET2, HSETP2) or the
    /// min/max selector (HMNMX2).
    pub psrc: Option<Field>,
    pub psrc_neg: Option<Field>,
    pub cmp: Option<Field>,
    pub bool_op: Option<Field>,
    pub bf: Option<Field>,
    pub h_and: Option<Field>,
    pub nan: Option<Field>,
    pub xorsign: Option<Field>,
    /// The spec these handles are of (a target's: `op.spec()` is SM90's).
    pub spec: &'static Spec,
    /// The target whose spec it is.
    pub target: &'static Target,
}

/// The control fields (stall, yield, scoreboards, wait, reuse), which sit at the same bits in
/// every instruction of the target: the layout of the op [`Target::control_layout_from`] names
/// (a test checks every spec agrees), for code that writes or reads control bits of any word,
/// helpers included.
pub fn control_layout() -> &'static Layout {
    layout_of(control_layout_op(Target::DEFAULT))
}

/// [`control_layout`] of `target`: the layout of its [`Target::control_layout_from`] op (its
/// control bits sit where SM90's do on every target: a test checks; SM90's where the target
/// lacks that op).
pub fn control_layout_for(target: &'static Target) -> &'static Layout {
    layout_for(target, control_layout_op(target)).unwrap_or_else(control_layout)
}

/// The op whose spec gives `target`'s control-bit layout (the first op when the name is none
/// of them; a test checks it is one).
fn control_layout_op(target: &Target) -> Op {
    Op::ALL.into_iter().find(|o| o.mnemonic() == target.control_layout_from).unwrap_or(Op::ALL[0])
}

/// The layout of `op`'s spec.
pub fn layout_of(op: Op) -> &'static Layout {
    static LAYOUTS: [OnceLock<Layout>; Op::ALL.len()] = [const { OnceLock::new() }; Op::ALL.len()];
    LAYOUTS[op.index()].get_or_init(|| build_layout(op, spec_of(op), &Target::SM90))
}

/// Why a target's spec of an instruction is not one.
#[derive(Debug, thiserror::Error)]
pub enum TargetSpecError {
    /// The target's overlay says it lacks the instruction.
    #[error("{target} has no {op} (harness/spec/arch/{dir}/overlay.json)")]
    Absent { target: &'static Target, op: Op, dir: String },
    /// The instruction is of a shape beyond the family's first (HSET2, HSETP2, HMNMX2) and
    /// the target's overlay does not say how the target differs: the target has it
    /// (docs/family.md, "Other architectures"), but the typed layer does not read it there yet.
    #[error("{target} {op}: not typed yet on this architecture (harness/spec/arch/{dir}/overlay.json says nothing of it)")]
    Untyped { target: &'static Target, op: Op, dir: String },
    /// The overlay or the spec it makes is inconsistent.
    #[error("{target} {op}: {msg}")]
    Invalid { target: &'static Target, op: Op, msg: String },
}

/// `op`'s spec for `target`: the base spec changed by the target's overlay (the base spec
/// itself where the target has none), or why there is none.
pub fn compile_for(target: &'static Target, op: Op) -> Result<Spec, TargetSpecError> {
    let invalid = |msg: String| TargetSpecError::Invalid { target, op, msg };
    let Some(text) = target.spec_overlay else { return compile(op.spec_json()).map_err(|e| invalid(e.to_string())) };
    let (arch, insts) = overlay::parse(text).map_err(invalid)?;
    if arch != target.nvdisasm {
        return Err(invalid(format!("the overlay's arch is {arch:?}")));
    }
    if let Some(m) = insts.keys().find(|m| Op::from_mnemonic(m).is_none_or(|o| o.mnemonic() != m.as_str())) {
        return Err(invalid(format!("the overlay names {m:?}, no instruction of the family")));
    }
    let base: serde_json::Value = serde_json::from_str(op.spec_json()).map_err(|e| invalid(e.to_string()))?;
    let common: serde_json::Value = serde_json::from_str(COMMON_JSON).map_err(|e| invalid(e.to_string()))?;
    let (spec, common) = match insts.get(op.mnemonic()) {
        Some(e) if overlay::absent(e) => return Err(TargetSpecError::Absent { target, op, dir: target.nvdisasm.to_lowercase() }),
        None if op.spec().text.is_some() => return Err(TargetSpecError::Untyped { target, op, dir: target.nvdisasm.to_lowercase() }),
        Some(e) => overlay::apply(op.mnemonic(), &base, &common, &arch, e).map_err(invalid)?,
        None => overlay::apply(op.mnemonic(), &base, &common, &arch, &serde_json::json!({"evidence": []})).map_err(invalid)?,
    };
    compile_in(&spec.to_string(), &common.to_string()).map_err(|e| invalid(e.to_string()))
}

/// The words `target`'s overlay gives for how its `op` differs from SM90 (its `evidence`; an
/// instruction it lacks has them too).
pub fn overlay_evidence(target: &'static Target, op: Op) -> Result<Vec<Erratum>, String> {
    let Some(text) = target.spec_overlay else { return Ok(Vec::new()) };
    let (_, insts) = overlay::parse(text)?;
    match insts.get(op.mnemonic()).and_then(|e| e.get("evidence")) {
        Some(e) => serde_json::from_value(e.clone()).map_err(|e| format!("{target} {op}: evidence: {e}")),
        None => Ok(Vec::new()),
    }
}

/// `op`'s compiled spec for `target` (compiled on first use); None where the target lacks
/// the instruction. SM90's is [`spec_of`]'s.
pub fn spec_for(target: &'static Target, op: Op) -> Option<&'static Spec> {
    if target.spec_overlay.is_none() {
        return Some(spec_of(op));
    }
    static SPECS: [[OnceLock<Option<Spec>>; Op::ALL.len()]; Target::ALL.len()] = [const { [const { OnceLock::new() }; Op::ALL.len()] }; Target::ALL.len()];
    let t = Target::ALL.iter().position(|t| t.sm == target.sm).unwrap_or(0);
    SPECS[t][op.index()]
        .get_or_init(|| match compile_for(target, op) {
            Ok(s) => Some(s),
            Err(TargetSpecError::Absent { .. } | TargetSpecError::Untyped { .. }) => None,
            // compiled into the binary and checked by build.rs and the tests: a build defect
            Err(e) => panic!("built-in overlay: {e}"),
        })
        .as_ref()
}

/// Whether `target` has `op` but the typed layer does not read it there yet
/// ([`TargetSpecError::Untyped`]): [`spec_for`] is None, as for an instruction the target
/// lacks, and the decoder says which of the two it is.
pub fn untyped(target: &'static Target, op: Op) -> bool {
    target.spec_overlay.is_some() && spec_for(target, op).is_none() && matches!(compile_for(target, op), Err(TargetSpecError::Untyped { .. }))
}

/// `op`'s layout for `target`; None where the target lacks the instruction.
pub fn layout_for(target: &'static Target, op: Op) -> Option<&'static Layout> {
    if target.spec_overlay.is_none() {
        return Some(layout_of(op));
    }
    static LAYOUTS: [[OnceLock<Option<Layout>>; Op::ALL.len()]; Target::ALL.len()] = [const { [const { OnceLock::new() }; Op::ALL.len()] }; Target::ALL.len()];
    let t = Target::ALL.iter().position(|t| t.sm == target.sm).unwrap_or(0);
    LAYOUTS[t][op.index()].get_or_init(|| spec_for(target, op).map(|s| build_layout(op, s, target))).as_ref()
}

/// The field handles of `s`, `op`'s spec for some target.
fn build_layout(op: Op, s: &'static Spec, target: &'static Target) -> Layout {
    {
        let f = |n: &str| s.field(n).clone();
        let opt = |n: &str| s.try_index(n).map(|i| s.fields[i].clone());
        // a field the shape leaves out (HSETP2's `dst`, the comparisons' `sat`) holds only 0:
        // no bits, so that a value in it does not fit
        let or_none = |n: &str| opt(n).unwrap_or_else(|| Field::from_segments(n.into(), Vec::new(), String::new(), Vec::new(), 1, String::new()));
        // the shape says which sources there are: the register slot's fields with a third
        // source, .RELU's with a predicate read (the compiler checked the fields agree)
        let third = |n: &str| if s.shape.sources() == 3 { opt(n) } else { None };
        let relu = |n: &str| if s.shape.reads.contains(&Read::Pred) { opt(n) } else { None };
        // a spec without operand 1's half select, or whose forms leave it out, has none
        let has_swizzle = s.try_index("a_swizzle").is_some_and(|a_swz| s.forms.iter().all(|fm| fm.fields.contains(&a_swz)));
        let opcode = s.index("opcode");
        let (of, uf) = (s.index("operand_form"), s.index("ureg_flag"));
        let opcode_value = s.forms.first().and_then(|fm| fm.fixed.iter().find(|(i, _)| *i == opcode)).map(|(_, v)| *v).unwrap_or(0);
        let ureg_values = 1usize << s.fields[uf].width;
        let mut form_by_selector = vec![None; (1usize << s.fields[of].width) * ureg_values];
        for (k, fm) in s.forms.iter().enumerate() {
            let get = |i: usize| fm.fixed.iter().find(|(j, _)| *j == i).map(|(_, v)| *v as usize);
            match (get(of), get(uf), get(opcode)) {
                (Some(o), Some(u), Some(op)) if fm.fixed.len() == 3 && op as u32 == opcode_value => form_by_selector[o * ureg_values + u] = Some(k),
                _ => panic!("form {} must fix exactly opcode, operand_form and ureg_flag (the decoder's table relies on it)", fm.key),
            }
        }
        let mut form_index = [None; 10];
        let mut form_kind = Vec::new();
        for (k, fm) in s.forms.iter().enumerate() {
            let found = Form::ALL.into_iter().find(|f| f.cli_name() == fm.cli);
            if let Some(f) = found {
                // the form's kind says where its special source is; the spec says it too
                let fits = f.special_source() == fm.special && (s.sources == 3 || Form::TWO_SOURCE.contains(&f)) && (s.sources == 2 || f != Form::Rrr);
                if !fits {
                    panic!(
                        "{}: form {} ({}) does not fit an instruction of {} sources with its special source {}",
                        op.spec_path(),
                        fm.key,
                        fm.cli,
                        s.sources,
                        fm.special
                    );
                }
            }
            match found {
                Some(f) if form_index[f as usize].is_none() => {
                    form_index[f as usize] = Some(k);
                    form_kind.push(f);
                }
                _ => panic!("{}: form {} has cli {:?}, which is not one unused operand kind", op.spec_path(), fm.key, fm.cli),
            }
        }
        // a value's meaning by its name (the compiler refused names not listed); an unnamed
        // value other than 0 is INVALID3
        let named = |field: &str, names: &[(&str, u8)]| -> (Vec<u32>, [Option<u32>; 5]) {
            let f = s.field(field);
            let mut code = [None; 5];
            let of: Vec<u32> = (0..=f.max())
                .map(|v| {
                    let name = f.value_name(v).unwrap_or(if v == 0 { "" } else { "INVALID3" });
                    let m = names.iter().find(|(n, _)| *n == name).map_or(3, |(_, m)| *m as u32);
                    code[m as usize].get_or_insert(v);
                    m
                })
                .collect();
            (of, code)
        };
        let (flush_of, flush_code) = named("flush", known::FLUSH_NAMES);
        let (format_of, format_code) = named("format", known::FORMAT_NAMES);
        Layout {
            op,
            opcode_value,
            form_index,
            form_kind,
            flush_of: flush_of.into_iter().map(|m| Flush::EVERY[m as usize]).collect(),
            flush_code,
            format_of: format_of.into_iter().map(|m| Format::EVERY[m as usize]).collect(),
            format_code,
            reuse_a: s.reuse_a,
            reuse_b: s.reuse_b,
            reuse_c: s.reuse_c,
            has_swizzle,
            a_swz_names: s.try_index("a_swizzle").map(|i| s.fields[i].values.clone()).unwrap_or_default(),
            b_swz_names: match s.try_index("b_swizzle") {
                Some(_) if !s.operand2_half_selects.is_empty() => s.operand2_half_selects.clone(),
                Some(i) => s.fields[i].values.clone(),
                None => Vec::new(),
            },
            c_swz_names: s.try_index("c_swizzle").map(|i| s.fields[i].values.clone()).unwrap_or_default(),
            form_by_selector,
            opcode: f("opcode"),
            operand_form: f("operand_form"),
            ureg_flag: f("ureg_flag"),
            pred: f("pred"),
            pred_neg: f("pred_neg"),
            dst: or_none("dst"),
            a: f("a"),
            b_reg: f("b_reg"),
            b_ureg: f("b_ureg"),
            imm_lo: f("imm_lo"),
            imm_hi: f("imm_hi"),
            cb_offset: f("cb_offset"),
            cb_bank: f("cb_bank"),
            b_swizzle: opt("b_swizzle"),
            b_abs: f("b_abs"),
            b_neg: f("b_neg"),
            a_neg: f("a_neg"),
            a_abs: f("a_abs"),
            a_swizzle: opt("a_swizzle"),
            flush: f("flush"),
            sat: or_none("sat"),
            format: f("format"),
            stall: f("stall"),
            yield_: f("yield"),
            wr_bar: f("wr_bar"),
            rd_bar: f("rd_bar"),
            wait: f("wait"),
            reuse: f("reuse"),
            c_reg: third("c_reg"),
            c_neg: third("c_neg"),
            c_abs: third("c_abs"),
            c_swizzle: third("c_swizzle"),
            b_swizzle_hi: third("b_swizzle_hi"),
            relu: relu("relu"),
            relu_pred: relu("relu_pred"),
            relu_pred_neg: relu("relu_pred_neg"),
            writes_reg: s.shape.writes_reg(),
            p_dst: opt("p_dst"),
            q_dst: opt("q_dst"),
            is_a: opt("is_a"),
            psrc: opt("src_pred").or_else(|| opt("sel_pred")),
            psrc_neg: opt("src_pred_neg").or_else(|| opt("sel_pred_neg")),
            cmp: opt("cmp"),
            bool_op: opt("bool_op"),
            bf: opt("bf"),
            h_and: opt("h_and"),
            nan: opt("nan"),
            xorsign: opt("xorsign"),
            spec: s,
            target,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> &'static Spec {
        Op::Hmul2.spec()
    }
    const SPEC_JSON: fn() -> &'static str = || Op::Hmul2.spec_json();

    #[test]
    fn builtin_spec_compiles_and_has_five_forms() {
        let s = spec();
        assert_eq!(s.forms.len(), 5);
        assert_eq!(s.mnemonic, "HMUL2");
        let _ = Op::Hmul2.layout();
    }

    #[test]
    fn every_spec_compiles_and_puts_control_and_opcode_bits_in_one_place() {
        let c = control_layout();
        assert_eq!(control_layout_op(&Target::SM90).mnemonic(), Target::SM90.control_layout_from);
        for op in Op::ALL {
            let l = op.layout();
            assert_eq!(op.spec().mnemonic, op.mnemonic());
            // nvdisasm is called with one -b for the whole family: the target's
            assert_eq!(op.spec().arch, Target::SM90.nvdisasm, "{op}");
            assert!(op.spec_path().starts_with(Target::SM90.spec_dir), "{op}");
            for (a, b) in [
                (&l.opcode, &c.opcode),
                (&l.stall, &c.stall),
                (&l.yield_, &c.yield_),
                (&l.wr_bar, &c.wr_bar),
                (&l.rd_bar, &c.rd_bar),
                (&l.wait, &c.wait),
                (&l.reuse, &c.reuse),
            ] {
                assert_eq!(a.mask, b.mask, "{op}: field {} is not where {} has it", a.name, Op::ALL[0]);
            }
            assert_eq!(Op::from_opcode(l.opcode_value), Some(op), "{op}: its opcode names another instruction");
            // (build.rs reads it from the first form's `fixed`, without compiling the spec)
            assert_eq!(op.opcode_value(), l.opcode_value, "{op}: build.rs's opcode is not the compiled spec's");
        }
    }

    #[test]
    fn every_targets_overlay_compiles_and_its_evidence_words_print_as_recorded() {
        for t in Target::ALL {
            for op in Op::ALL {
                let Some(s) = spec_for(t, op) else {
                    assert!(t.spec_overlay.is_some(), "{t} {op}");
                    continue;
                };
                assert_eq!(s.arch, t.nvdisasm, "{t} {op}");
                let l = layout_for(t, op).unwrap();
                assert!(std::ptr::eq(l.spec, s));
                // the control bits and the opcode sit where SM90's do, on every target
                let (c, c90) = (control_layout_for(t), control_layout());
                let fields = |l: &'static Layout| [&l.opcode, &l.stall, &l.yield_, &l.wr_bar, &l.rd_bar, &l.wait, &l.reuse].map(|f| (f.name.clone(), f.mask));
                assert_eq!(fields(l), fields(c), "{t} {op}");
                assert_eq!(fields(c), fields(c90), "{t} {op}");
                if t.spec_overlay.is_none() {
                    continue;
                }
                // the overlay's evidence: each word decodes and renders as nvdisasm printed it
                assert!(!s.errata.is_empty(), "{t} {op}: no evidence");
                for e in &s.errata {
                    for w in &e.words {
                        let word = crate::isa::parse_hex(&w.hex).unwrap();
                        let ours = crate::isa::decode_for(t, word).map(|i| crate::isa::render_for(t, &i).unwrap());
                        match w.nvdisasm.as_str() {
                            "rejected" => assert!(ours.is_err(), "{t} {op} {}: {ours:?}", w.hex),
                            text => assert_eq!(ours.as_deref(), Ok(text), "{t} {op} {}", w.hex),
                        }
                    }
                }
            }
        }
        // an instruction the target lacks: refused everywhere, by name
        let t = &Target::SM100;
        assert!(Op::Hfma2Mma.spec_for(t).is_none());
        assert!(matches!(compile_for(t, Op::Hfma2Mma), Err(TargetSpecError::Absent { .. })));
        let i = crate::isa::Inst::of(Op::Hfma2Mma, 0, 1, crate::isa::Operand2::Reg(2));
        assert_eq!(crate::isa::encode_for(t, &i).unwrap_err().to_string(), "SM100 has no HFMA2.MMA");
        assert!(crate::isa::render_for(t, &i).is_none());
        let e = crate::isa::decode_for(t, crate::isa::encode(&i).unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "SM100 has no HFMA2.MMA (opcode field 0x035)");
        assert!(e.is_other_instruction() && !e.prints_nothing());
        assert!(crate::isa::parse_for(t, "HFMA2.MMA R0, R1, R2, R0").is_err());
    }

    #[test]
    fn a_bad_overlay_is_refused_naming_what() {
        let base: serde_json::Value = serde_json::from_str(Op::Hmul2.spec_json()).unwrap();
        let common: serde_json::Value = serde_json::from_str(COMMON_JSON).unwrap();
        let apply = |e: serde_json::Value| overlay::apply("HMUL2", &base, &common, "SM86", &e).map(|_| ()).unwrap_err();
        assert!(apply(serde_json::json!({"remove_forms": ["HMUL2_R_R_Q"]})).contains("no form \"HMUL2_R_R_Q\""));
        assert!(apply(serde_json::json!({"remove_fields": ["b_swizle"]})).contains("no field \"b_swizle\""));
        assert!(apply(serde_json::json!({"remove_constraints": ["yield-stal"]})).contains("no rule \"yield-stal\""));
        assert!(apply(serde_json::json!({"fields": {"fromat": {"doc": "x"}}})).contains("no field \"fromat\""));
        let text = |e: serde_json::Value| serde_json::json!({"arch": "SM86", "doc": "d", "instructions": {"HMUL2": e}}).to_string();
        let ev = serde_json::json!([{"id": "x", "forms": [], "fields": [], "seed": "", "nvdisasm": "", "words": [{"hex": "0x0", "nvdisasm": "rejected"}]}]);
        assert!(overlay::parse(&text(serde_json::json!({"doc": "d", "evidence": ev, "remove_form": []}))).unwrap_err().contains("unknown key \"remove_form\""));
        assert!(overlay::parse(&text(serde_json::json!({"doc": "d"}))).unwrap_err().contains("no \"evidence\""));
        assert!(overlay::parse(&text(serde_json::json!({"doc": "d", "evidence": ev, "fields": {"format": {"doc": "d", "bit": []}}})))
            .unwrap_err()
            .contains("unknown key \"bit\""));
        // a value name the typed layer does not know
        let (spec, common2) =
            overlay::apply("HMUL2", &base, &common, "SM86", &serde_json::json!({"fields": {"format": {"values": ["", "F23", "", ""], "doc": "d"}}})).unwrap();
        let m = compile_in(&spec.to_string(), &common2.to_string()).map(|_| ()).unwrap_err().to_string();
        assert!(m.contains("\"F23\""), "{m}");
    }

    #[test]
    fn set_refuses_values_that_do_not_fit() {
        let f = spec().field("pred");
        assert!(f.set(0, 8).is_err());
        assert_eq!(f.set(0, 7).unwrap(), 7u128 << 12);
    }

    #[test]
    fn split_fields_round_trip() {
        let f = spec().field("flush");
        for v in 0..4 {
            let w = f.set(0, v).unwrap();
            assert_eq!(f.get(w), v);
        }
        assert_eq!(f.set(0, 1).unwrap(), 1u128 << 76);
        assert_eq!(f.set(0, 2).unwrap(), 1u128 << 80);
    }

    #[test]
    fn overlapping_fields_are_rejected() {
        let text = SPEC_JSON().replace("\"fields\": [\"b_reg\"", "\"fields\": [\"b_reg\", \"imm_lo\"");
        assert_ne!(text, SPEC_JSON(), "the patch applies");
        match compile(&text) {
            Err(SpecError::Invalid(m)) => assert!(m.contains("field imm_lo overlaps another field"), "{m}"),
            other => panic!("not refused as an overlap: {:?}", other.map(|_| ())),
        }
    }

    /// The spec's text with its entry of field `name` (a name or an object) replaced by `with`.
    fn with_field_entry(name: &str, with: serde_json::Value) -> String {
        let mut v: serde_json::Value = serde_json::from_str(SPEC_JSON()).unwrap();
        let fields = v["fields"].as_array_mut().unwrap();
        let at = fields.iter().position(|f| f.as_str() == Some(name) || f["name"].as_str() == Some(name)).unwrap();
        fields[at] = with;
        v.to_string()
    }

    fn refusal(text: &str) -> String {
        match compile(text) {
            Err(SpecError::Invalid(m)) => m,
            other => panic!("not refused: {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn shared_fields_are_named_once_and_not_redefined() {
        // every spec takes its shared fields from common.json, with the same bits
        let common: serde_json::Value = serde_json::from_str(COMMON_JSON).unwrap();
        for op in Op::ALL {
            let v: serde_json::Value = serde_json::from_str(op.spec_json()).unwrap();
            assert_eq!(v["include"], "common.json", "{op}");
            for f in common["fields"].as_array().unwrap() {
                let name = f["name"].as_str().unwrap();
                if let Some(i) = op.spec().try_index(name) {
                    let bits: Vec<(u8, u8)> =
                        f["bits"].as_array().unwrap().iter().map(|s| (s[0].as_u64().unwrap() as u8, s[1].as_u64().unwrap() as u8)).collect();
                    assert_eq!(op.spec().fields[i].segments, bits, "{op}: {name}");
                }
            }
        }
        let m = refusal(&with_field_entry("dst", serde_json::json!({"name": "dst", "bits": [[16, 23]], "kind": "reg", "doc": "again"})));
        assert!(m.contains("field dst is defined in the included file"), "{m}");
        let m = refusal(&with_field_entry("dst", serde_json::json!("dest")));
        assert!(m.contains("field \"dest\" is named but no included file defines it"), "{m}");
        let m = refusal(&with_field_entry("dst", serde_json::json!({"name": "dst", "kind": "ureg", "doc": "other kind"})));
        assert!(m.contains("a shared field takes only its own doc"), "{m}");
        let m = refusal(&SPEC_JSON().replace("\"include\": \"common.json\"", "\"include\": \"commons.json\""));
        assert!(m.contains("include \"commons.json\": no such shared file"), "{m}");
    }

    #[test]
    fn a_field_the_typed_layer_does_not_read_is_refused() {
        // bits 92..93 are free in every HMUL2 form: a field there would be accepted, encoded as
        // 0 and decoded nowhere, were it not refused
        let mut v: serde_json::Value = serde_json::from_str(SPEC_JSON()).unwrap();
        v["fields"].as_array_mut().unwrap().push(serde_json::json!({"name": "dst_pred", "bits": [[92, 93]], "kind": "pred", "doc": "new"}));
        let m = refusal(&v.to_string());
        assert!(m.contains("field dst_pred: the typed layer does not read it"), "{m}");
        let mut v: serde_json::Value = serde_json::from_str(SPEC_JSON()).unwrap();
        v["fields"].as_array_mut().unwrap().retain(|f| f.as_str() != Some("wait"));
        let m = refusal(&v.to_string());
        assert!(m.contains("no field wait, which the typed layer reads"), "{m}");
    }

    #[test]
    fn a_value_name_the_typed_layer_does_not_know_is_refused() {
        // a misspelt flush name once became INVALID3 silently
        let text = SPEC_JSON().replace("[\"\", \"FMZ\", \"FTZ\", \"INVALID3\"]", "[\"\", \"FMZ\", \"FTZZ\", \"INVALID3\"]");
        assert_ne!(text, SPEC_JSON(), "the patch applies");
        let m = refusal(&text);
        assert!(m.contains("field flush: value 2 is named \"FTZZ\", which the typed layer does not know"), "{m}");
        let text = SPEC_JSON().replace("\"BF16_V2\", \"INVALID3\"]", "\"BF16\", \"INVALID3\"]");
        assert_ne!(text, SPEC_JSON(), "the patch applies");
        assert!(refusal(&text).contains("field format: value 2 is named \"BF16\""));
        // a half select named at another value than the one the typed layer reads it as
        let mut v: serde_json::Value = serde_json::from_str(SPEC_JSON()).unwrap();
        v["operand2_half_selects"] = serde_json::json!(["", "INVALID1", "H1_H1", "H0_H0", "H0_NH1", "INVALID5", "INVALID6", "INVALID7"]);
        let m = refusal(&v.to_string());
        assert!(m.contains("field operand2_half_selects: value 2 is named \"H1_H1\", which the typed layer reads as value 3"), "{m}");
        // the kinds the comparisons bring: a comparison or boolean operation named at another
        // value, a flag's misspelt suffix
        let hset2 = Op::Hset2.spec_json();
        for (from, to, want) in [
            ("\"NUM\", \"NAN\"", "\"NAN\", \"NUM\"", "field cmp: value 7 is named \"NAN\""),
            ("\"LTU\"", "\"LTT\"", "field cmp: value 9 is named \"LTT\""),
            ("[\"AND\", \"OR\"", "[\"AND\", \"OR2\"", "field bool_op: value 1 is named \"OR2\""),
            ("[\"\", \"BF\"]", "[\"\", \"BFF\"]", "field bf: value 1 is named \"BFF\""),
        ] {
            let text = hset2.replacen(from, to, 1);
            assert_ne!(text, hset2, "the patch {from} applies");
            let m = refusal(&text);
            assert!(m.contains(want), "{m}");
        }
    }

    #[test]
    fn the_shape_comes_from_the_spec_and_is_checked() {
        for op in Op::ALL {
            let (s, l) = (op.spec(), op.layout());
            assert_eq!(s.sources, s.shape.sources(), "{op}");
            assert_eq!(s.shape.reads.contains(&Read::Pred), l.relu_pred.is_some(), "{op}");
            assert_eq!(s.shape.writes_reg(), l.writes_reg, "{op}");
            assert_eq!(s.shape.writes_pred(), l.p_dst.is_some() && l.q_dst.is_some(), "{op}");
            assert_eq!(s.shape.reads.contains(&Read::Compare), l.cmp.is_some(), "{op}");
            assert_eq!(s.shape.reads.contains(&Read::BoolOp), l.bool_op.is_some() && l.psrc.is_some(), "{op}");
            assert_eq!(s.shape.reads.contains(&Read::Selector), l.psrc.is_some() && l.bool_op.is_none(), "{op}");
            // the text order is data exactly where the shape goes beyond the first
            assert_eq!(s.text.is_some(), s.shape.is_extended(), "{op}");
        }
        assert_eq!(Op::Hsetp2.spec().shape.writes, [Write::Pred, Write::Pred]);
        assert!(Op::Hsetp2.spec().try_index("dst").is_none() && Op::Hset2.spec().try_index("sat").is_none());
        let with_shape = |shape: &str| SPEC_JSON().replace("\"shape\": {\"writes\": [\"reg\"], \"reads\": [\"reg\", \"special\"]}", shape);
        assert_ne!(with_shape("\"shape\": {}"), SPEC_JSON(), "the patch applies");
        // two predicate results need their fields; and a register result's dst is then unread
        let m = refusal(&with_shape("\"shape\": {\"writes\": [\"pred\", \"pred\"], \"reads\": [\"reg\", \"special\"]}"));
        assert!(m.contains("field dst: the spec's shape names no kind that reads it"), "{m}");
        let m = refusal(&with_shape("\"shape\": {\"writes\": [\"reg\"], \"reads\": [\"reg\", \"speical\"]}"));
        assert!(m.contains("shape: read \"speical\" is no kind the typed layer knows"), "{m}");
        // a third source needs the register slot's field, which HMUL2's spec lacks
        let m = refusal(&with_shape("\"shape\": {\"writes\": [\"reg\"], \"reads\": [\"reg\", \"special\", \"reg\"]}"));
        assert!(m.contains("no field c_reg, which the spec's shape needs"), "{m}");
        let mut v: serde_json::Value = serde_json::from_str(SPEC_JSON()).unwrap();
        v["fields"].as_array_mut().unwrap().push(serde_json::json!("relu"));
        let m = refusal(&v.to_string());
        assert!(m.contains("field relu: the spec's shape names no kind that reads it"), "{m}");
        let m = refusal(&with_shape("\"shape\": {\"writes\": [\"reg\"], \"reads\": [\"special\", \"reg\"]}"));
        assert!(m.contains("the typed layer reads \"reg\", \"special\""), "{m}");
        // the comparisons' kinds: each brings its fields, and the spec must have them and
        // nothing of a kind its shape does not name
        let hset2 = Op::Hset2.spec_json();
        let reads = "\"reads\": [\"reg\", \"special\", \"compare\", \"bool_op\"]";
        assert!(hset2.contains(reads));
        let m = refusal(&hset2.replace(reads, "\"reads\": [\"reg\", \"special\", \"bool_op\"]"));
        assert!(m.contains("field cmp: the spec's shape names no kind that reads it"), "{m}");
        let m = refusal(&hset2.replace(reads, "\"reads\": [\"reg\", \"special\", \"comapre\", \"bool_op\"]"));
        assert!(m.contains("shape: read \"comapre\" is no kind the typed layer knows"), "{m}");
        let m = refusal(&hset2.replace(reads, "\"reads\": [\"reg\", \"special\", \"compare\", \"bool_op\", \"selector\"]"));
        assert!(m.contains("no field sel_pred, which the spec's shape needs"), "{m}");
        let m = refusal(&hset2.replace(reads, "\"reads\": [\"reg\", \"special\", \"compare\", \"compare\", \"bool_op\"]"));
        assert!(m.contains("after the sources each other kind once"), "{m}");
        let mut v: serde_json::Value = serde_json::from_str(hset2).unwrap();
        v["fields"].as_array_mut().unwrap().push(serde_json::json!({"name": "cmp_hi", "bits": [[92, 92]], "kind": "flag", "doc": "new"}));
        let m = refusal(&v.to_string());
        assert!(m.contains("field cmp_hi: the typed layer does not read it"), "{m}");
        // the text order is the spec's: a shape beyond the first needs it, and it names fields
        let mut v: serde_json::Value = serde_json::from_str(hset2).unwrap();
        v.as_object_mut().unwrap().remove("text");
        let m = refusal(&v.to_string());
        assert!(m.contains("the spec gives its text order"), "{m}");
        let mut v: serde_json::Value = serde_json::from_str(hset2).unwrap();
        v["text"]["suffixes"].as_array_mut().unwrap().retain(|x| x != "bf");
        let m = refusal(&v.to_string());
        assert!(m.contains("text: the spec's field bf prints nowhere"), "{m}");
        let mut v: serde_json::Value = serde_json::from_str(hset2).unwrap();
        v["text"]["operands"].as_array_mut().unwrap().push(serde_json::json!("q_dst"));
        let m = refusal(&v.to_string());
        assert!(m.contains("text: operand q_dst is not one of the spec's operands"), "{m}");
    }
}
