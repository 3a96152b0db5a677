//! Running the real `gpg`, as git and apt do: cf2 reads only gpg's machine-readable status
//! lines (`--status-fd`, lines starting `[GNUPG:] `, documented in GnuPG's `doc/DETAILS`)
//! and its `--with-colons` key listings, never the messages meant for people.
//!
//! Verification (`gpg --verify`) is given the very bytes cf2 read and parsed, on standard
//! input, so there is no window in which the file could change between the check and the
//! compile. gpg never fetches keys from the network (`--no-auto-key-retrieve`) and does not
//! consult the web of trust (`--trust-model always`): the keyring (`--gpghome`) is the list
//! of trusted keys, as apt's keyrings are.

use crate::Gpg;
use cf2_eval::host::{HostError, Signed, Signer};
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// One line of `--status-fd` output: the keyword and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub keyword: String,
    pub args: Vec<String>,
}

/// The status lines in gpg's output; everything else is ignored.
pub fn status_lines(out: &[u8]) -> Vec<Status> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| l.strip_prefix("[GNUPG:] "))
        .map(|l| {
            let mut words = l.split(' ').map(str::to_string);
            Status {
                keyword: words.next().unwrap_or_default(),
                args: words.collect(),
            }
        })
        .collect()
}

/// What gpg said about one signature.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// `GOODSIG`, `BADSIG`, `EXPSIG`, `EXPKEYSIG`, `REVKEYSIG` or `ERRSIG` (empty if none).
    pub kind: String,
    /// The key id of the signing key.
    pub key_id: String,
    /// The user id gpg named with the verdict (percent-escaped text).
    pub uid: String,
    /// From `VALIDSIG`: the primary key's fingerprint.
    pub primary: Option<String>,
    /// `NO_PUBKEY` was reported for this signature.
    pub no_pubkey: bool,
    /// The `ERRSIG` return code (4: unknown algorithm, 9: missing public key).
    pub error_code: Option<String>,
}

/// Splits status lines into one verdict per signature (`NEWSIG` starts a new one).
pub fn verdicts(statuses: &[Status]) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = Vec::new();
    let mut cur: Option<Verdict> = None;
    for s in statuses {
        let arg = |i: usize| s.args.get(i).cloned().unwrap_or_default();
        match s.keyword.as_str() {
            "NEWSIG" => {
                if let Some(v) = cur.take() {
                    out.push(v);
                }
                cur = Some(Verdict::default());
            }
            "GOODSIG" | "BADSIG" | "EXPSIG" | "EXPKEYSIG" | "REVKEYSIG" | "ERRSIG" => {
                let v = cur.get_or_insert_with(Verdict::default);
                if v.kind.is_empty() || v.kind == "GOODSIG" {
                    v.kind = s.keyword.clone();
                }
                v.key_id = arg(0);
                if s.keyword == "ERRSIG" {
                    v.error_code = Some(arg(5));
                } else {
                    v.uid = s.args.get(1..).map(|a| a.join(" ")).unwrap_or_default();
                }
            }
            "VALIDSIG" => {
                let v = cur.get_or_insert_with(Verdict::default);
                // The primary key's fingerprint is the tenth argument (gpg ≥ 1.4.7);
                // otherwise the signing key is the primary key.
                v.primary = Some(s.args.get(9).cloned().unwrap_or_else(|| arg(0)));
            }
            "NO_PUBKEY" => {
                let v = cur.get_or_insert_with(Verdict::default);
                v.no_pubkey = true;
                if v.key_id.is_empty() {
                    v.key_id = arg(0);
                }
            }
            _ => {}
        }
    }
    if let Some(v) = cur {
        out.push(v);
    }
    out.retain(|v| !v.kind.is_empty() || v.no_pubkey);
    out
}

/// `%XX` escapes of status-line text undone.
fn unpercent(s: &str) -> String {
    unescape(s, '%', false)
}

/// `\xXX` escapes of `--with-colons` fields undone.
fn unbackslash(s: &str) -> String {
    unescape(s, '\\', true)
}

fn unescape(s: &str, lead: char, x: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let skip = if x { 2 } else { 1 };
    while i < bytes.len() {
        if bytes[i] == lead as u8 && (!x || bytes.get(i + 1) == Some(&b'x')) {
            if let Some(hex) = s.get(i + skip..i + skip + 2) {
                if let Ok(b) = u8::from_str_radix(hex, 16) {
                    out.push(b);
                    i += skip + 2;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Gpg {
    fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.arg("--batch").arg("--no-tty");
        if let Some(home) = &self.home {
            c.arg("--homedir").arg(home);
        }
        // gpg needs nothing of cf2's secrets.
        c.env_remove(crate::keepass::PASSWORD_ENV);
        c
    }

    fn keyring_name(&self) -> String {
        match &self.home {
            Some(h) => format!("the keyring in `{}`", h.display()),
            // Where gpg itself looks: $GNUPGHOME, else ~/.gnupg.
            None => match (std::env::var_os("GNUPGHOME"), std::env::var_os("HOME")) {
                (Some(h), _) => format!("the keyring in `{}` ($GNUPGHOME)", h.to_string_lossy()),
                (None, Some(home)) => format!(
                    "the keyring in `{}`",
                    std::path::Path::new(&home).join(".gnupg").display()
                ),
                (None, None) => "the keyring (~/.gnupg)".to_string(),
            },
        }
    }

    fn check_home(&self) -> Result<(), HostError> {
        if let Some(home) = &self.home {
            if !home.is_dir() {
                return Err(HostError::new(format!(
                    "the gpg home `{}` is not a directory",
                    home.display()
                ))
                .hint("--gpghome names the directory holding the keyring (like ~/.gnupg)"));
            }
        } else if let Some(home) = std::env::var_os("GNUPGHOME").filter(|h| !h.is_empty()) {
            // Where gpg will look; a missing one would otherwise read as "a key not in the
            // keyring".
            if !std::path::Path::new(&home).is_dir() {
                return Err(HostError::new(format!(
                    "the gpg home `{}` ($GNUPGHOME) is not a directory",
                    home.to_string_lossy()
                ))
                .hint("$GNUPGHOME names the directory holding the keyring (like ~/.gnupg)"));
            }
        }
        Ok(())
    }

    /// Runs gpg with `input` on standard input; its standard output and error.
    fn run(&self, mut cmd: Command, input: &[u8]) -> Result<(Vec<u8>, Vec<u8>), HostError> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                HostError::new(format!("cannot run `{}`: {e}", self.program.display()))
                    .hint("install GnuPG (on Debian and Ubuntu: apt-get install gnupg)")
            })?;
        let mut stdin = child.stdin.take();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(&input);
            }
            drop(stdin);
        });
        let mut stderr = child.stderr.take();
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(e) = stderr.as_mut() {
                let _ = e.read_to_end(&mut buf);
            }
            buf
        });
        let mut out = Vec::new();
        if let Some(mut o) = child.stdout.take() {
            let _ = o.read_to_end(&mut out);
        }
        let _ = writer.join();
        let err = err_reader.join().unwrap_or_default();
        child
            .wait()
            .map_err(|e| HostError::new(format!("gpg did not finish: {e}")))?;
        Ok((out, err))
    }

    /// Verifies clearsigned `data` (see [`crate::Security::verify_signed`]).
    pub fn verify(&self, data: &[u8]) -> Result<Signed, HostError> {
        let signed = crate::clearsign::signed_text(data).map_err(|e| {
            HostError::new(format!("it is not a clean clearsigned file: {e}"))
                .hint("sign it with `gpg --clearsign FILE`, and do not edit the signed file")
        })?;
        self.check_home()?;
        let mut cmd = self.command();
        cmd.args([
            "--status-fd",
            "1",
            "--no-auto-key-retrieve",
            "--trust-model",
            "always",
            "--verify",
            "-",
        ]);
        let (out, err) = self.run(cmd, data)?;
        let verdicts = verdicts(&status_lines(&out));
        if verdicts.is_empty() {
            let said = last_line(&err);
            let mut e = HostError::new("gpg found no signature it could check in it");
            if !said.is_empty() {
                e = e.hint(format!("gpg said: {said}"));
            }
            return Err(e);
        }
        if let Some(bad) = verdicts.iter().find(|v| v.kind == "BADSIG") {
            return Err(HostError::new(format!(
                "the signature by {} is BAD: the file was changed after it was signed",
                who(bad)
            ))
            .hint("get the file again from its author, or ask them to sign it again"));
        }
        let mut signers = Vec::new();
        let mut problems = Vec::new();
        for v in &verdicts {
            match v.kind.as_str() {
                "GOODSIG" => match &v.primary {
                    Some(fpr) => signers.push(Signer {
                        fingerprint: fpr.to_ascii_uppercase(),
                        uids: self.uids(fpr)?,
                    }),
                    None => problems.push(format!(
                        "gpg did not report the key of the good signature by {}",
                        who(v)
                    )),
                },
                "EXPKEYSIG" => problems.push(format!(
                    "it was signed with the key of {}, which has expired",
                    who(v)
                )),
                "REVKEYSIG" => problems.push(format!(
                    "it was signed with the key of {}, which has been revoked",
                    who(v)
                )),
                "EXPSIG" => problems.push(format!("the signature by {} has expired", who(v))),
                _ if v.no_pubkey || v.error_code.as_deref() == Some("9") => problems.push(format!(
                    "it is signed with the key {}, which is not in {}",
                    v.key_id,
                    self.keyring_name()
                )),
                _ => problems.push(format!(
                    "gpg cannot check the signature made with the key {} (error code {})",
                    v.key_id,
                    v.error_code.as_deref().unwrap_or("?")
                )),
            }
        }
        Ok(Signed {
            content: signed.text,
            dash_escaped: signed.dash_escaped,
            signers,
            problems,
        })
    }

    /// The valid user ids of the key with fingerprint `fpr`.
    pub fn uids(&self, fpr: &str) -> Result<Vec<String>, HostError> {
        Ok(self
            .key_listing(fpr)?
            .map(|listing| colon_uids(&listing))
            .unwrap_or_default())
    }

    /// gpg's `--with-colons` listing of the key with fingerprint `fpr` (`None` for
    /// something that is not a fingerprint: it never reaches gpg's command line).
    fn key_listing(&self, fpr: &str) -> Result<Option<String>, HostError> {
        if fpr.is_empty() || !fpr.chars().all(|c| c.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let mut cmd = self.command();
        cmd.args([
            "--with-colons",
            "--fixed-list-mode",
            "--trust-model",
            "always",
            "--list-keys",
            "--",
            fpr,
        ]);
        let (out, _) = self.run(cmd, b"")?;
        Ok(Some(String::from_utf8_lossy(&out).into_owned()))
    }

    /// Clearsigns `text` with `--gpguser` (or gpg's default key), the pass phrase given to
    /// gpg on its standard input when there is one.
    pub fn clearsign(&self, text: &[u8]) -> Result<Vec<u8>, HostError> {
        self.check_home()?;
        // The text goes through a private temporary file, because standard input carries
        // the pass phrase. Private: the output may hold secrets, and its reader may have
        // compiled into a directory only they can enter (docs/security.md §6) — a folder
        // only the user can enter (0700) and a file only they can read (0600), whatever the
        // umask.
        let mut builder = tempfile::Builder::new();
        builder.prefix("cf2-sign-");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o700));
        }
        let dir = builder
            .tempdir()
            .map_err(|e| HostError::new(format!("cannot make a temporary folder: {e}")))?;
        let file = dir.path().join("output");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options
            .open(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text))
            .map_err(|e| HostError::new(format!("cannot write a temporary file: {e}")))?;
        let mut cmd = self.command();
        cmd.args(["--status-fd", "2", "--yes"]);
        if let Some(user) = &self.user {
            cmd.arg("--local-user").arg(user);
        }
        let input = match &self.passphrase {
            Some(p) => {
                cmd.args(["--pinentry-mode", "loopback", "--passphrase-fd", "0"]);
                format!("{p}\n").into_bytes()
            }
            None => Vec::new(),
        };
        cmd.args(["--output", "-", "--clearsign"]).arg(&file);
        let (out, err) = self.run(cmd, &input)?;
        let statuses = status_lines(&err);
        if statuses.iter().any(|s| s.keyword == "SIG_CREATED") && !out.is_empty() {
            return Ok(out);
        }
        let user = self
            .user
            .as_deref()
            .map(|u| format!("`{u}`"))
            .unwrap_or_else(|| "the default key".to_string());
        let has = |k: &str| statuses.iter().any(|s| s.keyword == k);
        let reason = if has("INV_SGNR") || has("NO_SGNR") {
            // gpg says "unusable secret key" (INV_SGNR 9) for an expired or revoked key
            // too; its listing tells which.
            match self.unusable_because(&statuses) {
                Some(KeyState::Expired) => format!("the key of {user} has expired"),
                Some(KeyState::Revoked) => format!("the key of {user} has been revoked"),
                None => format!(
                    "gpg has no usable secret key for {user} in {}",
                    self.keyring_name()
                ),
            }
        } else {
            sign_failure(&statuses, &user, self.passphrase.is_some())
                .unwrap_or_else(|| format!("gpg could not sign ({})", last_line(&err)))
        };
        Err(HostError::new(reason))
    }

    /// Whether the key gpg considered (`KEY_CONSIDERED FPR FLAGS`, flag 2: every subkey
    /// expired or revoked) is expired or revoked, by the validity of its `pub` line.
    fn unusable_because(&self, statuses: &[Status]) -> Option<KeyState> {
        let fpr = statuses.iter().find_map(|s| {
            let flags: u32 = s.args.get(1)?.parse().ok()?;
            (s.keyword == "KEY_CONSIDERED" && flags & 2 != 0).then(|| s.args.first())?
        })?;
        key_state(&self.key_listing(fpr).ok()??)
    }
}

/// Why a key gpg considered for signing could not be used, when its listing says.
#[derive(Debug, PartialEq)]
enum KeyState {
    Expired,
    Revoked,
}

/// The state of the first `pub` key of a `--with-colons` listing, if expired or revoked.
fn key_state(listing: &str) -> Option<KeyState> {
    let validity = listing
        .lines()
        .find_map(|l| l.strip_prefix("pub:"))?
        .split(':')
        .next()?;
    match validity {
        "e" => Some(KeyState::Expired),
        "r" => Some(KeyState::Revoked),
        _ => None,
    }
}

/// The reason a signing failed, from gpg's status lines, when they give one: a wrong or
/// missing pass phrase, an expired or revoked key. `asked` is whether cf2 gave gpg a pass
/// phrase.
fn sign_failure(statuses: &[Status], user: &str, asked: bool) -> Option<String> {
    let has = |k: &str| statuses.iter().any(|s| s.keyword == k);
    Some(if has("BAD_PASSPHRASE") || failed_with(statuses, "11") {
        "the pass phrase is wrong".to_string()
    } else if has("MISSING_PASSPHRASE") || failed_with(statuses, "67108949") {
        "the key needs a pass phrase: give --gpgpass-file FILE (or --gpgpass)".to_string()
    } else if !asked && failed_with(statuses, "32870") {
        // ENOTTY: gpg-agent tried to ask for the pass phrase, and there is no terminal.
        format!(
            "the key of {user} needs a pass phrase, and gpg has no terminal to ask for it on: \
             give --gpgpass-file FILE (or --gpgpass)"
        )
    } else if !asked && failed_with(statuses, "99") {
        "asking for the pass phrase was cancelled".to_string()
    } else if has("KEYEXPIRED") {
        format!("the key of {user} has expired")
    } else if has("KEYREVOKED") {
        format!("the key of {user} has been revoked")
    } else {
        return None;
    })
}

/// `FAILURE`/`ERROR` status with an error code ending in `code` (gpg-error codes are
/// source << 24 | code).
fn failed_with(statuses: &[Status], code: &str) -> bool {
    statuses.iter().any(|s| {
        (s.keyword == "FAILURE" || s.keyword == "ERROR")
            && s.args.get(1).is_some_and(|c| {
                c == code
                    || c.parse::<u64>()
                        .ok()
                        .zip(code.parse::<u64>().ok())
                        .is_some_and(|(a, b)| a & 0xFFFF == b & 0xFFFF)
            })
    })
}

/// The user ids of a `--with-colons` listing that are neither revoked nor expired.
pub fn colon_uids(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            if f.first() != Some(&"uid") {
                return None;
            }
            let validity = f.get(1).copied().unwrap_or("");
            if validity == "r" || validity == "e" {
                return None;
            }
            f.get(9).map(|u| unbackslash(u)).filter(|u| !u.is_empty())
        })
        .collect()
}

fn who(v: &Verdict) -> String {
    let uid = unpercent(&v.uid);
    if uid.is_empty() {
        format!("key {}", v.key_id)
    } else {
        format!("`{uid}` (key {})", v.key_id)
    }
}

fn last_line(err: &[u8]) -> String {
    String::from_utf8_lossy(err)
        .lines()
        .rfind(|l| !l.trim().is_empty() && !l.starts_with("[GNUPG:]"))
        .unwrap_or("")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Status> {
        status_lines(text.as_bytes())
    }

    #[test]
    fn good_bad_and_unknown_signatures() {
        let good = "gpg: human text\n[GNUPG:] NEWSIG alice@org\n[GNUPG:] GOODSIG 4E1527DE7A45A783 Alice Example <alice@org>\n[GNUPG:] VALIDSIG 69DE 2026-11-21 1795242047 0 4 0 22 8 01 69DEB56F\n";
        let v = verdicts(&lines(good));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].kind, "GOODSIG");
        assert_eq!(v[0].uid, "Alice Example <alice@org>");
        assert_eq!(v[0].primary.as_deref(), Some("69DEB56F"));

        let unknown = "[GNUPG:] NEWSIG\n[GNUPG:] ERRSIG 4E1527DE7A45A783 22 8 01 1795242047 9 69DE\n[GNUPG:] NO_PUBKEY 4E1527DE7A45A783\n";
        let v = verdicts(&lines(unknown));
        assert_eq!(v[0].kind, "ERRSIG");
        assert!(v[0].no_pubkey);
        assert_eq!(v[0].error_code.as_deref(), Some("9"));

        let two = "[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG A a\n[GNUPG:] VALIDSIG F1 x\n[GNUPG:] NEWSIG\n[GNUPG:] EXPKEYSIG B b\n[GNUPG:] VALIDSIG F2 x\n";
        let v = verdicts(&lines(two));
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].kind, "EXPKEYSIG");
        assert_eq!(v[1].primary.as_deref(), Some("F2"));

        assert!(verdicts(&lines("[GNUPG:] NODATA 1\n[GNUPG:] NODATA 2\n")).is_empty());
        // Human text that looks like a status line is not one.
        assert!(verdicts(&lines("gpg: [GNUPG:] GOODSIG X y\n")).is_empty());
    }

    #[test]
    fn colon_listing_uids() {
        let listing = "tru:o:1:1:1:3:1:5\npub:-:255:22:4E15:1795242047:::u:::scaSCA::::\nfpr:::::::::69DE:\nuid:-::::1::C182::Alice Second <alice2@org>::::::::::0:\nuid:u::::1::EF45::Alice Example <alice@org>::::::::::0:\nuid:r::::::14AA::Mallory <boss@org>::::::::::0:\nuid:-::::1::AB::Colon\\x3a Name <c@org>::::\n";
        assert_eq!(
            colon_uids(listing),
            vec![
                "Alice Second <alice2@org>",
                "Alice Example <alice@org>",
                "Colon: Name <c@org>"
            ]
        );
    }

    #[test]
    fn signing_failures_from_gpg_status_lines() {
        // A key with a pass phrase, none given, and no terminal (gpg 2.2, recorded).
        let no_tty = "[GNUPG:] KEY_CONSIDERED 06FD 2\n[GNUPG:] BEGIN_SIGNING H8\n[GNUPG:] PINENTRY_LAUNCHED 1396 curses 1.2.1 - xterm - - 0/0 -\ngpg: signing failed: Inappropriate ioctl for device\n[GNUPG:] FAILURE sign 83918950\n";
        let reason = sign_failure(&lines(no_tty), "`pass@org`", false).unwrap();
        assert!(reason.contains("needs a pass phrase"), "{reason}");
        assert!(reason.contains("--gpgpass-file"), "{reason}");
        // Given one, that code is not read as a missing pass phrase.
        assert_eq!(sign_failure(&lines(no_tty), "`pass@org`", true), None);
        let cancelled = "[GNUPG:] FAILURE sign 83886179\n";
        assert!(sign_failure(&lines(cancelled), "k", false)
            .unwrap()
            .contains("cancelled"));
        let wrong = "[GNUPG:] BAD_PASSPHRASE 1234\n[GNUPG:] FAILURE sign 11\n";
        assert_eq!(
            sign_failure(&lines(wrong), "k", true).as_deref(),
            Some("the pass phrase is wrong")
        );
    }

    #[test]
    fn key_states_from_a_colon_listing() {
        let expired = "tru::1:1\npub:e:255:22:F9A4:1700000000:1700086400::u:::sc::::\nuid:e::::::AB::Old <old@org>::::\n";
        let revoked = "pub:r:255:22:F640:1700000000:::u:::sc::::\n";
        let fine = "pub:u:255:22:F640:1700000000:::u:::sc::::\n";
        assert_eq!(key_state(expired), Some(KeyState::Expired));
        assert_eq!(key_state(revoked), Some(KeyState::Revoked));
        assert_eq!(key_state(fine), None);
        assert_eq!(key_state(""), None);
    }

    #[test]
    fn escapes() {
        assert_eq!(unpercent("J%C3%B6rg <j@org>"), "Jörg <j@org>");
        assert_eq!(unpercent("100%"), "100%");
        assert_eq!(unbackslash("a\\x3ab\\x5c"), "a:b\\");
    }
}
