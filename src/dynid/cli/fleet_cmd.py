"""dynid fleet simulate | identify | drift: thin wiring of dynid.fleet (Dask imports stay inside)."""

from __future__ import annotations

from pathlib import Path

import typer

from dynid.cli import data_options as O
from dynid.cli.common import console, friendly_errors

fleet_app = typer.Typer(help="Fleet scale: identification and friction-drift monitoring of many robots on Dask.",
                        no_args_is_help=True)

SCHEDULER = typer.Option(None, "--scheduler", help="address of a running Dask scheduler (tcp://host:8786); "
                         "default: a LocalCluster started and stopped by this command")
WORKERS = typer.Option(None, "--workers", help="LocalCluster worker processes (default: one per core)")
CONNECT_TIMEOUT = typer.Option(5.0, "--connect-timeout", help="seconds to wait for --scheduler to answer")


def _say(text: str) -> None:
    console.print(text, highlight=False, markup=False)


@fleet_app.command("simulate")
@friendly_errors(outputs=("out",), directories=("out",), command="fleet simulate")
def simulate(out: Path = typer.Option(..., "--out", "-o", help="ROOT folder of the data set to write"),
             robots: int = typer.Option(50, "--robots", help="number of robots"),
             days: int = typer.Option(30, "--days", help="days of daily test cycles"),
             minutes: float = typer.Option(1.0, "--minutes", help="length of each day's log [min]"),
             rate: float = typer.Option(500.0, "--rate", help="sample rate [Hz]"),
             model: str = typer.Option("er3a", "--model", help="robot model of the whole fleet (builtin, .urdf, .yaml)"),
             faults: int = typer.Option(None, "--faults", help="robots with a growing fault (default: one in ten)"),
             files_per_day: int = typer.Option(1, "--files-per-day", help="consecutive files per robot-day"),
             start: str = typer.Option("2026-01-05", "--start", help="first date (yyyy-mm-dd)"),
             temperature: bool = typer.Option(True, "--temperature/--no-temperature", help="write temp1..tempn"),
             seed: int = typer.Option(0, "--seed", help="seed of every random choice"),
             workers: int = typer.Option(1, "--workers", help="1: in this process; more: a LocalCluster"),
             scheduler: str = SCHEDULER, connect_timeout: float = CONNECT_TIMEOUT,
             force: bool = typer.Option(False, "--force", help="replace --out even if it is a folder that "
                                        "'dynid fleet simulate' did not write (everything in it is deleted)")) -> None:
    """Write a synthetic fleet: ROOT/robot=<id>/date=<day>/*.parquet, fleet.yaml and the truth in _truth.json."""
    import time

    from dynid.fleet.simulate import FleetSpec, simulate_fleet

    spec = FleetSpec(robots, days, minutes, rate, model, seed, faults, files_per_day, start, temperature)
    spec.check()
    t0 = time.perf_counter()
    if scheduler or workers > 1:
        from dynid.fleet.cluster import dask_client

        with dask_client(scheduler, workers, connect_timeout) as client:
            truth = simulate_fleet(str(out), spec, client, say=_say, force=force)
    else:
        truth = simulate_fleet(str(out), spec, say=_say, force=force)
    samples = robots * days * int(round(minutes * 60 * rate))
    faulty = {rid: r["fault"] for rid, r in truth["robots"].items() if r["fault"]}
    console.print(f"wrote {robots} robots x {days} days ({samples / 1e6:.2f} M samples) to [bold]{out}[/] "
                  f"in {time.perf_counter() - t0:.1f} s; fleet.yaml and _truth.json beside the data")
    for rid, f in faulty.items():
        console.print(f"  fault: {rid} {f['kind']} on joint {f['joint']} from {f['date']}", highlight=False)


@fleet_app.command("identify")
@friendly_errors(outputs=("out",))
def identify(root: str = typer.Argument(..., help="ROOT of the data set (folder or fsspec URL)"),
             by: str = typer.Option("robot,date", "--by", help="grouping keys: partition keys (and 'file')"),
             out: Path = typer.Option(Path("fleet_results.parquet"), "--out", "-o", help="results Parquet file"),
             fleet: str = typer.Option(None, "--fleet", help="fleet.yaml (default ROOT/fleet.yaml)"),
             scheduler: str = SCHEDULER, workers: int = WORKERS, connect_timeout: float = CONNECT_TIMEOUT,
             estimator: str = typer.Option("ols", "--estimator", help="ols | wls | pc"),
             friction: str = O.FRICTION, offset: bool = O.OFFSET, rotor_inertia: bool = O.ROTOR,
             lowpass: float = O.LOWPASS, decimate: int = O.DECIMATE, min_velocity: float = O.MIN_VELOCITY,
             max_condition: float = typer.Option(1e7, "--max-condition", help="refuse fits above this condition number"),
             chunk_rows: int = typer.Option(50_000, "--chunk-rows", help="rows read at a time per file (memory bound)"),
             std: str = typer.Option("correlated", "--std", help="correlated: the std of the residuals' correlation "
                                     "in time, as dynid identify reports them (pieces of each group's files read "
                                     "again); white: Khalil-Gautier's, several times too small on filtered logs, "
                                     "without that read"),
             force: bool = typer.Option(False, "--force", help="recompute groups whose inputs did not change"),
             retries: int = typer.Option(2, "--retries", help="retries of a task that raises"),
             task_rows: int = typer.Option(None, "--task-rows", help="samples per Dask task at most (default 4 M, "
                                           "fewer so that every worker gets 4 tasks); small groups share a task"),
             checkpoint: float = typer.Option(30.0, "--checkpoint", help="rewrite --out with the finished groups "
                                              "every this many seconds")) -> None:
    """Identify every group of a fleet data set on Dask: one result row per group in --out."""
    from dynid.errors import DataError
    from dynid.fleet.cluster import dashboard_text, dask_client
    from dynid.fleet.config import load_config
    from dynid.fleet.dataset import parse_by
    from dynid.fleet.mapreduce import identify_fleet
    from dynid.fleet.plan import Settings, make_plan
    from dynid.fleet.results import read_results
    from dynid.fleet.tasks import refuse_chosen_friction

    if scheduler:
        from dynid.fleet.cluster import check_address
        check_address(scheduler)  # before reading the data set
    if task_rows is not None and task_rows < 1:
        raise DataError(f"--task-rows {task_rows}: expected a number of samples >= 1")
    if estimator not in ("ols", "wls", "pc"):
        raise DataError(f"--estimator {estimator}: the fleet path needs an estimator of the normal equations "
                        "(ols, wls or pc)")
    refuse_chosen_friction(friction)
    if std not in ("correlated", "white"):
        raise DataError(f"--std {std}: expected 'correlated' or 'white'")
    options = O.model_from(friction, rotor_inertia, offset, 0.0, command="fleet identify")
    keys = parse_by(by)
    config = load_config(fleet or f"{root.rstrip('/')}/fleet.yaml")
    settings = Settings(options,
                        O.preprocessing_from(lowpass, "central", None, decimate, min_velocity),
                        estimator, max_condition, chunk_rows, std=std)
    previous, previous_by = None, None
    if out.exists() and not force:
        previous, previous_by, _ = read_results(out)
    plan = make_plan(root, config, keys, settings, previous, previous_by, force)
    for note in plan.notes:
        _say(f"note: {note}")
    with dask_client(scheduler, workers, connect_timeout) as client:
        where = scheduler or f"LocalCluster of {len(client.scheduler_info()['workers'])} worker process(es)"
        _say(f"Dask: {where}; dashboard: {dashboard_text(client)}")
        summary = identify_fleet(client, plan, out, say=_say, retries=retries, checkpoint=checkpoint,
                                 task_rows=task_rows)
    rate = summary.samples / summary.seconds if summary.seconds > 0 else 0.0
    console.print(f"wrote [bold]{out}[/]: {len(summary.rows)} group(s) ({summary.computed} identified, "
                  f"{summary.skipped} unchanged and skipped, {summary.failed} failed); {summary.files} file(s) in "
                  f"{summary.tasks} task(s), "
                  f"{summary.samples / 1e6:.2f} M samples in {summary.seconds:.1f} s ({rate / 1e6:.2f} M samples/s)",
                  highlight=False)
    held = [r["validation_relative_error"] for r in summary.rows
            if r["status"] == "ok" and r.get("validation_relative_error") is not None]
    if held:
        held.sort()
        console.print(f"held-out validation (relative torque error, all joints): median "
                      f"{100 * held[len(held) // 2]:.3g} %, largest {100 * held[-1]:.3g} % over {len(held)} group(s)",
                      highlight=False)
    if summary.worker_memory_mb:
        peak = max(summary.worker_memory_mb.values())
        console.print(f"peak memory per worker process: {peak:.0f} MB (highest of {len(summary.worker_memory_mb)})",
                      highlight=False)
    for path, error in summary.file_errors:
        console.print(f"[yellow]file left out:[/] {path}: {error}", highlight=False)
    for row in summary.rows:
        if row["status"] != "ok" and row.get("error"):
            label = ", ".join(f"{k}={row[k]}" for k in keys)
            console.print(f"[red]group failed:[/] {label}: {row['error']}", highlight=False)


@fleet_app.command("drift")
@friendly_errors(outputs=("out",), directories=("out",), command="fleet drift")
def drift(results: Path = typer.Argument(..., help="fleet_results.parquet of 'dynid fleet identify --by robot,date'"),
          out: Path = typer.Option(Path("drift"), "--out", "-o", help="folder for drift.json, trends.parquet, "
                                   "fleet_report.html"),
          baseline_days: int = typer.Option(7, "--baseline-days", help="each robot's first dates that form its baseline"),
          recent_days: int = typer.Option(3, "--recent-days", help="each robot's last dates compared with the baseline"),
          threshold: float = typer.Option(5.0, "--threshold", help="robust |z| above which a quantity is flagged"),
          force: bool = typer.Option(False, "--force", help="replace --out even if 'dynid fleet drift' did not "
                                     "write it (everything in it is deleted)")) -> None:
    """Trends per robot and joint, robust fleet statistics, flags, and an offline fleet HTML report."""
    from rich.table import Table

    from dynid.fleet.drift import DriftSettings, analyze
    from dynid.fleet.report import write_drift
    from dynid.fleet.results import read_results

    rows, by, root = read_results(results)
    result = analyze(rows, by, DriftSettings(baseline_days, recent_days, threshold))
    paths = write_drift(result, out, source=str(results), force=force)
    table = Table("robot", "model", "flags", "strongest quantities (flags, z)",
                  title=f"{len(result.flags)} of {len(result.series)} robots flagged")
    for rid, flags in result.flags.items():
        top = ", ".join(f"{f['quantity']} ({f['flags']}, "
                        f"{max(abs(f['z_own']), abs(f['z_fleet']), abs(f['z_level'])):.0f})" for f in flags[:4])
        table.add_row(rid, result.series[rid].model, str(len(flags)), top)
    console.print(table)
    for note in result.notes:
        _say(f"note: {note}")
    if result.failed or result.file_errors:
        _say(f"{len(result.failed)} group(s) failed and {len(result.file_errors)} file(s) were left out: "
             "see the report's last section")
    console.print("wrote " + ", ".join(f"[bold]{p}[/]" for p in paths))
