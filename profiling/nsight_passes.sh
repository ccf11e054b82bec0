#!/usr/bin/env bash
# Nsight Compute picks out each pass of a multi-pass variant by its NVTX range (domain "rtscan"),
# and reports its time and DRAM bytes, to set beside rtscan/model.py's bytes for that pass.
# Run from the repository root on a GPU machine with ncu:  bash profiling/nsight_passes.sh [LOG2]
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="${PYTHONPATH:-.}"
log2="${1:-24}"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
one_scan=$(mktemp --suffix=.py)
cat > "$one_scan" <<PY
import sys, torch, rtscan
n = 1 << $log2
a = torch.rand(n, device="cuda") * 0.5 + 0.5
b = torch.randn(n, device="cuda")
for _ in range(2):  # the first call compiles or loads; both are profiled
    rtscan.scan(a, b, variant=sys.argv[1])
    torch.cuda.synchronize()
PY
for variant in three_pass three_pass_reduce; do
    for pass in 1 2 3; do
        name=$(python3 -c "from rtscan import registry; print(registry.VARIANTS['$variant'].pass_kernels[$pass - 1].range_name)")
        echo "== ncu --nvtx --nvtx-include 'rtscan@$name/' (2^$log2 steps)"
        ncu --clock-control none --nvtx --nvtx-include "rtscan@$name/" --metrics "$metrics" python3 "$one_scan" "$variant" 2>&1 \
            | grep -E '^  [a-z].*\(|dram__bytes|gpu__time_duration'
    done
done
echo "== ncu --nvtx --nvtx-include 'rtscan@rtscan.scan/' for lookback_regs (one pass)"
ncu --clock-control none --nvtx --nvtx-include "rtscan@rtscan.scan/" --metrics "$metrics" python3 "$one_scan" lookback_regs 2>&1 \
    | grep -E '^  [a-z].*\(|dram__bytes|gpu__time_duration'
rm -f "$one_scan"
