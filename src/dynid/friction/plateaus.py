"""Constant-velocity plateaus of the friction stage (thesis 4.4, 5.2.1).

In the protocol's ``friction`` stage one joint moves at a time, in strokes at 5 .. 100 % of
its maximum speed, while the others rest. A sample belongs to a plateau of joint j when

- its stage is ``friction`` and joint j is the one moving (largest |dq| relative to each
  joint's largest |dq| in the stage, at least ``min_speed`` of it: the protocol's slowest
  level is 5 % of dq_max; encoder noise at rest is not motion), the others slower than
  ``still`` x that share;
- joint j is at constant velocity: |ddq_j| <= ``accel_tol`` x the 99th percentile of |ddq_j|
  in the stage while it moves alone;
- it is not within ``margin`` samples of either end of its run (the ends of the speed ramps,
  where |ddq| is already small but I ddq is not negligible, and filter transients). At 10 Hz
  the fastest level of some joints holds constant speed for too few samples and is dropped.

Each run gets one speed, its median |dq| (robust to noisy estimated velocities); the runs'
speeds are grouped into levels per joint across all cycles: sorted log speeds split where
consecutive values differ by more than ``level_gap`` (relative; the protocol's levels differ
by 12 % or more). A level must appear in at least ``level_presence`` of the (cycle,
direction) pairs of its joint; sporadic groups (pieces of ramps where a noisy estimated
ddq happens to be small) are dropped. Samples are vectorized; loops run over joints and runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError


@dataclass(frozen=True)
class PlateauSettings:
    """Thresholds of the plateau detection (module docstring)."""

    still: float = 0.05
    min_speed: float = 0.02
    accel_tol: float = 0.02
    margin: int = 1
    min_samples: int = 3
    level_gap: float = 0.08
    level_presence: float = 0.5


@dataclass
class Plateaus:
    """Labels per sample (N,): joint (0-based, -1 outside plateaus), level (0-based, ascending
    speed), direction (+1 / -1) and cycle; ``speeds[j]`` the median |dq| of each level of joint j."""

    joint: np.ndarray
    level: np.ndarray
    direction: np.ndarray
    cycle: np.ndarray
    speeds: list

    @property
    def mask(self) -> np.ndarray:
        return self.joint >= 0


def moving_joint(dq: np.ndarray, in_stage: np.ndarray, still: float, min_speed: float = 0.0) -> np.ndarray:
    """(N,) index of the single moving joint of each sample of the stage, -1 elsewhere; a joint
    moves when its |dq| is at least ``min_speed`` x its largest |dq| in the stage."""
    scale = np.abs(dq[in_stage]).max(axis=0) if in_stage.any() else np.ones(dq.shape[1])
    share = np.abs(dq) / np.where(scale > 0, scale, 1.0)
    owner = np.argmax(share, axis=1)
    top = share[np.arange(len(owner)), owner]
    others = np.where(np.arange(dq.shape[1])[None, :] == owner[:, None], 0.0, share).max(axis=1)
    alone = in_stage & (top > max(min_speed, 0.0)) & (others <= still * top)
    return np.where(alone, owner, -1)


def _runs(label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and stop (exclusive) indices of the runs of equal values of ``label`` (N,)."""
    change = np.flatnonzero(np.diff(label) != 0) + 1
    starts = np.concatenate([[0], change])
    stops = np.concatenate([change, [label.size]])
    return starts, stops


def _trim_runs(candidate: np.ndarray, key: np.ndarray, margin: int, min_samples: int) -> np.ndarray:
    """Keep the candidates of runs of equal ``key`` at least min_samples long, minus ``margin`` at each end."""
    label = np.where(candidate, key, -1)
    starts, stops = _runs(label)
    length = stops - starts
    good = (label[starts] >= 0) & (length - 2 * margin >= min_samples)
    index = np.arange(candidate.size)
    run = np.searchsorted(starts, index, side="right") - 1
    return good[run] & (index >= starts[run] + margin) & (index < stops[run] - margin)


def find_plateaus(dq: np.ndarray, ddq: np.ndarray, stage: np.ndarray | None, cycle: np.ndarray | None,
                  settings: PlateauSettings = PlateauSettings(), source: str = "<data>") -> Plateaus:
    """Plateaus of the friction stage; dq, ddq (N, n); stage (N,) labels; cycle (N,) or None (one cycle)."""
    if stage is None:
        raise DataError(f"{source}: no 'stage' column; friction analysis needs the protocol's stage labels "
                        "(dynid excite protocol writes them, dynid simulate --trajectory keeps them)")
    in_stage = np.asarray(stage).astype(str) == "friction"
    if not in_stage.any():
        raise DataError(f"{source}: column 'stage' has no 'friction' samples (labels: "
                        f"{sorted(set(np.asarray(stage).astype(str).tolist()))[:10]})")
    n = dq.shape[1]
    cycle = np.ones(dq.shape[0], dtype=np.int64) if cycle is None else np.asarray(cycle, dtype=np.int64)
    owner = moving_joint(dq, in_stage, settings.still, settings.min_speed)
    rows = np.arange(dq.shape[0])
    safe = np.maximum(owner, 0)
    v, a = dq[rows, safe], ddq[rows, safe]
    a_max = np.zeros(n)  # robust scale of the joint's acceleration in the stage (99th percentile)
    for j in range(n):  # loop over joints
        mine = np.abs(a[owner == j])
        a_max[j] = np.percentile(mine, 99) if mine.size else 0.0
    direction = np.sign(v).astype(np.int64)
    steady = (owner >= 0) & (np.abs(a) <= settings.accel_tol * a_max[safe]) & (direction != 0)
    key = np.where(steady, (owner * 2 + (direction > 0)) * 1_000_000 + cycle, -1)
    keep = _trim_runs(steady, key, settings.margin, settings.min_samples)
    # one speed per run (median |dq|: robust to noisy estimated velocities), runs grouped into levels
    run_key = np.where(keep, key, -1)
    starts, stops = _runs(run_key)
    starts, stops = starts[run_key[starts] >= 0], stops[run_key[starts] >= 0]
    run_of = np.full(dq.shape[0], -1)
    run_id = np.repeat(np.arange(starts.size), stops - starts)
    run_of[np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)]) if starts.size else []] = run_id
    run_joint = owner[starts]
    run_speed = np.array([np.median(np.abs(v[a:b])) for a, b in zip(starts, stops)])  # loop over runs
    run_level = np.full(starts.size, -1)
    speeds = []
    for j in range(n):  # loop over joints
        idx = np.flatnonzero(run_joint == j)
        if idx.size == 0:
            speeds.append([])
            continue
        log_speed = np.log(run_speed[idx])
        order = np.argsort(log_speed)
        split = np.flatnonzero(np.diff(log_speed[order]) > np.log1p(settings.level_gap)) + 1
        group = np.zeros(idx.size, dtype=np.int64)
        group[order] = np.cumsum(np.isin(np.arange(idx.size), split))
        # a level is run in every cycle in both directions; keep groups seen in half of those
        # (cycle, direction) pairs, drop the sporadic ones (pieces of ramps with noisy ddq)
        pairs = {(c, d) for c, d in zip(cycle[starts[idx]], direction[starts[idx]])}
        seen = np.array([len({(c, d) for c, d in zip(cycle[starts[idx[group == g]]], direction[starts[idx[group == g]]])})
                         for g in range(group.max() + 1)])
        kept = np.flatnonzero(seen >= settings.level_presence * len(pairs))
        renumber = np.full(group.max() + 1, -1)
        renumber[kept] = np.arange(kept.size)
        run_level[idx] = renumber[group]
        speeds.append([float(np.exp(np.median(log_speed[group == g]))) for g in kept])
    level = np.where(run_of >= 0, run_level[np.maximum(run_of, 0)], -1)
    joint = np.where(level >= 0, owner, -1)
    return Plateaus(joint, level, np.where(joint >= 0, direction, 0), cycle, speeds)
