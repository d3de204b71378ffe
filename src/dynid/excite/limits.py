"""Joint limits as arrays and limit-usage ratios of sampled or periodic trajectories.

Ratios follow docs/formats.md section 4: the largest |value| / limit, where the position ratio
is the distance from the middle of the range over half the range (1 = on a limit).
A limit that is not given (inf) contributes a ratio of 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import ModelError


@dataclass(frozen=True, eq=False)
class KinematicLimits:
    """(n,) arrays: q_min, q_max [rad or m], dq_max [/s], ddq_max [/s^2], tau_max [N m or N]."""

    q_min: np.ndarray
    q_max: np.ndarray
    dq_max: np.ndarray
    ddq_max: np.ndarray
    tau_max: np.ndarray

    @classmethod
    def of(cls, robot) -> "KinematicLimits":
        return cls(*(robot.limit_array(k) for k in ("q_min", "q_max", "dq_max", "ddq_max", "tau_max")))

    @property
    def center(self) -> np.ndarray:
        """(n,) middle of the position range (0 where the range is unbounded)."""
        c = 0.5 * (self.q_min + self.q_max)
        return np.where(np.isfinite(c), c, 0.0)

    @property
    def half_range(self) -> np.ndarray:
        return 0.5 * (self.q_max - self.q_min)

    def require_finite(self, robot_name: str, what=("q_min", "q_max", "dq_max", "ddq_max"),
                       joint_names=None) -> None:
        """ModelError naming the joints (1-based number and name) whose limit is not given."""
        for name in what:
            value = getattr(self, name)
            if not np.all(np.isfinite(value)):
                bad = ", ".join(str(int(i) + 1) + (f" ({joint_names[int(i)]})" if joint_names else "")
                                for i in np.flatnonzero(~np.isfinite(value)))
                option = "--q-range" if name in ("q_min", "q_max") else f"--{name.replace('_', '-')}"
                raise ModelError(f"robot '{robot_name}': {name} is not given for joint(s) {bad}; "
                                 f"excitation design needs it (give {option} or a limits file, "
                                 "dynid excite optimize --help)")

    def scaled(self, fraction: float) -> "KinematicLimits":
        """Limits shrunk to ``fraction`` (positions about the middle of the range)."""
        c, h = self.center, self.half_range
        return KinematicLimits(c - fraction * h, c + fraction * h, fraction * self.dq_max,
                               fraction * self.ddq_max, fraction * self.tau_max)


def _ratio(value: np.ndarray, limit: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(value) / limit
    return np.where(np.isfinite(limit), r, 0.0)


def position_ratio(q: np.ndarray, limits: KinematicLimits) -> np.ndarray:
    """(..., n) |q - middle| / half range."""
    return _ratio(q - limits.center, limits.half_range)


def sample_ratios(q, dq, ddq, limits: KinematicLimits) -> dict[str, np.ndarray]:
    """Per-joint largest ratios {"q","dq","ddq"} -> (n,) over samples (N, n)."""
    return {"q": position_ratio(np.asarray(q), limits).max(axis=0),
            "dq": _ratio(np.asarray(dq), limits.dq_max).max(axis=0),
            "ddq": _ratio(np.asarray(ddq), limits.ddq_max).max(axis=0)}


def torque_ratio(tau: np.ndarray, limits: KinematicLimits) -> np.ndarray:
    """(n,) largest |tau| / tau_max over samples (N, n)."""
    return _ratio(np.asarray(tau), limits.tau_max).max(axis=0)


def periodic_extrema(trajectory, order: int, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Guaranteed (upper bound of max, lower bound of min), (n,) each, of d^order q / dt^order.

    Samples ``samples`` equally spaced instants over one period (spacing h) and widens the
    sampled extrema by h^2/8 * max|f''|, with max|f''| bounded analytically: at an extremum
    t* of the smooth periodic f, f'(t*) = 0, and the nearest sample lies within h/2, so
    |f(t*) - f(t_s)| <= max|f''| (h/2)^2 / 2.
    """
    h = trajectory.period / samples
    t = np.arange(samples) * h
    f = trajectory.derivative(t, order)
    margin = trajectory.derivative_bound(order + 2) * h * h / 8.0
    return f.max(axis=0) + margin, f.min(axis=0) - margin


def periodic_ratio_bounds(trajectory, limits: KinematicLimits, samples: int = 2000) -> dict[str, np.ndarray]:
    """Per-joint guaranteed upper bounds of the q, dq, ddq ratios of a periodic trajectory."""
    out = {}
    for key, order in (("q", 0), ("dq", 1), ("ddq", 2)):
        hi, lo = periodic_extrema(trajectory, order, samples)
        if key == "q":
            out[key] = np.maximum(position_ratio(hi, limits), position_ratio(lo, limits))
        else:
            limit = limits.dq_max if key == "dq" else limits.ddq_max
            out[key] = np.maximum(_ratio(hi, limit), _ratio(lo, limit))
    return out
