//! JSON (clarifications §7): numbers are JSON numbers (an integer stays an integer; a float is
//! written with a `.` or an exponent, so it reads back as a float), literals and strings are
//! strings, booleans are booleans, a regex is its pattern, lists are arrays and blocks are
//! objects in member order. Pretty-printed with two-space indentation and a final newline.

use cf2_value::Value;

use crate::{Format, OutputError};

pub(crate) fn render(value: &Value, what: &str) -> Result<String, OutputError> {
    match serde_json::to_string_pretty(value) {
        Ok(mut text) => {
            text.push('\n');
            Ok(text)
        }
        Err(e) => Err(OutputError::Invalid {
            format: Format::Json,
            what: what.to_string(),
            message: e.to_string(),
        }),
    }
}
