//! Hardware results as vector lines, in the format `verify` replays and byte for byte what
//! [`crate::vectors::to_line`] writes. A run at full speed observes millions of results a
//! second, so the lines are written here without a formatter: hex digits from a table into
//! a reused buffer, the origin escaped once.

use super::engine::Observed;
use crate::vectors::{has_c, three_source_for, to_line, Vector};

/// Writes observed results as vector lines with one origin.
pub struct VectorWriter {
    /// `,"origin":"<escaped>"}` + newline: the same for every line.
    tail: Vec<u8>,
    /// The architecture that reads the words (whether a line has a `c`).
    target: &'static crate::target::Target,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_into(out: &mut Vec<u8>, v: u128, digits: usize) {
    out.extend_from_slice(b"0x");
    for k in (0..digits).rev() {
        out.push(HEX[((v >> (4 * k)) & 15) as usize]);
    }
}

/// Whether a line records the predicates after (`expect_pred`): always for an instruction
/// that writes some, and for one that writes none where the hardware left the file other
/// than it was (evidence, which `verify` reports as a mismatch); so a line of HMUL2, HADD2,
/// HFMA2 or HFMA2.MMA that behaved is what it always was.
pub fn expect_pred(writes: bool, before: u8, after: u8) -> bool {
    writes || after != before & 0x7f
}

/// Whether `word`, as `target` reads it, is an instruction that writes predicates.
fn writes_preds_for(target: &'static crate::target::Target, word: u128) -> bool {
    crate::isa::decode::form_of_for(target, word).is_ok_and(|(op, _)| crate::reference::writes_preds(op))
}

impl VectorWriter {
    /// Lines of an SM90 run: as they always were, no `arch` key.
    pub fn new(origin: &str) -> VectorWriter {
        VectorWriter::for_arch(origin, crate::target::Target::DEFAULT)
    }

    /// Lines of a run of `target`: another than SM90 names itself in an `"arch"` key
    /// before `origin` (a reader that knows no `arch` ignores it, as every other key it does
    /// not know; a line without one is SM90's).
    pub fn for_arch(origin: &str, target: &'static crate::target::Target) -> VectorWriter {
        let mut w = VectorWriter::of_origin(origin);
        w.target = target;
        if target != crate::target::Target::DEFAULT {
            let mut tail = format!(",\"arch\":\"{}\"", target.nvdisasm).into_bytes();
            tail.extend_from_slice(&w.tail);
            w.tail = tail;
        }
        w
    }

    fn of_origin(origin: &str) -> VectorWriter {
        // the tail as `to_line` spells it, so escaping has one definition
        let probe = to_line(&Vector { encoding: 0, inputs: Default::default(), expect: Some(0), expect_pred: None, origin: origin.to_string(), arch: None });
        let at = probe.find(",\"origin\":").unwrap_or(probe.len());
        let mut tail = probe.as_bytes()[at..].to_vec();
        tail.push(b'\n');
        VectorWriter { tail, target: crate::target::Target::DEFAULT }
    }

    /// Append one line per observation to `out`.
    pub fn write(&mut self, obs: &[Observed], out: &mut Vec<u8>) -> std::io::Result<()> {
        out.reserve(obs.len() * (145 + self.tail.len()));
        // operand 3 for three-source instructions, and for a word of no form a `c` it was
        // given, as `to_line` writes it (observations come grouped by word: the lookup is
        // once a word)
        let mut last: Option<(u128, Option<bool>, bool)> = None;
        for o in obs {
            let (three, writes) = match last {
                Some((w, t, p)) if w == o.word => (t, p),
                _ => {
                    let t = three_source_for(self.target, o.word);
                    let p = writes_preds_for(self.target, o.word);
                    last = Some((o.word, t, p));
                    (t, p)
                }
            };
            let x = &o.inputs;
            out.extend_from_slice(b"{\"encoding\":\"");
            hex_into(out, o.word, 32);
            out.extend_from_slice(b"\",\"a\":\"");
            hex_into(out, x.a as u128, 8);
            out.extend_from_slice(b"\",\"b\":\"");
            hex_into(out, x.b as u128, 8);
            if has_c(three, x.c) {
                out.extend_from_slice(b"\",\"c\":\"");
                hex_into(out, x.c as u128, 8);
            }
            out.extend_from_slice(b"\",\"d\":\"");
            hex_into(out, x.d as u128, 8);
            out.extend_from_slice(b"\",\"pred\":\"");
            hex_into(out, x.pred as u128, 2);
            out.extend_from_slice(b"\",\"expect\":\"");
            hex_into(out, o.got as u128, 8);
            if let Some(p) = o.pred.filter(|&p| expect_pred(writes, x.pred, p)) {
                out.extend_from_slice(b"\",\"expect_pred\":\"");
                hex_into(out, p as u128, 2);
            }
            out.push(b'"');
            out.extend_from_slice(&self.tail);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::Inputs;
    use crate::vectors::parse_line;

    #[test]
    fn lines_are_to_line_byte_for_byte_and_parse_back() {
        let mut r = crate::rng::Rng::fork(3, 3);
        let origin = "hardware:NVIDIA H200 \"NVL\" \\ é:580.65.06:2026-12-02";
        let obs: Vec<Observed> = (0..500)
            .map(|_| Observed {
                word: (r.next_u64() as u128) << 64 | r.next_u64() as u128,
                inputs: Inputs {
                    a: r.next_u64() as u32,
                    b: r.next_u64() as u32,
                    d: r.next_u64() as u32,
                    pred: (r.next_u64() & 0x7f) as u8,
                    c: r.next_u64() as u32,
                },
                got: r.next_u64() as u32,
                // mostly the file as it was; one in four another (a clobbered predicate), some unread
                pred: match r.below(8) {
                    0 => None,
                    1 | 2 => Some((r.next_u64() & 0x7f) as u8),
                    _ => Some(0x7f),
                },
            })
            .map(|o| Observed { pred: o.pred.map(|p| if p == 0x7f { o.inputs.pred } else { p }), ..o })
            .collect();
        let mut out = Vec::new();
        VectorWriter::new(origin).write(&obs, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), obs.len());
        let mut three = 0;
        for (l, o) in lines.iter().zip(&obs) {
            let expect_pred = o.pred.filter(|&p| p != o.inputs.pred);
            let mut v = Vector { encoding: o.word, inputs: o.inputs, expect: Some(o.got), expect_pred, origin: origin.into(), arch: None };
            assert_eq!(*l, to_line(&v));
            three += l.contains("\"c\"") as usize;
            // a two-source line has no c: it parses back as 0
            if !l.contains("\"c\"") {
                v.inputs.c = 0;
            }
            assert_eq!(parse_line(l), Ok(v));
        }
        assert!(three > 0, "no three-source word among the random ones: operand 3 untested");
        let clobbered = lines.iter().filter(|l| l.contains("expect_pred")).count();
        assert!(clobbered > 0 && clobbered < lines.len() / 2, "{clobbered} lines record predicates");
    }

    #[test]
    fn another_architectures_lines_name_it_and_still_parse() {
        let o = Observed { word: 0x000fe200000000000000000201007232, inputs: Inputs::default(), got: 7, pred: Some(0) };
        let (mut sm90, mut sm86) = (Vec::new(), Vec::new());
        VectorWriter::new("reference").write(std::slice::from_ref(&o), &mut sm90).unwrap();
        VectorWriter::for_arch("reference", &crate::target::Target::SM86).write(std::slice::from_ref(&o), &mut sm86).unwrap();
        let (sm90, sm86) = (String::from_utf8(sm90).unwrap(), String::from_utf8(sm86).unwrap());
        assert!(!sm90.contains("arch"), "{sm90}");
        assert!(sm86.contains(",\"arch\":\"SM86\",\"origin\":\"reference\"}"), "{sm86}");
        // the same vector, read as SM86's; `to_line` writes the line the fast writer wrote
        let v = parse_line(sm86.trim_end()).unwrap();
        assert_eq!(v, Vector { arch: Some(&crate::target::Target::SM86), ..parse_line(sm90.trim_end()).unwrap() });
        assert_eq!(to_line(&v), sm86.trim_end());
    }
}
