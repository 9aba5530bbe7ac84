//! `hmul2-harness run` (the main hardware job) and `merge` (joining shard reports).
//!
//! Flow: items (seeded, sharded by index) → batches → workers, one per device → bit-exact
//! comparison with the reference → journal (per batch) → report folder. Without a usable
//! GPU only the software checks run, and every report says the hardware part did not.

pub use harness_runner::run::{engine, exhaustive, journal, minimize, pipeline, report, vector_out};

use crate::cli::{CliError, CliResult};
use crate::gpu::{self, detect, worker::WorkerExecutor, Executor, FAKE_ENV};
use crate::isa::{format_hex, parse_hex, Form};
use engine::{BatchOutcome, EngineOptions, Observed};
use journal::{BatchRecord, Journal};
use pipeline::Backend;
use report::{Hardware, SoftwareChecks, Summary, Totals};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    Random,
    Factorial,
    Exhaustive,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Random => "random",
            Mode::Factorial => "factorial",
            Mode::Exhaustive => "exhaustive",
        }
    }
}

/// Random and factorial modes: what becomes of each generated word's scheduling bits (the
/// instruction's control field: stall, yield, scoreboards, wait mask, reuse).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ControlBits {
    /// As the generator drew them, all six fields.
    Drawn,
    /// As drawn, except that no scoreboard is set on write or read (`wr_bar` = `rd_bar` = 7,
    /// as ptxas emits these fixed-latency instructions).
    NoBarriers,
    /// Stall 1, no yield, no scoreboards, no wait, no reuse (`Control::default`).
    Fixed,
}

impl ControlBits {
    pub fn name(self) -> &'static str {
        match self {
            ControlBits::Drawn => "drawn",
            ControlBits::NoBarriers => "no-barriers",
            ControlBits::Fixed => "fixed",
        }
    }

    /// `word` with its scheduling bits made what `self` asks. The spec's rules may tie
    /// control bits to modifiers (HADD2's reuse to `.F32`): when the asked bits are illegal
    /// with the word's modifiers, its drawn reuse flags are kept; a word that is still
    /// refused, or that does not decode (an illegal share's), comes back unchanged.
    pub fn apply(self, word: u128) -> u128 {
        self.apply_for(crate::target::Target::DEFAULT, word)
    }

    /// [`ControlBits::apply`] of a word as `target` reads and encodes it.
    pub fn apply_for(self, target: &'static crate::target::Target, word: u128) -> u128 {
        if self == ControlBits::Drawn {
            return word;
        }
        let Ok(inst) = crate::isa::decode_for(target, word) else { return word };
        let want = match self {
            ControlBits::Fixed => crate::isa::Control::default(),
            _ => crate::isa::Control { wr_bar: 7, rd_bar: 7, ..inst.ctrl },
        };
        [want, crate::isa::Control { reuse: inst.ctrl.reuse, ..want }]
            .into_iter()
            .find_map(|ctrl| crate::isa::encode_for(target, &crate::isa::Inst { ctrl, ..inst }).ok())
            .unwrap_or(word)
    }
}

/// `I/N`: this process runs its share of the items (see `owns` and `owns_group`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 0, count: 1 };
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("shard {s:?}: want I/N, e.g. 0/4"))?;
        let (index, count) =
            (i.trim().parse::<u64>().map_err(|e| format!("shard {s:?}: {e}"))?, n.trim().parse::<u64>().map_err(|e| format!("shard {s:?}: {e}"))?);
        if count == 0 || index >= count {
            return Err(format!("shard {s:?}: need 0 <= I < N"));
        }
        Ok(Shard { index, count })
    }
    /// Whether this shard runs instruction item `item` (random or factorial). Items are
    /// dealt by a fixed hash of their index, not by index mod N: factorial items enumerate
    /// modifier values in order, so index mod N would hand a shard one value of a field
    /// only (say, only `.INVALID3` encodings: nothing it could compare).
    pub fn owns(&self, item: u64) -> bool {
        crate::rng::Rng::new(item).next_u64() % self.count == self.index
    }
    /// Whether this shard runs exhaustive chunk group `group`: groups cost the same, so
    /// they are dealt round-robin, index mod N.
    pub fn owns_group(&self, group: u64) -> bool {
        group % self.count == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[derive(clap::Args, Clone)]
pub struct RunArgs {
    /// Seed; drawn from the clock (and printed) when absent.
    #[arg(long)]
    pub seed: Option<u64>,
    /// The architecture to run (SM80, SM86, SM89, SM90, SM100, SM120; or sm_86): default the
    /// GPU's, SM90 without one. One that disagrees with the GPU is an error before any launch.
    /// Another architecture than SM90 runs its own generator's words, read as it reads them
    /// (docs/runner.md, "Architectures").
    #[arg(long, value_parser = crate::commands::parse_arch, value_name = crate::commands::ARCH_VALUE)]
    pub arch: Option<&'static crate::target::Target>,
    /// Random mode: number of instructions (across all shards).
    #[arg(long, default_value_t = 4096)]
    pub count: u64,
    /// Instructions, comma-separated nvdisasm mnemonics (HMUL2,HADD2,HFMA2,HFMA2.MMA); default: every one
    /// the reference implements.
    #[arg(long = "instruction", value_parser = crate::commands::parse_ops_arg)]
    pub instruction: Option<crate::commands::OpList>,
    /// Restrict to one form: rrr, imm, const, constx, ur (HMUL2, HADD2; for HFMA2 and
    /// HFMA2.MMA the special source as operand 2), rrrr, imm-c, const-c, constx-c, ur-c (HFMA2
    /// and HFMA2.MMA: the special source as operand 3), or a spec key such as HFMA2_R_R_R_I_I.
    #[arg(long, value_parser = crate::commands::parse_form)]
    pub form: Option<Form>,
    #[arg(long, value_enum, default_value_t = Mode::Random)]
    pub mode: Mode,
    /// Random and factorial modes: the words' scheduling bits, as drawn, with no scoreboard
    /// set (`no-barriers`), or a fixed safe set (stall 1, nothing else). Exhaustive mode
    /// runs its --encoding as given.
    #[arg(long, value_enum, default_value_t = ControlBits::Drawn)]
    pub control: ControlBits,
    /// Random mode: share (0..1) of words with INVALIDn field values (legal, meaning unknown).
    #[arg(long, default_value_t = 0.0)]
    pub invalid_share: f64,
    /// Random mode: share (0..1) of words nvdisasm rejects, run anyway where the patcher can
    /// place them (fault hunting; no reference value).
    #[arg(long, default_value_t = 0.0)]
    pub illegal_share: f64,
    /// Random mode: share (0..1) of HFMA2 / HFMA2.MMA words kept with modifiers no document
    /// defines (.F32, .OOB, .RELU with a predicate, .SAT with .RELU): the reference has no
    /// value for them, so a GPU run records what the hardware does (for `settle`) and checks
    /// nothing. Three in four uniform draws have one; the others are drawn again.
    #[arg(long, default_value_t = DEFAULT_UNDOCUMENTED_SHARE)]
    pub undocumented_share: f64,
    /// Exhaustive mode: the one instruction to run on every input pair.
    #[arg(long)]
    pub encoding: Option<String>,
    /// How the cases reach the GPU: `batch` (many cases a patched kernel), `single` (one
    /// case a module, 32 threads a launch: the shape that ran on the H200) or `scaffold` (a
    /// kernel ptxas compiled around the instruction, one word rewritten). docs/runner.md,
    /// "Roads onto the GPU".
    #[arg(long, default_value = "batch", value_parser = crate::kernel::road::Road::parse)]
    pub road: crate::kernel::road::Road,
    /// Run exactly the words in FILE (one per line: 0x + 32 hex digits, or SASS text as
    /// nvdisasm prints it; blank lines and `#` comments ignored), nothing drawn: no
    /// --count, --control or placing; a word not runnable on the road is counted and said.
    /// On the scaffold road a word runs on its scaffold's registers and control bits (said
    /// per line, and recorded as the word that ran).
    #[arg(long, value_name = "FILE", value_parser = crate::cli::path_arg)]
    pub words: Option<PathBuf>,
    /// Exhaustive mode, three-source words (HFMA2, HFMA2.MMA): operand 3's value, fixed
    /// while every (a, b) pair is swept: 0x + 8 hex digits (high half first), e.g.
    /// 0x3c00bc00. Needed for such a word; one run a value.
    #[arg(long, value_name = "HEX", value_parser = parse_word32)]
    pub c: Option<u32>,
    /// Register files (input sets) per instruction. The kernel runs one thread each, in
    /// whole warps: a multiple of 32, at most 256, on a GPU, on the emulated driver and
    /// without a GPU alike (the software checks, so the same command runs on a GPU machine);
    /// only the simulated executor (HMUL2_FAKE_EXECUTOR), which runs no kernel, takes any
    /// count from 1. Not used in exhaustive mode (--chunk-bits sizes its launches).
    #[arg(long, default_value_t = 256)]
    pub inputs: usize,
    /// This shard of the work, I/N (items dealt by a fixed hash of their index, exhaustive
    /// chunk groups round-robin; never by timing).
    #[arg(long, default_value = "0/1", value_parser = Shard::parse)]
    pub shard: Shard,
    /// Report folder: summary.json, junit.xml, journal.jsonl.
    #[arg(long, default_value = "run-report", value_parser = crate::cli::path_arg)]
    pub out: PathBuf,
    /// Continue the run journaled in --out.
    #[arg(long)]
    pub resume: bool,
    /// Write every hardware result as vector lines under DIR/hardware/ (a simulated run
    /// writes under DIR/simulated/ with origin `simulated:...`, never as hardware).
    #[arg(long, value_parser = crate::cli::path_arg)]
    pub vectors: Option<PathBuf>,
    /// Results of each instruction written as vectors under --vectors: the first N inputs
    /// (the special values come first) and every mismatching one; `all` for every result.
    #[arg(long, default_value = "all", value_parser = parse_keep)]
    pub vectors_per_instruction: Keep,
    /// Threads preparing and judging batches (inputs, patched cubin, reference, compare),
    /// shared out over the devices; each device runs one launch at a time while its other
    /// threads work [default: the CPUs of this machine].
    #[arg(long)]
    pub host_threads: Option<usize>,
    /// Vectors replayed by the software check [default: the project's `vectors/`, found from
    /// the current folder upwards, else the reference vectors built into this binary].
    #[arg(long, value_parser = crate::cli::path_arg)]
    pub verify_dir: Option<PathBuf>,
    /// Devices: a list of ordinals (0,1,3) or "all" (every SM90 device, one worker each).
    #[arg(long, default_value = "all")]
    pub devices: String,
    /// Instructions per batch (one kernel launch).
    #[arg(long, default_value_t = 256)]
    pub batch: usize,
    /// Seconds a worker may take for one launch before it is killed as hung (fractions
    /// allowed: 0.5).
    #[arg(long, default_value_t = 120.0, value_parser = seconds_arg)]
    pub timeout: f64,
    /// Executions spent minimizing each mismatch (0: off).
    #[arg(long, default_value_t = 64)]
    pub minimize_budget: usize,
    /// The template cubin the kernels are patched into: the one ptxas 13.0 built (which
    /// writes EIATTR_MERCURY_ISA_VERSION), or the same PTX from ptxas 12.9 (which does not).
    #[arg(long, default_value = "13.0", value_parser = crate::kernel::Template::parse)]
    pub template: crate::kernel::Template,
    /// Grow every batch kernel's `.text` by N NOPs after its last instruction (never run; a
    /// multiple of 8): a kernel's size told apart from what it runs (the device ladder).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub pad_nops: usize,
    /// End the run at its first failed launch (a fault, a hang past --timeout, a dead
    /// worker) instead of bisecting the batch: a device session leaves a road that fails at
    /// once for the next one. Results of the batches before it are kept.
    #[arg(long)]
    pub stop_on_launch_failure: bool,
    /// Exit 2 when no usable GPU is found (for jobs that were promised one).
    #[arg(long)]
    pub require_gpu: bool,
    /// Exhaustive mode: log2 of the input space (32 = every pair).
    #[arg(long, default_value_t = 32, hide = true)]
    pub space_bits: u32,
    /// Exhaustive mode: log2 of inputs per digest chunk (at least 8: one block of 256 threads per chunk).
    #[arg(long, default_value_t = 20, hide = true)]
    pub chunk_bits: u32,
    /// The nvdisasm for the oracle check on this run's words and for naming a faulting word
    /// (default: $HMUL2_NVDISASM, else the project's .tools/bin, else PATH; a path given
    /// that names no file is refused before anything runs). `run` uses no other NVIDIA tool:
    /// its kernels come from cubins built into the program.
    #[arg(long, value_name = "PATH", value_parser = crate::cli::path_arg)]
    pub nvdisasm: Option<PathBuf>,
    /// Testing: stop (as if killed) after journaling this many batches.
    #[arg(long, hide = true)]
    pub stop_after_batches: Option<u64>,
    /// Seconds the driver's detection may take [default: --timeout, at least 30].
    #[arg(long, hide = true, value_parser = seconds_arg)]
    pub detect_timeout: Option<f64>,
}

/// Seconds driver detection may take at least (`gpu-info --timeout`'s default): a driver's
/// first `cuInit` can take seconds on a machine of several GPUs.
pub const DETECT_TIMEOUT_S: f64 = 30.0;

/// How many results per instruction become vectors: `None` all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep(pub Option<usize>);

/// `--c`: a packed pair of halves, 0x + 8 hex digits.
fn parse_word32(s: &str) -> Result<u32, String> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).ok_or_else(|| format!("{s:?}: want 0x + 8 hex digits"))?;
    if h.len() != 8 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{s:?}: want 0x + 8 hex digits"));
    }
    u32::from_str_radix(h, 16).map_err(|e| format!("{s:?}: {e}"))
}

fn parse_keep(s: &str) -> Result<Keep, String> {
    if s == "all" {
        return Ok(Keep(None));
    }
    s.parse().map(|n| Keep(Some(n))).map_err(|_| format!("{s:?}: want a number or `all`"))
}

/// One device's executor shared by the host threads that feed it: each launch holds the
/// lock for its own duration only, so building and judging other batches overlaps it.
struct Shared<'a>(&'a std::sync::Mutex<Box<dyn Executor + Send>>);

impl Executor for Shared<'_> {
    fn execute(&mut self, job: &gpu::LaunchJob) -> Result<Vec<u8>, gpu::ExecError> {
        let mut e = self.0.lock().map_err(|_| gpu::ExecError::Setup("a host thread panicked while launching on this device".into()))?;
        e.execute(job)
    }
}

/// UTC time as ISO 8601, without a date crate (civil-from-days, Hinnant).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The instructions a run draws: those named, or every one the reference implements.
pub fn run_ops(a: &RunArgs) -> Vec<crate::isa::Op> {
    a.instruction.as_ref().map_or_else(|| crate::reference::IMPLEMENTED.to_vec(), |l| l.0.clone())
}

/// `--undocumented-share`'s default.
pub const DEFAULT_UNDOCUMENTED_SHARE: f64 = 0.25;

/// Random mode's word of item `i`: the generator's, unless its modifiers have no documented
/// meaning ([`crate::reference::Undefined::Fma`]: HFMA2's `.F32`, `.OOB`, ...) and the
/// item's own coin says it should not (kept for a share `undocumented` of the items); then
/// the first draw of the item's further stream (indices `i + k 2^40`) that has one. Placed
/// where the kernel can fill its special source. Words of the other instructions are the
/// generator's, so their items are the same as before the option existed.
pub fn random_item(o: &crate::gen::GenOptions, i: u64, undocumented: f64) -> u128 {
    let undocumented_modifiers = |w: u128| {
        crate::isa::decode(w).is_ok_and(|inst| matches!(crate::reference::eval(&inst, &Default::default()), Err(crate::reference::Undefined::Fma(_))))
    };
    let mut w = crate::gen::generate_one(o, i);
    if undocumented_modifiers(w) && !crate::rng::Rng::fork(o.seed ^ UNDOCUMENTED_SALT, i).chance(undocumented) {
        for k in 1..64u64 {
            let next = crate::gen::generate_one(o, i.wrapping_add(k << 40));
            if !undocumented_modifiers(next) {
                w = next;
                break;
            }
        }
    }
    crate::kernel::place(w)
}

/// [`random_item`] for `target`: SM90's item as it is; for another target, the target's own
/// generator's item ([`crate::kernel::target_item`]: its forms, fields and ignored bits),
/// placed as the target reads it ([`crate::kernel::place_for`]), the first of the item's
/// draws (indices `i + k 2^48`) the kernel can run there; None when 4096 draws hold none.
/// (`--invalid-share` is the share of items that may hold INVALID values and
/// `--undocumented-share` of those with undocumented modifiers; `--illegal-share` is SM90's
/// generator's only.)
pub fn random_item_for(target: &'static crate::target::Target, o: &crate::gen::GenOptions, i: u64, undocumented: f64) -> Option<u128> {
    if target == crate::target::Target::DEFAULT {
        return Some(random_item(o, i, undocumented));
    }
    // undocumented modifier combinations in the same share as SM90's items ([`random_item`])
    let undocumented_ok = crate::rng::Rng::fork(o.seed ^ UNDOCUMENTED_SALT, i).chance(undocumented);
    let undocumented_modifiers = |w: u128| {
        crate::isa::decode_for(target, w)
            .is_ok_and(|inst| matches!(crate::reference::eval(&inst, &Default::default()), Err(crate::reference::Undefined::Fma(_))))
    };
    (0..4096u64)
        .filter_map(|k| crate::kernel::target_item(target, o.seed, i.wrapping_add(k << 48), &o.ops, o.form, o.invalid_share).ok())
        .map(|w| crate::kernel::place_for(target, w))
        .find(|&w| crate::kernel::runnable_for(target, w).is_ok() && (undocumented_ok || !undocumented_modifiers(w)))
}

/// The stream of [`random_item`]'s coins.
const UNDOCUMENTED_SALT: u64 = 0x0dd0_c0de_5a17_0001;

/// The items of a run (index, word); random items outside the shard are not generated
/// (the caller still filters every mode by shard).
pub fn all_items(a: &RunArgs, seed: u64) -> Result<Vec<(u64, u128)>, CliError> {
    all_items_for(a, seed, a.arch.unwrap_or(crate::target::Target::DEFAULT))
}

/// [`all_items`] of a run on `target`: another target than SM90 draws only words it prints
/// as SM90 does (`--words` are given as they are; the backend counts the others as not
/// runnable there).
pub fn all_items_for(a: &RunArgs, seed: u64, target: &'static crate::target::Target) -> Result<Vec<(u64, u128)>, CliError> {
    if let Some(f) = &a.words {
        return Ok(read_words(f)?.into_iter().enumerate().map(|(i, (_, w))| (i as u64, a.road.fit_for(target, w))).collect());
    }
    Ok(match a.mode {
        Mode::Random => {
            let o = crate::gen::GenOptions {
                form: a.form,
                invalid_share: a.invalid_share,
                illegal_share: a.illegal_share,
                ..crate::gen::GenOptions::legal_of(seed, &run_ops(a))
            };
            // room for about this shard's share (items are dealt by a hash of their index)
            let mut items = crate::cli::vec_for("--count", a.count.div_ceil(a.shard.count))?;
            for i in (0..a.count).filter(|&i| a.shard.owns(i)) {
                let w = random_item_for(target, &o, i, a.undocumented_share)
                    .ok_or_else(|| CliError::input(format!("--arch {target}: item {i} drew no word the kernel can run on {target}")))?;
                items.push((i, a.road.fit_for(target, a.control.apply_for(target, w))));
            }
            items
        }
        Mode::Factorial => {
            let forms: Vec<Form> = a.form.map(|f| vec![f]).unwrap_or_else(|| Form::ALL.to_vec());
            let mut words = Vec::new();
            for (op, f) in run_ops(a).into_iter().flat_map(|o| forms.iter().filter(move |&&f| o.has_form(f)).map(move |&f| (o, f))) {
                for i in crate::gen::factorial(op, f, seed) {
                    // another target encodes the instructions it has (its bits), and skips the rest
                    let w = match crate::isa::encode_for(target, &i) {
                        Ok(w) => w,
                        Err(_) if target != crate::target::Target::DEFAULT => continue,
                        Err(e) => return Err(CliError::input(format!("factorial {f}: {e}"))),
                    };
                    words.push(a.road.fit_for(target, a.control.apply_for(target, crate::kernel::place_for(target, w))));
                }
            }
            words.into_iter().enumerate().map(|(i, w)| (i as u64, w)).collect()
        }
        Mode::Exhaustive => Vec::new(),
    })
}

/// `--words FILE`: its words with their line numbers. A line is `0x` + 32 hex digits or
/// an instruction's text (the parser's: control bits other than reuse are the default);
/// what follows a `#` is a comment. A bad line is an error naming FILE:LINE.
pub fn read_words(path: &Path) -> Result<Vec<(usize, u128)>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::input(format!("--words {}: {e}", path.display())))?;
    let mut words = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let at = || format!("--words {}:{}", path.display(), k + 1);
        let w = if l.starts_with("0x") || l.starts_with("0X") {
            parse_hex(l).map_err(|e| CliError::input(format!("{}: {l:?}: {e}", at())))?
        } else {
            let inst = crate::isa::parse(l).map_err(|e| CliError::input(format!("{}: {e}", at())))?;
            crate::isa::encode(&inst).map_err(|e| CliError::input(format!("{}: {l:?}: {e}", at())))?
        };
        words.push((k + 1, w));
    }
    if words.is_empty() {
        return Err(CliError::input(format!("--words {}: no word in it; a run of nothing checks nothing", path.display())));
    }
    Ok(words)
}

/// A short digest of a word list (FNV-1a over the words' bytes): the journal's identity
/// of a `--words` run, so that a resume with another file is refused.
fn words_digest(words: &[(u64, u128)]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (_, w) in words {
        for b in w.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Register files one launch may carry (16 bytes each in its input): far below the worker
/// protocol's 1 GiB frame.
pub const MAX_INPUTS_PER_LAUNCH: usize = 1 << 24;
/// Host threads at most (each holds a batch while it builds and judges it).
pub const MAX_HOST_THREADS: usize = 1024;

/// `--devices`: `all` (None) or a list of distinct device ordinals.
pub fn parse_devices(s: &str) -> Result<Option<Vec<i32>>, CliError> {
    if s == "all" {
        return Ok(None);
    }
    let mut v = Vec::new();
    for d in s.split(',') {
        let n: i32 = d.trim().parse().map_err(|e| CliError::input(format!("--devices {s:?}: {d:?}: {e}")))?;
        if n < 0 || v.contains(&n) {
            return Err(CliError::input(format!("--devices {s:?}: {n} is negative or repeated; want `all` or distinct ordinals, e.g. 0,1")));
        }
        v.push(n);
    }
    Ok(Some(v))
}

/// The options checked before anything is created or run; each error names its option.
fn check_options(a: &RunArgs) -> Result<(), CliError> {
    crate::commands::check_form(&run_ops(a), a.form)?;
    for op in run_ops(a) {
        if !crate::reference::IMPLEMENTED.contains(&op) {
            return Err(CliError::input(format!("--instruction {op}: the reference has no arithmetic for it yet, so nothing could be checked")));
        }
    }
    if a.words.is_some() && a.mode != Mode::Random {
        return Err(CliError::input(format!("--words: runs the words given; --mode {} draws its own", a.mode.name())));
    }
    if a.words.is_some() {
        // options that choose what is drawn would be ignored: refused, not silently dropped
        let drawing = [
            ("--form", a.form.is_some()),
            ("--instruction", a.instruction.is_some()),
            ("--invalid-share", a.invalid_share != 0.0),
            ("--illegal-share", a.illegal_share != 0.0),
            ("--control", a.control != ControlBits::Drawn),
        ];
        if let Some((name, _)) = drawing.iter().find(|(_, given)| *given) {
            return Err(CliError::input(format!("{name}: chooses what a run draws; --words runs the words given, as given")));
        }
    }
    if a.mode == Mode::Exhaustive && a.road != crate::kernel::road::Road::Batch {
        return Err(CliError::input(format!("--road {}: exhaustive mode runs the digest kernel, the batch road's; use --road batch", a.road)));
    }
    if a.road == crate::kernel::road::Road::Scaffold && a.control != ControlBits::Drawn {
        return Err(CliError::input(format!(
            "--control {}: the scaffold road runs every word with its scaffold's control bits (ptxas's), so no other setting could hold",
            a.control.name()
        )));
    }
    if a.road != crate::kernel::road::Road::Batch && std::env::var_os(FAKE_ENV).is_some() {
        return Err(CliError::input(format!(
            "--road {}: the simulated executor ({FAKE_ENV}) runs no kernel, so no road but batch means anything there; use the emulated driver (harness/fake-cuda)",
            a.road
        )));
    }
    if a.mode == Mode::Exhaustive {
        let enc = a.encoding.as_deref().ok_or_else(|| CliError::input("--mode exhaustive needs --encoding HEX"))?;
        let word = parse_hex(enc).map_err(|e| CliError::input(format!("--encoding {enc:?}: {e}")))?;
        let inst = crate::isa::decode(word).map_err(|e| CliError::input(format!("--encoding {enc}: illegal: {e}")))?;
        if !crate::reference::IMPLEMENTED.contains(&inst.op) {
            return Err(CliError::input(format!("--encoding {enc}: {}: the reference has no arithmetic for it yet, so nothing could be checked", inst.op)));
        }
        // a word whose operand 2 is not per thread cannot be swept: refused before anything is written
        crate::kernel::digest::check_form(word).map_err(|e| CliError::input(format!("--encoding {enc}: {e}")))?;
        match (inst.c.is_some(), a.c) {
            (true, None) => {
                return Err(CliError::input(format!(
                    "--encoding {enc}: {} has a third source (2^48 inputs): give its value with --c HEX (every (a, b) pair is swept for that c)",
                    inst.op
                )))
            }
            (false, Some(_)) => return Err(CliError::input(format!("--c: {} has no third source", inst.op))),
            _ => {}
        }
    } else if a.c.is_some() {
        return Err(CliError::input("--c is for --mode exhaustive with a three-source word"));
    }
    if a.mode == Mode::Exhaustive {
        // a fetched chunk is one ordinary launch of 2^chunk_bits inputs
        if a.space_bits > 32
            || a.chunk_bits > a.space_bits
            || a.chunk_bits < exhaustive::THREADS.trailing_zeros()
            || 1usize << a.chunk_bits > MAX_INPUTS_PER_LAUNCH
        {
            return Err(CliError::input(format!(
                "--space-bits {} --chunk-bits {}: need 8 <= chunk bits <= space bits <= 32, and chunk bits <= 24 (a chunk gives each of a block's 256 threads an input, and a fetched chunk is one launch)",
                a.space_bits, a.chunk_bits
            )));
        }
    } else if a.inputs.checked_mul(a.batch).is_none_or(|n| n > MAX_INPUTS_PER_LAUNCH) {
        return Err(CliError::input(format!("--inputs {} x --batch {}: more than {MAX_INPUTS_PER_LAUNCH} register files in one launch", a.inputs, a.batch)));
    }
    if let Some(n) = a.host_threads.filter(|&n| n > MAX_HOST_THREADS) {
        return Err(CliError::input(format!("--host-threads {n}: at most {MAX_HOST_THREADS}")));
    }
    parse_devices(&a.devices)?;
    if let Some(d) = a.verify_dir.as_ref().filter(|d| !d.exists()) {
        return Err(CliError::input(format!("--verify-dir {}: no such file or folder", d.display())));
    }
    Ok(())
}

/// The journal's header: everything that decides which items exist and what they hold.
fn config_json(a: &RunArgs, seed: u64, items: &[(u64, u128)]) -> serde_json::Value {
    let mut c = serde_json::json!({
        "seed": seed, "mode": a.mode.name(), "form": a.form.map(|f| f.cli_name()),
        "instruction": run_ops(a).iter().map(|o| o.mnemonic()).collect::<Vec<_>>(), "count": a.count,
        "inputs": a.inputs, "shard": a.shard.to_string(), "encoding": a.encoding, "c": a.c,
        "space_bits": a.space_bits, "chunk_bits": a.chunk_bits,
        "invalid_share": a.invalid_share, "illegal_share": a.illegal_share, "undocumented_share": a.undocumented_share,
    });
    // only when asked for, so that the journals of runs before the option resume as before
    if a.control != ControlBits::Drawn {
        c["control"] = a.control.name().into();
    }
    if a.pad_nops != 0 {
        c["pad_nops"] = a.pad_nops.into();
    }
    if a.template != crate::kernel::Template::default() {
        c["template"] = a.template.name().into();
    }
    if a.road != crate::kernel::road::Road::Batch {
        c["road"] = a.road.name().into();
    }
    // the architecture, where not SM90's: a resume or merge refuses a run of another
    if let Some(t) = a.arch.filter(|&t| t != crate::target::Target::DEFAULT) {
        c["arch"] = t.nvdisasm.into();
    }
    if let Some(f) = &a.words {
        c["words"] = serde_json::json!({"file": f.display().to_string(), "count": items.len(), "fnv64": words_digest(items)});
    }
    c
}

/// The hardware side: which devices, and what executes a job on each.
enum Hw {
    Real { det: detect::Detection, devices: Vec<i32>, target: &'static crate::target::Target },
    Simulated(String),
    None(String),
}

fn choose_hardware(a: &RunArgs) -> Result<Hw, CliError> {
    if let Ok(spec) = std::env::var(FAKE_ENV) {
        gpu::fake::FakeExecutor::parse(&spec).map_err(CliError::input)?;
        let n = if a.devices == "all" { 1 } else { a.devices.split(',').count().max(1) };
        return Ok(Hw::Simulated(format!("simulated executor ({FAKE_ENV}={spec}), {n} worker(s); no hardware was used")));
    }
    // in a child with a limit, like a launch: a driver that hangs or crashes is a problem
    // found, never a run that hangs or dies
    let exe = std::env::current_exe().map_err(|e| CliError::input(format!("cannot find this program to detect the driver: {e}")))?;
    let det = detect::detect_in_worker(&exe, Duration::from_secs_f64(a.detect_timeout.unwrap_or(a.timeout.max(DETECT_TIMEOUT_S))), &[]);
    if let Some(p) = &det.problem {
        return Ok(Hw::None(p.clone()));
    }
    let usable = det.usable();
    let devices: Vec<i32> = if a.devices == "all" {
        usable.clone()
    } else {
        let mut v = Vec::new();
        for s in a.devices.split(',') {
            let d: i32 = s.trim().parse().map_err(|e| CliError::input(format!("--devices {:?}: {e}", a.devices)))?;
            if !usable.contains(&d) {
                return Err(CliError::input(format!("--devices: device {d} is not a usable device (usable: {usable:?})")));
            }
            v.push(d);
        }
        v
    };
    let target = devices_target(a.arch, &det, &devices)?;
    Ok(Hw::Real { det, devices, target })
}

/// The architecture of a run on `devices`: `--arch` where given, which every device must
/// be (refused before any launch), else the devices' own (which must agree).
fn devices_target(arch: Option<&'static crate::target::Target>, det: &detect::Detection, devices: &[i32]) -> Result<&'static crate::target::Target, CliError> {
    let mut found: Option<&'static crate::target::Target> = None;
    for d in det.devices.iter().filter(|d| devices.contains(&d.ordinal)) {
        let Some(t) = d.target() else { continue };
        if let Some(want) = arch.filter(|&w| w != t) {
            return Err(CliError::input(format!(
                "--arch {want}: device {} ({}) is {t} (compute capability {}); run {t}'s code there, or choose a device of {want} with --devices",
                d.ordinal, d.name, d.compute_capability
            )));
        }
        match found {
            Some(f) if f != t => {
                return Err(CliError::input(format!(
                    "--devices: the devices are of several architectures ({f} and {t}); choose devices of one with --devices"
                )));
            }
            _ => found = Some(t),
        }
    }
    Ok(arch.or(found).unwrap_or(crate::target::Target::DEFAULT))
}

impl Hw {
    /// The architecture the run's kernels are built for.
    fn target(&self, a: &RunArgs) -> &'static crate::target::Target {
        match self {
            Hw::Real { target, .. } => target,
            _ => a.arch.unwrap_or(crate::target::Target::DEFAULT),
        }
    }
}

/// What a run on a target other than SM90 cannot do yet, refused before anything runs.
fn check_target(a: &RunArgs, target: &'static crate::target::Target) -> Result<(), CliError> {
    if target == crate::target::Target::DEFAULT {
        return Ok(());
    }
    if let Some(w) = a.encoding.as_deref().and_then(|e| parse_hex(e).ok()).filter(|&w| a.mode == Mode::Exhaustive && !crate::kernel::reads_as_sm90(target, w)) {
        return Err(CliError::input(format!(
            "--encoding {}: exhaustive mode's digests read a word as SM90 does, and {target} reads this one otherwise (or not at all)",
            format_hex(w)
        )));
    }
    if a.words.is_none() {
        let ops = run_ops(a);
        if !ops.iter().any(|op| op.forms_for(target).any(|f| a.form.is_none_or(|want| f == want))) {
            let names: Vec<String> = ops.iter().map(|o| o.to_string()).collect();
            return Err(CliError::input(match a.form {
                Some(f) => format!("--form {}: {target} has no such form of {}", f.cli_name(), names.join(", ")),
                None => format!("--instruction {}: {target} has no {}", names.join(","), names.join(" or ")),
            }));
        }
    }
    Ok(())
}

fn worker_ordinals(a: &RunArgs, hw: &Hw) -> Vec<i32> {
    match hw {
        Hw::Real { devices, .. } => devices.clone(),
        _ if a.devices == "all" => vec![0],
        _ => a.devices.split(',').enumerate().map(|(i, _)| i as i32).collect(),
    }
}

/// The vectors the software check replays: the nearest `vectors/` holding `reference/`, from
/// the current folder upwards (a checkout's, which may hold more than the binary knows),
/// else the reference vectors built into the binary.
fn project_vectors() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    cwd.ancestors().map(|d| d.join("vectors")).find(|v| v.join("reference").is_dir()).unwrap_or_else(|| PathBuf::from(crate::vectors::BUILTIN_DIR))
}

/// A run without hardware: say so plainly, run the software checks, write the report
/// (`--require-gpu` makes it an error instead).
fn software_only(a: &RunArgs, words: &[u128], mut base: Summary, why: String) -> CliResult {
    // the reason is the summary's `hardware:` line, once
    crate::outln!("no usable GPU: running the software checks only")?;
    if a.require_gpu {
        return Err(CliError::input(format!("--require-gpu: {why}")));
    }
    base.hardware.reason = Some(why);
    base.software_checks = software_checks(a, &base.arch, words);
    base.finished = utc_now();
    let code = finish(&a.out, &base, None)?;
    if let Some(why) = tool_error(&base) {
        return Err(CliError::input(why));
    }
    Ok(code)
}

/// The software-only checks: vector replay and the nvdisasm oracle on this run's words.
/// The oracle judges the words as the run's architecture (`arch`, nvdisasm's spelling) reads them.
fn software_checks(a: &RunArgs, arch: &str, words: &[u128]) -> SoftwareChecks {
    let target = crate::target::Target::parse(arch).unwrap_or(crate::target::Target::DEFAULT);
    let dir = a.verify_dir.clone().unwrap_or_else(project_vectors);
    let verify = pipeline::verify_vectors(&dir);
    let oracle = match crate::nvdisasm::Nvdisasm::locate(a.nvdisasm.as_deref()).map(|nv| nv.for_target(target)) {
        Err(e) => serde_json::json!({"ran": false, "reason": format!("nvdisasm not available: {e}")}),
        Ok(nv) => match crate::oracle::compare(&nv, words) {
            Ok(r) => serde_json::json!({"ran": true, "ok": r.ok(), "words": r.words, "agreed_text": r.agreed_text,
                "agreed_illegal": r.agreed_illegal, "mismatches": r.mismatches.len(), "nvdisasm_calls": r.nvdisasm_calls,
                "cached": r.cached, "cache": nv.cache.as_ref().map(|c| c.dir().display().to_string()),
                "first_mismatch": r.mismatches.first().map(|m| m.to_string()), "nvdisasm": nv.version().ok()}),
            // the tool failed (hung, crashed): no word was judged; `record` makes it exit 2
            Err(e) => serde_json::json!({"ran": true, "ok": false, "reason": e.to_string(), "tool_error": true}),
        },
    };
    SoftwareChecks { verify: Some(verify), oracle: Some(oracle) }
}

/// Summary of journaled batches (a count that overflows is a corrupt journal).
fn summarize(records: &[BatchRecord], mut base: Summary) -> Result<Summary, CliError> {
    let mut totals = Totals::default();
    let mut by_form: BTreeMap<String, Totals> = BTreeMap::new();
    let over = |e: report::Overflow| CliError::input(format!("journal: corrupt: {e} in the sum of its batches"));
    for r in records {
        for it in &r.items {
            totals.add(&it.totals).map_err(over)?;
            by_form.entry(it.form.clone()).or_default().add(&it.totals).map_err(over)?;
        }
        for f in &r.findings {
            if f.kind == report::FindingKind::Mismatch {
                base.mismatches.push(f.clone());
            } else {
                base.faults.push(f.clone());
            }
        }
    }
    base.totals = totals;
    base.by_form = by_form;
    base.canonicalize();
    Ok(base)
}

/// `summary.json` and `junit.xml`, both or neither, never through a link.
pub fn write_report(out: &Path, s: &Summary) -> Result<(), CliError> {
    let (sp, jp) = (out.join("summary.json"), out.join("junit.xml"));
    let summary = serde_json::to_string_pretty(s).unwrap_or_default() + "\n";
    let junit = report::junit(s);
    crate::outfile::write_all_or_none(&[(&sp, summary.as_bytes()), (&jp, junit.as_bytes())]).map_err(|e| CliError::input(format!("{}: {e}", out.display())))
}

/// Exit status for a finished summary: 1 on any mismatch, fault or failed software check.
/// `incomplete`: why this report is not the whole run (a merge with shards missing): it is
/// written and printed, but ends in that error, never in PASSED.
fn finish(out: &Path, s: &Summary, incomplete: Option<String>) -> CliResult {
    write_report(out, s)?;
    crate::out!("{}", s.table())?;
    for (name, c) in [("verify", &s.software_checks.verify), ("oracle", &s.software_checks.oracle)] {
        let v = c.as_ref().map(|v| v.to_string()).unwrap_or_default();
        let line = match (report::CheckState::of(c), c) {
            (report::CheckState::NotRun, None) => "not run".to_string(),
            (report::CheckState::NotRun, Some(_)) => format!("did not run ({})", report::not_run_reason(c)),
            (report::CheckState::Failed, _) => format!("FAILED {v}"),
            (report::CheckState::Passed, Some(c)) => format!("passed: {}", passed_detail(name, c)),
            (report::CheckState::Passed, None) => "passed".to_string(),
        };
        crate::outln!("software check {name}: {line}")?;
    }
    for f in s.mismatches.iter().chain(&s.faults).take(20) {
        crate::outln!(
            "{} {} {}  expected {} got {}  {}{}",
            f.kind,
            f.encoding,
            f.text,
            f.expected.as_deref().unwrap_or("-"),
            f.got.as_deref().unwrap_or("-"),
            f.detail,
            f.minimized_text.as_deref().map(|m| format!("  minimized: {} {m}", f.minimized.as_deref().unwrap_or(""))).unwrap_or_default()
        )?;
    }
    if let Some(t) = &s.timing {
        crate::outln!(
            "timing: {} results compared in {:.2} s ({:.2} M/s{}); software checks {:.2} s",
            t.compared,
            t.execute_s,
            t.compared_per_s / 1e6,
            if s.hardware.used { "" } else { ", simulated: not a hardware rate" },
            t.software_checks_s
        )?;
    }
    crate::outln!("report: {}", out.display())?;
    if !s.hardware_clean() {
        crate::outln!("FAILED: {} mismatching executions, {} faults", s.totals.mismatches, s.totals.faults)?;
        return Ok(ExitCode::from(1));
    }
    if (s.hardware.used || s.hardware.simulated) && s.totals.instructions > 0 && s.totals.compared == 0 {
        crate::outln!("FAILED: {} instructions but not one result was compared (all skipped or undefined)", s.totals.instructions)?;
        return Ok(ExitCode::from(1));
    }
    if !s.software_ok() {
        crate::outln!("FAILED: a software check failed (see summary.json software_checks)")?;
        return Ok(ExitCode::from(1));
    }
    if let Some(why) = incomplete {
        return Err(CliError::input(why));
    }
    crate::outln!("{}", verdict(s))?;
    Ok(ExitCode::SUCCESS)
}

/// A passed software check in words (its details are in summary.json's `software_checks`);
/// a count the record lacks (an older or merged summary) is left out.
fn passed_detail(name: &str, c: &serde_json::Value) -> String {
    let n = |k: &str| c.get(k).and_then(|v| v.as_u64());
    let mut parts = Vec::new();
    if name == "verify" {
        let dir = c.get("dir").and_then(|d| d.as_str()).unwrap_or("the vectors");
        if let (Some(v), Some(p)) = (n("vectors"), n("pass")) {
            parts.push(format!("{v} vectors in {dir} replayed through the reference, {p} agree"));
        }
        if let Some(u) = n("undefined").filter(|&u| u > 0) {
            parts.push(format!("{u} undefined"));
        }
    } else {
        if let (Some(w), Some(t), Some(i)) = (n("words"), n("agreed_text"), n("agreed_illegal")) {
            parts.push(format!("{w} words: nvdisasm prints the decoder's text for {t} and rejects the {i} the decoder calls illegal"));
        }
        if let Some(v) = c.get("nvdisasm").and_then(|v| v.as_str()) {
            parts.push(format!("nvdisasm {}", v.trim_start_matches("Cuda compilation tools, ")));
        }
        if let (Some(calls), Some(cached)) = (n("nvdisasm_calls"), n("cached")) {
            parts.push(format!("{calls} nvdisasm calls, {cached} verdicts from its cache"));
        }
    }
    if let Some(f) = c.get("from").and_then(|f| f.as_str()) {
        parts.push(format!("from {f}"));
    }
    if parts.is_empty() {
        "see summary.json software_checks".to_string()
    } else {
        parts.join("; ")
    }
}

/// The last line of a run that passed: what was observed, and what was not.
fn verdict(s: &Summary) -> String {
    let skipped: Vec<&str> = [("verify", &s.software_checks.verify), ("oracle", &s.software_checks.oracle)]
        .into_iter()
        .filter(|(_, c)| report::CheckState::of(c) == report::CheckState::NotRun)
        .map(|(name, _)| name)
        .collect();
    let checks = if skipped.is_empty() {
        "software checks passed".to_string()
    } else {
        format!("software checks passed, except {} which did not run", skipped.join(" and "))
    };
    let reason = s.hardware.reason.as_deref().unwrap_or("no reason recorded");
    if s.hardware.used {
        let gpu = s.hardware.gpu.as_deref().unwrap_or("the GPU");
        format!("PASSED: {} results of {} instructions compared bit for bit on {gpu}, none differs; {checks}", s.totals.compared, s.totals.instructions)
    } else if s.hardware.simulated {
        format!("PASSED (simulated, not hardware: {reason}): {} results compared; {checks}", s.totals.compared)
    } else {
        format!("PASSED: {checks}; the hardware part did not run ({reason})")
    }
}

/// `--timeout`: a positive, finite number of seconds (fractions allowed).
pub fn seconds_arg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e9 => Ok(v),
        Ok(_) => Err(format!("{s:?}: expected a positive number of seconds")),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

/// A worker on `device`; `arch`: the architecture its device must be (a GPU run's).
fn make_executor(exe: &Path, device: i32, timeout: f64, arch: Option<&'static crate::target::Target>) -> Box<dyn Executor + Send> {
    let mut w = WorkerExecutor::new(exe.to_path_buf(), device, Duration::from_secs_f64(timeout));
    if let Some(t) = arch {
        w = w.with_arch(t);
    }
    if let Ok(spec) = std::env::var(FAKE_ENV) {
        w = w.with_env(FAKE_ENV, &spec);
    }
    Box::new(w)
}

/// The signal that asked the run to stop (SIGINT, SIGTERM); 0 while none has.
static INTERRUPTED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // a second signal means "now": everything obtained is already journaled
    if INTERRUPTED.swap(sig, std::sync::atomic::Ordering::SeqCst) != 0 {
        // SAFETY: _exit is async-signal-safe
        unsafe { libc::_exit(128 + sig) }
    }
}

/// From here on SIGINT and SIGTERM ask the run to stop cleanly (a second one ends it at once).
fn catch_signals() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic or calls _exit
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

fn interrupted() -> Option<i32> {
    Some(INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)).filter(|&s| s != 0)
}

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// What a run will do, decided before anything is created: options checked, items dealt to
/// this shard, hardware chosen, the summary's fixed part filled in.
struct Plan {
    seed: u64,
    /// This shard's items (index, word); empty in exhaustive mode.
    items: Vec<(u64, u128)>,
    /// The words the software checks judge.
    words: Vec<u128>,
    hw: Hw,
    base: Summary,
}

fn plan(a: &RunArgs) -> Result<Plan, CliError> {
    // resuming without --seed continues the journaled run's seed
    let journaled_seed = if a.resume && a.seed.is_none() { journal::header_seed(&a.out.join("journal.jsonl")) } else { None };
    let seed = crate::commands::resolve_seed(a.seed.or(journaled_seed));
    for (name, v) in [("invalid-share", a.invalid_share), ("illegal-share", a.illegal_share), ("undocumented-share", a.undocumented_share)] {
        if !(0.0..=1.0).contains(&v) {
            return Err(CliError::input(format!("--{name} {v} is outside 0..1")));
        }
    }
    if a.inputs == 0 || a.batch == 0 {
        return Err(CliError::input("--inputs and --batch must be at least 1"));
    }
    check_options(a)?;
    if let Some(p) = &a.nvdisasm {
        crate::nvdisasm::locate_tool("nvdisasm", Some(p)).map_err(|e| CliError::input(e.to_string()))?;
    }
    // the batch kernel runs one thread per input set, in whole warps, one block per
    // instruction; refused here, not discovered as a build failure blamed on every
    // instruction. Also without a GPU, before the driver is asked: the same command would
    // fail on the machine that has one. Only the simulated executor, which runs no kernel,
    // takes any count.
    let threads_ok = a.inputs.is_multiple_of(engine::MIN_THREADS) && a.inputs <= crate::kernel::MAX_THREADS;
    if std::env::var_os(FAKE_ENV).is_none() && a.mode != Mode::Exhaustive && !threads_ok {
        return Err(CliError::input(format!(
            "--inputs {}: the kernel runs one thread per input set, in whole warps: a multiple of {}, at most {} (only the simulated executor, {FAKE_ENV}, takes other counts)",
            a.inputs,
            engine::MIN_THREADS,
            crate::kernel::MAX_THREADS
        )));
    }
    let hw = choose_hardware(a)?;
    let target = hw.target(a);
    check_target(a, target)?;
    let all = all_items_for(a, seed, target)?;
    if let Some(f) = &a.words {
        // said before anything runs: a word the road cannot run is counted, never run as another
        let lines = read_words(f)?;
        for &(line, w) in &lines {
            let run_as = a.road.fit_for(target, w);
            if let Err(why) = a.road.runnable_for(target, run_as) {
                crate::outln!("--words {}:{line}: {} not runnable on the {} road: {why}", f.display(), format_hex(w), a.road)?;
            } else if run_as != w {
                crate::outln!(
                    "--words {}:{line}: {} runs as {} on the {} road (its scaffold's registers, predicate and control bits)",
                    f.display(),
                    format_hex(w),
                    format_hex(run_as),
                    a.road
                )?;
            }
        }
    }
    let mut config = config_json(a, seed, &all);
    if target != crate::target::Target::DEFAULT {
        // the GPU's architecture, where --arch did not name it
        config["arch"] = target.nvdisasm.into();
    }
    let items: Vec<(u64, u128)> = all.into_iter().filter(|(i, _)| a.shard.owns(*i)).collect();
    let (words, planned) = if a.mode == Mode::Exhaustive {
        let word = a.encoding.as_deref().and_then(|e| parse_hex(e).ok());
        (word.into_iter().collect::<Vec<_>>(), exhaustive_groups(a).filter(|g| a.shard.owns_group(*g)).count() as u64)
    } else {
        (items.iter().map(|x| x.1).collect(), items.len() as u64)
    };
    // a run of nothing would pass vacuously
    if planned == 0 {
        let what = match a.mode {
            Mode::Exhaustive => format!("none of the {} chunk groups", exhaustive_groups(a).count()),
            _ if a.count == 0 && a.mode == Mode::Random => "--count 0: no instruction".to_string(),
            // random items are dealt to shards as they are drawn: the whole run has --count
            Mode::Random => format!("none of the {} instructions", a.count),
            _ => format!("none of the {} instructions", all_items_for(a, seed, target)?.len()),
        };
        return Err(CliError::input(format!("shard {}: {what} to run; a run of nothing checks nothing", a.shard)));
    }
    let coverage = Some(crate::gen::Coverage::of(&words));
    let base = Summary {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        seed,
        shard: a.shard.to_string(),
        status: report::RunStatus::Complete,
        planned: Some(planned),
        mode: if a.words.is_some() { "words".to_string() } else { a.mode.name().to_string() },
        road: Some(a.road.name().to_string()),
        arch: target.nvdisasm.to_string(),
        started: utc_now(),
        finished: String::new(),
        hardware: Hardware::default(),
        totals: Totals::default(),
        by_form: BTreeMap::new(),
        mismatches: Vec::new(),
        faults: Vec::new(),
        software_checks: SoftwareChecks { verify: None, oracle: None },
        coverage,
        timing: None,
        config: Some(config),
    };
    Ok(Plan { seed, items, words, hw, base })
}

/// The exhaustive chunk groups of the whole run (every shard's).
fn exhaustive_groups(a: &RunArgs) -> std::ops::Range<u64> {
    0..1u64 << (a.space_bits - a.chunk_bits).saturating_sub(exhaustive_group_bits(a))
}

/// The run's vector file: made by this run (its name says which run, and no other run
/// opens it), appended batch by batch, each batch synced and checksummed before it is
/// journaled, and locked (`flock`) for the run's life.
struct VectorSink {
    file: std::fs::File,
    path: PathBuf,
    name: String,
    len: u64,
}

/// Bytes read at a time when a resume verifies a vector file.
const VERIFY_BLOCK: usize = 1 << 20;

impl VectorSink {
    fn err(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
        move |e| CliError::input(format!("{}: {e}", path.display()))
    }

    fn locked(file: std::fs::File, path: PathBuf, len: u64) -> Result<VectorSink, CliError> {
        crate::outfile::lock_file(&file).map_err(|e| match e {
            None => CliError::input(format!("{}: another run is writing this vector file", path.display())),
            Some(e) => CliError::input(format!("{}: cannot lock: {e}", path.display())),
        })?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(VectorSink { file, path, name, len })
    }

    /// A new run's file: created here; one that exists belongs to another run and is
    /// never written.
    fn create(path: PathBuf) -> Result<VectorSink, CliError> {
        let file = crate::outfile::create_new(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                CliError::input(format!(
                    "{}: exists: it is another run's (same options and vector flags); resume that run with --resume, or choose another --vectors",
                    path.display()
                ))
            } else {
                Self::err(&path)(e)
            }
        })?;
        Self::locked(file, path, 0)
    }

    /// A resumed run's file: every journaled batch's bytes are verified against their
    /// checksums (a missing, shorter, edited or converted file is an error, and nothing is
    /// cut); bytes past the last journaled batch are cut only when the journal announced
    /// them (`pending`: a batch written, or being written, when the run was stopped), so a
    /// redone batch is not kept twice and bytes another writer left are never cut.
    fn resume(path: PathBuf, marks: &[(usize, &journal::VectorMark)], pending: Option<&journal::VectorMark>) -> Result<VectorSink, CliError> {
        let end = marks.last().map_or(0, |(_, m)| m.end);
        if std::fs::symlink_metadata(&path).is_err() && end > 0 {
            return Err(CliError::input(format!(
                "{}: missing, but the journal holds {} batches of its lines ({end} bytes): restore the file, or start the run anew in another --out",
                path.display(),
                marks.len()
            )));
        }
        let file = crate::outfile::open_append(&path).map_err(Self::err(&path))?;
        let sink = Self::locked(file, path, end)?;
        let path = sink.path.clone();
        let len = sink.file.metadata().map_err(Self::err(&path))?.len();
        if len < end {
            return Err(CliError::input(format!(
                "{}: {len} bytes, but the journal accounts for {end}: lines of journaled batches are missing; restore the file, or start the run anew in another --out",
                path.display()
            )));
        }
        let mut r = std::io::BufReader::with_capacity(VERIFY_BLOCK, std::fs::File::open(&path).map_err(Self::err(&path))?);
        let mut buf = vec![0u8; VERIFY_BLOCK];
        for (line, m) in marks {
            let mut c = journal::Check64::new(0);
            let mut left = m.end - m.start;
            while left > 0 {
                let n = left.min(VERIFY_BLOCK as u64) as usize;
                std::io::Read::read_exact(&mut r, &mut buf[..n]).map_err(Self::err(&path))?;
                c.update(&buf[..n]);
                left -= n as u64;
            }
            if format!("{:016x}", c.finish()) != m.sum {
                return Err(CliError::input(format!(
                    "{}: bytes {}..{} (the batch of journal line {line}) are not the lines the run wrote (edited, converted, reordered or cut); nothing was cut: restore the file, or start the run anew in another --out",
                    path.display(),
                    m.start,
                    m.end
                )));
            }
        }
        if len > end {
            if !pending.is_some_and(|p| p.start == end && len <= p.end) {
                return Err(CliError::input(format!(
                    "{}: bytes {end}..{len} follow the last journaled batch, but this journal announced no write there (another writer's, or a copy of this journal resumed elsewhere); nothing was cut",
                    path.display()
                )));
            }
            crate::outln!(
                "vectors: {}: cutting {} bytes of a batch that was written but not journaled (a torn or unjournaled tail)",
                path.display(),
                len - end
            )?;
            sink.file.set_len(end).map_err(Self::err(&path))?;
        }
        Ok(sink)
    }

    /// Where `bytes` will lie once appended, with their checksum (journaled before they are
    /// written: `Journal::pending`).
    fn mark(&self, bytes: &[u8]) -> journal::VectorMark {
        journal::VectorMark {
            file: self.name.clone(),
            start: self.len,
            end: self.len + bytes.len() as u64,
            sum: format!("{:016x}", journal::check64(0, bytes)),
        }
    }

    /// Append a batch's lines durably; on failure the file is cut back to where it was.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let r = self.file.write_all(bytes).and_then(|_| self.file.sync_data());
        match r {
            Ok(()) => {
                self.len += bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                Err(e)
            }
        }
    }
}

/// Where a run writes: its journal (with the batches already done) and its vector file.
struct Outputs {
    journal: Journal,
    done: Vec<BatchRecord>,
    vectors: Option<VectorSink>,
}

/// What executes this run's jobs, as its journal records it: a resume on another executor
/// would credit one executor with another's results.
fn executor_name(p: &Plan) -> String {
    match &p.hw {
        Hw::Real { det, .. } => match &det.emulated {
            Some(fake) => format!("emulated:{fake}"),
            None => format!(
                "hardware:{}:{}",
                p.base.hardware.gpu.as_deref().unwrap_or("unknown GPU"),
                p.base.hardware.driver.as_deref().unwrap_or("unknown driver")
            ),
        },
        Hw::Simulated(_) => "simulated".into(),
        Hw::None(_) => "none".into(),
    }
}

/// The run's identity, as its journal's header holds it; `dir` is the vectors folder (made).
fn identity(a: &RunArgs, p: &Plan, dir: Option<&Path>) -> journal::Header {
    // the plan's own config: it holds what the items imply (the road, a --words file's digest)
    let config = p.base.config.clone().unwrap_or(serde_json::Value::Null);
    let executor = executor_name(p);
    let vectors = dir.map(|d| {
        let per_instruction = a.vectors_per_instruction.0.map(|n| n as u64);
        // the name says which run: its options, vector flags and executor
        let id = journal::check64(0, format!("{config}{per_instruction:?}{executor}").as_bytes());
        let form = a.form.map_or("all", |f| f.cli_name());
        let file =
            format!("{}-seed{}-{}-{form}-shard{}of{}-{:012x}.jsonl", &p.base.started[..10], p.seed, a.mode.name(), a.shard.index, a.shard.count, id >> 16);
        journal::VectorsSpec { dir: d.display().to_string(), file, per_instruction }
    });
    journal::Header { config, vectors, executor, tool_version: env!("CARGO_PKG_VERSION").to_string() }
}

/// What a journaled item's counts must be, given the run's identity: an item of this run,
/// its form, one instruction (or chunk group) of the inputs the run gives it, no more
/// results than inputs. Err: why not.
fn check_item(a: &RunArgs, target: &'static crate::target::Target, word_of: &BTreeMap<u64, u128>, it: &journal::ItemRecord) -> Result<(), String> {
    let t = &it.totals;
    let mut expect_inputs = a.inputs as u64;
    if a.mode == Mode::Exhaustive {
        if !exhaustive_groups(a).contains(&it.index) || !a.shard.owns_group(it.index) {
            return Err(format!("item {} is not one of this run's (shard {})", it.index, a.shard));
        }
        expect_inputs = 1u64 << (exhaustive_group_bits(a) + a.chunk_bits);
        if t.instructions != (it.index == 0) as u64 {
            return Err(format!("item {}: {} instructions", it.index, t.instructions));
        }
    } else {
        let Some(&w) = word_of.get(&it.index) else {
            return Err(format!("item {} is not one of this run's (shard {})", it.index, a.shard));
        };
        // the form as the run's architecture reads the word (the engine's `Backend::decode`)
        let form = crate::isa::decode_for(target, w).map(|i| i.op.form_key(i.form()).to_string()).unwrap_or_else(|_| "illegal".into());
        if it.form != form {
            return Err(format!("item {}: form {:?}, but its word is {form:?}", it.index, it.form));
        }
        if t.instructions != 1 {
            return Err(format!("item {}: {} instructions, want 1", it.index, t.instructions));
        }
        if t.not_runnable == 1 {
            expect_inputs = 0;
        }
    }
    let results = t.compared.checked_add(t.undefined);
    if t.inputs != expect_inputs || results.is_none_or(|r| r > t.inputs) || t.mismatches > t.compared || t.not_runnable > 1 {
        return Err(format!(
            "item {}: {} inputs ({expect_inputs} given), {} compared, {} undefined, {} mismatching: counts no run of it gives",
            it.index, t.inputs, t.compared, t.undefined, t.mismatches
        ));
    }
    Ok(())
}

fn open_outputs(a: &RunArgs, p: &Plan) -> Result<Outputs, CliError> {
    let simulated = p.base.hardware.simulated;
    // the vectors folder is made before the journal, so a bad --vectors leaves no journal behind
    let vec_dir = match &a.vectors {
        Some(dir) => {
            // simulated results never land beside hardware truth
            let d = dir.join(if simulated { "simulated" } else { "hardware" });
            std::fs::create_dir_all(&d).map_err(|e| CliError::input(format!("{}: {e}", d.display())))?;
            Some(d.canonicalize().map_err(|e| CliError::input(format!("{}: {e}", d.display())))?)
        }
        None => None,
    };
    let want = identity(a, p, vec_dir.as_deref());
    let jpath = a.out.join("journal.jsonl");
    if !(a.resume && std::fs::symlink_metadata(&jpath).is_ok()) {
        // a new run: its vector file is made first (one that exists is another run's), so
        // the file a journal names was always made by that journal's run
        if std::fs::symlink_metadata(&jpath).is_ok() {
            return Err(CliError::input(journal::JournalError::Exists { path: jpath.display().to_string() }.to_string()));
        }
        let vectors = match (&want.vectors, &vec_dir) {
            (Some(v), Some(d)) => Some(VectorSink::create(d.join(&v.file))?),
            _ => None,
        };
        let journal = match Journal::open(&jpath, &want, false) {
            Ok((j, _, _)) => j,
            Err(e) => {
                if let Some(v) = &vectors {
                    // empty, and made by this process a moment ago
                    let _ = std::fs::remove_file(&v.path);
                }
                return Err(CliError::input(e.to_string()));
            }
        };
        return Ok(Outputs { journal, done: Vec::new(), vectors });
    }
    let (journal, header, resumed) = Journal::open(&jpath, &want, true).map_err(|e| CliError::input(e.to_string()))?;
    let journal::Resumed { batches: done, lines, pending, .. } = resumed;
    // what the run's identity implies of each journaled item
    let word_of: BTreeMap<u64, u128> = p.items.iter().copied().collect();
    for (b, line) in done.iter().zip(&lines) {
        for it in &b.items {
            check_item(a, p.hw.target(a), &word_of, it).map_err(|why| CliError::input(format!("{}:{line}: corrupt journal: {why}", jpath.display())))?;
        }
    }
    let n: usize = done.iter().map(|b| b.items.len()).sum();
    crate::outln!("resume: {n} items already journaled in {} batches", done.len())?;
    let vectors = match (&header.vectors, &vec_dir) {
        (Some(v), Some(d)) => {
            let marks: Vec<(usize, &journal::VectorMark)> = done.iter().zip(&lines).filter_map(|(b, &line)| b.vectors.as_ref().map(|m| (line, m))).collect();
            Some(VectorSink::resume(d.join(&v.file), &marks, pending.as_ref())?)
        }
        _ => None,
    };
    Ok(Outputs { journal, done, vectors })
}

/// What executing the batches left: every journaled batch (earlier ones included) and why
/// it stopped, if it did not finish.
struct Executed {
    records: Vec<BatchRecord>,
    error: Option<CliError>,
    /// `--stop-after-batches`: end as a killed process would, without a report.
    killed: bool,
    interrupted: Option<i32>,
    compared_now: u64,
    execute_s: f64,
}

fn execute(a: &RunArgs, p: &Plan, backend: &dyn Backend, ordinals: &[i32], out: Outputs) -> Result<Executed, CliError> {
    let Outputs { mut journal, done, vectors: mut vec_sink } = out;
    let done_items: BTreeSet<u64> = done.iter().flat_map(|b| b.items.iter().map(|i| i.index)).collect();
    let origin = if p.base.hardware.simulated {
        let by = if matches!(p.hw, Hw::Real { .. }) { "fake-cuda" } else { FAKE_ENV };
        format!("simulated:{by}:none:{}", &p.base.started[..10])
    } else {
        format!(
            "hardware:{}:{}:{}",
            p.base.hardware.gpu.as_deref().unwrap_or("unknown GPU"),
            p.base.hardware.driver.as_deref().unwrap_or("unknown driver"),
            &p.base.started[..10]
        )
    };
    let mut vec_writer = vector_out::VectorWriter::for_arch(&origin, p.hw.target(a));
    let mut vec_buf = Vec::new();
    let exe = std::env::current_exe().map_err(|e| CliError::input(format!("cannot find this program for its workers: {e}")))?;
    let opts = EngineOptions {
        inputs: a.inputs,
        seed: p.seed,
        minimize_budget: a.minimize_budget,
        keep_vectors: keep_vectors(a),
        stop_on_launch_failure: a.stop_on_launch_failure,
    };
    let nv = crate::nvdisasm::Nvdisasm::locate(a.nvdisasm.as_deref()).ok();
    let describe = move |w: u128| -> Option<String> {
        let nv = nv.as_ref()?;
        match nv.disassemble(&[w]).ok()?.into_iter().next()? {
            crate::nvdisasm::Verdict::Text(t) => Some(t),
            crate::nvdisasm::Verdict::Rejected(m) => Some(format!("rejected: {m}")),
            crate::nvdisasm::Verdict::Empty => Some("nvdisasm prints nothing for it".into()),
        }
    };

    // The work: batches of instructions, or groups of exhaustive chunks.
    let batches: Vec<Vec<(u64, u128)>> = if a.mode == Mode::Exhaustive {
        let word = p.words[0];
        exhaustive_groups(a).filter(|g| a.shard.owns_group(*g) && !done_items.contains(g)).map(|g| vec![(g, word)]).collect()
    } else {
        let todo: Vec<(u64, u128)> = p.items.iter().copied().filter(|(i, _)| !done_items.contains(i)).collect();
        todo.chunks(a.batch).map(|c| c.to_vec()).collect()
    };
    let total_units: u64 = batches.iter().map(|b| b.len() as u64).sum();
    // one executor (worker process) per device, fed by host threads round-robin
    let arch = match &p.hw {
        Hw::Real { target, .. } => Some(*target),
        _ => None,
    };
    let executors: Vec<(i32, std::sync::Mutex<Box<dyn Executor + Send>>)> =
        ordinals.iter().map(|&dev| (dev, std::sync::Mutex::new(make_executor(&exe, dev, a.timeout, arch)))).collect();
    // a known-good instruction first on every device: when the harness's own kernel or data
    // path is broken, every instruction under test would look faulty; stop instead
    for (dev, shared) in &executors {
        match preflight(backend, &mut Shared(shared)) {
            Ok(line) => crate::outln!("preflight: device {dev}: {line}")?,
            Err(why) => {
                return Err(CliError::input(format!("device {dev}: preflight: {why}; no instruction under test was run")));
            }
        }
    }
    let bar = progress_bar(total_units);
    let queue = std::sync::Mutex::new(batches.into_iter().collect::<std::collections::VecDeque<_>>());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<Result<BatchOutcome, (i32, gpu::ExecError)>>();
    let mut ex = Executed { records: done, error: None, killed: false, interrupted: None, compared_now: 0, execute_s: 0.0 };
    let mut journaled = 0u64;
    let mode = a.mode;
    let t_exec = std::time::Instant::now();
    let host_threads = a.host_threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(executors.len());
    std::thread::scope(|s| {
        for t in 0..host_threads {
            let tx = tx.clone();
            let (dev, shared) = &executors[t % executors.len()];
            let dev = *dev;
            let (queue, stop, opts, describe) = (&queue, &stop, &opts, &describe);
            s.spawn(move || {
                let mut exec = Shared(shared);
                loop {
                    if stop.load(std::sync::atomic::Ordering::SeqCst) {
                        return;
                    }
                    let Some(batch) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                        return;
                    };
                    let r = if mode == Mode::Exhaustive {
                        exhaustive_group(backend, &mut exec, batch[0].1, batch[0].0, a)
                    } else {
                        engine::run_batch(backend, &mut exec, &batch, opts, describe)
                    };
                    let failed = r.is_err();
                    if tx.send(r.map_err(|e| (dev, e))).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(tx);
        loop {
            if ex.interrupted.is_none() {
                if let Some(sig) = interrupted() {
                    // no new batch starts; those in flight finish and are journaled
                    ex.interrupted = Some(sig);
                    stop.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
            let r = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => r,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match r {
                Ok(mut outcome) => {
                    // the batch's vectors are on disk before the batch is journaled: a
                    // journaled batch is never redone, so its lines must not be lost
                    if let Some(sink) = vec_sink.as_mut() {
                        vec_buf.clear();
                        let written = vec_writer.write(&outcome.observed, &mut vec_buf).and_then(|_| {
                            // the bytes are announced before they are written: a resume cuts
                            // only bytes its journal announced
                            let mark = sink.mark(&vec_buf);
                            journal.pending(&mark).map_err(|e| std::io::Error::other(e.to_string()))?;
                            sink.append(&vec_buf).map(|_| mark)
                        });
                        match written {
                            Ok(mark) => outcome.record.vectors = Some(mark),
                            Err(e) => {
                                ex.error
                                    .get_or_insert(CliError::input(format!("{}: {e}; the batch was not journaled, --resume redoes it", sink.path.display())));
                                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                                continue;
                            }
                        }
                    }
                    if let Err(e) = journal.append(&outcome.record) {
                        ex.error.get_or_insert(CliError::input(e.to_string()));
                        stop.store(true, std::sync::atomic::Ordering::SeqCst);
                        continue;
                    }
                    bar.inc(outcome.record.items.len() as u64);
                    ex.compared_now += outcome.record.items.iter().map(|i| i.totals.compared).sum::<u64>();
                    ex.records.push(outcome.record);
                    journaled += 1;
                    if a.stop_after_batches == Some(journaled) {
                        stop.store(true, std::sync::atomic::Ordering::SeqCst);
                        ex.killed = true;
                        // an interrupted run: exit 2 like any run that could not finish (README)
                        ex.error.get_or_insert(CliError::input(format!("stopped after {journaled} batches (--stop-after-batches); resume with --resume")));
                        break;
                    }
                }
                // after a signal, a failed launch is the stop's doing, not the instructions'
                Err(_) if ex.interrupted.is_some() => {}
                Err((dev, e)) => {
                    stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    ex.error.get_or_insert(CliError::input(format!("device {dev}: {e}; results so far are in the journal, continue with --resume")));
                }
            }
        }
    });
    bar.finish_and_clear();
    ex.execute_s = t_exec.elapsed().as_secs_f64();
    Ok(ex)
}

/// Write what was obtained, whatever stopped the run, and decide the exit.
fn record(a: &RunArgs, p: Plan, ex: Executed) -> CliResult {
    let mut base = p.base;
    if ex.killed {
        // simulated kill: no report, exactly like a killed process
        return Err(ex.error.unwrap_or_else(|| CliError::input("stopped")));
    }
    let stopped = |mut base: Summary, status: report::RunStatus, why: String| -> Result<CliError, CliError> {
        // one line; what was obtained is journaled and summarized
        base.finished = utc_now();
        base.status = status;
        base.hardware.reason = Some(format!("run stopped early: {why}"));
        let s = summarize(&ex.records, base)?;
        write_report(&a.out, &s)?;
        Ok(CliError::input(why))
    };
    if let Some(sig) = ex.interrupted {
        let n: usize = ex.records.iter().map(|r| r.items.len()).sum();
        let why = format!("interrupted by {}: {n} items journaled, {} holds a partial summary; continue with --resume", signal_name(sig), a.out.display());
        return Err(stopped(base, report::RunStatus::Interrupted, why)?);
    }
    if let Some(e) = ex.error {
        return Err(stopped(base, report::RunStatus::Stopped, e.message)?);
    }
    let t_checks = std::time::Instant::now();
    base.software_checks = software_checks(a, &base.arch, &p.words);
    base.timing = Some(report::Timing {
        execute_s: ex.execute_s,
        compared: ex.compared_now,
        compared_per_s: if ex.execute_s > 0.0 { ex.compared_now as f64 / ex.execute_s } else { 0.0 },
        software_checks_s: t_checks.elapsed().as_secs_f64(),
    });
    if let Some(sig) = interrupted() {
        // the checks' tools may have been stopped by the same signal: their verdicts are not kept
        base.software_checks = SoftwareChecks { verify: None, oracle: None };
        let why = format!("interrupted by {} during the software checks; every item ran and is journaled; run again with --resume", signal_name(sig));
        return Err(stopped(base, report::RunStatus::Interrupted, why)?);
    }
    // complete means every planned item has its result, from this run's one executor
    let journaled: BTreeSet<u64> = ex.records.iter().flat_map(|r| r.items.iter().map(|i| i.index)).collect();
    if Some(journaled.len() as u64) != base.planned {
        let why = format!(
            "the journal holds {} of the {} planned items; continue with --resume",
            journaled.len(),
            base.planned.map_or("?".into(), |n| n.to_string())
        );
        return Err(stopped(base, report::RunStatus::Stopped, why)?);
    }
    base.finished = utc_now();
    let s = summarize(&ex.records, base)?;
    let code = finish(&a.out, &s, None)?;
    // a tool that failed is a tool error (exit 2), not a verdict on the words
    if let Some(why) = tool_error(&s) {
        return Err(CliError::input(why));
    }
    Ok(code)
}

/// The message of a software check whose tool failed, if one did.
fn tool_error(s: &Summary) -> Option<String> {
    let o = s.software_checks.oracle.as_ref()?;
    (o.get("tool_error").and_then(|t| t.as_bool()) == Some(true))
        .then(|| format!("software check oracle: {}", report::not_run_reason(&s.software_checks.oracle)))
}

/// The main job: `plan` (checks, nothing written), then the report folder locked, the
/// outputs opened, `execute` (batches through the workers, each journaled as it ends)
/// and `record` (the summary, whatever stopped the run).
pub fn run(a: RunArgs) -> CliResult {
    // a reader that quits (`run | head -1`) must not end the run before its report is written
    crate::cli::keep_going_without_stdout();
    let out = a.out.clone();
    match run_job(a) {
        Ok(_) if crate::cli::stdout_lost() => {
            Err(CliError::input(format!("stdout: closed before the run ended; the run went on, and its report is in {}", out.display())))
        }
        r => r,
    }
}

fn run_job(a: RunArgs) -> CliResult {
    crate::kernel::choose_template(a.template)
        .map_err(|t| CliError::input(format!("--template {}: this process already builds from the {} template", a.template.name(), t.name())))?;
    crate::kernel::choose_nop_padding(a.pad_nops).map_err(|e| CliError::input(format!("--pad-nops {}: {e}", a.pad_nops)))?;
    let mut p = plan(&a)?;
    std::fs::create_dir_all(&a.out).map_err(|e| CliError::input(format!("{}: {e}", a.out.display())))?;
    // one run per folder: a second one would interleave its journal with this one's
    let _lock = crate::outfile::lock_dir(&a.out).map_err(CliError::input)?;
    let (backend, ordinals): (Box<dyn Backend>, Vec<i32>) = match &p.hw {
        Hw::None(why) => {
            // a folder holding a run's journal keeps that run's report: a run without
            // hardware would replace it with one that has none of its results
            let j = a.out.join("journal.jsonl");
            if std::fs::symlink_metadata(&j).is_ok() {
                return Err(CliError::input(format!(
                    "{}: a run's journal is here, but this machine has no usable GPU ({why}): continue it where it ran, or choose another --out",
                    j.display()
                )));
            }
            return software_only(&a, &p.words, p.base, format!("no usable GPU: {why}"));
        }
        Hw::Simulated(why) => {
            crate::outln!("hardware: not used; {why}")?;
            p.base.hardware.reason = Some(why.clone());
            p.base.hardware.simulated = true;
            (Box::new(pipeline::FakeBackend { target: p.hw.target(&a) }), worker_ordinals(&a, &p.hw))
        }
        Hw::Real { det, devices, target } => match pipeline::hardware_backend(a.road, target) {
            Ok(b) => {
                p.base.hardware.gpu = det.devices.iter().find(|d| devices.contains(&d.ordinal)).map(|d| d.name.clone());
                p.base.hardware.driver = det.driver.clone();
                p.base.hardware.devices = devices.len() as u64;
                match &det.emulated {
                    // the whole real path runs, but on a CPU emulation: never a hardware result
                    Some(fake) => {
                        let why = format!("the CUDA driver is {fake}; {} emulated device(s), no hardware was used", devices.len());
                        crate::outln!("hardware: not used; {why}")?;
                        p.base.hardware.reason = Some(why);
                        p.base.hardware.simulated = true;
                    }
                    None => p.base.hardware.used = true,
                }
                (b, devices.clone())
            }
            Err(why) => return software_only(&a, &p.words, p.base, why),
        },
    };
    if ordinals.is_empty() {
        return Err(CliError::input("--devices selects no device"));
    }
    let outputs = open_outputs(&a, &p)?;
    catch_signals();
    let ex = execute(&a, &p, &*backend, &ordinals, outputs)?;
    record(&a, p, ex)
}

/// One warp of a plain `HMUL2 R0, R1, R2` on exactly representable products (FP16 1.0 × 3.0
/// and 2.0 × 1.5), on the run's road; its results must be the reference's. Err: why the harness, not an
/// instruction under test, is at fault.
pub fn preflight(backend: &dyn Backend, exec: &mut dyn Executor) -> Result<String, String> {
    let inst = crate::isa::Inst::new(0, 1, crate::isa::Operand2::Reg(2));
    let word = backend.fit(crate::isa::encode_for(backend.target(), &inst).map_err(|e| format!("cannot encode the preflight word: {e}"))?);
    let inst = backend.decode(word).map_err(|e| format!("the preflight word on the {} road: {e}", backend.road()))?;
    let text = crate::isa::render_for(backend.target(), &inst).unwrap_or_else(|| crate::isa::render(&inst));
    let x = crate::inputs::Inputs { a: 0x4000_3c00, b: 0x3e00_4200, d: 0x7e7e_7e7e, pred: 0x7f, c: 0 };
    let want = backend.expect(&inst, &x)?;
    let want_pred = backend.expect_preds(&inst, &x)?;
    let case = crate::kernel::Case { word, inputs: vec![x; engine::MIN_THREADS] };
    match engine::attempt(backend, exec, &[case]) {
        Err(e) => Err(format!("{text}: {e}")),
        Ok(Err(why)) => Err(format!("the known-good {text} failed ({why}): the harness's kernel, driver or device is at fault")),
        Ok(Ok(r)) => {
            let bad: Vec<String> = r
                .iter()
                .flatten() // the sources it read and its result (a road may leave d and the predicates unset:
                // the word reads neither), and the predicates after where the road reads them back
                .filter(|&&(i, got, p)| (i.a, i.b) != (x.a, x.b) || got != want || p.is_some_and(|p| p != want_pred))
                .map(|&(_, got, p)| match p {
                    Some(p) if p != want_pred => format!("{got:#010x} with predicates {p:#04x} (want {want_pred:#04x})"),
                    _ => format!("{got:#010x}"),
                })
                .collect();
            if r.iter().flatten().count() != engine::MIN_THREADS || !bad.is_empty() {
                return Err(format!(
                    "{text} gave {} of {} results other than {want:#010x} (first: {}): the input layout or the readback is broken",
                    bad.len(),
                    engine::MIN_THREADS,
                    bad.first().map(String::as_str).unwrap_or("none")
                ));
            }
            Ok(format!("{text} gave the reference's {want:#010x} in all {} threads, on the {} road", engine::MIN_THREADS, backend.road()))
        }
    }
}

fn progress_bar(total: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(total);
    if let Ok(st) = indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {per_sec} eta {eta}") {
        b.set_style(st);
    }
    b
}

/// log2 of chunks per digest job.
/// Mismatching results of one fetched exhaustive chunk kept as vectors under
/// `--vectors-per-instruction N` (a wrong NaN rule would otherwise keep millions).
const MISMATCH_VECTORS_PER_CHUNK: usize = 4096;

/// Results kept as vectors per instruction (or per fetched exhaustive chunk): `None` all;
/// without `--vectors`, only mismatches, for the findings.
fn keep_vectors(a: &RunArgs) -> Option<usize> {
    if a.vectors.is_some() {
        a.vectors_per_instruction.0
    } else {
        Some(0)
    }
}

fn exhaustive_group_bits(a: &RunArgs) -> u32 {
    (a.space_bits - a.chunk_bits).min(8)
}

/// One group of exhaustive chunks: device digests vs reference digests; differing or
/// partly undefined chunks fetched and compared element by element.
fn exhaustive_group(backend: &dyn Backend, exec: &mut dyn Executor, word: u128, group: u64, a: &RunArgs) -> Result<BatchOutcome, gpu::ExecError> {
    use exhaustive::DigestRequest;
    let inst = crate::isa::decode(word).map_err(|e| gpu::ExecError::Setup(format!("--encoding {}: illegal: {e}", format_hex(word))))?;
    let gb = exhaustive_group_bits(a);
    let req = DigestRequest { word, space_bits: a.space_bits, chunk_bits: a.chunk_bits, first_chunk: group << gb, chunks: 1 << gb, c: a.c.unwrap_or(0) };
    let job = backend.digest_job(&req).map_err(gpu::ExecError::Setup)?;
    let form = inst.form_key().to_string();
    let mut totals = Totals { instructions: (group == 0) as u64, inputs: (req.chunks as u64) << req.chunk_bits, ..Default::default() };
    let mut rec = BatchRecord::default();
    let mut observed = Vec::new();
    let dev: Vec<u64> = match exec.execute(&job) {
        // one u64 per thread; a chunk's digest is the sum of its 256
        Ok(out) => exhaustive::sum_partials(&out, req.chunks).map_err(gpu::ExecError::Protocol)?,
        Err(e) if e.blames_instructions() => {
            totals.faults = 1;
            rec.findings.push(report::Finding::fault(
                format_hex(word),
                crate::isa::render(&inst),
                format!("digest job for chunks {}..{}: {e}", req.first_chunk, req.first_chunk + req.chunks as u64),
            ));
            rec.items.push(journal::ItemRecord { index: group, form, totals });
            return Ok(BatchOutcome { record: rec, observed });
        }
        Err(e) => return Err(e),
    };
    // the reference sees what the kernel reads (coinciding registers, RZ), in batches; the
    // fused sweep where it applies (the same digests, without per-input records)
    let expect = |xs: &[crate::inputs::Inputs], out: &mut [u32]| {
        let eff = backend.digest_inputs(word, xs)?;
        backend.expect_batch(&inst, &eff, out)
    };
    let refs = backend.fused_digests(&req).unwrap_or_else(|| exhaustive::reference_digests(&req, &expect));
    for (j, (d, r)) in dev.iter().zip(&refs).enumerate() {
        let c = req.first_chunk + j as u64;
        if *r == Some(*d) {
            totals.compared += 1u64 << req.chunk_bits;
            continue;
        }
        // fetch: the chunk's inputs explicitly, one ordinary launch
        let inputs: Vec<_> = req.chunk_range(c).map(|k| req.inputs(k)).collect();
        let got = match engine::attempt(backend, exec, &[pipeline::Case { word, inputs: inputs.clone() }])? {
            Ok(mut g) => g.swap_remove(0),
            Err(e) => {
                totals.faults += 1;
                rec.findings.push(report::Finding::fault(format_hex(word), crate::isa::render(&inst), format!("fetching chunk {c}: {e}")));
                continue;
            }
        };
        let mut listed = 0;
        let ins: Vec<crate::inputs::Inputs> = got.iter().map(|x| x.0).collect();
        let mut want = vec![0u32; ins.len()];
        let all_defined = backend.expect_batch(&inst, &ins, &mut want).is_ok();
        let mut kept_bad = 0;
        // a chunk holds 2^chunk_bits results: under a per-instruction limit, its first N
        // and at most MISMATCH_VECTORS_PER_CHUNK mismatches
        let keep = keep_vectors(a);
        for (k, (inp, g, gp)) in got.iter().map(|(i, g, p)| (i, *g, *p)).enumerate() {
            let e = if all_defined { Ok(want[k]) } else { backend.expect(&inst, inp) };
            // the predicates after, where the road read them back (the digest sums the
            // destination alone; a fetched chunk shows them)
            let e = e.and_then(|e| match gp {
                Some(gp) => backend.expect_preds(&inst, inp).map(|ep| (e, ep != gp)),
                None => Ok((e, false)),
            });
            match e {
                Ok((e, bad_pred)) => {
                    totals.compared += 1;
                    let bad = e != g || bad_pred;
                    if keep.is_none_or(|n| k < n) || (bad && kept_bad < MISMATCH_VECTORS_PER_CHUNK) {
                        kept_bad += bad as usize;
                        observed.push(Observed { word, inputs: *inp, got: g, pred: gp });
                    }
                    if bad {
                        totals.mismatches += 1;
                        if listed < 16 {
                            listed += 1;
                            rec.findings.push(report::Finding {
                                kind: report::FindingKind::Mismatch,
                                encoding: format_hex(word),
                                text: crate::isa::render(&inst),
                                minimized: None,
                                minimized_text: None,
                                inputs: Some(report::FindingInputs::of(inp)),
                                expected: Some(report::hex32(e)),
                                got: Some(report::hex32(g)),
                                detail: match (bad_pred, gp) {
                                    (true, Some(p)) => format!("exhaustive chunk {c}; the predicates P0..P6 after are {p:#04x}, not the reference's"),
                                    _ => format!("exhaustive chunk {c}"),
                                },
                            });
                        }
                    }
                }
                Err(_) => totals.undefined += 1,
            }
        }
        if r.is_some() && listed == 0 {
            // digests differed but every element matched: the device digest is wrong
            totals.faults += 1;
            rec.findings.push(report::Finding::fault(
                format_hex(word),
                crate::isa::render(&inst),
                format!("chunk {c}: device digest {d:#018x} differs from the reference's but every fetched element matches (digest kernel bug)"),
            ));
        }
    }
    rec.items.push(journal::ItemRecord { index: group, form, totals });
    Ok(BatchOutcome { record: rec, observed })
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// Shard report folders (each with a summary.json).
    #[arg(required = true, value_parser = crate::cli::path_arg)]
    pub dirs: Vec<PathBuf>,
    /// Folder for the merged summary.json and junit.xml.
    #[arg(long, value_parser = crate::cli::path_arg)]
    pub out: PathBuf,
}

pub fn merge(a: MergeArgs) -> CliResult {
    let same_dir = |x: &Path, y: &Path| x == y || matches!((x.canonicalize(), y.canonicalize()), (Ok(p), Ok(q)) if p == q);
    if let Some(d) = a.dirs.iter().find(|d| same_dir(d, &a.out)) {
        return Err(CliError::input(format!("--out {}: is also a shard folder to merge; its summary.json would be overwritten", d.display())));
    }
    let mut parts = Vec::new();
    // the run's options: in the summary (`config`), or for a summary written before it
    // kept them, in the journal's header when the folder has one
    let mut first_config: Option<(PathBuf, serde_json::Value)> = None;
    for d in &a.dirs {
        let p = d.join("summary.json");
        let s: Summary = crate::schema::read_summary(&p).map_err(|e| CliError::input(e.to_string()))?;
        let j = d.join("journal.jsonl");
        let config = match &s.config {
            Some(c) => Some((p.clone(), c.clone())),
            None => journal::header_config(&j).map(|c| (j, c)),
        };
        if let Some((j, mut c)) = config {
            if let Some(o) = c.as_object_mut() {
                o.remove("shard");
            }
            match &first_config {
                None => first_config = Some((j, c)),
                Some((fj, fc)) if *fc != c => {
                    // every key either side has (a key only one side has differs too)
                    let keys: std::collections::BTreeSet<&String> = [fc, &c].into_iter().filter_map(|x| x.as_object()).flat_map(|o| o.keys()).collect();
                    let none = serde_json::Value::Null;
                    let differ: Vec<String> = keys
                        .into_iter()
                        .filter(|k| fc.get(k.as_str()) != c.get(k.as_str()))
                        .map(|k| format!("{k} {} vs {}", fc.get(k.as_str()).unwrap_or(&none), c.get(k.as_str()).unwrap_or(&none)))
                        .collect();
                    return Err(CliError::input(format!("{}: another run's options than {} ({})", j.display(), fj.display(), differ.join(", "))));
                }
                Some(_) => {}
            }
        }
        parts.push((p.display().to_string(), s));
    }
    let m = report::merge(&parts).map_err(|e| CliError::input(e.to_string()))?;
    std::fs::create_dir_all(&a.out).map_err(|e| CliError::input(format!("{}: {e}", a.out.display())))?;
    // written, so nothing is lost, but never a pass: the other shards' work is not in it
    let incomplete = (!m.shard.starts_with("all/")).then(|| {
        let why = m.hardware.reason.as_deref().unwrap_or("incomplete merge");
        format!("{why}: shards are missing; {} covers only the folders given", a.out.display())
    });
    let code = finish(&a.out, &m, incomplete.clone())?;
    match incomplete {
        // a merge that found failures says FAILED, and still ends in the error
        Some(why) => Err(CliError::input(why)),
        None => Ok(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Form;

    #[test]
    fn control_bits_change_only_the_scheduling_bits() {
        let o = crate::gen::GenOptions::legal_of(11, crate::reference::IMPLEMENTED);
        let (mut barriers, mut kept_reuse) = (0, 0);
        for i in 0..4000 {
            let w = random_item(&o, i, DEFAULT_UNDOCUMENTED_SHARE);
            let drawn = crate::isa::decode(w).expect("random words are legal");
            barriers += (drawn.ctrl.wr_bar != 7 || drawn.ctrl.rd_bar != 7) as usize;
            assert_eq!(ControlBits::Drawn.apply(w), w);
            for c in [ControlBits::NoBarriers, ControlBits::Fixed] {
                let got = crate::isa::decode(c.apply(w)).unwrap_or_else(|e| panic!("{c:?} of {w:#034x}: {e}"));
                assert_eq!(crate::isa::Inst { ctrl: drawn.ctrl, ..got }, drawn, "{c:?} changed more than control bits of {w:#034x}");
                assert_eq!((got.ctrl.wr_bar, got.ctrl.rd_bar), (7, 7), "{c:?} of {w:#034x}");
                if c == ControlBits::NoBarriers {
                    assert_eq!(crate::isa::Control { wr_bar: drawn.ctrl.wr_bar, rd_bar: drawn.ctrl.rd_bar, ..got.ctrl }, drawn.ctrl);
                } else if got.ctrl != crate::isa::Control::default() {
                    // only where the rules tie the reuse flags to the modifiers
                    assert_eq!(got.ctrl, crate::isa::Control { reuse: drawn.ctrl.reuse, ..Default::default() });
                    kept_reuse += 1;
                }
            }
        }
        assert!(barriers > 3000, "the generator draws scoreboards in most words ({barriers} of 4000)");
        assert!(kept_reuse < 400, "{kept_reuse}");
        // a word that does not decode comes back as it was
        assert_eq!(ControlBits::Fixed.apply(u128::MAX), u128::MAX);
    }

    #[test]
    fn shards_partition_the_items_and_each_gets_a_fair_share() {
        for n in 1..=9u64 {
            let shards: Vec<Shard> = (0..n).map(|index| Shard { index, count: n }).collect();
            let mut share = vec![0u64; n as usize];
            for i in 0..9000u64 {
                let owners: Vec<u64> = shards.iter().filter(|s| s.owns(i)).map(|s| s.index).collect();
                assert_eq!(owners.len(), 1, "item {i} of {n} shards: {owners:?}");
                share[owners[0] as usize] += 1;
                assert_eq!(shards.iter().filter(|s| s.owns_group(i)).count(), 1);
            }
            let fair = 9000 / n;
            assert!(share.iter().all(|&k| k.abs_diff(fair) * 10 < fair), "{n} shards: {share:?}");
        }
    }

    /// Factorial items enumerate modifier values in order; every shard of 8 must still get
    /// instructions it can compare (no INVALIDn value), in every form.
    #[test]
    fn every_factorial_shard_gets_defined_instructions() {
        for form in Form::TWO_SOURCE {
            let insts = crate::gen::factorial(crate::isa::Op::Hmul2, form, 1);
            let fair = insts.iter().filter(|x| !x.has_invalid_value()).count() / 8;
            for index in 0..8 {
                let s = Shard { index, count: 8 };
                let defined = insts.iter().enumerate().filter(|(i, x)| s.owns(*i as u64) && !x.has_invalid_value()).count();
                assert!(defined * 2 > fair, "{form:?} shard {index}/8: {defined} defined instructions, under half of a fair {fair}");
            }
        }
    }
}
