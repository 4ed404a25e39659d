"""Fused rounds of the discrete Gaussian sampler, on the CPU and in CUDA, built on the noise
kernel of :mod:`.dp_noise`.  :func:`gaussian_round` is one round of the rejection sampler of
Canonne, Kamath & Steinke (2020, Algorithm 3) for ``m`` values, fused: a proposal ``Y`` from
the noise kernel (its task form), ``γ = (|Y| - c)² / (2σ²)`` (``c = fl(σ² r)``; the float
operations of :meth:`gpuppdp.dp.gaussian.DiscreteGaussianSampler.gamma`), and the coin
``u < fl(exp(-γ))`` (rejected outright when ``γ > 700``).  Its keystream: the round reserves
:func:`gaussian_blocks` blocks from ``base``; the proposals use the first
:func:`~.dp_noise.noise_blocks` of them exactly as :func:`~.dp_noise.noise_int` does, and
value ``j``'s coin reads ``u`` from words ``2j`` and ``2j + 1`` of the blocks after them (the words
:meth:`~gpuppdp.dp.RandomSource.random_words` would return there, 64 bits, the first word
most significant), continued, when those 64 bits do not decide (probability below
``2**-11``), by the three extension blocks at the extension index of its first word (word
``w`` of block ``b``: ``2 (16 b + w)``, an index no trial uses).  ``u < p`` for
``p = M 2**-(k+53)`` (``frexp``) is decided exactly: the first ``k + 53`` bits of ``u``, as an
integer, are below ``M``.  The caller redraws the rejected values in a new round on fresh
blocks (:mod:`gpuppdp.dp.gaussian`).

On the host the round runs as tasks on the house's thread pool (:func:`.dp_noise._run_lanes`),
its keystream :data:`~.chacha.LANES` blocks at a time (:mod:`.chacha`); on the device as a
thread per group, the same functions compiled again for CUDA (as the noise kernel's), so
both give the same bits for a key but where the device's ``exp`` differs from libm's in the
last place (both within :data:`~gpuppdp.dp.coins.EXP_ERROR`).

References
----------
.. [CKS20] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020, Algorithm 3.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, int64, njit, uint32, uint64

from .aot import ahead_of_time
from .chacha import LANES, block_at, fill_blocks, scratch_words, word_at
from .dp_noise import _CUDA as _NOISE_CUDA
from .dp_noise import (_SUB_GROUPS, _TASK_UNITS, EXT_FLAG, GROUP, _form, _host_key, _launch,
                       _noise_step, _noise_task_start, _rebind, _run_lanes, add_int_group,
                       noise_blocks, noise_group, noise_rows)
from .dp_tables import EXT_BLOCKS, EXT_WORDS

__all__ = ["gaussian_round", "gaussian_blocks"]


@njit(cache=True)
def _coin_tail(words, k, m):
    """``u < M 2**-(k+53)`` for ``u``'s bits in ``words`` (uint32, most significant first;
    ``k + 53`` bits at most ``32 len(words)``): the first ``k`` bits are zero and the next
    53, as an integer, are below ``m``."""
    for w in range(k // 32):
        if words[w] != 0:
            return 0
    r = k % 32
    if r and (int64(words[k // 32]) >> (32 - r)) != 0:
        return 0
    v = int64(0)
    for b in range(k, k + 53):
        v = (v << 1) | ((int64(words[b // 32]) >> (31 - b % 32)) & 1)
    return 1 if v < m else 0


@njit(cache=True)
def _coin_slow(w0, w1, key, n0, n1, ext_index, words, ebuf, k, m):
    """A coin the first 64 bits did not decide: ``u`` continued on the extension stream."""
    words[0] = w0
    words[1] = w1
    for b in range(EXT_BLOCKS):
        block_at(key, n0, n1 | EXT_FLAG, ext_index * EXT_BLOCKS + b, ebuf, 16 * b)
    for w in range(EXT_WORDS):
        words[2 + w] = ebuf[w]
    return _coin_tail(words, k, m)


@njit(cache=True, nogil=True)
def _gaussian_task(t, y_out, accept, key, n0, n1, base, coin_base, rows, trials, p_first, ptab,
                   invert, center, two_sigma2, max_gamma, group, per_task):
    """Groups ``t * per_task ..`` of :func:`gaussian_round`: proposals into ``y_out``
    (:func:`.dp_noise._noise_step`), coins into ``accept``.  ``group`` is
    :data:`~.dp_noise.GROUP` (see :func:`.dp_noise._noise_group_lanes`)."""
    n = y_out.shape[0]
    g0, g1, scratch = _noise_task_start(t, per_task, n, rows)
    cks = np.empty(scratch_words(2 * _SUB_GROUPS), np.uint32)
    ebuf = np.empty(EXT_WORDS, np.uint32)
    words = np.empty(2 + EXT_WORDS, np.uint32)
    for s0 in range(g0, g1, _SUB_GROUPS):
        s1 = min(g1, s0 + _SUB_GROUPS)
        _noise_step(s0, s1, n, key, n0, n1, base, rows, trials, p_first, ptab, invert, group,
                    scratch, y_out, 0)
        fill_blocks(key, n0, n1, coin_base + 2 * s0, 2 * (s1 - s0), cks)  # 2 per group
        _gaussian_coins(y_out, accept, s0, s1, cks, key, n0, n1, coin_base, center,
                        two_sigma2, max_gamma, words, ebuf)


@njit(cache=True)
def _gaussian_coins(y_out, accept, s0, s1, cks, key, n0, n1, coin_base, center, two_sigma2,
                    max_gamma, words, ebuf):
    """The coins of groups ``s0 .. s1 - 1`` (module docstring; their words in the scratch
    ``cks``, from block ``coin_base + 2 s0``).  A loop apart from the proposals' (in theirs
    this code stops LLVM from vectorizing the trials), the first 64 bits' decision written
    out (a call per value with array arguments costs more than the coin)."""
    n = y_out.shape[0]
    for i in range(s0 * GROUP, min(n, s1 * GROUP)):
        d = abs(float(y_out[i])) - center
        gamma = (d * d) / two_sigma2
        if gamma > max_gamma:
            accept[i] = 0
            continue
        frac, ex = math.frexp(math.exp(-gamma))  # p = m 2**-(k + 53), 2**52 <= m < 2**53
        if frac == 0.5 and ex == 1:
            accept[i] = 1  # p = 1
            continue
        m = int64(math.ldexp(frac, 53))
        k = -ex
        cb = (i - s0 * GROUP) // 8  # the coin's block in the scratch: 8 values a block
        w = 2 * (i % 8)
        w0 = word_at(cks, cb, w)
        w1 = word_at(cks, cb, w + 1)
        x = (uint64(w0) << uint64(32)) | uint64(w1)
        if k <= 11:
            accept[i] = 1 if (x >> uint64(11 - k)) < uint64(m) else 0
        elif (k >= 64 and x != 0) or (k < 64 and (x >> uint64(64 - k)) != 0):
            accept[i] = 0
        else:
            accept[i] = _coin_slow(w0, w1, key, n0, n1,
                                   2 * (16 * (coin_base + 2 * s0 + cb) + w), words, ebuf, k, m)


ahead_of_time(_gaussian_task, [
    "none(int64, int64[::1], uint8[::1], uint32[::1], int64, int64, int64, int64, int64, int64, "
    "int64[::1], uint32[:, ::1], int64[::1], float64, float64, float64, int64, int64)"])


# --- the CUDA form: the same source compiled again for the device (as in :mod:`.dp_noise`) ---

def _cuda_namespace() -> dict:
    namespace = {**globals(), **_NOISE_CUDA}
    for name in ("word_at", "_coin_tail", "_coin_slow", "_gaussian_coins"):
        namespace[name] = cuda.jit(device=True)(_rebind(globals()[name].py_func, namespace))
    return namespace


#: the CUDA kernel's local arrays' sizes: constants, as ``cuda.local.array`` needs (an
#: expression such as ``16 * LANES`` types as a run-time int64, which only the simulator takes)
_COIN_WORDS = 2 + EXT_WORDS
_KEYSTREAM_WORDS = 16 * LANES


_CUDA = _cuda_namespace()


def _cuda_kernel(function):
    """``@cuda.jit`` on ``function`` compiled in this module's CUDA namespace."""
    return cuda.jit(_rebind(function, _CUDA))


@_cuda_kernel
def _gaussian_cuda(y_out, accept, key, n0, n1, base, coin_base, rows, trials, p_first, ptab,
                   invert, center, two_sigma2, max_gamma):
    """A thread per group of ``GROUP`` values: their proposals (the noise kernel's
    ``noise_group``) and coins (:func:`_gaussian_coins`, its two blocks laid out as
    :func:`~.chacha.fill_blocks` does), the same bits as :func:`_gaussian_task`."""
    grp = cuda.grid(1)
    n = y_out.shape[0]
    if grp < (n + GROUP - 1) // GROUP:
        buf = cuda.local.array(16, uint32)
        ebuf = cuda.local.array(EXT_WORDS, uint32)
        words = cuda.local.array(_COIN_WORDS, uint32)
        z = cuda.local.array(GROUP, int64)
        cks = cuda.local.array(_KEYSTREAM_WORDS, uint32)
        noise_group(grp, n, key, n0, n1, base, rows, trials, p_first, ptab, invert, buf, ebuf, z)
        add_int_group(grp, n, y_out[:0], y_out, z)
        for b in range(2):
            block_at(key, n0, n1, coin_base + 2 * grp + b, buf, 0)
            for w in range(16):
                cks[w * LANES + b] = buf[w]  # word_at's layout
        _gaussian_coins(y_out, accept, grp, grp + 1, cks, key, n0, n1, coin_base, center,
                        two_sigma2, max_gamma, words, ebuf)


def gaussian_blocks(m: int, trials: int) -> int:
    """Keystream blocks one :func:`gaussian_round` over ``m`` values uses: the proposals'
    and two per group for the coins."""
    return noise_blocks(m, trials) + 2 * -(-m // GROUP)


def gaussian_round(backend, key, n0: int, n1: int, base: int, m: int, tables, center: float,
                   sigma2: float, max_gamma: float):
    """One fused round of the discrete Gaussian sampler for ``m`` values (module docstring):
    ``(proposals, accepted)``, int64 and uint8 arrays on ``backend`` -- on the host's
    thread pool, or a CUDA thread per group (the same bits, but for the device's ``exp``,
    within :data:`~gpuppdp.dp.coins.EXP_ERROR` as the host's).  ``tables`` are the
    proposal's (discrete Laplace) trial tables."""
    trials = tables[0].shape[0]
    rows = noise_rows(trials)
    coin_base = base + noise_blocks(m, trials)
    form = _form(backend, m, "gaussian_round")
    if form == "cuda":
        xp = backend.xp
        y, accept = xp.empty(m, dtype=xp.int64), xp.empty(m, dtype=xp.uint8)
        _launch(_gaussian_cuda, -(-m // GROUP), y, accept, backend.asarray(key), n0, n1, base,
                coin_base, rows, trials, *(backend.asarray(t) for t in tables), float(center),
                2.0 * float(sigma2), float(max_gamma))
        return y, accept
    y = np.empty(m, dtype=np.int64)
    accept = np.empty(m, dtype=np.uint8)
    args = (_host_key(key), n0, n1, base, coin_base, rows, trials, *tables, float(center),
            2.0 * float(sigma2), float(max_gamma))
    if form == "sim":
        _launch(_gaussian_cuda, -(-m // GROUP), y, accept, *args)
    else:
        _run_lanes(_gaussian_task, -(-m // GROUP), _TASK_UNITS, y, accept, *args, GROUP)
    return backend.asarray(y), backend.asarray(accept)
