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

/// Lines of a file argument, or of stdin when the path is `-`.
pub fn read_lines(path: &str) -> Result<Vec<String>, CliError> {
    use std::io::BufRead;
    let lines: Result<Vec<String>, std::io::Error> = if path == "-" {
        std::io::stdin().lock().lines().collect()
    } else {
        let f = std::fs::File::open(path).map_err(|e| CliError::input(format!("{path}: {e}")))?;
        std::io::BufReader::new(f).lines().collect()
    };
    lines.map_err(|e| CliError::input(format!("{path}: {e}")))
}
