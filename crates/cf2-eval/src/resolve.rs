//! Finding files: the import search order of reference §3.10, also used by `read()`.
//!
//! For a name that is not absolute, `./`-relative or `project:path`, the places searched
//! are, in order: the working directory, each directory of `CF2PATH`, the directory of the
//! importing file, and the current project's configuration directory. An import without an
//! extension looks for `NAME.cf2`, then `NAME.kdbx`.

use crate::error::{EvalError, R};
use crate::eval::Evaluator;
use crate::model::ScopeId;
use crate::val::Val;
use cf2_syntax::ast;
use cf2_syntax::{Diagnostic, FileId, Span};
use std::path::{Path, PathBuf};

impl<'a> Evaluator<'a> {
    /// Evaluates an import's arguments and loads the file it names. `Ok(None)` never
    /// happens for a found file; errors name the import.
    pub(crate) fn resolve_import_expr(
        &mut self,
        imp: &'a ast::Import,
        sc: ScopeId,
    ) -> R<Option<FileId>> {
        let v = self.eval(&imp.path, sc)?;
        let name = match &v {
            Val::Lit(s) | Val::Str(s) => s.to_string(),
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
        if let Some(signers) = &imp.signers {
            let s = self.eval(signers, sc)?;
            self.check_signers_value(&s, signers.span)?;
        }
        let importer = self.scope(sc).file;
        let path = self.find_file(&name, importer, true, imp.path.span)?;
        let file = self.load_file(&path, imp.span)?;
        if let Some(signers) = &imp.signers {
            self.verify_signature(file, signers.span)?;
        }
        Ok(Some(file))
    }

    fn check_signers_value(&mut self, v: &Val, at: Span) -> R<()> {
        let ok = match v {
            Val::Lit(_) | Val::Str(_) => true,
            Val::List(l) => l.items.iter().all(|x| x.text().is_some()),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(EvalError::new(
                Diagnostic::error(format!(
                    "the signers of an import must be text or a list of text, but this is {}",
                    v.describe()
                ))
                .at(at),
            ))
        }
    }

    /// Signature verification is provided by the security layer (issue #3); until then a
    /// signed import is refused rather than silently trusted.
    fn verify_signature(&mut self, file: FileId, at: Span) -> R<()> {
        Err(EvalError::new(
            Diagnostic::error(format!(
                "cannot verify the signature of `{}`: this build of cf2 has no signature support",
                self.loader_name(file)
            ))
            .at(at),
        ))
    }

    /// Hook for imports that are not CF2 source (KeePass databases); `None` for CF2 files.
    pub(crate) fn special_import(&mut self, file: FileId, imp: &'a ast::Import) -> R<Option<Val>> {
        let is_kdbx = self
            .file(file)
            .and_then(|f| f.path.extension().map(|e| e.eq_ignore_ascii_case("kdbx")))
            .unwrap_or(false);
        if is_kdbx {
            return Err(EvalError::new(
                Diagnostic::error(format!(
                    "cannot import the KeePass database `{}`: this build of cf2 has no KeePass support",
                    self.loader_name(file)
                ))
                .at(imp.span),
            ));
        }
        Ok(None)
    }

    /// The current project's top directory (`TopDir()`), and its configuration directory.
    pub(crate) fn project_dir(&self) -> PathBuf {
        self.opts
            .project_dir
            .clone()
            .unwrap_or_else(|| self.main_dir.clone())
    }

    /// Searches for `name` as §3.10 describes; `cf2_ext` adds the default extensions.
    pub(crate) fn find_file(
        &self,
        name: &str,
        importer: FileId,
        cf2_ext: bool,
        at: Span,
    ) -> R<PathBuf> {
        let cwd = self.host.current_dir();
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
        if cf2_ext && Path::new(&rel).extension().is_none() {
            names = vec![format!("{rel}.cf2"), format!("{rel}.kdbx")];
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
                tried.push(p);
            }
        }
        let mut d = Diagnostic::error(format!("cannot find the file `{name}`"))
            .at(at)
            .with_label("imported here");
        let shown: Vec<String> = tried
            .iter()
            .take(8)
            .map(|p| p.display().to_string())
            .collect();
        d = d.note(format!("looked for: {}", shown.join(", ")));
        if self.host.env_var("CF2PATH").is_none() && !name.starts_with('/') {
            d = d.hint("set CF2PATH to a colon-separated list of directories to search");
        }
        Err(EvalError::new(d))
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

    /// Loads a file found by the search; its syntax and static errors become this error.
    pub(crate) fn load_file(&mut self, path: &Path, at: Span) -> R<FileId> {
        let canonical = self
            .host
            .canonicalize(path)
            .unwrap_or_else(|_| path.to_path_buf());
        let display = self.display_name(&canonical);
        let loaded = self
            .loader
            .load(self.host, &canonical, &display)
            .map_err(|e| {
                let crate::loader::LoadError::Io(e) = e;
                EvalError::new(Diagnostic::error(format!("cannot read `{display}`: {e}")).at(at))
            })?;
        self.file_errors(loaded.id)?;
        Ok(loaded.id)
    }

    /// Fails with a file's syntax and static-check errors, if it has any; reports its
    /// `-Wdup` warnings once.
    pub(crate) fn file_errors(&mut self, id: FileId) -> R<()> {
        let Some(f) = self.file(id) else {
            return Ok(());
        };
        if self.opts.warn_duplicates && !self.dup_reported.contains(&id) {
            self.dup_reported.push(id);
            self.warnings.extend(f.dup_warnings.iter().cloned());
        }
        if let Some((first, rest)) = f.errors.split_first() {
            let mut e = EvalError::new(first.clone());
            e.more = rest.to_vec();
            return Err(e);
        }
        Ok(())
    }

    /// How diagnostics name a file: relative to the working directory when inside it.
    pub(crate) fn display_name(&self, path: &Path) -> String {
        let cwd = self.host.current_dir();
        match path.strip_prefix(&cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
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
