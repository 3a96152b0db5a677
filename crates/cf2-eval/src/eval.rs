//! The evaluator context: arenas, the evaluation stack (for cycle detection and for naming
//! the resource an error concerns), slot forcing and member look-up.
//!
//! The rules themselves live in their own modules: [`crate::build`] (gathering a block's
//! definitions, inline statements), [`crate::fold`] (folding a resource's mutations),
//! [`crate::expr`] and [`crate::ops`] (expressions and operators), [`crate::functions`],
//! [`crate::mutators`], [`crate::resolve`] (the import search), [`crate::materialize`].

use crate::error::{EvalError, R};
use crate::host::Host;
use crate::loader::{LoadedFile, Loader};
use crate::model::*;
use crate::val::Val;
use crate::Options;
use cf2_syntax::ast::{self, Statement};
use cf2_syntax::{Diagnostic, FileId, Span};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Stack headroom kept before growing onto the heap, and the size of each new segment:
/// evaluation recurses along reference chains whose length the input decides.
const RED_ZONE: usize = 128 * 1024;
const NEW_STACK: usize = 4 * 1024 * 1024;

pub(crate) fn deep<T>(f: impl FnOnce() -> T) -> T {
    cf2_value::stack::deep(RED_ZONE, NEW_STACK, f)
}

/// The reading of a secret's pick that something was evaluated for, if any: how the secret
/// is shown and where the pick is read.
pub(crate) type PickSite = Option<(Rc<str>, Span)>;

/// Warnings an evaluation gave, kept to be given again (`Evaluator::warn_again`).
pub(crate) type Warnings = Rc<[Diagnostic]>;

/// A value a pick's reading gave, with the warnings its evaluation gave (`pick_memo`).
pub(crate) type PickValue = (R<Val>, Warnings);

pub struct Evaluator<'a> {
    pub(crate) host: &'a dyn Host,
    pub(crate) loader: &'a Loader,
    pub(crate) opts: &'a Options,
    pub(crate) blocks: Vec<BlockNode<'a>>,
    pub(crate) slots: Vec<Slot<'a>>,
    pub(crate) defs: Vec<Def<'a>>,
    pub(crate) scopes: Vec<Scope>,
    pub(crate) insts: Vec<Instance>,
    pub(crate) thunks: Vec<Thunk<'a>>,
    /// Slots being evaluated, innermost last.
    pub(crate) stack: Vec<SlotId>,
    /// Blocks whose statements are being run (`BlockState::Building`), innermost last, each
    /// with the depth of `stack` when it began: a slot pushed above that depth is being
    /// evaluated for the block's inline statements (see [`Evaluator::read_through_another`]).
    pub(crate) building: Vec<(BlockId, usize)>,
    /// The positions in the list literals being evaluated for the innermost slot, outermost
    /// first: a block made there is named `a.1.e`, not `a.e` (see [`Place::Element`]).
    pub(crate) elements: Vec<u32>,
    /// While a macro argument is evaluated: the depth of `stack` then, and the resource
    /// being evaluated at its call, which its blocks are placed in (see `force_thunk`).
    pub(crate) thunk_place: Option<(usize, Option<SlotId>)>,
    /// The definitions being evaluated, each with the depth of [`Evaluator::stack`] then:
    /// a cycle is shown at the definitions that take part in it.
    pub(crate) evaluating: Vec<(usize, DefId)>,
    /// Regex matches made directly in the condition being evaluated (for `match()`).
    pub(crate) capture_sink: Option<Vec<(Captures, Span, bool)>>,
    pub(crate) warnings: Vec<Diagnostic>,
    /// External functions whose module failed to load, each with its first use: a module
    /// fails the same way at every call, so every use is reported at the first one (and
    /// the collectors then keep one diagnostic).
    pub(crate) load_failures: std::cell::RefCell<Vec<(String, Span)>>,
    pub(crate) regexes: HashMap<Rc<str>, std::sync::Arc<crate::perl_regex::PerlRegex>>,
    /// Slots in the order their values were settled (for `-Deval`).
    pub(crate) settled: Vec<SlotId>,
    /// With `-Deval`: the resources each resource's definitions read by reference, in the
    /// order first read (`Evaluator::note_read`).
    pub(crate) reads: HashMap<SlotId, ReadSet, foldhash::fast::RandomState>,
    /// With `-Deval`: the resources each inline statement read while it ran (an `if`'s
    /// condition, a computed import's name), by the statement's place, in the order the
    /// statements first read.
    pub(crate) statement_reads: indexmap::IndexMap<Span, ReadSet, foldhash::fast::RandomState>,
    /// How many readings of a secret's pick (`Evaluator::under_pick`) are running.
    pub(crate) pick_depth: u32,
    /// The innermost of them: how its secret is shown and where it is read.
    pub(crate) pick_site: PickSite,
    /// How many warnings there were when the outermost reading of a pick began.
    pub(crate) pick_warned_from: usize,
    /// Macro arguments as a secret's pick evaluated them (as `pick_memo` for slots).
    pub(crate) pick_thunks: HashMap<ThunkId, (Val, Warnings), foldhash::fast::RandomState>,
    /// The evaluation steps spent for picks, counted apart from the others (`max_steps`
    /// each): what is evaluated twice, for a pick and by name, must not make the limit
    /// depend on which member the pick chose.
    pub(crate) pick_steps: u64,
    /// Blocks that were there before the outermost reading of a pick began: one built
    /// for a pick (a block of a plain value, `$L.($I)` for `L => [{...}, {...}]`) is
    /// shared with reads by name, so the warnings its building gave, hidden there, are
    /// given again where it is read by name (`hidden_build_warnings`).
    pub(crate) pick_first_block: u32,
    pub(crate) hidden_build_warnings: HashMap<BlockId, Vec<Diagnostic>>,
    /// Value imports counted for the reading of a pick, apart (`value_imports_of`).
    pub(crate) pick_value_imports_of: HashMap<FileId, u32, foldhash::fast::RandomState>,
    /// A work limit passed while a pick was read (`work_limit_passed`), apart.
    pub(crate) pick_work_limit_passed: Option<EvalError>,
    /// The values of resources evaluated while reading a secret's pick, kept apart from
    /// their slots (`Evaluator::force`): a resource read there has its warnings and trace
    /// hidden, and read by name it must show them as if the pick had never looked at it,
    /// or their absence would say what was picked (`fred => $PF`: `PF`'s warning missing
    /// and `PM`'s shown). So it is evaluated again when read by name. The values also
    /// tell the inline-statement checks what a pick read (`evaluated_value`).
    /// Each value is kept with the warnings its evaluation gave (hidden there): a later
    /// pick that finds it here gives them again, as if it had evaluated it itself, so what
    /// it shows does not depend on what an earlier pick chose; and the work is done once
    /// for every pick (1,000 picks into one large block cost one evaluation of it).
    pub(crate) pick_memo: HashMap<SlotId, PickValue, foldhash::fast::RandomState>,
    /// Where in `settled` each outermost reading of a pick began (with `-Deval`): each
    /// shows one hidden entry there, whether or not it evaluated anything itself.
    pub(crate) pick_trace_marks: Vec<usize>,
    /// Blocks that a secret selector selected (`$Sel.($P.fred.UserName)`), with the
    /// secret's origin: which block it is is as secret as the selector, so its members
    /// are secret when selected, and outputting it hides what it evaluates (security.md
    /// §6). These are views made for the pick (`view_of_pick`) and blocks made from them
    /// (merges, agreed blocks), never a block another resource has by name.
    pub(crate) selected_in_secret: HashMap<BlockId, Rc<str>, foldhash::fast::RandomState>,
    /// Blocks a secret selector picked a member of (`Sel` of `$Sel.($P.x.UserName)`), with
    /// the secret's origin: each member's block counts as picked (`picked_origin`), so
    /// that the pick is hidden alike wherever any candidate is read.
    pub(crate) picked_from: HashMap<BlockId, Rc<str>, foldhash::fast::RandomState>,
    /// Definitions copied from a picked block into another (by an inline `if` or call
    /// that gives it), with the secret's origin and the inline statement that copied each,
    /// where its messages are shown: their values are as secret as the pick, their errors
    /// are told without details, and the trace does not show them.
    pub(crate) secret_defs: HashMap<DefId, (Rc<str>, Span), foldhash::fast::RandomState>,
    /// Files whose `-Wdup` warnings were already reported.
    pub(crate) dup_reported: Vec<FileId>,
    /// Blocks made by importing a file (or a KeePass database) as a value, with the file:
    /// an inline import or call that gives one adds that file as a lower source, as an
    /// inline import of a CF2 file does.
    /// (A map: a configuration that imports files as values at every level of a diamond
    /// makes many, and every ranking of two definitions from different blocks asks.)
    pub(crate) value_imports: HashMap<BlockId, FileId, foldhash::fast::RandomState>,
    /// The source graphs of the bodies of those blocks, once built (for
    /// `fold::rank_value_imports`, which is asked for every pair of definitions that part
    /// between two blocks).
    pub(crate) value_import_insts: HashSet<InstId, foldhash::fast::RandomState>,
    /// The first compile-wide limit error (steps, value imports), given again for every
    /// later attempt (`Evaluator::work_limit`).
    pub(crate) work_limit_passed: Option<EvalError>,
    /// How often each file was imported as a value (`expr::MAX_VALUE_IMPORTS_OF_ONE_FILE`).
    pub(crate) value_imports_of: HashMap<FileId, u32, foldhash::fast::RandomState>,
    /// Block literals written for a resource and merged with its other definitions, each
    /// with the merged block (see [`Evaluator::scope_root`]).
    pub(crate) merged_into: HashMap<BlockId, BlockId>,
    /// `~>` definitions whose copies along other paths were left out of a fold
    /// (`fold::one_side_of_copies`): alone at the top, such a definition still merges, as
    /// its copies would have.
    pub(crate) copies_left_out: HashSet<DefId>,
    /// Members of a literal that its inline statements read while it was built, by block
    /// (only literals made for a resource, which a `~>` may merge).
    pub(crate) inline_reads: HashMap<BlockId, Vec<(Rc<str>, Span)>>,
    /// The literals a block agreed on by unordered blocks stands for
    /// (`fold::Evaluator::agreed_block`): where that block is merged, their reads are
    /// checked against the merged block as its own literal's are.
    pub(crate) agreed_literals: HashMap<BlockId, Vec<BlockId>>,
    /// Members of merged blocks whose final value must equal what an inline statement of
    /// a merged literal read: the literal's member, and where it was read
    /// (`Evaluator::check_inline_reads_against_merge`).
    /// `None` for a member the literal lacks, read as not defined (`defined($Tls)`).
    pub(crate) inline_read_checks: HashMap<SlotId, Vec<(Option<SlotId>, Span, PickSite)>>,
    /// The blocks whose inline statement is running, innermost last.
    pub(crate) inline_running: Vec<BlockId>,
    /// Members of other blocks that a running inline statement looked up (`if ($Opt.a)`
    /// looks up `Opt`'s `a`), by block, each with where it was first looked up: where a
    /// difference is reported, and the names a block lacked (read as not defined). A
    /// block an inline statement got as a value (`m($Opt)` passes the literal's `Opt`)
    /// counts as read by it whenever it is looked up later (`$b.a` in the branch the call
    /// gave), as do blocks inside it.
    pub(crate) inline_deep_reads: HashMap<BlockId, HashMap<Rc<str>, Span>>,
    /// The blocks inline statements of a literal got as values (see `inline_deep_reads`).
    pub(crate) inline_seen: HashSet<BlockId>,
    /// Those of them looked at whole (given to a function, output, added inline): which
    /// members they have was read too. With where it was first looked at whole.
    pub(crate) inline_whole: HashMap<BlockId, Span>,
    /// Resources a custom mutation function left undefined (its `mutate` gave `nil`): the
    /// function and its first top definition, for the message if one reaches the output.
    pub(crate) undefined_by_function: HashMap<SlotId, (String, Span)>,
    /// The directory of the main file (the default project directory).
    pub(crate) main_dir: std::path::PathBuf,
    /// The main file (set once it is loaded): where messages about the configuration as a
    /// whole point.
    pub(crate) main_file: Option<FileId>,
    /// The working directory, read once per compile.
    pub(crate) cwd: std::path::PathBuf,
    /// Blocks being materialised, with the path of the resource that holds each: meeting
    /// one again means a value contains itself.
    pub(crate) materializing: Vec<(BlockId, Option<SlotId>)>,
    /// The resources being materialised, innermost last.
    pub(crate) materializing_slots: Vec<SlotId>,
    /// How much has been output so far: one per value, plus the bytes of each text
    /// (bounded by `materialize::MAX_OUTPUT`).
    pub(crate) output_weight: u64,
    /// Expressions evaluated so far, and the most allowed (`crate::expr::MAX_STEPS`).
    pub(crate) steps: u64,
    pub(crate) max_steps: u64,
    /// This compile, as custom functions see it (`CallContext::compile`).
    pub(crate) compile: crate::external::CompileId,
    /// Secrets opened since the innermost [`Evaluator::tainting`] began (`crate::secret`).
    pub(crate) taint: Option<crate::secret::Taint>,
    /// How many taint records are open (none: secrets read are not noted).
    pub(crate) taint_depth: usize,
    /// Whether the outputs hold a secret (`Evaluation::holds_secrets`).
    pub(crate) output_secrets: bool,
    /// Inside a function call: the value of the next [`Evaluator::eval`] is opened (its
    /// secrets unwrapped and noted), because the function reads it as plain data.
    pub(crate) open_results: bool,
    /// While `=~` matches a secret text or regex: where it came from (for the captures).
    pub(crate) match_secret: Option<Rc<str>>,
    /// Canonical forms of `Options::allowed_dirs`, computed on first use.
    pub(crate) allowed: Option<Vec<std::path::PathBuf>>,
}

thread_local! {
    /// The arena sizes (blocks, slots, definitions, scopes) of the last compile on this
    /// thread. The hosts of one batch are alike, so each compile starts its arenas at the
    /// size the previous one reached instead of growing them step by step (growing copies
    /// them: a tenth of the instructions of a small compile). A hint only: it changes no
    /// result.
    static ARENA_SIZES: std::cell::Cell<[usize; 4]> = const { std::cell::Cell::new([0; 4]) };
}

/// Arenas larger than this are not kept as a hint (one huge compile must not make every
/// later small one reserve its size).
const ARENA_HINT_MAX: usize = 1 << 16;

impl Drop for Evaluator<'_> {
    fn drop(&mut self) {
        // The largest recent size, decaying slowly, so that hosts a little bigger than the
        // last one do not grow (and copy) the arenas either.
        let used = [
            self.blocks.len(),
            self.slots.len(),
            self.defs.len(),
            self.scopes.len(),
        ];
        ARENA_SIZES.with(|c| {
            let mut hint = c.get();
            for (h, n) in hint.iter_mut().zip(used) {
                *h = (*h - *h / 16).max(n).min(ARENA_HINT_MAX);
            }
            c.set(hint);
        });
    }
}

impl<'a> Evaluator<'a> {
    pub fn new(host: &'a dyn Host, loader: &'a Loader, opts: &'a Options) -> Evaluator<'a> {
        let [blocks, slots, defs, scopes] = ARENA_SIZES.with(|c| c.get()).map(|n| n + n / 8);
        Evaluator {
            host,
            loader,
            opts,
            blocks: Vec::with_capacity(blocks),
            slots: Vec::with_capacity(slots),
            defs: Vec::with_capacity(defs),
            scopes: Vec::with_capacity(scopes),
            insts: Vec::new(),
            thunks: Vec::new(),
            stack: Vec::new(),
            elements: Vec::new(),
            thunk_place: None,
            evaluating: Vec::new(),
            capture_sink: None,
            warnings: Vec::new(),
            load_failures: Default::default(),
            regexes: HashMap::new(),
            settled: Vec::new(),
            reads: HashMap::default(),
            statement_reads: Default::default(),
            pick_depth: 0,
            pick_site: None,
            pick_warned_from: 0,
            pick_thunks: HashMap::default(),
            pick_steps: 0,
            pick_first_block: 0,
            hidden_build_warnings: HashMap::new(),
            pick_value_imports_of: HashMap::default(),
            pick_work_limit_passed: None,
            pick_memo: HashMap::default(),
            pick_trace_marks: Vec::new(),
            selected_in_secret: HashMap::default(),
            secret_defs: HashMap::default(),
            picked_from: HashMap::default(),
            dup_reported: Vec::new(),
            value_imports: HashMap::default(),
            value_import_insts: HashSet::default(),
            value_imports_of: HashMap::default(),
            work_limit_passed: None,
            merged_into: HashMap::default(),
            copies_left_out: HashSet::default(),
            inline_reads: HashMap::default(),
            agreed_literals: HashMap::default(),
            inline_read_checks: HashMap::default(),
            inline_running: Vec::new(),
            building: Vec::new(),
            inline_deep_reads: HashMap::default(),
            inline_seen: HashSet::default(),
            inline_whole: HashMap::default(),
            undefined_by_function: HashMap::default(),
            main_dir: std::path::PathBuf::new(),
            main_file: None,
            cwd: loader.working_dir(host),
            materializing: Vec::new(),
            materializing_slots: Vec::new(),
            output_weight: 0,
            steps: 0,
            max_steps: opts.max_steps.unwrap_or(crate::expr::MAX_STEPS),
            compile: crate::external::CompileId::next(),
            taint: None,
            taint_depth: 0,
            output_secrets: false,
            open_results: false,
            match_secret: None,
            allowed: None,
        }
    }

    // ----- arenas -------------------------------------------------------------------

    pub(crate) fn block(&self, b: BlockId) -> &BlockNode<'a> {
        &self.blocks[b.0 as usize]
    }

    pub(crate) fn block_mut(&mut self, b: BlockId) -> &mut BlockNode<'a> {
        &mut self.blocks[b.0 as usize]
    }

    pub(crate) fn slot(&self, s: SlotId) -> &Slot<'a> {
        &self.slots[s.0 as usize]
    }

    pub(crate) fn slot_mut(&mut self, s: SlotId) -> &mut Slot<'a> {
        &mut self.slots[s.0 as usize]
    }

    pub(crate) fn def(&self, d: DefId) -> &Def<'a> {
        &self.defs[d.0 as usize]
    }

    pub(crate) fn scope(&self, s: ScopeId) -> &Scope {
        &self.scopes[s.0 as usize]
    }

    /// Where `$X` written in `sc` is looked up (clarifications §3): the root of its file.
    /// For a file imported inline into a block literal that was then merged with the
    /// resource's other definitions, that is the merged block, since a reference sees the
    /// resource's final value, as it does at the top level. Inline statements that run
    /// while the literal is being built, before the merge, see the literal.
    pub(crate) fn scope_root(&self, sc: ScopeId) -> BlockId {
        let mut root = self.scope(sc).root;
        // A merged block belongs to its own resource and is never merged as written into
        // another, so this is one step; the bound only keeps the walk finite.
        for _ in 0..=self.merged_into.len() {
            match self.merged_into.get(&root) {
                Some(&merged) if merged != root => root = merged,
                _ => break,
            }
        }
        root
    }

    pub(crate) fn new_block(&mut self, place: Place, state: BlockState<'a>) -> BlockId {
        let id = BlockId(self.blocks.len() as u32);
        self.blocks.push(BlockNode {
            place,
            members: NameMap::default(),
            state,
            inst: None,
        });
        id
    }

    /// A new resource, made a member of block `parent` under `name`.
    pub(crate) fn new_slot(&mut self, name: Name<'a>, parent: BlockId) -> SlotId {
        let id = self.push_slot(name.clone(), parent, Defs::new(), false);
        self.block_mut(parent).members.insert(name, id);
        id
    }

    /// A new resource of block `parent` that the caller enters in the block's member map
    /// itself.
    pub(crate) fn push_slot(
        &mut self,
        name: Name<'a>,
        parent: BlockId,
        defs: Defs,
        private: bool,
    ) -> SlotId {
        let id = SlotId(self.slots.len() as u32);
        self.slots.push(Slot {
            name,
            parent,
            defs,
            private,
            state: SlotState::Pending,
            outcome: None,
        });
        id
    }

    pub(crate) fn new_def(&mut self, def: Def<'a>) -> DefId {
        let id = DefId(self.defs.len() as u32);
        self.defs.push(def);
        id
    }

    pub(crate) fn new_scope(&mut self, scope: Scope) -> ScopeId {
        let id = ScopeId(self.scopes.len() as u32);
        self.scopes.push(scope);
        id
    }

    pub(crate) fn file(&self, id: FileId) -> Option<&'a LoadedFile> {
        self.loader.get(id)
    }

    /// Adds a warning the compile gives once per resource, however often its place is
    /// evaluated for it (a condition in a macro, a selector met again, a literal's member
    /// read by an inline statement and the merged member it becomes).
    pub(crate) fn warn_once(&mut self, w: Diagnostic) {
        // While a secret's pick is read, its warnings are its own (they are hidden): one
        // given by name before must not keep it from warning, or whether it warned would
        // depend on what was read first.
        let from = if self.pick_depth > 0 {
            self.pick_warned_from.min(self.warnings.len())
        } else {
            0
        };
        if !self.warnings[from..]
            .iter()
            .any(|x| crate::error::same_mistake(x, &w) && x.resource == w.resource)
        {
            self.warnings.push(w);
        }
    }

    /// The resource a block made now is placed in: the one being evaluated, or, for a
    /// macro argument, the one being evaluated at its call (see `force_thunk`).
    pub(crate) fn placing_slot(&self) -> Option<SlotId> {
        match self.thunk_place {
            Some((depth, made_for)) if depth == self.stack.len() => made_for,
            _ => self.stack.last().copied(),
        }
    }

    /// Where a block made now sits: in the resource it is placed in, at the list
    /// positions being evaluated.
    pub(crate) fn current_place(&self) -> Place {
        match self.placing_slot() {
            Some(s) if self.elements.is_empty() => Place::Of(s),
            Some(s) => Place::Element(s, Rc::from(self.elements.as_slice())),
            None => Place::Top,
        }
    }

    /// A block an inline statement of a literal gets as a value, or found inside one, is
    /// remembered: what is looked up in it later was read by that statement (see
    /// `inline_deep_reads`).
    #[inline]
    fn note_inline_seen(&mut self, s: SlotId, v: &Val) {
        if self.inline_running.is_empty() && self.inline_seen.is_empty() {
            return;
        }
        if let Val::Block(b) = v {
            if !self.inline_running.is_empty() || self.inline_seen.contains(&self.slot(s).parent) {
                self.inline_seen.insert(*b);
            }
        }
    }

    /// The dotted path of a resource (`Services.sshd.Port`), for messages.
    pub(crate) fn slot_path(&self, s: SlotId) -> String {
        let mut path = self.block_path(self.slot(s).parent);
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&self.slot(s).name);
        path
    }

    /// The dotted path of a block, for messages (empty for the configuration itself): the
    /// names of the resources holding it, walked up to where the outermost one sits. A
    /// block is always made after the resource it sits in, so the walk goes to ever older
    /// entries and ends; the bound is a guard, not a limit input can reach.
    pub(crate) fn block_path(&self, mut b: BlockId) -> String {
        use std::borrow::Cow;
        let mut names: Vec<Cow<'_, str>> = Vec::new();
        let mut prefix = "";
        for _ in 0..=self.slots.len() {
            match &self.block(b).place {
                Place::Top => break,
                Place::Named(p) => {
                    prefix = p;
                    break;
                }
                Place::Of(s) => {
                    let slot = self.slot(*s);
                    names.push(Cow::Borrowed(&slot.name));
                    b = slot.parent;
                }
                Place::Element(s, positions) => {
                    let slot = self.slot(*s);
                    names.extend(positions.iter().rev().map(|i| Cow::Owned(i.to_string())));
                    names.push(Cow::Borrowed(&slot.name));
                    b = slot.parent;
                }
            }
        }
        let mut out = String::from(prefix);
        for name in names.iter().rev() {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(name);
        }
        out
    }

    // ----- slots --------------------------------------------------------------------

    /// The warnings given since there were `n`.
    pub(crate) fn warnings_since(&self, n: usize) -> Warnings {
        Rc::from(self.warnings.get(n..).unwrap_or(&[]))
    }

    /// Gives again warnings an evaluation gave, as a reading that reuses its value must
    /// (a pick finding what another pick evaluated, `pick_memo`).
    pub(crate) fn warn_again(&mut self, warned: &[Diagnostic]) {
        for w in warned {
            self.warn_once(w.clone());
        }
    }

    /// The value a slot was evaluated to, if it was: by name, or while a secret's pick was
    /// read ([`Evaluator::pick_memo`]).
    pub(crate) fn evaluated_value(&self, s: SlotId) -> Option<&Val> {
        match &self.slot(s).state {
            SlotState::Done(v) => Some(v),
            SlotState::Pending => match self.pick_memo.get(&s) {
                Some((Ok(v), _)) => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// With `-Deval`, who a reference made now reads for: the resource whose definitions
    /// are being evaluated (the innermost slot), unless a block's statements are being run
    /// above it: what they read (an inline `if`'s condition) makes the block, not that
    /// resource's value, and is the inline statement's. `None` without `-Deval`, outside
    /// both, and while a secret's pick is read: which member it read would say what was
    /// picked.
    fn reader(&self) -> Option<Reader> {
        if !self.opts.trace || self.pick_depth > 0 {
            return None;
        }
        match self.building.last() {
            Some(&(b, depth)) if self.stack.len() <= depth => match &self.block(b).state {
                BlockState::Building {
                    statement: Some(statement),
                    ..
                } => Some(Reader::Statement(statement.span())),
                _ => None,
            },
            _ => self.stack.last().map(|s| Reader::Slot(*s)),
        }
    }

    fn reads_of_reader(&self, reader: Reader) -> Option<&ReadSet> {
        match reader {
            Reader::Slot(s) => self.reads.get(&s),
            Reader::Statement(at) => self.statement_reads.get(&at),
        }
    }

    fn reads_of_reader_mut(&mut self, reader: Reader) -> &mut ReadSet {
        match reader {
            Reader::Slot(s) => self.reads.entry(s).or_default(),
            Reader::Statement(at) => self.statement_reads.entry(at).or_default(),
        }
    }

    /// With `-Deval`, notes that `s` was read by reference (`$Cpus`, `$Web.Port`, a
    /// function's look-up), for its [`Evaluator::reader`].
    pub(crate) fn note_read(&mut self, s: SlotId) {
        let Some(reader) = self.reader() else {
            return;
        };
        if reader == Reader::Slot(s) {
            return;
        }
        self.reads_of_reader_mut(reader).insert(s);
    }

    /// How many reads the current reader has noted ([`Evaluator::note_read`]), for
    /// [`Evaluator::forget_read_since`].
    pub(crate) fn reads_noted(&self) -> usize {
        self.reader()
            .and_then(|r| self.reads_of_reader(r))
            .map_or(0, ReadSet::len)
    }

    /// After `$Web.Port` is evaluated: `Web` was read only on the way to its member, which
    /// the trace names instead. `mark` is [`Evaluator::reads_noted`] before the base was
    /// evaluated, `after_base` after, `base` its value: the read noted for the base in
    /// between, a resource whose value is that block, is forgotten if a member of the block
    /// was read. A block read whole elsewhere (before `mark`) stays.
    fn forget_read_since(&mut self, mark: usize, after_base: usize, base: &Val) {
        let (Some(reader), Val::Block(b)) = (self.reader(), base.plain()) else {
            return;
        };
        if after_base != mark + 1 {
            return;
        }
        let Some(read) = self.reads_of_reader(reader) else {
            return;
        };
        let holds_base = |s: &SlotId| matches!(&self.slot(*s).state, SlotState::Done(v) if matches!(v.plain(), Val::Block(x) if x == b));
        let member = |s: &SlotId| self.slot(*s).parent == *b;
        // The member is most often the read just noted; one read before is found by a scan.
        let member_read = read
            .get_range(after_base..)
            .is_some_and(|new| new.iter().any(member))
            || read.iter().enumerate().any(|(i, s)| i != mark && member(s));
        if read.get_index(mark).is_some_and(holds_base) && member_read {
            self.reads_of_reader_mut(reader).shift_remove_index(mark);
        }
    }

    /// `step` (a selection from `base`), with `-Deval` forgetting the read of `base` once
    /// the member it led to is noted ([`Evaluator::forget_read_since`]); `mark` is
    /// [`Evaluator::reads_noted`] from before `base` was evaluated. For `$Web.Port` and a
    /// function's `ctx:lookup("Web.Port")` alike.
    pub(crate) fn select_reading(
        &mut self,
        mark: usize,
        base: Val,
        step: impl FnOnce(&mut Self, Val) -> R<Val>,
    ) -> R<Val> {
        if !self.opts.trace {
            return step(self, base);
        }
        let after_base = self.reads_noted();
        let v = step(self, base.clone())?;
        self.forget_read_since(mark, after_base, &base);
        Ok(v)
    }

    /// The value of a slot: its definitions folded (once; the result is memoised).
    pub(crate) fn force(&mut self, s: SlotId) -> R<Val> {
        let in_pick = self.pick_depth > 0;
        match &self.slot(s).state {
            SlotState::Active => {
                return match self.literal_being_built_for(s) {
                    Some(literal) => Ok(Val::Block(literal)),
                    None => Err(self
                        .cycle_through_building(s)
                        .unwrap_or_else(|| self.cycle_error(s))),
                };
            }
            // Read for a secret's pick: evaluated apart, whatever was read by name before,
            // so that what the pick shows (its hidden trace entries, its warning) does not
            // depend on what else was read first (`pick_memo`).
            _ if in_pick => {
                if let Some((r, warned)) = self.pick_memo.get(&s) {
                    let (r, warned) = (r.clone(), warned.clone());
                    self.warn_again(&warned);
                    if let Ok(v) = &r {
                        self.note_inline_seen(s, v);
                    }
                    return r;
                }
            }
            SlotState::Done(v) => {
                let v = v.clone();
                self.note_inline_seen(s, &v);
                return Ok(v);
            }
            SlotState::Failed(e) => return Err(e.clone()),
            SlotState::Pending => {}
        }
        // What a pick's evaluation leaves as it was (by name it is pending, or settled).
        let before = if in_pick {
            std::mem::replace(&mut self.slot_mut(s).state, SlotState::Active)
        } else {
            self.slot_mut(s).state = SlotState::Active;
            SlotState::Pending
        };
        let warned = self.warnings.len();
        self.stack.push(s);
        // List positions belong to the slot whose value holds the list.
        let elements = std::mem::take(&mut self.elements);
        // A condition's regex captures belong to that condition only.
        let sink = self.capture_sink.take();
        // A resource's value is stored as it is (secrets wrapped), whoever asks for it.
        let open = std::mem::replace(&mut self.open_results, false);
        let result = deep(|| self.fold_slot(s));
        self.open_results = open;
        self.capture_sink = sink;
        self.elements = elements;
        self.stack.pop();
        match result {
            // Read for a secret's pick: kept apart, the slot left to be evaluated anew
            // outside (`pick_memo`); not named in the trace, where the pick has one hidden
            // entry (`pick_trace_marks`).
            Ok((v, _)) if in_pick => {
                self.slot_mut(s).state = before;
                let given = self.warnings_since(warned);
                self.pick_memo.insert(s, (Ok(v.clone()), given));
                self.note_inline_seen(s, &v);
                Ok(v)
            }
            Ok((v, outcome)) => {
                let slot = self.slot_mut(s);
                slot.state = SlotState::Done(v.clone());
                // Only a traced slot is read back (provenance, in settling order).
                if let Some(record) = outcome.record {
                    slot.outcome = Some(record);
                    self.settled.push(s);
                }
                self.note_inline_seen(s, &v);
                Ok(v)
            }
            Err(mut e) => {
                if e.diag.resource.is_none() {
                    e.diag.resource = Some(self.slot_path(s));
                }
                if in_pick {
                    self.slot_mut(s).state = before;
                    let given = self.warnings_since(warned);
                    self.pick_memo.insert(s, (Err(e.clone()), given));
                } else {
                    self.slot_mut(s).state = SlotState::Failed(e.clone());
                }
                Err(e)
            }
        }
    }

    /// A block literal written for resource `s` whose inline statements are running,
    /// if any: the fold of `s` is merging it with `s`'s other definitions. An inline
    /// statement that reads `s` by its path (`if ($Web.Secure)` inside `Web => { ... }`,
    /// beside a `Web.Name => host1`) sees the literal's own members, as an unqualified
    /// reference in a file imported into the literal does, not a cycle (semantics §3): what
    /// it reads is recorded by the literal, and checked against the merged block
    /// (`Evaluator::check_inline_reads_against_merge`).
    ///
    /// The literal may sit inside one written for `s` (`A => { S => { ..., if ($A.S.Tls)
    /// ... } }`): the outer literal is seen then, and `.S` leads to the inner one the same
    /// way. Only for a read made by the inline statement itself, through nothing but the
    /// resources holding the literal: a read through another resource (`if ($Flag)`,
    /// `Flag => $S.Tls`) stays a cycle, whichever of the two is evaluated first.
    fn literal_being_built_for(&self, s: SlotId) -> Option<BlockId> {
        let at = self.stack.iter().rposition(|x| *x == s)?;
        let above = self.stack.get(at + 1..).unwrap_or_default();
        for &running in self.inline_running.iter().rev() {
            // Up from the running literal through the resources holding it, to `s`.
            let mut b = running;
            let mut holders: Vec<SlotId> = Vec::new();
            for _ in 0..=self.stack.len() {
                let Place::Of(owner) = self.block(b).place else {
                    break;
                };
                if owner == s || self.agrees_on(s, owner) {
                    return above.iter().all(|x| holders.contains(x)).then_some(b);
                }
                holders.push(owner);
                b = self.slot(owner).parent;
            }
        }
        None
    }

    /// Whether slot `s` is a member of a block that unordered equal blocks agree on,
    /// standing (among others) for `member` of one of them (`Body::Agreed`): a literal
    /// being built for `member` is being built for `s` too.
    pub(crate) fn agrees_on(&self, s: SlotId, member: SlotId) -> bool {
        self.slot(s)
            .defs
            .iter()
            .any(|d| matches!(self.def(*d).body, Body::Agreed { member: m, .. } if m == member))
    }

    fn cycle_error(&self, s: SlotId) -> EvalError {
        let start = self.stack.iter().position(|x| *x == s).unwrap_or(0);
        // A member of blocks agreed on is evaluated through its copy in one of them, a
        // slot of the same path: one step of the cycle.
        let mut names: Vec<String> = Vec::new();
        let mut prev: Option<SlotId> = None;
        for &x in self.stack[start..].iter().chain(std::iter::once(&s)) {
            let name = self.slot_path(x);
            if prev.is_some_and(|p| p != x) && names.last() == Some(&name) {
                continue;
            }
            names.push(name);
            prev = Some(x);
        }
        // A long cycle is shown by its ends: every resource on it keeps a copy of this
        // error, so its size must not grow with the cycle.
        const SHOWN: usize = 6;
        if names.len() > 2 * SHOWN + 1 {
            let hidden = names.len() - 2 * SHOWN;
            let tail = names.split_off(names.len() - SHOWN);
            names.truncate(SHOWN);
            names.push(format!("… {hidden} more …"));
            names.extend(tail);
        }
        let path = self.slot_path(s);
        let mut d = Diagnostic::error(format!("`{path}` depends on itself: {}", names.join(" → ")))
            .resource(path.clone());
        // The definition where the cycle starts, for the hint.
        let mut first: Option<DefId> = None;
        let mut shown: Vec<Span> = Vec::new();
        for (i, x) in self.stack.iter().enumerate().skip(start).take(SHOWN) {
            // The definition of that resource whose evaluation led on, else its first.
            let depth = i + 1;
            let on_cycle = self
                .evaluating
                .iter()
                .rev()
                .take_while(|(d, _)| *d >= depth)
                .find(|(d, _)| *d == depth)
                .map(|(_, def)| *def);
            if let Some(def) = on_cycle.or_else(|| self.slot(*x).defs.first().copied()) {
                let site = self.def(def).site;
                if shown.contains(&site) {
                    continue;
                }
                shown.push(site);
                if first.is_none() {
                    d = d.at(site).with_label("the cycle starts here");
                    first = Some(def);
                } else {
                    d = d.also(site, format!("`{}` is defined here", self.slot_path(*x)));
                }
            }
        }
        d = if self.stack.len() == start + 1 && self.slot(s).defs.len() > 1 {
            // `Memory => $Memory + 8`: meant as "8 more than the imported value". The way
            // to say that depends on the kind of value the definition builds.
            let built = first.and_then(|def| match self.def(def).body {
                Body::Expr(e, _) => Some(&e.kind),
                _ => None,
            });
            let instead = match built {
                Some(ast::ExprKind::List(_)) => format!(
                    "to add to that list write `{path} ~(append)> [...]` (or `~(union)>` without duplicates)"
                ),
                Some(ast::ExprKind::Binary(ast::BinaryOp::Concat, ..) | ast::ExprKind::String(_)) => {
                    "no mutation function joins text: compute it from another resource instead (a `private` one holding the part below)".to_string()
                }
                _ => format!(
                    "to add to that value write `{path} ~(sum)> ...` (or `~(max)>`/`~(min)>` for a bound)"
                ),
            };
            d.hint(format!(
                "a reference sees the final value of `{path}`, so its own definition cannot build on the value below it: {instead}"
            ))
        } else {
            d.hint("break the cycle: one of these resources must not depend on the others")
        };
        EvalError::new(d)
    }

    // ----- members ------------------------------------------------------------------

    /// Looks up a member of a block, building the block first if needed. While the block is
    /// being built, the look-up is recorded (inline statements must not define what inline
    /// statements read).
    pub(crate) fn member(&mut self, b: BlockId, name: &str, at: Span) -> R<Option<SlotId>> {
        self.build_plain(b)?;
        if let BlockState::Building { .. } = self.block(b).state {
            if let Some(e) = self.read_through_another(b) {
                return Err(e);
            }
        }
        let running = self.inline_running.last().copied();
        if running.is_some_and(|r| r != b)
            || (!self.inline_seen.is_empty() && self.inline_seen.contains(&b))
        {
            let names = self.inline_deep_reads.entry(b).or_default();
            if !names.contains_key(name) {
                names.insert(Rc::from(name), at);
            }
        }
        let block = self.block_mut(b);
        if let BlockState::Building { reads, running, .. } = &mut block.state {
            reads.push((Rc::from(name), at, *running));
        }
        Ok(block.members.get(name).copied())
    }

    /// A look-up in block `b` while its inline statements run, made for a resource outside
    /// `b` that one of them is evaluating (`S => { ..., if ($Flag) ... }` with
    /// `Flag => $S.Tls`): `b` depends on that resource, which depends on `b`, a cycle.
    /// An inline statement may read the block's own members, directly or through other
    /// members (`if ($S.Tls)`), but not through another resource: otherwise the answer
    /// would depend on which of the two is output first (semantics §3, "Cycles").
    fn read_through_another(&self, b: BlockId) -> Option<EvalError> {
        let &(_, depth) = self.building.iter().rev().find(|(x, _)| *x == b)?;
        let above = self.stack.get(depth..).unwrap_or_default();
        // Most look-ups are the inline statement's own, or through members of `b`.
        if above.iter().all(|&x| self.slot_is_within(x, b)) {
            return None;
        }
        self.inline_cycle(b, above.to_vec())
    }

    /// The same cycle found from the other end: slot `s`, evaluated first, is needed again
    /// by an inline statement of a block whose building it started (`Flag` is output
    /// first; `$S.Tls` builds `S`, whose `if ($Flag)` needs `Flag`). Reported as
    /// [`Evaluator::read_through_another`] reports it, so the error does not depend on
    /// which resource is evaluated first.
    fn cycle_through_building(&self, s: SlotId) -> Option<EvalError> {
        let at = self.stack.iter().rposition(|x| *x == s)?;
        self.building
            .iter()
            .rev()
            .filter(|(_, depth)| *depth > at)
            .find_map(|&(b, depth)| {
                // Around the cycle from `b`: what its inline statement evaluated since it
                // began, then what was being evaluated when `b` began to be built.
                let mut through = self.stack.get(depth..).unwrap_or_default().to_vec();
                through.extend(self.stack.get(at..depth).unwrap_or_default());
                self.inline_cycle(b, through)
            })
    }

    /// Block `b` needs `through` for its inline statements, and the last of them needs
    /// `b`: an error if one of them is outside `b`.
    fn inline_cycle(&self, b: BlockId, mut through: Vec<SlotId>) -> Option<EvalError> {
        // The resources holding `b` (a literal that `S`'s fold is merging) are `b`.
        let holders: Vec<SlotId> = self.holders(b).collect();
        through.retain(|x| !holders.contains(x));
        let outside = *through.iter().find(|&&x| !self.slot_is_within(x, b))?;
        let owner = self.block_path(b);
        let mut names = vec![owner.clone()];
        names.extend(through.iter().map(|x| self.slot_path(*x)));
        names.push(owner.clone());
        let through_name = self.slot_path(outside);
        let mut d = Diagnostic::error(format!(
            "`{owner}` depends on itself: {}",
            names.join(" → ")
        ))
        .resource(owner.clone());
        if let Some(def) = self.slot(outside).defs.first() {
            d = d.at(self.def(*def).site).with_label(format!(
                "`{through_name}` is needed by an inline statement of `{owner}`, and needs `{owner}`"
            ));
        }
        for &x in through.iter().filter(|&&x| x != outside) {
            if let Some(def) = self.slot(x).defs.first() {
                d = d.also(
                    self.def(*def).site,
                    format!("`{}` is defined here", self.slot_path(x)),
                );
            }
        }
        Some(EvalError::new(d.hint(format!(
            "an inline statement of `{owner}` may read the block's own members (`${owner}.name`), but not through another resource such as `{through_name}`, which needs `{owner}` built first"
        ))))
    }

    /// The resources whose value block `b` is, or is inside, innermost first.
    fn holders(&self, b: BlockId) -> impl Iterator<Item = SlotId> + '_ {
        let mut block = b;
        std::iter::from_fn(move || match &self.block(block).place {
            Place::Of(s) | Place::Element(s, _) => {
                block = self.slot(*s).parent;
                Some(*s)
            }
            Place::Top | Place::Named(_) => None,
        })
        .take(self.slots.len() + 1)
    }

    /// Whether slot `x` is a member of block `b`, or of a block inside it.
    fn slot_is_within(&self, x: SlotId, b: BlockId) -> bool {
        let parent = self.slot(x).parent;
        parent == b || self.holders(parent).any(|s| self.slot(s).parent == b)
    }

    /// The members of a built block, in output order.
    /// A block's members sorted by name: for comparisons that must not depend on the order
    /// in which a block lists them.
    pub(crate) fn members_by_name(&mut self, b: BlockId, at: Span) -> R<Vec<(Name<'a>, SlotId)>> {
        let mut members = self.members(b, at)?;
        members.sort_by(|(p, _), (q, _)| p.cmp(q));
        Ok(members)
    }

    /// The origin of the secret whose selector picked block `b`, if one did
    /// ([`Evaluator::selected_in_secret`]); asked for every block read, so the usual
    /// case, no such block at all, costs no hashing.
    pub(crate) fn picked_origin(&self, b: &BlockId) -> Option<Rc<str>> {
        if self.selected_in_secret.is_empty() && self.picked_from.is_empty() {
            return None;
        }
        if let Some(origin) = self.selected_in_secret.get(b) {
            return Some(origin.clone());
        }
        // A block that is a member of one a secret selector picked from: a candidate.
        match self.block(*b).place {
            Place::Of(slot) if !self.picked_from.is_empty() => {
                self.picked_from.get(&self.slot(slot).parent).cloned()
            }
            _ => None,
        }
    }

    /// A definition copied from a picked block ([`Evaluator::secret_defs`]), with its
    /// secret's origin and the statement that copied it; asked for every definition.
    pub(crate) fn secret_def(&self, d: DefId) -> Option<(Rc<str>, Span)> {
        if self.secret_defs.is_empty() {
            return None;
        }
        self.secret_defs.get(&d).cloned()
    }

    /// Where messages show definition `d`: where it is written, or, copied from a
    /// secret's pick, the statement that copied it (its own place is in the member picked).
    pub(crate) fn shown_site(&self, d: DefId) -> Span {
        self.secret_def(d).map_or(self.def(d).site, |(_, at)| at)
    }

    /// The file block `b` was imported from as a value (`import(f)`, a KeePass database),
    /// if it was.
    pub(crate) fn value_import_file(&self, b: BlockId) -> Option<FileId> {
        self.value_imports.get(&b).copied()
    }

    pub(crate) fn members(&mut self, b: BlockId, at: Span) -> R<Vec<(Name<'a>, SlotId)>> {
        self.member_count(b, at)?;
        Ok(self
            .block(b)
            .members
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect())
    }

    /// The number of members of a block, built first; with [`Evaluator::member_at`], walks
    /// them in output order without copying the list. A block still running its inline
    /// statements cannot be looked at whole.
    pub(crate) fn member_count(&mut self, b: BlockId, at: Span) -> R<usize> {
        self.build_plain(b)?;
        // A block an inline statement of a literal got, looked at whole (given to a
        // function, output, its members added inline): all of it was read.
        if !self.inline_seen.is_empty() && self.inline_seen.contains(&b) {
            self.inline_whole.entry(b).or_insert(at);
        }
        if let BlockState::Building { .. } = self.block(b).state {
            return Err(EvalError::new(
                Diagnostic::error(format!(
                    "the block `{}` is needed whole while its own inline statements are still being evaluated",
                    self.block_path(b)
                ))
                .at(at)
                .hint("an inline `import`, `if` or function call cannot depend on the whole block it adds to"),
            ));
        }
        Ok(self.block(b).members.len())
    }

    /// The `i`th member of a block `member_count` was asked about.
    pub(crate) fn member_at(&self, b: BlockId, i: usize) -> Option<(Name<'a>, SlotId)> {
        self.block(b)
            .members
            .get_index(i)
            .map(|(k, v)| (k.clone(), *v))
    }

    /// Builds a block; its inline statements see values as they are, even when the look-up
    /// that built it happened inside a function call.
    fn build_plain(&mut self, b: BlockId) -> R<()> {
        match &self.block(b).state {
            BlockState::Unbuilt(_) => {}
            BlockState::Failed(e) => return Err(e.clone()),
            // Built: `ensure_built` only gives what a pick's building of it hid.
            _ => return self.ensure_built(b),
        }
        let open = std::mem::replace(&mut self.open_results, false);
        let r = self.ensure_built(b);
        self.open_results = open;
        r
    }

    /// A "no such resource" error with a suggestion. Where an inline statement of a
    /// `{ ... }` literal read it and a definition outside the literal gives it, that is
    /// said instead: the member exists once the literal is merged (semantics §3).
    pub(crate) fn missing_member(&self, b: BlockId, name: &str, at: Span, what: &str) -> EvalError {
        let mut d = Diagnostic::error(format!("{what} `{name}` is not defined"))
            .at(at)
            .with_label("not defined");
        let building = match &self.block(b).state {
            BlockState::Building { statement, .. } => Some(*statement),
            _ => None,
        };
        if let Some(Some(st)) = building {
            // The look-up happened while an inline statement ran: `name` may be one that
            // statement, or one after it, would add (reference §3.8, §3.10).
            let kind = match st {
                Statement::Import(_) => "import",
                Statement::If(_) => "`if`",
                _ => "function call",
            };
            d = d.also(
                st.span(),
                format!("read while this inline {kind} is evaluated"),
            );
        }
        // The literal whose inline statement is running, and the path in it of the
        // missing member: `b` itself, or a block above `b` for a member of its sub-block.
        let outside = match building {
            Some(_) => Some((b, name.to_string())),
            None => self
                .literal_being_built_above(b)
                .map(|(literal, within)| (literal, format!("{within}.{name}"))),
        }
        .and_then(|(literal, path)| {
            let steps: Vec<&str> = path.split('.').collect();
            let site = self.given_outside_literal(literal, &steps)?;
            Some((literal, path.clone(), site))
        });
        if let Some((literal, path, site)) = outside {
            let at = self.block_path(literal);
            return EvalError::missing(
                d.also(
                    site,
                    format!("`{at}.{path}` gets a value here, outside the literal"),
                )
                .note(crate::build::LITERAL_SEES_ITS_OWN_MEMBERS)
                .hint(crate::build::give_inside_the_literal(&path)),
            );
        }
        // Never suggest the resource whose definition holds the bad reference (only that
        // one: `Nginx.Hostname => $Hostnme` may well mean the top-level `Hostname`).
        let current = self.stack.last().copied();
        let names = self
            .block(b)
            .members
            .iter()
            .filter(|(_, slot)| current != Some(**slot))
            .map(|(k, _)| &**k);
        // `$my-name`: a `-` right after the name, then a word, is a subtraction.
        let hyphened = self
            .file(at.file)
            .and_then(|f| f.source.text.get(at.end as usize..))
            .and_then(|rest| rest.strip_prefix('-'))
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .filter(|word| word.starts_with(char::is_alphabetic));
        if let Some(word) = hyphened {
            let joined = format!("{name}_{word}");
            let exists = self.block(b).members.contains_key(joined.as_str());
            d = d.hint(format!(
                "names cannot contain `-`, so `{name}-{word}` is read as `{name} - {word}`{}",
                if exists {
                    format!(": did you mean `{joined}`?")
                } else {
                    String::new()
                }
            ));
        } else if let Some(s) = cf2_syntax::diagnostic::did_you_mean(name, names) {
            d = d.hint(format!("did you mean `{s}`?"));
        } else if building.is_some() {
            d = d.note(
                "resources that inline `import`s, `if`s or function calls add to a block cannot be read by those inline statements",
            );
            // Another definition of the resource may give it, out of sight.
            if let Place::Of(owner) = self.block(b).place {
                if self.slot(owner).defs.len() > 1 {
                    d = d.note(crate::build::LITERAL_SEES_ITS_OWN_MEMBERS);
                }
            }
        }
        EvalError::missing(d)
    }

    /// The literal enclosing block `b` (not `b` itself) whose inline statement is running,
    /// and the path in it of the member that holds `b` (`Opt.Sub` for `b` =
    /// `Web.Opt.Sub`).
    fn literal_being_built_above(&self, mut b: BlockId) -> Option<(BlockId, String)> {
        let mut within: Vec<&str> = Vec::new();
        for _ in 0..=self.blocks.len() {
            let Place::Of(owner) = self.block(b).place else {
                return None;
            };
            let slot = self.slot(owner);
            within.push(&slot.name);
            b = slot.parent;
            if let BlockState::Building {
                statement: Some(_), ..
            } = &self.block(b).state
            {
                within.reverse();
                return Some((b, within.join(".")));
            }
        }
        None
    }

    /// For a block literal made for a resource: where another definition of that resource
    /// gives it the member at `path` (`Tls`, or `Opt.a` in a sub-block): an implicit path
    /// `Web.Opt.a => …`, or a `{ ... }` written with it, which the literal's inline
    /// statements cannot see (semantics §3). The literal itself lacks the member, so it is
    /// never the one found.
    fn given_outside_literal(&self, b: BlockId, path: &[&str]) -> Option<Span> {
        let Place::Of(owner) = self.block(b).place else {
            return None;
        };
        self.slot(owner).defs.iter().find_map(|d| {
            let def = self.def(*d);
            let gives = match &def.body {
                Body::Implicit { def: rd, next, .. } => {
                    resource_gives(rd, rd.path.get(*next..).unwrap_or_default(), path)
                }
                Body::Expr(e, _) => expr_gives(e, path),
                _ => false,
            };
            gives.then_some(def.site)
        })
    }
}

/// Whether a resource definition whose remaining path is `names` writes the member at
/// `path` of the block it is in: the paths agree as far as both go, and where the
/// definition's path is shorter, its value (a `{ ... }` literal) writes the rest.
fn resource_gives(rd: &ast::ResourceDef, names: &[ast::Ident], path: &[&str]) -> bool {
    let agree = names.iter().zip(path).all(|(n, p)| *n.name == **p);
    if !agree {
        return false;
    }
    match path.get(names.len()..) {
        None | Some([]) => true,
        Some(rest) => rd.mutations.iter().any(|m| expr_gives(&m.value, rest)),
    }
}

/// Whether an expression is a `{ ... }` literal that writes the member at `path`
/// (bounded by the path's length, not by the input's nesting).
fn expr_gives(e: &ast::Expr, path: &[&str]) -> bool {
    match &e.kind {
        ast::ExprKind::Block(stmts) => stmts.iter().any(|st| {
            matches!(st, Statement::Resource(rd) if !path.is_empty() && resource_gives(rd, &rd.path, path))
        }),
        _ => false,
    }
}

/// The resources one reader read, in the order first read (`Evaluator::note_read`).
pub(crate) type ReadSet = indexmap::IndexSet<SlotId, foldhash::fast::RandomState>;

/// Who a read by reference is noted for (`Evaluator::reader`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reader {
    /// The resource whose definitions are being evaluated.
    Slot(SlotId),
    /// The inline statement being run, by its place.
    Statement(Span),
}
