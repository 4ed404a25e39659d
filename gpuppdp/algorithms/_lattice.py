"""The engine set up for a whole-lattice evaluation (Samarati's k-minimal generalizations,
the negotiation's policies): encode the table under the roles and bind the models and the
metric to it, as :class:`gpuppdp.Anonymizer` does before its search."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ..backend import Backend
from ..engine.encoding import Schema, SchemaError, encode, hierarchy_of
from ..engine.evaluate import Evaluator, checked_evaluator, referred_sensitive
from ..engine.metrics import Metric
from ..hierarchy import Hierarchy
from ..models import PrivacyModel

__all__ = ["lattice_hierarchies", "lattice_evaluator"]


def lattice_hierarchies(quasi_identifiers: Mapping) -> dict[str, Hierarchy]:
    """``{QID: Hierarchy}`` from a mapping of QIDs to Hierarchy objects or ARX CSV paths."""
    if not isinstance(quasi_identifiers, Mapping) or not quasi_identifiers:
        raise SchemaError("quasi_identifiers must be a non-empty mapping column -> hierarchy")
    return {name: hierarchy_of(name, value) for name, value in quasi_identifiers.items()}


def lattice_evaluator(data: pd.DataFrame, hierarchies: Mapping[str, Hierarchy], *,
                      sensitive: Sequence[str], models: Sequence[PrivacyModel],
                      suppression_limit: float, metric: Metric, backend: Backend
                      ) -> Evaluator:
    """The :class:`~gpuppdp.engine.evaluate.Evaluator` of ``data`` (columns other than the
    QIDs and ``sensitive`` dropped) for ``models`` within ``suppression_limit``."""
    schema = Schema(dict(hierarchies), list(sensitive), others="drop")
    referred = referred_sensitive(models)
    encoded = encode(data, schema, backend, [c for c in schema.sensitive if c in referred])
    return checked_evaluator(encoded, models, metric, suppression_limit)
