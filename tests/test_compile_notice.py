"""The CLI says when the first search is about to compile the kernels."""

import argparse

from gpuppdp import kernels
from gpuppdp.cli.common import search_progress
from gpuppdp.kernels import grouping


def test_compiled_reads_numba_cache_index(monkeypatch, tmp_path):
    # an index file that is not there: the kernels would be compiled first
    cache_file = grouping._rollup_njit_parallel._cache._cache_file
    monkeypatch.setattr(cache_file, "_index_path", str(tmp_path / "missing.nbi"))
    assert kernels.compiled() is False


def test_compiled_counts_the_compiled_flash(monkeypatch, tmp_path):
    """The compiled Flash (the largest compile) is asked about too: its cache alone missing
    means a first search compiles."""
    from gpuppdp.engine import flash_compiled

    search = flash_compiled.compiled_search()
    monkeypatch.setattr(search._cache._cache_file, "_index_path", str(tmp_path / "x.nbi"))
    assert kernels.compiled(search) is False


def test_notice_only_when_cold_and_not_quiet(monkeypatch, capsys):
    monkeypatch.setattr(kernels, "compiled", lambda *extra: False)
    search_progress(argparse.Namespace(quiet=False))
    assert "compiling kernels (first run only" in capsys.readouterr().err
    search_progress(argparse.Namespace(quiet=True))
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(kernels, "compiled", lambda *extra: True)
    search_progress(argparse.Namespace(quiet=False))
    assert capsys.readouterr().err == ""
