//! The encoding-model subcommands: decode, encode, generate, oracle, errata.

use crate::cli::{exit_for, vec_for, CliError, CliResult};
use crate::gen::{self, Coverage, GenOptions};
use crate::isa::{self, format_hex, parse_hex, Form};
use crate::nvdisasm::Nvdisasm;
use crate::oracle;
use crate::target::Target;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

pub use crate::isa::parse_form;

/// The value of `--instruction HMUL2,HADD2`: one argument holding a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpList(pub Vec<isa::Op>);

/// Parse `--instruction`'s comma-separated mnemonics.
pub fn parse_ops_arg(s: &str) -> Result<OpList, String> {
    isa::parse_ops(s).map(OpList)
}

/// The instructions a command works on: those named, or every one.
pub fn ops_or_all(named: &Option<OpList>) -> Vec<isa::Op> {
    named.as_ref().map_or_else(|| isa::Op::ALL.to_vec(), |l| l.0.clone())
}

/// `--arch`: an architecture in nvdisasm's spelling (`SM86`) or ptxas's (`sm_86`); the error
/// names the input and the architectures there are.
pub fn parse_arch(s: &str) -> Result<&'static Target, String> {
    Target::parse(s).map_err(|e| e.to_string())
}

/// `--arch`'s value in `--help`: the architectures in nvdisasm's spelling, and ptxas's
/// form (a test holds it to [`Target::ALL`]).
pub const ARCH_VALUE: &str = "SM80|SM86|SM89|SM90|SM100|SM120|sm_NN";

/// The instructions named (all by default) that `target` has: every one when none is named,
/// those it has; one it lacks, named, is an error naming both.
pub fn ops_for(named: &Option<OpList>, target: &'static Target) -> Result<Vec<isa::Op>, CliError> {
    let ops = ops_or_all(named);
    if named.is_some() {
        if let Some(o) = ops.iter().find(|o| o.layout_for(target).is_none()) {
            return Err(CliError::input(format!("--instruction {o}: --arch {target} has no {o}")));
        }
    }
    Ok(ops.into_iter().filter(|o| o.layout_for(target).is_some()).collect())
}

/// `count` words of `ops` on a target other than SM90, by its generator: item `i` from its own
/// stream of `seed` ([`crate::rng::Rng::fork`]), a legal word of a random instruction, or
/// (with chance `illegal_share`) a candidate word the target refuses.
pub fn target_words(target: &'static Target, ops: Vec<isa::Op>, seed: u64, count: u64, illegal_share: f64) -> impl Iterator<Item = u128> {
    let count = if ops.is_empty() { 0 } else { count };
    (0..count).filter_map(move |i| {
        let mut r = crate::rng::Rng::fork(seed, i);
        let op = *r.pick(&ops);
        if r.chance(illegal_share) {
            (0..10_000).filter_map(|_| gen::candidate_word_for(target, op, &mut r)).find(|&w| isa::decode_for(target, w).is_err())
        } else {
            gen::random_word_for(target, op, &mut r)
        }
    })
}

/// What SM90's generator alone does (`--form`, `--factorial`, INVALIDn and ignored-bit
/// shares, `--coverage`): refused, naming the option, on another target.
fn sm90_generator_only(target: &'static Target, what: &[(&str, bool)]) -> Result<(), CliError> {
    if target.spec_overlay.is_none() {
        return Ok(());
    }
    match what.iter().find(|(_, given)| *given) {
        Some((name, _)) => Err(CliError::input(format!(
            "{name} with --arch {target}: only SM90's generator has it (another target's draws legal words of every form, and rejected ones by --illegal-share)"
        ))),
        None => Ok(()),
    }
}
pub use crate::rng::resolve_seed;

/// `--form` names a form some of the instructions have (HFMA2's `rrrr` is no HMUL2 form):
/// otherwise an error naming the option, never words of another form.
pub fn check_form(ops: &[isa::Op], form: Option<Form>) -> Result<(), CliError> {
    match form {
        Some(f) if !ops.iter().any(|o| o.has_form(f)) => {
            let names: Vec<&str> = ops.iter().map(|o| o.mnemonic()).collect();
            Err(CliError::input(format!("--form {f}: no form of {} (use --instruction)", names.join(", "))))
        }
        _ => Ok(()),
    }
}

#[derive(Args)]
#[command(after_help = "\
Each line of stdin is one of: a word (0x + 32 hex digits); cuobjdump's or nvdisasm's two \
64-bit halves on one line, low first (0x0000000201007232 0x000fe20000000000); a listing line \
as nvdisasm -hex or cuobjdump -sass prints it (/*0040*/ HMUL2 R0, R1, R2 ; /* 0x... */) \
followed by the line holding the high half (/* 0x... */), whose output line is blank; a \
blank or # line, written out as it is. Line N in is line N out: the text nvdisasm prints, \
`illegal: <reason>`, or `error: <reason>` for a line that is none of these (then exit 2).")]
pub struct DecodeArgs {
    /// Words: 0x + 32 hex digits, high 64 bits first, or "0xLOW 0xHIGH" (cuobjdump's halves,
    /// quoted as one argument). Read from stdin, one a line, when none (or `-`) are given.
    pub hex: Vec<String>,
    /// JSON Lines: {"input", "encoding", "text"} or {"input", "illegal"} or {"input", "error"}.
    #[arg(long)]
    pub json: bool,
    /// The architecture whose encodings the words are: nvdisasm's spelling (SM86) or ptxas's
    /// (sm_86).
    #[arg(long, value_parser = parse_arch, value_name = ARCH_VALUE, default_value = "SM90")]
    pub arch: &'static Target,
}

/// A listing line read before its high half: where it was, and what it held.
struct Pending {
    n: usize,
    low: u64,
}

pub fn decode(a: DecodeArgs) -> CliResult {
    if a.json {
        return decode_json(a);
    }
    let mut tally = BadInputs::default();
    let mut pool = Pool { target: Some(a.arch), ..Pool::default() };
    let seen = std::thread::scope(|s| -> Result<usize, CliError> {
        let mut out = Output::start(s, &mut pool);
        let seen = if a.hex.is_empty() || a.hex == ["-"] {
            // streamed: one buffer in, batches out, whatever the input's size; stdin lines are
            // named by number, and a line that is not UTF-8 (or too long) is one bad input, not the end
            let mut n = 0usize;
            let mut pending: Option<Pending> = None;
            let unpaired = |p: &Pending| format!("stdin:{}: a listing line without its high half (/* 0x... */) on the next line", p.n);
            crate::cli::each_line(
                std::io::stdin().lock(),
                None,
                |e| CliError::input(format!("stdin: {e}")),
                |line| {
                    n += 1;
                    let fast = line.as_ref().ok().and_then(|l| crate::isa::hex::parse_hex_bytes(l));
                    let text = match (fast, line) {
                        (Some(w), _) if pending.is_none() => return out.word(w),
                        (_, Err(len)) => Err(format!("stdin:{n}: a line of {len} bytes (at most {})", crate::cli::MAX_LINE)),
                        (_, Ok(l)) => std::str::from_utf8(l).map_err(|_| format!("stdin:{n}: not UTF-8")),
                    };
                    let pasted = text.as_deref().map(|t| crate::isa::pasted(t));
                    // a listing line's high half completes it; anything else leaves it unpaired
                    if let Some(p) = pending.take() {
                        match pasted {
                            Ok(crate::isa::Pasted::High(hi)) => {
                                out.word((hi as u128) << 64 | p.low as u128)?;
                                return out.verbatim(String::new());
                            }
                            _ => out.bad(unpaired(&p), None, &mut tally)?,
                        }
                    }
                    match (pasted, &text) {
                        (Ok(crate::isa::Pasted::Word(w)), _) => out.word(w),
                        (Ok(crate::isa::Pasted::Low { low, .. }), _) => {
                            pending = Some(Pending { n, low });
                            Ok(())
                        }
                        (Ok(crate::isa::Pasted::Verbatim), Ok(t)) => out.verbatim(t.trim_end_matches('\r').to_string()),
                        (Ok(crate::isa::Pasted::High(_)), _) => {
                            out.bad(format!("stdin:{n}: a high half (/* 0x... */) without the listing line before it"), None, &mut tally)
                        }
                        (_, Ok(t)) => out.text(t, || format!("stdin:{n}: {:?}", crate::cli::excerpt(t.trim(), 80)), &mut tally),
                        (_, Err(why)) => out.bad(why.clone(), None, &mut tally),
                    }
                },
            )?;
            if let Some(p) = pending.take() {
                out.bad(unpaired(&p), None, &mut tally)?;
            }
            Ok(n)
        } else {
            a.hex
                .iter()
                .try_for_each(|h| match crate::isa::pasted(h) {
                    crate::isa::Pasted::Word(w) => out.word(w),
                    _ => out.text(h, || format!("{:?}", crate::cli::excerpt(h.trim(), 80)), &mut tally),
                })
                .map(|()| a.hex.len())
        };
        // what was read is written, even after a read error
        let written = out.finish();
        let seen = seen?;
        written.map(|()| seen)
    })?;
    if tally.bad > 0 {
        return Err(CliError::input(format!("{} of {seen} inputs are not words (first: {})", tally.bad, tally.first)));
    }
    Ok(ExitCode::SUCCESS)
}

/// `decode --json`: one object a line, in the order of the inputs (arguments, or stdin's
/// lines as `decode` reads them; a listing's two lines make one object).
fn decode_json(a: DecodeArgs) -> CliResult {
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let mut bad = 0usize;
    let mut first = String::new();
    let mut one = |input: String, word: Result<u128, String>, w: &mut std::io::BufWriter<std::io::StdoutLock>| -> Result<(), CliError> {
        let v = match word {
            Ok(word) => match isa::decode_for(a.arch, word) {
                Ok(i) => serde_json::json!({
                    "input": input, "encoding": format_hex(word), "instruction": i.op.mnemonic(), "form": i.form_key(),
                    "text": isa::render_for(a.arch, &i).unwrap_or_default()
                }),
                Err(e) => serde_json::json!({"input": input, "encoding": format_hex(word), "illegal": e.to_string()}),
            },
            Err(e) => {
                bad += 1;
                if first.is_empty() {
                    first = format!("{input}: {e}");
                }
                serde_json::json!({"input": input, "error": e})
            }
        };
        writeln!(w, "{v}").map_err(|e| CliError::input(format!("stdout: {e}")))
    };
    let word_of = |t: &str| match crate::isa::pasted(t) {
        crate::isa::Pasted::Word(w) => Ok(w),
        _ => parse_hex(t).map_err(|e| e.to_string()),
    };
    let r = if a.hex.is_empty() || a.hex == ["-"] {
        let mut pending: Option<Pending> = None;
        let r = crate::cli::for_each_line_of("-", |n, line| {
            let line = line.map_err(CliError::input)?;
            let p = crate::isa::pasted(line);
            if let Some(pd) = pending.take() {
                if let crate::isa::Pasted::High(hi) = p {
                    return one(format!("stdin:{}", pd.n), Ok((hi as u128) << 64 | pd.low as u128), &mut w);
                }
                one(format!("stdin:{}", pd.n), Err("a listing line without its high half on the next line".into()), &mut w)?;
            }
            match p {
                crate::isa::Pasted::Verbatim => Ok(()),
                crate::isa::Pasted::Low { low, .. } => {
                    pending = Some(Pending { n, low });
                    Ok(())
                }
                crate::isa::Pasted::High(_) => one(format!("stdin:{n}"), Err("a high half without the listing line before it".into()), &mut w),
                _ => one(format!("stdin:{n}"), word_of(line), &mut w),
            }
        });
        match pending.take() {
            Some(pd) if r.is_ok() => one(format!("stdin:{}", pd.n), Err("a listing line without its high half on the next line".into()), &mut w),
            _ => r,
        }
    } else {
        a.hex.iter().try_for_each(|h| one(crate::cli::excerpt(h, 80), word_of(h), &mut w))
    };
    let flushed = w.flush().map_err(|e| CliError::input(format!("stdout: {e}")));
    r?;
    flushed?;
    if bad > 0 {
        return Err(CliError::input(format!("{bad} inputs are not words (first: {first})")));
    }
    Ok(ExitCode::SUCCESS)
}

/// A batch of `decode`'s inputs: each a word, or why it is not one (its `error:` line).
/// The words are kept apart from the (few) bad inputs, so that a run of words renders in
/// one call ([`isa::decode_lines_into`]) and an input takes 16 bytes.
struct Batch {
    /// by input: its word (0 for a bad input)
    words: Vec<u128>,
    /// the inputs that are not words: their place among the inputs, in order, and the line
    /// written for each (`error: why`, or a blank or `#` line as it came)
    bad: Vec<(usize, String)>,
}

impl Batch {
    fn new() -> Batch {
        Batch { words: Vec::with_capacity(BATCH), bad: Vec::new() }
    }
    fn len(&self) -> usize {
        self.words.len()
    }
    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
    fn clear(&mut self) {
        self.words.clear();
        self.bad.clear();
    }
}

/// `decode`'s output: inputs gathered in batches, which the render threads (one a CPU) take
/// piece by piece, render and write in order while this thread reads the next batch. Memory
/// is a few batches', whatever the input.
struct Output<'scope> {
    pending: Batch,
    to_writer: Option<std::sync::mpsc::SyncSender<Batch>>,
    /// batches the render threads are done with, to fill again
    spare: std::sync::mpsc::Receiver<Batch>,
    writers: Vec<std::thread::ScopedJoinHandle<'scope, Result<(), CliError>>>,
}

/// The text of inputs `range` of `batch`, one line each, appended to `out`.
fn render_lines(target: &'static Target, batch: &Batch, range: std::ops::Range<usize>, out: &mut String, cache: &mut isa::LineCache) {
    let mut at = range.start;
    let first_bad = batch.bad.partition_point(|(i, _)| *i < range.start);
    for (i, why) in batch.bad[first_bad..].iter().take_while(|(i, _)| *i < range.end) {
        isa::decode_lines_into_for(target, &batch.words[at..*i], out, cache);
        out.push_str(why);
        out.push('\n');
        at = i + 1;
    }
    isa::decode_lines_into_for(target, &batch.words[at..range.end], out, cache);
}

/// Inputs per batch (about a MiB of text).
const BATCH: usize = 1 << 14;
/// Inputs per piece of a batch that one thread renders.
const PIECE: usize = 1 << 11;

/// What the render threads share: the batches and whose turn it is to write.
#[derive(Default)]
struct Pool {
    /// The architecture of the words (None: the default, SM90).
    target: Option<&'static Target>,
    take: std::sync::Mutex<Take>,
    turn: std::sync::Mutex<Turn>,
    turned: std::sync::Condvar,
}

/// The pieces to take, in order.
#[derive(Default)]
struct Take {
    /// batches from the reader (None once writing failed: the reader's next send fails)
    batches: Option<std::sync::mpsc::Receiver<Batch>>,
    /// the batch being handed out, and its next piece's first line
    batch: Option<std::sync::Arc<Batch>>,
    next: usize,
    /// the sequence number of the next piece taken
    seq: u64,
}

/// How far the writing is: pieces written, in order; whether a write failed.
#[derive(Default)]
struct Turn {
    written: u64,
    failed: bool,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One render thread: takes the next piece (and its sequence number), renders it with its
/// own line cache, then waits for the pieces before it to be written and writes it. While
/// one thread writes, the others render: the write is not a step of its own.
fn render_and_write(pool: &Pool, spare: &std::sync::mpsc::SyncSender<Batch>) -> Result<(), CliError> {
    // made while the reader reads the first batch, not when the first words arrive
    isa::prepare_decode();
    let mut cache = isa::LineCache::default();
    let mut text = String::new();
    loop {
        let (batch, lines, seq) = {
            let mut t = lock(&pool.take);
            if t.batch.is_none() {
                let next = match &t.batches {
                    Some(rx) => rx.recv().ok(),
                    None => None,
                };
                let Some(b) = next else { return Ok(()) };
                (t.batch, t.next) = (Some(std::sync::Arc::new(b)), 0);
            }
            let Some(b) = t.batch.clone() else { continue };
            let from = t.next;
            t.next = (from + PIECE).min(b.len());
            if t.next == b.len() {
                // the last piece: the threads rendering hold the batch, the last gives it back
                t.batch = None;
            }
            let seq = t.seq;
            t.seq += 1;
            (b, from..t.next, seq)
        };
        text.clear();
        render_lines(pool.target.unwrap_or(Target::DEFAULT), &batch, lines, &mut text, &mut cache);
        if let Some(mut b) = std::sync::Arc::into_inner(batch) {
            b.clear();
            let _ = spare.try_send(b);
        }
        let mut turn = lock(&pool.turn);
        while turn.written != seq && !turn.failed {
            turn = pool.turned.wait(turn).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if turn.failed {
            // the thread whose write failed reports it
            return Ok(());
        }
        let r = std::io::stdout().lock().write_all(text.as_bytes());
        match r {
            Ok(()) => turn.written += 1,
            Err(_) => turn.failed = true,
        }
        drop(turn);
        pool.turned.notify_all();
        if let Err(e) = r {
            // the reader's next batch is refused, so it stops reading
            lock(&pool.take).batches = None;
            return Err(CliError::input(format!("stdout: {e}")));
        }
    }
}

impl<'scope> Output<'scope> {
    fn start<'env>(s: &'scope std::thread::Scope<'scope, 'env>, pool: &'scope mut Pool) -> Self {
        let (to_writer, batches) = std::sync::mpsc::sync_channel(1);
        let (give_back, spare) = std::sync::mpsc::sync_channel(2);
        pool.take.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).batches = Some(batches);
        let pool = &*pool;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let writers = (0..threads)
            .map(|_| {
                let give_back = give_back.clone();
                s.spawn(move || render_and_write(pool, &give_back))
            })
            .collect();
        Output { pending: Batch::new(), to_writer: Some(to_writer), spare, writers }
    }

    fn word(&mut self, w: u128) -> Result<(), CliError> {
        self.pending.words.push(w);
        self.send_if_full()
    }

    /// An input that may not be a word (`first` names it if it is the first bad one).
    fn text(&mut self, t: &str, first: impl FnOnce() -> String, tally: &mut BadInputs) -> Result<(), CliError> {
        match parse_hex(t) {
            Ok(w) => self.word(w),
            Err(e) => self.bad(e.to_string(), Some(first()), tally),
        }
    }

    /// An `error: why` line for an input that is not a word; `first` names it in the summary
    /// (default: `why` itself).
    fn bad(&mut self, why: String, first: Option<String>, tally: &mut BadInputs) -> Result<(), CliError> {
        tally.bad += 1;
        if tally.bad == 1 {
            tally.first = first.unwrap_or_else(|| why.clone());
        }
        self.verbatim(format!("error: {why}"))
    }

    /// A line written as it is (a blank or `#` input line, or `error: ...`).
    fn verbatim(&mut self, line: String) -> Result<(), CliError> {
        self.pending.bad.push((self.pending.words.len(), line));
        self.pending.words.push(0);
        self.send_if_full()
    }

    fn send_if_full(&mut self) -> Result<(), CliError> {
        if self.pending.len() >= BATCH {
            self.send()?;
        }
        Ok(())
    }

    /// Hand the pending inputs to the writer; its error if it stopped (stdout closed).
    fn send(&mut self) -> Result<(), CliError> {
        let next = self.spare.try_recv().unwrap_or_else(|_| Batch::new());
        let batch = std::mem::replace(&mut self.pending, next);
        match self.to_writer.as_ref().map(|t| t.send(batch)) {
            Some(Ok(())) => Ok(()),
            _ => self.join(),
        }
    }

    /// The render threads' result once they have stopped: the first error, else stdout flushed.
    fn join(&mut self) -> Result<(), CliError> {
        self.to_writer = None;
        let mut r = Ok(());
        for w in self.writers.drain(..) {
            let e = w.join().unwrap_or_else(|_| Err(CliError::failed("decode: a render thread panicked")));
            if r.is_ok() {
                r = e;
            }
        }
        r.and_then(|()| std::io::stdout().flush().map_err(|e| CliError::input(format!("stdout: {e}"))))
    }

    /// Write what is pending and wait for the writer.
    fn finish(mut self) -> Result<(), CliError> {
        if !self.pending.is_empty() {
            self.send()?;
        }
        self.join()
    }
}

/// The inputs `decode` could not read as words: how many, and the first.
#[derive(Default)]
struct BadInputs {
    bad: usize,
    first: String,
}

#[derive(Args)]
#[command(after_help = "\
The text may be a line of nvdisasm's or cuobjdump's listing (/*0040*/ HMUL2 R0, R1, R2 ; \
/* 0x... */): the address and comments are left out. Constant operands are taken with or \
without nvdisasm's space (c[0x3] [0x10], c[0x3][0x10]). With no text (or `-`), stdin's lines \
are encoded one a line: blank and # lines, and a listing's second line (/* 0x... */), are \
written as they are (the second line blank), so line N in is line N out; a line that is not \
an instruction is `error: <reason>` (then exit 2).

The text does not hold the scheduling bits (stall, yield, scoreboards, wait mask): encode \
uses stall=1,yield=0,wbar=none,rbar=none,wait=0x00 (yield=1 when a .reuse is shown, as \
nvdisasm shows .reuse only then) unless --sched says otherwise, and says on stderr which it used.")]
pub struct EncodeArgs {
    /// Instruction text as nvdisasm prints it, e.g. 'HMUL2.FTZ R0, -R1.H0_H0, c[0x3] [0x10]'.
    // (the help text as the user reads it, not Markdown: its brackets are no links)
    #[allow(rustdoc::broken_intra_doc_links)]
    pub text: Vec<String>,
    /// Scheduling bits, any of stall=0..15,yield=0|1,wbar=0..5|none,rbar=0..5|none,wait=0x00..0x3f
    /// (comma-separated; the others keep their defaults).
    #[arg(long, value_parser = parse_sched)]
    pub sched: Option<Sched>,
    /// JSON Lines: {"input", "encoding", "text", "sched"} or {"input", "error"}.
    #[arg(long)]
    pub json: bool,
    /// The architecture to encode for: nvdisasm's spelling (SM86) or ptxas's (sm_86).
    #[arg(long, value_parser = parse_arch, value_name = ARCH_VALUE, default_value = "SM90")]
    pub arch: &'static Target,
}

/// `--sched`: the scheduling bits given; the rest keep [`isa::Control::default`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sched {
    stall: Option<u8>,
    yield_: Option<bool>,
    wr_bar: Option<u8>,
    rd_bar: Option<u8>,
    wait: Option<u8>,
}

/// Parse `--sched stall=2,yield=1,wbar=none,...`.
pub fn parse_sched(s: &str) -> Result<Sched, String> {
    let mut o = Sched::default();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| format!("{part:?}: expected key=value"))?;
        let num = |max: u32| -> Result<u8, String> {
            let n = match v.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => v.parse::<u32>().ok(),
            };
            n.filter(|&n| n <= max).map(|n| n as u8).ok_or_else(|| format!("{k}={v}: expected 0..={max}"))
        };
        let bar = || if v == "none" { Ok(7) } else { num(5) };
        match k {
            "stall" => o.stall = Some(num(15)?),
            "yield" => o.yield_ = Some(num(1)? == 1),
            "wbar" => o.wr_bar = Some(bar()?),
            "rbar" => o.rd_bar = Some(bar()?),
            "wait" => o.wait = Some(num(0x3f)?),
            _ => return Err(format!("unknown key {k:?} (stall, yield, wbar, rbar, wait)")),
        }
    }
    Ok(o)
}

/// How `--sched` spells a control word's scheduling bits.
fn sched_text(c: &isa::Control) -> String {
    let bar = |b: u8| if b == 7 { "none".to_string() } else { b.to_string() };
    format!("stall={},yield={},wbar={},rbar={},wait={:#04x}", c.stall, c.yield_ as u8, bar(c.wr_bar), bar(c.rd_bar), c.wait)
}

/// The word of one text with `--sched`'s bits; the scheduling bits used.
fn encode_one(target: &'static Target, text: &str, sched: Option<Sched>) -> Result<(u128, isa::Inst), String> {
    let t = isa::listing_text(text);
    let mut inst = isa::parse_for(target, t).map_err(|e| e.to_string())?;
    if let Some(s) = sched {
        let c = &mut inst.ctrl;
        c.stall = s.stall.unwrap_or(c.stall);
        c.wr_bar = s.wr_bar.unwrap_or(c.wr_bar);
        c.rd_bar = s.rd_bar.unwrap_or(c.rd_bar);
        c.wait = s.wait.unwrap_or(c.wait);
        if s.yield_ == Some(false) && c.reuse != 0 {
            return Err(format!("{:?}: --sched yield=0, but nvdisasm shows .reuse only with yield=1", crate::cli::excerpt(t, 80)));
        }
        c.yield_ = s.yield_.unwrap_or(c.yield_);
    }
    let word = isa::encode_for(target, &inst).map_err(|e| format!("{:?}: {e}", crate::cli::excerpt(t, 80)))?;
    Ok((word, inst))
}

pub fn encode(a: EncodeArgs) -> CliResult {
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let (mut bad, mut first, mut used) = (0usize, String::new(), None::<isa::Control>);
    let single = a.text.len() == 1 && a.text[0] != "-";
    let mut one = |input: &str, line: &str, w: &mut std::io::BufWriter<std::io::StdoutLock>| -> Result<(), CliError> {
        let out = match (isa::pasted(line), encode_one(a.arch, line, a.sched)) {
            (isa::Pasted::Verbatim, _) if !a.json => line.trim_end_matches('\r').to_string(),
            (isa::Pasted::High(_), _) if !a.json => String::new(),
            (isa::Pasted::Verbatim | isa::Pasted::High(_), _) => return Ok(()),
            (_, Ok((word, inst))) => {
                used.get_or_insert(inst.ctrl);
                match a.json {
                    true => {
                        serde_json::json!({"input": input, "encoding": format_hex(word), "text": isa::render_for(a.arch, &inst).unwrap_or_default(), "sched": sched_text(&inst.ctrl)})
                            .to_string()
                    }
                    false => format_hex(word),
                }
            }
            (_, Err(e)) => {
                bad += 1;
                if first.is_empty() {
                    first = format!("{input}: {e}");
                }
                if single && !a.json {
                    // one text: its error is the command's, said once
                    return Ok(());
                }
                match a.json {
                    true => serde_json::json!({"input": input, "error": e}).to_string(),
                    false => format!("error: {e}"),
                }
            }
        };
        writeln!(w, "{out}").map_err(|e| CliError::input(format!("stdout: {e}")))
    };
    let r = if a.text.is_empty() || a.text == ["-"] {
        crate::cli::for_each_line_of("-", |n, line| one(&format!("stdin:{n}"), line.map_err(CliError::input)?, &mut w))
    } else {
        a.text.iter().try_for_each(|t| one(&crate::cli::excerpt(t, 80), t, &mut w))
    };
    let flushed = w.flush().map_err(|e| CliError::input(format!("stdout: {e}")));
    r?;
    flushed?;
    // (on bad input, the one error line alone: it is what the user must read)
    if let Some(c) = used.filter(|_| bad == 0) {
        let how = if a.sched.is_some() { "from --sched" } else { "not in the text: --sched sets them" };
        crate::errln!("encode: scheduling bits {} ({how})", sched_text(&c));
    }
    match bad {
        0 => Ok(ExitCode::SUCCESS),
        1 if single => Err(CliError::input(first.split_once(": ").map_or(first.clone(), |(_, e)| e.to_string()))),
        _ => Err(CliError::input(format!("{bad} inputs are not instructions (first: {first})"))),
    }
}

#[derive(Args)]
pub struct GenerateArgs {
    /// Seed; drawn from the clock (and printed) when absent.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of encodings.
    #[arg(long, default_value_t = 16)]
    pub count: u64,
    /// Instructions, comma-separated nvdisasm mnemonics (HMUL2,HADD2,HFMA2,HFMA2.MMA,HSET2,HSETP2,HMNMX2);
    /// default: every one the project describes.
    #[arg(long = "instruction", value_parser = parse_ops_arg)]
    pub instruction: Option<OpList>,
    /// Restrict to one form: rrr, imm, const, constx, ur (two sources: HMUL2, HADD2); rrrr, imm,
    /// const, constx, ur (special source is operand 2), imm-c, const-c, constx-c, ur-c (it is
    /// operand 3) for HFMA2 and HFMA2.MMA; or a spec key such as HFMA2_R_R_R_I_I.
    #[arg(long, value_parser = parse_form)]
    pub form: Option<Form>,
    /// Share (0..1) of encodings nvdisasm rejects.
    #[arg(long, default_value_t = 0.0)]
    pub illegal_share: f64,
    /// Share (0..1) of encodings with INVALIDn field values.
    #[arg(long, default_value_t = 0.0)]
    pub invalid_share: f64,
    /// Share (0..1) of encodings with bits set that nvdisasm ignores.
    #[arg(long, default_value_t = 0.0)]
    pub ignored_share: f64,
    /// Every modifier combination of --form instead of random encodings (--count is ignored).
    #[arg(long)]
    pub factorial: bool,
    /// JSON Lines: encoding, text, form, legal, reason.
    #[arg(long)]
    pub json: bool,
    /// Print field-value coverage of what was emitted to stderr.
    #[arg(long)]
    pub coverage: bool,
    /// The architecture to generate for: nvdisasm's spelling (SM86) or ptxas's (sm_86).
    #[arg(long, value_parser = parse_arch, value_name = ARCH_VALUE, default_value = "SM90")]
    pub arch: &'static Target,
}

fn check_share(name: &str, v: f64) -> Result<(), CliError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(CliError::input(format!("--{name} {v} is outside 0..1")))
    }
}

pub fn generate(a: GenerateArgs) -> CliResult {
    check_share("illegal-share", a.illegal_share)?;
    check_share("invalid-share", a.invalid_share)?;
    check_share("ignored-share", a.ignored_share)?;
    if a.factorial && a.form.is_none() {
        return Err(CliError::input("--factorial needs --form"));
    }
    check_form(&ops_or_all(&a.instruction), a.form)?;
    sm90_generator_only(
        a.arch,
        &[
            ("--form", a.form.is_some()),
            ("--factorial", a.factorial),
            ("--invalid-share", a.invalid_share > 0.0),
            ("--ignored-share", a.ignored_share > 0.0),
            ("--coverage", a.coverage),
        ],
    )?;
    let target_ops = ops_for(&a.instruction, a.arch)?;
    let seed = resolve_seed(a.seed);
    // random words are written as they are drawn: any --count streams in constant memory
    let words: Box<dyn Iterator<Item = Result<u128, CliError>>> = match a.form.filter(|_| a.factorial) {
        _ if a.arch.spec_overlay.is_some() => Box::new(target_words(a.arch, target_ops.clone(), seed, a.count, a.illegal_share).map(Ok)),
        Some(form) => Box::new(
            ops_or_all(&a.instruction)
                .into_iter()
                .filter(move |o| o.has_form(form))
                .flat_map(move |o| gen::factorial(o, form, seed))
                .map(|i| isa::encode(&i).map_err(|e| CliError::input(e.to_string()))),
        ),
        None => {
            let o = GenOptions {
                seed,
                ops: ops_or_all(&a.instruction),
                form: a.form,
                illegal_share: a.illegal_share,
                invalid_share: a.invalid_share,
                ignored_share: a.ignored_share,
            };
            Box::new((0..a.count).map(move |i| Ok(gen::generate_one(&o, i))))
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut coverage = crate::gen::CoverageCounter::default();
    for w in words {
        let w = w?;
        if a.coverage {
            coverage.add(w);
        }
        let line = if a.json {
            let d = isa::decode_for(a.arch, w);
            serde_json::json!({
                "encoding": format_hex(w),
                "legal": d.is_ok(),
                "instruction": d.as_ref().ok().map(|i| i.op.mnemonic()),
                "form": d.as_ref().ok().map(|i| i.form_key()),
                "text": d.as_ref().ok().and_then(|i| isa::render_for(a.arch, i)),
                "reason": d.as_ref().err().map(|e| e.to_string()),
            })
            .to_string()
        } else {
            format_hex(w)
        };
        writeln!(out, "{line}").map_err(|e| CliError::input(format!("stdout: {e}")))?;
    }
    out.flush().map_err(|e| CliError::input(format!("stdout: {e}")))?;
    if a.coverage {
        crate::errp!("{}", coverage.finish().table());
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct OracleArgs {
    /// Seed; drawn from the clock (and printed) when absent.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of random encodings.
    #[arg(long, default_value_t = 20000)]
    pub count: u64,
    /// Instructions, comma-separated nvdisasm mnemonics (HMUL2,HADD2,HFMA2,HFMA2.MMA,HSET2,HSETP2,HMNMX2);
    /// default: every one the project describes.
    #[arg(long = "instruction", value_parser = parse_ops_arg)]
    pub instruction: Option<OpList>,
    /// Restrict to one form.
    #[arg(long, value_parser = parse_form)]
    pub form: Option<Form>,
    /// Share of encodings nvdisasm must reject.
    #[arg(long, default_value_t = 0.01)]
    pub illegal_share: f64,
    /// Share of encodings with INVALIDn values.
    #[arg(long, default_value_t = 0.25)]
    pub invalid_share: f64,
    /// Share of encodings with ignored bits set.
    #[arg(long, default_value_t = 0.1)]
    pub ignored_share: f64,
    /// Also every value of every field set one at a time, and the spec's errata words.
    #[arg(long)]
    pub fields: bool,
    /// Write the report (totals, mismatches, coverage) as JSON to this file (what `report
    /// --oracle` reads).
    #[arg(long, value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,
    /// The nvdisasm to compare with (default: $HMUL2_NVDISASM, the project's .tools/bin, PATH).
    #[arg(long, value_name = "PATH")]
    pub nvdisasm: Option<std::path::PathBuf>,
    /// The architecture whose encodings to judge (`nvdisasm -b` it): nvdisasm's spelling (SM86)
    /// or ptxas's (sm_86).
    #[arg(long, value_parser = parse_arch, value_name = ARCH_VALUE, default_value = "SM90")]
    pub arch: &'static Target,
}

/// Words of the errata and evidence in the specs of `ops`.
pub fn errata_words(ops: &[isa::Op]) -> Vec<u128> {
    ops.iter().flat_map(|o| o.spec().errata.iter()).flat_map(|e| e.words.iter()).filter_map(|w| parse_hex(&w.hex).ok()).collect()
}

pub fn oracle(a: OracleArgs) -> CliResult {
    check_share("illegal-share", a.illegal_share)?;
    check_share("invalid-share", a.invalid_share)?;
    check_share("ignored-share", a.ignored_share)?;
    check_form(&ops_or_all(&a.instruction), a.form)?;
    // (the shares' defaults are SM90's generator's: another target's takes --illegal-share alone)
    sm90_generator_only(a.arch, &[("--form", a.form.is_some())])?;
    let ops = ops_for(&a.instruction, a.arch)?;
    let nv = Nvdisasm::locate(a.nvdisasm.as_deref()).map_err(|e| CliError::input(e.to_string()))?.for_target(a.arch);
    let seed = resolve_seed(a.seed);
    let mut words = vec_for("--count", a.count)?;
    if a.arch.spec_overlay.is_some() {
        words.extend(target_words(a.arch, ops.clone(), seed, a.count, a.illegal_share));
        if a.fields {
            for &op in &ops {
                words.extend(gen::one_field_at_a_time_for(a.arch, op));
                let errata = op.spec_for(a.arch).into_iter().flat_map(|s| s.errata.iter()).flat_map(|e| e.words.iter());
                words.extend(errata.filter_map(|w| parse_hex(&w.hex).ok()));
            }
        }
    } else {
        let o =
            GenOptions { seed, ops: ops.clone(), form: a.form, illegal_share: a.illegal_share, invalid_share: a.invalid_share, ignored_share: a.ignored_share };
        words.extend((0..a.count).map(|i| gen::generate_one(&o, i)));
        if a.fields {
            for &op in &ops {
                words.extend(gen::one_field_at_a_time(op));
            }
            words.extend(errata_words(&ops));
        }
    }
    let t = std::time::Instant::now();
    let rep = oracle::compare(&nv, &words).map_err(|e| CliError::input(e.to_string()))?;
    for m in &rep.mismatches {
        crate::outln!("mismatch {m}")?;
    }
    crate::outln!(
        "oracle {}: {} words, {} same text, {} rejected by both, {} mismatches ({} nvdisasm calls, {} verdicts from its cache{}, {:.1} s, {})",
        a.arch,
        rep.words,
        rep.agreed_text,
        rep.agreed_illegal,
        rep.mismatches.len(),
        rep.nvdisasm_calls,
        rep.cached,
        nv.cache.as_ref().map(|c| format!(" {}", c.dir().display())).unwrap_or_else(|| " (off)".into()),
        t.elapsed().as_secs_f64(),
        nv.version().unwrap_or_default()
    )?;
    if let Some(path) = &a.report {
        let ok = rep.ok();
        // (the coverage table reads SM90's fields)
        let coverage = a.arch.spec_overlay.is_none().then(|| Coverage::of(&words));
        let v = crate::schema::OracleFile { seed, report: rep, coverage };
        crate::outfile::write_atomic(path, serde_json::to_string_pretty(&v).unwrap_or_default().as_bytes())
            .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
        return Ok(exit_for(ok));
    }
    Ok(exit_for(rep.ok()))
}

#[derive(Args)]
pub struct ErrataArgs {}

/// docs/seed-errata.md, generated from the spec (a test keeps the committed file equal to it).
pub fn errata_markdown() -> String {
    // the seed page is HMUL2's: the only instruction that started from one
    let s = isa::Op::Hmul2.spec();
    let mut md = String::from(
        "# Seed-page errata\n\nThe seed page (`harness/spec/sm90/hmul2-seed-page.txt`) was derived by fuzzing a disassembler. \
Where `nvdisasm -b SM90` (13.2) disagrees with it, nvdisasm wins; each correction below is recorded in \
`harness/spec/sm90/hmul2.json` and re-checked against nvdisasm by the oracle test. Generated by \
`hmul2-harness errata`; do not edit by hand.\n",
    );
    for e in &s.errata {
        md += &format!(
            "\n## {}\n\n- forms: {}\n- fields: {}\n- seed page says: {}\n- nvdisasm shows: {}\n\n| word | nvdisasm |\n|---|---|\n",
            e.id,
            e.forms.join(", "),
            e.fields.join(", "),
            e.seed,
            e.nvdisasm
        );
        for w in &e.words {
            md += &format!("| `{}` | `{}` |\n", w.hex, w.nvdisasm.replace('|', "\\|"));
        }
    }
    md
}

pub fn errata(_a: ErrataArgs) -> CliResult {
    crate::out!("{}", errata_markdown())?;
    Ok(ExitCode::SUCCESS)
}

/// `hmul2-harness gpu-info`.
#[derive(clap::Args)]
pub struct GpuInfoArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds the driver may take to answer (detection runs in a child process, stopped at
    /// this limit: a driver that hangs or crashes is reported, never waited on).
    #[arg(long, default_value_t = crate::run::DETECT_TIMEOUT_S, value_parser = crate::run::seconds_arg)]
    pub timeout: f64,
}

pub fn gpu_info(a: GpuInfoArgs) -> crate::cli::CliResult {
    let exe = std::env::current_exe().map_err(|e| CliError::input(format!("cannot find this program to detect the driver: {e}")))?;
    let d = crate::gpu::detect::detect_in_worker(&exe, std::time::Duration::from_secs_f64(a.timeout), &[]);
    if a.json {
        crate::outln!("{}", serde_json::to_string_pretty(&d).unwrap_or_default())?;
    } else {
        crate::out!("{}", d.text())?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `hmul2-harness worker` (hidden): the child process that executes jobs from stdin.
#[derive(Args)]
pub struct WorkerArgs {
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: i32,
    /// Detect the driver and devices, print them as JSON and exit (what `gpu-info` and
    /// `run` ask a child for, so a hanging or crashing driver costs only the child).
    #[arg(long)]
    pub detect: bool,
    /// The architecture the device must be (SM86 or sm_86); default: any the harness speaks.
    #[arg(long, value_parser = parse_arch, value_name = ARCH_VALUE)]
    pub arch: Option<&'static crate::target::Target>,
}

pub fn worker(a: WorkerArgs) -> CliResult {
    if a.detect {
        return crate::gpu::detect::detect_main();
    }
    crate::gpu::worker::worker_main(a.device, a.arch)
}
