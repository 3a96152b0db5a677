#!/usr/bin/env python3
"""Regenerates fuzz/seeds/ from the conformance cases (../../shared/conformance/cases by
default, or the directory given as the first argument).

seeds/parse/<case>--<file>.cf2: every .cf2 file of every case, as is.
seeds/compile/<case>.bin: the case's main.cf2 and up to two other .cf2 files joined with
0xFF bytes (the `compile` target's file separator); imports of those files are renamed to
`a` and `b`, the names the target gives them.
"""
import pathlib
import re
import sys

here = pathlib.Path(__file__).resolve().parent
cases = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here.parent.parent / "shared/conformance/cases"
parse_dir = here / "seeds/parse"
compile_dir = here / "seeds/compile"
parse_dir.mkdir(parents=True, exist_ok=True)
compile_dir.mkdir(parents=True, exist_ok=True)

for case in sorted(p for p in cases.iterdir() if p.is_dir()):
    files = sorted(case.glob("*.cf2"))
    for f in files:
        (parse_dir / f"{case.name}--{f.name}").write_bytes(f.read_bytes())
    main = case / "main.cf2"
    if not main.exists():
        continue
    others = [f for f in files if f.name != "main.cf2"][:2]
    texts = [main.read_bytes()] + [f.read_bytes() for f in others]
    for new, f in zip(["a", "b"], others):
        pat = re.compile(rb"(?<![\w./-])(?:\./)?" + re.escape(f.stem.encode()) + rb"(?:\.cf2)?(?![\w.-])")
        texts = [pat.sub(new.encode(), t) for t in texts]
    (compile_dir / f"{case.name}.bin").write_bytes(b"\xff".join(texts))
