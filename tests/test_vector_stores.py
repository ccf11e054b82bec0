"""The 16-byte shapes really store 16 bytes at a time, with no GPU: NVRTC's PTX of every kernel that
writes steps on the 16-byte path holds one st.global.v4.f32 per chunk a thread writes.

A float4 assignment once left the vector store to NVVM, which split it into four 4-byte stores
after unrelated code moved; the kernels stayed correct and lost 7 % at 2^28 (profiling/
PREDICTIONS.md, P19 and P21). Only the instruction count shows it, so it is checked here."""

from __future__ import annotations

import re

import pytest

from rtscan import _compile, _kernels
from rtscan.registry import VARIANTS

# Kernels of 16-byte shapes that write no steps (one aggregate per tile), so hold no 16-byte store.
WRITE_NO_STEPS = ("three_pass_tile_aggregates", "three_pass_carries")


def _ptx(source: str, expressions: tuple[str, ...], arch: str) -> tuple[str, dict[str, str]]:
    """NVRTC's PTX of kernels_cu/<source> for compute_XY, and each expression's lowered name."""
    from cuda.bindings import nvrtc

    arguments = [a.replace("-arch=sm_", "-arch=compute_")
                 for a in _compile.CompileOptions(arch=arch).arguments(_compile._include_dirs())]
    err, program = nvrtc.nvrtcCreateProgram((_compile.kernels_dir() / source).read_bytes(), source.encode(), 0, [], [])
    assert int(err) == 0
    try:
        for expression in expressions:
            assert int(nvrtc.nvrtcAddNameExpression(program, expression.encode())[0]) == 0
        assert int(nvrtc.nvrtcCompileProgram(program, len(arguments), [a.encode() for a in arguments])[0]) == 0
        err, size = nvrtc.nvrtcGetPTXSize(program)
        ptx = b" " * size
        assert int(nvrtc.nvrtcGetPTX(program, ptx)[0]) == 0
        lowered = {e: nvrtc.nvrtcGetLoweredName(program, e.encode())[1].decode() for e in expressions}
        return ptx.decode(errors="replace"), lowered
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _entry_body(ptx: str, lowered: str) -> str:
    start = ptx.index(f".entry {lowered}(")
    end = ptx.find(".entry ", start + 1)
    return ptx[start:end if end >= 0 else len(ptx)]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_sixteen_byte_shapes_store_sixteen_bytes(name, arch):
    variant = VARIANTS[name]
    shapes = [s for s in _kernels.shapes_for(variant, arch) if s.vec == 4]
    expressions = tuple(dict.fromkeys(e for s in shapes for e in variant.name_expressions(s)))
    if not expressions:
        pytest.skip(f"{name} has no 16-byte shape on {arch}")
    ptx, lowered = _ptx(variant.source, expressions, arch)
    checked = 0
    for shape in shapes:
        for expression in variant.name_expressions(shape):
            if any(k in expression for k in WRITE_NO_STEPS):
                continue
            body = _entry_body(ptx, lowered[expression])
            vector_stores = len(re.findall(r"\bst\.global(\.\w+)*\.v4\.f32\b", body))
            chunks = shape.items // shape.vec
            assert vector_stores >= chunks, (
                f"{expression}: {vector_stores} 16-byte global stores for {chunks} chunks per thread")
            checked += 1
    assert checked, f"{name}: no kernel that writes steps was checked"
