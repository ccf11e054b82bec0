"""profiling/ablation.py without a GPU: every twin's edits find their anchors in the instrumented
kernel and the twin compiles (in the long shape, which the script runs by default); its span
reading of known stamps."""

from __future__ import annotations

import numpy as np
import pytest

from _profiling import TIMELINE_EXPRESSIONS, load_script
from rtscan import _compile

LONG_SHAPE = TIMELINE_EXPRESSIONS[3]  # the shape the twins are run on (a protocol warp, two-level, runs)
NO_RUNS_SHAPE = TIMELINE_EXPRESSIONS[1]  # the same without runs: the one with a rewrite to remove


@pytest.fixture(scope="module")
def ablation():
    return load_script("ablation")


@pytest.mark.parametrize("twin,expression", [("norewrite", NO_RUNS_SHAPE), ("nofirstscan", LONG_SHAPE),
                                             ("nocarry", LONG_SHAPE), ("all", LONG_SHAPE), ("all", NO_RUNS_SHAPE)])
def test_twin_compiles(ablation, twin, expression):
    original = (_compile.kernels_dir() / "lookback.cu").read_text()
    text = ablation.instrument(twin)(original)
    assert text != ablation.instrument("base")(original)
    module = _compile.nvrtc_compile("lookback.cu", (expression,), _compile.CompileOptions(arch="sm_90"),
                                    text=text.encode())
    assert module.cubin and module.lowered_names[expression].startswith("_Z")


def test_shapes_with_runs_have_no_rewrite_to_remove(ablation):
    assert set(ablation.twins_for("352x48r16b2d1p1")) == set(ablation.TWINS)
    with_runs = ablation.twins_for("352x48r16b2d1p1u2")
    assert "norewrite" not in with_runs and ablation._NO_REWRITE not in with_runs["all"]
    assert with_runs["nocarry"] == ablation.TWINS["nocarry"]


def test_spans_of_known_stamps(ablation):
    # Two tiles: entries at 0 and 0.1 us, ends at 5 and 7 us (the stamps' columns as timeline.py's).
    stamps = np.array([[500, 3000, 4000, 5000, 0, 2000, 0], [700, 3500, 4500, 7000, 1, 2500, 100]], np.int64)
    span, medians = ablation.spans(stamps)
    assert span == 7.0
    assert medians == [0.6, 2.25, 3.25, 4.25, 6.0]
