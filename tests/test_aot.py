"""Kernels compiled ahead of time (gpuppdp.kernels.aot): a first search compiles none of them,
they give the JIT's results, and the extension is ignored, with the reason, where it does not
match."""

import json
import os
import subprocess
import sys

import pytest

from gpuppdp.kernels import aot

# The tests marked smoke run against the installed wheel too (.ci/run, whose editable install
# holds a copy of the wheel's own extension). The one that compares the extension's results
# with the JIT's runs in the checkout's slow tier only: it compiles every kernel again (about
# 5 minutes on the 2-core box), and the extension it compares is the same file.

# searches on every code type: both compiled-Flash variants (with and without classes; the
# loss's tables and the entropy metrics'), the exhaustive search (the batched evaluator) and
# the Python traversal (delta-disclosure);
# prints the search's results and the functions Numba compiled (a fresh, empty cache)
PROBE = """
import json, sys
import numpy as np, pandas as pd
from numba.core import event
from gpuppdp import Anonymizer, Hierarchy
from gpuppdp.kernels import aot
from gpuppdp.models import DeltaDisclosurePrivacy, DistinctLDiversity, PopulationUniqueness

from gpuppdp.engine.search import flash_compiled

out = {"runs": [], "ready": sorted(map(str, flash_compiled._READY))}
with event.install_recorder("numba:compile") as rec:
    for leaves in map(int, sys.argv[1:]):  # 6, 300, 40000: int8, int16 and int32 codes
        rng = np.random.default_rng(leaves)
        n = 2000
        values = [f"v{i}" for i in range(leaves)]
        wide = Hierarchy([values, [f"g{i // 3}" for i in range(leaves)], ["*"] * leaves],
                         name="w")
        data = pd.DataFrame({"w": rng.choice(values[:12], n), "a": rng.choice(list("abcd"), n),
                             "b": rng.choice(list("xyz"), n), "s": rng.choice(list("pqr"), n)})
        h = {"w": wide, **{c: Hierarchy.flat(sorted(set(data[c])), name=c) for c in "ab"}}
        for search, sensitive, metric in (("auto", False, "loss"), ("auto", True, "loss"),
                                          ("exhaustive", False, "loss"),
                                          ("flash", "delta", "loss"),
                                          ("auto", False, "normalized-entropy"),
                                          ("auto", False, "kl")):
            model = (DistinctLDiversity("s", 2) if sensitive is True else
                     DeltaDisclosurePrivacy("s", 2.0))
            kw = dict(sensitive=["s"], models=[model]) if sensitive else dict(insensitive=["s"])
            r = Anonymizer(quasi_identifiers=h, k=3, suppression_limit=0.05, backend="cpu",
                           search=search, metric=metric, **kw).fit(data)
            d = r.search.details
            out["runs"].append([leaves, search, bool(d.get("compiled")),
                                int(r.search.optimum), float(r.information_loss),
                                int(r.search.nodes_evaluated)])
        # population uniqueness (the estimators, through population_shares) on a table with
        # sample uniques
        unique = data.assign(w=rng.choice(values, n))
        r = Anonymizer(quasi_identifiers=h, models=[PopulationUniqueness(0.3, model="dankar",
                       population_size=5 * n)], suppression_limit=0.05, backend="cpu",
                       insensitive=["s"]).fit(unique)
        out["runs"].append([leaves, "uniqueness", r.suppressed_records,
                            int(r.search.optimum), float(r.information_loss),
                            int(r.search.nodes_evaluated)])
out["compiled"] = sorted({ev.data["dispatcher"].py_func.__name__ for _, ev in rec.buffer})
# each compile's function, the compiles it is nested in (their typing asked for it) and its
# argument types
stack, out["compiles"] = [], []
for _, ev in rec.buffer:
    if ev.is_start:
        name = ev.data["dispatcher"].py_func.__name__
        out["compiles"].append([name, list(stack), str(ev.data["args"])])
        stack.append(name)
    else:
        stack.pop()
out["status"] = aot.status()
out["declared"] = sorted(k.rsplit(".", 1)[1] for k in aot._DECLARED)
print(json.dumps(out))
"""


#: the probe's hierarchy widths: int8, int16 and int32 codes
CODE_WIDTHS = (6, 300, 40000)


def _probe(cache, widths=CODE_WIDTHS, **env) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **env)
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, widths)], env=env,
                          check=True, capture_output=True, text=True, timeout=900)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def ahead(tmp_path_factory):
    return _probe(tmp_path_factory.mktemp("aot"))


@pytest.mark.smoke
def test_first_search_compiles_no_declared_kernel(ahead):
    """On a fresh Numba cache, searches with int8, int16 and int32 codes -- the compiled
    Flash with and without a sensitive attribute (l-diversity, delta-disclosure), with the
    loss, with normalized entropy (whose tables must have the declared layout) and with KL
    divergence (its sums after the walk), and the exhaustive search (its packed walk) --
    compile none of the declared kernels (a few small helpers called from Python remain:
    about 0.5 s)."""
    assert ahead["status"] == "attached"
    assert [run[2] for run in ahead["runs"] if run[1] != "uniqueness"] == \
        [True, True, False, True, True, True] * 3
    assert {"_flash", "_kl_run", "_rollup_chunk", "_group_first", "_loss_sums_run",
            "_node_stats_run", "population_shares"} <= set(ahead["declared"])
    assert not set(ahead["compiled"]) & set(ahead["declared"])
    assert len(ahead["compiled"]) <= 6, ahead["compiled"]
    # the compiled Flash's argument types need no typing before a first search
    assert ahead["ready"] == sorted(f"(dtype('{code}'), {classes})" for code in aot.CODE_TYPES
                                    for classes in (False, True))


# the command line's other kernels, in one fresh process and a fresh, empty cache: the checker,
# explore (with and without a sensitive attribute) and the DP releases (the fused noise, the
# clamped sums, the order statistics, the discrete Gaussian); prints what each wrote and the
# functions Numba compiled
COMMANDS_PROBE = """
import contextlib, io, json, pathlib, sys
import pandas as pd
from numba.core import event
from gpuppdp import datasets
from gpuppdp.cli import main
from gpuppdp.kernels import aot

out = pathlib.Path(sys.argv[1])
adult = datasets.adult_path("adult.csv")
qi = [a for c in ("age", "sex", "race")
      for a in ("--qi", f"{c}=" + datasets.adult_path(f"adult_hierarchy_{c}.csv"))]
seed = ["--insecure-seed", "--seed", "1"]
age = ["--column", "age", "--lower", "17", "--upper", "90"]
runs = {
    "check": ["check", adult, "--qi", "age,sex,race", "--sensitive", "occupation"],
    "explore-sensitive": ["explore", adult, *qi, "--sensitive", "occupation", "--k", "5"],
    "explore": ["explore", adult, *qi[:4], "--k", "5", "--metric", "loss"],
    "dp-mean": ["dp-query", adult, "--query", "mean", *age, "--epsilon", "1", *seed],
    "dp-median": ["dp-query", adult, "--query", "median", *age, "--epsilon", "1", *seed],
    "dp-variance-gaussian": ["dp-query", adult, "--query", "variance", *age, "--epsilon", "1",
                             "--delta", "1e-6", "--mechanism", "gaussian", *seed],
    "dp-histogram": ["dp-histogram", adult, "--by", "sex,race", "--public-domain",
                     "--epsilon", "1", *seed],
    "dp-histogram-discrete-gaussian": ["dp-histogram", adult, "--by", "sex,race",
                                       "--public-domain", "--rho", "0.5", "--mechanism",
                                       "discrete-gaussian", *seed],
    "report": ["report", adult, *qi, "--others", "insensitive", "--k", "5", "--seed", "1",
               "--html", str(out / "report.html")],
    "anatomize": ["anatomize", adult, "--qi", "age", "sex", "race", "--sensitive", "occupation",
                  "--others", "insensitive", "--l", "3", "--seed", "1",
                  "--st", str(out / "st.csv"), "--qit"],
}
wrote = {}
with event.install_recorder("numba:compile") as rec:
    for name, argv in runs.items():
        as_json = name.startswith(("check", "dp-q"))  # the others write a table
        target = out / (name + (".json" if as_json else
                                ".parquet" if name.startswith("explore") else ".csv"))
        argv = argv + ([] if name == "anatomize" else ["--json" if as_json else "--output"]) + \
            [str(target)]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
        wrote[name] = [code, pd.read_parquet(target).to_csv(index=False)
                       if target.suffix == ".parquet" else target.read_text()]
print(json.dumps({"wrote": wrote, "status": aot.status(),
                  "compiled": sorted({ev.data["dispatcher"].py_func.__name__
                                      for _, ev in rec.buffer}),
                  "declared": sorted(k.rsplit(".", 1)[1] for k in aot._DECLARED)}))
"""


def _commands(tmp_path, cache=None, **env) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache or tmp_path / "cache"), **env)
    done = subprocess.run([sys.executable, "-c", COMMANDS_PROBE, str(tmp_path)], env=env,
                          check=True, capture_output=True, text=True, timeout=900)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def commands(tmp_path_factory):
    return _commands(tmp_path_factory.mktemp("aot-commands"))


@pytest.mark.smoke
def test_the_commands_first_runs_compile_nothing(commands):
    """On a fresh Numba cache, ``check``, ``explore``, ``report``, ``anatomize`` and the DP
    releases compile no kernel at all: their kernels called from Python are declared (the
    checker's group-by on int64 codes, the explore figures, the metrics', the key space,
    anatomy's buckets, the fused DP noise, the clamped sums and order statistics, the discrete
    Gaussian's rounds).  Before, a first ``dp-query`` compiled for
    about 11 s, ``check`` and ``explore`` for 3-4 s."""
    assert commands["status"] == "attached"
    assert all(code == 0 for code, _ in commands["wrote"].values()), commands["wrote"]
    assert {"_noise_task", "_unit_sums", "_gaussian_task", "_figures_run", "_group_sorted",
            "log_table"} <= set(commands["declared"])
    assert commands["compiled"] == []


def test_the_jit_gives_what_the_extension_gives(ahead, commands, tmp_path):
    """The same searches and commands with the extension off, every kernel compiled by
    Numba's JIT (the searches first, on the narrowest and widest codes -- the int16 forms are
    the same source between them, and each form is a minute of compiling here -- then the
    commands on the same cold cache, which they partly share): the same optimum, loss
    (exactly) and checked nodes; the same tables, figures and (seeded) noise, byte for byte.
    And the compiled Flash's loss sums (``_one_node``) and class verdicts (``judge_classes``)
    are compiled on their own before its searches, for the types they pass, never within its
    typing (where they compile about twice as slowly): each signature once."""
    cache, widths = tmp_path / "cache", (CODE_WIDTHS[0], CODE_WIDTHS[-1])
    jit = _probe(cache, widths, GPUPPDP_AOT="0")
    assert jit["status"].startswith("off")
    assert set(jit["compiled"]) & {"_flash", "_rollup_chunk", "_group_first"}
    assert jit["runs"] == [run for run in ahead["runs"] if run[0] in widths]
    for name in ("_one_node", "judge_classes"):
        compiles = [(within, args) for fn, within, args in jit["compiles"] if fn == name]
        assert any(within == [] for within, _ in compiles), (name, compiles)
        assert not any("_flash" in within for within, _ in compiles), (name, compiles)
        assert len({args for _, args in compiles}) == len(compiles), (name, compiles)
    jit_commands = _commands(tmp_path, cache, GPUPPDP_AOT="0")
    # (a kernel the searches compiled is loaded from the shared cache by the commands)
    assert {"_noise_task", "_figures_run", "_group_sorted"} <= \
        set(jit_commands["compiled"]) | set(jit["compiled"])
    assert jit_commands["wrote"] == commands["wrote"]


@pytest.mark.smoke
def test_the_extension_is_ignored_where_it_does_not_match(monkeypatch):
    """Another CPU, an edited kernel source, another Numba or ``GPUPPDP_AOT=0``: the kernels
    compile on first use, and the status says why."""
    assert aot.status() == "attached"
    monkeypatch.setattr(aot, "source_digest", lambda: "edited")
    assert aot._open() == (None, "kernel sources changed since the build")
    monkeypatch.undo()
    monkeypatch.setattr(aot, "_host", lambda: {"cpu": "i486", "features": "+cmov,-avx"})
    assert "this CPU (i486) does not support (it lacks avx" in aot._open()[1]
    monkeypatch.undo()
    import numba
    monkeypatch.setattr(numba, "__version__", "0.1")
    assert aot._open()[1].endswith("running 0.1")
    monkeypatch.undo()
    monkeypatch.setenv("GPUPPDP_AOT", "0")
    assert aot._open() == (None, "off (GPUPPDP_AOT=0)")


@pytest.mark.smoke
@pytest.mark.skipif(aot.baseline()["cpu"] != aot.X86_BASELINE, reason="x86-64 only")
def test_the_extension_travels_to_another_cpu_with_the_baseline(monkeypatch):
    """Built for the x86-64 baseline, not for the building machine's CPU: another CPU model
    with the baseline's features (and more, and some turned off) uses it."""
    assert aot._open()[1]["cpu"] == aot.X86_BASELINE
    features = ",".join(f"+{f}" for f in aot.X86_BASELINE_FEATURES) + ",+sha,-avx512f"
    monkeypatch.setattr(aot, "_host", lambda: {"cpu": "znver2", "features": features})
    module, meta = aot._open()
    assert module is not None and meta["requires"] == list(aot.X86_BASELINE_FEATURES)


@pytest.mark.smoke
def test_every_declared_signature_is_compiled_and_attached():
    """The extension holds each declared signature, attached to its dispatcher."""
    import importlib

    from numba.core.sigutils import normalize_signature

    for name in aot.MODULES:
        importlib.import_module(name)
    modules, meta = aot._load()
    for key, (dispatcher, signatures) in aot._DECLARED.items():
        assert [s for _, s, _ in meta["exports"][key]] == signatures
        for signature in signatures:
            assert aot.attached(dispatcher, normalize_signature(signature)[0])
    # each export in the module of its part; the compiled Flash's forms, half of the
    # compiling, in both (the parts compile in parallel)
    for entries in meta["exports"].values():
        for export, _, part in entries:
            assert hasattr(modules[part], export)
            assert not any(hasattr(other, export) for other in modules if other is not
                           modules[part])
    flash = meta["exports"]["gpuppdp.engine.search.flash_kernels._flash"]
    assert {part for _, _, part in flash} == set(range(len(aot.PARTS)))


@pytest.mark.smoke
def test_a_broken_extension_never_fails_an_import(monkeypatch):
    """Whatever goes wrong opening the extension, the kernels compile on first use and the
    status says what went wrong."""
    def broken():
        raise RuntimeError("truncated file")

    monkeypatch.setattr(aot, "_loaded", None)
    monkeypatch.setattr(aot, "_open", broken)
    assert aot.status() == "cannot be used (RuntimeError: truncated file)"


@pytest.mark.smoke
def test_the_extension_opens_whichever_module_is_imported_first():
    """The extension opens while the first kernel module is imported, and the command line's
    parser imports the privacy models first: the status is this process's whichever module
    a fresh process imports first (reading the kernel sources' digest once imported
    ``gpuppdp.engine`` half-way through ``gpuppdp.core.classes``, and the command line ran
    without the extension)."""
    firsts = ("gpuppdp.models", "gpuppdp.core.classes", "gpuppdp.engine", "gpuppdp.cli",
              "gpuppdp.kernels.groupby", "gpuppdp.engine.metrics", "gpuppdp")
    statuses = {}
    for first in firsts:
        code = f"import {first}; from gpuppdp.kernels import aot; print(aot.status())"
        done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                              text=True, timeout=300)
        statuses[first] = done.stdout.strip().splitlines()[-1]
    assert statuses == dict.fromkeys(firsts, aot.status())
