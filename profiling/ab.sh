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
#
# With PER_ROW=1 and --shapes, each row runs in a bench process of its own: then both versions
# allocate its buffers after the same history (six fresh processes ran 64 x 65536 within 1 %, P175,
# where the same row after other rows moved 0.81-0.87 between versions, P173-P174). Rows near the L2's
# size run a few per cent faster or slower warm by where their pages lie (64 x 65536 0.83-0.91 by
# placement alone: P176, NOTES 112), which in one process follows the rows before them and their
# routes, and can differ between the versions.
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
bench() {  # bench VERSION_FOLDER ARGS...: one process, or one a row with PER_ROW=1
    local version=$1 args=() rows=""
    shift
    while [ $# -gt 0 ]; do
        case "${PER_ROW:-0} $1" in
            "1 --shapes") rows=${2:?--shapes needs its rows}; shift 2 ;;
            "1 --shapes="*) rows=${1#--shapes=}; shift ;;
            *) args+=("$1"); shift ;;
        esac
    done
    if [ -z "$rows" ]; then
        run "$version" -m rtscan bench ${args[@]+"${args[@]}"}
        return
    fi
    for row in ${rows//,/ }; do
        run "$version" -m rtscan bench ${args[@]+"${args[@]}"} --shapes "$row"
    done
}
for round in $(seq "${ROUNDS:-2}"); do
    for version in "$base" "$here"; do
        echo "== $([ "$version" = "$here" ] && echo NEW || echo BASE) ($version) round $round"
        bench "$version" "$@"
    done
done
