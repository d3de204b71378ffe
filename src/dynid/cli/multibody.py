"""dynid multibody graph | identify: the seed papers' absolute-coordinate formulation."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from dynid.cli.common import console, friendly_errors
from dynid.cli.option_checks import number_list
from dynid.errors import DataError

multibody_app = typer.Typer(help="Absolute-coordinate multibody model of the seed papers (Cheng 2021, 2022).",
                            no_args_is_help=True)

PARAMS = ("m(e1^(0))", "m(e2^(0))", "m(e3^(0))", "J11", "J22", "J33")


def _vec(v) -> str:
    import numpy as np

    v = np.asarray(v)
    return "0" if not np.any(v) else "[" + ", ".join(f"{x:.4g}" for x in v) + "]"


@multibody_app.command("graph")
@friendly_errors
def graph_command(robot: str = typer.Argument(..., help="builtin name, .urdf or .yaml file")) -> None:
    """Print the incidence matrix S, force-element path matrix S^e and the body-joint vector
    matrices C, C^e (body axes e^(i), m) of ROBOT (seed 000, eqs. 8-18)."""
    from dynid.multibody.bodies import body_model
    from dynid.multibody.graph import describe, graph
    from dynid.robot import load_robot

    r = load_robot(robot)
    model = body_model(r)
    info = describe(model, graph(model))
    n = model.n
    cols = [f"O{k + 1}" for k in range(n)]
    for key, title in (("S", "incidence matrix S (eq. 9)"), ("S_e", "force-element path matrix S^e (eq. 13)")):
        t = Table("", *cols, title=title)
        for i in range(n):
            name = info["bodies"][i]
            t.add_row(f"B{i + 1}" if name == f"B{i + 1}" else f"B{i + 1} {name}", *(str(x) for x in info[key][i]))
        console.print(t)
    t = Table("body", "F^(e hat)_i = -sum_k S^e_ik F^e_k (eq. 16)", "M_i about O_ci (eqs. 25-27)",
              title="resultant joint forces and moments on each body")
    for i in range(n):
        f_terms, m_terms = [], []
        for k in range(n):
            sign = info["S_e"][i][k]
            if sign:
                f_terms.append(f"{'+' if sign < 0 else '-'} F{k + 1}")
                m_terms.append(f"- C^e_{i + 1},{k + 1} x F{k + 1} {'+' if sign < 0 else '-'} M{k + 1}")
        t.add_row(f"B{i + 1}", " ".join(f_terms).lstrip("+ "), " ".join(m_terms))
    console.print(t)
    for key, title in (("C", "body-joint vector matrix C (eq. 11), in e^(i) [m]"),
                       ("C_e", "force-element vector matrix C^e (eq. 18), in e^(i) [m]")):
        t = Table("", *cols, title=title)
        for i in range(n):
            t.add_row(f"B{i + 1}", *(_vec(c) for c in info[key][i]))
        console.print(t)


def _parse_times(times: str | None) -> list[float] | None:
    if times is None or not times.strip():
        return None
    return number_list(times, "--times", what="times [s] like 0.3,0.6,0.9")


def _select(data, times):
    import numpy as np

    if times is None:
        return data
    spacing = float(np.min(np.diff(data.t))) if len(data.t) > 1 else 0.0
    idx = []
    for t in times:
        j = int(np.argmin(np.abs(data.t - t)))
        if abs(data.t[j] - t) > spacing / 2 + 1e-9:
            raise DataError(f"--times: no sample near t = {t} s (data covers {data.t[0]:g}..{data.t[-1]:g} s)")
        idx.append(j)
    return data.select(np.array(sorted(set(idx))))


def _write_json(path: Path, payload: dict) -> None:
    from dynid.data.io import atomic_write_text

    atomic_write_text(path, json.dumps(payload, indent=2))


def _label(res) -> str:
    return f"B{res.body}" if res.name == f"B{res.body}" else f"B{res.body} {res.name}"


def _rel(err, true):
    return "-" if true == 0 else f"{err / true:.2e}"


@multibody_app.command("identify")
@friendly_errors(outputs=("out",))
def identify_command(
    robot: str = typer.Option(..., "--robot", "-r", help="builtin name, .urdf or .yaml file"),
    body_data: Path = typer.Option(..., "--body-data", help="body data CSV (docs/formats.md section 5)"),
    out: Path = typer.Option(..., "--out", help="result JSON"),
    times: str = typer.Option(None, "--times", help="use only the samples at these times [s], e.g. 0.3,0.6,0.9,1.2,1.5 "
                                                     "(default: all samples)"),
    coordinates: str = typer.Option("quaternion", "--coordinates", help="angular coordinates: cardan | quaternion"),
    rounding_digits: int = typer.Option(None, "--rounding-digits",
                                        help="weight each equation by the rounding error of data exported with this "
                                             "many significant digits (ADAMS: 7); default: ordinary least squares "
                                             "(seed eq. 56)"),
    multipliers_time: float = typer.Option(1.5, "--multipliers-at", help="time [s] at which to solve eq. 111 for the "
                                                                         "Lagrange multipliers"),
) -> None:
    """Identify every body's mass (per world direction) and principal central moments by least
    squares (seed 000 eqs. 40-64, seed 001 eqs. 17-28), print them beside the robot model's
    values, and the Lagrange multipliers of eq. 111 read as joint forces and moments."""
    from dynid.multibody.bodydata import read_body_data
    from dynid.multibody.coordinates import angular_form
    from dynid.multibody.identification import identify, true_values
    from dynid.multibody.multipliers import multipliers_at
    from dynid.robot import load_robot

    r = load_robot(robot)
    form = angular_form(coordinates)
    wanted = _parse_times(times)  # options before the file: a bad option is named first
    data = read_body_data(body_data)
    selected = _select(data, wanted)
    try:
        results = identify(r, selected, form, rounding_digits=rounding_digits)
    except DataError as exc:  # name the file
        raise DataError(f"{body_data}: {exc}") from None
    truth = true_values(r)
    table = Table("body", "parameter", "identified", "true (model)", "absolute error", "relative error",
                  title=f"identified dynamic parameters ({coordinates}, {len(selected.t)} samples, "
                        f"{'ordinary' if rounding_digits is None else 'rounding-weighted'} least squares) "
                        "- seed 000 Tables 3-4 / seed 001 Tables 2-3")
    worst = 0.0
    for res, tv in zip(results, truth):
        values = list(res.mass) + list(res.moments)
        trues = [tv["mass"]] * 3 + tv["moments"]
        for name, v, t in zip(PARAMS, values, trues):
            if v is None:
                table.add_row(_label(res), name, "null", f"{t:.4f}", "-", "-")
                continue
            worst = max(worst, abs(v - t))
            table.add_row(_label(res), name, f"{v:.4f}", f"{t:.4f}", f"{v - t:+.2e}", _rel(v - t, t))
    console.print(table)
    seeds = " (seed 000 Table 4: 0.0424, seed 001 Table 3: 0.0264)" if r.name.startswith("kr500") else ""
    console.print(f"maximum absolute error against the model: {worst:.3g}{seeds}")
    for res in results:
        for note in res.notes:
            console.print(f"  {_label(res)}: {note}", highlight=False)
    payload = {"robot": r.name, "coordinates": coordinates, "rounding_digits": rounding_digits,
               "samples": int(len(selected.t)),
               "times": [float(x) for x in selected.t], "bodies": [res.as_json() for res in results]}
    if data.t[0] - 1e-9 <= multipliers_time <= data.t[-1] + 1e-9:
        mult = multipliers_at(r, data, form, multipliers_time)
        _print_multipliers(r, mult)
        payload["multipliers"] = {
            "t": mult.t, "lambda": mult.lam.tolist(), "tau": mult.tau.tolist(),
            "force_world": mult.force.tolist(), "moment_world": mult.moment.tolist(),
            "force_joint_frame": mult.force_local.tolist(), "moment_joint_frame": mult.moment_local.tolist()}
    _write_json(out, payload)
    console.print(f"wrote {out}")


def _print_multipliers(r, mult) -> None:
    import numpy as np

    t = Table("joint", "lambda_k1..k5", "force, frame 0 [N]", "moment about O_k, frame 0 [N m]",
              "force in e^(k) [N]", "moment in e^(k) [N m]", "drive tau", "|data - eq.111| / |data|",
              title=f"Lagrange multipliers of eq. 111 at t = {mult.t:g} s, read as the joint's force and moment "
                    "on its outside body")
    for k, joint in enumerate(r.joints):
        scale = max(np.linalg.norm(mult.measured_force[k]) + np.linalg.norm(mult.measured_moment[k]), 1e-300)
        dev = (np.linalg.norm(mult.force[k] - mult.measured_force[k])
               + np.linalg.norm(mult.moment[k] - mult.measured_moment[k])) / scale
        t.add_row(f"O{k + 1} {joint.name} ({joint.type})", _vec(mult.lam[k]), _vec(mult.force[k]),
                  _vec(mult.moment[k]), _vec(mult.force_local[k]), _vec(mult.moment_local[k]),
                  f"{mult.tau[k]:.6g}", f"{dev:.1e}")
    console.print(t)
    console.print("revolute joint: lambda_k1..3 is its constraint force on the outside body (N, frame 0), "
                  "lambda_k4,5 the constraint moments (N m) about the two axes perpendicular to the joint axis; "
                  "prismatic joint: lambda_k1,2 are forces (N) perpendicular to the slide, lambda_k3..5 moments "
                  "(N m). The drive adds tau along the axis. e^(k) are the body axes of the outside body.",
                  highlight=False)
