//! The report in a real browser: fixtures (a hardware run with a mismatch and a fault, an
//! oracle result, hardware and reference vectors, a semantics file with injected markup) →
//! `hmul2-harness report` → headless Chromium → checks on the DOM it rendered, and a screenshot.
//!
//! Fails (never skips) without Chromium: run `bash ci/install-browser.sh`, or point
//! HMUL2_CHROMIUM at one. HMUL2_UPDATE_SCREENSHOT=1 writes docs/report.png; HMUL2_REPORT_ORACLE
//! names a real `oracle --report` file: the screenshot is then of a second report, built from it
//! in place of the fixture's oracle result (the DOM checks stay on the fixture report).

use hmul2_harness::gen::{self, Coverage, GenOptions};
use hmul2_harness::isa::{encode, format_hex, Flush, Form, Inst, Operand2, Swizzle};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INJECT: &str = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\"><b id=\"injected\">x</b>";

fn chromium() -> PathBuf {
    let p = std::env::var_os("HMUL2_CHROMIUM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(p.exists(), "chromium not found at {}: run `bash ci/install-browser.sh` (or set HMUL2_CHROMIUM)", p.display());
    p
}

fn fresh_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hmul2-report-browser-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn word(i: &Inst) -> u128 {
    encode(i).expect("fixture instruction encodes")
}

fn vector_line(w: u128, origin: &str) -> String {
    json!({"encoding": format_hex(w), "a": "0x3c003c00", "b": "0xc0004000", "d": "0x00000000", "pred": "0x00", "expect": "0xc0004000", "origin": origin})
        .to_string()
}

/// What the fixtures hold, for the checks: the minimized mismatch and the fault's encoding,
/// and the HFMA2 form an oracle mismatch is a word of.
struct Fixtures {
    mismatch: String,
    fault: String,
    hfma2_withdrawn: String,
}

fn fixtures(dir: &Path) -> Fixtures {
    // a hardware run over R,R,R with one mismatch (negated operand 2) and one fault (UR form)
    let rrr: Vec<u128> = gen::generate(&GenOptions { form: Some(Form::Rrr), ..GenOptions::legal(7) }, 0, 300);
    let mut neg = Inst::new(0, 1, Operand2::Reg(2));
    neg.b_mods.neg = true;
    let mut big = neg;
    big.dst = 17;
    big.flush = Flush::None;
    let mut bad_swz = Inst::new(4, 5, Operand2::Ur(6));
    bad_swz.a_mods.swizzle = Swizzle::Invalid1;
    let mismatch = format_hex(word(&neg));
    let fault = format_hex(word(&bad_swz));
    let run = dir.join("run-h200");
    std::fs::create_dir_all(&run).unwrap();
    let totals = json!({"instructions": 301, "inputs": 1204, "compared": 1200, "mismatches": 1, "faults": 1, "undefined": 3});
    let summary = json!({
        "tool_version": format!("0.1.0 {INJECT}"), "seed": 7, "shard": "0/1", "started": "2026-12-02T11:00:00Z", "finished": "2026-12-02T11:02:00Z",
        // a fixture: it names an H200 to exercise the hardware colours, and says it is a fixture
        "hardware": {"used": true, "fixture": true, "reason": "", "gpu": "NVIDIA H200", "driver": "580.95.05", "devices": 1},
        "totals": totals,
        "by_form": {"HMUL2_R_R_R": {"instructions": 300}, "HMUL2_R_R_UR": {"instructions": 1}},
        "mismatches": [{"kind": "mismatch", "encoding": format_hex(word(&big)), "text": "HMUL2 R17, R1, -R2", "minimized": mismatch, "minimized_text": "HMUL2 R0, R1, -R2",
            "inputs": {"a": "0x3c003c00", "b": "0x3c00bc00", "d": "0x00000000", "pred": "0x00"}, "expected": "0xbc003c00", "got": "0x3c00bc00", "detail": "lanes swapped"}],
        "faults": [{"kind": "fault", "encoding": fault, "text": "HMUL2 R4, R5.INVALID1, UR6", "minimized": fault, "minimized_text": "HMUL2 R4, R5.INVALID1, UR6",
            "inputs": null, "expected": "", "got": "", "detail": "CUDA_ERROR_ILLEGAL_INSTRUCTION"}],
        "software_checks": {"reference_selftest": "ok"},
        "coverage": Coverage::of(&rrr),
    });
    std::fs::write(run.join("summary.json"), serde_json::to_string_pretty(&summary).unwrap()).unwrap();

    // an oracle result: every value of every field once, in every form but cx[UR][I], whose
    // fields that no erratum speaks about stay claimed by the seed page only
    let words: Vec<u128> = gen::one_field_at_a_time(hmul2_harness::isa::Op::Hmul2)
        .into_iter()
        .filter(|&w| hmul2_harness::isa::decode::form_of(w).map(|x| x.1) != Ok(Form::ConstUr))
        .collect();
    // and one mismatch, on an HFMA2 word: it withdraws that HFMA2 form alone, never HMUL2's
    let fma = Inst::of(hmul2_harness::isa::Op::Hfma2, 0, 1, Operand2::Reg(2));
    let hfma2_withdrawn = hmul2_harness::isa::Op::Hfma2.form_key(fma.form()).to_string();
    let oracle = dir.join("oracle.json");
    let v = json!({"seed": 1, "report": {"words": words.len(), "agreed_text": words.len(), "agreed_illegal": 0,
        "mismatches": [{"word": format_hex(word(&fma)), "ours": "HFMA2 R0, R1, R2, RZ", "nvdisasm": "HFMA2 R0, R1, R2, R0"}], "nvdisasm_calls": 2}, "coverage": Coverage::of(&words)});
    std::fs::write(&oracle, v.to_string()).unwrap();

    // vectors: two hardware ones of the immediate form (every immediate bit at 0 and at 1), one reference
    let vectors = dir.join("vectors");
    std::fs::create_dir_all(vectors.join("hardware")).unwrap();
    std::fs::create_dir_all(vectors.join("reference")).unwrap();
    let imm0 = word(&Inst::new(0, 1, Operand2::Imm { first: 0x0000, second: 0x0000 }));
    let imm1 = word(&Inst::new(0, 1, Operand2::Imm { first: 0xffff, second: 0xffff }));
    let hw_line = vector_line(imm1, "hardware:NVIDIA H200:580.95.05:2026-12-02");
    std::fs::write(vectors.join("hardware/imm.jsonl"), format!("{}\n{hw_line}\n", vector_line(imm0, "hardware:NVIDIA H200:580.95.05:2026-12-02"))).unwrap();
    std::fs::write(vectors.join("reference/rrr.jsonl"), format!("{}\n", vector_line(word(&neg), "reference"))).unwrap();

    let semantics = dir.join("semantics.json");
    let sem = json!([
        {"id": "imm-order", "topic": "immediate lanes", "instructions": ["HMUL2", "HFMA2"], "assumption": "the first printed immediate feeds the high lane", "alternatives": ["it feeds the low lane"],
         "settled": {"SM90": {"option": "the first printed immediate feeds the high lane", "gpu": "NVIDIA H200", "date": "2026-12-02", "evidence": hw_line, "told": 1}}},
        {"id": "fmz-zero", "topic": format!("FMZ {INJECT}"), "instructions": ["HMUL2"], "assumption": "FMZ makes 0 x Inf = +0", "alternatives": ["NaN"],
         "outside": [{"source": "a compiler", "says": "it relies on 0 x Inf = NaN", "supports": "NaN"}]}
    ]);
    std::fs::write(&semantics, sem.to_string()).unwrap();
    Fixtures { mismatch, fault, hfma2_withdrawn }
}

/// Run a command with a deadline; its stdout, or a failure naming what happened.
fn run_with_deadline(mut cmd: Command, secs: u64, what: &str) -> String {
    let out_path = std::env::temp_dir().join(format!("hmul2-report-browser-{}-{what}.out", std::process::id()));
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = cmd.stdout(out).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            assert!(status.success(), "{what} failed ({status}): {}", err.lines().rev().take(8).collect::<Vec<_>>().join(" | "));
            return std::fs::read_to_string(&out_path).unwrap();
        }
        if t.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("{what} did not finish within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `hmul2-harness report` over the fixtures, run inside `dir` so the page shows short paths.
fn report_cmd(dir: &Path, oracle: &str, out: &str) -> Command {
    let mut rep = Command::new(env!("CARGO_BIN_EXE_hmul2-harness"));
    rep.current_dir(dir);
    rep.args(["report", "--run", "run-h200", "--oracle", oracle, "--vectors", "vectors", "--semantics", "semantics.json", "--out", out]);
    rep
}

fn chromium_cmd(profile: &Path) -> Command {
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Every start tag `<td ...>` (or other `name`) of the DOM, as its attribute text.
fn tags<'a>(dom: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    dom.match_indices(&open).map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap_or(0)]).collect()
}

fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert!(b.len() > 10_000 && b.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is not a real PNG ({} bytes)", path.display(), b.len());
    let be = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    (be(16), be(20))
}

#[test]
fn report_renders_in_headless_chromium_with_every_evidence_class() {
    let browser = chromium();
    let dir = fresh_dir("main");
    let fx = fixtures(&dir);
    let html = dir.join("report.html");
    run_with_deadline(report_cmd(&dir, "oracle.json", "report.html"), 120, "report");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://") && !page.contains("<link") && !page.contains("<script"),
        "the page must be self-contained and script-free"
    );

    let url = format!("file://{}", html.display());
    let mut c = chromium_cmd(&dir.join("profile-dom"));
    c.arg("--dump-dom").arg(&url);
    let dom = run_with_deadline(c, 120, "chromium --dump-dom");
    assert!(dom.contains("</html>") && dom.contains("what is proven, per bit"), "chromium rendered no report: {}", &dom[..dom.len().min(300)]);

    // every form of every instruction, each in its instruction's section
    let articles = tags(&dom, "article");
    let sections = tags(&dom, "section");
    for op in hmul2_harness::isa::Op::ALL {
        assert_eq!(sections.iter().filter(|s| s.contains(&format!("data-op=\"{op}\""))).count(), 1, "{op}'s section");
        for k in op.spec().forms.iter().map(|f| f.key.as_str()) {
            assert_eq!(articles.iter().filter(|a| a.contains(&format!("data-form=\"{k}\""))).count(), 1, "form {k}");
        }
    }
    // a field cell of every evidence class, in the form the fixtures put it in
    let cells = tags(&dom, "td");
    let field_cells =
        |ev: &str| -> Vec<&str> { cells.iter().copied().filter(|t| t.contains("data-field=") && t.contains(&format!("data-evidence=\"{ev}\""))).collect() };
    for ev in ["seed-only", "confirmed", "contradicted", "hardware", "hardware-mismatch"] {
        assert!(!field_cells(ev).is_empty(), "no field cell with evidence {ev}");
    }
    // every drawn row of every form covers 64 bits
    let spec_rows = dom.matches("<tr class=\"spec\">").count();
    let forms: usize = hmul2_harness::isa::Op::ALL.iter().map(|o| o.spec().forms.len()).sum();
    assert_eq!(spec_rows, 2 * forms);
    // the HFMA2 oracle mismatch withdrew its own form, and HMUL2's stayed confirmed (above)
    assert_eq!(dom.matches("data-withdrawn=").count(), 1);
    assert!(dom.contains(&format!("data-withdrawn=\"{}\"", fx.hfma2_withdrawn)));
    assert!(dom.contains(&format!("data-owner=\"{}\"", fx.hfma2_withdrawn)), "the oracle table names the form");
    // the mismatch: b_neg of R,R,R; the fault: a_swizzle of R,R,UR; hardware: the immediates
    let form_of_cell = |needle: &str| -> Vec<String> {
        // the form article a cell sits in: the last data-form before it
        let mut out = Vec::new();
        for (i, _) in dom.match_indices(needle) {
            let before = &dom[..i];
            if let Some(j) = before.rfind("<article ") {
                let a = &before[j..];
                if let Some(k) = a.find("data-form=\"") {
                    let rest = &a[k + 11..];
                    out.push(rest[..rest.find('"').unwrap()].to_string());
                }
            }
        }
        out
    };
    let hwm = form_of_cell("data-field=\"b_neg\" data-evidence=\"hardware-mismatch\"");
    assert_eq!(hwm, ["HMUL2_R_R_R"], "the mismatch touches b_neg of R,R,R only");
    assert_eq!(form_of_cell("data-field=\"a_swizzle\" data-evidence=\"hardware-mismatch\""), ["HMUL2_R_R_UR"]);
    assert!(form_of_cell("data-field=\"imm_hi\" data-evidence=\"hardware\"").contains(&"HMUL2_R_R_F_F".to_string()));
    assert!(form_of_cell("data-field=\"b_reg\" data-evidence=\"hardware\"").contains(&"HMUL2_R_R_R".to_string()));
    // the seed page's claim beside a contradicted field: r-bar where the spec has wr_bar
    assert!(dom.contains("data-seed-label=\"r-bar\" data-compare=\"contradicted\""));
    assert!(dom.contains("data-field=\"wr_bar\" data-evidence=\"contradicted\""));
    // the legend names every class
    for ev in ["seed-only", "confirmed", "contradicted", "hardware", "hardware-mismatch"] {
        assert!(dom.contains(&format!("data-legend=\"{ev}\"")), "legend {ev}");
    }
    // errata: every erratum of the spec has a row
    let errata = &hmul2_harness::isa::Op::Hmul2.spec().errata;
    assert!(!errata.is_empty(), "the spec records no errata: the page cannot show one");
    for e in errata {
        assert!(dom.contains(&format!("<tr data-erratum=\"{}\"", e.id)), "erratum {}", e.id);
    }
    // a fixture says so: on the page, and on every finding of it
    assert!(dom.contains("data-banner=\"not-hardware\""), "no banner for the fixture run");
    assert_eq!(dom.matches("data-not-hardware=\"fixture\"").count(), 2, "each of the two findings is labelled a fixture's");
    let rows = tags(&dom, "tr");
    let finding_rows: Vec<&&str> = rows.iter().filter(|r| r.contains("data-kind=")).collect();
    assert!(
        !finding_rows.is_empty() && finding_rows.iter().all(|r| r.contains("data-ran-on=\"fixture\"")),
        "a finding of the fixture reads as a hardware result"
    );
    // the run's findings, with minimized encoding, text and inputs
    let m = rows.iter().find(|r| r.contains("data-kind=\"mismatch\"")).expect("the mismatch row");
    assert!(m.contains(&format!("data-minimized=\"{}\"", fx.mismatch)));
    assert!(dom.contains("HMUL2 R0, R1, -R2") && dom.contains("0x3c00bc00"));
    let f = rows.iter().find(|r| r.contains("data-kind=\"fault\"")).expect("the fault row");
    assert!(f.contains(&format!("data-encoding=\"{}\"", fx.fault)));
    // semantics: the confirming vector of the hardware-confirmed assumption
    assert!(dom.contains("<tr data-semantics=\"imm-order\" data-status=\"hardware-confirmed\" data-settled=\"SM90\">"));
    // each instruction's assumptions apart, per architecture: on SM90 HMUL2 has one settled and
    // one not, HFMA2 its one settled; SM90's settlement settles nothing on SM80
    let row = |op: &str| dom.split(&format!("<tr data-instruction=\"{op}\">")).nth(1).and_then(|r| r.split("</tr>").next()).unwrap_or_default().to_string();
    assert!(row("HMUL2").starts_with("<td><b>HMUL2</b></td><td>2</td>"), "HMUL2's row: {}", row("HMUL2"));
    assert!(row("HMUL2").contains("<td data-arch=\"SM90\">fmz-zero</td>") && row("HMUL2").contains("<td data-arch=\"SM80\">all 2</td>"), "{}", row("HMUL2"));
    assert!(
        row("HFMA2").contains("<td data-arch=\"SM90\"><span class=\"empty\">none</span></td>") && row("HFMA2").contains("<td data-arch=\"SM86\">all 1</td>"),
        "{}",
        row("HFMA2")
    );
    assert!(
        dom.contains("<tr data-instruction=\"HADD2\"><td><b>HADD2</b></td><td>0</td><td data-arch=\"SM80\"><span class=\"empty\">none</span></td>"),
        "HADD2's row"
    );
    // every instruction of the isa has a row (HMNMX2 too: nothing is pending any more, and
    // the reference computes it), whatever the entries name
    assert!(dom.contains("<tr data-instruction=\"HMNMX2\">"), "HMNMX2's row");
    assert!(dom.contains("hardware:NVIDIA H200:580.95.05:2026-12-02"));
    // and the outside evidence, with its side: this one is against the assumption
    assert!(dom.contains("<span data-outside=\"against\">a compiler (<b>against</b>): it relies on 0 x Inf = NaN</span>"), "outside evidence");
    // injected markup from the files is text, not elements
    assert!(!dom.contains("<script") && !dom.contains("<b id=\"injected\"") && !dom.contains("<img") && !dom.contains("pwned</title>"));
    assert_eq!(dom.matches("&lt;b id=\"injected\"&gt;x&lt;/b&gt;").count(), 2, "the injected text is shown, escaped, in the semantics and runs tables");
    // coverage: software and hardware counts of a value
    assert!(dom.contains("data-field=\"flush\" data-value=\"2\""));

    assert_eq!(form_of_cell("data-field=\"dst\" data-evidence=\"seed-only\""), ["HMUL2_R_R_UR_I"], "the form the oracle left out");

    // the screenshot: of this report, or of one built with a real oracle result
    let mut shot_url = url.clone();
    if let Some(real) = std::env::var_os("HMUL2_REPORT_ORACLE") {
        std::fs::copy(&real, dir.join("oracle-seed1.json")).unwrap_or_else(|e| panic!("HMUL2_REPORT_ORACLE {}: {e}", PathBuf::from(&real).display()));
        run_with_deadline(report_cmd(&dir, "oracle-seed1.json", "report-real.html"), 120, "report (real oracle)");
        shot_url = format!("file://{}", dir.join("report-real.html").display());
    }
    let shot = if std::env::var_os("HMUL2_UPDATE_SCREENSHOT").is_some_and(|v| v == "1") {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/report.png")
    } else {
        dir.join("report.png")
    };
    if let Some(p) = shot.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    let _ = std::fs::remove_file(&shot);
    let mut c = chromium_cmd(&dir.join("profile-shot"));
    c.arg(format!("--screenshot={}", shot.display())).arg("--window-size=1400,2400").arg(&shot_url);
    run_with_deadline(c, 120, "chromium --screenshot");
    assert_eq!(png_size(&shot), (1400, 2400), "screenshot size");
    eprintln!("report: {} ; screenshot: {} ; chromium: {}", html.display(), shot.display(), browser.display());
}

#[test]
fn report_names_a_malformed_input_and_exits_2() {
    let dir = fresh_dir("bad");
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("summary.json"), "{\"hardware\": [1]}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hmul2-harness")).arg("report").arg("--run").arg(&run).arg("--out").arg(dir.join("r.html")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("summary.json") && err.contains("hardware"), "{err}");
    assert!(!dir.join("r.html").exists());
}

#[test]
fn explain_rejects_malformed_hex_with_exit_2_and_prints_plain_text_when_piped() {
    let bin = env!("CARGO_BIN_EXE_hmul2-harness");
    let out = Command::new(bin).args(["explain", "0x1234"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim().lines().count(), 1);
    let w = format_hex(word(&Inst::new(3, 4, Operand2::Ur(5))));
    let out = Command::new(bin).args(["explain", &w]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "no colour into a pipe");
    assert!(text.contains("HMUL2_R_R_UR") && text.contains("HMUL2 R3, R4, UR5") && text.contains("UR5"));
}
