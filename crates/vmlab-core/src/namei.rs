//! Path lookup's key (`fs/namei.c` hashes a name to find its dentry): the name → file map
//! (`Kernel::file_ids`) holds each name in a `NameKey`. A short name (all that programs
//! render per operation, `pm{r}`, `mail{i}`) sits in the map's entry itself, so a lookup
//! compares it without following a pointer: with hundreds of thousands of files, that pointer
//! was a cache miss on every open, create and unlink.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

/// The longest name held in the entry: the key is then as large as a boxed one plus its tag.
const INLINE: usize = 22;

#[derive(Clone, Debug)]
pub enum NameKey {
    Inline { len: u8, bytes: [u8; INLINE] },
    Boxed(Box<str>),
}

impl NameKey {
    pub fn new(name: &str) -> NameKey {
        if name.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..name.len()].copy_from_slice(name.as_bytes());
            NameKey::Inline { len: name.len() as u8, bytes }
        } else {
            NameKey::Boxed(name.into())
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Copied from a `str` whole, so always valid UTF-8; the check is a few bytes.
            NameKey::Inline { len, bytes } => std::str::from_utf8(&bytes[..*len as usize]).unwrap_or_default(),
            NameKey::Boxed(s) => s,
        }
    }
}

impl Borrow<str> for NameKey {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

/// Hashed as the `str` it holds (as `Borrow` requires), so the map's layout, and the order
/// its names are listed in for a "did you mean" hint, are those of a map keyed by `String`.
impl Hash for NameKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq for NameKey {
    fn eq(&self, other: &NameKey) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for NameKey {}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    #[test]
    fn short_and_long_names_are_found_by_str() {
        let long = "a-file-name-longer-than-the-inline-buffer";
        let mut m: FxHashMap<NameKey, u32> = FxHashMap::default();
        for (i, n) in ["", "pm7", "mail149999", "exactly-twenty-two-b22", long].iter().enumerate() {
            m.insert(NameKey::new(n), i as u32);
        }
        assert!(matches!(NameKey::new("exactly-twenty-two-b22"), NameKey::Inline { .. }));
        assert!(matches!(NameKey::new(long), NameKey::Boxed(_)));
        assert_eq!(m.get("pm7"), Some(&1));
        assert_eq!(m.get(long), Some(&4));
        assert_eq!(m.get(""), Some(&0));
        assert_eq!(m.get("pm"), None);
        assert_eq!(m.get("pm70"), None);
        m.remove("mail149999");
        assert_eq!(m.get("mail149999"), None);
    }

    /// The same names in the same order list the same way as in a `String`-keyed map.
    #[test]
    fn iteration_order_is_that_of_string_keys() {
        let names: Vec<String> = (0..2000).map(|i| format!("f{}", i * 7919 % 3001)).collect();
        let mut a: FxHashMap<NameKey, u32> = FxHashMap::default();
        let mut b: FxHashMap<String, u32> = FxHashMap::default();
        for (i, n) in names.iter().enumerate() {
            a.insert(NameKey::new(n), i as u32);
            b.insert(n.clone(), i as u32);
            if i % 3 == 0 {
                a.remove(names[i / 2].as_str());
                b.remove(names[i / 2].as_str());
            }
        }
        let la: Vec<&str> = a.keys().map(|k| k.as_str()).collect();
        let lb: Vec<&str> = b.keys().map(|k| k.as_str()).collect();
        assert_eq!(la, lb);
    }
}
