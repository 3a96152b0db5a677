//! TOML: the JSON mapping (clarifications §7) in TOML syntax, written by the `toml` crate.
//! The top must be a block. Member order is kept, except that TOML writes a table's plain
//! values before its sub-tables and arrays of tables. A list of blocks is an array of
//! tables; lists may mix kinds (TOML 1.0).
//!
//! No line ends in a space or a tab. The `toml` crate writes text holding a line end as a
//! multi-line string, with the spaces and tabs before each line end as they are; a
//! clearsignature (`-S`) does not cover whitespace at the end of a line (RFC 4880 §7.1), so
//! the verified text would differ from the configuration, and those spaces could be edited
//! without breaking the signature. [`escape_line_ends`] rewrites such strings.

use cf2_value::Value;

use crate::{Format, OutputError};

pub(crate) fn render(value: &Value, what: &str) -> Result<String, OutputError> {
    if !matches!(value, Value::Block(_)) {
        return Err(OutputError::NeedsBlock {
            format: Format::Toml,
            what: what.to_string(),
            found: value.type_name(),
        });
    }
    let text = ::toml::to_string(value).map_err(|e| OutputError::Invalid {
        format: Format::Toml,
        what: what.to_string(),
        message: e.to_string(),
    })?;
    Ok(escape_line_ends(text))
}

/// Whether a line of `text` ends in a space or a tab.
fn has_trailing_whitespace(text: &str) -> bool {
    text.contains(" \n") || text.contains("\t\n")
}

/// `text` (a TOML document) with no line ending in whitespace: in every multi-line string
/// that has such a line, a space before a line end is written `\u0020` and a tab `\t`; a
/// multi-line literal string (`'''`, which has no escapes) becomes a multi-line basic
/// string (`"""`) holding the same text. Outside strings, the `toml` crate never ends a line
/// in whitespace, and a single-line string holds no line end.
///
/// The document is read with TOML's own rules for where strings start and end (the only
/// tokens that can hold a quote, a backslash or a line end); everything else is copied.
fn escape_line_ends(text: String) -> String {
    if !has_trailing_whitespace(&text) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text.as_str();
    loop {
        let Some(start) = rest.find(['"', '\'']) else {
            out.push_str(rest);
            break;
        };
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        // The string's delimiter, raw content, what follows it, and for a multi-line one
        // how to write its content as a `"""` string without whitespace at a line end.
        type Rewrite = fn(&mut String, &str);
        let (quote, (content, after), rewrite): (&str, _, Option<Rewrite>) =
            if let Some(body) = from.strip_prefix("\"\"\"") {
                (
                    "\"\"\"",
                    multi_line_body(body, '"'),
                    Some(escape_basic_line_ends),
                )
            } else if let Some(body) = from.strip_prefix("'''") {
                ("'''", multi_line_body(body, '\''), Some(literal_as_basic))
            } else if let Some(body) = from.strip_prefix('"') {
                ("\"", single_line_body(body, '"', true), None)
            } else if let Some(body) = from.strip_prefix('\'') {
                ("'", single_line_body(body, '\'', false), None)
            } else {
                // `find` stopped at a quote: not reached.
                out.push_str(from);
                break;
            };
        match rewrite {
            Some(write) if has_trailing_whitespace(content) => {
                out.push_str("\"\"\"");
                write(&mut out, content);
                out.push_str("\"\"\"");
            }
            _ => {
                out.push_str(quote);
                out.push_str(content);
                out.push_str(quote);
            }
        }
        rest = after;
    }
    out
}

/// The raw content of a multi-line string whose opening `quote`s are behind, and what
/// follows its closing ones. The string ends at the first run of three or more quotes not
/// escaped (basic strings only); the quotes of the run beyond the last three are content.
fn multi_line_body(body: &str, quote: char) -> (&str, &str) {
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\\' && quote == '"' {
            chars.next();
        } else if c == quote {
            let mut run = 1;
            while chars.next_if(|&(_, c)| c == quote).is_some() {
                run += 1;
            }
            if run >= 3 {
                let end = i + run - 3;
                return (
                    body.get(..end).unwrap_or(body),
                    body.get(end + 3..).unwrap_or(""),
                );
            }
        }
    }
    (body, "")
}

/// The raw content of a single-line string whose opening `quote` is behind, and what follows
/// its closing one.
fn single_line_body(body: &str, quote: char, escapes: bool) -> (&str, &str) {
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\\' && escapes {
            chars.next();
        } else if c == quote {
            return (
                body.get(..i).unwrap_or(body),
                body.get(i + 1..).unwrap_or(""),
            );
        }
    }
    (body, "")
}

/// The raw content of a multi-line basic string, with the whitespace before each line end
/// escaped (its escapes are kept as they are).
fn escape_basic_line_ends(out: &mut String, content: &str) {
    let mut chars = content.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            ' ' if chars.peek() == Some(&'\n') => out.push_str("\\u0020"),
            '\t' if chars.peek() == Some(&'\n') => out.push_str("\\t"),
            c => out.push(c),
        }
    }
}

/// The text of a multi-line literal string written as the content of a multi-line basic
/// string. Both drop a line end right after the opening quotes, so it is kept as it is.
fn literal_as_basic(out: &mut String, content: &str) {
    let mut chars = content.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\t' => out.push_str("\\t"),
            ' ' if chars.peek() == Some(&'\n') => out.push_str("\\u0020"),
            c if c.is_ascii_control() && c != '\n' => {
                out.push_str(&format!("\\u{:04X}", u32::from(c)))
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::escape_line_ends;

    /// `¶` stands for a line end.
    #[test]
    fn strings_are_rewritten_only_where_a_line_ends_in_whitespace() {
        let cases = [
            ("a = 1¶", "a = 1¶"),
            (r#"a = """¶x ¶y"""¶"#, r#"a = """¶x\u0020¶y"""¶"#),
            // An escaped backslash; quotes before the closing ones.
            (r#"a = """¶x\\ ¶"""""¶"#, r#"a = """¶x\\\u0020¶"""""¶"#),
            // A literal string becomes a basic one; another stays as it is.
            (
                "a = '''¶it's\t¶\"q\" \\ '''¶b = '''¶c'''¶",
                r#"a = """¶it's\t¶\"q\" \\ """¶b = '''¶c'''¶"#,
            ),
            // Quotes inside single-line strings and keys do not open a string.
            (
                r#""k \"\"\"" = ["""¶a ¶""", 'x"""', "'''"]¶"#,
                r#""k \"\"\"" = ["""¶a\u0020¶""", 'x"""', "'''"]¶"#,
            ),
            // A space before the closing quotes ends no line.
            (
                r#"a = """¶x ¶"""¶b = """¶y """¶"#,
                r#"a = """¶x\u0020¶"""¶b = """¶y """¶"#,
            ),
        ];
        for (text, want) in cases {
            let got = escape_line_ends(text.replace('¶', "\n"));
            assert_eq!(got.replace('\n', "¶"), want, "{text:?}");
        }
    }
}
