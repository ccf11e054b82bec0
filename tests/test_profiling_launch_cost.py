"""profiling/launch_probe.cu, the kernels profiling/launch_cost.py launches (the script needs torch
and a GPU): they compile with the parameter size the script sets, and take no parameter and one of
that size."""

from __future__ import annotations

from _profiling import PROFILING
from rtscan import _compile


def test_the_probe_kernels_compile_with_the_parameter_size_given():
    source = str(PROFILING / "launch_probe.cu")
    options = _compile.CompileOptions(arch="sm_90", defines=(("RTSCAN_PARAMETER_BYTES", "216"),))
    ptx, lowered = _compile.nvrtc_ptx(source, ("no_parameters<0>", "one_block_parameter<0>"), options)
    no_parameters, block_parameter = (ptx.split(f".entry {lowered[name]}(")[1].split(")")[0]
                                      for name in ("no_parameters<0>", "one_block_parameter<0>"))
    assert no_parameters.strip() == ""
    assert ".align 1 .b8" in block_parameter and "[216]" in block_parameter
