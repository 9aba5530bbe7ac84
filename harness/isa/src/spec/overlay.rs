//! How an architecture's encodings differ from the base specs (SM90's), as data:
//! `harness/spec/arch/<sm>/overlay.json` ([`crate::target::Target::spec_overlay`]).
//!
//! An overlay says only what differs, per instruction, with the nvdisasm words that prove it:
//!
//! ```json
//! {"arch": "SM86", "doc": "...", "instructions": {"HMUL2": {
//!     "doc": "...",
//!     "absent": false,
//!     "remove_forms": ["HMUL2_R_R_I_I"],
//!     "fields": {"format": {"bits": [[78, 78]], "values": ["", "F32"], "doc": "..."}},
//!     "remove_fields": ["b_swizzle_hi"],
//!     "remove_constraints": ["..."],
//!     "add_constraints": [{"id": "...", "forms": [], "when": {"yield": [[1, 1]]}, "field": "reuse", "allowed": [[0, 1]], "doc": "..."}],
//!     "remove_hidden": ["..."],
//!     "add_hidden": [{"id": "...", "when": {}, "field": "format", "doc": "..."}],
//!     "operand2_half_selects": [],
//!     "evidence": [{"id": "...", "forms": [], "fields": ["format"], "seed": "", "nvdisasm": "...",
//!                   "words": [{"hex": "0x...", "nvdisasm": "HMUL2.F32 R0, R1, R2"}]}]}}}
//! ```
//!
//! [`apply`] turns a base spec (and the shared fields it includes) into the target's, every
//! key and name checked: an unknown key, instruction, form, field, rule or hidden rule is an
//! error naming it. `harness/isa/build.rs` runs it on every overlay (so a bad overlay fails the
//! build) and the spec compiler runs it again. The base spec's errata and evidence speak of
//! SM90's words, so the target's spec carries the overlay's evidence alone.
//!
//! This file is also compiled into `harness/isa/build.rs`: it uses `serde_json` and `std` only.

use serde_json::{Map, Value};

/// The keys an overlay file may have.
const TOP_KEYS: &[&str] = &["arch", "doc", "instructions"];
/// The keys of one instruction's entry.
const INSTRUCTION_KEYS: &[&str] = &[
    "doc",
    "absent",
    "remove_forms",
    "fields",
    "remove_fields",
    "remove_constraints",
    "add_constraints",
    "remove_hidden",
    "add_hidden",
    "operand2_half_selects",
    "evidence",
];
/// The keys of a changed field.
const FIELD_KEYS: &[&str] = &["bits", "values", "doc"];
/// The keys of an evidence entry (the spec's `Erratum`).
const EVIDENCE_KEYS: &[&str] = &["id", "forms", "fields", "seed", "nvdisasm", "words"];

fn refuse_unknown_keys(what: &str, v: &Value, known: &[&str]) -> Result<(), String> {
    let Some(obj) = v.as_object() else { return Err(format!("{what}: not an object")) };
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!("{what}: unknown key {k:?} (known: {})", known.join(", "))),
        None => Ok(()),
    }
}

/// The overlay's architecture name and its instructions' entries, by mnemonic, with every key
/// checked (the names inside are checked by [`apply`] against the base specs).
pub fn parse(text: &str) -> Result<(String, Map<String, Value>), String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    refuse_unknown_keys("overlay", &v, TOP_KEYS)?;
    let arch = v["arch"].as_str().ok_or("overlay: no \"arch\"")?.to_string();
    if !v["doc"].is_string() {
        return Err("overlay: no \"doc\"".into());
    }
    let insts = v["instructions"].as_object().ok_or("overlay: no \"instructions\" object")?.clone();
    for (m, e) in &insts {
        refuse_unknown_keys(&format!("overlay {m}"), e, INSTRUCTION_KEYS)?;
        if !e["doc"].is_string() {
            return Err(format!("overlay {m}: no \"doc\" (say what differs and why)"));
        }
        if let Some(fs) = e.get("fields") {
            for (n, f) in fs.as_object().ok_or(format!("overlay {m}: \"fields\" is not an object"))? {
                refuse_unknown_keys(&format!("overlay {m}: field {n}"), f, FIELD_KEYS)?;
                if !f["doc"].is_string() {
                    return Err(format!("overlay {m}: field {n}: no \"doc\""));
                }
            }
        }
        let evidence =
            e.get("evidence").and_then(|x| x.as_array()).ok_or(format!("overlay {m}: no \"evidence\" list (the words that show each difference)"))?;
        for (i, ev) in evidence.iter().enumerate() {
            refuse_unknown_keys(&format!("overlay {m}: evidence {i}"), ev, EVIDENCE_KEYS)?;
            if ev["words"].as_array().is_none_or(|w| w.is_empty()) {
                return Err(format!("overlay {m}: evidence {i}: no words"));
            }
        }
    }
    Ok((arch, insts))
}

/// Whether the overlay entry says the architecture lacks the instruction.
pub fn absent(entry: &Value) -> bool {
    entry["absent"].as_bool() == Some(true)
}

fn strings(v: &Value, what: &str) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => a.iter().map(|s| s.as_str().map(String::from).ok_or(format!("{what}: not a list of names"))).collect(),
        _ => Err(format!("{what}: not a list of names")),
    }
}

/// The name of a spec's `fields` entry (a name, or an object with `name`).
fn entry_name(f: &Value) -> &str {
    f.as_str().or(f["name"].as_str()).unwrap_or_default()
}

/// Drop `removed` form keys from a list of form keys; Some(empty) when every key it had is
/// gone (the rule or erratum speaks of removed forms only), None when it had none (all forms).
fn without_forms(list: &mut Value, removed: &[String]) -> Option<bool> {
    let a = list.as_array_mut()?;
    if a.is_empty() {
        return None;
    }
    a.retain(|k| !k.as_str().is_some_and(|k| removed.iter().any(|r| r == k)));
    Some(a.is_empty())
}

/// The target's spec and shared fields: `spec` (a base spec's JSON) and `common` (the shared
/// fields it includes) changed as `entry` (one instruction's overlay) says, for architecture
/// `arch`. Every name the entry gives must exist in the base spec.
pub fn apply(mnemonic: &str, spec: &Value, common: &Value, arch: &str, entry: &Value) -> Result<(Value, Value), String> {
    let what = |m: String| format!("overlay {arch} {mnemonic}: {m}");
    let mut spec = spec.clone();
    let mut common = common.clone();
    common["arch"] = Value::String(arch.into());
    if spec.get("arch").is_some() {
        spec["arch"] = Value::String(arch.into());
    }
    // the base's errata and evidence are SM90's words; the target has its own
    if let Some(o) = spec.as_object_mut() {
        o.remove("errata");
        o.remove("seed_page");
    }
    let evidence = entry.get("evidence").cloned().unwrap_or(Value::Array(Vec::new()));
    spec["evidence"] = evidence;
    // forms
    let removed_forms = strings(&entry["remove_forms"], "remove_forms")?;
    let forms = spec["forms"].as_array_mut().ok_or(what("the base spec has no forms".into()))?;
    for k in &removed_forms {
        if !forms.iter().any(|f| f["key"].as_str() == Some(k)) {
            return Err(what(format!("remove_forms: no form {k:?}")));
        }
    }
    forms.retain(|f| !f["key"].as_str().is_some_and(|k| removed_forms.iter().any(|r| r == k)));
    if forms.is_empty() {
        return Err(what("remove_forms removes every form: say \"absent\": true instead".into()));
    }
    // rules: named removals, then the forms removed from the rules that name them
    for (list, key) in [("constraints", "remove_constraints"), ("hidden", "remove_hidden")] {
        let ids = strings(&entry[key], key)?;
        let rules = match spec.get_mut(list).and_then(|v| v.as_array_mut()) {
            Some(r) => r,
            None if ids.is_empty() => continue,
            None => return Err(what(format!("{key}: the base spec has no {list}"))),
        };
        for id in &ids {
            if !rules.iter().any(|c| c["id"].as_str() == Some(id)) {
                return Err(what(format!("{key}: no rule {id:?}")));
            }
        }
        rules.retain(|c| !c["id"].as_str().is_some_and(|i| ids.iter().any(|r| r == i)));
        rules.retain_mut(|c| c.get_mut("forms").and_then(|f| without_forms(f, &removed_forms)) != Some(true));
    }
    // added rules (the spec compiler checks them as it checks the base's)
    for (list, key) in [("constraints", "add_constraints"), ("hidden", "add_hidden")] {
        let Some(add) = entry.get(key) else { continue };
        let add = add.as_array().ok_or(what(format!("{key}: not a list")))?;
        let rules = spec.as_object_mut().ok_or(what("not an object".into()))?.entry(list).or_insert(Value::Array(Vec::new()));
        let rules = rules.as_array_mut().ok_or(what(format!("{list}: not a list")))?;
        for r in add {
            let id = r["id"].as_str().ok_or(what(format!("{key}: a rule without an id")))?;
            if rules.iter().any(|c| c["id"].as_str() == Some(id)) {
                return Err(what(format!("{key}: rule {id:?} is the base's: remove it first")));
            }
            rules.push(r.clone());
        }
    }
    // fields: removals from the spec's list, its forms and its common fields
    let removed_fields = strings(&entry["remove_fields"], "remove_fields")?;
    for n in &removed_fields {
        let fields = spec["fields"].as_array_mut().ok_or(what("the base spec has no fields".into()))?;
        let before = fields.len();
        fields.retain(|f| entry_name(f) != n);
        if fields.len() == before {
            return Err(what(format!("remove_fields: no field {n:?}")));
        }
        if let Some(c) = spec["common_fields"].as_array_mut() {
            c.retain(|f| f.as_str() != Some(n));
        }
        for f in spec["forms"].as_array_mut().into_iter().flatten() {
            if let Some(fs) = f["fields"].as_array_mut() {
                fs.retain(|x| x.as_str() != Some(n));
            }
        }
    }
    // fields: changed bits or value names, in the spec's own definition or the shared one
    if let Some(changes) = entry.get("fields").and_then(|v| v.as_object()) {
        for (n, change) in changes {
            let fields = spec["fields"].as_array_mut().ok_or(what("the base spec has no fields".into()))?;
            let Some(at) = fields.iter().position(|f| entry_name(f) == n) else { return Err(what(format!("fields: no field {n:?}"))) };
            let def: &mut Value = if fields[at].get("bits").is_some() {
                &mut fields[at]
            } else {
                // a shared field: changed in this instruction's copy of the shared file
                let shared = common["fields"].as_array_mut().and_then(|a| a.iter_mut().find(|c| c["name"].as_str() == Some(n)));
                shared.ok_or(what(format!("fields: {n:?} is neither the spec's own nor a shared field")))?
            };
            for k in ["bits", "values"] {
                if let Some(v) = change.get(k) {
                    def[k] = v.clone();
                }
            }
            if let Some(d) = change.get("doc") {
                def["doc"] = d.clone();
            }
        }
    }
    if let Some(h) = entry.get("operand2_half_selects") {
        spec["operand2_half_selects"] = h.clone();
    }
    // the evidence names forms and fields of the target's spec
    for e in spec["evidence"].as_array().into_iter().flatten() {
        let id = e["id"].as_str().unwrap_or_default();
        for k in strings(&e["forms"], "evidence forms")? {
            if !spec["forms"].as_array().into_iter().flatten().any(|f| f["key"].as_str() == Some(&k)) {
                return Err(what(format!("evidence {id}: no form {k:?} on {arch}")));
            }
        }
    }
    Ok((spec, common))
}
