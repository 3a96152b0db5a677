#!/usr/bin/env python3
"""Differential and permutation tests of mutations and priorities, on generated sites.

Two checks, each over a fixed range of seeds (so a failure is reproducible by its seed):

- **oracle**: a random site of up to six files importing each other, compiled by cf2 and
  by `oracle.py`, an independent model of priorities and folding. cf2 must give the
  model's configuration, keys in the same order (clarifications §7), or fail exactly when
  the model finds an error.
- **permutation**: a random site that also merges files as values (`S ~> import(f)`),
  literally (`S ~> { import(f) }`) and reads references, compiled once as written and then
  with the statements of every file shuffled four times. The output, or the set of errors
  (message up to the resource it names), must not change (reference §4.1: the order of
  definitions and imports is not significant).

Usage: run.py --cf2 BIN [--seeds N] [--keep DIR]. Exit status 1 on any difference; each
difference is printed with its seed, and its files are kept under DIR.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import Model  # noqa: E402

FILES = ["main", "a", "b", "c", "d"]
BIG_FILES = FILES + ["e"]


def gen_oracle_site(rnd, files):
    """Statements the oracle models: values, paths, `if` around statements and values."""
    imports = {f: [] for f in files}
    for i, f in enumerate(files):
        for g in files[i + 1:]:
            if rnd.random() < 0.4:
                imports[f].append(g)
    stmts = {f: [] for f in files}
    names = ["X", "Y", "S.x", "S.y", "S.T.z"]
    ops = ["=>", "=>", "~>", "~(sum)>", "~(sum)>", "~(max)>", "~(min)>", "~(default)>", "~(final)>"]
    most = 6 if len(files) > len(FILES) else 3
    for f in files:
        for _ in range(rnd.randint(0, most)):
            n = rnd.choice(names + ["S"])
            op = rnd.choice(ops)
            if n == "S":
                if op in ("~(sum)>", "~(max)>"):
                    op = "~>"
                members = rnd.sample(["x", "y", "w"], rnd.randint(1, 2))
                v = "{ " + ", ".join(
                    f'{k} {rnd.choice(["=>", "~(sum)>", "=>", "~(final)>", "~(max)>"])} {rnd.choice(["1", "2", "3", "?"])}'
                    for k in members
                ) + " }"
            else:
                v = str(rnd.randint(1, 4)) if rnd.random() < 0.9 else "?"
                if op == "~>" and rnd.random() < 0.7:
                    op = "=>"
            st = f"{n} {op} {v}"
            r = rnd.random()
            if r < 0.15:
                st = f"if (true) then {{ {st} }}"
            elif r < 0.22:
                st = f"if (false) then {{ {st} }}"
            elif r < 0.3 and v != "?" and not v.startswith("{"):
                st = f'{n} {op} if ({rnd.choice(["true", "false"])}) then {v}'
            stmts[f].append(st)
        for g in imports[f]:
            stmts[f].append(f"import({g})")
    return stmts


def gen_value(rnd, depth=0):
    r = rnd.random()
    if r < 0.5:
        return str(rnd.randint(1, 3))
    if r < 0.6:
        return "?"
    if r < 0.7:
        return "$R"
    if r < 0.8 and depth < 2:
        members = rnd.sample(["x", "y", "w"], rnd.randint(1, 2))
        return "{ " + ", ".join(
            f'{k} {rnd.choice(["=>", "~>", "~(sum)>"])} {gen_value(rnd, depth + 1)}' for k in members
        ) + " }"
    return str(rnd.randint(1, 3))


def gen_permutation_site(rnd):
    """Imports inline, into blocks and as values, with references: beyond the oracle."""
    stmts = {f: [] for f in BIG_FILES}
    names = ["X", "S", "S.x", "S.y", "S.T.z", "S.T"]
    ops = ["=>", "=>", "~>", "~>", "~(sum)>", "~(max)>", "~(default)>", "~(final)>"]
    for i, f in enumerate(BIG_FILES):
        later = BIG_FILES[i + 1:]
        for _ in range(rnd.randint(0, 4)):
            r = rnd.random()
            if r < 0.2 and later:
                stmts[f].append(f"import({rnd.choice(later)})")
            elif r < 0.3 and later:
                stmts[f].append(f'S {rnd.choice(["=>", "~>"])} {{ import({rnd.choice(later)}) }}')
            elif r < 0.35 and later:
                stmts[f].append(f"S ~> import({rnd.choice(later)})")
            elif r < 0.4:
                stmts[f].append(f"if (true) then {{ {rnd.choice(names)} {rnd.choice(ops)} {gen_value(rnd)} }}")
            else:
                stmts[f].append(f"{rnd.choice(names)} {rnd.choice(ops)} {gen_value(rnd)}")
        if f == "main":
            stmts[f].append("R => { x => 1 }")
    return stmts


def compile_site(cf2, stmts, d):
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    for f, lines in stmts.items():
        with open(os.path.join(d, f + ".cf2"), "w") as out:
            out.write("\n".join(lines) + "\n")
    r = subprocess.run([cf2, "compile", "main.cf2", "-o", "-.json"], cwd=d,
                       capture_output=True, text=True, timeout=60)
    if r.returncode not in (0, 1) or "panicked" in r.stderr:
        raise RuntimeError(f"cf2 crashed (exit {r.returncode}) in {d}:\n{r.stderr[:2000]}")
    return r


def outcome(r):
    """The output, or the set of errors up to the resource each names."""
    if r.returncode != 0:
        messages = set()
        for m in re.findall(r"error: (.*)$", r.stderr, re.M):
            named = re.match(r"^(.*?`[^`]*`)", m)
            messages.add(named.group(1) if named else m)
        return ("error", tuple(sorted(messages)))
    return ("ok", json.dumps(json.loads(r.stdout), sort_keys=True))


def check_oracle(cf2, seed, files, work):
    stmts = gen_oracle_site(random.Random(seed), files)
    expected, errors = Model(stmts).result()
    d = os.path.join(work, f"oracle-{len(files)}-{seed}")
    r = compile_site(cf2, stmts, d)
    if r.returncode == 0:
        got = json.loads(r.stdout)
        # Same keys in the same order (json.dumps keeps insertion order).
        if errors or json.dumps(got) != json.dumps(expected):
            return f"oracle {expected} errors {errors}\n  cf2 {got}", d
    elif not errors:
        first = r.stderr.split("\n")[0]
        return f"oracle {expected}\n  cf2 failed: {first}", d
    shutil.rmtree(d)
    return None, d


def check_permutations(cf2, seed, work):
    rnd = random.Random(seed)
    stmts = gen_permutation_site(rnd)
    d = os.path.join(work, f"perm-{seed}")
    base = outcome(compile_site(cf2, stmts, d))
    for k in range(4):
        shuffled = {f: rnd.sample(lines, len(lines)) for f, lines in stmts.items()}
        dk = f"{d}-shuffled{k}"
        got = outcome(compile_site(cf2, shuffled, dk))
        if got != base:
            return f"as written: {base}\n  shuffled ({dk}): {got}", d
        shutil.rmtree(dk)
    shutil.rmtree(d)
    return None, d


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cf2", required=True)
    p.add_argument("--seeds", type=int, default=1000)
    p.add_argument("--keep", default=None, help="where to keep the sites that differ")
    args = p.parse_args()
    cf2 = os.path.abspath(args.cf2)
    work = args.keep or tempfile.mkdtemp(prefix="cf2-differential-")
    os.makedirs(work, exist_ok=True)
    failures = 0
    counts = {"oracle": 0, "permutation": 0}
    for seed in range(1, args.seeds + 1):
        checks = [
            ("oracle", lambda: check_oracle(cf2, seed, FILES, work)),
            ("oracle", lambda: check_oracle(cf2, seed, BIG_FILES, work)),
            ("permutation", lambda: check_permutations(cf2, seed, work)),
        ]
        for name, check in checks:
            diff, d = check()
            counts[name] += 1
            if diff:
                failures += 1
                print(f"DIFFERENCE ({name}, seed {seed}, files in {d}):\n  {diff}")
    print(f"differential: {counts['oracle']} sites against the oracle, "
          f"{counts['permutation']} sites shuffled 4 times: {failures} differences")
    if failures == 0 and args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
