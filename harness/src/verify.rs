//! The vector subcommands: `verify` (replay vectors through the reference), `eval` (fill
//! vectors' `expect` from the reference) and the hidden `semantics-doc` (regenerate
//! `docs/semantics.md`'s table from `harness/spec/semantics.json`).

use crate::cli::{exit_for, for_each_line_of, input_name, vec_for, CliError, CliResult};
use crate::commands::resolve_seed;
use crate::isa::parse_hex;
use crate::reference::{self, policy, Undefined};
pub use crate::replay::{forms_of, replay, Replay};
use crate::vectors::{check, parse_line, to_line, Vector};
use clap::Args;
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

pub fn verify(a: VerifyArgs) -> CliResult {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let r = replay(&a.paths, &mut out)?;
    out.flush().map_err(|e| CliError::input(format!("stdout: {e}")))?;
    Ok(exit_for(r.ok()))
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
    // line by line as read, each vector written as soon as it is computed: memory stays
    // flat, and a bad line stops the run after the lines before it were written
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let (mut undefined, mut written) = (0usize, 0usize);
    let mut one = |at: &str, mut v: Vector, out: &mut std::io::BufWriter<std::io::StdoutLock>| -> Result<(), CliError> {
        let inst = check(&v).map_err(|e| CliError::input(format!("{at}: {e}")))?;
        v.origin = "reference".into();
        v.expect = match reference::eval(&inst, &v.inputs) {
            Ok(e) => Some(e),
            Err(Undefined::Format(_) | Undefined::Flush | Undefined::Swizzle { .. } | Undefined::AddFlush(_) | Undefined::AddBf16F32 | Undefined::Fma(_)) => {
                undefined += 1;
                None
            }
            Err(e @ Undefined::Instruction(_)) => return Err(CliError::input(format!("{at}: {e}"))),
        };
        written += 1;
        writeln!(out, "{}", to_line(&v)).map_err(|e| CliError::input(format!("stdout: {e}")))
    };
    let run = if let Some(path) = &a.encodings {
        let seed = resolve_seed(a.seed);
        let name = input_name(path);
        // the input sets of one encoding are held at a time
        vec_for::<crate::inputs::Inputs>("--inputs", a.inputs as u64)?;
        for_each_line_of(path, |n, line| {
            let line = line.map_err(CliError::input)?;
            if line.trim().is_empty() {
                return Ok(());
            }
            let at = format!("{name}:{n}");
            let word = parse_hex(line).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            let inst = crate::isa::decode(word).map_err(|e| CliError::input(format!("{at}: {e}")))?;
            for x in reference::input_set(&inst, seed.wrapping_add(n as u64 - 1), a.inputs) {
                one(&at, Vector { encoding: word, inputs: x, expect: None, origin: String::new() }, &mut out)?;
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
        crate::errln!("{undefined} of {written} vectors are undefined (INVALIDn fields): written without \"expect\"");
    }
    Ok(exit_for(undefined == 0))
}

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
    crate::outfile::write_atomic(std::path::Path::new(&a.doc), text.as_bytes()).map_err(|e| CliError::input(format!("{}: {e}", a.doc)))?;
    crate::errln!("wrote {}", a.doc);
    Ok(exit_for(true))
}
