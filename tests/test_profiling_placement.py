"""profiling/placement.py (P176): one row's scan and copy timed with its buffers placed after a pad
and apart by gaps; and profiling/ab.sh's PER_ROW mode, which runs each row in a process of its own."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from _profiling import PROFILING, load_script


@pytest.mark.gpu
def test_a_placement_times_the_scan_and_the_copy():
    import numpy as np
    from rtscan import _driver

    placement = load_script("placement")
    _driver.make_current(0)
    stream = _driver.create_stream()
    try:
        line = placement.one_placement(4, 65536, 1, 1, np.random.default_rng(), stream)
    finally:
        _driver.destroy_stream(stream)
    copy_us, scan_us = (float(field) for field in line.split()[2:4])
    assert copy_us > 0 and scan_us > 0
    addresses = [int(found, 16) for found in re.findall(r"\b[abh] (0x[0-9a-f]+)", line)]
    assert len(set(addresses)) == 3 and all(address % 256 == 0 for address in addresses)


def _ab_commands(tmp_path, per_row: str, *bench_args: str) -> list[str]:
    """The python3 command lines ab.sh runs, one round, with python3 replaced by a stand-in that
    prints its arguments."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "python3").write_text('#!/bin/sh\necho "python3 $*"\n')
    (fake / "python3").chmod(0o755)
    base = tmp_path / "base"
    (base / "rtscan").mkdir(parents=True, exist_ok=True)
    (base / "kernels_cu").mkdir(exist_ok=True)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "ROUNDS": "1", "PER_ROW": per_row}
    done = subprocess.run(["bash", str(PROFILING / "ab.sh"), str(base), *bench_args], env=env,
                          capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if " -m rtscan bench" in line]


def test_ab_runs_each_row_in_its_own_process_with_per_row(tmp_path):
    commands = _ab_commands(tmp_path, "1", "--shapes", "64x65536,8192x4096", "--cold")
    assert [c.split(" -m rtscan bench ")[1] for c in commands] == [
        "--cold --shapes 64x65536", "--cold --shapes 8192x4096"] * 2  # base, then this checkout


def test_ab_takes_rows_given_alone_or_with_an_equals_sign(tmp_path):
    assert [c.split(" -m rtscan bench ")[1] for c in _ab_commands(tmp_path, "1", "--shapes", "2x8")] == [
        "--shapes 2x8"] * 2
    assert [c.split(" -m rtscan bench ")[1] for c in _ab_commands(tmp_path, "1", "--shapes=2x8,4x8")] == [
        "--shapes 2x8", "--shapes 4x8"] * 2


def test_ab_runs_the_rows_in_one_process_without_per_row(tmp_path):
    commands = _ab_commands(tmp_path, "0", "--shapes", "64x65536,8192x4096")
    assert [c.split(" -m rtscan bench ")[1] for c in commands] == ["--shapes 64x65536,8192x4096"] * 2
    assert len(_ab_commands(tmp_path, "1", "--min-log2", "24")) == 2  # no --shapes: one process each
