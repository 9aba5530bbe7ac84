//! Shrinking a mismatching instruction to what matters: drop modifiers and fields one at
//! a time while it still mismatches. Generic over the "still mismatches?" test, so the
//! same code runs against hardware and against a fake in tests.

use crate::isa::{encode, Control, Flush, Format, Inst, Operand2, Pred, SrcMods, Swizzle};

/// Every instruction one simplification away from `i` (same form, still encodable).
pub fn simpler(i: &Inst) -> Vec<Inst> {
    let mut v: Vec<Inst> = Vec::new();
    let mut push = |f: &dyn Fn(&mut Inst)| {
        let mut c = *i;
        f(&mut c);
        if c != *i && encode(&c).is_ok() {
            v.push(c);
        }
    };
    push(&|c| c.ignored = 0);
    push(&|c| c.pred = Pred::ALWAYS);
    push(&|c| c.ctrl = Control::default());
    push(&|c| c.sat = false);
    push(&|c| c.flush = Flush::None);
    push(&|c| c.format = Format::F16);
    push(&|c| c.a_mods = SrcMods::default());
    push(&|c| c.a_mods.neg = false);
    push(&|c| c.a_mods.abs = false);
    push(&|c| c.a_mods.swizzle = Swizzle::H1H0);
    push(&|c| c.b_mods = SrcMods::default());
    push(&|c| c.b_mods.neg = false);
    push(&|c| c.b_mods.abs = false);
    push(&|c| c.b_mods.swizzle = Swizzle::H1H0);
    push(&|c| c.dst = 0);
    push(&|c| c.a = 1);
    push(&|c| {
        c.b = match c.b {
            Operand2::Reg(_) => Operand2::Reg(2),
            // bank 3: the one the kernel fills (crate::kernel::DATA_BANK)
            Operand2::Const { .. } => Operand2::Const { bank: 3, offset: 0 },
            Operand2::ConstUr { .. } => Operand2::ConstUr { ureg: 0, offset: 0 },
            Operand2::Ur(_) => Operand2::Ur(2),
            // immediates are data, not modifiers: kept
            imm @ Operand2::Imm { .. } => imm,
        }
    });
    v
}

/// Greedily apply simplifications while `still_fails` holds; at most `budget` tests.
/// Returns the smallest failing instruction found (`i` itself when nothing can go).
pub fn minimize(i: &Inst, budget: usize, still_fails: &mut dyn FnMut(&Inst) -> bool) -> Inst {
    let mut cur = *i;
    let mut tests = 0;
    'outer: loop {
        for c in simpler(&cur) {
            if tests >= budget {
                break 'outer;
            }
            tests += 1;
            if still_fails(&c) {
                cur = c;
                continue 'outer;
            }
        }
        break;
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::factorial;
    use crate::isa::Form;

    #[test]
    fn shrinks_to_the_essential_field() {
        // a "bug" that needs .SAT and a negated operand 1, nothing else
        let busy = factorial(crate::isa::Op::Hmul2, Form::Rrr, 5)
            .into_iter()
            .find(|i| i.sat && i.a_mods.neg && i.a_mods.abs && i.flush == Flush::Ftz && i.b_mods.neg)
            .unwrap();
        let m = minimize(&busy, 1000, &mut |c: &Inst| c.sat && c.a_mods.neg);
        assert!(m.sat && m.a_mods.neg);
        assert!(!m.a_mods.abs && m.flush == Flush::None && m.b_mods == SrcMods::default() && m.format == Format::F16);
        assert_eq!(m.pred, Pred::ALWAYS);
        assert_eq!(m.b, Operand2::Reg(2));
        // nothing to drop: unchanged
        assert_eq!(minimize(&m, 1000, &mut |c: &Inst| c.sat && c.a_mods.neg), m);
    }
}
