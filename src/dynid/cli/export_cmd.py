"""dynid export: the identified (physically consistent) model as URDF and/or JSON / YAML."""

from __future__ import annotations

from pathlib import Path

import typer

import dynid
from dynid.cli.common import command_warnings, console, friendly_errors, robot_option
from dynid.errors import DataError


@friendly_errors(outputs=("urdf", "json_out", "yaml_out"))
def export(robot: str = robot_option("the robot identified: builtin name, .urdf or .yaml (its kinematics and drives)"),
           params: Path = typer.Option(..., "--params", "-p",
                                       help="result.json of 'dynid identify --estimator pc' (physically consistent)"),
           urdf: Path = typer.Option(None, "--urdf", help="URDF to write, inertials in kg, m, kg m^2"),
           json_out: Path = typer.Option(None, "--json", help="model file to write as JSON (links, friction, drives; SI)"),
           yaml_out: Path = typer.Option(None, "--yaml", help="model file to write as YAML (same content as --json)"),
           name: str = typer.Option(None, "--name", help="robot name in the URDF (default: the robot's name)"),
           force: bool = typer.Option(False, "--force", help="export even if the result was identified on another "
                                      "robot (said in the files written)")) -> None:
    """Export the identified model: URDF with the identified inertial elements, JSON/YAML with
    friction, rotor inertia and drive parameters. Needs a physically consistent estimate."""
    from dynid.export import identified_model, model_dict, write_model_file, write_urdf
    from dynid.identify.result import load_result

    if urdf is None and json_out is None and yaml_out is None:
        raise DataError("nothing to write: give --urdf, --json and/or --yaml")
    r = dynid.load_robot(robot)
    result = load_result(params, r, force)
    mismatch = command_warnings()
    model = identified_model(r, result, str(params))
    forced = f"; --force: {' '.join(mismatch)}" if mismatch and force else ""
    if urdf is not None:
        write_urdf(urdf, model.robot, name, comment=f"identified by dynid ({model.estimator} estimate, {params}); "
                                                     "friction, rotor inertia and drives: see the JSON/YAML export"
                                                     + forced.replace("--", "- -"))
        console.print(f"wrote [bold]{urdf}[/] (URDF, {model.robot.n} links)")
    content = model_dict(model, result)
    if forced:
        content["warnings"] = mismatch
    for path in (json_out, yaml_out):
        if path is not None:
            write_model_file(path, content)
            console.print(f"wrote [bold]{path}[/]")
