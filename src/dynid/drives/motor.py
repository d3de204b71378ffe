"""Drive models of the joints: a DC motor behind a gear, and servo amplifiers in front of it.

DC motor of joint j (motor side, SI units), with theta_m = N q the motor angle:

    u = R i + L di/dt + K_b N dq                        (armature circuit)
    K_t i = J_m N ddq + b_m N dq + tau / N              (rotor, tau = joint torque at the gear output)

so the joint-side motor torque is tau_m = N K_t i = tau + I_a ddq + N^2 b_m dq with
I_a = N^2 J_m (thesis eq. 3.12). ``tau`` is the rigid-body torque plus joint friction.

Servo variants (the "voltage" u is then the amplifier's command signal, in V):

- ``servo-current``: an ideal current loop, i = K_a u. The command is a current reference.
- ``servo-velocity``: a proportional velocity loop around an ideal current loop,
  i = K_a (K_v u - N dq): u is a motor-speed reference in V (K_v [rad/s / V]) and the loop
  gain K_a [A / (rad/s)] turns the speed error into current.

Both servo variants, and the DC motor with L = 0, give the same identification structure
(docs/voltage_identification.md, eq. V4): tau_m = a u - c dq per joint, with the gain a and the
electrical damping c listed in ``DriveSet.gains``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from dynid.errors import ModelError

DRIVE_KINDS = ("dc-motor", "servo-current", "servo-velocity")


@dataclass(frozen=True)
class DriveSet:
    """Drive constants of all n joints; arrays (n,), SI units, motor side unless noted.

    kind: one of DRIVE_KINDS
    gear_ratio N [-] (motor rad per joint rad, or per metre for a prismatic joint)
    resistance R [Ohm], inductance L [H], back_emf K_b [V s/rad], torque_constant K_t [N m/A]
    rotor_inertia J_m [kg m^2], motor_viscous b_m [N m s/rad]
    amplifier_gain K_a: servo-current [A/V]; servo-velocity [A s/rad]
    velocity_gain K_v: servo-velocity [rad/s per V]
    """

    kind: str
    gear_ratio: np.ndarray
    resistance: np.ndarray
    inductance: np.ndarray
    back_emf: np.ndarray
    torque_constant: np.ndarray
    rotor_inertia: np.ndarray
    motor_viscous: np.ndarray
    amplifier_gain: np.ndarray = field(default=None)
    velocity_gain: np.ndarray = field(default=None)

    def __post_init__(self):
        if self.kind not in DRIVE_KINDS:
            raise ModelError(f"drive kind '{self.kind}' unknown, expected one of {DRIVE_KINDS}")
        n = np.asarray(self.gear_ratio).size
        for name in ("gear_ratio", "resistance", "inductance", "back_emf", "torque_constant",
                     "rotor_inertia", "motor_viscous", "amplifier_gain", "velocity_gain"):
            value = getattr(self, name)
            value = np.ones(n) if value is None else np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
            if not np.all(np.isfinite(value)):
                raise ModelError(f"drive constant {name} must be finite, got {value}")
            object.__setattr__(self, name, value)
        if np.any(self.resistance <= 0) or np.any(self.torque_constant <= 0) or np.any(self.gear_ratio == 0):
            raise ModelError("drives: R, K_t must be > 0 and N non-zero")

    @property
    def n(self) -> int:
        return self.gear_ratio.size

    @property
    def joint_rotor_inertia(self) -> np.ndarray:
        """I_a = N^2 J_m [kg m^2] (thesis eq. 3.12)."""
        return self.gear_ratio**2 * self.rotor_inertia

    @property
    def joint_motor_viscous(self) -> np.ndarray:
        """N^2 b_m: the motor's viscous friction seen at the joint [N m s/rad]."""
        return self.gear_ratio**2 * self.motor_viscous

    @property
    def current_gain(self) -> np.ndarray:
        """k = N K_t: joint-side torque per ampere, tau_m = k i [N m/A]."""
        return self.gear_ratio * self.torque_constant

    def gains(self) -> tuple[np.ndarray, np.ndarray]:
        """(a, c) of tau_m = a u - c dq (eq. V4; DC motor with L = 0, or a servo):

        dc-motor:        a = N K_t / R,      c = N^2 K_t K_b / R
        servo-current:   a = N K_t K_a,      c = 0
        servo-velocity:  a = N K_t K_a K_v,  c = N^2 K_t K_a
        """
        k = self.current_gain
        if self.kind == "dc-motor":
            return k / self.resistance, k * self.gear_ratio * self.back_emf / self.resistance
        if self.kind == "servo-current":
            return k * self.amplifier_gain, np.zeros(self.n)
        return k * self.amplifier_gain * self.velocity_gain, k * self.gear_ratio * self.amplifier_gain

    def with_(self, **changes) -> "DriveSet":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        out = {"kind": self.kind}
        for name in ("gear_ratio", "resistance", "inductance", "back_emf", "torque_constant",
                     "rotor_inertia", "motor_viscous", "amplifier_gain", "velocity_gain"):
            out[name] = getattr(self, name).tolist()
        return out


def default_drives(robot, kind: str = "dc-motor", inductance: float | np.ndarray = 2e-3) -> DriveSet:
    """Plausible drives that depend on the robot only (so two simulated logs share them).

    N, J_m and K_t come from ``robot.joints[j].drive`` when given (J_m > 0, K_t finite);
    otherwise, with rms_tau the joint's RMS rigid-body torque over 200 random states (as
    ``simulate.default_friction``): K_t = rms_tau / (2 N) (about 2 A RMS), I_a = N^2 J_m =
    0.05 rms_tau [per rad/s^2]. Always: K_b = K_t (SI units), R = 1.2 Ohm, L = ``inductance``,
    N^2 b_m = 0.02 rms_tau [per rad/s]; servo gains K_a = 1 A/V (current) or 0.5 A s/rad
    (velocity) and K_v = 20 rad/s per V.
    """
    from dynid.simulate.joint_space import default_friction
    from dynid.identify.model import ModelOptions

    rms_tau = default_friction(robot, ModelOptions("coulomb-viscous"))[:, 0] / 0.05  # same RMS torque
    n = robot.gear_ratios.astype(float)
    kt_robot = np.array([j.drive.torque_constant for j in robot.joints])
    jm_robot = np.array([j.drive.rotor_inertia for j in robot.joints])
    kt = np.where(np.isfinite(kt_robot), kt_robot, rms_tau / (2.0 * np.abs(n)))
    jm = np.where(jm_robot > 0, jm_robot, 0.05 * rms_tau / n**2)
    amp = 1.0 if kind == "servo-current" else 0.5
    return DriveSet(kind, n, np.full(robot.n, 1.2), np.broadcast_to(inductance, (robot.n,)), kt.copy(), kt,
                    jm, 0.02 * rms_tau / n**2, np.full(robot.n, amp), np.full(robot.n, 20.0))
