"""The lanes-across-sequences variants (columns, columns_lookback) on the time-major batches they are
for, against the float64 reference: groups of 32, 16 and 8 sequences full and partial, chunk edges, h0,
reverse, (B, L, D) along L, a transposed out, and bitwise determinism over repeated runs.
(test_scan_gpu_variants.py runs them on the layouts every variant shares.)"""

from __future__ import annotations

import numpy as np
import pytest

from _gpu import cuda, regime, scan_and_check, torch
from rtscan import registry

pytestmark = pytest.mark.gpu

NAMES = ["columns", "columns_lookback"]


def chunk_steps(name: str, sequences: int = 4096) -> int:
    """Steps a sequence has in one of the variant's sm_90 tiles (or chunks) with this many sequences."""
    variant = registry.resolve(name)
    shape = variant.launch_shape("sm_90", "float32", 1, 2**20, sequences)
    return shape.steps_per_sequence


def lengths(name: str, sequences: int) -> list[int]:
    steps = chunk_steps(name, sequences)
    return [1, 7, steps - 1, steps, steps + 1, 3 * steps + 5] + ([40 * steps + 3] if sequences < 1000 else [])


# 5-8, 9-16 and 2049 sequences: columns_lookback's fewest, few and long shapes (tuning.py's
# to_sequences and from_sequences)
CASES = [pytest.param(name, length, sequences, id=f"{name}-L{length}-S{sequences}")
         for name in NAMES for sequences in (1, 5, 8, 9, 16, 17, 31, 32, 33, 100, 2049)
         for length in lengths(name, sequences)]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name,length,sequences", CASES)
def test_time_major(rng, name, length, sequences, reverse):
    """(steps, sequences) along dim 0, with h0: each lane's sequence in its group of 32, 16 or 8."""
    a_np, b_np = regime(rng, "mixed", (length, sequences))
    h0 = cuda(rng.uniform(-2, 2, sequences).astype(np.float32))
    scan_and_check(cuda(a_np), cuda(b_np), h0=h0, dim=0, reverse=reverse, variant=name,
                   what=f"{name} ({length}, {sequences}) reverse={reverse}")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", [(3, 2000, 70), (2, 5000, 16), (4, 300, 512)])
def test_batch_length_width_along_length(rng, name, shape):
    """(B, L, D) along L: B x D sequences, D of them side by side."""
    a_np, b_np = regime(rng, "mixed", shape)
    h0 = cuda(rng.uniform(-2, 2, (shape[0], shape[2])).astype(np.float32))
    scan_and_check(cuda(a_np), cuda(b_np), h0=h0, dim=1, variant=name, what=f"{name} {shape}")


@pytest.mark.parametrize("name", NAMES)
def test_transposed_out_and_strided_time(rng, name):
    """Time-major in, sequence-major out; and every other step of a time-major array."""
    length = 5 * chunk_steps(name, 40) + 3
    a_np, b_np = regime(rng, "mixed", (length, 40))
    out = torch.full((40, length), float("nan"), device="cuda").T
    scan_and_check(cuda(a_np), cuda(b_np), dim=0, out=out, variant=name, what=f"{name} out transposed")
    a_np, b_np = regime(rng, "mixed", (2 * length, 40))
    scan_and_check(cuda(a_np)[::2], cuda(b_np)[::2], dim=0, variant=name, what=f"{name} every other step")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("sequences", [64, 4096])
def test_bitwise_deterministic(rng, name, sequences):
    """Many chunks a sequence (the look-back finds its own pattern of finished predecessors each
    run): every run gives the same bits."""
    import rtscan

    steps = chunk_steps(name, sequences)
    length = 300 * steps + 11 if sequences == 64 else 20 * steps + 11
    a_np, b_np = regime(rng, "decay", (length, sequences))
    a, b = cuda(a_np), cuda(b_np)
    first = scan_and_check(a, b, dim=0, variant=name, what=f"{name} ({length}, {sequences})")
    out = torch.empty_like(a)
    for run in range(5):
        out.fill_(float("nan"))
        rtscan.scan(a, b, dim=0, out=out, variant=name)
        assert torch.equal(out, first), f"{name}: run {run + 2} differs from the first"
