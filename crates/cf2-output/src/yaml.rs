//! YAML: the JSON mapping (clarifications §7) in YAML block style, members in order.
//!
//! Written here rather than by a YAML library so that the output reads back the same under
//! both YAML 1.2 and the YAML 1.1 rules many readers still follow (PyYAML, Ansible, older Go
//! and Ruby libraries), where `yes`, `on`, `NO`, `1_000`, `12:30:00` and `2001-12-14` are not
//! text. So:
//!
//! - text (literal, string, a regex's pattern) is written plain only when it is a "safe" word
//!   or phrase: it starts with an ASCII letter, `_`, `/` or a non-ASCII letter; holds only
//!   letters, digits, `_`, `.`, `/`, `-` and single inner spaces; and is not one of `y`, `n`,
//!   `yes`, `no`, `on`, `off`, `true`, `false`, `null` in any case. Anything else is
//!   double-quoted, with JSON-like escapes (`\n`, `\"`, `\\`, `\uXXXX` for control and line
//!   separator characters). Member names follow the same rule.
//! - integers are decimal; a float always has a `.` (and an exponent with a sign when its
//!   plain form would be long: `1.0e+300`), which both YAML versions read as a float;
//!   booleans are `true` and `false`.
//! - blocks are mappings, lists sequences (indented two spaces below their key); empty ones
//!   are `{}` and `[]`.

use cf2_value::{Block, Number, Value};

use crate::{deep, indent};

pub(crate) fn render(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Block(b) if !b.is_empty() => mapping(&mut out, b, 0, false),
        Value::List(l) if !l.is_empty() => sequence(&mut out, l, 0, false),
        other => {
            inline(&mut out, other);
            out.push('\n');
        }
    }
    out
}

/// A non-empty block at `level`. With `continues`, the first member goes on the current line
/// (after a sequence's `- `).
fn mapping(out: &mut String, block: &Block, level: usize, continues: bool) {
    for (i, (name, value)) in block.iter().enumerate() {
        if i > 0 || !continues {
            indent(out, level);
        }
        // An implicit key may not be longer than 1024 characters: longer ones are explicit.
        if name.chars().count() > 1000 {
            out.push_str("? ");
            text(out, name);
            out.push('\n');
            indent(out, level);
            out.push(':');
        } else {
            text(out, name);
            out.push(':');
        }
        match value {
            Value::Block(b) if !b.is_empty() => {
                out.push('\n');
                deep(|| mapping(out, b, level + 1, false));
            }
            Value::List(l) if !l.is_empty() => {
                out.push('\n');
                deep(|| sequence(out, l, level + 1, false));
            }
            other => {
                out.push(' ');
                inline(out, other);
                out.push('\n');
            }
        }
    }
}

/// A non-empty list at `level`. With `continues`, the first element goes on the current line.
fn sequence(out: &mut String, items: &[Value], level: usize, continues: bool) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !continues {
            indent(out, level);
        }
        out.push_str("- ");
        match item {
            Value::Block(b) if !b.is_empty() => deep(|| mapping(out, b, level + 1, true)),
            Value::List(l) if !l.is_empty() => deep(|| sequence(out, l, level + 1, true)),
            other => {
                inline(out, other);
                out.push('\n');
            }
        }
    }
}

/// A scalar, or an empty list or block, on one line.
fn inline(out: &mut String, value: &Value) {
    match value {
        Value::Literal(s) | Value::String(s) | Value::Regex(s) => text(out, s),
        Value::Number(n) => number(out, *n),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::List(_) => out.push_str("[]"),
        Value::Block(_) => out.push_str("{}"),
    }
}

fn number(out: &mut String, n: Number) {
    let plain = n.to_string();
    match n {
        // YAML 1.1 wants a `.` in the mantissa and a sign on the exponent.
        Number::Float(f) if plain.len() > 24 => {
            let exp = format!("{:e}", Number::perl_rounded(f));
            let (mantissa, exponent) = exp.split_once('e').unwrap_or((&exp, "0"));
            out.push_str(mantissa);
            if !mantissa.contains('.') {
                out.push_str(".0");
            }
            out.push('e');
            if !exponent.starts_with('-') {
                out.push('+');
            }
            out.push_str(exponent);
        }
        _ => out.push_str(&plain),
    }
}

/// Words that YAML 1.1 or 1.2 reads as a boolean or null when plain.
const SPECIAL_WORDS: [&str; 9] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"];

fn is_plain_safe(s: &str) -> bool {
    let mut chars = s.chars();
    let first_ok = match chars.next() {
        Some(c) => c.is_ascii_alphabetic() || c == '_' || c == '/' || is_other_letter(c),
        None => false,
    };
    let mut after_space = false;
    let rest_ok = chars.all(|c| {
        let ok = if c == ' ' {
            !after_space
        } else {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-') || is_other_letter(c)
        };
        after_space = c == ' ';
        ok
    });
    first_ok
        && rest_ok
        && !s.ends_with(' ')
        && !SPECIAL_WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

/// A non-ASCII letter or digit (never a space, line break or control character).
fn is_other_letter(c: char) -> bool {
    !c.is_ascii() && c.is_alphanumeric()
}

/// Text, plain when safe, else double-quoted.
fn text(out: &mut String, s: &str) {
    if is_plain_safe(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
                ) =>
            {
                out.push_str(&format!("\\u{:04X}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_or_quoted() {
        for plain in [
            "a",
            "web-server",
            "a literal",
            "/etc/x.pem",
            "café",
            "_x",
            "Yesterday",
        ] {
            assert!(is_plain_safe(plain), "{plain}");
        }
        for quoted in [
            "",
            "yes",
            "No",
            "ON",
            "y",
            "True",
            "NULL",
            "1",
            "1.5",
            "-a",
            ".inf",
            "a: b",
            "a #b",
            "a  b",
            " a",
            "a ",
            "~",
            "2001-12-14",
            "a\u{2028}b",
            "a\u{85}",
            "a\tb",
            "x:y",
        ] {
            assert!(!is_plain_safe(quoted), "{quoted:?}");
        }
    }

    #[test]
    fn floats() {
        let f = |x: f64| {
            let mut s = String::new();
            number(&mut s, Number::Float(x));
            s
        };
        assert_eq!(f(3.0), "3.0");
        assert_eq!(f(-45.67), "-45.67");
        assert_eq!(f(1e300), "1.0e+300");
        assert_eq!(f(-1.5e-300), "-1.5e-300");
        assert_eq!(f(1.5e-7), "0.00000015");
    }
}
