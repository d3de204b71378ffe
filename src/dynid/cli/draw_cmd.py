"""dynid robot draw ROBOT --q ... --out pose.png: postures as stick figures with link frames."""

from __future__ import annotations

from pathlib import Path

import typer

from dynid.cli.common import console, friendly_errors


@friendly_errors(outputs=("out",))
def draw(robot: str = typer.Argument(..., help="builtin name, .urdf or .yaml file"),
         q: list[str] = typer.Option(None, "--q", help="joint values, comma-separated, one per joint [rad | m]; "
                                     "repeat for several postures side by side (default: all zeros)"),
         degrees: bool = typer.Option(False, "--degrees", help="--q of revolute joints in degrees"),
         frames: bool = typer.Option(True, "--frames/--no-frames", help="draw every link frame (x red, y green, "
                                     "z blue)"),
         title: str = typer.Option(None, "--title", help="figure title"),
         out: Path = typer.Option(..., "--out", "-o", help="PNG file to write")) -> None:
    """Draw ROBOT at the given joint values: links as a stick figure from forward kinematics,
    link frames, centres of mass (orange); thesis Figs 4.6/4.9, seed Figs 9-11."""
    import numpy as np

    from dynid.cli.option_checks import number_list
    from dynid.report.cycle_figures import save_png
    from dynid.report.pose_figure import postures_figure
    from dynid.robot import load_robot

    r = load_robot(robot)
    poses = []
    for text in q or [",".join(["0"] * r.n)]:
        values = np.array(number_list(text, "--q", (r.n,), f"values, one per joint (robot '{r.name}' has {r.n} "
                                                            "joints) [rad | m]"))
        if degrees:
            values = np.where(r.is_revolute, np.deg2rad(values), values)
        lo, hi = r.limit_array("q_min"), r.limit_array("q_max")
        outside = np.flatnonzero((values < lo - 1e-9) | (values > hi + 1e-9))
        label = "q = [" + ", ".join(f"{v:.3g}" for v in (np.rad2deg(values) if degrees else values)) + "]"
        if outside.size:
            label += f" (joint {', '.join(str(j + 1) for j in outside)} beyond its limits)"
        poses.append((label, values))
    save_png(postures_figure(r, poses, title or f"{r.name}", frames), out)
    console.print(f"wrote [bold]{out}[/] ({len(poses)} posture(s) of {r.name})")
