"""Every fixed-base robot of example-robot-data loads by name, and its inverse dynamics,
regressor and mass matrix agree with Pinocchio (its own URDF parser, mimic joints included) to
1e-9 on random states. Each URDF of the package is either checked or skipped with its reason."""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from oracles import PIN_ORDER

import dynid
from dynid.robot.example import FIXED_BASE, FLOATING_BASE, robots_directory

STATES = 3
# URDFs of the package that are not robots of the catalogue, and why
NOT_ROBOTS = {"ur_description/urdf/ur3.urdf": "an empty <robot> (xacro stub, no links)"}


def _urdfs() -> list[tuple[str, str | None]]:
    """(relative path, catalogue name or None) of every URDF of the installed package."""
    try:
        root = robots_directory()
    except dynid.ModelError:
        return []
    by_path = {path: name for name, path in FIXED_BASE.items()}
    by_path.update({path: name for name, (path, _) in FLOATING_BASE.items()})
    return [(p.relative_to(root).as_posix(), by_path.get(p.relative_to(root).as_posix()))
            for p in sorted(root.rglob("*.urdf"))]


def _pin_models(path: Path, has_mimic: bool):
    full = pin.buildModelFromUrdf(str(path))
    return full, (pin.buildModelFromUrdf(str(path), mimic=True) if has_mimic else full)


def _configuration(model, v: np.ndarray) -> np.ndarray:
    """Pinocchio velocity-ordered values (nv,) -> configuration (cos/sin for continuous joints)."""
    out = np.zeros(model.nq)
    for joint in model.joints[1:]:
        if joint.shortname() == "JointModelMimic":
            continue
        if joint.nq == 2:
            out[joint.idx_q:joint.idx_q + 2] = np.cos(v[joint.idx_v]), np.sin(v[joint.idx_v])
        else:
            out[joint.idx_q] = v[joint.idx_v]
    return out


def _mimic_map(full, mimic):
    """Pinocchio's own G (n_bodies, n) and offsets: tree velocity = G @ actuated velocity."""
    g, o = np.zeros((full.nv, mimic.nv)), np.zeros(full.nv)
    for jm, jf in zip(mimic.joints[1:], full.joints[1:]):
        scaling = jm.extract().scaling if jm.shortname() == "JointModelMimic" else None
        g[jf.idx_v, jm.idx_v] = 1.0 if scaling is None else scaling
        o[jf.idx_v] = 0.0 if scaling is None else jm.extract().offset
    return g, o


def _orders(robot, full, model):
    """Pinocchio index of each dynid body and actuated coordinate. Pinocchio's parser orders the
    children of a link by joint name, dynid by their order in the file (the data columns)."""
    bodies = [full.joints[full.getJointId(j.name)].idx_v for j in robot.joints]
    actuated = [model.joints[model.getJointId(name)].idx_v for name in robot.joint_names]
    return np.array(bodies), np.array(actuated)


@pytest.mark.parametrize("relative,name", _urdfs() or [pytest.param("", None, marks=pytest.mark.skip(
    reason="example-robot-data is not installed"))])
def test_example_robot_agrees_with_pinocchio(relative, name):
    if relative in NOT_ROBOTS:
        pytest.skip(NOT_ROBOTS[relative])
    assert name is not None, f"{relative} is missing from dynid.robot.example's catalogue"
    if name in FLOATING_BASE:
        pytest.skip(f"example:{name}: floating base ({FLOATING_BASE[name][1]})")
    robot = dynid.load_robot(f"example:{name}")
    full, model = _pin_models(robots_directory() / relative, robot.has_mimic)
    assert (model.nv, full.nv) == (robot.n, robot.n_bodies)
    bodies, actuated = _orders(robot, full, model)
    theta = np.concatenate([full.inertias[i].toDynamicParameters()[PIN_ORDER] for i in range(1, full.njoints)])
    theta = theta.reshape(-1, 10)[bodies].ravel()
    np.testing.assert_allclose(robot.parameters(), theta, rtol=0, atol=1e-9 * max(1.0, np.abs(theta).max()))

    rng = np.random.default_rng(len(name))
    q, dq, ddq = rng.uniform(-1.5, 1.5, (3, STATES, robot.n))
    tau, y, m = (dynid.inverse_dynamics(robot, q, dq, ddq), dynid.regressor(robot, q, dq, ddq),
                 dynid.mass_matrix(robot, q))
    g, o = _mimic_map(full, model)
    worst = 0.0  # largest deviation relative to the largest entry, over tau, Y and M
    for k in range(STATES):  # fresh Data per call: Pinocchio 4.1's crba of a mimic model reads stale Data
        qp, dqp, ddqp = (np.zeros(model.nv) for _ in range(3))
        qp[actuated], dqp[actuated], ddqp[actuated] = q[k], dq[k], ddq[k]
        config = _configuration(model, qp)
        tau_pin = pin.rnea(model, model.createData(), config, dqp, ddqp)[actuated]
        m_pin = pin.crba(model, model.createData(), config)
        m_pin = (np.triu(m_pin) + np.triu(m_pin, 1).T)[np.ix_(actuated, actuated)]
        y_full = pin.computeJointTorqueRegressor(full, full.createData(), _configuration(full, g @ qp + o),
                                                 g @ dqp, g @ ddqp)
        y_pin = (g.T @ y_full)[actuated].reshape(robot.n, -1, 10)[:, bodies][:, :, PIN_ORDER].reshape(robot.n, -1)
        np.testing.assert_allclose(tau[k], tau_pin, rtol=0, atol=1e-9 * max(1.0, np.abs(tau_pin).max()))
        np.testing.assert_allclose(y[k], y_pin, rtol=0, atol=1e-9 * max(1.0, np.abs(y_pin).max()))
        np.testing.assert_allclose(m[k], m_pin, rtol=0, atol=1e-9 * max(1.0, np.abs(m_pin).max()))
        worst = max([worst] + [np.abs(a - b).max() / max(1.0, np.abs(b).max())
                               for a, b in ((tau[k], tau_pin), (y[k], y_pin), (m[k], m_pin))])
    np.testing.assert_allclose(y @ robot.parameters(), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
    print(f"\nexample:{name}: n = {robot.n}, n_bodies = {robot.n_bodies}, largest deviation from Pinocchio {worst:.1e}")
