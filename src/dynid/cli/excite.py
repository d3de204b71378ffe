"""dynid excite optimize | evaluate | protocol (docs/formats.md section 4)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dynid.cli import excite_geometry as geo
from dynid.cli import excite_options as lim
from dynid.cli.common import JOINTS, LOCK, console, err_console, friendly_errors, load_selected, robot_option
from dynid.errors import DataError

SELECT_PARAMS = {"joints": (str, JOINTS), "lock": (str, LOCK)}  # robot/select.py, for every excite command

excite_app = typer.Typer(help="Excitation trajectories: optimize, evaluate, full test protocol.",
                         no_args_is_help=True)


def _model(robot, seed: int = 0):
    from dynid.excite.criteria import ExcitationModel

    return ExcitationModel.of(robot, seed=seed)


def _geometry(robot, limits, given: dict, stored: dict | None = None, stored_from: str = "",
              range_fraction: float = 0.99):
    """The Geometry of the options (when any is given), else the one stored in a trajectory file."""
    from dynid.excite.geometry.setup import build_geometry, geometry_from_description

    options = geo.geometry_options(robot, **{k: given[k] for k in geo.GEOMETRY_PARAMS},
                                   range_fraction=range_fraction)
    return build_geometry(robot, limits, options) if options.active or stored is None else \
        geometry_from_description(robot, stored, stored_from)


def _integers(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(";", ",").split(",") if v.strip())
    except ValueError as exc:
        raise DataError(f"{option}: expected comma-separated integers, got '{text}'") from exc
    if not values or min(values) < 1:
        raise DataError(f"{option}: expected positive integers, got '{text}'")
    return values


def _print_evaluation(name: str, report: dict) -> None:
    table = Table("ratio", *(f"j{j + 1}" for j in range(len(report["joint_ratio"]["q"]))), "max",
                  title=f"{name}: limit usage (1 = on the limit)")
    for key in ("q", "dq", "ddq"):
        table.add_row(key, *(f"{v:.3f}" for v in report["joint_ratio"][key]), f"{report['max_ratio'][key]:.3f}")
    table.add_row("tau (prior)", *(f"{v:.3f}" for v in report["torque"]["joint_ratio"]),
                  f"{report['torque']['max_ratio']:.3f}")
    console.print(table)
    verdict = "[green]respects[/]" if report["limits_ok"] else "[red]violates[/]"
    console.print(f"cond = [bold]{report['cond']:.4g}[/] (column-normalized base regressor, "
                  f"{report['base_parameters']} base parameters, {report['samples']} samples at "
                  f"{report['rate']:g} Hz over one period); {verdict} the position, velocity and "
                  "acceleration limits")


@excite_app.command("evaluate")
@friendly_errors(outputs=("json_out",))
@lim.with_options(SELECT_PARAMS, lim.LIMIT_PARAMS, geo.GEOMETRY_PARAMS)
def evaluate(robot: str = robot_option(),
             trajectory: str = typer.Option(..., "--trajectory", "-t",
                                            help="trajectory JSON file or builtin name (thesis-table-4.1)"),
             json_out: Path = typer.Option(None, "--json", help="write the evaluation as JSON here"),
             **options) -> None:
    """Condition number, limit usage and clearance of an excitation trajectory over one period.

    Limits and geometry: the options when given, else those stored in the trajectory file,
    else the robot description with the documented defaults (no collision check)."""
    import warnings

    from dynid.errors import DynidWarning
    from dynid.excite.evaluate import evaluate_trajectory, unusable
    from dynid.excite.fileio import load_trajectory, write_json
    raw = {k: options[k] for k in lim.LIMIT_PARAMS}
    bare = load_selected(robot, options["joints"], options["lock"])
    traj = load_trajectory(trajectory, bare.n, bare.name)
    limited, resolved, title = lim.robot_and_limits(bare, raw, traj.metadata.get("limits"), trajectory)
    geometry = _geometry(limited, resolved.limits, options, traj.metadata.get("geometry"), trajectory)
    lim.print_limits(console, limited, resolved, title)
    if geometry is not None:
        geo.print_geometry(console, geometry)
    model = _model(limited)
    made_for = traj.metadata.get("robot")
    if made_for and made_for != model.robot.name:
        console.print(f"[yellow]note:[/] {trajectory} was made for '{made_for}', evaluated on '{model.robot.name}'")
    report = evaluate_trajectory(model, traj)
    report = {"robot": model.robot.name, "trajectory": trajectory, **report,
              "limits": resolved.to_dict(model.robot)}
    _print_evaluation(trajectory, report)
    optimized = traj.metadata.get("optimization")
    for problem in sum(unusable(report, traj, model.robot,
                                bool(isinstance(optimized, dict) and optimized.get("torque_limits"))), []):
        warnings.warn(DynidWarning(f"{trajectory}: {problem}"), stacklevel=1)
    if geometry is not None:
        from dynid.excite.evaluate import geometry_report

        report.update(geometry_report(geometry, traj, resolved.limits))
        geo.print_geometry_report(console, report)
    else:
        console.print("collisions: not checked (no geometry in the trajectory file; --clearance checks them)")
    if json_out is not None:
        write_json(json_out, report)
        console.print(f"wrote {json_out}")


@excite_app.command("optimize")
@friendly_errors(outputs=("out", "csv"))
@lim.with_options(SELECT_PARAMS, lim.LIMIT_PARAMS, geo.GEOMETRY_PARAMS)
def optimize(robot: str = robot_option(),
             out: Path = typer.Option(..., "--out", "-o", help="trajectory JSON to write"),
             csv: Path = typer.Option(None, "--csv", help="also write t, q, dq, ddq samples (CSV or .parquet)"),
             rate: float = typer.Option(100.0, "--rate", help="sample rate of --csv [Hz]"),
             periods: int = typer.Option(1, "--periods", help="periods written to --csv"),
             family: str = typer.Option("fourier", "--family", help="fourier (eq. 4.19) or harmonic (eq. 4.1)"),
             harmonics: int = typer.Option(5, "--harmonics", "-N", help="number of harmonics N"),
             multipliers: str = typer.Option(None, "--multipliers",
                                             help="integer harmonics instead of 1..N, e.g. 1,2,4 (eq. 4.13)"),
             frequency: float = typer.Option(0.1, "--frequency", help="base frequency f, w_f = 2 pi f [Hz]"),
             criterion: str = typer.Option("cond", "--criterion", help="cond | logdet | weighted"),
             weight: float = typer.Option(0.5, "--weight", help="weight of log(cond) in 'weighted'"),
             starts: int = typer.Option(1, "--starts", help="number of starts (seeds seed, seed + 1, ...)"),
             generations: int = typer.Option(20, "--generations",
                                             help="differential-evolution generations per start"),
             popsize: int = typer.Option(2, "--popsize", help="differential-evolution population per variable"),
             polish_iterations: int = typer.Option(120, "--polish-iterations",
                                                   help="at most this many SLSQP iterations per start (0: no polish)"),
             max_seconds: float = typer.Option(600.0, "--max-seconds",
                                               help="wall-time safety net in seconds (0: none); a run it cuts short is "
                                                    "flagged and not reproducible"),
             seed: int = typer.Option(0, "--seed", help="seed of the first start"),
             zero_ends: bool = typer.Option(False, "--zero-ends/--free-ends",
                                            help="zero velocity and acceleration at both ends"),
             torque_limits: bool = typer.Option(False, "--torque-limits/--no-torque-limits",
                                                help="keep prior-model torques within tau_max"),
             limit_fraction: float = typer.Option(0.99, "--limit-fraction", help="share of each limit to use"),
             **options) -> None:
    """Optimize the coefficients of an excitation trajectory (global search + local polish).

    The search stops after fixed counts (starts, generations, polish iterations), so the same
    seed and options give the same trajectory whatever the machine load."""
    import warnings

    from dynid.errors import DataError, DynidWarning
    from dynid.excite.deadline import TimeLimitReached, time_limit
    from dynid.excite.evaluate import evaluate_trajectory, unusable
    from dynid.excite.fileio import write_joint_file, write_trajectory
    from dynid.excite.optimize import OptimizeSettings, optimize_excitation

    wall = time.perf_counter()
    mult = _integers(multipliers, "--multipliers") if multipliers else None
    settings = OptimizeSettings(family=family, n_harmonics=harmonics, multipliers=mult, w_f=2 * math.pi * frequency,
                                criterion=criterion, weight=weight, starts=starts, generations=generations,
                                popsize=popsize, polish_iterations=polish_iterations,
                                max_seconds=max_seconds if max_seconds > 0 else None, seed=seed,
                                zero_ends=zero_ends, torque_limits=torque_limits, limit_fraction=limit_fraction)
    raw = {k: options[k] for k in lim.LIMIT_PARAMS}
    limited, resolved, title = lim.robot_and_limits(load_selected(robot, options["joints"], options["lock"]), raw)
    deadline = wall + max_seconds if max_seconds > 0 else math.inf  # the safety net counts from here
    try:
        with time_limit(deadline):
            geometry = _geometry(limited, resolved.limits, options, range_fraction=limit_fraction)
    except TimeLimitReached:
        raise DataError(f"the wall-time safety net (--max-seconds {max_seconds:g}) ran out while setting up the "
                        "collision geometry (capsules, obstacles, start posture): no trajectory. Give more time or "
                        "a simpler obstacle scene") from None
    lim.print_limits(console, limited, resolved, title)
    if geometry is not None:
        geo.print_geometry(console, geometry)
    else:
        console.print("collisions: not checked (--clearance, --obstacles or --box keep the links apart, off the "
                      "floor and off obstacles)")
    model = _model(limited)
    with Progress(TextColumn("[bold]optimizing[/] start {task.fields[start_no]}"), BarColumn(),
                  TextColumn("best {task.fields[best]}"), TimeElapsedColumn(), console=console,
                  transient=False) as bar:
        task = bar.add_task("search", total=1.0, start_no=1, best="-")

        def progress(fraction, best, start_index):
            shown = math.exp(best) if criterion == "cond" and best < 700 else best  # beyond: a limit penalty
            bar.update(task, completed=min(fraction, 1.0), start_no=start_index + 1, best=f"{shown:.4g}")

        result = optimize_excitation(model, settings, progress, None if geometry is None else geometry.constraints,
                                     None if geometry is None else geometry.start, deadline=deadline)
        bar.update(task, completed=1.0)
    report = evaluate_trajectory(model, result.trajectory)
    problems, cautions = unusable(report, result.trajectory, model.robot, torque_limits)
    if problems:  # nothing written: this trajectory cannot serve identification
        raise DataError(f"no usable excitation: {'; '.join(problems)}")
    for text in cautions:
        warnings.warn(DynidWarning(text), stacklevel=1)
    extra = {}
    if geometry is not None:
        from dynid.excite.evaluate import geometry_report

        report.update(geometry_report(geometry, result.trajectory, resolved.limits))
        extra = {"geometry": geometry.describe(),
                 **{k: report[k] for k in ("clearance", "workspace") if k in report}}
    traj = result.trajectory.with_coefficients(
        result.trajectory.q0, result.trajectory.coefficients,
        cond=report["cond"], max_ratio=report["max_ratio"], limits_ok=report["limits_ok"],
        search_seconds=result.seconds, starts_detail=result.history, limits=resolved.to_dict(model.robot), **extra)
    write_trajectory(out, traj, model.robot.name)
    _print_evaluation(str(out), report)
    if geometry is not None:
        geo.print_geometry_report(console, report)
    if csv is not None:
        t = traj.sample_times(rate, periods)
        write_joint_file(csv, t, *traj.evaluate(t))
        console.print(f"wrote {csv} ({t.size} samples at {rate:g} Hz)")
    console.print(f"wrote {out}  ({len(result.history)} start(s) x ({generations} generations + "
                  f"<= {polish_iterations} polish iterations), seed {seed}, search {result.seconds:.1f} s, "
                  f"total {time.perf_counter() - wall:.1f} s)")
    if result.time_limited:
        err_console.print(f"[bold red]warning:[/] the --max-seconds safety net ({max_seconds:g} s) stopped the "
                          f"search early ({len(result.history)} of {starts} start(s) run): this result depends on "
                          "the machine load and is NOT reproducible (marked time_limited in the file's optimization "
                          "metadata). Lower --generations/--polish-iterations/--starts or raise --max-seconds.")


@excite_app.command("protocol")
@friendly_errors(outputs=("out", "summary"))
@lim.with_options(SELECT_PARAMS, lim.LIMIT_PARAMS)
def protocol(robot: str = robot_option(),
             out: Path = typer.Option(..., "--out", "-o", help="joint data file to write (CSV or .parquet)"),
             trajectory: str = typer.Option("thesis-table-4.1", "--trajectory", "-t",
                                            help="excitation: trajectory JSON or builtin name"),
             cycles: int = typer.Option(24, "--cycles", "-K", help="number of test cycles (the thesis' 24 by default: "
                                        "about 2 h 20 min for the er3a)"),
             rate: float = typer.Option(100.0, "--rate", help="controller sample rate [Hz]"),
             excitation_periods: int = typer.Option(1, "--excitation-periods", help="excitation periods per cycle"),
             cycloid: bool = typer.Option(True, "--cycloid/--no-cycloid", help="additional segment (eq. 4.22-4.24)"),
             level_duration: float = typer.Option(4.0, "--level-duration", help="duration of each friction speed level [s]"),
             warming_duration: float = typer.Option(180.0, "--warming-duration", help="warming stage [s]"),
             seed: int = typer.Option(0, "--seed", help="seed of the vertical-axis pose search"),
             summary: Path = typer.Option(None, "--summary", help="JSON of the cycle: stage durations, every friction "
                                          "level actually used (default: OUT with suffix .protocol.json)"),
             **options) -> None:
    """Write the full test cycle (excitation, friction levels, warming) repeated K times (thesis
    chapter 4: 24 cycles, six friction levels 5-100 % of each joint's maximum speed, warming at
    80 % of range and speed). Prints and stores every speed level used.

    Limits as in ``evaluate``: the options, else the trajectory file's, else the description's."""
    from dynid.excite.fileio import load_trajectory, write_joint_file
    from dynid.excite.protocol import ProtocolSettings, sample_protocol
    raw = {k: options[k] for k in lim.LIMIT_PARAMS}
    bare = load_selected(robot, options["joints"], options["lock"])
    excitation = load_trajectory(trajectory, bare.n, bare.name)
    r, resolved, title = lim.robot_and_limits(bare, raw, excitation.metadata.get("limits"), trajectory)
    lim.print_limits(console, r, resolved, title)
    settings = ProtocolSettings(excitation_periods=excitation_periods, cycloid=cycloid,
                                level_duration=level_duration, warming_duration=warming_duration, seed=seed)
    data = sample_protocol(r, excitation, cycles, rate, settings)
    write_joint_file(out, data["t"], data["q"], data["dq"], data["ddq"], data["cycle"], data["stage"])
    s = data["summary"]
    table = Table("stage", "duration per cycle [s]", title=f"test cycle of {r.name} ({cycles} cycle(s))")
    for stage, duration in s["stage_durations"].items():
        table.add_row(stage, f"{duration:.2f}")
    table.add_row("[bold]total[/]", f"{s['cycle_duration']:.2f}")
    console.print(table)
    console.print("friction stage: |cos(axis, gravity)| per joint "
                  + ", ".join(f"{c:.3f}" for c in s["vertical_axis_cos"]))
    _print_levels(s)
    console.print("largest limit ratios over the file: "
                  + ", ".join(f"{k} {v:.3f}" for k, v in s["max_ratio"].items()))
    console.print(f"wrote {out} ({data['t'].size} samples at {rate:g} Hz, {data['t'][-1] / 60:.1f} min)")
    import json

    from dynid.data.io import atomic_write_text

    target = summary or Path(out).with_suffix(".protocol.json")
    atomic_write_text(target, json.dumps({"robot": r.name, "cycles": cycles, "rate": rate, **s}, indent=1) + "\n")
    console.print(f"wrote {target} (stage durations, friction levels used)")


def _print_levels(s: dict) -> None:
    """The friction levels actually used per joint (share of dq_max, time at constant speed per
    stroke), flagged where they differ from the thesis' share."""
    levels = s["friction_levels"]
    table = Table("joint", *[f"{100 * u['target']:.0f} %" for u in levels[0]], "warming speed",
                  title="friction levels used: % of dq_max (s at constant speed per stroke)")
    for j, row in enumerate(levels):
        cells = []
        for u in row:
            text = f"{100 * u['share']:.1f} ({u['cruise']:.2f} s)"
            cells.append(text if abs(u["share"] - u["target"]) < 1e-9 else f"[yellow]{text}[/]")
        table.add_row(str(j + 1), *cells, f"{100 * s['warming']['speed_shares'][j]:.0f} %")
    console.print(table)
