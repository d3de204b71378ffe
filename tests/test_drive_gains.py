"""dynid drives gains: current-to-torque gains from logs without and with a known load
(drives/gains.py, Gautier & Briot 2014)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.data.io import write_columns
from dynid.data.preprocess import Preprocessing
from dynid.drives.calibrate import calibrate_drives
from dynid.drives.gains import KnownLoad
from dynid.identify.model import ModelOptions, full_parameters
from dynid.identify.payload import flange_body
from dynid.robot.inertia import from_mass_com_inertia
from dynid.simulate import default_friction

from cli_helpers import failing, failing_after_warnings, run_ok
from realistic_logs import realistic_log

MASS, COM = 2.0, (0.012, -0.018, 0.065)  # kg, m in the flange body's frame


def _load() -> np.ndarray:
    rot, _ = np.linalg.qr(np.random.default_rng(7).normal(size=(3, 3)))
    return from_mass_com_inertia(MASS, COM, rot @ np.diag([0.004, 0.006, 0.003]) @ rot.T)


def _true_gains(robot) -> np.ndarray:
    """Gear ratio x torque constant, each off by up to 20 %: what the drives really have."""
    nominal = robot.gear_ratios * np.array([j.drive.torque_constant for j in robot.joints])
    return nominal * np.random.default_rng(5).uniform(0.8, 1.2, robot.n)


def write_current_logs(root, robot, gains, noise: float, rate: float = 100.0, seconds: float = 60.0,
                       seed: int = 41) -> None:
    """unloaded.csv and loaded.csv: realistic logs (torque noise ``noise`` and ripple 0.5 % of the
    RMS torque, 2^14-count motor encoders, 1 % of the rows dropped) logging i = tau / K."""
    options = ModelOptions()
    theta = full_parameters(robot, options, default_friction(robot, options))
    loaded = theta.copy()
    body = flange_body(robot)
    loaded[10 * body:10 * body + 10] += _load()
    for name, th, s in (("unloaded", theta, seed), ("loaded", loaded, seed + 1)):
        data, _, _ = realistic_log(robot, rate, seconds, seed=s, encoder_counts=2**14, f0=0.1, harmonics=8,
                                   theta=th, noise=noise)
        columns = {"t": data.t, **{f"q{j + 1}": data.q[:, j] for j in range(robot.n)},
                   **{f"i{j + 1}": data.tau[:, j] / gains[j] for j in range(robot.n)}}
        write_columns(root / f"{name}.csv", columns)


@pytest.fixture(scope="module")
def current_logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("drive_gains")
    robot = dynid.load_robot("er3a")
    gains = _true_gains(robot)
    write_current_logs(root, robot, gains, noise=0.005)
    return root, gains


def test_gains_within_one_percent_from_realistic_current_logs_and_they_give_the_payload_its_mass(current_logs):
    """0.5 % current noise, ripple, quantized encoders, dropped rows, unknown gains: every gain
    within 1 % (the figure is ~0.02 %) with a standard deviation of the error's order; identify
    and payload identify take the file as --current-gain and find the load's mass with it."""
    root, true = current_logs
    run_ok("drives", "gains", "-r", "er3a", "--unloaded", root / "unloaded.csv", "--loaded", root / "loaded.csv",
           "--mass", MASS, "--com", ",".join(map(str, COM)), "--out", root / "gains.json")
    out = json.loads((root / "gains.json").read_text())
    gains, std = np.array(out["gains"]), np.array(out["std"])
    error = gains / true - 1.0
    assert np.all(np.abs(error) < 0.01), error
    assert np.all(np.abs(gains - true) < 6.0 * std), (gains - true) / std  # an honest order, not 45x small
    assert out["method"] == "tls" and "lowpass_selection" in out
    run_ok("identify", "-r", "er3a", "--data", root / "unloaded.csv", "--current-gain", root / "gains.json",
           "--out", root / "robot.json", "--lowpass", "4")
    result = json.loads((root / "robot.json").read_text())
    assert result["column_mapping"]["current_gain"] == out["current_gain"]  # the numbers, not the path
    run_ok("payload", "identify", "-r", "er3a", "--params", root / "robot.json", "--data", root / "loaded.csv",
           "--out", root / "payload.json")
    payload = json.loads((root / "payload.json").read_text())
    assert abs(payload["mass"]["value"] - MASS) < 0.01 * MASS, payload["mass"]
    # the gains' uncertainty came along through result.json: the payload's covariance holds it (P4)
    assert result["column_mapping"]["current_gain_relative_std"] == out["relative_std"]
    assert payload["uncertainty"]["gain_std"] == max(out["relative_std"]) > 0
    assert payload["uncertainty"]["gain_std_source"] == "drive gains file"


def test_noise_free_logs_give_the_gains_exactly_by_every_method(tmp_path):
    """Exact motion (dq, ddq logged), noise-free currents, no filter: (G1-G2) hold exactly, so
    ordinary, total and physically consistent least squares all return the true gains."""
    robot = dynid.load_robot("planar2")
    true = np.array([31.0, 17.5])
    options = ModelOptions()
    theta = full_parameters(robot, options, default_friction(robot, options))
    phi = from_mass_com_inertia(0.8, [0.05, 0.02, 0.0], np.diag([0.001, 0.002, 0.003]))
    loaded = theta.copy()
    loaded[10:20] += phi
    from dynid.simulate import random_multisine
    from dynid.identify.model import model_torques

    for name, th, seed in (("u", theta, 1), ("l", loaded, 2)):
        t = np.arange(0.0, 20.0, 0.005)
        q, dq, ddq = random_multisine(robot, seed=seed, f0=0.2, harmonics=5).sample(t)
        tau = model_torques(robot, q, dq, ddq, th, options)
        write_columns(tmp_path / f"{name}.csv", {"t": t, **{f"q{j + 1}": q[:, j] for j in range(2)},
                                                 **{f"dq{j + 1}": dq[:, j] for j in range(2)},
                                                 **{f"ddq{j + 1}": ddq[:, j] for j in range(2)},
                                                 **{f"i{j + 1}": tau[:, j] / true[j] for j in range(2)}})
    for method in ("ols", "tls", "pc"):
        fit = calibrate_drives(robot, [tmp_path / "u.csv"], [tmp_path / "l.csv"], KnownLoad(0.8), options,
                               Preprocessing(lowpass_hz=0.0), method=method)
        np.testing.assert_allclose(fit.gains()[0], true, rtol=1e-6, err_msg=method)


def test_total_least_squares_is_not_biased_by_the_current_noise_that_biases_ordinary(tmp_path):
    """5 % current noise: the currents in the regressor bias ordinary least squares toward
    smaller gains (errors in variables, several %); the structured total least squares keeps
    within 0.5 %."""
    robot = dynid.load_robot("er3a")
    true = _true_gains(robot)
    write_current_logs(tmp_path, robot, true, noise=0.05, seconds=60.0, seed=51)
    errors = {}
    for method in ("ols", "tls"):
        fit = calibrate_drives(robot, [tmp_path / "unloaded.csv"], [tmp_path / "loaded.csv"], KnownLoad(MASS, COM),
                               prep=Preprocessing(lowpass_hz=4.0), method=method)
        errors[method] = fit.gains()[0] / true - 1.0
    assert np.max(np.abs(errors["tls"])) < 0.005, errors
    assert np.min(errors["ols"]) < -0.01, errors  # biased low, beyond what tls leaves


def test_a_current_that_was_not_logged_is_one_error_naming_its_joint(current_logs, tmp_path):
    from dynid.data.io import read_table

    root, _ = current_logs
    for name in ("unloaded", "loaded"):
        table, _ = read_table(root / f"{name}.csv")
        columns = {c: table[c].to_numpy() for c in table.column_names}
        columns["i4"] = np.zeros_like(columns["i4"])
        write_columns(tmp_path / f"{name}.csv", columns)
    warned, line = failing_after_warnings("drives", "gains", "-r", "er3a", "--unloaded", tmp_path / "unloaded.csv",
                                          "--loaded", tmp_path / "loaded.csv", "--mass", MASS, "--out",
                                          tmp_path / "g.json", "--lowpass", "4")
    assert "drive gain of joint(s) 4:" in line and "log the joint's current" in line, line
    assert len(warned) == 2 and all("joint(s) [4] is the same number" in w for w in warned), warned
    assert not (tmp_path / "g.json").exists()


def test_a_log_of_torques_is_refused_with_the_fix(current_logs, tmp_path):
    from dynid.data.io import read_table

    root, _ = current_logs

    table, _ = read_table(root / "loaded.csv")
    columns = {c.replace("i", "tau") if c.startswith("i") else c: table[c].to_numpy() for c in table.column_names}
    write_columns(tmp_path / "loaded.csv", columns)
    line = failing("drives", "gains", "-r", "er3a", "--unloaded", root / "unloaded.csv", "--loaded",
                   tmp_path / "loaded.csv", "--mass", MASS, "--out", tmp_path / "g.json")
    assert "loaded.csv" in line and "motor currents" in line, line


def test_an_undetermined_unknown_is_null_with_its_reason_in_strict_json(tmp_path):
    """A planar arm and a load of known mass only: its mz and out-of-plane inertia act on no
    equation, so the logs do not determine them. The file was written with bare NaN (not JSON:
    jq, JavaScript and strict parsers refuse it); they are null with the reason beside them, and
    --current-gain reads the file back."""
    from dynid.data.columns import drive_gains_text
    from dynid.simulate import random_multisine
    from dynid.identify.model import model_torques

    robot = dynid.load_robot("planar2")
    true = np.array([31.0, 17.5])
    options = ModelOptions()
    theta = full_parameters(robot, options, default_friction(robot, options))
    loaded = theta.copy()
    loaded[10:20] += from_mass_com_inertia(0.8, [0.05, 0.02, 0.0], np.diag([0.001, 0.002, 0.003]))
    for name, th, seed in (("u", theta, 1), ("l", loaded, 2)):
        t = np.arange(0.0, 10.0, 0.005)
        q, dq, ddq = random_multisine(robot, seed=seed, f0=0.2, harmonics=5).sample(t)
        tau = model_torques(robot, q, dq, ddq, th, options)
        write_columns(tmp_path / f"{name}.csv", {"t": t, **{f"q{j + 1}": q[:, j] for j in range(2)},
                                                 **{f"dq{j + 1}": dq[:, j] for j in range(2)},
                                                 **{f"ddq{j + 1}": ddq[:, j] for j in range(2)},
                                                 **{f"i{j + 1}": tau[:, j] / true[j] for j in range(2)}})
    path = tmp_path / "gains.json"
    run_ok("drives", "gains", "-r", "planar2", "--unloaded", tmp_path / "u.csv", "--loaded", tmp_path / "l.csv",
           "--mass", "0.8", "--lowpass", "0", "--out", path)

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    out = json.loads(path.read_text(), parse_constant=refuse)  # strict: NaN, Infinity are refused
    free = [p for p in out["load_unknown"] + out["base_parameters"] if p["value"] is None]
    assert any(p["name"] == "load_mz" for p in free), out["load_unknown"]
    assert all(p["std"] is None and "not determined" in p["note"] for p in free)
    assert all(isinstance(p["value"], float) for p in out["load_unknown"] if p not in free)
    np.testing.assert_allclose(out["gains"], true, rtol=1e-6)
    assert drive_gains_text(str(path))[0] == out["current_gain"]


def _exact_current_logs(root, robot, true, seconds: float, rests: bool = False) -> None:
    """u.csv and l.csv (unloaded, 0.8 kg loaded) of exact motion (q, dq, ddq logged) and
    noise-free currents; with ``rests`` each joint stands still a third of the time, static
    friction holding there a torque within +-1 N m of the model's, one level per rest."""
    from dynid.identify.model import model_torques
    from dynid.identify.rest_levels import runs
    from dynid.simulate import random_multisine
    from dynid.simulate.rest import rest_schedule, resting_motion

    options = ModelOptions()
    theta = full_parameters(robot, options, default_friction(robot, options))
    loaded = theta.copy()
    loaded[10:20] += from_mass_com_inertia(0.8, [0.05, 0.02, 0.0], np.diag([0.001, 0.002, 0.003]))
    rng = np.random.default_rng(9)
    for name, th, seed in (("u", theta, 1), ("l", loaded, 2)):
        t = np.arange(0.0, seconds, 0.005)
        motion = random_multisine(robot, seed=seed, f0=0.2, harmonics=5)
        if rests:
            schedule = rest_schedule(robot.n, seconds, 0.3, seed=seed, together=False)
            q, dq, ddq = resting_motion(motion, schedule, t)
        else:
            q, dq, ddq = motion.sample(t)
        tau = model_torques(robot, q, dq, ddq, th, options)
        if rests:
            for j in range(robot.n):
                for a, b in runs(schedule.at_rest(t)[:, j]):
                    tau[a:b, j] += rng.uniform(-1.0, 1.0)
        write_columns(root / f"{name}.csv", {"t": t, **{f"q{j + 1}": q[:, j] for j in range(2)},
                                             **{f"dq{j + 1}": dq[:, j] for j in range(2)},
                                             **{f"ddq{j + 1}": ddq[:, j] for j in range(2)},
                                             **{f"i{j + 1}": tau[:, j] / true[j] for j in range(2)}})


def test_the_calibration_detects_rests_and_gives_each_its_level_as_identify_does(tmp_path):
    """Rests held by static friction (a torque the model cannot know, one level per rest): the
    calibration measures the rest bands as identify does (--rest auto, the default; stored in
    "rest_detection") and eliminates each rest's level, so noise-free logs give the true gains
    (to 0.012 %: the detected rests end a little inside the simulated ones, whose last samples are
    fitted as measured); fitted as measured (--rest off), the held torques move them by 3 %."""
    robot = dynid.load_robot("planar2")
    true = np.array([31.0, 17.5])
    _exact_current_logs(tmp_path, robot, true, 20.0, rests=True)
    common = ["drives", "gains", "-r", "planar2", "--unloaded", tmp_path / "u.csv", "--loaded", tmp_path / "l.csv",
              "--mass", "0.8", "--lowpass", "0"]
    run_ok(*common, "--out", tmp_path / "auto.json")
    run_ok(*common, "--out", tmp_path / "off.json", "--rest", "off")
    auto, off = (json.loads((tmp_path / f"{x}.json").read_text()) for x in ("auto", "off"))
    assert "rest_detection" in auto and len(auto["preprocessing"]["rest_band"]) == 2
    errors = {k: np.max(np.abs(np.array(v["gains"]) / true - 1.0)) for k, v in (("auto", auto), ("off", off))}
    assert errors["auto"] < 1e-3 and errors["off"] > 20.0 * errors["auto"], errors  # measured 1.2e-4, 3.0e-2


def test_lowpass_auto_is_strict_and_the_default_falls_back_as_in_identify(tmp_path, monkeypatch):
    """--lowpass auto and no --lowpass behaved the same (the cutoff's cross-validation was run with
    identify's fallback in both, without --max-condition): when the cross-validation cannot be
    made (a log too short for its folds), the default keeps min(20 Hz, fs/10) with a note and
    --lowpass auto is one error, as in identify; the cross-validation gets --max-condition."""
    import dynid.identify.crossval as crossval

    robot = dynid.load_robot("planar2")
    true = np.array([31.0, 17.5])
    _exact_current_logs(tmp_path, robot, true, 3.0)
    seen = []

    def too_short(*args, **kwargs):
        seen.append(args[9] if len(args) > 9 else kwargs.get("max_condition"))
        raise crossval.CrossValidationError("u.csv: 3 s of data are too short for 5-fold cross-validation", rate=200.0)

    monkeypatch.setattr(crossval, "choose_lowpass", too_short)
    common = ["drives", "gains", "-r", "planar2", "--unloaded", tmp_path / "u.csv", "--loaded", tmp_path / "l.csv",
              "--mass", "0.8", "--max-condition", "5e6"]
    out = run_ok(*common, "--out", tmp_path / "g.json")
    assert "not cross-validated" in out and "too short" in out, out
    assert json.loads((tmp_path / "g.json").read_text())["lowpass_selection"]["method"].startswith("default")
    line = failing(*common, "--out", tmp_path / "auto.json", "--lowpass", "auto")
    assert "too short for 5-fold cross-validation" in line and not (tmp_path / "auto.json").exists()
    assert seen == [5e6, 5e6]
