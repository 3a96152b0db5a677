//! Throwaway gpg keyrings for tests (not part of the API): each [`Keyring`] is a fresh gpg
//! home in a temporary directory, with keys generated in batch mode (with or without a
//! pass phrase, already expired, revoked), and files signed by the real `gpg`. Dropping it
//! stops its gpg-agent and removes the directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// True if `gpg` can be run.
pub fn gpg_available() -> bool {
    Command::new("gpg")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Panics with a clear message when gpg is missing (`./scripts/test.sh` installs it).
pub fn require_gpg() {
    assert!(
        gpg_available(),
        "these tests need GnuPG (`gpg` on PATH); ./scripts/test.sh installs it (apt-get install gnupg)"
    );
}

/// A gpg home of its own.
pub struct Keyring {
    dir: tempfile::TempDir,
}

/// A generated key.
#[derive(Debug, Clone)]
pub struct Key {
    pub email: String,
    pub fingerprint: String,
    pub passphrase: Option<String>,
}

impl Keyring {
    /// A new, empty keyring.
    pub fn new() -> Keyring {
        require_gpg();
        // Short paths: gpg-agent's socket path must stay short.
        let dir = tempfile::Builder::new()
            .prefix("cf2gpg")
            .tempdir_in(short_tmp())
            .expect("a temporary gpg home");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700));
        }
        Keyring { dir }
    }

    pub fn home(&self) -> &Path {
        self.dir.path()
    }

    /// A gpg command on this keyring.
    pub fn gpg(&self) -> Command {
        let mut c = Command::new("gpg");
        c.arg("--homedir")
            .arg(self.home())
            .arg("--batch")
            .arg("--no-tty")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, mut c: Command, what: &str) -> Vec<u8> {
        let out = c
            .output()
            .unwrap_or_else(|e| panic!("{what}: cannot run gpg: {e}"));
        assert!(
            out.status.success(),
            "{what}: gpg failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Generates an ed25519 key for `Name <email>` (with a pass phrase if given).
    pub fn generate(&self, name: &str, email: &str, passphrase: Option<&str>) -> Key {
        self.generate_at(name, email, passphrase, None, "0")
    }

    /// Generates a key that expired `days_ago` days ago (made, with a one-day lifetime,
    /// the day before that).
    pub fn generate_expired(&self, name: &str, email: &str, days_ago: u64) -> Key {
        let then = now() - (days_ago + 1) * 86_400;
        self.generate_at(name, email, None, Some(then), "1d")
    }

    fn generate_at(
        &self,
        name: &str,
        email: &str,
        passphrase: Option<&str>,
        at: Option<u64>,
        expire: &str,
    ) -> Key {
        let (before, after) = match passphrase {
            Some(p) => (String::new(), format!("Passphrase: {p}\n")),
            None => ("%no-protection\n".to_string(), String::new()),
        };
        let batch = format!(
            "{before}Key-Type: EDDSA\nKey-Curve: ed25519\nName-Real: {name}\nName-Email: {email}\nExpire-Date: {expire}\n{after}%commit\n"
        );
        let file = self.home().join(format!("{email}.batch"));
        std::fs::write(&file, batch).expect("writing the batch file");
        let mut c = self.gpg();
        if let Some(t) = at {
            c.arg("--faked-system-time").arg(t.to_string());
        }
        c.arg("--pinentry-mode").arg("loopback");
        c.arg("--gen-key").arg(&file);
        self.run(c, "generating a key");
        let _ = std::fs::remove_file(&file);
        Key {
            email: email.to_string(),
            fingerprint: self.fingerprint(email),
            passphrase: passphrase.map(str::to_string),
        }
    }

    /// The fingerprint of the key with user id `email`.
    pub fn fingerprint(&self, email: &str) -> String {
        let mut c = self.gpg();
        c.args(["--with-colons", "--list-keys", email]);
        let out = String::from_utf8_lossy(&self.run(c, "listing keys")).into_owned();
        out.lines()
            .find_map(|l| l.strip_prefix("fpr:"))
            .and_then(|l| l.split(':').find(|f| !f.is_empty()))
            .unwrap_or_default()
            .to_string()
    }

    /// Clearsigns `text` with `key` (as `gpg --clearsign` does).
    pub fn clearsign(&self, key: &Key, text: &str) -> String {
        self.clearsign_at(key, text, None)
    }

    /// Clearsigns at a past time (seconds since the epoch).
    pub fn clearsign_at(&self, key: &Key, text: &str, at: Option<u64>) -> String {
        let file = self.home().join("to-sign");
        std::fs::write(&file, text).expect("writing the file to sign");
        let mut c = self.gpg();
        if let Some(t) = at {
            c.arg("--faked-system-time").arg(t.to_string());
        }
        c.args(["--yes", "--local-user", &key.fingerprint]);
        if let Some(p) = &key.passphrase {
            c.args(["--pinentry-mode", "loopback", "--passphrase", p]);
        }
        c.args(["--output", "-", "--clearsign"]).arg(&file);
        let out = self.run(c, "signing");
        String::from_utf8(out).expect("gpg output is text")
    }

    /// Signs `text` as `gpg --sign` does without `--armor`: a binary OpenPGP message, not a
    /// clearsigned text.
    pub fn sign_binary(&self, key: &Key, text: &str) -> Vec<u8> {
        let file = self.home().join("to-sign");
        std::fs::write(&file, text).expect("writing the file to sign");
        let mut c = self.gpg();
        c.args(["--yes", "--local-user", &key.fingerprint]);
        c.args(["--output", "-", "--sign"]).arg(&file);
        self.run(c, "signing")
    }

    /// Clearsigns `text` with several keys at once (one message, several signatures).
    pub fn clearsign_by(&self, keys: &[&Key], text: &str) -> String {
        let file = self.home().join("to-sign");
        std::fs::write(&file, text).expect("writing the file to sign");
        let mut c = self.gpg();
        c.arg("--yes");
        for k in keys {
            c.args(["--local-user", &k.fingerprint]);
        }
        c.args(["--output", "-", "--clearsign"]).arg(&file);
        String::from_utf8(self.run(c, "signing")).expect("gpg output is text")
    }

    /// Revokes `key` (with the revocation certificate gpg made when it generated it).
    pub fn revoke(&self, key: &Key) {
        let cert = self
            .home()
            .join("openpgp-revocs.d")
            .join(format!("{}.rev", key.fingerprint));
        let text = std::fs::read_to_string(&cert).expect("the revocation certificate");
        // gpg guards the certificate against accidental import with a leading `:`.
        let text = text.replace(
            ":-----BEGIN PGP PUBLIC KEY BLOCK-----",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----",
        );
        let file = self.home().join("revoke.asc");
        std::fs::write(&file, text).expect("writing the certificate");
        let mut c = self.gpg();
        c.arg("--import").arg(&file);
        self.run(c, "revoking a key");
    }

    /// Exports a public key (to give it to another keyring).
    pub fn export(&self, key: &Key) -> Vec<u8> {
        let mut c = self.gpg();
        c.args(["--armor", "--export", &key.fingerprint]);
        self.run(c, "exporting a key")
    }

    /// Imports a public key exported from another keyring.
    pub fn import(&self, armored: &[u8]) {
        let file = self.home().join("import.asc");
        std::fs::write(&file, armored).expect("writing the key");
        let mut c = self.gpg();
        c.arg("--import").arg(&file);
        self.run(c, "importing a key");
    }

    /// A path inside the keyring's directory (for files a test writes).
    pub fn path(&self, name: &str) -> PathBuf {
        self.home().join(name)
    }
}

impl Default for Keyring {
    fn default() -> Self {
        Keyring::new()
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        // Stop the gpg-agent this home started (signing starts one).
        let _ = Command::new("gpgconf")
            .arg("--homedir")
            .arg(self.home())
            .args(["--kill", "all"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn short_tmp() -> PathBuf {
    let tmp = PathBuf::from("/tmp");
    if tmp.is_dir() {
        tmp
    } else {
        std::env::temp_dir()
    }
}
