//! Writing a program into the template cubin: bounds-checked ELF64 reads, byte writes.
//!
//! Only the kernel's `.text` changes size; everything after it moves by the same multiple of
//! its alignment, so the rest of the file keeps its bytes and alignments. Then the header
//! fields the driver reads are brought in line: section and program headers, the kernel
//! symbol's size, `EIATTR_REGCOUNT`, `EIATTR_EXIT_INSTR_OFFSETS`, the `.debug_frame` FDE range.

use super::PatchError;
use crate::target::Target;
use object::read::elf::ElfFile64;
use object::{Object, ObjectSection, ObjectSymbol};

/// The template's kernel: its entry symbol and the sections named after it.
pub const KERNEL_NAME: &str = "hmul2_kernel";
/// `e_machine` of CUDA cubins.
const EM_CUDA: u16 = 190;
/// Size of constant bank 3 in the template (`cdata`).
pub const BANK3_BYTES: usize = 0x10000;
/// `.nv.info` attribute ids (CuAssembler, cuobjdump names).
const EIATTR_REGCOUNT: u8 = 0x2f;
const EIATTR_EXIT_INSTR_OFFSETS: u8 = 0x1c;
/// `.nv.info` entry format with a 16-bit size and a payload.
const EIFMT_SVAL: u8 = 4;

fn bad(what: impl Into<String>) -> PatchError {
    PatchError::Malformed(what.into())
}

fn rd<const N: usize>(d: &[u8], at: usize) -> Result<[u8; N], PatchError> {
    at.checked_add(N)
        .and_then(|end| d.get(at..end))
        .map(|s| {
            let mut b = [0u8; N];
            b.copy_from_slice(s);
            b
        })
        .ok_or_else(|| bad(format!("read of {N} bytes at {at:#x} past the end ({:#x})", d.len())))
}
fn u16_at(d: &[u8], at: usize) -> Result<u16, PatchError> {
    Ok(u16::from_le_bytes(rd(d, at)?))
}
fn u32_at(d: &[u8], at: usize) -> Result<u32, PatchError> {
    Ok(u32::from_le_bytes(rd(d, at)?))
}
fn u64_at(d: &[u8], at: usize) -> Result<u64, PatchError> {
    Ok(u64::from_le_bytes(rd(d, at)?))
}
fn put(d: &mut [u8], at: usize, v: &[u8]) -> Result<(), PatchError> {
    let len = d.len();
    at.checked_add(v.len())
        .and_then(|end| d.get_mut(at..end))
        .map(|s| s.copy_from_slice(v))
        .ok_or_else(|| bad(format!("write of {} bytes at {at:#x} past the end ({len:#x})", v.len())))
}
fn put32(d: &mut [u8], at: usize, v: u32) -> Result<(), PatchError> {
    put(d, at, &v.to_le_bytes())
}
fn put64(d: &mut [u8], at: usize, v: u64) -> Result<(), PatchError> {
    put(d, at, &v.to_le_bytes())
}

/// One section header, with where it sits in the file.
#[derive(Clone, Debug)]
struct Shdr {
    at: usize,
    name: String,
    kind: u32,
    info: u32,
    offset: u64,
    size: u64,
    align: u64,
}

/// Where the patcher's targets are in a checked template.
#[derive(Clone, Debug)]
pub struct Template {
    shdrs: Vec<Shdr>,
    text: usize,
    info: usize,
    kinfo: usize,
    bank3: usize,
    debug_frame: Option<usize>,
    symtab: usize,
    kernel_sym: u32,
    phoff: u64,
    phnum: u16,
}

fn shdr_index(shdrs: &[Shdr], name: &str) -> Result<usize, PatchError> {
    shdrs.iter().position(|s| s.name == name).ok_or_else(|| PatchError::MissingSection(name.into()))
}

/// Check that `d` is a CUDA cubin for `target` holding the template kernel, and find its parts.
pub fn inspect(d: &[u8], target: &Target) -> Result<Template, PatchError> {
    if d.len() < 64 || &d[0..4] != b"\x7fELF" {
        return Err(PatchError::NotElf);
    }
    if d[4] != 2 || d[5] != 1 {
        return Err(PatchError::NotElf64Le);
    }
    let machine = u16_at(d, 18)?;
    if machine != EM_CUDA {
        return Err(PatchError::NotCuda { machine });
    }
    let flags = u32_at(d, 48)?;
    // ptxas 13 writes the newer CUDA ELF (OS ABI 0x41: the SM in bits 8..15 of e_flags);
    // ptxas 12 the older one (OS ABI 0x33: the SM in bits 0..7)
    let sm = if d[7] == 0x33 { flags & 0xff } else { (flags >> 8) & 0xff };
    if sm != target.sm {
        return Err(PatchError::WrongArch { sm, flags, want: target.ptxas });
    }
    // the object crate checks the headers and tables as a whole
    let elf = ElfFile64::<object::LittleEndian>::parse(d).map_err(|e| bad(format!("ELF: {e}")))?;
    let sym = elf.symbols().find(|s| s.name() == Ok(KERNEL_NAME)).ok_or_else(|| PatchError::MissingSymbol(KERNEL_NAME.into()))?;
    let kernel_sym = sym.index().0 as u32;
    for s in elf.sections() {
        // forces name lookup errors out now
        s.name().map_err(|e| bad(format!("section name: {e}")))?;
    }
    let shoff = u64_at(d, 0x28)? as usize;
    let shentsize = u16_at(d, 0x3a)? as usize;
    let shnum = u16_at(d, 0x3c)? as usize;
    let shstrndx = u16_at(d, 0x3e)? as usize;
    if shentsize != 64 {
        return Err(bad(format!("section header size {shentsize}")));
    }
    let mut raw = Vec::new();
    for i in 0..shnum {
        let at = shoff.checked_add(i * 64).ok_or_else(|| bad("section headers past the end"))?;
        raw.push((at, u32_at(d, at)?, u32_at(d, at + 4)?, u32_at(d, at + 44)?, u64_at(d, at + 24)?, u64_at(d, at + 32)?, u64_at(d, at + 48)?));
    }
    let strtab = raw.get(shstrndx).ok_or_else(|| bad("no section-name table"))?;
    let (str_off, str_size) = (strtab.4 as usize, strtab.5 as usize);
    let names = d.get(str_off..str_off.saturating_add(str_size)).ok_or_else(|| bad("section-name table past the end"))?;
    let mut shdrs = Vec::new();
    for &(at, name, kind, info, offset, size, align) in &raw {
        let n = names.get(name as usize..).ok_or_else(|| bad("section name past its table"))?;
        let n = &n[..n.iter().position(|&b| b == 0).unwrap_or(n.len())];
        shdrs.push(Shdr { at, name: String::from_utf8_lossy(n).into_owned(), kind, info, offset, size, align });
    }
    let text = shdr_index(&shdrs, &format!(".text.{KERNEL_NAME}"))?;
    let info = shdr_index(&shdrs, ".nv.info")?;
    let kinfo = shdr_index(&shdrs, &format!(".nv.info.{KERNEL_NAME}"))?;
    let bank3 = shdr_index(&shdrs, ".nv.constant3")?;
    let symtab = shdr_index(&shdrs, ".symtab")?;
    let debug_frame = shdrs.iter().position(|s| s.name == ".debug_frame");
    // any size of data here (SM100/SM120's scaffolds hold one word); the patcher's
    // templates must hold BANK3_BYTES, which `write` checks
    if shdrs[bank3].kind != 1 {
        return Err(bad(".nv.constant3 holds no data".to_string()));
    }
    for s in &shdrs {
        if [text, info, kinfo, bank3, symtab].iter().any(|&i| shdrs[i].name == s.name) && s.kind == 8 {
            return Err(bad(format!("section {} holds no data", s.name)));
        }
        if s.kind != 8 && (s.offset.checked_add(s.size).is_none_or(|e| e > d.len() as u64)) {
            return Err(bad(format!("section {} lies past the end of the file", s.name)));
        }
    }
    let t = Template { text, info, kinfo, bank3, debug_frame, symtab, kernel_sym, phoff: u64_at(d, 0x20)?, phnum: u16_at(d, 0x38)?, shdrs };
    // the attributes must be there before anything is written
    find_attr(d, &t.shdrs[t.info], EIATTR_REGCOUNT, Some(kernel_sym))?;
    let (_, n) = find_attr(d, &t.shdrs[t.kinfo], EIATTR_EXIT_INSTR_OFFSETS, None)?;
    if n != 4 {
        return Err(bad(format!("EIATTR_EXIT_INSTR_OFFSETS holds {n} bytes; the template has one EXIT")));
    }
    Ok(t)
}

/// Payload position and size of attribute `attr` in a `.nv.info` section (for a per-symbol
/// attribute, the one whose first word is `sym`).
fn find_attr(d: &[u8], s: &Shdr, attr: u8, sym: Option<u32>) -> Result<(usize, usize), PatchError> {
    let (start, end) = (s.offset as usize, s.offset.saturating_add(s.size) as usize);
    let mut at = start;
    while at.saturating_add(4) <= end {
        let [fmt, id] = rd::<2>(d, at)?;
        if fmt == EIFMT_SVAL {
            let n = u16_at(d, at + 2)? as usize;
            if at.saturating_add(4 + n) > end {
                return Err(bad(format!("{}: attribute {id:#x} runs past the section", s.name)));
            }
            if id == attr && sym.is_none_or(|k| n >= 4 && u32_at(d, at + 4).ok() == Some(k)) {
                return Ok((at + 4, n));
            }
            at += 4 + n;
        } else {
            at += 4;
        }
    }
    Err(PatchError::MissingAttribute { section: s.name.clone(), attr })
}

/// The template with `code` as the kernel's `.text`, `regcount` registers and `bank3` as
/// constant bank 3. `code.len()` must be a multiple of the `.text` alignment; `exit_at` is
/// the byte offset of the program's one EXIT.
pub fn write(d: &[u8], t: &Template, code: &[u8], exit_at: u32, regcount: u32, bank3: &[u8]) -> Result<Vec<u8>, PatchError> {
    let text = &t.shdrs[t.text];
    let align = text.align.max(1);
    let max_align = t.shdrs.iter().map(|s| s.align).max().unwrap_or(1).max(8);
    if t.shdrs[t.bank3].size as usize != BANK3_BYTES {
        return Err(bad(format!(".nv.constant3 is not {BANK3_BYTES} bytes of data")));
    }
    if !(code.len() as u64).is_multiple_of(align) || bank3.len() != BANK3_BYTES {
        return Err(bad("program not padded to the .text alignment or bank 3 image of the wrong size"));
    }
    let (old_off, old_end) = (text.offset as usize, (text.offset + text.size) as usize);
    let grow = code.len() as i64 - text.size as i64;
    // later sections move by a multiple of every alignment in the file
    let delta = if grow <= 0 { 0 } else { (grow as u64).div_ceil(max_align) * max_align };
    let new_end = old_off + code.len();
    let mut out = Vec::with_capacity(d.len() + delta as usize);
    out.extend_from_slice(&d[..old_off]);
    out.extend_from_slice(code);
    out.resize(old_end + delta as usize, 0);
    out.extend_from_slice(&d[old_end..]);
    let moved = |off: u64| if off >= old_end as u64 && off > old_off as u64 { off.saturating_add(delta) } else { off };
    // ELF header
    let shoff = u64_at(d, 0x28)?;
    put64(&mut out, 0x28, moved(shoff))?;
    put64(&mut out, 0x20, moved(t.phoff))?;
    let sh_at = |s: &Shdr| (moved(shoff) as usize).saturating_add(s.at - shoff as usize);
    for (i, s) in t.shdrs.iter().enumerate() {
        let at = sh_at(s);
        if i == t.text {
            put64(&mut out, at + 32, code.len() as u64)?;
        } else if i != 0 {
            put64(&mut out, at + 24, moved(s.offset))?;
        }
    }
    // program headers: the one that maps .text now maps the program
    let ph = moved(t.phoff) as usize;
    for i in 0..t.phnum as usize {
        let at = ph.saturating_add(i * 56);
        let off = u64_at(&out, at + 8)?;
        let filesz = u64_at(&out, at + 32)?;
        if off == old_off as u64 && filesz == text.size {
            put64(&mut out, at + 32, code.len() as u64)?;
            put64(&mut out, at + 40, code.len() as u64)?;
        } else if off < old_off as u64 && off.saturating_add(filesz) == old_end as u64 && u64_at(&out, at + 40)? == filesz {
            // a segment that ends with .text (ptxas's sm_80..sm_89 cubins map the constant
            // banks and .text in one): it now ends with the program
            let size = new_end as u64 - off;
            put64(&mut out, at + 32, size)?;
            put64(&mut out, at + 40, size)?;
        } else if off < old_end as u64 && off.saturating_add(filesz) > old_off as u64 {
            return Err(bad("a program header maps .text together with other sections"));
        } else {
            put64(&mut out, at + 8, moved(off))?;
        }
    }
    // section contents, at their new places
    let at_new = |s: &Shdr| moved(s.offset) as usize;
    // .text's sh_info: symbol index, with the register count in bits 24..31 where the template has one
    let text_info_at = sh_at(text) + 44;
    if text.info >> 24 != 0 {
        put32(&mut out, text_info_at, (text.info & 0x00ff_ffff) | (regcount << 24))?;
    }
    let (rc_at, _) = find_attr(d, &t.shdrs[t.info], EIATTR_REGCOUNT, Some(t.kernel_sym))?;
    put32(&mut out, moved(rc_at as u64) as usize + 4, regcount)?;
    let (ex_at, _) = find_attr(d, &t.shdrs[t.kinfo], EIATTR_EXIT_INSTR_OFFSETS, None)?;
    put32(&mut out, moved(ex_at as u64) as usize, exit_at)?;
    let b3 = at_new(&t.shdrs[t.bank3]);
    put(&mut out, b3, bank3)?;
    // the kernel symbol's size
    let st = &t.shdrs[t.symtab];
    let sym_at = at_new(st) + t.kernel_sym as usize * 24;
    if sym_at.saturating_add(24) > at_new(st).saturating_add(st.size as usize) {
        return Err(bad("kernel symbol outside .symtab"));
    }
    put64(&mut out, sym_at + 16, code.len() as u64)?;
    // .debug_frame: FDE address ranges equal to the old size become the new size
    if let Some(df) = t.debug_frame {
        let s = &t.shdrs[df];
        let (mut at, end) = (at_new(s), at_new(s).saturating_add(s.size as usize));
        while at.saturating_add(4) <= end {
            let len = u32_at(&out, at)? as usize;
            if len == 0xffff_ffff {
                // 64-bit DWARF: length, CIE id (8), initial location (8), address range (8)
                let len = u64_at(&out, at + 4)? as usize;
                let id = u64_at(&out, at + 12)?;
                if id != u64::MAX && at.saturating_add(36) <= end && u64_at(&out, at + 28)? == text.size {
                    put64(&mut out, at + 28, new_end as u64 - old_off as u64)?;
                }
                at = at.saturating_add(12 + len);
            } else {
                at = at.saturating_add(4 + len.max(1));
            }
        }
    }
    Ok(out)
}

/// What a loader needs from a patched cubin: the kernel's code, constant bank 3, and the
/// attributes the driver reads. For the CPU emulator ([`super::emu`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// The architecture the cubin's ELF names.
    pub target: &'static Target,
    /// `.text.<kernel>` as 128-bit words.
    pub text: Vec<u128>,
    /// `.nv.constant3`.
    pub bank3: Vec<u8>,
    /// Registers per thread: `EIATTR_REGCOUNT`, which must equal the `.text` header's sh_info high byte.
    pub regcount: u32,
    /// `EIATTR_EXIT_INSTR_OFFSETS`: byte offsets of the EXITs in `.text`.
    pub exits: Vec<u32>,
}

/// The target a cubin says it is for (its ELF header's SM), if the harness speaks it.
pub fn target_of(d: &[u8]) -> Result<&'static Target, PatchError> {
    if d.len() < 64 || &d[0..4] != b"\x7fELF" {
        return Err(PatchError::NotElf);
    }
    let flags = u32_at(d, 48)?;
    let sm = if d[7] == 0x33 { flags & 0xff } else { (flags >> 8) & 0xff };
    static ONE_OF: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let want = || ONE_OF.get_or_init(|| format!("one of {}", Target::all_ptxas_names())).as_str();
    Target::ALL.into_iter().find(|t| t.sm == sm).ok_or_else(|| PatchError::WrongArch { sm, flags, want: want() })
}

/// Read a cubin as a loader would, checking what the patcher keeps consistent; the cubin's
/// own architecture ([`target_of`]) is the one it is read for.
pub fn image(d: &[u8]) -> Result<Image, PatchError> {
    let target = target_of(d)?;
    let t = inspect(d, target)?;
    let section = |i: usize| -> Result<&[u8], PatchError> {
        let s = &t.shdrs[i];
        d.get(s.offset as usize..s.offset.saturating_add(s.size) as usize).ok_or_else(|| bad(format!("section {} lies past the end of the file", s.name)))
    };
    let code = section(t.text)?;
    if !code.len().is_multiple_of(16) || code.is_empty() {
        return Err(bad(format!(".text holds {} bytes, not whole 16-byte instructions", code.len())));
    }
    let text = code.chunks_exact(16).map(|c| u128::from_le_bytes(c.try_into().unwrap_or([0; 16]))).collect();
    let (rc_at, n) = find_attr(d, &t.shdrs[t.info], EIATTR_REGCOUNT, Some(t.kernel_sym))?;
    if n < 8 {
        return Err(bad(format!("EIATTR_REGCOUNT holds {n} bytes")));
    }
    let regcount = u32_at(d, rc_at + 4)?;
    let header = t.shdrs[t.text].info >> 24;
    if header != 0 && header != regcount {
        return Err(bad(format!(".text sh_info says {header} registers, EIATTR_REGCOUNT says {regcount}")));
    }
    let (ex_at, n) = find_attr(d, &t.shdrs[t.kinfo], EIATTR_EXIT_INSTR_OFFSETS, None)?;
    let exits = (0..n / 4).map(|i| u32_at(d, ex_at + 4 * i)).collect::<Result<_, _>>()?;
    Ok(Image { target, text, bank3: section(t.bank3)?.to_vec(), regcount, exits })
}
