"""dynid simulate --drive dc-motor -> dynid identify --drive dc-motor -> dynid predict, from files."""

from __future__ import annotations

import pytest
import json

import numpy as np

from dynid.cli.main import app

from cli_helpers import read_columns as _read
from cli_helpers import run_ok as _run
from cli_helpers import runner


def test_voltage_identification_from_the_command_line(tmp_path):
    train, valid, truth_path = tmp_path / "train.csv", tmp_path / "valid.csv", tmp_path / "truth.json"
    common = ["-r", "planar2", "--drive", "dc-motor", "--inductance", "0", "--rate", "250"]
    _run("simulate", *common, "--duration", "12", "--seed", "3", "--out", train, "--truth", truth_path)
    _run("simulate", *common, "--duration", "8", "--seed", "4", "--out", valid)
    cols = _read(train)
    assert {"u1", "u2", "i1", "i2", "dq1", "q2", "tau1"} <= set(cols)
    truth = json.loads(truth_path.read_text())
    a1 = truth["voltage"]["gains"][0]
    kb = ",".join(str(v) for v in truth["drives"]["back_emf"])
    result_path, pred_path = tmp_path / "result.json", tmp_path / "pred.csv"
    out = _run("identify", "-r", "planar2", "--data", train, "--out", result_path, "--drive", "dc-motor",
               "--known", f"gain1={a1}", "--back-emf", kb)
    assert "armature" in out
    result = json.loads(result_path.read_text())
    for key in ("robot", "n", "estimator", "friction", "base_parameters", "fit"):  # docs/formats.md section 4
        assert key in result
    assert len(result["fit"]["rmsd"]) == len(result["fit"]["relative_rmsd"]) == 2
    beta = np.array([p["value"] for p in result["base_parameters"]])
    true_beta = np.array(truth["voltage"]["base_parameters"])
    scale = np.max(np.abs(true_beta))
    err = np.abs(beta - true_beta) / np.where(np.abs(true_beta) > 1e-9 * scale, np.abs(true_beta), scale)
    assert np.max(err) < 1e-6
    gains = np.array([g["value"] for g in result["drive"]["gains"]])
    assert np.max(np.abs(gains / truth["voltage"]["gains"] - 1)) < 1e-6
    assert result["drive"]["scale_resolved"] is True
    arm = result["drive"]["armature"]
    assert np.allclose(arm["resistance"], truth["drives"]["resistance"], rtol=1e-6)
    assert np.allclose(arm["back_emf"], truth["drives"]["back_emf"], rtol=1e-6)
    _run("predict", "-r", "planar2", "--params", result_path, "--data", valid, "--out", pred_path)
    pred = _read(pred_path)
    for j in (1, 2):
        measured = pred[f"u{j}_measured"]
        assert np.sqrt(np.mean((pred[f"u{j}"] - measured) ** 2)) < 1e-6 * np.sqrt(np.mean(measured**2))
        assert f"tau{j}" in pred


def test_unresolved_scale_is_said(tmp_path):
    data, result_path = tmp_path / "scara.csv", tmp_path / "result.json"
    _run("simulate", "-r", "scara5", "--drive", "dc-motor", "--inductance", "0", "--rate", "200",
         "--duration", "6", "--out", data)
    out = _run("identify", "-r", "scara5", "--data", data, "--out", result_path, "--drive", "dc-motor",
               "--known", "m5=1.0")
    assert "cannot be resolved" in out
    result = json.loads(result_path.read_text())
    assert result["drive"]["scale_resolved"] is False
    assert result["drive"]["scale_groups"] == [[1, 5], [2, 3, 4]]
    assert result["drive"]["groups_resolved"] == [True, False]
    bad = runner.invoke(app, ["identify", "-r", "scara5", "--data", str(data), "--out", str(result_path),
                              "--drive", "dc-motor", "--known", "m4=2.0"])
    assert bad.exit_code != 0 and "m4" in bad.output


def test_known_values_are_name_value_pairs():
    """--known takes NAME=VALUE pairs (the one A=B parser of data.columns): sums, spaces, errors named."""
    from dynid.drives.fileio import parse_known
    from dynid.errors import DataError

    assert parse_known(" m5 = 1.5 ,gain2=0.8,") == {"m5": 1.5, "gain2": 0.8}
    for text, words in (("m5", "--known: expected NAME=VALUE"), ("m5=heavy", "--known m5: 'heavy' is not a number")):
        with pytest.raises(DataError, match=words):
            parse_known(text)
