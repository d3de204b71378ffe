"""Identification recovers the simulated model: exactly without noise, to the noise floor with it,
and the reported standard deviations are the actual spread of the estimates."""

from __future__ import annotations

import numpy as np
import pytest
from identify_helpers import random_physical_parameters, relative_errors
from urdf_factory import write_robot

import dynid
from dynid.data.preprocess import Preprocessing, edge_mask, edge_samples, prepare
from dynid.identify import ModelOptions, base_parameters, base_regressor, full_parameters
from dynid.identify.model import parameter_slices
from dynid.identify.estimators import HuberIRLS, OrdinaryLeastSquares, WeightedLeastSquares
from dynid.identify.pipeline import fit_data, regressor_arrays
from dynid.identify.validation import rmsd
from dynid.simulate import Measurement, random_multisine, simulate_joint_data

FS = 200.0
SIGMA = np.array([0.5, 0.5, 0.2, 0.05, 0.05, 0.02])  # torque noise per joint [N m]


def _er3a():
    r = dynid.load_robot("er3a")
    return r.with_parameters(random_physical_parameters(r, 3))


def _simulate(robot, options, seed, duration, measurement=Measurement()):
    t = np.arange(0.0, duration, 1.0 / FS)
    q, dq, ddq = random_multisine(robot, seed=seed).sample(t)
    offsets = np.linspace(-0.3, 0.4, robot.n) if options.offset else None
    return simulate_joint_data(robot, t, q, dq, ddq, options, offsets=offsets, measurement=measurement, seed=seed)


@pytest.mark.parametrize("friction", ["coulomb-viscous", "polynomial"])
def test_noise_free_er3a_every_base_parameter_to_1e_6(friction):
    robot = _er3a()
    options = ModelOptions(friction=friction, offset=True)
    base = base_parameters(robot, options)
    data, _, theta = _simulate(robot, options, seed=1, duration=40.0)
    beta = base.K @ theta
    for est in (OrdinaryLeastSquares(names=base.names), WeightedLeastSquares(names=base.names)):
        fitted = fit_data(robot, data, options, base, est, Preprocessing(lowpass_hz=0))
        assert np.max(relative_errors(fitted.coef_, beta)) < 1e-6, est.name


def test_noise_free_urdf_robot_every_base_parameter_to_1e_6(tmp_path):
    urdf = dynid.load_robot(str(write_robot(tmp_path, "serial6", seed=4)))
    robot = urdf.with_parameters(random_physical_parameters(urdf, 5))
    options = ModelOptions()
    base = base_parameters(robot, options)
    friction = np.column_stack([np.linspace(0.5, 1.0, robot.n), np.linspace(0.2, 0.4, robot.n)])
    theta = full_parameters(robot, options, friction)
    theta[parameter_slices(robot, options)["rotor_inertia"]] = np.linspace(0.05, 0.1, robot.n)
    t = np.arange(0.0, 60.0, 1.0 / FS)
    q, dq, ddq = random_multisine(robot, seed=2).sample(t)
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, options, theta=theta)
    beta = base.K @ theta
    fitted = fit_data(robot, data, options, base, OrdinaryLeastSquares(names=base.names),
                      Preprocessing(lowpass_hz=0))
    assert np.max(relative_errors(fitted.coef_, beta)) < 1e-6


def test_noisy_quantized_data_predicts_a_new_trajectory_at_the_noise_floor():
    """Torque noise SIGMA and a 2^14-count motor encoder (q only; dq, ddq estimated after a
    20 Hz zero-phase low-pass). On another trajectory the prediction error against the
    measured torque is the noise itself (measured: RMSD / sigma = 0.98..1.07 per joint) and
    against the true torque a fraction of it (measured: 0.06..0.32 sigma)."""
    robot = _er3a()
    options = ModelOptions()
    base = base_parameters(robot, options)
    sensors = Measurement(tau_noise=tuple(SIGMA), encoder_counts=2**14)
    train, _, _ = _simulate(robot, options, seed=1, duration=40.0, measurement=sensors)
    est = fit_data(robot, train, options, base, OrdinaryLeastSquares(names=base.names), Preprocessing())
    test, tau_true, _ = _simulate(robot, options, seed=2, duration=20.0, measurement=sensors)
    ready = prepare(test, Preprocessing())
    inner = edge_mask(len(ready), edge_samples(Preprocessing(), FS))
    tau_hat = base_regressor(robot, ready.q, ready.dq, ready.ddq, options, base) @ est.coef_
    against_measured = rmsd(test.tau[inner], tau_hat[inner]) / SIGMA
    against_truth = rmsd(tau_true[inner], tau_hat[inner]) / SIGMA
    assert np.all((against_measured > 0.95) & (against_measured < 1.1)), against_measured
    assert np.all(against_truth < 0.4), against_truth


def test_reported_standard_deviations_match_the_spread_over_50_noise_seeds():
    """WLS on 50 torque-noise draws (per-joint sigma differing 25x) along one quantized trajectory:
    the spread of each base parameter over the draws equals its mean reported sigma within the
    sampling error of a 50-draw standard deviation (measured ratios 0.73..1.23, median 1.01;
    the limits 0.7..1.4 are about 3 standard errors of a 50-draw standard deviation)."""
    robot = _er3a()
    options = ModelOptions()
    base = base_parameters(robot, options)
    clean, tau_true, _ = _simulate(robot, options, seed=1, duration=20.0,
                                   measurement=Measurement(encoder_counts=2**14))
    ready = prepare(clean, Preprocessing())
    y, _, mask = regressor_arrays(robot, ready, options, base, Preprocessing())
    rng = np.random.default_rng(100)
    estimates, stds = [], []
    for _ in range(50):
        tau = tau_true + rng.normal(size=tau_true.shape) * SIGMA
        est = WeightedLeastSquares(names=base.names).fit(y, tau, mask)
        estimates.append(est.coef_)
        stds.append(est.std_)
    ratio = np.std(estimates, axis=0, ddof=1) / np.mean(stds, axis=0)
    assert np.all((ratio > 0.7) & (ratio < 1.4)), np.round(ratio, 2)
    assert 0.9 < np.median(ratio) < 1.1


def test_huber_irls_ignores_outliers_that_pull_ols():
    robot = _er3a()
    options = ModelOptions()
    base = base_parameters(robot, options)
    data, tau_true, theta = _simulate(robot, options, seed=1, duration=20.0,
                                      measurement=Measurement(tau_noise=tuple(SIGMA)))
    rng = np.random.default_rng(7)
    spikes = rng.random(data.tau.shape) < 0.02  # 2 % of the samples hit by 50 sigma spikes
    data.tau = data.tau + spikes * 50 * SIGMA * rng.choice([-1, 1], data.tau.shape)
    prep = Preprocessing(lowpass_hz=0)
    ols = fit_data(robot, data, options, base, OrdinaryLeastSquares(names=base.names), prep)
    irls = fit_data(robot, data, options, base, HuberIRLS(names=base.names), prep)
    y = base_regressor(robot, data.q, data.dq, data.ddq, options, base)
    assert np.all(rmsd(tau_true, irls.predict(y)) < 0.5 * rmsd(tau_true, ols.predict(y)))
