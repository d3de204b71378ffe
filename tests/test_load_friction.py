"""Load-dependent Coulomb friction (model.py L1, identify/load_friction.py, --friction
load-dependent|auto): the Coulomb level of a geared joint grows with the torque it transmits,
(Fc + Fl |tau_load|) sign(dq) + Fv dq (Hamon, Gautier & Garrec, IROS 2010).

The logs with this friction come from dynid's own simulator (the torque of the identification
model, ``simulate_joint_data``): MuJoCo has no friction that grows with the transmitted torque
(its frictionloss is a constant per joint), so it cannot be the truth here."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.data.io import write_joint_data
from dynid.errors import ModelError
from dynid.identify.base import base_parameters
from dynid.identify.load_friction import fit_load_torque, inertial_base_columns, load_options
from dynid.identify.model import (
    ModelOptions, friction_columns, full_parameters, identification_regressor, load_parameters, load_torque,
    model_torques,
)
from dynid.identify.threads import single_blas_thread
from dynid.simulate import default_friction, random_multisine

from cli_helpers import identify_er3a_friction, predict_er3a_against_truth, run_ok
from realistic_logs import realistic_log

FL = 0.1  # default_friction's load coefficient: a tenth of the transmitted torque
RATE, SECONDS, F0, HARMONICS = 100.0, 90.0, 0.1, 6


def _load_model(robot, rotor_inertia: bool = True) -> tuple[ModelOptions, np.ndarray]:
    """(options, theta) of the description with default_friction's load-dependent friction, its
    load torque that of the description's own inertials."""
    options = ModelOptions("load-dependent", rotor_inertia=rotor_inertia)
    theta = full_parameters(robot, options, default_friction(robot, options))
    return ModelOptions("load-dependent", rotor_inertia=rotor_inertia,
                        load_parameters=load_parameters(robot, options, theta)), theta


def base_rows(robot, q, dq, ddq):
    """(base parameters, Y_b (N, n, b), inertial (b,)) of the Coulomb-viscous model at the samples:
    the linear fit's rows and the base columns of the load torque (``inertial_base_columns``)."""
    linear = ModelOptions()
    base = base_parameters(robot, linear)
    yb = identification_regressor(robot, q, dq, ddq, linear)[..., base.independent]
    return base, yb, inertial_base_columns(robot, linear, base)


@pytest.mark.parametrize("rotor_inertia", [True, False])
def test_the_friction_is_coulomb_growing_with_the_torque_of_the_links_and_rotors(rotor_inertia):
    """(L1) against its closed form: tau_load from the contract's inverse dynamics plus I_a ddq,
    the model's torque and the regressor's product alike."""
    robot = dynid.load_robot("er3a")
    options, theta = _load_model(robot, rotor_inertia)
    rng = np.random.default_rng(1)
    q, dq, ddq = (rng.normal(size=(64, robot.n)) for _ in range(3))
    load = dynid.inverse_dynamics(robot, q, dq, ddq) + (robot.rotor_inertias * ddq if rotor_inertia else 0.0)
    np.testing.assert_allclose(load_torque(robot, q, dq, ddq, options), load, rtol=1e-12, atol=1e-12)
    fc, fl, fv = default_friction(robot, options).T
    expected = load + (fc + fl * np.abs(load)) * np.sign(dq) + fv * dq
    np.testing.assert_allclose(model_torques(robot, q, dq, ddq, theta, options), expected, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(identification_regressor(robot, q, dq, ddq, options) @ theta, expected, rtol=1e-12,
                               atol=1e-10)


def test_the_model_refuses_to_guess_its_load_torque():
    robot = dynid.load_robot("er3a")
    options, _ = _load_model(robot)
    assert ModelOptions.from_dict(json.loads(json.dumps(options.to_dict()))) == options
    q = np.zeros((3, robot.n))
    with pytest.raises(ModelError, match="load parameters"):
        identification_regressor(robot, q, q, q, ModelOptions("load-dependent"))
    with pytest.raises(ModelError, match="load torque"):
        friction_columns(q, options)
    with pytest.raises(ModelError, match="only with friction 'load-dependent'"):
        ModelOptions("coulomb-viscous", load_parameters=options.load_parameters)


def test_noise_free_samples_give_the_truth_as_the_fixed_point_of_the_linear_fits():
    """Exact states and torques of a load-dependent truth: the fixed point of the linear fits
    (L2) is the truth (Fl to 1e-6, the load torque to 1e-6 of the RMS torque), from a start
    (the Coulomb-viscous fit) that is off by the load's share of the torque."""
    robot = dynid.load_robot("er3a")
    options, theta = _load_model(robot)
    t = np.arange(0.0, 20.0, 0.01)
    q, dq, ddq = random_multisine(robot, seed=7, f0=0.1, harmonics=6).sample(t)
    tau = model_torques(robot, q, dq, ddq, theta, options)
    base, yb, inertial = base_rows(robot, q, dq, ddq)
    linear = ModelOptions()
    keep = np.ones(dq.shape, dtype=bool)
    with single_blas_thread():  # small products: threads only contend on a busy machine
        beta0 = np.linalg.lstsq(yb.reshape(-1, base.rank), tau.reshape(-1), rcond=None)[0]
        beta, fl, info = fit_load_torque(lambda: [(yb, np.sign(dq), tau, keep)], robot.n, inertial, beta0,
                                         np.ones(robot.n))
    np.testing.assert_allclose(fl, FL, rtol=1e-6)
    rms = np.sqrt(np.mean(tau**2, axis=0))
    truth = load_torque(robot, q, dq, ddq, options)
    start = load_torque(robot, q, dq, ddq, load_options(robot, linear, base, beta0))
    fitted = load_torque(robot, q, dq, ddq, load_options(robot, linear, base, beta))
    assert np.all(np.sqrt(np.mean((fitted - truth) ** 2, axis=0)) < 1e-6 * rms)
    assert np.max(np.sqrt(np.mean((start - truth) ** 2, axis=0)) / rms) > 0.01  # the start was off
    assert 2 <= info["iterations"] <= 8


def test_no_fold_is_predicted_by_a_load_torque_fitted_to_it():
    """--friction auto's held-out score of the load-dependent model: each fold is predicted by
    the fixed point of the other folds alone (its load column included). So fold k's torques
    tau + d and tau - d give residual sums whose mean is that of tau plus the sum of d^2, exactly
    (the prediction does not move); a column from the whole log's fixed point moves with them."""
    from dynid.identify.load_friction import held_out_fixed_points

    robot = dynid.load_robot("planar2")
    options, theta = _load_model(robot)
    t = np.arange(0.0, 20.0, 0.02)
    q, dq, ddq = random_multisine(robot, seed=5, f0=0.1, harmonics=6).sample(t)
    rng = np.random.default_rng(3)
    tau = model_torques(robot, q, dq, ddq, theta, options) + 0.02 * rng.normal(size=q.shape)
    base, yb, inertial = base_rows(robot, q, dq, ddq)
    fold = np.repeat(np.arange(4), t.size // 4)
    fold[t.size // 4 - 5:t.size // 4 + 5] = -1  # a gap between folds 0 and 1 belongs to neither
    keep, weights = np.ones(q.shape, dtype=bool), np.array([1.0, 4.0])
    d = np.where((fold == 2)[:, None], 0.2 * np.abs(tau).mean(axis=0) * rng.normal(size=q.shape), 0.0)
    with single_blas_thread():
        beta0 = np.linalg.lstsq(yb.reshape(-1, base.rank), tau.reshape(-1), rcond=None)[0]
        rss = [held_out_fixed_points([(yb, dq, np.sign(dq), tau + s * d, keep, fold)], robot.n, 4, inertial, beta0,
                                     weights) for s in (-1.0, 0.0, 1.0)]
    expected = rss[1][2] + weights * np.sum(d**2, axis=0)
    np.testing.assert_allclose(0.5 * (rss[0][2] + rss[2][2]), expected, rtol=1e-9)
    assert not np.allclose(rss[0][0], rss[2][0], rtol=1e-6)  # fold 2 is in the others' fits


def test_identify_load_dependent_stores_a_model_predict_repeats(tmp_path):
    """End to end on noise-free arrays: Fl to 1e-5, result.json's model holds the load
    parameters, and the result's prediction is the true torque."""
    robot = dynid.load_robot("er3a")
    options, theta = _load_model(robot)
    t = np.arange(0.0, 30.0, 0.01)
    q, dq, ddq = random_multisine(robot, seed=7, f0=0.1, harmonics=6).sample(t)
    tau = model_torques(robot, q, dq, ddq, theta, options)
    result = dynid.Identification(robot, friction="load-dependent", lowpass=0.0, rest="off").fit(t, q, tau, dq, ddq)
    values = dict(zip(result.names, result.values))
    np.testing.assert_allclose([values[f"Fl{j + 1}"] for j in range(robot.n)], FL, rtol=1e-5)
    assert len(result.document["model"]["load_parameters"]) == 10 * robot.n + robot.n
    result.save(tmp_path / "r.json")
    again = dynid.load_result(tmp_path / "r.json", robot)
    predicted = again.predict(t, q, dq, ddq)
    assert np.max(np.abs(predicted - tau)) < 1e-5 * np.max(np.abs(tau))
    # MuJoCo's frictionloss is a constant per joint: the export writes Fc and Fv and says what it leaves out
    from dynid.export import mjcf_text, motor_terms
    from dynid.export.identified import IdentifiedModel

    friction = default_friction(robot, options)
    model = IdentifiedModel(robot, fitted_options := result.model, theta, friction, robot.rotor_inertias, None, "pc",
                            "test")
    text, notes = mjcf_text(model)
    assert fitted_options.friction == "load-dependent"
    assert any("load-dependent friction" in note and "Fl" in note for note in notes), notes
    assert "load-dependent friction" in text
    _, damping, coulomb, _ = motor_terms(model)
    np.testing.assert_array_equal(coulomb, friction[:, 0])  # Fc as frictionloss, Fv as damping
    np.testing.assert_array_equal(damping, friction[:, 2])


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Training and test logs of the er3a (1 % torque noise and 0.5 % ripple of the RMS torque,
    2^16-count encoders, 1 % dropped rows), with load-dependent friction and with Coulomb-viscous."""
    root = tmp_path_factory.mktemp("load_friction")
    robot = dynid.load_robot("er3a")
    load, theta = _load_model(robot)
    plain = ModelOptions()
    for name, options, th in (("load", load, theta), ("plain", plain, None)):
        for part, seed in (("train", 3), ("test", 4)):
            data, _, _ = realistic_log(robot, RATE, SECONDS, seed=seed, noise=0.01, encoder_counts=2**16,
                                       options=options, theta=th, f0=F0, harmonics=HARMONICS)
            write_joint_data(root / f"{name}_{part}.csv", data)  # t, q, tau: quantized positions, no dq
    return root


def test_friction_auto_takes_the_load_dependent_model_where_it_is_the_truth_and_recovers_fl(logs):
    """--friction auto (default cutoff) on a log whose Coulomb friction grows with the load: the
    load-dependent model, Fl of every joint within 3 of its standard deviations of the truth (and
    within 10 % on the gravity-loaded joints 2 and 3), and on a held-out log its torque is closer
    to the true torque than the Coulomb-viscous model's on every joint where the load friction
    stands above the noise."""
    robot = dynid.load_robot("er3a")
    chosen = identify_er3a_friction(logs, "load", "auto")
    assert chosen["friction"] == "load-dependent", chosen["friction_selection"]["scores"]
    scores = chosen["friction_selection"]["scores"]
    assert scores["load-dependent"] < 0.95 * scores["coulomb-viscous"], scores
    entries = {p["name"]: p for p in chosen["base_parameters"]}
    fl = np.array([entries[f"Fl{j + 1}"]["value"] for j in range(6)])
    std = np.array([entries[f"Fl{j + 1}"]["std"] for j in range(6)])
    assert np.all(np.abs(fl - FL) <= 3.0 * std), ((fl - FL) / std, fl, std)
    assert np.all(np.abs(fl[1:3] / FL - 1.0) < 0.10), fl
    plain = identify_er3a_friction(logs, "load", "coulomb-viscous")
    truth_options, theta = _load_model(robot)
    errors = {}
    for name, fit in (("load", chosen), ("plain", plain)):
        predicted, tau, _ = predict_er3a_against_truth(logs, f"fit_{name}", fit, "load_test", 4, theta,
                                                       truth_options, F0, HARMONICS)  # seed 4: the test log's
        errors[name] = np.sqrt(np.nanmean((predicted - tau) ** 2, axis=0))
    assert np.all(errors["load"][:3] < 0.5 * errors["plain"][:3]), errors


def test_friction_auto_keeps_coulomb_viscous_where_the_friction_does_not_grow_with_the_load(logs):
    chosen = identify_er3a_friction(logs, "plain", "auto")
    assert chosen["friction"] == "coulomb-viscous", chosen["friction_selection"]["scores"]
    assert "load_parameters" not in chosen["model"]
    fit = chosen["friction_selection"]["load_fit"]
    assert np.all(np.abs(fit["Fl"]) < 0.02), fit  # the fixed point finds no load friction where there is none


def test_simulate_writes_a_load_dependent_log_that_identify_reads_back(tmp_path):
    """dynid simulate --friction load-dependent: the load torque of the description's own inertials,
    Fl = 0.1 (default_friction); identify --friction load-dependent on it finds Fl = 0.1."""
    run_ok("simulate", "-r", "planar2", "--friction", "load-dependent", "--duration", "20", "--out", tmp_path / "s.csv")
    run_ok("identify", "-r", "planar2", "--data", tmp_path / "s.csv", "--friction", "load-dependent", "--lowpass", "0",
           "--rest", "off", "--out", tmp_path / "r.json")
    result = json.loads((tmp_path / "r.json").read_text())
    values = {p["name"]: p["value"] for p in result["base_parameters"]}
    np.testing.assert_allclose([values["Fl1"], values["Fl2"]], FL, rtol=1e-3)
