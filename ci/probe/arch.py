"""Per-architecture evidence for HADD2, HMUL2, HFMA2 and HFMA2.MMA (issue 40), judged by the pinned
nvdisasm (-b SM80 .. SM120) and ptxas / cuobjdump.

    python3 ci/probe/arch.py           writes harness/spec/arch/<smXY>/evidence.json and docs/architectures.md
    python3 ci/probe/arch.py --check   re-asks the tools and exits 1 if either differs from what is committed

Everything is derived from harness/spec/sm90/{hadd2,hmul2,hfma2,hfma2_mma}.json (field positions, the
forms' fixed codes, each field's values): nothing here repeats a bit position. Random words use a
fixed seed (SEED, printed). Runs in about 25 seconds (six nvdisasm batches of about 19,000 words, the form
searches, twelve ptxas runs). Exit status: 0 written / matching, 1 differing (--check), other: the tools failed.
The tools are found by the project's one rule: $HMUL2_NVDISASM ($HMUL2_PTXAS, $HMUL2_CUOBJDUMP), else
.tools/bin, else PATH. harness/tests/arch_probe.rs runs --check.
"""
import hashlib, json, os, random, re, shutil, subprocess, sys, tempfile
from collections import Counter, OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nvd  # noqa: E402
from nvd import disasm  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOLS = os.path.join(ROOT, ".tools", "bin")
ARCHS = ["SM80", "SM86", "SM89", "SM90", "SM100", "SM120"]
SPECS = ["hadd2", "hmul2", "hfma2", "hfma2_mma"]
SEED = 40
RANDOM_PER_INSTRUCTION = 1000  # SM90-legal random words kept per instruction
FORM_SEARCH_RANDOM = 5000  # random words per instruction in the search for a missing form
PTX = ["f16x2.ptx", "bf16x2.ptx"]
# Base word: guard PT, dst R0, operand 1 R1, operand 2 R2 (or the special slot's low bits 2), the
# register slot R3, and the control bits the SM90 evidence uses (stall 1, yield, no scoreboards).
BASE_FIELDS = {"pred": 7, "dst": 0, "a": 1, "b_reg": 2, "c_reg": 3, "stall": 1, "yield": 1, "wr_bar": 7, "rd_bar": 7}


def load_specs():
    """The specs with their included shared fields resolved: a field given by name alone, or as a
    name with its own doc, is the included file's field of that name (as the spec compiler reads it)."""
    out = OrderedDict()
    for n in SPECS:
        with open(os.path.join(ROOT, "harness", "spec", "sm90", n + ".json")) as f:
            spec = json.load(f)
        shared = {}
        if "include" in spec:
            with open(os.path.join(ROOT, "harness", "spec", "sm90", spec["include"])) as f:
                shared = {x["name"]: x for x in json.load(f)["fields"]}
        fields = []
        for x in spec["fields"]:
            if isinstance(x, str):
                x = shared[x]
            elif "bits" not in x:
                x = {**shared[x["name"]], **x}
            fields.append(x)
        spec["fields"] = fields
        out[n] = spec
    return out


def width(field):
    return sum(hi - lo + 1 for lo, hi in field["bits"])


def put(word, field, value):
    """`word` with `field` (its segments, least significant first) set to `value`."""
    for lo, hi in field["bits"]:
        n = hi - lo + 1
        word = (word & ~(((1 << n) - 1) << lo)) | (value & ((1 << n) - 1)) << lo
        value >>= n
    return word


def values(field):
    """Every value of a field up to 6 bits wide; a fixed sample of a wider one."""
    w = width(field)
    if w <= 6:
        return list(range(1 << w))
    top = (1 << w) - 1
    sample = {0, 1, 2, top - 1, top, 1 << (w - 1), (1 << (w - 1)) - 1}
    if field.get("kind") == "imm16":
        sample |= {0x3C00, 0x7C00, 0x8000, 0x3F80}
    return sorted(sample)


def form_word(spec, form):
    f = {x["name"]: x for x in spec["fields"]}
    w = 0
    for name, v in BASE_FIELDS.items():
        if name in f:
            w = put(w, f[name], v)
    for name, v in form["fixed"].items():
        w = put(w, f[name], v)
    return w


def verdict(t):
    return "rejected" if t.startswith("REJ") else ("prints nothing" if t == "EMPTY" else t)


def accepted(t):
    return t not in ("rejected", "prints nothing")


def mnemonic(t):
    """The instruction a text names: HFMA2.MMA, else the first dotted part (HADD2.F32 -> HADD2)."""
    toks = t.split(" ")
    m = toks[1] if toks[0].startswith("@") and len(toks) > 1 else toks[0]
    return "HFMA2.MMA" if m.startswith("HFMA2.MMA") else m.split(".")[0]


def is_instr(spec, t):
    """nvdisasm printed `t` as this spec's instruction (not rejected, not another instruction)."""
    return accepted(t) and mnemonic(t) == spec["mnemonic"]


def hexw(w):
    return f"0x{w:032x}"


def random_words(spec, rng, n):
    f = {x["name"]: x for x in spec["fields"]}
    out = []
    for _ in range(n):
        form = rng.choice(spec["forms"])
        w = form_word(spec, form)
        for name in spec["common_fields"] + form["fields"]:
            fl = f[name]
            if name == "stall":
                v = rng.randrange(1, 12)
            elif name == "reuse":
                v = rng.choice([0, 0, 0, 1, 2, 4])
            else:
                v = rng.getrandbits(width(fl))
            w = put(w, fl, v)
        out.append(w)
    return out


def probe(specs):
    """All word lists, asked once per architecture: returns {arch: {word: verdict}} and the plan."""
    plan = OrderedDict()
    for n, spec in specs.items():
        f = {x["name"]: x for x in spec["fields"]}
        opcode = spec["forms"][0]["fixed"]["opcode"]
        base = form_word(spec, spec["forms"][0])
        codes = [put(put(base, f["operand_form"], of), f["ureg_flag"], u) for of in range(8) for u in (0, 1)]
        rows = []
        for form in spec["forms"]:
            fw = form_word(spec, form)
            for name in spec["common_fields"] + form["fields"]:
                for v in values(f[name]):
                    rows.append((form["key"], name, v, put(fw, f[name], v)))
        flips = [(form["key"], b, form_word(spec, form) ^ 1 << b) for form in spec["forms"] for b in range(128)]
        rng = random.Random(f"{SEED}-{n}")
        cand = random_words(spec, rng, RANDOM_PER_INSTRUCTION * 3)
        plan[n] = {"opcode": opcode, "codes": codes, "rows": rows, "flips": flips, "random_candidates": cand}
    words = []
    for p in plan.values():
        words += p["codes"] + [r[3] for r in p["rows"]] + [x[2] for x in p["flips"]] + p["random_candidates"]
    words = list(OrderedDict.fromkeys(words))
    seen = {}
    for arch in ARCHS:
        seen[arch] = dict(zip(words, (verdict(t) for t in disasm(words, arch=arch))))
        print(f"{arch}: {len(words)} words asked", file=sys.stderr)
    return plan, seen


def opcode_sweep(arch):
    """Every 9-bit opcode x operand_form x ureg_flag on the base word: where each mnemonic lives."""
    spec = load_specs()["hmul2"]
    f = {x["name"]: x for x in spec["fields"]}
    base = form_word(spec, spec["forms"][0])
    ws = [put(put(put(base, f["opcode"], op), f["operand_form"], of), f["ureg_flag"], u)
          for op in range(512) for of in range(8) for u in (0, 1)]
    hits = []
    for w, t in zip(ws, disasm(ws, arch=arch)):
        t = verdict(t)
        mn = t.split(" ")[0] if accepted(t) else ""
        if mn.split(".")[0] in ("HADD2", "HMUL2", "HFMA2"):
            hits.append({"word": hexw(w), "nvdisasm": t})
    return hits


def operand_kind(t):
    """The special source a text shows: cx[] or c[] (the kinds SM100/SM120 lack with SM90's bits)."""
    return "cx[]" if "cx[" in t else ("c[]" if "c[" in t else "")


def form_search(spec, arch, forms_ev):
    """For an instruction some of whose SM90 forms `arch` rejects (or prints as another instruction):
    look for those forms with other bits. Every operand-form code x ureg_flag, each with every single-bit
    flip of bits 12..127 and every pair of flips in 54..63 and in 86..104, plus FORM_SEARCH_RANDOM words
    with the opcode kept and bits 9..104 random (seeded). A hit prints the instruction with a special
    source kind (c[] / cx[]) that the missing forms have, or (for a whole missing instruction) at all."""
    missing = [k for k, r in forms_ev.items() if not r["accepted"]]
    if not missing:
        return None
    f = {x["name"]: x for x in spec["fields"]}
    wanted = {operand_kind(forms_ev[k]["sm90"]) for k in missing}
    whole = all(not r["accepted"] for r in forms_ev.values())
    base = form_word(spec, spec["forms"][0])
    ws = []
    for of in range(8):
        for u in (0, 1):
            w = put(put(base, f["operand_form"], of), f["ureg_flag"], u)
            ws += [w ^ 1 << b for b in range(12, 128)]
            ws += [w ^ 1 << a ^ 1 << b for lo, hi in ((54, 63), (86, 104)) for a in range(lo, hi + 1) for b in range(a + 1, hi + 1)]
    rng = random.Random(f"{SEED}-search-{spec['mnemonic']}")
    keep = (1 << 9) - 1 | (((1 << 128) - 1) >> 105 << 105)
    ws += [(base & keep) | (rng.getrandbits(96) << 9 & ~keep) for _ in range(FORM_SEARCH_RANDOM)]
    hits = []
    for w, t in zip(ws, disasm(ws, arch=arch)):
        t = verdict(t)
        if is_instr(spec, t) and (whole or operand_kind(t) in wanted):
            hits.append(OrderedDict([("word", hexw(w)), ("nvdisasm", t)]))
    return OrderedDict([("missing_forms", missing), ("looked_for", "the instruction at all" if whole else sorted(wanted)),
                        ("words_asked", len(ws)), ("random_seed", f"{SEED}-search-{spec['mnemonic']}"), ("hits", len(hits)),
                        ("first_hits", hits[:20])])


def tool(name):
    """The project's one lookup rule (the harness's `--help`): $HMUL2_<NAME>, else the checkout's
    .tools/bin, else PATH. A variable that names no file is an error, never a fall-back."""
    env = "HMUL2_" + name.upper()
    given = os.environ.get(env)
    if given:
        if not os.path.isfile(given):
            raise RuntimeError(f"${env} = {given}, which is not a file")
        return given
    pinned = os.path.join(TOOLS, name)
    if os.path.isfile(pinned):
        return pinned
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name}: not in ${env}, {TOOLS} or PATH")
    return found


def tool_version(name):
    r = subprocess.run([tool(name), "--version"], capture_output=True, text=True)
    return [l for l in r.stdout.splitlines() if l.startswith("Cuda compilation tools")][0]


def ptxas_facts(arch):
    """ptxas output for ci/probe/*.ptx on `arch`: the SASS (NOP padding left out), the ELF header, e_flags
    and the EIATTR attributes of the cubin."""
    sm = "sm_" + arch[2:]
    out = OrderedDict()
    with tempfile.TemporaryDirectory() as d:
        for ptx in PTX:
            cubin = os.path.join(d, ptx + ".cubin")
            r = subprocess.run([tool("ptxas"), "-arch", sm, os.path.join(ROOT, "ci", "probe", ptx), "-o", cubin],
                               capture_output=True, text=True)
            if r.returncode != 0:
                out[ptx] = {"ptxas": "refused: " + r.stderr.strip().splitlines()[0]}
                continue
            sass = subprocess.run([tool("cuobjdump"), "-sass", cubin], capture_output=True, text=True).stdout
            lines = [re.sub(r"\s+", " ", m.group(1).strip()) + " ; " + m.group(2)
                     for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(.*?);\s*/\* (0x[0-9a-f]{16}) \*/", sass)]
            lines = [l for l in lines if not l.startswith("NOP")]
            elf = subprocess.run([tool("cuobjdump"), "-elf", cubin], capture_output=True, text=True).stdout
            with open(cubin, "rb") as fh:
                raw = fh.read()
            out[ptx] = OrderedDict([
                ("sass", lines),
                ("elf_header", next(l.strip() for l in elf.splitlines() if "ELF:" in l)),
                ("e_ident_osabi", raw[7]),
                ("e_ident_abiversion", raw[8]),
                ("e_flags", f"0x{int.from_bytes(raw[48:52], 'little'):x}"),
                ("eiattr", re.findall(r"Attribute:\s+(EIATTR_\w+)", elf)),
                ("sections", re.findall(r"^\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\w+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+(\S+)$", elf, re.M)),
            ])
    return out


def diff_class(sm90, text):
    """What differs between SM90's text and another architecture's, as (tokens gone, tokens new)."""
    if not accepted(text):
        return text
    tok = lambda s: re.findall(r"[A-Za-z_][A-Za-z0-9_]*|[-|]", s)
    a, b = Counter(tok(sm90)), Counter(tok(text))
    return f"-{' '.join(sorted((a - b).elements())) or '()'} +{' '.join(sorted((b - a).elements())) or '()'}"


def evidence(specs, plan, seen, arch, versions):
    e = OrderedDict([("arch", arch), ("nvdisasm", versions["nvdisasm"]), ("ptxas", versions["ptxas"]),
                     ("cuobjdump", versions["cuobjdump"]), ("seed", SEED),
                     ("doc", "Generated by `python3 ci/probe/arch.py`; do not edit. Each word was asked of nvdisasm -b " + arch +
                      "; `sm90` is nvdisasm -b SM90's text for the same word. `rejected`: nvdisasm refuses the word; "
                      "`prints nothing`: it exits 0 with no line for it.")])
    s, s90 = seen[arch], seen["SM90"]
    ins = OrderedDict()
    for n, spec in specs.items():
        p = plan[n]
        f = {x["name"]: x for x in spec["fields"]}
        rec = OrderedDict([("mnemonic", spec["mnemonic"]), ("opcode", f"0x{p['opcode']:03x}")])
        rec["operand_forms"] = [OrderedDict([("operand_form", (w >> f["operand_form"]["bits"][0][0]) & 7),
                                             ("ureg_flag", (w >> f["ureg_flag"]["bits"][0][0]) & 1),
                                             ("word", hexw(w)), ("nvdisasm", s[w]), ("sm90", s90[w])]) for w in p["codes"]]
        forms = OrderedDict()
        for form in spec["forms"]:
            fw = form_word(spec, form)
            forms[form["key"]] = OrderedDict([("word", hexw(fw)), ("accepted", is_instr(spec, s[fw])), ("nvdisasm", s[fw]), ("sm90", s90[fw])])
        rec["forms"] = forms
        fields = OrderedDict()
        for key, name, v, w in p["rows"]:
            fields.setdefault(key, OrderedDict()).setdefault(name, []).append(
                OrderedDict([("value", v), ("word", hexw(w)), ("accepted", is_instr(spec, s[w])), ("nvdisasm", s[w])] +
                            ([] if s[w] == s90[w] else [("sm90", s90[w])])))
        rec["fields"] = fields
        flips = OrderedDict()
        for key, b, w in p["flips"]:
            if s[w] != s90[w] and forms[key]["accepted"]:
                flips.setdefault(key, []).append(OrderedDict([("bit", b), ("word", hexw(w)), ("nvdisasm", s[w]), ("sm90", s90[w])]))
        rec["bit_flips_differing_from_sm90"] = flips
        rec["form_search"] = form_search(spec, arch, forms)
        legal = [w for w in p["random_candidates"] if accepted(s90[w])][:RANDOM_PER_INSTRUCTION]
        buckets = Counter()
        classes = OrderedDict()
        for w in legal:
            b = "same-text" if s[w] == s90[w] else ("rejected" if s[w] == "rejected" else
                                                    ("prints-nothing" if s[w] == "prints nothing" else
                                                     ("different-text" if is_instr(spec, s[w]) else "other-instruction")))
            buckets[b] += 1
            if b != "same-text":
                c = classes.setdefault(diff_class(s90[w], s[w]), OrderedDict([("count", 0), ("example", hexw(w)), ("nvdisasm", s[w]), ("sm90", s90[w])]))
                c["count"] += 1
        illegal = [w for w in p["random_candidates"] if not accepted(s90[w])]
        taken = Counter()
        taken_ex = OrderedDict()
        for w in illegal:
            if accepted(s[w]):
                k = f"SM90 {s90[w]}; here {'the instruction' if is_instr(spec, s[w]) else 'another instruction'}"
                taken[k] += 1
                taken_ex.setdefault(k, OrderedDict([("example", hexw(w)), ("nvdisasm", s[w]), ("sm90", s90[w])]))
        rec["random_sm90_illegal"] = OrderedDict([
            ("doc", "The random candidates nvdisasm -b SM90 rejects or prints nothing for: how many this architecture prints."),
            ("words", len(illegal)), ("printed_here", sum(taken.values())),
            ("kinds", OrderedDict((k, OrderedDict([("count", taken[k])] + list(taken_ex[k].items()))) for k in sorted(taken, key=lambda k: -taken[k])))])
        rec["random"] = OrderedDict([
            ("seed", f"{SEED}-{n}"), ("candidates", len(p["random_candidates"])), ("sm90_legal", len(legal)),
            ("words_sha256", hashlib.sha256(b"".join(w.to_bytes(16, "little") for w in legal)).hexdigest()),
            ("buckets", OrderedDict((k, buckets[k]) for k in ("same-text", "different-text", "rejected", "prints-nothing", "other-instruction"))),
            ("differences", OrderedDict(sorted(classes.items(), key=lambda kv: -kv[1]["count"])))])
        ins[n] = rec
    e["instructions"] = ins
    e["opcode_sweep"] = OrderedDict([("doc", "Every opcode 0..511 x operand_form x ureg_flag on HMUL2's base word: the words that print HADD2, HMUL2, HFMA2 or HFMA2.MMA."),
                                     ("hits", opcode_sweep(arch))])
    e["ptxas_output"] = ptxas_facts(arch)
    return e


def short(t):
    return t.replace("|", "\\|")


def cell_fields(specs, evs, n, key, name, arch):
    rows = evs[arch]["instructions"][n]["fields"][key][name]
    if not evs[arch]["instructions"][n]["forms"][key]["accepted"]:
        return "no such form"
    bad = [r for r in rows if "sm90" in r]
    if not bad:
        return "="
    parts = [f"{r['value']}: `{short(r['nvdisasm'])}` (`{r['word']}`)" for r in bad[:2]]
    more = f" +{len(bad) - 2} more" if len(bad) > 2 else ""
    return f"{len(bad)}/{len(rows)} differ; " + "; ".join(parts) + more


def render_doc(specs, evs, versions):
    L = []
    a = L.append
    a("# Architectures: HADD2, HMUL2, HFMA2, HFMA2.MMA on SM80, SM86, SM89, SM90, SM100, SM120")
    a("")
    a("Generated by `python3 ci/probe/arch.py` from `harness/spec/arch/<smXY>/evidence.json` (do not edit by hand).")
    a("`python3 ci/probe/arch.py --check` re-asks the pinned tools (about 25 s) and exits 1 if this file or an evidence file")
    a("differs from what they say now, 2 if the tools cannot be run; a CI step can run it as it stands (it needs `.tools/bin`,")
    a("as `ci/install-tools.sh` provides, and Python 3 alone). Regenerate both with `python3 ci/probe/arch.py`.")
    a("")
    a(f"Tools: nvdisasm `{versions['nvdisasm']}`, ptxas `{versions['ptxas']}`, cuobjdump `{versions['cuobjdump']}` (`.tools/bin`).")
    a("")
    a("## Method")
    a("")
    a("Every word is built from the SM90 specs (`harness/spec/sm90/{hadd2,hmul2,hfma2,hfma2_mma}.json`): a form's word is its")
    a("fixed codes with guard PT, R0, R1, R2 (or special-slot bits 2), register slot R3, stall 1 and the yield bit. Each word is")
    a("given to `nvdisasm -b <ARCH>` in batches (`ci/probe/nvd.py`: a rejected word is taken out and the batch asked again;")
    a("a word nvdisasm lists nothing for is `prints nothing`). Per architecture and instruction:")
    a("")
    a("1. all 16 operand-form codes (bits of `operand_form` x `ureg_flag`) on the first form's word;")
    a("2. every field of every SM90 form: every value of a field up to 6 bits wide, a fixed sample of a wider one")
    a("   (0, 1, 2, the top values, the sign bit, and for immediates 1.0, +INF, -0.0, BF16 1.0);")
    a("3. every single-bit flip of every form's word (128 per form), compared with SM90;")
    a(f"4. random words (seed `{SEED}-<instruction>`, Python `random.Random`): fields of a random SM90 form drawn at random,")
    a(f"   kept when nvdisasm -b SM90 prints them, the first {RANDOM_PER_INSTRUCTION} per instruction, then bucketed per architecture;")
    a("5. an opcode sweep (512 opcodes x 8 forms x 2 ureg flags) for where each mnemonic lives; and where an architecture")
    a("   rejects a form's word, a search for that form with other bits: every operand-form code with every single-bit flip of")
    a(f"   bits 12..127 and every bit pair in 54..63 and 86..104, plus {FORM_SEARCH_RANDOM} random words per instruction (opcode kept);")
    a("6. ptxas for `ci/probe/f16x2.ptx` and `ci/probe/bf16x2.ptx` on each `sm_XY`, with `cuobjdump -sass` and `-elf`.")
    a("")
    a("## Operand forms (nvdisasm's text for each form's word)")
    a("")
    a("| instruction | form | " + " | ".join(ARCHS) + " |")
    a("|---|---|" + "---|" * len(ARCHS))
    for n, spec in specs.items():
        for form in spec["forms"]:
            k = form["key"]
            cells = []
            for arch in ARCHS:
                r = evs[arch]["instructions"][n]["forms"][k]
                cells.append(("rejected" if r["nvdisasm"] == "rejected" else f"another instruction: `{short(r['nvdisasm'])}`") if not r["accepted"] else ("=" if r["nvdisasm"] == r["sm90"] and arch != "SM90" else f"`{short(r['nvdisasm'])}`"))
            a(f"| {spec['mnemonic']} | {k} (`{evs['SM90']['instructions'][n]['forms'][k]['word']}`) | " + " | ".join(cells) + " |")
    a("")
    a("`=`: the same text as SM90. Accepted operand-form codes (operand_form, ureg_flag) on the first form's word:")
    a("")
    a("| instruction | " + " | ".join(ARCHS) + " |")
    a("|---|" + "---|" * len(ARCHS))
    for n, spec in specs.items():
        cells = []
        for arch in ARCHS:
            c = [f"({r['operand_form']},{r['ureg_flag']})" for r in evs[arch]["instructions"][n]["operand_forms"] if is_instr(spec, r["nvdisasm"])]
            cells.append(" ".join(c) or "none")
        a(f"| {spec['mnemonic']} | " + " | ".join(cells) + " |")
    a("")
    a("## Modifiers: instruction x form x field x architecture")
    a("")
    a("Only the (form, field) pairs where some architecture differs from SM90 are listed; a cell gives how many of the field's")
    a("probed values print differently from SM90 (or are rejected where SM90 accepts, or the reverse), with up to two values,")
    a("their text and their word. `=`: every value as SM90. `no such form`: the form's word itself is rejected there or prints another instruction.")
    a("")
    others = [x for x in ARCHS if x != "SM90"]
    a("| instruction | form | field | " + " | ".join(others) + " |")
    a("|---|---|---|" + "---|" * len(others))
    same = []
    for n, spec in specs.items():
        for form in spec["forms"]:
            for name in spec["common_fields"] + form["fields"]:
                cells = [cell_fields(specs, evs, n, form["key"], name, x) for x in others]
                if all(c in ("=", "no such form") for c in cells):
                    same.append((spec["mnemonic"], form["key"], name, tuple(cells)))
                    continue
                a(f"| {spec['mnemonic']} | {form['key']} | {name} | " + " | ".join(cells) + " |")
    a("")
    a(f"The other {len(same)} (form, field) pairs print every probed value as SM90 does wherever the form is accepted.")
    a("")
    a("## Single-bit flips that print differently from SM90")
    a("")
    a("Per accepted form: the bits whose flip gives a different verdict or text than on SM90 (first example word).")
    a("")
    a("| instruction | " + " | ".join(others) + " |")
    a("|---|" + "---|" * len(others))
    for n, spec in specs.items():
        cells = []
        for x in others:
            fl = evs[x]["instructions"][n]["bit_flips_differing_from_sm90"]
            bits = sorted({r["bit"] for rs in fl.values() for r in rs})
            if not bits:
                cells.append("none")
                continue
            ex = next(iter(fl.values()))[0]
            cells.append(f"bits {compress(bits)}; e.g. bit {ex['bit']}: `{short(ex['nvdisasm'])}` vs `{short(ex['sm90'])}` (`{ex['word']}`)")
        a(f"| {spec['mnemonic']} | " + " | ".join(cells) + " |")
    a("")
    a("## Random SM90-legal words per architecture")
    a("")
    a("| instruction | words | " + " | ".join(others) + " |")
    a("|---|---|" + "---|" * len(others))
    for n, spec in specs.items():
        r90 = evs["SM90"]["instructions"][n]["random"]
        cells = []
        for x in others:
            b = evs[x]["instructions"][n]["random"]["buckets"]
            cells.append(f"{b['same-text']} same, {b['different-text']} different, {b['rejected']} rejected, {b['prints-nothing']} nothing, {b['other-instruction']} another instruction")
        a(f"| {spec['mnemonic']} | {r90['sm90_legal']} (seed `{r90['seed']}`) | " + " | ".join(cells) + " |")
    a("")
    a("Random candidates SM90 refuses (rejected or printing nothing) that an architecture prints:")
    a("")
    a("| instruction | SM90-illegal candidates | " + " | ".join(others) + " |")
    a("|---|---|" + "---|" * len(others))
    for n, spec in specs.items():
        cells = []
        for x in others:
            r = evs[x]["instructions"][n]["random_sm90_illegal"]
            ex = next(iter(r["kinds"].values()), None)
            cells.append(f"{r['printed_here']}" + (f"; e.g. `{ex['example']}`: `{short(ex['nvdisasm'])}` (SM90: {ex['sm90']})" if ex else ""))
        a(f"| {spec['mnemonic']} | {evs['SM90']['instructions'][n]['random_sm90_illegal']['words']} | " + " | ".join(cells) + " |")
    a("")
    a("The kinds of difference among the SM90-legal words (tokens of SM90's text gone, tokens new), with a word each:")
    a("")
    for x in others:
        for n, spec in specs.items():
            d = evs[x]["instructions"][n]["random"]["differences"]
            if not d:
                continue
            a(f"- {x} {spec['mnemonic']}: " + "; ".join(
                f"{v['count']}x `{short(k)}` (`{v['example']}`: `{short(v['nvdisasm'])}`, SM90 `{short(v['sm90'])}`)" for k, v in list(d.items())[:4])
              + (f"; {len(d) - 4} more kinds" if len(d) > 4 else ""))
    a("")
    a("## The search for the forms an architecture lacks with SM90's bits")
    a("")
    a("| architecture | instruction | missing forms | looked for | words asked | hits |")
    a("|---|---|---|---|---|---|")
    for x in ARCHS:
        for n, spec in specs.items():
            fs = evs[x]["instructions"][n]["form_search"]
            if fs is None:
                continue
            lf = fs["looked_for"] if isinstance(fs["looked_for"], str) else " or ".join(f"`{k}`" for k in fs["looked_for"])
            h = str(fs["hits"]) + (": " + "; ".join(f"`{short(r['nvdisasm'])}` (`{r['word']}`)" for r in fs["first_hits"][:3]) if fs["hits"] else "")
            a(f"| {x} | {spec['mnemonic']} | {', '.join(fs['missing_forms'])} | {lf} | {fs['words_asked']} (random seed `{fs['random_seed']}`) | {h} |")
    a("")
    a("## Where the mnemonics live (opcode sweep)")
    a("")
    a("| architecture | words printing HADD2 / HMUL2 / HFMA2 / HFMA2.MMA: opcode (operand_form, ureg_flag) |")
    a("|---|---|")
    for x in ARCHS:
        hits = evs[x]["opcode_sweep"]["hits"]
        by = OrderedDict()
        for h in hits:
            w = int(h["word"], 16)
            mn = h["nvdisasm"].split(" ")[0]
            mn = "HFMA2.MMA" if mn.startswith("HFMA2.MMA") else mn.split(".")[0]
            by.setdefault(f"{mn} 0x{w & 0x1ff:03x}", []).append(f"({(w >> 9) & 7},{(w >> 91) & 1})")
        a(f"| {x} | " + "; ".join(f"{k}: {' '.join(v)}" for k, v in by.items()) + " |")
    a("")
    a("## ptxas 13.0 per architecture (template-kernel facts)")
    a("")
    a("`ci/probe/f16x2.ptx` (add/mul/fma .rn.f16x2 and fma.rn.bf16x2, PTX target sm_80) and `ci/probe/bf16x2.ptx`")
    a("(add/mul .rn.bf16x2, PTX target sm_90), compiled with `ptxas -arch sm_XY`; SASS lines from `cuobjdump -sass`")
    a("(cuobjdump's text, not nvdisasm's; the NOP padding left out), ELF facts from the cubin and `cuobjdump -elf`.")
    a("")
    a("| arch | f16x2.ptx SASS | bf16x2.ptx SASS |")
    a("|---|---|---|")
    for x in ARCHS:
        p = evs[x]["ptxas_output"]
        sass = lambda q: "<br>".join(f"`{short(l)}`" for l in q["sass"]) if "sass" in q else q["ptxas"]
        a(f"| {x} | {sass(p['f16x2.ptx'])} | {sass(p['bf16x2.ptx'])} |")
    a("")
    a("ELF of the f16x2 cubin:")
    a("")
    a("| arch | ELF header | e_flags | OSABI / ABI version | EIATTR (in order) |")
    a("|---|---|---|---|---|")
    for x in ARCHS:
        p = evs[x]["ptxas_output"]
        f1 = p["f16x2.ptx"]
        a(f"| {x} | `{f1['elf_header']}` | `{f1['e_flags']}` | {f1['e_ident_osabi']} / {f1['e_ident_abiversion']} | "
          + " ".join(f"`{t}`" for t in f1["eiattr"]) + " |")
    a("")
    a("Sections of the f16x2 cubin:")
    a("")
    for x in ARCHS:
        a(f"- {x}: " + " ".join(f"`{t}`" for t in evs[x]["ptxas_output"]["f16x2.ptx"]["sections"]))
    a("")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "arch-findings.md")) as fh:
        a(fh.read().rstrip())
    return "\n".join(L) + "\n"


def compress(bits):
    out, i = [], 0
    while i < len(bits):
        j = i
        while j + 1 < len(bits) and bits[j + 1] == bits[j] + 1:
            j += 1
        out.append(str(bits[i]) if i == j else f"{bits[i]}..{bits[j]}")
        i = j + 1
    return ", ".join(out)


def dump(obj):
    """JSON with one line per innermost object (a probed word), so that a change shows as a line."""
    text = json.dumps(obj, indent=1)
    flat = re.sub(r"\{\n\s+([^{}\[\]]*?)\n\s*\}", lambda m: "{" + " ".join(l.strip() for l in m.group(1).split("\n")) + "}", text)
    json.loads(flat)  # still the same JSON
    return flat + "\n"


SPEC_BEGIN = "<!-- spec-table: begin"
SPEC_END = "<!-- spec-table: end -->"


def spec_table_section(path):
    """The file's section made from the specs and overlays (harness_isa::archdoc writes it and a
    Rust test checks it): not this script's, kept as it is, after the sections this script writes."""
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        text = ""
    i, j = text.find(SPEC_BEGIN), text.find(SPEC_END)
    if i < 0 or j < i:
        return "\n" + SPEC_BEGIN + " -->\n" + SPEC_END + "\n"
    return "\n" + text[i:j + len(SPEC_END)] + "\n"


def main():
    args = sys.argv[1:]
    if args not in ([], ["--check"]):
        print(f"arch.py: unknown arguments {' '.join(args)!r}; usage: python3 ci/probe/arch.py [--check]", file=sys.stderr)
        sys.exit(2)
    check = args == ["--check"]
    nvd.NVD = tool("nvdisasm")
    print(f"arch.py: seed {SEED}, nvdisasm {nvd.NVD}, ptxas {tool('ptxas')}, cuobjdump {tool('cuobjdump')}", file=sys.stderr)
    specs = load_specs()
    versions = {t: tool_version(t) for t in ("nvdisasm", "ptxas", "cuobjdump")}
    plan, seen = probe(specs)
    evs = OrderedDict((x, evidence(specs, plan, seen, x, versions)) for x in ARCHS)
    files = OrderedDict()
    for x in ARCHS:
        files[os.path.join("harness", "spec", "arch", x.lower(), "evidence.json")] = dump(evs[x])
    doc = os.path.join("docs", "architectures.md")
    files[doc] = render_doc(specs, evs, versions) + spec_table_section(os.path.join(ROOT, doc))
    bad = 0
    for rel, text in files.items():
        path = os.path.join(ROOT, rel)
        if check:
            try:
                with open(path) as fh:
                    same = fh.read() == text
            except OSError as e:
                print(f"{rel}: cannot read: {e}", file=sys.stderr)
                same = False
            if not same:
                bad += 1
                print(f"{rel}: differs from what the tools say now (regenerate: python3 ci/probe/arch.py)", file=sys.stderr)
            else:
                print(f"{rel}: ok", file=sys.stderr)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(text)
            print(f"wrote {rel}", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    try:
        main()
    except (OSError, RuntimeError, subprocess.SubprocessError, StopIteration, IndexError) as e:
        print(f"arch.py: {type(e).__name__}: {e} (are the pinned tools in $HMUL2_NVDISASM / $HMUL2_PTXAS / $HMUL2_CUOBJDUMP, .tools/bin or PATH? bash ci/install-tools.sh)", file=sys.stderr)
        sys.exit(2)
