"""Batched nvdisasm for probing (used to derive harness/spec/sm90/hfma2*.json and, with `arch`,
harness/spec/arch/*/evidence.json).

disasm(words) -> list of verdicts, one per word: the instruction text, 'REJ: msg' when
nvdisasm rejects the word, or 'EMPTY' when it exits 0 and lists nothing at the word's address.
"""
import os, re, subprocess, sys, tempfile

NVD = os.environ.get("HMUL2_NVDISASM") or os.path.join(os.path.dirname(__file__), "..", "..", ".tools", "bin", "nvdisasm")
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
ERR = re.compile(r"nvdisasm error\s*:\s*(.*?) at address 0x([0-9a-f]+)")


def _run(words, arch="SM90"):
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        for w in words:
            f.write(w.to_bytes(16, "little"))
        name = f.name
    try:
        r = subprocess.run([NVD, "-b", arch, name], capture_output=True, text=True)
    finally:
        os.unlink(name)
    return r


def disasm(words, chunk=20000, arch="SM90"):
    out = []
    for s in range(0, len(words), chunk):
        out.extend(_disasm(words[s:s + chunk], arch))
    return out


def _disasm(words, arch="SM90"):
    res = [None] * len(words)
    todo = list(range(len(words)))
    for _ in range(50):
        if not todo:
            break
        r = _run([words[i] for i in todo], arch)
        if r.returncode != 0:
            bad = {int(a, 16) // 16: m for m, a in ERR.findall(r.stderr)}
            if not bad:
                raise RuntimeError(r.stderr)
            for k, m in bad.items():
                res[todo[k]] = "REJ: " + m
            todo = [i for k, i in enumerate(todo) if k not in bad]
            continue
        got = {int(a, 16) // 16: t for a, t in LINE.findall(r.stdout)}
        for k, i in enumerate(todo):
            res[i] = got.get(k, "EMPTY")
        todo = []
    return res


if __name__ == "__main__":
    args = sys.argv[1:]
    arch = args.pop(0) if args and args[0].upper().startswith("SM") else "SM90"
    ws = [int(a, 16) for a in args]
    for w, v in zip(ws, disasm(ws, arch=arch)):
        print(f"0x{w:032x} {v}")
