//! The operators of Figure 1 with their types (docs/semantics.md §"Operators").
//!
//! - `||` `&&` `!`: booleans only (`'true' || 'false'` is an error, §3.1); `||` and `&&`
//!   do not evaluate their right side when the left decides.
//! - comparisons: numeric when both sides are numbers (or one is a number and the other
//!   text that spells one), lexical when both are text; `==`/`!=` also compare booleans
//!   and regexes.
//! - `=~` `!~`: text (or a number, as its decimal text) against a regex.
//! - `++`: two scalars as text; the result is a string if either side is one.
//! - `+ - * /` and unary `-`: numbers, or text that spells a number (clarifications §7).

use crate::error::{EvalError, R};
use crate::eval::Evaluator;
use crate::model::ScopeId;
use crate::secret::{mark, secret_origin};
use crate::val::Val;
use cf2_syntax::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use cf2_syntax::{Diagnostic, Span};
use cf2_value::Number;
use std::cmp::Ordering;
use std::rc::Rc;

fn type_error(op: &str, side: &str, v: &Val, want: &str, at: Span) -> EvalError {
    let mut d = Diagnostic::error(format!(
        "`{op}` needs {want}, but the {side} is {}",
        describe_kind(v)
    ))
    .at(at)
    .with_label(format!("this is {}", v.kind_phrase()));
    // Lists and blocks are combined by mutations, not operators: the habit of `+` or `++`
    // on them (`[a] ++ [b]`, `$Base + { ... }`) from other languages.
    match (op, v) {
        ("+" | "++", Val::List(_)) => {
            d = d.hint(
                "no operator joins lists: write the list whole (`[a, b, c]`), or add to a \
                 resource's list with a mutation, `Hosts ~(append)> [c]`; `join(', ', $L)` \
                 makes text of a list",
            );
        }
        ("+" | "++", Val::Block(_)) => {
            d = d.hint(
                "no operator joins blocks: merge them with `~>` (`Web ~> { Port => 80 }`), or \
                 define the members one by one (`Web.Port => 80`)",
            );
        }
        _ => {}
    }
    // The two habits from other languages that end here (reference §3.1, §3.7).
    match (op, v.text()) {
        ("||" | "&&", Some(t @ ("true" | "false"))) => {
            d = d.hint(format!(
                "'{t}' is text: write the boolean without quotes, `{t}`"
            ));
        }
        // Text that looks like a number is a different mistake (`'+3'`, `'1e3'`).
        ("+", Some(t))
            if t.chars()
                .any(|c| c.is_alphabetic() && !matches!(c, 'e' | 'E' | 'x' | 'X')) =>
        {
            d = d.hint("`+` adds numbers: to join text, use `++` (`$A ++ '.' ++ $B`), or interpolate in a string (`\"${A}.${B}\"`)");
        }
        _ => {}
    }
    EvalError::new(d)
}

pub(crate) fn describe_kind(v: &Val) -> String {
    match v {
        Val::Lit(_) | Val::Str(_) => format!("text {}", v.describe()),
        Val::Num(_) => format!("the number {}", v.describe()),
        Val::Bool(_) => format!("the boolean {}", v.describe()),
        Val::Regex(_) => format!("the regex {}", v.describe()),
        Val::Undef => "undefined".to_string(),
        _ => v.describe(),
    }
}

/// A number, or text that spells one.
pub(crate) fn numeric(v: &Val) -> Option<Number> {
    match v {
        Val::Num(n) => Some(*n),
        Val::Lit(s) | Val::Str(s) => Number::parse_text(s),
        _ => None,
    }
}

/// The text of a scalar, as `++` and interpolation write it.
pub(crate) fn scalar_text(v: &Val) -> Option<String> {
    match v {
        Val::Lit(s) | Val::Str(s) => Some(s.to_string()),
        Val::Num(n) => Some(n.to_text()),
        Val::Bool(b) => Some(b.to_string()),
        Val::Regex(r) => Some(r.to_string()),
        _ => None,
    }
}

/// An order of scalars, `None` where two cannot be compared.
pub(crate) type ScalarOrder = fn(&Val, &Val) -> Option<Ordering>;

/// Why [`extreme_order`] found no order, and which value is to blame.
pub(crate) enum Unordered {
    /// Value `i` is not a number or text.
    NotScalar(usize),
    /// Value `i` is text that is not a number, among numbers.
    Mixed(usize),
}

/// How `max` and `min` (the functions and the mutations) order their values. They see
/// scalars as Perl functions do (reference §6.1: standard functions get plain Perl values),
/// so the order is numeric when every value is a number or text that spells one, and lexical
/// when every value is text; either way it is a total order, so the result does not depend
/// on the order of the values (the mutations are commutative).
pub(crate) fn extreme_order<'v>(
    vals: impl Iterator<Item = &'v Val> + Clone,
) -> Result<ScalarOrder, Unordered> {
    if let Some(i) = vals
        .clone()
        .position(|v| !matches!(v, Val::Num(_) | Val::Lit(_) | Val::Str(_)))
    {
        return Err(Unordered::NotScalar(i));
    }
    if vals.clone().all(|v| numeric(v).is_some()) {
        return Ok(|a, b| numeric(a)?.compare(numeric(b)?));
    }
    if vals.clone().all(|v| v.text().is_some()) {
        return Ok(|a, b| Some(a.text()?.cmp(b.text()?)));
    }
    // Numbers among text: the text that is not a number is blamed.
    Err(Unordered::Mixed(
        vals.clone().position(|v| numeric(v).is_none()).unwrap_or(0),
    ))
}

/// Orders two scalars as the comparison operators do; `None` if they cannot be compared.
pub(crate) fn compare_scalars(a: &Val, b: &Val) -> Option<Ordering> {
    match (a, b) {
        (Val::Num(x), Val::Num(y)) => x.compare(*y),
        (Val::Lit(x) | Val::Str(x), Val::Lit(y) | Val::Str(y)) => Some(x.cmp(y)),
        (Val::Num(x), t @ (Val::Lit(_) | Val::Str(_))) => numeric(t).and_then(|y| x.compare(y)),
        (t @ (Val::Lit(_) | Val::Str(_)), Val::Num(y)) => numeric(t).and_then(|x| x.compare(*y)),
        _ => None,
    }
}

impl<'a> Evaluator<'a> {
    pub(crate) fn unary(&mut self, op: UnaryOp, v: Val, at: Span, arg_at: Span) -> R<Val> {
        // A secret operand gives a secret result; errors describe it redacted.
        let origin = secret_origin([&v]);
        let r = match op {
            UnaryOp::Not => match v.plain() {
                Val::Bool(b) => Ok(Val::Bool(!b)),
                _ => Err(type_error("!", "operand", &v, "a boolean", arg_at)),
            },
            UnaryOp::Neg => match numeric(v.plain()) {
                Some(n) => n.checked_neg().map(Val::Num).ok_or_else(|| overflow(at)),
                None => Err(type_error("-", "operand", &v, "a number", arg_at)),
            },
        };
        secret_if(r, origin)
    }

    pub(crate) fn binary(
        &mut self,
        op: BinaryOp,
        l: &'a Expr,
        r: &'a Expr,
        sc: ScopeId,
        at: Span,
    ) -> R<Val> {
        let sym = op.symbol();
        // The boolean operators decide on the left side when they can.
        if let BinaryOp::Or | BinaryOp::And = op {
            let lv = self.eval(l, sc)?;
            let Val::Bool(lb) = *lv.plain() else {
                return Err(type_error(sym, "left side", &lv, "booleans", l.span));
            };
            if (op == BinaryOp::Or && lb) || (op == BinaryOp::And && !lb) {
                return secret_if(Ok(Val::Bool(lb)), secret_origin([&lv]));
            }
            let rv = self.eval(r, sc)?;
            let origin = secret_origin([&lv, &rv]);
            return match *rv.plain() {
                Val::Bool(rb) => secret_if(Ok(Val::Bool(rb)), origin),
                _ => Err(type_error(sym, "right side", &rv, "booleans", r.span)),
            };
        }
        let lv = self.eval(l, sc)?;
        let rv = self.eval(r, sc)?;
        let origin = secret_origin([&lv, &rv]);
        let result = self
            .binary_values(op, &lv, &rv, l.span, r.span, at, origin.clone())
            .map_err(|e| self.value_origin(e, [l, r], sc));
        // A list holding a block a secret selector picked (a `~(union)>` of it): its length
        // says whether the pick matched another element, so the error says no more.
        let picked = match &result {
            Err(_) => self
                .selected_origin_in(&lv)
                .or_else(|| self.selected_origin_in(&rv)),
            Ok(_) => None,
        };
        if let (Some(picked), Err(e)) = (picked, &result) {
            let shown = crate::val::redacted(&picked, true);
            return Err(e.clone().told_as(
                Diagnostic::error(format!(
                    "`{sym}` cannot be applied to a value holding what {shown} selected"
                ))
                .at(at)
                .note("the details are not shown, because the selector is a secret"),
            ));
        }
        secret_if(result, origin)
    }

    /// A wrong value read with `$X`, where `X` is given in another file: show that
    /// definition too, since it is likely the one to fix (`Memory => '8G'` in a base, read by
    /// an aspect's `$Memory / 2`). Only for a resource with one definition: otherwise which
    /// gave the value is the fold's business (`-Deval` shows it).
    fn value_origin(&self, mut e: EvalError, sides: [&Expr; 2], sc: ScopeId) -> EvalError {
        let Some(at) = e.diag.span else { return e };
        let Some(ExprKind::Ref(id)) = sides.iter().find(|x| x.span == at).map(|x| &x.kind) else {
            return e;
        };
        if let Some(site) = self.sole_definition(&id.name, sc) {
            if site.file != at.file {
                e.diag.labels.push(cf2_syntax::diagnostic::Label {
                    span: site,
                    message: format!("`{}` gets its value here", id.name),
                });
            }
        }
        e
    }

    /// Where the resource a reference `$name` reads in scope `sc` is defined, if it has
    /// one definition (with several, which gave the value is the fold's business) and the
    /// name is no macro parameter: for messages that point at the value's source too.
    pub(crate) fn sole_definition(&self, name: &str, sc: ScopeId) -> Option<Span> {
        let param = self
            .scope(sc)
            .params
            .as_ref()
            .is_some_and(|p| p.iter().any(|(n, _)| **n == *name));
        if param {
            return None;
        }
        let slot = *self.block(self.scope_root(sc)).members.get(name)?;
        match self.slot(slot).defs.as_slice() {
            [def] => Some(self.def(*def).site),
            _ => None,
        }
    }

    /// `64-bit`, written without spaces, reads as 64 minus `bit`: the text as written, to
    /// suggest quoting it.
    fn digit_first_text(&self, lv: &Val, rv: &Val, l_at: Span, r_at: Span) -> Option<String> {
        let adjacent = l_at.file == r_at.file && l_at.end.checked_add(1) == Some(r_at.start);
        (adjacent && matches!((lv, rv), (Val::Num(_), Val::Lit(_)))).then(|| {
            self.source_text(Span {
                end: r_at.end,
                ..l_at
            })
        })
    }

    /// `lv OP rv` for the operators that evaluate both sides. Computes with the values
    /// inside secrets; messages describe the operands as they are (secrets redacted).
    #[allow(clippy::too_many_arguments)]
    fn binary_values(
        &mut self,
        op: BinaryOp,
        lv: &Val,
        rv: &Val,
        l_at: Span,
        r_at: Span,
        at: Span,
        origin: Option<Rc<str>>,
    ) -> R<Val> {
        let sym = op.symbol();
        let (a, b) = (lv.plain(), rv.plain());
        match op {
            BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::Eq
            | BinaryOp::Ne => self.comparison(op, lv, rv, l_at, r_at, at),
            BinaryOp::Match | BinaryOp::NotMatch => {
                let text = match a {
                    Val::Lit(s) | Val::Str(s) => s.to_string(),
                    Val::Num(n) => n.to_text(),
                    _ => return Err(type_error(sym, "left side", lv, "text", l_at)),
                };
                let Val::Regex(pattern) = b else {
                    return Err(type_error(sym, "right side", rv, "a regex (`/.../`)", r_at));
                };
                let pattern = pattern.clone();
                // A matching that is given up shows the pattern, unless it is a secret, and
                // what it found in the text, unless that is.
                let hidden = crate::expr::HiddenMatch {
                    pattern: match rv {
                        Val::Secret(s) => Some(crate::val::redacted(&s.origin, s.derived)),
                        _ => None,
                    },
                    text: matches!(lv, Val::Secret(_)),
                };
                // Captures of a secret text (or made with a secret regex) are secret.
                let saved = std::mem::replace(&mut self.match_secret, origin);
                let matched = self.regex_match(op, &text, &pattern, r_at, &hidden);
                self.match_secret = saved;
                Ok(Val::Bool(matched?))
            }
            BinaryOp::Concat => {
                let Some(x) = scalar_text(a) else {
                    return Err(type_error(sym, "left side", lv, "scalars", l_at));
                };
                let Some(y) = scalar_text(b) else {
                    return Err(type_error(sym, "right side", rv, "scalars", r_at));
                };
                let len = x.len().saturating_add(y.len());
                if len > MAX_TEXT_BYTES {
                    return Err(text_too_long(len, at, "`++`"));
                }
                let joined: Rc<str> = Rc::from(format!("{x}{y}"));
                if matches!(a, Val::Str(_)) || matches!(b, Val::Str(_)) {
                    Ok(Val::Str(joined))
                } else {
                    Ok(Val::Lit(joined))
                }
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => {
                let Some(x) = numeric(a) else {
                    return Err(type_error(sym, "left side", lv, "numbers", l_at));
                };
                let Some(y) = numeric(b) else {
                    let mut e = type_error(sym, "right side", rv, "numbers", r_at);
                    if op == BinaryOp::Sub {
                        if let Some(text) = self.digit_first_text(lv, rv, l_at, r_at) {
                            e.diag.hint = Some(format!(
                                "text that starts with a digit must be quoted: `'{text}'`"
                            ));
                        }
                    }
                    return Err(e);
                };
                let result = match op {
                    BinaryOp::Add => x.checked_add(y),
                    BinaryOp::Sub => x.checked_sub(y),
                    BinaryOp::Mul => x.checked_mul(y),
                    _ => {
                        if y.as_f64() == 0.0 {
                            // "Division by zero" would tell a secret divisor's value.
                            if matches!(rv, Val::Secret(_)) {
                                return Err(EvalError::new(
                                    Diagnostic::error(
                                        "`/` failed: the details are not shown, because the \
                                         right side is a secret",
                                    )
                                    .at(r_at)
                                    .with_label(format!("this is {}", rv.describe())),
                                ));
                            }
                            return Err(EvalError::new(
                                Diagnostic::error("division by zero")
                                    .at(r_at)
                                    .with_label("this is zero"),
                            ));
                        }
                        x.checked_div(y)
                    }
                };
                result.map(Val::Num).ok_or_else(|| {
                    // "Out of range" would tell a secret operand's size.
                    match [(lv, l_at), (rv, r_at)]
                        .into_iter()
                        .find(|(v, _)| matches!(v, Val::Secret(_)))
                    {
                        Some((secret, secret_at)) => EvalError::new(
                            Diagnostic::error(format!(
                                "`{sym}` failed: the details are not shown, because an operand \
                                 is a secret"
                            ))
                            .at(secret_at)
                            .with_label(format!("this is {}", secret.describe())),
                        ),
                        None => overflow(at),
                    }
                })
            }
            BinaryOp::Or | BinaryOp::And => Ok(Val::Undef),
        }
    }

    fn comparison(
        &mut self,
        op: BinaryOp,
        lv: &Val,
        rv: &Val,
        l_at: Span,
        r_at: Span,
        at: Span,
    ) -> R<Val> {
        let sym = op.symbol();
        let (shown_l, shown_r) = (lv, rv);
        let (lv, rv) = (lv.plain(), rv.plain());
        if let BinaryOp::Eq | BinaryOp::Ne = op {
            let same = match (lv, rv) {
                (Val::Bool(a), Val::Bool(b)) => Some(a == b),
                (Val::Regex(a), Val::Regex(b)) => Some(a == b),
                // A number and text that does not spell a number are simply unequal
                // (Figure 1: `==` takes scalars), so `$V == latest` works for any `V`.
                (Val::Num(_), t @ (Val::Lit(_) | Val::Str(_)))
                | (t @ (Val::Lit(_) | Val::Str(_)), Val::Num(_))
                    if numeric(t).is_none() =>
                {
                    Some(false)
                }
                _ => compare_scalars(lv, rv).map(|o| o == Ordering::Equal),
            };
            if let Some(same) = same {
                return Ok(Val::Bool(if op == BinaryOp::Eq { same } else { !same }));
            }
        } else if let Some(ord) = compare_scalars(lv, rv) {
            let b = match op {
                BinaryOp::Lt => ord == Ordering::Less,
                BinaryOp::Le => ord != Ordering::Greater,
                BinaryOp::Gt => ord == Ordering::Greater,
                _ => ord != Ordering::Less,
            };
            return Ok(Val::Bool(b));
        }
        let scalar = |v: &Val| {
            matches!(
                v,
                Val::Lit(_) | Val::Str(_) | Val::Num(_) | Val::Bool(_) | Val::Regex(_)
            )
        };
        if !scalar(lv) {
            return Err(type_error(sym, "left side", shown_l, "scalars", l_at));
        }
        if !scalar(rv) {
            return Err(type_error(sym, "right side", shown_r, "scalars", r_at));
        }
        Err(EvalError::new(
            Diagnostic::error(format!(
                "`{sym}` cannot compare {} with {}",
                describe_kind(shown_l),
                describe_kind(shown_r)
            ))
            .at(at)
            .hint("compare numbers with numbers and text with text (`==` also compares two booleans or two regexes)"),
        ))
    }
}

/// A result computed from a secret is secret.
fn secret_if(r: R<Val>, origin: Option<Rc<str>>) -> R<Val> {
    match origin {
        Some(o) => r.map(|v| mark(v, &o)),
        None => r,
    }
}

pub(crate) fn overflow(at: Span) -> EvalError {
    EvalError::new(
        Diagnostic::error("number out of range: the result does not fit")
            .at(at)
            .note("integers are 64-bit; decimals are 64-bit floating point"),
    )
}

/// The longest text a computation may make (64 MiB): a text that doubles at each step
/// (`def d(x) = $x ++ $x`, applied 40 times) is an error at the step that passes it, not
/// an exhausted memory.
pub(crate) const MAX_TEXT_BYTES: usize = 64 << 20;

/// Text of `len` bytes made by `what` at `at` is longer than [`MAX_TEXT_BYTES`].
pub(crate) fn text_too_long(len: usize, at: Span, what: &str) -> EvalError {
    EvalError::new(
        Diagnostic::error(format!(
            "{what} would make a text of {len} bytes, more than cf2 allows ({} MiB)",
            MAX_TEXT_BYTES >> 20
        ))
        .at(at)
        .with_label("the text grows too long here")
        .hint(
            "a value used twice at each step doubles: look for a definition that repeats its input",
        ),
    )
}
