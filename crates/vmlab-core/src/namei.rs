//! Path lookup's key (`fs/namei.c` hashes a name to find its dentry): the name → file map
//! (`Kernel::file_ids`) holds each name in a `NameKey`. A short name (all that programs
//! render per operation, `pm{r}`, `mail{i}`) sits in the map's entry itself, so a lookup
//! compares it without following a pointer: with hundreds of thousands of files, that pointer
//! was a cache miss on every open, create and unlink.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

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

/// The name → file table. Every name is in `map`; a name that is a prefix and a number (`pm17`,
/// what a program renders from `pm{r}`) is also in a dense array per prefix, indexed by the
/// number. A program picking one of hundreds of thousands of files at random then reads one
/// `u32` of a few MB per open or unlink, where the hash table's probe was two cache misses in
/// tens of MB. The map stays the authority: a name the arrays do not hold is looked up there, so
/// the arrays only have to agree with it where they hold a name, and the map's iteration order
/// (the "did you mean" hint's) is untouched.
#[derive(Clone, Debug, Default)]
pub struct NameTable {
    map: FxHashMap<NameKey, u32>,
    numbered: Vec<Numbered>,
}

#[derive(Clone, Debug)]
struct Numbered {
    prefix: Box<str>,
    ids: Vec<u32>,
}

/// Prefixes given an array (a program uses a few name patterns; a name past these is in the map only).
const MAX_PREFIXES: usize = 8;
const NONE: u32 = u32::MAX;

/// `name` as (prefix, number) when it ends in a number written without leading zeros, so that
/// two names never share a slot (`pm07` is not `pm7`: it stays in the map only).
fn split_number(name: &str) -> Option<(&str, usize)> {
    let b = name.as_bytes();
    let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || (digits > 1 && b[b.len() - digits] == b'0') {
        return None;
    }
    let (prefix, num) = name.split_at(name.len() - digits);
    Some((prefix, num.bytes().fold(0usize, |n, c| n * 10 + usize::from(c - b'0'))))
}

impl NameTable {
    fn slot(&self, prefix: &str) -> Option<usize> {
        self.numbered.iter().position(|s| &*s.prefix == prefix)
    }

    pub fn get(&self, name: &str) -> Option<u32> {
        if let Some((prefix, n)) = split_number(name) {
            if let Some(s) = self.slot(prefix) {
                let id = self.numbered[s].ids.get(n).copied().unwrap_or(NONE);
                if id != NONE {
                    return Some(id);
                }
            }
        }
        self.map.get(name).copied()
    }

    /// Bind `name` to `id`, replacing a binding of the same name (as `HashMap::insert`).
    pub fn insert(&mut self, name: &str, id: u32) {
        self.map.insert(NameKey::new(name), id);
        let Some((prefix, n)) = split_number(name) else { return };
        let s = match self.slot(prefix) {
            Some(s) => s,
            None if self.numbered.len() < MAX_PREFIXES => {
                self.numbered.push(Numbered { prefix: prefix.into(), ids: Vec::new() });
                self.numbered.len() - 1
            }
            None => return,
        };
        // Grown only as far as the table's own size warrants, so that a sparse numbering
        // (`f{i * 1000000}`) cannot make an array of billions: such names stay in the map.
        let ids = &mut self.numbered[s].ids;
        if n >= ids.len() {
            if n > 2 * self.map.len() + 1024 {
                return;
            }
            ids.resize(n + 1, NONE);
        }
        ids[n] = id;
    }

    pub fn remove(&mut self, name: &str) {
        self.map.remove(name);
        if let Some((prefix, n)) = split_number(name) {
            if let Some(s) = self.slot(prefix) {
                if let Some(id) = self.numbered[s].ids.get_mut(n) {
                    *id = NONE;
                }
            }
        }
    }

    /// The names, in the hash map's order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(|k| k.as_str())
    }
}

impl std::ops::Index<&str> for NameTable {
    type Output = u32;
    fn index(&self, name: &str) -> &u32 {
        &self.map[name]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The table answers as a plain map would, through creates, replacements and unlinks of
    /// numbered names (canonical or not, under more prefixes than get arrays, sparse numbers)
    /// and others.
    #[test]
    fn the_table_answers_as_the_map() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut t = NameTable::default();
        let mut m: FxHashMap<String, u32> = FxHashMap::default();
        let name = |r: u64| {
            let p = ["pm", "mail", "d3/f", "", "x-"][(r % 5) as usize];
            match (r >> 3) % 6 {
                0 => format!("{p}0{}", (r >> 8) % 50),
                1 => format!("q{}_{}", (r >> 8) % 12, (r >> 12) % 40),
                2 => format!("{p}{}", (r >> 8) % 5000 * 1_000_003),
                3 => p.to_string(),
                _ => format!("{p}{}", (r >> 8) % 3000),
            }
        };
        for id in 0..100_000u32 {
            let n = name(rnd());
            match rnd() % 3 {
                0 => {
                    t.insert(&n, id);
                    m.insert(n.clone(), id);
                }
                1 => {
                    t.remove(&n);
                    m.remove(&n);
                }
                _ => {}
            }
            assert_eq!(t.get(&n), m.get(&n).copied(), "{n}");
        }
        assert!(t.numbered.len() == MAX_PREFIXES, "more prefixes than arrays were seen");
        for r in 0..20_000u64 {
            let n = name(r * 0x9e37_79b9);
            assert_eq!(t.get(&n), m.get(&n).copied(), "{n}");
        }
        assert_eq!(split_number("pm07"), None);
        assert_eq!(split_number("pm0"), Some(("pm", 0)));
        assert_eq!(split_number("7"), Some(("", 7)));
        assert_eq!(split_number("f1234567890"), None);
    }
}
