"""Samarati's k-minimal generalizations of a table (Samarati, TKDE 2001): the generalization
lattice, for people (see :mod:`gpuppdp.engine.search.samarati`; the search itself is
``Anonymizer(search="samarati")``).

>>> from gpuppdp import datasets                                            # doctest: +SKIP
>>> data, h = datasets.adult()                                              # doctest: +SKIP
>>> KMinimalGeneralizations({"age": h["age"], "sex": h["sex"]}, k=5,
...                         suppression_limit=0.01).fit(data)               # doctest: +SKIP
[{'age': 1, 'sex': 0}, ...]
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..backend import get_backend
from ..engine.evaluate import LatticeOracle, check_models
from ..engine.lattice import Lattice
from ..engine.metrics import make_metric
from ..engine.search.samarati import minimal_nodes
from ..models import KAnonymity
from ..validation import check_number
from ._lattice import lattice_evaluator, lattice_hierarchies

__all__ = ["KMinimalGeneralizations"]


class KMinimalGeneralizations:
    """Every k-minimal generalization (Samarati 2001): the lattice nodes that satisfy
    k-anonymity (and ``models``) with at most ``suppression_limit`` of the records
    suppressed, none of whose immediate predecessors does.

    ``quasi_identifiers`` maps each QID to its Hierarchy (or ARX CSV path); ``sensitive``
    names the columns the models refer to; other columns are ignored.  :meth:`fit`
    evaluates the whole lattice, in batches."""

    def __init__(self, quasi_identifiers: Mapping, *, k: int | None = None,
                 suppression_limit: float = 0.0, models: Sequence = (),
                 sensitive: Sequence[str] = (), backend="auto"):
        self.hierarchies = lattice_hierarchies(quasi_identifiers)
        self.k = k
        self.sensitive = list(sensitive)
        self.models = check_models(([KAnonymity(k)] if k is not None else []) + list(models),
                                   self.sensitive)
        self.suppression_limit = check_number("suppression_limit", suppression_limit,
                                              0.0, 1.0)
        self.backend = get_backend(backend)

    def __repr__(self) -> str:
        return (f"KMinimalGeneralizations(quasi_identifiers={list(self.hierarchies)!r}, "
                f"k={self.k!r}, suppression_limit={self.suppression_limit!r}, "
                f"models={self.models!r}, sensitive={self.sensitive!r}, "
                f"backend={self.backend.name!r})")

    def fit(self, data: pd.DataFrame) -> list[dict]:
        """The k-minimal generalizations of ``data``, as ``{QID: level}`` dicts (QIDs in the
        table's order), lowest height first, then by node id."""
        evaluator = lattice_evaluator(data, self.hierarchies, sensitive=self.sensitive,
                                      models=self.models,
                                      suppression_limit=self.suppression_limit,
                                      metric=make_metric("loss"), backend=self.backend)
        lattice = Lattice(evaluator.encoded.heights)
        stats = LatticeOracle(evaluator, lattice).evaluate_all()
        ids = minimal_nodes(lattice, stats.anonymous.astype(bool))
        ids = ids[np.lexsort((ids, stats.height[ids]))]
        names = evaluator.encoded.qi_names
        return [{n: int(v) for n, v in zip(names, row)} for row in lattice.levels_of(ids)]
