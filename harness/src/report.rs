//! `hmul2-harness report`: one self-contained HTML page that shows, per bit of every form of
//! every instruction of the family ([`Op::ALL`]), what is proven about its encoding and by
//! what, computed from each instruction's spec, its errata or evidence entries, the seed page
//! (HMUL2's: the only instruction it draws), semantics.json, vectors, oracle results and run
//! reports.
//!
//! Evidence classes of a bit (a field's bits share all but the toggle-based ones):
//! - `seed-only`: nothing below applies; the bit's meaning rests on the seed page and the spec
//!   (an instruction the seed page draws).
//! - `spec-only`: the same for an instruction the seed page does not draw: the bit's meaning
//!   rests on the spec and the nvdisasm evidence recorded in it, not on an input of the report.
//! - `confirmed`: an oracle run saw the bit at 0 and at 1 in words of the form, and no oracle
//!   mismatch is of that form (fixed bits: the form had words and no mismatch).
//! - `contradicted`: an erratum covers the bit, or the seed page disagrees with the spec there
//!   and the bit is confirmed (nvdisasm backs the spec, not the seed). Only an instruction with
//!   a seed page has errata; another one's spec entries are its evidence, not corrections.
//! - `hardware`: a GPU ran words of the form with the bit at 0 and at 1 (hardware vectors, runs
//!   with `hardware.used`).
//! - `hardware-mismatch`: a finding of a hardware run touches the field (see [`touched_fields`]).
//!
//! The colour of a bit is the first that applies of: hardware-mismatch, hardware,
//! contradicted, confirmed, seed-only / spec-only (the order, strongest evidence
//! first); a contradicted bit still shows the seed's claim in red beneath it. Bits of no field
//! are `ignored` unless an erratum speaks about them.
//!
//! Every word the inputs name is attributed by [`Owner::of`]: a form of an instruction, an
//! instruction's opcode with a form selector none of its forms has, or no instruction of the
//! family. An oracle mismatch withdraws `confirmed` from exactly the form it is a word of;
//! one of no form names no bit it could disprove, so it withdraws nothing and is shown as
//! what it is: on its instruction's section (no form of it), or in a banner over the whole
//! page (no instruction of the family: the page "has an unattributed mismatch").

pub mod html;
pub mod inputs;

use crate::cli::{CliError, CliResult};
use crate::isa::decode::{form_of, op_of};
use crate::isa::{Form, Illegal, Op, PT, RZ, URZ};
use crate::schema::{Assumption, Finding};
use crate::seedpage::{self, BitClass, FormComparison, SeedPage, SpecBit};
use crate::spec::Spec;
use clap::Args;
use inputs::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

/// What the report knows a word to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A form of an instruction.
    Form(Op, Form),
    /// An instruction's opcode with an operand-form selector none of its forms has.
    NoForm(Op, Illegal),
    /// No instruction of the family: an unknown opcode, or text that is no word; the reason.
    Nobody(String),
}

impl Owner {
    pub fn of(word: u128) -> Owner {
        match form_of(word) {
            Ok((op, f)) => Owner::Form(op, f),
            Err(e) => match op_of(word) {
                Ok(op) => Owner::NoForm(op, e),
                Err(e) => Owner::Nobody(e.to_string()),
            },
        }
    }
    /// The owner of a word written as hex (a file's text); malformed text is nobody's.
    pub fn of_hex(hex: &str) -> Owner {
        match crate::isa::parse_hex(hex) {
            Ok(w) => Owner::of(w),
            Err(e) => Owner::Nobody(e.to_string()),
        }
    }
    /// The instruction, when the opcode names one.
    pub fn op(&self) -> Option<Op> {
        match self {
            Owner::Form(op, _) | Owner::NoForm(op, _) => Some(*op),
            Owner::Nobody(_) => None,
        }
    }
    /// The spec key of the form (`HFMA2_R_R_R_R`), when the word is one.
    pub fn form_key(&self) -> Option<&'static str> {
        match self {
            Owner::Form(op, f) => Some(op.form_key(*f)),
            _ => None,
        }
    }
    /// In words, for the page: the form key, or why the word is no form.
    pub fn describe(&self) -> String {
        match self {
            Owner::Form(op, f) => op.form_key(*f).to_string(),
            Owner::NoForm(op, e) => format!("no form of {op} ({e})"),
            Owner::Nobody(why) => format!("no instruction of the family ({why})"),
        }
    }
}

/// The instruction and form index of a spec form key, across every instruction.
fn form_by_key(key: &str) -> Option<(Op, usize)> {
    Op::ALL.into_iter().find_map(|op| op.spec().forms.iter().position(|f| f.key == key).map(|i| (op, i)))
}

/// Whether the form of spec key `key` has a field named `name`.
fn form_has_field(key: &str, name: &str) -> bool {
    form_by_key(key).is_some_and(|(op, i)| {
        let s = op.spec();
        s.try_index(name).is_some_and(|fi| s.forms[i].fields.contains(&fi))
    })
}

/// What is known about a bit, strongest last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Evidence {
    Ignored,
    SpecOnly,
    SeedOnly,
    Confirmed,
    Contradicted,
    Hardware,
    HardwareMismatch,
}

impl Evidence {
    pub const CLASSES: [Evidence; 6] =
        [Evidence::SpecOnly, Evidence::SeedOnly, Evidence::Confirmed, Evidence::Contradicted, Evidence::Hardware, Evidence::HardwareMismatch];
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Ignored => "ignored",
            Evidence::SpecOnly => "spec-only",
            Evidence::SeedOnly => "seed-only",
            Evidence::Confirmed => "confirmed",
            Evidence::Contradicted => "contradicted",
            Evidence::Hardware => "hardware",
            Evidence::HardwareMismatch => "hardware-mismatch",
        }
    }
    pub fn legend(self) -> &'static str {
        match self {
            Evidence::Ignored => "no field: nvdisasm ignores the bit in this form",
            Evidence::SpecOnly => {
                "claimed by the spec only (an instruction the seed page does not draw): its recorded nvdisasm evidence, no oracle or hardware input here"
            }
            Evidence::SeedOnly => "claimed by the seed page only (no nvdisasm or hardware evidence yet)",
            Evidence::Confirmed => "confirmed by nvdisasm: the oracle set the bit to 0 and 1 with zero mismatches in the form",
            Evidence::Contradicted => "contradicted by nvdisasm: the seed page is wrong here (its claim is shown beneath)",
            Evidence::Hardware => "exercised on hardware: a GPU ran the form with the bit at 0 and 1",
            Evidence::HardwareMismatch => "mismatching on hardware: a finding of a GPU run touches the field",
        }
    }
}

/// Coverage of one source over some forms. Producers that record `fields_by_form` (gen's
/// Coverage does) give exact per-form blocks; older files give one block of several forms.
#[derive(Clone, Debug)]
pub struct Block {
    /// The form key the coverage is exactly of, or None: all forms in `forms` together.
    pub form: Option<String>,
    pub forms: BTreeSet<String>,
    pub fields: BTreeMap<String, FieldCoverage>,
}

impl Block {
    /// The one instruction all of the block's forms are of; None when they are of several
    /// (or of none the specs know): such counts belong to no instruction's table.
    fn op(&self) -> Option<Op> {
        let ops: BTreeSet<Op> = self.forms.iter().filter_map(|k| form_by_key(k).map(|(op, _)| op)).collect();
        match (ops.len(), self.forms.iter().all(|k| form_by_key(k).is_some())) {
            (1, true) => ops.into_iter().next(),
            _ => None,
        }
    }
}

fn blocks_of(c: &Coverage, forms_with_words: BTreeSet<String>) -> Vec<Block> {
    if !c.fields_by_form.is_empty() {
        return c.fields_by_form.iter().map(|(k, f)| Block { form: Some(k.clone()), forms: [k.clone()].into(), fields: f.clone() }).collect();
    }
    vec![Block { form: None, forms: forms_with_words, fields: c.fields.clone() }]
}

/// Exact per-form blocks from vectors; a vector of no form counts in none.
fn vector_blocks(vs: &[&Vector]) -> Vec<Block> {
    let mut by_form: BTreeMap<&'static str, Vec<u128>> = BTreeMap::new();
    for v in vs {
        if let Some(k) = Owner::of(v.word).form_key() {
            by_form.entry(k).or_default().push(v.word);
        }
    }
    by_form
        .into_iter()
        .map(|(k, words)| {
            let c = Coverage::of(&words);
            Block { form: Some(k.to_string()), forms: [k.to_string()].into(), fields: c.fields }
        })
        .collect()
}

/// Which states (0, 1) bit `i` of a field was seen in, from its coverage keys.
fn states(fc: &FieldCoverage, width: u32, i: u32) -> (bool, bool) {
    let (mut z, mut o) = (false, false);
    for (k, &n) in &fc.seen {
        if n == 0 {
            continue;
        }
        if width <= 8 {
            if let Ok(v) = k.parse::<u32>() {
                if v >> i & 1 == 1 {
                    o = true
                } else {
                    z = true
                }
            }
        } else if k == &format!("bit{i}=0") {
            z = true;
        } else if k == &format!("bit{i}=1") {
            o = true;
        }
    }
    (z, o)
}

fn toggled(blocks: &[Block], form: &str, field: &str, width: u32, i: u32) -> bool {
    let (mut z, mut o) = (false, false);
    for b in blocks {
        let applies = match &b.form {
            Some(f) => f == form,
            // coverage of several forms together proves a field of `form` only when no other
            // form of the block (of any instruction: the counts are by field name) has a
            // field of that name
            None => b.forms.contains(form) && b.forms.iter().all(|k| k == form || !form_has_field(k, field)),
        };
        if let (true, Some(fc)) = (applies, b.fields.get(field)) {
            let (a, c) = states(fc, width, i);
            z |= a;
            o |= c;
        }
    }
    z && o
}

fn has_words(blocks: &[Block], form: &str) -> bool {
    blocks.iter().any(|b| b.forms.contains(form))
}

/// The fields of its form a hardware finding implicates (indices into its instruction's
/// spec): those not at a neutral value in the (minimized) word — any modifier or immediate, a
/// predicate other than PT, a register that is RZ/URZ — never the scheduling controls; when
/// all are neutral, the plain operation is at fault and the operand fields (registers,
/// immediates, constant address) are. None: the word is no form of any instruction.
pub fn touched_fields(word: u128) -> Option<(Op, Form, Vec<usize>)> {
    let Owner::Form(op, form) = Owner::of(word) else { return None };
    let s = op.spec();
    let fs = op.form_spec(form)?;
    let mut out = Vec::new();
    let mut operands = Vec::new();
    for &fi in &fs.fields {
        let f = &s.fields[fi];
        let v = f.get(word);
        let hit = match f.kind.as_str() {
            "control" => continue,
            "pred" => v != PT as u32,
            "reg" => {
                operands.push(fi);
                v == RZ as u32
            }
            "ureg" => {
                operands.push(fi);
                v == URZ as u32
            }
            "imm16" | "offset" | "bank" => {
                operands.push(fi);
                v != 0
            }
            _ => v != 0,
        };
        if hit {
            out.push(fi);
        }
    }
    if out.is_empty() {
        out = operands;
    }
    Some((op, form, out))
}

/// Every bit of one form, with its evidence.
#[derive(Clone, Debug)]
pub struct BitView {
    pub bit: u8,
    pub spec: SpecBit,
    pub primary: Evidence,
    pub all: BTreeSet<Evidence>,
    /// The seed page's claim against the spec; None for an instruction it does not draw.
    pub seed_class: Option<BitClass>,
    /// Ids of the errata (corrections of the seed page) that speak about the bit.
    pub errata: Vec<String>,
    /// Ids of the spec's nvdisasm evidence entries that speak about the bit (an instruction
    /// with no seed page: its spec's entries are evidence, not corrections).
    pub evidence: Vec<String>,
}

/// A finding of a run and what it touches.
#[derive(Clone, Debug)]
pub struct Touch {
    /// Index into the model's runs.
    pub run: usize,
    pub finding: Finding,
    /// Whose word the finding is about; None: the finding has no word that parses.
    pub owner: Option<Owner>,
    /// Touched field indices in the owner's spec (hardware runs only; empty otherwise).
    pub fields: Vec<usize>,
}

/// An oracle mismatch and whom it speaks about.
#[derive(Clone, Debug)]
pub struct OracleMismatchView {
    /// Index into the model's oracles and into that file's mismatches.
    pub oracle: usize,
    pub index: usize,
    pub owner: Owner,
}

/// One instruction's part of the report.
pub struct InstView {
    pub op: Op,
    /// The seed page's claims compared with the spec, per form; None: the seed page does not
    /// draw the instruction.
    pub seed: Option<Vec<FormComparison>>,
    /// Per form index of the instruction's spec: 128 bits.
    pub bits: Vec<Vec<BitView>>,
    /// Form keys an oracle mismatch withdrew `confirmed` from.
    pub withdrawn: BTreeSet<String>,
    /// Per field name: per value key: (software count, hardware count), from the coverage
    /// blocks of this instruction's forms alone.
    pub coverage: BTreeMap<String, BTreeMap<String, (u64, u64)>>,
}

impl InstView {
    pub fn spec(&self) -> &'static Spec {
        self.op.spec()
    }
    /// How many bits of all its forms are of class `e`.
    pub fn count(&self, e: Evidence) -> usize {
        self.bits.iter().flatten().filter(|b| b.primary == e).count()
    }
}

/// The evidence of the whole report.
pub struct Model {
    pub page: SeedPage,
    /// One per instruction, in [`Op::ALL`]'s order.
    pub instructions: Vec<InstView>,
    pub oracles: Vec<Oracle>,
    pub runs: Vec<Run>,
    pub vectors: Vec<Vector>,
    pub semantics: Option<(String, Vec<Assumption>)>,
    /// Every finding of every run, with whom it is about.
    pub touches: Vec<Touch>,
    /// Every oracle mismatch, with whom it is about.
    pub oracle_mismatches: Vec<OracleMismatchView>,
    /// Coverage blocks (software, hardware) whose forms are of several instructions (older
    /// files without per-form coverage): their counts are in no instruction's table.
    pub mixed_blocks: (usize, usize),
}

impl Model {
    pub fn instruction(&self, op: Op) -> &InstView {
        &self.instructions[op.index()]
    }
    /// Oracle mismatches on words of no instruction of the family.
    pub fn unattributed(&self) -> impl Iterator<Item = &OracleMismatchView> {
        self.oracle_mismatches.iter().filter(|m| m.owner.op().is_none())
    }
    /// How many bits of every instruction are of class `e`.
    pub fn count(&self, e: Evidence) -> usize {
        self.instructions.iter().map(|i| i.count(e)).sum()
    }
}

/// Position of bit `b` inside a field's value.
fn bit_in_field(f: &crate::spec::Field, b: usize) -> u32 {
    let mut i = 0u32;
    for &(lo, hi) in &f.segments {
        if (lo as usize..=hi as usize).contains(&b) {
            return i + (b - lo as usize) as u32;
        }
        i += (hi - lo + 1) as u32;
    }
    i
}

/// The spec's entries (errata or evidence) that speak about each bit of form `fi`: those of
/// the form that name the bit's field, or, naming no field, a bit of no field.
fn entries_per_bit(s: &Spec, fi: usize, spec_bits: &[SpecBit]) -> Vec<Vec<String>> {
    let key = &s.forms[fi].key;
    spec_bits
        .iter()
        .map(|sb| {
            s.errata
                .iter()
                .filter(|e| seedpage::erratum_applies(e, key))
                .filter(|e| (e.fields.is_empty() && *sb == SpecBit::Ignored) || e.fields.iter().any(|n| s.try_index(n).is_some_and(|i| sb.field() == Some(i))))
                .map(|e| e.id.clone())
                .collect()
        })
        .collect()
}

/// What the inputs prove, shared by every instruction's view.
struct Proofs<'a> {
    oracle_blocks: &'a [Block],
    hw_blocks: &'a [Block],
    withdrawn: &'a BTreeSet<String>,
    touches: &'a [Touch],
}

fn inst_view(op: Op, page: &SeedPage, p: &Proofs) -> Result<InstView, String> {
    let s = op.spec();
    // the seed page draws an instruction when it has every one of its forms (HMUL2's five)
    let seed = if s.forms.iter().all(|f| page.form(&f.key).is_some()) { Some(seedpage::compare(s, page)?) } else { None };
    let mut bits = Vec::new();
    for (fi, fs) in s.forms.iter().enumerate() {
        let key = fs.key.as_str();
        let spec_bits = seedpage::spec_bits(s, fi);
        let entries = entries_per_bit(s, fi, &spec_bits);
        let oracle_ok = !p.withdrawn.contains(key);
        let touched: BTreeSet<usize> =
            p.touches.iter().filter(|t| t.owner.as_ref().and_then(|o| o.form_key()) == Some(key)).flat_map(|t| t.fields.iter().copied()).collect();
        let mut row = Vec::with_capacity(128);
        for (b, sb) in spec_bits.iter().enumerate() {
            let cmp = seed.as_ref().map(|c| &c[fi].bits[b]);
            let (errata, evidence) = if seed.is_some() { (entries[b].clone(), Vec::new()) } else { (Vec::new(), entries[b].clone()) };
            let (confirmed, hardware, mismatch) = match sb {
                SpecBit::Ignored => (false, false, false),
                SpecBit::Fixed { .. } => (oracle_ok && has_words(p.oracle_blocks, key), has_words(p.hw_blocks, key), false),
                SpecBit::Field { field } => {
                    let f = &s.fields[*field];
                    let i = bit_in_field(f, b);
                    (oracle_ok && toggled(p.oracle_blocks, key, &f.name, f.width, i), toggled(p.hw_blocks, key, &f.name, f.width, i), touched.contains(field))
                }
            };
            let mut all = BTreeSet::new();
            if *sb != SpecBit::Ignored {
                all.insert(if seed.is_some() { Evidence::SeedOnly } else { Evidence::SpecOnly });
            }
            if confirmed {
                all.insert(Evidence::Confirmed);
            }
            if !errata.is_empty() || (cmp.is_some_and(|c| c.class == BitClass::Contradicted) && confirmed) {
                all.insert(Evidence::Contradicted);
            }
            if hardware {
                all.insert(Evidence::Hardware);
            }
            if mismatch {
                all.insert(Evidence::HardwareMismatch);
            }
            let primary = *all.iter().next_back().unwrap_or(&Evidence::Ignored);
            row.push(BitView { bit: b as u8, spec: sb.clone(), primary, all, seed_class: cmp.map(|c| c.class), errata, evidence });
        }
        bits.push(row);
    }
    let withdrawn = s.forms.iter().filter(|f| p.withdrawn.contains(&f.key)).map(|f| f.key.clone()).collect();
    Ok(InstView { op, seed, bits, withdrawn, coverage: BTreeMap::new() })
}

/// Build the model from loaded inputs.
pub fn build(oracles: Vec<Oracle>, runs: Vec<Run>, vectors: Vec<Vector>, semantics: Option<(String, Vec<Assumption>)>) -> Result<Model, String> {
    let page = seedpage::parse(crate::spec::SEED_PAGE).map_err(|e| e.to_string())?;

    // nvdisasm's evidence: oracle coverage, less the forms an oracle mismatch is a word of
    let mut oracle_blocks = Vec::new();
    let mut oracle_mismatches = Vec::new();
    let mut withdrawn: BTreeSet<String> = BTreeSet::new();
    for (oi, o) in oracles.iter().enumerate() {
        if let Some(c) = &o.coverage {
            oracle_blocks.extend(blocks_of(c, c.by_form.iter().filter(|(_, &n)| n > 0).map(|(k, _)| k.clone()).collect()));
        }
        for (mi, m) in o.report.mismatches.iter().enumerate() {
            let owner = Owner::of_hex(&m.word);
            // exactly the form it is a word of; a word of no form disproves no bit we can name
            if let Some(k) = owner.form_key() {
                withdrawn.insert(k.to_string());
            }
            oracle_mismatches.push(OracleMismatchView { oracle: oi, index: mi, owner });
        }
    }
    // software and hardware coverage
    let sw_vectors: Vec<&Vector> = vectors.iter().filter(|v| !v.is_hardware()).collect();
    let hw_vectors: Vec<&Vector> = vectors.iter().filter(|v| v.is_hardware()).collect();
    let mut software_blocks = oracle_blocks.clone();
    software_blocks.extend(vector_blocks(&sw_vectors));
    let mut hw_blocks = vector_blocks(&hw_vectors);
    let mut touches = Vec::new();
    for (ri, r) in runs.iter().enumerate() {
        if let Some(c) = &r.coverage {
            let forms = r.by_form.iter().filter(|(_, t)| t.instructions > 0).map(|(k, _)| k.clone()).collect();
            if r.hardware.used {
                hw_blocks.extend(blocks_of(c, forms));
            } else {
                software_blocks.extend(blocks_of(c, forms));
            }
        }
        for f in r.mismatches.iter().chain(&r.faults) {
            let owner = f.word().map(Owner::of);
            let fields = match (r.hardware.used, f.word().and_then(touched_fields)) {
                (true, Some((_, _, fl))) => fl,
                _ => Vec::new(),
            };
            touches.push(Touch { run: ri, finding: f.clone(), owner, fields });
        }
    }

    let proofs = Proofs { oracle_blocks: &oracle_blocks, hw_blocks: &hw_blocks, withdrawn: &withdrawn, touches: &touches };
    let mut instructions = Op::ALL.into_iter().map(|op| inst_view(op, &page, &proofs)).collect::<Result<Vec<_>, _>>()?;

    // value counts per field of each instruction: software and hardware
    let mut mixed_blocks = (0, 0);
    for (blocks, hw) in [(&software_blocks, false), (&hw_blocks, true)] {
        for b in blocks.iter() {
            let Some(op) = b.op() else {
                if hw {
                    mixed_blocks.1 += 1;
                } else {
                    mixed_blocks.0 += 1;
                }
                continue;
            };
            let cov = &mut instructions[op.index()].coverage;
            for (name, fc) in &b.fields {
                let e = cov.entry(name.clone()).or_default();
                for (k, &n) in &fc.seen {
                    let slot = e.entry(k.clone()).or_default();
                    if hw {
                        slot.1 += n;
                    } else {
                        slot.0 += n;
                    }
                }
            }
        }
    }
    Ok(Model { page, instructions, oracles, runs, vectors, semantics, touches, oracle_mismatches, mixed_blocks })
}

#[derive(Args)]
pub struct ReportArgs {
    /// A run report folder (holding summary.json); repeatable.
    #[arg(long = "run", value_parser = crate::cli::path_arg)]
    pub runs: Vec<PathBuf>,
    /// An `oracle --report` file; repeatable.
    #[arg(long = "oracle", value_parser = crate::cli::path_arg)]
    pub oracles: Vec<PathBuf>,
    /// A vectors .jsonl file or a folder of them; repeatable.
    #[arg(long = "vectors", value_parser = crate::cli::path_arg)]
    pub vectors: Vec<PathBuf>,
    /// The semantics assumptions; default: the table built into this binary (harness/spec/semantics.json as it was built).
    #[arg(long, value_parser = crate::cli::path_arg)]
    pub semantics: Option<PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_parser = crate::cli::path_arg)]
    pub out: PathBuf,
}

pub fn run(a: ReportArgs) -> CliResult {
    let oracles = a.oracles.iter().map(|p| read_oracle(p)).collect::<Result<Vec<_>, _>>()?;
    let runs = a.runs.iter().map(|p| read_run(p)).collect::<Result<Vec<_>, _>>()?;
    let mut vectors = Vec::new();
    for p in &a.vectors {
        vectors.extend(read_vectors(p)?);
    }
    // the table given, else the one built into this binary (never a file of the tree it was built in)
    let semantics = match &a.semantics {
        Some(p) => Some((p.display().to_string(), read_semantics(p)?)),
        None => Some((
            "the built-in harness/spec/semantics.json".to_string(),
            crate::reference::policy::parse_table(crate::reference::policy::SEMANTICS_JSON).map_err(|e| CliError::input(e.to_string()))?,
        )),
    };
    let model = build(oracles, runs, vectors, semantics).map_err(CliError::input)?;
    let page = html::render(&model);
    crate::outfile::write_atomic(&a.out, page.as_bytes()).map_err(|e| CliError::input(format!("{}: {e}", a.out.display())))?;
    let counts: Vec<String> = Evidence::CLASSES.iter().map(|e| format!("{} {}", e.name(), model.count(*e))).collect();
    let unattributed = model.unattributed().count();
    let note = if unattributed == 0 { String::new() } else { format!("; {unattributed} oracle mismatch(es) on words of no instruction of the family") };
    crate::errln!("report: wrote {} ({}){note}", a.out.display(), counts.join(", "));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oracle_with(coverage_words: &[u128], mismatches: &[u128]) -> Oracle {
        use crate::schema::{OracleFile, OracleMismatch, OracleReport};
        let report = OracleReport {
            words: coverage_words.len(),
            agreed_text: coverage_words.len(),
            mismatches: mismatches.iter().map(|&w| OracleMismatch { word: crate::isa::format_hex(w), ours: "a".into(), nvdisasm: "b".into() }).collect(),
            ..Default::default()
        };
        Sourced { path: "o.json".into(), file: OracleFile { seed: 1, report, coverage: Some(Coverage::of(coverage_words)) } }
    }

    fn hmul2(m: &Model) -> &InstView {
        m.instruction(Op::Hmul2)
    }

    /// The first word of `op`'s every-field-once set that is of form `form`.
    fn word_of(op: Op, form: Form) -> u128 {
        crate::gen::one_field_at_a_time(op).into_iter().find(|&w| Owner::of(w) == Owner::Form(op, form)).expect("a word of the form")
    }

    fn confirmed_bits(v: &InstView, key: &str) -> usize {
        let fi = v.spec().forms.iter().position(|f| f.key == key).expect("form");
        v.bits[fi].iter().filter(|b| b.all.contains(&Evidence::Confirmed)).count()
    }

    #[test]
    fn oracle_coverage_confirms_toggled_bits_and_a_mismatch_withdraws_the_form() {
        let s = Op::Hmul2.spec();
        let words = crate::gen::one_field_at_a_time(Op::Hmul2);
        let m = build(vec![oracle_with(&words, &[])], vec![], vec![], None).unwrap();
        let rrr = &hmul2(&m).bits[0];
        let b_neg = s.field("b_neg").segments[0].0 as usize;
        assert!(rrr[b_neg].all.contains(&Evidence::Confirmed));
        assert_eq!(rrr[0].primary, Evidence::Confirmed, "opcode bits: the form had words");
        // bits the seed contradicts and the oracle confirmed: contradicted
        assert_eq!(rrr[110].primary, Evidence::Contradicted, "r-bar/w-bar swap");
        let ur = crate::isa::encode(&crate::isa::Inst::new(0, 1, crate::isa::Operand2::Ur(2))).unwrap();
        let m = build(vec![oracle_with(&words, &[ur])], vec![], vec![], None).unwrap();
        assert!(hmul2(&m).bits[4].iter().all(|b| !b.all.contains(&Evidence::Confirmed)));
        assert!(hmul2(&m).bits[0][b_neg].all.contains(&Evidence::Confirmed));
        assert_eq!(hmul2(&m).withdrawn, ["HMUL2_R_R_UR".to_string()].into());
    }

    #[test]
    fn a_mismatch_of_another_instructions_form_withdraws_that_form_alone() {
        let mut words = crate::gen::one_field_at_a_time(Op::Hmul2);
        words.extend(crate::gen::one_field_at_a_time(Op::Hfma2));
        let bad = word_of(Op::Hfma2, Form::Rrrr);
        let m = build(vec![oracle_with(&words, &[bad])], vec![], vec![], None).unwrap();
        for f in &Op::Hmul2.spec().forms {
            assert!(confirmed_bits(hmul2(&m), &f.key) > 0, "{}: an HFMA2 mismatch says nothing about HMUL2", f.key);
        }
        let fma = m.instruction(Op::Hfma2);
        assert_eq!(confirmed_bits(fma, "HFMA2_R_R_R_R"), 0, "the form the mismatch is a word of");
        assert!(confirmed_bits(fma, "HFMA2_R_R_F_F_R") > 0, "another HFMA2 form keeps its confirmation");
        assert_eq!(fma.withdrawn, ["HFMA2_R_R_R_R".to_string()].into());
        assert!(hmul2(&m).withdrawn.is_empty() && m.unattributed().count() == 0);
        // HADD2 had no words: its bits rest on its spec, never on the seed page
        let add = m.instruction(Op::Hadd2);
        assert!(add.bits.iter().flatten().all(|b| matches!(b.primary, Evidence::SpecOnly | Evidence::Ignored)));
    }

    #[test]
    fn a_word_of_no_form_withdraws_nothing_and_is_named_for_what_it_is() {
        let mut words = crate::gen::one_field_at_a_time(Op::Hmul2);
        words.extend(crate::gen::one_field_at_a_time(Op::Hfma2));
        let before = build(vec![oracle_with(&words, &[])], vec![], vec![], None).unwrap();
        // an HFMA2 opcode with a form selector no HFMA2 form has, and an opcode of no instruction
        let sel = &Op::Hfma2.layout().operand_form;
        let no_form = sel.set(word_of(Op::Hfma2, Form::Rrrr), sel.max()).unwrap();
        let opcode = &Op::Hmul2.layout().opcode;
        let nobody = (0..=opcode.max()).map(|v| opcode.set(words[0], v).unwrap()).find(|&w| op_of(w).is_err()).unwrap();
        assert!(matches!(Owner::of(no_form), Owner::NoForm(Op::Hfma2, _)), "{:?}", Owner::of(no_form));
        assert!(matches!(Owner::of(nobody), Owner::Nobody(_)));
        let m = build(vec![oracle_with(&words, &[no_form, nobody])], vec![], vec![], None).unwrap();
        for (a, b) in before.instructions.iter().zip(&m.instructions) {
            assert_eq!(a.count(Evidence::Confirmed), b.count(Evidence::Confirmed), "{}: nothing withdrawn", a.op);
            assert!(b.withdrawn.is_empty());
        }
        assert_eq!(m.unattributed().map(|x| x.index).collect::<Vec<_>>(), [1], "the word of no instruction");
        assert!(Owner::of(no_form).describe().starts_with("no form of HFMA2 (no HFMA2 form has operand_form"), "{}", Owner::of(no_form).describe());
        assert!(Owner::of_hex("0x12").describe().starts_with("no instruction of the family (malformed hex"), "{}", Owner::of_hex("0x12").describe());
    }

    #[test]
    fn the_semantics_view_is_per_architecture_and_names_every_instruction() {
        let table = crate::reference::policy::parse_table(crate::reference::policy::SEMANTICS_JSON).unwrap();
        let m = build(vec![], vec![], vec![], Some(("semantics.json".into(), table))).unwrap();
        let page = html::render(&m);
        let sem = page.split("<section id=\"semantics\">").nth(1).and_then(|s| s.split("</section>").next()).unwrap();
        assert!(!sem.contains("not stated"), "every entry names its instructions, the pending ones included");
        let row = sem.split("<tr data-semantics=\"mnmx-nan\"").nth(1).and_then(|r| r.split("</tr>").next()).unwrap();
        // the comparisons and min/max are in the isa now: their entries name them as the first four
        assert!(row.contains("HMNMX2") && !row.contains("reference only"), "{row}");
        for t in crate::target::Target::ALL {
            assert!(sem.contains(&format!("<th>{t}: still assumed</th>")), "{t}");
        }
        let mma = sem.split("<tr data-instruction=\"HFMA2.MMA\">").nth(1).and_then(|r| r.split("</tr>").next()).unwrap();
        assert!(mma.contains("<td data-arch=\"SM100\"><span class=\"empty\">no such instruction</span></td>"), "{mma}");
        assert!(sem.contains("<tr data-instruction=\"HSET2\">") && !sem.contains("(reference only)"));
        let fma_mma = sem.split("<tr data-semantics=\"fma-mma\"").nth(1).and_then(|r| r.split("</tr>").next()).unwrap();
        assert!(
            fma_mma.contains("assumed on SM80, SM86, SM89, SM90</span>") && fma_mma.contains("<b>SM80, SM86, SM89</b>: HFMA2.MMA has no format field"),
            "{fma_mma}"
        );
    }

    #[test]
    fn no_inputs_means_seed_or_spec_only_and_ignored() {
        let m = build(vec![], vec![], vec![], None).unwrap();
        assert_eq!(m.instructions.iter().map(|i| i.op).collect::<Vec<_>>(), Op::ALL);
        for v in &m.instructions {
            assert_eq!(v.bits.len(), v.spec().forms.len(), "{}: every form", v.op);
            let base = if v.op == Op::Hmul2 { Evidence::SeedOnly } else { Evidence::SpecOnly };
            assert_eq!(v.seed.is_some(), v.op == Op::Hmul2, "the seed page draws HMUL2 alone");
            for b in v.bits.iter().flatten() {
                // an erratum is nvdisasm's word against the seed page, inputs or not
                let ok = b.primary == base || b.primary == Evidence::Ignored || (b.primary == Evidence::Contradicted && !b.errata.is_empty());
                assert!(ok, "{}: {b:?}", v.op);
            }
            if v.op != Op::Hmul2 {
                // its spec's entries are evidence: the opcode entry speaks about bit 0
                assert!(v.bits.iter().all(|row| !row[0].evidence.is_empty() && row[0].errata.is_empty()), "{}", v.op);
            }
        }
    }

    #[test]
    fn coverage_of_several_forms_together_proves_only_fields_one_form_has() {
        let s = Op::Hmul2.spec();
        let words = crate::gen::one_field_at_a_time(Op::Hmul2);
        let mut o = oracle_with(&words, &[]);
        if let Some(c) = o.file.coverage.as_mut() {
            c.fields_by_form.clear();
        }
        let m = build(vec![o], vec![], vec![], None).unwrap();
        let dst = s.field("dst").segments[0].0 as usize;
        let b_reg = s.field("b_reg").segments[0].0 as usize;
        assert!(!hmul2(&m).bits[0][dst].all.contains(&Evidence::Confirmed), "dst is in every form: not attributable");
        assert!(hmul2(&m).bits[0][b_reg].all.contains(&Evidence::Confirmed), "b_reg is R,R,R's alone");
        assert!(!hmul2(&m).coverage.is_empty(), "a block of HMUL2's forms alone counts for HMUL2");
        let m = build(vec![oracle_with(&words, &[])], vec![], vec![], None).unwrap();
        assert!(hmul2(&m).bits[0][dst].all.contains(&Evidence::Confirmed), "per-form coverage proves it");
        // a block of two instructions' forms together: b_reg is also HADD2 R,R,R's, so not HMUL2's alone
        let mut both = words.clone();
        both.extend(crate::gen::one_field_at_a_time(Op::Hadd2));
        let mut o = oracle_with(&both, &[]);
        if let Some(c) = o.file.coverage.as_mut() {
            c.fields_by_form.clear();
        }
        let m = build(vec![o], vec![], vec![], None).unwrap();
        assert!(!hmul2(&m).bits[0][b_reg].all.contains(&Evidence::Confirmed), "HADD2_R_R_R has b_reg too");
        assert_eq!(m.mixed_blocks, (1, 0));
        assert!(m.instructions.iter().all(|i| i.coverage.is_empty()), "mixed counts are no instruction's");
    }

    #[test]
    fn touched_fields_of_a_finding() {
        let s = Op::Hmul2.spec();
        let mut i = crate::isa::Inst::new(0, 1, crate::isa::Operand2::Reg(2));
        i.flush = crate::isa::Flush::Ftz;
        let (op, f, t) = touched_fields(crate::isa::encode(&i).unwrap()).unwrap();
        assert_eq!((op, f), (Op::Hmul2, Form::Rrr));
        assert_eq!(t, vec![s.index("flush")]);
        let plain = crate::isa::encode(&crate::isa::Inst::new(0, 1, crate::isa::Operand2::Reg(2))).unwrap();
        let (_, _, t) = touched_fields(plain).unwrap();
        let names: Vec<&str> = t.iter().map(|&i| s.fields[i].name.as_str()).collect();
        assert_eq!(names, ["dst", "a", "b_reg"]);
        // another instruction's word: fields of its own spec
        let (op, f, t) = touched_fields(word_of(Op::Hfma2, Form::Rrrr)).unwrap();
        assert_eq!((op, f), (Op::Hfma2, Form::Rrrr));
        assert!(t.iter().all(|&i| Op::Hfma2.spec().forms[Op::Hfma2.form_index(Form::Rrrr).unwrap()].fields.contains(&i)));
    }
}
