"""dynid drives gains: current-to-torque gains from logs without and with a known load (drives/gains.py)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

import dynid
from dynid.cli import data_options as O
from dynid.cli.common import console, friendly_errors, robot_option
from dynid.cli.common import number_text as _fmt

drives_app = typer.Typer(help="Drives: current-to-torque gains from a known load.", no_args_is_help=True)


@drives_app.command("gains")
@friendly_errors(outputs=("out",))
def gains(robot: str = robot_option(),
          unloaded: list[str] = typer.Option(..., "--unloaded", help="current log(s) without the load; repeatable"),
          loaded: list[str] = typer.Option(..., "--loaded", help="current log(s) with the known load on the flange; "
                                           "repeatable"),
          mass: float = typer.Option(..., "--mass", help="the load's mass [kg]"),
          com: str = typer.Option(None, "--com", help="the load's centre of mass x,y,z [m] in the flange body's link "
                                  "frame (known: it also fixes the wrist's gains)"),
          inertia: str = typer.Option(None, "--inertia", help="the load's inertia about its centre of mass "
                                      "Ixx,Ixy,Ixz,Iyy,Iyz,Izz [kg m^2] (needs --com)"),
          method: str = typer.Option("tls", "--method", help="tls (total least squares refined to the structured "
                                     "one: only the currents err; default) | ols | pc (physically consistent)"),
          out: Path = typer.Option(..., "--out", "-o", help="drive gains JSON to write (give it to --current-gain)"),
          friction: str = O.FRICTION, offset: bool = O.OFFSET, rotor_inertia: bool = O.ROTOR,
          smooth_sign: float = O.SMOOTH_SIGN,
          lowpass: str = typer.Option(None, "--lowpass", help="zero-phase low-pass cutoff [Hz] before "
                                      "differentiation, 0 = off, 'auto' (default: chosen by cross-validation of "
                                      "the logs without the load, in torques from a first estimate of the gains, "
                                      "as identify chooses it; a log too short for the folds keeps min(20 Hz, "
                                      "fs/10) with a note, where 'auto' is an error)"),
          derivative: str = O.DERIVATIVE, min_velocity: float = O.MIN_VELOCITY, segments: str = O.SEGMENTS,
          max_gap: float = O.MAX_GAP, tau_delay: float = O.TAU_DELAY,
          rename: str = O.RENAME, columns: str = O.COLUMNS, time_unit: str = O.TIME_UNIT, degrees: bool = O.DEGREES,
          negate: str = O.NEGATE, ignore: str = O.IGNORE, topic: str = O.TOPIC, stamp: str = O.STAMP,
          nan: str = O.NAN, rest: str = O.REST,
          max_condition: float = typer.Option(1e7, "--max-condition", help="refuse fits above this condition "
                                              "number")) -> None:
    """Identify each joint's current-to-torque gain K (tau = K i) and the robot's parameters together
    from current logs without and with a load of known mass (Gautier & Briot 2014); the JSON it writes
    is what --current-gain takes."""
    from dynid.data.io import atomic_write_text
    from dynid.data.sources import expand_sources
    from dynid.drives.calibrate import calibrate_with_cutoff
    from dynid.drives.gains import METHODS, KnownLoad
    from dynid.errors import DataError

    if method not in METHODS:
        raise DataError(f"--method {method}: expected one of {list(METHODS)}")
    r = dynid.load_robot(robot)
    from dynid.cli.option_checks import number_list

    load = KnownLoad(mass, None if com is None else tuple(number_list(com, "--com", (3,), "coordinates x,y,z [m]")),
                     None if inertia is None else tuple(number_list(inertia, "--inertia", (6,),
                                                                    "moments Ixx,Ixy,Ixz,Iyy,Iyz,Izz [kg m^2]")))
    options = O.model_from(friction, rotor_inertia, offset, smooth_sign, command="drives gains")
    cutoff = O.lowpass_from(lowpass)
    prep = O.preprocessing_from(cutoff if isinstance(cutoff, float) else None, derivative, None, 1, min_velocity,
                                segments, max_gap, tau_delay)
    mapping = O.mapping_from(rename, columns, time_unit, degrees, False, None, negate, ignore, topic, stamp)
    result = calibrate_with_cutoff(r, expand_sources(unloaded), expand_sources(loaded), load, options, prep, mapping,
                                   method, nan, max_condition, lowpass="auto" if cutoff in (None, "auto") else cutoff,
                                   lowpass_fallback=cutoff is None, rest="auto" if O.rest_from(rest) else "off")
    content = result.to_dict()
    content.update({"robot": robot, "robot_name": r.name})
    atomic_write_text(out, json.dumps(content, indent=2) + "\n")
    k, std = result.gains()
    table = Table("joint", "gain K [N m/A]", "std", "%std", "rms current residual [A]",
                  title=f"drive gains of {r.name} ({method}, load {mass:g} kg)")
    for j in range(r.n):
        table.add_row(str(j + 1), f"{k[j]:.6g}", _fmt(std[j]), f"{100 * std[j] / abs(k[j]):.3f}",
                      _fmt(result.fit.rms_current[j]))
    console.print(table)
    if "lowpass_selection" in content:
        console.print(f"low-pass cutoff {content['preprocessing']['lowpass_hz']:.3g} Hz chosen by cross-validation of "
                      "the logs without the load (torques from the first estimate of the gains)")
    for note in content["notes"]:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"use: --current-gain {out}   (or --current-gain {result.current_gain_text()})")
    console.print(f"wrote [bold]{out}[/]")
