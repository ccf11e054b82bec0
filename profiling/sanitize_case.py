"""One compute-sanitizer case of profiling/sanitize.sh: scan two sequences of LENGTH steps with
VARIANT, through the 16-byte path (time contiguous; for the look-back kernels whatever LENGTH, each
row from its line, P196; for the others LENGTH a multiple of 4, or the scalar path runs instead)
and the scalar path (time stride 2), from NumPy host arrays so no framework's kernels run under the
tool; check against the reference.

With a third argument `any_total`, a 16-byte launch takes the variant's mid_batch, short_batch,
batch, large or long shape whenever a sequence fills one of its tiles (mid_batch and long_batch: as
their fill_edge allows), whatever the launch's total steps (as the GPU tests do, tests/conftest.py):
that puts shapes meant for more than 2^21 steps, or 2^24 and more, under the tools at a size they
can finish. With `long_batch`, the same, and the long_batch shape also takes two sequences (its
from_sequences lifted, as tests/test_mirrors.py does), so rows of 2^17-2^18 steps reach it. With
`long`, the same for the long kind: columns_lookback's long tile (from 2048 sequences) then takes
its two rows and its time-major batches; with `many`, the same for its many kind (the long tile at
four blocks an SM, from 8192 sequences, P258). With `rows`, the kinds for small launches (small_*)
and for few rows (*_few) are taken out and the rows_ kinds take two rows however many they are drawn
for (registry.as_a_batch), so two short rows take the tiles many rows take; with `few_rows`, only
the kinds for small launches are taken out, so they take the tiles of a few hundred. With `head`
instead, the two sequences lie in device memory 31 elements past the start of their allocations (a,
b and out alike), which the look-back kernels scan 16 bytes at a time from each row's line
(SeqLayout.head, P67, P196): the first row's head reads all 31; memcheck then sees whether a read or
write strays outside the allocations. columns and columns_lookback also scan time-major batches of
100 and 12 sequences.

Usage: PYTHONPATH=. python3 profiling/sanitize_case.py VARIANT LENGTH
       [any_total | long_batch | long | many | rows | few_rows | head]
"""

import sys

import numpy as np

import rtscan

# The variants for time-major batches also run (min(LENGTH, 20000), S) along dim 0, S sequences side
# by side: at 100 columns_lookback has four groups of 32 (the last part-full) and each its chunks, at
# 12 one part-full group of 16, two lanes a sequence (its two sequences above take a tile of 8).
TIME_MAJOR_VARIANTS = ("columns", "columns_lookback")
TIME_MAJOR_STEPS, TIME_MAJOR_SEQUENCES = 20000, (100, 12)

variant, length = sys.argv[1], int(sys.argv[2])
head = sys.argv[3:] == ["head"]
if sys.argv[3:] in (["any_total"], ["long_batch"], ["long"], ["many"]):
    table = rtscan.registry.resolve(variant).table
    any_sequences = (sys.argv[3],) if sys.argv[3] != "any_total" else ()
    for key, entry in table.items():
        table[key] = rtscan.registry.any_total(entry, any_sequences)
elif sys.argv[3:] in (["rows"], ["few_rows"]):
    table = rtscan.registry.resolve(variant).table
    for key, entry in table.items():
        table[key] = rtscan.registry.as_a_batch(entry, few_rows=sys.argv[3] == "few_rows")
elif sys.argv[3:] and not head:
    sys.exit(f"the third argument may only be any_total, long_batch, long, many, rows, few_rows or head, got "
             f"{sys.argv[3:]}")
rng = np.random.default_rng()
a = rng.uniform(-1, 1, (2, length)).astype(np.float32)
b = rng.standard_normal((2, length)).astype(np.float32)
expected = rtscan.reference.scan(a, b)


GUARDS = 31  # elements of 777 before each array in its allocation: a line less one element


class OnDevice:
    """A (2, length) float32 array GUARDS elements into its own allocation (__cuda_array_interface__),
    after guard elements of 777: memcheck cannot see a write there, so guards() reads them back."""

    def __init__(self, values: np.ndarray):
        from rtscan import _driver

        self.shape = values.shape
        self.pointer = _driver.alloc(4 * (values.size + GUARDS))
        host = np.concatenate([np.full(GUARDS, 777.0), np.ravel(values)]).astype(np.float32)
        _driver.copy_to_device(self.pointer, host.ctypes.data, host.nbytes, 0)
        _driver.synchronize(0)
        self.__cuda_array_interface__ = {"shape": values.shape, "typestr": "<f4",
                                         "data": (self.pointer + 4 * GUARDS, False), "strides": None, "version": 3}

    def _read_all(self) -> np.ndarray:
        from rtscan import _driver

        host = np.empty(int(np.prod(self.shape)) + GUARDS, np.float32)
        _driver.copy_to_host(host.ctypes.data, self.pointer, host.nbytes, 0)
        _driver.synchronize(0)
        return host

    def read(self) -> np.ndarray:
        return self._read_all()[GUARDS:].reshape(self.shape)

    def guards(self) -> np.ndarray:
        return self._read_all()[:GUARDS]


if head:
    rtscan._driver.make_current(0)
    out = OnDevice(np.zeros_like(a))
    rtscan.scan(OnDevice(a), OnDevice(b), out=out, variant=variant)
    if not (out.guards() == 777.0).all():
        sys.exit(f"{variant} L={length} head: an element before out was written under the sanitizer")
    results = (("head", out.read()),)
else:
    contiguous = rtscan.scan(a, b, variant=variant)                              # 16-byte path
    strided = rtscan.scan(a.T.copy(), b.T.copy(), dim=0, variant=variant).T      # time stride 2: scalar
    results = (("contiguous", contiguous), ("strided", strided))
    for sequences in TIME_MAJOR_SEQUENCES if variant in TIME_MAJOR_VARIANTS else ():
        steps = min(length, TIME_MAJOR_STEPS)
        a_tm = rng.uniform(-1, 1, (steps, sequences)).astype(np.float32)
        b_tm = rng.standard_normal((steps, sequences)).astype(np.float32)
        h = rtscan.scan(a_tm, b_tm, dim=0, variant=variant)
        if not np.allclose(h, rtscan.reference.scan(a_tm, b_tm, dim=0), rtol=1e-3, atol=1e-3):
            sys.exit(f"{variant} L={steps} S={sequences} time-major: wrong result under the sanitizer")
for what, h in results:
    if not np.allclose(h, expected, rtol=1e-3, atol=1e-3):
        sys.exit(f"{variant} L={length} {what}: wrong result under the sanitizer")
print("ran", variant, length)
