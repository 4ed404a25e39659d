"""Perturbative masking of microdata: noise addition, rank swapping, PRAM, top and bottom
coding, and permutation within groups -- array code on the backend of the random source.

Each method takes an array (a column, or rows x columns for noise) and returns a new one of the
same length: nothing is dropped and the rows keep their order.  Randomness comes from a
:class:`~gpuppdp.dp.randomness.RandomSource` (``source=``), or one made from ``seed`` (tests,
reproducible runs) or keyed from the operating system.

References: Brand (2002), "Microdata protection through noise addition", LNCS 2316; Moore
(1996), "Controlled data-swapping techniques for masking public use microdata sets", US Census
Bureau; Kooiman, Willenborg and Gouweleeuw (1997), "PRAM: a method for disclosure limitation of
microdata", Statistics Netherlands; Zhang, Koudas, Srivastava and Yu (2007), "Aggregate query
answering on anonymized tables", ICDE; Hundepool et al. (2012), *Statistical Disclosure
Control*, Wiley, section 3.4.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..backend import Array
from ..errors import InputError
from ..kernels.swap import stable_argsort, swap_sources
from .draws import normal, random_source, uniform

__all__ = ["add_noise", "rank_swap", "rank_swap_sources", "pram", "invariant_pram_matrix",
           "top_code", "bottom_code", "permute_within"]


def _float_array(xp, values, name: str) -> Array:
    a = xp.asarray(values)
    if a.dtype.kind not in "iuf":
        raise InputError(f"{name} must be numeric, got dtype {a.dtype}")
    a = a.astype(xp.float64)
    if not bool(xp.isfinite(a).all()):
        raise InputError(f"{name} has missing or infinite values: impute or drop them first")
    return a


def _percent(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not 0 < float(value) <= 100:
        raise InputError(f"{name} must be a percentage in (0, 100], got {value!r}")
    return float(value)


def add_noise(values, noise: float, *, method: str = "additive", seed: int | None = None,
              source=None, backend="auto") -> Array:
    """Normal noise added to numeric ``values`` (n,) or (n, d), float64 out.

    ``method="additive"``: uncorrelated noise, column ``j`` with variance ``noise/100 *
    var(x_j)``; ``"correlated"``: noise with covariance ``noise/100 * Cov(X)``, which keeps the
    correlations of the columns (the released covariance is ``(1 + noise/100) Cov(X)``; Brand
    2002).  ``noise`` is a percentage of the variance.  Unlike sdcMicro's ``addNoise``, the
    noise has mean zero in both methods.
    """
    src = random_source(backend, seed, source)
    xp = src.backend.xp
    x = _float_array(xp, values, "values")
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not noise > 0:
        raise InputError(f"noise must be a positive percentage of the variance, got {noise!r}")
    alpha = float(noise) / 100.0
    column = x.reshape(x.shape[0], -1)
    n, d = column.shape
    if n < 2:
        raise InputError(f"add_noise needs at least 2 rows to estimate a variance, got {n}")
    z = normal(src, (n, d))
    if method == "additive":
        eps = z * (xp.sqrt(alpha * column.var(axis=0, ddof=1)))[None, :]
    elif method == "correlated":
        if d < 2:
            raise InputError("method='correlated' needs at least 2 columns")
        cov = xp.cov(column, rowvar=False) * alpha
        try:
            lower = xp.linalg.cholesky(cov + xp.eye(d) * 1e-12 * float(xp.trace(cov)))
        except Exception as e:  # numpy.linalg.LinAlgError, or CuPy's
            raise InputError(f"the columns' covariance is not positive definite: {e}") from e
        if not bool(xp.isfinite(lower).all()):
            raise InputError("the columns' covariance is not positive definite (a column is "
                             "constant or a linear combination of others)")
        eps = z @ lower.T
    else:
        raise InputError(f"method must be 'additive' or 'correlated', got {method!r}")
    return (column + eps).reshape(x.shape)


def rank_swap(values, p: float, *, seed: int | None = None, source=None,
              backend="auto") -> Array:
    """Rank swapping of one numeric column (:func:`rank_swap_sources`): each record gets the
    value of the record it is paired with."""
    src = random_source(backend, seed, source)
    x = src.backend.xp.asarray(values)
    return x[rank_swap_sources(x, p, source=src)]


def _block_bits(n: int, width: int) -> int:
    """The high bits of rank swapping's sort key that number the blocks of ``width`` ranks."""
    return max(1, int((n - 1) // width).bit_length())


def rank_swap_sources(values, p: float, *, seed: int | None = None, source=None,
                      backend="auto") -> Array:
    """Rank swapping's pairs: for each record, the record whose value it takes.  Records are
    paired at random within blocks of ``ceil(p/100 * n)`` consecutive ranks of ``values``
    (ties ordered by position) and each pair exchanges its values (the odd one of a block
    keeps its own), so the column's multiset of values is kept exactly and no value moves
    further than ``p`` % of the rank range.  Moore's (1996) sequential algorithm draws each
    partner from a window sliding over the ranks; the blocks make every pair independent, so
    the whole column is one sort and one gather."""
    src = random_source(backend, seed, source)
    xp = src.backend.xp
    x = xp.asarray(values)
    if x.ndim != 1:
        raise InputError(f"rank_swap takes one column, got shape {tuple(x.shape)}")
    if x.dtype.kind not in "iuf" or not bool(xp.isfinite(x).all()):
        raise InputError("rank_swap needs numbers without missing or infinite entries: impute "
                         "or drop them first")
    n = int(x.shape[0])
    width = max(2, -(-int(round(_percent(p, "p") * n)) // 100))
    if src.backend.kernels == "cpu":  # the same pairs: a parallel radix sort, a sort a block
        return swap_sources(stable_argsort(x), src.random_words(2 * n), width,
                            _block_bits(n, width))
    by_rank = xp.argsort(x, kind="stable")             # rank -> row
    block = xp.arange(n, dtype=xp.int64) // width      # of each rank
    # ranks shuffled within their blocks: one sort by the block in the high bits and random
    # bits below it (a tie between equal random bits keeps the rank order)
    shift = 63 - _block_bits(n, width)
    key = (block << shift) | (src.random_bits(n) >> (63 - shift))
    shuffled = xp.argsort(key, kind="stable")
    pos = xp.arange(n, dtype=xp.int64) - block * width  # position in its block's shuffle
    block_size = xp.minimum(width, n - block * width)
    mate = pos ^ 1
    partner = xp.where(mate < block_size, xp.arange(n, dtype=xp.int64) - pos + mate,
                       xp.arange(n, dtype=xp.int64))
    sources = xp.empty(n, dtype=xp.int64)
    sources[by_rank[shuffled]] = by_rank[shuffled[partner]]
    return sources


def pram(codes, matrix, *, seed: int | None = None, source=None, backend="auto") -> Array:
    """Post-randomization of categorical ``codes`` (ints in ``0..K-1``): a record with
    category ``i`` is released as ``j`` with probability ``matrix[i, j]`` (rows of the K x K
    Markov matrix sum to 1).  With :func:`invariant_pram_matrix` the released frequencies are
    unbiased estimates of the original ones (Kooiman et al. 1997)."""
    src = random_source(backend, seed, source)
    xp = src.backend.xp
    p = np.asarray(matrix, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1] or p.shape[0] == 0:
        raise InputError(f"matrix must be square K x K, got shape {p.shape}")
    if (p < 0).any() or not np.allclose(p.sum(axis=1), 1.0, atol=1e-9):
        raise InputError("matrix rows must be probabilities summing to 1")
    c = xp.asarray(codes)
    k = p.shape[0]
    if c.dtype.kind not in "iu":
        raise InputError(f"codes must be integers, got dtype {c.dtype}")
    if c.size and (int(c.min()) < 0 or int(c.max()) >= k):
        raise InputError(f"codes must lie in 0..{k - 1} (the matrix's categories)")
    # row i's cumulative probabilities shifted by i: one sorted array for all rows
    cumulative = np.cumsum(p, axis=1)
    cumulative[:, -1] = 1.0
    shifted = xp.asarray((cumulative + np.arange(k)[:, None]).ravel())
    c64 = c.astype(xp.int64)
    found = xp.searchsorted(shifted, c64.astype(xp.float64) + uniform(src, c.shape[0]),
                            side="right")
    return xp.minimum(found - c64 * k, k - 1).astype(c.dtype)


def invariant_pram_matrix(frequencies, retain: float) -> np.ndarray:
    """The invariant PRAM matrix ``R = P Q`` of a base matrix ``P`` that keeps a category with
    probability ``retain`` and moves it to each other category with equal probability, where
    ``Q`` is ``P`` reversed by Bayes' rule: ``pi R = pi`` for the category frequencies ``pi``
    (Kooiman et al. 1997; Gouweleeuw et al. 1998).  Categories of frequency 0 keep their
    own value."""
    pi = np.asarray(frequencies, dtype=np.float64)
    if pi.ndim != 1 or (pi < 0).any() or pi.sum() <= 0:
        raise InputError("frequencies must be non-negative counts, not all zero")
    if isinstance(retain, bool) or not isinstance(retain, numbers.Real) or \
            not 0 < retain <= 1:
        raise InputError(f"retain must be in (0, 1], got {retain!r}")
    k = len(pi)
    if k == 1:
        return np.ones((1, 1))
    base = np.full((k, k), (1.0 - retain) / (k - 1))
    np.fill_diagonal(base, retain)
    joint = base * pi[:, None]                 # P(i, j) = pi_i P_ij
    released = joint.sum(axis=0)               # frequency of j after P
    backward = np.divide(joint.T, released[:, None], out=np.zeros((k, k)),
                         where=released[:, None] > 0)  # Q_ji = pi_i P_ij / sum_k pi_k P_kj
    out = base @ backward
    out[pi == 0] = np.eye(k)[pi == 0]
    return out / out.sum(axis=1, keepdims=True)


def _coded(values, limit, replacement, side: str):
    x = np.asarray(values) if isinstance(values, (list, tuple)) else values
    if x.dtype.kind not in "iuf":
        raise InputError(f"{side} coding needs numeric values, got dtype {x.dtype}")
    for name, v in (("value", limit), ("replacement", replacement)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
            raise InputError(f"the {side} coding {name} must be a number, got {v!r}")
    replacement = limit if replacement is None else replacement
    out = x.astype(np.result_type(x.dtype, np.asarray(replacement).dtype))
    out[x > limit if side == "top" else x < limit] = replacement
    return out


def top_code(values, value: float, replacement: float | None = None) -> Array:
    """Values above ``value`` replaced by ``replacement`` (default ``value`` itself)."""
    return _coded(values, value, replacement, "top")


def bottom_code(values, value: float, replacement: float | None = None) -> Array:
    """Values below ``value`` replaced by ``replacement`` (default ``value`` itself)."""
    return _coded(values, value, replacement, "bottom")


def permute_within(values, groups, *, seed: int | None = None, source=None,
                   backend="auto") -> Array:
    """The values of each group (``groups``: one integer label per record, e.g. a QID class)
    shuffled among the group's records: every group keeps its multiset of values, and the link
    between a record and its value is broken within the group (Zhang et al. 2007)."""
    src = random_source(backend, seed, source)
    xp = src.backend.xp
    v, g = xp.asarray(values), xp.asarray(groups)
    if v.shape[0] != g.shape[0]:
        raise InputError(f"values and groups differ in length: {v.shape[0]} and {g.shape[0]}")
    if g.dtype.kind not in "iu" or (g.size and int(g.min()) < 0):
        raise InputError("groups must be non-negative integer labels (e.g. class numbers)")
    g = g.astype(xp.int64)
    used = max(1, int(g.max()).bit_length()) if g.size else 1
    by_group = xp.argsort(g, kind="stable")
    # the group in the high bits, random bits below it: one sort shuffles every group
    shuffled = xp.argsort((g << (63 - used)) | (src.random_bits(v.shape[0]) >> used),
                          kind="stable")
    out = xp.empty_like(v)
    out[by_group] = v[shuffled]
    return out
