"""Forward dynamics and a fixed-step integrator for joint-space simulation."""

from __future__ import annotations

import numpy as np

from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.mass_matrix import mass_matrix
from dynid.dynamics.rnea import inverse_dynamics


def forward_dynamics(robot, q, dq, tau) -> np.ndarray:
    """ddq = M(q)^-1 (tau - c(q, dq) - g(q)); all arrays (N, n), batched solve. With mimic joints
    M and the bias are those of the actuated coordinates (dynamics/mimic.py, M2): the follower's
    inertia loads its leader."""
    (q, dq, tau), single = joint_arrays(robot, q=q, dq=dq, tau=tau)
    bias = inverse_dynamics(robot, q, dq, np.zeros_like(q))
    ddq = np.linalg.solve(mass_matrix(robot, q), (tau - bias)[..., None])[..., 0]
    return ddq[0] if single else ddq


def rk4_step(f, t: float, q: np.ndarray, dq: np.ndarray, dt: float):
    """One classical Runge-Kutta step of the second-order system (dq/dt, ddq/dt) = f(t, q, dq)."""
    k1q, k1v = f(t, q, dq)
    k2q, k2v = f(t + dt / 2, q + dt / 2 * k1q, dq + dt / 2 * k1v)
    k3q, k3v = f(t + dt / 2, q + dt / 2 * k2q, dq + dt / 2 * k2v)
    k4q, k4v = f(t + dt, q + dt * k3q, dq + dt * k3v)
    return (q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q),
            dq + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v))


def integrate_rk4(robot, q0, dq0, torque, dt: float, steps: int):
    """Simulate ``steps`` fixed RK4 steps from (q0, dq0) (each (n,) or (B, n) for B runs at once).

    torque(t, q, dq) -> (B, n) joint torques. Returns t (steps+1,), q and dq (steps+1, B, n).
    The loop is over time steps (inherently sequential); each step is batched over runs.
    """
    q = np.atleast_2d(np.asarray(q0, dtype=float)).copy()
    dq = np.atleast_2d(np.asarray(dq0, dtype=float)).copy()
    qs, dqs = [q.copy()], [dq.copy()]

    def f(t, q, dq):
        return dq, forward_dynamics(robot, q, dq, torque(t, q, dq))

    for k in range(steps):
        q, dq = rk4_step(f, k * dt, q, dq, dt)
        qs.append(q.copy())
        dqs.append(dq.copy())
    return np.arange(steps + 1) * dt, np.array(qs), np.array(dqs)
