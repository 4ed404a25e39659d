"""A synthetic, US-census-like person table at any scale, and its hierarchies.

One row per person: ``person_id`` (identifying), the quasi-identifiers ``zip``, ``age``,
``sex``, ``race``, ``hispanic``, ``marital``, ``education``, ``citizenship``, ``occupation``,
and ``income`` (integer dollars).  The values follow rough US marginals (2020 census and ACS
shares) with the usual dependencies: ZIP populations are heavy-tailed (about 30,000 ZIP codes
in about 900 three-digit areas, lognormal sizes: the top 1 % of ZIPs hold 15-18 % of the
people) and each area has its own mix of race and Hispanic origin and its own income level;
age follows the US pyramid (mean about 39); sex depends on age; marital status and education
depend on age (no one under 15 is married); citizenship depends on age, race and Hispanic
origin; occupation (including unemployed, not in the labor force, under 16) on age and
education; income on education, age, occupation and area.

**Determinism.**  Rows are generated in blocks of :data:`BLOCK_ROWS` (65,536) rows: block
``b`` is drawn from ``numpy.random.Generator(PCG64(SeedSequence(seed, spawn_key=(b,))))``,
i.e. the ``b``-th child of ``SeedSequence(seed).spawn``, and a table of ``rows`` rows is the
first ``rows`` rows of the blocks.  So row ``i`` depends only on ``(seed, i)``: not on the
number of rows (the first million rows of a 10-million-row table are the 1-million-row table),
nor on the Parquet row-group size.  Categories are drawn through integer lookup tables
(probabilities rounded to multiples of 2**-16, 2**-22 for ZIPs), so they are the same on every
platform; only ``income`` goes through floating-point ``exp``.  The ZIP universe, its
populations and the hierarchies are fixed: they do not depend on the seed.

**Scale.**  :func:`write_census` streams: it generates Parquet row groups (default
:data:`ROW_GROUP_ROWS`, 2**20 rows) on the host threads, a few ahead of the one it writes, so
its memory does not grow with ``rows``; :func:`census_table` builds the whole table in memory
(for small tables).  The file is the same whatever the number of threads.

The Parquet columns are Arrow dictionary columns (pandas reads them as categoricals) whose
dictionaries are the leaves of the hierarchies, in the hierarchy files' order; ``age`` is
``int16``, ``income`` ``int32``, ``person_id`` (``1..rows``, the row number) ``int64``.
"""

from __future__ import annotations

import csv
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .builders import interval_hierarchy, levels_hierarchy, masking_hierarchy
from .core.pipeline import ordered_map
from .hierarchy import Hierarchy
from .io import OutputError, OutputPlan
from .validation import check_int

__all__ = ["census_table", "census_hierarchies", "write_census", "census_plan", "iter_tables",
           "arrow_schema", "CensusFiles", "COLUMNS", "QUASI_IDENTIFIERS",
           "DEMO_QUASI_IDENTIFIERS", "BLOCK_ROWS", "ROW_GROUP_ROWS", "TABLE_FILE",
           "hierarchy_file", "GENERATOR_VERSION"]

GENERATOR_VERSION = 1
"""Changes whenever the same seed would give different rows."""

BLOCK_ROWS = 1 << 16
"""Rows per random stream (see the module docstring); fixed, part of the table's definition."""

ROW_GROUP_ROWS = 1 << 20
"""Default rows per Parquet row group (1,048,576)."""

TABLE_FILE = "census.parquet"

COLUMNS = ("person_id", "zip", "age", "sex", "race", "hispanic", "marital", "education",
           "citizenship", "occupation", "income")
QUASI_IDENTIFIERS = ("zip", "age", "sex", "race", "hispanic", "marital", "education",
                     "citizenship", "occupation")
DEMO_QUASI_IDENTIFIERS = ("zip", "age", "sex", "race", "marital", "education")
"""The quasi-identifiers of ``gpuppdp demo --census``."""


def hierarchy_file(column: str) -> str:
    """``census_hierarchy_<column>.csv``."""
    return f"census_hierarchy_{column}.csv"


# -- categories: ARX hierarchy rows without the top ("*", added) ---------------------------------
def _rows(text: str) -> list[list[str]]:
    return [line.split(";") for line in text.strip().splitlines()]


def _table(text: str) -> np.ndarray:
    """A table of numbers, one row a line, ``#`` starting a comment."""
    lines = (line.partition("#")[0].split() for line in text.strip().splitlines())
    return np.array([[float(x) for x in line] for line in lines if line])


_SEX = _rows("""
Male
Female
""")

_RACE = _rows("""
White;White
Black or African American;Black
American Indian and Alaska Native;Other or multiple races
Asian;Asian or Pacific Islander
Native Hawaiian and Other Pacific Islander;Asian or Pacific Islander
Some other race;Other or multiple races
Two or more races;Other or multiple races
""")
_ASIAN_PI = (3, 4)  # codes of Asian, Native Hawaiian and Other Pacific Islander

_HISPANIC = _rows("""
Hispanic or Latino
Not Hispanic or Latino
""")

_MARITAL = _rows("""
Never married;Never married;Never married
Married;Married;Ever married
Separated;Married;Ever married
Divorced;Formerly married;Ever married
Widowed;Formerly married;Ever married
""")

_EDUCATION = _rows("""
No schooling;No high school diploma
Nursery to 4th grade;No high school diploma
5th to 8th grade;No high school diploma
9th to 12th grade no diploma;No high school diploma
High school diploma;High school graduate
GED or alternative credential;High school graduate
Some college no degree;College
Associate degree;College
Bachelor degree;College
Master degree;Graduate degree
Professional degree;Graduate degree
Doctorate degree;Graduate degree
""")
# education -> its group: 0 no high school diploma, 1 high school, 2 college, 3 graduate
_EDUCATION_GROUPS = list(dict.fromkeys(row[1] for row in _EDUCATION))
_EDUCATION_GROUP = np.array([_EDUCATION_GROUPS.index(row[1]) for row in _EDUCATION], np.int32)

_CITIZENSHIP = _rows("""
Born in the United States;Native born;Citizen
Born in Puerto Rico or US Island Areas;Native born;Citizen
Born abroad to US citizen parents;Native born;Citizen
Naturalized citizen;Naturalized citizen;Citizen
Not a US citizen;Not a citizen;Not a citizen
""")

_MBSA, _SERVICE, _SALES, _NRCM, _PTM = (
    "Management business science and arts", "Service", "Sales and office",
    "Natural resources construction and maintenance", "Production transportation and moving")
_EMPLOYED, _NOT_EMPLOYED = "Employed", "Not employed"
# leaf: (major group, employment), occupation weight per education group (no HS, HS, college,
# graduate; % of the employed), income effect (log dollars)
_OCCUPATIONS = [
    ("Management", _MBSA, (3, 7, 13, 20), 0.35),
    ("Business and financial operations", _MBSA, (0.5, 2.5, 6, 8), 0.25),
    ("Computer and mathematical", _MBSA, (0.2, 0.8, 4, 6), 0.4),
    ("Architecture and engineering", _MBSA, (0.3, 1, 2.5, 3.5), 0.35),
    ("Life physical and social science", _MBSA, (0.1, 0.3, 1, 3), 0.2),
    ("Community and social service", _MBSA, (0.3, 1, 2, 4), -0.1),
    ("Legal", _MBSA, (0.05, 0.3, 1, 4), 0.45),
    ("Educational instruction and library", _MBSA, (1, 2, 6, 15), -0.1),
    ("Arts design entertainment sports and media", _MBSA, (0.7, 1.2, 2.5, 2.5), -0.05),
    ("Healthcare practitioners and technical", _MBSA, (0.4, 2, 7, 13), 0.3),
    ("Healthcare support", _SERVICE, (3, 4.5, 3, 0.5), -0.35),
    ("Protective service", _SERVICE, (1, 2.5, 2, 0.8), 0.1),
    ("Food preparation and serving", _SERVICE, (14, 7, 3.5, 0.5), -0.6),
    ("Building and grounds cleaning and maintenance", _SERVICE, (12, 5, 1.5, 0.3), -0.45),
    ("Personal care and service", _SERVICE, (4, 3, 2, 0.5), -0.5),
    ("Sales and related", _SALES, (8, 10, 9, 5), -0.05),
    ("Office and administrative support", _SALES, (5, 13, 11, 3), -0.15),
    ("Farming fishing and forestry", _NRCM, (3, 0.7, 0.3, 0.1), -0.4),
    ("Construction and extraction", _NRCM, (14, 8, 3, 0.4), 0.0),
    ("Installation maintenance and repair", _NRCM, (4, 5, 2.5, 0.3), 0.05),
    ("Production", _PTM, (11, 9, 3.5, 0.7), -0.1),
    ("Transportation", _PTM, (6, 6, 2.5, 0.5), -0.1),
    ("Material moving", _PTM, (9, 6, 2, 0.3), -0.3),
]
_MILITARY, _UNEMPLOYED, _NILF, _UNDER_16 = range(len(_OCCUPATIONS), len(_OCCUPATIONS) + 4)
_OCCUPATION = [[name, group, _EMPLOYED] for name, group, _, _ in _OCCUPATIONS] + [
    ["Military", "Military", _EMPLOYED],
    ["Unemployed", "Unemployed", _NOT_EMPLOYED],
    ["Not in labor force", "Not in labor force", _NOT_EMPLOYED],
    ["Not applicable (under 16)", "Not applicable (under 16)", _NOT_EMPLOYED],
]

_CATEGORIES = {"sex": _SEX, "race": _RACE, "hispanic": _HISPANIC, "marital": _MARITAL,
               "education": _EDUCATION, "citizenship": _CITIZENSHIP,
               "occupation": _OCCUPATION}

# -- distributions --------------------------------------------------------------------------
# US population by 5-year age band, 0-4 ... 95-99, then 100 (%, 2020 census, rounded)
_AGE_BAND_SHARE = (5.7, 6.0, 6.4, 6.6, 6.4, 6.8, 6.9, 6.6, 6.3, 6.1, 6.3, 6.5, 6.4, 5.5, 4.6,
                   3.1, 2.0, 1.2, 0.6, 0.17, 0.03)
_MAX_AGE = 100


def _age_groups(edges) -> np.ndarray:
    """Group index of every age 0..100 for the band lower bounds ``edges`` (from 0)."""
    return (np.searchsorted(np.asarray(edges), np.arange(_MAX_AGE + 1), side="right") - 1
            ).astype(np.int32)


# P(female) by age
_SEX_AGE = _age_groups((0, 20, 40, 60, 70, 80, 90))
_FEMALE = (0.488, 0.495, 0.505, 0.525, 0.545, 0.60, 0.70)

# race mix of an area (White, Black, AIAN, Asian, NHPI, other, two or more; %), the share of
# areas of each mix, and P(Hispanic | mix, race)
_RACE_MIX = _table("""
80   5   0.8   2.5  0.1   3    8.6   # mostly White
43  17   0.8  13    0.3  12   13.9   # diverse city
25  60   0.5   2    0.1   5    7.4   # mostly Black
35   5   1.5   3    0.2  30   25.3   # mostly Hispanic
45   2  15     8    5     5   20     # Native American / Pacific
""")
_MIX_SHARE = np.array([0.50, 0.25, 0.09, 0.12, 0.04])
_HISPANIC_BY_RACE = np.array([0.06, 0.025, 0.30, 0.015, 0.10, 0.93, 0.55])
_HISPANIC_BY_MIX = np.array([
    _HISPANIC_BY_RACE * 0.8,
    _HISPANIC_BY_RACE,
    _HISPANIC_BY_RACE * 0.6,
    np.minimum(_HISPANIC_BY_RACE * 2.5, 0.97),
    _HISPANIC_BY_RACE,
])

# marital status by age (never married, married, separated, divorced, widowed; %)
_MARITAL_AGE = _age_groups((0, 15, 20, 25, 30, 35, 45, 55, 65, 75, 85))
_MARITAL_P = _table("""
100   0   0    0    0     # 0-14
 97   2   0.5  0.5  0     # 15-19
 85  13   1    1    0     # 20-24
 58  36   2    4    0     # 25-29
 38  52   2.5  7    0.5   # 30-34
 25  58   3   13    1     # 35-44
 16  60   3   18    3     # 45-54
 11  60   2   19    8     # 55-64
  7  58   1.5 16   17.5   # 65-74
  5  45   1   11   38     # 75-84
  5  25   0.5  7   62.5   # 85+
""")

# education by age (the 12 leaves of _EDUCATION; %)
_EDUCATION_AGE = _age_groups((0, 3, 5, 10, 14, 18, 20, 25, 35, 45, 65, 75))
_EDUCATION_P = _table("""
100    0     0     0    0   0    0   0     0     0    0    0     # 0-2
 55   45     0     0    0   0    0   0     0     0    0    0     # 3-4
  2   98     0     0    0   0    0   0     0     0    0    0     # 5-9
  0.5 12    87.5   0    0   0    0   0     0     0    0    0     # 10-13
  0.5  0.5  18    81    0   0    0   0     0     0    0    0     # 14-17
  0.5  0.5   2    27   34   2   34   0     0     0    0    0     # 18-19
  0.3  0.3   1.2   7   25   3   42   7    13.2   1    0    0     # 20-24
  0.3  0.3   1.2   5   22   3   18   9    27    10.5  1.7  2     # 25-34
  0.5  0.5   2     5   21   3   16   9.5  25    13    2.2  2.3   # 35-44
  0.6  0.6   2.4   5.5 25   3.5 18  10    21    10    1.8  1.6   # 45-64
  0.7  0.8   3     6   27   2.5 19   8.5  18    10    2.2  2.3   # 65-74
  1.2  1.5   6.5   8.5 32   2   16   6    14     9    1.6  1.7   # 75+
""")

# citizenship (the 5 leaves of _CITIZENSHIP; %) by origin (Hispanic; Asian or Pacific
# Islander; other) and age (under 18, 18-64, 65+)
_CITIZENSHIP_AGE = _age_groups((0, 18, 65))
_CITIZENSHIP_P = _table("""
91    2    0.5  2    4.5    # Hispanic, under 18
50    4    1   17   28      # 18-64
45    6    1   30   18      # 65+
83    0.2  1    6    9.8    # Asian or Pacific Islander
30    0.5  1   38   30.5
15    0.5  1   62   21.5
97.5  0.2  0.8  0.7  0.8    # other
89    0.4  1.2  5    4.4
90    0.3  1    6    2.7
""")

# occupation by age (under 16, 16-19, 20-24, 25-54, 55-64, 65+) and education group:
# employed, unemployed and military shares, then the employed spread over _OCCUPATIONS
_OCCUPATION_AGE = _age_groups((0, 16, 20, 25, 55, 65))
_EMPLOYED_SHARE = [(0, 0, 0, 0), (0.30, 0.34, 0.36, 0.36), (0.55, 0.65, 0.70, 0.80),
                   (0.62, 0.74, 0.80, 0.87), (0.45, 0.58, 0.65, 0.72),
                   (0.08, 0.14, 0.20, 0.28)]
_UNEMPLOYED_SHARE = (0, 0.05, 0.06, 0.035, 0.025, 0.005)
_MILITARY_SHARE = (0, 0.005, 0.015, 0.008, 0.001, 0.0)
# under 25: food preparation x3, sales x1.5, personal care x1.3, management x0.3
_YOUNG_JOBS = {12: 3.0, 15: 1.5, 14: 1.3, 0: 0.3}

# income: log dollars = by education + by age + by occupation + by area + noise
_INCOME_EDUCATION = np.log([24e3, 27e3, 30e3, 34e3, 44e3, 41e3, 51e3, 56e3, 79e3, 98e3, 134e3,
                            128e3])
_INCOME_AGE = 0.0007  # log dollars lost per squared year away from 48
_INCOME_SIGMA = 0.65
_INCOME_CAP = 5_000_000
_INCOME_OCCUPATION_EXTRA = {_MILITARY: 0.0, _UNEMPLOYED: -0.7, _NILF: -0.6, _UNDER_16: -2.0}
_ZERO_INCOME = {_UNEMPLOYED: 0.15, _NILF: 0.30, _UNDER_16: 0.85}  # else 0.01

# ZIP universe (fixed): three-digit areas, ZIPs drawn among their 100 codes, lognormal sizes
_UNIVERSE_SEED = 1790  # the first US census
_N_AREAS = 900
_N_ZIPS = 30_000
_AREA_SIGMA, _ZIP_SIGMA, _AREA_INCOME_SIGMA = 0.9, 1.1, 0.25

_BITS = 16       # resolution of the categorical lookup tables
_ZIP_BITS = 22   # of the ZIP table
_U16 = 9         # 16-bit uniforms per row


# -- lookup tables ----------------------------------------------------------------------------
def _quantize(p: np.ndarray, total: int) -> np.ndarray:
    """Integer counts proportional to ``p`` summing to ``total``, >= 1 where ``p > 0``."""
    raw = p / p.sum() * total
    counts = np.floor(raw).astype(np.int64)
    counts[(p > 0) & (counts == 0)] = 1
    diff = int(total - counts.sum())
    if diff > 0:   # largest remainders first
        counts[np.argsort(-(raw - np.floor(raw)), kind="stable")[:diff]] += 1
    elif diff < 0:  # the largest counts give back
        counts[np.argsort(-counts, kind="stable")[:-diff]] -= 1
    return counts


def _lookup(probs, bits: int = _BITS, dtype=np.int8) -> np.ndarray:
    """Inverse-CDF tables, one per row of ``probs`` (groups x categories), flattened:
    ``table[(group << bits) | u]`` is the category of a ``bits``-bit uniform ``u``."""
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    values = np.arange(probs.shape[1], dtype=dtype)
    return np.concatenate([np.repeat(values, _quantize(p, 1 << bits)) for p in probs])


def _draw(table: np.ndarray, group, u: np.ndarray) -> np.ndarray:
    """Categories of uniforms ``u`` (uint16) in the tables of ``group`` (int32 array)."""
    return table[(group << _BITS) | u]


class _Universe(NamedTuple):
    zips: np.ndarray       # the ZIP codes (str), sorted
    table: np.ndarray      # ZIP lookup table (int16 codes, 2**_ZIP_BITS entries)
    mix: np.ndarray        # race mix of each ZIP's area (int32)
    income: np.ndarray     # log income factor of each ZIP's area


class _Tables(NamedTuple):
    age: np.ndarray
    sex: np.ndarray
    race: np.ndarray
    hispanic: np.ndarray
    marital: np.ndarray
    education: np.ndarray
    origin: np.ndarray     # (hispanic * 7 + race) -> 0 Hispanic, 1 Asian/PI, 2 other
    citizenship: np.ndarray
    occupation: np.ndarray
    income_age: np.ndarray
    income_occupation: np.ndarray
    zero_income: np.ndarray  # per occupation: uint16 threshold (u < it: no income)


@functools.lru_cache(maxsize=1)
def _universe() -> _Universe:
    rng = np.random.default_rng(np.random.SeedSequence(_UNIVERSE_SEED))
    areas = np.sort(rng.choice(np.arange(5, 1000), _N_AREAS, replace=False))
    area_size = rng.lognormal(0.0, _AREA_SIGMA, _N_AREAS)
    area_mix = rng.choice(len(_MIX_SHARE), _N_AREAS, p=_MIX_SHARE).astype(np.int32)
    area_income = rng.normal(0.0, _AREA_INCOME_SIGMA, _N_AREAS)
    density = np.repeat(rng.lognormal(0.0, 0.5, _N_AREAS), 100)
    slots = np.sort(rng.choice(_N_AREAS * 100, _N_ZIPS, replace=False,
                               p=density / density.sum()))
    area, suffix = slots // 100, slots % 100
    codes = areas[area] * 100 + suffix
    zips = np.array([f"{c:05d}" for c in codes.tolist()], dtype=object)
    size = area_size[area] * rng.lognormal(0.0, _ZIP_SIGMA, _N_ZIPS)
    table = _lookup(size, _ZIP_BITS, np.int16)
    return _Universe(zips, table, area_mix[area], area_income[area])


@functools.lru_cache(maxsize=1)
def _tables() -> _Tables:
    ages = np.arange(_MAX_AGE + 1)
    age_p = np.asarray(_AGE_BAND_SHARE)[np.minimum(ages // 5, len(_AGE_BAND_SHARE) - 1)]
    age_p = age_p / np.where(ages < _MAX_AGE, 5.0, 1.0)
    female = np.asarray(_FEMALE)
    hispanic = np.stack([_HISPANIC_BY_MIX.ravel(), 1.0 - _HISPANIC_BY_MIX.ravel()], axis=1)
    origin = np.full((2, len(_RACE)), 2, dtype=np.int32)
    origin[:, list(_ASIAN_PI)] = 1
    origin[0, :] = 0
    n_occ = len(_OCCUPATION)
    occupation = np.zeros((len(_EMPLOYED_SHARE), 4, n_occ))
    weights = np.array([w for _, _, w, _ in _OCCUPATIONS], dtype=np.float64)  # jobs x edu
    for a, employed in enumerate(_EMPLOYED_SHARE):
        if a == 0:
            occupation[a, :, _UNDER_16] = 1.0
            continue
        for e in range(4):
            jobs = weights[:, e].copy()
            if a <= 2:  # teenagers and young adults: more food service and sales
                for j, factor in _YOUNG_JOBS.items():
                    jobs[j] *= factor
            military = _MILITARY_SHARE[a]
            work = employed[e] - military
            occupation[a, e, :len(jobs)] = work * jobs / jobs.sum()
            occupation[a, e, _MILITARY] = military
            occupation[a, e, _UNEMPLOYED] = _UNEMPLOYED_SHARE[a]
            occupation[a, e, _NILF] = 1.0 - employed[e] - _UNEMPLOYED_SHARE[a]
    income_age = np.where(ages >= 15, -_INCOME_AGE * (ages - 48.0) ** 2, 0.0)
    income_occupation = np.array([x for _, _, _, x in _OCCUPATIONS]
                                 + [_INCOME_OCCUPATION_EXTRA[o]
                                    for o in (_MILITARY, _UNEMPLOYED, _NILF, _UNDER_16)])
    zero = np.full(n_occ, 0.01)
    for o, p in _ZERO_INCOME.items():
        zero[o] = p
    return _Tables(
        age=_lookup(age_p),
        sex=_lookup(np.stack([1.0 - female, female], axis=1)),
        race=_lookup(_RACE_MIX),
        hispanic=_lookup(hispanic),
        marital=_lookup(_MARITAL_P),
        education=_lookup(_EDUCATION_P),
        origin=origin.ravel(),
        citizenship=_lookup(_CITIZENSHIP_P),
        occupation=_lookup(occupation.reshape(-1, n_occ)),
        income_age=income_age,
        income_occupation=income_occupation,
        zero_income=np.rint(zero * (1 << _BITS)).astype(np.int32),
    )


# -- hierarchies ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _hierarchies() -> dict[str, Hierarchy]:
    zips = _universe().zips
    masked = masking_hierarchy(zips, name="zip")
    # ZIP: 47677 -> 4767* -> 476** -> 47*** -> 4**** -> * (a top "*" as in the other files)
    zip_levels = [masked.labels(L)[masked.codes(L)] for L in range(masked.height)]
    out = {"zip": Hierarchy(zip_levels + [["*"] * len(zips)], name="zip"),
           "age": interval_hierarchy(range(_MAX_AGE + 1), (5, 10, 20, 40), name="age")}
    for column, rows in _CATEGORIES.items():
        out[column] = levels_hierarchy(rows, name=column)
    return {c: out[c] for c in QUASI_IDENTIFIERS}


def census_hierarchies() -> dict[str, Hierarchy]:
    """The hierarchy of every quasi-identifier (the same for every seed and size)."""
    return dict(_hierarchies())


def _write_hierarchy(path: str, hierarchy: Hierarchy) -> None:
    """ARX format: ``leaf;level1;...;*`` per leaf, no header (what Hierarchy.from_csv reads)."""
    levels = [hierarchy.labels(L)[hierarchy.codes(L)] for L in range(hierarchy.height + 1)]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, delimiter=";", lineterminator="\n").writerows(zip(*levels))


# -- rows -------------------------------------------------------------------------------------
def _block(seed: int, index: int) -> dict[str, np.ndarray]:
    """The codes of block ``index`` (:data:`BLOCK_ROWS` rows) of the table of ``seed``."""
    n = BLOCK_ROWS
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(index,))))
    u = rng.integers(0, 1 << _BITS, size=(_U16, n), dtype=np.uint16)
    r = rng.integers(0, 1 << 32, size=n, dtype=np.uint32)
    noise = rng.standard_normal(n)
    U, T = _universe(), _tables()
    zip_ = U.table[r >> (32 - _ZIP_BITS)]
    age = T.age[u[0]].astype(np.int16)
    sex = _draw(T.sex, _SEX_AGE[age], u[1])
    mix = U.mix[zip_]
    race = _draw(T.race, mix, u[2])
    hispanic = _draw(T.hispanic, mix * len(_RACE) + race, u[3])
    marital = _draw(T.marital, _MARITAL_AGE[age], u[4])
    education = _draw(T.education, _EDUCATION_AGE[age], u[5])
    origin = T.origin[hispanic * len(_RACE) + race]
    citizenship = _draw(T.citizenship, origin * 3 + _CITIZENSHIP_AGE[age], u[6])
    occupation = _draw(T.occupation, _OCCUPATION_AGE[age] * 4 + _EDUCATION_GROUP[education],
                       u[7])
    log_income = (_INCOME_EDUCATION[education] + T.income_age[age]
                  + T.income_occupation[occupation] + U.income[zip_])
    log_income += _INCOME_SIGMA * noise
    income = np.minimum(np.rint(np.exp(log_income)), _INCOME_CAP).astype(np.int32)
    income[(u[8] < T.zero_income[occupation]) | (age < 15)] = 0
    return {"zip": zip_, "age": age, "sex": sex, "race": race, "hispanic": hispanic,
            "marital": marital, "education": education, "citizenship": citizenship,
            "occupation": occupation, "income": income}


def _codes(seed: int, start: int, stop: int) -> dict[str, np.ndarray]:
    """The codes of rows ``start..stop-1`` (from the blocks holding them)."""
    parts = []
    for b in range(start // BLOCK_ROWS, (stop - 1) // BLOCK_ROWS + 1):
        block = _block(seed, b)
        lo, hi = max(start - b * BLOCK_ROWS, 0), min(stop - b * BLOCK_ROWS, BLOCK_ROWS)
        parts.append({c: v[lo:hi] for c, v in block.items()})
    return parts[0] if len(parts) == 1 else {c: np.concatenate([p[c] for p in parts])
                                             for c in parts[0]}


def arrow_schema(rows: int | None = None, seed: int | None = None):
    """The ``pyarrow`` schema of the table (with the generator's version, ``rows`` and
    ``seed`` in its metadata when given)."""

    hierarchies = _hierarchies()

    def dictionary(column):
        index = pa.int16() if len(hierarchies[column].leaves) > 127 else pa.int8()
        return pa.field(column, pa.dictionary(index, pa.string()), nullable=False)

    fields = [pa.field("person_id", pa.int64(), nullable=False)]
    for c in COLUMNS[1:-1]:
        fields.append(pa.field(c, pa.int16(), nullable=False) if c == "age" else dictionary(c))
    fields.append(pa.field("income", pa.int32(), nullable=False))
    metadata = {"gpuppdp.generator": f"census {GENERATOR_VERSION}"}
    if rows is not None:
        metadata["gpuppdp.rows"] = str(rows)
    if seed is not None:
        metadata["gpuppdp.seed"] = str(seed)
    return pa.schema(fields, metadata=metadata)


def _check(rows, seed, row_group_rows=ROW_GROUP_ROWS) -> tuple[int, int, int]:
    return (check_int("rows", rows, 1), check_int("seed", seed, 0),
            check_int("row_group_rows", row_group_rows, 1))


def iter_tables(rows: int, seed: int = 0, *, row_group_rows: int = ROW_GROUP_ROWS,
                threads: int | None = None):
    """The table of ``rows`` rows for ``seed`` as ``pyarrow.Table`` s of ``row_group_rows``
    rows (the last may be shorter), in order, built on ``threads`` host threads (default
    :func:`~gpuppdp.core.pipeline.host_threads`; NumPy's generators and gathers release the
    GIL) a few row groups ahead of the one yielded.  A block that straddles two row groups is
    drawn for each."""

    rows, seed, row_group_rows = _check(rows, seed, row_group_rows)
    schema = arrow_schema(rows, seed)
    hierarchies = _hierarchies()
    dictionaries = {c: pa.array(hierarchies[c].leaves.tolist(), pa.string())
                    for c in QUASI_IDENTIFIERS if c != "age"}
    _universe(), _tables()  # built once, before any thread needs them

    def table(start: int):
        stop = min(start + row_group_rows, rows)
        codes = _codes(seed, start, stop)
        arrays = [pa.array(np.arange(start + 1, stop + 1, dtype=np.int64))]
        for c in COLUMNS[1:]:
            if c in dictionaries:
                index = schema.field(c).type.index_type.to_pandas_dtype()
                arrays.append(pa.DictionaryArray.from_arrays(
                    pa.array(codes[c].astype(index, copy=False)), dictionaries[c]))
            else:
                arrays.append(pa.array(codes[c]))
        return pa.Table.from_arrays(arrays, schema=schema)

    yield from ordered_map(table, range(0, rows, row_group_rows), threads=threads)


def census_table(rows: int, seed: int = 0) -> pd.DataFrame:
    """The table of ``rows`` rows for ``seed``, in memory: what :func:`write_census` writes
    (``pandas.read_parquet`` of its file gives an equal frame).  The QID columns but age are
    categoricals whose categories are their hierarchy's leaves."""

    rows, seed, _ = _check(rows, seed)
    tables = list(iter_tables(rows, seed, row_group_rows=rows))
    return pa.concat_tables(tables).to_pandas()


# -- files ------------------------------------------------------------------------------------
class CensusFiles(NamedTuple):
    table: str                   # DIR/census.parquet
    hierarchies: dict[str, str]  # column -> DIR/census_hierarchy_<column>.csv
    rows: int
    row_groups: int


def _hierarchy_option(column: str) -> str:
    return f"--output ({column} hierarchy)"


def census_plan(folder: str | os.PathLike, *, create: bool = True) -> OutputPlan:
    """The checked outputs of :func:`write_census` in ``folder`` (created, with its parents,
    unless ``create`` is false): the table is option ``--output``, the hierarchy of column
    ``c`` ``--output (c hierarchy)``."""
    folder = os.fspath(folder)
    if create and not os.path.isdir(folder):
        try:
            os.makedirs(folder, exist_ok=True)
        except FileExistsError:
            pass  # a file: refused below
        except OSError as exc:
            raise OutputError(f"--output {folder}: cannot create the folder "
                              f"({exc.strerror or exc})") from None
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise OutputError(f"--output {folder} {what}")
    plan = OutputPlan().add("--output", os.path.join(folder, TABLE_FILE), (".parquet",))
    for c in QUASI_IDENTIFIERS:
        plan.add(_hierarchy_option(c), os.path.join(folder, hierarchy_file(c)), (".csv",))
    return plan


def write_census(folder: str | os.PathLike, rows: int, seed: int = 0, *,
                 row_group_rows: int = ROW_GROUP_ROWS, plan: OutputPlan | None = None
                 ) -> CensusFiles:
    """Write ``folder/census.parquet`` (``rows`` rows for ``seed``, row groups of
    ``row_group_rows`` rows, generated and written one at a time) and the hierarchies
    ``folder/census_hierarchy_<column>.csv``; all files are replaced together, atomically
    (see :class:`gpuppdp.io.AtomicOutputs`).  ``plan``: :func:`census_plan` of ``folder``,
    when already checked."""

    rows, seed, row_group_rows = _check(rows, seed, row_group_rows)
    plan = census_plan(folder) if plan is None else plan
    hierarchies = _hierarchies()
    groups = 0
    with plan.writing() as out:
        # column statistics for the numeric columns only (min/max of the dictionary columns'
        # labels are costly to write and serve no reader); the row numbers delta-encoded
        with pq.ParquetWriter(out.path("--output"), arrow_schema(rows, seed),
                              use_dictionary=[c for c in COLUMNS
                                              if c not in ("person_id", "income")],
                              write_statistics=["person_id", "age", "income"],
                              column_encoding={"person_id": "DELTA_BINARY_PACKED"}) as writer, \
                ThreadPoolExecutor(max_workers=1) as pool:
            pending = None  # the writer compresses one row group while the next is generated
            for table in iter_tables(rows, seed, row_group_rows=row_group_rows):
                if pending is not None:
                    pending.result()
                pending = pool.submit(writer.write_table, table, row_group_size=len(table))
                groups += 1
            if pending is not None:
                pending.result()
        for c in QUASI_IDENTIFIERS:
            _write_hierarchy(out.path(_hierarchy_option(c)), hierarchies[c])
    return CensusFiles(plan.path("--output"),
                       {c: plan.path(_hierarchy_option(c)) for c in QUASI_IDENTIFIERS},
                       rows, groups)
