//! CF2 source text: spans and the source map, the lexer and parser, the AST, and the
//! diagnostics every later stage reports through.
//!
//! This crate knows nothing of evaluation, files on disk or output formats.

pub mod ast;
pub mod diagnostic;
pub mod lexer;
pub mod parser;
pub mod source;
pub mod span;

pub use diagnostic::{visible, Diagnostic, Label, Severity};
pub use parser::{parse, MAX_NESTING};
pub use source::{SourceFile, SourceMap, Sources};
pub use span::{FileId, Span};
