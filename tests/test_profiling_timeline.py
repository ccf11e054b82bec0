"""profiling/timeline.py without a GPU: its instrumented copy of the kernel still compiles (the
anchors are where it expects them) and its analysis reads stamps as intended."""

from __future__ import annotations

import numpy as np
import pytest

from _profiling import assert_timeline_kernels_compile, load_script
from rtscan import _compile


@pytest.fixture(scope="module")
def timeline():
    return load_script("timeline")


def test_instrumented_kernel_compiles(timeline):
    text = timeline.instrument((_compile.kernels_dir() / "lookback.cu").read_text())
    assert text.count("stamp()") == 6  # the helper's definition is not a call: five stamps and `started`
    assert_timeline_kernels_compile(text)


def test_instrument_refuses_a_moved_anchor(timeline):
    with pytest.raises(ValueError, match="update _EDITS"):
        timeline.instrument("namespace rtscan {\n}")


def test_analysis_of_known_stamps(timeline):
    # Tile t starts at t us, thread 0's first pass is done 1 us later, its aggregate 2 us later, its carry
    # 5 us later, and it ends 6 us after starting.
    tiles = 100
    start = np.arange(tiles) * 1000
    stamps = np.stack([start, start + 2000, start + 5000, start + 6000, np.zeros(tiles), start + 1000], axis=1)
    lines = timeline.analyse(stamps.astype(np.int64))
    values = {line[:40].strip(): line.split()[-6:] for line in lines[1:8]}
    assert values["load and first pass (own done - start)"] == ["1.00"] * 6
    assert values["wait (carry - aggregate)"] == ["3.00"] * 6
    assert values["of it: protocol (carry - all out)"] == ["3.00"] * 6
    assert values["lifetime (end - start)"] == ["6.00"] * 6
    # Times count from tile 1's start (tile 0 is left out); tiles 1-6 start before tile 1 ends at 6 us.
    assert lines[-3].startswith("  first wave (6 tiles that started before any ended)")
    assert lines[-2] == "    aggregates out 2.0/4.5/7.0; carries 5.0/7.5/10.0; ends 6.0/8.5/11.0"
    assert lines[-1] == "    the next tiles' starts 6.0/8.5/11.0"


def test_saved_stamps_read_back(timeline, tmp_path):
    stamps = np.arange(12, dtype=np.uint64).reshape(2, 6)
    timeline.save_stamps(tmp_path / "new", "timeline-x", stamps)  # the folder is made
    assert np.array_equal(np.load(tmp_path / "new" / "timeline-x.npy"), stamps)
