//! The security options of `cf2 compile` (docs/security.md) against the real gpg, each test
//! with a throwaway keyring: `-S` clearsigns the outputs, `--gpghome` / `--gpguser` /
//! `--gpgpass` / `--gpgpass-file`, signed imports through the command line, and KeePass
//! passwords from a file or the environment.

use cf2_security::testing::Keyring;
use cf2_security::{Gpg, Security, Settings};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn cf2(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cf2"));
    c.arg("compile")
        .args(args)
        .current_dir(dir)
        .env_remove("CF2PATH")
        .env_remove("CF2PROJECTS")
        .env_remove("CF2_KEEPASS_PASSWORD")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("cf2 runs")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        out(o),
        err(o)
    );
}

fn verifier(ring: &Keyring) -> Security {
    Security::new(Settings {
        gpg: Gpg {
            home: Some(ring.home().to_path_buf()),
            ..Gpg::default()
        },
        ..Settings::default()
    })
}

fn home(ring: &Keyring) -> String {
    ring.home().display().to_string()
}

#[test]
fn dash_s_clearsigns_every_output_with_gpguser() {
    let ring = Keyring::new();
    let _other = ring.generate("Other", "other@org", None);
    let signer = ring.generate("Release", "release@org", Some("release pass phrase"));
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("main.cf2"), "A => 1\nB.C => '-x'\n").unwrap();
    fs::write(dir.path().join("pass"), "release pass phrase\n").unwrap();
    let h = home(&ring);
    let o = cf2(
        dir.path(),
        &[
            "main.cf2",
            "-S",
            "--gpghome",
            &h,
            "--gpguser",
            "release@org",
            "--gpgpass-file",
            "pass",
            "-o",
            "all.json",
            "-o",
            "b.cf2:B",
            "-o",
            "-",
        ],
        &[],
    );
    exit(&o, 0);
    let v = verifier(&ring);
    for (data, want) in [
        (fs::read(dir.path().join("all.json")).unwrap(), "\"A\": 1"),
        (fs::read(dir.path().join("b.cf2")).unwrap(), "C => '-x'"),
        (o.stdout.clone(), "A => 1"),
    ] {
        assert!(data.starts_with(b"-----BEGIN PGP SIGNED MESSAGE-----"));
        let got = v.verify_signed(&data).unwrap();
        assert_eq!(got.signers[0].fingerprint, signer.fingerprint);
        assert!(String::from_utf8(got.content).unwrap().contains(want));
    }
}

#[test]
fn a_signing_failure_writes_nothing() {
    let ring = Keyring::new();
    ring.generate("Release", "release@org", Some("right"));
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("main.cf2"), "A => 1\n").unwrap();
    let h = home(&ring);
    let o = cf2(
        dir.path(),
        &[
            "main.cf2",
            "-S",
            "--gpghome",
            &h,
            "--gpguser",
            "release@org",
            "--gpgpass",
            "wrong",
            "-o",
            "x.json",
        ],
        &[],
    );
    exit(&o, 1);
    assert!(
        err(&o).contains("cannot sign the output `x.json`: the pass phrase is wrong"),
        "{}",
        err(&o)
    );
    assert!(!dir.path().join("x.json").exists());
    let o = cf2(
        dir.path(),
        &["main.cf2", "-S", "--gpghome", &h, "--gpguser", "nobody@org"],
        &[],
    );
    exit(&o, 1);
    assert_eq!(out(&o), "");
    assert!(
        err(&o).contains("no usable secret key for `nobody@org`"),
        "{}",
        err(&o)
    );
}

#[test]
fn batch_outputs_are_signed_too() {
    let ring = Keyring::new();
    let signer = ring.generate("Release", "release@org", None);
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.cf2"), "A => 1\n").unwrap();
    fs::write(dir.path().join("b.cf2"), "B => 2\n").unwrap();
    let h = home(&ring);
    let o = cf2(
        dir.path(),
        &["a.cf2", "b.cf2", "--out-dir", "out", "-S", "--gpghome", &h],
        &[],
    );
    exit(&o, 0);
    for f in ["out/a.json", "out/b.json"] {
        let data = fs::read(dir.path().join(f)).unwrap();
        let got = verifier(&ring).verify_signed(&data).unwrap();
        assert_eq!(got.signers[0].fingerprint, signer.fingerprint, "{f}");
    }
    // A host that does not compile and one whose output cannot be signed are told apart.
    fs::write(dir.path().join("c.cf2"), "C => $Nope\n").unwrap();
    let o = cf2(
        dir.path(),
        &[
            "a.cf2",
            "c.cf2",
            "--out-dir",
            "out2",
            "-S",
            "--gpghome",
            &h,
            "--gpguser",
            "nobody@org",
        ],
        &[],
    );
    exit(&o, 1);
    let e = err(&o);
    assert!(
        e.contains("a.cf2: error: cannot sign the output: gpg has no usable secret key"),
        "{e}"
    );
    assert!(
        e.contains("cf2: 1 of 2 configurations failed to compile: c.cf2"),
        "{e}"
    );
    assert!(
        e.contains("cf2: 1 of 2 outputs could not be written: a.cf2"),
        "{e}"
    );
}

#[test]
fn signed_imports_through_the_command_line() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f.cf2"), ring.clearsign(&alice, "A => 1\n")).unwrap();
    fs::write(
        dir.path().join("signed.cf2"),
        ring.clearsign(&alice, "B => 1\n"),
    )
    .unwrap();
    fs::write(dir.path().join("main.cf2"), "X => import(f, 'alice@org')\n").unwrap();
    let h = home(&ring);
    let o = cf2(
        dir.path(),
        &["main.cf2", "--gpghome", &h, "-o", "-.json"],
        &[],
    );
    exit(&o, 0);
    assert_eq!(out(&o).replace([' ', '\n'], ""), r#"{"X":{"A":1}}"#);
    fs::write(
        dir.path().join("main.cf2"),
        "X => import(f, 'bob@org')\nY => 2\n",
    )
    .unwrap();
    let o = cf2(
        dir.path(),
        &["main.cf2", "--gpghome", &h, "-o", "-.json"],
        &[],
    );
    exit(&o, 1);
    assert_eq!(
        out(&o),
        "",
        "a failed signature check prints no configuration"
    );
    assert!(
        err(&o).contains(
            "main.cf2:1:16: error: cannot import `f.cf2`: it is signed by `Alice <alice@org>`"
        ),
        "{}",
        err(&o)
    );
    // A signed main file changed after signing: compiled, not imported, so said so.
    let signed = ring
        .clearsign(&alice, "A => 1\n")
        .replace("A => 1", "A => 2");
    fs::write(dir.path().join("tampered.cf2"), signed).unwrap();
    let o = cf2(dir.path(), &["tampered.cf2", "--gpghome", &h], &[]);
    exit(&o, 1);
    assert!(
        err(&o)
            .contains("error: cannot compile `tampered.cf2`: the signature by `Alice <alice@org>`"),
        "{}",
        err(&o)
    );
    // Another keyring does not know Alice.
    let other = Keyring::new();
    let oh = home(&other);
    fs::write(dir.path().join("main.cf2"), "X => import(f, 'alice@org')\n").unwrap();
    let o = cf2(dir.path(), &["main.cf2", "--gpghome", &oh], &[]);
    exit(&o, 1);
    assert!(
        err(&o).contains(&format!("which is not in the keyring in `{oh}`")),
        "{}",
        err(&o)
    );
    // A signed main file whose key the keyring does not know: placed at its first line, as
    // every diagnostic has a place.
    let o = cf2(dir.path(), &["signed.cf2", "--gpghome", &oh], &[]);
    exit(&o, 1);
    assert!(
        err(&o).contains(
            "signed.cf2:1:1: error: cannot compile `signed.cf2`: it is signed with the key"
        ),
        "{}",
        err(&o)
    );
    // Without --gpghome, the keyring gpg itself uses is named ($GNUPGHOME here).
    let o = cf2(dir.path(), &["main.cf2"], &[("GNUPGHOME", oh.as_str())]);
    exit(&o, 1);
    assert!(
        err(&o).contains(&format!(
            "which is not in the keyring in `{oh}` ($GNUPGHOME)"
        )),
        "{}",
        err(&o)
    );
}

#[test]
fn keepass_passwords_from_a_file_or_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/kdbx");
    for f in ["site-kdbx4.kdbx", "keyfile.kdbx", "keyfile.keyx"] {
        fs::copy(fixtures.join(f), dir.path().join(f)).unwrap();
    }
    fs::write(dir.path().join("pw"), "correct horse battery staple\n").unwrap();
    fs::write(dir.path().join("kpw"), "with a key file\n").unwrap();
    fs::write(
        dir.path().join("main.cf2"),
        "private P => import('site-kdbx4')\nPw => $P.fred.Password\n",
    )
    .unwrap();
    let o = cf2(
        dir.path(),
        &[
            "main.cf2",
            "--no-keychain",
            "--keepass-password-file",
            "pw",
            "-Deval",
        ],
        &[],
    );
    exit(&o, 0);
    assert_eq!(out(&o), "Pw => 'hunter2-Secret!'\n");
    assert!(!err(&o).contains("hunter2"), "{}", err(&o));
    assert!(
        err(&o).contains("eval: Pw = ‹secret from site-kdbx4.kdbx:fred.Password›"),
        "{}",
        err(&o)
    );
    let o = cf2(
        dir.path(),
        &["main.cf2", "--no-keychain"],
        &[("CF2_KEEPASS_PASSWORD", "correct horse battery staple")],
    );
    exit(&o, 0);
    let o = cf2(dir.path(), &["main.cf2", "--no-keychain"], &[]);
    exit(&o, 1);
    assert!(
        err(&o).contains("no password is given for it"),
        "{}",
        err(&o)
    );
    fs::write(
        dir.path().join("main.cf2"),
        "private P => import('keyfile.kdbx')\nPw => $P.deploy.Password\n",
    )
    .unwrap();
    let o = cf2(
        dir.path(),
        &[
            "main.cf2",
            "--no-keychain",
            "--keepass-password-file",
            "kpw",
            "--keepass-keyfile",
            "keyfile.keyx",
        ],
        &[],
    );
    exit(&o, 0);
    assert_eq!(out(&o), "Pw => key-and-password\n");
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `-P` asks on the terminal, without echo; without a terminal it is a clear error. (Uses
/// util-linux's `script` for a pseudo-terminal and `setsid` to have none.)
#[cfg(target_os = "linux")]
#[test]
fn dash_p_asks_on_the_terminal() {
    if !have("script") || !have("setsid") {
        eprintln!("skipped: needs `script` and `setsid` (util-linux)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/kdbx");
    fs::copy(
        fixtures.join("site-kdbx4.kdbx"),
        dir.path().join("site.kdbx"),
    )
    .unwrap();
    fs::write(
        dir.path().join("main.cf2"),
        "private P => import(site)\nPw => $P.fred.Password\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_cf2");
    let command = format!("{bin} compile main.cf2 -P --no-keychain");
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir.path())
        .env_remove("CF2_KEEPASS_PASSWORD")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        stdin.write_all(b"correct horse battery staple\n").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let text = out(&o);
    assert!(
        text.contains("Password for the KeePass database site.kdbx: "),
        "{text}"
    );
    assert!(text.contains("Pw => 'hunter2-Secret!'"), "{text}");
    assert!(
        !text.contains("correct horse"),
        "the password was echoed: {text}"
    );

    let o = Command::new("setsid")
        .args([bin, "compile", "main.cf2", "-P", "--no-keychain"])
        .current_dir(dir.path())
        .env_remove("CF2_KEEPASS_PASSWORD")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    exit(&o, 1);
    assert!(
        err(&o).contains("cannot ask for its password: no terminal to ask on"),
        "{}",
        err(&o)
    );
    assert!(err(&o).contains("--keepass-password-file"), "{}", err(&o));
}

/// A credential file is refused under any name: a hard link to the KeePass password file,
/// or to a file of the gpg home, is the same file (no path comparison sees it).
#[test]
fn credentials_are_refused_through_hard_links() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    let gnupg = root.join("gnupg");
    fs::create_dir_all(gnupg.join("private-keys-v1.d")).expect("the gpg home");
    fs::write(gnupg.join("private-keys-v1.d/k.key"), "secret key\n").expect("a key");
    fs::write(root.join("pw.txt"), "correct horse\n").expect("the password file");
    fs::hard_link(root.join("pw.txt"), root.join("notes.txt")).expect("a hard link");
    fs::hard_link(gnupg.join("private-keys-v1.d/k.key"), root.join("k.txt")).expect("a link");
    fs::write(root.join("plain.txt"), "plain\n").expect("a plain file");
    let gnupg = gnupg.display().to_string();
    let env = [("GNUPGHOME", gnupg.as_str())];
    let read = |file: &str| {
        fs::write(root.join("main.cf2"), format!("Motd => read('{file}')\n")).expect("main");
        let args = [
            "main.cf2",
            "--keepass-password-file",
            "pw.txt",
            "-o",
            "-.json",
        ];
        cf2(root, &args, &env)
    };
    for (file, holds) in [
        ("notes.txt", "holds this run's KeePass password"),
        ("k.txt", "is in the gpg home directory"),
    ] {
        let o = read(file);
        exit(&o, 1);
        assert!(
            err(&o).contains(&format!("`{file}` {holds}")),
            "{}",
            err(&o)
        );
    }
    // An ordinary file is read as before.
    let o = read("plain.txt");
    exit(&o, 0);
    assert!(out(&o).contains("plain"), "{}", out(&o));
}
