"""Where the noise comes from: a ChaCha20 keystream keyed with 256 bits of OS entropy.

A differentially private release is only as private as its randomness is unpredictable.  A
:class:`RandomSource` is a cryptographically secure, counter-based generator: the ChaCha20
block function of RFC 8439 (:func:`gpuppdp.kernels.dp_noise.chacha20_block`) keyed with 256
bits from :func:`secrets.token_bytes`, block ``i`` of the keystream being the block function of
``(key, counter = i, nonce)``.  The same kernel source runs on the CPU (Numba ``@njit``) and on
the GPU (Numba ``@cuda.jit``): for one key, nonce and counter both produce the same bits, and
the noise kernels turn them into the same noise.  Predicting any part of the keystream without
the key means breaking ChaCha20; the key never leaves the process.

* **Fork safety.**  A forked child must not replay its parent's noise: every source that was
  not explicitly seeded draws a fresh key the first time it is used in a new process (a
  :func:`os.register_at_fork` hook plus a process-id check on every draw).  The same hook
  takes every source's lock before a fork and releases it after (in the child: a fresh
  lock), so a fork while another thread draws cannot leave the child's lock held forever.
* **Thread safety.**  Each draw reserves its range of keystream blocks under a lock, so two
  threads never use the same blocks.
* **No copies.**  :func:`copy.copy`, :func:`copy.deepcopy` and :mod:`pickle` of a source
  raise :class:`TypeError`: a copy would replay the same keystream.
* **Seeds**, for tests and experiments only: the key is derived from the seed (SHA-512), and a
  :class:`SeededNoiseWarning` says that anyone who knows the seed can subtract the noise.  A
  seeded source is deterministic, also across a fork.  The releases of
  :mod:`gpuppdp.dp.releases` refuse a seeded source unless it was created with
  ``insecure=True``, and record the seed in the release and in the ledger.
* **Timing.**  A Bernoulli trial reads one 32-bit word and, on a tie with the probability's
  word (probability ``2**-16`` per trial, whatever the data), three more keystream blocks
  (:mod:`gpuppdp.kernels.dp_noise`).  How long a draw takes therefore depends on the number
  of ties, a function of the random words and the public probabilities only -- never of the
  query values; the extra time is at most three block computations per tied trial, and the
  number of ties among ``n`` trials is Binomial(n, 2**-16) (expected ``n / 65536``).  The
  noise itself is not constant-time: treat the timing of a release like its output.

References
----------
.. [1] Y. Nir and A. Langley, "ChaCha20 and Poly1305 for IETF Protocols", RFC 8439, 2018.
.. [2] I. Mironov, "On significance of the least significant bits for differential
   privacy", ACM CCS 2012 (implementation details of the randomness matter).
.. [3] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014, section 3.3 (the
   analysis assumes truly random noise).
"""

from __future__ import annotations

import hashlib
import numbers
import os
import secrets
import sys
import threading
import warnings
import weakref

import numpy as np

from ..backend import Array, Backend, get_backend
from ..errors import InputError
from ..kernels import dp_noise

__all__ = ["RandomSource", "SeededNoiseWarning", "default_source"]

_KEY_BYTES = 32
_NONCE_BYTES = 8

# bumped in every forked child: a source keyed before the fork re-keys on its next draw
_fork_generation = 0
# every live source, so that a fork can hold their locks (no lock is copied while held)
_SOURCES: "weakref.WeakSet[RandomSource]" = weakref.WeakSet()
_REGISTRY_LOCK = threading.Lock()
_HELD: list = []


def _compiler_lock():
    """Numba's compiler lock, if Numba is loaded: a thread compiling a noise kernel at the
    fork would leave it held in the child, whose first draw would then wait forever."""
    numba_lock = sys.modules.get("numba.core.compiler_lock")
    return getattr(numba_lock, "global_compiler_lock", None)


def _before_fork() -> None:
    """Take Numba's compiler lock, the registry's and every source's lock: no draw and no
    kernel compilation is half-done at the fork."""
    compiler = _compiler_lock()
    if compiler is not None:
        compiler.acquire()
    _REGISTRY_LOCK.acquire()
    sources = list(_SOURCES)
    for source in sources:
        source._lock.acquire()
    _HELD[:] = [compiler, sources]


def _release_held() -> list:
    if not _HELD:  # pragma: no cover - a fork hook without its "before"
        return []
    compiler, sources = _HELD
    _HELD[:] = []
    if compiler is not None:
        compiler.release()
    return sources


def _after_fork_in_parent() -> None:
    sources = _release_held()
    for source in reversed(sources):
        source._lock.release()
    _REGISTRY_LOCK.release()


def _after_fork_in_child() -> None:  # pragma: no cover - runs in forked children
    global _fork_generation, _REGISTRY_LOCK
    _fork_generation += 1
    sources = _release_held()  # the compiler lock is re-entrant: the child owns it, releases
    for source in sources:
        source._lock = threading.Lock()  # the child's own, free
    _REGISTRY_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


class SeededNoiseWarning(UserWarning):
    """Noise drawn from a caller-supplied seed is reproducible, hence not private."""


class NoCopies:
    """An object a copy of which would break a guarantee (the same noise drawn twice, the same
    budget spent twice): ``copy``, ``deepcopy`` and ``pickle`` refuse with ``TypeError`` and
    the class's :attr:`_no_copy_reason`."""

    _no_copy_reason = ""

    def __copy__(self):
        raise TypeError(f"a {type(self).__name__} cannot be copied: {self._no_copy_reason}")

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce_ex__(self, protocol):
        raise TypeError(f"a {type(self).__name__} cannot be pickled: {self._no_copy_reason}")


class RandomSource(NoCopies):
    """A cryptographically secure source of random bits on one backend.

    Parameters
    ----------
    backend : {"auto", "cpu", "gpu"} or Backend, default "auto"
        Where the random numbers are drawn and the noise is computed.
    seed : int, optional
        Only for reproducible experiments and tests: the key is derived from ``seed``, which
        voids the privacy guarantee.  Emits a :class:`SeededNoiseWarning`.  Without it the key
        is 256 bits from :func:`secrets.token_bytes`.
    insecure : bool, default False
        Required (True) for a seeded source to be accepted by a release
        (:func:`~gpuppdp.dp.dp_histogram` and the others refuse a seeded source without it):
        the caller states that the release is not private.

    Attributes
    ----------
    backend : Backend
    seeded : bool
        True when the noise is reproducible from a seed (and therefore not private).
    seed : int or None
        The seed (None for an OS-keyed source).
    insecure : bool
        True when a seeded source may be used for a release.
    generator : str
        ``"chacha20"``.
    streams : int
        1 (one keystream; kept for compatibility with the former XOR-of-streams design).

    Notes
    -----
    The keystream is addressed by a 64-bit block counter (words 12-13 of the ChaCha20 state)
    and a 64-bit nonce drawn with the key (words 14-15; bit 31 of word 15 is reserved for
    the extension stream of :mod:`gpuppdp.kernels.dp_noise`).  Each draw reserves fresh
    blocks; a key is used for at most ``2**54`` blocks and then replaced.

    References
    ----------
    .. [1] RFC 8439, section 2.3 (the block function).
    .. [2] Mironov, ACM CCS 2012.

    Examples
    --------
    >>> src = RandomSource("cpu")           # private: keyed from the OS
    >>> src.random_bits(3).shape
    (3,)
    """

    _no_copy_reason = ("a copy would replay the same keystream (the same noise); create a new "
                       "RandomSource (in the other process)")

    generator = "chacha20"
    streams = 1

    def __init__(self, backend: str | Backend = "auto", *, seed: int | None = None,
                 insecure: bool = False):
        self.backend = get_backend(backend)
        self.seeded = seed is not None
        if not isinstance(insecure, bool):
            raise InputError(f"insecure must be True or False, got {insecure!r}")
        self.insecure = insecure and self.seeded
        if seed is not None:
            if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
                raise InputError(f"seed must be a non-negative integer, got {seed!r}")
            warnings.warn(
                "noise drawn from an explicit seed is reproducible by anyone who knows the "
                "seed, so the release is NOT differentially private; use seeds only for "
                "tests and experiments", SeededNoiseWarning, stacklevel=2)
        self._seed = None if seed is None else int(seed)
        self._lock = threading.Lock()
        self._epoch = 0
        self._rekey()
        with _REGISTRY_LOCK:
            _SOURCES.add(self)

    @property
    def seed(self) -> int | None:
        """The seed of a seeded source (None when keyed from the OS)."""
        return self._seed


    # -- keys and counters ------------------------------------------------------------------
    def _rekey(self) -> None:
        if self._seed is not None:  # (seeded)
            material = hashlib.sha512(
                b"gpuppdp.dp.RandomSource seed v1\0%d\0%d" % (self._seed, self._epoch)).digest()
        else:
            material = secrets.token_bytes(_KEY_BYTES + _NONCE_BYTES)
        self._key = np.frombuffer(material[:_KEY_BYTES], dtype="<u4").astype(np.uint32)
        nonce = int.from_bytes(material[_KEY_BYTES:_KEY_BYTES + _NONCE_BYTES], "little")
        self._nonce = (nonce & 0xFFFFFFFF, (nonce >> 32) & 0x7FFFFFFF)  # bit 31: extension
        self._next_block = 0
        self._pid = os.getpid()
        self._generation = _fork_generation

    def _reserve(self, blocks: int):
        """Reserve ``blocks`` keystream blocks: ``(key, n0, n1, first block)``."""
        limit = dp_noise.MAX_BLOCK
        if blocks > limit:
            raise InputError(f"a single draw of {blocks} keystream blocks is too large")
        with self._lock:
            if self._pid != os.getpid() or self._generation != _fork_generation:
                if self.seeded:  # deterministic by request: the child continues the stream
                    self._pid, self._generation = os.getpid(), _fork_generation
                else:
                    self._rekey()  # a forked child never reuses its parent's key
            if self._next_block + blocks > limit:
                self._epoch += 1
                self._rekey()
            base = self._next_block
            self._next_block += blocks
            return self._key, self._nonce[0], self._nonce[1], base

    @property
    def key_fingerprint(self) -> str:
        """A short SHA-256 fingerprint of the current key (to tell keys apart in tests; the
        key itself is never exposed)."""
        with self._lock:
            return hashlib.sha256(self._key.tobytes()).hexdigest()[:16]

    # -- draws ----------------------------------------------------------------------------------
    def random_words(self, n: int):
        """``n`` keystream words: a ``uint32`` array on :attr:`backend`."""
        n = int(n)
        key, n0, n1, base = self._reserve(dp_noise.keystream_blocks(n))
        return dp_noise.keystream(self.backend, key, n0, n1, base, n)

    def random_bits(self, shape) -> Array:
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
        n = int(np.prod(shape, dtype=np.int64))
        words = self.random_words(2 * n).astype(xp.int64)
        bits = (words[0::2] << 31) | (words[1::2] >> 1)
        return bits.reshape(shape)

    def bernoulli(self, p: float, shape) -> Array:
        """A boolean array of ``shape``, each value True with probability ``p`` exactly.

        ``p`` (a float in ``[0, 1]``) is compared with a uniform read from the keystream as far
        as needed (:mod:`gpuppdp.kernels.dp_noise`): the probability is the float ``p`` itself,
        without rounding, however small.
        """
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise InputError(f"p must be in [0, 1], got {p!r}")
        return self.bernoulli_table(dp_noise.bernoulli_tables([float(p)]), shape)

    def bernoulli_table(self, tables, shape) -> Array:
        """Trials of row 0 of prepared :func:`~gpuppdp.kernels.dp_noise.bernoulli_tables`."""
        shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
        n = int(np.prod(shape, dtype=np.int64))
        key, n0, n1, base = self._reserve(dp_noise.bernoulli_blocks(n))
        out = dp_noise.bernoulli(self.backend, key, n0, n1, base, n, tables)
        return out.astype(self.backend.xp.bool_).reshape(shape)

    def discrete_noise(self, values, n: int, tables):
        """``values + Z`` (``int64``, 1-D, on :attr:`backend`) with ``Z`` drawn by the fused
        noise kernel from the sampler ``tables``; ``values`` None for the noise alone."""
        key, n0, n1, base = self._reserve(dp_noise.noise_blocks(n, tables[0].shape[0]))
        return dp_noise.noise_int(self.backend, values, n, key, n0, n1, base, tables)

    def grid_noise(self, values, tables, granularity: float):
        """``(round(values / g) + Z) * g`` (``float64``, 1-D, on :attr:`backend`)."""
        blocks = dp_noise.noise_blocks(values.shape[0], tables[0].shape[0])
        key, n0, n1, base = self._reserve(blocks)
        return dp_noise.noise_grid(self.backend, values, key, n0, n1, base, tables, granularity)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        kind = "seeded, NOT private" if self.seeded else "OS entropy"
        return f"RandomSource({self.backend.name!r}, chacha20, {kind})"


_DEFAULT: dict[str, tuple[int, RandomSource]] = {}


def default_source(backend: str | Backend = "auto") -> RandomSource:
    """The shared OS-keyed :class:`RandomSource` of ``backend`` (created on first use).

    Re-created after a ``fork`` (each source also re-keys itself in a new process).
    """
    backend = get_backend(backend)
    pid, source = _DEFAULT.get(backend.name, (None, None))
    if source is None or pid != os.getpid():
        source = RandomSource(backend)
        _DEFAULT[backend.name] = (os.getpid(), source)
    return source
