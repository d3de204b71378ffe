"""Plausibility of joint data against the robot: what is almost surely a unit mistake warns
(``DynidWarning``, one line in the CLI) with its likely cause.

Call ``PositionRange.update`` on each chunk of positions as it is read and ``warn`` at the end
(``dynid.data.io.load_joint_data`` and ``dynid.data.stream.raw_chunks`` do): a joint whose
positions go beyond a limit by more than half its range (and more than 0.2 rad or m) is far
outside what the robot can reach: degrees given as radians (x 57), millimetres as metres, or a
log of another robot.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dynid.errors import DynidWarning


class PositionRange:
    """Running per-joint min and max of the positions read so far."""

    def __init__(self, n: int):
        self.low = np.full(n, np.inf)
        self.high = np.full(n, -np.inf)

    def update(self, q: np.ndarray) -> None:
        if q is None or q.shape[0] == 0:
            return
        columns = np.ascontiguousarray(q.T)  # reductions along contiguous rows: ~6x faster than axis 0
        if np.isfinite(columns).any():
            self.low = np.fmin(self.low, np.fmin.reduce(columns, axis=1))  # fmin/fmax skip NaN
            self.high = np.fmax(self.high, np.fmax.reduce(columns, axis=1))

    def messages(self, robot, source: str) -> list[str]:
        out = []
        lo, hi = robot.limit_array("q_min"), robot.limit_array("q_max")
        for j in range(robot.n):
            if not (math.isfinite(lo[j]) and math.isfinite(hi[j])) or not self.high[j] >= self.low[j]:
                continue
            excess = max(self.high[j] - hi[j], lo[j] - self.low[j])
            if excess > max(0.5 * (hi[j] - lo[j]), 0.2):
                unit = "rad" if robot.is_revolute[j] else "m"
                cause = ("degrees given as radians (add --degrees)?" if robot.is_revolute[j]
                         else "millimetres given as metres?")
                out.append(f"{source}: q{j + 1} spans [{self.low[j]:.4g}, {self.high[j]:.4g}] {unit}, far outside the "
                           f"joint limits [{lo[j]:.4g}, {hi[j]:.4g}] of '{robot.name}': {cause} "
                           "(or a log of another robot)")
        return out

    def warn(self, robot, source: str) -> None:
        for text in self.messages(robot, source):
            warnings.warn(DynidWarning(text), stacklevel=2)
