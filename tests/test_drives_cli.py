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


def test_drive_identification_reads_the_layout_options_and_refuses_the_options_it_does_not_use(tmp_path):
    """identify --drive read the log as it is, ignoring --rename, --degrees... (silently wrong
    numbers, or a missing column), and took identify's own options (--lowpass, --estimator,
    --friction auto) without using them. The layout is read as identify reads it (and stored, so
    predict reads its logs alike); any other option is one error naming it."""
    from cli_helpers import failing

    log = tmp_path / "log.csv"
    _run("simulate", "-r", "planar2", "--drive", "dc-motor", "--inductance", "0", "--rate", "250", "--duration", "6",
         "--seed", "3", "--out", log)
    cols = _read(log)
    foreign = {("time" if k == "t" else k): (np.degrees(v) if k[:1] == "q" or k[:2] == "dq" else v)
               for k, v in cols.items() if k == "t" or k[:1] in ("q", "u") or k[:2] == "dq"}
    foreign["time"] = foreign["time"] * 1000.0
    foreign.update({f"u{j}": -foreign[f"u{j}"] for j in (1, 2)})
    write = tmp_path / "foreign.csv"
    import pyarrow as pa
    import pyarrow.csv as pacsv
    pacsv.write_csv(pa.table(foreign), write)
    common = ["-r", "planar2", "--drive", "dc-motor", "--known", "gain1=0.5"]
    _run("identify", "--data", log, "--out", tmp_path / "a.json", *common)
    _run("identify", "--data", write, "--out", tmp_path / "b.json", *common, "--rename", "time=t", "--time-unit", "ms",
         "--degrees", "--negate", "u")
    a, b = (json.loads((tmp_path / f"{x}.json").read_text()) for x in "ab")
    beta_a, beta_b = (np.array([p["value"] for p in r["base_parameters"]]) for r in (a, b))
    np.testing.assert_allclose(beta_b, beta_a, rtol=1e-6, atol=1e-9 * np.abs(beta_a).max())
    for x, data in (("a", log), ("b", write)):  # predict reads the log as identify did
        _run("predict", "-r", "planar2", "--params", tmp_path / f"{x}.json", "--data", data, "--out",
             tmp_path / f"{x}.csv")
    pa_, pb_ = _read(tmp_path / "a.csv"), _read(tmp_path / "b.csv")
    for column in ("t", "u1", "u2_measured"):
        np.testing.assert_allclose(pb_[column], pa_[column], rtol=1e-6, atol=1e-9 * np.abs(pa_[column]).max())
    for option, value, said in (("--lowpass", "5", "--lowpass: not with --drive"),
                                ("--estimator", "pc", "--estimator: not with --drive"),
                                ("--rest", "off", "--rest: not with --drive"),
                                ("--friction", "auto", "--friction auto: not with --drive"),
                                ("--friction", "stribeck", "--friction stribeck: not with --drive"),
                                ("--ignore", "dq", "--ignore dq: not with --drive")):
        line = failing("identify", "--data", log, "--out", tmp_path / "c.json", *common, option, value)
        assert said in line, line
    assert not (tmp_path / "c.json").exists()
