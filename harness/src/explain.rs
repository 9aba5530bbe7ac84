//! `hmul2-harness explain HEX`: one instruction word laid out as the seed page lays out a
//! form (128 bits in two rows of 64), every field named with its value and meaning, so a
//! person can check a word against the spec by eye.

use crate::cli::{CliError, CliResult};
use crate::isa::decode::op_of_for;
use crate::isa::floattext::{imm_text, Half};
use crate::isa::{parse_hex, Form, Illegal, Op, PT, RZ, URZ};
use crate::spec::{Field, FormSpec, Spec};
use crate::target::Target;
use clap::Args;
use std::fmt::Write;
use std::process::ExitCode;

/// One field of the explained word.
#[derive(Clone, Debug)]
pub struct FieldLine {
    /// Index into the spec's fields.
    pub field: usize,
    /// The one-character key used in the layout rows.
    pub key: char,
    /// `40..53`, or `76,80` for split fields.
    pub bits: String,
    pub value: u32,
    /// The value as nvdisasm would spell it, or what it selects.
    pub meaning: String,
    /// A field with a required value in this form (opcode, form selector).
    pub fixed: bool,
    /// The field whose value breaks the word's legality.
    pub at_fault: bool,
}

/// Everything `explain` shows about a word.
#[derive(Clone, Debug)]
pub struct Explanation {
    pub word: u128,
    pub form: Option<Form>,
    /// The instruction the opcode names, if any.
    pub op: Option<Op>,
    pub decoded: Result<String, Illegal>,
    pub fields: Vec<FieldLine>,
    /// For each bit, the index into `fields` of the field that holds it (None: no field).
    pub owner: Vec<Option<usize>>,
    /// The architecture the word was read as.
    pub target: &'static Target,
}

impl Explanation {
    /// The spec the fields are read by: the instruction's on the target, or (no instruction
    /// of the target's) SM90's first, whose opcode field sits where every spec has it.
    fn spec(&self) -> &'static Spec {
        self.op.and_then(|o| o.spec_for(self.target)).unwrap_or_else(|| Op::ALL[0].spec())
    }
}

fn bits_text(f: &Field) -> String {
    f.segments.iter().map(|&(lo, hi)| if lo == hi { format!("{lo}") } else { format!("{lo}..{hi}") }).collect::<Vec<_>>().join(",")
}

fn sext(v: u32, width: u32) -> i64 {
    let shift = 64 - width as i64;
    ((v as i64) << shift) >> shift
}

/// What value `v` of field `fi` means in form `form` of word `word`.
fn meaning(s: &Spec, fi: usize, v: u32, form: Option<&FormSpec>, word: u128) -> String {
    let f = &s.fields[fi];
    if let Some(name) = f.value_name(v) {
        return if name.is_empty() { "(default)".into() } else { name.to_string() };
    }
    match f.kind.as_str() {
        "pred" if v == PT as u32 => "PT".into(),
        "pred" => format!("P{v}"),
        "flag" => if v == 1 { "yes" } else { "no" }.into(),
        "reg" if v == RZ as u32 => "RZ".into(),
        "reg" => format!("R{v}"),
        // URZ is the field's largest value (63, or 255 where it has 8 bits)
        "ureg" if v == URZ as u32 && f.max() == URZ as u32 || v == f.max() && f.max() > URZ as u32 => "URZ".into(),
        "ureg" => format!("UR{v}"),
        "bank" => format!("c[{v:#x}]"),
        "offset" => {
            let signed = form.is_some_and(|fm| fm.signed.contains(&fi));
            let bytes = if signed { sext(v, f.width) } else { v as i64 } * f.scale as i64;
            if bytes < 0 {
                format!("byte offset -{:#x}", -bytes)
            } else {
                format!("byte offset {bytes:#x}")
            }
        }
        "imm16" => {
            let bf16 = s.try_index("format").is_some_and(|i| s.fields[i].value_name(s.fields[i].get(word)) == Some("BF16_V2"));
            let h = if bf16 { Half::Bf16 } else { Half::F16 };
            format!("{} ({})", imm_text(h, v as u16).trim_end(), if bf16 { "BF16" } else { "FP16" })
        }
        _ => {
            if f.name == "opcode" {
                return Op::from_opcode(v).map_or_else(|| "not an instruction of the family".into(), |o| o.mnemonic().into());
            }
            if f.kind == "control" {
                let doc = f.doc.trim_start_matches("Control: ");
                let first = doc.split(['.', ';']).next().unwrap_or(doc);
                return format!("{v}: {first}");
            }
            format!("{v}")
        }
    }
}

const KEYS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Explain one word (as SM90 reads it).
pub fn explain(word: u128) -> Explanation {
    explain_for(Target::DEFAULT, word)
}

/// Explain one word as `target` reads it.
pub fn explain_for(target: &'static Target, word: u128) -> Explanation {
    let found = op_of_for(target, word).ok();
    let op = found.map(|(o, _)| o);
    // an unknown opcode is explained by the first spec: the opcode field sits at the same bits in all
    let s = found.map_or_else(|| Op::ALL[0].spec(), |(_, l)| l.spec);
    let form = found.and_then(|(_, l)| {
        let (of, uf) = (l.operand_form.get(word), l.ureg_flag.get(word));
        l.form_by_selector.get((of as usize) << l.ureg_flag.width | uf as usize).copied().flatten().map(|k| l.form_kind[k])
    });
    let fspec = form.zip(found).and_then(|(f, (_, l))| l.form_index[f as usize].map(|k| &l.spec.forms[k]));
    let decoded = crate::isa::decode_for(target, word).map(|i| crate::isa::render_for(target, &i).unwrap_or_default());
    // fields as far as the form is known: all of the form's, or (no form) the opcode and the
    // selector fields, plus the fields every form of the opcode's instruction shares
    let mut idx: Vec<(usize, bool)> = Vec::new();
    match fspec {
        Some(fm) => {
            idx.extend(fm.fixed.iter().map(|&(i, _)| (i, true)));
            idx.extend(fm.fields.iter().map(|&i| (i, false)));
        }
        None => {
            let opcode = s.try_index("opcode");
            idx.extend(opcode.map(|i| (i, false)));
            if !decoded.as_ref().is_err_and(Illegal::is_other_instruction) {
                let mut sel: Vec<usize> = s.forms.iter().flat_map(|f| f.fixed.iter().map(|&(i, _)| i)).filter(|&i| Some(i) != opcode).collect();
                sel.sort();
                sel.dedup();
                idx.extend(sel.into_iter().map(|i| (i, false)));
                // fields of every form
                let common: Vec<usize> = s.forms[0].fields.iter().copied().filter(|i| s.forms.iter().all(|f| f.fields.contains(i))).collect();
                idx.extend(common.into_iter().map(|i| (i, false)));
            }
        }
    }
    idx.sort_by_key(|&(i, _)| s.fields[i].segments[0].0);
    let fault_field = match &decoded {
        Err(Illegal::Constraint { field, .. }) => s.try_index(field),
        _ => None,
    };
    let mut fields = Vec::new();
    let mut owner = vec![None; 128];
    for (n, &(fi, fixed)) in idx.iter().enumerate() {
        let f = &s.fields[fi];
        let v = f.get(word);
        let key = KEYS.chars().nth(n).unwrap_or('?');
        for (b, o) in owner.iter_mut().enumerate() {
            if f.mask >> b & 1 == 1 {
                *o = Some(n);
            }
        }
        let m = if fixed {
            format!("{} (selects {})", meaning(s, fi, v, fspec, word), fspec.map(|f| f.syntax.as_str()).unwrap_or(""))
        } else {
            meaning(s, fi, v, fspec, word)
        };
        let m = if f.name == "opcode" { meaning(s, fi, v, fspec, word) } else { m };
        fields.push(FieldLine { field: fi, key, bits: bits_text(f), value: v, meaning: m, fixed, at_fault: Some(fi) == fault_field });
    }
    Explanation { word, form, op, decoded, fields, owner, target }
}

const PALETTE: [&str; 6] = ["36", "33", "32", "35", "34", "96"];

fn paint(color: bool, code: &str, text: &str) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

impl Explanation {
    /// The terminal layout; ANSI colours when `color`.
    pub fn to_text(&self, color: bool) -> String {
        let s = self.spec();
        let mut out = String::new();
        let form_text = match (self.op, self.form) {
            // the spec's syntax: a three-source form's (R,R,F,F,R) is not its kind's (R,R,F,F)
            (Some(o), Some(f)) => format!("{} ({})", o.form_key(f), o.form_spec(f).map_or(f.syntax(), |fs| fs.syntax.as_str())),
            (Some(o), None) => format!("no {o} form"),
            (None, _) => "not an instruction of the family".to_string(),
        };
        let _ = writeln!(out, "{}  {}", crate::isa::format_hex(self.word), paint(color, "1", &form_text));
        let code = |n: usize| -> &str {
            if self.fields[n].at_fault {
                "1;31"
            } else {
                PALETTE[n % PALETTE.len()]
            }
        };
        for row in 0..2u32 {
            let base = row * 64;
            let _ = writeln!(out, "\nbits {}..{}", base, base + 63);
            let mut tens = String::from("       ");
            let mut units = String::from("       ");
            // the bit number at every tenth column (and at the row's first), digits spilling right
            let mut j = 0u32;
            while j < 64 {
                let b = base + j;
                if b.is_multiple_of(10) || j == 0 {
                    let n = b.to_string();
                    let room = (64 - j) as usize;
                    tens.push_str(&n[..n.len().min(room)]);
                    j += n.len() as u32;
                } else {
                    tens.push(' ');
                    j += 1;
                }
            }
            let mut vals = String::from("value  ");
            let mut names = String::from("field  ");
            for j in 0..64u32 {
                let b = base + j;
                units.push(char::from_digit(b % 10, 10).unwrap_or(' '));
            }
            // the field row: a field's name where its segment is long enough, else its key letter
            let mut j = 0u32;
            while j < 64 {
                let b = (base + j) as usize;
                let bit = if self.word >> b & 1 == 1 { "1" } else { "0" };
                match self.owner[b] {
                    None => {
                        vals.push_str(&paint(color, "2", bit));
                        names.push_str(&paint(color, "2", "."));
                        j += 1;
                    }
                    Some(n) => {
                        let mut k = j;
                        while k < 64 && self.owner[(base + k) as usize] == Some(n) {
                            k += 1;
                        }
                        let w = (k - j) as usize;
                        let name = &s.fields[self.fields[n].field].name;
                        let label = if name.len() <= w {
                            format!("{name}{}", "-".repeat(w - name.len()))
                        } else {
                            format!("{}{}", self.fields[n].key, "-".repeat(w - 1))
                        };
                        let bits: String = (j..k).map(|x| if self.word >> (base + x) & 1 == 1 { '1' } else { '0' }).collect();
                        vals.push_str(&paint(color, code(n), &bits));
                        names.push_str(&paint(color, code(n), &label));
                        j = k;
                    }
                }
            }
            let _ = writeln!(out, "{tens}\n{units}\n{vals}\n{names}");
        }
        let _ = writeln!(out, "\nkey  bits        field          value           meaning");
        for (n, fl) in self.fields.iter().enumerate() {
            let f = &s.fields[fl.field];
            let value = if f.width > 4 { format!("{} ({:#x})", fl.value, fl.value) } else { format!("{}", fl.value) };
            let mut line = format!("{}    {:<11} {:<14} {:<15} {}", fl.key, fl.bits, f.name, value, fl.meaning);
            if fl.at_fault {
                line.push_str("   <- breaks the rule below");
            }
            let _ = writeln!(out, "{}", paint(color, code(n), &line));
        }
        let _ = writeln!(out);
        match &self.decoded {
            Ok(t) => {
                let _ = writeln!(out, "{}", paint(color, "1", t));
            }
            Err(e) => {
                let _ = writeln!(out, "{}", paint(color, "1;31", &format!("illegal ({}): {e}", e.kind())));
                if let Illegal::Constraint { rule, .. } = e {
                    if let Some(c) = s.constraints.iter().find(|c| &c.id == rule) {
                        let _ = writeln!(out, "rule {}: {}", c.id, c.doc);
                    }
                }
            }
        }
        out
    }
}

#[derive(Args)]
pub struct ExplainArgs {
    /// One instruction word: 0x + 32 hex digits, high 64 bits first.
    pub hex: String,
    /// One JSON object: the word, its text (or why it is illegal) and every field with its
    /// bits, value and meaning.
    #[arg(long)]
    pub json: bool,
    /// The architecture to read the word as: nvdisasm's spelling (SM86) or ptxas's (sm_86).
    #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE, default_value = "SM90")]
    pub arch: &'static Target,
}

impl Explanation {
    /// The explanation as one JSON object (`explain --json`).
    pub fn to_json(&self) -> serde_json::Value {
        let s = self.spec();
        serde_json::json!({
            "encoding": crate::isa::format_hex(self.word),
            "instruction": self.op.map(|o| o.mnemonic()),
            "form": self.form.map(|f| f.cli_name()),
            "form_key": self.op.zip(self.form).map(|(o, f)| o.form_key(f)),
            "text": self.decoded.as_ref().ok(),
            "illegal": self.decoded.as_ref().err().map(|e| e.to_string()),
            "fields": self.fields.iter().map(|f| serde_json::json!({
                "field": s.fields[f.field].name,
                "bits": f.bits,
                "value": f.value,
                "meaning": f.meaning,
                "fixed": f.fixed,
                "at_fault": f.at_fault,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org).
fn use_color() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

pub fn run(a: ExplainArgs) -> CliResult {
    let word = parse_hex(&a.hex).map_err(|e| CliError::input(e.to_string()))?;
    let e = explain_for(a.arch, word);
    if a.json {
        crate::outln!("{}", e.to_json())?;
    } else {
        crate::out!("{}", e.to_text(use_color()))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::decode::form_of;
    use crate::isa::{decode, render};

    fn spec() -> &'static Spec {
        Op::Hmul2.spec()
    }
    use crate::isa::{encode, Inst, Operand2};

    #[test]
    fn names_every_field_of_a_const_word() {
        let mut i = Inst::new(12, 255, Operand2::Const { bank: 3, offset: -4 });
        i.b_mods.neg = true;
        let w = encode(&i).unwrap();
        let e = explain(w);
        assert_eq!(e.form, Some(Form::Const));
        let get = |n: &str| e.fields.iter().find(|f| spec().fields[f.field].name == n).unwrap_or_else(|| panic!("no {n}"));
        assert_eq!(get("dst").meaning, "R12");
        assert_eq!(get("a").meaning, "RZ");
        assert_eq!(get("cb_bank").meaning, "c[0x3]");
        assert_eq!(get("cb_offset").meaning, "byte offset -0x4");
        assert_eq!(get("b_neg").meaning, "yes");
        assert_eq!(get("pred").meaning, "PT");
        assert_eq!(get("flush").bits, "76,80");
        assert!(get("operand_form").fixed);
        let t = e.to_text(false);
        assert!(t.contains("HMUL2 R12, RZ, -c[0x3] [-0x4]"), "{t}");
        assert!(!t.contains('\x1b'));
        assert!(t.contains("bits 0..63") && t.contains("bits 64..127"));
        // every bit of every field is drawn: 128 bit values in two rows
        let vals: Vec<&str> = t.lines().filter(|l| l.starts_with("value  ")).collect();
        assert_eq!(vals.len(), 2);
        let bits: String = vals.iter().map(|l| &l[7..]).collect();
        let expect: String = (0..128).map(|b| if w >> b & 1 == 1 { '1' } else { '0' }).collect();
        assert_eq!(bits, expect);
        assert!(e.to_text(true).contains("\x1b["));
    }

    /// Every form of every instruction: the instruction, the spec's form key and syntax, every
    /// field of the form with a meaning, and the text `decode` gives.
    #[test]
    fn every_form_of_every_instruction_is_explained() {
        for op in Op::ALL {
            let s = op.spec();
            for form in op.forms() {
                let fs = op.form_spec(form).unwrap();
                let w = crate::gen::one_field_at_a_time(op)
                    .into_iter()
                    .find(|&w| form_of(w) == Ok((op, form)) && decode(w).is_ok())
                    .unwrap_or_else(|| panic!("a legal word of {}", fs.key));
                let e = explain(w);
                assert_eq!((e.op, e.form), (Some(op), Some(form)), "{}", fs.key);
                let t = e.to_text(false);
                assert!(t.lines().next().unwrap().ends_with(&format!("{} ({})", fs.key, fs.syntax)), "{}: {t}", fs.key);
                assert!(t.contains(&render(&decode(w).unwrap())), "{}", fs.key);
                let mut want: Vec<usize> = fs.fixed.iter().map(|&(i, _)| i).chain(fs.fields.iter().copied()).collect();
                let mut got: Vec<usize> = e.fields.iter().map(|f| f.field).collect();
                want.sort();
                got.sort();
                assert_eq!(got, want, "{}: every field of the form, no other", fs.key);
                assert!(e.fields.iter().all(|f| !f.meaning.is_empty()), "{}", fs.key);
                let opcode = e.fields.iter().find(|f| s.fields[f.field].name == "opcode").unwrap();
                assert_eq!(opcode.meaning, op.mnemonic());
                let j = e.to_json();
                assert_eq!((j["instruction"].as_str(), j["form_key"].as_str()), (Some(op.mnemonic()), Some(fs.key.as_str())));
            }
        }
    }

    #[test]
    fn imm_form_spells_immediates() {
        let w = encode(&Inst::new(0, 1, Operand2::Imm { first: 0x3c00, second: 0x7c00 })).unwrap();
        let e = explain(w);
        let get = |n: &str| e.fields.iter().find(|f| spec().fields[f.field].name == n).unwrap();
        assert_eq!(get("imm_hi").meaning, "1 (FP16)");
        assert_eq!(get("imm_lo").meaning, "+INF (FP16)");
    }

    #[test]
    fn illegal_words_show_the_reason_and_the_known_fields() {
        let w = encode(&Inst::new(0, 1, Operand2::Reg(2))).unwrap();
        let bad_rule = w | 1u128 << 124 | 1u128 << 109; // yield with the third-source reuse flag
        let e = explain(bad_rule);
        assert!(matches!(e.decoded, Err(Illegal::Constraint { .. })));
        assert!(e.fields.iter().any(|f| f.at_fault && spec().fields[f.field].name != "opcode"));
        assert!(e.to_text(false).contains("illegal ("));
        // unknown form: opcode and common fields, no operand-2 field
        let no_form = w & !(7u128 << 9);
        let e = explain(no_form);
        assert_eq!(e.form, None);
        let names: Vec<&str> = e.fields.iter().map(|f| spec().fields[f.field].name.as_str()).collect();
        assert!(names.contains(&"opcode") && names.contains(&"dst") && names.contains(&"operand_form"));
        assert!(!names.contains(&"b_reg"));
        assert!(e.to_text(false).contains("illegal (unknown-form)"));
        // not HMUL2 at all: the opcode alone
        let e = explain(w & !0x1ff | 0x37);
        assert_eq!(e.fields.len(), 1);
        assert!(e.to_text(false).contains("not an instruction of the family"));
    }
}
