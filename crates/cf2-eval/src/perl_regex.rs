//! Perl regular expressions (reference §3.1: "the full Perl regular expression syntax") on
//! the engines at hand: each pattern is rewritten into the engine's syntax where the two
//! differ ([`perl_to_engine`]), compiled with bounded cost, and matched by [`PerlRegex`].

use cf2_syntax::Diagnostic;

/// Why `pattern` is no regex, as [`build_regex`] found.
pub(crate) fn invalid_regex(pattern: &str, e: &fancy_regex::Error) -> Diagnostic {
    let too_complex = matches!(
        e,
        fancy_regex::Error::CompileError(c)
            if matches!(**c, fancy_regex::CompileError::PatternTooComplex)
    );
    // Shortened like other quoted text: a pattern may be long.
    let shown = crate::val::quoted_preview(pattern, '/');
    if too_complex {
        return Diagnostic::error(format!(
            "regular expression {shown} is too complex: compiled, it would exceed {REGEX_MAX_PROGRAM} instructions"
        ))
        .hint("subroutine calls (`\\g0`, `\\g<name>`, `(?R)`) are expanded where they stand, so each one can multiply the size of the pattern; simplify it");
    }
    match e {
        // The engine counts bytes; people count characters.
        fancy_regex::Error::ParseError(at, kind) => {
            let place = match pattern.get(..*at) {
                Some(before) if *at < pattern.len() => {
                    format!("at character {} of the pattern", before.chars().count() + 1)
                }
                _ => "at the end of the pattern".to_string(),
            };
            Diagnostic::error(format!(
                "invalid regular expression {shown}: {kind}, {place}"
            ))
        }
        other => Diagnostic::error(format!(
            "invalid regular expression {shown}: {}",
            engine_reason(other)
        )),
    }
}

/// What the engine found wrong with a pattern its parser refused. Its error says only
/// "error parsing pattern 0"; the reason is at the end of the error it wraps, after a
/// drawing of the pattern in the engine's syntax, which is not the pattern as written and
/// so is left out.
fn engine_reason(e: &fancy_regex::Error) -> String {
    let fancy_regex::Error::CompileError(c) = e else {
        return e.to_string();
    };
    let fancy_regex::CompileError::InnerError(inner) = &**c else {
        return e.to_string();
    };
    let mut deepest: &dyn std::error::Error = inner;
    // Sources nest a few levels; the bound only guards the walk.
    for _ in 0..16 {
        match deepest.source() {
            Some(s) => deepest = s,
            None => break,
        }
    }
    let text = deepest.to_string();
    match text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
    {
        Some(reason) => reason.to_string(),
        // Not a parse error (a limit, say): its own words, which are short.
        None if !text.contains('\n') => text,
        None => e.to_string(),
    }
}

/// A compiled Perl pattern.
///
/// Perl's `$` matches at the end of the text or before a newline that ends it. The engine
/// can say that only with a look-ahead, which moves the whole pattern onto its backtracking
/// engine, where `$Addr !~ /\d+\.\d+\.\d+\.\d+$/` on a long value or `/^(\w+\s?)*$/` on
/// 70 characters runs out of steps. On a text that does not end with a newline, though,
/// Perl's `$` is simply the end of the text, which is the engine's own `$`: a pattern
/// without other look-arounds or back-references then runs on the linear-time engine.
/// So a pattern with a `$` is compiled twice, and each text is matched by the form that
/// gives Perl's answer for it.
#[derive(Debug)]
pub struct PerlRegex {
    /// Right for every text.
    any_text: fancy_regex::Regex,
    /// Right for a text that does not end with a newline; `None` when it would be
    /// `any_text` again (no `$` outside a character class).
    no_final_newline: Option<fancy_regex::Regex>,
}

impl PerlRegex {
    /// The first match in `text` and its groups, or `None`; an error when the backtracking
    /// engine runs out of steps.
    pub(crate) fn captures<'t>(
        &self,
        text: &'t str,
    ) -> Result<Option<fancy_regex::Captures<'t, str>>, fancy_regex::Error> {
        match &self.no_final_newline {
            Some(re) if !text.ends_with('\n') => re.captures(text),
            _ => self.any_text.captures(text),
        }
    }

    /// Whether matching `text` takes the look-ahead form: `text` ends with a newline, where
    /// the pattern's `$` or `\Z` may match too.
    pub(crate) fn looks_ahead_in(&self, text: &str) -> bool {
        self.no_final_newline.is_some() && text.ends_with('\n')
    }

    /// The number of groups, the whole match (group 0) included.
    pub(crate) fn captures_len(&self) -> usize {
        self.any_text.captures_len()
    }

    /// The groups' names, `None` for an unnamed one, by number from group 0.
    pub(crate) fn capture_names(&self) -> fancy_regex::CaptureNames<'_> {
        self.any_text.capture_names()
    }
}

/// Why matching against the pattern `shown` (as the message shows it) stopped: the
/// backtracking engine ran out of steps ([`BACKTRACK_LIMIT`]) or of stack; `looked_ahead`
/// as [`PerlRegex::looks_ahead_in`] said.
pub(crate) fn match_given_up(
    shown: &str,
    looked_ahead: bool,
    e: &fancy_regex::Error,
) -> Diagnostic {
    let d = match e {
        fancy_regex::Error::RuntimeError(fancy_regex::RuntimeError::BacktrackLimitExceeded) => {
            Diagnostic::error(format!(
                "matching {shown} was given up after {BACKTRACK_LIMIT} backtracking steps"
            ))
            .hint("a repetition of a repetition, such as `(\\w+\\s?)*`, can split a text in exponentially many ways; make each piece match in one way only")
        }
        other => Diagnostic::error(format!("{shown} could not be matched: {other}")),
    };
    if looked_ahead {
        // The one case where a pattern without look-arounds needs the backtracking engine.
        return d.note("the text ends with a newline, where Perl's `$` may also match; only the backtracking engine can look for that (`\\z` matches at the very end alone, and needs no backtracking)");
    }
    d
}

/// The most backtracking steps one match may take: a pattern that would need more is
/// refused at the match (an error, never a wrong answer).
const BACKTRACK_LIMIT: usize = 1_000_000;

/// Compiles a regex with bounded cost: matching backtracks at most a million steps, and the
/// compiled program is capped, because subroutine calls (`\g0`, `(?R)`, `\g<name>`) are
/// expanded at compile time and a few of them in a short pattern would otherwise take
/// exponential time and memory (found by fuzzing: `/x|w\g0\g0\g0/` ran for minutes).
pub(crate) fn build_regex(pattern: &str) -> Result<PerlRegex, fancy_regex::Error> {
    group_numbers_bounded(pattern)?;
    let general = perl_to_engine(pattern, Dollar::PerlEnd)?;
    let any_text = compile(pattern, &general)?;
    let at_end = perl_to_engine(pattern, Dollar::TextEnd)?;
    // Were the simpler form refused where the general one compiled, the general one would
    // still give the right answer.
    let no_final_newline = if at_end.text != general.text {
        compile(pattern, &at_end).ok()
    } else {
        None
    };
    Ok(PerlRegex {
        any_text,
        no_final_newline,
    })
}

/// Compiles `engine`, the engine's form of `pattern`; an error is reported against the
/// pattern as written: the engine's error for the pattern itself where it has one that is
/// not about a form the engine's form rewrote (`(?n)`), else the error for the engine's
/// form, its position moved to where the pattern has what is there.
fn compile(
    pattern: &str,
    engine: &Translated<'_>,
) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    let build = |p: &str| {
        // The engine's rewrites (of `a*b*?a*`, `(b+?)*`, `(a?)+` with `\1`, …) change
        // which text and groups match, and sometimes whether a pattern matches at all,
        // against Perl's backtracking order (fancy-regex 0.20.2): cf2 runs the pattern as
        // written. The backtracking limit stops what they would have kept from running
        // long.
        fancy_regex::RegexBuilder::new(p)
            .backtrack_limit(BACKTRACK_LIMIT)
            .max_prog_size(REGEX_MAX_PROGRAM)
            .optimize(false)
            .build()
    };
    match build(&engine.text) {
        Err(e) if engine.text != pattern => match build(pattern).err() {
            Some(raw) if !about_rewritten_flags(pattern, &raw) => Err(raw),
            _ => Err(match e {
                fancy_regex::Error::ParseError(at, kind) => {
                    fancy_regex::Error::ParseError(engine.position_in_pattern(at), kind)
                }
                other => other,
            }),
        },
        built => built,
    }
}

/// Whether `e`, the engine's error for `pattern` itself, is its refusal of modifiers it
/// does not know that [`perl_to_engine`] rewrites (`(?n)`, `(?a)`, `(?^...)`): it says
/// nothing of the rest of the pattern.
fn about_rewritten_flags(pattern: &str, e: &fancy_regex::Error) -> bool {
    // The engine places an unknown modifier just after the `?` of its group.
    let fancy_regex::Error::ParseError(at, fancy_regex::ParseError::UnknownFlag(_)) = e else {
        return false;
    };
    let group = at.checked_sub(1).and_then(|q| pattern.get(q..));
    group.is_some_and(|g| flag_group(&mut Chars::new(g)).is_some())
}

/// What a `$` (not escaped, not in a character class) becomes in the engine's form.
#[derive(Clone, Copy, PartialEq)]
enum Dollar {
    /// Perl's: the end of the text or before a newline that ends it (a look-ahead).
    PerlEnd,
    /// The end of the text only, the engine's own `$`: Perl's on a text that does not end
    /// with a newline.
    TextEnd,
}

impl Dollar {
    /// Perl's `\Z` (`$` outside `(?m)`) in the engine's syntax.
    fn end_of_text(self) -> &'static str {
        match self {
            Dollar::PerlEnd => "(?:\\z|(?=\\n\\z))",
            Dollar::TextEnd => "\\z",
        }
    }
}

/// The highest group number a back-reference or subroutine call may name.
const MAX_GROUP_NUMBER: u64 = 1000;

/// Refuses a reference to a group numbered beyond any pattern's (`\g34881474191032`,
/// `\k<99999999>`, `(?99999999)`): the engine sizes a table by the number before it checks
/// that the group exists, so such a pattern made the compile abort for want of memory
/// (found by fuzzing). Perl refuses a reference to a group that does not exist too.
/// `\1234` is left alone: with fewer groups it is the octal `\123` and a `4`, which
/// [`perl_to_engine`] writes as characters.
fn group_numbers_bounded(pattern: &str) -> Result<(), fancy_regex::Error> {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let start = i;
        // Where the digits of a group number would start, after `\g{-`, `\k<`, `(?+`...
        let digits_at = match (b, bytes.get(i + 1)) {
            (b'\\', Some(b'\\')) => {
                i += 2;
                continue;
            }
            (b'\\', Some(b'g' | b'k')) => {
                let mut j = i + 2;
                while matches!(bytes.get(j), Some(b'{' | b'<' | b'\'' | b'-' | b'+')) {
                    j += 1;
                }
                Some(j)
            }
            (b'(', Some(b'?')) => {
                let mut j = i + 2;
                while matches!(bytes.get(j), Some(b'-' | b'+' | b'&')) {
                    j += 1;
                }
                Some(j)
            }
            _ => None,
        };
        i += 1;
        let Some(mut j) = digits_at else { continue };
        let mut number: u64 = 0;
        while let Some(d) = bytes.get(j).filter(|d| d.is_ascii_digit()) {
            number = number
                .saturating_mul(10)
                .saturating_add(u64::from(d - b'0'));
            j += 1;
        }
        if number > MAX_GROUP_NUMBER {
            let form = pattern.get(start..j).unwrap_or_default().to_string();
            return Err(fancy_regex::Error::ParseError(
                start,
                fancy_regex::ParseError::InvalidEscape(format!(
                    "{form} (a reference to group {number}: no pattern has that many groups)"
                )),
            ));
        }
    }
    Ok(())
}

/// The members of Perl's POSIX class `name` (`alpha` for `[:alpha:]`) in a Unicode text
/// (`XPosixAlpha`: `ж` is alphabetic), as the contents of a character class of Unicode
/// properties. The engine's own POSIX classes are ASCII only, which `\w` beside `[:word:]`
/// would contradict. `None` for a name Perl does not know.
fn unicode_posix_set(name: &str) -> Option<&'static str> {
    Some(match name {
        "alpha" => r"\p{Alphabetic}",
        "alnum" => r"\p{Alphabetic}\p{Nd}",
        "digit" => r"\p{Nd}",
        "upper" => r"\p{Uppercase}",
        "lower" => r"\p{Lowercase}",
        "word" => r"\w",
        "space" => r"\s",
        "blank" => r"\p{Zs}\t",
        // Perl's XPosixPunct: punctuation, and the ASCII symbols.
        "punct" => r"\p{P}$+<=>^`|~",
        "cntrl" => r"\p{Cc}",
        "graph" => r"[^\s\p{Cc}\p{Cn}\p{Cs}]",
        "print" => r"[^\s\p{Cc}\p{Cn}\p{Cs}]\p{Zs}",
        "xdigit" => r"0-9A-Fa-f\x{FF10}-\x{FF19}\x{FF21}-\x{FF26}\x{FF41}-\x{FF46}",
        "ascii" => r"\x00-\x7F",
        _ => return None,
    })
}

/// The members of Perl's POSIX class `name` under `(?a)`, and of `\p{PosixNAME}` always
/// (ASCII characters only), as the contents of a character class. Under `(?i)` Perl takes
/// `upper` and `lower` as both cases. `None` for a name Perl does not know.
fn ascii_posix_set(name: &str, i: bool) -> Option<&'static str> {
    Some(match name {
        "alpha" => "A-Za-z",
        "alnum" => "0-9A-Za-z",
        "digit" => "0-9",
        "upper" | "lower" if i => "A-Za-z",
        "upper" => "A-Z",
        "lower" => "a-z",
        "word" => "0-9A-Za-z_",
        "space" => r"\t\n\x0B\x0C\r\x20",
        "blank" => r"\t\x20",
        "punct" => r"\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E",
        "cntrl" => r"\x00-\x1F\x7F",
        "graph" => r"\x21-\x7E",
        "print" => r"\x20-\x7E",
        "xdigit" => "0-9A-Fa-f",
        "ascii" => r"\x00-\x7F",
        _ => return None,
    })
}

/// The POSIX class a Perl property name stands for, matched loosely as Perl does (case,
/// blanks, `-` and `_` ignored, an `Is` before it allowed): `PosixAlpha` is the ASCII
/// `alpha` (`Some((true, "alpha"))`), `XPosixAlpha` the Unicode one, and `ASCII` the
/// ASCII characters. `None` for any other name.
fn posix_property(name: &str) -> Option<(bool, &'static str)> {
    const NAMES: [&str; 13] = [
        "alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space",
        "upper", "word", "xdigit",
    ];
    let loose: String = name
        .chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\n' | '-' | '_'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let loose = loose.strip_prefix("is").unwrap_or(&loose);
    if loose == "ascii" {
        return Some((true, "ascii"));
    }
    let (ascii, class) = match (loose.strip_prefix("xposix"), loose.strip_prefix("posix")) {
        (Some(class), _) => (false, class),
        (None, Some(class)) => (true, class),
        (None, None) => return None,
    };
    NAMES.iter().find(|n| **n == class).map(|n| (ascii, *n))
}

/// The character-set rules in force (Perl's `/d`, `/u`, `/l`, `/a` and `/aa` modifiers).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
enum Charset {
    /// `(?u)`, and `(?d)` and `(?l)`, which are the same on cf2's texts: they are Unicode,
    /// as Perl's strings are under `unicode_strings`, and a locale cf2 would follow is a
    /// UTF-8 one, whose rules are Unicode's.
    #[default]
    Unicode,
    /// `(?a)`: `\d`, `\s`, `\w`, `\b`, `\B` and the POSIX classes mean ASCII characters only.
    Ascii,
    /// `(?aa)`: besides, under `(?i)`, an ASCII character never matches a non-ASCII one.
    AsciiStrict,
}

/// The modifiers in force that the rewriting itself follows (the engine follows `m` and
/// `s`, and `i` and `x` too).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
struct Flags {
    i: bool,
    x: bool,
    /// `(?n)`: `(...)` does not capture.
    n: bool,
    charset: Charset,
}

impl Flags {
    /// Whether an ASCII character and a non-ASCII one never match each other: `(?aai)`.
    fn ascii_fold(self) -> bool {
        self.i && self.charset == Charset::AsciiStrict
    }

    /// These flags changed by the modifiers `spec` of `(?spec)` or `(?spec:` (`^` first
    /// resets them), and the engine's form of `spec` (its own `i`, `m`, `s`, `x`, with the
    /// others left out); or why Perl refuses `spec`.
    fn changed_by(self, spec: &str) -> Result<(Flags, String), String> {
        let (caret, letters) = match spec.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, spec),
        };
        let mut flags = if caret { Flags::default() } else { self };
        let (mut on, mut off) = (String::new(), String::new());
        let mut negated = false;
        // The character-set modifiers given, and how many times `a`.
        let mut sets: Vec<char> = Vec::new();
        for f in letters.chars() {
            match f {
                '-' if caret => {
                    return Err("Perl does not accept `-` after `(?^`".to_string());
                }
                '-' if negated => return Err("`-` may appear only once".to_string()),
                '-' => negated = true,
                'a' | 'd' | 'l' | 'u' if negated => {
                    return Err(format!("Perl does not accept the modifier `{f}` after `-`"));
                }
                'a' | 'd' | 'l' | 'u' => {
                    if let Some(&other) = sets.iter().find(|s| **s != f) {
                        return Err(format!(
                            "the modifiers `{other}` and `{f}` exclude each other"
                        ));
                    }
                    if f == 'a' && sets.len() == 2 {
                        return Err("the modifier `a` may appear at most twice".to_string());
                    }
                    if f != 'a' && !sets.is_empty() {
                        return Err(format!("the modifier `{f}` may appear only once"));
                    }
                    sets.push(f);
                }
                _ => {
                    match f {
                        'i' => flags.i = !negated,
                        'x' => flags.x = !negated,
                        'n' => flags.n = !negated,
                        _ => {}
                    }
                    // `n` and `p` (which Perl ignores) are not the engine's.
                    if matches!(f, 'i' | 'm' | 's' | 'x') {
                        if negated {
                            off.push(f);
                        } else {
                            on.push(f);
                        }
                    }
                }
            }
        }
        flags.charset = match sets.as_slice() {
            [] if caret => Charset::Unicode,
            [] => flags.charset,
            ['a'] => Charset::Ascii,
            ['a', 'a'] => Charset::AsciiStrict,
            _ => Charset::Unicode,
        };
        if caret {
            // `(?^...)` (the form Perl prints a compiled regex in): the flags given, the
            // others off.
            off = "imsx".chars().filter(|f| !on.contains(*f)).collect();
        }
        let mut engine = on;
        if !off.is_empty() {
            engine.push('-');
            engine.push_str(&off);
        }
        Ok((flags, engine))
    }
}

/// What the engine does with the flags set inside a group (by `(?i)`) once the group ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scoping {
    /// It restores those from before the group, as Perl does (`(?:...)`, `(?i:...)`).
    Restores,
    /// It keeps them (a capture group, a look-around, an atomic group): the group's body is
    /// put in `(?:...)` when a flag changes in it, so that the change ends with the group.
    Keeps,
    /// A conditional `(?(1)...|...)`: in Perl too a flag set in it holds after it, through
    /// the group around it.
    PassesOn,
}

/// An open group.
struct Group {
    /// The flags before it, in force again after it.
    outer: Flags,
    /// Where its body starts in the output.
    body_at: usize,
    scoping: Scoping,
    /// Whether its body has been put in `(?:...)` ([`Scoping::Keeps`]).
    wrapped: bool,
    /// For a conditional ([`Scoping::PassesOn`]): the flag changes made in it, given again
    /// after it, as the engine ends them with it (fancy-regex 0.20.2 does) and Perl does not.
    passed_on: String,
}

/// An open character class (the outermost one).
struct Class {
    /// Where its `[` is in the output.
    open_at: usize,
    negated: bool,
    /// The parts of the output that are sets of characters (not characters and ranges),
    /// from where to where, and of which kind.
    sets: Vec<(usize, usize, Set)>,
}

/// What an item of a pattern written into a class is, for case folding.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Set {
    /// Characters, ranges: `(?i)` matches them with every character they fold with (only
    /// those on their side of ASCII under `(?aa)`).
    None,
    /// A set of ASCII characters Perl does not case-fold into non-ASCII ones (`\w` under
    /// `(?a)`, `\p{PosixAlpha}`), whose members the rest of the class cannot change.
    Ascii,
    /// A Unicode property (`\p{Lu}`): under `(?i)`, the characters the engine gives it.
    Property,
}

/// The characters whose simple case folding joins an ASCII letter and a non-ASCII
/// character: `k`, `K` and KELVIN SIGN, `s`, `S` and LATIN SMALL LETTER LONG S. In each
/// three, the two ASCII letters come first.
const ACROSS_ASCII: [char; 6] = ['k', 'K', '\u{212A}', 's', 'S', '\u{17F}'];

/// The engine's form of a character matched as written under `(?aai)`, for one that case
/// folding would match with a character on the other side of ASCII (KELVIN SIGN with `k`).
fn ascii_fold_literal(c: char) -> Option<&'static str> {
    Some(match c {
        'k' | 'K' => "(?-i:[kK])",
        's' | 'S' => "(?-i:[sS])",
        '\u{212A}' => "(?-i:\\x{212A})",
        '\u{17F}' => "(?-i:\\x{17F})",
        _ => return None,
    })
}

/// Which of [`ACROSS_ASCII`] the class `[body]` of the engine's syntax holds, matched
/// without `(?i)` unless `fold`; `None` if it is no class. `body` is a whole class's
/// contents, or (not `whole`) some of its parts, where a `]` or `^` first is the character.
fn class_holds(body: &str, fold: bool, whole: bool) -> Option<[bool; 6]> {
    if body.is_empty() {
        return Some([false; 6]);
    }
    let mut class = String::from(if fold { "(?i)[" } else { "[" });
    if !whole && body.starts_with([']', '^']) {
        class.push('\\');
    }
    class.push_str(body);
    class.push(']');
    let re = fancy_regex::Regex::new(&class).ok()?;
    let mut held = [false; 6];
    for (h, c) in held.iter_mut().zip(ACROSS_ASCII) {
        *h = re.is_match(c.encode_utf8(&mut [0; 4])).ok()?;
    }
    Some(held)
}

/// A word boundary of ASCII word characters (`\b` under `(?a)`), or with `negated` a place
/// that is none (`\B`). The engine's own are Unicode's, and it has no ASCII form in a
/// Unicode pattern.
fn ascii_boundary(negated: bool) -> &'static str {
    if negated {
        "(?-i:(?:(?<=[0-9A-Za-z_])(?=[0-9A-Za-z_])|(?<![0-9A-Za-z_])(?![0-9A-Za-z_])))"
    } else {
        "(?-i:(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])(?=[0-9A-Za-z_])))"
    }
}

/// The characters of a pattern still to read, and how many bytes of it have been read.
#[derive(Clone)]
struct Chars<'p> {
    rest: std::iter::Peekable<std::str::Chars<'p>>,
    read: usize,
}

impl<'p> Chars<'p> {
    fn new(text: &'p str) -> Chars<'p> {
        Chars {
            rest: text.chars().peekable(),
            read: 0,
        }
    }

    fn peek(&mut self) -> Option<&char> {
        self.rest.peek()
    }
}

impl Iterator for Chars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let c = self.rest.next()?;
        self.read += c.len_utf8();
        Some(c)
    }
}

/// A pattern in the engine's syntax ([`perl_to_engine`]).
#[derive(Debug)]
struct Translated<'p> {
    text: std::borrow::Cow<'p, str>,
    /// Where the engine's form of each part of the pattern starts in `text`, and where the
    /// part starts in the pattern: both in increasing order.
    positions: Vec<(usize, usize)>,
    /// The length of the pattern.
    pattern_len: usize,
}

impl Translated<'_> {
    /// The position in the pattern of what is at byte `at` of the engine's form (its end
    /// at its end).
    fn position_in_pattern(&self, at: usize) -> usize {
        if at >= self.text.len() {
            return self.pattern_len;
        }
        let i = self
            .positions
            .partition_point(|(text_at, _)| *text_at <= at);
        match i.checked_sub(1).and_then(|i| self.positions.get(i)) {
            Some((_, pattern_at)) => *pattern_at,
            None => at,
        }
    }
}

/// A Perl pattern (reference §3.1: "the full Perl regular expression syntax") in the
/// engine's syntax, where the two differ in meaning or the engine lacks the form:
/// - `$` (not escaped, not in a character class) becomes what `dollar` says: Perl's, which
///   matches at the end of the text or before a newline that ends it, where the engine's
///   matches only at the very end. No capture group is added.
/// - `\h`, `\H`, `\v`, `\V` are Perl's horizontal and vertical white space (the engine reads
///   `\h` as a hex digit and `\v` as a vertical tab only).
/// - `\N{U+41}`, octal `\0`, `\o{101}`, `\101` (three digits, not a back-reference), and
///   `\Q...\E` (quoted text) become the characters they stand for.
/// - `\g1`, `\g{1}`, `\g{-1}` (relative) and `\g{name}` are back-references, as in Perl (the
///   engine reads `\gN` as a subroutine call).
/// - `(?^...)` (the form Perl prints a compiled regex in) resets the flags.
/// - The modifiers the engine lacks are followed here: `(?n)` makes `(...)` a `(?:...)`;
///   `(?a)` makes `\d \s \w \b \B`, the POSIX classes ASCII sets (`\p{PosixAlpha}` is one
///   always), which `(?i)` does not fold into non-ASCII characters; `(?aa)` with `(?i)`
///   keeps the ASCII and non-ASCII characters that fold together (`k` and KELVIN SIGN)
///   apart; `(?l)`, `(?u)`, `(?d)` are Unicode's rules.
/// - A flag set inside a group ends with the group, as in Perl (the engine keeps it past a
///   capture group, a look-around or an atomic group).
///
/// Anything else is passed through unchanged.
///
/// A Perl form the engine cannot express is an error rather than a different match.
fn perl_to_engine(pattern: &str, dollar: Dollar) -> Result<Translated<'_>, fancy_regex::Error> {
    let unchanged = || Translated {
        text: std::borrow::Cow::Borrowed(pattern),
        positions: Vec::new(),
        pattern_len: pattern.len(),
    };
    if !pattern.contains(['$', '\\', '{']) && !pattern.contains("(?") && !pattern.contains("[:") {
        return Ok(unchanged());
    }
    let mut t = Translator {
        out: String::with_capacity(pattern.len() + 16),
        positions: Vec::new(),
        at: 0,
        dollar,
        failed: None,
        flags: Flags::default(),
        open: Vec::new(),
        groups: 0,
        class_depth: 0,
        class_start: false,
        after_class_set: false,
        class: None,
    };
    let mut chars = Chars::new(pattern);
    loop {
        t.at = chars.read;
        let Some(c) = chars.next() else {
            break;
        };
        t.positions.push((t.out.len(), t.at));
        t.step(c, &mut chars);
    }
    if let Some((at, kind)) = t.failed {
        return Err(fancy_regex::Error::ParseError(at, kind));
    }
    if t.out == pattern {
        return Ok(unchanged());
    }
    Ok(Translated {
        text: std::borrow::Cow::Owned(t.out),
        positions: t.positions,
        pattern_len: pattern.len(),
    })
}

/// Whether `\n` is a set of characters in a class (`\w`, `\d`, `\p{L}`, ...), not one.
fn is_set_escape(n: char) -> bool {
    matches!(
        n,
        'w' | 'W' | 'd' | 'D' | 's' | 'S' | 'h' | 'H' | 'v' | 'V' | 'p' | 'P'
    )
}

/// Whether the class item that follows is a set of characters (`\w`, `[:alpha:]`).
fn set_follows(chars: &Chars<'_>) -> bool {
    let mut ahead = chars.clone();
    match (ahead.next(), ahead.next()) {
        (Some('\\'), Some(n)) => is_set_escape(n),
        (Some('['), Some(':')) => true,
        _ => false,
    }
}

/// The state of [`perl_to_engine`] along a pattern.
struct Translator {
    out: String,
    /// [`Translated::positions`], so far.
    positions: Vec<(usize, usize)>,
    /// Where in the pattern the part being read starts.
    at: usize,
    dollar: Dollar,
    /// Where the first Perl form the engine cannot express (or Perl refuses) is, and why.
    failed: Option<(usize, fancy_regex::ParseError)>,
    flags: Flags,
    /// The groups open, innermost last.
    open: Vec<Group>,
    /// Capture groups opened so far (for relative back-references and `\10` versus octal).
    groups: usize,
    /// Depth of character classes, and whether a `]` here would be the first of its class
    /// (and so a literal `]`).
    class_depth: usize,
    class_start: bool,
    /// Whether the last item of the class being read is a set of characters (`\w`,
    /// `\p{L}`, `[:alpha:]`), which cannot end a range: a `-` after it is the character.
    after_class_set: bool,
    class: Option<Class>,
}

impl Translator {
    /// Records a form the engine cannot express (the first one is reported).
    fn unsupported(&mut self, form: String, why: &str) {
        if self.failed.is_none() {
            let kind = fancy_regex::ParseError::InvalidEscape(format!("{form} ({why})"));
            self.failed = Some((self.at, kind));
        }
    }

    /// One character of the pattern (and what it starts).
    fn step(&mut self, c: char, chars: &mut Chars<'_>) {
        let in_class = self.class_depth > 0;
        let after_set = std::mem::take(&mut self.after_class_set);
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    self.out.push('\\');
                    return;
                };
                if n == 'Z' && !in_class {
                    // Perl's `\Z` is `$` without `(?m)`; the engine's allows several newlines.
                    self.out.push_str(self.dollar.end_of_text());
                } else {
                    let start = self.out.len();
                    let set = self.escape(n, chars, in_class);
                    self.record_set(start, set);
                    self.after_class_set = in_class && is_set_escape(n);
                }
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                self.posix_class(chars);
                self.after_class_set = true;
            }
            // A `-` beside a set in a class (`[\w-.]`, `[.-\w]`) makes no range in Perl: it
            // is the character (Perl warns), where the engine would refuse the pattern.
            '-' if in_class && !self.class_start && (after_set || set_follows(chars)) => {
                self.out.push_str("\\-");
            }
            '[' => {
                if !in_class {
                    self.class = Some(Class {
                        open_at: self.out.len(),
                        negated: false,
                        sets: Vec::new(),
                    });
                }
                self.out.push(c);
                self.class_depth += 1;
                if chars.peek() == Some(&'^') {
                    self.out.push('^');
                    chars.next();
                    if let (Some(class), false) = (&mut self.class, in_class) {
                        class.negated = true;
                    }
                }
                self.class_start = true;
                return;
            }
            ']' if in_class && !self.class_start => {
                self.out.push(c);
                self.class_depth -= 1;
                if self.class_depth == 0 {
                    self.close_class();
                }
            }
            _ if in_class => self.out.push(c),
            // A comment, through the end of its line, as written.
            '#' if self.flags.x => {
                self.out.push(c);
                for n in chars.by_ref() {
                    self.out.push(n);
                    if n == '\n' {
                        break;
                    }
                }
            }
            '$' if self.dollar == Dollar::PerlEnd => self.out.push_str("(?:$|(?=\\n\\z))"),
            '{' => brace_to_engine(chars, &mut self.out),
            '(' => self.open_group(chars),
            ')' => self.close_group(),
            _ => self.literal(c),
        }
        self.class_start = false;
    }

    /// Notes that the output from `start` on is a set of kind `set`, if it is in a class.
    fn record_set(&mut self, start: usize, set: Set) {
        let end = self.out.len();
        if let (Some(class), false) = (&mut self.class, set == Set::None) {
            class.sets.push((start, end, set));
        }
    }

    /// A character matched as itself, outside a character class.
    fn literal(&mut self, c: char) {
        match ascii_fold_literal(c) {
            Some(apart) if self.flags.ascii_fold() => self.out.push_str(apart),
            _ => self.out.push(c),
        }
    }

    /// A character given by its code (`\x{41}`, `\101`), as `\x{41}`.
    fn char_code(&mut self, code: u32, in_class: bool) {
        let apart = char::from_u32(code).and_then(ascii_fold_literal);
        match apart {
            Some(apart) if !in_class && self.flags.ascii_fold() => self.out.push_str(apart),
            _ => self.out.push_str(&format!("\\x{{{code:X}}}")),
        }
    }

    /// A set of ASCII characters that Perl does not case-fold into non-ASCII ones (`\w`
    /// under `(?a)`, `\p{PosixAlpha}`): `members` as a class's contents.
    fn ascii_set(&mut self, members: &str, negated: bool, in_class: bool) -> Set {
        let caret = if negated { "^" } else { "" };
        if in_class && !negated {
            self.out.push_str(members);
        } else if in_class {
            self.out.push_str(&format!("[^{members}]"));
        } else if self.flags.i {
            self.out.push_str(&format!("(?-i:[{caret}{members}])"));
        } else {
            self.out.push_str(&format!("[{caret}{members}]"));
        }
        Set::Ascii
    }

    /// A POSIX class `[:alpha:]` (in a class, after its `[`, which is in `chars`), through
    /// its `:]`.
    fn posix_class(&mut self, chars: &mut Chars<'_>) {
        let mut written = String::from("[");
        let mut prev = '[';
        for n in chars.by_ref() {
            written.push(n);
            if prev == ':' && n == ']' {
                break;
            }
            prev = n;
        }
        let inner = written
            .strip_prefix("[:")
            .and_then(|w| w.strip_suffix(":]"))
            .unwrap_or_default();
        let (negated, name) = match inner.strip_prefix('^') {
            Some(n) => (true, n),
            None => (false, inner),
        };
        let ascii = self.flags.charset != Charset::Unicode || name == "ascii";
        let start = self.out.len();
        if let Some(members) = ascii_posix_set(name, self.flags.i).filter(|_| ascii) {
            let set = self.ascii_set(members, negated, true);
            self.record_set(start, set);
        } else if let Some(members) = unicode_posix_set(name) {
            let caret = if negated { "^" } else { "" };
            self.out.push_str(&format!("[{caret}{members}]"));
            self.record_set(start, Set::Property);
        } else {
            // A name Perl does not know: left for the engine to refuse.
            self.out.push_str(&written);
        }
    }

    /// Under `(?i)`, where a class holds one of the characters that fold across ASCII
    /// (`k` and KELVIN SIGN) and Perl does not fold it the engine's way (an ASCII set of
    /// `(?a)`, or `(?aa)`), the class (now at the end of the output) takes those characters
    /// as Perl does: `[[CLASS]--[ks]]` (the engine's, without them) or them alone.
    fn close_class(&mut self) {
        let Some(class) = self.class.take() else {
            return;
        };
        let strict = self.flags.charset == Charset::AsciiStrict;
        let has_ascii_set = class.sets.iter().any(|(_, _, set)| *set == Set::Ascii);
        if !self.flags.i || !strict && !has_ascii_set {
            return;
        }
        let body_start = class.open_at + 1 + usize::from(class.negated);
        let body_end = self.out.len().saturating_sub(1);
        let (mut folded, mut ascii, mut properties) = (String::new(), String::new(), String::new());
        let mut at = body_start;
        for &(start, end, set) in &class.sets {
            folded.push_str(self.out.get(at..start).unwrap_or_default());
            let part = self.out.get(start..end).unwrap_or_default();
            match set {
                Set::Ascii => ascii.push_str(part),
                _ => properties.push_str(part),
            }
            at = end;
        }
        folded.push_str(self.out.get(at..body_end).unwrap_or_default());
        let inner = self
            .out
            .get(class.open_at + 1..body_end)
            .unwrap_or_default();
        let (Some(folded), Some(ascii), Some(properties), Some(engine)) = (
            class_holds(&folded, false, false),
            class_holds(&ascii, false, false),
            class_holds(&properties, true, false),
            class_holds(inner, true, true),
        ) else {
            // No class: the engine says why.
            return;
        };
        // Perl's answer for each character: a character or range matches its whole three
        // (only its own side of ASCII under `(?aa)`); an ASCII set, its own members; a
        // property, what the engine gives it.
        let mut perl = [false; 6];
        let sets = ascii.iter().zip(properties).map(|(a, p)| *a || p);
        let sets: Vec<bool> = sets.collect();
        for (three, (f, s)) in perl.chunks_mut(3).zip(folded.chunks(3).zip(sets.chunks(3))) {
            let any = f.iter().any(|h| *h);
            let ascii = f.iter().take(2).any(|h| *h);
            for (j, (p, s)) in three.iter_mut().zip(s).enumerate() {
                let by_fold = match (strict, j < 2) {
                    (false, _) => any,
                    (true, true) => ascii,
                    (true, false) => f.get(2).copied().unwrap_or(false),
                };
                *p = (by_fold || *s) != class.negated;
            }
        }
        if perl == engine {
            return;
        }
        let members: String = ACROSS_ASCII
            .iter()
            .zip(perl)
            .filter(|(_, p)| *p)
            .map(|(c, _)| format!("\\x{{{:X}}}", u32::from(*c)))
            .collect();
        let without = format!("[[{inner}]--[ks]]");
        let fixed = if members.is_empty() {
            without
        } else {
            format!("(?:{without}|(?-i:[{members}]))")
        };
        self.out.truncate(class.open_at);
        self.out.push_str(&fixed);
        // The class's parts are no longer where they were: an error in it is placed at it.
        let parts = self
            .positions
            .partition_point(|(text_at, _)| *text_at <= class.open_at);
        self.positions.truncate(parts);
    }

    /// A `(` outside a character class, and what follows it up to its body.
    fn open_group(&mut self, chars: &mut Chars<'_>) {
        let ahead: String = chars.clone().take(3).collect();
        let called = |a: &str| {
            let mut a = a.chars();
            a.next() == Some('?')
                && matches!(
                    (a.next(), a.next()),
                    (Some('&' | 'R' | '0'..='9'), _)
                        | (Some('P'), Some('=' | '>'))
                        | (Some('+' | '-'), Some('0'..='9'))
                )
        };
        // A comment (through its first `)`, as in Perl), a subroutine call or recursion
        // (`(?1)`, `(?&name)`, `(?R)`) or a verb (`(*PRUNE)`): as written, whole.
        if ahead.starts_with("?#") || ahead.starts_with('*') || called(&ahead) {
            self.out.push('(');
            for n in chars.by_ref() {
                self.out.push(n);
                if n == ')' {
                    break;
                }
            }
            return;
        }
        if let Some((spec, end)) = flag_group(chars) {
            let (flags, engine) = match self.flags.changed_by(&spec) {
                Ok(changed) => changed,
                Err(why) => {
                    if self.failed.is_none() {
                        let kind =
                            fancy_regex::ParseError::UnknownFlag(format!("(?{spec}{end} ({why})"));
                        self.failed = Some((self.at, kind));
                    }
                    (self.flags, String::new())
                }
            };
            if end == ':' {
                self.out.push_str(&format!("(?{engine}:"));
                self.open.push(Group {
                    outer: self.flags,
                    body_at: self.out.len(),
                    scoping: Scoping::Restores,
                    wrapped: false,
                    passed_on: String::new(),
                });
            } else if !engine.is_empty() {
                self.wrap_group();
                let change = format!("(?{engine})");
                self.out.push_str(&change);
                for g in self.open.iter_mut().rev() {
                    if g.scoping != Scoping::PassesOn {
                        break;
                    }
                    g.passed_on.push_str(&change);
                }
            }
            self.flags = flags;
            return;
        }
        self.out.push('(');
        let mut scoping = Scoping::Keeps;
        if ahead.starts_with('?') {
            let named =
                ahead.starts_with("?<") && !ahead.starts_with("?<=") && !ahead.starts_with("?<!")
                    || ahead.starts_with("?P<")
                    || ahead.starts_with("?'");
            let opener = if named {
                self.groups += 1;
                let close = if ahead.starts_with("?'") { '\'' } else { '>' };
                let mut opener = String::new();
                // `?'`, then the name through its closing quote.
                opener.extend(chars.next());
                opener.extend(chars.next());
                for n in chars.by_ref() {
                    opener.push(n);
                    if n == close {
                        break;
                    }
                }
                opener
            } else if ahead.starts_with("?<=") || ahead.starts_with("?<!") {
                chars.by_ref().take(3).collect()
            } else if ahead.starts_with("?(") {
                // A conditional: its condition, unless that is a look-around (a group of
                // its own, read next).
                scoping = Scoping::PassesOn;
                let mut opener: String = chars.by_ref().take(1).collect();
                if !ahead.starts_with("?(?") {
                    for n in chars.by_ref() {
                        opener.push(n);
                        if n == ')' {
                            break;
                        }
                    }
                }
                opener
            } else {
                // `?=`, `?!`, `?>`; or what the engine refuses (`?|`).
                chars.by_ref().take(2).collect()
            };
            self.out.push_str(&opener);
        } else if self.flags.n {
            self.out.push_str("?:");
            scoping = Scoping::Restores;
        } else {
            self.groups += 1;
        }
        self.open.push(Group {
            outer: self.flags,
            body_at: self.out.len(),
            scoping,
            wrapped: false,
            passed_on: String::new(),
        });
    }

    /// Before a flag changes: the engine would keep it past the group it is in, so that
    /// group's body goes into `(?:...)`, after which the engine restores the flags.
    fn wrap_group(&mut self) {
        let group = self
            .open
            .iter_mut()
            .rev()
            .find(|g| g.scoping != Scoping::PassesOn);
        if let Some(g) = group.filter(|g| g.scoping == Scoping::Keeps && !g.wrapped) {
            self.out.insert_str(g.body_at, "(?:");
            g.wrapped = true;
            for (text_at, _) in &mut self.positions {
                if *text_at >= g.body_at {
                    *text_at += 3;
                }
            }
        }
    }

    /// A `)` outside a character class.
    fn close_group(&mut self) {
        let Some(group) = self.open.pop() else {
            self.out.push(')');
            return;
        };
        if group.wrapped {
            self.out.push(')');
        }
        self.out.push(')');
        if group.scoping != Scoping::PassesOn {
            self.flags = group.outer;
        }
        self.out.push_str(&group.passed_on);
    }

    /// One escape `\n...` of a Perl pattern (after its backslash), in the engine's syntax,
    /// and what kind of item it is.
    fn escape(&mut self, n: char, chars: &mut Chars<'_>, in_class: bool) -> Set {
        let ascii = self.flags.charset != Charset::Unicode;
        match n {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' if ascii => {
                // Under `(?a)`, `\d`, `\w` and `\s` are the ASCII POSIX classes.
                let class = match n.to_ascii_lowercase() {
                    'd' => "digit",
                    'w' => "word",
                    _ => "space",
                };
                let members = ascii_posix_set(class, false).unwrap_or_default();
                return self.ascii_set(members, n.is_ascii_uppercase(), in_class);
            }
            'b' | 'B' if ascii && !in_class && chars.peek() != Some(&'{') => {
                self.out.push_str(ascii_boundary(n == 'B'));
            }
            'h' | 'H' | 'v' | 'V' => {
                let set = if n.eq_ignore_ascii_case(&'h') {
                    HORIZONTAL_SPACE
                } else {
                    VERTICAL_SPACE
                };
                let negated = n.is_ascii_uppercase();
                if in_class && !negated {
                    self.out.push_str(set);
                } else {
                    self.out.push_str(if negated { "[^" } else { "[" });
                    self.out.push_str(set);
                    self.out.push(']');
                }
            }
            'N' if chars.peek() == Some(&'{') => {
                let body = take_braced(chars);
                match body
                    .strip_prefix("U+")
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                {
                    Some(code) => self.char_code(code, in_class),
                    None => self.unsupported(
                        format!("\\N{{{body}}}"),
                        "characters by name are not supported; write \\N{U+XXXX}",
                    ),
                }
            }
            'Q' => {
                let mut quoted = String::new();
                while let Some(q) = chars.next() {
                    if q == '\\' && chars.peek() == Some(&'E') {
                        chars.next();
                        break;
                    }
                    quoted.push(q);
                }
                if !in_class && self.flags.ascii_fold() {
                    for q in quoted.chars() {
                        match ascii_fold_literal(q) {
                            Some(apart) => self.out.push_str(apart),
                            None => self
                                .out
                                .push_str(&engine_literal(q.encode_utf8(&mut [0; 4]))),
                        }
                    }
                } else {
                    self.out.push_str(&engine_literal(&quoted));
                }
            }
            // A `\E` without `\Q` is ignored, as in Perl.
            'E' => {}
            'o' if chars.peek() == Some(&'{') => {
                let body = take_braced(chars);
                match u32::from_str_radix(&body, 8) {
                    Ok(code) => self.char_code(code, in_class),
                    Err(_) => {
                        self.out.push_str("\\o{");
                        self.out.push_str(&body);
                        self.out.push('}');
                    }
                }
            }
            'x' => {
                // `\x{6B}` or `\x6B`: as written, unless `(?aai)` keeps it apart.
                let (written, hex) = if chars.peek() == Some(&'{') {
                    let body = take_braced(chars);
                    let hex = body.trim_matches([' ', '\t']).to_string();
                    (format!("{{{body}}}"), hex)
                } else {
                    let mut hex = String::new();
                    while hex.len() < 2 && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                        hex.extend(chars.next());
                    }
                    (hex.clone(), hex)
                };
                let code = u32::from_str_radix(&hex, 16).ok();
                let apart = code.and_then(char::from_u32).and_then(ascii_fold_literal);
                match apart {
                    Some(apart) if !in_class && self.flags.ascii_fold() => {
                        self.out.push_str(apart);
                    }
                    _ => {
                        self.out.push_str("\\x");
                        self.out.push_str(&written);
                    }
                }
            }
            '0' => {
                let mut digits = String::from("0");
                while digits.len() < 3 && chars.peek().is_some_and(|d| ('0'..='7').contains(d)) {
                    digits.extend(chars.next());
                }
                self.char_code(u32::from_str_radix(&digits, 8).unwrap_or(0), in_class);
            }
            '1'..='9' => {
                let mut digits = String::from(n);
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    digits.extend(chars.next());
                }
                let number: usize = digits.parse().unwrap_or(usize::MAX);
                // As in Perl: one digit, or a number of groups already opened, outside a class
                // is a back-reference; otherwise the leading octal digits (up to three) are a
                // character, in a class or when there are at least two of them.
                let backreference = !in_class && (digits.len() == 1 || number <= self.groups);
                let octal: String = digits
                    .chars()
                    .take(3)
                    .take_while(|d| ('0'..='7').contains(d))
                    .collect();
                match u32::from_str_radix(&octal, 8) {
                    Ok(code) if !backreference && (in_class || octal.len() >= 2) => {
                        self.char_code(code, in_class);
                        self.out
                            .push_str(digits.get(octal.len()..).unwrap_or_default());
                    }
                    _ => {
                        self.out.push('\\');
                        self.out.push_str(&digits);
                    }
                }
            }
            'g' if matches!(chars.peek(), Some('<' | '\'')) => self.delimited(n, chars),
            'g' => {
                let braced = chars.peek() == Some(&'{');
                let reference = if braced {
                    take_braced(chars)
                } else {
                    let mut r = String::new();
                    if chars.peek() == Some(&'-') {
                        r.extend(chars.next());
                    }
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        r.extend(chars.next());
                    }
                    r
                };
                let absolute = match reference.parse::<i64>() {
                    Ok(k) if k > 0 => Some(k as usize),
                    Ok(k) if k < 0 => (self.groups + 1)
                        .checked_sub(k.unsigned_abs() as usize)
                        .filter(|a| *a > 0),
                    _ => None,
                };
                match absolute {
                    // Bracketed, so that a digit after it is not read as part of the number.
                    Some(a) => self.out.push_str(&format!("(?:\\{a})")),
                    None if braced
                        && !reference.is_empty()
                        && reference.parse::<i64>().is_err() =>
                    {
                        self.out.push_str("\\k<");
                        self.out.push_str(&reference);
                        self.out.push('>');
                    }
                    None => {
                        self.out.push_str("\\g");
                        if braced {
                            self.out.push('{');
                            self.out.push_str(&reference);
                            self.out.push('}');
                        } else {
                            self.out.push_str(&reference);
                        }
                    }
                }
            }
            // In Perl an escaped `<` or `>` is the character; the engine reads `\<` and `\>` as
            // word boundaries.
            '<' | '>' => self.out.push(n),
            // `\cX`, a control character: X upper-cased with its bit 6 flipped (`\cI` is a
            // tab, `\c[` escape, `\c?` delete); the engine has no such escape.
            'c' => match chars.next() {
                Some(x) if x.is_ascii() && !x.is_ascii_control() => {
                    self.char_code(u32::from(x.to_ascii_uppercase()) ^ 0x40, in_class);
                }
                _ => self.unsupported(
                    "\\c".to_string(),
                    "`\\c` must be followed by a printable ASCII character",
                ),
            },
            // `\k{name}` is Perl's other spelling of `\k<name>`.
            'k' if chars.peek() == Some(&'{') => {
                self.out.push_str("\\k<");
                self.out.push_str(&take_braced(chars));
                self.out.push('>');
            }
            'k' if matches!(chars.peek(), Some('<' | '\'')) => self.delimited(n, chars),
            'p' | 'P' if chars.peek() == Some(&'{') => {
                let body = take_braced(chars);
                let (caret, name) = match body.trim_start().strip_prefix('^') {
                    Some(name) => (true, name),
                    None => (false, body.as_str()),
                };
                let negated = caret != (n == 'P');
                match posix_property(name) {
                    // `\p{PosixAlpha}`: ASCII, whatever the modifiers.
                    Some((true, class)) => {
                        let members = ascii_posix_set(class, self.flags.i).unwrap_or(r"\x00-\x7F");
                        return self.ascii_set(members, negated, in_class);
                    }
                    // `\p{XPosixAlpha}`: as `[[:alpha:]]` in Unicode.
                    Some((false, class)) => {
                        let caret = if negated { "^" } else { "" };
                        let members = unicode_posix_set(class).unwrap_or_default();
                        self.out.push_str(&format!("[{caret}{members}]"));
                        return Set::Property;
                    }
                    None => {
                        self.out.push('\\');
                        self.out.push(n);
                        self.out.push('{');
                        // `\p{L&}` (and `\p{L_}`, `\p{LC}`): Perl's cased letters, the
                        // engine's `LC`.
                        match body.trim() {
                            "L&" | "L_" | "LC" | "IsL&" => self.out.push_str("LC"),
                            _ => self.out.push_str(&body),
                        }
                        self.out.push('}');
                        return Set::Property;
                    }
                }
            }
            // `\pL`: a one-letter property.
            'p' | 'P' => {
                self.out.push('\\');
                self.out.push(n);
                self.out.extend(chars.next());
                return Set::Property;
            }
            // Case changes of what follows (`\u`, `\L...\E`): the engine has none.
            'u' | 'l' | 'U' | 'L' => self.unsupported(
                format!("\\{n}"),
                "case changes are not supported in patterns; write the characters as they are",
            ),
            other => {
                self.out.push('\\');
                self.out.push(other);
                // `\p{L}`, `\x{41}`, `\k{name}`, `\b{wb}`: the braces belong to the escape.
                if other.is_ascii_alphabetic() && chars.peek() == Some(&'{') {
                    self.out.push('{');
                    self.out.push_str(&take_braced(chars));
                    self.out.push('}');
                }
            }
        }
        Set::None
    }

    /// `\k<name>`, `\k'name'`, `\g<name>` (after `\` and the letter `n`): as written, whole.
    fn delimited(&mut self, n: char, chars: &mut Chars<'_>) {
        self.out.push('\\');
        self.out.push(n);
        let Some(open) = chars.next() else {
            return;
        };
        self.out.push(open);
        let close = if open == '<' { '>' } else { '\'' };
        for c in chars.by_ref() {
            self.out.push(c);
            if c == close {
                break;
            }
        }
    }
}

/// A group of modifiers at the start of `chars` (just after its `(`): `?imsx-imsx)` or
/// `?^n:` (letters of Perl's modifiers, a `^` first), read whole; its letters and its end,
/// `)` or `:`. Nothing is read if it is none.
fn flag_group(chars: &mut Chars<'_>) -> Option<(String, char)> {
    let mut ahead = chars.clone();
    if ahead.next() != Some('?') {
        return None;
    }
    let mut spec = String::new();
    if ahead.peek() == Some(&'^') {
        spec.extend(ahead.next());
    }
    let end = loop {
        match ahead.next()? {
            f @ ('i' | 'm' | 's' | 'x' | 'n' | 'p' | 'a' | 'd' | 'l' | 'u' | '-') => spec.push(f),
            end @ (')' | ':') => break end,
            _ => return None,
        }
    };
    *chars = ahead;
    Some((spec, end))
}

/// Perl's horizontal and vertical white space, as the contents of a character class.
const HORIZONTAL_SPACE: &str =
    "\\t\\x20\\xA0\\x{1680}\\x{180E}\\x{2000}-\\x{200A}\\x{202F}\\x{205F}\\x{3000}";
const VERTICAL_SPACE: &str = "\\n\\x0B\\x0C\\r\\x85\\x{2028}\\x{2029}";

/// A `{` outside a character class (after it, in `chars`): Perl's quantifiers `{n}`,
/// `{n,}`, `{n,m}` and (Perl 5.34) `{,m}`, with blanks allowed inside, in the engine's
/// form; any other `{` is the character, as in Perl (`a{,}`, `x{y}`), which the engine
/// would read otherwise or refuse.
fn brace_to_engine(chars: &mut Chars<'_>, out: &mut String) {
    // A quantifier is short: looking further would make a pattern of many `{` quadratic.
    let body: String = chars.clone().take(32).take_while(|&c| c != '}').collect();
    let len = body.chars().count();
    let closed = chars.clone().nth(len) == Some('}');
    let compact: String = body.chars().filter(|c| !matches!(c, ' ' | '\t')).collect();
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    let quantifier = match compact.split_once(',') {
        None => digits(&compact),
        Some((low, high)) => {
            (digits(low) && (high.is_empty() || digits(high))) || (low.is_empty() && digits(high))
        }
    };
    let follows_something = !out.is_empty() && !out.ends_with(['(', '|']);
    if closed && quantifier && follows_something {
        out.push('{');
        if compact.starts_with(',') {
            out.push('0');
        }
        out.push_str(&compact);
        out.push('}');
        for _ in 0..=len {
            chars.next();
        }
    } else {
        out.push_str("\\{");
    }
}

/// Text interpolated into a regex, matched as written (reference §3.1: "meta characters in
/// the string will be escaped"), as Perl's `quotemeta` quotes it: every ASCII character
/// other than a letter, digit or `_` gets a backslash, so `-` cannot make a range in a
/// class (`[${N}]` with `a-z`) nor white space vanish under `(?x)`. Two exceptions:
/// - `/` stays as it is, as `\/` written in a regex literal becomes `/` in its pattern
///   (docs/semantics.md §1): the pattern is the one the same regex written out has, and
///   the cf2 output reads back to it;
/// - a tab, line end or other white space is written by its code (`\x{9}`) rather than as
///   a backslash and the raw character, which a regex literal cannot hold.
pub(crate) fn quote_meta(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == ' ' || (c.is_ascii_punctuation() && c != '_' && c != '/') {
            out.push('\\');
            out.push(c);
        } else if c.is_whitespace() || c.is_ascii_control() {
            out.push_str(&format!("\\x{{{:X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text as a literal in the engine's syntax (what the rewriting writes, not Perl's): its
/// meta characters escaped, and white space by its code, which `(?x)` would otherwise
/// ignore. Not [`quote_meta`]: the engine reads some escaped punctuation as more than the
/// character (`\<` is a word boundary).
fn engine_literal(text: &str) -> String {
    let escaped = fancy_regex::escape(text);
    if !escaped.contains(char::is_whitespace) {
        return escaped.into_owned();
    }
    let mut out = String::with_capacity(escaped.len() + 8);
    for c in escaped.chars() {
        if c.is_whitespace() {
            out.push_str(&format!("\\x{{{:X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of `{...}` at the start of `chars` (which is consumed through the `}`).
fn take_braced(chars: &mut Chars<'_>) -> String {
    chars.next();
    let mut body = String::new();
    for c in chars.by_ref() {
        if c == '}' {
            break;
        }
        body.push(c);
    }
    body
}

/// The largest compiled regex program accepted, in VM instructions (an ordinary pattern
/// needs a few dozen).
const REGEX_MAX_PROGRAM: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Patterns built from pieces that meet `$` in every way: inside and outside groups,
    /// under repetition and alternation, with and without `(?m)`, beside `\n` and `\Z`.
    fn pattern() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a", "b", "\\n", "\\w+", "\\s?", ".", "$", "\\Z", "(a|$)", "(b$)", "\\n?", "(?m:$)",
            "(?=\\n)", "x*",
        ]);
        (
            prop::collection::vec(piece, 1..6),
            prop::sample::select(vec!["", "(?m)", "^", "(?s)"]),
            prop::sample::select(vec!["", "*", "+", "?"]),
        )
            .prop_map(|(pieces, flags, repeat)| format!("{flags}({}){repeat}", pieces.concat()))
    }

    fn spans(re: &fancy_regex::Regex, text: &str) -> Option<Vec<Option<(usize, usize)>>> {
        let caps = re.captures(text).ok()??;
        Some(
            (0..caps.len())
                .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                .collect(),
        )
    }

    proptest! {
        /// The form without the look-ahead is used only where it gives the general form's
        /// answer: the same match and groups on every text that does not end with a newline.
        #[test]
        fn dollar_as_text_end_agrees_where_used(pattern in pattern(), text in "[ab\\nx ]{0,8}") {
            let Ok(re) = build_regex(&pattern) else { return Ok(()) };
            if let Some(simple) = &re.no_final_newline {
                if !text.ends_with('\n') {
                    let (mut linear, mut general) = (spans(simple, &text), spans(&re.any_text, &text));
                    if !pattern.ends_with(')') {
                        // A repeated group whose last turn matched the empty text is that
                        // empty text on the backtracking engine, as in Perl, and the last
                        // turn that was not empty on the linear engine, whatever the `$`
                        // (docs/semantics.md §9): compare the whole matches.
                        for found in [&mut linear, &mut general].into_iter().flatten() {
                            found.truncate(1);
                        }
                    }
                    prop_assert_eq!(linear, general);
                }
            }
        }
    }

    /// The groups of a match, from group 0; `None` for one that took no part.
    type Groups = &'static [Option<&'static str>];

    /// What Perl 5.36 answers (with `unicode_strings`, as cf2 reads texts; checked with
    /// perl): a pattern, a text, and the groups of the match, or `None` where it does not
    /// match. The modifiers the engine lacks (`(?n)`, `(?a)`, `(?aa)`, `(?l)`), the sets
    /// that are ASCII whatever the modifiers (`\p{PosixAlpha}`, `[[:ascii:]]`), and flags
    /// that end with their group.
    const PERL_ANSWERS: &[(&str, &str, Option<Groups>)] = &[
        (r"(?n)(a)(b)", "ab", Some(&[Some("ab")])),
        (r"(?n)(a)(?<x>b)(c)", "abc", Some(&[Some("abc"), Some("b")])),
        (r"(?n)(a)(?-n)(b)", "ab", Some(&[Some("ab"), Some("b")])),
        (r"(?n:(a))(b)", "ab", Some(&[Some("ab"), Some("b")])),
        (r"(?^n:(a))(b)", "ab", Some(&[Some("ab"), Some("b")])),
        (r"(?^n)(a)(b)", "ab", Some(&[Some("ab")])),
        (
            r"(?n)(a(?-n:(b)))(c)",
            "abc",
            Some(&[Some("abc"), Some("b")]),
        ),
        (
            r"(?n)(a)(?-n:(b))\1",
            "abb",
            Some(&[Some("abb"), Some("b")]),
        ),
        (
            r"((?n)(a))(b)",
            "ab",
            Some(&[Some("ab"), Some("a"), Some("b")]),
        ),
        (r"(?n)(?:(?-n)(a))(b)", "ab", Some(&[Some("ab"), Some("a")])),
        (r"(?n-n)(a)", "a", Some(&[Some("a"), Some("a")])),
        (r"(?n)(?P<n>a)(b)", "ab", Some(&[Some("ab"), Some("a")])),
        (r"(?n)(?'q'a)(b)", "ab", Some(&[Some("ab"), Some("a")])),
        (
            r"(?n)(?<x>a)(b)\g{-1}",
            "aba",
            Some(&[Some("aba"), Some("a")]),
        ),
        (r"(?n)(?<x>a)(b)\g{-1}", "abb", None),
        (r"(?nx) ( a ) # ( b", "a", Some(&[Some("a")])),
        (r"(?n)(a)(?^:(b))", "ab", Some(&[Some("ab"), Some("b")])),
        (r"(?n)(a)(?^i:(b))", "aB", Some(&[Some("aB"), Some("B")])),
        (r"(?i)(?n)(A)(?-i)b", "aB", None),
        (r"(?a)\w", "\u{E9}", None),
        (r"(?a)\w", "_", Some(&[Some("_")])),
        (r"(?a)\W", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a)\d", "\u{663}", None),
        (r"(?a)\D", "\u{663}", Some(&[Some("\u{663}")])),
        (r"(?a)\s", "\u{A0}", None),
        (r"(?a)\s", "\u{B}", Some(&[Some("\u{B}")])),
        (r"(?a)\S", "\u{85}", Some(&[Some("\u{85}")])),
        (r"(?a)[\w]", "\u{E9}", None),
        (r"(?a)[^\w]", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a)[[:alpha:]]", "\u{E9}", None),
        (r"(?a)[[:^alpha:]]", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a)[[:punct:]]", "\u{AB}", None),
        (r"(?a)[[:punct:]]", "$", Some(&[Some("$")])),
        (r"(?a)[[:xdigit:]]", "\u{FF10}", None),
        (r"(?a)[[:space:]]", "\u{85}", None),
        (r"(?a)[[:print:]]", " ", Some(&[Some(" ")])),
        (r"(?a)[[:graph:]]", " ", None),
        (r"(?a)a\b", "a\u{E9}", Some(&[Some("a")])),
        (r"a\b", "a\u{E9}", None),
        (r"(?a)a\B", "a\u{E9}", None),
        (r"(?a)\b\x{E9}", "\u{E9}", None),
        (r"(?a)\B\x{E9}\B", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a)\p{Alpha}", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a)\p{XPosixAlpha}", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a)\h", "\u{A0}", Some(&[Some("\u{A0}")])),
        (r"(?a).", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a)\w(?u)\w", "a\u{E9}", Some(&[Some("a\u{E9}")])),
        (r"(?a)\w(?l)\w", "a\u{E9}", Some(&[Some("a\u{E9}")])),
        (r"(?a)\w(?d)\w", "a\u{E9}", Some(&[Some("a\u{E9}")])),
        (r"(?a)(?^:\w)", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?a:\w)\w", "a\u{E9}", Some(&[Some("a\u{E9}")])),
        (r"\p{PosixAlpha}", "\u{E9}", None),
        (r"\p{PosixDigit}", "\u{663}", None),
        (r"\p{Posix_Word}", "_", Some(&[Some("_")])),
        (r"\p{IsPosixPunct}", "$", Some(&[Some("$")])),
        (r"\p{posix alnum}", "\u{E9}", None),
        (r"\P{PosixAlpha}", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"\p{^PosixAlpha}", "a", None),
        (r"\p{XPosixAlpha}", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"\p{XPosixPunct}", "$", Some(&[Some("$")])),
        (r"(?ai)\w", "\u{212A}", None),
        (r"(?ai)\w", "\u{17F}", None),
        (r"(?ai)[[:upper:]]", "k", Some(&[Some("k")])),
        (r"(?ai)[[:upper:]]", "\u{212A}", None),
        (r"(?ai)[[:^upper:]]", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?ai)[\wk]", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?ai)[\w\x{E9}]", "\u{212A}", None),
        (r"(?ai)[\w\x{E9}]", "\u{C9}", Some(&[Some("\u{C9}")])),
        (r"(?ai)[^\w\x{E9}]", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?ai)\W", "\u{17F}", Some(&[Some("\u{17F}")])),
        (r"(?i)\p{PosixAlpha}", "\u{212A}", None),
        (r"(?i)\p{PosixUpper}", "k", Some(&[Some("k")])),
        (
            r"(?i)[\p{PosixUpper}k]",
            "\u{212A}",
            Some(&[Some("\u{212A}")]),
        ),
        (r"(?i)\P{PosixAlpha}", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?i)[[:ascii:]]", "\u{212A}", None),
        (r"(?i)\p{ASCII}", "\u{17F}", None),
        (r"(?i)[^[:ascii:]]", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?ai)k", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?ai)s", "\u{17F}", Some(&[Some("\u{17F}")])),
        (r"(?ai)[a-z]", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?aai)k", "\u{212A}", None),
        (r"(?aai)K", "\u{212A}", None),
        (r"(?aai)s", "\u{17F}", None),
        (r"(?aai)S", "\u{17F}", None),
        (r"(?aai)k", "K", Some(&[Some("K")])),
        (r"(?aai)\x{212A}", "k", None),
        (r"(?aai)\x{212A}", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?aai)\x{17F}", "S", None),
        (r"(?aai)\N{U+6B}", "\u{212A}", None),
        (r"(?aai)\153", "\u{212A}", None),
        (r"(?aai)\x6b", "\u{212A}", None),
        (r"(?aai)\o{163}", "\u{17F}", None),
        (r"(?aai)[k]", "\u{212A}", None),
        (r"(?aai)[k-m]", "\u{212A}", None),
        (r"(?aai)[^k-m]", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?aai)[\x{212A}]", "K", None),
        (r"(?aai)[\x{17F}s]", "S", Some(&[Some("S")])),
        (r"(?aai)[\x{17F}s]", "\u{17F}", Some(&[Some("\u{17F}")])),
        (r"(?aai)[^s]", "\u{17F}", Some(&[Some("\u{17F}")])),
        (r"(?aai)[\p{Lu}]", "\u{17F}", Some(&[Some("\u{17F}")])),
        (r"(?aai)ss", "\u{DF}", None),
        (r"(?aai)\x{DF}", "\u{1E9E}", Some(&[Some("\u{1E9E}")])),
        (r"(?aai)\x{E9}", "\u{C9}", Some(&[Some("\u{C9}")])),
        (r"(?aai)kelvin", "\u{212A}ELVIN", None),
        (r"(?aai)kelvin", "KELVIN", Some(&[Some("KELVIN")])),
        (r"(?aai)(k)\1", "k\u{212A}", None),
        (r"(?aai)(?a)k", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?aai)(?a:k)", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?aa)(?i)k", "\u{212A}", None),
        (r"(?ia)(?aa)k", "\u{212A}", None),
        (r"(?aai)(?-i:k)", "K", None),
        (r"(?aai)k+", "kK\u{212A}", Some(&[Some("kK")])),
        (r"(?aai)(?<=k)s", "Ks", Some(&[Some("s")])),
        (r"(a(?i)b)B", "aBb", None),
        (r"(a(?i)b)B", "aBB", Some(&[Some("aBB"), Some("aB")])),
        (r"(?<x>a(?i)b)B", "aBb", None),
        (r"(?=a(?i)b)aBB", "aBb", None),
        (r"(?>a(?i)b)B", "aBb", None),
        (r"(a(?i)b|c)B", "CB", Some(&[Some("CB"), Some("C")])),
        (r"(a(?i)b)+B", "aBabB", Some(&[Some("aBabB"), Some("ab")])),
        (r"(a(?i)b)+B", "aBabb", None),
        (
            r"(a(?s).)(.)",
            "a\nb",
            Some(&[Some("a\nb"), Some("a\n"), Some("b")]),
        ),
        (
            r"(a)?(?(1)(?i)b|c)B",
            "abb",
            Some(&[Some("abb"), Some("a")]),
        ),
        (r"(?:(a)?(?(1)(?i)b|c))B", "abb", None),
        (r"(a(?aai)k)k", "ak\u{212A}", None),
        (
            r"(a(?a)\w)\w",
            "a_\u{E9}",
            Some(&[Some("a_\u{E9}"), Some("a_")]),
        ),
        (r"(?l)\w", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?l)\w", "\u{17F}", Some(&[Some("\u{17F}")])),
        (r"(?li)k", "\u{212A}", Some(&[Some("\u{212A}")])),
        (r"(?u)\d", "\u{663}", Some(&[Some("\u{663}")])),
        (r"(?p)a", "a", Some(&[Some("a")])),
        (r"(?^p:a)", "a", Some(&[Some("a")])),
        (r"(?)a", "a", Some(&[Some("a")])),
        (r"(?-)a", "a", Some(&[Some("a")])),
        (r"(?#(?a)\w", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?x)\w # (?a)", "\u{E9}", Some(&[Some("\u{E9}")])),
        (r"(?x)(?a) \w # \d", "\u{663}", None),
    ];

    #[test]
    fn modifiers_match_as_in_perl() {
        for (pattern, text, want) in PERL_ANSWERS {
            let re = build_regex(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            let got = re
                .captures(text)
                .unwrap_or_else(|e| panic!("{pattern}: {e}"));
            let got: Option<Vec<Option<&str>>> =
                got.map(|c| (0..c.len()).map(|i| c.get(i).map(|m| m.as_str())).collect());
            assert_eq!(got.as_deref(), *want, "{pattern:?} on {text:?}");
        }
    }

    /// Modifiers Perl refuses are refused, with Perl's reason; an error in a pattern that
    /// uses modifiers the engine lacks is the engine's error for the rest of the pattern,
    /// placed where the pattern has it.
    #[test]
    fn modifier_errors() {
        let message = |pattern: &str| match build_regex(pattern) {
            Ok(_) => panic!("{pattern} was accepted"),
            Err(e) => invalid_regex(pattern, &e).message,
        };
        for (pattern, reason) in [
            ("(?-a)x", "does not accept the modifier `a` after `-`"),
            ("(?-l)x", "does not accept the modifier `l` after `-`"),
            ("(?-u)x", "does not accept the modifier `u` after `-`"),
            ("x(?ua)", "the modifiers `u` and `a` exclude each other"),
            ("(?al)x", "the modifiers `a` and `l` exclude each other"),
            ("(?aaa)x", "the modifier `a` may appear at most twice"),
            ("(?ll)x", "the modifier `l` may appear only once"),
            ("(?^-i)x", "does not accept `-` after `(?^`"),
            ("(?i-m-s)x", "`-` may appear only once"),
        ] {
            let m = message(pattern);
            assert!(m.contains(reason), "{pattern}: {m}");
            let at = pattern.find('(').unwrap_or(0) + 1;
            assert!(m.contains(&format!("at character {at} ")), "{pattern}: {m}");
        }
        // Perl: "Reference to nonexistent group".
        let m = message("(?n)(a)\\1");
        assert!(m.contains("Invalid back reference"), "{m}");
        let m = message("(?a)\\w(");
        assert!(m.contains("at the end of the pattern"), "{m}");
        let m = message("(?a)x)\\w");
        assert!(m.contains("at character 6 "), "{m}");
        // Still refused: what the engine cannot do as Perl does.
        for pattern in ["(?a)\\X", "(?a)\\b{wb}", "(a)(?n)(?1)", "(?n)(?|(a)|b)"] {
            message(pattern);
        }
    }

    #[test]
    fn a_pattern_without_dollar_is_compiled_once() {
        let re = build_regex("a\\$[$]b").ok();
        assert!(re.is_some_and(|r| r.no_final_newline.is_none()));
    }
}
