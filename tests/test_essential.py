"""Essential parameters (identify/essential.py, Pham & Gautier 1991): backward elimination of
the least identifiable base parameter while the residual does not grow significantly."""

from __future__ import annotations

import json

import numpy as np

import dynid
from dynid.data.io import write_joint_data
from dynid.data.preprocess import Preprocessing, prepare
from dynid.identify.base import base_parameters
from dynid.identify.essential import essential_parameters
from dynid.identify.estimators import WeightedLeastSquares, joint_noise_variances
from dynid.identify.model import ModelOptions, full_parameters
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.pipeline import regressor_arrays
from dynid.simulate import default_friction

from cli_helpers import run_ok
from realistic_logs import realistic_log


def test_only_parameters_indistinguishable_from_zero_are_eliminated_and_the_fit_is_kept():
    robot = dynid.load_robot("er3a")
    options = ModelOptions()
    base = base_parameters(robot, options)
    beta_true = base.K @ full_parameters(robot, options, default_friction(robot, options))
    prep = Preprocessing(lowpass_hz=0.0)  # exact derivatives: torque noise only
    train, _, _ = realistic_log(robot, 200.0, 60.0, seed=51, noise=0.02, ripple=0.0, encoder_counts=0.0, drop=0.0)
    y, tau, mask = regressor_arrays(robot, prepare(train, prep), options, base, prep)
    ne = NormalEquations(robot.n, base.rank)
    ne.add(y, tau, mask)
    full = WeightedLeastSquares(names=base.names).fit_normal_equations(ne)
    ess = essential_parameters(ne, base.names, full.weights_)
    kept = {p["name"] for p in ess["parameters"]}
    removed = {s["removed"] for s in ess["eliminated"]}
    assert kept | removed == set(base.names) and not kept & removed and 0 < len(removed) < base.rank
    t = np.abs(beta_true) / full.std_  # how many standard deviations the true value is from zero
    for k, name in enumerate(base.names):
        if name in removed:
            assert t[k] < 4.0, (name, t[k])  # nothing the data see clearly is dropped
        if t[k] > 20.0:
            assert name in kept, (name, t[k])
    # the essential model predicts another trajectory as well as the full base set
    val, _, true = realistic_log(robot, 200.0, 20.0, seed=52, noise=0.02, ripple=0.0, encoder_counts=0.0, drop=0.0)
    yv, _, _ = regressor_arrays(robot, prepare(val, prep), options, base, prep)
    index = [base.names.index(p["name"]) for p in ess["parameters"]]
    values = np.array([p["value"] for p in ess["parameters"]])
    error = lambda pred: np.linalg.norm(true - pred) / np.linalg.norm(true)  # noqa: E731
    assert error(yv[..., index] @ values) <= 1.5 * error(yv @ full.coef_) + 1e-4


def test_identify_essential_lists_them_in_result_json(tmp_path):
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 200.0, 30.0, seed=53, noise=0.02, ripple=0.0, encoder_counts=0.0, drop=0.0)
    write_joint_data(tmp_path / "log.csv", data)
    out = run_ok("identify", "-r", "planar2", "--data", tmp_path / "log.csv", "--out", tmp_path / "r.json",
                 "--lowpass", "0", "--essential")
    ess = json.loads((tmp_path / "r.json").read_text())["essential"]
    assert "essential parameters" in out and ess["count"] == len(ess["parameters"]) <= ess["of"]
    assert "Pham & Gautier 1991" in ess["method"]
    assert ess["relative_error"]["essential"] >= ess["relative_error"]["base"] - 1e-12  # nested models


def test_parameters_a_still_joint_leaves_undetermined_are_held_not_ranked(tmp_path):
    """Joint 1 held within 0.02 rad: what only its motion excites is kept at the description's
    value in the fit and is no candidate for the essential set (a pseudo-inverse would call
    those null directions well determined)."""
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 200.0, 30.0, seed=54, noise=0.02, still=(0,), still_amplitude=0.01)
    write_joint_data(tmp_path / "log.csv", data)
    run_ok("identify", "-r", "planar2", "--data", tmp_path / "log.csv", "--out", tmp_path / "r.json",
           "--lowpass", "5", "--essential")
    result = json.loads((tmp_path / "r.json").read_text())
    held = result["undetermined"]["parameters"]
    ess = result["essential"]
    assert held and ess["held"] == held and ess["of"] == len(result["base_parameters"]) - len(held)
    assert not {p["name"] for p in ess["parameters"]} & set(held)
    assert not {s["removed"] for s in ess["eliminated"]} & set(held)


def test_with_filtered_noise_a_parameter_that_is_zero_is_eliminated_as_often_as_the_test_level_says():
    """Torque noise filtered at 5 Hz (planar2 at 250 Hz: ~25 samples per independent one) and two
    regressor columns whose true coefficient is 0: with the fit's measured residual correlation
    (E2) such a column is essential in few draws (the 5 % level, a little more from the measured
    covariance's own scatter: at most 20 % of 60 trials); the F-test (E1), which counts every
    sample as independent, calls it essential in most (its F ~25 times too large). The identity
    behind (E2): with white scores (L_j = sigma_j^2 A_j) the Wald statistic is (E1)'s (to 0.2 %: the
    per-joint degrees of freedom), step by step."""
    from test_residual_correlation import RATE, _noise, _rows

    from dynid.identify.residual_correlation import residual_correlation

    yb, tau0 = _rows()
    t = np.arange(len(tau0)) / RATE
    zero = np.zeros(yb.shape[:2] + (2,))
    zero[:, 0, 0], zero[:, 1, 1] = np.sin(2 * np.pi * 0.37 * t + 1.0), 0.01 * np.cos(2 * np.pi * 0.23 * t)
    y = np.concatenate([yb, zero], axis=2)
    names = [f"p{k}" for k in range(yb.shape[2])] + ["zero1", "zero2"]
    keep = np.ones(tau0.shape, dtype=bool)
    rng = np.random.default_rng(5)
    kept = {"E1": 0, "E2": 0}
    for draw in range(30):
        tau = tau0 + _noise(rng, tau0.shape, 5.0)
        ne = NormalEquations(*y.shape[1:])
        ne.add(y, tau)
        est = WeightedLeastSquares(names=names).fit_normal_equations(ne)
        measured = residual_correlation([(y, tau - y @ est.coef_, keep)])
        est.with_correlated_residuals(ne, measured.scores(ne, est.coef_))
        w = 1.0 / est.sigma2_
        for test, scores in (("E1", None), ("E2", est.score_covariance_)):
            ess = essential_parameters(ne, names, w, scores=scores)
            kept[test] += len({"zero1", "zero2"} & {p["name"] for p in ess["parameters"]})
            assert ess["uncertainty"]["covariance"] == ("white" if scores is None else "correlated")
        if draw == 0:  # white scores: (E2) is (E1), step by step
            white = joint_noise_variances(ne, est.coef_)[:, None, None] * ne.A
            plain, wald = (essential_parameters(ne, names, 1.0 / joint_noise_variances(ne, est.coef_), scores=s)
                           for s in (None, white))
            assert [s["removed"] for s in plain["eliminated"]] == [s["removed"] for s in wald["eliminated"]]
            np.testing.assert_allclose([s["F"] for s in wald["eliminated"]], [s["F"] for s in plain["eliminated"]],
                                       rtol=2e-3)
    assert kept["E2"] <= 12 and kept["E1"] >= 30, kept
