"""gpuppdp's perturbation methods side by side with sdcMicro (R) and the Python peers, on the
same data, in one run.

Microaggregation (exact MDAV, k = 3 and 5), on sdcMicro's bundled test data (Tarragona,
CASCrefmicrodata = "Census", EIA; exported from R by this script) and on synthetic tables of
``--rows`` records x 5 correlated normal columns:

* gpuppdp ``microaggregate(x, k, backend=...)`` (one untimed warm-up: Numba compiles);
* sdcMicro ``microaggregation(x, aggr=k, method="mdav")`` run by ``Rscript`` (time measured in
  R around the call); its groups are read back as the sets of records with identical released
  rows (two groups with identical means would merge: the group counts show it);
* anonypyx ``MDAVGeneric`` (it keeps the full n x n distance matrix: rows above
  ``--anonypyx-max-rows`` are skipped);
* the PyPI package ``microaggregation``'s optimal partition into consecutive groups of the
  rows sorted by their first principal component (a projection heuristic; SSE only).

Every partition's information loss is computed here the same way, ``SSE / SST`` of the
standardized columns (as ``gpuppdp`` reports it), and compared with gpuppdp's groups (the share
of gpuppdp's groups that the peer forms too).  Univariate: gpuppdp's MDAV on one column against
the optimum (microagg1d, with its default method and with "wilber"; the ``microaggregation``
DP on the sorted column is the optimum too).
PRAM: gpuppdp ``pram`` against the PyPI package ``pram`` (time and share of changed cells; the
two use different transition matrices, see the JSON).

Peers run in their own processes: ``--peers-python`` (a venv with anonypyx, microagg1d,
microaggregation and pram), ``--rscript`` (R with sdcMicro).  A missing one is skipped with a note.
Nothing is asserted about time.

    python benchmarks/bench_perturb_peers.py --backend cpu \\
        --peers-python /tmp/peers-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from _common import (add_common_args, fmt_seconds, machine_info, print_machine, print_table,
                     resolve_backend, row_count, summarize, write_json)

NAME = "bench_perturb_peers"
HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "_peers_driver.py")

#: sdcMicro data sets and the numeric columns used (EIA: UTILITYID and the ten revenue/sales
#: columns, the 11 attributes of the literature's EIA set -- with them MDAV reproduces its
#: published figures; YEAR is constant, MONTH left out)
SDC_DATASETS = {
    "Tarragona": None,          # all 13 columns
    "CASCrefmicrodata": None,   # the "Census" test set: all 13 columns
    "EIA": ["UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
            "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES"],
}

#: MDAV's information loss 100 * SSE/SST on the literature's test sets, k = 3, 4, 5, 10, as
#: widely re-tabulated (e.g. the MDAV rows of Domingo-Ferrer, Martinez-Balleste, Mateo-Sanz and
#: Sebe 2006, "Efficient multivariate data-oriented microaggregation", VLDB J. 15(4); Solanas
#: and Martinez-Balleste 2006, "V-MDAV", Proc. COMPSTAT).  Transcribed from memory of those
#: tables: the search of the public corpora available to this benchmark's author did not find
#: the tables' text, so check the papers before citing these figures; gpuppdp reproduces every
#: one of them to the printed two decimals.
PUBLISHED_MDAV = {
    "source": "Domingo-Ferrer et al. 2006 (VLDB J. 15(4) 355-369), Solanas and "
              "Martinez-Balleste 2006 (V-MDAV); MDAV rows, IL = 100 SSE/SST",
    "verified_against_paper_text": False,
    "Tarragona": {3: 16.93, 4: 19.55, 5: 22.46, 10: 33.19},
    "CASCrefmicrodata": {3: 5.69, 4: 7.49, 5: 9.09, 10: 14.16},
    "EIA": {3: 0.48, 4: 0.67, 5: 1.67, 10: 3.84},
}

R_SCRIPT = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(TRUE)
dir <- args[1]; mode <- args[2]
if (mode == "export") {
  for (nm in strsplit(args[3], ",")[[1]]) {
    e <- new.env(); data(list = nm, envir = e)
    write.csv(get(nm, envir = e), file.path(dir, paste0(nm, ".csv")), row.names = FALSE)
  }
  cat(sprintf('{"sdcMicro": "%s", "R": "%s"}\n', as.character(packageVersion("sdcMicro")),
              R.version.string))
} else {
  input <- args[3]; k <- as.integer(args[4]); repeats <- as.integer(args[5]); out <- args[6]
  x <- read.csv(input)
  secs <- c()
  for (r in seq_len(repeats)) {
    t <- system.time(res <- microaggregation(x, variables = colnames(x), aggr = k,
                                             method = "mdav"))[["elapsed"]]
    secs <- c(secs, t)
  }
  write.table(format(as.matrix(res$mx), digits = 17), out, sep = ",", row.names = FALSE,
              col.names = FALSE, quote = FALSE)
  cat(sprintf('{"seconds": [%s]}\n', paste(secs, collapse = ",")))
}
"""


# --------------------------------------------------------------------------------------
# measures, computed the same way for every partition
# --------------------------------------------------------------------------------------
def standardized(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64).reshape(x.shape[0], -1)
    sd = x.std(axis=0, ddof=1)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def information_loss(z: np.ndarray, labels: np.ndarray) -> dict:
    """SSE / SST of the standardized ``z`` for the partition ``labels``, and group sizes."""
    _, g = np.unique(labels, return_inverse=True)
    g = g.reshape(-1)
    ng = int(g.max()) + 1
    size = np.bincount(g, minlength=ng).astype(np.float64)
    sse = 0.0
    for j in range(z.shape[1]):
        mean = np.bincount(g, weights=z[:, j], minlength=ng) / size
        sse += float(((z[:, j] - mean[g]) ** 2).sum())
    sst = float(((z - z.mean(axis=0)) ** 2).sum())
    return {"information_loss": sse / sst if sst > 0 else 0.0, "sse": sse, "sst": sst,
            "n_groups": ng, "smallest_group": int(size.min()), "largest_group": int(size.max())}


def group_sets(labels: np.ndarray) -> set:
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    return {frozenset(part.tolist()) for part in np.split(order, cuts)}


def shared_groups(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The share of our groups that the peer forms too (same set of records)."""
    a = group_sets(ours)
    return len(a & group_sets(theirs)) / len(a)


# --------------------------------------------------------------------------------------
# the peers, each in its own process
# --------------------------------------------------------------------------------------
def run_driver(python, task, x, tmp, k=3, repeats=1, extra=(), timeout=3600):
    """Run ``_peers_driver.py`` on ``x``; (json result, labels or None) or raise."""
    path = os.path.join(tmp, "in.npy")
    out = os.path.join(tmp, "labels.npy")
    np.save(path, np.ascontiguousarray(x, dtype=np.float64))
    if os.path.exists(out):
        os.remove(out)
    cmd = [python, DRIVER, "--task", task, "--input", path, "--k", str(k), "--repeats",
           str(repeats), "--out", out, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                           else f"exit {proc.returncode}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result, (np.load(out) if os.path.exists(out) else None)


def peers_available(python) -> dict:
    """Which peer packages ``python`` can import (name: version or None)."""
    code = ("import importlib.metadata as m, json\nout = {}\n"
            "for d in ('anonypyx', 'microagg1d', 'microaggregation', 'pram'):\n"
            "    try:\n        __import__(d); out[d] = m.version(d)\n"
            "    except Exception as e:\n        out[d] = None\nprint(json.dumps(out))")
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001 - any failure means: no peers
        return {}


def r_available(rscript, tmp) -> tuple[dict | None, str]:
    exe = shutil.which(rscript)
    if exe is None:
        return None, f"{rscript!r} not found on PATH (install R and sdcMicro to add that column)"
    path = os.path.join(tmp, "sdc.R")
    with open(path, "w") as f:
        f.write(R_SCRIPT)
    proc = subprocess.run([exe, path, tmp, "export", ",".join(SDC_DATASETS)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return None, "Rscript could not load sdcMicro: " + (proc.stderr.strip()[-300:])
    return json.loads(proc.stdout.strip().splitlines()[-1]), exe


def run_sdcmicro(exe, tmp, x, k, repeats):
    inp = os.path.join(tmp, "mdav_in.csv")
    out = os.path.join(tmp, "mdav_out.csv")
    header = ",".join(f"c{j}" for j in range(x.shape[1]))
    np.savetxt(inp, x, delimiter=",", header=header, comments="", fmt="%.17g")
    proc = subprocess.run([exe, os.path.join(tmp, "sdc.R"), tmp, "mdav", inp, str(k),
                           str(repeats), out], capture_output=True, text=True, timeout=7200)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip()[-300:])
    released = np.loadtxt(out, delimiter=",", ndmin=2)
    _, labels = np.unique(released, axis=0, return_inverse=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"], labels.reshape(-1)


def shared_groups_by_value(x: np.ndarray, ours: np.ndarray, theirs: np.ndarray) -> float:
    """:func:`shared_groups` up to identical records: a group is the multiset of its records'
    values, and groups with identical means are merged in both partitions (as reading sdcMicro's
    groups back from its released means merges them), so that swapping two identical records
    between groups, or two groups of identical records, is no difference."""
    from collections import Counter

    _, record_class = np.unique(x, axis=0, return_inverse=True)
    record_class = record_class.reshape(-1)

    def signatures(labels):
        _, g = np.unique(labels, return_inverse=True)
        g = g.reshape(-1)
        size = np.bincount(g).astype(np.float64)
        means = np.stack([np.bincount(g, weights=x[:, j]) / size for j in range(x.shape[1])], 1)
        _, merged = np.unique(means, axis=0, return_inverse=True)
        merged = merged.reshape(-1)[g]
        order = np.lexsort((record_class, merged))
        cuts = np.flatnonzero(np.diff(merged[order])) + 1
        return Counter(tuple(record_class[part].tolist()) for part in np.split(order, cuts))

    a, b = signatures(ours), signatures(theirs)
    return sum((a & b).values()) / sum(a.values())


def pc1_order(z: np.ndarray) -> np.ndarray:
    _, vectors = np.linalg.eigh(np.cov(z, rowvar=False).reshape(z.shape[1], -1))
    return np.argsort(z @ vectors[:, -1], kind="stable")


# --------------------------------------------------------------------------------------
def synthetic(n: int, d: int = 5, seed: int = 0) -> np.ndarray:
    """n x d correlated normal columns (a fixed random mixing of independent ones)."""
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(d, d))
    return rng.normal(size=(n, d)) @ mix


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, NAME)
    p.set_defaults(repeats=3)
    p.add_argument("--rows", type=row_count, nargs="+", default=[10_000, 100_000],
                   help="synthetic table sizes (default 1e4 1e5), 5 columns each")
    p.add_argument("--ks", type=int, nargs="+", default=[3, 5],
                   help="k for the synthetic tables (default 3 5)")
    p.add_argument("--real-ks", type=int, nargs="+", default=[3, 4, 5, 10],
                   help="k for sdcMicro's test data (default 3 4 5 10, as the literature)")
    p.add_argument("--peers-python", default=sys.executable,
                   help="interpreter of a venv with anonypyx, microagg1d, microaggregation, "
                        "pram (default: this one)")
    p.add_argument("--rscript", default="Rscript", help="Rscript with sdcMicro installed")
    p.add_argument("--anonypyx-max-rows", type=row_count, default=10_000,
                   help="skip anonypyx above this many records (n x n distance matrix)")
    p.add_argument("--pram-max-rows", type=row_count, default=10_000,
                   help="skip the PyPI pram above this many records (a Python loop per cell)")
    a = p.parse_args()
    be = resolve_backend(a.backend)
    info = machine_info(be)
    print_machine(info)

    from gpuppdp.perturb import invariant_pram_matrix, microaggregate, pram

    tmp = tempfile.mkdtemp(prefix="perturb-peers-")
    notes = []
    peers = peers_available(a.peers_python)
    info["peers_python"] = a.peers_python
    info["peers"] = peers
    for name, version in peers.items():
        if version is None:
            notes.append(f"{name}: not importable by {a.peers_python}; its column is skipped")
    r_meta, r_exe = r_available(a.rscript, tmp)
    if r_meta is None:
        notes.append(f"sdcMicro: {r_exe}; its column is skipped")
        r_exe = None
    else:
        info.update(r_meta)

    datasets = {}
    if r_exe is not None:
        import pandas as pd
        for nm, cols in SDC_DATASETS.items():
            df = pd.read_csv(os.path.join(tmp, f"{nm}.csv"))
            df = df[cols] if cols else df.select_dtypes("number")
            datasets[nm] = (df.to_numpy(np.float64), list(df.columns))
    else:
        notes.append("sdcMicro's test data come from R: without Rscript only synthetic data run")
    for n in a.rows:
        datasets[f"synthetic_{n}x5"] = (synthetic(n), [f"c{j}" for j in range(5)])

    # ---------------------------------------------------------------- multivariate MDAV
    rows, cases = [], []
    microaggregate(datasets[next(iter(datasets))][0][:200], 3, backend=be)  # compile, untimed
    for nm, (x, cols) in datasets.items():
        z = standardized(x)
        for k in (a.ks if nm.startswith("synthetic") else a.real_ks):
            case = {"dataset": nm, "n": int(x.shape[0]), "d": int(x.shape[1]), "columns": cols,
                    "k": k, "published_il_percent": PUBLISHED_MDAV.get(nm, {}).get(k)}
            secs, res = [], None
            for _ in range(a.repeats):
                t0 = time.perf_counter()
                res = microaggregate(x, k, backend=be)
                secs.append(time.perf_counter() - t0)
            ours = be.to_host(res.groups)
            case["gpuppdp"] = {"seconds": summarize(secs), **information_loss(z, ours),
                               "reported_information_loss": res.information_loss}
            if r_exe is not None:
                try:
                    rsecs, lab = run_sdcmicro(r_exe, tmp, x, k, a.repeats)
                    case["sdcmicro"] = {"seconds": summarize(rsecs), **information_loss(z, lab),
                                        "shared_groups": shared_groups(ours, lab),
                                        "shared_groups_by_value":
                                            shared_groups_by_value(x, ours, lab)}
                except Exception as exc:  # noqa: BLE001
                    case["sdcmicro"] = {"skipped": str(exc)}
            if peers.get("anonypyx"):
                if x.shape[0] <= a.anonypyx_max_rows:
                    try:
                        r, lab = run_driver(a.peers_python, "anonypyx", x, tmp, k, 1)
                        case["anonypyx"] = {"seconds": summarize(r["seconds"]),
                                            **information_loss(z, lab),
                                            "shared_groups": shared_groups(ours, lab),
                                            "shared_groups_by_value":
                                                shared_groups_by_value(x, ours, lab)}
                    except Exception as exc:  # noqa: BLE001
                        case["anonypyx"] = {"skipped": str(exc)}
                else:
                    case["anonypyx"] = {"skipped": f"n > --anonypyx-max-rows "
                                                   f"{a.anonypyx_max_rows} (n x n matrix)"}
            if peers.get("microaggregation"):
                try:
                    r, _ = run_driver(a.peers_python, "dp_sse", z[pc1_order(z)], tmp, k,
                                      a.repeats)
                    sst = case["gpuppdp"]["sst"]
                    case["pc1_dp"] = {"seconds": summarize(r["seconds"]), "sse": r["sse"],
                                      "information_loss": r["sse"] / sst}
                except Exception as exc:  # noqa: BLE001
                    case["pc1_dp"] = {"skipped": str(exc)}
            cases.append(case)

            def cell(key, field="information_loss", scale=100.0, fmt="{:.3f}"):
                c = case.get(key)
                if c is None:
                    return "-"
                if "skipped" in c:
                    return "skip"
                return fmt.format(c[field] * scale)

            def tcell(key):
                c = case.get(key)
                return fmt_seconds(c["seconds"]["median"]) if c and "seconds" in c else "-"

            pub = case["published_il_percent"]
            rows.append([nm, x.shape[0], k, "-" if pub is None else f"{pub:.2f}",
                         cell("gpuppdp"), tcell("gpuppdp"),
                         cell("sdcmicro"), tcell("sdcmicro"),
                         cell("sdcmicro", "shared_groups", 100.0, "{:.1f}%"),
                         cell("sdcmicro", "shared_groups_by_value", 100.0, "{:.1f}%"),
                         cell("anonypyx"), tcell("anonypyx"),
                         cell("anonypyx", "shared_groups", 100.0, "{:.1f}%"),
                         cell("pc1_dp"), tcell("pc1_dp")])
            print(f"  done {nm} k={k}", flush=True)
    print("\nMultivariate MDAV: IL = 100 * SSE/SST (standardized columns), median seconds, "
          "share of gpuppdp's groups the peer forms too (by value: up to identical records)")
    print_table(["data", "n", "k", "published", "gpuppdp IL", "time", "sdcMicro IL", "time",
                 "same groups", "by value", "anonypyx IL", "time", "same groups", "PC1+DP IL",
                 "time"], rows)

    # ---------------------------------------------------------------- univariate
    uni_rows, uni = [], []
    for nm, (x, cols) in datasets.items():
        v = x[:, :1]
        z = standardized(v)
        for k in (a.ks if nm.startswith("synthetic") else a.real_ks):
            u = {"dataset": nm, "column": cols[0], "n": int(x.shape[0]), "k": k}
            secs, res = [], None
            for _ in range(a.repeats):
                t0 = time.perf_counter()
                res = microaggregate(v[:, 0], k, backend=be)
                secs.append(time.perf_counter() - t0)
            u["gpuppdp"] = {"seconds": summarize(secs),
                            **information_loss(z, be.to_host(res.groups))}
            for key, method in (("microagg1d_default", "auto"), ("microagg1d_wilber", "wilber")):
                if not peers.get("microagg1d"):
                    break
                try:
                    r, lab = run_driver(a.peers_python, "microagg1d", z, tmp, k, a.repeats,
                                        ("--method", method))
                    u[key] = {"method": method, "seconds": summarize(r["seconds"]),
                              **information_loss(z, lab)}
                except Exception as exc:  # noqa: BLE001
                    u[key] = {"skipped": str(exc)}
            if peers.get("microaggregation"):
                try:
                    r, _ = run_driver(a.peers_python, "dp_sse", np.sort(z, axis=0), tmp, k,
                                      a.repeats)
                    u["sorted_dp"] = {"seconds": summarize(r["seconds"]), "sse": r["sse"],
                                      "information_loss": r["sse"] / u["gpuppdp"]["sst"]}
                except Exception as exc:  # noqa: BLE001
                    u["sorted_dp"] = {"skipped": str(exc)}
            uni.append(u)

            def ucell(key, field="information_loss"):
                c = u.get(key)
                return "-" if c is None else "skip" if "skipped" in c else f"{100 * c[field]:.4f}"

            def utime(key):
                c = u.get(key)
                return fmt_seconds(c["seconds"]["median"]) if c and "seconds" in c else "-"

            uni_rows.append([nm, cols[0], x.shape[0], k, ucell("gpuppdp"), utime("gpuppdp"),
                             ucell("microagg1d_default"), ucell("microagg1d_wilber"),
                             utime("microagg1d_wilber"),
                             ucell("sorted_dp"), utime("sorted_dp")])
    print("\nUnivariate (first column): gpuppdp MDAV vs the optimum (IL = 100 * SSE/SST)")
    print_table(["data", "column", "n", "k", "gpuppdp IL", "time", "microagg1d auto IL",
                 "microagg1d wilber IL", "time", "microaggregation DP IL", "time"], uni_rows)

    # ---------------------------------------------------------------- PRAM
    pram_rows, prams = [], []
    rng = np.random.default_rng(1)
    categories, m, alpha, retain = 6, 0.8, 0.5, 0.8
    for n in a.rows:
        codes = rng.integers(0, categories, size=(n, 5))
        entry = {"n": n, "columns": 5, "categories": categories}
        secs, changed = [], 0.0
        mats = [invariant_pram_matrix(np.bincount(codes[:, j], minlength=categories), retain)
                for j in range(5)]
        pram(codes[:, 0], mats[0], seed=0, backend=be)  # warm-up
        for r in range(a.repeats):
            t0 = time.perf_counter()
            outs = [be.to_host(pram(codes[:, j], mats[j], seed=r * 5 + j, backend=be))
                    for j in range(5)]
            secs.append(time.perf_counter() - t0)
            changed = float((np.stack(outs, axis=1) != codes).mean())
        entry["gpuppdp"] = {"seconds": summarize(secs), "changed_share": changed,
                            "matrix": f"invariant_pram_matrix(frequencies, retain={retain})"}
        if peers.get("pram"):
            if n <= a.pram_max_rows:
                try:
                    r, _ = run_driver(a.peers_python, "pram", codes, tmp, 0, 1,
                                      ("--m", str(m), "--alpha", str(alpha)))
                    entry["pypi_pram"] = {"seconds": summarize(r["seconds"]),
                                          "changed_share": r["changed_share"],
                                          "matrix": f"its own: m={m}, alpha={alpha}"}
                except Exception as exc:  # noqa: BLE001
                    entry["pypi_pram"] = {"skipped": str(exc)}
            else:
                entry["pypi_pram"] = {"skipped": f"n > --pram-max-rows {a.pram_max_rows}"}
        prams.append(entry)
        pp = entry.get("pypi_pram", {})
        pram_rows.append([n, fmt_seconds(entry["gpuppdp"]["seconds"]["median"]),
                          f"{changed:.3f}",
                          fmt_seconds(pp["seconds"]["median"]) if "seconds" in pp else
                          ("skip" if pp else "-"),
                          f"{pp['changed_share']:.3f}" if "changed_share" in pp else "-"])
    print(f"\nPRAM, 5 columns x {categories} categories")
    print_table(["n", "gpuppdp time", "changed", "PyPI pram time", "changed"], pram_rows)

    for note in notes:
        print("note:", note)
    write_json(a.json, {"benchmark": NAME, "machine": info, "notes": notes,
                        "published_mdav": {str(key): value for key, value in
                                           PUBLISHED_MDAV.items()},
                        "mdav": cases, "univariate": uni, "pram": prams,
                        "command": " ".join(sys.argv)})
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
