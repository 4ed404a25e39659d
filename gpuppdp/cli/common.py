"""The model options of ``anonymize`` and ``report`` (input, roles, privacy models,
suppression; :func:`add_anonymization_options`), their argument types and the privacy models
they build (:func:`_privacy_models`).

Registering the options imports only the standard library (the choices come from
:mod:`.choices`); building the models imports the library when called.  The other shared
pieces: :mod:`.options` (option builders, argument types), :mod:`.progress` (the progress
bar), :mod:`.measure` (``check``/``risk``: measured QIDs, streamed measuring) and :mod:`.run`
(the Anonymizer from the options, summaries, output plans)."""

from __future__ import annotations

import argparse

from .choices import OTHERS, SUPPRESSION_MODES, TCLOSENESS_DISTANCES
from .options import _fraction, _qi_spec, add_prior_option, read_prior

__all__ = ["add_anonymization_options", "orders_by_column"]


def _on_attribute(text: str) -> tuple[str, str | None]:
    """``SPEC@COLUMN`` -> (SPEC, COLUMN); ``SPEC`` -> (SPEC, None): the sensitive attribute a
    model refers to (default: the first ``--sensitive``)."""
    spec, at, column = text.rpartition("@")
    return (spec, column or None) if at else (text, None)


def _numbers(option: str, usage: str, count: int, convert=float):
    """Parser of ``--option A,B,...[@COLUMN]`` -> (A, B, ..., COLUMN or None)."""

    def parse(text: str) -> tuple:
        spec, column = _on_attribute(text)
        parts = spec.split(",")
        try:
            if len(parts) != count:
                raise ValueError(spec)
            values = [c(p) for c, p in zip(convert if isinstance(convert, tuple)
                                           else (convert,) * count, parts)]
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"{option} expects {usage}, got {text!r}")
        return (*values, column)

    return parse


def _l_diversity(text: str) -> tuple:
    """``distinct:L`` -> ("distinct", int L, column); ``entropy:L`` -> ("entropy", float L,
    column); ``recursive:C,L`` -> ("recursive", float C, int L, column); ``@COLUMN`` picks the
    sensitive attribute."""
    spec, column = _on_attribute(text)
    kind, sep, value = spec.partition(":")
    usage = ("--l-diversity expects distinct:L, entropy:L or recursive:C,L, optionally "
             f"@COLUMN (e.g. distinct:3, entropy:2.5, recursive:3,2@disease), got {text!r}")
    if kind not in ("distinct", "entropy", "recursive") or not sep:
        raise argparse.ArgumentTypeError(usage)
    try:
        if kind == "distinct":
            return kind, int(value), column
        if kind == "entropy":
            return kind, float(value), column
        c, comma, l = value.partition(",")  # noqa: E741
        if not comma:
            raise ValueError(value)
        return kind, float(c), int(l), column
    except ValueError:
        raise argparse.ArgumentTypeError(usage)


def _t_closeness(text: str) -> tuple[str, float, str | None]:
    """``equal:T`` / ``ordered:T`` / ``hierarchical:T`` [``@COLUMN``] -> (distance, T, column)."""
    spec, column = _on_attribute(text)
    kind, sep, value = spec.partition(":")
    usage = ("--t-closeness expects equal:T, ordered:T or hierarchical:T, optionally @COLUMN "
             f"(e.g. equal:0.2), got {text!r}")
    if kind not in TCLOSENESS_DISTANCES or not sep:
        raise argparse.ArgumentTypeError(usage)
    try:
        return kind, float(value), column
    except ValueError:
        raise argparse.ArgumentTypeError(usage)


def _beta_likeness(text: str) -> tuple[bool, float, str | None]:
    """``basic:B`` / ``enhanced:B`` [``@COLUMN``] -> (enhanced, B, column)."""
    spec, column = _on_attribute(text)
    kind, sep, value = spec.partition(":")
    usage = f"--beta-likeness expects basic:B or enhanced:B, optionally @COLUMN, got {text!r}"
    if kind not in ("basic", "enhanced") or not sep:
        raise argparse.ArgumentTypeError(usage)
    try:
        return kind == "enhanced", float(value), column
    except ValueError:
        raise argparse.ArgumentTypeError(usage)


_ORDER_WORDS = ("auto", "lexical", "numeric")


def _order_spec(text: str) -> tuple[str | None, str | list[str]]:
    """``[COL=]lexical|numeric|auto|v1,v2,...`` -> (COL or None, the word or the values): the
    order of a sensitive attribute for ordered t-closeness."""
    column, sep, spec = text.partition("=")
    if not sep:
        column, spec = None, text
    usage = ("--order expects COLUMN=lexical, COLUMN=numeric or COLUMN=V1,V2,... (every value "
             f"in order), got {text!r}")
    if (sep and not column) or not spec:
        raise argparse.ArgumentTypeError(usage)
    if spec in _ORDER_WORDS:
        return column, spec
    values = spec.split(",")
    if len(values) < 2 or not all(values):
        raise argparse.ArgumentTypeError(usage)
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"--order lists a value twice: {text!r}")
    return column, values


def orders_by_column(args) -> dict:
    """``--order`` as {column: word or values}; an order without COLUMN= is the first
    --sensitive's."""
    from ..engine.encoding import SchemaError

    out = {}
    for column, spec in getattr(args, "order", None) or []:
        if column is None:
            if not args.sensitive:
                raise SchemaError("--order needs --sensitive COLUMN (or --order COLUMN=...)")
            column = args.sensitive if isinstance(args.sensitive, str) \
                else args.sensitive[0][0]
        if column in out:
            raise SchemaError(f"--order is given twice for {column}")
        out[column] = spec
    return out


def _qid_set(text: str) -> list[str]:
    """``COL,COL,...`` -> the list of column names."""
    names = [c.strip() for c in text.split(",")]
    if not text or not all(names):
        raise argparse.ArgumentTypeError(
            f"--qid-set expects comma-separated quasi-identifiers COL,COL,..., got {text!r}")
    return names


_lkc = _numbers("--lkc", "L,K,C (e.g. 2,5,0.6 or 2,5,60%), optionally @COLUMN", 3,
                (int, int, _fraction))
_alpha_k = _numbers("--alpha-k", "ALPHA,K (e.g. 0.5,5), optionally @COLUMN", 2, (float, int))
_privacy_loss = _numbers("--privacy-loss", "EPSILON,ALPHA (e.g. 0.3,0.6), optionally @COLUMN",
                         2)
_delta_disclosure = _numbers("--delta-disclosure", "DELTA (e.g. 1.2), optionally @COLUMN", 1)
_delta_presence = _numbers("--delta-presence", "DMIN,DMAX (e.g. 0.05,0.5)", 2)


def _sensitive_spec(text: str) -> tuple[str, str | None]:
    """``COL`` or ``COL=HIERARCHY.csv`` (the hierarchy of hierarchical t-closeness)."""
    name, sep, path = text.partition("=")
    if not name or (sep and not path):
        raise argparse.ArgumentTypeError(
            f"--sensitive expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
    return name, path or None


def add_anonymization_options(p: argparse.ArgumentParser, required: bool = True,
                              qi_type=None) -> None:
    """The input, roles, privacy models and suppression options shared by ``anonymize`` and
    ``report``; without ``required`` INPUT and --qi are optional to the parser (``report
    --compare`` needs neither; the run checks)."""
    p.add_argument("input", nargs=None if required else "?",
                   help="CSV (delimiter detected, or --sep) or Parquet file")
    p.add_argument("--qi", action="append", type=qi_type or _qi_spec, required=required,
                   metavar="COL=HIERARCHY.csv" if qi_type is None else "COL[=HIERARCHY.csv]",
                   help="one quasi-identifier per --qi, with its ARX hierarchy; repeat --qi "
                   "for each (--algorithm mondrian|tds: a COL without hierarchy is numeric)")
    p.add_argument("--sensitive", action="append", default=[], type=_sensitive_spec,
                   metavar="COL[=HIERARCHY.csv]",
                   help="sensitive attribute; repeatable.  The models below refer to the first "
                   "one unless their value ends in @COLUMN; hierarchical t-closeness needs the "
                   "attribute's hierarchy")
    p.add_argument("--insensitive", action="append", default=[], metavar="COL")
    p.add_argument("--identifying", action="append", default=[], metavar="COL",
                   help="removed from the release")
    p.add_argument("--others", choices=OTHERS, default="error",
                   help="role of columns given none (default: error)")
    models = p.add_argument_group("privacy models (combinable, each repeatable)")
    models.add_argument("--k", type=int, default=None,
                        help="k-anonymity (optional when another model is given)")
    models.add_argument("--l-diversity", type=_l_diversity, action="append", default=[],
                        metavar="distinct:L|entropy:L|recursive:C,L[@COL]")
    models.add_argument("--t-closeness", type=_t_closeness, action="append", default=[],
                        metavar="equal:T|ordered:T|hierarchical:T[@COL]")
    models.add_argument("--order", type=_order_spec, action="append", default=[],
                        metavar="COL=lexical|numeric|V1,V2,...",
                        help="order of a sensitive attribute for --t-closeness ordered:T "
                        "(default, as ARX: numerically when every value is a number, "
                        "otherwise lexically as ARX's string type orders them)")
    models.add_argument("--alpha-k", type=_alpha_k, action="append", default=[],
                        metavar="ALPHA,K[@COL]", help="(alpha,k)-anonymity")
    models.add_argument("--delta-disclosure", type=_delta_disclosure, action="append",
                        default=[], metavar="DELTA[@COL]", help="delta-disclosure privacy")
    models.add_argument("--beta-likeness", type=_beta_likeness, action="append", default=[],
                        metavar="basic:B|enhanced:B[@COL]", help="beta-likeness")
    add_prior_option(models, "of --privacy-loss")
    models.add_argument("--privacy-loss", type=_privacy_loss, action="append", default=[],
                        metavar="EPSILON,ALPHA[@COL]",
                        help="largest distribution loss <= EPSILON and entropy loss (bits) "
                        "<= ALPHA per class, against the table's distribution")
    models.add_argument("--qid-set", type=_qid_set, action="append", default=[],
                        metavar="COL,COL,...",
                        help="k-anonymity (with --k) over this set of quasi-identifiers: with "
                        "--qid-set, --k applies to each given set instead of all QIDs")
    models.add_argument("--lkc", type=_lkc, action="append", default=[], metavar="L,K,C[@COL]",
                        help="LKC-privacy: every combination of at most L QID values is shared "
                        "by >= K records, confidence of each sensitive value <= C")
    models.add_argument("--population", metavar="FILE",
                        help="population table (CSV/Parquet) containing the input, for --k-map "
                        "and --delta-presence")
    models.add_argument("--k-map", type=int, action="append", default=[], metavar="K",
                        help="k-map: every released class matches >= K population records")
    models.add_argument("--delta-presence", type=_delta_presence, action="append", default=[],
                        metavar="DMIN,DMAX", help="delta-presence against --population")
    p.add_argument("--suppression-limit", "--suppression", dest="suppression", type=_fraction,
                   default=0.0, metavar="S", help="the most records suppressed, a fraction "
                   "(0.05) or percentage (5%%) of the input (--suppression: the same)")
    p.add_argument("--suppressed", choices=SUPPRESSION_MODES, default="mark",
                   help="mark suppressed records with * (default) or drop them")
    p.add_argument("--sep", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--hierarchy-sep", default=";", help="hierarchy CSV delimiter")


def _privacy_models(args, data=None) -> list:
    """The privacy models of the command line (``--k`` without ``--qid-set`` is left to the
    Anonymizer); ``data`` (the input) orders the values of ordered t-closeness."""
    from ..analysis.checker import value_order
    from ..engine.encoding import SchemaError
    from ..hierarchy import Hierarchy
    from ..io import read_table
    from ..models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosurePrivacy,
                          DistinctLDiversity, EntropyLDiversity, KAnonymityOnSubsets, LKCPrivacy,
                          PrivacyLoss, RecursiveCLDiversity, TCloseness)
    from ..models.population import DeltaPresence, KMap

    sensitive = dict(args.sensitive)
    population = None

    def attribute(column, option):
        if column is None:
            if not args.sensitive:
                raise SchemaError(f"{option} needs --sensitive COLUMN")
            return args.sensitive[0][0]
        if column not in sensitive:
            raise SchemaError(f"{option} refers to {column!r}, which is not given with "
                              "--sensitive")
        return column

    def population_table(option):
        nonlocal population
        if args.population is None:
            raise SchemaError(f"{option} needs --population FILE")
        if population is None:
            population = read_table(args.population, sep=args.sep)
        return population

    orders = orders_by_column(args)
    ordered = {attribute(c, "--t-closeness") for d, _, c in args.t_closeness
               if d == "ordered"}
    for column in orders:
        if column not in ordered:
            raise SchemaError(f"--order {column}=...: no --t-closeness ordered:T uses {column}")
    models = []
    if args.qid_set:
        if args.k is None:
            raise SchemaError("--qid-set needs --k (the k of k-anonymity on each QID set)")
        models.append(KAnonymityOnSubsets(args.qid_set, args.k))
    for L, K, C, column in args.lkc:  # noqa: N806 - the literature's names
        if column is None and not args.sensitive and C >= 1:
            models.append(LKCPrivacy(L, K, C))
        else:
            models.append(LKCPrivacy(L, K, C, attribute=attribute(column, "--lkc")))
    for *spec, column in args.l_diversity:
        name = attribute(column, "--l-diversity")
        if spec[0] == "distinct":
            models.append(DistinctLDiversity(name, spec[1]))
        elif spec[0] == "entropy":
            models.append(EntropyLDiversity(name, spec[1]))
        else:
            models.append(RecursiveCLDiversity(name, spec[1], spec[2]))
    for distance, t, column in args.t_closeness:
        name = attribute(column, "--t-closeness")
        hierarchy = None
        if distance == "hierarchical":
            if sensitive[name] is None:
                raise SchemaError(f"--t-closeness hierarchical:T needs the hierarchy of "
                                  f"{name!r}: --sensitive {name}=HIERARCHY.csv")
            hierarchy = Hierarchy.from_csv(sensitive[name], sep=args.hierarchy_sep)
        order = None
        if distance == "ordered" and data is not None:
            order = value_order(data[name], orders.get(name, "auto"), attribute=name)
        models.append(TCloseness(name, t, distance, hierarchy=hierarchy, order=order))
    for alpha, k, column in args.alpha_k:
        models.append(AlphaKAnonymity(attribute(column, "--alpha-k"), alpha, k))
    for delta, column in args.delta_disclosure:
        models.append(DeltaDisclosurePrivacy(attribute(column, "--delta-disclosure"), delta))
    for enhanced, beta, column in args.beta_likeness:
        models.append(BetaLikeness(attribute(column, "--beta-likeness"), beta,
                                   enhanced=enhanced))
    prior = read_prior(args.prior) if args.prior else None
    if prior is not None and not args.privacy_loss:
        raise ValueError("--prior is the prior of --privacy-loss; give --privacy-loss too")
    for epsilon, alpha, column in args.privacy_loss:
        models.append(PrivacyLoss(attribute(column, "--privacy-loss"), epsilon, alpha,
                                  prior=prior))
    for k in args.k_map:
        models.append(KMap(k, population=population_table("--k-map")))
    for dmin, dmax, column in args.delta_presence:
        if column is not None:
            raise SchemaError("--delta-presence takes no @COLUMN")
        models.append(DeltaPresence(dmin, dmax, population=population_table("--delta-presence")))
    return models
