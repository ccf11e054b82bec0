"""The 16-byte shapes really move 16 bytes at a time, with no GPU: in NVRTC's PTX, every kernel
that writes steps on the 16-byte path holds a st.global.v4.f32 for each array it writes per chunk,
and lookback_scan reads its staged steps back with ld.shared.v4.f32.

A float4 assignment once left the vector store to NVVM, which split it into four 4-byte stores
after unrelated code moved; the kernels stayed correct and lost 7 % at 2^28 (profiling/
PREDICTIONS.md, P19 and P21). Only the instruction mix shows it, so it is checked here."""

from __future__ import annotations

import re

import pytest

from rtscan import _compile, _kernels
from rtscan.registry import VARIANTS

# 16-byte global stores per chunk a thread writes, by kernel template; kernels absent write no
# steps (one aggregate or carry per tile) and hold none.
STORES_PER_CHUNK = {"rtscan::lookback_scan": 1, "rtscan::blelloch_scan": 1, "rtscan::three_pass_tile_pairs": 2,
                    "rtscan::three_pass_apply_pairs": 1, "rtscan::three_pass_rescan": 1}


def _entry_body(ptx: str, lowered: str) -> str:
    start = ptx.index(f".entry {lowered}(")
    end = ptx.find(".entry ", start + 1)
    return ptx[start:end if end >= 0 else len(ptx)]


def _count(pattern: str, body: str) -> int:
    return len(re.findall(pattern, body))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_sixteen_byte_shapes_move_sixteen_bytes(name, arch):
    variant = VARIANTS[name]
    shapes = [s for s in _kernels.shapes_for(variant, arch) if s.vec == 4]
    if not shapes:
        pytest.skip(f"{name} has no 16-byte shape on {arch}")
    ptx, lowered = _compile.nvrtc_ptx(variant.source, variant.expressions(shapes), _compile.CompileOptions(arch=arch))
    checked = 0
    for shape in shapes:
        chunks = shape.items // shape.vec
        for expression in variant.name_expressions(shape):
            template = expression.split("<")[0]
            if template not in STORES_PER_CHUNK:
                continue
            body = _entry_body(ptx, lowered[expression])
            stores = _count(r"\bst\.global(\.\w+)*\.v4\.f32\b", body)
            assert stores >= STORES_PER_CHUNK[template] * chunks, (
                f"{expression}: {stores} 16-byte global stores for {chunks} chunks per thread")
            if template == "rtscan::lookback_scan":  # a and b of each staged chunk, in both passes
                staged_chunks = (shape.items - shape.register_items) // shape.vec
                loads = _count(r"\bld\.shared(\.\w+)*\.v4\.f32\b", body)
                assert loads >= 4 * staged_chunks, f"{expression}: {loads} 16-byte shared loads"
            checked += 1
    assert checked, f"{name}: no kernel that writes steps was checked"
