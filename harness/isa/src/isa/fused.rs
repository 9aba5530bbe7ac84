//! [`decode()`] and [`render_into`] in one pass: the same result and text, without building
//! an [`Inst`]. A legal word's text is a fixed number of table entries (head, destination,
//! operand 1 in two, operands 2 and 3 in up to three each, `.RELU`'s predicate) and, in an
//! immediate form, two immediates; each table is
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
use super::render::names;
use super::strtable::StrTable;
use super::*;
use crate::spec::Field;

/// Bits of one field that lie in one 64-bit half of the word: `(half >> shift) & mask`, placed at `at`.
#[derive(Clone, Copy, Default, Debug)]
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
#[derive(Clone, Copy, Default, Debug)]
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
    interned: std::collections::HashMap<Box<str>, u32, std::hash::BuildHasherDefault<FxHasher>>,
    /// `-` and the text looked up last
    minus: String,
}

/// A multiply-rotate hash for the interning of short texts at start-up (SipHash's
/// resistance to chosen keys is not needed for the project's own texts, and cost ~5% of a
/// short run).
#[derive(Default)]
struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        // the table picks buckets by the low bits, which a product mixes least
        self.0.rotate_left(26)
    }
}

/// Bytes copied per append; every entry is at most this long.
const COPY: usize = 32;
/// The same for the head (`@!PT HMUL2.BF16_V2.INVALID3.SAT ` and longer).
const COPY_HEAD: usize = 48;

impl Texts {
    fn new() -> Texts {
        Texts { text: String::new(), idx: Vec::new(), interned: Default::default(), minus: String::new() }
    }
    /// The packed entry of `s`, sharing text with an equal string or with `-` followed by `s`.
    fn entry(&mut self, s: &str) -> Option<u32> {
        self.entry_max(s, COPY)
    }
    fn entry_max(&mut self, s: &str, max: usize) -> Option<u32> {
        if s.len() > max || !s.is_ascii() {
            return None;
        }
        self.minus.clear();
        self.minus.push('-');
        self.minus.push_str(s);
        let off = match self.interned.get(s) {
            Some(&o) => o,
            None => match self.interned.get(self.minus.as_str()) {
                Some(&o) => o + 1,
                None => {
                    let o = self.text.len() as u32;
                    self.text.push_str(s);
                    self.interned.insert(s.into(), o);
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

/// Where an entry of [`Texts`] lies in its text: (offset, length); bit 31 is not read.
#[inline(always)]
fn span(e: u32) -> (usize, usize) {
    ((e >> 8 & 0x7f_ffff) as usize, (e & 0xff) as usize)
}

/// One text appended per word: the entry at `base + key`.
#[derive(Clone, Copy, Default, Debug)]
struct Part {
    g: Gather,
    base: u32,
    /// a constant's offset, spelt by [`Off`] rather than read from a table
    off: Option<OffKind>,
}

impl Part {
    fn new(g: &Gather, base: u32) -> Part {
        Part { g: *g, base, off: None }
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

/// How a constant's offset is spelt: `c[]`'s signed (`-0x10`), `cx[]`'s unsigned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum OffKind {
    Signed,
    Unsigned,
}

/// A form's constant offset, spelt arithmetically (a 2^14-entry table per instruction
/// falls out of the cache): `0x` and the hex digits of the field's value times the scale,
/// sign-extended where signed. Written after part `at` of the form's parts before the
/// immediates (`BEFORE`, which no part has, where the form has no constant). Checked
/// against the plain renderer's text for every value when the tables are built.
#[derive(Clone, Copy, Default, Debug)]
struct Off {
    g: Gather,
    /// 32 - the field's width where signed, else 0: the shift that sign-extends it
    sext: u32,
    scale: u32,
    at: usize,
}

impl Off {
    /// The text of field value `v` in 16 bytes, and its length.
    #[inline(always)]
    fn spell(&self, v: u32) -> ([u8; 16], usize) {
        // SAFETY: without PDEP, no CPU feature is needed
        let (neg, d, digits) = unsafe { self.digits::<false>(v) };
        let (neg, digits) = (neg as u32, digits as u32);
        let pre = 2 + neg;
        let head: u128 = if neg == 1 { u32::from_le_bytes(*b"-0x\0") as u128 } else { u16::from_le_bytes(*b"0x") as u128 };
        ((head | (d as u128) << (8 * pre)).to_le_bytes(), (pre + digits) as usize)
    }
    /// Whether field value `v` is negative, and its magnitude's hex digits: ASCII, most
    /// significant first in the low bytes, without leading zeros; and how many. With `PDEP`,
    /// the nibbles are spread to bytes by one `pdep`.
    ///
    /// # Safety
    /// With `PDEP`, the CPU has BMI2.
    #[inline(always)]
    unsafe fn digits<const PDEP: bool>(&self, v: u32) -> (bool, u64, usize) {
        let x = ((v << self.sext) as i32 >> self.sext) as i64 * self.scale as i64;
        let (neg, mag) = (x < 0, x.unsigned_abs() as u32);
        let digits = (32 - (mag | 1).leading_zeros()).div_ceil(4) as usize;
        // each nibble to its own byte, least significant first, then to ASCII digits
        let spread = |mag: u32| {
            let mut d = mag as u64;
            d = (d | d << 16) & 0x0000_ffff_0000_ffff;
            d = (d | d << 8) & 0x00ff_00ff_00ff_00ff;
            (d | d << 4) & 0x0f0f_0f0f_0f0f_0f0f
        };
        #[cfg(target_arch = "x86_64")]
        // SAFETY: with PDEP, the caller's CPU has BMI2
        let d = if PDEP { unsafe { std::arch::x86_64::_pdep_u64(mag as u64, 0x0f0f_0f0f_0f0f_0f0f) } } else { spread(mag) };
        #[cfg(not(target_arch = "x86_64"))]
        let d = spread(mag);
        let letters = (d + 0x0606_0606_0606_0606) >> 4 & 0x0101_0101_0101_0101;
        let d = d + 0x3030_3030_3030_3030 + letters * (b'a' - b'0' - 10) as u64;
        // most significant first, without the leading zeros
        (neg, d.swap_bytes() >> (8 * (8 - digits)), digits)
    }
    /// Whether every value's spelling is `table`'s.
    fn agrees(&self, table: &StrTable) -> bool {
        (0..self.g.len()).all(|v| {
            let (t, n) = self.spell(v as u32);
            table.get(v).is_some_and(|s| s.as_bytes() == &t[..n])
        })
    }
}

/// Parts of a form's operands 2 and 3 (and `.RELU`'s predicate): all of a form without
/// immediates (`BEFORE`, the constant's offset among them), or those before the immediates
/// (`IMM_BEFORE`, the first of `before`) and after them (`AFTER`). Every form of a kind
/// writes as many (padded with empty texts): the same steps whatever the form, and the one
/// branch, whether the form has immediates, is the one the renderer takes anyway.
const BEFORE: usize = 5;
const IMM_BEFORE: usize = 2;
const AFTER: usize = 4;

/// Tables keyed by gathered bits, each entry computed from the word that key stands for
/// with the plain decoder's reading of the fields. Every legal word takes the same steps
/// whatever its form: the form picks which tables operands 2 and 3 read, not which code
/// runs, so a stream of mixed forms costs no mispredicted branches.
///
/// Built by [`build`] from the spec and the plain renderer, and compiled in: `fused/tables.rs`
/// holds every instruction's, generated by [`build`] (a test fails when they differ from
/// what it builds now, and `HMUL2_BLESS=1` rewrites them), so a process pays nothing for
/// them; an instruction whose spec changed since is built on its first word instead.
#[derive(Clone, Debug)]
struct Fast {
    /// (opcode, operand_form, ureg_flag) → the spec's form index, or `u8::MAX` when the word is not one.
    sel: Gather,
    form: &'static [u8],
    /// the forms' rule fields → bit set of the forms whose rules the values keep
    rules: Gather,
    legal: &'static [u32],
    /// by form << rules' bits | rule key: the `decode` line of a word its form's rules refuse,
    /// as an index into `refused_lines` (0: none known; the word takes the plain path)
    refused: &'static [u16],
    /// entries of `text`, as `idx`'s (entry 0 unused)
    refused_lines: &'static [u32],
    /// predicate and modifiers → `@P0 HMUL2.BF16_V2 `; entry bit 31 (above any offset) = BF16
    head: Gather,
    head_base: u32,
    /// by the same key: whether a `hidden` rule the tables do not know applies (HADD2's
    /// `.F32`): such a word is read as the decoder reads it, without the bits the rule hides
    head_hidden: &'static [bool],
    op: Op,
    /// `R5, `; operand 1 as `-|R1` and `|.reuse.H1_H1, `
    dst: Part,
    a_pre: Part,
    a_suf: Part,
    /// by form: the parts before the immediates and after them; bit k: form k has immediates
    before: &'static [[Part; BEFORE]],
    after: &'static [[Part; AFTER]],
    /// by form: its constant's offset
    offs: &'static [Off],
    imm_forms: u32,
    /// the immediates' fields (None: the plain path renders immediate forms)
    imms: Option<Imms>,
    text: &'static str,
    idx: &'static [u32],
}

#[rustfmt::skip]
mod tables;
mod wide;

/// One source's modifier fields: neg, abs, the half select's fields (low bits first; none
/// where the spec has no half select), the names of its values, and its reuse bit.
#[derive(Clone)]
struct Slot<'a> {
    neg: &'a Field,
    abs: &'a Field,
    swz: Vec<&'a Field>,
    names: &'a [String],
    reuse_bit: u8,
}

impl Slot<'_> {
    /// The modifiers the decoder reads from `w`.
    fn mods(&self, w: u128) -> SrcMods {
        let (mut v, mut at) = (0, 0);
        for f in &self.swz {
            v |= f.get(w) << at;
            at += f.width;
        }
        SrcMods { neg: self.neg.get(w) != 0, abs: self.abs.get(w) != 0, swizzle: Swizzle::from_bits(v) }
    }
    /// Every (abs, half select) the slot can hold, as modifiers without neg.
    fn suffix_mods(&self) -> Vec<SrcMods> {
        let bits: u32 = self.swz.iter().map(|f| f.width).sum();
        (0..2u32 << bits).map(|v| SrcMods { neg: false, abs: v & 1 == 1, swizzle: Swizzle::from_bits(v >> 1) }).collect()
    }
}

/// The plain renderer's text of one operand: `full(value, mods, reuse)`.
type FullText<'a> = &'a dyn Fn(u32, SrcMods, bool) -> String;

fn text_of(f: impl FnOnce(&mut String)) -> String {
    let mut s = String::new();
    f(&mut s);
    s
}

/// Cut an operand's text into a prefix by (value, neg, abs) and a suffix by (abs, half
/// select, reuse), as the plain renderer writes it: `-|R12` and `|.reuse.H0_H0`, or
/// `-|c[0x3] [`, the offset and `].H0_H0|`. `mid` is the text between them for value 0 (a
/// constant's offset 0). None when the texts do not join back into the renderer's (checked for every value
/// with plain modifiers and every modifier with values 0 and `max`; the tests check all).
fn cut(full: FullText, max: u32, slot: &Slot, mid: &str, reuse: bool) -> Option<(Vec<String>, Vec<String>)> {
    let bare = |neg: bool, abs: bool| SrcMods { neg, abs, swizzle: Swizzle::from_bits(0) };
    let pre = |v: u32, neg: bool, abs: bool| -> Option<String> {
        let t = full(v, bare(neg, abs), false);
        let t = if mid.is_empty() { t.as_str() } else { &t[..t.rfind('[')? + 1] };
        Some(if abs && mid.is_empty() { t.strip_suffix('|')? } else { t }.to_string())
    };
    let suf = |m: SrcMods, r: bool| -> Option<String> { full(0, m, r).strip_prefix(&(pre(0, false, m.abs)? + mid)).map(str::to_string) };
    let reuses: &[bool] = if reuse { &[false, true] } else { &[false] };
    for v in 0..=max {
        for (neg, abs) in [(false, false), (true, false), (false, true), (true, true)] {
            if pre(v, neg, abs)? + mid + &suf(bare(false, abs), false)? != full(v, bare(neg, abs), false) {
                return None;
            }
        }
    }
    for v in [0, max] {
        for m in slot.suffix_mods() {
            for neg in [false, true] {
                for &r in reuses {
                    if pre(v, neg, m.abs)? + mid + &suf(m, r)? != full(v, SrcMods { neg, ..m }, r) {
                        return None;
                    }
                }
            }
        }
    }
    let pres = (0..=max)
        .flat_map(|v| [(false, false), (true, false), (false, true), (true, true)].map(|(n, a)| (v, n, a)))
        .map(|(v, n, a)| pre(v, n, a))
        .collect::<Option<Vec<_>>>()?;
    let sufs = slot.suffix_mods().into_iter().flat_map(|m| reuses.iter().map(move |&r| (m, r))).map(|(m, r)| suf(m, r)).collect::<Option<Vec<_>>>()?;
    Some((pres, sufs))
}

/// A spec's own text order (HSET2, HSETP2, HMNMX2) cut into the fast path's parts: the head
/// (guard, mnemonic and as many of the suffixes as one key holds), the destination part (the
/// suffixes the head leaves, then the destinations: `.IS_A R0, P3, P5, `), operands 1 and 2 as
/// every instruction's, and the tail (the operands after operand 2: `, !P3`). Each part's
/// texts are the plain renderer's, of the [`decode::read_in`] reading of each key's word.
struct Shaped<'a> {
    l: &'static crate::spec::Layout,
    form: Form,
    /// suffixes in the head; the rest open the destination part
    head: &'a [String],
    rest: &'a [String],
    dsts: &'a [String],
    tail: &'a [String],
    head_fields: Vec<&'static Field>,
    dst_fields: Vec<&'static Field>,
    tail_fields: Vec<&'static Field>,
}

impl<'a> Shaped<'a> {
    /// None where the order is not destinations, operand 1, operand 2, then the rest, or a
    /// part's fields do not fit one key.
    fn of(l: &'static crate::spec::Layout, text: &'a crate::spec::TextOrder) -> Option<Shaped<'a>> {
        let s = l.spec;
        let ops = &text.operands[..];
        let at = ops.iter().position(|o| o == "a")?;
        if ops.get(at + 1).map(String::as_str) != Some("b") || ops[..at].iter().chain(&ops[at + 2..]).any(|o| o == "a" || o == "b") {
            return None;
        }
        let field = |name: &str| s.try_index(name).map(|k| &s.fields[k]);
        let dedup = |v: &mut Vec<&'static Field>, f: &'static Field| {
            if !v.iter().any(|x| x.name == f.name) {
                v.push(f);
            }
        };
        // an operand's fields: its own, its negation, and the flag that decides whether it prints
        let operand_fields = |v: &mut Vec<&'static Field>, names: &[String]| {
            for n in names {
                for f in [field(n), field(&format!("{n}_neg"))].into_iter().flatten() {
                    dedup(v, f);
                }
                if let (true, Some(is_a)) = (n == "p_dst" || n == "q_dst", field("is_a")) {
                    dedup(v, is_a);
                }
            }
        };
        let suffix_fields = text.suffixes.iter().map(|n| field(n)).collect::<Option<Vec<_>>>()?;
        // the head keeps the longest run of suffixes one key holds (the format among them:
        // its entry says BF16 for the immediates)
        let must = text.suffixes.iter().position(|n| n == "format").map_or(0, |k| k + 1);
        let (h, head_fields) = (must..=suffix_fields.len()).rev().find_map(|h| {
            let mut v = vec![&l.pred, &l.pred_neg];
            v.extend(&suffix_fields[..h]);
            Gather::new(&v).map(|_| (h, v))
        })?;
        let mut dst_fields = Vec::new();
        for &f in &suffix_fields[h..] {
            dedup(&mut dst_fields, f);
        }
        operand_fields(&mut dst_fields, &ops[..at]);
        let mut tail_fields = Vec::new();
        operand_fields(&mut tail_fields, &ops[at + 2..]);
        Some(Shaped {
            l,
            form: *l.form_kind.first()?,
            head: &text.suffixes[..h],
            rest: &text.suffixes[h..],
            dsts: &ops[..at],
            tail: &ops[at + 2..],
            head_fields,
            dst_fields,
            tail_fields,
        })
    }
    /// What a word of a key's bits holds, as the decoder reads it.
    fn read(&self, w: u128) -> Inst {
        decode::read_in(self.l, self.l.op, self.form, w)
    }
    fn push_head(&self, o: &mut String, i: &Inst) {
        super::render::push_shaped_head(o, i, self.l, self.head);
        if !self.rest.is_empty() {
            o.pop();
        }
    }
    fn push_dsts(&self, o: &mut String, i: &Inst) {
        if !self.rest.is_empty() {
            super::render::push_shaped_suffixes(o, i, self.l, self.rest);
            o.push(' ');
        }
        for n in self.dsts {
            if super::render::push_shaped_operand(o, i, self.l, n) {
                o.push_str(", ");
            }
        }
    }
    fn push_tail(&self, o: &mut String, i: &Inst) {
        for n in self.tail {
            let start = o.len();
            o.push_str(", ");
            if !super::render::push_shaped_operand(o, i, self.l, n) {
                o.truncate(start);
            }
        }
    }
}

fn build(l: &'static crate::spec::Layout) -> Option<Fast> {
    let (op, s, target) = (l.op, l.spec, l.target);
    let n = names();
    let three = s.sources == 3;
    if !(s.sources == 2 || three) || s.forms.len() > 32 || s.forms.len() != l.form_kind.len() {
        return None;
    }
    // a shape with its own text order (the comparisons, min/max), cut into the same parts
    let shaped = match &s.text {
        Some(text) if !three => Some(Shaped::of(l, text)?),
        Some(_) => return None,
        None => None,
    };
    let relu: Vec<&Field> = [&l.relu, &l.relu_pred, &l.relu_pred_neg].into_iter().flatten().collect();
    if !relu.is_empty() && (relu.len() != 3 || shaped.is_some()) {
        return None;
    }
    let same_field = |a: &Field, b: &Field| a.name == b.name;
    let head_fields = match &shaped {
        Some(sh) => sh.head_fields.clone(),
        None => {
            let mut v = vec![&l.pred, &l.pred_neg, &l.format, &l.flush, &l.sat];
            v.extend(relu.first());
            v
        }
    };
    // `hidden` rules: those within `.RELU`'s fields (its predicate without .RELU), or within
    // a shape's head or destination part (HMNMX2's predicate results without .IS_A), that
    // part applies; the others the tables know only when the head's fields decide them, and send
    // the words they apply to the plain way
    let in_relu = |i: usize| relu.iter().any(|f| same_field(f, &s.fields[i]));
    let in_dst = |i: usize| shaped.as_ref().is_some_and(|sh| sh.dst_fields.iter().any(|f| same_field(f, &s.fields[i])));
    let within = |h: &crate::spec::Hidden, part: &dyn Fn(usize) -> bool| part(h.field) && h.when.iter().all(|(f, _)| part(*f));
    // (and a rule within the head's fields the head's texts apply: SM8x's HSET2 and
    // HFMA2.MMA ignore their format bits)
    let in_head_part = |i: usize| head_fields.iter().any(|hf| same_field(hf, &s.fields[i]));
    let head_known = |h: &crate::spec::Hidden| h.forms.is_empty() && within(h, &in_head_part);
    let known = |h: &crate::spec::Hidden| h.forms.is_empty() && (within(h, &in_relu) || within(h, &in_dst)) || head_known(h);
    let decided_by_head = |h: &crate::spec::Hidden| h.when.iter().all(|(f, _)| head_fields.iter().any(|hf| same_field(hf, &s.fields[*f])));
    let in_head = |i: usize| head_fields.iter().any(|hf| same_field(hf, &s.fields[i]));
    if !s.hidden.iter().all(|h| known(h) || (decided_by_head(h) && !in_relu(h.field) && !in_head(h.field))) {
        return None;
    }
    let applies = |h: &crate::spec::Hidden, f: usize, w: u128| {
        (h.forms.is_empty() || h.forms.contains(&f)) && h.when.iter().all(|(i, r)| r.iter().any(|&(lo, hi)| (lo..=hi).contains(&s.fields[*i].get(w))))
    };
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

    let sel = g(&[&l.opcode, &l.operand_form, &l.ureg_flag])?;
    let form: Vec<u8> = words(&sel)
        .into_iter()
        .map(|w| {
            decode::op_of_for(target, w)
                .ok()
                .filter(|(o, _)| *o == op)
                .and_then(|_| decode::form_in(l, op, w).ok())
                .and_then(|f| l.form_index[f as usize])
                .map_or(u8::MAX, |k| k as u8)
        })
        .collect();
    let mut rule_fields: Vec<&Field> = Vec::new();
    for fs in &s.forms {
        for &i in &fs.rule_fields {
            if !rule_fields.iter().any(|f| same_field(f, &s.fields[i])) {
                rule_fields.push(&s.fields[i]);
            }
        }
    }
    let rules = g(&rule_fields)?;
    // a word a rule refuses (nvdisasm rejects it, or prints nothing) takes the plain path
    let legal: Vec<u32> = words(&rules).into_iter().map(|w| (0..s.forms.len()).fold(0, |m, f| m | (s.check(f, w).is_ok() as u32) << f)).collect();
    // the line `decode` prints for a word its form's rules refuse depends only on the form
    // and the rules' fields (the key `LineCache` keeps too): made here once, not per process
    let mut refused = vec![0u16; s.forms.len() << rules.bits];
    let mut refused_lines = vec![0u32];
    let mut line_of: std::collections::HashMap<String, u16> = Default::default();
    for k in 0..s.forms.len() {
        let Some(sk) = form.iter().position(|&f| f as usize == k) else { continue };
        for rk in (0..legal.len()).filter(|&rk| legal[rk] >> k & 1 == 0) {
            let Err(e) = decode::decode_for(target, sel.word(sk) | rules.word(rk)) else { continue };
            let line = format!("illegal: {e}");
            let i = match line_of.get(&line) {
                Some(&i) => i,
                // a line too long for an entry, or past 2^16 of them, stays with the line cache
                None => match (u16::try_from(refused_lines.len()), t.entry_max(&line, 255)) {
                    (Ok(i), Some(e)) => {
                        refused_lines.push(e);
                        line_of.insert(line, i);
                        i
                    }
                    _ => continue,
                },
            };
            refused[k << rules.bits | rk] = i;
        }
    }

    let head = g(&head_fields)?;
    let head_base = t.idx.len() as u32;
    let head_hidden = words(&head).into_iter().map(|w| (0..s.forms.len()).any(|f| s.hidden.iter().any(|h| !known(h) && applies(h, f, w)))).collect();
    for w in words(&head) {
        if let Some(sh) = &shaped {
            let i = sh.read(w);
            let text = text_of(|o| sh.push_head(o, &i));
            let e = t.entry_max(&text, COPY_HEAD)?;
            t.idx.push(e | ((i.format == Format::Bf16) as u32) << 31);
            continue;
        }
        let w = w & !s.hidden.iter().filter(|h| head_known(h) && applies(h, 0, w)).fold(0, |m, h| m | s.fields[h.field].mask);
        let pred = Pred { index: l.pred.get(w) as u8, negated: flag(&l.pred_neg, w) };
        let format = l.format_of.get(l.format.get(w) as usize).copied().unwrap_or(Format::Invalid3);
        let flush = l.flush_of.get(l.flush.get(w) as usize).copied().unwrap_or(Flush::Invalid3);
        let (fc, flc) = (l.format_code[format as usize].unwrap_or(0), l.flush_code[flush as usize].unwrap_or(0));
        let relu_on = relu.first().is_some_and(|r| flag(r, w));
        let text = text_of(|o| super::render::push_head(o, l, pred, fc, flc, flag(&l.sat, w) as u32, relu_on as u32));
        let e = t.entry_max(&text, COPY_HEAD)?;
        t.idx.push(e | ((format == Format::Bf16) as u32) << 31);
    }
    let dst = match &shaped {
        // the suffixes the head leaves, and the destinations
        Some(sh) => {
            let dg = g(&sh.dst_fields)?;
            Part::new(&dg, t.table(words(&dg).into_iter().map(|w| text_of(|o| sh.push_dsts(o, &sh.read(w)))))?)
        }
        None => {
            let dst_g = g(&[&l.dst])?;
            Part::new(&dst_g, t.table(words(&dst_g).into_iter().map(|w| format!("{}, ", &n.r[l.dst.get(w) as u8 as usize])))?)
        }
    };
    let empty = Part::fixed(t.table([""])?);

    // An operand is a prefix by (value, neg, abs), `-|R12`, and a suffix by (abs, half select,
    // and for a register yield and reuse, from which `Control` says whether `.reuse` shows),
    // `|.reuse.H0_H0`, with a constant's offset between them: small tables instead of one
    // of 2^13 entries, all cut from the plain renderer's text.
    let swz_of = |lo: Option<&'static Field>, hi: bool| -> Vec<&'static Field> {
        let mut v: Vec<&'static Field> = Vec::new();
        if l.has_swizzle {
            v.extend(lo);
            v.extend(l.b_swizzle_hi.as_ref().filter(|_| hi));
        }
        v
    };
    let operand = |t: &mut Texts, value: &Field, slot: &Slot, full: FullText, mid: Option<(&Field, &StrTable)>, reg: bool, comma: &str| -> Option<Vec<Part>> {
        let mid_text = mid.map_or("", |(_, tab)| &tab[0]);
        let (pres, sufs) = cut(full, value.max(), slot, mid_text, reg)?;
        let pg = g(&[value, slot.neg, slot.abs])?;
        let pre = t.table(
            words(&pg).into_iter().map(|w| pres[(value.get(w) as usize) << 2 | (flag(slot.neg, w) as usize) | (flag(slot.abs, w) as usize) << 1].clone()),
        )?;
        let mut sf = vec![slot.abs];
        sf.extend(slot.swz.iter().copied());
        if reg {
            sf.extend([&l.yield_, &l.reuse]);
        }
        let sg = g(&sf)?;
        let suf = t.table(words(&sg).into_iter().map(|w| {
            let m = slot.mods(w);
            let mut i = m.abs as usize | (m.swizzle as usize) << 1;
            if reg {
                let c = Control { stall: 0, yield_: flag(&l.yield_, w), wr_bar: 0, rd_bar: 0, wait: 0, reuse: l.reuse.get(w) as u8 };
                i = i << 1 | c.shows_reuse(slot.reuse_bit) as usize;
            }
            format!("{}{comma}", sufs.get(i).map_or("", |s| s.as_str()))
        }))?;
        let mut parts = vec![Part::new(&pg, pre)];
        if let Some((f, tab)) = mid {
            let og = g(&[f])?;
            let kind = if std::ptr::eq(tab, &n.c_off) { OffKind::Signed } else { OffKind::Unsigned };
            // the gather reads the field's bits in order, so its key is the field's value
            if og.bits != f.width || words(&og).iter().enumerate().any(|(k, &w)| f.get(w) as u64 != k as u64) {
                return None;
            }
            let off = Off { g: og, sext: if kind == OffKind::Signed { 32 - og.bits } else { 0 }, scale: cb.scale, at: 0 };
            if !off.agrees(tab) {
                return None;
            }
            parts.push(Part { off: Some(kind), ..Part::new(&og, 0) });
        }
        parts.push(Part::new(&sg, suf));
        Some(parts)
    };
    let reg_text = |names: &'static [String]| move |v: u32, m: SrcMods, r: bool| text_of(|o| super::render::push_reg_src(o, v as u8, m, r, names));
    let other_text = |names: &'static [String], kind: Form| {
        move |v: u32, m: SrcMods, _: bool| {
            let b = match kind {
                Form::Const => Operand2::Const { bank: v as u8, offset: 0 },
                Form::ConstUr => Operand2::ConstUr { ureg: v as u8, offset: 0 },
                _ => Operand2::Ur(v as u8),
            };
            text_of(|o| super::render::push_other_src(o, l, b, m, names))
        }
    };
    let a_slot = Slot { neg: &l.a_neg, abs: &l.a_abs, swz: swz_of(l.a_swizzle.as_ref(), false), names: &l.a_swz_names, reuse_bit: l.reuse_a };
    let a_parts = operand(&mut t, &l.a, &a_slot, &reg_text(a_slot.names), None, true, ", ")?;
    let [a_pre, a_suf] = a_parts[..] else { return None };

    // operand 2 and 3: the special slot (b_*) holds the form's special source, the register
    // slot (c_*) the other one of a three-source instruction
    let names_at = |pos: u8| if pos == 2 { &l.b_swz_names[..] } else { &l.c_swz_names[..] };
    let reuse_at = |pos: u8| if pos == 2 { l.reuse_b } else { l.reuse_c };
    // the same kind and position share tables
    type Made = ((Form, u8), Vec<Option<Part>>);
    let mut made: Vec<Made> = Vec::new();
    let mut source = |t: &mut Texts, kind: Form, pos: u8, comma: &str| -> Option<Vec<Option<Part>>> {
        if let Some((_, p)) = made.iter().find(|(k, _)| *k == (kind, pos)) {
            return Some(p.clone());
        }
        let special = Slot { neg: &l.b_neg, abs: &l.b_abs, swz: swz_of(l.b_swizzle.as_ref(), pos == 2), names: names_at(pos), reuse_bit: reuse_at(pos) };
        let parts: Vec<Option<Part>> = match kind {
            Form::Imm => vec![None, Some(Part::fixed(t.table([comma])?))],
            Form::Rrr => operand(t, &l.b_reg, &special, &reg_text(special.names), None, true, comma)?.into_iter().map(Some).collect(),
            Form::Const => {
                operand(t, &l.cb_bank, &special, &other_text(special.names, kind), Some((cb, &n.c_off)), false, comma)?.into_iter().map(Some).collect()
            }
            Form::ConstUr => {
                operand(t, &l.b_ureg, &special, &other_text(special.names, kind), Some((cb, &n.cx_off)), false, comma)?.into_iter().map(Some).collect()
            }
            Form::Ur => operand(t, &l.b_ureg, &special, &other_text(special.names, kind), None, false, comma)?.into_iter().map(Some).collect(),
            // the register slot of a three-source instruction
            _ => {
                let (Some(reg), Some(neg), Some(abs)) = (&l.c_reg, &l.c_neg, &l.c_abs) else { return None };
                let slot = Slot { neg, abs, swz: swz_of(l.c_swizzle.as_ref(), pos == 2), names: names_at(pos), reuse_bit: reuse_at(pos) };
                if l.has_swizzle && l.c_swizzle.is_none() {
                    return None;
                }
                operand(t, reg, &slot, &reg_text(slot.names), None, true, comma)?.into_iter().map(Some).collect()
            }
        };
        made.push(((kind, pos), parts.clone()));
        Some(parts)
    };
    // `.RELU`'s predicate operand, `, !P5`, by (relu, its predicate) with its hidden rules applied
    // or a shape's operands after operand 2 (the predicate source, the selector), by their fields
    let relu_part = match (&shaped, &relu[..]) {
        (Some(sh), _) => {
            let tg = g(&sh.tail_fields)?;
            Part::new(&tg, t.table(words(&tg).into_iter().map(|w| text_of(|o| sh.push_tail(o, &sh.read(w)))))?)
        }
        (None, &[on, p, neg]) => {
            let rg = g(&[on, p, neg])?;
            let texts = words(&rg).into_iter().map(|w| {
                let hidden = s.hidden.iter().filter(|h| known(h) && applies(h, 0, w)).fold(0, |m, h| m | s.fields[h.field].mask);
                let w = w & !hidden;
                let pred = Pred { index: p.get(w) as u8, negated: flag(neg, w) };
                if flag(on, w) && pred != Pred::ALWAYS {
                    text_of(|o| {
                        o.push_str(", ");
                        super::render::push_pred(o, pred)
                    })
                } else {
                    String::new()
                }
            });
            Part::new(&rg, t.table(texts)?)
        }
        (None, _) => empty,
    };
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut offs = Vec::new();
    let mut imm_forms = 0u32;
    for (k, &f) in l.form_kind.iter().enumerate() {
        // the parts in order, None where the immediates go
        let mut seq: Vec<Option<Part>> = if three {
            let (op2, op3) = if f.special_source() == 3 { (Form::Rrrr, f.kind()) } else { (f.kind(), Form::Rrrr) };
            let mut v = source(&mut t, op2, 2, ", ")?;
            v.extend(source(&mut t, op3, 3, "")?);
            v
        } else {
            source(&mut t, f.kind(), 2, "")?
        };
        seq.push(Some(relu_part));
        let at = seq.iter().position(Option::is_none);
        let (b, a) = seq.split_at(at.unwrap_or(seq.len()));
        let (mut b, a): (Vec<Part>, Vec<Part>) = (b.iter().flatten().copied().collect(), a.iter().flatten().copied().collect());
        // the constant's offset (at most one, before any immediates) follows its prefix
        let mut off = Off { at: BEFORE, ..Off::default() };
        if let Some(i) = b.iter().position(|p| p.off.is_some()) {
            let p = b.remove(i);
            let signed = p.off == Some(OffKind::Signed);
            off = Off { g: p.g, sext: if signed { 32 - p.g.bits } else { 0 }, scale: cb.scale, at: i.checked_sub(1)? };
        }
        // a form without immediates has no parts after them; one with them, no offset
        let fits = if at.is_some() { b.len() <= IMM_BEFORE && a.len() <= AFTER && off.at == BEFORE } else { b.len() <= BEFORE && a.is_empty() };
        if !fits || b.iter().chain(&a).any(|p| p.off.is_some()) {
            return None;
        }
        offs.push(off);
        let mut bp = [empty; BEFORE];
        bp[..b.len()].copy_from_slice(&b);
        let mut ap = [empty; AFTER];
        ap[..a.len()].copy_from_slice(&a);
        before.push(bp);
        after.push(ap);
        imm_forms |= (at.is_some() as u32) << k;
    }
    let imms = g(&[&l.imm_hi]).zip(g(&[&l.imm_lo])).filter(|(hi, lo)| hi.bits == 16 && lo.bits == 16).map(|(hi, lo)| Imms { hi, lo });
    let (text, idx) = t.finish();
    // built once per instruction and process (see [`fast`]), as the compiled-in tables are static
    fn keep<T>(v: Vec<T>) -> &'static [T] {
        Box::leak(v.into_boxed_slice())
    }
    let form: Vec<u8> = form;
    let head_hidden: Vec<bool> = head_hidden;
    Some(Fast {
        sel,
        form: keep(form),
        rules,
        legal: keep(legal),
        refused: keep(refused),
        refused_lines: keep(refused_lines),
        head,
        head_base,
        head_hidden: keep(head_hidden),
        op,
        dst,
        a_pre,
        a_suf,
        before: keep(before),
        after: keep(after),
        offs: keep(offs),
        imm_forms,
        imms,
        text: text.leak(),
        idx: keep(idx),
    })
}

#[cfg(test)]
impl Fast {
    /// Rust source of a static equal to `self`, for `fused/tables.rs`: the gathers, parts
    /// and offsets as their `Debug` text (a struct literal), the tables as arrays.
    fn source(&self) -> String {
        use std::fmt::Write as _;
        fn array<T: std::fmt::Debug>(out: &mut String, name: &str, v: &[T]) {
            let _ = write!(out, "        {name}: &[");
            // numbers 32 to a line, anything longer one to a line
            let mut on_line = usize::MAX;
            for x in v {
                let t = format!("{x:?},");
                if on_line >= 32 || t.len() > 12 {
                    out.push_str("\n            ");
                    on_line = 0;
                }
                out.push_str(&t);
                on_line += 1;
            }
            out.push_str("\n        ],\n");
        }
        let mut o = String::new();
        let _ = writeln!(o, "    (Op::{:?}, {:#018x}, Fast {{", self.op, self.op.spec_hash());
        let _ = writeln!(o, "        op: Op::{:?},", self.op);
        for (name, g) in [("sel", &self.sel), ("rules", &self.rules), ("head", &self.head)] {
            let _ = writeln!(o, "        {name}: {g:?},");
        }
        for (name, p) in [("dst", &self.dst), ("a_pre", &self.a_pre), ("a_suf", &self.a_suf)] {
            let _ = writeln!(o, "        {name}: {p:?},");
        }
        let _ = writeln!(o, "        head_base: {},\n        imm_forms: {:#x},\n        imms: {:?},", self.head_base, self.imm_forms, self.imms);
        array(&mut o, "form", self.form);
        array(&mut o, "legal", self.legal);
        array(&mut o, "refused", self.refused);
        array(&mut o, "refused_lines", self.refused_lines);
        array(&mut o, "head_hidden", self.head_hidden);
        array(&mut o, "before", self.before);
        array(&mut o, "after", self.after);
        array(&mut o, "offs", self.offs);
        array(&mut o, "idx", self.idx);
        let _ = writeln!(o, "        text: {:?},", self.text);
        o.push_str("    }),\n");
        o
    }
}

/// The whole of `fused/tables.rs` for these instructions' tables.
#[cfg(test)]
fn tables_source(fasts: &[&Fast]) -> String {
    let mut o = String::from(TABLES_HEAD);
    o.push_str("pub(super) static TABLES: &[(Op, u64, Fast)] = &[\n");
    for f in fasts {
        o.push_str(&f.source());
    }
    o.push_str("];\n");
    o
}

#[cfg(test)]
const TABLES_HEAD: &str = "\
//! Every instruction's fast-path tables, generated by `isa::fused::build` from the spec and
//! the plain renderer: do not edit. The test `fused::tests::generated_tables_are_current`
//! fails when they differ from what the code builds now; `HMUL2_BLESS=1 cargo test -p
//! harness-isa --lib generated_tables` rewrites this file (after a change to `Fast`'s fields,
//! which this file then no longer compiles against, replace `TABLES` by `&[]` first). Each
//! entry records the hash of the spec it came from (`Op::spec_hash`): a changed spec's
//! tables are built at run time.

#![allow(unused_imports, clippy::all)]
use super::OffKind::{Signed, Unsigned};
use super::{Fast, Gather, Imms, Off, Part, Piece};
use crate::isa::Op;

";

/// The immediates' fields of an instruction whose immediates are 16 bits each; their texts
/// are [`IMM_PACKED`] and [`IMM_SPECIAL`], spelt at compile time (see `isa::immtable`).
#[derive(Clone, Copy, Debug)]
struct Imms {
    hi: Gather,
    lo: Gather,
}

/// `isa::immtable`'s packed texts, by BF16 << 15 | magnitude, from `build.rs`.
static IMM_PACKED: [[u8; 16]; super::immtable::PACKED] = {
    let bytes: &[u8; 16 * super::immtable::PACKED] = include_bytes!(concat!(env!("OUT_DIR"), "/imm_packed.bin"));
    // SAFETY: both are plain bytes of the same size and alignment 1 (a size that differs is a
    // compile error)
    unsafe { std::mem::transmute(*bytes) }
};

include!(concat!(env!("OUT_DIR"), "/imm_special.rs"));

/// The packed entry of immediate `v` (BF16's where `bf16` is 1).
#[inline(always)]
fn imm_entry(bf16: usize, v: u16) -> &'static [u8; 16] {
    IMM_PACKED.get(bf16 << 15 | (v & 0x7fff) as usize).unwrap_or(&[0; 16])
}

impl Imms {
    /// The packed entry of immediate `v`.
    #[inline(always)]
    fn entry(&self, bf16: usize, v: u16) -> &'static [u8; 16] {
        imm_entry(bf16, v)
    }

    /// Append the text of immediate `v` (`, ` after it when `first`). Without branches on
    /// the value: a special value's text replaces the unpacked one by a mask.
    ///
    /// # Safety
    /// As [`Writer::put`]: this puts 35 bytes.
    #[inline(always)]
    unsafe fn push(&self, w: &mut Writer, e: &[u8; 16], v: u16, first: bool) {
        let neg = (v >> 15) as usize;
        let sp = (e[15] >> 7) as usize;
        let class = e[0] as usize & 3 & sp.wrapping_neg();
        let t = IMM_SPECIAL.get(class << 2 | neg << 1 | first as usize).unwrap_or(&[0; 16]);
        let (plain, special) = (unpack(e), u128::from_le_bytes(*t));
        let keep = (sp as u128).wrapping_sub(1);
        let lo = u128::from_le_bytes(plain[..16].try_into().unwrap_or_default()) & keep | special & !keep;
        let hi = u128::from_le_bytes(plain[16..].try_into().unwrap_or_default()) & keep;
        let mut text = [0u8; 32];
        text[..16].copy_from_slice(&lo.to_le_bytes());
        text[16..].copy_from_slice(&hi.to_le_bytes());
        let plain_n = (e[15] & 0x7f) as usize;
        // SAFETY: the caller's room for 35 bytes
        unsafe {
            w.put(b"-", neg & (sp ^ 1));
            w.put(&text, if sp == 1 { t[15] as usize } else { plain_n });
            w.put(b", ", 2 * (first as usize & (sp ^ 1)));
        }
    }
}

/// Appends to a byte vector's reserved capacity: each append copies a constant number of
/// bytes (inlined moves) and keeps a prefix of them, with no branch on the length kept.
struct Writer<'a> {
    v: &'a mut Vec<u8>,
    /// `v`'s buffer, taken once (through `v` every append would read it again, as an append
    /// could have changed it for all the compiler knows)
    ptr: *mut u8,
    len: usize,
}

// the unchecked appends of `fused` stay within what `Writer::new` reserves
const _: () = assert!(Writer::MOST <= Writer::ROOM);

impl<'a> Writer<'a> {
    /// Room for every append of one word: the fast path's head, its parts, the offset
    /// (written after each part before the immediates, kept after one) and 2 immediates.
    /// At least [`Writer::MOST`] (checked when compiling).
    const ROOM: usize = COPY_HEAD + (3 + BEFORE + AFTER) * COPY + BEFORE * 16 + 2 * 35;
    /// What [`fused`] puts at most: the head and 3 parts, then 5 parts each with an offset
    /// or 2 parts, 2 immediates (35 bytes each, see [`Imms::push`]) and 4 parts.
    const MOST: usize = COPY_HEAD + 3 * COPY + {
        let (plain, imm) = (BEFORE * (COPY + 16), IMM_BEFORE * COPY + 2 * 35 + AFTER * COPY);
        if plain > imm {
            plain
        } else {
            imm
        }
    };

    /// Appends go to the end of `out`, which only ever receives ASCII.
    #[inline(always)]
    fn new(out: &'a mut String) -> Writer<'a> {
        // SAFETY: every byte a Writer appends is ASCII (`Texts::entry` and `Imms::new` refuse
        // anything else, and padding is ASCII), so `out` stays UTF-8 whatever prefix is kept.
        let v = unsafe { out.as_mut_vec() };
        if v.capacity() - v.len() < Self::ROOM {
            v.reserve(Self::ROOM);
        }
        let (len, ptr) = (v.len(), v.as_mut_ptr());
        Writer { v, ptr, len }
    }

    /// Copy `src` to the end and keep `keep` bytes of it (at most N). Without a check per
    /// append (a tenth of `decode`'s time with it): [`Writer::new`] reserved [`Writer::ROOM`].
    ///
    /// # Safety
    /// The N of all appends to one writer add up to at most [`Writer::ROOM`].
    #[inline(always)]
    unsafe fn put<const N: usize>(&mut self, src: &[u8; N], keep: usize) {
        debug_assert!(self.len + N <= self.v.capacity(), "more than Writer::ROOM appended");
        // SAFETY: the N bytes from `len` lie within the capacity (the caller's promise: at most
        // ROOM bytes are put, and `new` reserved ROOM), and `src` cannot overlap the vector's
        // spare capacity.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(self.len), N) };
        self.len += keep.min(N);
    }

    /// [`Writer::put`] where the caller knows `keep` is at most N.
    ///
    /// # Safety
    /// As [`Writer::put`], and `keep <= N`.
    #[inline(always)]
    unsafe fn put_exact<const N: usize>(&mut self, src: &[u8; N], keep: usize) {
        debug_assert!(self.len + N <= self.v.capacity() && keep <= N, "more than Writer::ROOM appended, or past N kept");
        // SAFETY: as `put`
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(self.len), N) };
        self.len += keep;
    }
}

impl Writer<'_> {
    /// Drop the spaces at the end, as the plain renderer does.
    fn trim_spaces(&mut self) {
        // SAFETY: bytes up to `len` are initialized (written by `put`, or the vector's own).
        while self.len > 0 && unsafe { *self.ptr.add(self.len - 1) } == b' ' {
            self.len -= 1;
        }
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
                for (code, &c) in super::immtable::NIBBLE.iter().enumerate().skip(10) {
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
            *c = super::immtable::NIBBLE.get((e[i / 2] >> (i % 2 * 4) & 15) as usize).copied().unwrap_or(b'0');
        }
        o
    }
}

/// The tables of `op`'s fast path: the compiled-in ones (`fused/tables.rs`) when they came
/// from `op`'s spec as compiled in, else built on its first word (a few milliseconds).
fn fast(op: Op) -> Option<&'static Fast> {
    static TABLES: [std::sync::OnceLock<Option<&'static Fast>>; Op::ALL.len()] = [const { std::sync::OnceLock::new() }; Op::ALL.len()];
    // tables whose reads could fall out of bounds are not used: the plain path takes the words
    *TABLES[op.index()].get_or_init(|| compiled_in(op).or_else(|| build(op.layout()).map(|f| &*Box::leak(Box::new(f)))).filter(|f| f.in_bounds()))
}

/// The fast-path tables of layout `l`, a target's (SM90's are [`fast`]'s): built on its first
/// word from the target's spec and the plain renderer (a few milliseconds).
fn fast_for(l: &'static crate::spec::Layout) -> Option<&'static Fast> {
    use crate::target::Target;
    if l.target.spec_overlay.is_none() {
        return fast(l.op);
    }
    static TABLES: [[std::sync::OnceLock<Option<&'static Fast>>; Op::ALL.len()]; Target::ALL.len()] =
        [const { [const { std::sync::OnceLock::new() }; Op::ALL.len()] }; Target::ALL.len()];
    let t = Target::ALL.iter().position(|t| t.sm == l.target.sm).unwrap_or(0);
    *TABLES[t][l.op.index()].get_or_init(|| build(l).map(|f| &*Box::leak(Box::new(f))).filter(|f| f.in_bounds()))
}

impl Gather {
    /// Whether every key is below 2^bits, with `pext` (the masks hold `bits` bits, `nlo` of
    /// them in the low half) and without (each piece's bits lie below 2^bits).
    fn keys_in_bounds(&self) -> bool {
        // a piece's mask is low bits (2^w - 1), placed at `at` with at + w <= bits
        let piece = |p: &Piece| p.mask & p.mask.wrapping_add(1) == 0 && p.at + p.mask.count_ones() <= self.bits;
        let pieces = self.p.get(..self.n).is_some_and(|ps| ps.iter().all(piece));
        pieces && self.bits <= 16 && self.nlo == self.m[0].count_ones() && self.m[0].count_ones() + self.m[1].count_ones() == self.bits
    }
}

impl Fast {
    /// Whether every read [`fused`] makes without a check is in bounds: each part's and the
    /// head's entries (base + every key) in `idx`, and each entry's text plus the
    /// [`COPY_HEAD`] bytes a copy may read in `text`. Checked once a process, for the
    /// compiled-in tables as for those built at run time.
    fn in_bounds(&self) -> bool {
        let fits = |base: u32, g: &Gather| g.keys_in_bounds() && (base as usize).checked_add(g.len()).is_some_and(|end| end <= self.idx.len());
        let mut parts = [&self.dst, &self.a_pre, &self.a_suf].into_iter().chain(self.before.iter().flatten()).chain(self.after.iter().flatten());
        parts.all(|p| fits(p.base, &p.g))
            && fits(self.head_base, &self.head)
            && self.idx.iter().all(|&e| span(e).0.checked_add(COPY_HEAD).is_some_and(|end| end <= self.text.len()))
    }
}

/// The instructions the fused path has tables for: every one of the family (a spec with its
/// own text order, the comparisons' and min/max's, is cut into the same parts: [`Shaped`]).
#[cfg(test)]
pub(crate) fn tabled() -> impl Iterator<Item = Op> {
    Op::ALL.into_iter()
}

/// `op`'s tables in `fused/tables.rs`, if they came from its spec as compiled in.
fn compiled_in(op: Op) -> Option<&'static Fast> {
    tables::TABLES.iter().find(|(o, hash, _)| *o == op && *hash == op.spec_hash()).map(|(_, _, f)| f)
}

/// Whether BMI2 and AVX2 were detected on this CPU (keys may use `pext`, copies 32-byte moves).
#[inline(always)]
fn bmi2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("bmi2") && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Make what the fused paths read (the wide programs and their cells, about half a
/// millisecond, where the CPU takes them): for a caller that can do it while it waits for
/// its input, and for [`decode_render_into`], which uses the wide programs only once made.
pub fn prepare_decode() {
    #[cfg(target_arch = "x86_64")]
    let _ = wide::progs();
    for op in Op::ALL {
        let _ = fast(op);
    }
}

/// Decode `word` and append its text to `out`: `decode(word).map(|i| render_into(&i, out))`.
///
/// Where the CPU has AVX-512 VBMI and the wide programs are made ([`prepare_decode`], or a
/// first [`decode_lines_into`]), they render the word; otherwise the fast path does, as a
/// few thousand words a process (`build-kernel`'s) do not repay their making.
pub fn decode_render_into(word: u128, out: &mut String) -> Result<(), Illegal> {
    #[cfg(target_arch = "x86_64")]
    if let Some(ps) = wide::made() {
        // SAFETY: `progs` is Some only where the CPU has the features `render_one` needs
        if unsafe { wide::render_one(ps, word, out) } {
            return Ok(());
        }
    }
    match try_fast(word, out) {
        Ok(()) => Ok(()),
        Err(_) => slow(word, out),
    }
}

/// Why the fused path left a word to the plain functions (having written nothing).
enum Miss {
    /// the tables know the word is illegal; its reason depends on this key only (the opcode;
    /// the form selector; the form and its rules' fields)
    Illegal(u64),
    /// the tables know the word is illegal and its line: `illegal: ` and why
    Refused(&'static str),
    /// anything else
    Plain,
}

/// The fast-path tables of `word`'s instruction, or why the word misses them.
#[inline(always)]
fn tables_of(word: u128) -> Result<&'static Fast, Miss> {
    match decode::op_of(word) {
        Ok(op) => fast(op).ok_or(Miss::Plain),
        Err(Illegal::UnknownOpcode { opcode }) => Err(Miss::Illegal(1 << 60 | opcode as u64)),
        Err(_) => Err(Miss::Plain),
    }
}

/// The fused path alone: the word's text appended, or why not.
#[inline(always)]
fn try_fast(word: u128, out: &mut String) -> Result<(), Miss> {
    let f = tables_of(word)?;
    #[cfg(target_arch = "x86_64")]
    if bmi2() {
        // SAFETY: `bmi2()` says BMI2 and AVX2 were detected on this CPU.
        return unsafe { fused_bmi2(f, word, out) };
    }
    fused::<false>(f, word, out)
}

/// Illegal words' lines by the key their reason depends on (see `Miss::Illegal`), each
/// distinct line kept once: at most `LineCache::KEEP` keys and lines (about 1 MiB).
#[derive(Default)]
pub struct LineCache {
    by_key: std::collections::HashMap<u64, u32, std::hash::BuildHasherDefault<FxHasher>>,
    by_text: std::collections::HashMap<Box<str>, u32, std::hash::BuildHasherDefault<FxHasher>>,
    texts: Vec<Box<str>>,
}

impl LineCache {
    const KEEP: usize = 1 << 16;
}

/// The `decode` command's line of `word` (without its newline): its text, or `illegal: `
/// and why. An illegal word's line is made once per key in `cache`, then copied.
pub fn decode_line_into(word: u128, out: &mut String, cache: &mut LineCache) {
    line_with(word, out, cache, try_fast)
}

/// [`decode_line_into`] of each of `words`, each line followed by a newline. Where the CPU
/// has BMI2 and AVX2 the loop itself is compiled for them, so the renderer is inlined into
/// it rather than called a word at a time.
pub fn decode_lines_into(words: &[u128], out: &mut String, cache: &mut LineCache) {
    #[cfg(target_arch = "x86_64")]
    if let Some(ps) = wide::progs() {
        // SAFETY: `progs` is Some only where the CPU has the features `lines` needs
        return unsafe { wide::lines(ps, words, out, cache) };
    }
    #[cfg(target_arch = "x86_64")]
    if bmi2() {
        // SAFETY: `bmi2()` says BMI2 and AVX2 were detected on this CPU.
        return unsafe { lines_bmi2(words, out, cache) };
    }
    for &w in words {
        decode_line_into(w, out, cache);
        out.push('\n');
    }
}

/// [`decode_render_into`] of a word of `target`: the target's fast-path tables (built from its
/// spec on its first word), and the plain functions ([`decode_for`], [`render_into_for`]) for
/// whatever they do not take; SM90's is [`decode_render_into`].
pub fn decode_render_into_for(target: &'static crate::target::Target, word: u128, out: &mut String) -> Result<(), Illegal> {
    if target.spec_overlay.is_none() {
        return decode_render_into(word, out);
    }
    let l = super::decode::op_of_for(target, word).ok().map(|(_, l)| l);
    match l.and_then(fast_for).map(|f| fused_in::<false>(f, l, word, out)) {
        Some(Ok(())) => Ok(()),
        _ => {
            let i = super::decode_for(target, word)?;
            render_into_for(target, &i, out);
            Ok(())
        }
    }
}

/// [`decode_lines_into`] of `target`'s words ([`decode_render_into_for`] each), each line the
/// text or `illegal: ` and why, followed by a newline.
pub fn decode_lines_into_for(target: &'static crate::target::Target, words: &[u128], out: &mut String, cache: &mut LineCache) {
    use std::fmt::Write as _;
    if target.spec_overlay.is_none() {
        return decode_lines_into(words, out, cache);
    }
    let _ = cache;
    for &w in words {
        if let Err(e) = decode_render_into_for(target, w, out) {
            let _ = write!(out, "illegal: {e}");
        }
        out.push('\n');
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,avx2")]
unsafe fn lines_bmi2(words: &[u128], out: &mut String, cache: &mut LineCache) {
    for &w in words {
        line_with(w, out, cache, |w, o| fused::<true>(tables_of(w)?, w, o));
        out.push('\n');
    }
}

#[inline(always)]
fn line_with(word: u128, out: &mut String, cache: &mut LineCache, fast_path: impl FnOnce(u128, &mut String) -> Result<(), Miss>) {
    use std::fmt::Write as _;
    let key = match fast_path(word, out) {
        Ok(()) => return,
        Err(Miss::Illegal(k)) => Some(k),
        Err(Miss::Refused(line)) => return out.push_str(line),
        Err(Miss::Plain) => None,
    };
    if let Some(t) = key.and_then(|k| cache.by_key.get(&k)).and_then(|&i| cache.texts.get(i as usize)) {
        out.push_str(t);
        return;
    }
    let start = out.len();
    if let Err(e) = slow(word, out) {
        let _ = write!(out, "illegal: {e}");
        if let Some(k) = key {
            let line = &out[start..];
            let i = match cache.by_text.get(line) {
                Some(&i) => i,
                None if cache.texts.len() < LineCache::KEEP => {
                    cache.texts.push(line.into());
                    cache.by_text.insert(line.into(), cache.texts.len() as u32 - 1);
                    cache.texts.len() as u32 - 1
                }
                None => return,
            };
            if cache.by_key.len() < LineCache::KEEP {
                cache.by_key.insert(k, i);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,avx2")]
unsafe fn fused_bmi2(f: &Fast, word: u128, out: &mut String) -> Result<(), Miss> {
    fused::<true>(f, word, out)
}

#[cold]
fn slow(word: u128, out: &mut String) -> Result<(), Illegal> {
    let i = decode(word)?;
    render_into(&i, out);
    Ok(())
}

#[inline(always)]
fn fused<const PEXT: bool>(f: &Fast, word: u128, out: &mut String) -> Result<(), Miss> {
    fused_in::<PEXT>(f, None, word, out)
}

/// [`fused`] with the layout the tables were built from (None: SM90's, the op's own).
#[inline(always)]
fn fused_in<const PEXT: bool>(f: &Fast, layout: Option<&'static crate::spec::Layout>, word: u128, out: &mut String) -> Result<(), Miss> {
    let (lo, hi) = (word as u64, (word >> 64) as u64);
    let op = f.op.index() as u64;
    let sk = f.sel.key::<PEXT>(lo, hi);
    let k = match f.form.get(sk) {
        Some(&k) if k != u8::MAX => k as usize,
        Some(_) => return Err(Miss::Illegal(2 << 60 | op << 32 | sk as u64)),
        None => return Err(Miss::Plain),
    };
    let rk = f.rules.key::<PEXT>(lo, hi);
    match f.legal.get(rk) {
        Some(&m) if m >> k & 1 == 1 => {}
        Some(_) => {
            let line = f.refused.get(k << f.rules.bits | rk).and_then(|&i| f.refused_lines.get(i as usize)).filter(|&&e| e & 0xff != 0);
            return Err(
                match line.and_then(|&e| {
                    let (off, n) = span(e);
                    f.text.get(off..off + n)
                }) {
                    Some(text) => Miss::Refused(text),
                    None => Miss::Illegal(3 << 60 | op << 40 | (k as u64) << 32 | rk as u64),
                },
            );
        }
        None => return Err(Miss::Plain),
    }
    let is_imm = f.imm_forms >> k & 1 == 1;
    let imms = f.imms.as_ref();
    let (Some(before), Some(after), Some(cst), false) = (f.before.get(k), f.after.get(k), f.offs.get(k), is_imm && imms.is_none()) else {
        return Err(Miss::Plain);
    };
    let hk = f.head.key::<PEXT>(lo, hi);
    let (Some(&h), Some(&hidden)) = (f.idx.get(f.head_base as usize + hk), f.head_hidden.get(hk)) else { return Err(Miss::Plain) };
    // the bits a `hidden` rule hides are read as 0, as the decoder reads them; an immediate
    // form whose first immediate is hidden (.F32) prints the second only, as the renderer does
    let (mut lo, mut hi, mut first) = (lo, hi, true);
    if hidden {
        let l = layout.unwrap_or_else(|| f.op.layout());
        let s = l.spec;
        let m = s.hidden_mask(k, word);
        (lo, hi) = (lo & !(m as u64), hi & !((m >> 64) as u64));
        first = l.format_of.get(l.format.get(word) as usize) != Some(&Format::F32) || m & l.imm_hi.mask == 0;
    }
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
    // The table reads need no check per word (they were a tenth of `decode`'s time):
    // `fast` hands out only tables whose `in_bounds` holds, so every part's entry (at its
    // base plus a key below 2^bits) lies in `idx`, and every entry's text, with the padding
    // a copy reads past it, in `text`. The appends need none either: the head, the 3 parts
    // and then either 5 parts and offsets or 2 parts, 2 immediates and 4 parts are at most
    // `Writer::ROOM` bytes (`Writer::MOST`, checked when compiling).
    let text_at = |e: u32| -> *const u8 {
        // SAFETY: `in_bounds`: an entry's offset + COPY_HEAD is at most the text's length
        unsafe { bytes.as_ptr().add(span(e).0) }
    };
    let (_, n) = span(h);
    // SAFETY: as above (the head's entry is one of `idx`'s); COPY_HEAD bytes of the text
    unsafe { w.put::<COPY_HEAD>(&*(text_at(h) as *const [u8; COPY_HEAD]), n) };
    let put = |w: &mut Writer, p: &Part| {
        // SAFETY: as above: the part's index lies in `idx`, its text and COPY bytes past it
        // in `text`, and the appends fit the room
        unsafe {
            let e = *f.idx.get_unchecked(p.index::<PEXT>(lo, hi));
            w.put::<COPY>(&*(text_at(e) as *const [u8; COPY]), span(e).1);
        }
    };
    for p in [&f.dst, &f.a_pre, &f.a_suf] {
        put(&mut w, p);
    }
    if let (true, Some(imm)) = (is_imm, imms) {
        for p in &before[..IMM_BEFORE] {
            put(&mut w, p);
        }
        // SAFETY: within the room, as above
        unsafe {
            if first {
                imm.push(&mut w, e1, v1, true);
            }
            imm.push(&mut w, e2, v2, false);
        }
        for p in after {
            put(&mut w, p);
        }
    } else {
        let (cst_text, cst_n) = cst.spell(cst.g.key::<PEXT>(lo, hi) as u32);
        for (i, p) in before.iter().enumerate() {
            put(&mut w, p);
            // SAFETY: within the room, as above
            unsafe { w.put::<16>(&cst_text, if i == cst.at { cst_n } else { 0 }) };
        }
    }
    // a special immediate ends in a space, which nvdisasm prints before a comma, not at the end
    w.trim_spaces();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{self, GenOptions};

    /// The batch of lines is the lines one at a time: words of every instruction, legal,
    /// with INVALIDn values, broken (illegal, refused), and random bits.
    #[test]
    fn lines_in_a_batch_are_the_lines_one_at_a_time() {
        let seed = 0x11e5;
        println!("seed: {seed}");
        let o = GenOptions { illegal_share: 0.3, invalid_share: 0.3, ignored_share: 0.2, ..GenOptions::legal(seed) };
        let mut words = gen::generate(&o, 0, 20_000);
        let mut r = crate::rng::Rng::new(seed);
        words.extend((0..2_000).map(|_| (r.next_u64() as u128) << 64 | r.next_u64() as u128));
        let (mut one, mut c1) = (String::new(), LineCache::default());
        for &w in &words {
            decode_line_into(w, &mut one, &mut c1);
            one.push('\n');
        }
        let (mut batch, mut c2) = (String::new(), LineCache::default());
        decode_lines_into(&words[..7], &mut batch, &mut c2);
        decode_lines_into(&words[7..], &mut batch, &mut c2);
        decode_lines_into(&[], &mut batch, &mut c2);
        assert_eq!(batch, one);
    }

    fn same(w: u128) {
        let mut a = String::from("x");
        let ra = decode_render_into(w, &mut a);
        let mut b = String::from("x");
        let rb = decode(w).map(|i| render_into(&i, &mut b));
        assert_eq!((&ra, &a), (&rb, &b), "{w:#034x}");
        // the `decode` command's line, twice (the second from the cache where illegal)
        let line = match &rb {
            Ok(()) => b[1..].to_string(),
            Err(e) => format!("illegal: {e}"),
        };
        thread_local! {
            // one cache for every word a test checks, as the decode command keeps one per thread
            static CACHE: std::cell::RefCell<LineCache> = Default::default();
        }
        for _ in 0..2 {
            let mut l = String::from("x");
            CACHE.with(|c| decode_line_into(w, &mut l, &mut c.borrow_mut()));
            assert_eq!(l[1..], line, "{w:#034x}: the line");
            // and in a batch (the wide programs', where the CPU has them, which know some
            // illegal words' lines too)
            let mut l = String::from("x");
            CACHE.with(|c| decode_lines_into(&[w], &mut l, &mut c.borrow_mut()));
            assert_eq!(l[1..], line.clone() + "\n", "{w:#034x}: the line in a batch");
        }
        // the wide programs' steps, plain and (where the CPU has them) AVX-512
        let wide = wide::tests::text(w);
        if let Some(t) = &wide {
            assert_eq!((Ok(()), t.as_str()), (rb.clone(), &b[1..]), "{w:#034x}: the wide program");
        }
        // the path without BMI2, which this CPU may not take by itself; a word it takes, the
        // wide programs take too (the words they leave are illegal or refused)
        if let Some(f) = decode::op_of(w).ok().and_then(fast) {
            let mut c = String::from("x");
            let fast_took = fused::<false>(f, w, &mut c).is_ok();
            let rc = if fast_took { Ok(()) } else { slow(w, &mut c) };
            assert_eq!((rc, c), (rb, b), "{w:#034x} without BMI2");
            assert!(!fast_took || wide.is_some(), "{w:#034x}: the fused path's, not the wide programs'");
        }
    }

    /// The compiled-in tables are what [`build`] makes of today's spec and renderer, for
    /// every instruction (with `HMUL2_BLESS=1`, a stale file is rewritten and the test fails,
    /// to be run again).
    #[test]
    fn generated_tables_are_current() {
        let built: Vec<Fast> = tabled().map(|op| build(op.layout()).unwrap_or_else(|| panic!("{op}'s fast-path tables did not build"))).collect();
        let now = tables_source(&built.iter().collect::<Vec<_>>());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/isa/fused/tables.rs");
        let compiled = include_str!("fused/tables.rs");
        if compiled != now && std::env::var_os("HMUL2_BLESS").is_some_and(|v| v == "1") {
            // not a pass: the binary under test still holds the old tables
            std::fs::write(path, &now).unwrap_or_else(|e| panic!("{path}: {e}"));
            panic!("rewrote {path}: run the tests again to check the new tables");
        }
        if let Some(line) =
            compiled.lines().zip(now.lines()).position(|(a, b)| a != b).or((compiled != now).then(|| compiled.lines().count().min(now.lines().count())))
        {
            panic!(
                "{path} is stale from line {}: the spec or the renderer changed since it was generated; run `HMUL2_BLESS=1 cargo test -p harness-isa --lib generated_tables` and commit it",
                line + 1
            );
        }
        for op in tabled() {
            // (and they pass `in_bounds`, or `fast` would leave every word to the plain path)
            assert!(fast(op).is_some_and(|used| compiled_in(op).is_some_and(|f| std::ptr::eq(used, f))), "{op}: the compiled-in tables are not the ones used");
        }
    }

    /// Tables whose unchecked reads could leave their bounds are refused: a part or the head
    /// past `idx`'s end, an entry whose text runs past `text`'s, a key wider than its bits.
    #[test]
    fn tables_out_of_bounds_are_refused() {
        for op in tabled() {
            let f = fast(op).unwrap();
            assert!(f.in_bounds(), "{op}");
            let n = f.idx.len() as u32;
            let last = |g: &Gather| n - (1 << g.bits);
            assert!(Fast { dst: Part { base: last(&f.dst.g), ..f.dst }, ..f.clone() }.in_bounds(), "{op}: the last place a part fits");
            assert!(!Fast { dst: Part { base: last(&f.dst.g) + 1, ..f.dst }, ..f.clone() }.in_bounds(), "{op}: a part one past the end");
            assert!(!Fast { head_base: last(&f.head) + 1, ..f.clone() }.in_bounds(), "{op}: the head one past the end");
            let wide = Gather { bits: f.a_pre.g.bits - 1, ..f.a_pre.g };
            assert!(!Fast { a_pre: Part { g: wide, ..f.a_pre }, ..f.clone() }.in_bounds(), "{op}: keys wider than the part's bits");
            let mut before = f.before.to_vec();
            before[0][0].base = n;
            assert!(!Fast { before: Box::leak(before.into_boxed_slice()), ..f.clone() }.in_bounds(), "{op}: a part of operand 2 past the end");
            let mut idx = f.idx.to_vec();
            idx[0] = ((f.text.len() - COPY_HEAD + 1) as u32) << 8;
            assert!(!Fast { idx: Box::leak(idx.into_boxed_slice()), ..f.clone() }.in_bounds(), "{op}: a text whose copy runs past the end");
        }
    }

    /// The compiled-in immediate texts are `isa::immtable`'s, built again here.
    #[test]
    fn compiled_in_immediates_are_the_tables() {
        let (packed, special) = crate::isa::immtable::texts().expect("every immediate fits the layout");
        assert!(packed[..] == IMM_PACKED[..], "imm_packed.bin differs from immtable::texts()");
        assert_eq!(special[..], IMM_SPECIAL[..]);
    }

    #[test]
    fn every_targets_lines_are_its_plain_decode_and_render() {
        // random words of every instruction on every target, legal or not: the fast path's
        // line (built from the target's spec) is the plain functions' own
        for t in crate::target::Target::ALL {
            let mut r = crate::rng::Rng::new(40 + u64::from(t.sm));
            let words: Vec<u128> =
                Op::ALL.into_iter().flat_map(|op| (0..20_000).filter_map(|_| crate::gen::candidate_word_for(t, op, &mut r)).collect::<Vec<_>>()).collect();
            let mut fast_lines = String::new();
            decode_lines_into_for(t, &words, &mut fast_lines, &mut LineCache::default());
            let mut plain = String::new();
            for &w in &words {
                match decode_for(t, w) {
                    Ok(i) => plain.push_str(&render_for(t, &i).unwrap()),
                    Err(e) => plain.push_str(&format!("illegal: {e}")),
                }
                plain.push('\n');
            }
            for ((a, b), w) in fast_lines.lines().zip(plain.lines()).zip(&words) {
                assert_eq!(a, b, "{t}: {w:#034x}");
            }
            assert_eq!(fast_lines.len(), plain.len(), "{t}");
            // and the tables were built (the fast path took the words)
            if t.spec_overlay.is_some() {
                let untabled: Vec<Op> = Op::all_for(t).filter(|o| o.layout_for(t).is_some_and(|l| fast_for(l).is_none())).collect();
                assert!(untabled.is_empty(), "{t}: {untabled:?} take the plain path");
            }
        }
    }

    #[test]
    fn equals_decode_then_render() {
        for w in gen::generate(&GenOptions::legal(9), 0, 20_000) {
            same(w);
        }
        for op in tabled() {
            assert!(fast(op).is_some_and(|f| f.imms.is_some()), "{op}'s fast-path tables did not build");
        }
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

    /// [`every_key_of_every_form`] on every other target: each key of each form's words,
    /// from a few random words of the form (legal or not), against `decode_for` + `render_for`.
    #[test]
    fn every_key_of_every_form_on_every_target() {
        let seed = crate::rng::resolve_seed(std::env::var("FUSED_SEED").ok().and_then(|s| s.parse().ok()));
        println!("seed: {seed}");
        let per_key = crate::testlevel::sized("fused every_key_of_every_form_on_every_target: values per key", 1 << 12, 64) as usize;
        let mut r = crate::rng::Rng::new(seed);
        let line = |t: &'static crate::target::Target, w: u128, fast: bool| {
            let mut o = String::new();
            let res = if fast {
                decode_render_into_for(t, w, &mut o)
            } else {
                decode_for(t, w).map(|i| {
                    render_into_for(t, &i, &mut o);
                })
            };
            (res, o)
        };
        for t in crate::target::Target::ALL.iter().filter(|t| t.spec_overlay.is_some()) {
            for op in Op::all_for(t) {
                let Some(l) = op.layout_for(t) else { continue };
                let f = fast_for(l).unwrap_or_else(|| panic!("{t} {op}: no fast-path tables"));
                for k in 0..f.before.len() {
                    let mut gathers: Vec<Gather> = vec![f.rules, f.head, f.dst.g, f.a_pre.g, f.a_suf.g];
                    gathers.extend(f.before[k].iter().chain(&f.after[k]).map(|p| p.g));
                    gathers.push(f.offs[k].g);
                    gathers.extend(f.imms.into_iter().flat_map(|i| [i.hi, i.lo]));
                    let Some(sk) = f.form.iter().position(|&x| x as usize == k) else { continue };
                    // two legal words of the form (which take the fast path) and one of random bits
                    let legal: Vec<u128> = (0..2_000)
                        .filter_map(|_| crate::gen::random_word_for(t, op, &mut r))
                        .filter(|&w| decode::form_in(l, op, w).ok() == Some(l.form_kind[k]))
                        .take(2)
                        .collect();
                    assert!(!legal.is_empty(), "{t} {op} form {k}: no legal word drawn");
                    for &w in &legal {
                        assert!(fused_in::<false>(f, Some(l), w, &mut String::new()).is_ok(), "{t} {op} form {k}: {w:#034x} took the plain path");
                    }
                    let random = (r.next_u64() as u128) << 64 | r.next_u64() as u128;
                    for base in legal.into_iter().chain([random & !mask(&f.sel) | f.sel.word(sk)]) {
                        for g in &gathers {
                            let step = g.len().div_ceil(per_key).max(1);
                            for key in (r.next_u64() as usize % step..g.len()).step_by(step) {
                                let w = base & !mask(g) | g.word(key);
                                assert_eq!(line(t, w, true), line(t, w, false), "{t} {op} form {k}: {w:#034x}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The mask of the bits a gather reads.
    fn mask(g: &Gather) -> u128 {
        g.m[0] as u128 | (g.m[1] as u128) << 64
    }

    /// Every value of every key each form's words read, in a few words of each form of each
    /// instruction (edge and INVALIDn values, ignored bits and all-ones fields among them):
    /// every table entry a word can reach, and every constant offset spelt, is checked
    /// against the plain path. At the quick test level each key takes an evenly spaced
    /// sample of its values from a seeded start (all of a small key's).
    #[test]
    fn every_key_of_every_form() {
        let seed = crate::rng::resolve_seed(std::env::var("FUSED_SEED").ok().and_then(|s| s.parse().ok()));
        let per_key = crate::testlevel::sized("fused every_key_of_every_form: values per key", 1 << 16, 256) as usize;
        let mut rng = crate::rng::Rng::new(seed);
        let mut values = |n: usize| {
            let step = n.div_ceil(per_key).max(1);
            let from = (rng.next_u64() % step as u64) as usize;
            (from..n).step_by(step)
        };
        for op in tabled() {
            let f = fast(op).unwrap_or_else(|| panic!("{op}'s fast-path tables did not build"));
            assert!(f.imms.is_some(), "{op}'s immediate tables did not build");
            for (k, &form) in op.layout().form_kind.iter().enumerate() {
                let o = GenOptions { form: Some(form), invalid_share: 0.5, ignored_share: 0.5, ..GenOptions::legal_of(seed, &[op]) };
                // a legal word of every form takes the fast path
                for w in gen::generate(&GenOptions { form: Some(form), ..GenOptions::legal_of(seed, &[op]) }, 0, 64) {
                    assert!(fused::<false>(f, w, &mut String::new()).is_ok(), "{op} {form}: {w:#034x} took the plain path");
                    assert!(wide::tests::text(w).is_some(), "{op} {form}: {w:#034x} is not the wide program's");
                }
                let mut bases = gen::generate(&o, 0, 1);
                // the same words with every bit of every key set
                let mut gathers: Vec<Gather> = vec![f.sel, f.rules, f.head, f.dst.g, f.a_pre.g, f.a_suf.g];
                gathers.extend(f.before[k].iter().chain(&f.after[k]).map(|p| p.g));
                gathers.push(f.offs[k].g);
                gathers.extend(f.imms.into_iter().flat_map(|i| [i.hi, i.lo]));
                let all = gathers.iter().fold(0, |m, g| m | mask(g)) & !mask(&f.sel);
                bases.extend(bases.clone().into_iter().map(|w| w | all));
                // and with modifiers that hide fields (HADD2's .F32), where the instruction has them
                if let Some(hk) = f.head_hidden.iter().position(|&h| h) {
                    bases.extend(bases.clone().into_iter().map(|w| w & !mask(&f.head) | f.head.word(hk)));
                }
                for &base in &bases {
                    same(base);
                    for g in &gathers {
                        for key in values(g.len()) {
                            same(base & !mask(g) | g.word(key));
                        }
                    }
                }
            }
        }
    }
}
