//! The report as one HTML file: inline CSS, no script, no external asset, every text escaped.
//! Elements carry stable `id`/`data-*` attributes (`data-form`, `data-field`, `data-evidence`,
//! `data-erratum`, `data-kind`) so that tests can query the rendered DOM.

use super::inputs::{evidence_vectors, for_assumption};
use super::{Evidence, InstView, Model, Owner};
use crate::schema::{Hardware, Status};
use crate::seedpage::{BitClass, FieldClass, SeedCell, SpecBit};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Text for HTML content and attribute values: nothing in it can open a tag or end an attribute.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

const CSS: &str = r#".not-hw{background:#ffe0b2;color:#7a3a00;border:1px solid #e08a00;font-weight:600}.banner{padding:6px 10px;margin:8px 0;border-radius:4px}

:root{--seed:#f9e3a0;--spec:#efe6c8;--confirmed:#b5e0ab;--contradicted:#f59d86;--hardware:#93c2f3;--hwm:#c2185b;--ignored:#eceff1;--line:#c3c9d2}
*{box-sizing:border-box}
body{font:13px/1.45 "DejaVu Sans",Verdana,sans-serif;margin:22px 26px;color:#1c2330;background:#fbfcfd}
h1{font-size:22px;margin:0 0 2px}h2{font-size:16px;margin:0 0 2px}h3{font-size:14px;margin:16px 0 6px}
section{margin:18px 0 26px}
section.instruction{border-top:3px solid #5b6573;padding-top:6px}
.banner.unattributed{background:#fde8e4;color:#b3261e;border:1px solid #e0533d;font-weight:600}
code,.mono{font-family:"DejaVu Sans Mono",monospace;font-size:12px}
.sub{color:#55606e;margin:0 0 10px}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;padding:10px 12px;background:#fff;border:1px solid var(--line);border-radius:6px}
.legend span.item{display:flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:22px;height:14px;border:1px solid #8a94a3;border-radius:2px}
.ev-seed-only{background:var(--seed)}.ev-spec-only{background:var(--spec)}.ev-confirmed{background:var(--confirmed)}.ev-contradicted{background:var(--contradicted)}
.ev-hardware{background:var(--hardware)}.ev-hardware-mismatch{background:var(--hwm);color:#fff}
.ev-ignored{background:repeating-linear-gradient(135deg,#f4f6f8 0 3px,#e3e7eb 3px 5px);color:#9aa3ad}
td.ign.ev-contradicted{background:repeating-linear-gradient(135deg,#fbe0d9 0 3px,#f59d86 3px 5px)}
article.form{background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px 12px 4px;margin:0 0 10px}
.syntax{font-weight:normal;color:#55606e;margin-left:8px}
.counts{color:#55606e;font-size:12px}
.counts b{color:#1c2330}
table.bits{border-collapse:collapse;table-layout:fixed;width:100%;margin:6px 0 4px}
table.bits col.lab{width:58px}
table.bits th{font-size:10px;font-weight:normal;color:#55606e;text-align:right;padding-right:6px;white-space:nowrap}
table.bits td{border:1px solid var(--line);text-align:center;padding:0 1px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;font-size:11px}
table.bits td.byte{border-left:2px solid #5b6573}
tr.bitno td{border:none;font-size:8px;color:#7b8590;height:13px;padding:0}
tr.bitno td.byte{border-left:2px solid transparent}
tr.spec td{height:50px;font-weight:bold}
tr.seed td{height:36px;background:#fff;color:#4b5563;font-size:10px}
td .vert{display:inline-block;writing-mode:vertical-rl;transform:rotate(180deg);max-height:47px;overflow:hidden;text-overflow:ellipsis}
tr.seed td .vert{max-height:33px}
tr.seed td.cmp-agrees{background:#f2f4f6}
tr.seed td.cmp-seed-only{background:repeating-linear-gradient(45deg,#fff 0 3px,#f1f1f1 3px 6px);color:#8a929c;font-style:italic}
tr.seed td.cmp-contradicted{background:#fde8e4;color:#b3261e;font-weight:bold;box-shadow:inset 0 0 0 2px #e0533d}
td.fixed{font-family:"DejaVu Sans Mono",monospace}
ul.disputes{margin:2px 0 4px;padding-left:18px;color:#3c4654;font-size:12px;columns:2;column-gap:28px}
ul.disputes li{margin:1px 0}
table.data{border-collapse:collapse;width:100%;background:#fff}
table.data th,table.data td{border:1px solid var(--line);padding:3px 6px;vertical-align:top;text-align:left}
table.data th{background:#eef1f4;font-size:12px}
table.data td.num{text-align:right;font-variant-numeric:tabular-nums}
.tag{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;border:1px solid #8a94a3}
.tag.assumed{background:var(--seed)}.tag.hardware-confirmed{background:var(--hardware)}
.tag.mismatch{background:var(--hwm);color:#fff;border-color:var(--hwm)}.tag.fault{background:#5b2a86;color:#fff;border-color:#5b2a86}
.vals{display:flex;flex-wrap:wrap;gap:3px}
.val{border:1px solid var(--line);border-radius:3px;padding:0 4px;font-size:11px;background:#f7f8fa}
.val.zero{color:#b3261e;border-color:#e0533d}
.empty{color:#7b8590;font-style:italic}
details summary{cursor:pointer;color:#33506e}
table.findings code{white-space:nowrap}
table.findings .in{white-space:nowrap}
"#;

fn evidence_title(b: &super::BitView) -> String {
    b.all.iter().rev().map(|e| e.name()).collect::<Vec<_>>().join(", ")
}

fn cell_label(text: &str, width: usize) -> String {
    if width <= 2 && text.chars().count() > 2 {
        format!("<span class=\"vert\">{}</span>", esc(text))
    } else {
        esc(text)
    }
}

fn bits_range(lo: usize, hi: usize) -> String {
    if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo}..{hi}")
    }
}

/// One half (64 bits) of one form: bit numbers, the spec's fields by evidence, the seed's claims.
fn half(out: &mut String, iv: &InstView, fi: usize, h: usize) {
    let s = iv.spec();
    let bits = &iv.bits[fi];
    let base = h * 64;
    let byte = |b: usize| if b.is_multiple_of(8) && b != base { " byte" } else { "" };
    let _ = write!(out, "<table class=\"bits\" data-half=\"{h}\"><colgroup><col class=\"lab\">");
    out.push_str(&"<col>".repeat(64));
    out.push_str("</colgroup><tr class=\"bitno\"><th>bit</th>");
    for b in base..base + 64 {
        let _ = write!(out, "<td class=\"{}\">{b}</td>", byte(b).trim());
    }
    out.push_str("</tr><tr class=\"spec\"><th>spec</th>");
    let mut b = base;
    while b < base + 64 {
        let v = &bits[b];
        let mut e = b + 1;
        if !matches!(v.spec, SpecBit::Fixed { .. }) {
            while e < base + 64 && bits[e].spec == v.spec && bits[e].primary == v.primary && !matches!(bits[e].spec, SpecBit::Fixed { .. }) {
                // a field's run stops at a segment boundary too (split fields)
                if let SpecBit::Field { field } = v.spec {
                    if s.fields[field].mask >> e & 1 == 0 {
                        break;
                    }
                }
                e += 1;
            }
        }
        let w = e - b;
        let ev = v.primary.name();
        let all = v.all.iter().map(|x| x.name()).collect::<Vec<_>>().join(" ");
        let errata = match (v.errata.is_empty(), v.evidence.is_empty()) {
            (false, _) => format!("; errata: {}", v.errata.join(", ")),
            (true, false) => format!("; spec evidence: {}", v.evidence.join(", ")),
            (true, true) => String::new(),
        };
        match &v.spec {
            SpecBit::Ignored => {
                let what = if v.primary == Evidence::Ignored { String::new() } else { format!("; {}{errata}", evidence_title(v)) };
                let _ = write!(
                    out,
                    "<td colspan=\"{w}\" class=\"ign ev-{ev}{}\" data-evidence=\"{ev}\" data-bits=\"{}\" title=\"{}\"></td>",
                    byte(b),
                    bits_range(b, e - 1),
                    esc(&format!("bits {}: no field in this form (nvdisasm ignores them){what}", bits_range(b, e - 1)))
                );
            }
            SpecBit::Fixed { field, value } => {
                let f = &s.fields[*field];
                let _ = write!(
                    out,
                    "<td class=\"fixed ev-{ev}{}\" data-field=\"{}\" data-fixed=\"{}\" data-evidence=\"{ev}\" data-evidence-all=\"{all}\" data-bits=\"{b}\" title=\"{}\">{}</td>",
                    byte(b),
                    esc(&f.name),
                    *value as u8,
                    esc(&format!("bit {b}: {} (fixed) = {}; {}{errata}", f.name, *value as u8, evidence_title(v))),
                    *value as u8
                );
            }
            SpecBit::Field { field } => {
                let f = &s.fields[*field];
                let segs = f.segments.iter().map(|&(lo, hi)| bits_range(lo as usize, hi as usize)).collect::<Vec<_>>().join(",");
                let title = format!("{} (bits {segs}) — bits {} here: {}{errata}. {}", f.name, bits_range(b, e - 1), evidence_title(v), f.doc);
                let _ = write!(
                    out,
                    "<td colspan=\"{w}\" class=\"ev-{ev}{}\" data-field=\"{}\" data-evidence=\"{ev}\" data-evidence-all=\"{all}\" data-bits=\"{}\" title=\"{}\">{}</td>",
                    byte(b),
                    esc(&f.name),
                    bits_range(b, e - 1),
                    esc(&title),
                    cell_label(&f.name, w)
                );
            }
        }
        b = e;
    }
    // the seed page's row, for an instruction it draws
    let Some(cmp) = iv.seed.as_ref().map(|c| &c[fi]) else {
        out.push_str("</tr></table>");
        return;
    };
    out.push_str("</tr><tr class=\"seed\"><th>seed page</th>");
    let mut b = base;
    while b < base + 64 {
        let c = &cmp.bits[b];
        let mut e = b + 1;
        if let SeedCell::Field { lo, .. } = &c.seed {
            while e < base + 64 && matches!(&cmp.bits[e].seed, SeedCell::Field { lo: l2, .. } if l2 == lo) && cmp.bits[e].class == c.class {
                e += 1;
            }
        }
        let w = e - b;
        let class = c.class.name();
        match &c.seed {
            SeedCell::Fixed(v) => {
                let _ = write!(
                    out,
                    "<td class=\"fixed cmp-{class}{}\" data-seed-fixed=\"{}\" data-compare=\"{class}\" title=\"{}\">{}</td>",
                    byte(b),
                    *v as u8,
                    esc(&format!("seed page: bit {b} is fixed {} ({class})", *v as u8)),
                    *v as u8
                );
            }
            SeedCell::Field { label, lo, hi } => {
                let _ = write!(
                    out,
                    "<td colspan=\"{w}\" class=\"cmp-{class}{}\" data-seed-label=\"{}\" data-compare=\"{class}\" title=\"{}\">{}</td>",
                    byte(b),
                    esc(label),
                    esc(&format!("seed page: {label} at bits {} ({class} at bits {})", bits_range(*lo as usize, *hi as usize), bits_range(b, e - 1))),
                    cell_label(label, w)
                );
            }
        }
        b = e;
    }
    out.push_str("</tr></table>");
}

fn form_section(out: &mut String, m: &Model, iv: &InstView, fi: usize) {
    let s = iv.spec();
    let fs = &s.forms[fi];
    let bits = &iv.bits[fi];
    let _ = write!(out, "<article class=\"form\" id=\"form-{k}\" data-form=\"{k}\">", k = esc(&fs.key));
    let _ = write!(out, "<h2>{}<span class=\"syntax\">{}</span></h2>", esc(&fs.key), esc(&fs.syntax));
    let mut counts = String::new();
    // the classes that can apply: seed-only and contradicted where the seed page draws the
    // instruction, spec-only where it does not
    let can = |e: Evidence| if iv.seed.is_some() { e != Evidence::SpecOnly } else { !matches!(e, Evidence::SeedOnly | Evidence::Contradicted) };
    for e in Evidence::CLASSES.iter().rev().chain([&Evidence::Ignored]).filter(|e| can(**e)) {
        let n = bits.iter().filter(|b| b.primary == *e).count();
        let _ = write!(counts, "<span data-count=\"{}\"><b>{n}</b> {}</span> · ", e.name(), e.name());
    }
    let origin = match (iv.seed.is_some(), m.page.form(&fs.key)) {
        (true, Some(f)) => format!("seed page's distilled text: <code>{}</code>", esc(&f.distilled)),
        _ => format!(
            "no seed page: the spec rests on its nvdisasm evidence ({} entries about this form)",
            s.errata.iter().filter(|e| crate::seedpage::erratum_applies(e, &fs.key)).count()
        ),
    };
    if iv.withdrawn.contains(&fs.key) {
        let _ = write!(out, "<p class=\"banner unattributed\" data-withdrawn=\"{}\">An oracle mismatch is a word of this form: no bit of it counts as confirmed by nvdisasm.</p>", esc(&fs.key));
    }
    let _ = write!(out, "<div class=\"counts\">bits: {counts}{origin}</div>");
    half(out, iv, fi, 0);
    half(out, iv, fi, 1);
    // the seed's claims that are not the spec's, field by field
    let Some(cmp) = iv.seed.as_ref().map(|c| &c[fi]) else {
        out.push_str("</article>");
        return;
    };
    let mut items = String::new();
    let mut fields: Vec<usize> = fs.fixed.iter().map(|&(i, _)| i).chain(fs.fields.iter().copied()).collect();
    fields.sort_by_key(|&i| s.fields[i].segments[0].0);
    for fidx in fields {
        let (class, spans) = cmp.field_verdict(s, fidx);
        if class == FieldClass::Agrees {
            continue;
        }
        let f = &s.fields[fidx];
        let segs = f.segments.iter().map(|&(lo, hi)| bits_range(lo as usize, hi as usize)).collect::<Vec<_>>().join(",");
        let claim = if spans.is_empty() {
            "fixed bits".to_string()
        } else {
            spans.iter().map(|x| format!("{} {}", x.label, bits_range(x.lo as usize, x.hi as usize))).collect::<Vec<_>>().join(", ")
        };
        let errata: BTreeSet<&String> = cmp.bits.iter().filter(|b| f.mask >> b.bit & 1 == 1).flat_map(|b| b.errata.iter()).collect();
        let errata = if errata.is_empty() {
            if class == FieldClass::Contradicted {
                "; no erratum recorded".to_string()
            } else {
                String::new()
            }
        } else {
            format!("; erratum {}", errata.into_iter().cloned().collect::<Vec<_>>().join(", "))
        };
        let _ = write!(
            items,
            "<li data-field=\"{}\" data-verdict=\"{}\"><b>{}</b> <span class=\"mono\">{}</span> — seed page: {} ({}{})</li>",
            esc(&f.name),
            class.name(),
            esc(&f.name),
            esc(&segs),
            esc(&claim),
            class.name(),
            esc(&errata)
        );
    }
    let seed_only: Vec<usize> =
        cmp.bits.iter().filter(|b| b.class == BitClass::SeedOnly && matches!(b.seed, SeedCell::Field { .. })).map(|b| b.bit as usize).collect();
    if !seed_only.is_empty() {
        let _ = write!(
            items,
            "<li data-verdict=\"seed-only\">the seed page names bits {} that no field of this form holds</li>",
            esc(&seed_only.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", "))
        );
    }
    if !items.is_empty() {
        let _ = write!(out, "<ul class=\"disputes\">{items}</ul>");
    }
    out.push_str("</article>");
}

fn legend(out: &mut String) {
    out.push_str("<section id=\"legend\"><div class=\"legend\">");
    for e in Evidence::CLASSES.iter().chain([&Evidence::Ignored]) {
        let _ = write!(out, "<span class=\"item\" data-legend=\"{n}\"><span class=\"swatch ev-{n}\"></span>{}</span>", esc(e.legend()), n = e.name());
    }
    out.push_str("</div><div class=\"legend\" style=\"margin-top:6px\"><span class=\"item\"><b>seed page row:</b></span>");
    for (c, t) in [
        ("agrees", "the seed's claim matches the spec"),
        ("seed-only", "the seed claims a bit no field of the form holds"),
        ("contradicted", "the seed's claim differs from the spec"),
    ] {
        let _ = write!(
            out,
            "<span class=\"item\" data-legend=\"seed-{c}\"><span class=\"swatch\" style=\"{}\"></span>{t}</span>",
            match c {
                "agrees" => "background:#f2f4f6",
                "seed-only" => "background:repeating-linear-gradient(45deg,#fff 0 3px,#e4e4e4 3px 6px)",
                _ => "background:#fde8e4;box-shadow:inset 0 0 0 2px #e0533d",
            }
        );
    }
    out.push_str("</div></section>");
}

/// The spec's entries of one instruction: errata of the seed page where it draws the
/// instruction, else the nvdisasm evidence its spec was derived from.
fn errata_section(out: &mut String, iv: &InstView) {
    let s = iv.spec();
    let op = iv.op.mnemonic();
    let (title, attr, before) = if iv.seed.is_some() {
        ("Seed-page errata (nvdisasm wins)", "data-erratum", "seed page says")
    } else {
        ("The nvdisasm evidence the spec rests on (no seed page draws this instruction)", "data-spec-evidence", "believed before probing")
    };
    let _ = write!(out, "<section class=\"errata\" id=\"errata-{}\"><h3>{op}: {title}</h3>", esc(op));
    if s.errata.is_empty() {
        out.push_str("<p class=\"empty\">The spec records no entries.</p>");
    } else {
        let _ = write!(out, "<table class=\"data\"><tr><th>id</th><th>forms</th><th>fields</th><th>{before}</th><th>nvdisasm shows</th><th>words</th></tr>");
        for e in &s.errata {
            let words = e.words.iter().map(|w| format!("<div><code>{}</code> → <code>{}</code></div>", esc(&w.hex), esc(&w.nvdisasm))).collect::<String>();
            let _ = write!(
                out,
                "<tr {attr}=\"{}\"><td><b>{}</b></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{words}</td></tr>",
                esc(&e.id),
                esc(&e.id),
                esc(&if e.forms.is_empty() || s.forms.iter().all(|f| e.forms.contains(&f.key)) { "all".to_string() } else { e.forms.join(", ") }),
                esc(&e.fields.join(", ")),
                esc(&e.seed),
                esc(&e.nvdisasm)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

fn semantics_section(out: &mut String, m: &Model) {
    use crate::reference::policy::{arch_states, PENDING};
    use crate::target::Target;
    out.push_str("<section id=\"semantics\"><h3>Semantics: assumptions and what confirms them, per architecture</h3>");
    match &m.semantics {
        None => out.push_str("<p class=\"empty\">No semantics file was given (harness/spec/semantics.json is absent).</p>"),
        Some((path, list)) => {
            let per_arch: Vec<String> =
                Target::ALL.iter().map(|t| format!("{t} {}", list.iter().filter(|a| a.status_on(t) == Status::HardwareConfirmed).count())).collect();
            let _ = write!(
                out,
                "<p class=\"sub\">from <code>{}</code>: {} assumptions; hardware-confirmed on each architecture: {} (what one architecture's hardware shows settles nothing on another)</p>",
                esc(path),
                list.len(),
                esc(&per_arch.join(", "))
            );
            // each instruction's assumptions apart, per architecture: a session settles its own
            out.push_str("<table class=\"data\" id=\"semantics-by-instruction\"><tr><th>instruction</th><th>entries about it</th>");
            for t in Target::ALL {
                let _ = write!(out, "<th>{t}: still assumed</th>");
            }
            out.push_str("</tr>");
            let mut rows: Vec<(String, Vec<&crate::schema::Assumption>, Vec<bool>)> = crate::isa::Op::ALL
                .iter()
                .map(|&op| {
                    let has = Target::ALL.iter().map(|&t| crate::isa::Op::all_for(t).any(|o| o == op)).collect();
                    (op.mnemonic().to_string(), list.iter().filter(|a| a.instructions.contains(&op)).collect(), has)
                })
                .collect();
            for name in PENDING {
                let mine = list.iter().filter(|a| a.pending_instructions.iter().any(|n| n == name)).collect();
                rows.push((format!("{name} (reference only)"), mine, vec![true; Target::ALL.len()]));
            }
            for (name, mine, has) in &rows {
                let _ = write!(out, "<tr data-instruction=\"{}\"><td><b>{}</b></td><td>{}</td>", esc(name), esc(name), mine.len());
                for (t, has) in Target::ALL.iter().zip(has) {
                    let assumed: Vec<&str> = mine.iter().filter(|a| a.status_on(t) != Status::HardwareConfirmed).map(|a| a.id.as_str()).collect();
                    let cell = match (has, assumed.is_empty()) {
                        (false, _) => "<span class=\"empty\">no such instruction</span>".to_string(),
                        (true, true) => "<span class=\"empty\">none</span>".to_string(),
                        (true, false) if assumed.len() == mine.len() => format!("all {}", assumed.len()),
                        (true, false) => esc(&assumed.join(", ")),
                    };
                    let _ = write!(out, "<td data-arch=\"{t}\">{cell}</td>");
                }
                out.push_str("</tr>");
            }
            out.push_str("</table>");
            out.push_str(
                "<table class=\"data\"><tr><th>id</th><th>topic</th><th>assumption (where no hardware settled it)</th><th>alternatives</th><th>per architecture</th><th>confirming vectors</th><th>may differ by architecture</th><th>outside evidence (not hardware)</th><th>instructions</th></tr>",
            );
            for a in list {
                let ev: Vec<String> = evidence_vectors(a, path)
                    .iter()
                    .map(|(arch, v)| {
                        format!(
                            "<b>{}</b> <code>{}</code><br>a <code>{}</code> b <code>{}</code>{} d <code>{}</code> pred <code>{}</code> → <code>{}</code><br><span class=\"sub\">{}</span>",
                            esc(arch),
                            esc(&v.encoding),
                            esc(&v.a),
                            esc(&v.b),
                            v.c.as_deref().map(|c| format!(" c <code>{}</code>", esc(c))).unwrap_or_default(),
                            esc(&v.d),
                            esc(&v.pred),
                            esc(&v.expect),
                            esc(&v.origin)
                        )
                    })
                    .collect();
                // a settlement whose evidence is not a vector line still shows what it holds
                let unparsed: Vec<String> = a
                    .settled
                    .iter()
                    .filter(|(arch, _)| !evidence_vectors(a, path).iter().any(|(e, _)| e == arch))
                    .map(|(arch, s)| format!("<b>{}</b> <code>{}</code>", esc(arch), esc(&s.evidence)))
                    .collect();
                let ev =
                    if ev.is_empty() && unparsed.is_empty() { "<span class=\"empty\">none</span>".to_string() } else { [ev, unparsed].concat().join("<br>") };
                let outside = if a.outside.is_empty() {
                    "<span class=\"empty\">none</span>".to_string()
                } else {
                    a.outside
                        .iter()
                        .map(|o| {
                            let side = if for_assumption(a, o) { "for" } else { "<b>against</b>" };
                            format!(
                                "<span data-outside=\"{}\">{} ({side}): {}</span>",
                                if for_assumption(a, o) { "for" } else { "against" },
                                esc(&o.source),
                                esc(&o.says)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("<br>")
                };
                let notes = if a.may_differ.is_empty() {
                    "<span class=\"empty\">none known</span>".to_string()
                } else {
                    a.may_differ
                        .iter()
                        .map(|n| format!("<b>{}</b>: {} <span class=\"sub\">({})</span>", esc(&n.architectures.join(", ")), esc(&n.says), esc(&n.source)))
                        .collect::<Vec<_>>()
                        .join("<br>")
                };
                let settled: Vec<&str> = a.settled.keys().map(|k| k.as_str()).collect();
                let status = if settled.is_empty() { Status::Assumed } else { Status::HardwareConfirmed };
                // the instructions, those the isa does not know yet named as such (never "not stated")
                let ops: Vec<String> = a
                    .instructions
                    .iter()
                    .map(|o| o.mnemonic().to_string())
                    .chain(a.pending_instructions.iter().map(|n| format!("{n} (reference only: not yet in the isa)")))
                    .collect();
                let _ = write!(
                    out,
                    "<tr data-semantics=\"{}\" data-status=\"{}\" data-settled=\"{}\"><td><b>{}</b></td><td>{}</td><td>{}</td><td>{}</td><td><span class=\"tag {}\">{}</span></td><td>{ev}</td><td>{notes}</td><td>{outside}</td><td>{}</td></tr>",
                    esc(&a.id),
                    status.name(),
                    esc(&settled.join(" ")),
                    esc(&a.id),
                    esc(&a.topic),
                    esc(&a.assumption),
                    esc(&a.alternatives.join("; ")),
                    status.name(),
                    esc(&arch_states(a)),
                    if ops.is_empty() { "<span class=\"empty\">not stated</span>".to_string() } else { esc(&ops.join(", ")) }
                );
            }
            out.push_str("</table>");
        }
    }
    out.push_str("</section>");
}

fn coverage_section(out: &mut String, m: &Model, iv: &InstView) {
    let s = iv.spec();
    let op = iv.op.mnemonic();
    let _ = write!(out, "<section class=\"coverage\" id=\"coverage-{}\"><h3>{op}: coverage, instructions that exercised each field value</h3>", esc(op));
    out.push_str("<p class=\"sub\">software: oracle runs, reference vectors and runs without a GPU; hardware: hardware vectors and runs on a GPU. Wide fields count each bit's two states. A value in red was never exercised.");
    let (sw, hw) = m.mixed_blocks;
    if sw + hw > 0 {
        let _ = write!(
            out,
            " <span data-mixed-blocks=\"{}\">{sw} software and {hw} hardware coverage block(s) count the forms of several instructions together, or name no form (files without per-form coverage): their counts are in no instruction's table.</span>",
            sw + hw
        );
    }
    out.push_str("</p>");
    out.push_str(
        "<table class=\"data\"><tr><th>field</th><th>bits</th><th>forms</th><th>software</th><th>hardware</th><th>values (software / hardware)</th></tr>",
    );
    // form keys shown without the instruction's prefix (HFMA2_MMA_R_R_R_R: R_R_R_R)
    let prefix = format!("{}_", op.replace('.', "_"));
    for (fi, f) in s.fields.iter().enumerate() {
        let forms: Vec<&str> = s.forms.iter().filter(|fs| fs.fields.contains(&fi)).map(|fs| fs.key.as_str()).collect();
        if forms.is_empty() {
            continue;
        }
        let keys: Vec<(String, String)> = if f.width <= 8 {
            (0..=f.max())
                .map(|v| (v.to_string(), f.value_name(v).map(|n| if n.is_empty() { "default".to_string() } else { n.to_string() }).unwrap_or_default()))
                .collect()
        } else {
            (0..f.width).flat_map(|i| [(format!("bit{i}=0"), String::new()), (format!("bit{i}=1"), String::new())]).collect()
        };
        let counts = iv.coverage.get(&f.name);
        let get = |k: &str| counts.and_then(|c| c.get(k)).copied().unwrap_or((0, 0));
        let sw_seen = keys.iter().filter(|(k, _)| get(k).0 > 0).count();
        let hw_seen = keys.iter().filter(|(k, _)| get(k).1 > 0).count();
        let mut vals = String::new();
        for (k, name) in &keys {
            let (a, b) = get(k);
            let label = if name.is_empty() { k.clone() } else { format!("{k} {name}") };
            let _ = write!(
                vals,
                "<span class=\"val{}\" data-field=\"{}\" data-value=\"{}\" data-sw=\"{a}\" data-hw=\"{b}\">{}: {a} / {b}</span>",
                if a == 0 && b == 0 { " zero" } else { "" },
                esc(&f.name),
                esc(k),
                esc(&label)
            );
        }
        let vals = if keys.len() <= 8 {
            format!("<div class=\"vals\">{vals}</div>")
        } else {
            format!("<details><summary>{} values</summary><div class=\"vals\">{vals}</div></details>", keys.len())
        };
        let segs = f.segments.iter().map(|&(lo, hi)| bits_range(lo as usize, hi as usize)).collect::<Vec<_>>().join(",");
        let _ = write!(
            out,
            "<tr data-field=\"{}\"><td><b>{}</b></td><td class=\"mono\">{}</td><td>{}</td><td class=\"num\">{sw_seen}/{}</td><td class=\"num\">{hw_seen}/{}</td><td>{vals}</td></tr>",
            esc(&f.name),
            esc(&f.name),
            esc(&segs),
            esc(&forms.iter().map(|k| k.strip_prefix(&prefix).unwrap_or(k)).collect::<Vec<_>>().join(" ")),
            keys.len(),
            keys.len()
        );
    }
    out.push_str("</table></section>");
}

/// What ran a run's instructions, as every finding of it says: a fixture or a simulation
/// is named as such on each finding, never shown as a hardware result.
fn run_label(h: &Hardware) -> String {
    if h.fixture {
        "<br><span class=\"tag not-hw\" data-not-hardware=\"fixture\">test fixture: no hardware was used</span>".to_string()
    } else if h.simulated {
        format!("<br><span class=\"tag not-hw\" data-not-hardware=\"simulated\">simulated, not hardware: {}</span>", esc(text(&h.reason)))
    } else if h.used {
        format!(" on {}", esc(text(&h.gpu)))
    } else {
        " (no GPU)".to_string()
    }
}

/// A finding's expected or got value, or in words why it has none.
fn value_or_why(v: &Option<String>, kind: crate::schema::FindingKind) -> String {
    match v.as_deref().filter(|x| !x.is_empty()) {
        Some(x) => format!("<code>{}</code>", esc(x)),
        None if kind == crate::schema::FindingKind::Fault => "<span class=\"empty\">none: the word faulted</span>".to_string(),
        None => "<span class=\"empty\">not recorded in the run's summary</span>".to_string(),
    }
}

/// Whom a word belongs to, as an attribute value: the form key, `MNEMONIC:no-form`, or
/// `none` (no instruction of the family, or no word at all).
fn owner_attr(o: Option<&Owner>) -> String {
    match o {
        Some(Owner::Form(op, f)) => op.form_key(*f).to_string(),
        Some(Owner::NoForm(op, _)) => format!("{op}:no-form"),
        _ => "none".to_string(),
    }
}

/// What ran a run's instructions, as one word: `fixture`, `simulated`, `hardware` or `none`.
fn ran_on(h: &Hardware) -> &'static str {
    match (h.fixture, h.simulated, h.used) {
        (true, _, _) => "fixture",
        (_, true, _) => "simulated",
        (_, _, true) => "hardware",
        _ => "none",
    }
}

/// Runs that are not hardware: fixtures and simulations.
fn not_hardware(h: &Hardware) -> bool {
    h.fixture || h.simulated
}

/// An optional text of a file, empty when absent.
fn text(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("")
}

fn findings_section(out: &mut String, m: &Model) {
    out.push_str("<section id=\"findings\"><h3>Mismatches and faults of the given runs</h3>");
    if m.touches.is_empty() {
        out.push_str("<p class=\"empty\">The given runs report no mismatch and no fault.</p>");
    } else {
        out.push_str("<table class=\"data findings\"><tr><th>kind</th><th>form and run</th><th>minimized encoding and text</th><th>inputs</th><th>expected</th><th>got</th><th>touches</th><th>detail</th></tr>");
        for t in &m.touches {
            let (r, f) = (&m.runs[t.run], &t.finding);
            let form = match &t.owner {
                Some(o) => o.describe(),
                None => format!("no word: neither the minimized encoding nor the encoding {:?} is 0x and 32 hex digits", f.encoding),
            };
            let touched = match (&t.owner, r.hardware.used) {
                (_, false) => "(software run)".to_string(),
                (Some(Owner::Form(op, _)), true) => t.fields.iter().map(|&i| op.spec().fields[i].name.clone()).collect::<Vec<_>>().join(", "),
                (_, true) => "(no form: no field to name)".to_string(),
            };
            let inputs = match &f.inputs {
                None => "<span class=\"empty\">none</span>".to_string(),
                Some(i) => i.pairs().iter().map(|(k, v)| format!("<div class=\"in\">{} <code>{}</code></div>", esc(k), esc(v))).collect::<String>(),
            };
            let minimized = text(&f.minimized);
            let (enc, shown) = if minimized.is_empty() { (f.encoding.as_str(), f.text.as_str()) } else { (minimized, text(&f.minimized_text)) };
            let kind = f.kind.name();
            let _ = write!(
                out,
                "<tr data-kind=\"{}\" data-encoding=\"{}\" data-minimized=\"{}\" data-ran-on=\"{}\" data-owner=\"{}\"><td><span class=\"tag {kind}\">{}</span></td><td><b>{}</b><br><span class=\"sub\">{}{}</span></td><td><code>{}</code><br><code>{}</code>{}</td><td>{inputs}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                kind,
                esc(&f.encoding),
                esc(minimized),
                ran_on(&r.hardware),
                esc(&owner_attr(t.owner.as_ref())),
                kind,
                esc(&form),
                esc(&r.path),
                run_label(&r.hardware),
                esc(enc),
                esc(shown),
                if minimized.is_empty() || minimized == f.encoding { String::new() } else { format!("<br><span class=\"sub\">from <code>{}</code> <code>{}</code></span>", esc(&f.encoding), esc(&f.text)) },
                value_or_why(&f.expected, f.kind),
                value_or_why(&f.got, f.kind),
                esc(&touched),
                esc(&f.detail)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

fn sources_section(out: &mut String, m: &Model) {
    out.push_str("<section id=\"runs\"><h3>Runs</h3>");
    if m.runs.is_empty() {
        out.push_str("<p class=\"empty\">No run report was given.</p>");
    } else {
        out.push_str("<table class=\"data\"><tr><th>run</th><th>tool</th><th>seed / shard</th><th>time</th><th>hardware</th><th>instructions</th><th>inputs</th><th>compared</th><th>mismatches</th><th>faults</th><th>undefined</th></tr>");
        for r in &m.runs {
            let hw = if r.hardware.fixture {
                format!("test fixture (it names {}): no hardware was used", text(&r.hardware.gpu))
            } else if r.hardware.simulated {
                format!("simulated, not hardware: {}", text(&r.hardware.reason))
            } else if r.hardware.used {
                format!("{} (driver {}) {}", text(&r.hardware.gpu), text(&r.hardware.driver), r.hardware.devices)
            } else {
                format!("not used: {}", text(&r.hardware.reason))
            };
            let t = &r.totals;
            let _ = write!(
                out,
                "<tr data-run=\"{}\" data-hardware=\"{}\"><td><code>{}</code></td><td>{}</td><td>{} / {}</td><td>{} – {}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&r.path),
                r.hardware.used,
                esc(&r.path),
                esc(&r.tool_version),
                r.seed,
                esc(&r.shard),
                esc(&r.started),
                esc(&r.finished),
                esc(&hw),
                t.instructions,
                t.inputs,
                t.compared,
                t.mismatches,
                t.faults,
                t.undefined
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section><section id=\"oracle\"><h3>nvdisasm oracle runs</h3>");
    if m.oracles.is_empty() {
        out.push_str("<p class=\"empty\">No oracle result was given: no bit is confirmed by nvdisasm.</p>");
    } else {
        out.push_str("<table class=\"data\"><tr><th>file</th><th>seed</th><th>words</th><th>same text</th><th>rejected by both</th><th>mismatches</th></tr>");
        for (oi, o) in m.oracles.iter().enumerate() {
            let mm = if o.report.mismatches.is_empty() {
                "0".to_string()
            } else {
                m.oracle_mismatches
                    .iter()
                    .filter(|v| v.oracle == oi)
                    .filter_map(|v| o.report.mismatches.get(v.index).map(|x| (v, x)))
                    .map(|(v, x)| {
                        let what = match &v.owner {
                            Owner::Form(..) => format!("withdraws {}", v.owner.describe()),
                            _ => format!("{}: withdraws nothing", v.owner.describe()),
                        };
                        format!(
                            "<div data-oracle-mismatch=\"{}\" data-owner=\"{}\"><code>{}</code> ours <code>{}</code> nvdisasm <code>{}</code> <span class=\"sub\">({})</span></div>",
                            esc(&x.word),
                            esc(&owner_attr(Some(&v.owner))),
                            esc(&x.word),
                            esc(&x.ours),
                            esc(&x.nvdisasm),
                            esc(&what)
                        )
                    })
                    .collect()
            };
            let _ = write!(
                out,
                "<tr data-oracle=\"{}\"><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{mm}</td></tr>",
                esc(&o.path),
                esc(&o.path),
                o.seed,
                o.report.words,
                o.report.agreed_text,
                o.report.agreed_illegal
            );
        }
        out.push_str("</table>");
    }
    let hw = m.vectors.iter().filter(|v| v.is_hardware()).count();
    let no_form = m.vectors.iter().filter(|v| Owner::of(v.word).form_key().is_none()).count();
    let no_form = if no_form == 0 { String::new() } else { format!("; {no_form} of them are words of no form of any instruction, counted in no coverage") };
    let _ = write!(
        out,
        "</section><section id=\"vectors\"><h3>Vectors</h3><p data-vectors=\"{}\" data-hardware-vectors=\"{hw}\">{} vectors: {} from the reference, {hw} measured on hardware{}{no_form}</p></section>",
        m.vectors.len(),
        m.vectors.len(),
        m.vectors.len() - hw,
        {
            let origins: BTreeSet<&str> = m.vectors.iter().filter(|v| v.is_hardware()).map(|v| v.origin.as_str()).collect();
            if origins.is_empty() { String::new() } else { format!(" ({})", esc(&origins.into_iter().collect::<Vec<_>>().join(", "))) }
        }
    );
}

/// The instructions the page covers: each has its section; the seed page draws HMUL2's.
fn family() -> String {
    crate::isa::Op::ALL.iter().map(|o| o.mnemonic()).collect::<Vec<_>>().join(", ")
}

/// One row per instruction: what its bits rest on, and what the inputs say about it.
fn instructions_table(out: &mut String, m: &Model) {
    out.push_str("<section id=\"instructions\"><h3>Instructions</h3><table class=\"data\"><tr><th>instruction</th><th>forms</th><th>bits rest on</th><th>bits by evidence</th><th>oracle mismatches</th><th>run findings</th></tr>");
    for iv in &m.instructions {
        let op = iv.op;
        let base = if iv.seed.is_some() {
            "the seed page <code>harness/spec/sm90/hmul2-seed-page.txt</code> (untrusted) and the spec".to_string()
        } else {
            format!("its spec alone (no seed page draws it): {} nvdisasm evidence entries", iv.spec().errata.len())
        };
        let by_class = Evidence::CLASSES
            .iter()
            .rev()
            .filter(|e| iv.count(**e) > 0)
            .map(|e| format!("<span data-count=\"{n}\">{} {n}</span>", iv.count(*e), n = e.name()))
            .collect::<Vec<_>>()
            .join(" · ");
        let of_forms: Vec<&str> = iv.withdrawn.iter().map(String::as_str).collect();
        let no_form = m.oracle_mismatches.iter().filter(|v| matches!(v.owner, Owner::NoForm(o, _) if o == op)).count();
        let oracle = if m.oracles.is_empty() {
            "<span class=\"empty\">no oracle result was given: nothing is confirmed by nvdisasm</span>".to_string()
        } else {
            let mut parts = Vec::new();
            if !of_forms.is_empty() {
                parts.push(format!("withdraw {}", esc(&of_forms.join(", "))));
            }
            if no_form > 0 {
                parts.push(format!("{no_form} on words of no form of it (nothing withdrawn)"));
            }
            if parts.is_empty() {
                "none".to_string()
            } else {
                parts.join("; ")
            }
        };
        let findings = m.touches.iter().filter(|t| t.owner.as_ref().and_then(|o| o.op()) == Some(op)).count();
        let findings = if m.runs.is_empty() { "<span class=\"empty\">no run report was given</span>".to_string() } else { findings.to_string() };
        let _ = write!(
            out,
            "<tr data-op=\"{m}\"><td><a href=\"#op-{m}\"><b>{m}</b></a></td><td class=\"num\">{}</td><td>{base}</td><td>{by_class}</td><td>{oracle}</td><td>{findings}</td></tr>",
            iv.bits.len(),
            m = esc(op.mnemonic())
        );
    }
    out.push_str("</table></section>");
}

/// One instruction: its forms' bits, its errata or evidence, its coverage.
fn instruction_section(out: &mut String, m: &Model, iv: &InstView) {
    let op = esc(iv.op.mnemonic());
    let s = iv.spec();
    let _ = write!(out, "<section class=\"instruction\" id=\"op-{op}\" data-op=\"{op}\"><h2>{op}</h2>");
    let rests = if iv.seed.is_some() {
        "Each form drawn as the seed page draws it, the seed page's own claim in the row beneath (untrusted: nvdisasm wins).".to_string()
    } else {
        format!(
            "No seed page draws {op}: its bits rest on its spec, derived from nvdisasm alone ({} evidence entries, listed below), until an oracle run or hardware given to this report proves them.",
            s.errata.len()
        )
    };
    let _ = write!(out, "<p class=\"sub\">{} form(s). {rests}</p>", s.forms.len());
    let no_form: Vec<String> = m
        .oracle_mismatches
        .iter()
        .filter(|v| matches!(v.owner, Owner::NoForm(o, _) if o == iv.op))
        .filter_map(|v| {
            m.oracles
                .get(v.oracle)
                .and_then(|o| o.report.mismatches.get(v.index))
                .map(|x| format!("<code>{}</code> ({})", esc(&x.word), esc(&v.owner.describe())))
        })
        .collect();
    if !no_form.is_empty() {
        let _ = write!(
            out,
            "<p class=\"banner unattributed\" data-banner=\"no-form-mismatch\">{} oracle mismatch(es) on words with {op}'s opcode and a form selector none of its forms has: {}. They name no form, so they withdraw no bit's confirmation; what nvdisasm makes of that selector is not in the spec.</p>",
            no_form.len(),
            no_form.join("; ")
        );
    }
    for fi in 0..s.forms.len() {
        form_section(out, m, iv, fi);
    }
    errata_section(out, iv);
    coverage_section(out, m, iv);
    out.push_str("</section>");
}

/// The whole page.
pub fn render(m: &Model) -> String {
    let arch = crate::isa::Op::ALL[0].spec().arch.as_str();
    let mut out = String::with_capacity(1_200_000);
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} on {}: what is proven, per bit</title><style>{CSS}</style></head><body>",
        esc(&family()),
        esc(arch)
    );
    let hw_runs = m.runs.iter().filter(|r| r.hardware.used && !not_hardware(&r.hardware)).count();
    let errata: usize = m.instructions.iter().filter(|i| i.seed.is_some()).map(|i| i.spec().errata.len()).sum();
    let _ = write!(
        out,
        "<header><h1>{} on {}: what is proven, per bit</h1><p class=\"sub\">hmul2-harness {} · {} oracle file(s), {} run(s) ({} on hardware), {} vector(s), {} errat{} of the seed page <code>harness/spec/sm90/hmul2-seed-page.txt</code> (HMUL2's: untrusted, nvdisasm wins); the other instructions' bits rest on their specs' nvdisasm evidence</p></header>",
        esc(&family()),
        esc(arch),
        env!("CARGO_PKG_VERSION"),
        m.oracles.len(),
        m.runs.len(),
        hw_runs,
        m.vectors.len(),
        errata,
        if errata == 1 { "um" } else { "a" },
    );
    let fake = m.runs.iter().filter(|r| not_hardware(&r.hardware)).count();
    if fake > 0 {
        let _ = write!(
            out,
            "<p class=\"banner not-hw\" data-banner=\"not-hardware\">{fake} of the {} run(s) on this page {}: their findings and their hardware colours below are not results of a GPU.</p>",
            m.runs.len(),
            if fake == 1 { "is a test fixture or a simulation" } else { "are test fixtures or simulations" }
        );
    }
    let unattributed: Vec<String> = m
        .unattributed()
        .filter_map(|v| {
            m.oracles
                .get(v.oracle)
                .and_then(|o| o.report.mismatches.get(v.index))
                .map(|x| format!("<code>{}</code> ({})", esc(&x.word), esc(&v.owner.describe())))
        })
        .collect();
    if !unattributed.is_empty() {
        let _ = write!(
            out,
            "<p class=\"banner unattributed\" data-banner=\"unattributed-mismatch\">This report has {} unattributed oracle mismatch(es): nvdisasm and this harness disagree on words whose opcode is no instruction of the family: {}. Being no form's, they withdraw no bit's confirmation; what they are is not in any spec.</p>",
            unattributed.len(),
            unattributed.join("; ")
        );
    }
    legend(&mut out);
    findings_section(&mut out, m);
    instructions_table(&mut out, m);
    out.push_str("<section id=\"forms\">");
    for iv in &m.instructions {
        instruction_section(&mut out, m, iv);
    }
    out.push_str("</section>");
    sources_section(&mut out, m);
    semantics_section(&mut out, m);
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc("<script>alert('x')</script>&\""), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
    }

    #[test]
    fn every_row_draws_64_bits_and_every_cell_names_its_evidence() {
        let m = super::super::build(vec![], vec![], vec![], None).unwrap();
        let p = render(&m);
        let mut rows = 0;
        for class in ["spec", "seed"] {
            for row in p.split(&format!("<tr class=\"{class}\">")).skip(1) {
                let row = &row[..row.find("</tr>").unwrap()];
                let mut bits = 0;
                for td in row.split("<td").skip(1) {
                    let tag = &td[..td.find('>').unwrap()];
                    bits += tag.split("colspan=\"").nth(1).map(|x| x[..x.find('"').unwrap()].parse::<usize>().unwrap()).unwrap_or(1);
                    let attr = if class == "spec" { "data-evidence=\"" } else { "data-compare=\"" };
                    assert!(tag.contains(attr), "{tag}");
                }
                assert_eq!(bits, 64, "{class} row: {row}");
                rows += 1;
            }
        }
        // every form of every instruction: a spec row per half; HMUL2's five a seed row too
        let forms: usize = crate::isa::Op::ALL.iter().map(|o| o.spec().forms.len()).sum();
        assert_eq!(rows, forms * 2 + 5 * 2, "spec rows of every form, seed rows of HMUL2's");
    }

    #[test]
    fn page_has_every_instructions_forms_and_no_external_asset() {
        let m = super::super::build(vec![], vec![], vec![], None).unwrap();
        let p = render(&m);
        for op in crate::isa::Op::ALL {
            let sec = format!("<section class=\"instruction\" id=\"op-{o}\" data-op=\"{o}\">", o = op.mnemonic());
            assert_eq!(p.matches(&sec).count(), 1, "{op}'s section");
            let rest = &p[p.find(&sec).unwrap() + sec.len()..];
            let body = &rest[..rest.find("<section class=\"instruction\"").unwrap_or(rest.len())];
            for f in &op.spec().forms {
                let k = &f.key;
                assert_eq!(p.matches(&format!("<article class=\"form\" id=\"form-{k}\" data-form=\"{k}\">")).count(), 1, "{k}");
                assert!(body.contains(&format!("data-form=\"{k}\"")), "{k} in {op}'s section");
            }
            assert!(p.contains(&format!("<section class=\"coverage\" id=\"coverage-{}\">", op.mnemonic())), "{op}'s coverage");
            assert!(p.contains(&format!("<tr data-op=\"{}\">", op.mnemonic())), "{op}'s row of the instructions table");
        }
        // HMUL2's entries are errata of the seed page; the others' are their specs' evidence
        assert!(p.contains("<tr data-erratum=\"const-offset-and-bank\">"));
        assert!(p.contains("<tr data-spec-evidence=\"opcode\">") && !p.contains("<tr data-erratum=\"opcode\">"));
        assert!(p.contains("data-evidence=\"spec-only\"") && p.contains("data-legend=\"spec-only\""));
        assert!(!p.contains("http://") && !p.contains("https://") && !p.contains("<script") && !p.contains("<link"));
    }

    #[test]
    fn findings_show_their_kind_and_every_input_c_included() {
        use crate::schema::{Finding, FindingInputs, FindingKind, Summary};
        let inputs =
            FindingInputs { a: "0x00000001".into(), b: "0x00000002".into(), d: "0x00000004".into(), pred: "0x00".into(), c: Some("0x00000003".into()) };
        let f = Finding { kind: FindingKind::Mismatch, encoding: "0x0".into(), inputs: Some(inputs), ..Default::default() };
        let fault = Finding::fault("0x1".into(), "t".into(), "d".into());
        let run = super::super::inputs::Sourced { path: "r".into(), file: Summary { mismatches: vec![f], faults: vec![fault], ..Default::default() } };
        let p = render(&super::super::build(vec![], vec![run], vec![], None).unwrap());
        assert!(p.contains("<div class=\"in\">c <code>0x00000003</code></div><div class=\"in\">d <code>0x00000004</code></div>"), "c before d");
        assert_eq!((p.matches("data-kind=\"mismatch\"").count(), p.matches("data-kind=\"fault\"").count()), (1, 1));
        // no expected or got value: said why, not left blank
        assert_eq!(p.matches("none: the word faulted").count(), 2, "the fault's expected and got");
        assert_eq!(p.matches("not recorded in the run's summary").count(), 2, "the mismatch's");
    }

    /// A hardware run's mismatch on an HFMA2 word: its form and touched fields are named, no `?`.
    #[test]
    fn a_finding_of_another_instruction_is_named_by_its_form() {
        use crate::isa::{encode, Inst, Op, Operand2};
        use crate::schema::{Finding, FindingKind, Hardware, Summary};
        let mut i = Inst::of(Op::Hfma2, 0, 1, Operand2::Reg(2));
        i.b_mods.neg = true;
        let w = crate::isa::format_hex(encode(&i).unwrap());
        let f = Finding { kind: FindingKind::Mismatch, encoding: w.clone(), ..Default::default() };
        let bad = Finding { kind: FindingKind::Fault, encoding: "0xzz".into(), ..Default::default() };
        let hw = Hardware { used: true, gpu: Some("NVIDIA H200".into()), ..Default::default() };
        let run =
            super::super::inputs::Sourced { path: "r".into(), file: Summary { hardware: hw, mismatches: vec![f], faults: vec![bad], ..Default::default() } };
        let m = super::super::build(vec![], vec![run], vec![], None).unwrap();
        let p = render(&m);
        let key = Op::Hfma2.form_key(i.form());
        let row = &p[p.find("data-kind=\"mismatch\"").unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(row.contains(&format!("data-owner=\"{key}\"")) && row.contains(&format!("<b>{key}</b>")), "{row}");
        assert!(row.contains("b_neg"), "the touched field, by HFMA2's spec: {row}");
        // the bit the finding touches is coloured in HFMA2's section alone
        let cells = p.matches("data-field=\"b_neg\" data-evidence=\"hardware-mismatch\"").count();
        assert_eq!(cells, 1, "b_neg of {key} only");
        let hfma2 = &p[p.find("id=\"op-HFMA2\"").unwrap()..p.find("id=\"op-HFMA2.MMA\"").unwrap()];
        assert!(hfma2.contains("data-field=\"b_neg\" data-evidence=\"hardware-mismatch\""));
        // a finding with no word says why in words; nowhere a `?` for a form
        assert!(p.contains("data-owner=\"none\"") && p.contains("no word: neither the minimized encoding nor the encoding"));
        assert!(!p.contains("<b>?</b>") && !p.contains(">?<"), "no `?` on the page");
    }

    /// An oracle mismatch of no instruction marks the page; one of no form of HFMA2, its section.
    #[test]
    fn mismatches_of_no_form_are_shown_for_what_they_are() {
        use crate::isa::Op;
        use crate::schema::{OracleFile, OracleMismatch, OracleReport};
        let words = crate::gen::one_field_at_a_time(Op::Hfma2);
        let sel = &Op::Hfma2.layout().operand_form;
        let no_form = sel.set(words[0], sel.max()).unwrap();
        let opcode = &Op::Hfma2.layout().opcode;
        let nobody = (0..=opcode.max()).map(|v| opcode.set(words[0], v).unwrap()).find(|&w| crate::isa::decode::op_of(w).is_err()).unwrap();
        let mm = |w: u128| OracleMismatch { word: crate::isa::format_hex(w), ours: "illegal".into(), nvdisasm: "X".into() };
        let report = OracleReport { words: words.len(), mismatches: vec![mm(no_form), mm(nobody)], ..Default::default() };
        let o = super::super::inputs::Sourced { path: "o.json".into(), file: OracleFile { seed: 1, report, coverage: Some(crate::gen::Coverage::of(&words)) } };
        let p = render(&super::super::build(vec![o], vec![], vec![], None).unwrap());
        assert_eq!(p.matches("data-banner=\"unattributed-mismatch\"").count(), 1);
        let hfma2 = &p[p.find("id=\"op-HFMA2\"").unwrap()..p.find("id=\"op-HFMA2.MMA\"").unwrap()];
        assert!(hfma2.contains("data-banner=\"no-form-mismatch\""), "HFMA2's section names its no-form mismatch");
        assert!(hfma2.contains("data-evidence=\"confirmed\""), "and keeps its confirmed bits");
        assert!(p.contains("data-owner=\"HFMA2:no-form\"") && p.contains("data-owner=\"none\""));
        assert!(!p.contains("data-withdrawn="), "no form withdrawn");
    }
}
