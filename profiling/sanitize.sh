#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck on every variant, at a small and a medium size, with the 16-byte
# and the scalar path (issue 3; each case is profiling/sanitize_case.py). The lengths are multiples of 4, so
# the second sequence starts 16-byte aligned and the contiguous case takes the 16-byte path; 2 x 1048580 steps
# also reach lookback_regs' long shape (past 2^21). More cases per tool run its mid_batch, short_batch and
# batch shapes (sm_90: two sequences or more, rows longer than one long tile to 2^17 steps that fill its tiles
# as fill_edge asks, rows shorter than 15/16 of one, rows of 2^17-2^18 steps) on 2 x 66000, 2 x 13000 and 2 x
# 140000 steps, its long_batch shape (128 sequences of 2^17-2^18 steps; sanitize_case.py's long_batch lifts
# the sequence count) on 2 x 140000 steps, and its large shape (from 2^24 on sm_90) on 2 x 300000 steps and on
# 2 x 5300000 steps: 628 of its tiles, more than 4 x 132 on an H200, so its blocks take claim_tile's stagger
# (kernels_cu/tile_state.cuh) under the tools too; columns_lookback's long tile (2048 sequences and more;
# `long` lifts the count) and its many tile (8192 and more; `many`) on 2 x 3000 steps and on 100 and 12
# time-major sequences of 3000; three more put rows off their lines, which the 16-byte path scans each from
# its own line (P67, P196): 2 x 1048580 and 2 x
# 4101 steps in device memory 31 elements past the allocation's start, 2 x 66001 on the mid_batch shape, and 2
# x 8191, whose first row's last tile holds no step (tiles are counted from the longest head); the tiles for
# short rows (P213, P215, P218, P222, P223, P227, P235, P238, P239) on 2 x 10001, 7000, 5001, 3072, 2048,
# 1536, 1024, 768, 512, 384, 256, 128, 64, 32, 20, 10, 8 and 100 steps (sanitize_case.py's `rows`: as many
# rows would take them) and on 2 x 1024 as a few hundred rows would (`few_rows`); packed rows on 2 x 50 with
# the rows 31 past a line; and the tiles for small launches (P217) on 2 x 4000, 2048 and 256, and on 2 x 984
# and 2 x 300 with the rows 31 past a line. Cases run JOBS at a time (default 6), each limited to CASE_SECONDS
# (default 300); VARIANTS (names, space separated) limits the cases of every variant (4100 and 1048580 steps)
# to those (default all). Logs under $OUT (or ./sanitizer-logs); summary.txt holds one line per case. Run from
# the repository root on a GPU:
#   bash profiling/sanitize.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-sanitizer-logs}"
mkdir -p "$out/sanitizer"
export PYTHONPATH="${PYTHONPATH:-.}" RTSCAN_CACHE_DIR="${RTSCAN_CACHE_DIR:-/tmp/rtscan-cache}" out
variants=${VARIANTS:-$(python3 -c "import rtscan; print(' '.join(v['name'] for v in rtscan.variants()))")}
python3 -c "import rtscan; rtscan.warmup()" 2>/dev/null  # fill the kernel cache once, outside the tools

one_case() {
    local tool=$1 variant=$2 length=$3 any_total=${4:-} log="$out/sanitizer/$1-$2-$3${4:+-$4}.txt"
    timeout "${CASE_SECONDS:-300}" compute-sanitizer --tool "$tool" --error-exitcode 3 \
        python3 profiling/sanitize_case.py "$variant" "$length" $any_total > "$log" 2>&1
    echo "$tool $variant L=$length${any_total:+ $any_total}: exit $?; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
}
export -f one_case
for tool in memcheck racecheck; do
    for variant in $variants; do
        for length in 4100 1048580; do echo "$tool $variant $length"; done
    done
    echo "$tool lookback_regs 66000 any_total"  # the mid_batch shape (the large kind's) at 4 tiles a sequence, the last 91 % full
    echo "$tool lookback_regs 13000 any_total"  # the short_batch shape at 4 tiles a sequence, chunks first
    echo "$tool lookback_regs 140000 any_total"  # the batch shape at 18 tiles a sequence, chunks first
    echo "$tool lookback_regs 140000 long_batch"  # the long tile at 9 tiles a sequence, chunks first
    echo "$tool columns_lookback 3000 long"  # its long tile (256 x 32, P249) on 2 rows and on 100 and 12 time-major
    echo "$tool columns_lookback 3000 many"  # its many tile (256 x 32 at four blocks an SM, P258), the same
    echo "$tool lookback_regs 300000 any_total"  # the large shape (sm_90: 2^24 steps and up) at 18 tiles
    echo "$tool lookback_regs 5300000 any_total"  # and at 538 tiles: several waves, the stagger
    echo "$tool lookback_regs 1048580 head"  # rows 31 and 3 elements past a line: row heads (P67, P196)
    echo "$tool lookback_regs 4101 head"  # rows 31 and 4 elements past a line, the short tile
    echo "$tool lookback_regs 66001 any_total"  # rows 0 and 17 elements past a line, the mid_batch shape
    echo "$tool lookback_regs 8191"  # rows 0 and 31 past a line: the first row's third short tile is empty
    echo "$tool lookback_regs 10001 rows"  # the tiles for short rows, a row a tile: rows_12288 (P239), from its line
    echo "$tool lookback_regs 7000 rows"  # rows_8192 (P238)
    echo "$tool lookback_regs 5001 rows"  # rows_6144 (P235)
    echo "$tool lookback_regs 3072 rows"  # rows_3072 (P213, P215, P218)
    echo "$tool lookback_regs 2048 rows"  # rows_2048
    echo "$tool lookback_regs 1536 rows"  # rows_1536: two warps
    echo "$tool lookback_regs 1024 rows"  # rows_1024: two warps of 16 steps
    echo "$tool lookback_regs 1024 few_rows"  # rows_1024_few: 128 x 8
    echo "$tool lookback_regs 768 rows"  # rows_768: one warp
    echo "$tool lookback_regs 512 rows"  # rows_512
    echo "$tool lookback_regs 384 rows"  # rows_384: three chunks a lane
    echo "$tool lookback_regs 256 rows"  # rows_256: blocks of four rows, a warp each (P222), two of them idle
    echo "$tool lookback_regs 128 rows"  # rows_128's packed rows (P227): a warp a row
    echo "$tool lookback_regs 64 rows"  # 16 lanes a row
    echo "$tool lookback_regs 32 rows"  # 8 lanes a row
    echo "$tool lookback_regs 20 rows"  # 5 lanes a row, six a warp and two lanes idle
    echo "$tool lookback_regs 8 rows"  # 2 lanes a row, sixteen a warp
    echo "$tool lookback_regs 10 rows"  # every other row 8 bytes off 16: a head lane or a short last vector (P228)
    echo "$tool lookback_regs 100 rows"  # rows off their line, a warp a row: head lanes, and idle lanes past the rest
    echo "$tool lookback_regs 50 head"  # rows 31 past a line, each from its 16 bytes: 14 lanes a row
    echo "$tool lookback_regs 4000"  # the tiles for small launches (P217): small_4096, 1024 threads
    echo "$tool lookback_regs 2048"  # small_2048
    echo "$tool lookback_regs 256"  # small_256
    echo "$tool lookback_regs 984 head"  # small_1024 with rows 31 past a line: 1015 steps from it
    echo "$tool lookback_regs 300 head"  # small_512, rows 31 past a line
done | xargs -P "${JOBS:-6}" -L 1 bash -c 'one_case "$@"' one_case | sort | tee "$out/sanitizer-summary.txt"
