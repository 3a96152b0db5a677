//! Diagnostics: what went wrong, where, about which resource, and how to fix it.
//!
//! Rendered form (clarifications §8): the first line is `FILE:LINE:COL: error: MESSAGE`
//! (the shape compilers and editors parse), then an excerpt of the source with the span
//! underlined, secondary labels, notes and a hint. No renderer crate emits that first line,
//! so the excerpt is drawn here (with `unicode-width` for alignment).

use crate::source::Sources;
use crate::span::Span;
use std::fmt::Write as _;
use unicode_width::UnicodeWidthStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A secondary location shown with a diagnostic ("overridden here", "also defined here").
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Where the problem is; `None` only for problems with no source (a missing main file).
    pub span: Option<Span>,
    /// What the underline at `span` says (may be empty).
    pub label: String,
    /// The resource concerned, as a dotted path (`Services.OsVersion`).
    pub resource: Option<String>,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span: None,
            label: String::new(),
            resource: None,
            labels: Vec::new(),
            notes: Vec::new(),
            hint: None,
        }
    }

    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }

    pub fn at(mut self, span: Span) -> Diagnostic {
        self.span = Some(span);
        self
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn resource(mut self, path: impl Into<String>) -> Diagnostic {
        self.resource = Some(path.into());
        self
    }

    pub fn also(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders the diagnostic; `color` adds ANSI colours (only for a terminal).
    pub fn render(&self, sources: &dyn Sources, color: bool) -> String {
        let paint = |code: &str, text: &str| {
            if color {
                format!("\x1b[{code}m{text}\x1b[0m")
            } else {
                text.to_string()
            }
        };
        let sev_color = match self.severity {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
        };
        let mut out = String::new();
        let location = match self.span {
            Some(span) => format!("{}: ", sources.location(span)),
            None => String::new(),
        };
        let resource = match &self.resource {
            // Unless the message names it already (as `R`, or as the start of `R.x`): a
            // bare substring test would take the `A` of `LATIN` for the resource `A`.
            Some(r) if !names_resource(&self.message, r) => format!(" (resource `{r}`)"),
            _ => String::new(),
        };
        let location = visible(&location);
        let head_width = location.chars().count() + self.severity.as_str().len() + 2;
        let _ = writeln!(
            out,
            "{}{} {}{}",
            paint("1", &location),
            paint(sev_color, &format!("{}:", self.severity.as_str())),
            paint("1", &continued(&self.message, head_width)),
            visible(&resource)
        );
        if let Some(span) = self.span {
            excerpt(&mut out, sources, span, &self.label, sev_color, color);
        }
        for label in &self.labels {
            let location = visible(&sources.location(label.span)).into_owned();
            // Under the label's text: `  --> ` before the location, `: ` after it.
            let width = location.chars().count() + 8;
            let _ = writeln!(
                out,
                "  {} {}: {}",
                paint("1;34", "-->"),
                location,
                continued(&label.message, width)
            );
            excerpt(&mut out, sources, label.span, "", "1;34", color);
        }
        // Under the text: `  = note: ` and `  = hint: ` are 10 columns.
        let tails = self.notes.iter().map(|n| ("1;34", "= note:", n));
        for (colour, kind, text) in tails.chain(self.hint.iter().map(|h| ("1;36", "= hint:", h))) {
            let _ = writeln!(out, "  {} {}", paint(colour, kind), continued(text, 10));
        }
        out
    }
}

/// Draws the source line(s) of `span` with the span underlined.
fn excerpt(
    out: &mut String,
    sources: &dyn Sources,
    span: Span,
    label: &str,
    code: &str,
    color: bool,
) {
    let Some(file) = sources.file(span.file) else {
        return;
    };
    let (line, col) = file.line_col(span.start);
    let (end_line, end_col) = file.line_col(span.end.max(span.start));
    let text = file.line_text(line);
    let gutter = line.to_string().len().max(2);
    let pad = " ".repeat(gutter);
    let _ = writeln!(out, "{pad} |");
    // A long line (a generated or minified file) is shown from a little before the span,
    // 200 characters at most, so the carets stay in view.
    let skip = if col > 120 { col - 60 } else { 0 };
    let elided = if skip > 0 { "…" } else { "" };
    let shown = shown(elided.chars().chain(text.chars().skip(skip).take(200)));
    let _ = writeln!(out, "{line:>gutter$} | {shown}");
    let before = self::shown(
        elided
            .chars()
            .chain(text.chars().skip(skip).take(col.saturating_sub(1) - skip)),
    );
    let start_w = UnicodeWidthStr::width(before.as_str());
    let width = if end_line == line {
        let covered = self::shown(
            text.chars()
                .skip(col.saturating_sub(1))
                .take(end_col.saturating_sub(col)),
        );
        UnicodeWidthStr::width(covered.as_str()).max(1)
    } else {
        UnicodeWidthStr::width(shown.as_str())
            .saturating_sub(start_w)
            .max(1)
    };
    // Not past the end of what is shown.
    let width = width.min(
        UnicodeWidthStr::width(shown.as_str())
            .saturating_sub(start_w)
            .max(1),
    );
    let carets = "^".repeat(width.min(200));
    let carets = if color {
        format!("\x1b[{code}m{carets}\x1b[0m")
    } else {
        carets
    };
    let more = if end_line > line { " ..." } else { "" };
    let label = if label.is_empty() {
        String::new()
    } else {
        format!(" {label}")
    };
    let _ = writeln!(out, "{pad} | {}{carets}{more}{label}", " ".repeat(start_w));
}

/// How characters of a source line are shown in an excerpt: a tab as a space (so the
/// carets line up), and every character that would act on the terminal rather than show
/// (`visible_char`) as a visible stand-in. A configuration file, perhaps from a less
/// trusted author, must not be able to recolour, erase or reorder what the person running
/// cf2 reads.
fn shown(chars: impl Iterator<Item = char>) -> String {
    let mut out = String::new();
    for c in chars {
        if c == '\t' {
            out.push(' ');
        } else {
            visible_char(c, &mut out);
        }
    }
    out
}

/// `text` with its control characters made visible (`visible_char`), line ends and tabs
/// kept: messages quote source text (names, strings, paths).
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_hidden_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' || c == '\t' {
            out.push(c);
        } else {
            visible_char(c, &mut out);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` made visible, its lines after the first indented by `indent` columns, under its
/// first line's start (as rustc aligns a note's lines): a message that holds a line end
/// (`fail("ok\nmain.cf2:1:1: error: ...")` in a delegated file) cannot write a line that
/// starts where cf2's own diagnostics, excerpts, notes and hints start.
fn continued(text: &str, indent: usize) -> std::borrow::Cow<'_, str> {
    let shown = visible(text);
    if !shown.contains('\n') {
        return shown;
    }
    let newline = format!("\n{:indent$}", "");
    std::borrow::Cow::Owned(shown.replace('\n', &newline))
}

/// A character the terminal acts on instead of showing: C0 and C1 controls, DEL, and the
/// format characters, which reorder or hide text (bidirectional controls, a byte-order
/// mark, zero-width characters: [`crate::lexer::is_format_character`]).
fn is_hidden_control(c: char) -> bool {
    c.is_control() || crate::lexer::is_format_character(c)
}

/// Pushes `c`, or its visible stand-in: a C0 control or DEL as its Unicode control picture
/// (`␛`, `␈`, `␍`), any other hidden character as `<U+202E>`.
fn visible_char(c: char, out: &mut String) {
    if !is_hidden_control(c) {
        out.push(c);
        return;
    }
    match c as u32 {
        code @ 0..=0x1F => out.push(char::from_u32(0x2400 + code).unwrap_or('\u{FFFD}')),
        0x7F => out.push('\u{2421}'),
        code => {
            let _ = write!(out, "<U+{code:04X}>");
        }
    }
}

/// The closest of `candidates` to `name` (for "did you mean `$VW`?"), if one is close enough.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for cand in candidates {
        if cand == name {
            continue;
        }
        let d = if cand.to_lowercase() == lower {
            0
        } else {
            edit_distance(&lower, &cand.to_lowercase())
        };
        let limit = (name.chars().count() / 3).max(1);
        // Every character changed is no typo: `B` is not a slip for `A`, nor `Ab` for `B`.
        let shorter = name.chars().count().min(cand.chars().count());
        if d <= limit && (d == 0 || d < shorter) && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance where swapping two neighbouring characters counts as one edit (the
/// optimal-string-alignment distance), so `Nmae` is one edit from `Name`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in 0..=a.len() {
        d[at(i, 0)] = i;
    }
    for j in 0..=b.len() {
        d[at(0, j)] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[at(i - 1, j)] + 1)
                .min(d[at(i, j - 1)] + 1)
                .min(d[at(i - 1, j - 1)] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[at(i - 2, j - 2)] + 1);
            }
            d[at(i, j)] = best;
        }
    }
    d[at(a.len(), b.len())]
}

/// Whether `message` names the resource `r` in backquotes: `` `r` ``, `` `r.x` `` or
/// `` `$r` ``.
fn names_resource(message: &str, r: &str) -> bool {
    message.split('`').skip(1).step_by(2).any(|quoted| {
        let quoted = quoted.strip_prefix('$').unwrap_or(quoted);
        quoted == r
            || quoted
                .strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_a_near_name() {
        assert_eq!(did_you_mean("vw", ["VW", "VD", "Services"]), Some("VW"));
        assert_eq!(
            did_you_mean("Servces", ["VW", "Services"]),
            Some("Services")
        );
        assert_eq!(did_you_mean("zzz", ["VW", "Services"]), None);
        assert_eq!(did_you_mean("Nmae", ["Name", "Other"]), Some("Name"));
        // No suggestion that changes every character of a short name.
        assert_eq!(did_you_mean("B", ["A", "Xy"]), None);
        assert_eq!(did_you_mean("Ab", ["B", "Port"]), None);
        assert_eq!(did_you_mean("b", ["B"]), Some("B"));
        assert_eq!(did_you_mean("Prot", ["Port"]), Some("Port"));
    }

    #[test]
    fn a_resource_is_named_only_in_backquotes() {
        assert!(names_resource("`X` is undefined", "X"));
        assert!(names_resource("cannot output `A.b`", "A"));
        assert!(names_resource("`$Port` has no value", "Port"));
        assert!(!names_resource("cannot carry a PGP signature", "P"));
        assert!(!names_resource("`AB` is not defined", "A"));
    }
}
