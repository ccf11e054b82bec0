"""profiling/compare.py and profiling/peers.py without a GPU: argument parsing, the error check,
the drift rule, the skip and "not installed" reporting, the table/CSV/JSON writers from a fake
result, and the pure-PyTorch baselines' arithmetic on a NumPy stand-in for torch. The timing and
every real peer run only on a GPU machine with torch."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import sys
import types

import numpy as np
import pytest

from _profiling import load_script
from rtscan.reference import scan as reference_scan


@pytest.fixture(scope="module")
def compare():
    return load_script("compare")


@pytest.fixture(scope="module")
def peers(compare):
    return sys.modules["peers"]  # compare.py imports it from profiling/


def test_parse_shape(compare):
    assert compare.parse_shape("2^24") == (1, 1 << 24)
    assert compare.parse_shape("8192x4096") == (8192, 4096)
    assert compare.parse_shape("1x2^20") == (1, 1 << 20)
    for bad in ("", "2^", "0x16", "8x", "1x2x3", "-4", "2**20"):
        with pytest.raises(ValueError, match="shape must look like"):
            compare.parse_shape(bad)


def test_shape_labels_and_checked_sequences(compare):
    assert compare.shape_label(1, 1 << 28) == "2^28"
    assert compare.shape_label(64, 65536) == "64x65536"
    assert compare.shape_label(1, 1000) == "1000"
    assert compare.check_sequences(1) == [0]
    assert compare.check_sequences(8192) == [0, 1, 4096, 8191]


def test_parse_args(compare):
    args = compare.parse_args(["--shapes", "2^20,64x65536", "--only", "rtscan, CUB", "--max-seconds", "1.5"])
    assert args.shapes == [(1, 1 << 20), (64, 65536)]
    assert args.only == ["rtscan", "CUB"] and args.max_seconds == 1.5 and args.repeats == 7
    assert [compare.parse_shape(s) for s in compare.DEFAULT_SHAPES.split(",")][-2:] == [(8192, 4096), (64, 65536)]
    for bad in (["--repeats", "0"], ["--max-seconds", "0"], ["--shapes", "2^x"]):
        with pytest.raises((SystemExit, ValueError)):
            compare.parse_args(bad)


def test_error_check_marks_a_wrong_peer(compare):
    rng = np.random.default_rng()
    a, b = rng.uniform(0.5, 1.0, (2, 4096)), rng.standard_normal((2, 4096))
    expected = reference_scan(a, b)
    right = expected.astype(np.float32)
    assert compare.verdict(compare.max_relative_error(right, expected)) == "ok"
    swapped = reference_scan(b, a).astype(np.float32)  # operands swapped: the classic silent bug
    assert compare.verdict(compare.max_relative_error(swapped, expected)) == "WRONG"
    shifted = np.roll(right, 1, axis=1)                # off by one step
    assert compare.verdict(compare.max_relative_error(shifted, expected)) == "WRONG"
    poisoned = right.copy()
    poisoned[1, 77] = np.nan                           # one step never written
    assert compare.max_relative_error(poisoned, expected) == math.inf
    assert compare.verdict(math.inf) == "WRONG"


def test_collect_reports_missing_and_broken_peers(peers):
    def missing():
        raise ImportError("No module named 'accelerated_scan'")

    def broken():
        raise RuntimeError("nvcc not found")

    fine = peers.Peer("fine", "(S, L)", None, None, None)
    found, reasons = peers.collect({"a": missing, "b": broken, "c": lambda: [fine]})
    assert found == [fine]
    assert reasons == {"a": "not installed (No module named 'accelerated_scan')",
                       "b": "failed to set up (RuntimeError: nvcc not found)"}


def test_optional_peers_are_all_named(peers):
    assert set(peers.OPTIONAL) == {"torch.compile associative_scan", "accelerated-scan",
                                   "flash-linear-attention HGRN", "CUB via cuda.compute (cuda-cccl)"}
    if importlib.util.find_spec("torch") is None:  # here every one of them must come back with a reason
        found, reasons = peers.collect(peers.OPTIONAL)
        assert found == [] and set(reasons) == set(peers.OPTIONAL)
        assert all(r.startswith(("not installed", "failed to set up")) for r in reasons.values())


def test_batch_channels(peers):
    assert peers._batch_channels(8192) == (8, 1024)  # ANCHORS' (8, 1024, 4096)
    assert peers._batch_channels(64) == (1, 64)
    assert peers._batch_channels(1) == (1, 1)


def fake_result(usable=True):
    return {"device": "NVIDIA H200", "date": "2026-11-30", "seed": 1234, "torch": "2.11.0", "usable": usable,
            "copy_drift": 0.01 if usable else 0.05, "shapes": ["2^24", "64x65536"],
            "copy_us_before": {"2^24": 52.0, "64x65536": 14.0}, "copy_us_after": {"2^24": 53.0, "64x65536": 13.0},
            "peers": {"rtscan auto": {"layout": "(S, L)", "note": "", "group": "rtscan"},
                      "PyTorch Blelloch": {"layout": "(S, L)", "note": "", "group": "pytorch"},
                      "PyTorch Hillis-Steele": {"layout": "(S, L)", "note": "", "group": "pytorch"},
                      "fla chunk_hgrn": {"layout": "(B, T, D)", "note": "g = log(a)", "group": "peer"}},
            "missing": {"accelerated-scan": "not installed (No module named 'accelerated_scan')"},
            "rows": [
                {"peer": "rtscan auto", "shape": "2^24", "sequences": 1, "steps": 1 << 24, "status": "ok",
                 "us": 65.0, "error": 2e-7},
                {"peer": "rtscan auto", "shape": "64x65536", "sequences": 64, "steps": 65536, "status": "ok",
                 "us": 16.0, "error": 3e-7},
                {"peer": "PyTorch Blelloch", "shape": "2^24", "sequences": 1, "steps": 1 << 24, "status": "ok",
                 "us": 3100.0, "error": 1e-6},
                {"peer": "PyTorch Hillis-Steele", "shape": "2^24", "sequences": 1, "steps": 1 << 24,
                 "status": "ok", "us": 3900.0, "error": 1e-6},
                {"peer": "PyTorch Blelloch", "shape": "64x65536", "sequences": 64, "steps": 65536,
                 "status": "skipped", "reason": "predicted 3.0 s per call from a smaller size (limit 2.0 s)"},
                {"peer": "fla chunk_hgrn", "shape": "2^24", "sequences": 1, "steps": 1 << 24, "status": "WRONG",
                 "us": 1300.0, "error": 0.2},
                {"peer": "fla chunk_hgrn", "shape": "64x65536", "sequences": 64, "steps": 65536, "status": "failed",
                 "reason": "RuntimeError: out of memory"}]}


def test_table(compare):
    text = compare.table(fake_result())
    lines = text.splitlines()
    assert lines[0] == "| system | 2^24 vs copy (us) | 64x65536 vs copy (us) |"
    assert "| copy, same 12 B/step | 1 (52.0) | 1 (13.0) |" in lines  # the faster copy reading
    assert "| rtscan auto | 0.800 (65.0) | 0.812 (16.0) |" in lines
    assert "| PyTorch Hillis-Steele | 0.013 (3900.0) | - |" in lines
    chunk = next(line for line in lines if line.startswith("| fla chunk_hgrn"))
    assert "WRONG, error 2.0e-01: 0.040 (1300.0)" in chunk and "failed [2]" in chunk
    assert "| accelerated-scan | not installed [3] | not installed [3] |" in lines
    assert "[1] predicted 3.0 s per call from a smaller size (limit 2.0 s)" in lines
    assert "[3] not installed (No module named 'accelerated_scan')" in lines
    assert "- fla chunk_hgrn: (B, T, D); g = log(a)" in lines
    assert any("PyTorch Blelloch: 3100.0 us; 48x (issue 4 asks at least 60x)" in line for line in lines)
    assert "usable." in text and "seed 1234" in text
    assert "UNUSABLE (limit 3%)" in compare.table(fake_result(usable=False))


def test_speedup_needs_both_sides(compare):
    result = fake_result()
    result["rows"] = [r for r in result["rows"] if r["peer"] != "rtscan auto"]
    assert "not measured" in compare.speedup_line(result)
    result = fake_result()
    for row in result["rows"]:
        if row["peer"] == "PyTorch Blelloch" and row["shape"] == "2^24":
            row["status"] = "WRONG"  # a wrong baseline does not count: Hillis-Steele is the faster right one
    assert "PyTorch Hillis-Steele: 3900.0 us; 60x" in compare.speedup_line(result)


def test_drift_rule_is_sweeps(compare):
    assert compare.DRIFT_LIMIT == 0.03
    assert compare.copy_drift({"2^24": 50.0}, {"2^24": 51.0}) == pytest.approx(0.02)
    assert compare.copy_drift({"2^24": 50.0, "2^28": 700.0}, {"2^24": 50.0, "2^28": 735.0}) == pytest.approx(0.05)


def test_write(compare, tmp_path):
    paths = compare.write(fake_result(), tmp_path)
    assert [p.name for p in paths[:3]] == ["compare-2026-11-30.json", "compare-2026-11-30.csv", "compare-2026-11-30.md"]
    assert json.loads(paths[0].read_text())["seed"] == 1234
    rows = list(csv.DictReader(paths[1].open()))
    assert len(rows) == 8  # seven measured or skipped cells and one missing peer
    auto = rows[0]
    assert auto["system"] == "rtscan auto" and auto["us"] == "65.00"
    assert float(auto["vs_copy"]) == pytest.approx(52.0 / 65.0, abs=1e-4)
    assert float(auto["gb_per_s"]) == pytest.approx(12 * (1 << 24) / 65.0 / 1e3, abs=0.1)
    assert [r["status"] for r in rows].count("WRONG") == 1
    assert rows[-1]["status"] == "not installed" and "accelerated_scan" in rows[-1]["reason"]
    assert paths[2].read_text().startswith("| system |")
    assert all(p.exists() for p in paths)


def test_select(compare, peers):
    every = [peers.Peer(name, "", None, None, None) for name in ("rtscan auto", "rtscan blelloch", "PyTorch Blelloch")]
    assert [p.name for p in compare.select(every, ["blelloch"])] == ["rtscan blelloch", "PyTorch Blelloch"]
    assert compare.select(every, []) == every


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed: main() would run")
def test_main_without_torch_says_so(compare, capsys):
    assert compare.main(["--shapes", "2^20"]) == 2
    assert "needs torch and a GPU" in capsys.readouterr().err


class _Tensor(np.ndarray):
    """The few in-place torch methods the pure-PyTorch baselines use, on NumPy."""

    def addcmul_(self, x, y):
        self += x * y
        return self

    def mul_(self, x):
        self *= x
        return self

    def add_(self, x):
        self += x
        return self

    def copy_(self, x):
        self[...] = x
        return self

    def clone(self):
        return np.array(self).view(_Tensor)

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], type):
            return np.ndarray.view(self, shape[0])
        reshaped = self.reshape(shape)
        assert np.shares_memory(reshaped, self)  # torch's view never copies; the in-place sweeps rely on it
        return reshaped


@pytest.fixture
def numpy_torch(monkeypatch):
    stand_in = types.ModuleType("torch")
    stand_in.ones = lambda *shape, device=None, dtype=None: np.ones(shape, dtype).view(_Tensor)
    stand_in.zeros = lambda *shape, device=None, dtype=None: np.zeros(shape, dtype).view(_Tensor)
    monkeypatch.setitem(sys.modules, "torch", stand_in)


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (3, 5), (2, 64), (4, 1000), (1, 4097)])
def test_pytorch_baselines_arithmetic(peers, numpy_torch, shape):
    """Blelloch and Hillis-Steele as written, run on NumPy in float64, against the reference;
    awkward lengths exercise the identity padding. On torch they run on the GPU in compare.py."""
    rng = np.random.default_rng()
    a = rng.uniform(-1.2, 1.2, shape).view(_Tensor)  # a < 0 and |a| > 1 too: order mistakes show
    b = rng.standard_normal(shape).view(_Tensor)
    expected = reference_scan(a, b)
    for baseline in (peers.blelloch, peers.hillis_steele):
        a_before, b_before = np.array(a), np.array(b)
        out = np.asarray(baseline(a, b))
        assert np.max(np.abs(out - expected)) <= 1e-12 * max(1.0, np.max(np.abs(expected))), baseline.__name__
        assert np.array_equal(a, a_before) and np.array_equal(b, b_before)  # the shared inputs are untouched
