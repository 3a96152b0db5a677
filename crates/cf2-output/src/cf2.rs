//! The cf2 format: CF2 source that, compiled again, gives the same configuration with the
//! same kinds (clarifications §7).
//!
//! - A block at the top is a configuration: one `Name => value` line per resource, no braces;
//!   an empty one is empty text. Any other value is written as the expression that would
//!   follow `=>`, then a newline.
//! - A nested block is `{`, its members indented two spaces, `}`; an empty one `{}`.
//! - A list of scalars that fits in the line is `[a, b, 3]`; any other list holds one element
//!   per line, indented, separated by commas; an empty list is `[]`.
//! - A literal is bare where the lexer reads it back as the same literal, else
//!   `'...'` with `\\`, `\'`, `\n` and `\t` escaped.
//! - A string is `"..."` with `\\`, `\"`, `\n`, `\t` and `\$` escaped (`${` would interpolate).
//! - A number is written by [`Number`]'s `Display` (a float always has a `.`), the smallest
//!   integer too: the parser reads a `-` written against a number as part of it, so
//!   `-9223372036854775808` is that integer, not the negation of one too big.
//! - A regex is `/pattern/` with each unescaped `/` written `\/`, a line end `\n`,
//!   and `${` written `$\{` (which matches the same); the empty pattern is written `/(?:)/`
//!   (`//` would start a comment).
//! - Text holding a NUL character cannot be written (CF2 source cannot hold one): an error.

use cf2_value::{Block, Value};

use crate::names::{is_bare_literal, is_resource_name};
use crate::{indent, is_scalar, join_path, Format, OutputError, LINE_WIDTH};

pub(crate) fn render(value: &Value, what: &str) -> Result<String, OutputError> {
    let mut w = Writer {
        out: String::new(),
        path: Vec::new(),
        what,
    };
    match value {
        Value::Block(block) => w.members(block, 0)?,
        other => {
            w.value(other, 0, 0)?;
            w.out.push('\n');
        }
    }
    // No escape writes a NUL, and a CF2 file cannot hold one (the lexer refuses it): the
    // output could not be read back (text from `read()` may hold one).
    if w.out.contains('\0') {
        return Err(OutputError::Invalid {
            format: Format::Cf2,
            what: join_path(what, &nul_path(value)),
            message: "it holds text with a NUL character, which CF2 source cannot contain"
                .to_string(),
        });
    }
    Ok(w.out)
}

/// Where in `value` the first text holding a NUL is (for the message), found without
/// recursion, since values may be nested deeper than the stack allows.
fn nul_path(value: &Value) -> Vec<String> {
    // Each entry: a value, how deep it is, and its name in its parent (none for the root).
    let mut stack: Vec<(&Value, usize, Option<String>)> = vec![(value, 0, None)];
    let mut path: Vec<String> = Vec::new();
    while let Some((v, depth, name)) = stack.pop() {
        path.truncate(depth.saturating_sub(1));
        if let Some(name) = name {
            path.push(name);
        }
        match v {
            Value::Literal(t) | Value::String(t) | Value::Regex(t) if t.contains('\0') => {
                return path;
            }
            Value::Block(block) => {
                for (name, member) in block.iter().rev() {
                    stack.push((member, depth + 1, Some(name.clone())));
                }
            }
            Value::List(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((item, depth + 1, Some(i.to_string())));
                }
            }
            _ => {}
        }
    }
    Vec::new()
}

struct Writer<'a> {
    out: String,
    /// Where the writer is inside the value (for error messages).
    path: Vec<String>,
    what: &'a str,
}

impl Writer<'_> {
    /// A block's members, one `Name => value` line each, at `level`.
    fn members(&mut self, block: &Block, level: usize) -> Result<(), OutputError> {
        for (name, value) in block {
            if !is_resource_name(name) {
                return Err(OutputError::BadName {
                    format: Format::Cf2,
                    what: join_path(self.what, &self.path),
                    name: name.clone(),
                });
            }
            indent(&mut self.out, level);
            self.out.push_str(name);
            self.out.push_str(" => ");
            let column = 2 * level + name.chars().count() + 4;
            self.path.push(name.clone());
            self.value(value, level, column)?;
            self.path.pop();
            self.out.push('\n');
        }
        Ok(())
    }

    /// A value starting at `column` of a line indented `level` levels.
    fn value(&mut self, value: &Value, level: usize, column: usize) -> Result<(), OutputError> {
        crate::deep(|| self.value_here(value, level, column))
    }

    fn value_here(
        &mut self,
        value: &Value,
        level: usize,
        column: usize,
    ) -> Result<(), OutputError> {
        match value {
            Value::List(items) if items.is_empty() => self.out.push_str("[]"),
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
                        self.out.push_str(&line);
                        return Ok(());
                    }
                }
                self.out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    indent(&mut self.out, level + 1);
                    self.path.push(i.to_string());
                    self.value(item, level + 1, 2 * (level + 1))?;
                    self.path.pop();
                    if i + 1 < items.len() {
                        self.out.push(',');
                    }
                    self.out.push('\n');
                }
                indent(&mut self.out, level);
                self.out.push(']');
            }
            Value::Block(block) if block.is_empty() => self.out.push_str("{}"),
            Value::Block(block) => {
                self.out.push_str("{\n");
                self.members(block, level + 1)?;
                indent(&mut self.out, level);
                self.out.push('}');
            }
            scalar_value => scalar(&mut self.out, scalar_value),
        }
        Ok(())
    }
}

/// A scalar, on one line. (Lists and blocks are the writer's.)
fn scalar(out: &mut String, value: &Value) {
    match value {
        Value::Literal(s) => literal(out, s),
        Value::String(s) => string(out, s),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Regex(p) => regex(out, p),
        Value::List(_) | Value::Block(_) => {}
    }
}

fn literal(out: &mut String, s: &str) {
    if is_bare_literal(s) {
        out.push_str(s);
        return;
    }
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '$' => out.push_str("\\$"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn regex(out: &mut String, pattern: &str) {
    if pattern.is_empty() {
        // `//` would start a comment.
        out.push_str("/(?:)/");
        return;
    }
    out.push('/');
    let mut chars = pattern.chars().peekable();
    // Inside a character class `[...]`, where `(?:$)` would be five characters: how many
    // characters of it have been written (a `]` first, after an optional `^`, is one).
    let mut class: Option<usize> = None;
    while let Some(c) = chars.next() {
        if let Some(n) = class.as_mut() {
            let first = *n == 0;
            *n += 1;
            match c {
                // `[^]...]`: the `]` after `^` is a character too, so `^` does not count.
                '^' if first => {
                    out.push(c);
                    *n = 0;
                    continue;
                }
                ']' if !first => {
                    out.push(c);
                    class = None;
                    continue;
                }
                // `[:alpha:]` (and `[=a=]`, `[.a.]`) inside a class: its `]` does not close it.
                '[' if matches!(chars.peek(), Some(':' | '=' | '.')) => {
                    out.push(c);
                    let Some(kind) = chars.next() else { break };
                    out.push(kind);
                    while let Some(x) = chars.next() {
                        out.push(x);
                        if x == kind && chars.peek() == Some(&']') {
                            chars.next();
                            out.push(']');
                            break;
                        }
                    }
                    continue;
                }
                // A `$` in a class is the character: before a `{`, written `\$`, which
                // matches the same and cannot start an interpolation; elsewhere as it is,
                // so that `/[$]/` reads back as the same pattern.
                '$' if chars.peek() == Some(&'{') => {
                    out.push_str("\\$");
                    continue;
                }
                _ => {}
            }
        } else if c == '[' {
            out.push(c);
            class = Some(0);
            continue;
        }
        match c {
            // An escape pair stays as it is (`\/`, `\d`, `\\`).
            '\\' => match chars.next() {
                Some('\n') => out.push_str("\\n"),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                // A lone backslash at the end would escape the closing `/`.
                None => out.push_str("\\\\"),
            },
            '/' => out.push_str("\\/"),
            // A regex cannot hold a line end.
            '\n' => out.push_str("\\n"),
            // `${` would start an interpolation, and `$\{` would turn a quantifier of the
            // anchor (`${1}`) into literal text: a group matches the same either way.
            '$' if chars.peek() == Some(&'{') => out.push_str("(?:$)"),
            c => out.push(c),
        }
    }
    out.push('/');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> String {
        let mut s = String::new();
        regex(&mut s, p);
        s
    }

    #[test]
    fn regex_slashes() {
        assert_eq!(re("a/b"), r"/a\/b/");
        assert_eq!(re(r"a\/b"), r"/a\/b/");
        assert_eq!(re(r"a\\/b"), r"/a\\\/b/");
        assert_eq!(re(r"\d+\.\d+$"), r"/\d+\.\d+$/");
        assert_eq!(re("x${y}"), r"/x(?:$){y}/");
        assert_eq!(re("a${1}"), r"/a(?:$){1}/");
        assert_eq!(re(r"x\${y}"), r"/x\${y}/");
        assert_eq!(re("a\\"), r"/a\\/");
        assert_eq!(re("a\nb\tc"), "/a\\nb\tc/");
        assert_eq!(re(""), "/(?:)/");
    }

    /// In a character class, `$` is the character: written `\$`, since `(?:$)` there would be
    /// five characters (found by the formats audit: `[${]`).
    #[test]
    fn regex_dollar_in_a_class() {
        assert_eq!(re("^[${]$"), r"/^[\${]$/");
        assert_eq!(re("[${-}]x${1}"), r"/[\${-}]x(?:$){1}/");
        assert_eq!(re("[]${]"), r"/[]\${]/");
        assert_eq!(re("[^]${]"), r"/[^]\${]/");
        assert_eq!(re("[[:alpha:]${]"), r"/[[:alpha:]\${]/");
        assert_eq!(re(r"\[${"), r"/\[(?:$){/");
        assert_eq!(re("[a/b]"), r"/[a\/b]/");
        // Not before a `{`: as written (audit 64 #5: `[$]` came back as `[\$]`).
        assert_eq!(re("[$]"), "/[$]/");
        assert_eq!(re("[^a$]x$"), "/[^a$]x$/");
    }

    #[test]
    fn text_escapes() {
        let mut s = String::new();
        literal(&mut s, "it's a \\ test\n\t$x");
        assert_eq!(s, r"'it\'s a \\ test\n\t$x'");
        let mut s = String::new();
        string(&mut s, "say \"hi\" ${x} \\ \n\t'");
        assert_eq!(s, r#""say \"hi\" \${x} \\ \n\t'""#);
    }
}
