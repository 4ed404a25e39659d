"""Frequency sets as sorted runs (``gpuppdp.kernels.sortedruns``) against a naive count: a
chunk's set in key order, merges of sets, and the canonical order (first appearance)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuppdp.kernels import sortedruns


def naive_set(codes: np.ndarray, first_row: int = 0):
    """Distinct rows in order of first appearance: {row tuple: [count, first row]}."""
    out: dict = {}
    for i, row in enumerate(map(tuple, codes.tolist())):
        entry = out.setdefault(row, [0, first_row + i])
        entry[0] += 1
    return out


def packed(rows, radix) -> list[int]:
    """Keys of bit fields, first column highest, each as wide as its largest code."""
    keys = []
    for row in rows:
        key = 0
        for code, r in zip(row, radix):
            key = (key << max(1, (int(r) - 1).bit_length())) | int(code)
        keys.append(key)
    return keys


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("wide", [False, True])
def test_chunk_sets_merge_and_canonical_order(seed, wide, monkeypatch):
    """``wide``: keys too large for the row numbers beside them (the stable-argsort path);
    canonical order placed in partitions of 2^4 rows (many, some empty)."""
    monkeypatch.setattr(sortedruns, "PART_BITS", 4)
    rng = np.random.default_rng(seed)
    radix = np.array([7, 3, 2, 5]) if not wide else np.array([2 ** 20, 2 ** 20, 2 ** 19, 3])
    n = int(rng.integers(1, 3000))
    codes = np.stack([rng.integers(0, min(int(r), 6), n) for r in radix], axis=1)
    codes = codes.astype(np.int32 if wide else np.int8)
    cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n, 4)]))
    runs = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        keys, count, first = sortedruns.chunk_set(codes[lo:hi], radix, int(lo))
        want = naive_set(codes[lo:hi], int(lo))
        order = np.argsort(packed(want, radix))
        assert keys.tolist() == np.array(packed(want, radix))[order].tolist()  # key order
        assert count.tolist() == [v[0] for v in np.array(list(want.values()))[order]]
        assert first.tolist() == [v[1] for v in np.array(list(want.values()))[order]]
        runs.append((keys, count, first))
    keys, count, first = sortedruns.merge_sets(runs)
    assert runs == []
    assert (np.diff(keys) > 0).all()
    got_codes, got_count, got_first = sortedruns.canonical([(keys, count, first)], radix, n,
                                                           codes.dtype)
    want = naive_set(codes)
    assert got_codes.dtype == codes.dtype
    assert [tuple(r) for r in got_codes.tolist()] == list(want)  # first appearance
    assert got_count.tolist() == [v[0] for v in want.values()]
    assert got_first.tolist() == [v[1] for v in want.values()]


def test_fits_and_an_empty_merge():
    assert sortedruns.fits(np.array([2 ** 31, 2 ** 31]))  # 62 bits
    assert not sortedruns.fits(np.array([2 ** 31 + 1, 2 ** 31]))
    assert not sortedruns.fits(np.array([3] * 32))  # 2 bits each
    with pytest.raises(ValueError, match="no sets"):
        sortedruns.merge_sets([])
