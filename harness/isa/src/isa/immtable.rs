//! The fused decoder's immediate texts, built by `build.rs` at compile time (this file is
//! compiled twice: into the build script, with [`super::floattext`] beside it, and into the
//! library, whose tests rebuild the table and compare it with the compiled-in one).
//!
//! Layout: 16 bytes per magnitude and format, F16's 2^15 magnitudes then BF16's (1 MiB: a
//! table of the texts themselves is twice that, and falls out of the cache). An entry is the
//! text of the positive value in 4-bit codes ([`NIBBLE`]), two to a byte, low nibble first,
//! and its length in byte 15; a negative value is `-` and the same text. Zeros, infinities
//! and NaNs (bit 7 of byte 15) spell their sign their own way: byte 0 is their class, whose
//! four texts (positive and negative, each without and with `, `) are [`special`]'s entries
//! `class << 2 | negative << 1 | first`, padded to 16 bytes with the length in byte 15.

use super::floattext::{spell_into, Half};

/// The characters of immediate texts, by 4-bit code.
pub const NIBBLE: &[u8; 14] = b"0123456789.e-+";

/// The 4-bit code of each character of [`NIBBLE`] by its byte; 0xff for any other byte.
const NIBBLE_CODE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < NIBBLE.len() {
        t[NIBBLE[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Entries in the packed table: every magnitude of both formats.
pub const PACKED: usize = 1 << 16;

/// The packed table and the special texts (see the module's text), or None when a spelling
/// does not fit the layout (too long, a character outside [`NIBBLE`], more than 4 classes).
#[allow(clippy::type_complexity)]
pub fn texts() -> Option<(Vec<[u8; 16]>, Vec<[u8; 16]>)> {
    // the few that are not plain numbers are marked, then classed below in order
    const LATER: u8 = 0xff;
    let mut packed = vec![[0u8; 16]; PACKED];
    let mut pos = String::with_capacity(32);
    for (k, slot) in packed.iter_mut().enumerate() {
        let h = if k >> 15 == 1 { Half::Bf16 } else { Half::F16 };
        pos.clear();
        spell_into(h, (k & 0x7fff) as u16, &mut pos);
        // a finite nonzero value's negative is `-` and the same text (floattext spells it so)
        if pos.len() > 30 || pos == "0" || pos.bytes().any(|c| NIBBLE_CODE[c as usize] == LATER) {
            slot[15] = LATER;
            continue;
        }
        for (i, c) in pos.bytes().enumerate() {
            slot[i / 2] |= NIBBLE_CODE[c as usize] << (i % 2 * 4);
        }
        slot[15] = pos.len() as u8;
    }
    let mut special: Vec<[u8; 16]> = Vec::new();
    let mut classes: Vec<String> = Vec::new();
    let mut neg = String::with_capacity(32);
    for (k, slot) in packed.iter_mut().enumerate().filter(|(_, e)| e[15] == LATER) {
        let h = if k >> 15 == 1 { Half::Bf16 } else { Half::F16 };
        let mag = (k & 0x7fff) as u16;
        pos.clear();
        neg.clear();
        spell_into(h, mag, &mut pos);
        spell_into(h, mag | 0x8000, &mut neg);
        // one class per distinct (positive, negative) spelling: 0, INF, QNAN, SNAN
        let key = format!("{pos}/{neg}");
        let class = match classes.iter().position(|c| *c == key) {
            Some(c) => c,
            None => {
                classes.push(key);
                for t in [pos.clone(), format!("{pos}, "), neg.clone(), format!("{neg}, ")] {
                    let mut e = [0u8; 16];
                    if t.len() > 15 || !t.is_ascii() {
                        return None;
                    }
                    e[..t.len()].copy_from_slice(t.as_bytes());
                    e[15] = t.len() as u8;
                    special.push(e);
                }
                classes.len() - 1
            }
        };
        if class > 3 {
            return None;
        }
        *slot = [0; 16];
        slot[0] = class as u8;
        slot[15] = 0x80;
    }
    Some((packed, special))
}
