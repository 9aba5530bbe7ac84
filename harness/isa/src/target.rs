//! What an architecture is, in one typed value: [`Target`]. Every place that needs to know
//! which GPU architecture the harness speaks reads it from here (the specs' directory, the
//! template kernel, the ELF the patcher checks, the compute capability the runner requires,
//! the architecture nvdisasm is asked about), so that adding an architecture is one more
//! `Target` and its data directory, not a search through the code.
//!
//! [`Target::SM90`] is the only target today. The other architectures that have these
//! instructions (SM80, SM86, SM89, SM100, SM120) are named, so that asking for one gives a
//! clear refusal; `docs/architectures.md` holds the nvdisasm and ptxas evidence of how they
//! differ (forms, modifiers, ELF flags, parameter offsets, helper instructions).
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
    /// The encoding specs' directory, relative to the repository root.
    pub spec_dir: &'static str,
    /// The fields the specs share (`<spec_dir>/common.json`).
    pub common_json: &'static str,
    /// The helper instructions the kernel patcher places (`<spec_dir>/helpers.json`); the
    /// helper family differs between architectures (see docs/architectures.md).
    pub helpers_json: &'static str,
    /// The seed page the specs were started from (`<spec_dir>/hmul2-seed-page.txt`).
    pub seed_page: &'static str,
    /// The mnemonic whose spec gives the control-bit layout (stall, yield, scoreboards, wait,
    /// reuse) every instruction of this target shares, helpers included.
    pub control_layout_from: &'static str,
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

/// The architectures with these instructions that have nvdisasm evidence but no target yet.
pub const NOT_YET: [&str; 5] = ["SM80", "SM86", "SM89", "SM100", "SM120"];

/// Why a name is not a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// An architecture with these instructions that the harness does not speak yet.
    NotYet(String),
    /// Not an architecture name in either spelling.
    Unknown(String),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::NotYet(a) => write!(f, "architecture {a}: not supported yet: only SM90 is (docs/architectures.md has the nvdisasm evidence)"),
            TargetError::Unknown(a) => write!(f, "architecture {a:?}: not an architecture: expected nvdisasm's spelling (SM90) or ptxas's (sm_90)"),
        }
    }
}

impl std::error::Error for TargetError {}

impl Target {
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

    /// Every target the harness speaks.
    pub const ALL: [&'static Target; 1] = [&Target::SM90];

    /// The target the harness uses when none is named.
    pub const DEFAULT: &'static Target = &Target::SM90;

    /// The target named `s` in nvdisasm's spelling (`SM90`) or ptxas's (`sm_90`); an
    /// architecture of [`NOT_YET`] or any other name is refused.
    pub fn parse(s: &str) -> Result<&'static Target, TargetError> {
        let sm =
            s.strip_prefix("SM").or_else(|| s.strip_prefix("sm_")).filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && !d.starts_with('0'));
        let Some(sm) = sm.and_then(|d| d.parse::<u32>().ok()) else {
            return Err(TargetError::Unknown(s.into()));
        };
        if let Some(t) = Target::ALL.into_iter().find(|t| t.sm == sm) {
            return Ok(t);
        }
        let name = format!("SM{sm}");
        if NOT_YET.contains(&name.as_str()) {
            Err(TargetError::NotYet(name))
        } else {
            Err(TargetError::Unknown(s.into()))
        }
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
        assert_eq!(Target::of_compute_capability((8, 6)), None);
    }

    #[test]
    fn the_other_architectures_are_refused_by_name() {
        for a in NOT_YET {
            let ptxas = format!("sm_{}", &a[2..]);
            for s in [a, ptxas.as_str()] {
                let e = Target::parse(s).expect_err(s);
                assert_eq!(e, TargetError::NotYet(a.into()), "{s}");
                let m = e.to_string();
                assert!(m.contains("not supported yet") && m.contains(a) && m.contains("docs/architectures.md has the nvdisasm evidence"), "{m}");
            }
        }
        for s in ["", "SM", "sm90", "sm_", "SM090", "SM 90", "sm_9o", "SM75", "sm_100a", "Sm90", "x"] {
            let e = Target::parse(s).expect_err(s);
            assert!(matches!(e, TargetError::Unknown(_)), "{s}: {e}");
            assert!(e.to_string().contains("SM90") && e.to_string().contains("sm_90"), "{e}");
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
