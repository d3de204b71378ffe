"""Rigid-body dynamics agree with Pinocchio (independent parser and algorithms) to 1e-9."""

import numpy as np
import pytest
from oracles import pin_gravity, pin_mass_matrix, pin_model, pin_parameters, pin_regressor, pin_rnea
from urdf_factory import ROBOTS, write_robot

import dynid

N = 40


def _close(a, b, rel=1e-9):
    scale = max(1.0, float(np.max(np.abs(b))))
    np.testing.assert_allclose(a, b, rtol=0, atol=rel * scale)


@pytest.fixture(params=sorted(ROBOTS))
def pair(request, tmp_path):
    path = write_robot(tmp_path, request.param, seed=len(request.param))
    robot = dynid.load_robot(path)
    gravity = [0.3, -1.2, -9.81]
    robot = robot.with_gravity(gravity)
    model = pin_model(path, gravity)
    assert model.nv == robot.n
    rng = np.random.default_rng(7)
    q, dq, ddq = rng.uniform(-2, 2, (3, N, robot.n))
    return robot, model, q, dq, ddq


def test_parameters_match_pinocchio_merged_inertias(pair):
    robot, model, *_ = pair
    _close(robot.parameters(), pin_parameters(model))


def test_inverse_dynamics(pair):
    robot, model, q, dq, ddq = pair
    _close(dynid.inverse_dynamics(robot, q, dq, ddq), pin_rnea(model, q, dq, ddq))


def test_regressor_and_tau_equals_y_theta(pair):
    robot, model, q, dq, ddq = pair
    y = dynid.regressor(robot, q, dq, ddq)
    assert y.shape == (N, robot.n, 10 * robot.n)
    _close(y, pin_regressor(model, q, dq, ddq))
    _close(y @ robot.parameters(), dynid.inverse_dynamics(robot, q, dq, ddq))


def test_mass_matrix_and_gravity(pair):
    robot, model, q, *_ = pair
    _close(dynid.mass_matrix(robot, q), pin_mass_matrix(model, q))
    _close(dynid.gravity_torques(robot, q), pin_gravity(model, q))


def test_single_sample_shapes(pair):
    robot, model, q, dq, ddq = pair
    assert dynid.inverse_dynamics(robot, q[0], dq[0], ddq[0]).shape == (robot.n,)
    assert dynid.regressor(robot, q[0], dq[0], ddq[0]).shape == (robot.n, 10 * robot.n)
    assert dynid.mass_matrix(robot, q[0]).shape == (robot.n, robot.n)


def test_numpy_link_wrenches_project_to_the_same_torques(pair):
    """The NumPy recursion (link_motion + link_wrenches) agrees with the compiled kernel."""
    from dynid.dynamics import link_motion, link_wrenches

    robot, model, q, dq, ddq = pair
    moment, force = link_wrenches(robot, link_motion(robot, q, dq, ddq))
    s = robot.screw_axes
    tau = np.einsum("nij,ij->ni", moment, s[:, :3]) + np.einsum("nij,ij->ni", force, s[:, 3:])
    _close(tau, pin_rnea(model, q, dq, ddq))
