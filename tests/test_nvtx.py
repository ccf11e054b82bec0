"""rtscan/_nvtx.py: ranges are recorded exactly when nvtx gives a real domain (a tool such as Nsight
is attached), each name's attributes built once; otherwise push and pop are rtscan's own no-ops,
which skip the stand-in domain's calls."""

from __future__ import annotations

import importlib

import pytest

from rtscan import _nvtx

nvtx = pytest.importorskip("nvtx")


@pytest.fixture
def reload_nvtx(monkeypatch):
    """Reloads rtscan._nvtx under whatever the test patched; afterwards, the patches undone, again."""
    yield lambda: importlib.reload(_nvtx)
    monkeypatch.undo()
    importlib.reload(_nvtx)


def test_without_a_tool_ranges_are_rtscan_no_ops():
    # No Nsight here: nvtx hands back its stand-in domain.
    assert isinstance(nvtx.get_domain(_nvtx.DOMAIN), nvtx.Domain) is _nvtx.RECORDING
    if _nvtx.RECORDING:
        pytest.skip("a tool is attached to this process")
    assert _nvtx.AVAILABLE
    assert (_nvtx.push, _nvtx.pop) == (_nvtx._push_nothing, _nvtx._pop_nothing)
    with _nvtx.annotate("x"):
        pass


def test_with_a_tool_each_range_is_pushed_and_popped(monkeypatch, reload_nvtx):
    calls = []

    class Attached:  # stands for nvtx.Domain when a tool is attached
        def get_event_attributes(self, message):
            calls.append(("attributes", message))
            return ("attributes of", message)

        def push_range(self, attributes):
            calls.append(("push", attributes))

        def pop_range(self):
            calls.append(("pop",))

    monkeypatch.setattr(nvtx, "Domain", Attached)
    monkeypatch.setattr(nvtx, "get_domain", lambda name: Attached())
    module = reload_nvtx()
    assert module.RECORDING
    for _ in range(2):
        with module.annotate("rtscan.scan"):
            pass
    assert calls == [("attributes", "rtscan.scan"), ("push", ("attributes of", "rtscan.scan")), ("pop",),
                     ("push", ("attributes of", "rtscan.scan")), ("pop",)]
