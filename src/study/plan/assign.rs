//! An ordered list of `name = value` parameter assignments, as written in a study's `set`
//! tables. Serialized as a map in the list's order (declaration order once resolved).

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Parameter overrides in the order they apply; a later one wins.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignments(pub Vec<(String, String)>);

impl Assignments {
    /// The pairs.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value assigned to `name`, if any (the last one).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `self` followed by `later`.
    pub fn then(&self, later: &Assignments) -> Assignments {
        Assignments(self.0.iter().chain(&later.0).cloned().collect())
    }
}

impl Serialize for Assignments {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Assignments {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Assignments;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of parameter names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Assignments, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, String>()? {
                    v.push((k, x));
                }
                Ok(Assignments(v))
            }
        }
        d.deserialize_map(V)
    }
}
