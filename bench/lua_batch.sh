#!/bin/sh
# The cost of a fresh Lua state per compile (docs/functions.md): N host files, each calling
# one Lua module that remembers its arguments, compiled in one batch.
#   bench/lua_batch.sh [CF2] [N]
set -eu
CF2=${1:-target/release/cf2}
N=${2:-2000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/hosts" "$dir/functions" "$dir/out"
cat > "$dir/functions/seen.lua" <<'LUA'
local seen = {}
return { proto = { "TEXT" }, eval = function(args)
  seen[#seen + 1] = args[1]
  return #seen .. " " .. args[1]
end }
LUA
i=1
while [ "$i" -le "$N" ]; do
  echo "X => seen('h$i')" > "$dir/hosts/h$i.cf2"
  i=$((i + 1))
done
for round in 1 2 3; do
  rm -rf "$dir/out" && mkdir "$dir/out"
  /usr/bin/time -f "round $round: %e s wall, %U s user, %M KB peak" \
    "$CF2" compile "$dir"/hosts/*.cf2 --out-dir "$dir/out" -F "$dir/functions"
done
# Every host saw its own call only.
cat "$dir/out/h$N.json"
