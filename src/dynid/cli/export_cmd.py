"""dynid export: the identified (physically consistent) model as URDF, MJCF (MuJoCo) and/or JSON / YAML."""

from __future__ import annotations

from pathlib import Path

import typer

import dynid
from dynid.cli.common import command_warnings, console, friendly_errors, robot_option
from dynid.errors import DataError


@friendly_errors(outputs=("urdf", "mjcf", "json_out", "yaml_out"))
def export(robot: str = robot_option("the robot identified: builtin name, .urdf or .yaml (its kinematics and drives)"),
           params: Path = typer.Option(..., "--params", "-p",
                                       help="result.json of 'dynid identify --estimator pc' (physically consistent)"),
           urdf: Path = typer.Option(None, "--urdf", help="URDF to write, inertials in kg, m, kg m^2; joint "
                                     "<dynamics damping friction> (viscous, Coulomb)"),
           mjcf: Path = typer.Option(None, "--mjcf", help="MuJoCo model (MJCF) to write: identified inertials, "
                                     "armature (rotor inertia), damping (viscous), frictionloss (Coulomb)"),
           json_out: Path = typer.Option(None, "--json", help="model file to write as JSON (links, friction, drives; SI)"),
           yaml_out: Path = typer.Option(None, "--yaml", help="model file to write as YAML (same content as --json)"),
           name: str = typer.Option(None, "--name", help="robot name in the URDF (default: the robot's name)"),
           force: bool = typer.Option(False, "--force", help="export even if the result was identified on another "
                                      "robot (said in the files written)")) -> None:
    """Export the identified model: URDF with the identified inertial elements and friction, MJCF
    for MuJoCo (also rotor inertia as armature), JSON/YAML with friction, rotor inertia and drive
    parameters. Needs a physically consistent estimate."""
    import warnings

    from dynid.errors import DynidWarning
    from dynid.data.io import atomic_write_text
    from dynid.export import identified_model, mjcf_text, model_dict, urdf_terms, write_model_file, write_urdf
    from dynid.identify.result import load_result

    if urdf is None and mjcf is None and json_out is None and yaml_out is None:
        raise DataError("nothing to write: give --urdf, --mjcf, --json and/or --yaml")
    r = dynid.load_robot(robot)
    result = load_result(params, r, force)
    mismatch = command_warnings()
    model = identified_model(r, result, str(params))
    forced = f"; --force: {' '.join(mismatch)}" if mismatch and force else ""
    # the MJCF text first: what it refuses (mimic joints) is refused before any file is written
    mjcf_doc = None if mjcf is None else mjcf_text(model, name, comment=f"identified by dynid ({model.estimator} "
                                                                        f"estimate, {params})" + forced)
    if urdf is not None:  # what URDF cannot carry is said as the MJCF's is: a line each and in the file
        dynamics, notes = urdf_terms(model)
        write_urdf(urdf, model.robot, name, comment="\n".join(
            [f"identified by dynid ({model.estimator} estimate, {params}); drives: see the JSON/YAML exports"
             + forced.replace("--", "- -")] + notes), dynamics=dynamics)
        for note in notes:
            warnings.warn(DynidWarning(f"{urdf}: {note}"), stacklevel=1)
        console.print(f"wrote [bold]{urdf}[/] (URDF, {model.robot.n} links)")
    if mjcf_doc is not None:
        text, notes = mjcf_doc
        atomic_write_text(mjcf, text)
        for note in notes:
            warnings.warn(DynidWarning(f"{mjcf}: {note}"), stacklevel=1)
        followers = model.robot.n_bodies - model.robot.n
        tied = f" and {followers} mimic joint{'s' * (followers > 1)} as equalities" if followers else ""
        console.print(f"wrote [bold]{mjcf}[/] (MJCF, {model.robot.n} joints{tied}: inertials, armature, damping, "
                      "frictionloss)")
    content = model_dict(model, result)
    if forced:
        content["warnings"] = mismatch
    for path in (json_out, yaml_out):
        if path is not None:
            write_model_file(path, content)
            console.print(f"wrote [bold]{path}[/]")
