//! `libcuda.so` for machines without a GPU: the twenty driver entry points hmul2-harness
//! resolves (`harness/src/gpu/driver.rs`), answering as a driver would, with launches run
//! by the CPU emulator of the patched programs (`harness_kernel::kernel::emu`).
//!
//! Put its folder first on `LD_LIBRARY_PATH` and the harness's real path runs end to end:
//! cudarc's dynamic loader, symbol resolution, device detection, worker processes, module
//! loading, launches, copies, and faults (a launch's fault is reported by the next
//! `cuCtxSynchronize` and then sticks, as on a GPU). It also exports
//! `hmul2FakeCudaDriver`, by which the harness knows it and labels every result as
//! emulated, never as hardware.
//!
//! Configured by `HMUL2_FAKE_CUDA`, a comma-separated list:
//! `devices=N` (default 1), `cc=MAJOR.MINOR` (default 9.0: SM90; any architecture's, e.g.
//! `cc=8.6`: a cubin the device cannot run, such as an sm_90 one on it, fails at
//! `cuModuleLoadData` with `CUDA_ERROR_NO_BINARY_FOR_GPU` as the driver's does), `driver=VERSION` (default 13000),
//! `init=CODE` (`cuInit` fails with CODE; `init=hang`: it never returns, `init=segv`: the
//! process dies of SIGSEGV in it, as broken drivers do), `fault-on:HEX` (a launch whose `.text` holds the
//! word faults with `CUDA_ERROR_ILLEGAL_INSTRUCTION`), `reject-on:HEX` (`cuModuleLoadData`
//! refuses an image holding the word with `CUDA_ERROR_INVALID_IMAGE`), `abort-on:HEX` (the
//! process aborts in the launch, like a driver crash), `flip-if:MASK:VALUE` (an HMUL2 word
//! with `word & MASK == VALUE` gets bit 0 of its result flipped: a mismatch to find),
//! `pred-flip-if:MASK:VALUE` (such a word leaves P0 flipped after it: a wrong or clobbered
//! predicate, which the kernels read back with `P2R`),
//! `hang-if:MASK:VALUE` (a launch whose `.text` holds a word with `word & MASK == VALUE`
//! never finishes: the process sleeps in the launch, as one waits on a hung kernel),
//! `fault=none|multi-case|digest|hang` (the first GPU session's failures, for `ci/device-rehearsal`:
//! a kernel of more than one case faults, the digest kernel faults, or both never return).
//! Anything else makes `cuInit` fail with `CUDA_ERROR_INVALID_VALUE` and a message on stderr.
//! `CUDA_VISIBLE_DEVICES` hides devices as it does from the driver (`""`: `cuInit` fails with
//! `CUDA_ERROR_NO_DEVICE`), so a no-GPU test stays one wherever this library is found.

//!
//! # Safety
//! Every entry point has its CUDA driver API prototype's contract: each pointer argument is
//! null or points to what that function documents (a writable result, a NUL-terminated
//! name, a buffer of the stated length, a whole cubin, `kernelParams` for two `u64`s).
//! Nothing else about the caller is assumed, and no panic crosses the C boundary.

#![allow(non_snake_case)]
// the crate-level # Safety section above covers every entry point
#![allow(clippy::missing_safety_doc)]

use harness_isa::isa::parse_hex;
use harness_isa::target::Target;
use harness_kernel::kernel::elf;
use harness_kernel::kernel::emu::{self, Launch, Program, Regions};
use harness_kernel::kernel::helpers::Op as HelperOp;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, MutexGuard, OnceLock};

type CuResult = c_int;
const SUCCESS: CuResult = 0;
const INVALID_VALUE: CuResult = 1;
const OUT_OF_MEMORY: CuResult = 2;
const NOT_INITIALIZED: CuResult = 3;
const NO_DEVICE: CuResult = 100;
const INVALID_DEVICE: CuResult = 101;
const INVALID_IMAGE: CuResult = 200;
const NO_BINARY_FOR_GPU: CuResult = 209;
const INVALID_CONTEXT: CuResult = 201;
const INVALID_HANDLE: CuResult = 400;
const NOT_FOUND: CuResult = 500;
const LAUNCH_OUT_OF_RESOURCES: CuResult = 701;
const ILLEGAL_INSTRUCTION: CuResult = 715;
const UNKNOWN: CuResult = 999;

/// What `hmul2FakeCudaDriver` returns, and the device name.
const DESCRIPTION: &CStr = c"hmul2-fake-cuda: CPU emulation of patched cubins, no GPU";
/// The device's name, the architecture of its compute capability put in (`HMUL2 fake SM90`).
const DEVICE_NAME: &str = "HMUL2 fake {arch} (CPU emulation, not a GPU)";
/// Where allocations start; each gets its own 4 GiB window so overruns never land in another.
const HEAP_BASE: u64 = 0x7f00_0000_0000;
/// SM90 limits a launch must respect.
const REGISTERS_PER_BLOCK: u32 = 65536;
const MAX_DYNAMIC_SHARED: u32 = 227 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Misbehave {
    Hang,
    Segv,
}

/// `fault=KIND`: the H200's failures, recognised by what a kernel holds, not by its words,
/// so that every road and every instruction meets them alike. A *case* is a `.text` word
/// of the patcher's kernels that is no helper (`emu::Program::cases`): a batch kernel holds
/// one per case, a digest kernel one; the digest kernel is the one that reads `SR_CTAID.X`
/// (the batch kernels' threads index by `SR_TID.X` alone). A scaffold (ptxas's code, known
/// by its prologue's `LDC R1, c[0x0][0x28]`, or `MOV R1, ...` or `IMAD.MOV.U32 R1, ...` on
/// SM80..SM89) is one case whatever else it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Fault {
    /// No fault injected.
    #[default]
    None,
    /// Every launch of a kernel holding more than one case faults with
    /// `CUDA_ERROR_ILLEGAL_INSTRUCTION` at the next synchronize (the H200's batches of two
    /// or more cases made no progress; one case of 32 threads ran).
    MultiCase,
    /// Every launch of the digest kernel faults with `CUDA_ERROR_ILLEGAL_INSTRUCTION`, as
    /// on the H200 for every word tried.
    Digest,
    /// Every launch of a kernel holding more than one case, and of the digest kernel, never
    /// returns: the other reading of "made no progress" (a hang, not a fault), where only
    /// one-case kernels run.
    Hang,
}

impl Fault {
    fn parse(s: &str) -> Option<Fault> {
        Some(match s {
            "none" => Fault::None,
            "multi-case" => Fault::MultiCase,
            "digest" => Fault::Digest,
            "hang" => Fault::Hang,
            _ => return None,
        })
    }

    /// What a launch of `p` does under this fault: None runs it.
    fn of(self, p: &Program) -> Option<Injected> {
        // a scaffold (the scaffold road) is ptxas's code, known by its prologue's `LDC R1,
        // c[0x0][0x28]` (`MOV R1, c[0x0][0x28]` or `IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]`
        // on SM80..SM89): one case, beside a decoy family word ptxas needs; never the digest
        let ptxas = p.uses(HelperOp::Ldc) || p.uses(HelperOp::MovConst) || p.uses(HelperOp::ImadMovU32Const);
        let multi = !ptxas && p.cases() > 1;
        let digest = !ptxas && p.uses(HelperOp::S2rCtaidX);
        match self {
            Fault::None => None,
            Fault::MultiCase => multi.then_some(Injected::Fault),
            Fault::Digest => digest.then_some(Injected::Fault),
            Fault::Hang => (multi || digest).then_some(Injected::Hang),
        }
    }
}

/// What an injected fault does to a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Injected {
    Fault,
    Hang,
}

#[derive(Debug, Default)]
struct Config {
    fault: Fault,
    devices: i32,
    cc: (i32, i32),
    driver: i32,
    init: CuResult,
    /// `init=hang` / `init=segv`: what `cuInit` does instead of returning.
    init_misbehaves: Option<Misbehave>,
    fault_on: Vec<u128>,
    reject_on: Vec<u128>,
    abort_on: Vec<u128>,
    flip_if: Vec<(u128, u128)>,
    /// `pred-flip-if:MASK:VALUE`: P0 after a matching word flipped.
    pred_flip_if: Vec<(u128, u128)>,
    hang_if: Vec<(u128, u128)>,
}

fn parse_config(spec: &str) -> Result<Config, String> {
    let mut c = Config { devices: 1, cc: Target::DEFAULT.compute_capability, driver: 13000, ..Config::default() };
    let hex = |d: &str, s: &str| parse_hex(s).map_err(|e| format!("{d:?}: {e}"));
    let int = |d: &str, s: &str| s.parse::<i32>().map_err(|e| format!("{d:?}: {e}"));
    for d in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        if let Some(v) = d.strip_prefix("devices=") {
            c.devices = int(d, v)?;
        } else if let Some(v) = d.strip_prefix("cc=") {
            let (a, b) = v.split_once('.').ok_or_else(|| format!("{d:?}: want cc=MAJOR.MINOR"))?;
            c.cc = (int(d, a)?, int(d, b)?);
        } else if let Some(v) = d.strip_prefix("driver=") {
            c.driver = int(d, v)?;
        } else if d == "init=hang" {
            c.init_misbehaves = Some(Misbehave::Hang);
        } else if d == "init=segv" {
            c.init_misbehaves = Some(Misbehave::Segv);
        } else if let Some(v) = d.strip_prefix("init=") {
            c.init = int(d, v)?;
        } else if let Some(v) = d.strip_prefix("fault-on:") {
            c.fault_on.push(hex(d, v)?);
        } else if let Some(v) = d.strip_prefix("reject-on:") {
            c.reject_on.push(hex(d, v)?);
        } else if let Some(v) = d.strip_prefix("abort-on:") {
            c.abort_on.push(hex(d, v)?);
        } else if let Some(v) = d.strip_prefix("flip-if:") {
            let (m, x) = v.split_once(':').ok_or_else(|| format!("{d:?}: want flip-if:MASK:VALUE"))?;
            c.flip_if.push((hex(d, m)?, hex(d, x)?));
        } else if let Some(v) = d.strip_prefix("pred-flip-if:") {
            let (m, x) = v.split_once(':').ok_or_else(|| format!("{d:?}: want pred-flip-if:MASK:VALUE"))?;
            c.pred_flip_if.push((hex(d, m)?, hex(d, x)?));
        } else if let Some(v) = d.strip_prefix("fault=") {
            c.fault = Fault::parse(v).ok_or_else(|| format!("{d:?}: want fault=none, multi-case, digest or hang"))?;
        } else if let Some(v) = d.strip_prefix("hang-if:") {
            let (m, x) = v.split_once(':').ok_or_else(|| format!("{d:?}: want hang-if:MASK:VALUE"))?;
            c.hang_if.push((hex(d, m)?, hex(d, x)?));
        } else {
            return Err(format!("unknown directive {d:?}"));
        }
    }
    Ok(c)
}

fn config() -> &'static Result<Config, String> {
    static C: OnceLock<Result<Config, String>> = OnceLock::new();
    C.get_or_init(|| parse_config(&std::env::var("HMUL2_FAKE_CUDA").unwrap_or_default()))
}

struct Module {
    program: Program,
    words: Vec<u128>,
}

struct Function {
    module: usize,
    max_dynamic_shared: u32,
}

#[derive(Default)]
struct State {
    initialized: bool,
    context: bool,
    memory: Regions,
    next_window: u64,
    modules: Vec<Option<Module>>,
    functions: Vec<Function>,
    /// The fault of the last launch, reported by the next synchronize.
    pending: Option<CuResult>,
    /// After a fault every call fails with it, as a lost context does.
    sticky: Option<CuResult>,
}

fn state() -> MutexGuard<'static, State> {
    static S: OnceLock<Mutex<State>> = OnceLock::new();
    let m = S.get_or_init(|| Mutex::new(State::default()));
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run an entry point: no panic crosses the C boundary.
fn guard(f: impl FnOnce() -> CuResult) -> CuResult {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(UNKNOWN)
}

/// The usual preamble: initialized, no lost context.
fn ready(s: &State) -> Result<(), CuResult> {
    if !s.initialized {
        return Err(NOT_INITIALIZED);
    }
    if let Some(c) = s.sticky {
        return Err(c);
    }
    Ok(())
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(c) => return c,
        }
    };
}

#[no_mangle]
pub extern "C" fn hmul2FakeCudaDriver() -> *const c_char {
    DESCRIPTION.as_ptr()
}

#[no_mangle]
pub extern "C" fn cuInit(flags: c_uint) -> CuResult {
    guard(|| {
        if flags != 0 {
            return INVALID_VALUE;
        }
        let c = match config() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("hmul2-fake-cuda: HMUL2_FAKE_CUDA: {e}");
                return INVALID_VALUE;
            }
        };
        match c.init_misbehaves {
            Some(Misbehave::Hang) => {
                // never returns, like a driver stuck in its first call; leaves once orphaned,
                // so a test that kills the caller's parent leaves no stray process behind
                let parent = std::os::unix::process::parent_id();
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    if std::os::unix::process::parent_id() != parent {
                        std::process::exit(9);
                    }
                }
            }
            // SAFETY: setting the default action and raising a signal have no memory effect;
            // the process dies of it (Rust's own SIGSEGV handler, which would return from a
            // raised signal, is put aside first)
            Some(Misbehave::Segv) => unsafe {
                libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                libc::raise(libc::SIGSEGV);
            },
            None => {}
        }
        if c.init != SUCCESS {
            return c.init;
        }
        // as the driver does when CUDA_VISIBLE_DEVICES hides every device (`devices=0`
        // instead initializes and reports a count of 0: the harness's other path)
        if c.devices > 0 && device_count() == 0 {
            return NO_DEVICE;
        }
        state().initialized = true;
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(v: *mut c_int) -> CuResult {
    guard(|| {
        if v.is_null() {
            return INVALID_VALUE;
        }
        let version = config().as_ref().map(|c| c.driver).unwrap_or(13000);
        // SAFETY: the caller passes a writable int.
        unsafe { *v = version };
        SUCCESS
    })
}

/// The devices this process sees: the configured ones, cut down by `CUDA_VISIBLE_DEVICES`
/// as the driver does (so `CUDA_VISIBLE_DEVICES=""` hides them all, even from a test that
/// finds this library on its path by accident).
fn device_count() -> i32 {
    let n = config().as_ref().map(|c| c.devices).unwrap_or(0);
    visible(n, std::env::var("CUDA_VISIBLE_DEVICES").ok().as_deref())
}

/// Of `n` devices, how many a `CUDA_VISIBLE_DEVICES` list leaves: unset, all of them; else the
/// listed ordinals up to the first entry that names none (empty: none). The fake's devices
/// are alike, so which ones does not matter.
fn visible(n: i32, list: Option<&str>) -> i32 {
    let Some(list) = list else { return n };
    let mut seen = Vec::new();
    for item in list.split(',') {
        match item.trim().parse::<i32>() {
            Ok(i) if (0..n).contains(&i) && !seen.contains(&i) => seen.push(i),
            _ => break,
        }
    }
    seen.len() as i32
}

/// `CUDA_ERROR_INVALID_DEVICE` unless `dev` names one of the configured devices.
fn known_device(dev: c_int) -> Result<(), CuResult> {
    if (0..device_count()).contains(&dev) {
        Ok(())
    } else {
        Err(INVALID_DEVICE)
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(n: *mut c_int) -> CuResult {
    guard(|| {
        tri!(ready(&state()));
        if n.is_null() {
            return INVALID_VALUE;
        }
        // SAFETY: the caller passes a writable int.
        unsafe { *n = device_count() };
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(d: *mut c_int, ordinal: c_int) -> CuResult {
    guard(|| {
        tri!(ready(&state()));
        if d.is_null() {
            return INVALID_VALUE;
        }
        tri!(known_device(ordinal));
        // SAFETY: the caller passes a writable CUdevice (an int).
        unsafe { *d = ordinal };
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(v: *mut c_int, attr: c_int, dev: c_int) -> CuResult {
    guard(|| {
        tri!(ready(&state()));
        if v.is_null() {
            return INVALID_VALUE;
        }
        tri!(known_device(dev));
        let (major, minor) = config().as_ref().map(|c| c.cc).unwrap_or((0, 0));
        let x = match attr {
            75 => major,
            76 => minor,
            _ => return INVALID_VALUE,
        };
        // SAFETY: the caller passes a writable int.
        unsafe { *v = x };
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(buf: *mut c_char, len: c_int, dev: c_int) -> CuResult {
    guard(|| {
        tri!(ready(&state()));
        if buf.is_null() || len <= 0 {
            return INVALID_VALUE;
        }
        tri!(known_device(dev));
        let cc = config().as_ref().map(|c| c.cc).unwrap_or(Target::DEFAULT.compute_capability);
        let arch = Target::of_compute_capability(cc).map_or_else(|| format!("cc {}.{}", cc.0, cc.1), |t| t.nvdisasm.to_string());
        let name = format!("{} #{dev}", DEVICE_NAME.replace("{arch}", &arch));
        let n = name.len().min(len as usize - 1);
        // SAFETY: the caller's buffer holds len bytes; n + 1 <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr() as *const c_char, buf, n);
            *buf.add(n) = 0;
        }
        SUCCESS
    })
}

/// The one context handle (every device shares the emulator).
const CONTEXT: usize = 0xc0_7e47;

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, dev: c_int) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(ready(&s));
        if ctx.is_null() {
            return INVALID_VALUE;
        }
        tri!(known_device(dev));
        s.context = true;
        // SAFETY: the caller passes a writable CUcontext.
        unsafe { *ctx = CONTEXT as *mut c_void };
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> CuResult {
    guard(|| {
        let s = state();
        tri!(ready(&s));
        if ctx as usize != CONTEXT || !s.context {
            return INVALID_CONTEXT;
        }
        SUCCESS
    })
}

fn current(s: &State) -> Result<(), CuResult> {
    ready(s)?;
    if !s.context {
        return Err(INVALID_CONTEXT);
    }
    Ok(())
}

#[no_mangle]
pub extern "C" fn cuCtxSynchronize() -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        match s.pending.take() {
            Some(code) => {
                s.sticky = Some(code);
                code
            }
            None => SUCCESS,
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(m: *mut *mut c_void, image: *const c_void) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        if m.is_null() || image.is_null() {
            return INVALID_VALUE;
        }
        // A cubin carries its own length: the ELF header's section table ends it.
        // SAFETY: the caller passes a whole cubin; the header is read before its length is trusted.
        let bytes = unsafe {
            let head = std::slice::from_raw_parts(image as *const u8, 64);
            if &head[0..4] != b"\x7fELF" || head[4] != 2 {
                return INVALID_IMAGE;
            }
            let u64_at = |d: &[u8], at: usize| u64::from_le_bytes(d[at..at + 8].try_into().unwrap_or_default());
            let u16_at = |d: &[u8], at: usize| u16::from_le_bytes([d[at], d[at + 1]]) as u64;
            let (phoff, phnum, shoff, shnum) = (u64_at(head, 0x20), u16_at(head, 0x38), u64_at(head, 0x28), u16_at(head, 0x3c));
            let tables = shoff.saturating_add(shnum * 64).max(phoff.saturating_add(phnum * 56));
            if tables > 1 << 30 || shoff.saturating_add(shnum * 64) > tables {
                return INVALID_IMAGE;
            }
            // and every section's contents
            let shdrs = std::slice::from_raw_parts(image as *const u8, tables as usize);
            let mut len = tables;
            for i in 0..shnum as usize {
                let at = shoff as usize + 64 * i;
                let kind = u32::from_le_bytes(shdrs[at + 4..at + 8].try_into().unwrap_or_default());
                if kind != 8 {
                    len = len.max(u64_at(shdrs, at + 24).saturating_add(u64_at(shdrs, at + 32)));
                }
            }
            if len > 1 << 30 {
                return INVALID_IMAGE;
            }
            std::slice::from_raw_parts(image as *const u8, len as usize)
        };
        let img = match elf::image(bytes) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("hmul2-fake-cuda: cuModuleLoadData: {e}");
                return INVALID_IMAGE;
            }
        };
        if let Ok(c) = config() {
            let v = load_verdict(&img, c);
            if v != SUCCESS {
                return v;
            }
        }
        let program = match Program::load(&img) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("hmul2-fake-cuda: cuModuleLoadData: {e}");
                return INVALID_IMAGE;
            }
        };
        s.modules.push(Some(Module { program, words: img.text.clone() }));
        let handle = s.modules.len();
        // SAFETY: the caller passes a writable CUmodule.
        unsafe { *m = handle as *mut c_void };
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuModuleUnload(m: *mut c_void) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        match (m as usize).checked_sub(1).and_then(|i| s.modules.get_mut(i)) {
            Some(slot @ Some(_)) => {
                *slot = None;
                SUCCESS
            }
            _ => INVALID_HANDLE,
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(f: *mut *mut c_void, m: *mut c_void, name: *const c_char) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        if f.is_null() || name.is_null() {
            return INVALID_VALUE;
        }
        let module = (m as usize).wrapping_sub(1);
        if !matches!(s.modules.get(module), Some(Some(_))) {
            return INVALID_HANDLE;
        }
        // SAFETY: the caller passes a NUL-terminated name.
        let n = unsafe { CStr::from_ptr(name) };
        if n.to_bytes() != elf::KERNEL_NAME.as_bytes() {
            return NOT_FOUND;
        }
        s.functions.push(Function { module, max_dynamic_shared: 48 * 1024 });
        let handle = s.functions.len();
        // SAFETY: the caller passes a writable CUfunction.
        unsafe { *f = handle as *mut c_void };
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuFuncSetAttribute(f: *mut c_void, attr: c_int, value: c_int) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        let Some(func) = (f as usize).checked_sub(1).and_then(|i| s.functions.get_mut(i)) else {
            return INVALID_HANDLE;
        };
        // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        if attr != 8 || value < 0 || value as u32 > MAX_DYNAMIC_SHARED {
            return INVALID_VALUE;
        }
        func.max_dynamic_shared = value as u32;
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(p: *mut u64, len: usize) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        if p.is_null() || len == 0 {
            return INVALID_VALUE;
        }
        if len > 1 << 32 {
            return OUT_OF_MEMORY;
        }
        let base = HEAP_BASE + (s.next_window << 32);
        s.next_window += 1;
        s.memory.0.push((base, vec![0x5a; len]));
        // SAFETY: the caller passes a writable CUdeviceptr.
        unsafe { *p = base };
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuMemFree_v2(p: u64) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        match s.memory.0.iter().position(|(b, _)| *b == p) {
            Some(i) => {
                s.memory.0.remove(i);
                SUCCESS
            }
            None => INVALID_VALUE,
        }
    })
}

fn region(s: &mut State, p: u64, len: usize) -> Result<&mut [u8], CuResult> {
    s.memory
        .0
        .iter_mut()
        .find_map(|(b, bytes)| {
            let off = p.checked_sub(*b)? as usize;
            bytes.get_mut(off..off.checked_add(len)?)
        })
        .ok_or(INVALID_VALUE)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, len: usize) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        if src.is_null() {
            return INVALID_VALUE;
        }
        let d = tri!(region(&mut s, dst, len));
        // SAFETY: the caller's buffer holds len bytes.
        d.copy_from_slice(unsafe { std::slice::from_raw_parts(src as *const u8, len) });
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, len: usize) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        if dst.is_null() {
            return INVALID_VALUE;
        }
        let d = tri!(region(&mut s, src, len));
        // SAFETY: the caller's buffer holds len bytes.
        unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, len) }.copy_from_slice(d);
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuMemsetD8_v2(dst: u64, value: u8, len: usize) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        tri!(region(&mut s, dst, len)).fill(value);
        SUCCESS
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    guard(|| {
        let mut s = state();
        tri!(current(&s));
        if !stream.is_null() || !extra.is_null() || params.is_null() {
            return INVALID_VALUE;
        }
        let Some(func) = (f as usize).checked_sub(1).and_then(|i| s.functions.get(i)) else {
            return INVALID_HANDLE;
        };
        if shared > func.max_dynamic_shared {
            return INVALID_VALUE;
        }
        let module = func.module;
        let Some(Some(m)) = s.modules.get(module) else {
            return INVALID_HANDLE;
        };
        // SAFETY: the kernel takes two u64 pointers; the caller passes an array of two
        // pointers to them (cuLaunchKernel's kernelParams).
        let p = unsafe { [*(*params as *const u64), *(*params.add(1) as *const u64)] };
        // the SM90 register file: 64K registers per block, allocated per warp in units of 256
        let regs = m.program.regcount();
        let per_warp = (regs * 32).div_ceil(256) * 256;
        if bx.saturating_mul(by).saturating_mul(bz).div_ceil(32).saturating_mul(per_warp) > REGISTERS_PER_BLOCK {
            return LAUNCH_OUT_OF_RESOURCES;
        }
        if let Ok(c) = config() {
            if m.words.iter().any(|w| c.abort_on.contains(w)) {
                eprintln!("hmul2-fake-cuda: aborting, as configured");
                std::process::abort();
            }
            if m.words.iter().any(|w| c.fault_on.contains(w)) {
                s.pending = Some(ILLEGAL_INSTRUCTION);
                return SUCCESS;
            }
            let injected = c.fault.of(&m.program);
            if injected == Some(Injected::Fault) {
                eprintln!("hmul2-fake-cuda: launch faults: {:?} injected (HMUL2_FAKE_CUDA)", c.fault);
                s.pending = Some(ILLEGAL_INSTRUCTION);
                return SUCCESS;
            }
            if injected == Some(Injected::Hang) || m.words.iter().any(|w| c.hang_if.iter().any(|&(mk, v)| w & mk == v)) {
                eprintln!("hmul2-fake-cuda: hanging in the launch, as configured");
                drop(s); // the driver's lock: another thread may still ask it things
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
        }
        let flips: Vec<(u128, u128)> = config().as_ref().map(|c| c.flip_if.clone()).unwrap_or_default();
        let pred_flips: Vec<(u128, u128)> = config().as_ref().map(|c| c.pred_flip_if.clone()).unwrap_or_default();
        let launch = Launch { grid: [gx, gy, gz], block: [bx, by, bz], params: p };
        let program = m.program.clone();
        let mut hook = |site: &emu::Site| {
            let hit = |f: &[(u128, u128)]| f.iter().any(|&(mk, v)| site.word & mk == v);
            let mut w = emu::reference_effects(site);
            w.dst ^= hit(&flips) as u32;
            if hit(&pred_flips) {
                // P0 after the word: the reference's, or the file as it was, flipped
                w.preds = Some(w.preds.unwrap_or(site.inputs.pred) ^ 1);
            }
            w
        };
        let st = &mut *s;
        if let Err(fault) = emu::run_effects(&program, &launch, &mut st.memory, &mut hook) {
            eprintln!("hmul2-fake-cuda: launch: {fault}");
            // launch errors are immediate; faults surface at the next synchronize
            if matches!(fault, emu::Fault::Launch(_)) {
                return fault.cuda_code();
            }
            st.pending = Some(fault.cuda_code());
        }
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(code: CuResult, out: *mut *const c_char) -> CuResult {
    guard(|| {
        if out.is_null() {
            return INVALID_VALUE;
        }
        let Some(name) = harness_runner::gpu::driver::known_error_name(code) else {
            return INVALID_VALUE;
        };
        // SAFETY: the caller passes a writable pointer; the string is static.
        unsafe { *out = name.as_ptr() };
        SUCCESS
    })
}

/// What the driver says to loading `img` on the configured device: `CUDA_ERROR_NO_BINARY_FOR_GPU`
/// for a cubin of an architecture the device cannot run, `CUDA_ERROR_INVALID_IMAGE` for one
/// holding a `reject-on` word, else success.
fn load_verdict(img: &elf::Image, c: &Config) -> CuResult {
    if !runs_on(img.target.compute_capability, c.cc) {
        eprintln!("hmul2-fake-cuda: cuModuleLoadData: the cubin is for {}, the device is compute capability {}.{}", img.target.ptxas, c.cc.0, c.cc.1);
        return NO_BINARY_FOR_GPU;
    }
    if img.text.iter().any(|w| c.reject_on.contains(w)) {
        return INVALID_IMAGE;
    }
    SUCCESS
}

/// Whether the driver runs a cubin for compute capability `code` on a device of `device`:
/// binary compatibility holds within a major version, for a minor version up to the
/// device's (an sm_80 cubin runs on 8.6 and 8.9; sm_90 only on 9.0; sm_100 not on 12.0).
fn runs_on(code: (i32, i32), device: (i32, i32)) -> bool {
    code.0 == device.0 && code.1 <= device.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cubin_for_another_architecture_fails_to_load_as_the_drivers_does() {
        use harness_kernel::kernel::{build_for, runnable_words_for, Case};
        let image = |t: &'static Target| {
            let words = runnable_words_for(t, 7, harness_kernel::reference::IMPLEMENTED, None, 2).unwrap();
            let cases: Vec<Case> = words.iter().map(|&word| Case { word, inputs: vec![Default::default(); 32] }).collect();
            elf::image(&build_for(t, &cases).unwrap().job.cubin).unwrap()
        };
        let (sm80, sm86, sm90, sm100, sm120) = (image(&Target::SM80), image(&Target::SM86), image(&Target::SM90), image(&Target::SM100), image(&Target::SM120));
        let device = |cc: &str| parse_config(&format!("cc={cc}")).unwrap();
        // the default device is SM90's: it runs sm_90 code only
        let d = parse_config("").unwrap();
        assert_eq!([&sm90, &sm86, &sm80, &sm100].map(|i| load_verdict(i, &d)), [SUCCESS, NO_BINARY_FOR_GPU, NO_BINARY_FOR_GPU, NO_BINARY_FOR_GPU]);
        // an 8.6 device runs sm_86 and sm_80 code, not sm_90's
        assert_eq!([&sm86, &sm80, &sm90, &sm120].map(|i| load_verdict(i, &device("8.6"))), [SUCCESS, SUCCESS, NO_BINARY_FOR_GPU, NO_BINARY_FOR_GPU]);
        assert_eq!([&sm120, &sm100].map(|i| load_verdict(i, &device("12.0"))), [SUCCESS, NO_BINARY_FOR_GPU]);
        assert_eq!(known_error_name_of(NO_BINARY_FOR_GPU), "CUDA_ERROR_NO_BINARY_FOR_GPU");
        // and the image of each target decodes as that target's program
        for (i, t) in [(&sm80, &Target::SM80), (&sm100, &Target::SM100)] {
            assert_eq!(Program::load(i).unwrap().target(), t);
        }
    }

    fn known_error_name_of(code: CuResult) -> String {
        harness_runner::gpu::driver::known_error_name(code).map(|c| c.to_string_lossy().into_owned()).unwrap_or_default()
    }

    #[test]
    fn a_cubin_runs_where_the_driver_would_run_it() {
        assert!(runs_on((9, 0), (9, 0)));
        assert!(runs_on((8, 0), (8, 6)) && runs_on((8, 6), (8, 9)));
        assert!(!runs_on((9, 0), (8, 6)) && !runs_on((8, 6), (8, 0)) && !runs_on((10, 0), (12, 0)) && !runs_on((8, 9), (9, 0)));
        for t in Target::ALL {
            let others = Target::ALL.iter().filter(|o| o.sm != t.sm && runs_on(o.compute_capability, t.compute_capability)).count();
            // only SM86 and SM89 run another's code (SM80's; SM89 also SM86's)
            assert_eq!(
                others,
                match t.sm {
                    86 => 1,
                    89 => 2,
                    _ => 0,
                },
                "{t}"
            );
        }
    }

    #[test]
    fn config_parses_and_refuses() {
        let (one, ff, w) = (format!("0x{:032x}", 1), format!("0x{:032x}", 0xff), format!("0x{:032x}", 0x32));
        let c =
            parse_config(&format!("devices=2,cc=8.0,driver=12080,init=100,fault-on:{one},reject-on:{w},abort-on:{one},flip-if:{ff}:{w},hang-if:{ff}:{one}"))
                .unwrap();
        assert_eq!((c.devices, c.cc, c.driver, c.init), (2, (8, 0), 12080, 100));
        assert_eq!((c.fault_on, c.reject_on, c.abort_on, c.flip_if), (vec![1], vec![0x32], vec![1], vec![(0xff, 0x32)]));
        assert_eq!(c.hang_if, vec![(0xff, 1)]);
        assert_eq!(parse_config(&format!("pred-flip-if:{ff}:{w}")).unwrap().pred_flip_if, vec![(0xff, 0x32)]);
        assert!(parse_config("pred-flip-if:0x1").unwrap_err().contains("pred-flip-if:MASK:VALUE"));
        assert!(parse_config("fault-on:0x1").unwrap_err().contains("32 hex digits"));
        let d = parse_config("").unwrap();
        assert_eq!((d.devices, d.cc, d.driver), (1, (9, 0), 13000));
        assert!(parse_config("gpu=yes").unwrap_err().contains("unknown directive"));
        assert!(parse_config("cc=9").is_err());
    }

    #[test]
    fn injected_faults_know_a_batch_of_many_cases_and_the_digest_kernel() {
        use harness_kernel::exhaustive::DigestRequest;
        use harness_kernel::kernel::{build, digest, Case};
        let words = harness_kernel::kernel::runnable_words(5, None, 3).unwrap();
        let program = |cubin: &[u8]| Program::load(&elf::image(cubin).unwrap()).unwrap();
        let batch = |n: usize| {
            program(&build(&words[..n].iter().map(|&word| Case { word, inputs: vec![Default::default(); 32] }).collect::<Vec<_>>()).unwrap().job.cubin)
        };
        let (one, three) = (batch(1), batch(3));
        let req = DigestRequest { word: 0x000fe200000000000000000201007232, space_bits: 8, chunk_bits: 8, first_chunk: 0, chunks: 1, c: 0 };
        let dig = program(&digest::build(&req).unwrap().job.cubin);
        assert_eq!((one.cases(), three.cases(), dig.cases()), (1, 3, 1));
        let of = |f: Fault| [f.of(&one), f.of(&three), f.of(&dig)];
        assert_eq!(of(Fault::None), [None, None, None]);
        assert_eq!(of(Fault::MultiCase), [None, Some(Injected::Fault), None]);
        assert_eq!(of(Fault::Digest), [None, None, Some(Injected::Fault)]);
        assert_eq!(of(Fault::Hang), [None, Some(Injected::Hang), Some(Injected::Hang)]);
        // a scaffold holds a decoy family word beside its case: one case, never the digest
        let sc = harness_kernel::kernel::scaffold::build(&Case { word: 0x000fe2000000000000000009080c7232, inputs: vec![Default::default(); 32] }).unwrap();
        let sc = program(&sc.job.cubin);
        assert!(sc.cases() > 1, "the decoy counts as a word under test to the emulator");
        for f in [Fault::MultiCase, Fault::Digest, Fault::Hang] {
            assert_eq!(f.of(&sc), None, "{f:?}");
        }
        for (k, f) in [("none", Fault::None), ("multi-case", Fault::MultiCase), ("digest", Fault::Digest), ("hang", Fault::Hang)] {
            assert_eq!(parse_config(&format!("fault={k}")).unwrap().fault, f);
        }
        assert!(parse_config("fault=slow").unwrap_err().contains("want fault=none"));
    }

    #[test]
    fn cuda_visible_devices_cuts_the_devices_down_as_the_driver_does() {
        assert_eq!(visible(2, None), 2);
        assert_eq!(visible(2, Some("")), 0, "empty hides every device");
        assert_eq!(visible(2, Some("1")), 1);
        assert_eq!(visible(2, Some("0,1")), 2);
        assert_eq!(visible(2, Some("1,7,0")), 1, "read up to the first that names no device");
        assert_eq!(visible(2, Some("0,0")), 1);
        assert_eq!(visible(1, Some("GPU-abc")), 0);
    }

    #[test]
    fn every_error_code_the_fake_returns_has_a_name() {
        for code in [
            INVALID_VALUE,
            OUT_OF_MEMORY,
            NOT_INITIALIZED,
            INVALID_DEVICE,
            INVALID_IMAGE,
            INVALID_CONTEXT,
            INVALID_HANDLE,
            NOT_FOUND,
            LAUNCH_OUT_OF_RESOURCES,
            ILLEGAL_INSTRUCTION,
            UNKNOWN,
            NO_BINARY_FOR_GPU,
            700,
            702,
            716,
            719,
        ] {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: p is writable.
            assert_eq!(unsafe { cuGetErrorName(code, &mut p) }, SUCCESS, "{code}");
            assert!(!p.is_null());
        }
    }
}
