"""gpuppdp's Mondrian on Adult against the published NCP figures of the open Mondrian
implementations most papers compare with.

Published figures (quoted from the READMEs; nothing else is published there, so only k=10
has a reference value):

* ``qiyuangong/Mondrian`` (https://github.com/qiyuangong/Mondrian, README at commit
  49d49cf): "The Final NCP of Mondrian on adult dataset is about 24.91% (relax) and 12.19%
  (strict) ... (with K=10)".  The original Mondrian: no hierarchies, every categorical QID
  ordered "intuitively" (by first appearance in ``adult.data``) and cut like a number.
* ``qiyuangong/Basic_Mondrian`` (https://github.com/qiyuangong/Basic_Mondrian, README at
  commit 3cb5211): "The Final NCP of basic Mondrian on adult dataset is about 28.52% ...
  (with K=10)".  Categorical QIDs cut along hierarchies: workclass and marital-status with
  three levels, occupation, race, sex and native-country with two (value -> ``*``).

Both implementations read ``adult.data`` (UCI training file), drop the lines with a missing
value (``?``: 30,162 records remain) and use the same 8 QIDs: ``age`` and ``education_num``
numeric; ``workclass, marital_status, occupation, race, sex, native_country`` categorical.
Their "NCP percentage" is the NCP summed over records and QIDs divided by records x QIDs,
i.e. the GCP (Ghinita et al., VLDB 2007) in percent.

Data preparation here: the bundled ARX extract (``gpuppdp/data/adult/adult.csv``), which is
``adult.data`` without the ``?`` lines, row for row in the same order (checked against the
copy in Basic_Mondrian's repository).  It has no ``education_num`` column: ``education`` maps
one-to-one onto it (UCI's coding, ``Preschool`` = 1 ... ``Doctorate`` = 16), so the column is
rebuilt from that map.  Setups:

* ``intuitive``: the six categorical QIDs coded 0, 1, 2, ... in order of first appearance
  (the original Mondrian's "intuitive order") and given to gpuppdp as numeric QIDs; strict
  and relaxed partitioning.  NCP of a range: its width over the column's width, as theirs.
* ``hierarchies``: gpuppdp's Mondrian (strict) with Basic_Mondrian's grouping of workclass
  (Self-employ, gov, not-work; Private alone) and marital-status (Married, leave, alone;
  Never-married alone) and flat hierarchies for the other four.  gpuppdp's NCP of a label is
  ``(leaves under it - 1) / (leaves - 1)`` (Xu et al.); Basic_Mondrian charges an
  ungeneralized value 0 and a node ``leaves under it / leaves`` (e.g. 3/7 for "gov" against
  gpuppdp's 2/6).  Both are reported: ``gcp`` (gpuppdp's) and ``gcp_their_formula`` (the
  same release measured with Basic_Mondrian's categorical cost).

Other differences that remain: how ties at the median are assigned and the order in which
QIDs of equal normalized width are tried (implementation details of each code), and
Basic_Mondrian chooses the cut dimension by its own width (leaves / leaves of the root).

It prints a table and writes JSON (``--json``, default
``benchmarks/out/bench_mondrian_published.json``); it asserts nothing.  Example::

    python benchmarks/bench_mondrian_published.py --ks 5,10,20,50,100 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics

from _common import (add_common_args, machine_info, print_machine, print_table, resolve_backend,
                     timed_runs, write_json)

MONDRIAN_URL = "https://github.com/qiyuangong/Mondrian"
BASIC_URL = "https://github.com/qiyuangong/Basic_Mondrian"
#: (setup, mode) -> (published GCP in percent at k=10, where, quoted sentence)
PUBLISHED = {
    ("intuitive", "strict"): (12.19, MONDRIAN_URL + " (README, commit 49d49cf)",
                              "about 24.91% (relax) and 12.19% (strict) ... (with K=10)"),
    ("intuitive", "relaxed"): (24.91, MONDRIAN_URL + " (README, commit 49d49cf)",
                               "about 24.91% (relax) and 12.19% (strict) ... (with K=10)"),
    ("hierarchies", "strict"): (28.52, BASIC_URL + " (README, commit 3cb5211)",
                                "about 28.52% ... (with K=10)"),
}
QIDS = ["age", "workclass", "education_num", "marital-status", "occupation", "race", "sex",
        "native-country"]
NUMERIC = ("age", "education_num")
EDUCATION_NUM = {"Preschool": 1, "1st-4th": 2, "5th-6th": 3, "7th-8th": 4, "9th": 5,
                 "10th": 6, "11th": 7, "12th": 8, "HS-grad": 9, "Some-college": 10,
                 "Assoc-voc": 11, "Assoc-acdm": 12, "Bachelors": 13, "Masters": 14,
                 "Prof-school": 15, "Doctorate": 16}
#: Basic_Mondrian's middle level of these two QIDs (a value absent here sits under * alone)
GROUPS = {
    "workclass": {"Self-emp-not-inc": "Self-employ", "Self-emp-inc": "Self-employ",
                  "Federal-gov": "gov", "Local-gov": "gov", "State-gov": "gov",
                  "Without-pay": "not-work", "Never-worked": "not-work"},
    "marital-status": {"Married-civ-spouse": "Married", "Married-AF-spouse": "Married",
                       "Divorced": "leave", "Separated": "leave", "Widowed": "alone",
                       "Married-spouse-absent": "alone"},
}


def prepared():
    """The 8-QID Adult table as both implementations read it (see the module docstring)."""
    from gpuppdp import datasets

    data, _ = datasets.adult()
    table = data.copy()
    table["education_num"] = table["education"].map(EDUCATION_NUM).astype(int)
    table["age"] = table["age"].astype(int)
    return table[QIDS + ["salary-class"]].reset_index(drop=True)


def intuitive(table):
    """Categorical QIDs coded by first appearance (numbers, no hierarchy)."""
    import pandas as pd

    out = table.copy()
    for c in QIDS:
        if c not in NUMERIC:
            out[c] = pd.factorize(out[c], sort=False)[0]
    return out


def basic_hierarchies(table) -> dict:
    from gpuppdp.hierarchy import Hierarchy

    out = {}
    for c in QIDS:
        if c in NUMERIC:
            continue
        values = sorted(table[c].astype(str).unique())
        if c in GROUPS:
            out[c] = Hierarchy.from_rows([[v, GROUPS[c].get(v, v), "*"] for v in values],
                                         name=c)
        else:
            out[c] = Hierarchy.flat(values, name=c)
    return out


def their_gcp(release, table, hierarchies) -> float:
    """GCP of ``release`` with Basic_Mondrian's costs: numeric as gpuppdp's, a categorical
    leaf 0, any other label ``leaves under it / leaves``."""
    import numpy as np

    from gpuppdp.algorithms.mondrian import certainty_penalty
    from gpuppdp.queries import label_leaves

    ncp = certainty_penalty(release.released, table, QIDS, hierarchies=hierarchies)["ncp"]
    for c, h in hierarchies.items():
        under = label_leaves(h)
        d = len(h.leaves)
        col = release.released[c].astype(str)
        cost = {v: 1.0 if v == "*" else (0.0 if len(under[v]) == 1 else len(under[v]) / d)
                for v in col.unique()}
        ncp[c] = float(col.map(cost).astype(float).mean())
    return float(np.mean(list(ncp.values())))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_mondrian_published")
    p.add_argument("--ks", default="5,10,20,50,100",
                   help="comma-separated k values (default 5,10,20,50,100; published: 10)")
    args = p.parse_args()
    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)

    from gpuppdp.analysis.checker import check
    from gpuppdp.algorithms import Mondrian

    table = prepared()
    coded = intuitive(table)
    hier = basic_hierarchies(table)
    setups = [("intuitive", "strict", coded, {}), ("intuitive", "relaxed", coded, {}),
              ("hierarchies", "strict", table, hier)]
    ks = [int(x) for x in args.ks.split(",")]
    rows, out = [], []
    for k in ks:
        for setup, mode, data, hierarchies in setups:
            def run(data=data, hierarchies=hierarchies, mode=mode, k=k):
                return Mondrian(QIDS, k=k, strict=mode == "strict",
                                hierarchies=hierarchies).fit(data)

            seconds, releases = timed_runs(run, args.repeats, lambda: None, warmup=False)
            release = releases[-1]
            measured = check(release.released, quasi_identifiers=QIDS, backend="cpu")
            assert measured["k"] >= k and measured["suppressed_rows"] == 0, measured
            gcp = release.gcp
            theirs = their_gcp(release, table, hierarchies) if hierarchies else gcp
            pub = PUBLISHED.get((setup, mode)) if k == 10 else None
            rec = {"k": k, "setup": setup, "mode": mode, "records": len(data),
                   "partitions": release.partitions, "smallest_class": int(measured["k"]),
                   "ncp": release.ncp, "gcp": gcp, "gcp_their_formula": theirs,
                   "published_gcp_percent": None if pub is None else pub[0],
                   "source": None if pub is None else pub[1],
                   "quoted": None if pub is None else pub[2],
                   "seconds": {"median": statistics.median(seconds), "runs": seconds}}
            out.append(rec)
            rows.append((k, setup, mode, release.partitions, f"{100 * gcp:.2f}%",
                         f"{100 * theirs:.2f}%",
                         "-" if pub is None else f"{pub[0]:.2f}%",
                         f"{statistics.median(seconds):.2f}s",
                         "-" if pub is None else pub[1].split(" (")[0]))
    print()
    print_table(("k", "setup", "mode", "classes", "our GCP", "GCP (their formula)",
                 "published", "time", "source"), rows)
    write_json(args.json, {"machine": info, "args": vars(args),
                           "preparation": __doc__.split("Data preparation here: ")[1]
                           .split("It prints")[0].strip(),
                           "results": out})


if __name__ == "__main__":
    main()
