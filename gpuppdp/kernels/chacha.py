"""ChaCha20, its rounds written once: one block at a time, and :data:`LANES` blocks at a time
in SIMD registers on the CPU.

RFC 8439's block function, the state ``constants | key (8 words) | w12 w13 w14 w15``, with
words 12-13 a 64-bit block counter and 14-15 the nonce (the keystream of
:mod:`gpuppdp.kernels.dp_noise`).  :func:`_quarter` and :func:`_rounds` are written on the
names ``_add``, ``_xor`` and ``_rotl`` (32-bit operations): here LLVM intrinsics; the CUDA
forms of :mod:`.dp_noise` compile the same source again with the names bound to
:data:`PORTABLE` (plain arithmetic, which Numba's simulator can also run as Python).

:func:`chacha20_block` (:func:`block_into`, :func:`block_at`) computes one block: the CPU
reference, the extension stream of the tied trials, and one block per CUDA thread.
:func:`fill_blocks` computes ``LANES`` consecutive block counters at once: the loop over the
lanes runs the 20 rounds written out in full (no loop inside it), on 32-bit words, so LLVM's
loop vectorizer turns each of the 16 state words into one vector register of ``LANES``
lanes (``vpaddd``, ``vpxord``, ``vprold`` on AVX-512, two-instruction rotations on AVX2).
The 32-bit operations are LLVM intrinsics (:func:`_add`, :func:`_xor`, :func:`_rotl`):
Numba widens ``uint32`` arithmetic to 64 bits, which LLVM does not narrow back inside the
rotations, and the widened code runs half as many lanes per instruction.

The lanes' output is word-major per pass of ``LANES`` blocks: word ``w`` of the pass's block
``l`` at ``16 * LANES * pass + LANES * w + l`` of a 1-D ``uint32`` scratch (the 16 stores of
a lane loop are vector stores), read back with :func:`word_at`.  Both forms give the same
words (tests/test_dp_chacha.py compares them with RFC 8439's test vectors and with each other
on random keys, nonces, counters and lengths, across the 2**32 carry of the block counter).

References
----------
.. [RFC8439] Y. Nir and A. Langley, "ChaCha20 and Poly1305 for IETF Protocols", RFC 8439,
   2018, sections 2.1-2.3.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types, uint32, uint64
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["LANES", "PORTABLE", "chacha20_block", "block_into", "block_at", "fill_blocks",
           "blocks_lanes", "word_at", "scratch_words"]

LANES = 8  # blocks per vector pass: 8 x 32-bit lanes, one AVX2 register (LLVM's choice on AVX-512)
MASK32 = 0xFFFFFFFF
_C0, _C1, _C2, _C3 = 0x61707865, 0x3320646E, 0x79622D32, 0x6B206574  # "expand 32-byte k"


@intrinsic
def _add(typingctx, a, b):
    """``(a + b) mod 2**32`` on ``uint32`` (an LLVM ``add i32``)."""
    def codegen(context, builder, signature, args):
        return builder.add(args[0], args[1])
    return uint32(uint32, uint32), codegen


@intrinsic
def _xor(typingctx, a, b):
    """``a ^ b`` on ``uint32`` (an LLVM ``xor i32``)."""
    def codegen(context, builder, signature, args):
        return builder.xor(args[0], args[1])
    return uint32(uint32, uint32), codegen


@intrinsic
def _rotl(typingctx, v, c):
    """``v`` rotated left by the literal ``c`` (LLVM's ``fshl.i32``: one ``vprold``)."""
    if not isinstance(c, types.IntegerLiteral):
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i32] * 3),
                                            "llvm.fshl.i32")
        amount = ir.Constant(i32, signature.args[1].literal_value)
        return builder.call(fn, [args[0], args[0], amount])
    return uint32(uint32, c), codegen


@njit(cache=True, inline="always")
def _quarter(a, b, c, d):
    """RFC 8439, section 2.1, on ``uint32``."""
    a = _add(a, b)
    d = _rotl(_xor(d, a), 16)
    c = _add(c, d)
    b = _rotl(_xor(b, c), 12)
    a = _add(a, b)
    d = _rotl(_xor(d, a), 8)
    c = _add(c, d)
    b = _rotl(_xor(b, c), 7)
    return a, b, c, d


@njit(cache=True, inline="always")
def _double_round(s):
    """A column round and a diagonal round on the state tuple ``s`` (16 ``uint32``)."""
    x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15 = s
    x0, x4, x8, x12 = _quarter(x0, x4, x8, x12)
    x1, x5, x9, x13 = _quarter(x1, x5, x9, x13)
    x2, x6, x10, x14 = _quarter(x2, x6, x10, x14)
    x3, x7, x11, x15 = _quarter(x3, x7, x11, x15)
    x0, x5, x10, x15 = _quarter(x0, x5, x10, x15)
    x1, x6, x11, x12 = _quarter(x1, x6, x11, x12)
    x2, x7, x8, x13 = _quarter(x2, x7, x8, x13)
    x3, x4, x9, x14 = _quarter(x3, x4, x9, x14)
    return (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15)


@njit(cache=True, inline="always")
def _rounds(s):
    """The 20 rounds, ten double rounds written out (straight-line code), on ``s``."""
    s = _double_round(s)
    s = _double_round(s)
    s = _double_round(s)
    s = _double_round(s)
    s = _double_round(s)
    s = _double_round(s)
    s = _double_round(s)
    s = _double_round(s)
    s = _double_round(s)
    return _double_round(s)


def _add32(a, b):
    """``(a + b) mod 2**32`` without overflowing (also as plain Python under the simulator)."""
    return uint32(uint64(a) + uint64(b))


def _xor32(a, b):
    return a ^ b


def _rotl32(v, c):
    w = uint64(v)
    return uint32((w << uint64(c)) | (w >> uint64(32 - c)))


#: the portable forms of the 32-bit operations, by the names the rounds call them
PORTABLE = {"_add": _add32, "_xor": _xor32, "_rotl": _rotl32}


@njit(cache=True)
def chacha20_block(key, w12, w13, w14, w15, out):
    """The ChaCha20 block function (RFC 8439, section 2.3): 16 keystream words into ``out``.

    ``key`` holds 8 ``uint32`` words (the 256-bit key read little-endian); ``w12 .. w15`` are
    the last four state words (counter and nonce); ``out`` is a ``uint32`` array of 16.
    """
    block_into(key, w12, w13, w14, w15, out, 0)


@njit(cache=True)
def block_into(key, w12, w13, w14, w15, out, off):
    """:func:`chacha20_block` writing ``out[off : off + 16]``."""
    x = (uint32(_C0), uint32(_C1), uint32(_C2), uint32(_C3), uint32(key[0]), uint32(key[1]),
         uint32(key[2]), uint32(key[3]), uint32(key[4]), uint32(key[5]), uint32(key[6]),
         uint32(key[7]), uint32(w12), uint32(w13), uint32(w14), uint32(w15))
    s = _rounds(x)
    for w in range(16):
        out[off + w] = _add(s[w], x[w])


@njit(cache=True)
def block_at(key, n0, n1, index, out, off):
    """Keystream block number ``index`` (a 64-bit counter) of the stream with nonce (n0, n1)
    into ``out[off : off + 16]``."""
    block_into(key, index & MASK32, (index >> 32) & MASK32, n0, n1, out, off)


@njit(cache=True)
def blocks_lanes(key, n0, n1, first, ks, off):
    """Keystream blocks ``first .. first + LANES - 1`` (64-bit counters) of the stream with
    nonce ``(n0, n1)`` into ``ks[off : off + 16 * LANES]``, word-major (word ``w`` of block
    ``first + l`` at ``off + w * LANES + l``)."""
    k0, k1, k2, k3 = uint32(key[0]), uint32(key[1]), uint32(key[2]), uint32(key[3])
    k4, k5, k6, k7 = uint32(key[4]), uint32(key[5]), uint32(key[6]), uint32(key[7])
    c0, c1, c2, c3 = uint32(_C0), uint32(_C1), uint32(_C2), uint32(_C3)
    w14 = uint32(n0 & MASK32)
    w15 = uint32(n1 & MASK32)
    start = uint64(first)
    # a view: its indices below are provably >= 0 and distinct per word, which lets LLVM
    # vectorize the stores (an offset added to each index does not)
    v = ks[off:off + 16 * LANES]
    for lane in range(LANES):  # the vectorized loop: straight-line code inside
        index = start + uint64(lane)
        w12 = uint32(index & uint64(MASK32))
        w13 = uint32(index >> uint64(32))
        s = (c0, c1, c2, c3, k0, k1, k2, k3, k4, k5, k6, k7, w12, w13, w14, w15)
        s = _rounds(s)
        v[0 * LANES + lane] = _add(s[0], c0)
        v[1 * LANES + lane] = _add(s[1], c1)
        v[2 * LANES + lane] = _add(s[2], c2)
        v[3 * LANES + lane] = _add(s[3], c3)
        v[4 * LANES + lane] = _add(s[4], k0)
        v[5 * LANES + lane] = _add(s[5], k1)
        v[6 * LANES + lane] = _add(s[6], k2)
        v[7 * LANES + lane] = _add(s[7], k3)
        v[8 * LANES + lane] = _add(s[8], k4)
        v[9 * LANES + lane] = _add(s[9], k5)
        v[10 * LANES + lane] = _add(s[10], k6)
        v[11 * LANES + lane] = _add(s[11], k7)
        v[12 * LANES + lane] = _add(s[12], w12)
        v[13 * LANES + lane] = _add(s[13], w13)
        v[14 * LANES + lane] = _add(s[14], w14)
        v[15 * LANES + lane] = _add(s[15], w15)


@njit(cache=True)
def fill_blocks(key, n0, n1, first, n_blocks, ks):
    """Blocks ``first .. first + n_blocks - 1`` into ``ks`` (a 1-D ``uint32`` scratch of
    :func:`scratch_words` words; past ``n_blocks`` up to the next multiple of ``LANES`` it
    holds the next blocks): block ``first + b`` is read back with :func:`word_at`."""
    for c in range(0, n_blocks, LANES):
        blocks_lanes(key, n0, n1, first + c, ks, 16 * c)


@njit(cache=True, inline="always")
def word_at(ks, b, w):
    """Word ``w`` of block ``b`` (counted from :func:`fill_blocks`'s ``first``) of ``ks``."""
    return ks[(b // LANES) * (16 * LANES) + w * LANES + b % LANES]


@njit(cache=True)
def scratch_words(n_blocks):
    """Length of a :func:`fill_blocks` scratch for up to ``n_blocks`` blocks."""
    return 16 * ((max(n_blocks, 1) + LANES - 1) // LANES) * LANES
