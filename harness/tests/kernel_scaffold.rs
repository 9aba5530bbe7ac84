//! The scaffold road's kernels (`kernels/scaffold/`, `kernel::scaffold`): each committed cubin
//! is what the pinned ptxas makes of its PTX, and a scaffold patched with a case differs
//! from ptxas's bytes in the instruction's word only, and in that word only in the bits the
//! case needs (never in its registers, guard or control bits); nvdisasm reads every patched
//! cubin and prints the case's instruction on ptxas's registers.

use crate::common::seed;
use hmul2_harness::isa::{decode, decode_for, encode, format_hex, render, render_for, Op, Operand2, RZ};
use hmul2_harness::kernel::scaffold::{self, SCAFFOLDS};
use hmul2_harness::kernel::Case;
use hmul2_harness::nvdisasm::find_tool;
use hmul2_harness::target::Target;

#[test]
fn every_targets_scaffolds_rebuild_bit_for_bit_with_the_pinned_ptxas() {
    // kernels/build-scaffolds.sh itself, into a fresh folder: six targets' builds of each PTX
    let ptxas = find_tool("ptxas").expect("ptxas is required (bash ci/install-tools.sh)");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = crate::common::tmp("scaffold-rebuild");
    let o = std::process::Command::new("bash").arg(root.join("kernels/build-scaffolds.sh")).arg(&out).env("HMUL2_PTXAS", &ptxas).output().unwrap();
    assert!(o.status.success(), "kernels/build-scaffolds.sh: {}", String::from_utf8_lossy(&o.stderr));
    let mut n = 0;
    for t in Target::ALL {
        for s in SCAFFOLDS {
            let file = s.cubin_file(t);
            let built = std::fs::read(out.join(file.trim_start_matches("kernels/scaffold/"))).unwrap_or_else(|e| panic!("{file}: not built: {e}"));
            assert!(built == s.cubin(t), "{file} differs from a rebuild: run kernels/build-scaffolds.sh");
            assert!(std::fs::read(root.join(&file)).unwrap() == s.cubin(t), "{file}: the compiled-in bytes are not the file's");
            assert_eq!(hmul2_harness::kernel::elf::image(&built).unwrap().target, t, "{file}");
            n += 1;
        }
        for s in SCAFFOLDS {
            assert_eq!(std::fs::read_to_string(root.join(format!("kernels/scaffold/{}.ptx", s.name))).unwrap(), s.ptx);
        }
    }
    // nothing else was built, and nothing else is committed
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), n);
    let committed =
        std::fs::read_dir(root.join("kernels/scaffold")).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "cubin")).count();
    assert_eq!(committed, n);
    let bytes: usize = Target::ALL.iter().flat_map(|t| SCAFFOLDS.iter().map(move |s| s.cubin(t).len())).sum();
    eprintln!("{n} scaffold cubins rebuilt bit for bit ({bytes} bytes committed)");
}

/// Register fields of a word, as its decoded instruction names them.
fn regs(w: u128) -> (u8, u8, Option<Operand2>, Option<Operand2>) {
    let i = decode(w).unwrap();
    let reg = |o: Option<Operand2>| o.filter(|o| matches!(o, Operand2::Reg(_)));
    (i.dst, i.a, reg(Some(i.b)), reg(i.c))
}

/// Whether two words name their registers in the same pattern (which coincide).
fn regs_alike(x: u128, y: u128) -> bool {
    let classes = |w: u128| {
        let (d, a, b, c) = regs(w);
        let all: Vec<Option<u8>> =
            [Some(d), Some(a), b.map(|o| if let Operand2::Reg(r) = o { r } else { 0 }), c.map(|o| if let Operand2::Reg(r) = o { r } else { 0 })].to_vec();
        all.iter().map(|r| all.iter().position(|s| s == r)).collect::<Vec<_>>()
    };
    classes(x) == classes(y)
}

/// The line nvdisasm lists at byte `at` of `.text`.
fn listed_at(listing: &str, at: usize) -> String {
    listing.lines().find(|x| x.contains(&format!("/*{at:04x}*/"))).unwrap_or_default().to_string()
}

/// For every target, every scaffold that serves cases there: words drawn of its instruction
/// (or of one with the same sources), patched in, differ from ptxas's bytes in the word only
/// and there only in the case's bits; `nvdisasm -c` (which reads the architecture from the
/// ELF) prints the case's instruction at the word, and `nvdisasm -b <target>` the patched
/// words as the decoder renders them.
#[test]
fn a_patched_scaffold_differs_from_ptxas_in_the_cases_bits_of_one_word() {
    let seed = seed(38);
    let nvdisasm = find_tool("nvdisasm").expect("nvdisasm is required (bash ci/install-tools.sh)");
    let dir = crate::common::tmp("scaffold-diff");
    let ctrl = {
        let l = hmul2_harness::isa::Op::Hmul2.layout();
        l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask
    };
    let mut said = Vec::new();
    for t in Target::ALL {
        let mut patched = 0;
        let mut words = Vec::new();
        for l in scaffold::scaffolds_for(t).iter().flatten() {
            let op = l.inst.op;
            let ops: Vec<Op> = Op::ALL.into_iter().filter(|o| o.spec().sources == op.spec().sources).collect();
            let drawn = hmul2_harness::kernel::runnable_words_of(seed, &ops, Some(l.form), 256).unwrap();
            let mut cases = 0;
            for w in drawn {
                // the drawn word's registers made to coincide as the scaffold's do (random
                // words rarely name one register twice); its other fields as drawn
                let mut i = decode(w).unwrap();
                let (d, a, b, c) = regs(l.word);
                // (an instruction that writes no register keeps RZ there)
                (i.dst, i.a) = (if d == RZ { RZ } else { d.wrapping_add(1) }, a.wrapping_add(1));
                if let Some(Operand2::Reg(r)) = b {
                    i.b = Operand2::Reg(r.wrapping_add(1));
                }
                if let Some(Operand2::Reg(r)) = c {
                    i.c = Some(Operand2::Reg(r.wrapping_add(1)));
                }
                let Ok(w) = encode(&i) else { continue };
                let Ok((fitted, on)) = scaffold::fit_for(t, w) else { continue };
                if on.scaffold.name != l.scaffold.name {
                    continue;
                }
                let case = Case { word: fitted, inputs: vec![Default::default(); 32] };
                let b = scaffold::build_for(t, &case).unwrap();
                let cubin = &b.job.cubin;
                assert_eq!(cubin.len(), l.cubin().len());
                // every byte outside the word as ptxas wrote it
                let differ: Vec<usize> = cubin.iter().zip(l.cubin()).enumerate().filter(|(_, (x, y))| x != y).map(|(k, _)| k).collect();
                assert!(
                    differ.iter().all(|&k| (l.file_offset..l.file_offset + 16).contains(&k)),
                    "{t} {}: bytes {differ:?} differ outside the word",
                    l.scaffold.name
                );
                // in the word: not the control bits, the guard, or a register
                let got = u128::from_le_bytes(cubin[l.file_offset..l.file_offset + 16].try_into().unwrap());
                assert_eq!(got, fitted);
                assert_eq!((got ^ l.word) & ctrl, 0, "{t} {}: control bits changed", l.scaffold.name);
                assert_eq!(regs(got), regs(l.word), "{t} {}: registers changed ({})", l.scaffold.name, render(&decode(got).unwrap()));
                assert_eq!(decode(got).unwrap().pred, l.inst.pred);
                // the case's opcode and modifiers are there: re-encoding the case on the
                // scaffold's registers gives the word
                let mut want = decode(w).unwrap();
                want.dst = l.inst.dst;
                want.a = l.inst.a;
                if matches!(want.b, Operand2::Reg(_)) {
                    want.b = l.inst.b;
                }
                if matches!(want.c, Some(Operand2::Reg(_))) {
                    want.c = l.inst.c;
                }
                want.pred = l.inst.pred;
                if want.pdst.is_some() {
                    want.pdst = l.inst.pdst;
                }
                // a predicate source P0..P6: the scaffold's, the case's negation
                if let (Some(p), Some(q)) = (want.psrc.filter(|p| p.index != hmul2_harness::isa::PT), l.inst.psrc) {
                    want.psrc = Some(hmul2_harness::isa::Pred { index: q.index, negated: p.negated });
                }
                want.ctrl = l.inst.ctrl;
                want.ignored = if want.op == l.inst.op { l.inst.ignored } else { 0 };
                assert_eq!(encode(&want).unwrap(), got, "{t} {}: {}", l.scaffold.name, format_hex(w));
                // nvdisasm reads the patched cubin as the architecture its ELF names and prints
                // the case's instruction
                let path = dir.join(format!("{t}-{}-{cases}.cubin", l.scaffold.name));
                std::fs::write(&path, cubin).unwrap();
                let o = std::process::Command::new(&nvdisasm).arg("-c").arg(&path).output().unwrap();
                assert!(o.status.success(), "nvdisasm {}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
                // the text the target's own decoder gives (nvdisasm reads the cubin as its ELF's target)
                let text = render_for(t, &decode_for(t, got).unwrap()).unwrap();
                assert_eq!(text, render(&decode(got).unwrap()), "{t} {}: a fitted word reads as SM90 reads it", l.scaffold.name);
                let line = listed_at(&String::from_utf8_lossy(&o.stdout), l.file_offset_in_text());
                assert!(line.contains(text.trim_end_matches(" ;")), "{t} {}: nvdisasm prints {line:?}, the decoder {text:?}", l.scaffold.name);
                words.push(got);
                cases += 1;
                // four cases a scaffold on SM90 (as before), two on the others (nvdisasm runs once a case)
                if cases == if t == Target::DEFAULT { 4 } else { 2 } {
                    break;
                }
            }
            // a build of the same op, form and pattern earlier in the table takes its
            // words (SM80's hfma2_mma_rrrr and hfma2_rrrr both hold HFMA2.MMA on distinct
            // registers; SM86..SM120's both HFMA2): it serves none, and is said (a scaffold
            // that sets a predicate source serves other words than one that sets none)
            let same =
                |e: &&scaffold::Loaded| e.form == l.form && e.inst.op == op && regs_alike(e.word, l.word) && e.psrc_slot.is_some() == l.psrc_slot.is_some();
            let shadowed = scaffold::scaffolds_for(t).iter().flatten().take_while(|e| e.scaffold.name != l.scaffold.name).any(|e| same(&e));
            if shadowed {
                assert_eq!(cases, 0, "{t} {}", l.scaffold.name);
                said.push(format!("{t}/{} shadowed", l.scaffold.name));
                continue;
            }
            assert!(cases >= 2, "{t} {}: only {cases} drawn words fit it", l.scaffold.name);
            patched += cases;
        }
        // nvdisasm -b <target> on the patched words alone
        let listed = crate::common::disassemble_as(t.nvdisasm, &words);
        for (w, line) in words.iter().zip(&listed) {
            let text = render_for(t, &decode_for(t, *w).unwrap()).unwrap();
            assert_eq!(
                line.as_str(),
                text.trim_end_matches(" ;"),
                "{t}: nvdisasm -b {} prints {line:?} for {}, the decoder {text:?}",
                t.nvdisasm,
                format_hex(*w)
            );
        }
        said.push(format!("{t}: {patched}"));
    }
    eprintln!("patched scaffolds checked: {}", said.join(", "));
}

/// Where `.nv.constant3`'s bytes start in a cubin.
fn bank3_at(cubin: &[u8]) -> usize {
    use object::{Object, ObjectSection};
    let f = object::File::parse(cubin).unwrap();
    f.section_by_name(".nv.constant3").unwrap().file_range().unwrap().0 as usize
}

#[test]
fn a_constant_bank_case_rewrites_one_operand_and_writes_its_bank_word() {
    use hmul2_harness::isa::{Form, Op};
    let seed = seed(38);
    let nvdisasm = find_tool("nvdisasm").expect("nvdisasm is required (bash ci/install-tools.sh)");
    let dir = crate::common::tmp("scaffold-const");
    let ctrl = {
        let l = Op::Hmul2.layout();
        l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask
    };
    let mut checked = 0;
    // (an instruction that writes predicates has none: a scaffold stores no predicate)
    for op in hmul2_harness::reference::IMPLEMENTED.iter().copied().filter(|&o| !hmul2_harness::reference::writes_preds(o)) {
        for form in [Form::Const, Form::ConstC].into_iter().filter(|&f| op.has_form(f)) {
            let drawn = hmul2_harness::kernel::runnable_words_of(seed, &[op], Some(form), 64).unwrap();
            let mut n = 0;
            for w in drawn {
                let Ok((fitted, l)) = scaffold::fit(w) else { continue };
                let i = decode(fitted).unwrap();
                let (slot, offset) = match (i.b, i.c) {
                    (Operand2::Const { offset, .. }, _) => (1, offset),
                    (_, Some(Operand2::Const { offset, .. })) => (2, offset),
                    _ => panic!("{}: the c[] operand is gone", format_hex(fitted)),
                };
                let value = 0x3c00_4000u32 ^ n;
                let mut inputs = vec![hmul2_harness::inputs::Inputs::default(); 32];
                inputs.iter_mut().for_each(|x| if slot == 1 { x.b = value } else { x.c = value });
                let b = scaffold::build(&Case { word: fitted, inputs: inputs.clone() }).unwrap();
                let cubin = &b.job.cubin;
                let bank = bank3_at(l.cubin()) + offset as usize;
                let differ: Vec<usize> = cubin.iter().zip(l.cubin()).enumerate().filter(|(_, (x, y))| x != y).map(|(k, _)| k).collect();
                assert!(
                    differ.iter().all(|&k| (l.file_offset..l.file_offset + 16).contains(&k) || (bank..bank + 4).contains(&k)),
                    "{}: bytes {differ:?} differ outside the word and the bank word",
                    l.scaffold.name
                );
                assert_eq!(u32::from_le_bytes(cubin[bank..bank + 4].try_into().unwrap()), value);
                let got = u128::from_le_bytes(cubin[l.file_offset..l.file_offset + 16].try_into().unwrap());
                assert_eq!(got, fitted);
                assert_eq!((got ^ l.word) & ctrl, 0, "{}: control bits changed", l.scaffold.name);
                // registers other than the rewritten operand are ptxas's
                let s = &l.inst;
                assert_eq!((i.dst, i.a, i.pred), (s.dst, s.a, s.pred));
                if slot == 1 {
                    assert_eq!(i.c, s.c);
                } else {
                    assert_eq!(i.b, s.b);
                }
                // what the threads read: the bank word for the c[] operand
                let eff = b.effective_inputs(&Case { word: fitted, inputs }).unwrap();
                assert!(eff.iter().all(|x| (if slot == 1 { x.b } else { x.c }) == value));
                let path = dir.join(format!("{}-{n}.cubin", l.scaffold.name));
                std::fs::write(&path, cubin).unwrap();
                let o = std::process::Command::new(&nvdisasm).arg("-c").arg(&path).output().unwrap();
                assert!(o.status.success(), "nvdisasm {}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
                let listing = String::from_utf8_lossy(&o.stdout);
                let line = listing.lines().find(|x| x.contains(&format!("/*{:04x}*/", l.file_offset_in_text()))).unwrap_or_default();
                assert!(line.contains(render(&i).trim_end_matches(" ;")), "{}: nvdisasm prints {line:?}, the decoder {:?}", l.scaffold.name, render(&i));
                n += 1;
                if n == 3 {
                    break;
                }
            }
            assert!(n >= 1, "{op} {form:?}: no drawn word fits a scaffold");
            checked += n;
        }
    }
    eprintln!("{checked} c[] cases checked");
}
