"""identify/predict with --drive: acceleration-free identification from position, speed and
motor voltage or current (dynid.drives; docs/voltage_identification.md). Thin wiring only."""

from __future__ import annotations

import numpy as np
from rich.table import Table

from dynid.cli.common import console, diagnostics_line
from dynid.drives import filtered_system, identify_armature, identify_drive_model, predict_filtered, scale_groups
from dynid.drives.fileio import parse_known, read_drive_log
from dynid.drives.regression import check_options
from dynid.errors import DataError
from dynid.identify.base import BaseParameters, base_parameters
from dynid.identify.model import ModelOptions
from dynid.identify.result import write_result
from dynid.robot.identity import robot_identity
from dynid import __version__


def _num(x):
    x = float(x)
    return x if np.isfinite(x) else None


def _system(r, log, signal, options, base, filter_hz, skip_s, prefilter_hz=0.0):
    x = log["u"] if signal == "voltage" else log["i"]
    if x is None:
        raise DataError(f"--input {signal}: the log has no {'u1..un' if signal == 'voltage' else 'i1..in'} columns")
    lam = 2.0 * np.pi * filter_hz
    h = float(np.mean(np.diff(log["t"])))
    extra = {k: log[k] for k in ("u", "i") if log[k] is not None}
    return filtered_system(r, log["t"], log["q"], log["dq"], x, options, base, lam,
                           skip=int(round(skip_s / h)), extra=extra, prefilter_hz=prefilter_hz)


def identify_drive(robot_spec, r, data, out, kind, signal, known_text, filter_hz, skip_s, back_emf, options,
                   prefilter_hz=0.0):
    check_options(options, signal, kind)
    log = read_drive_log(data, r)
    base = base_parameters(r, options)
    system = _system(r, log, signal, options, base, filter_hz, skip_s, prefilter_hz)
    groups = scale_groups(r, options, base)
    fit = identify_drive_model(system, base, parse_known(known_text), groups, signal)
    b = len(base.names)
    electrical = None
    if kind == "dc-motor" and "u" in system.extra and "i" in system.extra:
        electrical = identify_armature(system, r.gear_ratios)
    damping = _damping(r, kind, signal, fit.gains, back_emf)
    params = [{"name": nm, "value": float(v), "std": _num(s) if s > 0 else None}
              for nm, v, s in zip(fit.names, fit.values, fit.std)]
    result = {
        "robot": robot_spec, "robot_name": r.name, "robot_identity": robot_identity(r),
        "n": r.n, "estimator": "ols-momentum",
        "friction": options.friction, "model": options.to_dict(), "preprocessing": {"filter_hz": filter_hz},
        "base_parameters": params[:b],
        "fit": {"rmsd": fit.rmsd.tolist(),
                "relative_rmsd": (fit.rmsd / np.where(fit.rms_input > 0, fit.rms_input, 1)).tolist(),
                "units": "V" if signal == "voltage" else "A", "domain": "filtered", "samples": fit.samples,
                "condition_number": _num(fit.condition_number)},
        "base": base.to_dict(), "data": str(data), "warnings": fit.warnings, "data_notes": [],
        "diagnostics": fit.diagnostics,
        "drive": {"kind": kind, "input": signal, "filter_hz": filter_hz, "skip_seconds": skip_s,
                  "prefilter_hz": prefilter_hz,
                  "gains": params[b:], "known": fit.known, "scale_groups": fit.groups,
                  "scale_resolved": fit.scale_resolved, "groups_resolved": fit.resolved,
                  "electrical_damping": None if damping is None else damping.tolist(),
                  "armature": electrical},
        "dynid_version": __version__,
    }
    write_result(out, result)
    table = Table("parameter", "value", "std", title=f"acceleration-free ({signal}) on {r.name}")
    for p in params:
        table.add_row(p["name"], f"{p['value']:.6g}", "known" if p["std"] is None else f"{p['std']:.3g}")
    console.print(table)
    console.print(f"scale groups (joints) {fit.groups}: resolved {fit.resolved}")
    if fit.diagnostics is not None:
        console.print(diagnostics_line(fit.diagnostics), soft_wrap=True)
    console.print(f"RMSD per joint (filtered {result['fit']['units']}): " + ", ".join(f"{v:.4g}" for v in fit.rmsd))
    if electrical:
        console.print(f"armature: R {np.round(electrical['resistance'], 6).tolist()} Ohm, "
                      f"L {np.round(electrical['inductance'], 8).tolist()} H, "
                      f"K_b {np.round(electrical['back_emf'], 6).tolist()} V s/rad")
    for w in fit.warnings:
        console.print(f"[yellow]warning:[/] {w}")
    console.print(f"wrote [bold]{out}[/]")


def _damping(r, kind, signal, gains, back_emf):
    """Electrical damping c per joint (eq. V4) to separate tau_m from a u: zero for currents and
    current servos; c = a N K_b for a dc-motor with known K_b (--back-emf); else unknown (None)."""
    if signal == "current" or kind == "servo-current":
        return np.zeros(r.n)
    if back_emf is None or kind != "dc-motor":
        return None
    from dynid.cli.option_checks import number_list

    kb = np.array(number_list(back_emf, "--back-emf", (1, r.n), "back-EMF constants K_b [V s/rad]"))
    kb = np.repeat(kb, r.n) if kb.size == 1 else kb
    return gains * r.gear_ratios * kb


def predict_drive(r, result, data, out, write_columns):
    """Filtered-domain predictions (x_hat and, when the damping is known, tau_hat) on another log."""
    d = result["drive"]
    options = ModelOptions.from_dict(result["model"])
    base = BaseParameters.from_dict(result["base"], options)
    beta = np.array([p["value"] for p in result["base_parameters"]])
    gains = np.array([p["value"] for p in d["gains"]])
    log = read_drive_log(data, r)
    system = _system(r, log, d["input"], options, base, d["filter_hz"], d["skip_seconds"],
                     d.get("prefilter_hz", 0.0))
    damping = None if d["electrical_damping"] is None else np.array(d["electrical_damping"])
    pred = predict_filtered(system, beta, gains, damping)
    prefix = "u" if d["input"] == "voltage" else "i"
    cols = {"t": system.t}
    if pred["tau_hat"] is not None:
        cols.update({f"tau{j + 1}": pred["tau_hat"][:, j] for j in range(r.n)})
    cols.update({f"{prefix}{j + 1}": pred["x_hat"][:, j] for j in range(r.n)})
    cols.update({f"{prefix}{j + 1}_measured": system.x[:, j] for j in range(r.n)})
    write_columns(out, cols)
    rmsd = np.sqrt(np.mean((pred["x_hat"] - system.x) ** 2, axis=0))
    console.print(f"filtered {prefix} RMSD per joint: " + ", ".join(f"{v:.4g}" for v in rmsd))
    if pred["tau_hat"] is None:
        console.print("[yellow]note:[/] torques not written: the back-EMF damping is unknown "
                      "(give --back-emf to identify)")
    console.print(f"wrote [bold]{out}[/] ({system.t.size} samples, filtered with F(s) = l/(s+l), "
                  f"l = 2 pi {d['filter_hz']:g} Hz)")
