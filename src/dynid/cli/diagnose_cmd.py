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
             params: Path = typer.Option(None, "--params", "-p", help="result.json of 'dynid identify': its model "
                                         "and preprocessing are used (default: Coulomb-viscous friction, rotor "
                                         "inertia, offsets; low-pass min(10 Hz, fs/10))"),
             lowpass: float = typer.Option(None, "--lowpass", help="low-pass cutoff of q before differentiation [Hz]"),
             json_out: Path = typer.Option(None, "--json", help="write the findings to this JSON file (report input)"),
             force: bool = typer.Option(False, "--force", help="use a result identified on another robot"),
             rename: str = O.RENAME, columns: str = O.COLUMNS, time_unit: str = O.TIME_UNIT,
             degrees: bool = O.DEGREES, motor_side: bool = O.MOTOR_SIDE, current_gain: str = O.CURRENT_GAIN,
             negate: str = O.NEGATE, ignore: str = O.IGNORE, segments: str = O.SEGMENTS, max_gap: float = O.MAX_GAP,
             nan: str = O.NAN) -> None:
    """Check a log (and the robot's description) for the mistakes that spoil identification:
    torque delay, sign or scale per joint, units, a lagging or scaled velocity column, clipped
    torques, wrong gravity direction, poor excitation. Each finding: evidence and fix."""
    from dataclasses import replace

    from dynid.data.io import atomic_write_text
    from dynid.data.preprocess import Preprocessing
    from dynid.identify.diagnose import diagnose as run_checks

    r = dynid.load_robot(robot)
    options = prep = None
    if params is not None:
        from dynid.identify.result import load_result, result_model

        options, _, _, prep = result_model(load_result(params, r, force))
    prep = replace(prep or Preprocessing(), segments=segments, max_gap=max_gap)
    if lowpass is not None:
        prep = replace(prep, lowpass_hz=lowpass)
    mapping = O.mapping_from(rename, columns, time_unit, degrees, motor_side, current_gain, negate, ignore)
    result = run_checks(r, data, mapping, nan, options, prep)
    console.print(f"{data}: {result.samples} samples at {result.rate_hz:.4g} Hz checked "
                  f"(q low-passed at {result.cutoff_hz:.3g} Hz and differentiated; logged dq/ddq only compared)")
    for f in result.findings:
        joints = f" (joint {', '.join(map(str, f.joints))})" if f.joints else ""
        console.print(f"[{STYLE[f.severity]}]{f.severity.upper()}[/] {f.check}{joints}: {f.evidence}",
                      highlight=False)
        console.print(f"    fix: {f.fix}", highlight=False)
    alarms = len(result.alarms)
    console.print("nothing alarming found" if not alarms else f"{alarms} alarm(s): fix them before identifying")
    if json_out is not None:
        atomic_write_text(json_out, json.dumps(result.to_dict(), indent=2) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")
