//! The worker wire format: length-prefixed little-endian binary frames on stdin/stdout.
//!
//! Frame = magic `b"HMW1"`, kind (u8), payload length (u32), payload. Binary rather than
//! JSON because cubins and buffers are bytes; the magic and explicit lengths make a
//! truncated or foreign stream a typed error, never a hang on garbage or a panic.
//!
//! Kinds: 1 job (parent → worker); 2 output bytes, 3 fault, 4 setup error (worker → parent).
//!
//! Every job and every answer starts with the job's [`Tag`]: its sequence number on this
//! worker and a digest of the job. The parent takes an answer only when its tag is the tag
//! of the job it is waiting for: a stray frame on the worker's stdout (a library printing,
//! a frame left over) can never shift the answers onto other jobs.

use super::{ExecError, LaunchJob};
use std::io::{Read, Write};

pub const MAGIC: &[u8; 4] = b"HMW1";
pub const KIND_JOB: u8 = 1;
pub const KIND_OUTPUT: u8 = 2;
pub const KIND_FAULT: u8 = 3;
pub const KIND_SETUP: u8 = 4;
/// Largest payload accepted: bounds the allocation a corrupt length can cause.
pub const MAX_PAYLOAD: u32 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("stream closed")]
    Eof,
    /// The stream ended inside a frame (the writer died while writing).
    #[error("stream ended inside a frame")]
    Truncated,
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("bad frame: {0}")]
    Bad(String),
}

pub fn write_frame(w: &mut impl Write, kind: u8, payload: &[u8]) -> std::io::Result<()> {
    if payload.len() > MAX_PAYLOAD as usize {
        // the reader refuses it; a length cut to 32 bits would be garbage instead
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("frame payload of {} bytes (at most {MAX_PAYLOAD})", payload.len())));
    }
    let mut head = Vec::with_capacity(9);
    head.extend_from_slice(MAGIC);
    head.push(kind);
    head.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    w.write_all(&head)?;
    w.write_all(payload)?;
    w.flush()
}

pub fn read_frame(r: &mut impl Read) -> Result<(u8, Vec<u8>), FrameError> {
    let mut head = [0u8; 9];
    // the stream may end between frames (Eof), but a header cut short is a truncated frame
    let mut got = 0;
    while got < head.len() {
        match r.read(&mut head[got..]) {
            Ok(0) if got == 0 => return Err(FrameError::Eof),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    if &head[..4] != MAGIC {
        return Err(FrameError::Bad(format!("magic {:02x?}", &head[..4])));
    }
    let len = u32::from_le_bytes([head[5], head[6], head[7], head[8]]);
    if len > MAX_PAYLOAD {
        return Err(FrameError::Bad(format!("payload of {len} bytes")));
    }
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload).map_err(|e| if e.kind() == std::io::ErrorKind::UnexpectedEof { FrameError::Truncated } else { e.into() })?;
    Ok((head[4], payload))
}

/// Reads fields from a payload, failing instead of panicking on short input.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FrameError> {
        if self.0.len() < n {
            return Err(FrameError::Bad(format!("payload ends early (need {n} bytes, have {})", self.0.len())));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, FrameError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i32(&mut self) -> Result<i32, FrameError> {
        Ok(self.u32()? as i32)
    }
    fn u64(&mut self) -> Result<u64, FrameError> {
        let lo = self.u32()? as u64;
        let hi = self.u32()? as u64;
        Ok(lo | hi << 32)
    }
    fn bytes(&mut self) -> Result<&'a [u8], FrameError> {
        let n = self.u64()?;
        if n > MAX_PAYLOAD as u64 {
            return Err(FrameError::Bad(format!("field of {n} bytes")));
        }
        self.take(n as usize)
    }
    fn string(&mut self) -> Result<String, FrameError> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| FrameError::Bad("string is not UTF-8".into()))
    }
    fn end(&self) -> Result<(), FrameError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(FrameError::Bad(format!("{} trailing bytes", self.0.len())))
        }
    }
}

/// A job's identity: its sequence number on the worker and a digest of its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    pub seq: u64,
    pub digest: u64,
}

impl Tag {
    pub const LEN: usize = 16;

    /// The tag of job `seq` whose encoded payload is `job` (FNV-1a over the length and up to
    /// 64 KiB from each end: cheap for a launch of many megabytes, and different for any two
    /// jobs a run sends).
    pub fn of(seq: u64, job: &[u8]) -> Tag {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let n = job.len();
        let (head, tail) = if n <= 1 << 17 { (job, &job[..0]) } else { (&job[..1 << 16], &job[n - (1 << 16)..]) };
        for &b in (n as u64).to_le_bytes().iter().chain(head).chain(tail) {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Tag { seq, digest: h }
    }

    fn put(&self, v: &mut Vec<u8>) {
        v.extend_from_slice(&self.seq.to_le_bytes());
        v.extend_from_slice(&self.digest.to_le_bytes());
    }

    /// Split a tagged payload into its tag and the rest.
    pub fn split(p: &[u8]) -> Result<(Tag, &[u8]), FrameError> {
        if p.len() < Tag::LEN {
            return Err(FrameError::Bad(format!("a payload of {} bytes has no job tag", p.len())));
        }
        let u = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap_or([0; 8]));
        Ok((Tag { seq: u(0), digest: u(8) }, &p[Tag::LEN..]))
    }
}

/// A job payload with its tag in front.
pub fn tagged(tag: Tag, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(Tag::LEN + body.len());
    tag.put(&mut v);
    v.extend_from_slice(body);
    v
}

fn put_bytes(v: &mut Vec<u8>, b: &[u8]) {
    v.extend_from_slice(&(b.len() as u64).to_le_bytes());
    v.extend_from_slice(b);
}

pub fn encode_job(j: &LaunchJob) -> Vec<u8> {
    let mut v = Vec::with_capacity(j.cubin.len() + j.input.len() + 96);
    put_bytes(&mut v, j.kernel_name.as_bytes());
    for x in j.grid.iter().chain(&j.block).chain(std::iter::once(&j.shared_bytes)) {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&(j.output_bytes as u64).to_le_bytes());
    put_bytes(&mut v, &j.cubin);
    put_bytes(&mut v, &j.input);
    v
}

pub fn decode_job(p: &[u8]) -> Result<LaunchJob, FrameError> {
    let mut c = Cursor(p);
    let kernel_name = c.string()?;
    let mut g = [0u32; 7];
    for x in &mut g {
        *x = c.u32()?;
    }
    let output_bytes = c.u64()?;
    if output_bytes > MAX_PAYLOAD as u64 {
        return Err(FrameError::Bad(format!("output of {output_bytes} bytes")));
    }
    let cubin = c.bytes()?.to_vec();
    let input = c.bytes()?.to_vec();
    c.end()?;
    Ok(LaunchJob { cubin, kernel_name, grid: [g[0], g[1], g[2]], block: [g[3], g[4], g[5]], shared_bytes: g[6], input, output_bytes: output_bytes as usize })
}

/// A worker's answer to the job tagged `tag`, as a frame.
pub fn encode_answer(tag: Tag, r: &Result<Vec<u8>, ExecError>) -> (u8, Vec<u8>) {
    let mut v = Vec::with_capacity(Tag::LEN + r.as_ref().map_or(64, |o| o.len()));
    tag.put(&mut v);
    match r {
        Ok(out) => {
            v.extend_from_slice(out);
            (KIND_OUTPUT, v)
        }
        Err(ExecError::Fault { code, name, stage }) => {
            v.extend_from_slice(&code.to_le_bytes());
            put_bytes(&mut v, name.as_bytes());
            put_bytes(&mut v, stage.as_bytes());
            (KIND_FAULT, v)
        }
        Err(e) => {
            v.extend_from_slice(e.to_string().as_bytes());
            (KIND_SETUP, v)
        }
    }
}

/// An answer frame: the tag it carries, and the answer.
pub fn decode_answer(kind: u8, p: Vec<u8>) -> Result<(Tag, Result<Vec<u8>, ExecError>), FrameError> {
    let (tag, body) = Tag::split(&p)?;
    Ok((tag, decode_answer_body(kind, body)?))
}

fn decode_answer_body(kind: u8, p: &[u8]) -> Result<Result<Vec<u8>, ExecError>, FrameError> {
    match kind {
        KIND_OUTPUT => Ok(Ok(p.to_vec())),
        KIND_FAULT => {
            let mut c = Cursor(p);
            let code = c.i32()?;
            let name = c.string()?;
            let stage = c.string()?;
            c.end()?;
            Ok(Err(ExecError::Fault { code, name, stage }))
        }
        KIND_SETUP => Ok(Err(ExecError::Setup(String::from_utf8_lossy(p).into_owned()))),
        k => Err(FrameError::Bad(format!("unknown answer kind {k}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_round_trips_and_garbage_is_an_error() {
        let j = LaunchJob {
            cubin: vec![1, 2, 3],
            kernel_name: "k".into(),
            grid: [1, 2, 3],
            block: [4, 5, 6],
            shared_bytes: 7,
            input: vec![9; 100],
            output_bytes: 33,
        };
        let p = encode_job(&j);
        assert_eq!(decode_job(&p).unwrap(), j);
        for n in 0..p.len() {
            assert!(decode_job(&p[..n]).is_err());
        }
        let mut buf = Vec::new();
        write_frame(&mut buf, KIND_JOB, &p).unwrap();
        let (k, q) = read_frame(&mut &buf[..]).unwrap();
        assert_eq!((k, &q), (KIND_JOB, &p));
        assert!(matches!(read_frame(&mut &buf[..5]), Err(FrameError::Truncated)), "a header cut short is a truncated frame");
        assert!(matches!(read_frame(&mut &buf[..0]), Err(FrameError::Eof)));
        assert!(matches!(read_frame(&mut &b"XXXX\x01\0\0\0\0"[..]), Err(FrameError::Bad(_))));
        let f = Err(ExecError::Fault { code: 715, name: "CUDA_ERROR_ILLEGAL_INSTRUCTION".into(), stage: "sync".into() });
        let tag = Tag::of(3, &p);
        let (k, a) = encode_answer(tag, &f);
        assert_eq!(decode_answer(k, a).unwrap(), (tag, f));
        assert!(decode_answer(KIND_OUTPUT, vec![0; 15]).is_err(), "an answer without a tag");
        // tags tell jobs apart: by number, and by content
        assert_ne!(Tag::of(3, &p), Tag::of(4, &p));
        let mut q = p.clone();
        q[0] ^= 1;
        assert_ne!(Tag::of(3, &p).digest, Tag::of(3, &q).digest);
        let big = vec![7u8; 1 << 20];
        let mut big2 = big.clone();
        big2[5] = 0;
        assert_ne!(Tag::of(0, &big).digest, Tag::of(0, &big2).digest);
    }
}
