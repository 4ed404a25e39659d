"""Shared helpers of the benchmark scripts (machine info, timing, tables, JSON output).

Not a benchmark itself; the ``bench_*.py`` scripts import it (they are run as
``python benchmarks/bench_<name>.py``, so this directory is on ``sys.path``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import Callable, Sequence

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def default_json(name: str) -> str:
    """``benchmarks/out/<name>.json`` (next to the scripts, whatever the working directory)."""
    return os.path.join(os.path.relpath(os.path.join(HERE, "out")), f"{name}.json")


def resolve_backend(spec: str):
    """``get_backend(spec)``, exiting with a one-line message when it is unavailable."""
    from gpuppdp.backend import BackendError, get_backend

    try:
        return get_backend(spec)
    except BackendError as exc:
        raise SystemExit(f"error: {exc}")


def add_common_args(p: argparse.ArgumentParser, name: str) -> None:
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"),
                   help="array backend (default auto: the GPU when CuPy can run a kernel)")
    p.add_argument("--repeats", type=_positive, default=5,
                   help="timed runs per case after one warm-up run (default 5)")
    p.add_argument("--json", default=default_json(name),
                   help=f"where to write the results (default {default_json(name)})")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def machine_info(backend) -> dict:
    """Platform, CPU count, library versions, backend and (for CuPy) the GPU's name."""
    import numba
    import pandas

    info = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "pandas": pandas.__version__,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "backend": backend.name,
        "kernels": backend.kernels,
    }
    try:
        info["loadavg_at_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        pass
    try:
        import gpuppdp
        info["gpuppdp"] = getattr(gpuppdp, "__version__", None)
    except Exception:  # pragma: no cover
        pass
    if backend.name == "cupy":
        cp = backend.xp
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"]
        info["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
        info["gpu_memory_bytes"] = int(props.get("totalGlobalMem", 0))
        info["cupy"] = cp.__version__
        try:
            info["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
            info["cuda_driver"] = cp.cuda.runtime.driverGetVersion()
        except Exception:  # pragma: no cover
            pass
    return info


def synchronizer(backend) -> Callable[[], None]:
    """A function that waits for the device (a no-op on the CPU)."""
    if backend.name == "cupy":
        cp = backend.xp
        return lambda: cp.cuda.Device().synchronize()
    return lambda: None


def row_count(text: str) -> int:
    """``--rows`` as a positive whole number, written like ``1e6`` or ``1000000``."""
    try:
        value = int(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--rows expects a number like 1e6, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"--rows must be positive, got {text!r}")
    return value


def summarize(values: Sequence[float]) -> dict:
    vals = [float(v) for v in values]
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
            "runs": vals}


def timed_runs(fn: Callable[[], object], repeats: int, sync: Callable[[], None],
               warmup: bool = True) -> tuple[list[float], list[object]]:
    """One warm-up call (not timed, unless ``warmup`` is False), then ``repeats`` timed calls;
    returns the wall-clock seconds and the calls' return values."""
    if warmup:
        fn()
        sync()
    seconds, outs = [], []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        out = fn()
        sync()
        seconds.append(time.perf_counter() - t0)
        outs.append(out)
    return seconds, outs


def maxrss_bytes() -> int:
    """Peak resident set size of this process so far (``ru_maxrss``; KiB on Linux, bytes on
    macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def fmt_seconds(s: float | None) -> str:
    if s is None or s != s:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.0f}us"
    if s < 1.0:
        return f"{s * 1e3:.1f}ms"
    return f"{s:.2f}s"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)  # pragma: no cover


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(h) for h in headers]] + [[("-" if c is None else str(c)) for c in r]
                                           for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = "  ".join("{:>%d}" % w for w in widths)
    print(line.format(*cells[0]))
    print("  ".join("-" * w for w in widths))
    for r in cells[1:]:
        print(line.format(*r))


def write_json(path: str, payload: dict) -> None:
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, default=_jsonable)
        fh.write("\n")
    print(f"\nwrote {path}")


def _jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def print_machine(info: dict) -> None:
    gpu = f", GPU {info['gpu']}" if "gpu" in info else ""
    print(f"# {info['platform']}, {info['cpu_count']} CPUs, Python {info['python']}, "
          f"NumPy {info['numpy']}, Numba {info['numba']} ({info['numba_threads']} threads), "
          f"backend {info['backend']}{gpu}")
    if "loadavg_at_start" in info:
        print(f"# load average at start: {info['loadavg_at_start']} "
              "(timings are noisy on a shared machine)")


def adult_qids(n_qids: int):
    """Adult with ``n_qids`` quasi-identifiers: 9 = all columns, 8 = all but ``occupation``
    (kept as an insensitive column), as in ARX's reference runs."""
    from gpuppdp import datasets

    data, hierarchies = datasets.adult()
    if n_qids == 9:
        return data, dict(hierarchies), []
    if n_qids == 8:
        return data, {c: h for c, h in hierarchies.items() if c != "occupation"}, ["occupation"]
    raise ValueError(f"n_qids must be 8 or 9, got {n_qids}")


def load_arx_reference() -> dict:
    with open(os.path.join(HERE, "arx_reference.json"), encoding="utf-8") as fh:
        return json.load(fh)


def arx_key(n_qids: int, k: int, suppression: float, metric: str) -> str:
    return f"q{n_qids}-k{k}-s{suppression:g}-{metric}"


def load_arx_cases() -> list[dict]:
    """The cases of ``tests/data/arx_adult.json`` (ARX 3.9.2 runs on Adult: settings,
    expected optimum, ``arx.anonymize_ms_median`` and ``arx.nodes_checked``)."""
    path = os.path.join(os.path.dirname(HERE), "tests", "data", "arx_adult.json")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["cases"]


def arx_case_models(case: dict) -> list:
    """The gpuppdp privacy models of one ``arx_adult.json`` case (its ``"models"`` list)."""
    from gpuppdp import datasets
    from gpuppdp.models import (DistinctLDiversity, EntropyLDiversity, KAnonymity,
                                RecursiveCLDiversity, TCloseness)

    out = []
    for m in case["models"]:
        kind = m["model"]
        if kind == "k-anonymity":
            out.append(KAnonymity(m["k"]))
        elif kind == "distinct-l-diversity":
            out.append(DistinctLDiversity(m["attribute"], m["l"]))
        elif kind == "entropy-l-diversity":
            if m.get("log", "shannon") != "shannon":
                raise ValueError(f"unsupported entropy log {m['log']!r}")
            out.append(EntropyLDiversity(m["attribute"], m["l"]))
        elif kind == "recursive-cl-diversity":
            out.append(RecursiveCLDiversity(m["attribute"], m["c"], m["l"]))
        elif kind == "t-closeness":
            hierarchy = (datasets.adult_path(m["hierarchy"]) if m["distance"] == "hierarchical"
                         else None)
            out.append(TCloseness(m["attribute"], m["t"], m["distance"], hierarchy=hierarchy))
        else:
            raise ValueError(f"unsupported model {m}")
    return out


def arx_case_anonymizer(case: dict, backend, search: str = "flash", models=None):
    """``(Anonymizer, data)`` for one ``arx_adult.json`` case on Adult (``models`` replaces
    the case's models when given)."""
    from gpuppdp import Anonymizer, datasets

    data, hierarchies = datasets.adult()
    anon = Anonymizer(
        quasi_identifiers={c: hierarchies[c] for c in case["quasi_identifiers"]},
        sensitive=[case["sensitive"]] if case.get("sensitive") else [],
        insensitive=case.get("insensitive", []),
        models=arx_case_models(case) if models is None else models,
        suppression_limit=case["suppression_limit"], metric=case["metric"], search=search,
        backend=backend, seed=0)
    return anon, data


def settle(pid: int, quiet: float = 0.1, limit: float = 3.0) -> None:
    """Wait (at most ``limit`` seconds) until process ``pid`` has used no CPU for ``quiet``
    seconds (a live ARX beside our runs: after its runs the JVM goes on compiling and
    collecting on its own threads, which would take a core from ours on a 2-core box).
    Without ``/proc``: ``quiet`` seconds."""
    stat = f"/proc/{pid}/stat"
    if not os.path.exists(stat):
        time.sleep(quiet)
        return

    def used() -> int:
        with open(stat, encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks

    end = time.monotonic() + limit
    before = used()
    while time.monotonic() < end:
        time.sleep(quiet)
        now = used()
        if now == before:
            return
        before = now


class ArxServer:
    """A warm ARX runner in serve mode beside this process (``ArxRunX mode=serve``,
    ``ArxRunLS``: their header comments give the protocol), as a context manager: it is ready
    on entry (else ``SystemExit`` naming it), :meth:`send` writes one command and returns the
    runner's JSON reply, :meth:`quit` ends it and returns its summary (``None`` where the
    runner prints none); ``pid`` is the JVM's, for :func:`settle`."""

    def __init__(self, argv: list[str], name: str):
        self.argv, self.name = argv, name

    def __enter__(self) -> "ArxServer":
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        self.pid = self.proc.pid
        if not json.loads(self.proc.stdout.readline() or "{}").get("ready"):
            self.proc.kill()
            self.proc.wait()
            raise SystemExit(f"error: {self.name} did not start")
        return self

    def send(self, line) -> dict:
        self.proc.stdin.write(f"{line}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def quit(self) -> dict | None:
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        return json.loads(line) if line.strip() else None

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(OSError):  # (the runner gone already)
            self.proc.stdin.close()  # end of input: the runner exits
        self.proc.__exit__(*exc)
