"""DP synthetic data: gpuppdp's MST against smartnoise-synth's MST, and MST on a census.

* **Adult** (the bundled extract, its eight categorical columns and age in 15 public bins
  over 17..91) at ``--epsilon`` (default 1) and ``--delta`` (default 1e-9), ``--seeds`` runs
  each: gpuppdp's :class:`~gpuppdp.dp.synthesis.MSTSynthesizer` (fit and sample as many
  records as the noisy count) and smartnoise-synth's ``MSTSynthesizer`` (run by
  ``_synth_driver.py`` with the interpreter of a venv that holds smartnoise-synth,
  ``--peers-python``: its pins -- opendp < 0.15, pandas < 3, jax -- do not fit gpuppdp's
  venv; every column given as categorical, age already binned).  Both synthetic tables are
  measured by :func:`~gpuppdp.dp.synthesis_eval.evaluate_synthetic` on the same binned
  columns: mean and max 2-way total variation, mean 1-way TV, query error.  Times: fit plus
  sample (smartnoise: its own timers, without the interpreter's start-up and imports).
* **Census** (``gpuppdp.datasets.census``) of ``--census-rows`` rows: zip at level 3 of its
  hierarchy (100 labels), age and income in public bins, the other categorical columns: our
  fit and sample time (no peer).

It prints a table and writes JSON (``--json``).  It never asserts.

Example::

    python benchmarks/bench_synthesis.py --peers-python /tmp/sn-venv/bin/python \\
        --census-rows 1e6,1e7 --json benchmarks/results/cpu-2026-11-28-s16/bench_synthesis.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import HERE, add_common_args, machine_info, resolve_backend, row_count  # noqa: E402

from gpuppdp.datasets import adult_path, census  # noqa: E402
from gpuppdp.dp import RandomSource  # noqa: E402
from gpuppdp.dp.synthesis import MSTSynthesizer, _bin_codes  # noqa: E402
from gpuppdp.dp.synthesis_eval import evaluate_synthetic  # noqa: E402

DRIVER = os.path.join(HERE, "_synth_driver.py")
AGE_BINS = (17, 91, 15)


def _source(backend, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RandomSource(backend, seed=seed, insecure=True)  # reproducible runs


def _adult_binned() -> pd.DataFrame:
    df = pd.read_csv(adult_path(), sep=";", dtype=str)
    df["age"] = _bin_codes(df["age"], AGE_BINS).astype(str)
    return df


def _measures(real, syn) -> dict:
    ev = evaluate_synthetic(real, syn, queries=1000, distance_records=500, backend="cpu")
    return {"tv2_mean": ev["two_way"]["mean"], "tv2_max": ev["two_way"]["max"],
            "tv1_mean": ev["one_way"]["mean"], "query_error": ev["queries"]["mean_abs_error"],
            "identical_share": ev["closest_record"]["identical_share"]}


def _ours(real, backend, seed, eps, delta) -> dict:
    t0 = time.perf_counter()
    synth = MSTSynthesizer(eps, delta, public_domain=True, random=_source(backend, seed))
    syn = synth.fit(real).sample()
    return {"seconds": time.perf_counter() - t0, "rows": len(syn), **_measures(real, syn)}


def _smartnoise(python, real, seed, eps, delta, tmp) -> dict:
    src, out = os.path.join(tmp, "adult.csv"), os.path.join(tmp, "sn.csv")
    real.to_csv(src, index=False)
    run = subprocess.run([python, DRIVER, src, "--epsilon", str(eps), "--delta", str(delta),
                          "--seed", str(seed), "--out", out], capture_output=True, text=True,
                         timeout=3600)
    if run.returncode:
        raise RuntimeError(run.stderr.strip().splitlines()[-1])
    info = json.loads(run.stdout.strip().splitlines()[-1])
    syn = pd.read_csv(out, dtype=str, keep_default_na=False)
    return {"seconds": info["fit_seconds"] + info["sample_seconds"], "rows": len(syn),
            "version": info["version"], **_measures(real, syn)}


def _census_run(rows, backend, eps, delta) -> dict:
    df, h = census(rows, seed=0)
    cols = ["zip", "age", "sex", "race", "hispanic", "marital", "education", "citizenship",
            "occupation", "income"]
    t0 = time.perf_counter()
    synth = MSTSynthesizer(eps, delta, columns=cols, hierarchies={"zip": h["zip"]},
                           levels={"zip": 3}, bins={"age": (0, 100, 20),
                                                    "income": (0, 500000, 25)},
                           public_domain=[c for c in cols if c not in ("zip", "age", "income")],
                           random=_source(backend, 0))
    synth.fit(df)
    fit = time.perf_counter() - t0
    syn = synth.sample(rows)
    return {"rows": rows, "fit_seconds": fit, "seconds": time.perf_counter() - t0,
            "synthetic_rows": len(syn), "edges": [list(e) for e in synth.edges]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_synthesis")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--peers-python", default=None,
                   help="interpreter of a venv with smartnoise-synth (skipped without it)")
    p.add_argument("--census-rows", default="1e6",
                   help="comma-separated census sizes")
    a = p.parse_args()
    backend = resolve_backend(a.backend)
    real = _adult_binned()
    _ours(real.head(2000), backend, 0, a.epsilon, a.delta)  # warm-up: compiles the kernels
    result = {"machine": machine_info(backend), "epsilon": a.epsilon, "delta": a.delta,
              "adult": {"gpuppdp": [], "smartnoise": []}, "census": []}
    print(f"Adult ({len(real)} rows, {real.shape[1]} columns), epsilon {a.epsilon:g}, "
          f"delta {a.delta:g}")
    print(f"{'method':<12}{'seed':>5}{'seconds':>10}{'TV2 mean':>10}{'TV2 max':>10}"
          f"{'TV1 mean':>10}{'query err':>11}{'identical':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(a.seeds):
            runs = [("gpuppdp", _ours(real, backend, seed, a.epsilon, a.delta))]
            if a.peers_python:
                runs.append(("smartnoise", _smartnoise(a.peers_python, real, seed, a.epsilon,
                                                       a.delta, tmp)))
            for name, r in runs:
                result["adult"][name].append({"seed": seed, **r})
                print(f"{name:<12}{seed:>5}{r['seconds']:>10.3f}{r['tv2_mean']:>10.4f}"
                      f"{r['tv2_max']:>10.4f}{r['tv1_mean']:>10.4f}{r['query_error']:>11.4f}"
                      f"{r['identical_share']:>11.3f}")
    for name, runs in result["adult"].items():
        if runs:
            print(f"{name}: mean over seeds: {np.mean([r['seconds'] for r in runs]):.3f} s, "
                  f"TV2 mean {np.mean([r['tv2_mean'] for r in runs]):.4f}, "
                  f"TV2 max {np.mean([r['tv2_max'] for r in runs]):.4f}")
    for text in a.census_rows.split(","):
        rows = row_count(text)
        if rows:
            r = _census_run(rows, backend, a.epsilon, a.delta)
            result["census"].append(r)
            print(f"census {rows:>10} rows: fit {r['fit_seconds']:.2f} s, fit + sample "
                  f"{r['seconds']:.2f} s")
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as fh:
        json.dump(result, fh, indent=2)
    print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
