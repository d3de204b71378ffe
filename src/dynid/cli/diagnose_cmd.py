"""dynid diagnose: why a fit is bad (identify/diagnose/)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

import dynid
from dynid.cli import data_options as O
from dynid.cli.common import console, friendly_errors, robot_option

STYLE = {"alarm": "bold red", "warning": "yellow", "info": "dim"}


@friendly_errors(outputs=("json_out",))
def diagnose(robot: str = robot_option(),
             data: Path = typer.Option(..., "--data", "-d", help="joint data file (CSV or Parquet) with torques"),
             params: Path = typer.Option(None, "--params", "-p", help="result.json of 'dynid identify': its model, "
                                         "preprocessing and column mapping are used (default: Coulomb-viscous "
                                         "friction, rotor inertia, offsets; low-pass min(10 Hz, fs/10))"),
             lowpass: float = typer.Option(None, "--lowpass", help="low-pass cutoff of q before differentiation [Hz]"),
             json_out: Path = typer.Option(None, "--json", help="write the findings to this JSON file (report input)"),
             force: bool = typer.Option(False, "--force", help="use a result identified on another robot"),
             rename: str = O.RENAME, columns: str = O.COLUMNS, time_unit: str = O.TIME_UNIT,
             degrees: bool = O.DEGREES, motor_side: bool = O.MOTOR_SIDE, current_gain: str = O.CURRENT_GAIN,
             negate: str = O.NEGATE, ignore: str = O.IGNORE,
             segments: str = typer.Option(None, "--segments", help="gaps | auto (default: the result's with "
                                          "--params, else gaps)"),
             max_gap: float = typer.Option(None, "--max-gap", help="gap threshold, multiple of the median step "
                                           "(default: the result's with --params, else 5)"),
             time_range: str = O.TIME_RANGE, rows: str = O.ROWS, nan: str = O.NAN) -> None:
    """Check a log (and the robot's description) for the mistakes that spoil identification:
    torque delay, sign or scale per joint, units, a lagging or scaled velocity column, clipped
    torques, wrong gravity direction, poor excitation. Each finding: evidence and fix."""
    from dataclasses import replace

    from dynid.data.io import atomic_write_text
    from dynid.data.preprocess import Preprocessing
    from dynid.identify.diagnose import diagnose as run_checks

    r = dynid.load_robot(robot)
    options = prep = result = None
    if params is not None:
        from dynid.identify.result import load_result, result_model

        result = load_result(params, r, force)
        options, _, _, prep = result_model(result)
    prep = prep or Preprocessing()
    prep = replace(prep, segments=segments or prep.segments, max_gap=max_gap or prep.max_gap)
    if lowpass is not None:
        prep = replace(prep, lowpass_hz=lowpass)
    layout = (rename, columns, time_unit, degrees, motor_side, current_gain, negate, ignore)
    if result is not None and all(v in (None, False, "s") for v in layout):  # the result's own layout
        from dynid.data.columns import ColumnMapping

        mapping = ColumnMapping.from_dict(result.get("column_mapping"))
    else:
        mapping = O.mapping_from(*layout)
    if time_range is not None or rows is not None:
        mapping = O.with_part(mapping, time_range, rows)
    result = run_checks(r, data, mapping, nan, options, prep)
    console.print(f"{data}: {result.samples} samples at {result.rate_hz:.4g} Hz checked "
                  f"(q low-passed at {result.cutoff_hz:.3g} Hz and differentiated; logged dq/ddq only compared)")
    for f in result.findings:
        joints = f" (joint {', '.join(map(str, f.joints))})" if f.joints else ""
        console.print(f"[{STYLE[f.severity]}]{f.severity.upper()}[/] {f.check}{joints}: {f.evidence}",
                      highlight=False)
        console.print(f"    fix: {f.fix}", highlight=False)
    for note in result.notes:
        console.print(f"[dim]note: {note}[/]", soft_wrap=True)
    alarms = len(result.alarms)
    console.print("nothing alarming found" if not alarms else f"{alarms} alarm(s): fix them before identifying")
    if json_out is not None:
        atomic_write_text(json_out, json.dumps(result.to_dict(), indent=2) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")
