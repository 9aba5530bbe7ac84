//! nvdisasm's verdicts, remembered per build of the tool, so that a word it has judged once
//! costs no call again: a call costs ~0.3 s of start-up however few its words, and runs,
//! oracle checks and tests ask about the same words again and again.
//!
//! What is kept, and why it is the tool's own answer:
//! - Only nvdisasm's output is stored, never the project's: a cached verdict is compared
//!   with the decoder exactly as a live one is.
//! - The folder is keyed by the tool's identity: its canonical path, size, modification
//!   time and inode, the architecture it was called with (`-b`) and this format's version.
//!   Another nvdisasm, or the same path rewritten, gets another folder.
//! - Only words of the family's opcodes are stored ([`cacheable`]): their text never depends
//!   on the word's address, where a branch's would.
//! - Every record carries a checksum of its word and verdict; a torn or altered line is
//!   ignored, and the word is asked of the tool again.
//! - Storing is best effort: a cache that cannot be written costs calls, never a verdict.
//!
//! The folder: `$HMUL2_NVDISASM_CACHE` when set (`off` turns the cache off: `ci/test.sh`
//! does, so CI asks the tool about every word), else `$XDG_CACHE_HOME/hmul2-harness/nvdisasm`,
//! else `$HOME/.cache/hmul2-harness/nvdisasm`. Words spread over [`SHARDS`] files, so a run
//! of a few words reads a few small files; a file past [`SHARD_CAP`] bytes starts over.

use super::Verdict;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable naming the cache's folder, or `off`.
pub const CACHE_ENV: &str = "HMUL2_NVDISASM_CACHE";
/// Files the words spread over.
pub const SHARDS: usize = 4096;
/// A file larger than this is emptied before the next write to it (at most 64 MiB in all,
/// about 170 records a file).
pub const SHARD_CAP: u64 = 16 << 10;
/// Bumped when the record format or what a verdict means changes.
const FORMAT: u32 = 1;

/// One tool build's remembered verdicts.
#[derive(Clone, Debug)]
pub struct VerdictCache {
    dir: PathBuf,
    /// What the folder's name hashes: written beside the records as `tool.txt`.
    identity: String,
}

/// FNV-1a, 64 bits: stable across builds and platforms (the folder and shard names and the
/// records' checksums must not change with the compiler).
fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Whether nvdisasm's verdict on `word` can be reused: the word names one of the family's
/// opcodes, whose text holds no address.
pub fn cacheable(word: u128) -> bool {
    !matches!(crate::isa::decode(word), Err(crate::isa::Illegal::UnknownOpcode { .. }))
}

fn shard_of(word: u128) -> usize {
    (fnv64(&word.to_le_bytes()) >> 52) as usize % SHARDS
}

fn record_sum(word: u128, kind: char, payload: &str) -> u32 {
    let mut b = Vec::with_capacity(24 + payload.len());
    b.extend_from_slice(&word.to_le_bytes());
    b.push(kind as u8);
    b.extend_from_slice(payload.as_bytes());
    let h = fnv64(&b);
    (h ^ (h >> 32)) as u32
}

/// A verdict's line, or None for one a line cannot hold.
fn record(word: u128, v: &Verdict) -> Option<String> {
    let (kind, payload) = match v {
        Verdict::Text(t) => ('T', t.as_str()),
        Verdict::Rejected(m) => ('R', m.as_str()),
        Verdict::Empty => ('E', ""),
    };
    if payload.contains(['\n', '\r']) {
        return None;
    }
    Some(format!("{word:032x} {:08x} {kind}{payload}\n", record_sum(word, kind, payload)))
}

/// A line's word and verdict, or None when it is malformed or its checksum differs.
fn parse_record(line: &str) -> Option<(u128, Verdict)> {
    let word = u128::from_str_radix(line.get(..32)?, 16).ok()?;
    if line.as_bytes().get(32) != Some(&b' ') || line.as_bytes().get(41) != Some(&b' ') {
        return None;
    }
    let sum = u32::from_str_radix(line.get(33..41)?, 16).ok()?;
    let rest = &line[42..];
    let kind = rest.chars().next()?;
    let payload = &rest[kind.len_utf8()..];
    if record_sum(word, kind, payload) != sum {
        return None;
    }
    let v = match kind {
        'T' => Verdict::Text(payload.to_string()),
        'R' => Verdict::Rejected(payload.to_string()),
        'E' if payload.is_empty() => Verdict::Empty,
        _ => return None,
    };
    Some((word, v))
}

impl VerdictCache {
    /// The cache for `tool` called with `-b arch`, where the environment puts it; None when
    /// it is `off`, when no folder is named and there is no home, or when the tool's
    /// identity cannot be read.
    pub fn from_env(tool: &Path, arch: &str) -> Option<VerdictCache> {
        let root = match std::env::var_os(CACHE_ENV) {
            Some(v) if v == "off" => return None,
            Some(v) if !v.is_empty() => PathBuf::from(v),
            _ => {
                let base = std::env::var_os("XDG_CACHE_HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
                base.join("hmul2-harness").join("nvdisasm")
            }
        };
        VerdictCache::at(&root, tool, arch)
    }

    /// The cache for `tool` called with `-b arch`, under `root`.
    pub fn at(root: &Path, tool: &Path, arch: &str) -> Option<VerdictCache> {
        let path = std::fs::canonicalize(tool).ok()?;
        let m = std::fs::metadata(&path).ok()?;
        let mtime = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let ino = 0u64;
        let identity = format!(
            "format {FORMAT}\ntool {}\nsize {}\nmtime {}.{:09}\ninode {ino}\narch {arch}\n",
            path.display(),
            m.len(),
            mtime.as_secs(),
            mtime.subsec_nanos()
        );
        let dir = root.join(format!("{:016x}", fnv64(identity.as_bytes())));
        Some(VerdictCache { dir, identity })
    }

    /// Make the folder when it is not there yet, with its `tool.txt`; a new folder also
    /// removes its siblings whose tool is gone or changed (a tool rewritten in place, a
    /// stand-in in a removed temporary folder), so that the cache does not grow with them.
    fn make_dir(&self) -> bool {
        if self.dir.is_dir() {
            return true;
        }
        if std::fs::create_dir_all(&self.dir).is_err() {
            return false;
        }
        let _ = std::fs::write(self.dir.join("tool.txt"), &self.identity);
        if let Some(Ok(siblings)) = self.dir.parent().map(std::fs::read_dir) {
            for e in siblings.flatten() {
                let d = e.path();
                // only a folder this cache made: 16 hex digits holding a tool.txt of this
                // shape (whatever else `$HMUL2_NVDISASM_CACHE`'s folder holds is left alone)
                let ours = e.file_name().to_str().is_some_and(|n| n.len() == 16 && n.bytes().all(|b| b.is_ascii_hexdigit()));
                if d == self.dir || !ours || !d.is_dir() {
                    continue;
                }
                let Ok(id) = std::fs::read_to_string(d.join("tool.txt")) else { continue };
                if !id.starts_with("format ") {
                    continue;
                }
                let Some(tool) = id.lines().find_map(|l| l.strip_prefix("tool ")) else { continue };
                let arch = id.lines().find_map(|l| l.strip_prefix("arch ")).unwrap_or("");
                let current = VerdictCache::at(d.parent().unwrap_or(&d), Path::new(tool), arch);
                if current.is_none_or(|c| c.dir != d) {
                    let _ = std::fs::remove_dir_all(&d);
                }
            }
        }
        true
    }

    /// The folder of this tool build's records.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn shard_path(&self, shard: usize) -> PathBuf {
        self.dir.join(format!("shard-{shard:03x}.txt"))
    }

    /// The remembered verdict of each word, in order (None: not known). Reads only the
    /// files `words` fall in.
    pub fn lookup(&self, words: &[u128]) -> Vec<Option<Verdict>> {
        let mut out: Vec<Option<Verdict>> = vec![None; words.len()];
        let mut by_shard: HashMap<usize, HashMap<u128, Vec<usize>>> = HashMap::new();
        for (i, &w) in words.iter().enumerate() {
            if cacheable(w) {
                by_shard.entry(shard_of(w)).or_default().entry(w).or_default().push(i);
            }
        }
        for (shard, wanted) in by_shard {
            let Ok(text) = std::fs::read(self.shard_path(shard)) else { continue };
            // a torn last line (a write cut short) fails its checksum like any other
            for line in text.split(|&b| b == b'\n') {
                let Ok(line) = std::str::from_utf8(line) else { continue };
                let Some(at) = line.get(..32).and_then(|h| u128::from_str_radix(h, 16).ok()) else { continue };
                let Some(slots) = wanted.get(&at) else { continue };
                if let Some((_, v)) = parse_record(line) {
                    for &i in slots {
                        out[i] = Some(v.clone());
                    }
                }
            }
        }
        out
    }

    /// Remember the tool's verdicts (best effort: an error loses only the records).
    pub fn store<'a>(&self, verdicts: impl IntoIterator<Item = (u128, &'a Verdict)>) {
        let mut by_shard: HashMap<usize, String> = HashMap::new();
        for (w, v) in verdicts {
            if cacheable(w) {
                if let Some(line) = record(w, v) {
                    by_shard.entry(shard_of(w)).or_default().push_str(&line);
                }
            }
        }
        if by_shard.is_empty() || !self.make_dir() {
            return;
        }
        for (shard, lines) in by_shard {
            let path = self.shard_path(shard);
            let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&path) else { continue };
            if f.metadata().map(|m| m.len() > SHARD_CAP).unwrap_or(false) {
                let _ = f.set_len(0);
            }
            // one write per file: appends of several processes do not interleave within it
            let _ = f.write_all(lines.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hmul2(k: u128) -> u128 {
        // HMUL2 R0, R1, R2 with its first two register fields varied (k below 1024: distinct words)
        0x000fe200000000000000000201007232 ^ (k & 0x3ff) << 16
    }

    #[test]
    fn records_round_trip_and_a_changed_byte_is_refused() {
        for v in [Verdict::Text("HMUL2 R0, R1, R2".into()), Verdict::Rejected("Unrecognized operation".into()), Verdict::Empty] {
            let line = record(hmul2(1), &v).unwrap();
            assert_eq!(parse_record(line.trim_end()), Some((hmul2(1), v.clone())));
            // every single-byte change of the line is refused or reads back the same
            let b = line.trim_end().as_bytes();
            for i in 0..b.len() {
                let mut c = b.to_vec();
                c[i] ^= 0x01;
                if let Ok(s) = std::str::from_utf8(&c) {
                    assert_eq!(parse_record(s), None, "{s:?}");
                }
            }
            // a torn line is refused
            assert_eq!(parse_record(&line[..line.len() / 2]), None);
        }
        assert_eq!(record(hmul2(1), &Verdict::Text("two\nlines".into())), None);
    }

    #[test]
    fn stored_verdicts_come_back_and_another_build_does_not_see_them() {
        let root = tempfile::tempdir().unwrap();
        let tool = root.path().join("nvdisasm");
        std::fs::write(&tool, b"a tool").unwrap();
        let c = VerdictCache::at(&root.path().join("c"), &tool, "SM90").unwrap();
        let words: Vec<u128> = (0..600).map(hmul2).collect();
        let vs: Vec<Verdict> = (0..600).map(|i| Verdict::Text(format!("text {i}"))).collect();
        assert!(c.lookup(&words).iter().all(Option::is_none));
        c.store(words[..300].iter().copied().zip(&vs[..300]));
        let got = c.lookup(&words);
        for i in 0..600 {
            assert_eq!(got[i].as_ref(), (i < 300).then_some(&vs[i]), "word {i}");
        }
        // a word asked twice gets its verdict twice
        assert_eq!(c.lookup(&[words[7], words[7]]), vec![Some(vs[7].clone()), Some(vs[7].clone())]);
        // another architecture, or the tool rewritten, is another build
        let arch = VerdictCache::at(&root.path().join("c"), &tool, "SM80").unwrap();
        assert!(arch.lookup(&words).iter().all(Option::is_none));
        std::fs::write(&tool, b"another tool").unwrap();
        let other = VerdictCache::at(&root.path().join("c"), &tool, "SM90").unwrap();
        assert_ne!(other.dir(), c.dir());
        assert!(other.lookup(&words).iter().all(Option::is_none));
        // the new build's first records remove the old build's folder (its tool changed),
        // and nothing the cache did not make
        assert!(c.dir().is_dir());
        let foreign_dirs = [root.path().join("c").join("notes"), root.path().join("c").join("0123456789abcdef")];
        for d in &foreign_dirs {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("tool.txt"), "tool /nonexistent\n").unwrap();
        }
        other.store([(words[0], &vs[0])]);
        assert!(!c.dir().exists() && other.dir().join("tool.txt").is_file());
        assert!(foreign_dirs.iter().all(|d| d.join("tool.txt").is_file()));
        assert_eq!(other.lookup(&words[..1]), vec![Some(vs[0].clone())]);
        // a word outside the family is never stored (its text may hold an address)
        let foreign = 0x000fea0003800000_0000000000007947u128; // BRA
        assert!(!cacheable(foreign));
        other.store([(foreign, &vs[0])]);
        assert_eq!(other.lookup(&[foreign]), vec![None]);
    }

    #[test]
    fn damaged_files_lose_records_not_verdicts() {
        let root = tempfile::tempdir().unwrap();
        let tool = root.path().join("nvdisasm");
        std::fs::write(&tool, b"a tool").unwrap();
        let c = VerdictCache::at(root.path(), &tool, "SM90").unwrap();
        let (w, v) = (hmul2(3), Verdict::Text("HMUL2 R0, R3, R2".into()));
        c.store([(w, &v)]);
        let path = c.shard_path(shard_of(w));
        let good = std::fs::read_to_string(&path).unwrap();
        // a record altered in place is not believed
        std::fs::write(&path, good.replace("R3", "R4")).unwrap();
        assert_eq!(c.lookup(&[w]), vec![None]);
        // garbage and a torn line around a good record: the good one still reads
        std::fs::write(&path, format!("garbage\n\u{0}\u{1}\n{good}{}", &good[..20])).unwrap();
        assert_eq!(c.lookup(&[w]), vec![Some(v.clone())]);
        // a file past its cap starts over at the next write
        std::fs::write(&path, "x".repeat(SHARD_CAP as usize + 1)).unwrap();
        c.store([(w, &v)]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), good);
    }
}
