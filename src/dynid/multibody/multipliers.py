"""Lagrange multipliers of eq. 111 from a body data file, read as joint forces and moments
(seed 000, section 3.2: lambda_k1..3 are the constraint force, lambda_k4,5 the constraint
moments of joint k)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError
from dynid.multibody.bodies import body_model
from dynid.multibody.bodydata import BodyData
from dynid.multibody.constrained import inverse
from dynid.multibody.coordinates import body_coordinates
from dynid.multibody.quaternion import Quaternion
from dynid.multibody.states import BodyStates


def states_from_body_data(model, data: BodyData) -> BodyStates:
    """BodyStates from a body data file. The file has no centre-of-mass velocity: it follows
    from the angular velocities through the revolute joints (v_j = v_i + w_i x (O_k - r_i) +
    w_j x (r_j - O_k)); a prismatic joint adds its slide rate, differentiated numerically
    from the sampled joint points."""
    N, n = data.r.shape[:2]
    v = np.zeros((N, n, 3))
    for k in range(n):
        i = int(model.inside[k])
        o_k = data.joint_point[:, k]
        v_o = np.zeros((N, 3)) if i < 0 else v[:, i] + np.cross(data.w[:, i], o_k - data.r[:, i])
        if model.prismatic[k]:
            if N < 2:
                raise DataError("body data: a prismatic joint needs at least 2 samples to estimate its slide rate")
            base = np.zeros((N, 3)) if i < 0 else data.r[:, i]
            rel = o_k - base
            drel = np.gradient(rel, data.t, axis=0)
            if i >= 0:
                drel = drel - np.cross(data.w[:, i], rel)  # rate seen from the inside body
            if i < 0:
                axis = np.broadcast_to(model.axis_in[k], (N, 3))
            else:
                axis = np.einsum("nab,b->na", Quaternion.rotation(data.quat[:, i]), model.axis_in[k])
            v_o = v_o + np.sum(drel * axis, -1, keepdims=True) * axis
        v[:, k] = v_o + np.cross(data.w[:, k], data.r[:, k] - o_k)
    return BodyStates(data.r, v, data.a, Quaternion.rotation(data.quat), data.w, data.dw, data.joint_point)


@dataclass(frozen=True)
class JointMultipliers:
    """At one sample: lam (n, 5); tau (n,); force, moment (n, 3) frame 0 (moment about O_k);
    force_local, moment_local (n, 3) in the axes e^(k) of the outside body; measured force and
    moment from the file (n, 3)."""

    t: float
    lam: np.ndarray
    tau: np.ndarray
    force: np.ndarray
    moment: np.ndarray
    force_local: np.ndarray
    moment_local: np.ndarray
    measured_force: np.ndarray
    measured_moment: np.ndarray


def multipliers_at(robot, data: BodyData, form, time: float, static: bool = False) -> JointMultipliers:
    """Solve eq. 110 for the joint efforts and multipliers at the sample nearest ``time``;
    ``static``: of the pose at that time held at rest (zero velocities and accelerations),
    which is what the seeds' printed multipliers (eqs. 113-118) describe."""
    model = body_model(robot)
    j = int(np.argmin(np.abs(data.t - time)))
    spacing = np.min(np.diff(data.t)) if len(data.t) > 1 else 0.0
    if abs(data.t[j] - time) > max(spacing / 2, 1e-9) + 1e-12:
        raise DataError(f"body data has no sample at t = {time} s (range {data.t[0]}..{data.t[-1]} s)")
    states = states_from_body_data(model, data)
    one = BodyStates(*(getattr(states, f)[j:j + 1] for f in BodyStates.__dataclass_fields__))
    q, qd, qdd = body_coordinates(form, one, "body data")
    if static:
        qd, qdd = np.zeros_like(qd), np.zeros_like(qdd)
    sol = inverse(model, form, q, qd, qdd)
    rot = one.rotation[0]
    n = model.n
    return JointMultipliers(
        float(data.t[j]), sol.lam[0, :5 * n].reshape(n, 5), sol.tau[0], sol.force[0], sol.moment[0],
        np.einsum("kji,kj->ki", rot, sol.force[0]), np.einsum("kji,kj->ki", rot, sol.moment[0]),
        data.force[j], data.moment[j])
