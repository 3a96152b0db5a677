//! The plain data model of a compiled CF2 configuration: what the evaluator produces and
//! what every output format, the library API and serde deserialization read.
//!
//! A [`Value`] is fully evaluated and owned: no laziness, no source spans (those stay with
//! the evaluator's provenance records). Text keeps its *kind* (literal or string) so the cf2
//! output format can read back to the same configuration (clarifications §7).
//!
//! Serde: [`Value`] is `Serialize` (blocks keep their order; text and regexes are strings),
//! and `&Value` is a `Deserializer`: [`from_value`] reads a value into any `Deserialize` type,
//! with errors that give the path (``at `Web.Ports.1`: expected u16, found text 'http'``).
//!
//! Depth: the evaluator refuses values nested deeper than [`MAX_DEPTH`], so the recursive
//! walks over a `Value` (writers, comparison, drop) are bounded.

mod de;
mod de_value;
mod number;
mod ser;
pub mod sink;
pub mod stack;

pub use de::{from_value, from_value_at, DeError};
pub use number::Number;
pub use sink::{Builder, Sink, TextKind};

use indexmap::IndexMap;

/// The deepest nesting of lists and blocks a value may have.
/// It stays below the parser's nesting limit (`cf2_syntax::MAX_NESTING`, 256) so that any
/// value written in the cf2 format reads back.
pub const MAX_DEPTH: usize = 200;

/// Runs `f`, first moving to a fresh stack segment if little of the current one is left.
/// The recursive walks here (serialization, deserialization) go through it at each level, so
/// that values nested [`MAX_DEPTH`] deep work on small thread stacks too, whatever the
/// serializer's own frames cost.
pub(crate) fn deep<T>(f: impl FnOnce() -> T) -> T {
    const RED_ZONE: usize = 256 * 1024;
    const NEW_STACK: usize = 4 * 1024 * 1024;
    stack::deep(RED_ZONE, NEW_STACK, f)
}

/// A fully evaluated CF2 value.
///
/// `==` compares numbers by value, as the language's `==` does (`Int(3) == Float(3.0)`);
/// the kinds of text do differ (`Literal("a") != String("a")`).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Unquoted or single-quoted text (`simple123`, `'a literal'`).
    Literal(String),
    /// Double-quoted text (`"two\nlines"`).
    String(String),
    Number(Number),
    Bool(bool),
    /// A regular expression: its (Perl-syntax) pattern.
    Regex(String),
    List(Vec<Value>),
    /// A block: resources in output order (clarifications §7).
    Block(Block),
}

/// A block's resources, in order. Hashed with foldhash (seeded per process): SipHash
/// showed up in the profile of compiling many hosts. Make one with `Block::default()`.
pub type Block = IndexMap<String, Value, foldhash::fast::RandomState>;

impl Value {
    /// The text of a literal or string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Literal(s) | Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<Number> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// An integer: a number with no fractional part that fits (`3` and `3.0`, not `3.5`).
    /// Text is not read as a number here; [`from_value`] does that.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_whole()
    }

    /// A number as a float (an integer above 2^53 is rounded).
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().map(Number::as_f64)
    }

    pub fn as_block(&self) -> Option<&Block> {
        match self {
            Value::Block(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// The value at a dotted path (`Web.Ports.0`): names select block members, numbers
    /// select list elements. The empty path is the value itself.
    pub fn get_path(&self, path: &str) -> Option<&Value> {
        let mut cur = self;
        if path.is_empty() {
            return Some(cur);
        }
        for step in path.split('.') {
            cur = match cur {
                Value::Block(b) => b.get(step)?,
                // An index as the language reads one from text (`$L.('1')`, `-o :L.1`):
                // digits, white space around allowed, no sign.
                Value::List(l) => match Number::parse_text(step)? {
                    Number::Int(i) => l.get(usize::try_from(i).ok()?)?,
                    Number::Float(_) => return None,
                },
                _ => return None,
            };
        }
        Some(cur)
    }

    /// The type name `typeof()` reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Literal(_) => "literal",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            Value::Regex(_) => "regex",
            Value::List(_) => "list",
            Value::Block(_) => "block",
        }
    }
}
