//! The loader: reads, parses and statically checks each source file once, and hands out
//! references to its AST that stay valid for the loader's lifetime (so the evaluator can
//! hold `&'a ast::Expr` while later imports are still being loaded).
//!
//! One loader may be shared by many compiles on many threads (a batch of hosts): every file
//! is parsed once however many hosts import it. Files are only ever added.

use crate::checks;
use crate::host::{Host, Signed};
use cf2_syntax::ast;
use cf2_syntax::{parse, Diagnostic, FileId, SourceFile, Sources, Span};
use elsa::sync::{FrozenMap, FrozenVec};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A source file, parsed and checked.
#[derive(Debug)]
pub struct LoadedFile {
    pub id: FileId,
    /// The canonical path (or a synthetic name for in-memory sources).
    pub path: PathBuf,
    pub source: SourceFile,
    pub ast: ast::File,
    /// Syntax errors and static-check errors; a file with any error is not evaluated.
    pub errors: Vec<Diagnostic>,
    /// Duplicate-definition warnings (`-Wdup`), reported only when asked for.
    pub dup_warnings: Vec<Diagnostic>,
    /// The file's macros by name: the first `def` of each (a call looks its macro up here,
    /// not by scanning the file).
    pub macros: std::collections::HashMap<Arc<str>, Arc<ast::MacroDef>>,
    /// The file's regex literals, compiled once by the static checks for every compile
    /// (and every host of a batch) that evaluates them.
    pub regexes: Regexes,
}

/// Compiled regexes by pattern.
pub type Regexes = std::collections::HashMap<Box<str>, Arc<crate::perl_regex::PerlRegex>>;

impl LoadedFile {
    /// The macro `name` if it is defined before byte offset `before`. Macro names are
    /// case-insensitive, like function names (reference §3.12).
    pub fn macro_before(&self, name: &str, before: u32) -> Option<&ast::MacroDef> {
        let m = self.macros.get(&*macro_key(name))?;
        (m.span.end <= before).then_some(&**m)
    }
}

/// The key a macro is known by: its name in lower case (without allocating when it is).
pub fn macro_key(name: &str) -> std::borrow::Cow<'_, str> {
    if name.chars().any(char::is_uppercase) {
        std::borrow::Cow::Owned(name.to_lowercase())
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

fn index_macros(file: &ast::File) -> std::collections::HashMap<Arc<str>, Arc<ast::MacroDef>> {
    let mut out = std::collections::HashMap::new();
    // The first definition in source order (a second one is an error anyway).
    for m in &file.macros {
        out.entry(Arc::from(macro_key(&m.name.name)))
            .or_insert_with(|| Arc::clone(m));
    }
    out
}

/// Why a file could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    Io(std::io::Error),
}

#[derive(Default)]
pub struct Loader {
    /// The files by id (less this loader's first id). A slot is taken before its file is
    /// parsed and filled once it is; a slot whose file another thread added first stays
    /// empty, and no id refers to it.
    files: FrozenVec<Box<OnceLock<LoadedFile>>>,
    /// Paths are keyed by their bytes (canonical paths are unique as text; `Path`'s own
    /// hash walks components, which showed in the profile of many small compiles).
    by_path: FrozenMap<OsString, Box<FileId>>,
    /// For each clearsigned file, what verifying it found (so later imports check their
    /// own signer lists without running gpg again).
    signatures: FrozenMap<OsString, Box<Signed>>,
    /// Import searches already done, by (name, importing directory, default extensions,
    /// project directory): a fleet's hosts import the same files, and each search costs
    /// several `stat`s. Files are taken not to move during a run.
    searches: Mutex<HashMap<SearchKey, PathBuf, Hasher>>,
    /// Imports already resolved to a loaded file, by the hash of (name, importing
    /// directory, project directory): every host of a fleet imports its base and aspects
    /// from the same directories, and the search, the canonical path and the look-up by
    /// path cost a tenth of a small compile. Looked up without allocating a key.
    imports: Mutex<HashMap<u64, Vec<ResolvedImport>, Hasher>>,
    import_hasher: Hasher,
    /// Canonical forms of paths already resolved (each costs a `readlink` per component):
    /// imported files, and the directories of main files (see [`Loader::in_canonical_dir`]).
    canonical: Mutex<HashMap<OsString, PathBuf, Hasher>>,
    /// The working directory, asked of the host once: a loader's compiles share it, as they
    /// share the import searches that depend on it (a `getcwd` per host showed in batches).
    cwd: OnceLock<PathBuf>,
    /// For one compile of a batch: the batch's shared loader. Imported files go there (so
    /// every host shares them); the main file stays here and is freed with this loader, so
    /// a batch's memory does not grow with its number of hosts.
    parent: Option<std::sync::Arc<Loader>>,
}

type Hasher = foldhash::fast::RandomState;

/// An entry of [`Loader`]'s import cache: the full key, compared on a hit.
struct ResolvedImport {
    name: Box<str>,
    importer_dir: Box<std::ffi::OsStr>,
    project_dir: Box<std::ffi::OsStr>,
    file: FileId,
}

impl ResolvedImport {
    fn is(&self, name: &str, importer_dir: &Path, project_dir: &Path) -> bool {
        *self.name == *name
            && *self.importer_dir == *importer_dir.as_os_str()
            && *self.project_dir == *project_dir.as_os_str()
    }
}

/// An import search: (name, importing directory, default extensions, project directory).
pub type SearchKey = (String, OsString, bool, OsString);

/// File ids of a child loader start here, above any id of its parent.
const CHILD_IDS: u32 = 1 << 31;

impl Loader {
    pub fn new() -> Loader {
        Loader::default()
    }

    /// A loader for one compile of a batch, sharing `parent`'s imported files and caches.
    pub fn child(parent: std::sync::Arc<Loader>) -> Loader {
        Loader {
            parent: Some(parent),
            ..Loader::default()
        }
    }

    /// The working directory of this loader's compiles (see the field).
    pub fn working_dir(&self, host: &dyn Host) -> PathBuf {
        self.shared().cwd.get_or_init(|| host.current_dir()).clone()
    }

    /// Where files imported by a compile go: the shared parent if there is one.
    fn shared(&self) -> &Loader {
        match &self.parent {
            Some(p) => p,
            None => self,
        }
    }

    fn id_base(&self) -> u32 {
        if self.parent.is_some() {
            CHILD_IDS
        } else {
            0
        }
    }

    /// A cached import search (see `searches`).
    pub fn cached_search(&self, key: &SearchKey) -> Option<PathBuf> {
        self.shared()
            .searches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }

    pub fn remember_search(&self, key: SearchKey, found: PathBuf) {
        self.shared()
            .searches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, found);
    }

    /// The file an import of `name` from `importer_dir` resolved to before, with the same
    /// project directory (see `imports`).
    pub fn resolved_import(
        &self,
        name: &str,
        importer_dir: &Path,
        project_dir: &Path,
    ) -> Option<FileId> {
        let cache = self.shared();
        let hash = cache.import_hash(name, importer_dir, project_dir);
        let imports = cache.imports.lock().unwrap_or_else(|e| e.into_inner());
        imports
            .get(&hash)?
            .iter()
            .find(|r| r.is(name, importer_dir, project_dir))
            .map(|r| r.file)
    }

    /// Remembers where an import resolved (see [`Loader::resolved_import`]).
    pub fn remember_import(
        &self,
        name: &str,
        importer_dir: &Path,
        project_dir: &Path,
        file: FileId,
    ) {
        // A compile's own main file is not shared: its id means another file in the
        // next compile of the batch.
        if self.parent.is_some() && file.0 >= CHILD_IDS {
            return;
        }
        let cache = self.shared();
        let hash = cache.import_hash(name, importer_dir, project_dir);
        let mut imports = cache.imports.lock().unwrap_or_else(|e| e.into_inner());
        let entries = imports.entry(hash).or_default();
        if !entries
            .iter()
            .any(|r| r.is(name, importer_dir, project_dir))
        {
            entries.push(ResolvedImport {
                name: name.into(),
                importer_dir: importer_dir.as_os_str().into(),
                project_dir: project_dir.as_os_str().into(),
                file,
            });
        }
    }

    fn import_hash(&self, name: &str, importer_dir: &Path, project_dir: &Path) -> u64 {
        use std::hash::BuildHasher;
        self.import_hasher.hash_one((
            name,
            importer_dir.as_os_str().as_encoded_bytes(),
            project_dir.as_os_str().as_encoded_bytes(),
        ))
    }

    /// The canonical form of `path`, through the host once per path and run.
    pub fn canonicalize(&self, host: &dyn Host, path: &Path) -> std::io::Result<PathBuf> {
        let cache = self.shared();
        if let Some(c) = cache
            .canonical
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(path.as_os_str())
        {
            return Ok(c.clone());
        }
        let c = host.canonicalize(path)?;
        cache
            .canonical
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.as_os_str().to_owned(), c.clone());
        Ok(c)
    }

    /// The canonical path of the file at `path` (absolute), worked out from its directory's
    /// canonical form, which is resolved once per run and kept: right unless the file's own
    /// name is a symbolic link, which the caller rules out (reading it with
    /// [`Host::read_file_unless_link`], or finding it loaded under that path). Resolving
    /// every component of every path instead costs a `readlink` per component, most of a
    /// single compile's system calls. `None` when `path` has no directory and name.
    pub fn in_canonical_dir(&self, host: &dyn Host, path: &Path) -> Option<PathBuf> {
        let (dir, name) = (path.parent()?, path.file_name()?);
        Some(self.canonicalize(host, dir).ok()?.join(name))
    }

    pub fn get(&self, id: FileId) -> Option<&LoadedFile> {
        let base = self.id_base();
        if id.0 >= base {
            self.files
                .get((id.0 - base) as usize)
                .and_then(OnceLock::get)
        } else {
            self.parent.as_deref().and_then(|p| p.get(id))
        }
    }

    /// The file at canonical path `path`, if it is loaded.
    pub fn loaded(&self, path: &Path) -> Option<&LoadedFile> {
        match self
            .by_path
            .get(path.as_os_str())
            .and_then(|id| self.get(*id))
        {
            Some(f) => Some(f),
            None => self.parent.as_deref().and_then(|p| p.loaded(path)),
        }
    }

    /// What verifying the file at `path` found, if it was a clearsigned file.
    pub fn signature(&self, path: &Path) -> Option<&Signed> {
        self.signatures
            .get(path.as_os_str())
            .or_else(|| self.parent.as_deref().and_then(|p| p.signature(path)))
    }

    /// Adds an imported file given by its bytes (as read by the caller); shared with the
    /// rest of a batch.
    pub fn add_bytes(&self, path: &Path, display: &str, bytes: Vec<u8>) -> &LoadedFile {
        self.shared().add(path.to_path_buf(), display, bytes)
    }

    /// Adds the main file of a compile: kept by this loader only.
    pub fn add_main(&self, path: &Path, display: &str, bytes: Vec<u8>) -> &LoadedFile {
        self.add(path.to_path_buf(), display, bytes)
    }

    /// Adds a clearsigned file: its signed content is what is parsed, with the columns of
    /// its dash-escaped lines counted as in the file; `signed` is kept for
    /// [`Loader::signature`].
    pub fn add_signed(&self, path: &Path, display: &str, signed: Signed) -> &LoadedFile {
        let mut info = signed;
        let content = std::mem::take(&mut info.content);
        let dash_escaped = std::mem::take(&mut info.dash_escaped);
        let shared = self.shared();
        shared
            .signatures
            .insert(path.as_os_str().to_owned(), Box::new(info));
        shared.add_escaped(path.to_path_buf(), display, content, dash_escaped)
    }

    /// Loads the file at canonical path `path`, naming it `display` in diagnostics.
    pub fn load(
        &self,
        host: &dyn Host,
        path: &Path,
        display: &str,
    ) -> Result<&LoadedFile, LoadError> {
        if let Some(id) = self.by_path.get(path.as_os_str()) {
            if let Some(f) = self.get(*id) {
                return Ok(f);
            }
        }
        let bytes = host.read_file(path).map_err(LoadError::Io)?;
        Ok(self.add(path.to_path_buf(), display, bytes))
    }

    /// Adds a source given as text (a string compiled directly, or standard input); one
    /// added under `name` before is kept, whatever its text.
    pub fn add_source(&self, name: &str, text: &str) -> &LoadedFile {
        self.add(source_path(name), name, text.as_bytes().to_vec())
    }

    /// The source added as text under `name` ([`Loader::add_source`]), if any.
    pub fn source(&self, name: &str) -> Option<&LoadedFile> {
        self.loaded(&source_path(name))
    }

    /// Adds a file unless one with this path is there already. It is parsed and checked
    /// with no lock held, so the threads of a batch load files side by side; if two load
    /// the same file at once, both parse it and the first one added is kept.
    fn add(&self, path: PathBuf, display: &str, bytes: Vec<u8>) -> &LoadedFile {
        self.add_escaped(path, display, bytes, Vec::new())
    }

    /// [`Loader::add`] for a clearsigned file's signed text, whose lines `dash_escaped`
    /// have a `- ` before them in the file ([`SourceFile::with_dash_escaped`]).
    fn add_escaped(
        &self,
        path: PathBuf,
        display: &str,
        bytes: Vec<u8>,
        dash_escaped: Vec<u32>,
    ) -> &LoadedFile {
        if let Some(f) = self
            .by_path
            .get(path.as_os_str())
            .and_then(|id| self.get(*id))
        {
            return f;
        }
        // Ids index `files`, so the slot is taken first; the file, whose spans carry its
        // id, is made next.
        let index = self.files.push_get_index(Box::default());
        let id = FileId(
            u32::try_from(index)
                .unwrap_or(u32::MAX)
                .saturating_add(self.id_base()),
        );
        let slot = self.files.get(index);
        let mut file = Some(build(id, path.clone(), display, bytes, dash_escaped));
        // The slot is filled before the path names it (under the map's lock), so whoever
        // finds the id finds the file.
        let winner = *self.by_path.insert_with(path.into_os_string(), || {
            if let (Some(slot), Some(f)) = (slot, file.take()) {
                let _ = slot.set(f);
            }
            Box::new(id)
        });
        match self.get(winner) {
            Some(f) => f,
            None => unreachable_file(),
        }
    }
}

/// The id a path names always has its file (the slot is filled before the path is added);
/// this keeps the signature total without a panic path.
fn unreachable_file() -> &'static LoadedFile {
    static EMPTY: std::sync::OnceLock<LoadedFile> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| LoadedFile {
        id: FileId(u32::MAX),
        path: PathBuf::new(),
        source: SourceFile::new("<none>", Arc::from("")),
        ast: ast::File::default(),
        errors: Vec::new(),
        dup_warnings: Vec::new(),
        macros: Default::default(),
        regexes: Default::default(),
    })
}

fn build(
    id: FileId,
    path: PathBuf,
    display: &str,
    bytes: Vec<u8>,
    dash_escaped: Vec<u32>,
) -> LoadedFile {
    let mut errors = Vec::new();
    let text: Arc<str> = match String::from_utf8(bytes) {
        Ok(s) => Arc::from(s),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            // Editors that write UTF-16 (Windows Notepad) begin with its byte-order mark.
            let hint = match e.as_bytes() {
                [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => {
                    "the file is UTF-16 (it begins with UTF-16's byte-order mark): save it as UTF-8; CF2 sources must be UTF-8 text"
                }
                _ => "CF2 sources must be UTF-8 text: save the file as UTF-8 (`iconv -f latin1 -t utf-8` converts Latin-1)",
            };
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            errors.push(
                Diagnostic::error(format!("`{display}` is not valid UTF-8 (byte {at})"))
                    .at(Span::new(id, at, at + 1))
                    .with_label("this byte")
                    .hint(hint),
            );
            Arc::from(lossy)
        }
    };
    let source = SourceFile::new(display, text.clone()).with_dash_escaped(dash_escaped);
    let (ast, parse_errors) = if errors.is_empty() {
        parse(id, &text)
    } else {
        (ast::File::default(), Vec::new())
    };
    errors.extend(parse_errors);
    let mut dup_warnings = Vec::new();
    let mut regexes = Regexes::default();
    if errors.is_empty() {
        let found = checks::check_file(&ast);
        errors.extend(found.errors);
        dup_warnings = found.dup_warnings;
        regexes = found.regexes;
    }
    let macros = index_macros(&ast);
    LoadedFile {
        id,
        path,
        source,
        ast,
        errors,
        dup_warnings,
        macros,
        regexes,
    }
}

impl Sources for Loader {
    fn file(&self, id: FileId) -> Option<&SourceFile> {
        self.get(id).map(|f| &f.source)
    }
}

/// The path under which a source given as text is kept: not one a file can have.
fn source_path(name: &str) -> PathBuf {
    PathBuf::from(format!("<{name}>"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::MemoryHost;

    /// Threads adding the same file at once all get the one that was added first; every
    /// file keeps an id that finds it.
    #[test]
    fn a_file_added_by_several_threads_at_once_is_one_file() {
        let loader = Loader::new();
        let ids: Vec<Vec<FileId>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..50)
                            .map(|i| {
                                let path = PathBuf::from(format!("/f{}.cf2", i % 10));
                                let f = loader.add_bytes(&path, "f", b"A => 1\n".to_vec());
                                assert_eq!(f.path, path);
                                f.id
                            })
                            .collect()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for i in 0..10 {
            let path = PathBuf::from(format!("/f{i}.cf2"));
            let f = loader.loaded(&path).unwrap();
            assert_eq!(loader.get(f.id).unwrap().path, path);
            assert!(ids.iter().all(|t| t[i] == f.id && t[i + 10] == f.id));
        }
    }

    #[test]
    fn a_file_is_read_from_its_canonical_directory() {
        let host = MemoryHost::new()
            .with_file("hosts/a.cf2", "A => 1\n")
            .with_file("hosts/b.cf2", "B => 1\n");
        let loader = Loader::new();
        // As `load_source` reads a file: from its canonical directory, unless it is a link.
        let read_in_canonical_dir = |path: &Path| {
            let canonical = loader.in_canonical_dir(&host, path)?;
            let bytes = host.read_file_unless_link(&canonical)?;
            Some((canonical, bytes))
        };
        let (path, bytes) = read_in_canonical_dir(Path::new("/work/hosts/a.cf2")).unwrap();
        assert_eq!(
            (path.as_path(), bytes.as_slice()),
            (Path::new("/work/hosts/a.cf2"), &b"A => 1\n"[..])
        );
        assert!(read_in_canonical_dir(Path::new("/work/hosts/c.cf2")).is_none());
        assert!(read_in_canonical_dir(Path::new("/work/other/a.cf2")).is_none());
        assert!(read_in_canonical_dir(Path::new("a.cf2")).is_none());
    }
}
