//! Arbitrary bytes: if they are UTF-8, parse them. The parser must return an AST and
//! diagnostics for any text, never panic, overflow the stack or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let (_file, _diagnostics) = cf2_syntax::parse(cf2_syntax::FileId(0), text);
    }
});
