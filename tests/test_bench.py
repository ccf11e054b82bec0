"""`python -m rtscan bench`'s options on the CPU: rows of sequences x steps, the misaligned
(scalar-path) switch, and a clear refusal without a GPU. (The timing itself needs a GPU.)"""

from __future__ import annotations

import pytest

import rtscan
from rtscan import __main__ as cli
from rtscan import _bench, _driver


def test_the_bench_times_the_public_call():
    """Its scan takes keywords (variant=, stream=): the general path's positional one once got here
    (eighteenth session) and every bench run failed on its first row."""
    assert _bench.scan is rtscan.scan


def test_shapes_are_sequences_by_steps():
    assert _bench.parse_shapes("8192x4096, 64X65536") == [(8192, 4096), (64, 65536)]


@pytest.mark.parametrize("text", ["8192", "8192x", "x4096", "0x4096", "8192x4096x2", "8k x 4096"])
def test_malformed_shapes_are_refused(text):
    with pytest.raises(ValueError, match="8192x4096"):
        _bench.parse_shapes(text)


def test_cold_rows_rotate_over_four_l2s_at_most_one_set_a_launch():
    l2 = 50 << 20
    assert _bench.rotation_sets(12 << 22, l2, 16) == 5  # 2^22 steps: 48 MB a set, 5 of them hold 4 L2s
    assert _bench.rotation_sets(12 << 20, l2, 64) == 17  # 2^20: 12 MB a set, 17 of them hold 4 L2s
    assert _bench.rotation_sets(12 << 16, l2, 200) == 200  # small rows: one set a launch
    assert _bench.rotation_sets(12 << 28, l2, 1) == 1  # a set far larger than L2 is cold already


@pytest.mark.skipif(_driver.gpu_status()[0], reason="checks the refusal on a machine without a GPU")
def test_shapes_and_misaligned_parse_and_refuse_without_a_gpu(capsys):
    assert cli.main(["bench", "--shapes", "8192x4096", "--misaligned", "--model", "--cold", "--time-major"]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err


@pytest.mark.gpu
def test_a_row_of_an_odd_number_of_elements_runs(capsys):
    """The copy beside a row moves 6 B an element, whole words only for an even count: 45 x 92439
    once failed there (cuMemcpyDtoDAsync past the end of the copy's buffers, thirty-first session)."""
    assert cli.main(["bench", "--shapes", "3x5"]) == 0
    assert "3x5" in capsys.readouterr().out
