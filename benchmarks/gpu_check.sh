#!/usr/bin/env bash
# The GPU check: one prepared run for a machine with an NVIDIA GPU and no network (<= 8 min).
#   bash benchmarks/gpu_check.sh            (from the repository root)
# Installs the project without dependencies (CuPy, numba-cuda, NumPy, pandas, pyarrow and
# pytest must be there), probes the GPU backend, runs the GPU test tier, compares CPU and GPU
# results (every ARX reference case on Adult and a 10-million-row table) and runs the search,
# level search, exhaustive, scale, DP and census (20 M rows, out of core, end to end) benchmarks on the GPU.
# JSON goes to $OUT (or benchmarks/out); each
# step has its own time limit, and the script goes on after a failing step and exits 1 at the end.
set -u
cd "$(dirname "$0")/.."
out="${OUT:-benchmarks/out}"
mkdir -p "$out"
fail=0
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit}s)"
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$out/$name.log"
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || fail=1
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python -m pip install --quiet --no-deps --no-build-isolation -e . || python -m pip install --quiet --no-deps -e . || exit 1
step probe 60 python -c "from gpuppdp.backend import get_backend; print(get_backend('gpu'))"
step tests 150 env GPUPPDP_TEST_GPU=1 python -m pytest -q -x -p no:cacheprovider \
  tests/test_groupby.py tests/test_kernels.py tests/test_golden_arx.py tests/test_dp_chacha.py \
  tests/test_dp_sampler.py tests/test_dp_mechanisms.py tests/test_backend.py tests/test_testing.py
step compare 150 python benchmarks/gpu_compare.py --rows 10000000 --json "$out/gpu_compare.json"
step search 60 python benchmarks/bench_search.py --backend gpu --quick --repeats 3 --json "$out/bench_search_gpu.json"
step levels 60 python benchmarks/bench_search.py --backend gpu --quick --repeats 3 --search levels --json "$out/bench_levels_gpu.json"
step exhaustive 60 python benchmarks/bench_exhaustive.py --backend gpu --repeats 3 --json "$out/bench_exhaustive_gpu.json"
step scale 90 python benchmarks/bench_scale.py --rows 10000000 --backend gpu --repeats 3 --warmup small --json "$out/bench_scale_gpu.json"
step dp 60 python benchmarks/bench_dp.py --backend gpu --fused-size 1e8 --json "$out/bench_dp_gpu.json"
step census 120 python benchmarks/bench_census.py --rows 2e7 --backend gpu --json "$out/bench_census_gpu.json"
echo "gpu_check: $([ $fail -eq 0 ] && echo all steps passed || echo some steps failed) (JSON and logs in $out)"
exit $fail
