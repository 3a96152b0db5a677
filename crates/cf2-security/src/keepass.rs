//! Opening KeePass databases (KDBX 3.1 and 4, through the `keepass` crate) with a password
//! from, in this order:
//!
//! 1. `--keepass-password-file FILE`: the file's first line;
//! 2. `-P`: typed on the terminal, without echo (asked once per database);
//! 3. the environment variable `CF2_KEEPASS_PASSWORD` (for unattended runs; every process
//!    of the same user can read a process's environment on most systems, so prefer the file);
//! 4. the platform's keychain: on macOS the login keychain (`security find-generic-password
//!    -s cf2.keepassx -a NAME -w`), elsewhere the Secret Service through `secret-tool lookup
//!    service cf2.keepassx account NAME` where it is installed; NAME is the database's file
//!    name without directory or extension (reference §5.2).
//!
//! A key file (`--keepass-keyfile FILE`) is used with the password, or alone when there is
//! no password. A database is opened once per run, however many compiles import it.

use crate::KeePass;
use cf2_eval::host::{HostError, KeePassEntry, KeePassGroup};
use keepass::db::GroupRef;
use keepass::error::{CryptographyError, DatabaseKeyError, DatabaseOpenError};
use keepass::{Database, DatabaseKey};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable holding a KeePass password for unattended runs.
pub const PASSWORD_ENV: &str = "CF2_KEEPASS_PASSWORD";
/// The keychain service name (reference §5.2).
pub const KEYCHAIN_SERVICE: &str = "cf2.keepassx";

/// Where the password used came from (for messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    File,
    Prompt,
    Environment,
    Keychain,
    KeyFileOnly,
}

impl Source {
    fn describe(self, k: &KeePass) -> String {
        match self {
            Source::File => match &k.password_file {
                Some(f) => format!("the password in `{}`", f.display()),
                None => "the password file".into(),
            },
            Source::Prompt => "the password typed".into(),
            Source::Environment => format!("the password in ${PASSWORD_ENV}"),
            Source::Keychain => format!("the password in the keychain ({KEYCHAIN_SERVICE})"),
            Source::KeyFileOnly => "the key file alone".into(),
        }
    }
}

impl KeePass {
    /// The password for the database at `path`, and where it came from.
    fn password(&self, path: &Path, display: &str) -> Result<Option<(String, Source)>, HostError> {
        if let Some(file) = &self.password_file {
            let text = std::fs::read_to_string(file).map_err(|e| {
                HostError::new(format!(
                    "cannot read the password file `{}`: {e}",
                    file.display()
                ))
            })?;
            let line = text.lines().next().unwrap_or("").to_string();
            return Ok(Some((line, Source::File)));
        }
        if self.prompt {
            let pw = rpassword::prompt_password(format!(
                "Password for the KeePass database {display}: "
            ))
            .map_err(|e| {
                HostError::new(format!(
                    "cannot ask for its password: no terminal to ask on ({e})"
                ))
                .hint(format!(
                    "without a terminal, give --keepass-password-file FILE or set {PASSWORD_ENV}"
                ))
            })?;
            return Ok(Some((pw, Source::Prompt)));
        }
        if self.use_env {
            if let Ok(pw) = std::env::var(PASSWORD_ENV) {
                return Ok(Some((pw, Source::Environment)));
            }
        }
        if self.use_keychain {
            if let Some(pw) = keychain_password(&account_name(path)) {
                return Ok(Some((pw, Source::Keychain)));
            }
        }
        Ok(None)
    }

    /// Opens the database whose bytes are `data`.
    pub fn open(&self, path: &Path, data: &[u8]) -> Result<KeePassGroup, HostError> {
        let display = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let password = self.password(path, &display)?;
        let mut key = DatabaseKey::new();
        let source = match &password {
            Some((pw, source)) => {
                key = key.with_password(pw);
                *source
            }
            None => Source::KeyFileOnly,
        };
        if let Some(kf) = &self.keyfile {
            let mut f = std::fs::File::open(kf).map_err(|e| {
                HostError::new(format!("cannot read the key file `{}`: {e}", kf.display()))
            })?;
            key = key.with_keyfile(&mut f).map_err(|e| {
                HostError::new(format!("cannot read the key file `{}`: {e}", kf.display()))
            })?;
        } else if password.is_none() {
            let account = account_name(path);
            return Err(HostError::new("no password is given for it").hint(format!(
                "give -P to type it, --keepass-password-file FILE, or set {PASSWORD_ENV}; or store it in the keychain (service `{KEYCHAIN_SERVICE}`, account `{account}`)"
            )));
        }
        let db = Database::parse(data, key).map_err(|e| self.open_error(e, source))?;
        Ok(convert(&db))
    }

    fn open_error(&self, e: DatabaseOpenError, source: Source) -> HostError {
        match e {
            // KDBX 3.1 has no check of the key before its payload is decrypted: a wrong key
            // shows as the decrypted payload's invalid padding, which a damaged file that
            // still parsed this far would hardly give.
            DatabaseOpenError::Key(DatabaseKeyError::IncorrectKey)
            | DatabaseOpenError::Cryptography(CryptographyError::InvalidPadding(_)) => {
                let with = match (&self.keyfile, source) {
                    (Some(kf), Source::KeyFileOnly) => format!("the key file `{}`", kf.display()),
                    (Some(kf), s) => {
                        format!("{} and the key file `{}`", s.describe(self), kf.display())
                    }
                    (None, s) => s.describe(self),
                };
                HostError::new(format!("the password or key file is wrong (tried {with})"))
            }
            DatabaseOpenError::Key(e) => HostError::new(format!("the key cannot be used: {e}")),
            DatabaseOpenError::UnsupportedVersion => {
                HostError::new("its format is not supported (cf2 reads KDBX 3.1 and KDBX 4)")
            }
            other => HostError::new(format!(
                "the file is damaged or is not a KeePass database ({other})"
            )),
        }
    }
}

/// The keychain account of a database: its file name without directory or extension.
pub fn account_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The password stored in the platform's keychain for `account`, if any.
pub fn keychain_password(account: &str) -> Option<String> {
    let mut cmd = if cfg!(target_os = "macos") {
        let mut c = Command::new("security");
        c.args([
            "find-generic-password",
            "-s",
            KEYCHAIN_SERVICE,
            "-a",
            account,
            "-w",
        ]);
        c
    } else {
        let mut c = Command::new("secret-tool");
        c.args(["lookup", "service", KEYCHAIN_SERVICE, "account", account]);
        c
    };
    let out = run_quietly(&mut cmd, Duration::from_secs(20))?;
    let text = String::from_utf8(out).ok()?;
    let pw = text.strip_suffix('\n').unwrap_or(&text).to_string();
    (!pw.is_empty()).then_some(pw)
}

/// Runs a command with no input; its standard output if it succeeded in time.
fn run_quietly(cmd: &mut Command, limit: Duration) -> Option<Vec<u8>> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let out = reader.join().ok()?;
                return status.success().then_some(out);
            }
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => return None,
        }
    }
}

/// The database as plain data: the root group's entries and groups, without the recycle bin.
fn convert(db: &Database) -> KeePassGroup {
    let bin = db.recycle_bin().map(|g| g.id());
    group(&db.root(), bin)
}

fn group(g: &GroupRef<'_>, bin: Option<keepass::db::GroupId>) -> KeePassGroup {
    KeePassGroup {
        name: g.name.clone(),
        entries: g
            .entries()
            .map(|e| {
                let mut fields: Vec<(String, String)> = e
                    .fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.get().to_string()))
                    .collect();
                fields.sort();
                KeePassEntry { fields }
            })
            .collect(),
        groups: g
            .groups()
            .filter(|sub| Some(sub.id()) != bin)
            .map(|sub| group(&sub, bin))
            .collect(),
    }
}
