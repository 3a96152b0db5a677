#!/usr/bin/env python3
"""Check that two directories of JSON outputs hold the same data.

    compare.py DIR_A DIR_B [--sample N] [--seed S]

Every `*.json` in DIR_A must exist in DIR_B with equal content, compared as data (object
key order is ignored: cf2 keeps first-appearance order, Jsonnet sorts). With --sample,
only N files chosen at random (deterministically) are compared. DIR_B must have no files
that DIR_A lacks. Exit status 0 when all agree, 1 otherwise.
"""

import argparse
import json
import os
import random
import sys


def diff(a, b, path="$"):
    """The first difference between two JSON values, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                return "%s.%s: only in the second" % (path, k)
            if k not in b:
                return "%s.%s: only in the first" % (path, k)
            d = diff(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return "%s: lists of %d and %d items" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    # bool is an int in Python: keep true apart from 1.
    if type(a) is bool or type(b) is bool:
        return None if a is b else "%s: %r != %r" % (path, a, b)
    if a != b:
        return "%s: %r != %r" % (path, a, b)
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir_a")
    ap.add_argument("dir_b")
    ap.add_argument("--sample", type=int, default=0, help="compare only N files (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    names_a = sorted(f for f in os.listdir(args.dir_a) if f.endswith(".json"))
    names_b = set(f for f in os.listdir(args.dir_b) if f.endswith(".json"))
    bad = 0
    missing = [n for n in names_a if n not in names_b]
    extra = sorted(names_b - set(names_a))
    for n in missing[:5]:
        print("%s: missing from %s" % (n, args.dir_b))
    for n in extra[:5]:
        print("%s: missing from %s" % (n, args.dir_a))
    bad += len(missing) + len(extra)
    names = [n for n in names_a if n in names_b]
    if args.sample and args.sample < len(names):
        names = sorted(random.Random(args.seed).sample(names, args.sample))
    for n in names:
        with open(os.path.join(args.dir_a, n), encoding="utf-8") as f:
            a = json.load(f)
        with open(os.path.join(args.dir_b, n), encoding="utf-8") as f:
            b = json.load(f)
        d = diff(a, b)
        if d:
            bad += 1
            if bad <= 5:
                print("%s: %s" % (n, d))
    print("compared %d outputs: %s" % (len(names), "all equal" if bad == 0 else "%d differ" % bad))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
