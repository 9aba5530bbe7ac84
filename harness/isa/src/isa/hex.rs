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
    let t = text.trim();
    // the message quotes a bounded excerpt, never a whole runaway input
    let bad = || HexError::Malformed(crate::cli::excerpt(t, 80));
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).ok_or_else(bad)?;
    if digits.len() != 32 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    u128::from_str_radix(digits, 16).map_err(|_| bad())
}

/// `0x` + 32 lower-case hex digits.
pub fn format_hex(word: u128) -> String {
    format!("{word:#034x}")
}

/// The word as the 16 bytes it occupies in instruction memory (little-endian).
pub fn to_bytes(word: u128) -> [u8; 16] {
    word.to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let w = 0x000fe200000000000000000201007232u128;
        assert_eq!(format_hex(w), "0x000fe200000000000000000201007232");
        assert_eq!(parse_hex(&format_hex(w)).unwrap(), w);
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
}
