"""dynid robots, dynid robot show."""

from __future__ import annotations

import math

import typer
from rich.table import Table

from dynid.cli.common import console, friendly_errors

robot_app = typer.Typer(help="Inspect robot descriptions.", no_args_is_help=True)


@friendly_errors
def robots() -> None:
    """List the builtin robots with a one-line description."""
    from dynid.robot import load_robot
    from dynid.robot.builtin import builtin_summaries

    table = Table("name", "n", "description", title="builtin robots")
    for name, summary in builtin_summaries().items():
        table.add_row(name, str(load_robot(name).n), summary)
    console.print(table)


def _fmt(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.4g}"


def _vec(v) -> str:
    import numpy as np

    return " ".join(f"{x:.4g}" for x in np.where(np.abs(v) < 1e-12, 0.0, v))


@robot_app.command("show")
@friendly_errors
def show(robot: str = typer.Argument(..., help="builtin name, .urdf or .yaml file")) -> None:
    """Joint table, inertial parameters, limits and drives of ROBOT (numbered as data columns)."""
    import numpy as np

    from dynid.robot import load_robot
    from dynid.robot.inertia import to_mass_com_inertia

    r = load_robot(robot)
    console.print(f"[bold]{r.name}[/]  n = {r.n}  gravity = {np.round(r.gravity, 5).tolist()}  ({r.description})")
    joints = Table("#", "joint", "type", "parent", "axis", "xyz in parent [m]", "q range", "dq max",
                   "ddq max", "tau max", "gear", "Ia [kg m2]",
                   title="joints (depth-first order = data columns; SI units)")
    for i, j in enumerate(r.joints):
        lim = j.limits
        joints.add_row(str(i + 1), j.name, j.type[:3], "base" if j.parent < 0 else str(j.parent + 1),
                       _vec(j.axis), _vec(j.placement_translation),
                       f"[{_fmt(lim.q_min)}, {_fmt(lim.q_max)}]", _fmt(lim.dq_max), _fmt(lim.ddq_max),
                       _fmt(lim.tau_max), _fmt(j.drive.gear_ratio), _fmt(j.drive.joint_rotor_inertia))
    console.print(joints)
    links = Table("#", "link", "m [kg]", "com [m]", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz",
                  title="inertials (inertia about the COM, link axes) [kg m2]")
    for i, link in enumerate(r.links):
        m, com, ic = to_mass_com_inertia(link.inertial)
        links.add_row(str(i + 1), link.name, f"{m:.6g}", _vec(com),
                      *(f"{v:.5g}" for v in (ic[0, 0], ic[0, 1], ic[0, 2], ic[1, 1], ic[1, 2], ic[2, 2])))
    console.print(links)
