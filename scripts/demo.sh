#!/usr/bin/env bash
# Builds cf2 and compiles the example site: one host to standard output, where four of its
# values come from and what reads them (`cf2 explain`), then every host into examples/out/
# as JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p cf2-cli
echo "== cf2 compile examples/site/hosts/web1.cf2"
./target/release/cf2 compile examples/site/hosts/web1.cf2
echo
echo "== cf2 explain examples/site/hosts/web1.cf2 Services.postgresql Services.nginx.Workers Memory DiskGB"
./target/release/cf2 explain examples/site/hosts/web1.cf2 Services.postgresql Services.nginx.Workers Memory DiskGB
echo
echo "== cf2 compile examples/site/hosts/*.cf2 --out-dir examples/out --format json"
./target/release/cf2 compile examples/site/hosts/*.cf2 --out-dir examples/out --format json
ls -l examples/out
