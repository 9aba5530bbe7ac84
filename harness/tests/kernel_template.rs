//! The committed template cubin is what the pinned ptxas makes of the committed PTX, and the
//! patcher refuses cubins that are not that template with typed errors (never a panic).

use crate::common;

use hmul2_harness::kernel::{patch_cubin, PatchError, BANK3_BYTES, TEMPLATE};
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::rng::Rng;

fn program() -> Vec<u128> {
    // NOP..., EXIT, BRA, NOPs: a valid 8-instruction program
    use hmul2_harness::kernel::helpers::{encode, Op, Sched};
    let mut p = vec![encode(Op::Nop, &[], Sched::safe(Op::Nop)).unwrap(); 8];
    p[1] = encode(Op::Exit, &[], Sched::safe(Op::Exit)).unwrap();
    p[2] = encode(Op::BraSelf, &[], Sched::safe(Op::BraSelf)).unwrap();
    p
}

#[test]
fn every_template_rebuilds_bit_for_bit_with_the_pinned_ptxas() {
    let ptxas = find_tool("ptxas").expect("ptxas is required (bash ci/install-tools.sh)");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let ptx = std::fs::read_to_string(dir.join("hmul2_template.ptx")).unwrap();
    let script = std::fs::read_to_string(dir.join("build.sh")).unwrap();
    for t in hmul2_harness::target::Target::ALL {
        // kernels/build.sh's substitution: the target's `.target`, and PTX 8.7 where 8.0 predates it
        let version = if t.sm >= 100 { "8.7" } else { "8.0" };
        let src = ptx.replace("\n.target sm_90\n", &format!("\n.target {}\n", t.ptxas)).replace(".version 8.0\n", &format!(".version {version}\n"));
        assert!(src.contains(&format!(".target {}\n", t.ptxas)), "{t}");
        let tmp = std::env::temp_dir().join(format!("hmul2-template-{}-{}.ptx", t.ptxas, std::process::id()));
        let out = tmp.with_extension("cubin");
        std::fs::write(&tmp, &src).unwrap();
        let st =
            std::process::Command::new(&ptxas).args([format!("-arch={}", t.ptxas).as_str(), "-O3"]).arg(&tmp).arg("-o").arg(&out).status().expect("run ptxas");
        let _ = std::fs::remove_file(&tmp);
        assert!(st.success(), "ptxas failed for {t}");
        let rebuilt = std::fs::read(&out).expect("read rebuilt cubin");
        let _ = std::fs::remove_file(&out);
        assert!(rebuilt == t.template, "{} differs from a rebuild: run kernels/build.sh", t.template_file);
        let committed = std::fs::read(dir.join("..").join(t.template_file)).unwrap();
        assert!(committed == t.template, "{}", t.template_file);
        assert!(script.contains(&format!(" {}", t.ptxas)), "kernels/build.sh builds {t}");
    }
    assert!(hmul2_harness::target::Target::SM90.template == TEMPLATE);
}

/// The second template: the same PTX through the pinned ptxas 12.9.86, bit for bit; it
/// lacks the `EIATTR_MERCURY_ISA_VERSION` that 13.0 writes (cuobjdump -elf), holds the same
/// code, and the patcher writes the same program into it.
#[test]
fn the_ptxas_12_9_template_rebuilds_has_no_mercury_attribute_and_patches_alike() {
    use hmul2_harness::kernel::TEMPLATE_PTXAS_12_9;
    let ptxas = std::env::var_os("HMUL2_PTXAS_12_9")
        .map(std::path::PathBuf::from)
        .or_else(|| find_tool("ptxas-12.9").ok())
        .expect("ptxas 12.9 is required (bash ci/install-tools.sh installs .tools/bin/ptxas-12.9)");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let out = std::env::temp_dir().join(format!("hmul2-template-12.9-{}.cubin", std::process::id()));
    let st = std::process::Command::new(&ptxas)
        .args(["-arch=sm_90", "-O3"])
        .arg(dir.join("hmul2_template.ptx"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run ptxas 12.9");
    assert!(st.success(), "ptxas 12.9 failed");
    let rebuilt = std::fs::read(&out).expect("read rebuilt cubin");
    let _ = std::fs::remove_file(&out);
    assert!(rebuilt == TEMPLATE_PTXAS_12_9, "kernels/hmul2_template.sm_90.ptxas-12.9.cubin differs from a rebuild: run kernels/build.sh");
    let cuobjdump = find_tool("cuobjdump").expect("cuobjdump is required (bash ci/install-tools.sh)");
    let elf = |name: &str| {
        let o = std::process::Command::new(&cuobjdump).arg("-elf").arg(dir.join(name)).output().expect("run cuobjdump");
        assert!(o.status.success(), "cuobjdump -elf {name}");
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    assert!(elf("hmul2_template.sm_90.cubin").contains("EIATTR_MERCURY_ISA_VERSION"), "13.0's template: the attribute 12.9's lacks");
    assert!(!elf("hmul2_template.sm_90.ptxas-12.9.cubin").contains("EIATTR_MERCURY_ISA_VERSION"));
    use object::{Object, ObjectSection};
    let text = |c: &[u8]| object::File::parse(c).unwrap().section_by_name(".text.hmul2_kernel").unwrap().data().unwrap().to_vec();
    assert_eq!(text(TEMPLATE), text(TEMPLATE_PTXAS_12_9), "the same code from both");
    let b3 = vec![0u8; BANK3_BYTES];
    let (a, b) = (patch_cubin(TEMPLATE, &program(), 8, &b3).unwrap(), patch_cubin(TEMPLATE_PTXAS_12_9, &program(), 8, &b3).unwrap());
    assert_eq!(text(&a), text(&b));
}

#[test]
fn the_template_patches() {
    let b3 = vec![0u8; BANK3_BYTES];
    let out = patch_cubin(TEMPLATE, &program(), 8, &b3).expect("patch");
    // an 8-instruction program is smaller than the template's text: nothing moves
    assert_eq!(out.len(), TEMPLATE.len());
    let f = object::File::parse(&*out).unwrap();
    use object::{Object, ObjectSection};
    let text = f.section_by_name(".text.hmul2_kernel").unwrap();
    assert_eq!(text.size(), 128);
    let words: Vec<u128> = text.data().unwrap().chunks(16).map(|c| u128::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(words, program());
    // a long program moves every later section by a multiple of 128 bytes
    let mut long = program();
    let nop = long[0];
    long.splice(0..0, std::iter::repeat_n(nop, 8 * 100));
    let out = patch_cubin(TEMPLATE, &long, 8, &b3).expect("patch");
    let f = object::File::parse(&*out).unwrap();
    let t = object::File::parse(TEMPLATE).unwrap();
    for s in t.sections() {
        let n = s.name().unwrap();
        let m = f.section_by_name(n).unwrap();
        // the sections the patcher writes; every other one keeps its bytes
        let written = [".text.hmul2_kernel", ".symtab", ".nv.info", ".nv.info.hmul2_kernel", ".debug_frame", ".nv.constant3"];
        if !written.contains(&n) {
            assert_eq!(m.data().unwrap(), s.data().unwrap(), "{n} keeps its bytes");
        }
        assert_eq!(m.size(), if n == ".text.hmul2_kernel" { long.len() as u64 * 16 } else { s.size() }, "{n}");
    }
    use object::ObjectSymbol;
    let k = f.symbols().find(|s| s.name() == Ok("hmul2_kernel")).unwrap();
    assert_eq!(k.size(), long.len() as u64 * 16);
    // the FDE's address range in .debug_frame follows the code
    let df = f.section_by_name(".debug_frame").unwrap().data().unwrap().to_vec();
    assert!(df.windows(8).any(|w| w == (long.len() as u64 * 16).to_le_bytes()));
}

#[test]
fn corrupt_and_foreign_cubins_are_typed_errors() {
    let b3 = vec![0u8; BANK3_BYTES];
    let p = program();
    assert!(matches!(patch_cubin(b"", &p, 8, &b3), Err(PatchError::NotElf)));
    assert!(matches!(patch_cubin(b"garbage garbage garbage garbage garbage garbage garbage garbage!", &p, 8, &b3), Err(PatchError::NotElf)));
    let mut c32 = TEMPLATE.to_vec();
    c32[4] = 1;
    assert!(matches!(patch_cubin(&c32, &p, 8, &b3), Err(PatchError::NotElf64Le)));
    let mut x86 = TEMPLATE.to_vec();
    x86[18] = 62;
    assert!(matches!(patch_cubin(&x86, &p, 8, &b3), Err(PatchError::NotCuda { machine: 62 })));
    let mut sm80 = TEMPLATE.to_vec();
    sm80[49] = 80;
    assert!(matches!(patch_cubin(&sm80, &p, 8, &b3), Err(PatchError::WrongArch { sm: 80, .. })));
    // another kernel's name
    let mut other = TEMPLATE.to_vec();
    let name = b"hmul2_kernel";
    let mut at = 0;
    while let Some(k) = other[at..].windows(name.len()).position(|w| w == name) {
        other[at + k] = b'x';
        at += k + 1;
    }
    let e = patch_cubin(&other, &p, 8, &b3).unwrap_err();
    assert!(matches!(e, PatchError::MissingSymbol(_) | PatchError::MissingSection(_)), "{e}");
    // every truncation
    for len in (0..TEMPLATE.len()).step_by(97) {
        assert!(patch_cubin(&TEMPLATE[..len], &p, 8, &b3).is_err(), "truncated to {len} bytes");
    }
    // random byte corruption: a typed result, never a panic
    let seed = common::seed(0xc0ffee);
    let mut r = Rng::new(seed);
    for _ in 0..3000 {
        let mut d = TEMPLATE.to_vec();
        for _ in 0..1 + r.below(4) {
            let at = if r.chance(0.7) { r.below(0x640) as usize } else { r.below(d.len() as u32) as usize };
            d[at] = r.next_u32() as u8;
        }
        let _ = patch_cubin(&d, &p, 8, &b3);
    }
    // the program must end in one EXIT
    let no_exit = vec![p[0]; 8];
    assert!(matches!(patch_cubin(TEMPLATE, &no_exit, 8, &b3), Err(PatchError::Malformed(_))));
}
