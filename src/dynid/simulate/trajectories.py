"""A builtin excitation for simulations: random multi-sine joint trajectories within limits.

    q_j(t) = c_j + sum_{k=1..H} a_jk sin(k w t + phi_jk),   w = 2 pi f0

with analytic dq and ddq. Amplitudes fall off as 1/k; the whole motion of each joint is
then scaled so that the position stays in ``fraction`` of its range around the middle and
|dq|, |ddq| stay below ``fraction`` of their limits (checked on a dense grid of one period).
Every random choice takes ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MultiSine:
    """q(t) = center + sum_k amp[:, k] sin((k+1) w t + phase[:, k]); arrays (n, H)."""

    center: np.ndarray
    amp: np.ndarray
    phase: np.ndarray
    f0: float

    def sample(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, dq, ddq), each (N, n), at times t (N,) [s].

        sin(k w t + phi) = sin(k w t) cos(phi) + cos(k w t) sin(phi): the sines of the H
        harmonics are shared by the joints, so the sums are (N, H) x (H, n) products."""
        t = np.asarray(t, dtype=float)
        k = np.arange(1, self.amp.shape[1] + 1)
        w = 2.0 * np.pi * self.f0 * k  # (H,)
        arg = t[:, None] * w[None, :]  # (N, H)
        s, c = np.sin(arg), np.cos(arg)
        a_cos, a_sin = (self.amp * np.cos(self.phase)).T, (self.amp * np.sin(self.phase)).T  # (H, n)
        q = self.center + s @ a_cos + c @ a_sin
        dq = c @ (w[:, None] * a_cos) - s @ (w[:, None] * a_sin)
        ddq = -(s @ (w[:, None] ** 2 * a_cos) + c @ (w[:, None] ** 2 * a_sin))
        return q, dq, ddq


def random_multisine(robot, seed: int = 0, f0: float = 0.1, harmonics: int = 5,
                     fraction: float = 0.8) -> MultiSine:
    """A random multi-sine for ``robot`` that respects its limits (module docstring)."""
    rng = np.random.default_rng(seed)
    n = robot.n
    default_range = np.where(robot.is_revolute, np.pi, 0.5)
    q_min, q_max = robot.limit_array("q_min"), robot.limit_array("q_max")
    lo = np.where(np.isfinite(q_min), q_min, -default_range)
    hi = np.where(np.isfinite(q_max), q_max, default_range)
    center, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    amp = rng.uniform(0.3, 1.0, (n, harmonics)) / np.arange(1, harmonics + 1)
    phase = rng.uniform(0.0, 2.0 * np.pi, (n, harmonics))
    unit = MultiSine(np.zeros(n), amp, phase, f0)
    q, dq, ddq = unit.sample(np.linspace(0.0, 1.0 / f0, 4000, endpoint=False))
    dq_max = np.where(np.isfinite(robot.limit_array("dq_max")), robot.limit_array("dq_max"), 2.0)
    ddq_max = np.where(np.isfinite(robot.limit_array("ddq_max")), robot.limit_array("ddq_max"), 10.0)
    scale = fraction * np.min(np.stack([half / np.abs(q).max(axis=0), dq_max / np.abs(dq).max(axis=0),
                                        ddq_max / np.abs(ddq).max(axis=0)]), axis=0)
    return MultiSine(center, amp * scale[:, None], phase, f0)
