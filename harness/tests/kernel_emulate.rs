//! The patched program's data flow, emulated on the CPU: every word of `.text` is decoded
//! back through the helper spec (or as HMUL2), run warp by warp over the built input buffer,
//! and at each HMUL2 under test the registers, uniform registers, constant words, bindless
//! handle and predicates it reads must hold the case's effective inputs; the store after it
//! must write its destination to the output word the runner reads. This proves the plan
//! (not the GPU's arithmetic) without a GPU.

use hmul2_harness::isa::{decode, Operand2, RZ, URZ};
use hmul2_harness::kernel::command::runnable_words;
use hmul2_harness::kernel::helpers::{op_spec, Op};
use hmul2_harness::kernel::{build, random_inputs, Built, Case};
use hmul2_harness::rng::Rng;
use hmul2_harness::spec::layout;
use object::{Object, ObjectSection};
use std::collections::HashMap;

const IN: u64 = 0x7f12_3400_0000;
const OUT: u64 = 0x7f56_7800_0000;

fn classify(word: u128) -> Option<(Op, Vec<u32>)> {
    let l = layout();
    let ctrl = l.stall.mask | l.yield_.mask | l.wr_bar.mask | l.rd_bar.mask | l.wait.mask | l.reuse.mask;
    for op in Op::ALL {
        let s = op_spec(op);
        let fields = s.fields.iter().fold(0u128, |m, f| m | f.mask);
        if word & !(ctrl | fields) == s.fixed {
            return Some((op, s.fields.iter().map(|f| f.get(word) * f.scale).collect()));
        }
    }
    None
}

fn emulate(built: &Built, cases: &[Case]) {
    let f = object::File::parse(&*built.job.cubin).unwrap();
    let text = f.section_by_name(".text.hmul2_kernel").unwrap().data().unwrap().to_vec();
    let bank3 = f.section_by_name(".nv.constant3").unwrap().data().unwrap().to_vec();
    let words: Vec<u128> = text.chunks(16).map(|c| u128::from_le_bytes(c.try_into().unwrap())).collect();
    let t = built.manifest.threads_per_case;
    let rd32 = |addr: u64| -> u32 {
        let o = (addr - IN) as usize;
        u32::from_le_bytes(built.job.input[o..o + 4].try_into().unwrap())
    };
    let mut stores: HashMap<u64, u32> = HashMap::new();
    let mut checked = 0usize;
    for warp in 0..t / 32 {
        let mut r = vec![[0u32; 256]; 32];
        let mut ur = [0u32; 64];
        let mut pr = [0u8; 32];
        let mut case = 0usize;
        for (pc, &w) in words.iter().enumerate() {
            if let Some((op, a)) = classify(w) {
                if op == Op::Exit {
                    break;
                }
                for lane in 0..32 {
                    let tid = (warp * 32 + lane) as u32;
                    let g = &mut r[lane];
                    let pair = |g: &[u32; 256], k: u32| g[k as usize] as u64 | (g[k as usize + 1] as u64) << 32;
                    match op {
                        Op::S2rTidX => g[a[0] as usize] = tid,
                        Op::Ldc64 => {
                            assert_eq!(a[2], 0);
                            let v = match a[1] {
                                0x210 => IN,
                                0x218 => OUT,
                                o => panic!("LDC c[0][{o:#x}]"),
                            };
                            g[a[0] as usize] = v as u32;
                            g[a[0] as usize + 1] = (v >> 32) as u32;
                        }
                        Op::Uldc64 => {
                            assert_eq!((a[1], a[2]), (0x208, 0));
                            ur[a[0] as usize] = 0xdead;
                            ur[a[0] as usize + 1] = 0xbeef;
                        }
                        Op::Iadd3Imm => g[a[0] as usize] = g[a[1] as usize].wrapping_add(a[2]),
                        Op::ImadWideU32Imm => {
                            let v = (g[a[1] as usize] as u64 * a[2] as u64).wrapping_add(pair(g, a[3]));
                            g[a[0] as usize] = v as u32;
                            g[a[0] as usize + 1] = (v >> 32) as u32;
                        }
                        Op::LdgE128 => {
                            assert_eq!((ur[a[2] as usize], ur[a[2] as usize + 1]), (0xdead, 0xbeef), "descriptor");
                            let addr = pair(g, a[1]);
                            for k in 0..4 {
                                g[a[0] as usize + k] = rd32(addr + 4 * k as u64);
                            }
                        }
                        Op::StgE => {
                            assert_eq!((ur[a[2] as usize], ur[a[2] as usize + 1]), (0xdead, 0xbeef), "descriptor");
                            let v = if a[1] == RZ as u32 { 0 } else { g[a[1] as usize] };
                            assert!(stores.insert(pair(g, a[0]), v).is_none(), "two stores to one word");
                        }
                        Op::Mov => g[a[0] as usize] = g[a[1] as usize],
                        Op::R2p => pr[lane] = (g[a[0] as usize] & a[1]) as u8,
                        Op::R2ur => {
                            if lane == 0 {
                                ur[a[0] as usize] = g[a[1] as usize];
                            } else {
                                assert_eq!(ur[a[0] as usize], g[a[1] as usize], "R2UR source differs across the warp");
                            }
                        }
                        Op::ShfRU64Imm => {
                            // funnel shift of c:a
                            let v = (g[a[3] as usize] as u64) << 32 | g[a[1] as usize] as u64;
                            g[a[0] as usize] = (v >> a[2]) as u32;
                        }
                        Op::ShfRU32HiImm => {
                            let c = if a[3] == 255 { 0 } else { g[a[3] as usize] };
                            g[a[0] as usize] = c >> a[2];
                        }
                        Op::Nop | Op::BraSelf | Op::Exit => {}
                        // the digest kernel's ops (tests/digest_emulate.rs) are not in this program
                        other => panic!("word {pc}: {other:?} is not an op of the test kernel"),
                    }
                    g[255] = 0;
                }
                continue;
            }
            // an HMUL2 under test: it must be the next case's word, and see that case's inputs
            let inst = decode(w).unwrap_or_else(|e| panic!("word {pc} is neither a helper nor HMUL2: {e}"));
            assert_eq!(w, cases[case].word, "case {case} byte for byte");
            assert_eq!(built.manifest.cases[case].code_offset, pc * 16);
            for lane in 0..32 {
                let k = warp * 32 + lane;
                let e = built.inputs[case][k];
                let g = &mut r[lane];
                let reg = |x: u8| if x == RZ { 0 } else { g[x as usize] };
                assert_eq!(reg(inst.a), e.a, "case {case} thread {k}: a");
                assert_eq!(reg(inst.dst), e.d, "case {case} thread {k}: d");
                assert_eq!(pr[lane], e.pred & 0x7f, "case {case} thread {k}: predicates");
                let b = match inst.b {
                    Operand2::Reg(x) => reg(x),
                    Operand2::Imm { .. } => e.b,
                    Operand2::Ur(u) => {
                        if u == URZ {
                            0
                        } else {
                            ur[u as usize]
                        }
                    }
                    Operand2::Const { bank, offset } => {
                        assert_eq!(bank, 3);
                        u32::from_le_bytes(bank3[offset as usize..offset as usize + 4].try_into().unwrap())
                    }
                    Operand2::ConstUr { ureg, offset } => {
                        let (lo, hi) = (ur[ureg as usize] as u64, ur[ureg as usize + 1] as u64);
                        let base = (lo | (hi & 0x7_ffff) << 32) << 6;
                        let size = (hi >> 19) << 4;
                        assert!(offset as u64 + 4 <= size, "case {case}: offset {offset:#x} outside the handle's {size:#x} bytes");
                        rd32(base + offset as u64)
                    }
                };
                assert_eq!(b, e.b, "case {case} thread {k}: b ({:?})", inst.b);
                // stand-in for the multiply: a value only this case and thread produce
                if inst.dst != RZ {
                    g[inst.dst as usize] = (case * t + k) as u32 ^ 0xa5a5_0000;
                }
                checked += 1;
            }
            case += 1;
        }
        assert_eq!(case, cases.len(), "every case ran");
    }
    assert_eq!(checked, cases.len() * t);
    for (i, c) in cases.iter().enumerate() {
        let dst = decode(c.word).unwrap().dst;
        for k in 0..t {
            let at = OUT + ((i * t + k) * 4) as u64;
            let want = if dst == RZ { 0 } else { (i * t + k) as u32 ^ 0xa5a5_0000 };
            assert_eq!(stores.get(&at), Some(&want), "case {i} thread {k}: stored destination");
        }
    }
    assert_eq!(stores.len(), cases.len() * t);
}

#[test]
fn the_program_feeds_every_case_its_inputs_and_stores_its_destination() {
    let seed = std::env::var("HMUL2_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_0002u64);
    eprintln!("seed: {seed}");
    let words = runnable_words(seed, None, 400).unwrap();
    let mut rng = Rng::new(seed);
    let cases: Vec<Case> = words.iter().map(|&w| Case { word: w, inputs: random_inputs(w, 64, &mut rng) }).collect();
    let built = build(&cases).unwrap();
    emulate(&built, &cases);
}
