//! Compile CF2 configurations from Rust: the counterpart of the reference's Perl
//! `CF2::Config` (§2.2).
//!
//! ```
//! use cf2::{Compiler, MemoryHost};
//! let host = MemoryHost::new().with_file("site.cf2", "Web.Ports => [80, 443]\nWeb.Name => www\n");
//! let config = Compiler::with_host(host).compile_file("site.cf2").unwrap();
//! let ports: Vec<u16> = config.deserialize("Web.Ports").unwrap();
//! assert_eq!(ports, vec![80, 443]);
//! assert_eq!(config.get("Web.Name").and_then(|v| v.as_text()), Some("www"));
//! ```

mod explain;
mod os_host;
mod secured;

pub use cf2_eval::external::{
    Arg, CallContext, Function, FunctionProvider, Location, Mutation, NativeFunction, ParamType,
    Unevaluated,
};
pub use cf2_eval::{Host, Loader, Made, Main, MemoryHost, Options, Origin, Provenance};
pub use cf2_output::{Format, OutputError};
pub use cf2_syntax::{Diagnostic, Severity, Span};
pub use cf2_value::{Block, Number, Value};
pub use os_host::OsHost;
pub use secured::Secured;

/// Security settings and the gpg / KeePass back end (docs/security.md).
pub use cf2_eval::host::{HostError, KeePassEntry, KeePassGroup, Signed, Signer};
pub use cf2_security::{Gpg, KeePass, Security, Settings as SecuritySettings};

use cf2_syntax::Sources;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Compiles configurations. One compiler can compile many files, one after another or from
/// several threads at once (`Compiler` is `Send + Sync`); each compile reads its files
/// afresh, so a long-lived compiler sees files edited between compiles, and keeps nothing
/// from a compile once its result is dropped. A clone shares the host, and the options
/// until one of them changes its own (`compiler.clone().include_private(true)`).
#[derive(Clone)]
pub struct Compiler {
    /// Shared with each [`Config`], which compiles again to place a deserialization error.
    host: Arc<dyn Host>,
    /// Shared with each [`Config`] too, and copied only when changed after that.
    options: Arc<Options>,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler::new()
    }
}

impl Compiler {
    /// A compiler reading the real file system and environment.
    pub fn new() -> Compiler {
        Compiler::with_host(OsHost)
    }

    /// A compiler reading the real file system, with explicit security settings: the gpg
    /// keyring and signing key, and where KeePass passwords come from.
    pub fn with_security(settings: SecuritySettings) -> Compiler {
        Compiler::with_host(Secured::new(OsHost, Security::new(settings)))
    }

    /// A compiler with its own host (for example a [`MemoryHost`] in tests).
    pub fn with_host(host: impl Host + 'static) -> Compiler {
        Compiler {
            host: Arc::new(host),
            options: Arc::default(),
        }
    }

    pub fn options_mut(&mut self) -> &mut Options {
        Arc::make_mut(&mut self.options)
    }

    /// Output private resources too (`-p`).
    pub fn include_private(mut self, yes: bool) -> Compiler {
        self.options_mut().include_private = yes;
        self
    }

    /// Registers a custom function written in Rust (docs/functions.md): callable as
    /// `name(...)` from configurations, and as `X ~(name)> value` if it is a mutation
    /// function. Standard function and mutation function names cannot be taken: a
    /// function registered under one makes every compile fail, naming it.
    pub fn register_function(mut self, f: impl Function + 'static) -> Compiler {
        self.options_mut().functions.register(Arc::new(f));
        self
    }

    /// A native function registered under a standard name (through
    /// [`Compiler::register_function`] or [`Options::functions`]) would never be called:
    /// the compile fails instead, naming it.
    fn refused_function(&self) -> Option<Diagnostic> {
        let mut names: Vec<&str> = self
            .options
            .functions
            .native_names()
            .filter(|n| {
                cf2_eval::STANDARD_FUNCTIONS.contains(n) || cf2_eval::STANDARD_MUTATORS.contains(n)
            })
            .collect();
        names.sort_unstable();
        let name = names.first()?;
        Some(
            Diagnostic::error(format!(
                "a custom function cannot be named `{name}`: it is a standard function"
            ))
            .hint("register it under another name (docs/functions.md)"),
        )
    }

    /// Adds a source of custom functions, such as `cf2_lua::LuaFunctions` (Lua modules on
    /// a function path). Registered functions come first, then providers in the order
    /// they were added.
    pub fn add_functions(mut self, provider: impl FunctionProvider + 'static) -> Compiler {
        self.options_mut()
            .functions
            .add_provider(Arc::new(provider));
        self
    }

    // A loader per compile: files are read as they are now, and freed with the result.
    pub fn compile_file(&self, path: impl AsRef<Path>) -> Result<Config, Error> {
        self.run(Loader::new(), Main::File(path.as_ref()), "")
    }

    /// Compiles text; `name` is how diagnostics name it, and imports are searched from the
    /// working directory.
    pub fn compile_str(&self, name: &str, text: &str) -> Result<Config, Error> {
        self.run(Loader::new(), Main::Text { name, text }, "")
    }

    /// Compiles only what the value at `path` needs (`Web.Ports`), as `cf2 compile FILE
    /// -o -:PATH` does: a resource elsewhere that fails is not evaluated, and a private
    /// resource asked for by its path is given. The [`Config`]'s value is that value.
    pub fn compile_file_at(&self, file: impl AsRef<Path>, path: &str) -> Result<Config, Error> {
        self.run(Loader::new(), Main::File(file.as_ref()), path)
    }

    /// Compiles a file straight to its text in `format`, with the compile's warnings. JSON
    /// is written as the values are computed, without building a [`Value`]: the quickest
    /// way from a file to an output (what `cf2 compile --out-dir` does for each host).
    pub fn compile_file_to(
        &self,
        path: impl AsRef<Path>,
        format: Format,
    ) -> Result<Rendered, Error> {
        self.render(Loader::new(), path.as_ref(), format)
    }

    /// A batch: compiles many files that share imports (a fleet's hosts), each imported
    /// file read and parsed once for the whole batch, as `cf2 compile --out-dir` does.
    pub fn batch(&self) -> Batch<'_> {
        Batch {
            compiler: self,
            shared: Arc::new(Loader::new()),
        }
    }

    fn render(&self, loader: Loader, path: &Path, format: Format) -> Result<Rendered, Error> {
        let loader = Arc::new(loader);
        if let Some(refused) = self.refused_function() {
            return Err(Error::new(vec![refused], Vec::new(), loader));
        }
        let mut renderer = cf2_output::Renderer::new(format);
        let main = Main::File(path);
        match cf2_eval::evaluate_into(&*self.host, &loader, main, &self.options, &mut renderer) {
            Ok(e) => match renderer.finish("") {
                Ok(text) => Ok(Rendered {
                    text,
                    warnings: e.warnings,
                    trace: e.trace,
                    loader,
                }),
                Err(o) => {
                    let d = refusal(&*self.host, &loader, main, &self.options, &o);
                    Err(Error {
                        trace: e.trace,
                        ..Error::new(vec![d], e.warnings, loader)
                    })
                }
            },
            Err(f) => Err(Error::failed(f, loader)),
        }
    }

    fn run(&self, loader: Loader, main: Main<'_>, path: &str) -> Result<Config, Error> {
        let loader = Arc::new(loader);
        if let Some(refused) = self.refused_function() {
            return Err(Error::new(vec![refused], Vec::new(), loader));
        }
        match cf2_eval::evaluate(&*self.host, &loader, main, &self.options, &[path]) {
            Ok(mut e) => Ok(Config {
                value: e.values.pop().unwrap_or(Value::Block(Block::default())),
                warnings: e.warnings,
                trace: e.trace,
                provenance: e.provenance,
                statement_reads: e.statement_reads,
                holds_secrets: e.holds_secrets,
                rerun: Rerun {
                    host: self.host.clone(),
                    options: self.options.clone(),
                    main: match main {
                        Main::File(file) => OwnedMain::File(file.to_path_buf()),
                        Main::Text { name, .. } => OwnedMain::Text(name.to_string()),
                    },
                    at: path.to_string(),
                },
                loader,
            }),
            Err(f) => Err(Error::failed(f, loader)),
        }
    }
}

/// A value an output format cannot hold (`o`), as an error at the definition of the resource
/// that gave it: the value carries no place, so the compile of `main` runs again on
/// `loader` to find it (`cf2_eval::error_at_value`). The message names the format and the
/// value's path (`cf2 output cannot write `B.C.1`: ...`). [`Compiler::compile_file_to`]
/// and the command line's `-o` outputs report refusals through it.
pub fn refusal(
    host: &dyn Host,
    loader: &Loader,
    main: Main<'_>,
    opts: &Options,
    o: &OutputError,
) -> Diagnostic {
    cf2_eval::error_at_value(
        host,
        loader,
        main,
        opts,
        o.path(),
        o.to_string(),
        "the output cannot be written",
    )
}

/// Compiles many configurations that share imports, as `cf2 compile hosts/*.cf2 --out-dir`
/// does ([`Compiler::batch`]): every file imported is read and parsed once for the batch,
/// and each compile reads its own main file. A batch is one snapshot: an imported file
/// edited during it is not read again (compile with the [`Compiler`] itself to see every
/// edit). Its compiles may run on several threads at once (`Batch` is `Send + Sync`; with
/// rayon, `files.par_iter().map(|f| batch.compile_file_to(f, Format::Json))`). What it
/// keeps grows with the files imported, not with the compiles; it is freed with the batch
/// and the results.
///
/// ```
/// use cf2::{Compiler, Format, MemoryHost};
/// let host = MemoryHost::new()
///     .with_file("base.cf2", "Domain => 'example.org'\nFqdn => \"${Name}.${Domain}\"\n")
///     .with_file("web1.cf2", "Name => web1\nimport('base')\n")
///     .with_file("web2.cf2", "Name => web2\nimport('base')\n");
/// let compiler = Compiler::with_host(host);
/// let batch = compiler.batch(); // base.cf2 is read and parsed once
/// for (file, fqdn) in [("web1.cf2", "web1.example.org"), ("web2.cf2", "web2.example.org")] {
///     let json = batch.compile_file_to(file, Format::Json).unwrap().text;
///     assert!(json.contains(fqdn));
/// }
/// ```
pub struct Batch<'c> {
    compiler: &'c Compiler,
    /// The files imported so far; each compile's main file lives in a child of it, freed
    /// with that compile's result.
    shared: Arc<Loader>,
}

impl Batch<'_> {
    pub fn compile_file(&self, path: impl AsRef<Path>) -> Result<Config, Error> {
        self.compiler
            .run(self.loader(), Main::File(path.as_ref()), "")
    }

    /// Compiles text (see [`Compiler::compile_str`]); the files it imports are shared with
    /// the batch's other compiles.
    pub fn compile_str(&self, name: &str, text: &str) -> Result<Config, Error> {
        self.compiler
            .run(self.loader(), Main::Text { name, text }, "")
    }

    /// See [`Compiler::compile_file_at`].
    pub fn compile_file_at(&self, file: impl AsRef<Path>, path: &str) -> Result<Config, Error> {
        self.compiler
            .run(self.loader(), Main::File(file.as_ref()), path)
    }

    /// See [`Compiler::compile_file_to`].
    pub fn compile_file_to(
        &self,
        path: impl AsRef<Path>,
        format: Format,
    ) -> Result<Rendered, Error> {
        self.compiler.render(self.loader(), path.as_ref(), format)
    }

    fn loader(&self) -> Loader {
        Loader::child(self.shared.clone())
    }
}

/// A compiled configuration.
#[derive(Clone)]
pub struct Config {
    value: Value,
    warnings: Vec<Diagnostic>,
    trace: Vec<String>,
    provenance: Vec<cf2_eval::Provenance>,
    /// What each inline statement read while it ran (with the trace).
    statement_reads: Vec<cf2_eval::StatementRead>,
    /// Whether the value holds a secret: messages about it then show no values.
    holds_secrets: bool,
    /// How it was compiled, to compile it again when a deserialization error needs the
    /// place of a value (a [`Value`] carries none).
    rerun: Rerun,
    /// The sources the diagnostics point into.
    loader: Arc<Loader>,
}

/// What a [`Config`] was compiled from and with.
#[derive(Clone)]
struct Rerun {
    host: Arc<dyn Host>,
    options: Arc<Options>,
    main: OwnedMain,
    /// The path the value was asked at ([`Compiler::compile_file_at`]; empty for all).
    at: String,
}

#[derive(Clone)]
enum OwnedMain {
    File(std::path::PathBuf),
    /// Text compiled directly, by its name: the loader keeps the text.
    Text(String),
}

impl Rerun {
    /// `message` at the definition of the resource that gave the value at `path` (from
    /// the top of the value asked for), with the loader's files (already loaded); `None`
    /// when no resource gave it (the path names nothing, or the compile now fails).
    fn locate(&self, loader: &Loader, path: &str, message: &str) -> Option<Diagnostic> {
        let main = match &self.main {
            OwnedMain::File(file) => Main::File(file),
            OwnedMain::Text(name) => Main::Text {
                name,
                text: loader.source(name).map_or("", |f| &f.source.text),
            },
        };
        let full = match (self.at.as_str(), path) {
            (at, "") => at.to_string(),
            ("", path) => path.to_string(),
            (at, path) => format!("{at}.{path}"),
        };
        let d = cf2_eval::error_at_value(
            &*self.host,
            loader,
            main,
            &self.options,
            &full,
            message.to_string(),
            "the value cannot be read",
        );
        d.resource.is_some().then_some(d)
    }
}

impl Config {
    /// The whole configuration (a block), or the value asked for
    /// ([`Compiler::compile_file_at`]).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value at a dotted path (`Web.Ports.0`).
    pub fn get(&self, path: &str) -> Option<&Value> {
        self.value.get_path(path)
    }

    /// Deserializes the value at `path` (`""` for the whole value) into any serde type; an
    /// `Option` at a path that names nothing is `None`. An error names the path from the
    /// top of [`Config::value`] (`Web.Ports.2`; for [`Compiler::compile_file_at`], from the
    /// value asked for), and where the resource that gave the value is defined
    /// ([`DeserializeError::location`]; found by compiling the file again, on files
    /// already loaded). Where the configuration holds secrets (KeePass,
    /// docs/security.md), an error says what was expected and where, never what was found.
    pub fn deserialize<'de, T: serde::Deserialize<'de>>(
        &'de self,
        path: &str,
    ) -> Result<T, DeserializeError> {
        cf2_value::from_value_at(&self.value, path).map_err(|e| {
            // Where in the value the error arose (`Web.Ports.2`).
            let at = e.path();
            let message = without_values(&e, self.holds_secrets);
            let shown = match self.nearest(path) {
                // A path that names nothing: placed at the last resource it names.
                Some((found, step)) => {
                    let members = self.value.get_path(found).and_then(Value::as_block);
                    let near = members.and_then(|m| {
                        cf2_syntax::diagnostic::did_you_mean(step, m.keys().map(String::as_str))
                    });
                    let d = self.rerun.locate(&self.loader, found, &message);
                    match near {
                        Some(near) => d.map(|d| d.hint(format!("did you mean `{near}`?"))),
                        None => d,
                    }
                }
                None => self
                    .rerun
                    .locate(&self.loader, &at, &format!("at `{at}`: {message}")),
            }
            .map(|d| Box::new((d, self.loader.clone())));
            DeserializeError {
                location: shown.as_deref().and_then(|(d, l)| location_of(l, d)),
                path: at,
                message,
                shown,
            }
        })
    }

    /// For a `path` that names nothing, the longest start of it that names a value, and
    /// the step that value has not (`("Web", "Prot")` for `Web.Prot.x`); `None` for a
    /// path that names a value.
    fn nearest<'p>(&self, path: &'p str) -> Option<(&'p str, &'p str)> {
        if self.value.get_path(path).is_some() {
            return None;
        }
        let mut found = "";
        for (i, _) in path.match_indices('.') {
            let Some(start) = path.get(..i) else { break };
            if self.value.get_path(start).is_none() {
                break;
            }
            found = start;
        }
        let rest = path.get(found.len()..)?.trim_start_matches('.');
        Some((found, rest.split('.').next().unwrap_or(rest)))
    }

    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// A diagnostic of this compile (a warning) with its source excerpt, as the command
    /// line shows it.
    pub fn render_diagnostic(&self, d: &Diagnostic, color: bool) -> String {
        d.render(&*self.loader, color)
    }

    /// Where a diagnostic of this compile points (`None` for one about no place, such as
    /// a file that cannot be read). Its `Display` is `FILE:LINE:COL`.
    pub fn location(&self, d: &Diagnostic) -> Option<Location> {
        location_of(&self.loader, d)
    }

    /// How each evaluated resource got its value: which definitions (file, line,
    /// operator) made it, which it overrode. Recorded when tracing is on
    /// (`options_mut().trace = true`).
    pub fn provenance(&self) -> &[cf2_eval::Provenance] {
        &self.provenance
    }

    /// The provenance of one resource, if it was evaluated.
    pub fn explain(&self, path: &str) -> Option<&cf2_eval::Provenance> {
        self.final_entries().find(|p| p.path == path)
    }

    /// The entries of resources' final values: not those of a literal's member read
    /// before a merge that shares its path.
    fn final_entries(&self) -> impl Iterator<Item = &cf2_eval::Provenance> {
        self.provenance.iter().filter(|p| !p.before_merge)
    }

    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// The value in an output format.
    pub fn render(&self, format: Format) -> Result<String, OutputError> {
        cf2_output::render(&self.value, format)
    }

    /// The value at `path` in an output format (`None`: there is no such value); an error
    /// names the path (`W.Ports` is a list: TOML needs a block).
    pub fn render_at(&self, path: &str, format: Format) -> Option<Result<String, OutputError>> {
        self.get(path)
            .map(|v| cf2_output::render_at(v, format, path))
    }

    /// The value, without the sources kept to place and render this compile's diagnostics
    /// (a `Config` kept for long holds its files' text and syntax trees).
    pub fn into_value(self) -> Value {
        self.value
    }
}

/// Shows the number of resources and warnings, not the values: a configuration may hold
/// secrets, and a `{:?}` ends up in logs. Print [`Config::value`] to see them.
impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let resources = match &self.value {
            Value::Block(b) => b.len(),
            _ => 1,
        };
        f.debug_struct("Config")
            .field("resources", &resources)
            .field("warnings", &self.warnings.len())
            .field("holds_secrets", &self.holds_secrets)
            .finish_non_exhaustive()
    }
}

/// A deserialization message, without the value found where the configuration holds
/// secrets: a secret may be in it shortened, escaped or read as a number, so replacing its
/// text would not do. What was expected stays.
fn without_values(e: &cf2_value::DeError, secrets: bool) -> String {
    const NOT_SHOWN: &str = "the value is not shown: the configuration holds secrets";
    match e.message_without_value() {
        _ if !secrets => e.message().to_string(),
        Some(all) if all.len() == e.message().len() => all.to_string(),
        Some(expected) => format!("{expected} ({NOT_SHOWN})"),
        None => format!("the value does not fit the type asked for ({NOT_SHOWN})"),
    }
}

/// A configuration compiled straight to text ([`Compiler::compile_file_to`]).
#[derive(Clone)]
pub struct Rendered {
    pub text: String,
    pub warnings: Vec<Diagnostic>,
    trace: Vec<String>,
    /// The sources the warnings point into.
    loader: Arc<Loader>,
}

impl Rendered {
    /// The `-Deval` entries (empty unless tracing is on, `options_mut().trace = true`).
    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// The name of the file `span` points into, as diagnostics show it.
    pub fn source_name(&self, span: Span) -> &str {
        self.loader.name(span.file)
    }

    /// A warning of this compile with its source excerpt, as the command line shows it.
    pub fn render_diagnostic(&self, d: &Diagnostic, color: bool) -> String {
        d.render(&*self.loader, color)
    }

    /// Where a warning of this compile points. Its `Display` is `FILE:LINE:COL`.
    pub fn location(&self, d: &Diagnostic) -> Option<Location> {
        location_of(&self.loader, d)
    }
}

/// The text's size, not the text: it may hold secrets (see [`Config`]'s `Debug`).
impl fmt::Debug for Rendered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rendered")
            .field("bytes", &self.text.len())
            .field("warnings", &self.warnings.len())
            .finish()
    }
}

/// Why a value could not be read into a Rust type.
#[derive(Clone)]
pub struct DeserializeError {
    /// The dotted path of the value, from the top of the configuration (`Web.Ports.2`).
    pub path: String,
    pub message: String,
    /// Where the resource that gave the value is defined: the definition that won
    /// (`web.cf2:3:1` for `Web.Ports.2` from `Web.Ports => [...]` on its line 3); for a
    /// path that names nothing, the last resource it names (`Web` for `Web.Prot`). `None`
    /// where no resource is involved (a top-level name that does not exist).
    pub location: Option<Location>,
    /// The error at that definition, and the sources that render it (boxed: a `Result`
    /// carries this error by value).
    shown: Option<Box<(Diagnostic, Arc<Loader>)>>,
}

impl DeserializeError {
    /// The error with its source excerpt, as the command line shows diagnostics:
    /// `web.cf2:3:1: error: at `Web.Ports.2`: expected u16, ...`, the line, and a label
    /// naming the resource defined there.
    pub fn render(&self, color: bool) -> String {
        match self.shown.as_deref() {
            Some((d, loader)) => d.render(&**loader, color),
            None => format!("error: {self}\n"),
        }
    }
}

/// `FILE:LINE:COL: at `PATH`: MESSAGE`, without the place where there is none.
impl fmt::Display for DeserializeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(location) = &self.location {
            write!(f, "{location}: ")?;
        }
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

impl fmt::Debug for DeserializeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeserializeError")
            .field("path", &self.path)
            .field("message", &self.message)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl std::error::Error for DeserializeError {}

/// Where a diagnostic points (the same [`Location`] a custom function's call site has).
fn location_of(loader: &Loader, d: &Diagnostic) -> Option<Location> {
    let span = d.span?;
    let file = loader.file(span.file)?;
    let (line, column) = file.line_col(span.start);
    Some(Location {
        file: file.name.clone(),
        line,
        column,
    })
}

/// A failed compile: its errors, renderable with their source excerpts, and the warnings
/// given before.
pub struct Error {
    pub diagnostics: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    trace: Vec<String>,
    loader: Arc<Loader>,
}

impl Error {
    fn new(diagnostics: Vec<Diagnostic>, warnings: Vec<Diagnostic>, loader: Arc<Loader>) -> Error {
        Error {
            diagnostics,
            warnings,
            trace: Vec::new(),
            loader,
        }
    }

    fn failed(f: cf2_eval::Failure, loader: Arc<Loader>) -> Error {
        Error {
            diagnostics: f.errors,
            warnings: f.warnings,
            trace: f.trace,
            loader,
        }
    }

    /// The `-Deval` entries made before the compile failed (empty unless tracing is on,
    /// `options_mut().trace = true`): what was evaluated on the way to the error.
    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// The name of the file `span` points into, as diagnostics show it.
    pub fn source_name(&self, span: Span) -> &str {
        self.loader.name(span.file)
    }

    /// The errors with their source excerpts, as the command line shows them.
    pub fn render(&self, color: bool) -> String {
        self.diagnostics
            .iter()
            .map(|d| d.render(&*self.loader, color))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A diagnostic of this compile (an error or a warning) with its source excerpt.
    pub fn render_diagnostic(&self, d: &Diagnostic, color: bool) -> String {
        d.render(&*self.loader, color)
    }

    /// Where a diagnostic of this compile points (`None` for one about no place, such as
    /// a file that cannot be read). Its `Display` is `FILE:LINE:COL`.
    pub fn location(&self, d: &Diagnostic) -> Option<Location> {
        location_of(&self.loader, d)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl std::error::Error for Error {}
