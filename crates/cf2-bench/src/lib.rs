//! Inputs for the cf2 micro-benchmarks (`benches/cf2.rs`, run with `cargo bench -p cf2-bench`).
//!
//! The fixtures under `fixtures/site` are the files of `bench/gen_site.py --seed 1` (20
//! aspects, 4 per host) that its first host needs: `base.cf2`, every aspect, and
//! `hosts/host00001.cf2` — the same host that `bench/run.sh` compiles as a whole process.
//! Regenerate them with `bench/gen_site.py DIR --hosts 1` and copy `DIR/cf2/{base.cf2,
//! aspects,hosts/host00001.cf2}` here if the generator changes.

use cf2_eval::{evaluate, Loader, Main, MemoryHost, Options};
use cf2_value::Value;
use std::path::{Path, PathBuf};

/// Where the site lives in the in-memory file system.
pub const SITE_DIR: &str = "/site";

/// `base.cf2`.
pub const BASE: &str = include_str!("../fixtures/site/base.cf2");

/// The aspects, by name (`aNN`).
pub const ASPECTS: [(&str, &str); 20] = [
    ("a00", include_str!("../fixtures/site/aspects/a00.cf2")),
    ("a01", include_str!("../fixtures/site/aspects/a01.cf2")),
    ("a02", include_str!("../fixtures/site/aspects/a02.cf2")),
    ("a03", include_str!("../fixtures/site/aspects/a03.cf2")),
    ("a04", include_str!("../fixtures/site/aspects/a04.cf2")),
    ("a05", include_str!("../fixtures/site/aspects/a05.cf2")),
    ("a06", include_str!("../fixtures/site/aspects/a06.cf2")),
    ("a07", include_str!("../fixtures/site/aspects/a07.cf2")),
    ("a08", include_str!("../fixtures/site/aspects/a08.cf2")),
    ("a09", include_str!("../fixtures/site/aspects/a09.cf2")),
    ("a10", include_str!("../fixtures/site/aspects/a10.cf2")),
    ("a11", include_str!("../fixtures/site/aspects/a11.cf2")),
    ("a12", include_str!("../fixtures/site/aspects/a12.cf2")),
    ("a13", include_str!("../fixtures/site/aspects/a13.cf2")),
    ("a14", include_str!("../fixtures/site/aspects/a14.cf2")),
    ("a15", include_str!("../fixtures/site/aspects/a15.cf2")),
    ("a16", include_str!("../fixtures/site/aspects/a16.cf2")),
    ("a17", include_str!("../fixtures/site/aspects/a17.cf2")),
    ("a18", include_str!("../fixtures/site/aspects/a18.cf2")),
    ("a19", include_str!("../fixtures/site/aspects/a19.cf2")),
];

/// The host: its name and its text (it imports `base` and four aspects).
pub const HOST: (&str, &str) = (
    "host00001",
    include_str!("../fixtures/site/hosts/host00001.cf2"),
);

/// An in-memory file system holding the site under [`SITE_DIR`].
pub fn site_host() -> MemoryHost {
    let dir = Path::new(SITE_DIR);
    let mut host = MemoryHost::new()
        .with_file(dir.join("base.cf2"), BASE)
        .with_file(dir.join("hosts").join(format!("{}.cf2", HOST.0)), HOST.1);
    for (name, text) in ASPECTS {
        host.add_file(dir.join("aspects").join(format!("{name}.cf2")), text);
    }
    host
}

/// The path of the host's main file in [`site_host`].
pub fn host_path() -> PathBuf {
    Path::new(SITE_DIR)
        .join("hosts")
        .join(format!("{}.cf2", HOST.0))
}

/// Compiles the host's whole configuration with `loader` (a fresh loader parses all six
/// files; a loader that has seen them already only evaluates). Panics if it fails: the
/// fixtures are valid CF2.
pub fn compile_host(host: &MemoryHost, loader: &Loader) -> Value {
    let path = host_path();
    match evaluate(host, loader, Main::File(&path), &Options::default(), &[""]) {
        Ok(mut e) => e.values.swap_remove(0),
        Err(f) => {
            let msgs: Vec<String> = f.errors.iter().map(|d| d.render(loader, false)).collect();
            panic!("the benchmark host does not compile:\n{}", msgs.concat())
        }
    }
}

/// A large CF2 text of at least `min_bytes` for parse throughput: the base, the aspects
/// and the host, each wrapped in a uniquely named block, repeated. It has the token mix of
/// the synthetic site (blocks, implicit blocks, mutations, conditionals, interpolated
/// strings, arithmetic, imports, comments). It parses cleanly; it is not meant to be
/// evaluated.
pub fn big_source(min_bytes: usize) -> String {
    let parts: Vec<&str> = std::iter::once(BASE)
        .chain(ASPECTS.iter().map(|(_, text)| *text))
        .chain(std::iter::once(HOST.1))
        .collect();
    let mut out = String::with_capacity(min_bytes + 4096);
    let mut n = 0usize;
    while out.len() < min_bytes {
        for part in &parts {
            n += 1;
            out.push_str(&format!("Part{n} => {{\n"));
            out.push_str(part);
            out.push_str("}\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cf2_syntax::FileId;
    use cf2_value::Number;

    #[test]
    fn the_benchmark_host_compiles_to_the_expected_configuration() {
        let v = compile_host(&site_host(), &Loader::new());
        // The values `cf2 compile` and the Jsonnet translation agree on (bench/compare.py).
        let text = |p: &str| v.get_path(p).and_then(Value::as_text).map(str::to_string);
        let int = |p: &str| match v.get_path(p) {
            Some(Value::Number(Number::Int(i))) => Some(*i),
            _ => None,
        };
        assert_eq!(text("Fqdn").as_deref(), Some("host00001.example.org"));
        assert_eq!(text("LogLevel").as_deref(), Some("debug"));
        assert_eq!(int("DiskGB"), Some(354));
        assert_eq!(int("MemReservedMB"), Some(3328));
        assert_eq!(int("KernelMin"), Some(606));
        assert_eq!(int("OsVersion"), Some(24));
        assert_eq!(int("Swap"), Some(4));
        assert_eq!(
            v.get_path("Packages")
                .and_then(Value::as_block)
                .map(|b| b.len()),
            Some(21)
        );
        let firewall: Vec<&str> = v
            .get_path("Firewall")
            .and_then(Value::as_block)
            .map(|b| b.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut sorted = firewall.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                "allow_22",
                "allow_8005",
                "internal_8006",
                "internal_8009",
                "internal_8017"
            ]
        );
    }

    #[test]
    fn the_big_source_parses_without_errors() {
        let text = big_source(200_000);
        assert!(text.len() >= 200_000);
        let (_, diags) = cf2_syntax::parse(FileId(0), &text);
        assert!(diags.is_empty(), "{diags:?}");
    }
}
