#!/usr/bin/env python3
"""Summary of a task log written with STARFRONT_TASK_LOG=FILE (one
factorisation by the StarPU executor; run with STARPU_PROFILING=1 so that the
log has start and end times).

Prints: the makespan (first start to last end, ms); per task kind and worker
kind, the tasks, their summed run time and flops; per worker, its busy time;
and the critical chain: from the task that ended last, back through the
predecessor that ended last, each with its worker kind, start, end, run time
and the wait between its last predecessor's end and its start (scheduling,
transfers, or a busy worker). Dependencies are rebuilt as StarPU derives them
from the accesses in submission order (sequential consistency: a read after
the last write; a write after the last write and every read since;
RW|COMMUTE accesses of one handle are unordered among themselves).

With --gpu (logs that have the host_begin_s .. gpu_end_s columns): per CUDA
worker, its tasks in the order its stream ran them, split into GPU time (from
the stream reaching a task's first queued work to its last: gpu_begin_s to
gpu_end_s), the time the stream waited between one task's end and the next
one's begin, and the host time spent in the codelet (host_begin_s to
host_end_s: queueing, plus any synchronous wait a task makes, e.g. a tiled
potrf's pivot test);
then the same per power-of-two bin of k (front tasks, "(m x k)" in the name):
whether the stream is bound by its kernels or by the host that feeds it.

With --fit: the subtree tasks' run times fitted (least squares) to
a * flops + b * fronts (the front count is read from the task name), which
says whether the CPU subtree kernel is paying per flop or per front.

Usage: task_log_summary.py LOG [--chain N] [--fit] [--gpu]   (N: chain tasks shown, default 40)
"""
import argparse
import collections
import csv
import re
import sys


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["task"] = int(r["task"])
        r["worker"] = int(r["worker"])
        for k in ("flops", "start_s", "end_s", "done_s", "host_begin_s", "host_end_s", "gpu_begin_s", "gpu_end_s"):
            r[k] = float(r[k]) if r.get(k) not in (None, "") else -1.0
        r["acc"] = [(int(a.split(":")[0]), a.split(":", 1)[1]) for a in r["accesses"].split(";") if a]
    return rows


def dependencies(rows):
    """Predecessors of each task (indices), as StarPU orders the accesses."""
    last_writer = {}                            # handle -> task
    readers = collections.defaultdict(list)     # handle -> tasks reading since the last write
    commuters = collections.defaultdict(list)   # handle -> the current RW|COMMUTE group
    group_base = {}                             # handle -> what that group waits for
    preds = [set() for _ in rows]
    for r in rows:
        t = r["task"]
        for h, mode in r["acc"]:
            if mode == "RW|COMMUTE":
                if not commuters[h]:
                    base = set(readers[h])
                    if h in last_writer:
                        base.add(last_writer[h])
                    group_base[h] = base
                    readers[h] = []
                preds[t] |= group_base[h]
                commuters[h].append(t)
                continue
            before = set(commuters[h]) if commuters[h] else ({last_writer[h]} if h in last_writer else set())
            preds[t] |= before
            if mode == "R":
                readers[h].append(t)
            else:  # W, RW: also after every read since the last write
                preds[t] |= set(readers[h])
                readers[h] = []
                commuters[h] = []
                last_writer[h] = t
            if mode == "R" and commuters[h]:
                # a read closes the commute group: later writers wait for it
                last_writer[h] = commuters[h][-1]
                for c in commuters[h][:-1]:
                    readers[h].append(c)
                commuters[h] = []
        preds[t].discard(t)
    return preds


def subtree_fit(rows):
    """Least-squares fit of subtree run times (ms) to a * MFLOP + b * fronts;
    returns (a, b, rms relative error, tasks, fronts, MFLOP) or None."""
    pts = []
    for r in rows:
        m = re.search(r"\((\d+) fronts\)", r["name"])
        if r["kind"] == "subtree" and m:
            pts.append((r["flops"] / 1e6, int(m.group(1)), 1e3 * (r["end_s"] - r["start_s"])))
    if len(pts) < 2:
        return None
    sff = sum(f * f for f, _, _ in pts)
    snn = sum(n * n for _, n, _ in pts)
    sfn = sum(f * n for f, n, _ in pts)
    sft = sum(f * t for f, _, t in pts)
    snt = sum(n * t for _, n, t in pts)
    det = sff * snn - sfn * sfn
    if det == 0:
        return None
    a = (sft * snn - snt * sfn) / det
    b = (snt * sff - sft * sfn) / det
    rel = [((t - a * f - b * n) / t) ** 2 for f, n, t in pts if t > 0]
    err = (sum(rel) / len(rel)) ** 0.5 if rel else float("nan")
    return a, b, err, len(pts), sum(n for _, n, _ in pts), sum(f for f, _, _ in pts)


def gpu_split(rows):
    """Prints, per CUDA worker and per bin of k, GPU time, stream waits and
    host queueing time of the CUDA tasks (see --gpu)."""
    cuda = [r for r in rows if r["worker_kind"] == "cuda" and r["gpu_begin_s"] >= 0 and r["gpu_end_s"] >= 0]
    if not cuda:
        print("\n--gpu: no CUDA task with GPU stamps in this log")
        return
    print("\n| CUDA worker | tasks | GPU ms | stream waits ms | host queueing ms | span ms |")
    print("|---|---|---|---|---|---|")
    wait_of = {}
    for w in sorted({r["worker"] for r in cuda}):
        ts = sorted((r for r in cuda if r["worker"] == w), key=lambda r: r["gpu_begin_s"])
        gpu = sum(r["gpu_end_s"] - r["gpu_begin_s"] for r in ts)
        waits = 0.0
        prev = None
        for r in ts:
            gap = max(0.0, r["gpu_begin_s"] - prev) if prev is not None else 0.0
            wait_of[r["task"]] = gap
            waits += gap
            prev = r["gpu_end_s"] if prev is None else max(prev, r["gpu_end_s"])
        host = sum(r["host_end_s"] - r["host_begin_s"] for r in ts)
        span = ts[-1]["gpu_end_s"] - ts[0]["gpu_begin_s"]
        print(f"| {w} | {len(ts)} | {1e3 * gpu:.2f} | {1e3 * waits:.2f} | {1e3 * host:.2f} | {1e3 * span:.2f} |")
    bins = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0])
    for r in cuda:
        m = re.search(r"\((\d+)x(\d+)\)", r["name"])
        if not m:
            continue
        k = int(m.group(2))
        if k < 1:
            continue
        b = bins[k.bit_length() - 1]
        b[0] += 1
        b[1] += int(m.group(1))
        b[2] += r["flops"]
        b[3] += r["gpu_end_s"] - r["gpu_begin_s"]
        b[4] += wait_of.get(r["task"], 0.0)
        b[5] += r["host_end_s"] - r["host_begin_s"]
    print("\n| k | fronts | mean m | GFLOP | GPU us a front | wait before it, us | host queueing us a front | "
          "GPU TFLOP/s |")
    print("|---|---|---|---|---|---|---|---|")
    for e in sorted(bins):
        n, msum, fl, g, wt, h = bins[e]
        print(f"| {1 << e}-{(2 << e) - 1} | {n} | {msum / n:.0f} | {fl / 1e9:.2f} | {1e6 * g / n:.1f} | "
              f"{1e6 * wt / n:.1f} | {1e6 * h / n:.1f} | {fl / g / 1e12 if g > 0 else 0:.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--chain", type=int, default=40)
    ap.add_argument("--fit", action="store_true", help="fit subtree times to flops and front count")
    ap.add_argument("--gpu", action="store_true", help="CUDA tasks: GPU time, stream waits, host queueing")
    a = ap.parse_args()
    rows = read(a.log)
    if not rows:
        sys.exit("empty log")
    timed = all(r["start_s"] >= 0 for r in rows)
    if not timed:
        sys.exit("no start/end times in the log: run with STARPU_PROFILING=1")
    if a.fit:
        fit = subtree_fit(rows)
        if fit is None:
            print("subtree fit: fewer than two subtree tasks with a front count")
        else:
            ka, kb, err, ntask, nfront, mflop = fit
            print(f"subtree fit over {ntask} tasks ({nfront} fronts, {mflop / 1e3:.3f} GFLOP): "
                  f"{1e3 * kb:.1f} us per front + {1 / ka if ka > 0 else float('inf'):.1f} GFLOP/s "
                  f"(rms relative error {err:.2f})")
    t0 = min(r["start_s"] for r in rows)
    t1 = max(r["end_s"] for r in rows)
    print(f"tasks {len(rows)}, makespan {1e3 * (t1 - t0):.2f} ms (first start to last end)")
    print("\n| kind | worker | tasks | run ms (sum) | GFLOP | GFLOP/s |")
    print("|---|---|---|---|---|---|")
    agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for r in rows:
        g = agg[(r["kind"], r["worker_kind"])]
        g[0] += 1
        g[1] += r["end_s"] - r["start_s"]
        g[2] += r["flops"]
    for (k, w), (n, s, fl) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        print(f"| {k} | {w} | {n} | {1e3 * s:.2f} | {fl / 1e9:.3f} | {fl / 1e9 / s if s > 0 else 0:.1f} |")
    busy = collections.defaultdict(float)
    kind = {}
    for r in rows:
        busy[r["worker"]] += r["end_s"] - r["start_s"]
        kind[r["worker"]] = r["worker_kind"]
    print("\nworker busy (ms, share of the makespan): " + ", ".join(
        f"{w}:{kind[w]} {1e3 * b:.1f} ({100 * b / (t1 - t0):.0f}%)" for w, b in sorted(busy.items())))
    # When each CPU worker ran out of work: a wide spread is load imbalance
    # (session 36: dmda's queues, filled at once from flop estimates).
    last = collections.defaultdict(float)
    for r in rows:
        if r["worker_kind"] == "cpu":
            last[r["worker"]] = max(last[r["worker"]], r["end_s"])
    if last:
        ends = sorted(1e3 * (e - t0) for e in last.values())
        print(f"CPU workers' last task ends (ms from the first start): first {ends[0]:.1f}, "
              f"median {ends[len(ends) // 2]:.1f}, last {ends[-1]:.1f} (spread {ends[-1] - ends[0]:.1f})")
    if a.gpu:
        gpu_split(rows)
    preds = dependencies(rows)
    t = max(rows, key=lambda r: r["end_s"])["task"]
    chain = []
    while t is not None:
        chain.append(t)
        p = preds[t]
        t = max(p, key=lambda q: rows[q]["end_s"]) if p else None
    chain.reverse()
    run = sum(rows[c]["end_s"] - rows[c]["start_s"] for c in chain)
    wait = (t1 - t0) - run
    print(f"\ncritical chain: {len(chain)} tasks, run {1e3 * run:.2f} ms, waits {1e3 * wait:.2f} ms "
          f"(makespan minus run)")
    by_kind = collections.defaultdict(lambda: [0, 0.0])
    for c in chain:
        g = by_kind[(rows[c]["kind"], rows[c]["worker_kind"])]
        g[0] += 1
        g[1] += rows[c]["end_s"] - rows[c]["start_s"]
    print("  by kind and worker: " + ", ".join(f"{k}/{w} {n} tasks {1e3 * s:.2f} ms"
                                             for (k, w), (n, s) in sorted(by_kind.items(), key=lambda kv: -kv[1][1])))
    print("\n| # | task | worker | start ms | end ms | run ms | wait ms | GFLOP |")
    print("|---|---|---|---|---|---|---|---|")
    shown = chain if len(chain) <= a.chain else chain[-a.chain:]
    for c in shown:
        r = rows[c]
        ready = max((rows[q]["end_s"] for q in preds[c]), default=t0)
        print(f"| {c} | {r['name']} | {r['worker']}:{r['worker_kind']} | {1e3 * (r['start_s'] - t0):.2f} | "
              f"{1e3 * (r['end_s'] - t0):.2f} | {1e3 * (r['end_s'] - r['start_s']):.3f} | "
              f"{1e3 * (r['start_s'] - ready):.3f} | {r['flops'] / 1e9:.3f} |")


if __name__ == "__main__":
    main()
