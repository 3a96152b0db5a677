#!/usr/bin/env python3
"""Generate a synthetic CF2 site and the same site in Jsonnet.

    gen_site.py OUT_DIR [--hosts N] [--aspects A] [--per-host K] [--seed S]

writes

    OUT_DIR/cf2/base.cf2              imported by every host
    OUT_DIR/cf2/aspects/aNN.cf2       A aspects; each host imports K of them
    OUT_DIR/cf2/hosts/hostNNNNN.cf2   N hosts
    OUT_DIR/jsonnet/base.libsonnet    the same, as functions of the host parameters
    OUT_DIR/jsonnet/aspects/aNN.libsonnet
    OUT_DIR/jsonnet/hosts/hostNNNNN.jsonnet
    OUT_DIR/jsonnet/site.jsonnet      {"hostNNNNN.json": <host>, ...} for `jsonnet -m DIR`
    OUT_DIR/site.json                 what was generated (counts, sizes)

A host sets its parameters (Host, Role, Env, Memory, Cpus, Disks, Location), imports
`base` and K aspects, and adds a few resources of its own. The base and the aspects merge
into shared blocks (`Packages ~> {...}`, `Services.svc => {...}`, `Users`, `Firewall`,
`Monitoring.Checks`, `Tuning`), add to sums (`DiskGB ~(sum)>`, `MemReservedMB ~(sum)>`),
raise maxima (`KernelMin ~(max)>`, `OsVersion ~(max)>`), read the host's parameters
(`$Memory`, `$Cpus`, `"${Host}"`, `$Fqdn`) and branch on them, both as values
(`if (...) then a else b`) and as inline statements that add resources.

The Jsonnet site computes the same configuration: every aspect is a function of the host
parameters returning a mixin (`Packages+: {...}`, `DiskGB+: 20`,
`KernelMin: std.max(super.KernelMin, 510)`), and a host folds them with `+` over its
parameters. `compare.py` checks that both give the same JSON.

Output is a pure function of the arguments (the seed drives one `random.Random`).
"""

import argparse
import json
import os
import random
import shutil
import sys

ROLES = ["web", "db", "cache", "batch", "proxy"]
MEMORY = [8, 16, 32, 64, 128]
CPUS = [2, 4, 8, 16, 32]
DISKS = ["sda", "sdb", "sdc", "sdd"]
KERNELS = [415, 510, 515, 601, 606]
OS_VERSIONS = [20, 22, 24]
# Packages several aspects share; every aspect that wants one asks for the same version,
# so unordered definitions agree (CF2: equal unordered values are fine).
COMMON = [
    ("python3", "3.11.2"), ("curl", "7.88.1"), ("openssl", "3.0.11"), ("rsyslog", "8.2302"),
    ("jq", "1.6"), ("git", "2.39.2"), ("logrotate", "3.21.0"), ("sudo", "1.9.13"),
    ("nftables", "1.0.6"), ("prometheus_node_exporter", "1.5.0"),
]
WORDS = ["core", "tools", "agent", "libs", "cli", "daemon", "plugins", "utils", "docs", "extra"]


# --- helpers ---------------------------------------------------------------------------

def jstr(s):
    """A Jsonnet string literal (JSON's escaping is valid Jsonnet)."""
    return json.dumps(s)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return len(text.encode("utf-8"))


# --- the model -------------------------------------------------------------------------

def make_aspect(rng, j):
    """The data of aspect j, from which both languages are written."""
    name = "a%02d" % j
    port = 8000 + j
    own = [("pkg_%s_%s" % (name, w), "%d.%d.%d" % (rng.randint(1, 9), rng.randint(0, 30), rng.randint(0, 9)))
           for w in rng.sample(WORDS, rng.randint(2, 4))]
    common = rng.sample(COMMON, rng.randint(1, 3))
    return {
        "name": name,
        "port": port,
        "packages": own + common,
        "svc": "svc_" + name,
        "uid": 2000 + j,
        "disk": rng.randint(5, 50),
        "mem": rng.choice([128, 256, 512, 1024]),
        "kernel": rng.choice(KERNELS),
        "os": rng.choice(OS_VERSIONS),
        "role": rng.choice(ROLES),          # the role this aspect opens its port for
        "big_mem": rng.choice([32, 64]),    # hosts with at least this much get a big heap
        "hugepages": rng.random() < 0.5,    # adds Tuning on hosts with >= 64 GB
    }


def make_host(rng, i, width, n_aspects, per_host):
    ndisks = rng.randint(1, 4)
    return {
        "name": "host%0*d" % (width, i),
        "role": rng.choice(ROLES),
        "env": "prod" if rng.random() < 0.7 else "staging",
        "memory": rng.choice(MEMORY),
        "cpus": rng.choice(CPUS),
        "disks": DISKS[:ndisks],
        "location": "rack%02d" % rng.randint(1, 40),
        "aspects": sorted(rng.sample(range(n_aspects), per_host)),
        "disk_gb": 100 * ndisks,
        "agent": "1.%d" % rng.randint(0, 9),
        "local_ntp": rng.random() < 0.2,    # overrides the base's Ntp.Servers
    }


# --- CF2 ---------------------------------------------------------------------------------

CF2_BASE = """\
// The base every host imports. `$X` here is the host's resource X (inline import at top level).
Domain => 'example.org'
Fqdn => "${Host}.${Domain}"
Packages ~> {
  openssh_server => '9.2p1'
  chrony => '4.3'
  python3 => '3.11.2'
  curl => '7.88.1'
}
Services.sshd => {
  Port => 22
  Listen => "${Host}:22"
  Enabled => true
}
Firewall.allow_22 => 'tcp/22'
Users.root => { Uid => 0, Home => '/root' }
Tuning.swappiness => if ($Memory >= 64) then 1 else 10
Monitoring.Contact => "ops@${Domain}"
Monitoring.Checks.ping => { Url => "icmp://${Fqdn}", Interval => 60 }
Ntp.Servers => [ntp1, ntp2]
DiskGB ~(sum)> 8
MemReservedMB ~(sum)> 512
KernelMin ~(max)> 419
OsVersion ~(max)> 20
Swap => if ($Memory >= 32) then 8 else 4
LogLevel => if ($Env == prod) then 'warning' else 'debug'
DataDisks => $Disks
"""


def cf2_aspect(a):
    p = a["port"]
    pk = "\n".join("  %s => '%s'" % kv for kv in a["packages"])
    out = """\
// Aspect {name}: merges into shared blocks, adds to sums and maxima, reads host parameters.
Packages ~> {{
{pk}
}}
Services.{svc} => {{
  Port => {p}
  Listen => "${{Host}}:{p}"
  Workers => if ($Cpus >= 8) then $Cpus * 2 else 4
  HeapMB => if ($Memory >= {big}) then $Memory * 64 else 1024
  Enabled => true
}}
Users.{svc} => {{ Uid => {uid}, Home => '/srv/{svc}' }}
Monitoring.Checks.{svc} => {{
  Url => "http://${{Fqdn}}:{p}/health"
  Interval => if ($Env == prod) then 30 else 300
}}
DiskGB ~(sum)> {disk}
MemReservedMB ~(sum)> {mem}
KernelMin ~(max)> {kernel}
OsVersion ~(max)> {os}
if ($Role == {role}) then {{
  Firewall ~> {{ allow_{p} => 'tcp/{p}' }}
}} else {{
  Firewall ~> {{ internal_{p} => '10.0.0.0/8:{p}' }}
}}
""".format(name=a["name"], pk=pk, svc=a["svc"], p=p, big=a["big_mem"], uid=a["uid"],
           disk=a["disk"], mem=a["mem"], kernel=a["kernel"], os=a["os"], role=a["role"])
    if a["hugepages"]:
        out += "if ($Memory >= 64) then {{ Tuning ~> {{ hugepages_{n} => $Memory * 4 }} }}\n".format(n=a["name"])
    return out


def cf2_host(h):
    lines = [
        "// Host %s" % h["name"],
        "Host => %s" % h["name"],
        "Role => %s" % h["role"],
        "Env => %s" % h["env"],
        "Memory => %d" % h["memory"],
        "Cpus => %d" % h["cpus"],
        "Disks => [%s]" % ", ".join(h["disks"]),
        "Location => '%s'" % h["location"],
        "import('../base')",
    ]
    lines += ["import('../aspects/a%02d')" % j for j in h["aspects"]]
    lines += [
        "DiskGB ~(sum)> %d" % h["disk_gb"],
        "Packages.host_agent => '%s'" % h["agent"],
    ]
    if h["local_ntp"]:
        lines.append("Ntp.Servers => [\"ntp.${Location}.example.org\"]")
    return "\n".join(lines) + "\n"


# --- Jsonnet -------------------------------------------------------------------------------

JSONNET_BASE = """\
// The base every host folds in: a mixin over the host parameters h.
function(h) {
  Domain: 'example.org',
  Fqdn: h.Host + '.' + self.Domain,
  Packages+: {
    openssh_server: '9.2p1',
    chrony: '4.3',
    python3: '3.11.2',
    curl: '7.88.1',
  },
  Services+: { sshd: { Port: 22, Listen: h.Host + ':22', Enabled: true } },
  Firewall+: { allow_22: 'tcp/22' },
  Users+: { root: { Uid: 0, Home: '/root' } },
  Tuning+: { swappiness: if h.Memory >= 64 then 1 else 10 },
  Monitoring+: {
    Contact: 'ops@' + $.Domain,
    Checks+: { ping: { Url: 'icmp://' + $.Fqdn, Interval: 60 } },
  },
  Ntp+: { Servers: ['ntp1', 'ntp2'] },
  DiskGB+: 8,
  MemReservedMB+: 512,
  KernelMin: 419,
  OsVersion: 20,
  Swap: if h.Memory >= 32 then 8 else 4,
  LogLevel: if h.Env == 'prod' then 'warning' else 'debug',
  DataDisks: h.Disks,
}
"""


def jsonnet_aspect(a):
    p = a["port"]
    pk = "\n".join("    %s: %s," % (k, jstr(v)) for k, v in a["packages"])
    out = """\
// Aspect {name}: a mixin over the host parameters h.
function(h) {{
  Packages+: {{
{pk}
  }},
  Services+: {{
    {svc}: {{
      Port: {p},
      Listen: h.Host + ':{p}',
      Workers: if h.Cpus >= 8 then h.Cpus * 2 else 4,
      HeapMB: if h.Memory >= {big} then h.Memory * 64 else 1024,
      Enabled: true,
    }},
  }},
  Users+: {{ {svc}: {{ Uid: {uid}, Home: '/srv/{svc}' }} }},
  Monitoring+: {{
    Checks+: {{
      {svc}: {{
        Url: 'http://' + $.Fqdn + ':{p}/health',
        Interval: if h.Env == 'prod' then 30 else 300,
      }},
    }},
  }},
  DiskGB+: {disk},
  MemReservedMB+: {mem},
  KernelMin: std.max(super.KernelMin, {kernel}),
  OsVersion: std.max(super.OsVersion, {os}),
  Firewall+: if h.Role == '{role}'
    then {{ allow_{p}: 'tcp/{p}' }}
    else {{ internal_{p}: '10.0.0.0/8:{p}' }},
""".format(name=a["name"], pk=pk, svc=a["svc"], p=p, big=a["big_mem"], uid=a["uid"],
           disk=a["disk"], mem=a["mem"], kernel=a["kernel"], os=a["os"], role=a["role"])
    if a["hugepages"]:
        out += "  Tuning+: if h.Memory >= 64 then {{ hugepages_{n}: h.Memory * 4 }} else {{}},\n".format(n=a["name"])
    out += "}\n"
    return out


def jsonnet_host(h):
    aspects = ",\n".join("  import '../aspects/a%02d.libsonnet'" % j for j in h["aspects"])
    own = [
        "  DiskGB+: %d," % h["disk_gb"],
        "  Packages+: { host_agent: %s }," % jstr(h["agent"]),
    ]
    if h["local_ntp"]:
        own.append("  Ntp+: { Servers: ['ntp.' + params.Location + '.example.org'] },")
    return """\
// Host {name}
local params = {{
  Host: {name_s},
  Role: {role},
  Env: {env},
  Memory: {memory},
  Cpus: {cpus},
  Disks: {disks},
  Location: {location},
}};
local parts = [
  import '../base.libsonnet',
{aspects}
];
std.foldl(function(acc, part) acc + part(params), parts, params) + {{
{own}
}}
""".format(name=h["name"], name_s=jstr(h["name"]), role=jstr(h["role"]), env=jstr(h["env"]),
           memory=h["memory"], cpus=h["cpus"], disks=json.dumps(h["disks"]),
           location=jstr(h["location"]), aspects=aspects, own="\n".join(own))


# --- main ----------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--hosts", type=int, default=10000, help="number of hosts N (default 10000)")
    ap.add_argument("--aspects", type=int, default=20, help="number of aspect files A (default 20)")
    ap.add_argument("--per-host", type=int, default=4, help="aspects imported by each host K (default 4)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = ap.parse_args(argv)
    if not 0 <= args.per_host <= args.aspects:
        ap.error("--per-host must be between 0 and --aspects")
    if args.aspects > 100:
        ap.error("--aspects is at most 100 (aspect names are aNN)")
    if args.hosts < 1:
        ap.error("--hosts must be at least 1")

    rng = random.Random(args.seed)
    aspects = [make_aspect(rng, j) for j in range(args.aspects)]
    width = max(5, len(str(args.hosts)))
    hosts = [make_host(rng, i, width, args.aspects, args.per_host) for i in range(1, args.hosts + 1)]

    out = args.out_dir
    for sub in ("cf2", "jsonnet"):
        if os.path.isdir(os.path.join(out, sub)):
            shutil.rmtree(os.path.join(out, sub))
    size = {"cf2": 0, "jsonnet": 0}
    size["cf2"] += write(os.path.join(out, "cf2", "base.cf2"), CF2_BASE)
    size["jsonnet"] += write(os.path.join(out, "jsonnet", "base.libsonnet"), JSONNET_BASE)
    for a in aspects:
        size["cf2"] += write(os.path.join(out, "cf2", "aspects", a["name"] + ".cf2"), cf2_aspect(a))
        size["jsonnet"] += write(os.path.join(out, "jsonnet", "aspects", a["name"] + ".libsonnet"),
                                 jsonnet_aspect(a))
    site = ["// The whole site: one output file per host (`jsonnet -m DIR site.jsonnet`).", "{"]
    for h in hosts:
        size["cf2"] += write(os.path.join(out, "cf2", "hosts", h["name"] + ".cf2"), cf2_host(h))
        size["jsonnet"] += write(os.path.join(out, "jsonnet", "hosts", h["name"] + ".jsonnet"),
                                 jsonnet_host(h))
        site.append("  %s: import 'hosts/%s.jsonnet'," % (jstr(h["name"] + ".json"), h["name"]))
    site.append("}")
    size["jsonnet"] += write(os.path.join(out, "jsonnet", "site.jsonnet"), "\n".join(site) + "\n")
    info = {
        "hosts": args.hosts, "aspects": args.aspects, "per_host": args.per_host, "seed": args.seed,
        "first_host": hosts[0]["name"], "source_bytes": size,
    }
    write(os.path.join(out, "site.json"), json.dumps(info, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
