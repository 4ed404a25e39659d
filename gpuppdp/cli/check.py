"""``gpuppdp check``: measure the privacy of a table (see :mod:`gpuppdp.analysis.checker`)."""

from __future__ import annotations

import argparse
import math

from .common import ORDER_DEFAULT, _lkc, _order_spec, _sensitive_spec, orders_by_column
from .measure import (dask_refusals, measure_input, measured_qids, measuring_options,
                      perturbation_line)
from .options import Command, add_prior_option, read_prior
from .progress import ProgressBar

__all__ = ["COMMAND", "register", "run_check"]


def _add_check_options(p) -> None:
    """``check``'s own options: the sensitive attribute's and LKC-privacy's."""
    p.add_argument("--sensitive", default=None, type=_sensitive_spec,
                   metavar="COL[=HIERARCHY.csv]",
                   help="the sensitive column (l-diversity, t-closeness, ... need it); with "
                   "its ARX hierarchy also t_hierarchical")
    add_prior_option(p)
    p.add_argument("--order", type=_order_spec, action="append", default=[],
                   metavar="[COL=]lexical|numeric|V1,V2,...",
                   help=f"order of the sensitive values for t_ordered ({ORDER_DEFAULT})")
    p.add_argument("--lkc", default=None, type=_lkc, metavar="L,K,C[@V1,V2,...]",
                   help="also measure LKC-privacy for combinations of at most L QIDs (C as "
                   "0.5 or 50%%); @V1,V2,... bounds the confidence of these sensitive values "
                   "only (the set S of Mohammed et al.; default: every value)")


def _json_value(value):
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value


def run_check(args: argparse.Namespace) -> int:
    """Run ``check``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..analysis.checker import CHECK_KEYS, check, check_chunks, format_report
    from ..errors import InputError
    from ..hierarchy import Hierarchy

    qids, hierarchies = measured_qids(args)
    sensitive, sensitive_file = args.sensitive or (None, None)
    args.sensitive = sensitive
    sensitive_hierarchy = None if sensitive_file is None else Hierarchy.from_csv(
        sensitive_file, name=sensitive, sep=args.hierarchy_sep)
    prior = None
    if args.prior is not None:
        if sensitive is None:
            raise InputError("check --prior needs --sensitive COLUMN")
        prior = read_prior(args.prior)
    lkc = None
    if args.lkc is not None:
        *lkc, values = args.lkc
        if values is not None:
            if not args.sensitive:
                raise InputError("check --lkc L,K,C@VALUES needs --sensitive COLUMN")
            lkc.append([v for v in values.split(",") if v])
    columns = list(dict.fromkeys(qids + ([args.sensitive] if args.sensitive else [])))
    orders = orders_by_column(args)
    if any(c != args.sensitive for c in orders):
        raise InputError(f"--order {next(iter(orders))}=...: check orders only the --sensitive "
                         "column")
    if args.population is not None and args.chunk_rows is not None:
        raise InputError("--chunk-rows: k_map and delta-presence (--population) match INPUT's "
                         "own values against the population, so INPUT is read into memory; "
                         "leave out --chunk-rows or --population")
    options = dict(quasi_identifiers=qids, sensitive=args.sensitive, backend=args.backend,
                   lkc=lkc, order=orders.get(args.sensitive, "auto") if args.sensitive else None,
                   sensitive_hierarchy=sensitive_hierarchy, prior=prior,
                   progress=ProgressBar("check", not args.quiet, unit="steps"))
    dask_refusals(args)
    plan, result, perturbation = measure_input(
        args, qids, hierarchies, columns,
        lambda chunks, w: check_chunks(chunks, weight_column=w, **options),
        lambda data, population: check(data, population=population, **options))
    print(format_report(result))
    if perturbation is not None:
        print(perturbation_line(perturbation))
    with plan.writing() as out:
        out.write_json("--json", {**{k: _json_value(result[k]) for k in CHECK_KEYS},
                                  **({} if perturbation is None else
                                     {"perturbation": perturbation})})
    return 0


COMMAND = Command(
    "check", run_check,
    measuring_options(_add_check_options, measured="its frequency set", backend="auto",
                      backend_help="where the classes are measured (default: GPU when usable)"),
    table=True,
    population="population table (same QID columns and representation) for k-map and "
               "delta-presence",
    json="also write the values as JSON (infinite values as the string \"inf\")",
    help="measure k, l, t, alpha, delta, beta and privacy loss of a table",
    description="Group the rows of INPUT by the --qi columns (values as they are; rows whose "
                "quasi-identifiers are all '*' are counted as suppressed and left out) and "
                "print the privacy measures of the table.")
register = COMMAND.register
