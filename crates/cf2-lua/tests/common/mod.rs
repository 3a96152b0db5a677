//! Helpers: modules in a temporary function path, configurations in memory.
#![allow(dead_code)]

use cf2::{Compiler, MemoryHost, Value};
use cf2_lua::{Limits, LuaFunctions};
use std::path::{Path, PathBuf};

pub struct Setup {
    pub dir: tempfile::TempDir,
    pub files: Vec<(String, String)>,
    pub limits: Limits,
}

pub fn setup() -> Setup {
    Setup {
        dir: tempfile::tempdir().expect("temporary folder"),
        files: Vec::new(),
        limits: Limits::default(),
    }
}

/// Module `NAME.lua` with `text`, and `main.cf2` holding `X => NAME()`.
pub fn calling(name: &str, text: &str) -> Setup {
    setup()
        .module(&format!("{name}.lua"), text)
        .file("main.cf2", &format!("X => {name}()\n"))
}

impl Setup {
    /// A module file in the function path (`name` with its extension).
    pub fn module(self, name: &str, text: &str) -> Setup {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("module folder");
        }
        std::fs::write(path, text).expect("module file");
        self
    }

    /// A configuration file (in memory); the main one is `main.cf2`.
    pub fn file(mut self, name: &str, text: &str) -> Setup {
        self.files.push((name.to_string(), text.to_string()));
        self
    }

    pub fn limits(mut self, limits: Limits) -> Setup {
        self.limits = limits;
        self
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub fn compiler_with(&self, dirs: Vec<PathBuf>) -> Compiler {
        let mut host = MemoryHost::new();
        for (name, text) in &self.files {
            host.add_file(name, text.as_bytes().to_vec());
        }
        Compiler::with_host(host).add_functions(LuaFunctions::new(dirs).with_limits(self.limits))
    }

    pub fn compiler(&self) -> Compiler {
        self.compiler_with(vec![self.path()])
    }

    /// Compiles `main.cf2`: the configuration, or the rendered errors.
    pub fn run(&self) -> Result<Value, String> {
        self.compiler()
            .compile_file("main.cf2")
            .map(|c| c.value().clone())
            .map_err(|e| e.render(false))
    }

    /// The configuration, rendered in the cf2 format (so that comparisons see member
    /// order and kinds).
    pub fn ok(&self) -> String {
        match self.run() {
            Ok(v) => render(&v),
            Err(e) => panic!("the compile failed:\n{e}"),
        }
    }

    pub fn err(&self) -> String {
        match self.run() {
            Ok(v) => panic!("the compile succeeded: {v:?}"),
            Err(e) => e,
        }
    }
}

/// A configuration written in cf2 (no custom functions), rendered as [`Setup::ok`] does.
pub fn value(text: &str) -> String {
    let host = MemoryHost::new().with_file("expect.cf2", text);
    let v = Compiler::with_host(host)
        .compile_file("expect.cf2")
        .expect("expected configuration")
        .value()
        .clone();
    render(&v)
}

pub fn render(v: &Value) -> String {
    cf2_output::render(v, cf2::Format::Cf2).expect("renders")
}

/// Asserts that `text` holds every one of `parts`.
pub fn has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "{p:?} is missing from:\n{text}");
    }
}

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/functions")
}
