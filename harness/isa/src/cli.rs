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

/// The longest line read from any input (a vector line is about 200 bytes, a word 34): a
/// longer line is an error of its own, and its bytes are never held.
pub const MAX_LINE: usize = 64 * 1024;

/// At most `max` bytes of `s` (on a character boundary), saying how long it was when cut:
/// what an error message quotes of an input.
pub fn excerpt(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

/// One line of an input as [`lines_limited`] reads it.
pub type RawLine = Result<Vec<u8>, usize>;

/// The lines of `r` without their `\n` (and `\r\n`): each line's bytes, or Err(its length)
/// for a line longer than [`MAX_LINE`], whose bytes are skipped as they stream past. Memory
/// stays within the lines kept, whatever the input (`/dev/zero` included, with `limit`).
pub fn lines_limited(r: impl std::io::Read, limit: Option<u64>) -> std::io::Result<Vec<RawLine>> {
    use std::io::BufRead;
    let mut r = std::io::BufReader::with_capacity(1 << 16, r);
    let mut out = Vec::new();
    let mut line: Vec<u8> = Vec::new();
    let (mut len, mut total) = (0usize, 0u64);
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        total += buf.len() as u64;
        if limit.is_some_and(|l| total > l) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("more than {} bytes", limit.unwrap_or(0))));
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(p) => (&buf[..p], p + 1),
            None => (buf, buf.len()),
        };
        len += chunk.len();
        if len <= MAX_LINE {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        let ended = done > chunk.len();
        r.consume(done);
        if ended {
            out.push(finish_line(&mut line, len));
            len = 0;
        }
    }
    if len > 0 || !line.is_empty() {
        out.push(finish_line(&mut line, len));
    }
    Ok(out)
}

fn finish_line(line: &mut Vec<u8>, len: usize) -> RawLine {
    if len > MAX_LINE {
        line.clear();
        return Err(len);
    }
    let mut l = std::mem::take(line);
    if l.last() == Some(&b'\r') {
        l.pop();
    }
    Ok(l)
}

/// Lines of a file argument, or of stdin when the path is `-`, each as text or, when it is
/// not UTF-8 or longer than [`MAX_LINE`], as the error `NAME:LINE: why` (so one bad line
/// costs only itself). Only a regular file (or stdin) is read.
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

/// Open `path` for reading if it is a regular file (a FIFO would block, a device such as
/// `/dev/zero` never ends): anything else is an error saying what it is.
pub fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let f = std::fs::File::open(path)?;
    let t = f.metadata()?.file_type();
    if t.is_file() {
        return Ok(f);
    }
    let what = if t.is_dir() { "a folder" } else { "not a regular file (a FIFO, socket or device)" };
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, what))
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
