"""profiling/block_instructions.py's reading of ncu's text report (the script itself needs ncu, torch
and a GPU): the second launch of each shape, its blocks from the grid, the counts without their
thousands separators; a report with a launch or a metric missing is refused."""

from __future__ import annotations

import pytest

from _profiling import load_script

block_instructions = load_script("block_instructions")

HEADER = ("  void lookback_scan<128, 4, 4, 16, 1, 0, 32, 32, 0, 0, 0, 1, 0>(const float *, const float *, float *, "
          "const float *, SeqLayout, TileWorkspace, long long, long long) ({blocks}, 1, 1)x(128, 1, 1), Context 1, "
          "Stream 7, Device 0, CC 9.0")


def kernel(blocks: int, time_us: str, instructions: str, issue: str, dram: str) -> str:
    return "\n".join([
        HEADER.format(blocks=blocks),
        "    Section: Command line profiler metrics",
        "    --------------------------------------------------- ----------- ------------",
        f"    dram__throughput.avg.pct_of_peak_sustained_elapsed            %        {dram}",
        f"    gpu__time_duration.sum                                       us        {time_us}",
        f"    smsp__inst_executed.sum                                    inst   {instructions}",
        f"    smsp__issue_active.avg.pct_of_peak_sustained_active           %        {issue}",
        "    --------------------------------------------------- ----------- ------------",
        ""])


REPORT = "\n".join(["==PROF== Disconnected from process 546", "[546] python3.12@127.0.0.1",
                    kernel(32768, "47.39", "33,292,288", "71.22", "80.50"),
                    kernel(32768, "46.98", "33,300,000", "71.79", "80.52"),
                    kernel(25000, "40.10", "31,000,000", "85.00", "70.00"),
                    kernel(25000, "36.77", "30,700,000", "85.23", "72.72")])


def test_each_shape_reads_its_second_launch():
    first, second = block_instructions.parse(REPORT, ["524288x32", "600000x20"])
    assert first == {"shape": "524288x32", "blocks": 32768, "time_us": 46.98, "warp_instructions": 33300000.0,
                     "issue_active_pct": 71.79, "dram_busy_pct": 80.52, "per_block": 33300000 / 32768}
    assert (second["blocks"], second["time_us"], second["warp_instructions"]) == (25000, 36.77, 30700000.0)
    assert second["per_block"] == 1228.0


def test_a_missing_launch_or_metric_is_refused():
    with pytest.raises(ValueError, match="3 lookback_scan launches"):
        block_instructions.parse(REPORT.rsplit("\n  void", 1)[0], ["524288x32", "600000x20"])
    with pytest.raises(ValueError, match="smsp__inst_executed.sum missing"):
        block_instructions.parse(REPORT.replace("smsp__inst_executed.sum", "smsp__other.sum"),
                                 ["524288x32", "600000x20"])
