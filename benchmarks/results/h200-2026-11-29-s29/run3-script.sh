#!/usr/bin/env bash
# Device call 3: the GPU tests of the changed modules first, then A/B of the committed code
# before this session (.base, 9f8ac61) against the working tree (exhaustive, explore, level
# search; alternated), a profile of the new exhaustive walk, and the 330 M census if time is
# left (its own tarball).
set -u
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1 GPUPPDP_AOT=0
O=/tmp/gc; mkdir -p $O
ROOT=$PWD
t0=$SECONDS
echo "== tests"
PYTHONPATH=$ROOT:/tmp/site GPUPPDP_TEST_GPU=1 timeout 100 python3 -m pytest -q -n 8 \
  --timeout 90 -p no:cacheprovider --maxfail=25 --tb=short \
  tests/test_groupby.py tests/test_explore.py tests/test_lattice_walk.py tests/test_golden_arx.py \
  tests/test_models_ldiv_tclose.py tests/test_flash_sparse.py tests/test_kernels.py \
  tests/test_models_more.py > $O/tests.txt 2>&1
echo "tests exit $?"; grep -E "passed|failed|FAILED|Error" $O/tests.txt | tail -n 30
for round in 1 2 3; do
  for side in base new; do
    if [ $side = base ]; then PP=$ROOT/.base:/tmp/site; else PP=$ROOT:/tmp/site; fi
    echo "== round $round $side (at $((SECONDS - t0)) s)"
    PYTHONPATH=$PP timeout 45 python3 benchmarks/bench_exhaustive.py --backend gpu --repeats 5 \
      --json $O/exh_${side}_$round.json 2>&1 | grep -E "done"
    [ $round != 3 ] && PYTHONPATH=$PP timeout 45 python3 benchmarks/bench_explore.py \
      --backend gpu --repeats 3 --census-rows 0 --json $O/explore_${side}_$round.json 2>&1 \
      | grep -E "done"
    [ $round = 1 ] && PYTHONPATH=$PP timeout 45 python3 benchmarks/bench_lattice.py --backend gpu \
      --qids 8 9 --repeats 2 --json $O/lattice_${side}.json 2>&1 | grep -E "done|agree"
  done
done
echo "== profile (at $((SECONDS - t0)) s)"
PYTHONPATH=$ROOT:/tmp/site timeout 45 python3 benchmarks/bench_exhaustive.py --backend gpu \
  --repeats 3 --device-profile --host-profile --json $O/exh_profile.json > $O/exh_profile.txt 2>&1
grep -A14 "device profile, 9" $O/exh_profile.txt
grep -A16 "host profile, 9" $O/exh_profile.txt
(cd $O && tar czf $OUT/gc3.tgz .)
el=$((SECONDS - t0)); echo "== at $el s"
if [ $el -lt 160 ]; then
  mkdir -p /tmp/bin && printf '#!%s\nimport sys\nfrom gpuppdp.cli import main\nsys.exit(main())\n' \
    "$(command -v python3)" > /tmp/bin/gpuppdp && chmod +x /tmp/bin/gpuppdp
  mkdir -p /tmp/gc330
  PATH=/tmp/bin:$PATH PYTHONPATH=$ROOT:/tmp/site GPUPPDP_LOG=DEBUG timeout $((285 - el)) \
    python3 benchmarks/bench_census.py --rows 3.3e8 --backend gpu --extra="--parquet-dataset" \
    --json /tmp/gc330/census330.json > /tmp/gc330/census330.txt 2>&1
  echo "census exit $?"; tail -n 8 /tmp/gc330/census330.txt
  (cd /tmp/gc330 && tar czf $OUT/gc330.tgz .)
fi
echo "== done (at $((SECONDS - t0)) s)"
