//! Command-line plumbing shared by every subcommand: one error type that prints as one
//! line naming the input, and the exit codes scripts rely on.
//!
//! Exit codes: 0 success; 1 a check ran and found mismatches or failures; 2 bad input,
//! bad usage or a missing tool (nothing was checked).

use std::process::ExitCode;

pub use crate::lines::{each_line, excerpt, lines_limited, open_regular, RawLine, MAX_LINE};

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
/// not UTF-8 or longer than [`MAX_LINE`], as the error `NAME:LINE: why` (so one bad line
/// costs only itself). Only a regular file (or stdin) is read.
/// The lines of `path` (`-`: stdin) handed to `each` one at a time, through one buffer
/// ([`each_line`]), with their 1-based numbers: each line's text, or the message
/// [`read_lines_checked`] gives a line that is not UTF-8 or too long. Memory stays flat
/// whatever the input; the first error `each` returns ends the reading.
pub fn for_each_line_of(path: &str, mut each: impl FnMut(usize, Result<&str, String>) -> Result<(), CliError>) -> Result<(), CliError> {
    let name = input_name(path);
    let unreadable = |e: std::io::Error| CliError::input(format!("{name}: {e}"));
    let mut n = 0;
    let mut one = |l: Result<&[u8], usize>| {
        n += 1;
        match l {
            Ok(l) => each(n, std::str::from_utf8(l).map_err(|_| format!("{name}:{n}: not UTF-8"))),
            Err(len) => each(n, Err(format!("{name}:{n}: a line of {len} bytes (at most {MAX_LINE})"))),
        }
    };
    if path == "-" {
        each_line(std::io::stdin().lock(), None, unreadable, &mut one)
    } else {
        each_line(open_regular(std::path::Path::new(path)).map_err(unreadable)?, None, unreadable, &mut one)
    }
}

pub fn read_lines_checked(path: &str) -> Result<Vec<Result<String, String>>, CliError> {
    let name = input_name(path);
    let lines =
        if path == "-" { lines_limited(std::io::stdin().lock(), None) } else { open_regular(std::path::Path::new(path)).and_then(|f| lines_limited(f, None)) };
    let lines = lines.map_err(|e| CliError::input(format!("{name}: {e}")))?;
    Ok(lines
        .into_iter()
        .enumerate()
        .map(|(n, l)| match l {
            Ok(l) => String::from_utf8(l).map_err(|_| format!("{name}:{}: not UTF-8", n + 1)),
            Err(len) => Err(format!("{name}:{}: a line of {len} bytes (at most {MAX_LINE})", n + 1)),
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

/// Set by [`keep_going_without_stdout`]: a closed stdout is noted, not an error.
static STDOUT_OPTIONAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// A write to stdout failed while it was optional.
static STDOUT_LOST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From here on a stdout that cannot be written (a reader that quit: `run | head -1`) is
/// noted ([`stdout_lost`]) instead of failing the write: for a job whose results go to
/// files, so that its report is still written. The job decides its exit at its end.
pub fn keep_going_without_stdout() {
    STDOUT_OPTIONAL.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether a write to stdout failed after [`keep_going_without_stdout`].
pub fn stdout_lost() -> bool {
    STDOUT_LOST.load(std::sync::atomic::Ordering::SeqCst)
}

/// Write to stdout; a closed or full stdout is an error naming it (`print!` would panic).
pub fn write_stdout(args: std::fmt::Arguments) -> Result<(), CliError> {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    if STDOUT_LOST.load(Ordering::SeqCst) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|_| out.flush()) {
        Err(_) if STDOUT_OPTIONAL.load(Ordering::SeqCst) => {
            STDOUT_LOST.store(true, Ordering::SeqCst);
            Ok(())
        }
        r => r.map_err(|e| CliError::input(format!("stdout: {e}"))),
    }
}

/// `print!` that returns `Err(CliError)` naming stdout when it cannot be written.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::write_stdout(format_args!($($t)*)) };
}

/// `eprintln!` that never panics: a closed or full stderr (`2>&-`, a reader that quit) loses
/// the line, never the run; `eprintln!` would panic there and end the process with exit 101.
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// `eprint!` that never panics (see [`errln!`]).
#[macro_export]
macro_rules! errp {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($t)*);
    }};
}

/// `println!` that returns `Err(CliError)` naming stdout when it cannot be written.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => { $crate::cli::write_stdout(format_args!("{}\n", format_args!($($t)*))) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes a call, so lines straddle reads.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn lines_come_whole_whatever_the_reads() {
        let long = "x".repeat(MAX_LINE + 1);
        let fits = "y".repeat(MAX_LINE);
        // a line's `\r` counts toward its length
        let text = format!("a\r\n\nb\n{long}\n{fits}\n{fits}\r\nc\r\n{long}{long}\nlast\r");
        let want: Vec<RawLine> = vec![
            Ok(b"a".to_vec()),
            Ok(vec![]),
            Ok(b"b".to_vec()),
            Err(MAX_LINE + 1),
            Ok(fits.clone().into_bytes()),
            Err(MAX_LINE + 1),
            Ok(b"c".to_vec()),
            Err(2 * MAX_LINE + 2),
            Ok(b"last".to_vec()),
        ];
        for step in [1, 7, 4096, 1 << 30] {
            let got = lines_limited(Trickle { data: text.as_bytes(), step }, None).unwrap();
            assert_eq!(got, want, "reads of {step} bytes");
        }
        // no trailing empty line after a final newline; an empty input has no lines
        assert_eq!(lines_limited(&b"a\n"[..], None).unwrap(), vec![Ok(b"a".to_vec())]);
        assert!(lines_limited(&b""[..], None).unwrap().is_empty());
        // the limit counts bytes read, once each
        assert!(lines_limited(Trickle { data: b"0123456789\n", step: 1 }, Some(11)).is_ok());
        assert!(lines_limited(&b"0123456789\n"[..], Some(10)).is_err());
    }
}
