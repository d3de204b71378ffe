"""Load-dependent friction that drifts from cold to warm (``--friction load-dependent
--friction-drift time``): the thesis' time model (eq. 5.4, ``identify.drift`` D1) on every
coefficient of (Fc + Fl |tau_load|) sign(dq) + Fv dq (model.py L1), the load torque the fixed
point (L2) of the whole model (``identify.load_friction.refit_to_fixed_point``).

The truth: dynid's own simulator (MuJoCo has no friction growing with the transmitted torque),
the er3a with Fl = 0.1 and its Coulomb and viscous coefficients 1.8 / 1.4 times their warm value
at the cold start, decaying with two time constants (the thesis' Table 5.6 shape, scaled down to
a short log: 100 s and 10 s); Fl itself does not drift, which the fit must find."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.data.io import read_table, write_joint_data
from dynid.identify.model import ModelOptions, full_parameters, load_parameters, parameter_slices
from dynid.simulate import Measurement, default_friction, random_multisine, simulate_joint_data
from dynid.simulate.drift import FrictionDrift

from cli_helpers import failing, run_ok

RATE, SECONDS, NOISE = 25.0, 200.0, 0.01  # Hz, s, share of each joint's RMS rigid-body torque
T1, T2 = 100.0, 10.0  # s
R1, R2 = np.array([0.8, 0.0, 0.8]), np.array([0.4, 0.0, 0.4])  # cold excess of [Fc, Fl, Fv] on e^(-t/t1), e^(-t/t2)


def _truth(robot):
    options = ModelOptions("load-dependent")
    theta = full_parameters(robot, options, default_friction(robot, options))
    options = ModelOptions("load-dependent", load_parameters=load_parameters(robot, options, theta))
    return options, theta, FrictionDrift(np.tile(R1, (robot.n, 1)), T1, np.tile(R2, (robot.n, 1)), T2)


def _log(robot, seed: int, seconds: float):
    """(t, q, dq, ddq, measured tau, true tau) of a random multi-sine from a cold start."""
    options, theta, drift = _truth(robot)
    t = np.arange(0.0, seconds, 1.0 / RATE)
    q, dq, ddq = random_multisine(robot, seed=seed, f0=0.1, harmonics=6).sample(t)
    rms = np.sqrt(np.mean(dynid.inverse_dynamics(robot, q, dq, ddq) ** 2, axis=0))
    data, tau_true, _ = simulate_joint_data(robot, t, q, dq, ddq, options, theta=theta, seed=seed, drift=drift,
                                            measurement=Measurement(tuple(NOISE * rms)))
    return t, q, dq, ddq, data.tau, tau_true


@pytest.fixture(scope="module")
def fits():
    """The combined model and each part alone, fitted to one training log by weighted least squares
    (each joint's rows over its noise: the ordinary fit's pooled variance would understate the std
    of the gravity-loaded joints); a held-out log."""
    robot = dynid.load_robot("er3a")
    t, q, dq, ddq, tau, _ = _log(robot, 1, SECONDS)
    out = {}
    for name, friction, drift in (("both", "load-dependent", "time"), ("load", "load-dependent", None),
                                  ("drift", "coulomb-viscous", "time")):
        idn = dynid.Identification(robot, estimator="wls", friction=friction, friction_drift=drift, lowpass=0.0,
                                   rest="off")
        out[name] = idn.fit(t, q, tau, dq, ddq)
    return robot, out, _log(robot, 2, SECONDS / 2)


def _relative_error(result, held) -> float:
    t, q, dq, ddq, tau, _ = held
    return result.validate(t, q, tau, dq, ddq, since_cold=0.0)["relative_error"]


def test_the_combined_model_beats_each_part_on_a_held_out_cold_start(fits):
    """Held out (another trajectory, from a cold start): the combined model's error is the
    noise's; the static load-dependent model misses the warm-up, the drifting Coulomb-viscous one
    the load friction."""
    _, results, held = fits
    error = {name: _relative_error(result, held) for name, result in results.items()}
    t, q, dq, ddq, tau, tau_true = held
    noise = np.linalg.norm(tau - tau_true) / np.linalg.norm(tau)
    assert error["both"] < 1.1 * noise, (error, noise)
    assert error["both"] < 0.6 * error["load"] and error["both"] < 0.6 * error["drift"], error
    assert results["both"].document["friction_drift"]["load_fit"]["change"] < 1e-6


def test_the_combined_model_recovers_the_truth_within_its_std(fits):
    """Fl, the warm Fc and Fv and their cold excess d1 = r1 f (the slow term) within 3 standard
    deviations on every joint, Fl's own drift (none) included; the time constants within 30 %."""
    robot, results, _ = fits
    options, theta, _ = _truth(robot)
    n, result = robot.n, results["both"]
    warm = theta[parameter_slices(robot, options)["friction"]].reshape(n, 3)
    values, std = dict(zip(result.names, result.values)), dict(zip(result.names, result.std))
    drift = {p["name"]: (p["value"], p["std"]) for p in result.document["friction_drift"]["parameters"]}
    z = {}
    for j in range(n):
        for k, f in enumerate(("Fc", "Fl", "Fv")):
            z[f"{f}{j + 1}"] = (values[f"{f}{j + 1}"] - warm[j, k]) / std[f"{f}{j + 1}"]
            value, s = drift[f"{f}{j + 1}_e1"]
            z[f"{f}{j + 1}_e1"] = (value - R1[k] * warm[j, k]) / s
    assert all(abs(v) < 3.0 for v in z.values()), " ".join(f"{k} {v:.2f}" for k, v in z.items())
    assert np.allclose(result.document["friction_drift"]["time_constants"], [[T1, T2]] * n, rtol=0.3)


def test_the_drift_std_are_those_of_the_correlated_residuals_through_the_fixed_point(fits):
    """The std of the drifting model (base parameters and drift coefficients) are the sandwich of
    its rows [Y_b | drift columns] with the residuals' correlation (identify.residual_correlation,
    result "uncertainty"), then carried through the load torque's fixed point (L3): the drift
    coefficients' std are the diagonal of the covariance result.json gives for prediction bands."""
    _, results, _ = fits
    document = results["both"].document
    assert document["uncertainty"]["covariance"] == "correlated", document["uncertainty"]
    drift = document["friction_drift"]
    cov = np.array(drift["covariance"])
    b = len(document["base_parameters"])
    std = np.array([np.nan if p["std"] is None else p["std"] for p in drift["parameters"]])
    shown = np.isfinite(std)
    assert shown.sum() > 0 and np.allclose(std[shown], np.sqrt(np.diag(cov)[b:][shown]), rtol=1e-9)
    assert np.allclose(results["both"].std, np.sqrt(np.diag(cov)[:b]), rtol=1e-9, equal_nan=True)


def test_predict_and_validate_read_the_combined_result(fits, tmp_path):
    """Through the CLI: predict (at the log's operating time) equals the library's prediction,
    validate says the held-out error; export refuses the least-squares result in one line."""
    robot, results, held = fits
    t, q, dq, ddq, tau, _ = held
    result = results["both"]
    result.save(tmp_path / "r.json")
    data = dynid.data.columns.JointData(t, q, dq, ddq, tau, source="held-out")
    write_joint_data(tmp_path / "test.csv", data)
    run_ok("predict", "-r", "er3a", "-p", tmp_path / "r.json", "-d", tmp_path / "test.csv", "-o",
           tmp_path / "pred.csv", "--since-cold", 0)
    table, _ = read_table(tmp_path / "pred.csv")
    predicted = np.column_stack([table[f"tau{j + 1}"].to_numpy() for j in range(robot.n)])
    expected = result.predict(t, q, dq, ddq, since_cold=0.0)
    np.testing.assert_allclose(predicted, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    printed = run_ok("validate", "-r", "er3a", "-p", tmp_path / "r.json", "-d", tmp_path / "test.csv",
                     "--since-cold", 0)
    line = next(x for x in printed.splitlines() if x.startswith("relative error"))
    assert float(line.rsplit("=", 1)[1].strip().rstrip("%")) / 100 == pytest.approx(_relative_error(result, held),
                                                                                     rel=1e-3)
    assert "pc" in failing("export", "-r", "er3a", "-p", tmp_path / "r.json", "--mjcf", tmp_path / "m.xml")
    stored = json.loads((tmp_path / "r.json").read_text())
    assert stored["model"]["friction"] == "load-dependent" and len(stored["model"]["load_parameters"]) == 66


def test_stribeck_friction_drifts_too():
    """``--friction stribeck --friction-drift time``: the Stribeck velocities are chosen on the log
    by the static model (``identify.stribeck``), then every coefficient [Fc, Fs, Fv] drifts (D1).
    planar2 whose Stribeck friction (v_s = 0.1 rad/s) warms up as above: v_s within 5 %, the warm
    and cold-excess coefficients within 3 std, and a held-out cold start predicted at the noise,
    where the static Stribeck model misses by twice as much."""
    robot = dynid.load_robot("planar2")
    options = ModelOptions("stribeck", stribeck_velocity=(0.1, 0.1))
    theta = full_parameters(robot, options, default_friction(robot, options))
    drift = FrictionDrift(0.8, T1, 0.4, T2)

    def log(seed, seconds):
        t = np.arange(0.0, seconds, 1.0 / 50.0)
        q, dq, ddq = random_multisine(robot, seed=seed, f0=0.1, harmonics=6).sample(t)
        rms = np.sqrt(np.mean(dynid.inverse_dynamics(robot, q, dq, ddq) ** 2, axis=0))
        data, tau_true, _ = simulate_joint_data(robot, t, q, dq, ddq, options, theta=theta, seed=seed, drift=drift,
                                                measurement=Measurement(tuple(NOISE * rms)))
        return t, q, data.tau, dq, ddq, tau_true

    train, held = log(1, SECONDS), log(2, SECONDS / 2)
    error = {}
    for name, mode in (("both", "time"), ("static", None)):
        result = dynid.Identification(robot, estimator="wls", friction="stribeck", friction_drift=mode, lowpass=0.0,
                                      rest="off").fit(*train[:5])
        error[name] = result.validate(*held[:5], since_cold=0.0)["relative_error"]
        if mode:
            fitted = result
    noise = np.linalg.norm(held[2] - held[5]) / np.linalg.norm(held[2])
    assert error["both"] < 1.1 * noise and error["static"] > 2.0 * error["both"], (error, noise)
    assert fitted.document["model"]["friction"] == "stribeck"
    np.testing.assert_allclose(fitted.document["model"]["stribeck_velocity"], 0.1, rtol=0.05)
    warm = theta[parameter_slices(robot, options)["friction"]].reshape(robot.n, 3)
    values, std = dict(zip(fitted.names, fitted.values)), dict(zip(fitted.names, fitted.std))
    drifting = {p["name"]: (p["value"], p["std"]) for p in fitted.document["friction_drift"]["parameters"]}
    z = {}
    for j in range(robot.n):
        for k, f in enumerate(("Fc", "Fs", "Fv")):
            z[f"{f}{j + 1}"] = (values[f"{f}{j + 1}"] - warm[j, k]) / std[f"{f}{j + 1}"]
            value, s = drifting[f"{f}{j + 1}_e1"]
            z[f"{f}{j + 1}_e1"] = (value - 0.8 * warm[j, k]) / s
    assert all(abs(v) < 3.0 for v in z.values()), " ".join(f"{k} {v:.2f}" for k, v in z.items())
