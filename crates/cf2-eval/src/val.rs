//! Runtime values. Scalars and lists are evaluated eagerly; a block is a handle to a node in
//! the evaluator's arena whose members are resolved lazily, one at a time, when first read
//! (clarifications §6). Lists record their nesting depth so no value can nest deeper than
//! [`cf2_value::MAX_DEPTH`].
//!
//! A value that came from a KeePass database, or was computed from one, is a
//! [`Val::Secret`]: it reaches the output like the value it wraps, but every message and
//! trace shows it as `‹secret from mydb.kdbx:fred.Password›` (docs/security.md). Code that
//! computes with values must not look through the wrapper: operators and the standard
//! functions open it through the evaluator (`crate::secret`), which marks what they compute
//! as secret too; anything else sees a value of the wrapped kind that it cannot read, and
//! fails safely.

use crate::model::BlockId;
use cf2_value::Number;
use std::rc::Rc;

#[derive(Clone, Debug)]
pub enum Val {
    /// `?`, an `if` without `else` not taken, `warn(...)`.
    Undef,
    /// Unquoted or single-quoted text.
    Lit(Rc<str>),
    /// Double-quoted text (or text built from one).
    Str(Rc<str>),
    Num(Number),
    Bool(bool),
    /// A regex, by its pattern (checked to compile when created).
    Regex(Rc<str>),
    List(Rc<List>),
    Block(BlockId),
    /// A secret scalar (never a list, block, undefined or another secret).
    Secret(Rc<Secret>),
}

/// A secret scalar and where it came from.
#[derive(Debug)]
pub struct Secret {
    pub value: Val,
    /// The database and entry path it came from (`mydb.kdbx:Servers.db1.Password`).
    pub origin: Rc<str>,
    /// True when computed from a secret (`"pw=${...}"`), not read from the database.
    pub derived: bool,
}

#[derive(Debug)]
pub struct List {
    pub items: Vec<Val>,
    /// 1 + the depth of the deepest list element (blocks count as 1: their depth is only
    /// known when materialized, which checks it again).
    pub depth: usize,
}

impl Val {
    pub fn text(&self) -> Option<&str> {
        match self {
            Val::Lit(s) | Val::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_undef(&self) -> bool {
        matches!(self, Val::Undef)
    }

    /// The value a secret wraps (for its kind); any other value itself.
    pub fn plain(&self) -> &Val {
        match self {
            Val::Secret(s) => &s.value,
            other => other,
        }
    }

    pub fn is_secret(&self) -> bool {
        matches!(self, Val::Secret(_))
    }

    /// Whether this is a secret, or a list of nothing but secrets at any depth, as a list
    /// a secret selector picked is (every element marked): how many there are may say
    /// which it picked. (A list written with a secret among plain elements is not one.)
    /// Values nest at most `MAX_DEPTH` levels, so the recursion is bounded.
    pub fn holds_secret(&self) -> bool {
        match self {
            Val::Secret(_) => true,
            Val::List(l) => !l.items.is_empty() && l.items.iter().all(Val::holds_secret),
            _ => false,
        }
    }

    pub fn depth(&self) -> usize {
        match self {
            Val::List(l) => l.depth,
            Val::Block(_) => 1,
            _ => 0,
        }
    }

    /// The type name `typeof()` reports and type errors mention.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Undef => "undef",
            Val::Lit(_) => "literal",
            Val::Str(_) => "string",
            Val::Num(_) => "number",
            Val::Bool(_) => "bool",
            Val::Regex(_) => "regex",
            Val::List(_) => "list",
            Val::Block(_) => "block",
            Val::Secret(s) => s.value.type_name(),
        }
    }

    /// How an error message names the kind of a value ("a number", "text").
    pub fn kind_phrase(&self) -> &'static str {
        match self {
            Val::Undef => "undefined",
            Val::Lit(_) | Val::Str(_) => "text",
            Val::Num(_) => "a number",
            Val::Bool(_) => "a boolean",
            Val::Regex(_) => "a regex",
            Val::List(_) => "a list",
            Val::Block(_) => "a block",
            Val::Secret(s) => s.value.kind_phrase(),
        }
    }

    /// A short rendering of a scalar for messages and traces (`'fast'`, `42`, `/ab*/`); a
    /// secret shows only where it came from.
    pub fn describe(&self) -> String {
        match self {
            Val::Undef => "undefined".to_string(),
            Val::Lit(s) | Val::Str(s) => quoted_preview(s, '\''),
            Val::Num(n) => n.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Regex(r) => format!("/{r}/"),
            // How many secrets a list holds may say which list a secret selector picked.
            Val::List(_) if self.holds_secret() => "a list of secrets".to_string(),
            Val::List(l) => match l.items.len() {
                0 => "an empty list".to_string(),
                1 => "a list of 1 element".to_string(),
                n => format!("a list of {n} elements"),
            },
            Val::Block(_) => "a block".to_string(),
            Val::Secret(s) => redacted(&s.origin, s.derived),
        }
    }
}

/// Text as messages and traces show it: between `quote`s, shortened to 60 characters, with
/// line ends, tabs and other control characters escaped so that a message stays one line.
pub(crate) fn quoted_preview(s: &str, quote: char) -> String {
    let mut out = String::with_capacity(s.len().min(64) + 2);
    out.push(quote);
    escape_into(&mut out, s.chars().take(60));
    if s.chars().nth(60).is_some() {
        out.push('…');
    }
    out.push(quote);
    out
}

/// All of `s`, escaped as [`quoted_preview`] escapes it.
pub(crate) fn escaped_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s.chars());
    out
}

fn escape_into(out: &mut String, chars: impl Iterator<Item = char>) {
    for c in chars {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
}

/// How messages and traces show a secret.
pub fn redacted(origin: &str, derived: bool) -> String {
    if derived {
        format!("‹secret computed from {origin}›")
    } else {
        format!("‹secret from {origin}›")
    }
}

/// Among values that compare equal but differ in kind (`3` and `3.0`, `abc` and `"abc"`),
/// the one to keep, so the result does not depend on the order of statements or imports:
/// the lowest rank wins (integers before floats, literals before strings).
pub fn kind_rank(v: &Val) -> u8 {
    match v {
        Val::Str(_) | Val::Num(cf2_value::Number::Float(_)) => 1,
        _ => 0,
    }
}

pub fn make_list(items: Vec<Val>) -> Option<Val> {
    let depth = 1 + items.iter().map(Val::depth).max().unwrap_or(0);
    if depth > cf2_value::MAX_DEPTH {
        return None;
    }
    Some(Val::List(Rc::new(List { items, depth })))
}
