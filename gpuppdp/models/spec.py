"""The models' text forms: the command line's model options (:func:`parse_spec`,
:func:`from_spec`) and the inverse of :meth:`~gpuppdp.core.model.PrivacyModel.describe`
(:func:`from_description`).

A spec is an option's value as the command line takes it:
``--l-diversity distinct:L|entropy:L|recursive:C,L[@COL]``,
``--t-closeness equal:T|ordered:T|hierarchical:T[@COL]``, ``--alpha-k ALPHA,K[@COL]``,
``--delta-disclosure DELTA[@COL]``, ``--beta-likeness basic:B|enhanced:B[@COL]``,
``--privacy-loss EPSILON,ALPHA[@COL]``, ``--lkc L,K,C[@COL]``,
``--qid-set COL,COL,...``, ``--k K``, ``--k-map K``, ``--delta-presence DMIN,DMAX``,
``--average-risk T[,HIGHEST,RECORDS_AT_RISK]``,
``--population-uniqueness T:pitman|zayatz|snb|dankar[:REGION|:SIZE]`` and
``--sample-uniqueness T``; ``@COL`` names the sensitive attribute (default: the first one
given).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

from ..engine.encoding import SchemaError
from ..errors import InputError
from .base import PrivacyModel
from .distribution import AlphaKAnonymity, BetaLikeness, DeltaDisclosurePrivacy, PrivacyLoss
from .groups import KAnonymityOnSubsets, LKCPrivacy
from .kanonymity import KAnonymity
from .ldiversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .population import DeltaPresence, KMap
from .risk import (
    POPULATION_ESTIMATORS,
    AverageReidentificationRisk,
    PopulationUniqueness,
    SampleUniqueness,
)
from .tcloseness import TCLOSENESS_DISTANCES, TCloseness

__all__ = ["SPEC_OPTIONS", "ParsedModel", "parse_spec", "from_spec", "parsed_models",
           "spec_attribute", "spec_compiled_kind", "from_description"]


def _on_attribute(text: str) -> tuple[str, str | None]:
    """``SPEC@COLUMN`` -> (SPEC, COLUMN); ``SPEC`` -> (SPEC, None)."""
    spec, at, column = text.rpartition("@")
    return (spec, column or None) if at else (text, None)


def fraction(text: str) -> float:
    """``0.05`` or ``5%`` -> 0.05."""
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise InputError(f"expected a fraction like 0.05 or 5%, got {text!r}") from None


def _numbers(option: str, usage: str, convert: tuple) -> Callable:
    """Parser of ``--option A,B,...[@COLUMN]`` -> (A, B, ..., COLUMN or None)."""

    def parse(text: str) -> tuple:
        spec, column = _on_attribute(text)
        parts = spec.split(",")
        try:
            if len(parts) != len(convert):
                raise ValueError(spec)
            values = [c(p) for c, p in zip(convert, parts)]
        except ValueError:
            raise InputError(f"{option} expects {usage}, got {text!r}") from None
        return (*values, column)

    return parse


def _kind_value(option: str, kinds: Sequence[str], usage: str, value: Callable) -> Callable:
    """Parser of ``--option KIND:VALUE[@COLUMN]`` -> (KIND, *value(VALUE), COLUMN)."""

    def parse(text: str) -> tuple:
        spec, column = _on_attribute(text)
        kind, sep, rest = spec.partition(":")
        message = usage.format(text=repr(text))
        if kind not in kinds or not sep:
            raise InputError(message)
        try:
            return (kind, *value(kind, rest), column)
        except ValueError:
            raise InputError(message) from None

    return parse


def _l_value(kind: str, text: str) -> tuple:
    if kind == "distinct":
        return (int(text),)
    if kind == "entropy":
        return (float(text),)
    c, comma, l = text.partition(",")  # noqa: E741 - the literature's name
    if not comma:
        raise ValueError(text)
    return float(c), int(l)


def _qid_set(text: str) -> list[str]:
    """``COL,COL,...`` -> the list of column names."""
    names = [c.strip() for c in text.split(",")]
    if not text or not all(names):
        raise InputError(
            f"--qid-set expects comma-separated quasi-identifiers COL,COL,..., got {text!r}")
    return names


def _integer(option: str) -> Callable:
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise InputError(f"{option} expects an integer, got {text!r}") from None
    return parse


def _average_risk(text: str) -> tuple:
    """``T`` or ``T,HIGHEST,RECORDS_AT_RISK`` -> (T, HIGHEST or None, RECORDS or None)."""
    parts = text.split(",")
    try:
        if len(parts) not in (1, 3):
            raise ValueError(text)
        values = [fraction(p) for p in parts]
    except (ValueError, InputError):
        raise InputError("--average-risk expects T or T,HIGHEST,RECORDS_AT_RISK (e.g. 0.2 or "
                         f"0.1,0.2,5%), got {text!r}") from None
    return (values[0], None, None) if len(values) == 1 else tuple(values)


def _population_uniqueness(text: str) -> tuple:
    """``T:MODEL[:REGION|:SIZE]`` -> (T, MODEL, REGION or None, SIZE or None); no population
    given: the USA (ARX's region of its examples)."""
    parts = text.split(":")
    message = ("--population-uniqueness expects T:MODEL[:REGION|:SIZE], MODEL one of "
               f"{', '.join(POPULATION_ESTIMATORS)} (e.g. 0.01:pitman:usa or "
               f"0.01:dankar:1000000), got {text!r}")
    if len(parts) not in (2, 3) or parts[1] not in POPULATION_ESTIMATORS:
        raise InputError(message)
    try:
        t = fraction(parts[0])
    except InputError:
        raise InputError(message) from None
    where = parts[2] if len(parts) == 3 else "usa"
    try:
        return t, parts[1], None, float(where)
    except ValueError:
        return t, parts[1], where, None


def _fraction_option(option: str) -> Callable:
    def parse(text: str) -> float:
        try:
            return fraction(text)
        except InputError:
            raise InputError(f"{option} expects a threshold like 0.05 or 5%, got "
                             f"{text!r}") from None
    return parse


_ALPHA_K = "ALPHA,K (e.g. 0.5,5), optionally @COLUMN"

#: option -> parser of its text (:func:`parse_spec`)
_PARSERS: dict[str, Callable] = {
    "--k": _integer("--k"),
    "--l-diversity": _kind_value(
        "--l-diversity", ("distinct", "entropy", "recursive"),
        "--l-diversity expects distinct:L, entropy:L or recursive:C,L, optionally @COLUMN "
        "(e.g. distinct:3, entropy:2.5, recursive:3,2@disease), got {text}", _l_value),
    "--t-closeness": _kind_value(
        "--t-closeness", TCLOSENESS_DISTANCES,
        "--t-closeness expects equal:T, ordered:T or hierarchical:T, optionally @COLUMN "
        "(e.g. equal:0.2), got {text}", lambda kind, text: (float(text),)),
    "--alpha-k": _numbers("--alpha-k", _ALPHA_K, (float, int)),
    "--delta-disclosure": _numbers("--delta-disclosure", "DELTA (e.g. 1.2), optionally @COLUMN",
                                   (float,)),
    "--beta-likeness": _kind_value(
        "--beta-likeness", ("basic", "enhanced"),
        "--beta-likeness expects basic:B or enhanced:B, optionally @COLUMN, got {text}",
        lambda kind, text: (float(text),)),
    "--privacy-loss": _numbers("--privacy-loss",
                               "EPSILON,ALPHA (e.g. 0.3,0.6), optionally @COLUMN", (float, float)),
    "--lkc": _numbers("--lkc", "L,K,C (e.g. 2,5,0.6 or 2,5,60%), optionally @COLUMN",
                      (int, int, fraction)),
    "--qid-set": _qid_set,
    "--k-map": _integer("--k-map"),
    "--delta-presence": _numbers("--delta-presence", "DMIN,DMAX (e.g. 0.05,0.5)", (float, float)),
    "--average-risk": _average_risk,
    "--population-uniqueness": _population_uniqueness,
    "--sample-uniqueness": _fraction_option("--sample-uniqueness"),
}

#: the model options that judge no sensitive attribute although their value is a tuple
_NO_ATTRIBUTE = ("--delta-presence", "--average-risk", "--population-uniqueness")

#: the command line's model options, in the order :func:`from_spec` is asked for them
SPEC_OPTIONS = tuple(_PARSERS)


def parse_spec(option: str, text: str):
    """The value of model option ``option`` (of :data:`SPEC_OPTIONS`) as the command line
    keeps it: ``--l-diversity``: ``("distinct", L, COL)``, ``("entropy", L, COL)`` or
    ``("recursive", C, L, COL)``; ``--t-closeness``: ``(distance, T, COL)``;
    ``--beta-likeness``: ``("basic" | "enhanced", B, COL)``; the comma-separated numbers of
    the others followed by COL (None without ``@``); ``--qid-set``: the column names;
    ``--k``, ``--k-map``: the integer; ``--average-risk``: ``(T, HIGHEST, RECORDS)`` (None,
    None without them); ``--population-uniqueness``: ``(T, MODEL, REGION, SIZE)`` (one of
    the last two None); ``--sample-uniqueness``: the threshold.  Raises
    :class:`~gpuppdp.errors.InputError` (the usage) on a malformed value."""
    parser = _PARSERS.get(option)
    if parser is None:
        raise InputError(f"not a model option: {option!r} (model options: "
                         f"{', '.join(SPEC_OPTIONS)})")
    return parser(text)


def spec_attribute(option: str, column: str | None, sensitive: Sequence[str]) -> str:
    """The sensitive attribute a model option refers to: its ``@COLUMN``, else the first of
    ``sensitive`` (the ``--sensitive`` names)."""
    if column is None:
        if not sensitive:
            raise SchemaError(f"{option} needs --sensitive COLUMN")
        return sensitive[0]
    if column not in sensitive:
        raise SchemaError(f"{option} refers to {column!r}, which is not given with "
                          "--sensitive")
    return column


def spec_compiled_kind(option: str, spec) -> str | None:
    """The compiled Flash's kind of check of the model a parsed spec builds
    (:meth:`~gpuppdp.core.model.PrivacyModel.compiled_kind_of`), without building it."""
    if option == "--l-diversity":
        l_classes: dict[str, type[PrivacyModel]] = {
            "distinct": DistinctLDiversity, "entropy": EntropyLDiversity,
            "recursive": RecursiveCLDiversity}
        return l_classes[spec[0]].compiled_kind_of()
    if option == "--t-closeness":
        return TCloseness.compiled_kind_of()
    return _CLASSES[option].compiled_kind_of()


_CLASSES: dict[str, type[PrivacyModel]] = {
    "--k": KAnonymity, "--alpha-k": AlphaKAnonymity,
    "--delta-disclosure": DeltaDisclosurePrivacy, "--beta-likeness": BetaLikeness,
    "--privacy-loss": PrivacyLoss, "--lkc": LKCPrivacy, "--qid-set": KAnonymityOnSubsets,
    "--k-map": KMap, "--delta-presence": DeltaPresence,
    "--average-risk": AverageReidentificationRisk, "--population-uniqueness": PopulationUniqueness,
    "--sample-uniqueness": SampleUniqueness}


class ParsedModel(NamedTuple):
    """A model option as parsed, before the model is built (its table is not read yet):
    what :func:`gpuppdp.engine.search.compiled_flash_supports` asks of a model."""

    option: str
    compiled_kind: str | None
    sensitive_attribute: str | None


def parsed_models(specs: dict, sensitive: Sequence[str] = ()) -> list[ParsedModel]:
    """The models of parsed options ``{option: [parse_spec value, ...]}`` (``--k``: the
    integer or None; ``--qid-set``: the list of sets), each with its compiled Flash kind and
    sensitive attribute (its ``@COLUMN``, else the first of ``sensitive``)."""
    default = sensitive[0] if sensitive else None
    out = []
    for option, values in specs.items():
        if option in ("--k", "--qid-set"):
            values = [] if values is None or values == [] else [values]
        for spec in values:
            on_attribute = isinstance(spec, tuple) and option not in _NO_ATTRIBUTE
            out.append(ParsedModel(option, spec_compiled_kind(option, spec),
                                   (spec[-1] or default) if on_attribute else None))
    return out


def from_spec(option: str, spec, *, sensitive: Sequence[str] = (),
              hierarchy: Callable | None = None, order: Callable | None = None,
              prior=None, population: Callable | None = None,
              k: int | None = None) -> PrivacyModel:
    """The model of a command-line option: ``spec`` is its text or :func:`parse_spec`'s
    value (for ``--qid-set``, the list of every set given, with ``k``).  ``sensitive``: the
    ``--sensitive`` names (the first is the default attribute); ``hierarchy(name)``: the
    sensitive attribute's hierarchy (hierarchical t-closeness), or None; ``order(name)``:
    its order (ordered t-closeness), or None; ``prior``: the prior of ``--privacy-loss``;
    ``population()``: the population table (``--k-map``, ``--delta-presence``)."""
    if isinstance(spec, str):
        spec = [parse_spec(option, spec)] if option == "--qid-set" else parse_spec(option, spec)
    if option == "--k":
        return KAnonymity(spec)
    if option == "--qid-set":
        if k is None:
            raise SchemaError("--qid-set needs --k (the k of k-anonymity on each QID set)")
        return KAnonymityOnSubsets(spec, k)
    if option in ("--k-map", "--delta-presence"):
        if population is None:
            raise SchemaError(f"{option} needs --population FILE")
        if option == "--k-map":
            return KMap(spec, population=population())
        if spec[-1] is not None:
            raise SchemaError("--delta-presence takes no @COLUMN")
        return DeltaPresence(spec[0], spec[1], population=population())
    if option == "--average-risk":
        return AverageReidentificationRisk(spec[0], highest_risk=spec[1],
                                           records_at_risk=spec[2])
    if option == "--population-uniqueness":
        return PopulationUniqueness(spec[0], model=spec[1], region=spec[2],
                                    population_size=spec[3])
    if option == "--sample-uniqueness":
        return SampleUniqueness(spec)
    if option == "--lkc":
        L, K, C, column = spec  # noqa: N806 - the literature's names
        if column is None and not sensitive and C >= 1:
            return LKCPrivacy(L, K, C)
        return LKCPrivacy(L, K, C, attribute=spec_attribute(option, column, sensitive))
    name = spec_attribute(option, spec[-1], sensitive)
    if option == "--t-closeness":
        return _t_closeness(name, spec, hierarchy, order)
    return _SENSITIVE_BUILDERS[option](name, spec[:-1], prior)


def _l_diversity(name: str, values: tuple, prior) -> PrivacyModel:
    kind, *numbers = values
    if kind == "distinct":
        return DistinctLDiversity(name, numbers[0])
    if kind == "entropy":
        return EntropyLDiversity(name, numbers[0])
    return RecursiveCLDiversity(name, numbers[0], numbers[1])


def _t_closeness(name: str, spec: tuple, hierarchy: Callable | None,
                 order: Callable | None) -> TCloseness:
    distance, t, _ = spec
    tree = None
    if distance == "hierarchical":
        tree = None if hierarchy is None else hierarchy(name)
        if tree is None:
            raise SchemaError(f"--t-closeness hierarchical:T needs the hierarchy of "
                              f"{name!r}: --sensitive {name}=HIERARCHY.csv")
    values = order(name) if distance == "ordered" and order is not None else None
    return TCloseness(name, t, distance, hierarchy=tree, order=values)


_SENSITIVE_BUILDERS: dict[str, Callable] = {
    "--l-diversity": _l_diversity,
    "--alpha-k": lambda name, v, prior: AlphaKAnonymity(name, v[0], v[1]),
    "--delta-disclosure": lambda name, v, prior: DeltaDisclosurePrivacy(name, v[0]),
    "--beta-likeness": lambda name, v, prior: BetaLikeness(name, v[1],
                                                           enhanced=v[0] == "enhanced"),
    "--privacy-loss": lambda name, v, prior: PrivacyLoss(name, v[0], v[1], prior=prior),
}


#: describe()'s "model" -> the model built from the description (``d``) and the table
#: parameters (``hierarchy``, ``population``)
_DESCRIBED: dict[str, Callable] = {
    "k-anonymity": lambda d, h, p: KAnonymity(d["k"]),
    "distinct-l-diversity": lambda d, h, p: DistinctLDiversity(d["attribute"], d["l"]),
    "entropy-l-diversity": lambda d, h, p: EntropyLDiversity(d["attribute"], d["l"]),
    "recursive-cl-diversity": lambda d, h, p: RecursiveCLDiversity(d["attribute"], d["c"],
                                                                   d["l"]),
    "t-closeness": lambda d, h, p: TCloseness(d["attribute"], d["t"], d["distance"],
                                              hierarchy=h),
    "alpha-k-anonymity": lambda d, h, p: AlphaKAnonymity(d["attribute"], d["alpha"], d["k"],
                                                         value=d.get("value")),
    "delta-disclosure": lambda d, h, p: DeltaDisclosurePrivacy(d["attribute"], d["delta"]),
    "basic-beta-likeness": lambda d, h, p: BetaLikeness(d["attribute"], d["beta"]),
    "enhanced-beta-likeness": lambda d, h, p: BetaLikeness(d["attribute"], d["beta"],
                                                           enhanced=True),
    "privacy-loss": lambda d, h, p: PrivacyLoss(d["attribute"], d["epsilon"], d["alpha"],
                                                prior=d.get("prior")),
    "k-anonymity-on-subsets": lambda d, h, p: KAnonymityOnSubsets(d["subsets"], d["k"]),
    "lkc-privacy": lambda d, h, p: LKCPrivacy(d["L"], d["K"], d["C"],
                                              sensitive_values=d.get("sensitive_values"),
                                              attribute=d.get("attribute")),
    "k-map": lambda d, h, p: KMap(d["k"], population=p),
    "delta-presence": lambda d, h, p: DeltaPresence(d["delta_min"], d["delta_max"],
                                                    population=p),
    "average-risk": lambda d, h, p: AverageReidentificationRisk(
        d["t"], highest_risk=d.get("highest_risk"), records_at_risk=d.get("records_at_risk")),
    "population-uniqueness": lambda d, h, p: PopulationUniqueness(
        d["t"], model=d["estimator"], region=d.get("region"),
        population_size=None if d.get("region") else d["population_size"]),
    "sample-uniqueness": lambda d, h, p: SampleUniqueness(d["t"]),
}

#: the descriptions naming a table parameter, and which
_TABLE_PARAMETERS = {"k-map": "population", "delta-presence": "population"}


def from_description(description: dict, *, hierarchy=None, population=None) -> PrivacyModel:
    """The model :meth:`~gpuppdp.core.model.PrivacyModel.describe` described:
    ``from_description(model.describe())`` rebuilds an equal model.  A description names its
    table parameters but does not hold them: pass ``hierarchy`` (hierarchical t-closeness)
    and ``population`` (k-map, delta-presence)."""
    if not isinstance(description, dict) or "model" not in description:
        raise InputError(f"a model description is a dict with a 'model' key, got "
                         f"{description!r}")
    name = description["model"]
    build = _DESCRIBED.get(name)
    if build is None:
        raise InputError(f"unknown model {name!r} (models: {', '.join(_DESCRIBED)})")
    needs = _TABLE_PARAMETERS.get(name)
    if needs == "population" and population is None:
        raise InputError(f"{name} needs its population table: from_description(..., "
                         "population=...)")
    if "hierarchy" in description and hierarchy is None:
        raise InputError(f"{name} with the {description['hierarchy']!r} hierarchy needs it: "
                         "from_description(..., hierarchy=...)")
    try:
        return build(description, hierarchy, population)
    except KeyError as missing:
        raise InputError(f"the description of {name} has no {missing}") from None
