"""The compiled Flash's peeling of QID-subset groups (:func:`~gpuppdp.engine.search.
flash_classes.peel_groups`: k-anonymity on QID subsets, LKC-privacy with C = 1;
:func:`~gpuppdp.engine.search.flash_classes.peel_confident_groups`: LKC-privacy's confidence
bound) against a naive checker written from the models' definitions (Mohammed, Fung, Hung &
Lee 2009): groups formed with Python dicts over the classes left, every subset judged in every
round.  The kernels judge again only the groups a removal touched; the random cases are drawn
so that most take several rounds, and the test asserts that some take three or more."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from gpuppdp.engine.search.flash_classes import (
    DISTINCT,
    ENTRIES,
    LKC_C,
    SHARES,
    START,
    VALUE_BLOCKS,
    peel_confident_groups,
    peel_groups,
)


def _classes(rng, n: int, q: int, m: int):
    """``n`` random classes on ``q`` QIDs (radix 2-5 each) with 1-3 entries of ``m`` sensitive
    values: ``(size, codes, radix, entries)``, ``entries[e]`` the class's (value, records)."""
    radix = rng.integers(2, 6, size=q)
    codes = np.stack([rng.integers(0, r, size=n) for r in radix], axis=1).astype(np.int8)
    entries = []
    for _ in range(n):
        values = rng.choice(m, size=rng.integers(1, min(m, 3) + 1), replace=False)
        entries.append([(int(v), int(rng.integers(1, 6))) for v in sorted(values)])
    size = np.array([sum(c for _, c in ent) for ent in entries], np.int64)
    return size, codes, radix, entries


def _subsets(rng, q: int, count: int, k_high: int) -> list[tuple[int, list[int]]]:
    """``count`` random QID subsets of 1-3 columns, each with its own k."""
    out = []
    for _ in range(count):
        cols = sorted(rng.choice(q, size=int(rng.integers(1, min(q, 3) + 1)), replace=False))
        out.append((int(rng.integers(1, k_high + 1)), [int(c) for c in cols]))
    return out


def _layout(subsets) -> np.ndarray:
    """The kernels' subset layout: their number, then per subset k, width and columns."""
    flat = [len(subsets)]
    for k, cols in subsets:
        flat += [k, len(cols), *cols]
    return np.array(flat, np.int64)


def _scratch(n: int, radix) -> tuple:
    node_radix = np.array([[*radix, 1]], np.int64)
    table = np.full(max(int(np.prod(radix)), 8 * n) + 16, -1, np.int32)
    return node_radix, table, np.empty(n + 1, np.int64), np.empty(n + 1, np.int64), \
        np.empty(n + 1, np.int64)


def _groups(alive, codes, cols) -> list[list[int]]:
    groups = defaultdict(list)
    for e in alive:
        groups[tuple(int(c) for c in codes[e, cols])].append(e)
    return list(groups.values())


def _naive_confident(size, codes, entries, subsets, c, listed, outlier):
    """LKC-privacy's rounds: every subset judged on the classes left at the round's start,
    the failing classes all removed at the round's end; returns (outliers, rounds)."""
    out, rounds = outlier.copy(), 0
    while True:
        rounds += 1
        alive = [e for e in range(len(size)) if not out[e]]
        fails = set()
        for k, cols in subsets:
            for members in _groups(alive, codes, cols):
                total = sum(int(size[e]) for e in members)
                values = Counter()
                for e in members:
                    for v, r in entries[e]:
                        if listed[v]:
                            values[v] += r
                top = max(values.values(), default=0)
                if total < k or top / max(total, 1) > c:
                    fails.update(members)
        if not fails:
            return out, rounds
        out[sorted(fails)] = True


def _naive_peel(size, codes, subsets, outlier):
    """The largest set of classes whose groups on every subset reach the subset's k."""
    out, changed = outlier.copy(), True
    while changed:
        changed = False
        for k, cols in subsets:
            alive = [e for e in range(len(size)) if not out[e]]
            for members in _groups(alive, codes, cols):
                if sum(int(size[e]) for e in members) < k:
                    out[members] = True
                    changed = True
    return out


def _confident_case(seed: int):
    """A random LKC case: ``(size, codes, radix, entries, subsets, c, listed, outlier)``."""
    rng = np.random.default_rng(seed)
    n, q, m = int(rng.integers(20, 400)), int(rng.integers(2, 5)), int(rng.integers(2, 6))
    size, codes, radix, entries = _classes(rng, n, q, m)
    subsets = _subsets(rng, q, int(rng.integers(2, 8)), 12)
    c = float(rng.choice([0.5, 0.6, 0.75, 0.9]))
    listed = rng.random(m) < 0.7
    listed[rng.integers(m)] = True
    return size, codes, radix, entries, subsets, c, listed, rng.random(n) < 0.1


@pytest.mark.parametrize("seed", range(12))
def test_confident_peeling_equals_the_naive_rounds(seed):
    size, codes, radix, entries, subsets, c, listed, outlier = _confident_case(seed)
    n, m = len(size), len(listed)
    expected, rounds = _naive_confident(size, codes, entries, subsets, c, listed, outlier)

    n_entries = sum(len(ent) for ent in entries)
    cls = np.zeros((8, n_entries + 1), np.int64)
    sens, count = np.empty(n_entries, np.int32), np.empty(n_entries, np.int64)
    at = 0
    for e, ent in enumerate(entries):
        cls[DISTINCT, e], cls[START, e] = len(ent), at
        for v, r in ent:
            cls[ENTRIES, at], sens[at], count[at] = at, v, r
            at += 1
    params = np.zeros(SHARES + len(VALUE_BLOCKS) * m)
    params[LKC_C] = c
    first = SHARES + VALUE_BLOCKS["listed"] * m
    params[first:first + m] = listed
    node_radix, table, table_key, scratch, total = _scratch(n, radix)
    got = outlier.copy()
    peel_confident_groups(size, codes, node_radix, got, _layout(subsets), table, table_key,
                          scratch, total, cls, sens, count, params,
                          np.empty((6, n_entries + 1), np.int64), np.empty(n * m + 1, np.int64))
    np.testing.assert_array_equal(got, expected, err_msg=f"seed {seed}, {rounds} rounds")
    assert (table == -1).all()  # the scratch table is left clear


def test_the_random_cases_take_several_rounds():
    """The cases above reach the rounds that judge only the groups a removal touched."""
    rounds = []
    for seed in range(12):
        size, codes, _, entries, subsets, c, listed, outlier = _confident_case(seed)
        rounds.append(_naive_confident(size, codes, entries, subsets, c, listed, outlier)[1])
    assert max(rounds) >= 3 and sum(r >= 2 for r in rounds) >= 6


@pytest.mark.parametrize("seed", range(8))
def test_subset_peeling_equals_the_naive_fixpoint(seed):
    rng = np.random.default_rng(100 + seed)
    n, q = int(rng.integers(20, 400)), int(rng.integers(2, 5))
    size, codes, radix, _ = _classes(rng, n, q, 3)
    subsets = _subsets(rng, q, int(rng.integers(1, 6)), 25)
    outlier = rng.random(n) < 0.1
    expected = _naive_peel(size, codes, subsets, outlier)
    node_radix, table, table_key, scratch, total = _scratch(n, radix)
    got = outlier.copy()
    peel_groups(size, codes, node_radix, got, _layout(subsets), table, table_key, scratch,
                total, np.empty((2, n + 1), np.int64))
    np.testing.assert_array_equal(got, expected)
    assert (table == -1).all()
