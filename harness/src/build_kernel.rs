//! `hmul2-harness build-kernel`: a seeded batch of runnable encodings, patched into the template.

use crate::cli::{CliError, CliResult};
use crate::commands::{parse_form, resolve_seed};
use crate::kernel::{build, random_inputs, Case};
use crate::rng::Rng;
use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub struct BuildKernelArgs {
    /// Seed (drawn from the clock and printed when absent).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Instructions under test.
    #[arg(long, default_value_t = 4096)]
    pub count: usize,
    /// Output folder for kernel.cubin and manifest.json.
    #[arg(long, value_parser = crate::cli::path_arg)]
    pub out: std::path::PathBuf,
    /// Instructions, comma-separated nvdisasm mnemonics (HMUL2,HADD2,HFMA2,HFMA2.MMA); default: every one
    /// the reference implements.
    #[arg(long = "instruction", value_parser = crate::commands::parse_ops_arg)]
    pub instruction: Option<crate::commands::OpList>,
    /// Restrict to one form (rrr, imm, const, constx, ur).
    #[arg(long, value_parser = parse_form)]
    pub form: Option<crate::isa::Form>,
    /// Inputs (threads) per instruction: a multiple of 32, at most 256.
    #[arg(long, default_value_t = 256)]
    pub threads: usize,
}

pub use crate::kernel::{runnable_words, runnable_words_of};

pub fn build_kernel(a: BuildKernelArgs) -> CliResult {
    let form = a.form;
    if a.count == 0 {
        return Err(CliError::input("--count must be at least 1"));
    }
    if a.threads == 0 || !a.threads.is_multiple_of(32) || a.threads > crate::kernel::MAX_THREADS {
        return Err(CliError::input("--threads must be a multiple of 32, at most 256"));
    }
    let seed = resolve_seed(a.seed);
    let ops = a.instruction.as_ref().map_or_else(|| crate::reference::IMPLEMENTED.to_vec(), |l| l.0.clone());
    if let Some(op) = ops.iter().find(|o| !crate::reference::IMPLEMENTED.contains(o)) {
        return Err(CliError::input(format!("--instruction {op}: the reference has no arithmetic for it yet, so the kernel does not run it")));
    }
    crate::commands::check_form(&ops, form)?;
    let words = runnable_words_of(seed, &ops, form, a.count).map_err(CliError::input)?;
    let mut rng = Rng::fork(seed, u64::MAX);
    let cases: Vec<Case> = words.iter().map(|&w| Case { word: w, inputs: random_inputs(w, a.threads, &mut rng) }).collect();
    // a template or a batch the patcher cannot build is a setup error (exit 2), not a finding
    let built = build(&cases).map_err(|e| CliError::input(format!("kernel template {}: {e}", "kernels/hmul2_template.sm_90.cubin")))?;
    let dir = std::path::Path::new(&a.out);
    std::fs::create_dir_all(dir).map_err(|e| CliError::input(format!("{}: {e}", dir.display())))?;
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        crate::outfile::write_atomic(&p, bytes).map_err(|e| CliError::input(format!("{}: {e}", p.display())))
    };
    write("kernel.cubin", &built.job.cubin)?;
    write("input.bin", &built.job.input)?;
    let manifest = serde_json::to_vec_pretty(&built.manifest).map_err(|e| CliError::failed(format!("manifest: {e}")))?;
    write("manifest.json", &manifest)?;
    crate::outln!(
        "{} instructions under test, {} threads each, {} registers, {} instructions, {} bytes of cubin in {}",
        cases.len(),
        a.threads,
        built.manifest.regcount,
        built.program.len(),
        built.job.cubin.len(),
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
