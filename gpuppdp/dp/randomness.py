"""Where the noise comes from: OS-seeded generators on the active backend.

A differentially private release is only as private as its randomness is unpredictable.  A
:class:`RandomSource` therefore seeds its generators from the operating system's entropy pool
(:mod:`secrets`) unless the caller explicitly asks for a seed, and a seed always raises a
:class:`SeededNoiseWarning`: anyone who knows (or guesses) the seed can subtract the noise.

The random numbers are drawn on the device with the backend's own generator
(``xp.random.default_rng``: PCG64 on NumPy, cuRAND XORWOW on CuPy), using only
``Generator.integers`` so that both backends produce the same kind of raw material: 63
uniformly random bits per value, which the mechanisms turn into noise themselves.

CuPy's cuRAND generators take only a 32-bit seed (``SeedSequence.generate_state(1,
uint32)``), which an attacker could enumerate.  On any backend other than NumPy the source
therefore XORs the outputs of several independently seeded generators, so that at least 128
bits of OS entropy determine the stream.  These generators are fast statistical PRNGs, not
cryptographic ones: the guarantee assumes the attacker cannot observe the generator's raw
output, which a release never exposes.
"""

from __future__ import annotations

import math
import numbers
import os
import secrets
import warnings

import numpy as np

from ..backend import Backend, get_backend

__all__ = ["RandomSource", "SeededNoiseWarning", "default_source"]

_ENTROPY_BITS = 128
_SEED_BITS = {"numpy": 128}  # seed bits one generator absorbs; anything else counts as cuRAND
_CURAND_SEED_BITS = 32


class SeededNoiseWarning(UserWarning):
    """Noise drawn from a caller-supplied seed is reproducible, hence not private."""


class RandomSource:
    """A source of uniformly random bits on one backend, OS-seeded by default.

    Parameters
    ----------
    backend : {"auto", "cpu", "gpu"} or Backend, default "auto"
        Where the random numbers are drawn and the noise is computed.
    seed : int, optional
        Only for reproducible experiments and tests: makes the noise a deterministic
        function of ``seed``, which voids the privacy guarantee.  Emits a
        :class:`SeededNoiseWarning`.  Without it, each generator is seeded with
        128 bits from :func:`secrets.randbits`.

    Attributes
    ----------
    backend : Backend
    seeded : bool
        True when the noise is reproducible from a seed (and therefore not private).
    streams : int
        Number of independently seeded generators whose outputs are XOR-ed.

    Notes
    -----
    The number of streams is ``ceil(128 / b)`` where ``b`` is the number of seed bits one
    generator of the backend absorbs: 128 for NumPy's PCG64 (seeded through
    :class:`numpy.random.SeedSequence`), 32 for CuPy's cuRAND generators.  XOR of
    independent uniform words is uniform, so extra streams cost throughput, not quality.

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
       Foundations and Trends in Theoretical Computer Science 9(3-4), 2014, section 3.3
       (the analysis assumes truly random noise).
    .. [2] I. Mironov, "On significance of the least significant bits for differential
       privacy", ACM CCS 2012 (implementation details of the randomness matter).

    Examples
    --------
    >>> src = RandomSource("cpu")           # private: seeded from the OS
    >>> src.random_bits(3).shape
    (3,)
    """

    def __init__(self, backend: str | Backend = "auto", *, seed: int | None = None):
        self.backend = get_backend(backend)
        bits = _SEED_BITS.get(self.backend.name, _CURAND_SEED_BITS)
        self.streams = math.ceil(_ENTROPY_BITS / bits)
        self.seeded = seed is not None
        if seed is None:
            seeds = [np.random.SeedSequence(secrets.randbits(_ENTROPY_BITS))
                     for _ in range(self.streams)]
        else:
            if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
                raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
            warnings.warn(
                "noise drawn from an explicit seed is reproducible by anyone who knows the "
                "seed, so the release is NOT differentially private; use seeds only for "
                "tests and experiments", SeededNoiseWarning, stacklevel=2)
            seeds = np.random.SeedSequence(int(seed)).spawn(self.streams)
        self._generators = [self.backend.xp.random.default_rng(s) for s in seeds]

    def random_bits(self, shape) -> object:
        """An ``int64`` array of ``shape`` whose values are 63 independent uniform bits.

        Parameters
        ----------
        shape : int or tuple of int

        Returns
        -------
        array of int64 on :attr:`backend`, values uniform on ``[0, 2**63)``.
        """
        xp = self.backend.xp
        shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
        bits = self._generators[0].integers(0, 2**63, size=shape, dtype=xp.int64)
        for gen in self._generators[1:]:
            bits ^= gen.integers(0, 2**63, size=shape, dtype=xp.int64)
        return bits

    def bernoulli(self, p: float, shape) -> object:
        """A boolean array of ``shape``, each value True with probability ``p``.

        ``p`` is used to 53 bits: the comparison is on integers, so the probability is
        exactly ``round(p * 2**53) / 2**53``.
        """
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p!r}")
        return (self.random_bits(shape) >> 10) < round(p * 2**53)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        kind = "seeded, NOT private" if self.seeded else "OS entropy"
        return f"RandomSource({self.backend.name!r}, {kind}, streams={self.streams})"


_DEFAULT: dict[str, tuple[int, RandomSource]] = {}


def default_source(backend: str | Backend = "auto") -> RandomSource:
    """The shared OS-seeded :class:`RandomSource` of ``backend`` (created on first use).

    Re-created after a ``fork``: a child process must never replay its parent's noise.
    """
    backend = get_backend(backend)
    pid, source = _DEFAULT.get(backend.name, (None, None))
    if source is None or pid != os.getpid():
        source = RandomSource(backend)
        _DEFAULT[backend.name] = (os.getpid(), source)
    return source
