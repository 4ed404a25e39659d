"""Test tiers (see README.md, "Tests").

The environment is set before anything imports Numba: unless ``GPUPPDP_TEST_GPU=1`` asks for
the GPU tier, CUDA kernels run under Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``).
"""

import os

GPU_TIER = os.environ.get("GPUPPDP_TEST_GPU") == "1"
if not GPU_TIER:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # simulator tier; before numba imports

import functools  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402

from gpuppdp.backend import BackendError, cpu_backend, get_backend  # noqa: E402
from gpuppdp.testing import cupy_reference, strict_backend  # noqa: E402

BACKEND_PARAMS = ["numpy", "strict"] + (["cupy"] if GPU_TIER else [])


def _thread_safe_simulated_shared_arrays() -> None:
    """Numba's simulator allocates a block's ``cuda.shared.array`` on its threads' first call
    with a look-up and an insert that are not atomic: two threads can each get an array of
    their own, and the block's "shared" memory is then not shared (the grid MDAV's test
    failed about one run in ten so).  A lock makes the allocation one per call site, as on a
    GPU."""
    import sys
    import traceback

    import numpy as np
    from numba.core import types
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    from numba.np import numpy_support

    allocate = FakeCUDAShared.array
    if getattr(allocate, "thread_safe", False):
        return
    lock = threading.Lock()

    def array(self, shape, dtype):
        if shape == 0:  # dynamic shared memory: one buffer, nothing allocated here
            return allocate(self, shape, dtype)
        # the simulator's own key, the calling line (file, line number), under a lock
        caller = tuple(traceback.extract_stack(sys._getframe())[-2][0:2])
        with lock:
            found = self._allocations.get(caller)
            if found is None:
                if isinstance(dtype, types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                found = self._allocations[caller] = np.empty(shape, dtype)
        return found

    array.thread_safe = True  # type: ignore[attr-defined]
    FakeCUDAShared.array = array


if not GPU_TIER:
    _thread_safe_simulated_shared_arrays()


#: the slow tier (``pytest -m slow``; the default ``pytest`` leaves it out): the tests (all
#: parametrizations together, or one, named with its ``[id]``) that take seven seconds or more
#: on the 2-core box (``pytest --durations=0``); every module they are in keeps faster tests in
#: the default tier
SLOW = {
    # the largest parametrized groups of the default tier after the sixteenth session's
    # merges (the default tier ran 6 min 56 s, then 6 min 23 s, at load 3-4): still run in CI's
    # slow tier
    "test_kernels.py::test_backend_end_to_end_equals_cpu",
    "test_golden_arx.py::test_exhaustive_reaches_the_same_loss",
    "test_mondrian.py::test_device_rounds_release_what_the_cpu_does_on_adult",
    "test_reconstruct.py::test_every_table_found_matches_brute_force",
    "test_microaggregation.py::test_mdav_equals_the_paper",
    "test_quality_models_arx.py::test_arx_optimum_and_loss",
    "test_flash_compiled.py::test_compiled_equals_python_with_sensitive_models",
    "test_flash_compiled.py::test_compiled_equals_python_on_adult_sensitive_models",
    "test_models_ldiv_tclose.py::test_row_verdicts_equal_naive_checker",
    "test_models_ldiv_tclose.py::test_backend_end_to_end_equals_cpu",
    "test_outputs.py::test_sigint_while_the_release_is_written",
    "test_models_lkc.py::test_with_other_models_row_verdicts_equal_naive_checker",
    "test_properties.py::test_flash_and_exhaustive_agree_and_are_optimal",
    "test_cluster.py::test_a_worker_lost_mid_run_changes_nothing",
    "test_risk_models_arx.py::test_flash_matches_arx",
    "test_risk_models_arx.py::test_other_searches_reach_arxs_optimum",
    "test_local_recoding.py::test_local_recoding_matches_arx_on_more_qids",
    "test_tradeoff_optimize.py::test_m4_and_more_instances_beat_the_grid",
    "test_aot.py::test_the_jit_gives_what_the_extension_gives",
    "test_aot.py::test_first_search_compiles_no_declared_kernel",
    "test_aot.py::test_the_commands_first_runs_compile_nothing",
    "test_outputs.py::test_stop_signals_leave_nothing_behind",
    "test_models_population.py::test_two_sensitive_attributes_suppress_the_union",
    "test_flash_sparse.py::test_top_down_path_sources_under_a_small_batch_budget",
    "test_cluster.py::test_cli_risk_and_check_on_dask_print_the_in_memory_reports",
    "test_cluster.py::test_cli_dask_writes_a_parquet_dataset",
    "test_golden_arx.py::test_extra_arx_runs_flash_equals_exhaustive",
    "test_outofcore.py::test_chunked_frequency_set_is_the_whole_tables",
    "test_subsets_kernel.py::test_every_path_equals_pandas",
    "test_check_chunks.py::test_adult_in_chunks_measures_what_check_does",
    "test_check_chunks.py::test_random_tables_in_chunks_measure_what_check_does",
    "test_cluster.py::test_dask_fit_is_the_single_process_fit",
    "test_trust_inputs.py::test_compile_notice_only_while_the_run_s_kernels_are_cold",
    # 3 to 5 s each on the 2-core box, moved for the default tier's margin under load
    "test_dp_trust_ledger.py::test_eight_concurrent_processes_spend_exactly_the_budget",
    "test_outofcore.py::test_release_order_is_random_over_all_chunks",
    "test_mondrian.py::test_refining_the_full_domain_classes_never_loses",
    "test_trust_inputs.py::test_output_to_dev_stdout_is_the_table_alone",
    "test_reconstruct.py::test_garfinkel_without_married_adults_is_ambiguous_and_every_table_fits",
    "test_report.py::test_strict_backend_gives_the_same_figures",
    "test_tds.py::test_lkc_steps_match_brute_force",
    "test_tds.py::test_k_anonymity_steps_match_brute_force",
    "test_mdav_grid.py::test_grid_form_on_more_tables",  # the CUDA simulator: ~15 s
    "test_cluster.py::test_release_order_is_shuffled_across_partitions",
    "test_dp_trust_releases.py::test_fork_while_another_thread_draws_does_not_deadlock",
    "test_properties.py::test_node_stats_match_the_naive_checker",
    "test_dp_gaussian.py::test_release_on_the_grid",
    "test_dp_gaussian.py::test_one_million_draws_pass_chi_squared",
    "test_vmdav.py::test_vmdav_equals_the_paper_on_every_backend",
    "test_quality_models_arx.py::test_arx_optimum_and_loss_more_cases",
    "test_quality_models_arx.py::test_every_node_against_a_plain_reference_more_parameters",
    "test_arx_microaggregation.py::test_arx_optimum_loss_and_release_more_cases",
    # ARX on the census table: 25 cases, ~1 min 50 s (Dankar's population uniqueness alone
    # ~80 s: Pitman's Newton solver in NumPy, called ~1,000 times); two cases stay default
    "test_census_arx.py::test_census_matches_arx_more_cases",
    # the compiled delta-disclosure and privacy loss on Adult (10 s and 4 s on the 2-core box)
    "test_flash_compiled_distribution.py::test_compiled_equals_python_on_adult",
    "test_flash_compiled_distribution.py::test_compiled_delta_disclosure_is_arxs",
    # single parametrizations of 17-34 s on the slower 2-core box (the default tier ran 5:25):
    # the same code runs on the faster ones left in the default tier
    "test_explore.py::test_each_node_s_figures_are_those_of_its_release[strict]",
    "test_flash_compiled_risk.py::test_compiled_equals_python_with_risk_models[2]",
    "test_flash_compiled_risk.py::test_one_nodes_suppression_equals_the_batched_models[0]",
    "test_flash_compiled_risk.py::test_one_nodes_suppression_equals_the_batched_models[2]",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if {f"{item.path.name}::{getattr(item, 'originalname', item.name)}",
                f"{item.path.name}::{item.name}"} & SLOW:
            item.add_marker(pytest.mark.slow)


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
