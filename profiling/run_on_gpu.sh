#!/usr/bin/env bash
# One batched GPU session, each step logged under $OUT (or ./gpu-logs): info; the GPU tests with
# the sanitizers beside them (neither times anything); then, alone on the GPU, the bench of every
# variant with the model, the batched shapes on both paths, each pass's time from CUDA events, and
# Nsight's per-pass figures.
# Runs from a source checkout (PYTHONPATH=.). A machine without the nvtx package gets it from
# wheels in .whl/ when present, fetched beforehand on a machine with an index:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_17_x86_64 -d .whl nvtx==0.2.17
# Usage: bash profiling/run_on_gpu.sh [pytest args...]   (about 6 minutes on an H200)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-logs}"
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:."
else
    export PYTHONPATH=.
fi
export PYTHONUNBUFFERED=1 RTSCAN_CACHE_DIR="${RTSCAN_CACHE_DIR:-/tmp/rtscan-cache}"
# The device's copy of the tree has no git history: record the commit from the checkout you sent.
python3 -m rtscan info 2>&1 | tee "$out/info.txt"
python3 -c "import rtscan; rtscan.warmup()"  # compile once, before the tests and the tools share the cache
python3 -m pytest -q -m gpu -p no:cacheprovider "$@" tests > "$out/gpu-tests.txt" 2>&1 &
tests=$!
OUT="$out" JOBS=6 CASE_SECONDS=200 timeout 400 bash profiling/sanitize.sh > /dev/null 2>&1 &
sanitizers=$!
wait $tests; tail -3 "$out/gpu-tests.txt"
wait $sanitizers; cat "$out/sanitizer-summary.txt"
python3 -m rtscan bench --variant all --model 2>&1 | tee "$out/bench-all.txt"
for misaligned in "" --misaligned; do
    python3 -m rtscan bench --shapes 65536x4096,8192x4096,64x65536 $misaligned 2>&1 | tee -a "$out/bench-shapes.txt"
done
python3 profiling/passes.py --log2 24,28 2>&1 | tee "$out/passes.txt"
bash profiling/nsight_passes.sh 24 2>&1 | tee "$out/nsight.txt"
