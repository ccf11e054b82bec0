"""The common call in few Python steps: a, b (and out) plain torch CUDA tensors of float32, no h0,
auto's variant, nothing requiring grad.

A small scan is bound by the host (issue 4 asks under 10 us a call; profiling/NOTES.md, items 83
and 84), and most of what the general path (_scan.py) does per call is the same for every call of
one layout. Here a layout (shapes, strides, device, dim, reverse, and how far past a 128-byte
line each pointer starts) is checked and prepared once, by the general path's own functions.
A later call of that layout reads the tensors, checks what can differ between its calls (the
addresses: out overlapping a or b), and launches, leaving it to the driver to say whether the
device's context is the current one (below, scan's launch).

Whatever this path does not take (any other kind of call, a layout whose checks fail, an out that
overlaps a or b) it hands back as None, and the general path then does the whole call, raising
what it always raises. So an input is refused by the same check, with the same message, on both.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from . import _arrays, _driver, _kernels, _layout, _scan, tuning
from .errors import InputError, InputTypeError

# Set from torch on the first call whose `a` is a torch.Tensor (torch is never imported here).
_tensor_type: Any = None
_float32: Any = None
_empty_like: Any = None
_current_stream: Any = None
# cuda.bindings' cuLaunchKernel, set by the first layout learned (the driver is loaded by then).
_launch_kernel: Any = None


class _Layout(NamedTuple):
    """One layout's launch and the address facts of its checks (_scan.Addresses)."""

    prepared: _scan.Prepared
    function: Any               # the loaded kernel, for the compile defines it was loaded under
    defines: tuple              # _kernels._defines then (checked by identity)
    arch: str
    addresses: _scan.Addresses


_layouts: dict[tuple, _Layout] = {}
# What cuLaunchKernel returns where the current context is not the function's (results/h200/
# host-context-2026-12-03-39.txt): another context, none.
_NOT_ITS_CONTEXT = (400, 201)  # CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_CONTEXT


def _found_torch(a: Any) -> bool:
    """Whether `a` is a plain torch.Tensor; the first time it is, keep what the path uses of torch."""
    global _tensor_type, _float32, _empty_like, _current_stream
    torch = sys.modules.get("torch")
    if torch is None or a.__class__ is not torch.Tensor:
        return False
    _float32, _empty_like = torch.float32, torch.empty_like
    _current_stream = _arrays.torch_stream_getter()
    _tensor_type = torch.Tensor
    return True


def scan(a: Any, b: Any, out: Any, dim: Any, reverse: Any, stream: Any) -> Any:
    """The result of scan(a, b, dim=dim, reverse=reverse, out=out, stream=stream), or None when the
    call is not one this path takes (then nothing was launched or written)."""
    if a.__class__ is not _tensor_type and not _found_torch(a):
        return None
    if (b.__class__ is not _tensor_type or dim.__class__ is not int or reverse.__class__ is not bool
            or a.dtype is not _float32 or b.dtype is not _float32 or a.requires_grad or b.requires_grad
            or not a.is_cuda or not b.is_cuda):
        return None
    shape, strides, device = a.shape, a.stride(), a.get_device()
    if b.shape != shape or b.stride() != strides or b.get_device() != device:
        return None
    a_pointer, b_pointer = a.data_ptr(), b.data_ptr()
    fresh = out is None
    if fresh:
        # Off a 128-byte line, the general path may place the result off it too (P67, P196).
        if (a_pointer | b_pointer) & 127:
            return None
        out = _empty_like(a)  # torch's own rule for its strides, as the general path's empty_like
    elif (out.__class__ is not _tensor_type or out.dtype is not _float32 or out.requires_grad or not out.is_cuda
            or out.shape != shape or out.get_device() != device):
        return None
    out_pointer = out.data_ptr()
    # A fresh out's strides follow from a's shape and strides (empty_like's rule), so its key has None there.
    key = (shape, strides, None if fresh else out.stride(), device, dim, reverse, a_pointer & 127, b_pointer & 127,
           out_pointer & 127)
    layout = _layouts.get(key)
    if layout is None or layout.defines is not _kernels._defines or (
            layout.prepared.entry is not tuning.lookup(layout.prepared.variant.table, layout.arch, "float32")):
        layout = _learn(key, a, b, out, dim, reverse)
        if layout is None:
            return None
    elif not fresh and (layout.addresses.out_overlaps(a_pointer, out_pointer)
                        or layout.addresses.out_overlaps(b_pointer, out_pointer)):
        return None  # the general path says how
    stream_handle = _current_stream(device) if stream is None else _arrays.stream_handle(stream)
    prepared = layout.prepared
    # From filling the block to the launch, nothing runs that could call rtscan again on this thread.
    block = _scan.argument_block()
    # Fill takes the stream's workspace where the launch changed (grown, if need be, in the device's context).
    block.fill(a_pointer, b_pointer, 0, out_pointer, prepared, device, stream_handle)
    # Launched without first asking which context is current (make_current, about 0.6 us of a
    # 16 us call: NOTES 157), and through cuLaunchKernel itself, not _driver.launch (its frame
    # about 0.2 us: P272).
    result = _launch_kernel(layout.function, prepared.num_tiles, 1, 1, prepared.threads, 1, 1, prepared.shared_bytes,
                            stream_handle, block.params_address, 0)
    if result[0]:
        _launch_again_in_its_context(result, layout, device, stream_handle, block)
    return out


def _launch_again_in_its_context(result: tuple, layout: _Layout, device: int, stream: int, block: Any) -> None:
    """After a failed launch: where the current context is not the device's primary one, the one
    the function was loaded in (another context: CUDA_ERROR_INVALID_HANDLE, none:
    CUDA_ERROR_INVALID_CONTEXT; nothing was started), make that one current and launch again;
    raise any other failure as DriverError."""
    if int(result[0]) not in _NOT_ITS_CONTEXT:
        _driver.call("cuLaunchKernel", result)
    _driver.make_current(device)
    prepared = layout.prepared
    _driver.launch(layout.function, prepared.num_tiles, prepared.threads, prepared.shared_bytes, stream,
                   block.params_address)


def _learn(key: tuple, a: Any, b: Any, out: Any, dim: int, reverse: bool) -> _Layout | None:
    """Check and prepare a layout through the general path's functions and keep it under `key`;
    None, keeping nothing, when a check fails or the layout is one this path leaves to the general
    one (no element, a multi-pass variant)."""
    global _launch_kernel
    try:
        va, vb = _arrays.view("a", a), _arrays.view("b", b)
        axis = _layout.normalize_dim(dim, len(va.shape))
        vout, addresses = _scan.check_out(out, va)
        _scan.check_aliasing(vout, va, vb, None, addresses)
    except (InputError, InputTypeError):
        return None
    if addresses.size == 0:
        return None
    device = va.device
    _driver.make_current(device)
    if _launch_kernel is None:
        _launch_kernel = _driver.driver().cuLaunchKernel
    arch = _kernels.device_arch(device)
    placement = _scan.pointer_placement(va.pointer, vb.pointer, vout.pointer)
    prepared = _scan.prepare(None, va, vout, axis, reverse, placement, arch)
    if prepared.variant.pass_kernels:
        return None
    layout = _Layout(prepared, _kernels.function(device, prepared.variant, prepared.shape), _kernels._defines, arch,
                     addresses)
    if len(_layouts) > 1024:  # many layouts: start again rather than grow without bound
        _layouts.clear()
    _layouts[key] = layout
    return layout
