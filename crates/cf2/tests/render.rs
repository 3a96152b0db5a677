//! Compiling straight to text (`Compiler::compile_file_to`) gives what rendering the
//! compiled value gives, in every format, and fails where the compile does.

use cf2::{Compiler, Format, MemoryHost};

const SITE: &str = r#"
Host => web1
Ports => [80, 443]
Web ~> { Name => "${Host}.example.org", Tls => true, Ratio => 0.25 }
Web.Root => '/srv/www'
private Secret => 42
Text => "tab\there \"quoted\" \\ back"
"#;

fn compiler(text: &str) -> Compiler {
    Compiler::with_host(MemoryHost::new().with_file("site.cf2", text))
}

#[test]
fn streamed_text_is_the_rendered_value_in_every_format() {
    let c = compiler(SITE);
    let config = c.compile_file("site.cf2").expect("compiles");
    for format in Format::ALL {
        let streamed = c.compile_file_to("site.cf2", format).expect("renders");
        assert_eq!(Ok(streamed.text), config.render(format), "{format}");
    }
}

#[test]
fn private_resources_stay_out_unless_asked_for() {
    let json = compiler(SITE)
        .compile_file_to("site.cf2", Format::Json)
        .expect("renders")
        .text;
    assert!(!json.contains("Secret"), "{json}");
    let json = compiler(SITE)
        .include_private(true)
        .compile_file_to("site.cf2", Format::Json)
        .expect("renders")
        .text;
    assert!(json.contains("\"Secret\": 42"), "{json}");
}

#[test]
fn an_error_gives_no_text() {
    let e = compiler("A => $Missing\nB => 1\n")
        .compile_file_to("site.cf2", Format::Json)
        .expect_err("fails");
    assert!(e.render(false).contains("Missing"), "{e}");
}

#[test]
fn a_missing_file_is_an_error() {
    let e = compiler("X => 1\n").compile_file_to("nothere.cf2", Format::Json);
    assert!(e.is_err_and(|e| e.render(false).contains("nothere.cf2")));
}

/// A value the format cannot hold is an error at the definition that gave it, as on the
/// command line.
#[test]
fn a_value_the_format_cannot_hold_is_placed_at_its_definition() {
    let host = MemoryHost::new()
        .with_file(
            "site.cf2",
            "A => 1\nB => {\n  C => [x, read('nul.txt')]\n}\n",
        )
        .with_file("nul.txt", "a\0b");
    let e = Compiler::with_host(host)
        .compile_file_to("site.cf2", Format::Cf2)
        .expect_err("cf2 text holds no NUL");
    let d = &e.diagnostics[0];
    let at = e.location(d).expect("placed");
    assert_eq!((at.file.as_str(), at.line, at.column), ("site.cf2", 3, 3));
    let shown = e.render(false);
    assert!(shown.contains("`B.C` is defined here"), "{shown}");
    // The message the command line gives: the format, and the value's path.
    assert!(
        shown.contains("site.cf2:3:3: error: cf2 output cannot write `B.C.1`: it holds text with a NUL character"),
        "{shown}"
    );
    assert_eq!(e.source_name(d.span.expect("placed")), "site.cf2");
}

/// Warnings of a compile straight to text are placed and shown with their source line.
#[test]
fn warnings_of_streamed_text_are_placed() {
    let mut c = compiler("A => 1\nB => 2\nA => 1\n");
    c.options_mut().warn_duplicates = true;
    let r = c
        .compile_file_to("site.cf2", Format::Json)
        .expect("renders");
    let w = r.warnings.first().expect("a duplicate warning");
    let at = r.location(w).expect("placed");
    assert_eq!((at.file.as_str(), at.line), ("site.cf2", 3));
    assert!(r.render_diagnostic(w, false).contains("A => 1"));
    assert_eq!(r.source_name(w.span.expect("placed")), "site.cf2");
    assert!(r.trace().is_empty(), "tracing is off");
}

/// With tracing on, a compile straight to text keeps its `-Deval` entries, and so does
/// one the format refuses (what was decided before the refusal).
#[test]
fn streamed_text_keeps_its_trace() {
    let mut c = compiler("A => 1\nB => $A\n");
    c.options_mut().trace = true;
    let r = c
        .compile_file_to("site.cf2", Format::Json)
        .expect("renders");
    assert!(r.trace().iter().any(|t| t.contains('B')), "{:?}", r.trace());
    let host = MemoryHost::new()
        .with_file("site.cf2", "A => 1\nB => read('nul.txt')\n")
        .with_file("nul.txt", "a\0b");
    let mut c = Compiler::with_host(host);
    c.options_mut().trace = true;
    let e = c
        .compile_file_to("site.cf2", Format::Cf2)
        .expect_err("cf2 text holds no NUL");
    assert!(e.trace().iter().any(|t| t.contains('B')), "{:?}", e.trace());
}
