"""Writes harness/spec/sm90/hfma2.json and hfma2_mma.json from the probe results (the fields,
forms and rules below; the evidence from `python3 evidence.py > evidence.json`, which re-asks
nvdisasm). How the two specs were first written; they are data, checked by the tests."""
import os
HERE = os.path.dirname(os.path.abspath(__file__))
import json, sys
def build(mma):
    M = "HFMA2.MMA" if mma else "HFMA2"
    K = "HFMA2_MMA" if mma else "HFMA2"
    op = 0x35 if mma else 0x31
    F = []
    def f(name, bits, doc, **kw):
        d = {"name": name, "bits": bits}
        d.update(kw); d["doc"] = doc; F.append(d)
    f("opcode", [[0, 8]], f"Major opcode; {op:#05x} is {M} (0x031 HFMA2, 0x035 HFMA2.MMA, 0x030 HADD2, 0x032 HMUL2).")
    f("operand_form", [[9, 11]], "Kind and place of the special source: 1 all registers; 4 two immediates, 5 constant bank (c[] with ureg_flag 0, cx[URn] with 1), 6 uniform register (ureg_flag 1) as operand 2 (HMUL2's codes); 2 immediates, 3 constant bank, 7 uniform register as operand 3 (HADD2's codes for its operand 2). 0 and the other ureg_flag values are rejected.")
    f("pred", [[12, 14]], "Guard predicate P0..P6, 7 = PT.", kind="pred")
    f("pred_neg", [[15, 15]], "Negates the guard predicate (@!Pn).", kind="flag")
    f("dst", [[16, 23]], "Destination register, 255 = RZ.", kind="reg")
    f("a", [[24, 31]], "Operand 1 register, 255 = RZ.", kind="reg")
    f("b_reg", [[32, 39]], "The special slot's register: operand 2 of the all-register form.", kind="reg")
    f("b_ureg", [[32, 37]], "The special slot's uniform register (UR forms) or the uniform register that indexes the constant bank (cx forms); 63 = URZ.", kind="ureg")
    f("imm_lo", [[32, 47]], "Second immediate of the special slot: nvdisasm prints it last.", kind="imm16")
    f("imm_hi", [[48, 63]], "First immediate of the special slot: nvdisasm prints it first.", kind="imm16")
    f("cb_offset", [[40, 53]], "Constant-bank byte offset divided by 4 (signed in the c[] forms, unsigned in the cx[] forms).", kind="offset", scale=4)
    f("cb_bank", [[54, 58]], "Constant bank number.", kind="bank")
    if not mma:
        f("b_swizzle", [[60, 61]], "The special slot's half select: operand 3's in the forms whose special source is operand 3 (values as named here); in the other forms the low two bits of operand 2's half select (see b_swizzle_hi for its names).", kind="swizzle", values=["", "INVALID1", "H0_H0", "H1_H1"])
    else:
        f("b_swizzle", [[60, 61]], "HFMA2.MMA has no half selects: no form uses these bits (nvdisasm ignores them); the field exists because the typed layer names it.", kind="swizzle", values=["", "INVALID1", "H0_H0", "H1_H1"])
    f("b_abs", [[62, 62]], "The special slot's absolute value |x|.", kind="flag")
    f("b_neg", [[63, 63]], "The special slot's negation -x.", kind="flag")
    f("c_reg", [[64, 71]], "The register slot: operand 3 where the special source is operand 2 (or in the all-register form), operand 2 where the special source is operand 3; 255 = RZ.", kind="reg")
    f("a_neg", [[72, 72]], "Operand 1 negation -x.", kind="flag")
    f("a_abs", [[73, 73]], "Operand 1 absolute value |x|.", kind="flag")
    if not mma:
        f("a_swizzle", [[74, 75]], "Operand 1 half select; 0 is the default H1_H0 (lane-wise).", kind="swizzle", values=["", "INVALID1", "H0_H0", "H1_H1"])
    else:
        f("a_swizzle", [[74, 75]], "HFMA2.MMA has no half selects: no form uses these bits (nvdisasm ignores them); the field exists because the typed layer names it.", kind="swizzle", values=["", "INVALID1", "H0_H0", "H1_H1"])
    f("flush", [[76, 76], [80, 80]], "Denormal handling: 1 FMZ, 2 FTZ, 3 " + ("INVALID3 (as HMUL2)." if mma else "OOB (HMUL2 prints INVALID3 for this value)."), kind="enum", values=["", "FMZ", "FTZ", "INVALID3" if mma else "OOB"])
    f("sat", [[77, 77]], "Saturate each lane to [+0, 1]; not accepted with .RELU.", kind="flag", values=["", "SAT"])
    if mma:
        f("format", [[78, 78], [85, 85]], "Lane format: 0 FP16, 1 INVALID1, 2 BF16_V2, 3 INVALID3 (as HMUL2; HFMA2's 1 is F32).", kind="enum", values=["", "INVALID1", "BF16_V2", "INVALID3"])
    else:
        f("format", [[78, 78], [85, 85]], "Lane format: 0 FP16, 1 F32 (printed .F32), 2 BF16_V2; two bits that are not adjacent. Value 3 (.F32 with .BF16_V2) makes nvdisasm print nothing at all for the word (constraint f32-bf16-prints-nothing); its name is a placeholder no text shows.", kind="enum", values=["", "F32", "BF16_V2", "(prints nothing)"])
    f("relu", [[79, 79]], "ReLU: printed .RELU after .SAT's place, and adds a predicate operand after the last source.", kind="flag", values=["", "RELU"])
    if not mma:
        f("c_swizzle", [[81, 82]], "The register slot's half select (2 bits): operand 3's where the special source is operand 2, the low two bits of operand 2's where it is operand 3.", kind="swizzle", values=["", "INVALID1", "H0_H0", "H1_H1"])
    f("c_abs", [[83, 83]], "The register slot's absolute value |x|.", kind="flag")
    f("c_neg", [[84, 84]], "The register slot's negation -x.", kind="flag")
    if not mma:
        f("b_swizzle_hi", [[86, 86]], "Bit 2 of operand 2's half select, in whichever slot operand 2 sits (bits 60..61 or 81..82 are bits 0..1); `operand2_half_selects` names the eight values: 1 prints F32 (INVALID1 in HMUL2), 4 H0_NH1, 5..7 INVALIDn.", kind="swizzle")
    f("relu_pred", [[87, 89]], "The .RELU predicate operand P0..P6, 7 = PT; ignored without .RELU (hidden: no-relu-hides-pred).", kind="pred")
    f("relu_pred_neg", [[90, 90]], "Negates the .RELU predicate operand (!Pn); ignored without .RELU.", kind="flag")
    f("ureg_flag", [[91, 91]], "Uniform-register source: 1 in the UR and cx[UR] forms.")
    f("stall", [[105, 108]], "Control: stall cycles.", kind="control")
    f("yield", [[109, 109]], "Control: yield bit.", kind="control")
    f("wr_bar", [[110, 112]], "Control: scoreboard set when the result is written (7 = none); nvdisasm prints no scoreboards.", kind="control")
    f("rd_bar", [[113, 115]], "Control: scoreboard set when the sources have been read (7 = none).", kind="control")
    f("wait", [[116, 121]], "Control: mask of scoreboards to wait on before issue.", kind="control")
    f("reuse", [[122, 124]], "Control: operand-reuse flags by operand position: bit 0 (122) operand 1, bit 1 (123) operand 2, bit 2 (124) operand 3, only for register operands; printed as .reuse only with the yield bit set; bit 125 is ignored.", kind="control")
    common = ["pred", "pred_neg", "dst", "a", "a_neg", "a_abs"] + ([] if mma else ["a_swizzle"]) + ["flush", "sat", "format", "relu", "relu_pred", "relu_pred_neg", "stall", "yield", "wr_bar", "rd_bar", "wait", "reuse"]
    bm = ["b_neg", "b_abs"] + ([] if mma else ["b_swizzle"])
    cm = ["c_reg", "c_neg", "c_abs"] + ([] if mma else ["c_swizzle"])
    hi = [] if mma else ["b_swizzle_hi"]
    forms = []
    def form(key, syntax, cli, of, u, fields, special, signed=None):
        d = {"key": f"{K}_{key}", "syntax": syntax, "cli": cli, "special": special, "fixed": {"opcode": op, "operand_form": of, "ureg_flag": u}, "fields": fields}
        if signed: d["signed"] = signed
        forms.append(d)
    form("R_R_R_R", "R,R,R,R", "rrrr", 1, 0, ["b_reg"] + bm + hi + cm, 2)
    form("R_R_F_F_R", "R,R,F,F,R", "imm", 4, 0, ["imm_lo", "imm_hi"] + cm, 2)
    form("R_R_I_I_R", "R,R,c[I][I],R", "const", 5, 0, ["cb_bank", "cb_offset"] + bm + hi + cm, 2, ["cb_offset"])
    form("R_R_UR_I_R", "R,R,cx[UR][I],R", "constx", 5, 1, ["b_ureg", "cb_offset"] + bm + hi + cm, 2)
    form("R_R_UR_R", "R,R,UR,R", "ur", 6, 1, ["b_ureg"] + bm + hi + cm, 2)
    form("R_R_R_F_F", "R,R,R,F,F", "imm-c", 2, 0, ["imm_lo", "imm_hi"] + cm + hi, 3)
    form("R_R_R_I_I", "R,R,R,c[I][I]", "const-c", 3, 0, ["cb_bank", "cb_offset"] + bm + cm + hi, 3, ["cb_offset"])
    form("R_R_R_UR_I", "R,R,R,cx[UR][I]", "constx-c", 3, 1, ["b_ureg", "cb_offset"] + bm + cm + hi, 3)
    form("R_R_R_UR", "R,R,R,UR", "ur-c", 7, 1, ["b_ureg"] + bm + cm + hi, 3)
    keys = [x["key"] for x in forms]
    two = keys[1:5]; three = keys[5:]
    cons = []
    if not mma:
        cons.append({"id": "f32-bf16-prints-nothing", "when": {}, "field": "format", "allowed": [[0, 2]], "nvdisasm": "prints nothing", "doc": ".F32 with .BF16_V2 (format 3): nvdisasm prints nothing for the word (exit 0, no line at its address, the rest of the file listed)."})
    cons += [
        {"id": "relu-sat", "when": {"relu": [[1, 1]]}, "field": "sat", "allowed": [[0, 0]], "doc": ".RELU with .SAT is rejected."},
        {"id": "yield-stall", "when": {"yield": [[1, 1]]}, "field": "stall", "allowed": [[1, 11]], "doc": "With the yield bit set, nvdisasm rejects a stall count of 0 and of 12..15 (as HMUL2)."},
        {"id": "yield-reuse-special-b", "forms": two, "when": {"yield": [[1, 1]]}, "field": "reuse", "allowed": [[0, 1], [4, 5]], "doc": "With the yield bit set, operand 2 (not a register in these forms) cannot be reused: bit 1 is rejected."},
        {"id": "yield-reuse-special-c", "forms": three, "when": {"yield": [[1, 1]]}, "field": "reuse", "allowed": [[0, 3]], "doc": "With the yield bit set, operand 3 (not a register in these forms) cannot be reused: bit 2 is rejected."},
        {"id": "noyield-reuse", "when": {"yield": [[0, 0]]}, "field": "reuse", "allowed": [[0, 5]], "doc": "With the yield bit clear, the operand-2 and operand-3 flags are not accepted together (as HMUL2)."},
        {"id": "noyield-reuse-stall", "when": {"yield": [[0, 0]], "reuse": [[1, 7]]}, "field": "stall", "allowed": [[1, 15]], "doc": "With the yield bit clear, any reuse flag needs a stall count of at least 1 (as HMUL2)."},
    ]
    hidden = [
        {"id": "no-relu-hides-pred", "when": {"relu": [[0, 0]]}, "field": "relu_pred", "doc": "Without .RELU nvdisasm ignores the predicate operand's bits 87..89."},
        {"id": "no-relu-hides-pred-neg", "when": {"relu": [[0, 0]]}, "field": "relu_pred_neg", "doc": "Without .RELU nvdisasm ignores bit 90 (the predicate operand's negation)."},
    ]
    d = {
        "mnemonic": M, "arch": "SM90", "word_bits": 128,
        "seed_page": "none: derived from nvdisasm 13.2 alone, bit by bit, with `hmul2-harness probe` and ci/probe/*.py",
        "doc": f"Every bit of the SM90 {M} encoding, in the schema of hmul2.json, with a third source: its `shape` reads three sources (and `.RELU`'s predicate) and each form's `special` says which source (2 or 3) holds the form's special operand (immediates, constant, uniform register). The b_* fields are the special slot (bits 32..63), the c_* fields the register slot (64..71, 81..84); a form whose special source is operand 3 reads operand 2 from the register slot. Bit 0 is the least significant bit of the 128-bit word; a bit position appears once in each form. `evidence` holds the words that show each field and each difference from HMUL2.",
        "shape": {"writes": ["reg"], "reads": ["reg", "special", "reg", "pred"]},
    }
    if mma:
        d["const_space"] = ""
    if not mma:
        d["operand2_half_selects"] = ["", "F32", "H0_H0", "H1_H1", "H0_NH1", "INVALID5", "INVALID6", "INVALID7"]
    d.update({"fields": F, "common_fields": common, "forms": forms, "constraints": cons, "operand_reuse": [0, 1, 2], "hidden": hidden})
    return d
from dump import dump
EV = {}
if os.path.exists(os.path.join(HERE, "evidence.json")):
    EV = json.load(open(os.path.join(HERE, "evidence.json")))
for mma, path in ((False, "hfma2.json"), (True, "hfma2_mma.json")):
    d = build(mma)
    d["evidence"] = EV.get(path, [])
    open(os.path.join(HERE, "..", "..", "harness", "spec", "sm90", path), "w").write(dump(d))
    print(path, len(d["fields"]))
