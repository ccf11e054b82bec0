"""NVTX ranges in one domain, "rtscan", so Nsight attributes time to each public call and pass.
Without the nvtx package (it is a dependency, but a source checkout may lack it) ranges do
nothing; `python -m rtscan info` says which is the case.

A tool such as Nsight Systems or Nsight Compute attaches to the process when it starts
(NVTX_INJECTION64_PATH), and nvtx hands back a stand-in domain whose calls do nothing when none
has. Then push and pop skip even the stand-in's calls: about 0.35 us of every scan() on the host
(issue 4's budget for a small call is 10 us)."""

from __future__ import annotations

import contextlib

DOMAIN = "rtscan"


def _push_nothing(name: str) -> None:
    pass


def _pop_nothing() -> None:
    pass


push, pop = _push_nothing, _pop_nothing

try:
    import nvtx as _nvtx
except ImportError:
    AVAILABLE = RECORDING = False
else:
    AVAILABLE = True
    _domain = _nvtx.get_domain(DOMAIN)
    RECORDING = isinstance(_domain, _nvtx.Domain)  # else the stand-in: no tool is attached
    if RECORDING:
        _attributes: dict = {}

        def _push_range(name: str) -> None:
            attributes = _attributes.get(name)
            if attributes is None:
                attributes = _attributes.setdefault(name, _domain.get_event_attributes(message=name))
            _domain.push_range(attributes)

        def _pop_range() -> None:
            _domain.pop_range()

        push, pop = _push_range, _pop_range


@contextlib.contextmanager
def annotate(name: str):
    push(name)
    try:
        yield
    finally:
        pop()
