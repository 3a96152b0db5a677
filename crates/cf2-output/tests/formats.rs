//! Every output format over representative values: snapshots (read them!), parse-back checks
//! with each format's own reader, Perl loading the `pl` output, errors, and deep nesting.

mod common;

use std::path::Path;
use std::process::Command;

use cf2_output::{render, render_at, Format, OutputError};
use cf2_value::{Number, Value, MAX_DEPTH};
use common::*;
use indexmap::IndexMap;
use serde::Deserialize;

fn out(value: &Value, format: Format) -> String {
    match render(value, format) {
        Ok(text) => text,
        Err(e) => panic!("{format}: {e}"),
    }
}

// ---------------------------------------------------------------- snapshots

#[test]
fn cf2_snapshots() {
    insta::assert_snapshot!("cf2_sample", out(&sample(), Format::Cf2));
    insta::assert_snapshot!("cf2_tricky_text", out(&tricky_text(), Format::Cf2));
    insta::assert_snapshot!("cf2_mixed_lists", out(&mixed_lists(), Format::Cf2));
}

#[test]
fn json_snapshots() {
    insta::assert_snapshot!("json_sample", out(&sample(), Format::Json));
    insta::assert_snapshot!("json_mixed_lists", out(&mixed_lists(), Format::Json));
}

#[test]
fn pl_snapshots() {
    insta::assert_snapshot!("pl_sample", out(&sample(), Format::Pl));
    insta::assert_snapshot!("pl_mixed_lists", out(&mixed_lists(), Format::Pl));
}

#[test]
fn yaml_snapshots() {
    insta::assert_snapshot!("yaml_sample", out(&sample(), Format::Yaml));
    insta::assert_snapshot!("yaml_tricky_text", out(&tricky_text(), Format::Yaml));
    insta::assert_snapshot!("yaml_mixed_lists", out(&mixed_lists(), Format::Yaml));
}

#[test]
fn toml_snapshots() {
    insta::assert_snapshot!("toml_sample", out(&sample(), Format::Toml));
    insta::assert_snapshot!("toml_tricky_text", out(&tricky_text(), Format::Toml));
    insta::assert_snapshot!("toml_mixed_lists", out(&mixed_lists(), Format::Toml));
}

/// Values that are not blocks, at the top: every format but TOML writes them.
#[test]
fn non_block_snapshots() {
    let values = [
        (
            "list",
            list(vec![int(80), lit("http"), block(vec![("a", int(1))])]),
        ),
        ("literal", lit("it's")),
        ("string", string("a $b")),
        ("number", float(-45.67)),
        ("bool", Value::Bool(false)),
        ("regex", regex("a/b")),
        ("empty_block", block(vec![])),
        ("empty_list", list(vec![])),
    ];
    let mut all = String::new();
    for (name, value) in &values {
        for format in [Format::Cf2, Format::Json, Format::Pl, Format::Yaml] {
            all.push_str(&format!("--- {name} as {format}\n"));
            all.push_str(&out(value, format));
        }
    }
    insta::assert_snapshot!("non_block_values", all);
}

// ---------------------------------------------------------------- cf2 specifics

#[test]
fn cf2_layout() {
    assert_eq!(out(&block(vec![]), Format::Cf2), "");
    assert_eq!(
        out(
            &block(vec![("X", block(vec![])), ("Y", list(vec![]))]),
            Format::Cf2
        ),
        "X => {}\nY => []\n"
    );
    assert_eq!(out(&list(vec![]), Format::Cf2), "[]\n");
    assert_eq!(out(&int(i64::MIN), Format::Cf2), "-9223372036854775808\n");
    assert_eq!(out(&float(3.0), Format::Cf2), "3.0\n");
    assert_eq!(out(&regex(""), Format::Cf2), "/(?:)/\n");
    // Names that are not resource names cannot be written.
    let bad = block(vec![("Web", block(vec![("a b", int(1))]))]);
    let e = render_at(&bad, Format::Cf2, "Top").unwrap_err();
    assert_eq!(
        e.to_string(),
        "cf2 output cannot write the member \"a b\" in `Top.Web`: it is not a resource name"
    );
    let e = render(&block(vec![("if", int(1))]), Format::Cf2).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cf2 output cannot write the member \"if\" at the top: it is not a resource name"
    );
    let e = render(&list(vec![block(vec![("x-y", int(1))])]), Format::Cf2).unwrap_err();
    assert!(
        matches!(e, OutputError::BadName { ref what, .. } if what == "0"),
        "{e:?}"
    );
}

#[test]
fn cf2_list_width() {
    // A list of scalars stays on one line while the line fits in 80 columns.
    // `Name => [ab, ab, ...]` with 18 elements is 80 columns.
    let fits = block(vec![("Name", list((0..18).map(|_| lit("ab")).collect()))]);
    let text = out(&fits, Format::Cf2);
    assert_eq!(text.lines().count(), 1);
    assert!(text.lines().next().unwrap().chars().count() <= 80);
    assert_eq!(text.lines().next().unwrap().chars().count(), 80);
    let long = block(vec![("Name", list((0..19).map(|_| lit("ab")).collect()))]);
    assert_eq!(out(&long, Format::Cf2).lines().count(), 21);
}

// ---------------------------------------------------------------- parse back

/// What a format's reader gives back, keeping member order.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Data {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    List(Vec<Data>),
    Map(IndexMap<String, Data>),
}

/// What clarifications §7 says a value becomes in JSON (and YAML, TOML).
fn expected(v: &Value) -> Data {
    match v {
        Value::Literal(s) | Value::String(s) | Value::Regex(s) => Data::Text(s.clone()),
        Value::Number(Number::Int(i)) => Data::Int(*i),
        Value::Number(Number::Float(f)) => Data::Float(*f),
        Value::Bool(b) => Data::Bool(*b),
        Value::List(items) => Data::List(items.iter().map(expected).collect()),
        Value::Block(b) => Data::Map(b.iter().map(|(k, v)| (k.clone(), expected(v))).collect()),
    }
}

/// Equal data; `ordered` also compares member order.
fn same(a: &Data, b: &Data, ordered: bool, at: &str) {
    match (a, b) {
        (Data::Bool(x), Data::Bool(y)) => assert_eq!(x, y, "at {at}"),
        (Data::Int(x), Data::Int(y)) => assert_eq!(x, y, "at {at}"),
        // serde_json's default float parsing may be one unit in the last place off.
        (Data::Float(x), Data::Float(y)) => assert!(
            x.to_bits() == y.to_bits() || (x - y).abs() <= 1e-15 * x.abs(),
            "at {at}: {x} != {y}"
        ),
        (Data::Text(x), Data::Text(y)) => assert_eq!(x, y, "at {at}"),
        (Data::List(x), Data::List(y)) => {
            assert_eq!(x.len(), y.len(), "at {at}");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                same(x, y, ordered, &format!("{at}.{i}"));
            }
        }
        (Data::Map(x), Data::Map(y)) => {
            if ordered {
                assert_eq!(
                    x.keys().collect::<Vec<_>>(),
                    y.keys().collect::<Vec<_>>(),
                    "at {at}"
                );
            }
            assert_eq!(x.len(), y.len(), "at {at}");
            for (k, xv) in x {
                let yv = y.get(k).unwrap_or_else(|| panic!("at {at}: no {k}"));
                same(xv, yv, ordered, &format!("{at}.{k}"));
            }
        }
        _ => panic!("at {at}: {a:?} != {b:?}"),
    }
}

#[test]
fn json_reads_back() {
    for v in [
        sample(),
        tricky_text(),
        mixed_lists(),
        list(vec![int(1)]),
        lit("x"),
    ] {
        let text = out(&v, Format::Json);
        assert!(text.ends_with("}\n") || text.ends_with("]\n") || text.ends_with("\"\n"));
        let back: Data = serde_json::from_str(&text).unwrap();
        same(&expected(&v), &back, true, "$");
    }
    // Floats stay floats, integers stay integers.
    let v = list(vec![
        float(3.0),
        float(1e300),
        float(-0.0),
        int(3),
        int(i64::MIN),
    ]);
    let back: serde_json::Value = serde_json::from_str(&out(&v, Format::Json)).unwrap();
    let items = back.as_array().unwrap();
    assert!(items[0].is_f64() && items[1].is_f64() && items[2].is_f64());
    assert!(items[3].is_i64() && items[4].is_i64());
}

fn yaml_values() -> Vec<Value> {
    vec![
        sample(),
        tricky_text(),
        mixed_lists(),
        block(vec![
            ("yes", lit("no")),
            ("1", lit("on")),
            (
                "a: b",
                list(vec![
                    list(vec![list(vec![]), block(vec![])]),
                    list(vec![int(1), int(2)]),
                ]),
            ),
            (
                "k\u{2028}\"",
                list(vec![block(vec![(
                    "x",
                    list(vec![block(vec![("y", int(1))])]),
                )])]),
            ),
            (
                &"long".repeat(300),
                block(vec![("z", list(vec![lit("a")]))]),
            ),
            (
                "f",
                list(vec![
                    float(1e300),
                    float(-1.5e-300),
                    float(-0.0),
                    float(0.1),
                ]),
            ),
        ]),
        list(vec![
            int(1),
            list(vec![block(vec![("a", int(1)), ("b", int(2))])]),
        ]),
        lit("x"),
        lit("yes"),
        string("a\nb"),
        list(vec![]),
        block(vec![]),
        float(3.0),
    ]
}

#[test]
fn yaml_reads_back() {
    for v in yaml_values() {
        let text = out(&v, Format::Yaml);
        let back: Data =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{e}\n--- yaml ---\n{text}"));
        same(&expected(&v), &back, true, "$");
    }
}

/// YAML 1.1 readers (PyYAML here, when python3 has it) read the output the same.
#[test]
fn yaml_reads_back_in_pyyaml() {
    let probe = Command::new("python3")
        .arg("-c")
        .arg("import yaml")
        .output();
    if !matches!(probe, Ok(ref p) if p.status.success()) {
        eprintln!("note: python3 with PyYAML is not available; skipping the YAML 1.1 check");
        return;
    }
    let script = "import sys, json, yaml\n\
                  data = yaml.safe_load(sys.stdin.buffer.read().decode('utf-8'))\n\
                  sys.stdout.write(json.dumps(data))";
    for v in yaml_values() {
        let text = out(&v, Format::Yaml);
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let run = child.wait_with_output().unwrap();
        assert!(
            run.status.success(),
            "{}\n--- yaml ---\n{text}",
            String::from_utf8_lossy(&run.stderr)
        );
        let back: Data = serde_json::from_slice(&run.stdout).unwrap();
        same(&expected(&v), &back, true, "$");
    }
}

#[test]
fn toml_reads_back() {
    for v in [sample(), tricky_text(), mixed_lists()] {
        let text = out(&v, Format::Toml);
        let back: Data = toml::from_str(&text).unwrap();
        // TOML writes a table's plain values before its sub-tables: compare unordered.
        same(&expected(&v), &back, false, "$");
    }
    // Where no sub-table comes before a plain value, the order is kept.
    let v = block(vec![
        ("z", int(1)),
        ("a", int(2)),
        ("t", block(vec![("y", int(1)), ("b", int(2))])),
    ]);
    let back: Data = toml::from_str(&out(&v, Format::Toml)).unwrap();
    same(&expected(&v), &back, true, "$");
}

/// Text whose lines end in spaces or tabs, in every kind of TOML string the `toml` crate
/// picks (basic, literal, multi-line of both), as values, in lists and in tables.
fn trailing_whitespace() -> Value {
    block(vec![
        ("Banner", string("Welcome   \nto the host")),
        ("Tab", string("a\t\nb")),
        ("Quotes", lit("it's \"q\" \n")),
        ("Single", lit("it''' \n")),
        ("Doubles", string("a\"\"\" \n\"\"")),
        ("Backslash", string("c:\\ \n\\")),
        ("Control", string("a \r\n \u{1} \n")),
        ("Spaces", string("   \n   \n")),
        ("Nested", block(vec![("K", string("v \n"))])),
        ("List", list(vec![string("x \ny"), int(1), regex("a \nb")])),
        ("Tables", list(vec![block(vec![("T", string("t \n"))])])),
    ])
}

fn ends_no_line_in_whitespace(text: &str, format: Format) {
    for (i, line) in text.lines().enumerate() {
        assert!(
            !line.ends_with([' ', '\t']),
            "{format}: line {} ends in whitespace: {line:?}\n{text}",
            i + 1
        );
    }
}

/// A clearsignature (`-S`) does not cover whitespace at the end of a line (RFC 4880 §7.1):
/// no format ends a line in a space or a tab, and the TOML that avoids it reads back.
#[test]
fn no_line_ends_in_whitespace() {
    let v = trailing_whitespace();
    for format in [
        Format::Cf2,
        Format::Json,
        Format::Pl,
        Format::Yaml,
        Format::Toml,
    ] {
        ends_no_line_in_whitespace(&out(&v, format), format);
    }
    let text = out(&v, Format::Toml);
    let back: Data = toml::from_str(&text).unwrap();
    same(&expected(&v), &back, false, "$");
    insta::assert_snapshot!("toml_trailing_whitespace", text);
}

proptest::proptest! {
    /// Any text, in TOML, ends no line in whitespace and reads back.
    #[test]
    fn toml_text_ends_no_line_in_whitespace(
        texts in proptest::collection::vec("[ \t\n\r'\"\\\\a]{0,12}", 1..4)
    ) {
        let v = block(vec![
            ("A", string(&texts.join(""))),
            ("B", list(texts.iter().map(|t| lit(t)).collect())),
        ]);
        let text = out(&v, Format::Toml);
        ends_no_line_in_whitespace(&text, Format::Toml);
        let back: Data = toml::from_str(&text).unwrap();
        same(&expected(&v), &back, true, "$");
    }
}
#[test]
fn toml_needs_a_block() {
    let v = list(vec![int(80)]);
    let e = render_at(&v, Format::Toml, "Web.Ports").unwrap_err();
    assert_eq!(
        e.to_string(),
        "TOML output needs a block at the top, but `Web.Ports` is a list"
    );
    assert_eq!(
        e,
        OutputError::NeedsBlock {
            format: Format::Toml,
            what: "Web.Ports".into(),
            found: "list",
        }
    );
    let e = render(&int(1), Format::Toml).unwrap_err();
    assert_eq!(
        e.to_string(),
        "TOML output needs a block at the top, but the configuration is a number"
    );
    let e = render_at(&lit("x"), Format::Toml, "A").unwrap_err();
    assert_eq!(
        e.to_string(),
        "TOML output needs a block at the top, but `A` is a literal"
    );
    assert_eq!(out(&block(vec![]), Format::Toml), "");
}

#[test]
fn numbers_that_are_not_finite_are_refused() {
    for format in Format::ALL {
        let v = block(vec![("X", list(vec![float(f64::NAN)]))]);
        let e = render_at(&v, format, "Top").unwrap_err();
        assert!(matches!(e, OutputError::Invalid { .. }), "{format}: {e:?}");
        assert!(e.to_string().contains("not finite"), "{e}");
    }
}

// ---------------------------------------------------------------- perl

/// Runs perl's `do FILE` on `text` and gives the loaded data as JSON; `None` without perl.
fn perl_load(text: &str) -> Option<serde_json::Value> {
    if Command::new("perl").arg("-v").output().is_err() {
        eprintln!("note: perl is not on PATH; skipping the perl check");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.pl");
    std::fs::write(&file, text).unwrap();
    let loader = "use JSON::PP; my $d = do $ARGV[0]; die \"perl: $@\" if $@; \
                  die \"perl: $!\" unless defined $d; \
                  print JSON::PP->new->utf8->canonical->allow_nonref->encode($d)";
    let run = Command::new("perl")
        .arg("-e")
        .arg(loader)
        .arg(Path::new(&file))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "perl failed: {}\n--- output ---\n{}",
        String::from_utf8_lossy(&run.stderr),
        text.chars().take(2000).collect::<String>()
    );
    Some(serde_json::from_slice(&run.stdout).unwrap())
}

/// Perl's view of a value: numbers compare as numbers, true is 1 and false is "".
fn perl_same(v: &Value, got: &serde_json::Value, at: &str) {
    use serde_json::Value as J;
    match (v, got) {
        (Value::Literal(s) | Value::String(s) | Value::Regex(s), J::String(g)) => {
            assert_eq!(s, g, "at {at}")
        }
        (Value::Number(Number::Int(i)), J::Number(g)) => {
            assert_eq!(Some(*i), g.as_i64(), "at {at}: {g}")
        }
        (Value::Number(Number::Float(f)), J::Number(g)) => {
            let g = g.as_f64().unwrap();
            assert!(
                (f - g).abs() <= 1e-12 * f.abs().max(1.0),
                "at {at}: {f} != {g}"
            );
        }
        (Value::Bool(true), J::Number(g)) => assert_eq!(g.as_i64(), Some(1), "at {at}"),
        (Value::Bool(false), J::String(g)) => assert_eq!(g, "", "at {at}"),
        (Value::List(items), J::Array(g)) => {
            assert_eq!(items.len(), g.len(), "at {at}");
            for (i, (v, g)) in items.iter().zip(g).enumerate() {
                perl_same(v, g, &format!("{at}.{i}"));
            }
        }
        (Value::Block(b), J::Object(g)) => {
            assert_eq!(b.len(), g.len(), "at {at}");
            for (k, v) in b {
                let gv = g.get(k).unwrap_or_else(|| panic!("at {at}: no {k}"));
                perl_same(v, gv, &format!("{at}.{k}"));
            }
        }
        _ => panic!("at {at}: {v:?} loaded as {got}"),
    }
}

#[test]
fn pl_loads_in_perl() {
    let values = [
        sample(),
        tricky_text(),
        mixed_lists(),
        block(vec![]),
        list(vec![]),
        list(vec![block(vec![("a", int(1))]), list(vec![string("x")])]),
        lit("it's \\ 'quoted' — ünïcödé"),
        string("a\u{0}b\r\nc\u{85}\u{7f}\u{1b}"),
        lit("@x $y \\ \" ' \r"),
        int(i64::MIN),
        int(i64::MAX),
        float(-45.67),
        float(1e-300),
        float(1.7e308),
        Value::Bool(true),
        regex(r"^\d+/\d+$"),
        block(vec![
            ("quote'key", int(1)),
            ("back\\slash", int(2)),
            ("ключ", int(3)),
        ]),
    ];
    for v in &values {
        let text = out(v, Format::Pl);
        assert!(text.starts_with("use utf8;\n"));
        match perl_load(&text) {
            Some(got) => perl_same(v, &got, "$"),
            None => return,
        }
    }
}

// ---------------------------------------------------------------- formats

#[test]
fn format_names() {
    for (ext, format) in [
        ("cf2", Format::Cf2),
        ("json", Format::Json),
        ("pl", Format::Pl),
        ("yaml", Format::Yaml),
        ("yml", Format::Yaml),
        ("toml", Format::Toml),
        ("JSON", Format::Json),
    ] {
        assert_eq!(Format::from_extension(ext), Some(format), "{ext}");
    }
    assert_eq!(Format::from_extension("txt"), None);
    assert_eq!(Format::from_extension(""), None);
    for format in Format::ALL {
        assert_eq!(Format::from_extension(format.name()), Some(format));
        assert_eq!(format.to_string(), format.name());
    }
    assert_eq!(Format::from_file_name("out/web.json"), Some(Format::Json));
    assert_eq!(Format::from_file_name("-.json"), Some(Format::Json));
    assert_eq!(Format::from_file_name("a.b/c"), None);
    assert_eq!(Format::from_file_name("-"), None);
    assert_eq!(Format::from_file_name("x.yml"), Some(Format::Yaml));
    assert_eq!(Format::default(), Format::Cf2);
}

// ---------------------------------------------------------------- depth

fn nested_lists(depth: usize) -> Value {
    let mut v = int(1);
    for _ in 0..depth {
        v = list(vec![v]);
    }
    v
}

fn nested_blocks(depth: usize) -> Value {
    let mut v = int(1);
    for _ in 0..depth {
        v = block(vec![("a", v), ("b", lit("x"))]);
    }
    v
}

fn nested_alternating(depth: usize) -> Value {
    let mut v = lit("leaf");
    for i in 0..depth {
        v = if i % 2 == 0 {
            list(vec![v, int(1)])
        } else {
            block(vec![("n", v)])
        };
    }
    v
}

/// Runs `f` on a thread with the default 2 MiB stack of spawned threads.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn max_depth_works_in_every_format() {
    let results = on_small_stack(|| {
        let mut results = Vec::new();
        for (name, v) in [
            ("lists", nested_lists(MAX_DEPTH)),
            ("blocks", nested_blocks(MAX_DEPTH)),
            ("alternating", nested_alternating(MAX_DEPTH)),
        ] {
            for format in Format::ALL {
                if format == Format::Toml && !matches!(v, Value::Block(_)) {
                    continue;
                }
                results.push((name, format, render(&v, format)));
            }
        }
        results
    });
    for (name, format, result) in results {
        let text = result.unwrap_or_else(|e| panic!("{name} as {format}: {e}"));
        assert!(!text.is_empty(), "{name} as {format}");
    }
}

#[test]
fn deep_values_load_in_perl() {
    for v in [nested_lists(MAX_DEPTH), nested_alternating(MAX_DEPTH)] {
        let text = out(&v, Format::Pl);
        if perl_load_deep(&text).is_none() {
            return;
        }
    }
}

/// Like `perl_load`, with JSON::PP's nesting limit lifted.
fn perl_load_deep(text: &str) -> Option<()> {
    if Command::new("perl").arg("-v").output().is_err() {
        eprintln!("note: perl is not on PATH; skipping the perl check");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep.pl");
    std::fs::write(&file, text).unwrap();
    let loader = "use JSON::PP; my $d = do $ARGV[0]; die \"perl: $@\" if $@; \
                  die \"perl: $!\" unless defined $d; \
                  print JSON::PP->new->max_depth(5000)->canonical->encode($d)";
    let run = Command::new("perl")
        .arg("-e")
        .arg(loader)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json = String::from_utf8(run.stdout).unwrap();
    assert!(
        json.matches('[').count() >= MAX_DEPTH / 2,
        "{}",
        &json[..100]
    );
    Some(())
}

#[test]
fn deeper_than_max_depth_is_refused() {
    for format in Format::ALL {
        for v in [nested_blocks(MAX_DEPTH + 1), nested_lists(MAX_DEPTH + 1)] {
            let e = render_at(&v, format, "Deep").unwrap_err();
            assert!(matches!(e, OutputError::TooDeep { .. }), "{format}: {e:?}");
            assert_eq!(
                e.to_string(),
                format!(
                    "{} output cannot write `Deep`: it is nested more than {} levels deep",
                    match format {
                        Format::Cf2 => "cf2",
                        Format::Json => "JSON",
                        Format::Pl => "Perl",
                        Format::Yaml => "YAML",
                        Format::Toml => "TOML",
                    },
                    MAX_DEPTH
                )
            );
        }
    }
}
