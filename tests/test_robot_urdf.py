"""Complete URDFs: mimic joints against Pinocchio, locked and selected joints against the full
robot held still, floating roots and unsupported constructs refused by name."""

import numpy as np
import pinocchio as pin
import pytest
from urdf_factory import random_urdf

import dynid
from dynid.errors import ModelError

# a follower (j5, revolute, multiplier 0.7, offset 0.3) that carries an actuated joint, and a
# prismatic follower (j8) in another branch that carries one too
PARENTS = [0, 1, 2, 3, 2, 5, 1, 7, 8]
TYPES = ["revolute", "revolute", "revolute", "fixed", "revolute", "revolute", "prismatic", "prismatic", "revolute"]
MIMIC = {4: (1, 0.7, 0.3), 7: (6, -1.3, 0.05)}


@pytest.fixture
def mimic_urdf(tmp_path):
    return random_urdf(tmp_path / "mimic.urdf", np.random.default_rng(3), PARENTS, TYPES, MIMIC)


def test_mimic_joints_agree_with_pinocchio(mimic_urdf):
    robot = dynid.load_robot(mimic_urdf)
    model = pin.buildModelFromUrdf(str(mimic_urdf), mimic=True)
    assert (robot.n, robot.n_bodies, model.nv) == (6, 8, 6)
    assert robot.joint_names == ["j1", "j2", "j3", "j6", "j7", "j9"]
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.uniform(-1, 1, (3, 5, robot.n))
    tau, m = dynid.inverse_dynamics(robot, q, dq, ddq), dynid.mass_matrix(robot, q)
    for k in range(5):  # fresh Data per call: Pinocchio 4.1's crba of a mimic model reads stale Data
        np.testing.assert_allclose(tau[k], pin.rnea(model, model.createData(), q[k], dq[k], ddq[k]), atol=1e-9)
        m_pin = pin.crba(model, model.createData(), q[k])
        np.testing.assert_allclose(m[k], np.triu(m_pin) + np.triu(m_pin, 1).T, atol=1e-9)
    y = dynid.regressor(robot, q, dq, ddq)
    assert y.shape == (5, robot.n, 10 * robot.n_bodies)
    np.testing.assert_allclose(y @ robot.parameters(), tau, atol=1e-9)
    # forward dynamics inverts inverse dynamics in actuated coordinates
    np.testing.assert_allclose(dynid.forward_dynamics(robot, q, dq, tau), ddq, atol=1e-8)


def _held_still(full, kept, q_kept, value):
    """Full-robot states with the locked joints at ``value`` and at rest."""
    q = np.tile(np.broadcast_to(value, (full.n,)), (q_kept.shape[0], 1))
    q[:, kept] = q_kept
    return q


def test_locked_joints_are_the_full_robot_held_still(tmp_path):
    path = random_urdf(tmp_path / "tree.urdf", np.random.default_rng(5),
                       [0, 1, 2, 3, 2, 5, 1], ["revolute", "prismatic", "revolute", "fixed", "revolute",
                                               "continuous", "revolute"])
    full = dynid.load_robot(path)
    lock = {"j2": 0.12, "j5": -0.7}  # j2 carries j3 and j5; j5 carries j6
    locked = dynid.load_robot(path, lock=lock)
    assert locked.joint_names == ["j1", "j3", "j6", "j7"]
    kept = [full.joint_names.index(n) for n in locked.joint_names]
    value = np.zeros(full.n)
    for name, v in lock.items():
        value[full.joint_names.index(name)] = v
    rng = np.random.default_rng(1)
    q, dq, ddq = rng.uniform(-1, 1, (3, 6, locked.n))
    qf = _held_still(full, kept, q, value)
    dqf, ddqf = _held_still(full, kept, dq, 0.0), _held_still(full, kept, ddq, 0.0)
    np.testing.assert_allclose(dynid.inverse_dynamics(locked, q, dq, ddq),
                               dynid.inverse_dynamics(full, qf, dqf, ddqf)[:, kept], atol=1e-9)
    np.testing.assert_allclose(dynid.mass_matrix(locked, q), dynid.mass_matrix(full, qf)[:, kept][:, :, kept],
                               atol=1e-9)


def test_locking_a_mimic_leader_locks_its_followers(mimic_urdf):
    robot = dynid.load_robot(mimic_urdf)
    locked = dynid.load_robot(mimic_urdf, lock={"j2": 0.4})
    assert locked.joint_names == ["j1", "j3", "j6", "j7", "j9"] and locked.n_bodies == 6
    kept = [robot.joint_names.index(n) for n in locked.joint_names]
    rng = np.random.default_rng(2)
    q, dq, ddq = rng.uniform(-1, 1, (3, 4, locked.n))
    value = np.where(np.array(robot.joint_names) == "j2", 0.4, 0.0)
    full = [_held_still(robot, kept, a, v) for a, v in ((q, value), (dq, 0.0), (ddq, 0.0))]
    np.testing.assert_allclose(dynid.inverse_dynamics(locked, q, dq, ddq),
                               dynid.inverse_dynamics(robot, *full)[:, kept], atol=1e-9)
    with pytest.raises(ModelError, match="'j5' mimics 'j2': lock 'j2'"):
        dynid.load_robot(mimic_urdf, lock={"j5": 0.1})


def test_joints_keeps_a_list_and_locks_the_rest_at_zero_within_limits(mimic_urdf):
    robot = dynid.load_robot(mimic_urdf, joints=["j7", "j1"])
    assert robot.joint_names == ["j1", "j7"]  # depth-first order, not the list's
    with pytest.raises(ModelError, match="no actuated joint 'j42'"):
        dynid.load_robot(mimic_urdf, joints=["j1", "j42"])
    with pytest.raises(ModelError, match="'j5' mimics 'j2'; list 'j2'"):
        dynid.load_robot(mimic_urdf, joints=["j1", "j5"])


def _one_joint_urdf(tmp_path, joint: str) -> str:
    text = ('<robot name="r"><link name="world"/><link name="base"><inertial><mass value="1"/>'
            '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="2"/>'
            '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            f'{joint}<joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>'
            '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>')
    path = tmp_path / "one.urdf"
    path.write_text(text)
    return str(path)


def test_a_floating_root_is_refused_by_name_and_can_be_held(tmp_path):
    path = _one_joint_urdf(tmp_path, '<joint name="base_free" type="floating"><parent link="world"/>'
                                     '<child link="base"/><origin xyz="0 0 1"/></joint>')
    with pytest.raises(ModelError, match="joint 'base_free': unsupported type 'floating' .* --lock base_free=0"):
        dynid.load_robot(path)
    held = dynid.load_robot(path, lock={"base_free": 0.0})
    assert held.joint_names == ["shoulder"]
    with pytest.raises(ModelError, match="only be held at its <origin>"):
        dynid.load_robot(path, lock={"base_free": 0.3})


@pytest.mark.parametrize("joint,message", [
    ('<joint name="slider" type="screw"><parent link="world"/><child link="base"/></joint>',
     "joint 'slider': unsupported type 'screw'"),
    ('<joint name="grip" type="revolute"><parent link="world"/><child link="base"/>'
     '<limit lower="0" upper="1"/><mimic joint="nowhere"/></joint>',
     "joint 'grip' mimics 'nowhere', which is not a moving joint"),
    ('<joint name="grip" type="revolute"><parent link="world"/><child link="base"/></joint>',
     "joint 'grip': a revolute joint needs a <limit>"),
])
def test_unsupported_constructs_name_the_joint(tmp_path, joint, message):
    with pytest.raises(ModelError, match=message):
        dynid.load_robot(_one_joint_urdf(tmp_path, joint))


def test_example_robots_by_name_and_their_errors():
    pytest.importorskip("importlib.metadata")
    try:
        panda = dynid.load_robot("example:panda", lock={"panda_finger_joint1": 0.02})
    except ModelError as exc:
        pytest.skip(str(exc))
    assert panda.n == 7 and not panda.has_mimic
    with pytest.raises(ModelError, match="example:anymal: a quadruped with a floating base"):
        dynid.load_robot("example:anymal")
    with pytest.raises(ModelError, match="example:nonsense: not an example-robot-data robot"):
        dynid.load_robot("example:nonsense")


def test_a_mimic_robot_is_identified_exactly_by_both_pipelines(mimic_urdf, tmp_path):
    """Noise-free data of a robot with mimic joints: the in-memory and the streaming (per-joint
    Gram) paths both recover every base parameter (10 per moving body + friction + rotor)."""
    from dynid.data.io import joint_data_columns, write_columns
    from dynid.data.preprocess import Preprocessing
    from dynid.identify import ModelOptions, base_parameters, full_parameters
    from dynid.identify.estimators import OrdinaryLeastSquares
    from dynid.identify.pipeline import accumulate_file, fit_data
    from dynid.simulate import random_multisine, simulate_joint_data

    robot = dynid.load_robot(mimic_urdf)
    options = ModelOptions()
    base = base_parameters(robot, options)
    t = np.arange(0.0, 20.0, 1.0 / 100.0)
    theta = full_parameters(robot, options, np.column_stack([np.linspace(0.5, 1.0, robot.n),
                                                             np.linspace(0.2, 0.4, robot.n)]))
    theta[-robot.n:] = np.linspace(0.05, 0.1, robot.n)  # rotor inertias
    assert theta.size == 10 * robot.n_bodies + 3 * robot.n
    data, _, _ = simulate_joint_data(robot, t, *random_multisine(robot, seed=4).sample(t), options, theta=theta)
    beta, prep = base.K @ theta, Preprocessing(lowpass_hz=0)
    fitted = fit_data(robot, data, options, base, OrdinaryLeastSquares(names=base.names), prep)
    np.testing.assert_allclose(fitted.coef_, beta, rtol=1e-6)
    path = tmp_path / "mimic.csv"
    write_columns(path, joint_data_columns(data))
    streamed = OrdinaryLeastSquares(names=base.names).fit_normal_equations(
        accumulate_file(robot, path, options, base, prep=prep).ne)
    np.testing.assert_allclose(streamed.coef_, beta, rtol=1e-6)


def test_a_mimic_robot_through_identify_predict_and_export(mimic_urdf, tmp_path):
    """The result of a robot with mimic joints (10 parameters per moving body) is read back by
    predict and by the model-file export, which lists the actuated joints only."""
    import json

    from cli_helpers import read_columns, run_ok

    log, result, model = tmp_path / "log.csv", tmp_path / "result.json", tmp_path / "model.json"
    run_ok("simulate", "-r", mimic_urdf, "--out", log, "--duration", 10, "--rate", 100, "--rotor-inertia")
    run_ok("identify", "-r", mimic_urdf, "--data", log, "--out", result, "--lowpass", 0)
    assert json.loads(result.read_text())["n_bodies"] == 8
    run_ok("predict", "-r", mimic_urdf, "--params", result, "--data", log, "--out", tmp_path / "pred.csv")
    pred, measured = read_columns(tmp_path / "pred.csv"), read_columns(log)
    np.testing.assert_allclose(pred["tau6"], measured["tau6"], atol=1e-6 * np.abs(measured["tau6"]).max())
    from dynid.export import identified_model, model_dict

    run_ok("identify", "-r", mimic_urdf, "--data", log, "--out", result, "--lowpass", 0, "--estimator", "pc")
    robot = dynid.load_robot(mimic_urdf)
    content = model_dict(identified_model(robot, json.loads(result.read_text()), str(result)))
    assert len(content["links"]) == robot.n_bodies
    assert [j["name"] for j in content["joints"]] == robot.joint_names


@pytest.mark.parametrize("columns", [None, "80"])
def test_robot_show_piped_prints_every_joint_name_whole(tmp_path, columns):
    """A log or a pipe gets the names whole, not 'shoulder_lift_joi…', also with a COLUMNS=80 inherited
    from a terminal (pytest-xdist's workers have it)."""
    import os
    import subprocess
    import sys

    try:
        dynid.load_robot("example:ur5")
    except ModelError as exc:
        pytest.skip(str(exc))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
    out = subprocess.run([sys.executable, "-m", "dynid.cli.main", "robot", "show", "example:ur5"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, check=True).stdout
    elbow = next(line for line in out.splitlines() if " elbow_joint " in line)
    assert " shoulder_lift_joint " in elbow  # its parent, whole
    assert "…" not in out
