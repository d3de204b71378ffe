"""The dynamics written with the generalized momentum, as regressors linear in the parameters.

With M(q) the joint-space inertia (rigid body + diag(I_a)), p = M(q) dq and the Christoffel
form C(q, dq) dq = M_dot dq - (1/2) d/dq (dq^T M dq), the equation of motion
M ddq + C dq + g + f(dq) = tau_m becomes (docs/voltage_identification.md, eq. V3)

    dp/dt = tau_m - h(q, dq) - f(dq),      h = g(q) + C dq - M_dot dq = g(q) - (1/2) d/dq (dq^T M dq)

Both p and h are linear in the full parameters theta (identify/model.py layout):

    p = Y_p(q, dq) theta:  Y_p = Y(q, 0, dq) without gravity  (M(q) dq), plus dq_j in the I_a column
    h = Y_h(q, dq) theta:  Y_h = Y(q, dq, 0) - D_q[Y_p(q, v)](dq) at v = dq

Y(q, dq, 0) is C dq + g, and D_q[Y_p](dq) = M_dot dq is the derivative of Y_p along dq at fixed
v, a five-point central difference with step eps_k = 1e-3 / max_j |dq_kj| per sample (truncation
~eps^4 ~1e-12 relative, rounding ~1e-13). Friction and offset columns go to the
non-derivative part ``Y_q`` (f(dq) and the constant), so that tau_m = d/dt (Y_p theta) + Y_q theta.
"""

from __future__ import annotations

import numpy as np

from dynid.dynamics import regressor as rigid_body_regressor
from dynid.identify.model import ModelOptions, joint_columns, joint_column_indices, parameter_count

STEP = 1e-3


def require_per_joint_drives(robot) -> None:
    """The drive models (eq. V1-V9) put one motor on one joint: refuse mimic joints and couplings."""
    if robot.has_mimic or robot.is_coupled:
        from dynid.errors import ModelError

        raise ModelError(f"robot '{robot.name}': the drive models take one motor per joint, without mimic joints "
                         "or a coupled transmission; lock the mimic joints (--lock), or simulate and identify "
                         "torques or currents (dynid simulate/identify --motor-side)")


def momentum_regressor(robot, q: np.ndarray, dq: np.ndarray, options: ModelOptions) -> np.ndarray:
    """Y_p (N, n, p) with p = M(q) dq = Y_p theta (rigid body + rotor inertia I_a dq)."""
    require_per_joint_drives(robot)
    n, count = robot.n, q.shape[0]
    out = np.zeros((count, n, parameter_count(robot, options)))
    out[:, :, : 10 * n] = _rigid_momentum(robot.with_gravity(np.zeros(3)), q, dq)
    if options.rotor_inertia:
        idx = joint_column_indices(robot, options)[:, -1 - int(options.offset)]
        out[:, np.arange(n), idx] = dq
    return out


def _rigid_momentum(robot0, q, v):
    return rigid_body_regressor(robot0, q, np.zeros_like(q), v, folded_kernel=False)  # as identification's


def remainder_regressor(robot, q: np.ndarray, dq: np.ndarray, options: ModelOptions) -> np.ndarray:
    """Y_q (N, n, p): h(q, dq) + friction + offset, so that tau_m = d/dt(Y_p theta) + Y_q theta."""
    n, count = robot.n, q.shape[0]
    out = np.zeros((count, n, parameter_count(robot, options)))
    robot0 = robot.with_gravity(np.zeros(3))
    scale = np.max(np.abs(dq), axis=1)
    eps = np.where(scale > 0, STEP / np.where(scale > 0, scale, 1.0), 0.0)[:, None]
    f = [_rigid_momentum(robot0, q + k * eps * dq, dq) for k in (-2, -1, 1, 2)]
    safe = np.where(eps > 0, eps, 1.0)[:, :, None]
    m_dot = (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * safe)  # D_q Y_p along dq
    out[:, :, : 10 * n] = rigid_body_regressor(robot, q, dq, np.zeros_like(q), folded_kernel=False) - m_dot
    own = joint_columns(dq, np.zeros_like(dq), options)  # friction, (I_a: zero here), offset
    joints = np.arange(n)
    for c, index in enumerate(joint_column_indices(robot, options).T):
        out[:, joints, index] = own[:, :, c]
    return out
