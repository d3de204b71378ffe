"""Command-line geometry options of ``dynid excite``: clearance, obstacles, workspace, capsules.

``--box [NAME=]cx,cy,cz,sx,sy,sz`` (centre and full edge lengths [m], base frame; repeatable),
``--workspace x0,y0,z0:x1,y1,z1`` (the flange's box), ``--link-radius R`` or ``J:R``
(J = link number, 0 = base, or link name), ``--start-posture q1,...,qn`` [rad | m].
"""

from __future__ import annotations

from pathlib import Path

import typer

from dynid.cli.option_checks import number_list
from dynid.errors import DataError

CLEARANCE = typer.Option(None, "--clearance", help="keep capsules of the links this far [m] from each other, "
                         "the floor and obstacles along the whole trajectory (guaranteed between samples)")
OBSTACLES = typer.Option(None, "--obstacles", help="obstacles YAML: floor height and boxes (docs/excitation.md)")
BOX = typer.Option(None, "--box", help="obstacle box [NAME=]cx,cy,cz,sx,sy,sz (centre, edge lengths [m]); repeatable")
FLOOR = typer.Option(None, "--floor", help="height of the floor plane [m] (default 0, or the obstacles file's)")
NO_FLOOR = typer.Option(False, "--no-floor", help="no floor plane")
CAPSULES = typer.Option("auto", "--capsules", help="link capsules from: auto (URDF collision geometry where "
                        "present, else the kinematic chain) | urdf | chain")
LINK_RADIUS = typer.Option(None, "--link-radius", help="capsule radius [m] of links from the kinematic chain: R or "
                           "J:R (J = link number, 0 = base, or name); repeatable")
SELF_EXEMPT = typer.Option(2, "--self-exempt", help="links at most this many joints apart are not checked against "
                           "each other (1: adjacent only)")
WORKSPACE = typer.Option(None, "--workspace", help="box the flange stays in: x0,y0,z0:x1,y1,z1 [m], base frame")
FLANGE = typer.Option(None, "--flange", help="flange for --workspace: URDF link name or link number (default: last)")
START = typer.Option(None, "--start-posture", help="posture the clearance holds at, q1,...,qn (default: middle "
                     "of the ranges)")
# name -> (type, option), for ``excite_options.with_options``
GEOMETRY_PARAMS = {"clearance": (float, CLEARANCE), "obstacles": (Path, OBSTACLES), "box": (list[str], BOX),
                   "floor": (float, FLOOR), "no_floor": (bool, NO_FLOOR), "capsules": (str, CAPSULES),
                   "link_radius": (list[str], LINK_RADIUS), "self_exempt": (int, SELF_EXEMPT),
                   "workspace": (str, WORKSPACE), "flange": (str, FLANGE), "start_posture": (str, START)}


def _numbers(text: str, option: str, count: int | None = None) -> list[float]:
    return number_list(text, option, () if count is None else (count,))


def parse_box(text: str, index: int):
    from dynid.excite.geometry.scene import Box

    name, sep, rest = text.partition("=")
    if not sep:
        name, rest = f"box{index + 1}", text
    values = _numbers(rest, "--box", 6)
    return Box(name.strip(), values[:3], values[3:])


def parse_link_radius(texts, robot):
    """None, a scalar, or {link index (-1 base): radius} from repeated --link-radius texts."""
    if not texts:
        return None
    out: dict = {}
    names = [link.name for link in robot.links]
    for text in texts:
        head, sep, rest = text.partition(":")
        if not sep:
            value = _numbers(text, "--link-radius", 1)[0]
            out.update({k: value for k in range(-1, robot.n_bodies)})
            continue
        head = head.strip()
        if head in names:
            link = names.index(head)
        else:
            try:
                link = int(head) - 1
            except ValueError:
                raise DataError(f"--link-radius: no link '{head}' (0 = base, 1..{robot.n_bodies}, or {', '.join(names)})") \
                    from None
            if not -1 <= link < robot.n_bodies:
                raise DataError(f"--link-radius: link number {head} out of range 0..{robot.n_bodies}")
        out[link] = _numbers(rest, "--link-radius", 1)[0]
    return out


def geometry_options(robot, clearance=None, obstacles=None, box=None, floor=None, no_floor=False,
                     capsules="auto", link_radius=None, self_exempt=2, workspace=None, flange=None,
                     start_posture=None, range_fraction=0.99):
    """GeometryOptions from the raw command-line values."""
    from dynid.excite.geometry.setup import GeometryOptions

    ws = None
    if workspace:
        low, sep, high = workspace.partition(":")
        if not sep:
            raise DataError(f"--workspace: '{workspace}': expected x0,y0,z0:x1,y1,z1")
        ws = (_numbers(low, "--workspace", 3), _numbers(high, "--workspace", 3))
    if no_floor and floor is not None:
        raise DataError("--floor and --no-floor contradict each other")
    return GeometryOptions(
        clearance=clearance, obstacles=obstacles, boxes=tuple(parse_box(t, i) for i, t in enumerate(box or [])),
        floor=None if no_floor else ("default" if floor is None else float(floor)), capsules=capsules,
        link_radius=parse_link_radius(link_radius, robot), self_exempt=self_exempt, workspace=ws, flange=flange,
        start=None if not start_posture else tuple(_numbers(start_posture, "--start-posture", robot.n)),
        range_fraction=range_fraction)


def print_geometry(console, geometry) -> None:
    """One summary line of the collision model, then its notes."""
    c = geometry.constraints
    scene = c.scene
    parts = [f"{len(c.capsules)} capsules", f"{len(c.self_pairs)} link pairs",
             "floor at z = %g m" % scene.floor if scene.floor is not None else "no floor"]
    if scene.boxes:
        names = [b.name for b in scene.boxes]
        parts.append(f"{len(names)} boxes " + ", ".join(names[:10]) + (", ..." if len(names) > 10 else ""))
    if c.workspace is not None:
        parts.append(f"flange '{c.workspace.name}' in {c.workspace.low.tolist()}..{c.workspace.high.tolist()}")
    console.print(f"geometry: clearance {c.clearance:g} m; " + "; ".join(parts), highlight=False)
    for note in geometry.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)


def print_geometry_report(console, report: dict) -> None:
    if "clearance" in report and report["clearance"]["pairs"] == 0:
        console.print(f"clearance: {report['clearance']['bound']}", highlight=False)
    elif "clearance" in report:
        r = report["clearance"]
        verdict = "[green]keeps[/]" if r["ok"] else "[red]does NOT keep[/]"
        console.print(f"clearance: min distance {r['min_distance']:.4f} m ({r['where']}, t = {r['time']:.3f} s; "
                      f"{r['samples']} instants per period), guaranteed >= {r['guaranteed_min_distance']:.4f} m "
                      f"between instants: {verdict} {r['required']:g} m", highlight=False)
    if "workspace" in report:
        r = report["workspace"]
        verdict = "[green]inside[/]" if r["ok"] else "[red]OUTSIDE[/]"
        console.print(f"workspace: smallest margin {r['min_margin']:.4f} m ({r['where']}, t = {r['time']:.3f} s), "
                      f"guaranteed >= {r['guaranteed_min_margin']:.4f} m: {verdict}", highlight=False)
