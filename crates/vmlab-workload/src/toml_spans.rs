//! Where each key and value of a scenario file is: the `toml` deserializer hands out spans
//! through `serde_spanned`'s private struct protocol, but only for what has one. The parts of a
//! dotted key (`x.y = 1`) and of a table header (`[vars.x]`) come without, and asking for a
//! `toml::Spanned` there fails, which used to cost the whole file its positions. These types
//! ask in the same way and take whatever comes back: a span, or the bare key or value.

use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_spanned::__unstable::{END_FIELD, NAME, START_FIELD, VALUE_FIELD};

const FIELDS: &[&str] = &[START_FIELD, END_FIELD, VALUE_FIELD];

/// A value with its span, if it has one.
pub struct Spanned(pub Option<Range<usize>>, pub Node);

/// A table key with its span, if it has one.
pub struct Key(pub String, pub Option<Range<usize>>);

#[derive(Default, Debug)]
pub enum Node {
    #[default]
    Leaf,
    /// Keys with their spans and the values with theirs.
    Table(Vec<(Key, Spanned)>),
    Array(Vec<Spanned>),
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{:?}", self.0, self.1)
    }
}

impl std::fmt::Debug for Spanned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}@{:?}", self.1, self.0)
    }
}

impl<'de> Deserialize<'de> for Spanned {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(NAME, FIELDS, NodeVisitor)
    }
}

/// The value inside a span wrapper: asked for as itself (asking for a span again would wrap
/// it again), and the whole document.
pub struct Bare(pub Node);

impl<'de> Deserialize<'de> for Bare {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor).map(|s| Bare(s.1))
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<Key, E> {
                Ok(Key(s.to_string(), None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Key, A::Error> {
                let (mut start, mut end, mut key) = (0usize, 0usize, String::new());
                while let Some(f) = m.next_key::<String>()? {
                    match f.as_str() {
                        START_FIELD => start = m.next_value()?,
                        END_FIELD => end = m.next_value()?,
                        _ => key = m.next_value()?,
                    }
                }
                Ok(Key(key, Some(start..end)))
            }
        }
        d.deserialize_struct(NAME, FIELDS, V)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Spanned;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Spanned, E> {
        Ok(Spanned(None, Node::Leaf))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Spanned, E> {
        Ok(Spanned(None, Node::Leaf))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Spanned, E> {
        Ok(Spanned(None, Node::Leaf))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Spanned, E> {
        Ok(Spanned(None, Node::Leaf))
    }
    fn visit_str<E>(self, _: &str) -> Result<Spanned, E> {
        Ok(Spanned(None, Node::Leaf))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Spanned, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<Spanned>()? {
            items.push(v);
        }
        Ok(Spanned(None, Node::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Spanned, A::Error> {
        let Some(first) = map.next_key::<Key>()? else { return Ok(Spanned(None, Node::Table(Vec::new()))) };
        if first.1.is_none() && first.0 == START_FIELD {
            // The span wrapper: start, end, then the value itself.
            let start: usize = map.next_value()?;
            let (mut end, mut node) = (start, Node::Leaf);
            while let Some(f) = map.next_key::<String>()? {
                if f == END_FIELD {
                    end = map.next_value()?;
                } else {
                    node = map.next_value::<Bare>()?.0;
                }
            }
            return Ok(Spanned(Some(start..end), node));
        }
        let mut kv = Vec::new();
        let mut key = Some(first);
        while let Some(k) = key {
            let v = map.next_value::<Spanned>()?;
            kv.push((k, v));
            key = map.next_key::<Key>()?;
        }
        Ok(Spanned(None, Node::Table(kv)))
    }
}
