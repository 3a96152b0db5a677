//! Output formats (to be written).
