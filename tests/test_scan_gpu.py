"""rtscan.scan on the GPU against the float64 reference: lengths around every warp and tile edge,
value regimes, NaN and Inf, resets, batches and strided layouts.

Every run draws fresh inputs (the seed is printed, see conftest.rng), poisons the output, and
checks every element: NaN/Inf positions exactly, finite ones within 1e-4 of |ref| + the running
scale (the recurrence on |a|, |b|), and ||out - ref|| / ||ref|| < 1e-5 (tests/_checks.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import rtscan
from rtscan import _arrays, _kernels, _scan
import _checks
from _gpu import (CHUNK, FINITE_POISON, GROWTH_MAX_LENGTH, REGIMES, SHORT_TILE, TILE, WARP_SPAN, cuda, guarded_out,
                  host, length_id, regime, scan_and_check, torch, without_kinds)

pytestmark = pytest.mark.gpu

SMALL = [1, 2, 3, 4, 5, 7, 8, 31, 32, 33, CHUNK - 1, CHUNK, CHUNK + 1, WARP_SPAN - 1, WARP_SPAN, WARP_SPAN + 1]
TILE_EDGES = [k * TILE + d for k in (1, 2, 32, 33) for d in (-1, 0, 1)]
# Short-shape edges below one long tile, and its segment edge (32 short tiles; the scalar modes)
SHORT_EDGES = sorted({k * SHORT_TILE + d for k in (1, 2, 32) for d in (-1, 0, 1)} - set(TILE_EDGES))
OTHER = [TILE + WARP_SPAN + 1, 997, 65537, 2**20 + 3]
MODES = ["contiguous", "misaligned", "misaligned_3", "misaligned_mixed", "reverse", "h0", "reverse_h0",
         "time_strided", "batch", "batch_reverse", "batch_misaligned"]
# Elements past a 128-byte line at which a and b start, and out: equal offsets take the 16-byte
# path from the line with that many identity steps first (SeqLayout.head, P67, P196), offsets
# unequal even modulo 4 the scalar path.
OFFSETS = {"misaligned": (1, 1), "misaligned_3": (3, 3), "misaligned_mixed": (1, 2)}


def shifted(values: np.ndarray, offset: int):
    """values on the GPU `offset` elements past the start of an allocation, after NaN: a kernel that
    read a step before the first would spread it to every state."""
    return cuda(np.concatenate([np.full(offset, np.nan), values]).astype(np.float32))[offset:]


def run_mode(rng, mode: str, length: int, regime_name: str = "mixed", what: str = ""):
    """One scan of `length` steps laid out as `mode` says, checked element by element."""
    if mode in ("contiguous", "reverse", "h0", "reverse_h0", *OFFSETS):
        a_np, b_np = regime(rng, regime_name, (length,))
        offset, out_offset = OFFSETS.get(mode, (0, 0))
        a, b = (shifted(x, offset) if offset else cuda(x) for x in (a_np, b_np))
        h0 = cuda(rng.uniform(-2, 2, ()).astype(np.float32)) if "h0" in mode else None
        out, outside_untouched = guarded_out(length, 64 + out_offset)
        scan_and_check(a, b, h0=h0, reverse="reverse" in mode, out=out, what=what)
        outside_untouched()
    elif mode == "time_strided":  # time on dim 0 of (L, 3): stride 3 between steps
        a_np, b_np = regime(rng, regime_name, (length, 3))
        scan_and_check(cuda(a_np), cuda(b_np), dim=0, what=what)
    elif mode in ("batch", "batch_reverse"):
        a_np, b_np = regime(rng, regime_name, (3, length))
        h0 = cuda(rng.uniform(-2, 2, 3).astype(np.float32))
        scan_and_check(cuda(a_np), cuda(b_np), h0=h0, reverse=mode == "batch_reverse", what=what)
    elif mode == "batch_misaligned":  # 3 rows, each 2 elements past a boundary (row pitch a multiple of 4)
        a_np, b_np = regime(rng, regime_name, (3, length))
        pitch = -(-length // 4) * 4 + 4

        def rows(values, fill):
            buffer = torch.full((3, pitch), fill, device="cuda")
            buffer[:, 2:2 + length] = torch.from_numpy(values)
            return buffer, buffer[:, 2:2 + length]

        (_, a), (_, b) = rows(a_np, float("nan")), rows(b_np, float("nan"))
        out_buffer, out = rows(np.full((3, length), np.nan, np.float32), 777.0)
        h0 = cuda(rng.uniform(-2, 2, 3).astype(np.float32))
        scan_and_check(a, b, h0=h0, out=out, what=what)
        outside = torch.cat([out_buffer[:, :2].flatten(), out_buffer[:, 2 + length:].flatten()])
        assert bool((outside == 777.0).all()), "rtscan wrote outside out's rows"
    else:
        raise ValueError(mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("length", SMALL + TILE_EDGES + SHORT_EDGES + OTHER, ids=length_id)
def test_lengths(rng, length, mode):
    run_mode(rng, mode, length, what=f"{mode} L={length}")


# With a head of h identity steps, tiles end k * tile - h steps into the caller's sequence.
HEAD_EDGES = [pytest.param(mode, k * size - head + d, id=f"{mode}-{k}x{name}-{head}{d:+d}")
              for mode, head in (("misaligned", 1), ("misaligned_3", 3), ("batch_misaligned", 2))
              for name, size in (("TILE", TILE), ("SHORT", SHORT_TILE)) for k in (1, 2) for d in (-1, 0, 1)]


@pytest.mark.parametrize("mode,length", HEAD_EDGES)
def test_heads_at_tile_edges(rng, mode, length):
    run_mode(rng, mode, length, what=f"{mode} L={length}")


@pytest.mark.parametrize("offset", [1, 2, 3, 29])
@pytest.mark.parametrize("shape,placed", [((4099,), True), ((2, TILE + 8), True), ((256 * SHORT_TILE,), True),
                                          ((3, SHORT_TILE), True), ((SHORT_TILE,), False)], ids=str)
def test_a_new_result_sits_where_the_inputs_do(rng, shape, placed, offset):
    """Without out, a C-contiguous result starts as far past a 128-byte line as a and b where the
    16-byte path's heads then apply to all three (P67, P196), also where it adds a tile to a row of
    256, and where rows of exactly one short tile take rows_6144's tile with their heads (P236); a sequence
    of exactly one short tile, which a head would make two, keeps the scalar path and gets a result on the
    line. Each result is C-contiguous and checked against the reference."""
    a_np, b_np = regime(rng, "mixed", shape)
    a = shifted(a_np.ravel(), offset).view(shape)
    b = shifted(b_np.ravel(), offset).view(shape)
    out = rtscan.scan(a, b)
    torch.cuda.synchronize()
    assert out.is_contiguous() and out.shape == a.shape
    assert a.data_ptr() % 128 == 4 * offset
    assert out.data_ptr() % 128 == (4 * offset if placed else 0)
    _checks.assert_close(host(out), _checks.expected(a_np, b_np, None, -1, False),
                         _checks.running_scale(a_np, b_np, None, -1, False), f"new result {shape} +{offset}")


def test_a_new_result_of_a_strided_input_is_contiguous(rng):
    """Rows of x[:, 1:] are not C-contiguous: the result is a plain contiguous tensor (scalar path)."""
    a_np, b_np = regime(rng, "mixed", (3, 1000))
    a = cuda(np.pad(a_np, ((0, 0), (1, 0)), constant_values=np.nan))[:, 1:]
    b = cuda(np.pad(b_np, ((0, 0), (1, 0)), constant_values=np.nan))[:, 1:]
    out = rtscan.scan(a, b)
    torch.cuda.synchronize()
    assert out.is_contiguous()
    _checks.assert_close(host(out), _checks.expected(a_np, b_np, None, -1, False),
                         _checks.running_scale(a_np, b_np, None, -1, False), "new result of x[:, 1:]")


@pytest.mark.parametrize("mode", ["contiguous", "misaligned", "reverse"])
def test_length_2_24(rng, mode):
    run_mode(rng, mode, 2**24, what=f"{mode} L=2^24")


@pytest.mark.parametrize("mode,length", [("h0", 2**24), ("batch", 2**22 + 4)], ids=["h0-2^24", "batch-3x2^22"])
def test_launches_of_several_waves(rng, mode, length):
    """On the 16-byte path, hundreds of large tiles in one launch: over two waves on an H200, so the
    second block of each SM starts late (claim_tile's stagger) and later tiles find older ones
    finished; one sequence with h0, and three rows."""
    run_mode(rng, mode, length, what=f"{mode} L={length}")


# Rows a pitch apart, the pitch odd: their starts fall at every distance past a 128-byte line, and
# each row is scanned from its own line (P196). The steps between, the previous row's tail and
# the gap (NaN in a and b, a guard value in out), are read but must neither reach a state nor be
# written.
# 2 * SHORT_TILE - 1: the row on its line has an empty last tile (tiles are counted from the
# longest head); SHORT_TILE - 1 and TILE - 1: rows whose one tile a head would make two (the
# scalar path); 2 * TILE - 3 on the long tile from a line would take a third tile, so it runs from
# 16 bytes (P197).
ROW_HEAD_LENGTHS = [1, 5, 31, 33, CHUNK + 3, WARP_SPAN + 1, SHORT_TILE - 1, SHORT_TILE + 1, 2 * SHORT_TILE - 1,
                    TILE - 1, TILE + 5, 2 * TILE - 3]


@pytest.mark.parametrize("out_place", ["line", "16 bytes on"])
@pytest.mark.parametrize("length", ROW_HEAD_LENGTHS, ids=length_id)
def test_rows_at_every_distance_past_a_line(rng, length, out_place):
    """out on a and b's lines (heads from 128-byte lines) or 16 bytes further on (from 16-byte
    boundaries); checked against the reference, out's gaps untouched, and a second run equal bit
    for bit."""
    rows, pitch = 33, length + (8 if length % 2 else 7)
    a_np, b_np = regime(rng, "mixed", (rows, length))

    def placed(values, fill, shift):
        buffer = torch.full((rows * pitch + 64,), fill, device="cuda")
        view = buffer[shift:shift + rows * pitch].view(rows, pitch)[:, :length]
        view.copy_(torch.from_numpy(values))
        return buffer, view

    (_, a), (_, b) = placed(a_np, float("nan"), 0), placed(b_np, float("nan"), 0)
    out_buffer, out = placed(np.full((rows, length), np.nan, np.float32), 777.0, 0 if out_place == "line" else 4)
    h0 = cuda(rng.uniform(-2, 2, rows).astype(np.float32))
    # The launch these take: 16-byte steps from each row's boundary, but for rows of one tile that a
    # head would make two.
    views = [_arrays.view(name, x) for name, x in (("a", a), ("b", b), ("out", out))]
    launch = _scan.prepare(None, views[0], views[2], 1, False,
                           _scan.pointer_placement(*(view.pointer for view in views)), _kernels.device_arch(0))
    if launch.shape.vec == 4:  # an odd pitch: some row is a boundary less one step past its boundary
        head = launch.plan.layout.head
        assert head in ((4, 32) if out_place == "line" else (4,))
        assert launch.tiles_per_seq == -(-(length + head - 1) // launch.shape.steps_per_sequence)
    else:
        assert length <= launch.shape.tile, "rows of several tiles on the scalar path"
    scan_and_check(a, b, h0=h0, out=out, what=f"{rows} rows of {length}, pitch {pitch}, out {out_place}")
    first = host(out).copy()
    out.fill_(float("nan"))
    rtscan.scan(a, b, h0=h0, out=out)
    assert np.array_equal(host(out), first), "a second run differs"
    inside = torch.zeros_like(out_buffer, dtype=torch.bool)
    inside[(0 if out_place == "line" else 4):][:rows * pitch].view(rows, pitch)[:, :length] = True
    assert bool((out_buffer[~inside] == 777.0).all()), "rtscan wrote outside out's rows"


@pytest.mark.tuned_shapes
@pytest.mark.parametrize("shape", [(2**20 + 3,), (4, 2**19 + 5), (2**21 + 7,), (3, TILE + 1), (1000, 18432),
                                   (64, 65537), (1000, 5001), (2048, 10001), (96, 65536), (400, 16900),
                                   (250, 17000), (4096, 1024), (1024, 2048), (8192, 512), (3000, 1000),
                                   (1024, 1024), (1000, 1500), (4096, 700), (2048, 250), (2, 500), (40, 2000),
                                   (100, 3000), (4501, 100), (2301, 250), (3001, 2500), (70001, 20), (100001, 60), (90001, 12)], ids=str)
def test_shapes_as_tuned(rng, shape):
    """With the tuning's own size rule (conftest.py lifts it for the other GPU tests): launches
    below and above sm_90's from_total_steps, whichever shape each gets; 1000 rows of 18432 steps
    reach short_fill through batch's fill_edge (P183); rows of odd lengths take their row heads on
    the long, short and short_fill kinds (P196); 96 rows of 65536, 400 of 16900 and 250 of 17000 (off
    their lines) on over_wave's route, the last under one wave of long tiles in steps but not in tiles
    (P208, P211; test_registry.py checks the routes); rows of 250-2048 steps on the rows_ tiles, one a
    row (P213, P215: 128 x 8, 128 x 16, 64 x 16, 64 x 24, 32 x 12, 32 x 16, 32 x 24), rows of 1000 off their
    lines; small launches on 4 steps a lane (P217: 2 x 500, 40 x 2000, 100 x 3000); odd counts of rows on
    rows_128 and rows_256, blocks of four rows a warp each, whose last block has one (P222: 4501 x 100, 2301 x
    250; packed rows, P227: 70001 x 20, 100001 x 60 and 90001 x 12, rows of 5, 15 and 3 lanes), and on rows_3072
    (3001 x 2500)."""
    a_np, b_np = regime(rng, "mixed", shape)
    scan_and_check(cuda(a_np), cuda(b_np), what=f"shape {shape} as tuned")


@pytest.mark.parametrize("rows", [3, 67])
@pytest.mark.parametrize("length", [8, 12, 20, 32, 33, 50, 64, 100, 128, 250, 256])
def test_row_warps_with_h0_and_an_odd_count_of_rows(rng, length, rows, monkeypatch):
    """The tiles of rows_128 and rows_256 (P222, P223, P227): blocks of several rows, packed to the lanes
    they take or a warp each. Odd counts of rows with h0 (without the small_ kinds, which few rows would
    take), so the last block's last lanes, and lanes past a warp's packed rows, have no row: they must
    write nothing, and every row start from its own h0."""
    variant = rtscan.registry.resolve("auto")
    arch = _kernels.device_arch(0)
    without_kinds(monkeypatch, variant, arch, tuple(k for k in rtscan.registry.ROWS_KINDS if k.startswith("small_")))
    a_np, b_np = regime(rng, "mixed", (rows, length))
    a, b = cuda(a_np), cuda(b_np)
    launch = _scan.prepare(None, _arrays.view("a", a), _arrays.view("a", a), 1, False,
                           _scan.pointer_placement(a.data_ptr(), b.data_ptr(), a.data_ptr()), arch)
    if not launch.variant.row_warps(launch.shape):
        assert arch != "sm_90", f"sm_90's rows of {length} should take row warps, not {launch.kind}"
        pytest.skip(f"{arch}'s tuning runs rows of {length} without row warps ({launch.kind})")
    h0 = cuda(rng.uniform(-2, 2, rows).astype(np.float32))
    out, outside_untouched = guarded_out(rows * length, 64)
    scan_and_check(a, b, h0=h0, out=out.view(rows, length), what=f"{rows} rows of {length} on {launch.kind}")
    outside_untouched()


@pytest.mark.parametrize("stride_past", [0, 1, 3, "overlap 3", "overlap 2"])
@pytest.mark.parametrize("length", [10, 33, 50, 66, 99])
def test_packed_rows_with_short_last_vectors(rng, length, stride_past, monkeypatch):
    """Packed rows whose last 16-byte vector is short (and, off their 16 bytes, whose first is: a head),
    followed by the next row's first steps (stride_past 0), by a gap of NaN (1 or 3 steps between
    rows), or overlapping the next row (strides of 3 and 2 steps): no step outside a row may reach a
    state, and nothing outside out is written. (P234 copied such a vector whole where a later row
    follows at a stride of at least 3; not kept, profiling/attempts/whole-tail-vectors.patch.)"""
    variant = rtscan.registry.resolve("auto")
    arch = _kernels.device_arch(0)
    without_kinds(monkeypatch, variant, arch, tuple(k for k in rtscan.registry.ROWS_KINDS if k.startswith("small_")))
    rows = 67
    if isinstance(stride_past, str):
        stride = int(stride_past.split()[1])
        a_np, b_np = regime(rng, "mixed", (rows * stride + length,))
        a, b = (torch.as_strided(cuda(x), (rows, length), (stride, 1)) for x in (a_np, b_np))
    else:
        pitch = length + stride_past
        a_np, b_np = regime(rng, "mixed", (rows, length))

        def placed(values):
            buffer = torch.full((rows * pitch,), float("nan"), device="cuda")
            view = buffer.view(rows, pitch)[:, :length]
            view.copy_(torch.from_numpy(values))
            return view

        a, b = placed(a_np), placed(b_np)
    launch = _scan.prepare(None, _arrays.view("a", a), _arrays.view("a", a), 1, False,
                           _scan.pointer_placement(a.data_ptr(), b.data_ptr(), a.data_ptr()), arch)
    if not launch.variant.packs_rows(launch.shape) or launch.shape.vec != 4:
        assert arch != "sm_90", f"sm_90's {rows} rows of {length} ({stride_past}) should take packed rows"
        pytest.skip(f"{arch}'s tuning runs these rows without packed rows ({launch.kind})")
    out, outside_untouched = guarded_out(rows * length, 64)
    scan_and_check(a, b, out=out.view(rows, length), what=f"{rows} rows of {length}, {stride_past} past")
    outside_untouched()


REGIME_LENGTHS = [1, 2, 3, 5, 31, 33, 100, CHUNK + 1, WARP_SPAN + 1, TILE - 1, TILE + 1, 2 * TILE, 3 * TILE + 5,
                  65537]


REGIME_CASES = [pytest.param(name, length, id=f"{name}-{length_id(length)}") for name in REGIMES
                for length in REGIME_LENGTHS
                if name != "growth" or length <= GROWTH_MAX_LENGTH]  # |a| > 1 overflows long sequences


@pytest.mark.parametrize("mode", ["contiguous", "misaligned", "reverse", "batch"])
@pytest.mark.parametrize("regime_name,length", REGIME_CASES)
def test_regimes(rng, regime_name, length, mode):
    run_mode(rng, mode, length, regime_name, what=f"{regime_name} {mode} L={length}")


# ---- a = 0 at one step resets the state: h[q] = b[q] exactly ------------------------------------

@pytest.mark.parametrize("mode", ["contiguous", "reverse", "batch"])
@pytest.mark.parametrize("position", [0, 1, CHUNK, WARP_SPAN - 1, TILE - 1, TILE, TILE + 3, 2 * TILE + 1])
def test_reset_at_one_step(rng, position, mode):
    length = 3 * TILE + 7
    shape = (4, length) if mode == "batch" else (length,)
    a_np, b_np = regime(rng, "decay", shape)
    a_np[..., position] = 0.0
    a, b = cuda(a_np), cuda(b_np)
    h0 = cuda(rng.uniform(-5, 5, shape[:-1]).astype(np.float32)) if shape[:-1] else None
    out = scan_and_check(a, b, h0=h0, reverse=mode == "reverse", what=f"reset at {position}")
    assert np.array_equal(host(out)[..., position], b_np[..., position])  # fma(0, h, b) == b


# ---- NaN and Inf in one element --------------------------------------------------------------

NAN_LENGTH = 3 * TILE + 17
POSITIONS = [0, 1, CHUNK - 1, WARP_SPAN, TILE - 1, TILE, TILE + 1, 2 * TILE + WARP_SPAN - 1, NAN_LENGTH - 2,
             NAN_LENGTH - 1]


@pytest.mark.parametrize("layout", ["contiguous", "misaligned", "reverse", "batch"])
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("kind", ["nan_in_a", "nan_in_b", "inf_in_b"])
def test_nan_and_inf_in_one_element(rng, kind, position, layout):
    # NaN spreads to every later step in the reference (NaN * h and a * NaN are NaN, even for a = 0);
    # the positions of NaN in out must equal the reference's exactly.
    #
    # +Inf in b with a > 0 and b > 0 stays +Inf forever in the reference. The scan multiplies
    # together the a's of whole warps, tiles and segments of 32 tiles; where such a product meets
    # the Inf and has underflowed to 0 (thousands of a's from (0.99, 1) suffice), 0 * Inf = NaN
    # where the sequential order keeps Inf. So the steps the Inf reaches (from it on, in scan
    # order) draw a from (0.9999, 1), whose products over this length stay normal; the steps
    # before it draw a from (0.99, 1), so their finite states stay well conditioned.
    # For the same reason an Inf in `a` is not tested for equality at all: the parallel order
    # multiplies the a's together (Inf * 0 = NaN) where the sequential order may give Inf.
    batch = (4,) if layout == "batch" else ()
    shape = batch + (NAN_LENGTH,)
    sequence = (2,) if batch else ()  # one sequence of the batch only
    where = sequence + (position,)
    if kind == "inf_in_b":
        a_np = rng.uniform(0.99, 1.0, shape).astype(np.float32)
        b_np = rng.uniform(0.0, 1.0, shape).astype(np.float32)
        reached = sequence + ((slice(0, position + 1),) if layout == "reverse" else (slice(position, None),))
        a_np[reached] = rng.uniform(0.9999, 1.0, a_np[reached].shape).astype(np.float32)
    else:
        a_np, b_np = regime(rng, "mixed", shape)
    target = a_np if kind == "nan_in_a" else b_np
    target[where] = np.inf if kind == "inf_in_b" else np.nan
    if layout == "misaligned":
        a = cuda(np.concatenate([[1.0], a_np]).astype(np.float32))[1:]
        b = cuda(np.concatenate([[1.0], b_np]).astype(np.float32))[1:]
    else:
        a, b = cuda(a_np), cuda(b_np)
    poison = FINITE_POISON if kind.startswith("nan") else float("nan")
    out = scan_and_check(a, b, reverse=layout == "reverse", poison=poison, what=f"{kind} at {position} {layout}")
    # independently of the reference: exactly the steps from the bad one on (in scan order) are hit
    hit = host(out)[2] if batch else host(out)
    count = position + 1 if layout == "reverse" else NAN_LENGTH - position
    assert (np.isnan(hit) if kind.startswith("nan") else np.isposinf(hit)).sum() == count
    if batch:
        assert np.isfinite(np.delete(host(out), 2, axis=0)).all()  # the other sequences stay finite


# ---- batches: many sequences, every axis as the time axis ----------------------------------------

BATCH_CASES = [
    ((3, 5, 1000), -1), ((3, 5, 1000), 1), ((3, 5, 1000), 0), ((3, 5, 1000), 2),
    ((2, 64, TILE), -1), ((2, 64, TILE), 1), ((2, 64, TILE + 5), -1), ((2, 3 * TILE + 1, 4), 1),
    ((10000, 7), -1), ((10000, 7), 0), ((7, 10000), 0), ((7, 10000), 1),
    ((4, 3, 2, 5, 100), -1), ((4, 3, 2, 5, 100), 2), ((4, 3, 2, 5, 100), 0),
    ((1, 1, 5000), -1), ((5000, 1, 1), 0), ((1, 257, 1), 1), ((3, 1, 9), -1),
    ((600, 4096), -1),  # rows of one 16-byte tile in two waves or more: tiles by block index (claim_tile)
    ((64, 4096), -1), ((5, 3000), -1),  # rows of one tile, at most one an SM: tiles by block index too
]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_h0", [False, True])
@pytest.mark.parametrize("shape,dim", BATCH_CASES, ids=[f"{'x'.join(map(str, s))}-dim{d}" for s, d in BATCH_CASES])
def test_batches(rng, shape, dim, with_h0, reverse):
    a_np, b_np = regime(rng, "mixed", shape)
    axis = dim % len(shape)
    h0 = cuda(rng.uniform(-2, 2, shape[:axis] + shape[axis + 1:]).astype(np.float32)) if with_h0 else None
    scan_and_check(cuda(a_np), cuda(b_np), h0=h0, dim=dim, reverse=reverse, what=f"{shape} dim={dim}")


def test_many_short_sequences_reset_per_sequence(rng):
    # no state may leak from one sequence into the next: a = 1 everywhere, h0 distinct per sequence
    a = torch.ones(10000, 7, device="cuda")
    b = cuda(rng.uniform(0, 1, (10000, 7)).astype(np.float32))
    h0 = cuda(rng.uniform(100, 200, 10000).astype(np.float32))
    scan_and_check(a, b, h0=h0)


# ---- non-contiguous inputs and outputs ---------------------------------------------------------

@pytest.mark.parametrize("length", [33, TILE + 1, 5 * TILE + 3], ids=length_id)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("layout", ["transposed", "step2_time", "step2_batch", "out_transposed", "both_transposed",
                                    "expanded_h0"])
def test_noncontiguous(rng, layout, reverse, length):
    if layout == "transposed":  # (6, L) view of an (L, 6) tensor: time stride 6, batch stride 1
        a_np, b_np = regime(rng, "mixed", (length, 6))
        a, b, out = cuda(a_np).T, cuda(b_np).T, None
    elif layout == "step2_time":  # every other step of a (6, 2L) tensor
        a_np, b_np = regime(rng, "mixed", (6, 2 * length))
        a, b, out = cuda(a_np)[:, ::2], cuda(b_np)[:, ::2], None
    elif layout == "step2_batch":  # every other sequence
        a_np, b_np = regime(rng, "mixed", (12, length))
        a, b, out = cuda(a_np)[::2], cuda(b_np)[::2], None
    elif layout == "out_transposed":  # contiguous in, transposed out
        a_np, b_np = regime(rng, "mixed", (6, length))
        a, b = cuda(a_np), cuda(b_np)
        out = torch.full((length, 6), float("nan"), device="cuda").T
    elif layout == "both_transposed":
        a_np, b_np = regime(rng, "mixed", (length, 6))
        a, b = cuda(a_np).T, cuda(b_np).T
        out = torch.full((6, length), float("nan"), device="cuda")
    else:  # h0 from a broadcast would not be contiguous; a contiguous copy of one is fine
        a_np, b_np = regime(rng, "mixed", (6, length))
        a, b = cuda(a_np), cuda(b_np)
        h0 = torch.full((1,), 1.5, device="cuda").expand(6).contiguous()
        scan_and_check(a, b, h0=h0, reverse=reverse)
        return
    assert not a.is_contiguous() or layout == "out_transposed"
    scan_and_check(a, b, out=out, reverse=reverse, what=layout)


@pytest.mark.parametrize("length", [33, TILE + 1, 3 * TILE + 2], ids=length_id)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("permuted", ["out", "in", "both"])
def test_batch_axes_permuted(rng, permuted, reverse, length):
    """Batch axes that merge for one of in/out but not the other: (2, 3, L) with the two batch
    axes stored in swapped order."""
    a_np, b_np = regime(rng, "mixed", (2, 3, length))

    def swapped(x):
        return cuda(x.transpose(1, 0, 2)).permute(1, 0, 2)

    a, b = (swapped(a_np), swapped(b_np)) if permuted in ("in", "both") else (cuda(a_np), cuda(b_np))
    out = None
    if permuted in ("out", "both"):
        out = torch.full((3, 2, length), float("nan"), device="cuda").permute(1, 0, 2)
    h0 = cuda(rng.uniform(-2, 2, (2, 3)).astype(np.float32))
    scan_and_check(a, b, h0=h0, out=out, reverse=reverse, what=f"{permuted} permuted")


def test_strided_out_leaves_the_gaps_alone(rng):
    a_np, b_np = regime(rng, "mixed", (5, 3 * TILE + 2))
    buffer = torch.full((5, 2 * (3 * TILE + 2)), 777.0, device="cuda")
    out = buffer[:, ::2]
    out.fill_(float("nan"))
    scan_and_check(cuda(a_np), cuda(b_np), out=out)
    assert bool((buffer[:, 1::2] == 777.0).all())
