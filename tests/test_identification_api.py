"""dynid.Identification: the library call that dynid identify makes.

Facts: identifying from arrays and from the same samples in a file gives the same numbers
(1e-9); the API writes exactly the result.json of the command; a result predicts and validates
on arrays as dynid predict / validate do on the file; saved and loaded, it is the same result."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.data.io import write_joint_data

from cli_helpers import read_columns, run_ok
from realistic_logs import realistic_log


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """er3a, 100 Hz, 40 s of a realistic log (noise, ripple, 500-count encoders, 1 % dropped rows:
    irregular time stamps), joint 6 held nearly still; a second log to validate on."""
    d = tmp_path_factory.mktemp("api")
    robot = dynid.load_robot("er3a")
    data, _, _ = realistic_log(robot, 100.0, 40.0, seed=3, still=(5,))
    check, _, _ = realistic_log(robot, 100.0, 15.0, seed=4)
    write_joint_data(d / "train.parquet", data)
    write_joint_data(d / "train.csv", data)
    write_joint_data(d / "check.csv", check)
    return robot, data, check, d


def _same(a, b, tol=1e-9):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = np.maximum(np.abs(b), 1e-12 * max(np.nanmax(np.abs(b)), 1e-300))
    return float(np.nanmax(np.abs(a - b) / scale)) <= tol and np.array_equal(np.isnan(a), np.isnan(b))


def test_arrays_and_files_give_the_same_numbers(logs):
    robot, data, _, d = logs
    idn = dynid.Identification(robot, offset=True)
    from_arrays = idn.fit(data.t, data.q, data.tau)
    for path in (d / "train.parquet", d / "train.csv"):
        from_file = idn.fit_files([path])
        assert from_file.names == from_arrays.names
        assert _same(from_arrays.values, from_file.values)
        assert _same(from_arrays.std, from_file.std)
        assert _same(from_arrays.rmsd, from_file.rmsd)
        assert from_arrays.undetermined == from_file.undetermined
        assert from_arrays.document["lowpass_selection"]["chosen_hz"] == \
            from_file.document["lowpass_selection"]["chosen_hz"]
    assert from_arrays.undetermined, "joint 6 is held still: some base parameters are not determined"
    assert np.all(np.isnan(from_arrays.std[[from_arrays.names.index(k) for k in from_arrays.undetermined]]))


def test_the_api_writes_exactly_the_result_of_dynid_identify(logs, tmp_path):
    robot, _, _, d = logs
    run_ok("identify", "--robot", "er3a", "--data", d / "train.parquet", "--offset", "--estimator", "wls",
           "--out", tmp_path / "cli.json")
    result = dynid.Identification("er3a", offset=True, estimator="wls").fit_files(d / "train.parquet")
    result.save(tmp_path / "api.json")
    cli, api = json.loads((tmp_path / "cli.json").read_text()), json.loads((tmp_path / "api.json").read_text())
    for doc in (cli, api):
        doc["lowpass_selection"].pop("cpu_seconds")  # the CPU time the cross-validation took
    assert api == cli
    assert (tmp_path / "api.json").read_text().count("\n") == (tmp_path / "cli.json").read_text().count("\n")


def test_predict_and_validate_on_arrays_equal_the_commands_on_the_file(logs, tmp_path):
    robot, data, check, d = logs
    result = dynid.Identification(robot).fit(data.t, data.q, data.tau)
    result.save(tmp_path / "r.json")
    run_ok("predict", "--robot", "er3a", "--params", tmp_path / "r.json", "--data", d / "check.csv",
           "--out", tmp_path / "pred.csv")
    pred = read_columns(tmp_path / "pred.csv")
    t_hat, tau_hat = result.predict(check.t, check.q, with_time=True)
    assert _same(t_hat, pred["t"], 1e-12)
    assert _same(tau_hat, np.column_stack([pred[f"tau{j + 1}"] for j in range(robot.n)]))
    run_ok("validate", "--robot", "er3a", "--params", tmp_path / "r.json", "--data", d / "check.csv",
           "--json", tmp_path / "v.json")
    cli = json.loads((tmp_path / "v.json").read_text())[str(d / "check.csv")]
    api = result.validate(check.t, check.q, check.tau, min_velocity=0.05)
    assert _same(api["rmsd"], cli["rmsd"]) and _same(api["relative_error"], cli["relative_error"])
    assert _same(api["moving"]["rmsd"], cli["moving"]["rmsd"])


def test_a_saved_result_loads_as_the_same_result(logs, tmp_path):
    robot, data, check, _ = logs
    result = dynid.Identification(robot, estimator="wls").fit(data.t, data.q, data.tau)
    result.save(tmp_path / "r.json")
    back = dynid.load_result(tmp_path / "r.json")
    assert back.names == result.names and np.array_equal(back.values, result.values)
    assert np.array_equal(back.covariance, result.covariance)
    assert back.diagnostics == result.diagnostics and back.robot.name == "er3a"
    assert np.array_equal(back.predict(check.t, check.q), result.predict(check.t, check.q))
