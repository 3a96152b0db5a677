//! Turning lazy values into output: each value is sent piece by piece to a
//! [`cf2_value::Sink`] (a writer streams text from it; [`cf2_value::Builder`] makes a
//! [`cf2_value::Value`]), and only what the output needs is forced (clarifications §6).
//! Also deep equality of values (for unordered equal definitions, clarifications §5).

use crate::error::{ErrorKind, EvalError, R};
use crate::eval::{deep, Evaluator};
use crate::expr::too_deep;
use crate::model::{BlockId, Body, Op, Place, SlotId};
use crate::val::Val;
use cf2_syntax::ast::ExprKind;
use cf2_syntax::{Diagnostic, Span};
use cf2_value::{Builder, Sink, TextKind, Value};

/// How many further errors one block reports beside its first: a compile's limit.
const MORE_ERRORS_PER_BLOCK: usize = crate::MAX_ERRORS - 1;

/// A sink that keeps nothing: the members of a block evaluated after one of them failed.
struct Discard;

impl Sink for Discard {
    fn text(&mut self, _: &str, _: TextKind) {}
    fn number(&mut self, _: cf2_value::Number) {}
    fn boolean(&mut self, _: bool) {}
    fn begin_list(&mut self, _: usize) {}
    fn end_list(&mut self) {}
    fn begin_block(&mut self, _: usize) {}
    fn key(&mut self, _: &str) {}
    fn end_block(&mut self) {}
}

/// The most a configuration may output, counted as one per value, plus its depth (for the
/// indentation before it), plus the bytes of its text (256 MiB): the output is kept in
/// memory until it is whole.
/// Values are shared, not copied, so a chain of blocks or lists that each hold the one
/// below twice takes little memory but doubles the output at each level: it stops here,
/// with an error, rather than writing for ever.
pub(crate) const MAX_OUTPUT: u64 = 256 << 20;

impl<'a> Evaluator<'a> {
    /// The plain value of `v`; private members are left out unless `-p`.
    pub(crate) fn materialize(&mut self, v: &Val, depth: usize, at: Span) -> R<Value> {
        let mut built = Builder::new();
        self.emit(v, depth, at, &mut built)?;
        finished(built, at)
    }

    /// The plain value of resource `s`, with the diagnostics of a whole compile (its `?`,
    /// its undefined list elements where they are written).
    pub(crate) fn materialize_slot(&mut self, s: SlotId) -> R<Value> {
        let mut built = Builder::new();
        self.emit_slot(s, 1, &mut built)?;
        finished(built, self.slot_site(s))
    }

    /// Sends the plain value of `v` to `sink`; private members are left out unless `-p`.
    /// On an error, what `sink` got is incomplete.
    pub(crate) fn emit(&mut self, v: &Val, depth: usize, at: Span, sink: &mut dyn Sink) -> R<()> {
        if depth > cf2_value::MAX_DEPTH {
            return Err(self.output_too_deep(at));
        }
        // Roughly what the output takes for it: its text, and the indentation before it.
        let text = v.plain().text().map_or(0, str::len);
        self.output_weight = self
            .output_weight
            .saturating_add(1 + depth as u64)
            .saturating_add(text as u64);
        if self.output_too_large() {
            return Err(EvalError::new(
                Diagnostic::error(format!(
                    "the configuration is too large to output: more than {} MiB",
                    MAX_OUTPUT >> 20
                ))
                .at(at)
                .with_label("output stopped here")
                .hint("a value that holds another one twice at each level (`B => { a => $A, b => $A }`) doubles with every level: look for such a chain"),
            ));
        }
        deep(|| self.emit_inner(v, depth, at, sink))
    }

    fn emit_inner(&mut self, v: &Val, depth: usize, at: Span, sink: &mut dyn Sink) -> R<()> {
        match v {
            Val::Undef => {
                return Err(EvalError::new(
                    Diagnostic::error("an undefined value cannot be output").at(at),
                ))
            }
            Val::Lit(s) => sink.text(s, TextKind::Literal),
            Val::Str(s) => sink.text(s, TextKind::String),
            Val::Num(n) => sink.number(*n),
            Val::Bool(b) => sink.boolean(*b),
            Val::Regex(r) => sink.text(r, TextKind::Regex),
            // The output holds the secret where the configuration puts it; anything that
            // materialises a value for its own use (a function) is tainted by it.
            Val::Secret(secret) => {
                self.note_secret(secret);
                self.output_secrets = true;
                return self.emit_inner(&secret.value, depth, at, sink);
            }
            Val::List(l) => {
                sink.begin_list(l.items.len());
                for (i, x) in l.items.iter().enumerate() {
                    if x.is_undef() {
                        let mut e = EvalError::new(
                            Diagnostic::error(format!("element {i} of this list is undefined"))
                                .at(at),
                        );
                        e.kind = ErrorKind::UndefinedElement(vec![i]);
                        return Err(e);
                    }
                    self.emit(x, depth + 1, at, sink).map_err(|mut e| {
                        if let ErrorKind::UndefinedElement(path) = &mut e.kind {
                            path.insert(0, i);
                        }
                        e
                    })?;
                }
                sink.end_list();
            }
            Val::Block(b) => {
                if let Some(i) = self.materializing.iter().position(|(x, _)| x == b) {
                    return Err(self.contains_itself(i, at));
                }
                let holder = self.materializing_slots.last().copied();
                self.materializing.push((*b, holder));
                // A block a secret selected: its members' names and messages would say
                // which it is (`Sel.fred.A`).
                let result = self.hiding_selected(&[*b], at, "output", |ev| {
                    ev.emit_members(*b, depth, at, sink)
                });
                self.materializing.pop();
                result?;
            }
        }
        Ok(())
    }

    /// Sends a block's members. After a member fails, the others are still evaluated (into
    /// nothing: the output is lost anyway), so that independent mistakes in one block are
    /// reported together, as the top-level resources' are; the first error carries the
    /// others in `more`.
    fn emit_members(&mut self, b: BlockId, depth: usize, at: Span, sink: &mut dyn Sink) -> R<()> {
        let count = self.member_count(b, at)?;
        sink.begin_block(count);
        let mut failed: Option<EvalError> = None;
        for i in 0..count {
            let Some((name, slot)) = self.member_at(b, i) else {
                break;
            };
            if self.left_out_as_private(slot) {
                continue;
            }
            let result = match failed {
                None => {
                    sink.key(&name);
                    self.emit_slot(slot, depth + 1, sink)
                }
                Some(_) => self.emit_slot(slot, depth + 1, &mut Discard),
            };
            let Err(e) = result else { continue };
            if self.output_too_large() {
                // Everything else would fail the same way.
                return Err(e);
            }
            match &mut failed {
                None => failed = Some(e),
                Some(first) => first.absorb(e, MORE_ERRORS_PER_BLOCK),
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        sink.end_block();
        Ok(())
    }

    /// Whether resource `s` is left out of the output as private (unless `-p`); warns if
    /// that hides a value its own block assigns ([`Evaluator::warn_if_privacy_hides_assignment`]).
    pub(crate) fn left_out_as_private(&mut self, s: SlotId) -> bool {
        if !self.slot(s).private || self.opts.include_private {
            return false;
        }
        self.warn_if_privacy_hides_assignment(s);
        true
    }

    /// A member left out of the output as private only because a value `~>` merged into
    /// it was private where it came from (a delegate's `private Users.root`, merged by
    /// `RootUsers ~> $D.Users`), while its own block assigns it a value (`RootUsers.root
    /// => 0`): the privacy travels with the value (security.md §2), so that value is
    /// hidden too, which the importer did not write and may not expect. Warned once.
    fn warn_if_privacy_hides_assignment(&mut self, s: SlotId) {
        let defs = &self.slot(s).defs;
        let Some(carried) = defs
            .iter()
            .map(|d| self.def(*d))
            .find(|def| def.private && matches!(def.body, Body::ValueOf(_)))
        else {
            return;
        };
        let Some(own) = defs.iter().map(|d| self.def(*d)).find(|def| {
            !def.private
                && match def.body {
                    Body::Expr(e, _) => !matches!(e.kind, ExprKind::Undef),
                    Body::Implicit { .. } => true,
                    _ => false,
                }
        }) else {
            return;
        };
        let path = self.slot_path(s);
        let (own_site, own_file) = (own.site, self.loader_name(own.file));
        let (carried_site, carried_file) = (carried.site, self.loader_name(carried.file));
        self.warn_once(
            Diagnostic::warning(format!(
                "`{path}` is not output: it is private in {carried_file}, and the privacy came with the value merged into it, hiding the value {own_file} assigns"
            ))
            .resource(path.clone())
            .at(own_site)
            .with_label("this value is not output")
            .also(carried_site, "made private here, and merged by value with `~>`")
            .hint(format!(
                "instead of merging the whole block with `~>`, assign its other members one by one, so that `{path}` is not merged from there; `-p` shows private resources"
            )),
        );
    }

    /// A value output too deep, at `at`: named by the resource whose output it is (a chain
    /// of blocks through references is too deep for the resource at its top, not for the
    /// member at its bottom, which may be two levels deep itself), shown where the limit
    /// was passed.
    fn output_too_deep(&self, at: Span) -> EvalError {
        let mut e = too_deep(at);
        if let Some(&top) = self.materializing_slots.first() {
            let path = self.slot_path(top);
            if let Some(&inner) = self.materializing_slots.last() {
                if inner != top {
                    e.diag.label = format!("`{}` is reached here", self.slot_path(inner));
                }
            }
            e.diag.resource = Some(path);
        }
        e
    }

    /// Whether the output passed [`MAX_OUTPUT`].
    pub(crate) fn output_too_large(&self) -> bool {
        self.output_weight > MAX_OUTPUT
    }

    /// A block that contains itself (`S => { X => $S }`) would be infinitely deep.
    fn contains_itself(&self, from: usize, at: Span) -> EvalError {
        let mut names: Vec<String> = self
            .materializing
            .iter()
            .skip(from)
            .map(|(_, s)| s.map(|s| self.slot_path(s)).unwrap_or_default())
            .collect();
        if let Some(s) = self.materializing_slots.last() {
            names.push(self.slot_path(*s));
        }
        if let Some(first) = names.first().cloned() {
            names.push(first);
        }
        let start = names.first().cloned().unwrap_or_default();
        EvalError::new(
            Diagnostic::error(format!(
                "`{start}` depends on itself: its value contains itself ({})",
                names.join(" → ")
            ))
                .at(at)
                .with_label("this refers back to a block that contains it")
                .resource(start)
                .hint("a value cannot include the block it belongs to; refer to one of its members instead"),
        )
    }

    /// Sends the value of resource `s` to `sink`.
    pub(crate) fn emit_slot(&mut self, s: SlotId, depth: usize, sink: &mut dyn Sink) -> R<()> {
        self.materializing_slots.push(s);
        let r = self.emit_slot_inner(s, depth, sink);
        self.materializing_slots.pop();
        r
    }

    fn emit_slot_inner(&mut self, s: SlotId, depth: usize, sink: &mut dyn Sink) -> R<()> {
        let v = self.force(s)?;
        let at = self.slot_site(s);
        if v.is_undef() {
            return Err(self.undefined_error(s));
        }
        self.emit(&v, depth, at, sink).map_err(|mut e| {
            if let ErrorKind::UndefinedElement(path) =
                std::mem::replace(&mut e.kind, ErrorKind::Other)
            {
                if let Some(element) = self.written_element(s, &path) {
                    e.diag.span = Some(element);
                    e.diag.label = "undefined here".into();
                }
            }
            if e.diag.resource.is_none() {
                e.diag.resource = Some(self.slot_path(s));
            }
            e
        })
    }

    /// Where the element at `path` (indices into nested lists) of resource `s`'s list is
    /// written, when the list is written out as a literal — also as a branch of an `if`
    /// (`if (c) then [2, ?]`) or selected from a literal list (`[[1, ?]].0`): by the
    /// resource's only definition, where one place can be it, or, among several places (a
    /// host's `L => [a, ?]` over an aspect's `L => [a]`, two branches), by the one place
    /// whose element there is written `?`. A list computed has no such place.
    fn written_element(&self, s: SlotId, path: &[usize]) -> Option<Span> {
        let mut places: Vec<&cf2_syntax::ast::Expr> = Vec::new();
        for d in &self.slot(s).defs {
            if let Body::Expr(expr, _) = &self.def(*d).body {
                list_elements_at(expr, path.iter().copied().collect(), &mut places);
            }
        }
        if let [only] = places.as_slice() {
            return Some(only.span);
        }
        let mut written = places.iter().filter(|e| matches!(e.kind, ExprKind::Undef));
        match (written.next(), written.next()) {
            (Some(only), None) => Some(only.span),
            _ => None,
        }
    }

    pub(crate) fn slot_site(&self, s: SlotId) -> Span {
        self.slot(s)
            .defs
            .first()
            .map(|d| self.shown_site(*d))
            .unwrap_or_default()
    }

    /// A resource with no value reached the output (clarifications §5).
    pub(crate) fn undefined_error(&self, s: SlotId) -> EvalError {
        let path = self.slot_path(s);
        if let Some((name, site)) = self.undefined_by_function.get(&s) {
            // The definitions gave values; the function combining them gave none.
            return EvalError::new(
                Diagnostic::error(format!(
                    "`{path}` is undefined: the mutation function `{name}` gave no value"
                ))
                .resource(path.to_string())
                .at(*site)
                .with_label(format!("`{name}` combined the values into none here"))
                .hint(format!(
                    "a `nil` result is undefined: make `mutate` in `{name}` return the combined value"
                )),
            );
        }
        let mut declared = false;
        let mut match_note = false;
        let mut d = Diagnostic::error(format!(
            "`{path}` is undefined: no definition gives it a value"
        ))
        .resource(path.to_string());
        let mut first = true;
        for def in &self.slot(s).defs {
            let def = self.def(*def);
            let kind = match &def.body {
                Body::Expr(e, _) => Some(&e.kind),
                _ => None,
            };
            let what = match kind {
                Some(ExprKind::Undef) => {
                    declared = true;
                    "declared undefined with `?` here".to_string()
                }
                Some(ExprKind::If(i)) => {
                    // `match(n)` of a group that took no part is undefined, though the
                    // branch was taken: say so rather than suggest the condition failed.
                    let is_match = |e: &cf2_syntax::ast::Expr| matches!(&e.kind, ExprKind::Call(c) if c.name.name.eq_ignore_ascii_case("match"));
                    if is_match(&i.then) || i.otherwise.as_deref().is_some_and(is_match) {
                        match_note = true;
                    }
                    match i.otherwise {
                        None => "this `if` gives no value: its condition is false and it has no `else`, or its branch gives none".to_string(),
                        Some(_) => "this `if` gives no value: the branch taken gives none".to_string(),
                    }
                }
                // Name what is referred to, so that it can be looked up.
                Some(ExprKind::Ref(id)) => format!("`${}` has no value", id.name),
                Some(ExprKind::Select(..)) => {
                    "this refers to a resource that has no value".to_string()
                }
                _ => "this gives no value".to_string(),
            };
            if first {
                d = d.at(def.site).with_label(what);
                first = false;
            } else {
                d = d.also(def.site, what);
            }
        }
        if match_note {
            d = d.note("`match(n)` is undefined where group n took no part in the match (an optional group, or one in an alternative not taken)");
        }
        if declared {
            d = d.hint(match self.replaced_block_of(s) {
                // `S => { X => ? }` over a lower `S.X => 3`: the value is there, but the
                // `=>` replaced the block whole.
                Some(owner) => format!(
                    "`?` means the value must be supplied elsewhere, but `{owner} => {{ ... }}` replaces the whole block `{owner}`, members that other files give included: merge instead, `{owner} ~> {{ ... }}`, to keep them"
                ),
                None => format!(
                    "`?` means the value must be supplied elsewhere: define `{path}` in a file that imports this one, or in an imported file"
                ),
            });
        }
        EvalError::new(d)
    }

    /// For member `s` of a block written with `=>` for a resource that another file also
    /// defines (where the missing value may well be), that resource's path.
    fn replaced_block_of(&self, s: SlotId) -> Option<String> {
        let Place::Of(owner) = self.block(self.slot(s).parent).place else {
            return None;
        };
        let defs = &self.slot(owner).defs;
        let assigned = defs.iter().find(|&&d| {
            let def = self.def(d);
            matches!(def.op, Op::Assign)
                && matches!(&def.body, Body::Expr(e, _) if matches!(e.kind, ExprKind::Block(_)))
        })?;
        let file = self.def(*assigned).file;
        defs.iter()
            .any(|&d| self.def(d).file != file)
            .then(|| self.slot_path(owner).to_string())
    }

    /// Deep equality: the same kind of value with the same content (text compares by its
    /// characters whatever its quotes; numbers numerically).
    pub(crate) fn equal(&mut self, a: &Val, b: &Val, at: Span) -> R<bool> {
        deep(|| self.equal_inner(a, b, at))
    }

    /// Two errors met together, reported in the order of where they are (file name,
    /// then place), not of which was met first.
    pub(crate) fn both_errors(&self, a: EvalError, b: EvalError) -> EvalError {
        let place = |e: &EvalError| e.diag.span.map(|s| self.text_order(s));
        let (mut first, second) = if place(&b) < place(&a) {
            (b, a)
        } else {
            (a, b)
        };
        first.absorb(second, crate::MAX_ERRORS);
        first
    }

    /// Whether `a` and `b` could be equal, judged without evaluating anything inside
    /// them: the same kind, for blocks the same member names, for lists the same length
    /// (`equal` then compares what they hold).
    pub(crate) fn same_shape(&mut self, a: &Val, b: &Val, at: Span) -> R<bool> {
        Ok(match (a.plain(), b.plain()) {
            (Val::Block(x), Val::Block(y)) => self.paired_members(*x, *y, at)?.is_some(),
            (Val::List(x), Val::List(y)) => x.items.len() == y.items.len(),
            (Val::Lit(_) | Val::Str(_), Val::Lit(_) | Val::Str(_)) => true,
            (x, y) => std::mem::discriminant(x) == std::mem::discriminant(y),
        })
    }

    /// The members of blocks `x` and `y` paired by name, in the order of the names, if
    /// both have the same names.
    fn paired_members(
        &mut self,
        x: BlockId,
        y: BlockId,
        at: Span,
    ) -> R<Option<Vec<(SlotId, SlotId)>>> {
        let xm = self.members_by_name(x, at)?;
        let ym = self.members_by_name(y, at)?;
        if xm.len() != ym.len() || xm.iter().zip(&ym).any(|((p, _), (q, _))| p != q) {
            return Ok(None);
        }
        Ok(Some(
            xm.into_iter()
                .zip(ym)
                .map(|((_, p), (_, q))| (p, q))
                .collect(),
        ))
    }

    fn equal_inner(&mut self, a: &Val, b: &Val, at: Span) -> R<bool> {
        Ok(match (a, b) {
            (Val::Secret(x), _) => return self.equal_inner(&x.value, b, at),
            (_, Val::Secret(y)) => return self.equal_inner(a, &y.value, at),
            (Val::Undef, Val::Undef) => true,
            (Val::Lit(x) | Val::Str(x), Val::Lit(y) | Val::Str(y)) => x == y,
            (Val::Num(x), Val::Num(y)) => x == y,
            (Val::Bool(x), Val::Bool(y)) => x == y,
            (Val::Regex(x), Val::Regex(y)) => x == y,
            (Val::List(x), Val::List(y)) => {
                if x.items.len() != y.items.len() {
                    return Ok(false);
                }
                for (p, q) in x.items.iter().zip(y.items.iter()) {
                    if !self.equal(p, q, at)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Val::Block(x), Val::Block(y)) => {
                let (x, y) = (*x, *y);
                self.hiding_selected(&[x, y], at, "compared", |ev| ev.equal_blocks(x, y, at))?
            }
            _ => false,
        })
    }

    /// Runs `f`, which reads the members of `blocks`: where one of them was picked by a
    /// secret selector (`Evaluator::selected_in_secret`), it is a reading of that pick
    /// ([`Evaluator::reading_pick`]: what it shows hidden, an error told as "cannot be
    /// `done`"): outputting it, or comparing it by `~(union)>`, `~(remove)>` or as
    /// unordered values, would name the member and its place, and so what was picked.
    pub(crate) fn hiding_selected<T>(
        &mut self,
        blocks: &[BlockId],
        at: Span,
        done: &str,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        match blocks.iter().find_map(|b| self.picked_origin(b)) {
            None => f(self),
            Some(origin) => self.reading_pick(&origin, at, done, f),
        }
    }

    fn equal_blocks(&mut self, x: BlockId, y: BlockId, at: Span) -> R<bool> {
        if x == y {
            return Ok(true);
        }
        // The names first, then the values, by name: whether the blocks differ, and
        // which member's error is reported when a compared value fails, do not
        // depend on the order the members were written in (reference §4.1).
        let Some(pairs) = self.paired_members(x, y, at)? else {
            return Ok(false);
        };
        // A member that fails to evaluate is reported only if no other member
        // shows the blocks differ: the difference, a conflict, is the cause to name
        // whichever member comes first.
        let mut failed = None;
        for (xs, ys) in pairs {
            // Both sides, so that where both fail, both are reported, whichever
            // block was written first.
            let same = match (self.force(xs), self.force(ys)) {
                (Ok(xv), Ok(yv)) => self.equal(&xv, &yv, at),
                (Err(e), Err(other)) => Err(self.both_errors(e, other)),
                (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
            };
            match same {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }

    /// The order of the forms of two equal values (an integer before a float, a literal
    /// before a string, list elements in turn, block members by name), so that the choice
    /// between equal unordered definitions never depends on the order they are read in
    /// (reference §4.1). With `settle_order`, blocks of the same forms in another member
    /// order are ordered by their member names in turn, so that two values compare equal
    /// only when they are written alike.
    pub(crate) fn form_cmp(
        &mut self,
        a: &Val,
        b: &Val,
        settle_order: bool,
        at: Span,
    ) -> R<std::cmp::Ordering> {
        self.structural_cmp(a, b, by_form, settle_order, at)
    }

    /// An order of values that goes into lists (element by element, then by length) and
    /// blocks (by their member names, sorted, then their values in the order of the
    /// names; with `settle_order`, then by the names in member order), and orders any
    /// other pair, secrets by what they hold, with `leaf`.
    pub(crate) fn structural_cmp(
        &mut self,
        a: &Val,
        b: &Val,
        leaf: fn(&Val, &Val) -> std::cmp::Ordering,
        settle_order: bool,
        at: Span,
    ) -> R<std::cmp::Ordering> {
        deep(|| self.structural_cmp_inner(a, b, leaf, settle_order, at))
    }

    fn structural_cmp_inner(
        &mut self,
        a: &Val,
        b: &Val,
        leaf: fn(&Val, &Val) -> std::cmp::Ordering,
        settle_order: bool,
        at: Span,
    ) -> R<std::cmp::Ordering> {
        use std::cmp::Ordering;
        Ok(match (a, b) {
            (Val::Secret(x), _) => {
                return self.structural_cmp_inner(&x.value, b, leaf, settle_order, at)
            }
            (_, Val::Secret(y)) => {
                return self.structural_cmp_inner(a, &y.value, leaf, settle_order, at)
            }
            (Val::List(x), Val::List(y)) => {
                for (p, q) in x.items.iter().zip(y.items.iter()) {
                    let c = self.structural_cmp(p, q, leaf, settle_order, at)?;
                    if c != Ordering::Equal {
                        return Ok(c);
                    }
                }
                x.items.len().cmp(&y.items.len())
            }
            (Val::Block(x), Val::Block(y)) => {
                let (x, y) = (*x, *y);
                return self.hiding_selected(&[x, y], at, "compared", |ev| {
                    ev.cmp_blocks(x, y, leaf, settle_order, at)
                });
            }
            _ => leaf(a, b),
        })
    }

    /// [`Evaluator::structural_cmp`] of two blocks.
    fn cmp_blocks(
        &mut self,
        x: BlockId,
        y: BlockId,
        leaf: fn(&Val, &Val) -> std::cmp::Ordering,
        settle_order: bool,
        at: Span,
    ) -> R<std::cmp::Ordering> {
        use std::cmp::Ordering;
        if x == y {
            return Ok(Ordering::Equal);
        }
        // By name, not in member order: the order must not depend on the order in
        // which each block lists its members.
        let (xm, ym) = (self.members_by_name(x, at)?, self.members_by_name(y, at)?);
        let names = xm
            .iter()
            .map(|(n, _)| &**n)
            .cmp(ym.iter().map(|(n, _)| &**n));
        if names != Ordering::Equal {
            return Ok(names);
        }
        for ((_, xs), (_, ys)) in xm.iter().zip(ym.iter()) {
            let xv = self.force(*xs)?;
            let yv = self.force(*ys)?;
            let c = self.structural_cmp(&xv, &yv, leaf, settle_order, at)?;
            if c != Ordering::Equal {
                return Ok(c);
            }
        }
        if !settle_order {
            return Ok(Ordering::Equal);
        }
        // The same content in another member order: the order of the names settles
        // it, so that which was read first does not.
        let (xm, ym) = (self.members(x, at)?, self.members(y, at)?);
        Ok(xm
            .iter()
            .map(|(n, _)| &**n)
            .cmp(ym.iter().map(|(n, _)| &**n)))
    }
}

/// Values ordered by their form alone (see [`Evaluator::form_cmp`]).
fn by_form(a: &Val, b: &Val) -> std::cmp::Ordering {
    crate::val::kind_rank(a).cmp(&crate::val::kind_rank(b))
}

fn finished(built: Builder, at: Span) -> R<Value> {
    built.finish().ok_or_else(|| {
        EvalError::new(Diagnostic::error("internal error: a value was left unfinished").at(at))
    })
}

/// The expressions that can be the element at `path` (indices into nested lists) of the
/// value `expr` writes: through list literals, both branches of an `if`, and a literal
/// list selected by a written index. `path` grows by one index per selector walked
/// through; a deep nest of `then` branches recurses on a grown stack (`deep`).
fn list_elements_at<'e>(
    expr: &'e cf2_syntax::ast::Expr,
    mut path: std::collections::VecDeque<usize>,
    found: &mut Vec<&'e cf2_syntax::ast::Expr>,
) {
    use cf2_value::Number;
    let mut expr = expr;
    loop {
        match &expr.kind {
            ExprKind::List(items) if !path.is_empty() => {
                let Some(item) = path.pop_front().and_then(|i| items.get(i)) else {
                    return;
                };
                expr = item;
            }
            _ if path.is_empty() => {
                found.push(expr);
                return;
            }
            ExprKind::If(cond) => {
                deep(|| list_elements_at(&cond.then, path.clone(), found));
                match &cond.otherwise {
                    Some(otherwise) => expr = otherwise,
                    None => return,
                }
            }
            ExprKind::Select(base, selector) => {
                let ExprKind::Number(Number::Int(i)) = selector.kind else {
                    return;
                };
                let Ok(i) = usize::try_from(i) else { return };
                path.push_front(i);
                expr = base;
            }
            _ => return,
        }
    }
}
