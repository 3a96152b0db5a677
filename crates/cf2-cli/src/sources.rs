//! The files a compile reads, so that no output replaces one: `-o common.cf2` naming an
//! imported file, or `--out-dir conf --format cf2` over `conf/site.cf2`, would replace a
//! source of the configuration with its output.
//!
//! A file is the same as another when it is the same file on disk (device and inode on
//! Unix, the canonical path elsewhere): a symbolic link, which an output follows, or another
//! spelling of the path (`./conf/../conf/site.cf2`) is caught too.
//!
//! Also the main file as the compile finds it, to say why it could not be read where the
//! compile's own message would mislead (a directory).

use cf2_eval::host::{HostError, KeePassGroup, Signed};
use cf2_eval::{with_cf2_extension, Host};
use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// What identifies a file on disk.
#[cfg(unix)]
pub type Key = (u64, u64);
#[cfg(not(unix))]
pub type Key = PathBuf;

/// The file `path` names (a symbolic link followed), if it exists.
pub fn key(path: &Path) -> Option<Key> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(path).ok()
    }
}

/// A host that records the path of every file read through it (main files, imports,
/// `read()`, KeePass databases), for [`Recorded::reads`].
pub struct Recorded<H> {
    pub host: H,
    reads: Mutex<Reads>,
    /// The outputs a batch creates, which no host of it may see (see [`Recorded::hiding`]).
    hidden: Option<NewOutputs>,
}

/// Files a batch writes that were not there when it started: the directory (canonical) and
/// the names.
struct NewOutputs {
    dir: PathBuf,
    names: std::collections::HashSet<std::ffi::OsString>,
}

#[derive(Default)]
struct Reads {
    /// Every path read, in order (with repeats: a file read twice is keyed once).
    paths: Vec<PathBuf>,
    /// How many of `paths` are in `keys` (identified lazily: only an output that exists
    /// can replace a source, so a compile into new files never looks).
    keyed: usize,
    keys: HashMap<Key, PathBuf>,
}

impl<H: Host> Recorded<H> {
    pub fn new(host: H) -> Recorded<H> {
        Recorded {
            host,
            reads: Mutex::new(Reads::default()),
            hidden: None,
        }
    }

    /// The same host, for which the files `names` in `dir` do not exist: the outputs a
    /// batch creates. Otherwise a host importing `common` from the working directory
    /// would find the `common.cf2` another host of the same batch has just written, or
    /// not, depending on which thread came first.
    pub fn hiding(mut self, dir: &Path, names: impl IntoIterator<Item = String>) -> Recorded<H> {
        let names: std::collections::HashSet<std::ffi::OsString> =
            names.into_iter().map(Into::into).collect();
        if let (false, Ok(dir)) = (names.is_empty(), self.host.canonicalize(dir)) {
            self.hidden = Some(NewOutputs { dir, names });
        }
        self
    }

    /// Whether `path` is one of the hidden outputs. Only a path with one of their names
    /// costs a look at its directory.
    fn is_hidden(&self, path: &Path) -> bool {
        let Some(hidden) = &self.hidden else {
            return false;
        };
        let (Some(name), Some(parent)) = (path.file_name(), path.parent()) else {
            return false;
        };
        if !hidden.names.contains(name) {
            return false;
        }
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        self.host
            .canonicalize(parent)
            .is_ok_and(|dir| dir == hidden.dir)
    }

    fn record(&self, path: &Path) {
        let mut reads = self.reads.lock().unwrap_or_else(|e| e.into_inner());
        reads.paths.push(path.to_path_buf());
    }

    /// The file read so far that `output` names, if any (as it was read).
    pub fn reads(&self, output: &Path) -> Option<PathBuf> {
        let wanted = key(output)?;
        let mut reads = self.reads.lock().unwrap_or_else(|e| e.into_inner());
        let Reads { paths, keyed, keys } = &mut *reads;
        for path in paths.iter().skip(*keyed) {
            if let Some(k) = key(path) {
                keys.entry(k).or_insert_with(|| path.clone());
            }
        }
        *keyed = paths.len();
        keys.get(&wanted).cloned()
    }
}

impl<H: Host> Host for Recorded<H> {
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        if self.is_hidden(path) {
            return Err(io::ErrorKind::NotFound.into());
        }
        let bytes = self.host.read_file(path)?;
        self.record(path);
        Ok(bytes)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.host.is_file(path) && !self.is_hidden(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.host.canonicalize(path)
    }

    fn current_dir(&self) -> PathBuf {
        self.host.current_dir()
    }

    fn read_file_unless_link(&self, path: &Path) -> Option<Vec<u8>> {
        if self.is_hidden(path) {
            return None;
        }
        let bytes = self.host.read_file_unless_link(path)?;
        self.record(path);
        Some(bytes)
    }

    fn list_dir(&self, dir: &Path) -> Vec<String> {
        let mut names = self.host.list_dir(dir);
        names.retain(|n| !self.is_hidden(&dir.join(n)));
        names
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.host.env_var(name)
    }

    fn lookup_host(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        self.host.lookup_host(name)
    }

    fn lookup_addr(&self, addr: IpAddr) -> io::Result<String> {
        self.host.lookup_addr(addr)
    }

    fn now(&self) -> SystemTime {
        self.host.now()
    }

    fn protected(&self, path: &Path) -> Option<String> {
        self.host.protected(path)
    }

    fn verify_signed(&self, path: &Path, data: &[u8]) -> Result<Signed, HostError> {
        self.host.verify_signed(path, data)
    }

    fn open_keepass(&self, path: &Path, data: &[u8]) -> Result<KeePassGroup, HostError> {
        self.host.open_keepass(path, data)
    }
}

/// The first of `outputs` that would replace a file the command line names, with what that
/// file is, as messages say it: one of the main `files` (``the main file `site.cf2` ``) or
/// one of the `credentials` (``the file `dbkey`, the file of --keepass-keyfile``).
pub fn command_line_file_replaced(
    files: &[PathBuf],
    credentials: &[(&str, &Path)],
    outputs: &[PathBuf],
) -> Option<(usize, String)> {
    if let Some((i, main)) = main_file_replaced(files, outputs) {
        return Some((i, format!("the main file `{}`", main.display())));
    }
    credential_replaced(outputs, credentials)
        .map(|(i, option, path)| (i, format!("`{}`, the file of {option}", path.display())))
}

/// The first of `outputs` that is one of the main `files` (as given, or with `.cf2` added,
/// whichever exists), with that file: known from the command line alone. Costs a `stat`
/// per output, and per main file only when an output exists.
fn main_file_replaced<'f>(files: &'f [PathBuf], outputs: &[PathBuf]) -> Option<(usize, &'f Path)> {
    let existing: Vec<(usize, Key)> = outputs
        .iter()
        .enumerate()
        .filter_map(|(i, out)| key(out).map(|k| (i, k)))
        .collect();
    if existing.is_empty() {
        return None;
    }
    let mut mains: HashMap<Key, &Path> = HashMap::new();
    for file in files {
        let with_ext = with_cf2_extension(file);
        for path in [file.as_path(), with_ext.as_path()] {
            if let Some(k) = key(path) {
                mains.entry(k).or_insert(file.as_path());
            }
            if with_ext == *file {
                break;
            }
        }
    }
    existing
        .into_iter()
        .find_map(|(i, k)| mains.get(&k).map(|main| (i, *main)))
}

/// The first of `outputs` that is one of the credential files the command line names
/// (`--keepass-keyfile`, `--keepass-password-file`, `--gpgpass-file`), with its option:
/// an output written over one would lose the key to the databases or signatures.
fn credential_replaced<'c>(
    outputs: &[PathBuf],
    credentials: &[(&'c str, &'c Path)],
) -> Option<(usize, &'c str, &'c Path)> {
    let creds: Vec<(Key, &str, &Path)> = credentials
        .iter()
        .filter_map(|(option, path)| key(path).map(|k| (k, *option, *path)))
        .collect();
    if creds.is_empty() {
        return None;
    }
    outputs.iter().enumerate().find_map(|(i, out)| {
        let k = key(out)?;
        creds
            .iter()
            .find(|(c, _, _)| *c == k)
            .map(|(_, option, path)| (i, *option, *path))
    })
}
