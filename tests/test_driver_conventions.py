"""Real drivers' conventions (issue 17): a reversed torque sign, a lagging velocity estimate, a
torque logged late, joints held still, and a log kept as per-signal text files."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.cli.main import app
from dynid.data.columns import ColumnMapping
from dynid.data.io import write_joint_data
from dynid.data.preprocess import Preprocessing
from dynid.errors import DataError
from dynid.identify import ModelOptions, base_parameters
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import full_parameters
from dynid.identify.pipeline import accumulate_sources
from dynid.identify.undetermined import find_undetermined
from dynid.simulate import random_multisine, simulate_joint_data

from cli_helpers import read_columns, run_ok, runner

FS = 200.0


def _log(robot, seed=1, duration=20.0, hold=None):
    """Noise-free log with exact dq, ddq; joints in ``hold`` stay at 0.3 rad."""
    t = np.arange(0.0, duration, 1.0 / FS)
    q, dq, ddq = random_multisine(robot, seed=seed).sample(t)
    for j in hold or ():
        q[:, j], dq[:, j], ddq[:, j] = 0.3, 0.0, 0.0
    data, _, theta = simulate_joint_data(robot, t, q, dq, ddq, ModelOptions(), seed=seed)
    return data, theta


def _fit(robot, path, mapping=ColumnMapping(), prep=Preprocessing(lowpass_hz=0)):
    options = ModelOptions()
    base = base_parameters(robot, options)
    acc = accumulate_sources(robot, [path], options, base, mapping, prep)
    found = find_undetermined(robot, options, base, acc.q_min, acc.q_max)
    return OrdinaryLeastSquares(base.names, **found.options()).fit_normal_equations(acc.ne), base, found


def test_negate_and_ignore_read_a_log_as_if_it_followed_the_convention(tmp_path):
    robot = dynid.load_robot("planar2")
    data, _ = _log(robot)
    write_joint_data(tmp_path / "plain.csv", data)
    flipped = data.select(slice(None))
    flipped.tau = data.tau * np.array([-1.0, 1.0])  # a driver reporting joint 1's reaction torque
    flipped.dq = np.roll(data.dq, 8, axis=0)  # a velocity estimate 8 samples late
    write_joint_data(tmp_path / "driver.csv", flipped)
    prep = Preprocessing(lowpass_hz=20.0)
    plain, _, _ = _fit(robot, tmp_path / "plain.csv", ColumnMapping(ignore=("dq", "ddq")), prep)
    driver, _, _ = _fit(robot, tmp_path / "driver.csv", ColumnMapping(negate=("tau1",), ignore=("dq", "ddq")), prep)
    np.testing.assert_array_equal(driver.coef_, plain.coef_)  # same numbers, to the bit
    with pytest.raises(DataError, match="--negate tau3: the robot has 2 joints"):
        _fit(robot, tmp_path / "plain.csv", ColumnMapping(negate=("tau3",)))
    with pytest.raises(DataError, match="--ignore"):
        ColumnMapping.from_options(ignore="tau")


def test_tau_delay_undoes_a_torque_logged_late(tmp_path):
    """Exact states, torque 4 samples late: --tau-delay 0.02 recovers every base parameter;
    without it the fit is off."""
    robot = dynid.load_robot("planar2")
    data, theta = _log(robot)
    data.tau = np.concatenate([np.repeat(data.tau[:1], 4, axis=0), data.tau[:-4]])
    write_joint_data(tmp_path / "late.parquet", data)
    est, base, _ = _fit(robot, tmp_path / "late.parquet", prep=Preprocessing(lowpass_hz=0, tau_delay=4 / FS))
    beta = base.K @ theta
    np.testing.assert_allclose(est.coef_, beta, rtol=1e-6, atol=1e-9 * np.abs(beta).max())
    late, _, _ = _fit(robot, tmp_path / "late.parquet")
    assert np.max(np.abs(late.coef_ - beta)) > 1e-3 * np.abs(beta).max()


def test_joints_held_still_leave_their_parameters_at_the_description(tmp_path):
    """er3a with joint 1 held: Izz1R (joint 1's own inertia, excited only by its motion) and
    joint 1's friction are reported as not determined, with the description's values; every
    other base parameter is recovered from the noise-free log."""
    robot = dynid.load_robot("er3a")
    data, theta = _log(robot, hold=[0])
    write_joint_data(tmp_path / "held.csv", data)
    est, base, found = _fit(robot, tmp_path / "held.csv")
    names = [base.names[k] for k in found.index]
    assert found.still == [0] and {"Fc1", "Fv1"} <= set(names) and any(n.startswith("Izz1") for n in names)
    prior = base.K @ full_parameters(robot, ModelOptions())
    np.testing.assert_array_equal(est.coef_[found.index], prior[found.index])
    assert np.all(np.isnan(est.std_[found.index])) and np.all(np.isfinite(np.delete(est.std_, found.index)))
    beta = base.K @ theta
    other = np.setdiff1d(np.arange(base.rank), found.index)
    np.testing.assert_allclose(est.coef_[other], beta[other], rtol=1e-6, atol=1e-9 * np.abs(beta).max())
    # the command line says so, and result.json carries null standard deviations
    out = run_ok("identify", "-r", "er3a", "--data", tmp_path / "held.csv", "--out", tmp_path / "r.json",
                 "--lowpass", "0")
    assert "held still" in out and "Fc1" in out
    result = json.loads((tmp_path / "r.json").read_text())
    flagged = [p for p in result["base_parameters"] if p.get("determined") is False]
    assert {p["name"] for p in flagged} == set(names) and all(p["std"] is None for p in flagged)
    assert result["undetermined"]["still_joints"] == [1]


def _text_log(directory, t, q, tau):
    directory.mkdir()
    for name, values in (("time.txt", t[:, None]), ("pos.txt", q), ("trq.txt", tau)):
        # tab-separated with a trailing tab, 6 significant digits: as the iiwa logger writes
        (directory / name).write_text("".join("\t".join(f"{v:g}" for v in row) + "\t\n" for row in values))


def test_convert_text_signal_files_streams_and_marks_time_resets(tmp_path):
    t = np.concatenate([np.arange(0, 1.0, 0.005), np.arange(0, 0.5, 0.005)])  # the clock restarts
    q = np.column_stack([np.sin(np.arange(t.size) / 50), np.cos(np.arange(t.size) / 50)])
    tau = -2.0 * q
    _text_log(tmp_path / "log", t, q, tau)
    signals = "t=time.txt,q=pos.txt,tau=trq.txt"
    for out in ("log.parquet", "log.csv"):
        run_ok("convert", tmp_path / "log", "--signals", signals, "--out", tmp_path / out, "--chunk-rows", 64)
    cols = read_columns(tmp_path / "log.csv")
    assert list(cols) == ["t", "q1", "q2", "tau1", "tau2", "segment"]
    np.testing.assert_allclose(cols["q2"], np.round(q[:, 1], 5), atol=1e-5)
    np.testing.assert_array_equal(cols["segment"], (np.arange(t.size) >= 200).astype(int))
    # the converted log reads as two segments without --segments auto
    robot = dynid.load_robot("planar2")
    from dynid.data.io import load_joint_data
    data = load_joint_data(tmp_path / "log.parquet", robot, ColumnMapping(negate=("tau",)))
    np.testing.assert_array_equal(np.unique(data.segment), [0, 1])
    np.testing.assert_allclose(data.tau, 2.0 * np.round(q, 6), atol=1e-5)
    # files of different lengths: one line naming the short file, nothing written
    (tmp_path / "log" / "trq.txt").write_text("".join("1\t2\t\n" for _ in range(t.size - 3)))
    r = runner.invoke(app, ["convert", str(tmp_path / "log"), "--signals", signals,
                            "--out", str(tmp_path / "bad.parquet"), "--chunk-rows", "64"])
    assert r.exit_code == 2 and "trq.txt" in r.output and not (tmp_path / "bad.parquet").exists()
