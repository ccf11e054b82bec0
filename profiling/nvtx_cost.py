"""What rtscan's NVTX ranges cost a small call when no tool is attached (P139): scan(a, b, out=out)
and scan(a, b) with push and pop as before the nineteenth session (calls into nvtx's stand-in
domain, the range's attributes looked up each call) and as now (rtscan's own no-ops), taking turns
over seven rounds of 2000 calls in one process (host_overhead.py's timing).

Usage, on a GPU machine with torch and the nvtx package, no profiler attached:
    PYTHONPATH=. python3 profiling/nvtx_cost.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import nvtx
import torch

sys.path.insert(0, str(Path(__file__).parent))  # host_overhead.py beside this script
import rtscan  # noqa: E402
from host_overhead import mean_us  # noqa: E402
from rtscan import _nvtx  # noqa: E402

ROUNDS, CALLS = 7, 2000


def main() -> int:
    stand_in = nvtx.get_domain(_nvtx.DOMAIN)
    print("nvtx domain:", type(stand_in).__name__, "RECORDING", _nvtx.RECORDING)
    if _nvtx.RECORDING:
        print("a tool is attached: run this without one", file=sys.stderr)
        return 2
    attributes: dict = {}

    def push_before(name: str) -> None:
        found = attributes.get(name)
        if found is None:
            found = attributes.setdefault(name, stand_in.get_event_attributes(message=name))
        stand_in.push_range(found)

    forms = {"before": (push_before, stand_in.pop_range), "now": (_nvtx.push, _nvtx.pop)}
    a, b = torch.rand(16, device="cuda"), torch.rand(16, device="cuda")
    out = torch.empty_like(a)
    cases = {"out=": lambda: rtscan.scan(a, b, out=out), "fresh": lambda: rtscan.scan(a, b)}
    results: dict = {(case, form): [] for case in cases for form in forms}
    try:
        for _ in range(ROUNDS):
            for form, (push, pop) in forms.items():
                _nvtx.push, _nvtx.pop = push, pop
                for case, call in cases.items():
                    results[(case, form)].append(mean_us(call, CALLS)[0])
    finally:
        _nvtx.push, _nvtx.pop = forms["now"]
    for (case, form), values in results.items():
        print(f"scan {case:6s} nvtx {form:6s}: median {statistics.median(values):6.2f} us "
              f"(rounds {min(values):.2f}-{max(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
