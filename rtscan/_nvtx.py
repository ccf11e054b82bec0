"""NVTX ranges in one domain, "rtscan", so Nsight attributes time to each public call and pass.
Without the nvtx package (it is a dependency, but a source checkout may lack it) ranges do
nothing; `python -m rtscan info` says which is the case."""

from __future__ import annotations

import contextlib

DOMAIN = "rtscan"

try:
    import nvtx as _nvtx

    AVAILABLE = True
    _domain = _nvtx.get_domain(DOMAIN)

    _attributes: dict = {}

    def push(name: str) -> None:
        attributes = _attributes.get(name)
        if attributes is None:
            attributes = _attributes.setdefault(name, _domain.get_event_attributes(message=name))
        _domain.push_range(attributes)

    def pop() -> None:
        _domain.pop_range()

except ImportError:
    AVAILABLE = False

    def push(name: str) -> None:
        pass

    def pop() -> None:
        pass


@contextlib.contextmanager
def annotate(name: str):
    push(name)
    try:
        yield
    finally:
        pop()
