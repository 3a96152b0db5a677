//! How the process starts on Linux with glibc: the C library calls `main` below directly.
//!
//! The standard library's own start-up (`lang_start`) reads `/proc/self/maps` to place a
//! guard page for the main thread's stack, allocates a signal stack and installs handlers to
//! report a stack overflow: about 90 µs on a virtual machine, a twentieth of compiling one
//! host as a whole process (BENCHMARKS.md, run 14). cf2 never
//! overflows its stack (every recursion goes through `cf2_value::stack::deep`), so it starts
//! without that and does itself the parts it needs, in the same order:
//! - standard input, output and error are made open (to `/dev/null` when they were closed),
//!   so no file the compile opens can become fd 1 and receive the configuration;
//! - `SIGPIPE` is ignored, so writing to a closed pipe is an error cf2 reports, as before;
//! - a panic still prints its message and exits with status 101;
//! - standard output is flushed at the end.
//!
//! It also declares the main thread's stack limit (see [`declare_stack_limit`]), which spares
//! the second read of `/proc/self/maps` that `stacker` would make.
//!
//! Arguments and the environment are unaffected: glibc hands them to the standard library
//! through `.init_array`, as before.

use std::ffi::{c_char, c_int};

/// The entry point: the C library's `main`.
#[no_mangle]
pub extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    open_standard_fds();
    // SAFETY: setting a signal's disposition to "ignore" has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    declare_stack_limit();
    let code = match std::panic::catch_unwind(crate::run) {
        // `ExitCode` has no stable conversion to an integer; cf2 uses 0, 1 and 2.
        Ok(code) => (0..=u8::MAX)
            .find(|n| std::process::ExitCode::from(*n) == code)
            .map_or(1, c_int::from),
        Err(_) => 101,
    };
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code
}

/// Opens `/dev/null` on each of fds 0, 1 and 2 that is closed, as the standard library's
/// start-up does.
fn open_standard_fds() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `fds` is a valid array of three `pollfd`s for the duration of the call.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) };
    for pollfd in fds {
        let closed = if polled >= 0 {
            pollfd.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: F_GETFD only reads the descriptor's flags.
            unsafe { libc::fcntl(pollfd.fd, libc::F_GETFD) == -1 }
        };
        if closed {
            // SAFETY: a NUL-terminated path; the lowest free fd is the one just found closed.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
}

/// Declares how far down the main thread's stack may be used (`cf2_value::stack`), from
/// `RLIMIT_STACK`. With no limit, nothing is declared and `stacker` asks the C library.
fn declare_stack_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid `rlimit` to write into.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY
    {
        let size = usize::try_from(limit.rlim_cur).unwrap_or(0);
        cf2_value::stack::declare_main_thread_stack(size);
    }
}
