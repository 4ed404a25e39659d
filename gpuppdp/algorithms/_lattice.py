"""The engine set up for a whole-lattice evaluation (Samarati's k-minimal generalizations,
the negotiation's policies): encode the table under the roles and bind the models and the
metric to it, as :class:`gpuppdp.Anonymizer` does before its search."""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import pandas as pd

from ..backend import Backend
from ..engine.encoding import Schema, SchemaError, encode
from ..engine.evaluate import Evaluator
from ..engine.metrics import Metric
from ..errors import InputError, InputTypeError
from ..hierarchy import Hierarchy
from ..models import PrivacyModel, Requirement
from ..validation import format_values

__all__ = ["lattice_hierarchies", "lattice_evaluator"]


def lattice_hierarchies(quasi_identifiers: Mapping) -> dict[str, Hierarchy]:
    """``{QID: Hierarchy}`` from a mapping of QIDs to Hierarchy objects or ARX CSV paths."""
    if not isinstance(quasi_identifiers, Mapping) or not quasi_identifiers:
        raise SchemaError("quasi_identifiers must be a non-empty mapping column -> hierarchy")
    out = {}
    for name, value in quasi_identifiers.items():
        if isinstance(value, Hierarchy):
            out[name] = value
        elif isinstance(value, (str, os.PathLike)):
            out[name] = Hierarchy.from_csv(value, name=name)
        else:
            raise SchemaError(f"quasi-identifier {name!r}: expected a Hierarchy or a CSV path, "
                              f"got {type(value).__name__}")
    return out


def check_models(models: Sequence, sensitive: Sequence[str]) -> list:
    """``models`` checked: PrivacyModel instances whose sensitive attributes are declared."""
    models = list(models)
    if not models:
        raise InputError("no privacy model given: pass k=... and/or models=[...]")
    for m in models:
        if not isinstance(m, PrivacyModel):
            raise InputTypeError(f"models must be PrivacyModel instances, got {m!r}")
    referred = {m.sensitive_attribute for m in models
                if Requirement.SENSITIVE_HISTOGRAM in m.requires}
    undeclared = sorted(referred - set(sensitive))
    if undeclared:
        raise SchemaError(f"models refer to {format_values(undeclared)}: declare them "
                          "sensitive (sensitive=[...])")
    return models


def lattice_evaluator(data: pd.DataFrame, hierarchies: Mapping[str, Hierarchy], *,
                      sensitive: Sequence[str], models: Sequence[PrivacyModel],
                      suppression_limit: float, metric: Metric, backend: Backend
                      ) -> Evaluator:
    """The :class:`~gpuppdp.engine.evaluate.Evaluator` of ``data`` (columns other than the
    QIDs and ``sensitive`` dropped) for ``models`` within ``suppression_limit``."""
    schema = Schema(dict(hierarchies), list(sensitive), others="drop")
    referred = {m.sensitive_attribute for m in models
                if Requirement.SENSITIVE_HISTOGRAM in m.requires}
    encoded = encode(data, schema, backend, [c for c in schema.sensitive if c in referred])
    for m in models:
        if m.min_class_size is not None and m.min_class_size > encoded.n_rows:
            raise InputError(f"{m!r} needs classes of {m.min_class_size} records but the "
                             f"table has only {encoded.n_rows} rows")
    return Evaluator(encoded, list(models), metric, suppression_limit)
