"""Joint-space synthetic experiments: torques of a known model along a trajectory, plus the
defects of real measurements (torque noise, encoder quantization).

The torque is the identification model itself, tau = Y(q, dq, ddq) theta (rigid body,
friction, rotor inertia I_a ddq, offset), evaluated on the exact trajectory; the measured
signals are then degraded:

- encoder quantization: q rounded to the joint-side resolution 2 pi / (counts N_gear) of a
  motor encoder with ``encoder_counts`` per revolution (linear joints: ``encoder_counts``
  counts per metre), and dq, ddq are then not written (they must be estimated from q); with a
  coupled transmission the motor angles q_m = T q are rounded and q = T^-1 q_m;
- encoder jitter: white noise of ``encoder_jitter`` counts (standard deviation) added to the
  encoder's angle before it is rounded: a servo hunting about its set point, or an analog
  resolver; a joint at rest then flickers between counts instead of reading one;
- torque noise: zero-mean Gaussian, standard deviation per joint ``tau_noise`` [N m].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dynid.data.columns import JointData
from dynid.errors import DataError
from dynid.identify.model import FRICTION_MODELS, ModelOptions, full_parameters, model_torques


@dataclass(frozen=True)
class Measurement:
    """How the simulated sensors degrade the signals (defaults: perfect sensors)."""

    tau_noise: tuple[float, ...] | float = 0.0
    encoder_counts: float = 0.0
    write_derivatives: bool = True
    encoder_jitter: float = 0.0

    def __post_init__(self):
        sigma = np.asarray(self.tau_noise, dtype=float)
        if not (np.all(np.isfinite(sigma)) and np.all(sigma >= 0)):
            raise DataError(f"torque noise {np.atleast_1d(sigma).tolist()}: expected standard deviations >= 0")
        if not (math.isfinite(self.encoder_counts) and self.encoder_counts >= 0):
            raise DataError(f"encoder counts {self.encoder_counts:g}: expected a count per revolution >= 0 "
                            "(0 = no quantization)")
        if not (math.isfinite(self.encoder_jitter) and self.encoder_jitter >= 0):
            raise DataError(f"encoder jitter {self.encoder_jitter:g}: expected a standard deviation in counts >= 0")


def default_friction(robot, options: ModelOptions) -> np.ndarray:
    """Plausible friction (n, k) that depends on the robot only (so that two simulated logs of
    one robot share it): Coulomb 5 % of each joint's RMS rigid-body torque over 200 random
    states (seed 0, dq and ddq ~ N(0, 1)) and viscous 5 % of it per rad/s; polynomial and
    asymmetric terms likewise; Stribeck: static friction 1.5 times the Coulomb level;
    load-dependent: Fl = 0.1 (a tenth of the transmitted torque; its ``load_parameters`` are the
    caller's, e.g. ``model.load_parameters`` of the description's)."""
    from dynid.identify.base import random_states

    q, dq, ddq = random_states(robot, 200, seed=0)
    rigid = model_torques(robot, q, dq, ddq, robot.physical.parameters(), ModelOptions("none", False, False))
    rms_tau = np.sqrt(np.mean(rigid**2, axis=0)) + 1e-3
    fc, fv = 0.05 * rms_tau, 0.05 * rms_tau
    if options.friction == "coulomb-viscous":
        return np.column_stack([fc, fv])
    if options.friction == "polynomial":
        return np.column_stack([fc, fv, 0.01 * rms_tau, 0.005 * rms_tau])
    if options.friction == "asymmetric":
        return np.column_stack([fc, 0.8 * fc, fv, 1.2 * fv])
    if options.friction == "stribeck":
        return np.column_stack([fc, 1.5 * fc, fv])
    if options.friction == "load-dependent":
        return np.column_stack([fc, np.full(robot.n, 0.1), fv])
    return np.zeros((robot.n, 0))


def simulate_joint_data(robot, t: np.ndarray, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                        options: ModelOptions = ModelOptions(), friction=None, offsets=None,
                        measurement: Measurement = Measurement(), seed: int = 0,
                        theta: np.ndarray | None = None,
                        drift=None, cold_start: float | None = None,
                        rng: np.random.Generator | None = None) -> tuple[JointData, np.ndarray, np.ndarray]:
    """Simulate a measurement along (t, q, dq, ddq) (N,), (N, n) x 3.

    friction: (n, k) coefficients for ``options.friction`` (default ``default_friction``);
    theta: full parameters (overrides robot + friction + offsets when given);
    drift: a ``simulate.drift.FrictionDrift``: the friction coefficients of theta are the warm
    ones and decay to them from cold over the operating time t - t[0] (theta stays the warm model);
    cold_start: the time of the cold start [s] when it is not t[0] (a log simulated in pieces);
    rng: the generator of the torque noise (default ``np.random.default_rng(seed)``; a log simulated
    in pieces passes one generator to every piece, ``simulate.stream``).
    Returns (measured JointData, true torques (N, n), full parameters theta (p,)).
    """
    rng = np.random.default_rng(seed) if rng is None else rng
    if theta is None:
        if friction is None and FRICTION_MODELS[options.friction]:
            friction = default_friction(robot, options)
        theta = full_parameters(robot, options, friction, offsets)
    tau_true = model_torques(robot, q, dq, ddq, theta, options)
    if drift is not None and FRICTION_MODELS[options.friction]:
        from dynid.identify.model import load_torque, parameter_slices
        from dynid.simulate.drift import friction_excess

        warm = theta[parameter_slices(robot, options)["friction"]]
        elapsed = np.asarray(t, dtype=float) - float(t[0] if cold_start is None else cold_start)
        load = load_torque(robot, q, dq, ddq, options) if options.friction == "load-dependent" else None
        tau_true = tau_true + friction_excess(elapsed, dq, warm, options, drift, load)
    sigma = np.broadcast_to(np.asarray(measurement.tau_noise, dtype=float), (robot.n,))
    tau = tau_true + rng.normal(size=tau_true.shape) * sigma
    q_meas = q
    jitter = (lambda x: x + measurement.encoder_jitter * rng.normal(size=x.shape)) if measurement.encoder_jitter \
        else (lambda x: x)  # noqa: E731 - in counts, before rounding
    if measurement.encoder_counts > 0 and robot.is_coupled:  # encoders count motor angles q_m = T q
        from dynid.robot.transmission import joint_from_motor, motor_from_joint

        t_matrix = robot.transmission_matrix
        step = np.where(robot.is_revolute, 2.0 * np.pi, 1.0) / measurement.encoder_counts
        q_meas = joint_from_motor(t_matrix, np.round(jitter(motor_from_joint(t_matrix, q) / step)) * step)
    elif measurement.encoder_counts > 0:
        per_unit = np.where(robot.is_revolute, 2.0 * np.pi, 1.0)
        step = per_unit / (measurement.encoder_counts * robot.gear_ratios)
        q_meas = np.round(jitter(q / step)) * step
    keep = measurement.write_derivatives and measurement.encoder_counts <= 0
    data = JointData(np.asarray(t, dtype=float), q_meas, dq if keep else None, ddq if keep else None,
                     tau, source="simulation")
    return data, tau_true, theta
