//! What this machine offers for running SM90 code, found without panicking.

use super::driver::{Api, DriverError};
use serde::Serialize;

/// One device as the driver reports it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Device {
    pub ordinal: i32,
    pub name: String,
    pub compute_capability: String,
    /// Compute capability 9.0: the only one HMUL2's SM90 encodings run on.
    pub sm90: bool,
}

/// The outcome of looking for a usable GPU.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Detection {
    pub driver_loaded: bool,
    /// e.g. "13.0 (13000)".
    pub driver: Option<String>,
    pub devices: Vec<Device>,
    /// Why no device is usable; None when at least one SM90 device is.
    pub problem: Option<String>,
    /// Set when the loaded libcuda is the CPU-emulating test driver (`harness/fake-cuda`):
    /// its devices are not hardware and nothing run on them is a hardware result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
}

impl Detection {
    /// Ordinals of the SM90 devices.
    pub fn usable(&self) -> Vec<i32> {
        self.devices.iter().filter(|d| d.sm90).map(|d| d.ordinal).collect()
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
                if d.sm90 { "" } else { " - not SM90, unusable" }
            );
        }
        match &self.problem {
            Some(p) => s += &format!("no usable GPU: {p}; the hardware checks cannot run here\n"),
            None => s += &format!("usable SM90 devices: {:?}\n", self.usable()),
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
    for i in 0..n {
        let dev = match api.device(i) {
            Ok(x) => x,
            Err(_) => continue,
        };
        let name = api.device_name(dev).unwrap_or_else(|e| format!("unknown ({e})"));
        let (cc, sm90) = match api.compute_capability(dev) {
            Ok((ma, mi)) => (format!("{ma}.{mi}"), (ma, mi) == (9, 0)),
            Err(e) => (format!("unknown ({e})"), false),
        };
        d.devices.push(Device { ordinal: i, name, compute_capability: cc, sm90 });
    }
    if d.devices.is_empty() {
        d.problem = Some("the driver reports no CUDA device".into());
    } else if d.usable().is_empty() {
        let ccs: Vec<String> = d.devices.iter().map(|x| format!("{} is {}", x.name, x.compute_capability)).collect();
        d.problem = Some(format!("no device of compute capability 9.0 ({})", ccs.join(", ")));
    }
    d
}
