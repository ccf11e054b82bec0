"""python -m rtscan info | compile --arch sm_90 | route --shapes 96x65536 [--arch sm_90]
| bench [--variant NAME] [--min-log2 16] [--max-log2 28]"""

from __future__ import annotations

import argparse
import platform
import sys

from . import __version__, _compile, _driver, _kernels, _nvml, _nvtx, _scan, tuning
from .errors import RtscanError
from .registry import VARIANTS, resolve


def _nvtx_state() -> str:
    if not _nvtx.AVAILABLE:
        return "off (the nvtx package is missing)"
    if not _nvtx.RECORDING:
        return f"domain {_nvtx.DOMAIN}, skipped: no tool (Nsight) is attached to this process"
    return f"on, domain {_nvtx.DOMAIN}"


def info(_args) -> int:
    print(f"rtscan {__version__}, Python {platform.python_version()}")
    try:
        major, minor = _compile.nvrtc_version()
        print(f"NVRTC {major}.{minor}")
    except Exception as exc:
        print(f"NVRTC: unavailable ({exc})")
    print(f"kernels: {_compile.kernels_dir()}")
    cache = _compile.cache_dir()
    entries = sorted(cache.glob("*.cubin")) if cache.is_dir() else []
    print(f"cache: {cache} ({len(entries)} entries)")
    print(f"NVTX ranges: {_nvtx_state()}")
    ok, why = _driver.gpu_status()
    if not ok:
        print(f"GPU: none usable: {why}")
        return 0
    for device in range(_driver.device_count()):
        arch = _kernels.device_arch(device)
        sms = _driver.device_attribute(device, "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
        print(f"GPU {device}: {_driver.device_name(device)}, {arch}, {sms} SMs")
        for key, value in _nvml.facts(device).items():
            print(f"  {key}: {value:.0f}" if isinstance(value, float) else f"  {key}: {value}")
        for variant in VARIANTS.values():
            for shape in _kernels.shapes_for(variant, arch):
                expressions = variant.name_expressions(shape)
                entry = _compile.cache_path(variant.source, expressions, _compile.CompileOptions(arch=arch))
                state = "compiled (in the cache)" if entry.is_file() else "not compiled yet"
                print(f"  {variant.name}: {state}: {', '.join(expressions)}")
    return 0


def compile_command(args) -> int:
    modules = _kernels.compile_variants(VARIANTS.values(), args.arch)
    for (name, _), module in modules.items():
        origin = "cache" if module.from_cache else "NVRTC"
        print(f"{name} for {args.arch}: {len(module.cubin)} bytes from {origin}")
        for expression, lowered in module.lowered_names.items():
            print(f"  {expression} -> {lowered}")
    print(f"cache: {_compile.cache_dir()}")
    return 0


def _rows(text: str) -> list[tuple[int, int]]:
    """--shapes' rows, or argparse's usage error naming the argument."""
    from . import _bench

    try:
        return _bench.parse_shapes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _arch(text: str) -> str:
    """--arch as the tuning table reads it, or argparse's usage error naming the argument."""
    try:
        tuning.arch_number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def route_command(args) -> int:
    """For each row of SEQUENCESxSTEPS, laid out contiguously in float32 from a 128-byte line, the
    kind of tuning.py's table and the launch shape auto's lookback_regs takes, read from the table
    alone (no GPU needed), with the tiles the launch holds and how much of them the steps fill."""
    if args.arch:
        arch = args.arch
    else:
        ok, why = _driver.gpu_status()
        if not ok:
            print(f"rtscan route needs --arch without a usable GPU: {why}", file=sys.stderr)
            return 2
        arch = _kernels.device_arch(0)
    for num_seqs, length in args.shapes:
        launch = _scan.contiguous_launch("auto", num_seqs, length, arch)
        shape, per_seq = launch.shape, launch.tiles_per_seq
        steps = "16-byte steps" if shape.vec == 4 else "scalar steps"
        if launch.plan.layout.head:
            steps += ", each row from its line" if launch.plan.layout.head == 32 else ", each row from its 16 bytes"
        blocks = f"{shape.min_blocks} block{'s' if shape.min_blocks > 1 else ''} an SM"
        tiles = f"{per_seq} tile{'s' if per_seq > 1 else ''} a row, {launch.num_tiles} in all"
        filled = 100 * length / (per_seq * shape.steps_per_sequence)
        if launch.variant.row_warps(shape):
            span = length + launch.longest_head
            rows = launch.variant.rows_a_block(shape, span)
            lanes = launch.variant.lanes_a_row(shape, span)
            tiles = (f"{'a warp' if lanes == 32 else f'{lanes} lane' + 's' * (lanes > 1)} a row, {launch.num_tiles} "
                     f"block{'s' if launch.num_tiles > 1 else ''} of {rows} rows")
            filled = 100 * length * rows / shape.tile
        print(f"{num_seqs}x{length} on {arch}: {launch.kind}, {shape.block_threads} x {shape.items} "
              f"({steps}, {blocks}), {tiles}, the steps filling {filled:.3g} % of them")
    return 0


def bench_command(args) -> int:
    ok, why = _driver.gpu_status()
    if not ok:
        print(f"rtscan bench needs an NVIDIA GPU: {why}", file=sys.stderr)
        return 2
    from . import _bench

    # "auto" is timed as auto: its variant follows each row's layout (registry.auto_variant).
    if args.variant in ("all", "auto"):
        names = list(VARIANTS) if args.variant == "all" else ["auto"]
    else:
        names = [resolve(args.variant).name]
    if args.shapes:
        rows = args.shapes
    else:
        rows = [(1, 1 << log2) for log2 in range(args.min_log2, args.max_log2 + 1, args.step)]
    _bench.run(names, rows, with_model=args.model, offset=1 if args.misaligned else 0, cold=args.cold,
               time_major=args.time_major)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rtscan", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="device, arch, clocks, bandwidth, cache, what is compiled")
    compile_parser = commands.add_parser("compile", help="compile every kernel for an arch (no GPU needed)")
    compile_parser.add_argument("--arch", required=True, type=_arch, help="e.g. sm_90")
    route_parser = commands.add_parser("route", help="the tuning kind and launch shape auto takes for each row "
                                                     "(no GPU needed)")
    route_parser.add_argument("--shapes", required=True, type=_rows,
                              help="rows of SEQUENCESxSTEPS, e.g. 96x65536,64x65536")
    route_parser.add_argument("--arch", type=_arch, help="e.g. sm_90 (default: GPU 0's)")
    bench_parser = commands.add_parser("bench", help="time scans beside a device-to-device copy of the same bytes")
    bench_parser.add_argument("--variant", default="auto", help="a variant name, 'auto' or 'all'")
    bench_parser.add_argument("--min-log2", type=int, default=16)
    bench_parser.add_argument("--max-log2", type=int, default=28)
    bench_parser.add_argument("--step", type=int, default=2, help="log2 step between sizes")
    bench_parser.add_argument("--model", action="store_true",
                              help="also print rtscan/model.py's predicted time and measured / predicted")
    bench_parser.add_argument("--shapes", type=_rows,
                              help="rows of SEQUENCESxSTEPS instead of one sequence per size, e.g. 8192x4096,64x65536")
    bench_parser.add_argument("--misaligned", action="store_true",
                              help="start the first sequence one element past a 128-byte line (the look-back variants "
                                   "still take 16-byte steps, each row from the boundary before it, the others their "
                                   "scalar path where rows are off a 16-byte boundary)")
    bench_parser.add_argument("--cold", action="store_true",
                              help="rotate each row's launches over buffers of 4x the L2, so that no launch reads "
                                   "inputs an earlier one left in L2")
    bench_parser.add_argument("--time-major", action="store_true",
                              help="lay each row out as (STEPS, SEQUENCES) and scan along dim 0, so a sequence's "
                                   "steps lie SEQUENCES elements apart (the scalar path, for SEQUENCES > 1)")
    args = parser.parse_args(argv)
    handlers = {"info": info, "compile": compile_command, "route": route_command, "bench": bench_command}
    try:
        return handlers[args.command](args)
    except RtscanError as exc:
        print(f"rtscan: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
