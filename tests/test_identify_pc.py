"""Physically consistent identification on data too poor for ordinary least squares."""

from __future__ import annotations

import numpy as np
from identify_helpers import random_physical_parameters

import dynid
from dynid.identify import ModelOptions, base_parameters, base_regressor
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import full_parameters, parameter_slices
from dynid.identify.physical import PhysicallyConsistent, consistency_gap, link_lmi_margins
from dynid.identify.validation import rmsd
from dynid.robot.inertia import pseudo_inertia
from dynid.simulate import Measurement, default_friction, random_multisine, simulate_joint_data

SIGMA = (0.5, 0.5, 0.2, 0.05, 0.05, 0.02)
FS = 100.0


def _setup():
    cad = dynid.load_robot("er3a")  # the estimator's prior: the CAD model
    true = cad.with_parameters(random_physical_parameters(cad, 3))  # the robot that made the data
    options = ModelOptions()
    return cad, true, options, base_parameters(cad, options)


def _log(robot, options, seed, duration, fraction, noise):
    t = np.arange(0.0, duration, 1.0 / FS)
    q, dq, ddq = random_multisine(robot, seed=seed, fraction=fraction).sample(t)
    data, tau_true, _ = simulate_joint_data(robot, t, q, dq, ddq, options,
                                            measurement=Measurement(tau_noise=noise), seed=seed)
    return q, dq, ddq, data.tau, tau_true


def test_pc_is_physical_and_predicts_better_than_ols_on_poor_data():
    """3 s of a slow, small multi-sine (30 % of the limits): OLS is 63 % away from any physical
    model (consistency gap) and predicts a rich 20 s validation trajectory with RMSD up to
    15 N m; the PC estimate satisfies all six pseudo-inertia LMIs and predicts with at most
    0.5 N m (measured: OLS 14.9/7.1/3.1/0.81/0.60/0.39, PC 0.24/0.35/0.45/0.10/0.20/0.04 N m)."""
    cad, true, options, base = _setup()
    q, dq, ddq, tau, _ = _log(true, options, seed=4, duration=3.0, fraction=0.3, noise=SIGMA)
    y = base_regressor(cad, q, dq, ddq, options, base)
    ols = OrdinaryLeastSquares(names=base.names).fit(y, tau)
    pc = PhysicallyConsistent(robot=cad, options=options, base=base).fit(y, tau)
    assert consistency_gap(cad, options, base, ols.coef_) > 0.1  # OLS: no physical robot has these
    assert consistency_gap(cad, options, base, pc.coef_) < 1e-6
    for i in range(cad.n):  # every link's pseudo-inertia is positive semidefinite
        j = pseudo_inertia(pc.theta_[10 * i:10 * i + 10])
        assert np.linalg.eigvalsh(j)[0] >= -1e-8 * np.abs(j).max()
    sl = parameter_slices(cad, options)
    assert np.all(pc.theta_[sl["rotor_inertia"]] >= -1e-9)
    assert np.all(pc.theta_[sl["friction"]] >= -1e-9)
    np.testing.assert_allclose(base.K @ pc.theta_, pc.coef_)
    vq, vdq, vddq, _, v_true = _log(true, options, seed=9, duration=20.0, fraction=0.8, noise=0.0)
    yv = base_regressor(cad, vq, vdq, vddq, options, base)
    err_ols, err_pc = rmsd(v_true, ols.predict(yv)), rmsd(v_true, pc.predict(yv))
    assert np.all(err_pc < err_ols), (err_pc, err_ols)
    assert np.max(err_pc) < 1.0 and np.max(err_ols) > 5.0


def test_pc_equals_least_squares_when_the_least_squares_estimate_is_physical():
    """Rich noise-free data: the unconstrained optimum is physical, so the constraints are
    inactive and PC returns the true base parameters (to solver accuracy)."""
    cad, true, options, base = _setup()
    q, dq, ddq, tau, _ = _log(true, options, seed=1, duration=20.0, fraction=0.8, noise=0.0)
    pc = PhysicallyConsistent(robot=cad, options=options, base=base).fit(base_regressor(cad, q, dq, ddq, options, base), tau)
    beta = base.K @ full_parameters(true, options, default_friction(true, options))
    assert np.max(np.abs(pc.coef_ - beta) / np.maximum(np.abs(beta), 1e-3 * np.abs(beta).max())) < 1e-4
    assert np.all(link_lmi_margins(pc.theta_, cad.n) > -1e-9)


def test_prior_bounds_hold():
    cad, true, options, base = _setup()
    q, dq, ddq, tau, _ = _log(true, options, seed=4, duration=3.0, fraction=0.3, noise=SIGMA)
    pc = PhysicallyConsistent(robot=cad, options=options, base=base, bound=0.2).fit(base_regressor(cad, q, dq, ddq, options, base), tau)
    prior = cad.parameters()
    assert np.all(np.abs(pc.theta_[: prior.size] - prior) <= 0.2 * np.abs(prior) + 1e-6)


def _without_inertias(tmp_path) -> str:
    """er3a's MDH table (thesis Table 2.2) as a robot YAML with no ``links:``: no masses or inertias."""
    from dynid.robot.builtin.er3a import DEG, MDH

    rows = "\n".join(f"  - {{type: revolute, a: {a}, alpha: {alpha * DEG!r}, d: {d}, theta: {theta * DEG!r}}}"
                     for a, alpha, d, theta in MDH)
    path = tmp_path / "er3a_kinematics.yaml"
    path.write_text(f"name: er3a-kinematics\nconvention: mdh\njoints:\n{rows}\n")
    return str(path)


def test_pc_without_inertias_in_the_description_starts_from_least_squares(tmp_path):
    """A DH table without links gives pc no prior: its zeros pulled every parameter to zero
    (a fit 75-99 % off, no warning). Its prior is now the least-squares solution (physical.py,
    P1): on a realistic log of the real er3a (noise, ripple, 500-count encoders, dropped rows)
    pc predicts a held-out log as well as OLS, says where its prior came from, and refuses
    --prior-bound in one line."""
    import warnings

    from realistic_logs import realistic_log

    from dynid.data.preprocess import Preprocessing, prepare
    from dynid.errors import DynidError
    from dynid.identify.pipeline import fit_data

    true = dynid.load_robot("er3a")
    kinematics = dynid.load_robot(_without_inertias(tmp_path))
    assert not np.any(kinematics.parameters())
    options = ModelOptions()
    base = base_parameters(kinematics, options)
    prep = Preprocessing(lowpass_hz=4.0)
    train, _, _ = realistic_log(true, 100.0, 40.0, seed=1)
    check, _, check_true = realistic_log(true, 100.0, 20.0, seed=2)
    ready = prepare(check, prep)
    y = base_regressor(kinematics, ready.q, ready.dq, ready.ddq, options, base)
    errors, fits = {}, {}
    for name, est in (("ols", OrdinaryLeastSquares(names=base.names)),
                      ("pc", PhysicallyConsistent(robot=kinematics, options=options, base=base))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[name] = fit_data(kinematics, train, options, base, est, prep)
        errors[name] = np.linalg.norm(fits[name].predict(y) - ready.tau) / np.linalg.norm(ready.tau)
    assert errors["pc"] < 1.05 * errors["ols"], errors  # before: pc 91 % off, OLS 1.2 %
    pc = fits["pc"]
    assert any("no inertial parameters" in w for w in pc.warnings_), pc.warnings_
    assert pc.solver_status_ == "optimal"
    assert np.all(link_lmi_margins(pc.theta_, kinematics.n) > -1e-9)
    try:
        PhysicallyConsistent(robot=kinematics, options=options, base=base, bound=0.2)
    except DynidError as exc:
        assert "--prior-bound" in str(exc) and "no inertial parameters" in str(exc)
    else:
        raise AssertionError("--prior-bound without inertias was accepted")
