"""Helpers shared by the tests of the CPU mirrors (tests/mirrors/): building a mirror from the
kernels' own headers, running it on NumPy arrays, the data and the checks every mirror must pass,
and the broken twins (a mirror built against a copy of kernels_cu/ with one deliberate mistake).

A case is (shape id, array shape, dim, reverse, with h0); each test file lists its own, with the
launch shapes its mirror is built for.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import _checks
from rtscan import _arrays, _compile, _kernels, _layout, _scan

COMPILER = shutil.which("g++") or shutil.which("c++")
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no host C++ compiler (g++ or c++) to build the mirror")

SEGMENT_TILES = 32  # kernels_cu/indexing.cuh
FINISHED_PROBABILITIES = (0.0, 0.3, 1.0)
MIRRORS_DIR = Path(__file__).parent / "mirrors"


class Mirror:
    """tests/mirrors/`source` built into `target` against the headers in `kernels`. Its scan
    function `entry` takes (shape id, a, b, out, h0, layout, finished probability, seed) in every
    mirror and returns 0, or 1 for a shape the mirror is not built for."""

    def __init__(self, source: str, entry: str, kernels: Path, target: Path):
        # -ffp-contract=off: only the explicit fma of multiply_add may fuse, as on the GPU.
        command = [COMPILER, "-O1", "-std=c++17", "-ffp-contract=off", "-shared", "-fPIC", f"-I{kernels}",
                   "-o", str(target), str(MIRRORS_DIR / source)]
        subprocess.run(command, check=True, capture_output=True, text=True)
        self.library = ctypes.CDLL(str(target))
        self._scan = getattr(self.library, entry)
        self._scan.restype = ctypes.c_int
        self._scan.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.c_double, ctypes.c_ulonglong]

    def scan(self, shape_id, a, b, h0=None, dim=-1, reverse=False, finished=0.5, seed=0, out=None, head=0,
             longest_head=None):
        """Run the mirror on NumPy float32 arrays (views of any strides); `finished` is the chance
        that the look-back sees a segment finished. `out` defaults to a NaN-filled array, so
        unwritten steps show. `head` (32 or 4): each row scanned from the boundary before it, as
        though a and out started on one (seq_layout.cuh's head), no row's head longer than `longest_head`
        (by default head - 1, which holds for every row; only packed rows read it)."""
        axis = _layout.normalize_dim(dim, a.ndim)
        if out is None:
            out = np.full(a.shape, np.nan, np.float32)
        elements = lambda array: tuple(s // array.itemsize for s in array.strides)  # noqa: E731
        assert elements(a) == elements(b)
        plan = _layout.plan(a.shape, elements(a), elements(out), axis, reverse)
        if head:
            plan = _layout.with_head(plan, head, head - 1 if longest_head is None else longest_head)
        h0 = None if h0 is None else np.ascontiguousarray(h0, np.float32)
        h0_pointer = None if h0 is None else h0.ctypes.data
        status = self._scan(shape_id, a.ctypes.data, b.ctypes.data, out.ctypes.data, h0_pointer,
                            ctypes.addressof(plan.layout), finished, seed)
        assert status == 0, f"the mirror has no shape {shape_id}"
        return out


def module_fixture(build):
    """The module's `mirror` fixture: build(kernels, target) against kernels_cu/ as it is, once."""

    @pytest.fixture(scope="module")
    def mirror(tmp_path_factory):
        return build(_compile.kernels_dir(), tmp_path_factory.mktemp("mirror") / "mirror.so")

    return mirror


def draw(rng, shape, exact=False):
    """a and b, never zeros. By default |a| in (0.999, 1), either sign, b normal: a state keeps a
    third of its weight over 2048 steps, so carries across tiles and segments reach the outputs
    (with |a| well below 1 they would underflow within a few hundred steps, and a wrong carry could
    only show as NaN), and rounding differs between evaluation orders, which the determinism check
    needs. exact: a = +-1 and small integers b, so every state and map is an integer below 2^24,
    exact in any order, and a carry never fades: a wrong one from however far back shows."""
    sign = rng.choice([-1.0, 1.0], shape)
    if exact:
        return sign.astype(np.float32), rng.integers(-3, 4, shape).astype(np.float32)
    return (rng.uniform(1 - 1e-3, 1, shape) * sign).astype(np.float32), rng.standard_normal(shape).astype(np.float32)


def draw_h0(rng, shape, dim, exact):
    """One start state per sequence, of the same kind as draw's data."""
    batch = shape[:dim % len(shape)] + shape[dim % len(shape) + 1:]
    return (rng.integers(-3, 4, batch) if exact else rng.standard_normal(batch)).astype(np.float32)


def launch_key(shape) -> tuple:
    """A lookback launch shape as the mirror's SHAPES name it: (block threads, items, vec, depth,
    walk lanes, tiles per segment, protocol warp, chunks first, run chunks, register items where
    there are runs, else 0: only then do they change the arithmetic). A block of row warps or packed
    rows (lookback.cu's SEQUENCES_PER_TILE) scans each of its rows as a one-warp tile does, step for
    step and bit for bit, so it is that tile's key (32 threads): a packed row of q lanes as the first q
    lanes of a warp whose others hold only steps past the row's end (warp_scan.cuh's groups)."""
    return (32 if shape.sequences_per_tile != 1 else shape.block_threads, shape.items, shape.vec, shape.lookback_depth,
            shape.walk_lanes, shape.segment_tiles, shape.protocol_warp, shape.chunks_first, shape.run_chunks,
            shape.register_items if shape.run_chunks > 1 else 0)


def built_shape_id(shapes: dict, wanted) -> int:
    """The id under which the mirror is built for the launch shape `wanted`; skips the test when
    the mirror lacks it (a GPU whose tuning picks another shape)."""
    shape_id = next((i for i, s in shapes.items() if s == wanted), None)
    if shape_id is None:
        pytest.skip(f"the mirror is not built for this GPU's launch shape {wanted}; add it to SHAPES")
    return shape_id


def gpu_length(tile: int, tiles: int, vec: int) -> int:
    """A length past `tiles` tiles: 124 steps more on the 16-byte path (the second of two rows then
    starts 28 elements past a line, and is scanned from it: P196), 123 on the scalar one."""
    return tiles * tile + (124 if vec == 4 else 123)


def assert_gpu_equals_mirror(mirror, shape_id: int, variant: str, length: int, time_stride_2: bool,
                             shape, sequences: int = 2) -> None:
    """`sequences` sequences of `length` steps give the same bits on the GPU (rtscan.scan with
    `variant`, which must launch `shape`, the mirror's shape_id) as in the mirror. time_stride_2: the
    GPU reads every other element of a doubled row, which keeps the kernel on its scalar (VEC = 1) path."""
    import torch

    import rtscan

    def on_gpu(array):
        if not time_stride_2:
            return torch.from_numpy(array).cuda()
        return torch.from_numpy(np.repeat(array, 2, axis=1)).cuda()[:, ::2]

    a, b = draw(np.random.default_rng(), (sequences, length))
    a_gpu, b_gpu = on_gpu(a), on_gpu(b)
    gpu = rtscan.scan(a_gpu, b_gpu, variant=variant).cpu().numpy()
    # The launch rtscan prepared for these tensors: its head, if it took one (P196), is the mirror's.
    placement = _scan.pointer_placement(a_gpu.data_ptr(), b_gpu.data_ptr(), a_gpu.data_ptr())
    launch = _scan.prepare(rtscan.registry.resolve(variant), _arrays.view("a", a_gpu), _arrays.view("a", a_gpu),
                           1, False, placement, _kernels.device_arch(0))
    assert launch.shape == shape, f"the GPU launched {launch.shape}, not the mirror's {shape}"
    cpu = mirror.scan(shape_id, a, b, head=launch.plan.layout.head, longest_head=launch.plan.layout.longest_head)
    assert np.array_equal(gpu, cpu), f"first difference at {np.argwhere(gpu != cpu)[:3].tolist()}"


def case_id(case):
    shape_id, shape, dim, reverse, with_h0 = case
    return f"shape{shape_id}-{'x'.join(map(str, shape))}-dim{dim}{'-rev' if reverse else ''}{'-h0' if with_h0 else ''}"


def check_case(mirror, rng, case):
    """Problems found on one case, as text, with either kind of data; empty when the mirror is right."""
    return [f"{'exact' if exact else 'float'} data: {problem}"
            for exact in (False, True) for problem in _check_data(mirror, rng, case, exact)]


def _check_data(mirror, rng, case, exact):
    # Every finished pattern must give the first one's bits: the determinism argument.
    shape_id, shape, dim, reverse, with_h0 = case
    a, b = draw(rng, shape, exact)
    h0 = draw_h0(rng, shape, dim, exact) if with_h0 else None
    outputs = [mirror.scan(shape_id, a, b, h0, dim, reverse, p, seed)
               for p in FINISHED_PROBABILITIES for seed in (1, 2)]
    problems = []
    if np.isnan(outputs[0]).any():
        problems.append("NaN: steps not written, or descriptors or shared memory read that were not written")
    if any(not np.array_equal(outputs[0], other, equal_nan=True) for other in outputs[1:]):
        problems.append("output depends on which segments the look-back finds finished")
    expected = _checks.expected(a, b, h0, dim, reverse)
    scale = _checks.running_scale(a, b, h0, dim, reverse)
    try:
        _checks.assert_close(outputs[0], expected, scale, case_id(case))
    except AssertionError as error:
        problems.append(str(error).splitlines()[0])
    return problems


def assert_twin_caught(build, twin, mutation, cases, directory, other_problems=lambda mirror: []):
    """The mirror that build(kernels, target) makes, built against a copy of kernels_cu/ in
    `directory` with mutation = (file under kernels_cu/, exact text, replacement) applied, must
    show a problem: first other_problems(mirror), which should be the cheap ones, then the cases
    in order until one fails (so the cheapest cases that catch most twins belong first)."""
    file, text, replacement = mutation
    kernels = directory / "kernels_cu"
    shutil.copytree(_compile.kernels_dir(), kernels)
    source = (kernels / file).read_text()
    assert source.count(text) == 1, f"the twin {twin} no longer applies: {text!r} is not in {file} exactly once"
    (kernels / file).write_text(source.replace(text, replacement))
    mirror = build(kernels, directory / "twin.so")
    rng = np.random.default_rng()
    caught = bool(other_problems(mirror)) or any(check_case(mirror, rng, case) for case in cases)
    assert caught, f"broken twin {twin} passed every check: the mirror tests cannot see this mistake"


NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (for ptxas --resource-usage) is not installed")
# The parameters of every single-pass kernel (lookback_scan's, rtscan/_scan.py's _LookbackArguments).
SINGLE_PASS_SIGNATURE = ("const float*, const float*, float*, const float*, rtscan::SeqLayout, rtscan::TileWorkspace, "
                         "long long, long long")


def assert_spill_free(arch: str, source: str, expressions, directory: Path,
                      signature: str = SINGLE_PASS_SIGNATURE) -> None:
    """ptxas (through nvcc) compiles each instantiation of kernels_cu/`source` for `arch` without
    local-memory spills, each in a unit of its own, as rtscan compiles one launch shape a program:
    ptxas can allocate a kernel's registers differently beside other kernels (profiling/NOTES.md,
    item 80). The units compile in parallel."""
    def compile_one(index_and_expression):
        index, expression = index_and_expression
        wrapper = directory / f"instantiate{index}.cu"
        wrapper.write_text(f'#include "{source}"\ntemplate __global__ void {expression}({signature});\n')
        result = subprocess.run([NVCC, f"-arch={arch}", "-std=c++17", f"-I{_compile.kernels_dir()}", "-cubin",
                                 "--resource-usage", "-o", str(directory / f"out{index}.cubin"), str(wrapper)],
                                check=True, capture_output=True, text=True)
        return expression, result.stdout + result.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        reports = list(pool.map(compile_one, enumerate(expressions)))
    for expression, report in reports:
        spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
        assert len(spills) == 1, (expression, report)
        assert spills[0] == ("0", "0"), (expression, report)
