"""Bundled data: the Adult census extract with ARX's hierarchies (CC BY 4.0, see NOTICE.md),
and the synthetic census of any size (:mod:`gpuppdp.census`)."""

from __future__ import annotations

from importlib import resources

import pandas as pd

from .census import census_hierarchies, census_table
from .hierarchy import Hierarchy

__all__ = ["adult", "adult_path", "census", "ADULT_QUASI_IDENTIFIERS"]

ADULT_QUASI_IDENTIFIERS = ("sex", "age", "race", "marital-status", "education", "native-country",
                           "workclass", "occupation", "salary-class")


def adult_path(name: str = "adult.csv") -> str:
    """Path of a bundled Adult file (``adult.csv`` or ``adult_hierarchy_<attr>.csv``)."""
    path = resources.files("gpuppdp.data").joinpath("adult", name)
    if not path.is_file():
        raise FileNotFoundError(f"no bundled file {name!r}")
    return str(path)


def adult() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """The Adult extract (30,162 rows, all columns as strings) and one hierarchy per column."""
    data = pd.read_csv(adult_path(), sep=";", dtype=str, keep_default_na=False)
    hierarchies = {c: Hierarchy.from_csv(adult_path(f"adult_hierarchy_{c}.csv"), name=c)
                   for c in data.columns}
    return data, hierarchies


def census(rows: int, seed: int = 0) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """A synthetic US-census-like table of ``rows`` rows for ``seed`` and the hierarchy of each
    quasi-identifier (:func:`gpuppdp.census.census_table` and
    :func:`~gpuppdp.census.census_hierarchies`): in memory, equal to what
    ``gpuppdp generate census --rows ROWS --seed SEED`` writes."""
    return census_table(rows, seed), census_hierarchies()
