"""HMNMX2, HSET2 and HSETP2 on SM90 (issue 41): their proposed specs checked against the pinned nvdisasm, with
the evidence and the report generated from the answers.

    python3 ci/probe/family.py           writes harness/spec/sm90/family/evidence.json and docs/family.md
    python3 ci/probe/family.py --check   re-asks the tools and exits 1 if either differs from what is committed

The specs (harness/spec/sm90/{hmnmx2,hset2,hsetp2}.json, the ones the build reads, or while an instruction is not
in the build yet harness/spec/proposed/sm90/; written by hand from what this script found) are the model: every probed word is decoded with them, the spec predicts nvdisasm's verdict (accepted,
rejected, prints nothing: its constraints) and whole text (guard, suffixes in `text.suffixes` order, operands in
`text.operands` order with their modifiers, immediates spelled as harness/isa's floattext.rs does), and each mismatch
is listed. Words asked, per
instruction: all 16 operand-form codes; every value of every field up to 6 bits of every form (a fixed sample of a
wider one); every single-bit flip of every form's word; the control table (yield x reuse x stall); random words (seed
SEED, printed) of two kinds: fields of a random form drawn at random, and every bit but the opcode and form codes
random; the spec's evidence words. The same words go to nvdisasm -b SM80 .. SM120 (recorded where they differ), and
ci/probe/family.ptx through ptxas -arch sm_90 (the corpus: which values ptxas emits). Runs in about 20 s.
Exit status: 0 written / matching, 1 differing (--check) or the spec disagreeing with nvdisasm, 2 the tools failed.
The tools are found by the project's one rule ($HMUL2_NVDISASM, $HMUL2_PTXAS, $HMUL2_CUOBJDUMP, else .tools/bin,
else PATH). harness/tests/family_probe.rs runs --check.
"""
import hashlib, json, os, random, re, struct, subprocess, sys, tempfile
from collections import Counter, OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nvd  # noqa: E402
from nvd import disasm  # noqa: E402
from arch import ARCHS, compress, dump, hexw, put, tool, tool_version, values, verdict, width  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SPEC_DIR = os.path.join("harness", "spec", "sm90")
PROPOSED_DIR = os.path.join("harness", "spec", "proposed", "sm90")
EVIDENCE = os.path.join(SPEC_DIR, "family", "evidence.json")
NAMES = ["hmnmx2", "hset2", "hsetp2"]


def spec_path(name):
    """A spec the build reads (harness/spec/sm90/), or one still proposed (harness/spec/proposed/sm90/)."""
    built = os.path.join(ROOT, SPEC_DIR, name + ".json")
    return built if os.path.exists(built) else os.path.join(ROOT, PROPOSED_DIR, name + ".json")
SEED = 41
RANDOM_FIELDS = 3000  # random words per instruction: a random form's fields drawn at random
RANDOM_RAW = 2000  # random words per instruction: every bit but opcode / operand_form / ureg_flag random
PTX = "family.ptx"
BASE = {"pred": 7, "dst": 0, "a": 1, "b_reg": 2, "stall": 1, "yield": 1, "wr_bar": 7, "rd_bar": 7}
# Public sources on the meaning of the modifiers no PTX instruction asks for (cited in docs/family.md).
NAK = "bminor/mesa-mesa, src/nouveau/compiler/nak/sm70_encode.rs, commit 00fe8e45a0dbbdc2fe6f7c5cab9a3a0f50313f2f"
NAK_IR = "bminor/mesa-mesa, src/nouveau/compiler/nak/ir.rs, the same commit"


# ---- the specs ---------------------------------------------------------------------------------------------

def load_spec(name):
    """A spec with its `include` (the shared fields, harness/spec/sm90/common.json) resolved: a field given by
    name alone, or as a name with its own doc, is the included file's field of that name."""
    path = spec_path(name)
    with open(path) as f:
        spec = json.load(f)
    shared = {}
    if "include" in spec:
        with open(os.path.join(ROOT, SPEC_DIR, spec["include"])) as f:
            shared = {x["name"]: x for x in json.load(f)["fields"]}
    fields = OrderedDict()
    for x in spec["fields"]:
        if isinstance(x, str):
            x = shared[x]
        elif "bits" not in x:
            x = {**shared[x["name"]], **x}
        fields[x["name"]] = x
    spec["fields"] = list(fields.values())
    spec["f"] = fields
    return spec


def form_fields(spec, form):
    return list(form["fixed"]) + spec["common_fields"] + form["fields"]


def static_problems(spec):
    """What is wrong with a spec before any tool is asked: unknown names, a bit claimed twice in a form, a field
    no form uses, a value list that does not fit its field."""
    out, f, used = [], spec["f"], set()
    for form in spec["forms"]:
        owner = {}
        for name in form_fields(spec, form):
            if name not in f:
                out.append(f"{form['key']}: unknown field {name!r}")
                continue
            used.add(name)
            for lo, hi in f[name]["bits"]:
                for b in range(lo, hi + 1):
                    if b in owner:
                        out.append(f"{form['key']}: bit {b} is in both {owner[b]} and {name}")
                    owner[b] = name
    for name, x in f.items():
        if name not in used:
            out.append(f"field {name} is in no form")
        if "values" in x and len(x["values"]) != 1 << width(x):
            out.append(f"field {name}: {len(x['values'])} value names for {width(x)} bits")
    for name in spec["text"]["suffixes"] + [o for o in spec["text"]["operands"] if o != "b"]:
        if name not in f:
            out.append(f"text names unknown field {name!r}")
    return out


def get(word, field):
    v, s = 0, 0
    for lo, hi in field["bits"]:
        n = hi - lo + 1
        v |= ((word >> lo) & ((1 << n) - 1)) << s
        s += n
    return v


def form_word(spec, form):
    w = 0
    for name, v in list(BASE.items()) + list(spec.get("base", {}).items()) + list(form["fixed"].items()):
        if name in spec["f"]:
            w = put(w, spec["f"][name], v)
    return w


def accepted(t):
    """nvdisasm printed an instruction (not `REJ: ...`, `rejected` or `prints nothing`)."""
    return not t.startswith("REJ") and t not in ("rejected", "prints nothing")


def form_of(spec, word):
    for form in spec["forms"]:
        if all(get(word, spec["f"][k]) == v for k, v in form["fixed"].items()):
            return form
    return None


def decode(spec, form, word):
    return {name: get(word, spec["f"][name]) for name in form_fields(spec, form)}


def in_ranges(v, ranges):
    return any(lo <= v <= hi for lo, hi in ranges)


def applies(rule, form, vals):
    return ("forms" not in rule or form["key"] in rule["forms"]) and all(in_ranges(vals[k], r) for k, r in rule["when"].items())


def predicted_verdict(spec, form, vals):
    """accepted, rejected or prints nothing, by the spec's constraints: a broken one that rejects decides before
    one that makes nvdisasm print nothing."""
    broken = [c for c in spec["constraints"] if applies(c, form, vals) and not in_ranges(vals[c["field"]], c["allowed"])]
    broken.sort(key=lambda c: c.get("nvdisasm", "rejected") != "rejected")
    return (broken[0].get("nvdisasm", "rejected"), broken[0]["id"]) if broken else ("accepted", None)


def hidden(spec, form, vals, name):
    return any(h["field"] == name and applies(h, form, vals) for h in spec.get("hidden", []))


def reg(v, z=255, p="R"):
    return f"{p}Z" if v == z else f"{p}{v}"


def pred(v, neg=0):
    return ("!" if neg else "") + ("PT" if v == 7 else f"P{v}")


def reuse_of(spec, vals, operand):
    return vals["yield"] == 1 and (vals["reuse"] >> spec["operand_reuse"][operand]) & 1


def source(spec, vals, x, operand, body, register=True):
    """Operand text as nvdisasm prints it: a register `-|R1|.reuse.H0_H0` (the half select after the bars and
    after .reuse), a special source `-|c[0x0] [0x0].H0_H0|` (the half select inside the bars)."""
    f = spec["f"]
    t = body
    swz = "." + f[f"{x}_swizzle"]["values"][vals[f"{x}_swizzle"]] if vals.get(f"{x}_swizzle") else ""
    if not register:
        t += swz
    if vals.get(f"{x}_abs"):
        t = f"|{t}|"
    if vals.get(f"{x}_neg"):
        t = "-" + t
    if reuse_of(spec, vals, operand):
        t += ".reuse"
    return t + swz if register else t


def spell(bits, bf16):
    """A 16-bit float immediate as nvdisasm spells it (harness/isa's floattext.rs rule): `0`, `-0.0 `, `+INF `,
    `+QNAN `, `+SNAN ` (signed), else C's %.20g below 1e9 in magnitude and %.20e from there on."""
    exp_mask, quiet = (0x7f80, 0x0040) if bf16 else (0x7c00, 0x0200)
    sign, mag = ("-" if bits & 0x8000 else "+"), bits & 0x7fff
    if mag & exp_mask == exp_mask:
        return sign + ("INF " if mag == exp_mask else "QNAN " if mag & quiet else "SNAN ")
    if bits == 0x8000:
        return "-0.0 "
    if mag == 0:
        return "0"
    x = struct.unpack("<f", struct.pack("<I", bits << 16))[0] if bf16 else struct.unpack("<e", struct.pack("<H", bits))[0]
    return "%.20g" % x if abs(x) < 1e9 else "%.20e" % x


def operand_b(spec, form, vals):
    """Operand 2's text (the two immediates are two operands: the high half first)."""
    if "b_reg" in vals:
        return [source(spec, vals, "b", 1, reg(vals["b_reg"]))]
    if "imm_lo" in vals:
        bf16 = spec["f"]["format"]["values"][vals["format"]] == "BF16_V2"
        return [spell(vals["imm_hi"], bf16).strip(), spell(vals["imm_lo"], bf16).strip()]
    if "cb_bank" in vals:
        off = vals["cb_offset"]
        if off & 0x2000:
            off -= 0x4000
        off *= 4
        return [source(spec, vals, "b", 1, f"c[{vals['cb_bank']:#x}] [{'-' if off < 0 else ''}{abs(off):#x}]", False)]
    if "cb_offset" in vals:
        return [source(spec, vals, "b", 1, f"cx[{reg(vals['b_ureg'], 63, 'UR')}] [{vals['cb_offset'] * 4:#x}]", False)]
    return [source(spec, vals, "b", 1, reg(vals["b_ureg"], 63, "UR"), False)]


def predicted_text(spec, form, vals):
    """nvdisasm's text as the spec reads the word, as (head, operands before operand 2, operand 2's one or two
    operands, operands after it)."""
    f = spec["f"]
    head = ""
    if vals["pred"] != 7 or vals["pred_neg"]:
        head = "@" + pred(vals["pred"], vals["pred_neg"]) + " "
    head += spec["mnemonic"] + "".join("." + f[s]["values"][vals[s]] for s in spec["text"]["suffixes"] if f[s]["values"][vals[s]])
    before, after, seen_b = [], [], False
    for name in spec["text"]["operands"]:
        if name == "b":
            seen_b = True
            continue
        x = f[name]
        if hidden(spec, form, vals, name):
            continue
        if x["kind"] == "reg" and name == "a":
            t = source(spec, vals, "a", 0, reg(vals["a"]))
        elif x["kind"] == "reg":
            t = reg(vals[name])
        elif x["kind"] == "pred_dst":
            t = pred(vals[name])
        else:
            t = pred(vals[name], vals[name + "_neg"])
        (after if seen_b else before).append(t)
    return head, before, operand_b(spec, form, vals), after


def split_text(t):
    head, _, ops = t.partition(" ")
    if head.startswith("@"):
        g, _, ops = ops.partition(" ")
        head = head + " " + g
    return head, [o.strip() for o in ops.split(",")] if ops else []


def judge(spec, word, text):
    """None when the spec predicts nvdisasm's answer for `word`, else what it predicted."""
    form = form_of(spec, word)
    if form is None:
        mine = accepted(text) and split_text(text)[0].split(" ")[-1].split(".")[0] == spec["mnemonic"]
        return "not this instruction (no form has these codes)" if mine else None
    vals = decode(spec, form, word)
    v, cid = predicted_verdict(spec, form, vals)
    if v != "accepted":
        return None if ("rejected" if text.startswith("REJ") else text) == v else f"{v} ({cid})"
    if not accepted(text):
        return f"accepted as {form['key']}"
    head, before, b, after = predicted_text(spec, form, vals)
    h, ops = split_text(text)
    want = f"{head} {', '.join(before + b + after)}"
    return None if (h, ops) == (head, before + b + after) else want


# ---- the probe ---------------------------------------------------------------------------------------------

def random_words(spec, rng, n):
    out = []
    for _ in range(n):
        form = rng.choice(spec["forms"])
        w = form_word(spec, form)
        for name in spec["common_fields"] + form["fields"]:
            x = spec["f"][name]
            if name == "stall":
                v = rng.randrange(1, 12)
            elif name == "reuse":
                v = rng.choice([0, 0, 0, 1, 2, 4])
            else:
                v = rng.getrandbits(width(x))
            w = put(w, x, v)
        out.append(w)
    return out


def raw_words(spec, rng, n):
    """Every bit random but the opcode and the form codes (stall 1..11 and reuse 0 so that the control table
    does not decide every answer)."""
    f = spec["f"]
    keep = ["opcode", "operand_form", "ureg_flag"]
    out = []
    for _ in range(n):
        form = rng.choice(spec["forms"])
        w = rng.getrandbits(128)
        for k in keep:
            w = put(w, f[k], form["fixed"][k])
        w = put(put(w, f["stall"], rng.randrange(1, 12)), f["reuse"], 0)
        out.append(w)
    return out


def plan_for(spec, name):
    f = spec["f"]
    base = form_word(spec, spec["forms"][0])
    p = OrderedDict()
    p["codes"] = [put(put(base, f["operand_form"], of), f["ureg_flag"], u) for of in range(8) for u in (0, 1)]
    p["rows"] = [(form["key"], fn, v, put(form_word(spec, form), f[fn], v))
                 for form in spec["forms"] for fn in spec["common_fields"] + form["fields"] for v in values(f[fn])]
    # a field a condition hides is probed again with the condition lifted (e.g. HMNMX2's is_a_p with .IS_A)
    for h in spec.get("hidden", []):
        for form in spec["forms"]:
            w = form_word(spec, form)
            for k, ranges in h["when"].items():
                w = put(w, f[k], next(v for v in range(1 << width(f[k])) if not in_ranges(v, ranges)))
            p["rows"] += [(form["key"], f"{h['field']} ({h['id']} lifted)", v, put(w, f[h["field"]], v)) for v in values(f[h["field"]])]
    p["flips"] = [(form["key"], b, form_word(spec, form) ^ 1 << b) for form in spec["forms"] for b in range(128)]
    p["control"] = [(form["key"], y, r, s, put(put(put(form_word(spec, form), f["yield"], y), f["reuse"], r), f["stall"], s))
                    for form in spec["forms"] for y in (0, 1) for r in range(8) for s in range(16)]
    p["random"] = random_words(spec, random.Random(f"{SEED}-{name}-fields"), RANDOM_FIELDS)
    p["raw"] = raw_words(spec, random.Random(f"{SEED}-{name}-raw"), RANDOM_RAW)
    p["evidence"] = [int(w["hex"], 16) for e in spec["evidence"] for w in e["words"]]
    return p


def all_words(plans):
    ws = []
    for p in plans.values():
        ws += p["codes"] + [r[3] for r in p["rows"]] + [x[2] for x in p["flips"]] + [c[4] for c in p["control"]] + p["random"] + p["raw"] + p["evidence"]
    return list(OrderedDict.fromkeys(ws))


def mnemonic_of(t):
    if not accepted(t):
        return t
    h = split_text(t)[0].split(" ")[-1]
    return h.split(".")[0]


# ---- ptxas corpus ------------------------------------------------------------------------------------------

def corpus():
    """ci/probe/family.ptx through ptxas -arch sm_90: every HMNMX2 / HSET2 / HSETP2 word (both halves, from
    cuobjdump -sass) with the PTX line it came from unknown but its SASS text kept."""
    with tempfile.TemporaryDirectory() as d:
        cubin = os.path.join(d, "family.cubin")
        r = subprocess.run([tool("ptxas"), "-arch", "sm_90", os.path.join(ROOT, "ci", "probe", PTX), "-o", cubin], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("ptxas refused ci/probe/family.ptx: " + r.stderr.strip())
        sass = subprocess.run([tool("cuobjdump"), "-sass", cubin], capture_output=True, text=True, check=True).stdout
    out = []
    for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;\s*/\* (0x[0-9a-f]{16}) \*/\s*\n\s*/\* (0x[0-9a-f]{16}) \*/", sass):
        t = re.sub(r"\s+", " ", m.group(1).strip())
        if t.split(".")[0].split(" ")[0] in ("HMNMX2", "HSET2", "HSETP2"):
            out.append((int(m.group(3), 16) << 64 | int(m.group(2), 16), t))
    if not out:
        raise RuntimeError("no HMNMX2 / HSET2 / HSETP2 in ptxas's code for ci/probe/family.ptx")
    return out


# ---- evidence ----------------------------------------------------------------------------------------------

def rejection_kind(t):
    return re.sub(r"0x[0-9a-f]+", "N", t)


def field_rows(spec, p, seen):
    out = OrderedDict()
    for key, fn, v, w in p["rows"]:
        out.setdefault(key, OrderedDict()).setdefault(fn, []).append(OrderedDict([("value", v), ("word", hexw(w)), ("nvdisasm", seen[w])]))
    return out


def control_table(spec, p, seen):
    """Per form: for yield 0/1 and reuse 0..7, the stall counts nvdisasm accepts (compressed)."""
    out = OrderedDict()
    for key, y, r, s, w in p["control"]:
        out.setdefault(key, OrderedDict()).setdefault(f"yield {y} reuse {r}", [])
        if accepted(seen[w]):
            out[key][f"yield {y} reuse {r}"].append(s)
    return OrderedDict((k, OrderedDict((kk, compress(v) or "none") for kk, v in t.items())) for k, t in out.items())


def mismatches(spec, words, seen):
    bad = []
    for w in words:
        why = judge(spec, w, seen[w])
        if why is not None:
            bad.append(OrderedDict([("word", hexw(w)), ("nvdisasm", seen[w]), ("spec", why)]))
    return bad


def suffix_census(spec, words, seen):
    """Every suffix token nvdisasm printed for this instruction among `words`, with a count and a word."""
    c, ex = Counter(), {}
    for w in words:
        t = seen[w]
        if mnemonic_of(t) != spec["mnemonic"]:
            continue
        for s in split_text(t)[0].split(" ")[-1].split(".")[1:]:
            c[s] += 1
            ex.setdefault(s, hexw(w))
    return OrderedDict((k, OrderedDict([("count", c[k]), ("example", ex[k])])) for k in sorted(c))


def instruction_evidence(spec, name, p, seen, corpus_words):
    rec = OrderedDict([("mnemonic", spec["mnemonic"]), ("opcode", f"0x{spec['forms'][0]['fixed']['opcode']:03x}")])
    rec["operand_forms"] = [OrderedDict([("operand_form", get(w, spec["f"]["operand_form"])), ("ureg_flag", get(w, spec["f"]["ureg_flag"])),
                                         ("word", hexw(w)), ("nvdisasm", seen[w])]) for w in p["codes"]]
    rec["forms"] = OrderedDict((form["key"], OrderedDict([("word", hexw(form_word(spec, form))), ("nvdisasm", seen[form_word(spec, form)])]))
                               for form in spec["forms"])
    rec["fields"] = field_rows(spec, p, seen)
    flips = OrderedDict()
    for key, b, w in p["flips"]:
        flips.setdefault(key, []).append(OrderedDict([("bit", b), ("word", hexw(w)), ("nvdisasm", seen[w])]))
    rec["bit_flips"] = flips
    rec["control"] = control_table(spec, p, seen)
    rnd = OrderedDict()
    for kind, seed, ws in (("fields", f"{SEED}-{name}-fields", p["random"]), ("raw", f"{SEED}-{name}-raw", p["raw"])):
        verdicts = Counter("accepted" if mnemonic_of(seen[w]) == spec["mnemonic"] else ("another instruction" if accepted(seen[w]) else seen[w] if seen[w] == "prints nothing" else "rejected")
                           for w in ws)
        rnd[kind] = OrderedDict([("seed", seed), ("words", len(ws)), ("words_sha256", hashlib.sha256(b"".join(w.to_bytes(16, "little") for w in ws)).hexdigest()),
                                 ("verdicts", OrderedDict(sorted(verdicts.items()))), ("first", [OrderedDict([("word", hexw(w)), ("nvdisasm", seen[w])]) for w in ws[:8]])])
    rec["random"] = rnd
    everything = p["codes"] + [r[3] for r in p["rows"]] + [x[2] for x in p["flips"]] + [c[4] for c in p["control"]] + p["random"] + p["raw"] + p["evidence"]
    everything = list(OrderedDict.fromkeys(everything))
    rej = Counter(rejection_kind(seen[w]) for w in everything if seen[w].startswith("REJ"))
    rej_ex = {}
    for w in everything:
        if seen[w].startswith("REJ"):
            rej_ex.setdefault(rejection_kind(seen[w]), hexw(w))
    rec["illegal"] = OrderedDict([("words_asked", len(everything)),
                                  ("rejected", sum(rej.values())), ("prints_nothing", sum(1 for w in everything if seen[w] == "prints nothing")),
                                  ("kinds", [OrderedDict([("message", k), ("count", rej[k]), ("example", rej_ex[k])]) for k in sorted(rej, key=lambda k: (-rej[k], k))])])
    rec["suffixes_printed"] = suffix_census(spec, everything, seen)
    rec["spec_mismatches"] = mismatches(spec, everything, seen)
    for e in spec["evidence"]:
        for x in e["words"]:
            now = "rejected" if seen[int(x["hex"], 16)].startswith("REJ") else seen[int(x["hex"], 16)]
            if now != x["nvdisasm"]:
                rec["spec_mismatches"].append(OrderedDict([("word", x["hex"]), ("nvdisasm", now), ("spec", f"evidence {e['id']} records {x['nvdisasm']!r}")]))
    mine = [(w, t) for w, t in corpus_words if t.split(".")[0].split(" ")[0] == spec["mnemonic"]]
    rec["ptxas_corpus"] = [OrderedDict([("word", hexw(w)), ("cuobjdump", t), ("nvdisasm", seen[w]), ("spec", judge(spec, w, seen[w]) or "agrees"),
                                        ("fields", OrderedDict((k, v) for k, v in decode(spec, form_of(spec, w), w).items() if k not in ("opcode", "operand_form", "ureg_flag")) if form_of(spec, w) else None)])
                           for w, t in mine]
    return rec, everything


def other_arch(spec, p, everything, seen, arch):
    """How nvdisasm -b arch reads the SM90 words: counts, and the (form, field) and bit-flip differences."""
    s, s90 = seen[arch], seen["SM90"]
    buckets = Counter()
    kinds = OrderedDict()
    for w in everything:
        a, b = s90[w], s[w]
        if a == b:
            buckets["same"] += 1
            continue
        k = ("SM90 accepts, here rejected" if accepted(a) and not accepted(b) else
             "SM90 refuses, here printed" if not accepted(a) and accepted(b) else
             "both refuse, differently" if not accepted(a) else "different text")
        buckets[k] += 1
        if k == "different text":
            ta, tb = set(re.findall(r"[A-Z_][A-Z0-9_]*", a)), set(re.findall(r"[A-Z_][A-Z0-9_]*", b))
            k = f"text: -{' '.join(sorted(ta - tb)) or '()'} +{' '.join(sorted(tb - ta)) or '()'}"
        c = kinds.setdefault(k, OrderedDict([("count", 0), ("example", hexw(w)), ("nvdisasm", b), ("sm90", a)]))
        c["count"] += 1
    forms = OrderedDict((form["key"], OrderedDict([("nvdisasm", s[form_word(spec, form)]), ("sm90", s90[form_word(spec, form)])]))
                        for form in spec["forms"])
    missing = {k for k, x in forms.items() if accepted(x["sm90"]) and not accepted(x["nvdisasm"])}
    fields = OrderedDict()
    for key, fn, v, w in p["rows"]:
        if key not in missing and s[w] != s90[w] and not (s[w].startswith("REJ") and s90[w].startswith("REJ")):
            x = fields.setdefault(f"{key} {fn}", OrderedDict([("values", []), ("example", OrderedDict([("word", hexw(w)), ("nvdisasm", s[w]), ("sm90", s90[w])]))]))
            x["values"].append(v)
    flips = sorted({b for key, b, w in p["flips"] if key not in missing and s[w] != s90[w] and not (s[w].startswith("REJ") and s90[w].startswith("REJ"))})
    return OrderedDict([("arch", arch), ("buckets", OrderedDict(sorted(buckets.items()))), ("forms", forms),
                        ("fields_differing", fields), ("flip_bits_differing", compress(flips)),
                        ("kinds", OrderedDict(sorted(kinds.items(), key=lambda kv: (-kv[1]["count"], kv[0]))[:40]))])


def evidence(specs, plans, seen, versions, corpus_words):
    e = OrderedDict([("doc", "Generated by `python3 ci/probe/family.py`; do not edit. Every word was asked of nvdisasm -b SM90 (and the other "
                             "architectures, recorded where they differ). `rejected`-style answers keep nvdisasm's message (REJ: ...); `prints nothing`: "
                             "it exits 0 with no line for the word. `spec_mismatches` lists every word the proposed spec reads differently from nvdisasm."),
                     ("nvdisasm", versions["nvdisasm"]), ("ptxas", versions["ptxas"]), ("cuobjdump", versions["cuobjdump"]), ("seed", SEED)])
    ins = OrderedDict()
    every = {}
    for n, spec in specs.items():
        ins[n], every[n] = instruction_evidence(spec, n, plans[n], seen["SM90"], corpus_words)
    e["instructions"] = ins
    e["other_architectures"] = OrderedDict((a, OrderedDict((n, other_arch(specs[n], plans[n], every[n], seen, a)) for n in specs)) for a in ARCHS if a != "SM90")
    return e


# What the evidence below shows, in words (each claim is a row of the tables that follow or of evidence.json).
FINDINGS = [
    "- **Opcodes**: HSET2 0x033, HSETP2 0x034, HMNMX2 0x040 (one bit from VIMNMX 0x048). A single flipped opcode bit of",
    "  HSET2 or HSETP2 prints HMUL2, HFMA2, HFMA2.MMA, HADD2 or an integer or tensor instruction (the bit-flip evidence).",
    "- **Forms**: all three have the five forms of HMUL2 and HADD2 (R, two immediates, c[], cx[UR], UR), the special source at",
    "  bits 32..63 printed as operand 2. HSET2 and HSETP2 select them with HADD2's codes (1, 2, 3, 3+UR, 7+UR: HFMA2's",
    "  operand-3 codes), HMNMX2 with HMUL2's (1, 4, 5, 5+UR, 6+UR). None reads a register at 64..71.",
    "- **HSETP2 has no register destination**: bits 16..23 are ignored; P at 81..83 and Q at 84..86 are printed first.",
    "- **Comparison** 76..79: all 16 values print (F LT EQ LE GT NE GE NUM NAN LTU EQU LEU GTU NEU GEU T), NAK's codes plus",
    "  F = 0 and T = 15. **Boolean operation** 69..70: AND, OR, XOR, INVALID3. Both are always printed (`.F.AND` on a zero word).",
    "- **BF16_V2 moves**: HSET2/HSETP2 keep the format in a two-bit field at 64..65 (1 INVALID1, 2 BF16_V2, 3 INVALID3), not",
    "  at HMUL2's 78/85 (78 is the comparison's top bit there); HMNMX2 keeps 78/85, but its format 3 **prints nothing** where",
    "  HMUL2 prints `.INVALID3`.",
    "- **HSET2 bit 71** is `.BF` (ptxas: set for a float-typed PTX destination, clear for `.u32`/`.s32`); the same bit of",
    "  HSETP2 is `.H_AND`. HMNMX2's **`.IS_A`** (bit 65) adds two predicate destinations (66..68, 69..71) after the register",
    "  destination (nvdisasm's opclass `hmnmx2_pred`); without it those bits are ignored. ptxas 13.0 emits neither.",
    "- **HMNMX2's min/max** is one opcode with a predicate operand (87..90): ptxas writes `PT` for min and `!PT` for max;",
    "  `.NAN` 81, `.XORSIGN` 82 (ptxas pairs it with `|a|`, `|b|`), `.FTZ` 80; suffix order format, FTZ, NAN, XORSIGN, IS_A.",
    "  HSET2's order is format, BF, comparison, FTZ, boolean operation; HSETP2's format, comparison, H_AND, FTZ, boolean operation.",
    "- **Reuse**: HMNMX2 reuses operand 2 with bit 123 (as HMUL2); HSET2 and HSETP2 with bit **124** and reject 123 with the",
    "  yield bit set (as HADD2). The rest of the control table is HMUL2's (yield: stall 1..11; no yield: reuse 6 and 7",
    "  rejected, a reuse flag needs stall >= 1). So HSET2/HSETP2 follow HADD2's layout and HMNMX2 HMUL2's.",
    "- **Operand text**: a register's half select follows its bars and `.reuse` (`-|R27|.reuse.H1_H1`); a special source's",
    "  sits inside the bars (`-|c[0x14] [-0x4210].H1_H1|`, `|UR34.H1_H1|`).",
    "- **Ignored bits** (every flip and 2000 fully random words per instruction agree): 64, 76, 77, 79, 83, 84, 86 in HMNMX2;",
    "  66..68 in HSET2/HSETP2, 81..86 in HSET2, 16..23 in HSETP2; 92..104 and 125..127 in all; the special slot's unused bits.",
    "- **Other architectures** (nvdisasm 13.2 -b): SM80 prints HMNMX2 bit 78 as `.F32`, format 3 as `.INVALID3`, has no",
    "  `.XORSIGN` or `.IS_A`, and ignores HSET2/HSETP2's 64..65 (no BF16_V2 there); a half select of 1 prints `.F32`",
    "  (`.INVALID1` on SM90) on SM80..SM89. SM86/SM89: as SM80 but with `.XORSIGN` and with format 3 printing nothing.",
    "  SM100/SM120: `.IS_A` as SM90, format 3 `.INVALID3`, no c[] / cx[] forms, an 8-bit UR (bits 38..39; UR63 is not URZ).",
    "  `.H_AND` prints on all six.",
]


# ---- the report --------------------------------------------------------------------------------------------

def md(t):
    return str(t).replace("|", "\\|")


def fmt_bits(x):
    return " + ".join(f"{lo}" if lo == hi else f"{lo}..{hi}" for lo, hi in x["bits"])


def render_doc(specs, ev, versions):
    L = []
    a = L.append
    a("# HMNMX2, HSET2, HSETP2 on SM90: the encodings as nvdisasm reads them")
    a("")
    paths = [os.path.relpath(spec_path(n), ROOT) for n in NAMES]
    built = [n.upper() for n, p in zip(NAMES, paths) if p.startswith(SPEC_DIR)]
    a("Generated by `python3 ci/probe/family.py` from " + ", ".join(f"`{p}`" for p in paths) + " (the specs)")
    a(f"and `{EVIDENCE}` (do not edit by hand). `python3 ci/probe/family.py --check` asks the pinned")
    a("tools again and exits 1 if this file or the evidence differs from what they say now, 2 if they cannot be run;")
    a("`cargo test -p hmul2-harness --test integration family_probe::` runs it. The build reads the specs in `harness/spec/sm90/`")
    a("(" + (", ".join(built) + ": the typed layer encodes, decodes, renders and parses them" if built else "none of these yet") + "); a spec in")
    a("`harness/spec/proposed/sm90/` is not read by the build.")
    a("")
    a(f"Tools: nvdisasm `{versions['nvdisasm']}`, ptxas `{versions['ptxas']}`, cuobjdump `{versions['cuobjdump']}`. Random seed `{SEED}`.")
    a("")
    a("## Method")
    a("")
    a("A form's word is its fixed codes with guard PT, destination R0, operand 1 R1, operand 2 R2 (or the special slot's low bits 2),")
    a("the predicate source PT (and `.BF` set for HSET2, as ptxas writes a float result), stall 1 and the yield bit. Per instruction,")
    a("every word goes to `nvdisasm -b SM90` in batches (`ci/probe/nvd.py`):")
    a("")
    a("1. all 16 operand-form codes (`operand_form` x `ureg_flag`) on the first form's word;")
    a("2. every value of every field of every form up to 6 bits wide, a fixed sample of a wider one;")
    a("3. every single-bit flip of every form's word (128 per form);")
    a("4. the control table: yield 0/1 x reuse 0..7 x stall 0..15 on every form;")
    a(f"5. {RANDOM_FIELDS} random words of random forms with random field values (seed `{SEED}-<name>-fields`, Python `random.Random`), and")
    a(f"   {RANDOM_RAW} with every bit random but the opcode and the form codes (seed `{SEED}-<name>-raw`; stall 1..11, reuse 0);")
    a("6. the words of the spec's `evidence` entries.")
    a("")
    a("The spec is the model: each word is decoded with it and its verdict (constraints) and whole text (guard, suffixes, every")
    a("operand with its modifiers, immediates spelled by `harness/isa/src/isa/floattext.rs`'s rule) are compared with nvdisasm's.")
    a("The same words go to `nvdisasm -b` SM80, SM86, SM89, SM100 and SM120, and `ci/probe/family.ptx` (min/max/set/setp on f16x2 and")
    a("bf16x2, every comparison, the boolean operations, `.ftz`, `.NaN`, `.xorsign.abs`, integer and float `set` results) through")
    a("`ptxas -arch sm_90` is the corpus of what ptxas emits.")
    a("")
    a("## Findings")
    a("")
    for line in FINDINGS:
        a(line)
    a("")
    a("## Agreement")
    a("")
    a("| instruction | words asked | rejected | prints nothing | spec mismatches | ptxas corpus words (agreeing) |")
    a("|---|---|---|---|---|---|")
    for n, spec in specs.items():
        r = ev["instructions"][n]
        agree = sum(1 for c in r["ptxas_corpus"] if c["spec"] == "agrees")
        a(f"| {spec['mnemonic']} | {r['illegal']['words_asked']} | {r['illegal']['rejected']} | {r['illegal']['prints_nothing']} | {len(r['spec_mismatches'])} | {len(r['ptxas_corpus'])} ({agree}) |")
    a("")
    for n, spec in specs.items():
        bad = ev["instructions"][n]["spec_mismatches"]
        if bad:
            a(f"{spec['mnemonic']}: the spec disagrees with nvdisasm on {len(bad)} words, e.g. " +
              "; ".join(f"`{b['word']}`: nvdisasm `{md(b['nvdisasm'])}`, spec `{md(b['spec'])}`" for b in bad[:5]))
            a("")
    for n, spec in specs.items():
        render_instruction(a, spec, ev["instructions"][n])
    render_meaning(a, specs, ev)
    render_typed_layer(a, specs)
    render_other_archs(a, specs, ev)
    return "\n".join(L) + "\n"


def render_instruction(a, spec, r):
    f = spec["f"]
    a(f"## {spec['mnemonic']} (opcode {r['opcode']})")
    a("")
    a(f"Shape: writes {', '.join(spec['shape']['writes'])}" + (f" (and {', '.join(f'{k}: ' + ', '.join(v) for k, v in spec['shape']['writes_when'].items())})" if "writes_when" in spec["shape"] else "")
      + f"; reads {', '.join(spec['shape']['reads'])}. Text: `{spec['mnemonic']}" + "".join(f"{{.{s}}}" for s in spec["text"]["suffixes"]) + " "
      + ", ".join(spec["text"]["operands"]) + "`.")
    a("")
    a("### Forms")
    a("")
    a("| form | syntax | operand_form, ureg_flag | word | nvdisasm |")
    a("|---|---|---|---|---|")
    for form in spec["forms"]:
        x = r["forms"][form["key"]]
        a(f"| {form['key']} | `{form['syntax']}` | {form['fixed']['operand_form']}, {form['fixed']['ureg_flag']} | `{x['word']}` | `{md(x['nvdisasm'])}` |")
    a("")
    codes = [c for c in r["operand_forms"] if not accepted(c["nvdisasm"])]
    a("Operand-form codes that are no form (rejected): " + ", ".join(f"({c['operand_form']},{c['ureg_flag']})" for c in codes) + ".")
    a("")
    a("### Fields")
    a("")
    a("Per field: its bits, kind, and each probed value's text in the first form that has the field (the other forms print the")
    a("same modifier; every value of every form is in the evidence). `hidden`: ignored while the named condition holds.")
    a("")
    a("| field | bits | kind | forms | meaning (the spec's doc) | values: nvdisasm text |")
    a("|---|---|---|---|---|---|")
    for name, x in f.items():
        forms = [fm["key"].split("_", 1)[1] for fm in spec["forms"] if name in form_fields(spec, fm)]
        first = next(fm for fm in spec["forms"] if name in form_fields(spec, fm))
        rows = r["fields"].get(first["key"], {}).get(name)
        if rows is None:
            cell = "fixed per form: " + ", ".join(f"{fm['key'].split('_', 1)[1]} {fm['fixed'][name]}" for fm in spec["forms"])
        elif "values" in x or width(x) <= 4:
            cell = "<br>".join(f"{v['value']}: `{md(v['nvdisasm'])}`" for v in rows)
        else:
            cell = "<br>".join(f"{v['value']}: `{md(v['nvdisasm'])}`" for v in rows[:4]) + (f"<br>... {len(rows)} values probed" if len(rows) > 4 else "")
        hid = [h["id"] for h in spec.get("hidden", []) if h["field"] == name]
        for h in hid:
            lifted = r["fields"][first["key"]].get(f"{name} ({h} lifted)", [])
            cell += f"<br>with {h} lifted: " + "<br>".join(f"{v['value']}: `{md(v['nvdisasm'])}`" for v in lifted)
        a(f"| {name} | {fmt_bits(x)} | {x.get('kind', '')} | {' '.join(forms) if len(forms) < len(spec['forms']) else 'all'} | {md(x.get('doc', ''))} | {cell}{' (hidden: ' + ', '.join(hid) + ')' if hid else ''} |")
    a("")
    for form in spec["forms"]:
        own = set()
        for name in form_fields(spec, form):
            for lo, hi in f[name]["bits"]:
                own |= set(range(lo, hi + 1))
        ign = [b for b in range(128) if b not in own]
        same = [x["bit"] for x in r["bit_flips"][form["key"]] if x["nvdisasm"] == r["forms"][form["key"]]["nvdisasm"]]
        a(f"- {form['key']}: bits in no field: {compress(ign)}; bits whose flip leaves the text unchanged: {compress(same)}.")
    a("")
    a("### Constraints (control table)")
    a("")
    for c in spec["constraints"]:
        a(f"- `{c['id']}`" + (f" ({', '.join(c['forms'])})" if "forms" in c else "") + f": {c['doc']}")
    a("")
    a("Stall counts nvdisasm accepts, per form, yield and reuse value:")
    a("")
    keys = list(r["control"])
    a("| yield, reuse | " + " | ".join(k.split("_", 1)[1] for k in keys) + " |")
    a("|---|" + "---|" * len(keys))
    for row in r["control"][keys[0]]:
        a(f"| {row.replace('yield ', '').replace(' reuse ', ', ')} | " + " | ".join(r["control"][k][row] for k in keys) + " |")
    a("")
    a("### Errata and evidence")
    a("")
    a("Where an assumption by analogy with HMUL2's seed page (or NAK's encoder) would be wrong, and what nvdisasm says (every word")
    a("is re-asked by `--check`):")
    a("")
    for e in spec["evidence"]:
        a(f"- **{e['id']}** ({', '.join(e['fields']) or 'no field'}). Assumed: {e['seed']}. nvdisasm: {e['nvdisasm']}. Words: " +
          "; ".join(f"`{w['hex']}` `{md(w['nvdisasm'])}`" for w in e["words"][:6]) + (f"; {len(e['words']) - 6} more" if len(e["words"]) > 6 else ""))
    a("")
    a("### Random and illegal words")
    a("")
    for kind, x in r["random"].items():
        a(f"- random ({kind}, seed `{x['seed']}`): {x['words']} words: " + ", ".join(f"{v} {k}" for k, v in x["verdicts"].items()) + ".")
    a(f"- Rejections among the {r['illegal']['words_asked']} words asked, by nvdisasm's message (numbers as N):")
    for k in r["illegal"]["kinds"][:12]:
        a(f"  - {k['count']}x `{md(k['message'])}` (`{k['example']}`)")
    if len(r["illegal"]["kinds"]) > 12:
        a(f"  - and {len(r['illegal']['kinds']) - 12} more kinds (evidence.json)")
    a("- Every suffix nvdisasm printed for it in all these words: " + ", ".join(f"`.{k}` ({v['count']})" for k, v in r["suffixes_printed"].items()) + ".")
    a("")
    a("### ptxas 13.0 corpus (`ci/probe/family.ptx`, -arch sm_90)")
    a("")
    seen = OrderedDict()
    for c in r["ptxas_corpus"]:
        key = re.sub(r"\bR\d+\b", "R", re.sub(r"\bP[0-6]\b", "P", c["cuobjdump"].replace(".reuse", "")))
        seen.setdefault(key, c)
    a(f"{len(r['ptxas_corpus'])} words, {len(seen)} shapes (registers and predicates numbered alike), each with the spec's verdict:")
    a("")
    for k, c in seen.items():
        a(f"- `{md(c['cuobjdump'])}` `{c['word']}`: {c['spec'] if c['spec'] == 'agrees' else 'spec reads ' + md(c['spec'])}")
    a("")


def corpus_values(spec, r, name):
    """How often the ptxas corpus uses each value of a field (decoded with the spec)."""
    return Counter(c["fields"][name] for c in r["ptxas_corpus"] if c["fields"] and name in c["fields"])


def value_name(x, v):
    if "values" in x:
        return x["values"][v] or "(none)"
    if x.get("kind") in ("pred", "pred_dst"):
        return "PT" if v == 7 else f"P{v}"
    return str(v)


def render_meaning(a, specs, ev):
    a("## What ptxas emits, and the modifiers it never does: IS_A, H_AND and the INVALIDn values")
    a("")
    a("The values the ptxas corpus uses, per field (decoded with the spec; registers, control bits and the special source left out):")
    a("")
    skip = {"kind": ("reg", "ureg", "control", "imm16", "offset", "bank")}
    for n, spec in specs.items():
        r = ev["instructions"][n]
        forms = Counter(form_of(spec, int(c["word"], 16))["key"].split("_", 1)[1] for c in r["ptxas_corpus"])
        cells = ["form: " + ", ".join(f"{k} ({forms[k]})" for k in sorted(forms))]
        for name in spec["common_fields"] + ["b_neg", "b_abs", "b_swizzle"]:
            x = spec["f"][name]
            if x.get("kind") in skip["kind"]:
                continue
            c = corpus_values(spec, r, name)
            cells.append(f"{name}: " + ", ".join(f"{value_name(x, v)} ({c[v]})" for v in sorted(c)))
        a(f"- {spec['mnemonic']} ({len(r['ptxas_corpus'])} words): " + "; ".join(cells) + ".")
    a("")
    a("Every value nvdisasm names `INVALIDn`, `IS_A` or `H_AND`, its text on the first form's word, and how often ptxas emits it:")
    a("")
    a("| instruction | field = value | nvdisasm (word) | in the ptxas corpus |")
    a("|---|---|---|---|")
    for n, spec in specs.items():
        r = ev["instructions"][n]
        key = spec["forms"][0]["key"]
        for name, x in spec["f"].items():
            for i, v in enumerate(x.get("values", [])):
                if v and (v.startswith("INVALID") or v in ("IS_A", "H_AND")):
                    row = next(w for w in r["fields"][key][name] if w["value"] == i)
                    a(f"| {spec['mnemonic']} | {name} = {i} (`{v}`) | `{md(row['nvdisasm'])}` (`{row['word']}`) | {corpus_values(spec, r, name)[i]} |")
    a("")
    a("HMNMX2's format 3 prints nothing (where HMUL2 prints `.INVALID3`). What public sources say of the values ptxas never emits:")
    a("")
    a(f"- `.IS_A` (HMNMX2 bit 65): Mesa NAK ({NAK}) encodes HMNMX2 with bits 78, 80, 81 (`.NAN`), 82 (`.XORSIGN`), 85 and the")
    a("  min/max predicate at 87..90, and never writes bit 65 or 66..71; nvdisasm's opclass name for it is `hmnmx2_pred` and it prints two")
    a("  predicate destinations, as VIMNMX (the integer min/max, opcode 0x048, one bit away) does. A reading consistent with the name")
    a("  and with PTX's `min`/`max` having no such output: per lane, whether the result is operand 1 (`a`), written to the two")
    a("  predicates (one per half). No public source states it: it is an **assumption to settle on hardware** (issue 41).")
    a(f"- `.H_AND` (HSETP2 bit 71): NAK's encoder ({NAK}) writes the bit from `OpHSetP2::horizontal`, and its IR")
    a(f"  ({NAK_IR}) says of that field: \"When not set, each dsts get the result of each lanes. When set, the first dst gets the")
    a("  result of both lanes (res0 && res1) and the second dst gets the negation !(res0 && res1) before applying the accumulator.\"")
    a("  ptxas 13.0 never emits it in the corpus (PTX `setp` on f16x2 writes `p|q`, one lane each). NAK's reading is a public")
    a("  source's claim, not NVIDIA's: an **assumption to settle on hardware** (issue 41), in particular how the boolean operation")
    a("  with the predicate source applies to the second, negated result.")
    a(f"- HSET2 bit 71 (`.BF`): NAK sets it always, with the comment \"This differentiate between integer and fp16 output\"; ptxas")
    a("  sets it for `set.*.f16x2.f16x2` / `.bf16x2.bf16x2` and clears it for `set.*.u32.f16x2` / `.s32` (the corpus above).")
    a("- `.INVALID1` / `.INVALID3` (format 1 / 3 of HSET2 and HSETP2, format 1 of HMNMX2, bool_op 3, the operand half-select 1):")
    a("  nvdisasm's own name for an encoding its tables have no meaning for; no public source gives one and ptxas never emits them.")
    a("  The harness should refuse to generate them (as it does for HMUL2's INVALIDn) until hardware shows what they do.")
    a("")


def render_typed_layer(a, specs):
    a("## What the typed layer must learn")
    a("")
    a("New field kinds the proposed specs use (today's `harness/isa` knows `reg`, `ureg`, `pred`, `flag`, `enum`, `swizzle`,")
    a("`imm16`, `offset`, `bank`, `control`):")
    a("")
    a("| kind | fields | values and their text | proposal |")
    a("|---|---|---|---|")
    a("| `pred_dst` | HSETP2 `p_dst` 81..83, `q_dst` 84..86; HMNMX2 `is_a_p` 66..68, `is_a_q` 69..71 | 0..6 `P0`..`P6`, 7 `PT` (a discarded result) | "
      "a `PredDst(u3)` operand; the shape's `writes` lists one `pred` per field; HMNMX2's only with `.IS_A` (`writes_when`), hidden otherwise as HFMA2's `relu_pred` |")
    a(f"| `cmp` | HSET2 / HSETP2 `cmp` 76..79 | {', '.join(f'{i} `{v}`' for i, v in enumerate(specs['hset2']['f']['cmp']['values']))}; always printed | "
      "an enum `FloatCmp` with 16 values: 1..6 the ordered LT EQ LE GT NE GE, 9..14 their unordered forms (code + 8: by name true also when a lane input is NaN), 7 NUM, 8 NAN, 0 F and 15 T (by name constant false / true; NAK's FloatCmpOp has no F or T); what each does with NaN, -0 and FTZ is for the reference and hardware to settle |")
    a(f"| `bool_op` | HSET2 / HSETP2 `bool_op` 69..70 | {', '.join(f'{i} `{v}`' for i, v in enumerate(specs['hset2']['f']['bool_op']['values']))}; always printed | "
      "an enum `PredSetOp { And, Or, Xor, Invalid3 }`; combines each lane's comparison with the predicate source |")
    a("| `pred` as a source | HSET2 / HSETP2 `src_pred` 87..89 + `src_pred_neg` 90; HMNMX2 `sel_pred` + `sel_pred_neg` | `P0`..`P6`, `PT`, with `!` | "
      "a `PredSrc { index: u3, neg: bool }` operand read by the instruction (not the guard): the shape's `reads` ends with `pred` |")
    a("| `flag` with a suffix | HMNMX2 `ftz`, `nan`, `xorsign`, `is_a`; HSET2 `bf`, `ftz`; HSETP2 `h_and`, `ftz` | 0 nothing, 1 the suffix | "
      "today's `flag` kind with `values` [\"\", NAME]; the renderer prints them in `text.suffixes` order |")
    a("| `enum` at new bits | HSET2 / HSETP2 `format` 64..65 | 0 (none: FP16), 1 `INVALID1`, 2 `BF16_V2`, 3 `INVALID3` | HMUL2's `format` values at other bits: the typed `Format` enum is shared, its bits are data |")
    a("")
    a("New spec keys: `text` (`suffixes`: the suffix fields in nvdisasm's order; `operands`: the operand order, `b` standing for")
    a("the form's operand 2), `shape.writes_when` (outputs that exist only with a flag), `base` (the field values of a form's")
    a("canonical word beyond the shared ones). Operand order in nvdisasm's text:")
    a("")
    for n, spec in specs.items():
        ex = {"hmnmx2": ["HMNMX2.XORSIGN R5, |R0|, |R5|, !PT", "HMNMX2.BF16_V2.FTZ.NAN.XORSIGN.IS_A R0, P3, P5, R1, R2, PT"],
              "hset2": ["HSET2.BF.LTU.AND R13, R0, R5, PT", "HSET2.BF16_V2.BF.LE.FTZ.OR R0, R1, R2, !P1"],
              "hsetp2": ["HSETP2.LE.AND P0, P1, R0, R5, PT", "HSETP2.BF16_V2.LE.H_AND.FTZ.OR P3, P6, R1, R2, PT"]}[n]
        a(f"- {spec['mnemonic']}: `{spec['mnemonic']}" + "".join(f"[.{s}]" for s in spec["text"]["suffixes"]) + " " + ", ".join(spec["text"]["operands"]) +
          "`" + (" (is_a_p, is_a_q only with .IS_A)" if n == "hmnmx2" else "") + ", e.g. " + ", ".join(f"`{e}`" for e in ex))
    a("")
    a("Operand 2's forms: HMNMX2 uses HMUL2's operand-form codes (1 R, 4 immediates, 5 c[], 5+UR cx[], 6+UR UR); HSET2 and HSETP2")
    a("use HADD2's (1 R, 2 immediates, 3 c[], 3+UR cx[], 7+UR UR), with the special source at bits 32..63 printed as operand 2")
    a("in both. Two-source instructions thus come in two code families; a form's code stays data (`fixed`), as today.")
    a("Reuse: HMNMX2 operand 2 is reuse bit 1 (123), HSET2/HSETP2 operand 2 reuse bit 2 (124), as HADD2: the spec's")
    a("`operand_reuse` says which, as today.")
    a("")


def render_other_archs(a, specs, ev):
    a("## Other architectures")
    a("")
    a("The same words through `nvdisasm -b <ARCH>`, against SM90's answers. Buckets, then the commonest kinds of difference")
    a("(tokens of SM90's text gone / new) with a word each:")
    a("")
    for arch, per in ev["other_architectures"].items():
        for n, spec in specs.items():
            x = per[n]
            a(f"- {arch} {spec['mnemonic']}: " + ", ".join(f"{v} {k}" for k, v in x["buckets"].items()) + ". " +
              "; ".join(f"{v['count']}x {md(k)} (`{v['example']}`: `{md(v['nvdisasm'])}`, SM90 `{md(v['sm90'])}`)" for k, v in list(x["kinds"].items())[:4]))
    a("")
    a("Per architecture and instruction: the forms whose word is not printed as on SM90, the (form, field) pairs with values")
    a("printed differently (both refusing, in other words, is not a difference), and the bits whose single flip reads differently")
    a("(both only over the forms the architecture has):")
    a("")
    a("| arch | instruction | forms differing | fields differing: values (example) | flipped bits differing |")
    a("|---|---|---|---|---|")
    for arch, per in ev["other_architectures"].items():
        for n, spec in specs.items():
            x = per[n]
            fd = [f"{k.split('_', 1)[1]} `{md(v['nvdisasm'])}`" for k, v in x["forms"].items() if v["nvdisasm"] != v["sm90"]]
            by = OrderedDict()
            for k, v in x["fields_differing"].items():
                form, field = k.split(" ", 1)
                by.setdefault(field, []).append((form.split("_", 1)[1], v))
            cells = []
            for field, rows in by.items():
                v = rows[0][1]
                cells.append(f"{field} ({' '.join(r[0] for r in rows)}): {compress(v['values'])} (`{v['example']['word']}` `{md(v['example']['nvdisasm'])}`, SM90 `{md(v['example']['sm90'])}`)")
            a(f"| {arch} | {spec['mnemonic']} | {'<br>'.join(fd) or 'none'} | {'<br>'.join(cells) or 'none'} | {x['flip_bits_differing'] or 'none'} |")
    a("")


# ---- main --------------------------------------------------------------------------------------------------

def main():
    args = sys.argv[1:]
    if args not in ([], ["--check"]):
        print(f"family.py: unknown arguments {' '.join(args)!r}; usage: python3 ci/probe/family.py [--check]", file=sys.stderr)
        sys.exit(2)
    check = args == ["--check"]
    specs = OrderedDict((n, load_spec(n)) for n in NAMES)
    problems = [f"{n}.json: {p}" for n, s in specs.items() for p in static_problems(s)]
    if problems:
        print("family.py: the proposed specs are not well formed:\n  " + "\n  ".join(problems), file=sys.stderr)
        sys.exit(1)
    nvd.NVD = tool("nvdisasm")
    print(f"family.py: seed {SEED}, nvdisasm {nvd.NVD}, ptxas {tool('ptxas')}, cuobjdump {tool('cuobjdump')}", file=sys.stderr)
    versions = {t: tool_version(t) for t in ("nvdisasm", "ptxas", "cuobjdump")}
    plans = OrderedDict((n, plan_for(s, n)) for n, s in specs.items())
    corpus_words = corpus()
    words = list(OrderedDict.fromkeys(all_words(plans) + [w for w, _ in corpus_words]))
    seen = {}
    for arch in ARCHS:
        seen[arch] = dict(zip(words, (t if t.startswith("REJ") else verdict(t) for t in disasm(words, arch=arch))))
        print(f"{arch}: {len(words)} words asked", file=sys.stderr)
    ev = evidence(specs, plans, seen, versions, corpus_words)
    files = OrderedDict([(EVIDENCE, dump(ev)), (os.path.join("docs", "family.md"), render_doc(specs, ev, versions))])
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
                print(f"{rel}: differs from what the tools say now (regenerate: python3 ci/probe/family.py)", file=sys.stderr)
            else:
                print(f"{rel}: ok", file=sys.stderr)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(text)
            print(f"wrote {rel}", file=sys.stderr)
    wrong = OrderedDict((n, r["spec_mismatches"]) for n, r in ev["instructions"].items() if r["spec_mismatches"])
    for n, ms in wrong.items():
        print(f"{n}.json: the spec reads {len(ms)} words differently from nvdisasm, e.g.", file=sys.stderr)
        for m in ms[:5]:
            print(f"  {m['word']}: nvdisasm {m['nvdisasm']!r}, spec {m['spec']!r}", file=sys.stderr)
    sys.exit(1 if bad or wrong else 0)


if __name__ == "__main__":
    try:
        main()
    except (OSError, RuntimeError, subprocess.SubprocessError, IndexError) as e:
        print(f"family.py: {type(e).__name__}: {e} (are the pinned tools in $HMUL2_NVDISASM / $HMUL2_PTXAS / $HMUL2_CUOBJDUMP, .tools/bin or PATH? bash ci/install-tools.sh)", file=sys.stderr)
        sys.exit(2)
