//! Custom functions (reference §3.12, §4.3, §6; docs/functions.md): the interface through
//! which functions written outside the evaluator — Lua modules (the `cf2-lua` crate), native
//! Rust functions registered by an embedding program — are called from configurations and
//! used as mutation functions.
//!
//! - A [`Function`] declares a prototype ([`ParamType`] per argument, §6.1), is called with
//!   evaluated arguments converted to plain [`Value`]s (or, for `NOEVAL` parameters, an
//!   [`Unevaluated`] handle it can inspect and evaluate), and may also be a mutation
//!   function (§6.2) used as `X ~(name)> value`.
//! - A [`CallContext`] gives the function the call site and a way to look up references as
//!   `$path` written at the call would.
//! - A [`FunctionProvider`] finds functions by (lower-case) name; [`Functions`], held in
//!   [`crate::Options`], is the ordered set of registered native functions and providers.
//!
//! Values cross the boundary converted, so a function never holds evaluator state.
//!
//! Name resolution (docs/semantics.md §12): a macro defined above the call, then a standard
//! function, then a registered native function, then the providers in the order they were
//! added. A standard name can never be taken by an external function.

use crate::error::{ErrorKind, EvalError, R};
use crate::eval::{deep, Evaluator};
use crate::expr::too_deep;
use crate::model::*;
use crate::ops::numeric;
use crate::val::{make_list, Val};
use cf2_syntax::ast::{self, Expr, ExprKind};
use cf2_syntax::{Diagnostic, FileId, Span};
use cf2_value::{Block, Number, Value};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

// ----- prototypes -----------------------------------------------------------------------

/// The permitted types of one argument (reference §6.1), combined with `|`, plus the
/// `NOEVAL` flag.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ParamType(u16);

impl ParamType {
    /// An undefined value (`?`, an `if` without `else` not taken).
    pub const UNDEF: ParamType = ParamType(1);
    pub const BLOCK: ParamType = ParamType(1 << 1);
    pub const LIST: ParamType = ParamType(1 << 2);
    pub const BOOL: ParamType = ParamType(1 << 3);
    /// A number; text that spells a number is accepted and passed as the number, unless
    /// the parameter also accepts text.
    pub const NUMBER: ParamType = ParamType(1 << 4);
    pub const LITERAL: ParamType = ParamType(1 << 5);
    pub const REGEX: ParamType = ParamType(1 << 6);
    pub const STRING: ParamType = ParamType(1 << 7);
    /// `LITERAL|STRING` (a cf2 extension).
    pub const TEXT: ParamType = ParamType(Self::LITERAL.0 | Self::STRING.0);
    /// `BOOL|NUMBER|LITERAL|REGEX|STRING`.
    pub const SCALAR: ParamType =
        ParamType(Self::BOOL.0 | Self::NUMBER.0 | Self::TEXT.0 | Self::REGEX.0);
    /// Any defined value (add `UNDEF` to accept undefined too).
    pub const ANYTYPE: ParamType = ParamType(Self::SCALAR.0 | Self::BLOCK.0 | Self::LIST.0);
    /// Flag: the argument is passed unevaluated, as an [`Unevaluated`] handle. Its types
    /// are checked when the function evaluates it; without types it may be anything.
    pub const NOEVAL: ParamType = ParamType(1 << 8);

    const NAMES: &'static [(&'static str, ParamType)] = &[
        ("ANYTYPE", Self::ANYTYPE),
        ("SCALAR", Self::SCALAR),
        ("TEXT", Self::TEXT),
        ("UNDEF", Self::UNDEF),
        ("BLOCK", Self::BLOCK),
        ("LIST", Self::LIST),
        ("BOOL", Self::BOOL),
        ("NUMBER", Self::NUMBER),
        ("LITERAL", Self::LITERAL),
        ("REGEX", Self::REGEX),
        ("STRING", Self::STRING),
        ("NOEVAL", Self::NOEVAL),
    ];

    /// Parses `NUMBER|STRING`, `ANYTYPE|NOEVAL` (names case-insensitive, blanks allowed).
    pub fn parse(text: &str) -> Result<ParamType, String> {
        let mut t = ParamType(0);
        for word in text.split('|') {
            let word = word.trim();
            let Some((_, p)) = Self::NAMES
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(word))
            else {
                return Err(format!(
                    "`{word}` is not an argument type (expected {})",
                    Self::NAMES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            t = t | *p;
        }
        if t.types().0 == 0 && !t.is_noeval() {
            return Err(format!("`{text}` names no argument type"));
        }
        Ok(t)
    }

    pub fn contains(self, other: ParamType) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn is_noeval(self) -> bool {
        self.contains(Self::NOEVAL)
    }

    /// The types, without the `NOEVAL` flag.
    pub fn types(self) -> ParamType {
        ParamType(self.0 & !Self::NOEVAL.0)
    }

    /// Whether a value of kind `type_name` (as `typeof()` names it) is accepted.
    pub fn accepts(self, type_name: &str) -> bool {
        let t = self.types();
        if t.0 == 0 {
            // `NOEVAL` alone: anything.
            return true;
        }
        let want = match type_name {
            "undef" => Self::UNDEF,
            "block" => Self::BLOCK,
            "list" => Self::LIST,
            "bool" => Self::BOOL,
            "number" => Self::NUMBER,
            "literal" => Self::LITERAL,
            "regex" => Self::REGEX,
            "string" => Self::STRING,
            _ => return false,
        };
        t.0 & want.0 != 0
    }

    /// How an error message names the accepted kinds ("a number or text").
    pub fn phrase(self) -> String {
        let t = self.types();
        if t.0 == 0 || t == Self::ANYTYPE | Self::UNDEF {
            return "any value".into();
        }
        let mut parts: Vec<&str> = Vec::new();
        let mut rest = t;
        for (name, p) in [
            ("any defined value", Self::ANYTYPE),
            ("a scalar", Self::SCALAR),
            ("text", Self::TEXT),
            ("a block", Self::BLOCK),
            ("a list", Self::LIST),
            ("a boolean", Self::BOOL),
            ("a number", Self::NUMBER),
            ("a literal", Self::LITERAL),
            ("a string", Self::STRING),
            ("a regex", Self::REGEX),
            ("an undefined value", Self::UNDEF),
        ] {
            if rest.contains(p) {
                parts.push(name);
                rest = ParamType(rest.0 & !p.0);
            }
        }
        match parts.len() {
            0 => "nothing".into(),
            1 => parts[0].into(),
            n => format!("{} or {}", parts[..n - 1].join(", "), parts[n - 1]),
        }
    }
}

impl std::ops::BitOr for ParamType {
    type Output = ParamType;
    fn bitor(self, rhs: ParamType) -> ParamType {
        ParamType(self.0 | rhs.0)
    }
}

impl fmt::Display for ParamType {
    /// The prototype spelling: `NUMBER|STRING`, `ANYTYPE|NOEVAL`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = *self;
        let mut parts = Vec::new();
        for (name, p) in Self::NAMES {
            if p.0 != 0 && rest.contains(*p) {
                parts.push(*name);
                rest = ParamType(rest.0 & !p.0);
            }
        }
        if parts.is_empty() {
            parts.push("NONE");
        }
        f.write_str(&parts.join("|"))
    }
}

impl fmt::Debug for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

// ----- what a function sees ---------------------------------------------------------------

/// A place in a source file (1-based line and column, the column in characters).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One argument of a call.
#[derive(Clone, Debug)]
pub enum Arg {
    /// An evaluated argument; `None` is undefined (only for parameters accepting `UNDEF`).
    Value(Option<Value>),
    /// An argument of a `NOEVAL` parameter: the expression, not yet evaluated.
    Unevaluated(Unevaluated),
}

/// An unevaluated argument (a `NOEVAL` parameter). Evaluate it with
/// [`CallContext::evaluate`] during the call; a handle kept after the call is useless.
#[derive(Clone, Debug)]
pub struct Unevaluated {
    /// The argument's position (0-based).
    pub index: usize,
    /// The kind of expression: `literal`, `string`, `number`, `bool`, `regex`, `undef`,
    /// `list`, `block`, `reference`, `select`, `operator`, `if`, `call`, `import`.
    pub kind: &'static str,
    /// The expression's source text, as written.
    pub source: String,
    pub location: Location,
    /// The types declared for the parameter (checked when it is evaluated).
    pub types: ParamType,
}

/// What a function can ask of the evaluator during a call.
pub trait CallContext {
    /// The function's name as written at the call (or in `~(name)>`).
    fn name(&self) -> &str;
    /// The call site (for a mutation: the definition that uses the function).
    fn location(&self) -> Location;
    /// The dotted path of the resource being computed, if any.
    fn resource(&self) -> Option<String>;
    /// The value of `$path` (`Web.Ports.0`) as a reference written at the call would see
    /// it; `Ok(None)` if it is undefined. Blocks are returned whole.
    fn lookup(&mut self, path: &str) -> Result<Option<Value>, String>;
    /// Evaluates a `NOEVAL` argument (at most once; later calls give the same value) and
    /// checks it against the parameter's types. `Ok(None)` if it is undefined.
    fn evaluate(&mut self, arg: &Unevaluated) -> Result<Option<Value>, String>;
    /// Reports a warning at the call site, as `warn()` does.
    fn warn(&mut self, message: &str);
    /// The compile the call belongs to. A function that keeps anything between calls keeps
    /// it for one compile: in a batch one thread compiles host after host, and what one
    /// host's calls left behind must not reach the next host's values.
    fn compile(&self) -> CompileId;
    /// Counts `steps` of work the function did against the compile's budget of evaluation
    /// steps (`Options::max_steps`), which bounds the whole compile: each call may be
    /// bounded on its own, but a configuration can make many calls. `Err` (the message
    /// to fail the call with) once the budget is spent.
    fn charge(&mut self, steps: u64) -> Result<(), String> {
        let _ = steps;
        Ok(())
    }
}

/// One compile, distinct from every other compile of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompileId(u64);

impl CompileId {
    /// A new compile's.
    pub fn next() -> CompileId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        CompileId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// How an external function behaves as a mutation function (reference §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mutation {
    /// Several unordered definitions of a resource can then combine
    /// (clarifications §5); otherwise they are `cannot determine mutation order`.
    pub commutative: bool,
}

/// A custom function (reference §6). Implementations must be callable from several
/// threads (batch compiles share them).
pub trait Function: Send + Sync {
    /// The function's name (lower case; names are case-insensitive).
    fn name(&self) -> &str;
    /// The prototype: one entry per argument; the number of arguments is fixed.
    fn params(&self) -> &[ParamType];
    /// Calls the function. `Ok(None)` gives an undefined value; `Err(message)` fails the
    /// compile with the message at the call site.
    fn call(&self, cx: &mut dyn CallContext, args: Vec<Arg>) -> Result<Option<Value>, String>;
    /// False for a function that is only a mutation function: calling it is an error.
    fn callable(&self) -> bool {
        true
    }
    /// `Some` if the function can be used as a mutation function (`X ~(name)> value`).
    fn mutation(&self) -> Option<Mutation> {
        None
    }
    /// Combines the evaluated top values of a resource (those no other definition
    /// outranks, in reading order; one unless the function is commutative) with the value
    /// folded from everything below them (`None` if nothing is below).
    fn mutate(
        &self,
        cx: &mut dyn CallContext,
        top: Vec<Value>,
        lower: Option<Value>,
    ) -> Result<Option<Value>, String> {
        let _ = (cx, top, lower);
        Err(format!("`{}` is not a mutation function", self.name()))
    }
    /// Where the function comes from, for messages (`functions/cidr.lua`).
    fn origin(&self) -> String {
        "a native function".into()
    }
}

/// Finds functions by name: a directory of Lua modules, a plugin registry, ...
pub trait FunctionProvider: Send + Sync {
    /// The function called `name` (lower case): `None` if this provider has none,
    /// `Some(Err(message))` if it has one that cannot be loaded.
    fn function(&self, name: &str) -> Option<Result<Arc<dyn Function>, String>>;
    /// Names of the functions it can provide, if cheap to list (for "did you mean").
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
    /// Why a function it would give may be missing (a directory of its path that does not
    /// exist), for an "unknown function" error.
    fn unavailable(&self) -> Option<String> {
        None
    }
}

type CallFn = dyn Fn(&mut dyn CallContext, Vec<Arg>) -> Result<Option<Value>, String> + Send + Sync;
type MutateFn = dyn Fn(&mut dyn CallContext, Vec<Value>, Option<Value>) -> Result<Option<Value>, String>
    + Send
    + Sync;

/// A function written in Rust, from closures.
///
/// ```
/// use cf2_eval::external::{Arg, NativeFunction, ParamType};
/// use cf2_value::{Number, Value};
/// let add = NativeFunction::new("add", vec![ParamType::NUMBER, ParamType::NUMBER], |_cx, args| {
///     let n = |a: &Arg| match a {
///         Arg::Value(Some(Value::Number(n))) => n.as_f64(),
///         _ => 0.0,
///     };
///     Ok(Some(Value::Number(Number::Float(n(&args[0]) + n(&args[1])))))
/// });
/// ```
pub struct NativeFunction {
    name: String,
    params: Vec<ParamType>,
    call: Box<CallFn>,
    mutate: Option<(Mutation, Box<MutateFn>)>,
}

impl NativeFunction {
    pub fn new(
        name: &str,
        params: Vec<ParamType>,
        call: impl Fn(&mut dyn CallContext, Vec<Arg>) -> Result<Option<Value>, String>
            + Send
            + Sync
            + 'static,
    ) -> NativeFunction {
        NativeFunction {
            name: name.to_lowercase(),
            params,
            call: Box::new(call),
            mutate: None,
        }
    }

    /// Makes the function usable as a mutation function too.
    pub fn with_mutation(
        mut self,
        commutative: bool,
        mutate: impl Fn(&mut dyn CallContext, Vec<Value>, Option<Value>) -> Result<Option<Value>, String>
            + Send
            + Sync
            + 'static,
    ) -> NativeFunction {
        self.mutate = Some((Mutation { commutative }, Box::new(mutate)));
        self
    }
}

impl Function for NativeFunction {
    fn name(&self) -> &str {
        &self.name
    }
    fn params(&self) -> &[ParamType] {
        &self.params
    }
    fn call(&self, cx: &mut dyn CallContext, args: Vec<Arg>) -> Result<Option<Value>, String> {
        (self.call)(cx, args)
    }
    fn mutation(&self) -> Option<Mutation> {
        self.mutate.as_ref().map(|(m, _)| *m)
    }
    fn mutate(
        &self,
        cx: &mut dyn CallContext,
        top: Vec<Value>,
        lower: Option<Value>,
    ) -> Result<Option<Value>, String> {
        match &self.mutate {
            Some((_, f)) => f(cx, top, lower),
            None => Err(format!("`{}` is not a mutation function", self.name)),
        }
    }
}

/// The external functions of a compile: registered native functions first, then each
/// provider in the order it was added. Cloning shares them.
#[derive(Clone, Default)]
pub struct Functions {
    native: HashMap<String, Arc<dyn Function>>,
    providers: Vec<Arc<dyn FunctionProvider>>,
}

impl Functions {
    /// Registers a function under its (lower-cased) name, replacing one of the same name.
    /// A function named like a standard function or mutation function is never called.
    pub fn register(&mut self, f: Arc<dyn Function>) {
        self.native.insert(f.name().to_lowercase(), f);
    }

    /// The names of the registered native functions.
    pub fn native_names(&self) -> impl Iterator<Item = &str> {
        self.native.keys().map(|k| k.as_str())
    }

    pub fn add_provider(&mut self, p: Arc<dyn FunctionProvider>) {
        self.providers.push(p);
    }

    pub fn is_empty(&self) -> bool {
        self.native.is_empty() && self.providers.is_empty()
    }

    /// The function called `name` (any case).
    pub fn find(&self, name: &str) -> Option<Result<Arc<dyn Function>, String>> {
        let name = name.to_lowercase();
        if let Some(f) = self.native.get(&name) {
            return Some(Ok(f.clone()));
        }
        self.providers.iter().find_map(|p| p.function(&name))
    }

    /// Every name known without loading anything (for "did you mean").
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.native.keys().cloned().collect();
        for p in &self.providers {
            v.extend(p.names());
        }
        v
    }

    /// What the providers say of functions they cannot give ([`FunctionProvider::unavailable`]).
    pub fn unavailable(&self) -> Vec<String> {
        self.providers
            .iter()
            .filter_map(|p| p.unavailable())
            .collect()
    }
}

impl fmt::Debug for Functions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.native.keys().collect();
        names.sort();
        f.debug_struct("Functions")
            .field("native", &names)
            .field("providers", &self.providers.len())
            .finish()
    }
}

// ----- the evaluator's side ---------------------------------------------------------------

/// The kind name of an expression, for [`Unevaluated::kind`].
fn expr_kind(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Literal(_) => "literal",
        ExprKind::String(_) => "string",
        ExprKind::Number(_) => "number",
        ExprKind::Bool(_) => "bool",
        ExprKind::Regex(_) => "regex",
        ExprKind::Undef => "undef",
        ExprKind::List(_) => "list",
        ExprKind::Block(_) => "block",
        ExprKind::Ref(_) => "reference",
        ExprKind::Select(..) => "select",
        ExprKind::Unary(..) | ExprKind::Binary(..) => "operator",
        ExprKind::If(_) => "if",
        ExprKind::Call(_) => "call",
        ExprKind::Import(_) => "import",
        ExprKind::Error => "error",
    }
}

/// Checks a value against a parameter's types; text spelling a number becomes the number
/// for a `NUMBER` parameter that does not accept text. `None` if it does not fit.
fn fit(types: ParamType, v: Val) -> Option<Val> {
    if types.accepts(v.type_name()) {
        return Some(v);
    }
    if types.contains(ParamType::NUMBER) && matches!(v, Val::Lit(_) | Val::Str(_)) {
        return numeric(&v).map(Val::Num);
    }
    None
}

/// The per-call state behind [`CallContext`].
struct Cx<'e, 'a> {
    ev: &'e mut Evaluator<'a>,
    name: String,
    /// Where references resolve (`None` when no scope is known).
    scope: Option<ScopeId>,
    site: Span,
    /// The call's argument expressions and parameter types (for `NOEVAL`).
    exprs: &'a [Expr],
    params: Vec<ParamType>,
    evaluated: HashMap<usize, Option<Value>>,
    /// The evaluator error behind the last failed look-up or evaluation: reported as is if
    /// the function then fails with its message.
    pending: Option<EvalError>,
    /// The first secret the function asked for and was refused: the call fails with it
    /// even if the function caught the error and went on.
    refused: Option<EvalError>,
}

impl Cx<'_, '_> {
    fn fail(&mut self, e: EvalError) -> String {
        let msg = e.diag.message.clone();
        if e.kind == ErrorKind::SecretRefused && self.refused.is_none() {
            self.refused = Some(e.clone());
        }
        self.pending = Some(e);
        msg
    }
}

/// The error of a secret that was to be given to a custom function.
fn secret_refused(message: String, at: Span) -> EvalError {
    let mut e = EvalError::new(Diagnostic::error(message).at(at).note(
        "secrets never leave the evaluator: custom functions run outside it (docs/functions.md)",
    ));
    e.kind = ErrorKind::SecretRefused;
    e
}

impl CallContext for Cx<'_, '_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn location(&self) -> Location {
        self.ev.location(self.site)
    }

    fn resource(&self) -> Option<String> {
        self.ev.stack.last().map(|s| self.ev.slot_path(*s))
    }

    fn lookup(&mut self, path: &str) -> Result<Option<Value>, String> {
        let Some(sc) = self.scope else {
            return Err("references cannot be looked up here".into());
        };
        let site = self.site;
        let r = deep(|| self.ev.lookup_path(path, sc, site)).and_then(|v| self.ev.export(&v, site));
        r.map_err(|e| self.fail(e))
    }

    fn evaluate(&mut self, arg: &Unevaluated) -> Result<Option<Value>, String> {
        if let Some(v) = self.evaluated.get(&arg.index) {
            return Ok(v.clone());
        }
        let (Some(expr), Some(types), Some(sc)) = (
            self.exprs.get(arg.index),
            self.params.get(arg.index).copied(),
            self.scope,
        ) else {
            return Err(format!("`{}` has no argument {}", self.name, arg.index + 1));
        };
        let name = self.name.clone();
        let r = deep(|| self.ev.eval(expr, sc))
            .and_then(|v| self.ev.check_param(&name, arg.index, types, v, expr.span))
            .and_then(|v| self.ev.export(&v, expr.span));
        match r {
            Ok(v) => {
                self.evaluated.insert(arg.index, v.clone());
                Ok(v)
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn warn(&mut self, message: &str) {
        let mut w = Diagnostic::warning(message).at(self.site);
        if let Some(r) = self.resource() {
            w = w.resource(r);
        }
        self.ev.warnings.push(w);
    }

    fn compile(&self) -> CompileId {
        self.ev.compile
    }

    fn charge(&mut self, steps: u64) -> Result<(), String> {
        self.ev.steps = self.ev.steps.saturating_add(steps);
        if self.ev.steps > self.ev.max_steps {
            return Err(format!(
                "the compile needs more than {} evaluation steps, counting the work of custom functions",
                self.ev.max_steps
            ));
        }
        Ok(())
    }
}

impl<'a> Evaluator<'a> {
    /// The external function `name`, if one is registered or found by a provider.
    pub(crate) fn find_external(&self, name: &str, at: Span) -> R<Option<Arc<dyn Function>>> {
        if self.opts.functions.is_empty() {
            return Ok(None);
        }
        match self.opts.functions.find(name) {
            None => Ok(None),
            Some(Ok(f)) => Ok(Some(f)),
            Some(Err(msg)) => {
                let mut failures = self.load_failures.borrow_mut();
                let first = match failures.iter().find(|(n, _)| n == name) {
                    Some((_, first)) => *first,
                    None => {
                        failures.push((name.to_string(), at));
                        at
                    }
                };
                Err(EvalError::new(
                    Diagnostic::error(format!("cannot load the function `{name}`: {msg}"))
                        .at(first)
                        .with_label("used here"),
                ))
            }
        }
    }

    pub(crate) fn location(&self, span: Span) -> Location {
        match self.file(span.file) {
            Some(f) => {
                let (line, column) = f.source.line_col(span.start);
                Location {
                    file: f.source.name.clone(),
                    line,
                    column,
                }
            }
            None => Location::default(),
        }
    }

    pub(crate) fn source_text(&self, span: Span) -> String {
        self.file(span.file)
            .and_then(|f| f.source.text.get(span.start as usize..span.end as usize))
            .unwrap_or("")
            .to_string()
    }

    /// The resource path as the statement at `site` writes it (`Pkgs` for `Pkgs ~> [a]`
    /// inside a block or a file imported as a value, whose resource is `Site.Inner.Pkgs`):
    /// what a hint that rewrites the statement must use, since the full path means
    /// something else where the statement is.
    pub(crate) fn written_path(&self, site: Span) -> Option<String> {
        let text = self.source_text(site);
        let text = text.trim_start();
        let text = match text.strip_prefix("private") {
            Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
            _ => text,
        };
        let path: String = text
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '=' && *c != '~')
            .collect();
        (!path.is_empty()).then_some(path)
    }

    /// Calls an external function (reference §6.1): checks the arguments against its
    /// prototype, converts them, calls it, and converts the result back.
    pub(crate) fn call_external(
        &mut self,
        f: Arc<dyn Function>,
        call: &'a ast::Call,
        sc: ScopeId,
    ) -> R<Val> {
        let params = f.params().to_vec();
        let name = call.name.name.to_string();
        if !f.callable() {
            return Err(EvalError::new(
                Diagnostic::error(format!("`{name}` can only be used as a mutation function"))
                    .at(call.span)
                    .note(format!(
                        "`{}` ({}) defines no function to call",
                        f.name(),
                        f.origin()
                    ))
                    .hint(format!("use it as `X ~({name})> value`")),
            ));
        }
        if params.len() != call.args.len() {
            let want = params.len();
            let protos: Vec<String> = params.iter().map(|p| p.to_string()).collect();
            return Err(EvalError::new(
                Diagnostic::error(format!(
                    "`{name}` takes {want} argument{}, but {} {} given",
                    if want == 1 { "" } else { "s" },
                    call.args.len(),
                    if call.args.len() == 1 { "was" } else { "were" }
                ))
                .at(call.span)
                .note(format!(
                    "`{name}` ({}) is declared `{name}({})`",
                    f.origin(),
                    protos.join(", ")
                )),
            ));
        }
        let mut args = Vec::with_capacity(params.len());
        for (i, (p, e)) in params.iter().zip(call.args.iter()).enumerate() {
            if p.is_noeval() {
                args.push(Arg::Unevaluated(Unevaluated {
                    index: i,
                    kind: expr_kind(e),
                    source: self.source_text(e.span),
                    location: self.location(e.span),
                    types: *p,
                }));
                continue;
            }
            let v = self.eval(e, sc)?;
            let v = self.check_param(&name, i, *p, v, e.span)?;
            args.push(Arg::Value(self.export(&v, e.span)?));
        }
        let file = self.scope(sc).file;
        let mut cx = Cx {
            ev: self,
            name: name.clone(),
            scope: Some(sc),
            site: call.span,
            exprs: &call.args,
            params,
            evaluated: HashMap::new(),
            pending: None,
            refused: None,
        };
        let result = unpanicked(|| f.call(&mut cx, args));
        let pending = cx.pending.take();
        if let Some(e) = cx.refused.take() {
            return Err(e);
        }
        match result {
            Ok(Some(v)) => self.import(v, call.span, file, &name),
            Ok(None) => Ok(Val::Undef),
            Err(msg) => Err(self.external_error(&name, &msg, pending, call.span, "in this call")),
        }
    }

    /// A mutation by an external function (reference §6.2): the top values and the value
    /// below, converted, combined by the function.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn mutate_external(
        &mut self,
        f: Arc<dyn Function>,
        mutation: Mutation,
        s: SlotId,
        tops: &[DefId],
        values: Vec<(DefId, Val)>,
        below: Option<Val>,
        at: Span,
    ) -> R<Val> {
        if !mutation.commutative && tops.len() > 1 {
            let mut e = self.order_error(s, tops);
            e.diag.notes.push(format!(
                "`{}` ({}) is not commutative, so unordered definitions cannot be combined",
                f.name(),
                f.origin()
            ));
            return Err(e);
        }
        let path = self.slot_path(s);
        let with_resource = |mut e: EvalError| {
            if e.diag.resource.is_none() {
                e.diag.resource = Some(path.to_string());
            }
            e
        };
        let mut top = Vec::with_capacity(values.len());
        for (d, v) in &values {
            let site = self.def(*d).site;
            if let Some(x) = self.export(v, site).map_err(with_resource)? {
                top.push(x);
            }
        }
        let lower = match &below {
            Some(v) => self.export(v, at).map_err(with_resource)?,
            None => None,
        };
        let first = values.first().map(|(d, _)| *d);
        let (scope, file) = match first.map(|d| self.def(d).clone()) {
            Some(Def {
                body: Body::Expr(_, sc),
                file,
                ..
            }) => (Some(sc), file),
            Some(d) => (None, d.file),
            None => (None, at.file),
        };
        let name = match first.map(|d| &self.def(d).op) {
            Some(Op::Func(i)) => i.name.to_string(),
            _ => f.name().to_string(),
        };
        let mut cx = Cx {
            ev: self,
            name: name.clone(),
            scope,
            site: at,
            exprs: &[],
            params: Vec::new(),
            evaluated: HashMap::new(),
            pending: None,
            refused: None,
        };
        let result = unpanicked(|| f.mutate(&mut cx, top, lower));
        let pending = cx.pending.take();
        if let Some(e) = cx.refused.take() {
            return Err(with_resource(e));
        }
        let symbol = format!("~({name})>");
        match result {
            Ok(Some(v)) => self.import(v, at, file, &symbol).map_err(with_resource),
            Ok(None) => Ok(Val::Undef),
            Err(msg) => Err(with_resource(self.external_error(
                &symbol,
                &msg,
                pending,
                at,
                "in this mutation",
            ))),
        }
    }

    fn external_error(
        &self,
        name: &str,
        msg: &str,
        pending: Option<EvalError>,
        at: Span,
        label: &str,
    ) -> EvalError {
        if let Some(e) = pending {
            // The function failed because something it evaluated failed: report that.
            if msg.contains(e.diag.message.as_str()) {
                return e;
            }
        }
        EvalError::new(
            Diagnostic::error(format!("`{name}` failed: {msg}"))
                .at(at)
                .with_label(label),
        )
    }

    /// Checks an argument against its parameter's types (with the error at the argument).
    pub(crate) fn check_param(
        &self,
        name: &str,
        index: usize,
        types: ParamType,
        v: Val,
        at: Span,
    ) -> R<Val> {
        let (kind, describe) =
            text_kind_for(types, &v).unwrap_or_else(|| (v.kind_phrase().to_string(), v.describe()));
        match fit(types, v) {
            Some(v) => Ok(v),
            None => Err(EvalError::new(
                Diagnostic::error(format!(
                    "`{name}` needs {} as argument {}, but its argument is {}",
                    types.phrase(),
                    index + 1,
                    if describe == "?" {
                        "undefined".to_string()
                    } else {
                        describe
                    }
                ))
                .at(at)
                .with_label(format!("this is {kind}"))
                .note(format!(
                    "the prototype of `{name}` declares `{}` here",
                    types.types()
                )),
            )),
        }
    }

    /// `$path` resolved in scope `sc`, as a reference written there would be.
    fn lookup_path(&mut self, path: &str, sc: ScopeId, at: Span) -> R<Val> {
        let mut steps = path.split('.');
        let first = steps.next().unwrap_or("").trim_start_matches('$');
        if first.is_empty() {
            return Err(EvalError::new(
                Diagnostic::error(format!("`{path}` is not a resource path")).at(at),
            ));
        }
        let scope = self.scope(sc).clone();
        let mark = self.reads_noted();
        let mut cur = None;
        if let Some(params) = &scope.params {
            if let Some((_, t)) = params.iter().find(|(n, _)| **n == *first) {
                cur = Some(self.force_thunk(*t, at)?);
            }
        }
        let mut cur = match cur {
            Some(v) => v,
            None => {
                let root = self.scope_root(sc);
                match self.member(root, first, at)? {
                    Some(slot) => {
                        self.note_read(slot);
                        self.force(slot)?
                    }
                    None => return Err(self.missing_member(root, first, at, "resource")),
                }
            }
        };
        for step in steps {
            let key = Val::Lit(Rc::from(step));
            cur = self.select_reading(mark, cur, |ev, b| ev.select_value(b, &key, at, at))?;
        }
        Ok(cur)
    }

    /// A value as a function sees it: fully evaluated, blocks with all their members
    /// (private ones too; undefined ones left out). `None` for undefined.
    pub(crate) fn export(&mut self, v: &Val, at: Span) -> R<Option<Value>> {
        if v.is_undef() {
            return Ok(None);
        }
        self.export_at(v, 1, at).map(Some)
    }

    fn export_at(&mut self, v: &Val, depth: usize, at: Span) -> R<Value> {
        if depth > cf2_value::MAX_DEPTH {
            return Err(too_deep(at));
        }
        deep(|| {
            Ok(match v {
                Val::Undef => {
                    return Err(EvalError::new(
                        Diagnostic::error("an undefined value cannot be passed to a function")
                            .at(at),
                    ))
                }
                Val::Secret(secret) => {
                    return Err(secret_refused(
                        format!(
                            "a secret value (from {}) cannot be given to a custom function",
                            secret.origin
                        ),
                        at,
                    ))
                }
                Val::Lit(s) => Value::Literal(s.to_string()),
                Val::Str(s) => Value::String(s.to_string()),
                Val::Num(n) => Value::Number(*n),
                Val::Bool(b) => Value::Bool(*b),
                Val::Regex(r) => Value::Regex(r.to_string()),
                Val::List(l) => {
                    let mut out = Vec::with_capacity(l.items.len());
                    for (i, x) in l.items.iter().enumerate() {
                        if x.is_undef() {
                            return Err(EvalError::new(
                                Diagnostic::error(format!(
                                    "element {i} of this list is undefined, so the list cannot be passed to a function"
                                ))
                                .at(at),
                            ));
                        }
                        out.push(self.export_at(x, depth + 1, at)?);
                    }
                    Value::List(out)
                }
                // A block a secret selector picked: which it is is secret, and its members
                // would say so (security.md §6).
                Val::Block(b) if self.picked_origin(b).is_some() => {
                    let origin = self.picked_origin(b).unwrap_or_default();
                    return Err(secret_refused(format!(
                        "a block selected by a secret (from {origin}) cannot be given to a custom function"
                    ), at));
                }
                Val::Block(b) => {
                    let mut out = Block::default();
                    let members = self.members(*b, at)?;
                    for (name, slot) in members {
                        // A private member is not given: whatever a function returns is a
                        // new value, public wherever it is put, so a member it copied
                        // would be published (`id($D)`, a mutation that merges blocks).
                        // A function that needs one looks it up by name (`ctx:lookup`),
                        // as a reference names it (`$D.AdminPw`).
                        if self.slot(slot).private {
                            continue;
                        }
                        let x = self.force(slot)?;
                        if x.is_undef() {
                            continue;
                        }
                        out.insert(name.to_string(), self.export_at(&x, depth + 1, at)?);
                    }
                    Value::Block(out)
                }
            })
        })
    }

    /// A function's result as an evaluator value. A block's members become definitions
    /// made at `site` (so it can be used inline, reference §3.12).
    pub(crate) fn import(&mut self, v: Value, site: Span, file: FileId, name: &str) -> R<Val> {
        self.import_at(v, 1, site, file)
            .map_err(|mut e: EvalError| {
                if e.diag.span.is_none() {
                    e.diag.span = Some(site);
                }
                e.diag.message = format!("`{name}` returned {}", e.diag.message);
                e
            })
    }

    fn import_at(&mut self, v: Value, depth: usize, site: Span, file: FileId) -> R<Val> {
        let too_deep = || {
            EvalError::new(Diagnostic::error(format!(
                "a value nested too deeply (more than {} levels of lists and blocks)",
                cf2_value::MAX_DEPTH
            )))
        };
        if depth > cf2_value::MAX_DEPTH {
            return Err(too_deep());
        }
        deep(|| {
            Ok(match v {
                Value::Literal(s) => Val::Lit(s.into()),
                Value::String(s) => Val::Str(s.into()),
                Value::Number(Number::Float(f)) if !f.is_finite() => {
                    return Err(EvalError::new(Diagnostic::error(format!(
                        "a number that is not finite ({f})"
                    ))))
                }
                Value::Number(n) => Val::Num(n),
                Value::Bool(b) => Val::Bool(b),
                Value::Regex(r) => {
                    if let Err(e) = self.regex(&r, site) {
                        return Err(EvalError::new(Diagnostic::error(format!(
                            "an invalid regex: {}",
                            e.diag.message
                        ))));
                    }
                    Val::Regex(r.into())
                }
                Value::List(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for x in items {
                        out.push(self.import_at(x, depth + 1, site, file)?);
                    }
                    make_list(out).ok_or_else(too_deep)?
                }
                Value::Block(members) => {
                    let place = self.current_place();
                    let b = self.new_block(place, BlockState::Built);
                    for (i, (name, x)) in members.into_iter().enumerate() {
                        if !cf2_syntax::lexer::is_identifier(&name) {
                            // White space other than a plain space is named, as the lexer
                            // names it in source (`a<U+00A0>b` would look like `a b`).
                            let shown: String = name
                                .chars()
                                .map(|c| match c {
                                    ' ' => " ".to_string(),
                                    c if c.is_whitespace() => format!("<U+{:04X}>", c as u32),
                                    c => c.to_string(),
                                })
                                .collect();
                            return Err(EvalError::new(Diagnostic::error(format!(
                                "a block with the member name `{shown}`, which is not a resource name"
                            ))
                            .hint("member names are identifiers: letters, digits and `_`, not starting with a digit")));
                        }
                        let x = self.import_at(x, depth + 1, site, file)?;
                        let slot = self.new_slot(Name::Owned(Rc::from(name)), b);
                        self.define_value(slot, x, i, site, file);
                    }
                    Val::Block(b)
                }
            })
        })
    }
}

/// Runs an embedder's function: a panic in it is the call's error (`the function
/// panicked: ...`), not the end of the embedding program's thread.
fn unpanicked<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        Err(format!("the function panicked: {what}"))
    })
}

/// For a parameter that takes one kind of text only (`LITERAL` or `STRING`), how an
/// argument of the other kind is named and shown: "text" and `'x'` for both would hide
/// the difference the message is about.
fn text_kind_for(types: ParamType, v: &Val) -> Option<(String, String)> {
    let literal = types.contains(ParamType::LITERAL);
    let string = types.contains(ParamType::STRING);
    if literal == string {
        return None;
    }
    match v {
        Val::Str(s) => Some((
            "a string (double-quoted text)".to_string(),
            format!("the string {}", crate::val::quoted_preview(s, '"')),
        )),
        Val::Lit(_) => Some((
            "a literal (single-quoted or bare text)".to_string(),
            format!("the literal {}", v.describe()),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_types_parse_and_print() {
        let p = ParamType::parse("number | String").unwrap();
        assert_eq!(p, ParamType::NUMBER | ParamType::STRING);
        assert_eq!(p.to_string(), "NUMBER|STRING");
        assert_eq!(
            ParamType::parse("ANYTYPE|NOEVAL").unwrap().to_string(),
            "ANYTYPE|NOEVAL"
        );
        assert_eq!(ParamType::parse("SCALAR").unwrap().to_string(), "SCALAR");
        assert!(ParamType::parse("NUMBERS").is_err());
        assert!(ParamType::parse("").is_err());
        assert!(ParamType::parse("NOEVAL").unwrap().accepts("block"));
        assert!(!ParamType::ANYTYPE.accepts("undef"));
        assert!((ParamType::ANYTYPE | ParamType::UNDEF).accepts("undef"));
        assert!(ParamType::SCALAR.accepts("regex"));
        assert!(!ParamType::SCALAR.accepts("list"));
        assert_eq!(ParamType::NUMBER.phrase(), "a number");
        assert_eq!(
            (ParamType::NUMBER | ParamType::LIST).phrase(),
            "a list or a number"
        );
    }

    #[test]
    fn number_parameters_take_text_spelling_a_number() {
        let v = fit(ParamType::NUMBER, Val::Lit("42".into()));
        assert!(matches!(v, Some(Val::Num(Number::Int(42)))));
        assert!(fit(ParamType::NUMBER, Val::Lit("x".into())).is_none());
        let v = fit(ParamType::NUMBER | ParamType::TEXT, Val::Lit("42".into()));
        assert!(matches!(v, Some(Val::Lit(_))));
    }
}
