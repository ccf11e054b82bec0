"""profiling/poll_timeline.py without a GPU: its instrumented copies of lookback.cu and
tile_state.cuh still compile (the anchors are where it expects them), kernels_cu/ is left as it
was, and its analysis dates polls and the moment a carry became determinable as intended."""

from __future__ import annotations

import numpy as np
import pytest

from _profiling import assert_timeline_kernels_compile, load_script
from rtscan import _compile


@pytest.fixture(scope="module")
def poll_timeline():
    return load_script("poll_timeline")


def test_instrumented_kernels_compile(poll_timeline):
    original = _compile.kernels_dir()
    with poll_timeline.protocol_timeline.instrumented_kernels(poll_timeline.instrument_tile_state) as copy:
        assert "poll_stamps" in (copy / "tile_state.cuh").read_text()
        lookback = poll_timeline.instrument_lookback((copy / "lookback.cu").read_text())
        assert "poll_stamps = times" in lookback and "protocol_stamps" not in lookback
        assert_timeline_kernels_compile(lookback)
    assert _compile.kernels_dir() == original and "poll_stamps" not in (original / "tile_state.cuh").read_text()


def test_instrument_refuses_a_moved_anchor(poll_timeline):
    with pytest.raises(ValueError, match="update _EDITS"):
        poll_timeline.instrument_tile_state("namespace rtscan {\n}")


def test_a_carry_is_determinable_once_a_finished_tile_and_the_aggregates_between_are_out(poll_timeline):
    aggregate = np.array([0.0, 5.0, 2.0, 3.0, 9.0])
    carry = np.array([1.0, 6.0, 7.0, 8.0, 10.0])
    # tile 1: tile 0 finished at 1; tile 2: tile 0 at 1 but tile 1's aggregate at 5, or tile 1
    # finished at 6: 5; tile 3: max(1, 5, 2) = 5 through tile 0; tile 4: through tile 0, 5
    assert poll_timeline.determinable(aggregate, carry).tolist() == [0.0, 1.0, 5.0, 5.0, 5.0]


def test_analysis_of_known_stamps(poll_timeline):
    # Ten tiles start 0.1 us apart (the first wave: all before tile 0 ends), then 200 more from
    # 30 us on, 1 us apart. Each has its aggregate out 2 us after its start, its carry 5 us after,
    # and ends 6 us after; it polled its nearest window twice, each round trip 1.5 us, the second
    # issued 4 us after its start, and walked no farther.
    polls = poll_timeline.TIMED_POLLS
    index = np.arange(210)
    start = np.where(index < 10, index * 100, 20000 + index * 1000)
    main = np.stack([start, start + 2000, start + 5000, start + 6000, np.zeros(210), start + 1000,
                     start], axis=1)  # each block entered as it drew its ticket
    inside = np.zeros((210, 2 * polls + 1), np.int64)
    inside[:, 0], inside[:, 1] = start + 2000, start + 3500
    inside[:, 2], inside[:, 3] = start + 4000, start + 5500
    inside[:, 2 * polls] = 2
    lines = poll_timeline.analyse(main.astype(np.int64), inside)
    first = next(k for k, line in enumerate(lines) if line.startswith("first wave: 9 tiles"))
    later = next(k for k, line in enumerate(lines) if line.startswith("later tiles: 200 tiles"))
    values = {(section, line[:46].strip()): line.split()[-5:]
              for section, block in (("first", lines[first:later]), ("later", lines[later:]))
              for line in block if line.startswith("  ")}
    assert values["first", "round trip of a poll"] == ["1.50"] * 5
    assert values["later", "polls of the nearest window (count)"] == ["2.00"] * 5
    assert values["later", "windows walked past (count)"] == ["0.00"] * 5
    # A later tile's carry is determinable through the tile four back, finished 1 us after this
    # tile started, when every aggregate between was out too (the last, 1 us after the start);
    # the first four of them (2 % of 200, outside the 5-95 % range) follow the gap instead.
    assert values["later", "determinable - own aggregate"] == ["-1.00"] * 5
    assert values["later", "carry - determinable"] == ["4.00"] * 5
    assert values["later", "settling poll issued - determinable"] == ["3.00"] * 5
