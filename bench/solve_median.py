#!/usr/bin/env python3
"""Median over several bench/solve_table.sh outputs (rounds), per matrix,
method and nrhs; prints the before/after table of bench/README.md.
Usage: bench/solve_median.py ROUND.txt...  (columns: bench/solve_bench.cpp)"""
import statistics
import sys
from collections import defaultdict

COLS = ["solve", "refined", "core", "sweep", "graph", "colseq", "berr", "cholmod"]
rows = defaultdict(lambda: defaultdict(list))  # (tag, matrix, method, nrhs) -> column -> values
steps = {}
for path in sys.argv[1:]:
    for line in open(path):
        if not line.startswith(("after", "before")):
            continue
        tag, rest = line.split("|", 1)
        f = [x.strip() for x in rest.strip().strip("|").split("|")]
        key = (tag.strip(), f[0], f[1], int(f[4]))
        vals = [f[5], f[6].split()[0], f[7], f[8], f[9], f[10], f[11], f[12]]
        steps[key] = f[6].split()[1].strip("()")
        for c, v in zip(COLS, vals):
            rows[key][c].append(float(v))
med = {k: {c: statistics.median(v) for c, v in cols.items()} for k, cols in rows.items()}
print("| matrix | method | nrhs | before: solve ms | after: solve ms | after/before | after: core ms | after: sweep ms "
      "| backward_error() × nrhs ms | CHOLMOD ms | solve/CHOLMOD | core/CHOLMOD | sweep/CHOLMOD | refined ms (steps) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (tag, m, meth, r) in sorted(k for k in med if k[0] == "after"):
    a = med[(tag, m, meth, r)]
    b = med.get(("before", m, meth, r))
    core = a["core"] if a["core"] >= 0 else a["colseq"]  # LDLᵀ: the sweep is solve_in_place's
    sweep = a["sweep"] if a["sweep"] >= 0 else a["colseq"]
    bs = f"{b['solve']:.3f}" if b else "-"
    ratio = f"{a['solve'] / b['solve']:.2f}" if b else "-"
    print(f"| {m} | {meth} | {r} | {bs} | {a['solve']:.3f} | {ratio} | {core:.3f} | {sweep:.3f} | {a['berr']:.3f} "
          f"| {a['cholmod']:.3f} | {a['solve'] / a['cholmod']:.2f} | {core / a['cholmod']:.2f} "
          f"| {sweep / a['cholmod']:.2f} | {a['refined']:.3f} ({steps[(tag, m, meth, r)]}) |")
