"""profiling/columns_sweep.py without a GPU: its shapes and rows as text. The sweep itself runs
only on a GPU."""

from __future__ import annotations

import pytest

import rtscan
from _profiling import load_script


@pytest.fixture(scope="module")
def columns_sweep():
    return load_script("columns_sweep")


def test_a_shape_names_block_items_and_min_blocks(columns_sweep):
    assert columns_sweep.parse_shape("64x5b16") == {"block_threads": 64, "items": 5, "min_blocks": 16}
    assert columns_sweep.parse_shape(" 128x1b12 ") == {"block_threads": 128, "items": 1, "min_blocks": 12}


def test_a_columns_lookback_shape_also_names_its_depth(columns_sweep):
    assert columns_sweep.parse_shape("256x16b2d8", "columns_lookback") == {
        "block_threads": 256, "items": 16, "min_blocks": 2, "register_items": 16, "lookback_depth": 8,
        "atomic_polls": 0}
    staged = columns_sweep.parse_shape("128x48r16b4d2", "columns_lookback")
    assert (staged["items"], staged["register_items"]) == (48, 16)
    assert columns_sweep.shape_text(staged) == "128x48r16b4d2"
    assert columns_sweep.parse_shape("256x16b2d8a1", "columns_lookback")["atomic_polls"] == 1
    assert columns_sweep.shape_text(columns_sweep.parse_shape("256x16b2d8a1", "columns_lookback")) == "256x16b2d8a1"
    assert columns_sweep.shape_text(columns_sweep.parse_shape("256x16b2d8", "columns_lookback")) == "256x16b2d8"
    sixteen = columns_sweep.parse_shape("512x64r32b1d2s16", "columns_lookback")
    assert sixteen["sequences_per_tile"] == 16 and columns_sweep.shape_text(sixteen) == "512x64r32b1d2s16"
    assert columns_sweep.shape_text(columns_sweep.parse_shape("64x5b16")) == "64x5b16"


@pytest.mark.parametrize("text", ["64x5", "48x5b16", "64x0b16", "64x5b0", "64x5b16p1", "64x5b16d8", "64x5b16d8a1",
                                  "64x5r2b16"])
def test_a_shape_the_kernels_cannot_take_is_refused(columns_sweep, text):
    with pytest.raises(ValueError):
        columns_sweep.parse_shape(text)


@pytest.mark.parametrize("text", ["256x16b2", "256x16b2d0", "250x16b2d8", "256x16b2d8a0", "256x16r0b2d8",
                                  "256x16r17b2d8", "256x16b2d8s4", "256x16b2d8s"])
def test_a_columns_lookback_shape_it_cannot_take_is_refused(columns_sweep, text):
    with pytest.raises(ValueError):
        columns_sweep.parse_shape(text, "columns_lookback")


def test_rows_are_time_major_or_batch_length_width(columns_sweep):
    assert columns_sweep.parse_row("64x262144") == ((262144, 64), 0)
    assert columns_sweep.parse_row("8x4096x512") == ((8, 4096, 512), 1)
    for text in ("64", "64x0", "1x2x3x4", "ax4"):
        with pytest.raises(ValueError):
            columns_sweep.parse_row(text)


def test_every_default_parses(columns_sweep):
    assert all(columns_sweep.parse_shape(t) for t in columns_sweep.DEFAULT_SHAPES.split(","))
    assert all(columns_sweep.parse_row(t) for t in columns_sweep.DEFAULT_ROWS.split(","))


@pytest.mark.skipif(rtscan.gpu_available(), reason="a GPU is present: the sweep would run")
def test_refuses_without_a_gpu(columns_sweep, capsys):
    assert columns_sweep.main(["--shapes", "64x5b16", "--rows", "64x1024"]) == 2
    assert "needs a GPU" in capsys.readouterr().err


def test_bad_text_is_refused_before_anything_runs(columns_sweep):
    with pytest.raises(SystemExit):
        columns_sweep.main(["--shapes", "64x5"])
    with pytest.raises(SystemExit):  # the default shapes have no depth
        columns_sweep.main(["--variant", "columns_lookback"])
