//! How thorough the long tests are: the README's test command (`ci/test.sh`, what CI runs)
//! sets `HMUL2_TEST_LEVEL=full` and every exhaustive sweep runs whole; a plain `cargo test`
//! (a developer's loop) runs them sampled, and each sampled test says so on its output with
//! what it left out, so a quick run never passes for a full one. A test that cannot check
//! something on this machine (a CPU without the instructions a kernel needs) says so the
//! same way, by [`say`].

/// The environment variable that picks the level.
pub const ENV: &str = "HMUL2_TEST_LEVEL";

/// A test run's thoroughness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestLevel {
    /// Sampled sweeps (the default of a plain `cargo test`).
    Quick,
    /// Every exhaustive check (`ci/test.sh`).
    Full,
}

/// The level `HMUL2_TEST_LEVEL` names: `full`, or `quick` (also when unset).
///
/// Panics on any other value: a misspelt `full` must not run the quick tests silently.
pub fn level() -> TestLevel {
    match std::env::var(ENV) {
        Ok(v) if v == "full" => TestLevel::Full,
        Ok(v) if v == "quick" || v.is_empty() => TestLevel::Quick,
        Err(std::env::VarError::NotPresent) => TestLevel::Quick,
        Ok(v) => panic!("{ENV}={v:?}: expected `quick` or `full`"),
        Err(e) => panic!("{ENV}: {e}"),
    }
}

/// Say `line` where every test run shows it: straight to the process's standard error.
/// `cargo test` captures a passing test's `print!` and `eprint!` and shows them only with
/// `--nocapture`; a direct write is not captured, so a note of what a test left out or could
/// not check shows in every run, CI's included.
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The switch under which a check a CPU feature keeps from running fails where the CPU has
/// that feature (`ci/device-session` sets it on the GPU machine's CPU, the one place the
/// AVX-512 FP16 paths may run).
pub const REQUIRE_CPU_FEATURES_ENV: &str = "HMUL2_REQUIRE_CPU_FEATURES";

/// Say ([`say`]) that a check was not made because the CPU lacks `flags` (names as
/// `/proc/cpuinfo` spells them: `avx512_fp16` (Linux's spelling, not Rust's `avx512fp16`), `avx512dq`, ...). Under
/// `HMUL2_REQUIRE_CPU_FEATURES=1` it panics where `/proc/cpuinfo` lists every one of them:
/// the CPU has what the check needs and it still did not run (a detection that went wrong,
/// a kernel compiled out), a failure and never a pass.
pub fn not_checked(flags: &[&str], line: &str) {
    say(line);
    let require = std::env::var(REQUIRE_CPU_FEATURES_ENV).is_ok_and(|v| v == "1");
    let cpuinfo = if require { std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default() } else { String::new() };
    if let Err(e) = required(flags, line, require, &cpuinfo) {
        panic!("{e}");
    }
}

/// [`not_checked`]'s verdict: Err when `require` is set and `cpuinfo` lists every one of
/// `flags`.
pub fn required(flags: &[&str], line: &str, require: bool, cpuinfo: &str) -> Result<(), String> {
    if require && cpu_lists(cpuinfo, flags) {
        return Err(format!("{line}; but /proc/cpuinfo lists {} and {REQUIRE_CPU_FEATURES_ENV}=1: the check had to run here", flags.join(" ")));
    }
    Ok(())
}

/// Whether the first `flags` line of a `/proc/cpuinfo` text lists every one of `flags`.
pub fn cpu_lists(cpuinfo: &str, flags: &[&str]) -> bool {
    let Some(line) = cpuinfo.lines().find(|l| l.starts_with("flags")) else { return false };
    let have: Vec<&str> = line.split(':').nth(1).unwrap_or("").split_whitespace().collect();
    flags.iter().all(|f| have.contains(f))
}

/// `full` at the full level; `quick` otherwise, saying ([`say`]) what the quick run leaves
/// out.
pub fn sized(what: &str, full: u64, quick: u64) -> u64 {
    match level() {
        TestLevel::Full => full,
        TestLevel::Quick => {
            say(&format!("{what}: quick test level, {quick} of {full} ({ENV}=full, as ci/test.sh sets, runs all)"));
            quick.min(full)
        }
    }
}

/// Whether this run is at the full level.
pub fn is_full() -> bool {
    level() == TestLevel::Full
}

/// The rows `0..n` of a sweep to check: every one at the full level; at the quick level
/// `quick` of them, evenly spaced from an offset drawn from `HMUL2_SEED` or the clock, and
/// said ([`say`], with the seed) so that a quick run says what it covered and can be repeated.
pub fn rows(what: &str, n: u32, quick: u32) -> Vec<u32> {
    if is_full() || quick >= n {
        return (0..n).collect();
    }
    let step = n / quick.max(1);
    let seed = std::env::var("HMUL2_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0));
    let offset = (crate::rng::Rng::new(seed).next_u64() % step as u64) as u32;
    let out: Vec<u32> = (offset..n).step_by(step as usize).collect();
    say(&format!(
        "{what}: quick test level, {} of {n} rows (every {step}th from {offset}; seed {seed}, HMUL2_SEED repeats it; {ENV}=full, as ci/test.sh sets, runs all)",
        out.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_flags_are_read_from_the_flags_line_whole_words_only() {
        let info = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_fp16\nbugs\t\t: spectre\n";
        assert!(cpu_lists(info, &["avx512_fp16"]));
        assert!(cpu_lists(info, &["avx2", "avx512f"]));
        assert!(!cpu_lists(info, &["avx512dq"]));
        assert!(!cpu_lists(info, &["avx512"]), "a prefix is no flag");
        assert!(!cpu_lists("", &["avx2"]));
        // the switch: a check not made on a CPU that lists its features fails, only under it
        assert!(required(&["avx512_fp16"], "not checked", true, info).unwrap_err().contains("lists avx512_fp16"));
        assert_eq!(required(&["avx512_fp16"], "not checked", false, info), Ok(()));
        assert_eq!(required(&["avx512dq"], "not checked", true, info), Ok(()));
    }

    #[test]
    fn sized_picks_by_level() {
        // the process's own level: whichever it is, sized answers by it
        let n = sized("this test", 100, 10);
        assert_eq!(n, if level() == TestLevel::Full { 100 } else { 10 });
        let r = rows("this test", 1 << 15, 512);
        if is_full() {
            assert_eq!(r, (0..1 << 15).collect::<Vec<u32>>());
        } else {
            assert_eq!(r.len(), 512);
            assert!(r.windows(2).all(|w| w[1] - w[0] == 64) && r[0] < 64);
        }
    }
}
