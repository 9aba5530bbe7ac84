//! Every file the tool writes and reads, by type: the one home of its file formats. Writers
//! serialize these types and readers deserialize the same ones; no reader declares a second
//! copy. A type lives in the lowest crate that writes it (crates only reach downward) and is
//! re-exported here; this crate is the lowest that sees them all.
//!
//! | file | type | written by | read by |
//! |---|---|---|---|
//! | vector lines (`*.jsonl`) | [`Vector`] ([`parse_line`], [`to_line`]: a hand-written fast reader and writer) | `run --vectors`, `eval` | `verify`, `eval`, `settle`, `report` |
//! | `harness/spec/semantics.json` | `Vec<`[`Assumption`]`>` ([`Status`], [`Outside`]) | people, `settle --write` | the reference ([`crate::reference::policy`]), `settle`, `report` |
//! | `oracle --report FILE` | [`OracleFile`] ([`OracleReport`], [`OracleMismatch`], [`Coverage`]) | `oracle` | `report` |
//! | `DIR/summary.json` | [`Summary`] ([`Totals`], [`Finding`], [`FindingKind`], [`FindingInputs`], [`Hardware`], [`SoftwareChecks`], [`Timing`], [`RunStatus`], [`Coverage`]) | `run`, `merge` | `merge`, `report` |
//! | `DIR/journal.jsonl` | a [`JournalHeader`] line (`{"type": "header", "config": …}`, [`VectorsSpec`]), then [`BatchRecord`] lines ([`ItemRecord`], [`Finding`], [`VectorMark`]), each ending in a chained `"check"` | `run` | `run --resume`, `merge` (the header's config) |
//! | `DIR/junit.xml` | text from a [`Summary`] ([`crate::run::report::junit`]) | `run`, `merge` | CI dashboards |
//! | `OUT/manifest.json` | [`Manifest`] | `build-kernel` | people |
//! | `OUT/input.bin` | the kernel's input buffer, byte for byte ([`crate::kernel::LAYOUT`]: 16-byte records, then the c plane, then the bindless slots) | `build-kernel` | people (a launch of `OUT/kernel.cubin` by other means) |
//! | `OUT/.input.bin.spare`, `OUT/.kernel.cubin.spare`, `OUT/.manifest.json.spare` (Linux) | the previous build's files, kept to be written over by the next ([`crate::outfile::Durability::Regenerable`]); removable at any time | `build-kernel` | `build-kernel` |
//!
//! JSON files are read through [`read`] (or [`from_str`]): a missing or null key takes its
//! default where the type says so (`#[serde(default)]`: files of earlier versions lack the
//! newer keys), an unknown key is ignored, and a key of the wrong type is a one-line
//! [`ReadError`] naming the file and the key's path (`totals.mismatches`, `[0].outside`).

use serde::de::DeserializeOwned;
use std::path::Path;

pub use crate::gen::{Coverage, FieldCoverage};
pub use crate::kernel::Manifest;
pub use crate::oracle::{Mismatch as OracleMismatch, OracleFile, OracleReport};
pub use crate::reference::policy::{Assumption, Outside, Status};
pub use crate::run::journal::{BatchRecord, Header as JournalHeader, ItemRecord, VectorMark, VectorsSpec};
pub use crate::run::report::{Finding, FindingInputs, FindingKind, Hardware, RunStatus, SoftwareChecks, Summary, Timing, Totals};
pub use crate::vectors::{parse_line, to_line, Vector};

/// A file that cannot be read as its type; printed as one line naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ReadError {
    pub path: String,
    pub message: String,
}

/// `text` (the contents of `path`) as a `T`. A syntax error says `not JSON`; a value of
/// the wrong type names its key path.
pub fn from_str<T: DeserializeOwned>(text: &str, path: &Path) -> Result<T, ReadError> {
    let err = |message: String| ReadError { path: path.display().to_string(), message };
    let de = &mut serde_json::Deserializer::from_str(text);
    let v: T = serde_path_to_error::deserialize(de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        match inner.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => err(format!("not JSON: {inner}")),
            _ if at == "." => err(inner.to_string()),
            _ => err(format!("{at}: {inner}")),
        }
    })?;
    Ok(v)
}

/// The file at `path` as a `T` (see [`from_str`]).
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReadError { path: path.display().to_string(), message: e.to_string() })?;
    from_str(&text, path)
}

/// A `summary.json` file, each finding's kind taken from its list ([`Summary::kinds_from_lists`]).
pub fn read_summary(path: &Path) -> Result<Summary, ReadError> {
    let mut s: Summary = read(path)?;
    s.kinds_from_lists();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("d/summary.json")
    }

    #[test]
    fn an_old_summary_without_newer_keys_reads() {
        // as written before status, mode, planned, timing, config and not_runnable existed
        let old = r#"{"tool_version": "0.1.0", "seed": 3, "shard": "0/1", "started": "a", "finished": "b",
            "hardware": {"used": false, "reason": "no GPU", "gpu": null, "driver": null, "devices": 0},
            "totals": {"instructions": 4, "inputs": 16, "compared": 16, "mismatches": 0, "faults": 0, "undefined": 0},
            "by_form": {}, "mismatches": [], "faults": [], "software_checks": {"verify": null, "oracle": null}, "coverage": null,
            "a_key_of_a_later_version": [1, 2]}"#;
        let s: Summary = from_str(old, p()).unwrap();
        assert_eq!((s.status, s.planned, s.mode.as_str(), s.totals.instructions, s.totals.not_runnable), (RunStatus::Complete, None, "", 4, 0));
        assert!(s.timing.is_none() && s.config.is_none() && !s.hardware.simulated && !s.hardware.fixture);
    }

    #[test]
    fn a_wrong_typed_nested_key_names_the_file_and_the_key_path() {
        let e = from_str::<Summary>(r#"{"mismatches": [{"encoding": "0x1", "inputs": {"a": 5}}]}"#, p()).unwrap_err().to_string();
        assert!(e.starts_with("d/summary.json: mismatches[0].inputs.a: invalid type"), "{e}");
        assert!(!e.contains('\n'));
        let e = from_str::<Summary>(r#"{"hardware": {"used": "yes"}}"#, p()).unwrap_err().to_string();
        assert!(e.contains("summary.json: hardware.used"), "{e}");
        let e = from_str::<Summary>(r#"{"faults": [{"kind": "crash"}]}"#, p()).unwrap_err().to_string();
        assert!(e.contains("faults[0].kind") && e.contains("unknown variant"), "{e}");
        let e = from_str::<Summary>("{", p()).unwrap_err().to_string();
        assert!(e.contains("summary.json: not JSON"), "{e}");
    }

    #[test]
    fn a_findings_list_says_its_kind() {
        let d = std::env::temp_dir().join(format!("hmul2-schema-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("summary.json"), r#"{"mismatches": [{"encoding": "0x0"}], "faults": [{"encoding": "0x1"}]}"#).unwrap();
        let s = read_summary(&d.join("summary.json")).unwrap();
        assert_eq!((s.mismatches[0].kind, s.faults[0].kind), (FindingKind::Mismatch, FindingKind::Fault));
        let _ = std::fs::remove_dir_all(&d);
    }
}
