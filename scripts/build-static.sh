#!/usr/bin/env bash
# Builds the cf2 binary to deploy: on Linux with glibc, statically linked and
# position-dependent; elsewhere the ordinary release build. Prints the binary's path.
#
# Why: one host compiled on the host itself is a few milliseconds of process, and most of
# that is start-up. A static binary has no dynamic loader to run, no shared libraries to map
# and no relocations to apply; on the benchmark VM it starts a whole compile ~0.9 ms sooner
# (BENCHMARKS.md, "One host").
#
# The catch: `ipaddr()` and `iphost()` use the system resolver, which glibc loads at run time
# (NSS modules), so a static binary should run on hosts with the glibc it was built with.
# Build on the oldest distribution you deploy to, or use `cargo build --release` there.
#
# The flags cannot live in .cargo/config.toml: without --target they would apply to
# proc-macros too, which cannot be linked statically.
set -euo pipefail
cd "$(dirname "$0")/.."
triple=$(rustc -vV | sed -n 's/^host: //p')
case $triple in
    *-linux-gnu*)
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -C relocation-model=static" \
            cargo build --release --quiet -p cf2-cli --target "$triple"
        echo "target/$triple/release/cf2"
        ;;
    *)
        cargo build --release --quiet -p cf2-cli
        echo "target/release/cf2"
        ;;
esac
