"""The friction section: friction-velocity curves and the drift fit (thesis 5.2, eq. 5.4).

Friction-velocity points come from the friction analysis JSON (``dynid friction``) when given:
its plateau means per joint, speed level and cycle. Without it, they are read from the
training log's friction stage: measured torque minus the identified model's rigid-body and
rotor-inertia torque, i.e. tau - (tau_hat - Fc sign(dq) - Fv dq). The drift fit needs the
friction analysis; without it the section says so.
"""

from __future__ import annotations

import numpy as np

from dynid.report import figures
from dynid.report.html import figure, fmt, note, paragraph, table
from dynid.report.sections import Context, Section, missing, models, predictions

TITLE = "Friction: velocity curves and drift"


def _model_lines(ctx: Context, j: int, vmax: float) -> list:
    """Identified Coulomb-viscous friction of joint j (0-based) from the base parameters."""
    lines = []
    for label, result in models(ctx):
        values = {p["name"]: p["value"] for p in result["base_parameters"]}
        fc, fv = values.get(f"Fc{j + 1}"), values.get(f"Fv{j + 1}")
        if fc is not None and fv is not None:
            v = np.linspace(-vmax, vmax, 201)
            lines.append((f"identified {label}: Fc sign(dq) + Fv dq", v, fc * np.sign(v) + fv * v))
    return lines


def _curves_from_analysis(ctx: Context) -> list:
    f = ctx.friction["friction"]
    joint, cycle = np.asarray(f["joint"]), np.asarray(f["cycle"])
    speed, fr = np.asarray(f["speed"], dtype=float), np.asarray(f["friction"], dtype=float)
    curves = []
    cycles = np.unique(cycle)
    for j in np.unique(joint):
        groups = []
        for c in (cycles[0], cycles[-1]) if cycles.size > 1 else cycles:
            pick = (joint == j) & (cycle == c)
            label = f"cycle {c}" + (" (cold)" if c == cycles[0] and cycles.size > 1 else
                                    " (warm)" if cycles.size > 1 else "")
            v = np.concatenate([speed[pick], -speed[pick]])
            groups.append((label, v, np.concatenate([fr[pick], -fr[pick]])))
        vmax = float(np.max(np.abs(speed[joint == j]))) if np.any(joint == j) else 1.0
        curves.append({"joint": int(j), "groups": groups, "lines": _model_lines(ctx, int(j) - 1, vmax)})
    return curves


def _curves_from_log(ctx: Context) -> list:
    label, res = next(iter(predictions(ctx, ctx.inputs.data).items()))
    if res["tau"] is None or res["stage"] is None:
        return []
    values = {p["name"]: p["value"] for p in ctx.result["base_parameters"]}
    stage = np.asarray(res["stage"]) == "friction"
    curves = []
    for j in range(ctx.robot.n):
        fc, fv = values.get(f"Fc{j + 1}"), values.get(f"Fv{j + 1}")
        if fc is None or fv is None:
            continue
        dq = res["dq"][:, j]
        pick = stage & res["interior"] & (np.abs(dq) > 1e-3)
        friction_hat = fc * np.sign(dq) + fv * dq
        measured = res["tau"][:, j] - (res["tau_hat"][:, j] - friction_hat)
        idx = np.flatnonzero(pick)[:: max(1, int(pick.sum()) // 1500)]
        vmax = float(np.max(np.abs(dq[pick]))) if pick.any() else 1.0
        curves.append({"joint": j + 1, "groups": [("friction stage samples", dq[idx], measured[idx])],
                       "lines": _model_lines(ctx, j, vmax)})
    return curves


def _drift(ctx: Context) -> str:
    entries = ctx.friction.get("drift", [])
    if not entries:
        return note("the friction analysis holds no drift fit (fewer than the cycles needed)")
    f = ctx.friction["friction"]
    joint, level = np.asarray(f["joint"]), np.asarray(f["level"])
    time, fr = np.asarray(f["time"], dtype=float), np.asarray(f["friction"], dtype=float)
    rows, panels = [], []
    fastest = {}
    for e in entries:
        fastest[e["joint"]] = e if e["level"] >= fastest.get(e["joint"], {"level": -1})["level"] else fastest[e["joint"]]
        p = e["parameters"]
        rows.append([f"joint {e['joint']}", e["level"], fmt(e["speed"], ".3g"), fmt(p.get("a")), fmt(p.get("b")),
                     fmt(p.get("t1")), fmt(p.get("c")), fmt(p.get("t2")), fmt(e.get("rmse"))])
    for j, e in sorted(fastest.items()):
        pick = (joint == j) & (level == e["level"])
        p = e["parameters"]
        tf = ff = None
        if all(p.get(k) is not None for k in ("a", "b", "t1", "c", "t2")) and pick.any():
            tf = np.linspace(0.0, float(time[pick].max()), 200)
            ff = p["a"] + p["b"] * np.exp(-tf / p["t1"]) + p["c"] * np.exp(-tf / p["t2"])
        panels.append((f"joint {j}, level {e['level']} ({e['speed']:.3g} rad/s)", time[pick], fr[pick], tf, ff))
    img = figures.drift_figure(panels, "friction at constant speed over the operating time, eq. 5.4 fit")
    return (figure(img, "drift fit") + table(["joint", "level", "speed [rad/s]", "a [N m]", "b [N m]", "t1 [s]",
                                              "c [N m]", "t2 [s]", "rmse [N m]"], rows, left=1))


def friction(ctx: Context) -> Section:
    if ctx.robot is None or ctx.result is None:
        return missing("friction", TITLE, ctx.robot_problem or "", ctx.inputs.missing.get("result", ""))
    body = ""
    if ctx.friction is not None and ctx.friction.get("friction"):
        curves = _curves_from_analysis(ctx)
        source = f"plateau means of {ctx.inputs.friction.name} (cold = first cycle, warm = last)"
    elif ctx.inputs.data is not None:
        curves = _curves_from_log(ctx)
        source = f"friction-stage samples of {ctx.inputs.data.name}: tau minus the identified rigid-body torque"
    else:
        curves, source = [], ""
    if curves:
        body += paragraph(f"Friction against velocity per joint: {source}.")
        body += figure(figures.friction_velocity_figure(curves, "friction - velocity"), "friction-velocity curves")
    else:
        body += '<p class="missing">Friction-velocity curves omitted: no friction analysis and no training log ' \
                'with a friction stage.</p>'
    if ctx.friction is None:
        body += ('<p class="missing">Drift fit omitted: ' + (ctx.inputs.missing.get("friction") or "no friction "
                 "analysis") + " (run the friction drift analysis to add it).</p>")
    else:
        body += _drift(ctx)
    return Section("friction", TITLE, body)
