//! Recursion whose depth the input decides, without overflowing the stack.
//!
//! Every recursive walk of the compiler (evaluation, materialisation, the writers, serde)
//! goes through [`deep`] at each level: when little of the current stack is left, the rest
//! of the walk moves to a fresh segment on the heap (`stacker`).
//!
//! Knowing "how much is left" needs the lowest address of the thread's stack. `stacker`
//! asks the C library, which for a process's main thread reads `/proc/self/maps`: about
//! 60 µs, a few percent of compiling one host as a whole process. A program that knows its
//! main thread's limit some cheaper way declares it with [`declare_main_thread_stack`] (the
//! `cf2` binary does, from the stack size limit); every other thread asks `stacker`.

use std::cell::Cell;

thread_local! {
    /// The lowest address this thread's current stack segment may use, as declared by
    /// [`set_thread_stack_limit`]; 0 when undeclared (then `stacker` decides).
    static DECLARED_LIMIT: Cell<usize> = const { Cell::new(0) };
}

/// Declares the limit of the calling thread's stack, which must be a process's main thread
/// whose stack may grow to `size_limit` bytes (`RLIMIT_STACK`), so [`deep`] need not ask
/// the C library.
///
/// The kernel counts that size from the top of the stack's mapping. Above the caller's
/// frame lie the arguments and environment (`execve` allows them at most a quarter of the
/// limit), the auxiliary vector, a random offset of a few KB and the C library's start-up
/// frames: a quarter of the limit plus 256 KiB covers them. A limit too small to leave
/// 1 MiB declares nothing.
pub fn declare_main_thread_stack(size_limit: usize) {
    let usable = size_limit.saturating_sub(size_limit / 4 + 256 * 1024);
    if usable >= 1024 * 1024 {
        set_thread_stack_limit(stack_address().saturating_sub(usable));
    }
}

/// Declares that the current thread's stack may be used down to the address `limit`
/// (exclusive). A limit below the real one turns deep recursion into a stack overflow.
/// 0 withdraws a declaration.
fn set_thread_stack_limit(limit: usize) {
    DECLARED_LIMIT.with(|l| l.set(limit));
}

/// Runs `f` on the current stack if at least `red_zone` bytes of it are left, else on a new
/// segment of `new_stack` bytes.
#[inline]
pub fn deep<T>(red_zone: usize, new_stack: usize, f: impl FnOnce() -> T) -> T {
    let limit = DECLARED_LIMIT.with(Cell::get);
    if limit == 0 {
        return stacker::maybe_grow(red_zone, new_stack, f);
    }
    let here = stack_address();
    if here.saturating_sub(limit) >= red_zone {
        return f();
    }
    // The declared limit belongs to the stack being left: on the new segment `stacker`
    // knows the bounds (it made it). The declaration comes back when `f` returns; if `f`
    // unwinds it stays withdrawn, which is only slower.
    set_thread_stack_limit(0);
    let result = stacker::grow(new_stack, f);
    set_thread_stack_limit(limit);
    result
}

/// An address in the current stack frame (close enough: `red_zone` covers the difference).
#[inline(always)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: usize) -> usize {
        deep(64 * 1024, 1024 * 1024, || {
            // A frame big enough that 20,000 levels exceed any thread's stack.
            let pad = std::hint::black_box([0u8; 512]);
            if n == 0 {
                usize::from(pad[0])
            } else {
                1 + depth(n - 1)
            }
        })
    }

    #[test]
    fn a_declared_limit_still_grows_onto_new_segments() {
        // A small thread whose limit is declared just as the binary declares its own.
        let result = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let top = stack_address();
                set_thread_stack_limit(top - 192 * 1024);
                let n = depth(20_000);
                let kept = DECLARED_LIMIT.with(Cell::get);
                (n, kept == top - 192 * 1024)
            })
            .expect("a thread");
        let (n, kept) = result.join().expect("no overflow");
        assert_eq!(n, 20_000);
        assert!(kept, "the declaration is restored after growing");
    }

    #[test]
    fn without_a_declaration_stacker_decides() {
        set_thread_stack_limit(0);
        assert_eq!(depth(20_000), 20_000);
    }
}
