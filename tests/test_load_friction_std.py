"""The standard deviations of the load-dependent friction's fixed point (identify/load_friction.py, L3).

The fit (L2) is a fixed point: the load column |Y_I beta_I| sign(dq) is formed with the estimate
itself, so noise that moves beta_I moves the column too. The covariance of the last linear fit
treats the column as known; to first order the fixed point's is T C T^T with T = (I + G)^-1
(``Estimator.through_fixed_point``). Both are checked against the spread of the fixed point over
seeded noise draws of one motion."""

from __future__ import annotations

import numpy as np

import dynid
from dynid.identify.base import base_parameters
from dynid.identify.estimators import OrdinaryLeastSquares, WeightedLeastSquares
from dynid.identify.load_friction import (
    fit_load_torque, fixed_point_std, inertial_base_columns, load_slope, slope_gram,
)
from dynid.identify.model import (
    ModelOptions, full_parameters, identification_regressor, load_parameters, model_torques,
)
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.residual_correlation import residual_correlation
from dynid.identify.threads import single_blas_thread
from dynid.simulate import default_friction, random_multisine

from test_load_friction import base_rows

FL, NOISE, DRAWS = 0.3, 0.02, 600  # a geared joint losing 30 % of its torque; N m; noise draws


def _truth(robot):
    options = ModelOptions("load-dependent")
    friction = default_friction(robot, options)
    friction[:, 1] = FL
    theta = full_parameters(robot, options, friction)
    return ModelOptions("load-dependent", load_parameters=load_parameters(robot, options, theta)), theta


def _load_rows(yb, fl_index, column):
    """[Y_b | c_j at column b + j of joint j's rows]: the linear fit's regressor at a load column."""
    n, b = column.shape[1], yb.shape[2]
    a = np.concatenate([yb, np.zeros(yb.shape[:2] + (n,))], axis=2)
    a[:, np.arange(n), b + np.arange(n)] = column
    return a


def test_the_fixed_points_std_is_the_spread_over_noise_draws_where_the_last_fits_is_not():
    """planar2, 10 s at 50 Hz, Fl = 0.3, white noise: over 600 draws every parameter's spread is
    within 10 % of the fixed point's std (sampling error 3 %), while the last linear fit's std is
    more than 10 % off on some parameter."""
    robot = dynid.load_robot("planar2")
    truth, theta = _truth(robot)
    t = np.arange(0.0, 10.0, 0.02)
    q, dq, ddq = random_multisine(robot, seed=7, f0=0.1, harmonics=6).sample(t)
    tau0 = model_torques(robot, q, dq, ddq, theta, truth)
    base, yb, inertial = base_rows(robot, q, dq, ddq)
    linear = ModelOptions()
    b, n = base.rank, robot.n
    ones, everything = np.ones(n), np.ones(q.shape, dtype=bool)
    rng = np.random.default_rng(0)
    estimates, last, fixed = [], [], []
    with single_blas_thread():
        beta0 = OrdinaryLeastSquares().fit(yb, tau0).coef_
        for draw in range(DRAWS):
            tau = tau0 + NOISE * rng.normal(size=tau0.shape)
            beta, fl, _ = fit_load_torque(lambda: [(yb, np.sign(dq), tau, everything)], n, inertial, beta0, ones)
            estimates.append(np.concatenate([beta, fl]))
            if draw < 5:  # the reported std of a few draws (they hardly vary)
                load = yb[..., inertial] @ beta[inertial]
                a = _load_rows(yb, fl, np.abs(load) * np.sign(dq))
                est = OrdinaryLeastSquares().fit(a, tau)
                last.append(est.std_.copy())
                ne = NormalEquations(n, b + n)
                ne.add(a, tau)
                gram = slope_gram([(a, load_slope(linear, fl, dq, load), None)], n, b + n)
                assert fixed_point_std(est, ne, gram, np.concatenate([inertial, np.zeros(n, dtype=bool)]))
                fixed.append(est.std_)
    spread = np.std(estimates, axis=0, ddof=1)
    to_fixed, to_last = spread / np.mean(fixed, axis=0), spread / np.mean(last, axis=0)
    assert np.all(np.abs(to_fixed - 1.0) < 0.10), to_fixed
    assert np.max(np.abs(to_last - 1.0)) > 0.10, to_last


def test_identify_reports_the_fixed_points_std():
    """dynid.Identification (wls, the streamed path) reports the std of the fixed point: that of
    the linear fit at its stored load torque (with its residuals' correlation in time,
    identify/residual_correlation.py) propagated through (L3), not the fit's own."""
    robot = dynid.load_robot("planar2")
    truth, theta = _truth(robot)
    t = np.arange(0.0, 10.0, 0.02)
    q, dq, ddq = random_multisine(robot, seed=3, f0=0.1, harmonics=6).sample(t)
    tau = model_torques(robot, q, dq, ddq, theta, truth) + NOISE * np.random.default_rng(1).normal(size=q.shape)
    result = dynid.Identification(robot, estimator="wls", friction="load-dependent", lowpass=0.0,
                                  rest="off").fit(t, q, tau, dq, ddq)
    options = result.model
    base = base_parameters(robot, options)
    assert list(base.names) == list(result.names)
    a = identification_regressor(robot, q, dq, ddq, options)[..., base.independent]
    edge = (t.size - result.document["fit"]["rows_per_joint"][0]) // 2  # the rows the fit leaves out at each end
    keep = np.ones(q.shape, dtype=bool)
    keep[:edge], keep[t.size - edge:] = False, False
    est = WeightedLeastSquares().fit(a, tau, keep)
    np.testing.assert_allclose(est.coef_, result.values, rtol=1e-8, atol=1e-10)
    last = est.std_.copy()
    ne = NormalEquations(robot.n, base.rank)
    ne.add(a, tau, keep)
    # identify's std hold the residuals' correlation in time (identify/residual_correlation.py), then L3
    est.with_correlated_residuals(ne, residual_correlation([(a, tau - a @ est.coef_, keep)]).scores(ne, est.coef_))
    load = a[..., inertial_base_columns(robot, options, base)] @ est.coef_[inertial_base_columns(robot, options,
                                                                                                  base)]
    fl = np.array([result.values[result.names.index(f"Fl{j + 1}")] for j in range(robot.n)])
    gram = slope_gram([(a, load_slope(options, fl, dq, load), keep)], robot.n, base.rank)
    fixed_point_std(est, ne, gram, inertial_base_columns(robot, options, base))
    np.testing.assert_allclose(result.std, est.std_, rtol=1e-6)
    assert np.max(np.abs(result.std / last - 1.0)) > 0.01  # the fixed point's, not the last fit's
