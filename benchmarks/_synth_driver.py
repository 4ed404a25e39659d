"""Run smartnoise-synth's MST on a categorical CSV; run by ``bench_synthesis.py`` with the
interpreter of the venv that holds smartnoise-synth (``--peers-python``), one fit per process.

Not a benchmark itself and not imported by gpuppdp.  Every column is passed as categorical
(numeric columns arrive already cut into bins); ``MSTSynthesizer(epsilon, delta)`` is fitted
(``preprocessor_eps=0``: the domains are read from the data, as they are public here) and
samples as many rows as the input has; the rows go to ``--out`` (CSV) and one JSON line says
the version and the seconds of ``fit`` and of ``sample``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import time
import warnings

import numpy as np
import pandas as pd


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    warnings.simplefilter("ignore")
    from snsynth.mst import MSTSynthesizer

    np.random.seed(a.seed)  # smartnoise draws its noise from NumPy's global generator
    data = pd.read_csv(a.input, dtype=str, keep_default_na=False)
    t0 = time.perf_counter()
    synth = MSTSynthesizer(epsilon=a.epsilon, delta=a.delta)
    synth.fit(data, categorical_columns=list(data.columns), preprocessor_eps=0.0)
    t1 = time.perf_counter()
    rows = synth.sample(len(data))
    t2 = time.perf_counter()
    pd.DataFrame(rows, columns=data.columns).to_csv(a.out, index=False)
    print(json.dumps({"version": importlib.metadata.version("smartnoise-synth"),
                      "fit_seconds": t1 - t0, "sample_seconds": t2 - t1, "rows": len(data)}))


if __name__ == "__main__":
    main()
