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
                let d = cf2::refusal(&host, loader, Main::File(file), opts, &e);
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
    let renamed: Vec<PathBuf> = staged.iter().filter_map(|(_, tmp)| tmp.target()).collect();
    if !commit_all(staged) {
        return ExitCode::from(1);
    }
    // The data went to disk before the renames (`stage`); the names go now, so that when
    // the compile ends its outputs are on disk under their names, as a batch's are.
    if let Err((dir, e)) = flush_directories(&renamed) {
        sayln!("cf2: error: {}", cannot_flush(&dir, &e));
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The message for a directory of renamed outputs that could not be flushed.
pub fn cannot_flush(dir: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot flush the directory `{}` to disk: {}",
        dir.display(),
        io_reason(e)
    )
}

/// Flushes to disk the directories that hold `files` (each once), so that names just
/// renamed into them survive a power cut; the first that fails, with its error.
pub fn flush_directories(files: &[PathBuf]) -> Result<(), (PathBuf, std::io::Error)> {
    let mut done: Vec<&Path> = Vec::new();
    for file in files {
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if done.contains(&dir) {
            continue;
        }
        done.push(dir);
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| (dir.to_path_buf(), e))?;
    }
    Ok(())
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
/// it to disk before the rename (so a power cut cannot leave an empty file); a batch flushes
/// its outputs in groups instead ([`crate::out_dir::OutDir`]), since one flush per host
/// dominated its run time. See [`stage`] for devices, pipes and symbolic links.
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
    /// The file a rename will put in place; `None` for a device or pipe written in place.
    pub fn target(&self) -> Option<PathBuf> {
        match self {
            Staged::File(_, target) | Staged::Closed(_, target) => Some(target.clone()),
            Staged::InPlace(..) => None,
        }
    }

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
pub fn stage(path: &Path, data: &[u8], durable: bool) -> std::io::Result<Staged> {
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
    // process killed before it renamed it knows it for what it is ([`crate::out_dir`]).
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
pub const STAGED: &str = ".cf2-new-";

#[cfg(test)]
mod tests {
    use super::flush_directories;
    use std::path::PathBuf;

    /// Each directory is flushed once; one that cannot be opened is named with its error.
    #[test]
    fn the_directories_of_renamed_outputs_are_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let files = [dir.path().join("a.json"), dir.path().join("b.json")];
        assert!(flush_directories(&files).is_ok());
        // A bare name is in the working directory.
        assert!(flush_directories(&[PathBuf::from("out.json")]).is_ok());
        let gone = dir.path().join("gone");
        let (named, e) = flush_directories(&[gone.join("c.json")]).unwrap_err();
        assert_eq!(named, gone);
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        // What the compile then says (exit 1).
        assert_eq!(
            super::cannot_flush(&named, &e),
            format!(
                "cannot flush the directory `{}` to disk: No such file or directory (os error 2)",
                gone.display()
            )
        );
    }
}
