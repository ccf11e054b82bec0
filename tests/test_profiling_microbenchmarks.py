"""The nvcc microbenchmarks of profiling/ (standalone programs, run by hand on a GPU) still build:
each compiles for sm_90 with the shared tile_copies.cuh beside it."""

from __future__ import annotations

import subprocess

import pytest

from _mirrors import NVCC, needs_nvcc
from _profiling import PROFILING


@needs_nvcc
@pytest.mark.parametrize("name", ["ingest_rate", "poll_under_load", "egress_rate", "overlap_rate", "column_copy"])
def test_microbenchmark_builds(name, tmp_path):
    result = subprocess.run([NVCC, "-arch=sm_90", "-O3", "-o", str(tmp_path / name), str(PROFILING / f"{name}.cu")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / name).stat().st_size > 0
