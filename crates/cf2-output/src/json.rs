//! JSON (clarifications §7): numbers are JSON numbers (an integer stays an integer; a float is
//! written with a `.` or an exponent, so it reads back as a float), literals and strings are
//! strings, booleans are booleans, a regex is its pattern, lists are arrays and blocks are
//! objects in member order. Pretty-printed with two-space indentation and a final newline.

use cf2_value::Value;

use crate::{Format, OutputError};

/// `size`: about how long the text will be (the buffer is allocated once).
pub(crate) fn render(value: &Value, what: &str, size: usize) -> Result<String, OutputError> {
    let mut bytes = Vec::with_capacity(size + 1);
    let invalid = |message: String| OutputError::Invalid {
        format: Format::Json,
        what: what.to_string(),
        message,
    };
    serde_json::to_writer_pretty(&mut bytes, value).map_err(|e| invalid(e.to_string()))?;
    bytes.push(b'\n');
    // serde_json writes UTF-8 only; the check keeps this free of `unsafe`.
    String::from_utf8(bytes).map_err(|e| invalid(e.to_string()))
}
