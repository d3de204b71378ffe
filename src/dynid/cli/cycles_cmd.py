"""dynid validate --per cycle|stage, dynid cycles stats | groups: the thesis' per-cycle studies
(5.1.4-5.1.5; Tables 5.1-5.5, F.x, H.x; Figs 5.4-5.7, 5.13-5.14). Thin wiring of
``identify.cycle_validation``, ``identify.cycle_stats`` and ``identify.cycle_groups``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from dynid.cli.common import console, friendly_errors, robot_option

cycles_app = typer.Typer(help="Per-cycle statistics and identification on groups of cycles (thesis 5.1.5).",
                         no_args_is_help=True)

SKIP_FIRST = typer.Option(None, "--skip-first", help="statistics also without the first K cycles (default: the "
                          "thesis' 5 of 24, scaled to the cycles present: 1 of 6)")


def _f(x, spec=".4f") -> str:
    return "-" if x is None else format(x, spec)


def statistics_table(stats: dict, title: str, names: list[str] | None = None) -> Table:
    """Table H / F layout: one row per parameter (or joint), Mean MIN MAX D/MM D/SE Sdv over all
    cycles and without the first k."""
    from dynid.identify.cycle_stats import HEADERS, STATISTICS

    names = names or stats.get("names") or [str(k + 1) for k in range(len(stats["all"]["mean"]))]
    later = stats.get("without_first")
    cols = [HEADERS[k] for k in STATISTICS]
    if later:
        cols += [f"{HEADERS[k]} (w/o {stats['skip_first']})" for k in STATISTICS]
    table = Table("", *cols, title=title)
    for k, name in enumerate(names):
        row = [_f(stats["all"][s][k]) for s in STATISTICS]
        if later:
            row += [_f(later[s][k]) for s in STATISTICS]
        table.add_row(name, *row)
    return table


def validate_per(robot, result: dict, paths: list[Path], mapping, by: str, min_velocity: float, skip_first: int,
                 json_out: Path | None, figure: Path | None, since_cold: float | None = None,
                 start_end_figure: Path | None = None) -> None:
    """Per-cycle (or per-stage) verification of ``result`` on each file; tables, JSON, figure."""
    import numpy as np

    from dynid.data.columns import ColumnMapping
    from dynid.data.io import atomic_write_text, load_joint_data
    from dynid.errors import DataError
    from dynid.identify.cycle_validation import validate_segments

    if by not in ("cycle", "stage"):
        raise DataError(f"--per: expected 'cycle' or 'stage', got '{by}'")
    trained_on = Path(result.get("data", "")).resolve() if result.get("data") else None
    reports = {}
    for path in paths:
        data = load_joint_data(path, robot, mapping or ColumnMapping.from_dict(result.get("column_mapping")))
        own = trained_on is not None and Path(path).resolve() == trained_on
        rep = validate_segments(robot, data, result, by, min_velocity, skip_first, self_data=own, mapping=mapping,
                                since_cold=since_cold)
        reports[str(path)] = rep
        measure = "moving_relative_rmsd" if min_velocity > 0 else "relative_rmsd"
        for kind, block in rep["kinds"].items():
            what = {"own": "self-verification (each cycle's own OLS parameters)",
                    "paired": "cross-verification (the result's parameters of the same cycle)",
                    "whole": "the result's model on every " + by}[kind]
            table = Table(by, *[f"joint {j + 1}" for j in range(robot.n)], "samples",
                          title=f"{path}: relative RMSD{' |dq| >= %g' % min_velocity if min_velocity > 0 else ''} "
                                f"per {by}, {what}")
            for c, label in enumerate(rep["labels"]):
                table.add_row(label, *[_f(v) for v in block[measure][c]], str(block["samples"][c]))
            console.print(table)
            if "statistics" in block:
                console.print(statistics_table(block["statistics"], f"{path}: statistics over the {by}s ({kind})",
                                               [f"joint {j + 1}" for j in range(robot.n)]))
        _print_range_table(rep, robot.n, path)
        if rep["failed"]:
            console.print(f"[yellow]not identified alone:[/] " + "; ".join(f"{k}: {v}" for k, v in rep["failed"].items()))
        if start_end_figure is not None:
            rep["start_end"] = _start_end(robot, data, result, mapping, since_cold, path,
                                          start_end_figure if len(paths) == 1 else
                                          start_end_figure.with_name(f"{start_end_figure.stem}_{Path(path).stem}.png"))
    if len(reports) > 1 and by == "cycle":
        reports["all_tests"] = _print_table_5_1(reports, robot.n, min_velocity)
    if json_out:
        atomic_write_text(json_out, json.dumps(reports, indent=1) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")
    if figure:
        from dynid.report.cycle_figures import rmsd_cycles_figure, save_png

        if by != "cycle":
            raise DataError("--figure plots the relative RMSD over the cycles: use it with --per cycle")
        series = []
        for path, rep in reports.items():
            if path == "all_tests":
                continue
            cycles = np.array([float(v) for v in rep["labels"]])
            for kind, block in rep["kinds"].items():
                values = np.array(block["moving_relative_rmsd" if min_velocity > 0 else "relative_rmsd"], dtype=float)
                series.append((f"{Path(path).stem} {kind}", cycles, values))
        save_png(rmsd_cycles_figure(series, robot.n, f"relative RMSD per cycle ({result.get('robot_name', '')})"),
                 figure)
        console.print(f"wrote [bold]{figure}[/]")


def _start_end(robot, data, result: dict, mapping, since_cold, path, png: Path) -> dict:
    """Thesis Fig. 5.15 of one log: the errors at the start and the end of the first cycle's
    warming stage (``identify.cycle_validation.stage_start_end``), printed and drawn."""
    from dynid.identify.cycle_validation import stage_start_end
    from dynid.report.cycle_figures import save_png, start_end_figure

    errors = stage_start_end(robot, data, result, mapping=mapping, since_cold=since_cold)
    whole = "the result's model" + (" (drifting friction)" if errors["whole_has_drift"] else "")
    table = Table("joint", "own: start", "own: end", f"{whole}: start", "end",
                  title=f"{path}: thesis Fig. 5.15, RMSD over the first and the last {errors['seconds']:.3g} s of "
                        f"cycle {errors['cycle']}'s {errors['stage']} stage")
    for j in range(robot.n):
        table.add_row(str(j + 1), *[_f(errors["rmsd"][w][k][j], ".4g") for k in ("own", "whole")
                                    for w in ("start", "end")])
    console.print(table)
    save_png(start_end_figure(errors, robot.n, f"{Path(path).name}: model errors at the start and the end of "
                                               f"cycle {errors['cycle']}'s {errors['stage']} stage (thesis Fig. 5.15)"),
             png)
    console.print(f"wrote [bold]{png}[/]")
    return {k: errors[k] for k in ("cycle", "stage", "seconds", "rmsd", "whole_has_drift")}


def _print_table_5_1(reports: dict, n: int, min_velocity: float) -> dict:
    """Thesis Table 5.1: per joint each test's MIN, MAX, D/MM, D/SE, Sdv of the relative RMSD over
    its cycles, and the "All Tests" columns (``cycle_stats.all_tests_statistics``), for every kind
    all tests share; returns them for the JSON ("all_tests": {kind: {"tests", "all"}})."""
    import numpy as np

    from dynid.identify.cycle_stats import all_tests_statistics

    measure = "moving_relative_rmsd" if min_velocity > 0 else "relative_rmsd"
    kinds = [k for k in ("own", "paired", "whole") if all(k in rep["kinds"] for rep in reports.values())]
    out = {}
    floats = lambda a: [None if not np.isfinite(v) else float(v) for v in np.asarray(a, dtype=float)]  # noqa: E731
    for kind in kinds:
        per_test = []
        for rep in reports.values():
            values = np.array(rep["kinds"][kind][measure], dtype=float)
            per_test.append(values[np.all(np.isfinite(values), axis=1)])
        if any(len(v) == 0 for v in per_test):
            continue
        stats = all_tests_statistics(per_test)
        names = ("min", "max", "d_mm", "d_se", "sdv")
        table = Table("joint", "test", *[HEADERS_5_1[k] for k in names], title=f"thesis Table 5.1: relative RMSD"
                      f"{' |dq| >= %g' % min_velocity if min_velocity > 0 else ''} over the cycles, each test and "
                      f"all tests ({kind})")
        for j in range(n):
            for t, (path, test) in enumerate(zip(reports, stats["tests"])):
                table.add_row(str(j + 1) if t == 0 else "", Path(path).name, *[_f(test[k][j]) for k in names])
            table.add_row("", "all tests", *[_f(stats["all"][k][j]) for k in names], end_section=True)
        console.print(table)
        out[kind] = {"tests": {path: {k: floats(test[k]) for k in names} for path, test in zip(reports, stats["tests"])},
                     "all": {k: floats(stats["all"][k]) for k in names}}
    return out


HEADERS_5_1 = {"min": "MIN", "max": "MAX", "d_mm": "D/MM", "d_se": "D/SE (all: largest)", "sdv": "Sdv (all: pooled)"}


def _print_range_table(rep: dict, n: int, path) -> None:
    """Thesis Tables 5.2 and 5.3: per joint the range (MIN..MAX) of the relative RMSD over the
    cycles and its mean without the first K cycles, for self-verification and the other kind,
    and their difference."""
    kinds = [k for k in ("own", "paired", "whole") if "statistics" in rep["kinds"].get(k, {})]
    if len(kinds) < 2:
        return
    a, b = (rep["kinds"][k]["statistics"] for k in kinds[:2])
    later_a, later_b = a.get("without_first"), b.get("without_first")
    k_skip = a["skip_first"]
    table = Table("joint", f"range {kinds[0]}", f"range {kinds[1]}", "difference",
                  f"mean w/o first {k_skip} {kinds[0]}", f"mean w/o first {k_skip} {kinds[1]}", "difference",
                  title=f"{path}: thesis Tables 5.2 (range of the plots) and 5.3 (mean without the first cycles)")
    for j in range(n):
        ra = (a["all"]["min"][j], a["all"]["max"][j])
        rb = (b["all"]["min"][j], b["all"]["max"][j])
        if None in ra or None in rb:
            continue
        diff = f"{abs(rb[0] - ra[0]):.3f}~{abs(rb[1] - ra[1]):.3f}"
        ma = later_a["mean"][j] if later_a else None
        mb = later_b["mean"][j] if later_b else None
        md = "-" if ma is None or mb is None else f"{abs(mb - ma):.3f}"
        table.add_row(str(j + 1), f"{ra[0]:.3f}~{ra[1]:.3f}", f"{rb[0]:.3f}~{rb[1]:.3f}", diff, _f(ma, ".3f"),
                      _f(mb, ".3f"), md)
    console.print(table)


def print_per_cycle_statistics(result: dict, by: str) -> None:
    """Table H of a result written with --per cycle (when it holds statistics)."""
    per = result.get(f"per_{by}") or {}
    stats = per.get("statistics")
    if stats:
        console.print(statistics_table(stats, f"statistics of the per-{by} parameters (thesis Table H)",
                                       [p["name"] for p in result["base_parameters"]]))


def _figure_parameters(parameters: str | None, names: list[str]) -> list[str]:
    """The base parameter names of ``cycles groups --parameters`` (checked before the study runs),
    [] when not given."""
    if not parameters:
        return []
    from dynid.data.columns import refuse_repeated
    from dynid.errors import DataError

    wanted = [p.strip() for p in parameters.split(",") if p.strip()]
    refuse_repeated(wanted, "--parameters")
    unknown = [p for p in wanted if p not in names]
    if unknown or not wanted:
        raise DataError(f"--parameters {parameters}: {unknown or 'none'} not base parameter(s) of the model "
                        f"(it has {', '.join(names[:12])}{', ...' if len(names) > 12 else ''})")
    return wanted


@cycles_app.command("stats")
@friendly_errors(outputs=("json_out",))
def stats(params: Path = typer.Option(..., "--params", "-p", help="result.json of 'dynid identify --per cycle'"),
          skip_first: int = SKIP_FIRST,
          json_out: Path = typer.Option(None, "--json", help="write the statistics to this JSON file")) -> None:
    """Mean, MIN, MAX, D/MM, D/SE and Sdv of every per-cycle parameter over all cycles and without
    the first K (thesis Table H; Table 5.4 is its Sdv columns and their difference)."""
    import numpy as np

    from dynid.data.io import atomic_write_text
    from dynid.errors import DataError
    from dynid.identify.cycle_stats import statistics_to_json, thesis_statistics
    from dynid.identify.result import load_result

    result = load_result(params)
    per = result.get("per_cycle")
    if not per or not per.get("values"):
        raise DataError(f"{params}: no per-cycle values; identify with --per cycle first")
    names = [p["name"] for p in result["base_parameters"]]
    out = statistics_to_json(thesis_statistics(np.array(per["values"], dtype=float), per["labels"], skip_first), names)
    console.print(statistics_table(out, f"statistics of the per-cycle parameters of {params} (thesis Table H)", names))
    if out["sdv_difference"] is not None:
        console.print("Table 5.4 difference Sdv(without first %d) - Sdv(all): " % out["skip_first"]
                      + ", ".join(f"{n} {_f(v)}" for n, v in zip(names, out["sdv_difference"])))
    if json_out:
        atomic_write_text(json_out, json.dumps(out, indent=1) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")


@cycles_app.command("groups")
@friendly_errors(outputs=("out", "figure"))
def groups(robot: str = robot_option(),
           data: Path = typer.Option(..., "--data", "-d", help="joint data file with a cycle column"),
           group: list[str] = typer.Option(None, "--group", "-g",
                                           help="NAME=SELECTION or SELECTION, repeatable, e.g. 'late=6-24' or "
                                                "'unit2' (default: the thesis' unit1, unit2, unit3)"),
           friction: str = typer.Option("coulomb-viscous", "--friction", help="none | coulomb-viscous | polynomial"),
           lowpass: str = typer.Option(None, "--lowpass", help="low-pass cutoff [Hz] before differentiation, 0 = "
                                       "off, or 'auto' (the default): chosen by blocked cross-validation of the log, "
                                       "as dynid identify does, so the per-cycle values equal identify --per cycle's"),
           skip_first: int = SKIP_FIRST,
           rest: str = typer.Option("auto", "--rest", help="auto | off: standing still found on the raw positions, "
                                    "as dynid identify does (data/rest.py)"),
           parameters: str = typer.Option(None, "--parameters", help="comma-separated base parameter names for the "
                                          "figure (default: the 6 with the largest cross-cycle spread)"),
           out: Path = typer.Option(None, "--out", "-o", help="write the group models and statistics (JSON)"),
           figure: Path = typer.Option(None, "--figure", help="PNG: per-cycle values with the groups' lines "
                                                              "(thesis Figs 5.13-5.14)")) -> None:
    """Identify the model on groups of cycles ("units", thesis Table 5.5) and compare them with the
    per-cycle identification: each group's value beside the per-cycle mean of all cycles, of the
    first K and of the rest."""
    from dynid.cli.data_options import lowpass_from, rest_from
    from dynid.data.columns import ColumnMapping
    from dynid.data.io import atomic_write_text, load_joint_data
    from dynid.identify.cycle_groups import parse_groups
    from dynid.identify.group_study import group_study
    from dynid.identify.identification import Identification

    cutoff = lowpass_from(lowpass)
    idn = Identification(robot, friction=friction, lowpass="auto" if cutoff in (None, "auto") else cutoff,
                         lowpass_fallback=cutoff is None, rest="auto" if rest_from(rest) else "off")
    r = idn.robot
    base = idn.base_parameters()
    wanted = _figure_parameters(parameters, list(base.names))  # checked before the work, not after it
    joint_data = load_joint_data(data, r)
    if group:
        specs = parse_groups(group)
    else:  # the thesis' units, scaled to the cycles present when there are fewer than 24
        from dynid.identify.cycle_groups import scaled_units

        specs, note = scaled_units(joint_data.cycle, str(data))
        if note:
            console.print(f"[dim]note: {note}[/]")
    prep, chosen, notes = idn.preprocessing([data], ColumnMapping(), base)  # identify's own choice
    for note in notes:
        console.print(f"[dim]note: {note}[/]")
    if "chosen_hz" in chosen.get("lowpass_selection", {}):
        console.print(f"low-pass cutoff {prep.lowpass_hz:.3g} Hz chosen by cross-validation, as identify")
    study = group_study(r, joint_data, specs, idn.options, skip_first, prep)
    study["preprocessing"] = prep.to_dict()
    skip_first = study["skip_first"]
    names = study["names"]
    table = Table("parameter", *[f"{g} ({study['groups'][g]['selection']})" for g in study["groups"]],
                  "mean all", f"mean 1-{skip_first}", f"mean after {skip_first}",
                  title=f"groups of cycles of {data} (thesis Table 5.5): identified values")
    for k, name in enumerate(names):
        table.add_row(name, *[_f(g["values"][k], ".5g") for g in study["groups"].values()],
                      _f(study["per_cycle_mean"]["all"][k], ".5g"),
                      _f(study["per_cycle_mean"]["first"][k], ".5g"), _f(study["per_cycle_mean"]["rest"][k], ".5g"))
    console.print(table)
    for name, g in study["groups"].items():
        console.print(f"{name}: cycles {g['cycles']}, nearest per-cycle block: {g['closest']}")
    if out:
        atomic_write_text(out, json.dumps(study, indent=1) + "\n")
        console.print(f"wrote [bold]{out}[/]")
    if figure:
        import numpy as np

        from dynid.report.cycle_figures import save_png, units_figure

        values = np.array(study["per_cycle"]["values"], dtype=float)
        if wanted:
            pick = [names.index(p) for p in wanted]
        else:
            from dynid.identify.group_study import figure_parameters
            pick = figure_parameters(study)
        cycles = np.array([float(v) for v in study["per_cycle"]["labels"]])
        units = {g: np.array(v["values"], dtype=float)[pick] for g, v in study["groups"].items()}
        save_png(units_figure(cycles, values[:, pick], [names[k] for k in pick], units,
                              f"per-cycle identification and groups of cycles ({r.name})"), figure)
        console.print(f"wrote [bold]{figure}[/]")
