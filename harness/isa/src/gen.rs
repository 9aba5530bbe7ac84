//! Seeded generation of encodings of the family: random across instructions, forms and field
//! values, full-factorial over a form's modifiers, and proptest strategies that shrink.
//!
//! Item `i` of seed `s` is drawn from its own stream ([`Rng::fork`]), so a run, a shard of it
//! and a re-run of one item all see the same encodings on every machine.

use crate::isa::*;
use crate::rng::Rng;
use crate::spec::Field;
use crate::target::Target;
use serde::Serialize;
use std::collections::BTreeMap;

/// What to generate.
#[derive(Clone, Debug)]
pub struct GenOptions {
    pub seed: u64,
    /// The instructions to draw from (one: every item is that instruction, and its stream is
    /// the same as when it was the only one the project knew).
    pub ops: Vec<Op>,
    /// Restrict to one form (instructions without it are not drawn).
    pub form: Option<Form>,
    /// Share of words that nvdisasm must reject (negative tests).
    pub illegal_share: f64,
    /// Share of legal words with at least one field at a value nvdisasm calls INVALIDn.
    pub invalid_share: f64,
    /// Share of legal words with random bits set where the form has no field.
    pub ignored_share: f64,
}

impl GenOptions {
    /// Legal encodings of every instruction, no INVALIDn values, no ignored bits.
    pub fn legal(seed: u64) -> GenOptions {
        GenOptions { seed, ops: Op::ALL.to_vec(), form: None, illegal_share: 0.0, invalid_share: 0.0, ignored_share: 0.0 }
    }
    /// The same, of the instructions `ops` only.
    pub fn legal_of(seed: u64, ops: &[Op]) -> GenOptions {
        GenOptions { ops: ops.to_vec(), ..GenOptions::legal(seed) }
    }
}

/// The operand-2 value that differs between forms, drawn with weight on the edges.
fn draw_reg(r: &mut Rng) -> u8 {
    match r.below(8) {
        0 => RZ,
        1 => 254,
        2 => r.below(8) as u8,
        _ => r.below(256) as u8,
    }
}

fn draw_ureg(r: &mut Rng) -> u8 {
    match r.below(8) {
        0 => URZ,
        1 => 62,
        _ => r.below(64) as u8,
    }
}

/// Interesting 16-bit patterns for immediates (both formats): zeros, ones, extremes, Inf, NaN.
const SPECIAL_IMM: [u16; 16] = [0x0000, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x3f80, 0x7f80, 0x7fc0, 0x0080];

fn draw_imm(r: &mut Rng) -> u16 {
    if r.below(4) == 0 {
        *r.pick(&SPECIAL_IMM)
    } else {
        r.next_u32() as u16
    }
}

fn draw_swizzle(r: &mut Rng, invalid: bool) -> Swizzle {
    if invalid {
        *r.pick(&Swizzle::ALL)
    } else {
        *r.pick(&[Swizzle::H1H0, Swizzle::H0H0, Swizzle::H1H1])
    }
}

fn draw_mods(r: &mut Rng, invalid: bool) -> SrcMods {
    SrcMods { neg: r.below(2) == 1, abs: r.below(2) == 1, swizzle: draw_swizzle(r, invalid) }
}

fn draw_operand2(r: &mut Rng, form: Form) -> Operand2 {
    match form.kind() {
        Form::Rrr => Operand2::Reg(draw_reg(r)),
        Form::Imm => Operand2::Imm { first: draw_imm(r), second: draw_imm(r) },
        Form::Const => {
            let off = match r.below(6) {
                0 => -0x8000,
                1 => 0x7ffc,
                2 => -4,
                _ => (r.below(0x4000) as i32 - 0x2000) * 4,
            };
            Operand2::Const { bank: r.below(32) as u8, offset: off }
        }
        Form::ConstUr => {
            let off = match r.below(6) {
                0 => 0,
                1 => 0xfffc,
                _ => r.below(0x4000) * 4,
            };
            Operand2::ConstUr { ureg: draw_ureg(r), offset: off }
        }
        _ => Operand2::Ur(draw_ureg(r)),
    }
}

/// A half select among the values `names` gives (INVALIDn ones only with `invalid`); the
/// default where the instruction has none.
fn draw_named_swizzle(r: &mut Rng, invalid: bool, names: &[String], has: bool) -> Swizzle {
    if !has || names.is_empty() {
        return Swizzle::H1H0;
    }
    let ok: Vec<u32> = (0..names.len() as u32).filter(|&v| invalid || !names[v as usize].starts_with("INVALID")).collect();
    Swizzle::from_bits(*r.pick(&ok))
}

fn draw_named_mods(r: &mut Rng, invalid: bool, names: &[String], has: bool) -> SrcMods {
    SrcMods { neg: r.below(2) == 1, abs: r.below(2) == 1, swizzle: draw_named_swizzle(r, invalid, names, has) }
}

/// Scheduling bits, drawn freely; [`random_inst`] redraws the ones the spec's rules forbid.
fn draw_control(r: &mut Rng) -> Control {
    Control {
        stall: r.below(16) as u8,
        yield_: r.below(2) == 1,
        wr_bar: r.below(8) as u8,
        rd_bar: r.below(8) as u8,
        wait: r.below(64) as u8,
        reuse: if r.below(2) == 0 { 0 } else { r.below(8) as u8 },
    }
}

/// The lane formats and flush modes `op` has in `form` (with `invalid`, the INVALIDn values
/// too): those some legal word holds, so that drawing them and redrawing control bits ends.
/// Computed once per (op, form, invalid), when first drawn: reachability enumerates the
/// rules' fields (a millisecond or more per instruction; computed for every form and both
/// kinds at once, it was most of a short `generate`'s or `build-kernel`'s start).
fn modes(op: Op, form: Form, invalid: bool) -> &'static (Vec<Format>, Vec<Flush>) {
    const PER_OP: usize = Form::ALL.len() * 2;
    static T: [std::sync::OnceLock<(Vec<Format>, Vec<Flush>)>; Op::ALL.len() * PER_OP] = [const { std::sync::OnceLock::new() }; Op::ALL.len() * PER_OP];
    T[op.index() * PER_OP + form as usize * 2 + invalid as usize].get_or_init(|| compute_modes(op, form, invalid))
}

fn compute_modes(op: Op, form: Form, invalid: bool) -> (Vec<Format>, Vec<Flush>) {
    let (l, s) = (op.layout(), op.spec());
    let k = op.form_index(form).unwrap_or(0);
    let (fi, li) = (s.index("format"), s.index("flush"));
    // (an INVALIDn value is left out before its reachability, the costly part, is asked)
    let formats = Format::EVERY
        .into_iter()
        .filter(|&f| {
            (invalid || matches!(f, Format::F16 | Format::Bf16 | Format::F32)) && l.format_code[f as usize].is_some_and(|v| s.value_reachable(k, fi, v))
        })
        .collect();
    let flushes = Flush::EVERY
        .into_iter()
        .filter(|&f| (invalid || f != Flush::Invalid3) && l.flush_code[f as usize].is_some_and(|v| s.value_reachable(k, li, v)))
        .collect();
    (formats, flushes)
}

/// One random legal instruction `op` of `form` (a form `op` has).
pub fn random_inst(r: &mut Rng, op: Op, form: Form, invalid: bool, ignored: bool) -> Inst {
    random_inst_word(r, op, form, invalid, ignored).0
}

/// [`random_inst`], and its word where the rejection sampling's last encoding is it (no
/// ignored bits were added after it): the generator need not encode it again.
fn random_inst_word(r: &mut Rng, op: Op, form: Form, invalid: bool, ignored: bool) -> (Inst, Option<u128>) {
    let i = draw_inst(r, op, form, invalid);
    finish_inst(r, i, form, ignored)
}

/// The fields of [`random_inst`]'s instruction, drawn: all final but the control bits (their
/// first draw, which the spec's rules may refuse) and the ignored bits (none yet).
fn draw_inst(r: &mut Rng, op: Op, form: Form, invalid: bool) -> Inst {
    if op.spec().text.is_some() {
        return draw_shaped(r, op, form, invalid);
    }
    if op.spec().sources == 3 {
        return draw_inst3(r, op, form, invalid);
    }
    let (formats, flushes) = modes(op, form, invalid);
    Inst {
        pred: Pred { index: r.below(8) as u8, negated: r.below(4) == 0 },
        dst: draw_reg(r),
        a: draw_reg(r),
        a_mods: draw_mods(r, invalid),
        b: draw_operand2(r, form),
        b_mods: if form.has_b_mods() { draw_mods(r, invalid) } else { SrcMods::default() },
        format: *r.pick(formats),
        flush: *r.pick(flushes),
        sat: r.below(2) == 1,
        ctrl: draw_control(r),
        ..Inst::bare(op)
    }
    .without_hidden()
}

/// The rest of [`random_inst_word`] after [`draw_inst`]: control bits the spec's rules accept,
/// then the ignored bits.
fn finish_inst(r: &mut Rng, mut i: Inst, form: Form, ignored: bool) -> (Inst, Option<u128>) {
    // Rejection sampling against the spec's cross-field rules: legal words, every legal combination reachable.
    let w = legal_ctrl(r, &mut i);
    with_ignored(r, i, i.op, form, ignored, w)
}

/// Redraw `i`'s control bits until the spec's cross-field rules accept it; its encoding
/// (an error other than a rule's ends the loop too, for the caller to meet).
fn legal_ctrl(r: &mut Rng, i: &mut Inst) -> Result<u128, EncodeError> {
    loop {
        match encode(i) {
            Err(EncodeError::Illegal(_)) => i.ctrl = draw_control(r),
            w => return w,
        }
    }
}

/// [`draw_inst`] of a three-source instruction (its own stream: two-source streams stay as they were).
fn draw_inst3(r: &mut Rng, op: Op, form: Form, invalid: bool) -> Inst {
    let (formats, flushes) = modes(op, form, invalid);
    let l = op.layout();
    let pred = Pred { index: r.below(8) as u8, negated: r.below(4) == 0 };
    let (dst, a) = (draw_reg(r), draw_reg(r));
    let a_mods = draw_named_mods(r, invalid, &l.a_swz_names, l.has_swizzle);
    let special = draw_operand2(r, form.kind());
    let reg = Operand2::Reg(draw_reg(r));
    let b_mods = if form.has_b_mods() { draw_named_mods(r, invalid, &l.b_swz_names, l.has_swizzle) } else { SrcMods::default() };
    let c_mods = if form.has_c_mods() { draw_named_mods(r, invalid, &l.c_swz_names, l.has_swizzle) } else { SrcMods::default() };
    let (b, c) = if form.special_source() == 3 { (reg, special) } else { (special, reg) };
    let format = *r.pick(formats);
    let flush = *r.pick(flushes);
    let sat = r.below(2) == 1;
    // .RELU and .SAT are not accepted together (the spec's rules; redrawing control bits cannot mend it)
    let relu = (l.relu.is_some() && !sat && r.below(2) == 1).then(|| Pred { index: r.below(8) as u8, negated: r.below(2) == 1 });
    Inst { pred, dst, a, a_mods, b, b_mods, format, flush, sat, c: Some(c), c_mods, relu, ctrl: draw_control(r), ..Inst::bare(op) }.without_hidden()
}

/// [`draw_inst`] of an instruction whose spec gives its text order (the comparisons, min/max;
/// their own stream): the shape's predicate results (HMNMX2's with `.IS_A` half the time),
/// predicate source, comparison, boolean operation (INVALID3 only with `invalid`) and flags.
fn draw_shaped(r: &mut Rng, op: Op, form: Form, invalid: bool) -> Inst {
    let (formats, flushes) = modes(op, form, invalid);
    let l = op.layout();
    let pred = Pred { index: r.below(8) as u8, negated: r.below(4) == 0 };
    let mut i = Inst::of(op, draw_reg(r), draw_reg(r), draw_operand2(r, form));
    i.pred = pred;
    i.a_mods = draw_named_mods(r, invalid, &l.a_swz_names, l.has_swizzle);
    i.b_mods = if form.has_b_mods() { draw_named_mods(r, invalid, &l.b_swz_names, l.has_swizzle) } else { SrcMods::default() };
    i.format = *r.pick(formats);
    i.flush = *r.pick(flushes);
    shaped_variant(&mut i, r.next_u64(), invalid);
    if i.psrc.is_some() {
        i.psrc = Some(Pred { index: r.below(8) as u8, negated: l.psrc_neg.is_some() && r.below(2) == 1 });
    }
    if let Some(p) = i.pdst.as_mut() {
        *p = [r.below(8) as u8, r.below(8) as u8];
    }
    i.ctrl = draw_control(r);
    i.without_hidden()
}

/// Set `i`'s comparison, boolean operation, flags and (HMNMX2) `.IS_A` from the bits of `v`:
/// the comparison from its low 4 bits, the boolean operation from the next 2 (AND where
/// INVALID3 falls without `invalid`), then one bit a flag. Predicate results are P0, P1.
fn shaped_variant(i: &mut Inst, v: u64, invalid: bool) {
    let l = i.op.layout();
    if l.cmp.is_some() {
        i.cmp = Cmp::from_code((v & 15) as u8);
    }
    if l.bool_op.is_some() {
        let b = BoolOp::ALL[(v >> 4 & 3) as usize];
        i.bool_op = Some(if b == BoolOp::Invalid3 && !invalid { BoolOp::And } else { b });
    }
    let bit = |k: u32| v >> k & 1 == 1;
    i.bf = l.bf.is_some() && bit(6);
    i.h_and = l.h_and.is_some() && bit(7);
    i.nan = l.nan.is_some() && bit(8);
    i.xorsign = l.xorsign.is_some() && bit(9);
    i.pdst = match (&l.p_dst, &l.is_a) {
        (Some(_), None) => Some([0, 1]),
        (Some(_), Some(_)) if bit(10) => Some([0, 1]),
        _ => None,
    };
}

/// With `ignored`, random bits in the bits `i`'s form ignores; `w` is `i`'s encoding before
/// them, kept where none were drawn.
fn with_ignored(r: &mut Rng, mut i: Inst, op: Op, form: Form, ignored: bool, w: Result<u128, EncodeError>) -> (Inst, Option<u128>) {
    if ignored {
        let mask = op.form_spec(form).map_or(0, |fs| fs.ignored_mask) | i.hidden_mask();
        let bits = ((r.next_u64() as u128) << 64 | r.next_u64() as u128) & mask;
        i.ignored = bits;
    }
    let w = w.ok().filter(|_| i.ignored == 0);
    (i, w)
}

/// Ways to make a legal word illegal, read from the spec: a form selector no form has,
/// a cross-field rule broken.
fn break_word(r: &mut Rng, word: u128, op: Op, form: Form) -> u128 {
    let s = op.spec();
    let Some(k) = op.form_index(form) else { return word };
    let fs = &s.forms[k];
    loop {
        match r.below(2) {
            0 => {
                // a fixed field (not the opcode, which would make another instruction) at a value no form takes
                let sel: Vec<&(usize, u32)> = fs.fixed.iter().filter(|(i, _)| s.fields[*i].name != "opcode").collect();
                if sel.is_empty() {
                    continue;
                }
                let &(fi, _) = *r.pick(&sel);
                let f = &s.fields[fi];
                let candidates: Vec<u32> =
                    (0..=f.max()).map(|v| f.set(word, v).unwrap_or(word)).filter(|&w| crate::isa::decode::form_of(w).is_err()).map(|w| f.get(w)).collect();
                if let Some(&v) = candidates.get(r.below(candidates.len().max(1) as u32) as usize) {
                    return f.set(word, v).unwrap_or(word);
                }
            }
            _ => {
                let rules: Vec<&crate::spec::Constraint> = s.constraints.iter().filter(|c| c.forms.is_empty() || c.forms.contains(&k)).collect();
                if rules.is_empty() {
                    continue;
                }
                let c = *r.pick(&rules);
                let mut w = word;
                for (f, ranges) in &c.when {
                    let &(lo, hi) = r.pick(ranges);
                    w = s.fields[*f].set(w, lo + r.below(hi - lo + 1)).unwrap_or(w);
                }
                let tf = &s.fields[c.field];
                let bad: Vec<u32> = (0..=tf.max()).filter(|&v| !c.allows(v)).collect();
                if bad.is_empty() {
                    continue;
                }
                return tf.set(w, *r.pick(&bad)).unwrap_or(w);
            }
        }
    }
}

/// Item `index` of a run.
pub fn generate_one(opts: &GenOptions, index: u64) -> u128 {
    match generate_one_unless(opts, index, |_| Ok::<(), std::convert::Infallible>(())) {
        Ok(w) => w,
        Err(never) => match never {},
    }
}

/// [`generate_one`], or `Err` where `skip` refuses the item's instruction, which it is asked
/// about before the item's control bits and ignored bits are drawn and the word is encoded:
/// a caller that would refuse the word for its fields (registers, operands) saves that work.
/// The instruction's other fields are final then, and the word, when made, decodes to them
/// (`decode(encode(i)) == i`, the round-trip tests). An item drawn to be illegal (the
/// `illegal_share`) is not asked: its word is broken after encoding.
pub fn generate_one_unless<E>(opts: &GenOptions, index: u64, skip: impl FnOnce(&Inst) -> Result<(), E>) -> Result<u128, E> {
    let mut r = Rng::fork(opts.seed, index);
    // one instruction: no draw, so its stream is what it was before the family grew
    // (the draws of `Rng::pick` on the candidates, without collecting them: no allocation)
    let ops = || opts.ops.iter().copied().filter(|o| opts.form.is_none_or(|f| o.has_form(f)));
    let op = match ops().count() {
        0 => Op::ALL[0],
        1 => ops().next().unwrap_or(Op::ALL[0]),
        n => ops().nth(r.below(n as u32) as usize).unwrap_or(Op::ALL[0]),
    };
    let form = opts.form.unwrap_or_else(|| {
        let n = op.forms().count();
        op.forms().nth(r.below(n as u32) as usize).unwrap_or(Form::Rrr)
    });
    let invalid = r.chance(opts.invalid_share);
    let ignored = r.chance(opts.ignored_share);
    let illegal = r.chance(opts.illegal_share);
    let inst = draw_inst(&mut r, op, form, invalid);
    if !illegal {
        skip(&inst)?;
    }
    let (inst, word) = finish_inst(&mut r, inst, form, ignored);
    let word = match word.map_or_else(|| encode(&inst), Ok) {
        Ok(w) => w,
        // random_inst draws only encodable values; this is the program's own invariant
        Err(e) => panic!("generator drew an unencodable instruction {inst:?}: {e}"),
    };
    Ok(if illegal { break_word(&mut r, word, op, form) } else { word })
}

/// `count` words starting at item `start`.
pub fn generate(opts: &GenOptions, start: u64, count: u64) -> Vec<u128> {
    (start..start + count).map(|i| generate_one(opts, i)).collect()
}

/// Every combination of a form's modifiers (source neg/abs/half-select, format, flush, sat),
/// with registers and operand 2 drawn from `seed`. HMUL2's RRR has 8192, its immediate form
/// 512; combinations whose modifiers hide a field have it zero. Three-source instructions:
/// see [`factorial3`].
pub fn factorial(op: Op, form: Form, seed: u64) -> Vec<Inst> {
    if op.spec().sources == 3 {
        return factorial3(op, form, seed);
    }
    let shaped = op.spec().text.is_some();
    let mut variant = 0u64;
    let mut out = Vec::new();
    let mut r = Rng::new(seed);
    let bools = [false, true];
    let (formats, flushes) = modes(op, form, true);
    let b_mod_list: Vec<SrcMods> = if form.has_b_mods() {
        let mut v = Vec::new();
        for neg in bools {
            for abs in bools {
                for swizzle in Swizzle::ALL {
                    v.push(SrcMods { neg, abs, swizzle });
                }
            }
        }
        v
    } else {
        vec![SrcMods::default()]
    };
    for a_neg in bools {
        for a_abs in bools {
            for a_swz in Swizzle::ALL {
                for &b_mods in &b_mod_list {
                    for &format in formats {
                        for &flush in flushes {
                            // the comparisons and min/max have no .SAT: their comparison,
                            // boolean operation and flags take every value in turn instead
                            for sat in if shaped { &bools[..1] } else { &bools[..] } {
                                let mut i = random_inst(&mut r, op, form, false, false);
                                i.a_mods = SrcMods { neg: a_neg, abs: a_abs, swizzle: a_swz };
                                i.b_mods = b_mods;
                                i.format = format;
                                i.flush = flush;
                                i.sat = *sat;
                                if shaped {
                                    shaped_variant(&mut i, variant, true);
                                    variant += 1;
                                }
                                // the rules may tie control bits to the modifiers (HADD2's reuse to .F32)
                                let mut i = i.without_hidden();
                                while let Err(EncodeError::Illegal(_)) = encode(&i) {
                                    i.ctrl = draw_control(&mut r);
                                }
                                out.push(i);
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// Every combination of a three-source form's modifiers: the three sources' neg/abs/half
/// select (every value the spec names), format, flush and one of none / `.SAT` / `.RELU`
/// (with a drawn predicate operand); registers and the special source drawn from `seed`.
/// HFMA2's R,R,R,R has 16 × 32 × 16 × 3 × 4 × 3 = 294912.
pub fn factorial3(op: Op, form: Form, seed: u64) -> Vec<Inst> {
    let mut out = Vec::new();
    let mut r = Rng::new(seed);
    let l = op.layout();
    let (formats, flushes) = modes(op, form, true);
    let mods_list = |names: &[String], on: bool| -> Vec<SrcMods> {
        if !on {
            return vec![SrcMods::default()];
        }
        let swz: Vec<Swizzle> =
            if l.has_swizzle && !names.is_empty() { (0..names.len() as u32).map(Swizzle::from_bits).collect() } else { vec![Swizzle::H1H0] };
        let mut v = Vec::new();
        for neg in [false, true] {
            for abs in [false, true] {
                for &swizzle in &swz {
                    v.push(SrcMods { neg, abs, swizzle });
                }
            }
        }
        v
    };
    let a_list = mods_list(&l.a_swz_names, true);
    let b_list = mods_list(&l.b_swz_names, form.has_b_mods());
    let c_list = mods_list(&l.c_swz_names, form.has_c_mods());
    let tails: Vec<u8> = if l.relu.is_some() { vec![0, 1, 2] } else { vec![0, 1] };
    for &a_mods in &a_list {
        for &b_mods in &b_list {
            for &c_mods in &c_list {
                for &format in formats {
                    for &flush in flushes {
                        for &tail in &tails {
                            let mut i = random_inst(&mut r, op, form, false, false);
                            i.a_mods = a_mods;
                            i.b_mods = b_mods;
                            i.c_mods = c_mods;
                            i.format = format;
                            i.flush = flush;
                            i.sat = tail == 1;
                            i.relu = (tail == 2).then(|| Pred { index: r.below(8) as u8, negated: r.below(2) == 1 });
                            let mut i = i.without_hidden();
                            while let Err(EncodeError::Illegal(_)) = encode(&i) {
                                i.ctrl = draw_control(&mut r);
                            }
                            out.push(i);
                        }
                    }
                }
            }
        }
    }
    out
}

/// A plain instruction of `op` in `form`: `op dst, a, special` with `special` (of the form's
/// kind) in the place the form says and any other source the register `other`.
pub fn plain_inst(op: Op, form: Form, dst: u8, a: u8, special: Operand2, other: u8) -> Inst {
    let mut i = Inst::of(op, dst, a, special);
    if op.spec().sources == 3 {
        if form.special_source() == 3 {
            i.b = Operand2::Reg(other);
            i.c = Some(special);
        } else {
            i.c = Some(Operand2::Reg(other));
        }
    }
    i
}

/// Words that set every value of every field of every form one at a time on a plain
/// instruction (values of wide fields: each single bit, zero and all ones).
pub fn one_field_at_a_time(op: Op) -> Vec<u128> {
    let s = op.spec();
    let mut out = Vec::new();
    for form in op.forms() {
        let Some(fs) = op.form_spec(form) else { continue };
        let special = match form.kind() {
            Form::Rrr => Operand2::Reg(2),
            Form::Imm => Operand2::Imm { first: 0x3c00, second: 0x4000 },
            Form::Const => Operand2::Const { bank: 0, offset: 0 },
            Form::ConstUr => Operand2::ConstUr { ureg: 0, offset: 0 },
            _ => Operand2::Ur(2),
        };
        let base = encode(&plain_inst(op, form, 0, 1, special, 3)).unwrap_or(0);
        for &fi in fs.fields.iter() {
            let f = &s.fields[fi];
            for v in field_values(f) {
                if let Ok(w) = f.set(base, v) {
                    out.push(w);
                }
            }
        }
        // every ignored bit alone
        let ign = fs.ignored_mask;
        for b in 0..128 {
            if ign >> b & 1 == 1 {
                out.push(base | 1u128 << b);
            }
        }
    }
    out
}

/// [`one_field_at_a_time`] of `op` on `target`: every value of every field of every form the
/// target has, one at a time on a plain instruction, and every ignored bit alone (empty where
/// the target lacks the instruction).
pub fn one_field_at_a_time_for(target: &'static Target, op: Op) -> Vec<u128> {
    let Some(l) = op.layout_for(target) else { return Vec::new() };
    let s = l.spec;
    let mut out = Vec::new();
    for form in op.forms_for(target) {
        let Some(fs) = l.form_index[form as usize].map(|k| &s.forms[k]) else { continue };
        let base = encode_for(target, &plain_inst(op, form, 0, 1, plain_special(form), 3)).unwrap_or(0);
        for &fi in fs.fields.iter() {
            let f = &s.fields[fi];
            for v in field_values(f) {
                if let Ok(w) = f.set(base, v) {
                    out.push(w);
                }
            }
        }
        for b in 0..128 {
            if fs.ignored_mask >> b & 1 == 1 {
                out.push(base | 1u128 << b);
            }
        }
    }
    out
}

/// The special source of a plain instruction of `form`'s kind.
fn plain_special(form: Form) -> Operand2 {
    match form.kind() {
        Form::Rrr => Operand2::Reg(2),
        Form::Imm => Operand2::Imm { first: 0x3c00, second: 0x4000 },
        Form::Const => Operand2::Const { bank: 0, offset: 0 },
        Form::ConstUr => Operand2::ConstUr { ureg: 0, offset: 0 },
        _ => Operand2::Ur(2),
    }
}

/// A random candidate word of `op` on `target`: the fixed fields of one of the target's forms
/// (drawn at random) and every other bit drawn at random, legal or not (nvdisasm judges
/// both); None where the target lacks the instruction.
pub fn candidate_word_for(target: &'static Target, op: Op, r: &mut Rng) -> Option<u128> {
    let l = op.layout_for(target)?;
    let fs = r.pick(&l.spec.forms);
    let mut w = (r.next_u64() as u128) << 64 | r.next_u64() as u128;
    for &(f, v) in &fs.fixed {
        w = l.spec.fields[f].set(w, v).unwrap_or(w);
    }
    Some(w)
}

/// A random legal word of `op` on `target`, the generator of any target: candidates
/// ([`candidate_word_for`]) drawn until one decodes on the target (its cross-field rules
/// hold), at most 10,000; None where the target lacks the instruction.
pub fn random_word_for(target: &'static Target, op: Op, r: &mut Rng) -> Option<u128> {
    (0..10_000).filter_map(|_| candidate_word_for(target, op, r)).find(|&w| decode_for(target, w).is_ok())
}

/// Every value for narrow fields; zero, all ones and each single bit for wide ones.
pub fn field_values(f: &Field) -> Vec<u32> {
    if f.width <= 8 {
        (0..=f.max()).collect()
    } else {
        let mut v = vec![0, f.max()];
        v.extend((0..f.width).map(|b| 1u32 << b));
        v
    }
}

/// Field-value coverage of a set of words.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Coverage {
    pub words: u64,
    pub legal: u64,
    pub by_form: BTreeMap<String, u64>,
    pub illegal_kinds: BTreeMap<String, u64>,
    pub with_invalid_values: u64,
    pub with_ignored_bits: u64,
    /// For each field: how many legal words had each value (narrow fields), or each bit set (wide fields).
    pub fields: BTreeMap<String, FieldCoverage>,
    /// The same per form key, so that a report can say which form exercised a shared field.
    pub fields_by_form: BTreeMap<String, BTreeMap<String, FieldCoverage>>,
}

/// [`Coverage`]'s counts, gathered in flat arrays: per (instruction, form) a count per value
/// of each narrow field and per state of each bit of a wide one, indexed by the value, so a
/// word costs its decode and one increment a field (a bit, for wide ones) instead of map
/// lookups by name and a string per value. [`CoverageCounter::finish`] spells them as
/// counting each word's fields by name would have (a test holds the two equal).
#[derive(Default)]
pub struct CoverageCounter {
    words: u64,
    legal: u64,
    with_invalid_values: u64,
    with_ignored_bits: u64,
    illegal_kinds: BTreeMap<String, u64>,
    /// (op, form index) → position in `forms`
    slot: std::collections::HashMap<(Op, usize), usize>,
    /// in the order each (op, form) was first seen, which decides a shared field's `width`
    /// and `possible` as the first word to count a field by name does
    forms: Vec<FormCounts>,
}

struct FormCounts {
    op: Op,
    k: usize,
    key: &'static str,
    words: u64,
    /// per field of the form: (field index, offset of its counts)
    fields: Vec<(usize, usize)>,
    counts: Vec<u64>,
}

impl CoverageCounter {
    pub fn add(&mut self, word: u128) {
        self.words += 1;
        let i = match decode(word) {
            Ok(i) => i,
            Err(e) => {
                *self.illegal_kinds.entry(e.kind()).or_default() += 1;
                return;
            }
        };
        self.legal += 1;
        self.with_invalid_values += i.has_invalid_value() as u64;
        self.with_ignored_bits += (i.ignored != 0) as u64;
        let op = i.op;
        let k = op.form_index(i.form()).unwrap_or(0);
        let n = self.forms.len();
        let at = *self.slot.entry((op, k)).or_insert(n);
        if at == n {
            let s = op.spec();
            let mut fields = Vec::new();
            let mut len = 0;
            for &fi in &s.forms[k].fields {
                fields.push((fi, len));
                let w = s.fields[fi].width;
                len += if w <= 8 { 1usize << w } else { 2 * w as usize };
            }
            self.forms.push(FormCounts { op, k, key: i.form_key(), words: 0, fields, counts: vec![0; len] });
        }
        let f = &mut self.forms[at];
        f.words += 1;
        let s = op.spec();
        for &(fi, off) in &f.fields {
            let field = &s.fields[fi];
            let v = field.get(word);
            if field.width <= 8 {
                f.counts[off + v as usize] += 1;
            } else {
                for b in 0..field.width as usize {
                    f.counts[off + 2 * b + (v >> b & 1) as usize] += 1;
                }
            }
        }
    }

    pub fn finish(self) -> Coverage {
        let mut c = Coverage {
            words: self.words,
            legal: self.legal,
            illegal_kinds: self.illegal_kinds,
            with_invalid_values: self.with_invalid_values,
            with_ignored_bits: self.with_ignored_bits,
            ..Coverage::default()
        };
        let spell = |map: &mut BTreeMap<String, FieldCoverage>, f: &FormCounts, fi: usize, off: usize| {
            let s = f.op.spec();
            let field = &s.fields[fi];
            let e = map.entry(field.name.clone()).or_insert_with(|| FieldCoverage {
                width: field.width,
                seen: BTreeMap::new(),
                possible: if field.width <= 8 { s.reachable_values(f.k, fi) } else { field.width as u64 * 2 },
            });
            if field.width <= 8 {
                for v in 0..1usize << field.width {
                    if f.counts[off + v] > 0 {
                        *e.seen.entry(format!("{v}")).or_default() += f.counts[off + v];
                    }
                }
            } else {
                for b in 0..field.width as usize {
                    for bit in 0..2 {
                        if f.counts[off + 2 * b + bit] > 0 {
                            *e.seen.entry(format!("bit{b}={bit}")).or_default() += f.counts[off + 2 * b + bit];
                        }
                    }
                }
            }
        };
        for f in &self.forms {
            *c.by_form.entry(f.key.to_string()).or_default() += f.words;
            let per_form = c.fields_by_form.entry(f.key.to_string()).or_default();
            for &(fi, off) in &f.fields {
                spell(per_form, f, fi, off);
            }
        }
        for f in &self.forms {
            for &(fi, off) in &f.fields {
                spell(&mut c.fields, f, fi, off);
            }
        }
        c
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FieldCoverage {
    pub width: u32,
    /// value (or "bitN") → count
    pub seen: BTreeMap<String, u64>,
    /// number of distinct values (narrow) or bits (wide) that can occur
    pub possible: u64,
}

impl FieldCoverage {
    pub fn covered(&self) -> u64 {
        self.seen.values().filter(|&&c| c > 0).count() as u64
    }
}

impl Coverage {
    /// Adds `other`'s counts into these (the coverage of both word sets; a field's `width`
    /// and `possible` are the larger of the two). None when a count overflows (a corrupt
    /// file: no real run counts 2^64 words).
    pub fn merge(&mut self, other: &Coverage) -> Option<()> {
        fn sum(a: &mut u64, b: u64) -> Option<()> {
            *a = a.checked_add(b)?;
            Some(())
        }
        fn counts(a: &mut BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> Option<()> {
            b.iter().try_for_each(|(k, &v)| sum(a.entry(k.clone()).or_default(), v))
        }
        fn fields(a: &mut BTreeMap<String, FieldCoverage>, b: &BTreeMap<String, FieldCoverage>) -> Option<()> {
            for (k, f) in b {
                let e = a.entry(k.clone()).or_default();
                e.width = e.width.max(f.width);
                e.possible = e.possible.max(f.possible);
                counts(&mut e.seen, &f.seen)?;
            }
            Some(())
        }
        sum(&mut self.words, other.words)?;
        sum(&mut self.legal, other.legal)?;
        sum(&mut self.with_invalid_values, other.with_invalid_values)?;
        sum(&mut self.with_ignored_bits, other.with_ignored_bits)?;
        counts(&mut self.by_form, &other.by_form)?;
        counts(&mut self.illegal_kinds, &other.illegal_kinds)?;
        fields(&mut self.fields, &other.fields)?;
        for (k, m) in &other.fields_by_form {
            fields(self.fields_by_form.entry(k.clone()).or_default(), m)?;
        }
        Some(())
    }

    /// The coverage of `words`, counted by a [`CoverageCounter`].
    pub fn of(words: &[u128]) -> Coverage {
        let mut c = CoverageCounter::default();
        for &w in words {
            c.add(w);
        }
        c.finish()
    }

    /// A plain-text table: one line a field, covered / possible.
    pub fn table(&self) -> String {
        let mut s = format!("{} words, {} legal\n", self.words, self.legal);
        for (k, v) in &self.by_form {
            s += &format!("  form {k:<16} {v}\n");
        }
        for (k, v) in &self.illegal_kinds {
            s += &format!("  illegal {k:<24} {v}\n");
        }
        s += &format!("  with INVALIDn values {}\n  with ignored bits set {}\n", self.with_invalid_values, self.with_ignored_bits);
        for (name, f) in &self.fields {
            let unit = if f.width <= 8 { "values" } else { "bit states" };
            s += &format!("  field {name:<12} {:>4}/{:<4} {unit}\n", f.covered(), f.possible);
        }
        s
    }
}

/// proptest strategies: a failing test shrinks towards a small seed and item index.
#[cfg(feature = "tools")]
pub mod strategies {
    use super::*;
    use proptest::prelude::{any, Strategy};

    /// Any legal instruction (INVALIDn values and ignored bits included).
    pub fn inst() -> impl Strategy<Value = Inst> {
        (any::<u64>(), 0..Op::ALL.len(), 0usize..Form::ALL.len(), any::<bool>(), any::<bool>()).prop_map(|(seed, op, form, invalid, ignored)| {
            let mut r = Rng::new(seed);
            let op = Op::ALL[op];
            let forms: Vec<Form> = op.forms().collect();
            random_inst(&mut r, op, forms[form % forms.len()], invalid, ignored)
        })
    }

    /// Any legal word.
    pub fn legal_word() -> impl Strategy<Value = u128> {
        inst().prop_map(|i| match encode(&i) {
            Ok(w) => w,
            Err(e) => panic!("strategy drew an unencodable instruction: {e}"),
        })
    }

    /// Any 128-bit word at all.
    pub fn any_word() -> impl Strategy<Value = u128> {
        any::<u128>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition [`CoverageCounter`] is held to: each word decoded and each of its
    /// form's fields counted by name, one map entry per value (or bit state).
    /// Count `word`'s value of field `fi` (of `form`) into `map`.
    fn tally(map: &mut BTreeMap<String, FieldCoverage>, op: Op, k: usize, fi: usize, word: u128) {
        let s = op.spec();
        let f = &s.fields[fi];
        let e = map.entry(f.name.clone()).or_insert_with(|| FieldCoverage {
            width: f.width,
            seen: BTreeMap::new(),
            possible: if f.width <= 8 { s.reachable_values(k, fi) } else { f.width as u64 * 2 },
        });
        let v = f.get(word);
        if f.width <= 8 {
            *e.seen.entry(format!("{v}")).or_default() += 1;
        } else {
            for b in 0..f.width {
                *e.seen.entry(format!("bit{b}={}", v >> b & 1)).or_default() += 1;
            }
        }
    }

    fn add_word(c: &mut Coverage, word: u128) {
        c.words += 1;
        match decode(word) {
            Ok(i) => {
                c.legal += 1;
                let (op, key) = (i.op, i.form_key());
                let k = op.form_index(i.form()).unwrap_or(0);
                *c.by_form.entry(key.to_string()).or_default() += 1;
                if i.has_invalid_value() {
                    c.with_invalid_values += 1;
                }
                if i.ignored != 0 {
                    c.with_ignored_bits += 1;
                }
                let per_form = c.fields_by_form.entry(key.to_string()).or_default();
                for &fi in &op.spec().forms[k].fields {
                    tally(&mut c.fields, op, k, fi, word);
                    tally(per_form, op, k, fi, word);
                }
            }
            Err(e) => *c.illegal_kinds.entry(e.kind()).or_default() += 1,
        }
    }

    #[test]
    fn merged_coverage_is_the_coverage_of_both_word_sets() {
        let o = GenOptions { illegal_share: 0.1, invalid_share: 0.2, ignored_share: 0.2, ..GenOptions::legal(7) };
        let words = generate(&o, 0, 3000);
        let (x, y) = words.split_at(1234);
        let mut m = Coverage::of(x);
        m.merge(&Coverage::of(y)).unwrap();
        assert_eq!(m, Coverage::of(&words));
        let mut big = Coverage { words: u64::MAX, ..Default::default() };
        assert_eq!(big.merge(&m), None, "an overflowing count is an error");
    }

    /// The counter's coverage is `add_word`'s, word by word: all instructions, illegal
    /// words, INVALIDn values and ignored bits, and arbitrary bits with the family's opcodes.
    #[test]
    fn counted_coverage_is_the_coverage_added_word_by_word() {
        // a fresh seed each run, printed; HMUL2_SEED repeats one
        let seed = crate::rng::resolve_seed(std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()));
        let o = GenOptions { illegal_share: 0.2, invalid_share: 0.3, ignored_share: 0.3, ..GenOptions::legal(seed) };
        let mut words = generate(&o, 0, 6000);
        let mut r = Rng::new(seed);
        let opcodes: Vec<u128> =
            Op::ALL.iter().map(|op| op.spec().field("opcode").get(encode(&Inst::of(*op, 0, 1, Operand2::Reg(2))).unwrap()) as u128).collect();
        let opcode = Op::Hmul2.spec().field("opcode");
        for _ in 0..2000 {
            let w = (r.next_u64() as u128) << 64 | r.next_u64() as u128;
            words.push(opcode.set(w, *r.pick(&opcodes) as u32).unwrap());
        }
        let mut added = Coverage::default();
        for &w in &words {
            add_word(&mut added, w);
        }
        assert_eq!(Coverage::of(&words), added, "seed {seed}");
        assert_eq!(Coverage::of(&[]), Coverage::default());
    }

    #[test]
    fn same_seed_same_words() {
        let o = GenOptions { illegal_share: 0.1, invalid_share: 0.2, ignored_share: 0.2, ..GenOptions::legal(42) };
        assert_eq!(generate(&o, 0, 500), generate(&o, 0, 500));
        assert_eq!(generate(&o, 100, 10), generate(&o, 0, 110)[100..].to_vec());
        assert_ne!(generate(&o, 0, 50), generate(&GenOptions { seed: 43, ..o.clone() }, 0, 50));
    }

    #[test]
    fn legal_option_gives_legal_words_and_shares_are_honoured() {
        let words = generate(&GenOptions::legal(1), 0, 5000);
        assert!(words.iter().all(|&w| decode(w).is_ok()));
        assert!(words.iter().all(|&w| !decode(w).unwrap().has_invalid_value()));
        let o = GenOptions { illegal_share: 0.5, ..GenOptions::legal(2) };
        let bad = generate(&o, 0, 4000).into_iter().filter(|&w| decode(w).is_err()).count();
        assert!((1700..2300).contains(&bad), "{bad} illegal of 4000");
    }

    #[test]
    fn form_restriction_and_coverage() {
        for op in Op::ALL {
            for form in op.forms() {
                let o = GenOptions { form: Some(form), invalid_share: 0.5, ..GenOptions::legal_of(7, &[op]) };
                let words = generate(&o, 0, 4000);
                assert!(words.iter().all(|&w| decode(w).is_ok_and(|i| i.form() == form && i.op == op)));
                let c = Coverage::of(&words);
                assert_eq!(c.fields.len(), op.form_spec(form).unwrap().fields.len());
                for (name, f) in &c.fields {
                    assert_eq!(f.covered(), f.possible, "{op} {form}: field {name} not fully covered: {:?}", f.seen);
                }
            }
        }
    }

    #[test]
    fn factorial_sizes() {
        assert_eq!(factorial(Op::Hmul2, Form::Rrr, 1).len(), 8192);
        assert_eq!(factorial(Op::Hmul2, Form::Imm, 1).len(), 512);
        assert!(factorial(Op::Hmul2, Form::Ur, 1).iter().all(|i| encode(i).is_ok()));
    }
}
