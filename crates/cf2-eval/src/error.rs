//! Evaluation errors: a diagnostic plus the one distinction the evaluator itself needs
//! (`defined()` treats "there is no such resource" as false, and every other error as an
//! error).

use cf2_syntax::Diagnostic;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A reference or selector named something that does not exist.
    Missing,
    /// An undefined element of a list reached the output; the indices lead from the
    /// resource's list to the element, so the message can point at the element's source.
    UndefinedElement(Vec<usize>),
    /// A secret was to be given to a custom function: the compile fails whatever the
    /// function does with the error (a function that caught it would go on knowing which
    /// value is a secret).
    SecretRefused,
    Other,
}

#[derive(Clone, Debug)]
pub struct EvalError {
    pub diag: Box<Diagnostic>,
    pub kind: ErrorKind,
    /// Further diagnostics reported together (e.g. every syntax error of an imported file).
    pub more: Vec<Diagnostic>,
}

impl EvalError {
    pub fn new(diag: Diagnostic) -> EvalError {
        EvalError {
            diag: Box::new(diag),
            kind: ErrorKind::Other,
            more: Vec::new(),
        }
    }

    /// Adds `other`'s diagnostics to this error's `more`, up to `limit` of them, leaving
    /// out any that says the same thing at the same place as one already here (a mistake in
    /// a macro body met through two calls, which differ only in the call shown).
    pub fn absorb(&mut self, other: EvalError, limit: usize) {
        for d in std::iter::once(*other.diag).chain(other.more) {
            if self.more.len() >= limit {
                break;
            }
            if !same_mistake(&self.diag, &d) && !self.more.iter().any(|m| same_mistake(m, &d)) {
                self.more.push(d);
            }
        }
    }

    /// This error told as `diag` instead, its details (and further errors) left out, its
    /// kind kept: for an error met where the details would show a secret.
    pub fn told_as(self, diag: Diagnostic) -> EvalError {
        EvalError {
            diag: Box::new(diag),
            kind: self.kind,
            more: Vec::new(),
        }
    }

    pub fn missing(diag: Diagnostic) -> EvalError {
        EvalError {
            diag: Box::new(diag),
            kind: ErrorKind::Missing,
            more: Vec::new(),
        }
    }
}

impl From<Diagnostic> for EvalError {
    fn from(d: Diagnostic) -> EvalError {
        EvalError::new(d)
    }
}

pub type R<T> = Result<T, EvalError>;

/// Two diagnostics of one mistake: the same message at the same place.
pub fn same_mistake(a: &Diagnostic, b: &Diagnostic) -> bool {
    a.span == b.span && a.message == b.message
}
