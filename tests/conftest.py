"""Test tiers (see README.md, "Tests").

The environment is set before anything imports Numba: unless ``GPUPPDP_TEST_GPU=1`` asks for
the GPU tier, CUDA kernels run under Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``).
"""

import os

GPU_TIER = os.environ.get("GPUPPDP_TEST_GPU") == "1"
if not GPU_TIER:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # simulator tier; before numba imports

import functools  # noqa: E402

import pytest  # noqa: E402

from gpuppdp.backend import BackendError, cpu_backend, get_backend  # noqa: E402
from gpuppdp.testing import cupy_reference, strict_backend  # noqa: E402

BACKEND_PARAMS = ["numpy", "strict"] + (["cupy"] if GPU_TIER else [])


def pytest_report_header(config):
    """One line where CuPy is absent: the stand-in then checks no call against its names."""
    if cupy_reference() is None:
        return ("cupy: not installed -- the strict CuPy stand-in runs without checking names "
                "and signatures against CuPy's (pip install -e '.[test-gpu]' adds them)")
    return None


@functools.lru_cache(maxsize=1)
def _gpu_backend():
    """Probe the GPU once per session; return the Backend or the reason it is unusable."""
    try:
        return get_backend("gpu")
    except BackendError as exc:
        return str(exc)


@pytest.fixture(params=BACKEND_PARAMS)
def backend(request):
    """Each array backend in turn: NumPy, the strict CuPy stand-in, and (GPU tier) CuPy."""
    if request.param == "numpy":
        return cpu_backend()
    if request.param == "strict":
        return strict_backend()
    gpu = _gpu_backend()
    if isinstance(gpu, str):
        pytest.skip(f"GPU tier: no usable GPU ({gpu})")
    return gpu
