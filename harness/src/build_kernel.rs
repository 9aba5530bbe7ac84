//! `hmul2-harness build-kernel`: a seeded batch of runnable encodings, patched into the template.

use crate::cli::{CliError, CliResult};
use crate::commands::{parse_form, resolve_seed};
use crate::kernel::{encode_and_patch, plan_streamed_for, take_manifest, DrawnAhead};
use crate::outfile::{Durability, Staged};
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
    /// Restrict to one form: rrr, imm, const, constx, ur (HMUL2, HADD2; for HFMA2 and
    /// HFMA2.MMA the special source as operand 2), rrrr, imm-c, const-c, constx-c, ur-c (HFMA2
    /// and HFMA2.MMA: the special source as operand 3), or a spec key such as HFMA2_R_R_R_I_I.
    #[arg(long, value_parser = parse_form)]
    pub form: Option<crate::isa::Form>,
    /// Inputs (threads) per instruction: a multiple of 32, at most 256.
    #[arg(long, default_value_t = 256)]
    pub threads: usize,
    /// The architecture to build for (SM80, SM86, SM89, SM90, SM100, SM120; or sm_86): its
    /// template, helper instructions and parameter offsets. Default SM90 (no GPU is asked).
    /// Another than SM90 takes its own generator's words (docs/runner.md).
    #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE)]
    pub arch: Option<&'static crate::target::Target>,
}

pub use crate::kernel::{runnable_words, runnable_words_of};

/// Bytes of input image handed to the writer at a time, and how many pieces may wait for it.
/// Written pieces come back to be filled again, so the image (17 MB at 4,096 x 256) takes
/// a few pieces' memory; fewer, larger writes wake the writer less often (measured with
/// `build-kernel --count 4096`, best of 12 side by side: 64 KiB pieces, 16 waiting and none
/// reused took 22.3-23.0 ms, these 17.6-18.5 ms).
const INPUT_PIECE: usize = 512 * 1024;
const PIECES_WAITING: usize = 4;

/// A piece of the input image on its way to the file; once written (dropped), its buffer
/// goes back to the planner to be filled again.
struct Piece(Vec<u8>, std::sync::mpsc::Sender<Vec<u8>>);

impl AsRef<[u8]> for Piece {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Piece {
    fn drop(&mut self) {
        // a planner that finished takes no more
        let _ = self.1.send(std::mem::take(&mut self.0));
    }
}

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
    let target = a.arch.unwrap_or(crate::target::Target::DEFAULT);
    let words = crate::kernel::runnable_words_for(target, seed, &ops, form, a.count).map_err(|e| CliError::input(format!("--count {}: {e}", a.count)))?;
    // a template or a batch the patcher cannot build is a setup error (exit 2), not a finding
    let template_err = |e| CliError::input(format!("kernel template {}: {e}", target.template_file));
    let dir = std::path::Path::new(&a.out);
    let make_dir = || std::fs::create_dir_all(dir).map_err(|e| CliError::input(format!("{}: {e}", dir.display())));
    let stage = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        Staged::new(&p, bytes, Durability::Regenerable).map_err(|e| CliError::input(format!("{}: {e}", p.display())))
    };
    // The input image (the largest file) goes to a second thread piece by piece as the
    // planner makes it, written there while the rest is made (not synced: the three files
    // are rebuilt from the arguments, see `Durability::Regenerable`); the manifest is
    // serialized and written on a third while the program is encoded and the cubin written
    // here. The files are renamed into place once all three are written, so a failure
    // leaves none of them half-made.
    let ((manifest, program), cubin_len, staged) = std::thread::scope(|s| -> Result<_, CliError> {
        // the inputs of each case are drawn on a thread of their own a few cases ahead of the
        // planner, the same values as a batch of Cases from random_inputs
        let mut cases = DrawnAhead::start_for(s, target, &words, a.threads, Rng::fork(seed, u64::MAX));
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(PIECES_WAITING);
        // written pieces go back to the planner, to be filled again
        let (back_tx, back_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let input_file = s.spawn(move || -> Option<Result<Staged, CliError>> {
            // nothing comes when the batch is refused: then no folder and no file are made
            let first = rx.recv().ok()?;
            let p = dir.join("input.bin");
            let pieces = std::iter::once(first).chain(rx).map(|v| Piece(v, back_tx.clone()));
            Some(
                make_dir()
                    .and_then(|()| Staged::from_chunks(&p, pieces, Durability::Regenerable).map_err(|e| CliError::input(format!("{}: {e}", p.display())))),
            )
        });
        let mut send = |piece: Vec<u8>| {
            // a writer that stopped (its error is reported below) takes no more
            let _ = tx.send(piece);
            back_rx.try_recv().ok()
        };
        let planned = plan_streamed_for(target, &mut cases, INPUT_PIECE, &mut send);
        drop(tx);
        let join_input = || input_file.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let mut planned = match planned {
            Ok(p) => p,
            Err(e) => {
                let _ = join_input();
                return Err(template_err(e));
            }
        };
        make_dir()?;
        // the manifest is serialized and written on a third thread while the program is
        // encoded and the template patched here
        let manifest = take_manifest(&mut planned);
        let stage = &stage;
        let manifest_file = s.spawn(move || {
            let json = manifest.to_json().map_err(|e| CliError::failed(format!("manifest: {e}")));
            (json.and_then(|m| stage("manifest.json", &m)), manifest)
        });
        let patched =
            encode_and_patch(&planned, &words).map_err(template_err).and_then(|(cubin, program)| Ok((stage("kernel.cubin", &cubin)?, cubin.len(), program)));
        let (manifest_file, manifest) = manifest_file.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let input_file = join_input().unwrap_or_else(|| Err(CliError::failed("input.bin: the planner handed over no input image")));
        let (cubin_file, cubin_len, program) = patched?;
        Ok(((manifest, program), cubin_len, [cubin_file, input_file?, manifest_file?]))
    })?;
    for f in staged {
        let p = f.path().to_path_buf();
        f.commit().map_err(|e| CliError::input(format!("{}: {e}", p.display())))?;
    }
    crate::outln!(
        "{} instructions under test for {target}, {} threads each, {} registers, {} instructions, {} bytes of cubin in {}",
        words.len(),
        a.threads,
        manifest.regcount,
        program.len(),
        cubin_len,
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
