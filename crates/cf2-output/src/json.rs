//! JSON (clarifications §7): numbers are JSON numbers (an integer stays an integer; a float is
//! written with a `.` or an exponent, so it reads back as a float), literals and strings are
//! strings, booleans are booleans, a regex is its pattern, lists are arrays and blocks are
//! objects in member order. Pretty-printed with two-space indentation and a final newline,
//! byte for byte as `serde_json::to_writer_pretty` writes it (a test holds the two equal).
//!
//! [`JsonWriter`] is a [`Sink`]: it writes text as the pieces of a value arrive, so the
//! evaluator can stream a configuration into it without building a [`Value`] first.

use cf2_value::{Number, Sink, TextKind, Value};

use crate::{Format, OutputError};

/// `size`: about how long the text will be (the buffer is allocated once).
pub(crate) fn render(value: &Value, what: &str, size: usize) -> Result<String, OutputError> {
    let mut w = JsonWriter::with_capacity(size);
    value.emit(&mut w);
    w.finish(what)
}

/// Writes JSON text from the pieces of a value (see the module documentation).
pub struct JsonWriter {
    out: String,
    /// For each open list or block: whether anything was written in it yet.
    open: Vec<bool>,
    /// A key was just written: the value follows on the same line.
    after_key: bool,
    /// A number JSON cannot hold (NaN, infinite); reported by `finish`.
    not_finite: Option<f64>,
}

impl JsonWriter {
    /// `size`: about how long the text will be.
    pub fn with_capacity(size: usize) -> JsonWriter {
        JsonWriter {
            out: String::with_capacity(size + 1),
            open: Vec::with_capacity(8),
            after_key: false,
            not_finite: None,
        }
    }

    /// The text written, with a final newline. `what` names the value in errors.
    pub fn finish(mut self, what: &str) -> Result<String, OutputError> {
        if let Some(n) = self.not_finite {
            return Err(OutputError::Invalid {
                format: Format::Json,
                what: what.to_string(),
                message: format!("it holds a number that is not finite ({n})"),
            });
        }
        self.out.push('\n');
        Ok(self.out)
    }

    /// What comes before a value or a key: nothing after a key; otherwise, inside a list
    /// or block, a comma after an earlier item, a newline and the indentation.
    fn before_item(&mut self) {
        if std::mem::take(&mut self.after_key) {
            return;
        }
        let depth = self.open.len();
        if let Some(written) = self.open.last_mut() {
            if std::mem::replace(written, true) {
                self.out.push(',');
            }
            new_line(&mut self.out, depth);
        }
    }

    fn close(&mut self, bracket: char) {
        let written = self.open.pop().unwrap_or(false);
        if written {
            new_line(&mut self.out, self.open.len());
        }
        self.out.push(bracket);
    }

    fn string(&mut self, s: &str) {
        self.out.reserve(s.len() + 2);
        self.out.push('"');
        // Most text needs no escape: one copy.
        if !s.bytes().any(|b| ESCAPE[usize::from(b)] != 0) {
            self.out.push_str(s);
            self.out.push('"');
            return;
        }
        let mut start = 0;
        for (i, &b) in s.as_bytes().iter().enumerate() {
            // A `u8` indexes a 256-entry table: always in bounds.
            let escape = ESCAPE[usize::from(b)];
            if escape == 0 {
                continue;
            }
            // Escaped bytes are ASCII, so these are character boundaries.
            self.out.push_str(s.get(start..i).unwrap_or_default());
            self.out.push('\\');
            if escape == b'u' {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.out.push_str("u00");
                for digit in [b >> 4, b & 0xf] {
                    let hex = HEX.get(usize::from(digit)).copied().unwrap_or(b'0');
                    self.out.push(char::from(hex));
                }
            } else {
                self.out.push(char::from(escape));
            }
            start = i + 1;
        }
        self.out.push_str(s.get(start..).unwrap_or_default());
        self.out.push('"');
    }
}

/// For each byte, the character after the backslash that escapes it (`u` for `\u00XX`), or
/// 0 when it is written as it is.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// A newline and two spaces per level of indentation.
const NEW_LINE: &str = "\n                                                                ";

/// A newline, then the indentation of `levels` levels (deep levels in several pieces).
fn new_line(out: &mut String, levels: usize) {
    let mut line = NEW_LINE.get(..1 + 2 * levels).unwrap_or(NEW_LINE);
    let mut rest = (2 * levels).saturating_sub(line.len() - 1);
    out.push_str(line);
    while rest > 0 {
        line = NEW_LINE
            .get(1..1 + rest.min(NEW_LINE.len() - 1))
            .unwrap_or_default();
        if line.is_empty() {
            break;
        }
        out.push_str(line);
        rest -= line.len();
    }
}

impl Sink for JsonWriter {
    fn text(&mut self, text: &str, _kind: TextKind) {
        self.before_item();
        self.string(text);
    }

    fn number(&mut self, n: Number) {
        self.before_item();
        match n {
            Number::Int(i) => self.out.push_str(itoa::Buffer::new().format(i)),
            Number::Float(f) if f.is_finite() => {
                // As Perl shows it (15 significant digits, docs/semantics.md).
                let shown = Number::perl_rounded(f);
                self.out.push_str(zmij::Buffer::new().format_finite(shown));
            }
            Number::Float(f) => {
                self.not_finite.get_or_insert(f);
                self.out.push_str("null");
            }
        }
    }

    fn boolean(&mut self, b: bool) {
        self.before_item();
        self.out.push_str(if b { "true" } else { "false" });
    }

    fn begin_list(&mut self, _len: usize) {
        self.before_item();
        self.out.push('[');
        self.open.push(false);
    }

    fn end_list(&mut self) {
        self.close(']');
    }

    fn begin_block(&mut self, _len: usize) {
        self.before_item();
        self.out.push('{');
        self.open.push(false);
    }

    fn key(&mut self, name: &str) {
        self.before_item();
        self.string(name);
        self.out.push_str(": ");
        self.after_key = true;
    }

    fn end_block(&mut self) {
        self.close('}');
    }
}
