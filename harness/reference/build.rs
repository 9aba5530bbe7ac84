//! Builds the project's reference vectors (`vectors/reference/*.jsonl`) into the library, so
//! that `run`'s software check replays them from any folder, in a copied or installed binary.

use std::path::{Path, PathBuf};

fn jsonl(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            jsonl(&e, out);
        } else if e.extension().is_some_and(|x| x == "jsonl") {
            out.push(e);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/reference");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    jsonl(&root, &mut files);
    let mut src =
        String::from("/// The reference vectors built in: each file's path under `vectors/reference` and its text.\npub const BUILTIN: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        let abs = std::fs::canonicalize(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        src += &format!("    ({name:?}, include_str!({:?})),\n", abs.display().to_string());
    }
    src += "];\n";
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("builtin_vectors.rs");
    std::fs::write(&out, src).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
