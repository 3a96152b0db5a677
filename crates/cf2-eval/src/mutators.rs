//! Mutation functions: `X ~(name)> value` (reference §4.3; docs/semantics.md §"Mutation
//! functions"). A mutation function combines the *top* values of a resource (those no other
//! definition outranks) with the value folded from everything below them.
//!
//! | name | values | result | commutative |
//! |---|---|---|---|
//! | `max`, `min` | scalars | the largest / smallest | yes |
//! | `sum` | numbers | the total | yes |
//! | `union` | lists | every element once, sorted | yes |
//! | `remove` | lists | the list below without the given elements | yes |
//! | `append` | lists | the list below, then the top list | no |
//! | `prepend` | lists | the top list, then the list below | no |
//!
//! `default` and `final` are not combining functions: the fold itself gives them their
//! meaning (see [`crate::fold`]).
//!
//! Any other name goes to the custom functions ([`crate::external`]): one that defines a
//! mutation function combines the values the same way, commutative or not as it declares.

use crate::error::{EvalError, R};
use crate::eval::Evaluator;
use crate::model::{Body, DefId, Op, SlotId};
use crate::ops::{numeric, Unordered};
use crate::val::Val;
use cf2_syntax::{Diagnostic, Span};
use cf2_value::Number;
use std::cmp::Ordering;

pub const STANDARD_MUTATORS: &[&str] = &[
    "max", "min", "sum", "union", "remove", "append", "prepend", "default", "final",
];

/// A mutation function's name in lower case (names are case-insensitive): a standard
/// mutator's name without allocating, any other name lower-cased.
pub(crate) fn lower_name(name: &str) -> std::borrow::Cow<'static, str> {
    match STANDARD_MUTATORS
        .iter()
        .find(|m| m.eq_ignore_ascii_case(name))
    {
        Some(m) => std::borrow::Cow::Borrowed(m),
        None => std::borrow::Cow::Owned(name.to_lowercase()),
    }
}

/// Names other languages (or other configuration tools) give what a mutation does, with
/// the mutation to write instead: a hint where "did you mean" finds nothing close.
const FROM_OTHER_LANGUAGES: &[(&str, &str)] = &[
    ("add", "`~(sum)>`"),
    ("plus", "`~(sum)>`"),
    ("total", "`~(sum)>`"),
    ("merge", "`~>` (blocks merge member by member)"),
    ("deep_merge", "`~>` (blocks merge member by member)"),
    ("deepmerge", "`~>` (blocks merge member by member)"),
    ("override", "`=>` (the importing file's value wins)"),
    ("replace", "`=>` (the importing file's value wins)"),
    ("set", "`=>` (the importing file's value wins)"),
    ("assign", "`=>` (the importing file's value wins)"),
    ("push", "`~(append)>`"),
    ("extend", "`~(append)>`"),
    ("concat", "`~(append)>`"),
    ("unshift", "`~(prepend)>`"),
    ("unique", "`~(union)>`"),
    ("uniq", "`~(union)>`"),
    ("distinct", "`~(union)>`"),
    ("dedup", "`~(union)>`"),
    ("delete", "`~(remove)>`"),
    ("del", "`~(remove)>`"),
    ("minus", "`~(remove)>`"),
    ("subtract", "`~(remove)>`"),
    ("exclude", "`~(remove)>`"),
    ("maximum", "`~(max)>`"),
    ("highest", "`~(max)>`"),
    ("minimum", "`~(min)>`"),
    ("lowest", "`~(min)>`"),
    ("fallback", "`~(default)>`"),
    // LCFG's mutation macros.
    ("mset", "`=>`"),
    ("madd", "`~(append)>`"),
    ("mremove", "`~(remove)>`"),
    ("mextra", "`~(union)>`"),
];

fn commutative(name: &str) -> Option<bool> {
    match name {
        "max" | "min" | "sum" | "union" | "remove" => Some(true),
        "append" | "prepend" => Some(false),
        _ => None,
    }
}

impl<'a> Evaluator<'a> {
    fn unknown_mutator(&self, name: &str, at: Span) -> EvalError {
        if crate::functions::STANDARD.contains(&name) {
            // A standard function that is not a mutation function: saying "unknown" would
            // send the reader looking for a missing module.
            return EvalError::new(
                Diagnostic::error(format!("`{name}` cannot be used as a mutation function"))
                    .at(at)
                    .with_label("used here")
                    .note(format!(
                        "`{name}` is a standard function; the standard mutation functions are {}",
                        crate::functions::listed(STANDARD_MUTATORS)
                    ))
                    .hint(format!("call it as a function instead: `X => {name}(...)`")),
            );
        }
        let mut d = Diagnostic::error(format!("unknown mutation function `{name}`"))
            .at(at)
            .with_label("used here");
        let mut names: Vec<String> = STANDARD_MUTATORS.iter().map(|s| s.to_string()).collect();
        names.extend(self.opts.functions.names());
        if let Some(x) =
            cf2_syntax::diagnostic::did_you_mean(name, names.iter().map(|s| s.as_str()))
        {
            d = d.hint(format!("did you mean `~({x})>`?"));
        } else {
            // Nothing close: the whole list, and what a name from elsewhere is here.
            d = d.note(format!(
                "the standard mutation functions are {}",
                crate::functions::listed(STANDARD_MUTATORS)
            ));
            if let Some(instead) = crate::functions::instead_of(FROM_OTHER_LANGUAGES, name) {
                d = d.hint(format!("for what `{name}` does elsewhere, write {instead}"));
            }
        }
        EvalError::new(d)
    }

    /// The error of a definition among `tops` whose mutation function does not exist or
    /// cannot be loaded: that is the mistake to show, rather than the conflict it makes
    /// (a misspelt `~(unoin)>` beside `~(union)>` is not an ordering problem).
    pub(crate) fn unknown_mutator_among(&self, tops: &[DefId]) -> Option<EvalError> {
        tops.iter().find_map(|d| {
            let def = self.def(*d);
            let Op::Func(id) = def.op else { return None };
            let name = lower_name(&id.name);
            if STANDARD_MUTATORS.contains(&&*name) {
                return None;
            }
            match self.find_external(&name, def.site) {
                Ok(Some(_)) => None,
                // At the name, the mistake, rather than at the whole statement.
                Ok(None) => Some(self.unknown_mutator(&name, id.span)),
                Err(e) => Some(e),
            }
        })
    }

    pub(crate) fn apply_mutator(
        &mut self,
        s: SlotId,
        name: &str,
        tops: &[DefId],
        values: Vec<(DefId, Val)>,
        (below, below_def): (Option<Val>, Option<DefId>),
        site: Option<Span>,
    ) -> R<Val> {
        let at = site.unwrap_or_default();
        let Some(comm) = commutative(name) else {
            let external = self.find_external(name, at)?;
            if let Some(f) = external {
                let Some(m) = f.mutation() else {
                    return Err(EvalError::new(
                        Diagnostic::error(format!(
                            "`{}` cannot be used as a mutation function",
                            f.name()
                        ))
                        .at(at)
                        .with_label("used here")
                        .note(format!(
                            "`{}` ({}) does not define a mutation function",
                            f.name(),
                            f.origin()
                        ))
                        .hint(format!(
                            "call it as a function instead: `{}(...)`",
                            f.name()
                        )),
                    ));
                };
                return self.mutate_external(f, m, s, tops, values, below, at);
            }
            // At the name, the mistake, rather than at the whole statement.
            let name_at = tops
                .iter()
                .find_map(|d| match self.def(*d).op {
                    Op::Func(id) => Some(id.span),
                    _ => None,
                })
                .unwrap_or(at);
            return Err(self.unknown_mutator(name, name_at));
        };
        if !comm && tops.len() > 1 {
            return Err(self.order_error(s, tops));
        }
        // The resource's path is made only for an error: most folds have none.
        // A wrong value below is shown with the mutation applied to it, which is at fault.
        let wrong = |ev: &Evaluator<'a>, d: Option<DefId>, v: &Val, want: &str| {
            let path = ev.slot_path(s);
            let e = Diagnostic::error(format!(
                "`~({name})>` needs {want}, but a value of `{path}` is {}",
                v.describe()
            ))
            .resource(path);
            let below = d.filter(|d| !tops.contains(d));
            let e = match (below, tops.first()) {
                (Some(below), Some(&top)) => e
                    .at(ev.def(top).site)
                    .with_label(format!("`~({name})>` applies to the value below"))
                    .also(
                        ev.def(below).site,
                        format!("the value below is {}", v.describe()),
                    ),
                // At the value, not the whole statement: the statement is fine, its value not.
                _ => match d.map(|d| ev.def(d)) {
                    Some(def) => match def.body {
                        Body::Expr(value, _) => e.at(value.span).with_label("this value"),
                        _ => e.at(def.site),
                    },
                    None => e.at(at),
                },
            };
            // `Packages ~(union)> vim`: one element meant as a list.
            let e = match (want, v) {
                ("a list", Val::Lit(_) | Val::Str(_) | Val::Num(_)) if below.is_none() => e.hint(
                    format!("write a list, even of one element: `[{}]`", v.describe()),
                ),
                _ => e,
            };
            EvalError::new(e)
        };
        let mut all: Vec<(Option<DefId>, Val)> =
            values.into_iter().map(|(d, v)| (Some(d), v)).collect();
        match name {
            "max" | "min" => {
                if let Some(b) = below {
                    all.push((below_def, b));
                }
                let want = if name == "max" {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                let order = match crate::ops::extreme_order(all.iter().map(|(_, v)| v)) {
                    Ok(order) => order,
                    Err(e) => {
                        let (i, want) = match e {
                            Unordered::NotScalar(i) => (i, "numbers or text"),
                            Unordered::Mixed(i) => (i, "values of one kind"),
                        };
                        let (d, v) = all.get(i).cloned().unwrap_or((None, Val::Undef));
                        let mut err = wrong(self, d, &v, want);
                        // Text among numbers (`'50G'` beside `20`): show a number's
                        // definition, since the two kinds are the problem.
                        if let Unordered::Mixed(_) = e {
                            let number = all
                                .iter()
                                .find_map(|(nd, nv)| numeric(nv).is_some().then_some((*nd)?));
                            if let Some(nd) = number {
                                let site = self.def(nd).site;
                                err.diag.labels.push(cf2_syntax::diagnostic::Label {
                                    span: site,
                                    message: "a number is given here".to_string(),
                                });
                            }
                            err.diag.hint = Some(format!(
                                "some of the values are numbers: write {} as a number too (without quotes or a unit)",
                                v.describe()
                            ));
                        }
                        return Err(err);
                    }
                };
                let mut best: Option<Val> = None;
                for (_, v) in all {
                    best = match best {
                        None => Some(v),
                        Some(b) => match order(&v, &b) {
                            Some(o) if o == want => Some(v),
                            // A tie (3 and 3.0, '10' and '010') is settled by kind, then
                            // by text, never by the order of the values.
                            Some(Ordering::Equal) if tie_first(&v, &b) => Some(v),
                            _ => Some(b),
                        },
                    };
                }
                Ok(best.unwrap_or(Val::Undef))
            }
            "sum" => {
                if let Some(b) = below {
                    all.push((below_def, b));
                }
                let mut numbers = Vec::with_capacity(all.len());
                for (d, v) in all {
                    let Some(n) = numeric(&v) else {
                        return Err(wrong(self, d, &v, "numbers"));
                    };
                    numbers.push(n);
                }
                Ok(Val::Num(
                    order_free_sum(numbers).ok_or_else(|| crate::ops::overflow(at))?,
                ))
            }
            _ => {
                let mut lists: Vec<Vec<Val>> = Vec::new();
                for (d, v) in &all {
                    match v {
                        Val::List(l) => lists.push(l.items.clone()),
                        other => return Err(wrong(self, *d, other, "a list")),
                    }
                }
                let base: Vec<Val> = match below {
                    None => Vec::new(),
                    Some(Val::List(l)) => l.items.clone(),
                    Some(other) => return Err(wrong(self, below_def, &other, "a list below it")),
                };
                let result = match name {
                    "union" => {
                        let mut out: Vec<Val> = Vec::new();
                        let mut buckets = Buckets::default();
                        for x in base.into_iter().chain(lists.into_iter().flatten()) {
                            match self.position_in(&out, &buckets, &x, at)? {
                                // Of equal elements in other forms (1 and 1.0, a and "a",
                                // blocks in another member order), the form order keeps one,
                                // not which was seen first.
                                Some(i) => {
                                    if let Some(y) = out.get_mut(i) {
                                        if self.form_cmp(&x, y, true, at)? == Ordering::Less {
                                            *y = x;
                                        }
                                    }
                                }
                                None => {
                                    buckets.add(&x, out.len());
                                    out.push(x);
                                }
                            }
                        }
                        self.sort_union(&mut out, at)?;
                        out
                    }
                    "remove" => {
                        let gone: Vec<Val> = lists.into_iter().flatten().collect();
                        let mut buckets = Buckets::default();
                        for (i, x) in gone.iter().enumerate() {
                            buckets.add(x, i);
                        }
                        let mut out = Vec::new();
                        for x in base {
                            if self.position_in(&gone, &buckets, &x, at)?.is_none() {
                                out.push(x);
                            }
                        }
                        out
                    }
                    "append" => base
                        .into_iter()
                        .chain(lists.into_iter().flatten())
                        .collect(),
                    _ => lists.into_iter().flatten().chain(base).collect(),
                };
                self.list_of(result, at)
            }
        }
    }

    /// Where in `list` an element equal to `x` is, looking only at the elements `buckets`
    /// (made from `list`) puts beside it.
    fn position_in(
        &mut self,
        list: &[Val],
        buckets: &Buckets,
        x: &Val,
        at: Span,
    ) -> R<Option<usize>> {
        for &i in buckets.beside(x) {
            if let Some(y) = list.get(i) {
                if self.equal(y, x, at)? {
                    return Ok(Some(i));
                }
            }
        }
        Ok(None)
    }

    /// Sorts a union's distinct elements by [`Evaluator::union_cmp`]: a total order, so the
    /// result does not depend on the order in which its sources were read.
    fn sort_union(&mut self, out: &mut [Val], at: Span) -> R<()> {
        let mut failed = None;
        out.sort_by(|a, b| match self.union_cmp(a, b, at) {
            Ok(o) => o,
            Err(e) => {
                failed.get_or_insert(e);
                Ordering::Equal
            }
        });
        failed.map_or(Ok(()), Err)
    }

    /// The order of a union's elements: numbers, then text, booleans, regexes, lists and
    /// blocks; each by its content (lists element by element, blocks by their member
    /// names, then their values in the order of the names). Equal values compare equal.
    fn union_cmp(&mut self, a: &Val, b: &Val, at: Span) -> R<Ordering> {
        self.structural_cmp(a, b, union_scalar_cmp, false, at)
    }
}

/// [`Evaluator::union_cmp`] of two values that are not both lists or both blocks.
/// What equal values share, and unequal ones mostly do not: numbers by value (`1` and
/// `1.0`), text by its characters (a literal and a string of it), booleans and regexes
/// apart, secrets as what they wrap; anything else (lists, blocks) in one bucket. Equal values always
/// share a bucket, so a union or a removal of long lists compares each element with its
/// few bucket mates rather than with every element (40,000 packages: 4.9 s before).
#[derive(PartialEq, Eq, Hash)]
enum BucketKey {
    Number(u64),
    Text(std::rc::Rc<str>),
    Bool(bool),
    Regex(std::rc::Rc<str>),
    Other,
}

fn bucket_key(v: &Val) -> BucketKey {
    // A secret compares as the value it wraps.
    match v.plain() {
        // `+ 0.0` makes -0.0 the 0.0 it equals; integers past 2^53 may share a bucket,
        // which only costs a comparison.
        Val::Num(n) => BucketKey::Number((n.as_f64() + 0.0).to_bits()),
        Val::Lit(s) | Val::Str(s) => BucketKey::Text(s.clone()),
        Val::Bool(b) => BucketKey::Bool(*b),
        Val::Regex(r) => BucketKey::Regex(r.clone()),
        _ => BucketKey::Other,
    }
}

/// The positions of a list's elements by [`bucket_key`].
#[derive(Default)]
struct Buckets(std::collections::HashMap<BucketKey, Vec<usize>, foldhash::fast::RandomState>);

impl Buckets {
    fn add(&mut self, v: &Val, i: usize) {
        self.0.entry(bucket_key(v)).or_default().push(i);
    }

    fn beside(&self, v: &Val) -> &[usize] {
        self.0.get(&bucket_key(v)).map_or(&[], Vec::as_slice)
    }
}

fn union_scalar_cmp(a: &Val, b: &Val) -> Ordering {
    fn rank(v: &Val) -> u8 {
        match v {
            Val::Num(_) => 0,
            Val::Lit(_) | Val::Str(_) => 1,
            Val::Bool(_) => 2,
            Val::Regex(_) => 3,
            Val::List(_) => 4,
            Val::Block(_) => 5,
            Val::Undef | Val::Secret(_) => 6,
        }
    }
    match (a, b) {
        (Val::Num(x), Val::Num(y)) => x.compare(*y).unwrap_or(Ordering::Equal),
        (Val::Lit(x) | Val::Str(x), Val::Lit(y) | Val::Str(y)) => x.cmp(y),
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        (Val::Regex(x), Val::Regex(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// The sum of unordered values, the same in every order (reference §4.4): integers
/// exactly (an intermediate total may leave the 64-bit range, the result may not:
/// `9223372036854775807 + 1 - 1`), decimals in increasing order (floating-point addition
/// is not associative: `0.1 + 0.2 + 0.3` and `0.3 + 0.2 + 0.1` differ in the last bit).
/// `None` if the result is out of range.
pub(crate) fn order_free_sum(mut numbers: Vec<Number>) -> Option<Number> {
    let ints: Option<Vec<i64>> = numbers
        .iter()
        .map(|n| match n {
            Number::Int(i) => Some(*i),
            Number::Float(_) => None,
        })
        .collect();
    if let Some(ints) = ints {
        let total = ints
            .iter()
            .try_fold(0i128, |total, &i| total.checked_add(i128::from(i)))?;
        return i64::try_from(total).ok().map(Number::Int);
    }
    numbers.sort_by(|a, b| a.as_f64().total_cmp(&b.as_f64()));
    Number::normalize_float(numbers.iter().map(|n| n.as_f64()).sum())
}

/// Between two values that `max`/`min` find equal, whether `a` is kept rather than `b`: the
/// lower kind rank (an integer before a decimal, a literal before a string), a number
/// before text (`3` and `'3'`), then the smaller text, so the choice does not depend on
/// their order.
pub(crate) fn tie_first(a: &Val, b: &Val) -> bool {
    let is_text = |v: &Val| matches!(v, Val::Lit(_) | Val::Str(_));
    let key = |v: &Val| {
        (
            crate::val::kind_rank(v),
            is_text(v),
            crate::ops::scalar_text(v),
        )
    };
    key(a) < key(b)
}
