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
from typing import Any

from .choices import OTHERS, SUPPRESSION_MODES
from .options import (_fraction, _qi_spec, add_encoding_option, add_prior_option, add_shared,
                      read_prior)

__all__ = ["add_anonymization_options", "orders_by_column", "check_roles"]


def check_roles(args) -> None:
    """A column given twice as --qi (the last would silently win) or given two roles
    (--qi and --sensitive/--insensitive/--identifying): an error naming it; then
    :func:`resolve_lkc`."""
    from ..errors import InputError  # deferred: keeps gpuppdp --help fast

    resolve_lkc(args)
    qids = [name for name, _ in args.qi or []]
    twice = list(dict.fromkeys(n for n in qids if qids.count(n) > 1))
    if twice:
        raise InputError(f"--qi {twice[0]} is given {qids.count(twice[0])} times; give each "
                         "quasi-identifier once")
    for option, names in (("--sensitive", [n for n, _ in args.sensitive]),
                          ("--insensitive", args.insensitive),
                          ("--identifying", args.identifying)):
        both = [n for n in names if n in qids]
        if both:
            raise InputError(f"{both[0]!r} is given both --qi and {option}; give each column "
                             "one role")


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


def _model_option(option: str):
    """The parser's type of a model option: :func:`gpuppdp.models.parse_spec`, its error the
    parser's usage error."""

    def parse(text: str):
        from ..models import parse_spec  # deferred: the parser loads the library only here

        try:
            return parse_spec(option, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = option.lstrip("-").replace("-", "_")
    return parse


_l_diversity = _model_option("--l-diversity")
_t_closeness = _model_option("--t-closeness")
_beta_likeness = _model_option("--beta-likeness")


_ORDER_WORDS = ("auto", "lexical", "numeric")


#: how a sensitive attribute's values are ordered when --order does not say (check, anonymize)
ORDER_DEFAULT = ("default: by the column's --type where anonymize declares one (as ARX orders "
                 "by the data type), else numerically when every value is a number, as ARX "
                 "orders an INTEGER or DECIMAL attribute, otherwise lexically, as ARX's "
                 "default STRING type")


def _order_spec(text: str) -> tuple[str | None, str | list[str]]:
    """``[COL=]lexical|numeric|auto|v1,v2,...`` -> (COL or None, the word or the values): the
    order of a sensitive attribute for ordered t-closeness."""
    column: str | None
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
    from ..engine.encoding import SchemaError  # deferred: keeps gpuppdp --help fast

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


_qid_set = _model_option("--qid-set")
_lkc = _model_option("--lkc")


def _lkc_target(text: str) -> tuple:
    """``anonymize --lkc L,K,C[@TARGET]`` -> (L, K, C, TARGET or None); the TARGET (a
    --sensitive column, values of the first --sensitive, or COLUMN=V1,V2,...) is resolved
    against --sensitive by :func:`resolve_lkc`."""
    spec, at, target = text.partition("@")
    L, K, C, _ = _lkc(spec)  # noqa: N806 - the literature's names
    if at and not target:
        raise argparse.ArgumentTypeError(f"--lkc expects L,K,C[@COLUMN|@V1,V2,...], got {text!r}")
    return L, K, C, target if at else None


def resolve_lkc(args) -> None:
    """``args.lkc`` as (L, K, C, COLUMN or None) and ``args.lkc_values`` (the sensitive values
    each one bounds, None: all): ``@COLUMN=V1,V2,...`` those values of COLUMN, ``@NAME`` the
    --sensitive column NAME, any other ``@V1,V2,...`` those values of the first --sensitive
    (as ``check --lkc`` reads them)."""
    from ..engine.encoding import SchemaError  # deferred: keeps gpuppdp --help fast

    names = [name for name, _ in args.sensitive]
    specs, listed = [], []
    for L, K, C, target in args.lkc:  # noqa: N806 - the literature's names
        column, values = None, None
        if target is not None:
            column, sep, text = target.partition("=")
            if not sep and column in names:
                text = None
            elif not sep:
                column, text = None, target
            if text is not None:
                values = [v for v in text.split(",") if v]
                if not names:
                    raise SchemaError(f"--lkc {L},{K},{C}@{target}: the values are of the "
                                      "sensitive attribute; give --sensitive COLUMN")
                if not values:
                    raise SchemaError(f"--lkc {L},{K},{C}@{target}: no value listed")
        specs.append((L, K, C, column))
        listed.append(values)
    args.lkc, args.lkc_values = specs, listed
_alpha_k = _model_option("--alpha-k")
_privacy_loss = _model_option("--privacy-loss")
_delta_disclosure = _model_option("--delta-disclosure")
_delta_presence = _model_option("--delta-presence")
_average_risk = _model_option("--average-risk")
_population_uniqueness = _model_option("--population-uniqueness")
_sample_uniqueness = _model_option("--sample-uniqueness")


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
                        help=f"order of a sensitive attribute for --t-closeness ordered:T "
                        f"({ORDER_DEFAULT})")
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
    models.add_argument("--lkc", type=_lkc_target, action="append", default=[],
                        metavar="L,K,C[@COL|@V1,V2,...|@COL=V1,V2,...]",
                        help="LKC-privacy: every combination of at most L QID values is shared "
                        "by >= K records, confidence of each sensitive value <= C (of the "
                        "values listed after @ only, as in check: @V1,V2 of the first "
                        "--sensitive, @COL=V1,V2 of COL; @COL alone: all values of COL)")
    models.add_argument("--population", metavar="FILE",
                        help="population table (CSV/Parquet) containing the input, for --k-map "
                        "and --delta-presence")
    models.add_argument("--k-map", type=int, action="append", default=[], metavar="K",
                        help="k-map: every released class matches >= K population records")
    models.add_argument("--delta-presence", type=_delta_presence, action="append", default=[],
                        metavar="DMIN,DMAX", help="delta-presence against --population")
    models.add_argument("--average-risk", type=_average_risk, action="append", default=[],
                        metavar="T[,HIGHEST,RECORDS_AT_RISK]",
                        help="average re-identification risk (classes / records) <= T; with "
                        "HIGHEST and RECORDS_AT_RISK also <= that share of records at a risk "
                        "above HIGHEST (ARX's model)")
    models.add_argument("--population-uniqueness", type=_population_uniqueness,
                        action="append", default=[],
                        metavar="T:pitman|zayatz|snb|dankar[:REGION|:SIZE]",
                        help="estimated share of population uniques <= T, for a population of "
                        "SIZE records or an ARX region (default usa)")
    models.add_argument("--sample-uniqueness", type=_sample_uniqueness, action="append",
                        default=[], metavar="T", help="share of sample uniques <= T")
    p.add_argument("--suppression-limit", "--suppression", dest="suppression", type=_fraction,
                   default=0.0, metavar="S", help="the most records suppressed, a fraction "
                   "(0.05) or percentage (5%%) of the input (default 0: no record "
                   "suppressed, as ARX's default; --suppression: the same)")
    p.add_argument("--suppressed", choices=SUPPRESSION_MODES, default="mark",
                   help="mark suppressed records with * (default) or drop them")
    p.add_argument("--sep", default=None, help="CSV delimiter (default: detected)")
    add_encoding_option(p, "INPUT and --population")
    add_shared(p, hierarchy_sep={"help": "hierarchy CSV delimiter", "metavar": None})


#: the model options of the command line and their ``args`` names, in the models' order
_MODEL_OPTIONS = (("--lkc", "lkc"), ("--l-diversity", "l_diversity"),
                  ("--t-closeness", "t_closeness"), ("--alpha-k", "alpha_k"),
                  ("--delta-disclosure", "delta_disclosure"),
                  ("--beta-likeness", "beta_likeness"), ("--privacy-loss", "privacy_loss"),
                  ("--k-map", "k_map"), ("--delta-presence", "delta_presence"),
                  ("--average-risk", "average_risk"),
                  ("--population-uniqueness", "population_uniqueness"),
                  ("--sample-uniqueness", "sample_uniqueness"))


def _privacy_models(args, data=None) -> list:
    """The privacy models of the command line (:func:`gpuppdp.models.from_spec`; ``--k``
    without ``--qid-set`` is left to the Anonymizer); ``data`` (the input) orders the values
    of ordered t-closeness."""
    # deferred: the library loads in the run, not when the parser is built (fast --help)
    from ..analysis.checker import value_order
    from ..core.datatypes import DataType
    from ..engine.encoding import SchemaError
    from ..hierarchy import Hierarchy
    from ..io import read_table
    from ..models import LKCPrivacy, from_spec, spec_attribute

    names = [name for name, _ in args.sensitive]
    files = dict(args.sensitive)
    population: list = []  # the population table, read once when a model needs it
    orders = orders_by_column(args)
    ordered = {spec_attribute("--t-closeness", c, names) for d, _, c in args.t_closeness
               if d == "ordered"}
    for column in orders:
        if column not in ordered:
            raise SchemaError(f"--order {column}=...: no --t-closeness ordered:T uses {column}")

    def population_table():
        if not population:
            population.append(read_table(args.population, sep=args.sep,
                                         encoding=args.encoding))
        return population[0]

    typed = {column for column, _ in getattr(args, "types", None) or []}

    def order_of(name):
        """The order given by --order (checked by the model against a --type of the column),
        or None: the declared --type orders the values, or (untyped) numbers numerically."""
        spec = orders.get(name, "auto")
        if spec == "auto" and name in typed:
            return None
        values = value_order(data[name], spec, attribute=name)
        if values is None and name in typed:  # numeric, to be checked against the type
            values = DataType("decimal").sort(data[name].unique(), name)
        return values

    context: dict[str, Any] = {
        "sensitive": names,
        "hierarchy": lambda name: None if files[name] is None else
        Hierarchy.from_csv(files[name], sep=args.hierarchy_sep),
        "order": None if data is None else order_of,
        "prior": read_prior(args.prior) if args.prior else None,
        "population": None if args.population is None else population_table}
    if context["prior"] is not None and not args.privacy_loss:
        raise ValueError("--prior is the prior of --privacy-loss; give --privacy-loss too")
    models = [from_spec("--qid-set", args.qid_set, k=args.k)] if args.qid_set else []
    for option, name in _MODEL_OPTIONS:
        models += [from_spec(option, spec, **context) for spec in getattr(args, name)]
    for i, values in enumerate(getattr(args, "lkc_values", None) or []):
        if values is not None:  # the same model, bounding only the listed values
            L, K, C, column = args.lkc[i]  # noqa: N806 - the literature's names
            models[i + bool(args.qid_set)] = LKCPrivacy(
                L, K, C, sensitive_values=values,
                attribute=spec_attribute("--lkc", column, names))
    return models
