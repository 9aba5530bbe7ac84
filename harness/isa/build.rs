//! Generates the `Op` enum from the instruction specs in the target's spec directory
//! (`Target::SM90.spec_dir`, `harness/spec/sm90/`): one variant per
//! file (helpers.json and the shared fields, common.json, excepted), named after its mnemonic. Adding an instruction is adding a
//! file; a spec that lacks a field the typed layer reads is a build error naming the file and
//! the field, not a panic at run time.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

// The immediate texts of the fused decoder, spelt here once rather than at every start-up:
// the library's own modules, compiled into this script (their tests check the result).
// The field names the typed layer reads (the spec compiler checks the same list).
#[allow(dead_code)]
#[path = "src/isa/floattext.rs"]
mod floattext;
#[allow(dead_code)]
#[path = "src/isa/immtable.rs"]
mod immtable;
#[allow(dead_code)]
#[path = "src/spec/known.rs"]
mod known;
// How a target's specs differ from the base, checked here so that a bad overlay fails the build.
#[allow(dead_code)]
#[path = "src/spec/overlay.rs"]
mod overlay;
#[allow(dead_code)]
#[path = "src/isa/strtable.rs"]
mod strtable;
// What the architecture is (its spec directory), read from the one place that says it.
#[allow(dead_code)]
#[path = "src/target.rs"]
mod target;

/// The file of fields the specs share, which a spec names in its `include`.
const COMMON: &str = "common.json";

fn fail(msg: String) -> ! {
    // cargo shows a build script's panic message with the file it names
    panic!("{msg}")
}

fn main() {
    let target = &target::Target::SM90;
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| fail("no CARGO_MANIFEST_DIR".into()))).join("../..").join(target.spec_dir);
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| fail(format!("{}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.file_name().is_some_and(|n| n != "helpers.json" && n != COMMON))
        .collect();
    files.sort();
    let common_path = dir.join(COMMON);
    println!("cargo:rerun-if-changed={}", common_path.display());
    let common_text = std::fs::read_to_string(&common_path).unwrap_or_else(|e| fail(format!("{}: {e}", common_path.display())));
    let common: serde_json::Value = serde_json::from_str(&common_text).unwrap_or_else(|e| fail(format!("{}: not JSON: {e}", common_path.display())));
    let shared: Vec<&str> = common["fields"].as_array().map(|a| a.iter().filter_map(|f| f["name"].as_str()).collect()).unwrap_or_default();
    let mut ops: Vec<(String, String, PathBuf, u64, bool)> = Vec::new(); // (variant, mnemonic, path, opcode, includes common.json)
    for p in &files {
        println!("cargo:rerun-if-changed={}", p.display());
        let text = std::fs::read_to_string(p).unwrap_or_else(|e| fail(format!("{}: {e}", p.display())));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{}: not JSON: {e}", p.display())));
        let mnemonic = v["mnemonic"].as_str().unwrap_or_else(|| fail(format!("{}: no \"mnemonic\"", p.display()))).to_string();
        let includes = match v["include"].as_str() {
            None => false,
            Some(COMMON) => true,
            Some(other) => fail(format!("{}: include {other:?}: the only shared file is {COMMON}", p.display())),
        };
        for n in v["fields"].as_array().into_iter().flatten().filter_map(|f| f.as_str()) {
            if !(includes && shared.contains(&n)) {
                fail(format!("{}: field {n:?} is named but not defined in an included file", p.display()));
            }
        }
        // the names the typed layer knows: an unknown field or value name fails the build
        let strings = |v: &serde_json::Value| -> Vec<String> {
            v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default()
        };
        let resolved: Vec<(String, String, Vec<String>)> = v["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                let name = f.as_str().or(f["name"].as_str()).unwrap_or_default();
                let def = if f.get("bits").is_some() { Some(f) } else { common["fields"].as_array().and_then(|a| a.iter().find(|c| c["name"] == name)) };
                let def = def.unwrap_or(f);
                (name.to_string(), def["kind"].as_str().unwrap_or_default().to_string(), strings(&def["values"]))
            })
            .collect();
        let named: Vec<known::NamedField> = resolved.iter().map(|(n, k, vs)| known::NamedField { name: n, kind: k, values: vs }).collect();
        if let Err(e) = known::check_names(&named, &strings(&v["operand2_half_selects"]), &shape_fields(&v["shape"])) {
            fail(format!("{}: {mnemonic}: {e}", p.display()));
        }
        let variant = variant_name(&mnemonic, p);
        if ops.iter().any(|(v, _, _, _, _)| *v == variant) {
            fail(format!("{}: a second spec for {mnemonic}", p.display()));
        }
        // the opcode the first form fixes (the spec's compiler checks that every form fixes it)
        let opcode = v["forms"][0]["fixed"]["opcode"].as_u64().unwrap_or_else(|| fail(format!("{}: its first form fixes no opcode", p.display())));
        ops.push((variant, mnemonic, p.clone(), opcode, includes));
    }
    if ops.is_empty() {
        fail(format!("{}: no instruction specs", dir.display()));
    }
    overlays(&dir, &common, &ops.iter().map(|(_, m, p, _, _)| (m.clone(), p.clone())).collect::<Vec<_>>());
    // HMUL2 first: the project's first instruction keeps index 0 (seeded runs stay the same)
    ops.sort_by_key(|(v, _, _, _, _)| (v != "Hmul2", v.clone()));
    let mut out = String::new();
    let _ = writeln!(out, "/// The instructions of the family, one per spec file in `{}/` (generated by\n/// `harness/isa/build.rs`).", target.spec_dir);
    out.push_str("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]\npub enum Op {\n");
    for (v, m, p, _, _) in &ops {
        let _ = writeln!(out, "    /// `{m}`, described by `{}/{}`.\n    #[serde(rename = \"{m}\")]\n    {v},", target.spec_dir, file_name(p));
    }
    out.push_str("}\n\nimpl Op {\n");
    let _ = writeln!(
        out,
        "    /// Every instruction, in a fixed order (HMUL2 first).\n    pub const ALL: [Op; {}] = [{}];",
        ops.len(),
        ops.iter().map(|(v, _, _, _, _)| format!("Op::{v}")).collect::<Vec<_>>().join(", ")
    );
    out.push_str("    /// The mnemonic nvdisasm prints.\n    pub fn mnemonic(self) -> &'static str {\n        match self {\n");
    for (v, m, _, _, _) in &ops {
        let _ = writeln!(out, "            Op::{v} => \"{m}\",");
    }
    out.push_str("        }\n    }\n    /// The opcode value the spec's forms fix (read without compiling the spec: the decoder's\n    /// opcode table needs every instruction's, and a word of one instruction no more than its\n    /// spec; `Layout::opcode_value` is the same, a test checks).\n    pub fn opcode_value(self) -> u32 {\n        match self {\n");
    for (v, _, _, o, _) in &ops {
        let _ = writeln!(out, "            Op::{v} => {o},");
    }
    out.push_str("        }\n    }\n    /// The spec file's text, compiled in.\n    pub fn spec_json(self) -> &'static str {\n        match self {\n");
    for (v, _, p, _, _) in &ops {
        let _ = writeln!(out, "            Op::{v} => include_str!({:?}),", p.canonicalize().unwrap_or_else(|e| fail(format!("{}: {e}", p.display()))));
    }
    out.push_str(
        "        }\n    }\n    /// The spec file, relative to the repository root.\n    pub fn spec_path(self) -> &'static str {\n        match self {\n",
    );
    for (v, _, p, _, _) in &ops {
        let _ = writeln!(out, "            Op::{v} => \"{}/{}\",", target.spec_dir, file_name(p));
    }
    out.push_str("        }\n    }\n    /// A 64-bit FNV-1a hash of [`Op::spec_json`] followed by the shared fields it includes\n    /// (`common.json`), which tables generated from the spec record, so that tables of\n    /// another spec are never used.\n    pub fn spec_hash(self) -> u64 {\n        match self {\n");
    for (v, _, p, _, includes) in &ops {
        let mut text = std::fs::read(p).unwrap_or_else(|e| fail(format!("{}: {e}", p.display())));
        if *includes {
            text.extend_from_slice(common_text.as_bytes());
        }
        let _ = writeln!(out, "            Op::{v} => {:#018x},", fnv1a(&text));
    }
    out.push_str("        }\n    }\n}\n");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| fail("no OUT_DIR".into())));
    let dest = out_dir.join("ops.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| fail(format!("{}: {e}", dest.display())));
    immediates(&out_dir);
}

/// Every target's overlay (`harness/spec/arch/<sm>/overlay.json`) applied to the base specs:
/// an unknown key, instruction, form, field, rule or value name fails the build, naming it.
fn overlays(spec_dir: &Path, common: &serde_json::Value, specs: &[(String, PathBuf)]) {
    let root = spec_dir.join("../../..");
    for t in target::Target::ALL {
        let Some(text) = t.spec_overlay else { continue };
        let path = root.join(t.arch_dir).join("overlay.json");
        println!("cargo:rerun-if-changed={}", path.display());
        let (arch, insts) = overlay::parse(text).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
        if arch != t.nvdisasm {
            fail(format!("{}: arch {arch:?}, but the file is {}'s", path.display(), t.nvdisasm));
        }
        if let Some(m) = insts.keys().find(|m| !specs.iter().any(|(s, _)| s == *m)) {
            fail(format!("{}: {m:?} is no instruction of the base specs", path.display()));
        }
        for (mnemonic, p) in specs {
            let empty = serde_json::json!({"evidence": []});
            let entry = insts.get(mnemonic).unwrap_or(&empty);
            if overlay::absent(entry) {
                continue;
            }
            let text = std::fs::read_to_string(p).unwrap_or_else(|e| fail(format!("{}: {e}", p.display())));
            let base: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{}: not JSON: {e}", p.display())));
            let (spec, common) = overlay::apply(mnemonic, &base, common, &arch, entry).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
            let strings = |v: &serde_json::Value| -> Vec<String> {
                v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default()
            };
            let resolved: Vec<(String, String, Vec<String>)> = spec["fields"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    let name = f.as_str().or(f["name"].as_str()).unwrap_or_default();
                    let def = if f.get("bits").is_some() { Some(f) } else { common["fields"].as_array().and_then(|a| a.iter().find(|c| c["name"] == name)) };
                    let def = def.unwrap_or(f);
                    (name.to_string(), def["kind"].as_str().unwrap_or_default().to_string(), strings(&def["values"]))
                })
                .collect();
            let named: Vec<known::NamedField> = resolved.iter().map(|(n, k, vs)| known::NamedField { name: n, kind: k, values: vs }).collect();
            if let Err(e) = known::check_names(&named, &strings(&spec["operand2_half_selects"]), &shape_fields(&spec["shape"])) {
                fail(format!("{}: {mnemonic}: {e}", path.display()));
            }
        }
    }
}

/// The fields a spec's `shape` brings (`known::shape_fields` of its writes, the writes its
/// `writes_when` gates, its reads and the gates).
fn shape_fields(shape: &serde_json::Value) -> Vec<&'static str> {
    fn names(v: &serde_json::Value) -> Vec<&str> {
        v.as_array().map(|a| a.iter().filter_map(|s| s.as_str()).collect()).unwrap_or_default()
    }
    let mut writes = names(&shape["writes"]);
    let when = shape["writes_when"].as_object();
    writes.extend(when.into_iter().flat_map(|o| o.values().flat_map(names)));
    let gates: Vec<&str> = when.map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    known::shape_fields(&writes, &names(&shape["reads"]), &gates)
}

/// The 64-bit FNV-1a hash (`isa::fused`'s generated tables record it of the spec they came from).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// `imm_packed.bin` and `imm_special.rs` in OUT_DIR: the fused decoder's immediate texts
/// ([`immtable`]'s layout).
fn immediates(out_dir: &Path) {
    println!("cargo:rerun-if-changed=src/spec/known.rs");
    for f in ["floattext.rs", "immtable.rs", "strtable.rs"] {
        println!("cargo:rerun-if-changed=src/isa/{f}");
    }
    let Some((packed, special)) = immtable::texts() else { fail("src/isa/immtable.rs: an immediate's text does not fit the packed layout".into()) };
    let dest = out_dir.join("imm_packed.bin");
    std::fs::write(&dest, packed.concat()).unwrap_or_else(|e| fail(format!("{}: {e}", dest.display())));
    let mut src = format!("/// Generated by `harness/isa/build.rs` (see `isa::immtable`).\npub(super) static IMM_SPECIAL: [[u8; 16]; {}] = [\n", special.len());
    for e in &special {
        let _ = writeln!(src, "    {e:?},");
    }
    src.push_str("];\n");
    let dest = out_dir.join("imm_special.rs");
    std::fs::write(&dest, src).unwrap_or_else(|e| fail(format!("{}: {e}", dest.display())));
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// `HMUL2` → `Hmul2`, `HFMA2.MMA` → `Hfma2Mma`.
fn variant_name(mnemonic: &str, p: &Path) -> String {
    let mut s = String::new();
    for part in mnemonic.split(['.', '_']) {
        let mut cs = part.chars();
        match cs.next() {
            Some(c) if c.is_ascii_alphabetic() => {
                s.push(c.to_ascii_uppercase());
                s.extend(cs.map(|c| c.to_ascii_lowercase()));
            }
            _ => fail(format!("{}: mnemonic {mnemonic:?} does not make a Rust name", p.display())),
        }
    }
    s
}
