//! The real driver path, end to end, with two tiny hand-written kernels (no patcher needed):
//! a copy kernel, and one that traps. `#[ignore]`d tests need an SM90 GPU: run them with
//! `ci/gpu-check` (or `cargo test --test run_gpu -- --ignored`) on a GPU machine, or with
//! the bundled test executable by `ci/device-session` (`HMUL2_BIN` names the binary there).

use hmul2_harness::gpu::worker::WorkerExecutor;
use hmul2_harness::gpu::{ExecError, Executor, LaunchJob};
use std::time::Duration;

/// The harness binary the worker runs: `$HMUL2_BIN` when set (a test executable copied to
/// another machine, e.g. by `ci/device-session`, where the build path does not exist), else
/// the one cargo built beside this test.
fn harness_bin() -> std::path::PathBuf {
    match std::env::var_os("HMUL2_BIN") {
        Some(p) if !p.is_empty() => p.into(),
        _ => env!("CARGO_BIN_EXE_hmul2-harness").into(),
    }
}

/// out[i] = in[i] ^ 0x5a5a5a5a for the block's threads.
const COPY_PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry smoke_copy(.param .u64 p_in, .param .u64 p_out)
{
    .reg .u32 %r<4>;
    .reg .u64 %rd<6>;
    ld.param.u64 %rd1, [p_in];
    ld.param.u64 %rd2, [p_out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd1, %rd3;
    add.u64 %rd5, %rd2, %rd3;
    ld.global.u32 %r2, [%rd4];
    xor.b32 %r3, %r2, 0x5a5a5a5a;
    st.global.u32 [%rd5], %r3;
    ret;
}
"#;

/// Raises a fault like an illegal instruction does: the context is lost.
const TRAP_PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry smoke_trap(.param .u64 p_in, .param .u64 p_out)
{
    trap;
    ret;
}
"#;

fn cubin(name: &str, ptx: &str) -> Vec<u8> {
    let ptxas = hmul2_harness::nvdisasm::find_tool("ptxas").unwrap_or_else(|e| panic!("{e}"));
    let dir = std::env::temp_dir().join(format!("hmul2-gpu-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, out) = (dir.join("k.ptx"), dir.join("k.cubin"));
    std::fs::write(&src, ptx).unwrap();
    let o = std::process::Command::new(ptxas).args(["-arch=sm_90", "-o"]).arg(&out).arg(&src).output().unwrap();
    assert!(o.status.success(), "ptxas: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

fn copy_job(n: u32) -> (LaunchJob, Vec<u8>) {
    let input: Vec<u8> = (0..n).flat_map(|i| (i.wrapping_mul(0x9e37_79b9)).to_le_bytes()).collect();
    let want: Vec<u8> = (0..n).flat_map(|i| (i.wrapping_mul(0x9e37_79b9) ^ 0x5a5a_5a5a).to_le_bytes()).collect();
    let job = LaunchJob {
        cubin: cubin("copy", COPY_PTX),
        kernel_name: "smoke_copy".into(),
        grid: [1, 1, 1],
        block: [n, 1, 1],
        shared_bytes: 0,
        input,
        output_bytes: 4 * n as usize,
    };
    (job, want)
}

#[test]
fn smoke_kernels_build_for_sm90() {
    for (n, p) in [("copy", COPY_PTX), ("trap", TRAP_PTX)] {
        let c = cubin(n, p);
        assert_eq!(&c[..4], b"\x7fELF", "{n}: a cubin is an ELF file");
    }
}

#[test]
#[ignore = "needs an SM90 GPU: run by ci/gpu-check"]
fn real_gpu_runs_a_kernel_and_survives_a_fault() {
    let det = hmul2_harness::gpu::detect::detect();
    eprintln!("{}", det.text());
    let dev = *det.usable().first().unwrap_or_else(|| panic!("no usable GPU: {:?}", det.problem));
    let mut w = WorkerExecutor::new(harness_bin(), dev, Duration::from_secs(60));
    let (job, want) = copy_job(128);
    assert_eq!(w.execute(&job).unwrap(), want, "the copy kernel's output, bit for bit");
    let trap = LaunchJob { cubin: cubin("trap", TRAP_PTX), kernel_name: "smoke_trap".into(), output_bytes: 4, input: vec![0; 4], ..job.clone() };
    let r = w.execute(&trap);
    eprintln!("trap answered: {r:?}");
    assert!(matches!(r, Err(ExecError::Fault { .. })), "{r:?}");
    // the worker died with its context; the next job gets a fresh one
    assert_eq!(w.execute(&job).unwrap(), want);
    assert_eq!(w.spawned, 2);
    // a kernel name the module lacks is a setup error, not a fault
    let missing = LaunchJob { kernel_name: "no_such_kernel".into(), ..job.clone() };
    assert!(matches!(w.execute(&missing), Err(ExecError::Setup(_))));
    assert_eq!(w.execute(&job).unwrap(), want);
}
