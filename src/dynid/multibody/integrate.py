"""Forward simulation in absolute coordinates with Baumgarte constraint stabilization.

State: body coordinates q (n, d) and rates q_dot. Each RK4 stage solves eq. 111 with
zeta replaced by zeta - 2 alpha Phi_dot - beta^2 Phi (Baumgarte 1972), so that drift of the
joint constraints (and of the quaternion norms) is damped instead of growing. The loop is over
time steps only; each stage is one batched solve of eq. 111.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.dynamics.forward import rk4_step
from dynid.multibody.bodies import BodyModel
from dynid.multibody.constrained import forward
from dynid.multibody.constraints import constraint_terms


@dataclass(frozen=True)
class AbsoluteTrajectory:
    """t (steps+1,); q, qd (steps+1, n, d); max_violation (steps+1,) max |Phi|."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    max_violation: np.ndarray


def simulate(model: BodyModel, form, q0, qd0, torque, dt: float, steps: int,
             stabilization: tuple[float, float] | None = None) -> AbsoluteTrajectory:
    """Integrate eq. 111 from (q0, qd0) (n, d) with fixed RK4 steps of ``dt`` [s].

    torque(t, q, qd) -> (n,) joint efforts. stabilization (alpha, beta) [1/s]; the default
    alpha = beta = min(50, 0.2 / dt) [1/s], a critically damped constraint error.
    """
    if stabilization is None:
        rate = min(50.0, 0.2 / dt)
        stabilization = (rate, rate)
    q = np.asarray(q0, dtype=float)[None].copy()
    qd = np.asarray(qd0, dtype=float)[None].copy()

    def f(t, q, qd):
        tau = np.atleast_2d(torque(t, q[0], qd[0]))
        return qd, forward(model, form, q, qd, tau, stabilization=stabilization, with_reactions=False).qdd

    qs, qds = [q[0].copy()], [qd[0].copy()]
    viol = [np.max(np.abs(constraint_terms(model, form, q, qd).phi))]
    for k in range(steps):
        q, qd = rk4_step(f, k * dt, q, qd, dt)
        qs.append(q[0].copy())
        qds.append(qd[0].copy())
        viol.append(np.max(np.abs(constraint_terms(model, form, q, qd).phi)))
    return AbsoluteTrajectory(np.arange(steps + 1) * dt, np.array(qs), np.array(qds), np.array(viol))
