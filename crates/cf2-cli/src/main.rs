//! `cf2`: the command line. A thin layer: it parses arguments, calls the library, writes
//! outputs atomically and prints diagnostics. Exit status: 0 compiled, 1 the configuration
//! has an error, 2 the command line is wrong (clarifications §8).

// On Linux with glibc the process starts in `start::main`, without the standard library's
// start-up (see there why).
#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]

/// `eprint!`/`eprintln!` that never panic: a standard error that cannot be written (a
/// closed pipe, `2>/dev/full`) loses the message, not the run — its exit status stays 0, 1
/// or 2 as clarifications §8 says, never a panic's 101.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr().lock(), $($arg)*);
    }};
}
macro_rules! sayln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod batch;
mod explain;
mod out_dir;
mod output;
mod sources;
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
mod start;

use clap::{Args, Parser, Subcommand};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Parser)]
#[command(name = "cf2", version, about = "Compile CF2 configurations", long_about = None, args_override_self = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The most `-j` may ask for: each job is a thread started at once with a large stack, and
/// 20,000 of them took the machine's memory (454 GB of address space) without compiling.
const MAX_JOBS: i64 = 1024;

#[derive(Subcommand)]
enum Command {
    /// Compile configuration files.
    ///
    /// With one FILE, the configuration goes to standard output in cf2 format, or to the
    /// outputs given with -o. With --out-dir, every FILE is compiled (in parallel) into
    /// DIR/NAME.FORMAT (NAME: FILE's name without `.cf2`; FORMAT as given, in lower
    /// case, so `--format yml` writes NAME.yml and `--format YAML` NAME.yaml). No output
    /// may replace a file the compile reads.
    Compile(CompileArgs),
    /// Explain how resources got their values.
    ///
    /// For each RESOURCE (`Web.Port`), compiles FILE as far as that value needs and prints
    /// which definitions made it (file, line, operator, statement), by which rule (an
    /// assignment, a merge, max, sum...), and which definitions it overrode; for a block,
    /// also one line per member. A path inside a list (`Disks.0`) is explained by the
    /// resource that holds it. Secrets stay hidden, as in `cf2 compile -Deval`.
    Explain(ExplainArgs),
}

#[derive(Args)]
pub struct ExplainArgs {
    /// The configuration file.
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// The resources to explain, as dotted paths (`Services.web.Port`).
    #[arg(required = true, value_name = "RESOURCE")]
    resources: Vec<String>,

    #[command(flatten)]
    input: InputArgs,
}

#[derive(Args)]
pub struct CompileArgs {
    /// The configuration file(s) to compile.
    #[arg(required_unless_present = "files_from", value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Compile the files listed in LIST too, one name per line (`-`: standard input), for
    /// fleets whose names would pass the system's limit on a command line. Needs --out-dir.
    #[arg(long, value_name = "LIST", requires = "out_dir")]
    files_from: Option<PathBuf>,

    /// Write the resource at PATH (default: the whole configuration) to NAME, in the format
    /// of NAME's extension (cf2, json, pl, yaml, yml, toml; none: cf2). `-` is standard
    /// output in cf2 format, `-.json` standard output as JSON. Repeatable, each to its own
    /// file.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "NAME[:PATH]",
        allow_hyphen_values = true
    )]
    outputs: Vec<String>,

    /// Debug output: `-Deval` traces how each resource got its value (on standard error).
    #[arg(short = 'D', value_name = "WHAT", value_parser = ["eval"])]
    debug: Vec<String>,

    /// Warnings: `-Wdup` warns about duplicate definitions in one file.
    #[arg(short = 'W', value_name = "WHAT", value_parser = ["dup"])]
    warn: Vec<String>,

    /// Compile every FILE into this directory: DIR/NAME.FORMAT, one output per input.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,

    /// The format of the files written to --out-dir, and their extension (default: json).
    /// Without --out-dir: the format of standard output and of each -o NAME whose
    /// extension names no format (`-o /etc/app/app.conf --format json`).
    #[arg(long, value_name = "FORMAT", value_parser = clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(["cf2", "json", "pl", "yaml", "yml", "toml"]), |f: String| f.to_ascii_lowercase()), ignore_case = true)]
    format: Option<String>,

    /// Parallel jobs for --out-dir: 1 to 1024, never more than there are files (default,
    /// and 0: the number of cores).
    #[arg(short = 'j', long, value_name = "N", requires = "out_dir",
          value_parser = clap::value_parser!(u16).range(0..=MAX_JOBS))]
    jobs: Option<u16>,

    /// Clearsign every output with gpg, as --gpguser (default: gpg's default key).
    #[arg(short = 'S', long = "sign")]
    sign: bool,

    /// The gpg user (key) that signs outputs with -S.
    #[arg(long = "gpguser", value_name = "USER")]
    gpg_user: Option<String>,

    /// The pass phrase of the --gpguser key. Other users may see command lines: prefer
    /// --gpgpass-file.
    #[arg(long = "gpgpass", value_name = "PASS")]
    gpg_pass: Option<String>,

    /// A file whose first line is the pass phrase of the --gpguser key.
    #[arg(
        long = "gpgpass-file",
        value_name = "FILE",
        conflicts_with = "gpg_pass"
    )]
    gpg_pass_file: Option<PathBuf>,

    #[command(flatten)]
    input: InputArgs,
}

/// What reads a configuration, the same for every command: where imports and functions
/// are found, which files may be read, how signatures and secrets are checked.
#[derive(Args)]
pub struct InputArgs {
    /// Output private resources too.
    #[arg(short = 'p', long = "private")]
    private: bool,

    /// The current project's top directory (default: the main file's directory).
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,

    /// Another project, for `import('NAME:path')`. Repeatable.
    #[arg(long = "project", value_name = "NAME=DIR")]
    projects: Vec<String>,

    /// The function path: directories holding custom function modules (NAME.lua),
    /// colon-separated (empty entries are skipped), each of which must exist. Repeatable; searched in order, before
    /// CF2_FUNCTION_PATH.
    #[arg(short = 'F', long = "function-path", value_name = "DIR:DIR...")]
    function_path: Vec<String>,

    /// Confine file access: every file an import or read() finds (KeePass databases
    /// included) must be inside DIR, once symbolic links are resolved. Repeatable.
    #[arg(long = "allow-dir", value_name = "DIR")]
    allow_dirs: Vec<PathBuf>,

    /// The gpg home directory: the keyring that checks signed imports and signs outputs
    /// (default: $GNUPGHOME, else ~/.gnupg).
    #[arg(long = "gpghome", value_name = "DIR")]
    gpg_home: Option<PathBuf>,

    /// Ask on the terminal (without echo) for the password of each KeePass database.
    #[arg(short = 'P', long = "keepass-prompt")]
    keepass_prompt: bool,

    /// A file whose first line is the password of the KeePass databases (for unattended
    /// runs; CF2_KEEPASS_PASSWORD is read too).
    #[arg(long = "keepass-password-file", value_name = "FILE")]
    keepass_password_file: Option<PathBuf>,

    /// A KeePass key file, used with the password, or alone.
    #[arg(long = "keepass-keyfile", value_name = "FILE")]
    keepass_keyfile: Option<PathBuf>,

    /// Do not look for KeePass passwords in the keychain.
    #[arg(long = "no-keychain")]
    no_keychain: bool,
}

impl CompileArgs {
    /// The credential files the command line names, with their options: no output may
    /// replace one.
    pub(crate) fn credential_files(&self) -> Vec<(&'static str, &std::path::Path)> {
        [
            ("--keepass-keyfile", &self.input.keepass_keyfile),
            ("--keepass-password-file", &self.input.keepass_password_file),
            ("--gpgpass-file", &self.gpg_pass_file),
        ]
        .into_iter()
        .filter_map(|(option, path)| path.as_deref().map(|p| (option, p)))
        .collect()
    }
}

/// The allocator: mimalloc (v2) for a batch, the C library's malloc for one compile.
///
/// A batch makes about a thousand small short-lived allocations per host; glibc's malloc
/// spent 29% of a batch's instructions on them, and with mimalloc a 10,000-host batch takes
/// 13% less wall time. One compile is a few milliseconds of process, most of it start-up:
/// mimalloc's 1 GiB arena, its huge pages (two 2 MiB pages zeroed on first touch) and its
/// purge at exit cost it 0.5 ms there (BENCHMARKS.md), so a single compile keeps malloc.
/// The choice is made from the command line before the first allocation (`choose_allocator`)
/// and never changes, so every block is freed by the allocator that made it. The library
/// does not choose an allocator; only this binary does.
#[global_allocator]
static GLOBAL: CliAllocator = CliAllocator;

/// mimalloc (for a batch) or the system allocator (for one compile); see [`GLOBAL`].
struct CliAllocator;

/// Which allocator serves this process: [`UNDECIDED`] until `choose_allocator` runs or a
/// block is allocated, then [`SYSTEM`] or [`MIMALLOC`] for good.
static ALLOCATOR: AtomicU8 = AtomicU8::new(if cfg!(all(target_os = "linux", target_env = "gnu")) {
    UNDECIDED
} else {
    MIMALLOC
});
const UNDECIDED: u8 = 0;
const SYSTEM: u8 = 1;
const MIMALLOC: u8 = 2;

/// Whether mimalloc serves this allocation; an allocation made while undecided settles the
/// choice on the system allocator, whose block it is.
#[inline(always)]
fn mimalloc_serves() -> bool {
    let allocator = ALLOCATOR.load(Ordering::Relaxed);
    if allocator == UNDECIDED {
        ALLOCATOR.store(SYSTEM, Ordering::Relaxed);
    }
    allocator == MIMALLOC
}

/// Runs with the other constructors, before `main` and the standard library's first
/// allocation: glibc passes every `.init_array` function the program's arguments (the
/// standard library reads its own `args()` the same way). A batch names `--out-dir`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[link_section = ".init_array"]
static CHOOSE_ALLOCATOR: extern "C" fn(
    std::ffi::c_int,
    *const *const std::ffi::c_char,
    *const *const std::ffi::c_char,
) = choose_allocator;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn choose_allocator(
    argc: std::ffi::c_int,
    argv: *const *const std::ffi::c_char,
    _envp: *const *const std::ffi::c_char,
) {
    if argv.is_null() {
        return;
    }
    let batch = (1..usize::try_from(argc).unwrap_or(0)).any(|i| {
        // SAFETY: glibc passes `argc` valid, NUL-terminated strings in `argv`.
        let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) }.to_bytes();
        arg == b"--out-dir" || arg.starts_with(b"--out-dir=")
    });
    let chosen = if batch { MIMALLOC } else { SYSTEM };
    // Only while undecided: a block already allocated came from the system allocator.
    let settled =
        ALLOCATOR.compare_exchange(UNDECIDED, chosen, Ordering::Relaxed, Ordering::Relaxed);
    if settled == Ok(UNDECIDED) && chosen == MIMALLOC {
        // mimalloc is built without its start-up constructor (`.cargo/config.toml`), so a
        // single compile does not pay for it; a batch runs it here, where the constructor
        // ran. Left to initialise itself on its first allocation instead, mimalloc stays
        // in its "preloading" state (options never read), and a batch took 4 % more CPU.
        // SAFETY: what mimalloc's own constructor calls, once, before any allocation.
        unsafe { _mi_auto_process_init() };
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    /// mimalloc's process start-up, which its constructor (`mi_process_attach`) calls.
    fn _mi_auto_process_init();
}

/// The alignment of every mimalloc block (its smallest size class is one word).
const WORD: usize = 8;

// SAFETY: the allocator is fixed before the first allocation, or by it (`ALLOCATOR` leaves
// `UNDECIDED` once, never to return), so each block is released, resized and freed
// by the allocator that made it. mimalloc gets each request unchanged, through its aligned
// interface whenever the alignment asked for is more than a word (`mi_free` releases blocks
// from either interface): its `mimalloc` crate asks for an aligned block on every call, and
// `mi_malloc` serves the word-aligned ones (nearly all) with fewer instructions.
unsafe impl GlobalAlloc for CliAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if !mimalloc_serves() {
            return System.alloc(layout);
        }
        if layout.align() <= WORD {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if !mimalloc_serves() {
            return System.alloc_zeroed(layout);
        }
        if layout.align() <= WORD {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !mimalloc_serves() {
            return System.dealloc(ptr, layout);
        }
        libmimalloc_sys::mi_free(ptr.cast());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys as mi;
        if !mimalloc_serves() {
            return System.realloc(ptr, layout, new_size);
        }
        if layout.align() <= WORD {
            mi::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu", not(test))))]
fn main() -> ExitCode {
    run()
}

/// The command: parse the arguments and compile.
fn run() -> ExitCode {
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
        Command::Explain(args) => explain::run(&args),
    }
}

pub fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

pub fn usage_error(msg: &str) -> ExitCode {
    usage_error_of("compile", msg)
}

/// A command-line error of `cf2 COMMAND`: exit status 2.
pub fn usage_error_of(command: &str, msg: &str) -> ExitCode {
    sayln!("cf2: {msg}");
    sayln!("Try 'cf2 {command} --help' for more information.");
    ExitCode::from(2)
}

/// The compiler's options from what the command line says about reading (the compile's
/// own switches, such as `-Deval`, are set by the command).
fn options(args: &InputArgs) -> Result<cf2::Options, String> {
    let mut opts = cf2::Options {
        include_private: args.private,
        trace: false,
        warn_duplicates: false,
        project_dir: args.project_dir.clone(),
        projects: Vec::new(),
        functions: Default::default(),
        allowed_dirs: args.allow_dirs.clone(),
        max_steps: None,
    };
    let mut function_dirs = Vec::new();
    for path in &args.function_path {
        for dir in cf2_lua::LuaFunctions::parse_path(path) {
            // A directory given on the command line is meant to be there: a typo
            // (`-F fucntions`) would otherwise surface as "unknown function" at an
            // innocent call.
            given_dir(&format!("-F `{path}`: the function directory"), &dir)?;
            function_dirs.push(dir);
        }
    }
    // The environment's path is skipped where a directory is missing, as PATH is; an
    // "unknown function" error says so (`FunctionProvider::unavailable`).
    let env_dirs = std::env::var("CF2_FUNCTION_PATH")
        .map(|path| cf2_lua::LuaFunctions::parse_path(&path))
        .unwrap_or_default();
    if !function_dirs.is_empty() || !env_dirs.is_empty() {
        opts.functions.add_provider(std::sync::Arc::new(
            cf2_lua::LuaFunctions::new(function_dirs).then_from_env("CF2_FUNCTION_PATH", env_dirs),
        ));
    }
    // Directories named on the command line are meant to be there: a typo would otherwise
    // surface later as a missing import, far from its cause. (CF2PROJECTS, like PATH, may
    // name directories that are not there; so may --allow-dir, see `compile`.)
    if let Some(dir) = &args.project_dir {
        given_dir("--project-dir: the directory", dir)?;
    }
    let env = std::env::var("CF2PROJECTS").unwrap_or_default();
    let env_specs = env.split(':').filter(|s| !s.is_empty()).map(|s| (s, false));
    let given_specs = args.projects.iter().map(|s| (s.as_str(), true));
    for (spec, given) in env_specs.chain(given_specs) {
        let Some((name, dir)) = spec.split_once('=') else {
            return Err(format!("a project is given as NAME=DIR, not `{spec}`"));
        };
        let dir = PathBuf::from(dir);
        if given {
            given_dir(&format!("--project `{spec}`: the directory"), &dir)?;
        }
        opts.projects.push((name.to_string(), dir));
    }
    Ok(opts)
}

/// An error unless `dir`, given on the command line as `what` says, is a directory.
fn given_dir(what: &str, dir: &std::path::Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    let problem = if dir.exists() {
        "is not a directory"
    } else {
        "does not exist"
    };
    Err(format!("{what} `{}` {problem}", dir.display()))
}

/// The options given that only matter with `-S`, when it is not given.
fn signing_options_without_sign(args: &CompileArgs) -> Vec<&'static str> {
    if args.sign {
        return Vec::new();
    }
    [
        ("--gpguser", args.gpg_user.is_some()),
        ("--gpgpass", args.gpg_pass.is_some()),
        ("--gpgpass-file", args.gpg_pass_file.is_some()),
    ]
    .into_iter()
    .filter_map(|(option, given)| given.then_some(option))
    .collect()
}

impl CompileArgs {
    /// `--format` as given (in lower case: a batch names its outputs with it, `NAME.yml`)
    /// and the format it names.
    fn format(&self) -> Result<Option<(&str, cf2_output::Format)>, String> {
        let Some(ext) = self.format.as_deref() else {
            return Ok(None);
        };
        cf2_output::Format::from_extension(ext)
            .map(|format| Some((ext, format)))
            .ok_or_else(|| format!("unknown format `{ext}`"))
    }
}

/// The files `--files-from LIST` names: one per line, as written (a name may hold spaces);
/// empty lines are skipped, and so is the `\r` of a line ending written on Windows.
fn files_listed(list: &Path) -> Result<Vec<PathBuf>, String> {
    let text = if list == Path::new("-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map(|_| text)
            .map_err(|e| format!("cannot read the list of files from standard input: {e}"))?
    } else {
        std::fs::read_to_string(list)
            .map_err(|e| format!("cannot read the list of files `{}`: {e}", list.display()))?
    };
    Ok(text
        .lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .filter(|line| !line.is_empty())
        .map(PathBuf::from)
        .collect())
}

/// gpg and KeePass settings (docs/security.md): checking signed imports and opening KeePass
/// databases from `input`, signing outputs from `signing` (`None`: this command signs
/// nothing).
fn security(input: &InputArgs, signing: Option<&CompileArgs>) -> Result<cf2::Security, String> {
    let (gpg_user, gpg_pass, gpg_pass_file, sign) = match signing {
        Some(a) => (&a.gpg_user, &a.gpg_pass, &a.gpg_pass_file, a.sign),
        None => (&None, &None, &None, false),
    };
    let passphrase = match (gpg_pass, gpg_pass_file) {
        (Some(p), _) => Some(p.clone()),
        // Read only to sign: without -S it is ignored (with a warning), not required.
        (None, Some(file)) if sign => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                format!("cannot read the pass phrase file `{}`: {e}", file.display())
            })?;
            Some(text.lines().next().unwrap_or("").to_string())
        }
        (None, _) => None,
    };
    Ok(cf2::Security::new(cf2::SecuritySettings {
        gpg: cf2::Gpg {
            home: input.gpg_home.clone(),
            user: gpg_user.clone(),
            passphrase,
            passphrase_file: gpg_pass_file.clone(),
            ..cf2::Gpg::default()
        },
        keepass: cf2::KeePass {
            prompt: input.keepass_prompt,
            password_file: input.keepass_password_file.clone(),
            keyfile: input.keepass_keyfile.clone(),
            use_keychain: !input.no_keychain,
            ..cf2::KeePass::default()
        },
    }))
}

/// Not an error: a script may allow the same directories on every machine, and one that is
/// missing allows nothing more; but a typo would show only as a refused import.
fn warn_about_allowed_dirs(input: &InputArgs) {
    for dir in input.allow_dirs.iter().filter(|d| !d.is_dir()) {
        sayln!(
            "cf2: warning: --allow-dir `{}` is not a directory: no file is allowed through it",
            dir.display()
        );
    }
}

fn compile(mut args: CompileArgs) -> ExitCode {
    if let Some(list) = &args.files_from {
        match files_listed(list) {
            Ok(files) => args.files.extend(files),
            Err(e) => return usage_error(&e),
        }
        if args.files.is_empty() {
            return usage_error(&format!("--files-from `{}` lists no file", list.display()));
        }
    }
    let opts = match options(&args.input) {
        Ok(o) => cf2::Options {
            trace: args.debug.iter().any(|d| d == "eval"),
            warn_duplicates: args.warn.iter().any(|w| w == "dup"),
            ..o
        },
        Err(e) => return usage_error(&e),
    };
    warn_about_allowed_dirs(&args.input);
    for option in signing_options_without_sign(&args) {
        // Not an error: the reference lists these among the options that configure gpg, so
        // a script may pass them to every compile; but one that meant to sign is told.
        sayln!("cf2: warning: {option} only applies to signing outputs (-S); it is ignored here");
    }
    // What the command line names and cannot be used (a pass phrase file that cannot be
    // read) is a command-line error, as a missing -F directory is.
    let security = match security(&args.input, Some(&args)) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    if args.out_dir.is_some() {
        if !args.outputs.is_empty() {
            return usage_error("-o and --out-dir cannot be used together");
        }
        return batch::run(&args, &opts, security);
    }
    if args.files.len() > 1 {
        return usage_error("several files need --out-dir DIR (one output per input)");
    }
    output::single(&args, &opts, security)
}
