"""The registry of scan algorithms: each variant is a kernel template, its launch shape and its
memory-traffic model (bytes moved per element, the number the bandwidth figures are counted at)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from . import tuning

WARP_SIZE = 32  # kernels_cu/indexing.cuh


@dataclass(frozen=True)
class LaunchShape:
    block_threads: int
    items: int
    vec: int  # 4: float4 loads and stores; 1: scalar, any stride
    min_blocks: int  # blocks per SM the register allocation must allow (__launch_bounds__)
    lookback_depth: int  # predecessors per lane per look-back round (window = 32 * depth)
    register_items: int  # of a thread's `items`, how many are held in registers instead of staged
    walk_lanes: int  # lanes reading predecessors in the look-back: 32 (warp walk) or 1 (serial walk)
    segment_tiles: int  # tiles per segment of the look-back: 32 (two-level) or 1 (one-level, as the seed)
    protocol_warp: int = 0  # 1: one more warp, holding no steps, runs the look-back (lookback.cu)
    atomic_polls: int = 0  # 1: the look-back polls by atomics, 0: by strong loads (tile_state.cuh)
    chunks_first: int = 0  # 1: tickets take chunk c of every sequence first, contiguous rows too (lookback.cu)
    run_chunks: int = 1  # more: staged chunks read back in runs of this many, prefixes kept (lookback.cu)
    carry_threads: int = 0  # three-pass pass 2 (three_pass_carries) in a block of its own size; 0: block_threads
    carry_items: int = 0  # ... and aggregates a thread per round; 0: items (see `carries`)
    sequences_per_tile: int = 1  # a tile's sequences: lanes across them (columns_lookback), a row a warp
    # (lookback.cu's row warps); 0: packed rows, as many a warp as fit (lookback.cu, rows_a_block)

    @property
    def tile(self) -> int:
        return self.block_threads * self.items

    @property
    def steps_per_sequence(self) -> int:
        """A tile's steps of each of its sequences (packed rows: at most a warp's)."""
        return self.tile // self.sequences_per_tile if self.sequences_per_tile else WARP_SIZE * self.items

    @property
    def threads(self) -> int:
        """Threads a block launches: those holding steps, and the protocol warp if any."""
        return self.block_threads + 32 * self.protocol_warp

    @property
    def carries(self) -> LaunchShape:
        """The shape a three-pass variant's pass 2 runs: this one, or the wider block carry_threads and
        carry_items name (columns' long kind: sequences of many short chunks), at one block an SM."""
        if not self.carry_threads:
            return self
        return dataclasses.replace(self, block_threads=self.carry_threads, items=self.carry_items, vec=1,
                                   min_blocks=1, carry_threads=0, carry_items=0)


# The template arguments of lookback_scan, as LaunchShape fields in order.
LOOKBACK_ARGUMENTS = ("block_threads", "items", "vec", "min_blocks", "lookback_depth", "register_items", "walk_lanes",
                      "segment_tiles", "protocol_warp", "atomic_polls", "chunks_first", "run_chunks",
                      "sequences_per_tile")


def no_dynamic_shared(shape: LaunchShape) -> int:
    return 0


def blelloch_tree_bytes(shape: LaunchShape) -> int:
    """blelloch_scan's dynamic shared memory: a padded tree of maps over the tile rounded up to a
    power of two, one pad slot per 32 and per 1024 slots (kernels_cu/blelloch_tree.cuh)."""
    leaves = 1 << (shape.tile - 1).bit_length()
    return 8 * (leaves + (leaves - 1) // 32 + (leaves - 1) // 1024)


def staged_tile_bytes(shape: LaunchShape) -> int:
    """lookback_scan's dynamic shared memory: a and b of the staged part of one float32 tile and,
    with runs, each thread's prefixes of its register chunks and runs (8 bytes each)."""
    staged = shape.items - shape.register_items
    kept = shape.register_items // shape.vec + staged // (shape.vec * shape.run_chunks) if shape.run_chunks > 1 else 0
    return 2 * 4 * shape.block_threads * staged + 8 * shape.block_threads * kept


# The shapes of a tuning entry tried before its "short" one, in this order (tuning.py): on the 16-byte path,
# for sequences that fill one of their tiles, "one_tile", "mid_batch", "long_batch", "many", then the rows_
# kinds of 4097-12288 steps (LONG_ROWS_KINDS: one tile a row, below), then "short_batch", "over_wave", "batch"
# and "short_fill" (optional) for batches of rows within their `from_length` and `to_length`, "large"
# (optional) for the largest launches, then "long"; for lanes across sequences (columns_lookback), "many" for
# the most sequences, "large" for launches of many steps and fewer sequences, "long" for many sequences and
# "fewest" and "few" for launches of at most their `to_sequences`; last, the "small_" and "rows_" kinds
# (optional) for batches of rows shorter than any other kind's tile, one tile a row: packed rows for rows of
# at most 128 steps, then the small_ tiles, then the other rows_ tiles, each family's shortest tile first, so
# a row takes the shortest of a family that holds it (tuning.py says which launches each family takes).
_LAST_ROWS_KINDS = ("rows_128", "small_256", "small_512", "small_1024", "small_2048", "small_4096",
                    "rows_256", "rows_384", "rows_512", "rows_768", "rows_1024_few", "rows_1024", "rows_1536",
                    "rows_2048", "rows_3072")
# Rows of 4097-12288 steps: one tile a row beat two or three short tiles a row, at the same fill or less,
# in short_batch's and short_fill's bands too (P237-P242; many keeps its rows by its fill_edge).
LONG_ROWS_KINDS = ("rows_6144", "rows_8192", "rows_12288")
ROWS_KINDS = _LAST_ROWS_KINDS + LONG_ROWS_KINDS
SHAPE_KINDS = (("one_tile", "mid_batch", "long_batch", "many") + LONG_ROWS_KINDS
               + ("short_batch", "over_wave", "batch", "short_fill", "large", "long", "fewest", "few")
               + _LAST_ROWS_KINDS)


def fills_a_tile(length: int, tile: int) -> bool:
    """Whether a sequence of `length` steps fills enough of a `tile`-step tile to take that shape:
    at least 15/16 of it. On an H200, sequences of 16384 steps (97 % of the long tile) ran one long
    tile each at 0.75 of copy (256 x 16384) and 0.88 (4096 x 16384) against 0.54 and 0.64 on four
    short tiles; sequences of 12288 (73 %) lost 5-18 % on one long tile each, and a large tile 83 %
    full ran a quarter slower than a long one 97 % full (P57, profiling/results/h200/p57-ab-2026-11-30.txt
    and p57-shapes-2026-11-30.txt)."""
    return 16 * length >= 15 * tile


def tile_fill(length: int, tile: int) -> float:
    """The part of all the `tile`-step tiles a sequence of `length` steps takes that its steps fill,
    its last tile's empty part counted: in a batch every row's last tile is as empty, so that part
    is the launch's, not one tile in hundreds as for one sequence (tuning.py's fill_edge)."""
    return length / (-(-length // tile) * tile)


def any_total(entry: dict, any_sequences: tuple[str, ...] = ()) -> dict:
    """A tuning entry whose one_tile, mid_batch, long_batch, many, short_batch, over_wave, batch, short_fill,
    large and long shapes take any launch whose sequences fill their tiles, within their other bounds (no
    `from_total_steps`, no `from_rival_tiles`): how the GPU tests and the sanitizer cases reach them at small
    sizes. The kinds named in `any_sequences` also lose their `from_sequences` bound."""
    def lifted(kind: str, field: str) -> bool:
        return (field in ("from_total_steps", "from_rival_tiles")
                or (field == "from_sequences" and kind in any_sequences))
    return {kind: {field: value for field, value in shape.items() if not lifted(kind, field)}
            if kind in SHAPE_KINDS else shape for kind, shape in entry.items()}


def as_a_batch(entry: dict, few_rows: bool = False) -> dict:
    """A tuning entry without its kinds for small launches (small_*) and, unless `few_rows`, for few
    rows (*_few), and with no rows_ kind bounded below in rows: how the sanitizer cases
    (profiling/sanitize_case.py) put two short rows on the tiles a large batch, or with `few_rows` one
    of a few hundred rows, takes."""
    kept = (kind for kind in entry if not kind.startswith("small_") and (few_rows or not kind.endswith("_few")))
    return {kind: {field: value for field, value in entry[kind].items()
                   if not (kind.startswith("rows_") and field == "from_sequences")} for kind in kept}


def entry_shape(entry: dict, vec: int) -> LaunchShape:
    """The entry's shape for 16-byte (vec 4) or scalar (vec 1) steps; an entry whose threads hold
    a number of steps not divisible by 4 has only the scalar form, and runs are for the 16-byte
    form only (lookback.cu)."""
    if entry["items"] % 4 or entry["register_items"] % 4:
        vec = 1
    return LaunchShape(entry["block_threads"], entry["items"], vec, entry["min_blocks"], entry["lookback_depth"],
                       entry["register_items"], entry["walk_lanes"], entry["segment_tiles"],
                       entry.get("protocol_warp", 0), entry.get("atomic_polls", 0), entry.get("chunks_first", 0),
                       entry.get("run_chunks", 1) if vec == 4 else 1,
                       entry.get("carry_threads", 0), entry.get("carry_items", 0), entry.get("sequences_per_tile", 1))


@dataclass(frozen=True)
class PassKernel:
    """One launch of a multi-pass variant, in launch order."""
    range_name: str              # its NVTX range in domain "rtscan", e.g. "three_pass pass 1 (tiles)"
                                 # (no "/", "@" or "]": ncu --nvtx-include reads them as syntax)
    template: str                # C++ template, instantiated with the LaunchShape fields in `arguments`
    arguments: tuple[str, ...]
    grid: str                    # "tiles": one block per tile; "sequences": one block per sequence;
                                 # "columns": block_threads sequences a block, times tiles_per_seq
    on_carries: bool = False     # pass 2: instantiated and launched with shape.carries

    def shape_for(self, shape: LaunchShape) -> LaunchShape:
        """The shape this pass is instantiated and launched with when the variant runs `shape`."""
        return shape.carries if self.on_carries else shape


@dataclass(frozen=True)
class Variant:
    name: str
    source: str          # file under kernels_cu/
    template: str        # C++ template, instantiated with the LaunchShape fields named in `arguments`
    description: str
    passes: int          # kernel launches per call
    table: dict          # tuning table in rtscan/tuning.py
    arguments: tuple[str, ...] = LOOKBACK_ARGUMENTS  # LaunchShape fields, in template order
    dynamic_shared: Callable[[LaunchShape], int] = staged_tile_bytes  # bytes one block's launch passes
    pass_kernels: tuple[PassKernel, ...] = ()  # multi-pass variants: every launch (the first is `template`)
    keeps_pairs: bool = False  # three_pass: every step's map waits in scratch between passes
    takes_head: bool = False   # its kernels honour SeqLayout.head (lookback.cu): misaligned rows go 16 bytes at a time
    vector_steps: bool = True  # False: its kernels read one step at a time whatever the layout (vec always 1)
    device_traffic: str = "3 * itemsize (read a, read b, write h)"  # per element, all passes (model.py)

    def shared_bytes(self, shape: LaunchShape) -> int:
        return self.dynamic_shared(shape)

    def row_warps(self, shape: LaunchShape) -> bool:
        """Whether `shape` is lookback.cu's row warps or packed rows: a block of several whole rows, a
        warp or some of its lanes each, one tile a row and no look-back (columns_lookback's tiles of
        several sequences are lanes across them instead)."""
        return self.source == "lookback.cu" and shape.sequences_per_tile != 1

    def packs_rows(self, shape: LaunchShape) -> bool:
        """Whether `shape` is lookback.cu's packed rows: as many whole rows a warp as fit, a lane's
        vector of each at a time."""
        return self.source == "lookback.cu" and not shape.sequences_per_tile

    def lanes_a_row(self, shape: LaunchShape, length: int) -> int:
        """The lanes one row of `length` steps (its longest row head counted) takes in a block of
        `shape`: a lane's vector at a time for packed rows (lookback.cu, which finds the same from its
        layout), a warp for row warps."""
        return -(-length // shape.vec) if self.packs_rows(shape) else WARP_SIZE

    def rows_a_block(self, shape: LaunchShape, length: int) -> int:
        """The sequences one block of `shape` takes, each of `length` steps (its longest row head
        counted): packed rows, as many a warp as fit; otherwise the shape's own count."""
        if not self.packs_rows(shape):
            return shape.sequences_per_tile
        # Past a warp's span the row takes two tiles, which prepare refuses by name; counted as one a warp.
        return shape.block_threads // WARP_SIZE * max(1, WARP_SIZE // self.lanes_a_row(shape, length))

    def tile_counts(self, shape: LaunchShape, num_seqs: int, length: int) -> tuple[int, int]:
        """(tiles a sequence, tiles in all) of a launch over `num_seqs` sequences of `length` steps."""
        tiles_per_seq = -(-length // shape.steps_per_sequence)
        return tiles_per_seq, tiles_per_seq * -(-num_seqs // self.rows_a_block(shape, length))

    def launch_shape(self, arch: str, dtype: str, vec: int, length: int, num_seqs: int = 1) -> LaunchShape:
        """The shape for `num_seqs` sequences of `length` steps: the first of SHAPE_KINDS in the entry
        whose bounds the launch is within (at least `from_total_steps` and at most `to_total_steps`
        steps in all, unless it has at most `any_total_to_sequences` sequences; at least
        `from_sequences` and at most `to_sequences` sequences; at least `from_length` and at most
        `to_length` steps a sequence; at least `from_rival_tiles` tiles of its rival, below) and, on
        the 16-byte path, whose tile a sequence fills (fills_a_tile; any part of it for a kind marked
        `any_fill`) and, for a kind with a `fill_edge`, whose tile_fill times that edge is at least
        the tile_fill of its rival, the next kind within its bounds whose tile a sequence fills,
        before that kind's own edge (P183); a launch a kind refuses goes where the kinds after it send
        it; else the short shape (tuning.py says why)."""
        return self.launch_kind(arch, dtype, vec, length, num_seqs)[1]

    def launch_kind(self, arch: str, dtype: str, vec: int, length: int, num_seqs: int = 1) -> tuple[str, LaunchShape]:
        """(kind, shape) of launch_shape: which of SHAPE_KINDS, or "short", gave the shape (kinds may
        share a shape: short_batch, over_wave and short_fill)."""
        entry = tuning.lookup(self.table, arch, dtype)
        return self._first_kind(entry, SHAPE_KINDS, vec if self.vector_steps else 1, length, num_seqs)

    def _first_kind(self, entry: dict, kinds: tuple[str, ...], vec: int, length: int, num_seqs: int,
                    edges: bool = True) -> tuple[str, LaunchShape]:
        """(kind, shape) for launch_shape, from `kinds` only; with `edges` False, the first kind within
        its bounds whose tile a sequence fills, whatever its fill_edge (a rival)."""
        total = num_seqs * length
        for place, kind in enumerate(kinds):
            fields = entry.get(kind)
            if (fields is None or not (fields.get("from_total_steps", 0) <= total <= fields.get("to_total_steps", total)
                                       or num_seqs <= fields.get("any_total_to_sequences", 0))
                    or not fields.get("from_sequences", 0) <= num_seqs <= fields.get("to_sequences", num_seqs)
                    or not fields.get("from_length", 0) <= length <= fields.get("to_length", length)):
                continue
            if not self.vector_steps:
                return kind, entry_shape(fields, 1)
            own = entry_shape(fields, 4)
            fills = fields.get("any_fill") or fills_a_tile(length, own.steps_per_sequence)
            if vec != 4 or own.vec != 4 or not fills:
                continue
            edge, rival_tiles = fields.get("fill_edge"), fields.get("from_rival_tiles")
            if (edge is None or not edges) and rival_tiles is None:
                return kind, own
            rival = self._first_kind(entry, kinds[place + 1:], vec, length, num_seqs, edges=False)[1]
            if rival_tiles is not None and self.tile_counts(rival, num_seqs, length)[1] < rival_tiles:
                continue  # a bound: the launch is outside this kind whatever the edges
            if edge is None or not edges or (
                    edge * tile_fill(length, own.steps_per_sequence) >= tile_fill(length, rival.steps_per_sequence)):
                return kind, own
            # refused: on to the kinds after this one, as if it were not in the entry
        return "short", entry_shape(entry["short"], vec)

    def launch_shapes(self, arch: str, dtype: str) -> tuple[LaunchShape, ...]:
        """Every shape launch_shape can return, in a fixed order: what gets compiled."""
        entry = tuning.lookup(self.table, arch, dtype)
        vec = 4 if self.vector_steps else 1
        shapes = tuple(entry_shape(entry[kind], vec) for kind in SHAPE_KINDS if kind in entry)
        return tuple(dict.fromkeys(shapes + (entry_shape(entry["short"], vec), entry_shape(entry["short"], 1))))

    def name_expression(self, shape: LaunchShape) -> str:
        """The (first) kernel's instantiation for `shape`."""
        return f"{self.template}<{', '.join(str(getattr(shape, field)) for field in self.arguments)}>"

    def name_expressions(self, shape: LaunchShape) -> tuple[str, ...]:
        """Every launch's instantiation for `shape`, in launch order."""
        if not self.pass_kernels:
            return (self.name_expression(shape),)
        return tuple(f"{k.template}<{', '.join(str(getattr(k.shape_for(shape), field)) for field in k.arguments)}>"
                     for k in self.pass_kernels)

    def expressions(self, shapes) -> tuple[str, ...]:
        """What one NVRTC program for `shapes` instantiates, each once (shapes may share a pass's kernel)."""
        return tuple(dict.fromkeys(e for shape in shapes for e in self.name_expressions(shape)))

    def traffic_bytes(self, elements: int, itemsize: int) -> int:
        """The least bytes any scan must move (read a and b, write h, once each): what GB/s figures
        count, for every variant alike; what a variant moves is model.py's."""
        return 3 * itemsize * elements


def _lookback(name: str, description: str, table: dict) -> Variant:
    """A specialisation of kernels_cu/lookback.cu's lookback_scan: its table's shapes set it apart."""
    return Variant(name=name, source="lookback.cu", template="rtscan::lookback_scan",
                   description=f"single-pass decoupled look-back{description}", passes=1, table=table,
                   takes_head=True)


# The three-pass forms (kernels_cu/three_pass.cu): one template argument list for passes 1 and 3,
# pass 2 reads its aggregates one per lane (no VEC).
TILE_PASS_ARGUMENTS = ("block_threads", "items", "vec", "min_blocks")
CARRY_PASS_ARGUMENTS = ("block_threads", "items", "min_blocks")


def _three_pass(name: str, description: str, table: dict, first: tuple[str, str], last: tuple[str, str],
                keeps_pairs: bool, device_traffic: str) -> Variant:
    kernels = (PassKernel(f"{name} pass 1 ({first[0]})", f"rtscan::{first[1]}", TILE_PASS_ARGUMENTS, "tiles"),
               PassKernel(f"{name} pass 2 (carries)", "rtscan::three_pass_carries", CARRY_PASS_ARGUMENTS, "sequences",
                          on_carries=True),
               PassKernel(f"{name} pass 3 ({last[0]})", f"rtscan::{last[1]}", TILE_PASS_ARGUMENTS, "tiles"))
    return Variant(name=name, source="three_pass.cu", template=kernels[0].template, description=description,
                   passes=3, table=table, arguments=TILE_PASS_ARGUMENTS, dynamic_shared=no_dynamic_shared,
                   pass_kernels=kernels, keeps_pairs=keeps_pairs, device_traffic=device_traffic)


VARIANTS = {
    "lookback_serial": _lookback("lookback_serial", " as the seed's first version: one step per thread, one-level "
                                 "look-back over tiles in which one thread reads one predecessor per round",
                                 tuning.LOOKBACK_SERIAL),
    "lookback_warp": _lookback("lookback_warp", " as the seed's second version: one step per thread, one-level "
                               "look-back over tiles in which a warp reads 32 predecessors per round",
                               tuning.LOOKBACK_WARP),
    "lookback_regs": _lookback("lookback_regs", ": several steps per thread, staged through shared memory by "
                               "cp.async and registers, scanned in registers; two-level look-back over segments "
                               "of 32 tiles read by a warp (one-level over tiles where the tuning's segment_tiles "
                               "is 1: sm_90's large and mid_batch shapes), in sm_90's long tile a warp of its own "
                               "while the others keep each step's prefix for a one-fma second pass",
                               tuning.LOOKBACK_REGS),
    "hillis_steele": Variant(
        name="hillis_steele",
        source="hillis_steele.cu",
        template="rtscan::hillis_steele_scan",
        description="Hillis-Steele (step-efficient, log-step) scan of each tile, one step per thread in "
                    "registers: warp shuffles, then log-step rounds across the warps; tiles joined by the "
                    "two-level look-back",
        passes=1,
        table=tuning.HILLIS_STEELE,
        arguments=("block_threads", "vec", "min_blocks", "lookback_depth", "atomic_polls"),
        dynamic_shared=no_dynamic_shared,
    ),
    "blelloch": Variant(
        name="blelloch",
        source="blelloch.cu",
        template="rtscan::blelloch_scan",
        description="Blelloch's work-efficient up-sweep and down-sweep over a padded tree in shared memory "
                    "for each tile; tiles joined by the two-level look-back",
        passes=1,
        table=tuning.BLELLOCH,
        arguments=("block_threads", "items", "vec", "min_blocks", "lookback_depth", "atomic_polls"),
        dynamic_shared=blelloch_tree_bytes,
    ),
    "three_pass": _three_pass(
        "three_pass", "three passes, no look-back (the seed's multi-block version): each tile scanned from the "
        "identity, writing every step's map from the tile start and the tile's aggregate; the aggregates of each "
        "sequence scanned into carries; each step's state = its map applied to its tile's carry",
        tuning.THREE_PASS, ("tiles", "three_pass_tile_pairs"), ("apply", "three_pass_apply_pairs"), True,
        "7 * itemsize (read a, b; write the pairs; read the pairs; write h)"),
    "three_pass_reduce": _three_pass(
        "three_pass_reduce", "reduce-then-scan in three passes, no look-back: each tile reduced to its aggregate; "
        "the aggregates of each sequence scanned into carries; each tile scanned again from its carry",
        tuning.THREE_PASS_REDUCE, ("aggregates", "three_pass_tile_aggregates"), ("rescan", "three_pass_rescan"),
        False,
        "5 * itemsize (read a, b; read a, b again; write h)"),
}

VARIANTS["columns"] = Variant(
    name="columns",
    source="columns.cu",
    template="rtscan::columns_aggregates",
    description="reduce-then-scan in three passes with lanes across sequences, for time-major batches: a block "
                "takes neighbouring sequences over one chunk of steps, a thread one sequence, one step at a time; "
                "the chunks' carries as three_pass_reduce's pass 2",
    passes=3,
    table=tuning.COLUMNS,
    arguments=CARRY_PASS_ARGUMENTS,
    dynamic_shared=no_dynamic_shared,
    pass_kernels=(PassKernel("columns pass 1 (aggregates)", "rtscan::columns_aggregates", CARRY_PASS_ARGUMENTS,
                             "columns"),
                  PassKernel("columns pass 2 (carries)", "rtscan::three_pass_carries", CARRY_PASS_ARGUMENTS,
                             "sequences", on_carries=True),
                  PassKernel("columns pass 3 (rescan)", "rtscan::columns_rescan", CARRY_PASS_ARGUMENTS, "columns")),
    vector_steps=False,
    device_traffic="5 * itemsize (read a, b; read a, b again; write h)",
)

VARIANTS["columns_lookback"] = Variant(
    name="columns_lookback",
    source="columns_lookback.cu",
    template="rtscan::columns_lookback_scan",
    description="single-pass decoupled look-back with lanes across sequences, for time-major batches: a tile "
                "takes 32, 16 or 8 neighbouring sequences over one chunk of steps, held in registers and shared "
                "memory, each warp a part of the chunk (two or four parts where the tile has 16 or 8 sequences); "
                "each lane of the look-back warp walks back along its own sequence",
    passes=1,
    table=tuning.COLUMNS_LOOKBACK,
    arguments=("block_threads", "items", "register_items", "min_blocks", "lookback_depth", "atomic_polls",
               "sequences_per_tile"),
    dynamic_shared=staged_tile_bytes,
    vector_steps=False,
)

# variant="auto": lookback_regs, except for batches laid out time-major (columns_suits), which
# columns_lookback runs. resolve("auto") names the first, auto's variant for contiguous sequences.
# columns runs only when asked for: columns_lookback, in tiles of 32, 16 or 8 sequences by how many
# the launch has (tuning.py), beat it on every time-major row measured on an H200, 13-69 % from 8 to
# 16 sequences (P120: results/h200/p120-few-sequences-2026-11-30-16.txt) and 10-60 % from 32 (P112,
# P113: p112-staged-b-2026-11-30-14.txt, p113-auto-2026-11-30-14.txt).
AUTO = "lookback_regs"
AUTO_TIME_MAJOR = "columns_lookback"
AUTO_VARIANTS = (AUTO, AUTO_TIME_MAJOR)
# The fewest neighbouring sequences, adjacent in memory, for which auto takes lanes across sequences.
# On an H200, time-major rows of 8 sequences ran at 0.261-0.265 of copy with columns against
# 0.208-0.211 with lookback_regs, 4 at 0.144-0.146 against 0.32 (four rounds, P102 and P103;
# profiling/results/h200/p102-columns-2026-11-30-13.txt, p103-columns-2026-11-30-13.txt), and
# columns_lookback ran 8 at 0.42 (P120).
COLUMNS_FROM_SEQUENCES = 8


def columns_suits(layout) -> bool:
    """Whether auto gives this layout (rtscan/_layout.py's SeqLayout) to columns_lookback: the time
    axis is not contiguous, and the innermost batch axis is, in a, b and out alike, with at least
    COLUMNS_FROM_SEQUENCES sequences along it, so a warp's load of one step is whole rows of
    neighbouring sequences."""
    rank = layout.batch_rank
    return (abs(layout.in_time_stride) != 1 and rank > 0 and layout.in_batch_stride[rank - 1] == 1
            and layout.out_batch_stride[rank - 1] == 1 and layout.batch_size[rank - 1] >= COLUMNS_FROM_SEQUENCES)


def auto_variant(layout) -> Variant:
    """What variant="auto" runs for this layout."""
    return VARIANTS[AUTO_TIME_MAJOR if columns_suits(layout) else AUTO]


def resolve(name: str) -> Variant:
    """The variant called `name`; "auto" gives AUTO (for the layout-dependent choice, auto_variant)."""
    if name == "auto":
        name = AUTO
    if name not in VARIANTS:
        from .errors import InputError

        raise InputError(f"variant must be 'auto' or one of {sorted(VARIANTS)}, got {name!r}")
    return VARIANTS[name]


def variants() -> list[dict]:
    """Each variant with its tuning entries and traffic model, for `rtscan.variants()`."""
    return [
        {
            "name": v.name,
            "auto": v.name in AUTO_VARIANTS,
            "description": v.description,
            "passes": v.passes,
            "traffic_bytes_per_element": v.device_traffic,
            "tuning": {f"{arch}/{dtype}": {kind: dict(shape) for kind, shape in entry.items()}
                       for (arch, dtype), entry in v.table.items()},
        }
        for v in VARIANTS.values()
    ]
