//! The run journal (`DIR/journal.jsonl`): a header line naming the run's identity (its
//! options, vector flags, executor and tool version), then one line per finished batch,
//! appended and synced as it arrives. A killed run is resumed by reading it back: finished
//! items are skipped, their results kept.
//!
//! Nothing read back is trusted that can be checked: every line ends with an integrity
//! check chained over the lines before it (an edited, removed or added line breaks the
//! chain), a batch's vector lines carry a checksum of the bytes it appended, and a batch may
//! name only the one vector file its header names (never a path).

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
    /// Where the batch's vector lines lie in the run's vector file, once they are durably
    /// written (absent without `--vectors`). A resume verifies every journaled batch's
    /// bytes and cuts the file back to the last journaled end, so lines of a batch that was
    /// never journaled are not kept twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorMark>,
}

/// A batch's lines in the run's vector file: bytes `start..end`, with their checksum.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct VectorMark {
    /// The file's name in the run's vectors folder: the one the header names.
    pub file: String,
    /// Its length in bytes before the batch's lines (the previous batch's `end`).
    pub start: u64,
    /// Its length in bytes after the batch's lines.
    pub end: u64,
    /// [`check64`] of the bytes `start..end`, as 16 hex digits.
    pub sum: String,
}

/// The vector flags of a run: a resume with other ones would leave the file short or mixed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct VectorsSpec {
    /// The folder the file is in (`--vectors`/hardware or /simulated), absolute.
    pub dir: String,
    /// The file's name in it: made by this run, and only this run writes it.
    pub file: String,
    /// `--vectors-per-instruction` (None: all).
    pub per_instruction: Option<u64>,
}

/// What a journal belongs to. `--resume` continues only a journal whose identity equals
/// this run's (the vector file's name aside: it was chosen when the run began).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// The options that decide which items exist and what they hold (what `merge` compares).
    pub config: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorsSpec>,
    /// What executes the jobs: `hardware:GPU:DRIVER`, `emulated:...` or `simulated`.
    #[serde(default)]
    pub executor: String,
    /// The harness's version that began the run.
    #[serde(default)]
    pub tool_version: String,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line {
    Header(Header),
    /// The vector bytes a batch is about to append, journaled before they are written: a
    /// resume cuts only bytes its journal announced (a run killed between the write and the
    /// batch's line), never bytes another writer left.
    Pending(VectorMark),
    Batch(BatchRecord),
}

/// What a resumed journal holds.
#[derive(Debug, Default)]
pub struct Resumed {
    pub header: Option<Header>,
    pub batches: Vec<BatchRecord>,
    /// The journal line (1-based) of each batch.
    pub lines: Vec<usize>,
    /// The last write announced and not followed by its batch's line (the run was stopped
    /// between the two, or the write failed): the only bytes past the last batch a resume
    /// may cut.
    pub pending: Option<VectorMark>,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
    #[error("{path}:{line}: corrupt journal line: {msg}")]
    Corrupt { path: String, line: usize, msg: String },
    #[error("{path}: journal belongs to another run ({what}); use another --out")]
    OtherRun { path: String, what: String },
    #[error("{path} exists: pass --resume to continue that run, or choose another --out")]
    Exists { path: String },
}

/// A fast 64-bit checksum of `bytes`, chained on `prev` (not a cryptographic hash: it finds
/// damage and edits, not a forger who recomputes it). Eight bytes a step, so checking the
/// vector lines of a full-speed run costs little beside writing them.
pub fn check64(prev: u64, bytes: &[u8]) -> u64 {
    let mut c = Check64::new(prev);
    c.update(bytes);
    c.finish()
}

const K: u64 = 0x9e37_79b9_7f4a_7c15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// [`check64`] taking its bytes in pieces (a file read in blocks): the same value as one
/// call on all of them. Four lanes of eight bytes, each its own multiply chain, so a step
/// takes 32 bytes: 3.4 GB/s against 2.1 with one lane (opt-level 3, 256 MB, on the shared
/// 2-core build machine), beside a full-speed run's vector lines (12-14 M results a second
/// of about 170 bytes: about 2 GB/s, an estimate).
pub struct Check64 {
    lanes: [u64; 4],
    carry: [u8; 32],
    carried: usize,
    len: u64,
}

impl Check64 {
    pub fn new(prev: u64) -> Check64 {
        let h = mix(prev ^ K);
        Check64 { lanes: [h, h ^ 1, h ^ 2, h ^ 3], carry: [0; 32], carried: 0, len: 0 }
    }

    fn block(&mut self, b: &[u8; 32]) {
        let (words, _) = b.as_chunks::<8>();
        for (lane, w) in self.lanes.iter_mut().zip(words) {
            *lane = (*lane ^ u64::from_le_bytes(*w)).wrapping_mul(K).rotate_left(29);
        }
    }

    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.carried > 0 {
            let take = (32 - self.carried).min(bytes.len());
            self.carry[self.carried..self.carried + take].copy_from_slice(&bytes[..take]);
            self.carried += take;
            bytes = &bytes[take..];
            if self.carried < 32 {
                return;
            }
            let c = self.carry;
            self.block(&c);
            self.carried = 0;
        }
        let (blocks, rest) = bytes.as_chunks::<32>();
        for b in blocks {
            self.block(b);
        }
        self.carry[..rest.len()].copy_from_slice(rest);
        self.carried = rest.len();
    }

    pub fn finish(mut self) -> u64 {
        let mut last = [0u8; 32];
        last[..self.carried].copy_from_slice(&self.carry[..self.carried]);
        self.block(&last);
        let h = self.lanes.iter().fold(self.len, |h, &l| mix(h ^ l).wrapping_mul(K));
        mix(h)
    }
}

/// `,"check":"` + 16 hex digits + `"}`: how every line ends.
const CHECK_TAIL: usize = 10 + 16 + 2;

/// The line as written: `json` (an object) with its check, chained on `prev`, added last.
fn sealed(json: &str, prev: u64) -> (String, u64) {
    let c = check64(prev, json.as_bytes());
    let body = json.strip_suffix('}').unwrap_or(json);
    (format!("{body},\"check\":\"{c:016x}\"}}"), c)
}

/// The check a written line carries, if it is where [`sealed`] puts it, and the check it
/// should carry given `prev`.
fn unseal(line: &[u8], prev: u64) -> Option<(u64, u64)> {
    let at = line.len().checked_sub(CHECK_TAIL)?;
    let (body, tail) = line.split_at(at);
    let hex = tail.strip_prefix(b",\"check\":\"")?.strip_suffix(b"\"}")?;
    let got = u64::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
    let mut json = body.to_vec();
    json.push(b'}');
    Some((got, check64(prev, &json)))
}

pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
    /// The last line's check: the next line chains on it.
    last: u64,
}

/// Why a journal's identity differs from this run's: each part that differs, both ways.
fn differences(found: &Header, want: &Header) -> Vec<String> {
    let mut d = Vec::new();
    if found.config != want.config {
        d.push(format!("options {} vs this run's {}", found.config, want.config));
    }
    let flags = |v: &Option<VectorsSpec>| match v {
        None => "no --vectors".to_string(),
        Some(s) => format!("--vectors into {} with --vectors-per-instruction {}", s.dir, s.per_instruction.map_or("all".into(), |n| n.to_string())),
    };
    let strip = |v: &Option<VectorsSpec>| v.as_ref().map(|s| (s.dir.clone(), s.per_instruction));
    if strip(&found.vectors) != strip(&want.vectors) {
        d.push(format!("vector flags: {} vs this run's {}", flags(&found.vectors), flags(&want.vectors)));
    }
    if found.executor != want.executor {
        d.push(format!("executor {:?} vs this run's {:?}: results of two executors are not one run", found.executor, want.executor));
    }
    if found.tool_version != want.tool_version {
        d.push(format!("harness version {:?} vs this one's {:?}", found.tool_version, want.tool_version));
    }
    d
}

impl Journal {
    fn io(path: &Path, e: impl std::fmt::Display) -> JournalError {
        JournalError::Io { path: path.display().to_string(), msg: e.to_string() }
    }

    /// Start a journal (refusing to overwrite one), or with `resume` continue an existing one
    /// of the same identity and return its header and batches. A torn last batch line (the
    /// run was killed while writing it) is cut off; a torn header, a line whose check fails,
    /// a vector file other than the header's, or vector marks that do not follow each other
    /// are errors, and nothing is cut.
    pub fn open(path: &Path, want: &Header, resume: bool) -> Result<(Journal, Header, Resumed), JournalError> {
        let exists = std::fs::symlink_metadata(path).is_ok();
        if exists && !resume {
            return Err(JournalError::Exists { path: path.display().to_string() });
        }
        if !exists {
            let file = outfile::create_new(path).map_err(|e| Self::io(path, e))?;
            let mut j = Journal { path: path.to_path_buf(), file, last: 0 };
            j.write_line(&Line::Header(want.clone()))?;
            return Ok((j, want.clone(), Resumed::default()));
        }
        // read once: a read error (a folder in its place) is an error, never a retry
        let full = std::fs::read(path).map_err(|e| Self::io(path, e))?;
        let (resumed, good_len, last) = Self::read(path, &full, want)?;
        if good_len < full.len() as u64 {
            let file = outfile::open_existing(path).map_err(|e| Self::io(path, e))?;
            file.set_len(good_len).map_err(|e| Self::io(path, e))?;
        }
        let file = outfile::open_append(path).map_err(|e| Self::io(path, e))?;
        let header = resumed.header.clone().unwrap_or_else(|| want.clone());
        Ok((Journal { path: path.to_path_buf(), file, last }, header, resumed))
    }

    /// The journal's header and batches, the length of its whole lines, and the last check.
    fn read(path: &Path, full: &[u8], want: &Header) -> Result<(Resumed, u64, u64), JournalError> {
        let corrupt = |line: usize, msg: String| JournalError::Corrupt { path: path.display().to_string(), line, msg };
        let complete_last = full.last() == Some(&b'\n');
        let mut lines: Vec<&[u8]> = full.split(|&b| b == b'\n').collect();
        if complete_last || full.is_empty() {
            lines.pop(); // the empty piece after the last newline
        }
        let n = lines.len();
        if n == 0 {
            return Err(corrupt(1, "no header".into()));
        }
        if n == 1 && !complete_last {
            // never padded and built on: the run holds no result yet, but what it is cannot be told
            return Err(corrupt(1, "the header is torn (the run was stopped while starting): it holds no result; remove the journal to start again".into()));
        }
        // every line parses (an error names its line) before anything else is judged
        let mut parsed: Vec<Line> = Vec::with_capacity(n);
        for (i, l) in lines.iter().enumerate() {
            let r = std::str::from_utf8(l).map_err(|e| e.to_string()).and_then(|s| serde_json::from_str::<Line>(s).map_err(|e| e.to_string()));
            if i + 1 == n && !complete_last {
                crate::errln!("journal: {}: dropping a torn last line (the run was stopped while writing it)", path.display());
                break;
            }
            parsed.push(r.map_err(|msg| corrupt(i + 1, msg))?);
        }
        let mut it = parsed.into_iter();
        let header = match it.next() {
            Some(Line::Header(h)) => h,
            _ => return Err(corrupt(1, "no header".into())),
        };
        let differ = differences(&header, want);
        if !differ.is_empty() {
            return Err(JournalError::OtherRun { path: path.display().to_string(), what: differ.join("; ") });
        }
        let body: Vec<Line> = it.collect();
        // the chain: each line's check covers it and every line before it
        let mut last = 0u64;
        let mut good_len = 0u64;
        for (i, l) in lines.iter().take(body.len() + 1).enumerate() {
            match unseal(l, last) {
                None if i == 0 => {
                    return Err(corrupt(
                        1,
                        "the header has no integrity check (a journal of an earlier harness): finish that run with the version that began it".into(),
                    ))
                }
                None => return Err(corrupt(i + 1, "no integrity check at the end of the line".into())),
                Some((got, should)) if got != should => {
                    return Err(corrupt(i + 1, "its integrity check fails: the line was edited, or a line before it was removed or added".into()))
                }
                Some((got, _)) => last = got,
            }
            good_len += l.len() as u64 + 1;
        }
        let mut resumed = Self::check_lines(&header, body).map_err(|(line, msg)| corrupt(line, msg))?;
        resumed.header = Some(header);
        Ok((resumed, good_len, last))
    }

    /// What the header implies of the lines after it (`body`, from line 2): each item once;
    /// vector marks that name the header's file and follow each other from its first byte;
    /// each batch's bytes announced by a pending line just before it. Err: (line, why).
    fn check_lines(header: &Header, body: Vec<Line>) -> Result<Resumed, (usize, String)> {
        if let Some(v) = header.vectors.as_ref().filter(|v| !plain_name(&v.file)) {
            return Err((1, format!("names vector file {:?}: not a plain file name in its vectors folder", v.file)));
        }
        let mut r = Resumed::default();
        let mut seen = std::collections::BTreeMap::new();
        let mut end = 0u64;
        // a mark names the run's own file and starts where the journaled bytes end
        let follows = |m: &VectorMark, end: u64| -> Result<(), String> {
            let Some(v) = &header.vectors else { return Err(format!("names vector file {:?}, but the run writes no vectors", m.file)) };
            if m.file != v.file {
                // a path, another run's file: never opened, never cut
                return Err(format!("names vector file {:?}; this run's is {:?} in its vectors folder", m.file, v.file));
            }
            if m.start != end || m.end < m.start {
                return Err(format!("its vector lines are bytes {}..{}, but the batch before ends at {end}", m.start, m.end));
            }
            Ok(())
        };
        for (k, l) in body.into_iter().enumerate() {
            let line = k + 2;
            match l {
                Line::Header(_) => return Err((line, "a second header".into())),
                Line::Pending(m) => {
                    follows(&m, end).map_err(|e| (line, e))?;
                    r.pending = Some(m);
                }
                Line::Batch(b) => {
                    for it in &b.items {
                        if let Some(first) = seen.insert(it.index, line) {
                            return Err((line, format!("item {} is journaled twice (lines {first} and {line}): two runs wrote this folder at once", it.index)));
                        }
                    }
                    match (&header.vectors, &b.vectors) {
                        (None, None) => {}
                        (Some(v), None) => return Err((line, format!("has no vector mark, but the run writes its vectors to {}", v.file))),
                        (_, Some(m)) => {
                            follows(m, end).map_err(|e| (line, e))?;
                            if r.pending.as_ref() != Some(m) {
                                return Err((line, format!("its vector lines (bytes {}..{}) were not announced before they were written", m.start, m.end)));
                            }
                            end = m.end;
                            r.pending = None;
                        }
                    }
                    r.batches.push(b);
                    r.lines.push(line);
                }
            }
        }
        Ok(r)
    }

    fn write_line(&mut self, l: &Line) -> Result<(), JournalError> {
        self.write_unsynced(l)?;
        self.file.sync_data().map_err(|e| Self::io(&self.path, e))
    }

    /// The line written and flushed to the kernel (it outlives a killed process), not synced.
    fn write_unsynced(&mut self, l: &Line) -> Result<(), JournalError> {
        let json = serde_json::to_string(l).map_err(|e| Self::io(&self.path, e))?;
        let (mut s, check) = sealed(&json, self.last);
        s.push('\n');
        self.file.write_all(s.as_bytes()).map_err(|e| Self::io(&self.path, e))?;
        self.file.flush().map_err(|e| Self::io(&self.path, e))?;
        self.last = check;
        Ok(())
    }

    /// Append one finished batch, durably, before anything else happens.
    pub fn append(&mut self, b: &BatchRecord) -> Result<(), JournalError> {
        self.write_line(&Line::Batch(b.clone()))
    }

    /// Announce the vector bytes a batch is about to append (a `pending` line). Written
    /// before them but not synced (the batch's line syncs it): a killed process leaves it, and
    /// after a power loss that kept the bytes but not this line, a resume refuses the tail,
    /// which loses nothing; a sync here would be a third per batch.
    pub fn pending(&mut self, m: &VectorMark) -> Result<(), JournalError> {
        self.write_unsynced(&Line::Pending(m.clone()))
    }
}

/// A name of a file in a folder: no separator, not `.` or `..`, not empty.
fn plain_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\', '\0'])
}

/// The header of a journal, if the file exists and its first line is one (not verified:
/// for the seed a resume continues, and the options `merge` compares).
pub fn header(path: &Path) -> Option<Header> {
    let f = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(f).read_line(&mut first).ok()?;
    match serde_json::from_str::<Line>(&first).ok()? {
        Line::Header(h) => Some(h),
        _ => None,
    }
}

/// The configuration in a journal's header, if the file exists and has one.
pub fn header_config(path: &Path) -> Option<serde_json::Value> {
    Some(header(path)?.config)
}

/// The seed in a journal's header, if the file exists and has one.
pub fn header_seed(path: &Path) -> Option<u64> {
    header_config(path)?.get("seed")?.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header { config: serde_json::json!({"seed": 1, "share": 0.1}), vectors: None, executor: "simulated".into(), tool_version: "t".into() }
    }

    fn batch(index: u64) -> BatchRecord {
        BatchRecord { items: vec![ItemRecord { index, form: "hmul2.rrr".into(), totals: Totals::default() }], ..Default::default() }
    }

    #[test]
    fn check64_in_pieces_is_check64_of_the_whole() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut c = Check64::new(0);
        for p in bytes.chunks(37).chain([&[][..]]) {
            c.update(p);
        }
        assert_eq!(c.finish(), check64(0, &bytes));
        assert_ne!(check64(0, &bytes[..999]), check64(0, &bytes));
        assert_ne!(check64(0, b"a\n"), check64(0, b"a\r\n"));
        assert_ne!(check64(1, b"x"), check64(0, b"x"));
    }

    /// Every line's check chains on the lines before it: an edit, a removed line or a
    /// duplicated one is a corrupt line (named), and nothing is cut.
    #[test]
    fn an_edited_removed_or_repeated_line_breaks_the_chain() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("journal.jsonl");
        let (mut j, _, _) = Journal::open(&p, &header(), false).unwrap();
        for i in 0..3 {
            j.append(&batch(i)).unwrap();
        }
        drop(j);
        let good = std::fs::read_to_string(&p).unwrap();
        let (_, h, r) = Journal::open(&p, &header(), true).unwrap();
        assert_eq!((h, r.batches.len(), r.lines), (header(), 3, vec![2, 3, 4]));
        let lines: Vec<&str> = good.lines().collect();
        let edits: Vec<(String, usize)> = vec![
            (good.replacen("\"index\":1", "\"index\":7", 1), 3),
            ([lines[0], lines[1], lines[3]].join("\n") + "\n", 3),
            ([lines[0], lines[1], lines[1], lines[2]].join("\n") + "\n", 3),
            (good.replacen("\"compared\":0", "\"compared\":33", 1), 2),
        ];
        for (text, line) in edits {
            std::fs::write(&p, &text).unwrap();
            let e = Journal::open(&p, &header(), true).err().unwrap().to_string();
            assert!(e.contains(&format!("journal.jsonl:{line}: corrupt")), "{e}");
            assert_eq!(std::fs::read_to_string(&p).unwrap(), text, "nothing cut");
        }
        // a torn header is refused, never padded and built on
        std::fs::write(&p, lines[0]).unwrap();
        let e = Journal::open(&p, &header(), true).err().unwrap().to_string();
        assert!(e.contains(":1: corrupt") && e.contains("torn"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), lines[0]);
        // a torn batch line is cut, and the next line chains on the last whole one
        std::fs::write(&p, format!("{}{}", good, &lines[1][..20])).unwrap();
        let (mut j, _, r) = Journal::open(&p, &header(), true).unwrap();
        assert_eq!(r.batches.len(), 3);
        j.append(&batch(3)).unwrap();
        drop(j);
        assert_eq!(Journal::open(&p, &header(), true).unwrap().2.batches.len(), 4);
    }

    /// A batch names only the header's vector file, its bytes were announced by the pending
    /// line before it, and the marks follow each other; a trailing pending line is the only
    /// tail a resume may cut.
    #[test]
    fn vector_marks_name_the_run_s_file_and_follow_each_other() {
        let mut h = header();
        h.vectors = Some(VectorsSpec { dir: "/v".into(), file: "f.jsonl".into(), per_instruction: None });
        let mark = |file: &str, start: u64, end: u64| VectorMark { file: file.into(), start, end, sum: String::new() };
        let batch = |i: u64, m: Option<VectorMark>| Line::Batch(BatchRecord { vectors: m, ..batch(i) });
        let good = || vec![Line::Pending(mark("f.jsonl", 0, 10)), batch(0, Some(mark("f.jsonl", 0, 10))), Line::Pending(mark("f.jsonl", 10, 25))];
        let r = Journal::check_lines(&h, good()).unwrap();
        assert_eq!((r.lines, r.pending), (vec![3], Some(mark("f.jsonl", 10, 25))));
        let bad: Vec<(Vec<Line>, usize, &str)> = vec![
            (vec![Line::Pending(mark("/etc/passwd", 0, 10))], 2, "names vector file"),
            (vec![Line::Pending(mark("f.jsonl", 0, 10)), batch(0, Some(mark("../f.jsonl", 0, 10)))], 3, "names vector file"),
            (vec![batch(0, Some(mark("f.jsonl", 0, 10)))], 2, "not announced"),
            (vec![Line::Pending(mark("f.jsonl", 0, 10)), batch(0, Some(mark("f.jsonl", 0, 12)))], 3, "not announced"),
            (good().into_iter().chain([batch(1, Some(mark("f.jsonl", 11, 25)))]).collect(), 5, "batch before ends at 10"),
            (vec![Line::Pending(mark("f.jsonl", 5, 10))], 2, "batch before ends at 0"),
            (vec![batch(0, None)], 2, "no vector mark"),
        ];
        for (lines, line, why) in bad {
            let e = Journal::check_lines(&h, lines).err().unwrap();
            assert!(e.0 == line && e.1.contains(why), "{e:?}");
        }
        let e = Journal::check_lines(&header(), vec![Line::Pending(mark("f.jsonl", 0, 10))]).err().unwrap();
        assert!(e.1.contains("writes no vectors"), "{e:?}");
    }

    #[test]
    fn another_identity_is_another_run() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("journal.jsonl");
        drop(Journal::open(&p, &header(), false).unwrap());
        for (h, what) in [
            (Header { executor: "emulated:fake-cuda".into(), ..header() }, "executor"),
            (Header { tool_version: "u".into(), ..header() }, "version"),
            (Header { vectors: Some(VectorsSpec { dir: "/v".into(), file: "x".into(), per_instruction: Some(8) }), ..header() }, "vector flags"),
        ] {
            let e = Journal::open(&p, &h, true).err().unwrap().to_string();
            assert!(e.contains("another run") && e.contains(what), "{e}");
        }
    }
}
