//! The real executor: the CUDA driver API through cudarc's dynamic loader.
//!
//! Why not cudarc's `result`/safe layers: (1) they resolve each symbol on first use and
//! panic when it is missing, and (2) they return `CUresult` as a Rust enum, so an error code
//! newer than the bindings (a 13.x driver returning a code the 12.8 bindings lack) would be
//! undefined behaviour. Here every entry point is resolved up front from cudarc's own
//! library handle (`sys::culib()`, only after `sys::is_culib_present()`), returns a plain
//! `i32`, and a missing symbol is a typed error. Only entry points that exist in every
//! driver since CUDA 12.0 are used, so the `cuda-12080` bindings work with 12.x drivers and
//! with driver 580 (CUDA 13.0), which keeps exporting these ABI-stable names.

use super::{ExecError, Executor, LaunchJob};
use cudarc::driver::sys;
use harness_isa::target::Target;
use std::ffi::{c_char, c_int, c_uint, c_void};

type CuResult = c_int;
const CUDA_SUCCESS: CuResult = 0;

/// Driver entry points, resolved once.
#[allow(non_snake_case)]
#[derive(Clone, Copy)]
pub struct Api {
    cuInit: unsafe extern "C" fn(c_uint) -> CuResult,
    cuDriverGetVersion: unsafe extern "C" fn(*mut c_int) -> CuResult,
    cuDeviceGetCount: unsafe extern "C" fn(*mut c_int) -> CuResult,
    cuDeviceGet: unsafe extern "C" fn(*mut sys::CUdevice, c_int) -> CuResult,
    cuDeviceGetAttribute: unsafe extern "C" fn(*mut c_int, c_int, sys::CUdevice) -> CuResult,
    cuDeviceGetName: unsafe extern "C" fn(*mut c_char, c_int, sys::CUdevice) -> CuResult,
    cuDevicePrimaryCtxRetain: unsafe extern "C" fn(*mut sys::CUcontext, sys::CUdevice) -> CuResult,
    cuCtxSetCurrent: unsafe extern "C" fn(sys::CUcontext) -> CuResult,
    cuCtxSynchronize: unsafe extern "C" fn() -> CuResult,
    cuModuleLoadData: unsafe extern "C" fn(*mut sys::CUmodule, *const c_void) -> CuResult,
    cuModuleUnload: unsafe extern "C" fn(sys::CUmodule) -> CuResult,
    cuModuleGetFunction: unsafe extern "C" fn(*mut sys::CUfunction, sys::CUmodule, *const c_char) -> CuResult,
    cuFuncSetAttribute: unsafe extern "C" fn(sys::CUfunction, c_int, c_int) -> CuResult,
    cuMemAlloc_v2: unsafe extern "C" fn(*mut sys::CUdeviceptr, usize) -> CuResult,
    cuMemFree_v2: unsafe extern "C" fn(sys::CUdeviceptr) -> CuResult,
    cuMemcpyHtoD_v2: unsafe extern "C" fn(sys::CUdeviceptr, *const c_void, usize) -> CuResult,
    cuMemcpyDtoH_v2: unsafe extern "C" fn(*mut c_void, sys::CUdeviceptr, usize) -> CuResult,
    cuMemsetD8_v2: unsafe extern "C" fn(sys::CUdeviceptr, u8, usize) -> CuResult,
    #[allow(clippy::type_complexity)]
    cuLaunchKernel: unsafe extern "C" fn(
        sys::CUfunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        sys::CUstream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    cuGetErrorName: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    /// Exported only by the test driver `harness/fake-cuda` (CPU emulation): its presence
    /// marks every result of this library as emulated, never hardware.
    hmul2FakeCudaDriver: Option<unsafe extern "C" fn() -> *const c_char>,
}

/// Why the driver could not be used at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    #[error("no CUDA driver: libcuda could not be loaded")]
    NoLibrary,
    #[error("CUDA driver lacks {0}: {1}")]
    MissingSymbol(&'static str, String),
    #[error("{call} failed: {name} ({code})")]
    Call { call: &'static str, code: i32, name: String },
}

const ATTR_CC_MAJOR: c_int = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as c_int;
const ATTR_CC_MINOR: c_int = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as c_int;
const FUNC_ATTR_MAX_DYNAMIC_SHARED: c_int = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as c_int;

/// Names of the error codes a run meets, for when `cuGetErrorName` cannot help (and the
/// names the test driver `harness/fake-cuda` gives).
pub fn known_error_name(code: i32) -> Option<&'static std::ffi::CStr> {
    Some(match code {
        0 => c"CUDA_SUCCESS",
        1 => c"CUDA_ERROR_INVALID_VALUE",
        2 => c"CUDA_ERROR_OUT_OF_MEMORY",
        3 => c"CUDA_ERROR_NOT_INITIALIZED",
        100 => c"CUDA_ERROR_NO_DEVICE",
        101 => c"CUDA_ERROR_INVALID_DEVICE",
        200 => c"CUDA_ERROR_INVALID_IMAGE",
        201 => c"CUDA_ERROR_INVALID_CONTEXT",
        209 => c"CUDA_ERROR_NO_BINARY_FOR_GPU",
        218 => c"CUDA_ERROR_INVALID_PTX",
        300 => c"CUDA_ERROR_INVALID_SOURCE",
        400 => c"CUDA_ERROR_INVALID_HANDLE",
        500 => c"CUDA_ERROR_NOT_FOUND",
        700 => c"CUDA_ERROR_ILLEGAL_ADDRESS",
        701 => c"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        702 => c"CUDA_ERROR_LAUNCH_TIMEOUT",
        714 => c"CUDA_ERROR_HARDWARE_STACK_ERROR",
        715 => c"CUDA_ERROR_ILLEGAL_INSTRUCTION",
        716 => c"CUDA_ERROR_MISALIGNED_ADDRESS",
        717 => c"CUDA_ERROR_INVALID_ADDRESS_SPACE",
        718 => c"CUDA_ERROR_INVALID_PC",
        719 => c"CUDA_ERROR_LAUNCH_FAILED",
        999 => c"CUDA_ERROR_UNKNOWN",
        _ => return None,
    })
}

/// Error codes raised by the kernel itself: they poison the context and blame the code.
pub fn is_kernel_fault(code: i32) -> bool {
    matches!(code, 700 | 702 | 714 | 715 | 716 | 717 | 718 | 719)
}

/// Error codes with which the driver refuses a module image: the patched instructions may
/// be the cause (so bisection should look), but the context survives.
pub fn is_image_rejection(code: i32) -> bool {
    matches!(code, 200 | 209 | 218 | 300)
}

impl Api {
    /// Load libcuda through cudarc and resolve every entry point; never panics.
    pub fn load() -> Result<Api, DriverError> {
        // SAFETY: is_culib_present only tries to dlopen candidate names.
        if !unsafe { sys::is_culib_present() } {
            return Err(DriverError::NoLibrary);
        }
        // SAFETY: present was checked just above, so culib() does not panic.
        let lib = unsafe { sys::culib() };
        macro_rules! sym {
            ($name:ident) => {{
                // SAFETY: the type is the driver API's documented prototype, with CUresult as int.
                let s = unsafe { lib.get(stringify!($name).as_bytes()) }.map_err(|e| DriverError::MissingSymbol(stringify!($name), e.to_string()))?;
                *s
            }};
        }
        Ok(Api {
            cuInit: sym!(cuInit),
            cuDriverGetVersion: sym!(cuDriverGetVersion),
            cuDeviceGetCount: sym!(cuDeviceGetCount),
            cuDeviceGet: sym!(cuDeviceGet),
            cuDeviceGetAttribute: sym!(cuDeviceGetAttribute),
            cuDeviceGetName: sym!(cuDeviceGetName),
            cuDevicePrimaryCtxRetain: sym!(cuDevicePrimaryCtxRetain),
            cuCtxSetCurrent: sym!(cuCtxSetCurrent),
            cuCtxSynchronize: sym!(cuCtxSynchronize),
            cuModuleLoadData: sym!(cuModuleLoadData),
            cuModuleUnload: sym!(cuModuleUnload),
            cuModuleGetFunction: sym!(cuModuleGetFunction),
            cuFuncSetAttribute: sym!(cuFuncSetAttribute),
            cuMemAlloc_v2: sym!(cuMemAlloc_v2),
            cuMemFree_v2: sym!(cuMemFree_v2),
            cuMemcpyHtoD_v2: sym!(cuMemcpyHtoD_v2),
            cuMemcpyDtoH_v2: sym!(cuMemcpyDtoH_v2),
            cuMemsetD8_v2: sym!(cuMemsetD8_v2),
            cuLaunchKernel: sym!(cuLaunchKernel),
            cuGetErrorName: sym!(cuGetErrorName),
            // SAFETY: the fake's marker takes nothing and returns a static C string.
            hmul2FakeCudaDriver: unsafe { lib.get(b"hmul2FakeCudaDriver") }.ok().map(|s| *s),
        })
    }

    /// Some(description) when the loaded libcuda is the CPU-emulating test driver.
    pub fn fake_driver(&self) -> Option<String> {
        let f = self.hmul2FakeCudaDriver?;
        // SAFETY: the marker returns a pointer to a static NUL-terminated string.
        let p = unsafe { f() };
        if p.is_null() {
            return Some("fake CUDA driver".into());
        }
        // SAFETY: checked non-null; static string.
        Some(unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    pub fn error_name(&self, code: i32) -> String {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorName writes a pointer to a static string or fails.
        let r = unsafe { (self.cuGetErrorName)(code, &mut p) };
        if r == CUDA_SUCCESS && !p.is_null() {
            // SAFETY: the driver returns a NUL-terminated static string.
            return unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned();
        }
        known_error_name(code).map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| format!("CUDA error {code}"))
    }

    fn check(&self, call: &'static str, code: CuResult) -> Result<(), DriverError> {
        if code == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(DriverError::Call { call, code, name: self.error_name(code) })
        }
    }

    pub fn init(&self) -> Result<(), DriverError> {
        // SAFETY: plain driver call.
        self.check("cuInit", unsafe { (self.cuInit)(0) })
    }

    /// e.g. 13000 for CUDA 13.0.
    pub fn driver_version(&self) -> Result<i32, DriverError> {
        let mut v = 0;
        // SAFETY: writes one int.
        self.check("cuDriverGetVersion", unsafe { (self.cuDriverGetVersion)(&mut v) })?;
        Ok(v)
    }

    pub fn device_count(&self) -> Result<i32, DriverError> {
        let mut n = 0;
        // SAFETY: writes one int.
        self.check("cuDeviceGetCount", unsafe { (self.cuDeviceGetCount)(&mut n) })?;
        Ok(n)
    }

    pub fn device(&self, ordinal: i32) -> Result<sys::CUdevice, DriverError> {
        let mut d: sys::CUdevice = 0;
        // SAFETY: writes one handle.
        self.check("cuDeviceGet", unsafe { (self.cuDeviceGet)(&mut d, ordinal) })?;
        Ok(d)
    }

    pub fn compute_capability(&self, dev: sys::CUdevice) -> Result<(i32, i32), DriverError> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes one int each.
        self.check("cuDeviceGetAttribute", unsafe { (self.cuDeviceGetAttribute)(&mut major, ATTR_CC_MAJOR, dev) })?;
        self.check("cuDeviceGetAttribute", unsafe { (self.cuDeviceGetAttribute)(&mut minor, ATTR_CC_MINOR, dev) })?;
        Ok((major, minor))
    }

    pub fn device_name(&self, dev: sys::CUdevice) -> Result<String, DriverError> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: the driver writes at most len bytes, NUL-terminated.
        self.check("cuDeviceGetName", unsafe { (self.cuDeviceGetName)(buf.as_mut_ptr(), buf.len() as c_int, dev) })?;
        let bytes: Vec<u8> = buf.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Runs jobs on one device in this process. After a fault the context is lost: the
/// executor refuses further jobs (the worker exits and the parent starts a fresh one).
pub struct CudaExecutor {
    api: Api,
    ctx: sys::CUcontext,
    poisoned: Option<String>,
    stages: StageTimes,
}

/// Where the driver's time went, summed over the jobs: what a job costs on each road
/// (docs/runner.md, "Roads onto the GPU"), measured on whatever driver answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct StageTimes {
    pub jobs: u64,
    /// `cuModuleLoadData` and `cuModuleGetFunction`.
    pub load: std::time::Duration,
    /// The two `cuMemAlloc`s, the input's `cuMemcpyHtoD` and the output's canary.
    pub copy_in: std::time::Duration,
    /// `cuLaunchKernel` and `cuCtxSynchronize`.
    pub launch: std::time::Duration,
    /// The output's `cuMemcpyDtoH`.
    pub copy_out: std::time::Duration,
    /// `cuMemFree` and `cuModuleUnload`.
    pub free: std::time::Duration,
}

impl StageTimes {
    /// One line: microseconds per job of each stage.
    pub fn line(&self) -> String {
        let per = |d: std::time::Duration| d.as_secs_f64() * 1e6 / self.jobs.max(1) as f64;
        format!(
            "driver stage times: {} jobs; per job: module load {:.1} us, alloc+copy in {:.1} us, launch+sync {:.1} us, copy out {:.1} us, free+unload {:.1} us",
            self.jobs,
            per(self.load),
            per(self.copy_in),
            per(self.launch),
            per(self.copy_out),
            per(self.free)
        )
    }
}

impl CudaExecutor {
    /// Open device `ordinal`'s primary context; requires `arch`'s compute capability, or
    /// (None) that of any architecture the harness speaks.
    pub fn open(ordinal: i32, arch: Option<&Target>) -> Result<CudaExecutor, ExecError> {
        let setup = |e: DriverError| ExecError::Setup(e.to_string());
        let api = Api::load().map_err(setup)?;
        api.init().map_err(setup)?;
        let dev = api.device(ordinal).map_err(setup)?;
        let cc = api.compute_capability(dev).map_err(setup)?;
        match (arch, Target::of_compute_capability(cc)) {
            (Some(t), _) if t.compute_capability != cc => {
                let (ma, mi) = t.compute_capability;
                return Err(ExecError::Setup(format!("device {ordinal} has compute capability {}.{}, need {ma}.{mi} ({t})", cc.0, cc.1)));
            }
            (None, None) => {
                return Err(ExecError::Setup(format!("device {ordinal} has compute capability {}.{}: no architecture the harness speaks", cc.0, cc.1)));
            }
            _ => {}
        }
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: retains the device's primary context (released with the process).
        api.check("cuDevicePrimaryCtxRetain", unsafe { (api.cuDevicePrimaryCtxRetain)(&mut ctx, dev) }).map_err(setup)?;
        api.check("cuCtxSetCurrent", unsafe { (api.cuCtxSetCurrent)(ctx) }).map_err(setup)?;
        Ok(CudaExecutor { api, ctx, poisoned: None, stages: StageTimes::default() })
    }

    /// A driver error of `stage`: a fault when the kernel raised it (the context is now
    /// unusable), a setup error otherwise.
    fn fail(&mut self, stage: &str, code: CuResult) -> ExecError {
        let name = self.api.error_name(code);
        if is_kernel_fault(code) {
            self.poisoned = Some(name.clone());
            ExecError::Fault { code, name, stage: stage.to_string() }
        } else {
            ExecError::Setup(format!("{stage}: {name} ({code})"))
        }
    }

    fn run(&mut self, job: &LaunchJob, bufs: &mut Vec<sys::CUdeviceptr>, module: &mut Option<sys::CUmodule>) -> Result<Vec<u8>, ExecError> {
        let a = self.api;
        // SAFETY (whole function): every pointer handed to the driver is either a live Rust
        // buffer of the stated length or a device allocation made here of that length.
        unsafe {
            let r = (a.cuCtxSetCurrent)(self.ctx);
            if r != CUDA_SUCCESS {
                return Err(self.fail("cuCtxSetCurrent", r));
            }
            // cuModuleLoadData wants the image; a cubin is an ELF with its own length, which
            // the driver trusts: an image whose tables reach past the buffer is refused here
            check_image(&job.cubin).map_err(|why| ExecError::Setup(format!("job: the cubin ({} bytes) {why}; not loaded", job.cubin.len())))?;
            let t = std::time::Instant::now();
            let mut m: sys::CUmodule = std::ptr::null_mut();
            let r = (a.cuModuleLoadData)(&mut m, job.cubin.as_ptr() as *const c_void);
            if is_image_rejection(r) {
                return Err(ExecError::Fault { code: r, name: a.error_name(r), stage: "cuModuleLoadData".into() });
            }
            if r != CUDA_SUCCESS {
                return Err(self.fail("cuModuleLoadData", r));
            }
            *module = Some(m);
            let name =
                std::ffi::CString::new(job.kernel_name.as_bytes()).map_err(|_| ExecError::Setup(format!("kernel name {:?} contains NUL", job.kernel_name)))?;
            let mut f: sys::CUfunction = std::ptr::null_mut();
            let r = (a.cuModuleGetFunction)(&mut f, m, name.as_ptr());
            if r != CUDA_SUCCESS {
                return Err(self.fail("cuModuleGetFunction", r));
            }
            self.stages.load += t.elapsed();
            let t = std::time::Instant::now();
            if job.shared_bytes > 48 * 1024 {
                let r = (a.cuFuncSetAttribute)(f, FUNC_ATTR_MAX_DYNAMIC_SHARED, job.shared_bytes as c_int);
                if r != CUDA_SUCCESS {
                    return Err(self.fail("cuFuncSetAttribute", r));
                }
            }
            let mut alloc = |len: usize, stage: &str, me: &mut Self| -> Result<sys::CUdeviceptr, ExecError> {
                let mut p: sys::CUdeviceptr = 0;
                let r = (a.cuMemAlloc_v2)(&mut p, len.max(4));
                if r != CUDA_SUCCESS {
                    return Err(me.fail(stage, r));
                }
                bufs.push(p);
                Ok(p)
            };
            let d_in = alloc(job.input.len(), "cuMemAlloc(input)", self)?;
            let d_out = alloc(job.output_bytes, "cuMemAlloc(output)", self)?;
            if !job.input.is_empty() {
                let r = (a.cuMemcpyHtoD_v2)(d_in, job.input.as_ptr() as *const c_void, job.input.len());
                if r != CUDA_SUCCESS {
                    return Err(self.fail("cuMemcpyHtoD", r));
                }
            }
            // A canary, so output the kernel never wrote cannot pass for a result of zero.
            let r = (a.cuMemsetD8_v2)(d_out, 0xA5, job.output_bytes.max(4));
            if r != CUDA_SUCCESS {
                return Err(self.fail("cuMemsetD8", r));
            }
            self.stages.copy_in += t.elapsed();
            let t = std::time::Instant::now();
            let mut p_in: u64 = d_in;
            let mut p_out: u64 = d_out;
            let mut params: [*mut c_void; 2] = [&mut p_in as *mut u64 as *mut c_void, &mut p_out as *mut u64 as *mut c_void];
            let [gx, gy, gz] = job.grid;
            let [bx, by, bz] = job.block;
            let r = (a.cuLaunchKernel)(f, gx, gy, gz, bx, by, bz, job.shared_bytes, std::ptr::null_mut(), params.as_mut_ptr(), std::ptr::null_mut());
            if r != CUDA_SUCCESS {
                return Err(self.fail("cuLaunchKernel", r));
            }
            let r = (a.cuCtxSynchronize)();
            if r != CUDA_SUCCESS {
                return Err(self.fail("cuCtxSynchronize", r));
            }
            self.stages.launch += t.elapsed();
            let t = std::time::Instant::now();
            let mut out = vec![0u8; job.output_bytes];
            if !out.is_empty() {
                let r = (a.cuMemcpyDtoH_v2)(out.as_mut_ptr() as *mut c_void, d_out, out.len());
                if r != CUDA_SUCCESS {
                    return Err(self.fail("cuMemcpyDtoH", r));
                }
            }
            self.stages.copy_out += t.elapsed();
            Ok(out)
        }
    }
}

impl Executor for CudaExecutor {
    fn execute(&mut self, job: &LaunchJob) -> Result<Vec<u8>, ExecError> {
        if let Some(p) = &self.poisoned {
            return Err(ExecError::Setup(format!("context lost after {p}; start a new process")));
        }
        let mut bufs = Vec::new();
        let mut module = None;
        let r = self.run(job, &mut bufs, &mut module);
        self.stages.jobs += 1;
        let t = std::time::Instant::now();
        if self.poisoned.is_none() {
            // SAFETY: frees what run() allocated/loaded; errors here cannot change the result.
            unsafe {
                for p in bufs {
                    (self.api.cuMemFree_v2)(p);
                }
                if let Some(m) = module {
                    (self.api.cuModuleUnload)(m);
                }
            }
        }
        self.stages.free += t.elapsed();
        r
    }
    fn stage_times(&self) -> Option<String> {
        Some(self.stages.line())
    }
}

/// Whether `image` is a whole 64-bit little-endian ELF: its header, program and section
/// header tables, and every section's bytes inside the buffer. Err: what is wrong.
pub fn check_image(image: &[u8]) -> Result<(), String> {
    if image.len() < 64 || &image[..4] != b"\x7fELF" {
        return Err("is not an ELF image".into());
    }
    if image[4] != 2 || image[5] != 1 {
        return Err("is not a 64-bit little-endian ELF image".into());
    }
    let u16_at = |o: usize| image.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u64);
    let u64_at = |o: usize| image.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    let len = image.len() as u64;
    let table = |off: Option<u64>, size: Option<u64>, n: Option<u64>, what: &str| -> Result<(u64, u64, u64), String> {
        let (off, size, n) = (off.unwrap_or(0), size.unwrap_or(0), n.unwrap_or(0));
        match size.checked_mul(n).and_then(|t| t.checked_add(off)) {
            Some(end) if end <= len => Ok((off, size, n)),
            _ => Err(format!("has a {what} table past its end")),
        }
    };
    table(u64_at(0x20), u16_at(0x36), u16_at(0x38), "program header")?;
    let (shoff, shsize, shnum) = table(u64_at(0x28), u16_at(0x3a), u16_at(0x3c), "section header")?;
    if shnum > 0 && shsize < 64 {
        return Err("has section headers smaller than ELF64's".into());
    }
    for i in 0..shnum {
        let h = (shoff + i * shsize) as usize;
        let kind = image.get(h + 4..h + 8).map(|b| u32::from_le_bytes(b.try_into().unwrap_or([0; 4]))).unwrap_or(0);
        let (off, size) = (u64_at(h + 0x18).unwrap_or(0), u64_at(h + 0x20).unwrap_or(0));
        // SHT_NOBITS (8) occupies no bytes in the file
        if kind != 8 && off.checked_add(size).is_none_or(|end| end > len) {
            return Err(format!("has section {i} past its end"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod image_tests {
    use super::check_image;

    #[test]
    fn the_template_passes_and_cut_or_empty_images_do_not() {
        let t = crate::kernel::TEMPLATE;
        check_image(t).unwrap();
        assert!(check_image(&[]).unwrap_err().contains("not an ELF"));
        for cut in [16, 63, 64, t.len() / 2, t.len() - 1] {
            assert!(check_image(&t[..cut]).is_err(), "cut at {cut}");
        }
    }
}
