//! Perl: an expression that `do FILE` loads (clarifications §7), after a `use utf8;` line so
//! that text keeps its characters.
//!
//! - A block is an anonymous hash (`+{ ... }` at the top, where the `+` makes it a hash
//!   rather than a code block), members in order, keys single-quoted.
//! - A list is an anonymous array `[ ... ]`: on one line when it holds only scalars and fits,
//!   else one element per line.
//! - Text (literal or string) and a regex's pattern are single-quoted strings with `\\` and
//!   `\'` escaped (double-quoted, with `\n`, `\t`, `\r`, `\x{..}` escapes, when the text
//!   holds control characters); numbers are bare (-9223372036854775808 is written
//!   `(-9223372036854775807 - 1)` so that it stays an integer, and a float whose decimal
//!   form is long, like `1e300`, in exponent form); booleans are `!!1` and `!!0`
//!   (Perl's own true and false).

use cf2_value::{Number, Value};

use crate::{indent, is_scalar, LINE_WIDTH};

pub(crate) fn render(value: &Value) -> String {
    let mut out = String::from("use utf8;\n");
    let column = if let Value::Block(_) = value {
        out.push('+');
        1
    } else {
        0
    };
    write_value(&mut out, value, 0, column);
    out.push_str(";\n");
    out
}

/// A value starting at `column` of a line indented `level` levels.
fn write_value(out: &mut String, value: &Value, level: usize, column: usize) {
    crate::deep(|| write_value_here(out, value, level, column))
}

fn write_value_here(out: &mut String, value: &Value, level: usize, column: usize) {
    match value {
        Value::List(items) if items.is_empty() => out.push_str("[]"),
        Value::List(items) => {
            if items.iter().all(is_scalar) {
                let mut line = String::from("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        line.push_str(", ");
                    }
                    scalar(&mut line, item);
                }
                line.push(']');
                if column + line.chars().count() <= LINE_WIDTH {
                    out.push_str(&line);
                    return;
                }
            }
            out.push_str("[\n");
            for item in items {
                indent(out, level + 1);
                write_value(out, item, level + 1, 2 * (level + 1));
                out.push_str(",\n");
            }
            indent(out, level);
            out.push(']');
        }
        Value::Block(block) if block.is_empty() => out.push_str("{}"),
        Value::Block(block) => {
            out.push_str("{\n");
            for (name, member) in block {
                indent(out, level + 1);
                let start = out.len();
                quote(out, name);
                out.push_str(" => ");
                let column = 2 * (level + 1) + out[start..].chars().count();
                write_value(out, member, level + 1, column);
                out.push_str(",\n");
            }
            indent(out, level);
            out.push('}');
        }
        other => scalar(out, other),
    }
}

fn scalar(out: &mut String, value: &Value) {
    match value {
        Value::Literal(s) | Value::String(s) | Value::Regex(s) => quote(out, s),
        Value::Number(Number::Int(i64::MIN)) => out.push_str("(-9223372036854775807 - 1)"),
        Value::Number(n) => number(out, *n),
        Value::Bool(b) => out.push_str(if *b { "!!1" } else { "!!0" }),
        Value::List(_) | Value::Block(_) => {}
    }
}

/// A float in plain decimal unless that is long (Perl refuses numeric literals of more than
/// about 250 characters, and `1e300` is written out in full): then in exponent form, which
/// Perl reads as the same float.
fn number(out: &mut String, n: Number) {
    let plain = n.to_string();
    match n {
        Number::Float(f) if plain.len() > 24 => {
            out.push_str(&format!("{:e}", Number::perl_rounded(f)));
        }
        _ => out.push_str(&plain),
    }
}

/// A Perl string: single-quoted, where only `\` and `'` need escaping; double-quoted when the
/// text holds control characters (Perl would read a raw `\r\n` in its source as `\n`).
fn quote(out: &mut String, s: &str) {
    if s.chars().any(char::is_control) {
        out.push('"');
        for c in s.chars() {
            match c {
                '\\' | '"' | '$' | '@' => {
                    out.push('\\');
                    out.push(c);
                }
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => out.push_str(&format!("\\x{{{:x}}}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('"');
        return;
    }
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c => out.push(c),
        }
    }
    out.push('\'');
}
