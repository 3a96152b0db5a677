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
        other => Diagnostic::error(format!("invalid regular expression {shown}: {other}")),
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

/// Why matching against `pattern` stopped: the backtracking engine ran out of steps
/// ([`BACKTRACK_LIMIT`]) or of stack; `looked_ahead` as [`PerlRegex::looks_ahead_in`] said.
pub(crate) fn match_given_up(
    pattern: &str,
    looked_ahead: bool,
    e: &fancy_regex::Error,
) -> Diagnostic {
    let shown = crate::val::quoted_preview(pattern, '/');
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
    let no_final_newline = if at_end != general {
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
/// pattern as written (its positions), where it has one.
fn compile(pattern: &str, engine: &str) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    let build = |p: &str| {
        fancy_regex::RegexBuilder::new(p)
            .backtrack_limit(BACKTRACK_LIMIT)
            .max_prog_size(REGEX_MAX_PROGRAM)
            .build()
    };
    match build(engine) {
        Err(e) if engine != pattern => Err(build(pattern).err().unwrap_or(e)),
        built => built,
    }
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

/// A POSIX class (`[:alpha:]`, `[:^digit:]`) as Perl reads it in a text, which is Unicode
/// (`XPosixAlpha`: `ж` is alphabetic): a nested class of Unicode properties. The engine's own
/// POSIX classes are ASCII only, which `\w` beside `[:word:]` would contradict. `None` for a
/// name Perl does not know (left for the engine to refuse).
fn posix_class(written: &str) -> Option<String> {
    let inner = written.strip_prefix("[:")?.strip_suffix(":]")?;
    let (negated, name) = match inner.strip_prefix('^') {
        Some(n) => (true, n),
        None => (false, inner),
    };
    let members = match name {
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
    };
    Some(format!("[{}{members}]", if negated { "^" } else { "" }))
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
///
/// Anything else is passed through unchanged.
///
/// A Perl form the engine cannot express is an error rather than a different match.
fn perl_to_engine(
    pattern: &str,
    dollar: Dollar,
) -> Result<std::borrow::Cow<'_, str>, fancy_regex::Error> {
    if !pattern.contains(['$', '\\', '{']) && !pattern.contains("(?^") && !pattern.contains("[:") {
        return Ok(std::borrow::Cow::Borrowed(pattern));
    }
    // The first Perl form the engine cannot express, as written.
    let mut unsupported: Option<(String, &str)> = None;
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    // Depth of character classes, and whether a `]` here would be the first of its class
    // (and so a literal `]`).
    let (mut class, mut class_start) = (0usize, false);
    // Capture groups opened so far (for relative back-references and `\10` versus octal).
    let mut groups = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                if n == 'Z' && class == 0 {
                    // Perl's `\Z` is `$` without `(?m)`; the engine's allows several newlines.
                    out.push_str(dollar.end_of_text());
                    continue;
                }
                escape_to_engine(n, &mut chars, class > 0, groups, &mut out, &mut unsupported);
            }
            '[' if class > 0 && chars.peek() == Some(&':') => {
                // A POSIX class `[:alpha:]`, through its `:]`.
                let mut written = String::from("[");
                let mut prev = c;
                for n in chars.by_ref() {
                    written.push(n);
                    if prev == ':' && n == ']' {
                        break;
                    }
                    prev = n;
                }
                match posix_class(&written) {
                    Some(unicode) => out.push_str(&unicode),
                    None => out.push_str(&written),
                }
            }
            '[' => {
                out.push(c);
                class += 1;
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                class_start = true;
                continue;
            }
            ']' if class > 0 && !class_start => {
                out.push(c);
                class -= 1;
            }
            '$' if class == 0 && dollar == Dollar::PerlEnd => out.push_str("(?:$|(?=\\n\\z))"),
            '{' if class == 0 => brace_to_engine(&mut chars, &mut out),
            '(' if class == 0 => {
                out.push(c);
                let rest: String = chars.clone().take(3).collect();
                let plain = !rest.starts_with('?') && !rest.starts_with('*');
                let named =
                    rest.starts_with("?<") && !rest.starts_with("?<=") && !rest.starts_with("?<!")
                        || rest.starts_with("?P<")
                        || rest.starts_with("?'");
                if plain || named {
                    groups += 1;
                } else if rest.starts_with("?^") {
                    // `(?^FLAGS:` or `(?^FLAGS)`: the flags given, the others off.
                    chars.next();
                    chars.next();
                    let mut on = String::new();
                    while let Some(&f) = chars.peek() {
                        if !f.is_ascii_alphabetic() {
                            break;
                        }
                        on.push(f);
                        chars.next();
                    }
                    let off: String = "imsx".chars().filter(|f| !on.contains(*f)).collect();
                    out.push('?');
                    out.push_str(&on);
                    if !off.is_empty() {
                        out.push('-');
                        out.push_str(&off);
                    }
                }
            }
            _ => out.push(c),
        }
        class_start = false;
    }
    if let Some((form, why)) = unsupported {
        let at = pattern.find(&form).unwrap_or(0);
        return Err(fancy_regex::Error::ParseError(
            at,
            fancy_regex::ParseError::InvalidEscape(format!("{form} ({why})")),
        ));
    }
    if out == pattern {
        return Ok(std::borrow::Cow::Borrowed(pattern));
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// Perl's horizontal and vertical white space, as the contents of a character class.
const HORIZONTAL_SPACE: &str =
    "\\t\\x20\\xA0\\x{1680}\\x{180E}\\x{2000}-\\x{200A}\\x{202F}\\x{205F}\\x{3000}";
const VERTICAL_SPACE: &str = "\\n\\x0B\\x0C\\r\\x85\\x{2028}\\x{2029}";

/// One escape `\n...` of a Perl pattern (after its backslash), in the engine's syntax.
fn escape_to_engine(
    n: char,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    in_class: bool,
    groups: usize,
    out: &mut String,
    unsupported: &mut Option<(String, &'static str)>,
) {
    let char_code = |out: &mut String, code: u32| {
        out.push_str(&format!("\\x{{{code:X}}}"));
    };
    match n {
        'h' | 'H' | 'v' | 'V' => {
            let set = if n.eq_ignore_ascii_case(&'h') {
                HORIZONTAL_SPACE
            } else {
                VERTICAL_SPACE
            };
            let negated = n.is_ascii_uppercase();
            if in_class && !negated {
                out.push_str(set);
            } else {
                out.push_str(if negated { "[^" } else { "[" });
                out.push_str(set);
                out.push(']');
            }
        }
        'N' if chars.peek() == Some(&'{') => {
            let body = take_braced(chars);
            match body
                .strip_prefix("U+")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
            {
                Some(code) => char_code(out, code),
                None => {
                    unsupported.get_or_insert((
                        format!("\\N{{{body}}}"),
                        "characters by name are not supported; write \\N{U+XXXX}",
                    ));
                }
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
            out.push_str(&quote_meta(&quoted));
        }
        // A `\E` without `\Q` is ignored, as in Perl.
        'E' => {}
        'o' if chars.peek() == Some(&'{') => {
            let body = take_braced(chars);
            match u32::from_str_radix(&body, 8) {
                Ok(code) => char_code(out, code),
                Err(_) => {
                    out.push_str("\\o{");
                    out.push_str(&body);
                    out.push('}');
                }
            }
        }
        '0' => {
            let mut digits = String::from("0");
            while digits.len() < 3 && chars.peek().is_some_and(|d| ('0'..='7').contains(d)) {
                digits.extend(chars.next());
            }
            char_code(out, u32::from_str_radix(&digits, 8).unwrap_or(0));
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
            let backreference = !in_class && (digits.len() == 1 || number <= groups);
            let octal: String = digits
                .chars()
                .take(3)
                .take_while(|d| ('0'..='7').contains(d))
                .collect();
            match u32::from_str_radix(&octal, 8) {
                Ok(code) if !backreference && (in_class || octal.len() >= 2) => {
                    char_code(out, code);
                    out.push_str(digits.get(octal.len()..).unwrap_or_default());
                }
                _ => {
                    out.push('\\');
                    out.push_str(&digits);
                }
            }
        }
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
                Ok(k) if k < 0 => (groups + 1)
                    .checked_sub(k.unsigned_abs() as usize)
                    .filter(|a| *a > 0),
                _ => None,
            };
            match absolute {
                // Bracketed, so that a digit after it is not read as part of the number.
                Some(a) => out.push_str(&format!("(?:\\{a})")),
                None if braced && !reference.is_empty() && reference.parse::<i64>().is_err() => {
                    out.push_str("\\k<");
                    out.push_str(&reference);
                    out.push('>');
                }
                None => {
                    out.push_str("\\g");
                    if braced {
                        out.push('{');
                        out.push_str(&reference);
                        out.push('}');
                    } else {
                        out.push_str(&reference);
                    }
                }
            }
        }
        // In Perl an escaped `<` or `>` is the character; the engine reads `\<` and `\>` as
        // word boundaries.
        '<' | '>' => out.push(n),
        // `\cX`, a control character: X upper-cased with its bit 6 flipped (`\cI` is a tab,
        // `\c[` escape, `\c?` delete); the engine has no such escape.
        'c' => match chars.next() {
            Some(x) if x.is_ascii() && !x.is_ascii_control() => {
                char_code(out, u32::from(x.to_ascii_uppercase()) ^ 0x40);
            }
            _ => {
                unsupported.get_or_insert((
                    "\\c".to_string(),
                    "`\\c` must be followed by a printable ASCII character",
                ));
            }
        },
        // `\k{name}` is Perl's other spelling of `\k<name>`.
        'k' if chars.peek() == Some(&'{') => {
            out.push_str("\\k<");
            out.push_str(&take_braced(chars));
            out.push('>');
        }
        // `\p{L&}` (and `\p{L_}`, `\p{LC}`): Perl's cased letters, the engine's `LC`.
        'p' | 'P' if chars.peek() == Some(&'{') => {
            let body = take_braced(chars);
            out.push('\\');
            out.push(n);
            out.push('{');
            match body.trim() {
                "L&" | "L_" | "LC" | "IsL&" => out.push_str("LC"),
                _ => out.push_str(&body),
            }
            out.push('}');
        }
        // Case changes of what follows (`\u`, `\L...\E`): the engine has none.
        'u' | 'l' | 'U' | 'L' => {
            unsupported.get_or_insert((
                format!("\\{n}"),
                "case changes are not supported in patterns; write the characters as they are",
            ));
        }
        other => {
            out.push('\\');
            out.push(other);
            // `\p{L}`, `\x{41}`, `\k{name}`, `\b{wb}`: the braces belong to the escape.
            if other.is_ascii_alphabetic() && chars.peek() == Some(&'{') {
                out.push('{');
                out.push_str(&take_braced(chars));
                out.push('}');
            }
        }
    }
}

/// A `{` outside a character class (after it, in `chars`): Perl's quantifiers `{n}`,
/// `{n,}`, `{n,m}` and (Perl 5.34) `{,m}`, with blanks allowed inside, in the engine's
/// form; any other `{` is the character, as in Perl (`a{,}`, `x{y}`), which the engine
/// would read otherwise or refuse.
fn brace_to_engine(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut String) {
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
/// the string will be escaped"), as Perl's `quotemeta` does: white space too, which `(?x)`
/// would otherwise ignore.
pub(crate) fn quote_meta(text: &str) -> String {
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
fn take_braced(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
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

    #[test]
    fn a_pattern_without_dollar_is_compiled_once() {
        let re = build_regex("a\\$[$]b").ok();
        assert!(re.is_some_and(|r| r.no_final_newline.is_none()));
    }
}
