//! How the library names a main file it cannot read: missing, or a directory (the command
//! line prints the same messages; docs/semantics.md §13).

use cf2::{Compiler, MemoryHost};

/// The first error of compiling `path` in `host` ("compiled" if it compiles).
fn first_error(host: MemoryHost, path: &str) -> String {
    match Compiler::with_host(host).compile_file(path) {
        Ok(_) => "compiled".into(),
        Err(e) => e
            .diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_default(),
    }
}

/// A memory host holding `conf/site.cf2`.
fn conf() -> MemoryHost {
    MemoryHost::new().with_file("conf/site.cf2", "A => 1\n")
}

#[test]
fn a_directory_given_as_the_main_file_is_said_to_be_one() {
    assert_eq!(
        first_error(conf(), "conf"),
        "cannot read `conf`: it is a directory"
    );
}

#[test]
fn a_missing_main_file_names_both_names_tried() {
    assert_eq!(
        first_error(conf(), "nope"),
        "cannot read `nope`: no such file (nor `nope.cf2`)"
    );
    assert_eq!(
        first_error(conf(), "nope.cf2"),
        "cannot read `nope.cf2`: no such file"
    );
}

#[test]
fn a_missing_main_file_whose_cf2_name_is_a_directory_says_so() {
    let host = MemoryHost::new().with_file("site.cf2/notes.txt", "x\n");
    assert_eq!(
        first_error(host, "site"),
        "cannot read `site`: no such file (and `site.cf2` is a directory)"
    );
}

#[test]
fn the_cf2_extension_is_implied_for_the_main_file() {
    assert_eq!(first_error(conf(), "conf/site"), "compiled");
}
