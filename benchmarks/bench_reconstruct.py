"""The reconstruction attack on census blocks: share of people recovered by block size, exact
statistics against differentially private ones.

Blocks of 2..10 people are drawn from the census generator (``gpuppdp.datasets.census``),
with four attributes: age (0..100, the generator's range), sex, race (White, Black, Other:
the generator's seven races, the five smallest merged) and marital status (Single = never
married, Married = ever married; the rule "married => age >= 15" holds in the generator and is
given to the attack).  Each block publishes, as a census would, the count, mean age and median
age (one decimal) of everyone, and of each sex, race, marital status, sex x race and sex x
marital status, suppressing every group of fewer than 3 people (zero included).

* **exact**: :func:`gpuppdp.attacks.reconstruct` on the published statistics, with the true
  block to score it: the share of blocks whose table is the only one consistent with the
  statistics (``unique``), the share of people in those blocks (``certain``: recovered and
  provably so), and the share of people recovered exactly and within ±1 year of age by the
  table found (for an ambiguous block, the solver's pick among the consistent tables).
* **DP, ε**: the same statistics released with Laplace noise (``gpuppdp.dp.LaplaceMechanism``)
  at total ε per block, split evenly between the counts, the sums of ages and the medians;
  every person is in one group of each of the 6 tables, so under add/remove-one the L1
  sensitivities are 6 (counts), 6·100 (sums) and 6·100 (medians).  Noisy counts are rounded
  and suppressed below 3, means are noisy sum / noisy count, all clipped to the domain and
  rounded to one decimal.  The attack treats the noisy values as given: when no table fits
  them it returns the closest one (:func:`reconstruct`'s default), within ``--time-limit``
  seconds per solve.  The noise is seeded for reproducibility: NOT private.

Prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_reconstruct.json``)
with every block's figures and the machine, and the shares as a bar chart in the HTML report's
style (``--html``, default ``benchmarks/out/bench_reconstruct.html``).

Example::

    python benchmarks/bench_reconstruct.py                        # about 3 minutes, 2 cores
    python benchmarks/bench_reconstruct.py --sizes 3,5,7 --blocks 5 --epsilons 1,100
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings

import numpy as np
import pandas as pd

from gpuppdp.attacks import ReconstructionError, reconstruct, tabulate
from gpuppdp.attacks.reconstruct import groups_by
from gpuppdp.datasets import census
from gpuppdp.dp import LaplaceMechanism, RandomSource

AGE_MAX = 100
THRESHOLD = 3
ATTRIBUTES = {"age": {"min": 0, "max": AGE_MAX, "integer": True},
              "sex": ["Female", "Male"], "race": ["White", "Black", "Other"],
              "marital": ["Single", "Married"]}
RULES = [{"if": {"marital": "Married"}, "then": {"age": [15, None]}}]
TABLES = [("sex",), ("race",), ("marital",), ("sex", "race"), ("sex", "marital")]
GROUPS = groups_by(ATTRIBUTES, *TABLES)
N_TABLES = 1 + len(TABLES)  # everyone, then one group of each table per person


def _people(rows: int, seed: int) -> pd.DataFrame:
    df, _ = census(rows, seed)
    races = {"White": "White", "Black or African American": "Black"}
    return pd.DataFrame({
        "age": df["age"].to_numpy(dtype=np.int64),
        "sex": df["sex"].astype(str).to_numpy(),
        "race": [races.get(r, "Other") for r in df["race"].astype(str)],
        "marital": np.where(df["marital"].astype(str) == "Never married", "Single", "Married"),
    })


def _true_values(block: pd.DataFrame):
    """Count, sum and median of age per group (the median of an empty group: 0)."""
    counts, sums, medians = [], [], []
    ages = block["age"].to_numpy()
    for group in GROUPS:
        member = np.ones(len(block), dtype=bool)
        for col, value in group.items():
            member &= block[col].to_numpy() == value
        counts.append(member.sum())
        sums.append(ages[member].sum())
        medians.append(float(np.median(ages[member])) if member.any() else 0.0)
    return np.array(counts, float), np.array(sums, float), np.array(medians, float)


def noisy_statistics(block: pd.DataFrame, epsilon: float, source: RandomSource) -> dict:
    """The block's statistics with Laplace noise at total ``epsilon`` (see the module)."""
    counts, sums, medians = _true_values(block)
    third = epsilon / 3
    count_mech = LaplaceMechanism(epsilon=third, sensitivity=N_TABLES)
    value_mech = LaplaceMechanism(epsilon=third, sensitivity=N_TABLES * AGE_MAX)
    n = np.maximum(np.rint(np.asarray(count_mech.release(counts, random=source))), 0)
    s = np.asarray(value_mech.release(sums, random=source))
    m = np.asarray(value_mech.release(medians, random=source))
    stats = []
    for group, c, total, med in zip(GROUPS, n, s, m):
        if c < THRESHOLD:
            stats.append({"group": group, "suppressed": True})
            continue
        stats.append({"group": group, "count": int(c),
                      "mean": round(float(np.clip(total / c, 0, AGE_MAX)), 1),
                      "median": round(float(np.clip(med, 0, AGE_MAX)), 1),
                      "attribute": "age", "decimals": 1})
    return {"attributes": ATTRIBUTES, "rules": RULES, "statistics": stats,
            "suppression_threshold": THRESHOLD}


def _attack(stats: dict, block: pd.DataFrame, time_limit: float) -> dict:
    t0 = time.perf_counter()
    try:
        r = reconstruct(stats, truth=block, time_limit=time_limit)
    except ReconstructionError as exc:  # no table within the time limit
        return {"size": len(block), "found": False, "error": str(exc), "unique": None,
                "consistent": None, "exact": 0.0, "within_1": 0.0,
                "seconds": time.perf_counter() - t0}
    return {"size": len(block), "found": True, "unique": r.unique, "consistent": r.consistent,
            "deviation": r.deviation, "exact": r.recovered_exact,
            "within_1": r.recovered_within_1, "seconds": time.perf_counter() - t0}


def _summary(rows: list[dict]) -> dict:
    people = sum(r["size"] for r in rows)
    return {"blocks": len(rows), "people": people,
            "recovered_exact": sum(r["exact"] * r["size"] for r in rows) / people,
            "recovered_within_1": sum(r["within_1"] * r["size"] for r in rows) / people,
            "unique_blocks": sum(r["unique"] is True for r in rows) / len(rows),
            # people in blocks proved unique: recovered with certainty, not by the solver's pick
            "recovered_certain": sum(r["size"] * r["exact"] for r in rows
                                     if r["unique"] is True and r["consistent"]) / people,
            "consistent_blocks": sum(r["consistent"] is True for r in rows) / len(rows),
            "not_found": sum(not r["found"] for r in rows),
            "seconds_per_block": sum(r["seconds"] for r in rows) / len(rows)}


def _write_html(path: str, by_size: dict, epsilons, machine: dict) -> None:
    """The share recovered by block size as a bar chart, in the HTML report's style."""
    from gpuppdp.report import _CSS, _bar_chart, _e

    sizes = list(by_size)
    series = [("exact statistics", [by_size[k]["exact"]["recovered_exact"] for k in sizes])]
    for eps in sorted(epsilons, reverse=True)[:3]:  # the report's palette has 4 colours
        series.append((f"DP, ε = {eps:g}", [by_size[k].get(f"dp eps={eps:g}", {}).get(
            "recovered_exact") for k in sizes]))
    chart = _bar_chart("People reconstructed exactly, by block size", sizes, series,
                       xlabel="people in the block", ylabel="share recovered exactly",
                       percent=True, width=760)
    unique = _bar_chart("Blocks whose table is the only one consistent with the statistics",
                        sizes, [("exact statistics", [by_size[k]["exact"]["unique_blocks"]
                                                      for k in sizes])],
                        xlabel="people in the block", ylabel="share of blocks", percent=True,
                        width=760)
    text = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Reconstruction attack</title><style>{_CSS}</style></head><body><main>"
            "<h1>Reconstruction attack on census blocks</h1>"
            f"<p class=\"meta\">{_e(__doc__.split(chr(10) + chr(10))[1])}</p>"
            f"<section>{chart}</section><section>{unique}</section>"
            f"<p class=\"meta\">{_e(json.dumps(machine))}</p></main></body></html>\n")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"--sizes expects e.g. 2-10 or 3,5,7, got {text!r}")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=_sizes, default=list(range(2, 11)),
                   help="block sizes, e.g. 2-10 or 3,5,7 (default 2-10)")
    p.add_argument("--blocks", type=int, default=12, help="blocks per size, exact (default 12)")
    p.add_argument("--dp-blocks", type=int, default=3,
                   help="of those, blocks per size released with noise (default 3)")
    p.add_argument("--epsilons", default="1,10,100,1000",
                   help="total epsilon per block of the DP releases (default 1,10,100,1000)")
    p.add_argument("--time-limit", type=float, default=1.0,
                   help="seconds per solve of a DP release (default 1; exact: 30)")
    p.add_argument("--seed", type=int, default=0, help="census and noise seed (default 0)")
    p.add_argument("--json", default=os.path.join(os.path.relpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "out")), "bench_reconstruct.json"))
    p.add_argument("--html", default=os.path.join(os.path.relpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "out")), "bench_reconstruct.html"),
        help="the bar chart page (empty: none)")
    args = p.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",") if e.strip()]
    people = _people(sum(args.sizes) * args.blocks, args.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded source warns: reproducible, not private
        source = RandomSource("cpu", seed=args.seed)
    t_start = time.perf_counter()
    exact, noisy = [], {e: [] for e in epsilons}
    pos = 0
    for size in args.sizes:
        for b in range(args.blocks):
            block = people.iloc[pos:pos + size].reset_index(drop=True)
            pos += size
            stats = tabulate(block, ATTRIBUTES, GROUPS, rules=RULES,
                             suppression_threshold=THRESHOLD, decimals=1)
            exact.append(_attack(stats, block, 30.0))
            if b < args.dp_blocks:
                for eps in epsilons:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        released = noisy_statistics(block, eps, source)
                    noisy[eps].append(_attack(released, block, args.time_limit))
        print(f"size {size}: done ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr,
              flush=True)
    by_size = {}
    for size in args.sizes:
        row = {"exact": _summary([r for r in exact if r["size"] == size])}
        for eps in epsilons:
            sel = [r for r in noisy[eps] if r["size"] == size]
            if sel:
                row[f"dp eps={eps:g}"] = _summary(sel)
        by_size[size] = row
    overall = {"exact": _summary(exact)}
    overall.update({f"dp eps={e:g}": _summary(noisy[e]) for e in epsilons if noisy[e]})

    head = (f"{'size':>4} {'blocks':>6} {'unique':>7} {'certain':>7} {'exact':>7} {'±1 yr':>7} "
            f"{'s/blk':>6}"
            + "".join(f" {'ε=' + format(e, 'g'):>13}" for e in epsilons))
    print("share of people recovered (exact statistics | DP releases: exact / within ±1 yr)")
    print(head)
    print("-" * len(head))
    for size, row in list(by_size.items()) + [("all", overall)]:
        ex = row["exact"]
        line = (f"{size!s:>4} {ex['blocks']:>6} {ex['unique_blocks']:>7.0%} "
                f"{ex['recovered_certain']:>7.1%} {ex['recovered_exact']:>7.1%} "
                f"{ex['recovered_within_1']:>7.1%} "
                f"{ex['seconds_per_block']:>6.2f}")
        for eps in epsilons:
            d = row.get(f"dp eps={eps:g}")
            line += f" {d['recovered_exact']:>6.1%} /{d['recovered_within_1']:>5.0%}" \
                if d else f" {'-':>13}"
        print(line)
    import scipy

    machine = {"platform": platform.platform(), "processor": platform.processor()
               or platform.machine(), "cpu_count": os.cpu_count(),
               "python": platform.python_version(), "numpy": np.__version__,
               "pandas": pd.__version__, "scipy": scipy.__version__,
               "solver": "HiGHS (scipy.optimize.milp)"}
    try:
        machine["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        pass
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump({"command": " ".join([os.path.basename(sys.executable)] + sys.argv),
                   "machine": machine, "seconds": time.perf_counter() - t_start,
                   "setup": {"attributes": ATTRIBUTES, "rules": RULES, "groups": GROUPS,
                             "suppression_threshold": THRESHOLD, "epsilons": epsilons,
                             "dp_split": "epsilon/3 each to counts, sums, medians; "
                                         f"sensitivities {N_TABLES}, {N_TABLES * AGE_MAX}, "
                                         f"{N_TABLES * AGE_MAX} (add/remove-one)",
                             "time_limit_dp": args.time_limit, "seed": args.seed},
                   "by_size": {str(k): v for k, v in by_size.items()}, "overall": overall,
                   "blocks": {"exact": exact,
                              "dp": {f"{e:g}": noisy[e] for e in epsilons}}},
                  fh, indent=1)
    if args.html:
        _write_html(args.html, by_size, epsilons, machine)
        print(f"wrote {args.html}")
    print(f"wrote {args.json} ({time.perf_counter() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
