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

mod os_host;
mod secured;

pub use cf2_eval::external::{
    Arg, CallContext, Function, FunctionProvider, Location, Mutation, NativeFunction, ParamType,
    Unevaluated,
};
pub use cf2_eval::{Host, Loader, MemoryHost, Options, Origin, Provenance};
pub use cf2_output::Format;
pub use cf2_syntax::{Diagnostic, Severity};
pub use cf2_value::{Block, Number, Value};
pub use os_host::OsHost;
pub use secured::Secured;

/// Security settings and the gpg / KeePass back end (docs/security.md).
pub use cf2_eval::host::{HostError, KeePassEntry, KeePassGroup, Signed, Signer};
pub use cf2_security::{Gpg, KeePass, Security, Settings as SecuritySettings};

use cf2_eval::Main;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Compiles configurations. One compiler can compile many files; files they share are
/// parsed once.
pub struct Compiler {
    host: Box<dyn Host>,
    loader: Arc<Loader>,
    options: Options,
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
            host: Box::new(host),
            loader: Arc::new(Loader::new()),
            options: Options::default(),
        }
    }

    pub fn options_mut(&mut self) -> &mut Options {
        &mut self.options
    }

    /// Output private resources too (`-p`).
    pub fn include_private(mut self, yes: bool) -> Compiler {
        self.options.include_private = yes;
        self
    }

    /// Registers a custom function written in Rust (docs/functions.md): callable as
    /// `name(...)` from configurations, and as `X ~(name)> value` if it is a mutation
    /// function. Standard function names cannot be taken.
    pub fn register_function(mut self, f: impl Function + 'static) -> Compiler {
        self.options.functions.register(Arc::new(f));
        self
    }

    /// Adds a source of custom functions, such as `cf2_lua::LuaFunctions` (Lua modules on
    /// a function path). Registered functions come first, then providers in the order
    /// they were added.
    pub fn add_functions(mut self, provider: impl FunctionProvider + 'static) -> Compiler {
        self.options.functions.add_provider(Arc::new(provider));
        self
    }

    pub fn compile_file(&self, path: impl AsRef<Path>) -> Result<Config, Error> {
        self.run(Main::File(path.as_ref()))
    }

    /// Compiles text; `name` is how diagnostics name it, and imports are searched from the
    /// working directory.
    pub fn compile_str(&self, name: &str, text: &str) -> Result<Config, Error> {
        self.run(Main::Text { name, text })
    }

    /// Compiles a file straight to its text in `format`, with the compile's warnings. JSON
    /// is written as the values are computed, without building a [`Value`]: the quickest
    /// way from a file to an output (what `cf2 compile --out-dir` does for each host).
    pub fn compile_file_to(
        &self,
        path: impl AsRef<Path>,
        format: Format,
    ) -> Result<Rendered, Error> {
        let mut renderer = cf2_output::Renderer::new(format);
        let main = Main::File(path.as_ref());
        match cf2_eval::evaluate_into(
            &*self.host,
            &self.loader,
            main,
            &self.options,
            &mut renderer,
        ) {
            Ok(e) => match renderer.finish("") {
                Ok(text) => Ok(Rendered {
                    text,
                    warnings: e.warnings,
                }),
                Err(o) => Err(self.error(vec![Diagnostic::error(o.to_string())])),
            },
            Err(f) => Err(self.error(f.errors)),
        }
    }

    /// A failed compile, its diagnostics rendered from this compiler's sources.
    fn error(&self, diagnostics: Vec<Diagnostic>) -> Error {
        Error {
            diagnostics,
            loader: self.loader.clone(),
        }
    }

    fn run(&self, main: Main<'_>) -> Result<Config, Error> {
        match cf2_eval::evaluate(&*self.host, &self.loader, main, &self.options, &[""]) {
            Ok(mut e) => Ok(Config {
                value: e.values.pop().unwrap_or(Value::Block(Block::default())),
                warnings: e.warnings,
                trace: e.trace,
                provenance: e.provenance,
            }),
            Err(f) => Err(self.error(f.errors)),
        }
    }

    /// Renders a diagnostic from this compiler's sources.
    pub fn render(&self, d: &Diagnostic, color: bool) -> String {
        d.render(&*self.loader, color)
    }
}

/// A compiled configuration.
#[derive(Debug, Clone)]
pub struct Config {
    value: Value,
    warnings: Vec<Diagnostic>,
    trace: Vec<String>,
    provenance: Vec<cf2_eval::Provenance>,
}

impl Config {
    /// The whole configuration (a block).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value at a dotted path (`Web.Ports.0`).
    pub fn get(&self, path: &str) -> Option<&Value> {
        self.value.get_path(path)
    }

    /// Deserializes the value at `path` (`""` for the whole configuration) into any serde
    /// type.
    pub fn deserialize<'de, T: serde::Deserialize<'de>>(
        &'de self,
        path: &str,
    ) -> Result<T, DeserializeError> {
        let v = self
            .get(path)
            .ok_or_else(|| DeserializeError(format!("`{path}` is not in the configuration")))?;
        cf2_value::from_value(v).map_err(|e| DeserializeError(e.to_string()))
    }

    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// How each evaluated resource got its value: which definitions (file, line,
    /// operator) made it, which it overrode. Recorded when tracing is on
    /// (`options_mut().trace = true`).
    pub fn provenance(&self) -> &[cf2_eval::Provenance] {
        &self.provenance
    }

    /// The provenance of one resource, if it was evaluated.
    pub fn explain(&self, path: &str) -> Option<&cf2_eval::Provenance> {
        // The resource's final value, not a literal's member read before a merge that
        // shares its path.
        self.provenance
            .iter()
            .find(|p| p.path == path && !p.before_merge)
    }

    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// The configuration (or the value at `path`) in an output format.
    pub fn render(&self, format: Format) -> Result<String, cf2_output::OutputError> {
        cf2_output::render(&self.value, format)
    }
}

/// A configuration compiled straight to text ([`Compiler::compile_file_to`]).
#[derive(Debug, Clone)]
pub struct Rendered {
    pub text: String,
    pub warnings: Vec<Diagnostic>,
}

#[derive(Debug, Clone)]
pub struct DeserializeError(pub String);

impl fmt::Display for DeserializeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeserializeError {}

/// A failed compile: its diagnostics, renderable with their source excerpts.
pub struct Error {
    pub diagnostics: Vec<Diagnostic>,
    loader: Arc<Loader>,
}

impl Error {
    pub fn render(&self, color: bool) -> String {
        self.diagnostics
            .iter()
            .map(|d| d.render(&*self.loader, color))
            .collect::<Vec<_>>()
            .join("\n")
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
