"""dynid robots, dynid robot show."""

from __future__ import annotations

import math

import typer
from rich.table import Column, Table

from dynid.cli.common import JOINTS, LOCK, console, friendly_errors, load_selected

robot_app = typer.Typer(help="Inspect robot descriptions.", no_args_is_help=True)

@friendly_errors
def robots() -> None:
    """List the builtin robots and the example-robot-data robots (example:NAME)."""
    from dynid.robot import load_robot
    from dynid.robot.builtin import builtin_summaries
    from dynid.robot.example import catalogue

    table = Table("name", "n", "description", title="builtin robots")
    for name, summary in builtin_summaries().items():
        table.add_row(name, str(load_robot(name).n), summary)
    console.print(table)
    examples = Table("name", "description", title="example-robot-data robots (pip install example-robot-data)")
    for name, summary in catalogue().items():
        examples.add_row(f"example:{name}", summary)
    console.print(examples)


def _fmt(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.4g}"


def _vec(v) -> str:
    import numpy as np

    return " ".join(f"{x:.4g}" for x in np.where(np.abs(v) < 1e-12, 0.0, v))


@robot_app.command("show")
@friendly_errors
def show(robot: str = typer.Argument(..., help="builtin name, example:NAME, .urdf or .yaml file"),
         joints: str = JOINTS, lock: str = LOCK) -> None:
    """Joint table, inertial parameters, limits and drives of ROBOT (numbered as data columns)."""
    import numpy as np

    from dynid.robot.inertia import to_mass_com_inertia

    r = load_selected(robot, joints, lock)
    console.print(f"[bold]{r.name}[/]  n = {r.n}  gravity = {np.round(r.gravity, 5).tolist()}  ({r.description})")
    column = {int(i): c for c, i in enumerate(r.actuated)}
    names = [j.name for j in r.joints]
    table = Table("#", _names_column("joint", names), "type", _names_column("parent", ["base", *names]), "axis",
                  "xyz in parent [m]", "q range", "dq max", "ddq max", "tau max", "gear", "Ia [kg m2]", "zero",
                  title="joints (depth-first order = data columns; SI units; zero: the joint position where "
                        "its motor encoder reads 0, added by --motor-side)")
    for i, j in enumerate(r.joints):
        lim = j.limits
        parent = "base" if j.parent < 0 else r.joints[j.parent].name
        if j.mimic is not None:  # a follower: no data column, no drive
            table.add_row("-", j.name, j.type[:3], parent, _vec(j.axis), _vec(j.placement_translation),
                          f"mimic {j.mimic.multiplier:g} x {j.mimic.leader} + {j.mimic.offset:g}", "", "", "", "", "",
                          "")
            continue
        table.add_row(str(column[i] + 1), j.name, j.type[:3], parent, _vec(j.axis), _vec(j.placement_translation),
                      f"[{_fmt(lim.q_min)}, {_fmt(lim.q_max)}]", _fmt(lim.dq_max), _fmt(lim.ddq_max),
                      _fmt(lim.tau_max), _fmt(j.drive.gear_ratio), _fmt(j.drive.joint_rotor_inertia),
                      _fmt(j.drive.zero_offset))
    console.print(table)
    if r.has_mimic:
        console.print(f"{r.n_bodies} moving bodies for {r.n} actuated joints (mimic joints): the standard "
                      f"parameters are 10 per body, theta ({10 * r.n_bodies},), Y (N, {r.n}, {10 * r.n_bodies}); "
                      "body k is row k of the inertials table (docs/formats.md)")
    if r.is_coupled:
        console.print("coupled transmission q_m = T q (motor k drives joint k; rows = motors):")
        console.print(_matrix(r.transmission_matrix, r.joint_names))
    links = Table("#", _names_column("link", [link.name for link in r.links]), "m [kg]", "com [m]",
                  "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz",
                  title="inertials (inertia about the COM, link axes) [kg m2]")
    for i, link in enumerate(r.links):
        m, com, ic = to_mass_com_inertia(link.inertial)
        links.add_row(str(i + 1), link.name, f"{m:.6g}", _vec(com),
                      *(f"{v:.5g}" for v in (ic[0, 0], ic[0, 1], ic[0, 2], ic[1, 1], ic[1, 2], ic[2, 2])))
    console.print(links)


def _names_column(header: str, names: list[str]) -> Column:
    """A column that shows every name whole (a narrow or piped console squeezes the numbers instead)."""
    return Column(header, no_wrap=True, min_width=max(len(header), *map(len, names)))


def _matrix(t, names: list[str]) -> Table:
    table = Table("motor", *names)
    for k, row in enumerate(t):
        table.add_row(str(k + 1), *(_fmt(x) if x != 0 else "." for x in row))
    return table
