"""profiling/columns_ablation.py without a GPU: every twin's edits find their anchors in
columns_timeline.py's instrumented kernel, change it, and the twin compiles in the long tile."""

from __future__ import annotations

import pytest

from _profiling import load_script
from rtscan import _compile, registry


@pytest.fixture(scope="module")
def columns_ablation():
    return load_script("columns_ablation")


@pytest.mark.parametrize("twin", ["nocarry", "csstores", "alignedstores", "alignedloads", "aligned", "alignedstaged",
                                  "alignedregisters", "pairsnext", "pairsfar"])
def test_twin_compiles(columns_ablation, twin):
    original = (_compile.kernels_dir() / "columns_lookback.cu").read_text()
    text = columns_ablation.instrument(twin)(original)
    assert text != columns_ablation.instrument("base")(original)
    shape = columns_ablation.columns_timeline.launch_shape("256x32r16b3d1")
    expression = registry.resolve("columns_lookback").name_expression(shape).replace("_scan<", "_scan_timeline<")
    module = _compile.nvrtc_compile("columns_lookback.cu", (expression,), _compile.CompileOptions(arch="sm_90"),
                                    text=text.encode())
    assert module.cubin and module.lowered_names[expression].startswith("_Z")


def test_unknown_twin_is_refused_before_the_gpu(columns_ablation, capsys):
    with pytest.raises(SystemExit):
        columns_ablation.main(["--twins", "base,nostores"])
    assert "nostores" in capsys.readouterr().err
