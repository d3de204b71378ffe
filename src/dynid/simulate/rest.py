"""Standing still: trajectories that stop and rest, and the static friction that holds a joint.

A real robot stops between moves (a pick, a wait for a part, the end of a plan), often for a
third of a log or more. Two things then differ from a robot in motion:

- its velocity is zero: a joint decelerates along its path to rest, stays, and starts
  again. ``RestSchedule`` slows each joint's progress along a motion m(s) (e.g. a
  ``MultiSine``) by a factor w(t) in [0, 1], 0 at rest, with raised-cosine ramps of
  ``ramp`` seconds between 1 and 0:

      q(t) = m(s(t)),  s(t) = int_0^t w,  dq = m'(s) w,  ddq = m''(s) w^2 + m'(s) w'     (S1)

  so q, dq, ddq stay exactly consistent and the stop itself is smooth (jerk bounded);
- its friction is static: a joint at rest carries no kinetic friction Fc sign(dq) but
  whatever torque holds it, |tau_s| <= Fs, set by the controller when the joint stuck.
  ``held_friction`` draws one held torque per joint and rest, constant while it rests:
  ``"random"``, uniform in [-Fs, Fs] (the prediction can only be 0); or ``"last"``, the
  sign of the last motion times a uniform share of Fs (a drive that keeps the torque it
  had when the joint stopped, as the real KUKA iiwa's logs show: at rest, their residual
  follows the direction of the last motion, docs/identification.md).

Every random choice takes a seed. Nothing here loops over samples: only over the rests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError

HELD = ("random", "last")


@dataclass(frozen=True)
class RestSchedule:
    """Rests of each joint: ``rests[j]`` (R_j, 2) start and end [s] of joint j's full stops
    (w = 0), each preceded and followed by a raised-cosine ramp of ``ramp`` seconds."""

    rests: tuple[np.ndarray, ...]
    ramp: float

    def progress(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, w, w'), each (N, n): progress along the motion [s], its rate w = ds/dt and dw/dt (S1)."""
        t = np.asarray(t, dtype=float)
        n, r = len(self.rests), self.ramp
        s = np.repeat(t[:, None], n, axis=1)
        w = np.ones((t.size, n))
        dw = np.zeros((t.size, n))
        for j, rests in enumerate(self.rests):
            for a, b in rests:  # loop over the rests (a few per minute), not the samples
                stop, rest, start = (t > a - r) & (t < a), (t >= a) & (t <= b), (t > b) & (t < b + r)
                u = (t[stop] - (a - r)) / r  # 0..1 through the stopping ramp: w = (1 + cos pi u) / 2
                w[stop, j] = 0.5 * (1.0 + np.cos(np.pi * u))
                dw[stop, j] = -0.5 * np.pi / r * np.sin(np.pi * u)
                w[rest, j] = 0.0
                v = (t[start] - b) / r  # starting ramp: w = (1 - cos pi v) / 2
                w[start, j] = 0.5 * (1.0 - np.cos(np.pi * v))
                dw[start, j] = 0.5 * np.pi / r * np.sin(np.pi * v)
                # time not travelled: int (1 - w) over the ramps (r/2 each, partly) and the rest
                lost = np.zeros(t.size)
                lost[stop] = 0.5 * r * u - 0.5 * r / np.pi * np.sin(np.pi * u)
                lost[rest] = 0.5 * r + (t[rest] - a)
                lost[start] = 0.5 * r + (b - a) + 0.5 * r * v + 0.5 * r / np.pi * np.sin(np.pi * v)
                lost[t >= b + r] = r + (b - a)
                s[:, j] -= lost
        return s, w, dw

    def at_rest(self, t: np.ndarray) -> np.ndarray:
        """(N, n) True where a joint stands still (w = 0)."""
        t = np.asarray(t, dtype=float)
        out = np.zeros((t.size, len(self.rests)), dtype=bool)
        for j, rests in enumerate(self.rests):
            for a, b in rests:
                out[(t >= a) & (t <= b), j] = True
        return out


def rest_schedule(n: int, seconds: float, share: float, seed: int = 0, ramp: float = 0.3,
                  mean_rest: float = 1.5, together: bool = True, ends: float = 0.0) -> RestSchedule:
    """Rests that take about ``share`` of ``seconds`` (full stops only, ramps not counted):
    rest durations uniform in [0.3, 1.7] x ``mean_rest``, the motion between two rests (with
    its two ramps) uniform in [0.5, 1.5] x mean_rest (1 - share) / share. The log starts and
    ends moving, or with ``ends`` > 0 [s] it starts and ends at rest for that long (a recording
    started and stopped by hand), the first and last move then ramping from and to rest.
    ``together``: the whole robot stops at once; otherwise each joint has its own rests."""
    if not 0.0 <= share < 1.0:
        raise DataError(f"rest share {share}: expected a fraction in [0, 1)")
    if not (0.0 <= ends and 2.0 * (ends + ramp) < seconds):
        raise DataError(f"rests of {ends} s at both ends: expected >= 0 s and a log longer than both with their "
                        f"ramps ({seconds} s)")
    rng = np.random.default_rng(seed)
    mean_move = mean_rest * (1.0 - share) / share - 2.0 * ramp if share > 0 else np.inf  # ramps apart
    last = seconds - ends - ramp if ends > 0 else seconds  # the rests inside end their ramps before this

    def one() -> np.ndarray:
        rests, t = ([(-1.0, ends)], ends + ramp) if ends > 0 else ([], 0.0)  # t: full speed from here
        while share > 0:
            t += max(rng.uniform(0.5, 1.5) * mean_move, 2.0 * ramp + 0.1)
            length = rng.uniform(0.3, 1.7) * mean_rest
            if t + length + 2.0 * ramp >= last:
                break
            rests.append((t + ramp, t + ramp + length))
            t += length + 2.0 * ramp
        if ends > 0:
            rests.append((seconds - ends, seconds + 1.0))
        return np.array(rests, dtype=float).reshape(-1, 2)

    if together:
        rests = one()
        return RestSchedule(tuple(rests for _ in range(n)), ramp)
    return RestSchedule(tuple(one() for _ in range(n)), ramp)


def resting_motion(motion, schedule: RestSchedule, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, dq, ddq), each (N, n): ``motion`` (anything with ``sample(t) -> (q, dq, ddq)``, e.g.
    ``MultiSine``) followed at each joint's own progress s_j(t) (S1)."""
    s, w, dw = schedule.progress(t)
    n = s.shape[1]
    q, dq, ddq = (np.empty_like(s) for _ in range(3))
    for j in range(n):  # each joint along its own progress: one vectorized sample per joint
        qj, dqj, ddqj = motion.sample(s[:, j])
        q[:, j] = qj[:, j]
        dq[:, j] = dqj[:, j] * w[:, j]
        ddq[:, j] = ddqj[:, j] * w[:, j] ** 2 + dqj[:, j] * dw[:, j]
    return q, dq, ddq


def held_friction(t: np.ndarray, dq: np.ndarray, schedule: RestSchedule, static: np.ndarray,
                  held: str = "random", seed: int = 0) -> np.ndarray:
    """(N, n) the torque static friction holds at rest (0 while moving): per joint and rest one
    value with |tau_s| <= static[j] (module docstring; ``held``: "random" | "last"), added to
    the torque of a model whose friction is zero at zero velocity. dq (N, n): the motion's
    velocities (the sign of the last motion before each rest)."""
    if held not in HELD:
        raise DataError(f"held friction '{held}' unknown, expected one of {list(HELD)}")
    rng = np.random.default_rng(seed)
    t = np.asarray(t, dtype=float)
    static = np.broadcast_to(np.asarray(static, dtype=float), (dq.shape[1],))
    out = np.zeros(dq.shape)
    for j, rests in enumerate(schedule.rests):
        for a, b in rests:
            rest = (t >= a) & (t <= b)
            if held == "random":
                value = rng.uniform(-1.0, 1.0) * static[j]
            else:
                before = np.flatnonzero((t < a) & (dq[:, j] != 0.0))
                last = np.sign(dq[before[-1], j]) if before.size else 0.0
                value = last * rng.uniform(0.0, 1.0) * static[j]
            out[rest, j] = value
    return out
