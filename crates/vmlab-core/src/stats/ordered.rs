//! `OrderedMap`: a name → value list that serialises as a JSON object in insertion order, so
//! report output is deterministic and reads in the kernel's own order (no hash-map order).

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;
use std::marker::PhantomData;

#[derive(Clone, Debug, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<V> OrderedMap<V> {
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets `key`, replacing an existing value in place (keeps its position) or appending.
    pub fn insert(&mut self, key: impl Into<String>, value: V) {
        let key = key.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Into<String>, V> FromIterator<(K, V)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(it: I) -> Self {
        let mut m = OrderedMap::new();
        for (k, v) in it {
            m.insert(k, v);
        }
        m
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for V_<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of name → value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, V)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, V>()? {
                    if out.iter().any(|(x, _)| *x == k) {
                        return Err(A::Error::custom(format!("duplicate key `{k}`")));
                    }
                    out.push((k, v));
                }
                Ok(OrderedMap(out))
            }
        }
        d.deserialize_map(V_(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_round_trips() {
        let m: OrderedMap<u64> = [("zeta", 1u64), ("alpha", 2), ("mid", 3)].into_iter().collect();
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"zeta":1,"alpha":2,"mid":3}"#);
        let back: OrderedMap<u64> = serde_json::from_str(&s).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.get("mid"), Some(&3));
    }

    #[test]
    fn rejects_duplicates_and_non_objects() {
        assert!(serde_json::from_str::<OrderedMap<u64>>(r#"{"a":1,"a":2}"#).is_err());
        assert!(serde_json::from_str::<OrderedMap<u64>>("[1,2]").is_err());
    }
}
