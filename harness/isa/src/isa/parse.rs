//! nvdisasm-style text → [`Inst`]; the inverse of [`super::render()`].
//!
//! Text carries less than the word: control bits other than `.reuse`, ignored bits and
//! NaN payloads are not printed, and `HMUL2.INVALID3` names both format = INVALID3 and
//! flush = INVALID3. Parsing takes control bits from [`Control::default`], zero ignored
//! bits, canonical NaNs (the yield bit is set when a `.reuse` is shown, as nvdisasm shows
//! it only then), and reads modifiers in field order (format, flush, sat), first fit.

use super::floattext::{parse_imm, Half};
use super::*;

/// Why a text is not an instruction of the family. Its message quotes a bounded excerpt of
/// the text and the reason, never a whole runaway input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse {:?}: {}", crate::lines::excerpt(text, 120), crate::lines::excerpt(reason, 200))]
pub struct ParseError {
    pub text: String,
    pub reason: String,
}

fn err<T>(text: &str, reason: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError { text: text.to_string(), reason: reason.into() })
}

fn reg_number(s: &str, prefix: &str, zero: u8, max: u32) -> Option<u8> {
    let rest = s.strip_prefix(prefix)?;
    if rest == "Z" {
        return Some(zero);
    }
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) || (rest.len() > 1 && rest.starts_with('0')) {
        return None;
    }
    let n: u32 = rest.parse().ok()?;
    (n <= max && n != zero as u32).then_some(n as u8)
}

fn parse_hex_num(s: &str) -> Option<i64> {
    let (neg, t) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s),
    };
    let digits = t.strip_prefix("0x")?;
    let v = i64::from_str_radix(digits, 16).ok()?;
    Some(if neg { -v } else { v })
}

fn swizzle_by_name(names: &[String], name: &str) -> Option<Swizzle> {
    names.iter().position(|v| !v.is_empty() && v == name).map(|i| Swizzle::from_bits(i as u32))
}

/// A source with its decorations stripped: `-|X.SWZ|`, `-|X|.reuse.SWZ`.
struct Src<'a> {
    core: &'a str,
    mods: SrcMods,
    reuse: bool,
}

fn parse_src<'a>(full: &str, op: &'a str, swz: &[String]) -> Result<Src<'a>, ParseError> {
    let mut s = op.trim();
    let mut mods = SrcMods::default();
    if let Some(r) = s.strip_prefix('-') {
        mods.neg = true;
        s = r;
    }
    let mut reuse = false;
    if let Some(r) = s.strip_prefix('|') {
        mods.abs = true;
        // |X|.reuse.SWZ (registers) or |X.SWZ| (other operands)
        let close = match r.rfind('|') {
            Some(c) => c,
            None => return err(full, format!("unbalanced | in {op:?}")),
        };
        let (inner, after) = (&r[..close], &r[close + 1..]);
        let mut core = inner;
        let mut tail = after;
        if after.is_empty() {
            // suffixes inside the bars
            tail = "";
            if let Some(dot) = inner.rfind('.') {
                if let Some(z) = swizzle_by_name(swz, &inner[dot + 1..]) {
                    mods.swizzle = z;
                    core = &inner[..dot];
                }
            }
        }
        for part in tail.split('.').filter(|p| !p.is_empty()) {
            if part == "reuse" && mods.swizzle == Swizzle::H1H0 {
                reuse = true;
            } else if let Some(z) = swizzle_by_name(swz, part) {
                mods.swizzle = z;
            } else {
                return err(full, format!("unknown operand suffix .{part}"));
            }
        }
        return Ok(Src { core, mods, reuse });
    }
    // X[.reuse][.SWZ]; a c[..] [..] core has no dots of its own
    let mut parts = s.split('.');
    let core = parts.next().unwrap_or("");
    for part in parts {
        if part == "reuse" && !reuse && mods.swizzle == Swizzle::H1H0 {
            reuse = true;
        } else if let Some(z) = swizzle_by_name(swz, part) {
            if mods.swizzle != Swizzle::H1H0 {
                return err(full, "two half selects");
            }
            mods.swizzle = z;
        } else {
            return err(full, format!("unknown operand suffix .{part}"));
        }
    }
    Ok(Src { core, mods, reuse })
}

/// Parse one instruction text (a trailing `;` is allowed).
pub fn parse(text: &str) -> Result<Inst, ParseError> {
    parse_for(&Target::SM90, text)
}

/// [`parse()`] of `target`'s text: its instructions, modifiers and register names.
pub fn parse_for(target: &'static Target, text: &str) -> Result<Inst, ParseError> {
    let full = text.trim();
    let mut s = full.strip_suffix(';').unwrap_or(full).trim();
    let mut pred = Pred::ALWAYS;
    if let Some(r) = s.strip_prefix('@') {
        let (p, rest) = r.split_once(' ').unwrap_or((r, ""));
        let (neg, p) = match p.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, p),
        };
        let index = if p == "PT" {
            PT
        } else {
            match p.strip_prefix('P').and_then(|n| n.parse::<u8>().ok()).filter(|&n| n < PT && p.len() == 2) {
                Some(n) => n,
                None => return err(full, format!("bad predicate @{p}")),
            }
        };
        pred = Pred { index, negated: neg };
        s = rest.trim_start();
    }
    let (head, ops) = s.split_once(' ').unwrap_or((s, ""));
    // the longest mnemonic the head starts with (HFMA2.MMA before HFMA2), then its modifiers
    let Some(op) = Op::all_for(target)
        .filter(|o| head == o.mnemonic() || head.strip_prefix(o.mnemonic()).is_some_and(|r| r.starts_with('.')))
        .max_by_key(|o| o.mnemonic().len())
    else {
        return err(full, format!("unknown mnemonic {:?}", head.split('.').next().unwrap_or("")));
    };
    let Some(l) = op.layout_for(target) else { return err(full, format!("{target} has no {op}")) };
    let rest = &head[op.mnemonic().len()..];
    let mods: Vec<&str> = rest.split('.').skip(1).collect();
    if let Some(t) = &l.spec.text {
        return parse_shaped(full, l, op, pred, &mods, ops, t);
    }
    let mut k = 0;
    let mut vals = [0u32; 4];
    // a field nvdisasm always ignores (a `hidden` rule of no condition: SM80's HFMA2.MMA has
    // no format) names no modifier
    let always_hidden = |f: &crate::spec::Field| l.spec.hidden.iter().any(|h| h.when.is_empty() && h.forms.is_empty() && l.spec.fields[h.field].mask == f.mask);
    for (slot, f) in [Some(&l.format), Some(&l.flush), Some(&l.sat), l.relu.as_ref()].into_iter().enumerate() {
        let Some(f) = f.filter(|f| !always_hidden(f)) else { continue };
        if let Some(m) = mods.get(k) {
            if let Some(v) = f.values.iter().position(|n| !n.is_empty() && n == m) {
                vals[slot] = v as u32;
                k += 1;
            }
        }
    }
    if k != mods.len() {
        return err(full, format!("unknown or misplaced modifier .{}", mods[k]));
    }
    let ops: Vec<&str> = ops.split(',').map(str::trim).collect();
    if ops.len() < 3 {
        return err(full, "expected at least three operands");
    }
    let dst = match reg_number(ops[0], "R", RZ, 254) {
        Some(r) => r,
        None => return err(full, format!("bad destination {:?}", ops[0])),
    };
    let a = parse_src(full, ops[1], &l.a_swz_names)?;
    let a_reg = match reg_number(a.core, "R", RZ, 254) {
        Some(r) => r,
        None => return err(full, format!("bad operand 1 {:?}", ops[1])),
    };
    let format = l.format_of.get(vals[0] as usize).copied().unwrap_or(Format::Invalid3);
    let mut ctrl = Control::default();
    if a.reuse {
        ctrl.reuse |= 1 << l.spec.reuse_a;
    }
    if l.spec.sources == 3 {
        return parse_three(full, l, op, &ops, pred, dst, a_reg, a.mods, ctrl, vals);
    }
    let (b, b_mods) = if ops.len() == 4 {
        let h = if format == Format::Bf16 { Half::Bf16 } else { Half::F16 };
        let first = parse_imm(h, ops[2]).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad immediate {:?}", ops[2]) })?;
        let second = parse_imm(h, ops[3]).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad immediate {:?}", ops[3]) })?;
        (Operand2::Imm { first, second }, SrcMods::default())
    } else if let Some(second) = (ops.len() == 3 && format == Format::F32).then(|| parse_imm(Half::F16, ops[2])).flatten() {
        // one immediate: .F32 reads only the low half (nvdisasm ignores bits 48..63)
        (Operand2::Imm { first: 0, second }, SrcMods::default())
    } else if ops.len() == 3 {
        let (b, mods, reuse) = parse_operand(full, l, ops[2], &l.b_swz_names)?;
        if reuse {
            ctrl.reuse |= 1 << l.spec.reuse_b;
        }
        (b, mods)
    } else {
        return err(full, format!("expected 3 or 4 operands, found {}", ops.len()));
    };
    // nvdisasm prints .reuse only with the yield bit set
    if ctrl.reuse != 0 {
        ctrl.yield_ = true;
    }
    let flush = l.flush_of.get(vals[1] as usize).copied().unwrap_or(Flush::Invalid3);
    Ok(Inst { pred, dst, a: a_reg, a_mods: a.mods, b, b_mods, format, flush, sat: vals[2] != 0, ctrl, ..Inst::bare(op) })
}

/// A predicate operand: `P3`, `PT`, and with `negatable` `!P3`, `!PT`.
fn parse_pred_operand(full: &str, text: &str, negatable: bool) -> Result<Pred, ParseError> {
    let (negated, p) = match text.strip_prefix('!') {
        Some(p) if negatable => (true, p),
        _ => (false, text),
    };
    let index = match p {
        "PT" => PT,
        _ => match p.strip_prefix('P').and_then(|n| n.parse::<u8>().ok()).filter(|&n| n < PT && p.len() == 2) {
            Some(n) => n,
            None => return err(full, format!("bad predicate operand {text:?}")),
        },
    };
    Ok(Pred { index, negated })
}

/// An instruction whose spec gives its text order (`text`): its suffixes in that order (first
/// fit; a field with no empty value name, the comparison and the boolean operation, must
/// show), then its operands in that order (HMNMX2's predicate results only with `.IS_A`).
fn parse_shaped(full: &str, l: &crate::spec::Layout, op: Op, pred: Pred, mods: &[&str], ops: &str, t: &crate::spec::TextOrder) -> Result<Inst, ParseError> {
    let mut i = Inst::of(op, RZ, RZ, Operand2::Reg(RZ));
    i.pred = pred;
    i.pdst = None;
    let mut is_a = false;
    let mut k = 0;
    for n in &t.suffixes {
        let f = l.spec.field(n);
        let at = mods.get(k).and_then(|m| f.values.iter().position(|v| !v.is_empty() && v == m));
        let v = match at {
            Some(v) => {
                k += 1;
                v
            }
            None => match f.values.iter().position(|v| v.is_empty()) {
                Some(v) => v,
                None => return err(full, format!("no .{} modifier (one of {})", n.to_uppercase(), f.values.join(", "))),
            },
        };
        match n.as_str() {
            "format" => i.format = l.format_of.get(v).copied().unwrap_or(Format::Invalid3),
            "flush" => i.flush = l.flush_of.get(v).copied().unwrap_or(Flush::Invalid3),
            "cmp" => i.cmp = Cmp::from_code(v as u8),
            "bool_op" => i.bool_op = BoolOp::ALL.get(v).copied(),
            "sat" => i.sat = v != 0,
            "bf" => i.bf = v != 0,
            "h_and" => i.h_and = v != 0,
            "nan" => i.nan = v != 0,
            "xorsign" => i.xorsign = v != 0,
            "is_a" => is_a = v != 0,
            other => return err(full, format!("the spec's suffix {other} is no modifier the typed layer reads")),
        }
    }
    if k != mods.len() {
        return err(full, format!("unknown or misplaced modifier .{}", mods[k]));
    }
    let ops: Vec<&str> = ops.split(',').map(str::trim).collect();
    // the operands this text has: HMNMX2's predicate results only with .IS_A
    let names: Vec<&str> = t.operands.iter().map(String::as_str).filter(|n| !matches!(*n, "p_dst" | "q_dst") || l.is_a.is_none() || is_a).collect();
    let b_parts = match ops.len().checked_sub(names.len() - 1) {
        Some(n @ (1 | 2)) => n,
        _ => return err(full, format!("expected {} operands, found {}", names.len(), ops.len())),
    };
    let (mut at, mut pdst) = (0, [PT; 2]);
    for n in names {
        let text = ops[at];
        at += 1;
        match n {
            "dst" => i.dst = reg_number(text, "R", RZ, 254).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad destination {text:?}") })?,
            "p_dst" | "q_dst" => pdst[(n == "q_dst") as usize] = parse_pred_operand(full, text, false)?.index,
            "a" => {
                let a = parse_src(full, text, &l.a_swz_names)?;
                i.a = reg_number(a.core, "R", RZ, 254).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad operand 1 {text:?}") })?;
                i.a_mods = a.mods;
                if a.reuse {
                    i.ctrl.reuse |= 1 << l.spec.reuse_a;
                }
            }
            "b" if b_parts == 2 => {
                let h = if i.format == Format::Bf16 { Half::Bf16 } else { Half::F16 };
                let imm = |s: &str| parse_imm(h, s).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad immediate {s:?}") });
                i.b = Operand2::Imm { first: imm(text)?, second: imm(ops[at])? };
                i.b_mods = SrcMods::default();
                at += 1;
            }
            "b" => {
                let (b, mods, reuse) = parse_operand(full, l, text, &l.b_swz_names)?;
                (i.b, i.b_mods) = (b, mods);
                if reuse {
                    i.ctrl.reuse |= 1 << l.spec.reuse_b;
                }
            }
            _ => i.psrc = Some(parse_pred_operand(full, text, l.psrc_neg.is_some())?),
        }
    }
    if l.p_dst.is_some() && (l.is_a.is_none() || is_a) {
        i.pdst = Some(pdst);
    }
    // nvdisasm prints .reuse only with the yield bit set
    if i.ctrl.reuse != 0 {
        i.ctrl.yield_ = true;
    }
    Ok(i)
}

/// One register or special source (not immediates): the operand, its modifiers, whether it shows `.reuse`.
fn parse_operand(full: &str, l: &crate::spec::Layout, text: &str, names: &[String]) -> Result<(Operand2, SrcMods, bool), ParseError> {
    let sep = format!("]{}[", l.spec.const_space);
    // URZ is the uniform register field's largest value (63 on SM90, 255 where it has 8 bits)
    let urz = l.b_ureg.max().min(255) as u8;
    // nvdisasm spaces `c[0x3] [0x10]` for some instructions and not others: either is taken
    let split = |rest: &'_ str| -> Option<(String, String)> {
        let (x, y) = rest.split_once(sep.as_str()).or_else(|| rest.split_once("] [")).or_else(|| rest.split_once("]["))?;
        Some((x.to_string(), y.to_string()))
    };
    let src = parse_src(full, text, names)?;
    let core = src.core;
    {
        let b = if let Some(r) = reg_number(core, "R", RZ, 254) {
            Operand2::Reg(r)
        } else if let Some(u) = reg_number(core, "UR", urz, urz as u32 - 1) {
            Operand2::Ur(u)
        } else if let Some(rest) = core.strip_prefix("cx[") {
            let (u, off) = split(rest).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad operand {core:?}") })?;
            let (u, off) = (u.as_str(), off.as_str());
            let ureg =
                reg_number(u, "UR", urz, urz as u32 - 1).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad uniform register {u:?}") })?;
            let off = off.strip_suffix(']').and_then(parse_hex_num).filter(|&o| (0..=u32::MAX as i64).contains(&o));
            match off {
                Some(o) => Operand2::ConstUr { ureg, offset: o as u32 },
                None => return err(full, format!("bad offset in {core:?}")),
            }
        } else if let Some(rest) = core.strip_prefix("c[") {
            let (bank, off) = split(rest).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad operand {core:?}") })?;
            let (bank, off) = (bank.as_str(), off.as_str());
            let bank = parse_hex_num(bank).filter(|b| (0..=255).contains(b));
            let off = off.strip_suffix(']').and_then(parse_hex_num).filter(|o| (i32::MIN as i64..=i32::MAX as i64).contains(o));
            match (bank, off) {
                (Some(b), Some(o)) => Operand2::Const { bank: b as u8, offset: o as i32 },
                _ => return err(full, format!("bad constant operand {core:?}")),
            }
        } else {
            return err(full, format!("bad operand {text:?}"));
        };
        if src.reuse && !matches!(b, Operand2::Reg(_)) {
            return err(full, ".reuse on a non-register operand");
        }
        Ok((b, src.mods, src.reuse))
    }
}

/// The operands after operand 1 of a three-source instruction: `B, C[, P]`, where B or C may
/// be two immediates (`F, F`) and `P` is `.RELU`'s predicate operand.
#[allow(clippy::too_many_arguments)]
fn parse_three(
    full: &str,
    l: &crate::spec::Layout,
    op: Op,
    ops: &[&str],
    pred: Pred,
    dst: u8,
    a: u8,
    a_mods: SrcMods,
    mut ctrl: Control,
    vals: [u32; 4],
) -> Result<Inst, ParseError> {
    let s = l.spec;
    let format = l.format_of.get(vals[0] as usize).copied().unwrap_or(Format::Invalid3);
    let flush = l.flush_of.get(vals[1] as usize).copied().unwrap_or(Flush::Invalid3);
    let mut rest: Vec<&str> = ops[2..].to_vec();
    // .RELU's predicate operand, absent when it is PT
    let relu_pred_shown = rest.last().is_some_and(|p| p.trim_start_matches('!').starts_with('P'));
    let relu = if vals[3] != 0 && !relu_pred_shown {
        Some(Pred::ALWAYS)
    } else if vals[3] != 0 {
        let Some(p) = rest.pop() else { return err(full, ".RELU without its predicate operand") };
        Some(parse_pred_operand(full, p, true)?)
    } else {
        None
    };
    let h = if format == Format::Bf16 { Half::Bf16 } else { Half::F16 };
    let imm = |t: &str| parse_imm(h, t).ok_or_else(|| ParseError { text: full.into(), reason: format!("bad immediate {t:?}") });
    let is_reg = |t: &str| parse_src(full, t, &l.b_swz_names).is_ok_and(|x| reg_number(x.core, "R", RZ, 254).is_some());
    let (b, b_mods, b_reuse, c, c_mods, c_reuse) = match rest.as_slice() {
        [x, y] => {
            let (b, bm, br) = parse_operand(full, l, x, &l.b_swz_names)?;
            let (c, cm, cr) = parse_operand(full, l, y, &l.c_swz_names)?;
            (b, bm, br, c, cm, cr)
        }
        [x, y, z] if is_reg(x) => {
            let (b, bm, br) = parse_operand(full, l, x, &l.b_swz_names)?;
            (b, bm, br, Operand2::Imm { first: imm(y)?, second: imm(z)? }, SrcMods::default(), false)
        }
        [x, y, z] => {
            let (c, cm, cr) = parse_operand(full, l, z, &l.c_swz_names)?;
            (Operand2::Imm { first: imm(x)?, second: imm(y)? }, SrcMods::default(), false, c, cm, cr)
        }
        _ => return err(full, format!("expected 4 to 6 operands, found {}", ops.len())),
    };
    if b_reuse {
        ctrl.reuse |= 1 << s.reuse_b;
    }
    if c_reuse {
        ctrl.reuse |= 1 << s.reuse_c;
    }
    if ctrl.reuse != 0 {
        ctrl.yield_ = true;
    }
    Ok(Inst { pred, dst, a, a_mods, b, b_mods, format, flush, sat: vals[2] != 0, c: Some(c), c_mods, relu, ctrl, ..Inst::bare(op) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rendered_samples() {
        for t in [
            "@!P2 HMUL2 R0, -|R1|.reuse.H1_H1, -|R2|.reuse.H0_H0",
            "HMUL2 R0, -|R1|.reuse.H1_H1, -|c[0x3] [0x14].H0_H0|",
            "HMUL2 R0, -|R1|.reuse.H1_H1, -1, +INF",
            "HMUL2.BF16_V2.FMZ.SAT R0, R1, -0.0078125, 2.65845599156983174581e+36",
            "HMUL2 R0, -|R1|.reuse.H1_H1, -|UR2.H0_H0|",
            "@!PT HMUL2 RZ, -RZ.reuse, RZ",
            "HMUL2 R0, R1, c[0x1f] [-0x4]",
            "HMUL2 R0, R1, cx[URZ] [0xfffc].INVALID1",
            "HMUL2 R0, R0, -0.0 , 1",
            "HMUL2.INVALID3.INVALID3.SAT R254, R1, R2.INVALID1",
            "HFMA2 R0, R1, R2, R3",
            "@!P3 HFMA2.F32.OOB.RELU R0, -|R1|.reuse.H1_H1, R2.F32, -|R3|.reuse.INVALID1, !P5",
            "HFMA2 R0, R1, R3.H0_NH1, -|c[0x3] [0x14].INVALID1|",
            "HFMA2.BF16_V2.RELU R0, R1, -0.0 , +INF , R3",
            "HFMA2 R0, R1, R3, 1, -0.0",
            "HFMA2.MMA.INVALID1.INVALID3 R0, R1, cx[UR7][0x10], RZ",
            "HFMA2.MMA R0, R1, R3, -|UR2|",
        ] {
            let i = parse(t).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(render(&i), t);
        }
    }

    #[test]
    fn constant_operands_are_taken_with_or_without_the_space() {
        for (a, b) in [
            ("HMUL2 R0, R1, c[0x3] [0x10]", "HMUL2 R0, R1, c[0x3][0x10]"),
            ("HMUL2 R0, R1, -|cx[UR4] [0x10].H1_H1|", "HMUL2 R0, R1, -|cx[UR4][0x10].H1_H1|"),
            ("HFMA2.MMA R0, R1, c[0x3][0x14], R3", "HFMA2.MMA R0, R1, c[0x3] [0x14], R3"),
        ] {
            assert_eq!(parse(a).unwrap(), parse(b).unwrap(), "{a} / {b}");
        }
        // the canonical spelling is what render prints
        assert_eq!(render(&parse("HMUL2 R0, R1, c[0x3][0x10]").unwrap()), "HMUL2 R0, R1, c[0x3] [0x10]");
    }

    #[test]
    fn a_runaway_text_is_quoted_in_part() {
        let long = format!("HMUL2 R0, R1, {}", "R".repeat(100_000));
        let e = parse(&long).unwrap_err().to_string();
        assert!(e.len() < 600 && e.contains("bytes)"), "{} bytes: {}", e.len(), &e[..200]);
    }

    #[test]
    fn rejects_garbage() {
        for t in [
            "",
            "HSUB2 R0, R1, R2",
            "HMUL2 R0, R1",
            "HMUL2 R256, R1, R2",
            "HMUL2.FOO R0, R1, R2",
            "HMUL2 R0, R1, UR63",
            "@P7 HMUL2 R0, R1, R2",
            "HMUL2 R0, R1, 1.00000001, 0",
            "HFMA2 R0, R1, R2",
            "HFMA2.RELU R0, R1, R2, R3, P7",
            "HFMA2 R0, R1, 1, 2, 3, 4",
        ] {
            assert!(parse(t).is_err(), "{t}");
        }
    }
}
