#!/usr/bin/env bash
# Runs every test of cf2: formatting, lints, the Rust test suites (unit, data-driven
# cases with diagnostic snapshots, property tests, robustness), the differential tests of
# mutations against an independent model (tests/differential), the shared conformance
# cases, and our own cases through the conformance runner (which adds the cf2-format round
# trip and the Perl load check). Installs what the tests need when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }
missing=()
need perl || missing+=(perl)
need python3 || missing+=(python3)
need gpg || missing+=(gnupg)
if [ ${#missing[@]} -gt 0 ]; then
  if need apt-get; then
    echo "== installing ${missing[*]}"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "error: please install: ${missing[*]}" >&2; exit 1
  fi
fi
perl -MJSON::PP -e1 2>/dev/null || { echo "error: perl lacks JSON::PP (install perl-modules)" >&2; exit 1; }

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== fuzz targets still build (cargo check; run them with cargo fuzz, see fuzz/README.md)"
cargo check --quiet --manifest-path fuzz/Cargo.toml --bins
echo "== cargo build"
cargo build --workspace --quiet
echo "== cargo test"
cargo test --workspace --quiet 2>&1 | tee target/test-output.txt | grep -E "^(test result|running|error|failures|---- )" || true
if grep -qE "^test result: FAILED|^error(\[|:)" target/test-output.txt; then
  echo "cargo test failed:" >&2; tail -n 60 target/test-output.txt >&2; exit 1
fi

echo "== differential tests of mutations: an independent model, and shuffled statements (tests/differential)"
python3 tests/differential/run.py --cf2 target/debug/cf2 --seeds 1000

shared=../shared/conformance
if [ -d "$shared/cases" ]; then
  echo "== conformance cases ($shared)"
  python3 "$shared/run.py" --cf2 target/debug/cf2 "$shared/cases"
  echo "== project cases through the conformance runner"
  python3 "$shared/run.py" --cf2 target/debug/cf2 tests/cases
  echo "== the binary to deploy (scripts/build-static.sh) through the conformance cases"
  static=$(./scripts/build-static.sh)
  python3 "$shared/run.py" --cf2 "$static" "$shared/cases"
else
  echo "== (no ../shared/conformance here: skipped the external runner)"
fi
echo "== all tests passed"
