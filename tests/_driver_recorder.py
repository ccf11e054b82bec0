"""A fixture for tests of rtscan's host path on the CPU: the driver, the kernel loader, NVTX and
the workspaces replaced by a Recorder that keeps each launch (function, grid, block, shared bytes,
stream) and the address of its kernelParams."""

from __future__ import annotations

import pytest

from rtscan import _driver, _kernels, _nvtx, _repeat, _scan, _workspace


class Recorder:
    def __init__(self):
        self.events, self.capturing = [], False

    def launch(self, function, grid, block, shared_bytes, stream, params_address):
        self.events.append(("launch", function, grid, block, shared_bytes, stream))
        self.params_address = params_address

    def alloc(self, nbytes):
        self.events.append(("alloc", nbytes))
        return 0x100000 * (1 + len(self.events))

    def function(self, device, variant, shape):
        self.events.append(("function", variant.name))
        self.shape = shape
        names = [k.template for k in variant.pass_kernels]
        return tuple(names) if names else variant.template


@pytest.fixture
def recorder(monkeypatch):
    record = Recorder()
    monkeypatch.setattr(_driver, "make_current", lambda device: None)
    monkeypatch.setattr(_driver, "launch", record.launch)
    monkeypatch.setattr(_driver, "alloc", record.alloc)
    monkeypatch.setattr(_driver, "memset_async", lambda *args: None)
    monkeypatch.setattr(_driver, "memset32_async", lambda *args: None)
    monkeypatch.setattr(_driver, "stream_is_capturing", lambda stream: record.capturing)
    monkeypatch.setattr(_kernels, "device_arch", lambda device: "sm_90")
    monkeypatch.setattr(_kernels, "function", record.function)
    monkeypatch.setattr(_nvtx, "push", lambda name: record.events.append(("push", name)))
    monkeypatch.setattr(_nvtx, "pop", lambda: record.events.append(("pop",)))
    monkeypatch.setattr(_workspace, "_workspaces", {})
    monkeypatch.setattr(_workspace, "_scratch", {})
    monkeypatch.setattr(_workspace, "_retired", [])
    monkeypatch.setattr(_scan, "_prepared", {})
    monkeypatch.setattr(_repeat, "_repeats", {})
    return record
