"""profiling/sweep.py without a GPU: shape parsing, the results folder, the stability rule and the
files it writes. The sweep itself runs only on a GPU (profiling/run_on_gpu.sh's machine)."""

from __future__ import annotations

import csv
import ctypes
import json

import pytest

import rtscan
from _profiling import load_script


@pytest.fixture(scope="module")
def sweep():
    return load_script("sweep")


def test_parse_shape(sweep):
    protocol = {"walk_lanes": 32, "segment_tiles": 32, "protocol_warp": 0, "atomic_polls": 0, "chunks_first": 0,
                "run_chunks": 1}
    assert sweep.parse_shape("384x44r12b2s8")["segment_tiles"] == 8
    assert sweep.parse_shape("352x56r16b2p1")["protocol_warp"] == 1
    assert sweep.parse_shape("352x56r16b2d1s1p1a1")["atomic_polls"] == 1
    assert sweep.parse_shape("256x32b2a1c1")["chunks_first"] == 1
    assert sweep.parse_shape("352x48r16b2p1u4")["run_chunks"] == 4
    assert sweep.parse_shape("256x48r16") == {"block_threads": 256, "items": 48, "register_items": 16,
                                              "min_blocks": 3, "lookback_depth": 1, **protocol}
    assert sweep.parse_shape("128x32b6d2") == {"block_threads": 128, "items": 32, "register_items": 0,
                                               "min_blocks": 6, "lookback_depth": 2, **protocol}
    for bad in ("256", "256x", "x48", "256x48q2", "256*48", "256x48p2", "256x48p1s8", "256x48a2", "256x48a1p1",
                "256x48c2", "256x48c1a1", "256x48u", "256x48u2c1", "256x48u3"):
        with pytest.raises(ValueError, match="shape must look like"):
            sweep.parse_shape(bad)


def test_parse_shape_takes_the_variants_walk_and_segment(sweep):
    serial = rtscan.tuning.lookup(rtscan.tuning.LOOKBACK_SERIAL, "sm_90", "float32")["long"]
    fields = sweep.parse_shape("256x1b4", serial)
    assert fields["walk_lanes"] == 1 and fields["segment_tiles"] == 1
    assert sweep.parse_shape("256x1b4s8", serial)["segment_tiles"] == 8


def test_fields_the_template_lacks_must_keep_their_tuned_value(sweep):
    hillis = rtscan.registry.VARIANTS["hillis_steele"]
    tuned = rtscan.tuning.lookup(hillis.table, "sm_90", "float32")["long"]
    sweep.check_template_fields(hillis, sweep.parse_shape("256x1b4", tuned), tuned)
    with pytest.raises(ValueError, match="takes no items"):
        sweep.check_template_fields(hillis, sweep.parse_shape("256x16", tuned), tuned)
    with pytest.raises(ValueError, match="takes no protocol_warp"):  # its entry has none: no extra warp
        sweep.check_template_fields(hillis, sweep.parse_shape("256x1b4p1", tuned), tuned)
    regs = rtscan.registry.VARIANTS["lookback_regs"]
    sweep.check_template_fields(regs, sweep.parse_shape("352x56r16b2p1"), {})


def test_every_default_shape_parses(sweep):
    assert len([sweep.parse_shape(s) for s in sweep.DEFAULT_SHAPES.split(",")]) >= 2


def test_gpu_folder(sweep):
    assert sweep.gpu_folder("NVIDIA H200") == "h200"
    assert sweep.gpu_folder("NVIDIA GeForce RTX 4090") == "geforce-rtx-4090"


def test_copy_drift_marks_the_largest_change(sweep):
    assert sweep.copy_drift({20: 10.0, 28: 100.0}, {20: 10.2, 28: 96.0}) == pytest.approx(0.04)
    assert sweep.copy_drift({28: 100.0}, {28: 100.0}) == 0.0


def fake_result(usable=True):
    return {"device": "NVIDIA H200", "arch": "sm_90", "date": "2026-11-30", "usable": usable, "sequences": 64,
            "variant": "lookback_regs",
            "copy_us_before": {24: 50.0, 28: 760.0}, "copy_us_after": {24: 49.0, 28: 770.0},
            "rows": [{"block_threads": 256, "items": 48, "register_items": 16, "min_blocks": 3, "lookback_depth": 1,
                      "walk_lanes": 32, "segment_tiles": 16, "scan_us": {24: 85.0, 28: 1090.0}},
                     {"block_threads": 512, "items": 64, "register_items": 0, "min_blocks": 3, "lookback_depth": 1,
                      "walk_lanes": 32, "segment_tiles": 32, "error": "needs more shared memory than the device has"}]}


def test_write_json_and_csv(sweep, tmp_path):
    paths = sweep.write(fake_result(), tmp_path)
    assert paths[0].suffix == ".json" and json.loads(paths[0].read_text())["device"] == "NVIDIA H200"
    rows = list(csv.DictReader(paths[1].read_text().splitlines()))
    assert len(rows) == 2  # one line per size of the shape that ran; none for the one that failed
    assert rows[1]["log2"] == "28" and rows[1]["copy_us"] == "760.00"  # the faster of the two copy readings
    assert float(rows[1]["ratio"]) == pytest.approx(760.0 / 1090.0, abs=1e-4)
    assert rows[1]["segment_tiles"] == "16" and rows[1]["sequences"] == "64"
    assert all(path.exists() for path in paths)


@pytest.mark.skipif(rtscan.gpu_available(), reason="a GPU is present: main() would run the whole sweep")
def test_main_without_a_gpu_says_so(sweep, capsys):
    assert sweep.main(["--shapes", "256x16", "--log2", "20"]) == 2
    assert "needs a GPU" in capsys.readouterr().err


def test_format_shape_inverts_parse_shape(sweep):
    for text in ("384x44r12b2d1", "256x16r0b3d1", "384x44r12b2d1s16", "352x56r16b2d1p1", "64x8r0b3d2s16p1",
                 "352x56r16b2d1s1p1a1", "256x16r0b3d1a1", "256x32r0b2d1a1c1",
                 "352x48r16b2d1p1u2", "352x48r16b2d1p1c1u4"):
        assert sweep.format_shape(sweep.parse_shape(text)) == text
    tuned = rtscan.tuning.lookup(rtscan.tuning.LOOKBACK_REGS, "sm_90", "float32")
    for kind in (kind for kind in rtscan.registry.SHAPE_KINDS if kind in tuned):
        entry = {"protocol_warp": 0, "atomic_polls": 0, "chunks_first": 0, "run_chunks": 1, **tuned[kind]}  # as left out
        assert sweep.parse_shape(sweep.format_shape(entry)).items() <= entry.items()


@pytest.mark.skipif(rtscan.gpu_available(), reason="a GPU is present: main() would run the whole sweep")
def test_sequences_must_divide_every_size(sweep):
    with pytest.raises(SystemExit):
        sweep.main(["--shapes", "256x16", "--log2", "20", "--sequences", "3"])


@pytest.mark.parametrize("variant", ["no_such_variant", "three_pass", "columns", "columns_lookback"])
def test_variant_must_be_a_single_pass_one_over_contiguous_rows(sweep, variant, capsys):
    with pytest.raises(SystemExit):
        sweep.main(["--shapes", "256x16", "--log2", "20", "--variant", variant])
    error = capsys.readouterr().err
    assert "--variant" in error
    assert ("columns_sweep.py" in error) == variant.startswith("columns")


def test_prefix_views_rows(sweep):
    assert sweep._Prefix(0x1000, 1 << 22, 64).__cuda_array_interface__["shape"] == (64, 65536)
    assert sweep._Prefix(0x1000, 1 << 22).__cuda_array_interface__["shape"] == (1 << 22,)


def test_a_variant_other_than_auto_names_its_files(sweep, tmp_path):
    result = dict(fake_result(), variant="blelloch")
    paths = sweep.write(result, tmp_path)
    assert paths[0].name == "sweep-blelloch-2026-11-30.json"
    assert {row["variant"] for row in csv.DictReader(paths[1].read_text().splitlines())} == {"blelloch"}


def test_a_second_sweep_on_the_same_day_keeps_the_first(sweep, tmp_path):
    first = sweep.write(fake_result(), tmp_path)
    first_text = first[0].read_text()
    second = sweep.write(dict(fake_result(), usable=False), tmp_path)
    assert [p.name for p in second[:2]] == ["sweep-2026-11-30-2.json", "sweep-2026-11-30-2.csv"]
    assert first[0].read_text() == first_text
    assert sweep.write(fake_result(), tmp_path)[0].name == "sweep-2026-11-30-3.json"


def test_sweep_runs_its_candidates_with_the_driver_faked(sweep, monkeypatch):
    """The GPU path of sweep() with every driver call replaced: each candidate is installed as the
    variant's long entry, scanned with that variant, timed, and the tuning table is restored."""
    from rtscan import _bench, _driver, _kernels, _nvml, registry

    variant = registry.VARIANTS["blelloch"]
    table_before = dict(variant.table)
    scanned = []
    monkeypatch.setattr(_driver, "make_current", lambda device: None)
    monkeypatch.setattr(_kernels, "device_arch", lambda device: "sm_90")
    monkeypatch.setattr(_driver, "device_name", lambda device: "NVIDIA H200")
    monkeypatch.setattr(_driver, "create_stream", lambda: 7)
    monkeypatch.setattr(_driver, "destroy_stream", lambda stream: None)
    monkeypatch.setattr(_driver, "alloc", lambda nbytes: 1 << 20)
    monkeypatch.setattr(_driver, "free", lambda pointer: None)
    monkeypatch.setattr(_driver, "copy_to_device", lambda *args: None)
    monkeypatch.setattr(_driver, "copy_to_host", lambda host, device, nbytes, stream: ctypes.memset(host, 0, nbytes))
    monkeypatch.setattr(_driver, "synchronize", lambda stream: None)
    monkeypatch.setattr(_driver, "resident_blocks_per_sm", lambda *args: 3)
    monkeypatch.setattr(_kernels, "function", lambda device, chosen, shape: "kernel")
    monkeypatch.setattr(_nvml, "facts", lambda device: {})
    monkeypatch.setattr(_bench, "_time_copy", lambda copy, stream, launches: 10.0)

    def time_graph(enqueue, stream, launches):
        enqueue()
        return 20.0

    monkeypatch.setattr(_bench, "_time_graph", time_graph)
    monkeypatch.setattr(rtscan, "scan", lambda a, b, **kwargs: scanned.append(
        (kwargs["variant"], variant.table[("sm_90", "float32")]["long"]["items"])))
    result = sweep.sweep(["256x8", "512x4b2"], [20, 21], variant_name="blelloch")
    assert variant.table == table_before
    assert result["variant"] == "blelloch" and result["usable"]
    assert [(row["block_threads"], row["items"]) for row in result["rows"]] == [(256, 8), (512, 4)]
    assert all(row["scan_us"] == {20: 20.0, 21: 20.0} for row in result["rows"])
    assert all(row["relative_error"] == 1.0 and row["deterministic"] for row in result["rows"])  # zeros came back
    # per candidate: two checked runs, then per size one run outside the capture and one inside
    assert scanned == [("blelloch", 8)] * 6 + [("blelloch", 4)] * 6


def test_restore_entry_puts_back_the_tuned_entry_or_none(sweep):
    tuned = {"long": {}}
    table = {("sm_90", "float32"): {"long": {"items": 1}}}
    sweep.restore_entry(table, ("sm_90", "float32"), tuned)
    assert table[("sm_90", "float32")] is tuned
    sweep.restore_entry(table, ("sm_90", "float32"), None)  # the arch had no entry of its own
    assert ("sm_90", "float32") not in table
    sweep.restore_entry(table, ("sm_90", "float32"), None)  # a candidate never placed: nothing to remove
    assert not table
