//! Output formats: a compiled configuration (a [`Value`]) written as cf2, JSON, Perl, YAML or
//! TOML text.
//!
//! ```
//! use cf2_output::{render, Format};
//! use cf2_value::{Number, Value};
//!
//! let mut block = cf2_value::Block::default();
//! block.insert("Port".into(), Value::Number(Number::Int(25)));
//! let text = render(&Value::Block(block), Format::Json).unwrap();
//! assert_eq!(text, "{\n  \"Port\": 25\n}\n");
//! ```
//!
//! Every format keeps a block's member order. Every format writes values nested down to
//! [`cf2_value::MAX_DEPTH`] (on any thread stack) and refuses deeper ones with
//! [`OutputError::TooDeep`]. (cf2 text nested deeper than `cf2_syntax::MAX_NESTING` does
//! not parse again.)
//!
//! - [`Format::Cf2`], the default: reads back (compiled again) to the same configuration,
//!   kinds included (clarifications §7). A block at the top is written as a configuration (one
//!   `Name => value` line per resource, no braces); any other value as the expression that
//!   would follow `=>`.
//! - [`Format::Json`]: numbers are JSON numbers (an integer stays an integer, a float keeps a
//!   `.` or an exponent), literals and strings are strings, a regex is its pattern.
//! - [`Format::Pl`]: a Perl expression that `do FILE` loads (an anonymous hash for a block).
//! - [`Format::Yaml`]: the JSON mapping in YAML block style, quoted so that YAML 1.1 and
//!   1.2 readers alike read text as text (`'yes'` stays text).
//! - [`Format::Toml`]: the JSON mapping in TOML; needs a block at the top.

mod cf2;
mod json;
mod names;
mod pl;
mod toml;
mod yaml;

use std::fmt;

use cf2_value::{Builder, Number, Sink, TextKind, Value};

pub use json::JsonWriter;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// CF2 source text (the default).
    #[default]
    Cf2,
    Json,
    /// Perl: an expression for `do FILE`.
    Pl,
    Yaml,
    Toml,
}

impl Format {
    /// Every format, in the order the documentation lists them.
    pub const ALL: [Format; 5] = [
        Format::Cf2,
        Format::Json,
        Format::Pl,
        Format::Yaml,
        Format::Toml,
    ];

    /// The format a file extension names (without the dot, any case): `cf2`, `json`, `pl`,
    /// `yaml` or `yml`, `toml`.
    pub fn from_extension(ext: &str) -> Option<Format> {
        let ext = ext.to_ascii_lowercase();
        Some(match ext.as_str() {
            "cf2" => Format::Cf2,
            "json" => Format::Json,
            "pl" => Format::Pl,
            "yaml" | "yml" => Format::Yaml,
            "toml" => Format::Toml,
            _ => return None,
        })
    }

    /// The format a file name's extension names (`out/web.json` is JSON; `-.json` too).
    /// `None` when the name has no extension or an unknown one.
    pub fn from_file_name(name: &str) -> Option<Format> {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let (_, ext) = base.rsplit_once('.')?;
        Format::from_extension(ext)
    }

    /// The format's name, which is also its usual file extension: `cf2`, `json`, `pl`,
    /// `yaml`, `toml`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Cf2 => "cf2",
            Format::Json => "json",
            Format::Pl => "pl",
            Format::Yaml => "yaml",
            Format::Toml => "toml",
        }
    }

    /// The name used in messages.
    fn title(self) -> &'static str {
        match self {
            Format::Cf2 => "cf2",
            Format::Json => "JSON",
            Format::Pl => "Perl",
            Format::Yaml => "YAML",
            Format::Toml => "TOML",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a value could not be written in a format.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputError {
    /// The format needs a block at the top (TOML), and the value is something else.
    NeedsBlock {
        format: Format,
        /// The path of the value written (empty: the whole configuration).
        what: String,
        /// The kind of value found (`list`, `number`, ...).
        found: &'static str,
    },
    /// A block member's name cannot be written in the format (cf2: it is not a resource name).
    BadName {
        format: Format,
        /// The path of the block holding the member (empty: the top).
        what: String,
        name: String,
    },
    /// The value is nested deeper than [`cf2_value::MAX_DEPTH`].
    TooDeep { format: Format, what: String },
    /// The value holds something the format cannot write (a number that is not finite), or
    /// the format's library refused it.
    Invalid {
        format: Format,
        what: String,
        message: String,
    },
}

impl OutputError {
    /// The path of the value refused (empty: the whole configuration).
    pub fn path(&self) -> &str {
        match self {
            OutputError::NeedsBlock { what, .. }
            | OutputError::BadName { what, .. }
            | OutputError::TooDeep { what, .. }
            | OutputError::Invalid { what, .. } => what,
        }
    }
}

/// `the configuration` or `` `Web.Ports` ``.
fn describe(what: &str) -> String {
    if what.is_empty() {
        "the configuration".to_string()
    } else {
        format!("`{what}`")
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::NeedsBlock {
                format,
                what,
                found,
            } => {
                let article = if found.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                write!(
                    f,
                    "{} output needs a block at the top, but {} is {article} {found}",
                    format.title(),
                    describe(what)
                )
            }
            OutputError::BadName { format, what, name } => {
                let place = if what.is_empty() {
                    "at the top".to_string()
                } else {
                    format!("in `{what}`")
                };
                write!(
                    f,
                    "{} output cannot write the member {:?} {place}: it is not a resource name",
                    format.title(),
                    name
                )
            }
            OutputError::TooDeep { format, what } => write!(
                f,
                "{} output cannot write {}: it is nested more than {} levels deep",
                format.title(),
                describe(what),
                cf2_value::MAX_DEPTH
            ),
            OutputError::Invalid {
                format,
                what,
                message,
            } => write!(
                f,
                "{} output cannot write {}: {message}",
                format.title(),
                describe(what)
            ),
        }
    }
}

impl std::error::Error for OutputError {}

/// Writes the whole configuration (or any value) in `format`.
pub fn render(value: &Value, format: Format) -> Result<String, OutputError> {
    render_at(value, format, "")
}

/// Writes `value`, the resource at path `what` (`Web.Ports`; empty for the whole
/// configuration), in `format`. `what` only names the value in error messages.
pub fn render_at(value: &Value, format: Format, what: &str) -> Result<String, OutputError> {
    let shape = shape(value);
    if shape.depth > cf2_value::MAX_DEPTH {
        return Err(OutputError::TooDeep {
            format,
            what: what.to_string(),
        });
    }
    if let Some(n) = shape.not_finite {
        return Err(OutputError::Invalid {
            format,
            what: what.to_string(),
            message: format!("it holds a number that is not finite ({n})"),
        });
    }
    match format {
        Format::Cf2 => cf2::render(value, what),
        Format::Json => json::render(value, what, shape.size),
        Format::Pl => Ok(pl::render(value)),
        Format::Yaml => Ok(yaml::render(value)),
        Format::Toml => toml::render(value, what),
    }
}

/// A [`Sink`] that writes a value in a format as the evaluator sends it
/// (`cf2_eval::evaluate_into`). JSON is written as the pieces arrive, without a [`Value`]
/// being built; the other formats look at the whole value before writing (TOML puts
/// tables last, cf2 and YAML choose a layout by size), so for them it is built first.
pub struct Renderer {
    format: Format,
    sink: RendererSink,
}

enum RendererSink {
    Json(JsonWriter),
    Value(Builder),
}

impl Renderer {
    pub fn new(format: Format) -> Renderer {
        let sink = match format {
            // Most configurations fit: one allocation.
            Format::Json => RendererSink::Json(JsonWriter::with_capacity(4096)),
            _ => RendererSink::Value(Builder::new()),
        };
        Renderer { format, sink }
    }

    /// The text of the value sent. `what` is its path (empty for the whole configuration),
    /// for messages.
    pub fn finish(self, what: &str) -> Result<String, OutputError> {
        match self.sink {
            RendererSink::Json(w) => w.finish(what),
            RendererSink::Value(b) => match b.finish() {
                Some(v) => render_at(&v, self.format, what),
                None => Err(OutputError::Invalid {
                    format: self.format,
                    what: what.to_string(),
                    message: "the value was left unfinished".to_string(),
                }),
            },
        }
    }

    fn sink(&mut self) -> &mut dyn Sink {
        match &mut self.sink {
            RendererSink::Json(w) => w,
            RendererSink::Value(b) => b,
        }
    }
}

impl Sink for Renderer {
    fn text(&mut self, text: &str, kind: TextKind) {
        self.sink().text(text, kind);
    }
    fn number(&mut self, n: Number) {
        self.sink().number(n);
    }
    fn boolean(&mut self, b: bool) {
        self.sink().boolean(b);
    }
    fn begin_list(&mut self, len: usize) {
        self.sink().begin_list(len);
    }
    fn end_list(&mut self) {
        self.sink().end_list();
    }
    fn begin_block(&mut self, len: usize) {
        self.sink().begin_block(len);
    }
    fn key(&mut self, name: &str) {
        self.sink().key(name);
    }
    fn end_block(&mut self) {
        self.sink().end_block();
    }
}

/// What `render_at` checks before writing.
struct Shape {
    /// The nesting depth of lists and blocks (a scalar is 0, `[1]` is 1).
    depth: usize,
    /// A NaN or infinite number, if the value holds one (the evaluator never makes one, but
    /// a library user can).
    not_finite: Option<f64>,
    /// About how many bytes the value takes written out, to size the output buffer once.
    size: usize,
}

/// Measures a value without recursion, so that any value can be measured.
fn shape(value: &Value) -> Shape {
    let mut shape = Shape {
        depth: 0,
        not_finite: None,
        size: 0,
    };
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        shape.depth = shape.depth.max(d);
        // Indentation, punctuation and a number's digits.
        shape.size += 2 * d + 8;
        match v {
            Value::List(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Block(block) => {
                shape.size += block.keys().map(|k| k.len() + 4).sum::<usize>();
                stack.extend(block.values().map(|i| (i, d + 1)));
            }
            Value::Literal(s) | Value::String(s) | Value::Regex(s) => shape.size += s.len(),
            Value::Number(cf2_value::Number::Float(f)) if !f.is_finite() => {
                shape.not_finite = Some(*f);
            }
            _ => {}
        }
    }
    shape
}

/// Joins the path of the value written and a path inside it.
fn join_path(what: &str, inner: &[String]) -> String {
    let mut parts: Vec<&str> = Vec::with_capacity(inner.len() + 1);
    if !what.is_empty() {
        parts.push(what);
    }
    parts.extend(inner.iter().map(String::as_str));
    parts.join(".")
}

/// Runs `f`, first moving to a fresh stack segment if little of the current one is left: the
/// writers recurse once per level of nesting, and values nested [`cf2_value::MAX_DEPTH`] deep
/// must work on small thread stacks too.
fn deep<T>(f: impl FnOnce() -> T) -> T {
    const RED_ZONE: usize = 256 * 1024;
    const NEW_STACK: usize = 4 * 1024 * 1024;
    cf2_value::stack::deep(RED_ZONE, NEW_STACK, f)
}

/// A scalar (not a list or block).
fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::List(_) | Value::Block(_))
}

/// Lines longer than this hold a list element by element instead (cf2, pl).
const LINE_WIDTH: usize = 80;

/// Appends `levels` levels of two-space indentation.
fn indent(out: &mut String, levels: usize) {
    for _ in 0..levels {
        out.push_str("  ");
    }
}
