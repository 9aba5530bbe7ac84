//! `probe`: what each bit of a word does, asked of nvdisasm alone.
//!
//! For a base word, every bit in a range is flipped on its own (and, with `--values`, every
//! value of a small group of adjacent bits is tried); all variants go to nvdisasm in one
//! batch ([`crate::nvdisasm`] isolates the words it rejects), and each variant is reported
//! as the text it prints, `illegal` with nvdisasm's message, `same` (the bit is ignored
//! here) or `empty` (nvdisasm exits 0 and lists nothing for the word: it happens, e.g. for
//! `0x000fe20000000000000000020100720e`). The HADD2 spec (`spec/sm90/hadd2.json`) was
//! derived this way: single-bit flips of one word of each operand form, then `--values`
//! over the form selector and the modifier, format and control groups.

use crate::cli::{CliError, CliResult};
use crate::isa::{format_hex, parse_hex};
use crate::nvdisasm::{Nvdisasm, ToolError, Verdict};
use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub struct ProbeArgs {
    /// The base word: 0x + 32 hex digits, high 64 bits first.
    #[arg(long)]
    pub word: String,
    /// Flip each bit of LO..HI (inclusive) on its own.
    #[arg(long, default_value = "0..127")]
    pub bits: String,
    /// Also try every value of the adjacent bits LO..HI (at most 12 bits).
    #[arg(long)]
    pub values: Option<String>,
    /// The nvdisasm to ask (default: $HMUL2_NVDISASM, the project's .tools/bin, PATH).
    #[arg(long, value_name = "PATH")]
    pub nvdisasm: Option<std::path::PathBuf>,
    /// The architecture nvdisasm is asked about (`-b`): nvdisasm's spelling (SM86) or ptxas's
    /// (sm_86).
    #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE, default_value = "SM90")]
    pub arch: &'static crate::target::Target,
}

/// What nvdisasm made of one variant, compared with the base word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The same text as the base word: the change is ignored here.
    Same,
    /// Another text.
    Text(String),
    /// nvdisasm rejected the word.
    Illegal(String),
    /// nvdisasm exited 0 and listed nothing for the word.
    Empty,
}

/// One probed variant: a label (`bit 78`, `bits 9..11 = 3`), its word and outcome.
#[derive(Clone, Debug)]
pub struct Variant {
    pub label: String,
    pub word: u128,
    pub outcome: Outcome,
}

/// `LO..HI` (inclusive) within the 128-bit word.
pub fn parse_range(s: &str) -> Result<(u8, u8), String> {
    let (a, b) = s.split_once("..").unwrap_or((s, s));
    match (a.trim().parse::<u8>(), b.trim().parse::<u8>()) {
        (Ok(lo), Ok(hi)) if lo <= hi && hi < 128 => Ok((lo, hi)),
        _ => Err(format!("bad bit range {s:?}: expected LO..HI with 0 <= LO <= HI <= 127")),
    }
}

/// `base` with each bit of `lo..=hi` flipped.
pub fn flips(base: u128, lo: u8, hi: u8) -> Vec<(String, u128)> {
    (lo..=hi).map(|b| (format!("bit {b}"), base ^ 1u128 << b)).collect()
}

/// `base` with the bits `lo..=hi` set to every value in turn (the base's own value too).
pub fn values(base: u128, lo: u8, hi: u8) -> Result<Vec<(String, u128)>, String> {
    let n = (hi - lo + 1) as u32;
    if n > 12 {
        return Err(format!("bits {lo}..{hi} are {n} bits; --values takes at most 12"));
    }
    let mask = ((1u128 << n) - 1) << lo;
    Ok((0..1u128 << n).map(|v| (format!("bits {lo}..{hi} = {v:#x}"), base & !mask | v << lo)).collect())
}

/// Whether nvdisasm failed by listing nothing for some word (it then names an address of
/// the batch it was last given, which after isolating rejected words is not ours).
fn lists_nothing(e: &ToolError) -> bool {
    matches!(e, ToolError::Failed { msg, .. } if msg.contains("listing has no instruction at"))
}

/// One outcome per word (Same is decided by the caller): nvdisasm's verdicts; a batch with a
/// word nvdisasm lists nothing for is halved until that word stands alone (such words are rare).
pub fn outcomes(nv: &Nvdisasm, words: &[u128]) -> Result<Vec<Outcome>, ToolError> {
    let mut nv = nv.clone();
    nv.batch = words.len().max(1);
    let mut out = vec![Outcome::Empty; words.len()];
    let mut todo: Vec<Vec<usize>> = vec![(0..words.len()).collect()];
    while let Some(idx) = todo.pop() {
        let batch: Vec<u128> = idx.iter().map(|&i| words[i]).collect();
        match nv.disassemble(&batch) {
            Ok(verdicts) => {
                for (&i, v) in idx.iter().zip(verdicts) {
                    out[i] = match v {
                        Verdict::Text(t) if t.is_empty() => Outcome::Empty,
                        Verdict::Text(t) => Outcome::Text(t),
                        Verdict::Rejected(m) => Outcome::Illegal(m),
                        Verdict::Empty => Outcome::Empty,
                    };
                }
            }
            Err(e) if lists_nothing(&e) && idx.len() == 1 => out[idx[0]] = Outcome::Empty,
            Err(e) if lists_nothing(&e) => {
                let (a, b) = idx.split_at(idx.len() / 2);
                todo.push(a.to_vec());
                todo.push(b.to_vec());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The base word's outcome and every variant's, `Same` where the text does not change.
pub fn probe(nv: &Nvdisasm, base: u128, variants: Vec<(String, u128)>) -> Result<(Outcome, Vec<Variant>), ToolError> {
    let mut words = vec![base];
    words.extend(variants.iter().map(|(_, w)| *w));
    let mut got = outcomes(nv, &words)?.into_iter();
    let first = got.next().unwrap_or(Outcome::Empty);
    let vs = variants
        .into_iter()
        .zip(got)
        .map(|((label, word), o)| {
            let outcome = match (&first, o) {
                (Outcome::Text(a), Outcome::Text(b)) if *a == b => Outcome::Same,
                (_, o) => o,
            };
            Variant { label, word, outcome }
        })
        .collect();
    Ok((first, vs))
}

/// Bit numbers as ranges: `40..59, 64..71, 76`.
pub fn bit_ranges(bits: &[u8]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < bits.len() {
        let mut j = i;
        while j + 1 < bits.len() && bits[j + 1] == bits[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { bits[i].to_string() } else { format!("{}..{}", bits[i], bits[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

fn line(o: &Outcome) -> String {
    match o {
        Outcome::Same => "same".into(),
        Outcome::Text(t) => t.clone(),
        Outcome::Illegal(m) => format!("illegal ({m})"),
        Outcome::Empty => "empty (nvdisasm lists nothing)".into(),
    }
}

/// `hmul2-harness probe --word 0x... [--bits LO..HI] [--values LO..HI]`.
pub fn run(a: ProbeArgs) -> CliResult {
    let base = parse_hex(&a.word).map_err(|e| CliError::input(format!("--word {:?}: {e}", a.word)))?;
    let (lo, hi) = parse_range(&a.bits).map_err(|e| CliError::input(format!("--bits: {e}")))?;
    let mut variants = flips(base, lo, hi);
    if let Some(v) = &a.values {
        let (vlo, vhi) = parse_range(v).map_err(|e| CliError::input(format!("--values: {e}")))?;
        variants.extend(values(base, vlo, vhi).map_err(|e| CliError::input(format!("--values: {e}")))?);
    }
    let nv = Nvdisasm::locate(a.nvdisasm.as_deref()).map_err(|e| CliError::input(e.to_string()))?.for_target(a.arch);
    let (first, vs) = probe(&nv, base, variants).map_err(|e| CliError::input(e.to_string()))?;
    crate::outln!("base {}: {}", format_hex(base), line(&first))?;
    let mut same = Vec::new();
    for v in &vs {
        if v.outcome == Outcome::Same {
            if let Some(b) = v.label.strip_prefix("bit ").and_then(|b| b.parse::<u8>().ok()) {
                same.push(b);
                continue;
            }
        }
        crate::outln!("{}: {}  {}", v.label, format_hex(v.word), line(&v.outcome))?;
    }
    crate::outln!("same text (ignored here): {}", if same.is_empty() { "none".into() } else { bit_ranges(&same) })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_variants() {
        assert_eq!(parse_range("9..11"), Ok((9, 11)));
        assert_eq!(parse_range("78"), Ok((78, 78)));
        assert!(parse_range("11..9").is_err() && parse_range("0..128").is_err());
        assert_eq!(bit_ranges(&[40, 41, 42, 64, 76, 77]), "40..42, 64, 76..77");
        assert_eq!(flips(0, 3, 4), vec![("bit 3".to_string(), 8), ("bit 4".to_string(), 16)]);
        let v = values(0x230, 9, 11).unwrap();
        assert_eq!(v.len(), 8);
        assert_eq!(v[3].1, 0x630);
        assert!(values(0, 0, 12).is_err());
    }
}
