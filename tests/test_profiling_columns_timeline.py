"""profiling/columns_timeline.py without a GPU: its instrumented copy of columns_lookback still
compiles (the anchors are where it expects them), and its shapes read as columns_sweep.py's."""

from __future__ import annotations

import pytest

from _profiling import load_script
from rtscan import _compile, registry


@pytest.fixture(scope="module")
def columns_timeline():
    return load_script("columns_timeline")


def test_instrumented_kernel_compiles(columns_timeline):
    text = columns_timeline.instrument((_compile.kernels_dir() / "columns_lookback.cu").read_text())
    assert text.count("stamp()") == 7  # the helper, then `entered`, `started`, steps composed, aggregate, carry, end
    variant = registry.resolve("columns_lookback")
    expressions = tuple(
        variant.name_expression(columns_timeline.launch_shape(shape)).replace("_scan<", "_scan_timeline<")
        for shape in ("512x64r32b1d2s16", "256x64r32b2d2s8", "128x48r16b5d1"))
    module = _compile.nvrtc_compile("columns_lookback.cu", expressions, _compile.CompileOptions(arch="sm_90"),
                                    text=text.encode())
    assert module.cubin and all(module.lowered_names[e].startswith("_Z") for e in expressions)


def test_instrument_refuses_a_moved_anchor(columns_timeline):
    with pytest.raises(ValueError, match="update _EDITS"):
        columns_timeline.instrument("namespace rtscan {\n}")


def test_shape_fields_come_from_the_text_and_the_short_entry(columns_timeline):
    shape = columns_timeline.launch_shape("256x64r32b2d2s8")
    assert (shape.block_threads, shape.items, shape.register_items, shape.min_blocks, shape.lookback_depth,
            shape.sequences_per_tile, shape.vec) == (256, 64, 32, 2, 2, 8, 1)
    assert columns_timeline.launch_shape("128x48r16b5d1").sequences_per_tile == 32


def test_inside_stamps_compile(columns_timeline):
    """--inside: lane_lookback.cuh instrumented in a temporary kernels folder, the kernel pointing
    lane_stamps past the main stamps; both still compile."""
    header = columns_timeline.instrument_lane_lookback((_compile.kernels_dir() / "lane_lookback.cuh").read_text())
    assert header.count("stamp()") == 3  # the helper, the first round's return, the finished one found
    with columns_timeline.protocol_timeline.instrumented_kernels(columns_timeline.instrument_lane_lookback,
                                                                 "lane_lookback.cuh"):
        text = columns_timeline.instrument_with_inside((_compile.kernels_dir() / "columns_lookback.cu").read_text())
        assert "lane_stamps = times + 7 * num_tiles;" in text
        expression = registry.resolve("columns_lookback").name_expression(
            columns_timeline.launch_shape("512x64r32b1d2s16")).replace("_scan<", "_scan_timeline<")
        module = _compile.nvrtc_compile("columns_lookback.cu", (expression,), _compile.CompileOptions(arch="sm_90"),
                                        text=text.encode())
    assert module.cubin
