"""One function per report section. Each takes the loaded ``Context`` and returns a
``Section``; a section whose input is missing says so in a visible note (never invented)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.report import figures
from dynid.report.html import esc, figure, fmt, note, paragraph, table


PLOT_SECONDS = 60.0  # time span of the torque figure [s]


@dataclass
class Section:
    id: str
    title: str
    body: str


@dataclass
class Context:
    """Everything loaded once: robot (or None and why), results, paths and missing reasons."""

    inputs: object
    robot: object = None
    robot_problem: str = ""
    result: dict | None = None
    pc_result: dict | None = None
    drift_result: dict | None = None
    trajectory: dict | None = None
    friction: dict | None = None
    multibody: dict | None = None
    summary: dict | None = None
    predictions: dict = field(default_factory=dict)  # log path -> {label: predict_file output} (load_context)


def missing(section_id: str, title: str, *reasons: str) -> Section:
    body = "".join(f'<p class="missing">Section omitted: {esc(r)}</p>' for r in reasons if r)
    return Section(section_id, title, body)


def _need(ctx: Context, *roles: str) -> list[str]:
    out = []
    for role in roles:
        if role == "robot":
            if ctx.robot is None:
                out.append(ctx.robot_problem or "no robot (give --robot)")
        elif getattr(ctx.inputs, role) is None:
            out.append(ctx.inputs.missing.get(role, f"{role} not given"))
    return out


def overview(ctx: Context) -> Section:
    rows = []
    for role in ("result", "pc_result", "drift_result", "trajectory", "data", "validation", "friction", "multibody"):
        path = getattr(ctx.inputs, role)
        rows.append([role, path.name if path else "missing: " + ctx.inputs.missing.get(role, "")])
    body = paragraph(trust_sentence(ctx), "trust")
    if ctx.robot is not None:
        body += paragraph(f"Robot {ctx.robot.name} (n = {ctx.robot.n}): {ctx.robot.description}")
        if ctx.robot_problem:  # e.g. a result of another robot, reported with --force
            body += paragraph(f"Warning: {ctx.robot_problem}")
    if ctx.summary:
        body += table(["key figure", "value"], [[k, fmt(v)] for k, v in ctx.summary.get("figures", {}).items()],
                      cls="kv")
    body += table(["input", "file"], rows, left=2)
    body += paragraph("Files are named as given or as found in the report's input directory.", "small")
    return Section("overview", "Overview", body)


def models(ctx: Context) -> list[tuple[str, dict]]:
    """(label, result) of each identified model: the main result, then the PC one if different,
    then the one with a drifting friction (labelled '<estimator> + drift')."""
    out = [] if ctx.result is None else [(ctx.result.get("estimator", "model"), ctx.result)]
    if ctx.pc_result is not None and ctx.pc_result is not ctx.result:
        out.append((ctx.pc_result.get("estimator", "pc"), ctx.pc_result))
    if ctx.drift_result is not None:
        out.append((ctx.drift_result.get("estimator", "model") + " + drift", ctx.drift_result))
    return out


def trust_sentence(ctx: Context) -> str:
    """The report's first sentence: what the user can trust. A demo's summary says it (its
    "trust"); else the result's own fit: how closely it reproduces its training log."""
    if ctx.summary and ctx.summary.get("trust"):
        return ctx.summary["trust"]
    if ctx.result is None:
        return "Nothing to trust yet: no identification result was given."
    fit = ctx.result.get("fit", {})
    rel = [p["relative_std"] for p in ctx.result.get("base_parameters", []) if p.get("relative_std") is not None]
    error = fit.get("relative_error")
    return (f"What you can trust: the {ctx.result.get('estimator', '')} model reproduces its training log to "
            f"{fmt(100 * error if error is not None else None, '.3g')} % relative error, and {sum(r < 5 for r in rel)} "
            f"of its {len(ctx.result.get('base_parameters', []))} base parameters are determined to better than 5 % "
            "(their %sigma); a separate log (validation) says how it predicts other motion.")


def predictions(ctx: Context, path) -> dict:
    """label -> ``identify.prediction.predict_file`` output on ``path``, as ``load_context``
    computed them once (or the caller gave them): the sections render, they do not predict."""
    return ctx.predictions[path]


def torques(ctx: Context) -> Section:
    title = "Measured vs predicted torque"
    log = ctx.inputs.validation or ctx.inputs.data
    problems = _need(ctx, "robot", "result") + ([] if log else [ctx.inputs.missing.get("validation", "no data log")])
    if problems:
        return missing("torques", title, *problems)
    from dynid.identify.validation import validation_report

    preds = predictions(ctx, log)
    first = next(iter(preds.values()))
    if first["tau"] is None:
        return missing("torques", title, f"{log} holds no torques to compare with")
    k = first["interior"]
    kind = "cross-validation on a separate trajectory" if log == ctx.inputs.validation else "self-validation"
    t = first["t"]
    shown = k & (t <= t[k][0] + PLOT_SECONDS)  # a long log is plotted over its first PLOT_SECONDS
    span = "" if shown.sum() == k.sum() else f", first {PLOT_SECONDS:g} s of {t[-1] - t[0]:.0f} s"
    img = figures.torque_figure(t[shown], first["tau"][shown], {lab: p["tau_hat"][shown] for lab, p in preds.items()},
                                f"{log.name}: {kind}{span}")
    rows = []
    reports = {lab: validation_report(p["tau"][k], p["tau_hat"][k], p["dq"][k], 0.05) for lab, p in preds.items()}
    for j in range(ctx.robot.n):
        row = [f"joint {j + 1}"]
        for rep in reports.values():
            row += [fmt(rep["rmsd"][j]), fmt(rep["relative_rmsd"][j] * 100, ".2f")]
        rows.append(row)
    header = ["joint"] + [h for lab in reports for h in (f"RMSD {lab} [N m]", f"relative RMSD {lab} [%]")]
    total = "; ".join(f"{lab}: ||tau - tau_hat|| / ||tau|| = {rep['relative_error'] * 100:.2f} %"
                      for lab, rep in reports.items())
    return Section("torques", title, paragraph(f"{log.name} ({kind}, thesis eq. 5.1). {total}") + figure(img, title)
                   + table(header, rows))


def parameters(ctx: Context) -> Section:
    title = "Identified base parameters"
    if ctx.result is None:
        return missing("parameters", title, *_need(ctx, "result"))
    pc = {p["name"]: p for p in (ctx.pc_result or {}).get("base_parameters", [])}
    header = ["base parameter", "combination", f"{ctx.result.get('estimator')} value", "std", "%sigma"]
    if pc and ctx.pc_result is not ctx.result:
        header += ["pc value", "pc std"]
    rows = []
    for p in ctx.result["base_parameters"]:
        row = [p["name"], p.get("combination", ""), fmt(p["value"], ".6g"), fmt(p["std"]),
               fmt(p.get("relative_std"), ".1f")]
        if len(header) > 5:
            q = pc.get(p["name"], {})
            row += [fmt(q.get("value"), ".6g"), fmt(q.get("std"))]
        rows.append(row)
    fit = ctx.result.get("fit", {})
    text = (f"{len(rows)} base parameters, {fit.get('samples', '?')} samples, condition number of the "
            f"normalized base regressor {fmt(fit.get('condition_number'))}. Standard deviations: Khalil-Gautier "
            "(residual variance times the inverse normal matrix); %sigma = 100 std / |value|.")
    body = paragraph(text) + '<div class="scroll">' + table(header, rows, left=2) + "</div>"
    for w in ctx.result.get("warnings", []):
        body += note(w)
    return Section("parameters", title, body)


def identifiability(ctx: Context) -> Section:
    title = "Identifiability of the standard parameters"
    problems = _need(ctx, "robot", "result")
    if problems:
        return missing("identifiability", title, *problems)
    from dynid.identify.base import identifiability_table
    from dynid.identify.model import ModelOptions

    options = ModelOptions.from_dict(ctx.result["model"])
    base = ctx.result["base"]
    k_mat = np.asarray(base["K"], dtype=float)
    enters = identifiability_table(ctx.robot, options)
    independent = set(base["independent"])
    rows, counts = [], {"alone": 0, "in a combination": 0, "not identifiable": 0}
    for k, name in enumerate(base["standard_names"]):
        col = np.abs(k_mat[:, k]) > 1e-12
        if not col.any():
            status = "not identifiable"
        elif k in independent and col.sum() == 1 and np.count_nonzero(np.abs(k_mat[np.argmax(col)]) > 1e-12) == 1:
            status = "alone"
        else:
            status = "in a combination"
        counts[status] += 1
        rows.append([name, status, *("x" if enters[j, k] else "." for j in range(ctx.robot.n))])
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    body = (paragraph(f"{len(rows)} standard parameters: {summary}. Columns j1..jn: the parameter enters the "
                      "torque of that joint (x).")
            + '<div class="scroll">' + table(["parameter", "identifiable", *[f"j{j + 1}" for j in range(ctx.robot.n)]],
                                             rows, left=2) + "</div>")
    return Section("identifiability", title, body)


def excitation(ctx: Context) -> Section:
    title = "Excitation trajectory"
    problems = _need(ctx, "robot", "trajectory")
    if problems:
        return missing("excitation", title, *problems)
    from dynid.excite.criteria import ExcitationModel
    from dynid.excite.evaluate import evaluate_trajectory
    from dynid.excite.fileio import load_trajectory

    traj = load_trajectory(str(ctx.inputs.trajectory), ctx.robot.n)
    r = ctx.robot
    if traj.metadata.get("limits"):  # the limits it was designed within (options, defaults the description lacks)
        from dynid.excite.limit_sources import limits_from_dict, robot_with_limits
        r = robot_with_limits(r, limits_from_dict(r, traj.metadata["limits"], ctx.inputs.trajectory.name))
    report = evaluate_trajectory(ExcitationModel.of(r), traj)
    t = traj.sample_times(100.0)
    q, dq, _ = traj.evaluate(t)
    img = figures.trajectory_figure(t, q, dq, (r.limit_array("q_min"), r.limit_array("q_max")),
                                    r.limit_array("dq_max"), f"{ctx.inputs.trajectory.name}: one period")
    rows = [["condition number (normalized base regressor, 100 Hz)", fmt(report["cond"])],
            ["period [s]", fmt(report["period"])], ["limits respected (guaranteed bound)", str(report["limits_ok"])]]
    rows += [[f"largest {k} / limit", fmt(v, ".3f")] for k, v in report["max_ratio"].items()]
    return Section("excitation", title, figure(img, title) + table(["figure", "value"], rows, cls="kv"))


def evolution(ctx: Context) -> Section:
    title = "Parameter evolution across cycles"
    per = (ctx.result or {}).get("per_cycle")
    if per is None:
        reason = _need(ctx, "result") or ["the result holds no per-cycle identification (identify --per cycle)"]
        return missing("evolution", title, *reason)
    values, mean = np.asarray(per["values"], dtype=float), np.asarray(per["mean"], dtype=float)
    spread = [np.nan if v is None else v for v in per["relative_spread"]]
    names = [p["name"] for p in ctx.result["base_parameters"]]
    rel = {p["name"]: p.get("relative_std") for p in ctx.result["base_parameters"]}
    well = [k for k, nm in enumerate(names) if rel[nm] is not None and rel[nm] < 5 and abs(mean[k]) > 0][:12]
    body = paragraph(f"{len(per['labels'])} cycles identified separately ({len(per['failed'])} failed). The figure "
                     "shows the best-determined parameters (%sigma < 5 on the whole log).")
    if well and len(per["labels"]) > 1:
        img = figures.evolution_figure(per["labels"], values[:, well], mean[well], [names[k] for k in well], title)
        body += figure(img, title)
    rows = [[nm, fmt(mean[k], ".6g"), fmt(per["std"][k]), fmt(spread[k], ".2f")] for k, nm in enumerate(names)]
    body += '<div class="scroll">' + table(["base parameter", "mean", "std across cycles", "spread [%]"], rows) + "</div>"
    return Section("evolution", title, body)


def multibody(ctx: Context) -> Section:
    title = "KR500 per-body identification (absolute coordinates)"
    if ctx.multibody is None:
        return missing("multibody", title, *_need(ctx, "multibody"))
    truth = {}
    try:
        from dynid.multibody.identification import true_values
        from dynid.robot import load_robot

        truth = {tv["body"]: tv for tv in true_values(load_robot(ctx.multibody.get("robot", "kr500")))}
    except Exception as exc:  # noqa: BLE001 - the table still shows the identified values
        truth = {}
        truth_note = note(f"model values unavailable: {exc}")
    else:
        truth_note = ""
    rows = []
    for b in ctx.multibody["bodies"]:
        tv = truth.get(b["body"])
        for key, ref in (("mass_x", "mass"), ("mass_y", "mass"), ("mass_z", "mass"),
                         ("J11", 0), ("J22", 1), ("J33", 2)):
            true = None if tv is None else (tv["mass"] if ref == "mass" else tv["moments"][ref])
            v = b.get(key)
            err = None if v is None or true in (None, 0) else (v - true) / true
            label = b.get("name") if b.get("name") not in (None, "", f"B{b['body']}") else ""
            rows.append([f"B{b['body']} {label}".strip(), key, fmt(v, ".6g"), fmt(true, ".6g"),
                         fmt(err, ".2e")])
    notes = "".join(note(f"B{b['body']}: {n}") for b in ctx.multibody["bodies"] for n in b.get("notes", []))
    text = (f"{ctx.multibody.get('robot', '?')}, {ctx.multibody.get('coordinates', '?')} coordinates, "
            f"{ctx.multibody.get('samples', '?')} samples (seed papers' experiment; null = not determined by the data).")
    return Section("multibody", title, paragraph(text) + table(["body", "parameter", "identified", "model",
                                                                 "relative error"], rows, left=2) + truth_note + notes)
