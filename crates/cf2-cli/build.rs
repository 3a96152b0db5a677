//! Links the `cf2` binary as a position-dependent executable on Linux.
//!
//! A position-independent executable is relocated by the dynamic loader at every start: it
//! writes an absolute address into each of the ~300 KB of `.data.rel.ro` (clap's, logos's
//! and the standard library's tables), which makes about 80 pages private copies. On a
//! virtual machine each such page fault is dear: one host compiled as a whole process took
//! 18% less wall time without them (BENCHMARKS.md). The price is that the binary's own code
//! sits at a fixed address (the stack, heap and shared libraries are still randomised); cf2
//! reads configuration written by a site's administrators, not input from a network. The
//! code is still compiled position-independent, so only the link changes, and tests and
//! libraries are not affected (`rustc-link-arg-bins`).
fn main() {
    // A static build (`scripts/build-static.sh`) is position-dependent by its own flags;
    // `-no-pie` on a static-pie link would give a binary that cannot start.
    let crt_static = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") && !crt_static {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
