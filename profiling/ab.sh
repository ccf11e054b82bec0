#!/usr/bin/env bash
# A/B of two kernel versions in one run on one GPU (lent machines differ by several per cent, so
# only ratios from one run compare; PREDICTIONS.md P10-P13 were measured this way): alternates
# `python -m rtscan bench` between BASE (a folder holding another version's rtscan/ and
# kernels_cu/) and this checkout, ROUNDS times (default 2). Extra arguments go to the bench.
# Prepare BASE where git history is, e.g.:
#   mkdir -p .scratch/base && git archive REF rtscan kernels_cu | tar x -C .scratch/base
# then, on the GPU machine (carry .scratch):  bash profiling/ab.sh .scratch/base --min-log2 24
#
# Each version is imported with `python3 -P` and its folder first on PYTHONPATH: plain `python3 -m`
# puts the current directory ahead of PYTHONPATH, so a BASE run started in this checkout would
# import this checkout's rtscan instead (that voided the A/B runs of P10, P11 and P13). Each run
# prints which rtscan and kernels_cu it imported. SITE may name a folder of extra packages (nvtx).
set -uo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: bash profiling/ab.sh BASE_FOLDER [bench args...]}"
shift
[ -d "$base/rtscan" ] && [ -d "$base/kernels_cu" ] || { echo "$base must hold rtscan/ and kernels_cu/" >&2; exit 2; }
base="$(cd "$base" && pwd)"
here="$(pwd)"
export RTSCAN_CACHE_DIR="${RTSCAN_CACHE_DIR:-/tmp/rtscan-cache}" PYTHONUNBUFFERED=1
run() {  # run VERSION_FOLDER ARGS...: python3 -P with that folder's rtscan
    local version=$1
    shift
    PYTHONPATH="$version${SITE:+:$SITE}" python3 -P "$@"
}
for version in "$base" "$here"; do
    run "$version" -c "import rtscan, rtscan._compile as c; rtscan.warmup(); print('imports', rtscan.__file__, c.kernels_dir())"
done
for round in $(seq "${ROUNDS:-2}"); do
    for version in "$base" "$here"; do
        echo "== $([ "$version" = "$here" ] && echo NEW || echo BASE) ($version) round $round"
        run "$version" -m rtscan bench "$@"
    done
done
