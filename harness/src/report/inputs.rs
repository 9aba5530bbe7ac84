//! The report's inputs, read tolerantly: a missing key takes its default, a present key of
//! the wrong type is an error, and every error is one line that names the file.

use crate::isa::parse_hex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A report input that cannot be read; printed as one line naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct InputError {
    pub path: String,
    pub message: String,
}

fn err(path: &Path, message: impl Into<String>) -> InputError {
    InputError { path: path.display().to_string(), message: message.into() }
}

fn read_json(path: &Path) -> Result<Value, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| err(path, e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| err(path, format!("not JSON: {e}")))
}

/// A string-ish value: missing and null are "", numbers and booleans their text.
fn text_of(v: Option<&Value>, key: &str, path: &Path) -> Result<String, InputError> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(other) => Err(err(path, format!("{key}: expected a string, found {}", kind(other)))),
    }
}

fn u64_of(v: Option<&Value>, key: &str, path: &Path) -> Result<u64, InputError> {
    match v {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(|| err(path, format!("{key}: expected a count, found {n}"))),
        Some(other) => Err(err(path, format!("{key}: expected a count, found {}", kind(other)))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Any JSON value as one line of text (lists joined, objects compact).
fn display(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a.iter().map(|x| display(Some(x))).collect::<Vec<_>>().join("; "),
        Some(other) => other.to_string(),
    }
}

/// Field-value coverage, read as `gen::Coverage` writes it (missing keys take defaults;
/// files without `fields_by_form` credit a shared field to no form in particular).
pub use crate::gen::{Coverage as CoverageIn, FieldCoverage as FieldCov};

fn coverage_of(v: Option<&Value>, key: &str, path: &Path) -> Result<Option<CoverageIn>, InputError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| err(path, format!("{key}: {e}"))),
    }
}

/// One oracle mismatch.
#[derive(Clone, Debug)]
pub struct OracleMismatch {
    pub word: String,
    pub ours: String,
    pub nvdisasm: String,
}

/// `hmul2-harness oracle --json FILE`.
#[derive(Clone, Debug)]
pub struct OracleFile {
    pub path: String,
    pub seed: String,
    pub words: u64,
    pub agreed_text: u64,
    pub agreed_illegal: u64,
    pub mismatches: Vec<OracleMismatch>,
    pub coverage: Option<CoverageIn>,
}

pub fn read_oracle(path: &Path) -> Result<OracleFile, InputError> {
    let v = read_json(path)?;
    let o = v.as_object().ok_or_else(|| err(path, format!("expected an object, found {}", kind(&v))))?;
    let empty = serde_json::Map::new();
    let r = match o.get("report") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => return Err(err(path, format!("report: expected an object, found {}", kind(other)))),
    };
    let mut mismatches = Vec::new();
    match r.get("mismatches") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => {
            for (i, m) in a.iter().enumerate() {
                let k = format!("report.mismatches[{i}]");
                let m = m.as_object().ok_or_else(|| err(path, format!("{k}: expected an object")))?;
                mismatches.push(OracleMismatch {
                    word: text_of(m.get("word"), &k, path)?,
                    ours: text_of(m.get("ours"), &k, path)?,
                    nvdisasm: text_of(m.get("nvdisasm"), &k, path)?,
                });
            }
        }
        Some(other) => return Err(err(path, format!("report.mismatches: expected a list, found {}", kind(other)))),
    }
    Ok(OracleFile {
        path: path.display().to_string(),
        seed: text_of(o.get("seed"), "seed", path)?,
        words: u64_of(r.get("words"), "report.words", path)?,
        agreed_text: u64_of(r.get("agreed_text"), "report.agreed_text", path)?,
        agreed_illegal: u64_of(r.get("agreed_illegal"), "report.agreed_illegal", path)?,
        mismatches,
        coverage: coverage_of(o.get("coverage"), "coverage", path)?,
    })
}

/// One test vector (a JSON Lines line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    pub file: String,
    pub line: usize,
    pub encoding: String,
    pub word: u128,
    pub a: String,
    pub b: String,
    pub d: String,
    pub pred: String,
    pub expect: String,
    pub origin: String,
}

impl Vector {
    /// `hardware:<GPU>:<driver>:<date>` vectors were measured on a GPU.
    pub fn is_hardware(&self) -> bool {
        self.origin.starts_with("hardware:")
    }

    /// The report's view of a vector as `vectors` parses it (the one reader of vector lines).
    fn of(v: &crate::vectors::Vector, file: &str, line: usize) -> Vector {
        Vector {
            file: file.to_string(),
            line,
            encoding: format!("{:#034x}", v.encoding),
            word: v.encoding,
            a: format!("{:#010x}", v.inputs.a),
            b: format!("{:#010x}", v.inputs.b),
            d: format!("{:#010x}", v.inputs.d),
            pred: format!("{:#04x}", v.inputs.pred),
            expect: v.expect.map(|e| format!("{e:#010x}")).unwrap_or_else(|| "none".into()),
            origin: v.origin.clone(),
        }
    }
}

/// A vector from a JSON object (a vector line, or a semantics entry's evidence).
pub fn vector_of(v: &Value, file: &str, line: usize) -> Result<Vector, String> {
    let parsed = crate::vectors::parse_line(&v.to_string()).map_err(|e| e.to_string())?;
    Ok(Vector::of(&parsed, file, line))
}

/// Vectors of a `.jsonl` file, or of every `.jsonl` file under a folder (sorted, recursive),
/// read as `verify` reads them; the first malformed line is the error.
pub fn read_vectors(path: &Path) -> Result<Vec<Vector>, InputError> {
    let lines = crate::vectors::read_paths(&[path]).map_err(|e| InputError { path: e.path, message: e.source.to_string() })?;
    let mut out = Vec::new();
    for l in lines {
        let v = l.item.as_ref().map_err(|e| InputError { path: l.at(), message: e.to_string() })?;
        out.push(Vector::of(v, &l.file.display().to_string(), l.line));
    }
    if out.is_empty() {
        // asked for evidence and given none: said, not drawn as a page without it
        return Err(err(path, "no vectors (no non-empty line in any .jsonl file)"));
    }
    Ok(out)
}

/// One assumption about HMUL2's semantics (`harness/spec/semantics.json`).
#[derive(Clone, Debug)]
pub struct Assumption {
    pub id: String,
    pub topic: String,
    pub assumption: String,
    pub alternatives: String,
    /// The table's own type (`reference::policy::Status`), not a second spelling of it.
    pub status: crate::reference::policy::Status,
    /// The confirming vector line, as given.
    pub evidence: String,
    /// The confirming vector, when the evidence parses as one.
    pub evidence_vector: Option<Vector>,
    /// Evidence from outside the hardware (compilers, documents): its source, what it says,
    /// and whether it supports the assumption (else another option).
    pub outside: Vec<OutsideEvidence>,
}

/// One `outside` record of a semantics entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutsideEvidence {
    pub source: String,
    pub says: String,
    pub for_assumption: bool,
}

type JsonObject = serde_json::Map<String, Value>;

/// A list of objects under `key`, each with its name for messages (`key[i]`): missing and
/// null are empty, anything else not a list of objects is an error naming it.
fn objects_of<'v>(v: Option<&'v Value>, key: &str, path: &Path) -> Result<Vec<(String, &'v JsonObject)>, InputError> {
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(l)) => l,
        Some(other) => return Err(err(path, format!("{key}: expected a list, found {}", kind(other)))),
    };
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            let k = format!("{key}[{i}]");
            let o = e.as_object().ok_or_else(|| err(path, format!("{k}: expected an object, found {}", kind(e))))?;
            Ok((k, o))
        })
        .collect()
}

fn outside_of(v: Option<&Value>, key: &str, assumption: &str, path: &Path) -> Result<Vec<OutsideEvidence>, InputError> {
    let mut out = Vec::new();
    for (k, o) in objects_of(v, key, path)? {
        out.push(OutsideEvidence {
            source: text_of(o.get("source"), &format!("{k}.source"), path)?,
            says: text_of(o.get("says"), &format!("{k}.says"), path)?,
            for_assumption: text_of(o.get("supports"), &format!("{k}.supports"), path)? == assumption,
        });
    }
    Ok(out)
}

pub fn read_semantics(path: &Path) -> Result<Vec<Assumption>, InputError> {
    let v = read_json(path)?;
    let list = v.as_array().ok_or_else(|| err(path, format!("expected a list of assumptions, found {}", kind(&v))))?;
    let mut out = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let k = format!("[{i}]");
        let o = e.as_object().ok_or_else(|| err(path, format!("{k}: expected an object")))?;
        let ev = o.get("evidence");
        // the evidence is a vector line: a JSON object, or its text
        let parsed = match ev {
            Some(Value::Object(_)) => ev.cloned(),
            Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
            _ => None,
        };
        let evidence_vector = parsed.and_then(|p| vector_of(&p, &path.display().to_string(), 0).ok());
        let assumption = display(o.get("assumption"));
        out.push(Assumption {
            id: text_of(o.get("id"), &format!("{k}.id"), path)?,
            topic: text_of(o.get("topic"), &format!("{k}.topic"), path)?,
            outside: outside_of(o.get("outside"), &format!("{k}.outside"), &assumption, path)?,
            assumption,
            alternatives: display(o.get("alternatives")),
            status: serde_json::from_value(o.get("status").cloned().unwrap_or_default())
                .map_err(|_| err(path, format!("{k}.status: {} is not \"assumed\" or \"hardware-confirmed\"", display(o.get("status")))))?,
            evidence: match ev {
                Some(Value::Object(_)) => ev.map(|x| x.to_string()).unwrap_or_default(),
                other => display(other),
            },
            evidence_vector,
        });
    }
    Ok(out)
}

/// Totals of a run or of one form in it.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub instructions: u64,
    pub inputs: u64,
    pub compared: u64,
    pub mismatches: u64,
    pub faults: u64,
    pub undefined: u64,
}

fn totals_of(v: Option<&Value>, key: &str, path: &Path) -> Result<Totals, InputError> {
    let o = match v {
        None | Some(Value::Null) => return Ok(Totals::default()),
        Some(Value::Object(o)) => o,
        Some(other) => return Err(err(path, format!("{key}: expected an object, found {}", kind(other)))),
    };
    let g = |k: &str| u64_of(o.get(k), &format!("{key}.{k}"), path);
    Ok(Totals {
        instructions: g("instructions")?,
        inputs: g("inputs")?,
        compared: g("compared")?,
        mismatches: g("mismatches")?,
        faults: g("faults")?,
        undefined: g("undefined")?,
    })
}

/// A mismatch or a fault of a run.
#[derive(Clone, Debug, Default)]
pub struct Finding {
    pub kind: String,
    pub encoding: String,
    pub text: String,
    pub minimized: String,
    pub minimized_text: String,
    /// a, b, d, pred (empty when the finding has no inputs).
    pub inputs: Vec<(String, String)>,
    pub expected: String,
    pub got: String,
    pub detail: String,
}

impl Finding {
    /// The word the finding is about: the minimized one when there is one.
    pub fn word(&self) -> Option<u128> {
        parse_hex(&self.minimized).or_else(|_| parse_hex(&self.encoding)).ok()
    }
}

fn findings_of(v: Option<&Value>, key: &str, default_kind: &str, path: &Path) -> Result<Vec<Finding>, InputError> {
    let mut out = Vec::new();
    for (k, o) in objects_of(v, key, path)? {
        let t = |x: &str| text_of(o.get(x), &format!("{k}.{x}"), path);
        let inputs = match o.get("inputs") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(m)) => ["a", "b", "d", "pred"]
                .iter()
                .map(|n| Ok((n.to_string(), text_of(m.get(*n), &format!("{k}.inputs.{n}"), path)?)))
                .collect::<Result<_, InputError>>()?,
            Some(other) => return Err(err(path, format!("{k}.inputs: expected an object, found {}", kind(other)))),
        };
        let mut kind_ = t("kind")?;
        if kind_.is_empty() {
            kind_ = default_kind.to_string();
        }
        out.push(Finding {
            kind: kind_,
            encoding: t("encoding")?,
            text: t("text")?,
            minimized: t("minimized")?,
            minimized_text: t("minimized_text")?,
            inputs,
            expected: t("expected")?,
            got: t("got")?,
            detail: t("detail")?,
        });
    }
    Ok(out)
}

/// Whether and where a run used a GPU.
#[derive(Clone, Debug, Default)]
pub struct HardwareInfo {
    pub used: bool,
    /// The simulated executor or the emulated driver answered: no hardware result.
    pub simulated: bool,
    /// A test fixture shaped like a run (the report's own tests): no hardware result.
    pub fixture: bool,
    pub reason: String,
    pub gpu: String,
    pub driver: String,
    pub devices: String,
}

/// A run report folder's `summary.json`.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    pub dir: String,
    pub tool_version: String,
    pub seed: String,
    pub shard: String,
    pub started: String,
    pub finished: String,
    pub hardware: HardwareInfo,
    pub totals: Totals,
    pub by_form: BTreeMap<String, Totals>,
    pub mismatches: Vec<Finding>,
    pub faults: Vec<Finding>,
    pub software_checks: String,
    pub coverage: Option<CoverageIn>,
}

/// A boolean key: absent and null are false.
fn flag_of(v: Option<&Value>, key: &str, path: &Path) -> Result<bool, InputError> {
    match v {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(err(path, format!("{key}: expected a boolean, found {}", kind(other)))),
    }
}

pub fn read_run(dir: &Path) -> Result<RunReport, InputError> {
    let path = dir.join("summary.json");
    let path = path.as_path();
    let v = read_json(path)?;
    let o = v.as_object().ok_or_else(|| err(path, format!("expected an object, found {}", kind(&v))))?;
    let t = |k: &str| text_of(o.get(k), k, path);
    let hardware = match o.get("hardware") {
        None | Some(Value::Null) => HardwareInfo::default(),
        Some(Value::Object(h)) => HardwareInfo {
            used: flag_of(h.get("used"), "hardware.used", path)?,
            simulated: flag_of(h.get("simulated"), "hardware.simulated", path)?,
            fixture: flag_of(h.get("fixture"), "hardware.fixture", path)?,
            reason: text_of(h.get("reason"), "hardware.reason", path)?,
            gpu: text_of(h.get("gpu"), "hardware.gpu", path)?,
            driver: text_of(h.get("driver"), "hardware.driver", path)?,
            devices: display(h.get("devices")),
        },
        Some(other) => return Err(err(path, format!("hardware: expected an object, found {}", kind(other)))),
    };
    let mut by_form = BTreeMap::new();
    match o.get("by_form") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                by_form.insert(k.clone(), totals_of(Some(v), &format!("by_form.{k}"), path)?);
            }
        }
        Some(other) => return Err(err(path, format!("by_form: expected an object, found {}", kind(other)))),
    }
    Ok(RunReport {
        dir: dir.display().to_string(),
        tool_version: t("tool_version")?,
        seed: t("seed")?,
        shard: display(o.get("shard")),
        started: t("started")?,
        finished: t("finished")?,
        hardware,
        totals: totals_of(o.get("totals"), "totals", path)?,
        by_form,
        mismatches: findings_of(o.get("mismatches"), "mismatches", "mismatch", path)?,
        faults: findings_of(o.get("faults"), "faults", "fault", path)?,
        software_checks: display(o.get("software_checks")),
        coverage: coverage_of(o.get("coverage"), "coverage", path)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("hmul2-report-inputs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn malformed_files_are_one_line_errors_naming_them() {
        let d = tmp("bad");
        std::fs::write(d.join("summary.json"), "{\"totals\": {\"mismatches\": \"many\"}}").unwrap();
        let e = read_run(&d).unwrap_err().to_string();
        assert!(e.contains("summary.json") && e.contains("totals.mismatches"), "{e}");
        assert!(!e.contains('\n'));
        std::fs::write(d.join("o.json"), "[1,").unwrap();
        let e = read_oracle(&d.join("o.json")).unwrap_err().to_string();
        assert!(e.contains("o.json") && e.contains("not JSON"), "{e}");
        std::fs::write(d.join("v.jsonl"), "{\"encoding\": \"0x12\"}\n").unwrap();
        let e = read_vectors(&d.join("v.jsonl")).unwrap_err().to_string();
        assert!(e.contains("v.jsonl:1") && e.contains("encoding"), "{e}");
        assert!(read_run(&d.join("missing")).unwrap_err().to_string().contains("missing"));
        std::fs::write(d.join("s.json"), "{\"id\": 1}").unwrap();
        assert!(read_semantics(&d.join("s.json")).unwrap_err().to_string().contains("expected a list"));
    }

    #[test]
    fn missing_keys_take_defaults() {
        let d = tmp("min");
        std::fs::write(d.join("summary.json"), "{\"hardware\": {\"used\": true, \"gpu\": \"H200\"}, \"mismatches\": [{\"encoding\": \"0x0\"}]}").unwrap();
        let r = read_run(&d).unwrap();
        assert!(r.hardware.used);
        assert_eq!(r.hardware.gpu, "H200");
        assert_eq!(r.mismatches[0].kind, "mismatch");
        assert_eq!(r.totals.instructions, 0);
        assert!(r.coverage.is_none());
    }

    #[test]
    fn semantics_evidence_parses_as_a_vector() {
        let d = tmp("sem");
        let line = r#"{"encoding":"0x000fe200000000000000000201007232","a":"0x3c003c00","b":"0x3c003c00","d":"0x00000000","pred":"0x00","expect":"0x3c003c00","origin":"hardware:H200:580:2026-12-02"}"#;
        let text = serde_json::json!([
            {"id": "S1", "topic": "ftz", "assumption": "a", "alternatives": ["b", "c"], "status": "hardware-confirmed", "evidence": line},
            {"id": "S2", "topic": "sat", "assumption": "x", "alternatives": [], "status": "assumed", "evidence": null}
        ]);
        std::fs::write(d.join("s.json"), text.to_string()).unwrap();
        let s = read_semantics(&d.join("s.json")).unwrap();
        assert_eq!(s[0].alternatives, "b; c");
        assert!(s[0].evidence_vector.as_ref().unwrap().is_hardware());
        assert!(s[1].evidence_vector.is_none());
        assert!(s[0].outside.is_empty());
    }

    #[test]
    fn outside_evidence_is_read_and_its_side_known() {
        let d = tmp("outside");
        let text = serde_json::json!([
            {"id": "S1", "topic": "t", "assumption": "a", "alternatives": ["b"], "status": "assumed", "evidence": null,
             "outside": [{"source": "ptxas", "says": "relies on a", "supports": "a"}, {"source": "doc", "says": "says b", "supports": "b"}]},
        ]);
        std::fs::write(d.join("s.json"), text.to_string()).unwrap();
        let s = read_semantics(&d.join("s.json")).unwrap();
        let sides: Vec<(&str, bool)> = s[0].outside.iter().map(|o| (o.source.as_str(), o.for_assumption)).collect();
        assert_eq!(sides, [("ptxas", true), ("doc", false)]);
        std::fs::write(d.join("bad.json"), r#"[{"id": "S1", "topic": "t", "status": "assumed", "outside": {"source": 1}}]"#).unwrap();
        let e = read_semantics(&d.join("bad.json")).unwrap_err().to_string();
        assert!(e.contains("bad.json") && e.contains("[0].outside"), "{e}");
    }
}
