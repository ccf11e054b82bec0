"""Launch parameters per GPU architecture and dtype: data, each entry citing what chose it.

Lookup falls back to the nearest older architecture present in the table, so a new GPU runs with
its predecessor's parameters until a sweep on it adds an entry.
"""

from __future__ import annotations

import re

# (arch, dtype) -> parameters of the `lookback_regs` kernel, and the evidence behind them.
LOOKBACK_REGS = {
    ("sm_80", "float32"): {
        "block_threads": 256, "items": 16,
        "source": "initial choice, not swept: a 4096-step tile, 16 steps (four float4 loads of a and of b) "
                  "per thread; the sweep of issue 4 replaces this",
    },
    ("sm_90", "float32"): {
        "block_threads": 256, "items": 16,
        "source": "initial choice, not swept (as sm_80); 96 registers per thread with VEC=4 "
                  "(ptxas -v, NVRTC 13.5), so two 256-thread blocks fit per SM",
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
        raise KeyError(f"no tuning entry for {dtype} on {arch} or any older architecture")
    return table[(max(candidates)[1], dtype)]
