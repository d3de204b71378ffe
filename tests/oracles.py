"""Pinocchio as an independent oracle (its own URDF parser and algorithms)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

# Pinocchio's dynamic parameters are [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz];
# dynid's (thesis eq. 3.14) are [m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz].
PIN_ORDER = np.array([0, 1, 2, 3, 4, 5, 7, 6, 8, 9])


def pin_model(urdf_path, gravity) -> pin.Model:
    model = pin.buildModelFromUrdf(str(urdf_path))
    model.gravity.linear = np.asarray(gravity, dtype=float)
    return model


def pin_configuration(model: pin.Model, q: np.ndarray) -> np.ndarray:
    """dynid joint positions (n,) -> Pinocchio configuration (nq,) (cos/sin for continuous)."""
    out = np.zeros(model.nq)
    for k, joint in enumerate(model.joints[1:]):
        if joint.nq == 2:
            out[joint.idx_q:joint.idx_q + 2] = np.cos(q[k]), np.sin(q[k])
        else:
            out[joint.idx_q] = q[k]
    return out


def pin_rnea(model, q, dq, ddq):
    data = model.createData()
    return np.array([pin.rnea(model, data, pin_configuration(model, a), b, c).copy()
                     for a, b, c in zip(q, dq, ddq)])


def pin_regressor(model, q, dq, ddq):
    data = model.createData()
    out = []
    for a, b, c in zip(q, dq, ddq):
        y = pin.computeJointTorqueRegressor(model, data, pin_configuration(model, a), b, c).copy()
        out.append(y.reshape(model.nv, -1, 10)[:, :, PIN_ORDER].reshape(model.nv, -1))
    return np.array(out)


def pin_mass_matrix(model, q):
    data = model.createData()
    out = []
    for a in q:
        m = pin.crba(model, data, pin_configuration(model, a)).copy()
        out.append(np.triu(m) + np.triu(m, 1).T)
    return np.array(out)


def pin_gravity(model, q):
    data = model.createData()
    return np.array([pin.computeGeneralizedGravity(model, data, pin_configuration(model, a)).copy()
                     for a in q])


def pin_parameters(model) -> np.ndarray:
    return np.concatenate([model.inertias[i].toDynamicParameters()[PIN_ORDER]
                           for i in range(1, model.njoints)])
