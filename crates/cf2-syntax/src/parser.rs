//! The parser: recursive descent over the grammar of clarifications §1, driving the lexer
//! token by token.
//!
//! Newlines. A newline (or a `,`) separates statements, list elements and arguments, but a
//! newline ends something only where it can end:
//! - newlines are skipped after anything that cannot end an expression: a binary or prefix
//!   operator, `=>`, `~>`, `~(name)>`, `.`, `if`, the `(cond)` of an `if`, `then`, `else`,
//!   `private`, and before and after the `=` of a `def`; after `import`, `def`, `def name`
//!   and inside `~(name)>` too, unless the next line starts a statement of its own;
//! - inside `( )` around an expression (and inside `${ }`) newlines are ignored;
//! - after a complete expression, if the first token on the next non-blank line can only
//!   continue it (a binary operator, `.`, `else`, or a mutation operator `=>`, `~>`, `~`
//!   continuing a resource definition), the expression continues there. Inside a list or
//!   the arguments of a call, `-` and `/` at the start of a line begin a new element (a
//!   negative number, a regular expression) rather than continuing the previous one.
//!
//! Errors. Each error is reported once, as a [`Diagnostic`]; the statement in which it
//! occurred is abandoned up to the next separator at its own bracket depth (or the `}`
//! closing its block), and parsing resumes there; an error in an element of a list or an
//! argument list abandons only that element, up to the next separator of the list. Nesting deeper than [`MAX_NESTING`] is an
//! error: the parser never recurses deeper than that, and never builds a deeper tree (a
//! chain of `n` binary operators or selectors is `n` levels deep).
//!
//! Stack use. The recursive functions keep their frames small (every diagnostic is built in
//! a separate, cold function), so that [`MAX_NESTING`] levels fit in well under 1 MiB of
//! stack even in an unoptimised build.

use crate::ast::{
    BinaryOp, Call, Expr, ExprKind, File, Ident, If, Import, MacroDef, Mutation, MutationOp,
    Number, Part, ResourceDef, Statement, UnaryOp,
};
use crate::diagnostic::{did_you_mean, Diagnostic};
use crate::lexer::{is_identifier, is_keyword, string_end, unescape, Lexer, Stop, Tok, Token};
use crate::span::{FileId, Span};
use std::sync::Arc;

/// The deepest nesting of brackets, blocks and operators the parser accepts; deeper input is
/// a clean error rather than a stack overflow.
pub const MAX_NESTING: usize = 256;

/// After this many syntax errors the rest of a file is not examined.
const MAX_ERRORS: usize = 100;

/// Parses one file. Always returns a tree (with [`ExprKind::Error`] where something could
/// not be parsed) and every syntax error found, not just the first.
pub fn parse(file: FileId, text: &str) -> (File, Vec<Diagnostic>) {
    if let Some(nul) = text.find('\0') {
        let d = Diagnostic::error("the file contains a NUL byte, so it is not a CF2 text file")
            .at(Span::new(file, nul, nul + 1))
            .with_label("NUL byte")
            .hint("check that the right file is being compiled");
        return (File::default(), vec![d]);
    }
    // A UTF-8 byte order mark is not part of the text.
    let start = if text.starts_with('\u{FEFF}') { 3 } else { 0 };
    let mut p = Parser {
        file,
        lex: Lexer::new(text, start),
        diags: Vec::new(),
        mode: Mode::Stmt,
        depth: 0,
        brackets: Vec::new(),
        gave_up: false,
        vals: Vec::new(),
        stmts: Vec::new(),
        macros: Vec::new(),
        unclosed_reported: false,
        cut: None,
        scope: Vec::new(),
        scope_from: 0,
    };
    let (statements, _) = p.statements(false);
    // A `def` is recorded when its body is parsed, so one nested in another's body comes
    // first; source order is the order of their starts.
    let mut macros = p.macros;
    macros.sort_by_key(|m| m.span.start);
    (File { statements, macros }, p.diags)
}

/// How newlines are treated where the parser stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// In a block or at the top level: a newline separates statements.
    Stmt,
    /// In a list, call arguments or macro parameters: a newline separates elements.
    List,
    /// In `( )` around an expression, or in `${ }`: newlines are ignored.
    Skip,
}

/// An error has been reported; the caller abandons what it was parsing.
#[derive(Debug)]
struct Fail;

type R<T> = Result<T, Fail>;

/// An expression and the depth of its tree (a leaf is 0).
struct Node {
    expr: Expr,
    depth: usize,
}

/// A definition read as (the end of) the value of the one before it.
struct Swallowed {
    /// The operator that ends the line before (`+`, `.`, `=~`), or `None` when the whole
    /// value is the name.
    operator: Option<Span>,
    /// The name that starts the swallowed definition.
    name: Span,
    /// Where its line starts.
    line: usize,
}

/// Where a list or argument list stands, for recovery from an error in one of its elements.
struct Level {
    /// Its opening bracket.
    open: Token,
    /// The number of open brackets, its own included.
    brackets: usize,
    /// The parser's nesting depth inside it.
    depth: usize,
    /// The length of the resource path inside it.
    scope: usize,
}

impl Level {
    fn new(p: &Parser<'_>, open: Token) -> Level {
        Level {
            open,
            brackets: p.brackets.len(),
            depth: p.depth,
            scope: p.scope.len(),
        }
    }
}

/// A run of one associative operator longer than this is joined as a balanced tree
/// ([`Parser::reduce_run`]); shorter runs (all ordinary code) nest to the left, as written.
const BALANCE_FROM: u32 = 32;

/// A run of one associative operator being parsed (see [`Parser::binary`]).
struct Run {
    op: BinaryOp,
    /// Where the run's first operand is on the value stack.
    first: usize,
    /// Operators reduced as they came (at most [`BALANCE_FROM`]).
    reduced: u32,
    /// The operators after those, whose operands wait on the value stack.
    pending: Vec<Token>,
}

/// Precedence levels (clarifications §1): higher binds tighter.
const P_OR: u8 = 1;
const P_AND: u8 = 2;
const P_CMP: u8 = 3;
const P_MATCH: u8 = 4;
const P_CONCAT: u8 = 5;
const P_SUM: u8 = 6;
const P_PRODUCT: u8 = 7;

fn binop(kind: Tok) -> Option<(BinaryOp, u8)> {
    Some(match kind {
        Tok::OrOr => (BinaryOp::Or, P_OR),
        Tok::AndAnd => (BinaryOp::And, P_AND),
        Tok::Lt => (BinaryOp::Lt, P_CMP),
        Tok::Le => (BinaryOp::Le, P_CMP),
        Tok::EqEq => (BinaryOp::Eq, P_CMP),
        Tok::Ne => (BinaryOp::Ne, P_CMP),
        Tok::Ge => (BinaryOp::Ge, P_CMP),
        Tok::Gt => (BinaryOp::Gt, P_CMP),
        Tok::MatchOp => (BinaryOp::Match, P_MATCH),
        Tok::NotMatchOp => (BinaryOp::NotMatch, P_MATCH),
        Tok::PlusPlus => (BinaryOp::Concat, P_CONCAT),
        Tok::Plus => (BinaryOp::Add, P_SUM),
        Tok::Minus => (BinaryOp::Sub, P_SUM),
        Tok::Star => (BinaryOp::Mul, P_PRODUCT),
        Tok::Slash => (BinaryOp::Div, P_PRODUCT),
        _ => return None,
    })
}

/// The hint for `NAME OP= value` (`+=`, `-=`, ...), which CF2 does not have: the mutation
/// that does what was meant, chosen by what the value starts with (`after`).
fn compound_assignment_hint(op: &str, name: &str, after: &str) -> String {
    let value = after.trim_start().chars().next();
    let has_no = format!("CF2 has no `{op}=`");
    match (op, value) {
        ("+", Some('{')) => {
            format!("{has_no}: to add members to a block, merge it: `{name} ~> {{ ... }}`")
        }
        ("+" | "++", Some('[')) => {
            format!("{has_no}: to add elements to a list, `{name} ~(append)> [...]`")
        }
        ("-", Some('[')) => {
            format!("{has_no}: to take elements out of a list, `{name} ~(remove)> [...]`")
        }
        ("+", _) => format!(
            "{has_no}: to add to a number, `{name} ~(sum)> value` (the `~(sum)>` of every file add up)"
        ),
        ("-", _) => format!("{has_no}: to take from a number, `{name} ~(sum)> -value`"),
        _ => format!(
            "{has_no}: a resource is defined with `=>`, or combined with what lies below by a mutation function such as `~(sum)>` or `~(append)>`"
        ),
    }
}

fn is_binop(_: &Parser<'_>, t: Token) -> bool {
    binop(t.kind).is_some()
}

fn is_mutation_op(_: &Parser<'_>, t: Token) -> bool {
    matches!(t.kind, Tok::Arrow | Tok::MergeArrow | Tok::Tilde)
}

fn is_dot(_: &Parser<'_>, t: Token) -> bool {
    t.kind == Tok::Dot
}

fn is_else(p: &Parser<'_>, t: Token) -> bool {
    p.is_word(t, "else")
}

/// The syntax errors, built into diagnostics by [`Parser::fail`] (out of the recursive
/// functions, to keep their stack frames small).
enum E<'x> {
    /// "expected {1}, found {0}"
    Expected(Token, &'static str),
    NoSeparator(Token, Option<&'x Statement>),
    Unmatched(Token),
    StatementRef(Token),
    KeywordName(Token),
    IdentKeyword(Token, &'static str, &'static str),
    IdentDash(Token, &'static str),
    NoMutationOp(Token, &'x [Ident]),
    TildeNoParen(Token),
    TildeNoClose(Token, &'x Ident),
    TildeNoGt(Token, &'x Ident),
    DefNoParen(Token, &'x Ident),
    DefNoEq(Token, &'x Ident),
    ChainedComparison(Token, BinaryOp),
    AfterMatch(Token, BinaryOp, u8),
    MatchSelect(Token, BinaryOp),
    TooDeep(Span),
    /// A run of an operator that does not regroup (`+`, `-`, ...), too long: each operand
    /// nests inside the next.
    LongRun(Span, BinaryOp),
    NumberTooLarge(Span),
    DollarNoName(Token),
    UnclosedLiteral(Token),
    ValueExpected(Token),
    EmptyBrackets(Token),
    NeverClosed(Token),
    /// (a block's `{`, the token after its last statement that shows it was never closed)
    BlockCut(Token, Token),
    /// (opening bracket, token found, what was expected)
    MissingCloser(Token, Token, &'static str),
    /// (opening bracket, token found, the function called, or `None` for `import`)
    ArgsCloser(Token, Token, Option<&'x Ident>),
    /// A closing bracket of another kind where an element of a list or an argument list
    /// may start: (opening bracket, the closer, the function called or `None`).
    WrongCloser(Token, Token, Option<&'x Ident>),
    ImportNoParen(Token),
    ImportArity(Span),
    IfNoParen(Token),
    /// (an operator, `.`, `if`, `then` or `else`, the end of the file or the closing
    /// bracket or `,` found where what must follow it was expected)
    NoOperand(Token, Token),
    IfNoThen(Token, Token),
    Unterminated(Token, bool),
    InterpName(Token),
    InterpUnclosed(usize),
    InterpExpected(Token, usize),
    /// (the mutation operator, the resource, the value read from a later line if any)
    MissingValue(Span, &'x [Ident], Option<Span>),
    /// (the operator ending a line, the resource, the definition on the next line read as
    /// its operand)
    DanglingOperator(Span, &'x [Ident], Span),
    /// A statement starting with a quoted text (a JSON member, `"port": 9100`?).
    QuotedName(Token),
    /// A statement starting with `then` or `else`.
    StrayBranch(Token),
    /// A `/*`.
    BlockComment(Token),
    /// (the `${`, the `$` of another `${` met before its `}`)
    InterpNotClosed(usize, Token),
    /// (`then` or `else`, the branch value, the mutation operator after it)
    BranchDefinition(Token, Span, Token),
}

struct Parser<'a> {
    file: FileId,
    lex: Lexer<'a>,
    diags: Vec<Diagnostic>,
    mode: Mode,
    /// How deeply the parser has recursed into nested constructs.
    depth: usize,
    /// The brackets opened and not yet closed (kind and span of the opening one).
    brackets: Vec<(Tok, Span)>,
    /// Too many errors: the rest of the file is skipped.
    gave_up: bool,
    /// The expressions parsed and not yet placed in their parent.
    vals: Vec<Node>,
    /// The statements parsed and not yet placed in their block (see [`Parser::statements`]).
    stmts: Vec<Statement>,
    /// Every macro definition met so far (see [`File::macros`]).
    macros: Vec<Arc<MacroDef>>,
    /// A "never closed" error has been reported.
    unclosed_reported: bool,
    /// Set by [`Parser::statements`] when it ends a block at a token that shows the block
    /// was never closed (see [`Parser::cuts_block`]); taken by [`Parser::block`].
    cut: Option<Token>,
    /// The path of the resource being defined where the parser stands, from `scope_from`
    /// on (see [`Parser::resource_name`]): the names of the definitions it is in, and the
    /// position of each list element it is in.
    scope: Vec<Seg>,
    /// Where the resource path starts in `scope`: a macro's body belongs to no resource.
    scope_from: usize,
}

/// A part of the path of the resource being defined.
#[derive(Debug, Clone, Copy)]
enum Seg {
    /// A name of a definition's path.
    Name(Span),
    /// The position of an element in a list (`a.1.e` for `e` in `a => [x, {e => 1}]`).
    Index(usize),
}

impl<'a> Parser<'a> {
    // ----- tokens -------------------------------------------------------------------------

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start, end)
    }

    fn tspan(&self, t: Token) -> Span {
        self.span(t.start, t.end)
    }

    fn text(&self, t: Token) -> &'a str {
        self.lex.src().get(t.start..t.end).unwrap_or("")
    }

    /// The next token; in [`Mode::Skip`], newlines are consumed first.
    fn peek(&mut self) -> Token {
        if self.mode == Mode::Skip {
            self.skip_nl();
        }
        self.lex.peek_nth(0)
    }

    /// Consumes the token [`Parser::peek`] returns.
    fn bump(&mut self) -> Token {
        self.peek();
        self.lex.next_token()
    }

    fn skip_nl(&mut self) {
        while self.lex.peek_nth(0).kind == Tok::Newline {
            self.lex.next_token();
        }
    }

    fn skip_separators(&mut self) {
        while matches!(self.lex.peek_nth(0).kind, Tok::Newline | Tok::Comma) {
            self.lex.next_token();
        }
    }

    /// True if the tokens from the `n`th on are `Name =>`, `Name ~>`, `Name ~`, `Name .` or
    /// `private Name`: the start of a resource definition.
    fn starts_definition(&mut self, n: usize) -> bool {
        let t = self.lex.peek_nth(n);
        if t.kind != Tok::Word {
            return false;
        }
        let next = self.lex.peek_nth(n + 1).kind;
        match self.text(t) {
            "private" => next == Tok::Word,
            w if is_keyword(w) => false,
            _ => matches!(next, Tok::Arrow | Tok::MergeArrow | Tok::Tilde | Tok::Dot),
        }
    }

    /// True if the next token, possibly after newlines, satisfies `pred` and may continue
    /// what was just parsed; the newlines are then consumed.
    fn cont(&mut self, pred: fn(&Self, Token) -> bool) -> bool {
        let t = self.lex.peek_nth(0);
        if t.kind != Tok::Newline {
            return pred(self, t);
        }
        let mut i = 1;
        let mut t = self.lex.peek_nth(i);
        while t.kind == Tok::Newline {
            i += 1;
            t = self.lex.peek_nth(i);
        }
        let starts_element = self.mode == Mode::List && matches!(t.kind, Tok::Minus | Tok::Slash);
        // A line starting with `/*` is a (mistaken) comment, not a division.
        let block_comment = t.kind == Tok::Slash && self.slash_star(t);
        if pred(self, t) && !starts_element && !block_comment {
            self.skip_nl();
            true
        } else {
            false
        }
    }

    /// Where a statement cannot end (after `import`, `def`, `def name`, and inside `~(name)>`):
    /// skips the newlines ahead if the token after them is what must come next
    /// (`expected`, given that token's index), or if it does not start a statement of its
    /// own. Otherwise the newline stays, so that the error is reported at the end of the
    /// line and the next line is parsed as the statement it starts.
    fn skip_nl_within(&mut self, expected: fn(&mut Self, usize) -> bool) {
        if self.lex.peek_nth(0).kind != Tok::Newline {
            return;
        }
        let mut i = 1;
        while self.lex.peek_nth(i).kind == Tok::Newline {
            i += 1;
        }
        if expected(self, i) || !self.starts_statement(i) {
            self.skip_nl();
        }
    }

    /// True if the `n`th token ahead plainly starts a statement (or ends the block or file).
    fn starts_statement(&mut self, n: usize) -> bool {
        let t = self.lex.peek_nth(n);
        match t.kind {
            Tok::Eof | Tok::RBrace => true,
            Tok::Word => {
                matches!(self.text(t), "if" | "import" | "def" | "private")
                    || self.lex.peek_nth(n + 1).kind == Tok::LParen
                    || self.starts_definition(n)
            }
            _ => false,
        }
    }

    /// After `op` (an operator, `.`, `if`, `then`, `else`) and the newlines after it: an
    /// error at `op` if the file ends or a `,` or a closing bracket comes, which nothing
    /// that must follow `op` starts (`Disk => 100 +` at the end of the file), rather than
    /// at what comes (past the end of the file, or a `}` on a later line).
    fn operand_after(&mut self, op: Token) -> R<()> {
        let t = self.lex.peek_nth(0);
        match t.kind {
            Tok::Eof | Tok::Comma | Tok::RBrace | Tok::RParen | Tok::RBracket => {
                Err(self.fail(E::NoOperand(op, t)))
            }
            _ => Ok(()),
        }
    }

    /// True if the token after the next one continues a resource definition (`=>`, `~>`,
    /// `~`, `.`): the next word is meant as a resource name.
    fn starts_definition_after_keyword(&mut self) -> bool {
        let t = self.lex.peek_nth(1);
        is_mutation_op(self, t) || t.kind == Tok::Dot
    }

    /// True if the `/` token `t` is the start of `/*`.
    fn slash_star(&self, t: Token) -> bool {
        self.lex
            .src()
            .get(t.end..)
            .is_some_and(|r| r.starts_with('*'))
    }

    fn is_word(&self, t: Token, w: &str) -> bool {
        t.kind == Tok::Word && self.text(t) == w
    }

    // ----- nesting ------------------------------------------------------------------------

    /// Enters a nested construct that starts at `at`.
    fn enter(&mut self, at: Token) -> R<()> {
        if self.depth >= MAX_NESTING {
            let span = self.tspan(at);
            return Err(self.fail(E::TooDeep(span)));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Pushes an expression whose tree is `depth` deep; too deep is an error at `at`.
    fn push_node(&mut self, kind: ExprKind, span: Span, depth: usize, at: Span) -> R<()> {
        if depth > MAX_NESTING {
            return Err(self.fail(E::TooDeep(at)));
        }
        self.vals.push(Node {
            expr: Expr { kind, span },
            depth,
        });
        Ok(())
    }

    fn push_leaf(&mut self, kind: ExprKind, span: Span) {
        self.vals.push(Node {
            expr: Expr { kind, span },
            depth: 0,
        });
    }

    fn open_bracket(&mut self, t: Token) {
        let span = self.tspan(t);
        self.brackets.push((t.kind, span));
    }

    fn close_bracket(&mut self) {
        self.brackets.pop();
    }

    /// Abandons a statement: skips to the next separator at bracket depth `h0`, or to the
    /// `}` closing the current block (not consumed), or to the end of the file. A `(` or
    /// `[` the statement left open does not hide the statements after it: skipping also
    /// stops before a line that plainly starts a resource definition (`Name =>`).
    #[inline(never)]
    fn recover(&mut self, h0: usize, in_block: bool) {
        if self.gave_up {
            let end = self.lex.src().len();
            self.lex.reset(end);
            return;
        }
        let left_open = self.brackets.len();
        // Where the statement went wrong: a quote on that line that runs past it is most
        // likely an apostrophe written in quoted text (`'it's here'`), not an opening one.
        let wrong_at = self.lex.resume_pos();
        loop {
            let t = self.lex.peek_nth(0);
            if matches!(t.kind, Tok::SQuoted | Tok::SQuoteOpen) {
                let src = self.lex.src();
                // Not the token found unexpected, which is quoted text where the error says so.
                let same_line = t.start > wrong_at
                    && src
                        .get(wrong_at..t.start)
                        .is_some_and(|before| !before.contains('\n'));
                let line_end = src
                    .get(t.start..)
                    .and_then(|rest| rest.find('\n'))
                    .map(|i| t.start + i)
                    .filter(|end| *end < t.end || t.kind == Tok::SQuoteOpen);
                if let (true, Some(end)) = (same_line, line_end) {
                    // Skipped with the rest of its line, so the statements the quote would
                    // swallow are parsed (and their own errors reported).
                    self.lex.reset(end);
                    continue;
                }
            }
            match t.kind {
                Tok::Eof => return,
                Tok::Newline | Tok::Comma if self.brackets.len() <= h0 => return,
                Tok::Newline
                    if self.brackets.len() <= left_open && self.unclosed_before_definition() =>
                {
                    self.brackets.truncate(h0);
                    return;
                }
                Tok::LParen | Tok::LBracket | Tok::LBrace => {
                    self.lex.next_token();
                    self.open_bracket(t);
                }
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    if self.close_opened_above(h0, t) {
                        // Closed a bracket opened in the statement.
                    } else if t.kind == Tok::RBrace && in_block {
                        // Closes the block the statement is in.
                        return;
                    } else {
                        // Unmatched: taken as closing the innermost bracket, if any.
                        self.lex.next_token();
                        if self.brackets.len() > h0 {
                            self.close_bracket();
                        }
                    }
                }
                Tok::DQuote => {
                    self.lex.next_token();
                    self.lex.skip_string();
                }
                Tok::SQuoteOpen => {
                    let end = self.lex.src().len();
                    self.lex.reset(end);
                    return;
                }
                _ => {
                    self.lex.next_token();
                }
            }
        }
    }

    // ----- statements ---------------------------------------------------------------------

    /// Parses statements up to the end of the file (top level) or up to the `}` closing the
    /// block (not consumed). Returns the depth of the deepest value.
    /// The statements are gathered on `self.stmts` (shared by all blocks, so that a
    /// block's vector is allocated once, at its final size) and returned with that depth.
    fn statements(&mut self, in_block: bool) -> (Vec<Statement>, usize) {
        let base = self.stmts.len();
        let saved = self.mode;
        let mut depth = 0;
        loop {
            self.mode = Mode::Stmt;
            let before = self.lex.peek_nth(0);
            self.skip_separators();
            let t = self.lex.peek_nth(0);
            if t.kind == Tok::Eof || (in_block && t.kind == Tok::RBrace) {
                break;
            }
            if in_block && self.cuts_block(t, before != t, saved) {
                if t.kind == Tok::LBrace {
                    // The separators before the next element are the list's.
                    self.lex.reset(before.start);
                }
                self.cut = Some(t);
                break;
            }
            let h0 = self.brackets.len();
            let d0 = self.depth;
            let v0 = self.vals.len();
            let scope = (self.scope.len(), self.scope_from);
            match self.statement() {
                Ok(d) => {
                    depth = depth.max(d);
                    let n = self.lex.peek_nth(0);
                    let ends = matches!(n.kind, Tok::Newline | Tok::Comma | Tok::Eof)
                        || (in_block
                            && (n.kind == Tok::RBrace || self.cuts_block(n, false, saved)));
                    if !ends {
                        let text_run = self.no_separator_error(n, base);
                        self.recover(h0, in_block);
                        // Unquoted text with a comma in it (`Welcome to web1, authorised
                        // users only`): one error, not one per comma.
                        while text_run
                            && self.lex.peek_nth(0).kind == Tok::Comma
                            && !self.starts_definition(1)
                        {
                            self.lex.next_token();
                            self.recover(h0, in_block);
                        }
                    }
                }
                Err(Fail) => self.recover(h0, in_block),
            }
            self.depth = d0;
            self.brackets.truncate(h0);
            self.vals.truncate(v0);
            self.scope.truncate(scope.0);
            self.scope_from = scope.1;
            // Never loop without progress.
            let n = self.lex.peek_nth(0);
            if n == t && n.kind != Tok::Eof && !(in_block && n.kind == Tok::RBrace) {
                self.lex.next_token();
            }
        }
        self.mode = saved;
        // Moved (one copy of the whole run) into a vector of exactly their number.
        let base = base.min(self.stmts.len());
        let out = if base == 0 {
            // (`split_off(0)` would hand over the scratch vector with its capacity.)
            let mut out = Vec::with_capacity(self.stmts.len());
            out.append(&mut self.stmts);
            out
        } else {
            self.stmts.split_off(base)
        };
        (out, depth)
    }

    /// Whether the token `t`, where a statement of a block may start (after separators if
    /// `after_separator`), shows that the block was never closed: a `]` or `)` that closes
    /// a construct around the block (`[ {` … `]`), or, in a block written as an element of
    /// a list or argument list (`mode` is the list's), a `{` after a separator, which no
    /// statement starts but the next element may (`[ {` … `,` `{` … `} ]`), if it stands
    /// no further right than the block's `{` (one further right is more likely a mistake
    /// inside the block).
    fn cuts_block(&self, t: Token, after_separator: bool, mode: Mode) -> bool {
        let opener = match t.kind {
            Tok::RBracket => Tok::LBracket,
            Tok::RParen => Tok::LParen,
            Tok::LBrace => {
                let src = self.lex.src();
                let column = |at: usize| {
                    src.get(line_start(src, at)..at)
                        .map_or(0, |s| s.chars().count())
                };
                return after_separator
                    && mode == Mode::List
                    && self
                        .brackets
                        .last()
                        .is_some_and(|(_, open)| column(t.start) <= column(open.start as usize));
            }
            _ => return false,
        };
        // The block's own `{` is the last bracket open.
        self.open_below(self.brackets.len().saturating_sub(1), opener)
    }

    /// Reports [`E::NoSeparator`] after the last statement from `base` on in `self.stmts`.
    /// Returns whether that statement's value is a bare word followed by another word: the
    /// rest of the line is probably unquoted text.
    #[cold]
    #[inline(never)]
    fn no_separator_error(&mut self, n: Token, base: usize) -> bool {
        let stmts = std::mem::take(&mut self.stmts);
        let last = stmts.get(base..).and_then(<[_]>::last);
        self.fail(E::NoSeparator(n, last));
        let text_run = matches!(n.kind, Tok::Word | Tok::Number)
            && matches!(last, Some(Statement::Resource(r))
                if r.mutations.last().is_some_and(|m| matches!(m.value.kind, ExprKind::Literal(_))));
        self.stmts = stmts;
        text_run
    }

    /// Parses one statement onto `self.stmts`; returns the depth of its deepest value.
    fn statement(&mut self) -> R<usize> {
        let t = self.lex.peek_nth(0);
        match t.kind {
            Tok::Word => match self.text(t) {
                "if" => {
                    self.if_expr(true)?;
                    Ok(self.pop_statement())
                }
                "import" => {
                    self.import()?;
                    Ok(self.pop_statement())
                }
                "def" => self.macro_def(),
                "private" => self.resource(),
                // `else => 1` names a resource; `else { ... }` is a stranded branch.
                "then" | "else" if !self.starts_definition_after_keyword() => {
                    Err(self.fail(E::StrayBranch(t)))
                }
                "then" | "else" | "true" | "false" => Err(self.fail(E::KeywordName(t))),
                _ if self.lex.peek_nth(1).kind == Tok::LParen => {
                    self.call()?;
                    Ok(self.pop_statement())
                }
                _ => self.resource(),
            },
            Tok::Ref => Err(self.fail(E::StatementRef(t))),
            Tok::RBrace | Tok::RParen | Tok::RBracket => Err(self.fail(E::Unmatched(t))),
            Tok::Slash if self.slash_star(t) => {
                self.fail(E::BlockComment(t));
                // One error for the whole comment: resume after its `*/`.
                let src = self.lex.src();
                let end = src
                    .get(t.end + 1..)
                    .and_then(|r| r.find("*/"))
                    .map_or(src.len(), |i| t.end + 1 + i + 2);
                self.lex.reset(end);
                Err(Fail)
            }
            Tok::DQuote | Tok::SQuoted => Err(self.fail(E::QuotedName(t))),
            _ => Err(self.fail(E::Expected(
                t,
                "a resource definition (`Name => value`) or a statement",
            ))),
        }
    }

    /// Moves the `if`, `import` or call on top of the value stack onto `self.stmts` as a statement.
    #[inline(never)]
    fn pop_statement(&mut self) -> usize {
        let Some(n) = self.vals.pop() else {
            return 0;
        };
        match n.expr.kind {
            ExprKind::If(i) => self.stmts.push(Statement::If(i)),
            ExprKind::Import(i) => self.stmts.push(Statement::Import(i)),
            ExprKind::Call(c) => self.stmts.push(Statement::Call(c)),
            _ => {}
        }
        n.depth
    }

    /// A name: a word without `-` that is not a keyword. `kind` says what it names, for
    /// messages ("resource names"); `expected` is what to call it if it is missing.
    fn ident(&mut self, kind: &'static str, expected: &'static str) -> R<Ident> {
        let t = self.peek();
        if t.kind != Tok::Word {
            return Err(self.fail(E::Expected(t, expected)));
        }
        let w = self.text(t);
        if is_keyword(w) {
            return Err(self.fail(E::IdentKeyword(t, kind, expected)));
        }
        if w.contains('-') {
            // Reported, but parsing goes on.
            self.fail(E::IdentDash(t, kind));
        }
        self.bump();
        Ok(Ident {
            name: Arc::from(w),
            span: self.tspan(t),
        })
    }

    /// `private* a.b.c OP expr (OP expr)*`
    fn resource(&mut self) -> R<usize> {
        let first = self.lex.peek_nth(0);
        // Nearly every definition has a one-name path and a single mutation: sized for that
        // (rather than the four elements a `Vec` reserves when it first grows).
        let mut path = Vec::with_capacity(1);
        let private = self.resource_path(&mut path)?;
        // (Left for the caller to truncate on an early error return.)
        let s0 = self.scope.len();
        self.scope.extend(path.iter().map(|i| Seg::Name(i.span)));
        let mut mutations = Vec::with_capacity(1);
        let mut depth = 0;
        let mut failed = false;
        loop {
            if !self.cont(is_mutation_op) {
                if mutations.is_empty() {
                    let t = self.lex.peek_nth(0);
                    return Err(self.fail(E::NoMutationOp(t, &path)));
                }
                break;
            }
            self.mutation_op(&mut mutations)?;
            let op = mutations
                .last()
                .map_or(Span::new(self.file, 0, 0), |m| m.op_span);
            self.skip_nl();
            let next = self.lex.peek_nth(0);
            if matches!(next.kind, Tok::Eof | Tok::RBrace | Tok::Comma) {
                // `Memory =>` at the end of the file or block: say which resource.
                self.fail(E::MissingValue(op, &path, None));
                failed = true;
            } else {
                failed = self.binary(P_OR).is_err();
                let swallowed = if failed {
                    None
                } else {
                    self.swallowed_definition(op)
                };
                if let Some(swallowed) = swallowed {
                    match swallowed.operator {
                        None => self.fail(E::MissingValue(op, &path, Some(swallowed.name))),
                        Some(at) => self.fail(E::DanglingOperator(at, &path, swallowed.name)),
                    };
                    failed = true;
                    // Resume at the end of the line before the one read as the value (the
                    // rest of a failed statement's line is skipped): that line is a
                    // definition of its own.
                    let resume = swallowed.line.saturating_sub(1).max(op.end as usize);
                    self.lex.reset(resume);
                }
            }
            // After an error, keep the resource (so later stages know it exists), valued as
            // an error.
            depth = depth.max(self.pop_mutation(&mut mutations, failed));
            if failed {
                break;
            }
        }
        self.scope.truncate(s0);
        self.finish_resource(first, private, path, mutations);
        if failed {
            Err(Fail)
        } else {
            Ok(depth)
        }
    }

    /// `private* a.b.c` of a resource definition, into `path`; returns whether it is private.
    #[inline(never)]
    fn resource_path(&mut self, path: &mut Vec<Ident>) -> R<bool> {
        let mut private = false;
        loop {
            let t = self.lex.peek_nth(0);
            if !self.is_word(t, "private") {
                break;
            }
            self.bump();
            self.skip_nl();
            private = true;
        }
        let what = if private {
            "a resource name after `private`"
        } else {
            "a resource name"
        };
        path.push(self.ident("resource names", what)?);
        while self.cont(is_dot) {
            self.bump();
            self.skip_nl();
            path.push(self.ident("resource names", "a resource name after `.`")?);
        }
        Ok(private)
    }

    /// The definition on a later line that the value just parsed (on top of the value
    /// stack) after the mutation operator `op` swallowed, if any: a name (`Location`,
    /// `Web.Port`) that starts its line, on a later line than `op`, ends the value, and is
    /// followed on its line by another mutation operator. `Memory =>` with its value
    /// forgotten, then `Location => 'rack 4'`, would otherwise read as the chain
    /// `Memory => Location => 'rack 4'`; `A => 1 +`, then `B => 2`, as `A => 1 + B => 2`, which
    /// gives `A` the value 2 and loses `B`. A chain whose value on the next line is no
    /// name (`X =>` then `[a] ~(append)> [b]`) stays.
    #[inline(never)]
    fn swallowed_definition(&mut self, op: Span) -> Option<Swallowed> {
        let next = self.lex.peek_nth(0);
        if !is_mutation_op(self, next) {
            return None;
        }
        let src = self.lex.src();
        // Down the right edge of the value to the name that ends it, noting the operator
        // before it.
        let mut e = &self.vals.last()?.expr;
        let mut operator = None;
        while !is_name_path(e) {
            let between = |a: &Expr, b: &Expr, symbol: &str| {
                let (from, to) = (a.span.end as usize, b.span.start as usize);
                let at = from + src.get(from..to)?.find(symbol)?;
                Some(self.span(at, at + symbol.len()))
            };
            (operator, e) = match &e.kind {
                ExprKind::Binary(o, l, r) => (between(l, r, o.symbol()), &**r),
                ExprKind::Select(b, sel) => (between(b, sel, "."), &**sel),
                ExprKind::Unary(_, x) => (
                    Some(self.span(e.span.start as usize, e.span.start as usize + 1)),
                    &**x,
                ),
                _ => return None,
            };
        }
        let (start, end) = (e.span.start as usize, e.span.end as usize);
        let line = line_start(src, start);
        let starts_line = src.get(line..start).is_some_and(|s| s.trim().is_empty());
        let later_line = line > op.end as usize;
        // Only blanks between the name and the operator: `(1 +` then `B) => 2` is a chain.
        let op_on_its_line = src
            .get(end..next.start)
            .is_some_and(|s| s.bytes().all(|b| b == b' ' || b == b'\t'));
        (starts_line && later_line && op_on_its_line).then_some(Swallowed {
            operator,
            name: e.span,
            line,
        })
    }

    #[inline(never)]
    fn finish_resource(
        &mut self,
        first: Token,
        private: bool,
        path: Vec<Ident>,
        mutations: Vec<Mutation>,
    ) {
        let end = mutations
            .last()
            .map_or(first.end, |m| m.value.span.end as usize);
        let span = self.span(first.start, end);
        self.stmts.push(Statement::Resource(ResourceDef {
            private,
            path,
            mutations,
            span,
        }));
    }

    /// Gives the last of `mutations` its value, from the value stack (or an error).
    #[inline(never)]
    fn pop_mutation(&mut self, mutations: &mut [Mutation], failed: bool) -> usize {
        let Some(m) = mutations.last_mut() else {
            return 0;
        };
        match self.vals.pop() {
            Some(n) if !failed => {
                m.value = n.expr;
                n.depth
            }
            _ => 0,
        }
    }

    /// `=>`, `~>` or `~ ( name ) >`: pushes a mutation onto `mutations`, valued as an error
    /// until its value is parsed.
    #[inline(never)]
    fn mutation_op(&mut self, mutations: &mut Vec<Mutation>) -> R<()> {
        let (op, op_span) = self.mutation_operator()?;
        mutations.push(Mutation {
            op,
            op_span,
            value: Expr {
                kind: ExprKind::Error,
                span: op_span,
            },
        });
        Ok(())
    }

    fn mutation_operator(&mut self) -> R<(MutationOp, Span)> {
        let t = self.bump();
        match t.kind {
            Tok::Arrow => Ok((MutationOp::Assign, self.tspan(t))),
            Tok::MergeArrow => Ok((MutationOp::Merge, self.tspan(t))),
            _ => {
                self.skip_nl_within(|p, i| p.lex.peek_nth(i).kind == Tok::LParen);
                let open = self.lex.peek_nth(0);
                if open.kind != Tok::LParen {
                    return Err(self.fail(E::TildeNoParen(open)));
                }
                self.lex.next_token();
                self.skip_nl_within(|p, i| {
                    p.lex.peek_nth(i).kind == Tok::Word && !p.starts_definition(i)
                });
                let name = self.ident(
                    "function names",
                    "the name of a mutation function in `~( )>`",
                )?;
                self.skip_nl_within(|p, i| p.lex.peek_nth(i).kind == Tok::RParen);
                let close = self.lex.peek_nth(0);
                if close.kind != Tok::RParen {
                    return Err(self.fail(E::TildeNoClose(close, &name)));
                }
                self.lex.next_token();
                self.skip_nl_within(|p, i| p.lex.peek_nth(i).kind == Tok::Gt);
                let gt = self.lex.peek_nth(0);
                if gt.kind != Tok::Gt {
                    return Err(self.fail(E::TildeNoGt(gt, &name)));
                }
                self.lex.next_token();
                Ok((MutationOp::Function(name), self.span(t.start, gt.end)))
            }
        }
    }

    /// `def name(params) = body`, onto `self.stmts`.
    fn macro_def(&mut self) -> R<usize> {
        let kw = self.bump();
        self.skip_nl_within(|p, i| {
            p.lex.peek_nth(i).kind == Tok::Word && p.lex.peek_nth(i + 1).kind == Tok::LParen
        });
        let name = self.ident("macro names", "a macro name after `def`")?;
        self.skip_nl_within(|p, i| p.lex.peek_nth(i).kind == Tok::LParen);
        let open = self.lex.peek_nth(0);
        if open.kind != Tok::LParen {
            return Err(self.fail(E::DefNoParen(open, &name)));
        }
        self.lex.next_token();
        self.open_bracket(open);
        let saved = self.mode;
        self.mode = Mode::List;
        let mut params = Vec::new();
        loop {
            self.skip_separators();
            let t = self.lex.peek_nth(0);
            match t.kind {
                Tok::RParen => {
                    self.lex.next_token();
                    self.close_bracket();
                    break;
                }
                Tok::Word => {
                    params.push(self.ident("macro parameter names", "a parameter name")?);
                    let n = self.lex.peek_nth(0);
                    if !matches!(n.kind, Tok::Newline | Tok::Comma | Tok::RParen) {
                        return Err(self.fail(E::MissingCloser(
                            open,
                            n,
                            "`,` or `)` after a macro parameter",
                        )));
                    }
                }
                Tok::Eof => return Err(self.fail(E::NeverClosed(open))),
                _ => return Err(self.fail(E::Expected(t, "a parameter name or `)`"))),
            }
        }
        self.mode = saved;
        self.skip_nl();
        let eq = self.lex.peek_nth(0);
        if eq.kind != Tok::Assign {
            return Err(self.fail(E::DefNoEq(eq, &name)));
        }
        self.lex.next_token();
        self.skip_nl();
        // A macro's body belongs to no resource (restored by the caller on an error).
        let scope_from = std::mem::replace(&mut self.scope_from, self.scope.len());
        self.binary(P_OR)?;
        self.scope_from = scope_from;
        let Some(body) = self.vals.pop() else {
            return Err(Fail);
        };
        let span = self.span(kw.start, body.expr.span.end as usize);
        let m = Arc::new(MacroDef {
            name,
            params,
            body: body.expr,
            span,
        });
        self.macros.push(Arc::clone(&m));
        self.stmts.push(Statement::Macro(m));
        Ok(body.depth + 1)
    }

    // ----- expressions --------------------------------------------------------------------
    //
    // Each expression function pushes the expression it parsed onto `self.vals`; the
    // `reduce_*` functions pop the parts and push what they make. (This keeps the stack
    // frames of the recursive functions small.)

    /// Precedence climbing over the binary operators (an expression is `binary(P_OR)`),
    /// with the grammar's restrictions: a comparison is not associative (at most one per
    /// operand of `&&`), and the right side of `=~`/`!~` is a single value.
    ///
    /// A chain of one associative operator (`||`, `&&`, `++`) is a loop in the grammar, not
    /// nesting, so its length is not limited: past [`BALANCE_FROM`] operands the rest of
    /// the run is collected and joined as a balanced tree ([`Parser::reduce_run`]), whose
    /// depth grows with the logarithm of its length. The value is the same: these
    /// operators are associative and evaluate their operands left to right either way.
    fn binary(&mut self, min: u8) -> R<()> {
        self.prefix()?;
        let mut last = 0u8;
        let mut run: Option<Run> = None;
        loop {
            if !self.cont(is_binop) {
                break;
            }
            let t = self.lex.peek_nth(0);
            let Some((op, prec)) = binop(t.kind) else {
                break;
            };
            if prec < min {
                break;
            }
            if let Some(r) = run.take_if(|r| r.op != op) {
                self.reduce_run(r)?;
            }
            if last == P_CMP && prec == P_CMP {
                return Err(self.fail(E::ChainedComparison(t, op)));
            }
            if last == P_MATCH && prec >= P_MATCH {
                return Err(self.fail(E::AfterMatch(t, op, prec)));
            }
            self.bump();
            self.skip_nl();
            self.operand_after(t)?;
            if prec == P_MATCH {
                // One value, not followed by a selection.
                self.value(false)?;
                if self.cont(is_dot) {
                    let dot = self.lex.peek_nth(0);
                    return Err(self.fail(E::MatchSelect(dot, op)));
                }
            } else {
                self.binary(prec + 1)?;
            }
            if matches!(op, BinaryOp::Or | BinaryOp::And | BinaryOp::Concat) {
                let r = run.get_or_insert_with(|| Run {
                    op,
                    first: self.vals.len().saturating_sub(2),
                    reduced: 0,
                    pending: Vec::new(),
                });
                if r.reduced < BALANCE_FROM {
                    r.reduced += 1;
                    self.reduce_binary(op, t)?;
                } else {
                    r.pending.push(t);
                }
            } else {
                self.reduce_binary(op, t)?;
            }
            last = prec;
        }
        match run {
            Some(r) => self.reduce_run(r),
            None => Ok(()),
        }
    }

    /// Joins a run of one associative operator: the operands from `run.first` on the value
    /// stack (the first already holds the run's first [`BALANCE_FROM`] operators, reduced
    /// as they came), pairwise, level by level, so that the tree is balanced and keeps the
    /// operands in order.
    #[inline(never)]
    fn reduce_run(&mut self, run: Run) -> R<()> {
        if run.pending.is_empty() {
            return Ok(());
        }
        let operands = self.vals.split_off(run.first.min(self.vals.len()));
        if operands.len() != run.pending.len() + 1 {
            return Err(Fail);
        }
        // Each operand with the operator written before it (none for the first).
        let mut level: Vec<(Node, Option<Token>)> = operands
            .into_iter()
            .zip(std::iter::once(None).chain(run.pending.into_iter().map(Some)))
            .collect();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            let mut items = level.into_iter();
            while let Some((lhs, before)) = items.next() {
                match items.next() {
                    Some((rhs, Some(t))) => {
                        self.vals.push(lhs);
                        self.vals.push(rhs);
                        self.reduce_binary(run.op, t)?;
                        let joined = self.vals.pop().ok_or(Fail)?;
                        next.push((joined, before));
                    }
                    Some((_, None)) => return Err(Fail),
                    None => next.push((lhs, before)),
                }
            }
            level = next;
        }
        let (node, _) = level.pop().ok_or(Fail)?;
        self.vals.push(node);
        Ok(())
    }

    #[inline(never)]
    fn reduce_binary(&mut self, op: BinaryOp, t: Token) -> R<()> {
        let (Some(rhs), Some(lhs)) = (self.vals.pop(), self.vals.pop()) else {
            return Err(Fail);
        };
        let span = lhs.expr.span.to(rhs.expr.span);
        let depth = lhs.depth.max(rhs.depth) + 1;
        if depth > MAX_NESTING
            && lhs.depth > rhs.depth
            && matches!(lhs.expr.kind, ExprKind::Binary(..))
        {
            // Deep down the left: a long run such as `1 + 1 + ... + 1`, not brackets.
            return Err(self.fail(E::LongRun(self.tspan(t), op)));
        }
        let kind = ExprKind::Binary(op, Box::new(lhs.expr), Box::new(rhs.expr));
        self.push_node(kind, span, depth, self.tspan(t))
    }

    /// `( - | ! )* Value ( . Value )*`, folding `-` before a number literal into the number.
    fn prefix(&mut self) -> R<()> {
        let mut ops: Vec<(UnaryOp, Token)> = Vec::new();
        loop {
            let t = self.peek();
            let op = match t.kind {
                Tok::Minus => UnaryOp::Neg,
                Tok::Bang => UnaryOp::Not,
                _ => break,
            };
            if ops.len() >= MAX_NESTING {
                let span = self.tspan(t);
                return Err(self.fail(E::TooDeep(span)));
            }
            self.bump();
            self.skip_nl();
            self.operand_after(t)?;
            ops.push((op, t));
        }
        match ops.last() {
            Some(&(UnaryOp::Neg, minus)) if self.number_follows() => {
                ops.pop();
                let num = self.bump();
                self.number(num, Some(minus));
            }
            _ => {
                self.value(false)?;
                while self.cont(is_dot) {
                    let dot = self.bump();
                    self.skip_nl();
                    self.operand_after(dot)?;
                    self.selector()?;
                    self.reduce_select(dot)?;
                }
            }
        }
        while let Some((op, t)) = ops.pop() {
            self.reduce_unary(op, t)?;
        }
        Ok(())
    }

    /// The value after a selector's `.`, in an expression or in `${...}`.
    fn selector(&mut self) -> R<()> {
        if let Some(minus) = self.signed_number_next() {
            // `$L.-1`: Appendix A's `Number` has its sign (`/\-?\d+.../`).
            self.bump();
            let num = self.bump();
            self.number(num, Some(minus));
            Ok(())
        } else {
            self.value(true)
        }
    }

    #[inline(never)]
    fn reduce_select(&mut self, dot: Token) -> R<()> {
        let (Some(sel), Some(base)) = (self.vals.pop(), self.vals.pop()) else {
            return Err(Fail);
        };
        let span = base.expr.span.to(sel.expr.span);
        let depth = base.depth.max(sel.depth) + 1;
        let kind = ExprKind::Select(Box::new(base.expr), Box::new(sel.expr));
        self.push_node(kind, span, depth, self.tspan(dot))
    }

    #[inline(never)]
    fn reduce_unary(&mut self, op: UnaryOp, t: Token) -> R<()> {
        let Some(base) = self.vals.pop() else {
            return Err(Fail);
        };
        let span = self.tspan(t).to(base.expr.span);
        let depth = base.depth + 1;
        self.push_node(
            ExprKind::Unary(op, Box::new(base.expr)),
            span,
            depth,
            self.tspan(t),
        )
    }

    /// True if the next token is a number literal that is not the start of a selection.
    /// A `-` written right against a number (`-1`, not `- 1`): the minus token.
    fn signed_number_next(&mut self) -> Option<Token> {
        let minus = self.peek();
        let num = self.lex.peek_nth(1);
        (minus.kind == Tok::Minus && num.kind == Tok::Number && num.start == minus.end)
            .then_some(minus)
    }

    fn number_follows(&mut self) -> bool {
        if self.peek().kind != Tok::Number {
            return false;
        }
        let mut i = 1;
        while self.lex.peek_nth(i).kind == Tok::Newline {
            i += 1;
        }
        self.lex.peek_nth(i).kind != Tok::Dot
    }

    /// Pushes a number literal (negated if `minus` is given); too large is an error,
    /// reported here, and the value is then an error expression.
    #[inline(never)]
    fn number(&mut self, t: Token, minus: Option<Token>) {
        let digits = self.text(t);
        let start = minus.map_or(t.start, |m| m.start);
        let span = self.span(start, t.end);
        let number = if digits.contains('.') {
            digits
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| Number::Float(if minus.is_some() { -f } else { f }))
        } else if minus.is_some() {
            // Through i128, so that -9223372036854775808 fits.
            digits
                .parse::<i128>()
                .ok()
                .and_then(|i| i64::try_from(-i).ok())
                .map(Number::Int)
        } else {
            digits.parse::<i64>().ok().map(Number::Int)
        };
        let kind = match number {
            Some(n) => ExprKind::Number(n),
            None => {
                self.fail(E::NumberTooLarge(span));
                ExprKind::Error
            }
        };
        self.push_leaf(kind, span);
    }

    /// One value. In a selector (`selector`), a bare word ends at its first `-`.
    fn value(&mut self, selector: bool) -> R<()> {
        let t = self.peek();
        match t.kind {
            Tok::Word => self.word_value(t, selector),
            // Nesting is bounded (`MAX_NESTING`), but a thread with a small stack (an
            // embedder's) may not hold 256 levels: the walk moves to the heap when it runs low.
            Tok::LBracket => nested(|| self.list()),
            Tok::LBrace => nested(|| self.block()),
            Tok::LParen => nested(|| self.term()),
            Tok::DQuote => {
                self.bump();
                self.quoted(t, false)
            }
            Tok::Slash => {
                self.bump();
                self.quoted(t, true)
            }
            _ => self.simple_value(t),
        }
    }

    /// The values that contain no other expression (or errors).
    #[inline(never)]
    fn simple_value(&mut self, t: Token) -> R<()> {
        let span = self.tspan(t);
        match t.kind {
            Tok::Number => {
                self.bump();
                self.number(t, None);
            }
            Tok::Ref => {
                self.bump();
                let ident = Ident {
                    name: Arc::from(self.text(t).get(1..).unwrap_or("")),
                    span: self.span(t.start + 1, t.end),
                };
                self.push_leaf(ExprKind::Ref(ident), span);
            }
            Tok::SQuoted => {
                self.bump();
                let body = self.text(t).get(1..t.end - t.start - 1).unwrap_or("");
                self.push_leaf(ExprKind::Literal(unescape(body)), span);
            }
            Tok::Question => {
                self.bump();
                self.push_leaf(ExprKind::Undef, span);
            }
            Tok::Dollar => {
                self.bump();
                let n = self.lex.peek_nth(0);
                return Err(self.fail(E::DollarNoName(n)));
            }
            Tok::SQuoteOpen => {
                let end = self.lex.src().len();
                self.lex.reset(end);
                return Err(self.fail(E::UnclosedLiteral(t)));
            }
            _ => return Err(self.fail(E::ValueExpected(t))),
        }
        Ok(())
    }

    fn word_value(&mut self, t: Token, selector: bool) -> R<()> {
        match self.text(t) {
            "if" => return nested(|| self.if_expr(false)),
            "import" => return self.import(),
            "true" | "false" => {
                self.bump();
                self.push_leaf(ExprKind::Bool(self.text(t) == "true"), self.tspan(t));
                return Ok(());
            }
            // These cannot begin a value, so where a value is expected they are literals
            // (Appendix A's `Literal` pattern admits them; only `true` and `false` must be
            // quoted as text, reference §3.1). `if` and `import` always begin their construct.
            "then" | "else" | "def" | "private" => {
                self.bump();
                self.push_leaf(ExprKind::Literal(self.text(t).to_string()), self.tspan(t));
                return Ok(());
            }
            _ => {}
        }
        let t = match self.text(t).find('-') {
            Some(dash) if selector => {
                // A selector names a block member or an index: `$a.b-1` is `$a.b - 1`.
                self.lex.reset(t.start + dash);
                Token {
                    kind: Tok::Word,
                    start: t.start,
                    end: t.start + dash,
                }
            }
            _ => {
                self.bump();
                t
            }
        };
        if self.lex.peek_nth(0).kind == Tok::LParen {
            self.lex.reset(t.start);
            return self.call();
        }
        self.push_leaf(ExprKind::Literal(self.text(t).to_string()), self.tspan(t));
        Ok(())
    }

    /// `( Expr )`: the expression, its span widened to the brackets.
    fn term(&mut self) -> R<()> {
        let open = self.bump();
        self.enter(open)?;
        self.open_bracket(open);
        let saved = self.mode;
        self.mode = Mode::Skip;
        let first = self.peek();
        match first.kind {
            Tok::RParen => return Err(self.fail(E::EmptyBrackets(first))),
            Tok::Eof => return Err(self.fail(E::NeverClosed(open))),
            _ => {}
        }
        self.binary(P_OR)?;
        let close = self.peek();
        if close.kind != Tok::RParen {
            return Err(self.fail(E::MissingCloser(open, close, "`)`")));
        }
        self.lex.next_token();
        self.close_bracket();
        self.mode = saved;
        self.leave();
        let span = self.span(open.start, close.end);
        if let Some(top) = self.vals.last_mut() {
            top.expr.span = span;
        }
        Ok(())
    }

    /// `[ ( Expr ( Sep Expr )* )? ]`. An element in error is reported and skipped up to the
    /// next separator ([`Parser::element_failed`]), so the list's other mistakes are reported
    /// too.
    fn list(&mut self) -> R<()> {
        let open = self.bump();
        self.enter(open)?;
        self.open_bracket(open);
        // Each element's position, for the path of a block written in the list.
        self.scope.push(Seg::Index(0));
        let at = Level::new(self, open);
        let saved = self.mode;
        self.mode = Mode::List;
        let base = self.vals.len();
        let close = loop {
            if let Some(seg) = self.scope.last_mut() {
                *seg = Seg::Index(self.vals.len().saturating_sub(base));
            }
            self.skip_separators();
            let t = self.lex.peek_nth(0);
            match t.kind {
                Tok::RBracket => {
                    self.lex.next_token();
                    self.close_bracket();
                    break t;
                }
                Tok::Eof => return Err(self.fail(E::NeverClosed(open))),
                Tok::RBrace | Tok::RParen => {
                    self.wrong_closer(&at, t, None)?;
                    continue;
                }
                _ => {}
            }
            let v0 = self.vals.len();
            if self.binary(P_OR).is_ok() {
                let n = self.lex.peek_nth(0);
                if matches!(n.kind, Tok::Newline | Tok::Comma | Tok::RBracket) {
                    continue;
                }
                self.fail(E::MissingCloser(open, n, "`,` or `]` after a list element"));
                if is_mutation_op(self, n) {
                    // `[1, 2` then `B => 3`: the list was never closed.
                    return Err(Fail);
                }
            }
            self.element_failed(&at, t, v0)?;
        };
        self.mode = saved;
        self.leave();
        self.scope.pop();
        self.reduce_list(base, open, close)
    }

    /// A closing bracket `t` of another kind where an element of the list or argument list
    /// at `at` may start (`[80,` then `443` then `}`): an error that points at the list's
    /// opening bracket. If `t` closes an enclosing construct, the list was never closed and
    /// is given up (`Err`); a closer that closes nothing is skipped.
    #[cold]
    #[inline(never)]
    fn wrong_closer(&mut self, at: &Level, t: Token, callee: Option<&Ident>) -> R<()> {
        let opener = opener_of(t.kind);
        let outer = self.open_below(at.brackets.saturating_sub(1), opener);
        self.fail(E::WrongCloser(at.open, t, callee));
        if outer || self.gave_up {
            return Err(Fail);
        }
        self.lex.next_token();
        Ok(())
    }

    /// After an error in an element of the list or argument list opened by `open` (which
    /// started at `start`, its values pushed from `base` on): skips the rest of the element
    /// up to the next separator at the list's own bracket depth, or up to its closing
    /// bracket (not consumed), and stands an error expression for the element, so that
    /// parsing resumes at the next element. Gives up on the list (`Err`, leaving the
    /// statement's recovery to skip) where it was most likely never closed: at a closing
    /// bracket of an enclosing construct, at a line that plainly starts a resource
    /// definition, and at the end of the file.
    #[cold]
    #[inline(never)]
    fn element_failed(&mut self, at: &Level, start: Token, v0: usize) -> R<()> {
        let (open, level) = (at.open, at.brackets);
        // Errors leave the nested constructs they were in open.
        self.brackets.truncate(level);
        self.depth = at.depth;
        self.scope.truncate(at.scope);
        self.mode = Mode::List;
        if self.gave_up {
            return Err(Fail);
        }
        let closer = match open.kind {
            Tok::LBracket => Tok::RBracket,
            _ => Tok::RParen,
        };
        loop {
            let t = self.lex.peek_nth(0);
            match t.kind {
                Tok::Eof | Tok::SQuoteOpen => return Err(Fail),
                Tok::Newline | Tok::Comma if self.brackets.len() <= level => {
                    if t.kind == Tok::Newline && self.starts_definition(1) {
                        return Err(Fail);
                    }
                    break;
                }
                Tok::Newline if self.unclosed_before_definition() => {
                    self.brackets.truncate(level);
                    return Err(Fail);
                }
                Tok::LParen | Tok::LBracket | Tok::LBrace => {
                    self.lex.next_token();
                    self.open_bracket(t);
                }
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    if self.close_opened_above(level, t) {
                        // Closed a bracket opened in the element.
                    } else if t.kind == closer {
                        // Closes the list.
                        self.brackets.truncate(level);
                        break;
                    } else if self.open_below(level.saturating_sub(1), opener_of(t.kind)) {
                        // Closes an enclosing construct: the list was never closed.
                        self.brackets.truncate(level);
                        return Err(Fail);
                    } else {
                        // Closes nothing at all: skipped.
                        self.lex.next_token();
                    }
                }
                Tok::DQuote => {
                    self.lex.next_token();
                    self.lex.skip_string();
                }
                _ => {
                    self.lex.next_token();
                }
            }
        }
        // What was parsed of the element becomes one error expression.
        self.vals.truncate(v0);
        let end = self.lex.resume_pos().max(start.end);
        self.push_leaf(ExprKind::Error, self.span(start.start, end));
        Ok(())
    }

    #[inline(never)]
    fn reduce_list(&mut self, base: usize, open: Token, close: Token) -> R<()> {
        let (items, depth) = self.drain_vals(base);
        let span = self.span(open.start, close.end);
        self.push_node(ExprKind::List(items), span, depth + 1, self.tspan(open))
    }

    /// Takes the values from `base` on off the value stack, with their greatest depth.
    fn drain_vals(&mut self, base: usize) -> (Vec<Expr>, usize) {
        let mut depth = 0;
        let items = self
            .vals
            .drain(base.min(self.vals.len())..)
            .map(|n| {
                depth = depth.max(n.depth);
                n.expr
            })
            .collect();
        (items, depth)
    }

    /// `{ Block }`
    fn block(&mut self) -> R<()> {
        let open = self.bump();
        self.enter(open)?;
        self.open_bracket(open);
        let (statements, depth) = self.statements(true);
        let close = self.lex.peek_nth(0);
        let end = if close.kind == Tok::RBrace {
            self.lex.next_token();
            close.end
        } else if let Some(cut) = self.cut.take() {
            // Never closed, but what follows is parsed as if it had been, where it ends.
            self.fail(E::BlockCut(open, cut));
            statements
                .last()
                .map_or(open.end, |s| s.span().end as usize)
        } else {
            return Err(self.fail(E::NeverClosed(open)));
        };
        self.close_bracket();
        self.leave();
        let span = self.span(open.start, end);
        self.push_node(
            ExprKind::Block(statements),
            span,
            depth + 1,
            self.tspan(open),
        )
    }

    /// The arguments of a call of `callee` (or of `import`), from the `(` (the next token)
    /// to the `)`, pushed onto the value stack. Returns the closing token.
    fn args(&mut self, callee: Option<&Ident>) -> R<Token> {
        let open = self.lex.next_token();
        self.enter(open)?;
        self.open_bracket(open);
        let at = Level::new(self, open);
        let saved = self.mode;
        self.mode = Mode::List;
        let close = loop {
            self.skip_separators();
            let t = self.lex.peek_nth(0);
            match t.kind {
                Tok::RParen => {
                    self.lex.next_token();
                    self.close_bracket();
                    break t;
                }
                Tok::Eof => return Err(self.fail(E::NeverClosed(open))),
                Tok::RBrace | Tok::RBracket => {
                    self.wrong_closer(&at, t, callee)?;
                    continue;
                }
                _ => {}
            }
            let v0 = self.vals.len();
            if self.binary(P_OR).is_ok() {
                let n = self.lex.peek_nth(0);
                if matches!(n.kind, Tok::Newline | Tok::Comma | Tok::RParen) {
                    continue;
                }
                self.fail(E::ArgsCloser(open, n, callee));
                if is_mutation_op(self, n) {
                    // `[1, 2` then `B => 3`: the list was never closed.
                    return Err(Fail);
                }
            }
            self.element_failed(&at, t, v0)?;
        };
        self.mode = saved;
        self.leave();
        Ok(close)
    }

    /// `name ( args )`; the next token is the name, and `(` follows it.
    fn call(&mut self) -> R<()> {
        let name = self.ident("function names", "a function name")?;
        let base = self.vals.len();
        let close = self.args(Some(&name))?;
        self.reduce_call(name, base, close)
    }

    #[inline(never)]
    fn reduce_call(&mut self, name: Ident, base: usize, close: Token) -> R<()> {
        let (args, depth) = self.drain_vals(base);
        let span = name.span.to(self.tspan(close));
        let kind = ExprKind::Call(Call { name, args, span });
        self.push_node(kind, span, depth + 1, span)
    }

    /// `import ( Expr ( Sep Expr )? )`; the next token is `import`.
    fn import(&mut self) -> R<()> {
        let kw = self.bump();
        self.skip_nl_within(|p, i| p.lex.peek_nth(i).kind == Tok::LParen);
        let open = self.lex.peek_nth(0);
        if open.kind != Tok::LParen {
            return Err(self.fail(E::ImportNoParen(open)));
        }
        let base = self.vals.len();
        let close = self.args(None)?;
        self.reduce_import(kw, base, close)
    }

    #[inline(never)]
    fn reduce_import(&mut self, kw: Token, base: usize, close: Token) -> R<()> {
        let (args, depth) = self.drain_vals(base);
        let span = self.span(kw.start, close.end);
        let mut args = args.into_iter();
        let (Some(path), signers, None) = (args.next(), args.next(), args.next()) else {
            return Err(self.fail(E::ImportArity(span)));
        };
        let kind = ExprKind::Import(Import {
            path: Box::new(path),
            signers: signers.map(Box::new),
            span,
        });
        self.push_node(kind, span, depth + 1, span)
    }

    /// `if ( Expr ) then Expr ( else Expr )?`; the next token is `if`.
    fn if_expr(&mut self, stmt: bool) -> R<()> {
        let kw = self.bump();
        self.enter(kw)?;
        self.skip_nl();
        self.operand_after(kw)?;
        let open = self.lex.peek_nth(0);
        if open.kind != Tok::LParen {
            return Err(self.fail(E::IfNoParen(open)));
        }
        let base = self.vals.len();
        self.term()?;
        self.skip_nl();
        let then_kw = self.lex.peek_nth(0);
        if !self.is_word(then_kw, "then") {
            self.fail(E::IfNoThen(then_kw, kw));
            return Err(self.branches_without_then(then_kw, stmt));
        }
        self.lex.next_token();
        self.skip_nl();
        self.operand_after(then_kw)?;
        self.binary(P_OR)?;
        self.branch_definition(then_kw, stmt)?;
        if self.cont(is_else) {
            let else_kw = self.bump();
            self.skip_nl();
            self.operand_after(else_kw)?;
            self.binary(P_OR)?;
            self.branch_definition(else_kw, stmt)?;
        }
        self.leave();
        self.reduce_if(kw, base)
    }

    /// After an `if` whose condition is followed by `t` instead of `then` (reported): if `t`
    /// can start a value, it is read as the `then` branch, and an `else` branch after it
    /// too, so that recovery resumes after the whole `if` (an `else` on a later line is
    /// not a stray one). The `if` stays in error.
    #[cold]
    #[inline(never)]
    fn branches_without_then(&mut self, t: Token, stmt: bool) -> Fail {
        let starts_value = match t.kind {
            Tok::Word => !self.is_word(t, "else") && !self.is_word(t, "then"),
            Tok::Number
            | Tok::Ref
            | Tok::DQuote
            | Tok::SQuoted
            | Tok::LBracket
            | Tok::LBrace
            | Tok::LParen
            | Tok::Minus
            | Tok::Bang
            | Tok::Question
            | Tok::Slash => true,
            _ => false,
        };
        // A value `if (...) { 2 } else { 3 }`, as in C: the braces read as blocks of
        // definitions, and what they hold would only add errors about a form to be
        // rewritten anyway. (In an `if` statement they do hold definitions: checked.)
        let braces = t.kind == Tok::LBrace && !stmt;
        let reported = self.diags.len();
        if starts_value && self.binary(P_OR).is_ok() && self.cont(is_else) {
            self.bump();
            self.skip_nl();
            let _ = self.binary(P_OR);
        }
        if braces && !self.gave_up {
            self.diags.truncate(reported);
        }
        Fail
    }

    /// After the branch of an `if` (after `kw`, `then` or `else`), on top of the value
    /// stack: an error if it is a name followed by a mutation operator, i.e. a definition
    /// written as a branch without `{ }` — where that cannot be a chain of mutations (in an
    /// `if` statement), or where the name starts a later line than `kw` (a multi-line
    /// branch without braces).
    #[inline(never)]
    fn branch_definition(&mut self, kw: Token, stmt: bool) -> R<()> {
        let op = self.lex.peek_nth(0);
        if !is_mutation_op(self, op) {
            return Ok(());
        }
        let Some(branch) = self.vals.last().map(|n| &n.expr) else {
            return Ok(());
        };
        if !is_name_path(branch) {
            return Ok(());
        }
        let span = branch.span;
        let later_line = self
            .lex
            .src()
            .get(kw.end..span.start as usize)
            .is_some_and(|gap| gap.contains('\n'));
        if stmt || later_line {
            return Err(self.fail(E::BranchDefinition(kw, span, op)));
        }
        Ok(())
    }

    #[inline(never)]
    fn reduce_if(&mut self, kw: Token, base: usize) -> R<()> {
        let (parts, depth) = self.drain_vals(base);
        let mut parts = parts.into_iter();
        let (Some(cond), Some(then)) = (parts.next(), parts.next()) else {
            return Err(Fail);
        };
        let otherwise = parts.next();
        let end = otherwise.as_ref().unwrap_or(&then).span.end as usize;
        let span = self.span(kw.start, end);
        let kind = ExprKind::If(If {
            cond: Box::new(cond),
            then: Box::new(then),
            otherwise: otherwise.map(Box::new),
            span,
        });
        self.push_node(kind, span, depth + 1, self.tspan(kw))
    }

    /// The rest of a `"..."` string or `/.../` regex whose opening delimiter `open` has just
    /// been consumed.
    fn quoted(&mut self, open: Token, regex: bool) -> R<()> {
        self.lex.reset(open.end);
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut depth = 0;
        loop {
            let stop = if regex {
                self.lex.scan_regex(&mut text)
            } else {
                self.lex.scan_string(&mut text)
            };
            match stop {
                Stop::Closed => break,
                Stop::Interp(dollar) => {
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    self.interp(dollar, regex);
                    if let Some(n) = self.vals.pop() {
                        depth = depth.max(n.depth);
                        parts.push(Part::Interp(n.expr));
                    }
                }
                Stop::LineEnd | Stop::Eof => return Err(self.fail(E::Unterminated(open, regex))),
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        let span = self.span(open.start, self.lex.resume_pos());
        let kind = if regex {
            ExprKind::Regex(parts)
        } else {
            ExprKind::String(parts)
        };
        let depth = if depth > 0 { depth + 1 } else { 0 };
        self.push_node(kind, span, depth, self.tspan(open))
    }

    /// `${ name ( . Value )* }` inside a string or regex; the `${` has been consumed. Errors
    /// are reported and recovered from here: the value pushed is then an error expression.
    fn interp(&mut self, dollar: usize, regex: bool) {
        let saved = (
            self.mode,
            self.depth,
            self.brackets.len(),
            self.vals.len(),
            self.scope.len(),
        );
        self.mode = Mode::Skip;
        let at = Token {
            kind: Tok::Dollar,
            start: dollar,
            end: dollar + 2,
        };
        let r = self
            .enter(at)
            .and_then(|()| self.interp_body(dollar, regex));
        self.mode = saved.0;
        self.depth = saved.1;
        self.brackets.truncate(saved.2);
        self.scope.truncate(saved.4);
        if r.is_err() {
            self.vals.truncate(saved.3);
            self.lex.skip_interp(regex);
            let end = self.lex.resume_pos().max(dollar + 2);
            self.push_leaf(ExprKind::Error, self.span(dollar, end));
        }
    }

    fn interp_body(&mut self, dollar: usize, regex: bool) -> R<()> {
        let t = self.peek();
        if t.kind != Tok::Word || is_keyword(self.text(t)) {
            return Err(self.fail(E::InterpName(t)));
        }
        // The name ends at a `-`, as in a selector.
        let name_end = self.text(t).find('-').map_or(t.end, |dash| t.start + dash);
        self.lex.reset(name_end);
        self.push_ref(t.start, name_end);
        while self.peek().kind == Tok::Dot {
            let dot = self.bump();
            let next = self.peek();
            if next.kind == Tok::Dollar {
                return Err(self.fail(E::InterpNotClosed(dollar, next)));
            }
            self.selector()?;
            self.reduce_select(dot)?;
        }
        let close = self.peek();
        let at_end = match close.kind {
            Tok::Eof => true,
            Tok::Slash => regex,
            Tok::DQuote => !regex,
            _ => false,
        };
        if at_end {
            return Err(self.fail(E::InterpUnclosed(dollar)));
        }
        if close.kind != Tok::RBrace {
            return Err(self.fail(E::InterpExpected(close, dollar)));
        }
        self.lex.next_token();
        self.lex.reset(close.end);
        Ok(())
    }

    /// Pushes a reference to the name at `start..end` (without `$`).
    #[inline(never)]
    fn push_ref(&mut self, start: usize, end: usize) {
        let span = self.span(start, end);
        let ident = Ident {
            name: Arc::from(self.lex.src().get(start..end).unwrap_or("")),
            span,
        };
        self.push_leaf(ExprKind::Ref(ident), span);
    }

    // ----- diagnostics --------------------------------------------------------------------

    /// Reports a syntax error.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, e: E<'_>) -> Fail {
        if self.gave_up {
            return Fail;
        }
        match e {
            E::NeverClosed(_) => {
                // The brackets around an unclosed one are unclosed too: say it once.
                if self.unclosed_reported {
                    return Fail;
                }
                self.unclosed_reported = true;
            }
            // These run to the end of the file, so no bracket is closed after them.
            E::Unterminated(_, false) | E::UnclosedLiteral(_) => self.unclosed_reported = true,
            _ => {}
        }
        let fatal = matches!(e, E::TooDeep(_) | E::LongRun(..));
        let mut d = self.diagnose(e);
        if d.resource.is_none() {
            d.resource = self.resource_name(None);
        }
        if fatal {
            // Input this deep is not worth recovering from.
            self.diags
                .push(d.note("the rest of the file was not checked"));
            self.gave_up = true;
            let end = self.lex.src().len();
            self.lex.reset(end);
        } else if self.diags.len() + 1 >= MAX_ERRORS {
            self.diags.push(d.note(format!(
                "too many syntax errors ({MAX_ERRORS}): the rest of the file was not checked"
            )));
            self.gave_up = true;
            let end = self.lex.src().len();
            self.lex.reset(end);
        } else {
            self.diags.push(d);
        }
        Fail
    }

    /// The whole path of the resource being defined where the parser stands (`Web.Port`
    /// for `Port` in `Web => {...}`, `a.1.e` for `e` in `a => [x, {e => 1}]`), followed by
    /// `then` (the path of a definition just parsed in that place), if any.
    fn resource_name(&self, then: Option<&[Ident]>) -> Option<String> {
        let src = self.lex.src();
        let scope = self.scope.get(self.scope_from..).unwrap_or(&[]);
        // The position of a list element is part of a path only after a name and before one.
        let first_name = scope
            .iter()
            .position(|s| matches!(s, Seg::Name(_)))
            .unwrap_or(scope.len());
        let scope = scope.get(first_name..).unwrap_or(&[]);
        let last_name = scope.iter().rposition(|s| matches!(s, Seg::Name(_)));
        let scope = match (last_name, then) {
            (_, Some(_)) => scope,
            (Some(i), None) => scope.get(..=i).unwrap_or(&[]),
            (None, None) => return None,
        };
        let mut parts: Vec<String> = scope
            .iter()
            .map(|s| match s {
                Seg::Name(span) => src
                    .get(span.start as usize..span.end as usize)
                    .unwrap_or("")
                    .to_string(),
                Seg::Index(i) => i.to_string(),
            })
            .collect();
        parts.extend(then.unwrap_or(&[]).iter().map(|i| i.name.to_string()));
        (!parts.is_empty()).then(|| parts.join("."))
    }

    /// A description of a token for "found ..." in messages.
    fn describe(&self, t: Token) -> String {
        match t.kind {
            Tok::Eof => "the end of the file".to_string(),
            Tok::Newline => "the end of the line".to_string(),
            Tok::Word if is_keyword(self.text(t)) => format!("the keyword `{}`", self.text(t)),
            Tok::Error => {
                let c = self.text(t).chars().next().unwrap_or('?');
                if c == '\r' {
                    "a carriage return alone (U+000D)".to_string()
                } else if self.is_invisible(t) {
                    format!("the invisible character U+{:04X}", u32::from(c))
                } else {
                    format!("the character `{c}`")
                }
            }
            Tok::DQuote => {
                let end = string_end(self.lex.src(), t.end).unwrap_or(t.end);
                let s = self.lex.src().get(t.start..end).unwrap_or("\"");
                format!("the string `{}`", shorten(s))
            }
            _ => format!("`{}`", shorten(self.text(t))),
        }
    }

    /// The span shown for a token: a newline token is shown as its first character (the
    /// LF of a CR LF).
    fn err_span(&self, t: Token) -> Span {
        if t.kind == Tok::Newline {
            let start = if self.text(t).starts_with('\r') {
                t.start + 1
            } else {
                t.start
            };
            self.span(start, start + 1)
        } else {
            self.tspan(t)
        }
    }

    /// "expected {expected}, found {token}", with hints for common slips.
    fn expected(&self, t: Token, expected: &str) -> Diagnostic {
        let label = match t.kind {
            Tok::Eof => "end of file",
            Tok::Newline => "end of line",
            _ => "unexpected",
        };
        let d = Diagnostic::error(format!("expected {expected}, found {}", self.describe(t)))
            .at(self.err_span(t))
            .with_label(label);
        // `!mail.relay mADD(x)`: an LCFG mutation, where a statement starts.
        if t.kind == Tok::Bang && expected.starts_with("a resource definition") {
            return d.hint(LCFG_MUTATION);
        }
        if t.kind != Tok::Error {
            return d;
        }
        match self.text(t) {
            ";" => d.hint("separate statements with a newline or `,`"),
            // `#include <lcfg/defaults.h>`, `#ifdef`: LCFG's C preprocessor.
            "#" => d.hint(self.preprocessor_hint(t)),
            // Classic Mac OS line ends: the file would read as one long line.
            "\r" => d.hint(
                "a carriage return alone (CR, shown `␍`) does not end a line: CF2 lines end with LF or CR LF, so convert the file's line ends (e.g. `tr '\\r' '\\n' < old.cf2 > new.cf2`)",
            ),
            "%" => d.hint(
                "CF2 has no `%` (remainder) operator: its arithmetic operators are `+`, `-`, `*` and `/`",
            ),
            "&" => d.hint("logical 'and' is written `&&`"),
            "|" => d.hint("logical 'or' is written `||`"),
            // `Port: 80`, where a mutation is expected, is a definition written as in YAML.
            ":" if expected.starts_with("`=>`") => {
                d.hint("a resource is defined with `=>`, e.g. `Name => value`")
            }
            ":" => match self.text_around(t) {
                // `myproject:base`, `http://example.org`: a word right before the `:`.
                Some(text) => d.hint(format!(
                    "text holding `:` must be quoted: `'{}'`",
                    shorten(text)
                )),
                None => d.hint("a resource is defined with `=>`, e.g. `Name => value`"),
            },
            _ => d,
        }
    }

    /// The character just before `t` in the source, if any.
    fn char_before(&self, t: Token) -> Option<char> {
        self.lex.src().get(..t.start)?.chars().next_back()
    }

    /// The text of `t`'s line from `t` on.
    fn rest_of_line(&self, t: Token) -> &str {
        self.lex
            .src()
            .get(t.start..)
            .and_then(|r| r.lines().next())
            .unwrap_or("")
    }

    /// The hint for a `#` where a statement starts: a C preprocessor line, as LCFG files
    /// have them, or a comment as in shell or Perl.
    fn preprocessor_hint(&self, t: Token) -> String {
        let line = self.rest_of_line(t).trim_start_matches('#').trim_start();
        let directive = line
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("");
        match directive {
            "include" => {
                // `<lcfg/defaults.h>` or `"site.h"`: the file's name, without `.h`.
                let name = line
                    .get(directive.len()..)
                    .unwrap_or("")
                    .trim()
                    .trim_matches(|c| matches!(c, '<' | '>' | '"'));
                let name = name.strip_suffix(".h").unwrap_or(name);
                let name = if name.is_empty() { "name" } else { name };
                format!(
                    "CF2 has no preprocessor: a file is imported with `import('{}')` (comments start with `//`)",
                    shorten(name)
                )
            }
            "if" | "ifdef" | "ifndef" | "elif" | "else" | "endif" => {
                "CF2 has no preprocessor: a value that depends on a condition is written `if ($x) then a else b`, and statements under one with `if ($x) then { ... }` (comments start with `//`)".to_string()
            }
            "define" => {
                "CF2 has no preprocessor: a constant is a resource (`private Name => value` keeps it out of the output), a computation a macro (`def name(x) = ...`) (comments start with `//`)".to_string()
            }
            _ => "comments start with `//`".to_string(),
        }
    }

    /// The run of text `t` stands in, when a word or number is written right before it
    /// (`myproject:base` around its `:`): up to white space, a bracket, `,` or `=>`.
    fn text_around(&self, t: Token) -> Option<&str> {
        let src = self.lex.src();
        let before = src.get(..t.start)?;
        let word = before.rsplit(ends_text_run).next()?;
        let word = word.rsplit("=>").next().unwrap_or(word);
        let start = t.start - word.len();
        if !word.chars().next().is_some_and(char::is_alphanumeric) {
            return None;
        }
        let after = src.get(t.start..)?;
        // Text goes on after `t` (`a: b` is a YAML habit, not a run of text).
        if after.chars().nth(1).is_none_or(ends_text_run) {
            return None;
        }
        let end = t.start + after.find(ends_text_run).unwrap_or(after.len());
        src.get(start..end)
    }

    fn diagnose(&self, e: E<'_>) -> Diagnostic {
        let found = match &e {
            E::Expected(t, _) | E::NoSeparator(t, _) | E::ValueExpected(t) => Some(*t),
            _ => None,
        };
        let d = self.diagnose_kind(e);
        match found {
            // A no-break or ideographic space inside a word looks like a space or nothing.
            Some(t) if d.hint.is_none() && self.is_invisible(t) => {
                let format = self
                    .text(t)
                    .chars()
                    .next()
                    .is_some_and(crate::lexer::is_format_character);
                d.hint(if format {
                    "a format character (zero-width, joiner, soft hyphen, direction override) shows as nothing, so it cannot be part of a name or word: a name holding one would look like another; to keep the character, quote the text: `'...'`"
                } else {
                    "white space other than spaces and tabs cannot be part of a word or separate one; to keep the character, quote the text: `'...'`"
                })
            }
            _ => d,
        }
    }

    /// An invisible character the lexer does not accept (U+00A0, U+3000, U+200B, …).
    fn is_invisible(&self, t: Token) -> bool {
        t.kind == Tok::Error
            && self.text(t).chars().next().is_some_and(|c| {
                c.is_whitespace() || c.is_control() || crate::lexer::is_format_character(c)
            })
    }

    fn diagnose_kind(&self, e: E<'_>) -> Diagnostic {
        const MUTATION_FN: &str = "a mutation function is written `~(name)>`, e.g. `X ~(max)> 2`";
        const NOT_INTERP: &str = "to write `${` itself, escape the dollar: `\\${`";
        match e {
            E::Expected(t, what) => self.expected(t, what),
            E::NoSeparator(n, last) => self.no_separator(n, last),
            E::Unmatched(t) => {
                let open = match t.kind {
                    Tok::RParen => "(",
                    Tok::RBracket => "[",
                    _ => "{",
                };
                Diagnostic::error(format!("unexpected `{}`: there is no `{open}` for it to close", self.text(t)))
                    .at(self.tspan(t))
                    .with_label("unmatched")
            }
            E::StatementRef(t) => {
                let name = self.text(t).get(1..).unwrap_or("");
                Diagnostic::error(format!("a statement cannot start with the reference `{}`", self.text(t)))
                    .at(self.tspan(t))
                    .with_label("reference")
                    .hint(format!("to define the resource, write its name without `$`: `{name} => ...`"))
            }
            E::KeywordName(t) => Diagnostic::error(format!(
                "`{}` is a keyword and cannot be used as a resource name",
                self.text(t)
            ))
            .at(self.tspan(t))
            .with_label("keyword"),
            E::IdentKeyword(t, kind, expected) => Diagnostic::error(format!(
                "expected {expected}, found the keyword `{}`",
                self.text(t)
            ))
            .at(self.tspan(t))
            .with_label("keyword")
            .note(format!("{kind} cannot be keywords")),
            E::IdentDash(t, kind) => {
                let w = self.text(t);
                Diagnostic::error(format!("{kind} cannot contain `-`: `{w}`"))
                    .at(self.tspan(t))
                    .with_label("contains `-`")
                    .hint(format!("use `_` instead, e.g. `{}`", w.replace('-', "_")))
            }
            E::NoMutationOp(t, path) => {
                let d = self.expected(
                    t,
                    &format!("`=>`, `~>` or `~(name)>` after the resource name `{}`", dotted(path)),
                );
                let adjacent = |c: char| self.lex.src().get(t.end..).is_some_and(|r| r.starts_with(c));
                // What follows on the line, and whether it defines something itself.
                let rest = self.rest_of_line(t);
                let assigns = rest.contains(['=', ':', '~']);
                match t.kind {
                    Tok::Assign | Tok::Ge => d.hint("a resource is assigned with `=>`, e.g. `Name => value`"),
                    Tok::EqEq => d.hint("a resource is defined with `=>` (`==` compares), e.g. `Name => value`"),
                    Tok::LBrace => d.hint(format!(
                        "a block is given with `=>`, or merged with `~>`: `{} => {{ ... }}`",
                        dotted(path)
                    )),
                    Tok::Newline | Tok::Eof => d.hint("a resource needs a value, e.g. `Name => value`"),
                    Tok::Minus if adjacent('>') => d.hint("a resource is defined with `=>`, not `->`, e.g. `Name => value`"),
                    Tok::Plus | Tok::Minus | Tok::Star | Tok::Slash | Tok::PlusPlus if adjacent('=') => {
                        d.hint(compound_assignment_hint(self.text(t), &dotted(path), self.lex.src().get(t.end + 1..).unwrap_or("")))
                    }
                    Tok::Word | Tok::Ref | Tok::Number => match path {
                        [one] if t.kind != Tok::Number && did_you_mean(&one.name, ["private"]).is_some() => {
                            d.hint(format!("did you mean `private`? (`private {} => ...`)", self.text(t)))
                        }
                        // `mail.relay mSET(smtp)`: an LCFG mutation.
                        _ if t.kind == Tok::Word && LCFG_MACROS.contains(&self.text(t)) => d.hint(LCFG_MUTATION),
                        // `final X => 1`: a mutation function written as a qualifier.
                        [one] if t.kind == Tok::Word && matches!(&*one.name, "final" | "default") => d.hint(format!(
                            "`{0}` is a mutation function, written after the name: `{1} ~({0})> value`",
                            one.name,
                            self.text(t)
                        )),
                        // `let X = 1`, `static Web => 1`: a declaration from another language.
                        [_] if t.kind == Tok::Word && assigns => d.hint(format!(
                            "CF2 declares nothing: a resource is defined by its name, `{} => value`; the one qualifier is `private`",
                            self.text(t)
                        )),
                        // `mail.relay smtp`, as LCFG and many configuration files write it.
                        _ if t.kind != Tok::Ref && !assigns => {
                            let value = rest.trim();
                            // Text other than a name or a number is quoted (`'smtp.example.org'`).
                            let value = if is_identifier(value)
                                || value.parse::<f64>().is_ok()
                                || value.contains(['\'', '"'])
                            {
                                shorten(value)
                            } else {
                                format!("'{}'", shorten(value))
                            };
                            d.hint(format!(
                                "a resource is defined with `=>`: `{} => {value}`",
                                dotted(path),
                            ))
                        }
                        _ => d,
                    },
                    _ => d,
                }
            }
            E::TildeNoParen(t) => self.expected(t, "`(` after `~`").hint(MUTATION_FN),
            E::TildeNoClose(t, name) => self.expected(t, &format!("`)` after `~({}`", name.name)),
            E::TildeNoGt(t, name) => self
                .expected(t, &format!("`>` after `~({})`", name.name))
                .hint(MUTATION_FN),
            E::DefNoParen(t, name) => self
                .expected(t, &format!("`(` after `def {}`", name.name))
                .hint("a macro is defined as `def name(param, ...) = expression`"),
            E::DefNoEq(t, name) => {
                let d = self.expected(t, &format!("`=` after `def {}(...)`", name.name));
                if t.kind == Tok::Arrow {
                    d.hint("a macro is defined with `=`: `def name(param, ...) = expression`")
                } else {
                    d
                }
            }
            E::ChainedComparison(t, op) => Diagnostic::error(format!(
                "comparisons cannot be chained: found `{}` after a comparison",
                op.symbol()
            ))
            .at(self.tspan(t))
            .with_label("second comparison")
            .hint("combine comparisons with `&&`, e.g. `$a < $b && $b < $c`, or use brackets"),
            E::AfterMatch(t, op, prec) => if prec == P_MATCH {
                Diagnostic::error(format!(
                    "`{}` cannot follow another regular expression match",
                    op.symbol()
                ))
                .hint("combine matches with `&&` or `||`")
            } else {
                Diagnostic::error(format!(
                    "`{}` cannot follow a regular expression match: the right side of `=~` and `!~` is a single value",
                    op.symbol()
                ))
                .hint("to build the pattern from parts, interpolate them into it (`$a =~ /x${b}/`); to use the match's result, put brackets around the match (`($a =~ /x/) ++ $b`)")
            }
            .at(self.tspan(t))
            .with_label("not allowed here"),
            E::MatchSelect(t, op) => Diagnostic::error(format!(
                "the right side of `{}` is a single value, so it cannot be followed by `.`",
                op.symbol()
            ))
            .at(self.tspan(t))
            .with_label("not allowed here")
            .hint("put brackets around the selection, e.g. `$a =~ ($Patterns.ip)`"),
            E::TooDeep(span) => Diagnostic::error(format!("nesting too deep (more than {MAX_NESTING} levels)"))
                .at(span)
                .with_label("too deep here")
                .hint("simplify the expression, or split it over several resources"),
            E::LongRun(span, op) => Diagnostic::error(format!(
                "nesting too deep (more than {MAX_NESTING} levels): a run of `{}` nests each operand inside the next",
                op.symbol()
            ))
            .at(span)
            .with_label("too deep here")
            .note("the operands are combined in the order written, since regrouping could change a result (rounding, overflow)")
            .hint({
                let o = op.symbol();
                format!("split the run: give parts resources of their own (`Part => a {o} b {o} ...`, then `$Part {o} ...`), or bracket parts where regrouping keeps the meaning")
            }),
            E::NumberTooLarge(span) => {
                let text = self
                    .lex
                    .src()
                    .get(span.start as usize..span.end as usize)
                    .unwrap_or("")
                    .replace(char::is_whitespace, "");
                let note = if text.contains('.') {
                    // A 64-bit float: its largest finite value is about 1.8 × 10^308.
                    "a number with a fraction must be less than about 1.8 × 10^308 in size".to_string()
                } else {
                    format!("integers must lie between {} and {}", i64::MIN, i64::MAX)
                };
                Diagnostic::error(format!("number too large: `{}`", shorten(&text)))
                    .at(span)
                    .with_label("too large")
                    .note(note)
            }
            E::DollarNoName(t) => {
                let d = self.expected(t, "a resource name after `$`");
                if t.kind != Tok::LBrace {
                    return d.hint("a reference is written `$Name`, with no space after `$`");
                }
                // `${Web.Port}` outside a string.
                let inner = self
                    .lex
                    .src()
                    .get(t.end..)
                    .and_then(|r| r.split('}').next())
                    .filter(|w| {
                        !w.is_empty()
                            && w.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                    })
                    .unwrap_or("Name");
                d.hint(format!(
                    "`${{...}}` interpolates inside a string; outside one write `${inner}`"
                ))
            }
            E::UnclosedLiteral(t) => Diagnostic::error("this literal is never closed: there is no matching `'`")
                .at(self.tspan(t))
                .with_label("opening quote")
                .hint("add a `'` where the text ends; write `\\'` for a quote inside it"),
            E::ValueExpected(t) => {
                let d = self.expected(t, "a value");
                let after_slash = self.char_before(t) == Some('/');
                let src = self.lex.src();
                let relative = src
                    .get(t.start..)
                    .is_some_and(|r| r.starts_with("./") || r.starts_with("../"));
                match t.kind {
                    Tok::Dot if relative => {
                        let rest = src.get(t.start..).unwrap_or_default();
                        let path = rest.split(ends_text_run).next().unwrap_or(rest);
                        d.hint(format!(
                            "a file name starting with `.` must be quoted: `'{}'`",
                            shorten(path)
                        ))
                    }
                    Tok::Tilde => d.hint("a regular expression match is written `=~`"),
                    Tok::Star if after_slash => {
                        d.hint("comments start with `//`; CF2 has no `/* */` comments")
                    }
                    // `2 ** 3`, from Python, Perl or Ruby.
                    Tok::Star if self.char_before(t) == Some('*') => {
                        d.hint("CF2 has no `**` (power) operator: multiply, `$x * $x`")
                    }
                    _ => d,
                }
            }
            E::EmptyBrackets(t) => self.expected(t, "an expression inside `( )`"),
            E::NeverClosed(open) => {
                let (closer, name) = match open.kind {
                    Tok::LParen => (")", "bracketed part"),
                    Tok::LBracket => ("]", "list"),
                    _ => ("}", "block"),
                };
                let d = Diagnostic::error(format!("this `{}` is never closed", self.text(open)))
                    .at(self.tspan(open))
                    .with_label(format!("no matching `{closer}`"));
                match self.misindented_close(open) {
                    // The `}` that closed an inner block was probably meant for this one.
                    Some((inner, close)) => d
                        .also(inner, "this `{` is probably the one never closed")
                        .also(close, "this `}` closes it, but is indented like an outer block")
                        .hint("add a `}` where the inner block ends"),
                    None => d.hint(format!("add a `{closer}` where the {name} ends")),
                }
            }
            E::BlockCut(open, cut) => {
                let also = match cut.kind {
                    Tok::RBracket => "this `]` closes the list around the block",
                    Tok::RParen => "this `)` closes the bracketed part around the block",
                    _ => "the next element starts here",
                };
                Diagnostic::error("this `{` is never closed")
                    .at(self.tspan(open))
                    .with_label("no matching `}`")
                    .also(self.tspan(cut), also)
                    .hint("add a `}` where the block ends")
            }
            E::MissingCloser(open, found, what) => self.missing_closer(open, found, what),
            E::ArgsCloser(open, found, callee) => {
                let what = match callee {
                    Some(name) => format!("`,` or `)` after an argument of `{}`", name.name),
                    None => "`,` or `)` after an argument of `import`".to_string(),
                };
                self.missing_closer(open, found, &what)
            }
            E::WrongCloser(open, found, callee) => {
                let what = match (open.kind, callee) {
                    (Tok::LBracket, _) => "a list element or `]`".to_string(),
                    (_, Some(name)) => format!("an argument of `{}` or `)`", name.name),
                    (_, None) => "an argument of `import` or `)`".to_string(),
                };
                self.missing_closer(open, found, &what)
            }
            E::ImportNoParen(t) => self
                .expected(t, "`(` after `import`")
                .hint("the file to import is written in brackets: `import(name)`"),
            E::ImportArity(span) => Diagnostic::error(
                "`import` takes one or two arguments: the file, and optionally the permitted signers",
            )
            .at(span)
            .with_label("wrong number of arguments")
            .hint("write `import(name)` or `import(name, 'signer@example.org')`"),
            E::NoOperand(op, found) => self.no_operand(op, found),
            E::IfNoParen(t) => self
                .expected(t, "`(` after `if`")
                .hint("the condition of `if` is written in brackets: `if ($x) then ... else ...`"),
            E::IfNoThen(t, kw) => {
                let d = self
                    .expected(t, "`then` after the condition of `if`")
                    .also(self.tspan(kw), "the `if` is here");
                if t.kind == Tok::LBrace {
                    d.hint("`then` comes before each value: `if ($x) then 2 else 3`; braces hold definitions, as in `if ($x) then { A => 1 } else { A => 2 }`")
                } else {
                    d
                }
            }
            E::Unterminated(open, true) => {
                Diagnostic::error("this regular expression is never closed: there is no matching `/` on its line")
                    .at(self.tspan(open))
                    .with_label("the regular expression starts here")
                    .hint("end it with `/`; write `\\/` for a `/` inside it")
            }
            E::Unterminated(open, false) => Diagnostic::error("this string is never closed: there is no matching `\"`")
                .at(self.tspan(open))
                .with_label("opening quote")
                .hint("add a `\"` where the text ends; write `\\\"` for a quote inside it"),
            E::InterpName(t) => self
                .expected(t, "a resource name after `${`")
                .hint(format!("`${{Name}}` inserts the value of `Name`; {NOT_INTERP}")),
            E::InterpUnclosed(dollar) => Diagnostic::error("this `${` is never closed: there is no matching `}`")
                .at(self.span(dollar, dollar + 2))
                .with_label("interpolation starts here")
                .hint(format!("end it with `}}`, e.g. `${{Name}}`; {NOT_INTERP}")),
            E::QuotedName(t) => self.quoted_name(t),
            E::MissingValue(op, path, value) => self.missing_value(op, path, value),
            E::DanglingOperator(at, path, name) => self.dangling_operator(at, path, name),
            E::StrayBranch(t) => {
                let kw = self.text(t);
                Diagnostic::error(format!("this `{kw}` has no `if`"))
                    .at(self.tspan(t))
                    .with_label(format!("`{kw}` outside an `if`"))
                    .note("a branch of `if` ends at the end of its line, or at the end of its first definition")
                    .hint("a branch holding several resources needs `{ ... }`: `if (...) then { A => 1, B => 2 } else { ... }`")
            }
            E::BlockComment(t) => Diagnostic::error("expected a resource definition (`Name => value`) or a statement, found `/*`")
                .at(self.span(t.start, t.start + 2))
                .with_label("not a comment")
                .hint("comments start with `//`; CF2 has no `/* */` comments"),
            E::InterpNotClosed(dollar, next) => {
                let inner = self
                    .lex
                    .src()
                    .get(dollar..next.start)
                    .unwrap_or("${")
                    .trim_end()
                    .trim_end_matches('.');
                Diagnostic::error("this `${` is not closed: expected `}` before the next `${`")
                    .at(self.span(dollar, dollar + 2))
                    .with_label("interpolation starts here")
                    .also(self.span(next.start, next.start + 1), "the next interpolation starts here")
                    .hint(format!("end each interpolation with `}}`, e.g. `{inner}}}`"))
            }
            E::BranchDefinition(kw, branch, op) => {
                let src = self.lex.src();
                let name = src.get(branch.start as usize..branch.end as usize).unwrap_or("Name");
                let op_text = src.get(op.start..op.end).unwrap_or("=>");
                let kw_text = self.text(kw);
                Diagnostic::error(format!(
                    "a definition cannot be a branch of `if` without `{{ }}`: `{name} {op_text} ...` after `{kw_text}`"
                ))
                .at(self.tspan(op))
                .with_label("a definition")
                .also(branch, format!("read as the value of the `{kw_text}` branch"))
                .hint(format!(
                    "a branch holding resources must be a block: `{kw_text} {{ {name} {op_text} ... }}`"
                ))
            }
            E::InterpExpected(t, dollar) => self
                .expected(t, "`.` or `}` in `${...}`")
                .also(self.span(dollar, dollar + 2), "the interpolation starts here")
                .note("only a reference with selectors can be interpolated, e.g. `${Name.member}`"),
        }
    }

    /// A statement starting with a quoted text; if it is followed by `:` or `=>` and a
    /// value, a hint shows it as a definition (`"port": 9100` is `port => 9100`).
    fn quoted_name(&self, t: Token) -> Diagnostic {
        let d = self.expected(t, "a resource definition (`Name => value`) or a statement");
        let src = self.lex.src();
        let end = if t.kind == Tok::DQuote {
            string_end(src, t.end).unwrap_or(t.end)
        } else {
            t.end
        };
        let name = src
            .get(t.start + 1..end.saturating_sub(1).max(t.start + 1))
            .unwrap_or("");
        let rest = src.get(end..).and_then(|r| r.lines().next()).unwrap_or("");
        let rest = rest.trim_start();
        // The value up to the next separator of the block (`"a": 1, "b": 2 }`).
        let value = rest
            .strip_prefix("=>")
            .or_else(|| rest.strip_prefix(':'))
            .map(|v| {
                v.split(',')
                    .next()
                    .unwrap_or(v)
                    .trim()
                    .trim_end_matches('}')
                    .trim_end()
            });
        // Only a name that could be written bare: `"server name"` could not.
        if !name.is_empty() && !is_identifier(name) {
            return d.hint(
                "resource names are not quoted, and are identifiers: letters, digits and `_` (`server_name => ...`)",
            );
        }
        match value {
            Some(v) if !name.is_empty() && !v.is_empty() => {
                let v = if v == "{" { "{ ..." } else { v };
                d.hint(format!(
                    "resource names are not quoted: `{} => {}`",
                    shorten(name),
                    shorten(v)
                ))
            }
            _ => d,
        }
    }

    /// A mutation operator with no value after it; `value` is what was read as its value
    /// from a later line (the start of another definition).
    fn missing_value(&self, op: Span, path: &[Ident], value: Option<Span>) -> Diagnostic {
        let src = self.lex.src();
        let op_text = src.get(op.start as usize..op.end as usize).unwrap_or("=>");
        let name = self.resource_name(None).unwrap_or_else(|| dotted(path));
        let d = Diagnostic::error(format!("expected a value for `{name}` after `{op_text}`"))
            .at(op)
            .with_label("no value after this")
            .resource(name.clone());
        let Some(value) = value else {
            return d.hint(format!(
                "give `{name}` a value, e.g. `{} {op_text} value`",
                dotted(path)
            ));
        };
        let line_start = line_start(src, value.start as usize);
        let line = src
            .get(line_start..)
            .and_then(|s| s.lines().next())
            .unwrap_or("")
            .trim();
        d.also(value, "read as its value").hint(format!(
            "the next line `{}` was read as the value of `{name}`; is a value missing?",
            shorten(line)
        ))
    }

    /// Nothing after `op` (an operator, `.`, `if`, `then`, `else`) but `found`: the end of
    /// the file, a `,` or a closing bracket. Shown at `op`.
    fn no_operand(&self, op: Token, found: Token) -> Diagnostic {
        let src = self.lex.src();
        let op_text = self.text(op);
        let what = match op.kind {
            Tok::Dot => "a selector",
            Tok::Word if op_text == "if" => "`(`",
            _ => "a value",
        };
        let later_line = src
            .get(op.end..found.start)
            .is_some_and(|gap| gap.contains('\n'));
        let label = if later_line {
            "the line ends after this"
        } else {
            "nothing after this"
        };
        let d = Diagnostic::error(format!(
            "expected {what} after `{op_text}`, found {}",
            self.describe(found)
        ))
        .at(self.tspan(op))
        .with_label(label);
        let after_number =
            op.kind == Tok::Dot && self.char_before(op).is_some_and(|c| c.is_ascii_digit());
        let hint = match (op.kind, self.resource_name(None)) {
            _ if after_number => {
                "a number with a fraction has digits after its point, e.g. `1.0`".to_string()
            }
            (Tok::Word, _) if op_text == "if" => {
                "the condition of `if` is written in brackets: `if ($x) then ... else ...`"
                    .to_string()
            }
            (Tok::Word, _) => format!("give the `{op_text}` branch a value"),
            (_, Some(resource)) => {
                format!("finish the value of `{resource}` after `{op_text}`, or remove `{op_text}`")
            }
            (_, None) => format!("finish the expression after `{op_text}`, or remove `{op_text}`"),
        };
        d.hint(hint)
    }

    /// An operator that ends a line, whose operand became the next line's definition.
    fn dangling_operator(&self, at: Span, path: &[Ident], name: Span) -> Diagnostic {
        let src = self.lex.src();
        let op_text = src.get(at.start as usize..at.end as usize).unwrap_or("");
        let resource = self.resource_name(None).unwrap_or_else(|| dotted(path));
        let line = src
            .get(name.start as usize..)
            .and_then(|s| s.lines().next())
            .unwrap_or("")
            .trim();
        let d = Diagnostic::error(format!(
            "`{op_text}` ends the line, so the next line `{}` was read as its operand in the value of `{resource}`",
            shorten(line)
        ))
        .at(at)
        .with_label("the line ends after this")
        .also(name, "read as the operand")
        .resource(resource.clone());
        let after = src
            .get(at.end as usize..)
            .unwrap_or("")
            .trim_start_matches([' ', '\t']);
        let d = if after.starts_with("//") {
            d.note("`//` starts a comment: an empty regex is written `/(?:)/`")
        } else {
            d
        };
        d.hint(format!(
            "finish the value of `{resource}` after `{op_text}`, or remove `{op_text}`"
        ))
    }

    /// For a block never closed: the first block inside it whose `}` is less indented than
    /// the line of its `{` (the `}` is first on its line). That `}` was most likely written
    /// for an outer block, so the inner one is the block missing its `}`. Scanned only when
    /// reporting, so parsing pays nothing for it.
    fn misindented_close(&self, outer: Token) -> Option<(Span, Span)> {
        if outer.kind != Tok::LBrace {
            return None;
        }
        let src = self.lex.src();
        let indent = |at: usize| {
            let start = line_start(src, at);
            let line = src.get(start..).unwrap_or("");
            let width = line.len() - line.trim_start_matches([' ', '\t']).len();
            (start, width)
        };
        let mut lex = Lexer::new(src, outer.end);
        let mut open: Vec<Token> = Vec::new();
        loop {
            let t = lex.next_token();
            match t.kind {
                Tok::Eof => return None,
                Tok::DQuote => lex.skip_string(),
                Tok::LBrace => open.push(t),
                Tok::RBrace => {
                    // A `}` closing the outer block itself means it was closed after all.
                    let inner = open.pop()?;
                    let (close_line, close_indent) = indent(t.start);
                    let (open_line, open_indent) = indent(inner.start);
                    if close_line != open_line
                        && close_line + close_indent == t.start
                        && close_indent < open_indent
                    {
                        return Some((self.tspan(inner), self.tspan(t)));
                    }
                }
                _ => {}
            }
        }
    }

    /// A missing closing bracket: at the opening bracket when the file ends, otherwise at
    /// the token found, pointing back at the opening bracket.
    fn missing_closer(&self, open: Token, found: Token, expected: &str) -> Diagnostic {
        if found.kind == Tok::Eof {
            return self.diagnose(E::NeverClosed(open));
        }
        let name = match open.kind {
            Tok::LParen => "bracketed part",
            Tok::LBracket => "list",
            _ => "block",
        };
        let d = self
            .expected(found, expected)
            .also(self.tspan(open), format!("the {name} starts here"));
        if found.kind == Tok::Assign && open.kind == Tok::LParen {
            // `def inc(x = $x + 1`: the parameters' `)` is missing, nothing compares.
            if expected.contains("macro parameter") {
                return d.hint("is the `)` after the parameters missing? A macro is written `def inc(x) = $x + 1`");
            }
            return d.hint("`=` does not compare: write `==`, e.g. `if ($Hostname == web1)`");
        }
        if let Some(h) = self.foreign_hint(found) {
            return d.hint(h);
        }
        if open.kind == Tok::LBracket
            && matches!(
                found.kind,
                Tok::Number | Tok::Word | Tok::Ref | Tok::DQuote | Tok::SQuoted | Tok::LBrace
            )
        {
            // `[1 2 3]`: another element where a separator belongs.
            return d.hint("separate the elements of a list with `,` or a newline: `[1, 2, 3]`");
        }
        if let Some(around) = self.closes_around(open, found) {
            let closer = match open.kind {
                Tok::LParen => ")",
                Tok::LBracket => "]",
                _ => "}",
            };
            return d.hint(format!(
                "is a `{closer}` missing? This `{}` closes {around} around the {name}",
                self.text(found)
            ));
        }
        if matches!(found.kind, Tok::Arrow | Tok::MergeArrow) {
            let closer = match open.kind {
                Tok::LParen => ")",
                Tok::LBracket => "]",
                _ => "}",
            };
            d.hint(format!(
                "is a `{closer}` missing? A definition (`Name => value`) cannot stand inside a {name}"
            ))
        } else {
            d
        }
    }

    /// If `found` is a closing bracket of a construct still open around the one `open`
    /// opened (the `}` of the block around `[80, 443`), what that construct is.
    fn closes_around(&self, open: Token, found: Token) -> Option<&'static str> {
        let (opener, around) = match found.kind {
            Tok::RParen => (Tok::LParen, "the bracketed part"),
            Tok::RBracket => (Tok::LBracket, "the list"),
            Tok::RBrace => (Tok::LBrace, "the block"),
            _ => return None,
        };
        if opener == open.kind {
            return None;
        }
        let inner = self
            .brackets
            .iter()
            .rposition(|(_, span)| span.start as usize == open.start)?;
        self.open_below(inner, opener).then_some(around)
    }

    /// Error recovery: if the closing bracket `t` closes one opened above the first `base`
    /// open brackets, consumes it, closes that bracket (and any left open inside it) and
    /// says so.
    fn close_opened_above(&mut self, base: usize, t: Token) -> bool {
        let opener = opener_of(t.kind);
        let above = self.brackets.get(base..).unwrap_or(&[]);
        let Some(i) = above.iter().rposition(|(k, _)| *k == opener) else {
            return false;
        };
        self.lex.next_token();
        self.brackets.truncate(base + i);
        true
    }

    /// Error recovery, at a newline: whether a list or brackets (not a block) are open and
    /// the next line starts a definition — the bracket was left unclosed.
    fn unclosed_before_definition(&mut self) -> bool {
        self.brackets.last().is_some_and(|(k, _)| *k != Tok::LBrace) && self.starts_definition(1)
    }

    /// Whether a bracket of kind `opener` is open among the first `n` open brackets (those
    /// around the construct the `n`th opened).
    fn open_below(&self, n: usize, opener: Tok) -> bool {
        self.brackets
            .get(..n)
            .is_some_and(|outer| outer.iter().any(|(k, _)| *k == opener))
    }

    /// A hint for a word from another language at `t`, or just before it (`not $x`).
    fn foreign_hint(&self, t: Token) -> Option<&'static str> {
        // `$x == 1 ? a : b`: C's conditional operator (a `?` after a value is no `?` value).
        if t.kind == Tok::Question {
            return Some(
                "CF2 has no `? :`: the conditional is written `if ($x == 1) then a else b`",
            );
        }
        // `$Ports[0]`, `$Web["port"]`: indexing as in most languages, right after a value.
        let adjacent = self
            .char_before(t)
            .is_some_and(|c| !c.is_whitespace() && c != ',');
        if t.kind == Tok::LBracket && adjacent {
            return Some(
                "an element or member is selected with `.`: `$Ports.0` for a list's first element, `$Ports.($i)` for a computed one, `$Web.port` for a member",
            );
        }
        if t.kind == Tok::Word {
            if let Some(h) = foreign_word_hint(self.text(t)) {
                return Some(h);
            }
        }
        let before = self.lex.src().get(..t.start)?;
        let line = before.rsplit('\n').next().unwrap_or("").trim_end();
        let word = line
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        (word == "not" || word == "NOT").then_some("logical 'not' is written `!`, e.g. `!$x`")
    }

    /// A statement followed by something other than a separator.
    fn no_separator(&self, n: Token, last: Option<&Statement>) -> Diagnostic {
        if n.kind == Tok::RBrace {
            return self.diagnose(E::Unmatched(n));
        }
        let name = match last {
            Some(Statement::Resource(r)) => self.resource_name(Some(&r.path)),
            _ => None,
        };
        let after = match (last, &name) {
            (Some(Statement::Resource(_)), Some(name)) => {
                format!("after the definition of `{name}`")
            }
            (Some(Statement::Resource(r)), None) => {
                format!("after the definition of `{}`", dotted(&r.path))
            }
            (Some(Statement::Import(_)), _) => "after `import(...)`".to_string(),
            (Some(Statement::If(_)), _) => "after the `if` statement".to_string(),
            (Some(Statement::Call(c)), _) => format!("after the call of `{}`", c.name.name),
            (Some(Statement::Macro(m)), _) => {
                format!("after the definition of macro `{}`", m.name.name)
            }
            (None, _) => "after the statement".to_string(),
        };
        let d = self.expected(n, &format!("a newline or `,` {after}"));
        let d = match name {
            Some(name) => d.resource(name),
            None => d,
        };
        let last_value = match last {
            Some(Statement::Resource(r)) => r.mutations.last().map(|m| &m.value),
            Some(Statement::Macro(m)) => Some(&m.body),
            _ => None,
        };
        let Some(v) = last_value else {
            return match self.foreign_hint(n) {
                Some(h) => d.hint(h),
                None => d,
            };
        };
        if !matches!(v.kind, ExprKind::Literal(_) | ExprKind::String(_)) {
            if let Some(h) = self.foreign_hint(n) {
                return d.hint(h);
            }
        }
        let src = self.lex.src();
        let word = src.get(n.start..n.end).unwrap_or("");
        // `/a/i`: the flags Perl writes after a pattern (the value may be the match
        // `$X =~ /a/`, so the `/` is looked for in the text).
        if n.kind == Tok::Word
            && n.start > 0
            && src.get(n.start - 1..n.start) == Some("/")
            && !word.is_empty()
            && word.chars().all(|c| "imsxgn".contains(c))
        {
            let inline: String = word.chars().filter(|c| "imsx".contains(*c)).collect();
            return d.hint(if inline.is_empty() {
                "a regular expression takes no flags after its closing `/`".to_string()
            } else {
                format!("a regular expression takes no flags after its closing `/`: write them at its start, as in `/(?{inline}).../`")
            });
        }
        if let (ExprKind::Regex(_), Tok::Word) = (&v.kind, n.kind) {
            if n.start == v.span.end as usize {
                // `/var/log/nginx`: `/var/` read as a regular expression.
                let src = self.lex.src();
                let path = src
                    .get(v.span.start as usize..)
                    .and_then(|r| r.split(|c: char| c.is_whitespace() || c == ',').next())
                    .unwrap_or("/path");
                return d.hint(format!("a path must be quoted: `'{}'`", shorten(path)));
            }
        }
        let spans_lines = self
            .lex
            .src()
            .get(v.span.start as usize..v.span.end as usize)
            .is_some_and(|s| s.contains('\n'));
        // `'it's here'`: the text ended at a quote it meant to hold.
        let quote = self
            .lex
            .src()
            .get(v.span.start as usize..)
            .and_then(|r| r.chars().next())
            // A quoted text over lines more likely lacks its closing quote (said below).
            .filter(|q| (*q == '\'' || *q == '"') && !spans_lines);
        if let (Some(q), ExprKind::String(_) | ExprKind::Literal(_)) = (quote, &v.kind) {
            if n.start == v.span.end as usize && matches!(n.kind, Tok::Word | Tok::Number) {
                return d.hint(format!(
                    "the `{q}` before this ends the quoted text: to put a `{q}` inside it, write `\\{q}`"
                ));
            }
        }
        match &v.kind {
            ExprKind::String(_) | ExprKind::Literal(_) if spans_lines => {
                let d = d.also(
                    v.span,
                    "this quoted text runs over several lines: is a closing quote missing?",
                );
                // `'C:\'`: the `\'` meant to end the text, with a backslash before it.
                let first_line = src
                    .get(v.span.start as usize..v.span.end as usize)
                    .and_then(|t| t.lines().next())
                    .unwrap_or("");
                match first_line
                    .strip_suffix("\\'")
                    .or(first_line.strip_suffix("\\\""))
                {
                    Some(text) if !text.ends_with('\\') => {
                        let q = first_line.chars().last().unwrap_or('\'');
                        d.hint(format!(
                            "`\\{q}` is a `{q}` inside the text, not its end: to end the text with a backslash, write `\\\\{q}` (`{}\\\\{q}`)",
                            shorten(text)
                        ))
                    }
                    _ => d,
                }
            }
            ExprKind::Literal(_) if matches!(n.kind, Tok::Word | Tok::Number) => {
                d.hint("text containing spaces must be quoted, e.g. `'two words'`")
            }
            // `2nd`: a number, then a word right after it.
            ExprKind::Number(_) if n.kind == Tok::Word && n.start == v.span.end as usize => {
                let text = src.get(v.span.start as usize..n.end).unwrap_or_default();
                // `1.5e3`, `2E-4`: a number in the exponent form CF2 does not have.
                let in_full = match word.starts_with(['e', 'E']) {
                    true => exponent_number(src.get(v.span.start as usize..).unwrap_or_default()),
                    false => None,
                };
                if let Some((exponent, full)) = in_full {
                    return d.hint(format!(
                        "numbers are written without an exponent: `{full}` for `{exponent}`, or `'{exponent}'` for the text"
                    ));
                }
                d.hint(format!(
                    "text that starts with a digit must be quoted: `'{text}'`"
                ))
            }
            _ => d,
        }
    }
}

/// The number in exponent form at the start of `text` (`1.5e3`, `2E-4`), if it is one and
/// ends there, with the number written in full (`1500`), unless that is too long to be of
/// help.
fn exponent_number(text: &str) -> Option<(&str, String)> {
    let mantissa = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let rest = text.get(mantissa..)?;
    let sign = usize::from(rest.get(1..2).is_some_and(|c| c == "+" || c == "-"));
    let digits = rest
        .get(1 + sign..)?
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len() - 1 - sign);
    let end = mantissa + 1 + sign + digits;
    let after = text.get(end..).and_then(|t| t.chars().next());
    if digits == 0 || after.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
        return None;
    }
    let exponent = text.get(..end)?;
    let full = exponent
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())?
        .to_string();
    (full.len() <= 24).then_some((exponent, full))
}

/// Whether `c` ends a run of unquoted text a hint suggests quoting (`http://x`,
/// `./base`): white space, a bracket or `,`.
fn ends_text_run(c: char) -> bool {
    c.is_whitespace() || "()[]{},".contains(c)
}

/// The opening bracket a closing bracket `closer` closes (`{` for `}`).
fn opener_of(closer: Tok) -> Tok {
    match closer {
        Tok::RParen => Tok::LParen,
        Tok::RBracket => Tok::LBracket,
        _ => Tok::LBrace,
    }
}

/// A bare word, or bare words joined by `.`: what a resource path reads as in value position.
fn is_name_path(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) => true,
        ExprKind::Select(base, sel) => is_name_path(base) && is_name_path(sel),
        _ => false,
    }
}

/// LCFG's mutation macros (`!mail.relay mADD(x)`), and what CF2 writes instead.
const LCFG_MACROS: &[&str] = &["mSET", "mADD", "mREMOVE", "mEXTRA", "mREPLACE", "mCONCAT"];
const LCFG_MUTATION: &str = "LCFG's `!resource mSET(value)` is written `resource => value` in CF2, and `mADD(x)` `resource ~(append)> [x]`, `mREMOVE(x)` `resource ~(remove)> [x]`, `mEXTRA(x)` `resource ~(union)> [x]`";

/// A hint for a word from another language where an operator or keyword was expected.
fn foreign_word_hint(w: &str) -> Option<&'static str> {
    Some(match w {
        "and" | "AND" => "logical 'and' is written `&&`",
        "or" | "OR" => "logical 'or' is written `||`",
        "not" | "NOT" => "logical 'not' is written `!`",
        "elif" | "elsif" | "elseif" => "write `else if (...) then ...`",
        _ => return None,
    })
}

fn dotted(path: &[Ident]) -> String {
    path.iter().map(|i| &*i.name).collect::<Vec<_>>().join(".")
}

/// Where the line holding byte `at` of `src` starts.
fn line_start(src: &str, at: usize) -> usize {
    src.get(..at)
        .and_then(|s| s.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// At most 40 characters of the first line of `s`.
fn shorten(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(40).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// Runs one level of a nested construct, on a fresh stack segment when the current one is
/// nearly used (see `cf2_value::stack`).
fn nested<T>(f: impl FnOnce() -> T) -> T {
    cf2_value::stack::deep(64 * 1024, 1024 * 1024, f)
}
