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


def split_log(data, t_start: float, t_end: float):
    """The rows of ``data`` with t_start <= t < t_end: a piece of a longer log cut at arbitrary
    points, as a user splits a recording into a training and a test file."""
    return data.select((data.t >= t_start) & (data.t < t_end))


def drop_cycles(data, share: float, seed: int, low: float = 0.002, high: float = 0.009):
    """``data`` with runs of consecutive samples lost: about ``share`` of the log's duration in
    gaps of ``low``..``high`` s each (a real-time controller that misses cycles now and then),
    the first and last rows kept."""
    rng = np.random.default_rng(seed)
    duration = float(data.t[-1] - data.t[0])
    keep = np.ones(len(data), dtype=bool)
    lost = 0.0
    while lost < share * duration:
        length = rng.uniform(low, high)
        start = rng.uniform(data.t[0] + 0.05 * duration, data.t[-1] - 0.05 * duration)
        keep &= ~((data.t > start) & (data.t <= start + length))
        lost += length
    return data.select(keep)


def resonance_torque(robot, t: np.ndarray, ddq_true: np.ndarray, seed: int, frequency=(30.0, 40.0),
                     amplitude: float = 2e-4, damping: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """(deflection (N, n) [rad], torque (N, n)) of a lightly damped structural mode of 30-40 Hz on
    the uniform grid t (N,): each joint's deflection d_j obeys d'' + 2 zeta w d' + w^2 d = -c_j ddq_j
    (excited by the motion's acceleration ddq_true, a peak of about ``amplitude`` rad); the motor's
    torque carries the rotor inertia times d'' (the current that makes the rotor vibrate)."""
    import scipy.signal

    rng = np.random.default_rng(seed)
    n = ddq_true.shape[1]
    w = 2.0 * np.pi * rng.uniform(*frequency, n)
    dt = float(t[1] - t[0])
    deflection = np.empty_like(ddq_true)
    for j in range(n):  # one small ODE per joint, discretized exactly (zero-order hold of ddq)
        system = scipy.signal.cont2discrete(([-1.0], [1.0, 2 * damping * w[j], w[j] ** 2]), dt, method="zoh")
        deflection[:, j] = scipy.signal.lfilter(system[0].ravel(), system[1], ddq_true[:, j])
    deflection *= amplitude / np.maximum(np.max(np.abs(deflection), axis=0), 1e-300)
    dd = np.gradient(np.gradient(deflection, dt, axis=0), dt, axis=0)
    return deflection, dd * robot.rotor_inertias


def structural_resonance(robot, data, t: np.ndarray, ddq_true: np.ndarray, seed: int, **mode):
    """``data`` whose positions carry the structural mode of ``resonance_torque`` (a motor-side
    encoder sees the gearbox and link flex) and whose torques carry its rotor torque. t (N,) and
    ddq_true (N, n) are the log's times and true accelerations before rows were dropped: the mode
    is simulated on them, then sampled at data.t."""
    deflection, torque = resonance_torque(robot, t, ddq_true, seed, **mode)
    index = np.clip(np.rint((data.t - t[0]) / float(t[1] - t[0])).astype(np.int64), 0, len(t) - 1)
    tau = None if data.tau is None else data.tau + torque[index]
    return replace(data, q=data.q + deflection[index], tau=tau)


def current_ripple(data, amplitude, frequency: float = 300.0, seed: int = 0):
    """``data`` whose torques carry a ripple of fixed ``frequency`` [Hz] (a current sensor's or
    the PWM's, independent of the motion) of ``amplitude`` (one number or one per joint)."""
    rng = np.random.default_rng(seed)
    n = data.q.shape[1]
    phase = rng.uniform(0.0, 2.0 * np.pi, n)
    ripple = np.broadcast_to(np.asarray(amplitude, dtype=float), (n,)) * np.sin(
        2.0 * np.pi * frequency * data.t[:, None] + phase)
    return replace(data, tau=data.tau + ripple)


def short_fast_log(robot, seed: int, seconds: float = 9.0, rate: float = 5000.0, f0: float = 0.3,
                   harmonics: int = 4):
    """(measured JointData, t (N,), true torques (N, n), true ddq (N, n)) of issue 22's short fast
    log: a multi-sine up to f0 * harmonics, 4096-count motor encoders, a 30-40 Hz structural mode
    in q (``structural_resonance``, seed + 1), 1 % current ripple at 300 Hz (seed + 2), torque
    noise and drive ripple, 1 % of the rows dropped (``realistic_log``)."""
    data, t, tau = realistic_log(robot, rate, seconds, seed=seed, f0=f0, harmonics=harmonics, encoder_counts=4096)
    _, _, ddq = random_multisine(robot, seed=seed, f0=f0, harmonics=harmonics).sample(t)
    data = structural_resonance(robot, data, t, ddq, seed=seed + 1)
    data = current_ripple(data, 0.01 * np.sqrt(np.mean(tau ** 2, axis=0)), 300.0, seed=seed + 2)
    return data, t, tau, ddq


def resting_log(robot, rate: float, seconds: float, seed: int, share: float = 0.3, held: str = "random",
                static: float = 1.2, noise: float = 0.002, ripple: float = 0.005, encoder_counts: float = 500.0,
                jitter: float = 0.3, drop: float = 0.01, f0: float = 0.2, harmonics: int = 5,
                together: bool = True, ramp: float = 0.3, options: ModelOptions = ModelOptions(), ends: float = 0.0,
                friction_share: float = 0.05):
    """A robot that stops and rests about ``share`` of the time (simulate/rest.py): the
    ``realistic_log`` defects (torque noise and drive ripple as shares of the RMS rigid-body
    torque, motor encoders of ``encoder_counts`` with ``jitter`` counts of white noise before
    rounding, a share ``drop`` of rows lost) and, at rest, static friction holding a torque
    within +-``static`` x Fc per rest (``held``: "random" or "last", ``held_friction``); the
    friction of each joint in proportion to its own torque (``joint_friction``).
    ``together``: the whole robot rests at once; else each joint on its own. ``ends`` > 0: the
    log starts and ends at rest for that long [s] (a recording started and stopped by hand).
    ``friction_share``: Coulomb friction as a share of each joint's RMS torque (``joint_friction``).

    Returns (measured JointData, t (N,), true torques (N, n) with the held friction,
    at_rest (N, n), the model's torque (N, n): friction 0 at rest, friction (n, k))."""
    from dynid.simulate.rest import held_friction, rest_schedule, resting_motion

    t = np.arange(0.0, seconds, 1.0 / rate)
    motion = random_multisine(robot, seed=seed, f0=f0, harmonics=harmonics)
    schedule = rest_schedule(robot.n, seconds, share, seed=seed + 1, ramp=ramp, together=together, ends=ends)
    q, dq, ddq = resting_motion(motion, schedule, t)
    at_rest = schedule.at_rest(t)
    rms = np.sqrt(np.mean(dynid.inverse_dynamics(robot, q, dq, ddq)[~at_rest.any(axis=1)] ** 2, axis=0))
    friction = joint_friction(robot, options, f0, harmonics, friction_share)
    data, tau_model, _ = simulate_joint_data(robot, t, q, dq, ddq, options, friction=friction, seed=seed,
                                             measurement=Measurement(tuple(noise * rms), encoder_counts,
                                                                     encoder_jitter=jitter))
    # each motor's held torque acts on the joints through its row of R (identify/model.py, C1)
    motor_dq = dq @ robot.motor_rows.T if robot.is_coupled else dq
    hold = held_friction(t, motor_dq, schedule, static * friction[:, 0], held, seed=seed + 2)
    hold = hold @ robot.motor_rows if robot.is_coupled else hold
    data = replace(data, tau=data.tau + hold)
    data = degrade(robot, data, q, Defects(ripple=tuple(ripple * rms), drop=drop), seed=seed + 1000)
    return data, t, tau_model + hold, at_rest, tau_model, friction


def joint_friction(robot, options: ModelOptions = ModelOptions(), f0: float = 0.2, harmonics: int = 5,
                   share: float = 0.05) -> np.ndarray:
    """(n, k) friction that depends on the robot only, in proportion to each joint's torque (a
    real wrist's friction is as large a share of its torque as the base's): Coulomb ``share``
    x the joint's RMS torque (rigid body and rotor inertia) along a reference multi-sine (seed
    0, bandwidth f0 x harmonics), viscous the same per rad/s of its RMS velocity; with a coupled
    transmission, per motor (its joint's share)."""
    from dynid.identify.model import full_parameters, model_torques

    t = np.arange(0.0, 1.0 / f0, 0.01)
    q, dq, ddq = random_multisine(robot, seed=0, f0=f0, harmonics=harmonics).sample(t)
    rigid = ModelOptions("none", options.rotor_inertia, False)
    tau = model_torques(robot, q, dq, ddq, full_parameters(robot, rigid), rigid)
    rms_tau, rms_dq = np.sqrt(np.mean(tau**2, axis=0)), np.sqrt(np.mean(dq**2, axis=0))
    fc, fv = share * rms_tau, share * rms_tau / np.maximum(rms_dq, 1e-6)
    if options.friction == "coulomb-viscous":
        return np.column_stack([fc, fv])
    raise ValueError(f"joint_friction: coulomb-viscous only, not {options.friction}")


def jitter_stamps(data, spread: float, seed: int):
    """``data`` whose time stamps carry a uniform jitter of +-``spread`` [s] (a logger stamping
    each sample when its thread runs, not when the controller sampled it); the order kept."""
    rng = np.random.default_rng(seed)
    t = data.t + rng.uniform(-spread, spread, len(data))
    return replace(data, t=np.maximum.accumulate(t))


def delayed_torque(data, delay: float):
    """``data`` whose logged torque lags its positions by ``delay`` [s] (a drive's current
    filter): each row's torque is the one of the row ``delay`` earlier on the log's own time,
    linearly interpolated; rows whose earlier torque is not in the log are left out."""
    keep = data.t >= data.t[0] + delay
    tau = np.column_stack([np.interp(data.t[keep] - delay, data.t, data.tau[:, j])
                           for j in range(data.tau.shape[1])])
    return replace(data.select(keep), tau=tau)


def logged_columns(data, gains=None, degrees=None) -> dict:
    """Columns as a drive logs them: with ``gains`` (n,) [N m/A], currents i_j = tau_j / K_j instead
    of torques (``--current-gain``); where ``degrees`` (n,) is true (the revolute joints), positions
    in degrees (``--degrees``)."""
    from dynid.data.io import joint_data_columns

    cols = joint_data_columns(data)
    out = {}
    for name, value in cols.items():
        if name.startswith("tau") and gains is not None:
            j = int(name[3:]) - 1
            out[f"i{j + 1}"] = value / gains[j]
        elif degrees is not None and name[:1] == "q" and name[1:].isdigit() and degrees[int(name[1:]) - 1]:
            out[name] = np.degrees(value)
        else:
            out[name] = value
    return out


def sensor_error(data, joint: int, bias: float = 0.0, scale: float = 1.0):
    """``data`` whose torque sensor of ``joint`` (0-based) reads ``scale`` x tau + ``bias`` (a
    strain-gauge offset and a gain error the user does not know of)."""
    tau = data.tau.copy()
    tau[:, joint] = scale * tau[:, joint] + bias
    return replace(data, tau=tau)


def stamps_at_resolution(data, resolution: float, latency: float, seed: int):
    """``data`` whose time stamps are the sampling instants plus a random latency uniform in
    [0, ``latency``] [s] (the logger's thread), cut to ``resolution`` [s] (a millisecond clock):
    two rows logged within one tick get equal stamps, the order is kept."""
    rng = np.random.default_rng(seed)
    t = np.floor((data.t + rng.uniform(0.0, latency, len(data))) / resolution + 1e-9) * resolution
    return replace(data, t=np.maximum.accumulate(t))


def wrapped(q: np.ndarray) -> np.ndarray:
    """Angles wrapped to [-pi, pi) (an absolute encoder's or a driver's angle)."""
    return (q + np.pi) % (2.0 * np.pi) - np.pi


def position_glitch(data, joint: int, row: int, size: float):
    """``data`` with one corrupt position sample: q[row, joint] off by ``size`` [rad | m]."""
    q = data.q.copy()
    q[row, joint] += size
    return replace(data, q=q)
