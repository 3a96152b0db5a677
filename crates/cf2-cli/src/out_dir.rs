//! The directory of a batch (`--out-dir`): outputs written whole or not at all, and on disk
//! before they are named.

use crate::output::{cannot_write, stage, write_atomic, Staged, STAGED};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Whether `name` is that of an output staged by a process that is gone (killed before it
/// put the output in place): the name is one [`stage`] gives, and no process has its
/// number. A number reused since only leaves the file for a later run.
fn stale_staged(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let Some((_, after)) = name
        .strip_prefix('.')
        .filter(|_| name.ends_with(".tmp"))
        .and_then(|n| n.rsplit_once(STAGED))
    else {
        return false;
    };
    let Some(pid) = after.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
        return false;
    };
    #[cfg(unix)]
    {
        // SAFETY: `kill` with signal 0 sends nothing; it only asks whether `pid` exists.
        pid > 0
            && unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// The directory of a batch (`--out-dir`), with the names it held when the batch started.
///
/// **Whole or not at all, across a crash too.** An output is written under no name, or
/// under a temporary one, and named only once its content is on disk. Flushing each file
/// (`fdatasync`) costs a journal commit each (1.2 ms on the benchmark's virtual disk: 12 s
/// for 10,000 hosts), so outputs wait in groups of [`GROUP`]: one `syncfs` of the
/// directory's file system puts a whole group on disk, then each is named.
/// [`OutDir::name_waiting`] flushes and names what is left, and [`OutDir::sync`] flushes
/// once more, so that when a batch ends its outputs and their names are on disk. A power
/// cut at any moment leaves each output as it was (absent, or the earlier run's) or whole,
/// never empty or cut under its name, as ext4's delayed allocation leaves a file that was
/// named before its data reached the disk.
///
/// An output whose name was not there is new: on Linux it is written into an unnamed file
/// (`O_TMPFILE`) that `linkat` then gives its name. A link never replaces anything, so the
/// file appears whole or not at all (a killed process leaves nothing, not even a temporary
/// name), and a name that appeared meanwhile — a pipe, a link, a file — makes it fail with
/// `EEXIST` instead of being overwritten. That takes `open`, `write`, `linkat`, `close`
/// where [`write_atomic`] takes `lstat`, `open`, `write`, `close`, `rename`, with no path
/// walk from the root (at most the short one of `/proc/self/fd/N`, see [`Naming`]).
///
/// Every other new output — once unnamed files turned out not to work here (no `O_TMPFILE`
/// on this file system, no `/proc`) — is written beside its name under a temporary one
/// ([`stage`]) and renamed, in the same groups; a new name that failed (`EEXIST`) goes
/// through [`write_atomic`], flushed on its own. A name that was there (a file to replace,
/// a device or pipe to write into, a link to follow) is staged by the batch
/// ([`OutDir::stage_named`]) and put in place after [`OutDir::name_waiting`]'s flush.
///
/// Elsewhere than on Linux (no `syncfs`), each output is flushed on its own before its
/// rename.
pub struct OutDir {
    path: PathBuf,
    existing: std::collections::HashSet<std::ffi::OsString>,
    /// Whether `existing` holds every name (the directory could be listed).
    complete: bool,
    #[cfg(target_os = "linux")]
    fd: Option<std::fs::File>,
    /// How new outputs are written: a [`Naming`], which only ever moves down the list as
    /// the run finds what this system refuses.
    naming: std::sync::atomic::AtomicU8,
    /// Outputs written since the last flush: those waiting for it to be named (see the
    /// type's comment), and how many were written, staged ones included.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    waiting: Mutex<(Vec<Waiting>, usize)>,
    /// The outputs that could not be named after their host's compile ended: the output's
    /// name, and the message.
    failed: Mutex<Vec<(String, String)>>,
    /// Outputs per group: [`GROUP`], fewer in tests.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    group: usize,
    /// How many times the file system was flushed (tests check that it comes first).
    #[cfg(test)]
    flushes: std::sync::atomic::AtomicUsize,
}

/// How many outputs wait for one flush of the file system before they are named. A
/// `syncfs` costs about as much as a few `fdatasync`s, whatever it flushes, so 256 outputs
/// per flush make its cost vanish beside writing them; the files stay open until named, so
/// the number stays well below the usual limit of 1,024 open files.
const GROUP: usize = 256;

/// An output written and not yet named.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Waiting {
    /// An unnamed file, to be linked as the name.
    #[cfg(target_os = "linux")]
    Unnamed(std::fs::File, String),
    /// Staged beside the name (a temporary file to rename, or a device or pipe to write
    /// into).
    Staged(Staged, String),
}

/// The value of a mutex, even if a thread panicked holding it (what it holds is never left
/// half-changed).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How an [`OutDir`] writes a new output, best first.
///
/// `linkat(fd, "", …, AT_EMPTY_PATH)` names an unnamed file's descriptor directly; Linux
/// 6.10 allows it to whoever opened the file, earlier kernels only with
/// CAP_DAC_READ_SEARCH (ENOENT otherwise). The `/proc` link of the descriptor, followed,
/// is the same file for anyone, at the price of a path walk through `/proc` (half of a
/// batch's `linkat` time on tmpfs). Without unnamed files, [`write_atomic`].
#[repr(u8)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Naming {
    LinkDescriptor,
    LinkThroughProc,
    Rename,
}

impl OutDir {
    /// Lists `path` (which exists). If it cannot be listed or opened, every output takes
    /// the path of [`write_atomic`].
    pub fn open(path: &Path) -> OutDir {
        let listed = std::fs::read_dir(path).and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.file_name()))
                .collect::<std::io::Result<std::collections::HashSet<_>>>()
        });
        // What a killed run left: gone, or they would pile up run after run.
        let listed = listed.map(|mut names| {
            names.retain(|name| {
                !(stale_staged(name) && std::fs::remove_file(path.join(name)).is_ok())
            });
            names
        });
        #[cfg(target_os = "linux")]
        let fd = listed.as_ref().ok().and_then(|_| {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(path)
                .ok()
        });
        #[cfg(target_os = "linux")]
        let naming = if fd.is_some() {
            Naming::LinkDescriptor
        } else {
            Naming::Rename
        };
        #[cfg(not(target_os = "linux"))]
        let naming = Naming::Rename;
        OutDir {
            path: path.to_path_buf(),
            complete: listed.is_ok(),
            existing: listed.unwrap_or_default(),
            #[cfg(target_os = "linux")]
            fd,
            naming: std::sync::atomic::AtomicU8::new(naming as u8),
            waiting: Mutex::new((Vec::new(), 0)),
            failed: Mutex::new(Vec::new()),
            group: GROUP,
            #[cfg(test)]
            flushes: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The same directory, with groups of `group` outputs (for tests).
    #[cfg(test)]
    fn in_groups_of(mut self, group: usize) -> OutDir {
        self.group = group;
        self
    }

    /// Whether the directory may have held `name` when the batch started (it did, or it
    /// could not be listed).
    pub fn listed(&self, name: &str) -> bool {
        !self.complete || self.existing.contains(std::ffi::OsStr::new(name))
    }

    /// Only [`write_atomic`], as if unnamed files did not work here (for tests).
    #[cfg(test)]
    fn without_unnamed_files(self) -> OutDir {
        self.settle(Naming::Rename);
        self
    }

    /// Whether new outputs are still written as unnamed files.
    #[cfg(test)]
    fn unnamed(&self) -> bool {
        self.naming() != Naming::Rename as u8
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn naming(&self) -> u8 {
        self.naming.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// From now on, new outputs are written `naming`'s way (or a worse one already found).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn settle(&self, naming: Naming) {
        self.naming
            .fetch_max(naming as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `data` beside the file `name` of the directory, to be put in its place by
    /// [`Staged::commit`] (or left out, dropped): the batch keeps its outputs that replace
    /// files on disk, not in memory, until every host has read what it reads.
    /// It is on disk once [`OutDir::name_waiting`] returns (elsewhere than on Linux, flushed
    /// on its own now). It counts in a group, so that a re-run, which stages every output,
    /// flushes them during the run rather than all at its end.
    pub fn stage_named(&self, name: &str, data: &[u8]) -> Result<Staged, String> {
        let staged = self
            .stage_closed(name, data, !cfg!(target_os = "linux"))
            .map_err(|e| cannot_write(&self.path.join(name), &e))?;
        #[cfg(target_os = "linux")]
        self.wait(None);
        Ok(staged)
    }

    /// `data` staged beside the file `name` ([`stage`]), the temporary file closed: a group
    /// of outputs, or a batch's outputs that replace files, hold no descriptors.
    fn stage_closed(&self, name: &str, data: &[u8], durable: bool) -> std::io::Result<Staged> {
        Ok(match stage(&self.path.join(name), data, durable)? {
            Staged::File(tmp, target) => Staged::Closed(tmp.into_temp_path(), target),
            other => other,
        })
    }

    /// [`OutDir::write`], its error a message naming the output (`cannot write
    /// `out/web.json`: Is a directory`).
    pub fn write_named(&self, name: &str, data: &[u8]) -> Result<(), String> {
        self.write(name, data)
            .map_err(|e| cannot_write(&self.path.join(name), &e))
    }

    /// Writes `data` for the file `name` of the directory, a name it did not hold when the
    /// batch started. The file gets its name, whole, once its group is on disk; an error
    /// found then is among [`OutDir::name_waiting`]'s.
    pub fn write(&self, name: &str, data: &[u8]) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            if self.naming() != Naming::Rename as u8
                && !self.existing.contains(std::ffi::OsStr::new(name))
            {
                match self.unnamed_file(data) {
                    Ok(file) => {
                        self.wait(Some(Waiting::Unnamed(file, name.to_string())));
                        return Ok(());
                    }
                    // Unnamed files do not work here (or the disk is full, or the directory
                    // gone): temporary names from now on, which say why if they fail too.
                    Err(_) => self.settle(Naming::Rename),
                }
            }
            let staged = self.stage_closed(name, data, false)?;
            self.wait(Some(Waiting::Staged(staged, name.to_string())));
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        write_atomic(&self.path.join(name), data, true)
    }

    /// Counts an output written in the group, and adds it to the outputs waiting to be
    /// named if it is one; the call that fills the group flushes the file system and names
    /// the group's outputs, while other threads go on compiling.
    #[cfg(target_os = "linux")]
    fn wait(&self, output: Option<Waiting>) {
        let group = {
            let mut waiting = lock(&self.waiting);
            let (outputs, written) = &mut *waiting;
            outputs.extend(output);
            *written += 1;
            if *written < self.group {
                return;
            }
            *written = 0;
            std::mem::take(outputs)
        };
        self.name_all(group);
    }

    /// Once every output has been written (or staged): flushes the file system, which puts
    /// on disk the outputs still waiting and those [`OutDir::stage_named`] staged, then
    /// names the waiting ones. Returns every output that could not be named since the batch
    /// started: its name and the message.
    pub fn name_waiting(&self) -> Vec<(String, String)> {
        // (Elsewhere than on Linux, each output was flushed and named on its own.)
        #[cfg(target_os = "linux")]
        {
            let group = std::mem::take(&mut lock(&self.waiting).0);
            self.name_all(group);
        }
        std::mem::take(&mut *lock(&self.failed))
    }

    /// Flushes the file system after the last output was named or renamed into place: when
    /// it returns, the names are on disk too.
    pub fn sync(&self) -> Result<(), String> {
        self.flush().map_err(|e| {
            format!(
                "cannot flush the outputs in `{}` to disk: {}",
                self.path.display(),
                crate::output::io_reason(&e)
            )
        })
    }

    /// Flushes the file system, then names each output of `group` (an unnamed file is
    /// linked, a staged one renamed). A failed flush names none: each is dropped, which
    /// removes it, and reported.
    #[cfg(target_os = "linux")]
    fn name_all(&self, group: Vec<Waiting>) {
        let flushed = self.flush();
        let on_disk = || flushed.as_ref().map_err(same_error).copied();
        let mut failed = Vec::new();
        for output in group {
            let (name, named) = match output {
                Waiting::Unnamed(file, name) => {
                    let named = on_disk().and_then(|()| self.name_unnamed(&file, &name));
                    (name, named)
                }
                Waiting::Staged(staged, name) => (name, on_disk().and_then(|()| staged.commit())),
            };
            if let Err(e) = named {
                let message = cannot_write(&self.path.join(&name), &e);
                failed.push((name, message));
            }
        }
        if !failed.is_empty() {
            lock(&self.failed).extend(failed);
        }
    }

    /// Names the unnamed `file`, flushed, as `name`: linked, or if that fails, written again
    /// through [`write_atomic`] and flushed on its own. `EEXIST`: the name appeared since the
    /// listing, and `write_atomic` sees what it is. Any other error: unnamed files cannot be
    /// named here, and temporary names are used from now on.
    #[cfg(target_os = "linux")]
    fn name_unnamed(&self, file: &std::fs::File, name: &str) -> std::io::Result<()> {
        use std::io::{Read, Seek};
        let linked = self.link_unnamed(file, name);
        let Err(e) = linked else {
            return Ok(());
        };
        if e.raw_os_error() != Some(libc::EEXIST) {
            self.settle(Naming::Rename);
        }
        let mut data = Vec::new();
        let mut file = file;
        file.rewind()?;
        file.read_to_end(&mut data)?;
        write_atomic(&self.path.join(name), &data, true)
    }

    /// A new unnamed file of the directory holding `data`, open for reading too (so that
    /// [`OutDir::name_unnamed`] can write it again elsewhere).
    #[cfg(target_os = "linux")]
    fn unnamed_file(&self, data: &[u8]) -> std::io::Result<std::fs::File> {
        use std::io::Write;
        use std::os::fd::{AsRawFd, FromRawFd};
        let Some(dir) = &self.fd else {
            return Err(std::io::ErrorKind::Unsupported.into());
        };
        // Mode 0666 less the umask, as `write_atomic` creates its files (docs/security.md).
        // SAFETY: a valid directory descriptor and a NUL-terminated path; the descriptor
        // returned is owned by the `File` alone.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                c".".as_ptr(),
                libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.write_all(data)?;
        Ok(file)
    }

    /// Links the unnamed `file` as `name` (see [`Naming`]): the name appears with the whole
    /// content or not at all, and never replaces anything (`EEXIST`).
    #[cfg(target_os = "linux")]
    fn link_unnamed(&self, file: &std::fs::File, name: &str) -> std::io::Result<()> {
        use std::ffi::CString;
        use std::os::fd::AsRawFd;
        let Some(dir) = &self.fd else {
            return Err(std::io::ErrorKind::Unsupported.into());
        };
        let invalid = |_| std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let fd = file.as_raw_fd();
        let to = CString::new(name).map_err(invalid)?;
        if self.naming() == Naming::LinkDescriptor as u8 {
            match link(fd, c"", dir, &to, libc::AT_EMPTY_PATH) {
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    self.settle(Naming::LinkThroughProc)
                }
                linked => return linked,
            }
        }
        let from = CString::new(format!("/proc/self/fd/{fd}")).map_err(invalid)?;
        link(libc::AT_FDCWD, &from, dir, &to, libc::AT_SYMLINK_FOLLOW)
    }

    /// Puts on disk everything written to the directory's file system so far (`syncfs`;
    /// since Linux 5.8 it also reports a write the disk failed). Where the directory cannot
    /// be opened, every file system is flushed (`sync`).
    #[cfg(target_os = "linux")]
    fn flush(&self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        #[cfg(test)]
        self.flushes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let opened;
        let dir = match &self.fd {
            Some(dir) => dir,
            None => match std::fs::File::open(&self.path) {
                Ok(dir) => {
                    opened = dir;
                    &opened
                }
                Err(_) => {
                    // SAFETY: `sync` takes nothing and cannot fail.
                    unsafe { libc::sync() };
                    return Ok(());
                }
            },
        };
        // SAFETY: a valid descriptor.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// The directory flushed, which puts its names on disk (each output was flushed before
    /// its rename).
    #[cfg(not(target_os = "linux"))]
    fn flush(&self) -> std::io::Result<()> {
        #[cfg(unix)]
        std::fs::File::open(&self.path)?.sync_all()?;
        Ok(())
    }
}

/// An error like `e` (`std::io::Error` is not `Clone`), for each output a failed flush
/// leaves unnamed.
#[cfg(target_os = "linux")]
fn same_error(e: &std::io::Error) -> std::io::Error {
    match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::new(e.kind(), e.to_string()),
    }
}

/// `linkat(from_dir, from, dir, to, flags)`.
#[cfg(target_os = "linux")]
fn link(
    from_dir: std::ffi::c_int,
    from: &std::ffi::CStr,
    dir: &std::fs::File,
    to: &std::ffi::CStr,
    flags: std::ffi::c_int,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: NUL-terminated paths; `from_dir` is a descriptor or AT_FDCWD.
    let linked =
        unsafe { libc::linkat(from_dir, from.as_ptr(), dir.as_raw_fd(), to.as_ptr(), flags) };
    if linked != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::OutDir;
    use std::fs;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
    use std::path::Path;

    /// The files of `dir`, sorted (no temporary file may be left).
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// What the process's umask makes of 0666 (read without changing it for other tests:
    /// a file made the old way, through `tempfile`, tells).
    fn ordinary_mode(dir: &Path) -> u32 {
        let probe = dir.join("probe");
        super::write_atomic(&probe, b"", false).unwrap();
        let m = mode(&probe);
        fs::remove_file(probe).unwrap();
        m
    }

    /// New names, through unnamed files where they work and through `write_atomic` where
    /// they do not, give the same files with the same modes and nothing else.
    #[test]
    fn new_outputs_are_whole_with_the_ordinary_mode_either_way() {
        for fallback in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            let want = ordinary_mode(dir);
            let mut out = OutDir::open(dir);
            if fallback {
                out = out.without_unnamed_files();
            }
            out.write("a.json", b"{}\n").unwrap();
            out.write("b.json", b"[1]\n").unwrap();
            assert_eq!(out.name_waiting(), []);
            assert_eq!(names(dir), ["a.json", "b.json"]);
            assert_eq!(fs::read_to_string(dir.join("a.json")).unwrap(), "{}\n");
            assert_eq!(fs::read_to_string(dir.join("b.json")).unwrap(), "[1]\n");
            assert_eq!(mode(&dir.join("a.json")), want, "fallback: {fallback}");
        }
    }

    /// Names that appear after the listing are what they are when written: a pipe is
    /// written into, a link (even dangling) is followed, a file is replaced — never
    /// overwritten by the unnamed file's link, which fails (`EEXIST`) instead.
    #[test]
    fn names_that_appear_after_the_listing_are_not_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let out = OutDir::open(dir);
        std::os::unix::fs::symlink("real.json", dir.join("link.json")).unwrap();
        fs::write(dir.join("file.json"), "old").unwrap();
        fs::hard_link(dir.join("file.json"), dir.join("file.keep")).unwrap();
        let fifo = dir.join("pipe.json");
        let piped = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if piped {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
            };
            out.write("pipe.json", b"piped\n").unwrap();
            assert_eq!(out.name_waiting(), []);
            assert_eq!(reader.join().unwrap(), "piped\n");
            assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        } else {
            sayln!("mkfifo is not available: pipes not tested");
        }
        out.write("link.json", b"linked\n").unwrap();
        assert_eq!(out.name_waiting(), []);
        assert!(fs::symlink_metadata(dir.join("link.json"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::read_to_string(dir.join("real.json")).unwrap(),
            "linked\n"
        );
        out.write("file.json", b"new\n").unwrap();
        assert_eq!(out.name_waiting(), []);
        assert_eq!(fs::read_to_string(dir.join("file.json")).unwrap(), "new\n");
        assert_eq!(fs::read_to_string(dir.join("file.keep")).unwrap(), "old");
        let mut want = vec!["file.json", "file.keep", "link.json", "real.json"];
        if piped {
            want.push("pipe.json");
            want.sort();
        }
        assert_eq!(names(dir), want);
        // A name that appeared is no reason to stop using unnamed files.
        #[cfg(target_os = "linux")]
        assert_eq!(out.unnamed(), out.fd.is_some());
    }

    /// A name listed at the start is replaced by rename (a new file: a hard link to the old
    /// one keeps the old content), not written through.
    #[test]
    fn listed_files_are_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("a.json"), "old").unwrap();
        fs::hard_link(dir.join("a.json"), dir.join("a.keep")).unwrap();
        let before = fs::metadata(dir.join("a.json")).unwrap().ino();
        let out = OutDir::open(dir);
        out.write("a.json", b"new\n").unwrap();
        assert_eq!(out.name_waiting(), []);
        assert_eq!(fs::read_to_string(dir.join("a.json")).unwrap(), "new\n");
        assert_eq!(fs::read_to_string(dir.join("a.keep")).unwrap(), "old");
        assert_ne!(fs::metadata(dir.join("a.json")).unwrap().ino(), before);
        assert_eq!(names(dir), ["a.json", "a.keep"]);
    }

    /// On a file system with unnamed files (tmpfs, ext4, xfs, btrfs), the fast path is
    /// taken and stays on.
    #[cfg(target_os = "linux")]
    #[test]
    fn unnamed_files_are_used_where_they_work() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let probe = tempfile::tempdir().unwrap();
        let works = OutDir::open(probe.path()).unnamed_file(b"").is_ok();
        let out = OutDir::open(dir);
        out.write("a.json", b"1").unwrap();
        assert_eq!(out.unnamed(), works);
        if !works {
            sayln!("no O_TMPFILE or /proc here: only the fallback is tested");
        }
    }

    /// Both ways of naming an unnamed file give the same file, and neither replaces a name
    /// (`EEXIST`): `AT_EMPTY_PATH`, and the `/proc` link used where the kernel refuses it.
    #[cfg(target_os = "linux")]
    #[test]
    fn unnamed_files_are_linked_either_way() {
        for refused in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let out = OutDir::open(tmp.path());
            if refused {
                out.settle(super::Naming::LinkThroughProc);
            }
            let Ok(file) = out.unnamed_file(b"{}\n") else {
                sayln!("no O_TMPFILE here (refused: {refused})");
                continue;
            };
            if out.link_unnamed(&file, "a.json").is_err() {
                sayln!("no /proc here (refused: {refused})");
                continue;
            }
            assert_eq!(names(tmp.path()), ["a.json"]);
            assert_eq!(
                fs::read_to_string(tmp.path().join("a.json")).unwrap(),
                "{}\n"
            );
            let again = out
                .unnamed_file(b"[]\n")
                .and_then(|file| out.link_unnamed(&file, "a.json"))
                .map_err(|e| e.raw_os_error());
            assert_eq!(again, Err(Some(libc::EEXIST)), "refused: {refused}");
            assert_eq!(
                fs::read_to_string(tmp.path().join("a.json")).unwrap(),
                "{}\n"
            );
        }
    }

    /// An output is named only after a flush of the file system has put it on disk: a group
    /// is flushed, then named, as it fills; what is left, when the batch's writes are done
    /// (`name_waiting`); and the names themselves at the end (`sync`). Outputs staged to
    /// replace a file count in the groups, so that a re-run flushes during the run.
    #[cfg(target_os = "linux")]
    #[test]
    fn outputs_are_named_once_on_disk() {
        use std::sync::atomic::Ordering::Relaxed;
        for fallback in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            fs::write(dir.join("old.json"), "old").unwrap();
            let mut out = OutDir::open(dir).in_groups_of(2);
            if fallback {
                out = out.without_unnamed_files();
            }
            let flushes = |out: &OutDir| out.flushes.load(Relaxed);
            // The names given so far (a staged output's temporary name starts with a dot).
            let visible = |dir: &Path| -> Vec<String> {
                names(dir)
                    .into_iter()
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            };
            out.write("a.json", b"1").unwrap();
            assert_eq!((visible(dir), flushes(&out)), (vec!["old.json".into()], 0));
            out.write("b.json", b"2").unwrap();
            assert_eq!(flushes(&out), 1);
            assert_eq!(visible(dir), ["a.json", "b.json", "old.json"]);
            out.write("c.json", b"3").unwrap();
            let staged = out.stage_named("old.json", b"new").unwrap();
            // The group of `c` and the staged output is flushed; `c` is named, `old.json`
            // waits to be put in place.
            assert_eq!(flushes(&out), 2);
            assert_eq!(visible(dir).len(), 4, "{:?}", names(dir));
            out.write("d.json", b"4").unwrap();
            assert_eq!(visible(dir).len(), 4, "fallback: {fallback}");
            assert_eq!(out.name_waiting(), []);
            assert_eq!(flushes(&out), 3);
            staged.commit().unwrap();
            assert_eq!(out.sync(), Ok(()));
            assert_eq!(flushes(&out), 4);
            assert_eq!(
                names(dir),
                ["a.json", "b.json", "c.json", "d.json", "old.json"]
            );
            assert_eq!(fs::read_to_string(dir.join("old.json")).unwrap(), "new");
            assert_eq!(fs::read_to_string(dir.join("d.json")).unwrap(), "4");
        }
    }

    /// A name that appears between an output's write and its naming is not replaced by the
    /// link (`EEXIST`): the output is written as `write_atomic` writes it, following a link.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_name_that_appears_before_the_flush_is_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let out = OutDir::open(dir);
        out.write("a.json", b"new\n").unwrap();
        std::os::unix::fs::symlink("real.json", dir.join("a.json")).unwrap();
        assert_eq!(out.name_waiting(), []);
        assert!(fs::symlink_metadata(dir.join("a.json"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(dir.join("real.json")).unwrap(), "new\n");
        assert_eq!(names(dir), ["a.json", "real.json"]);
    }

    /// An output that cannot be named is reported by `name_waiting` with the reason, under
    /// its name, and leaves nothing behind.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_output_that_cannot_be_named_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let out = OutDir::open(dir);
        out.write("a.json", b"1").unwrap();
        // A directory appeared under the name.
        fs::create_dir(dir.join("a.json")).unwrap();
        let failed = out.name_waiting();
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].0, "a.json");
        assert!(failed[0].1.starts_with("cannot write `"), "{}", failed[0].1);
        assert_eq!(names(dir), ["a.json"]);
        assert!(dir.join("a.json").is_dir());
    }
}
