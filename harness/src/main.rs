//! `hmul2-harness`: generate, disassemble, check and run packed-half encodings (HMUL2, HADD2, HFMA2, HFMA2.MMA,
//! HSET2, HSETP2, HMNMX2) of SM80 to SM120.
//! Each subcommand lives beside the code it drives; this file only dispatches.

use clap::{Parser, Subcommand};
use hmul2_harness::cli::CliResult;
use hmul2_harness::commands;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "hmul2-harness", version, about = "The truth about NVIDIA packed-half arithmetic (HMUL2, HADD2, HFMA2, HFMA2.MMA, HSET2, HSETP2, HMNMX2; SM80 to SM120), bit for bit", after_help = after_help())]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Decode instruction words (0x + 32 hex digits, high 64 bits first) to nvdisasm-style text.
    Decode(commands::DecodeArgs),
    /// Encode nvdisasm-style text to an instruction word.
    Encode(commands::EncodeArgs),
    /// Generate seeded random (or full-factorial) encodings of the family (HMUL2, HADD2, HFMA2, HFMA2.MMA, HSET2, HSETP2, HMNMX2).
    Generate(commands::GenerateArgs),
    /// Compare decode + render with nvdisasm on generated encodings.
    Oracle(commands::OracleArgs),
    /// Flip each bit of a word (or try each value of a bit group) and print what nvdisasm makes of it.
    Probe(hmul2_harness::probe::ProbeArgs),
    /// Print the seed-page errata recorded in the spec (as Markdown).
    Errata(commands::ErrataArgs),
    /// Lay out one instruction word bit by bit, every field named with its value and meaning.
    Explain(hmul2_harness::explain::ExplainArgs),
    /// Write one self-contained HTML page showing, per bit of every form, what is proven and by what.
    Report(hmul2_harness::report::ReportArgs),
    /// Report the CUDA driver and SM90 devices found (exit 0 even without a GPU).
    GpuInfo(commands::GpuInfoArgs),
    /// Run encodings on SM90 hardware and compare bit for bit with the reference.
    Run(Box<hmul2_harness::run::RunArgs>),
    /// The device session's ladder: one change a rung from the shape that ran on the GPU (plan), and the road it chooses (verdict).
    Ladder(hmul2_harness::ladder::LadderArgs),
    /// Join shard report folders into one summary.json + junit.xml.
    Merge(hmul2_harness::run::MergeArgs),
    /// Internal: execute jobs from stdin on one device (fault isolation).
    #[command(hide = true)]
    Worker(commands::WorkerArgs),
    /// Patch a seeded batch of runnable encodings into the template kernel (cubin + manifest).
    BuildKernel(hmul2_harness::build_kernel::BuildKernelArgs),
    /// Replay test vectors (JSON Lines) through the software reference.
    Verify(hmul2_harness::verify::VerifyArgs),
    /// What the reference gives for one instruction and its inputs (or fills vector lines' `expect`).
    Eval(hmul2_harness::eval::EvalArgs),
    /// Weigh hardware vectors against each option of semantics.json's assumptions (--write records them).
    Settle(hmul2_harness::settle::SettleArgs),
    /// Regenerate docs/semantics.md's table from harness/spec/semantics.json.
    #[command(hide = true)]
    SemanticsDoc(hmul2_harness::verify::SemanticsDocArgs),
    /// Print a shell completion script (e.g. `hmul2-harness completions bash > /etc/bash_completion.d/hmul2-harness`).
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one per command into --out DIR.
    Man(ManArgs),
}

#[derive(clap::Args)]
struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

#[derive(clap::Args)]
struct ManArgs {
    /// Write hmul2-harness.1 and hmul2-harness-COMMAND.1 for each command into this folder.
    #[arg(long, value_parser = hmul2_harness::cli::path_arg)]
    out: Option<std::path::PathBuf>,
}

/// `completions`: the script for one shell, made from the command definitions.
fn completions(a: CompletionsArgs) -> CliResult {
    use clap::CommandFactory;
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "hmul2-harness", &mut buf);
    hmul2_harness::out!("{}", String::from_utf8_lossy(&buf))?;
    Ok(ExitCode::SUCCESS)
}

/// The roff of one command's man page.
fn man_page(cmd: clap::Command) -> Result<Vec<u8>, hmul2_harness::cli::CliError> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf).map_err(|e| hmul2_harness::cli::CliError::input(format!("man: {e}")))?;
    Ok(buf)
}

/// `man`: the top page on stdout, or every visible command's page into a folder.
fn man(a: ManArgs) -> CliResult {
    use clap::CommandFactory;
    let top = Cli::command();
    let Some(dir) = a.out else {
        hmul2_harness::out!("{}", String::from_utf8_lossy(&man_page(top)?))?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(&dir).map_err(|e| hmul2_harness::cli::CliError::input(format!("{}: {e}", dir.display())))?;
    let mut pages = vec![("hmul2-harness.1".to_string(), man_page(top.clone())?)];
    for sub in top.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = format!("hmul2-harness-{}", sub.get_name());
        pages.push((format!("{name}.1"), man_page(sub.clone().display_name(name.clone()).bin_name(name))?));
    }
    for (file, roff) in &pages {
        let p = dir.join(file);
        hmul2_harness::outfile::write_atomic(&p, roff).map_err(|e| hmul2_harness::cli::CliError::input(format!("{}: {e}", p.display())))?;
    }
    hmul2_harness::errln!("wrote {} man pages into {}", pages.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}

/// What the top `--help` says after the commands: what is built in, where the NVIDIA tools
/// and the cache are found.
fn after_help() -> String {
    format!(
        "Built in: the instruction specs, the semantics table (harness/spec/semantics.json) and the \
reference vectors (vectors/reference); `run` replays a checkout's vectors/ when it runs in one \
(found from the current folder upwards), and any folder with --verify-dir.\n\n\
NVIDIA tools (nvdisasm, ptxas, cuobjdump) are found by one rule: {}.\n\n\
nvdisasm's verdicts are cached in $HMUL2_NVDISASM_CACHE, default $XDG_CACHE_HOME/hmul2-harness/nvdisasm \
or ~/.cache/hmul2-harness/nvdisasm (`off` turns the cache off). A call of a tool that takes \
longer than {} s and {} ms a word is killed as hung ($HMUL2_TOOL_TIMEOUT sets a limit in seconds).",
        hmul2_harness::nvdisasm::TOOL_RULE,
        hmul2_harness::nvdisasm::TOOL_BASE_S,
        hmul2_harness::nvdisasm::TOOL_MS_PER_WORD
    )
}

/// A usage error as one line `error: ...` (clap's own report adds a usage block); help and
/// version are printed as clap prints them.
fn parse_args() -> Result<Cli, ExitCode> {
    use clap::error::ErrorKind;
    Cli::try_parse().map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            hmul2_harness::errln!("error: no subcommand given; `hmul2-harness --help` lists them");
            ExitCode::from(2)
        }
        _ => {
            // clap's message and its hints (possible values, tips), without the usage block
            let text = e.render().to_string();
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            let what = parts.iter().fold(String::new(), |acc, l| match acc.is_empty() {
                true => l.to_string(),
                false if acc.ends_with(':') => format!("{acc} {l}"),
                false => format!("{acc}; {l}"),
            });
            hmul2_harness::errln!("error: {} (see --help)", what.strip_prefix("error:").unwrap_or(&what).trim());
            ExitCode::from(2)
        }
    })
}

fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let result: CliResult = match cli.cmd {
        Cmd::Decode(a) => commands::decode(a),
        Cmd::Encode(a) => commands::encode(a),
        Cmd::Generate(a) => commands::generate(a),
        Cmd::Oracle(a) => commands::oracle(a),
        Cmd::Probe(a) => hmul2_harness::probe::run(a),
        Cmd::Errata(a) => commands::errata(a),
        Cmd::Explain(a) => hmul2_harness::explain::run(a),
        Cmd::Report(a) => hmul2_harness::report::run(a),
        Cmd::GpuInfo(a) => commands::gpu_info(a),
        Cmd::Run(a) => hmul2_harness::run::run(*a),
        Cmd::Ladder(a) => hmul2_harness::ladder::ladder(a),
        Cmd::Merge(a) => hmul2_harness::run::merge(a),
        Cmd::Worker(a) => commands::worker(a),
        Cmd::BuildKernel(a) => hmul2_harness::build_kernel::build_kernel(a),
        Cmd::Verify(a) => hmul2_harness::verify::verify(a),
        Cmd::Eval(a) => hmul2_harness::eval::eval(a),
        Cmd::Settle(a) => hmul2_harness::settle::settle(a),
        Cmd::SemanticsDoc(a) => hmul2_harness::verify::semantics_doc(a),
        Cmd::Completions(a) => completions(a),
        Cmd::Man(a) => man(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            hmul2_harness::errln!("error: {e}");
            ExitCode::from(e.code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `--json` means one thing: print machine-readable output instead of text. It is a switch
    /// wherever it appears, and every command that prints results has it.
    #[test]
    fn json_is_a_switch_for_machine_readable_output_everywhere() {
        let cli = Cli::command();
        let mut with = Vec::new();
        for sub in cli.get_subcommands() {
            for arg in sub.get_arguments().filter(|a| a.get_long() == Some("json")) {
                assert!(!arg.get_action().takes_values(), "{} --json takes a value", sub.get_name());
                with.push(sub.get_name().to_string());
            }
        }
        for name in ["decode", "encode", "explain", "verify", "eval", "gpu-info", "generate"] {
            assert!(with.iter().any(|w| w == name), "{name} has no --json switch");
        }
    }

    /// The command definitions are consistent (clap's own checks: no clashing names, ...).
    #[test]
    fn the_command_definitions_hold_together() {
        Cli::command().debug_assert();
    }
}
