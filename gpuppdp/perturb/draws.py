"""Random draws of the perturbation methods: uniforms, normals and random orders from one
ChaCha20 keystream (:class:`~gpuppdp.dp.randomness.RandomSource`), on the source's backend.

A perturbation is not differentially private, so a seed here voids nothing the caller was
promised: a seeded source is made without the DP layer's warning.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..backend import Array
from ..dp.randomness import RandomSource, SeededNoiseWarning
from ..errors import InputError

__all__ = ["random_source", "uniform", "normal"]

_UNIT = 2.0 ** -53


def random_source(backend="auto", seed: int | None = None,
                  source: RandomSource | None = None) -> RandomSource:
    """``source`` itself, or a new one on ``backend``: keyed from the OS, or from ``seed``
    (reproducible runs and tests)."""
    if source is not None:
        if not isinstance(source, RandomSource):
            raise InputError(f"source must be a RandomSource, got {source!r}")
        if seed is not None:
            raise InputError("give seed or source, not both")
        return source
    if seed is not None and (not isinstance(seed, numbers.Integral) or isinstance(seed, bool)
                             or seed < 0):
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        return RandomSource(backend, seed=seed)


def uniform(source: RandomSource, shape) -> Array:
    """Floats uniform on ``[0, 1)``, multiples of 2^-53 (53 keystream bits each)."""
    bits = source.random_bits(shape)
    return (bits >> 10).astype(source.backend.xp.float64) * _UNIT


def normal(source: RandomSource, shape) -> Array:
    """Standard normal floats (Box and Muller 1958: two uniforms per pair of normals)."""
    xp = source.backend.xp
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    pairs = (n + 1) // 2
    u = uniform(source, 2 * pairs)
    radius = xp.sqrt(-2.0 * xp.log1p(-u[:pairs]))  # 1 - u in (0, 1]: the log is finite
    angle = 2.0 * np.pi * u[pairs:]
    z = xp.concatenate([radius * xp.cos(angle), radius * xp.sin(angle)])
    return z[:n].reshape(shape)
