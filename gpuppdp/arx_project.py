"""ARX project files (``.deid``): read one and run it unchanged.

A ``.deid`` file is the zip ARX's GUI saves (``org.deidentifier.arx.gui.worker.WorkerSave``,
ARX 3.9.2); besides Java-serialized objects it holds readable XML and CSV, which is what
:func:`read_arx_project` reads (``WorkerLoad`` reads the same XML for the definition):

* ``project.xml`` -- ``<project>`` with the CSV ``<separator>`` of the data and hierarchies;
* ``data/input.csv`` -- the input table (UTF-8, a header line, ``"`` quotes);
* ``input/definition.xml`` -- ``<definition>`` with one ``<assigment>`` per column (sic):
  ``<name>``, ``<type>`` (``QUASI_IDENTIFYING_ATTRIBUTE``, ``SENSITIVE_ATTRIBUTE``,
  ``INSENSITIVE_ATTRIBUTE``, ``IDENTIFYING_ATTRIBUTE``), ``<datatype>`` (``String``,
  ``Integer``, ``Decimal``, ...), ``<ref>`` the hierarchy (``hierarchies/NAME.csv``),
  ``<min>``/``<max>`` the generalization levels allowed (``All``), and
  ``<microaggregationFunction>`` where one is set;
* ``input/config.xml`` -- ``<config>`` with ``<relativeMaxOutliers>`` (the suppression
  limit), ``<metric>`` (the quality model's ``toString()``: ``Loss (0.5/...)``, ``Height``,
  ...), ``<attributeWeights>`` and ``<criteria>``: each privacy model's ``toString()``
  (``5-anonymity``, ``distinct-3-diversity for attribute 'disease'``, ...), plus the
  suppression settings;
* ``input/hierarchies/NAME.csv`` -- ARX hierarchy files (:meth:`Hierarchy.from_csv`).

Settings gpuppdp cannot honour (a privacy model or metric it lacks, microaggregation,
generalization level limits, a quality model's parameters the XML does not carry) are listed
in :attr:`ArxProject.unsupported`; the run goes on without them, or refuses with ``strict``.
"""

from __future__ import annotations

import csv
import io
import os
import re
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field

import pandas as pd

from .errors import InputError
from .hierarchy import Hierarchy

__all__ = ["ArxProject", "read_arx_project", "ARX_METRICS"]

#: ARX quality models (their ``toString()``, without parameters) -> gpuppdp's metric names
ARX_METRICS = {
    "Loss": "loss",
    "Non-monotonic precision": "precision",
    "Non-monotonic discernability": "discernibility",
    "Monotonic discernability (DM*)": "discernibility-monotonic",
    "Average equivalence class size": "aecs",
    "Non-monotonic non-uniform entropy": "entropy",
    "Non-uniform entropy": "entropy-monotonic",
    "Normalized non-uniform entropy": "normalized-entropy",
    "Height": "height",
    "Ambiguity": "ambiguity",
    "KL-Divergence": "kl",
}

_NUM = r"([-+0-9.eE]+|NaN|Infinity)"
_ATTR = r" for attribute '(.*)'$"


def _criterion(text: str, option: str, kind: str = "", whole: tuple[int, ...] = ()):
    """A row of :data:`_CRITERIA` for a model of one attribute: ARX's ``toString()`` ``text``
    (``#`` where a number stands; `` for attribute '...'`` follows), the command-line option
    and its value from the match, ``kind:numbers@attribute`` (the numbers at the positions
    ``whole`` as ints: :func:`_int`)."""
    def value(m: re.Match) -> str:
        *numbers, attribute = m.groups()
        written = ",".join(_int(v) if i in whole else v for i, v in enumerate(numbers))
        return (f"{kind}:" if kind else "") + f"{written}@{attribute}"
    return re.compile("^" + text.replace("#", _NUM) + _ATTR), option, value


#: ARX criteria (``toString()``) -> (command-line option, its value from the match)
_CRITERIA = [
    (re.compile(r"^(\d+)-anonymity$"), "--k", lambda m: m[1]),
    _criterion("distinct-#-diversity", "--l-diversity", "distinct", whole=(0,)),
    _criterion("shannon-entropy-#-diversity", "--l-diversity", "entropy"),
    _criterion(r"recursive-\(#,#\)-diversity", "--l-diversity", "recursive", whole=(1,)),
    *(_criterion(f"#-closeness with {distance}", "--t-closeness", kind)
      for distance, kind in (("equal ground-distance", "equal"), ("ordered distance", "ordered"),
                             ("hierarchical ground-distance", "hierarchical"))),
    _criterion("#-disclosure privacy", "--delta-disclosure"),
    *(_criterion(f"{kind}-#-likeness", "--beta-likeness", kind) for kind in ("basic", "enhanced")),
]

_ROLES = {"QUASI_IDENTIFYING_ATTRIBUTE": "qi", "SENSITIVE_ATTRIBUTE": "sensitive",
          "INSENSITIVE_ATTRIBUTE": "insensitive", "IDENTIFYING_ATTRIBUTE": "identifying"}


def _int(text: str) -> str:
    """ARX writes the l of distinct and recursive l-diversity as an int (``3``); a double
    form (``3.0``) is accepted too."""
    return str(int(float(text)))


@dataclass
class ArxProject:
    """An ARX project as gpuppdp runs it.

    ``data``: the input table (strings); ``hierarchies``: per attribute with a hierarchy
    (quasi-identifiers, and sensitive attributes of hierarchical t-closeness);
    ``roles``: per column ``"qi"``, ``"sensitive"``, ``"insensitive"`` or
    ``"identifying"``; ``models``: the privacy models as command-line options ``(option,
    value)`` (:func:`gpuppdp.models.from_spec`); ``orders``: per sensitive attribute of
    ordered t-closeness, ``"numeric"`` or ``"lexical"`` (its ARX data type);
    ``suppression_limit``, ``metric``, ``gs_factor``, ``attribute_weights``: as
    :class:`~gpuppdp.anonymizer.Anonymizer` takes them; ``unsupported``: the settings of the
    project that gpuppdp does not honour, in words."""

    data: pd.DataFrame
    hierarchies: dict
    roles: dict
    models: list
    orders: dict
    suppression_limit: float
    metric: str
    gs_factor: float | None
    attribute_weights: dict | None
    unsupported: list = field(default_factory=list)

    def columns(self, role: str) -> list[str]:
        """The columns of ``role``, in the table's order."""
        return [c for c, r in self.roles.items() if r == role]

    def anonymizer(self, **kwargs):
        """The :class:`~gpuppdp.anonymizer.Anonymizer` of the project (``kwargs``: further
        options such as ``backend``, ``search`` or ``seed``)."""
        # deferred: the CLI reads a project without loading the engine until it runs it
        from .analysis.checker import value_order
        from .anonymizer import Anonymizer
        from .models import from_spec

        sensitive = self.columns("sensitive")
        k = None
        models = []
        for option, value in self.models:
            if option == "--k":
                k = int(value)
                continue
            models.append(from_spec(
                option, value, sensitive=sensitive, hierarchy=self.hierarchies.get,
                order=lambda name: value_order(self.data[name], self.orders.get(name, "auto"),
                                               attribute=name)))
        return Anonymizer(quasi_identifiers={c: self.hierarchies[c] for c in self.columns("qi")},
                          sensitive=sensitive, insensitive=self.columns("insensitive"),
                          identifying=self.columns("identifying"), k=k, models=models,
                          suppression_limit=self.suppression_limit, metric=self.metric,
                          gs_factor=self.gs_factor, attribute_weights=self.attribute_weights,
                          **kwargs)


def _xml(zf: zipfile.ZipFile, name: str, path: str) -> ET.Element:
    try:
        return ET.fromstring(zf.read(name).decode("utf-8"))
    except KeyError:
        raise InputError(f"{path}: not an ARX project (no {name} in it)") from None
    except ET.ParseError as exc:
        raise InputError(f"{path}: {name} is not well-formed XML ({exc})") from None


def _text(node: ET.Element, tag: str, default: str | None = None) -> str | None:
    child = node.find(tag)
    return default if child is None or child.text is None else child.text


def read_arx_project(path: str | os.PathLike) -> ArxProject:
    """Read an ARX project file (``.deid``, see the module's description): its table,
    attribute roles and hierarchies, privacy models, suppression limit and quality model,
    with the settings gpuppdp cannot honour in ``unsupported``."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"ARX project not found: {path}")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise InputError(f"{path}: not an ARX project (.deid files are zip archives)") from None
    with zf:
        project = _xml(zf, "project.xml", path)
        sep = _text(project, "separator") or ";"
        try:
            text = zf.read("data/input.csv").decode("utf-8")
        except KeyError:
            raise InputError(f"{path}: the project holds no data (data/input.csv)") from None
        data = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False,
                           na_filter=False)
        definition = _xml(zf, "input/definition.xml", path)
        config = _xml(zf, "input/config.xml", path)
        unsupported: list[str] = []
        roles, hierarchies, kinds = {}, {}, {}
        for node in definition.iter("assigment"):
            name = _text(node, "name")
            kind = _text(node, "type", "IDENTIFYING_ATTRIBUTE")
            if name not in data.columns:
                raise InputError(f"{path}: definition.xml names {name!r}, which is not a "
                                 "column of data/input.csv")
            if kind not in _ROLES:
                raise InputError(f"{path}: attribute {name!r} has an unknown type {kind!r}")
            roles[name] = _ROLES[kind]
            kinds[name] = _text(node, "datatype", "String")
            ref = _text(node, "ref")
            if ref is not None:
                try:
                    raw = zf.read("input/" + ref).decode("utf-8")
                except KeyError:
                    raise InputError(f"{path}: the hierarchy of {name!r} (input/{ref}) is "
                                     "missing") from None
                rows = [r for r in csv.reader(io.StringIO(raw), delimiter=sep) if r]
                hierarchies[name] = Hierarchy.from_rows(rows, name=name)
                for bound in ("min", "max"):
                    if _text(node, bound, "All") != "All":
                        unsupported.append(f"{name}: {bound}imum generalization level "
                                           f"{_text(node, bound)} (all levels are searched)")
            if _text(node, "microaggregationFunction") is not None:
                unsupported.append(f"{name}: microaggregation "
                                   f"({_text(node, 'microaggregationFunction')}); the "
                                   "attribute is generalized with its hierarchy instead")
            if _text(node, "response") == "true":
                unsupported.append(f"{name}: response variable (classification utility)")
        for name in data.columns:
            roles.setdefault(name, "identifying")   # ARX: no type given is identifying
        for name in [c for c, r in roles.items() if r == "qi" and c not in hierarchies]:
            hierarchies[name] = Hierarchy.flat(data[name], name=name)
            unsupported.append(f"{name}: quasi-identifier without a hierarchy in the project; "
                               "a two-level one (value, *) is used")
        models, orders = [], {}
        for node in config.iter("criterion"):
            text = (node.text or "").strip()
            for pattern, option, value in _CRITERIA:
                m = pattern.match(text)
                if m:
                    models.append((option, value(m)))
                    if value(m).startswith("ordered:"):
                        column = m.groups()[-1]
                        orders[column] = "numeric" if kinds.get(column) in ("Integer",
                                                                              "Decimal") \
                            else "lexical"
                    break
            else:
                unsupported.append(f"privacy model {text!r} (not available in gpuppdp)")
        metric_text = (_text(config, "metric", "") or "").strip()
        metric, gs_factor = _metric(metric_text, unsupported)
        weights = {}
        for node in config.iter("attributeWeight"):
            weights[_text(node, "attribute")] = float(_text(node, "weight") or 0.5)
        weights = {k: v for k, v in weights.items() if roles.get(k) == "qi"}
        limit = float(_text(config, "relativeMaxOutliers", "0") or 0.0)
        if _text(config, "suppressionAlwaysEnabled", "true") == "false":
            unsupported.append("suppressionAlwaysEnabled false (gpuppdp always suppresses up "
                               "to the limit)")
        types = [t.text for t in config.iter("type")]
        if types and types != ["QUASI_IDENTIFYING_ATTRIBUTE"]:
            unsupported.append(f"suppressed attribute types {', '.join(map(str, types))} "
                               "(gpuppdp suppresses the quasi-identifiers)")
        if _text(config, "practicalMonotonicity", "false") == "true":
            unsupported.append("practical monotonicity (assumed by ARX, not by gpuppdp)")
    if not any(r == "qi" for r in roles.values()):
        raise InputError(f"{path}: the project defines no quasi-identifier")
    return ArxProject(data, hierarchies, roles, models, orders, limit, metric, gs_factor,
                      weights or None, unsupported)


def _metric(text: str, unsupported: list) -> tuple[str, float | None]:
    """gpuppdp's metric and gs-factor of ARX's quality model text (``Loss (0.5/...)``)."""
    name, _, params = text.partition(" (")
    if text in ARX_METRICS:
        return ARX_METRICS[text], None
    if name == "Loss":
        try:
            return "loss", float(params.split("/")[0])
        except ValueError:
            return "loss", None
    unsupported.append(f"quality model {text!r} (not available in gpuppdp); the loss metric "
                       "is used")
    return "loss", None
