"""identify/predict with --drive: acceleration-free identification from position, speed and
motor voltage or current (``dynid.drives.identification``; docs/voltage_identification.md).
Thin wiring only: call, write, print."""

from __future__ import annotations

import numpy as np
from rich.table import Table

from dynid.cli.common import console, diagnostics_line
from dynid.errors import DataError

# the options of ``dynid identify`` that --drive uses (its own, the model's and the log's layout);
# any other one given is refused rather than ignored (``refuse_unused``)
USED = {"robot", "data", "out", "friction", "offset", "rotor_inertia", "smooth_sign", "drive", "drive_input", "known",
        "filter_hz", "skip_seconds", "back_emf", "prefilter_hz", "rename", "columns", "time_unit", "degrees",
        "motor_side", "negate", "ignore", "time_range", "rows"}
HINTS = {"lowpass": " (its low-pass is --prefilter-hz, and F(s) of --filter-hz)",
         "current_gain": " (--input current identifies the gains; --known gainJ=K fixes one)"}


def refuse_unused(command, given: dict) -> None:
    """One error naming the first option of ``command`` (a typer command function) given a value
    other than its default that the acceleration-free identification does not use, or a
    friction model it cannot fit (``--friction auto|stribeck`` choose or fit a model on the log's
    accelerations, which --drive does without)."""
    import inspect

    from dynid.identify.identification import CHOSEN_FRICTION

    for name, parameter in inspect.signature(command).parameters.items():
        option = parameter.default
        default = getattr(option, "default", option)
        if name not in USED and given[name] != default:
            flag = next(iter(getattr(option, "param_decls", None) or ()), "--" + name.replace("_", "-"))
            raise DataError(f"{flag}: not with --drive (the acceleration-free identification does not use it)"
                            + HINTS.get(name, ""))
    if given["friction"] in CHOSEN_FRICTION:
        raise DataError(f"--friction {given['friction']}: not with --drive (the model is chosen or its Stribeck "
                        "velocities fitted on the log by identify's own fit); use none, coulomb-viscous, polynomial "
                        "or asymmetric")


def identify_drive(robot_spec, r, data, out, kind, signal, known_text, filter_hz, skip_s, back_emf, options,
                   prefilter_hz=0.0, mapping=None):
    from dynid.cli.option_checks import number_list
    from dynid.data.columns import ColumnMapping
    from dynid.drives.identification import identify_drive_log
    from dynid.identify.result import write_result

    kb = None if back_emf is None else number_list(back_emf, "--back-emf", (1, r.n), "back-EMF constants K_b [V s/rad]")
    result, fit = identify_drive_log(robot_spec, r, data, kind, signal, known_text, filter_hz, skip_s, kb, options,
                                     prefilter_hz, mapping or ColumnMapping())
    write_result(out, result)
    params = result["base_parameters"] + result["drive"]["gains"]
    table = Table("parameter", "value", "std", title=f"acceleration-free ({signal}) on {r.name}")
    for p in params:
        table.add_row(p["name"], f"{p['value']:.6g}", "known" if p["std"] is None else f"{p['std']:.3g}")
    console.print(table)
    console.print(f"scale groups (joints) {fit.groups}: resolved {fit.resolved}")
    if fit.diagnostics is not None:
        console.print(diagnostics_line(fit.diagnostics), soft_wrap=True)
    console.print(f"RMSD per joint (filtered {result['fit']['units']}): " + ", ".join(f"{v:.4g}" for v in fit.rmsd))
    electrical = result["drive"]["armature"]
    if electrical:
        console.print(f"armature: R {np.round(electrical['resistance'], 6).tolist()} Ohm, "
                      f"L {np.round(electrical['inductance'], 8).tolist()} H, "
                      f"K_b {np.round(electrical['back_emf'], 6).tolist()} V s/rad")
    for w in fit.warnings:
        console.print(f"[yellow]warning:[/] {w}")
    console.print(f"wrote [bold]{out}[/]")


def predict_drive(r, result, data, out, write_columns, mapping=None):
    """Filtered-domain predictions (x_hat and, when the damping is known, tau_hat) on another log
    (``mapping``: its layout; None: the result's)."""
    from dynid.drives.identification import predict_drive_log

    cols, rmsd, torques = predict_drive_log(r, result, data, mapping)
    write_columns(out, cols)
    prefix = "u" if result["drive"]["input"] == "voltage" else "i"
    console.print(f"filtered {prefix} RMSD per joint: " + ", ".join(f"{v:.4g}" for v in rmsd))
    if not torques:
        console.print("[yellow]note:[/] torques not written: the back-EMF damping is unknown "
                      "(give --back-emf to identify)")
    console.print(f"wrote [bold]{out}[/] ({cols['t'].size} samples, filtered with F(s) = l/(s+l), "
                  f"l = 2 pi {result['drive']['filter_hz']:g} Hz)")
