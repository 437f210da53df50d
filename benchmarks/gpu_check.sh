#!/usr/bin/env bash
# The first-GPU check: everything a session lent a GPU should run, in one call of under 8 minutes.
#
#   bash benchmarks/gpu_check.sh                        # on the GPU machine (the device tool's run)
#   GPU_CHECK_STANDIN=1 bash benchmarks/gpu_check.sh    # anywhere: the same parts on CPU, quickly
#   nox -s gpu                                          # where nox exists
#
# Runs with `python3` as it is (PYTHON overrides), PYTHONPATH=. and nothing installed:
#   facts         the device, driver, torch, CUDA, cupy and numpy versions
#   device tests  tests/impl/test_impl_device.py with the real cupy (ORACLE_CUPY=real)
#   conformance   the suite with --device cuda (impl on cupy against that machine's torch on CUDA) in
#                 a short profile (dev, seed 0), --reference-version set to that torch's release;
#                 version-only divergences are set aside and counted (oracle.differential)
#   bench_gpu     W2 MLP, W3 CNN, W1 chain on cuda: impl on cupy vs torch CUDA, medians and ratios
# Each part has a time limit (timeout(1): SIGINT, so pytest still writes what it has, then a kill
# 20 s later): a hang in one leaves the others' results. Everything goes under $OUT (default
# reports/gpu_check): summary.txt and summary.json (the table printed last), results.json,
# benchmarks.json, and gpu_check.tar.gz with every log. The exit status is 0 when every part ran
# (tests may have failed: the summary says), 1 when one did not (timed out, crashed, refused).
#
# Stand-in mode (GPU_CHECK_STANDIN=1): tests/helpers/cupy_shim on PYTHONPATH makes `import cupy` the
# numpy-backed stand-in (tests/helpers/cupy_standin.py) in every process, torch on cpu is the reference and
# stands for torch CUDA in the benchmarks, and each part runs a small selection; a CI test
# (tests/oracle/test_gpu_check.py) runs it so that the first real run does not fail on a typo.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
OUT=${OUT:-$ROOT/reports/gpu_check}
STAGE=$OUT/gpu_check
mkdir -p "$OUT"
rm -rf "$STAGE" "$OUT/gpu_check.tar.gz"
mkdir -p "$STAGE"
CPUS=$(nproc 2>/dev/null || echo 2)
# run from a pytest-xdist worker (tests/oracle/test_gpu_check.py), pytest-benchmark would disable itself
unset PYTEST_XDIST_WORKER PYTEST_XDIST_WORKER_COUNT PYTEST_XDIST_TESTRUNUID PYTEST_CURRENT_TEST

if [ "${GPU_CHECK_STANDIN:-0}" = 1 ]; then
  export ORACLE_GPU_STANDIN=1 PYTHONPATH=$ROOT:$ROOT/tests/helpers/cupy_shim ORACLE_CUPY=standin
  WORKERS=${GPU_CHECK_WORKERS:-2}
  DEVICE_TESTS=(-k "not conformance_programs or unary or hooks_stacked or sgd")
  CONFORMANCE=(--rule LEAF-001,LEAF-003,ERR-001,ERR-004,HOOK-001,OPS-004)
  BENCH=(-k "not 10000")  # W1 at N=1e3 only; W2 at its CPU size (benchmarks/workloads.py)
  LIMITS=(60 120 180 120)
else
  export PYTHONPATH=$ROOT ORACLE_CUPY=real
  # 16 cores: each xdist worker has the backend's worker process beside it (oracle.runner), and
  # both run while a program is compared, so three quarters of the cores as workers
  WORKERS=${GPU_CHECK_WORKERS:-$(( CPUS > 4 ? CPUS * 3 / 4 : 2 ))}
  DEVICE_TESTS=()
  CONFORMANCE=()
  BENCH=()
  LIMITS=(30 90 150 120)  # 390 s, + 20 s per part at most for a kill, + the summary: under 8 min
fi
# overrides: GPU_CHECK_LIMITS="FACTS DEVICE CONFORMANCE BENCH" (seconds), GPU_CHECK_WORKERS, and
# each part's extra pytest arguments, split on spaces: GPU_CHECK_{DEVICE,CONFORMANCE,BENCH}_ARGS
read -r FACTS_S DEVICE_S CONFORMANCE_S BENCH_S <<< "${GPU_CHECK_LIMITS:-${LIMITS[*]}}"
if [ -n "${GPU_CHECK_DEVICE_ARGS+x}" ]; then read -r -a DEVICE_TESTS <<< "$GPU_CHECK_DEVICE_ARGS"; fi
if [ -n "${GPU_CHECK_CONFORMANCE_ARGS+x}" ]; then read -r -a CONFORMANCE <<< "$GPU_CHECK_CONFORMANCE_ARGS"; fi
if [ -n "${GPU_CHECK_BENCH_ARGS+x}" ]; then read -r -a BENCH <<< "$GPU_CHECK_BENCH_ARGS"; fi
PYTEST=("$PY" -m pytest -p no:cacheprovider -q)

part() {  # part NAME LIMIT_S LOG COMMAND...: run it under its limit, record its status and time
  local name=$1 limit=$2 log=$3
  shift 3
  echo "== $name (limit ${limit} s): $*"
  local start end rc
  start=$(date +%s.%N)
  timeout --signal=INT --kill-after=20 "$limit" "$@" > "$STAGE/$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  tail -n 4 "$STAGE/$log"
  # an empty log goes: at most 8 files come back from $OUT should the whole call be cut short
  if [ ! -s "$STAGE/$log" ]; then rm -f "$STAGE/$log"; fi
  "$PY" -c 'import json, sys; n, rc, a, b, lim, log = sys.argv[1:]; print(json.dumps({"part": n, "rc": int(rc),
    "seconds": round(float(b) - float(a), 1), "limit": int(lim), "log": log}))' \
    "$name" "$rc" "$start" "$end" "$limit" "$log" >> "$STAGE/parts.jsonl"
}

part facts "$FACTS_S" facts.log "$PY" -m benchmarks.gpu_check facts "$STAGE/facts.json"
RELEASE=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("torch_release", ""))' \
  "$STAGE/facts.json" 2>/dev/null)
# the machine's torch is the reference, whatever its release (the report states it)
if [ -n "$RELEASE" ]; then export ORACLE_REFERENCE_VERSION=$RELEASE; fi

part "device tests" "$DEVICE_S" device.log "${PYTEST[@]}" tests/impl/test_impl_device.py -n "$WORKERS" \
  --junitxml="$STAGE/device.xml" "${DEVICE_TESTS[@]}"
part conformance "$CONFORMANCE_S" conformance.log "${PYTEST[@]}" conformance --device cuda -n "$WORKERS" \
  --hypothesis-profile=dev --hypothesis-seed=0 ${RELEASE:+--reference-version "$RELEASE"} \
  --results "$STAGE/results.json" "${CONFORMANCE[@]}"
# timed with torch.cuda.synchronize / cupy's deviceSynchronize at the end of every timed call
# (benchmarks/workloads.py); W1 last, its long chains take the longest
part bench_gpu "$BENCH_S" bench.log "${PYTEST[@]}" benchmarks/test_w2_mlp.py benchmarks/test_w3_cnn.py \
  benchmarks/test_w1_chain.py -m gpu -p no:xdist --benchmark-columns=median,iqr,rounds \
  --bench-json "$STAGE/benchmarks.json" "${BENCH[@]}"

SUMMARY=$("$PY" -m benchmarks.gpu_check summary "$STAGE" "$OUT")
STATUS=$?
for kept in results.json benchmarks.json; do
  if [ -f "$STAGE/$kept" ]; then cp "$STAGE/$kept" "$OUT/$kept"; fi
done
tar -czf "$OUT/gpu_check.tar.gz" -C "$OUT" gpu_check && rm -rf "$STAGE"
echo
echo "$SUMMARY"
exit "$STATUS"
