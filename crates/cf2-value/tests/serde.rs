//! Serde support: `Serialize for Value` keeps kinds and order; `&Value` deserializes into
//! Rust types with errors that say where; the typed accessors (`as_i64`, ...).

use std::collections::{BTreeMap, HashMap};

use cf2_value::{from_value, from_value_at, Block, DeError, Number, Value};
use serde::Deserialize;

fn lit(s: &str) -> Value {
    Value::Literal(s.to_string())
}
fn string(s: &str) -> Value {
    Value::String(s.to_string())
}
fn int(i: i64) -> Value {
    Value::Number(Number::Int(i))
}
fn float(f: f64) -> Value {
    Value::Number(Number::Float(f))
}
fn list(items: Vec<Value>) -> Value {
    Value::List(items)
}
fn block(members: Vec<(&str, Value)>) -> Value {
    Value::Block(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<Block>(),
    )
}

fn err<T: for<'de> Deserialize<'de> + std::fmt::Debug>(v: &Value) -> DeError {
    match from_value::<T>(v) {
        Ok(t) => panic!("expected an error, got {t:?}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- scalars

#[test]
fn integers_with_range_checks() {
    assert_eq!(from_value::<u16>(&int(443)).unwrap(), 443);
    assert_eq!(from_value::<i8>(&int(-128)).unwrap(), -128);
    assert_eq!(from_value::<i64>(&int(i64::MIN)).unwrap(), i64::MIN);
    assert_eq!(from_value::<u64>(&int(i64::MAX)).unwrap(), i64::MAX as u64);
    assert_eq!(from_value::<i128>(&int(-5)).unwrap(), -5);
    assert_eq!(from_value::<u128>(&int(5)).unwrap(), 5);
    assert_eq!(
        err::<u8>(&int(300)).to_string(),
        "expected u8, found number 300, which is out of range for u8"
    );
    assert_eq!(
        err::<u32>(&int(-1)).to_string(),
        "expected u32, found number -1, which is out of range for u32"
    );
    // An integer-valued float is fine; a fraction is not.
    assert_eq!(from_value::<u16>(&float(3.0)).unwrap(), 3);
    assert_eq!(
        err::<u16>(&float(3.5)).to_string(),
        "expected u16, found number 3.5"
    );
    assert!(err::<u64>(&float(1e30))
        .to_string()
        .contains("out of range"));
}

#[test]
fn text_that_spells_a_number_is_a_number() {
    assert_eq!(from_value::<u16>(&lit("8080")).unwrap(), 8080);
    assert_eq!(from_value::<i32>(&string("-7")).unwrap(), -7);
    assert_eq!(from_value::<f64>(&lit("2.5")).unwrap(), 2.5);
    assert_eq!(
        err::<u16>(&lit("http")).to_string(),
        "expected u16, found text 'http'"
    );
    // A regex is not text for this purpose.
    assert_eq!(
        err::<u16>(&Value::Regex("12".into())).to_string(),
        "expected u16, found regex /12/"
    );
}

#[test]
fn floats() {
    assert_eq!(from_value::<f64>(&float(-45.67)).unwrap(), -45.67);
    assert_eq!(from_value::<f64>(&int(3)).unwrap(), 3.0);
    assert_eq!(from_value::<f32>(&float(0.5)).unwrap(), 0.5);
    assert!(err::<f32>(&float(1e300))
        .to_string()
        .contains("out of range for f32"));
    assert_eq!(
        err::<f64>(&Value::Bool(true)).to_string(),
        "expected f64, found boolean true"
    );
}

#[test]
fn booleans_are_only_booleans() {
    assert!(from_value::<bool>(&Value::Bool(true)).unwrap());
    assert!(!from_value::<bool>(&Value::Bool(false)).unwrap());
    assert_eq!(
        err::<bool>(&lit("true")).to_string(),
        "expected a boolean, found text 'true'"
    );
}

#[test]
fn strings_from_every_scalar() {
    assert_eq!(from_value::<String>(&lit("a")).unwrap(), "a");
    assert_eq!(
        from_value::<String>(&string("two\nlines")).unwrap(),
        "two\nlines"
    );
    assert_eq!(
        from_value::<String>(&Value::Regex("^a+$".into())).unwrap(),
        "^a+$"
    );
    assert_eq!(from_value::<String>(&int(42)).unwrap(), "42");
    assert_eq!(from_value::<String>(&float(3.0)).unwrap(), "3.0");
    assert_eq!(from_value::<String>(&Value::Bool(false)).unwrap(), "false");
    let v = lit("borrowed");
    let s: &str = from_value(&v).unwrap();
    assert_eq!(s, "borrowed");
    assert_eq!(
        err::<String>(&list(vec![])).to_string(),
        "expected a string, found an empty list"
    );
    assert_eq!(from_value::<char>(&lit("é")).unwrap(), 'é');
    assert!(err::<char>(&lit("ab"))
        .to_string()
        .contains("a single character"));
}

#[test]
fn long_text_is_shortened_in_messages() {
    let long = "x".repeat(100);
    let msg = err::<u8>(&lit(&long)).to_string();
    assert!(msg.ends_with("…'"), "{msg}");
    assert!(msg.len() < 80, "{msg}");
    let msg = err::<u8>(&string("a\nb")).to_string();
    assert_eq!(msg, "expected u8, found text 'a\\nb'");
}

// ---------------------------------------------------------------- compound

#[test]
fn lists_and_tuples() {
    let v = list(vec![int(80), int(443)]);
    assert_eq!(from_value::<Vec<u16>>(&v).unwrap(), vec![80, 443]);
    assert_eq!(from_value::<(u16, u16)>(&v).unwrap(), (80, 443));
    assert_eq!(from_value::<[u16; 2]>(&v).unwrap(), [80, 443]);
    assert_eq!(
        err::<(u16, u16, u16)>(&v).to_string(),
        "expected a tuple of size 3, found a list of 2 elements"
    );
    assert_eq!(
        err::<(u16,)>(&v).to_string(),
        "expected a list of 1 element, found a list of 2 elements"
    );
    assert_eq!(
        err::<Vec<u16>>(&int(80)).to_string(),
        "expected a sequence, found number 80"
    );
    let nested = list(vec![list(vec![int(1), int(2)]), list(vec![])]);
    assert_eq!(
        from_value::<Vec<Vec<i32>>>(&nested).unwrap(),
        vec![vec![1, 2], vec![]]
    );
}

#[test]
fn error_paths() {
    let v = block(vec![(
        "Web",
        block(vec![("Ports", list(vec![int(80), lit("http")]))]),
    )]);

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Web {
        #[serde(rename = "Ports")]
        ports: Vec<u16>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Config {
        #[serde(rename = "Web")]
        web: Web,
    }
    let e = err::<Config>(&v);
    assert_eq!(
        e.to_string(),
        "at `Web.Ports.1`: expected u16, found text 'http'"
    );
    assert_eq!(e.path(), "Web.Ports.1");
    assert_eq!(e.message(), "expected u16, found text 'http'");

    // from_value_at: paths are from the root.
    let e = from_value_at::<Vec<u16>>(&v, "Web.Ports").unwrap_err();
    assert_eq!(
        e.to_string(),
        "at `Web.Ports.1`: expected u16, found text 'http'"
    );
    assert_eq!(from_value_at::<u16>(&v, "Web.Ports.0").unwrap(), 80);
    assert_eq!(
        from_value_at::<u16>(&v, "Web.Nope")
            .unwrap_err()
            .to_string(),
        "there is no resource `Web.Nope`"
    );

    // A missing field is reported at the block that lacks it.
    let v2 = block(vec![("Web", block(vec![]))]);
    assert_eq!(
        err::<Config>(&v2).to_string(),
        "at `Web`: missing field `Ports`"
    );
    // Top level: no path.
    assert_eq!(
        err::<Config>(&int(1)).to_string(),
        "expected struct Config, found number 1"
    );
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Server {
    name: String,
    port: u16,
    weight: f64,
    enabled: bool,
    tags: Vec<String>,
    #[serde(default)]
    backup: Option<String>,
    limits: Limits,
    extra: Option<BTreeMap<String, i64>>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Limits {
    memory: u64,
    cpus: Option<u8>,
}

#[test]
fn nested_structs_and_options() {
    let v = block(vec![
        ("Name", lit("web1")),
        ("Port", lit("8080")),
        ("Weight", int(2)),
        ("Enabled", Value::Bool(true)),
        ("Tags", list(vec![lit("a"), string("b c"), int(3)])),
        ("Limits", block(vec![("Memory", int(1 << 40))])),
        ("Unknown", list(vec![block(vec![])])),
    ]);
    let s: Server = from_value(&v).unwrap();
    assert_eq!(
        s,
        Server {
            name: "web1".into(),
            port: 8080,
            weight: 2.0,
            enabled: true,
            tags: vec!["a".into(), "b c".into(), "3".into()],
            backup: None,
            limits: Limits {
                memory: 1 << 40,
                cpus: None
            },
            extra: None,
        }
    );

    let mut v2 = v.clone();
    if let Value::Block(b) = &mut v2 {
        b.insert("Backup".into(), lit("web2"));
        b.insert("Extra".into(), block(vec![("b", int(2)), ("a", int(1))]));
        b.insert(
            "Limits".into(),
            block(vec![("Memory", int(1)), ("Cpus", int(400))]),
        );
    }
    assert_eq!(
        err::<Server>(&v2).to_string(),
        "at `Limits.Cpus`: expected u8, found number 400, which is out of range for u8"
    );
    if let Value::Block(b) = &mut v2 {
        b.insert(
            "Limits".into(),
            block(vec![("Memory", int(1)), ("Cpus", int(4))]),
        );
    }
    let s: Server = from_value(&v2).unwrap();
    assert_eq!(s.backup.as_deref(), Some("web2"));
    assert_eq!(s.limits.cpus, Some(4));
    assert_eq!(s.extra.unwrap().get("b"), Some(&2));
}

#[test]
fn structs_from_lists() {
    #[derive(Debug, PartialEq, Deserialize)]
    struct Point {
        x: i32,
        y: i32,
    }
    assert_eq!(
        from_value::<Point>(&list(vec![int(1), int(2)])).unwrap(),
        Point { x: 1, y: 2 }
    );
    #[derive(Debug, PartialEq, Deserialize)]
    struct Pair(String, u8);
    assert_eq!(
        from_value::<Pair>(&list(vec![lit("a"), int(2)])).unwrap(),
        Pair("a".into(), 2)
    );
    #[derive(Debug, PartialEq, Deserialize)]
    struct Port(u16);
    assert_eq!(from_value::<Port>(&int(22)).unwrap(), Port(22));
}

#[test]
fn maps_keep_order_and_read_keys() {
    let v = block(vec![("z", int(1)), ("a", int(2)), ("m", int(3))]);
    let m: indexmap::IndexMap<String, i32> = from_value(&v).unwrap();
    assert_eq!(m.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
    let v = block(vec![("80", lit("http")), ("443", lit("https"))]);
    let m: HashMap<u16, String> = from_value(&v).unwrap();
    assert_eq!(m[&443], "https");
    let v = block(vec![("x80", lit("http"))]);
    assert_eq!(
        err::<HashMap<u16, String>>(&v).to_string(),
        "at `x80`: expected u16, found the name 'x80'"
    );
    let v = block(vec![("true", int(1))]);
    let m: HashMap<bool, i32> = from_value(&v).unwrap();
    assert_eq!(m[&true], 1);
}

#[derive(Debug, PartialEq, Deserialize)]
enum Mode {
    Fast,
    Slow,
    Fixed(u32),
    Range(u32, u32),
    Custom { level: u8, name: String },
}

#[test]
fn enums() {
    assert_eq!(from_value::<Mode>(&lit("Fast")).unwrap(), Mode::Fast);
    assert_eq!(from_value::<Mode>(&string("Slow")).unwrap(), Mode::Slow);
    assert_eq!(
        from_value::<Mode>(&block(vec![("Fixed", int(7))])).unwrap(),
        Mode::Fixed(7)
    );
    assert_eq!(
        from_value::<Mode>(&block(vec![("Range", list(vec![int(1), int(9)]))])).unwrap(),
        Mode::Range(1, 9)
    );
    assert_eq!(
        from_value::<Mode>(&block(vec![(
            "Custom",
            block(vec![("level", int(3)), ("name", lit("x"))])
        )]))
        .unwrap(),
        Mode::Custom {
            level: 3,
            name: "x".into()
        }
    );
    // A unit variant may also be written as a block holding an empty block.
    assert_eq!(
        from_value::<Mode>(&block(vec![("Fast", block(vec![]))])).unwrap(),
        Mode::Fast
    );
    assert_eq!(
        err::<Mode>(&lit("Medium")).to_string(),
        "unknown variant `Medium`, expected one of `Fast`, `Slow`, `Fixed`, `Range`, `Custom`"
    );
    assert_eq!(
        err::<Mode>(&lit("Fixed")).to_string(),
        "the variant `Fixed` needs a value: write it as a block `{ Fixed => ... }`"
    );
    assert_eq!(
        err::<Mode>(&block(vec![(
            "Custom",
            block(vec![("level", lit("high")), ("name", lit("x"))])
        )]))
        .to_string(),
        "at `Custom.level`: expected u8, found text 'high'"
    );
    assert_eq!(
        err::<Mode>(&block(vec![("Fixed", int(1)), ("Fast", block(vec![]))])).to_string(),
        "expected enum Mode (a variant's name, or a block of one member named by the variant), \
         found a block of 2 members"
    );
    assert_eq!(
        err::<Mode>(&block(vec![("Fast", int(1))])).to_string(),
        "at `Fast`: expected an empty list or block, found number 1"
    );

    // Enums as elements and as map keys.
    let v = list(vec![lit("Fast"), block(vec![("Fixed", lit("bad"))])]);
    assert_eq!(
        err::<Vec<Mode>>(&v).to_string(),
        "at `1.Fixed`: expected u32, found text 'bad'"
    );
    #[derive(Debug, PartialEq, Eq, Hash, Deserialize)]
    enum Color {
        Red,
        Green,
    }
    let m: HashMap<Color, u8> =
        from_value(&block(vec![("Red", int(1)), ("Green", int(2))])).unwrap();
    assert_eq!(m[&Color::Green], 2);
}

#[test]
fn internally_tagged_and_untagged_use_deserialize_any() {
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type")]
    enum Shape {
        Circle { r: f64 },
        Square { side: u32 },
    }
    let v = block(vec![("type", lit("Square")), ("side", int(4))]);
    assert_eq!(from_value::<Shape>(&v).unwrap(), Shape::Square { side: 4 });

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Port {
        Number(u16),
        Name(String),
    }
    assert_eq!(from_value::<Port>(&int(80)).unwrap(), Port::Number(80));
    assert_eq!(
        from_value::<Port>(&lit("http")).unwrap(),
        Port::Name("http".into())
    );
}

#[test]
fn unit_and_ignored() {
    from_value::<()>(&list(vec![])).unwrap();
    from_value::<()>(&block(vec![])).unwrap();
    assert!(from_value::<()>(&int(0)).is_err());
    #[derive(Debug, Deserialize)]
    struct Nothing {}
    from_value::<Nothing>(&block(vec![("a", list(vec![block(vec![])]))])).unwrap();
}

#[test]
fn deserialize_any_maps_naturally() {
    // serde_json::Value is a self-describing target: it shows what deserialize_any gives.
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Any {
        Bool(bool),
        Int(i64),
        Float(f64),
        Text(String),
        List(Vec<Any>),
        Map(indexmap::IndexMap<String, Any>),
    }
    let v = block(vec![
        ("l", lit("a")),
        ("s", string("b")),
        ("r", Value::Regex("c/d".into())),
        ("i", int(1)),
        ("f", float(1.0)),
        ("b", Value::Bool(true)),
        ("list", list(vec![block(vec![])])),
    ]);
    let a: Any = from_value(&v).unwrap();
    let Any::Map(m) = a else { panic!() };
    assert_eq!(m["l"], Any::Text("a".into()));
    assert_eq!(m["s"], Any::Text("b".into()));
    assert_eq!(m["r"], Any::Text("c/d".into()));
    assert_eq!(m["i"], Any::Int(1));
    assert_eq!(m["f"], Any::Float(1.0));
    assert_eq!(m["b"], Any::Bool(true));
    assert_eq!(m["list"], Any::List(vec![Any::Map(Default::default())]));
}

#[test]
fn deep_values_deserialize_on_a_small_stack() {
    // Lists nested MAX_DEPTH deep, read by a recursive type on a 2 MiB thread stack.
    #[derive(Deserialize)]
    struct Nest(Vec<Nest>);
    fn depth(n: &Nest) -> usize {
        n.0.first().map_or(0, |inner| 1 + depth(inner))
    }
    let got = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut v = list(vec![]);
            for _ in 1..cf2_value::MAX_DEPTH {
                v = list(vec![v]);
            }
            let n: Nest = from_value(&v).unwrap();
            depth(&n) + 1
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(got, cf2_value::MAX_DEPTH);
}

#[test]
fn deep_values_serialize_on_a_small_stack() {
    let text = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut v = int(1);
            for _ in 0..cf2_value::MAX_DEPTH {
                v = block(vec![("a", v)]);
            }
            serde_json::to_string(&v).unwrap()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(text.matches('{').count(), cf2_value::MAX_DEPTH);
}

// ---------------------------------------------------------------- serialize

#[test]
fn serialize_keeps_kinds_and_order() {
    let v = block(vec![
        ("z", int(1)),
        ("a", float(3.0)),
        ("t", lit("x")),
        ("s", string("y")),
        ("r", Value::Regex("a/b".into())),
        ("b", Value::Bool(false)),
        ("l", list(vec![int(-2), block(vec![])])),
    ]);
    let json = serde_json::to_string(&v).unwrap();
    assert_eq!(
        json,
        r#"{"z":1,"a":3.0,"t":"x","s":"y","r":"a/b","b":false,"l":[-2,{}]}"#
    );
    assert_eq!(serde_json::to_string(&Number::Int(7)).unwrap(), "7");
    assert_eq!(
        serde_json::to_string(&Number::Float(-45.67)).unwrap(),
        "-45.67"
    );
}

#[test]
fn accessors_read_a_value_of_their_kind_only() {
    assert_eq!(Value::Bool(true).as_bool(), Some(true));
    assert_eq!(Value::Literal("true".into()).as_bool(), None);
    assert_eq!(Value::Number(Number::Int(3)).as_i64(), Some(3));
    assert_eq!(Value::Number(Number::Float(3.0)).as_i64(), Some(3));
    assert_eq!(Value::Number(Number::Float(3.5)).as_i64(), None);
    assert_eq!(Value::Number(Number::Float(1e19)).as_i64(), None);
    assert_eq!(
        Value::Number(Number::Float(-9_223_372_036_854_775_808.0)).as_i64(),
        Some(i64::MIN)
    );
    assert_eq!(Value::Literal("3".into()).as_i64(), None);
    assert_eq!(Value::Number(Number::Int(2)).as_f64(), Some(2.0));
    assert_eq!(Value::String("2".into()).as_f64(), None);
}

/// A value read back as a `Value` is the value itself, kinds of text included, at any
/// depth: a program's type can hold a part of the configuration as it is.
#[test]
fn a_value_deserializes_to_itself() {
    let mut inner = Block::default();
    inner.insert("lit".into(), Value::Literal("a".into()));
    inner.insert("str".into(), Value::String("b\nc".into()));
    inner.insert("re".into(), Value::Regex("^w+$".into()));
    inner.insert("n".into(), Value::Number(Number::Int(-3)));
    inner.insert("f".into(), Value::Number(Number::Float(0.5)));
    inner.insert("t".into(), Value::Bool(true));
    inner.insert(
        "l".into(),
        Value::List(vec![Value::Literal("x".into()), Value::List(vec![])]),
    );
    let mut top = Block::default();
    top.insert("Zeta".into(), Value::Block(inner));
    top.insert("Alpha".into(), Value::Block(Block::default()));
    let v = Value::Block(top);
    let back: Value = from_value(&v).unwrap();
    assert_eq!(back, v);
    assert_eq!(
        back.as_block()
            .map(|b| b.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["Zeta".to_string(), "Alpha".to_string()])
    );

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct App {
        name: String,
        #[serde(default)]
        extra: Option<Value>,
    }
    let mut app = Block::default();
    app.insert("name".into(), Value::Literal("web".into()));
    app.insert("extra".into(), Value::Regex("a|b".into()));
    let app: App = from_value(&Value::Block(app)).unwrap();
    assert_eq!(app.extra, Some(Value::Regex("a|b".into())));
}

/// From another format: text is a string, integers that fit are integers, maps keep their
/// order; what CF2 cannot hold is refused, not changed.
#[test]
fn a_value_deserializes_from_other_formats() {
    let v: Value = serde_json::from_str(r#"{"b": [1, 2.5, "x", true], "a": {"c": -7}}"#).unwrap();
    let mut a = Block::default();
    a.insert("c".into(), Value::Number(Number::Int(-7)));
    let mut top = Block::default();
    top.insert(
        "b".into(),
        Value::List(vec![
            Value::Number(Number::Int(1)),
            Value::Number(Number::Float(2.5)),
            Value::String("x".into()),
            Value::Bool(true),
        ]),
    );
    top.insert("a".into(), Value::Block(a));
    assert_eq!(v, Value::Block(top));
    let e = serde_json::from_str::<Value>(r#"{"a": null}"#).unwrap_err();
    assert!(e.to_string().contains("CF2 has no null"), "{e}");
    let e = serde_json::from_str::<Value>("18446744073709551615").unwrap_err();
    assert!(
        e.to_string()
            .contains("the integer 18446744073709551615 is out of the range of a CF2 number"),
        "{e}"
    );
}
