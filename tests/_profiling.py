"""Loads a script of profiling/ (not a package) as a module, for its CPU tests, and compiles the
instrumented kernels the timeline scripts make."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PROFILING = Path(__file__).parent.parent / "profiling"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"rtscan_profiling_{name}", PROFILING / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there while it executes
    spec.loader.exec_module(module)
    return module


# The tuned look-back forms the timeline scripts instrument: warp 0 running the look-back, a
# protocol warp running it two-level (sm_90's long shape) and one-level (its large shape, before and
# since P161's runs).
TIMELINE_EXPRESSIONS = ("rtscan::lookback_scan_timeline<256, 48, 4, 3, 1, 16, 32, 32, 0>",
                        "rtscan::lookback_scan_timeline<352, 48, 4, 2, 1, 16, 32, 32, 1>",
                        "rtscan::lookback_scan_timeline<352, 56, 4, 2, 1, 16, 32, 1, 1>",
                        "rtscan::lookback_scan_timeline<352, 48, 4, 2, 1, 16, 32, 32, 1, 0, 0, 2>",
                        "rtscan::lookback_scan_timeline<352, 48, 4, 2, 1, 16, 32, 1, 1, 1, 1, 2>")


def assert_timeline_kernels_compile(lookback_text: str) -> None:
    """An instrumented lookback.cu compiles by NVRTC for sm_90 in every form of TIMELINE_EXPRESSIONS
    (with the kernels folder the caller has made current)."""
    from rtscan import _compile

    module = _compile.nvrtc_compile("lookback.cu", TIMELINE_EXPRESSIONS, _compile.CompileOptions(arch="sm_90"),
                                    text=lookback_text.encode())
    assert module.cubin and all(module.lowered_names[e].startswith("_Z") for e in TIMELINE_EXPRESSIONS)
