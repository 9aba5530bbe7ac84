//! The command-line spelling of an instruction word: `0x` and 32 hex digits, the 128-bit
//! word as one number, high 64 bits first (nvdisasm's second comment word is the high half).

/// A signed value in hex as nvdisasm prints offsets: `-0x41`, not its two's complement.
pub struct SignedHex(pub i64);

impl std::fmt::Display for SignedHex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        write!(f, "{sign}{:#x}", self.0.unsigned_abs())
    }
}

/// Why a text is not an instruction word.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    #[error("malformed hex {0:?}: expected 0x and 32 hex digits")]
    Malformed(String),
}

/// Parse `0x` + 32 hex digits (surrounding white space allowed).
pub fn parse_hex(text: &str) -> Result<u128, HexError> {
    if let Some(w) = parse_hex_bytes(text.as_bytes()) {
        return Ok(w);
    }
    let t = text.trim();
    // the message quotes a bounded excerpt, never a whole runaway input
    let bad = || HexError::Malformed(crate::lines::excerpt(t, 80));
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).ok_or_else(bad)?;
    if digits.len() != 32 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    u128::from_str_radix(digits, 16).map_err(|_| bad())
}

/// The word of a line that is exactly `0x` + 32 hex digits between ASCII white space, read
/// without building a string; `None` for anything else, which [`parse_hex`] then judges
/// (it accepts this and more, such as other white space, and words the error).
pub fn parse_hex_bytes(line: &[u8]) -> Option<u128> {
    let t = line.trim_ascii();
    let digits = match t {
        [b'0', b'x' | b'X', d @ ..] if d.len() == 32 => d,
        _ => return None,
    };
    #[cfg(target_arch = "x86_64")]
    {
        let (hi, lo) = (halves_sse2(&digits[..16])?, halves_sse2(&digits[16..])?);
        Some((hi as u128) << 64 | lo as u128)
    }
    #[cfg(not(target_arch = "x86_64"))]
    digits_by_table(digits)
}

/// 16 hex digits' value, 16 at a time (SSE2, part of x86-64); `None` if any is not one.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn halves_sse2(d: &[u8]) -> Option<u64> {
    use std::arch::x86_64::*;
    let d: &[u8; 16] = d.try_into().ok()?;
    // SAFETY: SSE2 is part of x86-64; the load is unaligned and reads the 16 bytes of `d`.
    unsafe {
        let c = _mm_loadu_si128(d.as_ptr().cast());
        // below 10 (unsigned) after subtracting '0': a digit; below 6 after lower-casing and
        // subtracting 'a': a letter
        let below = |x: __m128i, n: i8| _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(n - 1)), x);
        let dig = _mm_sub_epi8(c, _mm_set1_epi8(b'0' as i8));
        let let_ = _mm_sub_epi8(_mm_or_si128(c, _mm_set1_epi8(0x20)), _mm_set1_epi8(b'a' as i8));
        let (is_dig, is_let) = (below(dig, 10), below(let_, 6));
        if _mm_movemask_epi8(_mm_or_si128(is_dig, is_let)) != 0xffff {
            return None;
        }
        let v = _mm_or_si128(_mm_and_si128(is_dig, dig), _mm_and_si128(is_let, _mm_add_epi8(let_, _mm_set1_epi8(10))));
        // each pair of digits (first one high) into a byte, in the low byte of its 16-bit lane
        let pairs = _mm_and_si128(_mm_or_si128(_mm_slli_epi16::<4>(v), _mm_srli_epi16::<8>(v)), _mm_set1_epi16(0xff));
        let bytes = _mm_packus_epi16(pairs, pairs);
        Some(u64::from_be_bytes(_mm_cvtsi128_si64(bytes).to_le_bytes()))
    }
}

/// [`parse_hex_bytes`]'s digits read by table: the portable path, and the tests' reference.
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
fn digits_by_table(digits: &[u8]) -> Option<u128> {
    // by table, not by branches on the digit's range (random digits mispredict them), into
    // two 64-bit halves (a 128-bit shift per digit costs more), one check at the end
    let (mut hi, mut lo, mut bad) = (0u64, 0u64, 0u8);
    for i in 0..16 {
        let (h, l) = (HEX_VALUE[digits[i] as usize], HEX_VALUE[digits[i + 16] as usize]);
        bad |= h | l;
        hi = hi << 4 | (h & 15) as u64;
        lo = lo << 4 | (l & 15) as u64;
    }
    // a non-digit's 0xff sets bit 7, which no digit's value has
    (bad < 16).then_some((hi as u128) << 64 | lo as u128)
}

/// The value of each hex digit by its byte, 0xff for any other byte.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => 0xff,
        };
        i += 1;
    }
    t
};

/// `0x` + 32 lower-case hex digits.
pub fn format_hex(word: u128) -> String {
    // `format!("{word:#034x}")`, without the formatter's machinery (the manifest spells
    // thousands): `0x` and 32 lowercase digits, most significant first
    let mut b = [0u8; 34];
    b[0] = b'0';
    b[1] = b'x';
    for (i, c) in b[2..].iter_mut().enumerate() {
        *c = b"0123456789abcdef"[(word >> (4 * (31 - i)) & 15) as usize];
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// The word as the 16 bytes it occupies in instruction memory (little-endian).
pub fn to_bytes(word: u128) -> [u8; 16] {
    word.to_le_bytes()
}

/// A line as users paste words: what [`pasted`] makes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pasted<'a> {
    /// A whole word: `0x` + 32 digits, cuobjdump's and nvdisasm's two halves on one line
    /// (`0xLOW 0xHIGH`, low first as they print them), or both comments of a listing line.
    Word(u128),
    /// The first line of an nvdisasm or cuobjdump listing (`/*0040*/ HMUL2 ... ; /* 0xLOW */`):
    /// its text and the low half; the high half is the next line's comment.
    Low { text: &'a str, low: u64 },
    /// The second line of a listing: a comment holding the high half alone (`/* 0xHIGH */`).
    High(u64),
    /// Blank, or a `#` comment: passed through as it is.
    Verbatim,
    /// None of these.
    Other,
}

/// `0x` and 1 to 16 hex digits: one 64-bit half.
fn half(t: &str) -> Option<u64> {
    let d = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    if d.is_empty() || d.len() > 16 || !d.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(d, 16).ok()
}

/// What a pasted line holds (see [`Pasted`]). The listing forms are nvdisasm's and
/// cuobjdump's `-sass` output: an optional `/*addr*/`, the text and `;`, then the low half in
/// a comment, and the high half in a comment on the next line.
pub fn pasted(line: &str) -> Pasted<'_> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return Pasted::Verbatim;
    }
    if let Ok(w) = parse_hex(t) {
        return Pasted::Word(w);
    }
    // two bare halves, low first
    let bare: Vec<&str> = t.split_whitespace().collect();
    if let [lo, hi] = bare.as_slice() {
        if let (Some(lo), Some(hi)) = (half(lo), half(hi)) {
            return Pasted::Word((hi as u128) << 64 | lo as u128);
        }
    }
    // a listing line: its comments' halves, and the text outside the comments
    let (mut halves, mut text, mut rest) = (Vec::new(), "", t);
    // the text outside the comments: one piece at most
    fn take<'t>(text: &mut &'t str, piece: &'t str) -> bool {
        let piece = piece.trim();
        match (piece.is_empty(), text.is_empty()) {
            (true, _) => true,
            (false, true) => {
                *text = piece;
                true
            }
            (false, false) => false,
        }
    }
    while let Some(open) = rest.find("/*") {
        if !take(&mut text, &rest[..open]) {
            return Pasted::Other;
        }
        let Some(close) = rest[open..].find("*/") else { return Pasted::Other };
        let inside = rest[open + 2..open + close].trim();
        match half(inside) {
            Some(h) => halves.push(h),
            // the address (`/*0040*/`, hex without 0x) or another comment: not text
            None if inside.bytes().all(|b| b.is_ascii_hexdigit()) => {}
            None => return Pasted::Other,
        }
        rest = &rest[open + close + 2..];
    }
    if !take(&mut text, rest) {
        return Pasted::Other;
    }
    match (halves.as_slice(), text.is_empty()) {
        ([h], true) => Pasted::High(*h),
        ([lo, hi], _) => Pasted::Word((*hi as u128) << 64 | *lo as u128),
        ([lo], false) => {
            // the instruction's text without its ` ;`, as [`crate::isa::parse`] takes it
            let text = text.strip_suffix(';').unwrap_or(text).trim_end();
            Pasted::Low { text, low: *lo }
        }
        _ => Pasted::Other,
    }
}

/// The text of a listing line (see [`pasted`]) or the line itself: what `encode` parses.
pub fn listing_text(line: &str) -> &str {
    match pasted(line) {
        Pasted::Low { text, .. } => text,
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pasted_lines_as_nvdisasm_and_cuobjdump_print_them() {
        use super::{pasted, Pasted};
        let w = 0x004fca00000000000000000003077232u128;
        assert_eq!(pasted("0x004fca00000000000000000003077232"), Pasted::Word(w));
        assert_eq!(pasted("  0x0000000003077232 0x004fca0000000000 "), Pasted::Word(w));
        assert_eq!(
            pasted("        /*00a0*/                   HMUL2 R7, R3, R0 ;                /* 0x0000000003077232 */"),
            Pasted::Low { text: "HMUL2 R7, R3, R0", low: 0x3077232 }
        );
        assert_eq!(pasted("                                                                     /* 0x004fca0000000000 */"), Pasted::High(0x004fca0000000000));
        assert_eq!(pasted("/* 0x0000000003077232 */ /* 0x004fca0000000000 */"), Pasted::Word(w));
        for v in ["", "   ", "# a comment", "  #x"] {
            assert_eq!(pasted(v), Pasted::Verbatim, "{v:?}");
        }
        for o in ["0x123", "hello", "0x1 0x2 0x3", "/* 0x1", "/* note */ 0x1", "0x00000000000000001 0x0"] {
            assert_eq!(pasted(o), Pasted::Other, "{o:?}");
        }
    }

    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let w = 0x000fe200000000000000000201007232u128;
        assert_eq!(format_hex(w), "0x000fe200000000000000000201007232");
        assert_eq!(parse_hex(&format_hex(w)).unwrap(), w);
        let mut x = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128;
        for _ in 0..1000 {
            x = x.rotate_left(7) ^ x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            for w in [x, x >> 64, x & 0xffff, 0, u128::MAX] {
                assert_eq!(format_hex(w), format!("{w:#034x}"));
            }
        }
        for bad in [
            "",
            "0x",
            "000fe200000000000000000201007232",
            "0x000fe20000000000000000020100723",
            "0x000fe2000000000000000002010072g2",
            "0x000fe2000000000000000002010072321",
        ] {
            assert!(parse_hex(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bytes_agree_with_the_table() {
        // every byte in every position, among random digits of both cases
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..4000 {
            let mut d: Vec<u8> = (0..32).map(|_| b"0123456789abcdefABCDEF"[(next() % 22) as usize]).collect();
            if round >= 64 {
                d[(next() % 32) as usize] = (round % 256) as u8;
            }
            let line = [b"0x", &d[..]].concat();
            assert_eq!(parse_hex_bytes(&line), digits_by_table(&d), "{:?}", String::from_utf8_lossy(&line));
            if let Some(w) = parse_hex_bytes(&line) {
                assert_eq!(Ok(w), u128::from_str_radix(std::str::from_utf8(&d).unwrap_or("?"), 16));
            }
        }
    }
}
