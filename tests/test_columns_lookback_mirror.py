"""The CPU mirror of columns_lookback (tests/mirrors/columns_lookback_mirror.cpp), built by the host
C++ compiler from the kernel's own headers, and its broken twins; ptxas on the kernel.

- The mirror agrees with the float64 reference on time-major batches (groups of 32, 16 and 8
  sequences, full and part-full), (B, L, D) along L, contiguous and strided rows, chunk edges and look-backs over
  many windows, reverse and h0, and gives the same bits whichever published end states its
  look-back happens to see.
- Each broken twin is the mirror built against a copy of kernels_cu/ with one deliberate mistake in
  columns_lookback_index.cuh (where tiles, lanes, steps and descriptors are; which predecessors a
  window reads; the first carry) or in the combine it shares with the other kernels: every one must
  be caught.
- ptxas (where nvcc is installed) finds the tuning table's shapes free of spills.
- On a GPU, the tuned shapes give the mirror's bits.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import _mirrors
from _mirrors import needs_compiler
from rtscan import registry

# Launch shapes compiled into the mirror (RTSCAN_COLUMNS_LOOKBACK_SHAPES): id -> (block threads,
# items, lookback depth, sequences a tile); how many of a thread's items wait in registers changes
# no bit.
SHAPES = {0: (512, 64, 2, 32), 1: (256, 32, 1, 32), 2: (64, 2, 1, 32), 3: (96, 3, 3, 32), 4: (32, 5, 2, 32),
          5: (512, 64, 2, 16), 6: (256, 64, 2, 8), 7: (64, 3, 2, 16), 8: (96, 2, 1, 8)}

# name -> (file under kernels_cu/, exact text, replacement)
BROKEN_TWINS = {
    "slot_drops_the_lane": ("columns_lookback_index.cuh",
                            "return (tile.group * tiles_per_seq + tile.chunk) * SEQUENCES + lane;",
                            "return (tile.group * tiles_per_seq + tile.chunk) * SEQUENCES;"),
    "slot_drops_the_group": ("columns_lookback_index.cuh",
                             "return (tile.group * tiles_per_seq + tile.chunk) * SEQUENCES + lane;",
                             "return tile.chunk * SEQUENCES + lane;"),
    "slot_as_if_32_sequences": ("columns_lookback_index.cuh",
                                "return (tile.group * tiles_per_seq + tile.chunk) * SEQUENCES + lane;",
                                "return (tile.group * tiles_per_seq + tile.chunk) * WARP_SIZE + lane;"),
    "predecessor_in_the_next_lane": ("columns_lookback_index.cuh", "return slot - distance * SEQUENCES;",
                                     "return slot - distance * SEQUENCES + 1;"),
    "lookback_skips_the_nearest": ("columns_lookback_index.cuh", "return window * DEPTH + 1 + k;",
                                   "return window * DEPTH + 2 + k;"),
    "lookback_windows_overlap": ("columns_lookback_index.cuh", "return window * DEPTH + 1 + k;",
                                 "return window * (DEPTH - 1) + 1 + k;"),
    "tickets_group_major": ("columns_lookback_index.cuh", "const long long chunk = ticket / groups;",
                            "const long long chunk = ticket % groups;"),
    "lane_sequence_off_by_one": ("columns_lookback_index.cuh", "return tile.group * SEQUENCES + lane % SEQUENCES;",
                                 "return tile.group * SEQUENCES + lane % SEQUENCES + 1;"),
    "lane_sequence_of_a_whole_warp": ("columns_lookback_index.cuh",
                                      "return tile.group * SEQUENCES + lane % SEQUENCES;",
                                      "return tile.group * SEQUENCES + lane;"),
    "span_drops_the_part": ("columns_lookback_index.cuh", "return warp * (WARP_SIZE / SEQUENCES) + lane / SEQUENCES;",
                            "return warp * (WARP_SIZE / SEQUENCES);"),
    "spans_part_major": ("columns_lookback_index.cuh", "return warp * (WARP_SIZE / SEQUENCES) + lane / SEQUENCES;",
                         "return warp + lane / SEQUENCES * (WARP_SIZE / SEQUENCES);"),
    "groups_round_down": ("columns_lookback_index.cuh", "return (num_seqs + SEQUENCES - 1) / SEQUENCES;",
                          "return num_seqs / SEQUENCES;"),
    "span_step_off_by_one": ("columns_lookback_index.cuh", "return chunk * (SPANS * ITEMS) + span * ITEMS;",
                             "return chunk * (SPANS * ITEMS) + span * ITEMS + 1;"),
    "first_carry_of_sequence_0": ("columns_lookback_index.cuh", "return h0 != nullptr ? h0[seq] : 0.0f;",
                                  "return h0 != nullptr ? h0[0] : 0.0f;"),
    "compose_operands_swapped": ("affine.cuh", "multiply_add(later.a, earlier.b, later.b)",
                                 "multiply_add(earlier.a, later.b, earlier.b)"),
}

build_mirror = functools.partial(_mirrors.Mirror, "columns_lookback_mirror.cpp", "rtscan_columns_lookback_mirror")
mirror = _mirrors.module_fixture(build_mirror)


def chunk_of(shape_id):
    """A tile's steps of each of its sequences."""
    threads, items, _, sequences = SHAPES[shape_id]
    return threads * items // sequences


# (shape id, array shape, dim, reverse, with h0): cheap cases that catch most twins first.
def cases():
    return [
        (2, (70, 33), 0, False, True),           # 18 chunks of 4, two groups, the second of one sequence
        (3, (200, 70), 0, True, True),           # 23 chunks of 9, depth 3: windows of three
        (4, (2, 301, 40), 1, False, True),       # (B, L, D) along L: 80 sequences in three groups
        (2, (3, 97), -1, False, True),           # contiguous rows: each sequence alone in its lane
        (3, (5, 2 * 100 + 3), -1, True, False),
        (4, (3, 41, 4), 1, False, True),         # time stride 4, batch axes (3, 4) not mergeable
        (2, (1,), -1, False, True),
        (2, (4, 64), 0, False, False),           # one chunk: no look-back
        (0, (3 * chunk_of(0) + 5, 37), 0, False, True),
        (1, (5 * chunk_of(1) + 1, 100), 0, True, True),
        (0, (chunk_of(0), 32), 0, False, False),  # one full chunk of one full group
        (7, (300, 21), 0, False, True),          # 16 sequences a tile: 25 chunks of 12, a group of 5
        (8, (250, 8), 0, True, True),            # 8 a tile: 11 chunks of 24, one full group
        (7, (2, 150, 16), 1, False, True),       # (B, L, 16) along L: a group each
        (8, (3, 50, 12), 1, False, False),       # (B, L, 12): groups across batch rows
        (5, (2 * chunk_of(5) + 9, 16), 0, False, True),
        (6, (3 * chunk_of(6) + 1, 5), 0, True, True),
    ]


CASES = [pytest.param(case, id=_mirrors.case_id(case)) for case in cases()]


@needs_compiler
@pytest.mark.parametrize("case", CASES)
def test_mirror_matches_reference(mirror, case):
    problems = _mirrors.check_case(mirror, np.random.default_rng(), case)
    assert not problems, problems


@needs_compiler
def test_nan_propagates_as_in_the_reference(mirror):
    """A NaN offset in one step makes that step and every later one of its sequence NaN, nothing
    before it and no other sequence."""
    import _checks

    rng = np.random.default_rng()
    a, b = _mirrors.draw(rng, (300, 40))
    b[int(rng.integers(5, 300)), 3] = np.nan
    out = mirror.scan(2, a, b, dim=0)
    _checks.assert_close(out, _checks.expected(a, b, None, 0), _checks.running_scale(a, b, None, 0), "one NaN")


@needs_compiler
@pytest.mark.parametrize("twin", sorted(BROKEN_TWINS))
def test_every_broken_twin_is_caught(twin, tmp_path):
    file, text, replacement = BROKEN_TWINS[twin]
    _mirrors.assert_twin_caught(build_mirror, twin, (file, text, replacement), cases(), tmp_path)


def test_the_tuned_shapes_are_built_into_the_mirror():
    """The GPU-vs-mirror test skips a launch shape the mirror lacks; none of the tuning table's may be."""
    variant = registry.resolve("columns_lookback")
    for arch in ("sm_80", "sm_86", "sm_90", "sm_100", "sm_120"):
        for shape in variant.launch_shapes(arch, "float32"):
            assert (shape.block_threads, shape.items, shape.lookback_depth,
                    shape.sequences_per_tile) in SHAPES.values(), (arch, shape)


# sm_100, which runs sm_90's entry untuned, spills 4 bytes in both of its shapes (ptxas 13.0).
@_mirrors.needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_registered_shapes_do_not_spill(arch, tmp_path):
    """The claims in rtscan/tuning.py: every shape of the table for this architecture, spill-free."""
    variant = registry.resolve("columns_lookback")
    _mirrors.assert_spill_free(arch, variant.source, variant.expressions(variant.launch_shapes(arch, "float32")),
                               tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("sequences", [6, 16, 40, 2049])
def test_gpu_equals_mirror_bitwise(mirror, sequences):
    """The tuned shape for this many sequences gives the mirror's bits on a time-major batch."""
    import torch

    import rtscan
    from rtscan import _kernels

    variant = registry.resolve("columns_lookback")
    shape = variant.launch_shape(_kernels.device_arch(0), "float32", 1, 1 << 20, sequences)
    shape_id = _mirrors.built_shape_id(SHAPES, (shape.block_threads, shape.items, shape.lookback_depth,
                                                shape.sequences_per_tile))
    a, b = _mirrors.draw(np.random.default_rng(), (60 * chunk_of(shape_id) + 7, sequences))
    gpu = rtscan.scan(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), dim=0,
                      variant="columns_lookback").cpu().numpy()
    cpu = mirror.scan(shape_id, a, b, dim=0)
    assert np.array_equal(gpu, cpu), f"first difference at {np.argwhere(gpu != cpu)[:3].tolist()}"
