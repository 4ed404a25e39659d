"""Write the example notebooks (``notebooks/*.ipynb``) from the cells below, without outputs.

    python notebooks/make_notebooks.py           # (re)write them
    python notebooks/make_notebooks.py --check   # exit 1 if a committed notebook differs

Edit the cells here, not the ``.ipynb`` files: ``tests/test_docs.py`` checks that the committed
notebooks are what this script writes.  ``notebooks/run_all.py`` executes them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent

INSTALL = """\
**Install.** In a cloud GPU notebook (Colab, SageMaker, a Jupyter server with a CUDA 12 GPU):

```
pip install "gpuppdp[gpu]"
```

From a checkout of the repository: `pip install -e ".[gpu]"` (leave out `[gpu]` on a machine
without an NVIDIA GPU: everything below runs on the CPU too).{extra}"""


def md(text: str):
    return nbformat.v4.new_markdown_cell(text.strip("\n"))


def code(text: str):
    return nbformat.v4.new_code_cell(text.strip("\n"))


QUICKSTART = [
    md("""
# Quick start: risk, anonymize, report, compare (Adult)

The bundled Adult extract (30,162 records) with ARX's hierarchies: measure the
re-identification risk of the raw table, anonymize it with k-anonymity and distinct
l-diversity, write the HTML report, and compare two configurations side by side.
"""),
    md(INSTALL.format(extra="")),
    code("""
import tempfile
from pathlib import Path

from gpuppdp import Anonymizer, DistinctLDiversity, datasets
from gpuppdp.analysis import risk
from gpuppdp.report import write_report
from gpuppdp.report.compare import compare

out = Path(tempfile.mkdtemp(prefix="gpuppdp-quickstart-"))   # every file of this notebook
data, hierarchies = datasets.adult()
columns = ["sex", "age", "race", "marital-status", "education", "native-country",
           "workclass", "salary-class"]
qids = {c: hierarchies[c] for c in columns}
data.head()
"""),
    md("""
## 1. The risk of the raw table

El Emam's prosecutor, journalist and marketer risks as ARX computes them, and the sample
uniques: records whose QID combination no other record shares.
"""),
    code("""
before = risk.risk_report(data, columns)
{k: before[k] for k in ["records", "equivalence_classes", "sample_uniques",
                        "prosecutor_highest_risk", "prosecutor_average_risk", "records_at_risk"]}
"""),
    md("""
## 2. Anonymize

The optimal full-domain generalization (ARX's optimum and information loss, bit for bit)
under 5-anonymity and distinct 3-diversity of `occupation`, with up to 5 % of the records
suppressed.  `backend="auto"` takes the GPU when there is one.
"""),
    code("""
anonymizer = Anonymizer(
    quasi_identifiers=qids, sensitive=["occupation"],
    k=5, models=[DistinctLDiversity("occupation", 3)],
    suppression_limit=0.05, metric="loss", backend="auto", seed=0,
)
result = anonymizer.fit(data)
print(result.transformation)
print("information loss", result.information_loss)
result.released.head()
"""),
    code("""
after = risk.risk_report(result.released, columns)
{k: (before[k], after[k]) for k in ["equivalence_classes", "sample_uniques",
                                    "prosecutor_highest_risk", "prosecutor_average_risk"]}
"""),
    md("""
## 3. The report

One self-contained HTML file (inline SVG, no script) and its JSON twin.
"""),
    code("""
html_a, json_a = write_report(result, data, out / "k5_l3.html")
print(html_a, html_a.stat().st_size, "bytes")
"""),
    md("""
## 4. Compare two configurations

A second configuration (10-anonymity, no l-diversity, the precision metric), its report, and
the two side by side: `gpuppdp report --compare A.json B.json --html OUT.html` does the same on
the command line.
"""),
    code("""
result_b = Anonymizer(quasi_identifiers=qids, k=10, suppression_limit=0.05,
                      metric="precision", others="insensitive", seed=0).fit(data)
html_b, json_b = write_report(result_b, data, out / "k10_precision.html")
side_by_side = compare(json_a, json_b)
for label, a, b in side_by_side["rows"]:
    print(f"{label:<32} {a!s:<28} {b!s}")
"""),
]

CENSUS = [
    md("""
# A census on the GPU, with a CPU fallback

A generated US-census-like table (`gpuppdp.datasets.census`), anonymized with
`backend="auto"`: the GPU when CuPy and numba-cuda can run a kernel there, the CPU otherwise
(one log line says why).  200,000 rows keep this notebook to seconds on a CPU; on a GPU raise
`ROWS` to 10 or 20 million.
"""),
    md(INSTALL.format(extra="""

**What changes on a GPU.** Nothing in the code: `backend="auto"` picks CuPy, the search
`auto` becomes the batched level search (`levels`), and the lattice is evaluated in batches
sized to the device's free memory.  On one NVIDIA H100 (2026-11-26) a 10 M-row table's
optimal search took 27-33 ms after encoding, and a 20 M-row census 18.3 s Parquet to Parquet
end to end (benchmarks/RESULTS.md).""")),
    code("""
import logging
import tempfile
import time
from pathlib import Path

import gpuppdp
from gpuppdp import Anonymizer, datasets
from gpuppdp.census import write_census

logging.basicConfig(level="INFO", format="%(message)s")   # shows the fallback's reason
backend = gpuppdp.get_backend("auto")
print("backend:", backend.name)
ROWS = 200_000
"""),
    code("""
start = time.perf_counter()
census, hierarchies = datasets.census(ROWS, seed=1)
print(f"{len(census):,} rows generated in {time.perf_counter() - start:.1f} s")
census.head()
"""),
    md("""
## In memory

Six quasi-identifiers with the census hierarchies; `person_id` is identifying (removed from
the release); the other columns are kept as they are.
"""),
    code("""
qids = {c: hierarchies[c] for c in ["zip", "age", "sex", "race", "marital", "education"]}
anonymizer = Anonymizer(quasi_identifiers=qids, identifying=["person_id"], others="insensitive",
                        k=5, suppression_limit=0.05, backend="auto", seed=0)
result = anonymizer.fit(census)
summary = result.summary()
{k: summary[k] for k in ["transformation", "information_loss", "equivalence_classes",
                         "suppressed_records", "search", "backend", "seconds"]}
"""),
    md("""
## Out of core: a Parquet file, chunk by chunk

`write_census` writes the same table as `gpuppdp generate census`; `fit_file` reads it in
chunks (here 65,536 rows to show it; 2^20 by default), searches once on the merged frequency
set and writes the release to disk.  The optimum and the loss are the in-memory run's.
"""),
    code("""
folder = Path(tempfile.mkdtemp(prefix="gpuppdp-census-"))
files = write_census(folder, ROWS, seed=1)
on_disk = anonymizer.fit_file(files.table, folder / "released.parquet", chunk_rows=2**16)
print(on_disk.release.path)
print(on_disk.transformation == result.transformation,
      on_disk.information_loss == result.information_loss)
"""),
    md("""
The same on the command line (add `--dask local:4` for a local Dask cluster,
`pip install "gpuppdp[dask]"`):

```
gpuppdp generate census --rows 20000000 --seed 1 --output census/
gpuppdp anonymize census/census.parquet --qi zip=census/census_hierarchy_zip.csv ... \\
    --identifying person_id --others insensitive --k 5 --suppression-limit 5% \\
    --backend auto --output released.parquet --json summary.json
```
"""),
]

DP = [
    md("""
# Differential privacy with a budget ledger

Noisy contingency tables of the Adult data under ε-differential privacy, charged to a budget
accountant; across runs, a JSON ledger on disk (`gpuppdp dp-histogram --budget-file`).
"""),
    md(INSTALL.format(extra="")),
    code("""
import tempfile
from pathlib import Path

from gpuppdp import datasets
from gpuppdp.dp import BudgetAccountant, BudgetError, dp_histogram

data, hierarchies = datasets.adult()
"""),
    md("""
## One accountant, several releases

Ages at level 2 of their hierarchy (20-year bands), by sex.  The domain of `sex` is declared
public; the ages' domain comes from their hierarchy.  Every table records its ε, δ, mechanism
and expected error in `attrs["dp"]`.
"""),
    code("""
accountant = BudgetAccountant(epsilon=1.0)
table = dp_histogram(data, ["age", "sex"], epsilon=0.5, hierarchies={"age": hierarchies["age"]},
                     levels={"age": 2}, public_domain=["sex"], accountant=accountant)
print(table.attrs["dp"])
table
"""),
    code("""
by_salary = dp_histogram(data, ["salary-class"], epsilon=0.4, public_domain=True,
                         accountant=accountant)
print(f"spent {accountant.spent:.2f}, remaining {accountant.remaining:.2f}")
try:
    dp_histogram(data, ["race"], epsilon=0.5, public_domain=True, accountant=accountant)
except BudgetError as exc:            # refused before any noise is drawn
    print("refused:", exc)
"""),
    md("""
## A ledger across runs

`BudgetAccountant.open_ledger` locks the file for the block (a transaction): each spend is
appended, hash-chained to the one before and written to disk before its noise is drawn, and a
refused release leaves the ledger as it was. `create=True` starts a missing ledger (a ledger
that has gone missing is never started again without it).
"""),
    code("""
ledger = Path(tempfile.mkdtemp(prefix="gpuppdp-dp-")) / "ledger.json"
for run in range(3):
    try:
        with BudgetAccountant.open_ledger(ledger, epsilon=1.0, create=True) as acc:
            dp_histogram(data, ["education"], epsilon=0.4, public_domain=True, accountant=acc)
        print(f"run {run}: released, {acc.spent:.1f} of {acc.total} spent")
    except BudgetError as exc:
        print(f"run {run}: refused ({exc})")
print(ledger.read_text()[:400])
"""),
]

ATTACKS = [
    md("""
# Attacks on releases

What an adversary recovers: the database reconstruction attack on published statistics
(Garfinkel, Abowd and Martindale's census block), and the linkage of two releases of one
population.
"""),
    md(INSTALL.format(extra="""  The reconstruction attack also needs SciPy's HiGHS solver:
`pip install "gpuppdp[gpu,attacks]"`.""")),
    code("""
from gpuppdp import Anonymizer, datasets
from gpuppdp.attacks import LinkageRisk, check_release, linkage_attack, reconstruct
"""),
    md("""
## Reconstruction from published statistics

The fictional 7-person block of Garfinkel et al. (2018), Table 1: counts, medians and means by
sex, race and marital status, small cells suppressed.  The attack finds every table of records
consistent with them (an integer program) and proves the table unique.
"""),
    code("""
block = {
    "attributes": {"age": {"min": 0, "max": 115, "integer": True},
                   "sex": ["Female", "Male"],
                   "race": ["Black or African American", "White"],
                   "marital": ["Single", "Married"]},
    "rules": [{"if": {"marital": "Married"}, "then": {"age": [15, 115]}}],
    "suppression_threshold": 3,
    "statistics": [
        {"label": "1A", "group": {}, "count": 7, "median": 30, "mean": 38, "decimals": 1},
        {"label": "2A", "group": {"sex": "Female"}, "count": 4, "median": 30, "mean": 33.5,
         "decimals": 1},
        {"label": "2B", "group": {"sex": "Male"}, "count": 3, "median": 30, "mean": 44,
         "decimals": 1},
        {"label": "2C", "group": {"race": "Black or African American"}, "count": 4,
         "median": 51, "mean": 48.5, "decimals": 1},
        {"label": "2D", "group": {"race": "White"}, "count": 3, "median": 24, "mean": 24,
         "decimals": 1},
        {"label": "3A", "group": {"marital": "Single", "age": [18, None]}, "suppressed": True},
        {"label": "3B", "group": {"marital": "Married", "age": [18, None]}, "count": 4,
         "median": 51, "mean": 54, "decimals": 1},
        {"label": "4A", "group": {"race": "Black or African American", "sex": "Female"},
         "count": 3, "median": 36, "mean": 36.7, "decimals": 1},
        {"label": "4B", "group": {"race": "Black or African American", "sex": "Male"},
         "suppressed": True},
        {"label": "4C", "group": {"race": "White", "sex": "Male"}, "suppressed": True},
        {"label": "4D", "group": {"race": "White", "sex": "Female"}, "suppressed": True},
    ],
}
r = reconstruct(block)
print("unique:", r.unique)
r.records
"""),
    md("""
## Linking two releases

Two releases of the Adult data made with different configurations.  A row of one and a row of
the other may be the same person when their other columns agree and their QID labels overlap;
records left with fewer than k candidates are exposed by the pair, not by either release.
"""),
    code("""
data, hierarchies = datasets.adult()
columns = ["sex", "age", "race", "education"]
data = data[columns + ["occupation"]]
qids = {c: hierarchies[c] for c in columns}
a = Anonymizer(quasi_identifiers=qids, sensitive=["occupation"], k=5, seed=1).fit(data).released
b = Anonymizer(quasi_identifiers=qids, sensitive=["occupation"], k=5, metric="precision",
               suppression_limit=0.02, seed=2).fit(data).released
report = linkage_attack(a, b, columns, qids, sensitive="occupation", k=5)
records = report.records          # one row per record of the first release
print(report.mode, "linkage;", len(records), "records of A")
print(records[["below_k", "newly_below_k", "sensitive_certain", "newly_certain"]].sum())
records[records.newly_certain].head()
"""),
    code("""
try:
    check_release(b, a, columns, qids, sensitive="occupation", k=5)
    print("the second release adds no exposure")
except LinkageRisk as exc:
    print(exc)
"""),
]

NOTEBOOKS = {
    "01_quickstart_adult.ipynb": QUICKSTART,
    "02_census_gpu.ipynb": CENSUS,
    "03_dp_ledger.ipynb": DP,
    "04_attacks.ipynb": ATTACKS,
}


def build(name: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = NOTEBOOKS[name]
    for number, cell in enumerate(nb.cells):   # fixed ids: the same file at every run
        cell.id = f"cell-{number:02d}"
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                  "language": "python"},
                   "language_info": {"name": "python"}}
    return nb


def text(name: str) -> str:
    return nbformat.writes(build(name)) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the files")
    args = parser.parse_args(argv)
    stale = []
    for name in NOTEBOOKS:
        path = HERE / name
        new = text(name)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != new:
                stale.append(name)
        else:
            path.write_text(new, encoding="utf-8")
            print("wrote", path)
    if stale:
        print("stale (run python notebooks/make_notebooks.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
