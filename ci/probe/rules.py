"""Reuse/yield/stall/format combinations per form (HFMA2 rules), and format 3 (prints nothing)."""
import sys
from nvd import disasm
from flips import forms
op = int(sys.argv[1], 16)
for name, w0 in forms(op):
    w0 &= ~(0x3f << 105 | 7 << 122)   # clear stall, yield, reuse
    lab = []; ws = []
    for fmt in (0, 1):
        for y in (0, 1):
            for st in (0, 1, 11, 12):
                for r in range(8):
                    w = w0 | fmt << 78 | y << 109 | st << 105 | r << 122
                    lab.append((fmt, y, st, r)); ws.append(w)
    v = disasm(ws)
    print("==", name)
    for fmt in (0, 1):
        for y in (0, 1):
            for st in (0, 1, 11, 12):
                ok = "".join("R" if v[lab.index((fmt, y, st, r))].startswith("REJ") else ("E" if v[lab.index((fmt, y, st, r))] == "EMPTY" else ".") for r in range(8))
                print(f"  fmt{fmt} yield{y} stall{st:2} reuse0..7: {ok}")
