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
    assert text.count("stamp()") == 7  # the helper's definition is not a call: five stamps, `started`, `entered`
    assert_timeline_kernels_compile(text)


def test_instrument_refuses_a_moved_anchor(timeline):
    with pytest.raises(ValueError, match="update _EDITS"):
        timeline.instrument("namespace rtscan {\n}")


def test_analysis_of_known_stamps(timeline):
    # Tile t's block enters at t - 0.5 us and draws its ticket at t us; thread 0's first pass is done 1 us
    # later, its aggregate 2 us later, its carry 5 us later, and it ends 6 us after its ticket.
    tiles = 100
    start = np.arange(tiles) * 1000
    stamps = np.stack([start, start + 2000, start + 5000, start + 6000, np.zeros(tiles), start + 1000, start - 500],
                      axis=1)
    lines = timeline.analyse(stamps.astype(np.int64))
    values = {line[:40].strip(): line.split()[-6:] for line in lines[1:9]}
    assert values["stagger and ticket (start - entry)"] == ["0.50"] * 6
    assert values["load and first pass (own done - start)"] == ["1.00"] * 6
    assert values["wait (carry - aggregate)"] == ["3.00"] * 6
    assert values["of it: protocol (carry - all out)"] == ["3.00"] * 6
    assert values["lifetime (end - start)"] == ["6.00"] * 6
    # Times count from tile 0's entry, -0.5 us (tile 0 is left out of the phases); tiles 1-6 start before
    # tile 1 ends at 7 us.
    assert lines[0].startswith("100 tiles in 105.5 us")
    assert lines[-3].startswith("  first wave (6 tiles that started before any ended)")
    assert lines[-2] == "    aggregates out 3.5/6.0/8.5; carries 6.5/9.0/11.5; ends 7.5/10.0/12.5"
    assert lines[-1] == "    the next tiles' starts 7.5/10.0/12.5"


def batch_stamps() -> np.ndarray:
    """Two rows of three tiles, every tile's block entering and drawing its ticket at 0. Row 0's
    aggregates come out at 1, 2, 3 us and row 1's at 9, 4, 5 us (its first tile last); every carry
    comes 1 us after the last aggregate of the row before it, ends 1 us after the carry."""
    aggregates = np.array([1000, 2000, 3000, 9000, 4000, 5000])
    carries = np.array([1000, 3000, 4000, 9000, 10000, 10000])
    zeros = np.zeros(6, np.int64)
    return np.stack([zeros, aggregates, carries, carries + 1000, zeros, aggregates - 500, zeros], axis=1).astype(np.int64)


def test_analysis_of_a_batch_waits_on_its_own_row(timeline):
    lines = timeline.analyse(batch_stamps(), sequences=2)
    values = {line[:40].strip(): line.split()[-6:] for line in lines[1:9]}
    # tiles after the first of each row: rows 0 and 1 tiles 1-2; "earlier aggregates later" is
    # 0, 0 in row 0 and 5, 4 us in row 1 (its first tile's 9 us): percentiles of [0, 0, 5, 4]
    assert values["of it: earlier aggregates later"][2] == "2.00"  # the median
    assert values["of it: earlier aggregates later"][-1] == f"{np.percentile([0, 0, 5, 4], 99):.2f}"
    assert values["of it: protocol (carry - all out)"] == ["1.00"] * 6
    assert lines[0].startswith("6 tiles in 11.0 us")


def test_medians_by_place_in_the_row(timeline):
    # By place, the medians of batch_stamps' rows 0 and 1.
    stamps = batch_stamps()
    lines = timeline.by_place_in_row(stamps, sequences=2)
    assert lines == [
        "  by place in the row (medians, us):",
        "    tile 0: ticket 0.00, aggregate 5.00, carry 5.00, end 6.00",
        # carries 3 and 10 us, 2 and 1 us after the rows' first aggregates (1 and 9 us)
        "    tile 1: ticket 0.00, aggregate 3.00, carry 6.50, end 7.50; carry after the earlier aggregates 1.50",
        # carries 4 and 10 us after the rows' latest earlier aggregates, 2 and 9 us
        "    tile 2: ticket 0.00, aggregate 4.00, carry 7.00, end 8.00; carry after the earlier aggregates 1.50",
    ]
    assert timeline.by_place_in_row(stamps, sequences=6) == []  # rows of one tile
    assert timeline.by_place_in_row(np.tile(stamps, (3, 1)), sequences=1) == []  # 18 tiles a row


def test_protocol_delay_by_the_sm_mates_phase(timeline):
    # Seven rows of two tiles. The second tile of row r waits from 2 us (its aggregate; the first
    # tile's is out at 1 us) to its carry at 3.0 + 0.1 r us. Rows 0-3 put the first tile on the same
    # SM, its stamps setting the mate's phase in that window (they stand for the phase, not for a
    # real tile). Row 4's second tile shares its SM with row 5's, which starts at 5 us, after row 4's
    # wait: row 4's mate was idle then, not loading (a later wave), and row 5 waits 0.5 us beside a
    # finished mate. Row 6's second tile is alone on its SM.
    first = {  # row: (first pass done, aggregate, carry, end, SM) of the row's first tile, us
        0: (0.5, 1.0, 1.0, 2.5, 0),  # storing until 2.5 us
        1: (2.2, 1.0, 1.0, 1.5, 1),  # first pass still running at 2 us: loading
        2: (0.5, 1.0, 3.5, 4.0, 2),  # waiting for its carry through the window
        3: (0.5, 1.0, 1.0, 1.5, 3),  # finished at 1.5 us
        4: (0.5, 1.0, 1.0, 1.5, 94), 5: (0.5, 1.0, 1.0, 1.5, 95), 6: (0.5, 1.0, 1.0, 1.5, 96),
    }
    second = {row: (0.0, 1.5, 2.0, 3.0 + 0.1 * row, row) for row in first}  # start, first pass, aggregate, carry, SM
    second[5] = (5.0, 5.5, 6.0, 6.5, 4)
    rows = []
    for row, (scanned, aggregate, carry, end, sm) in first.items():
        started, done, out, came, place = second[row]
        rows += [[0, aggregate, carry, end, sm, scanned, 0], [started, out, came, came + 1, place, done, started]]
    stamps = (np.array(rows) * 1000).astype(np.int64)
    assert timeline.by_mate_phase(stamps, sequences=7) == [
        "  protocol delay of later tiles by their SM-mates' phase (count, median us):",
        "    storing: 1, 1.00",
        "    loading: 1, 1.10",
        "    waiting: 1, 1.20",
        "    idle: 3, 1.30",  # rows 3, 4 and 5: 1.3, 1.4 and 0.5 us
        "    alone: 1, 1.60",
    ]
    assert timeline.by_mate_phase(stamps, sequences=14) == []  # rows of one tile


def test_analysis_of_rows_of_one_tile_keeps_them(timeline):
    # Three rows of one tile each: no tile waits, and all three are the phases' tiles.
    start = np.array([0, 1000, 2000])
    stamps = np.stack([start, start + 2000, start + 2500, start + 4000, np.zeros(3), start + 1000, start], axis=1)
    lines = timeline.analyse(stamps.astype(np.int64), sequences=3)
    values = {line[:40].strip(): line.split()[-6:] for line in lines[1:9]}
    assert lines[0].startswith("3 tiles in 6.0 us")
    assert values["of it: earlier aggregates later"] == ["0.00"] * 6
    assert values["lifetime (end - start)"] == ["4.00"] * 6


def test_saved_stamps_read_back(timeline, tmp_path):
    stamps = np.arange(12, dtype=np.uint64).reshape(2, 6)
    timeline.save_stamps(tmp_path / "new", "timeline-x", stamps)  # the folder is made
    assert np.array_equal(np.load(tmp_path / "new" / "timeline-x.npy"), stamps)
