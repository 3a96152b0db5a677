//! Folding a resource's definitions into its value (docs/semantics.md §"Folding").
//!
//! 1. `~(final)>` definitions, if any, decide alone: they must agree.
//! 2. Otherwise the other definitions are folded from the top of the priority order down:
//!    the *top* is every definition no other definition outranks.
//!    - all `=>`: the top value wins and nothing below is evaluated; several unordered
//!      tops must be equal;
//!    - all `~>`: the top blocks merge with the fold of what lies below; members keep
//!      their definitions, stacked by priority, and resolve on their own;
//!    - all the same `~(f)>`: `f` combines the top values with the fold of what lies
//!      below; several unordered tops need `f` to be commutative;
//!    - anything else with several unordered tops is `cannot determine mutation order`.
//!
//!    A top that evaluates to undefined (`?`, an `if` not taken) is dropped and the fold
//!    looks again: the next lower definition shows through.
//! 3. If nothing is left, `~(default)>` definitions give the value (they must agree).

use crate::error::{EvalError, R};
use crate::eval::{deep, Evaluator};
use crate::model::*;
use crate::val::Val;
use cf2_syntax::{Diagnostic, FileId, Sources, Span};
use std::cmp::Ordering;
use std::rc::Rc;

/// The result of folding a set of definitions.
pub(crate) enum Folded<'a> {
    Undefined,
    /// A value; for a block that came from one definition, that definition (its members'
    /// keys are relative to it).
    Plain(Val, Option<DefId>),
    /// Members gathered by `~>`, each with the definitions it got.
    Merge(Gathered<'a>),
}

/// The members a merge gathered, in the order met. The name map becomes the merged
/// block's member map as it is (no second map is built): until then each name maps to
/// the index of its contributions in `contributions` (as a placeholder `SlotId`).
#[derive(Default)]
pub(crate) struct Gathered<'a> {
    names: NameMap<'a, SlotId>,
    contributions: Vec<Contributions>,
    /// The block literals written for the resource whose members were gathered: files
    /// imported inline into them see the merged block (`Evaluator::scope_root`).
    bodies: Vec<BlockId>,
    /// A block that a secret selector picked was merged in (its secret's origin): the
    /// merged block is as secret (`Evaluator::selected_in_secret`).
    secret: Option<Rc<str>>,
}

/// Values of definitions a fold has evaluated (see `Evaluator::fold_ranked`).
type Evaluated = std::collections::HashMap<DefId, Val, foldhash::fast::RandomState>;

impl<'a> Gathered<'a> {
    fn add(&mut self, name: Name<'a>, c: Contribution) {
        self.add_all(name, std::iter::once(c));
    }

    fn add_all(&mut self, name: Name<'a>, cs: impl IntoIterator<Item = Contribution>) {
        let next = self.contributions.len();
        let entry = self.names.entry(name);
        let i = entry.index();
        entry.or_insert(SlotId(next as u32));
        if i == next {
            self.contributions.push(Contributions::new());
        }
        if let Some(list) = self.contributions.get_mut(i) {
            list.extend(cs);
        }
    }

    fn of(&self, placeholder: SlotId) -> &[Contribution] {
        contributions_at(&self.contributions, placeholder)
    }
}

/// The contributions a [`Gathered`] name's placeholder stands for.
fn contributions_at(contributions: &[Contributions], placeholder: SlotId) -> &[Contribution] {
    contributions
        .get(placeholder.0 as usize)
        .map_or(&[], |c| c.as_slice())
}

/// A definition a member of a merged block got: `def`, from the block that the slot's
/// definition `outer` gave (`None`: `def` is already placed relative to the slot).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Contribution {
    def: DefId,
    outer: Option<DefId>,
}

pub(crate) type Contributions = smallvec::SmallVec<[Contribution; 2]>;

/// How two definitions of one resource are ordered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Rank {
    Higher,
    Lower,
    /// Neither outranks the other.
    Unordered,
}

/// The priority order among the definitions of one fold, compared once: definitions with
/// the same key rank alike, so it is kept per distinct key. Peeling the tops off layer by
/// layer (a merge or a mutation function folds what lies below its tops) then needs no
/// further comparison: a chain of `n` files that each add to one resource costs
/// O(n²/64) to peel, not O(n³).
#[derive(Default)]
struct Ranking {
    /// One definition for each distinct key (none for a fold of one definition).
    keys: Defs,
    /// Words per row of `above`; 0 when there are more than [`RANKED_KEYS_MAX`] keys:
    /// tops are then found by comparing.
    words: usize,
    /// Row `i` (`words` words from `i * words`): the keys that outrank key `i`, as bits
    /// (bit `j` is `keys[j]`).
    above: smallvec::SmallVec<[u64; 8]>,
    /// Each definition of the fold with the index of its key, by definition.
    key_of: smallvec::SmallVec<[(DefId, usize); 8]>,
}

/// The most distinct keys a [`Ranking`] keeps "outranked by" bits for: 4096² bits are
/// 2 MiB. More (a resource that thousands of unrelated sources define) is ranked by
/// comparing.
const RANKED_KEYS_MAX: usize = 4096;

/// Above this many distinct keys, keys are found by hashing rather than by a linear
/// search.
const KEYS_SEARCHED: usize = 64;

impl Ranking {
    fn key(&self, d: DefId) -> Option<usize> {
        let at = self.key_of.binary_search_by_key(&d.0, |(e, _)| e.0).ok()?;
        self.key_of.get(at).map(|(_, i)| *i)
    }

    fn above(&self, i: usize) -> &[u64] {
        self.above
            .get(i * self.words..(i + 1) * self.words)
            .unwrap_or(&[])
    }
}

/// Which contexts of a statement reached along two paths make its definitions copies.
#[derive(Clone, Copy)]
enum Contexts {
    /// Only outside macro calls and branches with captures: copies that stand for each
    /// other before any value is compared (one side of copies left out).
    Plain,
    /// Also copies of one macro call or one branch with captures: for values compared
    /// before they count as one (the tops a mutation function combines).
    Copied,
}

/// Up to this many pairs of definitions, copies are looked for pair by pair; past it,
/// through a set of their places.
const FEW_PAIRS: usize = 64;

/// Places of definitions, to find copies of a statement among many definitions.
type SiteSet = std::collections::HashSet<Span, foldhash::fast::RandomState>;

/// The tops of a fold with their values.
type TopValues = smallvec::SmallVec<[(DefId, Val); 4]>;

/// What decides how a member of a block merges, beyond its value: unordered equal blocks
/// must agree on it ([`Evaluator::agreed_block`]).
#[derive(Clone, Copy, PartialEq, Eq)]
struct MemberMode {
    private: bool,
    /// It has a `~(final)>` definition.
    fixed: bool,
    /// It has only `~(default)>` definitions.
    default: bool,
}

/// Whether `values` are several blocks (not secrets): unordered ones are agreed on member
/// by member ([`Evaluator::agreed_block`]).
fn several_blocks(values: &[(DefId, Val)]) -> bool {
    values.len() > 1 && values.iter().all(|(_, v)| matches!(v, Val::Block(_)))
}

/// Where two priority keys part (see [`Evaluator::key_parting`]).
enum KeyParting {
    /// Decided by the steps where they differ, and what in them decided.
    Decided(Rank, Decider),
    /// Between two blocks given at one place: the last source step the keys share.
    Below(Option<(InstId, u32)>),
    /// One key ends (both, if `same_length`) below the last source step they share.
    End {
        same_length: bool,
        shared: Option<(InstId, u32)>,
    },
}

/// What decided how two definitions rank, as a trace says it (`Evaluator::why_outranked`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Decider {
    /// Source `from` of the block body `inst` imports source `to`, directly or not.
    Imports { inst: InstId, from: u32, to: u32 },
    /// A later mutation of one statement's chain (`X => a ~(f)> b`).
    LaterInChain,
    /// Two files given as values to one resource: `from` imports `to`, directly or not.
    FileImports { from: FileId, to: FileId },
    /// Written in this file, which gives the block both are in: a file's own mutations
    /// outrank what its imports give there.
    OwnFile(FileId),
    /// Nothing: they are unordered.
    Nothing,
}

/// How two keys part (see [`Evaluator::parting`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Parting {
    /// Decided by the steps where they differ, whatever lies below.
    Decided(Rank),
    /// Two blocks given at one source of a file (`None`: no file): what lies below ranks
    /// by whether it was written in that file (`Evaluator::rank_below`).
    Below(Option<FileId>),
    /// The same key, whose last source is of that file: what lies below ranks by its own
    /// keys, then by that file.
    Same(Option<FileId>),
}

impl Parting {
    /// The same, but for the file of the place: only a definition written in that file
    /// ranks by it, and below the statements of two sides copied from one file, the
    /// places where their paths pass are files that import them (a definition there
    /// would be an import cycle).
    fn alike(self, other: Parting) -> bool {
        match (self, other) {
            (Parting::Below(_), Parting::Below(_)) | (Parting::Same(_), Parting::Same(_)) => true,
            (a, b) => a == b,
        }
    }
}

enum TopKind {
    Assign,
    Merge,
    /// `~(name)>`, the name in lower case (borrowed for the standard mutators, which are
    /// nearly all of them: no allocation per fold).
    Func(std::borrow::Cow<'static, str>),
    Mixed,
}

impl<'a> Evaluator<'a> {
    /// How definition `a` ranks against definition `b` (docs/semantics.md §"Priority").
    pub(crate) fn rank(&self, a: DefId, b: DefId) -> Rank {
        self.rank_and_decider(a, b).0
    }

    /// [`Evaluator::rank`], with what decided it, for a trace to say why one definition
    /// outranked another (`Evaluator::why_outranked`).
    pub(crate) fn rank_and_decider(&self, a: DefId, b: DefId) -> (Rank, Decider) {
        let (da, db) = (self.def(a), self.def(b));
        match self.key_parting(&da.prio, &db.prio) {
            KeyParting::Decided(rank, decider) => (rank, decider),
            KeyParting::Below(shared) | KeyParting::End { shared, .. } => {
                self.rank_below(shared, da.file, db.file)
            }
        }
    }

    /// The walk of two priority keys that [`Evaluator::rank`] and [`Evaluator::parting`]
    /// share: where they part, and how that decides the rank. The last source step the
    /// keys share is kept as found (its file is looked up only if needed: `rank` is hot).
    fn key_parting(&self, ka: &[Step], kb: &[Step]) -> KeyParting {
        let mut shared = None;
        for (sa, sb) in ka.iter().zip(kb.iter()) {
            if sa == sb {
                if let Step::Src(inst, node) = sa {
                    shared = Some((*inst, *node));
                }
                continue;
            }
            return match (sa, sb) {
                (Step::Src(ia, na), Step::Src(ib, nb)) if ia == ib => {
                    let Some(inst) = self.insts.get(ia.0 as usize) else {
                        return KeyParting::Decided(Rank::Unordered, Decider::Nothing);
                    };
                    let imports = |from: u32, to: u32| Decider::Imports {
                        inst: *ia,
                        from,
                        to,
                    };
                    if inst.reaches(*na, *nb) {
                        KeyParting::Decided(Rank::Higher, imports(*na, *nb))
                    } else if inst.reaches(*nb, *na) {
                        KeyParting::Decided(Rank::Lower, imports(*nb, *na))
                    } else {
                        KeyParting::Decided(Rank::Unordered, Decider::Nothing)
                    }
                }
                (Step::Seq(x), Step::Seq(y)) => match x.cmp(y) {
                    Ordering::Greater => KeyParting::Decided(Rank::Higher, Decider::LaterInChain),
                    Ordering::Less => KeyParting::Decided(Rank::Lower, Decider::LaterInChain),
                    Ordering::Equal => KeyParting::Decided(Rank::Unordered, Decider::Nothing),
                },
                // Two blocks given at one place (`S ~> import(f)` and `S ~> { A => 1 }` in
                // one file): their members part here.
                (Step::Src(ia, na), Step::Src(ib, nb)) => {
                    match self.rank_value_imports(*ia, *na, *ib, *nb) {
                        Some((rank, decider)) => KeyParting::Decided(rank, decider),
                        None => KeyParting::Below(shared),
                    }
                }
                _ => KeyParting::Decided(Rank::Unordered, Decider::Nothing),
            };
        }
        KeyParting::End {
            same_length: ka.len() == kb.len(),
            shared,
        }
    }

    /// Two sources of different blocks merged into one resource, at least one of them a
    /// file imported as a value (`S ~> import(web)` beside `S ~> import(common)` or
    /// `S ~> { import(common) }`): the one whose file imports the other's file, directly or
    /// indirectly, outranks it (clarifications §5), as if both were imported into one
    /// block. `None` if neither reaches the other, or both are one file.
    fn rank_value_imports(
        &self,
        ia: InstId,
        na: u32,
        ib: InstId,
        nb: u32,
    ) -> Option<(Rank, Decider)> {
        let is_value_import = |inst: InstId| self.value_import_insts.contains(&inst);
        if !is_value_import(ia) && !is_value_import(ib) {
            return None;
        }
        let (a, b) = (
            self.insts.get(ia.0 as usize)?,
            self.insts.get(ib.0 as usize)?,
        );
        let (fa, fb) = (*a.files.get(na as usize)?, *b.files.get(nb as usize)?);
        if fa == fb {
            return None;
        }
        // Whether `from` of `inst` reaches a node of `file`.
        let reaches_file = |inst: &Instance, from: u32, file: FileId| {
            (inst.files.iter())
                .zip(0u32..)
                .any(|(f, n)| *f == file && inst.reaches(from, n))
        };
        if reaches_file(a, na, fb) {
            Some((Rank::Higher, Decider::FileImports { from: fa, to: fb }))
        } else if reaches_file(b, nb, fa) {
            Some((Rank::Lower, Decider::FileImports { from: fb, to: fa }))
        } else {
            None
        }
    }

    /// Two definitions below one place (`shared`: source `node` of instance `inst`), whose
    /// keys part there or one of which ends there: a definition written in that place's
    /// file outranks one written in another file, which reached the place through an import
    /// the file makes inside the block it gives there (`S ~> import(f)` beside
    /// `S ~> { A => 1 }`): a file's own mutations outrank those of every file reachable
    /// through its imports (clarifications §5). Otherwise they are unordered (two
    /// definitions of the file itself are its own duplicates; two imported files are not
    /// ordered by this place).
    fn rank_below(&self, shared: Option<(InstId, u32)>, a: FileId, b: FileId) -> (Rank, Decider) {
        if a == b {
            return (Rank::Unordered, Decider::Nothing);
        }
        match self.place_file(shared) {
            Some(f) if a == f => (Rank::Higher, Decider::OwnFile(f)),
            Some(f) if b == f => (Rank::Lower, Decider::OwnFile(f)),
            _ => (Rank::Unordered, Decider::Nothing),
        }
    }

    /// The file of a place two keys share (source `node` of instance `inst`).
    fn place_file(&self, shared: Option<(InstId, u32)>) -> Option<FileId> {
        let (inst, node) = shared?;
        let inst = self.insts.get(inst.0 as usize)?;
        inst.files.get(node as usize).copied()
    }

    /// Folds a slot's definitions into its value.
    pub(crate) fn fold_slot(&mut self, s: SlotId) -> R<(Val, Outcome)> {
        let mut outcome = Outcome::recording(self.opts.trace);
        let defs = &self.slot(s).defs;
        if let [only] = defs[..] {
            if matches!(self.def(only).op, Op::Assign | Op::Merge) {
                return self.fold_lone(only, outcome);
            }
        }
        let distinct = self.distinct_definitions(s);
        if let (Some(kept), true) = (&distinct, self.opts.trace) {
            for &d in &self.slot(s).defs {
                if !kept.contains(&d) {
                    outcome.repeated(d);
                }
            }
        }
        let defs = match &distinct {
            Some(defs) => defs,
            None => &self.slot(s).defs,
        };
        let special = |d: &DefId| {
            let op = &self.def(*d).op;
            op.is_func("final") || op.is_func("default")
        };
        let (mut finals, mut defaults, mut normal) = (Defs::new(), Defs::new(), Defs::new());
        if defs.iter().any(special) {
            for &d in defs {
                let op = &self.def(d).op;
                if op.is_func("final") {
                    finals.push(d);
                } else if op.is_func("default") {
                    defaults.push(d);
                } else {
                    normal.push(d);
                }
            }
        } else {
            // Nearly every resource: neither `final` nor `default` definitions.
            normal = defs.clone();
        }
        if !finals.is_empty() {
            if let Some((v, givers)) = self.agreeing(s, &finals, "final")? {
                outcome.rule("final");
                outcome.used(&givers);
                outcome.overridden(&normal);
                outcome.overridden(&defaults);
                return Ok((v, outcome));
            }
        }
        let normal = self.one_side_of_copies(normal, &mut outcome);
        let folded = self.fold_set(s, normal.clone(), &mut outcome)?;
        let value = match folded {
            Folded::Undefined => {
                // Every other definition was evaluated and gave no value: the fold has
                // listed each as such, so none is "overridden" here.
                if let Some((v, givers)) = self.agreeing(s, &defaults, "default")? {
                    outcome.rule("default");
                    outcome.used(&givers);
                    return Ok((v, outcome));
                }
                for &d in &defaults {
                    outcome.undefined(d);
                }
                return Ok((Val::Undef, outcome));
            }
            Folded::Plain(v, _) => v,
            Folded::Merge(members) => self.merged_block(s, members),
        };
        // Defaults that the other definitions made unneeded, never evaluated.
        outcome.overridden(&defaults);
        Ok((value, outcome))
    }

    /// The definitions of `s` without those that repeat an earlier one word for word in
    /// the same place (the same operator and value text, in the same file, scope and
    /// priority), or `None` if none does: they mean the same, so they are left out of the
    /// fold, and repeating a definition changes nothing — not even by comparing the two,
    /// which would evaluate what nothing needs, or make a member that reads its own
    /// resource (`S => { A => 1, B => $S.A }` twice) a cycle (semantics §6).
    fn distinct_definitions(&self, s: SlotId) -> Option<Defs> {
        let defs = &self.slot(s).defs;
        if defs.len() < 2 {
            return None;
        }
        // Only operators for which a repeat changes nothing: `X ~(sum)> 1` twice is 2,
        // and `X ~> { A ~(sum)> 1 }` twice gives A 2. The priority key tells apart the
        // mutations of one chain (`X => 1 ~> { A => 2 } => 1`), which apply in turn.
        let idempotent = |op: &Op<'a>| match op {
            Op::Assign => true,
            Op::Func(_) => ["final", "default", "max", "min"]
                .iter()
                .any(|f| op.is_func(f)),
            _ => false,
        };
        let same_op = |a: &Op<'a>, b: &Op<'a>| match (a, b) {
            (Op::Assign, Op::Assign) => true,
            (Op::Func(x), Op::Func(y)) => x.name.eq_ignore_ascii_case(&y.name),
            _ => false,
        };
        // Most resources with several definitions merge or sum (`~>`, `~(sum)>`): nothing
        // to look for.
        defs.iter()
            .filter(|&&d| idempotent(&self.def(d).op))
            .nth(1)?;
        // The definitions that could repeat another: (index, scope, path position, span).
        let candidates: smallvec::SmallVec<[(usize, ScopeId, usize, Span); 8]> = defs
            .iter()
            .enumerate()
            .filter_map(|(i, &d)| {
                let def = self.def(d);
                match &def.body {
                    _ if !idempotent(&def.op) => None,
                    Body::Expr(e, scope) => Some((i, *scope, usize::MAX, e.span)),
                    Body::Implicit {
                        def: rd,
                        next,
                        scope,
                    } => Some((i, *scope, *next, rd.span)),
                    _ => None,
                }
            })
            .collect();
        if candidates.len() < 2 {
            return None;
        }
        let text = |span: Span| {
            self.loader
                .file(span.file)
                .and_then(|f| f.text.get(span.start as usize..span.end as usize))
        };
        let def_of = |i: usize| defs.get(i).map(|&d| self.def(d));
        let same = |a: &(usize, ScopeId, usize, Span), b: &(usize, ScopeId, usize, Span)| {
            a.1 == b.1
                && a.2 == b.2
                && a.3.end.wrapping_sub(a.3.start) == b.3.end.wrapping_sub(b.3.start)
                && match (def_of(a.0), def_of(b.0)) {
                    (Some(x), Some(y)) => x.prio == y.prio && same_op(&x.op, &y.op),
                    _ => false,
                }
                && text(a.3).is_some_and(|t| Some(t) == text(b.3))
        };
        let mut repeats: smallvec::SmallVec<[usize; 4]> = smallvec::SmallVec::new();
        if candidates.len() <= 32 {
            for (j, c) in candidates.iter().enumerate() {
                if candidates.iter().take(j).any(|e| same(e, c)) {
                    repeats.push(c.0);
                }
            }
        } else {
            // Bucketed by text: a block written line by line (`Root.aN => ...`, 100,000
            // times) has as many definitions of `Root`.
            let mut seen: std::collections::HashMap<&str, Vec<usize>, foldhash::fast::RandomState> =
                Default::default();
            for (j, c) in candidates.iter().enumerate() {
                let Some(t) = text(c.3) else { continue };
                let earlier = seen.entry(t).or_default();
                let repeat = earlier
                    .iter()
                    .any(|&e| candidates.get(e).is_some_and(|e| same(e, c)));
                if repeat {
                    repeats.push(c.0);
                } else {
                    earlier.push(j);
                }
            }
        }
        if repeats.is_empty() {
            return None;
        }
        // `repeats` is in increasing order: walked along, not searched.
        let mut next_repeat = repeats.iter().copied().peekable();
        let distinct: Defs = defs
            .iter()
            .enumerate()
            .filter(|&(i, _)| {
                let repeat = next_repeat.peek() == Some(&i);
                if repeat {
                    next_repeat.next();
                }
                !repeat
            })
            .map(|(_, &d)| d)
            .collect();
        Some(distinct)
    }

    /// A resource whose one definition is `=>` or `~>`: its value, as the general fold
    /// finds it (`~>` over nothing is `=>`, clarifications §5), without ranking anything.
    /// Most resources are such.
    fn fold_lone(&mut self, d: DefId, mut outcome: Outcome) -> R<(Val, Outcome)> {
        let v = self.def_value(d)?;
        if v.is_undef() {
            outcome.undefined(d);
            return Ok((Val::Undef, outcome));
        }
        outcome.rule(match self.def(d).op {
            Op::Merge => "merge (nothing below: assignment)",
            _ => "assignment",
        });
        outcome.used(&[d]);
        Ok((v, outcome))
    }

    /// Definitions that must all give the same value (`final`s, `default`s); the value
    /// kept among them (as for equal `=>`s), or `None` if all are undefined.
    /// With the value, every definition that gave it (for the trace), the kept one first.
    fn agreeing(&mut self, s: SlotId, defs: &[DefId], what: &str) -> R<Option<(Val, Defs)>> {
        let mut found: Vec<(DefId, Val)> = Vec::new();
        for &d in defs {
            let v = self.def_value(d)?;
            if !v.is_undef() {
                found.push((d, v));
            }
        }
        let givers: Defs = found.iter().map(|(d, _)| *d).collect();
        // Blocks with the same member names are agreed on member by member, when needed,
        // as unordered `=>` blocks are.
        let agreed = if several_blocks(&found) {
            self.agreed_if_alike(s, &givers, &found)?
        } else {
            None
        };
        let (d, v) = match agreed {
            Some(agreed) => agreed,
            None => {
                let Some((fd, first)) = found.first().cloned() else {
                    return Ok(None);
                };
                for (d, v) in found.iter().skip(1) {
                    if self.equal(&first, v, self.def(*d).site)? {
                        continue;
                    }
                    // Copies of a member of unordered blocks: the blocks' conflict.
                    if let Some(e) = self.agreed_member_conflict(s, &[fd, *d]) {
                        return Err(e);
                    }
                    let path = self.slot_path(s);
                    return Err(EvalError::new(
                        Diagnostic::error(format!(
                            "`{path}` has two different `~({what})>` values"
                        ))
                        .at(self.def(*d).site)
                        .with_label(format!("gives {}", v.describe()))
                        .also(self.def(fd).site, format!("gives {}", first.describe()))
                        .resource(path.to_string())
                        .hint(format!(
                            "a resource can have only one {what} value; remove one"
                        )),
                    ));
                }
                self.kept_among_equal(found, (fd, first))?
            }
        };
        let mut used: Defs = smallvec::smallvec![d];
        used.extend(givers.into_iter().filter(|g| *g != d));
        Ok(Some((v, used)))
    }

    /// Where a resource's value is decided, for messages given after the evaluation: the
    /// first of its definitions that no other outranks.
    pub(crate) fn top_site(&self, s: SlotId) -> Span {
        let defs = &self.slot(s).defs;
        let (tops, _) = self.tops(&Ranking::default(), defs);
        match tops.first() {
            Some(d) => self.def(*d).site,
            None => self.slot_site(s),
        }
    }

    /// The priority order among `set`, compared once per fold (see [`Ranking`]).
    fn ranking(&self, set: &[DefId]) -> Ranking {
        let mut r = Ranking::default();
        // Definitions rank alike when their keys and files are the same (`rank` looks at
        // the file below a shared place).
        type Group<'k> = (&'k Key, FileId);
        let mut index: Option<
            std::collections::HashMap<Group, usize, foldhash::fast::RandomState>,
        > = None;
        for &d in set {
            let def = self.def(d);
            let (prio, file) = (&def.prio, def.file);
            let found = match &index {
                Some(map) => map.get(&(prio, file)).copied(),
                None => r.keys.iter().position(|&k| {
                    let other = self.def(k);
                    other.prio == *prio && other.file == file
                }),
            };
            let i = match found {
                Some(i) => i,
                None => {
                    r.keys.push(d);
                    let i = r.keys.len() - 1;
                    if let Some(map) = &mut index {
                        map.insert((prio, file), i);
                    } else if r.keys.len() > KEYS_SEARCHED {
                        let keys = r.keys.iter().enumerate();
                        index = Some(
                            keys.map(|(j, &k)| {
                                let other = self.def(k);
                                ((&other.prio, other.file), j)
                            })
                            .collect(),
                        );
                    }
                    i
                }
            };
            r.key_of.push((d, i));
        }
        r.key_of.sort_unstable_by_key(|(d, _)| d.0);
        if r.keys.len() > RANKED_KEYS_MAX {
            // No rows of bits: [`Evaluator::tops_compared`] compares keys.
            return r;
        }
        // One comparison per pair gives both directions.
        let words = r.keys.len().div_ceil(64);
        r.words = words;
        r.above.resize(r.keys.len() * words, 0);
        for (i, &a) in r.keys.iter().enumerate() {
            for (j, &b) in r.keys.iter().enumerate().skip(i + 1) {
                let (lower, higher) = match self.rank(a, b) {
                    Rank::Higher => (j, i),
                    Rank::Lower => (i, j),
                    Rank::Unordered => continue,
                };
                if let Some(w) = r.above.get_mut(lower * words + higher / 64) {
                    *w |= 1 << (higher % 64);
                }
            }
        }
        r
    }

    /// The definitions of `set` that nothing in `set` outranks, and the others.
    fn tops(&self, ranking: &Ranking, set: &[DefId]) -> (Defs, Defs) {
        if let [only] = set {
            return (smallvec::smallvec![*only], Defs::new());
        }
        if ranking.keys.len() == 1 {
            return (Defs::from_slice(set), Defs::new());
        }
        if ranking.keys.is_empty() {
            // Not ranked yet (a fold ranks sets of two or more once, up front).
            return self.tops(&self.ranking(set), set);
        }
        if ranking.words == 0 {
            return self.tops_compared(ranking, set);
        }
        let mut present: smallvec::SmallVec<[u64; 2]> = smallvec::smallvec![0; ranking.words];
        for &d in set {
            if let Some(i) = ranking.key(d) {
                if let Some(w) = present.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
            }
        }
        // Only the words of `present` that hold a definition can meet a row, and its last
        // and first such words are looked at first: in a long chain (a statement of 20,000
        // mutations, or as many files each importing the next) the set left is a run of the
        // keys, which a row that meets it meets at one of its ends, so the fold stays
        // quadratic rather than cubic.
        let first = present.iter().position(|w| *w != 0).unwrap_or(0);
        let last = present
            .iter()
            .rposition(|w| *w != 0)
            .unwrap_or(0)
            .max(first);
        let meets = |above: &[u64]| {
            let word = |w: usize| match (above.get(w), present.get(w)) {
                (Some(a), Some(p)) => a & p != 0,
                _ => false,
            };
            word(last) || word(first) || (first + 1..last).any(word)
        };
        let mut tops = Defs::new();
        let mut rest = Defs::new();
        for &d in set {
            let is_top = ranking.key(d).is_some_and(|i| {
                let above = ranking.above(i);
                !above.is_empty() && !meets(above)
            });
            if is_top {
                tops.push(d);
            } else {
                rest.push(d);
            }
        }
        (tops, rest)
    }

    /// [`Evaluator::tops`] by comparing keys, for sets with too many distinct keys to
    /// keep rows of bits for.
    fn tops_compared(&self, ranking: &Ranking, set: &[DefId]) -> (Defs, Defs) {
        // Definitions with the same key rank alike, so each distinct key is compared once.
        // Priority is a strict partial order, so a key outranked by one already dropped is
        // outranked by whatever dropped it: comparing each key with the tops found so far
        // is enough, O(k · tops) rather than O(k²).
        let keys = &ranking.keys;
        let mut met = vec![false; keys.len()];
        let mut top_keys: smallvec::SmallVec<[usize; 8]> = smallvec::SmallVec::new();
        for &d in set {
            let Some(i) = ranking.key(d) else { continue };
            match met.get_mut(i) {
                Some(m) if !*m => *m = true,
                _ => continue,
            }
            let outranks = |a: usize, b: usize| match (keys.get(a), keys.get(b)) {
                (Some(&a), Some(&b)) => self.rank(a, b) == Rank::Higher,
                _ => false,
            };
            if top_keys.iter().any(|&t| outranks(t, i)) {
                continue;
            }
            top_keys.retain(|t| !outranks(i, *t));
            top_keys.push(i);
        }
        let mut is_top = vec![false; keys.len()];
        for t in top_keys {
            if let Some(x) = is_top.get_mut(t) {
                *x = true;
            }
        }
        let mut tops = Defs::new();
        let mut rest = Defs::new();
        for &d in set {
            let top = ranking
                .key(d)
                .and_then(|i| is_top.get(i).copied())
                .unwrap_or(false);
            if top {
                tops.push(d);
            } else {
                rest.push(d);
            }
        }
        (tops, rest)
    }

    /// The one value of unordered tops that assign (`=>`, or `~>` over nothing): they
    /// must all be equal, else it is a conflict (semantics §6); `values` is not empty.
    /// Blocks are compared member by member, each when it is needed
    /// ([`Evaluator::agreed_block`]).
    fn equal_tops(&mut self, s: SlotId, tops: &[DefId], values: TopValues) -> R<(DefId, Val)> {
        let Some((first_def, first)) = values.first().cloned() else {
            return Err(self.order_error(s, tops));
        };
        if several_blocks(&values) {
            return match self.agreed_if_alike(s, tops, &values)? {
                Some(agreed) => Ok(agreed),
                None => Err(self.order_error(s, tops)),
            };
        }
        // The shapes first (kinds, list lengths), which evaluate nothing, then the values:
        // whether tops of different shapes are reported as a conflict, or as the error of
        // a member compared first, must not depend on the order they were written in.
        for (d, v) in values.iter().skip(1) {
            if !self.same_shape(&first, v, self.def(*d).site)? {
                return Err(self.order_error(s, tops));
            }
        }
        for (d, v) in values.iter().skip(1) {
            if !self.equal(&first, v, self.def(*d).site)? {
                return Err(self.order_error(s, tops));
            }
        }
        self.kept_among_equal(values.into_iter().collect(), (first_def, first))
    }

    /// Unordered blocks (`blocks`, several, given by `tops`): the block they agree on
    /// ([`Evaluator::agreed_block`]) if they have the same member names, else `None`. They
    /// are built first, and where several fail to be, every failure is reported, in the
    /// order of their places, so which is read first does not decide the error.
    fn agreed_if_alike(
        &mut self,
        s: SlotId,
        tops: &[DefId],
        blocks: &[(DefId, Val)],
    ) -> R<Option<(DefId, Val)>> {
        let mut failed: Option<EvalError> = None;
        for (d, v) in blocks {
            if let Val::Block(b) = v {
                if let Err(e) = self.member_count(*b, self.def(*d).site) {
                    failed = Some(match failed {
                        Some(earlier) => self.both_errors(earlier, e),
                        None => e,
                    });
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let Some((_, first)) = blocks.first() else {
            return Ok(None);
        };
        for (d, v) in blocks.iter().skip(1) {
            if !self.same_shape(first, v, self.def(*d).site)? {
                return Ok(None);
            }
        }
        self.agreed_block(s, tops, blocks).map(Some)
    }

    /// The block that unordered blocks with the same member names (`blocks`, two or more)
    /// agree on, compared lazily (semantics §6, "Equal blocks"): each member holds one
    /// [`Body::Agreed`] definition per block, all at one priority, so folding the member
    /// compares the blocks' values of it as unordered `=>`s — only when the member is
    /// needed. A member a higher definition overrides (a host's `Ntp.Server => $Local`
    /// over two aspects' equal `Ntp` blocks) is then never evaluated nor compared, however
    /// the override is written, and an unused private member is never evaluated. It
    /// stands for the block read first, whose member order it has (clarifications §7).
    fn agreed_block(
        &mut self,
        s: SlotId,
        tops: &[DefId],
        blocks: &[(DefId, Val)],
    ) -> R<(DefId, Val)> {
        // Every top has its copies, also where several give one block (`S => $D` in two
        // files): a conflict names every file involved.
        let copies_of: smallvec::SmallVec<[(DefId, BlockId); 4]> = blocks
            .iter()
            .filter_map(|(d, v)| match v {
                Val::Block(b) => Some((*d, *b)),
                _ => None,
            })
            .collect();
        let Some(&(first_def, first)) = copies_of
            .iter()
            .min_by(|x, y| self.def(x.0).order.cmp(&self.def(y.0).order))
        else {
            return Err(self.order_error(s, tops));
        };
        if copies_of.iter().all(|(_, b)| *b == first) {
            return Ok((first_def, Val::Block(first)));
        }
        let order = self.members(first, self.def(first_def).site)?;
        let agreed = self.new_block(Place::Of(s), BlockState::Built);
        // Agreed on blocks a secret selector picked: as secret as they are.
        if let Some(origin) = copies_of.iter().find_map(|(_, b)| self.picked_origin(b)) {
            self.selected_in_secret.insert(agreed, origin);
        }
        let mut names: NameMap<'a, SlotId> = NameMap::default();
        // One file for every copy of a member: definitions rank alike only with the same
        // key and file (`ranking`), and the copies must stay unordered.
        let file = self.def(first_def).file;
        // A block written for this resource gives its members with their `~(final)>` and
        // `~(default)>`; another resource's block, or a file imported as a value, by their
        // final values, as a merge takes it (`merge_by_value`).
        let written: smallvec::SmallVec<[bool; 4]> = copies_of
            .iter()
            .map(|&(_, b)| self.written_for(b, s))
            .collect();
        for (i, (name, _)) in order.into_iter().enumerate() {
            let mut copies: smallvec::SmallVec<[(DefId, SlotId, MemberMode); 4]> =
                smallvec::SmallVec::new();
            for (&(d, b), &written) in copies_of.iter().zip(&written) {
                // Every block has the member: their shapes were compared.
                if let Some(member) = self.member(b, &name, self.def(d).site)? {
                    copies.push((d, member, self.member_mode(member, written)));
                }
            }
            // How a member merges (`private`, `~(final)>`, `~(default)>`) is part of the
            // blocks' shape: which block is taken would change the result.
            if let Some(&(_, _, one)) = copies.first() {
                if let Some(&(_, _, other)) = copies.iter().find(|c| c.2 != one) {
                    return Err(self.mode_conflict(s, tops, &name, one, other));
                }
            }
            let defs: Defs = copies
                .iter()
                .map(|&(d, member, mode)| self.agreed_member_def(member, mode, i, d, file))
                .collect();
            // Private if it is in any block, as for a merged member.
            let private = defs.iter().any(|d| self.def(*d).private);
            let slot = self.push_slot(name.clone(), agreed, defs, private);
            names.insert(name, slot);
        }
        // What the literals' inline statements read is checked against the members agreed
        // on (a copy `?` where another gives a value), and against the block they end up
        // merged into (a host's `S.t => false`), as for a literal merged directly
        // (`merged_block`, semantics §3); files imported into them see the final block.
        for (&(_, b), &written) in copies_of.iter().zip(&written) {
            if !written || self.merged_into.contains_key(&b) {
                continue;
            }
            self.merged_into.insert(b, agreed);
            self.check_inline_reads_of(b, &names);
            self.agreed_literals.entry(agreed).or_default().push(b);
        }
        self.block_mut(agreed).members = names;
        Ok((first_def, Val::Block(agreed)))
    }

    /// Whether block `b` was written for resource `s` (its literal, or one of the blocks
    /// agreed on for it), rather than being another resource's value or a file imported as
    /// a value.
    fn written_for(&self, b: BlockId, s: SlotId) -> bool {
        matches!(self.block(b).place, Place::Of(owner) if owner == s || self.agrees_on(s, owner))
            && self.value_import_file(b).is_none()
    }

    /// The blocks' conflict where copies of member `name` of the blocks given to `s` differ
    /// in how they merge (`one` and `other`).
    fn mode_conflict(
        &self,
        s: SlotId,
        tops: &[DefId],
        name: &str,
        one: MemberMode,
        other: MemberMode,
    ) -> EvalError {
        // For nested agreed blocks, the conflict of the outermost ones, naming the member
        // by its path from there.
        let (mut e, member) = match self.agreed_outer(s, tops) {
            Some((outer, wholes)) => (
                self.order_error(outer, &wholes),
                format!("{}.{name}", self.path_below(s, outer)),
            ),
            None => (self.order_error(s, tops), name.to_string()),
        };
        let differs = if one.private != other.private {
            "`private`"
        } else if one.fixed != other.fixed {
            "given with `~(final)>`"
        } else {
            "given only with `~(default)>`"
        };
        e.diag.notes.push(format!(
            "the blocks differ in how member `{member}` is defined: {differs} in one, not in another"
        ));
        e
    }

    /// What decides how member `m` of a block merges, beyond its value; of a block not
    /// `written` for the resource, only its privacy, which travels with the value (§14).
    fn member_mode(&self, m: SlotId, written: bool) -> MemberMode {
        let slot = self.slot(m);
        let ops = || slot.defs.iter().map(|d| &self.def(*d).op);
        MemberMode {
            private: slot.private || slot.defs.iter().any(|d| self.def(*d).private),
            fixed: written && ops().any(|op| op.is_func("final")),
            default: written && ops().next().is_some() && ops().all(|op| op.is_func("default")),
        }
    }

    /// The [`Body::Agreed`] definition standing for member `member` (the `index`th of the
    /// agreed block) of the block that definition `of` gave: a `=>` of the member's final
    /// value, shown at the member's first definition; a `~(final)>` if the member has one
    /// (it decides above any priority, as it would had the block been kept), and a
    /// `~(default)>` if it has only those (it gives way to any other definition).
    fn agreed_member_def(
        &mut self,
        member: SlotId,
        mode: MemberMode,
        index: usize,
        of: DefId,
        file: FileId,
    ) -> DefId {
        let slot = self.slot(member);
        let site = slot
            .defs
            .iter()
            .map(|d| self.def(*d))
            .min_by(|x, y| x.order.cmp(&y.order))
            .map_or(self.def(of).site, |def| def.site);
        let op = slot
            .defs
            .iter()
            .map(|d| &self.def(*d).op)
            .find(|op| {
                (mode.fixed && op.is_func("final")) || (mode.default && op.is_func("default"))
            })
            .cloned()
            .unwrap_or(Op::Assign);
        self.new_def(Def {
            op,
            body: Body::Agreed { member, whole: of },
            prio: Key::new(),
            order: smallvec::smallvec![index as u32],
            private: mode.private,
            site,
            file,
        })
    }

    /// Of equal values of unordered definitions (`values`, not empty; `fallback` if it is),
    /// the one kept (docs/semantics.md §6). Equal values may differ in form (3 and 3.0,
    /// [1] and [1.0]): one is chosen by form, never by which was read first, so the order
    /// of statements and imports does not change it. But a block's members come in the
    /// order of their first appearance (clarifications §7): among values of the same forms
    /// the one read first is kept, and where the block read first lists its members in
    /// another order than the kept one, the kept block is shown in that order.
    fn kept_among_equal(
        &mut self,
        values: Vec<(DefId, Val)>,
        fallback: (DefId, Val),
    ) -> R<(DefId, Val)> {
        let mut values = values.into_iter();
        let Some((mut kept_def, mut kept)) = values.next() else {
            return Ok(fallback);
        };
        let (mut first_def, mut first) = (kept_def, kept.clone());
        for (d, v) in values {
            let at = self.def(d).site;
            if self.def(d).order < self.def(first_def).order {
                (first_def, first) = (d, v.clone());
            }
            // Of the same forms, the one read first: its blocks, nested ones too, list
            // their members in the order of their first appearance.
            let earlier = self.def(d).order < self.def(kept_def).order;
            match self.form_cmp(&v, &kept, false, at)? {
                Ordering::Less => (kept_def, kept) = (d, v),
                Ordering::Equal if earlier => (kept_def, kept) = (d, v),
                _ => {}
            }
        }
        if kept_def != first_def {
            kept = self.in_order_of(kept, &first, self.def(kept_def).site)?;
        }
        Ok((kept_def, kept))
    }

    /// Block `kept` with its members in the order `first` (an equal block) lists them: a
    /// new block holding the same members, where the orders differ. Other values as they
    /// are.
    fn in_order_of(&mut self, kept: Val, first: &Val, at: Span) -> R<Val> {
        let (&Val::Block(k), &Val::Block(f)) = (&kept, first) else {
            return Ok(kept);
        };
        let order = self.members(f, at)?;
        let kept_order = self.members(k, at)?;
        if order
            .iter()
            .map(|(n, _)| n)
            .eq(kept_order.iter().map(|(n, _)| n))
        {
            return Ok(kept);
        }
        let place = self.block(k).place.clone();
        let view = self.new_block(place, BlockState::Built);
        for (name, _) in order {
            if let Some(&slot) = self.block(k).members.get(&*name) {
                self.block_mut(view).members.insert(name, slot);
            }
        }
        Ok(Val::Block(view))
    }

    fn top_kind(&self, tops: &[DefId]) -> TopKind {
        let mut kind: Option<TopKind> = None;
        for &d in tops {
            let k = match &self.def(d).op {
                Op::Assign => TopKind::Assign,
                Op::Merge => TopKind::Merge,
                Op::Func(ident) => TopKind::Func(crate::mutators::lower_name(&ident.name)),
            };
            kind = Some(match (kind, k) {
                (None, k) => k,
                (Some(TopKind::Assign), TopKind::Assign) => TopKind::Assign,
                (Some(TopKind::Merge), TopKind::Merge) => TopKind::Merge,
                (Some(TopKind::Func(a)), TopKind::Func(b)) if a == b => TopKind::Func(a),
                _ => TopKind::Mixed,
            });
        }
        kind.unwrap_or(TopKind::Mixed)
    }

    /// Folds `set` (see the module documentation).
    pub(crate) fn fold_set(&mut self, s: SlotId, set: Defs, out: &mut Outcome) -> R<Folded<'a>> {
        if set.len() <= 1 {
            return self.fold_ranked(s, set, &Ranking::default(), out);
        }
        let ranking = self.ranking(&set);
        self.fold_ranked(s, set, &ranking, out)
    }

    /// Folds `set`, a subset of the definitions `ranking` was made for.
    fn fold_ranked(
        &mut self,
        s: SlotId,
        mut set: Defs,
        ranking: &Ranking,
        out: &mut Outcome,
    ) -> R<Folded<'a>> {
        // Values of tops already evaluated: a fold that drops an undefined top looks at
        // the remaining ones again, and must not evaluate them twice (a `warn` would warn
        // twice).
        // It is filled only when a top is dropped, which is rare, and is a map because a
        // resource may have thousands of unordered tops (a block written line by line).
        let mut evaluated = Evaluated::default();
        loop {
            if set.is_empty() {
                return Ok(Folded::Undefined);
            }
            let (mut tops, mut rest) = self.tops(ranking, &set);
            self.outranked_copies_below(ranking, &set, &mut tops, &mut rest);
            let kind = self.top_kind(&tops);
            // Tops with different operators conflict, unless the odd ones out are
            // undefined: they are evaluated too, before the conflict is reported.
            let mixed = matches!(kind, TopKind::Mixed);
            // Evaluate the tops; an undefined one is dropped and the fold looks again
            // (undefined ranks below every other mutation, clarifications §5).
            let mut values = TopValues::new();
            let mut dropped = false;
            // Every top is evaluated, and where several fail, all are reported in the
            // order of their places: which top is read first must not decide the error.
            let mut failed: Option<EvalError> = None;
            for &d in &tops {
                let v = match self.def_value_once(d, &evaluated) {
                    Ok(v) => v,
                    // Among mixed tops, one that fails counts as defined: the conflict is
                    // the error to report.
                    Err(_) if mixed => continue,
                    Err(e) => {
                        failed = Some(match failed {
                            Some(earlier) => self.both_errors(earlier, e),
                            None => e,
                        });
                        continue;
                    }
                };
                if v.is_undef() {
                    set.retain(|x| *x != d);
                    out.undefined(d);
                    dropped = true;
                } else {
                    values.push((d, v));
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
            if dropped {
                evaluated.extend(values);
                continue;
            }
            return match kind {
                TopKind::Assign => {
                    if values.is_empty() {
                        return Ok(Folded::Undefined);
                    }
                    let blocks = several_blocks(&values);
                    let (kept_def, kept) = self.equal_tops(s, &tops, values)?;
                    out.rule(if blocks {
                        // Not yet compared: each member is, where it is needed.
                        "assignment (unordered blocks, agreed on member by member)"
                    } else if tops.len() > 1 {
                        "assignment (equal unordered values)"
                    } else {
                        "assignment"
                    });
                    out.used(&tops);
                    out.overridden(&rest);
                    Ok(Folded::Plain(kept, Some(kept_def)))
                }
                TopKind::Merge => {
                    self.check_combinable_below(s, &tops, &mut rest, &kind, out)?;
                    out.used(&tops);
                    // What the fold below used, overrode or skipped is this value's too.
                    let mut below_outcome = out.below();
                    // Handed down, not copied, and this level's set let go: a chain of n
                    // mutations would otherwise hold n sets of up to n definitions.
                    drop(set);
                    let below = deep(|| self.fold_ranked(s, rest, ranking, &mut below_outcome))?;
                    out.absorb_below(below_outcome);
                    // `~>` over nothing is `=>` (clarifications §5): several such tops must
                    // be equal as `=>`s must, unless they are all blocks, which merge alike.
                    let all_blocks = values
                        .iter()
                        .all(|(_, v)| matches!(v.plain(), Val::Block(_)));
                    // A lone top whose copies were left out merges, as the copies would.
                    let lone = match &values[..] {
                        [(d, _)] => !self.copies_left_out.contains(d),
                        _ => false,
                    };
                    if matches!(below, Folded::Undefined)
                        && (lone || !all_blocks)
                        && !values.is_empty()
                    {
                        out.rule("merge (nothing below: assignment)");
                        let (d, v) = self.equal_tops(s, &tops, values)?;
                        return Ok(Folded::Plain(v, Some(d)));
                    }
                    out.rule("merge");
                    self.merge(s, &values, below)
                }
                TopKind::Func(name) => {
                    let (tops, values) = self.one_source_each(tops, values)?;
                    self.drop_copies_of_tops(&values, &mut rest, out)?;
                    let kind = TopKind::Func(name.clone());
                    self.check_combinable_below(s, &tops, &mut rest, &kind, out)?;
                    out.used(&tops);
                    out.function(&name);
                    let mut below_outcome = out.below();
                    let first_below = rest.first().copied();
                    drop(set);
                    // A mutation function is given the whole value below.
                    let below = deep(|| self.fold_ranked(s, rest, ranking, &mut below_outcome))?;
                    // The definition the value below came from, for errors about it.
                    // (A value a lower mutation computed has no single definition: the
                    // first of the lower ones stands for it.)
                    let below_def = match &below {
                        Folded::Plain(_, Some(d)) => Some(*d),
                        _ => first_below,
                    };
                    let below = match below {
                        Folded::Undefined => None,
                        Folded::Plain(v, _) => Some(v),
                        Folded::Merge(m) => Some(self.merged_block(s, m)),
                    };
                    // What another function made below is shown as the value this one was
                    // given; the same function's lower mutations are one fold with these.
                    if below_outcome.other_function_than(&name) {
                        out.layer_below(below_outcome, below.as_ref());
                    } else {
                        out.absorb_below(below_outcome);
                    }
                    let site = values.first().map(|(d, _)| self.def(*d).site);
                    // A standard mutation function reads its values as plain data
                    // (`crate::secret`); custom ones are never given secrets.
                    let v = if crate::mutators::STANDARD_MUTATORS.contains(&&*name) {
                        self.through_boundary(|ev| {
                            let values = values.into_iter().map(|(d, v)| (d, ev.open(v))).collect();
                            let below = below.map(|v| ev.open(v));
                            ev.apply_mutator(s, &name, &tops, values, (below, below_def), site)
                        })?
                    } else {
                        let values = values.into_vec();
                        let v =
                            self.apply_mutator(s, &name, &tops, values, (below, below_def), site)?;
                        if let (Val::Undef, Some(site)) = (&v, site) {
                            self.undefined_by_function
                                .insert(s, (name.to_string(), site));
                        }
                        v
                    };
                    Ok(Folded::Plain(v, None))
                }
                // `~>` where nothing lies below behaves as `=>` (clarifications §5): `=>`s and
                // such `~>`s are unordered assignments, fine if their values are equal. (A top
                // that failed to evaluate leaves the conflict to be reported.)
                TopKind::Mixed
                    if rest.is_empty()
                        && values.len() == tops.len()
                        && tops
                            .iter()
                            .all(|&d| matches!(self.def(d).op, Op::Assign | Op::Merge)) =>
                {
                    let (d, v) = self.equal_tops(s, &tops, values)?;
                    out.rule("assignment (equal unordered values; `~>` over nothing is `=>`)");
                    out.used(&tops);
                    Ok(Folded::Plain(v, Some(d)))
                }
                TopKind::Mixed => Err(self.order_error(s, &tops)),
            };
        }
    }

    /// A file reached along several paths into one resource is one source (clarifications
    /// §5): whatever outranks one copy of one of its statements outranks every copy, so a
    /// top that is a copy of a definition something outranks goes below. `a` and `b` both
    /// write `S ~> { import(c) }` and `a` also `X => 2`: `a` imports `c`, so `c`'s `X` is
    /// below `a`'s along `b`'s path as well — and along the main file's, when the main file
    /// imports `a` and writes the same literal (`diamond-literal-import-*`).
    fn outranked_copies_below(
        &self,
        ranking: &Ranking,
        set: &[DefId],
        tops: &mut Defs,
        rest: &mut Defs,
    ) {
        if rest.is_empty() {
            return;
        }
        // Nearly always no copies at all: look before building anything (copies share
        // their statement's place, so only definitions written at one place are compared).
        if !self.share_a_site(tops, rest)
            || !tops
                .iter()
                .any(|&t| rest.iter().any(|&r| self.same_statement(t, r)))
        {
            return;
        }
        let mut demoted = Defs::new();
        // Each round demotes at least one definition, so `set.len()` rounds suffice.
        for _ in 0..set.len() {
            let newly: Defs = tops
                .iter()
                .copied()
                .filter(|&t| {
                    set.iter().any(|&r| {
                        self.same_statement(t, r)
                            && set.iter().any(|&q| {
                                // Another statement of the copied file outranks the lower
                                // copy only by the path it came along: it is of the same
                                // source as `t`, not above it.
                                q != t
                                    && !self.same_statement(q, t)
                                    && self.def(q).file != self.def(t).file
                                    && self.rank(q, r) == Rank::Higher
                            })
                    })
                })
                .collect();
            if newly.is_empty() {
                break;
            }
            demoted.extend(newly);
            let remaining: Defs = set
                .iter()
                .copied()
                .filter(|d| !demoted.contains(d))
                .collect();
            let (t, _) = self.tops(ranking, &remaining);
            // Never all of them (only a contradiction between paths could do that).
            if t.is_empty() {
                return;
            }
            *tops = t;
        }
        if !demoted.is_empty() {
            *rest = set.iter().copied().filter(|d| !tops.contains(d)).collect();
        }
    }

    /// Definitions below the tops of a mutation function that are copies of a top (the
    /// same statement of one file reached along another path, giving an equal value) are
    /// that top again: one source counts once (clarifications §5), so `c`'s `X ~(sum)> 2`
    /// imported into `S` by the main file and by a file it imports adds 2, not 4.
    fn drop_copies_of_tops(
        &mut self,
        values: &TopValues,
        rest: &mut Defs,
        out: &mut Outcome,
    ) -> R<()> {
        let copies: Defs = rest
            .iter()
            .copied()
            .filter(|&r| {
                values
                    .iter()
                    .any(|(t, _)| self.same_statement_where(*t, r, Contexts::Copied))
            })
            .collect();
        for r in copies {
            let v = self.def_value(r)?;
            if self.copy_of_one(values, r, &v)? {
                rest.retain(|x| *x != r);
                out.repeated(r);
            }
        }
        Ok(())
    }

    /// Whether definition `d`, giving `v`, is a copy of one of `kept` (the same statement
    /// reached along another path, giving an equal value).
    fn copy_of_one(&mut self, kept: &[(DefId, Val)], d: DefId, v: &Val) -> R<bool> {
        for (k, kv) in kept {
            if self.same_statement_where(*k, d, Contexts::Copied)
                && self.equal(kv, v, self.def(d).site)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Unordered tops that a mutation function combines, with each definition reached
    /// along several paths kept once: a file imported into two blocks that merge into one
    /// resource (`S ~> { import(c) }` in two files) is one source (clarifications §5), so
    /// its `Y ~(sum)> 1` counts once. Copies are the same statement of the same file, in
    /// copies of one context (outside macro calls, or in the same call reached along both
    /// paths, `Evaluator::same_context`), that give equal values.
    fn one_source_each(&mut self, tops: Defs, values: TopValues) -> R<(Defs, TopValues)> {
        let has_copies = self.site_repeated(&tops)
            && values.iter().enumerate().any(|(i, (a, _))| {
                values
                    .iter()
                    .skip(i + 1)
                    .any(|(b, _)| self.same_statement_where(*a, *b, Contexts::Copied))
            });
        if !has_copies {
            return Ok((tops, values));
        }
        let mut kept = TopValues::new();
        for (d, v) in values {
            if !self.copy_of_one(&kept, d, &v)? {
                kept.push((d, v));
            }
        }
        // Every top has a value here (a fold of one function has no mixed tops).
        let tops = tops
            .into_iter()
            .filter(|t| kept.iter().any(|(k, _)| k == t))
            .collect();
        Ok((tops, kept))
    }

    /// Whether a definition of `a` may be written at the same place as one of `b` (true
    /// for few pairs, without looking). Copies of a statement always are, so where none
    /// is, there is no pair to compare (a host's paths over a base's would otherwise be
    /// compared pair by pair).
    fn share_a_site(&self, a: &[DefId], b: &[DefId]) -> bool {
        // Few pairs (nearly every fold): the caller's pairwise check, which compares the
        // places first, costs less than a set.
        if a.len().saturating_mul(b.len()) <= FEW_PAIRS {
            return true;
        }
        let sites: SiteSet = b.iter().map(|d| self.def(*d).site).collect();
        a.iter().any(|d| sites.contains(&self.def(*d).site))
    }

    /// Whether two of `defs` may be written at the same place (see
    /// [`Evaluator::share_a_site`]; thousands of unordered tops would otherwise be
    /// compared pair by pair).
    fn site_repeated(&self, defs: &[DefId]) -> bool {
        if defs.len().saturating_mul(defs.len()) <= FEW_PAIRS {
            return true;
        }
        let mut sites = SiteSet::default();
        defs.iter().any(|d| !sites.insert(self.def(*d).site))
    }

    /// `set` with the copies of a statement reached through another path into one resource
    /// left out, where every copy stands for the others exactly (semantics §6, "Copies"):
    /// a file imported into two blocks that merge (`S ~> { import(c) }` in `a` and in
    /// `b`) gives `S` two copies of each of its `~>` statements, and each copy's block
    /// brings a copy of everything below it, so files that reach one another in a diamond
    /// at each level would double the definitions per level. The definitions reached
    /// through one path (a *side*: those whose keys begin with that path's steps) are
    /// dropped when those of another side are their copies one for one, in the same order,
    /// ranked among themselves alike, ranked alike against every other definition, read
    /// later, and all `~>`: the copies then merge blocks that are copies of each other, and
    /// everything below them keeps its rank with what is outside, and only meets its own
    /// copies, with which it is unordered, as one source is (clarifications §5). Every
    /// rule of the fold treats such copies as one already (a sum counts one, equal `=>`s
    /// agree); this keeps them from multiplying.
    fn one_side_of_copies(&mut self, mut set: Defs, out: &mut Outcome) -> Defs {
        // Each round drops one side; a side holds at least one definition.
        for _ in 0..set.len() {
            match self.copied_side(&set) {
                Some((kept, side)) => {
                    for d in &side {
                        out.repeated(*d);
                    }
                    self.copies_left_out.extend(kept);
                    set.retain(|d| !side.contains(d));
                }
                None => break,
            }
        }
        set
    }

    /// A side of `set` that copies another exactly (see [`Evaluator::one_side_of_copies`]).
    /// With it, the side kept (whose definitions stand for their copies).
    fn copied_side(&self, set: &[DefId]) -> Option<(Defs, Defs)> {
        // A `~>` of a written value, or of the block of an implicit path (`Sub.K => 1`
        // writes `Sub ~> { K => 1 }`), whose copies give copies of one block.
        let merge_literal = |d: DefId| {
            let def = self.def(d);
            matches!(def.op, Op::Merge)
                && matches!(def.body, Body::Expr(..) | Body::Implicit { .. })
        };
        let same_statement = |a: DefId, b: DefId| self.same_statement_or_path(a, b);
        // Candidates for copies share a statement site: found by sorting, not by comparing
        // every pair (a block written line by line gives thousands of definitions).
        let mut sites: Vec<(FileId, u32, u32, usize)> = set
            .iter()
            .enumerate()
            .filter(|(_, &d)| merge_literal(d))
            .map(|(i, &d)| {
                let site = self.def(d).site;
                (site.file, site.start, site.end, i)
            })
            .collect();
        if sites.len() < 2 {
            return None;
        }
        sites.sort_unstable();
        let (a, b) = sites.windows(2).find_map(|w| match w {
            [x, y] if (x.0, x.1, x.2) == (y.0, y.1, y.2) => {
                let (a, b) = (*set.get(x.3)?, *set.get(y.3)?);
                same_statement(a, b).then_some((a, b))
            }
            _ => None,
        })?;
        // Where the two paths part: a source of one instance where two blocks were given,
        // so that whatever lies below one is unordered with whatever lies below the other
        // (`Parting::Below`).
        // Or two unordered sources of one block (`Sub ~> { import(c), import(d) }`, where
        // `c` and `d` both write `Sub ~> { import(e) }`): whatever lies below one is
        // unordered with whatever lies below the other, with no file that ranks by the place.
        let (ka, kb) = (&self.def(a).prio, &self.def(b).prio);
        let at = ka.iter().zip(kb.iter()).position(|(x, y)| x != y)?;
        let place = match (self.parting(ka, kb), ka.get(at), kb.get(at)) {
            (Some(Parting::Below(place)), _, _) => place,
            (Some(Parting::Decided(Rank::Unordered)), Some(Step::Src(..)), Some(Step::Src(..))) => {
                None
            }
            _ => return None,
        };
        let (pa, pb) = (ka.get(..=at)?, kb.get(..=at)?);
        let side_of = |p: &[Step]| -> Defs {
            set.iter()
                .copied()
                .filter(|&d| self.def(d).prio.starts_with(p))
                .collect()
        };
        let (side_a, side_b) = (side_of(pa), side_of(pb));
        if side_a.len() != side_b.len() {
            return None;
        }
        // The side read first is kept: its definitions come first in the set and in
        // reading order, so the merged block's member order and the first error met are
        // those of the fold of every copy.
        let position = |d: DefId| set.iter().position(|&x| x == d);
        let earlier_order = |x: &Order, y: &Order| {
            x.iter()
                .zip(y.iter())
                .find(|(p, q)| p != q)
                .is_some_and(|(p, q)| p < q)
        };
        for (&x, &y) in side_a.iter().zip(side_b.iter()) {
            let (dx, dy) = (self.def(x), self.def(y));
            if !merge_literal(x)
                || !same_statement(x, y)
                || position(x) >= position(y)
                || !earlier_order(&dx.order, &dy.order)
                // A definition written where the paths part would outrank the other
                // side's (`rank_below`).
                || place.is_some_and(|f| dx.file == f)
            {
                return None;
            }
        }
        // Ranked alike among themselves: the paths below the parting may pass through
        // other files (`a` and `b` each importing `c` and `d` in literals), which only
        // matters to definitions written in those files, above the copied statements.
        for (i, (&x, &y)) in side_a.iter().zip(side_b.iter()).enumerate() {
            for (&x2, &y2) in side_a.iter().zip(side_b.iter()).skip(i + 1) {
                let (kx, kx2) = (&self.def(x).prio, &self.def(x2).prio);
                let (ky, ky2) = (&self.def(y).prio, &self.def(y2).prio);
                match (self.parting(kx, kx2), self.parting(ky, ky2)) {
                    (Some(p), Some(q)) if p.alike(q) => {}
                    _ => return None,
                }
            }
        }
        // Ranked alike against everything else, exactly.
        for &o in set {
            if side_a.contains(&o) || side_b.contains(&o) {
                continue;
            }
            let ko = &self.def(o).prio;
            for (&x, &y) in side_a.iter().zip(side_b.iter()) {
                let p = self.parting(&self.def(x).prio, ko);
                if p.is_none() || p != self.parting(&self.def(y).prio, ko) {
                    return None;
                }
            }
        }
        Some((side_a, side_b))
    }

    /// How keys `ka` and `kb` part, which decides how any definitions placed below them
    /// (whose keys extend theirs) rank, as [`Evaluator::rank`] finds it; `None` if one is
    /// a proper prefix of the other.
    fn parting(&self, ka: &[Step], kb: &[Step]) -> Option<Parting> {
        match self.key_parting(ka, kb) {
            KeyParting::Decided(rank, _) => Some(Parting::Decided(rank)),
            KeyParting::Below(shared) => Some(Parting::Below(self.place_file(shared))),
            KeyParting::End {
                same_length: true,
                shared,
            } => Some(Parting::Same(self.place_file(shared))),
            KeyParting::End { .. } => None,
        }
    }

    /// [`Evaluator::same_statement`], or two copies of one step of one implicit path
    /// (`Sub.K => 1` reached along two paths), which give copies of one block.
    fn same_statement_or_path(&self, a: DefId, b: DefId) -> bool {
        let (da, db) = (self.def(a), self.def(b));
        match (&da.body, &db.body) {
            (
                Body::Implicit {
                    def: x,
                    next: nx,
                    scope: sx,
                },
                Body::Implicit {
                    def: y,
                    next: ny,
                    scope: sy,
                },
            ) => {
                let plain = |sc: ScopeId| {
                    let scope = self.scope(sc);
                    scope.params.is_none() && scope.captures.is_none()
                };
                a != b
                    && da.site == db.site
                    && da.file == db.file
                    && matches!((&da.op, &db.op), (Op::Merge, Op::Merge))
                    && std::ptr::eq(*x, *y)
                    && nx == ny
                    && plain(*sx)
                    && plain(*sy)
            }
            _ => self.same_statement(a, b),
        }
    }

    /// Two definitions made by one statement of one file reached along two paths, whose
    /// values cannot depend on the path's macro arguments or regex captures.
    fn same_statement(&self, a: DefId, b: DefId) -> bool {
        self.same_statement_where(a, b, Contexts::Plain)
    }

    /// Whether two scopes are copies of one context: the same macro call (the same call
    /// written in the same place, its arguments the same expressions in copies of one
    /// context, followed up to 64 calls out) or both outside any call, with regex captures
    /// in both or neither. A macro calling itself makes different contexts at each depth:
    /// the call written in its body is the same, but its arguments are read in the scope of
    /// the call one level out, which is not.
    fn same_context(&self, a: ScopeId, b: ScopeId) -> bool {
        let (mut a, mut b) = (a, b);
        for _ in 0..64 {
            if a == b {
                return true;
            }
            let (sa, sb) = (self.scope(a), self.scope(b));
            if sa.captures.is_some() != sb.captures.is_some() {
                return false;
            }
            let (pa, pb) = match (&sa.params, &sb.params) {
                (None, None) => return true,
                (Some(pa), Some(pb)) => (pa, pb),
                _ => return false,
            };
            let same_call = match (&sa.call, &sb.call) {
                (Some(ca), Some(cb)) => ca.call == cb.call,
                _ => false,
            };
            if !same_call || pa.len() != pb.len() {
                return false;
            }
            // The arguments' scopes are one scope (a call's arguments are read where it is
            // written), so following the first one out is following them all.
            let mut outer = None;
            for ((na, ta), (nb, tb)) in pa.iter().zip(pb.iter()) {
                let (Some(ta), Some(tb)) = (
                    self.thunks.get(ta.0 as usize),
                    self.thunks.get(tb.0 as usize),
                ) else {
                    return false;
                };
                if na != nb || !std::ptr::eq(ta.expr, tb.expr) {
                    return false;
                }
                match outer {
                    None => outer = Some((ta.scope, tb.scope)),
                    Some(pair) if pair == (ta.scope, tb.scope) => {}
                    Some(_) => return false,
                }
            }
            match outer {
                Some((x, y)) => (a, b) = (x, y),
                // A call without arguments: nothing of the call site reaches the body.
                None => return true,
            }
        }
        false
    }

    fn same_statement_where(&self, a: DefId, b: DefId, contexts: Contexts) -> bool {
        if a == b {
            return false;
        }
        let (da, db) = (self.def(a), self.def(b));
        if da.site != db.site || da.file != db.file {
            return false;
        }
        let same_op = match (&da.op, &db.op) {
            (Op::Assign, Op::Assign) | (Op::Merge, Op::Merge) => true,
            (Op::Func(x), Op::Func(y)) => std::ptr::eq(*x, *y),
            _ => false,
        };
        if !same_op {
            return false;
        }
        let plain = |sc: ScopeId| {
            let scope = self.scope(sc);
            scope.params.is_none() && scope.captures.is_none()
        };
        match (&da.body, &db.body) {
            (Body::Expr(x, sa), Body::Expr(y, sb)) => {
                std::ptr::eq(*x, *y)
                    && match contexts {
                        Contexts::Plain => plain(*sa) && plain(*sb),
                        Contexts::Copied => self.same_context(*sa, *sb),
                    }
            }
            // The value of one resource merged along two paths (`U ~> $D` in two aspects),
            // or of one statement's resource in two copies of a file (`S ~> import(c)`).
            // (Followed through chains of such merges without recursing, a bounded way.)
            (Body::ValueOf(x), Body::ValueOf(y)) => {
                let (mut x, mut y) = (*x, *y);
                for _ in 0..64 {
                    if x == y {
                        return true;
                    }
                    let (dx, dy) = (self.distinct_definitions(x), self.distinct_definitions(y));
                    let dx = dx.as_deref().unwrap_or(&self.slot(x).defs);
                    let dy = dy.as_deref().unwrap_or(&self.slot(y).defs);
                    let ([p], [q]) = (dx, dy) else {
                        return false;
                    };
                    if p == q {
                        return true;
                    }
                    match (&self.def(*p).body, &self.def(*q).body) {
                        (Body::ValueOf(a), Body::ValueOf(b)) => (x, y) = (*a, *b),
                        (Body::ValueOf(_), _) | (_, Body::ValueOf(_)) => return false,
                        _ => return self.same_statement_where(*p, *q, contexts),
                    }
                }
                false
            }
            _ => false,
        }
    }

    /// Unordered tops that combine (`~>`, or the same commutative `~(f)>`) are folded over
    /// the rest as if all of it lay below each of them. A definition of another kind in
    /// the rest that one of the tops does not outrank breaks that: an order the imports
    /// allow puts it above that top (a `=>` there would discard the top's value, a `~(g)>`
    /// would apply to it), so the result depends on the order (clarifications §5). One
    /// that is undefined ranks below everything and is no obstacle: having been evaluated
    /// to find that out, it leaves `rest`, so that the fold below does not evaluate it
    /// again (a `warn()` would warn twice).
    fn check_combinable_below(
        &mut self,
        s: SlotId,
        tops: &[DefId],
        rest: &mut Defs,
        kind: &TopKind,
        out: &mut Outcome,
    ) -> R<()> {
        if tops.len() < 2 {
            return Ok(());
        }
        let combines = |op: &Op| match (kind, op) {
            (TopKind::Merge, Op::Merge) => true,
            (TopKind::Func(f), Op::Func(ident)) => crate::mutators::lower_name(&ident.name) == *f,
            _ => false,
        };
        let mut undefined = Defs::new();
        for &d in rest.iter() {
            if combines(&self.def(d).op) {
                continue;
            }
            let Some(&unordered) = tops.iter().find(|&&t| self.rank(t, d) != Rank::Higher) else {
                continue;
            };
            if self.def_value(d).is_ok_and(|v| v.is_undef()) {
                undefined.push(d);
                continue;
            }
            return Err(self.partly_below_error(s, d, unordered, tops));
        }
        for d in undefined {
            rest.retain(|x| *x != d);
            out.undefined(d);
        }
        Ok(())
    }

    /// The error of [`Evaluator::check_combinable_below`]: `d` lies below some of `tops`
    /// but not below `unordered`.
    fn partly_below_error(
        &self,
        s: SlotId,
        d: DefId,
        unordered: DefId,
        tops: &[DefId],
    ) -> EvalError {
        let path = self.slot_path(s);
        let name = |d: DefId| self.loader_name(self.def(d).file);
        let above = tops
            .iter()
            .find(|&&t| self.rank(t, d) == Rank::Higher)
            .copied();
        let (low, free) = (self.def(d), self.def(unordered));
        let mut diag = Diagnostic::error(format!(
            "cannot determine mutation order for `{path}`: `{}` in {} is not below `{}` in {}, which no import orders with it",
            low.op.symbol(),
            name(d),
            free.op.symbol(),
            name(unordered),
        ))
        .at(low.site)
        .with_label(format!("`{}` here", low.op.symbol()))
        .also(free.site, format!("`{}` here, unordered with it", free.op.symbol()));
        if let Some(t) = above {
            diag = diag.also(
                self.def(t).site,
                format!("`{}` here, above it", self.def(t).op.symbol()),
            );
        }
        let diag = diag
            .note(format!(
                "the unordered `{}` definitions combine over what lies below all of them; an order the imports allow puts this one above {}",
                free.op.symbol(),
                name(unordered)
            ))
            .hint(format!(
                "have {} import {}, or decide `{path}` in a file that imports them all",
                name(unordered),
                name(d)
            ))
            .resource(path.to_string());
        EvalError::new(diag)
    }

    /// `~>`: the top blocks and the block below combine member by member.
    fn merge(&mut self, s: SlotId, tops: &[(DefId, Val)], below: Folded<'a>) -> R<Folded<'a>> {
        // Merged blocks of a configuration have a handful of members: room for them at once.
        let mut members = Gathered {
            names: NameMap::with_capacity_and_hasher(8, Default::default()),
            contributions: Vec::with_capacity(8),
            bodies: Vec::new(),
            secret: None,
        };
        // Where the value below was given: a top that is not a block cannot merge onto
        // it, and showing it explains why (`X ~> 1` over an imported `X => { ... }`).
        let below_at: Option<(Span, String)> = match &below {
            Folded::Plain(v, Some(d)) => Some((self.def(*d).site, v.describe())),
            Folded::Merge(m) => m.contributions.iter().flatten().next().map(|c| {
                (
                    self.def(c.outer.unwrap_or(c.def)).site,
                    "a block".to_string(),
                )
            }),
            _ => None,
        };
        // `onto`: for the value below, the `~>` merging onto it (the one at fault).
        let mut contribute = |ev: &mut Evaluator<'a>,
                              d: Option<DefId>,
                              v: &Val,
                              onto: Option<DefId>|
         -> R<()> {
            let Val::Block(b) = v else {
                let site = d.map(|d| ev.def(d).site);
                let path = ev.slot_path(s);
                let mut e = Diagnostic::error(format!(
                    "`~>` merges blocks, but a value of `{path}` is {}",
                    v.kind_phrase()
                ))
                .resource(path.to_string());
                let implicit =
                    onto.is_some_and(|t| matches!(ev.def(t).body, Body::Implicit { .. }));
                match (onto.map(|t| ev.def(t).site), site) {
                    (Some(top), below) => {
                        e = if implicit {
                            // The path as this statement writes it (`Login` of
                            // `Login.Colour => x`), which is what the hint rewrites.
                            let written = match onto.map(|t| &ev.def(t).body) {
                                Some(Body::Implicit { def, next, .. }) => {
                                    def.path.get(..*next).map(|p| {
                                        p.iter().map(|i| &*i.name).collect::<Vec<_>>().join(".")
                                    })
                                }
                                _ => None,
                            }
                            .filter(|w| !w.is_empty())
                            .unwrap_or_else(|| path.clone());
                            e.at(top)
                                .with_label(format!("adds a member to `{path}`, merging onto the value below"))
                                .hint(format!("assign `{written}` a whole block here (`{written} => {{ ... }}`), or remove the value below"))
                        } else {
                            e.at(top)
                                .with_label("`~>` merges onto the value below")
                                .hint("use `=>` here to replace the value below instead of merging into it")
                        };
                        if let Some(below) = below {
                            e = e.also(below, format!("the value below is {}", v.describe()));
                        }
                    }
                    (None, Some(site)) => {
                        // `Packages ~> [vim]` means "add to the list": `=>` would drop what
                        // the other files give.
                        let below = below_at.as_ref().filter(|_| d.is_some());
                        let hint = if matches!(v, Val::List(_)) {
                            let written = ev.written_path(site).unwrap_or_else(|| path.clone());
                            format!("to add elements to the list, use `{written} ~(union)> [...]` (or `~(append)>`, which keeps duplicates); `=>` would replace the whole list")
                        } else if let Some((_, what)) = below {
                            format!("`~>` merges a block into the value below ({what}); use `=>` to replace that value instead")
                        } else {
                            "use `=>` to replace the value instead of merging".to_string()
                        };
                        e = e
                            .at(site)
                            .with_label(format!("this is {}", v.describe()))
                            .hint(hint);
                        if let Some((at, what)) = below {
                            e = e.also(*at, format!("the value below is {what}"));
                        }
                    }
                    (None, None) => {}
                }
                return Err(EvalError::new(e));
            };
            let at = d.map(|d| ev.def(d).site).unwrap_or_default();
            if members.secret.is_none() {
                members.secret = ev.picked_origin(b);
            }
            let written_here = matches!(ev.block(*b).place, Place::Of(owner) if owner == s)
                && ev.value_import_file(*b).is_none();
            if !written_here {
                // Not written for this resource: its members merge by value.
                let merging_file = d.map(|d| ev.def(d).file);
                return ev.merge_by_value(*b, at, merging_file, &mut |name, m| {
                    members.add(name, Contribution { def: m, outer: d });
                });
            }
            let read = ev.read_plain_body(*b, &mut |name, m| {
                members.add(name, Contribution { def: m, outer: d });
            });
            if read {
                return Ok(());
            }
            // Built: it may hold inline imports, whose files must see the merged block.
            members.bodies.push(*b);
            let count = ev.member_count(*b, at)?;
            for i in 0..count {
                let Some((name, slot)) = ev.member_at(*b, i) else {
                    break;
                };
                let defs = &ev.slot(slot).defs;
                members.add_all(
                    name,
                    defs.iter().map(|&m| Contribution { def: m, outer: d }),
                );
            }
            Ok(())
        };
        for (d, v) in tops {
            contribute(self, Some(*d), v, None)?;
        }
        match below {
            Folded::Undefined => {}
            Folded::Plain(v, d) => {
                let onto = tops.first().map(|(t, _)| *t);
                contribute(self, d, &v, onto)?
            }
            Folded::Merge(m) => {
                for (name, at) in &m.names {
                    members.add_all(name.clone(), m.of(*at).iter().copied());
                }
                members.bodies.extend(m.bodies);
                members.secret = members.secret.take().or(m.secret);
            }
        }
        Ok(Folded::Merge(members))
    }

    /// The members of a block that a `~>` merges but did not write (the value of another
    /// resource, reached by reference, or an imported file): each as a plain `=>` of the
    /// member's final value ([`Body::ValueOf`]). It ranks where the member's definitions
    /// are, taken as a set, so that neither the order of imports nor a definition that
    /// gives no value (`~(default)>`, `=> ?`) moves it: at the key they share, in the file
    /// of the first of them (the first written in the merging file if any is: it then
    /// conflicts with that file's own definitions, as a block written there would). It is
    /// read at the `~>`, in the order of the block's members.
    fn merge_by_value(
        &mut self,
        b: BlockId,
        at: Span,
        merging_file: Option<FileId>,
        add: &mut dyn FnMut(Name<'a>, DefId),
    ) -> R<()> {
        let count = self.member_count(b, at)?;
        let imported = self.value_import_file(b).and_then(|_| self.block(b).inst);
        for i in 0..count {
            let Some((name, slot)) = self.member_at(b, i) else {
                break;
            };
            // A `~(default)>` or a `=> ?` gives the value only when nothing else does: where
            // something else is there, they do not place it.
            let all = &self.slot(slot).defs;
            let gives_value = |d: &&DefId| {
                let def = self.def(**d);
                let undef = matches!(def.body, Body::Expr(e, _) if matches!(e.kind, cf2_syntax::ast::ExprKind::Undef));
                !(def.op.is_func("default") || undef)
            };
            let defs: Vec<DefId> = if all.iter().any(|d| gives_value(&d)) {
                all.iter().filter(gives_value).copied().collect()
            } else {
                all.to_vec()
            };
            // The first in reading order, of those in the merging file if there are any.
            let first_of = |in_merging: bool| {
                defs.iter()
                    .map(|d| self.def(*d))
                    .filter(|d| !in_merging || Some(d.file) == merging_file)
                    .min_by(|x, y| x.order.cmp(&y.order))
            };
            let Some(first) = first_of(true).or_else(|| first_of(false)) else {
                continue;
            };
            let mut prio = first.prio.clone();
            for d in defs.iter().map(|d| self.def(*d)) {
                let shared = prio
                    .iter()
                    .zip(d.prio.iter())
                    .take_while(|(x, y)| x == y)
                    .count();
                prio.truncate(shared);
            }
            // A file imported as a value gives every member from its own source, the
            // imported file, whichever file below it wrote the member: so a member that
            // file overrides is ranked as the file's (`rank_value_imports`).
            if let Some(inst) = imported {
                prio = smallvec::smallvec![Step::Src(inst, 0)];
            }
            let by_value = Def {
                op: Op::Assign,
                body: Body::ValueOf(slot),
                prio,
                // Read where the `~>` is, in the order of the merged block's members
                // (clarifications §7): placed under the `~>`, whose position comes first.
                order: smallvec::smallvec![i as u32],
                // A private member stays private (see `merged_block`).
                private: self.slot(slot).private,
                site: first.site,
                file: first.file,
            };
            let d = self.new_def(by_value);
            add(name, d);
        }
        Ok(())
    }

    /// A block made of merged members, in reading order of their first definitions.
    pub(crate) fn merged_block(&mut self, s: SlotId, gathered: Gathered<'a>) -> Val {
        let Gathered {
            mut names,
            contributions,
            bodies,
            secret,
        } = gathered;
        let of = |at: &SlotId| contributions_at(&contributions, *at);
        let mut sorted = true;
        let mut prev: Option<Contribution> = None;
        for at in names.values() {
            let first = self.first_read(of(at));
            if let (Some(p), Some(f)) = (prev, first) {
                if self.reading_order(p, f) == Ordering::Greater {
                    sorted = false;
                    break;
                }
            }
            prev = first;
        }
        if !sorted {
            // Stable: members first defined at the same place keep their order.
            names.sort_by_cached_key(|_, at| {
                self.first_read(of(at))
                    .map(|c| self.placed_order(c).collect::<Order>())
                    .unwrap_or_default()
            });
        }
        let b = self.new_block(Place::Of(s), BlockState::Built);
        if let Some(origin) = secret {
            self.selected_in_secret.insert(b, origin);
        }
        self.slots.reserve(names.len());
        for (name, at) in names.iter_mut() {
            let defs: Defs = match of(at) {
                // A member's lone definition is never ranked against another, so it serves
                // as it is, unplaced: most members of a merge come from one file.
                [only] => smallvec::smallvec![only.def],
                many => many.iter().map(|c| self.placed(*c)).collect(),
            };
            // Private if any definition is, one merged by value from a private member
            // included: privacy travels with the value, as it does when the block is shared
            // (`A => $Defaults`), and a definition of the merging side that may give no value
            // (`=> ?`, an `if` not taken, an unused `~(default)>`) must not publish it.
            let private = defs.iter().any(|d| self.def(*d).private);
            // The map is the block's member map: the slot is pushed, not inserted again.
            *at = self.push_slot(name.clone(), b, defs, private);
        }
        // Files imported into the merged literals see this block (`Evaluator::scope_root`),
        // and what the literals' inline statements read is checked against its members
        // once the outputs are written (`Evaluator::check_inline_reads_against_merge`).
        for body in bodies {
            self.merged_into.insert(body, b);
            self.check_inline_reads_of(body, &names);
            // A block agreed on stands for the literals it was agreed from.
            if let Some(literals) = self.agreed_literals.get(&body).cloned() {
                for literal in literals {
                    self.check_inline_reads_of(literal, &names);
                }
            }
        }
        self.block_mut(b).members = names;
        Val::Block(b)
    }

    /// What the inline statements of `literal` read, to be checked against the members
    /// `names` of the block it ends up in once the outputs are written
    /// (`Evaluator::check_inline_reads_against_merge`).
    fn check_inline_reads_of(&mut self, literal: BlockId, names: &NameMap<'a, SlotId>) {
        let Some(reads) = self.inline_reads.get(&literal) else {
            return;
        };
        for (name, at) in reads {
            // A member the literal lacks was read as not defined: it is checked too.
            let own = self.block(literal).members.get(&**name).copied();
            if let Some(&merged) = names.get(&**name) {
                let pick = self.pick_site.clone();
                self.inline_read_checks
                    .entry(merged)
                    .or_default()
                    .push((own, *at, pick));
            }
        }
    }

    /// A contributed definition as seen from the merged slot: its key and reading order
    /// follow the outer definition's.
    fn placed(&mut self, c: Contribution) -> DefId {
        let Some(outer) = c.outer else {
            return c.def;
        };
        let outer = self.def(outer);
        let copy = self.def(c.def).placed_in(&outer.prio, &outer.order);
        let placed = self.new_def(copy);
        // Copied from a secret's pick, placed here, it is as secret as the copy.
        if let Some(secret) = self.secret_def(c.def) {
            self.secret_defs.insert(placed, secret);
        }
        placed
    }

    /// The reading position of a contribution as placed in the merged slot.
    fn placed_order(&self, c: Contribution) -> impl Iterator<Item = u32> + '_ {
        let outer: &[u32] = c.outer.map_or(&[], |o| &self.def(o).order);
        outer.iter().chain(self.def(c.def).order.iter()).copied()
    }

    fn reading_order(&self, a: Contribution, b: Contribution) -> Ordering {
        self.placed_order(a).cmp(self.placed_order(b))
    }

    /// The contribution read first.
    fn first_read(&self, contributions: &[Contribution]) -> Option<Contribution> {
        contributions
            .iter()
            .copied()
            .min_by(|a, b| self.reading_order(*a, *b))
    }

    /// [`Evaluator::def_value`], unless `evaluated` holds it already.
    fn def_value_once(&mut self, d: DefId, evaluated: &Evaluated) -> R<Val> {
        if !evaluated.is_empty() {
            if let Some(v) = evaluated.get(&d) {
                return Ok(v.clone());
            }
        }
        self.def_value(d)
    }

    /// The value of one definition's body (not yet folded with anything).
    pub(crate) fn def_value(&mut self, d: DefId) -> R<Val> {
        self.evaluating.push((self.stack.len(), d));
        let v = match self.secret_def(d) {
            None => self.def_value_here(d),
            Some((origin, at)) => self.secret_def_value(d, &origin, at),
        };
        self.evaluating.pop();
        v
    }

    /// The value of a definition copied from a block a secret selector picked
    /// ([`Evaluator::secret_defs`]): marked secret, its blocks too, with what its
    /// evaluation shows (trace entries, warnings) hidden and an error told without its
    /// details, as when the block is selected from.
    fn secret_def_value(&mut self, d: DefId, origin: &Rc<str>, at: Span) -> R<Val> {
        let v = self
            .reading_pick(origin, at, "evaluated", |ev| ev.def_value_here(d))
            .map_err(|mut e| {
                e.diag.label = "what this statement adds comes from there".into();
                e
            })?;
        let v = self.view_of_pick(v, origin, at);
        Ok(crate::secret::mark_over(v, origin))
    }

    fn def_value_here(&mut self, d: DefId) -> R<Val> {
        let body = self.def(d).body.clone();
        match body {
            Body::Expr(e, scope) => self
                .eval(e, scope)
                .map_err(|err| self.in_macro_call(err, scope)),
            Body::Implicit {
                def: rd,
                next,
                scope,
            } => {
                let place = self.current_place();
                let b = self.new_block(
                    place,
                    BlockState::Unbuilt(BuildSpec::Implicit {
                        def: rd,
                        next,
                        scope,
                    }),
                );
                Ok(Val::Block(b))
            }
            Body::Value(v) => Ok(v),
            Body::ValueOf(slot) | Body::Agreed { member: slot, .. } => self.force(slot),
        }
    }

    /// A conflict between the copies of one member of unordered blocks given whole
    /// ([`Body::Agreed`]): reported as the conflict of the blocks, for the resource that
    /// was given them (as when they are seen to differ in their member names), with the
    /// member they differ in shown. `None` unless every top is such a copy.
    fn agreed_member_conflict(&self, s: SlotId, tops: &[DefId]) -> Option<EvalError> {
        let (outer, wholes) = self.agreed_outer(s, tops)?;
        let mut e = self.order_error(outer, &wholes);
        let member = self.path_below(s, outer);
        for d in tops {
            e.diag.labels.push(cf2_syntax::diagnostic::Label {
                span: self.def(*d).site,
                message: format!("`{member}` here"),
            });
        }
        e.diag.notes.push(format!(
            "the blocks differ in `{member}`: blocks that unordered definitions give whole must agree on every member that is used"
        ));
        Some(e)
    }

    /// The path of resource `s` below resource `outer`, which holds it (`N.p` of `S.N.p`
    /// below `S`).
    fn path_below(&self, s: SlotId, outer: SlotId) -> String {
        let (full, at) = (self.slot_path(s), self.slot_path(outer));
        full.strip_prefix(&at)
            .and_then(|m| m.strip_prefix('.'))
            .unwrap_or(&full)
            .to_string()
    }

    /// If every one of `tops` (definitions of `s`) is a copy of a member of unordered
    /// blocks ([`Body::Agreed`]): the resource that was given the blocks, up through
    /// nested agreed blocks, and the definitions that gave them.
    fn agreed_outer(&self, s: SlotId, tops: &[DefId]) -> Option<(SlotId, Defs)> {
        let whole = |d: &DefId| match self.def(*d).body {
            Body::Agreed { whole, .. } => Some(whole),
            _ => None,
        };
        let mut wholes: Defs = tops.iter().map(whole).collect::<Option<_>>()?;
        if wholes.is_empty() {
            return None;
        }
        let mut outer = s;
        for _ in 0..=self.slots.len() {
            let Place::Of(parent) = self.block(self.slot(outer).parent).place else {
                return None;
            };
            outer = parent;
            match wholes.iter().map(whole).collect::<Option<Defs>>() {
                Some(up) if !up.is_empty() => wholes = up,
                _ => break,
            }
        }
        Some((outer, wholes))
    }

    /// `cannot determine mutation order`, or, for one source, "defined twice".
    pub(crate) fn order_error(&self, s: SlotId, tops: &[DefId]) -> EvalError {
        if let Some(e) = self.agreed_member_conflict(s, tops) {
            return e;
        }
        if let Some(e) = self.unknown_mutator_among(tops) {
            return e;
        }
        let path = self.slot_path(s);
        // `a.b => v` is written as a path, not as `a ~> { b => v }`: say what it does.
        let op_text = |d: DefId| {
            let def = self.def(d);
            match def.body {
                Body::Implicit { .. } => "adds a member".to_string(),
                Body::ValueOf(_) => "merged as a value".to_string(),
                _ => def.op.symbol(),
            }
        };
        let describe = |d: DefId| match self.def(d).body {
            Body::Implicit { .. } => "adds a member here".to_string(),
            // The member's own definition, whose value a `~>` of its block merged.
            Body::ValueOf(_) => "its value is merged by a `~>` of its block".to_string(),
            _ => format!("`{}` here", self.def(d).op.symbol()),
        };
        // Blocks combine with `~>`, whatever the files: the hint to give when they are blocks
        // and one is given whole with `=>` (`~>`s of scalars with nothing below conflict as
        // `=>`s do, and get the other hint).
        let blocks = tops.iter().all(|d| {
            let def = self.def(*d);
            matches!(def.body, Body::Implicit { .. })
                || matches!(def.body, Body::Expr(e, _) if matches!(e.kind, cf2_syntax::ast::ExprKind::Block(_) | cf2_syntax::ast::ExprKind::Import(_)))
                || (matches!(def.op, Op::Merge) && !matches!(def.body, Body::Expr(..)))
        }) && tops.iter().any(|d| matches!(self.def(*d).op, Op::Assign));
        let mut files: Vec<String> = Vec::new();
        for d in tops {
            let n = self.loader_name(self.def(*d).file);
            if !files.contains(&n) {
                files.push(n);
            }
        }
        let ops: Vec<String> = tops.iter().map(|d| op_text(*d)).collect();
        // A member merged by value counts as a plain `=>` of its value (semantics §6): two
        // of those differ in their values, not in their operators.
        let kind = |d: DefId| match self.def(d).body {
            Body::ValueOf(_) => "=>".to_string(),
            _ => op_text(d),
        };
        let mixed_ops = tops.windows(2).any(|w| kind(w[0]) != kind(w[1]));
        let mut diag = if files.len() == 1 {
            let how = if mixed_ops {
                format!("with different operators ({})", ops.join(", "))
            } else {
                "with different values".to_string()
            };
            Diagnostic::error(format!(
                "`{path}` is defined more than once in {} {how}",
                files.join("")
            ))
            .hint(if blocks && tops.iter().all(|d| matches!(self.def(*d).op, Op::Assign)) {
                // Two whole blocks, no member added apart.
                format!("the file gives `{path}` a whole block more than once: keep one, or write their members in one block")
            } else if blocks {
                let whole = tops
                    .iter()
                    .find(|d| matches!(self.def(**d).op, Op::Assign));
                let written = whole
                    .and_then(|d| self.written_path(self.def(*d).site))
                    .unwrap_or_else(|| path.to_string());
                // A file imported as the value (`V => import(a)` beside `V.Path => x`).
                let imported = whole.is_some_and(|d| {
                    matches!(self.def(*d).body, Body::Expr(e, _) if matches!(e.kind, cf2_syntax::ast::ExprKind::Import(_)))
                });
                let merged = if imported { "import(...)" } else { "{ ... }" };
                format!("a block given whole with `=>` cannot also get members elsewhere in its file: write `{written} ~> {merged}` to merge, or put the members in the one block")
            } else {
                "definitions of one resource in one file must agree, or all use the same commutative function such as `~(sum)>`".to_string()
            })
        } else {
            // Values of other resources (`U ~> $D1`, `U ~> $D2`): their files may well import
            // each other; what leaves them unordered is the `~>`s that merge them.
            let by_reference = tops.iter().any(|d| match self.def(*d).body {
                Body::ValueOf(slot) => self.value_import_file(self.slot(slot).parent).is_none(),
                _ => false,
            });
            let why = if by_reference {
                ", in other resources' blocks merged by `~>`s that do not outrank each other"
            } else {
                " and none of them imports the others"
            };
            Diagnostic::error(format!(
                "cannot determine mutation order for `{path}`: it is defined in {}{why}",
                files.join(" and ")
            ))
            .hint(if by_reference {
                format!("decide where the blocks are merged: assign `{path}` there, or have every definition use the same commutative function (`~(max)>`, `~(sum)>`, `~(union)>`)")
            } else if blocks {
                // As the `=>` is written: in a file imported inline into a block (`Site => {
                // import(a) }`), `Site.Svc ~> ...` would define `Site.Site.Svc`.
                let written = tops
                    .iter()
                    .find(|d| matches!(self.def(**d).op, Op::Assign))
                    .and_then(|d| self.written_path(self.def(*d).site))
                    .unwrap_or_else(|| path.to_string());
                format!("blocks from files that do not import each other combine when every definition merges: write `{written} ~> {{ ... }}` instead of `{written} => {{ ... }}`, or assign `{path}` in a file that imports them all")
            } else {
                format!("decide in a file that imports them all: assign `{path}` there, or have every definition use the same commutative function (`~(max)>`, `~(sum)>`, `~(union)>`)")
            })
        }
        .resource(path.to_string());
        for (i, d) in tops.iter().enumerate() {
            let site = self.shown_site(*d);
            if i == 0 {
                diag = diag.at(site).with_label(describe(*d));
            } else {
                diag = diag.also(site, format!("also defined here ({})", op_text(*d)));
            }
        }
        // One statement met twice, with different values: the two places shown are the
        // same, so say how that happens.
        if let [first, rest @ ..] = tops {
            let site = self.def(*first).site;
            let by_value = |d: &DefId| matches!(self.def(*d).body, Body::ValueOf(_));
            let same_place = !rest.is_empty() && rest.iter().all(|d| self.def(*d).site == site);
            if same_place && tops.iter().any(by_value) && !tops.iter().all(by_value) {
                // `S ~> import(c)` beside `S ~> { import(c) }`: the file's final values and
                // its definitions both reach `S`.
                let file = self.loader_name(self.def(*first).file);
                diag = diag.note(format!(
                    "{file} is merged into the block both as a value (`~> import(...)`, which gives its final values) and inline (`{{ import(...) }}`, which gives its definitions)"
                ))
                .hint(format!("merge {file} one way only"));
            } else if same_place {
                diag = diag.note(
                    "these are one statement reached more than once, with different values: \
                     in a macro's block called more than once (`f(1)`, `f(2)`), or a function's \
                     block used inline more than once",
                );
            }
        }
        EvalError::new(diag)
    }
}
