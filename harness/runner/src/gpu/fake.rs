//! A simulated GPU for CPU-only tests: executes the fake job format that
//! [`crate::run::pipeline::FakeBackend`] builds, with scripted misbehaviour.
//!
//! Selected in workers and in `run` by `HMUL2_FAKE_EXECUTOR`, a comma-separated list of
//! directives: `ok`; `crash-on:HEX` (abort the process when a job holds that word: the
//! parent's real spawn/read/death-detection/restart path runs); `fault-on:HEX` (answer an
//! illegal-instruction fault); `hang-on:HEX` (never answer); `flip-if:MASK:VALUE` (the
//! "hardware" result's bit 0 flips when `word & MASK == VALUE`: a mismatch to find);
//! `flip-a:HEX32` (bit 0 flips when operand 1's register holds that value);
//! `pred-flip-if:MASK:VALUE` (such a word leaves P0 flipped after it: a wrong or clobbered
//! predicate, as the fake libcuda's directive of that name); `slow:MS` (every job takes MS
//! milliseconds more, as a long launch does).
//!
//! Each input's answer is the batch road's output record ([`RECORD`] bytes): the destination,
//! then the predicate file P0..P6 after the word as `P2R` writes it. The destination is
//! [`fake_eval`]'s; the predicates are the reference's ([`crate::reference::preds_after_with`]
//! under the policy of the job's architecture), so the engine compares them as on the batch
//! road, and only `pred-flip-if` makes them differ.
//!
//! A job is of one architecture, as a cubin is: its cubin ([`fake_cubin`]) names the target
//! of the [`FakeBackend`](crate::run::pipeline::FakeBackend) that built it, which reads its words ([`crate::isa::decode_for`])
//! and whose committed policy ([`crate::reference::Policy::for_target`]) computes them, so a
//! simulated `run --arch SM86` is SM86's on both sides, not SM90's.

use super::{ExecError, Executor, LaunchJob};
use crate::inputs::Inputs;
use crate::isa::parse_hex;
use crate::reference::Policy;
use crate::target::Target;

/// What a fake job's cubin starts with; [`fake_cubin`] gives the whole.
pub const FAKE_CUBIN: &[u8] = b"HMUL2-FAKE-CUBIN";
/// The fake job format's version, after [`FAKE_CUBIN`]: format 2 names the architecture that
/// reads the words (format 1, the magic alone, read them as SM90 does).
const FAKE_CUBIN_V2: &[u8] = b" v2 ";
pub const FAKE_DIGEST_CUBIN: &[u8] = b"HMUL2-FAKE-DIGEST";
/// Bytes of one input's answer: the destination, then the predicates after (P2R: bits 0..6
/// are P0..P6), each a little-endian u32, as the batch road's output record
/// (`kernel::OUTPUT_RECORD`).
pub const RECORD: usize = 8;
/// Where a record holds the predicates.
pub const RECORD_PRED: usize = 4;

/// The simulated instruction semantics; the fake reference computes the same, so only
/// `flip-if` makes them differ.
pub fn fake_eval(word: u128, i: &Inputs) -> u32 {
    let w = (word as u64) ^ (word >> 64) as u64;
    let x = (i.a as u64).wrapping_mul(i.b as u64 | 1) ^ w ^ ((i.d as u64) << 7) ^ i.pred as u64;
    let x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (x ^ (x >> 32)) as u32
}

/// The cubin of a fake job whose words `target` reads: [`FAKE_CUBIN`], the format's version
/// and the architecture's name (`HMUL2-FAKE-CUBIN v2 SM86`), as a real cubin's ELF header
/// names its architecture.
pub fn fake_cubin(target: &'static Target) -> Vec<u8> {
    [FAKE_CUBIN, FAKE_CUBIN_V2, target.nvdisasm.as_bytes()].concat()
}

/// The architecture a fake job's cubin names. `Ok(None)`: not a fake job's cubin; `Err`: a
/// fake job of another format, or naming no architecture this build knows (one line).
pub fn fake_cubin_target(cubin: &[u8]) -> Result<Option<&'static Target>, String> {
    let Some(rest) = cubin.strip_prefix(FAKE_CUBIN) else { return Ok(None) };
    let shown = || String::from_utf8_lossy(&cubin[..cubin.len().min(64)]).into_owned();
    let Some(name) = rest.strip_prefix(FAKE_CUBIN_V2) else {
        return Err(format!(
            "fake job: cubin {:?} is not of format 2 (\"{}{}SM90\")",
            shown(),
            String::from_utf8_lossy(FAKE_CUBIN),
            String::from_utf8_lossy(FAKE_CUBIN_V2)
        ));
    };
    Target::ALL.into_iter().find(|t| t.nvdisasm.as_bytes() == name).map(Some).ok_or_else(|| {
        let names: Vec<&str> = Target::ALL.iter().map(|t| t.nvdisasm).collect();
        format!("fake job: cubin {:?} names no architecture of {}", shown(), names.join(", "))
    })
}

#[derive(Clone, Debug, Default)]
pub struct FakeExecutor {
    pub crash_on: Vec<u128>,
    pub fault_on: Vec<u128>,
    pub hang_on: Vec<u128>,
    pub flip_if: Vec<(u128, u128)>,
    pub flip_a: Vec<u32>,
    /// `pred-flip-if:MASK:VALUE`: P0 after a matching word flipped.
    pub pred_flip_if: Vec<(u128, u128)>,
    /// `stray-every:N`: before answering every Nth job of a process, a well-formed answer
    /// frame nobody asked for appears on stdout (as a library printing there would make).
    pub stray_every: Option<u64>,
    /// `slow:MS`: milliseconds every job takes before it is answered.
    pub slow_ms: u64,
    pub jobs: u64,
}

impl FakeExecutor {
    pub fn parse(spec: &str) -> Result<FakeExecutor, String> {
        let mut f = FakeExecutor::default();
        for d in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let hex = |s: &str| parse_hex(s).map_err(|e| format!("{}: {d:?}: {e}", super::FAKE_ENV));
            if d == "ok" {
            } else if let Some(h) = d.strip_prefix("crash-on:") {
                f.crash_on.push(hex(h)?);
            } else if let Some(h) = d.strip_prefix("fault-on:") {
                f.fault_on.push(hex(h)?);
            } else if let Some(h) = d.strip_prefix("hang-on:") {
                f.hang_on.push(hex(h)?);
            } else if let Some(h) = d.strip_prefix("flip-a:") {
                let v = u32::from_str_radix(h.trim_start_matches("0x"), 16).map_err(|e| format!("{}: {d:?}: {e}", super::FAKE_ENV))?;
                f.flip_a.push(v);
            } else if let Some(n) = d.strip_prefix("stray-every:") {
                f.stray_every = Some(n.parse().ok().filter(|&n: &u64| n > 0).ok_or_else(|| format!("{}: {d:?}: want stray-every:N, N >= 1", super::FAKE_ENV))?);
            } else if let Some(n) = d.strip_prefix("slow:") {
                f.slow_ms = n.parse().ok().filter(|&n: &u64| n <= 60_000).ok_or_else(|| format!("{}: {d:?}: want slow:MS, MS <= 60000", super::FAKE_ENV))?;
            } else if let Some(r) = d.strip_prefix("flip-if:") {
                let (m, v) = r.split_once(':').ok_or_else(|| format!("{}: {d:?}: want flip-if:MASK:VALUE", super::FAKE_ENV))?;
                f.flip_if.push((hex(m)?, hex(v)?));
            } else if let Some(r) = d.strip_prefix("pred-flip-if:") {
                let (m, v) = r.split_once(':').ok_or_else(|| format!("{}: {d:?}: want pred-flip-if:MASK:VALUE", super::FAKE_ENV))?;
                f.pred_flip_if.push((hex(m)?, hex(v)?));
            } else {
                return Err(format!("{}: unknown directive {d:?}", super::FAKE_ENV));
            }
        }
        Ok(f)
    }

    /// The simulated hardware's answer for one execution.
    pub fn hardware(&self, word: u128, i: &Inputs) -> u32 {
        let flip = self.flip_if.iter().any(|&(m, v)| word & m == v) || self.flip_a.contains(&i.a);
        fake_eval(word, i) ^ flip as u32
    }

    /// The simulated hardware's predicate file P0..P6 after one execution of `word`, decoded
    /// as `inst` (the job's architecture's reading; None: no instruction): the reference's
    /// under `policy` (the file as it was where the word is none or its predicates are
    /// undefined, as the emulator leaves it), P0 flipped by `pred-flip-if`.
    pub fn hardware_preds(&self, policy: &Policy, word: u128, inst: Option<&crate::isa::Inst>, i: &Inputs) -> u8 {
        let after = inst.and_then(|inst| crate::reference::preds_after_with(policy, inst, i).ok()).unwrap_or(i.pred & 0x7f);
        after ^ self.pred_flip_if.iter().any(|&(m, v)| word & m == v) as u8
    }

    /// [`Executor::execute`], the predicates computed under `policy_of(the job's
    /// architecture)` rather than its committed policy (tests settle a point apart on one
    /// architecture through it, as `settle` weighs alternatives).
    pub fn execute_with<'p>(&mut self, job: &LaunchJob, policy_of: &dyn Fn(&'static Target) -> &'p Policy) -> Result<Vec<u8>, ExecError> {
        self.jobs += 1;
        if self.stray_every.is_some_and(|n| self.jobs.is_multiple_of(n)) {
            // an answer-shaped frame of the right size, with a tag no job of this worker has
            let junk = super::protocol::tagged(super::protocol::Tag { seq: u64::MAX, digest: 0 }, &vec![0u8; job.output_bytes]);
            let _ = super::protocol::write_frame(&mut std::io::stdout(), super::protocol::KIND_OUTPUT, &junk);
        }
        if job.cubin == FAKE_DIGEST_CUBIN {
            let req = crate::run::exhaustive::DigestRequest::decode(&job.input).map_err(ExecError::Setup)?;
            self.misbehave(&[req.word])?;
            // the real kernel's format: one partial u64 per thread (see run::exhaustive)
            let out: Vec<u8> = req.partials(|w, i| self.hardware(w, i)).iter().flat_map(|d| d.to_le_bytes()).collect();
            if out.len() != job.output_bytes {
                return Err(ExecError::Setup(format!("fake digest job wants {} output bytes, computed {}", job.output_bytes, out.len())));
            }
            return Ok(out);
        }
        let target =
            fake_cubin_target(&job.cubin).map_err(ExecError::Setup)?.ok_or_else(|| ExecError::Setup("the fake executor runs only fake jobs".into()))?;
        let policy = policy_of(target);
        let cases = decode_cases(&job.input).map_err(ExecError::Setup)?;
        self.misbehave(&cases.iter().map(|c| c.0).collect::<Vec<_>>())?;
        let mut out = Vec::with_capacity(job.output_bytes);
        for (w, ins) in &cases {
            let inst = crate::isa::decode_for(target, *w).ok();
            for i in ins {
                out.extend_from_slice(&self.hardware(*w, i).to_le_bytes());
                out.extend_from_slice(&(self.hardware_preds(policy, *w, inst.as_ref(), i) as u32).to_le_bytes());
            }
        }
        if out.len() != job.output_bytes {
            return Err(ExecError::Setup(format!("fake job wants {} output bytes, computed {}", job.output_bytes, out.len())));
        }
        Ok(out)
    }

    fn misbehave(&self, words: &[u128]) -> Result<(), ExecError> {
        std::thread::sleep(std::time::Duration::from_millis(self.slow_ms));
        for w in words {
            if self.crash_on.contains(w) {
                crate::errln!("fake executor: crashing on {}", crate::isa::format_hex(*w));
                std::process::abort();
            }
            if self.hang_on.contains(w) {
                // hang like a stuck kernel, but leave once orphaned so tests that kill the
                // parent leave no stray process behind
                #[cfg(unix)]
                let parent = std::os::unix::process::parent_id();
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    #[cfg(unix)]
                    if std::os::unix::process::parent_id() != parent {
                        std::process::exit(9);
                    }
                }
            }
            if self.fault_on.contains(w) {
                return Err(ExecError::Fault { code: 715, name: "CUDA_ERROR_ILLEGAL_INSTRUCTION".into(), stage: "cuCtxSynchronize".into() });
            }
        }
        Ok(())
    }
}

/// The fake job layout: per case, word (u128 LE), n (u32), n × (a, b, d, pred, c as u32).
/// Its output: per case, per input, a [`RECORD`].
pub fn encode_cases(cases: &[(u128, &[Inputs])]) -> Vec<u8> {
    let mut v = Vec::new();
    for (w, ins) in cases {
        v.extend_from_slice(&w.to_le_bytes());
        v.extend_from_slice(&(ins.len() as u32).to_le_bytes());
        for i in *ins {
            for x in [i.a, i.b, i.d, i.pred as u32, i.c] {
                v.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    v
}

pub fn decode_cases(mut p: &[u8]) -> Result<Vec<(u128, Vec<Inputs>)>, String> {
    let mut out = Vec::new();
    let take = |p: &mut &[u8], n: usize| -> Result<Vec<u8>, String> {
        if p.len() < n {
            return Err("fake job input ends early".into());
        }
        let (a, b) = p.split_at(n);
        *p = b;
        Ok(a.to_vec())
    };
    let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    while !p.is_empty() {
        let w = u128::from_le_bytes(take(&mut p, 16)?.try_into().map_err(|_| "word")?);
        let n = u32_of(&take(&mut p, 4)?) as usize;
        let mut ins = Vec::with_capacity(n);
        for _ in 0..n {
            let b = take(&mut p, 20)?;
            ins.push(Inputs { a: u32_of(&b[0..]), b: u32_of(&b[4..]), d: u32_of(&b[8..]), pred: u32_of(&b[12..]) as u8, c: u32_of(&b[16..]) });
        }
        out.push((w, ins));
    }
    Ok(out)
}

impl Executor for FakeExecutor {
    /// Under the committed policy of the job's architecture.
    fn execute(&mut self, job: &LaunchJob) -> Result<Vec<u8>, ExecError> {
        self.execute_with(job, &Policy::for_target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::pipeline::{Backend, Case, FakeBackend};

    /// A fake job names its architecture, and the executor refuses one of another format or
    /// an unknown architecture with one line, as it refuses a job that is not fake.
    #[test]
    fn a_fake_job_names_its_architecture_and_a_bad_one_is_refused() {
        for t in Target::ALL {
            assert_eq!(fake_cubin_target(&fake_cubin(t)), Ok(Some(t)));
        }
        assert_eq!(fake_cubin(&Target::SM86), b"HMUL2-FAKE-CUBIN v2 SM86");
        assert_eq!(fake_cubin_target(b"\x7fELF"), Ok(None));
        assert_eq!(fake_cubin_target(FAKE_DIGEST_CUBIN), Ok(None));
        let word = 0x000fe200000000000000000201007232u128;
        let job = FakeBackend::default().build(&[Case { word, inputs: vec![Inputs::default(); 4] }]).unwrap().jobs.remove(0);
        for (cubin, says) in [
            (FAKE_CUBIN.to_vec(), "is not of format 2"),
            (b"HMUL2-FAKE-CUBIN v3 SM86".to_vec(), "is not of format 2"),
            (b"HMUL2-FAKE-CUBIN v2 SM75".to_vec(), "names no architecture of SM80, SM86, SM89, SM90, SM100, SM120"),
            (b"HMUL2-FAKE-CUBIN v2 sm_86".to_vec(), "names no architecture"),
            (b"not a cubin".to_vec(), "runs only fake jobs"),
        ] {
            let e = FakeExecutor::default().execute(&LaunchJob { cubin, ..job.clone() }).unwrap_err();
            let ExecError::Setup(why) = &e else { panic!("{e:?}") };
            assert!(why.contains(says) && !why.contains('\n'), "{why}");
        }
        assert_eq!(FakeExecutor::default().execute(&job).unwrap().len(), job.output_bytes);
    }

    /// The simulated executor computes a job's predicates under the policy of the job's
    /// architecture, not SM90's. No entry of the committed table is settled differently on any
    /// architecture yet, so the test settles one, as `kernel_arch::the_emulator_computes_under_
    /// the_policy_of_its_cubins_architecture` does: `cmp-ftz` on SM86 at its alternative
    /// (`.FTZ` changes nothing: a subnormal is no zero). HSETP2.EQ.FTZ of subnormals and zeros,
    /// which SM86 and SM90 read alike, run by SM86's backend then gives SM86's predicates, and
    /// by SM90's SM90's; with the committed table each architecture's are its committed
    /// policy's.
    #[test]
    fn the_simulated_executor_computes_under_the_policy_of_its_jobs_architecture() {
        use crate::reference::policy::{parse_table, Settled, SEMANTICS_JSON};
        use crate::reference::preds_after_with;
        let mut table = parse_table(SEMANTICS_JSON).unwrap();
        let e = table.iter_mut().find(|e| e.id == "cmp-ftz").unwrap();
        let other = e.alternatives[1].clone();
        assert!(other.contains("changes nothing"), "{other}");
        e.settled.insert("SM86".into(), Settled { option: other, gpu: "test".into(), date: "2026-12-07".into(), evidence: "a vector line".into(), told: 1 });
        let policies: Vec<(&Target, Policy)> = Target::ALL.into_iter().map(|t| (t, Policy::from_table(&table, t).unwrap())).collect();
        let policy_of = |t: &'static Target| -> &Policy { &policies.iter().find(|(p, _)| p.sm == t.sm).unwrap().1 };
        assert_ne!(policy_of(&Target::SM86), policy_of(&Target::SM90), "the test's table settles SM86 apart");
        let inst = crate::isa::parse_for(&Target::SM86, "HSETP2.EQ.FTZ.AND P0, P1, R1, R2, PT").unwrap();
        let word = crate::isa::encode_for(&Target::SM86, &inst).unwrap();
        assert_eq!(crate::isa::decode(word), Ok(inst), "SM90 reads it alike");
        // subnormal lanes (either sign) against zeros and against each other, then random ones
        let sub = [0x0000_0001u32, 0x8001_0001, 0x03ff_8200, 0x0000_0000, 0x8000_0000];
        let mut inputs: Vec<Inputs> = sub.iter().flat_map(|&a| sub.iter().map(move |&b| Inputs { a, b, d: 0, c: 0, pred: 0x55 })).collect();
        inputs.extend(FakeBackend::default().input_set(&inst, 7, 64));
        let under = |p: &Policy| -> Vec<u8> { inputs.iter().map(|x| preds_after_with(p, &inst, x).unwrap()).collect() };
        let run = |t: &'static Target, exec: &mut dyn FnMut(&LaunchJob) -> Result<Vec<u8>, ExecError>| -> Vec<u8> {
            let backend = FakeBackend { target: t };
            let p = backend.build(&[Case { word, inputs: inputs.clone() }]).unwrap();
            let outs: Vec<Vec<u8>> = p.jobs.iter().map(|j| exec(j).unwrap()).collect();
            assert_eq!(backend.results(&p, &outs).unwrap()[0], inputs.iter().map(|x| fake_eval(word, x)).collect::<Vec<_>>(), "{t}: destinations");
            backend.preds(&p, &outs).unwrap().unwrap().remove(0).unwrap()
        };
        let sm86 = run(&Target::SM86, &mut |j| FakeExecutor::default().execute_with(j, &policy_of));
        assert_eq!(sm86, under(policy_of(&Target::SM86)), "SM86's job: SM86's policy");
        let telling = sm86.iter().zip(under(policy_of(&Target::SM90))).filter(|(a, b)| **a != *b).count();
        assert!(telling >= 4, "{telling} inputs tell SM86's policy from SM90's");
        let sm90 = run(&Target::SM90, &mut |j| FakeExecutor::default().execute_with(j, &policy_of));
        assert_eq!(sm90, under(policy_of(&Target::SM90)), "SM90's job: SM90's policy");
        // the committed executor: each architecture's committed policy
        for t in Target::ALL {
            assert_eq!(run(t, &mut |j| FakeExecutor::default().execute(j)), under(Policy::for_target(t)), "{t}");
        }
    }
}
