//! Compiling many hosts in one run: `cf2 compile hosts/*.cf2 --out-dir DIR`. Inputs are
//! compiled in parallel (rayon) with one shared loader, so a file imported by every host
//! is read and parsed once. Each output is written atomically; a host that fails writes
//! nothing and is reported, and the others still compile.

use crate::out_dir::OutDir;
use crate::sources::{self, Recorded};
use crate::{color, usage_error, CompileArgs};
use cf2_output::Format;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(args: &CompileArgs, opts: &cf2::Options, security: cf2::Security) -> ExitCode {
    let Some(dir) = &args.out_dir else {
        return usage_error("--out-dir is missing");
    };
    let (ext, format) = match args.format() {
        Ok(given) => given.unwrap_or(("json", Format::Json)),
        Err(e) => return usage_error(&e),
    };
    // Outputs are named after the format as given: `--format yml` writes NAME.yml
    // (DIR/NAME.FORMAT, as --help says).
    let outputs: Vec<String> = args
        .files
        .iter()
        .map(|file| format!("{}.{ext}", stem(file)))
        .collect();
    // Two inputs with the same file name would overwrite each other.
    let mut by_output: Vec<(&String, &PathBuf)> = outputs.iter().zip(&args.files).collect();
    by_output.sort();
    if let Some(w) = by_output.windows(2).find(|w| w[0].0 == w[1].0) {
        // Named, so that among hundreds of inputs the two are found at once.
        return usage_error(&format!(
            "`{}` and `{}` would both write `{}`",
            w[0].1.display(),
            w[1].1.display(),
            dir.join(w[0].0).display()
        ));
    }
    // Listed once: a name not in it is new and written without `lstat` or a temporary name
    // (and cannot be a source).
    let listed = dir.is_dir().then(|| OutDir::open(dir));
    if let Some(out_dir) = &listed {
        // No output may replace a main file (`--out-dir conf --format cf2` over conf/*.cf2).
        let existing: Vec<PathBuf> = outputs
            .iter()
            .filter(|name| out_dir.listed(name))
            .map(|name| dir.join(name))
            .collect();
        let credentials = args.credential_files();
        if let Some((i, what)) =
            sources::command_line_file_replaced(&args.files, &credentials, &existing)
        {
            let out = existing.get(i).map_or(dir.as_path(), PathBuf::as_path);
            return usage_error(&format!(
                "--out-dir `{}`: the output `{}` would replace {what}",
                dir.display(),
                out.display(),
            ));
        }
    }
    // Named wrongly on the command line, not a failed compile: exit 2.
    if dir.exists() && !dir.is_dir() {
        return usage_error(&format!("--out-dir `{}` is not a directory", dir.display()));
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        sayln!("cf2: error: cannot create `{}`: {e}", dir.display());
        return ExitCode::from(1);
    }
    let pool = match rayon::ThreadPoolBuilder::new()
        // A thread per job is started at once, so more jobs than hosts would only cost.
        .num_threads(usize::from(args.jobs.unwrap_or(0)).min(args.files.len()))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            sayln!("cf2: error: {e}");
            return ExitCode::from(1);
        }
    };
    let out_dir = listed.unwrap_or_else(|| OutDir::open(dir));
    // Every file read is recorded, so that no output replaces one; the outputs that are
    // new are invisible to every host, so what one host reads never depends on whether
    // another has been written yet.
    let new_outputs = outputs.iter().filter(|name| !out_dir.listed(name)).cloned();
    let host = std::sync::Arc::new(
        Recorded::new(cf2::Secured::new(cf2::OsHost, security)).hiding(dir, new_outputs),
    );
    // The library's batch: imported files are parsed once for the whole batch; each host's
    // own file lives in a loader of its own freed after that host, so memory does not grow
    // with the fleet.
    let mut compiler = cf2::Compiler::with_host(host.clone());
    *compiler.options_mut() = opts.clone();
    let compiles = compiler.batch();
    let color = color();
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(args.files.len() as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {pos}/{len} hosts  {elapsed} {msg}")
        {
            b.set_style(style);
        }
        Some(b)
    } else {
        None
    };
    // Each host's messages are kept, in the inputs' order, and printed once all are done:
    // the output does not depend on which thread finished first, and a diagnostic that
    // several hosts share (an error in an aspect they all import) is printed once.
    let batch = Batch {
        args,
        host: &host,
        compiles: &compiles,
        out_dir: &out_dir,
        format,
        color,
    };
    let mut reports: Vec<HostReport> = pool.install(|| {
        args.files
            .par_iter()
            .zip(&outputs)
            .map(|(file, out)| {
                let report = batch.compile(file, out);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                report
            })
            .collect()
    });
    // The last outputs are named, once on disk (`OutDir`); those that replace a file are put
    // in place, then the names too are flushed to disk.
    let unnamed = out_dir.name_waiting();
    if !unnamed.is_empty() {
        let by_output: HashMap<&str, usize> = outputs
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i))
            .collect();
        for (name, msg) in unnamed {
            let Some((file, report)) = by_output
                .get(name.as_str())
                .and_then(|&i| Some((args.files.get(i)?, reports.get_mut(i)?)))
            else {
                continue; // Not reached: every name comes from `outputs`.
            };
            report.failure = Some(Failure::Output);
            report.messages.push(Message::Plain(format!(
                "{}: error: {msg}\n",
                file.display()
            )));
        }
    }
    pool.install(|| write_replacing(&*host, dir, &args.files, &outputs, &mut reports));
    let synced = out_dir.sync();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    say!("{}", merge(&args.files, &reports));
    let plural = if args.files.len() == 1 { "" } else { "s" };
    let mut failed_any = false;
    // Compiled but not signed or written is not a failed compile: the host's own message
    // above says what failed.
    for (stage, what) in [
        (
            Failure::Compile,
            format!("configuration{plural} failed to compile"),
        ),
        (
            Failure::Output,
            format!("output{plural} could not be written"),
        ),
    ] {
        let failed: Vec<&Path> = args
            .files
            .iter()
            .zip(&reports)
            .filter(|(_, r)| r.failure == Some(stage))
            .map(|(f, _)| f.as_path())
            .collect();
        if !failed.is_empty() {
            failed_any = true;
            sayln!(
                "cf2: {} of {} {what}: {}",
                failed.len(),
                args.files.len(),
                list_files(&failed)
            );
        }
    }
    if let Err(msg) = synced {
        // Every output is in place, but may not survive a power cut.
        sayln!("cf2: error: {msg}");
        failed_any = true;
    }
    if !failed_any {
        return ExitCode::SUCCESS;
    }
    ExitCode::from(1)
}

/// Writes the outputs that replace files already in the directory, now that every host has
/// read what it reads: one that replaces a file any host read is refused, whichever host
/// finished first (an output written earlier would have changed what a later host read).
fn write_replacing<H: cf2::Host>(
    host: &Recorded<H>,
    dir: &Path,
    files: &[PathBuf],
    outputs: &[String],
    reports: &mut [HostReport],
) {
    reports
        .par_iter_mut()
        .zip(files.par_iter().zip(outputs))
        .for_each(|(report, (file, out))| {
            let Some(staged) = report.replacing.take() else {
                return;
            };
            let path = dir.join(out);
            let written = match host.reads(&path) {
                // Dropped, the staged file is removed.
                Some(read) => Err(format!(
                    "the output `{}` would replace `{}`, a file this compile reads",
                    path.display(),
                    read.display()
                )),
                None => staged
                    .commit()
                    .map_err(|e| crate::output::cannot_write(&path, &e)),
            };
            if let Err(msg) = written {
                report.failure = Some(Failure::Output);
                report.messages.push(Message::Plain(format!(
                    "{}: error: {msg}\n",
                    file.display()
                )));
            }
        });
}

/// What compiling one host printed, kept until the whole batch is done.
struct HostReport {
    failure: Option<Failure>,
    messages: Vec<Message>,
    /// An output whose name was in the directory already, staged beside it: put in place
    /// after every host has been compiled, unless one of them read the file it replaces.
    /// Staged on disk, so a re-run into the same directory does not hold every output in
    /// memory.
    replacing: Option<crate::output::Staged>,
}

/// Where a host's run stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// Its configuration has an error, or no output of the format can hold it.
    Compile,
    /// It compiled, but its output could not be signed or written.
    Output,
}

enum Message {
    /// A rendered diagnostic, holding the line [`CONFIGURATIONS`] where the note naming
    /// the configurations it occurred in goes; `own`: it is located in the host's own
    /// file, which names the host already.
    Diagnostic { text: String, own: bool },
    /// Printed as it is (a trace line, an error that names the host's file).
    Plain(String),
}

/// A note, rendered into a diagnostic and replaced by [`merge`] with the configurations the
/// diagnostic occurred in. Marked with private-use characters, which rendering keeps as
/// they are (it makes control characters visible, so a NUL would not survive).
const CONFIGURATIONS: &str = "\u{F8FF}cf2-configurations\u{F8FF}";

/// How many files a note or the summary names before `and N more`.
const LISTED: usize = 10;

/// What every host of a batch is compiled with.
struct Batch<'a> {
    args: &'a CompileArgs,
    host: &'a Recorded<cf2::Secured<cf2::OsHost>>,
    compiles: &'a cf2::Batch<'a>,
    out_dir: &'a OutDir,
    format: Format,
    color: bool,
}

impl Batch<'_> {
    /// For a host that failed, a warning that its output from an earlier run is still in
    /// the directory: left, not removed (a missing configuration can mean more to a
    /// deployment than an old one), but said, so that nobody ships it unawares.
    fn stale(&self, out: &str, file: &Path) -> Option<Message> {
        self.out_dir.listed(out).then(|| {
            Message::Plain(format!(
                "{}: warning: `{}` is the output of an earlier run, left as it was: this compile failed\n",
                file.display(),
                self.out_dir.path().join(out).display()
            ))
        })
    }

    /// Compiles `file` into the output directory, as `out`.
    fn compile(&self, file: &Path, out: &str) -> HostReport {
        let Batch {
            args,
            host,
            compiles,
            out_dir,
            format,
            color,
        } = *self;
        let stale = || self.stale(out, file);
        let main_names = [
            file.display().to_string(),
            cf2_eval::with_cf2_extension(file).display().to_string(),
        ];
        // Whether the file named `name` is the host's own.
        let is_main = |name: &str| main_names.iter().any(|n| n == name);
        // A diagnostic of this host's compile, rendered by `render`; `in_main` tells whether
        // a place is in the host's own file.
        let diagnostic = |d: &cf2::Diagnostic,
                          in_main: &dyn Fn(cf2::Span) -> bool,
                          render: &dyn Fn(&cf2::Diagnostic) -> String| {
            let own = d.span.is_some_and(in_main);
            let mut d = d.clone();
            if !own {
                // An error in a shared file (a syntax error in an aspect) is printed once
                // for all the hosts that have it; where each host imports the file would
                // make every copy differ. The note names the hosts instead.
                d.labels
                    .retain(|l| !(l.message == "imported here" && in_main(l.span)));
            }
            d.notes.push(CONFIGURATIONS.to_string());
            Message::Diagnostic {
                text: render(&d),
                own,
            }
        };
        let mut messages = Vec::new();
        // JSON is written as the evaluator computes it (no value is built first).
        match compiles.compile_file_to(file, format) {
            Ok(rendered) => {
                let in_main = |span| is_main(rendered.source_name(span));
                let render = |d: &cf2::Diagnostic| rendered.render_diagnostic(d, color);
                messages.extend(
                    rendered
                        .warnings
                        .iter()
                        .map(|d| diagnostic(d, &in_main, &render)),
                );
                push_trace(&mut messages, file, rendered.trace());
                let plain =
                    |msg: String| Message::Plain(format!("{}: error: {msg}\n", file.display()));
                let data = if args.sign {
                    // `-S`: clearsigned with --gpguser.
                    host.host
                        .security
                        .clearsign(rendered.text.as_bytes())
                        .map_err(|e| plain(format!("cannot sign the output: {e}")))
                } else {
                    Ok(rendered.text.into_bytes())
                };
                // A name that was not in the directory is created, never replaced: only one
                // that was can be a file read, by this host or another. It is written once
                // every host has read what it reads (`write_replacing`).
                let written = data.and_then(|data| {
                    if out_dir.listed(out) {
                        out_dir.stage_named(out, &data).map(Some).map_err(plain)
                    } else {
                        out_dir
                            .write_named(out, &data)
                            .map(|()| None)
                            .map_err(plain)
                    }
                });
                let (failure, replacing) = match written {
                    Ok(replacing) => (None, replacing),
                    Err(message) => {
                        messages.push(message);
                        messages.extend(stale());
                        (Some(Failure::Output), None)
                    }
                };
                HostReport {
                    failure,
                    messages,
                    replacing,
                }
            }
            Err(e) => {
                // What was decided before the error, as a single compile shows it. A value
                // the format cannot hold is among the errors, at its definition.
                let in_main = |span| is_main(e.source_name(span));
                let render = |d: &cf2::Diagnostic| e.render_diagnostic(d, color);
                push_trace(&mut messages, file, e.trace());
                for d in e.warnings.iter().chain(&e.diagnostics) {
                    messages.push(diagnostic(d, &in_main, &render));
                }
                messages.extend(stale());
                HostReport {
                    failure: Some(Failure::Compile),
                    messages,
                    replacing: None,
                }
            }
        }
    }
}

/// All hosts' messages in the inputs' order, a diagnostic that several hosts share printed
/// once (where the first of them had it), each with a note naming the configurations it
/// occurred in, unless it is located in the one host's own file.
fn merge(files: &[PathBuf], reports: &[HostReport]) -> String {
    enum Entry<'r> {
        Diagnostic {
            text: &'r str,
            own: bool,
            hosts: Vec<&'r Path>,
        },
        Plain(&'r str),
    }
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (file, report) in files.iter().zip(reports) {
        for message in &report.messages {
            match message {
                Message::Plain(text) => entries.push(Entry::Plain(text)),
                Message::Diagnostic { text, own } => match seen.get(text.as_str()) {
                    Some(&i) => {
                        if let Some(Entry::Diagnostic { hosts, .. }) = entries.get_mut(i) {
                            // A host with the same diagnostic twice is named once.
                            if hosts.last() != Some(&file.as_path()) {
                                hosts.push(file);
                            }
                        }
                    }
                    None => {
                        seen.insert(text, entries.len());
                        entries.push(Entry::Diagnostic {
                            text,
                            own: *own,
                            hosts: vec![file],
                        });
                    }
                },
            }
        }
    }
    let mut out = String::new();
    for entry in entries {
        match entry {
            Entry::Plain(text) => out.push_str(text),
            Entry::Diagnostic { text, own, hosts } => {
                // A batch of one, or a diagnostic in the one host's own file, needs no note:
                // its line goes; otherwise the renderer's note line gets its text.
                let note = (files.len() > 1 && !(own && hosts.len() == 1)).then(|| {
                    format!(
                        "in the configuration{} of {}",
                        if hosts.len() == 1 { "" } else { "s" },
                        list_files(&hosts)
                    )
                });
                for line in text.split_inclusive('\n') {
                    match (line.contains(CONFIGURATIONS), &note) {
                        (false, _) => out.push_str(line),
                        (true, Some(note)) => out.push_str(&line.replace(CONFIGURATIONS, note)),
                        (true, None) => {}
                    }
                }
            }
        }
    }
    out
}

/// `a.cf2, b.cf2`; past [`LISTED`] files, `a.cf2, ..., j.cf2 and 5 more`.
fn list_files(files: &[&Path]) -> String {
    let mut text = files
        .iter()
        .take(LISTED)
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > LISTED {
        text.push_str(&format!(" and {} more", files.len() - LISTED));
    }
    text
}

/// The output's NAME: the input's file name without `.cf2` (or a signed `.cf2.asc`). Any
/// other extension is part of the name, as host files are often named by their host
/// (`db.example.org` writes `db.example.org.json`, not `db.example.json`).
fn stem(file: &Path) -> String {
    let Some(name) = file.file_name().map(|s| s.to_string_lossy()) else {
        return "out".to_string();
    };
    [".cf2.asc", ".cf2"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext).filter(|s| !s.is_empty()))
        .unwrap_or(&name)
        .to_string()
}

/// A host's `-Deval` entries, headed by its file: hosts share resource names.
fn push_trace(messages: &mut Vec<Message>, file: &Path, trace: &[String]) {
    if !trace.is_empty() {
        messages.push(Message::Plain(format!("-Deval: {}\n", file.display())));
    }
    messages.extend(trace.iter().map(|t| Message::Plain(format!("{t}\n"))));
}
