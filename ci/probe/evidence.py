"""The `evidence` lists of harness/spec/sm90/hfma2.json and hfma2_mma.json: each entry's words
are disassembled here and recorded with nvdisasm's text ("rejected" when it refuses a word,
"prints nothing" when it exits 0 with no line for it). Prints JSON: {"hfma2.json": [...], ...}."""
import json
from nvd import disasm

B = 0x000fe200000000000000000201007231  # HFMA2 R0, R1, R2, R0
FORMS = [("R_R_R_R", 1, 0), ("R_R_F_F_R", 4, 0), ("R_R_I_I_R", 5, 0), ("R_R_UR_I_R", 5, 1), ("R_R_UR_R", 6, 1),
         ("R_R_R_F_F", 2, 0), ("R_R_R_I_I", 3, 0), ("R_R_R_UR_I", 3, 1), ("R_R_R_UR", 7, 1)]


def form(op, of, u, base=B):
    return (base & ~0x1ff & ~(7 << 9) & ~(1 << 91)) | op | of << 9 | u << 91


def entries(mma):
    op = 0x35 if mma else 0x31
    K = "HFMA2_MMA" if mma else "HFMA2"
    keys = [f"{K}_{k}" for k, _, _ in FORMS]
    b = form(op, 1, 0)
    f = {f"{K}_{k}": form(op, of, u) for k, of, u in FORMS}
    fk = lambda k: f[k] | 3 << 64  # operand 3 / register slot = R3
    E = []

    def e(id, forms, fields, seed, nv, words):
        E.append({"id": id, "forms": forms, "fields": fields, "seed": seed, "nvdisasm": nv, "words": words})

    e("opcode", keys, ["opcode"], "HMUL2 is opcode 0x032", f"{'HFMA2.MMA' if mma else 'HFMA2'} is opcode {op:#05x} in bits 0..8; bit 2 flipped is the other of HFMA2 / HFMA2.MMA",
      [b, b ^ 4, form(0x30, 1, 0)])
    e("operand-form-codes", keys, ["operand_form", "ureg_flag"], "HMUL2's codes are 1 register, 4 immediates, 5 constant, 6 uniform register (operand 2)",
      "1 all registers; 4, 5, 6 (HMUL2's codes) put the special source in operand 2 and 2, 3, 7 (HADD2's codes) in operand 3; cx[] is the constant code with ureg_flag 1; 0 and the other ureg_flag values are rejected",
      [form(op, of, u) for of in range(8) for u in (0, 1)])
    e("predicate", keys, ["pred", "pred_neg"], "as HMUL2", "bits 12..14 the guard predicate (7 = PT), bit 15 negates it", [b & ~(7 << 12) | 2 << 12 | 1 << 15, b | 7 << 12 | 1 << 15, b & ~(7 << 12) | 5 << 12])
    e("registers", keys, ["dst", "a", "b_reg", "c_reg"], "HMUL2 has no operand 3", "destination 16..23, operand 1 24..31, operand 2 32..39 (all-register form), operand 3 64..71 (the register slot); 255 is RZ",
      [b | 0xfe << 16 | 0x80 << 32 | 0xff << 64, b | 0xff << 24 | 0x7 << 64])
    e("special-slot", keys[1:], ["imm_lo", "imm_hi", "cb_offset", "cb_bank", "b_ureg"], "HMUL2's operand 2 at 32..63",
      "the special source sits at 32..63 wherever it is printed (operand 2 or 3); the register slot 64..71 is then the other source" + ("; constants print without a space: c[0x3][0x14]" if mma else ""),
      [fk(keys[1]) | 0x3c00 << 48 | 0x4000 << 32, fk(keys[5]) | 0x3c00 << 48 | 0x4000 << 32, fk(keys[2]) | 3 << 54 | 5 << 40, fk(keys[6]) | 0x1f << 54 | 0x3fff << 40,
       fk(keys[3]) | 63 << 32 | 0x3fff << 40, fk(keys[7]) | 5 << 32 | 4 << 40, fk(keys[4]) | 61 << 32, fk(keys[8]) | 63 << 32])
    e("special-slot-modifiers", [k for k in keys if "F_F" not in k], ["b_neg", "b_abs", "b_swizzle"], "as HMUL2's operand 2",
      "62 |x| and 63 -x of the special slot, for operand 2 or operand 3, whichever it holds" + ("; HFMA2.MMA has no half selects (60..61 ignored)" if mma else "; 60..61 its half select (operand 3: INVALID1, H0_H0, H1_H1)"),
      [fk(keys[0]) | 0xf << 60, fk(keys[2]) | 0xd << 60, fk(keys[6]) | 0xd << 60, fk(keys[8]) | 0xe << 60])
    e("register-slot-modifiers", keys, ["c_neg", "c_abs"] + ([] if mma else ["c_swizzle"]), "HMUL2 has no operand 3",
      "83 |x| and 84 -x of the register slot (operand 3, or operand 2 where the special source is operand 3)" + ("; 81..82 ignored (no half selects)" if mma else "; 81..82 its half select (operand 3: INVALID1, H0_H0, H1_H1; operand 2: F32, H0_H0, H1_H1)"),
      [fk(keys[0]) | 0xf << 81, fk(keys[1]) | 0x3 << 83 | 1 << 81, fk(keys[5]) | 0xf << 81, fk(keys[6]) | 0x1 << 81])
    if not mma:
        e("operand2-half-select", [k for k in keys if k != keys[1]], ["b_swizzle", "c_swizzle", "b_swizzle_hi"], "HMUL2's operand-2 half select is 2 bits: INVALID1, H0_H0, H1_H1",
          "operand 2's half select has 3 bits: its slot's two (60..61 or 81..82) and bit 86; 1 prints F32, 4 H0_NH1, 5..7 INVALID5..7",
          [fk(keys[0]) | 1 << 60, fk(keys[0]) | 1 << 86, fk(keys[0]) | 1 << 86 | 3 << 60, fk(keys[2]) | 1 << 86 | 1 << 60, fk(keys[5]) | 1 << 81, fk(keys[5]) | 1 << 86, fk(keys[8]) | 1 << 86 | 2 << 81])
    else:
        e("no-half-selects", keys, ["a_swizzle", "b_swizzle"], "HMUL2 (and HFMA2) print half selects at 60..61 and 74..75",
          "HFMA2.MMA ignores bits 60..61, 74..75, 81..82 and 86: the same text with them set",
          [fk(keys[0]), fk(keys[0]) | 3 << 60 | 3 << 74 | 3 << 81 | 1 << 86, fk(keys[2]) | 1 << 60])
    e("operand1-modifiers", keys, ["a_neg", "a_abs"] + ([] if mma else ["a_swizzle"]), "as HMUL2", "72 -x, 73 |x|" + ("" if mma else ", 74..75 half select"), [fk(keys[0]) | 0xf << 72, fk(keys[0]) | 1 << 74])
    e("flush", keys, ["flush"], "HMUL2's flush: 1 FMZ (76), 2 FTZ (80), 3 INVALID3", "the same bits: 1 FMZ, 2 FTZ, 3 " + ("INVALID3" if mma else "OOB"),
      [fk(keys[0]) | 1 << 76, fk(keys[0]) | 1 << 80, fk(keys[0]) | 1 << 76 | 1 << 80])
    e("sat", keys, ["sat"], "as HMUL2", "bit 77 .SAT, printed after the flush mode", [fk(keys[0]) | 1 << 77 | 1 << 80])
    if not mma:
        e("format-f32", keys, ["format"], "HMUL2's bits 78 and 85: 1 INVALID1, 2 BF16_V2, 3 INVALID3", "1 (bit 78) is .F32 (two immediates still printed), 2 .BF16_V2 (immediates as BF16)",
          [fk(keys[0]) | 1 << 78, fk(keys[1]) | 1 << 78 | 0x3c00 << 48 | 0x4000 << 32, fk(keys[1]) | 1 << 85 | 0x3c00 << 48 | 0x4000 << 32, fk(keys[0]) | 1 << 78 | 1 << 77 | 1 << 76])
        e("f32-bf16-prints-nothing", keys, ["format"], "HMUL2 prints format 3 as .INVALID3",
          "format 3 (.F32 with .BF16_V2): nvdisasm exits 0 and prints nothing for the word, in every form; a word that breaks another rule as well is rejected",
          [f[k] | 1 << 78 | 1 << 85 for k in keys] + [fk(keys[0]) | 1 << 78 | 1 << 85 | 1 << 79, fk(keys[0]) & ~(0xf << 105) | 1 << 78 | 1 << 85, fk(keys[0]) | 1 << 78 | 1 << 85 | 1 << 79 | 1 << 77])
    else:
        e("format", keys, ["format"], "as HMUL2", "bits 78 and 85 as HMUL2: 1 INVALID1, 2 BF16_V2, 3 INVALID3 (HFMA2 prints nothing for 3)",
          [fk(keys[0]) | 1 << 78, fk(keys[0]) | 1 << 85, fk(keys[0]) | 1 << 78 | 1 << 85, fk(keys[0]) | 1 << 78 | 1 << 76 | 1 << 80])
    e("relu", keys, ["relu", "relu_pred", "relu_pred_neg", "sat"], "HMUL2 has no .RELU",
      "bit 79 .RELU (after .SAT's place) adds a predicate operand after the last source: 87..89 (PT not printed), 90 negates it; without .RELU those bits are ignored; .RELU with .SAT is rejected",
      [fk(keys[0]) | 1 << 79, fk(keys[0]) | 1 << 79 | 7 << 87, fk(keys[0]) | 1 << 79 | 7 << 87 | 1 << 90, fk(keys[0]) | 1 << 79 | 5 << 87 | 1 << 90 | 1 << 76,
       fk(keys[5]) | 1 << 79 | 2 << 87, fk(keys[0]) | 5 << 87 | 1 << 90, fk(keys[0]) | 1 << 79 | 1 << 77])
    y = lambda w, r: (w & ~(7 << 122)) | r << 122
    e("reuse-flags", keys, ["reuse", "yield", "stall"], "HMUL2: bit 122 operand 1, 123 operand 2, 124 a third source it lacks",
      "bit 122 operand 1, 123 operand 2, 124 operand 3, each only on a register; .reuse printed with the yield bit set; without yield flags 6..7 are rejected and any flag needs a stall of 1 or more",
      [y(fk(keys[0]), 7), y(fk(keys[1]), 5), y(fk(keys[1]), 2), y(fk(keys[5]), 3), y(fk(keys[5]), 4), y(fk(keys[0]) & ~(1 << 109), 6), y(fk(keys[0]) & ~(0x1f << 105), 1)])
    e("yield-needs-stall", keys, ["yield", "stall"], "as HMUL2", "with the yield bit set, a stall of 0 or 12..15 is rejected",
      [fk(keys[0]) & ~(0xf << 105), fk(keys[0]) | 0xc << 105, (fk(keys[0]) & ~(0x1f << 105))])
    e("ignored-bits", keys, [], "HMUL2 ignores 79, 81..84, 86..90, 92..104 and 125..127",
      "ignored: 59, 92..104, 125..127 (and the unused bits of the special slot)" + ("; 60..61, 74..75, 81..82, 86 too (no half selects)" if mma else ""),
      [fk(keys[0]) | 1 << 59, fk(keys[0]) | 0x1fff << 92, fk(keys[0]) | 7 << 125, fk(keys[4]) | 3 << 38])
    # verify: ask nvdisasm
    allw = [w for x in E for w in x["words"]]
    v = dict(zip(allw, disasm(allw)))
    for x in E:
        x["words"] = [{"hex": f"0x{w:032x}", "nvdisasm": "rejected" if v[w].startswith("REJ") else ("prints nothing" if v[w] == "EMPTY" else v[w])} for w in x["words"]]
    return E


if __name__ == "__main__":
    print(json.dumps({"hfma2.json": entries(False), "hfma2_mma.json": entries(True)}, indent=1))
