//! How the library names a main file it cannot read: missing, or a directory (the command
//! line prints the same messages; docs/semantics.md §13).

use cf2::{Compiler, MemoryHost};

/// The first error of compiling `path` in a memory host holding `conf/site.cf2`.
fn first_error(path: &str) -> String {
    let host = MemoryHost::new().with_file("conf/site.cf2", "A => 1\n");
    match Compiler::with_host(host).compile_file(path) {
        Ok(_) => "compiled".into(),
        Err(e) => e
            .diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_default(),
    }
}

#[test]
fn a_directory_given_as_the_main_file_is_said_to_be_one() {
    assert_eq!(first_error("conf"), "cannot read `conf`: it is a directory");
}

#[test]
fn a_missing_main_file_names_both_names_tried() {
    assert_eq!(
        first_error("nope"),
        "cannot read `nope`: no such file (nor `nope.cf2`)"
    );
    assert_eq!(
        first_error("nope.cf2"),
        "cannot read `nope.cf2`: no such file"
    );
}

#[test]
fn the_cf2_extension_is_implied_for_the_main_file() {
    assert_eq!(first_error("conf/site"), "compiled");
}
