//! Hosts with gpg and KeePass: the real `OsHost` uses the default security settings
//! (gpg's own keyring; KeePass passwords from `CF2_KEEPASS_PASSWORD` or the keychain, never
//! a prompt), and [`Secured`] gives any host explicit ones (what the command line does).

use cf2_eval::host::{HostError, KeePassGroup, Signed};
use cf2_eval::Host;
use cf2_security::Security;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

/// The settings `OsHost` uses: the defaults, shared by the whole process.
pub(crate) fn default_security() -> &'static Security {
    static DEFAULT: OnceLock<Security> = OnceLock::new();
    DEFAULT.get_or_init(Security::default)
}

/// A host whose signatures and KeePass databases go through the given [`Security`].
#[derive(Debug, Clone)]
pub struct Secured<H> {
    pub host: H,
    pub security: Arc<Security>,
}

impl<H: Host> Secured<H> {
    pub fn new(host: H, security: Security) -> Secured<H> {
        Secured {
            host,
            security: Arc::new(security),
        }
    }
}

impl<H: Host> Host for Secured<H> {
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.host.read_file(path)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.host.is_file(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.host.canonicalize(path)
    }

    fn current_dir(&self) -> PathBuf {
        self.host.current_dir()
    }

    fn read_file_unless_link(&self, path: &Path) -> Option<Vec<u8>> {
        self.host.read_file_unless_link(path)
    }

    fn list_dir(&self, dir: &Path) -> Vec<String> {
        self.host.list_dir(dir)
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.host.env_var(name)
    }

    fn lookup_host(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        self.host.lookup_host(name)
    }

    fn lookup_addr(&self, addr: IpAddr) -> io::Result<String> {
        self.host.lookup_addr(addr)
    }

    fn now(&self) -> SystemTime {
        self.host.now()
    }

    fn protected(&self, path: &Path) -> Option<String> {
        if let Some(why) = self.host.protected(path) {
            return Some(why);
        }
        self.security.protects(path).map(str::to_string)
    }

    fn verify_signed(&self, _path: &Path, data: &[u8]) -> Result<Signed, HostError> {
        self.security.verify_signed(data)
    }

    fn open_keepass(&self, path: &Path, data: &[u8]) -> Result<KeePassGroup, HostError> {
        self.security.open_keepass(path, data)
    }
}
