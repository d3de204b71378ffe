"""Physical facts of the rigid-body model, checked with hypothesis over robots and states.

The examples are derandomized (every random choice takes a seed): the same robots and states on
every run and machine, no example replayed from a local .hypothesis database."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynid
from dynid.dynamics import integrate_rk4

ROBOTS = {name: dynid.load_robot(name) for name in ("er3a", "kr500-rail", "planar6", "scara5", "planar2")}
robot_names = st.sampled_from(sorted(ROBOTS))
seeds = st.integers(0, 2**32 - 1)
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True, database=None)


def _states(robot, seed, count=16):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2.5, 2.5, (3, count, robot.n))


@PROPERTY
@given(robot_names, seeds)
def test_mass_matrix_symmetric_positive_definite(name, seed):
    robot = ROBOTS[name]
    q, _, _ = _states(robot, seed)
    m = dynid.mass_matrix(robot, q)
    np.testing.assert_allclose(m, np.swapaxes(m, 1, 2), rtol=0, atol=1e-12 * np.abs(m).max())
    assert np.all(np.linalg.eigvalsh(m) > 0)


@PROPERTY
@given(robot_names, seeds)
def test_forward_after_inverse_dynamics_is_identity(name, seed):
    robot = ROBOTS[name]
    q, dq, ddq = _states(robot, seed)
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    back = dynid.forward_dynamics(robot, q, dq, tau)
    np.testing.assert_allclose(back, ddq, rtol=0, atol=1e-9 * max(1.0, np.abs(ddq).max()))


@PROPERTY
@given(robot_names, seeds)
def test_regressor_times_parameters_is_torque(name, seed):
    robot = ROBOTS[name]
    q, dq, ddq = _states(robot, seed)
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    y = dynid.regressor(robot, q, dq, ddq)
    np.testing.assert_allclose(y @ robot.parameters(), tau, rtol=0, atol=1e-10 * max(1.0, np.abs(tau).max()))


@PROPERTY
@given(robot_names, seeds)
def test_inverse_dynamics_splits_into_mass_coriolis_gravity(name, seed):
    robot = ROBOTS[name]
    q, dq, ddq = _states(robot, seed)
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    parts = (np.einsum("nij,nj->ni", dynid.mass_matrix(robot, q), ddq)
             + dynid.coriolis_torques(robot, q, dq) + dynid.gravity_torques(robot, q))
    np.testing.assert_allclose(parts, tau, rtol=0, atol=1e-10 * max(1.0, np.abs(tau).max()))


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_kinetic_energy_rate_is_power_of_torque_minus_gravity(name, seed=11):
    """Along simulated motion, dT/dt = dq . (tau - g(q)) (work-energy theorem).

    Integrated over 0.3 s of RK4 motion (dt = 2 ms); the tolerance covers the O(dt^4)
    integration and Simpson errors (measured <= 4e-6 relative), while a wrong Coriolis or
    gravity term gives errors of order one.
    """
    robot = ROBOTS[name]
    rng = np.random.default_rng(seed)
    amp, freq, phase = rng.uniform(0.2, 1.0, (3, robot.n))
    q0 = rng.uniform(-1, 1, robot.n)
    scale = np.diag(dynid.mass_matrix(robot, q0))  # torques giving accelerations of O(1)
    dq0 = rng.uniform(-0.5, 0.5, robot.n)

    def torque(t, q, dq):  # gravity compensation, a sinusoid and damping keep the motion tame
        t = np.reshape(t, (-1, 1))
        return dynid.gravity_torques(robot, q) + scale * (amp * np.sin(2 * np.pi * freq * t + phase) - 2.0 * dq)

    dt, steps = 2e-3, 150
    t, q, dq = integrate_rk4(robot, q0, dq0, torque, dt, steps)
    q, dq = q[:, 0], dq[:, 0]
    kinetic = dynid.kinetic_energy(robot, q, dq)
    tau = torque(t, q, dq)
    power = np.sum(dq * (tau - dynid.gravity_torques(robot, q)), axis=1)
    # Simpson's rule over pairs of steps against the change of kinetic energy
    work = np.cumsum(dt / 3 * (power[0:-2:2] + 4 * power[1:-1:2] + power[2::2]))
    change = kinetic[2::2] - kinetic[0]
    np.testing.assert_allclose(work, change, rtol=0, atol=2e-5 * max(1e-3, np.abs(change).max()))


def test_potential_energy_gradient_is_gravity_torque():
    """g(q) = dV/dq, by central differences."""
    for robot in ROBOTS.values():
        q = np.random.default_rng(3).uniform(-2, 2, robot.n)
        h = 1e-6
        grad = np.array([(dynid.potential_energy(robot, q + h * e) - dynid.potential_energy(robot, q - h * e)) / (2 * h)
                         for e in np.eye(robot.n)])
        np.testing.assert_allclose(grad, dynid.gravity_torques(robot, q), rtol=0, atol=1e-6 * max(1, np.abs(grad).max()))


def test_kinetic_energy_is_half_dq_m_dq():
    for robot in ROBOTS.values():
        q, dq, _ = _states(robot, 4)
        m = dynid.mass_matrix(robot, q)
        np.testing.assert_allclose(dynid.kinetic_energy(robot, q, dq), 0.5 * np.einsum("ni,nij,nj->n", dq, m, dq),
                                   rtol=1e-12)
