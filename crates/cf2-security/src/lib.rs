//! The security features of cf2 (reference §5; docs/security.md) that need the outside
//! world, behind the evaluator's [`cf2_eval::Host`] hooks:
//!
//! - **signed imports**: a clearsigned file is read strictly ([`clearsign`]) and verified by
//!   the real `gpg` ([`gpg`]), which also clearsigns outputs (`cf2 compile -S`);
//! - **KeePass databases**: opened with the `keepass` crate, with a password from a file, the
//!   terminal, the environment or the keychain ([`keepass`]).
//!
//! Which signers are allowed, how a database becomes a block, and what is secret are
//! language rules, and live in the evaluator (`cf2_eval`); this crate only talks to gpg and
//! reads databases. [`Security`] holds the settings and caches what it has opened, and is
//! shared by every compile of a run (it is `Sync`).

pub mod clearsign;
pub mod gpg;
pub mod keepass;
#[doc(hidden)]
pub mod testing;

use cf2_eval::host::{HostError, KeePassGroup, Signed};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How to run gpg (`--gpghome`, `--gpguser`, `--gpgpass`).
#[derive(Clone)]
pub struct Gpg {
    /// The gpg program (default `gpg`, found on `PATH`).
    pub program: PathBuf,
    /// The gpg home directory holding the keyring; `None`: gpg's default (`$GNUPGHOME`,
    /// else `~/.gnupg`).
    pub home: Option<PathBuf>,
    /// The key that signs outputs (`--local-user`); `None`: gpg's default key.
    pub user: Option<String>,
    /// The pass phrase of that key, given to gpg on its standard input.
    pub passphrase: Option<String>,
    /// The file the pass phrase was read from (`--gpgpass-file`), so that no configuration
    /// may read it.
    pub passphrase_file: Option<PathBuf>,
}

impl Default for Gpg {
    fn default() -> Self {
        Gpg {
            program: PathBuf::from("gpg"),
            home: None,
            user: None,
            passphrase: None,
            passphrase_file: None,
        }
    }
}

impl fmt::Debug for Gpg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpg")
            .field("program", &self.program)
            .field("home", &self.home)
            .field("user", &self.user)
            .field("passphrase", &self.passphrase.as_ref().map(|_| "‹hidden›"))
            .finish()
    }
}

/// Where KeePass passwords come from (see [`keepass`] for the order).
#[derive(Clone, Debug)]
pub struct KeePass {
    /// `-P`: ask on the terminal.
    pub prompt: bool,
    /// `--keepass-password-file`: a file whose first line is the password.
    pub password_file: Option<PathBuf>,
    /// `--keepass-keyfile`: a key file, with or instead of a password.
    pub keyfile: Option<PathBuf>,
    /// Read `CF2_KEEPASS_PASSWORD`.
    pub use_env: bool,
    /// Look in the platform's keychain.
    pub use_keychain: bool,
}

impl Default for KeePass {
    fn default() -> Self {
        KeePass {
            prompt: false,
            password_file: None,
            keyfile: None,
            use_env: true,
            use_keychain: true,
        }
    }
}

/// The security settings of a run.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub gpg: Gpg,
    pub keepass: KeePass,
}

/// gpg and KeePass for the compiles of one run.
pub struct Security {
    settings: Settings,
    /// Databases opened (or failed to open) so far, by path: each is opened, and its
    /// password asked for, once.
    databases: Mutex<HashMap<PathBuf, Result<KeePassGroup, HostError>>>,
    /// The run's credentials, canonical where they exist: no configuration may import or
    /// read them ([`Security::protects`]). Resolved on first use: most compiles import
    /// nothing new after the first host, and a `readlink` per component is not free.
    credentials: OnceLock<Credentials>,
}

/// The run's credentials: by path, and, for those that have other names (hard links), by
/// file identity.
struct Credentials {
    paths: Vec<Credential>,
    /// (device, inode, what it holds) of each credential file with more than one link:
    /// another name for the same file is not caught by its path. Usually empty, and then
    /// nothing more is asked of the file system.
    linked: Vec<(u64, u64, &'static str)>,
}

/// A file or directory holding a credential of the run, and what it holds.
#[derive(Debug)]
struct Credential {
    path: PathBuf,
    /// A directory protects everything under it.
    is_dir: bool,
    /// Completes "`FILE` ...".
    holds: &'static str,
}

impl fmt::Debug for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Security")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Default for Security {
    fn default() -> Self {
        Security::new(Settings::default())
    }
}

impl Security {
    pub fn new(settings: Settings) -> Security {
        Security {
            settings,
            databases: Mutex::new(HashMap::new()),
            credentials: OnceLock::new(),
        }
    }

    /// Why a configuration may not import or read the file at `canonical` (links
    /// resolved), if it holds one of this run's credentials: the KeePass password or key
    /// file, the gpg pass phrase file, or anything in the gpg home (its private keys).
    pub fn protects(&self, canonical: &Path) -> Option<&'static str> {
        let credentials = self.credentials.get_or_init(|| {
            let paths = credentials(&self.settings);
            let linked = linked_files(&paths);
            Credentials { paths, linked }
        });
        let by_path = credentials.paths.iter().find(|c| {
            if c.is_dir {
                canonical.starts_with(&c.path)
            } else {
                canonical == c.path
            }
        });
        if let Some(c) = by_path {
            return Some(c.holds);
        }
        if credentials.linked.is_empty() {
            return None;
        }
        let id = file_id(canonical)?;
        credentials
            .linked
            .iter()
            .find(|(dev, ino, _)| (*dev, *ino) == id)
            .map(|(_, _, holds)| *holds)
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Verifies a clearsigned file: its signed text, the keys of its good signatures and
    /// its unusable ones. A file that is not one clean clearsigned message, a bad
    /// signature, or no gpg is an error.
    pub fn verify_signed(&self, data: &[u8]) -> Result<Signed, HostError> {
        self.settings.gpg.verify(data)
    }

    /// Opens the KeePass database at `path` (bytes `data`), once per run.
    pub fn open_keepass(&self, path: &Path, data: &[u8]) -> Result<KeePassGroup, HostError> {
        let mut dbs = self.databases.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = dbs.get(path) {
            return r.clone();
        }
        let r = self.settings.keepass.open(path, data);
        dbs.insert(path.to_path_buf(), r.clone());
        r
    }

    /// Clearsigns an output with `--gpguser` (or gpg's default key).
    pub fn clearsign(&self, text: &[u8]) -> Result<Vec<u8>, HostError> {
        self.settings.gpg.clearsign(text)
    }
}

/// The credentials `settings` name, canonical where they exist. The gpg home is the one gpg
/// uses: `--gpghome`, else `$GNUPGHOME`, else `~/.gnupg`.
fn credentials(settings: &Settings) -> Vec<Credential> {
    let file = |path: &Option<PathBuf>, holds| {
        path.as_ref().map(|p| Credential {
            path: canonical(p),
            is_dir: false,
            holds,
        })
    };
    let gpg_home = settings
        .gpg
        .home
        .clone()
        .or_else(|| std::env::var_os("GNUPGHOME").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".gnupg")))
        .map(|home| Credential {
            path: canonical(&home),
            is_dir: true,
            holds: "is in the gpg home directory, which holds this run's keys",
        });
    [
        file(
            &settings.keepass.password_file,
            "holds this run's KeePass password (--keepass-password-file)",
        ),
        file(
            &settings.keepass.keyfile,
            "is this run's KeePass key file (--keepass-keyfile)",
        ),
        file(
            &settings.gpg.passphrase_file,
            "holds the pass phrase of this run's gpg key (--gpgpass-file)",
        ),
        gpg_home,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The device and inode of a regular file with more than one name (hard link).
#[cfg(unix)]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.is_file() && meta.nlink() > 1).then(|| (meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// The credential files that have other names: the files given, and the files of the
/// directories (the gpg home, a few levels and a few thousand entries deep).
fn linked_files(credentials: &[Credential]) -> Vec<(u64, u64, &'static str)> {
    let mut linked = Vec::new();
    for c in credentials {
        if !c.is_dir {
            if let Some((dev, ino)) = file_id(&c.path) {
                linked.push((dev, ino, c.holds));
            }
            continue;
        }
        let mut dirs = vec![(c.path.clone(), 0)];
        let mut seen = 0usize;
        while let Some((dir, depth)) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > 5_000 {
                    break;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() && depth < 4 {
                    dirs.push((entry.path(), depth + 1));
                } else if kind.is_file() {
                    if let Some((dev, ino)) = file_id(&entry.path()) {
                        linked.push((dev, ino, c.holds));
                    }
                }
            }
        }
    }
    linked
}

/// `path` with links resolved, or made absolute when it does not exist (yet).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}
