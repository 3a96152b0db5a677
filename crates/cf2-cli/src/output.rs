//! Compiling one file to the outputs named by `-o`. Every output is rendered in memory
//! first; only when all succeed are they written to temporary files beside their names;
//! only when all of those are written is standard output printed, and only when that
//! succeeded are the files renamed into place, so a failed compile, or an output that
//! cannot be written, writes nothing.

use crate::sources::{self, Recorded};
use crate::{color, usage_error, CompileArgs};
use cf2_eval::{evaluate, Loader, Main};
use cf2_output::Format;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One `-o NAME[:PATH]`.
pub struct Request {
    /// As given.
    pub spec: String,
    pub name: String,
    pub path: String,
    pub format: Format,
    /// Whether NAME's extension named the format (else `--format` or the default did).
    pub by_extension: bool,
}

/// `-o NAME[:PATH]`; `given` is `--format`'s, for a NAME whose extension names no format.
pub fn parse_request(spec: &str, given: Option<Format>) -> Result<Request, String> {
    let (name, path) = match spec.split_once(':') {
        Some((n, p)) => (n.to_string(), p.to_string()),
        None => (spec.to_string(), String::new()),
    };
    if name.is_empty() {
        return Err(format!("-o `{spec}`: the output name is empty"));
    }
    // `-o web.json:`: a path forgotten, not the whole configuration (that is `-o web.json`).
    if path.is_empty() && spec.contains(':') {
        return Err(format!(
            "-o `{spec}`: the resource path after `:` is empty\n\
             hint: `-o {name}` writes the whole configuration, `-o {name}:Web.Ports` the \
             resource `Web.Ports`"
        ));
    }
    // `a.`, `a..b`, `.a`: no resource has an empty name (a selector is a name or a number).
    if !path.is_empty() && path.split('.').any(str::is_empty) {
        return Err(format!(
            "-o `{spec}`: the resource path `{path}` has an empty part"
        ));
    }
    // ` A`, `$A`, `L.(1)`, `dir/x.json`: not a path that could name a resource, which is a
    // mistake in the command, not a resource the configuration lacks.
    // (The empty path, the whole configuration, splits into one empty part: none to check.)
    if let Some(part) = path.split('.').find(|p| !p.is_empty() && !path_part(p)) {
        let shown = cf2_syntax::diagnostic::visible(part);
        let mut e = if part.bytes().all(|b| b.is_ascii_digit()) {
            format!("-o `{spec}`: the list index `{shown}` in the resource path is too large")
        } else {
            format!(
                "-o `{spec}`: `{shown}` in the resource path `{path}` is neither a resource name nor a list index"
            )
        };
        if path.contains(['/', '\\']) {
            e.push_str(&format!(
                "\nhint: the first `:` ends the output's name, so this writes `{name}`; an output whose name holds a `:` can be written to standard output and redirected: `-o -.json > 'NAME'`"
            ));
        }
        return Err(e);
    }
    // `-o out/`: a directory, which no output can be written as.
    if name.ends_with(['/', '\\']) {
        return Err(format!(
            "-o `{spec}`: the name ends with `{}`, so it names a directory, not a file\n\
             hint: name the file in it: `-o {name}config.json`",
            name.chars().last().unwrap_or('/')
        ));
    }
    // Reference §2.2: "The default format is cf2": a name without an extension (`-` too).
    // `--format` gives the format of a name whose extension names none.
    let named = match Path::new(&name).extension() {
        None => None,
        // An existing directory (`-o conf.d`): its "extension" names no format, and
        // writing it fails as a directory, which is what to say.
        Some(_) if Path::new(&name).is_dir() => None,
        Some(ext) => {
            let ext = ext.to_str().unwrap_or("");
            match (Format::from_extension(ext), given) {
                (Some(format), _) => Some(format),
                (None, Some(_)) => None,
                (None, None) => return Err(format!(
                    "-o `{name}`: unknown format `{ext}` (use .cf2, .json, .pl, .yaml, .yml or .toml)\n\
                     hint: for a file whose name must stay as it is, give its format: `-o {name} --format json`"
                )),
            }
        }
    };
    Ok(Request {
        spec: spec.to_string(),
        name,
        path,
        format: named.or(given).unwrap_or(Format::Cf2),
        by_extension: named.is_some(),
    })
}

/// A part of `-o`'s resource path: a name, or a list index (digits, counting from 0, as
/// `$L.('1')` selects) that fits in 64 bits.
fn path_part(part: &str) -> bool {
    cf2_syntax::lexer::is_identifier(part)
        || (part.bytes().all(|b| b.is_ascii_digit()) && part.parse::<i64>().is_ok())
}

pub fn single(args: &CompileArgs, opts: &cf2::Options, security: cf2::Security) -> ExitCode {
    let specs: Vec<String> = if args.outputs.is_empty() {
        vec!["-".to_string()]
    } else {
        args.outputs.clone()
    };
    let given = match args.format() {
        Ok(given) => given,
        Err(e) => return usage_error(&e),
    };
    let mut requests = Vec::new();
    for s in &specs {
        match parse_request(s, given.map(|(_, format)| format)) {
            Ok(r) => requests.push(r),
            Err(e) => return usage_error(&e),
        }
    }
    // Silently unused, it would leave the user with JSON where YAML was asked for.
    if let (Some((f, _)), true) = (given, requests.iter().all(|r| r.by_extension)) {
        let names: Vec<String> = requests.iter().map(|r| format!("`{}`", r.name)).collect();
        return usage_error(&format!(
            "--format {f} applies to no output: {} {} a format of {} own",
            names.join(", "),
            if names.len() == 1 { "has" } else { "have" },
            if names.len() == 1 { "its" } else { "their" },
        ));
    }
    let Some(file) = args.files.first() else {
        return usage_error("no file to compile");
    };
    if let Err(e) = check_files(&requests, &args.files, &args.credential_files()) {
        return usage_error(&e);
    }
    // Every file read is recorded, so that no output replaces one.
    let host = Recorded::new(cf2::Secured::new(cf2::OsHost, security));
    // The process ends when this compile does: the loader (every file's syntax tree) and
    // the values are left for the kernel to take back at exit rather than freed node by
    // node, which was a seventh of a one-host compile's instructions (BENCHMARKS.md).
    let loader = &*Box::leak(Box::new(Loader::new()));
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    let color = color();
    let result = evaluate(&host, loader, Main::File(file), opts, &paths);
    let (values, warnings, trace) = match result {
        Ok(e) => (Some(e.values), e.warnings, e.trace),
        Err(f) => {
            print_trace(&f.trace);
            for w in &f.warnings {
                say!("{}", w.render(loader, color));
            }
            for d in &f.errors {
                say!("{}", d.render(loader, color));
            }
            return ExitCode::from(1);
        }
    };
    print_trace(&trace);
    for w in &warnings {
        say!("{}", w.render(loader, color));
    }
    let Some(values) = values else {
        return ExitCode::from(1);
    };
    let values = &*Box::leak(values.into_boxed_slice());
    // Known only now: an output must not replace an imported file, or one `read()` read.
    for r in &requests {
        if standard_stream(&r.name).is_some() {
            continue;
        }
        if let Some(read) = host.reads(Path::new(&r.name)) {
            sayln!(
                "cf2: error: the output `{}` would replace `{}`, a file this compile reads",
                r.name,
                read.display()
            );
            return ExitCode::from(1);
        }
    }
    let mut rendered = Vec::new();
    for (r, v) in requests.iter().zip(values.iter()) {
        match cf2_output::render_at(v, r.format, &r.path) {
            Ok(text) => rendered.push((r, text.into_bytes())),
            Err(e) => {
                let d = refusal(&host, loader, Main::File(file), opts, &e);
                say!("{}", d.render(loader, color));
                return ExitCode::from(1);
            }
        }
    }
    if args.sign {
        // `-S`: every output clearsigned, before any is written.
        for (r, text) in &mut rendered {
            match host.host.security.clearsign(text) {
                Ok(signed) => *text = signed,
                Err(e) => {
                    sayln!("cf2: error: cannot sign the output `{}`: {e}", r.name);
                    return ExitCode::from(1);
                }
            }
        }
    }
    // Every file is written to a temporary file first; only when all are written is
    // anything printed, and only when that succeeded are they renamed into place: an output
    // that cannot be written, standard output included (`> /dev/full`, a reader gone),
    // leaves no other output behind (clarifications §8). The renames come last because
    // they are what fails least (a temporary file beside each target is written already).
    let mut staged = Vec::new();
    let mut printed = Vec::new();
    for (r, text) in rendered {
        if let Some(stream) = standard_stream(&r.name) {
            printed.push((stream, text));
            continue;
        }
        match stage(Path::new(&r.name), &text, true) {
            Ok(tmp) => staged.push((r, tmp)),
            Err(e) => {
                sayln!(
                    "cf2: error: cannot write `{}`: {}",
                    r.name,
                    write_reason(&r.name, &e)
                );
                return ExitCode::from(1);
            }
        }
    }
    // A device or pipe (`/dev/full`, a FIFO) cannot be staged: it is written before
    // standard output is printed and before any file is renamed into place, so that its
    // failure too leaves no other output behind.
    let (in_place, staged): (Vec<_>, Vec<_>) = staged
        .into_iter()
        .partition(|(_, tmp)| matches!(tmp, Staged::InPlace(..)));
    if !commit_all(in_place) {
        return ExitCode::from(1);
    }
    for (stream, text) in printed {
        if let Err(e) = stream.write(&text) {
            // A reader that stopped reading (`| head`) ends the run quietly.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                sayln!("cf2: error: cannot write {}: {e}", stream.name());
            }
            // Dropped, the staged files are removed.
            return ExitCode::from(1);
        }
    }
    if !commit_all(staged) {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Writes each staged output into place, stopping at the first that fails (reported);
/// whether all were written.
fn commit_all(staged: Vec<(&Request, Staged)>) -> bool {
    for (r, tmp) in staged {
        if let Err(e) = tmp.commit() {
            sayln!(
                "cf2: error: cannot write `{}`: {}",
                r.name,
                write_reason(&r.name, &e)
            );
            return false;
        }
    }
    true
}

/// Which of the process's own streams an output that is not a file goes to.
#[derive(Clone, Copy)]
enum Stream {
    Out,
    Err,
}

impl Stream {
    fn write(self, text: &[u8]) -> std::io::Result<()> {
        fn all(mut w: impl Write, text: &[u8]) -> std::io::Result<()> {
            w.write_all(text)?;
            w.flush()
        }
        match self {
            Stream::Out => all(std::io::stdout().lock(), text),
            Stream::Err => all(std::io::stderr().lock(), text),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Stream::Out => "standard output",
            Stream::Err => "standard error",
        }
    }
}

/// `/dev/stdout` and its aliases name the stream this process already has open, maybe a
/// file the shell redirected it to (`>> log`): it is written into, never replaced by a new
/// file (which would lose what the file held).
const STDOUT_ALIASES: &[&str] = &["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"];
const STDERR_ALIASES: &[&str] = &["/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"];

/// The standard stream the output `name` is (`-`, `-.json`, `/dev/stdout`, `/dev/stderr`),
/// if it is one.
fn standard_stream(name: &str) -> Option<Stream> {
    if name == "-" || name.starts_with("-.") || STDOUT_ALIASES.contains(&name) {
        Some(Stream::Out)
    } else if STDERR_ALIASES.contains(&name) {
        Some(Stream::Err)
    } else {
        None
    }
}

/// Checks the output files against one another and against the main `files`, before
/// anything is compiled: two outputs to one file (one would silently win), or an output
/// that is a main file or a credential file (it would replace the configuration's source,
/// or lose the key to its secrets).
fn check_files(
    requests: &[Request],
    files: &[PathBuf],
    credentials: &[(&str, &Path)],
) -> Result<(), String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let written: Vec<&Request> = requests
        .iter()
        .filter(|r| standard_stream(&r.name).is_none())
        .collect();
    let paths: Vec<PathBuf> = written.iter().map(|r| PathBuf::from(&r.name)).collect();
    if let Some((i, what)) = sources::command_line_file_replaced(files, credentials, &paths) {
        let name = written.get(i).map_or("", |r| r.name.as_str());
        return Err(format!("-o `{name}` would replace {what}"));
    }
    let mut seen: Vec<(&Request, PathBuf, Option<sources::Key>)> = Vec::new();
    for (r, path) in written.into_iter().zip(&paths) {
        let full = resolved(&cwd, path);
        let key = sources::key(path);
        if let Some((first, _, _)) = seen
            .iter()
            .find(|(_, f, k)| *f == full || (key.is_some() && *k == key))
        {
            return Err(format!(
                "-o `{}` and -o `{}` both write `{}`",
                first.spec, r.spec, first.name
            ));
        }
        seen.push((r, full, key));
    }
    Ok(())
}

/// Where `path` is, its directory's symbolic links resolved: two names of one file not yet
/// written (`d1/x.json` and `d2/x.json`, `d2` a link to `d1`) are the same place.
fn resolved(cwd: &Path, path: &Path) -> PathBuf {
    let full = cf2_eval::host::normalize(&cwd.join(path));
    match (full.parent(), full.file_name()) {
        (Some(dir), Some(name)) => {
            std::fs::canonicalize(dir).map_or(full.clone(), |d| d.join(name))
        }
        _ => full,
    }
}

/// Why `name` cannot be written, without the temporary file's name that some errors carry;
/// a missing directory is said so.
fn write_reason(name: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        if let Some(dir) = Path::new(name)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            if !dir.is_dir() {
                return format!("the directory `{}` does not exist", dir.display());
            }
        }
    }
    io_reason(e)
}

fn print_trace(trace: &[String]) {
    for t in trace {
        sayln!("{t}");
    }
}

/// A format's refusal of a value, as a diagnostic at the definition of the resource that
/// gave the value.
pub fn refusal(
    host: &dyn cf2_eval::Host,
    loader: &Loader,
    main: Main<'_>,
    opts: &cf2::Options,
    e: &cf2_output::OutputError,
) -> cf2::Diagnostic {
    cf2_eval::error_at_value(
        host,
        loader,
        main,
        opts,
        e.path(),
        e.to_string(),
        "the output cannot be written",
    )
}

/// The message for an output of a batch that could not be written.
pub fn cannot_write(path: &Path, e: &std::io::Error) -> String {
    format!("cannot write `{}`: {}", path.display(), io_reason(e))
}

/// The reason of an I/O error without the paths some errors carry.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => e.kind().to_string(),
    }
}

/// Writes a file whole or not at all: a temporary file in the same directory, renamed into
/// place, so a reader sees the old file or the new one, never a part. `durable` also flushes
/// it to disk before the rename (so a power cut cannot leave an empty file); batch compiles
/// skip that, since one flush per host dominated their run time. See [`stage`] for devices,
/// pipes and symbolic links.
pub fn write_atomic(path: &Path, data: &[u8], durable: bool) -> std::io::Result<()> {
    stage(path, data, durable)?.commit()
}

/// An output ready to be put in place.
pub enum Staged {
    /// A temporary file beside the target, renamed over it.
    File(tempfile::NamedTempFile, PathBuf),
    /// The same, closed: for outputs kept staged by the thousand (a batch), which would
    /// otherwise hold a descriptor each.
    Closed(tempfile::TempPath, PathBuf),
    /// An existing device or pipe (`/dev/null`, `/dev/stdout`, a FIFO), written in place:
    /// a file renamed over it would replace it (as root, `-o /dev/null` would turn
    /// `/dev/null` into a regular file).
    InPlace(PathBuf, Vec<u8>),
}

impl Staged {
    pub fn commit(self) -> std::io::Result<()> {
        match self {
            Staged::File(tmp, target) => tmp.persist(target).map(|_| ()).map_err(|e| e.error),
            Staged::Closed(tmp, target) => tmp.persist(target).map_err(|e| e.error),
            Staged::InPlace(target, data) => std::fs::OpenOptions::new()
                .write(true)
                .open(target)?
                .write_all(&data),
        }
    }
}

/// Prepares `data` for `path`. A symbolic link is followed (the file it points to gets the
/// new content; the link stays), and an existing file that is not a regular file (a
/// device, a pipe) is written in place when committed. Otherwise the data goes to a
/// temporary file beside the target, ready to be renamed into place; dropped, it is removed.
fn stage(path: &Path, data: &[u8], durable: bool) -> std::io::Result<Staged> {
    // One `lstat` in the common case (a regular file, or none yet): batch mode pays it per
    // host.
    let mut target = path.to_path_buf();
    let mut found = std::fs::symlink_metadata(path).ok();
    if found.as_ref().is_some_and(|m| m.file_type().is_symlink()) {
        // Followed; a dangling link names the file to create.
        target = std::fs::canonicalize(path).unwrap_or_else(|_| match std::fs::read_link(path) {
            Ok(to) => path.parent().map_or(to.clone(), |dir| dir.join(&to)),
            Err(_) => path.to_path_buf(),
        });
        found = std::fs::metadata(&target).ok();
    }
    if let Some(meta) = &found {
        // Found now, not when the outputs are renamed into place: by then another output
        // may have been replaced.
        if meta.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        if !meta.is_file() {
            return Ok(Staged::InPlace(target, data.to_vec()));
        }
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Temporary files are created private (0600); an output is an ordinary file, so it is
    // created 0666 and the umask decides, as for any file a program writes.
    let mut builder = tempfile::Builder::new();
    // Named after the output and this process, so that a batch that finds one left by a
    // process killed before it renamed it knows it for what it is ([`stale_staged`]).
    let prefix = format!(
        ".{}{STAGED}{}-",
        target.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    );
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    if let Some(replaced) = &found {
        // The file it replaces keeps its mode, as `sed -i` and `install` keep it: an
        // operator who made an output holding passwords 0600 must not find it 0644 after
        // the next compile. (Its owner and group are the user's who compiles.)
        tmp.as_file().set_permissions(replaced.permissions())?;
    }
    tmp.write_all(data)?;
    if durable {
        tmp.as_file().sync_all()?;
    }
    Ok(Staged::File(tmp, target))
}

/// What the name of a staged output holds after the output's name, before the process's
/// number: `.web.json.cf2-new-PID-XXXXXX.tmp`.
const STAGED: &str = ".cf2-new-";

/// Whether `name` is that of an output staged by a process that is gone (killed before it
/// put the output in place): the name is one [`stage`] gives, and no process has its
/// number. A number reused since only leaves the file for a later run.
fn stale_staged(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let Some((_, after)) = name
        .strip_prefix('.')
        .filter(|_| name.ends_with(".tmp"))
        .and_then(|n| n.rsplit_once(STAGED))
    else {
        return false;
    };
    let Some(pid) = after.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
        return false;
    };
    #[cfg(unix)]
    {
        // SAFETY: `kill` with signal 0 sends nothing; it only asks whether `pid` exists.
        pid > 0
            && unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// The directory of a batch (`--out-dir`), with the names it held when the batch started.
///
/// An output whose name was not there is new: on Linux it is written into an unnamed file
/// (`O_TMPFILE`) that `linkat` then gives its name. A link never replaces anything, so the
/// file appears whole or not at all (a killed process leaves nothing, not even a temporary
/// name), and a name that appeared meanwhile — a pipe, a link, a file — makes it fail with
/// `EEXIST` instead of being overwritten. That takes `open`, `write`, `linkat`, `close`
/// where [`write_atomic`] takes `lstat`, `open`, `write`, `close`, `rename`, with no path
/// walk from the root (at most the short one of `/proc/self/fd/N`, see [`Naming`]).
///
/// Every other output — a name that was there (a file to replace, a device or pipe to write
/// into, a link to follow), a new name that failed (`EEXIST`), or any output once unnamed
/// files turned out not to work here (no `O_TMPFILE` on this file system, no `/proc`) —
/// goes through [`write_atomic`], which also reports the errors.
pub struct OutDir {
    path: PathBuf,
    existing: std::collections::HashSet<std::ffi::OsString>,
    /// Whether `existing` holds every name (the directory could be listed).
    complete: bool,
    #[cfg(target_os = "linux")]
    fd: Option<std::fs::File>,
    /// How new outputs are written: a [`Naming`], which only ever moves down the list as
    /// the run finds what this system refuses.
    naming: std::sync::atomic::AtomicU8,
}

/// How an [`OutDir`] writes a new output, best first.
///
/// `linkat(fd, "", …, AT_EMPTY_PATH)` names an unnamed file's descriptor directly; Linux
/// 6.10 allows it to whoever opened the file, earlier kernels only with
/// CAP_DAC_READ_SEARCH (ENOENT otherwise). The `/proc` link of the descriptor, followed,
/// is the same file for anyone, at the price of a path walk through `/proc` (half of a
/// batch's `linkat` time on tmpfs). Without unnamed files, [`write_atomic`].
#[repr(u8)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Naming {
    LinkDescriptor,
    LinkThroughProc,
    Rename,
}

impl OutDir {
    /// Lists `path` (which exists). If it cannot be listed or opened, every output takes
    /// the path of [`write_atomic`].
    pub fn open(path: &Path) -> OutDir {
        let listed = std::fs::read_dir(path).and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.file_name()))
                .collect::<std::io::Result<std::collections::HashSet<_>>>()
        });
        // What a killed run left: gone, or they would pile up run after run.
        let listed = listed.map(|mut names| {
            names.retain(|name| {
                !(stale_staged(name) && std::fs::remove_file(path.join(name)).is_ok())
            });
            names
        });
        #[cfg(target_os = "linux")]
        let fd = listed.as_ref().ok().and_then(|_| {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(path)
                .ok()
        });
        #[cfg(target_os = "linux")]
        let naming = if fd.is_some() {
            Naming::LinkDescriptor
        } else {
            Naming::Rename
        };
        #[cfg(not(target_os = "linux"))]
        let naming = Naming::Rename;
        OutDir {
            path: path.to_path_buf(),
            complete: listed.is_ok(),
            existing: listed.unwrap_or_default(),
            #[cfg(target_os = "linux")]
            fd,
            naming: std::sync::atomic::AtomicU8::new(naming as u8),
        }
    }

    /// Whether the directory may have held `name` when the batch started (it did, or it
    /// could not be listed).
    pub fn listed(&self, name: &str) -> bool {
        !self.complete || self.existing.contains(std::ffi::OsStr::new(name))
    }

    /// Only [`write_atomic`], as if unnamed files did not work here (for tests).
    #[cfg(test)]
    fn without_unnamed_files(self) -> OutDir {
        self.settle(Naming::Rename);
        self
    }

    /// Whether new outputs are still written as unnamed files.
    #[cfg(test)]
    fn unnamed(&self) -> bool {
        self.naming() != Naming::Rename as u8
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn naming(&self) -> u8 {
        self.naming.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// From now on, new outputs are written `naming`'s way (or a worse one already found).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn settle(&self, naming: Naming) {
        self.naming
            .fetch_max(naming as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `data` beside the file `name` of the directory, to be put in its place by
    /// [`Staged::commit`] (or left out, dropped): the batch keeps its outputs that replace
    /// files on disk, not in memory, until every host has read what it reads.
    pub fn stage_named(&self, name: &str, data: &[u8]) -> Result<Staged, String> {
        let path = self.path.join(name);
        stage(&path, data, false)
            .map(|staged| match staged {
                Staged::File(tmp, target) => Staged::Closed(tmp.into_temp_path(), target),
                other => other,
            })
            .map_err(|e| cannot_write(&path, &e))
    }

    /// [`OutDir::write`], its error a message naming the output (`cannot write
    /// `out/web.json`: Is a directory`).
    pub fn write_named(&self, name: &str, data: &[u8]) -> Result<(), String> {
        self.write(name, data)
            .map_err(|e| cannot_write(&self.path.join(name), &e))
    }

    /// Writes `data` to the file `name` of the directory, whole or not at all.
    pub fn write(&self, name: &str, data: &[u8]) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        if self.naming() != Naming::Rename as u8
            && !self.existing.contains(std::ffi::OsStr::new(name))
        {
            match self.write_new(name, data) {
                Ok(()) => return Ok(()),
                // The name appeared since the listing: `write_atomic` sees what it is.
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                // Unnamed files do not work here (or the disk is full, or the directory
                // gone): `write_atomic` from now on, which says why if it fails too.
                Err(_) => self.settle(Naming::Rename),
            }
        }
        write_atomic(&self.path.join(name), data, false)
    }

    /// `data` in a new unnamed file of the directory, then linked as `name` (see
    /// [`Naming`]): the name appears with the whole content or not at all, and never
    /// replaces anything (`EEXIST`).
    #[cfg(target_os = "linux")]
    fn write_new(&self, name: &str, data: &[u8]) -> std::io::Result<()> {
        use std::ffi::CString;
        use std::os::fd::{AsRawFd, FromRawFd};
        let Some(dir) = &self.fd else {
            return Err(std::io::ErrorKind::Unsupported.into());
        };
        let invalid = |_| std::io::Error::from(std::io::ErrorKind::InvalidInput);
        // Mode 0666 less the umask, as `write_atomic` creates its files (docs/security.md).
        // SAFETY: a valid directory descriptor and a NUL-terminated path; the descriptor
        // returned is owned by the `File` alone.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                c".".as_ptr(),
                libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.write_all(data)?;
        let to = CString::new(name).map_err(invalid)?;
        if self.naming() == Naming::LinkDescriptor as u8 {
            match link(fd, c"", dir, &to, libc::AT_EMPTY_PATH) {
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    self.settle(Naming::LinkThroughProc)
                }
                linked => return linked,
            }
        }
        let from = CString::new(format!("/proc/self/fd/{fd}")).map_err(invalid)?;
        link(libc::AT_FDCWD, &from, dir, &to, libc::AT_SYMLINK_FOLLOW)
    }
}

/// `linkat(from_dir, from, dir, to, flags)`.
#[cfg(target_os = "linux")]
fn link(
    from_dir: std::ffi::c_int,
    from: &std::ffi::CStr,
    dir: &std::fs::File,
    to: &std::ffi::CStr,
    flags: std::ffi::c_int,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: NUL-terminated paths; `from_dir` is a descriptor or AT_FDCWD.
    let linked =
        unsafe { libc::linkat(from_dir, from.as_ptr(), dir.as_raw_fd(), to.as_ptr(), flags) };
    if linked != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::OutDir;
    use std::fs;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
    use std::path::Path;

    /// The files of `dir`, sorted (no temporary file may be left).
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// What the process's umask makes of 0666 (read without changing it for other tests:
    /// a file made the old way, through `tempfile`, tells).
    fn ordinary_mode(dir: &Path) -> u32 {
        let probe = dir.join("probe");
        super::write_atomic(&probe, b"", false).unwrap();
        let m = mode(&probe);
        fs::remove_file(probe).unwrap();
        m
    }

    /// New names, through unnamed files where they work and through `write_atomic` where
    /// they do not, give the same files with the same modes and nothing else.
    #[test]
    fn new_outputs_are_whole_with_the_ordinary_mode_either_way() {
        for fallback in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            let want = ordinary_mode(dir);
            let mut out = OutDir::open(dir);
            if fallback {
                out = out.without_unnamed_files();
            }
            out.write("a.json", b"{}\n").unwrap();
            out.write("b.json", b"[1]\n").unwrap();
            assert_eq!(names(dir), ["a.json", "b.json"]);
            assert_eq!(fs::read_to_string(dir.join("a.json")).unwrap(), "{}\n");
            assert_eq!(fs::read_to_string(dir.join("b.json")).unwrap(), "[1]\n");
            assert_eq!(mode(&dir.join("a.json")), want, "fallback: {fallback}");
        }
    }

    /// Names that appear after the listing are what they are when written: a pipe is
    /// written into, a link (even dangling) is followed, a file is replaced — never
    /// overwritten by the unnamed file's link, which fails (`EEXIST`) instead.
    #[test]
    fn names_that_appear_after_the_listing_are_not_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let out = OutDir::open(dir);
        std::os::unix::fs::symlink("real.json", dir.join("link.json")).unwrap();
        fs::write(dir.join("file.json"), "old").unwrap();
        fs::hard_link(dir.join("file.json"), dir.join("file.keep")).unwrap();
        let fifo = dir.join("pipe.json");
        let piped = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if piped {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
            };
            out.write("pipe.json", b"piped\n").unwrap();
            assert_eq!(reader.join().unwrap(), "piped\n");
            assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        } else {
            sayln!("mkfifo is not available: pipes not tested");
        }
        out.write("link.json", b"linked\n").unwrap();
        assert!(fs::symlink_metadata(dir.join("link.json"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::read_to_string(dir.join("real.json")).unwrap(),
            "linked\n"
        );
        out.write("file.json", b"new\n").unwrap();
        assert_eq!(fs::read_to_string(dir.join("file.json")).unwrap(), "new\n");
        assert_eq!(fs::read_to_string(dir.join("file.keep")).unwrap(), "old");
        let mut want = vec!["file.json", "file.keep", "link.json", "real.json"];
        if piped {
            want.push("pipe.json");
            want.sort();
        }
        assert_eq!(names(dir), want);
        // A name that appeared is no reason to stop using unnamed files.
        #[cfg(target_os = "linux")]
        assert_eq!(out.unnamed(), out.fd.is_some());
    }

    /// A name listed at the start is replaced by rename (a new file: a hard link to the old
    /// one keeps the old content), not written through.
    #[test]
    fn listed_files_are_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("a.json"), "old").unwrap();
        fs::hard_link(dir.join("a.json"), dir.join("a.keep")).unwrap();
        let before = fs::metadata(dir.join("a.json")).unwrap().ino();
        let out = OutDir::open(dir);
        out.write("a.json", b"new\n").unwrap();
        assert_eq!(fs::read_to_string(dir.join("a.json")).unwrap(), "new\n");
        assert_eq!(fs::read_to_string(dir.join("a.keep")).unwrap(), "old");
        assert_ne!(fs::metadata(dir.join("a.json")).unwrap().ino(), before);
        assert_eq!(names(dir), ["a.json", "a.keep"]);
    }

    /// On a file system with unnamed files (tmpfs, ext4, xfs, btrfs), the fast path is
    /// taken and stays on.
    #[cfg(target_os = "linux")]
    #[test]
    fn unnamed_files_are_used_where_they_work() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let probe = tempfile::tempdir().unwrap();
        let works = OutDir::open(probe.path()).write_new("probe", b"").is_ok();
        let out = OutDir::open(dir);
        out.write("a.json", b"1").unwrap();
        assert_eq!(out.unnamed(), works);
        if !works {
            sayln!("no O_TMPFILE or /proc here: only the fallback is tested");
        }
    }

    /// Both ways of naming an unnamed file give the same file, and neither replaces a name
    /// (`EEXIST`): `AT_EMPTY_PATH`, and the `/proc` link used where the kernel refuses it.
    #[cfg(target_os = "linux")]
    #[test]
    fn unnamed_files_are_linked_either_way() {
        for refused in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let out = OutDir::open(tmp.path());
            if refused {
                out.settle(super::Naming::LinkThroughProc);
            }
            if out.write_new("a.json", b"{}\n").is_err() {
                sayln!("no O_TMPFILE or /proc here (refused: {refused})");
                continue;
            }
            assert_eq!(names(tmp.path()), ["a.json"]);
            assert_eq!(
                fs::read_to_string(tmp.path().join("a.json")).unwrap(),
                "{}\n"
            );
            let again = out
                .write_new("a.json", b"[]\n")
                .map_err(|e| e.raw_os_error());
            assert_eq!(again, Err(Some(libc::EEXIST)), "refused: {refused}");
            assert_eq!(
                fs::read_to_string(tmp.path().join("a.json")).unwrap(),
                "{}\n"
            );
        }
    }
}
