"""ChaCha20 keystream, exact Bernoulli trials and the fused DP noise sampler, CPU and CUDA.

Every device-side function here is written once, as a Numba ``@njit`` function: the CPU
kernels call it compiled for the host, and the ``@cuda.jit`` kernels call the *same* Python
source compiled again with ``cuda.jit(device=True)`` (each function's code object re-bound to
a namespace in which its callees are their CUDA forms; see ``_cuda_namespace``).  All
arithmetic is on integers (``uint32``/``int64``), plus exact float64
operations (multiplication by a power of two, ``floor``, comparison), so the CPU and the GPU
forms produce the same bits for the same key, nonce and counter.

The keystream
-------------
:func:`~.chacha.chacha20_block` is the ChaCha20 block function of RFC 8439, section 2.3 (20 rounds,
state ``constants | key (8 words) | w12 w13 w14 w15``).  The callers use words 12-13 as a
64-bit block counter and 14-15 as a 64-bit nonce (the original layout of Bernstein's ChaCha;
RFC 8439 reads the same four words as a 32-bit counter and a 96-bit nonce, the block function
is identical).  Bit 31 of word 15 selects the stream: 0 for the main stream, 1 for the
*extension* stream that breaks the rare ties of the Bernoulli trials (below).

Exact Bernoulli trials
----------------------
A trial with probability ``p`` (a float64 in ``[0, 1/2]``) is ``u < p`` for a uniform ``u`` in
``[0, 1)`` whose binary expansion is read from the keystream only as far as needed: the first
16 bits (half a keystream word) decide unless they equal the first 16 bits of ``p``
(probability ``2**-16``); a tie is settled by comparing further 32-bit words of ``u`` (three
extension blocks, 1536 bits) with the binary expansion of ``p`` (at most 1074 bits after the
point, so the comparison always terminates).  ``P[u < p] = p`` exactly.  Probabilities above
1/2 are handled by the complement (``invert``).

The fused noise kernel
----------------------
Two-sided geometric (discrete Laplace) noise ``Z`` with ``P[Z = z] ∝ a**|z|`` is drawn as

* a sign bit ``s`` (trial 0: one bit of the chunk),
* ``nonzero`` (trial 1): ``P[Z != 0] = 2a / (1 + a)``,
* ``G = sum_j b_j 2**j`` with independent bits ``P[b_j = 1] = a**(2**j) / (1 + a**(2**j))``
  (trials ``2 .. J+1``; the binary digits of a geometric variable are independent),

and ``Z = ±(1 + G)`` if nonzero, else 0.  Element ``i`` of a call belongs to group
``i // 16``; the group's trials ``2r`` and ``2r + 1`` use the low and high halves of word
``i % 16`` of the keystream block ``base + group * rows + r``.  The kernels then add the noise
to integer values (:func:`noise_int`) or round real values to the grid ``g·ℤ`` (round half
to even, in units of ``g``), add and scale back (:func:`noise_grid`): keystream, the trials
(the inverse CDF), grid rounding and the addition in one pass, one thread per group.  The
discrete Gaussian's fused rounds (:mod:`.dp_gaussian`) draw their proposals with it.

Forms: ``_*_serial`` (Numba CPU, one block at a time: the reference), ``_*_task`` (Numba
CPU, the keystream :data:`~.chacha.LANES` blocks at a time in SIMD registers
(:mod:`.chacha`), the trials vectorized over a group's 16 elements; ranges of units on
the house's thread pool, :func:`.groupby.run_tasks`) and ``_*_cuda`` (CUDA kernels, one
thread per group or block; CuPy arrays, or host arrays under Numba's simulator).  All give
the same bits.  The dispatchers (:func:`keystream`, :func:`bernoulli`, :func:`noise_int`,
:func:`noise_grid`) take a :class:`gpuppdp.backend.Backend` and pick the form (the task form
on the CPU); on the simulator tier (``kernels == "cudasim"``) the first 16 inputs of up to
64 values of each kernel run the CUDA form itself, the others the CPU form.  The ``*_forms``
functions run one named form on host arrays (for the tests and benchmarks).  The trials'
tables are built on the host by :func:`~.dp_tables.bernoulli_tables`.

References
----------
.. [RFC8439] Y. Nir and A. Langley, "ChaCha20 and Poly1305 for IETF Protocols", RFC 8439,
   2018, section 2.3 (block function), test vectors 2.3.2 and 2.4.2.
.. [GRS09] A. Ghosh, T. Roughgarden and M. Sundararajan, "Universally utility-maximizing
   privacy mechanisms", STOC 2009 (the two-sided geometric distribution).
"""

from __future__ import annotations

import math
import types

import numpy as np
from numba import config, cuda, int64, njit, uint32, uint64

from . import chacha
from .chacha import LANES, block_at, chacha20_block, fill_blocks, scratch_words, word_at
from .aot import ahead_of_time
from .cudalaunch import launch
from .dp_tables import EXT_BITS, EXT_BLOCKS, EXT_WORDS, FIRST_BITS, bernoulli_tables
from .groupby import run_tasks

__all__ = ["chacha20_block", "bernoulli_tables", "keystream", "bernoulli", "noise_int",
           "noise_grid", "GROUP", "FIRST_BITS",
           "EXT_BITS", "EXT_WORDS", "EXT_FLAG", "MAX_BLOCK"]

GROUP = 16  # elements per group: one keystream word each per block row
EXT_FLAG = 0x80000000  # bit 31 of word 15: the extension stream
MAX_BLOCK = 2**54  # block counters stay below this: extension indices fit in int64
_PARALLEL_GROUPS = 4096  # below this many units the CPU forms run on the calling thread alone
_TASK_UNITS = 8192  # units (groups, blocks) per task of the CPU forms
_SIM_MAX = 64  # under the simulator, inputs up to this size may run the CUDA form itself
_SIM_LAUNCHES = 16  # ... for the first this many launches of each kernel in a process


# --- the device-agnostic functions (compiled for the CPU here, for CUDA by the kernels) -------

@njit(cache=True, inline="always")
def first_compare(c, p_first):
    """The first comparison of a trial: 1 if ``c < p_first``, 0 if greater, -1 on a tie.
    (The kernels write the same three-way comparison out in their loops: a call per trial
    costs more than the trial.)"""
    if c < p_first:
        return 1
    if c > p_first:
        return 0
    return -1


@njit(cache=True)
def resolve_tie(ext, n_words, ptab, row):
    """Settle a tied trial: compare the words ``ext[0:n_words]`` of ``u`` (after its first
    chunk) with row ``row`` of the expansion table, most significant first; 1 iff ``u < p``.
    Equal all the way means ``u >= p`` (``p``'s expansion has ended): 0."""
    for w in range(n_words):
        a = int64(ext[w])
        b = int64(ptab[row, w])
        if a < b:
            return 1
        if a > b:
            return 0
    return 0


@njit(cache=True)
def _tie(row, ptab, key, n0, n1, ext_index, ebuf):
    """A tied trial (probability ``2**-16``): read three blocks of the extension stream at
    ``ext_index`` (unique to the chunk) and settle it with :func:`resolve_tie`."""
    for m in range(EXT_BLOCKS):
        block_at(key, n0, n1 | EXT_FLAG, ext_index * EXT_BLOCKS + m, ebuf, 16 * m)
    return resolve_tie(ebuf, EXT_WORDS, ptab, row)


@njit(cache=True)
def noise_group(grp, n, key, n0, n1, base, rows, trials, p_first, ptab, invert, buf, ebuf, z):
    """Signed noise of the (up to 16) elements of group ``grp`` into ``z``."""
    first = grp * GROUP
    count = min(GROUP, n - first)
    for e in range(GROUP):
        z[e] = 0
    for r in range(rows):
        block = base + grp * rows + r
        block_at(key, n0, n1, block, buf, 0)
        for e in range(count):
            word = int64(buf[e])
            for h in range(2):
                k = 2 * r + h
                if k < trials:
                    c = (word >> (FIRST_BITS * h)) & 0xFFFF
                    if k == 0:
                        z[e] |= (c & 1) << 62  # the sign
                    else:
                        # the trial (written out here: a call per trial costs more than it)
                        p = p_first[k]
                        if c < p:
                            bit = 1
                        elif c > p:
                            bit = 0
                        else:
                            bit = _tie(k, ptab, key, n0, n1, (block * 16 + e) * 2 + h, ebuf)
                        bit ^= invert[k]
                        if k == 1:
                            z[e] |= bit << 61  # nonzero
                        else:
                            z[e] |= bit << (k - 2)  # bit k-2 of G
    for e in range(count):
        v = z[e]
        mag = ((v & ((int64(1) << 60) - 1)) + 1) * ((v >> 61) & 1)
        z[e] = -mag if (v >> 62) & 1 else mag


@njit(cache=True, inline="always")
def round_half_even(v):
    """``v`` (a float64 with ``|v| < 2**52``) rounded to the nearest integer, ties to even."""
    f = math.floor(v)
    r = int64(f)
    d = v - f
    if d > 0.5 or (d == 0.5 and (r & 1) == 1):
        r += 1
    return r


@njit(cache=True)
def add_int_group(grp, n, x, out, z):
    first = grp * GROUP
    for e in range(min(GROUP, n - first)):
        i = first + e
        if x.shape[0] > 0:
            out[i] = x[i] + z[e]
        else:
            out[i] = z[e]


@njit(cache=True)
def add_grid_group(grp, n, x, out, z, inv_g, g):
    first = grp * GROUP
    for e in range(min(GROUP, n - first)):
        i = first + e
        out[i] = float(round_half_even(x[i] * inv_g) + z[e]) * g


@njit(cache=True)
def words_group(b, n, key, n0, n1, base, buf, out):
    """Keystream block ``base + b`` into ``out[16 b : 16 b + 16]`` (clipped to ``n``)."""
    block_at(key, n0, n1, base + b, buf, 0)
    for w in range(min(16, n - 16 * b)):
        out[16 * b + w] = buf[w]


@njit(cache=True)
def bernoulli_group(b, n, key, n0, n1, base, p_first, ptab, invert, buf, ebuf, out):
    """Trials ``32 b .. 32 b + 31`` (row 0 of the tables): chunk ``j`` is half ``j % 2`` of
    word ``j // 2`` of keystream block ``base + b``."""
    block = base + b
    block_at(key, n0, n1, block, buf, 0)
    for j in range(min(2 * GROUP, n - 2 * GROUP * b)):
        w = j // 2
        h = j % 2
        c = (int64(buf[w]) >> (FIRST_BITS * h)) & 0xFFFF
        p = p_first[0]
        if c < p:
            bit = 1
        elif c > p:
            bit = 0
        else:
            bit = _tie(0, ptab, key, n0, n1, (block * 16 + w) * 2 + h, ebuf)
        out[2 * GROUP * b + j] = bit ^ invert[0]


# --- CPU kernels --------------------------------------------------------------------------------

@njit(cache=True)
def _noise_serial(x, out, grid, inv_g, g, key, n0, n1, base, rows, trials, p_first, ptab,
                  invert):
    """The reference form, one group after another (the CUDA kernel's arguments)."""
    n = out.shape[0]
    buf = np.empty(16, np.uint32)
    ebuf = np.empty(EXT_WORDS, np.uint32)
    z = np.empty(GROUP, np.int64)
    for grp in range((n + GROUP - 1) // GROUP):
        noise_group(grp, n, key, n0, n1, base, rows, trials, p_first, ptab, invert, buf, ebuf, z)
        if grid:
            add_grid_group(grp, n, x, out, z, inv_g, g)
        else:
            add_int_group(grp, n, x, out, z)


@njit(cache=True)
def _words_serial(out, key, n0, n1, base):
    n = out.shape[0]
    buf = np.empty(16, np.uint32)
    for b in range((n + 15) // 16):
        words_group(b, n, key, n0, n1, base, buf, out)


@njit(cache=True)
def _bernoulli_serial(out, key, n0, n1, base, p_first, ptab, invert):
    n = out.shape[0]
    buf = np.empty(16, np.uint32)
    ebuf = np.empty(EXT_WORDS, np.uint32)
    for b in range((n + 2 * GROUP - 1) // (2 * GROUP)):
        bernoulli_group(b, n, key, n0, n1, base, p_first, ptab, invert, buf, ebuf, out)


# --- CPU kernels on LANES blocks at a time (chacha), one task per range of units -------------
#
# A task covers ``per_task`` units (groups of 16 values, keystream blocks or trial blocks) and
# walks them ``_SUB_GROUPS`` groups at a time: the keystream of a step (its blocks are
# consecutive) is computed first, ``LANES`` blocks per vector pass, into a scratch
# (``word_at(ks, b, w)``: word ``w`` of the step's block ``b``), then read by the trials.
# The words and the trials are those of the scalar forms above, bit for bit.  The tasks run
# on the house's thread pool (:func:`.groupby.run_tasks`, GIL released).

_SUB_GROUPS = 64  # groups per keystream step: a scratch of 64 * rows blocks (tens of KiB)


@njit(cache=True, inline="always")
def _noise_group_lanes(bm, c0, trials, p_first, invert, z, tied, group):
    """Signed noise of the 16 elements of a group (as :func:`noise_group`, ties aside) into
    ``z``, its blocks at ``c0 .. c0 + rows - 1`` of the block-major scratch ``bm`` (word
    ``w`` of block ``b`` at ``16 b + w``).  ``group`` is 16, passed at run time: with a
    constant trip count LLVM unrolls the loops over the elements into scalar code, with a
    variable one it vectorizes them (about twice faster).  ``tied[e]`` is set where a trial
    of element ``e`` tied (probability ``2**-16`` each): the caller settles that element
    with :func:`_noise_value_ties` (the extension stream's code in this loop would slow
    every trial down several times)."""
    for e in range(group):
        z[e] = 0
        tied[e] = 0
    for k in range(1, trials):
        row = uint64(16 * (c0 + (k >> 1)))  # unsigned: contiguous loads, no wraparound
        shift = FIRST_BITS * (k & 1)
        p = p_first[k]
        at = k - 2 if k > 1 else 61  # bit k-2 of G, or the nonzero flag
        flip = invert[k] << at
        for e in range(group):
            c = (int64(bm[row + uint64(e)]) >> shift) & 0xFFFF
            tied[e] |= int64(c == p)
            z[e] |= (int64(c < p) << at) ^ flip
    for e in range(group):
        v = z[e]
        mag = ((v & ((int64(1) << 60) - 1)) + 1) * ((v >> 61) & 1)
        z[e] = -mag if int64(bm[16 * c0 + e]) & 1 else mag


@njit(cache=True)
def _noise_value_ties(bm, e, c0, grp, key, n0, n1, base, rows, trials, p_first, ptab, invert,
                      ebuf):
    """The signed noise of element ``e`` of group ``grp`` (as :func:`noise_group`) with its
    tied trials settled on the extension stream; ``bm`` as in :func:`_noise_group_lanes`."""
    sign = int64(bm[16 * c0 + e]) & 1
    nonzero = int64(0)
    g = int64(0)
    for k in range(1, trials):
        r = k >> 1
        h = k & 1
        c = (int64(bm[16 * (c0 + r) + e]) >> (FIRST_BITS * h)) & 0xFFFF
        p = p_first[k]
        if c < p:
            bit = int64(1)
        elif c > p:
            bit = int64(0)
        else:
            bit = int64(_tie(k, ptab, key, n0, n1, ((base + grp * rows + r) * 16 + e) * 2 + h,
                             ebuf))
        bit ^= invert[k]
        if k == 1:
            nonzero = bit
        else:
            g |= bit << (k - 2)
    mag = (g + 1) * nonzero
    return -mag if sign else mag


@njit(cache=True)
def _noise_task_start(t, per_task, n, rows):
    """Groups ``g0 .. g1 - 1`` of task ``t`` over ``n`` values, and the scratch of
    :func:`_noise_step`."""
    g0 = t * per_task
    g1 = min((n + GROUP - 1) // GROUP, g0 + per_task)
    return g0, g1, (np.empty(scratch_words(_SUB_GROUPS * rows), np.uint32),
                    np.empty(16 * _SUB_GROUPS * rows, np.uint32), np.empty(EXT_WORDS, np.uint32),
                    np.empty(GROUP, np.int64), np.empty(GROUP, np.int64))


@njit(cache=True)
def _noise_step(s0, s1, n, key, n0, n1, base, rows, trials, p_first, ptab, invert, group,
                scratch, out, at):
    """The signed noise of the values ``i`` of groups ``s0 .. s1 - 1`` (below ``n``) into
    ``out[i - at]``, as :func:`noise_group` gives it: the keystream of the step (consecutive
    blocks) ``LANES`` at a time, then the trials; ``scratch`` from :func:`_noise_task_start`,
    ``group`` as in :func:`_noise_group_lanes`."""
    ks, bm, ebuf, z, tied = scratch
    n_blocks = (s1 - s0) * rows
    fill_blocks(key, n0, n1, base + s0 * rows, n_blocks, ks)
    for b in range(n_blocks):  # block-major for the trials
        for w in range(16):
            bm[16 * b + w] = word_at(ks, b, w)
    for grp in range(s0, s1):
        c0 = (grp - s0) * rows
        _noise_group_lanes(bm, c0, trials, p_first, invert, z, tied, group)
        first = grp * GROUP
        for e in range(min(GROUP, n - first)):
            v = z[e]
            if tied[e]:
                v = _noise_value_ties(bm, e, c0, grp, key, n0, n1, base, rows, trials, p_first,
                                      ptab, invert, ebuf)
            out[first + e - at] = v


@njit(cache=True, nogil=True)
def _noise_task(t, x, out, grid, inv_g, g, key, n0, n1, base, rows, trials, p_first, ptab,
                invert, group, per_task):
    """Groups ``t * per_task ..`` of the fused kernel: ``x + Z`` into an int64 ``out``
    (``grid`` False; ``x`` empty: ``Z``), or ``(round(x / g) + Z) * g`` into a float64 one.
    ``group`` is :data:`GROUP` (see :func:`_noise_group_lanes`)."""
    n = out.shape[0]
    g0, g1, scratch = _noise_task_start(t, per_task, n, rows)
    z = np.empty(_SUB_GROUPS * GROUP, np.int64)
    for s0 in range(g0, g1, _SUB_GROUPS):
        s1 = min(g1, s0 + _SUB_GROUPS)
        _noise_step(s0, s1, n, key, n0, n1, base, rows, trials, p_first, ptab, invert, group,
                    scratch, z, s0 * GROUP)
        for i in range(s0 * GROUP, min(n, s1 * GROUP)):
            v = z[i - s0 * GROUP]
            if grid:
                out[i] = float(round_half_even(x[i] * inv_g) + v) * g
            elif x.shape[0] > 0:
                out[i] = x[i] + v
            else:
                out[i] = v


# the noise added to int64 counts, and on a grid to float64 values
ahead_of_time(_noise_task, [
    f"none(int64, {t}[::1], {t}[::1], boolean, float64, float64, uint32[::1], int64, int64, "
    "int64, int64, int64, int64[::1], uint32[:, ::1], int64[::1], int64, int64)"
    for t in ("int64", "float64")])


@njit(cache=True, nogil=True)
def _words_task(t, out, key, n0, n1, base, per_task):
    """Keystream blocks ``t * per_task ..`` into ``out`` (16 words each, clipped to its
    length)."""
    n = out.shape[0]
    b0 = t * per_task
    b1 = min((n + 15) // 16, b0 + per_task)
    ks = np.empty(scratch_words(16 * LANES), np.uint32)
    for s0 in range(b0, b1, 16 * LANES):
        s1 = min(b1, s0 + 16 * LANES)
        fill_blocks(key, n0, n1, base + s0, s1 - s0, ks)
        for b in range(s0, s1):
            for w in range(min(16, n - 16 * b)):
                out[16 * b + w] = word_at(ks, b - s0, w)


ahead_of_time(_words_task, ["none(int64, uint32[::1], uint32[::1], int64, int64, int64, int64)"])


@njit(cache=True, nogil=True)
def _bernoulli_task(t, out, key, n0, n1, base, p_first, ptab, invert, per_task):
    """Trial blocks ``t * per_task ..`` (32 trials each, as :func:`bernoulli_group`); a block
    with a tied trial is redone by :func:`bernoulli_group` (the extension stream's code in
    the loop would slow every trial down)."""
    n = out.shape[0]
    b0 = t * per_task
    b1 = min((n + 2 * GROUP - 1) // (2 * GROUP), b0 + per_task)
    ks = np.empty(scratch_words(16 * LANES), np.uint32)
    buf = np.empty(16, np.uint32)
    ebuf = np.empty(EXT_WORDS, np.uint32)
    p = p_first[0]
    flip = invert[0]
    for s0 in range(b0, b1, 16 * LANES):
        s1 = min(b1, s0 + 16 * LANES)
        fill_blocks(key, n0, n1, base + s0, s1 - s0, ks)
        for b in range(s0, s1):
            for w in range(16):
                buf[w] = word_at(ks, b - s0, w)
            tied = 0
            for j in range(min(2 * GROUP, n - 2 * GROUP * b)):
                c = (int64(buf[j >> 1]) >> (FIRST_BITS * (j & 1))) & 0xFFFF
                tied |= c == p
                out[2 * GROUP * b + j] = int64(c < p) ^ flip
            if tied:
                bernoulli_group(b, n, key, n0, n1, base, p_first, ptab, invert, buf, ebuf, out)


ahead_of_time(_bernoulli_task, ["none(int64, uint8[::1], uint32[::1], int64, int64, int64, "
                                "int64[::1], uint32[:, ::1], int64[::1], int64)"])


def _noise_int_lanes(x, out, key, n0, n1, base, rows, trials, p_first, ptab, invert):
    _run_lanes(_noise_task, -(-out.shape[0] // GROUP), _TASK_UNITS, x, out, False, 0.0, 0.0, key,
               n0, n1, base, rows, trials, p_first, ptab, invert, GROUP)


def _noise_grid_lanes(x, out, inv_g, g, key, n0, n1, base, rows, trials, p_first, ptab, invert):
    _run_lanes(_noise_task, -(-out.shape[0] // GROUP), _TASK_UNITS, x, out, True, inv_g, g, key,
               n0, n1, base, rows, trials, p_first, ptab, invert, GROUP)


def _words_lanes(out, key, n0, n1, base):
    _run_lanes(_words_task, keystream_blocks(out.shape[0]), _TASK_UNITS, out, key, n0, n1, base)


def _bernoulli_lanes(out, key, n0, n1, base, p_first, ptab, invert):
    _run_lanes(_bernoulli_task, bernoulli_blocks(out.shape[0]), _TASK_UNITS, out, key, n0, n1,
               base, p_first, ptab, invert)


def _run_lanes(kernel, units: int, per_task: int, *args) -> None:
    """``kernel(t, *args, per_task)`` for the tasks covering ``units`` units: on the calling
    thread below ``_PARALLEL_GROUPS`` units, else on the thread pool."""
    n_tasks = -(-units // per_task)
    if units < _PARALLEL_GROUPS:
        for t in range(n_tasks):
            kernel(t, *args, per_task)
    else:
        run_tasks(kernel, n_tasks, *args, per_task)


# --- CUDA kernels -----------------------------------------------------------------------------
#
# The same Python source as the device functions above and ChaCha20's of :mod:`.chacha`,
# compiled again with ``cuda.jit(device=True)``: each function's code object is re-bound to a
# namespace in which the names of the other device functions refer to their CUDA forms, and
# the rounds' 32-bit operations to :data:`.chacha.PORTABLE` (under Numba's simulator these
# run as Python, on the simulator's arrays).  The kernels below are compiled in that namespace.

_DEVICE_FUNCTIONS = ("first_compare", "resolve_tie", "_tie", "noise_group", "round_half_even",
                     "add_int_group", "add_grid_group", "words_group", "bernoulli_group")
#: ChaCha20's, from :mod:`.chacha`
_CHACHA_FUNCTIONS = ("_quarter", "_double_round", "_rounds", "chacha20_block", "block_into",
                     "block_at")


def _rebind(function, namespace):
    return types.FunctionType(function.__code__, namespace, function.__name__,
                              function.__defaults__, function.__closure__)


def _cuda_namespace() -> dict:
    namespace = {**vars(chacha), **globals()}
    for name, function in chacha.PORTABLE.items():
        namespace[name] = cuda.jit(device=True)(function)
    for name in _CHACHA_FUNCTIONS + _DEVICE_FUNCTIONS:
        namespace[name] = cuda.jit(device=True)(_rebind(namespace[name].py_func, namespace))
    return namespace


_CUDA = _cuda_namespace()


def _cuda_kernel(function):
    """``@cuda.jit`` on ``function`` compiled in the CUDA namespace."""
    return cuda.jit(_rebind(function, _CUDA))


@_cuda_kernel
def _noise_cuda(x, out, grid, inv_g, g, key, n0, n1, base, rows, trials, p_first, ptab, invert):
    """A thread per group of ``GROUP`` values: their noise, added to ``x`` as integers
    (``grid`` 0: int64 ``x``/``out``, ``x`` empty for the noise alone) or on the grid ``g``
    (``grid`` 1: float64; :func:`add_grid_group`)."""
    grp = cuda.grid(1)
    n = out.shape[0]
    if grp < (n + GROUP - 1) // GROUP:
        buf = cuda.local.array(16, uint32)
        ebuf = cuda.local.array(EXT_WORDS, uint32)
        z = cuda.local.array(GROUP, int64)
        noise_group(grp, n, key, n0, n1, base, rows, trials, p_first, ptab, invert, buf, ebuf, z)
        if grid:
            add_grid_group(grp, n, x, out, z, inv_g, g)
        else:
            add_int_group(grp, n, x, out, z)


@_cuda_kernel
def _words_cuda(out, key, n0, n1, base):
    b = cuda.grid(1)
    n = out.shape[0]
    if b < (n + 15) // 16:
        buf = cuda.local.array(16, uint32)
        words_group(b, n, key, n0, n1, base, buf, out)


@_cuda_kernel
def _bernoulli_cuda(out, key, n0, n1, base, p_first, ptab, invert):
    b = cuda.grid(1)
    n = out.shape[0]
    if b < (n + 2 * GROUP - 1) // (2 * GROUP):
        buf = cuda.local.array(16, uint32)
        ebuf = cuda.local.array(EXT_WORDS, uint32)
        bernoulli_group(b, n, key, n0, n1, base, p_first, ptab, invert, buf, ebuf, out)


# --- host side: tables, block counts, dispatch ---------------------------------------------

def noise_rows(trials: int) -> int:
    """Keystream block rows per group for ``trials`` trials (two per keystream word)."""
    return (trials + 1) // 2


def noise_blocks(n: int, trials: int) -> int:
    """Keystream blocks one noise call over ``n`` elements uses."""
    return -(-n // GROUP) * noise_rows(trials)


def keystream_blocks(n_words: int) -> int:
    return -(-n_words // 16)


def bernoulli_blocks(n: int) -> int:
    return -(-n // (2 * GROUP))


_sim_launches: dict[str, int] = {}


def _form(backend, n: int, kernel: str) -> str:
    """``"cpu"``, ``"cuda"`` or ``"sim"`` (the CUDA form under Numba's simulator)."""
    if backend.kernels == "cpu":
        return "cpu"
    if backend.kernels == "cuda":
        return "cuda"
    # the simulator tier: the first few small inputs of each kernel run the CUDA form itself
    # (a check of the CUDA form; the simulator runs ChaCha20 in Python, slowly), the others
    # the CPU twin, which gives the same bits (Numba's config sets its attributes at run time)
    simulator = config.ENABLE_CUDASIM  # type: ignore[attr-defined]
    if simulator and n <= _SIM_MAX and _sim_launches.get(kernel, 0) < _SIM_LAUNCHES:
        _sim_launches[kernel] = _sim_launches.get(kernel, 0) + 1
        return "sim"
    return "cpu"


def _launch(kernel, units: int, *args):
    threads = min(128, units)
    if units:
        launch(kernel, -(-units // threads), threads, *args)


def _host_key(key):
    return np.ascontiguousarray(key, dtype=np.uint32)


def keystream(backend, key, n0: int, n1: int, base: int, n_words: int):
    """``n_words`` keystream words (``uint32``, on the backend) from block ``base`` on."""
    form = _form(backend, n_words, "keystream")
    if form == "cuda":
        out = backend.xp.empty(n_words, dtype=backend.xp.uint32)
        _launch(_words_cuda, keystream_blocks(n_words), out, backend.asarray(key), n0, n1, base)
        return out
    out = np.empty(n_words, dtype=np.uint32)
    if form == "sim":
        _launch(_words_cuda, keystream_blocks(n_words), out, _host_key(key), n0, n1, base)
    else:
        _words_lanes(out, _host_key(key), n0, n1, base)
    return backend.asarray(out)


def bernoulli(backend, key, n0: int, n1: int, base: int, n: int, tables):
    """``n`` exact Bernoulli trials (row 0 of ``tables``): a ``uint8`` 0/1 array on the
    backend."""
    form = _form(backend, n, "bernoulli")
    if form == "cuda":
        xp = backend.xp
        out = xp.empty(n, dtype=xp.uint8)
        _launch(_bernoulli_cuda, bernoulli_blocks(n), out, backend.asarray(key), n0, n1, base,
                *(backend.asarray(t) for t in tables))
        return out
    out = np.empty(n, dtype=np.uint8)
    if form == "sim":
        _launch(_bernoulli_cuda, bernoulli_blocks(n), out, _host_key(key), n0, n1, base, *tables)
    else:
        _bernoulli_lanes(out, _host_key(key), n0, n1, base, *tables)
    return backend.asarray(out)


def noise_int(backend, x, n: int, key, n0: int, n1: int, base: int, tables):
    """``x + Z`` (``int64``, on the backend) for ``n`` values; ``x`` an int64 backend array of
    length ``n``, or None for the noise alone.  ``tables`` are the noise trials' tables
    (row 0 unused: the sign)."""
    trials = tables[0].shape[0]
    rows = noise_rows(trials)
    form = _form(backend, n, "noise_int")
    if form == "cuda":
        xp = backend.xp
        out = xp.empty(n, dtype=xp.int64)
        xin = x if x is not None else xp.empty(0, dtype=xp.int64)
        _launch(_noise_cuda, -(-n // GROUP), xin, out, 0, 0.0, 0.0, backend.asarray(key), n0,
                n1, base, rows, trials, *(backend.asarray(t) for t in tables))
        return out
    xin = backend.to_host(x) if x is not None else np.empty(0, dtype=np.int64)
    xin = np.ascontiguousarray(xin, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    args = (xin, out, _host_key(key), n0, n1, base, rows, trials, *tables)
    if form == "sim":
        _launch(_noise_cuda, -(-n // GROUP), *args[:2], 0, 0.0, 0.0, *args[2:])
    else:
        _noise_int_lanes(*args)
    return backend.asarray(out)


def noise_grid(backend, x, key, n0: int, n1: int, base: int, tables, granularity: float):
    """``(round(x / g) + Z) * g`` (``float64``, on the backend) for a float64 backend array
    ``x`` (1-D) whose values satisfy ``|x / g| < 2**52``; ``g`` a power of two."""
    trials = tables[0].shape[0]
    rows = noise_rows(trials)
    n = x.shape[0]
    inv_g = 1.0 / granularity
    form = _form(backend, n, "noise_grid")
    if form == "cuda":
        out = backend.xp.empty(n, dtype=backend.xp.float64)
        _launch(_noise_cuda, -(-n // GROUP), x, out, 1, inv_g, granularity,
                backend.asarray(key), n0, n1, base, rows, trials,
                *(backend.asarray(t) for t in tables))
        return out
    xin = np.ascontiguousarray(backend.to_host(x), dtype=np.float64)
    out = np.empty(n, dtype=np.float64)
    args = (xin, out, inv_g, granularity, _host_key(key), n0, n1, base, rows, trials, *tables)
    if form == "sim":
        _launch(_noise_cuda, -(-n // GROUP), *args[:2], 1, *args[2:])
    else:
        _noise_grid_lanes(*args)
    return backend.asarray(out)


def noise_int_forms(x, key, n0, n1, base, tables, form: str):
    """Test hook: the noise kernel in one named form (``"serial"``, ``"lanes"`` (also
    ``"parallel"``) or ``"cuda"``, the last on host arrays under the simulator) on host
    arrays."""
    trials = tables[0].shape[0]
    out = np.empty(x.shape[0], dtype=np.int64)
    x = np.ascontiguousarray(x, dtype=np.int64)
    rest = (_host_key(key), n0, n1, base, noise_rows(trials), trials, *tables)
    if form in ("lanes", "parallel"):
        _noise_int_lanes(x, out, *rest)
    else:
        _reference_form(form, x, out, 0, 0.0, 0.0, *rest)
    return out


def noise_grid_forms(x, key, n0, n1, base, tables, granularity, form: str):
    """Test hook: :func:`noise_grid` in one named form on host arrays."""
    trials = tables[0].shape[0]
    out = np.empty(x.shape[0], dtype=np.float64)
    x = np.ascontiguousarray(x, dtype=np.float64)
    grid = (1.0 / granularity, granularity)
    rest = (_host_key(key), n0, n1, base, noise_rows(trials), trials, *tables)
    if form in ("lanes", "parallel"):
        _noise_grid_lanes(x, out, *grid, *rest)
    else:
        _reference_form(form, x, out, 1, *grid, *rest)
    return out


def _reference_form(form: str, *args) -> None:
    """The serial reference, or the CUDA kernel under the simulator, on the CUDA kernel's
    arguments (``x, out, grid, inv_g, g, key, ...``)."""
    if form == "serial":
        _noise_serial(*args)
    else:
        _launch(_noise_cuda, -(-args[1].shape[0] // GROUP), *args)


def keystream_forms(key, n0, n1, base, n_words, form: str):
    """Test hook: keystream words in one named form on host arrays."""
    out = np.empty(n_words, dtype=np.uint32)
    if form == "serial":
        _words_serial(out, _host_key(key), n0, n1, base)
    elif form in ("lanes", "parallel"):
        _words_lanes(out, _host_key(key), n0, n1, base)
    else:
        _launch(_words_cuda, keystream_blocks(n_words), out, _host_key(key), n0, n1, base)
    return out


def bernoulli_forms(key, n0, n1, base, n, tables, form: str):
    """Test hook: Bernoulli trials in one named form on host arrays."""
    out = np.empty(n, dtype=np.uint8)
    args = (out, _host_key(key), n0, n1, base, *tables)
    if form == "serial":
        _bernoulli_serial(*args)
    elif form in ("lanes", "parallel"):
        _bernoulli_lanes(*args)
    else:
        _launch(_bernoulli_cuda, bernoulli_blocks(n), *args)
    return out
