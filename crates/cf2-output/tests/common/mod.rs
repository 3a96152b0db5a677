//! Values shared by the format tests.
#![allow(dead_code)]

use cf2_value::{Block, Number, Value};

pub fn lit(s: &str) -> Value {
    Value::Literal(s.to_string())
}
pub fn string(s: &str) -> Value {
    Value::String(s.to_string())
}
pub fn int(i: i64) -> Value {
    Value::Number(Number::Int(i))
}
pub fn float(f: f64) -> Value {
    Value::Number(Number::Float(f))
}
pub fn regex(p: &str) -> Value {
    Value::Regex(p.to_string())
}
pub fn list(items: Vec<Value>) -> Value {
    Value::List(items)
}
pub fn block(members: Vec<(&str, Value)>) -> Value {
    Value::Block(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<Block>(),
    )
}

/// Every kind of value, nested, with the awkward cases: unicode, quotes, backslashes, `$`,
/// `/` in a regex, empty list and block, floats like 3.0 and -45.67, big integers, text that
/// looks like a number or boolean, and member order that is not alphabetical.
pub fn sample() -> Value {
    block(vec![
        ("Zebra", lit("first")),
        ("Literal", lit("simple123")),
        ("Hyphenated", lit("web-server")),
        ("Spaced", lit("a literal")),
        ("Quoted", lit("it's \"quoted\" \\ back")),
        ("TrueText", lit("true")),
        ("NumberText", lit("123")),
        ("Empty", lit("")),
        ("String", string("two\nlines\tand ${not} $interpolated")),
        ("Unicode", string("naïve café – 日本語 🚀")),
        ("UnicodeWord", lit("café")),
        ("Int", int(123)),
        ("Negative", int(-7)),
        ("Big", int(i64::MAX)),
        ("Smallest", int(i64::MIN)),
        ("Float", float(3.0)),
        ("Decimal", float(-45.67)),
        ("Huge", float(1e300)),
        ("Tiny", float(1.5e-7)),
        ("Yes", Value::Bool(true)),
        ("No", Value::Bool(false)),
        ("Regex", regex(r"^(\d+)/(\d+)\.\d+$")),
        ("RegexEscapedSlash", regex(r"a\/b\\/c")),
        ("Ports", list(vec![int(80), int(443)])),
        (
            "Mixed",
            list(vec![int(3), list(vec![int(4), lit("x")]), lit("foo bar")]),
        ),
        ("EmptyList", list(vec![])),
        ("EmptyBlock", block(vec![])),
        (
            "LongList",
            list((1..=30).map(|i| lit(&format!("host{i}"))).collect()),
        ),
        (
            "Users",
            list(vec![
                block(vec![("Name", lit("john")), ("UID", int(1001))]),
                block(vec![("Name", lit("jane")), ("UID", int(1002))]),
            ]),
        ),
        (
            "Web",
            block(vec![
                ("Port", int(8080)),
                ("Hosts", list(vec![lit("a"), lit("b")])),
                (
                    "TLS",
                    block(vec![
                        ("Enabled", Value::Bool(true)),
                        ("Cert", string("/etc/ssl/cert.pem")),
                        ("Ciphers", list(vec![])),
                    ]),
                ),
                ("Empty", block(vec![])),
                ("After", lit("last")),
            ]),
        ),
        ("Alpha", lit("last")),
    ])
}

/// Strings that YAML (1.1 or 1.2) or TOML might read as something other than a string.
pub fn tricky_text() -> Value {
    let words = [
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "Y",
        "N",
        "True",
        "FALSE",
        "~",
        "null",
        "Null",
        "NULL",
        "0x1F",
        "0o17",
        "017",
        "1_000",
        ".inf",
        "-.inf",
        ".nan",
        "+1",
        "-1",
        "1e3",
        "1.5",
        "1.",
        "-",
        "- a",
        "? x",
        ": x",
        "a: b",
        "a #b",
        "#c",
        "[x]",
        "{x}",
        "*a",
        "&a",
        "!t",
        "%p",
        "@x",
        "`x",
        "'q'",
        "\"d\"",
        "2001-12-14",
        "12:30:00",
        " lead",
        "trail ",
        "",
        "a\nb",
        "\t",
        "|",
        ">",
        "---",
        "...",
        "\u{85}",
        "\u{2028}",
    ];
    block(vec![
        ("Literals", list(words.iter().map(|w| lit(w)).collect())),
        ("Strings", list(words.iter().map(|w| string(w)).collect())),
    ])
}

/// A list of blocks mixed with scalars, and lists inside lists of blocks (TOML must use
/// inline tables for those).
pub fn mixed_lists() -> Value {
    block(vec![
        (
            "Mixed",
            list(vec![int(1), block(vec![("a", int(1))]), lit("x")]),
        ),
        (
            "Nested",
            list(vec![
                list(vec![block(vec![("b", Value::Bool(true))])]),
                list(vec![]),
            ]),
        ),
        ("Empties", list(vec![block(vec![]), block(vec![])])),
    ])
}
