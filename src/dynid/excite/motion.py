"""Motion segments of the test cycle, each with analytic position, velocity and acceleration.

Every segment has a ``duration`` [s] and ``evaluate(tau) -> (q, dq, ddq)``, (M, n) each, for
local times tau in [0, duration] (held constant outside). ``start_state`` and
``end_state`` give (q, dq, ddq) at both ends so that a timeline can check continuity.

- ``Hold``: stand still.
- ``Quintic``: fifth-order polynomial between two full states (q, dq, ddq): the blend that
  keeps position, velocity and acceleration continuous between segments.
- ``Cycloid``: the additional excitation segment, thesis eq. 4.22-4.24, one direction per
  segment (a negative displacement runs it backwards).
- ``Oscillation``: per joint, rest-to-rest strokes back and forth at a constant cruise speed,
  with speed ramps whose acceleration rises and falls as 1 - cos (continuous), cycloidal or
  with a constant-acceleration phase between (``ramp_profile``). Used for the friction levels (one joint moving, thesis 4.4) and the warming
  stage (all joints, thesis 4.5).
- ``PeriodicSegment``: a window of a periodic excitation trajectory (eq. 4.19).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TWO_PI = 2.0 * math.pi


def _local(tau, duration) -> np.ndarray:
    return np.clip(np.asarray(tau, dtype=float), 0.0, duration)


class _Segment:
    """Boundary states (q, dq, ddq) of a segment, read off its own ``evaluate`` at 0 and ``duration``."""

    @property
    def start_state(self):
        return tuple(a[0] for a in self.evaluate(np.zeros(1)))

    @property
    def end_state(self):
        return tuple(a[0] for a in self.evaluate(np.full(1, self.duration)))


@dataclass(frozen=True, eq=False)
class Hold(_Segment):
    q: np.ndarray
    duration: float

    def evaluate(self, tau):
        m = np.asarray(tau).size
        q = np.broadcast_to(np.asarray(self.q, dtype=float), (m, len(self.q))).copy()
        return q, np.zeros_like(q), np.zeros_like(q)


@dataclass(frozen=True, eq=False)
class Quintic:
    """q(tau) = sum_k c_k tau^k, k = 0..5, matching (q, dq, ddq) at tau = 0 and tau = T."""

    start: tuple  # (q, dq, ddq) (n,) each
    end: tuple
    duration: float

    @property
    def coefficients(self) -> np.ndarray:
        """(6, n) c_0..c_5 of the quintic with the six boundary conditions."""
        (p0, v0, a0), (p1, v1, a1) = (tuple(np.asarray(x, dtype=float) for x in s) for s in (self.start, self.end))
        t = self.duration
        d = p1 - p0
        c3 = (20 * d - (8 * v1 + 12 * v0) * t - (3 * a0 - a1) * t**2) / (2 * t**3)
        c4 = (-30 * d + (14 * v1 + 16 * v0) * t + (3 * a0 - 2 * a1) * t**2) / (2 * t**4)
        c5 = (12 * d - 6 * (v1 + v0) * t + (a1 - a0) * t**2) / (2 * t**5)
        return np.array([p0, v0, a0 / 2, c3, c4, c5])

    def evaluate(self, tau):
        tau = _local(tau, self.duration)
        c = self.coefficients
        powers = tau[:, None] ** np.arange(6)  # (M, 6)
        k = np.arange(6)
        q = powers @ c
        dq = powers[:, :5] @ (k[1:, None] * c[1:])
        ddq = powers[:, :4] @ ((k[2:] * (k[2:] - 1))[:, None] * c[2:])
        return q, dq, ddq

    @property
    def start_state(self):
        return tuple(np.asarray(x, dtype=float) for x in self.start)

    @property
    def end_state(self):
        return tuple(np.asarray(x, dtype=float) for x in self.end)


@dataclass(frozen=True, eq=False)
class Cycloid(_Segment):
    """theta = theta_0 + dtheta [tau/T - sin(2 pi tau/T)/(2 pi)]   (thesis eq. 4.22-4.24).

    Peak speed 2 |dtheta| / T at tau = T/2, peak acceleration 2 pi |dtheta| / T^2.
    """

    theta0: np.ndarray
    delta: np.ndarray
    duration: float

    def evaluate(self, tau):
        tau = _local(tau, self.duration)[:, None]
        t = self.duration
        x = TWO_PI * tau / t
        q = self.theta0 + self.delta * (tau / t - np.sin(x) / TWO_PI)  # eq. 4.22
        dq = self.delta / t * (1.0 - np.cos(x))  # eq. 4.23
        ddq = TWO_PI * self.delta / t**2 * np.sin(x)  # eq. 4.24
        return q, dq, ddq


def ramp_profile(s: np.ndarray, speed, ramp, jerk=None):
    """Speed ramp from rest to ``speed`` over ``ramp`` seconds, s in [0, ramp]; covers speed*ramp/2.

    The acceleration rises as (1 - cos) over the jerk phase tj = ``jerk`` (default ramp/2),
    holds its peak A = speed / (ramp - tj) and falls symmetrically. With tj = ramp/2 this is
    the cycloidal ramp a = speed/ramp (1 - cos(2 pi s/ramp)) (peak 2 speed / ramp); a shorter
    jerk phase reaches a speed with less travel (speed^2 / (2 A) + speed tj / 2 per ramp),
    which the friction levels of short-range joints need (thesis 4.4: up to 100 % of dq_max).
    """
    s = np.asarray(s, dtype=float)
    tj = 0.5 * np.asarray(ramp, dtype=float) if jerk is None else np.asarray(jerk, dtype=float)
    peak = speed / (ramp - tj)
    w = np.pi / tj
    hold = ramp - 2.0 * tj

    def rise(u):  # u in [0, tj]: a = A (1 - cos(w u)) / 2
        acc = 0.5 * peak * (1.0 - np.cos(w * u))
        vel = 0.5 * peak * (u - np.sin(w * u) / w)
        pos = 0.5 * peak * (u * u / 2.0 + (np.cos(w * u) - 1.0) / w**2)
        return pos, vel, acc

    p1, v1, _ = rise(tj)
    u1 = np.minimum(s, tj)
    pr, vr, ar = rise(u1)
    u2 = np.clip(s - tj, 0.0, hold)  # constant acceleration
    ph, vh = p1 + v1 * u2 + 0.5 * peak * u2 * u2, v1 + peak * u2
    u3 = np.clip(ramp - s, 0.0, tj)  # mirrored fall: distance to the end of the ramp
    pf, vf, af = rise(u3)
    total = 0.5 * speed * ramp
    in_rise, in_hold = s <= tj, s <= tj + hold
    pos = np.where(in_rise, pr, np.where(in_hold, ph, total - (speed * u3 - pf)))
    vel = np.where(in_rise, vr, np.where(in_hold, vh, speed - vf))
    acc = np.where(in_rise, ar, np.where(in_hold, peak, af))
    return pos, vel, acc


def stroke_profile(tau: np.ndarray, distance, speed, ramp, jerk=None):
    """One rest-to-rest stroke of length ``distance`` >= speed*ramp: ramp up, cruise, ramp down.
    Arrays broadcast per joint. Duration distance/speed + ramp. Returns pos, vel, acc."""
    duration = distance / speed + ramp
    tau = np.clip(tau, 0.0, duration)
    up = ramp_profile(np.minimum(tau, ramp), speed, ramp, jerk)
    down = ramp_profile(np.clip(duration - tau, 0.0, ramp), speed, ramp, jerk)
    cruise_pos = speed * ramp / 2 + speed * (tau - ramp)
    in_up = tau < ramp
    in_down = tau > duration - ramp
    pos = np.where(in_up, up[0], np.where(in_down, distance - down[0], cruise_pos))
    vel = np.where(in_up, up[1], np.where(in_down, down[1], speed))
    acc = np.where(in_up, up[2], np.where(in_down, -down[2], 0.0))
    return pos, vel, acc


@dataclass(frozen=True, eq=False)
class Oscillation(_Segment):
    """Per joint j: ``strokes[j]`` strokes alternating +stroke[j], -stroke[j] from ``start``,
    each at cruise speed ``speed[j]`` with ramps of ``ramp[j]`` s (jerk phases ``jerk[j]`` s,
    default ramp/2: cycloidal); then holds. Joints with 0 strokes stand still. Stroke j lasts
    stroke[j]/speed[j] + ramp[j]."""

    start: np.ndarray
    stroke: np.ndarray
    speed: np.ndarray
    ramp: np.ndarray
    strokes: np.ndarray
    duration: float
    jerk: np.ndarray | None = None

    def __post_init__(self):
        moving = np.asarray(self.strokes) > 0
        if np.any(np.asarray(self.stroke)[moving] < np.asarray(self.speed)[moving] * np.asarray(self.ramp)[moving] - 1e-12):
            raise ValueError("each stroke must be at least speed * ramp long (no room to ramp up and down)")
        if np.any(np.asarray(self.strokes) * self.stroke_time > self.duration + 1e-9):
            raise ValueError("strokes do not fit in the duration")

    @property
    def stroke_time(self) -> np.ndarray:
        speed = np.where(np.asarray(self.strokes) > 0, self.speed, 1.0)
        return np.where(np.asarray(self.strokes) > 0, np.asarray(self.stroke) / speed + self.ramp, 0.0)

    def evaluate(self, tau):
        tau = _local(tau, self.duration)
        m, n = tau.size, len(self.start)
        q = np.broadcast_to(np.asarray(self.start, dtype=float), (m, n)).copy()
        dq, ddq = np.zeros((m, n)), np.zeros((m, n))
        ts = self.stroke_time
        for j in np.flatnonzero(np.asarray(self.strokes) > 0):  # loop over joints, not samples
            k = np.minimum(np.floor(tau / ts[j]), self.strokes[j] - 1)
            local = np.minimum(tau - k * ts[j], ts[j])
            jerk = None if self.jerk is None else self.jerk[j]
            pos, vel, acc = stroke_profile(local, self.stroke[j], self.speed[j], self.ramp[j], jerk)
            forward = (k % 2) == 0
            q[:, j] += np.where(forward, pos, self.stroke[j] - pos)
            dq[:, j] = np.where(forward, vel, -vel)
            ddq[:, j] = np.where(forward, acc, -acc)
        return q, dq, ddq


@dataclass(frozen=True, eq=False)
class PeriodicSegment(_Segment):
    """A periodic trajectory on [t0, t0 + duration] of its own time."""

    trajectory: object
    duration: float
    t0: float = 0.0

    def evaluate(self, tau):
        return self.trajectory.evaluate(self.t0 + _local(tau, self.duration))
