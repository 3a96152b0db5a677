//! The lexer.
//!
//! Tokens are recognised by a [`logos`] state machine, one token at a time, on demand: the
//! parser drives the lexer, because what some characters mean depends on where they stand.
//! A `/` where a value is expected starts a regular expression, elsewhere it divides; the
//! body of a `"..."` string or of a `/.../` regular expression is scanned by hand, and each
//! `${...}` interpolation inside it is parsed as ordinary tokens before the scan resumes.
//!
//! Lexical rules (they are part of the language definition):
//! - spaces and tabs separate tokens; `//` starts a comment that runs to the end of the
//!   line; a line end (LF or CR LF) is a token (statements end at newlines, see the
//!   parser); a CR alone is an error;
//! - a word is `[A-Za-z_]` or any non-ASCII character other than white space, control
//!   characters and format characters (U+200B, U+200D, U+FEFF, U+202E...:
//!   [`is_format_character`]), followed by such characters, digits or `-`s
//!   (`entry-1`, `a--b`, `a-`: Appendix A's `Literal` pattern). Such a word is a bare
//!   literal where a value is expected; names (resources, functions, macro parameters,
//!   selectors, references) cannot contain `-`;
//! - `$name` is a reference (`$X-1` is `$X` minus 1);
//! - a number is `[0-9]+(\.[0-9]+)?`; a minus sign is an operator;
//! - `'...'` is a literal, `"..."` a string; both may span lines; in both, `\\`, `\'`,
//!   `\"`, `\n`, `\t` and `\$` are escapes, and any other backslash is kept as written.

use logos::Logos;

/// The keywords: never names. Where a value is expected, `true`/`false` are booleans, `if`
/// and `import` begin their construct, and the others are literals (the parser decides).
pub const KEYWORDS: [&str; 8] = [
    "if", "then", "else", "import", "def", "private", "true", "false",
];

/// True if `s` is one of [`KEYWORDS`].
pub fn is_keyword(s: &str) -> bool {
    // The same words as `KEYWORDS`, as a `match` (one length test for most words).
    matches!(
        s,
        "if" | "then" | "else" | "import" | "def" | "private" | "true" | "false"
    )
}

/// True if `s` can be written as a bare word and reads back as the same literal: an
/// identifier-like word (letters, digits, `_`, `-` inside, non-ASCII) that is not a keyword
/// (`true`, `false`, `if`, `then`, `else`, `import`, `def`, `private`).
pub fn is_bare_literal(s: &str) -> bool {
    is_one_word(s) && !is_keyword(s)
}

/// True if `s` is a valid resource name (identifier): a word without `-` that is not a
/// keyword.
pub fn is_identifier(s: &str) -> bool {
    is_one_word(s) && !s.contains('-') && !is_keyword(s)
}

/// A character of Unicode's general category Cf (format): it changes how text around it is
/// shown, or shows as nothing (U+200B zero-width space, U+200D zero-width joiner, U+00AD soft
/// hyphen, U+202E right-to-left override, U+FEFF...). Names and bare words exclude them, as
/// `\p{Cf}` in the lexer's rules: `a<U+200D>b` would be a name that looks like `ab`, and a
/// bidirectional override makes code read differently from how it runs ("Trojan source").
/// The ranges are those of the lexer's Unicode tables (`format_characters_match_the_lexer`).
pub fn is_format_character(c: char) -> bool {
    matches!(
        u32::from(c),
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    )
}

fn is_one_word(s: &str) -> bool {
    let mut lx = Tok::lexer(s);
    matches!(lx.next(), Some(Ok(Tok::Word))) && lx.span() == (0..s.len())
}

/// The kinds of token. `Eof` and `Error` are never produced by the state machine itself.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t]+")]
#[logos(skip(r"//[^\r\n]*", allow_greedy = true))]
pub(crate) enum Tok {
    /// One or more line ends (LF or CR LF), with the blank space and comments between
    /// them. A CR alone is no line end, and no white space: an error, so that a file with
    /// classic Mac OS line ends is refused instead of read as one line — its first
    /// comment would hide the whole file.
    #[regex(r"\r?\n([ \t]|\r?\n|//[^\r\n]*)*", allow_greedy = true)]
    Newline,
    #[regex(
        r"[A-Za-z_\x{80}-\x{10FFFF}&&[^\s\p{Cc}\p{Cf}]][A-Za-z0-9_\-\x{80}-\x{10FFFF}&&[^\s\p{Cc}\p{Cf}]]*"
    )]
    Word,
    #[regex(
        r"\$[A-Za-z_\x{80}-\x{10FFFF}&&[^\s\p{Cc}\p{Cf}]][A-Za-z0-9_\x{80}-\x{10FFFF}&&[^\s\p{Cc}\p{Cf}]]*"
    )]
    Ref,
    /// A `$` not followed by a name.
    #[token("$")]
    Dollar,
    #[regex(r"[0-9]+(\.[0-9]+)?")]
    Number,
    /// A complete `'...'`.
    #[regex(r"'([^'\\]|\\[\x00-\x{10FFFF}])*'")]
    SQuoted,
    /// A `'` that is never closed.
    #[token("'")]
    SQuoteOpen,
    /// The opening `"` of a string; the body is scanned by [`Lexer::scan_string`].
    #[token("\"")]
    DQuote,
    #[token("=>")]
    Arrow,
    #[token("~>")]
    MergeArrow,
    #[token("~")]
    Tilde,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("=")]
    Assign,
    #[token("=~")]
    MatchOp,
    #[token("!~")]
    NotMatchOp,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("++")]
    PlusPlus,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    /// Division, or the start of a regular expression where a value is expected.
    #[token("/")]
    Slash,
    #[token("!")]
    Bang,
    #[token(".")]
    Dot,
    #[token(",")]
    Comma,
    #[token("?")]
    Question,
    /// The end of the text.
    Eof,
    /// A character that starts no token.
    Error,
}

/// A token: its kind and its byte range in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub start: usize,
    pub end: usize,
}

/// What stopped the scan of a string or regex body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The closing delimiter (consumed).
    Closed,
    /// `${` (consumed); `usize` is the offset of the `$`.
    Interp(usize),
    /// A line end inside a regular expression (not consumed).
    LineEnd,
    /// The end of the text.
    Eof,
}

/// The lazily driven lexer: a position in the text and a small buffer of tokens already
/// recognised ahead of it.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    /// Where the next unbuffered token starts (just after the last consumed token when the
    /// buffer is empty).
    pos: usize,
    /// The tokens recognised ahead are `buf[head..]`; the buffer is emptied (keeping its
    /// capacity) whenever they have all been consumed, so it never grows beyond the
    /// deepest look-ahead.
    buf: Vec<Token>,
    head: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str, start: usize) -> Lexer<'a> {
        Lexer {
            src,
            pos: start.min(src.len()),
            buf: Vec::with_capacity(4),
            head: 0,
        }
    }

    pub fn src(&self) -> &'a str {
        self.src
    }

    /// Recognises one token starting at (or after blank space at) `at`.
    fn lex_at(&self, at: usize) -> Token {
        let len = self.src.len();
        let eof = Token {
            kind: Tok::Eof,
            start: len,
            end: len,
        };
        let Some(rest) = self.src.get(at..) else {
            return eof;
        };
        let mut lx = Tok::lexer(rest);
        match lx.next() {
            None => eof,
            Some(Ok(kind)) => {
                let r = lx.span();
                Token {
                    kind,
                    start: at + r.start,
                    end: at + r.end,
                }
            }
            Some(Err(())) => {
                let r = lx.span();
                let start = at + r.start;
                // One whole character, whatever the state machine reported.
                let width = self
                    .src
                    .get(start..)
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                Token {
                    kind: Tok::Error,
                    start,
                    end: (start + width).min(len),
                }
            }
        }
    }

    /// The `n`th token ahead (0 is the next one), newlines included.
    #[inline]
    pub fn peek_nth(&mut self, n: usize) -> Token {
        match self.head.checked_add(n).and_then(|i| self.buf.get(i)) {
            Some(t) => *t,
            None => self.fill(n),
        }
    }

    /// Lexes tokens ahead until the `n`th is buffered, and returns it.
    #[inline(never)]
    fn fill(&mut self, n: usize) -> Token {
        let mut t = Token {
            kind: Tok::Eof,
            start: self.src.len(),
            end: self.src.len(),
        };
        while self.buf.len().saturating_sub(self.head) <= n {
            let at = self.buf.last().map_or(self.pos, |t| t.end);
            t = self.lex_at(at);
            self.buf.push(t);
        }
        t
    }

    /// Consumes and returns the next token.
    #[inline]
    pub fn next_token(&mut self) -> Token {
        let t = self.peek_nth(0);
        self.head += 1;
        if self.head >= self.buf.len() {
            self.buf.clear();
            self.head = 0;
        }
        if t.kind != Tok::Eof || self.head == 0 {
            self.pos = t.end;
        }
        t
    }

    /// Where the first token not yet consumed starts (or the scan position).
    pub fn resume_pos(&self) -> usize {
        self.buf.get(self.head).map_or(self.pos, |t| t.start)
    }

    /// Continues lexing at byte `pos`, forgetting any token recognised ahead.
    pub fn reset(&mut self, pos: usize) {
        self.buf.clear();
        self.head = 0;
        self.pos = pos.min(self.src.len());
    }

    /// The text of the source from the scan position on.
    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    /// Scans the body of a `"..."` string from the scan position (just after the opening
    /// quote or after an interpolation), appending text with escapes processed to `out`.
    pub fn scan_string(&mut self, out: &mut String) -> Stop {
        self.buf.clear();
        self.head = 0;
        let base = self.pos;
        let mut chars = self.rest().char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos = base + i + 1;
                    return Stop::Closed;
                }
                '\\' => match chars.next() {
                    Some((_, e)) => push_escape(out, e),
                    None => {
                        out.push('\\');
                        break;
                    }
                },
                '$' if matches!(chars.peek(), Some((_, '{'))) => {
                    self.pos = base + i + 2;
                    return Stop::Interp(base + i);
                }
                _ => out.push(c),
            }
        }
        self.pos = self.src.len();
        Stop::Eof
    }

    /// Scans the body of a `/.../` regular expression from the scan position, appending the
    /// pattern text to `out`: verbatim, except that `\/` becomes `/`. `\$` stays `\$` and
    /// does not start an interpolation.
    pub fn scan_regex(&mut self, out: &mut String) -> Stop {
        self.buf.clear();
        self.head = 0;
        let base = self.pos;
        let mut chars = self.rest().char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '/' => {
                    self.pos = base + i + 1;
                    return Stop::Closed;
                }
                '\n' => {
                    self.pos = base + i;
                    return Stop::LineEnd;
                }
                '\\' => match chars.peek().copied() {
                    Some((_, '/')) => {
                        chars.next();
                        out.push('/');
                    }
                    Some((_, '\n')) | None => out.push('\\'),
                    Some((_, e)) => {
                        chars.next();
                        out.push('\\');
                        out.push(e);
                    }
                },
                '$' if matches!(chars.peek(), Some((_, '{'))) => {
                    self.pos = base + i + 2;
                    return Stop::Interp(base + i);
                }
                _ => out.push(c),
            }
        }
        self.pos = self.src.len();
        Stop::Eof
    }

    /// Error recovery inside `${...}`: skips from the first unconsumed token to just after
    /// the next `}`, or up to (not over) the delimiter that closes the enclosing string or
    /// regex, or a line end in a regex. In a string, a `"` that starts a quoted text
    /// followed on its line by the `}` (`"${"name"}"`) is inside the `${...}`, not the end
    /// of the string.
    pub fn skip_interp(&mut self, regex: bool) {
        let from = self.resume_pos();
        self.reset(from);
        let base = self.pos;
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '}' => {
                    self.pos = base + i + 1;
                    return;
                }
                '"' if !regex => {
                    if let Some(end) = self.nested_string_end(base + i) {
                        // Skip it: `chars` resumes after its closing quote.
                        while chars.next().is_some_and(|(j, _)| base + j + 1 < end) {}
                        continue;
                    }
                    self.pos = base + i;
                    return;
                }
                '/' | '\n' if regex => {
                    self.pos = base + i;
                    return;
                }
                '\\' if !regex => {
                    chars.next();
                }
                _ => {}
            }
        }
        self.pos = self.src.len();
    }

    /// If the `"` at `at` starts a quoted text inside a `${...}` (the text ends on its line,
    /// and a `}` follows on that line before any other `"`), where that text ends.
    fn nested_string_end(&self, at: usize) -> Option<usize> {
        let end = string_end(self.src, at + 1)?;
        let text = self.src.get(at..end)?;
        let rest = self.src.get(end..)?;
        let rest = rest.split('\n').next().unwrap_or("");
        let close = rest.find('}')?;
        let quote = rest.find('"');
        (!text.contains('\n') && quote.is_none_or(|q| close < q)).then_some(end)
    }

    /// Error recovery: skips the body of a string whose opening quote was just consumed,
    /// without looking into its interpolations.
    pub fn skip_string(&mut self) {
        self.reset(self.pos);
        self.pos = string_end(self.src, self.pos).unwrap_or(self.src.len());
    }
}

/// Where the string whose body starts at `from` ends (just after its closing quote).
pub(crate) fn string_end(src: &str, from: usize) -> Option<usize> {
    let body = src.get(from..)?;
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some(from + i + 1),
            '\\' => {
                chars.next();
            }
            _ => {}
        }
    }
    None
}

/// Appends the character that `\e` stands for in a literal or string.
fn push_escape(out: &mut String, e: char) {
    match e {
        'n' => out.push('\n'),
        't' => out.push('\t'),
        '\\' | '\'' | '"' | '$' => out.push(e),
        _ => {
            out.push('\\');
            out.push(e);
        }
    }
}

/// The text of a `'...'` literal body (without the quotes), escapes processed.
pub(crate) fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e) => push_escape(&mut out, e),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(Tok, &str)> {
        let mut lx = Lexer::new(s, 0);
        let mut v = Vec::new();
        loop {
            let t = lx.next_token();
            if t.kind == Tok::Eof {
                break;
            }
            v.push((t.kind, s.get(t.start..t.end).unwrap_or("?")));
        }
        v
    }

    #[test]
    fn is_keyword_matches_the_list() {
        for k in KEYWORDS {
            assert!(is_keyword(k));
        }
        for w in ["", "i", "iff", "If", "defs", "privat", "x"] {
            assert!(!is_keyword(w));
        }
    }

    #[test]
    fn words_refs_numbers() {
        use Tok::*;
        assert_eq!(
            kinds("foo-bar foo- $X-1 0.a 1.5.2 é★"),
            vec![
                (Word, "foo-bar"),
                (Word, "foo-"),
                (Ref, "$X"),
                (Minus, "-"),
                (Number, "1"),
                (Number, "0"),
                (Dot, "."),
                (Word, "a"),
                (Number, "1.5"),
                (Dot, "."),
                (Number, "2"),
                (Word, "é★"),
            ]
        );
    }

    #[test]
    fn operators() {
        use Tok::*;
        let got: Vec<Tok> =
            kinds("=> ~> ~ = =~ !~ == != <= >= < > && || ++ + - * / ! . , ? ( ) [ ] { }")
                .into_iter()
                .map(|(k, _)| k)
                .collect();
        assert_eq!(
            got,
            vec![
                Arrow, MergeArrow, Tilde, Assign, MatchOp, NotMatchOp, EqEq, Ne, Le, Ge, Lt, Gt,
                AndAnd, OrOr, PlusPlus, Plus, Minus, Star, Slash, Bang, Dot, Comma, Question,
                LParen, RParen, LBracket, RBracket, LBrace, RBrace
            ]
        );
    }

    #[test]
    fn newlines_and_comments_merge() {
        use Tok::*;
        assert_eq!(
            kinds("a // c\n\n  // d\n b\r\nc"),
            vec![
                (Word, "a"),
                (Newline, "\n\n  // d\n "),
                (Word, "b"),
                (Newline, "\r\n"),
                (Word, "c")
            ]
        );
    }

    #[test]
    fn a_carriage_return_alone_is_an_error() {
        use Tok::*;
        assert_eq!(
            kinds("a // c\rb\r\n"),
            vec![(Word, "a"), (Error, "\r"), (Word, "b"), (Newline, "\r\n")]
        );
    }

    #[test]
    fn quotes() {
        use Tok::*;
        assert_eq!(
            kinds(r"'a\'b' 'x"),
            vec![(SQuoted, r"'a\'b'"), (SQuoteOpen, "'"), (Word, "x")]
        );
        assert_eq!(unescape(r"a\'b\\c\n\t\$\d"), "a'b\\c\n\t$\\d");
    }

    #[test]
    fn unicode_space_is_not_a_word() {
        use Tok::*;
        assert_eq!(
            kinds("a\u{a0}b"),
            vec![(Word, "a"), (Error, "\u{a0}"), (Word, "b")]
        );
    }

    #[test]
    fn bare_literals_and_identifiers() {
        for s in [
            "simple123",
            "entry-1",
            "foo-bar",
            "_x",
            "é★",
            "a-b-c",
            "Ünïcode",
            "a-",
            "a--b",
        ] {
            assert!(is_bare_literal(s), "{s}");
        }
        for s in [
            "", "if", "true", "false", "then", "else", "import", "def", "private", "a b", "-a",
            "1a", "12", "a.b", "'a'", "a\n", " a", "$a", "a\u{a0}",
        ] {
            assert!(!is_bare_literal(s), "{s:?}");
        }
        for s in ["X", "simple123", "_x", "Ünïcode", "entry★1"] {
            assert!(is_identifier(s), "{s}");
        }
        for s in ["", "entry-1", "if", "true", "1a", "a.b", "a b"] {
            assert!(!is_identifier(s), "{s:?}");
        }
    }

    /// The hand-written ranges of [`is_format_character`] are exactly the characters the
    /// lexer's `\p{Cf}` excludes from names: over every character from U+0080, `a` followed
    /// by it is one name unless it is white space, a control or a format character.
    #[test]
    fn format_characters_match_the_lexer() {
        for c in ('\u{80}'..=char::MAX).filter(|c| !c.is_whitespace() && !c.is_control()) {
            let name = format!("a{c}");
            assert_eq!(
                is_identifier(&name),
                !is_format_character(c),
                "U+{:04X}",
                u32::from(c)
            );
        }
    }
}
