#!/usr/bin/env python3
"""Turn the raw results of bench/run.sh into a markdown report (printed on stdout).

    report.py RAW_DIR

RAW_DIR holds env.txt, one.json and site-*.json (hyperfine exports), memory.tsv,
check-*.txt and criterion.txt.
"""

import json
import os
import re
import sys


def load_env(raw):
    env = {}
    with open(os.path.join(raw, "env.txt"), encoding="utf-8") as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    return env


def load_hyperfine(raw, name):
    path = os.path.join(raw, name + ".json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return {r["command"]: r for r in data["results"]}


def load_memory(raw):
    rows = []
    path = os.path.join(raw, "memory.tsv")
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    return rows


def load_criterion(raw):
    """{bench: {"time": (lo, est, hi) in seconds, "thrpt": (lo, est, hi) in MB/s}}"""
    path = os.path.join(raw, "criterion.txt")
    if not os.path.exists(path):
        return {}
    units = {"ps": 1e-12, "ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    tunits = {"B/s": 1e-6, "KB/s": 1e-3, "MB/s": 1.0, "GB/s": 1e3,
              "KiB/s": 1.024e-3, "MiB/s": 1.048576, "GiB/s": 1073.741824}
    out = {}
    name = None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for line in text.splitlines():
        if "%" in line:  # "change:" lines against an earlier baseline
            continue
        m = re.match(r"^(\S+)\s+time:\s+\[(.+)\]", line)
        if m:
            name = m.group(1)
            parts = m.group(2).split()
            out[name] = {"time": tuple(float(parts[i]) * units[parts[i + 1]] for i in (0, 2, 4))}
            continue
        m = re.match(r"^(\S+)\s*$", line)
        if m and not line.startswith(" ") and "/" in line:
            name = m.group(1)
            continue
        m = re.match(r"^\s+time:\s+\[(.+)\]", line)
        if m and name:
            parts = m.group(1).split()
            out[name] = {"time": tuple(float(parts[i]) * units[parts[i + 1]] for i in (0, 2, 4))}
            continue
        m = re.match(r"^\s+thrpt:\s+\[(.+)\]", line)
        if m and name in out:
            parts = m.group(1).split()
            out[name]["thrpt"] = tuple(float(parts[i]) * tunits[parts[i + 1]] for i in (0, 2, 4))
    return out


def ms(s):
    return "%.2f ms" % (s * 1e3) if s < 1 else "%.2f s" % s


def mean_sd(r):
    return "%s ± %s" % (ms(r["mean"]), ms(r["stddev"] or 0.0))


def cpu(r):
    return ms(r["user"] + r["system"])


def mem_of(memory, tool, hosts):
    for row in memory:
        if row["tool"] == tool and int(row["hosts"]) == hosts:
            return row
    return None


def mb(kb):
    return "%.1f MB" % (int(kb) / 1024.0)


def main(argv):
    raw = argv[0]
    env = load_env(raw)
    one = load_hyperfine(raw, "one")
    big = load_hyperfine(raw, "site-big")
    big_tmp = load_hyperfine(raw, "site-big-tmpfs")
    small = load_hyperfine(raw, "site-small")
    small.update(load_hyperfine(raw, "site-jsonnet"))
    memory = load_memory(raw)
    crit = load_criterion(raw)
    n = int(env["hosts"])
    n_small = int(env["small_hosts"])
    n_js = int(env["jsonnet_site_hosts"])
    out = []
    w = out.append

    w("## Results (%s)" % env.get("date", "?"))
    w("")
    w("Machine: %s, %s cores, %s RAM, %s, kernel %s. Load average at start %s, at end %s "
      "(the machine is shared; wall times are noisy, CPU times less so)."
      % (env.get("cpu"), env.get("cores"), env.get("memory"), env.get("os"), env.get("kernel"),
         env.get("load_start"), env.get("load_end")))
    w("")
    w("Versions: %s; %s; %s; %s; %s." % (env.get("cf2"), env.get("jrsonnet"), env.get("jsonnet"),
                                        env.get("rustc"), env.get("hyperfine")))
    w("")
    w("Site: %d hosts, %s aspects, %s per host, seed %s; %s bytes of CF2 source; one host's JSON "
      "output is %s bytes." % (n, env.get("aspects"), env.get("per_host"), env.get("seed"),
                              env.get("cf2_source_bytes"), env.get("output_bytes")))
    w("")
    checks = []
    for name in ("check-jrsonnet.txt", "check-jsonnet.txt"):
        p = os.path.join(raw, name)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as f:
                checks.append(f.read().strip().splitlines()[-1])
    if checks:
        w("Same output: cf2 vs jrsonnet — %s; cf2 vs jsonnet — %s (`bench/compare.py`, "
          "compared as data)." % tuple((checks + ["not run"] * 2)[:2]))
        w("")

    # (a)
    w("### One host, whole process (`%s`)" % env.get("host1"))
    w("")
    w("hyperfine, no shell, 10 warm-ups. Wall time per process; CPU = user + system. "
      "cf2 is the binary to deploy (`scripts/build-static.sh`: %s); \"cf2 (cargo build)\" "
      "is `cargo build --release`, dynamically linked." % env.get("cf2_binary", "?"))
    w("")
    w("| tool | mean ± σ | min | CPU (mean) | max RSS | vs cf2 (mean) |")
    w("|---|---|---|---|---|---|")
    base = one.get("cf2")
    for tool in ("cf2", "cf2 (cargo build)", "jrsonnet", "jsonnet"):
        r = one.get(tool)
        if not r:
            continue
        m = mem_of(memory, tool, 1)
        w("| %s | %s | %s | %s | %s | %s |" % (
            tool, mean_sd(r), ms(r["min"]), cpu(r), mb(m["maxrss_kb"]) if m else "–",
            "%.1f×" % (r["mean"] / base["mean"]) if base else "–"))
    w("")

    # (b)
    def site_table(title, results, order, n_hosts, note=""):
        if not results:
            return
        w("### %s" % title)
        w("")
        if note:
            w(note)
            w("")
        w("| tool | mean ± σ | min | CPU (mean) | hosts/s (mean) | max RSS | jrsonnet ÷ tool (mean) |")
        w("|---|---|---|---|---|---|---|")
        ref = results.get("jrsonnet -m")
        for cmd in order:
            r = results.get(cmd)
            if not r:
                continue
            tool = cmd.replace(" -m", "")
            m = mem_of(memory, tool, n_hosts)
            w("| %s | %s | %s | %s | %.0f | %s | %s |" % (
                cmd, mean_sd(r), ms(r["min"]), cpu(r), n_hosts / r["mean"],
                mb(m["maxrss_kb"]) if m else "–",
                "%.2f×" % (ref["mean"] / r["mean"]) if ref else "–"))
        w("")

    order = ["cf2", "cf2 -j 1", "jrsonnet -m", "jsonnet -m"]
    site_table("Whole site, N = %d, outputs on disk" % n, big, order, n,
               "One process each: `cf2 compile hosts/*.cf2 --out-dir DIR --format json` "
               "(default -j = 2 cores) and `jrsonnet -m DIR site.jsonnet`. hyperfine, 1 warm-up, "
               "output directory removed before each run.")
    site_table("Whole site, N = %d, outputs on tmpfs" % n, big_tmp, order, n,
               "The same, writing to a RAM file system: compile time without the disk.")
    if n_js == n_small:
        site_table("Whole site, N = %d, outputs on disk (with C++ jsonnet)" % n_small, small,
                   order, n_small)
    else:
        site_table("Whole site, N = %d, outputs on disk" % n_small, load_hyperfine(raw, "site-small"),
                   order, n_small)
        site_table("Whole site, N = %d, outputs on disk (with C++ jsonnet)" % n_js,
                   load_hyperfine(raw, "site-jsonnet"), order, n_js)

    # (c)
    if memory:
        w("### Peak memory (max RSS, `/usr/bin/time`)")
        w("")
        sizes = sorted(set(int(r["hosts"]) for r in memory))
        w("| tool | " + " | ".join("N = %d" % s for s in sizes) + " | growth per host | output per host |")
        w("|---|" + "---|" * len(sizes) + "---|---|")
        for tool in ("cf2", "cf2 -j 1", "jrsonnet", "jsonnet"):
            cells, pts = [], []
            for s in sizes:
                m = mem_of(memory, tool, s)
                cells.append(mb(m["maxrss_kb"]) if m else "–")
                if m and s > 1:
                    pts.append((s, int(m["maxrss_kb"]), int(m["output_bytes"])))
            growth = outper = "–"
            if len(pts) >= 2:
                (s0, k0, _), (s1, k1, b1) = pts[0], pts[-1]
                growth = "%.1f KB" % ((k1 - k0) * 1.024 / (s1 - s0))
                outper = "%.1f KB" % (b1 / 1000.0 / s1)
            w("| %s | %s | %s | %s |" % (tool, " | ".join(cells), growth, outper))
        w("")

    # (d)
    if crit:
        w("### Micro-benchmarks (criterion, `cargo bench -p cf2-bench`)")
        w("")
        w("| benchmark | time (low / estimate / high) | throughput |")
        w("|---|---|---|")
        for name, r in crit.items():
            t = " / ".join(ms(x) if x >= 1e-3 else "%.1f µs" % (x * 1e6) for x in r["time"])
            th = "%.1f MB/s" % r["thrpt"][1] if "thrpt" in r else ""
            w("| %s | %s | %s |" % (name, t, th))
        w("")

    # verdicts
    w("### Against the targets")
    w("")
    if base:
        ok = base["mean"] < 2e-3
        w("- One host in under 2 ms of wall time: **%s** — mean %s, min %s." % (
            "met" if ok else "missed", ms(base["mean"]), ms(base["min"])))
        dyn = one.get("cf2 (cargo build)")
        if dyn:
            w("  (`cargo build --release`, dynamically linked: mean %s, min %s.)" % (
                ms(dyn["mean"]), ms(dyn["min"])))
    for label, results in (("outputs on disk", big), ("outputs on tmpfs", big_tmp)):
        c, j = results.get("cf2"), results.get("jrsonnet -m")
        if c and j:
            ratio = j["mean"] / c["mean"]
            cpu_ratio = (j["user"] + j["system"]) / (c["user"] + c["system"])
            w("- %d hosts at least 10× faster than jrsonnet (%s): **%s** — %.2f× by wall time "
              "(%s vs %s), %.2f× by CPU time." % (
                  n, label, "met" if ratio >= 10 else "missed", ratio, ms(c["mean"]),
                  ms(j["mean"]), cpu_ratio))
    pts = [(int(r["hosts"]), int(r["maxrss_kb"]), int(r["output_bytes"]))
           for r in memory if r["tool"] == "cf2" and int(r["hosts"]) > 1]
    if len(pts) >= 2:
        (s0, k0, _), (s1, k1, b1) = pts[0], pts[-1]
        per_host = (k1 - k0) * 1024.0 / (s1 - s0)
        flat = per_host < 1024
        w("- Memory flat in the number of hosts: **%s** — max RSS %s at N = %d, %s at N = %d: "
          "%.1f KB more per host (a host's output is %.1f KB and is not kept after it is written)."
          % ("met" if flat else "missed", mb(k0), s0, mb(k1), s1, per_host / 1000.0,
             b1 / 1000.0 / s1))
    w("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
