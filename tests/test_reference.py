"""rtscan.reference: the float64 sequential definition of the right answer, checked against numbers
worked out by hand and against a plain Python loop; and the two-level evaluation the GPU tests use
for long sequences (tests/_checks.py), checked against the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtscan import reference

import _checks


def loop_scan(a, b, h0=None, dim=-1, reverse=False):
    """The recurrence written out with Python floats, one sequence at a time."""
    a, b = np.moveaxis(np.asarray(a, np.float64), dim, -1), np.moveaxis(np.asarray(b, np.float64), dim, -1)
    out = np.empty(a.shape)
    for index in np.ndindex(a.shape[:-1]):
        state = 0.0 if h0 is None else float(np.asarray(h0)[index])
        steps = range(a.shape[-1] - 1, -1, -1) if reverse else range(a.shape[-1])
        for t in steps:
            state = float(a[index + (t,)]) * state + float(b[index + (t,)])
            out[index + (t,)] = state
    return np.moveaxis(out, -1, dim)


def test_hand_computed_forward():
    # h0 = 0: 0.5*0 + 1 = 1; 2*1 + 1 = 3; -1*3 + 1 = -2; 0*(-2) + 4 = 4
    out = reference.scan([0.5, 2.0, -1.0, 0.0], [1.0, 1.0, 1.0, 4.0])
    assert out.tolist() == [1.0, 3.0, -2.0, 4.0]
    assert out.dtype == np.float64


def test_hand_computed_h0():
    # h0 = 2: 0.5*2 + 1 = 2; 2*2 + 1 = 5; -1*5 + 1 = -4
    assert reference.scan([0.5, 2.0, -1.0], [1.0, 1.0, 1.0], h0=2.0).tolist() == [2.0, 5.0, -4.0]


def test_hand_computed_reverse():
    # from the end: h[2] = 1; h[1] = 2*1 + 1 = 3; h[0] = 0.5*3 + 1 = 2.5
    assert reference.scan([0.5, 2.0, -1.0], [1.0, 1.0, 1.0], reverse=True).tolist() == [2.5, 3.0, 1.0]
    # and with h0 = 3 entering at the end: h[2] = -3 + 1 = -2; h[1] = -4 + 1 = -3; h[0] = -1.5 + 1
    assert reference.scan([0.5, 2.0, -1.0], [1.0, 1.0, 1.0], h0=3.0, reverse=True).tolist() == [-0.5, -3.0, -2.0]


def test_hand_computed_dim0():
    a = np.array([[1.0, 2.0], [3.0, 0.5]])
    b = np.array([[1.0, 1.0], [2.0, 2.0]])
    # column 0: 1, 3*1 + 2 = 5; column 1: 1, 0.5*1 + 2 = 2.5
    assert reference.scan(a, b, dim=0).tolist() == [[1.0, 1.0], [5.0, 2.5]]
    # rows along dim=-1: row 0: 1, 2*1 + 1 = 3; row 1: 2, 0.5*2 + 2 = 3
    assert reference.scan(a, b).tolist() == [[1.0, 3.0], [2.0, 3.0]]


@pytest.mark.parametrize("shape,dim", [((7,), -1), ((7,), 0), ((3, 9), -1), ((3, 9), 0), ((4, 5, 6), 1),
                                       ((4, 5, 6), -3), ((2, 3, 4, 5), 2)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_h0", [False, True])
def test_against_python_loop(rng, shape, dim, reverse, with_h0):
    a = rng.uniform(-1.5, 1.5, shape)
    b = rng.standard_normal(shape)
    h0 = rng.standard_normal(shape[:dim % len(shape)] + shape[dim % len(shape) + 1:]) if with_h0 else None
    got = reference.scan(a, b, h0=h0, dim=dim, reverse=reverse)
    want = loop_scan(a, b, h0, dim, reverse)
    assert got.shape == shape
    np.testing.assert_array_equal(got, want)  # same operations in the same order: bit for bit


def test_input_is_not_modified(rng):
    a, b = rng.standard_normal((3, 10)).astype(np.float32), rng.standard_normal((3, 10)).astype(np.float32)
    a_copy, b_copy = a.copy(), b.copy()
    reference.scan(a, b, dim=0)
    np.testing.assert_array_equal(a, a_copy)
    np.testing.assert_array_equal(b, b_copy)


def test_float32_inputs_are_computed_in_float64():
    # 1 + 2^-30 is not a float32; a float32 evaluation would give exactly 1.0
    out = reference.scan(np.array([1.0, 1.0], np.float32), np.array([1.0, 2.0**-30], np.float32))
    assert out.dtype == np.float64 and out[1] == 1.0 + 2.0**-30


def test_nan_and_inf_propagate_sequentially():
    out = reference.scan([0.5, 0.5, 0.0, 0.5], [1.0, math.nan, 1.0, 1.0])
    assert out[0] == 1.0 and np.isnan(out[1:]).all()  # 0 * NaN is NaN: a = 0 does not reset a NaN
    out = reference.scan([0.5, 0.5, 0.5], [math.inf, 1.0, 1.0])
    assert np.isposinf(out).all()
    out = reference.scan([math.inf, 0.5], [1.0, 1.0])  # inf * 0 (the initial state) is NaN
    assert np.isnan(out).all()


def test_zero_length():
    assert reference.scan(np.zeros((3, 0)), np.zeros((3, 0))).shape == (3, 0)


def test_mismatched_shapes():
    with pytest.raises(ValueError):
        reference.scan(np.zeros(3), np.zeros(4))


# ---- the two-level evaluation of tests/_checks.py against the reference ---------------------------

@pytest.mark.parametrize("length", [_checks.BLOCK - 1, _checks.BLOCK, 2 * _checks.BLOCK + 7, 3 * _checks.BLOCK])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_h0", [False, True])
@pytest.mark.parametrize("regime", ["mixed", "cumsum", "resets"])
def test_two_level_matches_reference(rng, length, reverse, with_h0, regime):
    shape = (3, length)
    a = {"mixed": rng.uniform(-1, 1, shape), "cumsum": np.ones(shape),
         "resets": np.where(rng.random(shape) < 0.01, 0.0, rng.uniform(0.5, 1.0, shape))}[regime]
    b = rng.uniform(-1, 1, shape)
    h0 = rng.standard_normal(3) if with_h0 else None
    want = reference.scan(a, b, h0=h0, reverse=reverse)
    scale = reference.scan(np.abs(a), np.abs(b), h0=None if h0 is None else np.abs(h0), reverse=reverse)
    forward = (lambda x: x[..., ::-1]) if reverse else (lambda x: x)
    got = forward(_checks._two_level(forward(a), forward(b), h0))
    assert np.all(np.abs(got - want) <= 1e-12 * (np.abs(want) + scale))


@pytest.mark.parametrize("reverse", [False, True])
def test_expected_for_long_input(rng, reverse):
    # long enough for the two-level path; time on dim 0 of a 2-D input, one state per column
    length = _checks.DIRECT_MAX_LENGTH + 4099
    a, b = rng.uniform(0.5, 1.0, (length, 2)), rng.uniform(-1, 1, (length, 2))
    h0 = np.array([0.25, -3.0])
    want = reference.scan(a, b, h0=h0, dim=0, reverse=reverse)
    got = _checks.expected(a, b, h0, dim=0, reverse=reverse)
    scale = _checks.running_scale(a, b, h0, dim=0, reverse=reverse)
    assert np.all(np.abs(got - want) <= 1e-12 * (np.abs(want) + scale))


def test_assert_close_catches_errors(rng):
    a, b = rng.uniform(-1, 1, 100), rng.uniform(-1, 1, 100)
    ref, scale = _checks.expected(a, b), _checks.running_scale(a, b)
    good = ref.astype(np.float32)
    _checks.assert_close(good, ref, scale)
    for position in (0, 57, 99):
        for damage in (np.nan, np.inf, 1e-2, -1.0):
            bad = good.copy()
            bad[position] = damage if not np.isfinite(damage) else bad[position] + damage
            with pytest.raises(AssertionError):
                _checks.assert_close(bad, ref, scale)
