//! The main file as the compile finds it, to say why it could not be read where the
//! compile's own message would mislead.

use std::path::{Path, PathBuf};

/// `path` with the extension `.cf2` the compile adds to a main file without one (reference
/// §3.10), as `cf2_eval` does.
fn with_cf2_extension(path: &Path) -> PathBuf {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("cf2"))
    {
        return path.to_path_buf();
    }
    let mut p = path.as_os_str().to_owned();
    p.push(".cf2");
    PathBuf::from(p)
}

/// Why the main file `path` could not be read, where the compile's "no such file" would
/// mislead: it names a directory. Asked only after a compile failed.
pub fn main_file_trouble(path: &Path) -> Option<String> {
    let with_ext = with_cf2_extension(path);
    if with_ext != path && with_ext.is_file() {
        // That file was compiled.
        return None;
    }
    if path.is_dir() {
        return Some(format!(
            "cannot read `{}`: it is a directory",
            path.display()
        ));
    }
    if with_ext != path && with_ext.is_dir() && !path.exists() {
        return Some(format!(
            "cannot read `{}`: no such file (and `{}` is a directory)",
            path.display(),
            with_ext.display()
        ));
    }
    None
}
