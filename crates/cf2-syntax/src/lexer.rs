//! The lexer.
//!
//! Tokens are recognised by hand ([`lex_at`]: one `match` on the first byte, then a loop
//! over the bytes of the token), one token at a time, on demand: the parser drives the
//! lexer, because what some characters mean depends on where they stand.
//! A `/` where a value is expected starts a regular expression, elsewhere it divides; the
//! body of a `"..."` string or of a `/.../` regular expression is scanned by hand, and each
//! `${...}` interpolation inside it is parsed as ordinary tokens before the scan resumes.
//!
//! Lexical rules (they are part of the language definition):
//! - spaces, tabs and `\r` separate tokens; `//` starts a comment that runs to the end of
//!   the line; a newline is a token (statements end at newlines, see the parser);
//! - a word is `[A-Za-z_]` or any non-ASCII character other than white space, control
//!   characters, U+200B and U+FEFF, followed by such characters, digits or `-`s
//!   (`entry-1`, `a--b`, `a-`: Appendix A's `Literal` pattern). Such a word is a bare
//!   literal where a value is expected; names (resources, functions, macro parameters,
//!   selectors, references) cannot contain `-`;
//! - `$name` is a reference (`$X-1` is `$X` minus 1);
//! - a number is `[0-9]+(\.[0-9]+)?`; a minus sign is an operator;
//! - `'...'` is a literal, `"..."` a string; both may span lines; in both, `\\`, `\'`,
//!   `\"`, `\n`, `\t` and `\$` are escapes, and any other backslash is kept as written.
//!
//! (These rules were first written as a `logos` state machine; the tests compare this lexer
//! with it, kept there as the reference, at every position of generated texts.)

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

fn is_one_word(s: &str) -> bool {
    let t = lex_at(s, 0);
    t.kind == Tok::Word && t.start == 0 && t.end == s.len()
}

/// The kinds of token. `Eof` and `Error` stand for the end of the text and for a character
/// that starts no token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    /// One or more line ends, with the blank space and comments between them
    /// (`\n([ \t\r\n]|//[^\n]*)*`).
    Newline,
    /// A word: a word character other than a digit or `-`, then word characters.
    Word,
    /// `$` and a name: a word without `-`.
    Ref,
    /// A `$` not followed by a name.
    Dollar,
    /// `[0-9]+(\.[0-9]+)?`
    Number,
    /// A complete `'...'` (`'([^'\\]|\\.)*'`, line ends included).
    SQuoted,
    /// A `'` that is never closed.
    SQuoteOpen,
    /// The opening `"` of a string; the body is scanned by [`Lexer::scan_string`].
    DQuote,
    Arrow,
    MergeArrow,
    Tilde,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Assign,
    MatchOp,
    NotMatchOp,
    EqEq,
    Ne,
    Le,
    Ge,
    Lt,
    Gt,
    AndAnd,
    OrOr,
    PlusPlus,
    Plus,
    Minus,
    Star,
    /// Division, or the start of a regular expression where a value is expected.
    Slash,
    Bang,
    Dot,
    Comma,
    Question,
    /// The end of the text.
    Eof,
    /// A character that starts no token (the token is that one character).
    Error,
}

/// A token: its kind and its byte range in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub start: usize,
    pub end: usize,
}

/// True if the non-ASCII character `c` is a word character: anything but white space,
/// control characters, U+200B and U+FEFF.
#[inline]
fn is_word_char_non_ascii(c: char) -> bool {
    !c.is_whitespace() && !c.is_control() && c != '\u{200B}' && c != '\u{FEFF}'
}

/// For each byte: [`WORD`] if it is an ASCII word character other than `-`, [`DASH`] if it
/// is `-`.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] = WORD;
        } else if c == b'-' {
            t[b] = DASH;
        }
        b += 1;
    }
    t
};
const WORD: u8 = 1;
const DASH: u8 = 2;

/// Where the word characters from byte `i` on end; `dash` admits `-`.
#[inline]
fn word_end(src: &str, mut i: usize, dash: bool) -> usize {
    let bytes = src.as_bytes();
    let accept = if dash { WORD | DASH } else { WORD };
    while let Some(&b) = bytes.get(i) {
        if CLASS[usize::from(b)] & accept != 0 {
            i += 1;
        } else if b >= 0x80 {
            match src.get(i..).and_then(|r| r.chars().next()) {
                Some(c) if is_word_char_non_ascii(c) => i += c.len_utf8(),
                _ => break,
            }
        } else {
            break;
        }
    }
    i
}

/// If a word starts at byte `i` (a word character that is not a digit or `-`), where its
/// first character ends.
#[inline]
fn word_start(src: &str, i: usize) -> Option<usize> {
    let b = *src.as_bytes().get(i)?;
    if b.is_ascii_alphabetic() || b == b'_' {
        return Some(i + 1);
    }
    if b < 0x80 {
        return None;
    }
    let c = src.get(i..)?.chars().next()?;
    is_word_char_non_ascii(c).then(|| i + c.len_utf8())
}

/// Where the line that byte `i` is on ends (the offset of its `\n`, or the end of the text).
#[inline]
fn line_end(bytes: &[u8], i: usize) -> usize {
    bytes
        .get(i..)
        .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
        .map_or(bytes.len(), |p| i + p)
}

/// Recognises one token of `src` starting at (or after blank space and comments at) byte
/// `at`. The end of the text, or an `at` that is not a character boundary, gives `Eof`.
pub(crate) fn lex_at(src: &str, at: usize) -> Token {
    let bytes = src.as_bytes();
    let len = bytes.len();
    let eof = Token {
        kind: Tok::Eof,
        start: len,
        end: len,
    };
    if !src.is_char_boundary(at) {
        return eof;
    }
    let mut i = at;
    // Blank space and comments.
    loop {
        match bytes.get(i) {
            Some(b' ' | b'\t' | b'\r') => i += 1,
            Some(b'/') if bytes.get(i + 1) == Some(&b'/') => i = line_end(bytes, i + 2),
            _ => break,
        }
    }
    let Some(&b) = bytes.get(i) else {
        return eof;
    };
    let start = i;
    let next = bytes.get(i + 1).copied();
    let (kind, end) = match b {
        b'\n' => {
            let mut j = i + 1;
            loop {
                match bytes.get(j) {
                    Some(b' ' | b'\t' | b'\r' | b'\n') => j += 1,
                    Some(b'/') if bytes.get(j + 1) == Some(&b'/') => j = line_end(bytes, j + 2),
                    _ => break,
                }
            }
            (Tok::Newline, j)
        }
        b'A'..=b'Z' | b'a'..=b'z' | b'_' => (Tok::Word, word_end(src, i + 1, true)),
        b'0'..=b'9' => {
            let digits = |mut j: usize| {
                while bytes.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
                j
            };
            let j = digits(i + 1);
            if bytes.get(j) == Some(&b'.') && bytes.get(j + 1).is_some_and(u8::is_ascii_digit) {
                (Tok::Number, digits(j + 2))
            } else {
                (Tok::Number, j)
            }
        }
        b'$' => match word_start(src, i + 1) {
            Some(j) => (Tok::Ref, word_end(src, j, false)),
            None => (Tok::Dollar, i + 1),
        },
        b'\'' => {
            let mut j = i + 1;
            loop {
                match bytes.get(j) {
                    Some(b'\'') => break (Tok::SQuoted, j + 1),
                    // An escaped character: any byte after the backslash (a character's
                    // continuation bytes are never `'` or `\`).
                    Some(b'\\') if j + 1 < len => j += 2,
                    Some(b'\\') | None => break (Tok::SQuoteOpen, i + 1),
                    Some(_) => j += 1,
                }
            }
        }
        b'"' => (Tok::DQuote, i + 1),
        b'=' => match next {
            Some(b'>') => (Tok::Arrow, i + 2),
            Some(b'~') => (Tok::MatchOp, i + 2),
            Some(b'=') => (Tok::EqEq, i + 2),
            _ => (Tok::Assign, i + 1),
        },
        b'~' => match next {
            Some(b'>') => (Tok::MergeArrow, i + 2),
            _ => (Tok::Tilde, i + 1),
        },
        b'!' => match next {
            Some(b'~') => (Tok::NotMatchOp, i + 2),
            Some(b'=') => (Tok::Ne, i + 2),
            _ => (Tok::Bang, i + 1),
        },
        b'<' => match next {
            Some(b'=') => (Tok::Le, i + 2),
            _ => (Tok::Lt, i + 1),
        },
        b'>' => match next {
            Some(b'=') => (Tok::Ge, i + 2),
            _ => (Tok::Gt, i + 1),
        },
        b'&' if next == Some(b'&') => (Tok::AndAnd, i + 2),
        b'|' if next == Some(b'|') => (Tok::OrOr, i + 2),
        b'+' => match next {
            Some(b'+') => (Tok::PlusPlus, i + 2),
            _ => (Tok::Plus, i + 1),
        },
        b'-' => (Tok::Minus, i + 1),
        b'*' => (Tok::Star, i + 1),
        b'/' => (Tok::Slash, i + 1),
        b'.' => (Tok::Dot, i + 1),
        b',' => (Tok::Comma, i + 1),
        b'?' => (Tok::Question, i + 1),
        b'(' => (Tok::LParen, i + 1),
        b')' => (Tok::RParen, i + 1),
        b'[' => (Tok::LBracket, i + 1),
        b']' => (Tok::RBracket, i + 1),
        b'{' => (Tok::LBrace, i + 1),
        b'}' => (Tok::RBrace, i + 1),
        0x80.. => match word_start(src, i) {
            Some(j) => (Tok::Word, word_end(src, j, true)),
            // One whole character.
            None => {
                let width = src
                    .get(i..)
                    .and_then(|r| r.chars().next())
                    .map_or(1, char::len_utf8);
                (Tok::Error, (i + width).min(len))
            }
        },
        _ => (Tok::Error, i + 1),
    };
    Token { kind, start, end }
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

/// How many tokens ahead the lexer keeps (a power of two). The parser looks at most three
/// tokens ahead (a line end is one token however many blank and comment lines it spans);
/// deeper look-ahead still works, by lexing again.
const AHEAD: usize = 4;

/// The lazily driven lexer: a position in the text and a small ring of tokens already
/// recognised ahead of it.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    /// Just after the last consumed token (or where lexing was reset to).
    pos: usize,
    /// The tokens recognised ahead are `ring[(head + k) % AHEAD]` for `k < len`.
    ring: [Token; AHEAD],
    head: usize,
    len: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str, start: usize) -> Lexer<'a> {
        let eof = Token {
            kind: Tok::Eof,
            start: src.len(),
            end: src.len(),
        };
        Lexer {
            src,
            pos: start.min(src.len()),
            ring: [eof; AHEAD],
            head: 0,
            len: 0,
        }
    }

    pub fn src(&self) -> &'a str {
        self.src
    }

    /// The `n`th token ahead (0 is the next one), newlines included.
    #[inline]
    pub fn peek_nth(&mut self, n: usize) -> Token {
        if n < self.len {
            self.ring[(self.head + n) % AHEAD]
        } else {
            self.fill(n)
        }
    }

    /// Lexes tokens ahead until the `n`th is known, and returns it (keeping at most
    /// [`AHEAD`] of them).
    #[inline(never)]
    fn fill(&mut self, n: usize) -> Token {
        let mut at = match self.len {
            0 => self.pos,
            k => self.ring[(self.head + k - 1) % AHEAD].end,
        };
        let mut k = self.len;
        loop {
            let t = lex_at(self.src, at);
            if k < AHEAD {
                self.ring[(self.head + k) % AHEAD] = t;
                self.len = k + 1;
            }
            if k >= n {
                return t;
            }
            at = t.end;
            k += 1;
        }
    }

    /// Consumes and returns the next token.
    #[inline]
    pub fn next_token(&mut self) -> Token {
        let t = self.peek_nth(0);
        self.head = (self.head + 1) % AHEAD;
        self.len -= 1;
        self.pos = t.end;
        t
    }

    /// Where the first token not yet consumed starts (or the scan position).
    pub fn resume_pos(&self) -> usize {
        if self.len > 0 {
            self.ring[self.head].start
        } else {
            self.pos
        }
    }

    /// Continues lexing at byte `pos`, forgetting any token recognised ahead.
    pub fn reset(&mut self, pos: usize) {
        self.len = 0;
        self.pos = pos.min(self.src.len());
    }

    /// Scans the body of a `"..."` string from the scan position (just after the opening
    /// quote or after an interpolation), appending text with escapes processed to `out`.
    pub fn scan_string(&mut self, out: &mut String) -> Stop {
        self.len = 0;
        let src = self.src;
        let bytes = src.as_bytes();
        let mut i = self.pos;
        // Text from `run` to `i` is copied as it is.
        let mut run = i;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'"' => {
                    out.push_str(src.get(run..i).unwrap_or(""));
                    self.pos = i + 1;
                    return Stop::Closed;
                }
                b'\\' => {
                    out.push_str(src.get(run..i).unwrap_or(""));
                    match src.get(i + 1..).and_then(|r| r.chars().next()) {
                        Some(e) => {
                            push_escape(out, e);
                            i += 1 + e.len_utf8();
                            run = i;
                        }
                        None => {
                            out.push('\\');
                            run = bytes.len();
                            break;
                        }
                    }
                }
                b'$' if bytes.get(i + 1) == Some(&b'{') => {
                    out.push_str(src.get(run..i).unwrap_or(""));
                    self.pos = i + 2;
                    return Stop::Interp(i);
                }
                _ => i += 1,
            }
        }
        out.push_str(src.get(run..).unwrap_or(""));
        self.pos = src.len();
        Stop::Eof
    }

    /// Scans the body of a `/.../` regular expression from the scan position, appending the
    /// pattern text to `out`: verbatim, except that `\/` becomes `/`. `\$` stays `\$` and
    /// does not start an interpolation.
    pub fn scan_regex(&mut self, out: &mut String) -> Stop {
        self.len = 0;
        let src = self.src;
        let bytes = src.as_bytes();
        let mut i = self.pos;
        // Text from `run` to `i` is copied as it is.
        let mut run = i;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'/' => {
                    out.push_str(src.get(run..i).unwrap_or(""));
                    self.pos = i + 1;
                    return Stop::Closed;
                }
                b'\n' => {
                    out.push_str(src.get(run..i).unwrap_or(""));
                    self.pos = i;
                    return Stop::LineEnd;
                }
                b'\\' => match bytes.get(i + 1) {
                    Some(b'/') => {
                        out.push_str(src.get(run..i).unwrap_or(""));
                        out.push('/');
                        i += 2;
                        run = i;
                    }
                    // `\` before a line end or the end of the text stays; anything else
                    // escaped is kept with its backslash (and is not special: `\$`, `\\`).
                    Some(b'\n') | None => i += 1,
                    Some(_) => {
                        let width = src
                            .get(i + 1..)
                            .and_then(|r| r.chars().next())
                            .map_or(1, char::len_utf8);
                        i += 1 + width;
                    }
                },
                b'$' if bytes.get(i + 1) == Some(&b'{') => {
                    out.push_str(src.get(run..i).unwrap_or(""));
                    self.pos = i + 2;
                    return Stop::Interp(i);
                }
                _ => i += 1,
            }
        }
        out.push_str(src.get(run..).unwrap_or(""));
        self.pos = src.len();
        Stop::Eof
    }

    /// Error recovery inside `${...}`: skips from the first unconsumed token to just after
    /// the next `}`, or up to (not over) the delimiter that closes the enclosing string or
    /// regex, or a line end in a regex.
    pub fn skip_interp(&mut self, regex: bool) {
        let from = self.resume_pos();
        self.reset(from);
        let bytes = self.src.as_bytes();
        let mut i = self.pos;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'}' => {
                    self.pos = i + 1;
                    return;
                }
                b'"' if !regex => {
                    self.pos = i;
                    return;
                }
                b'/' | b'\n' if regex => {
                    self.pos = i;
                    return;
                }
                b'\\' if !regex => {
                    // The escaped character is skipped (its continuation bytes, if any,
                    // are none of the bytes looked for).
                    i += 2;
                }
                _ => i += 1,
            }
        }
        self.pos = self.src.len();
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
    if !src.is_char_boundary(from) {
        return None;
    }
    let bytes = src.as_bytes();
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
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
    let Some(first) = body.bytes().position(|b| b == b'\\') else {
        return body.to_owned();
    };
    let mut out = String::with_capacity(body.len());
    out.push_str(body.get(..first).unwrap_or(""));
    let mut chars = body.get(first..).unwrap_or("").chars();
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
                (Newline, "\n"),
                (Word, "c")
            ]
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

    /// The lexer these rules were first written as (a `logos` state machine), kept as the
    /// reference for [`lex_at`].
    mod reference {
        use logos::Logos;

        #[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
        #[logos(skip r"[ \t\r]+")]
        #[logos(skip(r"//[^\n]*", allow_greedy = true))]
        pub enum RTok {
            #[regex(r"\n([ \t\r\n]|//[^\n]*)*", allow_greedy = true)]
            Newline,
            #[regex(
                r"[A-Za-z_\x{80}-\x{10FFFF}&&[^\s\p{Cc}\x{200B}\x{FEFF}]][A-Za-z0-9_\-\x{80}-\x{10FFFF}&&[^\s\p{Cc}\x{200B}\x{FEFF}]]*"
            )]
            Word,
            #[regex(
                r"\$[A-Za-z_\x{80}-\x{10FFFF}&&[^\s\p{Cc}\x{200B}\x{FEFF}]][A-Za-z0-9_\x{80}-\x{10FFFF}&&[^\s\p{Cc}\x{200B}\x{FEFF}]]*"
            )]
            Ref,
            #[token("$")]
            Dollar,
            #[regex(r"[0-9]+(\.[0-9]+)?")]
            Number,
            #[regex(r"'([^'\\]|\\[\x00-\x{10FFFF}])*'")]
            SQuoted,
            #[token("'")]
            SQuoteOpen,
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
        }

        /// The token at `at` as the old lexer recognised it: kind (by name), start, end.
        pub fn lex_at(src: &str, at: usize) -> (String, usize, usize) {
            let len = src.len();
            let Some(rest) = src.get(at..) else {
                return ("Eof".into(), len, len);
            };
            let mut lx = RTok::lexer(rest);
            match lx.next() {
                None => ("Eof".into(), len, len),
                Some(Ok(kind)) => {
                    let r = lx.span();
                    (format!("{kind:?}"), at + r.start, at + r.end)
                }
                Some(Err(())) => {
                    let start = at + lx.span().start;
                    let width = src
                        .get(start..)
                        .and_then(|s| s.chars().next())
                        .map_or(1, char::len_utf8);
                    ("Error".into(), start, (start + width).min(len))
                }
            }
        }
    }

    /// Compares [`lex_at`] with the reference at every byte offset of `s` (character
    /// boundaries or not).
    fn same_as_reference(s: &str) -> Result<(), String> {
        for at in 0..=s.len() + 1 {
            let t = lex_at(s, at);
            let got = (format!("{:?}", t.kind), t.start, t.end);
            let want = reference::lex_at(s, at);
            if got != want {
                return Err(format!("{s:?} at {at}: got {got:?}, want {want:?}"));
            }
        }
        Ok(())
    }

    #[test]
    fn the_reference_agrees_on_samples() {
        for s in [
            "",
            "a",
            "a-b- -c $a-b $ $1 $é $\u{a0} 1.5.x 1. .5 12a",
            "'a\\'b' 'x 'a\\",
            "'\\é' '\n' '\\\n'",
            "//c\n// d\n\n  //\n x // y",
            "\n /",
            "\n //",
            "=> =~ == = ~> ~ !~ != ! <= < >= > && & || | ++ + - * / . , ? ( ) [ ] { }",
            "# ; : @ % ^ ` \\ \u{b} \u{c} \u{7f} \u{85} \u{a0} \u{200b} \u{feff} \u{2028} \u{3000}",
            "é★ a\u{200b}b x\u{85}y \u{10ffff}z \u{e000}",
            "\"a${b}\" /x/",
        ] {
            same_as_reference(s).unwrap();
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

        /// Token soups: pieces that start, end or almost make tokens, glued together.
        #[test]
        fn the_reference_agrees_on_token_soups(pieces in proptest::collection::vec(
            proptest::sample::select(vec![
                " ", "\t", "\r", "\n", "/", "//", "a", "Z", "_", "-", "0", "9", ".", "$",
                "'", "\"", "\\", "=", ">", "~", "<", "!", "&", "|", "+", "*", ",", "?", "(",
                ")", "[", "]", "{", "}", "é", "★", "\u{a0}", "\u{200b}", "\u{feff}", "\u{85}",
                "\u{2028}", "\u{3000}", "\u{7f}", "\u{b}", "#", ";", ":", "\u{10ffff}", "if",
                "x-1", "1.5", "${", "\u{1}",
            ]),
            0..24,
        )) {
            let s: String = pieces.concat();
            if let Err(e) = same_as_reference(&s) {
                return Err(proptest::test_runner::TestCaseError::fail(e));
            }
        }

        /// Any characters at all.
        #[test]
        fn the_reference_agrees_on_any_text(s in "\\PC{0,16}|[\\x00-\\x{10FFFF}]{0,8}") {
            if let Err(e) = same_as_reference(&s) {
                return Err(proptest::test_runner::TestCaseError::fail(e));
            }
        }
    }
}
