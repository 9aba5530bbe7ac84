//! Reading lines of input with bounded memory, and quoting inputs in bounded excerpts: what
//! every layer that reads files (vectors, word lists) shares, command line or not.

/// The longest line read from any input (a vector line is about 200 bytes, a word 34): a
/// longer line is an error of its own, and its bytes are never held.
pub const MAX_LINE: usize = 64 * 1024;

/// At most `max` bytes of `s` (on a character boundary), saying how long it was when cut:
/// what an error message quotes of an input.
pub fn excerpt(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

/// One line of an input as [`lines_limited`] reads it.
pub type RawLine = Result<Vec<u8>, usize>;

/// The lines of `r` without their `\n` (and `\r\n`): each line's bytes, or Err(its length)
/// for a line longer than [`MAX_LINE`], whose bytes are skipped as they stream past. Memory
/// stays within the lines kept, whatever the input (`/dev/zero` included, with `limit`).
pub fn lines_limited(r: impl std::io::Read, limit: Option<u64>) -> std::io::Result<Vec<RawLine>> {
    let mut out = Vec::new();
    each_line(
        r,
        limit,
        |e| e,
        |l| {
            out.push(l.map(<[u8]>::to_vec));
            Ok(())
        },
    )?;
    Ok(out)
}

/// A line as [`each_line`] hands it on: without its `\r`, or Err(its length) when too long.
fn line(l: &[u8]) -> Result<&[u8], usize> {
    match l {
        l if l.len() > MAX_LINE => Err(l.len()),
        [rest @ .., b'\r'] => Ok(rest),
        l => Ok(l),
    }
}

/// Bytes read at a time by [`each_line`].
const READ_CHUNK: usize = 1 << 20;

/// [`lines_limited`] without keeping the lines: `each` gets every line in turn, borrowed
/// from one buffer (a line of [`MAX_LINE`] bytes or fewer), or Err(its length) for a longer
/// one. Memory is the buffer's (about 1 MiB), whatever the input; a read error becomes
/// `read_error(e)`, and the first error `each` returns ends the reading.
pub fn each_line<E>(
    mut r: impl std::io::Read,
    limit: Option<u64>,
    read_error: impl Fn(std::io::Error) -> E,
    mut each: impl FnMut(Result<&[u8], usize>) -> Result<(), E>,
) -> Result<(), E> {
    // buf[start..filled] holds the unfinished line; `skipped` > 0 while a line too long to
    // keep streams past (its length so far)
    let mut buf = vec![0u8; READ_CHUNK + MAX_LINE + 1];
    let (mut start, mut filled, mut skipped, mut total) = (0usize, 0usize, 0usize, 0u64);
    loop {
        // room for a whole chunk after the unfinished line (at most MAX_LINE + 1 bytes)
        if start > 0 {
            buf.copy_within(start..filled, 0);
            filled -= start;
            start = 0;
        }
        let n = loop {
            match r.read(&mut buf[filled..filled + READ_CHUNK]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_error(e)),
            }
        };
        if n == 0 {
            break;
        }
        total += n as u64;
        if let Some(l) = limit.filter(|&l| total > l) {
            return Err(read_error(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("more than {l} bytes"))));
        }
        let scan = filled;
        filled += n;
        // the newlines found by memchr (a few bytes a cycle; a byte-at-a-time search was a
        // tenth of `decode`'s time)
        for p in memchr::memchr_iter(b'\n', &buf[scan..filled]) {
            let end = scan + p;
            if skipped > 0 {
                each(Err(skipped + end - start))?;
                skipped = 0;
            } else {
                each(line(&buf[start..end]))?;
            }
            start = end + 1;
        }
        // an unfinished line longer than MAX_LINE: count it and let its bytes go
        if skipped > 0 || filled - start > MAX_LINE {
            skipped += filled - start;
            start = filled;
        }
    }
    if skipped > 0 {
        each(Err(skipped))?;
    } else if filled > start {
        each(line(&buf[start..filled]))?;
    }
    Ok(())
}

/// Open `path` for reading if it is a regular file (a FIFO would block, a device such as
/// `/dev/zero` never ends): anything else is an error saying what it is.
pub fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let f = std::fs::File::open(path)?;
    let t = f.metadata()?.file_type();
    if t.is_file() {
        return Ok(f);
    }
    let what = if t.is_dir() { "a folder" } else { "not a regular file (a FIFO, socket or device)" };
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, what))
}
