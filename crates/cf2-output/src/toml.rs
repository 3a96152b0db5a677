//! TOML: the JSON mapping (clarifications §7) in TOML syntax, written by the `toml` crate.
//! The top must be a block. Member order is kept, except that TOML writes a table's plain
//! values before its sub-tables and arrays of tables. A list of blocks is an array of
//! tables; lists may mix kinds (TOML 1.0).

use cf2_value::Value;

use crate::{Format, OutputError};

pub(crate) fn render(value: &Value, what: &str) -> Result<String, OutputError> {
    if !matches!(value, Value::Block(_)) {
        return Err(OutputError::NeedsBlock {
            format: Format::Toml,
            what: what.to_string(),
            found: value.type_name(),
        });
    }
    ::toml::to_string(value).map_err(|e| OutputError::Invalid {
        format: Format::Toml,
        what: what.to_string(),
        message: e.to_string(),
    })
}
