//! The JSON writer writes exactly what `serde_json::to_writer_pretty` writes for the same
//! value (it replaced it: serde's machinery was most of the time spent writing JSON).

mod common;

use cf2_output::{render, Format};
use cf2_value::{Block, Number, Value};
use proptest::prelude::*;

fn serde_pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn text() -> impl Strategy<Value = String> {
    // Every escape JSON has, other control characters, quotes, non-ASCII.
    proptest::collection::vec(
        prop_oneof![
            Just('a'),
            Just('"'),
            Just('\\'),
            Just('\n'),
            Just('\t'),
            Just('\r'),
            Just('\u{8}'),
            Just('\u{c}'),
            Just('\u{1}'),
            Just('\u{1f}'),
            Just('\u{7f}'),
            Just('é'),
            Just('€'),
            Just('😀'),
            any::<char>(),
        ],
        0..8,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        text().prop_map(Value::Literal),
        text().prop_map(Value::String),
        text().prop_map(Value::Regex),
        any::<i64>().prop_map(|i| Value::Number(Number::Int(i))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Number(Number::Float(f))),
        any::<bool>().prop_map(Value::Bool),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::List),
            proptest::collection::vec((text(), inner), 0..5).prop_map(|members| {
                let mut b = Block::default();
                for (k, v) in members {
                    b.insert(k, v);
                }
                Value::Block(b)
            }),
        ]
    })
}

proptest! {
    #[test]
    fn json_is_what_serde_json_writes(v in value()) {
        prop_assert_eq!(render(&v, Format::Json).unwrap_or_default(), serde_pretty(&v));
    }
}

/// Lists and blocks nested `levels` deep (indentation beyond one piece of spaces).
fn deep(levels: usize) -> Value {
    let mut v = Value::Literal("x".into());
    for i in 0..levels {
        v = if i % 2 == 0 {
            Value::List(vec![v, Value::Bool(true)])
        } else {
            let mut b = Block::default();
            b.insert("k".into(), v);
            Value::Block(b)
        };
    }
    v
}

#[test]
fn the_samples_are_what_serde_json_writes() {
    for v in [
        common::sample(),
        common::tricky_text(),
        common::mixed_lists(),
        Value::Block(Block::default()),
        Value::List(vec![]),
        Value::List(vec![Value::List(vec![]), Value::Block(Block::default())]),
        Value::Number(Number::Float(1e21)),
        Value::Number(Number::Float(-0.0)),
        Value::Number(Number::Int(i64::MIN)),
        deep(80),
    ] {
        assert_eq!(
            render(&v, Format::Json).unwrap_or_default(),
            serde_pretty(&v)
        );
    }
}
