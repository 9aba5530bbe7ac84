//! The vector subcommands: `verify` (replay vectors through the reference) and the hidden
//! `semantics-doc` (regenerate `docs/semantics.md`'s table from `harness/spec/semantics.json`);
//! `eval` lives in [`crate::eval`].

use crate::cli::{exit_for, CliError, CliResult};
use crate::reference::policy;
pub use crate::replay::{forms_of, replay, replay_as, Replay};
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
destination RZ with d != 0; pred bit 7 set; an `arch` other than --arch): FAIL.
  undefined  the encoding has an INVALIDn field, so the reference has no value: reported and \
counted, neither pass nor fail; except that a vector with origin `reference` claims a \
reference result the reference cannot give: FAIL.
Exit 0 when nothing failed (undefined vectors may remain), 1 when something failed, 2 when a \
path cannot be read or holds no vectors.")]
pub struct VerifyArgs {
    /// Files or folders (searched recursively for *.jsonl, in sorted order).
    #[arg(required = true)]
    pub paths: Vec<String>,
    /// One JSON object: the tallies, whether it passed, and the first 100 failing lines.
    #[arg(long)]
    pub json: bool,
    /// The architecture that reads the encodings of vectors naming none (no `"arch"` key):
    /// default SM90. A vector naming another architecture than this one is invalid.
    #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE)]
    pub arch: Option<&'static crate::target::Target>,
}

pub fn verify(a: VerifyArgs) -> CliResult {
    if a.json {
        let r = replay_as(&a.paths, a.arch, &mut std::io::sink())?;
        let v = serde_json::json!({
            "vectors": r.vectors, "pass": r.pass, "mismatch": r.mismatch, "malformed": r.malformed,
            "invalid": r.invalid, "undefined": r.undefined, "ok": r.ok(), "failures": r.failures,
        });
        crate::outln!("{v}")?;
        return Ok(exit_for(r.ok()));
    }
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let r = replay_as(&a.paths, a.arch, &mut out)?;
    out.flush().map_err(|e| CliError::input(format!("stdout: {e}")))?;
    Ok(exit_for(r.ok()))
}

pub const BEGIN: &str = "<!-- BEGIN generated from harness/spec/semantics.json by `hmul2-harness semantics-doc`; do not edit -->";
pub const END: &str = "<!-- END generated -->";

/// `doc` with the part between [`BEGIN`] and [`END`] replaced by the table of `json`.
pub fn render_doc(doc: &str, json: &str) -> Result<String, String> {
    let table = policy::parse_table(json).map_err(|e| e.to_string())?;
    policy::Policy::check_table(&table).map_err(|e| e.to_string())?;
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
    #[arg(long, value_name = "FILE", default_value = "harness/spec/semantics.json")]
    pub semantics: String,
}

pub fn semantics_doc(a: SemanticsDocArgs) -> CliResult {
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| CliError::input(format!("{p}: {e}")));
    let json = read(&a.semantics)?;
    // the policy's errors name the embedded semantics.json; name the file given instead
    let bad_json = |e: policy::PolicyError| CliError::input(format!("{}: {}", a.semantics, e.to_string().trim_start_matches("semantics.json: ")));
    policy::Policy::check_table(&policy::parse_table(&json).map_err(bad_json)?).map_err(bad_json)?;
    let text = render_doc(&read(&a.doc)?, &json).map_err(|e| CliError::input(format!("{}: {e}", a.doc)))?;
    crate::outfile::write_atomic(std::path::Path::new(&a.doc), text.as_bytes()).map_err(|e| CliError::input(format!("{}: {e}", a.doc)))?;
    crate::errln!("wrote {}", a.doc);
    Ok(exit_for(true))
}
