//! The one interface through which the file system, the environment, the clock and the
//! network resolver reach the compiler. The evaluator never touches `std::fs` or
//! `std::env` itself, so it is pure given a `Host`, and tests run it in memory
//! ([`MemoryHost`]). The real implementation lives in the `cf2` crate (`OsHost`).

use std::collections::BTreeMap;
use std::io;
use std::net::IpAddr;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

pub trait Host: Sync {
    /// The bytes of a file.
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// True if `path` names an existing regular file.
    fn is_file(&self, path: &Path) -> bool;
    /// The canonical form of an existing path (symlinks resolved), used to recognise the
    /// same file reached by different names.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// The working directory.
    fn current_dir(&self) -> PathBuf;
    /// An environment variable.
    fn env_var(&self, name: &str) -> Option<String>;
    /// IPv4 and IPv6 addresses of a host name (the system resolver).
    fn lookup_host(&self, name: &str) -> io::Result<Vec<IpAddr>>;
    /// The host name of an address (reverse lookup).
    fn lookup_addr(&self, addr: IpAddr) -> io::Result<String>;
    /// The time now.
    fn now(&self) -> SystemTime;
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

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let p = self.absolute(path);
        if self.files.contains_key(&p) {
            Ok(p)
        } else {
            Err(io::Error::new(io::ErrorKind::NotFound, "no such file"))
        }
    }

    fn current_dir(&self) -> PathBuf {
        self.cwd.clone()
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
