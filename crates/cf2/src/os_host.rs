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
