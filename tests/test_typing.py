"""The public API is typed for a user's type checker: the names ``gpuppdp`` exports (imported
lazily at run time) have their real types under ``TYPE_CHECKING``, the package ships
``py.typed``, and mypy accepts a user's correct code and flags a wrong call.  mypy runs with
the project's own configuration (``[tool.mypy]`` in pyproject.toml): an error in a package
module the user's code imports fails the test too, except in the modules listed there as not
clean yet."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy")
ROOT = Path(__file__).resolve().parents[1]

USER = """
from gpuppdp import Anonymizer, DistinctLDiversity, Hierarchy, KAnonymity, datasets
from gpuppdp.models import TCloseness

data, hierarchies = datasets.adult()
qids = {c: hierarchies[c] for c in ["sex", "age", "race"]}
result = Anonymizer(quasi_identifiers=qids, sensitive=["occupation"], k=5,
                    models=[DistinctLDiversity("occupation", 3), KAnonymity(2)],
                    suppression_limit=0.05).fit(data)
loss: float = result.information_loss
levels: dict[str, int] = result.transformation
t = TCloseness("occupation", 0.2)
reveal_type(Anonymizer)
"""

WRONG = """
from gpuppdp import Anonymizer
Anonymizer(quasi_identifiers={}, k="five", bogus=1)
"""


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory) -> Path:
    """One mypy cache for the session's runs, shared by both test workers (their temporary
    folders share a parent), so that only the first run checks the package cold; the runs
    take turns (:func:`_one_at_a_time`): mypy's cache is not written for concurrent runs."""
    return tmp_path_factory.getbasetemp().parent / "mypy_cache"


@contextlib.contextmanager
def _one_at_a_time(cache: Path):
    """Hold an exclusive lock beside ``cache`` (a no-op where ``fcntl`` is missing)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(f"{cache}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run_mypy(cache: Path, args: list[str], **kwargs) -> subprocess.CompletedProcess:
    with _one_at_a_time(cache):
        return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args],
                              capture_output=True, text=True, timeout=600, **kwargs)


def _mypy(tmp_path: Path, cache: Path, source: str) -> subprocess.CompletedProcess:
    (tmp_path / "user.py").write_text(textwrap.dedent(source))
    return _run_mypy(cache, ["--config-file", str(ROOT / "pyproject.toml"), "user.py"],
                     cwd=tmp_path, env={"MYPYPATH": str(ROOT), "PATH": ""})


@pytest.mark.slow
def test_a_users_code_type_checks(tmp_path, mypy_cache):
    assert (ROOT / "gpuppdp" / "py.typed").is_file()
    run = _mypy(tmp_path, mypy_cache, USER)
    assert run.returncode == 0, run.stdout + run.stderr
    assert 'Revealed type is "def (*, quasi_identifiers:' in run.stdout  # not "Any"


@pytest.mark.slow
def test_a_wrong_call_is_flagged(tmp_path, mypy_cache):
    run = _mypy(tmp_path, mypy_cache, WRONG)
    assert run.returncode == 1
    assert 'Unexpected keyword argument "bogus"' in run.stdout
    assert 'Argument "k" to "Anonymizer" has incompatible type "str"' in run.stdout


@pytest.mark.slow
def test_the_package_type_checks(mypy_cache):
    """What CI runs: ``python -m mypy`` from the repository root (``[tool.mypy]``'s files)."""
    run = _run_mypy(mypy_cache, [], cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
