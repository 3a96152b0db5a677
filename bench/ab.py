#!/usr/bin/env python3
"""Interleaved timing of whole processes, for A/B comparisons on a noisy machine.

    bench/ab.py RUNS 'CMD A' 'CMD B' ...

Runs every command RUNS times (after 5 unrecorded rounds), alternating their order each
round, so that a change in the machine's speed during the run touches all of them alike
(on the shared benchmark VM, the same binary's mean drifts by 30% within minutes; hyperfine
runs one command's runs back to back). A command may start with VAR=value settings.
Standard output goes to /dev/null. Prints, per command: the mean, median and 10th
percentile of the wall time, the mean CPU time (user + system) and the minor page faults
of one run. The first word of a command must be a path (no PATH search).
"""
import os
import shlex
import statistics
import sys
import time


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    runs = int(argv[1])
    cmds = []
    for text in argv[2:]:
        words = shlex.split(text)
        env = dict(os.environ)
        while words and "=" in words[0] and not words[0].startswith("/"):
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        cmds.append((text, words, env))
    devnull = os.open(os.devnull, os.O_WRONLY)
    results = {text: [] for text, _, _ in cmds}
    for i in range(runs + 5):
        for text, words, env in cmds if i % 2 == 0 else cmds[::-1]:
            start = time.perf_counter()
            pid = os.posix_spawn(words[0], words, env,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
            _, status, usage = os.wait4(pid, 0)
            wall = time.perf_counter() - start
            if os.waitstatus_to_exitcode(status) != 0:
                print("failed: %s" % text, file=sys.stderr)
                return 1
            if i >= 5:
                results[text].append((wall, usage.ru_utime + usage.ru_stime, usage.ru_minflt))
    for text, r in results.items():
        wall = sorted(x[0] for x in r)
        print("%7.3f ms mean %7.3f median %7.3f p10   cpu %7.3f ms   faults %5d   %s" % (
            statistics.mean(wall) * 1e3, wall[len(wall) // 2] * 1e3, wall[len(wall) // 10] * 1e3,
            statistics.mean(x[1] for x in r) * 1e3, r[0][2], text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
