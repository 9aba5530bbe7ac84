//! What an architecture is, in one typed value: [`Target`]. Every place that needs to know
//! which GPU architecture the harness speaks reads it from here (the specs' directory, the
//! template kernel, the ELF the patcher checks, the compute capability the runner requires,
//! the architecture nvdisasm is asked about), so that adding an architecture is one more
//! `Target` and its data directory, not a search through the code.
//!
//! Every architecture with these instructions has a `Target`: SM80, SM86, SM89, SM90, SM100
//! and SM120 ([`Target::ALL`]). `docs/architectures.md` holds the nvdisasm and ptxas evidence
//! of how they differ (forms, modifiers, ELF flags, parameter offsets, helper instructions).
//! SM90 is the default: with no GPU and no `--arch`, the harness speaks SM90.
//!
//! This file is also compiled into `harness/isa/build.rs` (which reads the spec directory
//! from it), so it uses nothing but `core` and `std`.

use std::fmt;

/// One architecture: everything the harness hard-wires about it, as data.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    /// The SM number: 90 for SM90.
    pub sm: u32,
    /// nvdisasm's spelling (`nvdisasm -b SM90`), which the specs' `arch` field also uses.
    pub nvdisasm: &'static str,
    /// ptxas's spelling (`ptxas -arch=sm_90`, `.target sm_90`), also the template's file suffix.
    pub ptxas: &'static str,
    /// The compute capability (major, minor) a device must report to run this target's code.
    pub compute_capability: (i32, i32),
    /// The encoding specs' directory, relative to the repository root: the base specs every
    /// target starts from (SM90's); how this target differs from them is its `spec_overlay`.
    pub spec_dir: &'static str,
    /// The fields the specs share (`<spec_dir>/common.json`).
    pub common_json: &'static str,
    /// The helper instructions the kernel patcher places: one file per helper family
    /// (`harness/spec/sm90/helpers.json`; `harness/spec/arch/sm80/helpers.json` for SM80..SM89,
    /// `harness/spec/arch/sm100/helpers.json` for SM100 and SM120; docs/architectures.md).
    pub helpers_json: &'static str,
    /// The seed page the specs were started from (`<spec_dir>/hmul2-seed-page.txt`).
    pub seed_page: &'static str,
    /// The mnemonic whose spec gives the control-bit layout (stall, yield, scoreboards, wait,
    /// reuse) every instruction of this target shares, helpers included.
    pub control_layout_from: &'static str,
    /// The architecture's own directory (`harness/spec/arch/<sm>/`: its nvdisasm evidence).
    pub arch_dir: &'static str,
    /// How this target's encodings differ from the base specs', as data
    /// (`<arch_dir>/overlay.json`); None: the base specs as they are (SM90).
    pub spec_overlay: Option<&'static str>,
    /// The template kernel's file, relative to the repository root (built by `kernels/build.sh`).
    pub template_file: &'static str,
    /// The template kernel built by the pinned ptxas (13.0).
    pub template: &'static [u8],
    /// The same PTX through ptxas 12.9, where this target has one (`run --template 12.9`).
    pub template_ptxas_12_9: Option<&'static [u8]>,
    /// The ELF OS ABI byte ptxas 13 writes (0x41: the SM number sits in bits 8..15 of e_flags).
    pub elf_os_abi: u8,
    /// The ELF ABI version ptxas 13 writes.
    pub elf_abi_version: u8,
    /// The low bits of e_flags ptxas 13 writes: 0x04 on SM80..SM90, 0x02 on SM100/SM120
    /// (see [`Target::e_flags`]).
    pub e_flags_low: u32,
    /// Byte offset of the first kernel parameter in constant bank 0 (`c[0x0][0x210]` on SM90;
    /// 0x160 on SM80..SM89, 0x380 on SM100/SM120).
    pub param_base: u32,
    /// Byte offset in constant bank 0 of the global-memory descriptor (`ULDC.64 UR4,
    /// c[0x0][0x208]` on SM90; SM100/SM120 load it from 0x358 with `LDCU.64`).
    pub descriptor_offset: u32,
    /// Byte offset in constant bank 0 of the stack pointer ptxas's prologue loads
    /// (`LDC R1, c[0x0][0x28]` before SM100, 0x37c on SM100/SM120).
    pub stack_pointer_offset: u32,
}

/// Why a name is not a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// Not an architecture name in either spelling.
    Unknown(String),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::Unknown(a) => write!(f, "architecture {a:?}: not an architecture: expected one of SM80, SM86, SM89, SM90, SM100, SM120 in nvdisasm's spelling (SM90) or ptxas's (sm_90)"),
        }
    }
}

impl std::error::Error for TargetError {}

impl Target {
    /// Ampere datacenter (A100).
    pub const SM80: Target = Target {
        sm: 80,
        nvdisasm: "SM80",
        ptxas: "sm_80",
        compute_capability: (8, 0),
        spec_dir: "harness/spec/sm90",
        common_json: include_str!("../../spec/sm90/common.json"),
        // the SM80..SM89 helper family (R2UR's opcode, loads and stores printed without a descriptor)
        helpers_json: include_str!("../../spec/arch/sm80/helpers.json"),
        seed_page: include_str!("../../spec/sm90/hmul2-seed-page.txt"),
        control_layout_from: "HMUL2",
        arch_dir: "harness/spec/arch/sm80",
        spec_overlay: Some(include_str!("../../spec/arch/sm80/overlay.json")),
        template_file: "kernels/hmul2_template.sm_80.cubin",
        template: include_bytes!("../../../kernels/hmul2_template.sm_80.cubin"),
        template_ptxas_12_9: None,
        elf_os_abi: 0x41,
        elf_abi_version: 8,
        e_flags_low: 0x04,
        param_base: 0x160,
        descriptor_offset: 0x118,
        stack_pointer_offset: 0x28,
    };

    /// Ampere (RTX 30xx, A10, A40).
    pub const SM86: Target = Target {
        sm: 86,
        nvdisasm: "SM86",
        ptxas: "sm_86",
        compute_capability: (8, 6),
        spec_dir: "harness/spec/sm90",
        common_json: include_str!("../../spec/sm90/common.json"),
        // the SM80..SM89 helper family (R2UR's opcode, loads and stores printed without a descriptor)
        helpers_json: include_str!("../../spec/arch/sm80/helpers.json"),
        seed_page: include_str!("../../spec/sm90/hmul2-seed-page.txt"),
        control_layout_from: "HMUL2",
        arch_dir: "harness/spec/arch/sm86",
        spec_overlay: Some(include_str!("../../spec/arch/sm86/overlay.json")),
        template_file: "kernels/hmul2_template.sm_86.cubin",
        template: include_bytes!("../../../kernels/hmul2_template.sm_86.cubin"),
        template_ptxas_12_9: None,
        elf_os_abi: 0x41,
        elf_abi_version: 8,
        e_flags_low: 0x04,
        param_base: 0x160,
        descriptor_offset: 0x118,
        stack_pointer_offset: 0x28,
    };

    /// Ada (L4, L40, RTX 40xx).
    pub const SM89: Target = Target {
        sm: 89,
        nvdisasm: "SM89",
        ptxas: "sm_89",
        compute_capability: (8, 9),
        spec_dir: "harness/spec/sm90",
        common_json: include_str!("../../spec/sm90/common.json"),
        // the SM80..SM89 helper family (R2UR's opcode, loads and stores printed without a descriptor)
        helpers_json: include_str!("../../spec/arch/sm80/helpers.json"),
        seed_page: include_str!("../../spec/sm90/hmul2-seed-page.txt"),
        control_layout_from: "HMUL2",
        arch_dir: "harness/spec/arch/sm89",
        spec_overlay: Some(include_str!("../../spec/arch/sm89/overlay.json")),
        template_file: "kernels/hmul2_template.sm_89.cubin",
        template: include_bytes!("../../../kernels/hmul2_template.sm_89.cubin"),
        template_ptxas_12_9: None,
        elf_os_abi: 0x41,
        elf_abi_version: 8,
        e_flags_low: 0x04,
        param_base: 0x160,
        descriptor_offset: 0x118,
        stack_pointer_offset: 0x28,
    };

    /// Hopper (H100, H200): the target every part of the harness speaks today.
    pub const SM90: Target = Target {
        sm: 90,
        nvdisasm: "SM90",
        ptxas: "sm_90",
        compute_capability: (9, 0),
        spec_dir: "harness/spec/sm90",
        common_json: include_str!("../../spec/sm90/common.json"),
        helpers_json: include_str!("../../spec/sm90/helpers.json"),
        seed_page: include_str!("../../spec/sm90/hmul2-seed-page.txt"),
        control_layout_from: "HMUL2",
        arch_dir: "harness/spec/arch/sm90",
        spec_overlay: None,
        template_file: "kernels/hmul2_template.sm_90.cubin",
        template: include_bytes!("../../../kernels/hmul2_template.sm_90.cubin"),
        template_ptxas_12_9: Some(include_bytes!("../../../kernels/hmul2_template.sm_90.ptxas-12.9.cubin")),
        elf_os_abi: 0x41,
        elf_abi_version: 8,
        e_flags_low: 0x04,
        param_base: 0x210,
        descriptor_offset: 0x208,
        stack_pointer_offset: 0x28,
    };

    /// Blackwell datacenter (B200).
    pub const SM100: Target = Target {
        sm: 100,
        nvdisasm: "SM100",
        ptxas: "sm_100",
        compute_capability: (10, 0),
        spec_dir: "harness/spec/sm90",
        common_json: include_str!("../../spec/sm90/common.json"),
        // the SM100/SM120 helper family (LDCU.64 for ULDC.64, IADD3 printed with its predicates)
        helpers_json: include_str!("../../spec/arch/sm100/helpers.json"),
        seed_page: include_str!("../../spec/sm90/hmul2-seed-page.txt"),
        control_layout_from: "HMUL2",
        arch_dir: "harness/spec/arch/sm100",
        spec_overlay: Some(include_str!("../../spec/arch/sm100/overlay.json")),
        template_file: "kernels/hmul2_template.sm_100.cubin",
        template: include_bytes!("../../../kernels/hmul2_template.sm_100.cubin"),
        template_ptxas_12_9: None,
        elf_os_abi: 0x41,
        elf_abi_version: 8,
        e_flags_low: 0x02,
        param_base: 0x380,
        descriptor_offset: 0x358,
        stack_pointer_offset: 0x37c,
    };

    /// Blackwell (RTX 50xx).
    pub const SM120: Target = Target {
        sm: 120,
        nvdisasm: "SM120",
        ptxas: "sm_120",
        compute_capability: (12, 0),
        spec_dir: "harness/spec/sm90",
        common_json: include_str!("../../spec/sm90/common.json"),
        // the SM100/SM120 helper family (LDCU.64 for ULDC.64, IADD3 printed with its predicates)
        helpers_json: include_str!("../../spec/arch/sm100/helpers.json"),
        seed_page: include_str!("../../spec/sm90/hmul2-seed-page.txt"),
        control_layout_from: "HMUL2",
        arch_dir: "harness/spec/arch/sm120",
        spec_overlay: Some(include_str!("../../spec/arch/sm120/overlay.json")),
        template_file: "kernels/hmul2_template.sm_120.cubin",
        template: include_bytes!("../../../kernels/hmul2_template.sm_120.cubin"),
        template_ptxas_12_9: None,
        elf_os_abi: 0x41,
        elf_abi_version: 8,
        e_flags_low: 0x02,
        param_base: 0x380,
        descriptor_offset: 0x358,
        stack_pointer_offset: 0x37c,
    };

    /// Every target the harness speaks, in SM order.
    pub const ALL: [&'static Target; 6] = [&Target::SM80, &Target::SM86, &Target::SM89, &Target::SM90, &Target::SM100, &Target::SM120];

    /// The target the harness uses when none is named.
    pub const DEFAULT: &'static Target = &Target::SM90;

    /// The target named `s` in nvdisasm's spelling (`SM90`) or ptxas's (`sm_90`); any other
    /// name is refused.
    pub fn parse(s: &str) -> Result<&'static Target, TargetError> {
        let sm =
            s.strip_prefix("SM").or_else(|| s.strip_prefix("sm_")).filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && !d.starts_with('0'));
        let Some(sm) = sm.and_then(|d| d.parse::<u32>().ok()) else {
            return Err(TargetError::Unknown(s.into()));
        };
        Target::ALL.into_iter().find(|t| t.sm == sm).ok_or_else(|| TargetError::Unknown(s.into()))
    }

    /// Every target's name in nvdisasm's spelling, `SM80, SM86, ...`, for messages (a list
    /// spelt once, here).
    pub fn all_names() -> &'static str {
        static N: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        N.get_or_init(|| Target::ALL.iter().map(|t| t.nvdisasm).collect::<Vec<_>>().join(", "))
    }

    /// The same in ptxas's spelling, `sm_80, sm_86, ...`.
    pub fn all_ptxas_names() -> &'static str {
        static N: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        N.get_or_init(|| Target::ALL.iter().map(|t| t.ptxas).collect::<Vec<_>>().join(", "))
    }

    /// The target of compute capability `cc`, if the harness speaks it.
    pub fn of_compute_capability(cc: (i32, i32)) -> Option<&'static Target> {
        Target::ALL.into_iter().find(|t| t.compute_capability == cc)
    }

    /// The ELF e_flags ptxas 13 writes for this target: 0x06000000 | SM << 8 | the low bits
    /// (0x6005a04 for SM90; docs/architectures.md's ptxas table has the others).
    pub const fn e_flags(&self) -> u32 {
        0x0600_0000 | self.sm << 8 | self.e_flags_low
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.nvdisasm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_name_sm90() {
        assert_eq!(Target::parse("SM90"), Ok(&Target::SM90));
        assert_eq!(Target::parse("sm_90"), Ok(&Target::SM90));
        assert_eq!(Target::parse(Target::SM90.nvdisasm), Target::parse(Target::SM90.ptxas));
        assert_eq!(Target::SM90.to_string(), "SM90");
        assert_eq!(Target::of_compute_capability((9, 0)), Some(&Target::SM90));
    }

    #[test]
    fn every_architecture_parses_in_both_spellings_and_others_are_refused() {
        let names: Vec<&str> = Target::ALL.iter().map(|t| t.nvdisasm).collect();
        assert_eq!(names, ["SM80", "SM86", "SM89", "SM90", "SM100", "SM120"]);
        for t in Target::ALL {
            assert_eq!(Target::parse(t.nvdisasm), Ok(t));
            assert_eq!(Target::parse(t.ptxas), Ok(t));
            assert_eq!(Target::of_compute_capability(t.compute_capability), Some(t));
            assert_eq!(t.ptxas, format!("sm_{}", t.sm));
            assert!(t.arch_dir.ends_with(&t.nvdisasm.to_lowercase()));
        }
        for s in ["", "SM", "sm90", "sm_", "SM090", "SM 90", "sm_9o", "SM75", "sm_100a", "Sm90", "x", "SM87"] {
            let e = Target::parse(s).expect_err(s);
            assert!(matches!(e, TargetError::Unknown(_)), "{s}: {e}");
            assert!(e.to_string().contains("SM90") && e.to_string().contains("sm_90") && e.to_string().contains("SM120"), "{e}");
        }
    }

    #[test]
    fn every_templates_elf_flags_are_its_targets() {
        // docs/architectures.md's ptxas table: 0x6005004, 0x6005604, 0x6005904, 0x6005a04,
        // 0x6006402, 0x6007802; OS ABI 65, ABI version 8
        let want = [0x0600_5004, 0x0600_5604, 0x0600_5904, 0x0600_5a04, 0x0600_6402, 0x0600_7802];
        for (t, w) in Target::ALL.into_iter().zip(want) {
            assert_eq!(t.e_flags(), w, "{t}");
            assert_eq!(u32::from_le_bytes([t.template[48], t.template[49], t.template[50], t.template[51]]), w, "{t}");
            assert_eq!((t.template[7], t.template[8]), (t.elf_os_abi, t.elf_abi_version), "{t}");
            assert!(t.template_file.ends_with(&format!(".{}.cubin", t.ptxas)));
        }
    }

    #[test]
    fn sm90s_elf_flags_are_the_templates() {
        // docs/architectures.md's ptxas table: 0x6005a04, OS ABI 65, ABI version 8
        let t = &Target::SM90;
        assert_eq!(t.e_flags(), 0x0600_5a04);
        assert_eq!(u32::from_le_bytes([t.template[48], t.template[49], t.template[50], t.template[51]]), t.e_flags());
        assert_eq!((t.template[7], t.template[8]), (t.elf_os_abi, t.elf_abi_version));
        assert!(t.template_file.ends_with(&format!(".{}.cubin", t.ptxas)));
        assert!(t.spec_dir.ends_with(&t.nvdisasm.to_lowercase()));
    }
}
