"""Streaming identification (chunks, per-joint Gram matrices) gives the in-memory answer."""

from __future__ import annotations

import numpy as np

import dynid
from dynid.data.io import write_joint_data
from dynid.data.preprocess import Preprocessing
from dynid.identify import ModelOptions, base_parameters
from dynid.identify.estimators import OrdinaryLeastSquares, WeightedLeastSquares
from dynid.identify.pipeline import accumulate_file, fit_data
from dynid.simulate import Measurement, random_multisine, simulate_joint_data


def test_streamed_fit_equals_in_memory_fit(tmp_path):
    robot = dynid.load_robot("er3a")
    options = ModelOptions("polynomial", True, True)
    base = base_parameters(robot, options)
    t = np.arange(0.0, 30.0, 1e-3)
    q, dq, ddq = random_multisine(robot, seed=5).sample(t)
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, options, offsets=np.full(robot.n, 0.1),
                                     measurement=Measurement(tau_noise=0.1, encoder_counts=2**16), seed=5)
    path = tmp_path / "log.parquet"
    write_joint_data(path, data)
    prep = Preprocessing(min_velocity=0.01)
    acc = accumulate_file(robot, path, options, base, prep=prep, chunk_rows=7000)
    for make in (OrdinaryLeastSquares, WeightedLeastSquares):
        streamed = make(names=base.names).fit_normal_equations(acc.ne)
        whole = fit_data(robot, data, options, base, make(names=base.names), prep)
        np.testing.assert_allclose(streamed.coef_, whole.coef_, rtol=1e-6, atol=1e-9 * np.abs(whole.coef_).max())
        np.testing.assert_allclose(streamed.std_, whole.std_, rtol=1e-5)


def test_decimated_streaming_fit_agrees_with_the_full_rate_fit(tmp_path):
    """Parallel filtering and decimation by 5 (1 kHz -> 200 Hz) changes the estimate by less
    than its standard deviation: the decimated fit uses the same information, filtered."""
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    base = base_parameters(robot, options)
    t = np.arange(0.0, 40.0, 1e-3)
    q, dq, ddq = random_multisine(robot, seed=6).sample(t)
    data, _, theta = simulate_joint_data(robot, t, q, dq, ddq, options,
                                         measurement=Measurement(tau_noise=0.05, encoder_counts=2**16), seed=6)
    path = tmp_path / "log.parquet"
    write_joint_data(path, data)
    full = OrdinaryLeastSquares(names=base.names).fit_normal_equations(
        accumulate_file(robot, path, options, base, chunk_rows=9000).ne)
    acc = accumulate_file(robot, path, options, base, prep=Preprocessing(decimate=5), chunk_rows=9000)
    dec = OrdinaryLeastSquares(names=base.names).fit_normal_equations(acc.ne)
    assert abs(acc.fs - 200.0) < 1e-6
    assert np.all(np.abs(dec.coef_ - full.coef_) < 2 * full.std_ + 1e-9)
    assert np.all(np.abs(dec.coef_ - base.K @ theta) < 4 * dec.std_ + 1e-9)
