"""Host-side tables of the exact Bernoulli trials of :mod:`gpuppdp.kernels.dp_noise`.

A trial with probability ``p`` compares a uniform ``u`` read from the keystream with the
binary expansion of ``p``: its first :data:`FIRST_BITS` bits (half a keystream word), then,
on a tie, :data:`EXT_WORDS` words of :data:`EXT_BITS` bits read from :data:`EXT_BLOCKS`
blocks of the extension stream (see ``dp_noise``'s docstring).  :func:`bernoulli_tables`
writes those expansions.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["bernoulli_tables", "FIRST_BITS", "EXT_BITS", "EXT_BLOCKS", "EXT_WORDS"]

FIRST_BITS = 16  # bits of u compared first (half a keystream word per trial)
EXT_BITS = 32  # bits per extension word
EXT_BLOCKS = 3  # extension blocks read on a tie
EXT_WORDS = 16 * EXT_BLOCKS  # 48 words: 16 + 48 * 32 = 1552 bits > 1074 + 53


def bernoulli_tables(probabilities, invert=None, *, first_bits: int = FIRST_BITS,
                     ext_bits: int = EXT_BITS, ext_words: int = EXT_WORDS):
    """Expansion tables of the trials with the given probabilities (floats in ``[0, 1]``).

    Returns ``(p_first, ptab, invert)``: ``int64 (k,)`` first ``first_bits`` bits of each
    ``p'``, ``uint32 (k, ext_words)`` its next bits in ``ext_bits``-bit words, ``int64 (k,)``
    1 where the trial is run on ``p'`` and inverted.  Without ``invert``, ``p' = p`` for
    ``p <= 1/2`` and ``p' = 1 - p`` (exact in float64) above; with ``invert`` (a sequence of
    0/1), each ``p`` is taken as ``p'`` itself and must be ``<= 1/2``: the caller rounded the
    smaller of the two probabilities.  ``p'`` must be fully represented
    (``first_bits + ext_bits * ext_words`` bits cover any float64 in ``[0, 1/2]`` at the
    default widths); the reduced widths exist for exhaustive tests.
    """
    probs = [float(p) for p in probabilities]
    k = len(probs)
    flags = None if invert is None else [int(f) for f in invert]
    if flags is not None and (len(flags) != k or any(f not in (0, 1) for f in flags)
                              or any(p > 0.5 for p in probs)):
        raise ValueError("with invert, give one 0/1 flag per probability, each p <= 1/2")
    total = first_bits + ext_bits * ext_words
    p_first = np.zeros(k, dtype=np.int64)
    if not 1 <= ext_bits <= 32 or not 1 <= first_bits <= FIRST_BITS:
        raise ValueError("first_bits must be in 1..16 and ext_bits in 1..32")
    ptab = np.zeros((k, max(ext_words, 1)), dtype=np.uint32)
    invert = np.zeros(k, dtype=np.int64)
    for row, p in enumerate(probs):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"a probability must be in [0, 1], got {p!r}")
        if flags is not None:
            invert[row] = flags[row]
        elif p > 0.5:
            p, invert[row] = 1.0 - p, 1  # exact for p in [1/2, 1] (Sterbenz)
        scaled = Fraction(p) * 2**total
        if scaled.denominator != 1:
            raise ValueError(f"probability {p!r} has more than {total} bits after the point")
        m = scaled.numerator
        p_first[row] = m >> (total - first_bits)
        for w in range(ext_words):
            shift = total - first_bits - ext_bits * (w + 1)
            ptab[row, w] = (m >> shift) & ((1 << ext_bits) - 1)
    return p_first, ptab, invert
