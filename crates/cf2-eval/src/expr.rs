//! Evaluating expressions: references and selectors (clarifications §3), interpolation,
//! conditionals and their regex captures (§3.9), macro calls (§3.13), imports as values.
//! Operators are in [`crate::ops`], functions in [`crate::functions`].

use crate::error::{EvalError, R};
use crate::eval::{deep, Evaluator};
use crate::model::*;
use crate::secret::mark;
use crate::val::{make_list, Val};
use cf2_syntax::ast::{self, BinaryOp, Expr, ExprKind, Part};
use cf2_syntax::{Diagnostic, Span};
use std::rc::Rc;

/// The note of a message about a regex made with a secret (invalid, or its matching given
/// up), which shows the secret's redaction instead of the pattern.
const PATTERN_NOT_SHOWN: &str = "the pattern is not shown, because it contains a secret";
/// The start of the label that shows a macro call an error came through.
const IN_MACRO_CALL: &str = "in this call of macro ";

/// What a message about a matching given up must not show: the pattern, when it is a
/// secret (shown as this redaction instead), and anything about the text, when it is.
pub(crate) struct HiddenMatch {
    pub pattern: Option<String>,
    pub text: bool,
}

impl<'a> Evaluator<'a> {
    pub(crate) fn eval(&mut self, e: &'a Expr, sc: ScopeId) -> R<Val> {
        let steps = if self.pick_depth > 0 {
            &mut self.pick_steps
        } else {
            &mut self.steps
        };
        *steps += 1;
        if *steps > self.max_steps {
            let limit = self.max_steps;
            return Err(self.work_limit(|| too_much_work(e.span, limit)));
        }
        // Inside a function call, the call's own arguments are opened (`crate::secret`);
        // what they are computed from is evaluated as usual.
        let open = std::mem::replace(&mut self.open_results, false);
        let r = deep(|| self.eval_inner(e, sc));
        self.open_results = open;
        match r {
            Ok(v) if open => Ok(self.open(v)),
            r => r,
        }
    }

    fn eval_inner(&mut self, e: &'a Expr, sc: ScopeId) -> R<Val> {
        match &e.kind {
            ExprKind::Literal(s) => Ok(Val::Lit(Rc::from(s.as_str()))),
            ExprKind::String(parts) => {
                let (text, taint) = self.tainting(|ev| ev.interpolate(parts, sc, false));
                let v = Val::Str(text?.into());
                Ok(match taint {
                    Some(t) => mark(v, &t.origin),
                    None => v,
                })
            }
            ExprKind::Number(n) => Ok(Val::Num(*n)),
            ExprKind::Bool(b) => Ok(Val::Bool(*b)),
            ExprKind::Regex(parts) => {
                let (pattern, taint) = self.tainting(|ev| ev.interpolate(parts, sc, true));
                let pattern = pattern?;
                if let Some(t) = taint {
                    if self.regex(&pattern, e.span).is_err() {
                        return Err(EvalError::new(
                            Diagnostic::error(format!(
                                "this regular expression, made with {}, is invalid",
                                crate::val::redacted(&t.origin, false)
                            ))
                            .at(e.span)
                            .note(PATTERN_NOT_SHOWN),
                        ));
                    }
                    return Ok(mark(Val::Regex(pattern.into()), &t.origin));
                }
                self.regex(&pattern, e.span)?;
                Ok(Val::Regex(pattern.into()))
            }
            ExprKind::Undef => Ok(Val::Undef),
            ExprKind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, x) in items.iter().enumerate() {
                    // Only a block needs its position (for its name in messages).
                    let positioned = matches!(x.kind, ExprKind::Block(_) | ExprKind::List(_));
                    if positioned {
                        self.elements.push(i as u32);
                    }
                    let v = self.eval(x, sc);
                    if positioned {
                        self.elements.pop();
                    }
                    out.push(v?);
                }
                make_list(out).ok_or_else(|| too_deep(e.span))
            }
            ExprKind::Block(stmts) => Ok(Val::Block(self.literal_block(stmts, sc))),
            ExprKind::Ref(id) => self.reference(id, sc),
            ExprKind::Select(base, sel) => {
                let mark = self.reads_noted();
                let b = self.eval(base, sc)?;
                self.select_reading(mark, b, |ev, b| ev.select(b, sel, sc, e.span))
            }
            ExprKind::Unary(op, x) => {
                let v = self.eval(x, sc)?;
                self.unary(*op, v, e.span, x.span)
            }
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, sc, e.span),
            ExprKind::If(i) => self.conditional(i, sc),
            ExprKind::Call(c) => self.eval_call(c, sc),
            ExprKind::Import(i) => self.import_value(i, sc),
            ExprKind::Error => Err(EvalError::new(
                Diagnostic::error("this part of the file could not be parsed").at(e.span),
            )),
        }
    }

    /// A `{ ... }` literal: a block built lazily, on first look-up.
    pub(crate) fn literal_block(&mut self, stmts: &'a [ast::Statement], sc: ScopeId) -> BlockId {
        let file = self.scope(sc).file;
        let place = self.current_place();
        self.new_block(
            place,
            BlockState::Unbuilt(BuildSpec::Body {
                stmts,
                file,
                scope: sc,
            }),
        )
    }

    /// `$name`: a macro parameter, else a resource of the scope's root.
    fn reference(&mut self, id: &'a ast::Ident, sc: ScopeId) -> R<Val> {
        let root = self.scope_root(sc);
        let scope = self.scope(sc);
        if let Some(params) = &scope.params {
            if let Some((_, t)) = params.iter().find(|(n, _)| **n == *id.name) {
                let t = *t;
                return self.force_thunk(t, id.span);
            }
        }
        match self.member(root, &id.name, id.span)? {
            Some(slot) => {
                self.note_read(slot);
                self.force(slot)
            }
            None => {
                let mut err = self.missing_member(root, &id.name, id.span, "resource");
                // References start at the root, not in the enclosing block: `Url =>
                // "${Port}"` inside `Web => { Port => 80 ... }` means `$Web.Port`.
                if err.diag.hint.is_none() {
                    if let Some(path) = self.enclosing_member(root, &id.name) {
                        err.diag.hint = Some(format!(
                            "a reference starts from the top of the file's configuration: did you mean `${path}`?"
                        ));
                    }
                }
                // A file imported into a block (or as a value) sees that block only
                // (clarifications §3): say so when a block enclosing it has the name.
                if let Some(holder) = self.enclosing_holder(root, &id.name) {
                    let inside = self.block_path(root);
                    let inside = if inside.is_empty() {
                        "a value".to_string()
                    } else {
                        format!("`{inside}`")
                    };
                    let what = if Some(holder) == self.top_block() {
                        "a top-level resource".to_string()
                    } else {
                        let outer = self.block_path(holder);
                        if outer.is_empty() {
                            "a resource of an enclosing block".to_string()
                        } else {
                            format!("a member of `{outer}`")
                        }
                    };
                    // What the file sees is how it is delegated a part of the
                    // configuration (§5.1), so the hint says how the importer can pass
                    // the value in if it chooses to, and where the import is.
                    err.diag.notes.push(format!(
                            "`{}` is {what}, but this file is imported into {inside}, and a reference in it sees only that block (reference §5.1)",
                            id.name
                        ));
                    let scope = self.scope(sc);
                    let site = scope.chain.site.filter(|_| scope.chain.file == scope.file);
                    if let Some(site) = site {
                        err.diag.labels.push(cf2_syntax::diagnostic::Label {
                            span: site,
                            message: format!("imported here, into {inside}"),
                        });
                        if err.diag.hint.is_none() {
                            err.diag.hint = Some(format!(
                                    "if this file should see it, the importing file can import it inline into a block that has the member: `{{ import(...), private {0} => ${0} }}`",
                                    id.name
                                ));
                        }
                    }
                }
                if let Some(params) = &self.scope(sc).params {
                    if let Some(p) = cf2_syntax::diagnostic::did_you_mean(
                        &id.name,
                        params.iter().map(|(n, _)| &**n),
                    ) {
                        err.diag.hint = Some(format!("did you mean the parameter `${p}`?"));
                    }
                }
                Err(err)
            }
        }
    }

    /// The nearest block enclosing `root` (not `root` itself) that has a member `name`:
    /// where a reference that `root`'s file cannot see would have found it.
    fn enclosing_holder(&self, root: BlockId, name: &str) -> Option<BlockId> {
        let mut block = root;
        // Blocks nest at most as deep as the sources do; the bound only guards the walk.
        for _ in 0..4096 {
            let Place::Of(owner) = self.block(block).place else {
                break;
            };
            block = self.slot(owner).parent;
            if self.block(block).members.contains_key(name) {
                return Some(block);
            }
        }
        self.top_block()
            .filter(|t| *t != root && self.block(*t).members.contains_key(name))
    }

    pub(crate) fn force_thunk(&mut self, t: ThunkId, at: Span) -> R<Val> {
        let (expr, scope, state, made_for, elements) = match self.thunks.get(t.0 as usize) {
            Some(th) => (
                th.expr,
                th.scope,
                th.state.clone(),
                th.made_for,
                th.elements.clone(),
            ),
            None => return Ok(Val::Undef),
        };
        if let ThunkState::Active = state {
            return Err(EvalError::new(
                Diagnostic::error("a macro argument depends on itself").at(at),
            ));
        }
        // Read for a secret's pick: evaluated apart, as a resource is there
        // (`Evaluator::force`), so that reading it by name later shows what it gives.
        let in_pick = self.pick_depth > 0;
        if in_pick {
            if let Some((v, warned)) = self.pick_thunks.get(&t).cloned() {
                self.warn_again(&warned);
                return Ok(v);
            }
        }
        match state {
            ThunkState::Done(v) if !in_pick => Ok(v),
            before => {
                self.set_thunk(t, ThunkState::Active);
                // Evaluated where the call was, not where it is first needed: the place of
                // a block decides whether a `~>` merges it as written (`fold::merge`), so
                // it must not depend on the order of evaluation.
                let depth = self.stack.len();
                let place = self.thunk_place.replace((depth, made_for));
                let outer_elements = std::mem::replace(&mut self.elements, elements);
                let warned = self.warnings.len();
                let r = self.eval(expr, scope);
                self.elements = outer_elements;
                self.thunk_place = place;
                match &r {
                    Ok(v) if in_pick => {
                        let given = self.warnings_since(warned);
                        self.pick_thunks.insert(t, (v.clone(), given));
                        self.set_thunk(t, before);
                    }
                    Ok(v) => self.set_thunk(t, ThunkState::Done(v.clone())),
                    Err(_) if in_pick => self.set_thunk(t, before),
                    Err(_) => self.set_thunk(t, ThunkState::Pending),
                }
                r
            }
        }
    }

    fn set_thunk(&mut self, t: ThunkId, s: ThunkState) {
        if let Some(th) = self.thunks.get_mut(t.0 as usize) {
            th.state = s;
        }
    }

    /// The configuration's top-level block (only messages need it).
    fn top_block(&self) -> Option<BlockId> {
        self.blocks
            .iter()
            .position(|b| matches!(b.place, Place::Top))
            .map(|i| BlockId(i as u32))
    }

    /// A condition comparing a bare word that names a top-level resource with another
    /// constant (`if (Hostname =~ /^web/)`) is the same for every configuration: the `$` was
    /// most likely forgotten. A warning, since comparing text with text is allowed.
    fn warn_constant_comparisons(&mut self, cond: &Expr) {
        let mut words = Vec::new();
        crate::checks::constant_comparisons(cond, &mut words);
        for word in words {
            let ExprKind::Literal(name) = &word.kind else {
                continue;
            };
            let bare = !self.source_text(word.span).starts_with('\'');
            let resource = self
                .top_block()
                .is_some_and(|t| self.block(t).members.contains_key(name.as_str()));
            if !(bare && resource) {
                continue;
            }
            let w = Diagnostic::warning(format!(
                "`{name}` is the text '{name}' here, not the resource: this condition compares two constants"
            ))
            .at(word.span)
            .with_label("text")
            .hint(format!("a reference to a resource starts with `$`: `${name}`"));
            self.warn_once(w);
        }
    }

    /// The path of a member `name` of a block enclosing the resource being evaluated
    /// (innermost first), below `root`: what a reference to a sibling probably meant.
    fn enclosing_member(&self, root: BlockId, name: &str) -> Option<String> {
        let slot = *self.stack.last()?;
        let mut block = self.slot(slot).parent;
        // Bounded by the nesting of the configuration; a few steps in practice.
        for _ in 0..64 {
            if block == root {
                return None;
            }
            if let Some(&member) = self.block(block).members.get(name) {
                return Some(self.slot_path(member));
            }
            match self.block(block).place {
                Place::Of(s) => block = self.slot(s).parent,
                _ => return None,
            }
        }
        None
    }

    /// `base.selector`: a block member by name, or a list element by index.
    pub(crate) fn select(&mut self, base: Val, sel: &'a Expr, sc: ScopeId, at: Span) -> R<Val> {
        let key = match &sel.kind {
            ExprKind::Literal(s) => Val::Lit(Rc::from(s.as_str())),
            _ => self.eval(sel, sc)?,
        };
        if let Val::Secret(secret) = &key {
            // Selected by a secret: what is found depends on the secret.
            let shown = key.describe();
            let origin = secret.origin.clone();
            let plain = secret.value.clone();
            // Every candidate is as hidden as the one picked: hiding only the pick would
            // show which it is beside its siblings read by name (`$Sel.mary`).
            if let Val::Block(b) = &base {
                self.picked_from.entry(*b).or_insert_with(|| origin.clone());
            }
            return self.select_in_secret(base, &plain, &origin, &shown, sel.span, at);
        }
        // A member of a block that a secret selected (`$Sel.($P.fred.UserName).A`): which
        // one it is depends on the secret as much as the block did.
        if let Val::Block(b) = &base {
            if let Some(origin) = self.picked_origin(b) {
                let shown = crate::val::redacted(&origin, true);
                return self.select_in_secret(base, &key, &origin, &shown, sel.span, at);
            }
        }
        self.select_value(base, &key, sel.span, at)
    }

    /// A selection whose result depends on a secret (`origin`, shown as `shown`): its
    /// value is marked secret, a block it gives is remembered as selected in secret (so
    /// are its members, and what outputs it), and the warnings, the trace and the errors
    /// met meanwhile, which would name what was selected, are hidden.
    fn select_in_secret(
        &mut self,
        base: Val,
        key: &Val,
        origin: &Rc<str>,
        shown: &str,
        key_at: Span,
        at: Span,
    ) -> R<Val> {
        let v = self.under_pick(
            shown,
            key_at,
            |shown| Diagnostic::error(format!("nothing can be selected with {shown}")).at(key_at),
            |ev| ev.select_value(base, key, key_at, at),
        )?;
        let v = self.view_of_pick(v, origin, key_at);
        Ok(crate::secret::mark_over(v, origin))
    }

    /// What a secret selector selected is as secret as the selector: the warnings given
    /// and the resources evaluated meanwhile would name it (`Ports.postgres`), by their
    /// resource, their place or their trace. Warnings given since `warned` are replaced by
    /// one at the selector; the resources are evaluated apart and not named by `-Deval`
    /// (`Evaluator::in_pick`).
    pub(crate) fn hide_what_a_secret_selected(&mut self, warned: usize, shown: &str, at: Span) {
        if self.warnings.len() > warned {
            self.warnings.truncate(warned);
            let w = Diagnostic::warning(format!("a warning was given by what {shown} selected"))
                .at(at)
                .note("the details are not shown, because the selector is a secret");
            self.warn_once(w);
        }
    }

    pub(crate) fn select_value(&mut self, base: Val, key: &Val, key_at: Span, at: Span) -> R<Val> {
        match &base {
            Val::Block(b) => {
                let name = match key {
                    Val::Lit(s) | Val::Str(s) => s.to_string(),
                    Val::Num(n) => n.to_string(),
                    other => {
                        return Err(EvalError::new(
                            Diagnostic::error(format!(
                                "a block member is selected by name, but the selector is {}",
                                other.kind_phrase()
                            ))
                            .at(key_at),
                        ))
                    }
                };
                match self.member(*b, &name, key_at)? {
                    Some(s) => {
                        self.note_read(s);
                        self.force(s)
                    }
                    None => Err(self.missing_member(*b, &name, key_at, "member")),
                }
            }
            Val::List(l) => {
                let number = match key {
                    Val::Num(n) => Some(*n),
                    Val::Lit(s) | Val::Str(s) => cf2_value::Number::parse_text(s),
                    _ => None,
                };
                // A whole number, computed (`$Half * 2` is 3.0) or spelled (`'1.0'`), selects
                // as Perl's `$l[3.0]` does; a decimal written as the selector (`$L.1.0`) stays
                // an error, since it is most likely two selections (hint below).
                let index = match number {
                    Some(cf2_value::Number::Int(i)) => Some(i),
                    Some(n) if self.decimal_selector(key_at).is_none() => n.as_whole(),
                    _ => None,
                };
                let Some(i) = index else {
                    let mut d = Diagnostic::error(format!(
                        "a list element is selected by a whole number (an integer), but the selector is {}",
                        key.describe()
                    ))
                    .at(key_at);
                    if let Some((a, b)) = self.decimal_selector(key_at) {
                        d = d.hint(format!(
                            "`.{a}.{b}` reads as one decimal number; to select twice, bracket the first index: `.({a}).{b}` (reference §3.6)"
                        ));
                    }
                    return Err(EvalError::new(d));
                };
                match usize::try_from(i).ok().and_then(|i| l.items.get(i)) {
                    Some(v) => Ok(v.clone()),
                    None => Err(EvalError::missing(
                        Diagnostic::error(
                            if base.holds_secret() || self.selected_origin_in(&base).is_some() {
                                // How many secrets it holds may say which list a secret picked.
                                format!("index {i} is out of range of a list of secrets")
                            } else {
                                format!(
                                    "index {i} is out of range: the list has {} element{}",
                                    l.items.len(),
                                    if l.items.len() == 1 { "" } else { "s" }
                                )
                            },
                        )
                        .at(key_at)
                        .hint("list elements are numbered from 0"),
                    )),
                }
            }
            Val::Undef => Err(EvalError::missing(
                Diagnostic::error(format!(
                    "cannot select `{}` from an undefined value",
                    key_text(key)
                ))
                .at(at),
            )),
            other => {
                let mut d = Diagnostic::error(format!(
                    "cannot select `{}` from {}: only blocks and lists have members",
                    key_text(key),
                    other.describe()
                ))
                .at(at);
                // What was meant, by how it was written: an address or version left
                // unquoted (`10.0.0.15` reads as 10.0 selecting `0.15`), or a reference
                // without its `$` (`Web.Port` is the text 'Web' selecting `Port`).
                let written = self.source_text(at);
                let dotted = written.split('.').count() > 2
                    && written.bytes().all(|c| c.is_ascii_digit() || c == b'.');
                // `$Host . '.example.org'`: Perl's and PHP's `.` joins text (a selector is
                // written against the value, and is never quoted text).
                let joining = written.contains(" .")
                    || written.contains(". ")
                    || written.contains(".'")
                    || written.contains(".\"");
                if joining && matches!(other, Val::Lit(_) | Val::Str(_) | Val::Num(_)) {
                    d = d.hint(
                        "`.` selects a member (`$Web.Port`); to join text, use `++`: `$Host ++ '.example.org'`",
                    );
                } else if dotted && matches!(other, Val::Num(_)) {
                    d = d.hint(format!(
                        "an address or version number is text and must be quoted: `'{written}'`"
                    ));
                } else if let Val::Lit(word) = other {
                    // `$` only if there is such a resource (`foo.bar` is more likely text).
                    let resource = self
                        .top_block()
                        .is_some_and(|t| self.block(t).members.contains_key(&**word));
                    let whole = written.starts_with(&**word);
                    if resource && whole {
                        d = d.hint(format!(
                            "a reference to a resource starts with `$`: `${written}`"
                        ));
                    } else if whole {
                        d = d.hint(format!("text holding a `.` must be quoted: `'{written}'`"));
                    }
                }
                Err(EvalError::new(d))
            }
        }
    }

    /// If the selector written at `at` is a decimal number such as `1.0`, its two parts.
    fn decimal_selector(&self, at: Span) -> Option<(String, String)> {
        let text = self.source_text(at);
        let (a, b) = text.split_once('.')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
        (digits(a) && digits(b)).then(|| (a.to_string(), b.to_string()))
    }

    /// Text with `${...}` interpolations. In a regex (`in_regex`), interpolated text is
    /// escaped and an interpolated regex is inserted as is (reference §3.1).
    pub(crate) fn interpolate(
        &mut self,
        parts: &'a [Part],
        sc: ScopeId,
        in_regex: bool,
    ) -> R<String> {
        // Room for a typical result (a host name, a URL), so that it is not regrown.
        let mut out = String::with_capacity(64);
        for p in parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Interp(x) => {
                    let v = self.eval(x, sc)?;
                    let v = self.open(v);
                    let piece: std::borrow::Cow<'_, str> = match &v {
                        Val::Lit(s) | Val::Str(s) => std::borrow::Cow::Borrowed(s),
                        // Written in place (in a regex, its `.` is escaped below).
                        Val::Num(cf2_value::Number::Int(i)) if !in_regex => {
                            use std::fmt::Write;
                            let _ = write!(out, "{i}");
                            continue;
                        }
                        Val::Num(n) if !in_regex => {
                            out.push_str(&n.to_text());
                            continue;
                        }
                        Val::Num(n) => n.to_text().into(),
                        Val::Bool(b) => {
                            std::borrow::Cow::Borrowed(if *b { "true" } else { "false" })
                        }
                        Val::Regex(r) if in_regex => {
                            out.push_str(r);
                            continue;
                        }
                        Val::Regex(r) => std::borrow::Cow::Borrowed(r),
                        Val::Undef => {
                            // `${Location}` refers to `$Location`.
                            let mut written = self.source_text(x.span);
                            if matches!(x.kind, ExprKind::Ref(_) | ExprKind::Select(..))
                                && !written.starts_with('$')
                            {
                                written.insert(0, '$');
                            }
                            return Err(EvalError::new(
                                Diagnostic::error(format!(
                                    "`{written}` has no value, so it cannot be interpolated"
                                ))
                                .at(x.span)
                                .with_label("undefined")
                                .hint(format!(
                                    "give it a value, or interpolate only when it has one: `if (defined({written})) then ... else ...`"
                                )),
                            ));
                        }
                        other => {
                            return Err(EvalError::new(
                                Diagnostic::error(format!(
                                    "only scalars can be interpolated, but this is {}",
                                    other.kind_phrase()
                                ))
                                .at(x.span)
                                .hint("select a scalar member, or use `join()` for a list"),
                            ))
                        }
                    };
                    if in_regex {
                        out.push_str(&crate::perl_regex::quote_meta(&piece));
                    } else {
                        out.push_str(&piece);
                    }
                    if out.len() > crate::ops::MAX_TEXT_BYTES {
                        return Err(crate::ops::text_too_long(
                            out.len(),
                            x.span,
                            "interpolation",
                        ));
                    }
                }
            }
        }
        Ok(out)
    }

    /// `if (c) then a else b` as a value: only the branch taken is evaluated.
    fn conditional(&mut self, i: &'a ast::If, sc: ScopeId) -> R<Val> {
        let (taken, captures) = self.eval_condition(&i.cond, sc)?;
        let branch = if taken {
            Some(&*i.then)
        } else {
            i.otherwise.as_deref()
        };
        match branch {
            Some(b) => {
                let scope = self.with_captures(sc, captures);
                self.eval(b, scope)
            }
            None => Ok(Val::Undef),
        }
    }

    /// An `if` whose condition gave `v`, not a boolean.
    fn not_a_boolean_condition(&self, cond: &Expr, v: &Val, sc: ScopeId) -> EvalError {
        // `Flag => 'true'`: the quotes made it text where it is defined. (Not for a secret,
        // which `v` then is: that would tell what it is.)
        if matches!(v, Val::Lit(t) | Val::Str(t) if &**t == "true" || &**t == "false") {
            let mut d = Diagnostic::error(format!(
                "the condition of an `if` must be a boolean, but it is the text {}",
                v.describe()
            ))
            .at(cond.span);
            // `if ($Flag)`: show where `Flag` was given its quotes.
            if let ExprKind::Ref(id) = &cond.kind {
                if let Some(site) = self.sole_definition(&id.name, sc) {
                    d = d.also(site, format!("`{}` is given text here", id.name));
                }
            }
            return EvalError::new(d.hint(format!(
                "quotes make text: where it is defined, write {} without them to make it a boolean",
                v.describe().trim_matches('\'')
            )));
        }
        let what = if v.is_undef() {
            "undefined".to_string()
        } else {
            v.describe()
        };
        // The reference as written (`$N`), or `$X` for anything else.
        let text = self.source_text(cond.span);
        let inner = without_outer_brackets(&text).trim();
        let written = Some(inner)
            .filter(|t| t.starts_with('$') && t.len() <= 40 && !t.contains('\n'))
            .unwrap_or("$X");
        // `yes`, `True`, `off`: booleans in YAML, Python or INI files, text in CF2.
        let boolean_elsewhere = match v {
            Val::Lit(t) | Val::Str(t) => ["yes", "no", "on", "off", "true", "false"]
                .iter()
                .any(|b| t.eq_ignore_ascii_case(b)),
            _ => false,
        };
        let hint = if boolean_elsewhere {
            format!(
                "{} is text: the booleans are `true` and `false`, unquoted; or compare the text: `if ({written} == {})`",
                v.describe(),
                v.describe().trim_matches('\'')
            )
        } else {
            format!("compare it: `if ({written} == value)`, or test it: `if (defined({written}))`")
        };
        EvalError::new(
            Diagnostic::error(format!(
                "the condition of an `if` must be a boolean, but it is {what}"
            ))
            .at(cond.span)
            .hint(hint),
        )
    }

    /// Evaluates a condition; returns whether it holds and the captures of the regex match
    /// made directly in it, if any.
    pub(crate) fn eval_condition(
        &mut self,
        cond: &'a Expr,
        sc: ScopeId,
    ) -> R<(bool, Option<Captures>)> {
        let saved = self.capture_sink.replace(Vec::new());
        let result = self.eval(cond, sc);
        let sink = std::mem::replace(&mut self.capture_sink, saved).unwrap_or_default();
        let v = result?;
        self.warn_constant_comparisons(cond);
        let taken = match (v.plain(), &v) {
            (Val::Bool(b), _) => *b,
            (_, other) => return Err(self.not_a_boolean_condition(cond, other, sc)),
        };
        let with_groups: Vec<&(Captures, Span, bool)> = sink.iter().filter(|c| c.2).collect();
        if with_groups.len() > 1 {
            let mut d = Diagnostic::error(
                "only one regular expression in a condition may have capture groups",
            );
            if let (Some(a), Some(b)) = (with_groups.first(), with_groups.get(1)) {
                d = d.at(b.1).also(a.1, "the first one");
            }
            return Err(EvalError::new(d));
        }
        // The captures come from the regex with capture groups; without one, from the only
        // regex matched (so `match(0)`, the whole match, works for `/\d+/` too).
        let matched = sink.len();
        let captures = match sink.iter().position(|c| c.2) {
            Some(i) => sink.into_iter().nth(i).map(|c| c.0),
            None if matched == 1 => sink.into_iter().next().map(|c| c.0),
            None if matched > 1 => Some(Captures {
                ambiguous: true,
                ..Captures::default()
            }),
            // A regex match was written but not evaluated (`true || $X =~ /(a)/`): the
            // condition still owns the captures, and `match()` says why there are none.
            None if crate::checks::regex_matches(cond, &mut |_| {}) => Some(Captures {
                unevaluated: true,
                ..Captures::default()
            }),
            None => None,
        };
        Ok((taken, captures))
    }

    /// `name(args)`: a macro defined earlier in the same file, else a function.
    pub(crate) fn eval_call(&mut self, call: &'a ast::Call, sc: ScopeId) -> R<Val> {
        let file = self.scope(sc).file;
        if let Some(m) = self
            .file(file)
            .and_then(|f| f.macro_before(&call.name.name, call.span.start))
        {
            return self.call_macro(m, call, sc);
        }
        // `typeof()` and `defined()` read only the kind of a value: a secret stays closed.
        // Custom functions are never given secrets (`crate::external` refuses them).
        let name = call.name.name.to_lowercase();
        // `ipaddr()` and `iphost()` refuse secrets: a look-up would send them to the name
        // servers, so they must see the secret still closed.
        if ["typeof", "defined", "ipaddr", "iphost"].contains(&name.as_str())
            || !crate::functions::STANDARD.contains(&name.as_str())
        {
            return self.call_function(call, sc);
        }
        // `match()` gives text of a secret that a condition matched.
        let captured = self
            .scope(sc)
            .captures
            .as_ref()
            .and_then(|c| c.secret.clone());
        let v = self.through_boundary(|ev| ev.call_function(call, sc))?;
        Ok(match captured {
            Some(origin) if name == "match" => mark(v, &origin),
            _ => v,
        })
    }

    fn call_macro(&mut self, m: &'a ast::MacroDef, call: &'a ast::Call, sc: ScopeId) -> R<Val> {
        if m.params.len() != call.args.len() {
            return Err(EvalError::new(
                Diagnostic::error(format!(
                    "macro `{}` takes {} argument{}, but {} {} given",
                    m.name.name,
                    m.params.len(),
                    if m.params.len() == 1 { "" } else { "s" },
                    call.args.len(),
                    if call.args.len() == 1 { "was" } else { "were" }
                ))
                .at(call.span)
                .also(m.span, "the macro is defined here"),
            ));
        }
        let mut params = Vec::with_capacity(m.params.len());
        for (p, a) in m.params.iter().zip(call.args.iter()) {
            let t = ThunkId(self.thunks.len() as u32);
            self.thunks.push(Thunk {
                expr: a,
                scope: sc,
                state: ThunkState::Pending,
                made_for: self.placing_slot(),
                elements: self.elements.clone(),
            });
            params.push((Rc::from(&*p.name), t));
        }
        let caller = self.scope(sc).clone();
        let scope = self.new_scope(Scope {
            params: Some(Rc::new(params)),
            captures: None,
            call: Some(Rc::new(MacroCall {
                call: call.span,
                body: m.body.span,
                name: Rc::from(&*m.name.name),
            })),
            ..caller
        });
        // An error in the body points into the macro; say which call it came from
        // (arguments are evaluated in the caller's text, so their errors already do).
        self.eval(&m.body, scope)
            .map_err(|e| self.in_macro_call(e, scope))
    }

    /// A compile-wide limit passed: the first such error, made by `make`, and the same one
    /// again for every later attempt, so that the folds that meet it through several
    /// definitions report it once (`EvalError::absorb` leaves out the same mistake), not
    /// once per place the work went on.
    fn work_limit(&mut self, make: impl FnOnce() -> EvalError) -> EvalError {
        // A pick's reading has its own (`pick_work_limit_passed`): reported by name, its
        // place would tell what the pick read.
        if self.pick_depth > 0 {
            return self.pick_work_limit_passed.get_or_insert_with(make).clone();
        }
        self.work_limit_passed.get_or_insert_with(make).clone()
    }

    /// An error met in code of `scope`: if it lies in the body of the macro call that code
    /// is in, it also shows that call (once), since the body alone does not say which call
    /// gave the arguments at fault. Errors in a member of a block the macro gave are met
    /// after the call has returned, so this is asked where a definition is evaluated too.
    pub(crate) fn in_macro_call(&self, mut e: EvalError, scope: ScopeId) -> EvalError {
        let Some(mc) = self.scope(scope).call.clone() else {
            return e;
        };
        let body = mc.body;
        let within = |s: Span| s.file == body.file && s.start >= body.start && s.end <= body.end;
        // Or in a macro this body calls: the chain of calls is shown out to the user's own
        // call, which is the one that gave the arguments.
        let inside = e.diag.span.is_some_and(within)
            || e.diag
                .labels
                .iter()
                .any(|l| within(l.span) && l.message.starts_with(IN_MACRO_CALL));
        let message = format!("{IN_MACRO_CALL}`{}`", mc.name);
        if inside
            && !e
                .diag
                .labels
                .iter()
                .any(|l| l.span == mc.call && l.message == message)
        {
            e.diag.labels.push(cf2_syntax::diagnostic::Label {
                span: mc.call,
                message,
            });
        }
        e
    }

    /// `import(...)` as a value: a new block holding the file's resources, whose references
    /// resolve within that block (clarifications §3).
    fn import_value(&mut self, imp: &'a ast::Import, sc: ScopeId) -> R<Val> {
        let file = match self.resolve_import_expr(imp, sc, None)? {
            Some(crate::resolve::Imported::File(f)) => f,
            Some(crate::resolve::Imported::Value(v)) => return Ok(v),
            None => return Ok(Val::Undef),
        };
        let chain = self.scope(sc).chain.clone();
        if chain.contains(file) {
            return Err(self.import_cycle(&chain, file, imp.span));
        }
        let Some(loaded) = self.file(file) else {
            return Ok(Val::Undef);
        };
        let counts = if self.pick_depth > 0 {
            &mut self.pick_value_imports_of
        } else {
            &mut self.value_imports_of
        };
        let count = counts.entry(file).or_insert(0);
        *count += 1;
        if *count > MAX_VALUE_IMPORTS_OF_ONE_FILE {
            let name = loaded.source.name.clone();
            return Err(self.work_limit(|| too_many_value_imports(imp.span, &name)));
        }
        let place = self.current_place();
        let b = self.new_block(place, BlockState::Built);
        let chain = Rc::new(Chain {
            file,
            site: Some(imp.span),
            parent: Some(chain),
        });
        let scope = self.new_scope(Scope {
            root: b,
            file,
            chain: chain.clone(),
            params: None,
            captures: None,
            call: None,
        });
        self.block_mut(b).state = BlockState::Unbuilt(BuildSpec::Body {
            stmts: &loaded.ast.statements,
            file,
            scope,
        });
        self.value_imports.insert(b, file);
        Ok(Val::Block(b))
    }

    /// Regex matching for `=~` / `!~`, recording captures for `match()` when the match is
    /// made directly in a condition.
    pub(crate) fn regex_match(
        &mut self,
        op: BinaryOp,
        text: &str,
        pattern: &str,
        at: Span,
        hidden: &HiddenMatch,
    ) -> R<bool> {
        let re = self.regex(pattern, at)?;
        let caps = re.captures(text).map_err(|e| {
            // Whether the text ends with a newline is a part of it.
            let looked_ahead = !hidden.text && re.looks_ahead_in(text);
            let shown = match &hidden.pattern {
                Some(secret) => format!("the regular expression made with {secret}"),
                None => crate::val::quoted_preview(pattern, '/'),
            };
            let mut d = crate::perl_regex::match_given_up(&shown, looked_ahead, &e).at(at);
            if hidden.pattern.is_some() {
                d = d.note(PATTERN_NOT_SHOWN);
            }
            EvalError::new(d)
        })?;
        let matched = caps.is_some();
        let secret = self.match_secret.clone();
        if let Some(sink) = &mut self.capture_sink {
            let groups = re.captures_len() > 1;
            let mut c = Captures {
                secret,
                ..Captures::default()
            };
            if let Some(caps) = &caps {
                c.groups = (0..caps.len())
                    .map(|i| caps.get(i).map(|m| m.as_str().to_string()))
                    .collect();
                for (i, name) in re.capture_names().enumerate() {
                    if let Some(n) = name {
                        c.names.push((n.to_string(), i));
                    }
                }
                sink.push((c, at, groups));
            } else {
                sink.push((c, at, groups));
            }
        }
        Ok(match op {
            BinaryOp::NotMatch => !matched,
            _ => matched,
        })
    }

    /// A compiled regex, cached by pattern.
    pub(crate) fn regex(
        &mut self,
        pattern: &str,
        at: Span,
    ) -> R<std::sync::Arc<crate::perl_regex::PerlRegex>> {
        if let Some(r) = self.regexes.get(pattern) {
            return Ok(r.clone());
        }
        // A literal of the file at hand was compiled when the file was checked.
        let checked = self
            .loader
            .get(at.file)
            .and_then(|f| f.regexes.get(pattern).cloned());
        let re = match checked {
            Some(re) => re,
            None => std::sync::Arc::new(crate::perl_regex::build_regex(pattern).map_err(|e| {
                EvalError::new(crate::perl_regex::invalid_regex(pattern, &e).at(at))
            })?),
        };
        self.regexes.insert(Rc::from(pattern), re.clone());
        Ok(re)
    }

    pub(crate) fn list_of(&self, items: Vec<Val>, at: Span) -> R<Val> {
        make_list(items).ok_or_else(|| too_deep(at))
    }
}

fn key_text(v: &Val) -> String {
    match v {
        Val::Lit(s) | Val::Str(s) => s.to_string(),
        other => other.describe(),
    }
}

pub(crate) fn too_deep(at: Span) -> EvalError {
    EvalError::new(
        Diagnostic::error(format!(
            "value nested too deeply (more than {} levels of lists and blocks)",
            cf2_value::MAX_DEPTH
        ))
        .at(at),
    )
}

/// The most expressions one compile evaluates. Every value is computed once, so an
/// ordinary configuration, however large, stays far below (a host of the benchmark site
/// evaluates a few thousand); only a macro or function that calls itself more than once per
/// level, whose work doubles with each level, reaches it, and would otherwise run for
/// days (`m40(x) = m39($x) + m39($x)`): a compile must end (docs/semantics.md §"Limits").
pub(crate) const MAX_STEPS: u64 = 50_000_000;

fn too_much_work(at: Span, limit: u64) -> EvalError {
    EvalError::new(
        Diagnostic::error(format!(
            "the compile needs more than {limit} evaluation steps"
        ))
        .at(at)
        .with_label("the limit was passed here")
        .hint("a macro that calls another more than once per level doubles its work with each level: compute the value once, in a resource, and refer to it"),
    )
}

/// The most times one compile imports one file as a value (`import(f)` as a value, each
/// time it is evaluated). Each such import is a new block, whose file is evaluated anew
/// (its messages name the path it was reached by), so files that import the next level's
/// two files as values at every level (`Sub ~> import(a)` and `Sub ~> import(b)` in `a`
/// and `b`, a diamond per level) double the work per level, which no collapsing of copies
/// can avoid: 30 levels would run for days. Counted per file, so that an inventory
/// importing thousands of different files as values is not limited; an ordinary
/// configuration imports each file a few times (docs/semantics.md §2, "Work").
pub(crate) const MAX_VALUE_IMPORTS_OF_ONE_FILE: u32 = 10_000;

fn too_many_value_imports(at: Span, file: &str) -> EvalError {
    EvalError::new(
        Diagnostic::error(format!(
            "the compile imports `{file}` as a value more than {MAX_VALUE_IMPORTS_OF_ONE_FILE} times"
        ))
        .at(at)
        .with_label("the limit was passed here")
        .hint("each import of a file as a value evaluates the file anew: files that import each other's files as values at every level (`Sub ~> import(a)` beside `Sub ~> import(b)`, where `a` and `b` do the same one level down) double the work per level; import them inline (`Sub ~> { import(a), import(b) }`), where a file reached along several paths is one source"),
    )
}

/// `text` without one pair of brackets around all of it (`($N)` is `$N`; `(a) || (b)` stays
/// as it is, since its first bracket closes before the end).
fn without_outer_brackets(text: &str) -> &str {
    let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
        return text;
    };
    let mut depth = 0usize;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return text,
            ')' => depth -= 1,
            _ => {}
        }
    }
    inner
}
