//! The run journal (`DIR/journal.jsonl`): a header line naming the run's configuration,
//! then one line per finished batch, appended and flushed as it arrives. A killed run is
//! resumed by reading it back: finished items are skipped, their results kept.

use super::report::{Finding, Totals};
use crate::outfile;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// One item's counts (an instruction, or in exhaustive mode a group of chunks).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ItemRecord {
    pub index: u64,
    pub form: String,
    pub totals: Totals,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct BatchRecord {
    pub items: Vec<ItemRecord>,
    pub findings: Vec<Finding>,
    /// Where the batch's vector lines end in the run's vector file, once they are durably
    /// written (absent without `--vectors`). A resume cuts the file back to the last
    /// journaled end, so lines of a batch that was never journaled are not kept twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorMark>,
}

/// The end of a batch's lines in a vector file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct VectorMark {
    /// The file's name in the run's vectors folder.
    pub file: String,
    /// Its length in bytes after the batch's lines.
    pub end: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line {
    Header { config: serde_json::Value },
    Batch(BatchRecord),
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
    #[error("{path}:{line}: corrupt journal line: {msg}")]
    Corrupt { path: String, line: usize, msg: String },
    #[error("{path}: journal belongs to another run (config {found}, this run {want}); use another --out")]
    OtherRun { path: String, found: String, want: String },
    #[error("{path} exists: pass --resume to continue that run, or choose another --out")]
    Exists { path: String },
}

pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    fn io(path: &Path, e: impl std::fmt::Display) -> JournalError {
        JournalError::Io { path: path.display().to_string(), msg: e.to_string() }
    }

    /// Start a journal (refusing to overwrite one), or with `resume` continue an existing one
    /// of the same configuration and return its batches. A torn last line (the run was
    /// killed while writing it) is cut off; damage anywhere else is an error.
    pub fn open(path: &Path, config: &serde_json::Value, resume: bool) -> Result<(Journal, Vec<BatchRecord>), JournalError> {
        let exists = std::fs::symlink_metadata(path).is_ok();
        if exists && !resume {
            return Err(JournalError::Exists { path: path.display().to_string() });
        }
        let mut records = Vec::new();
        if exists {
            // read once: a read error (a folder in its place) is an error, never a retry
            let full = std::fs::read(path).map_err(|e| Self::io(path, e))?;
            let mut good_len: u64 = 0;
            let mut header = None;
            let complete_last = full.last() == Some(&b'\n');
            let mut lines: Vec<&[u8]> = full.split(|&b| b == b'\n').collect();
            if complete_last || full.is_empty() {
                lines.pop(); // the empty piece after the last newline
            }
            let n = lines.len();
            for (i, l) in lines.into_iter().enumerate() {
                let torn = i + 1 == n && !complete_last;
                let parsed: Result<Line, String> =
                    std::str::from_utf8(l).map_err(|e| e.to_string()).and_then(|s| serde_json::from_str(s).map_err(|e| e.to_string()));
                match parsed {
                    Ok(Line::Header { config: c }) if i == 0 => header = Some(c),
                    Ok(Line::Batch(b)) if i > 0 && !torn => records.push(b),
                    _ if torn => {
                        eprintln!("journal: {}: dropping a torn last line (the run was stopped while writing it)", path.display());
                        break;
                    }
                    Ok(_) => return Err(JournalError::Corrupt { path: path.display().to_string(), line: i + 1, msg: "line out of place".into() }),
                    Err(msg) => return Err(JournalError::Corrupt { path: path.display().to_string(), line: i + 1, msg }),
                }
                good_len += l.len() as u64 + 1;
            }
            // each item is journaled once: a second record is two writers, not more work
            let mut seen = std::collections::BTreeMap::new();
            for (k, b) in records.iter().enumerate() {
                for it in &b.items {
                    if let Some(first) = seen.insert(it.index, k) {
                        return Err(JournalError::Corrupt {
                            path: path.display().to_string(),
                            line: k + 2,
                            msg: format!("item {} is journaled twice (batches {} and {}): two runs wrote this folder at once", it.index, first + 1, k + 1),
                        });
                    }
                }
            }
            match header {
                Some(h) if &h == config => {}
                Some(h) => return Err(JournalError::OtherRun { path: path.display().to_string(), found: h.to_string(), want: config.to_string() }),
                None => return Err(JournalError::Corrupt { path: path.display().to_string(), line: 1, msg: "no header".into() }),
            }
            let file = outfile::open_existing(path).map_err(|e| Self::io(path, e))?;
            file.set_len(good_len).map_err(|e| Self::io(path, e))?;
            drop(file);
            let file = outfile::open_append(path).map_err(|e| Self::io(path, e))?;
            return Ok((Journal { path: path.to_path_buf(), file }, records));
        }
        let file = outfile::create_new(path).map_err(|e| Self::io(path, e))?;
        let mut j = Journal { path: path.to_path_buf(), file };
        j.write_line(&Line::Header { config: config.clone() })?;
        Ok((j, records))
    }

    fn write_line(&mut self, l: &Line) -> Result<(), JournalError> {
        let mut s = serde_json::to_string(l).map_err(|e| Self::io(&self.path, e))?;
        s.push('\n');
        self.file.write_all(s.as_bytes()).map_err(|e| Self::io(&self.path, e))?;
        self.file.flush().map_err(|e| Self::io(&self.path, e))?;
        self.file.sync_data().map_err(|e| Self::io(&self.path, e))
    }

    /// Append one finished batch, durably, before anything else happens.
    pub fn append(&mut self, b: &BatchRecord) -> Result<(), JournalError> {
        self.write_line(&Line::Batch(b.clone()))
    }
}

/// The configuration in a journal's header, if the file exists and has one.
pub fn header_config(path: &Path) -> Option<serde_json::Value> {
    let f = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(f).read_line(&mut first).ok()?;
    match serde_json::from_str::<Line>(&first).ok()? {
        Line::Header { config } => Some(config),
        Line::Batch(_) => None,
    }
}

/// The seed in a journal's header, if the file exists and has one.
pub fn header_seed(path: &Path) -> Option<u64> {
    header_config(path)?.get("seed")?.as_u64()
}
