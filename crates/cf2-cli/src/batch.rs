//! Compiling many hosts in one run: `cf2 compile hosts/*.cf2 --out-dir DIR`. Inputs are
//! compiled in parallel (rayon) with one shared loader, so a file imported by every host
//! is read and parsed once. Each output is written atomically; a host that fails writes
//! nothing and is reported, and the others still compile.

use crate::output::OutDir;
use crate::sources::{self, Recorded};
use crate::{color, usage_error, CompileArgs};
use cf2_eval::{evaluate_into, Loader, Main};
use cf2_output::Format;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn run(args: &CompileArgs, opts: &cf2::Options, security: cf2::Security) -> ExitCode {
    let Some(dir) = &args.out_dir else {
        return usage_error("--out-dir is missing");
    };
    let Some(format) = Format::from_extension(&args.format) else {
        return usage_error(&format!("unknown format `{}`", args.format));
    };
    // Two inputs with the same file name would overwrite each other.
    let mut names: Vec<String> = args.files.iter().map(|f| stem(f)).collect();
    names.sort();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return usage_error(&format!("two inputs would both write `{}`", w[0]));
    }
    // Outputs are named after the format as given: `--format yml` writes NAME.yml
    // (DIR/NAME.FORMAT, as --help says).
    let ext = args.format.as_str();
    // Listed once: a name not in it is new and written without `lstat` or a temporary name
    // (and cannot be a source).
    let listed = dir.is_dir().then(|| OutDir::open(dir));
    if let Some(out_dir) = &listed {
        // No output may replace a main file (`--out-dir conf --format cf2` over conf/*.cf2).
        let existing: Vec<PathBuf> = args
            .files
            .iter()
            .map(|file| format!("{}.{ext}", stem(file)))
            .filter(|name| out_dir.listed(name))
            .map(|name| dir.join(name))
            .collect();
        if let Some((i, main)) = sources::main_file_replaced(&args.files, &existing) {
            let out = existing.get(i).map_or(dir.as_path(), PathBuf::as_path);
            return usage_error(&format!(
                "--out-dir `{}`: the output `{}` would replace the main file `{}`",
                dir.display(),
                out.display(),
                main.display()
            ));
        }
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("cf2: error: cannot create `{}`: {e}", dir.display());
        return ExitCode::from(1);
    }
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cf2: error: {e}");
            return ExitCode::from(1);
        }
    };
    // Every file read is recorded, so that no output replaces one.
    let host = Recorded::new(cf2::Secured::new(cf2::OsHost, security));
    // Imported files are parsed once for the whole batch; each host's own file lives in a
    // child loader freed after that host, so memory does not grow with the fleet.
    let shared = std::sync::Arc::new(Loader::new());
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
    let out_dir = listed.unwrap_or_else(|| OutDir::open(dir));
    let failed = AtomicUsize::new(0);
    pool.install(|| {
        args.files.par_iter().for_each(|file| {
            let out = format!("{}.{ext}", stem(file));
            let report = |text: String| match &bar {
                Some(b) => b.suspend(|| eprint!("{text}")),
                None => eprint!("{text}"),
            };
            let loader = Loader::child(shared.clone());
            // The output is written as the evaluator computes it (no value is built first
            // for JSON).
            let mut renderer = cf2_output::Renderer::new(format);
            match evaluate_into(&host, &loader, Main::File(file), opts, &mut renderer) {
                Ok(e) => {
                    let mut msgs = String::new();
                    for w in &e.warnings {
                        msgs.push_str(&w.render(&loader, color));
                    }
                    for t in &e.trace {
                        msgs.push_str(t);
                        msgs.push('\n');
                    }
                    if !msgs.is_empty() {
                        report(msgs);
                    }
                    let written = renderer
                        .finish("")
                        .map_err(|e| e.to_string())
                        .and_then(|text| {
                            if args.sign {
                                // `-S`: clearsigned with --gpguser.
                                host.host
                                    .security
                                    .clearsign(text.as_bytes())
                                    .map_err(|e| format!("cannot sign the output: {e}"))
                            } else {
                                Ok(text.into_bytes())
                            }
                        })
                        .and_then(|data| {
                            // A name that was not in the directory is created, never
                            // replaced: only one that was can be a file read.
                            let path = dir.join(&out);
                            if out_dir.listed(&out) {
                                if let Some(read) = host.reads(&path) {
                                    return Err(format!(
                                        "the output `{}` would replace `{}`, a file this \
                                         compile reads",
                                        path.display(),
                                        read.display()
                                    ));
                                }
                            }
                            out_dir
                                .write(&out, &data)
                                .map_err(|e| crate::output::io_reason(&e))
                        });
                    if let Err(msg) = written {
                        failed.fetch_add(1, Ordering::Relaxed);
                        report(format!("{}: error: {msg}\n", file.display()));
                    }
                }
                Err(f) => {
                    failed.fetch_add(1, Ordering::Relaxed);
                    let mut msgs = String::new();
                    for d in &f.warnings {
                        msgs.push_str(&d.render(&loader, color));
                    }
                    for d in &f.errors {
                        msgs.push_str(&d.render(&loader, color));
                    }
                    report(msgs);
                }
            }
            if let Some(b) = &bar {
                b.inc(1);
            }
        });
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let failed = failed.load(Ordering::Relaxed);
    if failed > 0 {
        eprintln!(
            "cf2: {failed} of {} configuration{} failed to compile",
            args.files.len(),
            if args.files.len() == 1 { "" } else { "s" }
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string())
}
