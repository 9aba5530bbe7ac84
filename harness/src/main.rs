//! `hmul2-harness`: generate, disassemble, check and run SM90 packed-half encodings (HMUL2, HADD2, HFMA2, HFMA2.MMA).
//! Each subcommand lives beside the code it drives; this file only dispatches.

use clap::{Parser, Subcommand};
use hmul2_harness::cli::CliResult;
use hmul2_harness::commands;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "hmul2-harness", version, about = "The truth about NVIDIA SM90 HMUL2, bit for bit")]
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
    /// Generate seeded random (or full-factorial) encodings of the family (HMUL2, HADD2, HFMA2, HFMA2.MMA).
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
    /// Fill test vectors' `expect` from the software reference.
    Eval(hmul2_harness::verify::EvalArgs),
    /// Weigh hardware vectors against each option of semantics.json's assumptions (--write records them).
    Settle(hmul2_harness::settle::SettleArgs),
    /// Regenerate docs/semantics.md's table from harness/spec/semantics.json.
    #[command(hide = true)]
    SemanticsDoc(hmul2_harness::verify::SemanticsDocArgs),
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
            eprintln!("error: no subcommand given; `hmul2-harness --help` lists them");
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
            eprintln!("error: {} (see --help)", what.strip_prefix("error:").unwrap_or(&what).trim());
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
        Cmd::Eval(a) => hmul2_harness::verify::eval(a),
        Cmd::Settle(a) => hmul2_harness::settle::settle(a),
        Cmd::SemanticsDoc(a) => hmul2_harness::verify::semantics_doc(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.code)
        }
    }
}
