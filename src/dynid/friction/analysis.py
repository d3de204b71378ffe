"""Friction measurement analysis of the protocol's friction stage (thesis 5.2.1 - 5.2.4).

``analyze(robot, data)`` does, per joint:

1. finds its constant-velocity plateaus, their speed levels, directions and cycles (``plateaus``);
2. when its axis is not vertical at its friction pose (|cos(axis, g)| < ``vertical_cos``),
   removes gravity with eq. 5.3 / 5.2 (``gravity``); vertical joints are left as measured;
3. averages the (gravity-free) torque over each plateau group: per level, direction and
   cycle the mean torque, its standard deviation, the mean |dq| and the mean time;
4. per level and cycle the friction torque (tau+ - tau-) / 2 of the two directions, which
   also cancels any constant torque; these points per cycle are the friction-velocity
   curves (thesis Figure 5.20);
5. per level the drift over the cycles, eq. 5.4 with 95 % intervals (``drift``), when
   there are at least 6 cycles.

The result is a ``FrictionAnalysis``; ``to_dict`` / ``to_json`` give plain JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid.data.columns import JointData
from dynid.errors import DataError
from dynid.friction.drift import DriftFit, fit_drift
from dynid.friction.gravity import GravityFit, fit_gravity
from dynid.friction.plateaus import PlateauSettings, find_plateaus


@dataclass
class FrictionAnalysis:
    """Friction measurement of one log.

    points: per plateau group, arrays (G,) joint, level (0-based), direction (+1/-1), cycle,
      speed [rad/s | m/s] (mean |dq|), time [s] (mean, from the log's start), torque [N m]
      (mean, gravity-free where removed), torque_std, samples;
    friction: per (joint, level, cycle), arrays (F,) joint, level, cycle, speed, time,
      friction = (tau+ - tau-) / 2; both also ``temperature`` [deg C] when temperatures were given;
    levels[j]: the speed of each level of joint j; vertical_cos[j]: |cos(axis, g)} at its pose;
    gravity[j]: the eq. 5.3 fit of joint j when gravity was removed;
    drift[(j, level)]: the eq. 5.4 fit over the cycles.
    Joints and levels are 0-based here, 1-based in ``to_dict``.
    """

    robot: str
    n: int
    levels: list
    vertical_cos: list
    points: dict
    friction: dict
    gravity: dict = field(default_factory=dict)
    drift: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def curves(self, joint: int) -> dict:
        """{cycle: (speed (L,), friction (L,))} friction-velocity curve of ``joint`` per cycle."""
        f = self.friction
        out = {}
        for c in np.unique(f["cycle"][f["joint"] == joint]):
            pick = (f["joint"] == joint) & (f["cycle"] == c)
            order = np.argsort(f["speed"][pick])
            out[int(c)] = (f["speed"][pick][order], f["friction"][pick][order])
        return out

    def drift_points(self, joint: int, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(time (K,) [s], friction (K,) [N m]) of one level over the cycles."""
        f = self.friction
        pick = (f["joint"] == joint) & (f["level"] == level)
        return f["time"][pick], f["friction"][pick]

    def to_dict(self) -> dict:
        def table(d, one_based=("joint", "level")):
            return {k: (np.asarray(v) + (1 if k in one_based else 0)).tolist() for k, v in d.items()}

        return {"format": "dynid-friction-analysis", "version": 1, "robot": self.robot, "n": self.n,
                "levels": [{"joint": j + 1, "speeds": s} for j, s in enumerate(self.levels)],
                "vertical_cos": self.vertical_cos,
                "gravity_removed": [g.to_dict() for g in self.gravity.values()],
                "points": table(self.points), "friction": table(self.friction),
                "drift": [{"joint": j + 1, "level": lv + 1, "speed": self.levels[j][lv], **fit.to_dict()}
                          for (j, lv), fit in sorted(self.drift.items())],
                "notes": list(self.notes)}

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text of ``to_dict``; written atomically to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=1)
        if path is not None:
            from dynid.data.io import atomic_write_text
            atomic_write_text(path, text)
        return text


def _group_means(key: np.ndarray, values: dict) -> tuple[np.ndarray, dict, np.ndarray]:
    """Unique keys (G, m), per-group means of each (N,) value, and counts (vectorized bincount)."""
    groups, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    means = {k: np.bincount(inverse, weights=v) / counts for k, v in values.items()}
    return groups, means, counts


def analyze(robot, data: JointData, gravity: str = "auto", vertical_cos: float = 0.99,
            settings: PlateauSettings = PlateauSettings(), seed: int = 0, fit_drifts: bool = True,
            temp: np.ndarray | None = None) -> FrictionAnalysis:
    """Friction analysis of prepared joint data (t, q, dq, ddq, tau, stage, optional cycle).

    gravity: "auto" (remove it for joints whose axis is not vertical), "all" or "none";
    temp: (N, n) joint temperatures [deg C]: adds the mean temperature of the moving joint to
    every point and friction entry (friction against temperature).
    """
    if gravity not in ("auto", "all", "none"):
        raise DataError(f"gravity removal '{gravity}' unknown, expected auto | all | none")
    if data.tau is None:
        raise DataError(f"{data.source}: no torques (tau1..taun) or currents (i1..in) to analyze")
    if data.dq is None or data.ddq is None:
        raise DataError(f"{data.source}: dq and ddq are needed (prepare the data first)")
    from dynid.excite.rest_pose import vertical_alignment

    pl = find_plateaus(data.dq, data.ddq, data.stage, data.cycle, settings, data.source)
    n, notes = robot.n, []
    tau = data.tau.copy()
    cos, fits = [], {}
    moving_alone = pl.joint  # plateau samples; gravity fit uses every sample of the joint moving alone
    from dynid.friction.plateaus import moving_joint
    alone = moving_joint(data.dq, np.asarray(data.stage).astype(str) == "friction", settings.still)
    for j in range(n):
        idx = np.flatnonzero(moving_alone == j)
        if idx.size == 0:
            cos.append(None)
            notes.append(f"joint {j + 1}: no constant-velocity samples in the friction stage")
            continue
        pose = np.median(data.q[idx], axis=0)
        c = float(vertical_alignment(robot, pose, j)[0]) if robot.is_revolute[j] else 0.0
        cos.append(c)
        if gravity == "none" or (gravity == "auto" and c >= vertical_cos):
            continue
        rows = np.flatnonzero((alone == j) & (np.abs(data.dq[:, j]) >= 0.2 * min(pl.speeds[j])))
        fit = fit_gravity(j, data.q[rows, j], data.dq[rows, j], data.ddq[rows, j], data.tau[rows, j],
                          pl.cycle[rows], bool(robot.is_revolute[j]))
        fits[j] = fit
        tau[:, j] = data.tau[:, j] - fit.gravity(data.q[:, j])  # eq. 5.2
    m = pl.mask
    rows = np.flatnonzero(m)
    jj = pl.joint[rows]
    key = np.column_stack([jj, pl.level[rows], pl.direction[rows], pl.cycle[rows]])
    torque = tau[rows, jj]
    speed = np.abs(data.dq[rows, jj])
    values = {"torque": torque, "torque2": torque**2, "speed": speed, "time": data.t[rows] - data.t[0]}
    if temp is not None:
        values["temperature"] = np.asarray(temp, dtype=float)[rows, jj]
    groups, means, counts = _group_means(key, values)
    points = {"joint": groups[:, 0], "level": groups[:, 1], "direction": groups[:, 2], "cycle": groups[:, 3],
              "speed": means["speed"], "time": means["time"], "torque": means["torque"],
              "torque_std": np.sqrt(np.maximum(means["torque2"] - means["torque"] ** 2, 0.0)), "samples": counts}
    if temp is not None:
        points["temperature"] = means["temperature"]
    friction = _two_directions(points)
    result = FrictionAnalysis(robot.name, n, pl.speeds, cos, points, friction, fits, {}, notes)
    if fit_drifts:
        for j in range(n):
            for lv in range(len(pl.speeds[j])):
                t, y = result.drift_points(j, lv)
                try:
                    result.drift[(j, lv)] = fit_drift(t, y, seed=seed)
                except DataError as exc:
                    notes.append(f"joint {j + 1} level {lv + 1}: no drift fit ({exc})")
    return result


def _two_directions(points: dict) -> dict:
    """Per (joint, level, cycle) with both directions: friction (tau+ - tau-)/2, mean speed and time."""
    key = np.column_stack([points["joint"], points["level"], points["cycle"]])
    groups, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    signed = points["direction"] * points["torque"]  # tau+ and -tau-
    both = counts == 2
    friction = np.bincount(inverse, weights=signed) / 2.0
    out = {"joint": groups[both, 0], "level": groups[both, 1], "cycle": groups[both, 2]}
    for name in ("speed", "time", "temperature"):
        if name in points:
            out[name] = (np.bincount(inverse, weights=points[name]) / counts)[both]
    out["friction"] = friction[both]
    return out


def load_and_analyze(robot, path, mapping=None, prep=None, **kw) -> FrictionAnalysis:
    """Read a joint data file, estimate missing dq/ddq (``data.preprocess.prepare``) and analyze it
    (with its temp1..tempn columns when present)."""
    from dynid.data.columns import ColumnMapping
    from dynid.data.io import load_joint_data
    from dynid.data.preprocess import Preprocessing, prepare

    from dynid.friction.io import read_temperatures

    data = load_joint_data(path, robot, mapping or ColumnMapping())
    if data.dq is None or data.ddq is None or prep is not None:
        data = prepare(data, prep or Preprocessing())
    kw.setdefault("temp", read_temperatures(path, robot.n, data.t, mapping or ColumnMapping(), required=False))
    return analyze(robot, data, **kw)
