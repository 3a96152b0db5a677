//! The abstract syntax tree of one CF2 file (Appendix A of the reference, as restored in
//! clarifications §1). Every node carries the [`Span`] of the text it came from.
//!
//! The parser bounds nesting depth ([`crate::parser::MAX_NESTING`]), so the recursive
//! functions that walk this tree (and the recursive `Drop` of its boxes) cannot overflow the
//! stack whatever the input.

use crate::span::Span;
use std::sync::Arc;

/// A parsed file: its top-level statements in source order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct File {
    pub statements: Vec<Statement>,
    /// Every macro definition of the file in source order, wherever it stands: a `def` is
    /// a statement, so it may be in any block. The parser meets them all, so nothing has to
    /// walk the tree again to find them.
    pub macros: Vec<Arc<MacroDef>>,
}

/// One statement of a block (a file's top level or a `{ ... }`).
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `private* a.b.c OP expr (OP expr)*`
    Resource(ResourceDef),
    /// `import(...)` used as a statement: the imported resources merge into this block.
    Import(Import),
    /// `if (...) then ... else ...` used as a statement: its block merges into this block.
    If(If),
    /// `name(...)` used as a statement (e.g. `warn(...)`, or a function returning a block).
    Call(Call),
    /// `def name(params) = body` (shared with [`File::macros`])
    Macro(Arc<MacroDef>),
}

impl Statement {
    pub fn span(&self) -> Span {
        match self {
            Statement::Resource(r) => r.span,
            Statement::Import(i) => i.span,
            Statement::If(i) => i.span,
            Statement::Call(c) => c.span,
            Statement::Macro(m) => m.span,
        }
    }
}

/// An identifier with its span.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: Arc<str>,
    pub span: Span,
}

/// `private* a.b.c OP expr (OP expr)*`. `path` has at least one element; `a.b.c OP v`
/// means `a ~> { b ~> { c OP v } }` (clarifications §4). `mutations` has at least one
/// element; in `X op1 e1 op2 e2`, `op2 e2` is applied on top of `op1 e1`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDef {
    pub private: bool,
    pub path: Vec<Ident>,
    pub mutations: Vec<Mutation>,
    /// The whole statement.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mutation {
    pub op: MutationOp,
    /// The span of the operator (`=>`, `~>`, `~(max)>`).
    pub op_span: Span,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MutationOp {
    /// `=>`
    Assign,
    /// `~>`
    Merge,
    /// `~(name)>`: a mutation function, named case-insensitively.
    Function(Ident),
}

/// `def name(params) = body`
#[derive(Debug, Clone, PartialEq)]
pub struct MacroDef {
    pub name: Ident,
    pub params: Vec<Ident>,
    pub body: Expr,
    pub span: Span,
}

/// `import(path)` or `import(path, signers)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub path: Box<Expr>,
    pub signers: Option<Box<Expr>>,
    pub span: Span,
}

/// `if (cond) then a else b`; `otherwise` is `None` without `else`.
#[derive(Debug, Clone, PartialEq)]
pub struct If {
    pub cond: Box<Expr>,
    pub then: Box<Expr>,
    pub otherwise: Option<Box<Expr>>,
    pub span: Span,
}

/// `name(args)`: a macro or a function (functions are named case-insensitively).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// A number as written: integers that fit in `i64` are `Int`, anything with a fractional
/// part is `Float`.
pub use cf2_value::Number;

/// A piece of a double-quoted string or of a regex literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text, with escapes already processed (for strings), or verbatim pattern text with
    /// only `\/` turned into `/` (for regexes).
    Text(String),
    /// `${ IDENT ( . Value )* }`: the expression is a [`ExprKind::Ref`] possibly wrapped in
    /// [`ExprKind::Select`]s.
    Interp(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A bare word (`simple123`, `entry-1`) or a single-quoted literal, escapes processed.
    Literal(String),
    /// A double-quoted string: text and `${...}` interpolations.
    String(Vec<Part>),
    Number(Number),
    Bool(bool),
    /// `/.../`: pattern text and `${...}` interpolations.
    Regex(Vec<Part>),
    /// `?`
    Undef,
    List(Vec<Expr>),
    /// `{ statements }`
    Block(Vec<Statement>),
    /// `$name`
    Ref(Ident),
    /// `base . selector`: the selector is any value; a number (or text spelling an integer)
    /// indexes a list, text names a block member. `$L.(0).1` is
    /// `Select(Select(Ref L, 0), 1)`.
    Select(Box<Expr>, Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    If(If),
    Call(Call),
    Import(Import),
    /// Stands where a parse error was reported, so the rest of the file can still be parsed.
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
    /// `=~`
    Match,
    /// `!~`
    NotMatch,
    /// `++`
    Concat,
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "||",
            BinaryOp::And => "&&",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Ge => ">=",
            BinaryOp::Gt => ">",
            BinaryOp::Match => "=~",
            BinaryOp::NotMatch => "!~",
            BinaryOp::Concat => "++",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
        }
    }
}

impl UnaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "!",
        }
    }
}
