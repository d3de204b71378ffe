"""Estimators own their state; NormalEquations has its algebra (issue 23 items 2-3).

Facts: the normal equations of two sets of samples are the sum of theirs, a fold left out is a
subtraction, holding parameters at known values is the reduction tau - W_U v = W_D beta_D; the
normalized spectrum's condition number is the 2-norm condition number of the column-normalized
regressor; an estimator told to hold parameters fits the others exactly as a fit of the reduced
problem, and its rank is that of what it fitted: a log with a joint held still is not reported
rank deficient."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.identify.estimators import HuberIRLS, OrdinaryLeastSquares, WeightedLeastSquares
from dynid.identify.normal_equations import NormalEquations

from realistic_logs import realistic_log


def _problem(seed=0, rows=400, n=3, b=7):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(rows, n, b)) * rng.uniform(0.1, 10.0, size=b)
    beta = rng.normal(size=b)
    tau = y @ beta + 0.01 * rng.normal(size=(rows, n))
    return y, tau, beta


def _equations(y, tau, mask=None):
    ne = NormalEquations(y.shape[1], y.shape[2])
    ne.add(y, tau, mask)
    return ne


def _close(a: NormalEquations, b: NormalEquations, keys=("A", "B", "C", "tau_sum")):
    for key in keys:
        np.testing.assert_allclose(getattr(a, key), getattr(b, key), rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(a.rows, b.rows)


def test_sums_and_folds_are_additions_and_subtractions_of_samples():
    y, tau, _ = _problem()
    whole, first, rest = _equations(y, tau), _equations(y[:150], tau[:150]), _equations(y[150:], tau[150:])
    _close(first + rest, whole)
    _close(whole - first, rest)
    copy = whole.copy()
    copy += first
    _close(whole, _equations(y, tau))  # the copy is independent
    _close(copy - first, whole)


def test_reduction_by_fixed_parameters_is_the_reduced_problem():
    y, tau, beta = _problem(1)
    fixed, values = np.array([1, 4]), np.array([0.3, -2.0])
    free = np.setdiff1d(np.arange(y.shape[2]), fixed)
    direct = _equations(np.ascontiguousarray(y[..., free]), tau - y[..., fixed] @ values)
    _close(_equations(y, tau).reduce(fixed, values), direct, ("A", "B", "C"))  # the torque sums stay the log's


def test_scaling_joint_rows_is_the_equations_of_the_scaled_samples():
    y, tau, _ = _problem(2)
    scale = np.array([0.5, 3.0, 1e-3])
    _close(_equations(y, tau).scaled(scale), _equations(y * scale[None, :, None], tau * scale))


def test_normalized_spectrum_gives_the_condition_number_of_the_normalized_regressor():
    y, tau, _ = _problem(2)
    w = y.reshape(-1, y.shape[2])
    wn = w / np.linalg.norm(w, axis=0)
    sp = _equations(y, tau).normalized_spectrum()
    assert sp.cond == pytest.approx(np.linalg.cond(wn), rel=1e-9)
    assert sp.rank == y.shape[2]
    w[:, 3] = 2.0 * w[:, 2]  # a column the data cannot tell from another
    assert _equations(w.reshape(y.shape), tau).normalized_spectrum().rank == y.shape[2] - 1


@pytest.mark.parametrize("kind", [OrdinaryLeastSquares, WeightedLeastSquares, HuberIRLS])
def test_fixed_parameters_are_an_estimator_option(kind):
    y, tau, beta = _problem(3)
    b = y.shape[2]
    fixed, prior = np.array([0, 5]), beta + 0.1
    free = np.setdiff1d(np.arange(b), fixed)
    names = [f"p{k}" for k in range(b)]
    held = kind(names, fixed=fixed, prior=prior).fit(y, tau)
    reduced = kind(names=[names[k] for k in free]).fit(np.ascontiguousarray(y[..., free]),
                                                       tau - y[..., fixed] @ prior[fixed])
    np.testing.assert_array_equal(held.coef_[fixed], prior[fixed])
    np.testing.assert_allclose(held.coef_[free], reduced.coef_, rtol=1e-12)
    np.testing.assert_allclose(held.std_[free], reduced.std_, rtol=1e-9)
    assert np.all(np.isnan(held.std_[fixed])) and np.all(held.cov_[fixed] == 0)
    assert held.rank_ == free.size and not held.diagnostics()["rank_deficient"]
    assert held.diagnostics()["fixed"] == 2 and held.diagnostics()["base_parameters"] == b
    if kind is not HuberIRLS:  # the same from the normal equations
        streamed = kind(names, fixed=fixed, prior=prior).fit_normal_equations(_equations(y, tau))
        np.testing.assert_allclose(streamed.coef_, held.coef_, rtol=1e-12)


def test_a_log_with_a_joint_held_still_is_not_reported_rank_deficient(tmp_path):
    from dynid.data.io import write_joint_data

    from cli_helpers import run_ok

    robot = dynid.load_robot("er3a")
    data, _, _ = realistic_log(robot, 100.0, 30.0, seed=5, still=(0,))
    result = dynid.Identification(robot, lowpass=5.0).fit(data.t, data.q, data.tau)
    d = result.diagnostics
    assert result.undetermined and d["fixed"] == len(result.undetermined)
    assert d["rank"] == d["base_parameters"] - d["fixed"] and not d["rank_deficient"]
    write_joint_data(tmp_path / "still.parquet", data)
    out = run_ok("identify", "--robot", "er3a", "--data", tmp_path / "still.parquet", "--lowpass", "5",
                 "--out", tmp_path / "r.json")
    assert "RANK DEFICIENT" not in out and f"rank {d['rank']} of {d['rank']} fitted" in out
