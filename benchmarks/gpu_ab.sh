#!/usr/bin/env bash
# A/B on a lent GPU in one call: the package as it was at a commit against the working tree,
# alternated in the same call (a device's timings move by 20-40 % between calls, and its load
# after a test run lingers), then the GPU test tier of the modules named, on the new code.
#
# Before the call, on the machine without a GPU (from the repository root):
#   echo /.base/ >> .git/info/exclude
#   rm -rf .base && mkdir .base && git archive BASE_COMMIT gpuppdp | tar -x -C .base
# then run on the device, carrying .base (and .whl, the NumPy wheel numba-cuda needs there):
#   bash benchmarks/gpu_ab.sh
# GPU_AB_ROUNDS (default 3) alternations of GPU_AB_BENCHES (default: the exhaustive walk, every
# node's figures and the level search), then GPU_AB_TESTS (default: the evaluator's modules).
# Prints each run's "done" lines; JSON, logs and the tests' output go to $OUT/ab.tgz (or
# benchmarks/out/ab/).  No Python package is installed: both sides run from PYTHONPATH, the
# kernels compiled at their first use (GPUPPDP_AOT=0), outside the timed runs.
set -u
cd "$(dirname "$0")/.."
root=$PWD
[ -d .base/gpuppdp ] || { echo "no .base/gpuppdp: see the comment at the top"; exit 2; }
site=/tmp/gpu_ab_site; mkdir -p "$site"
if ls .whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" .whl/*.whl || exit 1
fi
export PYTHONUNBUFFERED=1 GPUPPDP_AOT=0
logs=$(mktemp -d)
rounds=${GPU_AB_ROUNDS:-3}
benches=${GPU_AB_BENCHES:-"bench_exhaustive.py --backend gpu --repeats 5
bench_explore.py --backend gpu --repeats 3 --census-rows 0
bench_lattice.py --backend gpu --qids 8 9 --repeats 2"}
tests=${GPU_AB_TESTS:-"tests/test_lattice_walk.py tests/test_golden_arx.py tests/test_groupby.py
tests/test_explore.py tests/test_kernels.py tests/test_flash_sparse.py"}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
t0=$SECONDS
for round in $(seq "$rounds"); do
  for side in base new; do
    if [ $side = base ]; then path=$root/.base:$site; else path=$root:$site; fi
    echo "== round $round, $side (at $((SECONDS - t0)) s)"
    i=0
    while read -r bench; do
      [ -n "$bench" ] || continue
      i=$((i + 1))
      # shellcheck disable=SC2086  # the bench's own arguments, split on spaces
      PYTHONPATH=$path timeout 120 python3 benchmarks/$bench \
        --json "$logs/${side}_${round}_$i.json" > "$logs/${side}_${round}_$i.log" 2>&1
      echo "   $bench: exit $?"
      grep -E "  done |agree" "$logs/${side}_${round}_$i.log"
    done <<< "$benches"
  done
done
echo "== tests (at $((SECONDS - t0)) s)"
options=()  # a time limit per test and 8 workers, where the plugins are there
python3 -c "import pytest_timeout" 2>/dev/null && options+=(--timeout 120)
python3 -c "import xdist" 2>/dev/null && options+=(-n 8)
# shellcheck disable=SC2086
PYTHONPATH=$root:$site GPUPPDP_TEST_GPU=1 timeout 300 python3 -m pytest -q "${options[@]}" \
  -p no:cacheprovider --maxfail=25 --tb=short $tests > "$logs/tests.txt" 2>&1
echo "tests: exit $?"; grep -E "passed|failed|FAILED" "$logs/tests.txt" | tail -n 30
echo "== done (at $((SECONDS - t0)) s)"
if [ -n "${OUT:-}" ]; then
  (cd "$logs" && tar czf "$OUT/ab.tgz" .)
else
  mkdir -p benchmarks/out/ab && cp "$logs"/* benchmarks/out/ab/
fi
