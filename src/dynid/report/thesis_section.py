"""Report sections of the thesis' chapter 5 and the postures (docs/thesis-chapter5.md):

- ``verification``: relative RMSD per cycle (Figs 5.4-5.7) with the statistics of Tables F.x,
  the statistics of the per-cycle parameters (Table H), the groups of cycles (Table 5.5,
  Figs 5.13-5.14) and Table 5.6 fitted to every sample;
- ``postures``: the robot at its friction-stage poses (thesis Fig. 4.6) and the seeds' KR500
  at 0, 1.5 and 2 s of their experiment (Figs 9-11).

Inputs (``report.inputs``): cycle_validation.json (``dynid validate --per cycle --json``),
groups.json (``dynid cycles groups --out``), friction_drift.json (``dynid friction drift
--json``), protocol.json (``dynid excite protocol``); a missing one leaves a note.
"""

from __future__ import annotations

import numpy as np

from dynid.report.figures import data_uri
from dynid.report.html import figure, fmt, note, paragraph, table
from dynid.report.inputs import load_json
from dynid.report.sections import Context, Section, missing

STAT_HEAD = ["Mean", "MIN", "MAX", "D/MM", "D/SE", "Sdv"]
STAT_KEYS = ["mean", "min", "max", "d_mm", "d_se", "sdv"]


def _stats_rows(stats: dict, names: list[str]) -> tuple[list[str], list[list]]:
    later = stats.get("without_first")
    head = ["", *STAT_HEAD] + ([f"{h} w/o {stats['skip_first']}" for h in STAT_HEAD] if later else [])
    rows = []
    for k, name in enumerate(names):
        row = [name] + [fmt(stats["all"][s][k]) for s in STAT_KEYS]
        if later:
            row += [fmt(later[s][k]) for s in STAT_KEYS]
        rows.append(row)
    return head, rows


def _rmsd_part(ctx: Context) -> str:
    from dynid.report.cycle_figures import rmsd_cycles_figure

    reports = load_json(ctx.inputs.cycle_validation, "per-cycle validation")
    if not reports:
        return note("No per-cycle verification: " + ctx.inputs.missing.get("cycle_validation", "not given"))
    body, n = "", None
    for path, rep in reports.items():
        series = []
        for kind, block in rep["kinds"].items():
            values = np.array(block["moving_relative_rmsd"], dtype=float)
            n = values.shape[1]
            series.append((kind, np.array([float(v) for v in rep["labels"]]), values))
        img = data_uri(rmsd_cycles_figure(series, n, f"relative RMSD per cycle, |dq| >= {rep['min_velocity']:g} "
                                                     "(thesis Figs 5.4-5.7)"))
        body += paragraph(f"{path}: own = each cycle's own OLS parameters (self-verification), whole = one model "
                          "for every cycle, paired = the reference's parameters of the same cycle.")
        body += figure(img, "relative RMSD per cycle")
        for kind, block in rep["kinds"].items():
            if "statistics" in block:
                head, rows = _stats_rows(block["statistics"], [f"joint {j + 1}" for j in range(n)])
                body += paragraph(f"Statistics of the relative RMSD over the cycles, {kind} (thesis Table F.2 columns, "
                                  "Table 5.3 = Mean w/o first cycles):", "small")
                body += table(head, rows)
    return body


def _parameters_part(ctx: Context) -> str:
    per = (ctx.result or {}).get("per_cycle") or {}
    stats = per.get("statistics")
    if not stats:
        return note("No statistics of per-cycle parameters (identify --per cycle)")
    names = [p["name"] for p in ctx.result["base_parameters"]]
    head, rows = _stats_rows(stats, names)
    return (paragraph("Statistics of the per-cycle parameters (thesis Table H; Table 5.4 compares the Sdv columns): "
                      "D/MM = (MAX - MIN)/|MAX|, D/SE = |end - start|/|start|.")
            + '<div class="scroll">' + table(head, rows) + "</div>")


def _groups_part(ctx: Context) -> str:
    from dynid.report.cycle_figures import units_figure

    study = load_json(ctx.inputs.groups, "groups of cycles")
    if not study:
        return note("No groups of cycles: " + ctx.inputs.missing.get("groups", "not given"))
    names, groups = study["names"], study["groups"]
    values = np.array(study["per_cycle"]["values"], dtype=float)
    from dynid.identify.group_study import figure_parameters

    pick = figure_parameters(study)
    cycles = np.array([float(v) for v in study["per_cycle"]["labels"]])
    units = {g: np.array(v["values"], dtype=float)[pick] for g, v in groups.items()}
    img = data_uri(units_figure(cycles, values[:, pick], [names[k] for k in pick], units,
                                "per-cycle values and groups of cycles (thesis Figs 5.13-5.14)"))
    rows = [[g, v["selection"], ", ".join(str(c) for c in v["cycles"]), fmt(v["distance"]["first"], ".3g"),
             fmt(v["distance"]["rest"], ".3g"), v["closest"]] for g, v in groups.items()]
    return (paragraph("Identification on groups of cycles (thesis Table 5.5): distance of each group's parameters "
                      f"to the mean of the first {study['skip_first']} and of the later per-cycle values, in "
                      "per-cycle standard deviations.")
            + table(["group", "selection", "cycles", "to first", "to later", "closest"], rows, left=3)
            + figure(img, "groups of cycles"))


def _drift_part(ctx: Context) -> str:
    drift = load_json(ctx.inputs.drift_table, "friction drift table")
    if not drift:
        return note("No per-sample friction drift fit: " + ctx.inputs.missing.get("drift_table", "not given"))
    printed = None
    if ctx.robot is not None and ctx.robot.name == "er3a":
        from dynid.simulate.thesis_friction import TABLE_5_6
        printed = TABLE_5_6
    rows = []
    for k, r in enumerate(drift["joints"]):
        row = [str(r["joint"])] + [fmt(r[p]) for p in ("a", "b", "t1", "c", "t2")]
        if printed is not None:
            row.append(", ".join(f"{v:.4g}" for v in printed[k]))
        rows.append(row)
    head = ["joint", "a [N m]", "b [N m]", "t1 [min]", "c [N m]", "t2 [min]"] + (["Table 5.6"] if printed is not None else [])
    notes = "".join(note(n) for r in drift["joints"] for n in r["notes"])
    return (paragraph(f"Eq. 5.4 at {100 * drift['share']:g} % of dq_max fitted to every sample (dynid friction "
                      "drift; thesis Table 5.6 beside; '-' = not determined by this log).") + table(head, rows) + notes)


def verification(ctx: Context) -> Section:
    title = "Verification per cycle (thesis chapter 5)"
    if ctx.result is None:
        return missing("verification", title, ctx.inputs.missing.get("result", "no result"))
    body = _rmsd_part(ctx) + _parameters_part(ctx) + _groups_part(ctx) + _drift_part(ctx)
    return Section("verification", title, body)


def postures(ctx: Context) -> Section:
    from dynid.multibody.experiment import seed_trajectory
    from dynid.report.pose_figure import postures_figure
    from dynid.robot import load_robot

    title = "Postures"
    body = ""
    protocol = load_json(ctx.inputs.protocol, "protocol summary")
    if protocol and ctx.robot is not None and protocol.get("friction_poses"):
        poses = [(f"friction test of joint {j + 1}", np.array(q)) for j, q in enumerate(protocol["friction_poses"])]
        share = protocol.get("warming", {}).get("range_share", 0.8)
        ends = protocol.get("warming", {}).get("ends")  # older files: from the description's limits
        if ends is None:
            lo, hi = ctx.robot.limit_array("q_min"), ctx.robot.limit_array("q_max")
            mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
            ends = [mid - share * half, mid + share * half] if np.all(np.isfinite(lo + hi)) else []
        poses += [(f"warming: {label}", np.array(q)) for label, q in zip(("one end", "other end"), ends)]
        body += paragraph("The rest pose of each joint's friction test (thesis Fig. 4.6): the joint under test "
                          "moves alone; axes vertical where the kinematics allow. The warming stage moves all "
                          f"joints between the ends of {100 * share:g} % of their ranges (Fig. 4.9).")
        body += figure(data_uri(postures_figure(ctx.robot, poses, f"{ctx.robot.name}: friction-stage poses")),
                       "friction-stage poses")
    else:
        body += note("No friction-stage poses: " + ctx.inputs.missing.get("protocol", "protocol summary without poses"))
    kr500 = load_robot("kr500")
    t, q, _, _ = seed_trajectory(kr500)
    picks = [(f"t = {t[i]:g} s", q[i]) for i in (0, int(np.argmin(np.abs(t - 1.5))), len(t) - 1)]
    body += paragraph("The seeds' KR500 experiment (joints 1 and 2 at 9.5493 rad/s^2 from rest): start, 1.5 s "
                      "(the multipliers' instant, seed 000 Fig. 11) and 2 s (Fig. 10).")
    body += figure(data_uri(postures_figure(kr500, picks, "KR500 of the seed papers")), "KR500 postures")
    return Section("postures", title, body)
