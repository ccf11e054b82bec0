"""`python -m rtscan route` (rtscan/__main__.py), no GPU needed: each row's kind and launch shape as
the registry routes it, and a clear refusal where it cannot tell the architecture."""

from __future__ import annotations

import pytest

from rtscan import __main__ as cli
from rtscan import gpu_available
from rtscan.registry import VARIANTS


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_route_prints_the_registry_kind_and_shape_of_each_row(arch, capsys):
    rows = [(64, 65536), (1, 1 << 28), (8192, 4096), (1000, 18432), (1, 1 << 20), (3, 4099)]
    assert cli.main(["route", "--arch", arch, "--shapes", ",".join(f"{n}x{length}" for n, length in rows)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(rows)
    variant = VARIANTS["lookback_regs"]
    for line, (num_seqs, length) in zip(lines, rows):
        vec = 4 if num_seqs == 1 or length % 4 == 0 else 1
        kind, shape = variant.launch_kind(arch, "float32", vec, length, num_seqs)
        per_seq, tiles = variant.tile_counts(shape, num_seqs, length)
        assert line.startswith(f"{num_seqs}x{length} on {arch}: {kind}, {shape.block_threads} x {shape.items} "), line
        assert f"{per_seq} tile" in line and f" {tiles} in all" in line, line
    assert "scalar steps" in lines[-1] and "16-byte steps" in lines[0]  # rows of 4099 start off the boundary


def test_route_sends_each_kind_where_the_registry_does(capsys):
    """Launches on either side of the bounds NOTES 116 and tuning.py name, as the registry tests have them."""
    cli.main(["route", "--arch", "sm_90", "--shapes", "64x65536,128x65536,1000x18432,1024x16384"])
    kinds = [line.split(": ")[1].split(",")[0] for line in capsys.readouterr().out.splitlines()]
    assert kinds == ["long", "mid_batch", "short_fill", "one_tile"]


@pytest.mark.parametrize("command", ["route", "bench"])
def test_a_bad_row_is_a_usage_error_naming_the_argument(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, "--arch", "sm_90", "--shapes", "64by65536"] if command == "route"
                 else [command, "--shapes", "64by65536"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "--shapes" in error and "8192x4096" in error and "'64by65536'" in error


@pytest.mark.skipif(gpu_available(), reason="a GPU is usable here: route takes its arch")
def test_route_without_a_gpu_needs_an_arch(capsys):
    assert cli.main(["route", "--shapes", "64x65536"]) == 2
    assert "--arch" in capsys.readouterr().err
