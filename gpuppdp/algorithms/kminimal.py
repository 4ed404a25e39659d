"""The generalization lattice of a table, for people: Samarati's k-minimal generalizations
(see :mod:`gpuppdp.engine.search.samarati`; the search itself is ``Anonymizer(search="samarati")``).

>>> from gpuppdp import datasets                                            # doctest: +SKIP
>>> data, h = datasets.adult()                                              # doctest: +SKIP
>>> k_minimal_generalizations(data[["age", "sex"]], {"age": h["age"], "sex": h["sex"]},
...                           k=5, suppression_limit=0.01)                  # doctest: +SKIP
[{'age': 1, 'sex': 0}, ...]
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["k_minimal_generalizations"]


def k_minimal_generalizations(data: pd.DataFrame, hierarchies: Mapping, k: int | None,
                              suppression_limit: float = 0.0, *, models: Sequence = (),
                              sensitive: Sequence[str] = (), backend="auto") -> list[dict]:
    """Every k-minimal generalization of ``data`` (Samarati 2001): the lattice nodes that
    satisfy k-anonymity (and ``models``) with at most ``suppression_limit`` of the records
    suppressed, none of whose immediate predecessors does; as ``{QID: level}`` dicts (QIDs
    in the table's order), lowest height first, then by node id.  Columns that are neither
    a QID nor ``sensitive`` are ignored.  The whole lattice is evaluated, in batches."""
    from ..anonymizer import Anonymizer
    from ..engine.evaluate import LatticeOracle
    from ..engine.lattice import Lattice
    from ..engine.search.samarati import minimal_nodes

    anonymizer = Anonymizer(quasi_identifiers=hierarchies, sensitive=list(sensitive),
                            others="drop", k=k, models=models,
                            suppression_limit=suppression_limit, backend=backend)
    evaluator = anonymizer._evaluator_for(data)
    lattice = Lattice(evaluator.encoded.heights)
    stats = LatticeOracle(evaluator, lattice).evaluate_all()
    ids = minimal_nodes(lattice, stats.anonymous.astype(bool))
    ids = ids[np.lexsort((ids, stats.height[ids]))]
    names = evaluator.encoded.qi_names
    return [{n: int(v) for n, v in zip(names, row)} for row in lattice.levels_of(ids)]
