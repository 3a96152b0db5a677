//! Reading a [`Value`] into Rust types with serde: [`from_value`], and `&Value` as a
//! [`serde::Deserializer`]. The mapping is documented on [`from_value`].

use std::fmt;

use serde::de::{self, DeserializeSeed, Expected, IntoDeserializer, Unexpected, Visitor};
use serde::forward_to_deserialize_any;
use serde::Deserialize;

use crate::{Number, Value};

/// Reads a `T` from a value: `let ports: Vec<u16> = from_value(&v)?`. `&Value` is itself a
/// [`serde::Deserializer`], so `T::deserialize(&value)` works too.
///
/// ```
/// use cf2_value::{from_value, Number, Value};
///
/// let v = Value::List(vec![Value::Number(Number::Int(80)), Value::Literal("443".into())]);
/// let ports: Vec<u16> = from_value(&v).unwrap();
/// assert_eq!(ports, [80, 443]);
///
/// let bad = Value::List(vec![Value::Literal("http".into())]);
/// let e = from_value::<Vec<u16>>(&bad).unwrap_err();
/// assert_eq!(e.to_string(), "at `0`: expected u16, found text 'http'");
/// ```
///
/// The mapping:
///
/// - **blocks** give structs and maps (members in order); a struct can also be read from a
///   list, element by element;
/// - **lists** give sequences, tuples and `Vec`s (a tuple must match the list's length);
/// - **numbers** give every integer and float type, with range checks; an integer-valued float
///   (`3.0`) is accepted for an integer type; text that spells a number (`'42'`, the result of
///   `match(1)`) is accepted wherever a number is asked for;
/// - **booleans** give `bool` (only booleans: the text `'true'` is not a boolean);
/// - **text** (literal or string) and **regex patterns** give `String`/`&str`/`char`; when text
///   is asked for, a number or boolean is written out as text (`42`, `true`);
/// - **options**: a present value is `Some` (CF2 has no null); a struct field of type
///   `Option<T>` that the block lacks is `None`, and so is an `Option` read by
///   [`from_value_at`] from a path that names nothing;
/// - **enums**: a unit variant is named by text (`Mode => fast`); a newtype, tuple or struct
///   variant by a block with exactly one member, the variant's name (`Mode => { Tcp => {...} }`);
/// - **unit** `()` is an empty list or an empty block;
/// - **[`Value`]** is the value itself, kinds of text included (`extra: Value` keeps a part
///   of the configuration as it is; inside `#[serde(flatten)]` or an untagged enum, which
///   serde buffers first, text comes back as [`Value::String`]).
///
/// Errors say where in the value they arose: ``at `Web.Ports.1`: expected u16, found text
/// 'http'``.
pub fn from_value<'de, T: Deserialize<'de>>(value: &'de Value) -> Result<T, DeError> {
    T::deserialize(value)
}

/// Reads a `T` from the value at the dotted `path` inside `root` (`Web.Ports`); error paths
/// are then given from `root`. Where there is no such value, an `Option` is `None` (as a
/// struct field the block lacks is) and anything else an error.
pub fn from_value_at<'de, T: Deserialize<'de>>(root: &'de Value, path: &str) -> Result<T, DeError> {
    let Some(value) = root.get_path(path) else {
        return T::deserialize(Missing(path));
    };
    let mut result = T::deserialize(value);
    if !path.is_empty() {
        result = result.map_err(|e| e.within(Segment::Key(path.to_string())));
    }
    result
}

/// The value at a path that names nothing: `None` to an `Option`, an error to anything else.
struct Missing<'p>(&'p str);

impl<'de> de::Deserializer<'de> for Missing<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, DeError> {
        Err(DeError::msg(format!("there is no resource `{}`", self.0)))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_none()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// One step of the path to where an error arose.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Why a value could not be read into the asked-for type, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeError {
    /// Innermost step first (steps are added as the error travels outwards).
    path: Vec<Segment>,
    message: String,
    /// What of `message` names no value of the configuration: all of it, the part before
    /// `, found ...` (`expected u16`), or none (serde's own messages, such as `unknown
    /// variant `x``, may name one).
    value_free: ValueFree,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueFree {
    All,
    Before(usize),
    Nothing,
}

impl DeError {
    /// The dotted path (`Web.Ports.1`) of the value the error is about, relative to the value
    /// deserialized; empty for that value itself.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for (i, seg) in self.path.iter().rev().enumerate() {
            if i > 0 {
                out.push('.');
            }
            match seg {
                Segment::Key(k) => out.push_str(k),
                Segment::Index(n) => out.push_str(&n.to_string()),
            }
        }
        out
    }

    /// The message without the path.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message without anything that shows a value of the configuration (for a
    /// configuration holding secrets): whole when it names none, `expected u16` for
    /// `expected u16, found text '...'`, `None` when it may name one and cannot be cut.
    pub fn message_without_value(&self) -> Option<&str> {
        match self.value_free {
            ValueFree::All => Some(&self.message),
            ValueFree::Before(end) => self.message.get(..end),
            ValueFree::Nothing => None,
        }
    }

    fn within(mut self, seg: Segment) -> DeError {
        self.path.push(seg);
        self
    }

    /// A message that names no value.
    fn msg(message: String) -> DeError {
        DeError {
            path: Vec::new(),
            message,
            value_free: ValueFree::All,
        }
    }

    /// `expected EXPECTED, found FOUND`: only `found` names a value.
    fn found(expected: impl fmt::Display, found: impl fmt::Display) -> DeError {
        let expected = format!("expected {expected}");
        let end = expected.len();
        DeError {
            path: Vec::new(),
            message: format!("{expected}, found {found}"),
            value_free: ValueFree::Before(end),
        }
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path(), self.message)
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    /// serde's own messages (`unknown variant `x``) may name a value.
    fn custom<T: fmt::Display>(msg: T) -> DeError {
        DeError {
            value_free: ValueFree::Nothing,
            ..DeError::msg(msg.to_string())
        }
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> DeError {
        DeError::found(exp, describe_unexpected(&unexp))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> DeError {
        DeError::found(
            exp,
            format!("{} (not allowed here)", describe_unexpected(&unexp)),
        )
    }

    fn invalid_length(len: usize, exp: &dyn Expected) -> DeError {
        DeError::found(exp, format!("a list of {}", elements(len)))
    }
}

/// Text quoted for a message, shortened if long.
fn quoted(s: &str, quote: char) -> String {
    const MAX: usize = 40;
    let mut out = String::new();
    out.push(quote);
    for (i, c) in s.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out.push(quote);
    out
}

fn elements(n: usize) -> String {
    if n == 1 {
        "1 element".to_string()
    } else {
        format!("{n} elements")
    }
}

/// What a value is, for "found ..." in messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Literal(s) | Value::String(s) => format!("text {}", quoted(s, '\'')),
        Value::Number(n) => format!("number {n}"),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Regex(p) => format!("regex {}", quoted(p, '/')),
        Value::List(l) if l.is_empty() => "an empty list".to_string(),
        Value::List(l) => format!("a list of {}", elements(l.len())),
        Value::Block(b) => match b.len() {
            0 => "an empty block".to_string(),
            1 => "a block of 1 member".to_string(),
            n => format!("a block of {n} members"),
        },
    }
}

fn describe_unexpected(u: &Unexpected<'_>) -> String {
    match u {
        Unexpected::Bool(b) => format!("boolean {b}"),
        Unexpected::Unsigned(n) => format!("number {n}"),
        Unexpected::Signed(n) => format!("number {n}"),
        Unexpected::Float(f) => format!("number {}", Number::Float(*f)),
        Unexpected::Char(c) => format!("text {}", quoted(&c.to_string(), '\'')),
        Unexpected::Str(s) => format!("text {}", quoted(s, '\'')),
        Unexpected::Bytes(_) => "bytes".to_string(),
        Unexpected::Unit => "nothing".to_string(),
        Unexpected::Option => "an optional value".to_string(),
        Unexpected::NewtypeStruct => "a newtype struct".to_string(),
        Unexpected::Seq => "a list".to_string(),
        Unexpected::Map => "a block".to_string(),
        Unexpected::Enum => "an enum".to_string(),
        Unexpected::UnitVariant => "a unit variant".to_string(),
        Unexpected::NewtypeVariant => "a newtype variant".to_string(),
        Unexpected::TupleVariant => "a tuple variant".to_string(),
        Unexpected::StructVariant => "a struct variant".to_string(),
        Unexpected::Other(o) => o.to_string(),
    }
}

fn mismatch(v: &Value, exp: &dyn Expected) -> DeError {
    DeError::found(exp, describe(v))
}

/// The number a value holds or spells.
fn number_of(v: &Value, exp: &dyn Expected) -> Result<Number, DeError> {
    match v {
        Value::Number(n) => Ok(*n),
        Value::Literal(s) | Value::String(s) => {
            Number::parse_text(s).ok_or_else(|| mismatch(v, exp))
        }
        _ => Err(mismatch(v, exp)),
    }
}

/// The number a block member's name spells (for maps with numeric keys).
fn number_of_key(k: &str, exp: &dyn Expected) -> Result<Number, DeError> {
    Number::parse_text(k)
        .ok_or_else(|| DeError::found(exp, format!("the name {}", quoted(k, '\''))))
}

/// An integer of type `T` from a number, range-checked. An integer-valued float is accepted.
fn integer<T: TryFrom<i128>>(n: Number, ty: &str) -> Result<T, DeError> {
    let wide: i128 = match n {
        Number::Int(i) => i128::from(i),
        // |f| < 2^127 keeps the conversion exact (an integral f64 converts exactly).
        Number::Float(f) if f.fract() == 0.0 && f.abs() < 1.7e38 => f as i128,
        Number::Float(_) => {
            return Err(DeError::found(ty, format!("number {n}")));
        }
    };
    T::try_from(wide)
        .map_err(|_| DeError::found(ty, format!("number {n}, which is out of range for {ty}")))
}

fn float32(n: Number) -> Result<f32, DeError> {
    let f = n.as_f64();
    if f.abs() <= f64::from(f32::MAX) {
        Ok(f as f32)
    } else {
        Err(DeError::found(
            "f32",
            format!("number {n}, which is out of range for f32"),
        ))
    }
}

macro_rules! value_integer {
    ($($method:ident => $visit:ident($ty:ty),)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let n = number_of(self, &stringify!($ty))?;
            visitor.$visit(integer::<$ty>(n, stringify!($ty))?)
        }
    )*};
}

macro_rules! key_integer {
    ($($method:ident => $visit:ident($ty:ty),)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let n = number_of_key(self.0, &stringify!($ty))?;
            visitor.$visit(integer::<$ty>(n, stringify!($ty))?)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &'de Value {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Literal(s) | Value::String(s) | Value::Regex(s) => visitor.visit_borrowed_str(s),
            Value::Number(Number::Int(i)) => visitor.visit_i64(*i),
            Value::Number(Number::Float(f)) => visitor.visit_f64(*f),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::List(items) => visit_list(items, visitor),
            Value::Block(block) => visit_block(block, visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Bool(b) => visitor.visit_bool(*b),
            _ => Err(mismatch(self, &visitor)),
        }
    }

    value_integer! {
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_i128 => visit_i128(i128),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_u128 => visit_u128(u128),
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f32(float32(number_of(self, &"f32")?)?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f64(number_of(self, &"f64")?.as_f64())
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Value::Literal(s) | Value::String(s) | Value::Regex(s) = self {
            let mut chars = s.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                return visitor.visit_char(c);
            }
        }
        Err(mismatch(self, &"a single character"))
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Literal(s) | Value::String(s) | Value::Regex(s) => visitor.visit_borrowed_str(s),
            Value::Number(n) => visitor.visit_string(n.to_string()),
            Value::Bool(true) => visitor.visit_borrowed_str("true"),
            Value::Bool(false) => visitor.visit_borrowed_str("false"),
            Value::List(_) | Value::Block(_) => Err(mismatch(self, &visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Literal(s) | Value::String(s) | Value::Regex(s) => {
                visitor.visit_borrowed_bytes(s.as_bytes())
            }
            Value::List(items) => visit_list(items, visitor),
            _ => Err(mismatch(self, &visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::List(l) if l.is_empty() => visitor.visit_unit(),
            Value::Block(b) if b.is_empty() => visitor.visit_unit(),
            _ => Err(mismatch(self, &"an empty list or block")),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        if name == crate::de_value::EXACT {
            // `Value::deserialize`: the value as it is, kind of text included.
            return visitor.visit_enum(crate::de_value::Exact(self));
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::List(items) => visit_list(items, visitor),
            _ => Err(mismatch(self, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Block(block) => visit_block(block, visitor),
            _ => Err(mismatch(self, &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self {
            Value::Block(block) => visit_block(block, visitor),
            Value::List(items) => visit_list(items, visitor),
            _ => Err(mismatch(self, &visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self {
            Value::Literal(s) | Value::String(s) => visitor.visit_enum(EnumAccess {
                variant: s,
                value: None,
            }),
            Value::Block(block) if block.len() == 1 => match block.iter().next() {
                Some((name, value)) => visitor.visit_enum(EnumAccess {
                    variant: name,
                    value: Some(value),
                }),
                None => Err(mismatch(self, &visitor)),
            },
            _ => Err(DeError::found(
                format!(
                    "{} (a variant's name, or a block of one member named by the variant)",
                    &visitor as &dyn Expected
                ),
                describe(self),
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

impl<'de> IntoDeserializer<'de, DeError> for &'de Value {
    type Deserializer = &'de Value;

    fn into_deserializer(self) -> &'de Value {
        self
    }
}

fn visit_list<'de, V: Visitor<'de>>(items: &'de [Value], visitor: V) -> Result<V::Value, DeError> {
    let mut access = ListAccess {
        iter: items.iter(),
        index: 0,
    };
    let out = crate::deep(|| visitor.visit_seq(&mut access))?;
    if access.iter.len() == 0 {
        Ok(out)
    } else {
        Err(DeError::found(
            format!("a list of {}", elements(access.index)),
            format!("a list of {}", elements(items.len())),
        ))
    }
}

fn visit_block<'de, V: Visitor<'de>>(
    block: &'de crate::Block,
    visitor: V,
) -> Result<V::Value, DeError> {
    crate::deep(|| {
        visitor.visit_map(BlockAccess {
            iter: block.iter(),
            pending: None,
        })
    })
}

struct ListAccess<'de> {
    iter: std::slice::Iter<'de, Value>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for ListAccess<'de> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.iter.next() {
            Some(value) => {
                let index = self.index;
                self.index += 1;
                seed.deserialize(value)
                    .map(Some)
                    .map_err(|e| e.within(Segment::Index(index)))
            }
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct BlockAccess<'de> {
    iter: indexmap::map::Iter<'de, String, Value>,
    pending: Option<(&'de str, &'de Value)>,
}

impl<'de> de::MapAccess<'de> for BlockAccess<'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.iter.next() {
            Some((name, value)) => {
                self.pending = Some((name, value));
                seed.deserialize(KeyDeserializer(name))
                    .map(Some)
                    .map_err(|e| e.within(Segment::Key(name.clone())))
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, DeError> {
        match self.pending.take() {
            Some((name, value)) => seed
                .deserialize(value)
                .map_err(|e| e.within(Segment::Key(name.to_string()))),
            None => Err(DeError::msg(
                "a block member's value was asked for before its name".to_string(),
            )),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// A block member's name, read as a map key, struct field or enum variant name. Names that
/// spell numbers or booleans can be read as such (`HashMap<u32, _>`).
struct KeyDeserializer<'de>(&'de str);

impl<'de> de::Deserializer<'de> for KeyDeserializer<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_borrowed_str(self.0)
    }

    key_integer! {
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_i128 => visit_i128(i128),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_u128 => visit_u128(u128),
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f32(float32(number_of_key(self.0, &"f32")?)?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f64(number_of_key(self.0, &"f64")?.as_f64())
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(DeError::found(
                "a boolean",
                format!("the name {}", quoted(other, '\'')),
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_enum(EnumAccess {
            variant: self.0,
            value: None,
        })
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// An enum read from a variant's name (`value: None`) or from a block of one member.
struct EnumAccess<'de> {
    variant: &'de str,
    value: Option<&'de Value>,
}

impl<'de> de::EnumAccess<'de> for EnumAccess<'de> {
    type Error = DeError;
    type Variant = VariantAccess<'de>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, VariantAccess<'de>), DeError> {
        let variant = seed.deserialize(KeyDeserializer(self.variant))?;
        Ok((
            variant,
            VariantAccess {
                variant: self.variant,
                value: self.value,
            },
        ))
    }
}

struct VariantAccess<'de> {
    variant: &'de str,
    value: Option<&'de Value>,
}

impl<'de> VariantAccess<'de> {
    fn value(&self) -> Result<&'de Value, DeError> {
        self.value.ok_or_else(|| {
            DeError::msg(format!(
                "the variant `{}` needs a value: write it as a block `{{ {} => ... }}`",
                self.variant, self.variant
            ))
        })
    }

    fn within(&self, e: DeError) -> DeError {
        e.within(Segment::Key(self.variant.to_string()))
    }
}

impl<'de> de::VariantAccess<'de> for VariantAccess<'de> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        match self.value {
            None => Ok(()),
            Some(value) => <()>::deserialize(value).map_err(|e| self.within(e)),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        let value = self.value()?;
        seed.deserialize(value).map_err(|e| self.within(e))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, DeError> {
        let value = self.value()?;
        de::Deserializer::deserialize_tuple(value, len, visitor).map_err(|e| self.within(e))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let value = self.value()?;
        de::Deserializer::deserialize_struct(value, "", fields, visitor).map_err(|e| self.within(e))
    }
}
