//! What the integration tests share: the binary, temporary folders, the seed every random
//! test prints, and the few facts several tests derive from the spec. Each test file takes
//! what it needs (`mod common;`), so not every item is used by every file.
#![allow(dead_code)]

use hmul2_harness::isa::{encode, Inst, Operand2};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The built `hmul2-harness` binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_hmul2-harness");

/// Where the emulation tests put the input and output buffers.
pub const IN: u64 = 0x7f12_3400_0000;
pub const OUT: u64 = 0x7f56_7800_0000;
/// What the driver fills the output buffer with before a launch.
pub const CANARY: u8 = 0xa5;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The binary, run from the repository's root.
pub fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(root());
    c
}

/// A fresh, empty temporary folder for `name`, unique to this test binary and process.
pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hmul2-{}-{}-{name}", env!("CARGO_CRATE_NAME"), std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    d
}

/// A process's stdout and stderr, for assertion messages.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A run's `summary.json`.
pub fn summary(dir: &Path) -> Value {
    let p = dir.join("summary.json");
    let body = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The seed of a random test: `HMUL2_SEED` when set, else `default`; printed either way.
pub fn seed(default: u64) -> u64 {
    let s = std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    eprintln!("seed: {s} (set HMUL2_SEED to repeat or vary)");
    s
}

/// A fresh seed from the clock unless `HMUL2_SEED` is set; printed either way.
pub fn fresh_seed() -> u64 {
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    seed(clock)
}

/// The bit that makes an instruction .SAT (the same in every form).
pub fn sat_mask() -> u128 {
    let mut i = Inst::new(0, 1, Operand2::Reg(2));
    let plain = encode(&i).unwrap();
    i.sat = true;
    encode(&i).unwrap() ^ plain
}

/// The words a random run of `seed` runs (`run::random_item`: drawn, then placed where the
/// kernel can fill operand 2).
pub fn run_words(seed: u64, count: u64) -> Vec<u128> {
    run_words_of(seed, count, hmul2_harness::reference::IMPLEMENTED)
}

/// [`run_words`] of a run with `--instruction` `ops`.
pub fn run_words_of(seed: u64, count: u64, ops: &[hmul2_harness::isa::Op]) -> Vec<u128> {
    let o = hmul2_harness::gen::GenOptions::legal_of(seed, ops);
    (0..count).map(|i| hmul2_harness::run::random_item(&o, i, hmul2_harness::run::DEFAULT_UNDOCUMENTED_SHARE)).collect()
}

/// `text` with each edit applied in turn: (position, kind, character), the position taken
/// modulo the length; kind 0 deletes, 1 replaces, anything else inserts (and 0 or 1 at the
/// end inserts). For the fuzz tests of text inputs.
pub fn mutate(text: &str, edits: &[(usize, u8, char)]) -> String {
    let mut t: Vec<char> = text.chars().collect();
    for &(at, kind, c) in edits {
        let at = at % (t.len() + 1);
        match kind {
            0 if at < t.len() => {
                t.remove(at);
            }
            1 if at < t.len() => t[at] = c,
            _ => t.insert(at, c),
        }
    }
    t.into_iter().collect()
}

/// The first 2,000 characters of a text, for assertion messages about runaway output.
pub fn excerpt(t: &str) -> String {
    t.chars().take(2000).collect()
}

/// Recompute the integrity checks of journal lines (`run`'s `journal.jsonl`) after a test
/// edited them: what a writer that seals its lines would leave, so the checks behind the
/// chain (counts, items, vector marks) are what a test meets.
pub fn reseal(lines: &mut [String]) {
    const TAIL: usize = 10 + 16 + 2; // ,"check":"<16 hex>"}
    let mut prev = 0u64;
    for l in lines.iter_mut() {
        let body = match l.rfind(",\"check\":\"") {
            Some(at) if l.len() - at == TAIL => l[..at].to_string(),
            _ => l.strip_suffix('}').unwrap_or(l).to_string(),
        };
        prev = hmul2_harness::run::journal::check64(prev, format!("{body}}}").as_bytes());
        *l = format!("{body},\"check\":\"{prev:016x}\"}}");
    }
}

/// What `nvdisasm -b <arch>` prints for each of `words` (raw instruction words, no ELF): one
/// text per word, without address and `;`. Every word must be accepted: a rejected word, a
/// word listed with no text, or a missing nvdisasm fails the calling test, naming the word.
/// For the other architectures than SM90, whose words the crate's `Nvdisasm` (SM90's) does
/// not judge.
pub fn disassemble_as(arch: &str, words: &[u128]) -> Vec<String> {
    let nv = hmul2_harness::nvdisasm::find_tool("nvdisasm").unwrap_or_else(|e| panic!("nvdisasm is required (bash ci/install-tools.sh): {e}"));
    let dir = tmp(&format!("disassemble-{arch}-{}", words.first().copied().unwrap_or(0) as u32));
    let f = dir.join("words.bin");
    std::fs::write(&f, words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let o = Command::new(&nv).args(["-b", arch]).arg(&f).output().unwrap_or_else(|e| panic!("{}: {e}", nv.display()));
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let at = err.split("at address 0x").nth(1).and_then(|h| usize::from_str_radix(h.split(|c: char| !c.is_ascii_hexdigit()).next().unwrap_or(""), 16).ok());
        let word = at.and_then(|a| words.get(a / 16)).map(|w| hmul2_harness::isa::format_hex(*w)).unwrap_or_default();
        panic!("nvdisasm -b {arch} rejected {word}: {err}");
    }
    let mut out = vec![String::new(); words.len()];
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let Some(rest) = l.trim_start().strip_prefix("/*") else { continue };
        let Some((addr, text)) = rest.split_once("*/") else { continue };
        let (Ok(a), Some(t)) = (usize::from_str_radix(addr, 16), text.split(';').next()) else { continue };
        if let Some(o) = out.get_mut(a / 16).filter(|_| a % 16 == 0) {
            *o = t.trim().to_string();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    for (t, w) in out.iter().zip(words) {
        assert!(!t.is_empty(), "nvdisasm -b {arch} listed nothing for {}", hmul2_harness::isa::format_hex(*w));
    }
    out
}
