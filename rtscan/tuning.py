"""Launch parameters per GPU architecture and dtype: data, each entry citing what chose it.

Lookup falls back to the nearest older architecture present in the table, so a new GPU runs with
its predecessor's parameters until a sweep on it adds an entry.
"""

from __future__ import annotations

import re

from .errors import UnsupportedError

# (arch, dtype) -> parameters of the `lookback_regs` kernel, and the evidence behind them.
LOOKBACK_REGS = {
    ("sm_80", "float32"): {
        "block_threads": 256, "items": 16, "min_blocks": 3, "lookback_depth": 1, "register_items": 0,
        "source": "not measured on sm_80: copied from sm_90 so older GPUs have an entry",
    },
    ("sm_90", "float32"): {
        "block_threads": 256, "items": 16, "min_blocks": 3, "lookback_depth": 1, "register_items": 0,
        "source": "hand sweep on an H200, 2026-11-29, profiling/results/h200/handsweep-2026-11-29.txt: "
                  "fastest of 7 shapes at 2^28 (0.53 of copy); tiles of 2048 steps ran at 0.30-0.37, "
                  "look-back depth 2, 4 and 8 were no faster than 1",
    },
}


def _arch_number(arch: str) -> int:
    match = re.match(r"^sm_(\d+)", arch)
    if not match:
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    return int(match.group(1))


def lookup(table: dict, arch: str, dtype: str) -> dict:
    """The entry for (arch, dtype), else the nearest older architecture's entry for dtype."""
    wanted = _arch_number(arch)
    candidates = [(_arch_number(a), a) for (a, d) in table if d == dtype and _arch_number(a) <= wanted]
    if not candidates:
        raise UnsupportedError(f"rtscan has no kernel for {dtype} on {arch}: it needs sm_80 or newer "
                               f"(cp.async) and one of the dtypes {sorted({d for _, d in table})}")
    return table[(max(candidates)[1], dtype)]
