"""Execute every example notebook top to bottom with nbclient; exit 1 on the first error.

    python notebooks/run_all.py                 # all of them
    python notebooks/run_all.py 03_dp_ledger    # those whose name contains the word

Kernel ``python3`` (ipykernel of the running interpreter), a timeout per cell (``--timeout``,
default 300 s); the notebooks run in this folder and are not rewritten (``--save DIR`` writes
the executed copies there).  Prints each notebook's wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent


def run(path: Path, timeout: int = 300, save: Path | None = None) -> float:
    """Execute one notebook; returns its wall time in seconds (raises on a failing cell).
    ``save``: a folder to write the executed notebook to, outputs included."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(HERE)}}).execute()
    seconds = time.perf_counter() - start
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, save / path.name)
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only notebooks whose name contains one")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    parser.add_argument("--save", type=Path, metavar="DIR",
                        help="write the executed notebooks (with outputs) to DIR")
    args = parser.parse_args(argv)
    paths = sorted(p for p in HERE.glob("*.ipynb")
                   if not args.names or any(n in p.name for n in args.names))
    if not paths:
        print("no notebook matched", file=sys.stderr)
        return 1
    for path in paths:
        try:
            seconds = run(path, args.timeout, args.save)
        except CellExecutionError as exc:
            print(f"FAILED {path.name}\n{exc}", file=sys.stderr)
            return 1
        print(f"ok {path.name} {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
