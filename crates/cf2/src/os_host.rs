//! The real host: the operating system's file system, environment, clock and resolver,
//! and gpg and KeePass with the default security settings (`crate::secured`).

use cf2_eval::Host;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

#[derive(Debug, Clone, Copy, Default)]
pub struct OsHost;

impl Host for OsHost {
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn current_dir(&self) -> PathBuf {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    }

    /// `open` with `O_NOFOLLOW` (a link fails it), then reads without asking the size:
    /// `open`, `read`, `read`, `close` for a small file.
    #[cfg(unix)]
    fn read_file_unless_link(&self, path: &Path) -> Option<Vec<u8>> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .ok()?;
        // `File::read_to_end` would first `fstat` the file for its size; through this
        // wrapper it reads into the buffer, which holds most sources whole.
        struct Unsized(std::fs::File);
        impl Read for Unsized {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf)
            }
        }
        // The part read into is zeroed first (through `read`, std cannot know it need not
        // be): 4 KiB holds a host file whole at a quarter of the cost of 16 KiB (1.5 % of a
        // batch); bigger files take a few more `read`s.
        let mut bytes = Vec::with_capacity(4 * 1024);
        Unsized(file).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }

    /// At most 10,000 names: a suggestion is not worth reading a huge directory.
    fn list_dir(&self, dir: &Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .take(10_000)
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        // The order of the directory is the file system's: sorted, a suggestion is the same
        // on every machine.
        names.sort_unstable();
        names
    }

    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn lookup_host(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        dns_lookup::lookup_host(name)
            .map(|addrs| addrs.collect())
            .map_err(|e| io::Error::other(e.to_string()))
    }

    fn lookup_addr(&self, addr: IpAddr) -> io::Result<String> {
        dns_lookup::lookup_addr(&addr).map_err(|e| io::Error::other(e.to_string()))
    }

    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    /// A process's files under `/proc` (`environ`, `cmdline`, `mem`, ...): they hold its
    /// environment, where `CF2_KEEPASS_PASSWORD` may be. System-wide ones such as
    /// `/proc/cpuinfo` stay readable. And the credentials of the default settings (the gpg
    /// home).
    fn protected(&self, path: &Path) -> Option<String> {
        let mut parts = path.components().skip(1).map(|c| c.as_os_str());
        let per_process = parts.next()? == "proc"
            && parts.next().is_some_and(|p| {
                p == "self"
                    || p == "thread-self"
                    || p.to_str()
                        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            });
        if per_process {
            return Some(
                "belongs to a running process (its environment, command line or memory)".into(),
            );
        }
        crate::secured::default_security()
            .protects(path)
            .map(str::to_string)
    }

    fn verify_signed(
        &self,
        _path: &Path,
        data: &[u8],
    ) -> Result<cf2_eval::host::Signed, cf2_eval::host::HostError> {
        crate::secured::default_security().verify_signed(data)
    }

    fn open_keepass(
        &self,
        path: &Path,
        data: &[u8],
    ) -> Result<cf2_eval::host::KeePassGroup, cf2_eval::host::HostError> {
        crate::secured::default_security().open_keepass(path, data)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn reads_a_file_unless_its_name_is_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.cf2");
        let big = dir.path().join("big.cf2");
        std::fs::write(&file, "A => 1\n").unwrap();
        let text = "B => 2\n".repeat(10_000);
        std::fs::write(&big, &text).unwrap();
        std::os::unix::fs::symlink(&file, dir.path().join("link.cf2")).unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let host = OsHost;
        assert_eq!(
            host.read_file_unless_link(&file),
            Some(b"A => 1\n".to_vec())
        );
        assert_eq!(host.read_file_unless_link(&big), Some(text.into_bytes()));
        assert_eq!(
            host.read_file_unless_link(&dir.path().join("link.cf2")),
            None
        );
        assert_eq!(
            host.read_file_unless_link(&dir.path().join("none.cf2")),
            None
        );
        assert_eq!(host.read_file_unless_link(&dir.path().join("d")), None);
    }
}
