//! `serde::Serialize` for [`Value`] and [`Number`]: the data model every serde-based output
//! format (JSON, YAML, TOML) writes from.
//!
//! The mapping is the one clarifications §7 gives for JSON: an integer stays an integer, a
//! float stays a float, literals and strings are strings, a regex is its pattern, lists are
//! sequences and blocks are maps whose entries keep the block's order.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::{Number, Value};

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Number::Int(i) => serializer.serialize_i64(i),
            // As Perl shows it (15 significant digits): `0.1 + 0.2` is written `0.3`.
            Number::Float(f) => serializer.serialize_f64(Number::perl_rounded(f)),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Literal(s) | Value::String(s) | Value::Regex(s) => serializer.serialize_str(s),
            Value::Number(n) => n.serialize(serializer),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::List(items) => crate::deep(|| {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }),
            Value::Block(block) => crate::deep(|| {
                let mut map = serializer.serialize_map(Some(block.len()))?;
                for (name, value) in block {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }),
        }
    }
}
