"""`python -m rtscan route` (rtscan/__main__.py), no GPU needed: each row's kind and launch shape as
the registry routes it, and usage errors that name the argument."""

from __future__ import annotations

import pytest

from rtscan import __main__ as cli


def route(capsys, arch: str, shapes: str) -> list[str]:
    assert cli.main(["route", "--arch", arch, "--shapes", shapes]) == 0
    return capsys.readouterr().out.splitlines()


def test_route_prints_each_rows_kind_shape_tiles_and_fill(capsys):
    assert route(capsys, "sm_90", "64x65536,3x4099,3x20474,3x4095,1x1048576,200x30000") == [
        "64x65536 on sm_90: long, 352 x 48 (16-byte steps, 2 blocks an SM), 4 tiles a row, 256 in all, "
        "the steps filling 97 % of them",
        # rows of 4099 steps: the second and third start off the line, and are scanned from theirs, one
        # rows_6144 tile a row (P235, P236)
        "3x4099 on sm_90: rows_6144, 256 x 24 (16-byte steps, each row from its line, 4 blocks an SM), 1 tile a row, "
        "3 in all, the steps filling 66.7 % of them",
        # rows of 20474 steps: heads from their lines would give them a sixth tile, from 16 bytes not (P197)
        "3x20474 on sm_90: short, 256 x 16 (16-byte steps, each row from its 16 bytes, 3 blocks an SM), 5 tiles a "
        "row, 15 in all, the steps filling 100 % of them",
        # rows of 4095 steps: their heads take them past the short tile, into rows_6144's (P219, P236)
        "3x4095 on sm_90: rows_6144, 256 x 24 (16-byte steps, each row from its line, 4 blocks an SM), 1 tile a row, "
        "3 in all, the steps filling 66.7 % of them",
        "1x1048576 on sm_90: short, 256 x 16 (16-byte steps, 3 blocks an SM), 256 tiles a row, 256 in all, "
        "the steps filling 100 % of them",
        # rows of 30000 steps: every second one starts half a line on; past one wave of long tiles (P208)
        "200x30000 on sm_90: over_wave, 256 x 16 (16-byte steps, each row from its line, 3 blocks an SM), 8 tiles "
        "a row, 1600 in all, the steps filling 91.6 % of them"]


def test_route_follows_the_bounds_of_the_table(capsys):
    """Either side of mid_batch's 2^23 steps (under it over_wave's) and of one_tile's 15/16 of a long
    tile (rows of 15836 steps, scanned from their lines, put 15864 in their tiles), and an older
    architecture's own table."""
    kinds = [line.split(": ")[1].split(",")[0]
             for line in route(capsys, "sm_90", "127x65536,128x65536,1024x15840,1024x15808,1024x15836,1000x18432")]
    assert kinds == ["over_wave", "mid_batch", "one_tile", "short_batch", "one_tile", "short_fill"]
    assert route(capsys, "sm_80", "64x65536")[0].startswith("64x65536 on sm_80: long, 256 x 16 ")


@pytest.mark.parametrize("args,name,value", [
    (["route", "--arch", "sm_90", "--shapes", "64by65536"], "--shapes", "64by65536"),
    (["bench", "--shapes", "64by65536"], "--shapes", "64by65536"),
    (["route", "--arch", "hopper", "--shapes", "64x65536"], "--arch", "hopper"),
    (["compile", "--arch", "90"], "--arch", "90")])
def test_bad_arguments_are_usage_errors_naming_the_argument(args, name, value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(args)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert f"argument {name}" in error and repr(value) in error


def test_route_without_an_arch_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(cli._driver, "gpu_status", lambda: (False, "no driver here"))
    assert cli.main(["route", "--shapes", "64x65536"]) == 2
    assert "--arch" in capsys.readouterr().err
