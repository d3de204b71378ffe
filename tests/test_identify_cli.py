"""The commands: simulate -> identify -> predict / validate, with foreign logs handled by options only."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

import dynid
from dynid.cli.main import app

from cli_helpers import read_columns as _read
from cli_helpers import run_ok as _run
from cli_helpers import runner


def _foreign_log(src, dst, n):
    """Rewrite a contract log as a controller might: time in ms, angles in degrees, other
    names, currents, and a last line cut off in the middle of a write."""
    cols = _read(src)
    out = {"time_ms": cols["t"] * 1000.0}
    for j in range(1, n + 1):
        out[f"pos_{j}"] = np.degrees(cols[f"q{j}"])
        out[f"cur_{j}"] = cols[f"i{j}"]
    pacsv.write_csv(pa.table(out), dst)
    with open(dst, "a") as fh:
        fh.write("123456.7,0.25,1.")  # truncated last line
    return dst


def test_irregular_log_with_currents_goes_through_identify_and_predict_by_options(tmp_path):
    robot = dynid.load_robot("er3a")
    n = robot.n
    common = ["--robot", "er3a", "--jitter", "0.3", "--currents", "--no-derivatives", "--rate", "200"]
    _run("simulate", *common, "--duration", "30", "--seed", "1", "--tau-noise", "0.05", "--out", tmp_path / "train.csv")
    _run("simulate", *common, "--duration", "10", "--seed", "2", "--out", tmp_path / "check.csv")
    train = _foreign_log(tmp_path / "train.csv", tmp_path / "train_log.csv", n)
    check = _foreign_log(tmp_path / "check.csv", tmp_path / "check_log.csv", n)
    rename = ",".join(["time_ms=t"] + [f"pos_{j}=q{j}" for j in range(1, n + 1)]
                      + [f"cur_{j}=i{j}" for j in range(1, n + 1)])
    out = _run("identify", "--robot", "er3a", "--data", train, "--out", tmp_path / "result.json",
               "--rename", rename, "--time-unit", "ms", "--degrees", "--current-gain", "drive")
    assert "irregular time stamps" in out and "truncated" in out
    result = json.loads((tmp_path / "result.json").read_text())
    assert {"robot", "n", "estimator", "friction", "base_parameters", "fit"} <= set(result)
    assert result["n"] == n and result["estimator"] == "ols" and result["friction"] == "coulomb-viscous"
    assert len(result["fit"]["rmsd"]) == n and len(result["fit"]["relative_rmsd"]) == n
    assert all(set(p) >= {"name", "value", "std"} for p in result["base_parameters"])
    # predict reads the layout options back from result.json
    _run("predict", "--robot", "er3a", "--params", tmp_path / "result.json", "--data", check,
         "--out", tmp_path / "pred.csv")
    pred = _read(tmp_path / "pred.csv")
    assert list(pred) == ["t"] + [f"tau{j}" for j in range(1, n + 1)]
    # the noise-free check log holds the true currents: compare on the resampled grid
    truth = _read(tmp_path / "check.csv")
    gain = np.array([j.drive.torque_constant * j.drive.gear_ratio for j in robot.joints])
    inner = slice(30, -30)  # filter edge samples
    for j in range(n):
        tau_true = np.interp(pred["t"], truth["t"], truth[f"i{j + 1}"] * gain[j])
        err = np.sqrt(np.mean((pred[f"tau{j + 1}"] - tau_true)[inner] ** 2))
        assert err < 0.005 * np.sqrt(np.mean(tau_true**2)) + 0.01, (j, err)  # measured 0.2 % of RMS


def test_validate_reports_rmsd_with_and_without_low_velocity(tmp_path):
    _run("simulate", "--robot", "planar2", "--duration", "20", "--seed", "3", "--tau-noise", "0.01",
         "--out", tmp_path / "a.parquet")
    _run("identify", "--robot", "planar2", "--data", tmp_path / "a.parquet", "--out", tmp_path / "r.json",
         "--estimator", "wls", "--lowpass", "0")
    _run("validate", "--robot", "planar2", "--params", tmp_path / "r.json", "--data", tmp_path / "a.parquet",
         "--min-velocity", "0.1", "--json", tmp_path / "v.json")
    report = json.loads((tmp_path / "v.json").read_text())[str(tmp_path / "a.parquet")]
    assert report["kind"] == "self"
    np.testing.assert_allclose(report["rmsd"], 0.01, rtol=0.15)  # the noise floor
    assert len(report["moving"]["rmsd"]) == 2


def test_base_params_command_prints_combinations(tmp_path):
    out = _run("base-params", "planar2", "--json", tmp_path / "b.json")
    saved = json.loads((tmp_path / "b.json").read_text())
    assert saved["rank"] == len(saved["names"]) and "Izz1R" in saved["names"]
    assert "Izz1R = Izz1" in out


def test_pc_and_irls_estimators_and_per_cycle_from_the_command_line(tmp_path):
    _run("simulate", "--robot", "planar2", "--duration", "20", "--seed", "4", "--tau-noise", "0.02",
         "--cycles", "2", "--out", tmp_path / "a.csv")
    for estimator in ("pc", "irls"):
        _run("identify", "--robot", "planar2", "--data", tmp_path / "a.csv", "--out", tmp_path / f"{estimator}.json",
             "--estimator", estimator)
        result = json.loads((tmp_path / f"{estimator}.json").read_text())
        assert result["estimator"] == estimator
    assert min(json.loads((tmp_path / "pc.json").read_text())["lmi_min_eigenvalues"]) > -1e-8
    _run("identify", "--robot", "planar2", "--data", tmp_path / "a.csv", "--out", tmp_path / "c.json", "--per", "cycle")
    per = json.loads((tmp_path / "c.json").read_text())["per_cycle"]
    assert per["labels"] == ["1", "2"] and len(per["std"]) == len(per["mean"])


def test_errors_name_the_problem(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("t,q1,q2,tau1,tau2\n0,0,0,1,1\n0.01,0,0,1,1\n0.005,0,0,1,1\n")
    result = runner.invoke(app, ["identify", "--robot", "planar2", "--data", str(path), "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "row 3" in result.output and "backwards" in result.output
    result = runner.invoke(app, ["identify", "--robot", "er3a", "--data", str(path), "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "q3" in result.output


def test_a_rename_of_a_column_the_file_does_not_have_is_refused(tmp_path):
    """--rename nope=q1 was ignored without a word (the log then read its own q1): an error names
    the column and the file's columns."""
    from cli_helpers import failing

    path = tmp_path / "log.csv"
    t = np.arange(0.0, 2.0, 0.01)
    pacsv.write_csv(pa.table({"time": t, "q1": np.sin(t), "q2": np.cos(t), "tau1": t, "tau2": t}), path)
    line = failing("identify", "-r", "planar2", "--data", path, "--out", tmp_path / "r.json", "--lowpass", "5",
                   "--rename", "time=t,nope=q1")
    assert "nope" in line and "time, q1, q2, tau1, tau2" in line and not (tmp_path / "r.json").exists()
