//! The data-driven test suite: one trial per case folder.
//!
//! A case is a folder holding `main.cf2` (and any files it imports) plus what is expected; the
//! format is the one of the shared conformance runner (`shared/conformance/run.py`):
//!
//! - `expect.json`: the configuration that `cf2 compile main.cf2 -o -.json` must print (exit 0),
//!   compared as data, key order included unless the case holds a file `unordered`; with a
//!   file `loose`, a number and text spelling that number compare equal.
//! - `expect.error`: the compile must fail with exit status 1 and nothing on stdout, and stderr
//!   must hold every line of this file (case-insensitive; `a | b` accepts either).
//! - `expect.stderr`: lines that stderr must hold on a successful compile.
//! - `expect.files/`: files the compile must write into the case folder (`.json` compared as
//!   data, anything else as exact text).
//! - `absent`: names of files that must not exist after the compile.
//! - `args`: the command line after `cf2 compile main.cf2` (shell words; default `-o -.json`).
//! - `command`: the command to run instead of `compile` (`explain`); its cases give `args`,
//!   and live in `tests/explain`, out of reach of the shared runner, which runs `compile`.
//! - `expect.stdout`: exactly what a successful command prints on stdout (for `explain`).
//! - `env`: `KEY=VALUE` lines added to the environment; `{case}` is the case folder.
//! - `nocrash`: any orderly outcome (exit 0, or exit 1 with a message) is accepted.
//!
//! Every case runs in a fresh temporary copy of its folder with a time limit of 20 s; a crash
//! (exit 101 or a signal) or a time-out fails it whatever it expected. A successful case with
//! `expect.json` and no `args` also goes through the cf2 format and back, and (where perl is
//! installed) through the `pl` format into Perl, and in batch mode (`--out-dir`) must write
//! byte for byte the JSON it prints.
//!
//! In addition, the full standard error of every case of `tests/cases` with `expect.error` or
//! `expect.stderr` is snapshotted with insta (`tests/snapshots/NAME.snap`, the temporary folder
//! written `{case}`), so that the exact diagnostics are reviewed; a case holding a file
//! `nosnapshot` (whose stderr depends on the machine) is not snapshotted. Cases named in
//! `tests/known-failures.txt` (`NAME # reason`) are skipped (reported as ignored; run them with
//! `-- --ignored`). The shared conformance cases run too, without snapshots.

use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIME_LIMIT: Duration = Duration::from_secs(20);
const BINARY: &str = env!("CARGO_BIN_EXE_cf2");
const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(MANIFEST_DIR);
    let known = known_failures(&root.join("../../tests/known-failures.txt"));
    let mut trials = Vec::new();
    for (name, reason) in &known {
        eprintln!("skipped (known failure): {name} # {reason}");
    }
    add_trials(
        &mut trials,
        &root.join("../../tests/cases"),
        "",
        true,
        &known,
    );
    // Cases of other commands than `compile` (a file `command`), which the shared runner,
    // running `cf2 compile` on every case of `tests/cases`, could not run.
    add_trials(
        &mut trials,
        &root.join("../../tests/explain"),
        "",
        true,
        &known,
    );
    let shared = root.join("../../../shared/conformance/cases");
    if shared.is_dir() {
        add_trials(&mut trials, &shared, "conformance/", false, &known);
    }
    trials.push(Trial::test("harness/shell-split", check_shell_split));
    trials.push(Trial::test("harness/json-compare", check_json_compare));
    libtest_mimic::run(&args, trials).exit();
}

/// The harness checks itself: `args` splitting.
fn check_shell_split() -> Result<(), Failed> {
    let cases: [(&str, &[&str]); 6] = [
        ("-o -.json", &["-o", "-.json"]),
        ("  -p\n  -o  out.json:A.B \n", &["-p", "-o", "out.json:A.B"]),
        (r#"'a b' "c d" e\ f"#, &["a b", "c d", "e f"]),
        ("x'y z'w", &["xy zw"]),
        (r#""a\"b" ''"#, &["a\"b", ""]),
        ("", &[]),
    ];
    for (line, want) in cases {
        let got = shell_split(line)?;
        if got != want {
            return Err(format!("shell_split({line:?}) = {got:?}, expected {want:?}").into());
        }
    }
    if shell_split("'open").is_ok() {
        return Err("an unclosed quote must be an error".into());
    }
    Ok(())
}

/// The harness checks itself: the comparison of run.py.
fn check_json_compare() -> Result<(), Failed> {
    let same = |e: &str, a: &str, ordered: bool, loose: bool| -> Result<bool, Failed> {
        let (e, a) = (json::parse(e)?, json::parse(a)?);
        Ok(json::same(&e, &a, ordered, loose, "$").is_none())
    };
    let checks = [
        (
            same(
                r#"{"a":1,"b":[1,2.0]}"#,
                r#"{"a":1.0,"b":[1,2]}"#,
                true,
                false,
            )?,
            true,
        ),
        (
            same(r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#, true, false)?,
            false,
        ),
        (
            same(r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#, false, false)?,
            true,
        ),
        (same(r#"{"a":1}"#, r#"{"a":1,"b":2}"#, false, false)?, false),
        (same(r#"[1]"#, r#"["1"]"#, true, false)?, false),
        (same(r#"[1]"#, r#"["1"]"#, true, true)?, true),
        (same(r#"[true]"#, r#"[1]"#, true, false)?, false),
        (same(r#"[true, false]"#, r#"[1, ""]"#, true, true)?, true),
        (
            same(
                r#""a\n\u00e9\ud83d\ude00""#,
                "\"a\\n\u{e9}\u{1F600}\"",
                true,
                false,
            )?,
            true,
        ),
        (same("null", "null", true, false)?, true),
        (same("[[]]", "[{}]", true, false)?, false),
    ];
    for (i, (got, want)) in checks.iter().enumerate() {
        if got != want {
            return Err(format!("check {i}: expected {want}").into());
        }
    }
    if json::parse(r#"{"a": 1,}"#).is_ok() || json::parse("[1] x").is_ok() {
        return Err("invalid JSON must be refused".into());
    }
    Ok(())
}

/// `NAME # reason` lines; blank lines and lines starting with `#` are ignored.
fn known_failures(path: &Path) -> BTreeMap<String, String> {
    let Ok(text) = fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                return None;
            }
            let (name, reason) = line.split_once('#').unwrap_or((line, ""));
            Some((name.trim().to_string(), reason.trim().to_string()))
        })
        .collect()
}

fn add_trials(
    trials: &mut Vec<Trial>,
    dir: &Path,
    prefix: &str,
    snapshots: bool,
    known: &BTreeMap<String, String>,
) {
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) => {
            let message = format!("cannot read {}: {e}", dir.display());
            trials.push(Trial::test(format!("{prefix}<cases>"), move || {
                Err(message.into())
            }));
            return;
        }
    };
    names.sort();
    for name in names {
        let case_dir = dir.join(&name);
        let full_name = format!("{prefix}{name}");
        if !case_dir.join("main.cf2").is_file() {
            if snapshots {
                // A folder of our own without main.cf2 is a mistake, not a case to skip.
                trials.push(Trial::test(full_name, move || {
                    Err("the case folder has no main.cf2".into())
                }));
            }
            continue;
        }
        let ignored = known.contains_key(&full_name);
        let trial = Trial::test(full_name, move || {
            run_case(&name, &case_dir, snapshots).map_err(Failed::from)
        });
        trials.push(trial.with_ignored_flag(ignored));
    }
}

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Output {
    fn crashed(&self) -> bool {
        // `None`: killed by a signal.
        matches!(self.code, None | Some(101))
    }
}

/// Runs `cf2 compile main.cf2 ARGS` in `cwd`; `None` on a time-out.
fn run_cf2(
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
) -> Result<Option<Output>, String> {
    run_command("compile", args, cwd, env)
}

/// Runs `cf2 COMMAND main.cf2 ARGS` in `cwd`; `None` on a time-out.
fn run_command(
    subcommand: &str,
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
) -> Result<Option<Output>, String> {
    let mut command = Command::new(BINARY);
    command
        .arg(subcommand)
        .arg("main.cf2")
        .args(args)
        .current_dir(cwd)
        .env_remove("CF2PATH")
        .env_remove("CF2PROJECTS")
        .env_remove("CF2_KEEPASS_PASSWORD")
        .env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    run_with_limit(command)
}

fn run_with_limit(mut command: Command) -> Result<Option<Output>, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))?;
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut data = Vec::new();
            let _ = pipe.read_to_end(&mut data);
            String::from_utf8_lossy(&data).into_owned()
        })
    };
    let stdout = reader(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = reader(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for cf2: {e}")),
        }
    };
    Ok(Some(Output {
        code: status.code(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn run_case(name: &str, case_dir: &Path, snapshots: bool) -> Result<(), String> {
    let work = tempfile::Builder::new()
        .prefix("cf2case-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let cwd = work.path().join("case");
    copy_dir(case_dir, &cwd).map_err(|e| format!("cannot copy the case: {e}"))?;
    let has = |file: &str| cwd.join(file).exists();
    let ordered = !has("unordered");
    let loose = has("loose");

    let cwd_text = cwd.to_string_lossy().into_owned();
    let mut env = Vec::new();
    if has("env") {
        for line in read(&cwd.join("env"))?.lines() {
            if line.trim_start().starts_with('#') {
                continue;
            }
            if let Some((key, value)) = line.split_once('=') {
                let value = value.trim().replace("{case}", &cwd_text);
                env.push((key.trim().to_string(), value));
            }
        }
    }
    let explicit_args = has("args");
    let args = if explicit_args {
        shell_split(&read(&cwd.join("args"))?)?
    } else {
        vec!["-o".to_string(), "-.json".to_string()]
    };

    let subcommand = if has("command") {
        read(&cwd.join("command"))?.trim().to_string()
    } else {
        "compile".to_string()
    };
    let out = run_command(&subcommand, &args, &cwd, &env)?
        .ok_or_else(|| format!("no answer in {} s", TIME_LIMIT.as_secs()))?;
    if out.crashed() {
        return Err(format!("crashed (exit {:?}):\n{}", out.code, out.stderr));
    }

    if has("nocrash") {
        return match out.code {
            Some(0) => Ok(()),
            Some(1) if !out.stderr.trim().is_empty() => Ok(()),
            code => Err(format!(
                "exit {code:?} with stderr {:?}",
                clip(&out.stderr, 300)
            )),
        };
    }

    if has("absent") {
        for file in read(&cwd.join("absent"))?.split_whitespace() {
            if cwd.join(file).exists() {
                return Err(format!("{file} exists but must not"));
            }
        }
    }

    // `nosnapshot`: the diagnostic holds text the machine decides (a resolver's message).
    let snapshot = |stderr: &str| -> Result<(), String> {
        if snapshots && !has("nosnapshot") {
            snapshot_stderr(&subcommand, name, &cwd, work.path(), &args, stderr)
        } else {
            Ok(())
        }
    };

    if has("expect.error") {
        if out.code != Some(1) {
            return Err(format!(
                "expected a compile error (exit 1), got exit {:?}\nstdout: {}\nstderr: {}",
                out.code,
                clip(&out.stdout, 400),
                clip(&out.stderr, 400)
            ));
        }
        if !out.stdout.trim().is_empty() {
            return Err(format!(
                "a failed compile printed a configuration: {}",
                clip(&out.stdout, 300)
            ));
        }
        let err = out.stderr.to_lowercase();
        for line in read(&cwd.join("expect.error"))?.lines() {
            if line.trim().is_empty() {
                continue;
            }
            if !line
                .split(" | ")
                .any(|o| err.contains(&o.trim().to_lowercase()))
            {
                return Err(format!("stderr lacks {:?}:\n{}", line.trim(), out.stderr));
            }
        }
        return snapshot(&out.stderr);
    }

    if out.code != Some(0) {
        return Err(format!("exit {:?}:\n{}", out.code, out.stderr));
    }
    if has("expect.stderr") {
        let err = out.stderr.to_lowercase();
        for line in read(&cwd.join("expect.stderr"))?.lines() {
            if !line.trim().is_empty() && !err.contains(&line.trim().to_lowercase()) {
                return Err(format!("stderr lacks {:?}:\n{}", line.trim(), out.stderr));
            }
        }
    }

    if has("expect.stdout") {
        let want = read(&cwd.join("expect.stdout"))?;
        if out.stdout != want {
            return Err(format!(
                "stdout differs:\n--- expected\n{want}--- printed\n{}",
                out.stdout
            ));
        }
    }

    let mut expected = None;
    if has("expect.json") {
        let want = json::parse(&read(&cwd.join("expect.json"))?)
            .map_err(|e| format!("expect.json is not JSON: {e}"))?;
        let got = json::parse(&out.stdout)
            .map_err(|e| format!("stdout is not JSON ({e}): {}", clip(&out.stdout, 300)))?;
        if let Some(diff) = json::same(&want, &got, ordered, loose, "$") {
            return Err(diff);
        }
        expected = Some(want);
    }

    let files_dir = case_dir.join("expect.files");
    if files_dir.is_dir() {
        let mut files: Vec<_> = fs::read_dir(&files_dir)
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        for file in files {
            let produced = cwd.join(&file);
            if !produced.exists() {
                return Err(format!("{file} was not written"));
            }
            let got = read(&produced)?;
            let want = read(&files_dir.join(&file))?;
            if file.ends_with(".json") {
                let got = json::parse(&got).map_err(|e| format!("{file} is not JSON ({e})"))?;
                let want = json::parse(&want)
                    .map_err(|e| format!("expect.files/{file} is not JSON ({e})"))?;
                if let Some(diff) = json::same(&want, &got, ordered, loose, "$") {
                    return Err(format!("{file}: {diff}"));
                }
            } else if got != want {
                return Err(format!(
                    "{file} differs from the expected text:\n--- expected\n{want}--- written\n{got}"
                ));
            }
        }
    }

    if let (Some(expected), false) = (&expected, explicit_args) {
        round_trips(expected, &cwd, work.path(), &env, ordered, loose)?;
        batch_writes_the_same(&out.stdout, &cwd, work.path(), &env)?;
    }
    if has("expect.stderr") {
        snapshot(&out.stderr)?;
    }
    Ok(())
}

/// Batch mode streams JSON from the evaluator without building a value: its file must be
/// byte for byte what `-o -.json` prints.
fn batch_writes_the_same(
    stdout: &str,
    cwd: &Path,
    work: &Path,
    env: &[(String, String)],
) -> Result<(), String> {
    let dir = work.join("batch");
    let args: Vec<String> = ["--out-dir", &dir.to_string_lossy(), "--format", "json"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    match run_cf2(&args, cwd, env)? {
        Some(o) if o.code == Some(0) => {}
        Some(o) => return Err(format!("batch mode failed: {}", o.stderr)),
        None => return Err("batch mode: time-out".into()),
    }
    let written = read(&dir.join("main.json"))?;
    if written != stdout {
        return Err(format!(
            "batch mode wrote other JSON than `-o -.json`:\n--- batch\n{written}--- -o -.json\n{stdout}"
        ));
    }
    Ok(())
}

/// The cf2 format must read back to the same configuration; the pl format must load in Perl.
fn round_trips(
    expected: &json::Json,
    cwd: &Path,
    work: &Path,
    env: &[(String, String)],
    ordered: bool,
    loose: bool,
) -> Result<(), String> {
    let args = |a: &str| vec!["-o".to_string(), a.to_string()];
    let cf2 = match run_cf2(&args("-.cf2"), cwd, env)? {
        Some(o) if o.code == Some(0) => o.stdout,
        Some(o) => return Err(format!("cf2-format output failed: {}", o.stderr)),
        None => return Err("cf2-format output: time-out".into()),
    };
    let round = work.join("roundtrip");
    fs::create_dir_all(&round).map_err(|e| e.to_string())?;
    fs::write(round.join("main.cf2"), &cf2).map_err(|e| e.to_string())?;
    let back = match run_cf2(&args("-.json"), &round, env)? {
        Some(o) if o.code == Some(0) => o.stdout,
        Some(o) => {
            return Err(format!(
                "the cf2-format output does not compile: {}\n--- cf2 output ---\n{cf2}",
                o.stderr
            ))
        }
        None => return Err("round trip: time-out".into()),
    };
    let again = json::parse(&back).map_err(|e| format!("round trip: stdout is not JSON ({e})"))?;
    if let Some(diff) = json::same(expected, &again, ordered, loose, "$") {
        return Err(format!(
            "round trip through the cf2 format: {diff}\n--- cf2 output ---\n{cf2}"
        ));
    }

    if !perl_installed() {
        return Ok(());
    }
    let pl = match run_cf2(&args("-.pl"), cwd, env)? {
        Some(o) if o.code == Some(0) => o.stdout,
        Some(o) => return Err(format!("pl output failed: {}", o.stderr)),
        None => return Err("pl output: time-out".into()),
    };
    let pl_file = work.join("out.pl");
    fs::write(&pl_file, &pl).map_err(|e| e.to_string())?;
    let loader = "use JSON::PP; my $d = do $ARGV[0]; die \"perl: $@\" if $@; \
                  die 'the pl output evaluates to undef' unless defined $d; \
                  print JSON::PP->new->utf8->allow_nonref->allow_blessed->convert_blessed->encode($d);";
    let mut perl = Command::new("perl");
    perl.arg("-e").arg(loader).arg(&pl_file);
    let out = run_with_limit(perl)?.ok_or("perl: time-out")?;
    if out.code != Some(0) {
        return Err(format!(
            "the pl output does not load in perl: {}\n--- pl ---\n{pl}",
            out.stderr
        ));
    }
    let from_perl =
        json::parse(&out.stdout).map_err(|e| format!("pl output: not convertible ({e})"))?;
    if let Some(diff) = json::same(expected, &from_perl, false, true, "$") {
        return Err(format!("pl output: {diff}"));
    }
    Ok(())
}

fn perl_installed() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("perl").is_file()))
}

/// Snapshots the whole standard error, with the temporary folder written `{case}`.
fn snapshot_stderr(
    subcommand: &str,
    name: &str,
    cwd: &Path,
    work: &Path,
    args: &[String],
    stderr: &str,
) -> Result<(), String> {
    let mut replacements: Vec<(String, &str)> = Vec::new();
    for (path, with) in [(cwd, "{case}"), (work, "{work}")] {
        replacements.push((path.to_string_lossy().into_owned(), with));
        if let Ok(canonical) = path.canonicalize() {
            replacements.push((canonical.to_string_lossy().into_owned(), with));
        }
    }
    // Longest first, so that the case folder is replaced before the folder holding it.
    replacements.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let mut text = stderr.to_string();
    for (path, with) in &replacements {
        text = text.replace(path.as_str(), with);
    }
    let mut source = fs::read_to_string(cwd.join("main.cf2")).unwrap_or_default();
    if source.len() > 1500 {
        let cut = (0..=1500)
            .rev()
            .find(|&i| source.is_char_boundary(i))
            .unwrap_or(0);
        source.truncate(cut);
        source.push_str("…\n");
    }
    let description = format!(
        "cf2 {subcommand} main.cf2 {}\n--- main.cf2 ---\n{source}",
        args.join(" ")
    );
    let name = name.to_string();
    let result = std::panic::catch_unwind(move || {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(Path::new(MANIFEST_DIR).join("tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_description(description);
        settings.bind(|| insta::assert_snapshot!(name, text));
    });
    result.map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("the stderr snapshot differs (review it with `cargo insta review`): {message}")
    })
}

/// Splits a command line into words: whitespace separates; `'...'` is taken as is; in `"..."`
/// a backslash escapes `\`, `"`, `$` and `` ` ``; elsewhere a backslash escapes any character.
fn shell_split(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(format!("args: unclosed quote in {line:?}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('\\' | '"' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(format!("args: unclosed quote in {line:?}")),
                        },
                        Some(c) => word.push(c),
                        None => return Err(format!("args: unclosed quote in {line:?}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(c) => word.push(c),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// A small JSON reader that keeps the order of object members, and the comparison of
/// `run.py`.
mod json {
    #[derive(Debug, Clone, PartialEq)]
    pub enum Json {
        Null,
        Bool(bool),
        Number(f64),
        Text(String),
        List(Vec<Json>),
        Object(Vec<(String, Json)>),
    }

    pub fn parse(text: &str) -> Result<Json, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
            text,
        };
        let value = p.value(0)?;
        p.space();
        if p.i != p.s.len() {
            return Err(format!("trailing text at byte {}", p.i));
        }
        Ok(value)
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
        text: &'a str,
    }

    impl Parser<'_> {
        fn space(&mut self) {
            while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            }
        }

        fn err<T>(&self, what: &str) -> Result<T, String> {
            Err(format!("{what} at byte {}", self.i))
        }

        fn eat(&mut self, word: &str) -> bool {
            if self.s[self.i..].starts_with(word.as_bytes()) {
                self.i += word.len();
                true
            } else {
                false
            }
        }

        fn value(&mut self, depth: usize) -> Result<Json, String> {
            if depth > 5000 {
                return self.err("nesting too deep");
            }
            self.space();
            let Some(&c) = self.s.get(self.i) else {
                return self.err("unexpected end");
            };
            match c {
                b'n' if self.eat("null") => Ok(Json::Null),
                b't' if self.eat("true") => Ok(Json::Bool(true)),
                b'f' if self.eat("false") => Ok(Json::Bool(false)),
                b'"' => Ok(Json::Text(self.string()?)),
                b'[' => {
                    self.i += 1;
                    let mut items = Vec::new();
                    self.space();
                    if self.eat("]") {
                        return Ok(Json::List(items));
                    }
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.space();
                        if self.eat("]") {
                            return Ok(Json::List(items));
                        }
                        if !self.eat(",") {
                            return self.err("expected , or ]");
                        }
                    }
                }
                b'{' => {
                    self.i += 1;
                    let mut members = Vec::new();
                    self.space();
                    if self.eat("}") {
                        return Ok(Json::Object(members));
                    }
                    loop {
                        self.space();
                        if self.s.get(self.i) != Some(&b'"') {
                            return self.err("expected a member name");
                        }
                        let key = self.string()?;
                        self.space();
                        if !self.eat(":") {
                            return self.err("expected :");
                        }
                        let value = self.value(depth + 1)?;
                        members.push((key, value));
                        self.space();
                        if self.eat("}") {
                            return Ok(Json::Object(members));
                        }
                        if !self.eat(",") {
                            return self.err("expected , or }");
                        }
                    }
                }
                b'-' | b'0'..=b'9' => {
                    let start = self.i;
                    while self.i < self.s.len()
                        && matches!(
                            self.s[self.i],
                            b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                        )
                    {
                        self.i += 1;
                    }
                    self.text[start..self.i]
                        .parse()
                        .map(Json::Number)
                        .or_else(|_| self.err("bad number"))
                }
                _ => self.err("unexpected character"),
            }
        }

        fn hex4(&mut self) -> Result<u32, String> {
            let digits = self
                .text
                .get(self.i..self.i + 4)
                .ok_or("short \\u escape")?;
            self.i += 4;
            u32::from_str_radix(digits, 16).map_err(|e| e.to_string())
        }

        fn string(&mut self) -> Result<String, String> {
            self.i += 1; // the opening quote
            let mut out = String::new();
            loop {
                let start = self.i;
                while self.i < self.s.len() && !matches!(self.s[self.i], b'"' | b'\\') {
                    self.i += 1;
                }
                out.push_str(&self.text[start..self.i]);
                match self.s.get(self.i) {
                    None => return self.err("unterminated string"),
                    Some(b'"') => {
                        self.i += 1;
                        return Ok(out);
                    }
                    _ => {
                        self.i += 1;
                        let Some(&e) = self.s.get(self.i) else {
                            return self.err("unterminated string");
                        };
                        self.i += 1;
                        match e {
                            b'"' => out.push('"'),
                            b'\\' => out.push('\\'),
                            b'/' => out.push('/'),
                            b'b' => out.push('\u{8}'),
                            b'f' => out.push('\u{c}'),
                            b'n' => out.push('\n'),
                            b'r' => out.push('\r'),
                            b't' => out.push('\t'),
                            b'u' => {
                                let mut code = self.hex4()?;
                                if (0xD800..0xDC00).contains(&code) && self.eat("\\u") {
                                    let low = self.hex4()?;
                                    code = 0x10000
                                        + ((code - 0xD800) << 10)
                                        + (low.wrapping_sub(0xDC00) & 0x3FF);
                                }
                                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                            }
                            _ => return self.err("bad escape"),
                        }
                    }
                }
            }
        }
    }

    fn show(v: &Json) -> String {
        let text = match v {
            Json::Null => "null".to_string(),
            Json::Bool(b) => b.to_string(),
            Json::Number(n) => n.to_string(),
            Json::Text(t) => format!("{t:?}"),
            Json::List(items) => format!(
                "[{}]",
                items.iter().map(show).collect::<Vec<_>>().join(", ")
            ),
            Json::Object(m) => format!(
                "{{{}}}",
                m.iter()
                    .map(|(k, v)| format!("{k:?}: {}", show(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        super::clip(&text, 80)
    }

    fn as_number(v: &Json) -> Option<f64> {
        match v {
            Json::Number(n) => Some(*n),
            Json::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }

    fn close(e: f64, a: f64) -> bool {
        (e - a).abs() <= 1e-9 * e.abs().max(1.0)
    }

    /// `None` when equal, else a short description of the first difference.
    pub fn same(
        expected: &Json,
        actual: &Json,
        ordered: bool,
        loose: bool,
        at: &str,
    ) -> Option<String> {
        match (expected, actual) {
            (Json::Object(e), a) => {
                let Json::Object(a) = a else {
                    return Some(format!("{at}: expected a block, got {}", show(a)));
                };
                let ek: Vec<&String> = e.iter().map(|(k, _)| k).collect();
                let ak: Vec<&String> = a.iter().map(|(k, _)| k).collect();
                let mut es = ek.clone();
                let mut as_ = ak.clone();
                es.sort();
                as_.sort();
                if es != as_ {
                    let missing: Vec<_> = es.iter().filter(|k| !as_.contains(k)).collect();
                    let extra: Vec<_> = as_.iter().filter(|k| !es.contains(k)).collect();
                    return Some(format!(
                        "{at}: keys differ: missing {missing:?}, unexpected {extra:?}"
                    ));
                }
                if ordered && ek != ak {
                    return Some(format!("{at}: key order {ak:?}, expected {ek:?}"));
                }
                e.iter().find_map(|(k, ev)| {
                    let av = &a.iter().find(|(ak, _)| ak == k)?.1;
                    same(ev, av, ordered, loose, &format!("{at}.{k}"))
                })
            }
            (Json::List(e), a) => match a {
                Json::List(a) if a.len() == e.len() => e
                    .iter()
                    .zip(a)
                    .enumerate()
                    .find_map(|(i, (e, a))| same(e, a, ordered, loose, &format!("{at}.{i}"))),
                _ => Some(format!(
                    "{at}: expected {}, got {}",
                    show(expected),
                    show(actual)
                )),
            },
            (Json::Bool(_), _) | (_, Json::Bool(_)) => {
                if loose && !matches!(actual, Json::Bool(_)) {
                    let one = matches!(actual, Json::Number(n) if *n == 1.0)
                        || matches!(actual, Json::Text(t) if t == "1");
                    let zero = matches!(actual, Json::Number(n) if *n == 0.0)
                        || matches!(actual, Json::Text(t) if t == "0" || t.is_empty())
                        || matches!(actual, Json::Null);
                    if (one && *expected == Json::Bool(true))
                        || (zero && *expected == Json::Bool(false))
                    {
                        return None;
                    }
                }
                (expected != actual)
                    .then(|| format!("{at}: expected {}, got {}", show(expected), show(actual)))
            }
            (Json::Number(e), Json::Number(a)) => {
                (!close(*e, *a)).then(|| format!("{at}: expected {e}, got {a}"))
            }
            _ => {
                if loose {
                    if let (Some(e), Some(a)) = (as_number(expected), as_number(actual)) {
                        if close(e, a) {
                            return None;
                        }
                    }
                }
                (expected != actual)
                    .then(|| format!("{at}: expected {}, got {}", show(expected), show(actual)))
            }
        }
    }
}
