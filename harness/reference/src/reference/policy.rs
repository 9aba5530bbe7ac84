//! The reference's named assumptions, read from `harness/spec/semantics.json`.
//!
//! The JSON is the one place a choice is made: each knob below knows the exact text of each
//! of its options, and the option whose text is the entry's `assumption` is the one the
//! reference uses on an architecture no hardware has settled the point on. Settling is per
//! architecture: what SM90 hardware shows is recorded under `settled.SM90` and moves SM90's
//! policy ([`Policy::for_target`]) alone; SM80's stays the named assumption until SM80
//! hardware shows it. A test checks that every entry's texts are exactly the options its
//! knob knows, so the file and the code cannot drift apart.

use harness_isa::target::Target;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The committed table, compiled in so the reference is the same binary everywhere.
pub const SEMANTICS_JSON: &str = include_str!("../../../spec/semantics.json");

/// One entry of `semantics.json` (the HTML report and `settle` read the same type; a missing
/// key takes its default, an unknown one is refused: a table of the time before settling was
/// per architecture, with a `status` and an `evidence` of no architecture, is not read as if
/// nothing were settled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// The option the reference uses on every architecture whose hardware has not settled
    /// the point (the documented default: a named assumption on each such architecture).
    #[serde(default)]
    pub assumption: String,
    #[serde(default)]
    pub alternatives: Vec<String>,
    /// What each architecture's hardware showed, keyed by nvdisasm's spelling (`SM90`): the
    /// option it settled, on which GPU, when, and the vector that shows it. An architecture
    /// absent here is [`Status::Assumed`] there ([`Assumption::status_on`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settled: BTreeMap<String, Settled>,
    /// Why the point may hold otherwise on some architectures than on others (a document, a
    /// compiler, another project's code), so that one architecture's evidence is never taken
    /// for another's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub may_differ: Vec<ArchNote>,
    /// What sources other than hardware say (a compiler, a document, another project's
    /// code). They inform the assumption; they never make an entry `hardware-confirmed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<Outside>,
}

/// What one architecture's hardware settled for an entry (`settle --write` writes it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settled {
    /// The exact text of the option the hardware showed (the assumption or an alternative).
    pub option: String,
    /// The GPU that ran the vectors (from their origin, `hardware:<GPU>:<driver>:<date>`).
    #[serde(default)]
    pub gpu: String,
    /// The date of the run (from the same origin).
    #[serde(default)]
    pub date: String,
    /// The first vector line that shows the option (it rules another out, or the option
    /// predicted it exactly).
    pub evidence: String,
    /// How many vectors told the options apart.
    #[serde(default)]
    pub told: usize,
}

/// Why an entry may hold otherwise on some architectures, and who says so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchNote {
    /// The architectures the note is about, in nvdisasm's spelling (`SM80`).
    #[serde(default)]
    pub architectures: Vec<String>,
    /// What may differ there, in our words.
    #[serde(default)]
    pub says: String,
    /// Where the fact comes from (a document, the pinned tools, another project), with its version.
    #[serde(default)]
    pub source: String,
}

/// Where an entry of the table stands on one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The reference's choice, not yet shown by this architecture's hardware.
    Assumed,
    /// A hardware vector of this architecture shows the choice (`settled`).
    HardwareConfirmed,
}

impl Assumption {
    /// The architectures the entry is about: those that have one of its instructions (an
    /// instruction the isa does not know yet, `pending_instructions`, counts on all of them).
    pub fn architectures(&self) -> Vec<&'static Target> {
        Target::ALL
            .into_iter()
            .filter(|&t| !self.pending_instructions.is_empty() || self.instructions.iter().any(|op| crate::isa::Op::all_for(t).any(|o| o == *op)))
            .collect()
    }

    /// What `target`'s hardware settled, if it did.
    pub fn settled_on(&self, target: &Target) -> Option<&Settled> {
        self.settled.get(target.nvdisasm)
    }

    /// Where the entry stands on `target`.
    pub fn status_on(&self, target: &Target) -> Status {
        if self.settled_on(target).is_some() {
            Status::HardwareConfirmed
        } else {
            Status::Assumed
        }
    }

    /// The exact text of the option the reference uses on `target`: what its hardware
    /// settled, else the assumption.
    pub fn option_on(&self, target: &Target) -> &str {
        self.settled_on(target).map_or(self.assumption.as_str(), |s| s.option.as_str())
    }

    /// The notes of `may_differ` that name `target`.
    pub fn notes_on<'a>(&'a self, target: &'a Target) -> impl Iterator<Item = &'a ArchNote> {
        self.may_differ.iter().filter(move |n| n.architectures.iter().any(|a| a == target.nvdisasm))
    }
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
    #[error("semantics.json: entry {id:?}: settled on {arch:?}: {detail}")]
    Settled { id: String, arch: String, detail: String },
    #[error("semantics.json: entry {id:?}: may_differ names {arch:?}, which is not an architecture of the entry (nvdisasm's spelling, one of {:?})", Target::ALL.map(|t| t.nvdisasm))]
    NoteArch { id: String, arch: String },
}

/// Parses a semantics table.
pub fn parse_table(json: &str) -> Result<Vec<Assumption>, PolicyError> {
    serde_json::from_str(json).map_err(|e| PolicyError::Json(e.to_string()))
}

/// Whether `table` is one the reference can read: each entry's texts are exactly its knob's
/// options, its outside evidence and settlements name one of them, each settlement is keyed by
/// an architecture the entry is about (nvdisasm's spelling) and shows a vector, and its
/// pending instructions are ones the isa does not know yet.
fn check_entry(e: &Assumption, opts: &[&str]) -> Result<(), PolicyError> {
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
    let archs = e.architectures();
    let of_entry = |a: &str| archs.iter().any(|t| t.nvdisasm == a);
    for (arch, s) in &e.settled {
        let bad = |detail: &str| Err(PolicyError::Settled { id: e.id.clone(), arch: arch.clone(), detail: detail.into() });
        if !of_entry(arch) {
            return bad(&format!("not an architecture that has the entry's instructions (nvdisasm's spelling: {})", Target::all_names()));
        }
        if !opts.contains(&s.option.as_str()) {
            return bad("the settled option is none of the entry's options");
        }
        if s.evidence.trim().is_empty() {
            return bad("no evidence: a settlement names the vector that shows it");
        }
    }
    if let Some(a) = e.may_differ.iter().flat_map(|n| &n.architectures).find(|a| !of_entry(a)) {
        return Err(PolicyError::NoteArch { id: e.id.clone(), arch: a.clone() });
    }
    Ok(())
}

impl Policy {
    /// The policy a table chooses for `target`: each entry's option settled on `target`, else
    /// its assumption. The whole table is checked (every architecture's settlements), so a
    /// table one target can read every target can.
    pub fn from_table(table: &[Assumption], target: &Target) -> Result<Policy, PolicyError> {
        let mut choice = vec![usize::MAX; KNOBS.len()];
        for e in table {
            let k = KNOBS.iter().position(|(id, _)| *id == e.id).ok_or_else(|| PolicyError::UnknownId(e.id.clone()))?;
            let opts = KNOBS[k].1;
            if choice[k] != usize::MAX {
                return Err(PolicyError::Options { id: e.id.clone(), detail: "entry appears twice".into() });
            }
            check_entry(e, opts)?;
            let chosen = e.option_on(target);
            choice[k] = opts.iter().position(|o| *o == chosen).unwrap_or(0);
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

    /// Checks `table` as the reference reads it (every entry, every architecture's
    /// settlements): the check `semantics-doc` and `settle --write` make before writing.
    pub fn check_table(table: &[Assumption]) -> Result<(), PolicyError> {
        Policy::from_table(table, Target::DEFAULT).map(|_| ())
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

    /// The committed policy of `target`: what its hardware settled, else the named
    /// assumptions. The table is compiled in and checked by a unit test, so a failure here is
    /// a build defect, not bad input.
    pub fn for_target(target: &Target) -> &'static Policy {
        static P: OnceLock<Vec<Policy>> = OnceLock::new();
        let all = P.get_or_init(|| {
            let table = parse_table(SEMANTICS_JSON).unwrap_or_else(|e| panic!("the compiled-in semantics table is broken: {e}"));
            Target::ALL.iter().map(|t| Policy::from_table(&table, t).unwrap_or_else(|e| panic!("the compiled-in semantics table is broken: {e}"))).collect()
        });
        let i = Target::ALL.iter().position(|t| t.sm == target.sm).unwrap_or_else(|| panic!("{target} is none of Target::ALL"));
        &all[i]
    }

    /// The committed policy of the default target, SM90 ([`Target::DEFAULT`]): what
    /// [`super::eval`] uses. Another architecture's is [`Policy::for_target`].
    pub fn current() -> &'static Policy {
        Policy::for_target(Target::DEFAULT)
    }
}

/// Where `e` stands on each architecture it is about, in one cell: the architectures still
/// assumed together, each settled one with what it showed.
pub fn arch_states(e: &Assumption) -> String {
    let archs = e.architectures();
    let assumed: Vec<&str> = archs.iter().filter(|t| e.settled_on(t).is_none()).map(|t| t.nvdisasm).collect();
    let mut parts: Vec<String> = archs
        .iter()
        .filter_map(|t| {
            let s = e.settled_on(t)?;
            let which = if s.option == e.assumption { "the assumption".to_string() } else { format!("alternative {}", option_number(e, &s.option)) };
            Some(format!("{t}: hardware-confirmed, {which} ({}, {}, {} telling vectors)", s.gpu, s.date, s.told))
        })
        .collect();
    if !assumed.is_empty() {
        parts.push(format!("assumed on {}", assumed.join(", ")));
    }
    parts.join("; ")
}

/// Which alternative (1-based, as the table lists them) the text `option` is; 0 when it is
/// the assumption.
fn option_number(e: &Assumption, option: &str) -> usize {
    e.alternatives.iter().position(|a| a == option).map_or(0, |i| i + 1)
}

/// `docs/semantics.md`'s table section, generated from the JSON.
pub fn render_table(table: &[Assumption]) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    // each instruction's assumptions first, per architecture: what a GPU session has settled
    // on its own architecture, and where the instruction does not exist
    let mut md = String::from("| instruction | entries about it |");
    for t in Target::ALL {
        md += &format!(" {t} |");
    }
    md += "\n|---|---|";
    md += &"---|".repeat(Target::ALL.len());
    md += "\n";
    let cell = |mine: &[&Assumption], t: &Target, has: bool| -> String {
        if !has {
            return "no such instruction".into();
        }
        let confirmed = mine.iter().filter(|e| e.status_on(t) == Status::HardwareConfirmed).count();
        format!("{confirmed} confirmed, {} assumed", mine.len() - confirmed)
    };
    for op in crate::isa::Op::ALL {
        let mine: Vec<&Assumption> = table.iter().filter(|e| e.instructions.contains(&op)).collect();
        md += &format!("| {} | {} |", op.mnemonic(), mine.len());
        for t in Target::ALL {
            md += &format!(" {} |", cell(&mine, t, crate::isa::Op::all_for(t).any(|o| o == op)));
        }
        md += "\n";
    }
    for name in PENDING {
        let mine: Vec<&Assumption> = table.iter().filter(|e| e.pending_instructions.iter().any(|n| n == name)).collect();
        md += &format!("| {name} (reference only: not yet in the isa) | {} |", mine.len());
        for t in Target::ALL {
            md += &format!(" {} |", cell(&mine, t, true));
        }
        md += "\n";
    }
    md += "\n| id | topic | assumption (what the reference does where no hardware settled it) | alternatives | per architecture | evidence | may differ by architecture | outside evidence (not hardware) | instructions |\n|---|---|---|---|---|---|---|---|---|\n";
    for e in table {
        let alts: Vec<String> = e.alternatives.iter().enumerate().map(|(i, a)| format!("{}. {}", i + 1, esc(a))).collect();
        let outside: Vec<String> = e
            .outside
            .iter()
            .map(|o| {
                let side = if o.supports == e.assumption { "for the assumption" } else { "**against the assumption**" };
                let test = o.test.as_deref().map(|t| format!(" (re-checked by `{}`)", esc(t))).unwrap_or_default();
                format!("{}, {side}: {}{test}", esc(&o.source), esc(&o.says))
            })
            .collect();
        let evidence: Vec<String> = e.settled.iter().map(|(a, s)| format!("{a}: `{}`", esc(&s.evidence))).collect();
        let notes: Vec<String> = e.may_differ.iter().map(|n| format!("{}: {} ({})", n.architectures.join(", "), esc(&n.says), esc(&n.source))).collect();
        let ops: Vec<&str> = e.instructions.iter().map(|o| o.mnemonic()).chain(e.pending_instructions.iter().map(|n| n.as_str())).collect();
        md += &format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            e.id,
            esc(&e.topic),
            esc(&e.assumption),
            alts.join("<br>"),
            esc(&arch_states(e)),
            if evidence.is_empty() { "none yet".to_string() } else { evidence.join("<br>") },
            if notes.is_empty() { "none known".to_string() } else { notes.join("<br>") },
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
        let p = Policy::from_table(&t, &Target::SM90).expect("semantics.json matches the knobs");
        assert_eq!(t.len(), KNOBS.len());
        assert_eq!(&p, Policy::current());
    }

    #[test]
    fn the_committed_table_is_as_settle_write_writes_it() {
        // `settle --write` rewrites the whole file: a table in another key order or layout
        // would show a settlement as a diff of every entry
        let t = parse_table(SEMANTICS_JSON).unwrap();
        let written = serde_json::to_string_pretty(&t).unwrap() + "\n";
        assert!(written == SEMANTICS_JSON, "harness/spec/semantics.json is not in settle --write's layout (keys in Assumption's order, two-space indent)");
    }

    #[test]
    fn swapping_an_alternative_in_changes_the_policy() {
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        let e = t.iter_mut().find(|e| e.id == "nan-result").unwrap();
        std::mem::swap(&mut e.assumption, &mut e.alternatives[0]);
        let p = Policy::from_table(&t, &Target::SM90).unwrap();
        assert_eq!(p.nan_canonical, !Policy::current().nan_canonical);
    }

    #[test]
    fn a_drifted_text_is_rejected() {
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        t[0].assumption.push('!');
        assert!(matches!(Policy::from_table(&t, &Target::SM90), Err(PolicyError::Options { .. })));
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        t.pop();
        assert!(matches!(Policy::from_table(&t, &Target::SM90), Err(PolicyError::MissingId(_))));
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
            assert!(matches!(Policy::from_table(&t, &Target::SM90), Err(PolicyError::Pending { .. })), "{known}");
        }
        let t = parse_table(SEMANTICS_JSON).unwrap();
        assert!(t.iter().all(|e| e.pending_instructions.is_empty()) && PENDING.is_empty(), "nothing is pending");
    }

    #[test]
    fn a_settlement_moves_its_architecture_alone() {
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        for target in Target::ALL {
            assert_eq!(Policy::for_target(target), &Policy::from_table(&t, target).unwrap(), "{target}");
        }
        let e = t.iter_mut().find(|e| e.id == "nan-result").unwrap();
        let other = e.alternatives[0].clone();
        e.settled.insert("SM86".into(), Settled { option: other, gpu: "g".into(), date: "2026-12-07".into(), evidence: "a vector line".into(), told: 3 });
        assert_eq!(e.status_on(&Target::SM86), Status::HardwareConfirmed);
        assert_eq!(e.status_on(&Target::SM90), Status::Assumed);
        assert!(
            arch_states(e).starts_with("SM86: hardware-confirmed, alternative 1 (g, 2026-12-07, 3 telling vectors); assumed on SM80, SM89, SM90, SM100, SM120"),
            "{}",
            arch_states(e)
        );
        assert!(!Policy::from_table(&t, &Target::SM86).unwrap().nan_canonical);
        for target in Target::ALL.into_iter().filter(|t| t.sm != 86) {
            assert_eq!(&Policy::from_table(&t, target).unwrap(), Policy::for_target(target), "{target}: SM86's settlement moves nothing else");
        }
    }

    #[test]
    fn settlements_and_notes_must_name_an_architecture_of_the_entry_and_an_option() {
        let settled = |arch: &str, option: &str, evidence: &str| {
            let mut t = parse_table(SEMANTICS_JSON).unwrap();
            let e = t.iter_mut().find(|e| e.id == "fma-mma").unwrap();
            let option = if option.is_empty() { e.assumption.clone() } else { option.to_string() };
            e.settled.insert(arch.into(), Settled { option, gpu: String::new(), date: String::new(), evidence: evidence.into(), told: 1 });
            Policy::check_table(&t)
        };
        assert_eq!(settled("SM80", "", "line"), Ok(()));
        for (arch, option, evidence) in
            [("SM100", "", "line"), ("sm_80", "", "line"), ("SM75", "", "line"), ("SM80", "another text", "line"), ("SM80", "", " ")]
        {
            assert!(matches!(settled(arch, option, evidence), Err(PolicyError::Settled { .. })), "{arch} {option:?} {evidence:?}");
        }
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        let e = t.iter_mut().find(|e| e.id == "fma-mma").unwrap();
        assert_eq!(e.architectures(), [&Target::SM80, &Target::SM86, &Target::SM89, &Target::SM90], "no HFMA2.MMA on SM100 or SM120");
        e.may_differ.push(ArchNote { architectures: vec!["SM120".into()], says: "x".into(), source: "y".into() });
        assert!(matches!(Policy::check_table(&t), Err(PolicyError::NoteArch { .. })));
        // the table of the time before settling was per architecture is refused
        let old = r#"[{"id": "nan-result", "assumption": "a", "status": "hardware-confirmed", "evidence": "line"}]"#;
        assert!(matches!(parse_table(old), Err(PolicyError::Json(m)) if m.contains("status")));
        // the comparisons' and min/max's entries are about all six (each has them); each note
        // names an architecture of its entry
        let t = parse_table(SEMANTICS_JSON).unwrap();
        let family = [crate::isa::Op::Hset2, crate::isa::Op::Hsetp2, crate::isa::Op::Hmnmx2];
        let theirs: Vec<_> = t.iter().filter(|e| !e.instructions.is_empty() && e.instructions.iter().all(|o| family.contains(o))).collect();
        assert!(theirs.len() >= 9, "the nine assumptions of the comparisons and min/max");
        assert!(theirs.iter().all(|e| e.architectures().len() == Target::ALL.len()));
        assert!(t.iter().filter(|e| !e.may_differ.is_empty()).count() >= 6, "the committed table names the points that may differ");
    }

    #[test]
    fn outside_evidence_must_name_one_of_the_options() {
        let mut t = parse_table(SEMANTICS_JSON).unwrap();
        let e = t.iter_mut().find(|e| !e.outside.is_empty()).expect("the committed table records outside evidence");
        e.outside[0].supports.push('!');
        assert!(matches!(Policy::from_table(&t, &Target::SM90), Err(PolicyError::Outside { .. })));
    }
}
