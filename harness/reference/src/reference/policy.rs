//! The reference's named assumptions, read from `harness/spec/semantics.json`.
//!
//! The JSON is the one place a choice is made: each knob below knows the exact text of each
//! of its options, and the option whose text is the entry's `assumption` is the one the
//! reference uses. Settling a point = swapping `assumption` with the alternative hardware
//! showed, setting `status` and `evidence`. A test checks that every entry's texts are
//! exactly the options its knob knows, so the file and the code cannot drift apart.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The committed table, compiled in so the reference is the same binary everywhere.
pub const SEMANTICS_JSON: &str = include_str!("../../../spec/semantics.json");

/// One entry of `semantics.json` (the HTML report and `settle` read the same type; a missing
/// key other than `status` takes its default).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assumption {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub topic: String,
    /// The instructions the entry is about: those whose results its options change
    /// (checked against the reference by `tests/semantics_scope.rs`). `settle` weighs each
    /// instruction's vectors of it alone, and the report groups entries by instruction.
    #[serde(default)]
    pub instructions: Vec<crate::isa::Op>,
    /// Instructions the entry is about whose semantics the reference has but the isa does
    /// not know yet (no [`crate::isa::Op`]; issue 41's HSET2, HSETP2 and HMNMX2), by
    /// mnemonic. Each is one of [`PENDING`]; when the isa gains one, a test fails until it
    /// moves to `instructions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_instructions: Vec<String>,
    #[serde(default)]
    pub assumption: String,
    #[serde(default)]
    pub alternatives: Vec<String>,
    /// `assumed` or `hardware-confirmed`.
    pub status: Status,
    /// A vector line that shows the choice on hardware, when one exists.
    #[serde(default)]
    pub evidence: Option<String>,
    /// What sources other than hardware say (a compiler, a document, another project's
    /// code). They inform the assumption; they never make an entry `hardware-confirmed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<Outside>,
}

/// Where an entry of the table stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The reference's choice, not yet shown by hardware.
    Assumed,
    /// A hardware vector (`evidence`) shows the choice.
    HardwareConfirmed,
}

impl Status {
    /// The word the table uses.
    pub fn name(self) -> &'static str {
        match self {
            Status::Assumed => "assumed",
            Status::HardwareConfirmed => "hardware-confirmed",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One piece of evidence from outside the hardware, and the option it supports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outside {
    /// Who says it, with its version (e.g. "ptxas 13.0.88 and the PTX ISA").
    #[serde(default)]
    pub source: String,
    /// What it says or does, in our words.
    #[serde(default)]
    pub says: String,
    /// The exact text of the option it supports (the assumption or an alternative).
    #[serde(default)]
    pub supports: String,
    /// The test that re-checks it on every CI run, when one can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
}

/// The instructions whose semantics modules exist before the isa knows them: what
/// `pending_instructions` may name. None today: HSET2, HSETP2 and HMNMX2 ([`super::compare`],
/// [`super::minmax`]) are in the isa, and their entries list them in `instructions`.
pub const PENDING: &[&str] = &[];

/// What the reference does where no document settles the semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// true: every NaN result is 0x7fff; false: the first NaN operand propagates, quieted.
    pub nan_canonical: bool,
    /// true: -|x| when both modifiers are set; false: |-x|.
    pub abs_then_neg: bool,
    /// true: bits 32..47 feed lane 0; false: bits 48..63 do.
    pub imm_second_is_lane0: bool,
    pub ftz_inputs: bool,
    /// true: tininess after rounding; false: before.
    pub ftz_after_rounding: bool,
    pub fmz: FmzZero,
    pub fmz_flushes: bool,
    pub flush_bf16: bool,
    /// true: .SAT(-0) = +0.
    pub sat_neg_zero_to_plus: bool,
    /// true: .SAT(NaN) = +0.
    pub sat_nan_to_zero: bool,
    pub sat_bf16: bool,
    /// true: INVALIDn fields are undefined even when predicated off.
    pub invalid_even_if_off: bool,
    /// HADD2 ([`super::add`]): the sign of an exact zero sum.
    pub add_zero_sum: ZeroSum,
    /// HADD2.FTZ: true: a flushed subnormal sum keeps its sign; false: +0.
    pub add_ftz_keeps_sign: bool,
    /// HADD2.F32: true: the halves of lane 0 after half selection are added; false: lane 1's.
    pub add_f32_lane0: bool,
    pub add_f32_nan: F32Nan,
    /// HADD2.F32.FTZ: true: subnormal FP16 inputs are flushed (as `ftz-inputs` says for lanes).
    pub add_f32_ftz_inputs: bool,
    /// HADD2.F32.SAT: true: the FP32 sum is clamped as lanes are.
    pub add_f32_sat: bool,
    /// HFMA2 ([`super::fma`]): the sign of an exact zero sum `a * b + c`.
    pub fma_zero_sum: ZeroSum,
    /// HFMA2.FTZ: true: a subnormal addend is flushed as the factors are.
    pub fma_ftz_addend: bool,
    /// HFMA2.FTZ: true: an exact product below the smallest normal is flushed before the
    /// addition; false: only the result is.
    pub fma_ftz_product: bool,
    /// HFMA2.FMZ: true: the zero product is added to c by IEEE rules; false: c is the result.
    pub fma_fmz_addend_ieee: bool,
    /// HFMA2.RELU: true: -0 gives +0.
    pub fma_relu_neg_zero_to_plus: bool,
    pub fma_relu_nan: ReluNan,
    /// true: HFMA2.MMA computes what HFMA2 does; false: it has no value.
    pub fma_mma_same: bool,
    /// HSET2/HSETP2 ([`super::compare`]): the lanes .FTZ flushes before comparing.
    pub cmp_ftz: FlushLanes,
    /// HSET2.BF with .BF16_V2: true: a true lane is BF16's 1.0 (0x3f80); false: 0x3c00.
    pub hset2_bf_bf16_one: bool,
    pub hsetp2_h_and: HAnd,
    /// HMNMX2 ([`super::minmax`]): the lanes .FTZ flushes before selecting.
    pub mnmx_ftz: FlushLanes,
    /// HMNMX2 without .NAN, both inputs NaN.
    pub mnmx_nan: MinMaxNan,
    /// HMNMX2.NAN, some input NaN.
    pub mnmx_nan_modifier: MinMaxNan,
    pub mnmx_zero: MinMaxZero,
    pub mnmx_xorsign_from: XorSignFrom,
    /// HMNMX2.XORSIGN: true: a NaN result keeps its sign.
    pub mnmx_xorsign_nan_keeps: bool,
}

/// The lane formats a flush modifier acts on (comparisons and min/max).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushLanes {
    /// FP16 and BF16 lanes.
    Both,
    /// FP16 lanes; ignored with .BF16_V2.
    F16Only,
    /// None: the modifier changes nothing.
    Neither,
}

/// What HSETP2.H_AND writes to its two predicates, `t = t0 && t1` (the lanes' comparisons
/// ANDed) and `op(x, c)` the boolean operation with the predicate source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HAnd {
    /// `op(t, c)` and `op(!t, c)` (what Mesa's NAK describes).
    Complement,
    /// `op(t, c)` to both.
    Same,
    /// `op(t, c)` and its negation.
    NotFirst,
}

/// Which NaN HMNMX2 gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinMaxNan {
    /// 0x7fff.
    Canonical,
    /// The first NaN input (after modifiers, operand 1 before operand 2), quieted.
    FirstQuieted,
    /// The first NaN input, bits unchanged.
    FirstAsIs,
}

/// What HMNMX2 gives for zeros of opposite signs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinMaxZero {
    /// -0 < +0: min gives -0, max +0.
    MinusBelowPlus,
    /// Equal: operand 1.
    Operand1,
    /// Equal: operand 2.
    Operand2,
}

/// Where HMNMX2.XORSIGN takes the two signs it combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XorSignFrom {
    /// The source halves before -x and |x|.
    Sources,
    /// The inputs after the modifiers.
    Modified,
}

/// What HFMA2.RELU makes of a NaN result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReluNan {
    /// 0x7fff, whatever `nan-result` says.
    Canonical,
    /// The NaN `nan-result` gives, unchanged.
    Pass,
    /// +0.
    Zero,
}

/// The sign HADD2 gives an exact zero sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroSum {
    /// IEEE 754 in round to nearest: -0 only for -0 + -0.
    Ieee,
    /// Always +0.
    Plus,
    /// -0 unless both operands are +0 (IEEE 754's rule rounding toward negative infinity).
    MinusUnlessBothPlus,
}

/// What HADD2.F32 writes for a NaN result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F32Nan {
    /// 0x7fffffff.
    Canonical,
    /// The first NaN operand widened exactly and quieted (Inf + -Inf: 0x7fffffff).
    Propagate,
    /// FP16's 0x7fff widened: 0x7fffe000.
    WidenedF16,
}

/// What `.FMZ` makes of a product with a zero factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmzZero {
    /// Zero with the exclusive or of the signs.
    XorSign,
    /// Always +0.
    PlusZero,
    /// No special case: 0 x Inf and 0 x NaN stay NaN.
    Ieee,
}

/// Each knob: its id and the exact text of each option, in the order `apply` numbers them.
pub const KNOBS: &[(&str, &[&str])] = &[
    ("nan-result", &[
        "Every NaN result is the canonical NaN 0x7fff (FP16 and BF16), whatever the operands' payloads, signs and modifiers.",
        "The first NaN operand (after modifiers, operand 1 before operand 2) is propagated with its payload, quieted; a NaN made from non-NaN operands (0 x Inf) is 0x7fff.",
    ]),
    ("abs-neg-order", &[
        "With both .abs and .neg on a source, the absolute value is taken first, then negated: -|x|.",
        "Negation first, then absolute value: |-x| = |x|.",
    ]),
    ("imm-lanes", &[
        "The immediate printed second (bits 32..47) feeds lane 0 (H0) and the one printed first (bits 48..63) feeds lane 1 (H1): bits 32..63 are the packed 32-bit operand, as ptxas 13.0 emits for mul.rn.f16x2 with a constant.",
        "The immediate printed first (bits 48..63) feeds lane 0.",
    ]),
    ("ftz-inputs", &[
        ".FTZ flushes subnormal inputs (after modifiers) to zero of the same sign before multiplying.",
        ".FTZ flushes only subnormal results; subnormal inputs are used as they are.",
    ]),
    ("ftz-tininess", &[
        ".FTZ flushes a result to zero of the product's sign when the rounded result is subnormal (tininess after rounding): a product just below the smallest normal that rounds up to it stays the smallest normal.",
        "Tininess before rounding: a result is flushed when the exact product's magnitude is below the smallest normal, even when it would round up to it.",
    ]),
    ("fmz-zero-product", &[
        "Under .FMZ a product with a zero factor (after modifiers and input flushing) is zero even when the other factor is Inf or NaN; its sign is the exclusive or of the factors' signs, as for a finite product.",
        "Under .FMZ a product with a zero factor (after modifiers and input flushing) is +0 whatever the signs, even when the other factor is Inf or NaN.",
        ".FMZ does not change 0 x Inf or 0 x NaN: they give NaN.",
    ]),
    ("fmz-flushes", &[
        ".FMZ also flushes subnormal inputs and results to zero exactly as .FTZ does.",
        ".FMZ does not flush subnormals; only zero factors are special.",
    ]),
    ("flush-bf16", &[
        ".FTZ and .FMZ act on BF16 lanes as on FP16 lanes (with BF16's subnormal range).",
        ".FTZ and .FMZ are ignored with .BF16_V2.",
    ]),
    ("sat-negative-zero", &[
        ".SAT gives +0 for -0 (and for every negative result).",
        ".SAT keeps -0 as -0 (negative non-zero results still give +0).",
    ]),
    ("sat-nan", &[
        ".SAT gives +0 for a NaN result.",
        ".SAT passes a NaN result through (then subject to nan-result).",
    ]),
    ("sat-bf16", &[
        ".SAT clamps BF16 lanes to [+0, 1] as it does FP16 lanes.",
        ".SAT is ignored with .BF16_V2.",
    ]),
    ("invalid-predicated-off", &[
        "An instruction with a field at an INVALIDn value (format, flush, half select) is undefined even when its guard predicate is false.",
        "A predicated-off instruction with an INVALIDn field leaves the destination unchanged.",
    ]),
    ("add-signed-zero", &[
        "HADD2: an exact zero sum of operands of opposite signs (x + -x, +0 + -0) is +0 and -0 + -0 is -0, as IEEE 754 requires in round to nearest (lanes and .F32 alike).",
        "HADD2: every exact zero sum is +0, -0 + -0 included.",
        "HADD2: an exact zero sum is -0 unless both operands are +0 (IEEE 754's rule when rounding toward negative infinity).",
    ]),
    ("add-ftz-sign", &[
        "HADD2.FTZ flushes a lane sum whose rounded result is subnormal to zero of the sum's sign (a subnormal sum is exact, so tininess before and after rounding agree).",
        "HADD2.FTZ flushes a subnormal lane sum to +0 whatever its sign.",
    ]),
    ("add-f32-lane", &[
        "HADD2.F32 adds the two halves that feed lane 0 after half selection (with the default select, bits 0..15 of each operand) and writes their FP32 sum, rounded once to nearest even, to the whole destination register.",
        "HADD2.F32 adds the two halves that feed lane 1 after half selection (with the default select, bits 16..31 of each operand).",
    ]),
    ("add-f32-nan", &[
        "HADD2.F32 writes FP32's canonical NaN 0x7fffffff for every NaN result, whatever the operands' payloads, signs and modifiers.",
        "HADD2.F32 writes the first NaN operand (after modifiers, operand 1 before operand 2) converted exactly to FP32 (sign kept, payload in the top fraction bits) and quieted; Inf + -Inf gives 0x7fffffff.",
        "HADD2.F32 writes FP16's canonical NaN converted to FP32, 0x7fffe000, for every NaN result.",
    ]),
    ("add-f32-ftz", &[
        "HADD2.F32.FTZ flushes subnormal FP16 inputs (after modifiers) to zero of the same sign, as .FTZ does on lanes (per ftz-inputs); no FP32 sum of two FP16 values is subnormal, so no result is flushed.",
        "HADD2.F32.FTZ leaves subnormal FP16 inputs as they are (they are normal FP32 numbers): .FTZ changes nothing with .F32.",
    ]),
    ("add-f32-sat", &[
        "HADD2.F32.SAT clamps the FP32 sum to [+0, 1.0] as .SAT clamps lanes (sat-nan and sat-negative-zero apply).",
        "HADD2.F32.SAT leaves the FP32 sum as it is: .SAT is ignored with .F32.",
    ]),
    ("fma-signed-zero", &[
        "HFMA2: an exact zero result of a * b + c is +0, except -0 when the product and c are both -0, as IEEE 754 requires in round to nearest.",
        "HFMA2: every exact zero result of a * b + c is +0.",
        "HFMA2: an exact zero result of a * b + c is -0 unless the product and c are both +0 (IEEE 754's rule when rounding toward negative infinity).",
    ]),
    ("fma-ftz-addend", &[
        "HFMA2.FTZ flushes a subnormal addend c (after modifiers) to zero of the same sign, as it flushes the factors (per ftz-inputs).",
        "HFMA2.FTZ flushes only the factors (per ftz-inputs); a subnormal addend c is added as it is.",
    ]),
    ("fma-ftz-product", &[
        "HFMA2.FTZ does not flush the product: a * b + c is computed exactly and only the once-rounded result is flushed (per ftz-tininess, on the exact sum).",
        "HFMA2.FTZ also flushes an exact product below the smallest normal in magnitude to zero of its sign before adding c.",
    ]),
    ("fma-fmz-addend", &[
        "HFMA2.FMZ adds its zero product (per fmz-zero-product) to c by IEEE 754 rules: a nonzero c is the result, a zero c gives the zero sum fma-signed-zero defines (+0 + -0 = +0).",
        "HFMA2.FMZ with a zero product gives c itself: a -0 addend stays -0 whatever the product's sign.",
    ]),
    ("fma-relu-negative-zero", &[
        "HFMA2.RELU gives +0 for a -0 result, as for every negative result.",
        "HFMA2.RELU keeps a -0 result as -0; only results below zero become +0.",
    ]),
    ("fma-relu-nan", &[
        "HFMA2.RELU gives the canonical NaN 0x7fff for a NaN result, whatever nan-result says, as the PTX ISA defines fma.relu.",
        "HFMA2.RELU passes a NaN result through as nan-result makes it.",
        "HFMA2.RELU gives +0 for a NaN result.",
    ]),
    ("fma-mma", &[
        "HFMA2.MMA computes exactly what HFMA2 computes with the same modifiers (it differs in the unit that executes it, not in its arithmetic).",
        "HFMA2.MMA's arithmetic differs from HFMA2's: the reference gives it no value.",
    ]),
    ("cmp-ftz", &[
        "HSET2.FTZ and HSETP2.FTZ compare subnormal inputs (after modifiers) as zeros of the same sign, FP16 and BF16 lanes alike, so a subnormal equals zero.",
        "HSET2.FTZ and HSETP2.FTZ flush subnormal FP16 inputs before comparing; .FTZ is ignored with .BF16_V2.",
        ".FTZ changes nothing in HSET2 and HSETP2: subnormal inputs are compared as they are.",
    ]),
    ("hset2-bf-bf16", &[
        "HSET2.BF with .BF16_V2 writes BF16's 1.0 (0x3f80) in each lane whose result is true, as the PTX ISA defines set.bf16x2.bf16x2.",
        "HSET2.BF writes FP16's 1.0 (0x3c00) in each lane whose result is true, with .BF16_V2 too.",
    ]),
    ("hsetp2-h-and", &[
        "HSETP2.H_AND: with t the AND of both lanes' comparisons, the first predicate gets t combined with the predicate source by the boolean operation and the second gets !t combined the same way.",
        "HSETP2.H_AND: both predicates get the AND of both lanes' comparisons combined with the predicate source by the boolean operation.",
        "HSETP2.H_AND: the first predicate gets the AND of both lanes' comparisons combined with the predicate source by the boolean operation, the second its negation.",
    ]),
    ("mnmx-ftz", &[
        "HMNMX2.FTZ flushes subnormal inputs (after modifiers) to zero of the same sign before selecting, FP16 and BF16 lanes alike: a selected subnormal is returned as that zero.",
        "HMNMX2.FTZ flushes subnormal FP16 inputs before selecting; .FTZ is ignored with .BF16_V2.",
        ".FTZ changes nothing in HMNMX2: subnormal inputs are compared and returned as they are.",
    ]),
    ("mnmx-nan", &[
        "HMNMX2 without .NAN gives the canonical NaN 0x7fff (FP16 and BF16) when both inputs are NaN (one NaN input gives the other input, as the PTX ISA defines min and max).",
        "HMNMX2 without .NAN gives operand 1's NaN (after modifiers), quieted, when both inputs are NaN.",
        "HMNMX2 without .NAN gives operand 1's NaN (after modifiers), bits unchanged, when both inputs are NaN.",
    ]),
    ("mnmx-nan-modifier", &[
        "HMNMX2.NAN gives the canonical NaN 0x7fff (FP16 and BF16) when either input is NaN, as the PTX ISA defines min.NaN and max.NaN.",
        "HMNMX2.NAN gives the first NaN input (after modifiers, operand 1 before operand 2), quieted, when either input is NaN.",
        "HMNMX2.NAN gives the first NaN input (after modifiers, operand 1 before operand 2), bits unchanged, when either input is NaN.",
    ]),
    ("mnmx-signed-zero", &[
        "HMNMX2 orders -0 below +0: the minimum of +0 and -0 is -0 and the maximum +0, in either operand order (IEEE 754-2019 minimum and maximum).",
        "HMNMX2 treats zeros of opposite signs as equal and returns operand 1.",
        "HMNMX2 treats zeros of opposite signs as equal and returns operand 2.",
    ]),
    ("mnmx-xorsign-sign", &[
        "HMNMX2.XORSIGN gives the result the exclusive or of the signs of the two source halves before the |x| and -x modifiers (the PTX ISA's xorsign.abs takes the signs before .abs).",
        "HMNMX2.XORSIGN gives the result the exclusive or of the signs of the two inputs after the |x| and -x modifiers.",
    ]),
    ("mnmx-xorsign-nan", &[
        "HMNMX2.XORSIGN leaves a NaN result's sign as the NaN rule makes it (the PTX ISA ignores .xorsign and .abs for a NaN result).",
        "HMNMX2.XORSIGN gives a NaN result the exclusive-or sign too.",
    ]),
];

const FLUSH_LANES: [FlushLanes; 3] = [FlushLanes::Both, FlushLanes::F16Only, FlushLanes::Neither];
const MINMAX_NAN: [MinMaxNan; 3] = [MinMaxNan::Canonical, MinMaxNan::FirstQuieted, MinMaxNan::FirstAsIs];

/// Why a semantics table cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PolicyError {
    #[error("semantics.json: {0}")]
    Json(String),
    #[error("semantics.json: entry {0:?} is not a knob of the reference")]
    UnknownId(String),
    #[error("semantics.json: knob {0:?} has no entry")]
    MissingId(String),
    #[error("semantics.json: entry {id:?}: assumption and alternatives must be exactly the reference's options (each once); {detail}")]
    Options { id: String, detail: String },
    #[error("semantics.json: entry {id:?}: outside evidence from {from:?} supports a text that is none of the entry's options")]
    Outside { id: String, from: String },
    #[error("semantics.json: entry {id:?}: pending instruction {name:?} is not one of {PENDING:?}, or the isa knows it (list it in `instructions`)")]
    Pending { id: String, name: String },
}

/// Parses a semantics table.
pub fn parse_table(json: &str) -> Result<Vec<Assumption>, PolicyError> {
    serde_json::from_str(json).map_err(|e| PolicyError::Json(e.to_string()))
}

impl Policy {
    /// The policy a table chooses, checking the table matches the knobs exactly.
    pub fn from_table(table: &[Assumption]) -> Result<Policy, PolicyError> {
        let mut choice = vec![usize::MAX; KNOBS.len()];
        for e in table {
            let k = KNOBS.iter().position(|(id, _)| *id == e.id).ok_or_else(|| PolicyError::UnknownId(e.id.clone()))?;
            let opts = KNOBS[k].1;
            if choice[k] != usize::MAX {
                return Err(PolicyError::Options { id: e.id.clone(), detail: "entry appears twice".into() });
            }
            let mut texts: Vec<&str> = std::iter::once(e.assumption.as_str()).chain(e.alternatives.iter().map(|s| s.as_str())).collect();
            let mut known: Vec<&str> = opts.to_vec();
            texts.sort_unstable();
            known.sort_unstable();
            if texts != known {
                return Err(PolicyError::Options { id: e.id.clone(), detail: format!("table has {texts:?}, reference knows {known:?}") });
            }
            if let Some(o) = e.outside.iter().find(|o| !opts.contains(&o.supports.as_str())) {
                return Err(PolicyError::Outside { id: e.id.clone(), from: o.source.clone() });
            }
            if let Some(n) = e.pending_instructions.iter().find(|n| !PENDING.contains(&n.as_str()) || crate::isa::Op::from_mnemonic(n).is_some()) {
                return Err(PolicyError::Pending { id: e.id.clone(), name: n.clone() });
            }
            choice[k] = opts.iter().position(|o| *o == e.assumption).unwrap_or(0);
        }
        if let Some(k) = choice.iter().position(|&c| c == usize::MAX) {
            return Err(PolicyError::MissingId(KNOBS[k].0.to_string()));
        }
        let mut p = Policy::DEFAULT;
        for (k, &c) in choice.iter().enumerate() {
            p.set(k, c);
        }
        Ok(p)
    }

    /// Every knob at its first option (the order of [`KNOBS`]).
    const DEFAULT: Policy = Policy {
        nan_canonical: true,
        abs_then_neg: true,
        imm_second_is_lane0: true,
        ftz_inputs: true,
        ftz_after_rounding: true,
        fmz: FmzZero::XorSign,
        fmz_flushes: true,
        flush_bf16: true,
        sat_neg_zero_to_plus: true,
        sat_nan_to_zero: true,
        sat_bf16: true,
        invalid_even_if_off: true,
        add_zero_sum: ZeroSum::Ieee,
        add_ftz_keeps_sign: true,
        add_f32_lane0: true,
        add_f32_nan: F32Nan::Canonical,
        add_f32_ftz_inputs: true,
        add_f32_sat: true,
        fma_zero_sum: ZeroSum::Ieee,
        fma_ftz_addend: true,
        fma_ftz_product: false,
        fma_fmz_addend_ieee: true,
        fma_relu_neg_zero_to_plus: true,
        fma_relu_nan: ReluNan::Canonical,
        fma_mma_same: true,
        cmp_ftz: FlushLanes::Both,
        hset2_bf_bf16_one: true,
        hsetp2_h_and: HAnd::Complement,
        mnmx_ftz: FlushLanes::Both,
        mnmx_nan: MinMaxNan::Canonical,
        mnmx_nan_modifier: MinMaxNan::Canonical,
        mnmx_zero: MinMaxZero::MinusBelowPlus,
        mnmx_xorsign_from: XorSignFrom::Sources,
        mnmx_xorsign_nan_keeps: true,
    };

    /// Sets knob `k` (an index into [`KNOBS`]) to its option `option`, numbered as
    /// [`KNOBS`] lists the texts; the one place a knob's options meet the policy's fields.
    pub fn set(&mut self, k: usize, option: usize) {
        let first = option == 0;
        match KNOBS.get(k).map(|(id, _)| *id) {
            Some("nan-result") => self.nan_canonical = first,
            Some("abs-neg-order") => self.abs_then_neg = first,
            Some("imm-lanes") => self.imm_second_is_lane0 = first,
            Some("ftz-inputs") => self.ftz_inputs = first,
            Some("ftz-tininess") => self.ftz_after_rounding = first,
            Some("fmz-zero-product") => self.fmz = [FmzZero::XorSign, FmzZero::PlusZero, FmzZero::Ieee][option.min(2)],
            Some("fmz-flushes") => self.fmz_flushes = first,
            Some("flush-bf16") => self.flush_bf16 = first,
            Some("sat-negative-zero") => self.sat_neg_zero_to_plus = first,
            Some("sat-nan") => self.sat_nan_to_zero = first,
            Some("sat-bf16") => self.sat_bf16 = first,
            Some("invalid-predicated-off") => self.invalid_even_if_off = first,
            Some("add-signed-zero") => self.add_zero_sum = [ZeroSum::Ieee, ZeroSum::Plus, ZeroSum::MinusUnlessBothPlus][option.min(2)],
            Some("add-ftz-sign") => self.add_ftz_keeps_sign = first,
            Some("add-f32-lane") => self.add_f32_lane0 = first,
            Some("add-f32-nan") => self.add_f32_nan = [F32Nan::Canonical, F32Nan::Propagate, F32Nan::WidenedF16][option.min(2)],
            Some("add-f32-ftz") => self.add_f32_ftz_inputs = first,
            Some("add-f32-sat") => self.add_f32_sat = first,
            Some("fma-signed-zero") => self.fma_zero_sum = [ZeroSum::Ieee, ZeroSum::Plus, ZeroSum::MinusUnlessBothPlus][option.min(2)],
            Some("fma-ftz-addend") => self.fma_ftz_addend = first,
            Some("fma-ftz-product") => self.fma_ftz_product = !first,
            Some("fma-fmz-addend") => self.fma_fmz_addend_ieee = first,
            Some("fma-relu-negative-zero") => self.fma_relu_neg_zero_to_plus = first,
            Some("fma-relu-nan") => self.fma_relu_nan = [ReluNan::Canonical, ReluNan::Pass, ReluNan::Zero][option.min(2)],
            Some("fma-mma") => self.fma_mma_same = first,
            Some("cmp-ftz") => self.cmp_ftz = FLUSH_LANES[option.min(2)],
            Some("hset2-bf-bf16") => self.hset2_bf_bf16_one = first,
            Some("hsetp2-h-and") => self.hsetp2_h_and = [HAnd::Complement, HAnd::Same, HAnd::NotFirst][option.min(2)],
            Some("mnmx-ftz") => self.mnmx_ftz = FLUSH_LANES[option.min(2)],
            Some("mnmx-nan") => self.mnmx_nan = MINMAX_NAN[option.min(2)],
            Some("mnmx-nan-modifier") => self.mnmx_nan_modifier = MINMAX_NAN[option.min(2)],
            Some("mnmx-signed-zero") => self.mnmx_zero = [MinMaxZero::MinusBelowPlus, MinMaxZero::Operand1, MinMaxZero::Operand2][option.min(2)],
            Some("mnmx-xorsign-sign") => self.mnmx_xorsign_from = if first { XorSignFrom::Sources } else { XorSignFrom::Modified },
            Some("mnmx-xorsign-nan") => self.mnmx_xorsign_nan_keeps = first,
            _ => {}
        }
    }

    /// The option knob `k` is at (the inverse of [`Policy::set`]).
    pub fn option(&self, k: usize) -> usize {
        (0..KNOBS.get(k).map_or(0, |(_, o)| o.len()))
            .find(|&o| {
                let mut q = *self;
                q.set(k, o);
                q == *self
            })
            .unwrap_or(0)
    }

    /// The committed policy. The table is compiled in and checked by a unit test, so a
    /// failure here is a build defect, not bad input.
    pub fn current() -> &'static Policy {
        static P: OnceLock<Policy> = OnceLock::new();
        P.get_or_init(|| match parse_table(SEMANTICS_JSON).and_then(|t| Policy::from_table(&t)) {
            Ok(p) => p,
            Err(e) => panic!("the compiled-in semantics table is broken: {e}"),
        })
    }
}

/// `docs/semantics.md`'s table section, generated from the JSON.
pub fn render_table(table: &[Assumption]) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    // each instruction's assumptions first: what a GPU session has settled for it
    let mut md = String::from("| instruction | entries about it | hardware-confirmed | assumed |\n|---|---|---|---|\n");
    for op in crate::isa::Op::ALL {
        let mine: Vec<&Assumption> = table.iter().filter(|e| e.instructions.contains(&op)).collect();
        let confirmed = mine.iter().filter(|e| e.status == Status::HardwareConfirmed).count();
        md += &format!("| {} | {} | {confirmed} | {} |\n", op.mnemonic(), mine.len(), mine.len() - confirmed);
    }
    for name in PENDING {
        let mine: Vec<&Assumption> = table.iter().filter(|e| e.pending_instructions.iter().any(|n| n == name)).collect();
        let confirmed = mine.iter().filter(|e| e.status == Status::HardwareConfirmed).count();
        md += &format!("| {name} (reference only: not yet in the isa) | {} | {confirmed} | {} |\n", mine.len(), mine.len() - confirmed);
    }
    md += "\n| id | topic | assumption (what the reference does) | alternatives | status | evidence | outside evidence (not hardware) | instructions |\n|---|---|---|---|---|---|---|---|\n";
    for e in table {
        let alts: Vec<String> = e.alternatives.iter().map(|a| esc(a)).collect();
        let outside: Vec<String> = e
            .outside
            .iter()
            .map(|o| {
                let side = if o.supports == e.assumption { "for the assumption" } else { "**against the assumption**" };
                let test = o.test.as_deref().map(|t| format!(" (re-checked by `{}`)", esc(t))).unwrap_or_default();
                format!("{}, {side}: {}{test}", esc(&o.source), esc(&o.says))
            })
            .collect();
        let ops: Vec<&str> = e.instructions.iter().map(|o| o.mnemonic()).chain(e.pending_instructions.iter().map(|n| n.as_str())).collect();
        md += &format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            e.id,
            esc(&e.topic),
            esc(&e.assumption),
            alts.join("<br>"),
            e.status,
            e.evidence.as_deref().map(|v| format!("`{}`", esc(v))).unwrap_or_else(|| "none yet".into()),
            if outside.is_empty() { "none".to_string() } else { outside.join("<br>") },
            if ops.is_empty() { "not stated".to_string() } else { ops.join(", ") }
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_table_matches_the_knobs() {
        let t = parse_table(SEMANTICS_JSON).expect("semantics.json parses");
        let p = Policy::from_table(&t).expect("semantics.json matches the knobs");
        assert_eq!(t.len(), KNOBS.len());
        assert_eq!(&p, Policy::current());
    }

    #[test]
    fn swapping_an_alternative_in_changes_the_policy() {
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        let e = t.iter_mut().find(|e| e.id == "nan-result").unwrap();
        std::mem::swap(&mut e.assumption, &mut e.alternatives[0]);
        let p = Policy::from_table(&t).unwrap();
        assert_eq!(p.nan_canonical, !Policy::current().nan_canonical);
    }

    #[test]
    fn a_drifted_text_is_rejected() {
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        t[0].assumption.push('!');
        assert!(matches!(Policy::from_table(&t), Err(PolicyError::Options { .. })));
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        t.pop();
        assert!(matches!(Policy::from_table(&t), Err(PolicyError::MissingId(_))));
    }

    #[test]
    fn pending_instructions_are_known_and_not_yet_in_the_isa() {
        // an instruction the isa knows belongs in `instructions`: the comparisons and min/max
        // as the first four
        for known in ["HMUL2", "HSET2", "HSETP2", "HMNMX2", "HMNMX3"] {
            let mut t = parse_table(SEMANTICS_JSON).unwrap();
            let e = t.iter_mut().find(|e| e.id == "mnmx-nan").expect("the committed table has entries about HMNMX2");
            assert_eq!(e.instructions, [crate::isa::Op::Hmnmx2]);
            e.pending_instructions.push(known.into());
            assert!(matches!(Policy::from_table(&t), Err(PolicyError::Pending { .. })), "{known}");
        }
        let t = parse_table(SEMANTICS_JSON).unwrap();
        assert!(t.iter().all(|e| e.pending_instructions.is_empty()) && PENDING.is_empty(), "nothing is pending");
    }

    #[test]
    fn outside_evidence_must_name_one_of_the_options() {
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        let e = t.iter_mut().find(|e| !e.outside.is_empty()).expect("the committed table records outside evidence");
        e.outside[0].supports.push('!');
        assert!(matches!(Policy::from_table(&t), Err(PolicyError::Outside { .. })));
    }
}
