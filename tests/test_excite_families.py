"""Excitation families and motion segments: analytic derivatives against finite differences,
the thesis' equations, and the a-priori bounds of eq. 4.5-4.12 against dense sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dynid
from dynid.excite.builtin import TABLE_4_1_A, TABLE_4_1_B, TABLE_4_1_Q0, thesis_table_4_1
from dynid.excite.harmonic import equal_amplitude_limits
from dynid.excite.motion import Cycloid, Oscillation, Quintic, stroke_profile
from dynid.excite.periodic import PeriodicTrajectory


def central(f, t, h):
    return (f(t + h) - f(t - h)) / (2 * h)


def assert_derivatives(evaluate, t, h=1e-5, rtol=1e-6):
    """dq == d q/dt and ddq == d dq/dt by central differences (O(h^2) error)."""
    q, dq, ddq = evaluate(t)
    dq_fd = central(lambda s: evaluate(s)[0], t, h)
    ddq_fd = central(lambda s: evaluate(s)[1], t, h)
    scale_v = max(1.0, np.abs(dq).max())
    scale_a = max(1.0, np.abs(ddq).max())
    np.testing.assert_allclose(dq_fd, dq, atol=rtol * scale_v * 10, rtol=0)
    np.testing.assert_allclose(ddq_fd, ddq, atol=rtol * scale_a * 10, rtol=0)


def random_periodic(family, seed, n=3, harmonics=(1, 2, 3, 4, 5)):
    rng = np.random.default_rng(seed)
    p = 2 * len(harmonics) if family == "fourier" else len(harmonics)
    return PeriodicTrajectory(family, 2 * math.pi * 0.1, harmonics, rng.normal(size=n), rng.normal(size=(p, n)))


@pytest.mark.parametrize("family", ["fourier", "harmonic"])
def test_periodic_derivatives_match_finite_differences(family):
    traj = random_periodic(family, seed=1)
    t = np.random.default_rng(2).uniform(0, 20, 200)
    assert_derivatives(traj.evaluate, t)
    # third and fourth derivatives (used by the guaranteed bounds) likewise
    for order in (2, 3):
        fd = central(lambda s: traj.derivative(s, order), t, 1e-5)
        np.testing.assert_allclose(fd, traj.derivative(t, order + 1), atol=1e-6 * np.abs(fd).max() * 10)


@pytest.mark.parametrize("family", ["fourier", "harmonic"])
def test_periodic_is_periodic_and_bounds_hold(family):
    traj = random_periodic(family, seed=3)
    t = np.linspace(0, traj.period, 20001)
    for order in range(3):
        values = traj.derivative(t, order)
        np.testing.assert_allclose(values[0], values[-1], atol=1e-9)
        centered = values - (traj.q0 if order == 0 else 0.0)
        # eq. 4.5-4.10: the triangle-inequality bound is never exceeded
        assert np.all(np.abs(centered).max(axis=0) <= traj.derivative_bound(order) + 1e-12)


def test_fourier_matches_thesis_equations_4_19_to_4_21():
    """Eq. 4.19-4.21 written out term by term (with the factor l of the derivative in 4.21)."""
    traj = thesis_table_4_1()
    a, b, q0 = np.array(TABLE_4_1_A), np.array(TABLE_4_1_B), np.array(TABLE_4_1_Q0)
    wf = 2 * math.pi * 0.1
    t = np.linspace(0, 10, 37)[:, None, None]
    l = np.arange(1, 6)[None, :, None]
    q = q0 + np.sum(a / (wf * l) * np.sin(wf * l * t) - b / (wf * l) * np.cos(wf * l * t), axis=1)
    dq = np.sum(a * np.cos(wf * l * t) + b * np.sin(wf * l * t), axis=1)
    ddq = wf * np.sum(l * (-a * np.sin(wf * l * t) + b * np.cos(wf * l * t)), axis=1)
    got = traj.evaluate(t.ravel())
    for x, y in zip(got, (q, dq, ddq)):
        np.testing.assert_allclose(x, y, atol=1e-12)
    assert traj.period == pytest.approx(10.0)


def test_harmonic_equal_amplitude_bounds_respect_limits():
    """Eq. 4.11-4.12 (general form): a = q_max/N and w_f from the speed/acceleration bounds
    give a trajectory (eq. 4.13, multipliers 1, 2, 4) within all limits at dense instants."""
    q_max, dq_max, ddq_max = 1.2, 2.0, 3.0
    harmonics = (1, 2, 4)
    a, wf = equal_amplitude_limits(q_max, dq_max, ddq_max, harmonics)
    traj = PeriodicTrajectory("harmonic", wf, harmonics, [0.0], np.full((3, 1), a))
    t = np.linspace(0, traj.period, 200001)
    q, dq, ddq = traj.evaluate(t)
    assert np.abs(q).max() <= q_max + 1e-12
    assert np.abs(dq).max() <= dq_max + 1e-12
    assert np.abs(ddq).max() <= ddq_max + 1e-12
    # and one of the bounds is tight for the derivative sums (so w_f is the largest allowed)
    assert max(wf * a * 7 / dq_max, wf**2 * a * 21 / ddq_max) == pytest.approx(1.0)


def test_cycloid_equations_and_derivatives():
    seg = Cycloid(np.array([0.3, -1.0]), np.array([1.5, -0.8]), 2.0)
    t = np.linspace(0.01, 1.99, 101)
    assert_derivatives(seg.evaluate, t)
    q0, dq0, ddq0 = seg.start_state
    q1, dq1, ddq1 = seg.end_state
    np.testing.assert_allclose(q1 - q0, [1.5, -0.8], atol=1e-14)  # moves by delta
    np.testing.assert_allclose(np.r_[dq0, dq1, ddq0, ddq1], 0.0, atol=1e-14)  # rest to rest
    q, dq, ddq = seg.evaluate(np.linspace(0, 2, 20001))
    np.testing.assert_allclose(np.abs(dq).max(axis=0), 2 * np.abs([1.5, -0.8]) / 2.0, rtol=1e-6)  # eq. 4.23
    np.testing.assert_allclose(np.abs(ddq).max(axis=0), 2 * np.pi * np.abs([1.5, -0.8]) / 4.0, rtol=1e-6)


def test_quintic_blend_matches_both_states():
    rng = np.random.default_rng(5)
    start = tuple(rng.normal(size=3) for _ in range(3))
    end = tuple(rng.normal(size=3) for _ in range(3))
    seg = Quintic(start, end, 1.7)
    for got, want in zip(seg.evaluate(np.array([0.0, 1.7])), zip(start, end)):
        np.testing.assert_allclose(got, np.array(want), atol=1e-12)
    assert_derivatives(seg.evaluate, np.linspace(0.01, 1.69, 57))


def test_stroke_and_oscillation_derivatives_and_speeds():
    tau = np.linspace(1e-3, 2.6, 777)
    pos, vel, acc = stroke_profile(tau, 1.2, 0.8, 0.5)
    assert_derivatives(lambda s: tuple(np.atleast_2d(x).T for x in stroke_profile(s, 1.2, 0.8, 0.5)), tau)
    assert pos[-1] == pytest.approx(1.2)
    cruise = (tau > 0.5) & (tau < 1.5)
    np.testing.assert_allclose(vel[cruise], 0.8)
    osc = Oscillation(np.zeros(2), np.array([1.2, 0.0]), np.array([0.8, 1.0]), np.array([0.5, 0.0]),
                      np.array([4, 0]), 8.0)
    t = np.linspace(0.01, 7.99, 1601)
    assert_derivatives(osc.evaluate, t[np.abs((t % 2.0)) > 1e-3])
    q, dq, _ = osc.evaluate(np.linspace(0, 8, 8001))
    assert np.abs(dq[:, 0]).max() == pytest.approx(0.8)
    np.testing.assert_allclose(q[-1], 0.0, atol=1e-12)  # an even number of strokes returns
    assert np.all(q[:, 1] == 0.0)


def test_table_4_1_respects_table_2_1_at_dense_instants():
    """A fact about the thesis' data, checked on 100 000 samples, independent of our bounds."""
    robot = dynid.load_robot("er3a")
    traj = thesis_table_4_1()
    q, dq, ddq = traj.evaluate(np.linspace(0, traj.period, 100_000))
    assert np.all(q >= robot.limit_array("q_min")) and np.all(q <= robot.limit_array("q_max"))
    assert np.all(np.abs(dq) <= robot.limit_array("dq_max"))
    assert np.all(np.abs(ddq) <= robot.limit_array("ddq_max"))
