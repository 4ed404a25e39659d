#!/usr/bin/env bash
# The GPU check: one prepared run for a machine with an NVIDIA GPU and no network (<= 8 min).
#   bash benchmarks/gpu_check.sh                 (from the repository root; every step)
#   GPU_CHECK_STEPS="probe tests" bash benchmarks/gpu_check.sh     (only the steps named)
# Installs the project without dependencies (CuPy, numba-cuda, NumPy, pandas, pyarrow and
# pytest must be there; where the editable install cannot be built, the package is copied
# into a folder on PYTHONPATH), probes the GPU backend, runs the GPU test tier (8 workers where
# pytest-xdist is there), compares CPU and GPU results (every ARX reference case on Adult and
# a 10-million-row table) and runs the launch (host time of a kernel launch, a copy, a
# synchronization), search, level search, exhaustive, large-lattice (5^8, 5^9 and 5^10 nodes),
# scale, Mondrian and TDS (10 M rows), exact MDAV (10^6 x 5 on the whole grid, its groups checked
# against the CPU's on 2 x 10^4 rows), perturbation, DP (the fused Laplace and discrete Gaussian
# at 10^8), explore (every node's figures) and census (20 M rows, out of core, end to end, then `gpuppdp risk` and `check` on
# the same table) benchmarks on the GPU, and the host profiles of Mondrian, the level search and
# explore (profile: what the host does while the device waits); not by default, the US-population census (330 M rows,
# generated then anonymized to a Parquet dataset written by the host threads, about 80 s on an
# H200 machine, 43 s of it generating, then `gpuppdp risk`; GPU_CHECK_STEPS=census330), nor the host work per chunk on the machine's CPU (chunk: the
# steps that feed the device thread).  JSON and one log per step go to $OUT (or
# benchmarks/out); each step has its own time limit, and the script goes on after a failing
# step and exits 1 at the end.
# PYTHON names the interpreter (default python3); GPU_CHECK_ROWS the rows of the compared and
# scaled tables (default 1e7).
# Before a device session, benchmarks/cuda_compile_check.py compiles every kernel the
# simulator tier launches for sm_90 on a machine without a GPU (what the simulator lets pass).
# numba-cuda 0.30.4 does not import its kernels under NumPy 2.5 (np.row_stack is gone; the
# probe says so): on such an image put a NumPy 2.4 wheel first on PYTHONPATH.
set -u
cd "$(dirname "$0")/.."
out="${OUT:-benchmarks/out}"
py="${PYTHON:-python3}"
rows="${GPU_CHECK_ROWS:-1e7}"
steps="${GPU_CHECK_STEPS:-probe tests compare launch search levels exhaustive lattice scale mondrian tds mdav perturb dp explore profile census}"
mkdir -p "$out"
fail=0
safe_path=()
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  case " $steps " in *" $name "*) ;; *) return 0 ;; esac
  echo "== $name (limit ${limit}s)"
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 15 "$out/$name.log"
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || fail=1
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$py" -c "import sys, numpy, cupy, numba; print(sys.version.split()[0], 'numpy', numpy.__version__,
'cupy', cupy.__version__, 'numba', numba.__version__)" || true
# (GPUPPDP_AOT=0: no ahead-of-time CPU kernels, half a minute of device time saved)
if ! GPUPPDP_AOT=0 "$py" -m pip install --quiet --no-deps --no-build-isolation -e . \
    > "$out/install.log" 2>&1; then
  echo "editable install failed (see install.log): copying the package onto PYTHONPATH"
  site=$(mktemp -d)
  cp -r gpuppdp "$site/gpuppdp" || exit 1
  mkdir "$site/bin" && printf '#!%s\nimport sys\nfrom gpuppdp.cli import main\nsys.exit(main())\n' \
    "$(command -v "$py")" > "$site/bin/gpuppdp" && chmod +x "$site/bin/gpuppdp"
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" PATH="$site/bin:$PATH"
  safe_path=(-P)  # pytest from the root must not import the source tree's gpuppdp (no kernels)
fi
# a time limit per test and 8 workers, where the plugins are there; the ChaCha20 CUDA form's
# two simulator runs (a subprocess each, over 120 s beside 7 busy workers on an H200 machine)
# are left to the CPU tiers: here its cupy tests compare the real device's bits with the CPU's
pytest_options=()
"$py" -c "import pytest_timeout" 2>/dev/null && pytest_options+=(--timeout 120)
"$py" -c "import xdist" 2>/dev/null && pytest_options+=(-n 8)
step probe 60 "$py" -c "from gpuppdp.backend import get_backend; print(get_backend('gpu'))"
step tests 210 env GPUPPDP_TEST_GPU=1 "$py" "${safe_path[@]}" -m pytest -q --maxfail=25 --tb=short -p no:cacheprovider \
  "${pytest_options[@]}" tests/test_groupby.py tests/test_kernels.py tests/test_golden_arx.py \
  tests/test_dp_chacha.py tests/test_dp_sampler.py tests/test_dp_mechanisms.py \
  tests/test_backend.py tests/test_testing.py tests/test_flash_sparse.py tests/test_cudalaunch.py \
  tests/test_models_ldiv_tclose.py tests/test_models_more.py tests/test_risk.py tests/test_utility.py \
  tests/test_perturb.py tests/test_microaggregation.py tests/test_mdav_grid.py tests/test_mondrian.py \
  tests/test_perturb_measures.py tests/test_dp_gaussian_fused.py tests/test_vmdav.py tests/test_explore.py \
  tests/test_dp_gaussian.py tests/test_dp_summation.py tests/test_perturb_combined.py tests/test_tds.py \
  --deselect tests/test_dp_chacha.py::test_cuda_form_matches_rfc8439_under_the_simulator \
  --deselect tests/test_dp_chacha.py::test_cuda_form_gives_the_cpu_forms_bits_under_the_simulator
step compare 150 "$py" benchmarks/gpu_compare.py --rows "$rows" --json "$out/gpu_compare.json"
step launch 60 "$py" benchmarks/bench_launch.py --json "$out/bench_launch_gpu.json"
step search 60 "$py" benchmarks/bench_search.py --backend gpu --quick --repeats 3 --json "$out/bench_search_gpu.json"
step levels 60 "$py" benchmarks/bench_search.py --backend gpu --quick --repeats 3 --search levels --json "$out/bench_levels_gpu.json"
step exhaustive 90 "$py" benchmarks/bench_exhaustive.py --backend gpu --repeats 3 --device-profile --json "$out/bench_exhaustive_gpu.json"
step lattice 150 "$py" benchmarks/bench_lattice.py --backend gpu --qids 8 9 10 --repeats 1 --json "$out/bench_lattice_gpu.json"
step scale 90 "$py" benchmarks/bench_scale.py --rows "$rows" --backend gpu --repeats 3 --warmup small --json "$out/bench_scale_gpu.json"
step mondrian 150 "$py" benchmarks/bench_mondrian.py --backend gpu --rows 1e7 --repeats 1 --mondrian-only --json "$out/bench_mondrian_gpu.json"
# TDS's rounds on the device (issue 38; 25.1 s on the 2-core box's CPU at 10^7 rows, k = 5)
step tds 180 "$py" benchmarks/bench_tds.py --backend gpu --rows 1e7 --repeats 2 --json "$out/bench_tds_gpu.json"
# (before perturb, whose exact MDAV on 10^5 rows takes the grid form too: 45 s a run on one block)
step mdav 90 "$py" benchmarks/bench_perturb.py --backend gpu --mdav-exact-only --mdav-rows 1e6 --mdav-check-rows 2e4 --json "$out/bench_mdav_grid_gpu.json"
# (V-MDAV on 2 x 10^4 rows: exact V-MDAV on a GPU is one block, ~45 s at 10^5 rows)
step perturb 180 "$py" benchmarks/bench_perturb.py --backend gpu --rows 5e7 --repeats 3 --mdav-rows 1e5 --mdav-census-rows 1e8 --vmdav-rows 2e4 --json "$out/bench_perturb_gpu.json"
step dp 60 "$py" benchmarks/bench_dp.py --backend gpu --fused-size 1e8 --json "$out/bench_dp_gpu.json"
# every node's figures (issue 36: Adult 8 QIDs <= 50 ms, a census lattice; 10^8 rows with
# GPU_CHECK_STEPS=explore GPU_CHECK_EXPLORE_ROWS=1e8)
step explore 150 "$py" benchmarks/bench_explore.py --backend gpu --repeats 3 --census-rows "${GPU_CHECK_EXPLORE_ROWS:-1e7}" --json "$out/bench_explore_gpu.json"
step profile 90 "$py" benchmarks/profile_host.py --backend gpu --rows 1e7 --json "$out/profile_host_gpu.json"
export GPUPPDP_LOG=DEBUG  # the census runs log where their ordered thread spent its time
step census 210 "$py" benchmarks/bench_census.py --rows 2e7 --runs 2 --backend gpu --measure risk check --json "$out/bench_census_gpu.json"
step chunk 90 "$py" benchmarks/bench_chunk.py --repeats 8 --json "$out/bench_chunk.json"
step census330 590 "$py" benchmarks/bench_census.py --rows 3.3e8 --backend gpu --extra="--parquet-dataset" --measure risk --json "$out/bench_census330_gpu.json"
echo "gpu_check: $([ $fail -eq 0 ] && echo all steps passed || echo some steps failed) (JSON and logs in $out)"
exit $fail
