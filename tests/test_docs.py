"""The documentation site (docs/) and the example notebooks (notebooks/).

Fast checks: the command-line reference renders every subcommand and every option of the
parser (docs/cliref.py), every privacy model has its page, the committed notebooks are what
notebooks/make_notebooks.py writes (no outputs, the install line first).  Slow ones (``-m
slow``; they need the ``docs`` extra): the Sphinx build with warnings as errors, and every
notebook executed top to bottom.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOKS = ROOT / "notebooks"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cliref():
    return _load(DOCS / "cliref.py", "gpuppdp_docs_cliref")


def _parsers(parser: argparse.ArgumentParser):
    """Every parser of the tree, read from argparse directly (not through cliref)."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_cli_reference_has_every_subcommand_and_option(cliref):
    from gpuppdp.cli.main import build_parser

    commands = {c.prog: c for c in cliref.commands()}
    parsers = list(_parsers(build_parser()))
    assert {p.prog for p in parsers} == set(commands)
    assert {"gpuppdp anonymize", "gpuppdp generate census", "gpuppdp attack linkage",
            "gpuppdp attack reconstruct", "gpuppdp dp-histogram"} <= set(commands)
    for parser in parsers:
        command = commands[parser.prog]
        assert command.usage.startswith(f"usage: {parser.prog}")
        documented = {n for _, options in command.groups for o in options for n in o.names}
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action,
                                                              argparse._SubParsersAction):
                continue
            names = action.option_strings or [action.metavar or action.dest]
            assert set(names) <= documented, (parser.prog, names)


def test_cli_reference_help_text_is_expanded(cliref):
    """Help strings are argparse's own, with %(default)s and the like filled in."""
    anonymize = next(c for c in cliref.commands() if c.prog == "gpuppdp anonymize")
    options = {n: o for _, group in anonymize.groups for o in group for n in o.names}
    assert "%(" not in " ".join(o.help for o in options.values())
    assert options["--k"].metavar == "K" and "k-anonymity" in options["--k"].help
    assert options["--backend"].metavar.startswith("{") and "cpu" in options["--backend"].metavar


def test_every_privacy_model_has_a_page():
    import gpuppdp.models as models
    from gpuppdp.core.model import PrivacyModel

    index = (DOCS / "models" / "index.md").read_text(encoding="utf-8")
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (DOCS / "models").glob("*.md")}
    classes = [name for name in models.__all__
               if isinstance(getattr(models, name), type)
               and issubclass(getattr(models, name), PrivacyModel)
               and name not in ("PrivacyModel", "SensitiveModel", "RiskModel")]
    assert len(classes) == 16
    for name in classes:
        assert f"`{name}(" in index, name
        assert any(f"gpuppdp.models.{name}`" in text for text in pages.values()), name
    for stem in pages:
        if stem != "index":
            assert f"\n{stem}\n" in index, f"models/{stem}.md is not in the toctree"
    for page in pages.values():
        if page is not pages["index"]:
            for section in ("## Definition", "## Parameters", "## Command line",
                            "## ARX equivalent", "## Python"):
                assert section in page


def test_notebooks_are_what_the_generator_writes():
    pytest.importorskip("nbformat")   # the docs extra
    make = _load(NOTEBOOKS / "make_notebooks.py", "gpuppdp_make_notebooks")
    assert make.main(["--check"]) == 0, "run python notebooks/make_notebooks.py"
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(make.NOTEBOOKS)


def test_notebooks_have_no_outputs_and_open_with_the_install_line():
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert len(paths) == 4
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        assert nb["metadata"]["kernelspec"]["name"] == "python3"
        cells = nb["cells"]
        assert cells[0]["cell_type"] == "markdown"
        install = "".join(cells[0]["source"]) + "".join(cells[1]["source"])
        assert 'pip install "gpuppdp[gpu]"' in install
        assert 'pip install -e ".[gpu]"' in install
        for cell in cells:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None


def test_docs_extra_is_declared():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    docs = next(line for line in text.splitlines() if line.startswith("docs = "))
    for package in ("sphinx", "myst-parser", "nbclient", "nbformat", "ipykernel"):
        assert f'"{package}' in docs, package


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q",
                          "-b", "html", str(DOCS), str(tmp_path / "html")],
                         capture_output=True, text=True, env=_env(), timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    cli = (tmp_path / "html" / "cli.html").read_text(encoding="utf-8")
    assert "gpuppdp generate census" in cli and "--suppression-limit" in cli
    for page in ("getting-started", "migration-arx", "benchmarks", "models/tcloseness",
                 "api/anonymizer", "api/dp"):
        assert (tmp_path / "html" / f"{page}.html").exists(), page


@pytest.mark.slow
def test_notebooks_run(tmp_path):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    run = subprocess.run([sys.executable, str(NOTEBOOKS / "run_all.py"), "--save",
                          str(tmp_path)], capture_output=True, text=True, env=_env(),
                         timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    assert run.stdout.count("ok ") == 4
