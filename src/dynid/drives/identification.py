"""Acceleration-free identification of a log, as a library call (``dynid identify --drive``).

``identify_drive_log`` reads one log of positions, speeds and motor voltages (or currents),
filters the momentum form of the model (``regression.filtered_system``, docs/voltage_identification.md
eqs. V1-V9), fits the base parameters and the drive gains (``regression.identify_drive_model``),
the armature of a DC motor when both voltage and current are logged, and returns the
result.json document (its "drive" block says how to predict: ``predict_drive_log``).
"""

from __future__ import annotations

import numpy as np

from dynid.version import __version__
from dynid.data.columns import ColumnMapping
from dynid.drives.fileio import parse_known, read_drive_log
from dynid.drives.regression import (
    check_options, filtered_system, identify_armature, identify_drive_model, predict_filtered, scale_groups,
)
from dynid.errors import DataError
from dynid.identify.base import BaseParameters, base_parameters
from dynid.identify.model import ModelOptions
from dynid.robot.identity import robot_identity


def _num(x):
    x = float(x)
    return x if np.isfinite(x) else None


def _system(robot, log: dict, signal: str, options: ModelOptions, base, filter_hz: float, skip_s: float,
            prefilter_hz: float = 0.0):
    x = log["u"] if signal == "voltage" else log["i"]
    if x is None:
        raise DataError(f"--input {signal}: the log has no {'u1..un' if signal == 'voltage' else 'i1..in'} columns")
    lam = 2.0 * np.pi * filter_hz
    h = float(np.mean(np.diff(log["t"])))
    extra = {k: log[k] for k in ("u", "i") if log[k] is not None}
    return filtered_system(robot, log["t"], log["q"], log["dq"], x, options, base, lam,
                           skip=int(round(skip_s / h)), extra=extra, prefilter_hz=prefilter_hz)


def identify_drive_log(robot_spec: str, robot, path, kind: str, signal: str, known: str | None, filter_hz: float,
                       skip_s: float, back_emf, options: ModelOptions,
                       prefilter_hz: float = 0.0, mapping: ColumnMapping = ColumnMapping()) -> tuple[dict, object]:
    """(result.json document, the ``DriveFit``) of one log (module docstring). kind: dc-motor |
    servo-current | servo-velocity; signal: voltage | current; known: 'm5=1.0,gain1=0.52'
    (quantities resolving the scale); filter_hz: the pole of F(s) = l / (s + l) [Hz]; skip_s:
    leave out this much of the start [s]; back_emf: known K_b [V s/rad] (dc-motor), one per joint
    or one for all (None: unknown);
    prefilter_hz: zero-phase low-pass of q, dq before the regressor [Hz] (0 = off); mapping: the
    log's layout (``fileio.read_drive_log``), stored so that ``predict`` reads its logs alike."""
    check_options(options, signal, kind)
    log = read_drive_log(path, robot, mapping)
    base = base_parameters(robot, options)
    system = _system(robot, log, signal, options, base, filter_hz, skip_s, prefilter_hz)
    fit = identify_drive_model(system, base, parse_known(known), scale_groups(robot, options, base), signal)
    b = len(base.names)
    electrical = None
    if kind == "dc-motor" and "u" in system.extra and "i" in system.extra:
        electrical = identify_armature(system, robot.gear_ratios)
    damping = electrical_damping(robot, kind, signal, fit.gains, back_emf)
    params = [{"name": nm, "value": float(v), "std": _num(s) if s > 0 else None}
              for nm, v, s in zip(fit.names, fit.values, fit.std)]
    document = {
        "robot": robot_spec, "robot_name": robot.name, "robot_identity": robot_identity(robot),
        "n": robot.n, "estimator": "ols-momentum",
        "friction": options.friction, "model": options.to_dict(), "preprocessing": {"filter_hz": filter_hz},
        "base_parameters": params[:b],
        "fit": {"rmsd": fit.rmsd.tolist(),
                "relative_rmsd": (fit.rmsd / np.where(fit.rms_input > 0, fit.rms_input, 1)).tolist(),
                "units": "V" if signal == "voltage" else "A", "domain": "filtered", "samples": fit.samples,
                "condition_number": _num(fit.condition_number)},
        "base": base.to_dict(), "data": str(path), "column_mapping": mapping.to_dict(),
        "warnings": fit.warnings, "data_notes": [],
        "diagnostics": fit.diagnostics,
        "drive": {"kind": kind, "input": signal, "filter_hz": filter_hz, "skip_seconds": skip_s,
                  "prefilter_hz": prefilter_hz,
                  "gains": params[b:], "known": fit.known, "scale_groups": fit.groups,
                  "scale_resolved": fit.scale_resolved, "groups_resolved": fit.resolved,
                  "electrical_damping": None if damping is None else damping.tolist(),
                  "armature": electrical},
        "dynid_version": __version__,
    }
    return document, fit


def electrical_damping(robot, kind: str, signal: str, gains: np.ndarray, back_emf) -> np.ndarray | None:
    """Electrical damping c per joint (eq. V4) to separate tau_m from a u: zero for currents and
    current servos; c = a N K_b for a dc-motor with known K_b (``back_emf``: (n,) or (1,) [V s/rad]);
    else unknown (None)."""
    if signal == "current" or kind == "servo-current":
        return np.zeros(robot.n)
    if back_emf is None or kind != "dc-motor":
        return None
    kb = np.asarray(back_emf, dtype=float).reshape(-1)
    kb = np.repeat(kb, robot.n) if kb.size == 1 else kb
    return gains * robot.gear_ratios * kb


def predict_drive_log(robot, result: dict, path, mapping: ColumnMapping | None = None) -> tuple[dict, np.ndarray, bool]:
    """Filtered-domain predictions of a ``--drive`` result on another log: (columns {"t",
    "tau1".. (when the damping is known), "u1".. or "i1.." predicted, "..._measured"}, the RMSD
    of the filtered input per joint (n,), whether torques were predicted); mapping: the log's
    layout (None: the result's "column_mapping", as in training)."""
    d = result["drive"]
    options = ModelOptions.from_dict(result["model"])
    base = BaseParameters.from_dict(result["base"], options)
    beta = np.array([p["value"] for p in result["base_parameters"]])
    gains = np.array([p["value"] for p in d["gains"]])
    log = read_drive_log(path, robot, mapping or ColumnMapping.from_dict(result.get("column_mapping")))
    system = _system(robot, log, d["input"], options, base, d["filter_hz"], d["skip_seconds"],
                     d.get("prefilter_hz", 0.0))
    damping = None if d["electrical_damping"] is None else np.array(d["electrical_damping"])
    pred = predict_filtered(system, beta, gains, damping)
    prefix = "u" if d["input"] == "voltage" else "i"
    cols = {"t": system.t}
    if pred["tau_hat"] is not None:
        cols.update({f"tau{j + 1}": pred["tau_hat"][:, j] for j in range(robot.n)})
    cols.update({f"{prefix}{j + 1}": pred["x_hat"][:, j] for j in range(robot.n)})
    cols.update({f"{prefix}{j + 1}_measured": system.x[:, j] for j in range(robot.n)})
    rmsd = np.sqrt(np.mean((pred["x_hat"] - system.x) ** 2, axis=0))
    return cols, rmsd, pred["tau_hat"] is not None
