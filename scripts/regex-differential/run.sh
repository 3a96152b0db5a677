#!/bin/bash
# Compares cf2's regex matching with Perl's on random patterns and texts (see README.md).
# usage: scripts/regex-differential/run.sh FIRST_SEED LAST_SEED   (2,000 pairs per seed)
# CF2 names the binary (default target/release/cf2); OUT the directory for the results.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CF2=$(realpath "${CF2:-target/release/cf2}")
export OUT=$(realpath -m "${OUT:-/tmp/cf2-regex-differential}")
mkdir -p "$OUT"
for seed in $(seq "$1" "$2"); do
  python3 "$here/gen.py" "$seed" 2000 > "$OUT/t$seed.txt"
  perl "$here/run.pl" < "$OUT/t$seed.txt" > "$OUT/p$seed.txt"
  python3 "$here/cmp.py" "$OUT/t$seed.txt" "$OUT/p$seed.txt" "$seed"
done
