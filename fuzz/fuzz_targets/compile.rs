//! Arbitrary bytes split at `0xFF` bytes (never part of UTF-8) into up to three files:
//! `main.cf2`, `a.cf2` and `b.cf2`, compiled from memory. A successful compile is written in
//! every output format, and compiled straight to JSON text (streamed from the evaluator),
//! which must be the JSON of the value, also from a batch, twice (the second sharing the
//! imported files); it reads back as the same `Value`, and an error about its value is
//! placed and rendered; compiled with the trace, the value is the same, and each resource
//! is explained. A failed compile has its diagnostics rendered. Nothing may panic,
//! overflow the stack or hang.
#![no_main]

use cf2::{Compiler, MemoryHost};
use cf2_output::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |b| *b == 0xFF);
    let main = parts.next().unwrap_or_default();
    let a = parts.next().unwrap_or_default();
    let b = parts.next().unwrap_or_default();
    let host = MemoryHost::new()
        .with_file("main.cf2", main)
        .with_file("a.cf2", a)
        .with_file("b.cf2", b);
    let compiler = Compiler::with_host(host);
    match compiler.compile_file("main.cf2") {
        Ok(config) => {
            for format in Format::ALL {
                // An error (TOML needs a block at the top, a name cf2 cannot write, ...) is
                // fine; a panic is not.
                let _ = cf2_output::render(config.value(), format);
            }
            let streamed = compiler.compile_file_to("main.cf2", Format::Json);
            let built = cf2_output::render(config.value(), Format::Json);
            if let (Ok(streamed), Ok(built)) = (&streamed, &built) {
                assert_eq!(
                    &streamed.text, built,
                    "streamed JSON differs from the value's"
                );
            }
            for w in config.warnings() {
                let _ = config.render_diagnostic(w, false);
                let _ = config.location(w);
            }
            // Read back as a `Value`, the value is itself.
            let back: Option<cf2::Value> = config.deserialize("").ok();
            assert_eq!(
                back.as_ref(),
                Some(config.value()),
                "a Value reads back changed"
            );
            // An error about a value is placed by compiling again (the first member that
            // is no `u8`).
            if let Err(e) = config.deserialize::<std::collections::BTreeMap<String, u8>>("") {
                let _ = e.render(false);
            }
            // The trace changes nothing: compiled with it, the value is the same; its
            // entries render, and every resource is explained, with what read it.
            let mut tracing = compiler.clone();
            tracing.options_mut().trace = true;
            match tracing.compile_file("main.cf2") {
                Ok(traced) => {
                    assert_eq!(traced.value(), config.value(), "the trace changed the value");
                    let _ = traced.trace();
                    let _ = traced.explanation("");
                    if let cf2::Value::Block(top) = traced.value() {
                        for (key, _) in top.iter() {
                            let _ = traced.readers(key);
                            let _ = traced.explanation_read_by(key, Some(&traced));
                        }
                    }
                }
                Err(_) => panic!("the trace made a compile fail"),
            }
            // A batch shares `a.cf2` and `b.cf2` between its compiles: the same text.
            let batch = compiler.batch();
            let first = batch.compile_file_to("main.cf2", Format::Json);
            let second = batch.compile_file_to("main.cf2", Format::Json);
            if let (Ok(streamed), Ok(first), Ok(second)) = (&streamed, &first, &second) {
                assert_eq!(&first.text, &streamed.text, "a batch compiles differently");
                assert_eq!(
                    &second.text, &streamed.text,
                    "a batch's second compile differs"
                );
            }
        }
        Err(e) => {
            let _ = e.render(false);
            let _ = e.render(true);
            for d in e.diagnostics.iter().chain(&e.warnings) {
                let _ = e.location(d);
            }
        }
    }
});
