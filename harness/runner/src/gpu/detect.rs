//! What this machine offers for running the harness's code (any architecture it speaks:
//! SM80, SM86, SM89, SM90, SM100, SM120), found without panicking, and without
//! trusting the driver: [`detect_in_worker`] asks in a child process with a time limit (a
//! `cuInit` that never returns, or a driver that crashes, costs the child, never the caller),
//! and a device count no machine has is a problem, not a loop.

use super::driver::{Api, DriverError};
use harness_isa::target::Target;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// Devices looked at, at most: a driver that reports more is broken (a GPU machine holds
/// a few; 2^31 - 1 would have the loop run for hours).
pub const MAX_DEVICES: i32 = 1024;

/// One device as the driver reports it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Device {
    pub ordinal: i32,
    pub name: String,
    pub compute_capability: String,
    /// Compute capability 9.0 (SM90's [`Target::compute_capability`]; the field keeps its
    /// name and meaning: detection reports are read by name).
    pub sm90: bool,
    /// The architecture of the device's compute capability in nvdisasm's spelling (`SM86`),
    /// where the harness speaks it ([`Target::of_compute_capability`]); None: unusable.
    /// Absent in detections written before other architectures than SM90 were run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
}

impl Device {
    /// The device's architecture, where the harness speaks it.
    pub fn target(&self) -> Option<&'static Target> {
        self.arch.as_deref().and_then(|a| Target::parse(a).ok())
    }
}

/// The outcome of looking for a usable GPU.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Detection {
    pub driver_loaded: bool,
    /// e.g. "13.0 (13000)".
    pub driver: Option<String>,
    pub devices: Vec<Device>,
    /// Why no device is usable; None when at least one device of an architecture the
    /// harness speaks is.
    pub problem: Option<String>,
    /// Set when the loaded libcuda is the CPU-emulating test driver (`harness/fake-cuda`):
    /// its devices are not hardware and nothing run on them is a hardware result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
}

impl Detection {
    /// Ordinals of the devices of an architecture the harness speaks.
    pub fn usable(&self) -> Vec<i32> {
        self.devices.iter().filter(|d| d.target().is_some()).map(|d| d.ordinal).collect()
    }
    pub fn text(&self) -> String {
        let mut s = String::new();
        match &self.driver {
            Some(v) => s += &format!("CUDA driver: {v}\n"),
            None if self.driver_loaded => s += "CUDA driver: loaded, version unknown\n",
            None => s += "CUDA driver: not found (libcuda could not be loaded)\n",
        }
        if let Some(e) = &self.emulated {
            s += &format!("EMULATED: the loaded libcuda is {e}; its devices are not hardware\n");
        }
        for d in &self.devices {
            s += &format!(
                "device {}: {} (compute capability {}){}\n",
                d.ordinal,
                d.name,
                d.compute_capability,
                match &d.arch {
                    Some(a) => format!(", {a}"),
                    None => format!(" - no architecture the harness speaks ({}), unusable", crate::target::Target::all_names()),
                }
            );
        }
        match &self.problem {
            Some(p) => s += &format!("no usable GPU: {p}; the hardware checks cannot run here\n"),
            None => s += &format!("usable devices: {:?}\n", self.usable()),
        }
        s
    }
}

/// CUDA version number (e.g. 12080) as text.
pub fn version_text(v: i32) -> String {
    format!("{}.{} ({v})", v / 1000, (v % 1000) / 10)
}

/// Look for libcuda, the driver version and SM90 devices.
pub fn detect() -> Detection {
    let mut d = Detection { driver_loaded: false, driver: None, devices: Vec::new(), problem: None, emulated: None };
    let api = match Api::load() {
        Ok(a) => a,
        Err(e) => {
            d.driver_loaded = !matches!(e, DriverError::NoLibrary);
            d.problem = Some(e.to_string());
            return d;
        }
    };
    d.driver_loaded = true;
    d.emulated = api.fake_driver();
    if let Ok(v) = api.driver_version() {
        d.driver = Some(version_text(v));
    }
    if let Err(e) = api.init() {
        d.problem = Some(e.to_string());
        return d;
    }
    let n = match api.device_count() {
        Ok(n) => n,
        Err(e) => {
            d.problem = Some(e.to_string());
            return d;
        }
    };
    if !(0..=MAX_DEVICES).contains(&n) {
        d.problem = Some(format!("the driver reports {n} devices: no machine has that many (at most {MAX_DEVICES} are looked at); the driver is broken"));
        return d;
    }
    for i in 0..n {
        let dev = match api.device(i) {
            Ok(x) => x,
            Err(_) => continue,
        };
        let name = api.device_name(dev).unwrap_or_else(|e| format!("unknown ({e})"));
        let (cc, target) = match api.compute_capability(dev) {
            Ok((ma, mi)) => (format!("{ma}.{mi}"), Target::of_compute_capability((ma, mi))),
            Err(e) => (format!("unknown ({e})"), None),
        };
        let sm90 = target == Some(&Target::SM90);
        d.devices.push(Device { ordinal: i, name, compute_capability: cc, sm90, arch: target.map(|t| t.nvdisasm.to_string()) });
    }
    if d.devices.is_empty() {
        d.problem = Some("the driver reports no CUDA device".into());
    } else if d.usable().is_empty() {
        let ccs: Vec<String> = d.devices.iter().map(|x| format!("{} is {}", x.name, x.compute_capability)).collect();
        d.problem = Some(format!("no device of an architecture the harness speaks (compute capability 8.0, 8.6, 8.9, 9.0, 10.0 or 12.0: {})", ccs.join(", ")));
    }
    d
}

/// [`detect`], run in a child process (`exe worker --detect`, which prints the detection as
/// JSON) that may take at most `limit`: a driver whose `cuInit` never returns, that crashes
/// or that answers garbage gives a detection whose problem says so; the child is killed at
/// the limit. `env` is added to the child's environment.
pub fn detect_in_worker(exe: &Path, limit: Duration, env: &[(String, String)]) -> Detection {
    let failed = |loaded: bool, why: String| Detection { driver_loaded: loaded, driver: None, devices: Vec::new(), problem: Some(why), emulated: None };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["worker", "--detect"]).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::inherit());
    // in the caller's process group (unlike a job's worker): a Ctrl-C while the driver hangs
    // ends the child with its parent, leaving nothing behind
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(false, format!("{}: cannot start driver detection: {e}", exe.display())),
    };
    let Some(mut stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return failed(false, "driver detection: no stdout".into());
    };
    // the answer is read on a thread, so a child that never writes is timed out
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        // at most 1 MiB: a detection is a few hundred bytes
        let r = std::io::Read::read_to_end(&mut std::io::Read::take(&mut stdout, 1 << 20), &mut buf).map(|_| buf);
        let _ = tx.send(r);
    });
    let answer = super::worker::recv_within(&rx, limit);
    if answer.is_err() {
        let _ = child.kill();
    }
    let status = child.wait();
    match (answer, status) {
        (Err(_), _) => {
            failed(true, format!("driver detection did not finish within {:.1} s (a driver call such as cuInit hung); it was stopped", limit.as_secs_f64()))
        }
        (Ok(Err(e)), _) => failed(true, format!("driver detection: reading its answer: {e}")),
        (Ok(Ok(_)), Ok(st)) if !st.success() => failed(true, format!("driver detection crashed ({}): the CUDA driver is broken", describe(st))),
        (Ok(Ok(out)), _) => serde_json::from_slice(&out)
            .unwrap_or_else(|e| failed(true, format!("driver detection answered something that is not a detection ({e}): the CUDA driver is broken"))),
    }
}

fn describe(st: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = st.signal() {
            return format!("killed by signal {sig}");
        }
    }
    format!("exit status {}", st.code().unwrap_or(-1))
}

/// The child side of [`detect_in_worker`]: the detection as one JSON line on stdout.
pub fn detect_main() -> crate::cli::CliResult {
    let d = detect();
    let json = serde_json::to_string(&d).map_err(|e| crate::cli::CliError::input(format!("detection: {e}")))?;
    crate::outln!("{json}")?;
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that never answers is stopped at the limit; one that dies is a crash; one
    /// that prints garbage is not believed (stand-ins for `worker --detect`: `sleep`,
    /// `sh -c 'kill -SEGV $$'`, `echo`).
    #[cfg(unix)]
    #[test]
    fn a_hung_crashed_or_garbled_detection_is_a_problem_not_a_hang() {
        let d = tempfile::tempdir().unwrap();
        let script = |name: &str, body: &str| {
            let p = d.path().join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            let mut perm = std::fs::metadata(&p).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
            std::fs::set_permissions(&p, perm).unwrap();
            p
        };
        let t0 = std::time::Instant::now();
        let hung = detect_in_worker(&script("hang", "exec sleep 30"), Duration::from_millis(300), &[]);
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert!(hung.problem.as_deref().unwrap().contains("did not finish within 0.3 s"), "{hung:?}");
        let crashed = detect_in_worker(&script("segv", "kill -SEGV $$"), Duration::from_secs(10), &[]);
        assert!(crashed.problem.as_deref().unwrap().contains("crashed (killed by signal 11)"), "{crashed:?}");
        let garbled = detect_in_worker(&script("garble", "echo '{\"devices\": 7}'"), Duration::from_secs(10), &[]);
        assert!(garbled.problem.as_deref().unwrap().contains("not a detection"), "{garbled:?}");
        let good = Detection { driver_loaded: true, driver: Some("13.0 (13000)".into()), devices: Vec::new(), problem: Some("x".into()), emulated: None };
        let answer = d.path().join("answer.json");
        std::fs::write(&answer, serde_json::to_string(&good).unwrap()).unwrap();
        assert_eq!(detect_in_worker(&script("good", &format!("cat '{}'", answer.display())), Duration::from_secs(10), &[]), good);
    }
}
