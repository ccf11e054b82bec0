"""The Hillis-Steele kernel (kernels_cu/hillis_steele.cu) without a GPU: its CPU mirror
(tests/mirrors/hillis_steele_mirror.cpp), built by the host C++ compiler from the kernels' own
headers, the mirror's broken twins, and NVRTC compiling the kernel.

- The mirror agrees with the float64 reference on awkward lengths, layouts and values, and gives
  the same bits whichever segments its look-back finds finished (the determinism argument of
  kernels_cu/tile_state.cuh).
- It reads and writes no step past the end of a sequence.
- Each broken twin is the mirror built against a copy of kernels_cu/ with one deliberate mistake
  in the shared code, most of them in the cross-warp rounds (hillis_steele_rounds.cuh): every one
  must be caught.
- NVRTC compiles the kernel for every supported architecture, and (where nvcc is installed) ptxas
  allocates the shapes the kernel's header recommends without spilling.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import _checks
import _mirrors
from _mirrors import SEGMENT_TILES, needs_compiler
from rtscan import _compile

# Launch shapes compiled into the mirror (see rtscan_hillis_steele_mirror): id -> (block_threads, depth)
SHAPES = {0: (1024, 1), 1: (512, 1), 2: (256, 1), 3: (96, 2), 4: (160, 4), 5: (64, 2), 6: (32, 4)}

ROUNDS = "hillis_steele_rounds.cuh"
# (file under kernels_cu/, exact text, replacement): one deliberate mistake each.
BROKEN_TWINS = {
    "partner_off_by_one": (ROUNDS, "return warp - round_distance(round);", "return warp - round_distance(round) - 1;"),
    "round_combine_operands_swapped": (ROUNDS, "return compose(own, partner);", "return compose(partner, own);"),
    "first_round_skipped": (ROUNDS, "return 1 << round;", "return 2 << round;"),
    "last_round_skipped": (ROUNDS, "while (round_distance(rounds) < warps) ++rounds;",
                           "while (round_distance(rounds + 1) < warps) ++rounds;"),
    "round_reads_the_buffer_it_writes": (ROUNDS, "return (round + 1) & 1;", "return round & 1;"),
    "takes_a_partner_before_warp_0": (ROUNDS, "scan_round_takes(unsigned(warp), unsigned(round_distance(round)))",
                                      "scan_round_takes(unsigned(warp) + 1, unsigned(round_distance(round)))"),
    "warps_before_includes_own_warp": (ROUNDS, "return warp - 1;", "return warp;"),
    # The shared code the rounds stand on: the in-warp round test and the combine itself.
    "scan_round_strict": ("indexing.cuh", "return lane >= offset;", "return lane > offset;"),
    "compose_operands_swapped": ("affine.cuh", "multiply_add(later.a, earlier.b, later.b)",
                                 "multiply_add(earlier.a, later.b, earlier.b)"),
}


build_mirror = functools.partial(_mirrors.Mirror, "hillis_steele_mirror.cpp", "rtscan_hillis_steele_mirror")
mirror = _mirrors.module_fixture(build_mirror)


def tile_of(shape_id):
    return SHAPES[shape_id][0]


def segment_steps(shape_id):
    return SEGMENT_TILES * tile_of(shape_id)


# (shape id, array shape, dim, reverse, with h0). The first cases are the cheapest that every
# twin fails, so that the twin tests stop early; then lengths 1 and 2, a tile +-1, primes, a
# sequence across a segment edge with the largest tile, batch axes that do not merge (strided
# time), reverse, h0, and the small tiles whose sequences span dozens of segments: shape 5's
# look-back window holds 64 segments and shape 6's 128, so 70 and 131 segments cross into a second
# window. A length of whole segments ends on a segment's last tile, which publishes nothing.
def cases():
    big, mid = tile_of(0), tile_of(2)
    return [
        (0, (2, 3 * big + 17), -1, False, True),
        (3, (2, 2 * segment_steps(3) + 95), -1, True, True),
        (0, (1,), -1, False, True),
        (0, (3, 2), -1, True, False),
        (0, (3, big - 1), -1, False, True),
        (0, (2, big), -1, True, False),
        (0, (2, big + 1), -1, False, False),
        (0, (SEGMENT_TILES * big + 2 * big - 9,), -1, False, True),
        (1, (3, 4099), -1, False, False),  # 4099 is prime
        (1, (515, 2, 3), 0, True, False),  # time stride 6
        (2, (2, 257, 3), 1, False, True),  # time stride 3, batch axes (2, 3) not mergeable
        (2, (3, 40 * mid - 1), -1, True, True),
        (4, (7919,), -1, True, False),  # prime; 5 warps
        (5, (70 * segment_steps(5) + 5,), -1, False, True),
        (5, (3, 6 * segment_steps(5)), -1, False, True),
        (6, (2, 131 * segment_steps(6) + 3), -1, True, False),
        (6, (4, 3, 33), -1, False, True),
    ]


@needs_compiler
@pytest.mark.parametrize("case", cases(), ids=_mirrors.case_id)
def test_mirror_matches_reference_and_is_deterministic(mirror, case):
    problems = _mirrors.check_case(mirror, np.random.default_rng(), case)
    assert not problems, problems


@needs_compiler
@pytest.mark.parametrize("shape_id", [0, 5])
def test_resets_and_nan_propagate_as_in_the_reference(mirror, shape_id):
    """a = 0 resets the state (a carry from before must vanish exactly), and a NaN in one step
    poisons every later output of its sequence, across tiles and segments, and none before."""
    rng = np.random.default_rng()
    length = 3 * segment_steps(shape_id) + 11
    a, b = _mirrors.draw(rng, (2, length))
    a[rng.random(a.shape) < 0.002] = 0.0
    poisoned = int(rng.integers(tile_of(shape_id), length - tile_of(shape_id)))
    b[1, poisoned] = np.nan
    out = mirror.scan(shape_id, a, b, finished=0.3, seed=3)
    _checks.assert_close(out, _checks.expected(a, b), _checks.running_scale(a, b), f"NaN at step {poisoned}")


@needs_compiler
@pytest.mark.parametrize("reverse", [False, True])
def test_no_step_past_the_end_is_read_or_written(mirror, reverse):
    """Sequences are every other element of rows padded with NaN on both sides: a read past either
    end of a sequence would bring a NaN into the output, and a write would land in a gap."""
    rng = np.random.default_rng()
    shape_id, length = 2, 3 * tile_of(2) + 5
    padded = lambda: np.full((3, 2 * length + 4), np.nan, np.float32)  # noqa: E731
    inner = (slice(None), slice(2, 2 * length + 2, 2))
    a_rows, b_rows, out_rows = padded(), padded(), padded()
    a_rows[inner], b_rows[inner] = _mirrors.draw(rng, (3, length))
    out = mirror.scan(shape_id, a_rows[inner], b_rows[inner], reverse=reverse, out=out_rows[inner])
    gaps = np.ones(out_rows.shape, bool)
    gaps[inner] = False
    assert np.isnan(out_rows[gaps]).all(), "the mirror wrote outside the sequences"
    expected = _checks.expected(a_rows[inner], b_rows[inner], reverse=reverse)
    _checks.assert_close(out, expected, _checks.running_scale(a_rows[inner], b_rows[inner], reverse=reverse))


@needs_compiler
@pytest.mark.parametrize("twin", sorted(BROKEN_TWINS))
def test_every_broken_twin_is_caught(twin, tmp_path):
    _mirrors.assert_twin_caught(build_mirror, twin, BROKEN_TWINS[twin], cases(), tmp_path)


# ---- compiling the kernel itself --------------------------------------------------------------

ARCHES = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100"]
EM_CUDA = 190  # ELF e_machine of NVIDIA CUDA objects
# <BLOCK_THREADS, VEC, MIN_BLOCKS, LOOKBACK_DEPTH>: the shapes hillis_steele.cu's header finds free
# of spills (a cap of 40 registers, or 1024 threads), and two small ones of the mirror (3 warps, 1 warp).
SPILL_FREE_SHAPES = [(256, 1, 6, 1), (512, 1, 3, 1), (768, 1, 2, 1), (1024, 1, 1, 1)]
SMALL_SHAPES = [(96, 1, 8, 2), (32, 1, 16, 4)]


def name_expression(shape):
    return f"rtscan::hillis_steele_scan<{', '.join(map(str, shape))}>"


def nvrtc_missing() -> str | None:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except Exception as error:  # noqa: BLE001 - any import failure means no NVRTC here
        return f"cuda.bindings.nvrtc is not importable: {error}"
    return None


@pytest.mark.skipif(nvrtc_missing() is not None, reason=str(nvrtc_missing()))
@pytest.mark.parametrize("arch", ARCHES)
def test_nvrtc_compiles_the_kernel(arch):
    expressions = tuple(name_expression(shape) for shape in SPILL_FREE_SHAPES + SMALL_SHAPES)
    module = _compile.nvrtc_compile("hillis_steele.cu", expressions, _compile.CompileOptions(arch=arch))
    assert module.cubin[:4] == b"\x7fELF" and int.from_bytes(module.cubin[18:20], "little") == EM_CUDA
    assert set(module.lowered_names) == set(expressions)
    for lowered in module.lowered_names.values():
        assert lowered.startswith("_Z") and lowered.encode() in module.cubin, lowered
    if arch == "sm_90":  # the test-only timing perturbation of kernels_cu/perturb.cuh compiles too
        options = _compile.CompileOptions(arch=arch, defines=(("RTSCAN_PERTURB_SEED", "5"),))
        perturbed = _compile.nvrtc_compile("hillis_steele.cu", expressions, options)
        assert perturbed.cubin != module.cubin


@_mirrors.needs_nvcc
@pytest.mark.parametrize("arch", ARCHES)
def test_recommended_shapes_do_not_spill(arch, tmp_path):
    """The register claim in hillis_steele.cu's header: these shapes fit without local memory."""
    _mirrors.assert_spill_free(arch, "hillis_steele.cu", [name_expression(shape) for shape in SPILL_FREE_SHAPES],
                               tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("tiles", [1, 3, 40, 70 * 32])
def test_gpu_equals_mirror_bitwise(mirror, tiles):
    """The registered hillis_steele shape on the GPU gives the mirror's bits."""
    from rtscan import _kernels, registry

    variant, arch = registry.resolve("hillis_steele"), _kernels.device_arch(0)
    length = _mirrors.gpu_length(variant.launch_shape(arch, "float32", 1, 1 << 40).tile, tiles, 1)
    shape = variant.launch_shape(arch, "float32", 1, length, 2)  # assert_gpu_equals_mirror scans two sequences
    # The mirror's shapes are keyed by block size alone (one step per thread, scalar only).
    block_sizes = {i: s[0] for i, s in SHAPES.items()}
    _mirrors.assert_gpu_equals_mirror(mirror, _mirrors.built_shape_id(block_sizes, shape.block_threads),
                                      "hillis_steele", length, False, shape)
