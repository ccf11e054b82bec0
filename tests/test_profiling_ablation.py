"""profiling/ablation.py without a GPU: every twin's edits find their anchors in the instrumented
kernel and the twin compiles (in the long shape, which the script runs by default); its span
reading of known stamps."""

from __future__ import annotations

import numpy as np
import pytest

from _profiling import TIMELINE_EXPRESSIONS, load_script
from rtscan import _compile

LONG_SHAPE = TIMELINE_EXPRESSIONS[3]  # the shape the twins are run on (a protocol warp, two-level, runs)


@pytest.fixture(scope="module")
def ablation():
    return load_script("ablation")


@pytest.mark.parametrize("twin", ["norewrite", "nofirstscan", "nocarry", "all"])
def test_twin_compiles(ablation, twin):
    original = (_compile.kernels_dir() / "lookback.cu").read_text()
    text = ablation.instrument(twin)(original)
    assert text != ablation.instrument("base")(original)
    module = _compile.nvrtc_compile("lookback.cu", (LONG_SHAPE,), _compile.CompileOptions(arch="sm_90"),
                                    text=text.encode())
    assert module.cubin and module.lowered_names[LONG_SHAPE].startswith("_Z")


def test_spans_of_known_stamps(ablation):
    # Two tiles: entries at 0 and 0.1 us, ends at 5 and 7 us (the stamps' columns as timeline.py's).
    stamps = np.array([[500, 3000, 4000, 5000, 0, 2000, 0], [700, 3500, 4500, 7000, 1, 2500, 100]], np.int64)
    span, medians = ablation.spans(stamps)
    assert span == 7.0
    assert medians == [0.6, 2.25, 3.25, 4.25, 6.0]
