//! `hmul2-harness report`: one self-contained HTML page that shows, per bit of every form,
//! what is proven about HMUL2's encoding and by what, computed from the spec, its errata,
//! the seed page, semantics.json, vectors, oracle results and run reports.
//!
//! Evidence classes of a bit (a field's bits share all but the toggle-based ones):
//! - `seed-only`: nothing below applies; the bit's meaning rests on the seed page and the spec.
//! - `confirmed`: an oracle run saw the bit at 0 and at 1 in words of the form, and no oracle
//!   mismatch is of that form (fixed bits: the form had words and no mismatch).
//! - `contradicted`: an erratum covers the bit, or the seed page disagrees with the spec there
//!   and the bit is confirmed (nvdisasm backs the spec, not the seed).
//! - `hardware`: a GPU ran words of the form with the bit at 0 and at 1 (hardware vectors, runs
//!   with `hardware.used`).
//! - `hardware-mismatch`: a finding of a hardware run touches the field (see [`touched_fields`]).
//!
//! The colour of a bit is the first that applies of: hardware-mismatch, hardware,
//! contradicted, confirmed, seed-only (the order, strongest evidence first); a
//! contradicted bit still shows the seed's claim in red beneath it. Bits of no field are
//! `ignored` unless an erratum speaks about them.

pub mod html;
pub mod inputs;

use crate::cli::{CliError, CliResult};
use crate::isa::{Form, PT, RZ, URZ};
use crate::seedpage::{self, BitClass, FormComparison, SeedPage, SpecBit};
use crate::spec::Spec;
pub use view::{form_of, spec, HmulForm};

/// The report proves HMUL2's seed page bit by bit: it reads HMUL2's spec, and a word of
/// another instruction counts as no form of it.
pub mod view {
    use crate::isa::{Form, Illegal, Op};
    use crate::spec::{FormSpec, Spec};

    /// HMUL2's spec.
    pub fn spec() -> &'static Spec {
        Op::Hmul2.spec()
    }
    /// The HMUL2 form of `word`; a word of another instruction is an error.
    pub fn form_of(word: u128) -> Result<Form, Illegal> {
        match crate::isa::decode::form_of(word)? {
            (Op::Hmul2, f) => Ok(f),
            (op, _) => Err(Illegal::UnknownOpcode { opcode: op.layout().opcode_value }),
        }
    }
    /// A form's key and spec in HMUL2's spec.
    pub trait HmulForm {
        fn key(self) -> &'static str;
        fn spec(self) -> &'static FormSpec;
    }
    impl HmulForm for Form {
        fn key(self) -> &'static str {
            Op::Hmul2.form_key(self)
        }
        fn spec(self) -> &'static FormSpec {
            // every Form is one of HMUL2's (a test of the spec checks its five forms)
            &spec().forms[Op::Hmul2.form_index(self).unwrap_or(0)]
        }
    }
}
use crate::schema::{Assumption, Finding};
use clap::Args;
use inputs::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

/// What is known about a bit, strongest last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Evidence {
    Ignored,
    SeedOnly,
    Confirmed,
    Contradicted,
    Hardware,
    HardwareMismatch,
}

impl Evidence {
    pub const CLASSES: [Evidence; 5] = [Evidence::SeedOnly, Evidence::Confirmed, Evidence::Contradicted, Evidence::Hardware, Evidence::HardwareMismatch];
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Ignored => "ignored",
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
    /// The form the coverage is exactly of, or None: all forms in `forms` together.
    pub form: Option<String>,
    pub forms: BTreeSet<String>,
    pub fields: BTreeMap<String, FieldCoverage>,
}

fn blocks_of(c: &Coverage, forms_with_words: BTreeSet<String>) -> Vec<Block> {
    if !c.fields_by_form.is_empty() {
        return c.fields_by_form.iter().map(|(k, f)| Block { form: Some(k.clone()), forms: [k.clone()].into(), fields: f.clone() }).collect();
    }
    vec![Block { form: None, forms: forms_with_words, fields: c.fields.clone() }]
}

/// Exact per-form blocks from vectors.
fn vector_blocks(vs: &[&Vector]) -> Vec<Block> {
    let mut by_form: BTreeMap<String, Vec<u128>> = BTreeMap::new();
    for v in vs {
        if let Ok(f) = form_of(v.word) {
            by_form.entry(f.key().to_string()).or_default().push(v.word);
        }
    }
    by_form
        .into_iter()
        .map(|(k, words)| {
            let c = Coverage::of(&words);
            Block { form: Some(k.clone()), forms: [k].into(), fields: c.fields }
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
            // form of the block has that field
            None => {
                let s = spec();
                b.forms.contains(form)
                    && s.try_index(field)
                        .is_some_and(|fi| b.forms.iter().all(|k| k == form || !s.forms.iter().any(|fs| &fs.key == k && fs.fields.contains(&fi))))
            }
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

/// The fields of its form a hardware finding implicates: those not at a neutral value in the
/// (minimized) word — any modifier or immediate, a predicate other than PT, a register that is
/// RZ/URZ — never the scheduling controls; when all are neutral, the plain multiply is at fault
/// and the operand fields (registers, immediates, constant address) are.
pub fn touched_fields(s: &Spec, word: u128) -> Option<(Form, Vec<usize>)> {
    let form = form_of(word).ok()?;
    let fs = form.spec();
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
    Some((form, out))
}

/// Every bit of one form, with its evidence.
#[derive(Clone, Debug)]
pub struct BitView {
    pub bit: u8,
    pub spec: SpecBit,
    pub primary: Evidence,
    pub all: BTreeSet<Evidence>,
    pub seed_class: BitClass,
    pub errata: Vec<String>,
}

/// The evidence of the whole report.
pub struct Model {
    pub page: SeedPage,
    pub comparisons: Vec<FormComparison>,
    /// Per form index: 128 bits.
    pub bits: Vec<Vec<BitView>>,
    pub oracles: Vec<Oracle>,
    pub runs: Vec<Run>,
    pub vectors: Vec<Vector>,
    pub semantics: Option<(String, Vec<Assumption>)>,
    /// Per field name: per value key: (software count, hardware count).
    pub coverage: BTreeMap<String, BTreeMap<String, (u64, u64)>>,
    /// Hardware findings: (run index, finding, form, touched field indices).
    pub hw_touch: Vec<(usize, Finding, Option<Form>, Vec<usize>)>,
}

/// Build the model from loaded inputs.
pub fn build(oracles: Vec<Oracle>, runs: Vec<Run>, vectors: Vec<Vector>, semantics: Option<(String, Vec<Assumption>)>) -> Result<Model, String> {
    let s = spec();
    let page = seedpage::parse(crate::spec::SEED_PAGE).map_err(|e| e.to_string())?;
    let comparisons = seedpage::compare(s, &page)?;

    // nvdisasm's evidence: oracle coverage, less the forms an oracle mismatch speaks about
    let mut oracle_blocks = Vec::new();
    let mut oracle_bad_forms: BTreeSet<String> = BTreeSet::new();
    for o in &oracles {
        if let Some(c) = &o.coverage {
            oracle_blocks.extend(blocks_of(c, c.by_form.iter().filter(|(_, &n)| n > 0).map(|(k, _)| k.clone()).collect()));
        }
        for m in &o.report.mismatches {
            match crate::isa::parse_hex(&m.word).ok().and_then(|w| form_of(w).ok()) {
                Some(f) => {
                    oracle_bad_forms.insert(f.key().to_string());
                }
                // not even a form of ours: nothing about any form is confirmed
                None => oracle_bad_forms.extend(s.forms.iter().map(|f| f.key.clone())),
            }
        }
    }
    // software and hardware coverage
    let sw_vectors: Vec<&Vector> = vectors.iter().filter(|v| !v.is_hardware()).collect();
    let hw_vectors: Vec<&Vector> = vectors.iter().filter(|v| v.is_hardware()).collect();
    let mut software_blocks = oracle_blocks.clone();
    software_blocks.extend(vector_blocks(&sw_vectors));
    let mut hw_blocks = vector_blocks(&hw_vectors);
    let mut hw_touch = Vec::new();
    for (ri, r) in runs.iter().enumerate() {
        if let Some(c) = &r.coverage {
            let forms = r.by_form.iter().filter(|(_, t)| t.instructions > 0).map(|(k, _)| k.clone()).collect();
            if r.hardware.used {
                hw_blocks.extend(blocks_of(c, forms));
            } else {
                software_blocks.extend(blocks_of(c, forms));
            }
        }
        if r.hardware.used {
            for f in r.mismatches.iter().chain(&r.faults) {
                let t = f.word().and_then(|w| touched_fields(s, w));
                let (form, fields) = match t {
                    Some((fm, fl)) => (Some(fm), fl),
                    None => (None, Vec::new()),
                };
                hw_touch.push((ri, f.clone(), form, fields));
            }
        }
    }

    let mut bits = Vec::new();
    for (fi, fs) in s.forms.iter().enumerate() {
        let cmp = &comparisons[fi];
        let key = fs.key.as_str();
        let oracle_ok = !oracle_bad_forms.contains(key);
        let touched: BTreeSet<usize> =
            hw_touch.iter().filter(|(_, _, f, _)| f.map(|x| x.key()) == Some(key)).flat_map(|(_, _, _, fl)| fl.iter().copied()).collect();
        let mut row = Vec::with_capacity(128);
        for b in 0..128usize {
            let c = &cmp.bits[b];
            let mut all = BTreeSet::new();
            let (confirmed, hardware, mismatch) = match &c.spec {
                SpecBit::Ignored => (false, false, false),
                SpecBit::Fixed { .. } => (oracle_ok && has_words(&oracle_blocks, key), has_words(&hw_blocks, key), false),
                SpecBit::Field { field } => {
                    let f = &s.fields[*field];
                    // position of bit b inside the field's value
                    let mut i = 0u32;
                    for &(lo, hi) in &f.segments {
                        if (lo as usize..=hi as usize).contains(&b) {
                            i += (b - lo as usize) as u32;
                            break;
                        }
                        i += (hi - lo + 1) as u32;
                    }
                    (oracle_ok && toggled(&oracle_blocks, key, &f.name, f.width, i), toggled(&hw_blocks, key, &f.name, f.width, i), touched.contains(field))
                }
            };
            if c.spec != SpecBit::Ignored {
                all.insert(Evidence::SeedOnly);
            }
            if confirmed {
                all.insert(Evidence::Confirmed);
            }
            if !c.errata.is_empty() || (c.class == BitClass::Contradicted && confirmed) {
                all.insert(Evidence::Contradicted);
            }
            if hardware {
                all.insert(Evidence::Hardware);
            }
            if mismatch {
                all.insert(Evidence::HardwareMismatch);
            }
            let primary = if c.spec == SpecBit::Ignored && all.is_empty() { Evidence::Ignored } else { *all.iter().next_back().unwrap_or(&Evidence::SeedOnly) };
            row.push(BitView { bit: b as u8, spec: c.spec.clone(), primary, all, seed_class: c.class, errata: c.errata.clone() });
        }
        bits.push(row);
    }

    // value counts per field: software and hardware
    let mut coverage: BTreeMap<String, BTreeMap<String, (u64, u64)>> = BTreeMap::new();
    for (blocks, hw) in [(&software_blocks, false), (&hw_blocks, true)] {
        for b in blocks.iter() {
            for (name, fc) in &b.fields {
                let e = coverage.entry(name.clone()).or_default();
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
    Ok(Model { page, comparisons, bits, oracles, runs, vectors, semantics, coverage, hw_touch })
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
    let counts: BTreeMap<&str, usize> = Evidence::CLASSES.iter().map(|e| (e.name(), model.bits.iter().flatten().filter(|b| b.primary == *e).count())).collect();
    crate::errln!("report: wrote {} ({})", a.out.display(), counts.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", "));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oracle_with(coverage_words: &[u128], mismatch: Option<u128>) -> Oracle {
        use crate::schema::{OracleFile, OracleMismatch, OracleReport};
        let report = OracleReport {
            words: coverage_words.len(),
            agreed_text: coverage_words.len(),
            mismatches: mismatch.map(|w| OracleMismatch { word: crate::isa::format_hex(w), ours: "a".into(), nvdisasm: "b".into() }).into_iter().collect(),
            ..Default::default()
        };
        Sourced { path: "o.json".into(), file: OracleFile { seed: 1, report, coverage: Some(Coverage::of(coverage_words)) } }
    }

    #[test]
    fn oracle_coverage_confirms_toggled_bits_and_a_mismatch_withdraws_the_form() {
        let s = spec();
        let words = crate::gen::one_field_at_a_time(crate::isa::Op::Hmul2);
        let m = build(vec![oracle_with(&words, None)], vec![], vec![], None).unwrap();
        let rrr = &m.bits[0];
        let b_neg = s.field("b_neg").segments[0].0 as usize;
        assert!(rrr[b_neg].all.contains(&Evidence::Confirmed));
        assert_eq!(rrr[0].primary, Evidence::Confirmed, "opcode bits: the form had words");
        // bits the seed contradicts and the oracle confirmed: contradicted
        assert_eq!(rrr[110].primary, Evidence::Contradicted, "r-bar/w-bar swap");
        let ur = crate::isa::encode(&crate::isa::Inst::new(0, 1, crate::isa::Operand2::Ur(2))).unwrap();
        let m = build(vec![oracle_with(&words, Some(ur))], vec![], vec![], None).unwrap();
        assert!(m.bits[4].iter().all(|b| !b.all.contains(&Evidence::Confirmed)));
        assert!(m.bits[0][b_neg].all.contains(&Evidence::Confirmed));
    }

    #[test]
    fn no_inputs_means_seed_only_and_ignored() {
        let m = build(vec![], vec![], vec![], None).unwrap();
        for row in &m.bits {
            for b in row {
                // an erratum is nvdisasm's word against the seed page, inputs or not
                let ok = matches!(b.primary, Evidence::SeedOnly | Evidence::Ignored) || (b.primary == Evidence::Contradicted && !b.errata.is_empty());
                assert!(ok, "{b:?}");
            }
        }
    }

    #[test]
    fn coverage_of_several_forms_together_proves_only_fields_one_form_has() {
        let s = spec();
        let words = crate::gen::one_field_at_a_time(crate::isa::Op::Hmul2);
        let mut o = oracle_with(&words, None);
        if let Some(c) = o.file.coverage.as_mut() {
            c.fields_by_form.clear();
        }
        let m = build(vec![o], vec![], vec![], None).unwrap();
        let dst = s.field("dst").segments[0].0 as usize;
        let b_reg = s.field("b_reg").segments[0].0 as usize;
        assert!(!m.bits[0][dst].all.contains(&Evidence::Confirmed), "dst is in every form: not attributable");
        assert!(m.bits[0][b_reg].all.contains(&Evidence::Confirmed), "b_reg is R,R,R's alone");
        let m = build(vec![oracle_with(&words, None)], vec![], vec![], None).unwrap();
        assert!(m.bits[0][dst].all.contains(&Evidence::Confirmed), "per-form coverage proves it");
    }

    #[test]
    fn touched_fields_of_a_finding() {
        let s = spec();
        let mut i = crate::isa::Inst::new(0, 1, crate::isa::Operand2::Reg(2));
        i.flush = crate::isa::Flush::Ftz;
        let (f, t) = touched_fields(s, crate::isa::encode(&i).unwrap()).unwrap();
        assert_eq!(f, Form::Rrr);
        assert_eq!(t, vec![s.index("flush")]);
        let plain = crate::isa::encode(&crate::isa::Inst::new(0, 1, crate::isa::Operand2::Reg(2))).unwrap();
        let (_, t) = touched_fields(s, plain).unwrap();
        let names: Vec<&str> = t.iter().map(|&i| s.fields[i].name.as_str()).collect();
        assert_eq!(names, ["dst", "a", "b_reg"]);
    }
}
