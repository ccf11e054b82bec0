"""The CPU mirror of the three-pass kernels (tests/mirrors/three_pass_mirror.cpp): three_pass and
three_pass_reduce (kernels_cu/three_pass.cu) and columns (kernels_cu/columns.cu, which shares their
pass 2), built by the host C++ compiler from the kernels' own headers, and its broken twins; NVRTC
and ptxas on the kernels.

- The mirror of each form agrees with the float64 reference on lengths around tile edges and
  pass 2's chunk edges, primes, batches, strided time, reverse and h0.
- Each broken twin is the mirror built against a copy of kernels_cu/ with one deliberate mistake
  in three_pass_index.cuh (where the passes keep and find their values, how the carry is handed
  on) or in the headers it shares with the other kernels: every one must be caught, for every
  form it applies to.
- NVRTC compiles three_pass.cu and columns.cu for every supported architecture; ptxas (where nvcc
  is installed) finds the tuning table's shapes free of spills.
- On a GPU, each form gives the mirror's bits.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import _mirrors
from _mirrors import needs_compiler
from rtscan import _compile, registry

# Launch shapes compiled into the mirror (RTSCAN_THREE_PASS_SHAPES): id -> (block_threads, items,
# vec, then pass 2's block_threads and items). The ids of three_pass_reduce are those of three_pass
# plus 10, those of columns plus 20 (columns reads one step at a time whatever the vec). Shapes 5
# and 6 are built for columns only: its tuned long shape (pass 2 in 256 x 8, 2048 aggregates a
# round) and short shape (pass 2 in its own 32 x 4, 128 a round).
FORMS = {"three_pass": 0, "three_pass_reduce": 10, "columns": 20}
SHAPES = {0: (256, 16, 4, 256, 16), 1: (256, 16, 1, 256, 16), 2: (32, 2, 1, 32, 2), 3: (96, 4, 4, 96, 4),
          4: (64, 8, 4, 64, 8), 5: (32, 4, 1, 256, 8), 6: (32, 4, 1, 32, 4)}
ARCHES = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100"]

# name -> (file under kernels_cu/, exact text, replacement, forms it applies to)
ALL = tuple(FORMS)
BROKEN_TWINS = {
    # operands swapped where a carry is applied
    "pair_apply_operands_swapped": ("three_pass_index.cuh", "return multiply_add(through.a, carry, through.b);",
                                    "return multiply_add(through.b, carry, through.a);", ("three_pass",)),
    "rescan_apply_operands_swapped": ("three_pass_index.cuh", "return multiply_add(before.a, carry, before.b);",
                                      "return multiply_add(before.b, carry, before.a);", ("three_pass_reduce",)),
    "carry_apply_operands_swapped": ("three_pass_index.cuh", "return multiply_add(before.a, running, before.b);",
                                     "return multiply_add(before.b, running, before.a);", ALL),
    # an index off by one
    "pair_slot_overlaps_next_tile": ("three_pass_index.cuh", "return tile * TILE;", "return tile * (TILE - 1);",
                                     ("three_pass",)),
    "pair_slot_off_by_one": ("three_pass_index.cuh", "return tile * TILE;", "return tile * TILE + 1;",
                             ("three_pass",)),
    "aggregate_slot_off_by_one": ("three_pass_index.cuh",
                                  "long long aggregate_slot(long long tile) {\n    return tile;",
                                  "long long aggregate_slot(long long tile) {\n    return tile + 1;", ALL),
    "sequence_slots_off_by_one": ("three_pass_index.cuh", "return seq * tiles_per_seq;",
                                  "return seq * tiles_per_seq + 1;", ALL),
    "lane_step_off_by_one": ("indexing.cuh", "return span_start + chunk * WARP_SIZE * VEC + lane * VEC;",
                             "return span_start + chunk * WARP_SIZE * VEC + lane * VEC + 1;", ALL),
    # a wrong carry into a sequence's first tile
    "first_tile_carry_of_sequence_0": ("three_pass_index.cuh", "return h0 != nullptr ? h0[seq] : 0.0f;",
                                       "return h0 != nullptr ? h0[0] : 0.0f;", ALL),
    "first_tile_carry_ignores_h0": ("three_pass_index.cuh", "return h0 != nullptr ? h0[seq] : 0.0f;",
                                    "return h0 != nullptr ? 0.0f : 0.0f;", ALL),
    # pass 3 takes another tile's carry
    "pass3_takes_previous_tiles_carry": ("three_pass_index.cuh",
                                         "long long carry_slot(long long tile) {\n    return tile;",
                                         "long long carry_slot(long long tile) {\n    return tile - 1;", ALL),
    "pass3_takes_next_tiles_carry": ("three_pass_index.cuh", "long long carry_slot(long long tile) {\n    return tile;",
                                     "long long carry_slot(long long tile) {\n    return tile + 1;", ALL),
    # the shared combine
    "compose_operands_swapped": ("affine.cuh", "multiply_add(later.a, earlier.b, later.b)",
                                 "multiply_add(earlier.a, later.b, earlier.b)", ALL),
    "scan_round_strict": ("indexing.cuh", "return lane >= offset;", "return lane > offset;", ALL),
    # where a columns thread works
    "column_chunk_off_by_one": ("columns_index.cuh", "return {(grid_index - chunk * blocks) * block_threads + thread, chunk};",
                                "return {(grid_index - chunk * blocks) * block_threads + thread, chunk + 1};",
                                ("columns",)),
    "column_blocks_round_down": ("columns_index.cuh", "return (num_seqs + block_threads - 1) / block_threads;",
                                 "return num_seqs / block_threads;", ("columns",)),
}
TWIN_CASES = [pytest.param(twin, form, id=f"{form}-{twin}") for twin, (*_, forms) in sorted(BROKEN_TWINS.items())
              for form in forms]

build_mirror = functools.partial(_mirrors.Mirror, "three_pass_mirror.cpp", "rtscan_three_pass_mirror")
mirror = _mirrors.module_fixture(build_mirror)


def tile_of(shape_id):
    block_threads, items, *_ = SHAPES[shape_id % 10]
    return block_threads * items


# (shape id within a form, array shape, dim, reverse, with h0). Shape 2 has 64-step tiles and
# chunks of 64 tiles in pass 2 (4096 steps a chunk), so 70 chunks fit in 286 725 steps.
def form_cases():
    big, tiny, odd = tile_of(0), tile_of(2), tile_of(3)
    chunk = 64 * tiny  # steps per pass-2 chunk of shape 2
    return [
        (2, (1,), -1, False, True),
        (2, (2, 2), -1, True, False),
        (2, (3, 5 * tiny), -1, False, True),  # every tile full, the last one too
        (2, (chunk - 1,), -1, False, True),
        (2, (chunk + 1,), -1, True, True),
        (2, (70 * chunk + 5,), -1, False, True),  # pass 2 through 71 chunks
        (2, (2, 3 * chunk + 4099), -1, True, False),  # 4099 is prime
        (3, (37 * odd + 5,), -1, False, False),
        (3, (3, 2 * odd + 7, 4), 1, False, True),  # time stride 4, batch axes (3, 4) not mergeable
        (3, (2, 3, 5 * odd + 1), 0, True, False),  # dim 0 of a 3-d array: two batch axes
        (4, (5, 2 * tile_of(4) + 36), -1, False, True),
        (4, (3, 1009, 2), 1, True, True),  # time stride 2
        (0, (big - 1,), -1, False, False),
        (0, (big,), -1, False, True),
        (0, (2, 3 * big + 1), -1, False, True),
        (1, (2, 2 * big + 31), -1, True, True),
        (1, (3, big + 7, 2), 1, False, True),
    ]


def columns_cases():
    """columns' tuned shapes: the long one with pass 2 through two of its 2048-aggregate rounds, the
    short one through three of its 128-aggregate rounds, and time-major batches."""
    chunk = tile_of(5)
    return [
        (5, (2 * 2048 * chunk + 5,), -1, False, True),
        (5, (3 * chunk + 7, 37), 0, False, True),  # 37 time-major sequences, the second block of 32 partial
        (5, (2, 5 * chunk + 1, 40), 1, True, False),  # (B, L, D) along L, reversed
        (6, (2, 3 * 128 * chunk + 77), -1, True, True),
        (6, (200, 33), 0, False, False),
    ]


def cases(form):
    return [(shape_id + FORMS[form], *rest) for shape_id, *rest in
            form_cases() + (columns_cases() if form == "columns" else [])]


ALL_CASES = [pytest.param(case, id=_mirrors.case_id(case)) for form in FORMS for case in cases(form)]


@needs_compiler
@pytest.mark.parametrize("case", ALL_CASES)
def test_mirror_matches_reference(mirror, case):
    problems = _mirrors.check_case(mirror, np.random.default_rng(), case)
    assert not problems, problems


@needs_compiler
@pytest.mark.parametrize("form", FORMS)
def test_nan_propagates_as_in_the_reference(mirror, form):
    """A NaN offset in one step makes that step and every later one NaN, nothing before it: pass
    2 hands the NaN on through the carries, not back."""
    import _checks

    rng = np.random.default_rng()
    length = 70 * 64 * tile_of(2) + 5
    a, b = _mirrors.draw(rng, (length,))
    b[int(rng.integers(tile_of(2), length))] = np.nan
    out = mirror.scan(2 + FORMS[form], a, b)
    _checks.assert_close(out, _checks.expected(a, b), _checks.running_scale(a, b), "one NaN")


@needs_compiler
def test_the_forms_agree_bitwise_on_what_they_share(mirror):
    """Both forms scan each tile in block_scan.cuh's association and hand the carry on through the
    same pass 2; with exact data (states are small integers) they give the same bits."""
    rng = np.random.default_rng()
    a, b = _mirrors.draw(rng, (3, 70 * 64 * tile_of(2) + 5), exact=True)
    h0 = _mirrors.draw_h0(rng, a.shape, -1, exact=True)
    assert np.array_equal(mirror.scan(2, a, b, h0), mirror.scan(12, a, b, h0))


@needs_compiler
@pytest.mark.parametrize("twin,form", TWIN_CASES)
def test_every_broken_twin_is_caught(twin, form, tmp_path):
    file, text, replacement, _ = BROKEN_TWINS[twin]
    _mirrors.assert_twin_caught(build_mirror, twin, (file, text, replacement), cases(form), tmp_path)


def test_each_form_has_at_least_four_twins_of_its_own_kinds():
    """At least four per form, among them an operand swap where a carry is applied, an index off
    by one, a wrong carry for a sequence's first tile, and pass 3 taking another tile's carry."""
    for form in FORMS:
        names = [twin for twin, (*_, forms) in BROKEN_TWINS.items() if form in forms]
        assert len(names) >= 4, form
        for kind in ("apply_operands_swapped", "off_by_one", "first_tile_carry", "pass3_takes"):
            assert any(kind in name for name in names), (form, kind)


# The kernels' instantiations, by source file: the tuning table's shape for each architecture, both paths.
def expressions_for(arch):
    by_source = {}
    for name in FORMS:
        variant = registry.resolve(name)
        by_source.setdefault(variant.source, []).extend(variant.expressions(variant.launch_shapes(arch, "float32")))
    return {source: tuple(dict.fromkeys(expressions)) for source, expressions in by_source.items()}


@pytest.mark.parametrize("arch", ARCHES)
def test_nvrtc_compiles_three_pass_for_every_arch(arch):
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-python) is not installed")
    for source, expressions in expressions_for(arch).items():
        module = _compile.nvrtc_compile(source, expressions, _compile.CompileOptions(arch=arch))
        assert module.cubin[:4] == b"\x7fELF", (arch, source)
        assert set(module.lowered_names) == set(expressions), (arch, source)
        for expression, lowered in module.lowered_names.items():
            assert lowered.startswith("_Z") and lowered.encode() in module.cubin, f"{arch}: {expression} -> {lowered}"


# Every pass of the three-pass forms takes these (three_pass.cu).
THREE_PASS_SIGNATURE = ("const float*, const float*, float*, const float*, rtscan::SeqLayout, "
                        "rtscan::ThreePassScratch, long long, long long")


@_mirrors.needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
def test_registered_shapes_do_not_spill(arch, tmp_path):
    """The claims in rtscan/tuning.py: every pass of every form, 16-byte and scalar, spill-free."""
    for source, expressions in expressions_for(arch).items():
        _mirrors.assert_spill_free(arch, source, expressions, tmp_path, THREE_PASS_SIGNATURE)


@pytest.mark.gpu
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("tiles", [1, 3, 40, 130])
@pytest.mark.parametrize("vec", [4, 1])
def test_gpu_equals_mirror_bitwise(mirror, form, tiles, vec):
    """The registered shape on the GPU gives the mirror's bits, on the 16-byte path and on the
    scalar path (time stride 2); 130 tiles take columns' long shape."""
    from rtscan import _kernels

    variant = registry.resolve(form)
    tile = variant.launch_shape(_kernels.device_arch(0), "float32", vec, 1 << 40).tile
    length = _mirrors.gpu_length(tile, tiles, vec)
    shape = variant.launch_shape(_kernels.device_arch(0), "float32", vec, length, 2)
    wanted = (shape.block_threads, shape.items, shape.vec, shape.carries.block_threads, shape.carries.items)
    _mirrors.assert_gpu_equals_mirror(mirror, _mirrors.built_shape_id(SHAPES, wanted) + FORMS[form], form,
                                      length, vec == 1, shape)


@pytest.mark.gpu
@pytest.mark.parametrize("form", FORMS)
def test_gpu_pass_2_over_several_chunks(form):
    """A sequence of more tiles than pass 2 scans in one chunk (4096 of the registered shape, 2048 of
    columns' own pass-2 shape), and a batch, against the reference; the mirror covers the same walk
    at small shapes."""
    import torch

    import _checks
    import rtscan
    from rtscan import _kernels

    variant = registry.resolve(form)
    shape = variant.launch_shape(_kernels.device_arch(0), "float32", 4, 1 << 40)
    chunk_steps = shape.carries.block_threads * shape.carries.items * shape.tile  # columns': a wider pass 2
    rng = np.random.default_rng()
    for array_shape in ((chunk_steps + 3 * shape.tile + 5,), (2, chunk_steps // 2 + 7)):
        a, b = _mirrors.draw(rng, array_shape)
        h0 = _mirrors.draw_h0(rng, array_shape, -1, exact=False)
        out = rtscan.scan(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), h0=torch.from_numpy(h0).cuda(),
                          variant=form).cpu().numpy()
        _checks.assert_close(out, _checks.expected(a, b, h0), _checks.running_scale(a, b, h0), f"{form} {array_shape}")
