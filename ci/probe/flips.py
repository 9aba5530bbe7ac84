"""Single-bit flips of one word per form of HFMA2 / HFMA2.MMA; prints each bit's outcome."""
import sys
from nvd import disasm
BASE = 0x000fe200000000000000000201007231 | 3 << 64   # c = R3
def forms(op):
    for name, of, u in [("rrrr",1,0),("imm",4,0),("const",5,0),("constx",5,1),("ur",6,1),("imm-c",2,0),("const-c",3,0),("constx-c",3,1),("ur-c",7,1)]:
        w = (BASE & ~0x1ff & ~(7 << 9)) | op | of << 9 | u << 91
        yield name, w
if __name__ == "__main__":
    op = int(sys.argv[1], 16)
    only = sys.argv[2:] 
    for name, w in forms(op):
        if only and name not in only: continue
        ws = [w] + [w ^ 1 << b for b in range(128)]
        v = disasm(ws)
        print(f"== {name} 0x{w:032x} {v[0]}")
        for b in range(128):
            t = v[b + 1]
            print(f"  bit {b:3}: {'same' if t == v[0] else t}")
