"""Preprocessing: derivatives, filters, resampling, decimation, segmentation, streaming."""

from __future__ import annotations

import numpy as np

import dynid
from dynid.data.columns import JointData
from dynid.data.io import write_joint_data
from dynid.data.preprocess import (
    Preprocessing, central_derivative, lowpass, parallel_decimate, prepare, resample, savgol_derivative, segments,
)
from dynid.data.stream import prepared_chunks

ROBOT = dynid.load_robot("planar2")


def test_central_differences_are_second_order_on_irregular_grids():
    rng = np.random.default_rng(0)
    errors = []
    for h in (1e-2, 5e-3):
        t = np.cumsum(rng.uniform(0.7, 1.3, int(2 / h)) * h)
        d = central_derivative(t, np.sin(3 * t))
        errors.append(np.max(np.abs(d - 3 * np.cos(3 * t))[1:-1]))
    assert errors[1] < errors[0] / 3.0  # halving the step divides the error by about 4


def test_savitzky_golay_derivative_is_exact_for_cubics():
    t = np.arange(0, 1, 0.01)
    x = (2 * t**3 - t + 1)[:, None]
    np.testing.assert_allclose(savgol_derivative(x, 0.01, 11, 3)[:, 0], 6 * t**2 - 1, atol=1e-9)


def test_zero_phase_lowpass_keeps_slow_signals_and_removes_fast_ones_without_delay():
    fs = 1000.0
    t = np.arange(0, 4, 1 / fs)
    slow, fast = np.sin(2 * np.pi * 1.0 * t), 0.5 * np.sin(2 * np.pi * 200.0 * t)
    out = lowpass((slow + fast)[:, None], fs, 20.0)[:, 0]
    inner = slice(200, -200)
    assert np.max(np.abs(out - slow)[inner]) < 1e-3  # no phase lag at 1 Hz, 200 Hz gone


def test_irregular_stamps_are_resampled_and_derivatives_follow():
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.uniform(0.8, 1.2, 2000)) * 1e-3
    q = np.column_stack([np.sin(2 * t), np.cos(t)])
    ready = prepare(JointData(t, q, tau=q.copy()), Preprocessing())
    assert np.allclose(np.diff(ready.t), np.diff(ready.t)[0])
    assert any("irregular" in n for n in ready.notes)
    inner = slice(200, -200)  # the filter's edge transient is 3 fs / fc = 150 samples
    np.testing.assert_allclose(ready.dq[inner, 0], 2 * np.cos(2 * ready.t[inner]), atol=1e-4)
    np.testing.assert_allclose(ready.ddq[inner, 1], -np.cos(ready.t[inner]), atol=1e-3)


def test_parallel_decimation_filters_regressor_and_torque_alike():
    fs = 1000.0
    t = np.arange(0, 2, 1 / fs)
    y = np.stack([np.column_stack([np.sin(t), np.cos(t)])] * 1, axis=1)  # (N, 1, 2)
    tau = y @ np.array([2.0, -1.0])
    yd, taud = parallel_decimate(y, tau, fs, 10)
    assert yd.shape == (200, 1, 2) and taud.shape == (200, 1)
    np.testing.assert_allclose(yd @ np.array([2.0, -1.0]), taud, atol=1e-12)  # linear model preserved


def test_segments_by_cycle_in_order():
    data = JointData(np.arange(6.0), np.zeros((6, 2)), cycle=np.array([3, 3, 1, 1, 2, 2]))
    parts = segments(data, "cycle")
    assert [label for label, _ in parts] == ["3", "1", "2"]
    np.testing.assert_array_equal(parts[1][1], [2, 3])


def test_streamed_preprocessing_equals_whole_file_preprocessing(tmp_path):
    fs = 500.0
    t = np.arange(0, 30, 1 / fs)
    rng = np.random.default_rng(2)
    q = np.column_stack([np.sin(0.7 * t), np.cos(1.3 * t)]) + rng.normal(size=(t.size, 2)) * 1e-4
    data = JointData(t, q, tau=q.copy())
    path = tmp_path / "log.csv"
    write_joint_data(path, data)
    prep = Preprocessing(lowpass_hz=10.0)
    whole = prepare(data, prep)
    parts = list(prepared_chunks(path, ROBOT, prep=prep, chunk_rows=3000))
    assert len(parts) > 3
    np.testing.assert_array_equal(np.concatenate([p.t for p in parts]), whole.t)
    np.testing.assert_allclose(np.concatenate([p.ddq for p in parts]), whole.ddq, atol=1e-8)


def test_resampling_keeps_labels_of_the_previous_sample():
    data = JointData(np.array([0.0, 0.011, 0.019, 0.031]), np.zeros((4, 2)), cycle=np.array([1, 1, 2, 2]))
    out = resample(data, 100.0)
    np.testing.assert_array_equal(out.cycle, [1, 1, 2, 2])


def test_a_joint_whose_position_never_changes_has_derivatives_exactly_zero():
    """A joint held still through a whole piece: dq = ddq = 0 exactly, whatever the resampling
    (time stamps of decimal text, irregular at rounding level) and the cutoff (40 Hz at 100 Hz
    leaves 1e-12 of rounding in a filtered constant, which column normalization would turn into
    an excited rotor inertia); the moving joint is prepared as without it."""
    from dynid.data.preprocess import Preprocessing, prepare

    t = np.array([float(f"{x}") for x in np.arange(300) * 0.01])
    q = np.column_stack([np.sin(2 * t), np.full(t.size, 0.2)])
    data = JointData(t, q, None, None, np.zeros_like(q))
    for prep in (Preprocessing(lowpass_hz=40.0), Preprocessing(lowpass_hz=10.0, decimate=2)):
        ready = prepare(data, prep)
        assert np.all(ready.dq[:, 1] == 0.0) and np.all(ready.ddq[:, 1] == 0.0) and np.all(ready.q[:, 1] == 0.2)
        alone = prepare(JointData(t, q[:, :1], None, None, np.zeros((t.size, 1))), prep)
        assert np.array_equal(alone.ddq[:, 0], ready.ddq[:, 0])
