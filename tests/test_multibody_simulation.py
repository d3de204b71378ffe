"""Forward simulation in absolute coordinates (eq. 111 with Baumgarte stabilization) follows
the joint-space forward dynamics of the same robot."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.dynamics import integrate_rk4
from dynid.multibody import angular_form, body_coordinates, body_model, body_states
from dynid.multibody.integrate import simulate
from dynid.multibody.states import joint_positions


@pytest.mark.parametrize("name,form_name", [("kr500", "quaternion"), ("kr500-rail", "cardan"),
                                            ("er3a", "quaternion")])
def test_absolute_coordinates_track_joint_space_simulation(name, form_name):
    robot = dynid.load_robot(name)
    model = body_model(robot)
    rng = np.random.default_rng(21)
    q0, dq0 = rng.uniform(-0.8, 0.8, robot.n), rng.normal(0.0, 0.5, robot.n)
    # a smooth open-loop effort of about 2 rad/s^2 per joint on top of free fall under gravity
    gain = 2.0 * np.diagonal(dynid.mass_matrix(robot, q0[None])[0]) * rng.choice([-1.0, 1.0], robot.n)

    def effort(t):
        return gain * np.sin(3.0 * t)

    dt, steps = 2e-3, 100
    _, q_joint, _ = integrate_rk4(robot, q0, dq0, lambda t, q, dq: effort(t)[None], dt, steps)[:3]
    form = angular_form(form_name)
    qb, qdb, _ = body_coordinates(form, body_states(model, q0[None], dq0[None], np.zeros((1, robot.n))))
    traj = simulate(model, form, qb[0], qdb[0], lambda t, q, qd: effort(t), dt, steps)
    q_abs = joint_positions(model, form.rotation(traj.q[..., 3:]), traj.q[..., :3])
    travelled = np.max(np.abs(q_joint[:, 0] - q0))
    assert travelled > 0.05  # the robot really moves
    assert np.max(np.abs(q_abs - q_joint[:, 0])) < 1e-6 * max(travelled, 1.0)
    assert np.max(traj.max_violation) < 1e-5  # constraints stay satisfied
