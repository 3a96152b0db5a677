//! The one interface through which the file system, the environment, the clock and the
//! network resolver reach the compiler. The evaluator never touches `std::fs` or
//! `std::env` itself, so it is pure given a `Host`, and tests run it in memory
//! ([`MemoryHost`]). The real implementation lives in the `cf2` crate (`OsHost`); gpg and
//! KeePass come from the `cf2-security` crate through [`Host::verify_signed`] and
//! [`Host::open_keepass`].

use std::collections::BTreeMap;
use std::io;
use std::net::IpAddr;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

pub trait Host: Send + Sync {
    /// The bytes of a file.
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// True if `path` names an existing regular file.
    fn is_file(&self, path: &Path) -> bool;
    /// The canonical form of an existing path (symlinks resolved), used to recognise the
    /// same file reached by different names.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// The working directory.
    fn current_dir(&self) -> PathBuf;
    /// The bytes of the file `path` if its last component is not a symbolic link (for
    /// example with `O_NOFOLLOW`), or `None`: a link, or any error. The loader reads a
    /// main file this way from its canonical directory, so that when this gives bytes,
    /// `path` is the file's canonical path without resolving it; on `None` it
    /// canonicalises and uses [`Host::read_file`] (which reports any error). The default
    /// gives `None`.
    fn read_file_unless_link(&self, path: &Path) -> Option<Vec<u8>> {
        let _ = path;
        None
    }
    /// The names in directory `dir` (files and directories), for "did you mean" when an
    /// import is not found; never used to decide what is compiled. The default lists
    /// nothing.
    fn list_dir(&self, dir: &Path) -> Vec<String> {
        let _ = dir;
        Vec::new()
    }
    /// An environment variable.
    fn env_var(&self, name: &str) -> Option<String>;
    /// IPv4 and IPv6 addresses of a host name (the system resolver).
    fn lookup_host(&self, name: &str) -> io::Result<Vec<IpAddr>>;
    /// The host name of an address (reverse lookup).
    fn lookup_addr(&self, addr: IpAddr) -> io::Result<String>;
    /// The time now.
    fn now(&self) -> SystemTime;

    /// Why no configuration may import or `read()` the file at `path` (canonical: links
    /// resolved), if it must not: it holds this run's own credentials (a password or key file, the gpg home) or
    /// another process's memory or environment (`/proc/PID/...`). A delegated file could
    /// otherwise print the KeePass master password into an output. The reason completes
    /// "`FILE` ...". The default protects nothing.
    fn protected(&self, path: &Path) -> Option<String> {
        let _ = path;
        None
    }

    /// Verifies a clearsigned file (`gpg --clearsign`, reference §5.3) whose bytes are
    /// `data`: gives the signed content and who signed it. A file that does not verify (a
    /// bad signature, not a clean clearsigned file, no gpg) is an error; signatures that are
    /// good but not usable (unknown, expired or revoked key) are `problems`. Which signers
    /// are allowed is decided by the evaluator. The default refuses (no signature support).
    fn verify_signed(&self, path: &Path, data: &[u8]) -> Result<Signed, HostError> {
        let _ = (path, data);
        Err(HostError::new(
            "this build of cf2 cannot check signatures (it has no gpg support)",
        ))
    }

    /// Opens a KeePass database (reference §5.2) whose bytes are `data`, with the password
    /// or key file this host knows for it. The default refuses (no KeePass support).
    fn open_keepass(&self, path: &Path, data: &[u8]) -> Result<KeePassGroup, HostError> {
        let _ = (path, data);
        Err(HostError::new(
            "this build of cf2 cannot open KeePass databases",
        ))
    }
}

/// Why a host could not verify a signature or open a database: a sentence that completes
/// "cannot import `FILE`: ...", and optionally a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    pub message: String,
    pub hint: Option<String>,
}

impl HostError {
    pub fn new(message: impl Into<String>) -> HostError {
        HostError {
            message: message.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> HostError {
        self.hint = Some(hint.into());
        self
    }
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HostError {}

/// A verified clearsigned file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The signed text (what the signature covers, without the armour): what is compiled.
    /// Each line of the file before it is an empty line, so that lines keep their numbers.
    pub content: Vec<u8>,
    /// The lines (1-based, of the file and of `content` alike) that `content` has without
    /// the `- ` of their dash-escape: columns in messages count it again
    /// ([`cf2_syntax::SourceFile::with_dash_escaped`]).
    pub dash_escaped: Vec<u32>,
    /// The keys of the good signatures.
    pub signers: Vec<Signer>,
    /// Signatures that verified but cannot be trusted, as sentences ("the signature was
    /// made by the expired key ABCD…", "the key 1234… is not in the keyring").
    pub problems: Vec<String>,
}

/// The key of a good signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// The primary key's fingerprint (hex, upper case).
    pub fingerprint: String,
    /// Its valid (not revoked, not expired) user ids, `Name <user@org>`.
    pub uids: Vec<String>,
}

/// A KeePass group: its entries and sub-groups, in the database's order. The root group
/// stands for the whole database (its name is not used); the recycle bin is left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeePassGroup {
    pub name: String,
    pub entries: Vec<KeePassEntry>,
    pub groups: Vec<KeePassGroup>,
}

/// A KeePass entry: its fields (`Title`, `UserName`, `Password`, `URL`, `Notes`, then the
/// custom fields), names as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeePassEntry {
    pub fields: Vec<(String, String)>,
}

impl KeePassEntry {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Implements [`Host`] for a wrapper by asking the host `$inner` gives for every method,
/// the ones with defaults too: a wrapper that let a default answer instead would quietly
/// lose its host's gpg, KeePass or protected files.
macro_rules! forward_host {
    ($this:ident => $inner:expr) => {
        fn read_file(&$this, path: &Path) -> io::Result<Vec<u8>> {
            $inner.read_file(path)
        }
        fn is_file(&$this, path: &Path) -> bool {
            $inner.is_file(path)
        }
        fn canonicalize(&$this, path: &Path) -> io::Result<PathBuf> {
            $inner.canonicalize(path)
        }
        fn current_dir(&$this) -> PathBuf {
            $inner.current_dir()
        }
        fn read_file_unless_link(&$this, path: &Path) -> Option<Vec<u8>> {
            $inner.read_file_unless_link(path)
        }
        fn list_dir(&$this, dir: &Path) -> Vec<String> {
            $inner.list_dir(dir)
        }
        fn env_var(&$this, name: &str) -> Option<String> {
            $inner.env_var(name)
        }
        fn lookup_host(&$this, name: &str) -> io::Result<Vec<IpAddr>> {
            $inner.lookup_host(name)
        }
        fn lookup_addr(&$this, addr: IpAddr) -> io::Result<String> {
            $inner.lookup_addr(addr)
        }
        fn now(&$this) -> SystemTime {
            $inner.now()
        }
        fn protected(&$this, path: &Path) -> Option<String> {
            $inner.protected(path)
        }
        fn verify_signed(&$this, path: &Path, data: &[u8]) -> Result<Signed, HostError> {
            $inner.verify_signed(path, data)
        }
        fn open_keepass(&$this, path: &Path, data: &[u8]) -> Result<KeePassGroup, HostError> {
            $inner.open_keepass(path, data)
        }
    };
}

/// A host shared with the program that made it: `Compiler::with_host(files.clone())` keeps
/// a handle, so the program can still reach it (with [`RwLock`], change its files between
/// compiles).
impl<H: Host + ?Sized> Host for std::sync::Arc<H> {
    forward_host!(self => (**self));
}

/// A host that can change between compiles (an editor's unsaved files in a
/// [`MemoryHost`]): each call takes the read lock for itself, so a compile that runs while
/// the host is changed may see files from before and after the change. A lock poisoned by
/// a panic elsewhere is used as it is.
impl<H: Host> Host for std::sync::RwLock<H> {
    forward_host!(self => self.read().unwrap_or_else(std::sync::PoisonError::into_inner));
}

/// Lexically normalises a path: removes `.` and folds `..` (no file-system access).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// An in-memory host for tests and embedders: files, environment, resolver answers and a
/// fixed clock.
#[derive(Debug, Clone)]
pub struct MemoryHost {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub hosts: BTreeMap<String, Vec<IpAddr>>,
    pub now: SystemTime,
}

impl Default for MemoryHost {
    fn default() -> Self {
        MemoryHost {
            files: BTreeMap::new(),
            cwd: PathBuf::from("/work"),
            env: BTreeMap::new(),
            hosts: BTreeMap::new(),
            now: SystemTime::UNIX_EPOCH,
        }
    }
}

impl MemoryHost {
    pub fn new() -> MemoryHost {
        MemoryHost::default()
    }

    fn absolute(&self, path: &Path) -> PathBuf {
        normalize(&self.cwd.join(path))
    }

    /// Adds a file (a relative path is taken relative to the working directory).
    pub fn with_file(mut self, path: impl AsRef<Path>, contents: impl Into<Vec<u8>>) -> Self {
        let p = self.absolute(path.as_ref());
        self.files.insert(p, contents.into());
        self
    }

    pub fn add_file(&mut self, path: impl AsRef<Path>, contents: impl Into<Vec<u8>>) {
        let p = self.absolute(path.as_ref());
        self.files.insert(p, contents.into());
    }

    pub fn with_env(mut self, name: &str, value: &str) -> Self {
        self.env.insert(name.to_string(), value.to_string());
        self
    }
}

impl Host for MemoryHost {
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(&self.absolute(path))
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(&self.absolute(path))
    }

    /// A file, or a directory (one that holds a file); there are no links.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let p = self.absolute(path);
        let exists = self
            .files
            .range(p.clone()..)
            .next()
            .is_some_and(|(f, _)| f.starts_with(&p));
        if exists {
            Ok(p)
        } else {
            Err(io::Error::new(io::ErrorKind::NotFound, "no such file"))
        }
    }

    fn current_dir(&self) -> PathBuf {
        self.cwd.clone()
    }

    fn read_file_unless_link(&self, path: &Path) -> Option<Vec<u8>> {
        self.read_file(path).ok()
    }

    fn list_dir(&self, dir: &Path) -> Vec<String> {
        let dir = self.absolute(dir);
        let mut names: Vec<String> = Vec::new();
        for file in self.files.keys().filter(|f| f.starts_with(&dir)) {
            let name = file
                .strip_prefix(&dir)
                .ok()
                .and_then(|rest| rest.components().next())
                .and_then(|c| c.as_os_str().to_str());
            if let Some(name) = name {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        names
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    fn lookup_host(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        self.hosts
            .get(name)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "unknown host"))
    }

    fn lookup_addr(&self, addr: IpAddr) -> io::Result<String> {
        self.hosts
            .iter()
            .find(|(_, addrs)| addrs.contains(&addr))
            .map(|(name, _)| name.clone())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "unknown address"))
    }

    fn now(&self) -> SystemTime {
        self.now
    }
}
