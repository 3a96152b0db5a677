//! `cf2 explain FILE RESOURCE...`: how each resource got its value, from the provenance the
//! library records (`cf2::Config::explanation`). Each resource is compiled with only what
//! its value needs, as `-o -:PATH` does, so a failure elsewhere does not hide it; the files
//! are read and parsed once for all of them (a `cf2::Batch`). One more compile, of the
//! whole configuration, says what read each resource (`read by`).

use crate::{color, options, security, usage_error_of, warn_about_allowed_dirs, ExplainArgs};
use std::io::Write as _;
use std::process::ExitCode;

pub fn run(args: &ExplainArgs) -> ExitCode {
    let opts = match options(&args.input) {
        Ok(o) => cf2::Options { trace: true, ..o },
        Err(e) => return usage_error_of("explain", &e),
    };
    warn_about_allowed_dirs(&args.input);
    let security = match security(&args.input, None) {
        Ok(s) => s,
        Err(e) => return usage_error_of("explain", &e),
    };
    let mut compiler = cf2::Compiler::with_host(cf2::Secured::new(cf2::OsHost, security));
    *compiler.options_mut() = opts;
    let batch = compiler.batch();
    let color = color();
    let mut explained = Vec::new();
    let mut failed = false;
    for resource in &args.resources {
        match batch.compile_file_at(&args.file, resource) {
            Ok(config) => {
                for w in config.warnings() {
                    say!("{}", config.render_diagnostic(w, color));
                }
                explained.push((resource, config));
            }
            Err(e) => {
                failed = true;
                for w in &e.warnings {
                    say!("{}", e.render_diagnostic(w, color));
                }
                for d in &e.diagnostics {
                    say!(
                        "{}",
                        e.render_diagnostic(&asked_to_explain(d, resource), color)
                    );
                }
            }
        }
    }
    // Printed only when every resource could be explained, as a failed compile prints no
    // configuration: a script reading the explanations never gets a part of them.
    if failed {
        return ExitCode::from(1);
    }
    // What read each resource: only a compile of the whole configuration evaluates every
    // reader. It may fail where the values asked for did not; the explanations stand. The
    // configuration itself (`''`) is read by nothing.
    let asks_for_resources = explained.iter().any(|(resource, _)| !resource.is_empty());
    let whole = match asks_for_resources.then(|| batch.compile_file(&args.file)) {
        None => None,
        Some(Ok(config)) => Some(config),
        Some(Err(_)) => {
            sayln!(
                "cf2: note: no `read by` lines: the whole configuration does not compile \
                 (`cf2 compile {}` says why)",
                args.file.display()
            );
            None
        }
    };
    let texts: Vec<String> = explained
        .iter()
        .map(|(resource, config)| config.explanation_read_by(resource, whole.as_ref()))
        .collect();
    let text = texts.join("\n");
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        sayln!(
            "cf2: error: cannot write to standard output: {}",
            crate::output::io_reason(&e)
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The library reports a path that names nothing as an output it cannot make ("cannot
/// output `Web.Prot`: `Web` has no `Prot`"); here the user asked to explain it.
fn asked_to_explain(d: &cf2::Diagnostic, resource: &str) -> cf2::Diagnostic {
    let mut d = d.clone();
    if let Some(rest) = d
        .message
        .strip_prefix(&format!("cannot output `{resource}`"))
    {
        d.message = format!("cannot explain `{resource}`{rest}");
    }
    d
}
