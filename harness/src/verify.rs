//! The vector subcommands: `verify` (replay vectors through the reference), `eval` (fill
//! vectors' `expect` from the reference) and the hidden `semantics-doc` (regenerate
//! `docs/semantics.md`'s table from `harness/spec/semantics.json`).

use crate::cli::{exit_for, input_name, read_lines, vec_for, CliError, CliResult};
use crate::commands::resolve_seed;
use crate::isa::{parse_hex, render, Form};
use crate::reference::{self, policy, Undefined};
use crate::vectors::{self, check, parse_line, to_line, Vector};
use clap::Args;
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Args)]
#[command(after_help = "\
Each line is classified:
  pass       the reference gives `expect`.
  mismatch   the reference gives something else: FAIL.
  malformed  not a vector (bad JSON, a missing key, bad hex, no `expect`): FAIL.
  invalid    contradicts itself (illegal encoding; RZ/URZ read non-zero; the same register \
as operands 1 and 2 with a != b; destination equal to a source with d != that source; \
destination RZ with d != 0; pred bit 7 set): FAIL.
  undefined  the encoding has an INVALIDn field, so the reference has no value: reported and \
counted, neither pass nor fail; except that a vector with origin `reference` claims a \
reference result the reference cannot give: FAIL.
Exit 0 when nothing failed (undefined vectors may remain), 1 when something failed, 2 when a \
path cannot be read or holds no vectors.")]
pub struct VerifyArgs {
    /// Files or folders (searched recursively for *.jsonl, in sorted order).
    #[arg(required = true)]
    pub paths: Vec<String>,
}

#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    undefined: usize,
}

/// Totals of one replay.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Replay {
    pub vectors: usize,
    pub pass: usize,
    pub mismatch: usize,
    pub malformed: usize,
    pub invalid: usize,
    pub undefined: usize,
    /// The report lines of the failures (file:line and what), in order.
    pub failures: Vec<String>,
}

impl Replay {
    pub fn ok(&self) -> bool {
        self.mismatch + self.malformed + self.invalid == 0
    }
}

pub fn verify(a: VerifyArgs) -> CliResult {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let r = replay(&a.paths, &mut out)?;
    out.flush().map_err(|e| CliError::input(format!("stdout: {e}")))?;
    Ok(exit_for(r.ok()))
}

/// Replay every vector under `paths` through the reference, writing the report to `out`.
pub fn replay<P: AsRef<std::path::Path>>(paths: &[P], out: &mut dyn Write) -> Result<Replay, CliError> {
    let lines = vectors::read_paths(paths)?;
    if lines.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.as_ref().display().to_string()).collect();
        return Err(CliError::input(format!("no vectors in {}", names.join(" "))));
    }
    let mut failures = Vec::new();
    let mut by_origin: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_form: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut malformed, mut invalid, mut mismatch, mut undefined, mut pass) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let w = |o: &mut dyn Write, s: String| writeln!(o, "{s}").map_err(|e| CliError::input(format!("output: {e}")));
    let mut fail = |o: &mut dyn Write, s: String| {
        if failures.len() < 100 {
            failures.push(s.clone());
        }
        w(o, s)
    };
    for l in &lines {
        let at = l.at();
        let v = match &l.item {
            Ok(v) => v,
            Err(e) => {
                malformed += 1;
                fail(out, format!("{at}: malformed: {e}"))?;
                continue;
            }
        };
        let inst = match check(v) {
            Ok(i) => i,
            Err(e) => {
                invalid += 1;
                by_origin.entry(v.origin.clone()).or_default().fail += 1;
                fail(out, format!("{at}: invalid: {e}"))?;
                continue;
            }
        };
        let origin = by_origin.entry(v.origin.clone()).or_default();
        let form = by_form.entry(inst.form().cli_name().to_string()).or_default();
        let x = v.inputs;
        let what = format!("{}  a={:#010x} b={:#010x} d={:#010x} pred={:#04x}", render(&inst), x.a, x.b, x.d, x.pred);
        let Some(expect) = v.expect else {
            malformed += 1;
            origin.fail += 1;
            form.fail += 1;
            fail(out, format!("{at}: malformed: no \"expect\" to check: {what}"))?;
            continue;
        };
        match reference::eval(&inst, &x) {
            Ok(got) if got == expect => {
                pass += 1;
                origin.pass += 1;
                form.pass += 1;
            }
            Ok(got) => {
                mismatch += 1;
                origin.fail += 1;
                form.fail += 1;
                fail(out, format!("{at}: mismatch: {what}  expected {expect:#010x}, reference {got:#010x}"))?;
            }
            Err(u) if v.origin == "reference" => {
                mismatch += 1;
                origin.fail += 1;
                form.fail += 1;
                fail(out, format!("{at}: mismatch: origin \"reference\" claims {expect:#010x} but the reference is undefined ({u}): {what}"))?;
            }
            Err(u) => {
                undefined += 1;
                origin.undefined += 1;
                form.undefined += 1;
                w(out, format!("{at}: undefined: {u}: {what}  (recorded {expect:#010x})"))?;
            }
        }
    }
    w(out, format!("{} vectors: {pass} pass, {mismatch} mismatch, {malformed} malformed, {invalid} invalid, {undefined} undefined", lines.len()))?;
    for (title, map) in [("origin", &by_origin), ("form", &by_form)] {
        for (k, t) in map {
            w(out, format!("  by {title} {k:?}: {} pass, {} fail, {} undefined", t.pass, t.fail, t.undefined))?;
        }
    }
    Ok(Replay { vectors: lines.len(), pass, mismatch, malformed, invalid, undefined, failures })
}

#[derive(Args)]
#[command(after_help = "\
Without --encodings: reads vector lines on stdin (`expect` optional) and writes each with \
`expect` set by the reference and origin `reference` (the value is the reference's, whatever \
the line said before). With --encodings FILE (hex words, one a line, `-` for stdin): writes \
--inputs vectors per encoding, inputs from the reference's seeded input set. A vector whose \
encoding has an INVALIDn field is written without `expect` and counted on stderr (exit 1); \
a malformed or self-contradicting line stops with its line number (exit 2).")]
pub struct EvalArgs {
    /// Encodings to make vectors for, instead of reading vectors on stdin.
    #[arg(long)]
    pub encodings: Option<String>,
    /// Inputs per encoding with --encodings.
    #[arg(long, default_value_t = 4)]
    pub inputs: usize,
    /// Seed of the input sets (input set k uses seed + k); drawn and printed when absent.
    #[arg(long)]
    pub seed: Option<u64>,
}

pub fn eval(a: EvalArgs) -> CliResult {
    // each vector with the input line it came from (FILE:LINE), for errors
    let mut vs: Vec<(String, Vector)> = Vec::new();
    if let Some(path) = &a.encodings {
        let seed = resolve_seed(a.seed);
        let lines = read_lines(path)?;
        let name = input_name(path);
        let encodings = lines.iter().filter(|l| !l.trim().is_empty()).count() as u64;
        vs = vec_for("--inputs", (a.inputs as u64).saturating_mul(encodings))?;
        for (n, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{name}:{}", n + 1);
            let word = parse_hex(line).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            let inst = crate::isa::decode(word).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            for x in reference::input_set(&inst, seed.wrapping_add(n as u64), a.inputs) {
                vs.push((at.clone(), Vector { encoding: word, inputs: x, expect: None, origin: String::new() }));
            }
        }
    } else {
        for (n, line) in read_lines("-")?.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("stdin:{}", n + 1);
            let v = parse_line(line).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            vs.push((at, v));
        }
    }
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut undefined = 0usize;
    for (at, v) in vs.iter_mut() {
        let inst = check(v).map_err(|e| CliError::input(format!("{at}: {e}")))?;
        v.origin = "reference".into();
        v.expect = match reference::eval(&inst, &v.inputs) {
            Ok(e) => Some(e),
            Err(Undefined::Format(_) | Undefined::Flush | Undefined::Swizzle { .. } | Undefined::AddFlush(_) | Undefined::AddBf16F32) => {
                undefined += 1;
                None
            }
        };
        writeln!(out, "{}", to_line(v)).map_err(|e| CliError::input(format!("stdout: {e}")))?;
    }
    out.flush().map_err(|e| CliError::input(format!("stdout: {e}")))?;
    if undefined > 0 {
        eprintln!("{undefined} of {} vectors are undefined (INVALIDn fields): written without \"expect\"", vs.len());
    }
    Ok(exit_for(undefined == 0))
}

/// Marks the generated part of `docs/semantics.md`.
pub const BEGIN: &str = "<!-- BEGIN generated from harness/spec/semantics.json by `hmul2-harness semantics-doc`; do not edit -->";
pub const END: &str = "<!-- END generated -->";

/// `doc` with the part between [`BEGIN`] and [`END`] replaced by the table of `json`.
pub fn render_doc(doc: &str, json: &str) -> Result<String, String> {
    let table = policy::parse_table(json).map_err(|e| e.to_string())?;
    policy::Policy::from_table(&table).map_err(|e| e.to_string())?;
    let (head, rest) = doc.split_once(BEGIN).ok_or("no BEGIN marker")?;
    let (_, tail) = rest.split_once(END).ok_or("no END marker")?;
    Ok(format!("{head}{BEGIN}\n{}{END}{tail}", policy::render_table(&table)))
}

#[derive(Args)]
pub struct SemanticsDocArgs {
    /// The Markdown file whose generated table to rewrite in place.
    #[arg(long, default_value = "docs/semantics.md")]
    pub doc: String,
    /// The semantics table to render.
    #[arg(long, default_value = "harness/spec/semantics.json")]
    pub json: String,
}

pub fn semantics_doc(a: SemanticsDocArgs) -> CliResult {
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| CliError::input(format!("{p}: {e}")));
    let json = read(&a.json)?;
    // the policy's errors name the embedded semantics.json; name the file given instead
    let bad_json = |e: policy::PolicyError| CliError::input(format!("{}: {}", a.json, e.to_string().trim_start_matches("semantics.json: ")));
    policy::Policy::from_table(&policy::parse_table(&json).map_err(bad_json)?).map_err(bad_json)?;
    let text = render_doc(&read(&a.doc)?, &json).map_err(|e| CliError::input(format!("{}: {e}", a.doc)))?;
    std::fs::write(&a.doc, text).map_err(|e| CliError::input(format!("{}: {e}", a.doc)))?;
    eprintln!("wrote {}", a.doc);
    Ok(exit_for(true))
}

/// Lines of the committed reference set by form, for the coverage test.
pub fn forms_of(vs: &[Vector]) -> BTreeMap<Form, usize> {
    let mut m = BTreeMap::new();
    for v in vs {
        if let Ok(i) = crate::isa::decode(v.encoding) {
            *m.entry(i.form()).or_insert(0) += 1;
        }
    }
    m
}
