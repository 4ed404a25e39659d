"""The GPU probe: ``get_backend("auto")`` falls back to the CPU with one log line saying why,
``get_backend("gpu")`` raises :class:`BackendError` with one line saying why.

No GPU here: CuPy and Numba CUDA are replaced by fake modules (``sys.modules``), one per
failure reason (no CuPy, no driver, no device, no NVRTC, out of device memory, no numba-cuda,
no NVVM), and the probe's Numba launch is forced on (it is skipped under the simulator).
"""

import logging
import sys
import types

import numpy as np
import pytest

import gpuppdp.backend as backend_mod
from gpuppdp.backend import BackendError, get_backend


# --------------------------------------------------------------------------- fake modules
class FakeArray:
    """Just enough of a cupy.ndarray for the probe: ``*``, ``+``, ``sum``, ``get``, ``shape``."""

    def __init__(self, a):
        self.a = np.asarray(a)

    @property
    def shape(self):
        return self.a.shape

    def __mul__(self, k):
        return FakeArray(self.a * k)

    def __add__(self, k):
        return FakeArray(self.a + k)

    def sum(self):
        return FakeArray(self.a.sum())

    def get(self):
        return self.a


class CUDARuntimeError(RuntimeError):
    """Named like cupy_backends.cuda.api.runtime.CUDARuntimeError."""


class OutOfMemoryError(MemoryError):
    """Named like cupy.cuda.memory.OutOfMemoryError."""


class CompileException(Exception):
    """Named like cupy.cuda.compiler.CompileException."""


class NvvmSupportError(ImportError):
    """Named like numba.cuda.cudadrv.error.NvvmSupportError."""


class CudaAPIError(Exception):
    """Named like numba.cuda.cudadrv.driver.CudaAPIError."""


def fake_cupy(*, devices=1, count_error=None, arange_error=None, kernel_error=None,
              wrong=False):
    """A fake ``cupy`` module; each keyword makes one step of the probe fail."""
    cupy = types.ModuleType("cupy")
    cupy.int32 = np.int32

    def get_device_count():
        if count_error is not None:
            raise count_error
        return devices

    def arange(n, dtype=None):
        if arange_error is not None:
            raise arange_error
        arr = FakeArray(np.arange(n, dtype=dtype))
        if kernel_error is not None or wrong:
            class Failing(FakeArray):
                def __mul__(self, k):
                    if kernel_error is not None:
                        raise kernel_error
                    return FakeArray(self.a * k + 1)  # a wrong answer
            arr = Failing(arr.a)
        return arr

    cupy.arange = arange
    cupy.asnumpy = lambda a: a.get()
    cupy.asarray = FakeArray
    cupy.ndarray = FakeArray
    cupy.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=get_device_count),
        Device=lambda *a: types.SimpleNamespace(synchronize=lambda: None))
    return cupy


def fake_numba(*, launch_error=None, jit_error=None, has_cuda=True):
    """A fake ``numba`` whose ``cuda.jit`` kernel adds 1 to the array (or raises)."""
    numba = types.ModuleType("numba")
    if not has_cuda:
        return numba, None
    cuda = types.ModuleType("numba.cuda")

    def jit(fn):
        if jit_error is not None:
            raise jit_error

        class Launcher:
            def __getitem__(self, config):
                def launch(arr):
                    if launch_error is not None:
                        raise launch_error
                    arr.a += 1
                return launch
        return Launcher()

    cuda.jit = jit
    cuda.grid = lambda n: 0
    numba.cuda = cuda
    return numba, cuda


@pytest.fixture
def gpu_env(monkeypatch):
    """Install fake cupy/numba modules; the Numba launch is probed (no simulator)."""
    monkeypatch.delenv("GPUPPDP_BACKEND", raising=False)
    monkeypatch.setattr(backend_mod, "_under_cudasim", lambda: False)

    def install(cupy=None, numba=None, *, no_cupy=False):
        monkeypatch.setitem(sys.modules, "cupy", None if no_cupy else (cupy or fake_cupy()))
        numba_mod, cuda_mod = numba or fake_numba()
        monkeypatch.setitem(sys.modules, "numba", numba_mod)
        if cuda_mod is None:  # numba without numba.cuda: the import fails
            monkeypatch.delitem(sys.modules, "numba.cuda", raising=False)
        else:
            monkeypatch.setitem(sys.modules, "numba.cuda", cuda_mod)

    return install


def _auto_falls_back(caplog, *fragments):
    """``auto`` -> the CPU backend and exactly one log line holding every fragment;
    ``gpu`` -> BackendError, one line, holding them too."""
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="gpuppdp"):
        be = get_backend("auto")
    assert be.name == "numpy" and be.kernels == "cpu"
    records = [r for r in caplog.records if r.name == "gpuppdp"]
    assert len(records) == 1, [r.getMessage() for r in records]
    msg = records[0].getMessage()
    assert "\n" not in msg and "using the CPU backend" in msg
    for frag in fragments:
        assert frag.lower() in msg.lower(), msg
    with pytest.raises(BackendError) as info:
        get_backend("gpu")
    text = str(info.value)
    assert "\n" not in text and text.startswith("backend='gpu' requested but unavailable")
    for frag in fragments:
        assert frag.lower() in text.lower(), text
    return msg


# --------------------------------------------------------------------------- each reason
def test_no_cupy(gpu_env, caplog):
    gpu_env(no_cupy=True)
    _auto_falls_back(caplog, "CuPy is not importable", "gpuppdp[gpu]")


def test_no_driver(gpu_env, caplog):
    gpu_env(fake_cupy(count_error=CUDARuntimeError(
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient\nfor CUDA runtime")))
    _auto_falls_back(caplog, "no usable CUDA driver or device", "cudaErrorInsufficientDriver")


def test_no_device(gpu_env, caplog):
    gpu_env(fake_cupy(devices=0))
    _auto_falls_back(caplog, "no CUDA device")


def test_no_device_error_code(gpu_env, caplog):
    gpu_env(fake_cupy(count_error=CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device "
                                                   "is detected")))
    _auto_falls_back(caplog, "no usable CUDA driver or device")


def test_no_nvrtc(gpu_env, caplog):
    gpu_env(fake_cupy(kernel_error=RuntimeError(
        "CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared "
        "object file")))
    _auto_falls_back(caplog, "CuPy: NVRTC", "libnvrtc.so.12")


def test_nvrtc_compile_error(gpu_env, caplog):
    gpu_env(fake_cupy(kernel_error=CompileException("catastrophic error: cannot open source")))
    _auto_falls_back(caplog, "NVRTC")


def test_out_of_memory_cupy(gpu_env, caplog):
    gpu_env(fake_cupy(arange_error=OutOfMemoryError(
        "Out of memory allocating 512 bytes (allocated so far: 0 bytes).")))
    _auto_falls_back(caplog, "CuPy: out of device memory")


def test_wrong_cupy_answer(gpu_env, caplog):
    gpu_env(fake_cupy(wrong=True))
    _auto_falls_back(caplog, "CuPy smoke test returned")


def test_no_numba_cuda(gpu_env, caplog):
    gpu_env(numba=fake_numba(has_cuda=False))
    _auto_falls_back(caplog, "Numba CUDA is not importable", "gpuppdp[gpu]")


def test_no_nvvm(gpu_env, caplog):
    gpu_env(numba=fake_numba(launch_error=NvvmSupportError(
        "libNVVM cannot be found. Do `conda install cudatoolkit`:\nlibnvvm.so: cannot open")))
    _auto_falls_back(caplog, "Numba CUDA: NVVM not found", "numba-cuda", "gpuppdp[gpu]")


def test_no_nvvm_at_jit(gpu_env, caplog):
    gpu_env(numba=fake_numba(jit_error=RuntimeError("NVVM is not available")))
    _auto_falls_back(caplog, "NVVM not found")


def test_numba_cuda_too_old_for_numpy(gpu_env, caplog):
    """numba-cuda 0.30.4 under NumPy 2.5 fails at its first kernel launch (seen on an H200)."""
    gpu_env(numba=fake_numba(launch_error=AttributeError(
        "module 'numpy' has no attribute 'row_stack'")))
    _auto_falls_back(caplog, "Numba CUDA: the installed numba-cuda does not support NumPy",
                     np.__version__, "row_stack")


def test_out_of_memory_numba(gpu_env, caplog):
    gpu_env(numba=fake_numba(launch_error=CudaAPIError(
        "[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")))
    _auto_falls_back(caplog, "Numba CUDA: out of device memory")


def test_numba_no_driver(gpu_env, caplog):
    gpu_env(numba=fake_numba(launch_error=CudaAPIError(
        "[999] Call to cuInit results in CUDA_ERROR_UNKNOWN")))
    _auto_falls_back(caplog, "Numba CUDA: no usable CUDA driver or device")


def test_unknown_failure_still_one_line(gpu_env, caplog):
    gpu_env(numba=fake_numba(launch_error=ValueError("something\nodd")))
    msg = _auto_falls_back(caplog, "Numba CUDA cannot run a kernel", "something odd")
    assert "ValueError" in msg


# --------------------------------------------------------------------------- success paths
def test_probe_success_launches_both(gpu_env, caplog):
    launched = []
    numba, cuda = fake_numba()
    jit = cuda.jit

    def counting_jit(fn):
        launched.append(fn.__name__)
        return jit(fn)

    cuda.jit = counting_jit
    gpu_env(numba=(numba, cuda))
    with caplog.at_level(logging.DEBUG, logger="gpuppdp"):
        be = get_backend("auto")
    assert be.name == "cupy" and be.kernels == "cuda" and be.is_gpu
    assert launched == ["_plus_one"]
    assert not [r for r in caplog.records if r.name == "gpuppdp"]
    assert get_backend("gpu").name == "cupy"
    assert launched == ["_plus_one"]  # the same modules are probed once a process


def test_simulator_skips_numba_launch(gpu_env, monkeypatch):
    gpu_env(numba=fake_numba(launch_error=NvvmSupportError("libNVVM cannot be found")))
    monkeypatch.setattr(backend_mod, "_under_cudasim", lambda: True)
    assert get_backend("gpu").name == "cupy"


def test_under_cudasim_reads_env(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert backend_mod._under_cudasim()
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    monkeypatch.setitem(sys.modules, "numba",
                        types.SimpleNamespace(config=types.SimpleNamespace(ENABLE_CUDASIM=0)))
    assert not backend_mod._under_cudasim()


def test_env_override_and_cpu(gpu_env, monkeypatch, caplog):
    gpu_env(no_cupy=True)
    monkeypatch.setenv("GPUPPDP_BACKEND", "cpu")
    with caplog.at_level(logging.DEBUG, logger="gpuppdp"):
        assert get_backend("auto").name == "numpy"
    assert not [r for r in caplog.records if r.name == "gpuppdp"]  # cpu: nothing probed
    monkeypatch.setenv("GPUPPDP_BACKEND", "gpu")
    with pytest.raises(BackendError, match="CuPy is not importable"):
        get_backend("auto")
    monkeypatch.setenv("GPUPPDP_BACKEND", "nonsense")
    with pytest.raises(ValueError, match="GPUPPDP_BACKEND"):
        get_backend("auto")
    with pytest.raises(ValueError, match="backend must be one of"):
        get_backend("tpu")


def test_gpu_extras_install_the_kernel_toolchain():
    """The ``gpu`` extra installs numba-cuda (NVVM) along with CuPy, for CUDA 12 and 13."""
    import pathlib

    tomllib = pytest.importorskip("tomllib")
    path = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
    extras = tomllib.loads(path.read_text())["project"]["optional-dependencies"]

    def names(extra):
        return {req.split(">")[0].split("=")[0].strip() for req in extras[extra]}

    assert {"cupy-cuda12x", "numba-cuda[cu12]"} <= names("gpu")
    assert {"cupy-cuda13x", "numba-cuda[cu13]"} <= names("gpu-cuda13")


def test_gpu_batch_budget_follows_free_device_memory():
    """On a GPU the lattice batches shrink to what the device's free memory (free device memory
    plus CuPy's pooled free blocks) can hold, never below 2^20 source entries; the CPU and the
    stand-in (no device to ask) keep the fixed budgets."""
    from gpuppdp.backend import Backend, cpu_backend
    from gpuppdp.engine.evaluate import (CPU_BATCH_ENTRIES, GPU_BATCH_BYTES_PER_BYTE,
                                         GPU_BATCH_ENTRIES, default_batch_entries)
    from gpuppdp.testing import strict_backend

    def fake_cupy(free, pooled):
        runtime = types.SimpleNamespace(memGetInfo=lambda: (free, 80 << 30))
        pool = types.SimpleNamespace(free_bytes=lambda: pooled)
        return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime),
                                     get_default_memory_pool=lambda: pool)

    bottom = types.SimpleNamespace(codes=np.zeros((1, 6), np.int16), sens=np.zeros(1, np.int32))
    entry = GPU_BATCH_BYTES_PER_BYTE * (6 * 2 + 4 + 16)

    def budget(backend):
        return default_batch_entries(types.SimpleNamespace(backend=backend, bottom=bottom))

    def gpu(free, pooled=0):
        return Backend("cupy", fake_cupy(free, pooled), "cuda", np.asarray, np.asarray)

    assert budget(gpu(64 << 30)) == GPU_BATCH_ENTRIES
    assert budget(gpu(3 << 30, 1 << 30)) == (4 << 30) // entry < GPU_BATCH_ENTRIES
    assert budget(gpu(1 << 20)) == 1 << 20
    assert gpu(5, 7).free_memory() == 12
    assert budget(cpu_backend()) == CPU_BATCH_ENTRIES and cpu_backend().free_memory() is None
    assert budget(strict_backend()) == GPU_BATCH_ENTRIES
