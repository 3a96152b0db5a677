//! Finding and loading files: the import search order of reference §3.10 (also used by
//! `read()`), confinement to allowed directories, signed imports (§5.3) and KeePass
//! databases (§5.2). See docs/semantics.md §13 and docs/security.md.
//!
//! For a name that is not absolute, `./`-relative or `project:path`, the places searched
//! are, in order: the working directory, each directory of `CF2PATH`, the directory of the
//! importing file, and the current project's configuration directory. In each, an import of
//! a name that does not end in `.cf2` or `.kdbx` looks for `NAME.cf2`, then `NAME.kdbx`, then
//! `NAME` as given.
//!
//! - **Confinement.** With `Options::allowed_dirs`, a file found by the search must lie in
//!   one of them once symbolic links are resolved; otherwise the import or `read()` is an
//!   error at the statement. The main file, named by whoever runs the compile, is exempt.
//! - **Signatures.** A clearsigned file is verified by the host (gpg) and its *signed
//!   content* is compiled. With a signer list, a good signature must come from an allowed
//!   signer; without one, any good signature from a key of the keyring will do, and an
//!   unsigned file is compiled as it is.
//! - **KeePass.** A `.kdbx` file is opened by the host and becomes a block of blocks: one
//!   per entry, one per group; every value is a secret (`crate::secret`).

use crate::error::{EvalError, R};
use crate::eval::Evaluator;
use crate::host::{normalize, KeePassEntry, KeePassGroup, Signed, Signer};
use crate::model::*;
use crate::val::{Secret, Val};
use cf2_syntax::ast;
use cf2_syntax::{Diagnostic, FileId, Span};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What an import gives: a CF2 file, or a value made by the host (a KeePass database).
pub(crate) enum Imported {
    File(FileId),
    Value(Val),
}

/// The fields every KeePass entry has, in the order of reference §5.2's example; custom
/// fields follow in name order.
const STANDARD_FIELDS: [&str; 5] = ["Notes", "Password", "Title", "URL", "UserName"];

/// What the first line of a clearsigned file (`gpg --clearsign`) is.
const CLEARSIGN_HEADER: &[u8] = b"-----BEGIN PGP SIGNED MESSAGE-----";

/// What the first line of an armoured signed message (`gpg --sign --armor`) is: signed,
/// but not clearsigned.
const SIGNED_MESSAGE_HEADER: &[u8] = b"-----BEGIN PGP MESSAGE-----";

/// The byte range of the first line of `data` that is not blank (the armour line of a
/// clearsigned file), without its line end; the start of the file if there is none.
fn first_line_span(data: &[u8]) -> std::ops::Range<usize> {
    let mut start = 0;
    for line in data.split(|b| *b == b'\n') {
        let end = start
            + line
                .iter()
                .rposition(|b| !b" \t\r".contains(b))
                .map_or(0, |i| i + 1);
        if end > start {
            return start..end;
        }
        start += line.len() + 1;
    }
    0..0
}

/// The UTF-8 byte order mark, which some editors put before the first line.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// True if `data` is meant to be a clearsigned file: a line of it is the armour line
/// `-----BEGIN PGP SIGNED MESSAGE-----` (whether the file is a clean one is the verifier's
/// business: text around the signed message is refused there, not compiled here). A file
/// whose first line is that line after a byte order mark, or the armour line of a signed
/// message that is not clearsigned, is meant to be signed too: the verifier says what is
/// wrong with it, rather than "it has no signature".
/// Whether `data` looks like what `gpg --sign` (or `--detach-sign`, `--encrypt`) writes
/// without `--armor`: a binary OpenPGP message. It starts with the tag of a packet that
/// begins messages, and a control character follows within a few bytes (a compression
/// algorithm, a version, a length). Text in another encoding than UTF-8 (Latin-1 `État`,
/// UTF-16 with its byte-order mark) is none: it is told it is not UTF-8.
fn is_binary_openpgp(data: &[u8]) -> bool {
    let Some(&first) = data.first() else {
        return false;
    };
    // Public-key or symmetric session key, signature, one-pass signature, compressed data,
    // literal data, encrypted data with integrity protection.
    const MESSAGE_START: [u8; 8] = [1, 2, 3, 4, 8, 11, 18, 20];
    let tag = match first {
        // New format: 11TTTTTT.
        0xC0..=0xFF => first & 0x3F,
        // Old format: 10TTTTLL.
        0x80..=0xBF => (first >> 2) & 0x0F,
        _ => return false,
    };
    let control = |b: &u8| matches!(b, 0x00..=0x08 | 0x0E..=0x1F);
    MESSAGE_START.contains(&tag)
        && data.iter().skip(1).take(16).any(control)
        && std::str::from_utf8(data).is_err()
}

pub fn is_clearsigned(data: &[u8]) -> bool {
    if is_binary_openpgp(data) {
        return true;
    }
    data.split(|b| *b == b'\n').enumerate().any(|(i, line)| {
        let end = line
            .iter()
            .rposition(|b| !b" \t\r".contains(b))
            .map_or(0, |i| i + 1);
        let line = &line[..end];
        line == CLEARSIGN_HEADER
            || (i == 0
                && (line.strip_prefix(BYTE_ORDER_MARK) == Some(CLEARSIGN_HEADER)
                    || line.strip_prefix(BYTE_ORDER_MARK).unwrap_or(line) == SIGNED_MESSAGE_HEADER))
    })
}

impl<'a> Evaluator<'a> {
    /// `import(aspects/web)`, `read(keys/admin)`: a path left unquoted reads as a division,
    /// and fails as one; the hint says to quote it.
    pub(crate) fn unquoted_path(
        &self,
        mut e: EvalError,
        arg: &ast::Expr,
        callee: &str,
    ) -> EvalError {
        if let ast::ExprKind::Binary(ast::BinaryOp::Div, ..) = arg.kind {
            let written = self.source_text(arg.span);
            e.diag.hint = Some(format!(
                "a file name holding `/` must be quoted: `{callee}('{written}')`"
            ));
        }
        e
    }

    /// Evaluates an import's arguments and loads what it names: a CF2 file (verified when
    /// it is signed) or a KeePass database. Errors name the import.
    /// `into`: the block an inline import joins, whose path names a database's entries
    /// (for an import as a value, the resource being evaluated names them).
    pub(crate) fn resolve_import_expr(
        &mut self,
        imp: &'a ast::Import,
        sc: ScopeId,
        into: Option<BlockId>,
    ) -> R<Option<Imported>> {
        let v = self
            .eval(&imp.path, sc)
            .map_err(|e| self.unquoted_path(e, &imp.path, "import"))?;
        let name = match &v {
            Val::Lit(s) | Val::Str(s) => s.to_string(),
            Val::Secret(_) => {
                // Which file is read, and the errors that name it, would tell the secret.
                return Err(EvalError::new(
                    Diagnostic::error(format!(
                        "a secret cannot name the file to import, and this is {}",
                        v.describe()
                    ))
                    .at(imp.path.span)
                    .note("the file read, and any error naming it, would give the secret away"),
                ));
            }
            other => {
                return Err(EvalError::new(
                    Diagnostic::error(format!(
                        "`import` needs the name of a file, but this is {}",
                        other.describe()
                    ))
                    .at(imp.path.span),
                ))
            }
        };
        let signers = match &imp.signers {
            Some(expr) => {
                let s = self.eval(expr, sc)?;
                Some((self.signer_list(&s, expr.span)?, expr.span))
            }
            None => None,
        };
        let importer = self.scope(sc).file;
        // A plain import (no signers to check, no directories to confine it to) that a
        // compile of this batch already resolved is the same file again.
        let cacheable = signers.is_none() && self.opts.allowed_dirs.is_empty();
        let importer_dir = self
            .file(importer)
            .and_then(|f| f.path.parent())
            .filter(|_| cacheable);
        if let Some(dir) = importer_dir {
            let found = self
                .loader
                .resolved_import(&name, dir, self.project_dir_ref());
            if let Some(f) = found.and_then(|id| self.file(id)) {
                self.check_signature(f.id, &f.path, &f.source.name, Some(imp.span), None)?;
                self.file_errors(f.id, Some(imp.span))?;
                return Ok(Some(Imported::File(f.id)));
            }
        }
        let path = self.find_file(&name, importer, true, imp.path.span)?;
        if is_kdbx(&path) {
            if let Some((_, at)) = signers {
                return Err(EvalError::new(
                    Diagnostic::error(format!(
                        "`{name}` is a KeePass database, which cannot carry a PGP signature"
                    ))
                    .at(at)
                    .with_label("signers given here")
                    .hint(
                        "import the database without a list of signers; its password protects it",
                    ),
                ));
            }
            return self
                .keepass_value(&path, imp.span, into)
                .map(|v| Some(Imported::Value(v)));
        }
        let signers = signers.as_ref().map(|(l, at)| (l.as_slice(), *at));
        let file = self.load_source(&path, Some(imp.span), signers, None)?;
        if let Some(dir) = importer_dir {
            self.loader
                .remember_import(&name, dir, self.project_dir_ref(), file);
        }
        Ok(Some(Imported::File(file)))
    }

    /// The signers of an import: text, or a non-empty list of text.
    fn signer_list(&mut self, v: &Val, at: Span) -> R<Vec<String>> {
        let list = match v {
            Val::Lit(s) | Val::Str(s) => Some(vec![s.to_string()]),
            Val::List(l) => l
                .items
                .iter()
                .map(|x| x.text().map(str::to_string))
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        match list {
            Some(l) if l.is_empty() => Err(EvalError::new(
                Diagnostic::error("the list of signers is empty, so no signature can be accepted")
                    .at(at)
                    .hint("name who may sign the file: `import(f, 'user@org')`"),
            )),
            Some(l) => match l.iter().position(|s| s.trim().is_empty()) {
                // No key matches it: a blank entry is a mistake (an empty variable), not a
                // way to name a signer.
                Some(i) => Err(EvalError::new(
                    Diagnostic::error(if l.len() == 1 {
                        "the signer is empty text, which no key matches".to_string()
                    } else {
                        format!("signer {i} of the list is empty text, which no key matches")
                    })
                    .at(at)
                    .hint("name who may sign the file: `import(f, 'user@org')`"),
                )),
                None => Ok(l),
            },
            None => {
                // In a list, the element that is not text is the one to name.
                let (index, culprit) = match v {
                    Val::List(l) => l
                        .items
                        .iter()
                        .enumerate()
                        .find(|(_, x)| x.text().is_none())
                        .map_or((None, v), |(i, x)| (Some(i), x)),
                    _ => (None, v),
                };
                let what = |shown: String| match index {
                    Some(i) => format!("element {i} is {shown}"),
                    None => format!("this is {shown}"),
                };
                if matches!(culprit, Val::Secret(_)) {
                    return Err(EvalError::new(
                        Diagnostic::error(format!(
                            "a secret cannot name who may sign an import, and {}",
                            what(culprit.describe())
                        ))
                        .at(at)
                        .note(
                            "whether a signature is accepted, and the error naming its \
                             signer, would give the secret away",
                        ),
                    ));
                }
                let what = what(match index {
                    Some(_) => crate::ops::describe_kind(culprit),
                    None => culprit.describe(),
                });
                Err(EvalError::new(
                    Diagnostic::error(format!(
                        "the signers of an import must be text or a list of text, but {what}"
                    ))
                    .at(at),
                ))
            }
        }
    }

    /// Loads a CF2 source found by the search (or the main file, `at` = `None`, named
    /// `display` as the command line gave it). A
    /// clearsigned file is verified and its signed content parsed; `signers` (with where
    /// they are written) are the allowed signers. Syntax and static-check errors of the
    /// file become this error, after the signature is accepted.
    pub(crate) fn load_source(
        &mut self,
        path: &Path,
        at: Option<Span>,
        signers: Option<(&[String], Span)>,
        display: Option<String>,
    ) -> R<FileId> {
        // A file is read with one `open` from its directory's canonical form (kept for the
        // run), unless it is already loaded: imports are shared by a batch, and a file
        // loaded under its canonical path is no symbolic link.
        let found = match self.loader.in_canonical_dir(self.host, path) {
            Some(c) if at.is_some() && self.loader.loaded(&c).is_some() => Some((c, None)),
            Some(c) => self.host.read_file_unless_link(&c).map(|b| (c, Some(b))),
            None => None,
        };
        let (canonical, read) = match found {
            Some(found) => found,
            None => (self.canonical(path), None),
        };
        let loaded = self.loader.loaded(&canonical);
        // A file already loaded keeps the name it was loaded with (the one its
        // diagnostics use); working out a display name costs path arithmetic.
        let display = match (display, loaded) {
            (Some(d), _) => d,
            (None, Some(f)) => f.source.name.clone(),
            (None, None) => self.display_name(&canonical),
        };
        // An import is checked when its file is first loaded (the main file is exempt),
        // named as found, not as resolved (`/proc/self/...`, not `/proc/PID/...`).
        if let (Some(site), None) = (at, loaded) {
            self.refuse_protected(&canonical, || self.display_name(path), site, true)?;
        }
        let here = |d: Diagnostic| match at {
            Some(s) => d.at(s),
            None => d,
        };
        let id = match loaded {
            Some(f) => f.id,
            None => {
                let bytes = match read {
                    Some(bytes) => bytes,
                    None => self.host.read_file(&canonical).map_err(|e| {
                        EvalError::new(here(Diagnostic::error(format!(
                            "cannot read `{display}`: {e}"
                        ))))
                    })?,
                };
                if is_clearsigned(&bytes) {
                    let signed = match self.host.verify_signed(&canonical, &bytes) {
                        Ok(signed) => signed,
                        Err(e) => {
                            let mut d = Diagnostic::error(format!(
                                "cannot {} `{display}`: {e}",
                                action(at)
                            ));
                            match signers.map(|(_, s)| s).or(at) {
                                Some(at) => {
                                    d = d.at(at).with_label("the signature is checked here")
                                }
                                // The main file: shown at its first line, the armour line,
                                // so the message has FILE:LINE:COL and an excerpt too.
                                None => {
                                    let first = first_line_span(&bytes);
                                    let id = self.loader.add_main(&canonical, &display, bytes).id;
                                    d = d
                                        .at(Span::new(id, first.start, first.end))
                                        .with_label("the signature of this file is checked");
                                }
                            }
                            if let Some(h) = e.hint {
                                d = d.hint(h);
                            }
                            return Err(EvalError::new(d));
                        }
                    };
                    self.loader.add_signed(&canonical, &display, signed).id
                } else if at.is_none() {
                    // The main file: kept by this compile's loader only (a batch shares
                    // imported files, not each host's own).
                    self.loader.add_main(&canonical, &display, bytes).id
                } else {
                    self.loader.add_bytes(&canonical, &display, bytes).id
                }
            }
        };
        self.check_signature(id, &canonical, &display, at, signers)?;
        self.file_errors(id, at)?;
        Ok(id)
    }

    /// The signature rules (docs/security.md §"Signed imports").
    fn check_signature(
        &self,
        id: FileId,
        path: &Path,
        display: &str,
        at: Option<Span>,
        signers: Option<(&[String], Span)>,
    ) -> R<()> {
        let sig = self.loader.signature(path);
        let err = |message: String, label: &str| {
            let d = Diagnostic::error(message);
            match signers.map(|(_, s)| s).or(at) {
                Some(s) => d.at(s).with_label(label),
                // The main file: shown at its first line, where its armour was (its signed
                // content keeps the line, empty), so the message has FILE:LINE:COL too.
                None => d
                    .at(Span::new(id, 0, 0))
                    .with_label("the signature of this file is checked"),
            }
        };
        match (sig, signers) {
            (None, None) => Ok(()),
            (None, Some((allowed, _))) => Err(EvalError::new(
                err(
                    format!(
                        "cannot import `{display}`: it has no signature, but it must be signed by {}",
                        list_or(allowed)
                    ),
                    "a signature is required here",
                )
                .hint({
                    let asc = PathBuf::from(format!("{}.asc", path.display()));
                    if self.host.is_file(&asc) {
                        // The signed file is there, but the plain one is found first.
                        format!("`{display}.asc` is beside it, but `{display}` is found first: remove `{display}`, or replace it with the `.asc` file")
                    } else {
                        format!("the author signs it with `gpg --clearsign {display}` and replaces the file with the `.asc` file gpg writes")
                    }
                }),
            )),
            (Some(sig), None) => {
                if sig.signers.is_empty() {
                    return Err(EvalError::new(unusable(
                        err(
                            format!(
                                "cannot {} `{display}`: {}",
                                action(at),
                                first_problem(sig)
                            ),
                            "imported here",
                        ),
                        sig,
                    )));
                }
                Ok(())
            }
            (Some(sig), Some((allowed, _))) => {
                if sig
                    .signers
                    .iter()
                    .any(|s| allowed.iter().any(|a| signer_matches(a, s)))
                {
                    return Ok(());
                }
                let d = if sig.signers.is_empty() {
                    unusable(
                        err(
                            format!("cannot import `{display}`: {}", first_problem(sig)),
                            "a signature is required here",
                        ),
                        sig,
                    )
                } else {
                    let who: Vec<String> = sig.signers.iter().map(describe_signer).collect();
                    unusable(
                        err(
                            format!(
                                "cannot import `{display}`: it is signed by {}, {} an allowed signer",
                                who.join(" and "),
                                if who.len() > 1 { "none of whom is" } else { "who is not" }
                            ),
                            "the allowed signers",
                        ),
                        sig,
                    )
                    .note(format!("allowed: {}", allowed.join(", ")))
                    .hint("an allowed signer is an e-mail address of a user id of the key, a whole user id, or the key's fingerprint")
                };
                Err(EvalError::new(d))
            }
        }
    }

    /// Fails with a file's syntax and static-check errors, if it has any, the first showing
    /// the import `at` that loaded it; reports its `-Wdup` warnings once.
    pub(crate) fn file_errors(&mut self, id: FileId, at: Option<Span>) -> R<()> {
        let Some(f) = self.file(id) else {
            return Ok(());
        };
        if self.opts.warn_duplicates && !self.dup_reported.contains(&id) {
            // Given while a secret's pick is read, the warnings are hidden: they are given
            // again where the file is read by name.
            if self.pick_depth == 0 {
                self.dup_reported.push(id);
            }
            self.warnings.extend(f.dup_warnings.iter().cloned());
        }
        if let Some((first, rest)) = f.errors.split_first() {
            let mut first = first.clone();
            if let Some(at) = at {
                first = first.also(at, "imported here");
            }
            let mut e = EvalError::new(first);
            e.more = rest.to_vec();
            return Err(e);
        }
        Ok(())
    }

    // ----- KeePass ------------------------------------------------------------------

    /// A KeePass database as a block: one block per entry and per group (reference §5.2).
    fn keepass_value(&mut self, path: &Path, at: Span, into: Option<BlockId>) -> R<Val> {
        let display = self.display_name(path);
        let canonical = self.canonical(path);
        self.refuse_protected(&canonical, || display.clone(), at, true)?;
        let bytes = self.host.read_file(path).map_err(|e| {
            EvalError::new(
                Diagnostic::error(format!("cannot read the KeePass database `{display}`: {e}"))
                    .at(at),
            )
        })?;
        let root = self.host.open_keepass(path, &bytes).map_err(|e| {
            let mut d =
                Diagnostic::error(format!("cannot open the KeePass database `{display}`: {e}"))
                    .at(at)
                    .with_label("imported here");
            if let Some(h) = e.hint {
                d = d.hint(h);
            }
            EvalError::new(d)
        })?;
        // Imported inline, the entries are members of the block they join, whichever
        // resource happens to build that block first.
        let base = match (into, self.stack.last()) {
            (Some(b), _) => self.block_path(b),
            (None, Some(s)) => self.slot_path(*s),
            (None, None) => String::new(),
        };
        // The database is a file of the source graph like any other: imported inline, its
        // entries join the block as a lower source (reference §3.10: the importing block
        // overrides them; clarifications §5: an unordered file that disagrees conflicts),
        // and messages name it as the file of its definitions. It takes an id in the loader,
        // with no statements, once per path.
        let file = match self.loader.loaded(&canonical) {
            Some(f) => f.id,
            None => self.loader.add_bytes(&canonical, &display, Vec::new()).id,
        };
        let b = self.keepass_group(&root, &base, &display, "", at, file)?;
        self.value_imports.insert(b, file);
        Ok(Val::Block(b))
    }

    /// The block of a group: its entries, then its sub-groups.
    fn keepass_group(
        &mut self,
        group: &KeePassGroup,
        path: &str,
        db: &str,
        inner: &str,
        at: Span,
        file: FileId,
    ) -> R<BlockId> {
        let mut members: Vec<(String, String)> = Vec::new();
        let mut taken: Vec<(String, String)> = Vec::new();
        for entry in &group.entries {
            let title = entry.field("Title").unwrap_or("").to_string();
            let name = keepass_name(&title);
            check_unique(
                &mut taken,
                &name,
                &format!("the entry `{title}`"),
                db,
                inner,
                at,
            )?;
            members.push((name, title));
        }
        for g in &group.groups {
            let name = keepass_name(&g.name);
            check_unique(
                &mut taken,
                &name,
                &format!("the group `{}`", g.name),
                db,
                inner,
                at,
            )?;
            members.push((name, g.name.clone()));
        }
        let b = self.new_block(Place::Named(Rc::from(path)), BlockState::Built);
        let mut slots = Vec::new();
        for (name, _) in &members {
            slots.push(self.new_slot(Name::Owned(Rc::from(name.as_str())), b));
        }
        let n_entries = group.entries.len();
        for (i, slot) in slots.into_iter().enumerate() {
            let name = members[i].0.clone();
            let child_path = self.slot_path(slot);
            let child_inner = join_path(inner, &name);
            let child = if i < n_entries {
                self.keepass_entry(&group.entries[i], &child_path, db, &child_inner, at, file)?
            } else {
                let g = &group.groups[i - n_entries];
                self.keepass_group(g, &child_path, db, &child_inner, at, file)?
            };
            self.define_value(slot, Val::Block(child), i, at, file);
        }
        Ok(b)
    }

    /// The block of an entry: the five standard fields, then the custom ones.
    fn keepass_entry(
        &mut self,
        entry: &KeePassEntry,
        path: &str,
        db: &str,
        inner: &str,
        at: Span,
        file: FileId,
    ) -> R<BlockId> {
        let mut fields: Vec<(String, String)> = STANDARD_FIELDS
            .iter()
            .map(|f| (f.to_string(), entry.field(f).unwrap_or("").to_string()))
            .collect();
        let mut custom: Vec<&(String, String)> = entry
            .fields
            .iter()
            .filter(|(n, _)| !STANDARD_FIELDS.contains(&n.as_str()))
            .collect();
        custom.sort_by(|a, b| a.0.cmp(&b.0));
        fields.extend(custom.into_iter().cloned());
        let b = self.new_block(Place::Named(Rc::from(path)), BlockState::Built);
        let mut taken: Vec<(String, String)> = Vec::new();
        for (i, (field, value)) in fields.into_iter().enumerate() {
            let name = keepass_name(&field);
            check_unique(
                &mut taken,
                &name,
                &format!("the field `{field}`"),
                db,
                inner,
                at,
            )?;
            let slot = self.new_slot(Name::Owned(Rc::from(name.as_str())), b);
            let origin: Rc<str> = Rc::from(format!("{db}:{}", join_path(inner, &name)));
            let v = Val::Secret(Rc::new(Secret {
                value: Val::Lit(Rc::from(value)),
                origin,
                derived: false,
            }));
            self.define_value(slot, v, i, at, file);
        }
        Ok(b)
    }

    /// Gives `slot` the value `v`, as if assigned at `at` (blocks made from data: KeePass
    /// entries, a function's result).
    pub(crate) fn define_value(
        &mut self,
        slot: SlotId,
        v: Val,
        order: usize,
        at: Span,
        file: FileId,
    ) {
        let d = self.new_def(Def {
            op: Op::Assign,
            body: Body::Value(v),
            prio: Key::new(),
            order: smallvec::smallvec![order as u32],
            private: false,
            site: at,
            file,
        });
        self.slot_mut(slot).defs.push(d);
    }

    // ----- the search -----------------------------------------------------------------

    /// The current project's top directory (`TopDir()`), and its configuration directory.
    pub(crate) fn project_dir(&self) -> PathBuf {
        self.project_dir_ref().to_path_buf()
    }

    /// The project directory as `topdir()` gives it: absolute, whether it is the main
    /// file's directory or `--project-dir` as written (`.`, `../site/`), `.` and `..` steps
    /// resolved, symbolic links not.
    pub(crate) fn project_dir_absolute(&self) -> PathBuf {
        normalize(&self.cwd.join(self.project_dir_ref()))
    }

    pub(crate) fn project_dir_ref(&self) -> &Path {
        self.opts.project_dir.as_deref().unwrap_or(&self.main_dir)
    }

    /// Searches for `name` as §3.10 describes; `cf2_ext` adds the default extensions. With
    /// allowed directories, the file found must be inside one of them; its canonical path
    /// is then returned, so that what is read is what was checked.
    pub(crate) fn find_file(
        &mut self,
        name: &str,
        importer: FileId,
        cf2_ext: bool,
        at: Span,
    ) -> R<PathBuf> {
        let found = self.search(name, importer, cf2_ext, at)?;
        if self.opts.allowed_dirs.is_empty() {
            return Ok(found);
        }
        self.confine(&found, name, at, cf2_ext)
    }

    fn search(&self, name: &str, importer: FileId, cf2_ext: bool, at: Span) -> R<PathBuf> {
        let importer_dir = self
            .file(importer)
            .and_then(|f| f.path.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let key = (
            name.to_string(),
            importer_dir.into_os_string(),
            cf2_ext,
            self.project_dir().into_os_string(),
        );
        if let Some(found) = self.loader.cached_search(&key) {
            return Ok(found);
        }
        let found = self.search_uncached(name, importer, cf2_ext, at)?;
        self.loader.remember_search(key, found.clone());
        Ok(found)
    }

    fn search_uncached(&self, name: &str, importer: FileId, cf2_ext: bool, at: Span) -> R<PathBuf> {
        let cwd = self.cwd.clone();
        let mut names: Vec<String> = vec![name.to_string()];
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut rel = name.to_string();
        if name.starts_with('/') {
            dirs.push(PathBuf::new());
        } else if name.starts_with("./") {
            dirs.push(cwd.clone());
        } else if let Some((project, path)) = split_project(name) {
            rel = path.to_string();
            if rel.is_empty() {
                return Err(EvalError::new(
                    Diagnostic::error(format!("`{name}` names a project but no file in it"))
                        .at(at)
                        .hint(format!("write `{project}:FILE`")),
                ));
            }
            dirs.push(self.project_config_dir(project, at)?);
        } else {
            dirs.push(cwd.clone());
            if let Some(path) = self.host.env_var("CF2PATH") {
                for d in path.split(':').filter(|d| !d.is_empty()) {
                    dirs.push(cwd.join(d));
                }
            }
            if let Some(dir) = self.file(importer).and_then(|f| f.path.parent()) {
                if !dir.as_os_str().is_empty() && !f_is_synthetic(dir) {
                    dirs.push(dir.to_path_buf());
                }
            }
            dirs.push(self.project_dir());
        }
        names[0] = rel.clone();
        // "In all cases, a default extension of .cf2 is assumed" (§3.10), and a KeePass
        // database is found without its extension too (§5.2): a name that does not already
        // end in `.cf2` or `.kdbx` is tried with them first, then as given (`my.conf`).
        if cf2_ext && !has_import_extension(&rel) {
            names = vec![format!("{rel}.cf2"), format!("{rel}.kdbx"), rel.clone()];
        }
        let mut tried = Vec::new();
        for dir in &dirs {
            for n in &names {
                let p = if dir.as_os_str().is_empty() {
                    PathBuf::from(n)
                } else {
                    dir.join(n)
                };
                if self.host.is_file(&p) {
                    return Ok(p);
                }
                // The same directory can come from several places (cwd, CF2PATH, ...).
                if !tried.contains(&p) {
                    tried.push(p);
                }
            }
        }
        // `gpg --clearsign f.cf2` writes `f.cf2.asc`, which "can usually be removed"
        // (reference §5.3): usually, so not always. Where no file of the name is found
        // anywhere, the first `.cf2.asc` beside a name tried is the file: last, so that it
        // never changes what a name finds where the plain file is there.
        if cf2_ext {
            let signed = tried.iter().find_map(|p| {
                let text = p.to_str()?;
                let asc = PathBuf::from(format!("{text}.asc"));
                (text.ends_with(".cf2") && self.host.is_file(&asc)).then_some(asc)
            });
            if let Some(asc) = signed {
                return Ok(asc);
            }
        }
        let mut d = Diagnostic::error(format!("cannot find the file `{name}`"))
            .at(at)
            .with_label(if cf2_ext {
                "imported here"
            } else {
                "read here"
            });
        let mut places: Vec<String> = Vec::new();
        for dir in &dirs {
            let shown = dir.display().to_string();
            if !shown.is_empty() && !places.contains(&shown) {
                places.push(shown);
            }
        }
        if places.is_empty() {
            let shown: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
            d = d.note(format!("looked for: {}", shown.join(", ")));
        } else {
            let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            let names = match quoted.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => quoted.join(""),
            };
            let more = places.len().saturating_sub(8);
            places.truncate(8);
            let mut d_note = format!("looked for {names} in: {}", places.join(", "));
            if more > 0 {
                d_note.push_str(&format!(" (and {more} more)"));
            }
            d = d.note(d_note);
        }
        // `read('conf')` where `conf` is a directory: the name is there, but is no file.
        // Not said where "did you mean" is not (`may_suggest_files`).
        // Each directory is listed once, however many names were tried in it.
        let mut listings: Vec<(&Path, Vec<String>)> = Vec::new();
        let not_a_file = tried.iter().filter(|_| self.may_suggest_files()).find(|p| {
            let (Some(dir), Some(name)) = (p.parent(), p.file_name().and_then(|n| n.to_str()))
            else {
                return false;
            };
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            let names = match listings.iter().position(|(d, _)| *d == dir) {
                Some(i) => listings.get(i).map(|(_, names)| names),
                None => {
                    listings.push((dir, self.host.list_dir(dir)));
                    listings.last().map(|(_, names)| names)
                }
            };
            names.is_some_and(|names| names.iter().any(|listed| listed == name))
        });
        if let Some(p) = not_a_file {
            d = d.hint(format!(
                "`{}` is there but is not a regular file (a directory?)",
                p.display()
            ));
        } else if let Some(near) = self.similar_file(&dirs, &rel, cf2_ext, importer) {
            d = d.hint(format!("did you mean `{near}`?"));
        } else if self.host.env_var("CF2PATH").is_none()
            // Names that CF2PATH is never searched for (absolute, `./`, `project:`).
            && !name.starts_with('/')
            && !name.starts_with("./")
            && split_project(name).is_none()
        {
            // `read()` searches as `import` does (docs/semantics.md §13), CF2PATH included.
            d = d.hint("set CF2PATH to a colon-separated list of directories to search");
        }
        Err(EvalError::new(d))
    }

    /// Whether a missing file's message may say what lies near it: not when the compile is
    /// confined (`--allow-dir`: what is outside is not to be seen), nor when the name was
    /// computed from a secret (`read("${pw}")`: a file one edit away from it would tell
    /// what the secret is near; docs/security.md).
    fn may_suggest_files(&self) -> bool {
        self.opts.allowed_dirs.is_empty() && self.taint.is_none()
    }

    /// A name close to `rel` (`bsae` → `base`, `Base` → `base`, `aspect/web` →
    /// `aspects/web`) that names a file in one of the directories searched, written as an
    /// import would name it (without `.cf2` or `.kdbx`). Only for the message: nothing is
    /// listed when the compile is confined to some directories (`--allow-dir`), so that a
    /// suggestion cannot reveal names outside them.
    fn similar_file(
        &self,
        dirs: &[PathBuf],
        rel: &str,
        cf2_ext: bool,
        importer: FileId,
    ) -> Option<String> {
        if !self.may_suggest_files() || rel.starts_with('/') {
            return None;
        }
        let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        let strip = |n: &str| -> String {
            if cf2_ext {
                for ext in [".cf2", ".kdbx"] {
                    if let Some(stem) = n.strip_suffix(ext) {
                        return stem.to_string();
                    }
                }
            }
            n.to_string()
        };
        // `import(mian)` in main.cf2 must not suggest main.cf2 itself.
        let importer = self.file(importer).map(|f| self.canonical(&f.path));
        let usable = |p: &Path| self.host.is_file(p) && Some(self.canonical(p)) != importer;
        // A file an import of `at` would find (`.cf2` or `.kdbx` implied).
        let importable = |at: &Path| {
            ["cf2", "kdbx"].iter().filter(|_| cf2_ext).any(|ext| {
                let mut with = at.as_os_str().to_os_string();
                with.push(".");
                with.push(ext);
                usable(Path::new(&with))
            }) || usable(at)
        };
        'dirs: for dir in dirs.iter().take(8) {
            let mut at = dir.clone();
            let mut chosen: Vec<String> = Vec::new();
            for (i, part) in parts.iter().enumerate() {
                let last = i + 1 == parts.len();
                if *part == "." {
                    chosen.push(".".to_string());
                    continue;
                }
                let names = self.host.list_dir(&at);
                let shown: Vec<String> = if last {
                    names.iter().map(|n| strip(n)).collect()
                } else {
                    names
                };
                let part = if last { strip(part) } else { part.to_string() };
                // `web.cf` for `web.cf2`: another extension given.
                let stem = part
                    .rsplit_once('.')
                    .map(|(stem, _)| stem.to_string())
                    .filter(|stem| last && !stem.is_empty() && shown.contains(stem));
                // `read(data)` for `data.cf2`: `read()` adds no extension.
                let extended = shown.iter().filter(|_| last && !cf2_ext).find(|n| {
                    n.strip_prefix(part.as_str())
                        .is_some_and(|e| e.starts_with('.'))
                });
                let pick = if shown.contains(&part) {
                    part.clone()
                } else if let Some(stem) = stem {
                    stem
                } else if let Some(name) = extended {
                    name.clone()
                } else {
                    match cf2_syntax::diagnostic::did_you_mean(
                        &part,
                        shown.iter().map(String::as_str),
                    ) {
                        Some(n) => n.to_string(),
                        None => continue 'dirs,
                    }
                };
                at = at.join(&pick);
                chosen.push(pick);
            }
            // The last step must be a file (`import(aspect)` is not `aspects/`).
            let file = importable(&at);
            let near = chosen.join("/");
            if file && near != rel && !near.is_empty() {
                return Some(near);
            }
        }
        // `import(web)` for `aspects/web.cf2`: the directory left out.
        let [name] = parts.as_slice() else {
            return None;
        };
        let name = strip(name);
        for dir in dirs.iter().take(8) {
            for sub in self.host.list_dir(dir).into_iter().take(64) {
                if importable(&dir.join(&sub).join(&name)) {
                    return Some(format!("{sub}/{name}"));
                }
            }
        }
        None
    }

    /// Refuses a file the host protects (the compile's own credentials, `/proc/PID/...`),
    /// whether or not `--allow-dir` is given. `canonical` is the file's path with links
    /// resolved; `name` gives how the configuration names it (worked out only for the
    /// error). Checked before a file is first loaded, read with `read()` or opened as a
    /// database.
    pub(crate) fn refuse_protected(
        &self,
        canonical: &Path,
        name: impl FnOnce() -> String,
        at: Span,
        import: bool,
    ) -> R<()> {
        let Some(why) = self.host.protected(canonical) else {
            return Ok(());
        };
        let name = name();
        let what = if import { "imported" } else { "read" };
        Err(EvalError::new(
            Diagnostic::error(format!("`{name}` {why}, so it cannot be {what}"))
                .at(at)
                .with_label(format!("{what} here"))
                .note("no configuration may read the credentials of the compile that runs it"),
        ))
    }

    /// `path` with links resolved, once per path and run (as found, if that fails).
    pub(crate) fn canonical(&self, path: &Path) -> PathBuf {
        self.loader
            .canonicalize(self.host, path)
            .unwrap_or_else(|_| path.to_path_buf())
    }

    /// Checks that `found` lies inside an allowed directory once links are resolved.
    fn confine(&mut self, found: &Path, name: &str, at: Span, import: bool) -> R<PathBuf> {
        let cwd = self.cwd.clone();
        let canonical = self
            .host
            .canonicalize(found)
            .unwrap_or_else(|_| normalize(&cwd.join(found)));
        let allowed = self.allowed_dirs();
        if allowed.iter().any(|d| canonical.starts_with(d)) {
            return Ok(canonical);
        }
        let shown = if name == canonical.to_string_lossy() {
            format!("`{name}`")
        } else {
            format!("`{name}` (`{}`)", canonical.display())
        };
        let what = if import { "imported" } else { "read" };
        let dirs: Vec<String> = allowed.iter().map(|d| d.display().to_string()).collect();
        Err(EvalError::new(
            Diagnostic::error(format!(
                "{shown} is outside the directories this compile may read, so it cannot be {what}"
            ))
            .at(at)
            .with_label(format!("{what} here"))
            .note(format!("allowed directories: {}", dirs.join(", ")))
            .hint("the person running the compile chooses them with --allow-dir DIR"),
        ))
    }

    /// The allowed directories, canonical (links resolved where they exist).
    fn allowed_dirs(&mut self) -> Vec<PathBuf> {
        if let Some(a) = &self.allowed {
            return a.clone();
        }
        let cwd = self.cwd.clone();
        let dirs: Vec<PathBuf> = self
            .opts
            .allowed_dirs
            .iter()
            .map(|d| {
                let full = normalize(&cwd.join(d));
                self.host.canonicalize(&full).unwrap_or(full)
            })
            .collect();
        self.allowed = Some(dirs.clone());
        dirs
    }

    fn project_config_dir(&self, project: &str, at: Span) -> R<PathBuf> {
        if project.is_empty() {
            return Ok(self.project_dir());
        }
        if let Some((_, dir)) = self.opts.projects.iter().find(|(n, _)| n == project) {
            return Ok(dir.clone());
        }
        let known: Vec<&str> = self.opts.projects.iter().map(|(n, _)| n.as_str()).collect();
        let mut d = Diagnostic::error(format!("unknown project `{project}`"))
            .at(at)
            .hint("name projects with `--project NAME=DIR`, or in CF2PROJECTS=NAME=DIR:NAME=DIR");
        if !known.is_empty() {
            d = d.note(format!("known projects: {}", known.join(", ")));
        }
        Err(EvalError::new(d))
    }

    /// How diagnostics name a file: relative to the working directory when inside it.
    pub(crate) fn display_name(&self, path: &Path) -> String {
        let cwd = self.cwd.clone();
        match path.strip_prefix(&cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
    }
}

/// True if `name` ends in `.cf2` or `.kdbx`: it names its file exactly.
pub(crate) fn has_import_extension(name: &str) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("cf2") || e.eq_ignore_ascii_case("kdbx"))
}

/// What is done with a file loaded from `at` (an import) or from the command line (the
/// main file, `at` = `None`), for messages: the main file is compiled, not imported.
fn action(at: Option<Span>) -> &'static str {
    if at.is_some() {
        "import"
    } else {
        "compile"
    }
}

fn is_kdbx(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("kdbx"))
}

fn join_path(inner: &str, name: &str) -> String {
    if inner.is_empty() {
        name.to_string()
    } else {
        format!("{inner}.{name}")
    }
}

/// A KeePass title or field name as a CF2 resource name (reference §5.2): every character
/// that cannot be in an identifier becomes `★`; an empty name is `★`; a keyword (`if`,
/// `import`, ...) gets a `★` after it.
pub fn keepass_name(title: &str) -> String {
    let ok = |c: char, first: bool| {
        c.is_ascii_alphabetic()
            || c == '_'
            || (!first && c.is_ascii_digit())
            || (c as u32 >= 0x80
                && !c.is_whitespace()
                && !c.is_control()
                && c != '\u{200B}'
                && c != '\u{FEFF}')
    };
    let mut out: String = title
        .chars()
        .enumerate()
        .map(|(i, c)| if ok(c, i == 0) { c } else { '★' })
        .collect();
    if out.is_empty() {
        out.push('★');
    }
    if cf2_syntax::lexer::is_keyword(&out) {
        out.push('★');
    }
    if !cf2_syntax::lexer::is_identifier(&out) {
        // Whatever the lexer does not take as a name: keep ASCII letters, digits and `_`.
        out = out
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit()) {
                    c
                } else {
                    '★'
                }
            })
            .collect();
    }
    out
}

/// Two members of one KeePass block may not have the same name (reference §5.2).
fn check_unique(
    taken: &mut Vec<(String, String)>,
    name: &str,
    what: &str,
    db: &str,
    inner: &str,
    at: Span,
) -> R<()> {
    if let Some((_, first)) = taken.iter().find(|(n, _)| n == name) {
        let place = if inner.is_empty() {
            "at the top of the database".to_string()
        } else {
            format!("in `{inner}`")
        };
        let mut d = Diagnostic::error(format!(
            "the KeePass database `{db}` has two members named `{name}` {place}: {first} and {what}"
        ))
        .at(at)
        .with_label("imported here");
        // Only where a character was replaced: two identical titles need no explanation.
        if name.contains('★') {
            d = d.note("characters that cannot be in a resource name become `★`, so different titles can give the same name");
        }
        return Err(EvalError::new(d.hint("rename one of them in the database")));
    }
    taken.push((name.to_string(), what.to_string()));
    Ok(())
}

/// Does the allowed signer `allowed` name the key of `signer`? An e-mail address
/// (`user@org` or `<user@org>`) matches the address of a user id (`Name <user@org>`, or a
/// user id that is just the address), ignoring case; other text must be a whole user id;
/// forty hex digits (spaces allowed, `0x` optional) are the primary key's fingerprint.
pub fn signer_matches(allowed: &str, signer: &Signer) -> bool {
    let allowed = allowed.trim();
    if allowed.is_empty() {
        return false;
    }
    let hex: String = allowed
        .trim_start_matches("0x")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if hex.len() == 40 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return hex.eq_ignore_ascii_case(&signer.fingerprint);
    }
    let bare = allowed
        .strip_prefix('<')
        .and_then(|a| a.strip_suffix('>'))
        .unwrap_or(allowed);
    if bare.contains('@') && !bare.contains(|c: char| c.is_whitespace() || c == '<' || c == '>') {
        let want = bare;
        return signer
            .uids
            .iter()
            .any(|u| uid_email(u).is_some_and(|e| e.eq_ignore_ascii_case(want)));
    }
    signer.uids.iter().any(|u| u.trim() == allowed)
}

/// The e-mail address of a user id: inside the last `<...>`, or the whole id if it is one.
fn uid_email(uid: &str) -> Option<&str> {
    let uid = uid.trim();
    if let (Some(a), Some(b)) = (uid.rfind('<'), uid.rfind('>')) {
        if a < b {
            return Some(uid[a + 1..b].trim());
        }
    }
    if uid.contains('@') && !uid.contains(char::is_whitespace) {
        return Some(uid);
    }
    None
}

fn describe_signer(s: &Signer) -> String {
    match s.uids.first() {
        Some(u) => format!("`{u}` (key {})", s.fingerprint),
        None => format!("the key {}", s.fingerprint),
    }
}

fn first_problem(sig: &Signed) -> String {
    sig.problems
        .first()
        .cloned()
        .unwrap_or_else(|| "no signature in it can be verified".to_string())
}

/// Adds the other problems of a signature check as notes.
fn unusable(mut d: Diagnostic, sig: &Signed) -> Diagnostic {
    for p in sig.problems.iter().skip(1) {
        d = d.note(p.clone());
    }
    d
}

fn list_or(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.len() {
        0 => "nobody".into(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

fn f_is_synthetic(dir: &Path) -> bool {
    dir.to_string_lossy().starts_with('<')
}

/// `project:path` (a project name of word characters, possibly empty).
fn split_project(name: &str) -> Option<(&str, &str)> {
    let (project, path) = name.split_once(':')?;
    if project
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        Some((project, path))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(uids: &[&str]) -> Signer {
        Signer {
            fingerprint: "0123456789ABCDEF0123456789ABCDEF01234567".into(),
            uids: uids.iter().map(|u| u.to_string()).collect(),
        }
    }

    #[test]
    fn keepass_names_become_identifiers() {
        assert_eq!(keepass_name("entry-1"), "entry★1");
        assert_eq!(keepass_name("fred"), "fred");
        assert_eq!(keepass_name("Lab 2"), "Lab★2");
        assert_eq!(keepass_name("2fa"), "★fa");
        assert_eq!(keepass_name(""), "★");
        assert_eq!(keepass_name("import"), "import★");
        assert_eq!(keepass_name("café"), "café");
        assert_eq!(keepass_name("a.b"), "a★b");
        for t in ["a b", "x\u{200B}y", "\u{FEFF}", "é-è", "tab\tbed", "if"] {
            assert!(cf2_syntax::lexer::is_identifier(&keepass_name(t)), "{t:?}");
        }
    }

    #[test]
    fn signers_match_by_email_uid_or_fingerprint() {
        let s = signer(&["Jane Doe <Jane@Example.org>", "jd@other.org"]);
        assert!(signer_matches("jane@example.org", &s));
        assert!(signer_matches("<jane@example.org>", &s));
        assert!(signer_matches("jd@other.org", &s));
        assert!(signer_matches("Jane Doe <Jane@Example.org>", &s));
        assert!(!signer_matches("Jane Doe", &s));
        assert!(!signer_matches("doe@example.org", &s));
        assert!(!signer_matches("example.org", &s));
        assert!(signer_matches(
            "0123 4567 89ab cdef 0123 4567 89AB CDEF 0123 4567",
            &s
        ));
        assert!(signer_matches(
            "0x0123456789abcdef0123456789abcdef01234567",
            &s
        ));
        assert!(!signer_matches("89ABCDEF01234567", &s));
        assert!(!signer_matches("", &s));
    }

    #[test]
    fn clearsigned_files_are_recognised() {
        assert!(is_clearsigned(
            b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n"
        ));
        assert!(is_clearsigned(
            b"\n-----BEGIN PGP SIGNED MESSAGE-----  \r\n"
        ));
        assert!(is_clearsigned(
            b"A => 1\n-----BEGIN PGP SIGNED MESSAGE-----\n"
        ));
        assert!(!is_clearsigned(
            b"A => '-----BEGIN PGP SIGNED MESSAGE-----'\n"
        ));
        assert!(!is_clearsigned(b""));
        // Meant to be signed: the verifier says what is wrong.
        assert!(is_clearsigned(
            b"\xEF\xBB\xBF-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n"
        ));
        assert!(is_clearsigned(b"-----BEGIN PGP MESSAGE-----\n\nowGb\n"));
        assert!(!is_clearsigned(b"A => 1\n-----BEGIN PGP MESSAGE-----\n"));
        // `gpg --sign` without `--armor`: a binary message.
        assert!(is_clearsigned(b"\xa3\x01\x9b\xc0\xcb\xc0"));
        assert!(!is_clearsigned("é => 1\n".as_bytes()));
    }

    #[test]
    fn first_line_span_skips_blank_lines() {
        assert_eq!(first_line_span(b"\n  \r\n-----BEGIN X-----\r\nrest"), 5..22);
        assert_eq!(first_line_span(b""), 0..0);
    }
}
