//! The evaluator's data model: definitions, slots (resources), blocks, scopes, and the
//! priority and reading-order keys that order definitions.
//!
//! Vocabulary (docs/semantics.md §"Model"):
//! - a **definition** ([`Def`]) is one mutation of one resource: `X => 1` is one, and
//!   `X => 1 ~(max)> 2` is two;
//! - a **slot** ([`Slot`]) is a resource of a block: its name and its definitions; its value
//!   is computed once, by folding the definitions, when first needed;
//! - a **block** ([`BlockNode`]) maps names to slots; it is *built* (its definitions
//!   gathered, inline statements run) when first looked into;
//! - an **instance** ([`Instance`]) is the graph of *sources* that feed one block body: the
//!   body itself and every file imported inline into it, with an edge from each importer
//!   to what it imports. A source outranks everything reachable from it;
//! - a **priority key** ([`Key`]) places a definition in the partial order: one step per
//!   level of block nesting through which the definition was merged.

use crate::val::Val;
use cf2_syntax::ast::{self, Expr, Ident};
use cf2_syntax::{FileId, Span};
use indexmap::IndexMap;
use std::rc::Rc;

impl<'a> Def<'a> {
    /// This definition as seen from inside another one: its key and reading order
    /// follow the outer definition's.
    pub fn placed_in(&self, prio: &[Step], order: &[u32]) -> Def<'a> {
        Def {
            op: self.op.clone(),
            body: self.body.clone(),
            prio: extend(prio, &self.prio),
            order: extend(order, &self.order),
            private: self.private,
            site: self.site,
            file: self.file,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlotId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScopeId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThunkId(pub u32);

/// A resource name: borrowed from the parsed source where it was written there (nearly
/// every name), owned where it was computed (KeePass entries, blocks from functions).
/// Borrowing saves an allocation per resource per compile.
#[derive(Clone, Debug)]
pub enum Name<'a> {
    Src(&'a str),
    Owned(Rc<str>),
}

impl std::ops::Deref for Name<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Name::Src(s) => s,
            Name::Owned(s) => s,
        }
    }
}

impl std::borrow::Borrow<str> for Name<'_> {
    fn borrow(&self) -> &str {
        self
    }
}

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Name<'_> {}

impl std::hash::Hash for Name<'_> {
    // Must hash as `str` does: maps keyed by names are looked up by `&str`.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl std::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

/// One step of a priority key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Source `node` of instance `inst`: ordered against another node of the same instance
    /// by reachability in its import graph.
    Src(InstId, u32),
    /// Position within one statement's chain of mutations (`X => a ~(f)> b`): a later
    /// mutation is applied on top of an earlier one.
    Seq(u32),
}

/// Kept inline (no allocation) up to two steps: keys grow one step per level of block
/// nesting a definition was merged through, and a merged member with a single definition
/// keeps its own key, so more than two is rare. (Three inline steps made every definition
/// 16 bytes bigger, 144 bytes: 0.8 % more instructions per host.)
pub type Key = smallvec::SmallVec<[Step; 2]>;
/// An insertion-ordered map keyed by resource names. foldhash: SipHash was a tenth of
/// the compile time; foldhash is several times faster and still seeded per process.
pub type NameMap<'a, V> = IndexMap<Name<'a>, V, foldhash::fast::RandomState>;
/// The definitions of one resource: nearly always one or two, so kept inline; up to eight,
/// because a resource that a base, each aspect and the host all add to (`Packages ~>`,
/// `DiskGB ~(sum)>`) has one per file, and folding copies the list (4 inline: 1.7 % more
/// instructions per host of the benchmark site, where such resources have 5–6).
pub type Defs = smallvec::SmallVec<[DefId; 8]>;
/// Reading order: the position of a definition in a depth-first reading of the sources in
/// which an inline import stands for the imported file's content (clarifications §7).
/// Inline up to four levels, like [`Key`].
pub type Order = smallvec::SmallVec<[u32; 4]>;

/// `prefix` followed by `rest`.
pub fn extend<A: smallvec::Array>(prefix: &[A::Item], rest: &[A::Item]) -> smallvec::SmallVec<A>
where
    A::Item: Copy,
{
    let mut v = smallvec::SmallVec::with_capacity(prefix.len() + rest.len());
    v.extend_from_slice(prefix);
    v.extend_from_slice(rest);
    v
}

/// The mutation operator of a definition.
#[derive(Clone, Debug)]
pub enum Op<'a> {
    Assign,
    Merge,
    /// `~(name)>`: name as written (looked up case-insensitively).
    Func(&'a Ident),
}

impl Op<'_> {
    pub fn symbol(&self) -> String {
        match self {
            Op::Assign => "=>".to_string(),
            Op::Merge => "~>".to_string(),
            Op::Func(i) => format!("~({})>", i.name),
        }
    }

    /// Whether this is `~(name)>` for `name` given in lower case (function names are
    /// case-insensitive), without allocating.
    pub fn is_func(&self, name: &str) -> bool {
        matches!(self, Op::Func(i) if i.name.eq_ignore_ascii_case(name))
    }
}

/// What a definition's value is made of.
#[derive(Clone, Debug)]
pub enum Body<'a> {
    /// An expression, evaluated in a scope.
    Expr(&'a Expr, ScopeId),
    /// The block standing for the rest of an implicit path: for `a.b.c OP v`, the value
    /// of `a`'s definition is a block holding `b` (`next` = 1), whose definition holds
    /// `c` (`next` = 2), which carries the written mutations.
    Implicit {
        def: &'a ast::ResourceDef,
        next: usize,
        scope: ScopeId,
    },
    /// A value computed elsewhere (a function's block, a KeePass entry).
    Value(Val),
    /// The final value of another resource: a member of a block that `~>` merges but
    /// did not write (`Y ~> $X`, `Y ~> import(f)`). A reference sees final values
    /// (clarifications §3), so the member merges as a plain `=>` of its value: the
    /// `~(final)>`, `private` or other mutations that made it stay with the resource
    /// they were written for. Evaluated only if the merged member needs it.
    ValueOf(SlotId),
    /// The value of member `slot` of one of several unordered, equal blocks (`S => {
    /// ... }` in two aspects): a member of the block they agree on has one such
    /// definition per block, so that the copies are compared member by member, only
    /// where a member is needed (`fold::Evaluator::agreed_block`). `whole` is the
    /// definition that gave the block (for diagnostics).
    Agreed { member: SlotId, whole: DefId },
}

#[derive(Clone, Debug)]
pub struct Def<'a> {
    pub op: Op<'a>,
    pub body: Body<'a>,
    pub prio: Key,
    pub order: Order,
    pub private: bool,
    /// The statement that made this definition (for diagnostics and traces).
    pub site: Span,
    /// The file of that statement.
    pub file: FileId,
}

#[derive(Clone, Debug)]
pub enum SlotState {
    Pending,
    /// Being evaluated: meeting it again is a cycle.
    Active,
    Done(Val),
    Failed(crate::error::EvalError),
}

/// How a slot's value came about (read by `-Deval` and `explain`), while the fold runs.
/// Recorded only when asked for: a compile that does not trace carries an empty pointer
/// through its folds and pays nothing else.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub record: Option<Box<Record>>,
}

/// What an [`Outcome`] recorded.
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// The rule that decided (`assignment`, `merge`, `max`, `final`, ...).
    pub rule: String,
    /// Definitions whose values make up the result.
    pub used: Vec<DefId>,
    /// Definitions that were outranked (and so never evaluated).
    pub overridden: Vec<DefId>,
    /// Definitions that were evaluated but gave no value (`?`, an `if` not taken), so the
    /// next lower definition showed through.
    pub undefined: Vec<DefId>,
    /// Definitions that repeat an earlier one word for word, and so count once.
    pub repeated: Vec<DefId>,
    /// Whether a mutation function decided: `rule` is then its name (`max`).
    pub by_function: bool,
    /// What a mutation function was given from below where another function made it
    /// (`N ~(min)> 5` over `~(max)>`s): each such value with how it was made, the
    /// innermost first. Kept apart so that a trace can show the value each function was
    /// given; defs of the same function are listed flat in one layer, as one fold.
    pub layers: Vec<Layer>,
}

/// A value a mutation function was given from below, and how it was made (see
/// [`Record::layers`]).
#[derive(Clone, Debug)]
pub struct Layer {
    pub value: Val,
    /// Its own rule and definitions (its `layers` are empty: they are the record's).
    pub made: Record,
}

impl Outcome {
    pub fn recording(on: bool) -> Outcome {
        Outcome {
            record: on.then(Box::default),
        }
    }

    pub fn rule(&mut self, rule: &str) {
        if let Some(r) = &mut self.record {
            r.rule = rule.to_string();
        }
    }

    /// The rule of a mutation function (`max`).
    pub fn function(&mut self, name: &str) {
        if let Some(r) = &mut self.record {
            r.rule = name.to_string();
            r.by_function = true;
        }
    }

    /// Whether the fold below was decided by a mutation function other than `name`: its
    /// value is then a layer of its own ([`Outcome::layer_below`]).
    pub fn other_function_than(&self, name: &str) -> bool {
        self.record
            .as_ref()
            .is_some_and(|r| r.by_function && r.rule != name)
    }

    /// Takes in what another function made below as a layer, with the value it made.
    pub fn layer_below(&mut self, below: Outcome, value: Option<&Val>) {
        if let (Some(r), Some(b)) = (&mut self.record, below.record) {
            let mut made = *b;
            // Innermost first: the layers below come before this one, and are moved, not
            // copied, so a long chain of alternating functions stays linear.
            let mut layers = std::mem::take(&mut made.layers);
            layers.push(Layer {
                value: value.cloned().unwrap_or(Val::Undef),
                made,
            });
            layers.append(&mut r.layers);
            r.layers = layers;
        }
    }

    /// An outcome for the fold of what lies below the tops: recording if this one is.
    pub fn below(&self) -> Outcome {
        Outcome::recording(self.record.is_some())
    }

    /// Takes in what the fold below recorded (`below`), except its rule: the rule is the
    /// one that decided at the top.
    pub fn absorb_below(&mut self, below: Outcome) {
        if let (Some(r), Some(b)) = (&mut self.record, below.record) {
            r.used.extend(b.used);
            r.overridden.extend(b.overridden);
            r.undefined.extend(b.undefined);
            r.repeated.extend(b.repeated);
            // The layers below are deeper, so come first (innermost first).
            let mut layers = b.layers;
            layers.append(&mut r.layers);
            r.layers = layers;
        }
    }

    pub fn used(&mut self, defs: &[DefId]) {
        if let Some(r) = &mut self.record {
            r.used.extend_from_slice(defs);
        }
    }

    pub fn overridden(&mut self, defs: &[DefId]) {
        if let Some(r) = &mut self.record {
            r.overridden.extend_from_slice(defs);
        }
    }

    pub fn undefined(&mut self, def: DefId) {
        if let Some(r) = &mut self.record {
            r.undefined.push(def);
        }
    }

    pub fn repeated(&mut self, def: DefId) {
        if let Some(r) = &mut self.record {
            r.repeated.push(def);
        }
    }
}

#[derive(Debug)]
pub struct Slot<'a> {
    pub name: Name<'a>,
    /// The block this slot is a member of. The dotted path for messages
    /// (`Services.OsVersion`) is computed from it only when a message needs it
    /// ([`crate::Evaluator::slot_path`]): most slots never appear in one.
    pub parent: BlockId,
    pub defs: Defs,
    pub private: bool,
    pub state: SlotState,
    pub outcome: Option<Box<Record>>,
}

/// How to build a block when it is first looked into.
#[derive(Clone, Debug)]
pub enum BuildSpec<'a> {
    /// A `{ ... }` literal or a file's top level, read in `scope`; files imported inline
    /// into it see the block itself as their root.
    Body {
        stmts: &'a [ast::Statement],
        file: FileId,
        scope: ScopeId,
    },
    /// One step of an implicit path (see [`Body::Implicit`]).
    Implicit {
        def: &'a ast::ResourceDef,
        next: usize,
        scope: ScopeId,
    },
    /// A view of another block, as a secret selector picked it: the same members (the same
    /// slots), but a block of its own, so that the mark of the pick
    /// (`Evaluator::selected_in_secret`) is on the view and not on the block, which other
    /// resources read by name (`secret::Evaluator::view_of_pick`).
    ViewOf { seen: BlockId, at: Span },
}

#[derive(Debug)]
pub enum BlockState<'a> {
    Unbuilt(BuildSpec<'a>),
    /// Inline statements are being run: member look-ups are recorded, because inline
    /// statements must not define what inline statements read (reference §3.8, §3.10).
    Building {
        /// Each member looked up: its name, where, and the inline statement that
        /// needed it.
        reads: Vec<(Rc<str>, Span, Runner)>,
        /// The inline statement now running.
        running: Runner,
        /// Its text, for messages (`None` before the first runs).
        statement: Option<&'a ast::Statement>,
    },
    Built,
    /// Building failed: every later look-up fails the same way, so a half-built block is
    /// never read as if it were complete (`defined()` swallows "not defined" errors).
    Failed(crate::error::EvalError),
}

/// Where a block sits, for naming it and its members in messages.
#[derive(Clone, Debug)]
pub enum Place {
    /// The configuration itself (its members' paths are their names).
    Top,
    /// A name given where the block was made (`<import of web.cf2>`, a KeePass group).
    Named(Rc<str>),
    /// The value of a resource, or made while evaluating it: named after that resource.
    Of(SlotId),
    /// Made in a list literal of a resource's value, at these positions (outermost first):
    /// `a.1.e` for `e` in `a => [x, {e => …}]`.
    Element(SlotId, Rc<[u32]>),
}

/// The inline statement running while a block is built (see `build.rs`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Runner {
    /// The source node in which it is written.
    pub node: u32,
}

#[derive(Debug)]
pub struct BlockNode<'a> {
    /// Where the block sits, for messages (`Services`, `<import of web.cf2>`).
    pub place: Place,
    pub members: NameMap<'a, SlotId>,
    pub state: BlockState<'a>,
    /// The source graph ordering this block's own definitions (`None` for merged blocks,
    /// whose definitions carry keys from elsewhere).
    pub inst: Option<InstId>,
}

/// The source graph of one block body.
#[derive(Debug, Default)]
pub struct Instance {
    /// The file of each source node; node 0 is the body itself.
    pub files: smallvec::SmallVec<[FileId; 2]>,
    /// `edges[a]` lists the nodes `a` imports inline.
    pub edges: smallvec::SmallVec<[Vec<u32>; 2]>,
    /// `reach[a]` is the set of nodes reachable from `a` (computed once the block is
    /// built; `None` while edges may still be added).
    pub reach: Option<Vec<Vec<u64>>>,
}

impl Instance {
    pub fn reaches(&self, from: u32, to: u32) -> bool {
        if let Some(reach) = &self.reach {
            return reach
                .get(from as usize)
                .and_then(|bits| bits.get(to as usize / 64))
                .is_some_and(|w| w & (1u64 << (to % 64)) != 0);
        }
        self.search(from, to)
    }

    fn search(&self, from: u32, to: u32) -> bool {
        if self.edges.get(from as usize).is_none_or(Vec::is_empty) {
            return false;
        }
        let mut seen = vec![false; self.files.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for &m in self.edges.get(n as usize).map(Vec::as_slice).unwrap_or(&[]) {
                if m == to {
                    return true;
                }
                if let Some(s) = seen.get_mut(m as usize) {
                    if !*s {
                        *s = true;
                        stack.push(m);
                    }
                }
            }
        }
        false
    }

    /// The nodes of a shortest import path from `from` to `to`, both included (`None` if
    /// `from` does not reach `to`): what a trace names to say why one outranks the other.
    pub fn path(&self, from: u32, to: u32) -> Option<Vec<u32>> {
        let mut came_from: Vec<Option<u32>> = vec![None; self.files.len()];
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(x) = queue.pop_front() {
            if x == to {
                break;
            }
            for &y in self.edges.get(x as usize).map(Vec::as_slice).unwrap_or(&[]) {
                if let Some(slot @ None) = came_from.get_mut(y as usize) {
                    if y != from {
                        *slot = Some(x);
                        queue.push_back(y);
                    }
                }
            }
        }
        let mut path = vec![to];
        let mut at = to;
        while at != from {
            at = (*came_from.get(at as usize)?)?;
            path.push(at);
        }
        path.reverse();
        Some(path)
    }

    /// True if every path from the body (node 0) to `node` goes through `through`.
    pub fn dominates(&self, through: u32, node: u32) -> bool {
        if through == node || through == 0 {
            return true;
        }
        let mut seen = vec![false; self.files.len()];
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            if n == node {
                return false;
            }
            for &m in self.edges.get(n as usize).map(Vec::as_slice).unwrap_or(&[]) {
                if m == through {
                    continue;
                }
                if let Some(s) = seen.get_mut(m as usize) {
                    if !*s {
                        *s = true;
                        stack.push(m);
                    }
                }
            }
        }
        true
    }

    pub fn freeze(&mut self) {
        let n = self.files.len();
        // A body with no inline imports (most blocks) has nothing to reach.
        if n <= 1 {
            return;
        }
        let words = n.div_ceil(64);
        // One depth-first search per source: O(n · (n + edges)).
        let mut reach = Vec::with_capacity(n);
        for a in 0..n {
            let mut bits = vec![0u64; words];
            let mut stack = vec![a as u32];
            while let Some(x) = stack.pop() {
                for &y in self.edges.get(x as usize).map(Vec::as_slice).unwrap_or(&[]) {
                    let (word, bit) = (y as usize / 64, 1u64 << (y % 64));
                    if let Some(w) = bits.get_mut(word) {
                        if *w & bit == 0 {
                            *w |= bit;
                            stack.push(y);
                        }
                    }
                }
            }
            reach.push(bits);
        }
        self.reach = Some(reach);
    }
}

/// The files enclosing a piece of code, innermost first: an import of any of them from
/// inside is a cycle.
#[derive(Debug)]
pub struct Chain {
    pub file: FileId,
    /// Where this file was imported (`None` for the main file).
    pub site: Option<Span>,
    pub parent: Option<Rc<Chain>>,
}

impl Chain {
    pub fn contains(&self, file: FileId) -> bool {
        let mut cur = Some(self);
        while let Some(c) = cur {
            if c.file == file {
                return true;
            }
            cur = c.parent.as_deref();
        }
        false
    }
}

/// Regex captures visible to `match(n)` in the branches of a conditional.
#[derive(Debug, Default)]
pub struct Captures {
    pub groups: Vec<Option<String>>,
    pub names: Vec<(String, usize)>,
    /// Set when the matched text or regex was a secret: the captures are secret too.
    pub secret: Option<Rc<str>>,
    /// The condition matched several regexes, none with capture groups: `match()` cannot
    /// tell which to read.
    pub ambiguous: bool,
    /// The condition holds a regex match that was not evaluated (`||` or `&&` decided
    /// before it): there is nothing to read.
    pub unevaluated: bool,
}

/// Macro parameters by name, each evaluated on first use.
pub type Params = Vec<(Rc<str>, ThunkId)>;

/// Where references resolve and what else code can see.
#[derive(Clone, Debug)]
pub struct Scope {
    /// `$X` is a member of this block (clarifications §3).
    pub root: BlockId,
    pub file: FileId,
    pub chain: Rc<Chain>,
    /// Macro parameters, innermost call.
    pub params: Option<Rc<Params>>,
    pub captures: Option<Rc<Captures>>,
    /// The macro call whose body this code is in, innermost: an error in the body found
    /// later (in a member of a block the macro gave) still shows which call it came from.
    pub call: Option<Rc<MacroCall>>,
}

/// One call of a macro, for messages.
#[derive(Debug)]
pub struct MacroCall {
    pub call: Span,
    pub body: Span,
    pub name: Rc<str>,
}

/// A macro argument, evaluated on first use.
#[derive(Debug)]
pub struct Thunk<'a> {
    pub expr: &'a Expr,
    pub scope: ScopeId,
    pub state: ThunkState,
    /// The resource being evaluated at the call, and the list positions in it: blocks the
    /// argument makes are placed there, whoever forces it first (see `current_place`).
    pub made_for: Option<SlotId>,
    pub elements: Vec<u32>,
}

#[derive(Debug, Clone)]
pub enum ThunkState {
    Pending,
    Active,
    Done(Val),
}
