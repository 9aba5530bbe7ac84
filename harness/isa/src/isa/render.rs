//! [`Inst`] → the text `nvdisasm -b SM90` prints for it (without address, `;` and comments).
//!
//! Shapes seen in nvdisasm's output:
//! `@!P2 HMUL2.BF16_V2.FMZ.SAT R0, -|R1|.reuse.H1_H1, -|R2|.reuse.H0_H0`,
//! `HMUL2 R0, R1, -|c[0x3] [0x14].H0_H0|` (the half select sits inside the bars unless the
//! operand is a register), `HMUL2 R0, R1, -1, +INF`.

use super::floattext::{imm_text, Half};
use super::strtable::StrTable;
use super::*;
use crate::spec::Layout;
/// Decimal digits without the formatting machinery (the renderer is on a hot path).
fn push_dec(out: &mut String, mut v: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("?"));
}

/// `0x` and lower-case hex digits, as nvdisasm prints offsets and banks.
fn push_hex(out: &mut String, mut v: u64) {
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b"0123456789abcdef"[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.push_str("0x");
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("?"));
}

/// Operand spellings computed once: register names, banks, offsets, predicates.
pub(super) struct Names {
    pub(super) r: StrTable,
    pub(super) ur: StrTable,
    pub(super) hex: StrTable,
    /// c[] offsets by their 14-bit field value (two's complement, in words).
    pub(super) c_off: StrTable,
    /// cx[] offsets by their 14-bit field value (unsigned, in words).
    pub(super) cx_off: StrTable,
}

pub(super) fn names() -> &'static Names {
    static N: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    N.get_or_init(|| {
        let reg = |prefix: &str, r: u32, zero: u32| {
            let mut s = String::from(prefix);
            if r == zero {
                s.push('Z');
            } else {
                push_dec(&mut s, r);
            }
            s
        };
        // the constant-operand fields sit at the same bits across the family
        let l = Op::ALL[0].layout();
        let scale = l.cb_offset.scale as i64;
        let width = l.cb_offset.width;
        let sext = |v: u32| -> i64 { (((v << (32 - width)) as i32) >> (32 - width)) as i64 };
        Names {
            r: (0..256).map(|r| reg("R", r, RZ as u32)).collect(),
            ur: (0..256).map(|r| reg("UR", r, URZ as u32)).collect(),
            hex: (0..256u64)
                .map(|v| {
                    let mut s = String::new();
                    push_hex(&mut s, v);
                    s
                })
                .collect(),
            // written straight into the tables' text (2 x 2^14 entries: a string each cost
            // milliseconds at start-up)
            c_off: StrTable::build(l.cb_offset.max() as usize + 1, |v, s| push_hex_signed(s, sext(v as u32) * scale)),
            cx_off: StrTable::build(l.cb_offset.max() as usize + 1, |v, s| push_hex(s, v as u64 * scale as u64)),
        }
    })
}

fn push_reg(out: &mut String, prefix: &str, r: u8, _zero: u8) {
    let n = names();
    out.push_str(if prefix == "R" { &n.r[r as usize] } else { &n.ur[r as usize] });
}

fn push_swizzle(out: &mut String, s: Swizzle, names: &[String]) {
    if let Some(name) = names.get(s as usize) {
        if !name.is_empty() {
            out.push('.');
            out.push_str(name);
        }
    }
}

/// A register source: `-|R1|.reuse.H1_H1`.
pub(super) fn push_reg_src(out: &mut String, r: u8, m: SrcMods, reuse: bool, swz_names: &[String]) {
    if m.neg {
        out.push('-');
    }
    if m.abs {
        out.push('|');
    }
    push_reg(out, "R", r, RZ);
    if m.abs {
        out.push('|');
    }
    if reuse {
        out.push_str(".reuse");
    }
    push_swizzle(out, m.swizzle, swz_names);
}

fn push_hex_signed(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_hex(out, v.unsigned_abs());
}

pub(super) fn push_pred(out: &mut String, pred: Pred) {
    if pred.negated {
        out.push('!');
    }
    if pred.index == PT {
        out.push_str("PT");
    } else {
        out.push('P');
        push_dec(out, pred.index as u32);
    }
}

pub(super) fn push_head(out: &mut String, l: &Layout, pred: Pred, format: u32, flush: u32, sat: u32, relu: u32) {
    if pred.index != PT || pred.negated {
        out.push('@');
        push_pred(out, pred);
        out.push(' ');
    }
    out.push_str(l.op.mnemonic());
    for (f, v) in [(Some(&l.format), format), (Some(&l.flush), flush), (Some(&l.sat), sat), (l.relu.as_ref(), relu)] {
        if let Some(name) = f.and_then(|f| f.value_name(v)) {
            if !name.is_empty() {
                out.push('.');
                out.push_str(name);
            }
        }
    }
    out.push(' ');
}

/// A non-register operand 2 with its modifiers: `-|c[0x3] [0x14].H0_H0|`.
/// A uniform register: `URZ` is the field's largest value (63 on SM90, 255 where the field
/// has 8 bits).
fn push_ureg(out: &mut String, l: &Layout, u: u8) {
    if l.b_ureg.max() == URZ as u32 {
        out.push_str(&names().ur[u as usize]);
    } else if u as u32 == l.b_ureg.max() {
        out.push_str("URZ");
    } else {
        out.push_str("UR");
        push_dec(out, u as u32);
    }
}

pub(super) fn push_other_src(out: &mut String, l: &Layout, b: Operand2, m: SrcMods, swz_names: &[String]) {
    let sep = l.spec.const_space.as_str();
    if m.neg {
        out.push('-');
    }
    if m.abs {
        out.push('|');
    }
    match b {
        Operand2::Const { bank, offset } => {
            let n = names();
            out.push_str("c[");
            out.push_str(&n.hex[bank as usize]);
            out.push(']');
            out.push_str(sep);
            out.push('[');
            let scale = l.cb_offset.scale as i32;
            let v = offset / scale;
            if offset % scale == 0 && (-(1 << (l.cb_offset.width - 1))..(1 << (l.cb_offset.width - 1))).contains(&v) {
                out.push_str(&n.c_off[(v as u32 & l.cb_offset.max()) as usize]);
            } else {
                push_hex_signed(out, offset as i64);
            }
            out.push(']');
        }
        Operand2::ConstUr { ureg, offset } => {
            let n = names();
            out.push_str("cx[");
            push_ureg(out, l, ureg);
            out.push(']');
            out.push_str(sep);
            out.push('[');
            let scale = l.cb_offset.scale;
            match n.cx_off.get((offset / scale) as usize) {
                Some(t) if offset % scale == 0 => out.push_str(t),
                _ => push_hex(out, offset as u64),
            }
            out.push(']');
        }
        Operand2::Ur(u) => push_ureg(out, l, u),
        Operand2::Reg(_) | Operand2::Imm { .. } => {}
    }
    push_swizzle(out, m.swizzle, swz_names);
    if m.abs {
        out.push('|');
    }
}

/// Texts of instruction parts, computed once by the functions above: the renderer then
/// appends a handful of ready strings per instruction (it runs at hundreds of times
/// nvdisasm's speed; see the decode bench).
pub(super) struct Parts {
    /// by pred (4 bits: index, negated) × format × flush × sat
    pub(super) head: StrTable,
    /// by register | neg << 8 | abs << 9 | reuse << 10 | swizzle << 11, for operand 1 and operand 2
    pub(super) src_a: StrTable,
    pub(super) src_b: StrTable,
    /// by uniform register | neg << 8 | abs << 9 | swizzle << 10
    pub(super) ur: StrTable,
    /// operand 3's register sources (the register slot), keyed as `src_a` (empty without one)
    pub(super) src_c: StrTable,
}

pub(super) fn src_key(r: u8, m: SrcMods, reuse: bool) -> usize {
    r as usize | (m.neg as usize) << 8 | (m.abs as usize) << 9 | (reuse as usize) << 10 | (m.swizzle as usize) << 11
}

pub(super) fn head_key(p: Pred, format: u32, flush: u32, sat: u32) -> usize {
    (p.index as usize & 7) | (p.negated as usize) << 3 | (format as usize & 3) << 4 | (flush as usize & 3) << 6 | (sat as usize & 1) << 8
}

/// The tables of layout `l` (SM90's or a target's), made on first use.
pub(super) fn parts(l: &'static Layout) -> &'static Parts {
    use crate::target::Target;
    static P: [[std::sync::OnceLock<Parts>; Op::ALL.len()]; Target::ALL.len()] =
        [const { [const { std::sync::OnceLock::new() }; Op::ALL.len()] }; Target::ALL.len()];
    let t = Target::ALL.iter().position(|t| t.sm == l.target.sm).unwrap_or(0);
    P[t][l.op.index()].get_or_init(|| {
        // by head_key, and `.RELU` at bit 9
        let mut head = vec![String::new(); 1024];
        for (k, slot) in head.iter_mut().enumerate() {
            let p = Pred { index: (k & 7) as u8, negated: k >> 3 & 1 == 1 };
            push_head(slot, l, p, (k >> 4 & 3) as u32, (k >> 6 & 3) as u32, (k >> 8 & 1) as u32, (k >> 9 & 1) as u32);
        }
        let src = |field: &[String]| {
            let mut v = vec![String::new(); 1 << 13];
            for r in 0..=255u8 {
                for bits in 0..32usize {
                    let m = SrcMods { neg: bits & 1 == 1, abs: bits & 2 == 2, swizzle: Swizzle::from_bits((bits >> 3) as u32) };
                    let reuse = bits & 4 == 4;
                    push_reg_src(&mut v[src_key(r, m, reuse)], r, m, reuse, field);
                }
            }
            v
        };
        let mut ur = vec![String::new(); 1 << 12];
        for u in 0..=255u8 {
            for bits in 0..16usize {
                let m = SrcMods { neg: bits & 1 == 1, abs: bits & 2 == 2, swizzle: Swizzle::from_bits((bits >> 2) as u32) };
                push_other_src(&mut ur[u as usize | bits << 8], l, Operand2::Ur(u), m, &l.b_swz_names);
            }
        }
        Parts {
            head: head.into_iter().collect(),
            src_a: src(&l.a_swz_names).into_iter().collect(),
            src_b: src(&l.b_swz_names).into_iter().collect(),
            ur: ur.into_iter().collect(),
            src_c: if l.c_reg.is_some() { src(&l.c_swz_names).into_iter().collect() } else { Vec::<String>::new().into_iter().collect() },
        }
    })
}

/// Append the text of `i` to `out` (as SM90 prints it; [`render_into_for`] another target).
pub fn render_into(i: &Inst, out: &mut String) {
    let l = i.op.layout();
    if let Some(t) = &l.spec.text {
        return render_shaped(i, l, t, out);
    }
    if i.c.is_some() || i.relu.is_some() || l.c_reg.is_some() || !tables_due() {
        return render_general(i, l, out);
    }
    render_tables(i, l, out)
}

/// Append the text of `i` as `target` prints it to `out`; false (nothing appended) where the
/// target lacks the instruction.
pub fn render_into_for(target: &'static crate::target::Target, i: &Inst, out: &mut String) -> bool {
    if target.spec_overlay.is_none() {
        render_into(i, out);
        return true;
    }
    match i.op.layout_for(target) {
        Some(l) if l.spec.text.is_some() => {
            if let Some(t) = &l.spec.text {
                render_shaped(i, l, t, out);
            }
            true
        }
        Some(l) if tables_due() => {
            render_tables(i, l, out);
            true
        }
        Some(l) => {
            render_general(i, l, out);
            true
        }
        None => false,
    }
}

/// The text of `i` as `target` prints it; None where the target lacks the instruction.
pub fn render_for(target: &'static crate::target::Target, i: &Inst) -> Option<String> {
    let mut s = String::with_capacity(64);
    render_into_for(target, i, &mut s).then_some(s)
}

/// Renders in a process before [`render_into`] builds and uses its tables ([`parts`]: a few
/// milliseconds an instruction, about as long as this many renders without them), so a
/// short run (`build-kernel`'s manifest of a few thousand) never pays for them.
const TABLES_AFTER: usize = 1 << 14;

fn tables_due() -> bool {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    CALLS.load(Ordering::Relaxed) >= TABLES_AFTER || CALLS.fetch_add(1, Ordering::Relaxed) >= TABLES_AFTER
}

/// [`render_into`] from [`parts`]'s tables: any instruction of layout `l`, three sources and
/// `.RELU` included (the same text as [`render_general`]'s: a test checks, on every target).
fn render_tables(i: &Inst, l: &'static Layout, out: &mut String) {
    let p = parts(l);
    let (format, flush) = (l.format_code[i.format as usize].unwrap_or(0), l.flush_code[i.flush as usize].unwrap_or(0));
    out.push_str(&p.head[head_key(i.pred, format, flush, i.sat as u32) | (i.relu.is_some() as usize) << 9]);
    out.push_str(&names().r[i.dst as usize]);
    out.push_str(", ");
    out.push_str(&p.src_a[src_key(i.a, i.a_mods, i.ctrl.shows_reuse(l.reuse_a))]);
    out.push_str(", ");
    let m = i.b_mods;
    match i.b {
        // (the tables hold two-bit half selects; HFMA2's three-bit ones are spelt)
        Operand2::Reg(r) if (m.swizzle as usize) < 4 => out.push_str(&p.src_b[src_key(r, m, i.ctrl.shows_reuse(l.reuse_b))]),
        Operand2::Ur(u) if (m.swizzle as usize) < 4 => {
            let bits = m.neg as usize | (m.abs as usize) << 1 | (m.swizzle as usize) << 2;
            out.push_str(&p.ur[u as usize | bits << 8]);
        }
        other => push_source(out, i, l, other, m, i.ctrl.shows_reuse(l.reuse_b), &l.b_swz_names),
    }
    if let Some(c) = i.c {
        out.push_str(", ");
        let m = i.c_mods;
        match c {
            Operand2::Reg(r) if (m.swizzle as usize) < 4 && !p.src_c.is_empty() => out.push_str(&p.src_c[src_key(r, m, i.ctrl.shows_reuse(l.reuse_c))]),
            other => push_source(out, i, l, other, m, i.ctrl.shows_reuse(l.reuse_c), &l.c_swz_names),
        }
    }
    if let Some(pr) = i.relu.filter(|pr| *pr != Pred::ALWAYS) {
        out.push_str(", ");
        push_pred(out, pr);
    }
    // Special immediates end in a space that nvdisasm prints before a comma, not before ';'.
    while out.ends_with(' ') {
        out.pop();
    }
}

/// One source of any kind, with a comma after when `comma`: the general renderer's.
fn push_source(out: &mut String, i: &Inst, l: &Layout, v: Operand2, m: SrcMods, reuse: bool, names: &[String]) {
    match v {
        Operand2::Reg(r) => push_reg_src(out, r, m, reuse, names),
        Operand2::Imm { first, second } => {
            let h = if i.format == Format::Bf16 { Half::Bf16 } else { Half::F16 };
            if i.format != Format::F32 || i.hidden_mask_in(l) & l.imm_hi.mask == 0 {
                out.push_str(&imm_text(h, first));
                out.push_str(", ");
            }
            out.push_str(&imm_text(h, second));
        }
        other => push_other_src(out, l, other, m, names),
    }
}

/// Any instruction, three sources and `.RELU` included (no precomputed tables): HFMA2.
fn render_general(i: &Inst, l: &Layout, out: &mut String) {
    let (format, flush) = (l.format_code[i.format as usize].unwrap_or(0), l.flush_code[i.flush as usize].unwrap_or(0));
    push_head(out, l, i.pred, format, flush, i.sat as u32, i.relu.is_some() as u32);
    out.push_str(&names().r[i.dst as usize]);
    out.push_str(", ");
    push_reg_src(out, i.a, i.a_mods, i.ctrl.shows_reuse(l.reuse_a), &l.a_swz_names);
    out.push_str(", ");
    push_source(out, i, l, i.b, i.b_mods, i.ctrl.shows_reuse(l.reuse_b), &l.b_swz_names);
    if let Some(c) = i.c {
        out.push_str(", ");
        push_source(out, i, l, c, i.c_mods, i.ctrl.shows_reuse(l.reuse_c), &l.c_swz_names);
    }
    // .RELU's predicate operand; nvdisasm leaves out PT (not negated), the default
    if let Some(p) = i.relu.filter(|p| *p != Pred::ALWAYS) {
        out.push_str(", ");
        push_pred(out, p);
    }
    // Special immediates end in a space that nvdisasm prints before a comma, not before ';'.
    while out.ends_with(' ') {
        out.pop();
    }
}

/// The value of the suffix field `name` that `i` holds (None: no such field, or a value the
/// instruction cannot print).
fn suffix_value(i: &Inst, l: &Layout, name: &str) -> Option<u32> {
    Some(match name {
        "format" => l.format_code[i.format as usize]?,
        "flush" => l.flush_code[i.flush as usize]?,
        "sat" => i.sat as u32,
        "relu" => i.relu.is_some() as u32,
        "cmp" => i.cmp?.code() as u32,
        "bool_op" => i.bool_op? as u32,
        "bf" => i.bf as u32,
        "h_and" => i.h_and as u32,
        "nan" => i.nan as u32,
        "xorsign" => i.xorsign as u32,
        "is_a" => i.pdst.is_some() as u32,
        _ => return None,
    })
}

/// An instruction whose spec gives its text order (`text`: HSET2, HSETP2, HMNMX2): the
/// suffixes, then the operands, in that order.
fn render_shaped(i: &Inst, l: &Layout, t: &crate::spec::TextOrder, out: &mut String) {
    push_shaped_head(out, i, l, &t.suffixes);
    let mut first = true;
    for n in &t.operands {
        let start = out.len();
        if !first {
            out.push_str(", ");
        }
        if !push_shaped_operand(out, i, l, n) {
            out.truncate(start);
            continue;
        }
        first = false;
    }
    // Special immediates end in a space that nvdisasm prints before a comma, not before ';'.
    while out.ends_with(' ') {
        out.pop();
    }
}

/// A shaped instruction's guard, mnemonic and `suffixes` (a spec's text order's, or the
/// first of them), each printed where its value has a name, and a space: `@!P1 HSET2.BF.LT `.
pub(super) fn push_shaped_head(out: &mut String, i: &Inst, l: &Layout, suffixes: &[String]) {
    if i.pred.index != PT || i.pred.negated {
        out.push('@');
        push_pred(out, i.pred);
        out.push(' ');
    }
    out.push_str(l.op.mnemonic());
    push_shaped_suffixes(out, i, l, suffixes);
    out.push(' ');
}

/// The suffixes `names` of a shaped instruction, each with its dot where its value has a
/// name (the fused decoder writes a tail of them with the destinations).
pub(super) fn push_shaped_suffixes(out: &mut String, i: &Inst, l: &Layout, names: &[String]) {
    for n in names {
        let name = l.spec.try_index(n).and_then(|k| suffix_value(i, l, n).and_then(|v| l.spec.fields[k].value_name(v)));
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            out.push('.');
            out.push_str(name);
        }
    }
}

/// Operand `n` of a shaped instruction's text order; false (having written nothing) where
/// `i` prints none (HMNMX2's predicate results without `.IS_A`).
pub(super) fn push_shaped_operand(out: &mut String, i: &Inst, l: &Layout, n: &str) -> bool {
    match n {
        "dst" => out.push_str(&names().r[i.dst as usize]),
        "p_dst" | "q_dst" => match i.pdst {
            Some(p) => push_pred(out, Pred { index: p[(n == "q_dst") as usize], negated: false }),
            None => return false,
        },
        "a" => push_reg_src(out, i.a, i.a_mods, i.ctrl.shows_reuse(l.reuse_a), &l.a_swz_names),
        "b" => push_source(out, i, l, i.b, i.b_mods, i.ctrl.shows_reuse(l.reuse_b), &l.b_swz_names),
        _ => match i.psrc {
            Some(p) => push_pred(out, p),
            None => return false,
        },
    }
    true
}

/// The text of `i`.
pub fn render(i: &Inst) -> String {
    let mut s = String::with_capacity(64);
    render_into(i, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTRL: u128 = 0x000fe20000000000u128 << 64;

    fn text(w: u128) -> String {
        render(&decode(w).unwrap())
    }

    #[test]
    fn matches_nvdisasm_samples() {
        // Texts below were printed by nvdisasm 13.2 for these words.
        let a = (1u128 << 72) | (1 << 73) | (3 << 74) | (1 << 122);
        let b = (1u128 << 63) | (1 << 62) | (2 << 60);
        let rrr = (0x232u128 | (2 << 12) | (1 << 15) | (1 << 24) | (2 << 32)) | CTRL;
        assert_eq!(text(rrr | a | b | 1 << 123), "@!P2 HMUL2 R0, -|R1|.reuse.H1_H1, -|R2|.reuse.H0_H0");
        let rrc = (0xa32u128 | (7 << 12) | (1 << 24) | (3 << 54) | (5 << 40)) | CTRL;
        assert_eq!(text(rrc | a | b), "HMUL2 R0, -|R1|.reuse.H1_H1, -|c[0x3] [0x14].H0_H0|");
        let rri = (0x832u128 | (7 << 12) | (1 << 24) | (0xbc00 << 48) | (0x7c00 << 32)) | CTRL;
        assert_eq!(text(rri | a), "HMUL2 R0, -|R1|.reuse.H1_H1, -1, +INF");
        assert_eq!(text(rri | 1 << 76 | 1 << 77 | 1 << 85), "HMUL2.BF16_V2.FMZ.SAT R0, R1, -0.0078125, 2.65845599156983174581e+36");
        let rrur = (0xc32u128 | (7 << 12) | (1 << 24) | (1 << 91) | (2 << 32)) | CTRL;
        assert_eq!(text(rrur | a | b), "HMUL2 R0, -|R1|.reuse.H1_H1, -|UR2.H0_H0|");
        assert_eq!(text(rrr | 255 << 24 | 1 << 122 | 1 << 72), "@!P2 HMUL2 R0, -RZ.reuse, R2");
        let neg = (0xa32u128 | (7 << 12) | (1 << 24) | (0x1f << 54) | (0x3fff << 40)) | CTRL;
        assert_eq!(text(neg), "HMUL2 R0, R1, c[0x1f] [-0x4]");
        let cx = (0xa32u128 | (7 << 12) | (1 << 24) | (1 << 91) | (63 << 32)) | CTRL;
        assert_eq!(text(cx), "HMUL2 R0, R1, cx[URZ] [0x0]");
        assert_eq!(text(0x40007c0000007832 | CTRL), "HMUL2 R0, R0, 2, +INF");
        assert_eq!(text(0x3c00800000007832 | CTRL), "HMUL2 R0, R0, 1, -0.0");
        assert_eq!(text(0x80003c0000007832 | CTRL), "HMUL2 R0, R0, -0.0 , 1");
    }

    /// The table path and the general path write the same text for every two-source word.
    #[test]
    fn tables_and_general_agree() {
        use crate::gen::{self, GenOptions};
        let ops: Vec<Op> = Op::ALL.into_iter().filter(|o| o.layout().c_reg.is_none()).collect();
        assert!(!ops.is_empty());
        let o = GenOptions { invalid_share: 0.3, ignored_share: 0.3, ..GenOptions::legal_of(11, &ops) };
        for w in gen::generate(&o, 0, 100_000) {
            let i = decode(w).unwrap();
            let (mut a, mut b) = (String::new(), String::new());
            render_general(&i, i.op.layout(), &mut a);
            render_tables(&i, i.op.layout(), &mut b);
            assert_eq!(a, b, "{w:#034x}");
        }
    }

    #[test]
    fn tables_and_general_agree_on_every_target() {
        // every instruction, three sources and .RELU included, of every architecture
        for t in crate::target::Target::ALL {
            let mut r = crate::rng::Rng::new(u64::from(t.sm));
            for op in Op::all_for(t) {
                let l = op.layout_for(t).unwrap();
                for _ in 0..20_000 {
                    let Some(w) = crate::gen::candidate_word_for(t, op, &mut r) else { continue };
                    let Ok(i) = crate::isa::decode_for(t, w) else { continue };
                    let (mut a, mut b) = (String::new(), String::new());
                    render_general(&i, l, &mut a);
                    render_tables(&i, l, &mut b);
                    assert_eq!(a, b, "{t}: {w:#034x}");
                }
            }
        }
    }

    #[test]
    fn three_source_samples() {
        // Texts below were printed by nvdisasm 13.2 for these words (see docs/hfma2-vs-hmul2.md).
        let t = |hex: &str| text(parse_hex(hex).unwrap());
        assert_eq!(t("0x000fe200000000030000000201007231"), "HFMA2 R0, R1, R2, R3");
        assert_eq!(t("0x000fe2000000000300c0050201007631"), "HFMA2 R0, R1, R3, c[0x3] [0x14]");
        assert_eq!(t("0x000fe2000000000300c0050201007a35"), "HFMA2.MMA R0, R1, c[0x3][0x14], R3");
        assert_eq!(t("0x000fe200004000030000000201007231"), "HFMA2 R0, R1, R2.H0_NH1, R3");
        assert_eq!(t("0x000fe200000200030000000201007631"), "HFMA2 R0, R1, R3.F32, c[0x0] [0x0]");
        assert_eq!(t("0x000fe200068090030000000201007231"), "HFMA2.FMZ.RELU R0, R1, R2, R3, !P5");
        assert_eq!(t("0x000fe200038080030000000201007231"), "HFMA2.RELU R0, R1, R2, R3");
        assert_eq!(t("0x000fe200000110030000000201007231"), "HFMA2.OOB R0, R1, R2, R3");
        assert_eq!(t("0x000fe200000150030000000201007235"), "HFMA2.MMA.INVALID1.INVALID3 R0, R1, R2, R3");
        assert_eq!(t("0x140fe200000000030000000201007831"), "HFMA2 R0, R1.reuse, 0, 1.1920928955078125e-07, R3.reuse");
        assert_eq!(t("0x000fe20000460c033000000201007235"), "HFMA2.MMA R0, R1, R2, R3");
    }
}
