//! [`decode`] and [`render_into`] in one pass: the same result and text, without building
//! an [`Inst`]. A legal word's text is seven table entries (head, destination, operand 1
//! in two, operand 2 in three) and, in the immediate form, two immediates; each table is
//! keyed by bits gathered from the word (two `pext`s with BMI2) and filled, once, from the
//! plain renderer's own text. Whatever this path cannot take (an illegal word, an
//! unexpected spec shape) goes through the plain functions, so the answer is always theirs.
//!
//! What makes it fast is measured, not guessed (`cargo bench -p hmul2-benches --bench
//! decode`): the same steps for every form (the form picks tables, not code, so mixed
//! forms cost no mispredicted branches), tables small enough to stay in cache (register
//! operands split into prefix and suffix; immediates packed four bits a character), and
//! fixed-size copies instead of `memcpy` calls.

use super::decode;
use super::floattext::{spell_into, Half};
use super::render::{names, parts};
use super::strtable::StrTable;
use super::*;
use crate::spec::Field;

/// Bits of one field that lie in one 64-bit half of the word: `(half >> shift) & mask`, placed at `at`.
#[derive(Clone, Copy, Default)]
struct Piece {
    hi: bool,
    shift: u32,
    mask: u64,
    at: u32,
}

impl Piece {
    #[inline(always)]
    fn get(self, lo: u64, hi: u64) -> u64 {
        ((if self.hi { hi } else { lo }) >> self.shift & self.mask) << self.at
    }
}

/// Several fields gathered into one table key. Bits adjacent in the word are read as one
/// piece, so a key costs one shift-and-mask per run of bits rather than per field.
///
/// With BMI2 a key is two `pext`s: the runs are in ascending bit order, as `pext` packs them.
#[derive(Clone, Copy, Default)]
struct Gather {
    p: [Piece; 4],
    n: usize,
    bits: u32,
    /// the gathered bits of the low and high half, and how many lie in the low half
    m: [u64; 2],
    nlo: u32,
}

impl Gather {
    /// None when the fields overlap or need more than 4 pieces or 16 key bits.
    fn new(fields: &[&Field]) -> Option<Gather> {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for f in fields {
            for &(lo, hi) in &f.segments {
                let (lo, hi) = (lo as u32, hi as u32);
                if lo < 64 && hi >= 64 {
                    runs.extend([(lo, 63), (64, hi)]);
                } else {
                    runs.push((lo, hi));
                }
            }
        }
        runs.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::new();
        for (lo, hi) in runs {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => return None,
                Some(last) if lo == last.1 + 1 && lo != 64 => last.1 = hi,
                _ => merged.push((lo, hi)),
            }
        }
        let mut g = Gather::default();
        if merged.len() > g.p.len() {
            return None;
        }
        for (i, &(lo, hi)) in merged.iter().enumerate() {
            let n = hi - lo + 1;
            g.p[i] = Piece { hi: lo >= 64, shift: lo % 64, mask: (1u64 << n) - 1, at: g.bits };
            g.bits += n;
        }
        g.n = merged.len();
        for p in &g.p[..g.n] {
            g.m[p.hi as usize] |= p.mask << p.shift;
        }
        g.nlo = g.m[0].count_ones();
        (g.bits <= 16).then_some(g)
    }
    /// The key of the word `(lo, hi)`; `PEXT` only where BMI2 was detected.
    #[inline(always)]
    fn key<const PEXT: bool>(&self, lo: u64, hi: u64) -> usize {
        #[cfg(target_arch = "x86_64")]
        if PEXT {
            // SAFETY: PEXT is true only in `fused::<true>`, called only where BMI2 was detected.
            return unsafe { pext_key(self.m, self.nlo, lo, hi) };
        }
        let mut k = 0;
        for p in &self.p[..self.n.min(4)] {
            k |= p.get(lo, hi);
        }
        k as usize
    }
    /// The word whose gathered bits spell `k` and whose other bits are 0.
    fn word(&self, k: usize) -> u128 {
        self.p[..self.n].iter().fold(0u128, |w, p| w | ((k as u64 >> p.at & p.mask) as u128) << (p.shift + if p.hi { 64 } else { 0 }))
    }
    fn len(&self) -> usize {
        1 << self.bits
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "bmi2")]
unsafe fn pext_key(m: [u64; 2], nlo: u32, lo: u64, hi: u64) -> usize {
    use std::arch::x86_64::_pext_u64;
    (_pext_u64(lo, m[0]) | _pext_u64(hi, m[1]) << nlo) as usize
}

/// Where every text of the fast path lives: one ASCII string, and per table entry a `u32`
/// packing the text's offset (bits 8..30), length (bits 0..7) and a flag (bit 31, used by
/// the head table for BF16). An append copies a constant [`COPY`] bytes (inlined moves, no
/// `memcpy` call, no branch on the length) and keeps the entry's length of them; the string
/// ends in [`COPY_HEAD`] bytes of padding so every copy is in bounds.
struct Texts {
    text: String,
    idx: Vec<u32>,
    interned: std::collections::HashMap<String, u32>,
}

/// Bytes copied per append; every entry is at most this long.
const COPY: usize = 32;
/// The same for the head (`@!PT HMUL2.BF16_V2.INVALID3.SAT ` and longer).
const COPY_HEAD: usize = 48;

impl Texts {
    fn new() -> Texts {
        Texts { text: String::new(), idx: Vec::new(), interned: Default::default() }
    }
    /// The packed entry of `s`, sharing text with an equal string or with `-` followed by `s`.
    fn entry(&mut self, s: &str) -> Option<u32> {
        self.entry_max(s, COPY)
    }
    fn entry_max(&mut self, s: &str, max: usize) -> Option<u32> {
        if s.len() > max || !s.is_ascii() {
            return None;
        }
        let off = match self.interned.get(s) {
            Some(&o) => o,
            None => match self.interned.get(&format!("-{s}")) {
                Some(&o) => o + 1,
                None => {
                    let o = self.text.len() as u32;
                    self.text.push_str(s);
                    self.interned.insert(s.to_string(), o);
                    o
                }
            },
        };
        (off < 1 << 23).then_some(off << 8 | s.len() as u32)
    }
    /// Append a table; its base index.
    fn table<S: AsRef<str>>(&mut self, entries: impl IntoIterator<Item = S>) -> Option<u32> {
        let base = self.idx.len() as u32;
        for s in entries {
            let e = self.entry(s.as_ref())?;
            self.idx.push(e);
        }
        Some(base)
    }
    fn finish(mut self) -> (String, Vec<u32>) {
        self.text.push_str(&" ".repeat(COPY_HEAD));
        (self.text, self.idx)
    }
}

/// One text appended per word: the entry at `base + key`.
#[derive(Clone, Copy, Default)]
struct Part {
    g: Gather,
    base: u32,
}

impl Part {
    fn new(g: &Gather, base: u32) -> Part {
        Part { g: *g, base }
    }
    /// A part that appends the same text for every word.
    fn fixed(base: u32) -> Part {
        Part { base, ..Part::default() }
    }
    #[inline(always)]
    fn index<const PEXT: bool>(&self, lo: u64, hi: u64) -> usize {
        self.base as usize + self.g.key::<PEXT>(lo, hi)
    }
}

/// Operand 2 is at most this many parts in every form (padded with empty texts).
const TAIL: usize = 3;

/// Tables keyed by gathered bits, each entry computed from the word that key stands for
/// with the plain decoder's reading of the fields. Every legal word takes the same steps
/// whatever its form: the form picks which tables operand 2 reads, not which code runs, so
/// a stream of mixed forms costs no mispredicted branches.
struct Fast {
    /// (opcode, operand_form, ureg_flag) → form index, or `u8::MAX` when the word is not one.
    sel: Gather,
    form: Vec<u8>,
    /// the forms' rule fields → bit set of the forms whose rules the values keep
    rules: Gather,
    legal: Vec<u32>,
    /// predicate and modifiers → `@P0 HMUL2.BF16_V2 `; entry bit 31 (above any offset) = BF16
    head: Gather,
    head_base: u32,
    /// by the same key: whether a `hidden` rule applies (such words take the plain path)
    head_hidden: Vec<bool>,
    /// `R5, `; operand 1 as `-|R1` and `|.reuse.H1_H1, `
    dst: Part,
    a_pre: Part,
    a_suf: Part,
    /// operand 2 by form
    tail: [[Part; TAIL]; 5],
    /// the immediates' fields, and their texts once built (see [`fast`])
    imm_fields: Option<(Gather, Gather)>,
    imm: std::sync::OnceLock<Option<Imms>>,
    /// whether keys may use BMI2's `pext` (and copies AVX2's 32-byte moves)
    bmi2: bool,
    text: String,
    idx: Vec<u32>,
}

fn build(op: Op) -> Option<Fast> {
    let s = op.spec();
    let l = op.layout();
    let n = names();
    let p = parts(op);
    // the tables key forms in Form order, and know two sources and no silent rules: other specs
    // (three-source ones among them) take the plain path; `hidden` rules they know only when
    // the head's fields decide them, and send the words they apply to the plain way
    let head_fields = [&l.pred, &l.pred_neg, &l.format, &l.flush, &l.sat];
    let decided_by_head = |h: &crate::spec::Hidden| h.when.iter().all(|(f, _)| head_fields.iter().any(|hf| hf.name == s.fields[*f].name));
    if !s.hidden.iter().all(decided_by_head) || l.form_kind != Form::TWO_SOURCE || s.sources != 2 || s.constraints.iter().any(|c| c.silent) {
        return None;
    }
    let g = Gather::new;
    // The offset tables are indexed by raw field value, which equals the renderer's index only
    // while offset × scale cannot overflow; otherwise the plain path renders constants.
    let cb = &l.cb_offset;
    if cb.scale == 0 || (cb.max() as u64 + 1) * cb.scale as u64 > i32::MAX as u64 {
        return None;
    }
    let mut t = Texts::new();
    let words = |g: &Gather| (0..g.len()).map(|k| g.word(k)).collect::<Vec<u128>>();
    let flag = |f: &Field, w: u128| f.get(w) != 0;
    let mods = |neg: &Field, abs: &Field, swz: &Field, w: u128| SrcMods { neg: flag(neg, w), abs: flag(abs, w), swizzle: Swizzle::from_bits(swz.get(w)) };

    let sel = g(&[&l.opcode, &l.operand_form, &l.ureg_flag])?;
    let form = words(&sel).into_iter().map(|w| decode::form_of(w).ok().filter(|(o, _)| *o == op).map_or(u8::MAX, |(_, f)| f as u8)).collect();
    let mut rule_fields: Vec<&Field> = Vec::new();
    for fs in &s.forms {
        for &i in &fs.rule_fields {
            if !rule_fields.iter().any(|f| f.name == s.fields[i].name) {
                rule_fields.push(&s.fields[i]);
            }
        }
    }
    if s.forms.len() > 32 || s.forms.len() != Form::TWO_SOURCE.len() {
        return None;
    }
    let rules = g(&rule_fields)?;
    let legal = words(&rules).into_iter().map(|w| (0..s.forms.len()).fold(0, |m, f| m | (s.check(f, w).is_ok() as u32) << f)).collect();

    let head = g(&head_fields)?;
    let head_base = t.idx.len() as u32;
    let head_hidden = words(&head).into_iter().map(|w| (0..s.forms.len()).any(|f| s.hidden_mask(f, w) != 0)).collect();
    for w in words(&head) {
        let pred = Pred { index: l.pred.get(w) as u8, negated: flag(&l.pred_neg, w) };
        let format = l.format_of.get(l.format.get(w) as usize).copied().unwrap_or(Format::Invalid3);
        let text = &p.head[super::render::head_key(pred, l.format.get(w), l.flush.get(w), flag(&l.sat, w) as u32)];
        let e = t.entry_max(text, COPY_HEAD)?;
        t.idx.push(e | ((format == Format::Bf16) as u32) << 31);
    }
    let dst_g = g(&[&l.dst])?;
    let dst = Part::new(&dst_g, t.table(words(&dst_g).into_iter().map(|w| format!("{}, ", &n.r[l.dst.get(w) as u8 as usize])))?);
    // A register operand is a prefix by (register, neg, abs), `-|R12`, and a suffix by
    // (abs, half select, reuse), `|.reuse.H0_H0`: two small tables instead of one of 2^13
    // entries. Both are cut from the renderer's whole text, and every combination is checked
    // to join back into it.
    let split = |full: &StrTable, key: &dyn Fn(u8, SrcMods, bool) -> usize| -> Option<(Vec<String>, Vec<String>)> {
        let bare = |m: SrcMods| SrcMods { swizzle: Swizzle::from_bits(0), ..m };
        let pre = |r: u8, m: SrcMods| {
            let t = &full[key(r, bare(m), false)];
            if m.abs {
                t.strip_suffix('|').map(str::to_string)
            } else {
                Some(t.to_string())
            }
        };
        let suf = |m: SrcMods, reuse: bool| full[key(0, m, reuse)].strip_prefix(pre(0, m)?.as_str()).map(str::to_string);
        for r in 0..=255u8 {
            for bits in 0..32u32 {
                let m = SrcMods { neg: bits & 1 == 1, abs: bits & 2 == 2, swizzle: Swizzle::from_bits(bits >> 2 & 3) };
                let reuse = bits & 16 == 16;
                if pre(r, m)? + &suf(m, reuse)? != full[key(r, m, reuse)] {
                    return None;
                }
            }
        }
        let mut pres = Vec::new();
        let mut sufs = Vec::new();
        for bits in 0..4u32 {
            let m = SrcMods { neg: bits & 1 == 1, abs: bits & 2 == 2, swizzle: Swizzle::from_bits(0) };
            pres.extend((0..=255u8).map(|r| pre(r, m).unwrap_or_default()));
        }
        for bits in 0..16u32 {
            let m = SrcMods { neg: false, abs: bits & 1 == 1, swizzle: Swizzle::from_bits(bits >> 1 & 3) };
            sufs.push(suf(m, bits & 8 == 8).unwrap_or_default());
        }
        Some((pres, sufs))
    };
    // the suffix's key holds yield and reuse, from which `Control` says whether `.reuse` shows
    let src = |t: &mut Texts, full: &StrTable, reg: &Field, neg: &Field, abs: &Field, swz: &Field, reuse_bit: u8, comma: &str| -> Option<(Part, Part)> {
        let (pres, sufs) = split(full, &|r, m, reuse| super::render::src_key(r, m, reuse))?;
        let pg = g(&[reg, neg, abs])?;
        let pre = t.table(words(&pg).into_iter().map(|w| {
            let i = reg.get(w) as usize | (neg.get(w) as usize) << 8 | (abs.get(w) as usize) << 9;
            pres[i].clone()
        }))?;
        let sg = g(&[abs, swz, &l.yield_, &l.reuse])?;
        let suf = t.table(words(&sg).into_iter().map(|w| {
            let c = Control { stall: 0, yield_: flag(&l.yield_, w), wr_bar: 0, rd_bar: 0, wait: 0, reuse: l.reuse.get(w) as u8 };
            let i = abs.get(w) as usize | (swz.get(w) as usize) << 1 | (c.shows_reuse(reuse_bit) as usize) << 3;
            format!("{}{comma}", sufs[i])
        }))?;
        Some((Part::new(&pg, pre), Part::new(&sg, suf)))
    };
    let (a_pre, a_suf) = src(&mut t, &p.src_a, &l.a, &l.a_neg, &l.a_abs, &l.a_swizzle, l.reuse_a, ", ")?;
    let (b_pre, b_suf) = src(&mut t, &p.src_b, &l.b_reg, &l.b_neg, &l.b_abs, &l.b_swizzle, l.reuse_b, "")?;

    let empty = Part::fixed(t.table([""])?);
    let bm = |w: u128| mods(&l.b_neg, &l.b_abs, &l.b_swizzle, w);
    let na = |m: SrcMods| format!("{}{}", if m.neg { "-" } else { "" }, if m.abs { "|" } else { "" });
    // the other operand-2 kinds: `-|c[0x3] [` + offset + `].H0_H0|`, the same with `cx[UR4] [`,
    // and `-|UR2` + `.H0_H0|`
    let bank = g(&[&l.b_neg, &l.b_abs, &l.b_swizzle, &l.cb_bank])?;
    let c_pre = t.table(words(&bank).into_iter().map(|w| format!("{}c[{}] [", na(bm(w)), &n.hex[l.cb_bank.get(w) as u8 as usize])))?;
    let ureg = g(&[&l.b_neg, &l.b_abs, &l.b_swizzle, &l.b_ureg])?;
    let cx_pre = t.table(words(&ureg).into_iter().map(|w| format!("{}cx[{}] [", na(bm(w)), &n.ur[l.b_ureg.get(w) as u8 as usize])))?;
    let ur_text = |w: u128| {
        let m = bm(w);
        let bits = m.neg as usize | (m.abs as usize) << 1 | (m.swizzle as usize) << 2;
        &p.ur[l.b_ureg.get(w) as u8 as usize | bits << 8]
    };
    let ur_pre = t.table(words(&ureg).into_iter().map(|w| format!("{}{}", na(bm(w)), &n.ur[l.b_ureg.get(w) as u8 as usize])))?;
    let bmods = g(&[&l.b_neg, &l.b_abs, &l.b_swizzle])?;
    let swz_abs = |w: u128| {
        let m = bm(w);
        let swz = l.b_swizzle.value_name(m.swizzle as u32).filter(|t| !t.is_empty()).map(|t| format!(".{t}")).unwrap_or_default();
        format!("{swz}{}", if m.abs { "|" } else { "" })
    };
    for w in words(&ureg) {
        if format!("{}{}", na(bm(w)), &n.ur[l.b_ureg.get(w) as u8 as usize]) + &swz_abs(w) != *ur_text(w) {
            return None;
        }
    }
    let ur_suf = t.table(words(&bmods).into_iter().map(swz_abs))?;
    let c_suf = t.table(words(&bmods).into_iter().map(|w| format!("]{}", swz_abs(w))))?;
    let off = g(&[cb])?;
    let c_off = t.table(words(&off).into_iter().map(|w| n.c_off[cb.get(w) as usize].to_string()))?;
    let cx_off = t.table(words(&off).into_iter().map(|w| n.cx_off[cb.get(w) as usize].to_string()))?;
    let imm_fields = g(&[&l.imm_hi]).zip(g(&[&l.imm_lo]));
    let tail_of = |f: Form| -> Option<[Part; TAIL]> {
        Some(match f {
            Form::Rrr => [b_pre, b_suf, empty],
            Form::Imm => [empty; TAIL],
            Form::Const => [Part::new(&bank, c_pre), Part::new(&off, c_off), Part::new(&bmods, c_suf)],
            Form::ConstUr => [Part::new(&ureg, cx_pre), Part::new(&off, cx_off), Part::new(&bmods, c_suf)],
            Form::Ur => [Part::new(&ureg, ur_pre), Part::new(&bmods, ur_suf), empty],
            // three-source forms never reach here (build refuses their specs)
            _ => return None,
        })
    };
    let mut tail = [[empty; TAIL]; 5];
    for (k, f) in Form::TWO_SOURCE.iter().enumerate() {
        tail[k] = tail_of(*f)?;
    }
    let (text, idx) = t.finish();
    #[cfg(target_arch = "x86_64")]
    let bmi2 = std::arch::is_x86_feature_detected!("bmi2") && std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    let bmi2 = false;
    Some(Fast { sel, form, rules, legal, head, head_base, head_hidden, dst, a_pre, a_suf, tail, imm_fields, imm: Default::default(), text, idx, bmi2 })
}

/// Immediate texts, 16 bytes per magnitude and format (1 MiB for both formats: a table of
/// the texts themselves is twice that, and falls out of the cache). An entry is the text of
/// the positive value in 4-bit codes ([`NIBBLE`]), two to a byte, low nibble first, and its
/// length in byte 15; a negative value is `-` and the same text. Zeros, infinities and NaNs
/// (bit 7 of byte 15) spell their sign their own way and come from [`Imms::special`].
struct Imms {
    hi: Gather,
    lo: Gather,
    /// by BF16 << 15 | magnitude
    packed: Vec<[u8; 16]>,
    /// by class << 2 | negative << 1 | first; class in byte 0 of the packed entry;
    /// texts padded to 16 bytes with the length in byte 15
    special: Vec<[u8; 16]>,
}

/// The characters of immediate texts, by 4-bit code.
const NIBBLE: &[u8; 14] = b"0123456789.e-+";

/// The 4-bit code of each character of [`NIBBLE`] by its byte; 0xff for any other byte.
const NIBBLE_CODE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < NIBBLE.len() {
        t[NIBBLE[i] as usize] = i as u8;
        i += 1;
    }
    t
};

impl Imms {
    fn new(hi: &Gather, lo: &Gather) -> Option<Imms> {
        if hi.bits != 16 || lo.bits != 16 {
            return None;
        }
        // every spelling of both formats, one format a thread (a few milliseconds: floattext
        // spells with integers); the few that are not plain numbers are marked, then classed
        // below in order
        const LATER: u8 = 0xff;
        let mut packed = vec![[0u8; 16]; 1 << 16];
        let pack = |h: Half, slots: &mut [[u8; 16]]| {
            let mut pos = String::with_capacity(32);
            for (mag, slot) in slots.iter_mut().enumerate() {
                pos.clear();
                spell_into(h, mag as u16, &mut pos);
                // a finite nonzero value's negative is `-` and the same text (floattext spells it so)
                if pos.len() > 30 || pos == "0" || pos.bytes().any(|c| NIBBLE_CODE[c as usize] == LATER) {
                    slot[15] = LATER;
                    continue;
                }
                for (i, c) in pos.bytes().enumerate() {
                    slot[i / 2] |= NIBBLE_CODE[c as usize] << (i % 2 * 4);
                }
                slot[15] = pos.len() as u8;
            }
        };
        let (f16, bf16) = packed.split_at_mut(1 << 15);
        if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
            std::thread::scope(|s| {
                s.spawn(|| pack(Half::Bf16, bf16));
                pack(Half::F16, f16);
            });
        } else {
            pack(Half::F16, f16);
            pack(Half::Bf16, bf16);
        }
        let mut special: Vec<[u8; 16]> = Vec::new();
        let mut classes: Vec<String> = Vec::new();
        let (mut pos, mut neg) = (String::with_capacity(32), String::with_capacity(32));
        for (k, slot) in packed.iter_mut().enumerate().filter(|(_, e)| e[15] == LATER) {
            let h = if k >> 15 == 1 { Half::Bf16 } else { Half::F16 };
            let mag = (k & 0x7fff) as u16;
            pos.clear();
            neg.clear();
            spell_into(h, mag, &mut pos);
            spell_into(h, mag | 0x8000, &mut neg);
            // one class per distinct (positive, negative) spelling: 0, INF, QNAN, SNAN
            let key = format!("{pos}/{neg}");
            let class = match classes.iter().position(|c| *c == key) {
                Some(c) => c,
                None => {
                    classes.push(key);
                    for t in [&pos, &pos, &neg, &neg].into_iter().enumerate().map(|(i, t)| if i % 2 == 1 { format!("{t}, ") } else { t.trim_end().to_string() })
                    {
                        let mut e = [0u8; 16];
                        if t.len() > 15 || !t.is_ascii() {
                            return None;
                        }
                        e[..t.len()].copy_from_slice(t.as_bytes());
                        e[15] = t.len() as u8;
                        special.push(e);
                    }
                    classes.len() - 1
                }
            };
            if class > 3 {
                return None;
            }
            *slot = [0; 16];
            slot[0] = class as u8;
            slot[15] = 0x80;
        }
        Some(Imms { hi: *hi, lo: *lo, packed, special })
    }

    /// The packed entry of immediate `v`.
    #[inline(always)]
    fn entry(&self, bf16: usize, v: u16) -> &[u8; 16] {
        self.packed.get(bf16 << 15 | (v & 0x7fff) as usize).unwrap_or(&[0; 16])
    }

    /// Append the text of immediate `v` (`, ` after it when `first`). Without branches on
    /// the value: a special value's text replaces the unpacked one by a mask.
    #[inline(always)]
    fn push(&self, w: &mut Writer, e: &[u8; 16], v: u16, first: bool) {
        let neg = (v >> 15) as usize;
        let sp = (e[15] >> 7) as usize;
        let class = e[0] as usize & 3 & sp.wrapping_neg();
        let t = self.special.get(class << 2 | neg << 1 | first as usize).unwrap_or(&[0; 16]);
        let (plain, special) = (unpack(e), u128::from_le_bytes(*t));
        let keep = (sp as u128).wrapping_sub(1);
        let lo = u128::from_le_bytes(plain[..16].try_into().unwrap_or_default()) & keep | special & !keep;
        let hi = u128::from_le_bytes(plain[16..].try_into().unwrap_or_default()) & keep;
        let mut text = [0u8; 32];
        text[..16].copy_from_slice(&lo.to_le_bytes());
        text[16..].copy_from_slice(&hi.to_le_bytes());
        let plain_n = (e[15] & 0x7f) as usize;
        w.put(b"-", neg & (sp ^ 1));
        w.put(&text, if sp == 1 { t[15] as usize } else { plain_n });
        w.put(b", ", 2 * (first as usize & (sp ^ 1)));
    }
}

/// Appends to a byte vector's reserved capacity: each append copies a constant number of
/// bytes (inlined moves) and keeps a prefix of them, with no branch on the length kept.
struct Writer<'a> {
    v: &'a mut Vec<u8>,
    len: usize,
}

impl<'a> Writer<'a> {
    /// Room for every append of one word: the fast path's head, 6 parts and 2 immediates.
    const ROOM: usize = COPY_HEAD + 6 * COPY + 2 * 35;

    /// Appends go to the end of `out`, which only ever receives ASCII.
    fn new(out: &'a mut String) -> Writer<'a> {
        // SAFETY: every byte a Writer appends is ASCII (`Texts::entry` and `Imms::new` refuse
        // anything else, and padding is ASCII), so `out` stays UTF-8 whatever prefix is kept.
        let v = unsafe { out.as_mut_vec() };
        v.reserve(Self::ROOM);
        let len = v.len();
        Writer { v, len }
    }

    #[inline(always)]
    fn put<const N: usize>(&mut self, src: &[u8; N], keep: usize) {
        if self.len + N > self.v.capacity() {
            return; // not reached: ROOM covers a word (an unreachable guard, not an error path)
        }
        // SAFETY: the N bytes from `len` lie within the capacity (checked above), and `src`
        // cannot overlap the vector's spare capacity.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.v.as_mut_ptr().add(self.len), N) };
        self.len += keep.min(N);
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        // SAFETY: bytes up to `len` were written by `put` within the capacity.
        unsafe { self.v.set_len(self.len) };
    }
}

/// The 32 characters of a packed immediate (past its length: padding).
#[inline(always)]
fn unpack(e: &[u8; 16]) -> [u8; 32] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; the load and stores are unaligned and in bounds.
        unsafe {
            let v = _mm_loadu_si128(e.as_ptr().cast());
            let m = _mm_set1_epi8(0x0f);
            let lo = _mm_and_si128(v, m);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(v), m);
            let ascii = |x: __m128i| {
                let mut r = _mm_add_epi8(x, _mm_set1_epi8(b'0' as i8));
                for (code, &c) in NIBBLE.iter().enumerate().skip(10) {
                    let is = _mm_cmpeq_epi8(x, _mm_set1_epi8(code as i8));
                    r = _mm_add_epi8(r, _mm_and_si128(is, _mm_set1_epi8(c.wrapping_sub(b'0' + code as u8) as i8)));
                }
                r
            };
            let mut o = [0u8; 32];
            _mm_storeu_si128(o.as_mut_ptr().cast(), ascii(_mm_unpacklo_epi8(lo, hi)));
            _mm_storeu_si128(o.as_mut_ptr().add(16).cast(), ascii(_mm_unpackhi_epi8(lo, hi)));
            o
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut o = [0u8; 32];
        for (i, c) in o.iter_mut().enumerate() {
            *c = NIBBLE.get((e[i / 2] >> (i % 2 * 4) & 15) as usize).copied().unwrap_or(b'0');
        }
        o
    }
}

/// The tables of `op`'s fast path (a few milliseconds, built on its first word), and after
/// [`IMM_AFTER`] words that take a fast path, their immediates (2 × 2^15 texts, about ten
/// milliseconds more: until then an immediate-form word takes the plain path, a few
/// microseconds, so a short input never pays for them).
fn fast(op: Op) -> Option<&'static Fast> {
    type Slot = std::sync::OnceLock<Option<Fast>>;
    static TABLES: [Slot; Op::ALL.len()] = [const { Slot::new() }; Op::ALL.len()];
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let f = TABLES[op.index()].get_or_init(|| build(op)).as_ref()?;
    if f.imm.get().is_none() && CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= IMM_AFTER {
        f.imm.get_or_init(|| f.imm_fields.and_then(|(hi, lo)| Imms::new(&hi, &lo)));
    }
    Some(f)
}

/// Words decoded before the immediates' tables are built: about what the plain path
/// costs in the time they take to build.
const IMM_AFTER: usize = 4096;

/// Decode `word` and append its text to `out`: `decode(word).map(|i| render_into(&i, out))`.
pub fn decode_render_into(word: u128, out: &mut String) -> Result<(), Illegal> {
    let Ok(op) = decode::op_of(word) else { return slow(word, out) };
    match fast(op) {
        #[cfg(target_arch = "x86_64")]
        Some(f) if f.bmi2 => {
            // SAFETY: `f.bmi2` says BMI2 and AVX2 were detected on this CPU.
            unsafe { fused_bmi2(f, word, out) }
        }
        Some(f) => fused::<false>(f, word, out),
        None => slow(word, out),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,avx2")]
unsafe fn fused_bmi2(f: &Fast, word: u128, out: &mut String) -> Result<(), Illegal> {
    fused::<true>(f, word, out)
}

#[cold]
fn slow(word: u128, out: &mut String) -> Result<(), Illegal> {
    let i = decode(word)?;
    render_into(&i, out);
    Ok(())
}

#[inline(always)]
fn fused<const PEXT: bool>(f: &Fast, word: u128, out: &mut String) -> Result<(), Illegal> {
    let (lo, hi) = (word as u64, (word >> 64) as u64);
    let k = match f.form.get(f.sel.key::<PEXT>(lo, hi)) {
        Some(&k) if k != u8::MAX => k as usize,
        _ => return slow(word, out),
    };
    match f.legal.get(f.rules.key::<PEXT>(lo, hi)) {
        Some(&m) if m >> k & 1 == 1 => {}
        _ => return slow(word, out),
    }
    let is_imm = k == Form::Imm as usize;
    let imms = f.imm.get().and_then(Option::as_ref);
    let (Some(tail), false) = (f.tail.get(k), is_imm && imms.is_none()) else { return slow(word, out) };
    let hk = f.head.key::<PEXT>(lo, hi);
    let (Some(&h), Some(false)) = (f.idx.get(f.head_base as usize + hk), f.head_hidden.get(hk).copied()) else { return slow(word, out) };
    // the immediates' entries are read first, so their (likely) cache misses overlap the
    // other parts; other forms read entry 0
    let (v1, v2, e1, e2) = match imms {
        Some(imm) => {
            let only = (is_imm as u16).wrapping_neg();
            let (v1, v2) = (imm.hi.key::<PEXT>(lo, hi) as u16 & only, imm.lo.key::<PEXT>(lo, hi) as u16 & only);
            let bf16 = (h >> 31) as usize;
            let (e1, e2) = (imm.entry(bf16, v1), imm.entry(bf16, v2));
            #[cfg(target_arch = "x86_64")]
            for e in [e1, e2] {
                // SAFETY: a prefetch of a valid reference; it reads nothing the program sees.
                unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(e.as_ptr().cast()) };
            }
            (v1, v2, e1, e2)
        }
        None => (0, 0, &[0u8; 16], &[0u8; 16]),
    };
    let bytes = f.text.as_bytes();
    let mut w = Writer::new(out);
    let idx = |p: &Part| f.idx.get(p.index::<PEXT>(lo, hi)).copied().unwrap_or(0);
    let at = |e: u32| ((e >> 8 & 0x7f_ffff) as usize, (e & 0xff) as usize);
    let (off, n) = at(h);
    if let Some(slot) = bytes.get(off..off + COPY_HEAD).and_then(|s| s.try_into().ok()) {
        w.put::<COPY_HEAD>(slot, n);
    }
    for e in [idx(&f.dst), idx(&f.a_pre), idx(&f.a_suf), idx(&tail[0]), idx(&tail[1]), idx(&tail[2])] {
        let (off, n) = at(e);
        if let Some(slot) = bytes.get(off..off + COPY).and_then(|s| s.try_into().ok()) {
            w.put::<COPY>(slot, n);
        }
    }
    if let (true, Some(imm)) = (is_imm, imms) {
        imm.push(&mut w, e1, v1, true);
        imm.push(&mut w, e2, v2, false);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{self, GenOptions};

    fn same(w: u128) {
        let mut a = String::from("x");
        let ra = decode_render_into(w, &mut a);
        let mut b = String::from("x");
        let rb = decode(w).map(|i| render_into(&i, &mut b));
        assert_eq!((&ra, &a), (&rb, &b), "{w:#034x}");
        // the path without BMI2, which this CPU may not take by itself
        if let Some(f) = decode::op_of(w).ok().and_then(fast) {
            let mut c = String::from("x");
            let rc = fused::<false>(f, w, &mut c);
            assert_eq!((rc, c), (rb, b), "{w:#034x} without BMI2");
        }
    }

    #[test]
    fn equals_decode_then_render() {
        // past the first words, which are decoded before the immediate tables exist (HMUL2's
        // words are about one in four)
        for w in gen::generate(&GenOptions::legal(9), 0, (IMM_AFTER * Op::ALL.len()) as u64 + 4096) {
            same(w);
        }
        assert!(fast(Op::Hmul2).is_some_and(|f| f.imm.get().is_some_and(Option::is_some)), "HMUL2's fast-path tables did not build");
        // HADD2's hidden rules (.F32) are decided by the head: its other words take the fast path
        assert!(fast(Op::Hadd2).is_some_and(|f| f.head_hidden.iter().any(|&h| h) && !f.head_hidden.iter().all(|&h| h)), "HADD2's fast path");
        let o = GenOptions { illegal_share: 0.2, invalid_share: 0.3, ignored_share: 0.2, ..GenOptions::legal(5) };
        for w in gen::generate(&o, 0, 150_000) {
            same(w);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            same(x);
            // keep the opcode and a form selector, so the rule and render paths see random bits
            same(x & !0xfff | 0x232 | (x & 0x700));
        }
    }
}
