//! Command-line behaviour that the case format of `tests/cases` cannot express: exit status 2
//! for a wrong command line, the exact text on standard output, several input files.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn cf2(dir: &Path, args: &[&str]) -> Output {
    cf2_command(dir, args).output().expect("cf2 runs")
}

/// Runs cf2 as [`cf2`] does, under the file-creation mask `umask` (set in a shell: the test
/// process's own mask is shared by every test thread).
#[cfg(unix)]
fn cf2_with_umask(dir: &Path, umask: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_cf2"))
        .args(args)
        .current_dir(dir)
        .env_remove("CF2PATH")
        .env_remove("CF2PROJECTS")
        .env("NO_COLOR", "1")
        .output()
        .expect("sh runs")
}

/// The command [`cf2`] runs, for a test that sets its standard streams itself.
fn cf2_command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cf2"));
    c.args(args)
        .current_dir(dir)
        .env_remove("CF2PATH")
        .env_remove("CF2PROJECTS")
        .env("NO_COLOR", "1");
    c
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary folder holding `main.cf2` with `source`.
fn project(source: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    fs::write(dir.path().join("main.cf2"), source).expect("write main.cf2");
    dir
}

/// Writes each `(path, content)` under `root`, making the folders on the way.
fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("make the folder");
        }
        fs::write(&path, content).expect("write the file");
    }
}

#[track_caller]
fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "exit status\n--- stdout\n{}--- stderr\n{}",
        stdout(o),
        stderr(o)
    );
}

/// Exit 2, nothing on stdout, a message on stderr, and no file written in `dir` but main.cf2.
#[track_caller]
fn assert_usage_error(dir: &Path, o: &Output, message: &str) {
    assert_exit(o, 2);
    assert_eq!(
        stdout(o),
        "",
        "a wrong command line prints no configuration"
    );
    assert!(
        stderr(o).to_lowercase().contains(&message.to_lowercase()),
        "stderr lacks {message:?}:\n{}",
        stderr(o)
    );
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["main.cf2"], "a wrong command line writes no file");
}

const SIMPLE: &str = "A => 1\nB => \"s\"\nL => [x, 2]\n";

#[test]
fn no_file_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile"]);
    assert_usage_error(dir.path(), &o, "<FILE>");
}

#[test]
fn no_subcommand_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &[]);
    assert_exit(&o, 2);
}

#[test]
fn unknown_output_extension_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "x.unknownext"]);
    assert_usage_error(dir.path(), &o, "unknown format `unknownext`");
}

#[test]
fn explain_without_a_resource_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["explain", "main.cf2"]);
    assert_usage_error(dir.path(), &o, "<RESOURCE>");
}

/// `explain` reads as `compile` does (the options are shared), and its command-line errors
/// point at its own help.
#[test]
fn explain_checks_the_reading_options_as_compile_does() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["explain", "main.cf2", "A", "-F", "nowhere"]);
    assert_usage_error(
        dir.path(),
        &o,
        "-F `nowhere`: the function directory `nowhere` does not exist",
    );
    assert!(
        stderr(&o).contains("Try 'cf2 explain --help'"),
        "{}",
        stderr(&o)
    );
}

/// Several resources: one explanation each, separated by an empty line, in the order asked.
#[test]
fn explain_prints_each_resource_asked_for() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["explain", "main.cf2", "B", "A"]);
    assert_exit(&o, 0);
    assert_eq!(
        stdout(&o),
        "B = \"s\"  [assignment]\n  from     main.cf2:2:1  =>  `B => \"s\"`\n\n\
         A = 1  [assignment]\n  from     main.cf2:1:1  =>  `A => 1`\n"
    );
}

/// Reference §2.2: "The default format is cf2".
#[test]
fn output_name_without_extension_is_cf2() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "noextension"]);
    assert_exit(&o, 0);
    let written = fs::read_to_string(dir.path().join("noextension")).unwrap();
    assert_eq!(written, "A => 1\nB => \"s\"\nL => [x, 2]\n");
}

#[test]
fn unknown_output_extension_after_a_good_one_writes_nothing() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "-o", "good.json", "-o", "bad.xml"],
    );
    assert_usage_error(dir.path(), &o, "xml");
}

#[test]
fn unknown_debug_option_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-Dfoo"]);
    assert_usage_error(dir.path(), &o, "foo");
}

#[test]
fn unknown_warning_option_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-Wall"]);
    assert_usage_error(dir.path(), &o, "all");
}

#[test]
fn unknown_option_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "--frobnicate"]);
    assert_usage_error(dir.path(), &o, "--frobnicate");
}

#[test]
fn unknown_out_dir_format_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "--out-dir", "out", "--format", "xml"],
    );
    assert_usage_error(dir.path(), &o, "xml");
}

#[test]
fn project_without_equals_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "--project", "noequals"],
    );
    assert_usage_error(dir.path(), &o, "NAME=DIR");
}

#[test]
fn output_and_out_dir_together_are_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "-o", "a.json", "--out-dir", "out"],
    );
    assert_usage_error(dir.path(), &o, "--out-dir");
}

#[test]
fn several_files_need_out_dir() {
    let dir = project(SIMPLE);
    fs::write(dir.path().join("other.cf2"), "X => 1\n").unwrap();
    let o = cf2(dir.path(), &["compile", "main.cf2", "other.cf2"]);
    assert_exit(&o, 2);
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("--out-dir"), "{}", stderr(&o));
}

#[test]
fn help_and_version_exit_zero() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "--help"]);
    assert_exit(&o, 0);
    assert!(
        stdout(&o).contains("-Wdup") || stdout(&o).contains("-W"),
        "{}",
        stdout(&o)
    );
    let o = cf2(dir.path(), &["--version"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).starts_with("cf2 "), "{}", stdout(&o));
}

#[test]
fn missing_main_file_is_a_configuration_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "nope.cf2"]);
    assert_exit(&o, 1);
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("nope.cf2"), "{}", stderr(&o));
}

#[test]
fn default_output_is_cf2_on_stdout() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "A => 1\nB => \"s\"\nL => [x, 2]\n");
    assert_eq!(stderr(&o), "");
}

#[test]
fn dash_is_cf2_on_stdout() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "A => 1\nB => \"s\"\nL => [x, 2]\n");
}

#[test]
fn dash_with_extension_picks_the_format() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-.json"]);
    assert_exit(&o, 0);
    assert_eq!(
        stdout(&o),
        "{\n  \"A\": 1,\n  \"B\": \"s\",\n  \"L\": [\n    \"x\",\n    2\n  ]\n}\n"
    );
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-.yaml"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "A: 1\nB: s\nL:\n  - x\n  - 2\n");
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-.pl"]);
    assert_exit(&o, 0);
    assert_eq!(
        stdout(&o),
        "use utf8;\n+{\n  'A' => 1,\n  'B' => 's',\n  'L' => ['x', 2],\n};\n"
    );
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-.toml"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "A = 1\nB = \"s\"\nL = [\"x\", 2]\n");
}

#[test]
fn subtree_on_stdout() {
    let dir = project("Web => { Port => 80 }\n");
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "-o", "-.json:Web.Port"],
    );
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "80\n");
}

#[test]
fn failed_compile_prints_no_configuration() {
    let dir = project("A => 1\nB => fail('no')\n");
    for args in [
        &["compile", "main.cf2"][..],
        &["compile", "main.cf2", "-o", "-.json", "-o", "x.json"],
    ] {
        let o = cf2(dir.path(), args);
        assert_exit(&o, 1);
        assert_eq!(stdout(&o), "");
        assert!(
            stderr(&o).starts_with("main.cf2:2:6: error: no"),
            "{}",
            stderr(&o)
        );
        assert!(!dir.path().join("x.json").exists());
    }
}

#[test]
fn a_failed_output_writes_no_other_output() {
    let dir = project("A => 1\nL => [1]\n");
    let o = cf2(
        dir.path(),
        &[
            "compile", "main.cf2", "-o", "a.json", "-o", "-.json", "-o", "x.toml:L",
        ],
    );
    assert_exit(&o, 1);
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("TOML"), "{}", stderr(&o));
    assert!(!dir.path().join("a.json").exists());
    assert!(!dir.path().join("x.toml").exists());
}

#[test]
fn unwritable_output_is_an_error_naming_the_file() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "-o", "no/such/dir/x.json"],
    );
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("no/such/dir/x.json"), "{}", stderr(&o));
}

#[test]
fn warnings_and_trace_go_to_stderr_only() {
    let dir = project("A => 1\nA => 1\nwarn(careful)\n");
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "-Wdup", "-Deval", "-o", "-.json"],
    );
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "{\n  \"A\": 1\n}\n");
    let err = stderr(&o);
    assert!(err.contains("main.cf2:3:1: warning: careful"), "{err}");
    assert!(
        err.contains("main.cf2:2:1: warning: duplicate definition of `A`"),
        "{err}"
    );
    assert!(err.contains("main.cf2:1:1"), "{err}");
}

#[test]
fn duplicates_are_not_reported_without_wdup() {
    let dir = project("A => 1\nA => 1\n");
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-.json"]);
    assert_exit(&o, 0);
    assert_eq!(stderr(&o), "");
}

#[test]
fn out_dir_compiles_every_file() {
    let dir = project(SIMPLE);
    fs::write(dir.path().join("other.cf2"), "X => [1]\n").unwrap();
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "main.cf2",
            "other.cf2",
            "--out-dir",
            "out",
            "--format",
            "yaml",
        ],
    );
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "");
    let out = dir.path().join("out");
    assert_eq!(
        fs::read_to_string(out.join("main.yaml")).unwrap(),
        "A: 1\nB: s\nL:\n  - x\n  - 2\n"
    );
    assert_eq!(
        fs::read_to_string(out.join("other.yaml")).unwrap(),
        "X:\n  - 1\n"
    );
}

#[test]
fn out_dir_failure_is_exit_1_and_keeps_the_good_outputs() {
    let dir = project(SIMPLE);
    fs::write(dir.path().join("bad.cf2"), "B => fail(boom)\n").unwrap();
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "bad.cf2", "--out-dir", "out"],
    );
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("bad.cf2:1:6: error: boom"),
        "{}",
        stderr(&o)
    );
    assert!(dir.path().join("out/main.json").exists());
    assert!(!dir.path().join("out/bad.json").exists());
}

/// D06: many hosts failing on one aspect: the diagnostic once, the note and the summary
/// name the first ten hosts (in the order given, whatever thread finished first) and count
/// the rest.
#[test]
fn out_dir_shared_error_is_printed_once_naming_the_hosts() {
    let dir = project("Hostname => ok\n");
    fs::write(dir.path().join("web.cf2"), "A => $Nope\n").unwrap();
    let mut args = vec!["compile".to_string(), "main.cf2".to_string()];
    for i in (1..=12).rev() {
        let name = format!("h{i:02}.cf2");
        fs::write(dir.path().join(&name), "import(web)\n").unwrap();
        args.push(name);
    }
    args.extend(["--out-dir", "out", "-j", "4"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = cf2(dir.path(), &args);
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    let first_ten = "h12.cf2, h11.cf2, h10.cf2, h09.cf2, h08.cf2, h07.cf2, h06.cf2, h05.cf2, \
                     h04.cf2, h03.cf2 and 2 more";
    assert!(
        err.contains(&format!("= note: in the configurations of {first_ten}\n")),
        "{err}"
    );
    assert!(
        err.ends_with(&format!(
            "cf2: 12 of 13 configurations failed to compile: {first_ten}\n"
        )),
        "{err}"
    );
    assert!(dir.path().join("out/main.json").exists());
    // The same bytes on every run.
    for _ in 0..3 {
        assert_eq!(stderr(&cf2(dir.path(), &args)), err);
    }
}

/// D21: a `-F` directory that is not there is a typo, reported before compiling rather
/// than as an unknown function at an innocent call.
#[test]
fn missing_function_directory_is_a_usage_error() {
    let dir = project("Net => cidr('10.0.0.0/8')\n");
    let o = cf2(dir.path(), &["compile", "main.cf2", "-F", "fucntions"]);
    assert_usage_error(
        dir.path(),
        &o,
        "cf2: -F `fucntions`: the function directory `fucntions` does not exist",
    );
    let o = cf2(dir.path(), &["compile", "main.cf2", "-F", ".:main.cf2"]);
    assert_usage_error(
        dir.path(),
        &o,
        "the function directory `main.cf2` is not a directory",
    );
}

/// A flag given twice (a script adding `-p` to a command that has it) is the flag once,
/// not a usage error; repeatable options still accumulate.
#[test]
fn a_flag_given_twice_is_given_once() {
    let dir = project("private X => 1\nY => 2\n");
    let o = cf2(
        dir.path(),
        &[
            "compile", "main.cf2", "-p", "-p", "-o", "-.json", "-o", "y.json:Y",
        ],
    );
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("\"X\": 1"), "{}", stdout(&o));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("y.json"))
            .unwrap()
            .trim(),
        "2"
    );
}

/// Directories named by --project-dir and --project are meant to be there: a typo is
/// told at once, not as a missing import later. A missing --allow-dir is only warned
/// about (it allows nothing more).
#[test]
fn missing_option_directories_are_usage_errors() {
    let dir = project("X => 1\n");
    let o = cf2(dir.path(), &["compile", "main.cf2", "--allow-dir", "sites"]);
    assert_exit(&o, 0);
    assert!(
        stderr(&o).contains(
            "cf2: warning: --allow-dir `sites` is not a directory: no file is allowed through it"
        ),
        "{}",
        stderr(&o)
    );
    for (args, message) in [
        (
            &["--project-dir", "main.cf2"][..],
            "cf2: --project-dir: the directory `main.cf2` is not a directory",
        ),
        (
            &["--project", "lib=libs"][..],
            "cf2: --project `lib=libs`: the directory `libs` does not exist",
        ),
    ] {
        let mut all = vec!["compile", "main.cf2"];
        all.extend_from_slice(args);
        let o = cf2(dir.path(), &all);
        assert_usage_error(dir.path(), &o, message);
    }
}

/// D32: `-o web.json:` is a path forgotten; the whole configuration is `-o web.json`.
#[test]
fn empty_path_after_colon_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "web.json:"]);
    assert_usage_error(
        dir.path(),
        &o,
        "cf2: -o `web.json:`: the resource path after `:` is empty\n\
         hint: `-o web.json` writes the whole configuration, `-o web.json:Web.Ports` the \
         resource `Web.Ports`",
    );
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-.json:"]);
    assert_usage_error(dir.path(), &o, "the resource path after `:` is empty");
}

#[test]
fn diagnostics_start_with_file_line_column() {
    let dir = project("A => 1\nB => $Nope\n");
    let o = cf2(dir.path(), &["compile", "main.cf2"]);
    assert_exit(&o, 1);
    let err = stderr(&o);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("main.cf2:2:7: error: "), "{err}");
    assert!(
        err.contains("B => $Nope"),
        "the excerpt shows the source line: {err}"
    );
}

#[test]
fn main_file_in_another_directory() {
    let dir = project("");
    write_files(
        dir.path(),
        &[
            (
                "site/main.cf2",
                "A => import(lib)\nT => read(topdir() ++ '/t.txt')\n",
            ),
            ("site/lib.cf2", "X => 1\n"),
            ("site/t.txt", "top"),
        ],
    );
    let o = cf2(dir.path(), &["compile", "site/main.cf2", "-o", "-.json"]);
    assert_exit(&o, 0);
    assert_eq!(
        stdout(&o),
        "{\n  \"A\": {\n    \"X\": 1\n  },\n  \"T\": \"top\"\n}\n"
    );
}

/// Outputs are ordinary files: readable by others under the usual umask (a temporary file
/// is created private, and renaming it into place used to keep that).
#[cfg(unix)]
#[test]
fn outputs_get_ordinary_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = project("A => 1\n");
    for args in [
        &["compile", "main.cf2", "-o", "out.json"][..],
        &["compile", "main.cf2", "--out-dir", "d"],
    ] {
        assert_exit(&cf2_with_umask(dir.path(), "022", args), 0);
    }
    for file in ["out.json", "d/main.json"] {
        let mode = fs::metadata(dir.path().join(file))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o644, "{file} has mode {mode:o}");
    }
}

/// An output that replaces a file keeps that file's mode, in a single compile and in a batch,
/// whatever the umask: an operator who made a generated file holding passwords 0600 does
/// not find it world-readable after the next compile (audit 64 #12).
#[cfg(unix)]
#[test]
fn a_replaced_output_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = project("A => 1\n");
    fs::create_dir(dir.path().join("d")).unwrap();
    for (file, mode) in [("out.json", 0o600), ("d/main.json", 0o640)] {
        let path = dir.path().join(file);
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    }
    for args in [
        &["compile", "main.cf2", "-o", "out.json"][..],
        &["compile", "main.cf2", "--out-dir", "d"],
    ] {
        assert_exit(&cf2_with_umask(dir.path(), "022", args), 0);
    }
    for (file, mode) in [("out.json", 0o600), ("d/main.json", 0o640)] {
        let path = dir.path().join(file);
        let got = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(got, mode, "{file} has mode {got:o}");
        assert_ne!(
            fs::read_to_string(&path).unwrap(),
            "{}",
            "{file} was rewritten"
        );
    }
}

/// A main file is known by its canonical path however it is named (a batch reads it from
/// its directory's canonical form when its own name is not a link): through a symbolic link
/// to the file or to its directory, its imports are searched from where it really is, and
/// importing it from there is importing the main file itself.
#[cfg(unix)]
#[test]
fn main_files_reached_through_links_are_the_files_they_name() {
    use std::os::unix::fs::symlink;
    let dir = project("");
    let root = dir.path();
    fs::create_dir(root.join("hosts")).unwrap();
    write_files(
        root,
        &[
            ("lib/common.cf2", "X => 1\n"),
            ("lib/site.cf2", "import(common)\nA => $X\n"),
            ("lib/self.cf2", "X => import(self)\n"),
        ],
    );
    symlink("../lib/site.cf2", root.join("hosts/web.cf2")).unwrap();
    symlink("../lib/self.cf2", root.join("hosts/loop.cf2")).unwrap();
    symlink("lib", root.join("via")).unwrap();
    let o = cf2(
        root,
        &[
            "compile",
            "hosts/web.cf2",
            "via/site.cf2",
            "hosts/loop.cf2",
            "--out-dir",
            "out",
        ],
    );
    assert_exit(&o, 1);
    for out in ["out/web.json", "out/site.json"] {
        assert_eq!(
            fs::read_to_string(root.join(out)).unwrap(),
            "{\n  \"X\": 1,\n  \"A\": 1\n}\n"
        );
    }
    assert!(
        stderr(&o).contains("import cycle: hosts/loop.cf2 → hosts/loop.cf2"),
        "{}",
        stderr(&o)
    );
    let o = cf2(root, &["compile", "via/self.cf2"]);
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("import cycle: via/self.cf2 → via/self.cf2"),
        "{}",
        stderr(&o)
    );
}

/// An import is known by its canonical path too: a file imported by its own name, through
/// a link to it and through a link to its directory is one file, imported once (each file
/// is read from its directory's canonical form only when its own name is not a link).
#[cfg(unix)]
#[test]
fn imports_reached_through_links_are_the_files_they_name() {
    use std::os::unix::fs::symlink;
    let dir = project("");
    let root = dir.path();
    write_files(
        root,
        &[
            ("lib/common.cf2", "Count ~(sum)> 1\n"),
            (
                "hosts/h.cf2",
                "import('../alias')\nimport('../lib/common')\nimport('../via/common')\n",
            ),
        ],
    );
    symlink("lib/common.cf2", root.join("alias.cf2")).unwrap();
    symlink("lib", root.join("via")).unwrap();
    let o = cf2(root, &["compile", "hosts/h.cf2", "-o", "-.json"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "{\n  \"Count\": 1\n}\n");
}

/// A batch remembers where imports resolved, for the next hosts. A compile that imports
/// its own main file (a cycle, here) must not leave that file's id behind: in the next
/// compile the same id is that compile's own main file.
#[test]
fn out_dir_import_of_a_main_file_is_not_remembered_as_shared() {
    let dir = project("");
    fs::write(
        dir.path().join("a.cf2"),
        "Role => x\nSelf => if ($Role == x) then import('a') else 0\nA => 1\n",
    )
    .unwrap();
    fs::write(dir.path().join("z.cf2"), "Role => y\nimport('a')\nZ => 1\n").unwrap();
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "a.cf2",
            "z.cf2",
            "--out-dir",
            "out",
            "--jobs",
            "1",
        ],
    );
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("a.cf2"), "{}", stderr(&o));
    assert_eq!(
        fs::read_to_string(dir.path().join("out/z.json")).unwrap(),
        "{\n  \"Role\": \"y\",\n  \"Self\": 0,\n  \"A\": 1,\n  \"Z\": 1\n}\n"
    );
}

/// Reference §3.10 ("a default extension of .cf2 is assumed") and §2.2 (`./foo`): the main
/// file is found with `.cf2` added, as an import is; a name that has no such file is used
/// as given; a missing file says what was tried (docs/semantics.md §13).
#[test]
fn main_file_default_extension() {
    let dir = project("A => 1\n");
    fs::write(dir.path().join("main"), "A => 2\n").unwrap();
    fs::write(dir.path().join("other.conf"), "B => 3\n").unwrap();
    let o = cf2(dir.path(), &["compile", "main", "-o", "-.json"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "{\n  \"A\": 1\n}\n");
    let o = cf2(dir.path(), &["compile", "other.conf", "-o", "-.json"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "{\n  \"B\": 3\n}\n");
    let o = cf2(dir.path(), &["compile", "missing"]);
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("cannot read `missing`: no such file (nor `missing.cf2`)"),
        "{}",
        stderr(&o)
    );
}

/// `-o /dev/null` (checking that a configuration compiles) writes into the device: a file
/// renamed over it would replace `/dev/null` itself when run as root.
#[cfg(unix)]
#[test]
fn output_to_a_device_writes_into_it() {
    use std::os::unix::fs::FileTypeExt;
    let dir = project("A => 1\n");
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "/dev/null"]);
    assert_exit(&o, 0);
    let kind = fs::metadata("/dev/null").expect("/dev/null").file_type();
    assert!(kind.is_char_device(), "/dev/null is no longer a device");
}

/// A named pipe is written into, not replaced.
#[cfg(unix)]
#[test]
fn output_to_a_pipe_writes_into_it() {
    use std::os::unix::fs::FileTypeExt;
    let dir = project("A => 1\n");
    let fifo = dir.path().join("out.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap_or_default())
    };
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "out.json"]);
    assert_exit(&o, 0);
    assert_eq!(reader.join().unwrap_or_default(), "{\n  \"A\": 1\n}\n");
    let kind = fs::symlink_metadata(&fifo).expect("the pipe").file_type();
    assert!(kind.is_fifo(), "the pipe was replaced");
}

/// An output that is a symbolic link keeps the link: the file it points to gets the
/// content (and is created if the link dangles).
#[cfg(unix)]
#[test]
fn output_through_a_symbolic_link_keeps_the_link() {
    let dir = project("A => 1\n");
    fs::create_dir(dir.path().join("real")).expect("mkdir");
    std::os::unix::fs::symlink("real/t.json", dir.path().join("out.json")).expect("symlink");
    for (source, want) in [("A => 1\n", "1"), ("A => 2\n", "2")] {
        fs::write(dir.path().join("main.cf2"), source).expect("write main.cf2");
        let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "out.json"]);
        assert_exit(&o, 0);
        let link = fs::symlink_metadata(dir.path().join("out.json")).expect("the link");
        assert!(link.file_type().is_symlink(), "the link was replaced");
        let text = fs::read_to_string(dir.path().join("real/t.json")).unwrap_or_default();
        assert_eq!(text, format!("{{\n  \"A\": {want}\n}}\n"));
    }
}

/// `--out-dir` into a directory that already holds outputs: a file is replaced (a hard
/// link to it keeps the old content), a pipe and a device are written into, a link — also
/// a dangling one — is followed and stays; a new name is created; nothing else is left.
/// A new name's mode is 0666 less the umask (an unnamed file linked into place); a replaced
/// file keeps its own (a temporary file renamed), with `--jobs 1` too.
#[cfg(unix)]
#[test]
fn out_dir_with_existing_outputs_keeps_what_they_are() {
    use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
    let dir = project("A => 1\n");
    let root = dir.path();
    for name in ["file", "pipe", "dev", "link", "dangling", "new"] {
        fs::write(root.join(format!("{name}.cf2")), format!("N => {name}\n")).unwrap();
    }
    fs::create_dir_all(root.join("out")).unwrap();
    fs::create_dir_all(root.join("real")).unwrap();
    fs::write(root.join("out/file.json"), "old").unwrap();
    fs::set_permissions(
        root.join("out/file.json"),
        fs::Permissions::from_mode(0o604),
    )
    .unwrap();
    fs::hard_link(root.join("out/file.json"), root.join("old.json")).unwrap();
    fs::write(root.join("real/link.json"), "old").unwrap();
    symlink("../real/link.json", root.join("out/link.json")).unwrap();
    symlink("../real/dangling.json", root.join("out/dangling.json")).unwrap();
    let piped = Command::new("mkfifo")
        .arg(root.join("out/pipe.json"))
        .status()
        .is_ok_and(|s| s.success());
    let reader = piped.then(|| {
        let fifo = root.join("out/pipe.json");
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap_or_default())
    });
    // A null device of our own (never /dev/null itself), where we may make one.
    let device = Command::new("mknod")
        .args(["-m", "666"])
        .arg(root.join("out/dev.json"))
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    let mut inputs = vec!["file.cf2", "link.cf2", "dangling.cf2", "new.cf2"];
    if piped {
        inputs.push("pipe.cf2");
    }
    if device {
        inputs.push("dev.cf2");
    }
    let mut args = vec!["compile"];
    args.extend(&inputs);
    args.extend(["--out-dir", "out", "--jobs", "1"]);
    assert_exit(&cf2_with_umask(root, "027", &args), 0);
    let json = |name: &str| format!("{{\n  \"N\": \"{name}\"\n}}\n");
    if let Some(r) = reader {
        assert_eq!(r.join().unwrap_or_default(), json("pipe"));
        let kind = fs::symlink_metadata(root.join("out/pipe.json")).unwrap();
        assert!(kind.file_type().is_fifo(), "the pipe was replaced");
    }
    if device {
        let kind = fs::symlink_metadata(root.join("out/dev.json")).unwrap();
        assert!(kind.file_type().is_char_device(), "the device was replaced");
    }
    for name in ["link", "dangling"] {
        let link = fs::symlink_metadata(root.join(format!("out/{name}.json"))).unwrap();
        assert!(
            link.file_type().is_symlink(),
            "the link {name} was replaced"
        );
        let real = root.join(format!("real/{name}.json"));
        assert_eq!(fs::read_to_string(&real).unwrap(), json(name));
    }
    assert_eq!(fs::read_to_string(root.join("old.json")).unwrap(), "old");
    for (name, expected) in [("file", 0o604), ("new", 0o640)] {
        let out = root.join(format!("out/{name}.json"));
        assert_eq!(fs::read_to_string(&out).unwrap(), json(name));
        let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, expected, "{name}.json has mode {mode:o}");
    }
    let mut left: Vec<_> = fs::read_dir(root.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut want = vec!["dangling.json", "file.json", "link.json", "new.json"];
    if piped {
        want.push("pipe.json");
    }
    if device {
        want.push("dev.json");
    }
    want.sort();
    assert_eq!(left, want, "no temporary file is left");
}

/// cf2 starts without the standard library's start-up on Linux (`start.rs`) and does its
/// parts itself. A closed standard output is reopened on `/dev/null` first, so the file an
/// output is staged in cannot become fd 1 and receive the configuration printed there.
#[cfg(unix)]
#[test]
fn closed_standard_streams_do_not_catch_an_output() {
    let dir = project("A => 1\nB => [x, y]\n");
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#""$0" compile main.cf2 -o out.json -o - >&-"#)
        .arg(env!("CARGO_BIN_EXE_cf2"))
        .current_dir(dir.path())
        .output()
        .expect("sh runs");
    assert_exit(&o, 0);
    let json = fs::read_to_string(dir.path().join("out.json")).expect("out.json");
    assert_eq!(
        json,
        "{\n  \"A\": 1,\n  \"B\": [\n    \"x\",\n    \"y\"\n  ]\n}\n"
    );
}

/// Writing to a pipe whose reader has gone is an error that cf2 reports (exit 1), not a
/// signal that kills it: `SIGPIPE` is ignored, as the standard library's start-up does.
#[cfg(unix)]
#[test]
fn a_closed_pipe_is_an_error_not_a_signal() {
    let big: String = (0..20_000).map(|i| format!("R{i} => {i}\n")).collect();
    let dir = project(&big);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cf2"))
        .args(["compile", "main.cf2"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cf2 runs");
    // Close the reading end before cf2 writes.
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("cf2 ends");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        o.status.signal(),
        None,
        "killed by a signal: {:?}",
        o.status
    );
    assert_exit(&o, 1);
}

/// An empty part in the resource path of `-o` is a wrong command line, not a resource that
/// is not defined.
#[test]
fn output_path_with_an_empty_part_is_a_usage_error() {
    let dir = project("a => { b => 1 }\n");
    for path in ["a.", "a..b", ".a", "."] {
        let spec = format!("-.json:{path}");
        let o = cf2(dir.path(), &["compile", "main.cf2", "-o", &spec]);
        assert_usage_error(
            dir.path(),
            &o,
            &format!("-o `{spec}`: the resource path `{path}` has an empty part"),
        );
    }
}

/// A part of `-o`'s resource path that is neither a name nor a list index is a wrong command
/// line too (exit 2), not a resource the configuration lacks; a `/` in it means the `:` was
/// meant as part of a file name, which the hint explains (audit 64 #9).
#[test]
fn output_path_parts_must_be_names_or_indexes() {
    let dir = project("A => { L => [1, 2] }\n");
    for (spec, message) in [
        (
            "-.json: A",
            "` A` in the resource path ` A` is neither a resource name nor a list index",
        ),
        ("-.json:$A", "`$A` in the resource path `$A` is neither"),
        (
            "-.json:A.L.(1)",
            "`(1)` in the resource path `A.L.(1)` is neither",
        ),
        (
            "-.json:A.L.-1",
            "`-1` in the resource path `A.L.-1` is neither",
        ),
        // Not an index in the language either (`$L.('+1')` is an error).
        (
            "-.json:A.L.+1",
            "`+1` in the resource path `A.L.+1` is neither",
        ),
        ("-.json:if", "`if` in the resource path `if` is neither"),
        (
            "-.json:A.L.99999999999999999999",
            "the list index `99999999999999999999` in the resource path is too large",
        ),
        (
            "dir:1/x.json",
            "hint: the first `:` ends the output's name, so this writes `dir`",
        ),
    ] {
        let o = cf2(dir.path(), &["compile", "main.cf2", "-o", spec]);
        assert_usage_error(dir.path(), &o, message);
    }
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "-.json:A.L.1"]);
    assert_exit(&o, 0);
    // Without a path: the whole configuration (an empty path has no parts to check).
    for args in [
        &["compile", "main.cf2"][..],
        &["compile", "main.cf2", "-o", "-.json"],
    ] {
        let o = cf2(dir.path(), args);
        assert_exit(&o, 0);
    }
}

/// Two outputs to one file: one would silently win.
#[test]
fn two_outputs_to_one_file_are_a_usage_error() {
    let dir = project(SIMPLE);
    let absolute = dir.path().join("x.json");
    let absolute = absolute.to_string_lossy();
    for second in ["x.json:B", "./x.json", absolute.as_ref()] {
        let o = cf2(
            dir.path(),
            &["compile", "main.cf2", "-o", "x.json", "-o", second],
        );
        assert_usage_error(
            dir.path(),
            &o,
            &format!("-o `x.json` and -o `{second}` both write `x.json`"),
        );
    }
    // Standard output is not a file: `-` and `-.json` both print.
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "-o", "-", "-o", "-.json"],
    );
    assert_exit(&o, 0);
}

/// `--out-dir` writes DIR/NAME.FORMAT with FORMAT as given: `yml` writes `NAME.yml`.
#[test]
fn out_dir_names_outputs_after_the_format_given() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "--out-dir", "out", "--format", "yml"],
    );
    assert_exit(&o, 0);
    let names: Vec<_> = fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["main.yml"]);
    let help = cf2(dir.path(), &["compile", "--help"]);
    assert!(
        stdout(&help).contains("DIR/NAME.FORMAT"),
        "{}",
        stdout(&help)
    );
}

/// An output never replaces a main file: known from the command line (exit 2), nothing is
/// written, whether the output names it, reaches it through a link, or is the file
/// `--out-dir` would write.
#[cfg(unix)]
#[test]
fn an_output_that_is_a_main_file_is_a_usage_error() {
    let source = "private Base => 40\nDisk => $Base + 2\n";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(root, &[("conf/site.cf2", source)]);
    std::os::unix::fs::symlink("conf/site.cf2", root.join("link.cf2")).unwrap();
    for args in [
        &[
            "compile",
            "conf/site.cf2",
            "-o",
            "x.json",
            "-o",
            "conf/site.cf2",
        ][..],
        &["compile", "conf/site", "-o", "./conf/site.cf2:Disk"],
        &["compile", "conf/site.cf2", "-o", "x.json", "-o", "link.cf2"],
        &[
            "compile",
            "conf/site.cf2",
            "--out-dir",
            "conf",
            "--format",
            "cf2",
        ],
    ] {
        let o = cf2(root, args);
        assert_exit(&o, 2);
        assert!(
            stderr(&o).contains("would replace the main file `conf/site"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_eq!(
            fs::read_to_string(root.join("conf/site.cf2")).unwrap(),
            source
        );
        assert!(!root.join("x.json").exists(), "{args:?}");
    }
}

/// An output never replaces a file the compile read (an import, a file read with
/// `read()`): found once the compile has read them (exit 1), before anything is written.
#[cfg(unix)]
#[test]
fn an_output_that_is_a_file_the_compile_reads_is_refused() {
    let site = "private Base => 40\nDisk => $Base + 2\nimport(common)\nT => read('data.yaml')\n";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(
        root,
        &[
            ("conf/site.cf2", site),
            ("conf/common.cf2", "Common => 1\n"),
            ("conf/data.yaml", "text"),
            ("other/common.cf2", "Other => 2\n"),
        ],
    );
    for (output, read) in [
        ("common.cf2:Disk", "common.cf2"),
        ("data.yaml:T", "data.yaml"),
    ] {
        let o = cf2(
            &root.join("conf"),
            &["compile", "site.cf2", "-o", "x.json", "-o", output],
        );
        assert_exit(&o, 1);
        assert!(
            stderr(&o).contains(&format!("the output `{read}` would replace")),
            "{output}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(&format!("conf/{read}`, a file this compile reads")));
        assert!(!root.join("conf/x.json").exists(), "{output}");
    }
    assert_eq!(
        fs::read_to_string(root.join("conf/common.cf2")).unwrap(),
        "Common => 1\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("conf/data.yaml")).unwrap(),
        "text"
    );
    // In a batch, the host whose output would replace a file another host reads fails,
    // whichever is compiled first; the others are written.
    write_files(root, &[("hosts/web.cf2", "import(common)\n")]);
    let batch = |out: &str, inputs: [&str; 2]| {
        let mut args = vec!["compile"];
        args.extend(inputs);
        args.extend([
            "-j",
            "1",
            "--project-dir",
            "conf",
            "--out-dir",
            out,
            "--format",
            "cf2",
        ]);
        cf2(root, &args)
    };
    for inputs in [
        ["hosts/web.cf2", "other/common.cf2"],
        ["other/common.cf2", "hosts/web.cf2"],
    ] {
        let _ = fs::remove_file(root.join("conf/web.cf2"));
        let o = batch("conf", inputs);
        assert_exit(&o, 1);
        assert!(
            stderr(&o)
                .contains("other/common.cf2: error: the output `conf/common.cf2` would replace"),
            "{inputs:?}: {}",
            stderr(&o)
        );
        assert_eq!(
            fs::read_to_string(root.join("conf/common.cf2")).unwrap(),
            "Common => 1\n"
        );
        assert_eq!(
            fs::read_to_string(root.join("conf/web.cf2")).unwrap(),
            "Common => 1\n",
            "{inputs:?}"
        );
    }
    let o = batch("out", ["hosts/web.cf2", "other/common.cf2"]);
    assert_exit(&o, 0);
}

/// A main file that is a directory is said to be one, not to be missing.
#[test]
fn a_main_file_that_is_a_directory_is_said_to_be_one() {
    let dir = project(SIMPLE);
    fs::create_dir(dir.path().join("dd.cf2")).unwrap();
    for (args, message) in [
        (
            &["compile", "dd.cf2", "-o", "-.json"][..],
            "cannot read `dd.cf2`: it is a directory",
        ),
        (
            &["compile", "dd"],
            "cannot read `dd`: no such file (and `dd.cf2` is a directory)",
        ),
        (
            &["compile", "dd.cf2", "--out-dir", "out"],
            "cannot read `dd.cf2`: it is a directory",
        ),
    ] {
        let o = cf2(dir.path(), args);
        assert_exit(&o, 1);
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("no such file\n"), "{}", stderr(&o));
    }
}

/// A batch output that cannot be written is named in the error, as a single compile's is.
#[test]
fn a_batch_write_error_names_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(
        root,
        &[
            ("hosts/web1.cf2", "A => 1\n"),
            ("hosts/web2.cf2", "B => 2\n"),
        ],
    );
    fs::create_dir_all(root.join("out/web2.json")).unwrap();
    let o = cf2(
        root,
        &[
            "compile",
            "hosts/web1.cf2",
            "hosts/web2.cf2",
            "--out-dir",
            "out",
        ],
    );
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("hosts/web2.cf2: error: cannot write `out/web2.json`: "),
        "{}",
        stderr(&o)
    );
    assert!(root.join("out/web1.json").is_file());
}

#[test]
fn jobs_without_out_dir_are_a_usage_error() {
    // Silently ignored, it would leave the user believing the compile ran in parallel.
    let dir = project(SIMPLE);
    let o = cf2(dir.path(), &["compile", "main.cf2", "-j", "2"]);
    assert_usage_error(dir.path(), &o, "--out-dir");
}

/// Without --out-dir, `--format` gives the format of standard output and of each `-o` NAME
/// whose extension names none: a deployment may need `/etc/app/app.conf` in JSON, written
/// whole or not at all, which `-o -.json > app.conf` is not.
#[test]
fn format_gives_the_format_of_outputs_without_one() {
    let dir = project(SIMPLE);
    let json = "{\n  \"A\": 1,\n  \"B\": \"s\",\n  \"L\": [\n    \"x\",\n    2\n  ]\n}\n";
    let o = cf2(dir.path(), &["compile", "main.cf2", "--format", "json"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), json);
    let o = cf2(
        dir.path(),
        &[
            "compile", "main.cf2", "--format", "JSON", "-o", "app.conf", "-o", "plain", "-o",
            "b.yaml:B",
        ],
    );
    assert_exit(&o, 0);
    assert_eq!(
        fs::read_to_string(dir.path().join("app.conf")).unwrap(),
        json
    );
    assert_eq!(fs::read_to_string(dir.path().join("plain")).unwrap(), json);
    // A name whose extension is a format keeps it.
    assert_eq!(
        fs::read_to_string(dir.path().join("b.yaml")).unwrap(),
        "s\n"
    );

    // Without --format, an unknown extension is an error that says how to write it.
    let fresh = project(SIMPLE);
    let o = cf2(fresh.path(), &["compile", "main.cf2", "-o", "app.conf"]);
    assert_usage_error(fresh.path(), &o, "-o app.conf --format json");
    // A --format that no output takes is a mistake, not ignored.
    let o = cf2(
        fresh.path(),
        &["compile", "main.cf2", "--format", "yaml", "-o", "x.json"],
    );
    assert_usage_error(
        fresh.path(),
        &o,
        "--format yaml applies to no output: `x.json` has a format of its own",
    );
    let o = cf2(fresh.path(), &["compile", "main.cf2", "--format", "xml"]);
    assert_usage_error(fresh.path(), &o, "xml");
}

/// An output named as a directory is said to be one: a trailing `/` is a command-line
/// error, and an existing directory with a dot in its name is a directory, not an unknown
/// format.
#[test]
fn an_output_named_as_a_directory_says_so() {
    let dir = project(SIMPLE);
    fs::create_dir(dir.path().join("conf.d")).unwrap();
    for name in ["missing/", "conf.d/"] {
        let o = cf2(dir.path(), &["compile", "main.cf2", "-o", name]);
        assert_exit(&o, 2);
        assert!(
            stderr(&o).contains("so it names a directory, not a file"),
            "{}",
            stderr(&o)
        );
    }
    let o = cf2(dir.path(), &["compile", "main.cf2", "-o", "conf.d"]);
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("unknown format"), "{}", stderr(&o));
}

/// `--format` is read in any case, as an output name's extension is (`-o out.JSON`).
#[test]
fn batch_format_in_any_case() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "main.cf2",
            "--out-dir",
            "out",
            "--format",
            "JSON",
        ],
    );
    assert_exit(&o, 0);
    assert!(dir.path().join("out/main.json").is_file());
}

#[test]
fn an_output_onto_a_directory_replaces_no_other_output() {
    // The directory is found before any output is renamed into place, whatever the order
    // of the `-o`s.
    for order in [["keep.json", "dd"], ["dd", "keep.json"]] {
        let dir = project(SIMPLE);
        fs::create_dir(dir.path().join("dd")).unwrap();
        fs::write(dir.path().join("keep.json"), "old").unwrap();
        let o = cf2(
            dir.path(),
            &["compile", "main.cf2", "-o", order[0], "-o", order[1]],
        );
        assert_exit(&o, 1);
        assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
        assert_eq!(
            fs::read_to_string(dir.path().join("keep.json")).unwrap(),
            "old"
        );
    }
}

#[test]
fn dev_stdout_writes_into_the_redirected_file() {
    // `-o /dev/stdout >> log` appends to log; replacing /dev/stdout's target by a new file
    // would lose what log held.
    let dir = project("A => 1\n");
    let log = dir.path().join("log.txt");
    fs::write(&log, "old\n").unwrap();
    let out = fs::OpenOptions::new().append(true).open(&log).unwrap();
    let err = fs::OpenOptions::new().append(true).open(&log).unwrap();
    let args = [
        "compile",
        "main.cf2",
        "-o",
        "/dev/stdout",
        "-o",
        "/dev/stderr",
    ];
    let o = cf2_command(dir.path(), &args)
        .stdout(out)
        .stderr(err)
        .output()
        .unwrap();
    assert_exit(&o, 0);
    assert_eq!(fs::read_to_string(&log).unwrap(), "old\nA => 1\nA => 1\n");
}

#[test]
fn an_unwritable_standard_error_is_not_a_crash() {
    // `2>/dev/full`: messages are lost, the exit status stays 0 or 1, never a panic's 101.
    let full = Path::new("/dev/full");
    if !full.exists() {
        return;
    }
    for (source, code) in [
        ("A => 1\nB => warn(hi)\nB ~(default)> 2\n", 0),
        ("A => $Nope\n", 1),
    ] {
        let dir = project(source);
        let o = cf2_command(dir.path(), &["compile", "main.cf2", "-Deval"])
            .stderr(fs::OpenOptions::new().write(true).open(full).unwrap())
            .output()
            .unwrap();
        assert_exit(&o, code);
    }
}

#[test]
fn an_unwritable_standard_output_says_so() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        return;
    }
    let dir = project("A => 1\n");
    let o = cf2_command(dir.path(), &["compile", "main.cf2"])
        .stdout(fs::OpenOptions::new().write(true).open(full).unwrap())
        .output()
        .unwrap();
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("cannot write standard output"),
        "{}",
        stderr(&o)
    );
}

/// Standard output is an output like the files: when it cannot be written, the run fails
/// and leaves no file output behind (every output appears whole or not at all), and a file
/// it would have replaced keeps its content.
#[test]
fn an_unwritable_standard_output_leaves_no_file_output() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        return;
    }
    let dir = project("A => 1\n");
    fs::write(dir.path().join("old.json"), "old").unwrap();
    let o = cf2_command(
        dir.path(),
        &[
            "compile", "main.cf2", "-o", "-", "-o", "out.json", "-o", "out.toml", "-o", "old.json",
        ],
    )
    .stdout(fs::OpenOptions::new().write(true).open(full).unwrap())
    .output()
    .unwrap();
    assert_exit(&o, 1);
    assert!(!dir.path().join("out.json").exists());
    assert!(!dir.path().join("out.toml").exists());
    assert_eq!(
        fs::read_to_string(dir.path().join("old.json")).unwrap(),
        "old"
    );
    // No temporary file is left either.
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

/// A batch's new outputs are invisible to its hosts: run from the output directory,
/// `import(common)` in one host must not find the `common.cf2` another host has just
/// written (the working directory is searched first), whichever was compiled first.
#[test]
fn a_batch_never_reads_an_output_it_creates() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(
        root,
        &[
            ("hosts/common.cf2", "Base => shared\nprivate Hidden => 1\n"),
            ("hosts/web.cf2", "import(common)\nWeb => $Hidden\n"),
        ],
    );
    for order in [
        ["hosts/common.cf2", "hosts/web.cf2"],
        ["hosts/web.cf2", "hosts/common.cf2"],
    ] {
        let _ = fs::remove_file(root.join("common.cf2"));
        let _ = fs::remove_file(root.join("web.cf2"));
        let mut args = vec!["compile"];
        args.extend(order);
        args.extend(["--out-dir", ".", "--format", "cf2", "-j", "1"]);
        let o = cf2(root, &args);
        assert_exit(&o, 0);
        let web = fs::read_to_string(root.join("web.cf2")).unwrap();
        assert_eq!(web, "Base => shared\nWeb => 1\n", "{order:?}");
    }
}

/// In a batch, each host's `-Deval` trace is headed by its file: hosts share resource names.
#[test]
fn a_batch_trace_names_each_host() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(
        root,
        &[
            ("common.cf2", "Port ~(max)> 80\n"),
            ("web1.cf2", "import(common)\nPort ~(max)> 8080\n"),
            ("web2.cf2", "import(common)\n"),
        ],
    );
    let o = cf2(
        root,
        &[
            "compile",
            "web1.cf2",
            "web2.cf2",
            "--out-dir",
            "out",
            "-Deval",
        ],
    );
    assert_exit(&o, 0);
    let err = stderr(&o);
    let web1 = err.find("-Deval: web1.cf2\neval: Port = 8080");
    let web2 = err.find("-Deval: web2.cf2\neval: Port = 80  ");
    assert!(web1.is_some() && web2 > web1, "{err}");
}

/// `--out-dir` naming a file is a wrong command line (exit 2), said as such.
#[test]
fn out_dir_naming_a_file_is_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "--out-dir", "main.cf2"],
    );
    assert_usage_error(dir.path(), &o, "--out-dir `main.cf2` is not a directory");
}

/// No output replaces a credential file the command line names: `-o dbkey` beside
/// `--keepass-keyfile dbkey` would lose the key (found by the formats audit).
#[test]
fn an_output_never_replaces_a_credential_file() {
    for option in [
        "--keepass-keyfile",
        "--keepass-password-file",
        "--gpgpass-file",
    ] {
        let dir = project(SIMPLE);
        fs::write(dir.path().join("secret"), "key\n").unwrap();
        let o = cf2(
            dir.path(),
            &["compile", "main.cf2", option, "secret", "-o", "./secret"],
        );
        assert_exit(&o, 2);
        assert!(
            stderr(&o).contains(&format!("would replace `secret`, the file of {option}")),
            "{option}: {}",
            stderr(&o)
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("secret")).unwrap(),
            "key\n"
        );
    }
    let dir = project(SIMPLE);
    fs::create_dir(dir.path().join("out")).unwrap();
    fs::write(dir.path().join("out/main.json"), "key\n").unwrap();
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "main.cf2",
            "--keepass-keyfile",
            "out/main.json",
            "--out-dir",
            "out",
        ],
    );
    assert_exit(&o, 2);
    assert!(
        stderr(&o).contains("the file of --keepass-keyfile"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("out/main.json")).unwrap(),
        "key\n"
    );
}

/// Two inputs with the same file name would write the same output: refused (exit 2), naming
/// both inputs and the output, so that among hundreds of inputs they are found at once.
#[test]
fn a_batch_with_two_inputs_of_one_name_names_both() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(
        root,
        &[("x/web.cf2", "A => 1\n"), ("y/web.cf2", "A => 2\n")],
    );
    let o = cf2(
        root,
        &["compile", "x/web.cf2", "y/web.cf2", "--out-dir", "out"],
    );
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("`x/web.cf2` and `y/web.cf2` would both write `out/web.json`"),
        "{err}"
    );
    assert!(!root.join("out/web.json").exists());
}

/// A device that cannot be written (`-o /dev/full`) is written before any file is renamed
/// into place and before standard output is printed: its failure leaves no other output,
/// whichever order the `-o`s come in (audit 64).
#[test]
fn an_unwritable_device_output_leaves_no_other_output() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = project("A => 1\n");
    for args in [
        ["compile", "main.cf2", "-o", "a.json", "-o", "/dev/full"],
        ["compile", "main.cf2", "-o", "/dev/full", "-o", "a.json"],
        ["compile", "main.cf2", "-o", "-", "-o", "/dev/full"],
    ] {
        let o = cf2(dir.path(), &args);
        assert_exit(&o, 1);
        assert!(
            stderr(&o).contains("cannot write `/dev/full`"),
            "{}",
            stderr(&o)
        );
        assert!(!dir.path().join("a.json").exists(), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}: standard output was printed");
    }
}

/// Two `-o`s naming one new file through a symbolic link to its directory are refused, as
/// two spellings of one name are: one of the outputs would be lost (audit 64).
#[cfg(unix)]
#[test]
fn two_outputs_into_one_directory_through_a_link_are_refused() {
    let dir = project("A => 1\nB => 2\n");
    fs::create_dir(dir.path().join("d1")).unwrap();
    std::os::unix::fs::symlink("d1", dir.path().join("d2")).unwrap();
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "main.cf2",
            "-o",
            "d1/x.json:A",
            "-o",
            "d2/x.json:B",
        ],
    );
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("both write"), "{}", stderr(&o));
    assert!(!dir.path().join("d1/x.json").exists());
}

/// In a batch, `-Deval` shows the trace of a host that failed too (what was decided before
/// the error), as a single compile of it does (audit 63).
#[test]
fn batch_trace_includes_failed_hosts() {
    let dir = project("A => 1\n");
    fs::write(dir.path().join("bad.cf2"), "A => 1\nB => $A + x\n").unwrap();
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "main.cf2",
            "bad.cf2",
            "--out-dir",
            "out",
            "-Deval",
        ],
    );
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("-Deval: bad.cf2\neval: A = 1"), "{err}");
    assert!(err.contains("-Deval: main.cf2\neval: A = 1"), "{err}");
}

#[test]
fn an_unreadable_pass_phrase_file_is_a_usage_error_only_when_signing() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "-S", "--gpgpass-file", "missing.txt"],
    );
    assert_usage_error(
        dir.path(),
        &o,
        "cannot read the pass phrase file `missing.txt`",
    );
    // Without -S it is not read: ignored, with a warning.
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "main.cf2",
            "--gpgpass-file",
            "missing.txt",
            "-o",
            "-.json",
        ],
    );
    assert_exit(&o, 0);
    assert!(
        stderr(&o).contains("--gpgpass-file only applies to signing outputs (-S)"),
        "{}",
        stderr(&o)
    );
}

/// `cf2 compile main.cf2 --out-dir out --format json` in `dir`.
fn batch_json(dir: &Path) -> Output {
    cf2(
        dir,
        &[
            "compile",
            "main.cf2",
            "--out-dir",
            "out",
            "--format",
            "json",
        ],
    )
}

/// A re-run into the same directory replaces each output, keeps its mode, and leaves no
/// staged file behind (the replacing outputs wait on disk, not in memory, until every host
/// has read what it reads).
#[test]
fn batch_rerun_replaces_outputs_and_leaves_no_staged_files() {
    let dir = project(SIMPLE);
    let run = || batch_json(dir.path());
    assert_exit(&run(), 0);
    let out = dir.path().join("out/main.json");
    fs::write(&out, "old").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&out, fs::Permissions::from_mode(0o600)).unwrap();
    }
    assert_exit(&run(), 0);
    assert_ne!(fs::read_to_string(&out).unwrap(), "old");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let names: Vec<String> = fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["main.json"]);
}

/// A host that fails leaves its output of an earlier run in place, and says so: a deploy
/// step must not ship it unawares.
#[test]
fn batch_failed_host_warns_of_its_stale_output() {
    let dir = project(SIMPLE);
    let run = || batch_json(dir.path());
    assert_exit(&run(), 0);
    fs::write(dir.path().join("main.cf2"), "X => $Nope\n").unwrap();
    let o = run();
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("is the output of an earlier run, left as it was"),
        "{}",
        stderr(&o)
    );
    assert!(dir.path().join("out/main.json").is_file());
}

/// A syntax error in a file several hosts import is printed once, with the hosts named,
/// not once per host (each copy carried that host's `imported here`).
#[test]
fn batch_syntax_error_in_a_shared_file_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("asp.cf2"), "X => [\n").unwrap();
    for i in 1..=3 {
        fs::write(
            dir.path().join(format!("h{i}.cf2")),
            format!("import(asp)\nN => {i}\n"),
        )
        .unwrap();
    }
    let o = cf2(
        dir.path(),
        &["compile", "h1.cf2", "h2.cf2", "h3.cf2", "--out-dir", "out"],
    );
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert_eq!(err.matches("is never closed").count(), 1, "{err}");
    assert!(
        err.contains("in the configurations of h1.cf2, h2.cf2, h3.cf2"),
        "{err}"
    );
}

/// `-j` has a ceiling: each job is a thread started at once, and `-j 20000` took the
/// machine's memory for 27 minutes of CPU on a batch of two hosts (found by the batch audit).
#[test]
fn jobs_above_the_ceiling_are_a_usage_error() {
    let dir = project(SIMPLE);
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "--out-dir", "out", "-j", "20000"],
    );
    assert_usage_error(dir.path(), &o, "20000 is not in 0..=1024");
    // At the ceiling, a batch of one host starts one thread and compiles.
    let o = cf2(
        dir.path(),
        &["compile", "main.cf2", "--out-dir", "out", "-j", "1024"],
    );
    assert_exit(&o, 0);
    assert!(dir.path().join("out/main.json").exists());
}

/// `--files-from LIST` adds the files LIST names, one per line, to those of the command
/// line: a fleet of 150,000 hosts does not fit in the system's limit on arguments.
#[test]
fn files_from_lists_the_hosts_one_per_line() {
    let dir = project("A => 0\n");
    write_files(
        dir.path(),
        &[
            ("hosts/web 1.cf2", "A => 1\n"),
            ("hosts/db.example.org.cf2", "A => 2\n"),
            // A name with a space, a Windows line ending and an empty line.
            ("list", "hosts/web 1.cf2\r\n\nhosts/db.example.org.cf2\n"),
        ],
    );
    let o = cf2(
        dir.path(),
        &[
            "compile",
            "main.cf2",
            "--files-from",
            "list",
            "--out-dir",
            "out",
        ],
    );
    assert_exit(&o, 0);
    for (name, value) in [("main", 0), ("web 1", 1), ("db.example.org", 2)] {
        let text = fs::read_to_string(dir.path().join(format!("out/{name}.json"))).unwrap();
        assert_eq!(text.trim(), format!("{{\n  \"A\": {value}\n}}"), "{name}");
    }

    // `-`: the list comes on standard input, and FILE may be left out.
    let mut c = cf2_command(
        dir.path(),
        &["compile", "--files-from", "-", "--out-dir", "piped"],
    );
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"hosts/db.example.org.cf2\n").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 0);
    assert!(dir.path().join("piped/db.example.org.json").exists());

    // A list that cannot be read, or lists nothing, is a wrong command line.
    let fresh = project("A => 0\n");
    let o = cf2(
        fresh.path(),
        &["compile", "--files-from", "missing", "--out-dir", "out"],
    );
    assert_usage_error(fresh.path(), &o, "cannot read the list of files `missing`");
    let o = cf2_command(
        fresh.path(),
        &["compile", "--files-from", "-", "--out-dir", "out"],
    )
    .stdin(std::process::Stdio::null())
    .output()
    .unwrap();
    assert_usage_error(fresh.path(), &o, "--files-from `-` lists no file");
    // Without --out-dir, one output for many hosts would not do.
    let o = cf2(dir.path(), &["compile", "--files-from", "list"]);
    assert_exit(&o, 2);
}

/// A batch killed while its outputs that replace an earlier run's waited beside them left
/// those files behind; the next batch into the directory removes them, and only them
/// (found by the batch audit).
#[test]
fn a_batch_removes_what_a_killed_batch_staged() {
    let dir = project("A => 1\n");
    let gone = {
        let mut child = Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        child.id()
    };
    let alive = std::process::id();
    let stale = format!(".main.json.cf2-new-{gone}-Ab12Cd.tmp");
    let live = format!(".main.json.cf2-new-{alive}-Ab12Cd.tmp");
    write_files(
        dir.path(),
        &[
            (&format!("out/{stale}"), "{}"),
            (&format!("out/{live}"), "{}"),
            ("out/.tmp123456", "not ours"),
        ],
    );
    let o = cf2(dir.path(), &["compile", "main.cf2", "--out-dir", "out"]);
    assert_exit(&o, 0);
    let mut left: Vec<String> = fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut expected = vec![".tmp123456".to_string(), live, "main.json".to_string()];
    expected.sort();
    assert_eq!(left, expected);
}

/// An explanation that cannot be written fails the command (exit 1) and says why.
#[cfg(target_os = "linux")]
#[test]
fn explain_reports_standard_output_it_cannot_write() {
    let dir = project(SIMPLE);
    let full = fs::File::create("/dev/full").expect("open /dev/full");
    let o = cf2_command(dir.path(), &["explain", "main.cf2", "A"])
        .stdout(full)
        .output()
        .expect("cf2 runs");
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("cf2: error: cannot write to standard output: No space left on device"),
        "{}",
        stderr(&o)
    );
}
