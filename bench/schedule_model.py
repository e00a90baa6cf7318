#!/usr/bin/env python3
"""A list-scheduling model of a GPU-graph factorisation (issue 5): replays the
task graph of `starfront plan --json` on a model machine and prints the
makespan under several task-priority schemes and what-if speed-ups, so that
an idea can be weighed before device time is spent on it. A model, not a
measurement: its figures are only as good as its costs.

Model (the executor under StarPU's prio policy, one GPU):
- one central ready list in priority order (higher first); idle workers
  take the first task they may run: `subtree` tasks on NCPU CPU workers,
  every other task on the GPU;
- a subtree task costs a·fronts + flops / r on one core, (a, r) fitted by
  least squares to the subtree tasks of a task log (STARFRONT_TASK_LOG);
- a GPU task costs its bin's warm serial GPU time a front (the bins of k of
  STARFRONT_GPU_FRONT_PROFILE=1, one stream: the difference between the
  profile of a process with --repeat R2 and one with --repeat R1, over
  R2 - R1 factorisations; --repeats R1 R2, default 2 12), found in a file
  holding both profiles, R1's first (run-relax.sh's `profile` step writes
  them so);
- the GPU runs at most STREAMS tasks at once and shares a capacity C among
  them (processor sharing: with j tasks each progresses at min(1, C/j) of
  its serial speed; C = 1 is a serial GPU). C is not measured: pick the one
  whose "as planned" makespan matches the measured factorisation.

Priority schemes: the plan's own (bottom levels at the CPU rates of
estimate_seconds), bottom levels of the model's costs, bottom levels of
GPU-aware estimates (GPU tasks at 50 µs + flops / 8 TFLOP/s, subtrees at
the model's costs), and the plan's order for
subtrees with the GPU tasks by the model's bottom levels. What-ifs scale the
GPU costs of one step of the profile (assembly, DPOTRF, TRSM, SYRK) or all.

--grid adds a table with the CPU subtrees and all GPU steps sped up together
(how far a faster CPU kernel goes, session 46); --flex-below F lets GPU front
tasks of fewer than F flops run on an idle CPU worker (at --flex-rate) when
every stream is busy (no data transfers modelled).

Usage (bench/README.md, sessions 39 and 46, has the commands that made its files):
  bench/schedule_model.py --graph G.json --log LOG.csv --profile PROFILE.txt
      [--cpu 15] [--streams 4] [--capacity 1.5 2] [--repeats 2 12] [--grid]
      [--flex-below F ...] [--flex-rate R]
Bad input (missing or malformed files, impossible settings) exits with
status 1 and one line saying what is wrong.
"""
import argparse
import csv
import heapq
import json
import math
import re
import sys


class ModelError(Exception):
    """Bad input: the message says which file or option, and what is wrong."""


def fronts_of(name, where):
    m = re.search(r"\((\d+) fronts\)", name)
    if not m:
        raise ModelError(f"{where}: no front count in subtree task name '{name}'")
    return int(m.group(1))


def fit_subtrees(log_path):
    """(seconds a front, seconds a flop) of the subtree tasks of a task log."""
    X, y = [], []
    with open(log_path, newline="") as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            try:
                if r["kind"] != "subtree":
                    continue
                flops, dt = float(r["flops"]), float(r["end_s"]) - float(r["start_s"])
                if not (math.isfinite(flops) and flops >= 0 and math.isfinite(dt) and dt >= 0):
                    raise ValueError(f"flops {r['flops']}, start {r['start_s']}, end {r['end_s']}: "
                                     "finite, flops >= 0 and end >= start expected")
                X.append((fronts_of(r["name"], f"{log_path}:{line}"), flops))
                y.append(dt)
            except (KeyError, TypeError, ValueError) as e:
                raise ModelError(f"{log_path}:{line}: not a task log row ({e!r})") from e
    if len(X) < 2:
        raise ModelError(f"{log_path}: fewer than 2 subtree tasks to fit")
    a11 = sum(a * a for a, _ in X)
    a12 = sum(a * b for a, b in X)
    a22 = sum(b * b for _, b in X)
    b1 = sum(a * v for (a, _), v in zip(X, y))
    b2 = sum(b * v for (_, b), v in zip(X, y))
    det = a11 * a22 - a12 * a12
    if det <= 1e-12 * a11 * a22:
        raise ModelError(f"{log_path}: the subtrees' front counts and flops are proportional: no fit")
    per_front, per_flop = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
    if not (math.isfinite(per_front) and math.isfinite(per_flop)):
        raise ModelError(f"{log_path}: the fit overflowed (flops or times out of a float's range)")
    if per_front < 0 or per_flop <= 0:
        raise ModelError(f"{log_path}: the fit gave {per_front * 1e6:.3g} us a front and "
                         f"{per_flop:.3g} s a flop; a cost model needs both >= 0 (and flops > 0)")
    return per_front, per_flop


def read_profiles(path):
    """The first two front profiles of a file: per bin low k -> (fronts, ms by step)."""
    tables, cur = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("| k |"):
                cur = {}
                tables.append(cur)
            elif cur is not None and re.match(r"\| \d+-\d+ \|", line):
                c = [x.strip() for x in line.strip().strip("|").split("|")]
                lo = int(c[0].split("-")[0])
                try:
                    if len(c) < 9:
                        raise ValueError("fewer than 9 cells")
                    ms = [float(v) for v in c[4:8]]  # assembly, potrf, trsm, syrk
                    if not all(math.isfinite(v) and v >= 0 for v in ms) or int(c[1]) < 0:
                        raise ValueError("times must be finite and >= 0, fronts >= 0")
                    cur[lo] = (int(c[1]), ms)
                except (IndexError, ValueError) as e:
                    raise ModelError(f"{path}: not a front profile row ({e}): {line.strip()}") from e
            elif cur is not None and not line.startswith("|"):
                cur = None
    if len(tables) < 2:
        raise ModelError(f"{path}: needs two front profiles (the shorter process's first)")
    return tables[0], tables[1]


def warm_bins(p_short, p_long, factorisations, path):
    """Per bin: serial GPU seconds a front by step, from the difference of the profiles."""
    out = {}
    for lo in p_long:
        if lo not in p_short:
            continue
        n = (p_long[lo][0] - p_short[lo][0]) / factorisations
        if n <= 0:
            continue
        out[lo] = [max(0.0, (a - b) / factorisations / n * 1e-3) for a, b in zip(p_long[lo][1], p_short[lo][1])]
    if not out:
        raise ModelError(f"{path}: the two profiles differ in no bin (the same process twice, or the "
                         "longer one first?)")
    return out


def check_task(t, i):
    """Raises ValueError unless task i has the fields and types the model reads."""
    def number(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    if not (isinstance(t["name"], str) and isinstance(t["kind"], str)):
        raise ValueError(f"task {i}: name and kind must be strings")
    if not (number(t["flops"]) and t["flops"] >= 0 and number(t["priority"])):
        raise ValueError(f"task {i}: flops (>= 0) and priority must be finite numbers")
    acc = t["accesses"]
    if not isinstance(acc, list) or not all(
            isinstance(x, list) and len(x) == 2 and isinstance(x[0], int) and not isinstance(x[0], bool)
            and x[1] in ("R", "W", "RW", "RW|COMMUTE") for x in acc):
        raise ValueError(f"task {i}: accesses must be [block id, \"R\" | \"W\" | \"RW\" | \"RW|COMMUTE\"] pairs")


def load_graph(path):
    with open(path) as f:
        try:
            g = json.load(f)
            T = g["tasks"]
            for i, t in enumerate(T):
                check_task(t, i)
        except (ValueError, KeyError, TypeError) as e:
            raise ModelError(f"{path}: not a task graph of `starfront plan --json` ({e!r})") from e
    if not T:
        raise ModelError(f"{path}: the graph has no task")
    n = len(T)
    state, preds = {}, [set() for _ in range(n)]
    for i, t in enumerate(T):  # dependencies implied by the accesses in submission order
        for b, mode in t["accesses"]:
            s = state.setdefault(b, {"w": [], "r": []})
            if mode == "R":
                preds[i].update(s["w"])
                s["r"].append(i)
            elif mode == "RW|COMMUTE":
                raise ModelError(f"{path}: commuting accesses (tiled graphs) are not modelled")
            else:
                preds[i].update(s["w"])
                preds[i].update(s["r"])
                s["w"], s["r"] = [i], []
    succ = [[] for _ in range(n)]
    for i in range(n):
        preds[i].discard(i)
        for p in preds[i]:
            succ[p].append(i)
    return T, preds, succ


def bottom_levels(succ, cost):
    lv = [0.0] * len(cost)
    for i in range(len(cost) - 1, -1, -1):  # submission order is topological
        lv[i] = cost[i] + max((lv[s] for s in succ[i]), default=0.0)
    return lv


def simulate(T, preds, succ, cost, prio, ncpu, streams, capacity, cpu_cost=None):
    """Makespan (seconds). cpu_cost[i], when given and not None for a GPU
    task i, lets that task run on a CPU worker at that cost when no GPU
    stream is free (flexible placement); cost[i] is its GPU cost."""
    n = len(T)
    for i in range(n):
        for c in (cost[i], cpu_cost[i] if cpu_cost is not None else None):
            if c is not None and not (math.isfinite(c) and c >= 0):
                raise ModelError(f"task {i} ({T[i]['name']}): modelled cost {c!r} s is not a finite time "
                                 "(the fit or the profile gives costs out of a float's range)")
    npred = [len(p) for p in preds]
    ready = [i for i in range(n) if npred[i] == 0]
    time, cpu_events, free_cpu, gpu, done = 0.0, [], ncpu, {}, 0
    while done < n:
        ready.sort(key=lambda i: (-prio[i], i))
        for i in list(ready):
            if T[i]["kind"] == "subtree":
                if free_cpu:
                    ready.remove(i)
                    free_cpu -= 1
                    heapq.heappush(cpu_events, (time + cost[i], i))
            elif len(gpu) < streams:
                ready.remove(i)
                gpu[i] = cost[i]
            elif cpu_cost is not None and cpu_cost[i] is not None and free_cpu:
                ready.remove(i)
                free_cpu -= 1
                heapq.heappush(cpu_events, (time + cpu_cost[i], i))
        if not gpu and not cpu_events:
            raise ModelError(f"no task can start and none runs ({n - done} left): the graph has a cycle")
        rate = min(1.0, capacity / len(gpu)) if gpu else 0.0
        t_gpu = time + min(gpu.values()) / rate if gpu else float("inf")
        t_cpu = cpu_events[0][0] if cpu_events else float("inf")
        t_next = min(t_gpu, t_cpu)
        for i in gpu:
            gpu[i] -= (t_next - time) * rate
        time = t_next
        if t_cpu <= t_gpu:
            _, i = heapq.heappop(cpu_events)
            free_cpu += 1
        else:
            i = min(gpu, key=gpu.get)
            del gpu[i]
        done += 1
        for s in succ[i]:
            npred[s] -= 1
            if npred[s] == 0:
                ready.append(s)
    if not math.isfinite(time):
        raise ModelError("a makespan came out infinite (a cost too large for a float)")
    return time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True, help="starfront plan --json output (GPU graph)")
    ap.add_argument("--log", required=True, help="task log (STARFRONT_TASK_LOG) for the subtree cost fit")
    ap.add_argument("--profile", required=True, help="file with the --repeat 2 and --repeat 12 front profiles")
    ap.add_argument("--cpu", type=int, default=15, help="CPU workers (default 15)")
    ap.add_argument("--streams", type=int, default=4, help="GPU tasks at once (default 4)")
    ap.add_argument("--capacity", type=float, nargs="+", default=[1.5, 2.0], help="GPU capacities C")
    ap.add_argument("--repeats", type=int, nargs=2, default=[2, 12], metavar=("R1", "R2"),
                    help="--repeat of the two profiled processes (default 2 12; only checked: the cost a "
                         "front is the difference of the times over the difference of the front counts, "
                         "whatever R2 - R1)")
    ap.add_argument("--grid", action="store_true",
                    help="also a table of makespans with the CPU subtrees and every GPU step sped up "
                         "(costs x1, x0.75, x0.5 each; as planned)")
    ap.add_argument("--flex-below", type=float, nargs="+", metavar="FLOPS",
                    help="also the makespans when GPU front tasks of fewer flops than each value may run on "
                         "a CPU worker while every stream is busy (as planned)")
    ap.add_argument("--flex-rate", type=float, default=17e9,
                    help="CPU rate of such a front, flop/s (plus 20 us; default 17e9: session 46's "
                         "front tasks on one core, scaled to the H200 host's subtree rate)")
    a = ap.parse_args()
    try:
        run(a)
    except ModelError as e:
        sys.exit(f"schedule_model: {e}")
    except OSError as e:
        sys.exit(f"schedule_model: {e.filename}: {e.strerror}")
    except UnicodeDecodeError as e:
        sys.exit(f"schedule_model: an input file is not text ({e.reason} at byte {e.start})")


def run(a):
    if a.cpu < 1 or a.streams < 1:
        raise ModelError("--cpu and --streams must be >= 1")
    if not all(math.isfinite(c) and c >= 0.01 for c in a.capacity):
        raise ModelError("--capacity values must be finite and >= 0.01")
    if a.flex_below is not None and not all(math.isfinite(f) and f > 0 for f in a.flex_below):
        raise ModelError("--flex-below values must be finite and > 0")
    if not (math.isfinite(a.flex_rate) and a.flex_rate >= 1e6):
        raise ModelError("--flex-rate must be finite and >= 1e6 flop/s")
    if not 0 <= a.repeats[0] < a.repeats[1]:
        raise ModelError("--repeats R1 R2 needs 0 <= R1 < R2")
    T, preds, succ = load_graph(a.graph)
    per_front, per_flop = fit_subtrees(a.log)
    bins = warm_bins(*read_profiles(a.profile), a.repeats[1] - a.repeats[0], a.profile)
    los = sorted(bins)

    def gpu_steps(t):
        m = re.search(r"\((\d+)x(\d+)\)", t["name"])
        if not m:
            raise ModelError(f"{a.graph}: no front shape in task name '{t['name']}'")
        k = int(m.group(2))
        lo = max([b for b in los if b <= k], default=los[0])
        return bins[lo]

    def costs(scale):
        out = []
        for t in T:
            if t["kind"] == "subtree":
                out.append(per_front * fronts_of(t["name"], a.graph) + per_flop * t["flops"])
            else:
                out.append(sum(s * f for s, f in zip(gpu_steps(t), scale)))
        return out

    base = costs([1, 1, 1, 1])
    planned = [t["priority"] for t in T]
    model_bl = bottom_levels(succ, base)
    gpu_aware = bottom_levels(
        succ, [base[i] if T[i]["kind"] == "subtree" else 50e-6 + T[i]["flops"] / 8e12 for i in range(len(T))])
    hybrid = [planned[i] if T[i]["kind"] == "subtree" else 1e4 + 1e6 * model_bl[i] for i in range(len(T))]
    ncpu_sum = sum(c for c, t in zip(base, T) if t["kind"] == "subtree")
    gpu_sum = sum(c for c, t in zip(base, T) if t["kind"] != "subtree")
    print(f"subtree fit: {per_front * 1e6:.2f} us a front + {1e-9 / per_flop:.1f} GFLOP/s; "
          f"CPU work {ncpu_sum * 1e3:.1f} ms on {a.cpu} workers, serial GPU work {gpu_sum * 1e3:.1f} ms")
    schemes = [("as planned (bottom levels at CPU rates)", planned), ("bottom levels of the model's costs", model_bl),
               ("GPU-aware bottom levels (8 TFLOP/s)", gpu_aware), ("planned subtrees, GPU tasks by model", hybrid)]
    whatifs = [("assembly x0.5", [0.5, 1, 1, 1]), ("DPOTRF x0.5", [1, 0.5, 1, 1]), ("TRSM x0.5", [1, 1, 0.5, 1]),
               ("SYRK x0.5", [1, 1, 1, 0.5]), ("all GPU x0.5", [0.5] * 4)]
    print("\n| GPU capacity C | " + " | ".join(s for s, _ in schemes) + " | " +
          " | ".join(w + " (as planned)" for w, _ in whatifs) + " |")
    print("|---" * (1 + len(schemes) + len(whatifs)) + "|")
    for C in a.capacity:
        row = [simulate(T, preds, succ, base, p, a.cpu, a.streams, C) for _, p in schemes]
        row += [simulate(T, preds, succ, costs(sc), planned, a.cpu, a.streams, C) for _, sc in whatifs]
        print(f"| {C:g} | " + " | ".join(f"{1e3 * v:.2f}" for v in row) + " |")
    print("\n(makespans in ms of the model)")
    if a.grid:
        scales = [1, 0.75, 0.5]
        print("\n| GPU capacity C | CPU subtrees x | " + " | ".join(f"all GPU x{g:g}" for g in scales) + " |")
        print("|---|---|" + "---|" * len(scales))
        for C in a.capacity:
            for cs in scales:
                row = []
                for gs in scales:
                    c = [x * (cs if t["kind"] == "subtree" else gs) for x, t in zip(base, T)]
                    row.append(simulate(T, preds, succ, c, planned, a.cpu, a.streams, C))
                print(f"| {C:g} | {cs:g} | " + " | ".join(f"{1e3 * v:.2f}" for v in row) + " |")
    if a.flex_below:
        print(f"\n| GPU capacity C | fronts of fewer flops may run on a CPU ({a.flex_rate:g} flop/s) | "
              "eligible GPU front tasks | makespan ms |")
        print("|---|---|---|---|")
        for C in a.capacity:
            for f in a.flex_below:
                flex = [20e-6 + t["flops"] / a.flex_rate if t["kind"] == "front" and t["flops"] < f else None
                        for t in T]
                print(f"| {C:g} | {f:g} | {sum(x is not None for x in flex)} | "
                      f"{1e3 * simulate(T, preds, succ, base, planned, a.cpu, a.streams, C, flex):.2f} |")


if __name__ == "__main__":
    main()
