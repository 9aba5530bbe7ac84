//! Command-line plumbing shared by every subcommand: one error type that prints as one
//! line naming the input, and the exit codes scripts rely on.
//!
//! Exit codes: 0 success; 1 a check ran and found mismatches or failures; 2 bad input,
//! bad usage or a missing tool (nothing was checked).

use std::process::ExitCode;

/// An error for the command line: printed as one line `error: <message>`.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl CliError {
    /// Bad input or a missing tool: exit 2.
    pub fn input(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: 2 }
    }
    /// A check ran and failed: exit 1.
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: 1 }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // one line, whatever the cause said
        f.write_str(&self.message.replace('\n', " "))
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError::input(e.to_string())
    }
}

/// What every subcommand returns.
pub type CliResult = Result<ExitCode, CliError>;

/// Exit code for "ran, and everything matched" or "ran, and something did not".
pub fn exit_for(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A path argument that may not be empty (`--out ""` would quietly mean the current folder).
pub fn path_arg(s: &str) -> Result<std::path::PathBuf, String> {
    if s.is_empty() {
        Err("an empty path".into())
    } else {
        Ok(s.into())
    }
}

/// How an input path is named in messages: `stdin` for `-`.
pub fn input_name(path: &str) -> &str {
    if path == "-" {
        "stdin"
    } else {
        path
    }
}

/// Lines of a file argument, or of stdin when the path is `-`, each as text or, when it is
/// not UTF-8, as the error `NAME:LINE: not UTF-8` (so one bad line costs only itself).
pub fn read_lines_checked(path: &str) -> Result<Vec<Result<String, String>>, CliError> {
    use std::io::Read;
    let name = input_name(path);
    let mut bytes = Vec::new();
    let read =
        if path == "-" { std::io::stdin().lock().read_to_end(&mut bytes) } else { std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)) };
    read.map_err(|e| CliError::input(format!("{name}: {e}")))?;
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    Ok(bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(n, l)| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            String::from_utf8(l.to_vec()).map_err(|_| format!("{name}:{}: not UTF-8", n + 1))
        })
        .collect())
}

/// Lines of a file argument, or of stdin when the path is `-`; a line that is not UTF-8 is
/// an error naming it.
pub fn read_lines(path: &str) -> Result<Vec<String>, CliError> {
    read_lines_checked(path)?.into_iter().map(|l| l.map_err(CliError::input)).collect()
}

/// A vector with room for `n` items of a count given as `arg`, or an error naming the
/// argument when that many cannot be held in memory (instead of an abort or a panic).
pub fn vec_for<T>(arg: &str, n: u64) -> Result<Vec<T>, CliError> {
    let mut v = Vec::new();
    usize::try_from(n).ok().and_then(|n| v.try_reserve_exact(n).ok()).ok_or_else(|| CliError::input(format!("{arg} {n}: too many to hold in memory")))?;
    Ok(v)
}

/// Write to stdout; a closed or full stdout is an error naming it (`print!` would panic).
pub fn write_stdout(args: std::fmt::Arguments) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_fmt(args).and_then(|_| out.flush()).map_err(|e| CliError::input(format!("stdout: {e}")))
}

/// `print!` that returns `Err(CliError)` naming stdout when it cannot be written.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::write_stdout(format_args!($($t)*)) };
}

/// `println!` that returns `Err(CliError)` naming stdout when it cannot be written.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => { $crate::cli::write_stdout(format_args!("{}\n", format_args!($($t)*))) };
}
