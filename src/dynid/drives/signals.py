"""Simulated drive signals along a joint trajectory: motor currents and voltages (motor.py model).

Given the motion (q, dq, ddq) of any trajectory and the joint torque
tau = Y_rigid theta + Fc sign(dq) + Fv dq (rigid body plus joint friction, no rotor term):

    i = (tau / N + J_m N ddq + b_m N dq) / K_t                               (eq. V1)
    u = R i + L di/dt + K_b N dq          (dc-motor)                          (eq. V2)
    u = i / K_a                           (servo-current)
    u = (i / K_a + N dq) / K_v            (servo-velocity)

di/dt is the derivative of eq. V1 along the trajectory: a fourth-order central difference of
the exact current at t +- delta, t +- 2 delta (delta = 1e-4 s; truncation ~1e-13 relative for
motions below 10 Hz). With the hard sign, the Coulomb step at a velocity reversal is taken as an
instantaneous current step (its derivative is left out); with a tanh sign it is differentiated.
"""

from __future__ import annotations

import numpy as np

from dynid.drives.motor import DriveSet
from dynid.identify.model import ModelOptions, full_parameters, model_torques

DELTA = 1e-4


def joint_torques(robot, q, dq, ddq, friction: np.ndarray, smooth_sign: float = 0.0,
                  coulomb: bool = True) -> np.ndarray:
    """tau (N, n): rigid body + joint Coulomb/viscous friction ``friction`` (n, 2) = [Fc, Fv]."""
    f = np.asarray(friction, dtype=float).reshape(robot.n, 2)
    if not coulomb:
        f = np.column_stack([np.zeros(robot.n), f[:, 1]])
    options = ModelOptions("coulomb-viscous", rotor_inertia=False, smooth_sign=smooth_sign)
    return model_torques(robot, q, dq, ddq, full_parameters(robot, options, f), options)


def motor_currents(robot, drives: DriveSet, q, dq, ddq, friction, smooth_sign: float = 0.0,
                   coulomb: bool = True) -> np.ndarray:
    """Eq. V1: i (N, n) [A]."""
    tau = joint_torques(robot, q, dq, ddq, friction, smooth_sign, coulomb)
    tau_m = tau + drives.joint_rotor_inertia * ddq + drives.joint_motor_viscous * dq
    return tau_m / drives.current_gain


def drive_signals(robot, drives: DriveSet, sample, t: np.ndarray, friction: np.ndarray,
                  smooth_sign: float = 0.0) -> dict:
    """Exact drive signals at times t (N,) of the motion ``sample(t) -> (q, dq, ddq)``.

    friction: (n, 2) joint-side [Fc, Fv]. Returns {"q", "dq", "ddq", "tau" (joint torque),
    "i" (eq. V1), "di" (di/dt), "u" (eq. V2 or the servo command)}, each (N, n).
    """
    t = np.asarray(t, dtype=float)
    q, dq, ddq = sample(t)
    i = motor_currents(robot, drives, q, dq, ddq, friction, smooth_sign)
    smooth_part = smooth_sign > 0.0  # the hard sign's step is not differentiated
    shifted = []
    for k in (-2, -1, 1, 2):
        qk, dqk, ddqk = sample(t + k * DELTA)
        shifted.append(motor_currents(robot, drives, qk, dqk, ddqk, friction, smooth_sign, coulomb=smooth_part))
    di = (shifted[0] - 8.0 * shifted[1] + 8.0 * shifted[2] - shifted[3]) / (12.0 * DELTA)
    n_dq = drives.gear_ratio * dq
    if drives.kind == "dc-motor":
        u = drives.resistance * i + drives.inductance * di + drives.back_emf * n_dq
    elif drives.kind == "servo-current":
        u = i / drives.amplifier_gain
    else:
        u = (i / drives.amplifier_gain + n_dq) / drives.velocity_gain
    return {"q": q, "dq": dq, "ddq": ddq, "tau": joint_torques(robot, q, dq, ddq, friction, smooth_sign),
            "i": i, "di": di, "u": u}


def identification_truth(robot, drives: DriveSet, friction: np.ndarray, signal: str) -> tuple[np.ndarray, np.ndarray]:
    """The true (full parameters theta (p,), input gains (n,)) of the acceleration-free model
    with ModelOptions('coulomb-viscous', rotor_inertia=True) (eq. V5):

    signal 'current': gain k = N K_t, viscous Fv + N^2 b_m;
    signal 'voltage': gain a (``DriveSet.gains``), viscous Fv + N^2 b_m + c (back-EMF or loop damping).
    """
    f = np.array(friction, dtype=float).reshape(robot.n, 2)
    f[:, 1] += drives.joint_motor_viscous
    if signal == "current":
        gain = drives.current_gain
    else:
        gain, c = drives.gains()
        f[:, 1] += c
    theta = np.concatenate([robot.physical.parameters(), f.reshape(-1), drives.joint_rotor_inertia])
    return theta, gain
