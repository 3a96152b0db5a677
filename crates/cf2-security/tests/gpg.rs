//! Signature checks and signing against the real gpg, each test with a throwaway keyring
//! (keys generated in batch mode, with and without a pass phrase).

use cf2_security::testing::Keyring;
use cf2_security::{Gpg, Security, Settings};

const TEXT: &str = "A => 1\n-- a line that starts with a dash\nB => 'x'\n";

fn security(ring: &Keyring) -> Security {
    Security::new(Settings {
        gpg: Gpg {
            home: Some(ring.home().to_path_buf()),
            ..Gpg::default()
        },
        ..Settings::default()
    })
}

fn content(signed: &cf2_eval::host::Signed) -> String {
    String::from_utf8(signed.content.clone())
        .unwrap()
        .trim_start_matches('\n')
        .to_string()
}

#[test]
fn a_good_signature_gives_the_signed_text_and_the_signer() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice Example", "alice@org", None);
    let signed = ring.clearsign(&alice, TEXT);
    let got = security(&ring).verify_signed(signed.as_bytes()).unwrap();
    assert_eq!(content(&got), TEXT);
    assert!(got.problems.is_empty(), "{:?}", got.problems);
    assert_eq!(got.signers.len(), 1);
    assert_eq!(got.signers[0].fingerprint, alice.fingerprint);
    assert_eq!(got.signers[0].uids, vec!["Alice Example <alice@org>"]);
    // The text starts on the line it starts on in the file.
    let first = String::from_utf8(got.content.clone()).unwrap();
    let line = signed.lines().position(|l| l == "A => 1").unwrap();
    assert_eq!(first.lines().position(|l| l == "A => 1"), Some(line));
}

#[test]
fn a_key_with_a_pass_phrase_signs_too() {
    let ring = Keyring::new();
    let bob = ring.generate("Bob", "bob@org", Some("bob's pass phrase"));
    let signed = ring.clearsign(&bob, TEXT);
    let got = security(&ring).verify_signed(signed.as_bytes()).unwrap();
    assert_eq!(got.signers[0].fingerprint, bob.fingerprint);
}

#[test]
fn a_tampered_file_is_refused() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let signed = ring.clearsign(&alice, TEXT).replace("A => 1", "A => 2");
    let e = security(&ring)
        .verify_signed(signed.as_bytes())
        .unwrap_err();
    assert!(e.message.contains("BAD"), "{e}");
    assert!(e.message.contains("changed after it was signed"), "{e}");
}

#[test]
fn text_around_the_signed_message_is_refused() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let signed = ring.clearsign(&alice, TEXT);
    for bad in [
        format!("Evil => 1\n{signed}"),
        format!("{signed}Evil => 1\n"),
        format!("{signed}{signed}"),
    ] {
        let e = security(&ring).verify_signed(bad.as_bytes()).unwrap_err();
        assert!(e.message.contains("not a clean clearsigned file"), "{e}");
    }
}

#[test]
fn an_unknown_key_is_a_problem() {
    let ring = Keyring::new();
    let other = Keyring::new();
    let alice = other.generate("Alice", "alice@org", None);
    let signed = other.clearsign(&alice, TEXT);
    let got = security(&ring).verify_signed(signed.as_bytes()).unwrap();
    assert!(got.signers.is_empty());
    assert!(
        got.problems[0].contains("not in the keyring"),
        "{:?}",
        got.problems
    );
}

#[test]
fn expired_and_revoked_keys_are_problems() {
    let ring = Keyring::new();
    let old = ring.generate_expired("Old", "old@org", 3);
    let then = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 4 * 86_400
        + 60;
    let signed = ring.clearsign_at(&old, TEXT, Some(then));
    let got = security(&ring).verify_signed(signed.as_bytes()).unwrap();
    assert!(got.signers.is_empty());
    assert!(got.problems[0].contains("expired"), "{:?}", got.problems);

    let gone = ring.generate("Gone", "gone@org", None);
    let signed = ring.clearsign(&gone, TEXT);
    ring.revoke(&gone);
    let got = security(&ring).verify_signed(signed.as_bytes()).unwrap();
    assert!(got.signers.is_empty());
    assert!(got.problems[0].contains("revoked"), "{:?}", got.problems);
}

#[test]
fn revoked_user_ids_are_not_reported() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let mut c = ring.gpg();
    c.args(["--quick-add-uid", &alice.fingerprint, "Boss <boss@org>"]);
    assert!(c.output().unwrap().status.success());
    let mut c = ring.gpg();
    c.args(["--quick-revoke-uid", &alice.fingerprint, "Boss <boss@org>"]);
    assert!(c.output().unwrap().status.success());
    let signed = ring.clearsign(&alice, TEXT);
    let got = security(&ring).verify_signed(signed.as_bytes()).unwrap();
    assert_eq!(got.signers[0].uids, vec!["Alice <alice@org>"]);
}

#[test]
fn several_signatures_are_all_reported() {
    let ring = Keyring::new();
    let a = ring.generate("A", "a@org", None);
    let b = ring.generate("B", "b@org", None);
    let signed = ring.clearsign_by(&[&a, &b], TEXT);
    let got = security(&ring).verify_signed(signed.as_bytes()).unwrap();
    let mut fprs: Vec<&str> = got.signers.iter().map(|s| s.fingerprint.as_str()).collect();
    fprs.sort();
    let mut want = vec![a.fingerprint.as_str(), b.fingerprint.as_str()];
    want.sort();
    assert_eq!(fprs, want);
}

#[test]
fn a_missing_gpg_home_is_an_error() {
    let s = Security::new(Settings {
        gpg: Gpg {
            home: Some("/nonexistent/gpg/home".into()),
            ..Gpg::default()
        },
        ..Settings::default()
    });
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let e = s
        .verify_signed(ring.clearsign(&alice, TEXT).as_bytes())
        .unwrap_err();
    assert!(e.message.contains("is not a directory"), "{e}");
}

#[test]
fn no_gpg_is_an_error() {
    let s = Security::new(Settings {
        gpg: Gpg {
            program: "/nonexistent/gpg".into(),
            ..Gpg::default()
        },
        ..Settings::default()
    });
    let signed = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nA => 1\n-----BEGIN PGP SIGNATURE-----\n\nxx\n-----END PGP SIGNATURE-----\n";
    let e = s.verify_signed(signed.as_bytes()).unwrap_err();
    assert!(e.message.contains("cannot run"), "{e}");
    assert!(e.hint.unwrap().contains("install GnuPG"));
}

#[test]
fn outputs_are_clearsigned_with_the_chosen_key() {
    let ring = Keyring::new();
    let _default = ring.generate("Default", "default@org", None);
    let signer = ring.generate("Signer", "signer@org", Some("s3cret phrase"));
    let with = |user: &str, pass: Option<&str>| {
        Security::new(Settings {
            gpg: Gpg {
                home: Some(ring.home().to_path_buf()),
                user: Some(user.to_string()),
                passphrase: pass.map(str::to_string),
                ..Gpg::default()
            },
            ..Settings::default()
        })
    };
    // Before the right pass phrase is used (gpg-agent would remember it).
    let e = with("signer@org", Some("wrong"))
        .clearsign(b"x\n")
        .unwrap_err();
    assert!(e.message.contains("pass phrase is wrong"), "{e}");
    let e = with("nobody@org", None).clearsign(b"x\n").unwrap_err();
    assert!(e.message.contains("no usable secret key"), "{e}");

    let s = with("signer@org", Some("s3cret phrase"));
    let out = s.clearsign(b"{\"A\": 1}\n").unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(
        text.starts_with("-----BEGIN PGP SIGNED MESSAGE-----"),
        "{text}"
    );
    let got = s.verify_signed(&out).unwrap();
    assert_eq!(got.signers[0].fingerprint, signer.fingerprint);
    assert_eq!(content(&got), "{\"A\": 1}\n");
}

#[test]
fn signing_with_an_expired_or_revoked_key_says_so() {
    let ring = Keyring::new();
    let _old = ring.generate_expired("Old", "old@org", 3);
    let rev = ring.generate("Rev", "rev@org", None);
    ring.revoke(&rev);
    let with = |user: &str| {
        Security::new(Settings {
            gpg: Gpg {
                home: Some(ring.home().to_path_buf()),
                user: Some(user.to_string()),
                ..Gpg::default()
            },
            ..Settings::default()
        })
    };
    let e = with("old@org").clearsign(b"x\n").unwrap_err();
    assert_eq!(e.message, "the key of `old@org` has expired");
    let e = with("rev@org").clearsign(b"x\n").unwrap_err();
    assert_eq!(e.message, "the key of `rev@org` has been revoked");
}
