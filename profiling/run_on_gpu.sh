#!/usr/bin/env bash
# One batched GPU session: info, the GPU tests, the bench, each logged under $OUT (or ./gpu-logs).
# Runs from a source checkout (PYTHONPATH=.). A machine without the nvtx package gets it from
# wheels in .whl/ when present, fetched beforehand on a machine with an index:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_17_x86_64 -d .whl nvtx==0.2.17
# Usage: bash profiling/run_on_gpu.sh [pytest args...]
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
python3 -m pytest -q -m gpu -p no:cacheprovider "$@" tests 2>&1 | tee "$out/gpu-tests.txt" | tail -25
python3 -m rtscan bench 2>&1 | tee "$out/bench.txt"
