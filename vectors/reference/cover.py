#!/usr/bin/env python3
"""Cover vectors for a three-source instruction (HFMA2, HFMA2.MMA): from every word of the
full factorial of each of its forms, the words the reference computes that add a modifier
combination not yet covered, greedily in the factorial's order; then 5 inputs each from the
reference's seeded input sets (`eval`).

The combinations are the ones `harness/tests/vectors_cli.rs` asks of every form of every
instruction the pipeline runs: operand 1's and operand 2's neg x abs x half select (H1_H0,
H0_H0, H1_H1; H1_H0 alone without half selects), format x flush x .SAT, and guard (PT or
not) x negation, as far as the form's factorial holds them with a defined result.

    cargo build -p hmul2-harness
    python3 vectors/reference/cover.py HFMA2 20261203 > vectors/reference/hfma2-cover-20261203.jsonl
    python3 vectors/reference/cover.py HFMA2.MMA 20261203 > vectors/reference/hfma2-mma-cover-20261203.jsonl

Fails (exit 1) when the factorial shows a combination outside that list, or when `eval`
leaves a chosen word without an expected value.
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = str(ROOT / "target" / "debug" / "hmul2-harness")
# Form's cli names -> the names the test's keys use (Rust's Debug of `Form`)
DEBUG = {"rrr": "Rrr", "imm": "Imm", "const": "Const", "constx": "ConstUr", "ur": "Ur", "rrrr": "Rrrr",
         "imm-c": "ImmC", "const-c": "ConstC", "constx-c": "ConstUrC", "ur-c": "UrC"}
SWIZZLE = {"": "H1H0", ".H0_H0": "H0H0", ".H1_H1": "H1H1"}


def spec_forms(op):
    """(spec key, cli name) of each form of `op`, and whether it has half selects, from its spec file."""
    for p in sorted((ROOT / "harness" / "spec" / "sm90").glob("*.json")):
        s = json.loads(p.read_text())
        if s.get("mnemonic") == op:
            # an instruction without half selects (HFMA2.MMA): its forms leave a_swizzle out
            half_selects = all("a_swizzle" in s.get("common_fields", []) + f.get("fields", []) for f in s["forms"])
            return [(f["key"], f["cli"]) for f in s["forms"]], half_selects
    sys.exit(f"cover.py: no spec names the mnemonic {op}")


def operands(text):
    """The operands of an instruction's text, commas inside brackets kept."""
    rest = text.split(" ", 1)[1] if " " in text else ""
    out, depth, cur = [], 0, ""
    for ch in rest:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def source_key(operand):
    """(neg, abs, half select) of a source; `keys` has already left out the half selects
    the reference has no value for (.F32, .H0_NH1, .INVALIDn)."""
    neg = operand.startswith("-")
    o = operand.lstrip("-")
    # after the bars for a register (|R2|.H0_H0), inside them for c[] (|c[0x3] [0x10].H1_H1|)
    sel = next((s for s in (".H0_H0", ".H1_H1") if o.rstrip("|").endswith(s)), "")
    return neg, o.startswith("|"), SWIZZLE[sel]


def keys(form, text):
    """The coverage keys of one word, or None when the reference has no value for it."""
    if any(m in text for m in (".F32", ".OOB", ".RELU", ".H0_NH1", ".INVALID")):
        return None
    guard, body = ("", text)
    if text.startswith("@"):
        guard, body = text.split(" ", 1)
    mnemonic = body.split(" ", 1)[0]
    ops = operands(body)
    f = DEBUG[form]
    out = set()
    a = source_key(ops[1])
    out.add(f"{f} a.neg={str(a[0]).lower()} a.abs={str(a[1]).lower()} a.{a[2]}")
    if f != "Imm":
        b = source_key(ops[2])
        out.add(f"{f} b.neg={str(b[0]).lower()} b.abs={str(b[1]).lower()} b.{b[2]}")
    fmt = "Bf16" if ".BF16_V2" in mnemonic else "F16"
    flush = "Ftz" if ".FTZ" in mnemonic else "Fmz" if ".FMZ" in mnemonic else "None"
    out.add(f"{f} {fmt} {flush} sat={str('.SAT' in mnemonic).lower()}")
    pt = guard in ("", "@PT", "@!PT")
    out.add(f"{f} pt={str(pt).lower()} negated={str(guard.startswith('@!')).lower()}")
    return out


def wanted(form, half_selects):
    f = DEBUG[form]
    w = set()
    for neg in ("false", "true"):
        for ab in ("false", "true"):
            for s in ("H1H0", "H0H0", "H1H1") if half_selects else ("H1H0",):
                w.add(f"{f} a.neg={neg} a.abs={ab} a.{s}")
                if f != "Imm":
                    w.add(f"{f} b.neg={neg} b.abs={ab} b.{s}")
    for fmt in ("F16", "Bf16"):
        for fl in ("None", "Fmz", "Ftz"):
            for sat in ("false", "true"):
                w.add(f"{f} {fmt} {fl} sat={sat}")
    for pt in ("false", "true"):
        for neg in ("false", "true"):
            w.add(f"{f} pt={pt} negated={neg}")
    return w


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    op, seed = sys.argv[1], sys.argv[2]
    chosen = []
    forms, half_selects = spec_forms(op)
    for key, cli in forms:
        gen = subprocess.run([BIN, "generate", "--instruction", op, "--factorial", "--form", key, "--seed", seed, "--json"],
                             capture_output=True, text=True, check=True)
        words = [(g["encoding"], keys(cli, g["text"])) for g in map(json.loads, gen.stdout.splitlines())]
        # what the form's defined words can show (the spec hides some combinations, e.g. a
        # half select on |c[]| in HFMA2), checked against the fixed list below
        want = set().union(*(k for _, k in words if k is not None))
        if not want <= wanted(cli, half_selects) or len(want) < 20:
            sys.exit(f"cover.py: {op} {key}: unexpected combinations {sorted(want - wanted(cli, half_selects))[:4]}")
        seen = set()
        for enc, k in words:
            if k is not None and not k <= seen:
                seen |= k
                chosen.append(enc)
            if want <= seen:
                break
    ev = subprocess.run([BIN, "eval", "--seed", seed, "--inputs", "5", "--encodings", "-"],
                        input="\n".join(chosen) + "\n", capture_output=True, text=True)
    lines = ev.stdout.splitlines()
    bad = [l for l in lines if '"expect"' not in l]
    if ev.returncode != 0 or bad or len(lines) != 5 * len(chosen):
        sys.exit(f"cover.py: eval exit {ev.returncode}, {len(bad)} lines without expect: {bad[:2]} {ev.stderr[-300:]}")
    sys.stdout.write("\n".join(lines) + "\n")
    print(f"cover.py: {op}: {len(chosen)} words, {len(lines)} vectors", file=sys.stderr)


if __name__ == "__main__":
    main()
