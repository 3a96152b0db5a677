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
use std::sync::Mutex;

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
}

impl Default for Gpg {
    fn default() -> Self {
        Gpg {
            program: PathBuf::from("gpg"),
            home: None,
            user: None,
            passphrase: None,
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
        }
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
