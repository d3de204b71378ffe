"""The fleet drift report: one offline HTML page (figures embedded as PNG data URIs).

Sections: the overview (fleet size, failed groups, files left out, the flagged robots and
every robot's Coulomb friction over days), the fleet statistics of the friction per joint,
one section of evidence per flagged robot (its flagged quantities against its own baseline
band and against the fleet's median band, with the numbers of ``drift.analyze``), the
held-out validation (per model the relative error on a group's own data and held out, and
the groups that predict their held-out data worst), and the groups that could not be
identified. ``write_drift`` writes the folder of ``dynid fleet drift``: drift.json, trends.parquet
and this page.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from dynid.fleet.drift import FleetDrift, joint_of, kind_of, to_dict
from dynid.report.html import esc, fmt, note, page, paragraph, table


def _fleet_band(drift: FleetDrift, model: str, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(days, median, robust sigma) of one quantity over the robots of ``model``, per day."""
    per_day: dict[float, list[float]] = {}
    for s in drift.series.values():
        if s.model == model and name in s.names:
            k = s.names.index(name)
            for d, v in zip(s.days, s.values[:, k]):
                per_day.setdefault(float(d), []).append(float(v))
    days = np.array(sorted(per_day))
    med = np.array([np.median(per_day[d]) for d in days])
    sig = np.array([1.4826 * np.median(np.abs(np.array(per_day[d]) - m)) for d, m in zip(days, med)])
    return days, med, sig


def overview_figure(drift: FleetDrift) -> str:
    """Coulomb friction of every joint over days: all robots in grey, flagged ones in colour."""
    from dynid.report.figures import data_uri
    import matplotlib.pyplot as plt

    any_series = next(iter(drift.series.values()))
    names = [n for n in any_series.names if n.startswith("Fc") and kind_of(n) == "friction"]
    cols = min(3, max(1, len(names)))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(13, 2.9 * rows), squeeze=False)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    flagged = list(drift.flags)
    for ax, name in zip(axes.ravel(), names):
        for rid, s in drift.series.items():
            if name not in s.names:
                continue
            k = s.names.index(name)
            mine = rid in flagged
            ax.plot(s.days, s.values[:, k], "-", lw=1.3 if mine else 0.6, color=f"C{flagged.index(rid) % 10}"
                    if mine else "0.75", label=rid if mine and any(f["quantity"] == name for f in drift.flags[rid])
                    else None, zorder=3 if mine else 1)
        ax.set_title(f"{name} (joint {joint_of(name)})", fontsize=9)
        ax.set_xlabel("day")
        ax.set_ylabel("Coulomb friction [N m]")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle("Coulomb friction per robot and day (grey: not flagged on it)", fontsize=11)
    fig.tight_layout()
    return data_uri(fig)


def robot_figure(drift: FleetDrift, rid: str, flags: list[dict], count: int = 4) -> str:
    """The robot's most flagged quantities over days with its baseline band and the fleet band."""
    from dynid.report.figures import data_uri
    import matplotlib.pyplot as plt

    s = drift.series[rid]
    shown = flags[:count]
    fig, axes = plt.subplots(1, len(shown), figsize=(3.3 * len(shown) + 1, 3.0), squeeze=False)
    k_sigma = drift.settings.threshold
    for ax, f in zip(axes.ravel(), shown):
        k = s.names.index(f["quantity"])
        days, med, sig = _fleet_band(drift, s.model, f["quantity"])
        ax.fill_between(days, med - 3 * sig, med + 3 * sig, color="0.85", label="fleet median +- 3 sigma")
        lo = f["level_baseline"] - k_sigma * f["sigma"]
        hi = f["level_baseline"] + k_sigma * f["sigma"]
        ax.axhspan(lo, hi, color="C2", alpha=0.15, label=f"own baseline +- {k_sigma:g} sigma")
        ax.plot(s.days, s.values[:, k], "o-", ms=3, lw=1, color="C3", label=rid)
        ax.set_title(f"{f['quantity']}: {f['flags']}", fontsize=9)
        ax.set_xlabel("day")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return data_uri(fig)


def _since(drift: FleetDrift, rid: str, f: dict) -> str:
    """First date from which the quantity stays outside its own baseline band."""
    s = drift.series[rid]
    k = s.names.index(f["quantity"])
    outside = np.abs(s.values[:, k] - f["level_baseline"]) > drift.settings.threshold * f["sigma"]
    if not outside[-1]:
        return "-"
    last_inside = np.flatnonzero(~outside)
    first = last_inside[-1] + 1 if last_inside.size else 0
    return s.dates[first]


def _flag_rows(drift: FleetDrift, rid: str, flags: list[dict]) -> list[list]:
    out = []
    for f in flags:
        rel = 100.0 * f["change"] / abs(f["level_baseline"]) if f["level_baseline"] else float("nan")
        out.append([f["quantity"], f["kind"], f["flags"], fmt(f["level_baseline"]), fmt(f["level_recent"]),
                    fmt(f["change"]), fmt(rel, ".1f"), fmt(f["slope_per_day"]), fmt(f["z_own"], ".1f"),
                    fmt(f["z_fleet"], ".1f"), fmt(f["z_level"], ".1f"), _since(drift, rid, f)])
    return out


FLAG_HEADER = ["quantity", "kind", "flags", "baseline", "recent", "change", "change %", "trend /day",
               "z own", "z fleet", "z level", "outside own band since"]


def validation_body(drift: FleetDrift, worst: int = 5) -> str:
    """Per model: groups, median relative error on their own data and held out; the ``worst``
    groups by held-out relative error."""
    rows, have = [], [v for v in drift.validation if v["held_out"] is not None]
    for model in sorted({v["model"] for v in drift.validation}):
        mine = [v for v in have if v["model"] == model]
        fit = [v["fit"] for v in mine if v["fit"] is not None]
        rows.append([model, len([v for v in drift.validation if v["model"] == model]), len(mine),
                     fmt(100 * np.median(fit) if fit else None, ".3g"),
                     fmt(100 * np.median([v["held_out"] for v in mine]) if mine else None, ".3g")])
    body = paragraph("Relative torque error of all joints, sqrt(sum RSS / sum tau^2): on the data each group was "
                     "fitted to, and held out (each file left out of the fit and predicted, or, for a group of "
                     "one file, each of 5 blocks of time; computed from the normal equations, no second pass). "
                     "A held-out error well above the fit's is a model that does not carry over between the "
                     "group's recordings.", "small")
    body += table(["model", "groups", "with validation", "median on own data %", "median held out %"], rows, left=1)
    top = sorted(have, key=lambda v: -v["held_out"])[:worst]
    if top:
        body += table(["robot", "date", "on own data %", "held out %", "folds"],
                      [[v["robot"], v["date"], fmt(100 * v["fit"] if v["fit"] is not None else None, ".3g"),
                        fmt(100 * v["held_out"], ".3g"), v["kind"]] for v in top], left=2)
    return body


def build_report(drift: FleetDrift, title: str = "Fleet drift report", source: str = "") -> str:
    """The whole HTML document (module docstring)."""
    sections = []
    dates = sorted({d for s in drift.series.values() for d in s.dates})
    groups = sum(len(s.dates) for s in drift.series.values())
    st = drift.settings
    summary = [["robots", len(drift.series)], ["dates", f"{dates[0]} .. {dates[-1]} ({len(dates)})"],
               ["groups identified", groups], ["groups failed", len(drift.failed)],
               ["files left out", len(drift.file_errors)], ["robots flagged", len(drift.flags)]]
    body = table(["", ""], summary, cls="kv")
    body += paragraph(f"Baseline: each robot's first {st.baseline_days} dates; recent: its last {st.recent_days}; "
                      f"a flag is a robust |z| above {st.threshold:g} (own: against the robot's own day-to-day "
                      "scatter; fleet: its change against the changes of the other robots of the same model; "
                      "level: its friction against the fleet's).", "small")
    if drift.flags:
        rows = []
        for rid, flags in drift.flags.items():
            top = ", ".join(f"{f['quantity']} ({f['flags']}, z {max(abs(f['z_own']), abs(f['z_fleet']), abs(f['z_level'])):.0f})"
                            for f in flags[:4])
            rows.append([rid, drift.series[rid].model, len(flags), top, _since(drift, rid, flags[0])])
        body += table(["robot", "model", "flagged quantities", "strongest", "since"], rows, left=4)
    else:
        body += note("No robot is flagged.")
    body += f'<img class="fig" src="{overview_figure(drift)}" alt="Coulomb friction per robot and day">'
    for text in drift.notes:
        body += note(text)
    sections.append(SimpleNamespace(id="overview", title="Fleet overview", body=body))

    stat_rows = []
    for model, stats in drift.fleet.items():
        for name, v in stats.items():
            if kind_of(name) == "friction":
                stat_rows.append([model, name, joint_of(name), fmt(v["median"]), fmt(v["sigma"]),
                                  fmt(100 * v["sigma"] / abs(v["median"]) if v["median"] else None, ".1f"), v["robots"]])
    sections.append(SimpleNamespace(id="fleet", title="Fleet statistics of the friction (recent dates)", body=table(
        ["model", "quantity", "joint", "median", "robust sigma", "sigma %", "robots"], stat_rows, left=2)))

    for rid, flags in drift.flags.items():
        body = paragraph(f"model {drift.series[rid].model}; {len(drift.series[rid].dates)} dates; "
                         f"{len(flags)} flagged quantities", "small")
        body += f'<img class="fig" src="{robot_figure(drift, rid, flags)}" alt="{esc(rid)} evidence">'
        body += f'<div class="scroll">{table(FLAG_HEADER, _flag_rows(drift, rid, flags), left=3)}</div>'
        sections.append(SimpleNamespace(id=f"robot-{rid}", title=f"Robot {rid}", body=body))

    if drift.validation:
        sections.append(SimpleNamespace(id="validation", title="Held-out validation", body=validation_body(drift)))

    if drift.failed or drift.file_errors:
        body = ""
        if drift.failed:
            keys = [k for k in drift.failed[0] if k != "error"]
            body += table(keys + ["error"], [[r[k] for k in keys] + [r["error"]] for r in drift.failed],
                          left=len(keys) + 1)
        if drift.file_errors:
            body += table(["robot", "date", "file", "why it was left out"],
                          [[e["robot"], e["date"], e["path"], e["error"]] for e in drift.file_errors], left=4)
        sections.append(SimpleNamespace(id="problems", title="Groups not identified, files left out", body=body))
    subtitle = f"{len(drift.series)} robots, {len(dates)} dates" + (f", from {source}" if source else "")
    return page(title, subtitle, sections)


def write_drift(drift: FleetDrift, out, source: str = "", force: bool = False) -> list[str]:
    """drift.json, trends.parquet and fleet_report.html in folder ``out``, built in a hidden
    folder beside it and moved onto it when complete (``files.outputs``)."""
    import json
    import shutil
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    from dynid.data.io import atomic_write_bytes, atomic_write_text
    from dynid.files.outputs import finish_directory, start_directory

    html = build_report(drift, source=source)  # everything is computed before the first write
    text = json.dumps(to_dict(drift), indent=1, default=float) + "\n"
    table = pa.Table.from_pylist(drift.trends)
    names = ["drift.json", "trends.parquet", "fleet_report.html"]
    work = start_directory(out, "fleet drift")
    try:
        atomic_write_text(work / names[0], text)
        atomic_write_bytes(work / names[1], lambda tmp: pq.write_table(table, tmp))
        atomic_write_text(work / names[2], html)
        finish_directory(work, out, "fleet drift", force)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return [str(Path(out) / name) for name in names]
