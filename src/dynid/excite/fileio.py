"""Trajectory files (JSON) and joint data file export.

Trajectory file, written by ``dynid excite optimize`` and read by ``dynid excite evaluate``:

    {"format": "dynid-excitation-trajectory", "version": 1,
     "family": "fourier" | "harmonic", "robot": str, "n": int,
     "w_f": float [rad/s], "period": float [s], "harmonics": [int, ...],   # multipliers l
     "q0": [n floats] [rad | m],
     "a": [[n floats] per harmonic],        # fourier: a_l (eq. 4.19) [rad/s]; harmonic: a_k [rad]
     "b": [[n floats] per harmonic],        # fourier only: b_l [rad/s]
     "metadata": {...},                     # free-form: criterion, cond, seed, budget, ...
     "limits": {...},                       # optional: every limit used and its source
     "geometry": {...}}                     # optional: collision model, clearance, workspace

``limits`` and ``geometry`` (docs/formats.md) travel in ``PeriodicTrajectory.metadata`` under
the same names and are written at the top level.

Joint data files (docs/formats.md section 3) are written by ``dynid.data.io.write_columns``
(CSV or Parquet by extension, atomically: temporary file, then os.replace).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from dynid.files.inputs import read_json_document
from dynid.data.io import atomic_write_text, write_columns
from dynid.errors import DataError
from dynid.excite.builtin import BUILTIN_TRAJECTORIES, builtin_trajectory
from dynid.excite.periodic import PeriodicTrajectory

FORMAT = "dynid-excitation-trajectory"
TOP_LEVEL = ("limits", "geometry")  # metadata entries written as top-level fields


def _clean(value):
    """JSON-safe copy: numpy scalars/arrays to Python, non-finite floats to None."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def write_json(path: str | Path, payload: dict) -> None:
    atomic_write_text(path, json.dumps(_clean(payload), indent=2) + "\n")


def trajectory_to_dict(trajectory: PeriodicTrajectory, robot_name: str) -> dict:
    m = len(trajectory.harmonics)
    c = trajectory.coefficients
    out = {"format": FORMAT, "version": 1, "family": trajectory.family, "robot": robot_name,
           "n": trajectory.n, "w_f": trajectory.w_f, "period": trajectory.period,
           "harmonics": list(trajectory.harmonics), "q0": trajectory.q0.tolist(), "a": c[:m].tolist()}
    if trajectory.family == "fourier":
        out["b"] = c[m:].tolist()
    meta = dict(trajectory.metadata)
    out["metadata"] = {k: v for k, v in meta.items() if k not in TOP_LEVEL}
    out.update({k: meta[k] for k in TOP_LEVEL if k in meta})
    return out


def trajectory_from_dict(d: dict, source: str = "<dict>") -> PeriodicTrajectory:
    if d.get("format") != FORMAT:
        raise DataError(f"{source}: not a dynid trajectory file (expected \"format\": \"{FORMAT}\")")
    try:
        family = d["family"]
        a = np.asarray(d["a"], dtype=float)
        coefficients = np.vstack([a, np.asarray(d["b"], dtype=float)]) if family == "fourier" else a
        meta = dict(d.get("metadata") or {})
        meta.update({k: d[k] for k in TOP_LEVEL if d.get(k) is not None})
        return PeriodicTrajectory(family, float(d["w_f"]), tuple(d["harmonics"]), d["q0"], coefficients, meta)
    except KeyError as exc:
        raise DataError(f"{source}: trajectory file lacks the field {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise DataError(f"{source}: malformed trajectory file ({exc})") from exc


def write_trajectory(path: str | Path, trajectory: PeriodicTrajectory, robot_name: str) -> None:
    write_json(path, trajectory_to_dict(trajectory, robot_name))


def load_trajectory(spec: str, n: int | None = None, robot_name: str | None = None) -> PeriodicTrajectory:
    """A builtin trajectory name (``thesis-table-4.1``) or a trajectory JSON file.

    Builtins belong to one robot: asking for one with another ``robot_name`` is an error."""
    if spec in BUILTIN_TRAJECTORIES:
        made_for = BUILTIN_TRAJECTORIES[spec][1]
        if robot_name is not None and robot_name != made_for:
            raise DataError(f"builtin trajectory '{spec}' is for '{made_for}', not '{robot_name}'; "
                            "pass a trajectory file (dynid excite optimize --out ...)")
        return builtin_trajectory(spec, n)
    path = Path(spec)
    if not path.exists():
        raise FileNotFoundError(f"trajectory '{spec}': no such file, and not a builtin "
                                f"({', '.join(sorted(BUILTIN_TRAJECTORIES))})")
    d = read_json_document(path, "trajectory file")
    if not isinstance(d, dict):
        raise DataError(f"{spec}: expected a JSON object with \"format\": \"{FORMAT}\"")
    traj = trajectory_from_dict(d, spec)
    traj = traj.with_coefficients(traj.q0, traj.coefficients, robot=d.get("robot"))
    if n is not None and traj.n != n:
        raise DataError(f"{spec}: trajectory has {traj.n} joints, the robot has {n}")
    return traj


def joint_columns(t, q, dq, ddq, cycle=None, stage=None) -> dict[str, np.ndarray]:
    """Contract column names: t, q1..qn, dq1..dqn, ddq1..ddqn[, cycle, stage]."""
    n = q.shape[1]
    cols = {"t": np.asarray(t, dtype=float)}
    for prefix, arr in (("q", q), ("dq", dq), ("ddq", ddq)):
        cols.update({f"{prefix}{j + 1}": arr[:, j] for j in range(n)})
    if cycle is not None:
        cols["cycle"] = np.asarray(cycle, dtype=np.int64)
    if stage is not None:
        cols["stage"] = np.asarray(stage, dtype=str)
    return cols


def write_joint_file(path: str | Path, t, q, dq, ddq, cycle=None, stage=None) -> None:
    """Write a joint data file (CSV, or Parquet for .parquet/.pq), atomically."""
    write_columns(path, joint_columns(t, q, dq, ddq, cycle, stage))
