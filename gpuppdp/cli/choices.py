"""The fixed choices of the command line's options, as plain tuples, so that building the
parser (``gpuppdp --help``) imports only the standard library: no NumPy, pandas or Numba.

Each constant is a copy of the library's own (named beside it); ``tests/test_cli_startup.py``
checks that they are equal, so they cannot drift apart.
"""

from __future__ import annotations

__all__ = ["BACKENDS", "METRICS", "SEARCHES", "PREFERENCES", "SUPPRESSION_MODES",
           "TCLOSENESS_DISTANCES", "MECHANISMS", "OTHERS", "CENSUS_ROW_GROUP_ROWS",
           "TDS_GENERALIZATIONS", "QUERY_MECHANISMS", "UNKNOWN"]

BACKENDS = ("auto", "cpu", "gpu")  # gpuppdp.backend.BACKEND_CHOICES
METRICS = ("aecs", "ambiguity", "discernibility", "discernibility-monotonic", "entropy",
           "entropy-monotonic", "height", "kl", "loss", "normalized-entropy",
           "precision")  # sorted(gpuppdp.engine.metrics.METRICS)
SEARCHES = ("auto", "flash", "exhaustive", "levels", "lightning", "beam",
            "samarati")  # gpuppdp.engine.search.SEARCHES
PREFERENCES = ("height", "precision", "classes",
               "suppression")  # gpuppdp.engine.search.samarati.PREFERENCES
SUPPRESSION_MODES = ("mark", "drop")  # gpuppdp.engine.transform.SUPPRESSION_MODES
TCLOSENESS_DISTANCES = ("equal", "ordered", "hierarchical")  # gpuppdp.models.TCLOSENESS_DISTANCES
MECHANISMS = ("geometric", "laplace", "gaussian",
              "discrete-gaussian")  # gpuppdp.dp.releases.MECHANISMS
QUERY_MECHANISMS = ("laplace", "gaussian")  # gpuppdp.dp.queries.QUERY_MECHANISMS
UNKNOWN = ("error", "other", "drop")  # gpuppdp.dp.cells.UNKNOWN_CHOICES
OTHERS = ("error", "insensitive", "drop")  # the roles of gpuppdp.engine.encoding.Schema's others
CENSUS_ROW_GROUP_ROWS = 1 << 20  # gpuppdp.census.ROW_GROUP_ROWS
TDS_GENERALIZATIONS = ("subtree", "sibling")  # gpuppdp.algorithms.tds.GENERALIZATIONS
