//! `serde::Deserialize` for [`Value`]: a program's own type may hold a part of the
//! configuration as it is (`extra: cf2::Value`), and a value can be read from any serde
//! format (JSON, YAML, ...).
//!
//! From this crate's own deserializer (`&Value`) the value comes back exactly, kinds of
//! text included: it asks for a newtype struct of a name no other type uses, which `&Value`
//! answers with the kind of text as an enum variant. Any other deserializer sees a
//! transparent newtype and gives its data: text is a string (CF2's double-quoted text),
//! integers that fit an `i64` are integers, other numbers are floats, maps are blocks in
//! their order. Null and unit have no CF2 value and are refused, as are integers beyond
//! `i64` (they would silently lose digits as floats).

use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::{Block, Number, Value};

/// The name of the newtype struct through which [`Value::deserialize`] asks; `&Value`
/// answers it with [`Exact`].
pub(crate) const EXACT: &str = "$cf2_value::Value";

/// The variant names [`Exact`] gives: the kind of text, or any other value.
const LITERAL: &str = "Literal";
const STRING: &str = "String";
const REGEX: &str = "Regex";
const OTHER: &str = "Other";

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_newtype_struct(EXACT, ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a CF2 value (text, number, boolean, list or block)")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(Number::Int(i)))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        integer(u)
    }

    fn visit_i128<E: de::Error>(self, i: i128) -> Result<Value, E> {
        integer(i)
    }

    fn visit_u128<E: de::Error>(self, u: u128) -> Result<Value, E> {
        integer(u)
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        if f.is_finite() {
            Ok(Value::Number(Number::Float(f)))
        } else {
            Err(E::custom(format!("{f} is not a CF2 number")))
        }
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Err(E::custom("CF2 has no null: a value is needed"))
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Value::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut block = Block::default();
        while let Some((name, value)) = map.next_entry::<String, Value>()? {
            block.insert(name, value);
        }
        Ok(Value::Block(block))
    }

    /// Only [`Exact`] gives an enum here: the kind of text, then the value.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (kind, content) = data.variant::<String>()?;
        match kind.as_str() {
            LITERAL => content.newtype_variant().map(Value::Literal),
            STRING => content.newtype_variant().map(Value::String),
            REGEX => content.newtype_variant().map(Value::Regex),
            _ => content.newtype_variant_seed(AnyValue),
        }
    }
}

/// An integer of a wider type, if it fits a CF2 number (an `i64`): beyond, a float would
/// silently lose its last digits.
fn integer<N, E>(n: N) -> Result<Value, E>
where
    N: Copy + fmt::Display + TryInto<i64>,
    E: de::Error,
{
    n.try_into()
        .map(|i| Value::Number(Number::Int(i)))
        .map_err(|_| {
            E::custom(format!(
                "the integer {n} is out of the range of a CF2 number ({} to {})",
                i64::MIN,
                i64::MAX
            ))
        })
}

/// A value read with `deserialize_any`, its elements through [`Value::deserialize`].
struct AnyValue;

impl<'de> DeserializeSeed<'de> for AnyValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// `&Value`'s answer to [`EXACT`]: an enum whose variant is the value's kind of text (or
/// [`OTHER`]) and whose content is the value.
pub(crate) struct Exact<'de>(pub(crate) &'de Value);

impl<'de> EnumAccess<'de> for Exact<'de> {
    type Error = crate::DeError;
    type Variant = Exact<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Exact<'de>), crate::DeError> {
        let kind = match self.0 {
            Value::Literal(_) => LITERAL,
            Value::String(_) => STRING,
            Value::Regex(_) => REGEX,
            _ => OTHER,
        };
        let kind = seed.deserialize(de::value::StrDeserializer::<crate::DeError>::new(kind))?;
        Ok((kind, self))
    }
}

impl<'de> VariantAccess<'de> for Exact<'de> {
    type Error = crate::DeError;

    fn unit_variant(self) -> Result<(), crate::DeError> {
        Err(de::Error::custom("a CF2 value is not a unit variant"))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, crate::DeError> {
        seed.deserialize(self.0)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, crate::DeError> {
        Err(de::Error::custom("a CF2 value is not a tuple variant"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, crate::DeError> {
        Err(de::Error::custom("a CF2 value is not a struct variant"))
    }
}
