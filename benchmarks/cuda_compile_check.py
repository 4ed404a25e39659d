"""Compile every CUDA kernel the tests launch for a GPU, on a machine without one.

Numba's CUDA simulator runs a kernel as Python: it accepts code that the CUDA compiler refuses
(a ``cuda.local.array`` sized by an expression, a NumPy call the device has not), so a kernel
can pass every simulator test and still fail on its first GPU (the eighteenth session's H200
found one).  This check closes that gap without a GPU:

1. ``record``: the simulator tier of the tests that launch CUDA kernels runs with
   ``GPUPPDP_RECORD_LAUNCHES`` set, so that :func:`gpuppdp.kernels.cudalaunch.launch` writes
   each kernel's first launch per argument signature (its Numba types) to a file;
2. ``compile``: in a process without the simulator, each recorded kernel is compiled to PTX
   for ``--cc`` (default 9.0: Hopper) with those types by numba-cuda's compiler (NVVM, no
   driver needed), and every failure is printed with its compiler message.

It needs numba-cuda and the CUDA toolkit's NVVM, e.g. ``pip install "numba-cuda[cu12]"``
(about 0.5 GB); it exits 1 when a kernel does not compile or no launch was recorded.  It is not
part of the test tiers (a minute or two of compiling); run it before lending a GPU::

    python benchmarks/cuda_compile_check.py                  # record, then compile
    python benchmarks/cuda_compile_check.py --record FILE    # record only (the test venv)
    python benchmarks/cuda_compile_check.py --launches FILE  # compile only (numba-cuda's)
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: the test modules whose simulator tier launches the package's CUDA kernels
TESTS = ("test_kernels.py", "test_groupby.py", "test_dp_chacha.py", "test_dp_sampler.py",
         "test_dp_mechanisms.py", "test_dp_gaussian.py", "test_dp_gaussian_fused.py",
         "test_dp_summation.py", "test_flash_sparse.py", "test_cudalaunch.py",
         "test_models_ldiv_tclose.py", "test_risk.py", "test_utility.py", "test_perturb.py",
         "test_microaggregation.py", "test_mdav_grid.py", "test_vmdav.py", "test_mondrian.py",
         "test_explore.py")


def record(path: str, workers: int) -> None:
    """Run :data:`TESTS` (default and slow tiers) under the simulator, recording launches."""
    env = dict(os.environ, GPUPPDP_RECORD_LAUNCHES=path, NUMBA_ENABLE_CUDASIM="1")
    env.pop("GPUPPDP_TEST_GPU", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m",
               "slow or not slow", "-n", str(workers),
               *(os.path.join(ROOT, "tests", t) for t in TESTS)]
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "(no output)")


def _type(spec):
    from numba import types

    if isinstance(spec, list):
        dtype, ndim, layout = spec
        return types.Array(getattr(types, dtype), ndim, layout)
    return types.boolean if spec == "bool" else getattr(types, spec)


def _kernels() -> dict:
    """Kernel name -> the package's CUDA dispatchers of that name (every module imported)."""
    import gpuppdp
    from numba.cuda.dispatcher import CUDADispatcher

    found: dict = {}
    for info in pkgutil.walk_packages(gpuppdp.__path__, "gpuppdp."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - an optional dependency: its kernels are not ours
            continue
        for value in vars(module).values():
            if isinstance(value, CUDADispatcher):  # kernels and device functions
                found.setdefault(value.py_func.__name__, {})[id(value)] = value
    return {name: list(d.values()) for name, d in found.items()}


def compile_all(path: str, cc: tuple[int, int]) -> int:
    """Compile each launch recorded in ``path``; the number of failures."""
    import numba.cuda.dispatcher as dispatcher_module
    from numba import cuda

    class _Device:  # the compute capability numba-cuda asks the current device for
        compute_capability = cc

    dispatcher_module.get_current_device = _Device  # no driver: compile for ``cc``
    with open(path) as f:  # each distinct launch once; the package's kernels, not a test's
        lines = sorted({line.strip() for line in f if line.strip()})
    launches = [launch for launch in map(json.loads, lines)
                if launch["module"].startswith("gpuppdp.")]
    if not launches:
        print(f"no launch recorded in {path}")
        return 1
    kernels = _kernels()
    failures = 0
    for launch in launches:
        name = launch["kernel"]
        signature = tuple(_type(a) for a in launch["args"])
        candidates = kernels.get(name, [])
        errors = []
        t0 = time.perf_counter()
        for dispatcher in candidates:
            try:
                cuda.compile_ptx(dispatcher.py_func, signature, cc=cc)
                break
            except Exception as exc:  # noqa: BLE001 - the compiler's verdict, reported
                errors.append(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0:6]}")
        else:
            failures += 1
            why = "; ".join(errors) if errors else "no CUDA dispatcher of that name"
            print(f"FAIL {launch['module']}.{name}{tuple(map(str, signature))}: {why}")
            continue
        print(f"ok   {name} ({len(signature)} arguments, {time.perf_counter() - t0:.1f} s)")
    print(f"{len(launches) - failures} of {len(launches)} recorded launches compile for "
          f"sm_{cc[0]}{cc[1]}")
    launched = {launch["kernel"] for launch in launches}
    idle = sorted(name for name, found in kernels.items() if name not in launched and
                  not all(d.targetoptions.get("device") for d in found))
    if idle:  # what the simulator tier never launches (e.g. kernels for a device's CuPy path)
        print(f"never launched by these tests, so not compiled: {', '.join(idle)}")
    return failures


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--record", metavar="FILE", help="record the launches into FILE only")
    p.add_argument("--launches", metavar="FILE",
                   help="compile what FILE recorded (no test run)")
    p.add_argument("--cc", default="9.0", help="compute capability (default 9.0)")
    p.add_argument("--workers", type=int, default=2, help="pytest workers (default 2)")
    args = p.parse_args(argv)
    cc = tuple(int(x) for x in args.cc.split("."))
    if args.launches:
        return 1 if compile_all(args.launches, cc) else 0
    if args.record:
        record(os.path.abspath(args.record), args.workers)
        return 0 if os.path.exists(args.record) else 1
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "launches.jsonl")
        record(path, args.workers)
        if not os.path.exists(path):
            print("no launch recorded: were the tests run under the simulator?")
            return 1
        # a fresh process: this one must not have imported Numba with the simulator on
        env = dict(os.environ)
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        return subprocess.run([sys.executable, __file__, "--launches", path, "--cc", args.cc],
                              env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
