//! Fault isolation: jobs run in a child process (`hmul2-harness worker`), because an
//! illegal-instruction fault leaves a CUDA context, and so the process, unusable.
//!
//! Child: says hello (or why it cannot run), then answers job frames on stdout until stdin
//! closes; after a fault it answers and exits. Parent ([`WorkerExecutor`]): spawns the
//! child lazily, reads its frames on a thread so a hung kernel becomes a timeout, and
//! reports a dead child as [`ExecError::WorkerDied`]; the next job starts a fresh child.

use super::protocol::{self, FrameError, KIND_JOB, KIND_SETUP};
use super::{ExecError, Executor, FAKE_ENV};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// Hello frame: the worker is ready; payload names what executes (device or "simulated").
pub const KIND_HELLO: u8 = 5;

/// The child's main loop. Exit codes: 0 stdin closed; 3 after a fault; 4 setup failed;
/// 5 protocol error.
/// `arch`: the architecture the device must be (`worker --arch`); None: any the harness speaks.
pub fn worker_main(device: i32, arch: Option<&'static harness_isa::target::Target>) -> crate::cli::CliResult {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut exec: Box<dyn Executor> = match std::env::var(FAKE_ENV) {
        Ok(spec) => match super::fake::FakeExecutor::parse(&spec) {
            Ok(f) => {
                let _ = protocol::write_frame(&mut out, KIND_HELLO, b"simulated executor");
                Box::new(f)
            }
            Err(e) => {
                let _ = protocol::write_frame(&mut out, KIND_SETUP, e.as_bytes());
                return Ok(std::process::ExitCode::from(4));
            }
        },
        Err(_) => match super::driver::CudaExecutor::open(device, arch) {
            Ok(c) => {
                let _ = protocol::write_frame(&mut out, KIND_HELLO, format!("device {}", device).as_bytes());
                Box::new(c)
            }
            Err(e) => {
                let _ = protocol::write_frame(&mut out, KIND_SETUP, e.to_string().as_bytes());
                return Ok(std::process::ExitCode::from(4));
            }
        },
    };
    let say_stages = |exec: &dyn Executor| {
        if std::env::var_os(super::STAGE_TIMES_ENV).is_some() {
            if let Some(line) = exec.stage_times() {
                eprintln!("worker {device}: {line}");
            }
        }
    };
    loop {
        let (kind, payload) = match protocol::read_frame(&mut input) {
            Ok(f) => f,
            Err(FrameError::Eof) => {
                say_stages(&*exec);
                return Ok(std::process::ExitCode::SUCCESS);
            }
            Err(e) => return Err(protocol_error(format!("worker: stdin: {e}"))),
        };
        if kind != KIND_JOB {
            return Err(protocol_error(format!("worker: stdin: unexpected frame kind {kind}")));
        }
        let (tag, body) = match protocol::Tag::split(&payload) {
            Ok(t) => t,
            Err(e) => return Err(protocol_error(format!("worker: stdin: {e}"))),
        };
        let r = match protocol::decode_job(body) {
            Ok(job) => exec.execute(&job),
            Err(e) => Err(ExecError::Protocol(e.to_string())),
        };
        let (k, p) = protocol::encode_answer(tag, &r);
        if let Err(e) = protocol::write_frame(&mut out, k, &p) {
            return Err(protocol_error(format!("worker: stdout: {e}")));
        }
        if matches!(r, Err(ExecError::Fault { .. })) {
            say_stages(&*exec);
            return Ok(std::process::ExitCode::from(3));
        }
    }
}

/// A broken stream: one `error:` line, exit status 5.
fn protocol_error(message: String) -> crate::cli::CliError {
    crate::cli::CliError { message, code: 5 }
}

struct Live {
    child: Child,
    stdin: ChildStdin,
    frames: Receiver<Result<(u8, Vec<u8>), FrameError>>,
    /// Jobs sent to this worker (the last job's sequence number).
    seq: u64,
}

/// Parent side: an [`Executor`] backed by a worker process on one device.
pub struct WorkerExecutor {
    exe: PathBuf,
    device: i32,
    timeout: Duration,
    env: Vec<(String, String)>,
    /// The architecture the worker's device must be (`worker --arch`); None: any.
    arch: Option<&'static harness_isa::target::Target>,
    live: Option<Live>,
    /// Workers started so far (1 + restarts).
    pub spawned: u64,
    /// Answers that carried another job's tag (each cost a restart and a retry).
    pub misfits: u64,
}

impl WorkerExecutor {
    /// `exe` is this program (`std::env::current_exe()`), run as `exe worker --device N`.
    pub fn new(exe: PathBuf, device: i32, timeout: Duration) -> WorkerExecutor {
        WorkerExecutor { exe, device, timeout, env: Vec::new(), arch: None, live: None, spawned: 0, misfits: 0 }
    }
    /// The architecture the worker's device must be: a device of another is a setup error
    /// before any job.
    pub fn with_arch(mut self, t: &'static harness_isa::target::Target) -> WorkerExecutor {
        self.arch = Some(t);
        self
    }
    /// An extra environment variable for the child (tests pass the fake executor this way).
    pub fn with_env(mut self, k: &str, v: &str) -> WorkerExecutor {
        self.env.push((k.into(), v.into()));
        self
    }

    fn spawn(&mut self) -> Result<(), ExecError> {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("worker").arg("--device").arg(self.device.to_string());
        if let Some(t) = self.arch {
            cmd.arg("--arch").arg(t.nvdisasm);
        }
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        // its own process group: a Ctrl-C at the terminal reaches the parent, which stops
        // cleanly and lets the launch in flight finish, instead of killing the worker mid-job
        // (which would read as a fault of the instructions under test)
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| ExecError::Setup(format!("{}: cannot start worker: {e}", self.exe.display())))?;
        self.spawned += 1;
        let stdin = child.stdin.take().ok_or_else(|| ExecError::Setup("worker stdin".into()))?;
        let mut stdout = child.stdout.take().ok_or_else(|| ExecError::Setup("worker stdout".into()))?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || loop {
            let f = protocol::read_frame(&mut stdout);
            let end = f.is_err();
            if tx.send(f).is_err() || end {
                return;
            }
        });
        let mut live = Live { child, stdin, frames: rx, seq: 0 };
        // The hello decides whether this worker can run anything: failures here are setup
        // errors, never blamed on instructions.
        let hello = recv_within(&live.frames, self.timeout.max(Duration::from_secs(60)));
        match hello {
            Ok(Ok((KIND_HELLO, _))) => {
                self.live = Some(live);
                Ok(())
            }
            Ok(Ok((KIND_SETUP, p))) => {
                reap(&mut live.child);
                Err(ExecError::Setup(String::from_utf8_lossy(&p).into_owned()))
            }
            other => {
                let _ = live.child.kill();
                let status = reap(&mut live.child);
                Err(ExecError::Setup(format!("worker did not start ({other:?}, {status})")))
            }
        }
    }

    /// Stop the current worker (if any); the next job starts a new one.
    pub fn stop(&mut self) {
        if let Some(mut l) = self.live.take() {
            drop(l.stdin);
            let _ = l.child.kill();
            reap(&mut l.child);
        }
    }
}

/// Time a slice of waiting may overrun before the overrun is taken for this process not
/// running (stopped, suspended, starved) rather than for waiting.
const PAUSE_GRACE: Duration = Duration::from_millis(250);

/// The next frame, waiting at most `timeout` of time in which this process was running to
/// see it: the wait is cut in slices, and a slice that ran far past what it asked (SIGSTOP
/// of this process, a suspended machine) counts only as what it asked. A worker is timed out,
/// and its instructions blamed, only for time in which it could have answered and was seen
/// not to; a paused host is not a finding about an instruction.
pub(crate) fn recv_within<T>(rx: &Receiver<T>, timeout: Duration) -> Result<T, RecvTimeoutError> {
    let slice = (timeout / 20).clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut waited = Duration::ZERO;
    loop {
        let ask = slice.min(timeout.saturating_sub(waited));
        let t0 = std::time::Instant::now();
        match rx.recv_timeout(ask) {
            Err(RecvTimeoutError::Timeout) => {
                let took = t0.elapsed();
                waited += if took > ask + PAUSE_GRACE { ask } else { took };
                if waited >= timeout {
                    return Err(RecvTimeoutError::Timeout);
                }
            }
            r => return r,
        }
    }
}

/// Wait for a child and describe how it ended.
fn reap(child: &mut Child) -> String {
    match child.wait() {
        Ok(s) => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                if let Some(sig) = s.signal() {
                    return format!("killed by signal {sig}");
                }
            }
            format!("exit status {}", s.code().unwrap_or(-1))
        }
        Err(e) => format!("wait failed: {e}"),
    }
}

impl Executor for WorkerExecutor {
    fn execute(&mut self, job: &super::LaunchJob) -> Result<Vec<u8>, ExecError> {
        let payload = protocol::encode_job(job);
        match self.execute_once(&payload) {
            // an answer that is not this job's: the worker's stream is not to be trusted; a
            // fresh worker runs the job again, and a second misfit is a protocol error
            Err(ExecError::Protocol(why)) if why.starts_with(MISFIT) => {
                crate::errln!("worker: {why}; restarting the worker and retrying the job");
                self.misfits += 1;
                self.execute_once(&payload)
            }
            r => r,
        }
    }
}

/// How an answer that carries another job's tag is reported.
const MISFIT: &str = "answer for another job";

impl WorkerExecutor {
    fn execute_once(&mut self, payload: &[u8]) -> Result<Vec<u8>, ExecError> {
        if self.live.is_none() {
            self.spawn()?;
        }
        let Some(live) = self.live.as_mut() else {
            return Err(ExecError::Setup("worker not running".into()));
        };
        live.seq += 1;
        let tag = protocol::Tag::of(live.seq, payload);
        let sent = protocol::write_frame(&mut live.stdin, KIND_JOB, &protocol::tagged(tag, payload)).and_then(|_| live.stdin.flush());
        let answer = match sent {
            Ok(()) => recv_within(&live.frames, self.timeout),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(Ok((kind, p))) => match protocol::decode_answer(kind, p) {
                Ok((got, _)) if got != tag => {
                    self.stop();
                    Err(ExecError::Protocol(format!(
                        "{MISFIT}: job {} (digest {:#018x}) got the answer tagged {} ({:#018x})",
                        tag.seq, tag.digest, got.seq, got.digest
                    )))
                }
                Ok((_, r)) => {
                    if matches!(r, Err(ExecError::Fault { .. }) | Err(ExecError::Setup(_))) {
                        // the worker exits after a fault; a setup error may have left it unusable
                        self.stop();
                    }
                    r
                }
                Err(e) => {
                    self.stop();
                    Err(ExecError::Protocol(e.to_string()))
                }
            },
            Ok(Err(FrameError::Eof | FrameError::Truncated | FrameError::Io(_))) | Err(RecvTimeoutError::Disconnected) => {
                let status = match self.live.take() {
                    Some(mut l) => {
                        drop(l.stdin);
                        reap(&mut l.child)
                    }
                    None => "unknown".into(),
                };
                Err(ExecError::WorkerDied(status))
            }
            Ok(Err(e)) => {
                self.stop();
                Err(ExecError::Protocol(e.to_string()))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(ExecError::Timeout(self.timeout))
            }
        }
    }
}

impl Drop for WorkerExecutor {
    fn drop(&mut self) {
        if let Some(mut l) = self.live.take() {
            drop(l.stdin); // EOF: the worker exits by itself
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = l.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = l.child.kill();
            let _ = l.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recv_within_times_out_after_its_time_and_takes_an_answer_before() {
        let (tx, rx) = std::sync::mpsc::channel::<u8>();
        let t0 = std::time::Instant::now();
        assert_eq!(recv_within(&rx, Duration::from_millis(200)), Err(RecvTimeoutError::Timeout));
        assert!(t0.elapsed() >= Duration::from_millis(200) && t0.elapsed() < Duration::from_secs(5));
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            tx.send(7).unwrap();
        });
        assert_eq!(recv_within(&rx, Duration::from_secs(5)), Ok(7));
        sender.join().unwrap();
        assert_eq!(recv_within(&rx, Duration::from_secs(5)), Err(RecvTimeoutError::Disconnected));
    }
}
