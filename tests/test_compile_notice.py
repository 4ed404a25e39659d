"""The CLI says when the first search is about to compile the kernels."""

import argparse

from gpuppdp import kernels
from gpuppdp.cli.progress import search_progress
from gpuppdp.kernels import grouping


def test_compiled_reads_numba_cache_index(monkeypatch, tmp_path):
    # no kernels compiled ahead of time, and an index file that is not there: the kernels
    # would be compiled first
    monkeypatch.setattr(kernels.aot, "status", lambda: "not built")
    monkeypatch.setattr(kernels.aot, "_ATTACHED", {})  # none attached from an extension
    cache_file = grouping._rollup_njit_parallel._cache._cache_file
    monkeypatch.setattr(cache_file, "_index_path", str(tmp_path / "missing.nbi"))
    assert kernels.compiled() is False


def test_notice_only_when_cold_and_not_quiet(monkeypatch, capsys):
    monkeypatch.setattr(kernels, "compiled", lambda *kernels, wanted=None: False)
    search_progress(argparse.Namespace(quiet=False))
    assert "compiling kernels (first run only" in capsys.readouterr().err
    search_progress(argparse.Namespace(quiet=True))
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(kernels, "compiled", lambda *kernels, wanted=None: True)
    search_progress(argparse.Namespace(quiet=False))
    assert capsys.readouterr().err == ""


def test_warm_up_loads_cached_kernels(tmp_path):
    """A kernel compiled by an earlier process is loaded from Numba's cache by the warm-up
    thread (nothing else is compiled there)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), GPUPPDP_AOT="0")
    fill = ("from gpuppdp.engine.solution_space import level_nodes; "
            "level_nodes([1, 2], 1)")
    subprocess.run([sys.executable, "-c", fill], env=env, check=True)
    load = ("from gpuppdp import kernels; "
            "from gpuppdp.engine.solution_space import _fill_level, _add_apex; "
            "kernels.warm_up(_fill_level, _add_apex).join(); "
            "print(len(_fill_level.overloads), len(_add_apex.overloads))")
    out = subprocess.run([sys.executable, "-c", load], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out == ["1", "0"]


def test_warm_up_kernels_follow_the_search():
    """The CLI preloads the compiled Flash for Flash searches of the models it judges, the
    batched evaluator's kernels for the other searches, nothing for a Flash search left to
    the Python traversal."""
    from gpuppdp.cli.anonymize import _PYTHON_SEARCH_OPTIONS, _warm_kernels
    from gpuppdp.engine.search import search_kernels

    def args(**kw):
        base = dict.fromkeys(name for _, name in _PYTHON_SEARCH_OPTIONS)
        base.update(search="auto", t_closeness=[])
        base.update(kw)
        return argparse.Namespace(**base)

    flash, batched = search_kernels(True), search_kernels(False)
    assert _warm_kernels(args()) == flash
    assert _warm_kernels(args(search="flash",
                              t_closeness=[("hierarchical", 0.2, None)])) == flash
    assert _warm_kernels(args(search="exhaustive")) == batched
    assert _warm_kernels(args(t_closeness=[("ordered", 0.2, None)])) == flash
    assert _warm_kernels(args(lkc=[(2, 5, 0.5, None)])) == ()


def test_the_warm_up_picks_the_compiled_flash_variant_the_command_runs():
    """The compiled Flash has a variant without classes (k-anonymity) and one with (a
    sensitive attribute carried); the CLI's warm-up loads the one its models need."""
    from numba.core.sigutils import normalize_signature

    from gpuppdp.cli.anonymize import _wanted_variant
    from gpuppdp.engine.search import search_kernels
    from gpuppdp.engine.search.flash_compiled import forms_classes
    from gpuppdp.engine.search.flash_kernels import _flash_signature

    flash, fill = search_kernels(True)[:2]
    variants = {forms_classes(args): args for args in (
        normalize_signature(_flash_signature("int8", cls))[0]
        for cls in ("none", "int64[:, ::1]"))}
    assert set(variants) == {False, True}
    plain = _wanted_variant(argparse.Namespace(l_diversity=[], t_closeness=[]))
    diverse = _wanted_variant(argparse.Namespace(l_diversity=[("distinct", 2, None)],
                                                 t_closeness=[]))
    assert plain(flash, variants[False]) and not plain(flash, variants[True])
    assert diverse(flash, variants[True]) and not diverse(flash, variants[False])
    fill_args = normalize_signature("int64(int64[::1], int64, int64[:, ::1])")[0]
    assert plain(fill, fill_args) and diverse(fill, fill_args)
