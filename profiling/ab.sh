#!/usr/bin/env bash
# A/B of two kernel versions in one run on one GPU (lent machines differ by several per cent, so
# only ratios from one run compare; PREDICTIONS.md P10-P13 were measured this way): alternates
# `python -m rtscan bench` between BASE (a folder holding another version's rtscan/ and
# kernels_cu/) and this checkout, ROUNDS times (default 2). Extra arguments go to the bench.
# Prepare BASE where git history is, e.g.:
#   mkdir -p .scratch/base && git archive REF rtscan kernels_cu | tar x -C .scratch/base
# then, on the GPU machine (carry .scratch):  bash profiling/ab.sh .scratch/base --min-log2 24
set -uo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: bash profiling/ab.sh BASE_FOLDER [bench args...]}"
shift
[ -d "$base/rtscan" ] && [ -d "$base/kernels_cu" ] || { echo "$base must hold rtscan/ and kernels_cu/" >&2; exit 2; }
site="${PYTHONPATH:+$PYTHONPATH:}"
export RTSCAN_CACHE_DIR="${RTSCAN_CACHE_DIR:-/tmp/rtscan-cache}" PYTHONUNBUFFERED=1
for version in "$base" .; do PYTHONPATH="$site$version" python3 -c "import rtscan; rtscan.warmup()"; done
for round in $(seq "${ROUNDS:-2}"); do
    for version in "$base" .; do
        echo "== $([ "$version" = . ] && echo NEW || echo "BASE ($version)") round $round"
        PYTHONPATH="$site$version" python3 -m rtscan bench "$@"
    done
done
