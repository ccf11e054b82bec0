"""profiling/protocol_timeline.py without a GPU: its instrumented copies of lookback.cu and
tile_state.cuh still compile (the anchors are where it expects them), kernels_cu/ is left as it
was, and its analysis reads the stamps inside the protocol as intended."""

from __future__ import annotations

import numpy as np
import pytest

from _profiling import assert_timeline_kernels_compile, load_script
from rtscan import _compile


@pytest.fixture(scope="module")
def protocol_timeline():
    return load_script("protocol_timeline")


def test_instrumented_kernels_compile(protocol_timeline):
    original = _compile.kernels_dir()
    with protocol_timeline.instrumented_kernels() as copy:
        assert _compile.kernels_dir() == copy and "protocol_stamps" in (copy / "tile_state.cuh").read_text()
        assert_timeline_kernels_compile(protocol_timeline.instrument_lookback((copy / "lookback.cu").read_text()))
    assert _compile.kernels_dir() == original and "protocol_stamps" not in (original / "tile_state.cuh").read_text()


def test_instrument_refuses_a_moved_anchor(protocol_timeline):
    with pytest.raises(ValueError, match="update _EDITS"):
        protocol_timeline.instrument_tile_state("namespace rtscan {\n}")


def test_analysis_of_known_stamps(protocol_timeline):
    # Tile t starts at t us; its first pass is done 1 us later, its aggregate 2 us later, it has
    # seen its mates 4 us later, its look-back is done 5 us later, its carry 5.5 us later, and it
    # ends 6 us after starting.
    tiles = 200
    start = np.arange(tiles) * 1000
    main = np.stack([start, start + 2000, start + 5500, start + 6000, np.zeros(tiles), start + 1000,
                     start], axis=1)  # each block entered as it drew its ticket
    inside = np.stack([start + 4000, start + 5000], axis=1)
    lines = protocol_timeline.analyse(main.astype(np.int64), inside.astype(np.int64))
    values = {line[:46].strip(): line.split()[-5:] for line in lines if line.startswith("  ")}
    assert values["mates seen - own aggregate"] == ["2.00"] * 5
    # the previous tile's, 1 us earlier; a segment's first tile, which has no mates, left out
    assert values["mates seen - last mate's aggregate"] == ["3.00"] * 5
    assert values["look-back done - mates seen"] == ["1.00"] * 5
    assert values["carry - look-back done"] == ["0.50"] * 5
