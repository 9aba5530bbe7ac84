//! The project's decode + render judged by nvdisasm, word by word.

use crate::isa::{decode, decode_for, format_hex, render, render_for, Illegal, Op};
use crate::nvdisasm::{Nvdisasm, ToolError, Verdict};
use crate::target::Target;
use serde::{Deserialize, Serialize};

/// `hmul2-harness oracle --report FILE`: the seed, the comparison and the words' coverage.
/// Read tolerantly (missing keys take defaults, unknown keys are ignored) by the HTML report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OracleFile {
    pub seed: u64,
    pub report: OracleReport,
    pub coverage: Option<crate::gen::Coverage>,
}

/// One disagreement between the project and nvdisasm.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Mismatch {
    pub word: String,
    pub ours: String,
    pub nvdisasm: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n    ours:     {}\n    nvdisasm: {}", self.word, self.ours, self.nvdisasm)
    }
}

/// Totals of a comparison.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OracleReport {
    pub words: usize,
    pub agreed_text: usize,
    /// Words both call illegal: nvdisasm rejects them, or prints nothing where the spec says it does.
    pub agreed_illegal: usize,
    /// Of those, the words nvdisasm printed nothing for.
    pub agreed_empty: usize,
    pub mismatches: Vec<Mismatch>,
    pub nvdisasm_calls: u64,
    /// Verdicts taken from nvdisasm's cache (its own earlier answers; `nvdisasm::cache`).
    pub cached: u64,
}

impl OracleReport {
    pub fn ok(&self) -> bool {
        self.mismatches.is_empty() && self.words == self.agreed_text + self.agreed_illegal
    }
}

/// What the project says of a word, in the shape nvdisasm's verdict is compared with.
pub fn ours(word: u128) -> Result<String, Illegal> {
    decode(word).map(|i| render(&i))
}

/// [`ours`] on `target` (decoded and rendered by its spec).
pub fn ours_for(target: &'static Target, word: u128) -> Result<String, Illegal> {
    if target.spec_overlay.is_none() {
        return ours(word);
    }
    let i = decode_for(target, word)?;
    // decode_for gives only instructions the target has
    Ok(render_for(target, &i).unwrap_or_default())
}

/// Compare one word's two verdicts; None when they agree.
pub fn judge(word: u128, theirs: &Verdict) -> Option<Mismatch> {
    judge_for(Target::DEFAULT, word, theirs)
}

/// [`judge`] of a word of `target`.
pub fn judge_for(target: &'static Target, word: u128, theirs: &Verdict) -> Option<Mismatch> {
    let mine = ours_for(target, word);
    let agree = match (&mine, theirs) {
        (Ok(a), Verdict::Text(b)) => a == b,
        // another instruction entirely: both say "not one of the family"
        (Err(e), Verdict::Text(b)) if e.is_other_instruction() => {
            !b.split_whitespace().any(|t| Op::ALL.iter().any(|o| t.split('.').next() == Some(o.mnemonic())))
        }
        // nvdisasm prints nothing for the word: the spec's rule says so (or it is no instruction of the family)
        (Err(e), Verdict::Empty) => e.prints_nothing() || e.is_other_instruction(),
        (Err(e), Verdict::Rejected(_)) => !e.prints_nothing(),
        _ => false,
    };
    if agree {
        return None;
    }
    Some(Mismatch {
        word: format_hex(word),
        ours: match mine {
            Ok(t) => t,
            Err(e) => format!("illegal: {e}"),
        },
        nvdisasm: match theirs {
            Verdict::Text(t) => t.clone(),
            Verdict::Rejected(m) => format!("rejected: {m}"),
            Verdict::Empty => "prints nothing (exit 0, no line at the word's address)".into(),
        },
    })
}

/// Disassemble `words` with nvdisasm and compare every one, on the target `nv` names
/// ([`Nvdisasm::for_target`]; SM90 by default).
pub fn compare(nv: &Nvdisasm, words: &[u128]) -> Result<OracleReport, ToolError> {
    let target = nv.target;
    let before = nv.calls.load(std::sync::atomic::Ordering::Relaxed);
    let cached_before = nv.cached.load(std::sync::atomic::Ordering::Relaxed);
    let verdicts = nv.disassemble(words)?;
    let mut r = OracleReport { words: words.len(), ..Default::default() };
    for (&w, v) in words.iter().zip(&verdicts) {
        match judge_for(target, w, v) {
            Some(m) => r.mismatches.push(m),
            None => match v {
                Verdict::Text(_) if decode_for(target, w).is_ok() => r.agreed_text += 1,
                Verdict::Empty => {
                    r.agreed_illegal += 1;
                    r.agreed_empty += 1;
                }
                _ => r.agreed_illegal += 1,
            },
        }
    }
    r.nvdisasm_calls = nv.calls.load(std::sync::atomic::Ordering::Relaxed) - before;
    r.cached = nv.cached.load(std::sync::atomic::Ordering::Relaxed) - cached_before;
    Ok(r)
}
