//! Many short strings in one allocation: the renderer's lookup tables stay small and close
//! together in cache (a `Vec<String>` scatters them over the heap).

/// Entry `i` is `text[ends[i - 1]..ends[i]]`.
#[derive(Debug, Default)]
pub struct StrTable {
    text: String,
    ends: Vec<u32>,
}

impl StrTable {
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.text.get(start..end)
    }
}

impl<S: AsRef<str>> FromIterator<S> for StrTable {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut t = StrTable::default();
        for s in iter {
            t.text.push_str(s.as_ref());
            t.ends.push(t.text.len() as u32);
        }
        t
    }
}

impl std::ops::Index<usize> for StrTable {
    type Output = str;
    /// Panics on an index past the end, like a slice (callers index by masked field values).
    fn index(&self, i: usize) -> &str {
        let end = self.ends[i] as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..end]
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
    }
}
