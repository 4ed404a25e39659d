#!/usr/bin/env bash
# Device call 2: A/B of the committed code (.base, HEAD 9f8ac61) against the working tree on
# the exhaustive walk, explore and the level search, alternated; then host+device profiles of
# the new exhaustive walk; then the GPU test tier on the new code.
set -u
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1 GPUPPDP_AOT=0
O=/tmp/gc; mkdir -p $O
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
ROOT=$PWD
t0=$SECONDS
for round in 1 2; do
  for side in base new; do
    if [ $side = base ]; then PP=$ROOT/.base:/tmp/site; else PP=$ROOT:/tmp/site; fi
    echo "== round $round $side (at $((SECONDS - t0)) s)"
    PYTHONPATH=$PP timeout 60 python3 benchmarks/bench_exhaustive.py --backend gpu --repeats 5 \
      --json $O/exh_${side}_$round.json 2>&1 | grep -E "^ +[89] |done"
    PYTHONPATH=$PP timeout 60 python3 benchmarks/bench_explore.py --backend gpu --repeats 3 \
      --census-rows 0 --json $O/explore_${side}_$round.json 2>&1 | grep -E "done"
    [ $round = 1 ] && PYTHONPATH=$PP timeout 60 python3 benchmarks/bench_lattice.py --backend gpu \
      --qids 8 9 --repeats 2 --json $O/lattice_${side}.json 2>&1 | grep -E "done|agree"
  done
done
echo "== profiles (at $((SECONDS - t0)) s)"
PYTHONPATH=$ROOT:/tmp/site timeout 60 python3 benchmarks/bench_exhaustive.py --backend gpu \
  --repeats 3 --device-profile --host-profile --json $O/exh_profile.json > $O/exh_profile.txt 2>&1
tail -n 60 $O/exh_profile.txt | head -n 45
echo "== tests (at $((SECONDS - t0)) s)"
PYTHONPATH=$ROOT:/tmp/site GPUPPDP_TEST_GPU=1 timeout 150 python3 -m pytest -q -n 8 \
  --timeout 120 -p no:cacheprovider --maxfail=25 --tb=short \
  tests/test_explore.py tests/test_lattice_walk.py tests/test_golden_arx.py tests/test_kernels.py \
  tests/test_groupby.py tests/test_flash_sparse.py tests/test_backend.py tests/test_testing.py \
  tests/test_models_ldiv_tclose.py tests/test_models_more.py tests/test_risk.py \
  tests/test_utility.py tests/test_cudalaunch.py tests/test_heuristic.py tests/test_samarati.py \
  > $O/tests.txt 2>&1
echo "tests exit $?"; grep -E "passed|failed|FAILED|Error" $O/tests.txt | tail -n 30
echo "== done (at $((SECONDS - t0)) s)"
(cd $O && tar czf $OUT/gc2.tgz .)
