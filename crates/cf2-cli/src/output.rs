//! Compiling one file to the outputs named by `-o`. Every output is rendered in memory
//! first; only when all succeed are they written to temporary files beside their names,
//! and only when all of those are written are they renamed into place and is standard
//! output printed, so a failed compile, or an output that cannot be written, writes nothing.

use crate::{color, usage_error, CompileArgs};
use cf2_eval::{evaluate, Loader, Main};
use cf2_output::Format;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One `-o NAME[:PATH]`.
pub struct Request {
    pub name: String,
    pub path: String,
    pub format: Format,
}

pub fn parse_request(spec: &str) -> Result<Request, String> {
    let (name, path) = match spec.split_once(':') {
        Some((n, p)) => (n.to_string(), p.to_string()),
        None => (spec.to_string(), String::new()),
    };
    if name.is_empty() {
        return Err(format!("-o `{spec}`: the output name is empty"));
    }
    // Reference §2.2: "The default format is cf2": a name without an extension (`-` too).
    let format = match Path::new(&name).extension() {
        None => Format::Cf2,
        Some(ext) => {
            let ext = ext.to_str().unwrap_or("");
            Format::from_extension(ext).ok_or_else(|| {
                format!("-o `{name}`: unknown format `{ext}` (use .cf2, .json, .pl, .yaml, .yml or .toml)")
            })?
        }
    };
    Ok(Request { name, path, format })
}

pub fn single(args: &CompileArgs, opts: &cf2::Options, security: cf2::Security) -> ExitCode {
    let specs: Vec<String> = if args.outputs.is_empty() {
        vec!["-".to_string()]
    } else {
        args.outputs.clone()
    };
    let mut requests = Vec::new();
    for s in &specs {
        match parse_request(s) {
            Ok(r) => requests.push(r),
            Err(e) => return usage_error(&e),
        }
    }
    let Some(file) = args.files.first() else {
        return usage_error("no file to compile");
    };
    let host = cf2::Secured::new(cf2::OsHost, security);
    let loader = Loader::new();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    let color = color();
    let result = evaluate(&host, &loader, Main::File(file), opts, &paths);
    let (values, warnings, trace) = match result {
        Ok(e) => (Some(e.values), e.warnings, e.trace),
        Err(f) => {
            print_trace(&f.trace);
            for w in &f.warnings {
                eprint!("{}", w.render(&loader, color));
            }
            for d in &f.errors {
                eprint!("{}", d.render(&loader, color));
            }
            return ExitCode::from(1);
        }
    };
    print_trace(&trace);
    for w in &warnings {
        eprint!("{}", w.render(&loader, color));
    }
    let Some(values) = values else {
        return ExitCode::from(1);
    };
    let mut rendered = Vec::new();
    for (r, v) in requests.iter().zip(values.iter()) {
        match cf2_output::render_at(v, r.format, &r.path) {
            Ok(text) => rendered.push((r, text.into_bytes())),
            Err(e) => {
                eprintln!("{}: error: {e}", file.display());
                return ExitCode::from(1);
            }
        }
    }
    if args.sign {
        // `-S`: every output clearsigned, before any is written.
        for (r, text) in &mut rendered {
            match host.security.clearsign(text) {
                Ok(signed) => *text = signed,
                Err(e) => {
                    eprintln!("cf2: error: cannot sign the output `{}`: {e}", r.name);
                    return ExitCode::from(1);
                }
            }
        }
    }
    // Every file is written to a temporary file first; only when all are written are they
    // renamed into place, and only then is anything printed: an output that cannot be
    // written leaves no other output behind (clarifications §8).
    let mut staged = Vec::new();
    let mut printed = Vec::new();
    for (r, text) in rendered {
        if r.name == "-" || r.name.starts_with("-.") {
            printed.push(text);
            continue;
        }
        match stage(Path::new(&r.name), &text, true) {
            Ok(tmp) => staged.push((r, tmp)),
            Err(e) => {
                eprintln!(
                    "cf2: error: cannot write `{}`: {}",
                    r.name,
                    write_reason(&r.name, &e)
                );
                return ExitCode::from(1);
            }
        }
    }
    for (r, tmp) in staged {
        if let Err(e) = tmp.commit() {
            eprintln!(
                "cf2: error: cannot write `{}`: {}",
                r.name,
                write_reason(&r.name, &e)
            );
            return ExitCode::from(1);
        }
    }
    let mut out = std::io::stdout().lock();
    for text in printed {
        if out.write_all(&text).and_then(|_| out.flush()).is_err() {
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
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
        eprintln!("{t}");
    }
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
enum Staged {
    /// A temporary file beside the target, renamed over it.
    File(tempfile::NamedTempFile, PathBuf),
    /// An existing device or pipe (`/dev/null`, `/dev/stdout`, a FIFO), written in place:
    /// a file renamed over it would replace it (as root, `-o /dev/null` would turn
    /// `/dev/null` into a regular file).
    InPlace(PathBuf, Vec<u8>),
}

impl Staged {
    fn commit(self) -> std::io::Result<()> {
        match self {
            Staged::File(tmp, target) => tmp.persist(target).map(|_| ()).map_err(|e| e.error),
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
    if let Some(meta) = found {
        if !meta.is_file() && !meta.is_dir() {
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
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(data)?;
    if durable {
        tmp.as_file().sync_all()?;
    }
    Ok(Staged::File(tmp, target))
}
