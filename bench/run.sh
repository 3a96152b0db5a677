#!/usr/bin/env bash
# cf2 performance benchmarks, compared in one run with jrsonnet and Debian's jsonnet.
#
#   bench/run.sh                 # full run: N=10000 site (takes ~15-30 min on 2 cores)
#   HOSTS=2000 bench/run.sh      # smaller site
#
# Measures (see BENCHMARKS.md):
#   (a) one host compiled as a whole process          hyperfine, cf2 / jrsonnet / jsonnet
#   (b) the whole site, one process each              hyperfine, cf2 --out-dir / jrsonnet -m / jsonnet -m
#   (c) peak memory (max RSS) at N=SMALL_HOSTS and N=HOSTS   /usr/bin/time
#   (d) parse throughput and in-memory per-host cost  criterion (crates/cf2-bench)
# and first checks that cf2 and the Jsonnet translation give the same JSON for every host.
#
# Results: bench/out/results.md (also printed), raw data in bench/out/raw/.
#
# Environment (defaults in brackets):
#   HOSTS [10000]  SMALL_HOSTS [1000]  ASPECTS [20]  PER_HOST [4]  SEED [1]
#   RUNS_ONE [100]        hyperfine runs for one host (after 10 warm-ups)
#   RUNS_SITE [5]         hyperfine runs for a whole site (after 1 warm-up)
#   JSONNET_SITE_HOSTS [SMALL_HOSTS]  site size for C++ jsonnet (it is slow; its runs are
#                         capped by JSONNET_TIMEOUT [900] seconds each)
#   TMPFS [/dev/shm]      a RAM file system for the "outputs on tmpfs" rows ('' to skip)
#   SKIP_CRITERION [0]    1: skip the criterion micro-benchmarks
#   OUT [bench/out]       where sites, outputs and results go
#   CF2 [unset]           a cf2 binary to measure instead of building one with
#                         scripts/build-static.sh (and target/release/cf2 beside it)
#   CF2_CARGO [unset]     with CF2: a second binary for the one-host rows, "cf2 (cargo build)"
#   CF2_DESC [unset]      how to describe that binary in the report (e.g. "commit abc1234")
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
OUT=${OUT:-$BENCH/out}
HOSTS=${HOSTS:-10000}
SMALL_HOSTS=${SMALL_HOSTS:-1000}
ASPECTS=${ASPECTS:-20}
PER_HOST=${PER_HOST:-4}
SEED=${SEED:-1}
RUNS_ONE=${RUNS_ONE:-100}
RUNS_SITE=${RUNS_SITE:-5}
JSONNET_SITE_HOSTS=${JSONNET_SITE_HOSTS:-$SMALL_HOSTS}
JSONNET_TIMEOUT=${JSONNET_TIMEOUT:-900}
TMPFS=${TMPFS-/dev/shm}
SKIP_CRITERION=${SKIP_CRITERION:-0}
TOOLS=$BENCH/.tools

if (( SMALL_HOSTS > HOSTS )); then SMALL_HOSTS=$HOSTS; fi
if (( JSONNET_SITE_HOSTS > HOSTS )); then JSONNET_SITE_HOSTS=$HOSTS; fi

log() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# --- tools --------------------------------------------------------------------------------
apt_install() { # package...
    local sudo=""
    if [[ $(id -u) != 0 ]]; then
        command -v sudo >/dev/null || die "need root (or sudo) to install: $*"
        sudo=sudo
    fi
    $sudo apt-get install -y "$@" >/dev/null 2>&1 \
        || { $sudo apt-get update >/dev/null && $sudo apt-get install -y "$@" >/dev/null; } \
        || die "cannot install: $*"
}

log "tools"
command -v hyperfine >/dev/null || apt_install hyperfine
command -v jsonnet >/dev/null || apt_install jsonnet
[[ -x /usr/bin/time ]] || apt_install time
command -v python3 >/dev/null || die "python3 is needed"
JRSONNET=$TOOLS/bin/jrsonnet
if [[ ! -x $JRSONNET ]]; then
    if command -v jrsonnet >/dev/null && jrsonnet --version 2>/dev/null | grep -q '0.5.0-pre98'; then
        JRSONNET=$(command -v jrsonnet)
    else
        log "installing jrsonnet 0.5.0-pre98 into $TOOLS (once; it takes a few minutes)"
        CARGO_TARGET_DIR=$TOOLS/target cargo install jrsonnet --version 0.5.0-pre98 --locked --root "$TOOLS"
        rm -rf "$TOOLS/target"
    fi
fi
JSONNET=$(command -v jsonnet)

# cf2 is the binary to deploy (scripts/build-static.sh: static on Linux with glibc); the
# one-host measurement also runs the plain `cargo build --release` binary (CF2_CARGO), whose
# start-up pays for the dynamic loader.
if [[ -n ${CF2:-} ]]; then
    log "using the cf2 binary $CF2 (CF2 is set; not building)"
    [[ -x $CF2 ]] || die "CF2=$CF2 is not an executable"
else
    log "building cf2 (release, scripts/build-static.sh)"
    CF2=$ROOT/$("$ROOT/scripts/build-static.sh")
    log "building cf2 (release, cargo build)"
    (cd "$ROOT" && cargo build --release -p cf2-cli)
    [[ $CF2 -ef $ROOT/target/release/cf2 ]] || CF2_CARGO=$ROOT/target/release/cf2
fi
CF2_CARGO=${CF2_CARGO:-}
[[ -z $CF2_CARGO || -x $CF2_CARGO ]] || die "CF2_CARGO=$CF2_CARGO is not an executable"

# --- the sites -------------------------------------------------------------------------------
RAW=$OUT/raw
WORK=$OUT/work
rm -rf "$RAW" "$WORK"
mkdir -p "$RAW" "$WORK"

site() { echo "$OUT/site-$1"; }
gen() { # N
    local dir
    dir=$(site "$1")
    if [[ -f $dir/site.json ]] && python3 - "$dir/site.json" "$1" "$ASPECTS" "$PER_HOST" "$SEED" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if [d["hosts"], d["aspects"], d["per_host"], d["seed"]] == [int(x) for x in sys.argv[2:]] else 1)
EOF
    then return; fi
    log "generating the site, N=$1"
    python3 "$BENCH/gen_site.py" "$dir" --hosts "$1" --aspects "$ASPECTS" --per-host "$PER_HOST" --seed "$SEED"
}
gen "$HOSTS"
gen "$SMALL_HOSTS"
gen "$JSONNET_SITE_HOSTS"
BIG=$(site "$HOSTS")
SMALL=$(site "$SMALL_HOSTS")
JSITE=$(site "$JSONNET_SITE_HOSTS")
HOST1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["first_host"])' "$BIG/site.json")

# 10,000 file names on one command line: check the limit rather than hope.
argbytes=$(cd "$BIG/cf2" && printf '%s\0' hosts/*.cf2 | wc -c)
argmax=$(getconf ARG_MAX)
(( argbytes < argmax / 2 )) || die "hosts/*.cf2 is $argbytes bytes of arguments; ARG_MAX is $argmax"

# --- correctness first: the same JSON from cf2 and from the Jsonnet translation ------------------
log "checking that cf2 and jrsonnet agree on all $HOSTS hosts"
mkdir -p "$WORK/check-cf2" "$WORK/check-jr" "$WORK/check-js"
(cd "$BIG/cf2" && "$CF2" compile hosts/*.cf2 --out-dir "$WORK/check-cf2" --format json)
"$JRSONNET" -m "$WORK/check-jr" "$BIG/jsonnet/site.jsonnet" >/dev/null
python3 "$BENCH/compare.py" "$WORK/check-cf2" "$WORK/check-jr" | tee "$RAW/check-jrsonnet.txt"
log "checking that cf2 and jsonnet agree on $JSONNET_SITE_HOSTS hosts"
mkdir -p "$WORK/check-cf2-js"
(cd "$JSITE/cf2" && "$CF2" compile hosts/*.cf2 --out-dir "$WORK/check-cf2-js" --format json)
timeout "$JSONNET_TIMEOUT" "$JSONNET" -m "$WORK/check-js" "$JSITE/jsonnet/site.jsonnet" >/dev/null
python3 "$BENCH/compare.py" "$WORK/check-cf2-js" "$WORK/check-js" | tee "$RAW/check-jsonnet.txt"
# The single-host commands below give the same data too.
"$CF2" compile "$BIG/cf2/hosts/$HOST1.cf2" -o -.json >"$WORK/one-cf2.json"
"$JRSONNET" "$BIG/jsonnet/hosts/$HOST1.jsonnet" >"$WORK/one-jr.json"
"$JSONNET" "$BIG/jsonnet/hosts/$HOST1.jsonnet" >"$WORK/one-js.json"
python3 - "$WORK"/one-cf2.json "$WORK"/one-jr.json "$WORK"/one-js.json <<'EOF'
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:])
assert a == b == c, "single-host outputs differ"
EOF
rm -rf "$WORK"/check-*

# --- environment ------------------------------------------------------------------------------
{
    echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
    echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo "cores=$(nproc)"
    echo "memory=$(free -g | awk '/^Mem:/ {print $2 " GB"}')"
    echo "kernel=$(uname -r)"
    echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "rustc=$(rustc --version)"
    if [[ -n ${CF2_DESC:-} ]]; then
        echo "cf2=$("$CF2" --version) ($CF2_DESC)"
    else
        echo "cf2=$("$CF2" --version) ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo ', with uncommitted changes'))"
    fi
    echo "cf2_binary=$(file -b "$CF2" | cut -d, -f1-2,4 | sed 's/ *$//')"
    echo "jrsonnet=$("$JRSONNET" --version)"
    echo "jsonnet=$("$JSONNET" --version 2>&1 | head -1)"
    echo "hyperfine=$(hyperfine --version)"
    echo "hosts=$HOSTS"
    echo "small_hosts=$SMALL_HOSTS"
    echo "jsonnet_site_hosts=$JSONNET_SITE_HOSTS"
    echo "aspects=$ASPECTS"
    echo "per_host=$PER_HOST"
    echo "seed=$SEED"
    echo "host1=$HOST1"
    echo "cf2_source_bytes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source_bytes"]["cf2"])' "$BIG/site.json")"
    echo "output_bytes=$(cd "$WORK" && du -sb one-cf2.json | cut -f1)"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$RAW/env.txt"

# --- (a) one host, whole process ------------------------------------------------------------------
log "(a) one host as a whole process"
one_cargo=()
[[ -n $CF2_CARGO ]] && one_cargo=(--command-name "cf2 (cargo build)" "$CF2_CARGO compile $BIG/cf2/hosts/$HOST1.cf2 -o -.json")
hyperfine -N --warmup 10 --runs "$RUNS_ONE" --export-json "$RAW/one.json" \
    --command-name cf2 "$CF2 compile $BIG/cf2/hosts/$HOST1.cf2 -o -.json" \
    "${one_cargo[@]}" \
    --command-name jrsonnet "$JRSONNET $BIG/jsonnet/hosts/$HOST1.jsonnet" \
    --command-name jsonnet "$JSONNET $BIG/jsonnet/hosts/$HOST1.jsonnet"

# --- (b) whole sites ------------------------------------------------------------------------------
site_bench() { # NAME N OUTDIR-BASE RUNS TOOLS...
    local name=$1 n=$2 base=$3 runs=$4
    shift 4
    local dir
    dir=$(site "$n")
    local args=()
    for tool in "$@"; do
        local o=$base/$name-$tool
        case $tool in
            cf2) args+=(--prepare "rm -rf $o" --command-name "cf2" \
                        "cd $dir/cf2 && $CF2 compile hosts/*.cf2 --out-dir $o --format json") ;;
            cf2-j1) args+=(--prepare "rm -rf $o" --command-name "cf2 -j 1" \
                        "cd $dir/cf2 && $CF2 compile hosts/*.cf2 --out-dir $o --format json -j 1") ;;
            jrsonnet) args+=(--prepare "rm -rf $o && mkdir -p $o" --command-name "jrsonnet -m" \
                        "$JRSONNET -m $o $dir/jsonnet/site.jsonnet >/dev/null") ;;
            jsonnet) args+=(--prepare "rm -rf $o && mkdir -p $o" --command-name "jsonnet -m" \
                        "timeout $JSONNET_TIMEOUT $JSONNET -m $o $dir/jsonnet/site.jsonnet >/dev/null") ;;
        esac
    done
    log "(b) $name: N=$n, $runs runs"
    hyperfine --warmup 1 --runs "$runs" --export-json "$RAW/$name.json" "${args[@]}"
    for tool in "$@"; do rm -rf "${base:?}/$name-$tool"; done
}
site_bench site-big "$HOSTS" "$WORK" "$RUNS_SITE" cf2 cf2-j1 jrsonnet
if [[ -n $TMPFS && -d $TMPFS ]]; then
    TMPOUT=$TMPFS/cf2-bench-$$
    mkdir -p "$TMPOUT"
    trap 'rm -rf "$TMPOUT"' EXIT
    site_bench site-big-tmpfs "$HOSTS" "$TMPOUT" "$RUNS_SITE" cf2 jrsonnet
fi
site_bench site-small "$SMALL_HOSTS" "$WORK" "$RUNS_SITE" cf2 jrsonnet
if (( JSONNET_SITE_HOSTS == SMALL_HOSTS )); then
    site_bench site-jsonnet "$JSONNET_SITE_HOSTS" "$WORK" 2 jsonnet
else
    site_bench site-jsonnet "$JSONNET_SITE_HOSTS" "$WORK" 2 cf2 jrsonnet jsonnet
fi

# --- (c) peak memory ------------------------------------------------------------------------------
log "(c) peak memory"
MEM=$RAW/memory.tsv
printf 'tool\thosts\tmaxrss_kb\twall_s\tuser_s\tsys_s\toutput_bytes\n' >"$MEM"
measure() { # TOOL N OUTDIR command...
    local tool=$1 n=$2 o=$3
    shift 3
    local t=$WORK/time.txt
    /usr/bin/time -f '%M %e %U %S' -o "$t" "$@" >/dev/null
    local bytes=0
    [[ -d $o ]] && bytes=$(du -sb "$o" | cut -f1)
    printf '%s\t%s\t%s\n' "$tool" "$n" "$(awk -v b="$bytes" '{print $1 "\t" $2 "\t" $3 "\t" $4 "\t" b}' "$t")" >>"$MEM"
    rm -rf "$o"
}
one_o=$WORK/mem-none
measure cf2 1 "$one_o" "$CF2" compile "$BIG/cf2/hosts/$HOST1.cf2" -o -.json
[[ -n $CF2_CARGO ]] && measure "cf2 (cargo build)" 1 "$one_o" "$CF2_CARGO" compile "$BIG/cf2/hosts/$HOST1.cf2" -o -.json
measure jrsonnet 1 "$one_o" "$JRSONNET" "$BIG/jsonnet/hosts/$HOST1.jsonnet"
measure jsonnet 1 "$one_o" "$JSONNET" "$BIG/jsonnet/hosts/$HOST1.jsonnet"
for n in $(printf '%s\n' "$SMALL_HOSTS" "$HOSTS" | sort -nu); do
    d=$(site "$n")
    o=$WORK/mem-out
    (cd "$d/cf2" && measure cf2 "$n" "$o" "$CF2" compile hosts/*.cf2 --out-dir "$o" --format json)
    (cd "$d/cf2" && measure "cf2 -j 1" "$n" "$o" "$CF2" compile hosts/*.cf2 --out-dir "$o" --format json -j 1)
    mkdir -p "$o" && measure jrsonnet "$n" "$o" "$JRSONNET" -m "$o" "$d/jsonnet/site.jsonnet"
done
o=$WORK/mem-out
mkdir -p "$o" && measure jsonnet "$JSONNET_SITE_HOSTS" "$o" timeout "$JSONNET_TIMEOUT" "$JSONNET" -m "$o" "$JSITE/jsonnet/site.jsonnet"

# --- (d) micro-benchmarks ---------------------------------------------------------------------------
if [[ $SKIP_CRITERION != 1 ]]; then
    log "(d) criterion micro-benchmarks (parse throughput, one host in memory)"
    if (cd "$ROOT" && cargo bench -p cf2-bench --bench cf2 -- --warm-up-time 2 --measurement-time 5 --noplot) \
        >"$RAW/criterion.txt" 2>&1; then
        grep -E 'time:|thrpt:|^[a-z]+/[a-z]+' "$RAW/criterion.txt" >&2 || true
    else
        cat "$RAW/criterion.txt" >&2
        echo "run.sh: the criterion benchmarks failed; the report has no micro-benchmark table" >&2
        rm -f "$RAW/criterion.txt"
    fi
fi

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW/env.txt"

# --- report ---------------------------------------------------------------------------------------
python3 "$BENCH/report.py" "$RAW" | tee "$OUT/results.md"
