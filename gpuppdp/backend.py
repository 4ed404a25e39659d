"""Array backends: NumPy on the CPU, CuPy on the GPU, one code path written against ``xp``.

Array code in gpuppdp is written once against the namespace a :class:`Backend` hands out
(``backend.xp``), in the spirit of scikit-learn's array-API dispatch
(``sklearn/utils/_array_api.py``).  Data moves between host and device only through
:meth:`Backend.asarray` and :meth:`Backend.to_host`, never implicitly: CuPy refuses implicit
conversion, and the test suite runs the same code on a strict stand-in that refuses it too.

CuPy is imported lazily, only when asked for (``"gpu"``) or probed (``"auto"``).  The probe
runs one tiny CuPy kernel (driver, device, NVRTC) and one tiny Numba ``@cuda.jit`` kernel on a
CuPy array (numba-cuda, NVVM; skipped under Numba's CUDA simulator), so "CuPy installed, no
driver", "no NVRTC", "no NVVM / numba-cuda" and "out of device memory" are all caught before
any work starts: ``"auto"`` falls back to the CPU with one log line saying why, ``"gpu"`` raises
:class:`BackendError` with one line saying why.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .errors import InputError, UserError

#: a NumPy or CuPy array (or a stand-in's): the two share one interface, which neither names
Array = Any

__all__ = ["Array", "Backend", "BackendError", "DeviceMemoryError", "get_backend", "cpu_backend",
           "gpu_count"]

log = logging.getLogger("gpuppdp")

BACKEND_CHOICES = ("auto", "cpu", "gpu")


class BackendError(UserError, RuntimeError):
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

    def free_memory(self) -> int | None:
        """Bytes the device can still hand out: free device memory plus the free blocks
        CuPy's memory pool holds (``None`` on the CPU and for stand-ins)."""
        if self.name != "cupy":
            return None
        free, _ = self.xp.cuda.runtime.memGetInfo()
        return int(free) + int(self.xp.get_default_memory_pool().free_bytes())

    def scalar(self, a):
        """A 0-d / size-1 device value as a Python number."""
        return self.to_host(a).reshape(-1)[0].item()

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Backend({self.name!r}, kernels={self.kernels!r})"

    def __dask_tokenize__(self):
        """Dask's token of a task argument: the backend's kind (one per process)."""
        return ("gpuppdp.Backend", self.name, self.kernels)

    def __reduce__(self):
        """Pickled by kind (Dask ships encoded tables to its workers): unpickling gives the
        receiving process its own backend of that kind."""
        spec = {"numpy": "cpu", "cupy": "gpu"}.get(self.name)
        if spec is None:
            raise TypeError(f"the {self.name!r} backend cannot be sent to another process")
        return (get_backend, (spec,))


def cpu_backend() -> Backend:
    """The NumPy backend (always available)."""
    return Backend("numpy", np, "cpu", np.asarray, lambda a: a)


class DeviceMemoryError(MemoryError):
    """The GPU's free memory cannot hold what a run needs (raised before CuPy would run out)."""


#: what to install when the probe finds the GPU stack incomplete
_INSTALL_HINT = "pip install 'gpuppdp[gpu]' (CUDA 12) or 'gpuppdp[gpu-cuda13]'"


def _one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (CUDA errors often carry multi-line messages)."""
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _classify(exc: BaseException, stage: str) -> str:
    """One line saying why *stage* (``"CuPy"`` or ``"Numba CUDA"``) could not run a kernel:
    out of device memory, no NVVM / numba-cuda, numba-cuda too old for NumPy, no NVRTC, no
    driver or device, or other."""
    names = " ".join(t.__name__ for t in type(exc).__mro__).lower()
    text = f"{names} {exc}".lower()
    detail = _one_line(exc)
    if "outofmemory" in names or "out of memory" in text or "out_of_memory" in text:
        return f"{stage}: out of device memory ({detail})"
    if "nvvm" in text or "libdevice" in text:
        return (f"{stage}: NVVM not found; the kernels need numba-cuda with the CUDA "
                f"toolkit wheels, {_INSTALL_HINT} ({detail})")
    if "module 'numpy' has no attribute" in text:  # seen: numba-cuda 0.30.4, NumPy 2.5
        return (f"{stage}: the installed numba-cuda does not support NumPy {np.__version__}; "
                f"install a NumPy it supports ({detail})")
    if "nvrtc" in text or "compileexception" in names:
        return f"{stage}: NVRTC (the CUDA runtime compiler) is not usable ({detail})"
    if ("driver" in text or "no cuda" in text or "nodevice" in text or "no device" in text
            or "cudaerror" in text or "cuda_error" in text or "cudadrivererror" in names
            or "cudasupporterror" in names):
        return f"{stage}: no usable CUDA driver or device ({detail})"
    return f"{stage} cannot run a kernel ({detail})"


def _under_cudasim() -> bool:
    """Numba's CUDA simulator is on: ``numba.cuda`` kernels run on the host, no launch to probe."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return True
    numba = sys.modules.get("numba")
    config = getattr(numba, "config", None) if numba is not None else None
    return bool(getattr(config, "ENABLE_CUDASIM", 0))


def _probe_numba_cuda(cupy) -> None:
    """Launch one tiny ``@cuda.jit`` kernel on a CuPy array, as :mod:`gpuppdp.kernels` does
    (this needs numba-cuda and NVVM, which CuPy alone does not check); raise with the reason."""
    try:
        from numba import cuda  # noqa: PLC0415 - deferred: probed only for a GPU
        if not hasattr(cuda, "jit"):
            raise ImportError("numba.cuda has no jit (numba-cuda not installed)")
    except Exception as exc:
        raise BackendError(
            f"Numba CUDA is not importable ({_one_line(exc)}); {_INSTALL_HINT}") from exc
    try:
        @cuda.jit
        def _plus_one(a):  # pragma: no cover - runs on the device
            i = cuda.grid(1)
            if i < a.shape[0]:
                a[i] += 1

        probe = cupy.arange(8, dtype=cupy.int32)
        _plus_one[1, 8](probe)
        cupy.cuda.Device().synchronize()
        value = int(probe.sum().get())
    except Exception as exc:  # NVVM missing, no driver, out of memory, ...
        raise BackendError(_classify(exc, "Numba CUDA")) from exc
    if value != 36:
        raise BackendError(f"Numba CUDA smoke test returned {value}, expected 36")


#: the modules (CuPy, numba.cuda, the simulator's flag) a probe last succeeded with: each
#: process probes them once (the Numba probe compiles a kernel, 0.1 s a time on an H200)
_PROBED: tuple = ()


def _probe_cupy():
    """Import CuPy, run one tiny CuPy kernel and one tiny Numba CUDA kernel on a CuPy array;
    return the CuPy module or raise :class:`BackendError` with the reason, on one line.
    Once a probe succeeded, the same modules are not probed again."""
    global _PROBED
    try:
        import cupy  # noqa: PLC0415 - deferred: CuPy is optional
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        raise BackendError(
            f"CuPy is not importable ({_one_line(exc)}); {_INSTALL_HINT}") from exc
    probed = (cupy, sys.modules.get("numba.cuda"), _under_cudasim())
    if all(a is b for a, b in zip(probed, _PROBED)) and len(_PROBED) == 3:
        return cupy
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver (CUDARuntimeError: cudaErrorInsufficientDriver, ...)
        raise BackendError(_classify(exc, "CuPy")) from exc
    if count < 1:
        raise BackendError("CuPy: no CUDA device found")
    try:
        probe = cupy.arange(8, dtype=cupy.int32)
        value = int((probe * 3 + 1).sum().get())  # elementwise + reduction: exercises NVRTC
    except Exception as exc:  # no NVRTC, out of memory, device unusable
        raise BackendError(_classify(exc, "CuPy")) from exc
    if value != 92:
        raise BackendError(f"CuPy smoke test returned {value}, expected 92")
    if not _under_cudasim():
        _probe_numba_cuda(cupy)
    _PROBED = (cupy, sys.modules.get("numba.cuda"), _under_cudasim())
    return cupy


def gpu_count() -> int:
    """How many CUDA devices CuPy sees (0 without CuPy, a driver or a device)."""
    try:
        import cupy  # noqa: PLC0415 - deferred: CuPy is optional
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # ImportError, no driver (CUDARuntimeError), ...
        return 0


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
        raise InputError(f"backend must be one of {BACKEND_CHOICES}, got {spec!r}")
    if spec == "auto":
        spec = os.environ.get("GPUPPDP_BACKEND", "auto")
        if spec not in BACKEND_CHOICES:
            raise InputError(
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
