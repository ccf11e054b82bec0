"""A shape's `atomic_polls` reaches its kernel, with no GPU: in NVRTC's PTX, a kernel tuned to
poll by atomics polls only by atom.relaxed.gpu.global.or.b64 (with 0), and one tuned to poll by
strong loads only by ld.relaxed.gpu.global.u64 (kernels_cu/tile_state.cuh, poll_relaxed_gpu); a kernel
of row warps, by neither.

The two read the same word under the same contract, so no output shows which one ran; on an H200
they move a variant's time by up to a fifth either way (profiling/PREDICTIONS.md, P86-P87). Only
the instructions show it, so it is checked here."""

from __future__ import annotations

import re

import pytest

from rtscan import _compile, _kernels
from rtscan.registry import VARIANTS

ATOMIC_POLL = r"\batom\.relaxed\.gpu\.global\.or\.b64\b"
STRONG_POLL = r"\bld\.relaxed\.gpu\.global\.u64\b"
POLLING = sorted(name for name, variant in VARIANTS.items() if not variant.pass_kernels)  # the look-back's users


def _entry_body(ptx: str, lowered: str) -> str:
    start = ptx.index(f".entry {lowered}(")
    end = ptx.find(".entry ", start + 1)
    return ptx[start:end if end >= 0 else len(ptx)]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", POLLING)
def test_each_shape_polls_as_tuned(name, arch):
    variant = VARIANTS[name]
    shapes = _kernels.shapes_for(variant, arch)
    ptx, lowered = _compile.nvrtc_ptx(variant.source, variant.expressions(shapes), _compile.CompileOptions(arch=arch))
    for shape in shapes:
        expression = variant.name_expression(shape)
        body = _entry_body(ptx, lowered[expression])
        atomic, strong = (len(re.findall(pattern, body)) for pattern in (ATOMIC_POLL, STRONG_POLL))
        if variant.row_warps(shape):  # every row one tile, nothing to wait for
            assert not atomic and not strong, f"{expression}: {atomic} atomic polls, {strong} strong-load polls"
        elif shape.atomic_polls:
            assert atomic and not strong, f"{expression}: {atomic} atomic polls, {strong} strong-load polls"
        else:
            assert strong and not atomic, f"{expression}: {atomic} atomic polls, {strong} strong-load polls"


def test_sm_90_has_both_kinds():
    """The test above would pass vacuously if every tuned shape polled one way."""
    kinds = {shape.atomic_polls for name in POLLING for shape in _kernels.shapes_for(VARIANTS[name], "sm_90")}
    assert kinds == {0, 1}
