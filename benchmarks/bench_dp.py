"""Throughput of the DP noise samplers against the memory bound of writing the output.

For each size ``n`` it times, best of ``--repeat`` runs after one warm-up:

* ``write bound``  -- ``out.fill(1.0)`` on a float64 array: writing the output once, the
  floor any sampler producing ``n`` float64 values has to pay;
* ``random bits``  -- the raw 63-bit draws (:meth:`RandomSource.random_bits`);
* ``discrete noise`` -- :func:`discrete_laplace_noise` (int64);
* ``geometric``    -- :class:`GeometricMechanism` release of an int64 array;
* ``laplace``      -- :class:`LaplaceMechanism` release of a float64 array (grid sampler).

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_dp.json``).
It never asserts times.

Example::

    python benchmarks/bench_dp.py --sizes 1e6,1e7 --backend cpu
    python benchmarks/bench_dp.py --sizes 1e7,1e8 --backend gpu
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from gpuppdp.backend import get_backend
from gpuppdp.dp import (GeometricMechanism, LaplaceMechanism, RandomSource,
                        discrete_laplace_noise)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(float(s)) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--sizes expects numbers like 1e6,1e7, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"--sizes must be positive, got {text!r}")
    return sizes


def _best(fn, sync, repeat: int) -> float:
    sync(fn())  # warm-up: allocations, kernel compilation
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sync(fn())
        times.append(time.perf_counter() - t0)
    return min(times)


def _machine(backend) -> dict:
    info = {"platform": platform.platform(), "processor": platform.processor(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "backend": backend.name}
    if backend.name == "cupy":
        props = backend.xp.cuda.runtime.getDeviceProperties(0)
        info["device"] = props["name"].decode() if isinstance(props["name"], bytes) \
            else str(props["name"])
        info["cupy"] = backend.xp.__version__
    return info


def _bench_size(backend, src: RandomSource, n: int, repeat: int) -> list[dict]:
    """Time every case at size ``n``; print one line per case."""
    xp = backend.xp
    laplace = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    geometric = GeometricMechanism(epsilon=1.0)
    out = xp.empty(n, dtype=xp.float64)
    x_float = xp.zeros(n, dtype=xp.float64)
    x_int = xp.zeros(n, dtype=xp.int64)

    def sync(a):
        backend.to_host(a.reshape(-1)[-1:])  # a device-to-host copy waits for the device

    def write():
        out.fill(1.0)
        return out

    cases = {
        "write bound": write,
        "random bits": lambda: src.random_bits(n),
        "discrete noise": lambda: discrete_laplace_noise(n, scale=1.0, random=src),
        "geometric": lambda: geometric.release(x_int, random=src),
        "laplace": lambda: laplace.release(x_float, random=src),
    }
    rows = []
    bound = _best(write, sync, repeat)
    for name, fn in cases.items():
        seconds = bound if fn is write else _best(fn, sync, repeat)
        rows.append({"n": n, "case": name, "seconds": seconds, "samples_per_s": n / seconds,
                     "ratio_to_write_bound": seconds / bound,
                     "write_bandwidth_GBps": 8 * n / bound / 1e9})
        print(f"{n:>12} {name:<15} {seconds:>9.4f} {n / seconds / 1e6:>11.1f} "
              f"{seconds / bound:>14.1f}")
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=_sizes, default=[10**6, 10**7],
                   help="comma-separated array sizes (default 1e6,1e7)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per case (best kept)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"))
    p.add_argument("--json", default=os.path.join("benchmarks", "out", "bench_dp.json"),
                   help="where to write the results")
    args = p.parse_args(argv)

    if args.repeat < 1:
        p.error(f"--repeat must be >= 1, got {args.repeat}")
    backend = get_backend(args.backend)
    src = RandomSource(backend)
    print(f"backend: {backend.name} ({src.streams} random stream(s)); "
          f"cpu_count={os.cpu_count()}; best of {args.repeat}")
    print(f"{'n':>12} {'case':<15} {'seconds':>9} {'Msamples/s':>11} {'x write bound':>14}")
    rows = []
    for n in args.sizes:
        rows += _bench_size(backend, src, n, args.repeat)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump({"command": " ".join([os.path.basename(sys.executable)] + sys.argv),
                   "machine": _machine(backend), "streams": src.streams,
                   "repeat": args.repeat, "results": rows}, fh, indent=2)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
