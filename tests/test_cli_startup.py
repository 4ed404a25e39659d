"""Start-up of the command line: building the parser (``gpuppdp --help``, ``--version``, each
subcommand's ``--help``) imports only the standard library, so it loads no NumPy, pandas,
Numba or PyArrow; the parser's fixed choices (:mod:`gpuppdp.cli.choices`) equal the library's
own constants.  No wall-clock assertions: the imports are checked on ``sys.modules``."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import gpuppdp
from gpuppdp.cli import choices
from gpuppdp.cli.main import build_parser, main

HEAVY = ("pandas", "numpy", "numba", "pyarrow", "scipy", "cupy")


def _command_paths(parser, path=()) -> list[tuple[str, ...]]:
    """Every subcommand of ``parser``, nested ones (``hierarchy build``) too, as argv paths."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(path + (name,))
                found.extend(_command_paths(sub, path + (name,)))
    return found


COMMANDS = _command_paths(build_parser())


def _heavy_modules_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; the heavy packages then in ``sys.modules`` and the
    ``gpuppdp`` modules loaded."""
    probe = (f"{code}\n"
             "import json, sys\n"
             f"print(json.dumps({{'heavy': sorted(m for m in {list(HEAVY)!r} "
             "if m in sys.modules), 'gpuppdp': sorted(m for m in sys.modules "
             "if m.split('.')[0] == 'gpuppdp')}))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_build_parser_imports_only_the_standard_library():
    loaded = _heavy_modules_after(
        "import importlib\n"
        "importlib.import_module('gpuppdp.cli.main').build_parser()")
    assert loaded["heavy"] == []
    # the command line and the package's modules of the standard library only
    stdlib_only = {"gpuppdp", "gpuppdp.errors", "gpuppdp.stops"}
    assert all(m in stdlib_only or m.startswith("gpuppdp.cli") for m in loaded["gpuppdp"]), \
        loaded["gpuppdp"]


def test_the_console_script_reaches_its_signal_handlers_before_any_subcommand():
    """The console script's import (``from gpuppdp.cli import main``) loads no subcommand
    module, and :func:`main` has its stop-signal handlers in place before it imports them: a
    ``kill`` soon after start-up finds them (on a loaded machine the subcommands' imports took
    longer than the 0.3 s after which CI's signal test sends SIGTERM)."""
    loaded = _heavy_modules_after("from gpuppdp.cli import main")
    assert loaded["heavy"] == []
    assert not any(m.startswith("gpuppdp.cli.") and m != "gpuppdp.cli.main"
                   for m in loaded["gpuppdp"]), loaded["gpuppdp"]
    probe = ("import contextlib, io, signal\n"
             "from gpuppdp.cli import anonymize, main\n"
             "register, seen = anonymize.register, []\n"
             "def spy(sub):\n"
             "    seen.append(type(signal.getsignal(signal.SIGTERM)).__name__)\n"
             "    return register(sub)\n"
             "anonymize.register = spy\n"
             "with contextlib.redirect_stdout(io.StringIO()), "
             "contextlib.suppress(SystemExit):\n"
             "    main(['--version'])\n"
             "print(seen)\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["['_Stops']"]


def test_every_subcommand_is_probed():
    """The probe below finds the subcommands from the parser itself (nested ones too)."""
    assert {("perturb",), ("hierarchy", "build"), ("attack", "reconstruct"),
            ("generate", "census")} <= set(COMMANDS)


@pytest.mark.parametrize("argv", [["--help"], ["--version"]]
                         + [[*path, "--help"] for path in COMMANDS])
def test_help_and_version_load_no_heavy_package(argv):
    """Through :func:`main`, as the console script runs: the parser exits before the run
    imports anything."""
    loaded = _heavy_modules_after(
        "import contextlib, io\n"
        "from gpuppdp.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0, exc.code\n"
        "    else:\n"
        "        raise AssertionError('no exit')\n")
    assert loaded["heavy"] == []


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"gpuppdp {gpuppdp.__version__}\n"
    assert gpuppdp.__version__ == metadata.version("gpuppdp")


def test_console_script_version():
    script = Path(sys.executable).parent / "gpuppdp"
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "gpuppdp.cli.main"]
    proc = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"gpuppdp {metadata.version('gpuppdp')}\n"
    assert proc.stderr == ""


def test_choices_equal_the_library_constants():
    from gpuppdp.backend import BACKEND_CHOICES
    from gpuppdp.census import ROW_GROUP_ROWS
    from gpuppdp.dp.releases import MECHANISMS
    from gpuppdp.engine.metrics import METRICS
    from gpuppdp.engine.search.samarati import PREFERENCES
    from gpuppdp.engine.search import SEARCHES
    from gpuppdp.engine.transform import SUPPRESSION_MODES
    from gpuppdp.models import TCLOSENESS_DISTANCES
    from gpuppdp.algorithms.tds import GENERALIZATIONS

    assert choices.TDS_GENERALIZATIONS == tuple(GENERALIZATIONS)
    assert choices.BACKENDS == tuple(BACKEND_CHOICES)
    assert choices.METRICS == tuple(sorted(METRICS))
    assert choices.SEARCHES == tuple(SEARCHES)
    assert choices.PREFERENCES == tuple(PREFERENCES)
    assert choices.SUPPRESSION_MODES == tuple(SUPPRESSION_MODES)
    assert choices.TCLOSENESS_DISTANCES == tuple(TCLOSENESS_DISTANCES)
    assert choices.MECHANISMS == tuple(MECHANISMS)
    assert choices.CENSUS_ROW_GROUP_ROWS == ROW_GROUP_ROWS


def test_others_choices_are_the_roles_schema_accepts():
    """The schema has no constant of its ``others`` roles: each choice passes its check (the
    next check, on the missing quasi-identifiers, fails instead) and another word does not."""
    from gpuppdp.engine.encoding import Schema, SchemaError

    for others in choices.OTHERS:
        with pytest.raises(SchemaError, match="quasi-identifier"):
            Schema({}, others=others)
    with pytest.raises(SchemaError, match="others must be"):
        Schema({}, others="keep")
