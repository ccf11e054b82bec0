#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck on every variant, at a small and a medium size, with
# the 16-byte and the scalar path (issue 3). Logs under $OUT (or ./sanitizer-logs); the summary
# line of each run is printed. Run from the repository root on a GPU machine, as run_on_gpu.sh:
#   bash profiling/sanitize.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-sanitizer-logs}"
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:-.}" RTSCAN_CACHE_DIR="${RTSCAN_CACHE_DIR:-/tmp/rtscan-cache}"
variants=$(python3 -c "import rtscan; print(' '.join(v['name'] for v in rtscan.variants()))")
for tool in memcheck racecheck; do
    for variant in $variants; do
        for length in 4099 1048579; do
            log="$out/$tool-$variant-$length.txt"
            compute-sanitizer --tool "$tool" --error-exitcode 3 python3 - "$variant" "$length" > "$log" 2>&1 <<'PY'
import sys
import numpy as np
import torch
import rtscan

variant, length = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng()
a = torch.from_numpy(rng.uniform(-1, 1, (2, length)).astype(np.float32)).cuda()
b = torch.from_numpy(rng.standard_normal((2, length)).astype(np.float32)).cuda()
h_aligned = rtscan.scan(a, b, variant=variant)                     # 16-byte path where the variant has one
h_strided = rtscan.scan(a.t().contiguous().t(), b.t().contiguous().t(), variant=variant)  # time stride 2: scalar
torch.cuda.synchronize()
expected = rtscan.reference.scan(a.cpu().numpy(), b.cpu().numpy())
for h in (h_aligned, h_strided):
    assert np.allclose(h.cpu().numpy(), expected, rtol=1e-3, atol=1e-3), "wrong result under the sanitizer"
print("ran", variant, length)
PY
            status=$?
            echo "$tool $variant L=$length: exit $status; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
        done
    done
done | tee "$out/summary.txt"
