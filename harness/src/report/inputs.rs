//! The report's inputs: the files [`crate::schema`] types, read through its one reader
//! (a missing key takes its default, a present key of the wrong type is an error, and every
//! error is one line that names the file and the key), with the place each came from, and
//! small views for display.

use crate::schema::{self, Assumption, OracleFile, Outside, Summary};
use std::path::Path;

pub use crate::schema::{Coverage, FieldCoverage, ReadError as InputError};

/// A file the report read, and where from (a run's folder, an oracle file's path).
#[derive(Clone, Debug)]
pub struct Sourced<T> {
    pub path: String,
    pub file: T,
}

impl<T> std::ops::Deref for Sourced<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.file
    }
}

/// An `oracle --report` file.
pub type Oracle = Sourced<OracleFile>;
/// A run report folder (`path`) and its `summary.json`.
pub type Run = Sourced<Summary>;

pub fn read_oracle(path: &Path) -> Result<Oracle, InputError> {
    Ok(Sourced { path: path.display().to_string(), file: schema::read(path)? })
}

pub fn read_run(dir: &Path) -> Result<Run, InputError> {
    Ok(Sourced { path: dir.display().to_string(), file: schema::read_summary(&dir.join("summary.json"))? })
}

/// One test vector (a JSON Lines line), as text for display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    pub file: String,
    pub line: usize,
    pub encoding: String,
    pub word: u128,
    pub a: String,
    pub b: String,
    /// Operand 3, where the line has one (three-source instructions).
    pub c: Option<String>,
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
    fn of(v: &schema::Vector, file: &str, line: usize) -> Vector {
        Vector {
            file: file.to_string(),
            line,
            encoding: format!("{:#034x}", v.encoding),
            word: v.encoding,
            a: format!("{:#010x}", v.inputs.a),
            b: format!("{:#010x}", v.inputs.b),
            c: crate::vectors::has_c(crate::vectors::three_source_for(v.arch.unwrap_or(crate::target::Target::DEFAULT), v.encoding), v.inputs.c)
                .then(|| format!("{:#010x}", v.inputs.c)),
            d: format!("{:#010x}", v.inputs.d),
            pred: format!("{:#04x}", v.inputs.pred),
            expect: v.expect.map(|e| format!("{e:#010x}")).unwrap_or_else(|| "none".into()),
            origin: v.origin.clone(),
        }
    }
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
        return Err(InputError { path: path.display().to_string(), message: "no vectors (no non-empty line in any .jsonl file)".into() });
    }
    Ok(out)
}

/// `harness/spec/semantics.json`, as the reference reads it.
pub fn read_semantics(path: &Path) -> Result<Vec<Assumption>, InputError> {
    schema::read(path)
}

/// The confirming vector of each architecture that settled an assumption, when its evidence
/// parses as one: `(architecture, vector)` in the table's order (nvdisasm's spelling).
pub fn evidence_vectors<'a>(a: &'a Assumption, file: &str) -> Vec<(&'a str, Vector)> {
    a.settled.iter().filter_map(|(arch, s)| schema::parse_line(&s.evidence).ok().map(|v| (arch.as_str(), Vector::of(&v, file, 0)))).collect()
}

/// Whether a piece of outside evidence supports the assumption (else another option).
pub fn for_assumption(a: &Assumption, o: &Outside) -> bool {
    o.supports == a.assumption
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
        let e = read_semantics(&d.join("s.json")).unwrap_err().to_string();
        assert!(e.contains("s.json") && e.contains("expected a sequence"), "{e}");
    }

    #[test]
    fn missing_keys_take_defaults() {
        let d = tmp("min");
        std::fs::write(d.join("summary.json"), "{\"hardware\": {\"used\": true, \"gpu\": \"H200\"}, \"mismatches\": [{\"encoding\": \"0x0\"}]}").unwrap();
        let r = read_run(&d).unwrap();
        assert!(r.hardware.used);
        assert_eq!(r.hardware.gpu.as_deref(), Some("H200"));
        assert_eq!(r.mismatches[0].kind, schema::FindingKind::Mismatch);
        assert_eq!(r.totals.instructions, 0);
        assert!(r.coverage.is_none());
    }

    #[test]
    fn semantics_evidence_parses_as_a_vector() {
        let d = tmp("sem");
        let line = r#"{"encoding":"0x000fe200000000000000000201007232","a":"0x3c003c00","b":"0x3c003c00","d":"0x00000000","pred":"0x00","expect":"0x3c003c00","origin":"hardware:H200:580:2026-12-02"}"#;
        let text = serde_json::json!([
            {"id": "S1", "topic": "ftz", "assumption": "a", "alternatives": ["b", "c"], "settled": {"SM86": {"option": "b", "gpu": "H200", "date": "2026-12-02", "evidence": line, "told": 1}}},
            {"id": "S2", "topic": "sat", "assumption": "x", "alternatives": []}
        ]);
        std::fs::write(d.join("s.json"), text.to_string()).unwrap();
        let s = read_semantics(&d.join("s.json")).unwrap();
        assert_eq!(s[0].alternatives, ["b", "c"]);
        let ev = evidence_vectors(&s[0], "s.json");
        assert!(ev.len() == 1 && ev[0].0 == "SM86" && ev[0].1.is_hardware());
        assert!(evidence_vectors(&s[1], "s.json").is_empty());
        // a table of the time before settling was per architecture is refused, not read as assumed
        let old = serde_json::json!([{"id": "S1", "topic": "ftz", "assumption": "a", "alternatives": [], "status": "hardware-confirmed", "evidence": line}]);
        std::fs::write(d.join("old.json"), old.to_string()).unwrap();
        let e = read_semantics(&d.join("old.json")).unwrap_err();
        assert!(e.to_string().contains("old.json") && e.to_string().contains("unknown field"), "{e}");
        assert!(s[0].outside.is_empty());
    }

    #[test]
    fn outside_evidence_is_read_and_its_side_known() {
        let d = tmp("outside");
        let text = serde_json::json!([
            {"id": "S1", "topic": "t", "assumption": "a", "alternatives": ["b"],
             "outside": [{"source": "ptxas", "says": "relies on a", "supports": "a"}, {"source": "doc", "says": "says b", "supports": "b"}]},
        ]);
        std::fs::write(d.join("s.json"), text.to_string()).unwrap();
        let s = read_semantics(&d.join("s.json")).unwrap();
        let sides: Vec<(&str, bool)> = s[0].outside.iter().map(|o| (o.source.as_str(), for_assumption(&s[0], o))).collect();
        assert_eq!(sides, [("ptxas", true), ("doc", false)]);
        std::fs::write(d.join("bad.json"), r#"[{"id": "S1", "topic": "t", "outside": {"source": 1}}]"#).unwrap();
        let e = read_semantics(&d.join("bad.json")).unwrap_err().to_string();
        assert!(e.contains("bad.json") && e.contains("[0].outside"), "{e}");
    }

    /// A summary as `run` writes it, with every key of today's schema set.
    fn written_summary() -> Summary {
        use schema::{Finding, FindingInputs, FindingKind, Hardware, RunStatus, SoftwareChecks, Timing, Totals};
        let t = Totals { instructions: 2, inputs: 8, compared: 8, mismatches: 1, faults: 1, undefined: 0, not_runnable: 1 };
        let mismatch = Finding {
            kind: FindingKind::Mismatch,
            encoding: "0x000fe20000000000000000020100722b".into(),
            text: "HFMA2 R0, R1, R2, R3".into(),
            minimized: Some("0x000fe20000000000000000020100722b".into()),
            minimized_text: Some("HFMA2 R0, R1, R2, R3".into()),
            inputs: Some(FindingInputs {
                a: "0x3c003c00".into(),
                b: "0x3c003c00".into(),
                d: "0x00000000".into(),
                pred: "0x00".into(),
                c: Some("0x3c000000".into()),
            }),
            expected: Some("0x40003c00".into()),
            got: Some("0x3c003c00".into()),
            detail: "lane 1".into(),
        };
        Summary {
            tool_version: "0.1.0".into(),
            seed: 42,
            shard: "0/1".into(),
            status: RunStatus::Stopped,
            planned: Some(2),
            mode: "random".into(),
            road: Some("batch".into()),
            arch: "SM90".into(),
            started: "2026-12-04T00:00:00Z".into(),
            finished: "2026-12-04T00:00:01Z".into(),
            hardware: Hardware {
                used: true,
                reason: None,
                gpu: Some("NVIDIA H200".into()),
                driver: Some("580.95.05".into()),
                devices: 1,
                simulated: false,
                fixture: false,
            },
            totals: t,
            by_form: [("HFMA2_R_R_R_R".to_string(), t)].into(),
            mismatches: vec![mismatch],
            faults: vec![Finding::fault("0x1".into(), "illegal: x".into(), "CUDA_ERROR_ILLEGAL_INSTRUCTION".into())],
            software_checks: SoftwareChecks { verify: Some(serde_json::json!({"ran": true, "ok": true})), oracle: None },
            coverage: Some(Coverage::of(&crate::gen::one_field_at_a_time(crate::isa::Op::Hfma2))),
            timing: Some(Timing { execute_s: 1.5, compared: 8, compared_per_s: 5.25, software_checks_s: 0.25 }),
            config: Some(serde_json::json!({"seed": 42, "mode": "random"})),
        }
    }

    #[test]
    fn a_summary_the_runner_writes_reads_back_the_same() {
        let d = tmp("roundtrip");
        let s = written_summary();
        crate::run::write_report(&d, &s).unwrap();
        let r = read_run(&d).unwrap();
        assert_eq!(r.file, s, "every key survives, typed");
        assert_eq!(r.path, d.display().to_string());
        let pairs = r.mismatches[0].inputs.as_ref().unwrap().pairs();
        assert_eq!(pairs.iter().map(|p| p.0).collect::<Vec<_>>(), ["a", "b", "c", "d", "pred"], "a three-source finding keeps c");
    }

    #[test]
    fn an_old_summary_reads_and_a_wrong_typed_nested_key_is_named() {
        let d = tmp("old");
        // as `run` wrote it before status, mode, planned, timing, config, not_runnable and c
        let old = r#"{"tool_version": "0.1.0", "seed": 3, "shard": "0/1", "started": "a", "finished": "b",
            "hardware": {"used": true, "reason": null, "gpu": "H200", "driver": "580", "devices": 1},
            "totals": {"instructions": 1, "inputs": 4, "compared": 4, "mismatches": 1, "faults": 0, "undefined": 0},
            "by_form": {"HMUL2_R_R_R": {"instructions": 1, "inputs": 4, "compared": 4, "mismatches": 1, "faults": 0, "undefined": 0}},
            "mismatches": [{"kind": "mismatch", "encoding": "0x0", "text": "t", "minimized": null, "minimized_text": null,
                "inputs": {"a": "0x1", "b": "0x2", "d": "0x3", "pred": "0x00"}, "expected": "0x4", "got": "0x5", "detail": ""}],
            "faults": [], "software_checks": {"verify": null, "oracle": null}, "coverage": null}"#;
        std::fs::write(d.join("summary.json"), old).unwrap();
        let r = read_run(&d).unwrap();
        assert_eq!((r.status, r.planned, r.totals.not_runnable, r.by_form["HMUL2_R_R_R"].mismatches), (schema::RunStatus::Complete, None, 0, 1));
        assert_eq!(r.mismatches[0].inputs.as_ref().unwrap().pairs().len(), 4, "no c");
        std::fs::write(d.join("summary.json"), old.replace(r#""pred": "0x00""#, r#""pred": 0"#)).unwrap();
        let e = read_run(&d).unwrap_err().to_string();
        assert!(e.contains("summary.json: mismatches[0].inputs.pred: invalid type"), "{e}");
        std::fs::write(d.join("summary.json"), old.replace(r#""devices": 1"#, r#""devices": "one""#)).unwrap();
        let e = read_run(&d).unwrap_err().to_string();
        assert!(e.contains("summary.json: hardware.devices"), "{e}");
        std::fs::write(d.join("o.json"), r#"{"seed": 1, "report": {"mismatches": [{"word": 7}]}}"#).unwrap();
        let e = read_oracle(&d.join("o.json")).unwrap_err().to_string();
        assert!(e.contains("o.json: report.mismatches[0].word"), "{e}");
    }

    #[test]
    fn a_three_source_vector_shows_its_c_and_a_two_source_one_has_none() {
        let a = |line: &str| {
            let settled = serde_json::json!({"SM90": {"option": "a", "evidence": line}});
            serde_json::from_value::<Assumption>(serde_json::json!({"settled": settled})).unwrap()
        };
        let fma = r#"{"encoding":"0x000fe200000000030000000201007231","a":"0x3c003c00","b":"0x40004000","c":"0x3c00bc00","d":"0x00000000","pred":"0x7f","expect":"0x3c00bc00","origin":"hardware:x"}"#;
        assert_eq!(evidence_vectors(&a(fma), "s.json")[0].1.c.as_deref(), Some("0x3c00bc00"));
        let mul = r#"{"encoding":"0x000fe20000000f000000000201007232","a":"0x3c003c00","b":"0x40004000","d":"0x00000000","pred":"0x7f","expect":"0x40004000","origin":"hardware:x"}"#;
        assert_eq!(evidence_vectors(&a(mul), "s.json").into_iter().map(|(_, v)| v.c).collect::<Vec<_>>(), [None]);
    }
}
