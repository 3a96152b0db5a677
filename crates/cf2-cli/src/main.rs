//! `cf2`: the command line. A thin layer: it parses arguments, calls the library, writes
//! outputs atomically and prints diagnostics. Exit status: 0 compiled, 1 the configuration
//! has an error, 2 the command line is wrong (clarifications §8).

mod batch;
mod output;

use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "cf2", version, about = "Compile CF2 configurations", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile configuration files.
    ///
    /// With one FILE, the configuration goes to standard output in cf2 format, or to the
    /// outputs given with -o. With --out-dir, every FILE is compiled (in parallel) into
    /// DIR/NAME.FORMAT.
    Compile(CompileArgs),
}

#[derive(Args)]
pub struct CompileArgs {
    /// The configuration file(s) to compile.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Write the resource at PATH (default: the whole configuration) to NAME, in the format
    /// of NAME's extension (cf2, json, pl, yaml, yml, toml). `-` is standard output in cf2
    /// format, `-.json` standard output as JSON. Repeatable.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "NAME[:PATH]",
        allow_hyphen_values = true
    )]
    outputs: Vec<String>,

    /// Output private resources too.
    #[arg(short = 'p', long = "private")]
    private: bool,

    /// Debug output: `-Deval` traces how each resource got its value (on standard error).
    #[arg(short = 'D', value_name = "WHAT", value_parser = ["eval"])]
    debug: Vec<String>,

    /// Warnings: `-Wdup` warns about duplicate definitions in one file.
    #[arg(short = 'W', value_name = "WHAT", value_parser = ["dup"])]
    warn: Vec<String>,

    /// Compile every FILE into this directory (one output per input).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,

    /// The format of the files written to --out-dir.
    #[arg(long, value_name = "FORMAT", default_value = "json", value_parser = ["cf2", "json", "pl", "yaml", "yml", "toml"])]
    format: String,

    /// The current project's top directory (default: the main file's directory).
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,

    /// Another project, for `import('NAME:path')`. Repeatable.
    #[arg(long = "project", value_name = "NAME=DIR")]
    projects: Vec<String>,

    /// Parallel jobs for --out-dir (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Compile(args) => compile(args),
    }
}

pub fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

pub fn usage_error(msg: &str) -> ExitCode {
    eprintln!("cf2: {msg}");
    eprintln!("Try 'cf2 compile --help' for more information.");
    ExitCode::from(2)
}

fn options(args: &CompileArgs) -> Result<cf2::Options, String> {
    let mut opts = cf2::Options {
        include_private: args.private,
        trace: args.debug.iter().any(|d| d == "eval"),
        warn_duplicates: args.warn.iter().any(|w| w == "dup"),
        project_dir: args.project_dir.clone(),
        projects: Vec::new(),
    };
    let env = std::env::var("CF2PROJECTS").unwrap_or_default();
    for spec in env
        .split(':')
        .filter(|s| !s.is_empty())
        .chain(args.projects.iter().map(String::as_str))
    {
        let Some((name, dir)) = spec.split_once('=') else {
            return Err(format!("a project is given as NAME=DIR, not `{spec}`"));
        };
        opts.projects.push((name.to_string(), PathBuf::from(dir)));
    }
    Ok(opts)
}

fn compile(args: CompileArgs) -> ExitCode {
    let opts = match options(&args) {
        Ok(o) => o,
        Err(e) => return usage_error(&e),
    };
    if args.out_dir.is_some() {
        if !args.outputs.is_empty() {
            return usage_error("-o and --out-dir cannot be used together");
        }
        return batch::run(&args, &opts);
    }
    if args.files.len() > 1 {
        return usage_error("several files need --out-dir DIR (one output per input)");
    }
    output::single(&args, &opts)
}
