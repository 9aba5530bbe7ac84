//! Many short strings in one allocation: the renderer's lookup tables stay small and close
//! together in cache (a `Vec<String>` scatters them over the heap).

/// Entry `i` is `text[bounds[i]..bounds[i + 1]]`; `bounds` starts with 0, so a lookup
/// needs no branch for the first entry.
#[derive(Debug)]
pub struct StrTable {
    text: String,
    bounds: Vec<u32>,
}

impl Default for StrTable {
    fn default() -> Self {
        StrTable { text: String::new(), bounds: vec![0] }
    }
}

impl StrTable {
    pub fn len(&self) -> usize {
        self.bounds.len() - 1
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.bounds.get(i.checked_add(1)?)? as usize;
        self.text.get(self.bounds[i] as usize..end)
    }
}

impl StrTable {
    /// `n` entries, entry `i` appended by `write(i, text)` straight into the table's text
    /// (no string per entry).
    pub fn build(n: usize, mut write: impl FnMut(usize, &mut String)) -> StrTable {
        let mut t = StrTable { text: String::new(), bounds: Vec::with_capacity(n + 1) };
        t.bounds.push(0);
        for i in 0..n {
            write(i, &mut t.text);
            t.bounds.push(t.text.len() as u32);
        }
        t
    }
}

impl<S: AsRef<str>> FromIterator<S> for StrTable {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut t = StrTable::default();
        for s in iter {
            t.text.push_str(s.as_ref());
            t.bounds.push(t.text.len() as u32);
        }
        t
    }
}

impl std::ops::Index<usize> for StrTable {
    type Output = str;
    /// Panics on an index past the end, like a slice (callers index by masked field values).
    fn index(&self, i: usize) -> &str {
        let b = &self.bounds[i..i + 2];
        &self.text[b[0] as usize..b[1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_back() {
        let t: StrTable = ["a", "", "bcd"].into_iter().collect();
        assert_eq!((&t[0], &t[1], &t[2]), ("a", "", "bcd"));
        assert_eq!(t.get(3), None);
        assert_eq!(t.len(), 3);
        let b = StrTable::build(3, |i, out| out.push_str(["a", "", "bcd"][i]));
        assert_eq!((&b[0], &b[1], &b[2], b.len()), ("a", "", "bcd", 3));
    }
}
