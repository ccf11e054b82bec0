"""One compute-sanitizer case of profiling/sanitize.sh: scan two sequences of LENGTH steps with
VARIANT, through the 16-byte path (time contiguous; LENGTH a multiple of 4, or the second
sequence is misaligned and the scalar path runs instead) and the scalar path (time stride 2), from
NumPy host arrays so no framework's kernels run under the tool; check against the reference.

With a third argument `any_total`, a 16-byte launch takes the variant's large or long shape
whenever a sequence fills one of its tiles, whatever the launch's total steps (as the GPU tests do,
tests/conftest.py): that puts shapes meant for 2^21 or 2^24 steps and more under the tools at a
size they can finish.

Usage: PYTHONPATH=. python3 profiling/sanitize_case.py VARIANT LENGTH [any_total]
"""

import sys

import numpy as np

import rtscan

variant, length = sys.argv[1], int(sys.argv[2])
if sys.argv[3:] == ["any_total"]:
    table = rtscan.registry.resolve(variant).table
    for key, entry in table.items():
        table[key] = rtscan.registry.any_total(entry)
elif sys.argv[3:]:
    sys.exit(f"the third argument may only be any_total, got {sys.argv[3:]}")
if length % 4:
    sys.exit(f"LENGTH must be a multiple of 4 for the contiguous case to take the 16-byte path, got {length}")
rng = np.random.default_rng()
a = rng.uniform(-1, 1, (2, length)).astype(np.float32)
b = rng.standard_normal((2, length)).astype(np.float32)
expected = rtscan.reference.scan(a, b)
contiguous = rtscan.scan(a, b, variant=variant)                              # 16-byte path
strided = rtscan.scan(a.T.copy(), b.T.copy(), dim=0, variant=variant).T      # time stride 2: scalar
for what, h in (("contiguous", contiguous), ("strided", strided)):
    if not np.allclose(h, expected, rtol=1e-3, atol=1e-3):
        sys.exit(f"{variant} L={length} {what}: wrong result under the sanitizer")
print("ran", variant, length)
