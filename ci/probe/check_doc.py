"""Re-asks nvdisasm every `0x... → text` pair of a Markdown file (docs/hfma2-vs-hmul2.md):
python3 ci/probe/check_doc.py docs/hfma2-vs-hmul2.md; exit 1 on any difference."""
import re, sys
from nvd import disasm

text = open(sys.argv[1]).read()
pairs = re.findall(r'`(0x[0-9a-f]{32})` → (`[^`]*`|\(nothing\))', text)
bad = 0
for (word, want), got in zip(pairs, disasm([int(w, 16) for w, _ in pairs])):
    want = want.strip('`').replace('\\|', '|')
    ok = got == "EMPTY" if want == "(nothing)" else got == want
    bad += not ok
    print("ok " if ok else "BAD", word, want, "|", got)
print(f"{len(pairs)} words, {bad} differ")
sys.exit(1 if bad else 0)
