"""Throughput of evaluating a whole lattice: the exhaustive search,
``ExhaustiveSearch().run(LatticeOracle(evaluator, lattice))``.

Adult with 9 QIDs (12,960 nodes) and 8 QIDs (all but ``occupation``; 4,320 nodes), metric
loss, k=5, suppression limit 5 % by default.  The search's ``evaluate_all`` walks the lattice
level by level and rolls every node up from its predecessor with the smallest frequency set, in
batches; it checks lower bounds of anonymous nodes only.

Per case: one warm-up call, then ``--repeats`` timed calls (a fresh ``LatticeOracle`` each
time; the encoding and the bottom frequency set are built once, outside that clock, and
reported as ``setup``, timed once after a warm-up).  It reports

* seconds (median, min) and nodes/s (from the median);
* frequency-set entries *produced*: ``sum(stats.entries)`` over all nodes;
* entries *touched*: for each node, the size of the frequency set it was rolled up from --
  its predecessor with fewest entries (the bottom frequency set for the bottom node),
  recomputed from ``stats.entries``, which is the rule ``evaluate_all`` uses;
* entries touched per second, and the optimum by the exhaustive rule (loss, height, id),
  compared with ARX's optimum where the reference has the case;
* the roll-up alone (``kernels.rollup``, timed around each call in one more run): seconds and
  nanoseconds of wall time per touched entry (all threads together) -- on the CPU, where the
  walk runs in packed codes (:mod:`gpuppdp.engine.search.packed_walk`: roll-up and judgement
  in one compiled pass per batch), that pass instead (column ``walk``: packed or batched);
* where the time goes: in the same run, each phase of a batch (roll-up, classes, model
  verdicts, node statistics, loss sums; or the packed walk's pass) timed around its calls
  with the device synchronized after each, and the rest (host bookkeeping, transfers, small
  array operations).

With ``--device-profile`` (a GPU and PyTorch needed), one more search runs under PyTorch's
profiler, whose CUPTI tracing records every kernel and copy of the process -- CuPy's and
Numba's too: the device's busy time (the union of those intervals) against the search's wall
time says how much of it the host's launching and waiting is, and the kernels with the most
device time are listed.

With ``--host-profile``, one more search runs under :mod:`cProfile`: the functions with the
most host time (own and cumulative) are listed, where the host's share of a GPU search goes.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_exhaustive.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_exhaustive.py --backend cpu --repeats 3
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time

import numpy as np
from _common import (
    add_common_args,
    adult_qids,
    arx_key,
    fmt_seconds,
    load_arx_reference,
    machine_info,
    print_machine,
    print_table,
    resolve_backend,
    summarize,
    synchronizer,
    timed_runs,
    write_json,
)

from gpuppdp import Anonymizer, kernels
from gpuppdp.engine.evaluate import Evaluator, LatticeOracle
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.search import ExhaustiveSearch
from gpuppdp.engine.search.packed_walk import PackedWalk


def exhaustive(evaluator, lattice):
    """The exhaustive search's statistics of every node (a fresh oracle)."""
    return ExhaustiveSearch().run(LatticeOracle(evaluator, lattice)).details["all_stats"]


def touched_entries(lattice: Lattice, entries: np.ndarray, bottom_entries: int) -> np.ndarray:
    """Per node: entries of the frequency set it is rolled up from (smallest predecessor)."""
    levels = lattice.levels_of(np.arange(lattice.size))
    ids = np.arange(lattice.size, dtype=np.int64)
    big = np.iinfo(np.int64).max
    src = np.full(lattice.size, big, dtype=np.int64)
    for j in range(lattice.n_attributes):
        can = levels[:, j] > 0
        pred = np.where(can, ids - lattice.strides[j], 0)
        src = np.minimum(src, np.where(can, entries[pred], big))
    src[0] = bottom_entries
    return src


#: the phases of a batch that ``phase_seconds`` times: kernel entry points and the verdicts
PHASES = (("roll-up", kernels, "rollup"), ("classes", kernels, "classes"),
          ("verdicts", Evaluator, "outliers"), ("node stats", kernels, "node_stats"),
          ("loss sums", kernels, "loss_sums"), ("packed walk", PackedWalk, "evaluate"))


def phase_seconds(evaluator, lattice, sync) -> dict:
    """Wall time of one exhaustive search and of each of its :data:`PHASES` (each call timed
    with the device synchronized after it); ``"rest"``: the remainder -- host bookkeeping,
    transfers, small array operations."""
    spent = {name: 0.0 for name, _, _ in PHASES}
    originals = [(owner, attr, getattr(owner, attr)) for _, owner, attr in PHASES]

    def timed(name, function):
        def call(*args, **kwargs):
            t0 = time.perf_counter()
            out = function(*args, **kwargs)
            sync()
            spent[name] += time.perf_counter() - t0
            return out
        return call

    for (name, _, _), (owner, attr, function) in zip(PHASES, originals):
        setattr(owner, attr, timed(name, function))
    try:
        sync()
        t0 = time.perf_counter()
        exhaustive(evaluator, lattice)
        sync()
        spent["total"] = time.perf_counter() - t0
    finally:
        for owner, attr, function in originals:
            setattr(owner, attr, function)
    spent["rest"] = spent["total"] - sum(spent[name] for name, _, _ in PHASES)
    return spent


def device_profile(evaluator, lattice, sync, top: int = 12) -> dict:
    """One exhaustive search under PyTorch's profiler (CUPTI): wall time, device busy time
    (union of kernel, copy and set intervals), their counts and the ``top`` kernels by device
    time; ``{"error": ...}`` without PyTorch or a GPU it can trace."""
    try:  # deferred: PyTorch is an optional tool of this benchmark, never of the package
        from torch.profiler import ProfilerActivity, profile
    except ImportError as e:
        return {"error": f"PyTorch not importable: {e}"}
    with tempfile.TemporaryDirectory() as folder:
        trace = os.path.join(folder, "trace.json")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            sync()
            t0 = time.perf_counter()
            exhaustive(evaluator, lattice)
            sync()
            wall = time.perf_counter() - t0
        prof.export_chrome_trace(trace)
        events = json.load(open(trace)).get("traceEvents", [])
    device = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
              and "dur" in e]
    if not device:
        return {"error": "the profiler recorded no device activity", "wall_seconds": wall}
    spans = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in device)
    busy, end = 0.0, -np.inf
    for start, stop in spans:  # union of intervals (µs), in time order
        busy += max(0.0, stop - max(start, end))
        end = max(end, stop)
    per_kernel: dict[str, list] = {}
    for e in device:
        entry = per_kernel.setdefault(f"{e['cat']}: {e.get('name', '?')[:60]}", [0, 0.0])
        entry[0] += 1
        entry[1] += float(e["dur"])
    ranked = sorted(per_kernel.items(), key=lambda kv: -kv[1][1])[:top]
    return {"wall_seconds": wall, "device_busy_seconds": busy * 1e-6,
            "device_span_seconds": (spans[-1][1] - spans[0][0]) * 1e-6,
            "launches": sum(1 for e in device if e["cat"] == "kernel"),
            "copies": sum(1 for e in device if e["cat"] != "kernel"),
            "top": [{"name": name, "count": n, "seconds": us * 1e-6}
                    for name, (n, us) in ranked]}


def host_profile(evaluator, lattice, sync, top: int = 25) -> dict:
    """One exhaustive search under :mod:`cProfile`: wall time and the ``top`` functions by own
    time, with their calls and cumulative time."""
    profiler = cProfile.Profile()
    sync()
    t0 = time.perf_counter()
    profiler.enable()
    exhaustive(evaluator, lattice)
    sync()
    profiler.disable()
    wall = time.perf_counter() - t0
    stats = pstats.Stats(profiler)
    rows = []
    for (path, line, name), (_, calls, own, cumulative, _) in stats.stats.items():
        rows.append({"function": f"{os.path.basename(path)}:{line}({name})", "calls": calls,
                     "own_seconds": own, "cumulative_seconds": cumulative})
    rows.sort(key=lambda r: -r["own_seconds"])
    return {"wall_seconds": wall, "top": rows[:top]}


def print_host_profile(q: int, found: dict) -> None:
    print(f"host profile, {q} QIDs (cProfile, wall {fmt_seconds(found['wall_seconds'])}):")
    print_table(["function", "calls", "own", "cumulative"],
                [[r["function"][:70], r["calls"], fmt_seconds(r["own_seconds"]),
                  fmt_seconds(r["cumulative_seconds"])] for r in found["top"]])


def print_device_profile(q: int, found: dict) -> None:
    if "error" in found:
        print(f"device profile, {q} QIDs: {found['error']}")
        return
    print(f"device profile, {q} QIDs: wall {fmt_seconds(found['wall_seconds'])}, device busy "
          f"{fmt_seconds(found['device_busy_seconds'])} "
          f"({100 * found['device_busy_seconds'] / found['wall_seconds']:.0f} %), "
          f"{found['launches']} kernels, {found['copies']} copies/sets")
    print_table(["device work", "count", "device time"],
                [[t["name"], t["count"], fmt_seconds(t["seconds"])] for t in found["top"]])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_exhaustive")
    p.add_argument("--qids", default="9,8", help="comma-separated, from 8 and 9 (default 9,8)")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--suppression", type=float, default=0.05)
    p.add_argument("--metric", default="loss", choices=("loss", "precision", "discernibility"))
    p.add_argument("--device-profile", action="store_true",
                   help="one more search under PyTorch's CUDA profiler (GPU only)")
    p.add_argument("--host-profile", action="store_true",
                   help="one more search under cProfile: where the host's time goes")
    args = p.parse_args(argv)
    qids = [int(q) for q in args.qids.split(",") if q.strip()]

    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    arx = load_arx_reference()["cases"]
    print(f"# evaluate_all, metric={args.metric}, k={args.k}, suppression={args.suppression:g}, "
          f"repeats={args.repeats} after 1 warm-up; times: median (min)\n")

    headers = ["qids", "nodes", "setup", "evaluate_all", "nodes/s", "produced", "touched",
               "touched/s", "walk", "roll-up", "ns/touched", "anonymous", "optimum loss",
               "=ARX opt"]
    rows, results = [], []
    for q in qids:
        data, hierarchies, insensitive = adult_qids(q)
        anon = Anonymizer(quasi_identifiers=hierarchies, insensitive=insensitive, k=args.k,
                          suppression_limit=args.suppression, metric=args.metric,
                          backend=backend)
        anon._evaluator_for(data)  # warm-up (JIT compilation) of the set-up
        t0 = time.perf_counter()
        evaluator = anon._evaluator_for(data)  # encode + bottom frequency set, as fit does
        lattice = Lattice(evaluator.encoded.heights)
        sync()
        setup = time.perf_counter() - t0

        secs, outs = timed_runs(lambda: exhaustive(evaluator, lattice),
                                args.repeats, sync)
        stats = outs[-1]
        t = summarize(secs)
        bottom_entries = int(evaluator.bottom.host_ptr[-1])
        produced = int(stats.entries.sum())
        touched = int(touched_entries(lattice, stats.entries, bottom_entries).sum())
        phases = min((phase_seconds(evaluator, lattice, sync) for _ in range(args.repeats)),
                     key=lambda spent: spent["total"])
        walk = "packed" if PackedWalk.of(evaluator, lattice) is not None else "batched"
        rollup = phases["packed walk" if walk == "packed" else "roll-up"]
        profiled = device_profile(evaluator, lattice, sync) if args.device_profile else None
        host = host_profile(evaluator, lattice, sync) if args.host_profile else None
        il = np.where(stats.anonymous, stats.information_loss, np.inf)
        best = None
        if stats.anonymous.any():
            best = int(np.lexsort((np.arange(len(il)), stats.height, il))[0])
        transformation = None if best is None else {
            n: int(v) for n, v in zip(evaluator.encoded.qi_names, stats.levels[best])}
        ref = arx.get(arx_key(q, args.k, args.suppression, args.metric))
        same = None if ref is None or best is None else ref["transformation"] == transformation
        case = {
            "qids": q, "k": args.k, "suppression": args.suppression, "metric": args.metric,
            "lattice_size": lattice.size, "rows": evaluator.encoded.n_rows,
            "setup_seconds": setup, "evaluate_all_seconds": t,
            "nodes_per_second": lattice.size / t["median"],
            "bottom_entries": bottom_entries,
            "entries_produced": produced, "entries_touched": touched,
            "entries_touched_per_second": touched / t["median"],
            "walk": walk, "rollup_seconds": rollup,
            "phase_seconds": phases,
            "rollup_ns_per_touched_entry": 1e9 * rollup / max(touched, 1),
            "anonymous_nodes": int(stats.anonymous.sum()),
            "optimum": transformation,
            "optimum_information_loss": None if best is None else float(il[best]),
            "same_optimum_as_arx": same,
            "device_profile": profiled,
            "host_profile": host,
        }
        results.append(case)
        rows.append([
            q, lattice.size, fmt_seconds(setup),
            f"{fmt_seconds(t['median'])} ({fmt_seconds(t['min'])})",
            f"{lattice.size / t['median']:,.0f}", f"{produced:,}", f"{touched:,}",
            f"{touched / t['median']:,.0f}", walk, fmt_seconds(rollup),
            f"{1e9 * rollup / max(touched, 1):.1f}", int(stats.anonymous.sum()),
            "-" if best is None else f"{il[best]:.6g}",
            None if same is None else ("yes" if same else "NO"),
        ])
        print(f"  done q={q}: {fmt_seconds(t['median'])}", file=sys.stderr, flush=True)

    print()
    print_table(headers, rows)
    print("\nwhere the time goes (one more run, the device synchronized after each phase):")
    names = [name for name, _, _ in PHASES] + ["rest", "total"]
    print_table(["qids"] + names,
                [[c["qids"]] + [fmt_seconds(c["phase_seconds"][n]) for n in names]
                 for c in results])
    for c in results:
        if c["device_profile"] is not None:
            print()
            print_device_profile(c["qids"], c["device_profile"])
        if c["host_profile"] is not None:
            print()
            print_host_profile(c["qids"], c["host_profile"])
    write_json(args.json, {"benchmark": "bench_exhaustive", "machine": info,
                           "settings": {"repeats": args.repeats, "warmup_runs": 1,
                                        "k": args.k, "suppression": args.suppression,
                                        "metric": args.metric},
                           "cases": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
