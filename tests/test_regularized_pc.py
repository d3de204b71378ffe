"""Standard parameters from a prior: ``--estimator pc --regularize auto`` on logs MuJoCo simulated
(quantized encoders, torque noise, MuJoCo's own friction constraint and armature) for an er3a
whose true masses, centres of mass, principal moments and rotor inertias are off the
description's by up to 40 %. The regularized estimate predicts held-out torques as well as
least squares, every link stays physical, the base parameters the data determine are closer to
the truth than the description's, and every link is at least as close to the truth as the
description in the geometry of rigid bodies (entropic divergence), where plain pc is not."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import failing, run_ok
from mujoco_logs import er3a_off_its_description, perturbed

import dynid
from dynid.identify import ModelOptions, base_parameters
from dynid.identify.model import full_parameters
from dynid.identify.regularized import entropic_divergence, link_divergences, prior_pseudo_inertia
from dynid.robot.inertia import consistency_problems, pseudo_inertia
from dynid.simulate import random_multisine

SEED = 11


@pytest.fixture(scope="module")
def fits(tmp_path_factory):
    d = tmp_path_factory.mktemp("regularized")
    cad, truth = er3a_off_its_description(d, SEED)
    results, validation = {}, {}
    estimators = (("ols", []), ("pc", ["--estimator", "pc"]), ("reg", ["--estimator", "pc", "--regularize", "auto"]))
    for name, args in estimators:
        out = run_ok("identify", "-r", "er3a", "--data", d / "train.csv", "--out", d / f"{name}.json", *args)
        if name == "reg":
            assert "chosen by 5-fold blocked cross-validation" in out
        run_ok("validate", "-r", "er3a", "--params", d / f"{name}.json", "--data", d / "validation.csv",
               "--json", d / f"v_{name}.json")
        results[name] = json.loads((d / f"{name}.json").read_text())
        validation[name] = json.loads((d / f"v_{name}.json").read_text())[str(d / "validation.csv")]
    return cad, truth, results, validation


def _theta(result) -> np.ndarray:
    return np.array([p["value"] for p in result["standard_parameters"]])


def test_regularized_pc_predicts_held_out_torques_as_well_as_least_squares(fits):
    _, _, results, validation = fits
    ols, reg = validation["ols"], validation["reg"]
    assert reg["relative_error"] <= 1.05 * ols["relative_error"]
    assert np.all(np.array(reg["relative_rmsd"]) <= 1.05 * np.array(ols["relative_rmsd"]))
    selection = results["reg"]["regularization"]
    assert selection["weight"] in selection["weights"] and len(selection["scores"]) == len(selection["weights"])
    best = min(s for s in selection["scores"] if s is not None)
    assert selection["scores"][selection["weights"].index(selection["weight"])] <= best * 1.001


def test_regularized_pc_is_physical_and_keeps_every_links_standard_inertials(fits):
    cad, _, results, _ = fits
    reg = results["reg"]
    theta = _theta(reg)
    assert [link["name"] for link in reg["links"]] == [link.name for link in cad.links]
    for i, link in enumerate(reg["links"]):
        t = theta[10 * i:10 * i + 10]
        assert not consistency_problems(t) and np.linalg.eigvalsh(pseudo_inertia(t))[0] >= -1e-12
        assert link["mass"] == pytest.approx(t[0]) and link["first_moment"] == pytest.approx(t[1:4].tolist())
        assert link["inertia"] == pytest.approx(t[4:10].tolist())
        np.testing.assert_allclose(np.array(link["com"]) * link["mass"], t[1:4], atol=1e-12)
    divergence = reg["diagnostics"]["regularization"]["divergence"]
    assert divergence == pytest.approx(link_divergences(theta, full_parameters(cad, ModelOptions()), cad.n))


def test_where_the_data_determine_them_the_parameters_are_closer_to_the_truth_than_the_prior(fits):
    """Base parameters with OLS %sigma < 5 whose prior is off by more than 3 sigma: each is closer
    to the truth than the prior's value."""
    cad, truth, results, _ = fits
    base = base_parameters(cad, ModelOptions())
    ols = results["ols"]["base_parameters"]
    std = np.array([p["std"] for p in ols])
    rel = np.array([p["relative_std"] for p in ols])
    beta_true, beta_prior = base.K @ truth, base.K @ full_parameters(cad, ModelOptions())
    determined = (rel < 5) & (np.abs(beta_prior - beta_true) > 3 * std)
    assert determined.sum() >= 12
    beta = base.K @ _theta(results["reg"])
    assert np.all(np.abs(beta - beta_true)[determined] < np.abs(beta_prior - beta_true)[determined])


def test_every_link_is_as_close_to_the_truth_as_the_prior_in_the_entropic_divergence(fits):
    """D(J_i || J_i,true) of the regularized links is at most the description's for every link
    (link 1, of which the data see only Izz, stays where the prior puts it) and below it for
    links 2-6; plain pc, which lets the undetermined directions go anywhere physical, is farther
    in sum."""
    cad, truth, results, _ = fits
    prior = full_parameters(cad, ModelOptions())
    d_prior = np.array(link_divergences(prior, truth, cad.n))
    d_reg = np.array(link_divergences(_theta(results["reg"]), truth, cad.n))
    d_pc = np.array(link_divergences(_theta(results["pc"]), truth, cad.n))
    assert np.all(d_reg <= d_prior * (1 + 1e-3) + 1e-6), (d_reg, d_prior)
    assert np.all(d_reg[1:] < d_prior[1:]), (d_reg, d_prior)  # links 2-6: the data see more than one direction
    assert d_reg.sum() < d_pc.sum()


def test_divergence_is_the_log_det_bregman_divergence():
    """D(J || Jbar) = tr(Jbar^-1 J) - log det(Jbar^-1 J) - 4: zero at Jbar, positive elsewhere,
    invariant to a change of body frame and length unit (J -> A J A^T); a point-mass prior is
    thickened to a positive definite one."""
    rng = np.random.default_rng(0)
    cad = dynid.load_robot("er3a")
    j0, j1 = (pseudo_inertia(cad.links[k].inertial) for k in (1, 2))
    assert entropic_divergence(j0, j0) == pytest.approx(0.0, abs=1e-12) and entropic_divergence(j1, j0) > 0
    a = np.eye(4)
    a[:3, :3] = 1e3 * np.linalg.qr(rng.normal(size=(3, 3)))[0]  # millimetres, rotated axes
    a[:3, 3] = rng.normal(size=3)
    assert entropic_divergence(a @ j1 @ a.T, a @ j0 @ a.T) == pytest.approx(entropic_divergence(j1, j0), rel=1e-8)
    point = np.array([2.0, 0.6, 0, 0, 0, 0.18, 0, 0.18, 0, 0.18])  # 2 kg at (0.3, 0, 0): J of rank 1
    assert np.linalg.eigvalsh(pseudo_inertia(point))[0] < 1e-12 < np.linalg.eigvalsh(prior_pseudo_inertia(point))[0]


def test_regularize_needs_pc_and_a_weight(tmp_path):
    log = tmp_path / "log.csv"
    run_ok("simulate", "-r", "planar2", "--out", log, "--duration", "4")
    assert "--regularize needs --estimator pc" in failing("identify", "-r", "planar2", "--data", log, "--out",
                                                          tmp_path / "r.json", "--regularize", "auto")
    assert "--regularize" in failing("identify", "-r", "planar2", "--data", log, "--out", tmp_path / "r.json",
                                     "--estimator", "pc", "--regularize", "lots")
    assert "--regularize -1" in failing("identify", "-r", "planar2", "--data", log, "--out", tmp_path / "r.json",
                                        "--estimator", "pc", "--regularize", "-1")
    bare = tmp_path / "bare.yaml"  # a DH table without links: no inertias to pull toward
    bare.write_text("name: bare\nconvention: mdh\njoints:\n  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.3}\n"
                    "  - {type: revolute, a: 0.4, alpha: 0.0, d: 0.0}\n")
    run_ok("simulate", "-r", "planar2", "--out", tmp_path / "b.csv", "--duration", "4")
    assert "no inertial parameters" in failing("identify", "-r", bare, "--data", tmp_path / "b.csv", "--out",
                                               tmp_path / "b.json", "--estimator", "pc", "--regularize", "5")


def test_parameters_a_joint_held_still_cannot_determine_stay_at_the_description(tmp_path):
    """er3a with joint 1 held still (as the real iiwa's joints 1-2): the base parameters its
    motion would excite keep the description's values exactly (std null, said so), as least
    squares keeps them; plain pc leaves them to its constraints."""
    from dynid.data.io import write_joint_data
    from dynid.simulate import Measurement, simulate_joint_data

    robot = dynid.load_robot("er3a")
    t = np.arange(0.0, 12.0, 0.01)
    q, dq, ddq = random_multisine(robot, seed=5, fraction=0.6).sample(t)
    q[:, 0], dq[:, 0], ddq[:, 0] = 0.3, 0.0, 0.0
    data, _, _ = simulate_joint_data(perturbed(robot, 5), t, q, dq, ddq, ModelOptions(),
                                     measurement=Measurement(tau_noise=0.01), seed=5)
    write_joint_data(tmp_path / "still.csv", data)
    out = run_ok("identify", "-r", "er3a", "--data", tmp_path / "still.csv", "--out", tmp_path / "reg.json",
                 "--estimator", "pc", "--regularize", "10", "--lowpass", "8")
    assert "keeps the robot description's value" in " ".join(out.split())  # however the console wraps
    result = json.loads((tmp_path / "reg.json").read_text())
    base = base_parameters(robot, ModelOptions())
    prior = base.K @ full_parameters(robot, ModelOptions())
    held = [k for k, p in enumerate(result["base_parameters"]) if p.get("determined") is False]
    assert held and all(result["base_parameters"][k]["std"] is None for k in held)
    values = np.array([p["value"] for p in result["base_parameters"]])
    np.testing.assert_allclose(values[held], prior[held], rtol=1e-6, atol=1e-9 * np.abs(prior).max())
    np.testing.assert_allclose(base.K @ _theta(result), values, rtol=1e-9, atol=1e-12)  # the links say the same
