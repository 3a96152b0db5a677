//! Building a block: gathering the definitions of its resources from its body and from
//! every file imported inline into it, running its inline statements, and checking the
//! rule that inline statements must not define what inline statements read
//! (reference §3.8, §3.10; docs/semantics.md §"Inline statements").
//!
//! Inline statements run in reading order (their [`Order`] keys), after every plain
//! definition of the body is in place.

use crate::error::{EvalError, R};
use crate::eval::Evaluator;
use crate::eval::PickSite;
use crate::fold::Rank;
use crate::model::*;
use crate::val::Val;
use cf2_syntax::ast::{self, ExprKind, Statement};
use cf2_syntax::{Diagnostic, FileId, Span};
use cf2_value::Number;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// An inline statement waiting to run.
struct Pending<'a> {
    stmt: &'a Statement,
    scope: ScopeId,
    /// Its source node and the batch of definitions it came with.
    runner: Runner,
}

/// Where new definitions of a block being built come from.
#[derive(Clone)]
struct Source {
    inst: InstId,
    node: u32,
    /// The priority key of this source's definitions (`[Src(inst, node)]`), made once and
    /// shared by all of them.
    prio: Key,
    scope: ScopeId,
    /// True for definitions added by inline statements.
    inline: bool,
    /// True for the statements of a file imported inline (not those of an `if` branch
    /// or a call's block): inline statements written in that file, or in files it
    /// imports inline, may read what they define (see `check_inline_reads`).
    imported: bool,
}

/// Where a file imported below a source stands in the block's source graph.
enum SourceNode {
    /// A node of its own, just made: its statements are still to be added.
    New(u32),
    /// The node it has already.
    Existing(u32),
    /// Importing it there would make it outrank itself.
    Cycle,
    /// The block has no source graph (cannot happen for a block being built).
    Missing,
}

struct Work<'a> {
    /// Imports of a file named by a literal (`import(web)`): they read nothing, so they all
    /// run, transitively, before any other inline statement (see `run_inline`).
    imports: BTreeMap<Order, Pending<'a>>,
    /// The other inline statements, which read resources: run in reading order.
    pending: BTreeMap<Order, Pending<'a>>,
    /// Names defined by inline statements (see [`InlineDef`]).
    inline_defs: Vec<InlineDef<'a>>,
    /// Batches of definitions added so far (a body, a file, a branch, a call's block).
    batches: u32,
    /// The batches there were when the first statement that reads ran: everything the
    /// imports by literal name bring, in place before anything reads, whatever the order.
    initial: Option<u32>,
}

/// Where a value an inline statement saw differs from the final one: the path below the
/// member it read (`["a"]` for `Opt.a`), the value it saw there and the final one (`None`:
/// not defined), and where the differing part was read when it is below the member.
struct Differs {
    below: Vec<String>,
    seen: Option<Val>,
    fin: Option<Val>,
    at: Option<Span>,
}

/// A member read of a block an inline statement saw: its name, the value it had there
/// (`None`: not defined), and where it was looked up, if it was.
type BlockRead = (Rc<str>, Option<Val>, Option<Span>);

/// A name defined by an inline statement.
struct InlineDef<'a> {
    name: Name<'a>,
    /// The defining statement.
    at: Span,
    /// For a statement of a file imported inline, that file's source node.
    container: Option<u32>,
    /// The batch that added it (see `Work::batches`).
    batch: u32,
}

impl<'a> Evaluator<'a> {
    pub(crate) fn ensure_built(&mut self, b: BlockId) -> R<()> {
        let spec = match &self.block(b).state {
            BlockState::Built | BlockState::Building { .. } => {
                if !self.hidden_build_warnings.is_empty() {
                    self.reshow_build_warnings(b);
                }
                return Ok(());
            }
            BlockState::Failed(e) => return Err(e.clone()),
            BlockState::Unbuilt(spec) => spec.clone(),
        };
        // A block from before the pick, built for it: what its building warns is hidden
        // here, and kept to be given where it is read by name (`hidden_build_warnings`).
        if self.pick_depth > 0 && b.0 < self.pick_first_block {
            let warned = self.warnings.len();
            let r = self.build_spec(b, spec);
            let given = self.warnings_since(warned);
            if !given.is_empty() {
                self.hidden_build_warnings
                    .entry(b)
                    .or_default()
                    .extend_from_slice(&given);
            }
            return r;
        }
        self.build_spec(b, spec)
    }

    fn build_spec(&mut self, b: BlockId, spec: BuildSpec<'a>) -> R<()> {
        match spec {
            BuildSpec::Implicit { def, next, scope } => {
                self.build_implicit(b, def, next, scope);
                self.block_mut(b).state = BlockState::Built;
                Ok(())
            }
            BuildSpec::Body { stmts, file, scope } => self.build_body(b, stmts, file, scope),
            BuildSpec::ViewOf { seen, at } => self.build_view(b, seen, at),
        }
    }

    /// `a.b.c OP v`: the block holding `def.path[next]`.
    fn build_implicit(
        &mut self,
        b: BlockId,
        def: &'a ast::ResourceDef,
        next: usize,
        scope: ScopeId,
    ) {
        let Some((name, defs)) = self.implicit_member(def, next, scope) else {
            return;
        };
        let slot = self.new_slot(name, b);
        let s = self.slot_mut(slot);
        s.defs = defs;
        s.private |= def.private && next + 1 == def.path.len();
    }

    /// The one member of the block holding `def.path[next]`, with its definitions (see
    /// [`Evaluator::path_defs`]), keyed relative to that block.
    fn implicit_member(
        &mut self,
        def: &'a ast::ResourceDef,
        next: usize,
        scope: ScopeId,
    ) -> Option<(Name<'a>, Defs)> {
        let ident = def.path.get(next)?;
        let file = self.scope(scope).file;
        let (prio, order): (Key, Order) = (Key::new(), smallvec::smallvec![0]);
        let defs = self.path_defs(def, next, scope, &prio, &order, file);
        Some((Name::Src(&ident.name), defs))
    }

    /// One definition per mutation of `def` (`X => a ~(f)> b` is two).
    fn mutation_defs(
        &mut self,
        def: &'a ast::ResourceDef,
        scope: ScopeId,
        prio: &Key,
        order: &Order,
        file: FileId,
    ) -> Defs {
        let many = def.mutations.len() > 1;
        let mut defs = Defs::new();
        for (k, m) in def.mutations.iter().enumerate() {
            let op = match &m.op {
                ast::MutationOp::Assign => Op::Assign,
                ast::MutationOp::Merge => Op::Merge,
                ast::MutationOp::Function(name) => Op::Func(name),
            };
            // The mutations of one statement rank and read left to right.
            let (prio, order): (Key, Order) = if many {
                (
                    extend(prio, &[Step::Seq(k as u32)]),
                    extend(order, &[k as u32]),
                )
            } else {
                (Key::from_slice(prio), Order::from_slice(order))
            };
            defs.push(self.new_def(Def {
                op,
                body: Body::Expr(&m.value, scope),
                prio,
                order,
                private: def.private,
                site: def.span,
                file,
            }));
        }
        defs
    }

    /// The definitions `def.path[at]` gets: the written mutations at the end of the path,
    /// else one `~>` of the block holding the rest (`a.b.c OP v`).
    fn path_defs(
        &mut self,
        def: &'a ast::ResourceDef,
        at: usize,
        scope: ScopeId,
        prio: &Key,
        order: &Order,
        file: FileId,
    ) -> Defs {
        if at + 1 >= def.path.len() {
            return self.mutation_defs(def, scope, prio, order, file);
        }
        let d = self.new_def(Def {
            op: Op::Merge,
            body: Body::Implicit {
                def,
                next: at + 1,
                scope,
            },
            prio: Key::from_slice(prio),
            order: Order::from_slice(order),
            private: false,
            site: def.span,
            file,
        });
        smallvec::smallvec![d]
    }

    /// A new source graph for a block body read from `file`.
    fn new_instance(&mut self, file: FileId) -> InstId {
        let inst = InstId(self.insts.len() as u32);
        self.insts.push(Instance {
            files: smallvec::smallvec![file],
            edges: smallvec::smallvec![Vec::new()],
            reach: None,
        });
        inst
    }

    /// What a merge reads of a block it only contributes, without building the block:
    /// each member's name with its definitions, in reading order (`add` is called once
    /// per definition). Only for an unbuilt implicit block (`a.b OP v`) or `{ ... }` body of
    /// plain resources (most merged blocks); `false`, having done nothing, otherwise:
    /// inline statements need the block.
    pub(crate) fn read_plain_body(
        &mut self,
        b: BlockId,
        add: &mut dyn FnMut(Name<'a>, DefId),
    ) -> bool {
        let (stmts, file, scope) = match self.block(b).state {
            BlockState::Unbuilt(BuildSpec::Body { stmts, file, scope }) => (stmts, file, scope),
            BlockState::Unbuilt(BuildSpec::Implicit { def, next, scope }) => {
                if let Some((name, defs)) = self.implicit_member(def, next, scope) {
                    for d in defs {
                        add(name.clone(), d);
                    }
                }
                return true;
            }
            _ => return false,
        };
        let plain = |st: &Statement| matches!(st, Statement::Resource(_) | Statement::Macro(_));
        if !stmts.iter().all(plain) {
            return false;
        }
        // The same keys and reading orders as `build_body` gives them.
        let inst = self.new_instance(file);
        let prio: Key = smallvec::smallvec![Step::Src(inst, 0)];
        for (i, st) in stmts.iter().enumerate() {
            let Statement::Resource(r) = st else { continue };
            let Some(first) = r.path.first() else {
                continue;
            };
            let order: Order = smallvec::smallvec![i as u32];
            for d in self.path_defs(r, 0, scope, &prio, &order, file) {
                add(Name::Src(&first.name), d);
            }
        }
        true
    }

    fn build_body(
        &mut self,
        b: BlockId,
        stmts: &'a [Statement],
        file: FileId,
        scope: ScopeId,
    ) -> R<()> {
        let inst = self.new_instance(file);
        if self.value_imports.contains_key(&b) {
            if let Some(old) = self.block(b).inst {
                self.value_import_insts.remove(&old);
            }
            self.value_import_insts.insert(inst);
        }
        self.block_mut(b).inst = Some(inst);
        self.block_mut(b).state = BlockState::Building {
            reads: Vec::new(),
            running: Runner::default(),
            statement: None,
        };
        self.building.push((b, self.stack.len()));
        let mut work = Work {
            imports: BTreeMap::new(),
            pending: BTreeMap::new(),
            inline_defs: Vec::new(),
            batches: 0,
            initial: None,
        };
        let body = Source {
            inst,
            node: 0,
            prio: smallvec::smallvec![Step::Src(inst, 0)],
            scope,
            inline: false,
            imported: false,
        };
        let warned = self.warnings.len();
        self.add_statements(b, &body, stmts, &[], &mut work);
        // Only a literal made for a resource may be merged, and have its reads checked
        // (`inline_running`).
        let literal = matches!(self.block(b).place, Place::Of(_));
        if literal {
            self.inline_running.push(b);
        }
        let result = self.run_inline(b, inst, &mut work);
        if literal {
            self.inline_running.pop();
        }
        self.building.pop();
        let reads = match std::mem::replace(&mut self.block_mut(b).state, BlockState::Built) {
            BlockState::Building { reads, .. } => reads,
            _ => Vec::new(),
        };
        // The restriction is checked first, so an inline statement that reads what a later
        // one defines gets the same diagnostic whatever the order of the statements.
        let checked = match result {
            Err(e) => Err(e),
            Ok(deferred) => {
                let allowed =
                    self.check_inline_reads(b, inst, &reads, &work.inline_defs, work.initial);
                if allowed.is_err() {
                    // The block's inline statements were not allowed to run: a `warn()` one
                    // of them gave is not a result, and would read as the check passing.
                    self.warnings.truncate(warned);
                }
                allowed.and_then(|()| deferred.map_or(Ok(()), Err))
            }
        };
        if let Err(mut e) = checked {
            // An error in building the block is about the block's resource, not about the
            // one that first looked into it (and so built it).
            if e.diag.resource.is_none() {
                let path = self.block_path(b);
                e.diag.resource = (!path.is_empty()).then_some(path);
            }
            self.block_mut(b).state = BlockState::Failed(e.clone());
            return Err(e);
        }
        if let Some(i) = self.insts.get_mut(inst.0 as usize) {
            i.freeze();
        }
        // A literal made for a resource may be merged with its other definitions: what its
        // inline statements read is checked against the merged block then.
        if !reads.is_empty() && matches!(self.block(b).place, Place::Of(_)) {
            // One read per name, the first in text order: a member read a thousand times is
            // checked once (each check may compare a whole block).
            let mut first: HashMap<Rc<str>, Span> = HashMap::default();
            for (name, at, _) in reads {
                match first.get(&name) {
                    Some(was) if self.text_order(*was) <= self.text_order(at) => {}
                    _ => {
                        first.insert(name, at);
                    }
                }
            }
            let read = first.into_iter().collect();
            self.inline_reads.insert(b, read);
        }
        self.sort_members(b);
        Ok(())
    }

    /// An inline statement of a block literal runs while the literal is built, before a
    /// `~>` merges it with the resource's other definitions, so it sees the literal's own
    /// members (semantics §3). Where the merged member's final value differs from the one
    /// it saw, its decision would contradict the configuration: an error, never a wrong
    /// answer (the rule of reference §3.8 and §3.10, applied across the merge).
    ///
    /// One read: the literal's member `seen_slot` (`None`: the literal lacked it) read at
    /// `read_at`, against the merged member `s`. What is compared: `seen_differs`.
    fn check_inline_read(&mut self, s: SlotId, seen_slot: Option<SlotId>, read_at: Span) -> R<()> {
        let fin = self.force(s)?;
        // A member the literal lacks was read as not defined (`defined($Tls)`).
        let seen = match seen_slot {
            None => None,
            Some(own) => match self.evaluated_value(own) {
                Some(v) => Some(v.clone()),
                None => return Ok(()),
            },
        };
        let differs = match &seen {
            None if fin.is_undef() => None,
            None => Some(Differs {
                below: Vec::new(),
                seen: None,
                fin: Some(fin.clone()),
                at: None,
            }),
            Some(seen) => self.seen_differs(seen, &fin, read_at)?,
        };
        match differs {
            Some(differs) => Err(self.inline_read_differs(s, seen_slot, read_at, differs)),
            None => Ok(()),
        }
    }

    /// A place in file and text order, for reporting the first of several reads whatever
    /// the order of evaluation.
    pub(crate) fn text_order(&self, at: Span) -> (Option<std::path::PathBuf>, u32) {
        (self.file(at.file).map(|f| f.path.clone()), at.start)
    }

    /// Where the value an inline statement saw (`seen`) and the final one differ, if they
    /// do: scalars by value and kind (a literal is not a string, an integer not a float),
    /// lists whole, element by element (which element was read is not tracked), blocks by
    /// what was read of them (`read_of_block`), in text order, each against the same member
    /// of the final block.
    fn seen_differs(&mut self, seen: &Val, fin: &Val, at: Span) -> R<Option<Differs>> {
        crate::eval::deep(|| self.seen_differs_inner(seen, fin, at))
    }

    fn seen_differs_inner(&mut self, seen: &Val, fin: &Val, at: Span) -> R<Option<Differs>> {
        let differs = |seen: &Val, fin: &Val| Differs {
            below: Vec::new(),
            seen: Some(seen.clone()),
            fin: Some(fin.clone()),
            at: None,
        };
        match (seen, fin) {
            (Val::Block(sb), Val::Block(fb)) => {
                if sb == fb {
                    return Ok(None);
                }
                for (name, seen_member, read_at) in self.read_of_block(*sb, *fb, at)? {
                    let fin_member = match self.member(*fb, &name, at)? {
                        Some(fm) => Some(self.force(fm)?),
                        None => None,
                    };
                    let found = match (&seen_member, &fin_member) {
                        (Some(sv), Some(fv)) => self.seen_differs(sv, fv, at)?,
                        (None, None) => None,
                        (None, Some(fv)) if fv.is_undef() => None,
                        (Some(sv), None) if sv.is_undef() => None,
                        (sv, fv) => Some(Differs {
                            below: Vec::new(),
                            seen: sv.clone(),
                            fin: fv.clone(),
                            at: None,
                        }),
                    };
                    if let Some(mut d) = found {
                        d.below.insert(0, name.to_string());
                        if d.at.is_none() {
                            d.at = read_at;
                        }
                        return Ok(Some(d));
                    }
                }
                Ok(None)
            }
            (Val::List(sl), Val::List(fl)) => {
                if sl.items.len() != fl.items.len() {
                    return Ok(Some(differs(seen, fin)));
                }
                for (sv, fv) in sl.items.iter().zip(fl.items.iter()) {
                    if self.seen_differs(sv, fv, at)?.is_some() {
                        // Reported as the whole list: which element was read is not known.
                        return Ok(Some(differs(seen, fin)));
                    }
                }
                Ok(None)
            }
            (Val::Block(_) | Val::List(_), _) | (_, Val::Block(_) | Val::List(_)) => {
                Ok(Some(differs(seen, fin)))
            }
            (Val::Lit(_), Val::Str(_)) | (Val::Str(_), Val::Lit(_)) => Ok(Some(differs(seen, fin))),
            // An integer and a float of one value behave differently (`9007199254740992 + 1`,
            // integer division, a function's `math.type`): their forms are compared too.
            (Val::Num(a), Val::Num(b))
                if matches!(a, Number::Int(_)) != matches!(b, Number::Int(_)) =>
            {
                Ok(Some(differs(seen, fin)))
            }
            _ if self.equal(seen, fin, at)? => Ok(None),
            _ => Ok(Some(differs(seen, fin))),
        }
    }

    /// What was read of a block an inline statement saw (`sb`), to compare with the final
    /// block `fb`: each member evaluated (by the statement, or later through the block it
    /// captured: a member of a literal's own block is evaluated for nothing else), each
    /// name looked up that the block lacks (`defined($Opt.a)`, seen as not defined), and,
    /// for a block given whole to a function or an output, each member the final block has
    /// besides. With where it was looked up, if it was; first in text order.
    fn read_of_block(&mut self, sb: BlockId, fb: BlockId, at: Span) -> R<Vec<BlockRead>> {
        let whole = self.inline_whole.get(&sb).copied();
        // A private member is seen whole only by an output with `-p` (a function is not
        // given private members).
        let private_seen = |ev: &Self, m: SlotId| !ev.slot(m).private || ev.opts.include_private;
        if whole.is_some() {
            // Given whole, its members were all read, evaluated or not (added inline as
            // definitions, `m($Opt)` with `def m(b) = $b`): those an output would show.
            let members: Vec<SlotId> = self.block(sb).members.values().copied().collect();
            for m in members {
                if private_seen(self, m) {
                    self.force(m)?;
                }
            }
        }
        let looked_up = self.inline_deep_reads.get(&sb);
        let mut read: Vec<BlockRead> = Vec::new();
        for (name, m) in &self.block(sb).members {
            if let Some(v) = self.evaluated_value(*m) {
                // Where it was looked up, else where the block was looked at whole.
                let span = looked_up.and_then(|l| l.get(&**name)).copied().or(whole);
                read.push((Rc::from(&**name), Some(v.clone()), span));
            }
        }
        if let Some(looked_up) = looked_up {
            for (name, span) in looked_up {
                if !self.block(sb).members.contains_key(&**name) {
                    read.push((name.clone(), None, Some(*span)));
                }
            }
        }
        if let Some(whole_at) = whole {
            for (name, m) in self.members(fb, at)? {
                if !self.block(sb).members.contains_key(&*name) && private_seen(self, m) {
                    read.push((Rc::from(&*name), None, Some(whole_at)));
                }
            }
        }
        // By where they were read, those read nowhere in particular after them in member
        // order (the sort is stable): the same order whatever the order of evaluation.
        read.sort_by_cached_key(|r| (r.2.is_none(), r.2.map(|s| self.text_order(s))));
        Ok(read)
    }

    /// Checks what the inline statements of merged literals read against the merged
    /// members (`Evaluator::check_inline_read`), once the outputs are written. Not as
    /// each member is evaluated: comparing a block evaluates members of the merged block,
    /// which may need the very resource whose evaluation is under way, a cycle the
    /// configuration does not have. A member the outputs never evaluated (`-o` of another
    /// subtree, a private member without `-p`) is evaluated now, since what the inline
    /// statement decided may be among the outputs (`-o -.json:Web.Port` after `if ($Tls)`):
    /// a compile gives the same answer, or the same error, whichever part of it is output.
    /// Reads are taken in text order, so the error reported never depends on the order of
    /// evaluation.
    pub(crate) fn check_inline_reads_against_merge(&mut self) -> R<()> {
        // Evaluating one member may merge other blocks and add checks: until none is left.
        // Each round takes every check there is, so the loop ends.
        while !self.inline_read_checks.is_empty() {
            let mut pending: Vec<(SlotId, Option<SlotId>, Span, PickSite)> = self
                .inline_read_checks
                .drain()
                .flat_map(|(s, reads)| {
                    reads
                        .into_iter()
                        .map(move |(own, at, pick)| (s, own, at, pick))
                })
                .collect();
            // The first read in file and text order is reported, whatever the order of
            // evaluation: the read `defined($Tls)` in `Mode`'s definition before the
            // `if ($Mode == tls)` that read `Mode`.
            // Those made for a secret's pick come last: which of them there are depends on
            // the pick, and what a plain one finds must be told the same whatever it was.
            pending.sort_by_cached_key(|(s, _, at, pick)| {
                (pick.is_some(), self.text_order(*at), self.slot_path(*s))
            });
            for (s, own, at, pick) in pending {
                match pick {
                    None => self.check_inline_read(s, own, at).map_err(|mut e| {
                        e.diag.resource.get_or_insert_with(|| self.slot_path(s));
                        e
                    })?,
                    // Made while a secret's pick was read: checked as it was made, apart,
                    // what it evaluates and finds hidden.
                    Some((shown, pick_at)) => self.under_pick(
                        &shown,
                        pick_at,
                        |shown| {
                            Diagnostic::error(format!(
                                "an inline statement in what {shown} selected reads what it changes"
                            ))
                            .at(pick_at)
                        },
                        |ev| ev.check_inline_read(s, own, at),
                    )?,
                }
            }
        }
        Ok(())
    }

    fn inline_read_differs(
        &self,
        s: SlotId,
        seen_slot: Option<SlotId>,
        read_at: Span,
        differs: Differs,
    ) -> EvalError {
        let read_at = differs.at.unwrap_or(read_at);
        let mut path = self.slot_path(s);
        let mut name = self.slot(s).name.to_string();
        // The hint names what can be given a value: a member path, not a list element.
        let mut settable = name.clone();
        let mut in_list = false;
        for step in &differs.below {
            path.push('.');
            path.push_str(step);
            name.push('.');
            name.push_str(step);
            in_list |= step.parse::<usize>().is_ok();
            if !in_list {
                settable = name.clone();
            }
        }
        // A literal and a string of the same text differ in kind (`typeof`): say so.
        let kinds_differ = matches!(
            (&differs.seen, &differs.fin),
            (Some(Val::Lit(_)), Some(Val::Str(_))) | (Some(Val::Str(_)), Some(Val::Lit(_)))
        );
        // Two floats that differ past the 15 digits shown (`0.1 + 0.2` and `0.3`): in full.
        let floats_look_alike = match (&differs.seen, &differs.fin) {
            (Some(a @ Val::Num(Number::Float(_))), Some(b @ Val::Num(Number::Float(_)))) => {
                a.describe() == b.describe()
            }
            _ => false,
        };
        // An integer and a float of one value: named, the float in full.
        let number_kinds_differ = matches!(
            (&differs.seen, &differs.fin),
            (
                Some(Val::Num(Number::Int(_))),
                Some(Val::Num(Number::Float(_)))
            ) | (
                Some(Val::Num(Number::Float(_))),
                Some(Val::Num(Number::Int(_)))
            )
        );
        let shown = |v: &Option<Val>| match v {
            Some(Val::Num(Number::Float(f))) if floats_look_alike => format!("{f:?}"),
            Some(Val::Num(Number::Float(f))) if number_kinds_differ => format!("the float {f:?}"),
            Some(Val::Num(Number::Int(i))) if number_kinds_differ => format!("the integer {i}"),
            Some(v @ (Val::Lit(_) | Val::Str(_))) if kinds_differ => {
                let kind = if matches!(v, Val::Lit(_)) {
                    "literal"
                } else {
                    "string"
                };
                format!("the {kind} {}", v.describe())
            }
            // A short list of scalars in full (`[sda]`), as -Deval shows it.
            Some(v) if !v.is_undef() => crate::trace::preview(v),
            _ => "not defined".to_string(),
        };
        let decided = match &differs.seen {
            Some(v) if !v.is_undef() => format!("= {}", shown(&differs.seen)),
            _ => "not defined".to_string(),
        };
        let fin = shown(&differs.fin);
        // Read in a block a secret selector picked: the values, and whether one is
        // defined, would say which it picked.
        let picked = [Some(s), seen_slot].into_iter().flatten().find_map(|x| {
            self.evaluated_value(x)
                .and_then(|v| self.selected_origin_in(v))
        });
        let (decided, fin) = match picked {
            Some(origin) => {
                let hidden = crate::val::redacted(&origin, true);
                (format!("= {hidden}"), hidden)
            }
            None => (decided, fin),
        };
        let own: Vec<Span> = seen_slot
            .map(|own| {
                self.slot(own)
                    .defs
                    .iter()
                    .map(|d| self.def(*d).site)
                    .collect()
            })
            .unwrap_or_default();
        // Of the definitions outside the literal, one that no other outranks: the one that
        // gave the final value, not another literal's that it overrode.
        let others: Vec<DefId> = self
            .slot(s)
            .defs
            .iter()
            .copied()
            .filter(|d| !own.contains(&self.def(*d).site))
            .collect();
        let outside = others
            .iter()
            .find(|d| {
                !others
                    .iter()
                    .any(|o| o != *d && self.rank(*o, **d) == Rank::Higher)
            })
            .or(others.first())
            .map(|d| self.def(*d).site);
        let mut d = Diagnostic::error(format!(
            "an inline statement decided with `{name}` {decided}, but `{path}` is {fin} once the block is merged"
        ))
        .at(read_at)
        .with_label(format!("`{name}` is read here, in the block literal alone"));
        if let Some(site) = outside {
            let label = match (&differs.fin, differs.below.last()) {
                // `Web.Opt => { b => 1 }` outside: it gives `Opt`, without the member read.
                (None, Some(last)) => {
                    let parent = path.strip_suffix(&format!(".{last}")).unwrap_or(&path);
                    format!("`{parent}` gets a value here, outside the literal, without `{last}`")
                }
                _ => format!("`{path}` gets a value here, outside the literal"),
            };
            d = d.also(site, label);
        }
        EvalError::new(
            d.note(LITERAL_SEES_ITS_OWN_MEMBERS)
                .hint(give_inside_the_literal(&settable)),
        )
    }

    fn run_inline(
        &mut self,
        b: BlockId,
        inst: InstId,
        work: &mut Work<'a>,
    ) -> R<Option<EvalError>> {
        // A "not defined" error may be a resource a later inline statement adds: keep the
        // first, run the rest, and let the restriction check speak first.
        let mut deferred: Option<EvalError> = None;
        // A literal import that fails (a missing file, a syntax error in it) does not stop
        // the other literal imports: all their errors are reported in one run. Nothing that
        // reads runs after one has failed.
        let mut failed_import: Option<EvalError> = None;
        // Every file imported by a literal name is in place before a statement that reads
        // runs: what it reads of them is then whole, whichever order the imports were
        // written or reached in (a diamond reaches a file first through either side).
        loop {
            let (order, item, literal) = match work.imports.pop_first() {
                Some((order, import)) => (order, import, true),
                None if failed_import.is_some() => break,
                None => match work.pending.pop_first() {
                    Some((order, reading)) => {
                        work.initial.get_or_insert(work.batches);
                        (order, reading, false)
                    }
                    None => break,
                },
            };
            match self.run_one_inline(b, inst, work, order, item) {
                Ok(()) => {}
                Err(e) if e.kind == crate::error::ErrorKind::Missing => {
                    deferred.get_or_insert(e);
                }
                Err(e) if literal => match &mut failed_import {
                    None => failed_import = Some(e),
                    Some(first) => first.absorb(e, usize::MAX),
                },
                Err(e) => return Err(e),
            }
        }
        match failed_import {
            Some(e) => Err(e),
            None => Ok(deferred),
        }
    }

    fn run_one_inline(
        &mut self,
        b: BlockId,
        inst: InstId,
        work: &mut Work<'a>,
        order: Order,
        item: Pending<'a>,
    ) -> R<()> {
        if let BlockState::Building {
            running, statement, ..
        } = &mut self.block_mut(b).state
        {
            *running = item.runner;
            *statement = Some(item.stmt);
        }
        self.note_written_refs(b, item.stmt, item.scope);
        {
            let src = Source {
                inst,
                node: item.runner.node,
                prio: smallvec::smallvec![Step::Src(inst, item.runner.node)],
                scope: item.scope,
                inline: true,
                imported: false,
            };
            match item.stmt {
                Statement::Import(imp) => self.run_inline_import(b, &src, imp, &order, work)?,
                Statement::If(cond) => {
                    let (taken, captures) = self.eval_condition(&cond.cond, item.scope)?;
                    let branch = if taken {
                        Some(&*cond.then)
                    } else {
                        cond.otherwise.as_deref()
                    };
                    let Some(branch) = branch else { return Ok(()) };
                    let scope = self.with_captures(item.scope, captures);
                    let src = Source { scope, ..src };
                    if let ExprKind::Block(stmts) = &branch.kind {
                        self.add_statements(b, &src, stmts, &order, work);
                    } else if let ExprKind::Import(imp) = &branch.kind {
                        // `if (c) then import(f)` imports `f` inline, as `then { import(f) }`
                        // does: the block outranks what it imports (docs/semantics.md).
                        self.run_inline_import(b, &src, imp, &order, work)?;
                    } else {
                        let v = self.eval(branch, scope)?;
                        let what = "an inline `if`";
                        self.add_inline_value(b, &src, v, branch.span, what, &order, work)?;
                    }
                }
                Statement::Call(call) => {
                    let v = self.eval_call(call, item.scope)?;
                    let what = "an inline function call";
                    self.add_inline_value(b, &src, v, call.span, what, &order, work)?;
                }
                Statement::Resource(_) | Statement::Macro(_) => {}
            }
        }
        Ok(())
    }

    /// An `import` run inline: a file's statements join the block below it; a KeePass
    /// database's entries join it as a value.
    fn run_inline_import(
        &mut self,
        b: BlockId,
        src: &Source,
        imp: &'a ast::Import,
        order: &Order,
        work: &mut Work<'a>,
    ) -> R<()> {
        match self.resolve_import_expr(imp, src.scope, Some(b))? {
            Some(crate::resolve::Imported::File(file)) => {
                self.inline_import(b, src, imp, file, order, work)
            }
            Some(crate::resolve::Imported::Value(v)) => {
                let what = "an inline import";
                self.add_inline_value(b, src, v, imp.span, what, order, work)
            }
            None => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn inline_import(
        &mut self,
        b: BlockId,
        src: &Source,
        imp: &'a ast::Import,
        file: FileId,
        order: &[u32],
        work: &mut Work<'a>,
    ) -> R<()> {
        let importer_chain = self.scope(src.scope).chain.clone();
        if importer_chain.contains(file) {
            return Err(self.import_cycle(&importer_chain, file, imp.span));
        }
        let node = match self.lower_source_node(src, file) {
            SourceNode::New(node) => node,
            // Its statements are in the block already.
            SourceNode::Existing(_) | SourceNode::Missing => return Ok(()),
            SourceNode::Cycle => return Err(self.import_cycle(&importer_chain, file, imp.span)),
        };
        let scope = self.new_scope(Scope {
            root: b,
            file,
            chain: Rc::new(Chain {
                file,
                site: Some(imp.span),
                parent: Some(importer_chain),
            }),
            params: None,
            captures: None,
            call: None,
        });
        let Some(loaded) = self.file(file) else {
            return Ok(());
        };
        let src = Source {
            inst: src.inst,
            node,
            prio: smallvec::smallvec![Step::Src(src.inst, node)],
            scope,
            inline: true,
            imported: true,
        };
        self.add_statements(b, &src, &loaded.ast.statements, order, work);
        Ok(())
    }

    pub(crate) fn import_cycle(&self, chain: &Chain, file: FileId, at: Span) -> EvalError {
        let mut names = vec![self.loader_name(file)];
        let mut cur = Some(chain);
        while let Some(c) = cur {
            names.push(self.loader_name(c.file));
            if c.file == file {
                break;
            }
            cur = c.parent.as_deref();
        }
        names.reverse();
        EvalError::new(
            Diagnostic::error(format!("import cycle: {}", names.join(" → ")))
                .at(at)
                .with_label("this import closes the cycle")
                .hint("a file cannot import itself, directly or through other files"),
        )
    }

    pub(crate) fn loader_name(&self, file: FileId) -> String {
        self.file(file)
            .map(|f| f.source.name.clone())
            .unwrap_or_else(|| "<unknown>".into())
    }

    fn add_statements(
        &mut self,
        b: BlockId,
        src: &Source,
        stmts: &'a [Statement],
        prefix: &[u32],
        work: &mut Work<'a>,
    ) {
        // Room for a member per statement of the body, rather than growing the map step by
        // step. Not again for each file imported inline: most of their statements add to
        // members the body has already, and reserving for all would rehash the map each time.
        let members = &mut self.block_mut(b).members;
        if members.is_empty() {
            members.reserve(stmts.len());
        }
        work.batches += 1;
        let mut buf = Vec::with_capacity(prefix.len() + 1);
        for (i, st) in stmts.iter().enumerate() {
            buf.clear();
            buf.extend_from_slice(prefix);
            buf.push(i as u32);
            let order: Order = Order::from_slice(&buf);
            match st {
                Statement::Resource(r) => self.add_resource(b, src, r, &order, work),
                Statement::Import(_) | Statement::If(_) | Statement::Call(_) => {
                    let queue = match st {
                        Statement::Import(i) if names_file_literally(i) => &mut work.imports,
                        _ => &mut work.pending,
                    };
                    queue.insert(
                        order,
                        Pending {
                            stmt: st,
                            scope: src.scope,
                            runner: Runner { node: src.node },
                        },
                    );
                }
                Statement::Macro(_) => {}
            }
        }
    }

    fn member_slot(&mut self, b: BlockId, name: &Name<'a>) -> SlotId {
        if let Some(s) = self.block(b).members.get(name) {
            return *s;
        }
        self.new_slot(name.clone(), b)
    }

    fn add_resource(
        &mut self,
        b: BlockId,
        src: &Source,
        r: &'a ast::ResourceDef,
        order: &Order,
        work: &mut Work<'a>,
    ) {
        let Some(first) = r.path.first() else { return };
        let name = Name::Src(&first.name);
        let slot = self.member_slot(b, &name);
        if src.inline {
            work.inline_defs.push(InlineDef {
                name,
                at: r.span,
                container: src.imported.then_some(src.node),
                batch: work.batches,
            });
        }
        let file = self.scope(src.scope).file;
        let defs = self.path_defs(r, 0, src.scope, &src.prio, order, file);
        let s = self.slot_mut(slot);
        s.defs.extend_from_slice(&defs);
        // A path (`private a.b => 1`) makes its inner resource private, not `a`.
        s.private |= r.private && r.path.len() == 1;
    }

    /// An inline `if` branch or function call that gave a value: a block's resources join
    /// this block; nothing (undefined) adds nothing; anything else is an error.
    #[allow(clippy::too_many_arguments)]
    fn add_inline_value(
        &mut self,
        b: BlockId,
        src: &Source,
        v: Val,
        at: Span,
        what: &str,
        order: &[u32],
        work: &mut Work<'a>,
    ) -> R<()> {
        match v {
            Val::Undef => Ok(()),
            Val::Block(from) => {
                let members = self.members(from, at)?;
                // A file imported as a value (`def m(f) = import($f)`, then `m(x)`) joins
                // as a lower source, as `import(x)` there would: the block outranks it.
                // Its files keep resolving references in the block itself (built above,
                // inline statements included): forwarding them to this block would let
                // the inline statements and the values of one file see different blocks,
                // and a block the call made may also be another resource's value.
                let imported = self.value_import_file(from);
                let node = match imported.map(|file| self.lower_source_node(src, file)) {
                    Some(SourceNode::New(node)) => node,
                    // A file reached along several paths into the same block is one source
                    // (clarifications §5): its statements are in the block already.
                    Some(SourceNode::Existing(_)) => return Ok(()),
                    _ => src.node,
                };
                let prefix = [Step::Src(src.inst, node)];
                // A block a secret selector picked (`if (...) then $Sel.($P.x.UserName)`):
                // its definitions, copied here, give values as secret as the pick.
                let secret = self.picked_origin(&from);
                work.batches += 1;
                for (name, s) in members {
                    let target = self.member_slot(b, &name);
                    work.inline_defs.push(InlineDef {
                        name: name.clone(),
                        at,
                        container: None,
                        batch: work.batches,
                    });
                    let defs = Defs::from_slice(&self.slot(s).defs);
                    for d in defs {
                        let copy = self.def(d).placed_in(&prefix, order);
                        let private = copy.private;
                        let nd = self.new_def(copy);
                        if let Some(origin) = &secret {
                            self.secret_defs.insert(nd, (origin.clone(), at));
                        }
                        let t = self.slot_mut(target);
                        t.defs.push(nd);
                        t.private |= private;
                    }
                }
                Ok(())
            }
            other => Err(EvalError::new(
                Diagnostic::error(format!(
                    "{what} used as a statement must give a block of resources, but this gives {}",
                    other.kind_phrase()
                ))
                .at(at)
                .hint("wrap the resources in `{ ... }`, or assign the value to a resource"),
            )),
        }
    }

    /// The source node of `file` imported below `src`'s node, entered in the block's source
    /// graph with its edge from `src`'s node.
    fn lower_source_node(&mut self, src: &Source, file: FileId) -> SourceNode {
        let Some(instance) = self.insts.get_mut(src.inst.0 as usize) else {
            return SourceNode::Missing;
        };
        let node = match instance.files.iter().position(|f| *f == file) {
            // A file reached along several paths into the same block is one source.
            Some(existing) => {
                let existing = existing as u32;
                if existing == src.node || instance.reaches(existing, src.node) {
                    return SourceNode::Cycle;
                }
                SourceNode::Existing(existing)
            }
            None => {
                instance.files.push(file);
                instance.edges.push(Vec::new());
                SourceNode::New(instance.files.len() as u32 - 1)
            }
        };
        if let (SourceNode::New(n) | SourceNode::Existing(n), Some(e)) =
            (&node, instance.edges.get_mut(src.node as usize))
        {
            e.push(*n);
        }
        node
    }

    /// The references written in what an inline statement evaluates to decide what it adds
    /// (its condition, import argument or call arguments) count as read by it, evaluated
    /// or not: the reference's rule is about references that *appear* there (§3.8, §3.10),
    /// and so a short-circuited `$X` cannot make the rule hold for some values only.
    fn note_written_refs(&mut self, b: BlockId, stmt: &'a Statement, sc: ScopeId) {
        let scope = self.scope(sc);
        if scope.root != b {
            return;
        }
        let params = scope.params.clone();
        let mut refs = Vec::new();
        match stmt {
            Statement::If(c) => refs_in(&c.cond, &mut refs),
            Statement::Import(i) => refs_in_import(i, &mut refs),
            Statement::Call(c) => c.args.iter().for_each(|a| refs_in(a, &mut refs)),
            Statement::Resource(_) | Statement::Macro(_) => {}
        }
        let is_param = |n: &str| {
            params
                .as_ref()
                .is_some_and(|p| p.iter().any(|(m, _)| **m == *n))
        };
        if let BlockState::Building { reads, running, .. } = &mut self.block_mut(b).state {
            for (name, at) in refs {
                if !is_param(name) {
                    reads.push((Rc::from(name), at, *running));
                }
            }
        }
    }

    /// Inline statements must not define what inline statements read: the result would
    /// depend on the order in which they ran. Except that an inline statement written in a
    /// file imported inline (or in a file that one imports inline) may read what that
    /// file's own statements define, when they are sure to be there before it runs,
    /// whatever the order: when they came with the imports by literal name, which all run
    /// before any statement that reads (`run_inline`), or when the statement's file can
    /// come into the block only through that file. A file that is also reached another
    /// way (a diamond, a second `if` or computed import) could have read too early, in some
    /// order of the statements: refused in every order (docs/semantics.md §8).
    fn check_inline_reads(
        &self,
        b: BlockId,
        inst: InstId,
        reads: &[(Rc<str>, Span, Runner)],
        defs: &[InlineDef<'a>],
        initial: Option<u32>,
    ) -> R<()> {
        let initial = initial.unwrap_or(u32::MAX);
        let instance = self.insts.get(inst.0 as usize);
        let contains = |container: Option<u32>, node: u32| match (container, instance) {
            (Some(c), Some(i)) => c == node || i.reaches(c, node),
            _ => false,
        };
        // The reading statement's file can be in place only with the file that defines
        // what it reads: every way into the block to it goes through that file.
        let comes_only_with = |container: Option<u32>, node: u32| match (container, instance) {
            (Some(c), Some(i)) => i.dominates(c, node),
            _ => false,
        };
        for (name, read_at, runner) in reads {
            let is_conflict = |d: &&InlineDef<'a>| {
                *d.name == **name
                    && !(contains(d.container, runner.node)
                        && (d.batch <= initial || comes_only_with(d.container, runner.node)))
            };
            // Shown at a definition in the reading file if there is one (an `if` capping
            // what it reads, `if ($M > 8) then { M => 8 }`): that is what its author wrote.
            // (Searched again only when there is a conflict: this runs for every read.)
            let conflicting = defs.iter().find(is_conflict).map(|first| {
                defs.iter()
                    .filter(is_conflict)
                    .find(|d| d.at.file == read_at.file)
                    .unwrap_or(first)
            });
            if let Some(InlineDef { at: def_at, .. }) = conflicting {
                let mut resource = self.block_path(b);
                if !resource.is_empty() {
                    resource.push('.');
                }
                resource.push_str(name);
                return Err(EvalError::new(
                    Diagnostic::error(format!(
                        "`{resource}` is defined by an inline statement, but an inline statement also depends on `{resource}`"
                    ))
                    .at(*def_at)
                    .with_label(format!("defines `{resource}`"))
                    .also(*read_at, format!("`{resource}` is needed here to run an inline statement"))
                    .resource(resource.clone())
                    .note("the resources an inline `import`, `if` or function call adds must not conflict with references in any inline statement (reference §3.8, §3.10)")
                    .hint(format!("define `{name}` directly in the block instead of through an inline `import`, `if` or call, or make the inline statements independent of `{resource}`")),
                ));
            }
        }
        Ok(())
    }

    /// Orders a block's members by first appearance in reading order.
    pub(crate) fn sort_members(&mut self, b: BlockId) {
        let (slots, defs) = (&self.slots, &self.defs);
        let first = |s: &SlotId| -> Option<&Order> {
            let slot = slots.get(s.0 as usize)?;
            slot.defs
                .iter()
                .filter_map(|d| defs.get(d.0 as usize).map(|d| &d.order))
                .min()
        };
        let Some(block) = self.blocks.get_mut(b.0 as usize) else {
            return;
        };
        // Members are mostly added in reading order already.
        let mut sorted = true;
        let mut prev: Option<&Order> = None;
        for s in block.members.values() {
            let f = first(s);
            if prev > f {
                sorted = false;
                break;
            }
            prev = f;
        }
        if !sorted {
            // Stable: members first defined at the same place keep their order.
            block
                .members
                .sort_by_cached_key(|_, s| first(s).cloned().unwrap_or_default());
        }
    }

    pub(crate) fn with_captures(&mut self, scope: ScopeId, captures: Option<Captures>) -> ScopeId {
        match captures {
            None => scope,
            Some(c) => {
                let mut s = self.scope(scope).clone();
                s.captures = Some(Rc::new(c));
                self.new_scope(s)
            }
        }
    }
}

/// The `$name`s written in `e` (the first name of each; selectors and block literals
/// included: a reference written in a `{ ... }` of the condition appears there, evaluated or
/// not, reference §3.8). Macro bodies are not scanned: their names may be parameters.
fn refs_in<'e>(e: &'e ast::Expr, out: &mut Vec<(&'e str, Span)>) {
    match &e.kind {
        ExprKind::Ref(id) => out.push((&id.name, id.span)),
        ExprKind::String(parts) | ExprKind::Regex(parts) => {
            for p in parts {
                if let ast::Part::Interp(x) = p {
                    refs_in(x, out);
                }
            }
        }
        ExprKind::List(items) => items.iter().for_each(|x| refs_in(x, out)),
        ExprKind::Select(a, b) | ExprKind::Binary(_, a, b) => {
            refs_in(a, out);
            refs_in(b, out);
        }
        ExprKind::Unary(_, a) => refs_in(a, out),
        ExprKind::If(i) => refs_in_if(i, out),
        ExprKind::Call(c) => c.args.iter().for_each(|x| refs_in(x, out)),
        ExprKind::Import(i) => refs_in_import(i, out),
        ExprKind::Block(body) => body.iter().for_each(|st| refs_in_statement(st, out)),
        ExprKind::Literal(_)
        | ExprKind::Number(_)
        | ExprKind::Bool(_)
        | ExprKind::Undef
        | ExprKind::Error => {}
    }
}

/// The `$name`s written in one statement of a block literal (see [`refs_in`]).
fn refs_in_statement<'e>(st: &'e Statement, out: &mut Vec<(&'e str, Span)>) {
    match st {
        Statement::Resource(r) => r.mutations.iter().for_each(|m| refs_in(&m.value, out)),
        Statement::Import(i) => refs_in_import(i, out),
        Statement::If(i) => refs_in_if(i, out),
        Statement::Call(c) => c.args.iter().for_each(|x| refs_in(x, out)),
        Statement::Macro(_) => {}
    }
}

/// The `$name`s written in an `import(...)`: its path and its signers.
/// An import whose file is named by a literal (`import(web)`, `import('../base')`), with
/// no signers: running it reads nothing.
fn names_file_literally(i: &ast::Import) -> bool {
    let literal = match &i.path.kind {
        ExprKind::Literal(_) => true,
        ExprKind::String(parts) => parts.iter().all(|p| matches!(p, ast::Part::Text(_))),
        _ => false,
    };
    literal && i.signers.is_none()
}

fn refs_in_import<'e>(i: &'e ast::Import, out: &mut Vec<(&'e str, Span)>) {
    refs_in(&i.path, out);
    if let Some(s) = &i.signers {
        refs_in(s, out);
    }
}

/// The `$name`s written in an `if`: its condition and both branches.
fn refs_in_if<'e>(i: &'e ast::If, out: &mut Vec<(&'e str, Span)>) {
    refs_in(&i.cond, out);
    refs_in(&i.then, out);
    if let Some(o) = &i.otherwise {
        refs_in(o, out);
    }
}

/// Why an inline statement of a block literal does not see a member merged in from outside.
pub(crate) const LITERAL_SEES_ITS_OWN_MEMBERS: &str = "inline statements in a `{ ... }` literal run before it is merged with the resource's other definitions, so they see only the literal's own members (docs/semantics.md §3)";

/// How to give an inline statement of a block literal the member `name` it reads.
pub(crate) fn give_inside_the_literal(name: &str) -> String {
    format!("give `{name}` its value inside the literal that holds the inline statement (`{{ import(...), {name} => ... }}`), or decide with a value (`X => if (${name}) then ... else ...`) instead of an inline `if`")
}
