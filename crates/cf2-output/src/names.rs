//! Which words the cf2 format may write bare: resource names, and literals without quotes.
//!
//! The lexer (`cf2_syntax::lexer`) is the authority. A word passes if the lexer's helper
//! accepts it or if the fallback here does, which follows the lexer's documented rule: a word
//! starts with an ASCII letter, `_` or a non-ASCII character other than white space, control
//! characters and format characters (`cf2_syntax::lexer::is_format_character`); continues with those characters and ASCII digits; a literal
//! (not a name) may also hold single `-`s between them; a keyword is never a word.

const KEYWORDS: [&str; 8] = [
    "true", "false", "if", "then", "else", "import", "def", "private",
];

/// True if `s` can be written as a block member's name.
pub(crate) fn is_resource_name(s: &str) -> bool {
    cf2_syntax::lexer::is_identifier(s) || plain_word(s, false)
}

/// True if the literal `s` can be written without quotes. Text with a character above
/// U+FFFF or a `_` is quoted: cf2 reads it bare, but Appendix A's `Literal` has neither,
/// and quoted it reads back in any compiler that follows the grammar.
pub(crate) fn is_bare_literal(s: &str) -> bool {
    (cf2_syntax::lexer::is_bare_literal(s) || plain_word(s, true))
        && s.chars().all(|c| c <= '\u{FFFF}' && c != '_')
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic()
        || c == '_'
        || (!c.is_ascii()
            && !c.is_whitespace()
            && !c.is_control()
            && !cf2_syntax::lexer::is_format_character(c))
}

fn is_word_char(c: char) -> bool {
    is_word_start(c) || c.is_ascii_digit()
}

/// A word; with `hyphens`, single `-`s may stand between its characters.
fn plain_word(s: &str, hyphens: bool) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if is_word_start(c) => {}
        _ => return false,
    }
    let mut after_hyphen = false;
    for c in chars {
        if c == '-' && hyphens && !after_hyphen {
            after_hyphen = true;
        } else if is_word_char(c) {
            after_hyphen = false;
        } else {
            return false;
        }
    }
    !after_hyphen && !KEYWORDS.contains(&s)
}

#[cfg(test)]
mod tests {
    use super::plain_word;

    #[test]
    fn fallback_words() {
        for ok in [
            "a",
            "simple123",
            "web-server",
            "a_b",
            "a-b-c",
            "café",
            "Ελλάδα",
            "x9",
            "_a",
            "entry-1",
            "😀",
            "a😀",
            "trueish",
            "If",
        ] {
            assert!(plain_word(ok, true), "{ok}");
        }
        for bad in [
            "",
            "1a",
            "-a",
            "a-",
            "a--b",
            "a b",
            "a.b",
            "a'b",
            "true",
            "false",
            "if",
            "then",
            "else",
            "import",
            "def",
            "private",
            "a/b",
            "a$",
            "a\u{a0}b",
            "a\u{200B}",
            "\u{FEFF}",
            "a\u{2028}b",
            "a\u{85}",
            "a\tb",
        ] {
            assert!(!plain_word(bad, true), "{bad:?}");
        }
        assert!(plain_word("a_b", false));
        assert!(!plain_word("a-b", false));
        assert!(!plain_word("if", false));
    }
}
