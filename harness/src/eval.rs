//! `eval`: what the reference says an instruction gives, from the command line or for
//! vector lines.
//!
//! Two modes. Given an instruction (text or word) and operand values, it prints the result
//! word, its lanes as numbers and the named assumptions of `harness/spec/semantics.json`
//! the result rests on (those with an option that would give another result). Without
//! one, it fills vector lines' `expect` (stdin, or `--encodings` words with seeded inputs).

use crate::cli::{exit_for, for_each_line_of, input_name, vec_for, CliError, CliResult};
use crate::commands::resolve_seed;
use crate::inputs::Inputs;
use crate::isa::{self, format_hex, parse_hex, Format, Inst, Operand2, PT, RZ, URZ};
use crate::reference::{self, policy, Undefined};
use crate::vectors::{check, parse_line, to_line, Vector};
use clap::Args;
use half::{bf16, f16};
use std::io::Write;

#[derive(Args)]
#[command(after_help = "\
One instruction:
  hmul2-harness eval 'HMUL2 R0, R1, R2' 0x3e003c00 0x40004000
  hmul2-harness eval 'HFMA2 R0, R1, R2, R3' --a 1.5,1 --b 2 --c 0x3c003c00
A value is a 32-bit word (0x + up to 8 hex digits) or its two lanes as numbers, written as \
the word reads, H1 first (`1.5,1` is 0x3e003c00 in FP16); one number fills both lanes. Lanes \
are FP16, or BF16 for .BF16_V2; `inf`, `-inf`, `nan` and `-0` are numbers too. A source that \
is the destination or another source's register takes that value unless given. The output \
names each assumption of harness/spec/semantics.json whose other option would give another \
result (`rests on`).

Vector lines (no instruction): each line on stdin is one JSON object
  {\"encoding\":\"0x<32 hex>\",\"a\":\"0x<8 hex>\",\"b\":\"0x<8 hex>\",\"c\":\"0x<8 hex>\",\"d\":\"0x<8 hex>\",\"pred\":\"0x<2 hex>\"}
(`c` only for HFMA2 and HFMA2.MMA; `d` is the destination before; `pred` bit i is Pi) and \
is written back with `expect` set by the reference and origin `reference` (and, for an \
instruction that writes predicates, `expect_pred`: P0..P6 after). With --encodings \
FILE (hex words, one a line, `-` for stdin): writes --inputs vectors per encoding, inputs from \
the reference's seeded input set. A vector whose result is undefined is written without \
`expect` and counted on stderr with its reason (exit 1); a malformed or self-contradicting \
line stops with its line number (exit 2).")]
pub struct EvalArgs {
    /// The instruction, as nvdisasm prints it or as a word (0x + 32 hex digits); without
    /// one, vector lines are read on stdin.
    pub instruction: Option<String>,
    /// The values operands 1, 2 and 3 read, in order (instead of --a, --b, --c).
    #[arg(value_name = "VALUE")]
    pub values: Vec<String>,
    /// The value operand 1 reads: a word or lanes (`1.5,1`).
    #[arg(long, allow_hyphen_values = true)]
    pub a: Option<String>,
    /// The value operand 2 reads (a register, uniform register or constant-bank word).
    #[arg(long, allow_hyphen_values = true)]
    pub b: Option<String>,
    /// The value operand 3 reads (HFMA2, HFMA2.MMA).
    #[arg(long, allow_hyphen_values = true)]
    pub c: Option<String>,
    /// The destination's value before (kept when the guard is false); default 0, or the
    /// value of the source it shares a register with.
    #[arg(long, allow_hyphen_values = true)]
    pub d: Option<String>,
    /// The predicate file: a number whose bit i is Pi (0x05), or the true ones named
    /// (P0,P2); default 0 (all false; PT is always true).
    #[arg(long)]
    pub pred: Option<String>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Encodings to make vectors for, instead of reading vectors on stdin.
    #[arg(long, conflicts_with_all = ["instruction", "a", "b", "c", "d", "pred", "json"])]
    pub encodings: Option<String>,
    /// Inputs per encoding with --encodings.
    #[arg(long, default_value_t = 4, requires = "encodings")]
    pub inputs: usize,
    /// Seed of the input sets (input set k uses seed + k); drawn and printed when absent.
    #[arg(long, requires = "encodings")]
    pub seed: Option<u64>,
    /// The architecture that reads the instruction, the `--encodings` words and the vectors
    /// naming none (no `"arch"` key): default SM90. A vector naming another is an error.
    #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE)]
    pub arch: Option<&'static crate::target::Target>,
}

pub fn eval(a: EvalArgs) -> CliResult {
    match a.instruction.clone() {
        Some(text) => one(&text, a),
        None if [&a.a, &a.b, &a.c, &a.d, &a.pred].iter().any(|v| v.is_some()) || a.json => {
            Err(CliError::input("eval: --a, --b, --c, --d, --pred and --json need an instruction (e.g. eval 'HMUL2 R0, R1, R2' --a 1 --b 2)"))
        }
        None => vectors(a),
    }
}

/// The lane format of an instruction's sources.
fn source_half(inst: &Inst) -> Half {
    if inst.format == Format::Bf16 {
        Half::Bf16
    } else {
        Half::F16
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Half {
    F16,
    Bf16,
}

impl Half {
    fn name(self) -> &'static str {
        match self {
            Half::F16 => "FP16",
            Half::Bf16 => "BF16",
        }
    }
    fn bits_of(self, v: f64) -> u16 {
        match self {
            Half::F16 => f16::from_f64(v).to_bits(),
            Half::Bf16 => bf16::from_f64(v).to_bits(),
        }
    }
    fn to_f64(self, bits: u16) -> f64 {
        match self {
            Half::F16 => f16::from_bits(bits).to_f64(),
            Half::Bf16 => bf16::from_bits(bits).to_f64(),
        }
    }
    /// One lane as a number; a NaN shows its bits (the payload is part of the result).
    fn show(self, bits: u16) -> String {
        let v = self.to_f64(bits);
        if v.is_nan() {
            format!("NaN(0x{bits:04x})")
        } else {
            number(v)
        }
    }
}

/// A number as the user would write it back: `inf`, `-0`, `1.5`.
fn number(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if v == 0.0 && v.is_sign_negative() {
        "-0".to_string()
    } else if v != 0.0 && !(1e-4..1e7).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A value as typed: a word (0x + 1..8 hex digits) or lanes (`1.5,1`: H1 first; one number
/// fills both lanes). `name` is how messages name it (`--a`).
fn parse_value(name: &str, s: &str, h: Half) -> Result<u32, CliError> {
    let t = s.trim();
    let bad = |why: String| CliError::input(format!("{name} {:?}: {why}", crate::cli::excerpt(t, 64)));
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if hex.is_empty() || hex.len() > 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("a word is 0x and 1 to 8 hex digits".into()));
        }
        return u32::from_str_radix(hex, 16).map_err(|e| bad(e.to_string()));
    }
    let lane = |x: &str| -> Result<u16, CliError> {
        let x = x.trim();
        let v: f64 = x.parse().map_err(|_| bad(format!("{x:?} is not a number (a value is a word 0x... or lanes such as 1.5,1)")))?;
        Ok(h.bits_of(v))
    };
    let parts: Vec<&str> = t.split(',').collect();
    match parts.as_slice() {
        [both] => {
            let l = lane(both)?;
            Ok((l as u32) << 16 | l as u32)
        }
        [h1, h0] => Ok((lane(h1)? as u32) << 16 | lane(h0)? as u32),
        _ => Err(bad(format!("{} lanes: a value has two (H1,H0)", parts.len()))),
    }
}

/// The predicate file: a number (0x05, 5) or true predicates by name (P0,P2).
fn parse_pred(s: &str) -> Result<u8, CliError> {
    let t = s.trim();
    let bad = || CliError::input(format!("--pred {:?}: a number below 0x80 (bit i is Pi) or names such as P0,P2", crate::cli::excerpt(t, 64)));
    if t.starts_with(['P', 'p']) {
        return t.split(',').try_fold(0u8, |acc, p| match p.trim().strip_prefix(['P', 'p']).and_then(|n| n.parse::<u8>().ok()) {
            Some(i) if i < PT => Ok(acc | 1 << i),
            _ => Err(bad()),
        });
    }
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u8::from_str_radix(h, 16).ok(),
        None => t.parse::<u8>().ok(),
    };
    v.filter(|&v| v < 0x80).ok_or_else(bad)
}

/// The true predicates of a file, by name (`P0,P2`; `none`).
fn pred_names(p: u8) -> String {
    let names: Vec<String> = (0..PT).filter(|&i| p >> i & 1 == 1).map(|i| format!("P{i}")).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(",")
    }
}

/// What one source operand reads from the inputs: a register (other than RZ), uniform
/// register (other than URZ) or constant-bank word; None for RZ, URZ and immediates.
fn reads(o: Operand2) -> Option<String> {
    match o {
        Operand2::Reg(RZ) | Operand2::Ur(URZ) | Operand2::Imm { .. } => None,
        Operand2::Reg(r) => Some(format!("R{r}")),
        Operand2::Ur(u) => Some(format!("UR{u}")),
        Operand2::Const { bank, offset } => Some(format!("c[{bank:#x}][{offset:#x}]")),
        Operand2::ConstUr { ureg, offset } => Some(format!("cx[UR{ureg}][{offset:#x}]")),
    }
}

/// The instruction of `text`: nvdisasm-style text or a word.
fn instruction(text: &str, target: &'static crate::target::Target) -> Result<(Inst, u128), CliError> {
    let t = text.trim();
    if t.starts_with("0x") || t.starts_with("0X") {
        let w = parse_hex(t).map_err(|e| CliError::input(format!("{:?}: {e}", crate::cli::excerpt(t, 80))))?;
        let inst = isa::decode_for(target, w).map_err(|e| CliError::input(format!("{}: {e}", format_hex(w))))?;
        return Ok((inst, w));
    }
    let inst = isa::parse_for(target, t)?;
    let w = isa::encode_for(target, &inst).map_err(|e| CliError::input(format!("{:?}: {e}", crate::cli::excerpt(t, 80))))?;
    Ok((inst, w))
}

/// One named assumption the result rests on: the other options and what they give.
struct Rests {
    id: &'static str,
    status: String,
    /// each other option's result, as the output writes it (None: undefined under it)
    others: Vec<Option<String>>,
}

/// The assumptions whose other options change `got` (a value `target`'s committed policy
/// gives) or, for an instruction that writes predicates, the predicates after, with where
/// each stands on `target`.
fn rests_on(target: &crate::target::Target, inst: &Inst, x: &Inputs, got: u32) -> Vec<Rests> {
    let preds = reference::writes_preds(inst.op);
    // a result as the output writes it: the word, and the predicates after where it writes some
    let result = |p: &policy::Policy| -> Option<String> {
        let r = reference::eval_with(p, inst, x).ok()?;
        if !preds {
            return Some(format!("0x{r:08x}"));
        }
        let q = reference::preds_after_with(p, inst, x).ok()?;
        Some(format!("0x{r:08x} (preds 0x{q:02x})"))
    };
    let now_result = result(policy::Policy::for_target(target));
    let table = policy::parse_table(policy::SEMANTICS_JSON).unwrap_or_default();
    let now = policy::Policy::for_target(target);
    policy::KNOBS
        .iter()
        .enumerate()
        .filter_map(|(k, (id, opts))| {
            let at = now.option(k);
            let others: Vec<Option<String>> = (0..opts.len())
                .filter(|&o| o != at)
                .map(|o| {
                    let mut p = *now;
                    p.set(k, o);
                    result(&p)
                })
                .collect();
            let status = table.iter().find(|e| e.id == *id).map_or_else(|| "assumed".into(), |e| e.status_on(target).to_string());
            let differs = |r: &Option<String>| if preds { *r != now_result } else { *r != Some(format!("0x{got:08x}")) };
            others.iter().any(differs).then_some(Rests { id, status, others })
        })
        .collect()
}

fn one(text: &str, a: EvalArgs) -> CliResult {
    let target = a.arch.unwrap_or(crate::target::Target::DEFAULT);
    let (inst, word) = instruction(text, target)?;
    let h = source_half(&inst);
    if a.values.len() > 3 {
        return Err(CliError::input(format!("eval: {} values given; an instruction reads at most 3 (a, b, c)", a.values.len())));
    }
    // each operand: its flag's value or its place among the values
    let given = |flag: &Option<String>, i: usize, name: &str| -> Result<Option<(String, String)>, CliError> {
        match (flag, a.values.get(i)) {
            (Some(_), Some(_)) => Err(CliError::input(format!("eval: operand {} given twice (--{name} and as value {})", i + 1, i + 1))),
            (Some(v), None) => Ok(Some((format!("--{name}"), v.clone()))),
            (None, Some(v)) => Ok(Some((format!("value {}", i + 1), v.clone()))),
            (None, None) => Ok(None),
        }
    };
    let ops = [(Some(Operand2::Reg(inst.a)), "a"), (Some(inst.b), "b"), (inst.c, "c")];
    let mut vals = [0u32; 3];
    let mut regs: Vec<(Operand2, u32)> = Vec::new();
    for (i, (o, name)) in ops.iter().enumerate() {
        let g = given(
            match i {
                0 => &a.a,
                1 => &a.b,
                _ => &a.c,
            },
            i,
            name,
        )?;
        let Some(o) = o else {
            if let Some((how, _)) = g {
                return Err(CliError::input(format!("eval: {how}: {} has no operand {}", inst.op.mnemonic(), i + 1)));
            }
            continue;
        };
        match (reads(*o), g) {
            (None, Some((how, _))) => {
                let what = if matches!(o, Operand2::Imm { .. }) { "is an immediate (its value is in the word)" } else { "is RZ/URZ (it reads 0)" };
                return Err(CliError::input(format!("eval: {how}: operand {} {what}; give no value for it", i + 1)));
            }
            (None, None) => {}
            (Some(_), Some((how, v))) => {
                vals[i] = parse_value(&how, &v, h)?;
                regs.push((*o, vals[i]));
            }
            (Some(r), None) => match regs.iter().find(|(p, _)| p == o) {
                // the same register as an earlier operand reads its value
                Some((_, v)) => vals[i] = *v,
                None => {
                    let place = ["first", "second", "third"][i];
                    return Err(CliError::input(format!(
                        "eval: operand {} ({r}) needs a value: --{name} or the {place} value (a word 0x... or lanes such as 1.5,1)",
                        i + 1
                    )));
                }
            },
        }
    }
    let d = match &a.d {
        Some(v) => parse_value("--d", v, h)?,
        None if inst.dst == RZ => 0,
        None => regs.iter().find(|(p, _)| *p == Operand2::Reg(inst.dst)).map_or(0, |(_, v)| *v),
    };
    let pred = a.pred.as_deref().map(parse_pred).transpose()?.unwrap_or(0);
    let x = Inputs { a: vals[0], b: vals[1], c: vals[2], d, pred };
    let v = Vector { encoding: word, inputs: x, expect: None, expect_pred: None, origin: String::new(), arch: Some(target) };
    check(&v).map_err(|e| CliError::input(format!("eval: {e}")))?;
    let text = isa::render_for(target, &inst).unwrap_or_else(|| isa::render(&inst));
    let policy = policy::Policy::for_target(target);
    let result = reference::eval_with(policy, &inst, &x);
    // the predicates after, shown for an instruction that writes some
    let preds = reference::writes_preds(inst.op).then(|| reference::preds_after_with(policy, &inst, &x));
    let guard = inst.pred.index >= PT || (x.pred >> inst.pred.index) & 1 == 1;
    let runs = guard != inst.pred.negated;
    let rests = result.as_ref().map(|&r| rests_on(target, &inst, &x, r)).unwrap_or_default();
    let out_lanes = |w: u32| -> Vec<(String, String)> {
        if inst.format == Format::F32 && runs {
            vec![("F32".into(), number(f32::from_bits(w) as f64))]
        } else {
            let h = if inst.format == Format::F32 { Half::F16 } else { h };
            vec![("H1".into(), h.show((w >> 16) as u16)), ("H0".into(), h.show(w as u16))]
        }
    };
    let in_lanes = |w: u32| vec![("H1".to_string(), h.show((w >> 16) as u16)), ("H0".to_string(), h.show(w as u16))];
    let shown: Vec<(&str, u32)> =
        std::iter::once(("a", x.a)).chain(reads(inst.b).map(|_| ("b", x.b))).chain(inst.c.and_then(reads).map(|_| ("c", x.c))).collect();
    if a.json {
        let lanes = |l: Vec<(String, String)>| serde_json::Value::Object(l.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect());
        let mut o = serde_json::json!({
            "instruction": text,
            "encoding": format_hex(word),
            "format": if inst.format == Format::F32 { "FP16 sources, FP32 result" } else { h.name() },
        });
        for (k, w) in &shown {
            o[*k] = serde_json::json!({ "word": format!("0x{w:08x}"), "lanes": lanes(in_lanes(*w)) });
        }
        o["d"] = serde_json::json!(format!("0x{d:08x}"));
        o["pred"] = serde_json::json!(format!("0x{pred:02x}"));
        o["guard"] = serde_json::json!(runs);
        match &preds {
            Some(Ok(p)) => o["pred_after"] = serde_json::json!(format!("0x{p:02x}")),
            Some(Err(u)) => o["pred_after_undefined"] = serde_json::json!(u.to_string()),
            None => {}
        }
        match &result {
            Ok(r) => {
                o["result"] = serde_json::json!({ "word": format!("0x{r:08x}"), "lanes": lanes(out_lanes(*r)) });
                o["rests_on"] = rests
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "id": r.id,
                            "status": r.status,
                            "other_options_give": r.others,
                        })
                    })
                    .collect();
            }
            Err(u) => o["undefined"] = serde_json::json!(u.to_string()),
        }
        crate::outln!("{o}")?;
        return Ok(exit_for(result.is_ok() && preds.as_ref().is_none_or(Result::is_ok)));
    }
    let show = |l: Vec<(String, String)>| l.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join("  ");
    let mut s = format!(
        "{text}    ({}, {})\n",
        format_hex(word),
        if inst.format == Format::F32 { "FP16 sources, FP32 result".to_string() } else { format!("{} lanes", h.name()) }
    );
    for (k, w) in &shown {
        s += &format!("  {k}       0x{w:08x}  {}\n", show(in_lanes(*w)));
    }
    // the predicates after, for an instruction that writes some
    let preds_line = match &preds {
        Some(Ok(p)) => format!("  preds   0x{p:02x}  P0..P6 after: {}\n", pred_names(*p)),
        Some(Err(u)) => format!("  preds   undefined: {u}\n"),
        None => String::new(),
    };
    if !runs {
        let g = format!("@{}P{}", if inst.pred.negated { "!" } else { "" }, inst.pred.index);
        s += &format!("  guard {g} is false (--pred 0x{pred:02x}): the destination keeps d\n");
    }
    match &result {
        Ok(r) => {
            s += &format!("  result  0x{r:08x}  {}\n", show(out_lanes(*r)));
            s += &preds_line;
            if rests.is_empty() {
                s += "rests on no named assumption: every option of harness/spec/semantics.json gives this result\n";
            } else {
                // SM90's, the default, as the README shows it; another architecture's named
                let on = if target == crate::target::Target::DEFAULT { String::new() } else { format!(" on {target}") };
                s += &format!("rests on {} named assumption{} of harness/spec/semantics.json{on}:\n", rests.len(), if rests.len() == 1 { "" } else { "s" });
                for r in &rests {
                    let others: Vec<String> = r.others.iter().map(|o| o.clone().unwrap_or_else(|| "undefined".into())).collect();
                    s += &format!(
                        "  {} ({}{on}): the other option{} give{} {}\n",
                        r.id,
                        r.status,
                        if others.len() == 1 { "" } else { "s" },
                        if others.len() == 1 { "s" } else { "" },
                        others.join(", ")
                    );
                }
            }
        }
        Err(u) => s += &format!("  result  undefined: {u}\n{preds_line}"),
    }
    crate::out!("{s}")?;
    Ok(exit_for(result.is_ok() && preds.as_ref().is_none_or(Result::is_ok)))
}

/// The vector-line mode: fill `expect` for lines on stdin or for `--encodings` words.
fn vectors(a: EvalArgs) -> CliResult {
    // line by line as read, each vector written as soon as it is computed: memory stays
    // flat, and a bad line stops the run after the lines before it were written
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let (mut undefined, mut written) = (0usize, 0usize);
    let mut first_why: Option<String> = None;
    // the architecture of a line naming none: --arch's, named in the line written where not SM90
    let arch = a.arch.filter(|&t| t != crate::target::Target::DEFAULT);
    let mut one = |at: &str, mut v: Vector, out: &mut std::io::BufWriter<std::io::StdoutLock>| -> Result<(), CliError> {
        match (v.arch, a.arch) {
            (Some(named), Some(asked)) if named != asked => {
                return Err(CliError::input(format!("{at}: the vector names arch {named}, but --arch {asked} was asked for")))
            }
            (None, _) => v.arch = arch,
            _ => {}
        }
        let inst = check(&v).map_err(|e| CliError::input(format!("{at}: {e}")))?;
        v.origin = "reference".into();
        // the predicates after, for an instruction that writes some (a line of one that writes
        // none has no key: the reference leaves the file as it was), under the vector's
        // architecture's policy
        let policy = policy::Policy::for_target(v.arch.unwrap_or(crate::target::Target::DEFAULT));
        let preds = match reference::writes_preds(inst.op) {
            true => reference::preds_after_with(policy, &inst, &v.inputs).map(Some),
            false => Ok(None),
        };
        v.expect_pred = None;
        v.expect = match reference::eval_with(policy, &inst, &v.inputs).and_then(|e| preds.map(|p| (e, p))) {
            Ok((e, p)) => {
                v.expect_pred = p;
                Some(e)
            }
            Err(e @ Undefined::Instruction(_)) => return Err(CliError::input(format!("{at}: {e}"))),
            Err(e) => {
                undefined += 1;
                first_why.get_or_insert_with(|| format!("{at}: {e}"));
                None
            }
        };
        written += 1;
        writeln!(out, "{}", to_line(&v)).map_err(|e| CliError::input(format!("stdout: {e}")))
    };
    let run = if let Some(path) = &a.encodings {
        let seed = resolve_seed(a.seed);
        let name = input_name(path);
        // the input sets of one encoding are held at a time
        vec_for::<Inputs>("--inputs", a.inputs as u64)?;
        for_each_line_of(path, |n, line| {
            let line = line.map_err(CliError::input)?;
            if line.trim().is_empty() {
                return Ok(());
            }
            let at = format!("{name}:{n}");
            let word = parse_hex(line).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            let inst = isa::decode_for(a.arch.unwrap_or(crate::target::Target::DEFAULT), word).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            for x in reference::input_set(&inst, seed.wrapping_add(n as u64 - 1), a.inputs) {
                one(&at, Vector { encoding: word, inputs: x, expect: None, expect_pred: None, origin: String::new(), arch: None }, &mut out)?;
            }
            Ok(())
        })
    } else {
        for_each_line_of("-", |n, line| {
            let line = line.map_err(CliError::input)?;
            if line.trim().is_empty() {
                return Ok(());
            }
            let at = format!("stdin:{n}");
            let v = parse_line(line).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            one(&at, v, &mut out)
        })
    };
    // what was computed before a bad line reaches stdout either way
    let flushed = out.flush().map_err(|e| CliError::input(format!("stdout: {e}")));
    run?;
    flushed?;
    if undefined > 0 {
        crate::errln!("{undefined} of {written} vectors are undefined, written without \"expect\" (first: {})", first_why.unwrap_or_default());
    }
    Ok(exit_for(undefined == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_words_or_lanes_read_as_the_word_reads() {
        assert_eq!(parse_value("--a", "0x3e003c00", Half::F16).unwrap(), 0x3e003c00);
        assert_eq!(parse_value("--a", "1.5,1", Half::F16).unwrap(), 0x3e003c00);
        assert_eq!(parse_value("--a", "2", Half::F16).unwrap(), 0x40004000);
        assert_eq!(parse_value("--a", "-0, inf", Half::F16).unwrap(), 0x80007c00);
        assert_eq!(parse_value("--a", "1,1", Half::Bf16).unwrap(), 0x3f803f80);
        for bad in ["0x", "0x123456789", "1,2,3", "one", "0xzz"] {
            let e = parse_value("--a", bad, Half::F16).unwrap_err().to_string();
            assert!(e.starts_with("--a "), "{e}");
        }
    }

    #[test]
    fn predicates_by_number_or_name() {
        assert_eq!(parse_pred("0x05").unwrap(), 5);
        assert_eq!(parse_pred("P0,P2").unwrap(), 5);
        assert_eq!(parse_pred("3").unwrap(), 3);
        for bad in ["0x80", "P7", "PT", "x"] {
            assert!(parse_pred(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_nan_result_rests_on_the_nan_assumption_and_a_plain_product_on_none() {
        let inst = isa::parse("HMUL2 R0, R1, R2").unwrap();
        let x = Inputs { a: 0x3e003c00, b: 0x40004000, ..Default::default() };
        let r = reference::eval(&inst, &x).unwrap();
        assert_eq!(r, 0x42004000);
        assert!(rests_on(crate::target::Target::DEFAULT, &inst, &x, r).is_empty());
        // a NaN with a payload: the alternative propagates it
        let x = Inputs { a: 0x7e013c00, b: 0x40004000, ..Default::default() };
        let r = reference::eval(&inst, &x).unwrap();
        let ids: Vec<&str> = rests_on(crate::target::Target::DEFAULT, &inst, &x, r).iter().map(|r| r.id).collect();
        assert_eq!(ids, ["nan-result"]);
    }
}
