//! The CF2 evaluator: from parsed files to plain values.
//!
//! Entry point: [`evaluate`]. The file system, environment and resolver come in through a
//! [`Host`]; parsed files come from a [`Loader`] that may be shared by many compiles.
//!
//! Code map (see ARCHITECTURE.md for invariants):
//! - [`model`]: definitions, slots, blocks, scopes, priority keys;
//! - `eval`: the context, slot forcing, cycle detection, member look-up;
//! - `build`: gathering a block's definitions; inline statements and their restriction;
//! - `fold`: folding a resource's mutations (priority, `=>`, `~>`, functions, final,
//!   default, undefined);
//! - `expr`, `ops`: expressions and operators; `functions`, `mutators`: the standard
//!   library; `resolve`: the import search; `materialize`: output values and equality;
//!   `checks`: static per-file rules; `trace`: `-Deval`.

mod build;
mod checks;
pub mod error;
mod eval;
mod expr;
pub mod external;
mod fold;
mod functions;
pub mod host;
pub mod loader;
mod materialize;
pub mod model;
mod mutators;
mod ops;
mod perl_regex;
mod resolve;
mod secret;
pub mod trace;
pub mod val;

pub use error::EvalError;
pub use eval::Evaluator;
pub use functions::STANDARD as STANDARD_FUNCTIONS;
pub use host::{Host, MemoryHost};
pub use loader::Loader;
pub use mutators::STANDARD_MUTATORS;
pub use trace::{Made, Origin, Provenance, Read, StatementRead};

use cf2_syntax::{Diagnostic, Span};
use cf2_value::Value;
use model::{BlockState, BuildSpec, Chain, Scope};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use val::Val;

/// How to compile.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Output private resources too (`-p`).
    pub include_private: bool,
    /// Record how each value was decided (`-Deval`).
    pub trace: bool,
    /// Warn about duplicate definitions in one file (`-Wdup`).
    pub warn_duplicates: bool,
    /// The current project's top directory (default: the main file's directory).
    pub project_dir: Option<PathBuf>,
    /// Other projects, for `project:path` imports.
    pub projects: Vec<(String, PathBuf)>,
    /// Custom functions: registered native functions and providers such as the Lua
    /// function path (`-F`; docs/functions.md).
    pub functions: external::Functions,
    /// When not empty, every file an import or `read()` finds (KeePass databases
    /// included) must lie in one of these directories, once symbolic links are resolved
    /// (`--allow-dir`; docs/security.md).
    pub allowed_dirs: Vec<PathBuf>,
    /// The most expressions the compile may evaluate (`None`: 50 million, see
    /// docs/semantics.md §"Limits"); lower it to bound the work an untrusted configuration
    /// can make an embedding program do.
    pub max_steps: Option<u64>,
}

/// The main configuration: a file, or text given directly.
#[derive(Debug, Clone, Copy)]
pub enum Main<'p> {
    File(&'p Path),
    Text { name: &'p str, text: &'p str },
}

/// A successful compile.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// One value per requested path.
    pub values: Vec<Value>,
    pub warnings: Vec<Diagnostic>,
    /// `-Deval` entries (empty unless asked for).
    pub trace: Vec<String>,
    /// How each evaluated resource got its value (empty unless `trace` is asked for).
    pub provenance: Vec<Provenance>,
    /// What each inline statement read while it ran (empty unless `trace` is asked for).
    pub statement_reads: Vec<StatementRead>,
    /// Whether the outputs hold a secret (docs/security.md): the values are the output,
    /// but a program that shows a value in a message of its own (a type error while
    /// reading the configuration) must then leave the value out.
    pub holds_secrets: bool,
}

/// A failed compile: every error found, and the warnings given before.
#[derive(Debug, Clone)]
pub struct Failure {
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    pub trace: Vec<String>,
}

/// At most this many independent errors are reported from one compile.
pub(crate) const MAX_ERRORS: usize = 20;

/// Compiles `main` and returns the value at each of `paths` (`""` is the whole
/// configuration; `Web.Ports.0` selects by name and index).
pub fn evaluate(
    host: &dyn Host,
    loader: &Loader,
    main: Main<'_>,
    opts: &Options,
    paths: &[&str],
) -> Result<Evaluation, Failure> {
    let mut values = Vec::new();
    let mut evaluation = evaluate_with(host, loader, main, opts, |ev, top| {
        for path in paths {
            values.push(select_path(ev, top, path)?);
        }
        Ok(())
    })?;
    evaluation.values = values;
    Ok(evaluation)
}

/// Evaluates the whole configuration and sends it, piece by piece, to `sink` (a writer
/// can produce its text without a [`Value`] being built; the evaluation's `values` stay
/// empty). On a failure, what `sink` got is incomplete and must be thrown away.
pub fn evaluate_into(
    host: &dyn Host,
    loader: &Loader,
    main: Main<'_>,
    opts: &Options,
    sink: &mut dyn cf2_value::Sink,
) -> Result<Evaluation, Failure> {
    evaluate_with(host, loader, main, opts, |ev, top| emit_top(ev, top, sink))
}

/// Loads `main`, then lets `output` read the configuration from its top block.
fn evaluate_with<'l>(
    host: &'l dyn Host,
    loader: &'l Loader,
    main: Main<'_>,
    opts: &'l Options,
    output: impl FnOnce(&mut Evaluator<'l>, model::BlockId) -> Result<(), Vec<Diagnostic>>,
) -> Result<Evaluation, Failure> {
    let mut ev = Evaluator::new(host, loader, opts);
    let result = run(&mut ev, main)
        .and_then(|top| output(&mut ev, top))
        .and_then(|()| ev.check_inline_reads_against_merge().map_err(flatten));
    let (provenance, statement_reads) = if opts.trace {
        (ev.provenance(), ev.statement_reads())
    } else {
        (Vec::new(), Vec::new())
    };
    let trace: Vec<String> = provenance.iter().map(trace::render_trace).collect();
    let warnings = std::mem::take(&mut ev.warnings);
    match result {
        Ok(()) => Ok(Evaluation {
            values: Vec::new(),
            warnings,
            trace,
            provenance,
            statement_reads,
            holds_secrets: ev.output_secrets,
        }),
        Err(errors) => Failure {
            errors,
            warnings,
            trace,
        }
        .into_err(),
    }
}

impl Failure {
    fn into_err<T>(self) -> Result<T, Failure> {
        Err(self)
    }
}

fn flatten(e: EvalError) -> Vec<Diagnostic> {
    let mut v = vec![*e.diag];
    v.extend(e.more);
    v
}

/// `path` with the default extension `.cf2`, unless it has it already: the file a main
/// file named without it is read from (reference §3.10).
pub fn with_cf2_extension(path: &Path) -> PathBuf {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("cf2"))
    {
        return path.to_path_buf();
    }
    let mut p = path.as_os_str().to_owned();
    p.push(".cf2");
    PathBuf::from(p)
}

/// Why the main file `path` could not be read when it is not a file: it does not exist,
/// or it is a directory (`with_ext` is `path` with `.cf2`, tried first). Something that is
/// not a file but canonicalises exists: a directory.
fn main_file_missing(ev: &Evaluator<'_>, path: &Path, with_ext: &Path) -> String {
    let exists = |p: &Path| {
        ev.host
            .canonicalize(&host::normalize(&ev.cwd.join(p)))
            .is_ok()
    };
    let shown = path.display();
    if exists(path) {
        return format!("cannot read `{shown}`: it is a directory");
    }
    if path == with_ext {
        format!("cannot read `{shown}`: no such file")
    } else if exists(with_ext) {
        format!(
            "cannot read `{shown}`: no such file (and `{}` is a directory)",
            with_ext.display()
        )
    } else {
        format!(
            "cannot read `{shown}`: no such file (nor `{}`)",
            with_ext.display()
        )
    }
}

/// Loads the main file and makes the configuration's top block (built on first look-up).
fn run<'l>(ev: &mut Evaluator<'l>, main: Main<'_>) -> Result<model::BlockId, Vec<Diagnostic>> {
    let file = match main {
        Main::File(path) => {
            // As for an import (reference §3.10: "a default extension of .cf2 is assumed";
            // §2.2 opens `./foo`): `cf2 compile foo` compiles `foo.cf2` if there is one.
            let with_ext = with_cf2_extension(path);
            let path = if path != with_ext.as_path()
                && ev.host.is_file(&host::normalize(&ev.cwd.join(&with_ext)))
            {
                with_ext.as_path()
            } else {
                path
            };
            let full = host::normalize(&ev.cwd.join(path));
            // A clearsigned main file is verified and its signed content compiled.
            let shown = path.display().to_string();
            // Whether the file exists is asked only when it could not be loaded: a
            // `stat` per host is a tenth of a batch's system calls.
            let id = ev
                .load_source(&full, None, None, Some(shown))
                .map_err(|e| {
                    if ev.host.is_file(&full) {
                        return flatten(e);
                    }
                    vec![Diagnostic::error(main_file_missing(ev, path, &with_ext))]
                })?;
            match ev.loader.get(id) {
                Some(f) => f,
                None => return Err(vec![Diagnostic::error("the main file could not be loaded")]),
            }
        }
        Main::Text { name, text } => ev.loader.add_source(name, text),
    };
    let id = file.id;
    ev.main_file = Some(id);
    ev.main_dir = match main {
        Main::File(_) => file
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| ev.cwd.clone()),
        Main::Text { .. } => ev.cwd.clone(),
    };
    ev.file_errors(id, None).map_err(flatten)?;
    let top = ev.new_block(model::Place::Top, BlockState::Built);
    let chain = Rc::new(Chain {
        file: id,
        site: None,
        parent: None,
    });
    let scope = ev.new_scope(Scope {
        root: top,
        file: id,
        chain: chain.clone(),
        params: None,
        captures: None,
        call: None,
    });
    ev.block_mut(top).state = BlockState::Unbuilt(BuildSpec::Body {
        stmts: &file.ast.statements,
        file: id,
        scope,
    });
    Ok(top)
}

/// Sends the whole configuration to `sink`. Each top-level resource is tried so that
/// independent errors are all reported.
fn emit_top(
    ev: &mut Evaluator<'_>,
    top: model::BlockId,
    sink: &mut dyn cf2_value::Sink,
) -> Result<(), Vec<Diagnostic>> {
    let at = Span::default();
    let members = ev.members(top, at).map_err(flatten)?;
    let mut errors = Vec::new();
    let total = members.len();
    sink.begin_block(total);
    for (i, (name, slot)) in members.into_iter().enumerate() {
        if ev.left_out_as_private(slot) {
            continue;
        }
        if errors.len() >= MAX_ERRORS {
            errors.push(Diagnostic::error(format!(
                "stopped after {MAX_ERRORS} errors; {} more resource{} not checked",
                total - i,
                if total - i == 1 { " was" } else { "s were" }
            )));
            break;
        }
        sink.key(&name);
        if let Err(e) = ev.emit_slot(slot, 1, sink) {
            for d in flatten(e) {
                // One resource's block can hold many errors: the limit is for them all.
                if errors.len() < MAX_ERRORS && !errors.iter().any(|x| error::same_mistake(x, &d)) {
                    errors.push(d);
                }
            }
            if ev.output_too_large() {
                // Every other resource would fail the same way.
                break;
            }
        }
    }
    sink.end_block();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The value at `path`, materialised (the empty path: the whole configuration).
///
/// A step that names nothing is reported as the path's error ("cannot output `A.b`: `A` has
/// no `b`", at the definition of the last resource that exists); an error in evaluating a
/// resource on the path is reported as in the whole configuration.
fn select_path(
    ev: &mut Evaluator<'_>,
    top: model::BlockId,
    path: &str,
) -> Result<Value, Vec<Diagnostic>> {
    if path.is_empty() {
        let mut built = cf2_value::Builder::new();
        emit_top(ev, top, &mut built)?;
        return built.finish().ok_or_else(|| {
            vec![Diagnostic::error(
                "internal error: the configuration was left unfinished",
            )]
        });
    }
    let Walked {
        value,
        slot,
        at_slot,
        ..
    } = walk_path(ev, top, path)?;
    match slot {
        // A resource: the same diagnostics as when the whole configuration is output
        // (where its `?` or empty `if` is written, and why).
        Some(slot) if at_slot => ev.materialize_slot(slot).map_err(flatten),
        _ if value.is_undef() => {
            // An element (or what a secret picked): placed at the resource that holds it.
            let mut d = Diagnostic::error(format!("`{path}` is undefined"));
            if let Some(s) = slot {
                d = d
                    .at(ev.slot_site(s))
                    .with_label(format!("`{}` is defined here", ev.slot_path(s)));
            }
            Err(vec![d])
        }
        _ => ev.materialize(&value, 1, Span::default()).map_err(flatten),
    }
}

/// Where a value in the output comes from, for a message about it found only after the
/// compile (an output format refusing it).
#[derive(Debug, Clone)]
pub struct Located {
    /// The resource that gave the value: the last one on the path (`B.C` for `B.C.1`);
    /// `None` for the whole configuration.
    pub resource: Option<String>,
    /// Where that resource's value is decided, or the start of the main file.
    pub site: Span,
    /// The path leads into a secret: a message about the value must not name the path
    /// below `resource` or the value.
    pub picked: Option<HiddenPath>,
}

/// What a path to output leads into that a message must not describe, with the
/// redaction to show instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HiddenPath {
    /// A block a secret selector picked.
    Picked(String),
    /// A secret value, or a list holding one (which a selector may have picked too).
    Secret(String),
}

/// Where the value at `path` comes from (see [`Located`]). `None` when the compile fails.
/// It compiles again: it is only for messages.
pub fn locate(
    host: &dyn Host,
    loader: &Loader,
    main: Main<'_>,
    opts: &Options,
    path: &str,
) -> Option<Located> {
    let mut found = None;
    let _ = evaluate_with(host, loader, main, opts, |ev, top| {
        let (slot, picked) = if path.is_empty() {
            (None, None)
        } else {
            let walked = walk_path(ev, top, path)?;
            (walked.slot, walked.picked)
        };
        found = match slot {
            Some(s) => Some(Located {
                resource: Some(ev.slot_path(s)),
                site: ev.top_site(s),
                picked,
            }),
            None => ev.main_file.map(|f| Located {
                resource: None,
                site: Span::new(f, 0, 0),
                picked,
            }),
        };
        Ok(())
    });
    found
}

/// An error about the value at `path` found only after the compile (an output format that
/// cannot hold it, a program's type it does not fit), as a diagnostic at the definition of
/// the resource that gave the value, labelled with that resource: the value carries no
/// place, so [`locate`] compiles again. Where the path leads into a secret, `message` (which
/// may describe the value) gives way to `refused` and what cannot be held, with a note
/// saying why the details are not shown. Without a place (the compile fails again), the
/// diagnostic has none.
pub fn error_at_value(
    host: &dyn Host,
    loader: &Loader,
    main: Main<'_>,
    opts: &Options,
    path: &str,
    message: String,
    refused: &str,
) -> Diagnostic {
    let d = Diagnostic::error(message);
    let Some(located) = locate(host, loader, main, opts, path) else {
        return d;
    };
    // Inside what a secret selector picked, the path and the reason would say which.
    let d = match &located.picked {
        Some(HiddenPath::Picked(shown)) => Diagnostic::error(format!(
            "{refused}: it cannot hold a value in what {shown} selected"
        ))
        .note("the details are not shown, because the selector is a secret"),
        Some(HiddenPath::Secret(shown)) => {
            Diagnostic::error(format!("{refused}: it cannot hold {shown} there"))
                .note("the details are not shown, because the value is a secret")
        }
        None => d,
    };
    let d = d.at(located.site);
    match located.resource {
        Some(resource) => d
            .with_label(format!("`{resource}` is defined here"))
            .resource(resource),
        None => d.with_label("in the configuration of this file"),
    }
}

/// Where a path led: its value, the resource walked last, and whether the value is that
/// resource's (not an element of it).
struct Walked {
    value: Val,
    slot: Option<model::SlotId>,
    at_slot: bool,
    /// The path entered what a secret selector picked, or a secret value.
    picked: Option<HiddenPath>,
}

/// Follows `path` (not empty) from the top block, forcing each resource on the way.
fn walk_path(
    ev: &mut Evaluator<'_>,
    top: model::BlockId,
    path: &str,
) -> Result<Walked, Vec<Diagnostic>> {
    let at = Span::default();
    let mut cur = Val::Block(top);
    let mut walked = String::new();
    let mut walked_slot: Option<model::SlotId> = None;
    let mut at_slot = false;
    // Inside what a secret selector picked (`X => $Sel.($P.fred.UserName)`, then `-o
    // out:X.V`): the secret's origin and how it is shown. From there on, no resource's
    // name or place, no message's details and no trace entry may say which it picked.
    let mut in_secret: Option<(Rc<str>, String)> = None;
    let mut by_selector = false;
    // Where the warnings stood on entering it: what came before, on the way there, is not
    // hidden.
    let mut warned = 0;
    for step in path.split('.') {
        if in_secret.is_none() {
            let picked = match &cur {
                Val::Block(b) => {
                    let origin = ev.picked_origin(b);
                    by_selector = origin.is_some();
                    origin
                }
                other => crate::secret::secret_origin([other]),
            };
            in_secret = picked.map(|o| {
                let shown = crate::val::redacted(&o, true);
                (o, shown)
            });
            warned = ev.warnings.len();
        }
        if let Some((_, shown)) = &in_secret {
            // The last resource outside stays the place and the resource of messages.
            let outside = walked_slot.map_or(at, |s| ev.slot_site(s));
            let step_result = ev
                .in_pick(shown, outside, |ev| match cur {
                    Val::Block(b) => match ev.member(b, step, at) {
                        Ok(Some(slot)) => ev.force(slot).ok(),
                        _ => None,
                    },
                    other => ev
                        .select_value(other, &Val::Lit(Rc::from(step)), at, at)
                        .ok(),
                })
                // Undefined there or not there at all would tell two picks apart.
                .filter(|v| !v.is_undef());
            ev.hide_what_a_secret_selected(warned, shown, outside);
            let Some(v) = step_result else {
                let mut d = Diagnostic::error(format!(
                    "cannot output `{path}`: nothing can be selected there with {shown}"
                ))
                .note(if by_selector {
                    "the details are not shown, because a secret selector picked what the path leads into"
                } else {
                    // A selector may have picked the value too: its kind, or a list's
                    // length, may differ between what it could pick.
                    "the details are not shown, because the path leads into a secret value"
                });
                if let Some(slot) = walked_slot {
                    d = d
                        .at(ev.slot_site(slot))
                        .with_label(format!("`{}` is defined here", ev.slot_path(slot)));
                }
                return Err(vec![d]);
            };
            at_slot = false;
            cur = v;
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(step);
            continue;
        }
        let not_there = |ev: &Evaluator<'_>, e: EvalError| {
            let mut d = *e.diag;
            let what = if walked.is_empty() {
                "the configuration".to_string()
            } else {
                format!("`{walked}`")
            };
            d.message = format!(
                "cannot output `{path}`: {what} has no `{step}` ({})",
                d.message
            );
            d.labels.clear();
            if let Some(slot) = walked_slot {
                d.span = Some(ev.slot_site(slot));
                d.label = format!("`{}` is defined here", ev.slot_path(slot));
            } else {
                // No resource of the path exists: the configuration itself has no such
                // member, so point at its start (diagnostics always have a place).
                d.span = ev.main_file.map(|f| Span::new(f, 0, 0));
                d.label = "in the configuration of this file".into();
            }
            vec![d]
        };
        cur = match cur {
            Val::Block(b) => match ev.member(b, step, at).map_err(flatten)? {
                Some(slot) => {
                    walked_slot = Some(slot);
                    at_slot = true;
                    ev.force(slot).map_err(|mut e| {
                        if e.diag.resource.is_none() {
                            e.diag.resource = Some(ev.slot_path(slot));
                        }
                        flatten(e)
                    })?
                }
                None => return Err(not_there(ev, ev.missing_member(b, step, at, "member"))),
            },
            other => {
                // As text, so a list index reads as `$X.('1')` does in the language
                // (`+1` is not a number there either).
                let key = Val::Lit(Rc::from(step));
                at_slot = false;
                ev.select_value(other, &key, at, at)
                    .map_err(|e| not_there(ev, e))?
            }
        };
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(step);
    }
    // A path that ends at a secret value: a selector may have picked it, and a message
    // about it (a format's refusal) must not tell its kind.
    if in_secret.is_none() {
        if let Some(origin) = crate::secret::secret_origin([&cur]) {
            let shown = crate::val::redacted(&origin, true);
            in_secret = Some((origin, shown));
            warned = ev.warnings.len();
        }
    }
    if let Some((origin, shown)) = &in_secret {
        let outside = walked_slot.map_or(at, |s| ev.slot_site(s));
        ev.hide_what_a_secret_selected(warned, shown, outside);
        cur = ev.view_of_pick(cur, origin, outside);
        cur = crate::secret::mark_over(cur, origin);
    }
    Ok(Walked {
        value: cur,
        slot: walked_slot,
        at_slot,
        picked: in_secret.map(|(_, shown)| {
            if by_selector {
                HiddenPath::Picked(shown)
            } else {
                HiddenPath::Secret(shown)
            }
        }),
    })
}
