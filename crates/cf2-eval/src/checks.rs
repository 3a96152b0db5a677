//! Static checks run once per file after parsing: rules of the language that do not depend
//! on values, so they are reported wherever the code is, evaluated or not.
//!
//! - `match()` placement (reference §3.9, restriction 1);
//! - at most one capturing regex literal per condition (§3.9, restriction 2);
//! - macros defined before use, not recursive, not defined twice (§3.13);
//! - `-Wdup`: the same resource assigned twice in one block of one file (§3);
//! - regex literals without `${...}` are valid patterns (compiled here once, and kept for
//!   the evaluation).
//!
//! Recursion here follows the AST, whose depth the parser bounds.

use cf2_syntax::ast::{self, BinaryOp, Expr, ExprKind, Part, Statement};
use cf2_syntax::Diagnostic;
use std::collections::HashMap;

pub struct Findings {
    pub errors: Vec<Diagnostic>,
    pub dup_warnings: Vec<Diagnostic>,
    /// The file's regex literals (those without `${...}`), compiled: checking them costs
    /// their compilation, which the evaluation then need not repeat.
    pub regexes: crate::loader::Regexes,
}

pub fn check_file(file: &ast::File) -> Findings {
    let mut c = Checker {
        errors: Vec::new(),
        dup_warnings: Vec::new(),
        regexes: Default::default(),
        macros: HashMap::new(),
        path: Vec::new(),
    };
    // Macro table: name -> (definition start, body span, span of name).
    collect_macros(file, &mut c);
    c.block(&file.statements, false);
    Findings {
        errors: c.errors,
        dup_warnings: c.dup_warnings,
        regexes: c.regexes,
    }
}

struct MacroInfo {
    /// As written in the definition.
    name: String,
    name_span: cf2_syntax::Span,
    whole: cf2_syntax::Span,
}

struct Checker<'a> {
    errors: Vec<Diagnostic>,
    dup_warnings: Vec<Diagnostic>,
    regexes: crate::loader::Regexes,
    macros: HashMap<String, MacroInfo>,
    /// The resource whose value is being checked: the names of the enclosing resource
    /// statements, outermost first (a nested block's statements extend it). Joined into
    /// text only for a diagnostic.
    path: Vec<&'a str>,
}

fn collect_macros(file: &ast::File, c: &mut Checker<'_>) {
    for m in &file.macros {
        let name = m.name.name.to_string();
        let key = crate::loader::macro_key(&name).into_owned();
        if let Some(prev) = c.macros.get(&key) {
            let mut d = Diagnostic::error(format!("macro `{name}` is defined twice"))
                .at(m.name.span)
                .with_label("second definition")
                .also(prev.name_span, "first definition");
            if prev.name != name {
                d = d.note(format!(
                    "macro names are case-insensitive, like function names: `{}` and `{name}` are the same macro",
                    prev.name
                ));
            }
            c.errors.push(d);
            continue;
        }
        let mut seen: Vec<&str> = Vec::new();
        for p in &m.params {
            if seen.contains(&&*p.name) {
                c.errors.push(
                    Diagnostic::error(format!(
                        "macro `{name}` has two parameters named `{}`",
                        p.name
                    ))
                    .at(p.span),
                );
            }
            seen.push(&p.name);
        }
        c.macros.insert(
            key,
            MacroInfo {
                name,
                name_span: m.name.span,
                whole: m.span,
            },
        );
    }
}

impl<'a> Checker<'a> {
    /// The resource concerned by a finding at this point, if any (`A.b` in `A => { b => … }`).
    fn resource(&self) -> Option<String> {
        (!self.path.is_empty()).then(|| self.path.join("."))
    }

    /// Records an error, naming the resource being checked.
    fn error(&mut self, d: Diagnostic) {
        let d = match self.resource() {
            Some(r) => d.resource(r),
            None => d,
        };
        self.errors.push(d);
    }

    fn block(&mut self, stmts: &'a [Statement], in_match: bool) {
        self.duplicates(stmts);
        for s in stmts {
            match s {
                Statement::Resource(r) => {
                    let depth = self.path.len();
                    self.path.extend(r.path.iter().map(|i| &*i.name));
                    for m in &r.mutations {
                        self.expr(&m.value, in_match);
                    }
                    self.path.truncate(depth);
                }
                Statement::Import(i) => self.import(i, in_match),
                Statement::If(i) => self.conditional(i, in_match),
                Statement::Call(call) => self.call(call, in_match),
                Statement::Macro(m) => {
                    // A macro's body belongs to no resource until it is called.
                    let outer = std::mem::take(&mut self.path);
                    self.expr(&m.body, false);
                    self.path = outer;
                }
            }
        }
    }

    fn import(&mut self, i: &'a ast::Import, in_match: bool) {
        self.expr(&i.path, in_match);
        if let Some(s) = &i.signers {
            self.expr(s, in_match);
        }
    }

    fn conditional(&mut self, i: &'a ast::If, in_match: bool) {
        self.expr(&i.cond, in_match);
        // The condition's regex literals were compiled by the walk above: their groups are
        // read from `regexes`, not compiled again.
        let mut matched = Vec::new();
        let has_regex = regex_matches(&i.cond, &mut |regex| matched.push(regex));
        let capturing: Vec<cf2_syntax::Span> = matched
            .into_iter()
            .filter(|regex| self.literal_has_groups(regex))
            .map(|regex| regex.span)
            .collect();
        if capturing.len() > 1 {
            let mut d = Diagnostic::error(
                "only one regular expression in a condition may have capture groups",
            )
            .at(capturing[1])
            .with_label("a second regex with capture groups")
            .also(capturing[0], "the first one")
            .hint("make the other groups non-capturing: `(?:...)`");
            d.notes
                .push("`match(n)` would not know which one to read (reference §3.9)".into());
            self.error(d);
        }
        let inner = in_match || has_regex;
        self.expr(&i.then, inner);
        if let Some(e) = &i.otherwise {
            self.expr(e, inner);
        }
    }

    fn call(&mut self, call: &'a ast::Call, in_match: bool) {
        let name = &*call.name.name;
        if let Some(m) = self.macros.get(&*crate::loader::macro_key(name)) {
            if call.span.start >= m.whole.start && call.span.end <= m.whole.end {
                self.error(
                    Diagnostic::error(format!("macro `{name}` calls itself"))
                        .at(call.name.span)
                        .with_label("recursive call")
                        .also(m.name_span, "in the definition of this macro")
                        .note(format!("cycle: {name} → {name}"))
                        .hint("macros cannot be recursive; use a function for computations"),
                );
            } else if call.span.start < m.whole.start {
                self.error(
                    Diagnostic::error(format!("macro `{name}` is used before its definition"))
                        .at(call.name.span)
                        .also(m.name_span, "defined here, later in the file")
                        .hint("move the `def` above its first use (reference §3.13)"),
                );
            }
        } else if name.eq_ignore_ascii_case("match") && !in_match {
            self.error(
                Diagnostic::error("`match()` can only be used in a branch of an `if` whose condition matches a regular expression")
                    .at(call.span)
                    .with_label("no regular expression match to read captures from")
                    .hint("write `if ($X =~ /(...)/) then ... match(1) ...`")
                    .note("statements are not ordered, so a match elsewhere cannot feed `match()` (reference §3.9)"),
            );
        }
        for a in &call.args {
            self.expr(a, in_match);
        }
    }

    /// One level of the walk: the input decides how deep it goes (on a small stack too).
    /// A regex written without `${...}` is source text, so an invalid one is reported
    /// wherever it is written, as Perl reports it when the program is compiled, not only
    /// on the host whose compile happens to evaluate it (semantics §1).
    fn regex_literal(&mut self, parts: &[Part], at: cf2_syntax::Span) {
        let [Part::Text(pattern)] = parts else {
            return;
        };
        if self.regexes.contains_key(pattern.as_str()) {
            return;
        }
        match crate::perl_regex::build_regex(pattern) {
            Ok(re) => {
                self.regexes
                    .insert(pattern.as_str().into(), std::sync::Arc::new(re));
            }
            Err(e) => self.error(crate::perl_regex::invalid_regex(pattern, &e).at(at)),
        }
    }

    /// Whether a regex literal written without `${...}` has capture groups, as
    /// [`Checker::regex_literal`] compiled it (an invalid one has none).
    fn literal_has_groups(&self, regex: &Expr) -> bool {
        let ExprKind::Regex(parts) = &regex.kind else {
            return false;
        };
        let [Part::Text(pattern)] = parts.as_slice() else {
            return false;
        };
        self.regexes
            .get(pattern.as_str())
            .is_some_and(|re| re.captures_len() > 1)
    }

    fn expr(&mut self, e: &'a Expr, in_match: bool) {
        crate::eval::deep(|| self.expr_inner(e, in_match))
    }

    fn expr_inner(&mut self, e: &'a Expr, in_match: bool) {
        match &e.kind {
            ExprKind::Literal(_)
            | ExprKind::Number(_)
            | ExprKind::Bool(_)
            | ExprKind::Undef
            | ExprKind::Ref(_)
            | ExprKind::Error => {}
            ExprKind::String(parts) | ExprKind::Regex(parts) => {
                for p in parts {
                    if let Part::Interp(x) = p {
                        self.expr(x, in_match);
                    }
                }
                if let ExprKind::Regex(parts) = &e.kind {
                    self.regex_literal(parts, e.span);
                }
            }
            ExprKind::List(items) => {
                for x in items {
                    self.expr(x, in_match);
                }
            }
            ExprKind::Block(stmts) => self.block(stmts, in_match),
            ExprKind::Select(a, b) | ExprKind::Binary(_, a, b) => {
                self.expr(a, in_match);
                self.expr(b, in_match);
            }
            ExprKind::Unary(_, a) => self.expr(a, in_match),
            ExprKind::If(i) => self.conditional(i, in_match),
            ExprKind::Call(c) => self.call(c, in_match),
            ExprKind::Import(i) => self.import(i, in_match),
        }
    }

    /// `-Wdup`: two `=>` definitions of the same resource path in one block of one file,
    /// written directly (`C.d => 2` twice) or as members of block literals given with `=>`
    /// or `~>` (`C.d => 2` beside `C ~> { d => 2 }`, clarifications §4: both are `C.d`).
    /// Two definitions inside one literal are that literal's own block's business (checked
    /// when it is), so only definitions of different statements are compared here.
    fn duplicates(&mut self, stmts: &'a [Statement]) {
        // (path, the definition, the statement of `stmts` it belongs to)
        let mut assigned: Vec<(AssignedPath<'a>, &'a ast::ResourceDef, usize)> = Vec::new();
        for (i, st) in stmts.iter().enumerate() {
            if let Statement::Resource(r) = st {
                let path: AssignedPath = r.path.iter().map(|x| &*x.name).collect();
                assigned_paths(r, path, i, 0, &mut assigned);
            }
        }
        if assigned.len() < 2 {
            return;
        }
        // Paths by hash, so that no path is joined into text unless it is a duplicate
        // (every file of every compile is checked, and duplicates are rare).
        use std::hash::BuildHasher;
        let hashing = foldhash::fast::FixedState::default();
        let mut keyed: Vec<(u64, usize)> = assigned
            .iter()
            .enumerate()
            .map(|(i, (path, _, _))| (hashing.hash_one(path), i))
            .collect();
        keyed.sort_unstable();
        // (later definition, first definition), reported in the order of the later ones.
        let mut found: Vec<(usize, usize)> = Vec::new();
        for (k, &(hash, later)) in keyed.iter().enumerate() {
            let earlier = keyed
                .get(..k)
                .unwrap_or_default()
                .iter()
                .rev()
                .take_while(|(h, _)| *h == hash);
            let first = earlier
                .filter(|(_, i)| {
                    matches!(
                        (assigned.get(*i), assigned.get(later)),
                        (Some(a), Some(b)) if a.0 == b.0 && a.2 != b.2
                    )
                })
                .map(|(_, i)| *i)
                .min();
            if let Some(first) = first {
                found.push((later, first));
            }
        }
        found.sort_unstable();
        // `C => { d => 2 }` twice: one warning, for `C`, not one more for each member.
        let statements = |(l, f): (usize, usize)| {
            assigned
                .get(l)
                .zip(assigned.get(f))
                .map(|(a, b)| (a.2, b.2))
        };
        let inside_another = |pair: (usize, usize)| {
            let Some((path, _, _)) = assigned.get(pair.0) else {
                return false;
            };
            found.iter().any(|&other| {
                other != pair
                    && statements(other) == statements(pair)
                    && assigned
                        .get(other.0)
                        .is_some_and(|(p, _, _)| p.len() < path.len() && path.starts_with(p))
            })
        };
        let found: Vec<(usize, usize)> = found
            .iter()
            .copied()
            .filter(|&p| !inside_another(p))
            .collect();
        for (later, first) in found {
            let (Some((path, r, _)), Some((_, first, _))) =
                (assigned.get(later), assigned.get(first))
            else {
                continue;
            };
            let key: Vec<&str> = self.path.iter().chain(path.iter()).copied().collect();
            let key = key.join(".");
            self.dup_warnings.push(
                Diagnostic::warning(format!("duplicate definition of `{key}`"))
                    .at(r.span)
                    .also(first.span, "first defined here")
                    .resource(key.clone())
                    .hint("definitions in one file must agree; remove one"),
            );
        }
    }
}

/// A resource path within one block, as `-Wdup` compares them: nearly always a few names,
/// kept inline (this runs on every file).
type AssignedPath<'a> = smallvec::SmallVec<[&'a str; 4]>;

/// The paths `r` (written at `path`, in statement `stmt` of its block) assigns with `=>`:
/// its own, and those of the members of a block literal it gives with `=>` or `~>`, in
/// turn (bounded: the parser already bounds the nesting of literals).
fn assigned_paths<'a>(
    r: &'a ast::ResourceDef,
    path: AssignedPath<'a>,
    stmt: usize,
    depth: usize,
    out: &mut Vec<(AssignedPath<'a>, &'a ast::ResourceDef, usize)>,
) {
    let Some(m) = r.mutations.first() else {
        return;
    };
    let literal = match (&m.op, &m.value.kind) {
        (ast::MutationOp::Assign | ast::MutationOp::Merge, ExprKind::Block(members))
            if r.mutations.len() == 1 && depth < 64 =>
        {
            Some(members)
        }
        _ => None,
    };
    if let Some(members) = literal {
        for st in members {
            if let Statement::Resource(member) = st {
                let mut inner = path.clone();
                inner.extend(member.path.iter().map(|x| &*x.name));
                assigned_paths(member, inner, stmt, depth + 1, out);
            }
        }
    }
    if matches!(m.op, ast::MutationOp::Assign) {
        out.push((path, r, stmt));
    }
}

/// True if the condition matches a regex directly (`=~`/`!~` in its own expression, not
/// inside a nested block). Gives `matched` the regex literal of each such match.
pub(crate) fn regex_matches<'e>(e: &'e Expr, matched: &mut impl FnMut(&'e Expr)) -> bool {
    match &e.kind {
        ExprKind::Binary(op, a, b) => {
            let here = matches!(op, BinaryOp::Match | BinaryOp::NotMatch);
            if here && matches!(b.kind, ExprKind::Regex(_)) {
                matched(b);
            }
            let l = regex_matches(a, matched);
            let r = regex_matches(b, matched);
            here || l || r
        }
        ExprKind::Unary(_, a) => regex_matches(a, matched),
        _ => false,
    }
}

/// The bare words compared in `e` with another constant (`Hostname =~ /^web/`,
/// `Role == proxy`): such a comparison has the same result for every configuration, so a
/// bare word in it is most likely a reference written without its `$`.
pub(crate) fn constant_comparisons<'e>(e: &'e Expr, words: &mut Vec<&'e Expr>) {
    let constant = |x: &Expr| match &x.kind {
        ExprKind::Literal(_) | ExprKind::Number(_) | ExprKind::Bool(_) => true,
        ExprKind::Regex(parts) | ExprKind::String(parts) => {
            parts.iter().all(|p| matches!(p, Part::Text(_)))
        }
        _ => false,
    };
    match &e.kind {
        ExprKind::Binary(BinaryOp::And | BinaryOp::Or, a, b) => {
            constant_comparisons(a, words);
            constant_comparisons(b, words);
        }
        ExprKind::Binary(
            BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Ge
            | BinaryOp::Gt
            | BinaryOp::Match
            | BinaryOp::NotMatch,
            a,
            b,
        ) if constant(a) && constant(b) => {
            words.extend(
                [a, b]
                    .into_iter()
                    .map(|x| &**x)
                    .filter(|x| matches!(x.kind, ExprKind::Literal(_))),
            );
        }
        ExprKind::Unary(ast::UnaryOp::Not, a) => constant_comparisons(a, words),
        _ => {}
    }
}
