//! Like `compile` (the input split at `0xFF` bytes into `main.cf2`, `a.cf2`, `b.cf2`), but
//! with an oracle: a configuration that compiles is written in cf2 format, and that text
//! must compile to the same configuration, kinds included (clarifications §7) — block
//! member order aside.
#![no_main]

use cf2::{Compiler, MemoryHost, Number, Value};
use cf2_output::Format;
use libfuzzer_sys::fuzz_target;

/// Exact equality: literal vs string and integer vs decimal differ (`Value`'s own `==`
/// compares numbers by value); a block's member order does not matter.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(Number::Int(x)), Value::Number(Number::Int(y))) => x == y,
        // A float is written with 15 significant digits, as Perl shows it: it reads back
        // as that rounded value (docs/semantics.md §2).
        (Value::Number(Number::Float(x)), Value::Number(Number::Float(y))) => {
            Number::perl_rounded(*x).to_bits() == y.to_bits()
        }
        (Value::Number(_), Value::Number(_)) => false,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Block(x), Value::Block(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::List(_) | Value::Block(_), _) | (_, Value::List(_) | Value::Block(_)) => false,
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |b| *b == 0xFF);
    let main = parts.next().unwrap_or_default();
    let a = parts.next().unwrap_or_default();
    let b = parts.next().unwrap_or_default();
    let host = MemoryHost::new()
        .with_file("main.cf2", main)
        .with_file("a.cf2", a)
        .with_file("b.cf2", b);
    let Ok(config) = Compiler::with_host(host).compile_file("main.cf2") else {
        return;
    };
    let Ok(text) = cf2_output::render(config.value(), Format::Cf2) else {
        return;
    };
    let again = Compiler::with_host(MemoryHost::new().with_file("out.cf2", text.as_bytes()))
        .compile_file("out.cf2");
    match again {
        Ok(c) => assert!(
            same(config.value(), c.value()),
            "the cf2 output reads back differently:\n{text}\nfirst: {:?}\nagain: {:?}",
            config.value(),
            c.value()
        ),
        Err(e) => panic!(
            "the cf2 output does not compile:\n{text}\n{}",
            e.render(false)
        ),
    }
});
