"""Lattice search with privacy models other than plain k-anonymity, against ARX where known.

Cases:

* every case of ``tests/data/arx_adult.json`` whose models are not only k-anonymity (distinct,
  entropy and recursive (c,l) l-diversity, equal and hierarchical t-closeness, each with
  k = 5): Adult with 8 QIDs, ``occupation`` sensitive; ARX 3.9.2's median ``anonymize()``
  time, checked-node count, optimum and loss are in the file;
* the other models of :mod:`gpuppdp.models`, which have no ARX reference here, in the same
  setting (8 QIDs, ``occupation`` sensitive, suppression 0 % or ``--extra-suppression``,
  loss): (alpha, k)-anonymity, delta-disclosure privacy, basic and enhanced beta-likeness,
  the (epsilon, alpha) privacy-loss model (the table's prior, a uniform one, the
  class-conditional one), LKC-privacy,
  k-anonymity on QID subsets, k-map and delta-presence (the population: Adult and a random
  half of it again), the average re-identification risk, sample and population uniqueness
  (see ``EXTRA``).

Per case one warm-up ``fit`` and ``--repeats`` timed ones; reported: whether the search ran
compiled (:mod:`gpuppdp.engine.search.flash_compiled`; ``--python-flash``: never, the Python
traversal, for before/after comparisons in one run), nodes checked, search
(``result.search.seconds``, median (min)) and total (``result.timings["total"]``: encoding,
search, release), ARX's time and the ratio search / ARX, and whether the optimum and the loss
(relative 1e-9) are ARX's.  ``--only`` selects cases by substring of their id.  A case
without a solution is listed as such.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_models.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_models.py --backend cpu --repeats 5
    python benchmarks/bench_models.py --only beta --repeats 3
    python benchmarks/bench_models.py --only delta --python-flash
"""

from __future__ import annotations

import argparse
import sys
import time

from _common import (add_common_args, arx_case_anonymizer, fmt_seconds, load_arx_cases,
                     machine_info, print_machine, print_table, resolve_backend, summarize,
                     synchronizer, timed_runs, write_json)

import pandas as pd

from gpuppdp import datasets
from gpuppdp.anonymizer import NoSolutionError
from gpuppdp.engine.search import flash_compiled
from gpuppdp.models import (AlphaKAnonymity, AverageReidentificationRisk, BetaLikeness,
                            DeltaDisclosurePrivacy, KAnonymity, KAnonymityOnSubsets, LKCPrivacy,
                            PopulationUniqueness, PrivacyLoss, SampleUniqueness)
from gpuppdp.models.population import DeltaPresence, KMap

SENS = "occupation"

#: models without an ARX reference here: id -> (description, factory of the model list)
EXTRA = {
    "alpha-k-a0.5-k5": ("(alpha,k)-anonymity alpha=0.5 k=5",
                        lambda: [AlphaKAnonymity(SENS, 0.5, k=5)]),
    "delta-d2-k5": ("k=5 + delta-disclosure delta=2",
                    lambda: [KAnonymity(5), DeltaDisclosurePrivacy(SENS, 2.0)]),
    "delta-d1-k5": ("k=5 + delta-disclosure delta=1",
                    lambda: [KAnonymity(5), DeltaDisclosurePrivacy(SENS, 1.0)]),
    "beta-basic-b1-k5": ("k=5 + basic beta-likeness beta=1",
                         lambda: [KAnonymity(5), BetaLikeness(SENS, 1.0)]),
    "beta-enhanced-b1-k5": ("k=5 + enhanced beta-likeness beta=1",
                            lambda: [KAnonymity(5), BetaLikeness(SENS, 1.0, enhanced=True)]),
    "privacy-loss-e0.3-a0.5-k5": ("k=5 + privacy loss eps=0.3 alpha=0.5 bits",
                                  lambda: [KAnonymity(5), PrivacyLoss(SENS, 0.3, 0.5)]),
    "privacy-loss-uniform-e0.5-a0.9-k5": (
        "k=5 + privacy loss eps=0.5 alpha=0.9 bits, uniform prior",
        lambda: [KAnonymity(5), PrivacyLoss(SENS, 0.5, 0.9, prior=_uniform_prior())]),
    "privacy-loss-conditional-e0.4-a0.5-k5": (
        "k=5 + privacy loss eps=0.4 alpha=0.5 bits, prior conditional on sex, age",
        lambda: [KAnonymity(5), PrivacyLoss(SENS, 0.4, 0.5, prior="conditional",
                                            prior_qids=["sex", "age"])]),
    "lkc-L3-K5-C0.5": ("LKC L=3 K=5 C=0.5 (occupation)",
                       lambda: [LKCPrivacy(3, 5, 0.5, attribute=SENS)]),
    "lkc-L2-K10-C1": ("LKC L=2 K=10 C=1 (no sensitive)",
                      lambda: [LKCPrivacy(2, 10, 1.0)]),
    "k-subsets-k10": ("k=10 on {age,sex,race}, {education,marital-status}",
                      lambda: [KAnonymityOnSubsets([["age", "sex", "race"],
                                                    ["education", "marital-status"]], 10)]),
    "k-map-k10-k5": ("k=5 + k-map k=10 (population 1.5x Adult)",
                     lambda: [KAnonymity(5), KMap(10, population=_population())]),
    "delta-presence-0.55-0.75-k2": (
        "k=2 + delta-presence 0.55-0.75 (population 1.5x Adult)",
        lambda: [KAnonymity(2), DeltaPresence(0.55, 0.75, population=_population())]),
    "average-risk-0.05": ("average re-identification risk t=0.05",
                          lambda: [AverageReidentificationRisk(0.05)]),
    "average-risk-0.1-hr0.2-r0.05": (
        "average risk t=0.1, highest risk 0.2, records at risk 5 %",
        lambda: [AverageReidentificationRisk(0.1, highest_risk=0.2, records_at_risk=0.05)]),
    "average-risk-0.05-k2": ("k=2 + average risk t=0.05",
                             lambda: [KAnonymity(2), AverageReidentificationRisk(0.05)]),
    "sample-uniqueness-0.01": ("sample uniqueness t=0.01", lambda: [SampleUniqueness(0.01)]),
    "population-uniqueness-0.01-zayatz": (
        "population uniqueness t=0.01, Zayatz, USA",
        lambda: [PopulationUniqueness(0.01, model="zayatz", region="usa")]),
}


def _population() -> pd.DataFrame:
    """Adult and a random half of it again: a population the table is a sample of."""
    data = datasets.adult()[0]
    return pd.concat([data, data.sample(frac=0.5, random_state=0)], ignore_index=True)


def _uniform_prior() -> dict:
    """The uniform prior over Adult's occupations."""
    values = datasets.adult()[0][SENS].astype(str).unique()
    return dict.fromkeys(values, 1.0 / len(values))


def _describe(models) -> str:
    parts = []
    for m in models:
        kind = m["model"]
        params = ",".join(f"{k}={v}" for k, v in m.items()
                          if k not in ("model", "attribute", "hierarchy", "log"))
        parts.append(f"{kind}({params})")
    return " + ".join(parts)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_models")
    p.add_argument("--search", default="flash", choices=("flash", "exhaustive"))
    p.add_argument("--only", default=None, help="run the cases whose id contains this")
    p.add_argument("--extra-suppression", type=float, default=None,
                   help="suppression limit of the cases without ARX reference (default: "
                        "the ARX cases' 0)")
    p.add_argument("--python-flash", action="store_true",
                   help="never the compiled Flash: the Python traversal")
    args = p.parse_args(argv)
    if args.python_flash:
        flash_compiled.compiled_flash_supports = lambda *a, **kw: False

    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    print(f"# search={args.search}{' (Python Flash)' if args.python_flash else ''}, "
          f"repeats={args.repeats} after 1 warm-up; times: median (min)\n")

    arx_cases = [c for c in load_arx_cases()
                 if any(m["model"] != "k-anonymity" for m in c["models"])]
    template = arx_cases[0]  # 8 QIDs, occupation sensitive, 0 %, loss
    if args.extra_suppression is not None:
        template = dict(template, suppression_limit=args.extra_suppression)
    cases = [(c["id"], _describe(c["models"]), c, None) for c in arx_cases]
    cases += [(cid, desc, template, factory) for cid, (desc, factory) in EXTRA.items()]
    if args.only:
        cases = [c for c in cases if args.only in c[0]]

    headers = ["case", "models", "compiled", "nodes", "search", "total", "ARX ms", "ARX nodes",
               "search/ARX", "=ARX opt", "=ARX loss", "loss"]
    rows, results = [], []
    for cid, desc, case, factory in cases:
        anon, data = arx_case_anonymizer(case, backend, args.search,
                                         None if factory is None else factory())
        out = {"id": cid, "models": desc, "search": args.search,
               "suppression": case["suppression_limit"], "metric": case["metric"],
               "quasi_identifiers": case["quasi_identifiers"]}
        t0 = time.perf_counter()
        try:
            _, fits = timed_runs(lambda: anon.fit(data), args.repeats, sync)
        except NoSolutionError as exc:
            out["error"] = str(exc)
            results.append(out)
            rows.append([cid, desc, None, "no solution"] + [None] * 8)
            print(f"  {cid}: no solution", file=sys.stderr, flush=True)
            continue
        last = fits[-1]
        search = summarize([r.search.seconds for r in fits])
        total = summarize([r.timings["total"] for r in fits])
        compiled = bool(last.search.details.get("compiled"))
        out.update({"compiled": compiled, "nodes_evaluated": last.nodes_evaluated,
                    "search_seconds": search,
                    "total_seconds": total, "transformation": last.transformation,
                    "information_loss": last.information_loss,
                    "equivalence_classes": last.equivalence_classes,
                    "suppressed_records": last.suppressed_records,
                    "bench_wall_seconds": time.perf_counter() - t0})
        ref = case.get("arx") if factory is None else None
        ms = ratio = same_t = same_l = None
        if ref is not None:
            exp = case["expected"]
            ms = ref["anonymize_ms_median"]
            ratio = search["median"] * 1e3 / ms
            same_t = exp["transformation"] == last.transformation
            same_l = abs(exp["information_loss"] - last.information_loss) <= \
                1e-9 * max(1.0, abs(exp["information_loss"]))
            out["arx"] = {"anonymize_ms_median": ms, "nodes_checked": ref["nodes_checked"],
                          "search_over_arx": ratio, "same_transformation": same_t,
                          "same_loss": same_l, "information_loss": exp["information_loss"]}
        results.append(out)
        rows.append([cid, desc, "yes" if compiled else "no", last.nodes_evaluated,
                     f"{fmt_seconds(search['median'])} ({fmt_seconds(search['min'])})",
                     f"{fmt_seconds(total['median'])} ({fmt_seconds(total['min'])})",
                     None if ms is None else f"{ms:.1f}",
                     None if ref is None else ref["nodes_checked"],
                     None if ratio is None else f"{ratio:.1f}x",
                     None if same_t is None else ("yes" if same_t else "NO"),
                     None if same_l is None else ("yes" if same_l else "NO"),
                     f"{last.information_loss:.6g}"])
        print(f"  {cid}: search {fmt_seconds(search['median'])}, {last.nodes_evaluated} "
              f"nodes", file=sys.stderr, flush=True)

    print()
    print_table(headers, rows)
    write_json(args.json, {"benchmark": "bench_models", "machine": info,
                           "settings": {"search": args.search, "repeats": args.repeats,
                                        "warmup_runs": 1, "python_flash": args.python_flash},
                           "cases": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
