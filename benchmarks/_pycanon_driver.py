"""Time one pycanon measure on a table; run by ``bench_checker.py`` in pycanon's own venv.

Not a benchmark itself and not imported by gpuppdp: pycanon pins NumPy/pandas versions of its
own, so ``bench_checker.py`` runs this file with the interpreter of a separate virtual
environment (``--pycanon-python``), one measure per process.

The table comes as a ``.npz`` file: for every column ``c`` an integer array ``codes_<c>`` and
a string array ``labels_<c>``; the DataFrame has object (``str``) columns
``labels[codes]``, as pycanon's examples use.  It calls the pycanon function ``--measure``
``--repeats`` times (no warm-up: pycanon has nothing to compile or cache) and prints one JSON
line: versions, the value and the seconds of every call.

Example (what bench_checker.py runs)::

    /work/pycanon-venv/bin/python benchmarks/_pycanon_driver.py --table t.npz \\
        --qids age,sex --sensitive occupation --measure k_anonymity
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time

import numpy as np
import pandas as pd

MEASURES = ("k_anonymity", "alpha_k_anonymity", "l_diversity", "entropy_l_diversity",
            "recursive_c_l_diversity", "t_closeness", "basic_beta_likeness",
            "enhanced_beta_likeness", "delta_disclosure")


def _plain(value):
    """JSON-friendly: tuples to lists, NumPy scalars to Python, NaN/inf to strings."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", required=True, help=".npz file with codes_<col>/labels_<col>")
    p.add_argument("--qids", required=True, help="comma-separated quasi-identifiers")
    p.add_argument("--sensitive", required=True)
    p.add_argument("--measure", required=True, choices=MEASURES)
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args(argv)

    import pycanon
    from pycanon import anonymity

    qids = args.qids.split(",")
    t0 = time.perf_counter()
    with np.load(args.table, allow_pickle=False) as z:
        data = pd.DataFrame({c: z[f"labels_{c}"].astype(object)[z[f"codes_{c}"]]
                             for c in qids + [args.sensitive]})
    load = time.perf_counter() - t0
    fn = getattr(anonymity, args.measure)
    seconds, value = [], None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        if args.measure == "k_anonymity":
            value = fn(data, qids)
        else:
            value = fn(data, qids, [args.sensitive])
        seconds.append(time.perf_counter() - t0)
    print(json.dumps({"measure": args.measure, "value": _plain(value), "seconds": seconds,
                      "load_seconds": load, "rows": len(data),
                      "pycanon": getattr(pycanon, "__version__", None),
                      "numpy": np.__version__, "pandas": pd.__version__,
                      "python": platform.python_version()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
