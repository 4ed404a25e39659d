"""Array backends: NumPy on the CPU, CuPy on the GPU, one code path written against ``xp``.

Array code in gpuppdp is written once against the namespace a :class:`Backend` hands out
(``backend.xp``), in the spirit of scikit-learn's array-API dispatch
(``sklearn/utils/_array_api.py``).  Data moves between host and device only through
:meth:`Backend.asarray` and :meth:`Backend.to_host`, never implicitly: CuPy refuses implicit
conversion, and the test suite runs the same code on a strict stand-in that refuses it too.

CuPy is imported lazily, only when asked for (``"gpu"``) or probed (``"auto"``).  The probe
survives "CuPy installed, no driver" and "no NVRTC" by compiling and running a tiny kernel;
``"auto"`` falls back to the CPU with one log line, ``"gpu"`` raises :class:`BackendError`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Backend", "BackendError", "get_backend", "cpu_backend"]

log = logging.getLogger("gpuppdp")

BACKEND_CHOICES = ("auto", "cpu", "gpu")


class BackendError(RuntimeError):
    """The requested compute backend cannot be used."""


@dataclass(frozen=True)
class Backend:
    """An array namespace plus the two explicit host/device transfers.

    Parameters
    ----------
    name : str
        ``"numpy"`` or ``"cupy"`` (or the name of a test stand-in).
    xp : module
        The array namespace (``numpy``, ``cupy`` or a stand-in with CuPy's interface).
    kernels : str
        Which kernel form :mod:`gpuppdp.kernels` dispatches to: ``"cpu"`` (Numba ``@njit``),
        ``"cuda"`` (Numba ``@cuda.jit`` on device arrays) or ``"cudasim"`` (the CUDA kernels
        under Numba's simulator, fed with explicitly transferred host arrays).
    """

    name: str
    xp: Any
    kernels: str
    _to_host: Callable[[Any], np.ndarray]
    _to_device: Callable[[Any], Any]

    @property
    def is_gpu(self) -> bool:
        return self.kernels != "cpu"

    def asarray(self, a, dtype=None):
        """Host (or device) data -> array of this backend."""
        if isinstance(a, self.xp.ndarray) or (
                not isinstance(a, np.ndarray) and hasattr(a, "__cuda_array_interface__")):
            return self.xp.asarray(a, dtype=dtype)  # already on this device: no transfer
        a = np.asarray(a, dtype=dtype)
        return self._to_device(a)

    def to_host(self, a) -> np.ndarray:
        """Array of this backend -> NumPy array (an explicit device-to-host copy)."""
        return self._to_host(a)

    def scalar(self, a):
        """A 0-d / size-1 device value as a Python number."""
        return self.to_host(a).reshape(-1)[0].item()

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Backend({self.name!r}, kernels={self.kernels!r})"


def cpu_backend() -> Backend:
    """The NumPy backend (always available)."""
    return Backend("numpy", np, "cpu", np.asarray, lambda a: a)


def _probe_cupy():
    """Import CuPy and run a tiny compiled kernel; return the module or raise with the reason."""
    try:
        import cupy  # noqa: PLC0415 - lazy on purpose
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        raise BackendError(f"CuPy is not importable ({type(exc).__name__}: {exc})") from exc
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise BackendError("CuPy found no CUDA device")
        probe = cupy.arange(8, dtype=cupy.int32)
        value = int((probe * 3 + 1).sum().get())  # elementwise + reduction: exercises NVRTC
    except BackendError:
        raise
    except Exception as exc:  # no driver, no NVRTC, no device
        raise BackendError(f"CuPy cannot run a kernel ({type(exc).__name__}: {exc})") from exc
    if value != 92:
        raise BackendError(f"CuPy smoke test returned {value}, expected 92")
    return cupy


def _cupy_backend(cupy) -> Backend:
    return Backend("cupy", cupy, "cuda", cupy.asnumpy, cupy.asarray)


def get_backend(spec: str | Backend = "auto") -> Backend:
    """Resolve ``"auto" | "cpu" | "gpu"`` (or pass a :class:`Backend` through).

    ``"auto"`` uses the GPU when CuPy can run a kernel there and the CPU otherwise; the
    environment variable ``GPUPPDP_BACKEND`` overrides ``"auto"``.
    """
    if isinstance(spec, Backend):
        return spec
    if spec not in BACKEND_CHOICES:
        raise ValueError(f"backend must be one of {BACKEND_CHOICES}, got {spec!r}")
    if spec == "auto":
        spec = os.environ.get("GPUPPDP_BACKEND", "auto")
        if spec not in BACKEND_CHOICES:
            raise ValueError(
                f"GPUPPDP_BACKEND must be one of {BACKEND_CHOICES}, got {spec!r}")
    if spec == "cpu":
        return cpu_backend()
    try:
        return _cupy_backend(_probe_cupy())
    except BackendError as exc:
        if spec == "gpu":
            raise BackendError(f"backend='gpu' requested but unavailable: {exc}") from exc
        log.info("gpuppdp: no usable GPU (%s); using the CPU backend", exc)
        return cpu_backend()
