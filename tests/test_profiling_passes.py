"""profiling/passes.py without a GPU: attributing launch times to the model's passes, and the
table. The measurement itself runs only on a GPU."""

from __future__ import annotations

import pytest

import rtscan
from _profiling import load_script


@pytest.fixture(scope="module")
def passes():
    return load_script("passes")


def test_medians_per_pass_with_the_models_bytes(passes):
    samples = [[10.0, 2.0, 30.0], [12.0, 1.0, 20.0], [11.0, 3.0, 25.0]]
    rows = passes.attribute("three_pass", 20, ["p1", "p2", "p3"], [8 << 20, 0, 12 << 20], samples)
    assert [(r.name, r.micros) for r in rows] == [("p1", 11.0), ("p2", 2.0), ("p3", 25.0)]
    assert rows[0].gbs == pytest.approx((8 << 20) / 11.0 / 1e3)
    assert rows[1].gbs == 0.0 or rows[1].memory_bytes == 0


def test_a_call_with_another_number_of_launches_is_refused(passes):
    with pytest.raises(ValueError, match="3 kernels"):
        passes.attribute("three_pass", 20, ["p1", "p2", "p3"], [1, 1, 1], [[1.0, 2.0, 3.0], [1.0, 2.0]])


def test_table_compares_each_pass_with_the_copy(passes):
    rows = passes.attribute("lookback_regs", 20, ["scan"], [12 << 20], [[10.0]])
    copy_us = {20: 5.0}  # the copy: 12 B * 2^20 in 5 us
    lines = passes.table(rows, copy_us)
    assert "lookback_regs" in lines[1] and lines[1].split()[-1] == "0.500"
    no_bytes = passes.table(passes.attribute("three_pass", 20, ["carries"], [0], [[3.0]]), copy_us)
    assert no_bytes[1].split()[-1] == "-"


@pytest.mark.skipif(rtscan.gpu_available(), reason="a GPU is present: the measurement would run")
def test_refuses_without_a_gpu(passes, capsys):
    assert passes.main(["--log2", "20"]) == 2
    assert "needs a GPU" in capsys.readouterr().err
