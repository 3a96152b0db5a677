//! The lexer (to be written). Public helpers used by other crates:

/// True if `s` can be written as a bare word and reads back as the same literal: an
/// identifier-like word (letters, digits, `_`, `-` inside, non-ASCII) that is not a keyword
/// (`true`, `false`, `if`, `then`, `else`, `import`, `def`, `private`).
pub fn is_bare_literal(s: &str) -> bool {
    let _ = s;
    false
}

/// True if `s` is a valid resource name (identifier).
pub fn is_identifier(s: &str) -> bool {
    let _ = s;
    false
}
