"""Simulated logs with the defects of real ones (shared by the accuracy tests): torque-sensor
noise, drive torque ripple, encoder quantization and dropped samples."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import dynid
from dynid.identify.model import ModelOptions
from dynid.simulate import Measurement, random_multisine, simulate_joint_data
from dynid.simulate.defects import Defects, degrade


def realistic_log(robot, rate: float, seconds: float, seed: int, noise: float = 0.002, ripple: float = 0.005,
                  encoder_counts: float = 500.0, drop: float = 0.01, f0: float = 0.2, harmonics: int = 5,
                  options: ModelOptions = ModelOptions(), theta=None, still: tuple[int, ...] = (),
                  still_amplitude: float = 0.01):
    """(measured JointData, t (N,), true torques (N, n)) of a random multi-sine (bandwidth
    f0 * harmonics) at ``rate`` Hz: torque noise and ripple amplitudes as shares of each
    joint's RMS rigid-body torque; q quantized by a motor encoder of ``encoder_counts`` per
    revolution (dq, ddq not logged); a share ``drop`` of the rows lost. Joints in ``still``
    (0-based) are held nearly still: their motion scaled to a peak of ``still_amplitude`` rad
    about the middle of their range (a real arm's "held" joints wander as much)."""
    t = np.arange(0.0, seconds, 1.0 / rate)
    motion = random_multisine(robot, seed=seed, f0=f0, harmonics=harmonics)
    if still:
        amp = motion.amp.copy()
        for j in still:
            amp[j] *= still_amplitude / max(float(np.sum(np.abs(amp[j]))), 1e-12)  # sum bounds the peak
        motion = replace(motion, amp=amp)
    q, dq, ddq = motion.sample(t)
    rms = np.sqrt(np.mean(dynid.inverse_dynamics(robot, q, dq, ddq) ** 2, axis=0))
    data, tau_true, _ = simulate_joint_data(robot, t, q, dq, ddq, options, theta=theta, seed=seed,
                                            measurement=Measurement(tuple(noise * rms), encoder_counts))
    data = degrade(robot, data, q, Defects(ripple=tuple(ripple * rms), drop=drop), seed=seed + 1000)
    return data, t, tau_true
