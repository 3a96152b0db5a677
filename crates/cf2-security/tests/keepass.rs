//! Opening the KeePass fixtures of `tests/fixtures/kdbx` (made by
//! `tests/fixtures/make-kdbx.py` with pykeepass): KDBX 4 and 3.1, key files, and the errors.

use cf2_eval::host::{KeePassEntry, KeePassGroup};
use cf2_security::{KeePass, Security, Settings};
use std::path::{Path, PathBuf};

const SITE_PASSWORD: &str = "correct horse battery staple";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/kdbx")
        .join(name)
}

/// A temporary file holding `text` (a password file).
fn password_file(text: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), text).unwrap();
    f
}

fn open_with(name: &str, keepass: KeePass) -> Result<KeePassGroup, cf2_eval::host::HostError> {
    let s = Security::new(Settings {
        keepass,
        ..Settings::default()
    });
    let path = fixture(name);
    let data = std::fs::read(&path).unwrap();
    s.open_keepass(&path, &data)
}

/// Settings that read nothing from the environment or the keychain.
fn isolated() -> KeePass {
    KeePass {
        use_env: false,
        use_keychain: false,
        ..KeePass::default()
    }
}

fn with_password(pw: &str) -> (KeePass, tempfile::NamedTempFile) {
    let f = password_file(&format!("{pw}\n"));
    (
        KeePass {
            password_file: Some(f.path().to_path_buf()),
            ..isolated()
        },
        f,
    )
}

fn entry<'g>(g: &'g KeePassGroup, title: &str) -> &'g KeePassEntry {
    g.entries
        .iter()
        .find(|e| e.field("Title") == Some(title))
        .unwrap_or_else(|| panic!("no entry {title}"))
}

fn check_site(root: &KeePassGroup) {
    let titles: Vec<&str> = root
        .entries
        .iter()
        .filter_map(|e| e.field("Title"))
        .collect();
    assert_eq!(titles, vec!["fred", "entry-1"]);
    let fred = entry(root, "fred");
    assert_eq!(fred.field("Password"), Some("hunter2-Secret!"));
    assert_eq!(fred.field("UserName"), Some("fred"));
    assert_eq!(fred.field("URL"), Some("https://intranet.example.org"));
    assert_eq!(fred.field("Notes"), Some("Fred's account"));
    assert_eq!(fred.field("MyCustom"), Some("my value"));
    let groups: Vec<&str> = root.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(groups, vec!["Servers"], "the recycle bin is left out");
    let servers = &root.groups[0];
    assert_eq!(entry(servers, "db1").field("Password"), Some("pg-pass-42"));
    let lab = &servers.groups[0];
    assert_eq!(lab.name, "Lab 2");
    let router = entry(lab, "router");
    assert_eq!(router.field("API Key"), Some("k-123"));
}

#[test]
fn kdbx4_with_a_password() {
    let (k, _f) = with_password(SITE_PASSWORD);
    check_site(&open_with("site-kdbx4.kdbx", k).unwrap());
}

#[test]
fn kdbx31_with_a_password() {
    let (k, _f) = with_password(SITE_PASSWORD);
    check_site(&open_with("site-kdbx31.kdbx", k).unwrap());
}

#[test]
fn a_key_file_with_a_password() {
    let (mut k, _f) = with_password("with a key file");
    k.keyfile = Some(fixture("keyfile.keyx"));
    let root = open_with("keyfile.kdbx", k).unwrap();
    assert_eq!(
        entry(&root, "deploy").field("Password"),
        Some("key-and-password")
    );
}

#[test]
fn a_key_file_alone() {
    let k = KeePass {
        keyfile: Some(fixture("keyfile.keyx")),
        ..isolated()
    };
    let root = open_with("keyonly.kdbx", k).unwrap();
    assert_eq!(
        entry(&root, "backup").field("Password"),
        Some("key-file-only")
    );
}

#[test]
fn a_missing_key_file_is_wrong() {
    let (k, _f) = with_password("with a key file");
    let e = open_with("keyfile.kdbx", k).unwrap_err();
    assert!(e.message.contains("password or key file is wrong"), "{e}");
    let (mut k, _f) = with_password("with a key file");
    k.keyfile = Some("/nonexistent/key.keyx".into());
    let e = open_with("keyfile.kdbx", k).unwrap_err();
    assert!(e.message.contains("cannot read the key file"), "{e}");
}

#[test]
fn a_wrong_password_says_where_it_came_from() {
    let (k, f) = with_password("not the password");
    let e = open_with("site-kdbx4.kdbx", k).unwrap_err();
    assert!(e.message.contains("password or key file is wrong"), "{e}");
    assert!(e.message.contains(&f.path().display().to_string()), "{e}");
}

#[test]
fn no_password_is_an_error_with_a_hint() {
    let e = open_with("site-kdbx4.kdbx", isolated()).unwrap_err();
    assert_eq!(e.message, "no password is given for it");
    let hint = e.hint.unwrap();
    assert!(hint.contains("-P"), "{hint}");
    assert!(hint.contains("CF2_KEEPASS_PASSWORD"), "{hint}");
    assert!(hint.contains("account `site-kdbx4`"), "{hint}");
}

#[test]
fn damaged_files_and_other_files() {
    let (k, _f) = with_password(SITE_PASSWORD);
    let e = open_with("corrupt.kdbx", k.clone()).unwrap_err();
    assert!(e.message.contains("damaged"), "{e}");
    let e = open_with("notkdbx.kdbx", k).unwrap_err();
    assert!(e.message.contains("not a KeePass database"), "{e}");
}

#[test]
fn the_password_file_holds_its_first_line() {
    let f = password_file(&format!("{SITE_PASSWORD}\r\nsecond line\n"));
    let k = KeePass {
        password_file: Some(f.path().to_path_buf()),
        ..isolated()
    };
    check_site(&open_with("site-kdbx4.kdbx", k).unwrap());
}

#[test]
fn a_database_is_opened_once() {
    let (k, f) = with_password(SITE_PASSWORD);
    let s = Security::new(Settings {
        keepass: k,
        ..Settings::default()
    });
    let path = fixture("site-kdbx4.kdbx");
    let data = std::fs::read(&path).unwrap();
    s.open_keepass(&path, &data).unwrap();
    // The password file is gone: the second import uses what was opened.
    drop(f);
    check_site(&s.open_keepass(&path, &data).unwrap());
}

#[test]
fn the_keychain_account_is_the_bare_database_name() {
    assert_eq!(
        cf2_security::keepass::account_name(Path::new("/etc/cf2/mydb.kdbx")),
        "mydb"
    );
}
