//! Test vectors: one execution of one encoding per JSON line, with what it must produce.
//!
//! `{"encoding":"0x<32 hex>","a":"0x<8 hex>","b":"0x<8 hex>","d":"0x<8 hex>","pred":"0x<2 hex>",
//! "expect":"0x<8 hex>","origin":"..."}`; other keys are allowed and ignored (a key named
//! twice is malformed). `pred` bit i is Pi. A three-source instruction (HFMA2, HFMA2.MMA)
//! has `"c":"0x<8 hex>"` after `b`, operand 3's value, in nvdisasm's operand order; a
//! two-source one has no `c`. `origin` is `reference` or `hardware:<GPU name>:<driver version>:<date>`.
//! A run on another architecture than SM90 writes `"arch":"SM86"` (nvdisasm's spelling)
//! before `origin`; a line without it is SM90's.
//!
//! `"expect_pred":"0x<2 hex>"` after `expect`: the predicate file P0..P6 after the
//! instruction (bit i = Pi). Required with `expect` of an instruction that writes
//! predicates ([`crate::reference::writes_preds`]); a line of one that writes none (HMUL2,
//! HADD2, HFMA2, HFMA2.MMA) has it only where the hardware left the file other than `pred`
//! (evidence of a clobbered predicate, which `verify` then reports as a mismatch), so
//! their lines are what they always were.

use crate::inputs::Inputs;
use crate::isa::{self, Inst, Operand2, RZ, URZ};
use std::path::{Path, PathBuf};

/// One case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    pub encoding: u128,
    pub inputs: Inputs,
    /// The destination's value afterwards; absent in input to `eval`.
    pub expect: Option<u32>,
    /// The predicate file P0..P6 afterwards (`"expect_pred"`); absent in input to `eval`
    /// and, in lines of an instruction that writes no predicate, where it is `pred`.
    pub expect_pred: Option<u8>,
    pub origin: String,
    /// The architecture that ran it (an `"arch"` key, nvdisasm's spelling): what reads its
    /// encoding; None for a line that names none (SM90's, or another given by the reader).
    pub arch: Option<&'static harness_isa::target::Target>,
}

/// Why a line is not a vector.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VectorError {
    #[error("not a JSON object: {0}")]
    Json(String),
    #[error("missing key {0:?}")]
    Missing(&'static str),
    #[error("key {key:?}: {value:?} is not \"0x\" + {digits} hex digits")]
    Hex { key: &'static str, value: String, digits: usize },
    #[error("key {0:?} is not a string")]
    NotString(&'static str),
    #[error("the line is not UTF-8")]
    NotUtf8,
    #[error("key \"c\": the instruction has no operand 3")]
    NoOperand3,
    #[error("a line of {0} bytes (at most {max})", max = crate::lines::MAX_LINE)]
    TooLong(usize),
    #[error("key \"arch\": {0}")]
    Arch(String),
    #[error("key \"expect_pred\": {0:#04x} sets bit 7, but there are only P0..P6")]
    PredBit7(u8),
}

/// A JSON object whose keys are distinct: a key named twice is malformed, never "the last
/// one wins".
struct UniqueKeys(serde_json::Map<String, serde_json::Value>);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<UniqueKeys, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some(k) = m.next_key::<String>()? {
                    if out.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!("key {:?} appears twice", crate::lines::excerpt(&k, 40))));
                    }
                    let v = m.next_value()?;
                    out.insert(k, v);
                }
                Ok(UniqueKeys(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Why a well-formed vector cannot be true of any register file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Contradiction {
    #[error("encoding is not a legal instruction of the family: {0}")]
    Illegal(String),
    #[error("operand 1 is RZ but a = {0:#010x}")]
    RzA(u32),
    #[error("operand 2 is RZ/URZ but b = {0:#010x}")]
    RzB(u32),
    #[error("operands 1 and 2 are both R{reg} but a = {a:#010x}, b = {b:#010x}")]
    SameReg { reg: u8, a: u32, b: u32 },
    #[error("destination R{reg} is also operand {operand} but d = {d:#010x} and that operand = {src:#010x}")]
    DstIsSource { reg: u8, operand: u8, d: u32, src: u32 },
    #[error("operand 3 is RZ/URZ but c = {0:#010x}")]
    RzC(u32),
    #[error("operands {operand} and 3 are both R{reg} but their values are {v:#010x} and c = {c:#010x}")]
    SameRegC { reg: u8, operand: u8, v: u32, c: u32 },
    #[error("destination is RZ but d = {0:#010x}")]
    RzD(u32),
    #[error("pred = {0:#04x} sets bit 7, but there are only P0..P6")]
    PredBit7(u8),
}

fn hex_field(o: &serde_json::Map<String, serde_json::Value>, key: &'static str, digits: usize) -> Result<Option<u128>, VectorError> {
    let Some(v) = o.get(key) else { return Ok(None) };
    let s = v.as_str().ok_or(VectorError::NotString(key))?;
    let bad = || VectorError::Hex { key, value: crate::lines::excerpt(s, 40), digits };
    let h = s.strip_prefix("0x").ok_or_else(bad)?;
    if h.len() != digits || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad());
    }
    u128::from_str_radix(h, 16).map(Some).map_err(|_| bad())
}

/// Parses one line. `expect` may be absent (input to `eval`); `origin` defaults to empty.
pub fn parse_line(line: &str) -> Result<Vector, VectorError> {
    let o = match serde_json::from_str::<UniqueKeys>(line) {
        Ok(UniqueKeys(o)) => o,
        // the same words as before for a line that is JSON but not an object
        Err(_) if serde_json::from_str::<serde_json::Value>(line).is_ok_and(|v| !v.is_object()) => return Err(VectorError::Json("not an object".into())),
        Err(e) => return Err(VectorError::Json(e.to_string())),
    };
    let o = &o;
    let need = |key: &'static str, digits: usize| hex_field(o, key, digits)?.ok_or(VectorError::Missing(key));
    let encoding = need("encoding", 32)?;
    let arch = match o.get("arch") {
        None => None,
        Some(s) => Some(harness_isa::target::Target::parse(s.as_str().ok_or(VectorError::NotString("arch"))?).map_err(|e| VectorError::Arch(e.to_string()))?),
    };
    let target = arch.unwrap_or(harness_isa::target::Target::DEFAULT);
    let a = need("a", 8)? as u32;
    let b = need("b", 8)? as u32;
    let d = need("d", 8)? as u32;
    let pred = need("pred", 2)? as u8;
    // operand 3: required of a three-source instruction, refused of a two-source one
    let op = isa::decode::form_of_for(target, encoding).map(|(op, _)| op).ok();
    let sources = op.map(|op| op.spec().sources);
    let c = match (hex_field(o, "c", 8)?, sources) {
        (None, Some(3)) => return Err(VectorError::Missing("c")),
        (Some(_), Some(n)) if n < 3 => return Err(VectorError::NoOperand3),
        (c, _) => c.unwrap_or(0) as u32,
    };
    let expect = hex_field(o, "expect", 8)?.map(|e| e as u32);
    let expect_pred = hex_field(o, "expect_pred", 2)?.map(|p| p as u8);
    if let Some(p) = expect_pred.filter(|p| p & 0x80 != 0) {
        return Err(VectorError::PredBit7(p));
    }
    // an instruction that writes predicates: its recorded result is incomplete without them
    let writes = op.is_some_and(crate::reference::writes_preds);
    if writes && expect.is_some() && expect_pred.is_none() {
        return Err(VectorError::Missing("expect_pred"));
    }
    let origin = match o.get("origin") {
        None => String::new(),
        Some(s) => s.as_str().ok_or(VectorError::NotString("origin"))?.to_string(),
    };
    Ok(Vector { encoding, inputs: Inputs { a, b, d, pred, c }, expect, expect_pred, origin, arch })
}

/// Whether `encoding` is a three-source instruction's; None for a word with no form.
pub fn three_source(encoding: u128) -> Option<bool> {
    three_source_for(harness_isa::target::Target::DEFAULT, encoding)
}

/// [`three_source`] of a word as `target` reads it.
pub fn three_source_for(target: &'static harness_isa::target::Target, encoding: u128) -> Option<bool> {
    isa::decode::form_of_for(target, encoding).ok().map(|(op, _)| op.spec().sources == 3)
}

/// Whether a line has a `c` key, given [`three_source`] of its word: always for a
/// three-source instruction, never for a two-source one (their lines are what they always
/// were), and for a word with no form when `c` is not 0, so that every line re-parses to
/// its vector. The one rule for [`to_line`] and every fast writer of lines.
pub fn has_c(three: Option<bool>, c: u32) -> bool {
    three.unwrap_or(c != 0)
}

/// One line, keys in the documented order; no `expect` key when it is unknown.
pub fn to_line(v: &Vector) -> String {
    let x = &v.inputs;
    let expect = v.expect.map(|e| format!(",\"expect\":\"0x{e:08x}\"")).unwrap_or_default();
    let expect_pred = v.expect_pred.map(|p| format!(",\"expect_pred\":\"0x{p:02x}\"")).unwrap_or_default();
    let c = if has_c(three_source_for(v.arch.unwrap_or(harness_isa::target::Target::DEFAULT), v.encoding), x.c) {
        format!(",\"c\":\"0x{:08x}\"", x.c)
    } else {
        String::new()
    };
    // the architecture before `origin`, as the runner's fast writer puts it
    let arch = v.arch.map(|t| format!(",\"arch\":\"{}\"", t.nvdisasm)).unwrap_or_default();
    format!(
        "{{\"encoding\":\"{}\",\"a\":\"0x{:08x}\",\"b\":\"0x{:08x}\"{c},\"d\":\"0x{:08x}\",\"pred\":\"0x{:02x}\"{expect}{expect_pred}{arch},\"origin\":{}}}",
        isa::format_hex(v.encoding),
        x.a,
        x.b,
        x.d,
        x.pred,
        serde_json::Value::String(v.origin.clone())
    )
}

/// The vector's instruction, if its encoding is legal and it cannot contradict itself.
pub fn check(v: &Vector) -> Result<Inst, Contradiction> {
    check_as(v, v.arch.unwrap_or(harness_isa::target::Target::DEFAULT))
}

/// [`check`] of the vector's encoding as `target` reads it.
pub fn check_as(v: &Vector, target: &'static harness_isa::target::Target) -> Result<Inst, Contradiction> {
    let i = isa::decode_for(target, v.encoding).map_err(|e| Contradiction::Illegal(e.to_string()))?;
    let x = &v.inputs;
    if x.pred & 0x80 != 0 {
        return Err(Contradiction::PredBit7(x.pred));
    }
    if i.a == RZ && x.a != 0 {
        return Err(Contradiction::RzA(x.a));
    }
    match i.b {
        Operand2::Reg(RZ) | Operand2::Ur(URZ) if x.b != 0 => return Err(Contradiction::RzB(x.b)),
        Operand2::Reg(r) if r == i.a && r != RZ && x.a != x.b => return Err(Contradiction::SameReg { reg: r, a: x.a, b: x.b }),
        _ => {}
    }
    match i.c {
        Some(Operand2::Reg(RZ) | Operand2::Ur(URZ)) if x.c != 0 => return Err(Contradiction::RzC(x.c)),
        Some(Operand2::Reg(r)) if r == i.a && r != RZ && x.a != x.c => return Err(Contradiction::SameRegC { reg: r, operand: 1, v: x.a, c: x.c }),
        Some(Operand2::Reg(r)) if i.b == Operand2::Reg(r) && r != RZ && x.b != x.c => {
            return Err(Contradiction::SameRegC { reg: r, operand: 2, v: x.b, c: x.c })
        }
        _ => {}
    }
    if i.dst == RZ {
        if x.d != 0 {
            return Err(Contradiction::RzD(x.d));
        }
    } else if i.dst == i.a && x.d != x.a {
        return Err(Contradiction::DstIsSource { reg: i.dst, operand: 1, d: x.d, src: x.a });
    } else if i.b == Operand2::Reg(i.dst) && x.d != x.b {
        return Err(Contradiction::DstIsSource { reg: i.dst, operand: 2, d: x.d, src: x.b });
    } else if i.c == Some(Operand2::Reg(i.dst)) && x.d != x.c {
        return Err(Contradiction::DstIsSource { reg: i.dst, operand: 3, d: x.d, src: x.c });
    }
    Ok(i)
}

include!(concat!(env!("OUT_DIR"), "/builtin_vectors.rs"));

/// The name that stands for the built-in reference vectors ([`BUILTIN`]) among the paths
/// [`for_each_line`] takes: what `run` replays when no `vectors/` folder is at hand.
pub const BUILTIN_DIR: &str = "built-in:vectors/reference";

/// A file to read: on disk, or built in.
enum Source {
    File(PathBuf),
    Builtin(&'static str, &'static str),
}

/// Where a line came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    pub item: T,
}

impl<T> Located<T> {
    pub fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

/// Why a path could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct ReadError {
    pub path: String,
    pub source: std::io::Error,
}

fn collect(path: &Path, out: &mut Vec<PathBuf>, seen: &mut std::collections::BTreeSet<PathBuf>) -> Result<(), ReadError> {
    // an empty argument is named as such, not as a blank before the colon
    let name = if path.as_os_str().is_empty() { "\"\" (an empty path)".to_string() } else { path.display().to_string() };
    let err = |source: std::io::Error| ReadError { path: name.clone(), source };
    let meta = std::fs::metadata(path).map_err(err)?;
    // each file and folder once, however many links lead to it (a link loop ends here)
    if !seen.insert(std::fs::canonicalize(path).map_err(err)?) {
        return Ok(());
    }
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path).map_err(err)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>().map_err(err)?;
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "jsonl") {
                collect(&e, out, seen)?;
            }
        }
    } else if meta.is_file() {
        out.push(path.to_path_buf());
    } else {
        // a FIFO would block forever, a device such as /dev/zero never ends
        return Err(err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file (a FIFO, socket or device)")));
    }
    Ok(())
}

/// Every non-blank line of the given files and of the `*.jsonl` files under the given
/// folders (recursively, sorted by path, each file once), parsed, each with its file and
/// line. Only regular files are read; a line longer than [`crate::lines::MAX_LINE`] is a
/// malformed vector whose bytes are never held.
pub fn read_paths<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<Located<Result<Vector, VectorError>>>, ReadError> {
    let mut out = Vec::new();
    for_each_line(paths, |l| {
        out.push(l);
        Ok::<(), ReadError>(())
    })?;
    Ok(out)
}

/// [`read_paths`] without holding the lines: `each` gets every parsed line in turn, read
/// through one buffer ([`crate::lines::each_line`]), so memory stays flat whatever the files
/// hold. A file that cannot be read is a [`ReadError`] (as `E`), after the lines before it
/// were handed on; the first error `each` returns ends the reading.
pub fn for_each_line<P: AsRef<Path>, E: From<ReadError>>(
    paths: &[P],
    mut each: impl FnMut(Located<Result<Vector, VectorError>>) -> Result<(), E>,
) -> Result<(), E> {
    let mut files = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut sources = Vec::new();
    for p in paths {
        if p.as_ref() == Path::new(BUILTIN_DIR) {
            sources.extend(BUILTIN.iter().map(|(name, text)| Source::Builtin(name, text)));
            continue;
        }
        collect(p.as_ref(), &mut files, &mut seen)?;
        sources.extend(files.drain(..).map(Source::File));
    }
    for s in sources {
        let f = match &s {
            Source::File(f) => f.clone(),
            Source::Builtin(name, _) => Path::new(BUILTIN_DIR).join(name),
        };
        let unreadable = |source| E::from(ReadError { path: f.display().to_string(), source });
        let r: Box<dyn std::io::Read> = match s {
            Source::File(_) => Box::new(crate::lines::open_regular(&f).map_err(unreadable)?),
            Source::Builtin(_, text) => Box::new(text.as_bytes()),
        };
        let mut n = 0;
        crate::lines::each_line(r, None, unreadable, |line| {
            n += 1;
            // line by line, so a line that is not UTF-8 is one malformed vector, not an unreadable file
            let item = match line.map(std::str::from_utf8) {
                Ok(Ok(l)) if l.trim().is_empty() => return Ok(()),
                Ok(Ok(l)) => parse_line(l),
                Ok(Err(_)) => Err(VectorError::NotUtf8),
                Err(len) => Err(VectorError::TooLong(len)),
            };
            each(Located { file: f.clone(), line: n, item })
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_vectors_are_the_committed_ones() {
        let mut built_in = 0;
        for_each_line(&[BUILTIN_DIR], |l| {
            assert!(l.item.is_ok(), "{}", l.at());
            built_in += 1;
            Ok::<(), ReadError>(())
        })
        .unwrap();
        let on_disk = read_paths(&[Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/reference")]).unwrap().len();
        assert_eq!(built_in, on_disk);
        assert!(built_in > 1000);
    }

    #[test]
    fn line_round_trip_and_extra_keys() {
        let v = Vector {
            encoding: 0x0000_0fc0_0000_0000_4000_3c00_0005_7832,
            inputs: Inputs { a: 1, b: 2, d: 3, pred: 0x45, c: 0 },
            expect: Some(0xdead_beef),
            expect_pred: None,
            origin: "hardware:NVIDIA H100:580.1:2026-01-01".into(),
            arch: None,
        };
        let l = to_line(&v);
        assert_eq!(parse_line(&l), Ok(v.clone()));
        let extra = l.replacen('{', "{\"note\":[1,2],", 1);
        assert_eq!(parse_line(&extra), Ok(v));
    }

    /// Predicates recorded after the instruction round trip as `expect_pred` after
    /// `expect`; a line without it is what it always was; P7 is no predicate.
    #[test]
    fn predicate_results_round_trip_and_bit_7_is_malformed() {
        let v = Vector {
            encoding: 0x0000_0fc0_0000_0000_4000_3c00_0005_7832,
            inputs: Inputs { a: 1, b: 2, d: 3, pred: 0x45, c: 0 },
            expect: Some(0xdead_beef),
            expect_pred: Some(0x2a),
            origin: "reference".into(),
            arch: None,
        };
        let l = to_line(&v);
        assert!(l.contains(r#""expect":"0xdeadbeef","expect_pred":"0x2a","origin""#), "{l}");
        assert_eq!(parse_line(&l), Ok(v.clone()));
        let without = to_line(&Vector { expect_pred: None, ..v.clone() });
        assert!(!without.contains("expect_pred"), "{without}");
        assert_eq!(parse_line(&l.replace("\"0x2a\"", "\"0xaa\"")), Err(VectorError::PredBit7(0xaa)));
        assert!(matches!(parse_line(&l.replace("\"0x2a\"", "\"0x2\"")), Err(VectorError::Hex { key: "expect_pred", .. })));
        assert_eq!(parse_line(&l.replace("\"0x2a\"", "42")), Err(VectorError::NotString("expect_pred")));
    }

    /// An illegal word of a three-source opcode keeps the `c` its line gave (a mutated
    /// line once lost it on printing, and re-parsed to another vector).
    #[test]
    fn an_illegal_words_c_survives_the_round_trip() {
        let l = r#"{"encoding":"0x000dfe800001c6c8e008026e01bff731","a":"0x00000000","b":"0x00000000","c":"0xf0000000","d":"0x00000000","pred":"0x00","expect":"0x00000000","origin":"reference"}"#;
        let v = parse_line(l).unwrap();
        assert!(isa::decode::form_of(v.encoding).is_err(), "the word has no form");
        assert_eq!(v.inputs.c, 0xf000_0000);
        assert_eq!(parse_line(&to_line(&v)), Ok(v));
    }

    #[test]
    fn malformed_fields_are_named() {
        assert!(matches!(parse_line("{"), Err(VectorError::Json(_))));
        assert_eq!(parse_line(r#"{"a":"0x00000000"}"#), Err(VectorError::Missing("encoding")));
        let l = r#"{"encoding":"0x000000000000000000000000000000","a":"0x0","b":"0x00000000","d":"0x00000000","pred":"0x00"}"#;
        assert!(matches!(parse_line(l), Err(VectorError::Hex { key: "encoding", .. })));
    }
}
