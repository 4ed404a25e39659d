"""Throughput of the DP noise samplers against the memory bound of writing the output.

For each size ``n`` it times, best of ``--repeat`` runs after one warm-up:

* ``write bound``  -- ``out.fill(1.0)`` on a float64 array: writing the output once, the
  floor any sampler producing ``n`` float64 values has to pay;
* ``keystream``    -- ``2 n`` ChaCha20 keystream words (:meth:`RandomSource.random_words`);
* ``random bits``  -- the raw 63-bit draws (:meth:`RandomSource.random_bits`);
* ``discrete noise`` -- :func:`discrete_laplace_noise` (int64, scale 1);
* ``geometric``    -- :class:`GeometricMechanism` release of an int64 array (ε = 1);
* ``laplace``      -- :class:`LaplaceMechanism` release of a float64 array (ε = 1, Δ = 1:
  the fused kernel -- keystream, exact trials, grid rounding, addition -- plus the host-side
  range check);
* ``laplace kernel`` -- the fused kernel alone (:func:`gpuppdp.kernels.dp_noise.noise_grid`);
* ``discrete gaussian`` -- :func:`discrete_gaussian_noise` at σ = 10 (int64; the fused
  rounds of :func:`gpuppdp.kernels.dp_gaussian.gaussian_round`, host or CUDA);
* ``opendp gaussian`` -- OpenDP's discrete Gaussian on integers at the same σ
  (``make_gaussian`` on ``vector_domain(atom_domain(T=int))``, the "contrib" feature; not a
  dependency: ``pip install opendp``), one run on ``min(n, --opendp-size)`` values (its
  write-bound and NumPy columns scaled to that size); skipped with a note when OpenDP is
  not installed;
* ``dp sum``, ``dp mean``, ``dp quantile`` -- :func:`~gpuppdp.dp.dp_sum`,
  :func:`~gpuppdp.dp.dp_mean` and :func:`~gpuppdp.dp.dp_median` of ``n`` values uniform in
  [0, 100] (bounds [0, 100], ε = 1; the whole release from a DataFrame: exact grid sums and
  noise, or the partial sort and the exact exponential mechanism), best of ``--repeat``
  after a warm-up;
* ``opendp sum``, ``opendp quantile`` -- OpenDP's Laplace sum (``then_clamp >> then_sum >>
  then_laplace``, scale 100: ε = 1) and median (``then_quantile_score_candidates`` on the
  10001 candidates 0, 0.01, ..., 100 ``>> then_report_noisy_max_gumbel``, ε = 1) on
  ``min(n, --opendp-size)`` values of a Python list, best of ``--repeat``;
* ``numpy laplace`` -- the reference: ``np.random.default_rng().laplace(size=n)`` plus the
  addition (NumPy's PCG64 and inverse-CDF floats: neither cryptographic nor safe against
  floating-point attacks; on the host whatever the backend).

The column ``x numpy`` is each row's time over the ``numpy laplace`` time at the same size
(per value; the goal for ``laplace`` on the CPU is <= 2).

Then rows for ``--fused-size`` values (default 10**8 float64): the ``laplace`` release and
the ``discrete gaussian`` at that size, timed ``--fused-repeat`` times (best kept) after a
warm-up on a small array, and ``numpy laplace`` at that size.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_dp.json``).
It never asserts times.

Example::

    python benchmarks/bench_dp.py --sizes 1e6,1e7 --backend cpu
    python benchmarks/bench_dp.py --sizes 1e7 --fused-size 1e8 --backend gpu
    python benchmarks/bench_dp.py --sizes 1e6 --cases laplace --fused-size 0
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
from gpuppdp.dp import (
    GeometricMechanism,
    dp_mean,
    dp_median,
    dp_sum,
    LaplaceMechanism,
    RandomSource,
    discrete_gaussian_noise,
    discrete_laplace_noise,
)
from gpuppdp.kernels import dp_noise

CASES = ("write bound", "keystream", "random bits", "discrete noise", "discrete gaussian",
         "opendp gaussian", "geometric", "laplace", "laplace kernel", "numpy laplace",
         "dp sum", "dp mean", "dp quantile", "opendp sum", "opendp quantile")
QUERY_CASES = ("dp sum", "dp mean", "dp quantile", "opendp sum", "opendp quantile")
SIGMA = 10.0  # the discrete Gaussians' σ


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
            "numpy": np.__version__, "backend": backend.name,
            "load_average": list(os.getloadavg())}
    if backend.name == "cupy":
        props = backend.xp.cuda.runtime.getDeviceProperties(0)
        info["device"] = props["name"].decode() if isinstance(props["name"], bytes) \
            else str(props["name"])
        info["cupy"] = backend.xp.__version__
    return info


def _sync_of(backend):
    def sync(a):
        backend.to_host(a.reshape(-1)[-1:])  # a device-to-host copy waits for the device
    return sync


def _row(n, name, seconds, bound, reference=None):
    ratio = f"{seconds / reference:>8.2f}" if reference else f"{'':>8}"
    print(f"{n:>12} {name:<15} {seconds:>9.4f} {n / seconds / 1e6:>11.1f} "
          f"{seconds / bound:>14.1f} {ratio}")
    row = {"n": n, "case": name, "seconds": seconds, "samples_per_s": n / seconds,
           "ratio_to_write_bound": seconds / bound,
           "write_bandwidth_GBps": 8 * n / bound / 1e9}
    if reference:
        row["ratio_to_numpy_laplace"] = seconds / reference
    return row


def _numpy_laplace(x):
    """The non-cryptographic reference: NumPy's Laplace floats added to ``x`` (host)."""
    return x + np.random.default_rng().laplace(size=x.shape[0])


def _laplace_kernel(backend, src: RandomSource, laplace: LaplaceMechanism, x):
    key, n0, n1, base = src._reserve(dp_noise.noise_blocks(x.shape[0],
                                                           laplace.sampler.tables[0].shape[0]))
    return dp_noise.noise_grid(backend, x, key, n0, n1, base, laplace.sampler.tables,
                               laplace.granularity)


def _opendp_gaussian(k: int, bound: float, reference: float, n: int) -> dict | None:
    """OpenDP's discrete Gaussian on ``k`` integers at σ = :data:`SIGMA`, one run (after a
    warm-up on 100 values); None (and a note) when OpenDP is not installed."""
    try:
        import opendp.prelude as opendp
    except ImportError:
        print(f"{'':>12} opendp gaussian: skipped (pip install opendp)")
        return None
    opendp.enable_features("contrib")
    meas = opendp.m.make_gaussian(opendp.vector_domain(opendp.atom_domain(T=int)),
                                  opendp.l2_distance(T=int), scale=SIGMA)
    meas([0] * 100)
    x = [0] * k
    seconds = _timed(lambda: meas(x))
    return _row(k, "opendp gaussian", seconds, bound * k / n, reference * k / n)


def _query_case(name: str, n: int, src: RandomSource, opendp_size: int, repeat: int):
    """``(values, seconds)`` of one query case (module docstring), or None without OpenDP."""
    import pandas as pd

    bounds = {"lower": 0.0, "upper": 100.0, "epsilon": 1.0, "random": src}
    if name.startswith("dp "):
        query = {"dp sum": lambda d: dp_sum(d, "v", **bounds),
                 "dp mean": lambda d: dp_mean(d, "v", **bounds),
                 "dp quantile": lambda d: dp_median(d, "v", **bounds)}[name]
        query(pd.DataFrame({"v": np.linspace(0, 100, 1000)}))  # compile, start
        frame = pd.DataFrame({"v": np.random.default_rng(0).uniform(0, 100, n)})
        return n, _best(lambda: query(frame), lambda a: None, repeat)
    try:
        import opendp.prelude as opendp
    except ImportError:
        print(f"{'':>12} {name}: skipped (pip install opendp)")
        return None
    opendp.enable_features("contrib")
    space = (opendp.vector_domain(opendp.atom_domain(T=float, nan=False)),
             opendp.symmetric_distance())
    if name == "opendp sum":
        meas = space >> opendp.t.then_clamp((0.0, 100.0)) >> opendp.t.then_sum() \
            >> opendp.m.then_laplace(scale=100.0)
    else:
        candidates = [i / 100 for i in range(10001)]
        meas = space >> opendp.t.then_quantile_score_candidates(candidates, 0.5) \
            >> opendp.m.then_report_noisy_max_gumbel(2.0, optimize="min")
    assert meas.map(1) <= 1.0 + 1e-6  # ε = 1, as ours
    k = min(n, opendp_size)
    x = np.random.default_rng(0).uniform(0, 100, k).tolist()
    meas(x[:100])
    return k, _best(lambda: meas(x), lambda a: None, repeat)


def _bench_size(backend, src: RandomSource, n: int, repeat: int, cases,
                opendp_size: int = 10**5) -> list[dict]:
    """Time the selected cases at size ``n``; print one line per case."""
    xp = backend.xp
    laplace = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    geometric = GeometricMechanism(epsilon=1.0)
    out = xp.empty(n, dtype=xp.float64)
    sync = _sync_of(backend)

    def write():
        out.fill(1.0)
        return out

    x_float = xp.zeros(n, dtype=xp.float64) if {"laplace", "laplace kernel"} & set(cases) \
        else None
    x_host = np.zeros(n, dtype=np.float64)
    x_int = xp.zeros(n, dtype=xp.int64) if "geometric" in cases else None
    run = {
        "keystream": lambda: src.random_words(2 * n),
        "random bits": lambda: src.random_bits(n),
        "discrete noise": lambda: discrete_laplace_noise(n, scale=1.0, random=src),
        # the exact discrete Gaussian (CKS 2020) at σ = 10 on the integers (array passes)
        "discrete gaussian": lambda: discrete_gaussian_noise(n, sigma=SIGMA, random=src),
        "geometric": lambda: geometric.release(x_int, random=src),
        "laplace": lambda: laplace.release(x_float, random=src),
        "laplace kernel": lambda: _laplace_kernel(backend, src, laplace, x_float),
    }
    bound = _best(write, sync, repeat)
    reference = _best(lambda: _numpy_laplace(x_host), lambda a: None, repeat)
    rows = [_row(n, "write bound", bound, bound, reference)] if "write bound" in cases else []
    for name in cases:
        if name == "numpy laplace":
            rows.append(_row(n, name, reference, bound, reference))
        elif name == "opendp gaussian":
            row = _opendp_gaussian(min(n, opendp_size), bound, reference, n)
            rows += [row] if row else []
        elif name in QUERY_CASES:
            got = _query_case(name, n, src, opendp_size, repeat)
            if got:
                k, seconds = got
                rows.append(_row(k, name, seconds, bound * k / n, reference * k / n))
        elif name != "write bound":
            rows.append(_row(n, name, _best(run[name], sync, repeat), bound, reference))
    return rows


def _bench_fused(backend, src: RandomSource, n: int, repeat: int) -> list[dict]:
    """The Laplace release (fused kernel) of ``n`` float64 values and ``n`` discrete
    Gaussian values at σ = 10 (fused rounds), each warmed up on a small array; and the write
    bound at that size (issue 37's GPU goal: 10**8 discrete Gaussian values within 3x it)."""
    xp = backend.xp
    laplace = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    sync = _sync_of(backend)
    sync(laplace.release(xp.zeros(100_000, dtype=xp.float64), random=src))  # compile, start
    sync(discrete_gaussian_noise(100_000, sigma=SIGMA, random=src))
    x = xp.zeros(n, dtype=xp.float64)
    out = xp.empty(n, dtype=xp.float64)

    def write():
        out.fill(1.0)
        return out

    bound = _best(write, sync, 1)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sync(laplace.release(x, random=src))
        times.append(time.perf_counter() - t0)
    x = None
    gaussian = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sync(discrete_gaussian_noise(n, sigma=SIGMA, random=src))
        gaussian.append(time.perf_counter() - t0)
    out = None  # free the device arrays before the host reference
    x_host = np.zeros(n, dtype=np.float64)
    reference = min(_timed(lambda: _numpy_laplace(x_host)) for _ in range(repeat))
    return [_row(n, "write bound", bound, bound, reference),
            _row(n, "laplace (fused)", min(times), bound, reference),
            _row(n, "discrete gaussian (fused)", min(gaussian), bound, reference),
            _row(n, "numpy laplace", reference, bound, reference)]


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _cases(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    bad = [c for c in names if c not in CASES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"--cases takes names among {', '.join(CASES)}; "
                                         f"got {text!r}")
    return names


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=_sizes, default=[10**6, 10**7],
                   help="comma-separated array sizes (default 1e6,1e7)")
    p.add_argument("--cases", type=_cases, default=list(CASES),
                   help=f"comma-separated cases (default all: {', '.join(CASES)})")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per case (best kept)")
    p.add_argument("--fused-size", type=lambda t: int(float(t)), default=10**8,
                   help="size of the fused Laplace and discrete Gaussian rows (default 1e8; "
                   "0 skips them)")
    p.add_argument("--fused-repeat", type=int, default=1,
                   help="timed runs of the fused row (best kept; default 1)")
    p.add_argument("--opendp-size", type=lambda t: int(float(t)), default=10**5,
                   help="values of the opendp gaussian row (default 1e5; about 26 us each)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"))
    p.add_argument("--json", default=os.path.join("benchmarks", "out", "bench_dp.json"),
                   help="where to write the results")
    args = p.parse_args(argv)

    if args.repeat < 1 or args.fused_repeat < 1:
        p.error("--repeat and --fused-repeat must be >= 1")
    if args.fused_size < 0:
        p.error(f"--fused-size must be >= 0, got {args.fused_size}")
    backend = get_backend(args.backend)
    src = RandomSource(backend)
    print(f"backend: {backend.name} (randomness: {src.generator}); "
          f"cpu_count={os.cpu_count()}; best of {args.repeat}")
    print(f"{'n':>12} {'case':<15} {'seconds':>9} {'Msamples/s':>11} {'x write bound':>14} "
          f"{'x numpy':>8}")
    rows = []
    for n in args.sizes:
        rows += _bench_size(backend, src, n, args.repeat, args.cases, args.opendp_size)
    if args.fused_size:
        rows += _bench_fused(backend, src, args.fused_size, args.fused_repeat)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump({"command": " ".join([os.path.basename(sys.executable)] + sys.argv),
                   "machine": _machine(backend), "randomness": src.generator,
                   "repeat": args.repeat, "results": rows}, fh, indent=2)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
