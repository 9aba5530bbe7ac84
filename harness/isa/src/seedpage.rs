//! The seed page (`spec/sm90/hmul2-seed-page.txt`) read as data: per form, what it claims at
//! each of the 128 bits, and a bit-by-bit comparison with the spec.
//!
//! The seed page is untrusted (nvdisasm wins), so nothing here feeds the encoder; the
//! comparison exists so that `report` can show the seed's claim beside what is proven.

use crate::spec::{Erratum, Spec};
use std::collections::BTreeSet;

/// What the seed page says about one bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeedCell {
    /// Part of a named field; `lo..=hi` is the seed's whole span of that label here.
    Field { label: String, lo: u8, hi: u8 },
    /// A fixed bit value.
    Fixed(bool),
}

/// A contiguous run of cells the seed page gives one label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedSpan {
    pub label: String,
    pub lo: u8,
    pub hi: u8,
}

/// One "Operand N Modifiers" table: binary code → value name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueTable {
    pub title: String,
    pub rows: Vec<(String, String)>,
}

/// One form as the seed page draws it.
#[derive(Clone, Debug)]
pub struct SeedForm {
    pub key: String,
    pub syntax: String,
    pub distilled: String,
    /// Bit `b` is `cells[b]`; always 128 long.
    pub cells: Vec<SeedCell>,
    pub tables: Vec<ValueTable>,
}

impl SeedForm {
    /// The labelled spans, lowest bit first.
    pub fn spans(&self) -> Vec<SeedSpan> {
        let mut out: Vec<SeedSpan> = Vec::new();
        for c in &self.cells {
            if let SeedCell::Field { label, lo, hi } = c {
                if out.last().map(|s| (s.lo, s.hi)) != Some((*lo, *hi)) {
                    out.push(SeedSpan { label: label.clone(), lo: *lo, hi: *hi });
                }
            }
        }
        out
    }
}

/// The whole page.
#[derive(Clone, Debug)]
pub struct SeedPage {
    pub forms: Vec<SeedForm>,
}

impl SeedPage {
    pub fn form(&self, key: &str) -> Option<&SeedForm> {
        self.forms.iter().find(|f| f.key == key)
    }
}

/// Why a text is not a seed page this parser understands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("seed page line {line}: {message}")]
pub struct SeedError {
    pub line: usize,
    pub message: String,
}

fn is_bit_index_row(line: &str) -> bool {
    let cells: Vec<&str> = line.split('\t').collect();
    cells.len() == 64 && cells.iter().enumerate().all(|(i, c)| c.trim() == (i % 8).to_string())
}

/// Parse one row of up to 64 cells into `cells[base..base + 64]`. An empty cell continues the
/// field to its left; missing trailing cells are empty ones (the page strips them).
fn parse_row(line: &str, line_no: usize, base: u8, cells: &mut [SeedCell]) -> Result<(), SeedError> {
    let raw: Vec<&str> = line.split('\t').map(|c| c.trim()).collect();
    if raw.len() > 64 {
        return Err(SeedError { line: line_no, message: format!("{} cells, at most 64", raw.len()) });
    }
    let get = |j: usize| raw.get(j).copied().unwrap_or("");
    let mut j = 0usize;
    while j < 64 {
        let bit = base as usize + j;
        match get(j) {
            "0" | "1" => {
                cells[bit] = SeedCell::Fixed(get(j) == "1");
                j += 1;
            }
            "" => return Err(SeedError { line: line_no, message: format!("bit {bit}: empty cell with no field to its left") }),
            label => {
                let mut k = j + 1;
                while k < 64 && get(k).is_empty() {
                    k += 1;
                }
                for m in j..k {
                    cells[base as usize + m] = SeedCell::Field { label: label.to_string(), lo: bit as u8, hi: (base as usize + k - 1) as u8 };
                }
                j = k;
            }
        }
    }
    Ok(())
}

/// Parse a seed page.
pub fn parse(text: &str) -> Result<SeedPage, SeedError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut forms: Vec<SeedForm> = Vec::new();
    let mut syntax = String::new();
    let mut distilled = String::new();
    let mut prev_nonblank = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\r');
        let t = line.trim();
        if let Some(d) = t.strip_prefix("distilled:") {
            distilled = d.trim().to_string();
            syntax = prev_nonblank.clone();
        } else if let Some(k) = t.strip_prefix("key:") {
            let key = k.trim().to_string();
            // the next four non-blank lines: bit index, row 0, bit index, row 1
            let mut rows: Vec<(usize, &str)> = Vec::new();
            let mut j = i + 1;
            while rows.len() < 4 && j < lines.len() {
                if !lines[j].trim().is_empty() {
                    rows.push((j + 1, lines[j].trim_end_matches('\r')));
                }
                j += 1;
            }
            if rows.len() < 4 {
                return Err(SeedError { line: i + 1, message: format!("form {key}: fewer than four layout rows") });
            }
            for (n, r) in [rows[0], rows[2]] {
                if !is_bit_index_row(r) {
                    return Err(SeedError { line: n, message: format!("form {key}: expected the bit-index row 0..7 x 8") });
                }
            }
            let mut cells = vec![SeedCell::Fixed(false); 128];
            parse_row(rows[1].1, rows[1].0, 0, &mut cells)?;
            parse_row(rows[3].1, rows[3].0, 64, &mut cells)?;
            if forms.iter().any(|f| f.key == key) {
                return Err(SeedError { line: i + 1, message: format!("form {key} appears twice") });
            }
            forms.push(SeedForm { key, syntax: syntax.clone(), distilled: distilled.clone(), cells, tables: Vec::new() });
            i = j;
            continue;
        } else if t.ends_with("Modifiers") && !forms.is_empty() {
            let mut table = ValueTable { title: t.to_string(), rows: Vec::new() };
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().is_empty() {
                j += 1;
            }
            if j < lines.len() && lines[j].trim().starts_with("Binary") {
                j += 1;
                while j < lines.len() {
                    let mut parts = lines[j].trim().splitn(2, '\t');
                    match (parts.next(), parts.next()) {
                        (Some(b), Some(v)) if !b.is_empty() && b.bytes().all(|c| c == b'0' || c == b'1') => {
                            table.rows.push((b.to_string(), v.trim().to_string()));
                            j += 1;
                        }
                        _ => break,
                    }
                }
            }
            if let Some(f) = forms.last_mut() {
                f.tables.push(table);
            }
            i = j;
            continue;
        }
        if !t.is_empty() {
            prev_nonblank = t.to_string();
        }
        i += 1;
    }
    if forms.is_empty() {
        return Err(SeedError { line: 0, message: "no form (no \"key:\" line)".into() });
    }
    Ok(SeedPage { forms })
}

/// The seed page's own words for spec fields, where they are not the field's name or one of
/// its value names (FMZ, SAT, BF16_V2, ...). Operands are numbered as the seed prints them:
/// 0 the destination, 1 operand 1, 2 and 3 the parts of operand 2 in printing order.
const SEED_VOCABULARY: &[(&str, &[&str])] = &[
    ("operand 0", &["dst"]),
    ("operand 1", &["a"]),
    ("operand 2", &["b_reg", "b_ureg", "imm_hi", "cb_bank"]),
    ("operand 3", &["imm_lo", "cb_offset"]),
    ("modi", &["a_swizzle", "b_swizzle"]),
    ("cabs", &["a_abs", "b_abs"]),
    ("cneg", &["a_neg", "b_neg"]),
    ("pred", &["pred_neg"]),
    ("y", &["yield"]),
    ("r-bar", &["rd_bar"]),
    ("w-bar", &["wr_bar"]),
    ("b-mask", &["wait"]),
];

fn norm(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace([' ', '_'], "-")
}

/// Whether the seed's `label` names spec field `field` (by name, value name or seed vocabulary).
pub fn denotes(spec: &Spec, label: &str, field: usize) -> bool {
    let f = &spec.fields[field];
    let l = norm(label);
    if l == norm(&f.name) || f.values.iter().any(|v| !v.is_empty() && norm(v) == l) {
        return true;
    }
    SEED_VOCABULARY.iter().any(|(w, names)| norm(w) == l && names.contains(&f.name.as_str()))
}

/// What the spec says about one bit of one form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecBit {
    /// A bit of a field with a required value (opcode, form selector).
    Fixed { field: usize, value: bool },
    /// A bit of a field the form uses.
    Field { field: usize },
    /// No field: nvdisasm ignores the bit in this form.
    Ignored,
}

impl SpecBit {
    pub fn field(&self) -> Option<usize> {
        match self {
            SpecBit::Fixed { field, .. } | SpecBit::Field { field } => Some(*field),
            SpecBit::Ignored => None,
        }
    }
}

/// The spec's view of every bit of form index `form`.
pub fn spec_bits(spec: &Spec, form: usize) -> Vec<SpecBit> {
    let fs = &spec.forms[form];
    let mut out = vec![SpecBit::Ignored; 128];
    for &(fi, v) in &fs.fixed {
        let f = &spec.fields[fi];
        let word = f.set(0, v).unwrap_or(0);
        for (b, o) in out.iter_mut().enumerate() {
            if f.mask >> b & 1 == 1 {
                *o = SpecBit::Fixed { field: fi, value: word >> b & 1 == 1 };
            }
        }
    }
    for &fi in &fs.fields {
        for (b, o) in out.iter_mut().enumerate() {
            if spec.fields[fi].mask >> b & 1 == 1 {
                *o = SpecBit::Field { field: fi };
            }
        }
    }
    out
}

/// How the seed's claim about a bit compares with the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BitClass {
    /// Same fixed value, or a label that names the spec's field.
    Agrees,
    /// The seed claims something (a fixed value, a field) where the spec has no field.
    SeedOnly,
    /// The seed's fixed value, field or label differs from the spec's.
    Contradicted,
}

impl BitClass {
    pub fn name(self) -> &'static str {
        match self {
            BitClass::Agrees => "agrees",
            BitClass::SeedOnly => "seed-only",
            BitClass::Contradicted => "contradicted",
        }
    }
}

/// One bit of one form, both views side by side.
#[derive(Clone, Debug)]
pub struct BitComparison {
    pub bit: u8,
    pub spec: SpecBit,
    pub seed: SeedCell,
    pub class: BitClass,
    /// Ids of the errata that speak about this bit: its spec field, the field the seed names
    /// where the spec has none, or (an erratum naming no field) a bit of no field.
    pub errata: Vec<String>,
}

/// How the seed's claims over a whole spec field compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldClass {
    /// One seed label over exactly the field's bits.
    Agrees,
    /// Every bit agrees, but the seed groups them differently (one label over more bits, or
    /// several labels for one field).
    Regrouped,
    /// Some bit is contradicted.
    Contradicted,
}

impl FieldClass {
    pub fn name(self) -> &'static str {
        match self {
            FieldClass::Agrees => "agrees",
            FieldClass::Regrouped => "regrouped",
            FieldClass::Contradicted => "contradicted",
        }
    }
}

/// One form compared.
#[derive(Clone, Debug)]
pub struct FormComparison {
    pub key: String,
    /// Index into the spec's forms.
    pub form: usize,
    pub bits: Vec<BitComparison>,
}

impl FormComparison {
    /// The seed spans that overlap `field`, and the verdict over its bits.
    pub fn field_verdict(&self, spec: &Spec, field: usize) -> (FieldClass, Vec<SeedSpan>) {
        let f = &spec.fields[field];
        let mut spans: Vec<SeedSpan> = Vec::new();
        let mut covered: u128 = 0;
        let mut fixed_seen = false;
        let mut class = FieldClass::Agrees;
        for b in &self.bits {
            if f.mask >> b.bit & 1 == 0 {
                continue;
            }
            if b.class == BitClass::Contradicted {
                class = FieldClass::Contradicted;
            }
            match &b.seed {
                SeedCell::Field { label, lo, hi } => {
                    if !spans.iter().any(|s| s.lo == *lo) {
                        spans.push(SeedSpan { label: label.clone(), lo: *lo, hi: *hi });
                        for x in *lo..=*hi {
                            covered |= 1u128 << x;
                        }
                    }
                }
                SeedCell::Fixed(_) => fixed_seen = true,
            }
        }
        if class == FieldClass::Agrees && !fixed_seen {
            let labels: BTreeSet<&str> = spans.iter().map(|s| s.label.as_str()).collect();
            if labels.len() != 1 || covered != f.mask {
                class = FieldClass::Regrouped;
            }
        }
        (class, spans)
    }
}

/// Whether erratum `e` speaks about form `key`.
pub fn erratum_applies(e: &Erratum, key: &str) -> bool {
    e.forms.is_empty() || e.forms.iter().any(|k| k == key)
}

/// Compare every bit of every spec form with the seed page. A spec form the page lacks is an error.
pub fn compare(spec: &Spec, page: &SeedPage) -> Result<Vec<FormComparison>, String> {
    let mut out = Vec::new();
    for (fi, fs) in spec.forms.iter().enumerate() {
        let sf = page.form(&fs.key).ok_or_else(|| format!("the seed page has no form {}", fs.key))?;
        let sb = spec_bits(spec, fi);
        let mut bits = Vec::with_capacity(128);
        for (b, spec_bit) in sb.iter().enumerate() {
            let seed = sf.cells[b].clone();
            let class = match (spec_bit, &seed) {
                (SpecBit::Fixed { value, .. }, SeedCell::Fixed(v)) if v == value => BitClass::Agrees,
                (SpecBit::Field { field }, SeedCell::Field { label, .. }) if denotes(spec, label, *field) => BitClass::Agrees,
                (SpecBit::Ignored, _) => BitClass::SeedOnly,
                _ => BitClass::Contradicted,
            };
            let seed_fields: Vec<usize> = match &seed {
                SeedCell::Field { label, .. } => (0..spec.fields.len()).filter(|&i| denotes(spec, label, i)).collect(),
                SeedCell::Fixed(_) => Vec::new(),
            };
            let errata = spec
                .errata
                .iter()
                .filter(|e| erratum_applies(e, &fs.key))
                .filter(|e| {
                    // an erratum that names no field is about the bits of no field
                    (e.fields.is_empty() && *spec_bit == SpecBit::Ignored)
                        || e.fields.iter().any(|n| {
                            spec.try_index(n).is_some_and(|i| spec_bit.field() == Some(i) || (*spec_bit == SpecBit::Ignored && seed_fields.contains(&i)))
                        })
                })
                .map(|e| e.id.clone())
                .collect();
            bits.push(BitComparison { bit: b as u8, spec: spec_bit.clone(), seed, class, errata });
        }
        out.push(FormComparison { key: fs.key.clone(), form: fi, bits });
    }
    Ok(out)
}

/// Rows of the seed's "Operand N Modifiers" tables whose value name differs from the spec's
/// half-select field of that operand: `(form key, table title, binary, seed name, spec name)`.
pub fn table_disagreements(spec: &Spec, page: &SeedPage) -> Vec<(String, String, String, String, String)> {
    let mut out = Vec::new();
    for sf in &page.forms {
        for t in &sf.tables {
            let field = match t.title.split_whitespace().nth(1) {
                Some("1") => "a_swizzle",
                Some("2") => "b_swizzle",
                _ => continue,
            };
            let Some(fi) = spec.try_index(field) else { continue };
            for (bin, name) in &t.rows {
                let v = u32::from_str_radix(bin, 2).unwrap_or(u32::MAX);
                let spec_name = spec.fields[fi].value_name(v).unwrap_or("(none)");
                let seed_name = if name == "(default)" { "" } else { name.as_str() };
                if seed_name != spec_name {
                    out.push((sf.key.clone(), t.title.clone(), bin.clone(), name.clone(), spec_name.to_string()));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Op;
    use crate::spec::SEED_PAGE;
    fn spec() -> &'static crate::spec::Spec {
        Op::Hmul2.spec()
    }

    fn page() -> SeedPage {
        parse(SEED_PAGE).expect("committed seed page parses")
    }

    fn span_at(f: &SeedForm, bit: u8) -> (String, u8, u8) {
        match &f.cells[bit as usize] {
            SeedCell::Field { label, lo, hi } => (label.clone(), *lo, *hi),
            SeedCell::Fixed(v) => (format!("fixed {}", *v as u8), bit, bit),
        }
    }

    #[test]
    fn parses_five_forms_with_their_keys_and_text() {
        let p = page();
        let keys: Vec<&str> = p.forms.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["HMUL2_R_R_R", "HMUL2_R_R_F_F", "HMUL2_R_R_I_I", "HMUL2_R_R_UR_I", "HMUL2_R_R_UR"]);
        let c = p.form("HMUL2_R_R_I_I").unwrap();
        assert_eq!(c.syntax, "R,R,c[I][I]");
        assert_eq!(c.distilled, "@P0 HMUL2 R0, R0, c[0x0] [0x0];");
        assert_eq!(p.form("HMUL2_R_R_UR").unwrap().tables.len(), 2);
        assert_eq!(p.form("HMUL2_R_R_F_F").unwrap().tables[0].rows[2], ("10".to_string(), "H0_H0".to_string()));
    }

    #[test]
    fn seed_opcode_bits_match_the_spec_opcode() {
        let s = spec();
        let p = page();
        for sf in &p.forms {
            let mut v = 0u32;
            for b in 0..9 {
                match sf.cells[b] {
                    SeedCell::Fixed(x) => v |= (x as u32) << b,
                    _ => panic!("{}: bit {b} is not fixed on the seed page", sf.key),
                }
            }
            assert_eq!(v, s.forms[0].fixed.iter().find(|(i, _)| s.fields[*i].name == "opcode").unwrap().1);
        }
    }

    #[test]
    fn const_form_operand_3_is_40_to_52_where_the_spec_has_cb_offset_40_to_53() {
        let p = page();
        let c = p.form("HMUL2_R_R_I_I").unwrap();
        assert_eq!(span_at(c, 40), ("operand 3".into(), 40, 52));
        assert_eq!(span_at(c, 53), ("operand 2".into(), 53, 53));
        assert_eq!(span_at(c, 54), ("operand 3".into(), 54, 54));
        assert_eq!(span_at(c, 58), ("operand 2".into(), 55, 58));
        let s = spec();
        let cmp = compare(s, &p).unwrap();
        let fc = &cmp[2];
        assert_eq!(fc.key, "HMUL2_R_R_I_I");
        assert_eq!(fc.bits[40].class, BitClass::Agrees);
        assert_eq!(fc.bits[52].class, BitClass::Agrees);
        assert_eq!(fc.bits[53].spec, SpecBit::Field { field: s.index("cb_offset") });
        assert_eq!(fc.bits[53].class, BitClass::Contradicted);
        assert_eq!(fc.bits[54].class, BitClass::Contradicted, "seed: operand 3, spec: cb_bank");
        let (class, spans) = fc.field_verdict(s, s.index("cb_offset"));
        assert_eq!(class, FieldClass::Contradicted);
        assert_eq!(spans.iter().map(|x| (x.label.as_str(), x.lo, x.hi)).collect::<Vec<_>>(), [("operand 3", 40, 52), ("operand 2", 53, 53)]);
        // the seed says bits 59..63 are fixed 0; the spec has b_swizzle, b_abs, b_neg there
        for b in 60..64 {
            assert_eq!(fc.bits[b].seed, SeedCell::Fixed(false));
            assert_eq!(fc.bits[b].class, BitClass::Contradicted, "bit {b}");
        }
    }

    #[test]
    fn fmz_and_ftz_are_one_two_bit_field_flush() {
        let s = spec();
        let p = page();
        let cmp = compare(s, &p).unwrap();
        for fc in &cmp {
            let sf = p.form(&fc.key).unwrap();
            assert_eq!(span_at(sf, 76), ("FMZ".into(), 76, 76));
            assert_eq!(span_at(sf, 80), ("FTZ".into(), 80, 80));
            assert_eq!(fc.bits[76].class, BitClass::Agrees);
            assert_eq!(fc.bits[80].class, BitClass::Agrees);
            let (class, spans) = fc.field_verdict(s, s.index("flush"));
            assert_eq!(class, FieldClass::Regrouped, "{}", fc.key);
            assert_eq!(spans.len(), 2);
        }
    }

    #[test]
    fn barriers_are_swapped_on_the_seed_page() {
        let s = spec();
        let p = page();
        let cmp = compare(s, &p).unwrap();
        for fc in &cmp {
            let sf = p.form(&fc.key).unwrap();
            assert_eq!(span_at(sf, 110), ("r-bar".into(), 110, 112));
            assert_eq!(span_at(sf, 113), ("w-bar".into(), 113, 115));
            for b in 110..116 {
                assert_eq!(fc.bits[b].class, BitClass::Contradicted, "{} bit {b}", fc.key);
            }
            assert_eq!(fc.bits[109].class, BitClass::Agrees, "y is yield");
            assert_eq!(fc.field_verdict(s, s.index("stall")).0, FieldClass::Agrees);
            assert_eq!(fc.field_verdict(s, s.index("wait")).0, FieldClass::Agrees);
        }
    }

    #[test]
    fn truncated_row_runs_to_bit_63_and_seed_only_bits_are_found() {
        let s = spec();
        let p = page();
        let imm = p.form("HMUL2_R_R_F_F").unwrap();
        assert_eq!(span_at(imm, 63), ("operand 2".into(), 48, 63));
        assert_eq!(span_at(imm, 32), ("operand 3".into(), 32, 47));
        let cmp = compare(s, &p).unwrap();
        assert_eq!(cmp[1].field_verdict(s, s.index("imm_hi")).0, FieldClass::Agrees);
        assert_eq!(cmp[1].field_verdict(s, s.index("imm_lo")).0, FieldClass::Agrees);
        // reuse is 4 cells on the seed page, 3 bits in the spec: bit 125 is the seed's alone
        assert_eq!(cmp[0].bits[125].class, BitClass::SeedOnly);
        assert_eq!(cmp[0].field_verdict(s, s.index("reuse")).0, FieldClass::Regrouped);
        // the seed's 0s where the R,R,R form has no field
        assert_eq!(cmp[0].bits[45].class, BitClass::SeedOnly);
        // the ureg flag: 0 in R,R,R, 1 in R,R,UR, on both sides
        assert_eq!(cmp[0].bits[91].class, BitClass::Agrees);
        assert_eq!(cmp[4].bits[91].seed, SeedCell::Fixed(true));
        assert_eq!(cmp[4].bits[91].class, BitClass::Agrees);
    }

    #[test]
    fn value_tables_agree_with_the_spec() {
        assert_eq!(table_disagreements(spec(), &page()), Vec::<(String, String, String, String, String)>::new());
    }

    #[test]
    fn errata_cover_bits_of_their_fields() {
        // a spec with exactly one erratum (the r-bar/w-bar swap), whatever the committed errata are
        let mut v: serde_json::Value = serde_json::from_str(Op::Hmul2.spec_json()).unwrap();
        v["errata"] = serde_json::json!([{"id": "E-bars", "forms": ["HMUL2_R_R_UR"], "fields": ["wr_bar", "rd_bar", "reuse"],
            "seed": "r-bar 110, w-bar 113", "nvdisasm": "swapped", "words": []}]);
        let text = v.to_string();
        let s = crate::spec::compile(&text).expect("spec with errata compiles");
        let cmp = compare(&s, &page()).unwrap();
        assert_eq!(cmp[4].bits[110].errata, ["E-bars"]);
        assert_eq!(cmp[4].bits[125].errata, ["E-bars"], "ignored bit the seed calls reuse");
        assert!(cmp[0].bits[110].errata.is_empty(), "other forms are not covered");
        assert!(cmp[4].bits[109].errata.is_empty());
    }

    #[test]
    fn malformed_pages_are_errors_not_panics() {
        assert!(parse("").is_err());
        assert!(parse("key: X\n1\t2\n").is_err());
        let idx: Vec<String> = (0..64).map(|i| (i % 8).to_string()).collect();
        let idx = idx.join("\t");
        let bad = format!("key: X\n{idx}\n\tpred\n{idx}\n0\n");
        let e = parse(&bad).unwrap_err();
        assert!(e.message.contains("empty cell"), "{e}");
        let long = vec!["0"; 65].join("\t");
        assert!(parse(&format!("key: X\n{idx}\n{long}\n{idx}\n0\n")).is_err());
    }
}
