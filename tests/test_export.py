"""Export: the URDF written from an identified model loads in Pinocchio and MuJoCo and gives
the identified model's rigid-body torques (1e-9); a least-squares result is refused."""

from __future__ import annotations

import json
import subprocess
import sys

import mujoco
import numpy as np
import pinocchio as pin
import pytest
import yaml

import dynid
from dynid.export import identified_model, model_dict, urdf_text, write_model_file
from dynid.identify.base import base_parameters
from dynid.identify.model import ModelOptions
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.pipeline import make_estimator, regressor_arrays
from dynid.identify.result import build_result
from dynid.data.columns import ColumnMapping
from dynid.data.preprocess import Preprocessing, prepare
from dynid.identify.model import joint_columns
from dynid.simulate import Measurement, random_multisine, simulate_joint_data

from identify_helpers import random_physical_parameters

STANDARD_DH_YAML = """
name: dh3
convention: dh
joints:
  - {type: revolute, a: 0.1, alpha: 1.5707963267948966, d: 0.4, theta: 0.0}
  - {type: prismatic, a: 0.05, alpha: -1.5707963267948966, d: 0.2, theta: 0.3}
  - {type: revolute, a: 0.3, alpha: 0.4, d: 0.05, theta: 0.0}
limits:
  - {q_min: -2.9, q_max: 2.9}
  - {q_min: 0.0, q_max: 0.5}
  - {q_min: -2.0, q_max: 2.0}
"""


def states(robot, count: int, seed: int):
    """Random states with q inside the joint limits (no limit constraint is active)."""
    rng = np.random.default_rng(seed)
    lo, hi = robot.limit_array("q_min"), robot.limit_array("q_max")
    lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    q = lo + (hi - lo) * rng.uniform(0.05, 0.95, (count, robot.n))
    return q, rng.normal(size=(count, robot.n)), rng.normal(size=(count, robot.n))


def pinocchio_torques(path, q, dq, ddq, gravity):
    model = pin.buildModelFromUrdf(str(path))
    model.gravity.linear = np.asarray(gravity)
    data = model.createData()
    # continuous joints (revolute without position limits) are (cos q, sin q) in Pinocchio
    parts = [np.column_stack([np.cos(q[:, i]), np.sin(q[:, i])]) if joint.nq == 2 else q[:, i:i + 1]
             for i, joint in enumerate(model.joints[1:])]
    q_pin = np.hstack(parts)
    return np.array([pin.rnea(model, data, *s) for s in zip(q_pin, dq, ddq)])


def mujoco_torques(path, q, dq, ddq, gravity):
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.gravity[:] = gravity
    assert np.all(model.dof_damping == 0) and np.all(model.dof_armature == 0)
    data = mujoco.MjData(model)
    out = []
    for s in zip(q, dq, ddq):
        data.qpos[:], data.qvel[:], data.qacc[:] = s
        mujoco.mj_inverse(model, data)
        out.append(data.qfrc_inverse.copy())
    return np.array(out)


def relative(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def pc_result():
    """A physically consistent identification of er3a on a simulated multi-sine log."""
    robot = dynid.load_robot("er3a")
    options = ModelOptions()
    t = np.arange(0.0, 20.0, 0.01)
    q, dq, ddq = random_multisine(robot, seed=3).sample(t)
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, options, measurement=Measurement(tau_noise=0.2), seed=4)
    prep = Preprocessing()
    base = base_parameters(robot, options)
    ready = prepare(data, prep, joint_columns=lambda q, v, a: joint_columns(v, a, options))
    y, tau, mask = regressor_arrays(robot, ready, options, base, prep)
    results = {}
    for name in ("ols", "pc"):
        est = make_estimator(name, robot, options, base).fit(y, tau, mask)
        ne = NormalEquations(robot.n, base.rank)
        ne.add(y, tau, mask)
        results[name] = build_result("er3a", robot, options, base, est, ne, prep, ColumnMapping(),
                                     len(t), [], "simulated")
    return robot, results


def test_pc_urdf_reproduces_identified_torques_in_pinocchio_and_mujoco(tmp_path, pc_result):
    robot, results = pc_result
    model = identified_model(robot, results["pc"])
    path = tmp_path / "identified.urdf"
    path.write_text(urdf_text(model.robot))
    q, dq, ddq = states(robot, 300, seed=5)
    theta = np.array([p["value"] for p in results["pc"]["standard_parameters"]])[: 10 * robot.n]
    tau = dynid.regressor(robot, q, dq, ddq) @ theta  # the identified rigid-body model
    assert relative(pinocchio_torques(path, q, dq, ddq, robot.gravity), tau) < 1e-9
    assert relative(mujoco_torques(path, q, dq, ddq, robot.gravity), tau) < 1e-9
    assert np.allclose(dynid.load_robot(path).parameters(), theta, rtol=0, atol=1e-12)


@pytest.mark.parametrize("spec", ["kr500", "scara5", "planar2", "dh3.yaml"])
def test_urdf_of_any_robot_agrees_with_pinocchio_and_mujoco(tmp_path, spec):
    if spec.endswith(".yaml"):
        (tmp_path / spec).write_text(STANDARD_DH_YAML)  # standard DH: link frames offset from joints
        spec = str(tmp_path / spec)
    robot = dynid.load_robot(spec)
    robot = robot.with_parameters(random_physical_parameters(robot, seed=robot.n))
    path = tmp_path / "robot.urdf"
    path.write_text(urdf_text(robot))
    q, dq, ddq = states(robot, 200, seed=6)
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    assert relative(pinocchio_torques(path, q, dq, ddq, robot.gravity), tau) < 1e-9
    assert relative(mujoco_torques(path, q, dq, ddq, robot.gravity), tau) < 1e-9


def test_least_squares_result_is_refused_by_the_command(tmp_path, pc_result):
    _, results = pc_result
    params = tmp_path / "ols.json"
    params.write_text(json.dumps(results["ols"]))
    proc = subprocess.run([sys.executable, "-m", "dynid.cli.main", "export", "-r", "er3a", "-p", str(params),
                           "--urdf", str(tmp_path / "x.urdf")], capture_output=True, text=True)
    assert proc.returncode != 0 and not (tmp_path / "x.urdf").exists()
    assert "--estimator pc" in proc.stderr and "Traceback" not in proc.stderr


def test_model_file_json_and_yaml_carry_friction_and_drives(tmp_path, pc_result):
    robot, results = pc_result
    model = identified_model(robot, results["pc"])
    content = model_dict(model, results["pc"])
    write_model_file(tmp_path / "m.json", content)
    write_model_file(tmp_path / "m.yaml", content)
    assert json.loads((tmp_path / "m.json").read_text()) == yaml.safe_load((tmp_path / "m.yaml").read_text())
    theta = {p["name"]: p["value"] for p in results["pc"]["standard_parameters"]}
    for j, joint in enumerate(content["joints"]):
        assert joint["friction"]["Fc"] == theta[f"Fc{j + 1}"] and joint["friction"]["Fv"] == theta[f"Fv{j + 1}"]
        assert joint["rotor_inertia"] == theta[f"Ia{j + 1}"]
        assert joint["drive"]["gear_ratio"] == robot.joints[j].drive.gear_ratio
    link = content["links"][1]
    assert np.isclose(link["mass"] * np.array(link["com"]),
                      [theta["mx2"], theta["my2"], theta["mz2"]], rtol=1e-12).all()
