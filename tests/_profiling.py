"""Loads a script of profiling/ (not a package) as a module, for its CPU tests."""

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
