"""The ``gpuppdp risk`` subcommand: re-identification risk of a table given its QIDs.

::

    gpuppdp risk INPUT --qi COL[=HIERARCHY.csv] [COL ...] [--population-size N] [--json OUT.json]
        [--sampling-weights COL] [--suda2 [MAX_SIZE]] [--sep SEP] [--top K]
        [--backend auto|cpu|gpu]

The main CLI calls :func:`register` (:data:`COMMAND`'s); bad input raises
:class:`~gpuppdp.errors.InputError` or an ``OSError`` (one ``gpuppdp: error: ...`` line, exit
status 2, printed by the main CLI).
"""

from __future__ import annotations

import argparse
import math

from .measure import (dask_refusals, measure_input, measured_qids, measuring_options,
                      perturbation_line)
from .options import Command
from .progress import ProgressBar, compile_notice

__all__ = ["COMMAND", "register", "run_risk", "format_report"]


def _add_risk_options(p) -> None:
    """``risk``'s own options: the population, survey weights, SUDA2, the summary's size."""
    p.add_argument("--population-size", type=float, default=None, metavar="N",
                   help="size of the population the table was sampled from (enables the "
                        "population uniqueness estimates)")
    p.add_argument("--sampling-weights", default=None, metavar="COL",
                   help="column of survey (sampling) weights, the population records each "
                        "record stands for: weighted class sizes and Benedetti-Franconi "
                        "individual risks, as sdcMicro's freqCalc/indivRisk (not anonymize's "
                        "--weights, the attribute weights of a metric)")
    p.add_argument("--suda2", nargs="?", type=int, const=True, default=None, metavar="MAX_SIZE",
                   help="special uniques (SUDA2): minimal sample uniques of at most MAX_SIZE "
                        "attributes (default all), SUDA and DIS-SUDA scores and each "
                        "attribute's contribution, as sdcMicro's suda2")
    p.add_argument("--top", type=int, default=10, metavar="K",
                   help="QID subsets shown in the summary (most distinguishing first; "
                        "default 10, 0: none)")


def _population(value):
    """``--population-size`` as an int (None when not given)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError

    if value is None:
        return None
    if not math.isfinite(value) or value <= 0 or not float(value).is_integer():
        raise InputError(f"--population-size must be a positive whole number, got {value:g}")
    return int(value)


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.4g} %"


def _survey_lines(sw: dict) -> list[str]:
    """The ``survey_weights`` section of a report, in words."""
    return [f"survey weights ({sw['column'] or 'given'}): estimated population "
            f"{sw['estimated_population']:.6g}; individual risk (Benedetti-Franconi): highest "
            f"{sw['highest_individual_risk']:.4g}, expected re-identifications "
            f"{sw['expected_reidentifications']:.4g} ({_pct(sw['global_risk'])} of the records)",
            "records at individual risk (risk > threshold): " + ", ".join(
                f"{t}: {_pct(v)}" for t, v in sw["records_at_risk"].items())]


def _suda_lines(su: dict) -> list[str]:
    """The ``suda2`` section of a report: MSUs by size, DIS-SUDA scores by interval and the
    attribute contributions, as small tables."""
    sizes = ", ".join(f"{s}: {v}" for s, v in su["msus_by_size"].items())
    lines = [f"special uniques (SUDA2, MSUs of at most {su['max_size']} attributes): "
             f"{su['msus']} MSUs ({sizes}) in {su['records_with_msus']} records; highest "
             f"SUDA score {su['highest_score']:.6g}, highest DIS-SUDA score "
             f"{su['highest_dis_score']:.4g}",
             "  DIS-SUDA score  records"]
    lines += [f"  {k:<14}  {v}" for k, v in su["dis_score_intervals"].items()]
    contrib = sorted(su["attribute_contributions"].items(), key=lambda kv: -kv[1])
    width = max(len("attribute"), *(len(k) for k, _ in contrib))
    lines.append(f"  {'attribute':<{width}}  contribution")
    lines += [f"  {k:<{width}}  {v:10.2f} %" for k, v in contrib]
    return lines


def format_report(rep: dict, top: int = 10) -> str:
    """A readable summary of :func:`gpuppdp.analysis.risk.risk_report`'s dict."""
    lines = [
        f"quasi-identifiers: {', '.join(rep['quasi_identifiers'])}",
        f"records: {rep['records']}   equivalence classes: {rep['equivalence_classes']}   "
        f"sample uniques: {rep['sample_uniques']} ({_pct(rep['sample_uniques_fraction'])})",
        "prosecutor risk: "
        f"highest {rep['prosecutor_highest_risk']:.4g}, lowest "
        f"{rep['prosecutor_lowest_risk']:.4g}, average {rep['prosecutor_average_risk']:.4g}",
        "journalist risk" + (" (= prosecutor without a population table)"
                             if rep.get("journalist_records_at_risk") is None else "") + ": "
        f"highest {rep['journalist_highest_risk']:.4g}, lowest "
        f"{rep['journalist_lowest_risk']:.4g}, average {rep['journalist_average_risk']:.4g}",
        f"marketer risk: {rep['marketer_risk']:.4g}",
        "records at risk (risk > threshold): " + ", ".join(
            f"{t}: {_pct(v)}" for t, v in rep["records_at_risk"].items()),
    ]
    if rep.get("suppressed_rows"):
        lines.insert(1, f"suppressed rows (all quasi-identifiers '*', left out): "
                        f"{rep['suppressed_rows']}")
    pu = rep.get("population_uniqueness")
    if pu is not None:
        lines.append(
            f"population uniques (population {rep['population_size']}): "
            f"Pitman {_pct(pu['pitman'])}, Zayatz {_pct(pu['zayatz'])}, "
            f"SNB {_pct(pu['snb'])}; "
            f"Dankar's rule ({pu['dankar_choice']}): {_pct(pu['dankar'])}")
    if rep.get("survey_weights") is not None:
        lines += _survey_lines(rep["survey_weights"])
    if rep.get("suda2") is not None:
        lines += _suda_lines(rep["suda2"])
    if rep.get("perturbation") is not None:
        lines.append(perturbation_line(rep["perturbation"]))
    attrs = rep.get("attribute_risks")
    if attrs and top > 0:
        ranked = sorted(attrs.items(), key=lambda kv: (-kv[1]["distinction"],
                                                       -kv[1]["separation"]))[:top]
        width = max(len(k) for k, _ in ranked)
        lines.append(f"most distinguishing QID subsets ({len(ranked)} of {len(attrs)}):")
        lines.append(f"  {'attributes':<{width}}  distinction  separation")
        for k, v in ranked:
            lines.append(f"  {k:<{width}}  {v['distinction']:11.6f}  {v['separation']:10.6f}")
    return "\n".join(lines)


def run_risk(args: argparse.Namespace) -> int:
    """Run ``risk``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from .. import kernels
    from ..analysis.risk import risk_report, risk_report_chunks
    from ..backend import get_backend
    from ..errors import InputError

    qids, hierarchies = measured_qids(args)
    population = _population(args.population_size)
    if args.top < 0:
        raise InputError(f"--top must be at least 0, got {args.top}")
    in_memory = [o for o, v in (("--sampling-weights", args.sampling_weights),
                                ("--suda2", args.suda2)) if v is not None]
    if in_memory and args.dask:
        raise InputError(f"--dask and {in_memory[0]}: they need INPUT's rows in memory; "
                         "leave out --dask")
    if args.suda2 is not None and args.suda2 is not True and args.suda2 < 1:
        raise InputError(f"--suda2 must be at least 1, got {args.suda2}")
    bar = ProgressBar("risk", not args.quiet, unit="steps")
    dask_refusals(args)
    if get_backend(args.backend).kernels == "cpu":
        compile_notice(args, kernels.risk_kernels(), seconds="about 15 s")
    backend = get_backend(args.backend)
    plan, rep, perturbation = measure_input(
        args, qids, hierarchies, qids,
        lambda chunks, w: risk_report_chunks(chunks, qids, population_size=population,
                                             backend=backend, weight_column=w, progress=bar),
        lambda data, table: risk_report(data, qids, population_size=population,
                                        backend=backend, population=table,
                                        sampling_weights=args.sampling_weights,
                                        suda2=args.suda2, progress=bar),
        streamable=not in_memory,
        extra=() if args.sampling_weights is None else (args.sampling_weights,))
    if perturbation is not None:
        rep["perturbation"] = perturbation
    print(format_report(rep, args.top))
    with plan.writing() as out:
        out.write_json("--json", rep, indent=1)
    if "--json" in plan:
        print(f"report written to {args.json}")
    return 0


COMMAND = Command(
    "risk", run_risk,
    measuring_options(_add_risk_options, measured="its distinct QID combinations",
                      backend="cpu", backend_help="where the arrays are computed (default cpu)"),
    table=True,
    population="population table containing INPUT's records (same QID columns and "
               "representation): journalist and marketer risk against it",
    json="also write the full report (every QID subset) as JSON",
    help="re-identification risk of a table (raw or released) given its quasi-identifiers",
    description="Prosecutor/journalist/marketer risk, sample uniques, records at risk, "
                "population uniqueness (Pitman, Zayatz, SNB, Dankar's rule; needs "
                "--population-size) and the distinction/separation of every QID subset, "
                "computed from the equivalence classes of the --qi columns.")
register = COMMAND.register
