//! The source map: every file loaded for a compile, by [`FileId`], with line/column lookup.

use crate::span::{FileId, Span};
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

/// One loaded source file. `name` is how diagnostics name it (the path as the user would
/// write it, relative to the working directory where possible).
///
/// Where its lines start is worked out only when a line or column is first asked for (for
/// a diagnostic): most files never need it, and batch mode loads many small ones.
///
/// The text of a clearsigned file is its signed text, whose dash-escaped lines have lost the
/// `- ` they have in the file ([`SourceFile::with_dash_escaped`]): on those lines, columns
/// and the line shown in an excerpt are the file's, so that they lead to the right place.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
    line_starts: OnceLock<Arc<[u32]>>,
    /// The 1-based lines, in increasing order, that start with [`DASH_ESCAPE`] in the file
    /// but not in `text`; `None` for every file that is not clearsigned.
    dash_escaped: Option<Arc<[u32]>>,
}

/// What a clearsignature puts before a line of the signed text that starts with `-`
/// (RFC 4880 §7.1).
pub const DASH_ESCAPE: &str = "- ";

impl SourceFile {
    pub fn new(name: impl Into<String>, text: Arc<str>) -> SourceFile {
        SourceFile {
            name: name.into(),
            text,
            line_starts: OnceLock::new(),
            dash_escaped: None,
        }
    }

    /// Marks `lines` (1-based, of `text`) as dash-escaped in the file `text` was read from:
    /// `text` is a clearsigned file's signed text, with each of those lines' [`DASH_ESCAPE`]
    /// removed (and its other lines, its line numbers, as in the file). Columns on them
    /// count it again, and an excerpt shows it.
    pub fn with_dash_escaped(mut self, mut lines: Vec<u32>) -> SourceFile {
        lines.sort_unstable();
        lines.dedup();
        self.dash_escaped = (!lines.is_empty()).then(|| lines.into());
        self
    }

    /// What the file has before 1-based line `line` of `text`: [`DASH_ESCAPE`] on a
    /// dash-escaped line of a clearsigned file, else nothing.
    fn removed_prefix(&self, line: usize) -> &'static str {
        let escaped = self.dash_escaped.as_deref().is_some_and(|lines| {
            u32::try_from(line).is_ok_and(|l| lines.binary_search(&l).is_ok())
        });
        if escaped {
            DASH_ESCAPE
        } else {
            ""
        }
    }

    /// The byte offset at which each line starts (the first is 0).
    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            // A byte-order mark is not a character of line 1: editors do not count it in
            // columns, and it is not shown.
            let bom = if self.text.starts_with('\u{FEFF}') {
                3
            } else {
                0
            };
            let mut starts = vec![bom];
            for (i, b) in self.text.bytes().enumerate() {
                if b == b'\n' {
                    starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
                }
            }
            starts.into()
        })
    }

    /// 1-based line and column (column counted in characters) of a byte offset, in the file
    /// (on a dash-escaped line, counting the `- ` the text does not have).
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let line_starts = self.line_starts();
        let line = match line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = line_starts.get(line).copied().unwrap_or(0) as usize;
        let end = (offset as usize).min(self.text.len());
        let col = self
            .text
            .get(start..end)
            .map(|s| s.chars().count())
            .unwrap_or(0);
        let prefix = self.removed_prefix(line + 1).chars().count();
        (line + 1, col + 1 + prefix)
    }

    /// The text of 1-based line `line` as the file has it (a dash-escaped line with its
    /// `- `), without its line terminator.
    pub fn line_text(&self, line: usize) -> Cow<'_, str> {
        let Some(text) = self.text_of_line(line) else {
            return Cow::Borrowed("");
        };
        match self.removed_prefix(line) {
            "" => Cow::Borrowed(text),
            prefix => Cow::Owned(format!("{prefix}{text}")),
        }
    }

    /// The text of 1-based line `line` of `text`, without its line terminator; `None` past
    /// the last line.
    fn text_of_line(&self, line: usize) -> Option<&str> {
        let line_starts = self.line_starts();
        let &start = line_starts.get(line.wrapping_sub(1))?;
        let end = line_starts
            .get(line)
            .map(|&e| e as usize)
            .unwrap_or(self.text.len());
        Some(
            self.text
                .get(start as usize..end)
                .unwrap_or("")
                .trim_end_matches(['\n', '\r']),
        )
    }

    pub fn line_count(&self) -> usize {
        self.line_starts().len()
    }
}

/// Anything that can hand out source files by id: the plain [`SourceMap`], or the
/// evaluator's loader. Diagnostics render through this.
pub trait Sources {
    fn file(&self, id: FileId) -> Option<&SourceFile>;

    fn name(&self, id: FileId) -> &str {
        self.file(id)
            .map(|f| f.name.as_str())
            .unwrap_or("<unknown>")
    }

    /// `NAME:LINE:COL` of the start of a span.
    fn location(&self, span: Span) -> String {
        match self.file(span.file) {
            Some(f) => {
                let (l, c) = f.line_col(span.start);
                format!("{}:{}:{}", f.name, l, c)
            }
            None => "<unknown>".to_string(),
        }
    }

    /// The source text a span covers.
    fn snippet(&self, span: Span) -> &str {
        self.file(span.file)
            .and_then(|f| f.text.get(span.start as usize..span.end as usize))
            .unwrap_or("")
    }
}

impl Sources for SourceMap {
    fn file(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }
}

/// All source files of a compile. Files are only ever added, so a [`FileId`] stays valid.
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, file: SourceFile) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        self.files.push(file);
        id
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let f = SourceFile::new("f", Arc::from("ab\n\nçd\r\nx"));
        assert_eq!(f.line_count(), 4);
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(2), (1, 3));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(4), (3, 1));
        assert_eq!(f.line_col(6), (3, 2));
        assert_eq!(f.line_col(9), (4, 1));
        assert_eq!(f.line_col(99), (4, 2));
        assert_eq!(f.line_text(1), "ab");
        assert_eq!(f.line_text(2), "");
        assert_eq!(f.line_text(3), "çd");
        assert_eq!(f.line_text(4), "x");
        assert_eq!(f.line_text(0), "");
        assert_eq!(f.line_text(5), "");
        let empty = SourceFile::new("e", Arc::from(""));
        assert_eq!(empty.line_count(), 1);
        assert_eq!(empty.line_col(0), (1, 1));
        let trailing = SourceFile::new("t", Arc::from("a\n"));
        assert_eq!(trailing.line_count(), 2);
        assert_eq!(trailing.line_col(2), (2, 1));
    }

    /// A clearsigned file's dash-escaped line: its columns and its text are the file's,
    /// `- ` included; the other lines are as they are.
    #[test]
    fn dash_escaped_lines_count_the_escape() {
        let f =
            SourceFile::new("s", Arc::from("\n-x => 1\ny\n--z\n")).with_dash_escaped(vec![4, 2, 9]);
        assert_eq!(f.line_col(1), (2, 3));
        assert_eq!(f.line_col(2), (2, 4));
        assert_eq!(f.line_col(9), (3, 1));
        assert_eq!(f.line_col(11), (4, 3));
        assert_eq!(f.line_text(2), "- -x => 1");
        assert_eq!(f.line_text(3), "y");
        assert_eq!(f.line_text(4), "- --z");
        // A line past the end has no text, escaped or not.
        assert_eq!(f.line_text(9), "");
        assert_eq!(SourceFile::new("p", Arc::from("-a")).line_col(1), (1, 2));
    }
}
