//! The fused renderer with every table key of a word gathered at once (AVX-512 VBMI), for
//! the words `fused` takes: the same text, a little sooner one word at a time (47-50 against
//! 51-56 ns a word on the decode benchmark's words) and about a third sooner in a batch
//! (`decode_lines_into`, which the `decode` command runs: 35-36 against 50 ns).
//!
//! A word's instruction and form (one key, the same bits for every instruction) pick a
//! [`Prog`]: the form's parts in a fixed order of [`PARTS`] lanes, padded with empty texts,
//! and what goes between lane `LEFT - 1` and lane `LEFT` (the immediates, or the constant's
//! offset). Its keys come from the word in a dozen vector instructions: `vpmultishiftqb`
//! takes every field's bits (in pieces of at most 8) into a byte each, `vpermb` puts each
//! key's pieces side by side, and 16-bit shifts and pairwise sums join them, with each
//! part's key scaled and added to its table's place in [`Progs::cells`]. A cell holds its
//! text's length and the text itself, so a part is one read and one fixed-size copy, with no
//! index to follow first. The modifiers that hide fields (HADD2's `.F32`) are applied as a
//! mask picked by the head's key, with no branch. A batch reads (plans) 16 words before it
//! writes them, so their reads overlap. A word no program takes is illegal: in a batch, the
//! line of one whose selector names no form of a known instruction, or whose form's rules
//! refuse it, comes from a table; any other is left to `fused`, which writes the same line as
//! the plain renderer.
//!
//! What made it faster was measured (`cargo bench -p hmul2-benches --bench decode`), and so
//! was what did not: a gather of the entries then their texts (a dependent read), lookups
//! whose bounds differed by instruction (a branch mispredicted where instructions mix), a
//! branch for the hidden fields, and the block's size (4 to 64 words).
//!
//! The programs and cells (about 0.5 MB) are made once a process from the same compiled-in
//! tables as `fused`, and every read they make without a check is checked when they are made.
//! [`render`] also runs without the vector instructions (`V = false`: the same steps in plain
//! code), so the tests check the programs on every CPU, and the vector path against it where
//! the CPU has AVX-512.

use super::{fast, span, Fast, Gather, Off, Part, Writer, BEFORE, COPY, COPY_HEAD, IMM_BEFORE};
use crate::isa::Op;

/// Slots before the insert (the immediates or the constant's offset) and after it.
const LEFT: usize = 8;
const RIGHT: usize = 4;
const PARTS: usize = LEFT + RIGHT;
/// Key lanes past the parts': the constant's offset, the two immediates (the last is unused).
const K_OFF: usize = PARTS;
const K_IMM1: usize = PARTS + 1;
const K_IMM2: usize = PARTS + 2;
const KEYS: usize = 16;
/// Pieces of one key (each at most 8 bits); the byte that is always 0 (its kept bits are none).
const PIECES: usize = 4;
const ZERO: usize = 63;

// a word's puts stay within what `Writer::new` reserves: the head, 11 parts, 2 immediates
const _: () = assert!(COPY_HEAD + (PARTS - 1) * COPY + 2 * 35 <= Writer::ROOM);
const _: () = assert!(KEYS * PIECES == 64 && K_IMM2 < KEYS);

/// One form's steps: where each key's bits lie, and the tables they index.
#[repr(C, align(64))]
#[derive(Clone, Debug)]
struct Prog {
    /// byte s takes 8 bits of the word's low half (s / 8 even) or high half from bit `ctrl[s]`
    ctrl: [u8; 64],
    /// the bits it keeps
    keep: [u8; 64],
    /// key k's piece c is byte `perm[4k + c]` of those
    perm: [u8; 64],
    /// shifted left by `shift[4k + c]` within the key
    shift: [u16; 64],
    /// key k's place: a part's cell, at `base[k] + (key << scale[k])` in `Progs::cells`; the
    /// others (offset, immediates) are the key itself (0 and 0)
    base: [u32; KEYS],
    scale: [u32; KEYS],
    /// the parts' tables in `idx` (base, key bits), of which `make` makes the cells
    tables: [(u32, u32); PARTS],
    /// the bit of `legal` that says this form's rules keep the word
    form: u32,
    /// whether the insert is the immediates (else the offset, kept where `off_keep`)
    imm: bool,
    off: Off,
    off_keep: usize,
    /// by the head's key, the index in `masks` of the bits its modifiers hide and whether the
    /// first immediate still shows (0: none, and it does)
    hidden: Box<[u8]>,
    masks: Vec<(u128, bool)>,
    fast: &'static Fast,
}

/// Every instruction's programs, by the form selector's key.
pub(super) struct Progs {
    sel: Gather,
    /// by selector key: 1 + the index in `progs`, or 0 (the word goes to `fused`)
    by_sel: Box<[u8]>,
    progs: Vec<Prog>,
    /// every part's texts, a cell each: its length (a head's with bit 7 set for BF16) and
    /// the text; [`CELL_PAD`] bytes past the last
    cells: Box<[u8]>,
    /// made on the first word no program takes (it reads every instruction's spec)
    sel_lines: std::sync::OnceLock<Option<SelLines>>,
}

/// By selector key, where no program takes it: the `decode` line of a known instruction's
/// word with no such form, as an entry of `lines` (offset << 8 | length; 0: none).
struct SelLines {
    by_sel: Box<[u32]>,
    lines: String,
}

impl Progs {
    fn sel_lines(&self) -> Option<&SelLines> {
        self.sel_lines.get_or_init(|| sel_lines(&self.sel, &self.by_sel)).as_ref()
    }
}

/// The line of a word whose selector names a known instruction but none of its forms, which
/// depends on the selector alone (the key `fused` caches such lines by).
fn sel_lines(sel: &Gather, by_sel: &[u8]) -> Option<SelLines> {
    let mut lines = String::new();
    let mut line_of = vec![0u32; sel.len()].into_boxed_slice();
    let mut seen: std::collections::HashMap<String, u32> = Default::default();
    for (sk, e) in line_of.iter_mut().enumerate().filter(|(sk, _)| by_sel.get(*sk) == Some(&0)) {
        let w = sel.word(sk);
        let Some(f) = super::decode::op_of(w).ok().and_then(fast) else { continue };
        if f.form.get(sk) != Some(&u8::MAX) {
            continue;
        }
        let Err(why) = super::decode::decode(w) else { continue };
        let line = format!("illegal: {why}");
        *e = match seen.get(&line) {
            Some(&e) => e,
            None if line.len() < 0x100 => {
                let e = u32::try_from(lines.len()).ok().filter(|&at| at < 1 << 24)? << 8 | line.len() as u32;
                lines.push_str(&line);
                seen.insert(line, e);
                e
            }
            None => continue,
        };
    }
    Some(SelLines { by_sel: line_of, lines })
}

/// Cell sizes: a head's, and a part's (of a table whose texts are all shorter than 16, or
/// than 32 bytes); bytes read past the last cell.
const HEAD_CELL: usize = 64;
const CELLS: [usize; 2] = [16, 32];
const CELL_PAD: usize = 64;
/// Bytes copied from each lane's cell (the head's: [`COPY_HEAD`]); a table whose texts are
/// longer than its lane's copy takes no program.
const LANE_COPY: [usize; PARTS] = [COPY_HEAD, COPY, 16, COPY, 16, COPY, 16, 16, 16, 16, 16, 16];
const _: () = assert!(LEFT == 8 && PARTS == 12, "`write` names the lanes");
// a copy from a cell's text stays within it, or within the cells and their padding
const _: () = assert!(COPY_HEAD < HEAD_CELL && COPY < CELL_PAD);

static PROGS: std::sync::OnceLock<Option<Progs>> = std::sync::OnceLock::new();

/// The programs, where this CPU has what the vector path needs (and they could be made);
/// made on the first call (about half a millisecond).
pub(super) fn progs() -> Option<&'static Progs> {
    PROGS.get_or_init(|| if cpu_has_it() { make() } else { None }).as_ref()
}

/// The programs, if made already (by [`progs`]): for a word at a time, which would not
/// repay their making on its own.
pub(super) fn made() -> Option<&'static Progs> {
    PROGS.get().and_then(Option::as_ref)
}

fn cpu_has_it() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        has!("avx512f") && has!("avx512bw") && has!("avx512vbmi") && has!("bmi2") && has!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The programs of every instruction whose tables take them (None when none do, or the
/// instructions' form selectors lie in different bits).
fn make() -> Option<Progs> {
    let fasts: Vec<&'static Fast> = Op::ALL.iter().filter_map(|&op| fast(op)).collect();
    let sel = fasts.first()?.sel;
    if fasts.iter().any(|f| f.sel.m != sel.m || f.sel.nlo != sel.nlo || f.sel.bits != sel.bits) {
        return None;
    }
    let mut by_sel = vec![0u8; sel.len()].into_boxed_slice();
    let mut progs = Vec::new();
    for f in fasts {
        for k in 0..f.before.len() {
            let Some(p) = prog(f, k) else { continue };
            if progs.len() >= u8::MAX as usize {
                return None;
            }
            progs.push(p);
            for (sk, &form) in f.form.iter().enumerate() {
                if form as usize == k {
                    *by_sel.get_mut(sk)? = progs.len() as u8;
                }
            }
        }
    }
    let cells = cells(&mut progs)?;
    Some(Progs { sel, by_sel, progs, cells, sel_lines: Default::default() })
}

/// The parts' cells (each table's once, in the smallest size its texts fit), and each
/// program's base and scale for them; None where a text is too long for its cell.
fn cells(progs: &mut [Prog]) -> Option<Box<[u8]>> {
    type Table = (usize, u32, u32, bool);
    let text = |f: &Fast, e: u32| f.text.as_bytes().get((e >> 8 & 0x7f_ffff) as usize..).and_then(|t| t.get(..(e & 0xff) as usize));
    // where each table's cells go (place, log2 of the cell size, its longest text), then the
    // cells, in one allocation
    let mut made: std::collections::HashMap<Table, (u32, u32, usize)> = Default::default();
    let mut order: Vec<(Table, &'static Fast)> = Vec::new();
    let mut end = 0usize;
    for p in progs.iter_mut() {
        let f = p.fast;
        for (lane, &(base, bits)) in p.tables.iter().enumerate() {
            let head = lane == 0;
            let table = (f as *const Fast as usize, base, bits, head);
            let (at, scale, longest) = match made.get(&table) {
                Some(&m) => m,
                None => {
                    let entries = f.idx.get(base as usize..(base as usize).checked_add(1 << bits)?)?;
                    let longest = entries.iter().map(|&e| text(f, e).map(<[u8]>::len)).collect::<Option<Vec<_>>>()?.into_iter().max()?;
                    let size = if head { HEAD_CELL } else { *CELLS.iter().find(|&&c| longest < c)? };
                    let m = (u32::try_from(end).ok()?, size.trailing_zeros(), longest);
                    end += entries.len() * size;
                    made.insert(table, m);
                    order.push((table, f));
                    m
                }
            };
            if longest > LANE_COPY[lane].min(0x7f) {
                return None;
            }
            (p.base[lane], p.scale[lane]) = (at, scale);
        }
    }
    u32::try_from(end + CELL_PAD).ok()?;
    let mut cells = vec![b' '; end + CELL_PAD].into_boxed_slice();
    for ((_, base, bits, head), f) in order {
        let (at, scale, _) = made[&(f as *const Fast as usize, base, bits, head)];
        let entries = f.idx.get(base as usize..base as usize + (1 << bits))?;
        for (&e, cell) in entries.iter().zip(cells[at as usize..].chunks_exact_mut(1 << scale)) {
            let t = text(f, e)?;
            cell[0] = t.len() as u8 | if head { ((e >> 31) as u8) << 7 } else { 0 };
            cell[1..=t.len()].copy_from_slice(t);
        }
    }
    Some(cells)
}

/// Form `k`'s program, or None where its parts do not fit the slots or its keys the bytes.
fn prog(f: &'static Fast, k: usize) -> Option<Prog> {
    let (before, after, off) = (f.before.get(k)?, f.after.get(k)?, *f.offs.get(k)?);
    let imm = f.imm_forms >> k & 1 == 1;
    if imm && f.imms.is_none() {
        return None;
    }
    let empty = Part::fixed(f.idx.iter().position(|&e| e & 0xff == 0)? as u32);
    let head = Part::new(&f.head, f.head_base);
    let mut left = vec![head, f.dst, f.a_pre, f.a_suf];
    let right: Vec<Part> = if imm {
        left.extend(&before[..IMM_BEFORE]);
        after.to_vec()
    } else if off.at < BEFORE {
        left.extend(&before[..=off.at]);
        before[off.at + 1..].to_vec()
    } else {
        left.extend(&before[..LEFT - 4]);
        before[LEFT - 4..].to_vec()
    };
    if left.len() > LEFT || right.len() > RIGHT {
        return None;
    }
    left.resize(LEFT, empty);
    let mut parts = left;
    parts.extend(right);
    parts.resize(PARTS, empty);
    // a table whose texts are longer than its lane's copy takes no program (its form's words
    // are `fused`'s)
    for (lane, part) in parts.iter().enumerate() {
        let entries = f.idx.get(part.base as usize..(part.base as usize).checked_add(part.g.len())?)?;
        if entries.iter().any(|&e| span(e).1 > LANE_COPY[lane].min(0x7f)) {
            return None;
        }
    }
    let mut keys: Vec<(Gather, u32)> = parts.iter().map(|p| (p.g, p.base)).collect();
    let none = Gather::default();
    // the constant's offset goes between the lanes where the form has one
    let has_off = !imm && off.at < BEFORE;
    keys.push((if has_off { off.g } else { none }, 0));
    let (i1, i2) = f.imms.map_or((none, none), |i| (i.hi, i.lo));
    keys.extend([(i1, 0), (i2, 0)]);
    let mut p = Prog {
        ctrl: [0; 64],
        keep: [0; 64],
        perm: [ZERO as u8; 64],
        shift: [0; 64],
        base: [0; KEYS],
        scale: [0; KEYS],
        tables: [(0, 0); PARTS],
        form: k as u32,
        imm,
        off,
        off_keep: if has_off { usize::MAX } else { 0 },
        hidden: Box::new([]),
        masks: Vec::new(),
        fast: f,
    };
    (p.hidden, p.masks) = hidden(f, k)?;
    // bytes of the low half's lanes (0, 2, 4, 6), then the high half's, the last kept 0
    let mut free: [Vec<usize>; 2] = [(0..64).filter(|s| s / 8 % 2 == 0).collect(), (0..64).filter(|&s| s / 8 % 2 == 1 && s != ZERO).collect()];
    free.iter_mut().for_each(|v| v.reverse());
    for (key, (g, base)) in keys.iter().enumerate() {
        // the parts' keys index tables in `idx`; the others are values
        if !g.keys_in_bounds() || (key < PARTS && (*base as usize).checked_add(g.len()).is_none_or(|end| end > f.idx.len())) {
            return None;
        }
        if let Some(t) = p.tables.get_mut(key) {
            *t = (*base, g.bits);
        }
        let mut c = 0;
        for piece in &g.p[..g.n] {
            let width = piece.mask.count_ones();
            for at in (0..width).step_by(8) {
                let s = free[piece.hi as usize].pop()?;
                if c == PIECES {
                    return None;
                }
                p.ctrl[s] = (piece.shift + at) as u8;
                p.keep[s] = ((1u32 << (width - at).min(8)) - 1) as u8;
                p.perm[key * PIECES + c] = s as u8;
                p.shift[key * PIECES + c] = (piece.at + at) as u16;
                c += 1;
            }
        }
        // every key the steps can make lies below 2^bits (the cells' and values' bounds)
        let most: u32 =
            (0..PIECES).map(|c| (p.keep[p.perm[key * PIECES + c] as usize] as u32).checked_shl(p.shift[key * PIECES + c] as u32).unwrap_or(0) & 0xffff).sum();
        if most >= 1 << g.bits {
            return None;
        }
    }
    Some(p)
}

/// `Prog::hidden` and `Prog::masks`.
type Hidden = (Box<[u8]>, Vec<(u128, bool)>);

/// Form `k`'s hidden bits by the head's key (see `Prog::hidden`): the bits of the `hidden`
/// rules the head's fields decide (`fused` sends such words the plain way; the rules within
/// `.RELU`'s fields its tables apply themselves). None where a hiding rule depends on other
/// fields, or more than 256 masks differ.
fn hidden(f: &Fast, k: usize) -> Option<Hidden> {
    // every head key has its entry (a lookup whose bound depended on the instruction would
    // be a branch mispredicted where instructions mix)
    let mut masks: Vec<(u128, bool)> = vec![(0, true)];
    if !f.head_hidden.iter().any(|&h| h) {
        return Some((vec![0; f.head.len()].into_boxed_slice(), masks));
    }
    let (s, l) = (f.op.spec(), f.op.layout());
    let head = f.head.m[0] as u128 | (f.head.m[1] as u128) << 64;
    // the head's fields and the form's selector and rules are read before (and must not be hidden)
    let read = head | f.sel.m[0] as u128 | (f.sel.m[1] as u128) << 64 | f.rules.m[0] as u128 | (f.rules.m[1] as u128) << 64;
    let mut by_key = vec![0u8; f.head.len()];
    for (hk, slot) in by_key.iter_mut().enumerate() {
        if !*f.head_hidden.get(hk)? {
            continue;
        }
        let w = f.head.word(hk);
        let m = s.hidden_mask_of(k, w, |h| h.when.iter().all(|(i, _)| s.fields[*i].mask & !head == 0));
        if m & read != 0 {
            return None;
        }
        let first = l.format_of.get(l.format.get(w) as usize) != Some(&crate::isa::Format::F32) || m & l.imm_hi.mask == 0;
        let i = match masks.iter().position(|&x| x == (m, first)) {
            Some(i) => i,
            None => {
                masks.push((m, first));
                masks.len() - 1
            }
        };
        *slot = u8::try_from(i).ok()?;
    }
    Some((by_key.into_boxed_slice(), masks))
}

/// Byte `s`'s pieces: the `vpmultishiftqb` of the word (its bytes take 8 bits of their lane,
/// from any bit, wrapping) kept by `keep`.
#[inline(always)]
fn keys_plain(p: &Prog, word: u128) -> [u32; KEYS] {
    let half = [word as u64, (word >> 64) as u64];
    let bytes: [u8; 64] = std::array::from_fn(|s| (half[s / 8 % 2].rotate_right(p.ctrl[s] as u32 & 63) as u8) & p.keep[s]);
    std::array::from_fn(|k| {
        // as `vpmaddwd` sums the 16-bit lanes (signed) and the mask keeps 16 bits
        let sum = (0..PIECES).fold(0i32, |acc, c| {
            let i = k * PIECES + c;
            let lane = (bytes[p.perm[i] as usize & 63] as u16).checked_shl(p.shift[i] as u32).unwrap_or(0);
            acc.wrapping_add(lane as i16 as i32)
        });
        ((sum as u32 & 0xffff) << p.scale[k]).wrapping_add(p.base[k])
    })
}

/// The same with AVX-512: a dozen instructions for all 16 keys.
///
/// # Safety
/// The CPU has AVX-512 F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn keys_avx512(p: &Prog, word: u128) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    // SAFETY: the caller's CPU features; every load reads a whole array of `p` or `word`
    unsafe {
        let w = _mm512_broadcast_i32x4(_mm_loadu_si128((&word as *const u128).cast()));
        let b = _mm512_and_si512(_mm512_multishift_epi64_epi8(_mm512_load_si512(p.ctrl.as_ptr().cast()), w), _mm512_load_si512(p.keep.as_ptr().cast()));
        let b = _mm512_permutexvar_epi8(_mm512_load_si512(p.perm.as_ptr().cast()), b);
        let lo = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(b));
        let hi = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64::<1>(b));
        let lo = _mm512_sllv_epi16(lo, _mm512_load_si512(p.shift.as_ptr().cast()));
        let hi = _mm512_sllv_epi16(hi, _mm512_load_si512(p.shift.as_ptr().add(32).cast()));
        let ones = _mm512_set1_epi16(1);
        let (lo, hi) = (_mm512_madd_epi16(lo, ones), _mm512_madd_epi16(hi, ones));
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        let sum = _mm512_add_epi32(_mm512_permutex2var_epi32(lo, even, hi), _mm512_permutex2var_epi32(lo, odd, hi));
        let key = _mm512_sllv_epi32(_mm512_and_si512(sum, _mm512_set1_epi32(0xffff)), _mm512_load_si512(p.scale.as_ptr().cast()));
        _mm512_add_epi32(key, _mm512_load_si512(p.base.as_ptr().cast()))
    }
}

/// A word a program takes, read: its program, and its keys (the parts' cells, the offset's
/// and the immediates' values).
#[derive(Clone, Copy)]
struct Plan<'a> {
    p: &'a Prog,
    key: [u32; KEYS],
    /// whether the first immediate shows (a modifier may hide it)
    first: bool,
}

/// What [`plan`] made of a word: its plan, or the `decode` line of an illegal word whose
/// reason its form selector or its form's rules decide (`illegal: ` and why), or neither
/// (the word is `fused`'s).
#[derive(Clone, Copy)]
enum Read<'a> {
    Word(Plan<'a>),
    Line(&'a str),
    Other,
}

/// Read `word` for [`write`]; None where the word is `fused`'s (an illegal or refused one).
/// `V`: the keys with AVX-512.
///
/// # Safety
/// With `V`, the CPU has AVX-512 F, BW, VBMI and BMI2 (as [`progs`] checked).
#[inline(always)]
unsafe fn plan<const V: bool>(ps: &Progs, word: u128) -> Option<Plan<'_>> {
    // SAFETY: the caller's
    match unsafe { read_word::<V>(ps, word) } {
        Read::Word(r) => Some(r),
        _ => None,
    }
}

/// [`plan`], with the lines of the illegal words the tables know.
///
/// # Safety
/// As [`plan`].
#[inline(always)]
unsafe fn read_word<const V: bool>(ps: &Progs, word: u128) -> Read<'_> {
    let (lo, hi) = (word as u64, (word >> 64) as u64);
    let sk = ps.sel.key::<V>(lo, hi);
    let Some(p) = ps.by_sel.get(sk).and_then(|&i| ps.progs.get((i as usize).wrapping_sub(1))) else {
        let line = ps
            .sel_lines()
            .and_then(|l| l.by_sel.get(sk).filter(|&&e| e & 0xff != 0).and_then(|&e| l.lines.get((e >> 8) as usize..((e >> 8) + (e & 0xff)) as usize)));
        return line.map_or(Read::Other, Read::Line);
    };
    let f = p.fast;
    let rk = f.rules.key::<V>(lo, hi);
    if f.legal.get(rk).is_none_or(|&m| m >> p.form & 1 == 0) {
        // the line `fused` would write (`Miss::Refused`), where the tables know it
        let line = f.refused.get((p.form as usize) << f.rules.bits | rk).and_then(|&i| f.refused_lines.get(i as usize)).filter(|&&e| e & 0xff != 0);
        return match line.and_then(|&e| f.text.get(span(e).0..span(e).0 + span(e).1)) {
            Some(t) => Read::Line(t),
            None => Read::Other,
        };
    }
    // a word whose modifiers hide fields (HADD2's .F32) is read without them, as the decoder
    // reads it (the head, which says so, and the rules' fields are not among them): without a
    // branch, as such words come mixed with the others
    let h = p.hidden.get(f.head.key::<V>(lo, hi)).copied().unwrap_or(0);
    let Some(&(mask, first)) = p.masks.get(h as usize) else { return Read::Other };
    let word = word & !mask;
    #[cfg(target_arch = "x86_64")]
    if V {
        let mut key = [0u32; KEYS];
        // SAFETY: the caller's CPU features
        unsafe { std::arch::x86_64::_mm512_storeu_si512(key.as_mut_ptr().cast(), keys_avx512(p, word)) };
        // the immediates' texts (a megabyte of them) are read when the word is written: for
        // every word (other forms' immediate lanes are 0), without a branch. SAFETY: the
        // head's key is a cell's (see `write`)
        let bf16 = unsafe { *ps.cells.as_ptr().add(key[0] as usize) >> 7 } as usize;
        for v in [key[K_IMM1], key[K_IMM2]] {
            // SAFETY: a prefetch reads nothing the program sees
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(super::imm_entry(bf16, v as u16).as_ptr().cast()) };
        }
        return Read::Word(Plan { p, key, first });
    }
    Read::Word(Plan { p, key: keys_plain(p, word), first })
}

/// Append a planned word's text, and a newline where `newline`.
///
/// # Safety
/// As [`plan`].
#[inline(always)]
unsafe fn write<const V: bool>(ps: &Progs, r: &Plan, out: &mut String, newline: bool) {
    let p = r.p;
    let cells = ps.cells.as_ptr();
    let mut w = Writer::new(out);
    // SAFETY: a part's key lies below its cell table's end (`keys_in_bounds`: the key is below
    // 2^bits, and `cells` made 2^bits cells), and a copy from a cell reads at most CELL_PAD
    // bytes past its start (checked when compiling), which the padding after the last cell
    // keeps within `cells`; a text is no longer than its copy (`cells` checked). The puts are
    // at most `Writer::ROOM` bytes (checked when compiling, above).
    unsafe {
        let head = cells.add(r.key[0] as usize);
        let (n, bf16) = ((*head & 0x7f) as usize, (*head >> 7) as usize);
        w.put_exact::<COPY_HEAD>(&*(head.add(1) as *const [u8; COPY_HEAD]), n);
        // each lane's copy as short as its texts allow (fewer copies cross a cache line)
        macro_rules! put {
            ($($j:literal),*) => {$(
                let c = cells.add(r.key[$j] as usize);
                w.put_exact::<{ LANE_COPY[$j] }>(&*(c.add(1) as *const [u8; LANE_COPY[$j]]), *c as usize);
            )*};
        }
        put!(1, 2, 3, 4, 5, 6, 7);
        match (p.imm, p.fast.imms.as_ref()) {
            (true, Some(imm)) => {
                let (v1, v2) = (r.key[K_IMM1] as u16, r.key[K_IMM2] as u16);
                if r.first {
                    imm.push(&mut w, imm.entry(bf16, v1), v1, true);
                }
                imm.push(&mut w, imm.entry(bf16, v2), v2, false);
            }
            _ => offset::<V>(&mut w, &p.off, r.key[K_OFF], p.off_keep),
        }
        put!(8, 9, 10, 11);
        // a special immediate ends in a space, which nvdisasm prints before a comma only
        if p.imm {
            w.trim_spaces();
        }
        w.put(b"\n", newline as usize);
    }
}

/// Append the constant's offset `v` as [`Off::spell`] spells it, keeping `keep` of it (all
/// or nothing): its sign and `0x`, then its digits ([`Off::digits`]), each a fixed-size copy.
///
/// # Safety
/// As [`Writer::put`]: this puts 16 bytes. With `V`, the CPU has BMI2.
#[inline(always)]
unsafe fn offset<const V: bool>(w: &mut Writer, off: &Off, v: u32, keep: usize) {
    // SAFETY: the caller's CPU (BMI2 with `V`)
    let (neg, d, digits) = unsafe { off.digits::<V>(v) };
    let head = if neg { u32::from_le_bytes(*b"-0x\0") } else { u32::from_le_bytes(*b"0x\0\0") };
    // SAFETY: the caller's room
    unsafe {
        w.put_exact::<4>(&head.to_le_bytes(), (2 + neg as usize) & keep);
        w.put_exact::<8>(&d.to_le_bytes(), digits & keep);
    }
}

/// Append `word`'s text (and a newline where `newline`) if a program takes it; false (having
/// written nothing) where the word is `fused`'s.
///
/// # Safety
/// With `V`, the CPU has AVX-512 F, BW, VBMI and BMI2 (as [`progs`] checked).
#[inline(always)]
unsafe fn render<const V: bool>(ps: &Progs, word: u128, out: &mut String, newline: bool) -> bool {
    // SAFETY: the caller's
    match unsafe { plan::<V>(ps, word) } {
        Some(r) => {
            // SAFETY: the caller's
            unsafe { write::<V>(ps, &r, out, newline) };
            true
        }
        None => false,
    }
}

/// [`render`] with AVX-512, for one word.
///
/// # Safety
/// `ps` came from [`progs`] (which checked the CPU).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2,avx2")]
pub(super) unsafe fn render_one(ps: &Progs, word: u128, out: &mut String) -> bool {
    // SAFETY: the features are enabled here
    unsafe { render::<true>(ps, word, out, false) }
}

/// The `decode` command's lines of `words`, each with its newline: the programs' where they
/// take the word, else `fused`'s.
///
/// # Safety
/// `ps` came from [`progs`] (which checked the CPU).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2,avx2")]
pub(super) unsafe fn lines(ps: &Progs, words: &[u128], out: &mut String, cache: &mut super::LineCache) {
    // a block's words are read first, then written: the reads of many words overlap
    const BLOCK: usize = 16;
    let mut plans: [Read; BLOCK] = [Read::Other; BLOCK];
    for block in words.chunks(BLOCK) {
        for (r, &w) in plans.iter_mut().zip(block) {
            // SAFETY: the features are enabled here
            *r = unsafe { read_word::<true>(ps, w) };
        }
        for (r, &w) in plans.iter().zip(block) {
            match r {
                // SAFETY: the features are enabled here
                Read::Word(r) => unsafe { write::<true>(ps, r, out, true) },
                Read::Line(line) => {
                    out.push_str(line);
                    out.push('\n');
                }
                Read::Other => {
                    super::line_with(w, out, cache, |w, o| super::fused::<true>(super::tables_of(w)?, w, o));
                    out.push('\n');
                }
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The programs, made whatever the CPU (the plain steps run anywhere).
    pub fn all() -> &'static Progs {
        static P: std::sync::OnceLock<Progs> = std::sync::OnceLock::new();
        P.get_or_init(|| make().expect("the wide programs"))
    }

    /// What the programs write for `word` (None: left to `fused`), by the plain steps and,
    /// where the CPU has them, by the vector ones, which must agree.
    pub fn text(word: u128) -> Option<String> {
        let mut plain = String::from("x");
        // SAFETY: `V = false` needs no CPU feature
        let took = unsafe { render::<false>(all(), word, &mut plain, false) };
        #[cfg(target_arch = "x86_64")]
        if let Some(ps) = progs() {
            let mut v = String::from("x");
            // SAFETY: `progs` checked the CPU
            let vt = unsafe { render_one(ps, word, &mut v) };
            assert_eq!((vt, &v), (took, &plain), "{word:#034x}: the AVX-512 steps");
        }
        took.then(|| plain[1..].to_string())
    }

    /// Whether the vector steps are checked here; said once, so a run without them shows it.
    pub fn vector_checked() -> bool {
        static SAID: std::sync::Once = std::sync::Once::new();
        let here = progs().is_some();
        SAID.call_once(|| {
            if !here {
                crate::testlevel::say("this CPU has no AVX-512 VBMI: the wide programs are checked by their plain steps only");
            }
        });
        here
    }

    /// Every key lane is its gather's key plus its base, on words of random bits.
    #[test]
    fn program_keys_are_the_gathers_keys() {
        let seed = crate::rng::resolve_seed(None);
        println!("seed: {seed}");
        let mut r = crate::rng::Rng::new(seed);
        let ps = all();
        assert!(ps.progs.len() >= crate::isa::fused::tabled().count(), "programs for {} forms", ps.progs.len());
        // the text a lane's key points at: its cell's (and the head's BF16 bit)
        let cell = |k: u32| {
            let c = &ps.cells[k as usize..];
            let n = (c[0] & 0x7f) as usize;
            (std::str::from_utf8(&c[1..=n]).expect("ASCII").to_string(), c[0] >> 7)
        };
        for _ in 0..2_000 {
            let w = (r.next_u64() as u128) << 64 | r.next_u64() as u128;
            for p in &ps.progs {
                let f = p.fast;
                let k = keys_plain(p, w);
                let (lo, hi) = (w as u64, (w >> 64) as u64);
                // the text of the entry the tables' own key picks
                let entry = |g: &Gather, base: u32| {
                    let e = f.idx[base as usize + g.key::<false>(lo, hi)];
                    let (at, n) = span(e);
                    (f.text[at..at + n].to_string(), (e >> 31) as u8)
                };
                assert_eq!(cell(k[0]), entry(&f.head, f.head_base), "{w:#034x}: the head");
                for (j, part) in [(1, &f.dst), (2, &f.a_pre), (3, &f.a_suf)] {
                    assert_eq!(cell(k[j]), entry(&part.g, part.base), "{w:#034x}: part {j}");
                }
                // every part lane's cell holds a text of its table
                for (j, &(base, bits)) in p.tables.iter().enumerate() {
                    let i = (k[j] - p.base[j]) >> p.scale[j];
                    assert!(i < 1 << bits, "{w:#034x}: lane {j} past its table");
                    let e = f.idx[(base + i) as usize];
                    let (at, n) = span(e);
                    assert_eq!(cell(k[j]).0, f.text[at..at + n], "{w:#034x}: lane {j}");
                }
                if p.imm {
                    let i = f.imms.expect("immediates");
                    assert_eq!([k[K_IMM1], k[K_IMM2]], [i.hi.key::<false>(lo, hi) as u32, i.lo.key::<false>(lo, hi) as u32], "{w:#034x}");
                } else if p.off_keep != 0 {
                    assert_eq!(k[K_OFF], p.off.g.key::<false>(lo, hi) as u32, "{w:#034x}: the offset");
                }
                #[cfg(target_arch = "x86_64")]
                if progs().is_some() {
                    let mut v = [0u32; KEYS];
                    // SAFETY: `progs` checked the CPU
                    unsafe { std::arch::x86_64::_mm512_storeu_si512(v.as_mut_ptr().cast(), keys_avx512(p, w)) };
                    assert_eq!(v, k, "{w:#034x}: the AVX-512 keys");
                }
            }
        }
        vector_checked();
    }

    /// Every form of every instruction has a program, and a legal word of each takes it.
    #[test]
    fn every_form_has_a_program() {
        let ps = all();
        for op in crate::isa::fused::tabled() {
            let f = fast(op).expect("tables");
            for k in 0..f.before.len() {
                assert!(ps.progs.iter().any(|p| std::ptr::eq(p.fast, f) && p.form == k as u32), "{op}: form {k} has no program");
            }
        }
    }
}
