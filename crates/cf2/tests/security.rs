//! The security features of reference §5 through the library (docs/security.md):
//! delegation (§5.1), confinement to allowed directories, KeePass databases and secrets that
//! stay secret (§5.2), and signed imports checked by the real gpg (§5.3), each gpg test with
//! a throwaway keyring.

use cf2::{
    Compiler, Config, Gpg, Host, KeePass, KeePassEntry, KeePassGroup, MemoryHost, NativeFunction,
    ParamType, Secured, Security, SecuritySettings, Value,
};
use cf2_security::testing::{Key, Keyring};
use std::path::{Path, PathBuf};

const SITE_PASSWORD: &str = "correct horse battery staple";
/// Every text of the site database that is a secret (and long enough to search for).
const SITE_SECRETS: &[&str] = &[
    "hunter2-Secret!",
    "https://intranet.example.org",
    "Fred's account",
    "pg-pass-42",
    "postgres://db1.example.org",
    "my value",
    "r0uter",
    "k-123",
];

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/kdbx")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A compile in memory (files under /work, the working directory) with the real security
/// back end.
struct Run {
    host: MemoryHost,
    settings: SecuritySettings,
    trace: bool,
    allowed: Vec<PathBuf>,
    _files: Vec<tempfile::NamedTempFile>,
}

impl Run {
    fn new() -> Run {
        Run {
            host: MemoryHost::new(),
            settings: SecuritySettings {
                keepass: KeePass {
                    use_env: false,
                    use_keychain: false,
                    ..KeePass::default()
                },
                ..SecuritySettings::default()
            },
            trace: false,
            allowed: Vec::new(),
            _files: Vec::new(),
        }
    }

    fn file(mut self, path: &str, text: impl Into<Vec<u8>>) -> Run {
        self.host.add_file(path, text);
        self
    }

    /// The site database (KDBX 4) as `name`, with its password.
    fn site_db(self, name: &str) -> Run {
        self.file(name, fixture("site-kdbx4.kdbx"))
            .password(SITE_PASSWORD)
    }

    fn password(mut self, pw: &str) -> Run {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), format!("{pw}\n")).unwrap();
        self.settings.keepass.password_file = Some(f.path().to_path_buf());
        self._files.push(f);
        self
    }

    fn keyring(mut self, ring: &Keyring) -> Run {
        self.settings.gpg = Gpg {
            home: Some(ring.home().to_path_buf()),
            ..Gpg::default()
        };
        self
    }

    fn traced(mut self) -> Run {
        self.trace = true;
        self
    }

    fn allow(mut self, dir: &str) -> Run {
        self.allowed.push(PathBuf::from(dir));
        self
    }

    fn compiler(&self) -> Compiler {
        let host = Secured::new(self.host.clone(), Security::new(self.settings.clone()));
        let mut c = Compiler::with_host(host);
        c.options_mut().trace = self.trace;
        c.options_mut().allowed_dirs = self.allowed.clone();
        c
    }

    fn ok(&self, main: &str) -> Config {
        match self.compiler().compile_str("main.cf2", main) {
            Ok(c) => c,
            Err(e) => panic!("the compile failed:\n{}", e.render(false)),
        }
    }

    fn err(&self, main: &str) -> String {
        match self.compiler().compile_str("main.cf2", main) {
            Ok(c) => panic!("the compile succeeded: {:?}", c.value()),
            Err(e) => e.render(false),
        }
    }
}

fn text(c: &Config, path: &str) -> String {
    match c.get(path) {
        Some(v) => v
            .as_text()
            .map(str::to_string)
            .unwrap_or_else(|| format!("{v:?}")),
        None => panic!("no {path} in {:?}", c.value()),
    }
}

fn json(c: &Config) -> String {
    c.render(cf2::Format::Json).unwrap()
}

/// Nothing of the site's secrets in `what`.
fn no_secret(what: &str) {
    for s in SITE_SECRETS {
        assert!(!what.contains(s), "the secret {s:?} shows in:\n{what}");
    }
}

// ----- §5.1 delegation -----------------------------------------------------------------

const DELEGATED: &str = "Login.Colour => green\nRootUsers ~> { hacker => 0 }\n";

#[test]
fn a_file_imported_as_a_value_affects_nothing_outside_its_block() {
    let r = Run::new().file("delegated2.cf2", DELEGATED);
    let c = r.ok("RootUsers ~> { jane => 1001, john => 1002 }\nprivate Delegated => import (delegated2)\nLogin.Colour => $Delegated.Login.Colour\n");
    assert_eq!(
        json(&c).replace([' ', '\n'], ""),
        r#"{"RootUsers":{"jane":1001,"john":1002},"Login":{"Colour":"green"}}"#
    );
}

#[test]
fn a_file_imported_inline_can_change_the_importing_block() {
    let r = Run::new().file("delegated2.cf2", DELEGATED);
    let c = r.ok("RootUsers ~> { jane => 1001, john => 1002 }\nimport (delegated2)\n");
    let users = c.get("RootUsers").unwrap().as_block().unwrap();
    let mut names: Vec<&str> = users.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, vec!["hacker", "jane", "john"]);
}

#[test]
fn a_delegated_final_stays_in_its_block_but_an_inline_one_wins() {
    let evil = "RootUsers ~(final)> { hacker => 0 }\nColour => green\n";
    let r = Run::new().file("evil.cf2", evil);
    let c = r.ok("RootUsers => { jane => 1001 }\nprivate D => import(evil)\nColour => $D.Colour\n");
    assert_eq!(
        json(&c).replace([' ', '\n'], ""),
        r#"{"RootUsers":{"jane":1001},"Colour":"green"}"#
    );
    let c = r.ok("RootUsers => { jane => 1001 }\nimport(evil)\n");
    assert_eq!(
        json(&c).replace([' ', '\n'], ""),
        r#"{"RootUsers":{"hacker":0},"Colour":"green"}"#
    );
}

#[test]
fn a_delegated_file_cannot_read_the_importing_configuration() {
    let r = Run::new()
        .site_db("pw.kdbx")
        .file("nosy.cf2", "Stolen => $Secrets.fred.Password\n");
    let e =
        r.err("private Secrets => import('pw.kdbx')\nprivate D => import(nosy)\nX => $D.Stolen\n");
    assert!(e.contains("resource `Secrets` is not defined"), "{e}");
    assert!(e.contains("nosy.cf2:1:"), "{e}");
}

// ----- confinement ---------------------------------------------------------------------

#[test]
fn reads_and_imports_outside_the_allowed_directories_are_errors() {
    let r = Run::new()
        .file("/etc/shadow", "root:secret-hash\n")
        .file(
            "/work/conf/delegated.cf2",
            "Shadow => read('/etc/shadow')\n",
        )
        .allow("conf");
    let e = r.err("private D => import('conf/delegated')\nX => $D.Shadow\n");
    assert!(
        e.contains("`/etc/shadow` is outside the directories this compile may read"),
        "{e}"
    );
    assert!(e.contains("conf/delegated.cf2:1:16"), "{e}");
    assert!(e.contains("allowed directories: /work/conf"), "{e}");
    assert!(!e.contains("secret-hash"), "{e}");

    let r = Run::new()
        .file("/srv/other.cf2", "A => 1\n")
        .file("/work/conf/x.cf2", "B => 2\n")
        .allow("conf");
    let e = r.err("X => import('/srv/other')\n");
    assert!(
        e.contains("`/srv/other` (`/srv/other.cf2`) is outside"),
        "{e}"
    );
    assert!(e.contains("cannot be imported"), "{e}");
    assert!(e.contains("main.cf2:1:13"), "{e}");
    // Inside is fine, and so is the main file itself, wherever it is.
    let c = r.ok("X => import('conf/x')\n");
    assert_eq!(c.get("X.B"), Some(&Value::Number(cf2::Number::Int(2))));
}

#[test]
fn keepass_databases_are_confined_too() {
    let r = Run::new().site_db("/srv/pw.kdbx").allow("/work");
    let e = r.err("private P => import('/srv/pw.kdbx')\nX => $P.fred.Password\n");
    assert!(e.contains("`/srv/pw.kdbx` is outside"), "{e}");
}

#[test]
fn cf2path_does_not_widen_the_allowed_directories() {
    let mut r = Run::new()
        .file("/opt/lib/common.cf2", "A => 1\n")
        .allow("/work");
    r.host = r.host.with_env("CF2PATH", "/opt/lib");
    let e = r.err("X => import(common)\n");
    assert!(
        e.contains("`common` (`/opt/lib/common.cf2`) is outside"),
        "{e}"
    );
}

#[test]
fn a_symbolic_link_out_of_an_allowed_directory_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let conf = root.join("conf");
    std::fs::create_dir(&conf).unwrap();
    let outside = root.join("outside.txt");
    std::fs::write(&outside, "top secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, conf.join("link.txt")).unwrap();
    std::fs::write(conf.join("ok.txt"), "fine\n").unwrap();
    let main = conf.join("main.cf2");
    std::fs::write(&main, "A => read('link.txt')\n").unwrap();
    let mut c = Compiler::new();
    c.options_mut().allowed_dirs = vec![conf.clone()];
    let e = c.compile_file(&main).unwrap_err().render(false);
    assert!(
        e.contains(&format!("`link.txt` (`{}`) is outside", outside.display())),
        "{e}"
    );
    assert!(!e.contains("top secret"), "{e}");
    std::fs::write(&main, "A => read('ok.txt')\n").unwrap();
    let mut c = Compiler::new();
    c.options_mut().allowed_dirs = vec![conf.clone()];
    let got = c.compile_file(&main).unwrap();
    assert_eq!(got.get("A").and_then(Value::as_text), Some("fine\n"));
}

// ----- §5.2 KeePass databases ----------------------------------------------------------

#[test]
fn a_database_is_a_block_of_entries_and_groups() {
    for db in ["site-kdbx4.kdbx", "site-kdbx31.kdbx"] {
        let r = Run::new()
            .file("mydb.kdbx", fixture(db))
            .password(SITE_PASSWORD);
        let c = r.ok("X => import('mydb.kdbx')\n");
        let got = json(&c).replace([' ', '\n'], "");
        let want = concat!(
            r#"{"X":{"fred":{"Notes":"Fred'saccount","Password":"hunter2-Secret!","Title":"fred","#,
            r#""URL":"https://intranet.example.org","UserName":"fred","MyCustom":"myvalue"},"#,
            r#""entry★1":{"Notes":"","Password":"secret","Title":"entry-1","URL":"","UserName":"mary","MyCustom":"myvalue"},"#,
            r#""Servers":{"db1":{"Notes":"","Password":"pg-pass-42","Title":"db1","URL":"postgres://db1.example.org","UserName":"postgres"},"#,
            r#""Lab★2":{"router":{"Notes":"","Password":"r0uter","Title":"router","URL":"","UserName":"admin","API★Key":"k-123"}}}}}"#
        );
        assert_eq!(got, want, "{db}");
    }
}

#[test]
fn an_import_without_extension_finds_the_database_and_inline_imports_add_entries() {
    let r = Run::new().site_db("mydb.kdbx");
    let c = r.ok("private P => import(mydb)\nPw => $P.fred.Password\n");
    assert_eq!(text(&c, "Pw"), "hunter2-Secret!");
    let c = r.ok("Keys => { import('mydb.kdbx') }\n");
    assert_eq!(text(&c, "Keys.Servers.db1.UserName"), "postgres");
}

#[test]
fn keepass_errors() {
    let r = Run::new()
        .file("dup.kdbx", fixture("duplicates.kdbx"))
        .file("bad.kdbx", fixture("corrupt.kdbx"))
        .file("text.kdbx", fixture("notkdbx.kdbx"))
        .site_db("site.kdbx");
    let e = r.err("X => import('bad.kdbx')\n");
    assert!(
        e.contains(
            "main.cf2:1:6: error: cannot open the KeePass database `bad.kdbx`: the file is damaged"
        ),
        "{e}"
    );
    let e = r.err("X => import('text.kdbx')\n");
    assert!(e.contains("not a KeePass database"), "{e}");
    let e = r.err("X => import('missing.kdbx')\n");
    assert!(e.contains("cannot find the file `missing.kdbx`"), "{e}");
    let e = r.err("X => import('site.kdbx', 'user@org')\n");
    assert!(e.contains("cannot carry a PGP signature"), "{e}");
    let r = r.password("dup");
    let e = r.err("X => import('dup.kdbx')\n");
    assert!(e.contains("has two members named `a★b` at the top of the database: the entry `a b` and the entry `a-b`"), "{e}");
    let r = Run::new().site_db("site.kdbx").password("wrong");
    let e = r.err("X => import('site.kdbx')\n");
    assert!(e.contains("the password or key file is wrong"), "{e}");
}

/// A host that serves one database without a file format (for the mapping rules).
struct FakeDb {
    inner: MemoryHost,
    root: KeePassGroup,
}

impl Host for FakeDb {
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.inner.read_file(path)
    }
    fn is_file(&self, path: &Path) -> bool {
        self.inner.is_file(path)
    }
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
    fn current_dir(&self) -> PathBuf {
        self.inner.current_dir()
    }
    fn env_var(&self, name: &str) -> Option<String> {
        self.inner.env_var(name)
    }
    fn lookup_host(&self, name: &str) -> std::io::Result<Vec<std::net::IpAddr>> {
        self.inner.lookup_host(name)
    }
    fn lookup_addr(&self, addr: std::net::IpAddr) -> std::io::Result<String> {
        self.inner.lookup_addr(addr)
    }
    fn now(&self) -> std::time::SystemTime {
        self.inner.now()
    }
    fn open_keepass(&self, _: &Path, _: &[u8]) -> Result<KeePassGroup, cf2::HostError> {
        Ok(self.root.clone())
    }
}

fn entry(title: &str, fields: &[(&str, &str)]) -> KeePassEntry {
    let mut f = vec![("Title".to_string(), title.to_string())];
    f.extend(fields.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    KeePassEntry { fields: f }
}

fn fake(root: KeePassGroup) -> Compiler {
    Compiler::with_host(FakeDb {
        inner: MemoryHost::new().with_file("db.kdbx", "x"),
        root,
    })
}

#[test]
fn names_that_are_not_identifiers_and_clashes() {
    let root = KeePassGroup {
        name: "Root".into(),
        entries: vec![
            entry("import", &[("Password", "p1")]),
            entry("", &[("Password", "p2")]),
            entry("9 lives", &[("my field", "v"), ("URL", "u")]),
        ],
        groups: vec![KeePassGroup {
            name: "Web Servers".into(),
            ..KeePassGroup::default()
        }],
    };
    let c = fake(root)
        .compile_str("main.cf2", "X => import('db.kdbx')\n")
        .unwrap();
    let names: Vec<&String> = c.get("X").unwrap().as_block().unwrap().keys().collect();
    assert_eq!(names, vec!["import★", "★", "★★lives", "Web★Servers"]);
    assert_eq!(
        c.get("X.★★lives.my★field").and_then(Value::as_text),
        Some("v")
    );

    let clash = KeePassGroup {
        entries: vec![entry("web", &[])],
        groups: vec![KeePassGroup {
            name: "web".into(),
            ..KeePassGroup::default()
        }],
        ..KeePassGroup::default()
    };
    let e = fake(clash)
        .compile_str("main.cf2", "X => import('db.kdbx')\n")
        .unwrap_err()
        .render(false);
    assert!(e.contains("two members named `web` at the top of the database: the entry `web` and the group `web`"), "{e}");

    let fields = KeePassGroup {
        groups: vec![KeePassGroup {
            name: "G".into(),
            entries: vec![entry("e", &[("a b", "1"), ("a-b", "2")])],
            ..KeePassGroup::default()
        }],
        ..KeePassGroup::default()
    };
    let e = fake(fields)
        .compile_str("main.cf2", "X => import('db.kdbx')\n")
        .unwrap_err()
        .render(false);
    assert!(
        e.contains("two members named `a★b` in `G.e`: the field `a b` and the field `a-b`"),
        "{e}"
    );
}

#[test]
fn a_message_holding_a_short_secret_is_withheld() {
    let root = KeePassGroup {
        entries: vec![entry("s", &[("Password", "ab")])],
        ..KeePassGroup::default()
    };
    let e = fake(root)
        .compile_str(
            "main.cf2",
            "private P => import('db.kdbx')
X => fail(\"bad: ${P.s.Password}\")
",
        )
        .unwrap_err()
        .render(false);
    assert!(e.contains("error: a message made from ‹secret from db.kdbx:s.Password› is withheld, because it would show the secret"), "{e}");
    assert!(!e.contains("bad: ab"), "{e}");
}

// ----- secrets stay secret -------------------------------------------------------------

const USES: &str = r#"private P => import('mydb.kdbx')
Pw => $P.fred.Password
Dsn => "postgres://app:${P.Servers.db1.Password}@db1"
Joined => $P.fred.UserName ++ ':' ++ $P.fred.Password
Upper => upcase($P.Servers.Lab★2.router.Password)
List => [$P.fred.Password, plain]
Csv => join(',', [$P.Servers.db1.Password, 'x'])
def wrap(x) = "[${x}]"
Wrapped => wrap($P.fred.Password)
Same => $P.fred.UserName == fred
Branch => if ($P.fred.Password =~ /^hunter/) then yes else no
Captured => if ($P.fred.Password =~ /^(\w+)/) then match(1) else none
Kind => typeof($P.fred.Password)
Known => defined($P.fred.Notes)
"#;

#[test]
fn secrets_reach_the_output_where_they_are_put() {
    let c = Run::new().site_db("mydb.kdbx").ok(USES);
    assert_eq!(text(&c, "Pw"), "hunter2-Secret!");
    assert_eq!(text(&c, "Dsn"), "postgres://app:pg-pass-42@db1");
    assert_eq!(text(&c, "Joined"), "fred:hunter2-Secret!");
    assert_eq!(text(&c, "Upper"), "R0UTER");
    assert_eq!(text(&c, "List.0"), "hunter2-Secret!");
    assert_eq!(text(&c, "Csv"), "pg-pass-42,x");
    assert_eq!(text(&c, "Wrapped"), "[hunter2-Secret!]");
    assert_eq!(c.get("Same"), Some(&Value::Bool(true)));
    assert_eq!(text(&c, "Branch"), "yes");
    assert_eq!(text(&c, "Captured"), "hunter2");
    assert_eq!(text(&c, "Kind"), "literal");
}

#[test]
fn traces_show_secrets_redacted_with_their_origin() {
    let c = Run::new().site_db("mydb.kdbx").traced().ok(USES);
    let trace = c.trace().join("\n");
    no_secret(&trace);
    assert!(!trace.contains("hunter2"), "{trace}");
    for (resource, shown) in [
        ("Pw", "‹secret from mydb.kdbx:fred.Password›"),
        (
            "Dsn",
            "‹secret computed from mydb.kdbx:Servers.db1.Password›",
        ),
        ("Joined", "‹secret computed from mydb.kdbx:fred.UserName›"),
        (
            "Upper",
            "‹secret computed from mydb.kdbx:Servers.Lab★2.router.Password›",
        ),
        (
            "Csv",
            "‹secret computed from mydb.kdbx:Servers.db1.Password›",
        ),
        ("Wrapped", "‹secret computed from mydb.kdbx:fred.Password›"),
        ("Same", "‹secret computed from mydb.kdbx:fred.UserName›"),
        ("Captured", "‹secret computed from mydb.kdbx:fred.Password›"),
    ] {
        let line = format!("eval: {resource} = {shown}");
        assert!(trace.contains(&line), "no {line:?} in:\n{trace}");
    }
    assert!(
        trace.contains("eval: List = [‹secret from mydb.kdbx:fred.Password›, 'plain']"),
        "{trace}"
    );
    // The branch taken is not secret (implicit flow is not tracked), nor is a value's kind.
    assert!(trace.contains("eval: Branch = 'yes'"), "{trace}");
    assert!(trace.contains("eval: Kind = 'literal'"), "{trace}");
    assert!(trace.contains("eval: Known = true"), "{trace}");
    // The explain records are the same.
    let p = c.explain("Dsn").expect("Dsn was evaluated");
    assert_eq!(
        p.made.value,
        "‹secret computed from mydb.kdbx:Servers.db1.Password›"
    );
    no_secret(&format!("{:?}", c.provenance()));
}

/// A block a secret selector picked is not said to be another resource's block: the
/// name would tell which one was picked.
#[test]
fn a_block_a_secret_picked_does_not_name_its_home_in_traces() {
    let c = Run::new().site_db("mydb.kdbx").traced().ok(concat!(
        "private P => import('mydb.kdbx')\n",
        "private Sel => { fred => { A => 1 }, other => { A => 2 } }\n",
        "Pick => $Sel.($P.fred.UserName)\n",
        "private Other => { A => 3 }\n",
        "Plain => $Other\n",
        "Candidate => $Sel.other\n",
    ));
    assert_eq!(c.explain("Pick").unwrap().block_of, None);
    assert_eq!(
        c.explain("Plain").unwrap().block_of.as_deref(),
        Some("Other")
    );
    // A candidate of the pick is shown alike, picked or not.
    assert_eq!(c.explain("Candidate").unwrap().block_of, None);
    let trace = c.trace().join("\n");
    assert!(!trace.contains("Sel.fred"), "{trace}");
}

#[test]
fn messages_never_show_a_secret() {
    let r = Run::new().site_db("mydb.kdbx");
    let pre = "private P => import('mydb.kdbx')\n";
    let cases = [
        (
            "X => fail(\"cannot use ${P.fred.Password} here\")",
            "cannot use ‹secret from mydb.kdbx:fred.Password› here",
        ),
        (
            "X => $P.fred.Password * 2",
            "`*` needs numbers, but the left side is ‹secret from mydb.kdbx:fred.Password›",
        ),
        (
            "X => $P.fred.Password < 3",
            "cannot compare ‹secret from mydb.kdbx:fred.Password› with the number 3",
        ),
        (
            "X => ipaddr($P.Servers.db1.Password)",
            // Refused before any look-up: the name servers never see a secret.
            "`ipaddr` cannot look up a secret: the name servers would see ‹secret from mydb.kdbx:Servers.db1.Password›",
        ),
        (
            "X => $P.($P.fred.Password)",
            "nothing can be selected with ‹secret from mydb.kdbx:fred.Password›",
        ),
        (
            "X => $P.fred.Password.x",
            "cannot select `x` from ‹secret from mydb.kdbx:fred.Password›",
        ),
        (
            "X => if ($P.fred.Password) then 1 else 2",
            "must be a boolean, but it is ‹secret from mydb.kdbx:fred.Password›",
        ),
        (
            "X => import($P.fred.Password)",
            "a secret cannot name the file to import, and this is ‹secret from mydb.kdbx:fred.Password›",
        ),
        (
            "X => /${P.fred.Password}(/",
            "made with ‹secret from mydb.kdbx:fred.Password›, is invalid",
        ),
        (
            "X ~(sum)> $P.fred.Password\nX ~(sum)> 3",
            "needs numbers, but a value of `X` is ‹secret from mydb.kdbx:fred.Password›",
        ),
        (
            "X ~(final)> $P.fred.Password\nX ~(final)> other",
            "gives ‹secret from mydb.kdbx:fred.Password›",
        ),
        (
            "X => fail($P.entry★1.Password)",
            "error: ‹secret from mydb.kdbx:entry★1.Password›",
        ),
    ];
    for (src, want) in cases {
        let e = r.err(&format!("{pre}{src}\n"));
        no_secret(&e);
        assert!(!e.contains("hunter2"), "{src}: {e}");
        assert!(e.contains(want), "{src}: want {want:?} in:\n{e}");
    }
}

#[test]
fn warnings_never_show_a_secret() {
    let c = Run::new()
        .site_db("mydb.kdbx")
        .ok("private P => import('mydb.kdbx')\nwarn(\"password is ${P.fred.Password}\")\nY => 1\n");
    let w: Vec<String> = c.warnings().iter().map(|d| d.message.clone()).collect();
    assert_eq!(w, vec!["password is ‹secret from mydb.kdbx:fred.Password›"]);
}

#[test]
fn custom_functions_are_never_given_secrets() {
    let echo = NativeFunction::new("echo", vec![ParamType::ANYTYPE], |_cx, mut args| match args
        .pop()
    {
        Some(cf2::Arg::Value(v)) => Ok(v),
        _ => Ok(None),
    });
    let r = Run::new().site_db("mydb.kdbx");
    let e = match r.compiler().register_function(echo).compile_str(
        "main.cf2",
        "private P => import('mydb.kdbx')\nX => echo($P.fred.Password)\n",
    ) {
        Ok(_) => panic!("a secret reached a custom function"),
        Err(e) => e.render(false),
    };
    assert!(e.contains("cannot be given to a custom function"), "{e}");
    no_secret(&e);
}

// ----- §5.3 signed imports -------------------------------------------------------------

const SIGNED: &str = "A => 1\n-- Lines starting with a dash are dash-escaped by gpg\nB => 'two'\n";

fn signed_run(ring: &Keyring, key: &Key) -> Run {
    Run::new()
        .keyring(ring)
        .file("f.cf2", ring.clearsign(key, "A => 1\nB => 'two'\n"))
}

#[test]
fn a_file_signed_by_an_allowed_signer_is_compiled() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice Example", "alice@org", None);
    let r = Run::new().keyring(&ring).file(
        "f.cf2",
        ring.clearsign(&alice, &SIGNED.replace("--", "C => 3 //")),
    );
    for signers in [
        "'alice@org'".to_string(),
        "['nobody@org', 'ALICE@org']".to_string(),
        "'Alice Example <alice@org>'".to_string(),
        format!("'{}'", alice.fingerprint),
        "$Signers".to_string(),
    ] {
        let c = r.ok(&format!(
            "private Signers => ['bob@org', 'alice@org']\nX => import(f, {signers})\n"
        ));
        assert_eq!(text(&c, "X.B"), "two", "{signers}");
        assert_eq!(c.get("X.C"), Some(&Value::Number(cf2::Number::Int(3))));
    }
}

#[test]
fn signature_failures_name_the_file_and_the_reason_and_output_nothing() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let mallory = ring.generate("Mallory", "mallory@org", Some("m's pass phrase"));
    let old = ring.generate_expired("Old", "old@org", 3);
    let gone = ring.generate("Gone", "gone@org", None);
    let bob = ring.generate("Bob", "bob@org", None);
    let carol = ring.generate("Carol", "carol@org", None);
    let stranger_ring = Keyring::new();
    let stranger = stranger_ring.generate("Stranger", "stranger@org", None);
    let body = "A => 1\n";
    let then = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 4 * 86_400
        + 60;
    let revoked = ring.clearsign(&gone, body);
    ring.revoke(&gone);
    let r = Run::new()
        .keyring(&ring)
        .file("plain.cf2", body)
        .file("mallory.cf2", ring.clearsign(&mallory, body))
        .file(
            "tampered.cf2",
            ring.clearsign(&alice, body).replace("A => 1", "A => 666"),
        )
        .file("stranger.cf2", stranger_ring.clearsign(&stranger, body))
        .file("expired.cf2", ring.clearsign_at(&old, body, Some(then)))
        .file("revoked.cf2", revoked)
        .file("binary.cf2", ring.sign_binary(&alice, body))
        .file("both.cf2", ring.clearsign_by(&[&bob, &carol], body))
        .file(
            "garbage.cf2",
            format!("Evil => 1\n{}", ring.clearsign(&alice, body)),
        )
        .file(
            "trailing.cf2",
            format!("{}Evil => 1\n", ring.clearsign(&alice, body)),
        );
    let cases = [
        (
            "plain",
            "cannot import `plain.cf2`: it has no signature, but it must be signed by `alice@org`",
        ),
        (
            "mallory",
            "cannot import `mallory.cf2`: it is signed by `Mallory <mallory@org>`",
        ),
        (
            "tampered",
            "cannot import `tampered.cf2`: the signature by `Alice <alice@org>`",
        ),
        (
            "stranger",
            "cannot import `stranger.cf2`: it is signed with the key",
        ),
        (
            "expired",
            "cannot import `expired.cf2`: it was signed with the key of `Old <old@org>`",
        ),
        (
            "revoked",
            "cannot import `revoked.cf2`: it was signed with the key of `Gone <gone@org>`",
        ),
        (
            "garbage",
            "cannot import `garbage.cf2`: it is not a clean clearsigned file: line 1 comes before",
        ),
        (
            "trailing",
            "cannot import `trailing.cf2`: it is not a clean clearsigned file",
        ),
        (
            "binary",
            "cannot import `binary.cf2`: it is not a clean clearsigned file: it is an OpenPGP message, as `gpg --sign` writes",
        ),
        (
            "both",
            "none of whom is an allowed signer",
        ),
    ];
    let reasons = [
        "",
        "who is not an allowed signer",
        "is BAD: the file was changed after it was signed",
        "which is not in the keyring",
        "which has expired",
        "which has been revoked",
        "",
        "comes after the signature",
        "",
        "",
    ];
    for ((file, want), reason) in cases.iter().zip(reasons) {
        let e = r.err(&format!("Before => 1\nX => import({file}, 'alice@org')\n"));
        assert!(e.contains(want), "{file}: want {want:?} in:\n{e}");
        assert!(e.contains(reason), "{file}: want {reason:?} in:\n{e}");
        assert!(e.contains("main.cf2:2:"), "{file}: {e}");
    }
}

#[test]
fn an_import_without_signers_checks_a_signed_file_anyway() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let other = Keyring::new();
    let stranger = other.generate("Stranger", "stranger@org", None);
    let r = Run::new()
        .keyring(&ring)
        .file("good.cf2", ring.clearsign(&alice, "A => 1\n"))
        .file(
            "bad.cf2",
            ring.clearsign(&alice, "A => 1\n")
                .replace("A => 1", "A => 2"),
        )
        .file("unknown.cf2", other.clearsign(&stranger, "A => 1\n"))
        .file("plain.cf2", "A => 1\n");
    let c = r.ok("X => import(good)\nY => import(plain)\n");
    assert_eq!(c.get("X.A"), c.get("Y.A"));
    let e = r.err("X => import(bad)\n");
    assert!(e.contains("BAD"), "{e}");
    let e = r.err("import(unknown)\n");
    assert!(e.contains("not in the keyring"), "{e}");
}

#[test]
fn each_import_checks_its_own_signers() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let r = signed_run(&ring, &alice);
    let e = r.err("X => import(f, 'alice@org')\nY => import(f, 'bob@org')\n");
    assert!(e.contains("main.cf2:2:16"), "{e}");
    assert!(e.contains("not an allowed signer"), "{e}");
}

#[test]
fn errors_in_a_signed_file_point_into_the_file() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let r = Run::new()
        .keyring(&ring)
        .file("f.cf2", ring.clearsign(&alice, "A => 1\nB => $Nope\n"));
    let e = r.err("X => import(f, 'alice@org')\n");
    // The signed text starts on line 4 of the file (after the armour and `Hash:` lines).
    assert!(
        e.contains("f.cf2:5:7: error: resource `Nope` is not defined"),
        "{e}"
    );
}

/// gpg puts `- ` before a line of the text that starts with `-`; cf2 compiles the line
/// without it, and counts it in columns and shows it in excerpts, as the file has it
/// (docs/security.md §5).
#[test]
fn columns_on_a_dash_escaped_line_are_the_file_s() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let signed = ring.clearsign(&alice, "A => [1,\n-2, $Nope]\n");
    assert!(signed.contains("\n- -2, $Nope]\n"), "{signed}");
    let r = Run::new().keyring(&ring).file("f.cf2", signed);
    let e = r.err("X => import(f, 'alice@org')\n");
    // `Nope` is at column 8 of line 5 of the file (6 of the signed text), and the excerpt
    // shows the line as the file has it, with the carets under the name.
    assert!(
        e.contains("f.cf2:5:8: error: resource `Nope` is not defined"),
        "{e}"
    );
    assert!(
        e.contains(" 5 | - -2, $Nope]\n   |        ^^^^ not defined"),
        "{e}"
    );
    // The signed text is compiled byte for byte: a string across an escaped line keeps the
    // line as signed.
    let r = Run::new().keyring(&ring).file(
        "f.cf2",
        ring.clearsign(&alice, "S => 'a\n- b\n-c'\nB => 2\n"),
    );
    let c = r.ok("X => import(f, 'alice@org')\n");
    assert_eq!(text(&c, "X.S"), "a\n- b\n-c");
}

#[test]
fn a_signed_main_file_is_verified_and_its_text_compiled() {
    let ring = Keyring::new();
    let alice = ring.generate("Alice", "alice@org", None);
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.cf2");
    std::fs::write(&main, ring.clearsign(&alice, "A => 1\n")).unwrap();
    let settings = SecuritySettings {
        gpg: Gpg {
            home: Some(ring.home().to_path_buf()),
            ..Gpg::default()
        },
        ..SecuritySettings::default()
    };
    let c = Compiler::with_security(settings.clone())
        .compile_file(&main)
        .unwrap();
    assert_eq!(c.get("A"), Some(&Value::Number(cf2::Number::Int(1))));
    std::fs::write(
        &main,
        ring.clearsign(&alice, "A => 1\n")
            .replace("A => 1", "A => 2"),
    )
    .unwrap();
    let e = Compiler::with_security(settings)
        .compile_file(&main)
        .unwrap_err()
        .render(false);
    assert!(e.contains("BAD"), "{e}");
    // Placed at the armour line, as every diagnostic is (clarifications §8).
    assert!(e.contains("main.cf2:1:1: error: cannot compile `"), "{e}");
    assert!(e.contains("-----BEGIN PGP SIGNED MESSAGE-----"), "{e}");
}

#[test]
fn signer_lists_must_be_text() {
    let r = Run::new().file("f.cf2", "A => 1\n");
    let e = r.err("X => import(f, [])\n");
    assert!(e.contains("the list of signers is empty"), "{e}");
    let e = r.err("X => import(f, 42)\n");
    assert!(
        e.contains("must be text or a list of text, but this is 42"),
        "{e}"
    );
}

/// A program that reads a secret into the wrong type, or prints the configuration with
/// `{:?}`, must not put the secret in its logs.
#[test]
fn library_messages_and_debug_never_show_a_secret() {
    let r = Run::new().site_db("mydb.kdbx");
    let c = r.ok("private P => import(mydb)\nPw => $P.fred.Password\n");
    let e = c.deserialize::<u16>("Pw").unwrap_err();
    assert_eq!(e.path, "Pw");
    assert_eq!(
        e.message,
        "expected u16 (the value is not shown: the configuration holds secrets)"
    );
    no_secret(&e.to_string());
    no_secret(&format!("{e:?}"));
    // Placed at its definition, which shows the source line and not the value.
    assert!(e.location.is_some(), "{e}");
    no_secret(&e.render(false));
    assert!(e.render(false).contains("Pw => $P.fred.Password"));
    no_secret(&format!("{c:?}"));
    // The value itself is the output: it holds the secret.
    assert_eq!(text(&c, "Pw"), "hunter2-Secret!");
    // Shortened, escaped or read as a number, a secret is still not shown.
    let c = r.ok("private P => import(mydb)\nDsn => \"postgres://app:${P.fred.Password}@db1.example.org:5432/production\\n\"\n");
    let e = c.deserialize::<u16>("Dsn").unwrap_err();
    no_secret(&e.to_string());
    no_secret(&e.render(false));
    assert!(!e.to_string().contains("hunter2"), "{e}");
}
