//! `-Deval`: a readable account of how each resource got its value — the rule that
//! decided, the definitions that made the value (file, line, operator) and those it
//! overrode. Built from the [`crate::model::Outcome`] the fold records for every slot.

use crate::eval::Evaluator;
use crate::fold::{Decider, Rank};
use crate::model::{Body, DefId, InstId, Place, Record, SlotId, SlotState};
use crate::val::{quoted_preview, Val};
use cf2_syntax::Sources;

/// How one resource got its value: the foundation of `-Deval` and of `explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// The resource (`Services.OsVersion`).
    pub path: String,
    /// Its value, the rule that decided and the definitions involved.
    pub made: Made,
    /// A member of a `{ ... }` literal that an inline statement read while the literal was
    /// built, before a `~>` merged it into the resource's block (docs/semantics.md §3):
    /// not the resource's final value, which has an entry of its own under the same path.
    pub before_merge: bool,
    /// Where a mutation function was given a value another function made (`N ~(min)> 5`
    /// over `~(max)>`s), that value and how it was made, outermost first: the `used`
    /// definitions of `made` are those of the top function alone.
    pub below: Vec<Made>,
    /// Where the value is a block made for another resource (`Web => $Defaults`), that
    /// resource's path: the block's members have their entries under it.
    pub block_of: Option<String>,
    /// The resources its definitions read by reference (`$Cpus`, `$Web.Port`), in the order
    /// first read, each with its value: what the value was computed from.
    pub reads: Vec<Read>,
}

/// What an inline statement read while it ran (`if ($Memory > 16) then {...}` read
/// `Memory`): what it added to its block depends on those values.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementRead {
    /// `FILE:LINE:COL` of the statement.
    pub location: String,
    /// Its first line, shortened.
    pub text: String,
    pub reads: Vec<Read>,
}

/// A resource a definition read (see [`Provenance::reads`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    /// Its path (`Web.Port`).
    pub path: String,
    /// Its value as traces show it (secrets redacted).
    pub value: String,
    /// Whether it is shown as hidden (`path` and `value` say so): a resource a secret's
    /// pick may have read, whose entry the trace hides too.
    pub hidden: bool,
}

/// How a value was made, as a trace shows it: a resource's own ([`Provenance::made`]), or a
/// value a mutation function was given from below ([`Provenance::below`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Made {
    /// The value as traces show it (secrets redacted).
    pub value: String,
    /// The rule that decided (`assignment`, `merge`, `max`, `final`, ...).
    pub rule: String,
    /// The definitions whose values make up the result.
    pub used: Vec<Origin>,
    /// Definitions outranked, and so never evaluated.
    pub overridden: Vec<Origin>,
    /// Definitions evaluated that gave no value, so lower ones showed through.
    pub undefined: Vec<Origin>,
    /// Definitions that repeat an earlier one word for word, and so count once.
    pub repeated: Vec<Origin>,
}

/// How the trace names a resource it hides (`Evaluator::hidden_in_trace`), and its value.
const HIDDEN_PATH: &str = "‹a resource selected by a secret›";
const HIDDEN_VALUE: &str = "‹secret›";

/// A hidden entry, one for a run of them: how many resources a pick read would say which
/// member it picked.
fn push_hidden(out: &mut Vec<Provenance>) {
    let hidden = Provenance::hidden();
    if out.last() != Some(&hidden) {
        out.push(hidden);
    }
}

impl Provenance {
    /// The entry of a resource whose record would say what a secret selector picked.
    fn hidden() -> Provenance {
        Provenance {
            path: HIDDEN_PATH.to_string(),
            made: Made {
                value: HIDDEN_VALUE.to_string(),
                rule: "not shown".to_string(),
                used: Vec::new(),
                overridden: Vec::new(),
                undefined: Vec::new(),
                repeated: Vec::new(),
            },
            before_merge: false,
            below: Vec::new(),
            block_of: None,
            reads: Vec::new(),
        }
    }
}

/// Where a definition is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// `FILE:LINE:COL`.
    pub location: String,
    pub span: cf2_syntax::Span,
    /// The operator (`=>`, `~>`, `~(max)>`).
    pub op: String,
    /// The statement's first line, shortened.
    pub text: String,
    /// An overridden definition that was evaluated all the same, for a literal's own
    /// member that an inline statement read before the merge (see
    /// [`Provenance::before_merge`]).
    pub read_before_merge: bool,
    /// For a member a `~>` merged by value (`U ~> $D`), the resource whose value it is
    /// (`D.v`): overridden here, it may well have been evaluated there.
    pub value_of: Option<String>,
    /// For a definition a macro's body made, where the call is (`FILE:LINE:COL`): two
    /// calls of one macro make definitions written at the same place.
    pub call: Option<String>,
    /// For one mutation of a statement that chains several (`Y ~(sum)> 2 ~(sum)> 3`), its
    /// position, from 1: the statement is the same for each.
    pub mutation: Option<u32>,
    /// For an overridden definition, why it was outranked (`main.cf2 imports base.cf2`),
    /// where the priority order says it in words (docs/semantics.md §"Priority").
    pub why: Option<String>,
}

impl<'a> Evaluator<'a> {
    /// One record per resource whose value was settled, in the order they were settled.
    pub fn provenance(&self) -> Vec<Provenance> {
        let mut out = Vec::new();
        let mut marks = self.pick_trace_marks.iter().peekable();
        for (i, s) in self.settled.iter().enumerate() {
            while marks.next_if(|m| **m <= i).is_some() {
                push_hidden(&mut out);
            }
            let slot = self.slot(*s);
            let SlotState::Done(v) = &slot.state else {
                continue;
            };
            let Some(o) = &slot.outcome else { continue };
            if self.hidden_in_trace(*s) {
                push_hidden(&mut out);
                continue;
            }
            let before_merge = match self.in_merged_literal(*s) {
                LiteralMember::Not => false,
                LiteralMember::ReadInline => true,
                // Evaluated only to compare the literal with its equals from unordered
                // files (agreed on member by member): the merged entry lists it.
                LiteralMember::Compared => continue,
            };
            // A list holding a block a secret selector picked: its length and order may
            // depend on the secret (`~(remove)>` took the block out or not).
            let value = if matches!(v, Val::List(_)) && self.selected_origin_in(v).is_some() {
                "a list holding what a secret selected".to_string()
            } else {
                preview(v)
            };
            let made = self.made_by(value, o);
            let below = o
                .layers
                .iter()
                .rev()
                .map(|l| self.made_by(preview(&l.value), &l.made))
                .collect();
            let path = self.slot_path(*s);
            // Not for a block a secret selector picked: its path would say which it is.
            let block_of = match v.plain() {
                Val::Block(b) if self.selected_origin_in(v).is_none() => {
                    Some(self.block_path(*b)).filter(|home| !home.is_empty() && *home != path)
                }
                _ => None,
            };
            let reads = self.reads_of(*s);
            out.push(Provenance {
                path,
                made,
                before_merge,
                below,
                block_of,
                reads,
            });
        }
        if marks.next().is_some() {
            push_hidden(&mut out);
        }
        // A member merged by value from a block shown under the same path (`J ~> import(f)`:
        // the import's `Z` is `J.Z` too) says again what that block's entry says.
        let again = |p: &Provenance| {
            let m = &p.made;
            !m.used.is_empty()
                && m.overridden.is_empty()
                && m.undefined.is_empty()
                && m.used
                    .iter()
                    .all(|o| o.value_of.as_deref() == Some(p.path.as_str()))
        };
        if out.iter().any(again) {
            let shown: std::collections::HashSet<(String, String)> = out
                .iter()
                .filter(|p| p.made.used.iter().all(|o| o.value_of.is_none()))
                .map(|p| (p.path.clone(), p.made.value.clone()))
                .collect();
            out.retain(|p| !(again(p) && shown.contains(&(p.path.clone(), p.made.value.clone()))));
        }
        // An overridden definition evaluated for a literal's own member is not "never
        // evaluated": say where it was.
        let read: Vec<cf2_syntax::Span> = out
            .iter()
            .filter(|p| p.before_merge)
            .flat_map(|p| p.made.used.iter().map(|o| o.span))
            .collect();
        if !read.is_empty() {
            for p in out.iter_mut().filter(|p| !p.before_merge) {
                for o in &mut p.made.overridden {
                    o.read_before_merge = read.contains(&o.span);
                }
            }
        }
        out
    }

    /// Whether the trace hides the resource `s` (no entry of its own, and shown hidden
    /// where another entry read it): a candidate of a secret pick, or a member of one, is
    /// shown alike, picked or not; and one decided by definitions copied from a block a
    /// secret selector picked, whose places are in that block and so say which it is.
    fn hidden_in_trace(&self, s: SlotId) -> bool {
        let slot = self.slot(s);
        let copied_in_secret = !self.secret_defs.is_empty()
            && slot.outcome.as_ref().is_some_and(|o| {
                (o.used.iter().chain(&o.overridden)).any(|d| self.secret_defs.contains_key(d))
            });
        let candidate = !self.picked_from.is_empty()
            && (self.picked_from.contains_key(&slot.parent)
                || self.picked_origin(&slot.parent).is_some());
        copied_in_secret || candidate
    }

    /// What the definitions of `s` read by reference ([`Evaluator::note_read`]). A
    /// resource that a secret's pick may have read, or whose definitions were copied from
    /// a picked block, is shown as the trace hides its own entry.
    fn reads_of(&self, s: SlotId) -> Vec<Read> {
        match self.reads.get(&s) {
            Some(read) => self.shown_reads(read),
            None => Vec::new(),
        }
    }

    /// What each inline statement read while it ran (an `if`'s condition), in the order the
    /// statements first read ([`Evaluator::note_read`]).
    pub fn statement_reads(&self) -> Vec<StatementRead> {
        self.statement_reads
            .iter()
            .map(|(at, read)| StatementRead {
                location: self.loader.location(*at),
                text: self.statement_text(*at),
                reads: self.shown_reads(read),
            })
            .collect()
    }

    /// The resources `read` names, as a trace shows them.
    fn shown_reads(&self, read: &crate::eval::ReadSet) -> Vec<Read> {
        read.iter()
            .filter_map(|r| {
                let SlotState::Done(v) = &self.slot(*r).state else {
                    return None;
                };
                Some(if self.hidden_in_trace(*r) {
                    Read {
                        path: HIDDEN_PATH.to_string(),
                        value: HIDDEN_VALUE.to_string(),
                        hidden: true,
                    }
                } else {
                    Read {
                        path: self.slot_path(*r),
                        value: preview(v),
                        hidden: false,
                    }
                })
            })
            .collect()
    }

    /// `-Deval`: the provenance records as text, one entry per resource.
    pub fn trace(&self) -> Vec<String> {
        self.provenance().iter().map(render_trace).collect()
    }

    /// What a record says, as a trace shows it, with `value` for the value it made. One
    /// statement reached along two paths (a file merged into two blocks) is one definition
    /// to the reader: its copies are repeats, not values of their own.
    fn made_by(&self, value: String, r: &Record) -> Made {
        let origins =
            |defs: &[DefId]| -> Vec<Origin> { defs.iter().map(|d| self.origin(*d)).collect() };
        let mut shown: Vec<Origin> = Vec::new();
        let mut repeats = origins(&r.repeated);
        for origin in origins(&r.used) {
            let copy = shown.iter().any(|u| {
                u.span == origin.span
                    && u.op == origin.op
                    && u.call == origin.call
                    && u.mutation == origin.mutation
            });
            if copy {
                repeats.push(origin);
            } else {
                shown.push(origin);
            }
        }
        Made {
            value,
            rule: if r.rule.is_empty() {
                "no value".to_string()
            } else {
                r.rule.clone()
            },
            used: shown,
            overridden: (r.overridden.iter())
                .map(|&d| Origin {
                    why: self.why_outranked(d, &r.used),
                    ..self.origin(d)
                })
                .collect(),
            undefined: origins(&r.undefined),
            repeated: repeats,
        }
    }

    /// Whether the slot lies in a block literal that a `~>` merged as written into
    /// another block (the walk up its enclosing blocks meets one of them), and if so
    /// whether an inline statement of a literal read it, or the member it lies in, while
    /// the literal was built (`Evaluator::inline_reads`). A block is made after the
    /// resource it sits in, so the walk ends; the bound is only a guard.
    fn in_merged_literal(&self, s: SlotId) -> LiteralMember {
        if self.merged_into.is_empty() {
            return LiteralMember::Not;
        }
        let (mut merged, mut read) = (false, false);
        let mut slot = s;
        for _ in 0..=self.slots.len() {
            let b = self.slot(slot).parent;
            merged |= self.merged_into.contains_key(&b);
            let name = &*self.slot(slot).name;
            read |= self
                .inline_reads
                .get(&b)
                .is_some_and(|reads| reads.iter().any(|(n, _)| &**n == name));
            match &self.block(b).place {
                Place::Of(up) | Place::Element(up, _) => slot = *up,
                Place::Top | Place::Named(_) => break,
            }
        }
        match (merged, read) {
            (false, _) => LiteralMember::Not,
            (true, true) => LiteralMember::ReadInline,
            (true, false) => LiteralMember::Compared,
        }
    }

    fn origin(&self, d: DefId) -> Origin {
        let value_of = match self.def(d).body {
            Body::ValueOf(slot) => Some(self.slot_path(slot)),
            _ => None,
        };
        // A member merged by value ([`Body::ValueOf`]) shows the definition that gave the
        // value it carries (`D.v => 2` in the file that overrides `D`'s own `v => 1`), not
        // the place it is ranked at, which is the first of the resource's definitions.
        let shown = self.value_source(d).unwrap_or(d);
        let def = self.def(shown);
        Origin {
            location: self.loader.location(def.site),
            span: def.site,
            op: match &value_of {
                Some(path) => format!("value of `{path}`:"),
                None => def.op.symbol(),
            },
            text: self.statement_text(def.site),
            read_before_merge: false,
            value_of,
            mutation: match def.prio.last() {
                Some(crate::model::Step::Seq(k)) => Some(k + 1),
                _ => None,
            },
            why: None,
            call: match def.body {
                Body::Expr(_, sc) | Body::Implicit { scope: sc, .. } => self
                    .scope(sc)
                    .call
                    .as_ref()
                    .map(|c| self.loader.location(c.call)),
                _ => None,
            },
        }
    }

    /// The first line of the statement at `site`, shortened (` …` where more follows).
    fn statement_text(&self, site: cf2_syntax::Span) -> String {
        let text = self.loader.snippet(site);
        let first_line = text.lines().next().unwrap_or("");
        let short: String = first_line.chars().take(70).collect();
        let more = if first_line.chars().count() > 70 || text.lines().nth(1).is_some() {
            " …"
        } else {
            ""
        };
        format!("{}{more}", short.trim())
    }

    /// Why `lost` was overridden, in words: a default not needed, a `final` above it, or what
    /// in the priority order puts the first of `winners` that outranks it above it
    /// (`Evaluator::rank_and_decider`). `None` where none of them outranks it.
    fn why_outranked(&self, lost: DefId, winners: &[DefId]) -> Option<String> {
        let lost_op = &self.def(lost).op;
        if lost_op.is_func("default") {
            return Some("a default: other definitions gave a value".to_string());
        }
        for &w in winners {
            if self.def(w).op.is_func("final") && !lost_op.is_func("final") {
                return Some(format!(
                    "`~(final)>` at {} outranks every other definition",
                    self.loader.location(self.def(w).site)
                ));
            }
            let (rank, decider) = self.rank_and_decider(w, lost);
            if rank != Rank::Higher {
                continue;
            }
            let name = |f| self.loader.name(f).to_string();
            return match decider {
                Decider::Imports { inst, from, to } => self.import_chain(inst, from, to),
                Decider::FileImports { from, to } => {
                    Some(format!("{} imports {}", name(from), name(to)))
                }
                Decider::LaterInChain => Some("a later mutation of the statement".to_string()),
                Decider::OwnFile(f) => Some(format!(
                    "written in {}, whose own definitions outrank what its imports give",
                    name(f)
                )),
                Decider::Nothing => None,
            };
        }
        None
    }

    /// `A imports B, which imports C`: the files on a shortest import path from source
    /// `from` to source `to` of block body `inst`.
    fn import_chain(&self, inst: InstId, from: u32, to: u32) -> Option<String> {
        let inst = self.insts.get(inst.0 as usize)?;
        let names: Vec<&str> = (inst.path(from, to)?.iter())
            .map(|node| inst.files.get(*node as usize).map(|f| self.loader.name(*f)))
            .collect::<Option<_>>()?;
        let (first, rest) = names.split_first()?;
        let mut text = (*first).to_string();
        for (i, name) in rest.iter().enumerate() {
            text.push_str(if i == 0 {
                " imports "
            } else {
                ", which imports "
            });
            text.push_str(name);
        }
        Some(text)
    }

    /// For a member merged by value, the definition that gave the value of the resource
    /// it carries, through chains of such merges; `None` where that is not recorded.
    fn value_source(&self, d: DefId) -> Option<DefId> {
        let mut d = d;
        // Chains of merges by value are short; the bound only guards the walk.
        for _ in 0..64 {
            let Body::ValueOf(slot) = self.def(d).body else {
                return Some(d);
            };
            d = match self.slot(slot).outcome.as_ref() {
                Some(o) => *o.used.first()?,
                // Not evaluated (overridden where it was merged): its one definition.
                None => match self.slot(slot).defs.as_slice() {
                    [only] => *only,
                    _ => return None,
                },
            };
        }
        None
    }
}

/// Where a slot stands with respect to block literals merged into another block.
enum LiteralMember {
    /// In none.
    Not,
    /// In one, and an inline statement of a literal read it while the literal was built.
    ReadInline,
    /// In one, read by no inline statement: evaluated only to compare the literal.
    Compared,
}

/// One `-Deval` entry.
pub fn render_trace(p: &Provenance) -> String {
    format!("eval: {}", render_entry(p))
}

/// How one resource got its value: `PATH = VALUE  [RULE]`, then a line per definition that
/// made it, overrode, gave no value or repeated another (what `-Deval` prints after `eval: `
/// and `cf2 explain` prints for the resource asked about).
pub fn render_entry(p: &Provenance) -> String {
    let when = if p.before_merge {
        "; the literal's own member, read by an inline statement before the merge"
    } else {
        ""
    };
    let mut entry = format!("{} = {}  [{}{when}]", p.path, p.made.value, p.made.rule);
    render_origins(&mut entry, &p.path, &p.made);
    for r in &p.reads {
        let sigil = if r.hidden { "" } else { "$" };
        entry.push_str(&format!("\n  read     {sigil}{} = {}", r.path, r.value));
    }
    if let Some(home) = &p.block_of {
        entry.push_str(&format!(
            "\n  members  listed under `{home}`: this value is the block made there"
        ));
    }
    let mut above = p.made.used.len();
    for b in &p.below {
        let given = if above == 1 {
            "the mutation above was"
        } else {
            "the mutations above were"
        };
        entry.push_str(&format!(
            "\n  below    {}  [{}], the value {given} given, made by:",
            b.value, b.rule
        ));
        above = b.used.len();
        render_origins(&mut entry, &p.path, b);
    }
    // Quoted source text reaches the terminal: its control characters are shown, not run.
    cf2_syntax::visible(&entry).into_owned()
}

/// The lines of one entry (or of one value below it) that say which definitions made it.
fn render_origins(entry: &mut String, path: &str, made: &Made) {
    let Made {
        used,
        overridden,
        undefined,
        repeated,
        ..
    } = made;
    // A value merged from a block shown under this same path (`J ~> import(f)`) is not
    // "the value of" the entry itself: it is what was merged.
    let line = |o: &Origin| {
        let op = match &o.value_of {
            Some(of) if of == path => "merged value",
            _ => o.op.as_str(),
        };
        let mutation = match o.mutation {
            Some(k) => format!("  (mutation {k} of the statement)"),
            None => String::new(),
        };
        let call = match &o.call {
            Some(at) => format!("  (in the call at {at})"),
            None => String::new(),
        };
        format!("{}  {}  `{}`{mutation}{call}", o.location, op, o.text)
    };
    for o in used {
        entry.push_str(&format!("\n  from     {}", line(o)));
    }
    for o in overridden {
        let note = if o.read_before_merge {
            "not used; evaluated only for the literal's own member, before the merge".to_string()
        } else if o.value_of.is_some() {
            // The line names the resource already (`value of `D.v`:`).
            "not used here".to_string()
        } else {
            "not evaluated".to_string()
        };
        let note = match &o.why {
            Some(why) => format!("{note}; {why}"),
            None => note,
        };
        entry.push_str(&format!("\n  overrode {}  ({note})", line(o)));
    }
    for o in undefined {
        entry.push_str(&format!("\n  skipped  {}  (gave no value)", line(o)));
    }
    for o in repeated {
        let why = if used.iter().any(|u| u.span == o.span) {
            "the same statement, reached along another path: counted once"
        } else {
            "the same as an earlier definition: counted once"
        };
        entry.push_str(&format!("\n  repeat   {}  ({why})", line(o)));
    }
}

/// A value as the trace shows it: scalars in full (shortened), a string in `"` and a
/// literal in `'` so that the kind shows, short lists of scalars inline, other lists and
/// blocks by their size.
pub(crate) fn preview(v: &Val) -> String {
    let scalar = |x: &Val| match x {
        Val::Str(s) => quoted_preview(s, '"'),
        other => other.describe(),
    };
    if let Val::List(l) = v.plain() {
        // Each secret shown would count them (`describe` does not).
        if v.holds_secret() {
            return v.describe();
        }
        let parts: Vec<String> = l
            .items
            .iter()
            .map(|x| match x {
                Val::List(_) | Val::Block(_) => None,
                other => Some(scalar(other)),
            })
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        let joined = parts.join(", ");
        if parts.len() == l.items.len() && joined.chars().count() <= 70 {
            return format!("[{joined}]");
        }
    }
    scalar(v)
}
