//! The library as an embedder uses it: one long-lived `Compiler`, many compiles, results
//! read into the program's own types, errors shown the program's way.

use cf2::{Compiler, Config, Error, MemoryHost, NativeFunction, ParamType, Value};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn compiler_config_and_error_can_cross_threads() {
    assert_send_sync::<Compiler>();
    assert_send_sync::<Config>();
    assert_send_sync::<Error>();
    assert_send_sync::<cf2::Batch<'_>>();
    let compiler = std::sync::Arc::new(Compiler::with_host(MemoryHost::new()));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let compiler = compiler.clone();
            std::thread::spawn(move || {
                let c = compiler
                    .compile_str("main.cf2", &format!("A => {i}\n"))
                    .unwrap();
                c.deserialize::<i64>("A").unwrap()
            })
        })
        .collect();
    let got: Vec<i64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(got, [0, 1, 2, 3]);
}

/// Each compile reads its sources afresh: the same name with new text, or a file edited on
/// disk, gives the new configuration, and a fixed error is gone.
#[test]
fn a_reused_compiler_sees_new_text_and_edited_files() {
    let compiler = Compiler::with_host(MemoryHost::new());
    let a = compiler.compile_str("inline", "A => 1\n").unwrap();
    let b = compiler.compile_str("inline", "A => 2\nB => 3\n").unwrap();
    assert_eq!(a.deserialize::<i64>("A").unwrap(), 1);
    assert_eq!(b.deserialize::<i64>("A").unwrap(), 2);
    assert_eq!(b.deserialize::<i64>("B").unwrap(), 3);
    assert!(compiler.compile_str("x", "A => \n").is_err());
    assert!(compiler.compile_str("x", "A => 1\n").is_ok());

    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.cf2");
    let base = dir.path().join("base.cf2");
    std::fs::write(&base, "Port => 80\n").unwrap();
    std::fs::write(&main, "import(base)\n").unwrap();
    let os = Compiler::new();
    assert_eq!(
        os.compile_file(&main)
            .unwrap()
            .deserialize::<u16>("Port")
            .unwrap(),
        80
    );
    std::fs::write(&base, "Port => 8080\n").unwrap();
    assert_eq!(
        os.compile_file(&main)
            .unwrap()
            .deserialize::<u16>("Port")
            .unwrap(),
        8080
    );
}

#[test]
fn deserialize_errors_name_the_path_from_the_top() {
    let c = Compiler::with_host(MemoryHost::new())
        .compile_str("main.cf2", "Web.Ports => [80, 443, http]\n")
        .unwrap();
    let e = c.deserialize::<Vec<u16>>("Web.Ports").unwrap_err();
    assert_eq!(e.path, "Web.Ports.2");
    assert_eq!(e.message, "expected u16, found text 'http'");
    assert_eq!(
        e.to_string(),
        "main.cf2:1:1: at `Web.Ports.2`: expected u16, found text 'http'"
    );
    let e = c.deserialize::<u16>("Web.Missing").unwrap_err();
    assert!(e.to_string().contains("Web.Missing"), "{e}");
    // A value that is not there is `None` to an `Option`, as a struct field is.
    assert_eq!(c.deserialize::<Option<u16>>("Web.Missing").unwrap(), None);
    assert_eq!(
        c.deserialize::<Option<Vec<u16>>>("Web.Ports")
            .unwrap_err()
            .path,
        "Web.Ports.2"
    );
}

/// A deserialization error points at the definition that gave the value, in the file that
/// holds it, with the excerpt the command line would show: the value itself carries no
/// place, so it is found by compiling again.
#[test]
fn deserialize_errors_point_at_the_definition_that_won() {
    let host = MemoryHost::new()
        .with_file(
            "/site/base.cf2",
            "Web => {\n  Port => 80\n  Name => www\n}\n",
        )
        .with_file("/site/host.cf2", "import('base')\nWeb.Port => eighty\n");
    let compiler = Compiler::with_host(host);
    let c = compiler.compile_file("/site/host.cf2").unwrap();
    let e = c.deserialize::<u16>("Web.Port").unwrap_err();
    let at = e.location.clone().expect("located");
    assert_eq!(
        (at.file.as_str(), at.line, at.column),
        ("/site/host.cf2", 2, 1)
    );
    assert_eq!(
        e.to_string(),
        "/site/host.cf2:2:1: at `Web.Port`: expected u16, found text 'eighty'"
    );
    let shown = e.render(false);
    assert!(shown.contains("Web.Port => eighty"), "{shown}");
    assert!(shown.contains("`Web.Port` is defined here"), "{shown}");

    // Into a struct: the field's own definition, in the base.
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Web {
        #[serde(rename = "Name")]
        name: u32,
    }
    let e = c.deserialize::<Web>("Web").unwrap_err();
    assert_eq!(e.path, "Web.Name");
    let at = e.location.clone().expect("located");
    assert_eq!((at.file.as_str(), at.line), ("/site/base.cf2", 3));

    // A path that names nothing: at the last resource it names (its highest definition),
    // with a guess.
    let e = c.deserialize::<u16>("Web.Prot").unwrap_err();
    let at = e.location.clone().expect("located");
    assert_eq!((at.file.as_str(), at.line), ("/site/host.cf2", 2));
    let shown = e.render(false);
    assert!(shown.contains("did you mean `Port`?"), "{shown}");

    // From a value asked for by path, the path is from that value, the place the same.
    let c = compiler.compile_file_at("/site/host.cf2", "Web").unwrap();
    let e = c.deserialize::<u16>("Name").unwrap_err();
    assert_eq!(e.path, "Name");
    let at = e.location.expect("located");
    assert_eq!((at.file.as_str(), at.line), ("/site/base.cf2", 3));

    // Compiled from text, too.
    let c = compiler
        .compile_str("inline.cf2", "A => 1\nB => [1, x]\n")
        .unwrap();
    let e = c.deserialize::<Vec<u8>>("B").unwrap_err();
    assert_eq!(
        e.to_string(),
        "inline.cf2:2:1: at `B.1`: expected u8, found text 'x'"
    );
}

/// A failed compile keeps the warnings given before it, and every diagnostic can be placed
/// and rendered from the result, whichever compiler made it.
#[test]
fn errors_keep_warnings_and_locations() {
    let compiler = Compiler::with_host(MemoryHost::new());
    let e = compiler
        .compile_str("main.cf2", "W => defined(warn(careful))\nX => 1 + a\n")
        .unwrap_err();
    assert_eq!(e.warnings.len(), 1);
    let at = |d| e.location(d).map(|l| l.to_string());
    assert_eq!(at(&e.warnings[0]).as_deref(), Some("main.cf2:1:14"));
    assert_eq!(at(&e.diagnostics[0]).as_deref(), Some("main.cf2:2:10"));
    let loc = e.location(&e.diagnostics[0]).unwrap();
    assert_eq!(
        (loc.file.as_str(), loc.line, loc.column),
        ("main.cf2", 2, 10)
    );
    assert!(e
        .render_diagnostic(&e.warnings[0], false)
        .contains("1 | W => defined(warn(careful))"));
    let other = compiler
        .compile_str("other.cf2", "\n\nW => defined(warn(x))\n")
        .unwrap();
    assert_eq!(
        other
            .location(&other.warnings()[0])
            .map(|l| l.to_string())
            .as_deref(),
        Some("other.cf2:3:14")
    );
    assert!(other
        .render_diagnostic(&other.warnings()[0], false)
        .contains("3 | W => defined(warn(x))"));
}

/// `cf2 compile FILE -o -:PATH` in the library: only what the value needs is evaluated,
/// and a private resource asked for by its path is given.
#[test]
fn compile_file_at_evaluates_only_the_value_asked_for() {
    let host = MemoryHost::new().with_file(
        "main.cf2",
        "A => 1\nBroken => fail(no)\nprivate Key => { Id => 7 }\n",
    );
    let compiler = Compiler::with_host(host);
    assert!(compiler.compile_file("main.cf2").is_err());
    let a = compiler.compile_file_at("main.cf2", "A").unwrap();
    assert_eq!(a.value(), &Value::Number(cf2::Number::Int(1)));
    let key = compiler.compile_file_at("main.cf2", "Key").unwrap();
    assert_eq!(key.deserialize::<u8>("Id").unwrap(), 7);
    assert_eq!(
        key.render_at("Id", cf2::Format::Json)
            .unwrap()
            .unwrap()
            .trim(),
        "7"
    );
}

#[test]
fn paths_read_list_indexes_as_the_language_does() {
    let c = Compiler::with_host(MemoryHost::new())
        .compile_str("main.cf2", "Web.Ports => [80, 443]\n")
        .unwrap();
    assert_eq!(c.deserialize::<u16>("Web.Ports.1").unwrap(), 443);
    assert!(c.get("Web.Ports.+1").is_none());
    assert!(c.get("Web.Ports.-1").is_none());
    let e = c
        .render_at("Web.Ports", cf2::Format::Toml)
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().contains("Web.Ports"), "{e}");
    let text = format!(
        "{:?}",
        Compiler::with_host(MemoryHost::new().with_file("m.cf2", "A => 1\n"))
            .compile_file_to("m.cf2", cf2::Format::Json)
            .unwrap()
    );
    assert!(!text.contains("\"A\""), "{text}");
    assert_eq!(
        c.into_value().get_path("Web.Ports.0"),
        Some(&Value::Number(cf2::Number::Int(80)))
    );
}

#[test]
fn a_custom_function_cannot_take_a_standard_name() {
    let join = NativeFunction::new("join", vec![ParamType::ANYTYPE], |_, _| {
        Ok(Some(Value::Literal("mine".into())))
    });
    let e = Compiler::with_host(MemoryHost::new())
        .register_function(join)
        .compile_str("main.cf2", "A => 1\n")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("a custom function cannot be named `join`: it is a standard function"),
        "{e}"
    );
    // The same through the options.
    let mut compiler = Compiler::with_host(MemoryHost::new());
    let max = NativeFunction::new("MAX", vec![ParamType::ANYTYPE], |_, _| Ok(None));
    compiler
        .options_mut()
        .functions
        .register(std::sync::Arc::new(max));
    let e = compiler.compile_str("main.cf2", "A => 1\n").unwrap_err();
    assert!(e.to_string().contains("cannot be named `max`"), "{e}");
}

/// An embedder's thread may have a small stack: nesting within the limits must give a
/// result or a clean error there too, never abort the process.
#[test]
fn deep_nesting_on_a_small_stack_thread() {
    let deep_list = format!("A => {}1{}\n", "[".repeat(250), "]".repeat(250));
    let deep_brackets = format!("A => {}1{}\n", "(".repeat(250), ")".repeat(250));
    let deep_blocks = format!("A => {}1{}\n", "{ X => ".repeat(200), " }".repeat(200));
    let deep_ifs = format!("A => {}1\n", "if (true) then ".repeat(250));
    for text in [deep_list, deep_brackets, deep_blocks, deep_ifs] {
        let ok = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(move || {
                // A result, or the clean error for values nested past the limit.
                match Compiler::with_host(MemoryHost::new()).compile_str("main.cf2", &text) {
                    Ok(_) => true,
                    Err(e) => e.to_string().contains("deep"),
                }
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(ok);
    }
}

/// A native function that panics fails the compile with an error naming it; the program
/// and the compiler go on.
#[test]
fn a_panicking_native_function_is_an_error() {
    let boom = NativeFunction::new("boom", vec![], |_, _| panic!("out of cheese"));
    let compiler = Compiler::with_host(MemoryHost::new()).register_function(boom);
    let e = compiler
        .compile_str("main.cf2", "A => boom()\n")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("`boom` failed: the function panicked: out of cheese"),
        "{e}"
    );
    assert!(compiler.compile_str("main.cf2", "A => 1\n").is_ok());
}

#[test]
fn a_failed_compile_keeps_its_trace() {
    let mut compiler = Compiler::with_host(MemoryHost::new());
    compiler.options_mut().trace = true;
    let e = compiler
        .compile_str("main.cf2", "A => 1\nB => $A + fail(broken)\n")
        .unwrap_err();
    assert!(
        e.trace().iter().any(|t| t.contains("A = 1")),
        "{:?}",
        e.trace()
    );
    let quiet = Compiler::with_host(MemoryHost::new())
        .compile_str("main.cf2", "A => 1\nB => $A + fail(broken)\n")
        .unwrap_err();
    assert!(quiet.trace().is_empty());
}

/// A host of the program's own over a `MemoryHost`: it records every file read (to see
/// what a batch shares) and protects `password.txt` (a hook with a default, which a
/// wrapping host must not lose).
struct Watched {
    inner: MemoryHost,
    reads: std::sync::Arc<std::sync::Mutex<Vec<std::path::PathBuf>>>,
}

impl Watched {
    fn new(inner: MemoryHost) -> Watched {
        Watched {
            inner,
            reads: Default::default(),
        }
    }
}

impl cf2::Host for Watched {
    fn read_file(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        if let Ok(mut reads) = self.reads.lock() {
            reads.push(path.to_path_buf());
        }
        self.inner.read_file(path)
    }
    fn is_file(&self, path: &std::path::Path) -> bool {
        self.inner.is_file(path)
    }
    fn canonicalize(&self, path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
        self.inner.canonicalize(path)
    }
    fn current_dir(&self) -> std::path::PathBuf {
        self.inner.current_dir()
    }
    fn env_var(&self, name: &str) -> Option<String> {
        self.inner.env_var(name)
    }
    fn lookup_host(&self, name: &str) -> std::io::Result<Vec<std::net::IpAddr>> {
        self.inner.lookup_host(name)
    }
    fn lookup_addr(&self, addr: std::net::IpAddr) -> std::io::Result<String> {
        self.inner.lookup_addr(addr)
    }
    fn now(&self) -> std::time::SystemTime {
        self.inner.now()
    }
    fn protected(&self, path: &std::path::Path) -> Option<String> {
        path.ends_with("password.txt")
            .then(|| "holds this run's password".to_string())
    }
}

/// A batch compiles each host as the compiler alone does, reading and parsing a file every
/// host imports once; each host's own file is read for its compile, and its results (and
/// errors) are placed and rendered as any compile's.
#[test]
fn a_batch_reads_what_its_hosts_share_once() {
    let mut host = MemoryHost::new().with_file(
        "/site/base.cf2",
        "Domain => 'example.org'\nFqdn => \"${Name}.${Domain}\"\nDisk ~(sum)> 10\n",
    );
    let names: Vec<String> = (0..6).map(|i| format!("/site/h{i}.cf2")).collect();
    for (i, name) in names.iter().enumerate() {
        host = host.with_file(
            name,
            format!("Name => h{i}\nimport('base')\nDisk ~(sum)> {i}\n"),
        );
    }
    host = host.with_file(
        "/site/bad.cf2",
        "Name => bad\nimport('base')\nPort => 80\nUse => $Prot\n",
    );
    let host = Watched::new(host);
    let reads = host.reads.clone();
    let compiler = Compiler::with_host(host);
    let alone: Vec<String> = names
        .iter()
        .map(|n| {
            compiler
                .compile_file(n)
                .unwrap()
                .render(cf2::Format::Json)
                .unwrap()
        })
        .collect();
    reads.lock().unwrap().clear();

    let batch = compiler.batch();
    // A failing host first, on its own: it loads the shared file. Threads that load one
    // file at the same moment may each read it (the loader parses with no lock held and
    // keeps the first, see `Loader::add`), which made the count below fail about one run
    // in fifteen; once loaded, no host of the batch reads it again.
    let e = batch.compile_file("/site/bad.cf2").unwrap_err();
    assert!(e.render(false).contains("did you mean `Port`?"), "{e}");
    // From several threads at once, as a fleet is compiled.
    let batched: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .map(|n| {
                let batch = &batch;
                s.spawn(move || batch.compile_file_to(n, cf2::Format::Json).unwrap().text)
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(batched, alone);
    let c = batch.compile_file(&names[2]).unwrap();
    assert_eq!(
        c.get("Fqdn").and_then(Value::as_text),
        Some("h2.example.org")
    );
    assert_eq!(c.deserialize::<u32>("Disk").unwrap(), 12);

    let reads = reads.lock().unwrap();
    let count = |name: &str| reads.iter().filter(|p| p.ends_with(name)).count();
    assert_eq!(count("base.cf2"), 1, "{reads:?}");
    assert_eq!(count("h2.cf2"), 2, "{reads:?}");
    assert_eq!(count("h0.cf2"), 1, "{reads:?}");
}

/// A program keeps a handle on the host it compiles from, and changes its in-memory files
/// between compiles (an editor's unsaved buffers), imported files included.
#[test]
fn a_shared_host_can_change_between_compiles() {
    use std::sync::{Arc, RwLock};
    let files = Arc::new(RwLock::new(
        MemoryHost::new()
            .with_file("base.cf2", "Port => 80\n")
            .with_file("main.cf2", "import('base')\nUrl => \"http://x:${Port}\"\n"),
    ));
    let compiler = Compiler::with_host(files.clone());
    let url = |c: &Compiler| {
        c.compile_file("main.cf2")
            .unwrap()
            .deserialize::<String>("Url")
            .unwrap()
    };
    assert_eq!(url(&compiler), "http://x:80");
    files
        .write()
        .unwrap()
        .add_file("base.cf2", "Port => 8080\n");
    assert_eq!(url(&compiler), "http://x:8080");
    // A clone shares the host.
    let clone = compiler.clone().include_private(true);
    files
        .write()
        .unwrap()
        .add_file("base.cf2", "Port => 8443\n");
    assert_eq!(url(&clone), "http://x:8443");
}

/// A wrapped host answers every question as the host it wraps, those with a default answer
/// too: a wrapper must not quietly drop what the host protects.
#[test]
fn a_wrapped_host_keeps_what_its_host_protects() {
    use std::sync::{Arc, RwLock};
    let host = || {
        Watched::new(
            MemoryHost::new()
                .with_file("password.txt", "hunter2")
                .with_file("main.cf2", "P => read('password.txt')\n"),
        )
    };
    for compiler in [
        Compiler::with_host(Arc::new(host())),
        Compiler::with_host(RwLock::new(host())),
        Compiler::with_host(Arc::new(RwLock::new(host()))),
    ] {
        let e = compiler.compile_file("main.cf2").unwrap_err();
        assert!(e.render(false).contains("holds this run's password"), "{e}");
    }
}

/// A program's type can keep a part of the configuration as a `Value`.
#[test]
fn a_config_part_deserializes_to_a_value() {
    #[derive(serde::Deserialize)]
    struct Web {
        #[serde(rename = "Port")]
        port: u16,
        #[serde(rename = "Extra")]
        extra: Value,
    }
    let c = Compiler::with_host(MemoryHost::new())
        .compile_str(
            "main.cf2",
            "Web.Port => 80\nWeb.Extra => { Name => www, Re => /^a/, Doc => \"x\" }\n",
        )
        .unwrap();
    let web: Web = c.deserialize("Web").unwrap();
    assert_eq!(web.port, 80);
    assert_eq!(Some(&web.extra), c.get("Web.Extra"));
    assert_eq!(c.deserialize::<Value>("").unwrap(), *c.value());
}
