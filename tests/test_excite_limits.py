"""Limits for excitation design from where users have them (issue 16 §1 and its bad input).

Public URDFs of real arms (example-robot-data: xArm7, Kinova Gen2 with continuous joints)
carry no acceleration limit; the tests check the documented defaults against Pinocchio's
joint-space inertia, the precedence option > limits file > description, that every limit
used is printed and stored in the trajectory file, and that bad limits give one line naming
the joint by number and name.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from cli_helpers import runner
from robot_files import example_robot_urdf

import dynid
from dynid.cli.main import app
from dynid.errors import ModelError
from dynid.excite.limit_sources import (ACCEL_EFFORT_SHARE, ACCEL_PER_SPEED, LimitOptions, resolve_limits)

XARM = example_robot_urdf("xarm_description/urdf/xarm7.urdf")
KINOVA = example_robot_urdf("kinova_description/robots/kinova.urdf")


def urdf_limit(path, attribute):
    """(n,) <limit attribute> of the actuated joints, read from the XML itself."""
    root = ET.parse(path).getroot()
    return np.array([float(j.find("limit").get(attribute)) for j in root.findall("joint")
                     if j.get("type") in ("revolute", "continuous", "prismatic")])


def test_default_acceleration_is_within_half_the_effort_against_pinocchio_inertia():
    import pinocchio as pin

    robot = dynid.load_robot(XARM)
    resolved = resolve_limits(robot)
    lim = resolved.limits
    velocity, effort = urdf_limit(XARM, "velocity"), urdf_limit(XARM, "effort")
    np.testing.assert_allclose(lim.dq_max, velocity)  # untouched description values
    np.testing.assert_allclose(lim.tau_max, effort)
    assert np.all(np.isfinite(lim.ddq_max)) and np.all(lim.ddq_max > 0)
    assert np.all(lim.ddq_max <= ACCEL_PER_SPEED * velocity * (1 + 1e-12))
    # independent inertia: Pinocchio's CRBA at configurations other than the ones used
    model = pin.buildModelFromUrdf(str(XARM))
    data = model.createData()
    rng = np.random.default_rng(123)
    q = rng.uniform(lim.q_min, lim.q_max, (200, robot.n))
    diag = np.array([np.diag(pin.crba(model, data, qk)) for qk in q]).max(axis=0)
    by_effort = np.array(["tau_max" in s for s in resolved.sources["ddq_max"]])
    # where the effort rule decided, half the effort accelerates the largest inertia
    # (sampled maximum: within 5 % of the one found on other samples)
    assert np.all(diag[by_effort] * lim.ddq_max[by_effort] <= ACCEL_EFFORT_SHARE * effort[by_effort] * 1.05)
    np.testing.assert_allclose(diag[by_effort] * lim.ddq_max[by_effort],
                               ACCEL_EFFORT_SHARE * effort[by_effort], rtol=0.05)
    assert any("acceleration" in note for note in resolved.notes)


def test_continuous_joints_get_one_turn_or_the_chosen_width():
    robot = dynid.load_robot(KINOVA)
    continuous = ~np.isfinite(robot.limit_array("q_max"))
    assert continuous.sum() == 3  # joints 1, 4, 6 of the Kinova Gen2 description
    lim = resolve_limits(robot).limits
    np.testing.assert_allclose(lim.q_max[continuous] - lim.q_min[continuous], 2 * math.pi)
    np.testing.assert_allclose(lim.q_min[continuous], -math.pi)
    narrow = resolve_limits(robot, LimitOptions(continuous_range=3.0)).limits
    np.testing.assert_allclose(narrow.q_max[continuous], 1.5)
    # bounded joints keep the description's range
    np.testing.assert_allclose(narrow.q_max[~continuous], robot.limit_array("q_max")[~continuous])


def test_option_over_file_over_description(tmp_path):
    robot = dynid.load_robot(XARM)
    path = tmp_path / "limits.yaml"
    path.write_text("all: {ddq_max: 7.0}\njoints:\n  joint2: {dq_max: 1.0, q_min: -1.0, q_max: 1.5}\n  7: {ddq_max: 20}\n")
    resolved = resolve_limits(robot, LimitOptions(file=path, ddq_max={"3": 4.0}, dq_scale=0.5))
    lim, src = resolved.limits, resolved.sources
    velocity = urdf_limit(XARM, "velocity")
    np.testing.assert_allclose(lim.ddq_max, [7, 7, 4, 7, 7, 7, 20])
    expected_dq = 0.5 * velocity
    expected_dq[1] = 0.5
    np.testing.assert_allclose(lim.dq_max, expected_dq)
    assert (lim.q_min[1], lim.q_max[1]) == (-1.0, 1.5)
    assert src["ddq_max"][2] == "option" and src["ddq_max"][0] == "file limits.yaml"
    assert src["dq_max"][0] == "description x 0.5"


@pytest.mark.parametrize("options, words", [
    (LimitOptions(q_range={"4": (3.1, -3.1)}), ["joint 4 (joint4)", "q_min 3.1", "q_max -3.1"]),
    (LimitOptions(ddq_max={"joint6": 0.0}), ["joint 6 (joint6)", "ddq_max must be positive"]),
    (LimitOptions(dq_max=[1.0, 2.0]), ["expected one value for every joint or 7 values, got 2"]),
    (LimitOptions(tau_max={"elbow": 3.0}), ["no joint 'elbow'", "joint1"]),
    (LimitOptions(dq_scale={"2": -1.0}), ["joint 2 (joint2)", "positive scale"]),
])
def test_inconsistent_limits_name_the_joint(options, words):
    with pytest.raises(ModelError) as exc:
        resolve_limits(dynid.load_robot(XARM), options)
    message = str(exc.value)
    assert all(w in message for w in words), message
    assert "np.int64" not in message and "\n" not in message


def test_cli_limits_printed_stored_and_reused_by_evaluate(tmp_path):
    out = tmp_path / "xarm.json"
    run = runner.invoke(app, ["excite", "optimize", "-r", str(XARM), "--out", str(out), "-N", "2",
                              "--generations", "2", "--polish-iterations", "5", "--dq-scale", "0.5",
                              "--ddq-max", "3,3,4,5,6,6,8", "--q-range", "1:-2,2", "--q-range=joint7:-3,3"])
    assert run.exit_code == 0, run.output
    text = " ".join(run.output.split())
    assert "ddq_max" in text and "description x 0.5" in text and "limits used for UF_ROBOT" in text
    stored = json.loads(out.read_text())["limits"]
    np.testing.assert_allclose(stored["ddq_max"], [3, 3, 4, 5, 6, 6, 8])
    assert stored["q_min"][0] == -2 and stored["q_max"][6] == 3
    np.testing.assert_allclose(stored["dq_max"], 0.5 * urdf_limit(XARM, "velocity"))
    assert stored["source"]["q_min"][0] == "option" and stored["joints"][0] == "joint1"
    report = tmp_path / "eval.json"
    run = runner.invoke(app, ["excite", "evaluate", "-r", str(XARM), "--trajectory", str(out),
                              "--json", str(report)])
    assert run.exit_code == 0, run.output
    assert f"limits stored in {out}" in " ".join(run.output.split())
    evaluation = json.loads(report.read_text())
    assert evaluation["limits_ok"] is True
    assert evaluation["limits"]["ddq_max"] == stored["ddq_max"]


@pytest.mark.parametrize("args, words", [
    (["--q-range", "4:3.1,-3.1"], ["joint 4 (joint4)", "q_min 3.1 is not below q_max -3.1"]),
    (["--ddq-max", "0"], ["joint 1 (joint1)", "ddq_max must be positive, got 0"]),
    (["--dq-max", "1,2,3"], ["--dq-max", "expected one value or 7"]),
])
def test_cli_bad_limits_one_line(tmp_path, args, words):
    run = runner.invoke(app, ["excite", "optimize", "-r", str(XARM), "--out", str(tmp_path / "t.json"), *args])
    assert run.exit_code == 2
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and all(w in lines[0] for w in words), run.output
    assert "np.int64" not in run.output and not (tmp_path / "t.json").exists()
