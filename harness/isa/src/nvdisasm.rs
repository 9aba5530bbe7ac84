//! NVIDIA's disassembler as an oracle: finds the pinned binary, disassembles words in
//! batches, and isolates the words it rejects.
//!
//! nvdisasm prints no listing for a file that holds an illegal word, but names the address
//! of every illegal word; a second call on the rest lists them. A call costs ~0.3 s of
//! start-up and ~20 µs a word, so batches are large and a batch costs two calls, and a word
//! the tool has judged before is not asked again ([`cache`]).

pub mod cache;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tool could not be found or run.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{tool} not found (looked in {looked}); install it with `bash ci/install-tools.sh`, put it on PATH or set {env}")]
    NotFound { tool: String, looked: String, env: String },
    #[error("{tool}: {msg}")]
    Failed { tool: String, msg: String },
    #[error("{tool} did not finish within {limit_s} s and was killed ({why})")]
    Timeout { tool: String, limit_s: u64, why: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The variable that sets how long one call of an external tool may take, in seconds.
pub const TOOL_TIMEOUT_ENV: &str = "HMUL2_TOOL_TIMEOUT";
/// The limit of a call when the variable is not set: this much for the tool's start, plus
/// [`TOOL_MS_PER_WORD`] for each word it is given. nvdisasm answers a batch of 16,384 words in
/// about a second (up to 3 s on a loaded 2-core machine), so a batch's limit, 31 s, is ten
/// times what it needs at worst, and a hang is called one within half a minute, not five.
pub const TOOL_BASE_S: u64 = 15;
/// See [`TOOL_BASE_S`].
pub const TOOL_MS_PER_WORD: u64 = 1;

/// The default limit of a call given `words` words: [`TOOL_BASE_S`] and [`TOOL_MS_PER_WORD`].
pub fn scaled_limit(words: usize) -> std::time::Duration {
    std::time::Duration::from_millis(TOOL_BASE_S * 1000 + TOOL_MS_PER_WORD * words as u64)
}

/// How long one call of an external tool given `words` words may take, and how the limit
/// was set (for the message of a call killed at it): `$HMUL2_TOOL_TIMEOUT` seconds when set,
/// else scaled to the work ([`TOOL_BASE_S`]).
pub fn tool_timeout(words: usize) -> Result<(std::time::Duration, String), ToolError> {
    match std::env::var(TOOL_TIMEOUT_ENV) {
        Err(_) => {
            let why = format!("{TOOL_BASE_S} s and {TOOL_MS_PER_WORD} ms for each of its {words} words; ${TOOL_TIMEOUT_ENV} sets a limit in seconds");
            Ok((scaled_limit(words), why))
        }
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok((std::time::Duration::from_secs(n), format!("the limit is ${TOOL_TIMEOUT_ENV}, in seconds"))),
            _ => Err(ToolError::Failed { tool: TOOL_TIMEOUT_ENV.into(), msg: format!("{v:?} is not a positive number of seconds") }),
        },
    }
}

/// Run `cmd` to the end, its output captured, within the time limit of a call given `words`
/// words ([`tool_timeout`]): a tool that hangs is killed and is an error naming it and the
/// limit, never a wait without end.
pub fn output_within(cmd: &mut Command, tool: &str, words: usize) -> Result<std::process::Output, ToolError> {
    use std::io::Read;
    use std::process::Stdio;
    let (limit, why) = tool_timeout(words)?;
    let program = std::path::PathBuf::from(cmd.get_program()).display().to_string();
    let failed = |e: std::io::Error| ToolError::Failed { tool: program.clone(), msg: format!("cannot run: {e}") };
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // its own process group, so that a hung tool is killed with whatever it started
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd.spawn().map_err(failed)?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(child.stdout.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().map_err(failed)? {
            break st;
        }
        if start.elapsed() >= limit {
            #[cfg(unix)]
            // SAFETY: a plain kill(2) of the group this call created
            unsafe {
                libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            return Err(ToolError::Timeout { tool: tool.into(), limit_s: limit.as_secs(), why });
        }
        std::thread::sleep(std::time::Duration::from_millis(5).min(limit / 10));
    };
    let join = |h: std::thread::JoinHandle<Vec<u8>>| h.join().unwrap_or_default();
    Ok(std::process::Output { status, stdout: join(out), stderr: join(err) })
}

/// The one rule by which every command finds an NVIDIA tool (`--help` says it too).
pub const TOOL_RULE: &str = "the path a command's flag gives (--nvdisasm), else $HMUL2_NVDISASM \
($HMUL2_PTXAS, $HMUL2_CUOBJDUMP), else .tools/bin of the project the program lies in (a \
checkout whose target/ folder holds it, where `bash ci/install-tools.sh` installs them), else PATH";

/// `.tools/bin` of the project the running program lies in: the folder holding the `target/`
/// folder the program was built into (`<project>/target/<profile>/`, or `deps/` below it),
/// when that folder is a checkout (it holds `harness/spec/sm90`). A copied or installed
/// program has none. Never a `.tools` up the working folder's ancestors, nor above a
/// program outside a `target/`: a file planted in a parent folder (under /tmp, say) would
/// run as NVIDIA's tool.
pub fn project_tools() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let target = exe.ancestors().skip(1).take(3).find(|d| d.file_name().is_some_and(|n| n == "target"))?;
    let root = target.parent()?;
    root.join("harness/spec/sm90").is_dir().then(|| root.join(".tools").join("bin"))
}

/// Locate a pinned NVIDIA tool by [`TOOL_RULE`]: `given` (a command's flag), else
/// `$HMUL2_<TOOL>`, else [`project_tools`], else `PATH`. A path given or a variable set that
/// names no file is an error, never a silent fall-back to another tool.
pub fn locate_tool(name: &str, given: Option<&Path>) -> Result<PathBuf, ToolError> {
    let env = format!("HMUL2_{}", name.to_ascii_uppercase());
    let mut looked = Vec::new();
    if let Some(p) = given {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        return Err(ToolError::NotFound { tool: name.into(), looked: format!("--{name} {}, which is not a file", p.display()), env });
    }
    if let Some(p) = std::env::var_os(&env).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(ToolError::NotFound { tool: name.into(), looked: format!("${env} = {}, which is not a file", p.display()), env });
    }
    if let Some(tools) = project_tools() {
        let p = tools.join(name);
        if p.is_file() {
            return Ok(p);
        }
        looked.push(tools.display().to_string());
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
        looked.push("PATH".into());
    }
    Err(ToolError::NotFound { tool: name.into(), looked: looked.join(", "), env })
}

/// [`locate_tool`] with no flag given.
pub fn find_tool(name: &str) -> Result<PathBuf, ToolError> {
    locate_tool(name, None)
}

/// What nvdisasm made of one word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The instruction text, without address, `;` and comments.
    Text(String),
    /// nvdisasm refused the word; its message.
    Rejected(String),
    /// nvdisasm exited 0 and listed nothing at the word's address (it does for some words,
    /// e.g. HFMA2 with `.F32` and `.BF16_V2`, or `0x000fe20000000000000000020100720e`); the
    /// rest of the file is listed as usual.
    Empty,
}

/// A located nvdisasm.
#[derive(Clone, Debug)]
pub struct Nvdisasm {
    pub path: PathBuf,
    /// Words per call.
    pub batch: usize,
    /// Parallel calls.
    pub jobs: usize,
    /// Calls made so far (for reports and benches).
    pub calls: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The tool's remembered verdicts ([`cache::VerdictCache::from_env`]); None: every word
    /// is asked.
    pub cache: Option<cache::VerdictCache>,
    /// Verdicts taken from the cache so far (for reports).
    pub cached: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The architecture every call names (`-b`): [`Nvdisasm::for_target`] sets it, SM90 by default.
    pub target: &'static crate::target::Target,
}

impl Nvdisasm {
    pub fn find() -> Result<Nvdisasm, ToolError> {
        Nvdisasm::locate(None)
    }

    /// The nvdisasm of [`TOOL_RULE`], `given` being a command's `--nvdisasm`.
    pub fn locate(given: Option<&Path>) -> Result<Nvdisasm, ToolError> {
        Ok(Nvdisasm::at(locate_tool("nvdisasm", given)?))
    }

    pub fn at(path: PathBuf) -> Nvdisasm {
        let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(8);
        let cache = cache::VerdictCache::from_env(&path, Self::arch());
        Nvdisasm { path, batch: 16384, jobs, calls: Default::default(), cache, cached: Default::default(), target: crate::target::Target::DEFAULT }
    }

    /// The same tool asked about `target`'s words (`-b SM86`); its cache is that
    /// architecture's.
    pub fn for_target(mut self, target: &'static crate::target::Target) -> Nvdisasm {
        if self.cache.is_some() {
            self.cache = cache::VerdictCache::from_env(&self.path, target.nvdisasm);
        }
        self.target = target;
        self
    }

    /// The same tool, asked about every word (no cache).
    pub fn without_cache(mut self) -> Nvdisasm {
        self.cache = None;
        self
    }

    /// The architecture a call names (`-b`) by default: the default target's nvdisasm
    /// spelling, which is also every base spec's `arch` (a spec test checks).
    pub fn arch() -> &'static str {
        crate::target::Target::DEFAULT.nvdisasm
    }

    /// `nvdisasm --version`'s release line.
    pub fn version(&self) -> Result<String, ToolError> {
        let out = output_within(Command::new(&self.path).arg("--version"), "nvdisasm", 0)?;
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.lines().rev().nth(1).unwrap_or("").trim().to_string())
    }

    /// Run nvdisasm once on `words`: Ok(texts), or Err(every rejected word's index, when its
    /// message names an address, and message). nvdisasm prints no listing when any word is
    /// illegal, but it names every illegal word by address; a message without one is a
    /// failure of the tool, which `run_isolated` reports as such.
    #[allow(clippy::type_complexity)]
    fn call(&self, words: &[u128], tmp: &Path) -> Result<Result<Vec<Option<String>>, Vec<(Option<usize>, String)>>, ToolError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let write = || -> std::io::Result<()> {
            let mut f = std::io::BufWriter::new(std::fs::File::create(tmp)?);
            for w in words {
                f.write_all(&w.to_le_bytes())?;
            }
            f.flush()
        };
        write().map_err(|e| ToolError::Failed { tool: "nvdisasm".into(), msg: format!("{}: {e}", tmp.display()) })?;
        let out = output_within(Command::new(&self.path).args(["-b", self.target.nvdisasm]).arg(tmp), "nvdisasm", words.len())?;
        if out.status.success() {
            // a word with no line is one nvdisasm printed nothing for (the oracle compares that
            // verdict like any other: a word the spec expects text for is a mismatch)
            return Ok(Ok(parse_listing(&String::from_utf8_lossy(&out.stdout), words.len())));
        }
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code().is_none() {
            // killed by a signal: whatever it printed, no word was judged
            let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
            return Err(ToolError::Failed { tool: "nvdisasm".into(), msg: format!("{} ({last})", out.status) });
        }
        let mut rejected = Vec::new();
        for line in err.lines().filter(|l| !l.contains("Illegal instruction found")) {
            let msg = line.trim();
            let msg = msg.strip_prefix("nvdisasm error").map(|m| m.trim_start_matches([' ', ':']).trim()).unwrap_or(msg);
            if msg.is_empty() {
                continue;
            }
            let at = msg.rfind("at address 0x").and_then(|p| {
                let hex: String = msg[p + 13..].chars().take_while(|c| c.is_ascii_hexdigit()).collect();
                usize::from_str_radix(&hex, 16).ok()
            });
            let index = at.map(|a| a / 16).filter(|&i| i < words.len());
            let clean = match msg.rfind(" at address") {
                Some(p) => msg[..p].to_string(),
                None => msg.to_string(),
            };
            rejected.push((index, clean));
        }
        if rejected.is_empty() {
            return Err(ToolError::Failed { tool: "nvdisasm".into(), msg: format!("exited with {} and no message", out.status) });
        }
        Ok(Err(rejected))
    }

    /// Verdicts for `words`: one call names every rejected word, a second lists the rest.
    fn run_isolated(&self, words: &[u128], tmp: &Path, out: &mut [Option<Verdict>]) -> Result<(), ToolError> {
        let mut pending: Vec<usize> = (0..words.len()).collect();
        while !pending.is_empty() {
            let batch: Vec<u128> = pending.iter().map(|&i| words[i]).collect();
            match self.call(&batch, tmp)? {
                Ok(texts) => {
                    for (&i, t) in pending.iter().zip(texts) {
                        out[i] = Some(t.map_or(Verdict::Empty, Verdict::Text));
                    }
                    return Ok(());
                }
                Err(rejected) => {
                    let located: Vec<(usize, String)> = rejected.iter().filter_map(|(k, m)| k.map(|k| (pending[k], m.clone()))).collect();
                    if located.is_empty() {
                        // nvdisasm names the address of every word it rejects; a failure that
                        // names none is the tool's (a crash, a fatal error), not a verdict
                        let (_, msg) = &rejected[0];
                        return Err(ToolError::Failed { tool: "nvdisasm".into(), msg: format!("failed naming no word ({msg})") });
                    }
                    for (i, m) in located {
                        out[i] = Some(Verdict::Rejected(m));
                    }
                    pending.retain(|&i| out[i].is_none());
                }
            }
        }
        Ok(())
    }

    /// One verdict per word, in order: the cache's where it has one, the tool's for the rest
    /// (each distinct word asked once), which the cache then keeps.
    pub fn disassemble(&self, words: &[u128]) -> Result<Vec<Verdict>, ToolError> {
        let Some(cache) = &self.cache else { return self.disassemble_live(words) };
        let mut out = cache.lookup(words);
        let mut ask: Vec<u128> = Vec::new();
        let mut seen = std::collections::HashMap::new();
        for (o, &w) in out.iter().zip(words) {
            if o.is_none() && !seen.contains_key(&w) {
                seen.insert(w, ask.len());
                ask.push(w);
            }
        }
        let hits = words.len() - out.iter().filter(|o| o.is_none()).count();
        self.cached.fetch_add(hits as u64, std::sync::atomic::Ordering::Relaxed);
        if !ask.is_empty() {
            let live = self.disassemble_live(&ask)?;
            cache.store(ask.iter().copied().zip(&live));
            for (o, w) in out.iter_mut().zip(words) {
                if o.is_none() {
                    *o = Some(live[seen[w]].clone());
                }
            }
        }
        out.into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| ToolError::Failed { tool: "nvdisasm".into(), msg: format!("no verdict for word {i}") }))
            .collect()
    }

    /// One verdict per word, in order, every one the tool's.
    pub fn disassemble_live(&self, words: &[u128]) -> Result<Vec<Verdict>, ToolError> {
        let mut out: Vec<Option<Verdict>> = vec![None; words.len()];
        // a private folder (mode 0700, unpredictable name, removed on return): no other user
        // of a shared temporary folder can plant or read the words' files
        let dir = tempfile::Builder::new()
            .prefix("hmul2-nvdisasm-")
            .tempdir()
            .map_err(|e| ToolError::Failed { tool: "nvdisasm".into(), msg: format!("a temporary folder in {}: {e}", std::env::temp_dir().display()) })?;
        let size = balanced_batch(words.len(), self.batch, self.jobs);
        let chunks: Vec<(&[u128], &mut [Option<Verdict>])> = words.chunks(size).zip(out.chunks_mut(size)).collect();
        let queue = std::sync::Mutex::new(chunks);
        let first_error: std::sync::Mutex<Option<ToolError>> = std::sync::Mutex::new(None);
        std::thread::scope(|s| {
            for j in 0..self.jobs.max(1) {
                let queue = &queue;
                let first_error = &first_error;
                // one file per thread in this call's own folder
                let tmp = dir.path().join(format!("words-{j}.bin"));
                s.spawn(move || {
                    loop {
                        let job = match queue.lock() {
                            Ok(mut q) => q.pop(),
                            Err(_) => None,
                        };
                        let Some((ws, slots)) = job else { break };
                        if let Err(e) = self.run_isolated(ws, &tmp, slots) {
                            if let Ok(mut fe) = first_error.lock() {
                                fe.get_or_insert(e);
                            }
                            break;
                        }
                    }
                    let _ = std::fs::remove_file(&tmp);
                });
            }
        });
        if let Some(e) = first_error.into_inner().ok().flatten() {
            return Err(e);
        }
        out.into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| ToolError::Failed { tool: "nvdisasm".into(), msg: format!("no verdict for word {i}") }))
            .collect()
    }
}

/// Fewer words than this are one batch, whatever the jobs: a call's start-up (~0.3 s of CPU)
/// outweighs the ~20 µs a word that splitting them would spread over the cores, and a run's
/// few hundred words on two jobs cost twice the CPU (four calls instead of two) for nothing.
pub const MIN_SPLIT: usize = 4096;

/// The batch size that splits `n` words into a multiple of `jobs` batches of at most `batch`
/// words, as equal as can be: 20,000 words on 2 jobs are two batches of 10,000, not
/// 16,384 + 3,616 (one core idle while the other works through most of them). Below
/// [`MIN_SPLIT`] words (and never above `batch`) they are one batch.
pub fn balanced_batch(n: usize, batch: usize, jobs: usize) -> usize {
    let (batch, jobs) = (batch.max(1), jobs.max(1));
    if n < MIN_SPLIT {
        return n.clamp(1, batch);
    }
    let k = n.div_ceil(batch).div_ceil(jobs).max(1) * jobs;
    n.div_ceil(k).max(1)
}

/// Instruction texts of a `nvdisasm -b` listing, indexed by address; None where the listing
/// has no line for a word (nvdisasm printed nothing for it).
fn parse_listing(stdout: &str, n: usize) -> Vec<Option<String>> {
    let mut texts: Vec<Option<String>> = vec![None; n];
    for line in stdout.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix("/*") else { continue };
        let Some(end) = rest.find("*/") else { continue };
        let addr = &rest[..end];
        if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let Ok(a) = usize::from_str_radix(addr, 16) else { continue };
        let body = &rest[end + 2..];
        let body = match body.find("/*") {
            Some(p) => &body[..p],
            None => body,
        };
        let body = body.trim().trim_end_matches(';').trim_end();
        if a % 16 == 0 && a / 16 < n {
            texts[a / 16] = Some(body.to_string());
        }
    }
    texts
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_calls_limit_scales_with_its_words_and_stays_far_below_five_minutes() {
        use super::scaled_limit;
        assert_eq!(scaled_limit(0).as_secs(), 15);
        // a full batch: ten times what nvdisasm needs on a loaded machine, and half a minute
        let batch = scaled_limit(16_384);
        assert!(batch.as_secs_f64() > 30.0 && batch.as_secs_f64() < 32.0, "{batch:?}");
        assert!(scaled_limit(1_000_000) > scaled_limit(16_384));
    }

    #[test]
    fn the_project_tools_are_those_of_the_checkout_this_test_was_built_in() {
        // this test's executable is target/<profile>/deps/... of the checkout
        let t = super::project_tools().expect("a checkout");
        assert!(t.ends_with(".tools/bin") && t.parent().and_then(|p| p.parent()).is_some_and(|r| r.join("harness/spec/sm90").is_dir()), "{}", t.display());
    }

    use super::*;

    #[test]
    fn parses_a_listing() {
        let l = "\t.headerflags\t@\"EF_CUDA_SM90\"\n        /*0000*/                   HMUL2 R0, R1, R2 ;            /* 0x0000000201007232 */\n                                                                 /* 0x000fe20000000000 */\n        /*0010*/                   HMUL2 R0, R0, -0.0 , 1 ;          /* 0x40003c0000007832 */\n";
        assert_eq!(parse_listing(l, 2), vec![Some("HMUL2 R0, R1, R2".to_string()), Some("HMUL2 R0, R0, -0.0 , 1".to_string())]);
        assert_eq!(parse_listing(l, 3)[2], None, "no line at an address: nvdisasm printed nothing for that word");
    }

    #[test]
    fn batches_are_balanced_over_the_jobs() {
        assert_eq!(balanced_batch(20_000, 16_384, 2), 10_000);
        assert_eq!(balanced_batch(100_000, 16_384, 2), 12_500, "8 batches, 4 a job");
        assert_eq!(balanced_batch(5, 16_384, 2), 5, "a few words are one call, not two");
        assert_eq!(balanced_batch(MIN_SPLIT - 1, 16_384, 2), MIN_SPLIT - 1);
        assert_eq!(balanced_batch(MIN_SPLIT, 16_384, 2), MIN_SPLIT / 2);
        assert_eq!(balanced_batch(100, 64, 2), 64, "never above the batch size");
        assert_eq!(balanced_batch(0, 16_384, 2), 1);
        assert_eq!(balanced_batch(40_000, 16_384, 1), 13_334);
        for n in [1usize, 7, 4095, 4096, 16_384, 16_385, 32_768, 99_999] {
            for jobs in 1..5 {
                let b = balanced_batch(n, 16_384, jobs);
                assert!(b <= 16_384 && n.div_ceil(b) <= n.div_ceil(16_384).div_ceil(jobs) * jobs, "{n} words, {jobs} jobs: {b}");
                assert!(n >= MIN_SPLIT || b == n, "{n} words, {jobs} jobs: {b}");
            }
        }
    }
}
