//! Secrets (docs/security.md §"Secrets stay secret"): values that came from a KeePass
//! database are [`Val::Secret`]s. They reach the output like the values they wrap, but
//! messages, warnings and `-Deval` traces show them as `‹secret from mydb.kdbx:fred.Password›`.
//!
//! Taint is explicit data flow:
//! - operators (`crate::ops`) and interpolation (`crate::expr`) compute with the wrapped
//!   values and mark their result secret when an operand was; their type errors describe the
//!   operands wrapped, so they stay redacted;
//! - a function call (standard or custom) is a boundary: its arguments are *opened* (the
//!   wrappers removed, each secret noted in a [`Taint`] record) as they are evaluated, and
//!   the result is marked secret if anything was opened. An error or warning the call made
//!   is scrubbed of the texts it opened (`fail("bad ${pw}")`). `typeof()` and `defined()`
//!   read only the kind of a value and need not open it;
//! - mutation functions (`~(max)>` ...) are a boundary in the same way;
//! - a condition reads the boolean inside a secret; the branch taken is not secret (implicit
//!   flow is not tracked, see docs/security.md).
//!
//! Names (entry titles, group names) are never secret: they are the shape of the data.

use crate::error::{EvalError, R};
use crate::eval::{deep, Evaluator};
use crate::model::{BlockId, BlockState, BuildSpec};
use crate::ops::scalar_text;
use crate::val::{escaped_text, make_list, quoted_preview, redacted, Secret, Val};
use cf2_syntax::{Diagnostic, Span};
use std::rc::Rc;

/// The secrets opened while computing something.
#[derive(Clone, Debug)]
pub(crate) struct Taint {
    /// Where the first of them came from (what the computed value is shown as).
    pub origin: Rc<str>,
    /// Their texts, for scrubbing messages.
    pub texts: Vec<Opened>,
}

/// The text of a secret that was opened, whether it was computed from another secret
/// (`"refusing ${pw}"`), and where it came from (what a message shows instead of it).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Opened {
    pub text: String,
    pub derived: bool,
    pub origin: Rc<str>,
}

impl Taint {
    fn add(&mut self, other: &Taint) {
        for t in &other.texts {
            if !self.texts.contains(t) {
                self.texts.push(t.clone());
            }
        }
    }
}

/// A secret computed from one that came from `origin`.
pub(crate) fn mark(v: Val, origin: &Rc<str>) -> Val {
    deep(|| match v {
        Val::Undef | Val::Block(_) | Val::Secret(_) => v,
        Val::List(l) => {
            let items = l.items.iter().map(|x| mark(x.clone(), origin)).collect();
            make_list(items).unwrap_or(Val::List(l))
        }
        scalar => Val::Secret(Rc::new(Secret {
            value: scalar,
            origin: origin.clone(),
            derived: true,
        })),
    })
}

/// `v` marked as computed from the secret `origin`, as [`mark`] does, but a secret it
/// holds is marked anew too: a value a secret selector picked (`$P.($P.fred.UserName)
/// .Password`) must not show the origin it had, which names what was picked.
pub(crate) fn mark_over(v: Val, origin: &Rc<str>) -> Val {
    deep(|| match v {
        Val::Secret(s) => Val::Secret(Rc::new(Secret {
            value: s.value.clone(),
            origin: origin.clone(),
            derived: true,
        })),
        Val::List(l) => {
            let items = l
                .items
                .iter()
                .map(|x| mark_over(x.clone(), origin))
                .collect();
            make_list(items).unwrap_or(Val::List(l))
        }
        other => mark(other, origin),
    })
}

/// The origin of the first secret among `vals` (looking into lists).
pub(crate) fn secret_origin<'v>(vals: impl IntoIterator<Item = &'v Val>) -> Option<Rc<str>> {
    vals.into_iter().find_map(|v| match v {
        Val::Secret(s) => Some(s.origin.clone()),
        Val::List(l) => secret_origin(l.items.iter()),
        _ => None,
    })
}

/// Shortest secret text that is replaced where it stands alone in a message (not quoted as
/// a value); a shorter one withholds the whole message (replacing every `a` would spell the
/// secret out).
const MIN_SCRUB: usize = 4;

/// Below this length, a secret text found more than once in a message withholds it: the
/// message's own words hold it too (`needs` in "the value needs review: needs"), and
/// replacing them would show what it is.
const MIN_SCRUB_REPEATED: usize = 8;

/// A run of this many characters of a secret (or of its escaped form) left in a message
/// after the replacements is a part of it shown some other way (shortened): the message is
/// withheld.
const FRAGMENT: usize = 12;

/// Stands for the `i`th replaced secret until every secret is replaced, so that one
/// secret's redaction is never searched for another (an entry title equal to a user
/// name): a character of the supplementary private use area, which no message holds.
fn placeholder(i: usize) -> char {
    u32::try_from(i)
        .ok()
        .filter(|i| *i < 0xFFFE)
        .and_then(|i| char::from_u32(0xF0000 + i))
        .unwrap_or('\u{FFFFD}')
}

/// The index of the secret [`placeholder`] `c` stands for, if it is one.
fn placeholder_index(c: char) -> Option<usize> {
    let i = u32::from(c).checked_sub(0xF0000)?;
    usize::try_from(i).ok().filter(|i| *i < 0xFFFE)
}

/// Removes the texts of `taint` from a diagnostic made while they were open.
pub(crate) fn scrub(d: &mut Diagnostic, taint: &Taint) {
    // A value computed from the secret (a comparison's boolean) is shown as computed.
    let derived = !taint.texts.is_empty() && taint.texts.iter().all(|t| t.derived);
    let shown = redacted(&taint.origin, derived);
    let mut withheld = false;
    let mut clean = |s: &mut String| {
        let (text, hide) = scrubbed(s, &taint.texts);
        *s = text;
        withheld |= hide;
    };
    clean(&mut d.message);
    clean(&mut d.label);
    for l in &mut d.labels {
        clean(&mut l.message);
    }
    for n in &mut d.notes {
        clean(n);
    }
    if let Some(h) = &mut d.hint {
        clean(h);
    }
    if withheld {
        d.message =
            format!("a message made from {shown} is withheld, because it would show the secret");
        d.label.clear();
        for l in &mut d.labels {
            l.message.clear();
        }
        d.notes.clear();
        d.hint = None;
    }
}

/// `s` with each of the secret `texts` replaced by its redaction, and whether it must be
/// withheld. The redactions already in `s` (`‹...›`) are left alone: they name where a
/// secret came from, which is not secret, and may hold its text as an entry's name.
fn scrubbed(s: &str, texts: &[Opened]) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut withheld = false;
    let mut rest = s;
    loop {
        let (plain, label) = rest.split_once('‹').unwrap_or((rest, ""));
        let (cleaned, hide) = scrubbed_plain(plain, texts);
        for c in cleaned.chars() {
            match placeholder_index(c).and_then(|i| texts.get(i)) {
                Some(t) => out.push_str(&redacted(&t.origin, t.derived)),
                None => out.push(c),
            }
        }
        withheld |= hide;
        if plain.len() == rest.len() {
            return (out, withheld);
        }
        let (inside, after) = label.split_once('›').unwrap_or((label, ""));
        out.push('‹');
        out.push_str(inside);
        if inside.len() < label.len() {
            out.push('›');
        }
        rest = after;
    }
}

fn scrubbed_plain(s: &str, texts: &[Opened]) -> (String, bool) {
    let mut s = s.to_string();
    let mut withheld = false;
    // Secrets as they came first, so that a text computed from one keeps what was not
    // secret in it (`refusing ‹secret›`); longest first, so that a secret holding another
    // is replaced whole.
    let mut texts: Vec<(usize, &Opened)> = texts
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.text.is_empty())
        .collect();
    texts.sort_by_key(|(_, t)| (t.derived, std::cmp::Reverse(t.text.len())));

    for (
        i,
        Opened {
            text: t, derived, ..
        },
    ) in texts
    {
        let placeholder = placeholder(i).to_string();
        // As values are shown in messages: quoted, with line ends and other control
        // characters escaped, and shortened (`'-----BEGIN…'`).
        let mut quoted = false;
        for quote in ['\'', '"'] {
            let preview = quoted_preview(t, quote);
            if s.contains(&preview) {
                s = s.replace(&preview, &placeholder);
                quoted = true;
            }
        }
        // Where the message quoted the value, the text left is the message's own
        // (`match` needs a capture group number, but its argument is 'needs').
        let escaped = escaped_text(t);
        for form in [t.as_str(), escaped.as_str()] {
            let found = if quoted { 0 } else { s.matches(form).count() };
            if found == 0 {
                continue;
            }
            let length = form.chars().count();
            if length < MIN_SCRUB || (length < MIN_SCRUB_REPEATED && found > 1) {
                withheld = true;
            } else {
                s = s.replace(form, &placeholder);
            }
        }
        // (A text computed from a secret holds the message's own words too.)
        if !derived && (has_fragment(&s, t) || has_fragment(&s, &escaped)) {
            withheld = true;
        }
    }
    (s, withheld)
}

/// Whether `s` holds [`FRAGMENT`] characters in a row of `t`.
fn has_fragment(s: &str, t: &str) -> bool {
    let chars: Vec<char> = t.chars().collect();
    if chars.len() < FRAGMENT {
        return false;
    }
    chars.windows(FRAGMENT).any(|w| {
        let piece: String = w.iter().collect();
        s.contains(&piece)
    })
}

impl<'a> Evaluator<'a> {
    /// `v` without its secret wrappers (through lists), each secret noted in the current
    /// taint record.
    pub(crate) fn open(&mut self, v: Val) -> Val {
        match v {
            Val::Secret(s) => {
                self.note_secret(&s);
                s.value.clone()
            }
            Val::List(l) if secret_origin(l.items.iter()).is_some() => {
                let items: Vec<Val> = l.items.iter().map(|x| self.open(x.clone())).collect();
                make_list(items).unwrap_or(Val::List(l))
            }
            other => {
                // A block a secret selector picked, or a list holding one: reading it is
                // reading the secret's choice, so what is made of it is secret too.
                if let Some(origin) = self.selected_origin_in(&other) {
                    self.note_choice(origin);
                }
                other
            }
        }
    }

    /// The origin of a block in `v` (itself, or in its lists) that a secret selector
    /// picked. Values nest at most `MAX_DEPTH` levels, so the recursion is bounded.
    pub(crate) fn selected_origin_in(&self, v: &Val) -> Option<Rc<str>> {
        // A candidate of a pick counts too (`picked_origin`), even where the pick itself
        // gave no block.
        if self.selected_in_secret.is_empty() && self.picked_from.is_empty() {
            return None;
        }
        match v {
            Val::Block(b) => self.picked_origin(b),
            Val::List(l) => l.items.iter().find_map(|x| self.selected_origin_in(x)),
            _ => None,
        }
    }

    /// Notes that the text of a secret was read (outside every taint record, as when the
    /// output is materialised, nothing needs to know).
    pub(crate) fn note_secret(&mut self, s: &Secret) {
        if self.taint_depth == 0 {
            return;
        }
        let text = Opened {
            text: scalar_text(&s.value).unwrap_or_default(),
            derived: s.derived,
            origin: s.origin.clone(),
        };
        match &mut self.taint {
            Some(t) => {
                if !t.texts.contains(&text) {
                    t.texts.push(text);
                }
            }
            None => {
                self.taint = Some(Taint {
                    origin: s.origin.clone(),
                    texts: vec![text],
                })
            }
        }
    }

    /// Runs `f`, whose work depends on what a secret selector picked (shown as `shown`):
    /// the trace entries and warnings it makes are hidden, as they would name what was
    /// picked (the warnings replaced by one at `at`), and an error it meets is told as
    /// `told` says, given `shown`, without its details. The one rule for every reading of
    /// a pick: selecting from it, copying, comparing and outputting it.
    pub(crate) fn under_pick<T>(
        &mut self,
        shown: &str,
        at: Span,
        told: impl FnOnce(&str) -> Diagnostic,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let warned = self.warnings.len();
        let r = self.in_pick(shown, at, f);
        self.hide_what_a_secret_selected(warned, shown, at);
        r.map_err(|e| {
            e.told_as(
                told(shown).note("the details are not shown, because the selector is a secret"),
            )
        })
    }

    /// [`Evaluator::under_pick`] for the pick of the secret from `origin`, whose errors are
    /// told as "what ‹secret› selected cannot be `done`".
    pub(crate) fn reading_pick<T>(
        &mut self,
        origin: &Rc<str>,
        at: Span,
        done: &str,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let shown = redacted(origin, true);
        self.under_pick(
            &shown,
            at,
            |shown| Diagnostic::error(format!("what {shown} selected cannot be {done}")).at(at),
            f,
        )
    }

    /// `v` as a secret from `origin` picked it: each block in it (itself, or in its lists)
    /// replaced by a view of its own (`BuildSpec::ViewOf`), marked as selected in secret
    /// ([`Evaluator::selected_in_secret`]). The mark must not go on the block itself: it is
    /// also the value of the resource it was picked from (`fred => $PF`), which other
    /// resources read by name, and a mark there would hide `PF` and not `PM`, telling the
    /// pick. A block made for a pick (a view, a merge of one) is marked already.
    pub(crate) fn view_of_pick(&mut self, v: Val, origin: &Rc<str>, at: Span) -> Val {
        deep(|| match v {
            Val::Block(b) if self.selected_in_secret.contains_key(&b) => Val::Block(b),
            Val::Block(b) => {
                let place = self.block(b).place.clone();
                let view = self.new_block(
                    place,
                    BlockState::Unbuilt(BuildSpec::ViewOf { seen: b, at }),
                );
                if let Some(file) = self.value_imports.get(&b).copied() {
                    self.value_imports.insert(view, file);
                }
                self.selected_in_secret.insert(view, origin.clone());
                Val::Block(view)
            }
            // Values nest at most `MAX_DEPTH` levels, so this recursion is bounded.
            Val::List(l) => {
                let items = l
                    .items
                    .iter()
                    .map(|x| self.view_of_pick(x.clone(), origin, at))
                    .collect();
                make_list(items).unwrap_or(Val::List(l))
            }
            other => other,
        })
    }

    /// Builds a view of `seen` ([`Evaluator::view_of_pick`]): `seen` built, its members.
    /// The view may be read where no pick is (copied by an inline `if`, merged), but
    /// building `seen` is reading the pick: it is done as a pick's reading, at `at`.
    pub(crate) fn build_view(&mut self, view: BlockId, seen: BlockId, at: Span) -> R<()> {
        let origin = self
            .selected_in_secret
            .get(&view)
            .cloned()
            .unwrap_or_default();
        let built = self
            .reading_pick(&origin, at, "evaluated", |ev| ev.ensure_built(seen))
            .and_then(|()| match self.block(seen).state {
                BlockState::Building { .. } => Err(EvalError::new(
                    Diagnostic::error(format!(
                        "the block `{}` is needed whole while its own inline statements are still being evaluated",
                        self.block_path(seen)
                    ))
                    .hint("an inline `import`, `if` or function call cannot depend on the whole block it adds to"),
                )),
                _ => Ok(()),
            });
        if let Err(e) = built {
            self.block_mut(view).state = BlockState::Failed(e.clone());
            return Err(e);
        }
        let (members, inst) = {
            let node = self.block(seen);
            (node.members.clone(), node.inst)
        };
        let node = self.block_mut(view);
        node.members = members;
        node.inst = inst;
        node.state = BlockState::Built;
        Ok(())
    }

    /// Runs `f` as a reading of a secret's pick: the resources it evaluates first are kept
    /// apart ([`Evaluator::pick_memo`]).
    pub(crate) fn in_pick<T>(
        &mut self,
        shown: &str,
        at: Span,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        // Each reading of a pick starts its limits afresh, and shows one trace entry: what
        // one pick evaluated must not change what the next shows, or the next would tell
        // the first's choice (the values it finds evaluated give their warnings again,
        // `pick_memo`).
        if self.pick_depth == 0 {
            self.pick_warned_from = self.warnings.len();
            self.pick_first_block = self.blocks.len() as u32;
            if self.opts.trace {
                self.pick_trace_marks.push(self.settled.len());
            }
            self.pick_value_imports_of.clear();
            self.pick_work_limit_passed = None;
            self.pick_steps = 0;
        }
        self.pick_depth += 1;
        let site = self.pick_site.replace((Rc::from(shown), at));
        let r = f(self);
        self.pick_site = site;
        self.pick_depth -= 1;
        r
    }

    /// The warnings the building of a block gave while a pick was read, given again where
    /// it is read by name (and into another pick's reading, which must see them as if it
    /// had built the block itself).
    pub(crate) fn reshow_build_warnings(&mut self, b: BlockId) {
        let given = if self.pick_depth == 0 {
            self.hidden_build_warnings.remove(&b)
        } else {
            self.hidden_build_warnings.get(&b).cloned()
        };
        // Named after the resource read now, as a building done now would be: the one the
        // pick was read for would tell it.
        let resource = self.stack.last().map(|s| self.slot_path(*s));
        let mut given = given.unwrap_or_default();
        for w in &mut given {
            w.resource = resource.clone();
        }
        self.warn_again(&given);
    }

    /// Notes that a secret's choice was read (a block a secret selector picked): what is
    /// made of it is secret, but there is no secret text to keep out of messages.
    pub(crate) fn note_choice(&mut self, origin: Rc<str>) {
        if self.taint_depth == 0 {
            return;
        }
        if self.taint.is_none() {
            self.taint = Some(Taint {
                origin,
                texts: Vec::new(),
            });
        }
    }

    /// Runs `f` with a taint record of its own: its result, and the secrets it opened
    /// (which count for the enclosing record too).
    pub(crate) fn tainting<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> (T, Option<Taint>) {
        let saved = self.taint.take();
        self.taint_depth += 1;
        let r = f(self);
        self.taint_depth -= 1;
        let got = std::mem::replace(&mut self.taint, saved);
        if let Some(g) = &got {
            match &mut self.taint {
                Some(t) => t.add(g),
                None => self.taint = Some(g.clone()),
            }
        }
        (r, got)
    }

    /// Calls a function (or runs anything else that reads values as plain data): the
    /// values it evaluates are opened, a result computed from a secret is secret, and an
    /// error or warning it made does not show the secret.
    pub(crate) fn through_boundary(&mut self, f: impl FnOnce(&mut Self) -> R<Val>) -> R<Val> {
        let warnings = self.warnings.len();
        let open = std::mem::replace(&mut self.open_results, true);
        let (r, taint) = self.tainting(f);
        self.open_results = open;
        let Some(taint) = taint else { return r };
        for w in self.warnings.iter_mut().skip(warnings) {
            scrub(w, &taint);
        }
        match r {
            Ok(v) => {
                // Blocks in the result depend on the secret as much as its scalars
                // (`~(remove)>` leaving the block the secret did not pick).
                let at = self
                    .stack
                    .last()
                    .map(|s| self.slot_site(*s))
                    .unwrap_or_default();
                let v = self.view_of_pick(v, &taint.origin, at);
                Ok(mark(v, &taint.origin))
            }
            Err(mut e) => {
                hide_list_shape(&mut e.diag);
                scrub(&mut e.diag, &taint);
                for d in &mut e.more {
                    hide_list_shape(d);
                    scrub(d, &taint);
                }
                Err(e)
            }
        }
    }
}

/// A message about a call given a secret, without the shape of the lists it was given:
/// how long a list is and which element failed (`element 2 of its argument is a block`,
/// `a list of 3 elements`) would tell a list a secret selector picked from its sibling,
/// or which secret of a list is malformed.
fn hide_list_shape(d: &mut Diagnostic) {
    fn is_count(w: Option<&&str>) -> bool {
        w.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }
    fn hidden(s: &str) -> String {
        let words: Vec<&str> = s.split(' ').collect();
        let mut out: Vec<String> = Vec::with_capacity(words.len());
        let mut i = 0;
        while let Some(&w) = words.get(i) {
            // `element 2 of its argument` → `an element of its argument`.
            if w == "element" && is_count(words.get(i + 1)) {
                out.push("an element".to_string());
                i += 2;
                continue;
            }
            // `a list of 3 elements,` → `a list,`.
            let after_list = out.last().is_some_and(|p| p == "list");
            if let (true, "of", true, Some(unit)) =
                (after_list, w, is_count(words.get(i + 1)), words.get(i + 2))
            {
                if let Some(tail) = unit
                    .strip_prefix("elements")
                    .or_else(|| unit.strip_prefix("element"))
                {
                    if let Some(list) = out.last_mut() {
                        list.push_str(tail);
                    }
                    i += 3;
                    continue;
                }
            }
            out.push(w.to_string());
            i += 1;
        }
        out.join(" ")
    }
    d.message = hidden(&d.message);
    d.label = hidden(&d.label);
    for l in &mut d.labels {
        l.message = hidden(&l.message);
    }
}
