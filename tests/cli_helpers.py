"""Running dynid commands in-process and reading the CSV files they write."""

from __future__ import annotations

import json
import warnings
from unittest import mock

import pyarrow.csv as pacsv
from typer.testing import CliRunner

from dynid.cli.main import app
from dynid.errors import DynidWarning

runner = CliRunner()


def run_ok(*args) -> str:
    """Run ``dynid ARGS``; fail the test with the command's output unless it exits 0."""
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def identify_er3a_friction(root, log, friction, *extra) -> dict:
    """result.json of ``dynid identify -r er3a`` on ``root/<log>_train.csv`` with ``--friction
    friction`` (and ``extra`` options), written as ``root/<log>_<friction>.json``."""
    out = root / f"{log}_{friction}.json"
    run_ok("identify", "-r", "er3a", "--data", root / f"{log}_train.csv", "--friction", friction, "--out", out, *extra)
    return json.loads(out.read_text())


def predict_er3a_against_truth(root, name, fit, test, seed, theta, options, f0, harmonics):
    """``dynid predict -r er3a`` of the result ``fit`` (written as ``root/<name>.json``) on
    ``root/<test>.csv``: the predicted torques, the truth's torques (the test log's multisine of
    ``seed``, the truth's ``theta`` and model ``options``) and the truth's velocities at its rows."""
    import numpy as np

    from dynid.data.io import read_table
    from dynid.identify.model import model_torques
    from dynid.robot import load_robot
    from dynid.simulate import random_multisine

    params = root / f"{name}.json"
    params.write_text(json.dumps(fit))
    run_ok("predict", "-r", "er3a", "--params", params, "--data", root / f"{test}.csv", "--out",
           root / f"pred_{name}.csv")
    table, _ = read_table(root / f"pred_{name}.csv")
    robot = load_robot("er3a")
    q, dq, ddq = random_multisine(robot, seed=seed, f0=f0, harmonics=harmonics).sample(table["t"].to_numpy())
    predicted = np.column_stack([table[f"tau{j + 1}"].to_numpy() for j in range(robot.n)])
    return predicted, model_torques(robot, q, dq, ddq, theta, options), dq


def _strict(action, *args, **kwargs):
    """``warnings.simplefilter`` with the CLI's "default" (``cli.common.friendly_errors`` collects
    other warnings and drops them when the command fails) turned into "error"."""
    _simplefilter("error" if action == "default" else action, *args, **kwargs)


def _strict_but_dynid(action, *args, **kwargs):
    """``_strict``, but DynidWarnings still print as the CLI's 'warning:' lines."""
    _strict(action, *args, **kwargs)
    if action == "default":
        warnings.filterwarnings("default", category=DynidWarning)


_simplefilter = warnings.simplefilter


def failing(*args) -> str:
    """Run ``dynid ARGS``; fail the test unless it ends in exactly one 'error:' line and exit code 2.
    Any Python warning issued before the error (NumPy's RuntimeWarning 'Mean of empty slice' on a
    one-row log...) raises inside the command, so it ends in a traceback instead and fails too."""
    with mock.patch.object(warnings, "simplefilter", _strict):
        result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def failing_after_warnings(*args) -> tuple[list[str], str]:
    """``failing``, for a command that warns (DynidWarning 'warning:' lines) before its error line:
    (the warning lines, the error line). Other Python warnings still fail the test."""
    with mock.patch.object(warnings, "simplefilter", _strict_but_dynid):
        result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("error: ") and all(x.startswith("warning: ") for x in lines[:-1]), result.output
    return lines[:-1], lines[-1]


def read_columns(path) -> dict:
    table = pacsv.read_csv(path)
    return {name: table.column(name).to_numpy() for name in table.column_names}
