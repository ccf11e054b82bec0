"""The CPU mirror of the Blelloch kernel (tests/mirrors/blelloch_mirror.cpp), built by the host C++
compiler from the kernels' own headers, and its broken twins; and NVRTC compiling the kernel.

- The mirror agrees with the float64 reference on lengths around tile and segment edges, primes,
  batches, strided time, reverse and h0, and gives the same bits whichever segments its look-back
  finds finished (the determinism argument of kernels_cu/tile_state.cuh).
- The tree's accesses are free of shared-memory bank conflicts (counted by the mirror from the
  same index functions), and the dynamic shared memory the kernel's header asks for equals the
  formula blelloch.cu gives the host.
- Each broken twin is the mirror built against a copy of kernels_cu/ with one deliberate mistake
  in blelloch_tree.cuh or affine.cuh (operands swapped, a tree index off by one, a wrong
  padding): every one of them must be caught, by a wrong answer or by a bank conflict.
- NVRTC compiles blelloch.cu for every supported architecture (no GPU needed).
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import _checks
import _mirrors
from _mirrors import SEGMENT_TILES, needs_compiler
from rtscan import _compile

# Launch shapes compiled into the mirror (RTSCAN_BLELLOCH_SHAPES):
# id -> (block_threads, items, vec, lookback_depth)
SHAPES = {0: (256, 8, 4, 1), 1: (256, 8, 1, 1), 2: (128, 16, 4, 2), 3: (96, 4, 1, 4), 4: (32, 2, 1, 2),
          5: (256, 48, 4, 1), 6: (1024, 16, 4, 1)}
ARCHES = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100"]

# (file under kernels_cu/, exact text, replacement): one deliberate mistake each.
BROKEN_TWINS = {
    "up_sweep_operands_swapped": ("blelloch_tree.cuh", "tree.store(right, compose(tree.load(right), tree.load(left)));",
                                  "tree.store(right, compose(tree.load(left), tree.load(right)));"),
    "down_sweep_operands_swapped": ("blelloch_tree.cuh", "tree.store(right, compose(left_map, before));",
                                    "tree.store(right, compose(before, left_map));"),
    "down_sweep_left_keeps_own_map": ("blelloch_tree.cuh", "tree.store(left, before);",
                                      "tree.store(left, left_map);"),
    "left_child_off_by_one": ("blelloch_tree.cuh", "return ((2 * node + 1) << level) - 1;",
                              "return ((2 * node + 1) << level);"),
    "right_child_off_by_one": ("blelloch_tree.cuh", "return ((2 * node + 2) << level) - 1;",
                               "return ((2 * node + 2) << level) - 2;"),
    "levels_one_short": ("blelloch_tree.cuh", "while ((1 << levels) < leaves) ++levels;",
                         "while ((2 << levels) < leaves) ++levels;"),
    "root_off_by_one": ("blelloch_tree.cuh", "return leaves - 1;", "return leaves - 2;"),
    "rounds_round_down": ("blelloch_tree.cuh", "return (nodes + BLOCK_THREADS - 1) / BLOCK_THREADS;",
                          "return nodes / BLOCK_THREADS;"),
    "step_state_order_swapped": ("blelloch_tree.cuh", "return apply(own, apply(prefix, carry));",
                                 "return apply(prefix, apply(own, carry));"),
    # Padding: slots that collide, arrays sized without the padding (the offsets overlap the
    # multipliers), and paddings that are correct but conflicted (caught by the bank count).
    "padding_precedence": ("blelloch_tree.cuh", "return node + (node >> TREE_BANK_BITS) +",
                           "return node + node >> TREE_BANK_BITS +"),
    "tree_size_without_padding": ("blelloch_tree.cuh", "return tree_slot(leaves - 1) + 1;", "return leaves;"),
    "padding_one_level": ("blelloch_tree.cuh", " + (node >> (2 * TREE_BANK_BITS));", ";"),
    "padding_removed": ("blelloch_tree.cuh",
                        "return node + (node >> TREE_BANK_BITS) + (node >> (2 * TREE_BANK_BITS));",
                        "return node;"),
    "compose_operands_swapped": ("affine.cuh", "multiply_add(later.a, earlier.b, later.b)",
                                 "multiply_add(earlier.a, later.b, earlier.b)"),
    "compose_product_wrong_factor": ("affine.cuh", "{later.a * earlier.a,", "{later.a * earlier.b,"),
    "apply_operands_swapped": ("affine.cuh", "return multiply_add(map.a, h, map.b);",
                               "return multiply_add(map.b, h, map.a);"),
}


def build_mirror(kernels, target):
    mirror = _mirrors.Mirror("blelloch_mirror.cpp", "rtscan_blelloch_mirror", kernels, target)
    for name, restype in (("rtscan_blelloch_bank_conflicts", ctypes.c_int),
                          ("rtscan_blelloch_shared_bytes", ctypes.c_longlong)):
        function = getattr(mirror.library, name)
        function.restype = restype
        function.argtypes = [ctypes.c_int]
    return mirror


mirror = _mirrors.module_fixture(build_mirror)


def tile_of(shape_id):
    block_threads, items, _, _ = SHAPES[shape_id]
    return block_threads * items


def shared_bytes_documented(block_threads, items):
    """The dynamic shared memory the host passes for blelloch.cu (rtscan/registry.py)."""
    from rtscan import registry

    return registry.blelloch_tree_bytes(registry.LaunchShape(block_threads, items, 1, 1, 1, 0, 32, 32))


# (shape id, array shape, dim, reverse, with h0). Shapes 0-2 have 2048-step tiles, 3 has 384-step
# tiles in a 512-leaf tree, 4 has 64-step tiles (segments of 2048 steps, a look-back window of 64
# segments, so 70 segments cross into a second window), 5 a 12288-step tile in a 16384-leaf tree.
def cases():
    big, odd, tiny = tile_of(0), tile_of(3), tile_of(4)
    segment = SEGMENT_TILES * tiny
    return [
        (0, (1,), -1, False, True),
        (1, (2, 2), -1, True, False),
        (0, (big - 1,), -1, False, False),
        (0, (big,), -1, False, True),
        (1, (big + 1,), -1, False, True),
        (0, (3 * big + 4099,), -1, False, False),  # 4099 is prime
        (0, (SEGMENT_TILES * big + 2 * big - 9,), -1, False, True),  # across a segment edge
        (1, (2, 2 * big + 31), -1, True, True),
        (2, (5, 4099), -1, False, True),
        (2, (3, 1009, 2), 1, True, False),  # time stride 2
        (3, (37 * odd + 5,), -1, False, False),
        (3, (3, 2 * odd + 7, 4), 1, False, True),  # time stride 4, batch axes (3, 4) not mergeable
        (3, (2, 3, 5 * odd + 1), 0, True, False),  # dim 0 of a 3-d array: two batch axes
        (4, (70 * segment + 5,), -1, False, True),
        (4, (2, 40 * segment + 3), -1, True, False),
        (4, (3, 6 * segment), -1, False, True),  # ends on a segment's last tile
        (4, (SEGMENT_TILES * tiny + 1,), -1, False, True),  # one step into the second segment
        (5, (2 * tile_of(5) + 7,), -1, False, True),
    ]


def conflict_problems(mirror):
    """Shapes whose tree accesses need more than one shared-memory wavefront, as text."""
    conflicts = mirror.library.rtscan_blelloch_bank_conflicts
    return [f"shape {shape_id}: {conflicts(shape_id)}-way bank conflict"
            for shape_id in SHAPES if conflicts(shape_id) != 1]


@needs_compiler
@pytest.mark.parametrize("case", cases(), ids=_mirrors.case_id)
def test_mirror_matches_reference_and_is_deterministic(mirror, rng, case):
    problems = _mirrors.check_case(mirror, rng, case)
    assert not problems, problems


@needs_compiler
@pytest.mark.parametrize("shape_id", [0, 4])
def test_nan_propagates_as_in_the_reference(mirror, rng, shape_id):
    """A NaN offset in one step makes that step and every later one NaN, and nothing before it:
    the tree combines a step only into the prefixes of the steps after it."""
    length = 5 * tile_of(shape_id) + 3
    a, b = _mirrors.draw(rng, (length,))
    b[int(rng.integers(tile_of(shape_id), length))] = np.nan
    out = mirror.scan(shape_id, a, b)
    _checks.assert_close(out, _checks.expected(a, b), _checks.running_scale(a, b), "one NaN")


@needs_compiler
def test_tree_accesses_are_free_of_bank_conflicts(mirror):
    problems = conflict_problems(mirror)
    assert not problems, problems


@needs_compiler
@pytest.mark.parametrize("shape_id", sorted(SHAPES))
def test_shared_bytes_follow_the_documented_formula(mirror, shape_id):
    block_threads, items, _, _ = SHAPES[shape_id]
    assert mirror.library.rtscan_blelloch_shared_bytes(shape_id) == shared_bytes_documented(block_threads, items)


@needs_compiler
@pytest.mark.parametrize("twin", sorted(BROKEN_TWINS))
def test_every_broken_twin_is_caught(twin, tmp_path):
    _mirrors.assert_twin_caught(build_mirror, twin, BROKEN_TWINS[twin], cases(), tmp_path, conflict_problems)


def test_nvrtc_compiles_blelloch_for_every_arch():
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-python) is not installed")
    expressions = ("rtscan::blelloch_scan<256, 8, 4, 4, 1>", "rtscan::blelloch_scan<256, 8, 1, 4, 1>")
    for arch in ARCHES:
        module = _compile.nvrtc_compile("blelloch.cu", expressions, _compile.CompileOptions(arch=arch))
        assert module.cubin[:4] == b"\x7fELF", arch
        assert set(module.lowered_names) == set(expressions), arch
        for expression, lowered in module.lowered_names.items():
            assert lowered.encode() in module.cubin, f"{arch}: {expression} lowered to {lowered}, not in the cubin"


@pytest.mark.gpu
@pytest.mark.parametrize("tiles", [1, 3, 40, 70 * SEGMENT_TILES])
@pytest.mark.parametrize("vec", [4, 1])
def test_gpu_equals_mirror_bitwise(mirror, tiles, vec):
    """The registered blelloch shapes on the GPU give the mirror's bits, on the 16-byte path and on
    the scalar path (time stride 2)."""
    from rtscan import _kernels, registry

    variant, arch = registry.resolve("blelloch"), _kernels.device_arch(0)
    length = _mirrors.gpu_length(variant.launch_shape(arch, "float32", vec, 1 << 40).tile, tiles, vec)
    shape = variant.launch_shape(arch, "float32", vec, length, 2)  # assert_gpu_equals_mirror scans two sequences
    wanted = (shape.block_threads, shape.items, shape.vec, shape.lookback_depth)
    _mirrors.assert_gpu_equals_mirror(mirror, _mirrors.built_shape_id(SHAPES, wanted), "blelloch", length, vec == 1,
                                      shape)
