"""dynid payload identify: the inertial parameters of a load on the flange (identify/payload.py)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

import dynid
from dynid.cli import data_options as O
from dynid.cli.common import command_warnings, console, friendly_errors, robot_option
from dynid.cli.identify_cmd import STAMP_OVERRIDE, _mapping_override

payload_app = typer.Typer(help="Payload identification: a load fixed to the flange, from a log with it.",
                          no_args_is_help=True)


def _fmt(figure: dict, spec: str = ".5g") -> tuple[str, str]:
    if figure["value"] is None:
        return "not determined", "-"
    return format(figure["value"], spec), "-" if figure["std"] is None else format(figure["std"], ".2g")


@payload_app.command("identify")
@friendly_errors(outputs=("out", "urdf"))
def identify(robot: str = robot_option(),
             params: Path = typer.Option(..., "--params", "-p", help="result.json of 'dynid identify' on the robot "
                                         "without the load (its model, preprocessing and base parameters)"),
             data: list[str] = O.DATA,
             unloaded: list[str] = typer.Option(None, "--unloaded", help="log(s) without the load: robot and payload "
                                                "are then identified together (the result's parameters are not "
                                                "trusted, only its model and preprocessing)"),
             out: Path = typer.Option(..., "--out", "-o", help="payload JSON to write"),
             urdf: Path = typer.Option(None, "--urdf", help="URDF of the robot with the payload as a fixed link"),
             force: bool = typer.Option(False, "--force", help="use a result identified on another robot"),
             gain_std: float = typer.Option(None, "--gain-std", help="relative standard deviation of the drive gains "
                                            "(torques read from currents), common to all joints: the load scales "
                                            "with them, so it adds to its covariance (e.g. 0.05 for gains known to "
                                            "5 %%; dynid drives gains calibrates them). Default: the largest "
                                            "relative std of the gains file given to --current-gain (here or to "
                                            "identify), else 0"),
             rename: str = O.RENAME, columns: str = O.COLUMNS, time_unit: str = O.TIME_UNIT,
             degrees: bool = O.DEGREES, motor_side: bool = O.MOTOR_SIDE, current_gain: str = O.CURRENT_GAIN,
             negate: str = O.NEGATE, ignore: str = O.IGNORE, topic: str = O.TOPIC, stamp: str = STAMP_OVERRIDE,
             nan: str = O.NAN) -> None:
    """Identify the mass, centre of mass and inertia of a load fixed to the flange from a log
    with it (physically consistent, with standard deviations); optionally a URDF with it.

    The logs are read and preprocessed as the robot's identification read its own (column
    layout and conventions, cutoff, torque delay: stored in result.json) unless layout options
    are given here."""
    from dynid.data.columns import ColumnMapping
    from dynid.data.io import atomic_write_text
    from dynid.data.sources import expand_sources
    from dynid.identify.bands import parameter_covariance
    from dynid.identify.payload import flange_body, identify_payload
    from dynid.identify.result import load_result, result_model

    r = dynid.load_robot(robot)
    result = load_result(params, r, force)
    options, base, beta, prep = result_model(result)
    mapping = _mapping_override(result, rename, columns, time_unit, degrees, motor_side, current_gain, negate, ignore,
                                topic, stamp) or ColumnMapping.from_dict(result.get("column_mapping"))
    beta_cov = parameter_covariance(result) if "covariance" in result else None
    relative = result.get("fit", {}).get("relative_rmsd")
    estimate = identify_payload(r, expand_sources(data), options, base, prep, beta,
                                expand_sources(unloaded) if unloaded else None, mapping, nan, beta_cov,
                                None if relative is None or None in relative else relative, gain_std,
                                mapping.current_gain is not None)
    content = estimate.to_dict()
    content.update({"robot": robot, "robot_name": r.name, "params": str(params),
                    "frame": f"link frame of the flange body ({r.joints[flange_body(r)].name})"})
    atomic_write_text(out, json.dumps(content, indent=2) + "\n")
    table = Table("payload", "value", "std", title=f"payload on {r.name} ({estimate.mode})")
    table.add_row("mass [kg]", *_fmt(content["mass"]))
    for axis, figure in zip("xyz", content["com"]):
        table.add_row(f"CoM {axis} [m]", *_fmt(figure))
    for name, figure in content["inertia_about_com"].items():
        table.add_row(f"{name} about CoM [kg m^2]", *_fmt(figure))
    console.print(table)
    for note in estimate.notes:
        if note not in command_warnings():  # printed already as a 'warning:' line
            console.print(f"[yellow]note:[/] {note}")
    console.print(f"wrote [bold]{out}[/]")
    if urdf is not None:
        from dynid.export.payload_urdf import payload_urdf_text

        atomic_write_text(urdf, payload_urdf_text(r, estimate.phi, comment=f"payload identified by dynid from {data}"))
        console.print(f"wrote [bold]{urdf}[/]")
