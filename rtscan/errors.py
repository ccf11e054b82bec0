"""The exceptions rtscan raises: one base class, and the usual Python kinds for bad input."""

from __future__ import annotations


class RtscanError(Exception):
    """Base class of every error rtscan raises on purpose."""


class InputError(RtscanError, ValueError):
    """An argument has the wrong shape, stride, device or value; nothing was launched or written."""


class InputTypeError(RtscanError, TypeError):
    """An argument has the wrong type or dtype; nothing was launched or written."""


class UnsupportedError(RtscanError, KeyError):
    """No kernel exists for this architecture or dtype (e.g. a GPU older than sm_80)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NoDeviceError(RtscanError):
    """A GPU was needed and none is usable (no driver, no device, or CUDA failed to start)."""


class DriverError(RtscanError):
    """A CUDA driver call failed; the message names the call and the driver's error."""

    def __init__(self, call: str, code: int, name: str, description: str):
        super().__init__(f"{call} failed: {name} ({code}): {description}")
        self.call = call
        self.code = code
        self.name = name


class CompileError(RtscanError):
    """NVRTC rejected a kernel; carries the compiler's log, the options and the architecture."""

    def __init__(self, message: str, *, log: str, options: tuple[str, ...], arch: str):
        super().__init__(f"{message} (arch {arch})\noptions: {' '.join(options)}\n{log}")
        self.log = log
        self.options = options
        self.arch = arch
