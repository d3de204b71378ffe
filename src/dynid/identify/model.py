"""The identification model: rigid body + friction + rotor inertia + torque offset.

The joint torques are linear in the full parameter vector (thesis eq. 3.17):

    tau = [K_d  K_f  K_m  K_o] [phi_d; phi_f; phi_m; phi_o] = Y(q, dq, ddq) theta

with, in this order (``parameter_names`` gives the names):

- ``phi_d`` (10 n,): standard inertial parameters, link by link (thesis eq. 3.14), regressor
  ``K_d`` from ``dynid.regressor``;
- ``phi_f`` (k n,): friction coefficients, joint by joint, ``k`` per joint (``friction_columns``):
    ``none``             k = 0
    ``coulomb-viscous``  [Fc, Fv]:            Fc sign(dq) + Fv dq
    ``polynomial``       [Fc, Fv, Fv2, Fv3]:  thesis eq. 3.10, f1 sign(dq) + f2 dq
                                               + f3 dq^2 sign(dq) + f4 dq^3
    ``asymmetric``       [Fcp, Fcn, Fvp, Fvn]: Fcp s+ - Fcn s- + (Fvp s+ + Fvn s-) dq with
                                               s+ = (1 + sign)/2, s- = (1 - sign)/2
    ``stribeck``         [Fc, Fs, Fv]:         (Fc + (Fs - Fc) e) sign(dq) + Fv dq, with
                                               e = exp(-(dq / v_s)^2): Coulomb Fc, static Fs,
                                               viscous Fv, Stribeck velocity v_s per joint
                                               (``ModelOptions.stribeck_velocity``, chosen by
                                               ``identify.stribeck``); columns
                                               [(1 - e) sign, e sign, dq]
    ``load-dependent``   [Fc, Fl, Fv]:         (Fc + Fl |tau_load|) sign(dq) + Fv dq        (L1)
                                               the Coulomb level grows with the torque the
                                               gear transmits (``load_torque``; Hamon, Gautier
                                               & Garrec, IROS 2010; Bittencourt et al., IROS
                                               2010, thesis ref. [5]); Fl is dimensionless;
                                               columns [sign, |tau_load| sign, dq]
  ``sign`` is the hard sign, or ``tanh(dq / smooth_sign)`` when ``smooth_sign > 0``;
- ``phi_m`` (n,): joint-side rotor inertias I_a = N^2 J_m, torque I_a ddq (thesis eq. 3.12);
- ``phi_o`` (n,): per-joint torque offsets (optional).

A robot with mimic joints has 10 standard parameters per moving body, ``phi_d`` (10 n_bodies,)
(dynamics/mimic.py). A coupled transmission q_m = T q (robot/transmission.py) makes friction,
rotor inertia and offset terms of the *motors*: motor k turns at dq_m,k = N_k (R_k . dq) with
R = diag(N)^-1 T, its rotor's kinetic energy 1/2 J_k dq_m,k^2 and its friction torque
f_k(dq_m,k) act on the joints through T^T (tau = T^T tau_m), so with I_a,k = N_k^2 J_k and
friction coefficients in joint-side units (Fc_k = |N_k| Fc_m,k, Fv_k = N_k^2 Fv_m,k):

    tau_i += sum_k R_ki [ I_a,k (R_k . ddq) + F_k(R_k . dq) . phi_f,k + off_k ]          (C1)

Motor k's terms enter every joint equation its row of R touches. For an uncoupled
transmission R = 1 and (C1) is the per-joint model above, number for number. A coupled
motor's parameters are named with an ``m`` (``Iam6``, ``Fcm6``, ``Fvm6``, ``offm6``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.dynamics import regressor as rigid_body_regressor
from dynid.dynamics.arrays import joint_arrays
from dynid.errors import DataError, ModelError

FRICTION_MODELS = {
    "none": (),
    "coulomb-viscous": ("Fc", "Fv"),
    "polynomial": ("Fc", "Fv", "Fv2", "Fv3"),
    "asymmetric": ("Fcp", "Fcn", "Fvp", "Fvn"),
    "stribeck": ("Fc", "Fs", "Fv"),
    "load-dependent": ("Fc", "Fl", "Fv"),
}


@dataclass(frozen=True)
class ModelOptions:
    """Which terms the identification model has.

    friction: one of ``FRICTION_MODELS`` (none | coulomb-viscous | polynomial | asymmetric)
    rotor_inertia: add I_a ddq per joint (thesis eq. 3.12)
    offset: add a constant torque per joint
    smooth_sign: velocity scale [rad/s | m/s] of the tanh sign; 0 uses the hard sign
    stribeck_velocity: ``stribeck`` only: v_s per joint (n,) [rad/s | m/s]; empty until chosen
        from a log (``identify.stribeck``), and the columns refuse to be formed without it
    load_parameters: ``load-dependent`` only: the inertial parameters whose torque is the load
        torque of (L1) (``load_torque``): 10 n_bodies standard ones, then the n rotor inertias
        when ``rotor_inertia``; empty until fitted to a log (``identify.load_friction``)
    """

    friction: str = "coulomb-viscous"
    rotor_inertia: bool = True
    offset: bool = False
    smooth_sign: float = 0.0
    stribeck_velocity: tuple = ()
    load_parameters: tuple = ()

    def __post_init__(self):
        if self.friction not in FRICTION_MODELS:
            raise ModelError(
                f"friction model '{self.friction}' unknown, expected one of {list(FRICTION_MODELS)}"
            )
        if not self.smooth_sign >= 0.0:
            raise ModelError(f"smooth_sign must be >= 0 (a velocity scale), got {self.smooth_sign}")
        object.__setattr__(self, "stribeck_velocity", tuple(float(v) for v in self.stribeck_velocity))
        if self.stribeck_velocity and (self.friction != "stribeck"
                                       or not all(np.isfinite(v) and v > 0 for v in self.stribeck_velocity)):
            raise ModelError(f"stribeck_velocity {list(self.stribeck_velocity)}: positive velocities [rad/s | m/s], "
                             "one per joint, and only with friction 'stribeck'")
        object.__setattr__(self, "load_parameters", tuple(float(v) for v in self.load_parameters))
        if self.load_parameters and (self.friction != "load-dependent"
                                     or not all(np.isfinite(v) for v in self.load_parameters)):
            raise ModelError("load_parameters: finite inertial parameters, and only with friction 'load-dependent'")

    def to_dict(self) -> dict:
        out = {"friction": self.friction, "rotor_inertia": self.rotor_inertia,
               "offset": self.offset, "smooth_sign": self.smooth_sign}
        if self.friction == "stribeck":
            out["stribeck_velocity"] = list(self.stribeck_velocity)
        if self.friction == "load-dependent":
            out["load_parameters"] = list(self.load_parameters)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "ModelOptions":
        return cls(friction=d.get("friction", "coulomb-viscous"),
                   rotor_inertia=bool(d.get("rotor_inertia", True)),
                   offset=bool(d.get("offset", False)),
                   smooth_sign=float(d.get("smooth_sign", 0.0)),
                   stribeck_velocity=tuple(d.get("stribeck_velocity") or ()),
                   load_parameters=tuple(d.get("load_parameters") or ()))


def friction_size(options: ModelOptions) -> int:
    """Number of friction coefficients per joint."""
    return len(FRICTION_MODELS[options.friction])


def parameter_count(robot, options: ModelOptions) -> int:
    """p = 10 n_bodies + k n + (n if rotor inertia) + (n if offset)."""
    n = robot.n
    return 10 * robot.n_bodies + n * (friction_size(options) + int(options.rotor_inertia) + int(options.offset))


def motor_labels(robot) -> list[str]:
    """Suffix of each motor's parameter names: '6' for motor 6 on its joint alone, 'm6' when coupled."""
    coupled = np.count_nonzero(robot.transmission_matrix, axis=1) > 1
    return [f"m{k + 1}" if coupled[k] else f"{k + 1}" for k in range(robot.n)]


def parameter_names(robot, options: ModelOptions) -> list[str]:
    """Names of the full parameter vector, e.g. ``Izz1``, ``Fc2``, ``Ia3``, ``off4``, ``Iam6``."""
    labels = motor_labels(robot)
    names = list(robot.parameter_names())
    names += [f"{f}{label}" for label in labels for f in FRICTION_MODELS[options.friction]]
    if options.rotor_inertia:
        names += [f"Ia{label}" for label in labels]
    if options.offset:
        names += [f"off{label}" for label in labels]
    return names


def parameter_slices(robot, options: ModelOptions) -> dict[str, slice]:
    """Where each group (rigid, friction, rotor_inertia, offset) sits in theta."""
    n, k = robot.n, friction_size(options)
    out, start = {}, 0
    for name, size in (("rigid", 10 * robot.n_bodies), ("friction", k * n),
                       ("rotor_inertia", n if options.rotor_inertia else 0),
                       ("offset", n if options.offset else 0)):
        out[name] = slice(start, start + size)
        start += size
    return out


def _sign(dq: np.ndarray, smooth_sign: float) -> np.ndarray:
    if smooth_sign > 0.0:
        return np.tanh(dq / smooth_sign)
    return np.sign(dq)


def friction_columns(dq: np.ndarray, options: ModelOptions, load: np.ndarray | None = None) -> np.ndarray:
    """Per-joint friction regressor (N, n, k): the rows of K_f (thesis eq. 3.11); ``load`` (N, n):
    the load torque of friction ``load-dependent`` (``load_torque``)."""
    s = _sign(dq, options.smooth_sign)
    if options.friction == "load-dependent":
        if load is None:
            raise ModelError("load-dependent friction: its columns need the load torque (model.load_torque, from "
                             "the joint positions and ModelOptions.load_parameters)")
        return np.stack([s, np.abs(load) * s, dq], axis=-1)  # (L1)
    if options.friction == "none":
        return np.zeros(dq.shape + (0,))
    if options.friction == "coulomb-viscous":
        return np.stack([s, dq], axis=-1)
    if options.friction == "polynomial":  # thesis eq. 3.10
        return np.stack([s, dq, dq * dq * s, dq**3], axis=-1)
    if options.friction == "stribeck":
        e = stribeck_shape(dq, options.stribeck_velocity)
        return np.stack([(1.0 - e) * s, e * s, dq], axis=-1)
    sp, sn = 0.5 * (1.0 + s), 0.5 * (1.0 - s)  # asymmetric
    return np.stack([sp, -sn, dq * sp, dq * sn], axis=-1)


def stribeck_shape(dq: np.ndarray, velocity) -> np.ndarray:
    """e = exp(-(dq / v_s)^2) (same shape as dq (..., n)), v_s (n,) per joint: 1 at rest, 0 fast
    (the Gaussian Stribeck curve, exponent 2: Armstrong-Helouvry, Dupont & Canudas de Wit,
    Automatica 30(7), 1994; Olsson et al., Eur. J. Control 4(3), 1998)."""
    v = np.asarray(velocity, dtype=float)
    if v.size != dq.shape[-1]:
        raise ModelError(f"Stribeck friction: {v.size} Stribeck velocities for {dq.shape[-1]} joints (the velocity "
                         "is chosen from a log by identify --friction stribeck, or given as "
                         "ModelOptions.stribeck_velocity)")
    return np.exp(-np.square(dq / v))


def load_torque(robot, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, options: ModelOptions) -> np.ndarray:
    """tau_load (N, n) of (L1): the torque of the links' and rotors' inertia, their Coriolis and
    centrifugal forces and gravity (the model's torque without friction and offset) at
    ``options.load_parameters``; RNEA of the links plus I_a ddq.

    The rotors are counted in: the base parameters merge I_a of the first joint with the link
    inertia about its axis (``Izz1R = Izz1 + Ia1``), so the data can only tell their sum."""
    if robot.is_coupled:
        raise ModelError(f"robot '{robot.name}' has a coupled transmission: load-dependent friction is not yet "
                         "available per coupled motor")
    from dynid.dynamics.rnea import inverse_dynamics

    rigid = 10 * robot.n_bodies
    theta = np.asarray(options.load_parameters, dtype=float)
    if theta.size != rigid + (robot.n if options.rotor_inertia else 0):
        raise ModelError(f"load-dependent friction: {theta.size} load parameters for robot '{robot.name}', expected "
                         f"{rigid} inertial parameters{f' and {robot.n} rotor inertias' if options.rotor_inertia else ''}"
                         " (fitted to a log by identify --friction load-dependent)")
    out = inverse_dynamics(robot, q, dq, ddq, parameters=theta[:rigid])
    return out + theta[rigid:] * ddq if options.rotor_inertia else out


def load_parameters(robot, options: ModelOptions, theta: np.ndarray) -> tuple:
    """The ``ModelOptions.load_parameters`` of a full parameter vector theta (p,) of ``options``:
    its rigid-body part and its rotor inertias."""
    sl = parameter_slices(robot, options)
    theta = np.asarray(theta, dtype=float)
    return tuple(np.concatenate([theta[sl["rigid"]], theta[sl["rotor_inertia"]]]).tolist())


def joint_columns(dq: np.ndarray, ddq: np.ndarray, options: ModelOptions, load: np.ndarray | None = None) -> np.ndarray:
    """(N, n, e) the columns that act on one joint only: friction (k, thesis eq. 3.11), rotor
    inertia ddq (thesis eq. 3.12), offset 1. Joint i's row of the full regressor has them at
    ``joint_column_indices(robot, options)[i]``; ``load``: the load torque (``load_torque``) of
    friction ``load-dependent``."""
    parts = [friction_columns(dq, options, load)]
    if options.rotor_inertia:
        parts.append(ddq[..., None])
    if options.offset:
        parts.append(np.ones(dq.shape + (1,)))
    return np.concatenate(parts, axis=-1)


def motor_columns(robot, dq: np.ndarray, ddq: np.ndarray, options: ModelOptions,
                  q: np.ndarray | None = None) -> np.ndarray:
    """(N, n, e) each motor's own columns (``joint_columns`` of its velocity and acceleration in
    units of its joint, R dq and R ddq, eq. C1); for an uncoupled robot exactly ``joint_columns``.
    q (N, n): the joint positions, which friction ``load-dependent`` needs (``load_torque``)."""
    load = None
    if options.friction == "load-dependent":
        if q is None:
            raise ModelError("load-dependent friction: its columns need the joint positions (the load torque)")
        load = load_torque(robot, q, dq, ddq, options)
    if robot.is_coupled:
        r = robot.motor_rows
        dq, ddq = dq @ r.T, ddq @ r.T
    return joint_columns(dq, ddq, options, load)


def own_columns(robot, options: ModelOptions):
    """The ``joint_columns`` callback of ``data.preprocess.prepare``: (q, dq, ddq) -> each motor's
    own columns (N, n, e) (``motor_columns``), filtered there exactly like the torque."""
    return lambda q, dq, ddq: motor_columns(robot, dq, ddq, options, q=q)


def place_motor_columns(robot, options: ModelOptions, own: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Write motor columns own (N, n, e) into the full regressor out (N, n, p):
    out[:, i, index[k, c]] = R_ki own[:, k, c] (eq. C1; R = 1 without coupling)."""
    index = joint_column_indices(robot, options)
    if not robot.is_coupled:
        joints = np.arange(robot.n)
        for c, columns in enumerate(index.T):  # loop over the e columns
            out[:, joints, columns] = own[:, :, c]
        return out
    r = robot.motor_rows
    for k, i in zip(*np.nonzero(r)):  # loop over the non-zero entries of R
        out[:, i, index[k]] = r[k, i] * own[:, k, :]
    return out


def joint_column_indices(robot, options: ModelOptions) -> np.ndarray:
    """(n, e) full-parameter index of each of joint i's own columns (``joint_columns``)."""
    n, k = robot.n, friction_size(options)
    sl = parameter_slices(robot, options)
    cols = [sl["friction"].start + np.arange(n)[:, None] * k + np.arange(k)[None, :]]
    if options.rotor_inertia:
        cols.append(sl["rotor_inertia"].start + np.arange(n)[:, None])
    if options.offset:
        cols.append(sl["offset"].start + np.arange(n)[:, None])
    return np.concatenate(cols, axis=1).astype(np.int64)


def identification_regressor(robot, q, dq, ddq, options: ModelOptions = ModelOptions(),
                             out: np.ndarray | None = None) -> np.ndarray:
    """Full regressor Y (N, n, p) with tau = Y @ theta (thesis eq. 3.17).

    q, dq, ddq: (N, n) joint positions [rad | m], velocities, accelerations.
    ``out`` may be a preallocated (N, n, p) float64 array; it is zeroed and filled.
    """
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    n, count, rigid_size = robot.n, q.shape[0], 10 * robot.n_bodies
    p = parameter_count(robot, options)
    if out is None:
        out = np.zeros((count, n, p))
    else:
        if out.shape != (count, n, p) or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise DataError(f"out: expected a C-contiguous float64 array of shape {(count, n, p)}")
        out.fill(0.0)
    if p == rigid_size:
        rigid_body_regressor(robot, q, dq, ddq, out=out, folded_kernel=False)  # the streamed path's numbers
    else:
        rigid = np.zeros((count, n, rigid_size))
        rigid_body_regressor(robot, q, dq, ddq, out=rigid, folded_kernel=False)
        out[:, :, :rigid_size] = rigid
    extra = motor_columns(robot, dq, ddq, options, q=q)  # (N, n, e): each motor's own columns
    if extra.shape[2]:
        place_motor_columns(robot, options, extra, out)
    return out[0] if single else out


def log_regressor(robot, ready, rows, options: ModelOptions) -> np.ndarray:
    """Y (N, n, p) of the rows ``rows`` (a slice or indices) of prepared log ``ready``
    (``data.columns.JointData``), with each motor's own columns from its ``own`` signals where the
    log carries them (exactly filtered before decimation) in place of those from dq, ddq."""
    y = identification_regressor(robot, ready.q[rows], ready.dq[rows], ready.ddq[rows], options)
    if ready.own is not None:
        place_motor_columns(robot, options, ready.own[rows], y)
    return y


def full_parameters(robot, options: ModelOptions = ModelOptions(), friction_values=None,
                    offsets=None) -> np.ndarray:
    """The full parameter vector (p,) of a robot description.

    Rigid body from ``robot.physical.parameters()`` (a link whose inertia misses the triangle
    inequality, loaded with a warning, projected onto the nearest physical one: these are the
    prior of pc and the model that simulates), rotor inertias from the drives (N^2 J_m),
    friction from ``friction_values`` ((n, k) or (n k,), joint by joint; zeros when None),
    offsets from ``offsets`` (n,) (zeros when None).
    """
    n, k = robot.n, friction_size(options)
    parts = [robot.physical.parameters()]
    if k:
        f = np.zeros((n, k)) if friction_values is None else np.asarray(friction_values, dtype=float)
        if f.size != n * k:
            raise ModelError(
                f"friction_values: expected {n} x {k} coefficients {FRICTION_MODELS[options.friction]}, "
                f"got shape {f.shape}"
            )
        parts.append(f.reshape(n * k))
    if options.rotor_inertia:
        parts.append(robot.rotor_inertias)
    if options.offset:
        parts.append(np.zeros(n) if offsets is None else np.asarray(offsets, dtype=float).reshape(n))
    return np.concatenate(parts)


def model_torques(robot, q, dq, ddq, theta, options: ModelOptions = ModelOptions()) -> np.ndarray:
    """tau = Y(q, dq, ddq) theta, (N, n), without forming Y: the rigid-body part by the
    recursive Newton-Euler algorithm with theta's inertial parameters (``dynamics.rnea``, linear
    in them: the same as the regressor's product up to rounding, ~20x faster), each motor's own
    terms (friction, rotor inertia, offset) from its columns, through R = diag(N)^-1 T onto the
    joints for a coupled transmission (eq. C1)."""
    from dynid.dynamics.rnea import inverse_dynamics

    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    theta = np.asarray(theta, dtype=float)
    rigid = 10 * robot.n_bodies
    out = inverse_dynamics(robot, q, dq, ddq, parameters=theta[:rigid])
    own = motor_columns(robot, dq, ddq, options, q=q)  # (N, n, e)
    if own.shape[2]:
        motor = np.einsum("tke,ke->tk", own, theta[joint_column_indices(robot, options)])  # (N, n) per motor
        out += motor @ robot.motor_rows if robot.is_coupled else motor
    return out[0] if single else out
