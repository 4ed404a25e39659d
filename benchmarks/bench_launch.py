"""Host time of the small device operations a lattice walk is made of (GPU only).

A batch of the GPU's lattice walk is a few kernel launches, a few small copies and a few
synchronizations; on a small lattice (9-QID Adult: 20 levels) their host cost, not the device's
work, sets the pace.  Per operation, the mean host time of ``--calls`` calls in a row (the
device synchronized once at the end):

* ``numba launch, N arrays`` -- a Numba ``@cuda.jit`` kernel on N CuPy arrays through Numba's
  dispatcher (``kernel[grid, block](...)``), and the same through
  :func:`gpuppdp.kernels.cudalaunch.launch`;
* ``cupy elementwise`` -- ``x += 1`` on 1,024 values;
* ``copy to host`` -- one int64 from the device (``int(x[-1])``: a synchronization);
* ``copy to device`` -- 20 int64 values (``cupy.asarray``).

It prints a table and writes JSON; it asserts nothing about time.  Example::

    python benchmarks/bench_launch.py --calls 2000
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import cuda
from _common import (
    default_json,
    machine_info,
    print_machine,
    print_table,
    resolve_backend,
    synchronizer,
    write_json,
)


@cuda.jit
def _one_array(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] += 1


@cuda.jit
def _fourteen_arrays(a, b, c, d, e, f, g, h, i_, j, k, l_, m, n):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] += (b[0] + c[0] + d[0] + e[0] + f[0] + g[0] + h[0] + i_[0] + j[0] + k[0] + l_[0]
                 + m[0] + n[0])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2000, help="calls per operation (default 2000)")
    p.add_argument("--json", default=default_json("bench_launch"),
                   help=f"where to write the results (default {default_json('bench_launch')})")
    args = p.parse_args(argv)
    backend = resolve_backend("gpu")
    cp, sync = backend.xp, synchronizer(backend)
    from gpuppdp.kernels.cudalaunch import launch

    info = machine_info(backend)
    print_machine(info)
    arrays = [cp.zeros(1024, dtype=cp.int64) for _ in range(14)]
    host = np.arange(20, dtype=np.int64)
    x = arrays[0]
    operations = {
        "numba launch, 1 array": lambda: _one_array[4, 256](x),
        "numba launch, 14 arrays": lambda: _fourteen_arrays[4, 256](*arrays),
        "cudalaunch.launch, 1 array": lambda: launch(_one_array, 4, 256, x),
        "cudalaunch.launch, 14 arrays": lambda: launch(_fourteen_arrays, 4, 256, *arrays),
        "cupy elementwise": lambda: x.__iadd__(1),
        "copy to host (1 value)": lambda: int(x[-1]),
        "copy to device (20 values)": lambda: cp.asarray(host),
    }
    rows, cases = [], []
    for name, operation in operations.items():
        operation()
        operation()  # compiled, and the launcher's first (checked) launch done
        sync()
        t0 = time.perf_counter()
        for _ in range(args.calls):
            operation()
        sync()
        mean = (time.perf_counter() - t0) / args.calls
        rows.append([name, f"{mean * 1e6:.1f} µs"])
        cases.append({"operation": name, "mean_seconds": mean, "calls": args.calls})
    print()
    print_table(["operation", "host time a call"], rows)
    print()
    write_json(args.json, {"machine": info, "cases": cases})
    return 0


if __name__ == "__main__":
    sys.exit(main())
