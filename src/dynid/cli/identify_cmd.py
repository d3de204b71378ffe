"""dynid identify / predict / validate: thin wiring of dynid.identify and dynid.data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer
from rich.table import Table

import dynid
from dynid.cli import data_options as O
from dynid.cli.common import command_warnings, console, diagnostics_line, friendly_errors, robot_option
from dynid.cli.common import number_text as _fmt
from dynid.errors import DataError


def passive_openmp_workers() -> None:
    """Let Numba's OpenMP workers sleep rather than spin between regressor calls (unless the
    user set OMP_WAIT_POLICY): spinning workers take the core the Gram and the filters need;
    on the loaded 2-core machine this cut a 2-million-sample identification from 17 s to 12 s.
    Takes effect when it runs before the first parallel kernel of the process."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@friendly_errors(outputs=("out",))
def identify(robot: str = robot_option(),
             data: list[str] = O.DATA,
             out: Path = typer.Option(..., "--out", "-o", help="result.json to write"),
             estimator: str = typer.Option("ols", "--estimator", help="ols | wls | irls | pc (physically consistent)"),
             friction: str = O.IDENTIFY_FRICTION, offset: bool = O.OFFSET, rotor_inertia: bool = O.ROTOR,
             smooth_sign: float = O.SMOOTH_SIGN, friction_drift: str = O.FRICTION_DRIFT, since_cold: str = O.SINCE_COLD,
             lowpass: str = O.LOWPASS, cv_folds: int = O.CV_FOLDS, excitation: str = O.EXCITATION,
             filter_torque: bool = O.FILTER_TORQUE,
             derivative: str = O.DERIVATIVE, resample: float = O.RESAMPLE,
             decimate: int = O.DECIMATE, min_velocity: float = O.MIN_VELOCITY,
             segments: str = O.SEGMENTS, max_gap: float = O.MAX_GAP, bridge_gap: str = O.BRIDGE_GAP,
             tau_delay: str = O.TAU_DELAY_AUTO, still_range: float = O.STILL_RANGE, rest: str = O.REST,
             rename: str = O.RENAME, columns: str = O.COLUMNS, time_unit: str = O.TIME_UNIT,
             degrees: bool = O.DEGREES, motor_side: bool = O.MOTOR_SIDE, current_gain: str = O.CURRENT_GAIN,
             negate: str = O.NEGATE, ignore: str = O.IGNORE, topic: str = O.TOPIC, stamp: str = O.STAMP,
             nan: str = O.NAN, time_range: str = O.TIME_RANGE, rows: str = O.ROWS,
             prior_bound: float = typer.Option(None, "--prior-bound",
                                               help="pc: keep rigid-body parameters within this fraction of the robot's own"),
             regularize: str = typer.Option(None, "--regularize", help="pc: pull the link inertials toward the "
                                            "description's with this weight of the entropic (log-det) divergence, or "
                                            "'auto' (chosen by cross-validation); docs/identification.md"),
             by: str = typer.Option(None, "--per", help="also identify each 'cycle', 'stage' or 'segment' and report "
                                    "the spread"),
             cycles: str = typer.Option(None, "--cycles", help="identify on these cycles only: '6-24', '3,9,16,22', "
                                        "'last19' or a thesis group unit1|unit2|unit3 (Table 5.5)"),
             skip_first: int = typer.Option(None, "--skip-first", help="--per cycle: statistics also without the first "
                                            "K cycles (thesis Table H; default the thesis' 5 of 24, scaled to the cycles "
                                            "present)"),
             essential: bool = typer.Option(False, "--essential", help="also the essential parameters: backward "
                                            "elimination of the least identifiable base parameter while the residual "
                                            "does not grow significantly (Pham & Gautier 1991; result 'essential')"),
             max_condition: float = typer.Option(1e7, "--max-condition", help="refuse fits above this condition number"),
             irls_iterations: int = typer.Option(50, "--irls-iterations", help="irls: at most this many reweightings "
                                                 "(not converging is reported)"),
             tol: float = typer.Option(None, "--tol", help="relative QR tolerance of the base parameters (default 1e-8)"),
             chunk_rows: int = typer.Option(50_000, "--chunk-rows", help="rows read at a time (bounded memory)"),
             drive: str = typer.Option(None, "--drive", help="dc-motor | servo-current | servo-velocity: "
                                       "acceleration-free identification from q, dq and u (or i) "
                                       "(docs/voltage_identification.md)"),
             drive_input: str = typer.Option("voltage", "--input", help="--drive: voltage (u1..un) or current (i1..in)"),
             known: str = typer.Option(None, "--known", help="--drive: known quantities resolving the scale, "
                                       "e.g. 'm5=1.0' (a payload mass / base parameter) or 'gain1=0.52'"),
             filter_hz: float = typer.Option(1.0, "--filter-hz", help="--drive: pole of F(s) = l/(s+l), l = 2 pi f [Hz]"),
             skip_seconds: float = typer.Option(0.0, "--skip-seconds", help="--drive: leave out this much of the start [s]"),
             back_emf: str = typer.Option(None, "--back-emf", help="--drive dc-motor: known K_b per joint [V s/rad], "
                                          "separates the back-EMF damping so torques can be predicted"),
             prefilter_hz: float = typer.Option(0.0, "--prefilter-hz", help="--drive: zero-phase low-pass of q, dq "
                                                "before the regressor [Hz] (noisy speeds: e.g. 10; 0 = off)")) -> None:
    """Identify the base parameters of ROBOT from joint data logs (one fit); writes result.json."""
    given = dict(locals())
    passive_openmp_workers()
    mapping = O.mapping_from(rename, columns, time_unit, degrees, motor_side, current_gain, negate, ignore, topic,
                             stamp, time_range, rows)
    if drive is not None:
        from dynid.cli.drive_cmd import identify_drive, refuse_unused
        from dynid.data.sources import expand_sources

        refuse_unused(identify, given)
        paths = expand_sources(data)
        if len(paths) > 1:
            raise DataError(f"--drive identifies from one log; {len(paths)} files given")
        if mapping.part():
            raise DataError(f"{mapping.part()}: not with --drive (cut the log instead)")
        identify_drive(robot, dynid.load_robot(robot), paths[0], out, drive, drive_input, known, filter_hz,
                       skip_seconds, back_emf, O.model_from(friction, rotor_inertia, offset, smooth_sign),
                       prefilter_hz, mapping)
        return
    cutoff = O.lowpass_from(lowpass)
    idn = dynid.Identification(robot, estimator=estimator, friction=friction, offset=offset,
                               rotor_inertia=rotor_inertia, smooth_sign=smooth_sign, friction_drift=friction_drift,
                               since_cold=since_cold,
                               lowpass="auto" if cutoff in (None, "auto") else cutoff,
                               lowpass_fallback=cutoff is None, cv_folds=cv_folds, filter_torque=filter_torque,
                               derivative=derivative, resample=resample, decimate=decimate,
                               min_velocity=min_velocity, segments=segments, max_gap=max_gap,
                               bridge_gap=O.seconds_or_auto(bridge_gap, "--bridge-gap", "a step"),
                               tau_delay=O.seconds_or_auto(tau_delay, "--tau-delay", "a delay"),
                               rest="auto" if O.rest_from(rest) else "off",
                               still_range=still_range, nan=nan, chunk_rows=chunk_rows, prior_bound=prior_bound,
                               regularize=regularize,
                               per=by, skip_first=skip_first, cycles=cycles, essential=essential,
                               max_condition=max_condition, irls_iterations=irls_iterations, tol=tol)
    if excitation is not None:
        from dynid.excite.fileio import load_trajectory
        idn.excitation = load_trajectory(excitation, idn.robot.n, idn.robot.name)
    fitted = idn.fit_files(data, mapping)
    fitted.save(out)
    result = fitted.document
    _print_lowpass(result.get("lowpass_selection"))
    _print_friction(result.get("friction_selection"))
    _print_regularization(result.get("regularization"))
    _print_result(result)
    if friction_drift:
        _print_drift(fitted.robot, result)
    if essential:
        ess = result["essential"]
        console.print(f"essential parameters: {ess['count']} of {ess['of']} ("
                      + ", ".join(p["name"] for p in ess["parameters"]) + f"); relative error "
                      f"{100 * ess['relative_error']['essential']:.3f} % (all {ess['of']} parameters "
                      f"{100 * ess['relative_error']['base']:.3f} %)")
    if by:
        import numpy as np

        from dynid.cli.cycles_cmd import print_per_cycle_statistics
        print_per_cycle_statistics(result, by)
        per = result["per_" + by]
        spread = [v for v in per["relative_spread"] if v is not None]
        console.print(f"per {by}: {len(per['labels'])} identified ({len(per['failed'])} failed); "
                      f"median cross-{by} spread {np.median(spread) if spread else float('nan'):.2f} % of the mean")
    console.print(f"wrote [bold]{out}[/]")


def _print_regularization(selection: dict | None) -> None:
    """--regularize auto: the weight chosen by cross-validation and its curve."""
    if not selection or "weights" not in selection:
        return
    curve = ", ".join(f"{w:.3g}: {_fmt(s and 100 * s, '.4f')}" for w, s in zip(selection["weights"], selection["scores"]))
    ols = selection["ols_score"]
    console.print(f"regularization weight {selection['weight']:.3g} chosen by {selection['folds']}-fold blocked "
                  f"cross-validation (held-out relative error %: {curve}; least squares "
                  f"{_fmt(ols and 100 * ols, '.4f')})"
                  + {"upper": "; the largest weight tried: the log does not move the link inertials off the "
                              "description's (friction, rotor inertia and offsets are fitted all the same)",
                     "lower": "; the smallest weight tried: the description's inertials cost accuracy"}.get(
                      selection["edge"], ""))


def _print_lowpass(selection: dict | None) -> None:
    """The cross-validated cutoff and its curve, printed with the result (after it is written: a
    later error then prints its one line alone)."""
    if not selection or "candidates_hz" not in selection:
        return
    curve = ", ".join(f"{c:.3g} Hz {_fmt(s and 100 * s, '.3f')}" for c, s in
                      zip(selection["candidates_hz"], selection["scores"]))
    torque = " (torque filtered alike: parallel filtering)" if selection.get("filter_torque") else ""
    console.print(f"low-pass cutoff {selection['chosen_hz']:.3g} Hz{torque} chosen by {selection['folds']}-fold "
                  f"blocked cross-validation (held-out relative error %: {curve})")


def _print_friction(selection: dict | None) -> None:
    """The friction model chosen by cross-validation (identify.stribeck) and the Stribeck velocities."""
    if not selection:
        return
    scores = ", ".join(f"{m} {v:.4g}" for m, v in selection["scores"].items())
    line = (f"friction model {selection['chosen']} ({selection['folds']}-fold blocked cross-validation, held-out "
            f"error over each joint's noise: {scores})")
    if selection["chosen"] == "stribeck":
        std = selection.get("stribeck_velocity_std") or [None] * len(selection["stribeck_velocity"])
        line += "; Stribeck velocity per joint [rad/s] " + ", ".join(
            f"{v:.3g}" + (f" ± {s:.2g}" if s is not None else " (not determined)")
            for v, s in zip(selection["stribeck_velocity"], std))
    if selection["chosen"] == "load-dependent" and "load_fit" in selection:
        fit = selection["load_fit"]
        line += f"; load torque fixed point in {fit['iterations']} iterations (Fl in the parameters below)"
    console.print(line)


def _print_result(result: dict) -> None:
    table = Table("base parameter", "value", "std", "%sigma", title=f"{result['estimator']} on {result['robot_name']}")
    for p in result["base_parameters"]:
        table.add_row(p["name"], f"{p['value']:.6g}", _fmt(p["std"]), _fmt(p["relative_std"], ".1f"))
    console.print(table)
    fit = result["fit"]
    console.print("RMSD per joint: " + ", ".join(_fmt(v) for v in fit["rmsd"]))
    console.print("relative RMSD:  " + ", ".join(_fmt(v, ".3%") for v in fit["relative_rmsd"]))
    console.print(f"samples {fit['samples']}, condition number {_fmt(fit['condition_number'])}")
    sources = result.get("sources", [])
    if len(sources) > 1 or any(len(s["segments"]) > 1 for s in sources):
        for s in sources:
            console.print(f"  {s['path']}: {s['samples']} samples in {len(s['segments'])} segment(s)")
    if "diagnostics" in result:
        console.print(diagnostics_line(result["diagnostics"]), soft_wrap=True)
    printed = set(command_warnings())  # DynidWarnings were printed as they were issued
    for w in result["warnings"]:
        if w not in printed:
            console.print(f"[yellow]warning:[/] {w}")
    for note in result["data_notes"]:
        console.print(f"[dim]note: {note}[/]")


def _print_drift(robot, result: dict) -> None:
    """The drifting friction (identify.drift): per joint the time constants (or the temperature
    reference) and the friction at 60 % of dq_max, cold over warm."""
    import numpy as np

    from dynid.identify.drift import stored_drift
    from dynid.identify.model import ModelOptions

    drift, _ = stored_drift(result, ModelOptions.from_dict(result["model"]))
    beta = np.array([p["value"] for p in result["base_parameters"]])
    warm = drift.warm_friction([p["name"] for p in result["base_parameters"]], beta)
    speed = 0.6 * np.where(np.isfinite(robot.limit_array("dq_max")), robot.limit_array("dq_max"), 1.0)
    entry = result["friction_drift"]
    head = ["joint", "t1 (min)", "t2 (min)"] if drift.mode == "time" else ["joint", "T_ref (deg C)"]
    load = " at zero load" if drift.options.friction == "load-dependent" else ""  # Fc's level (drift.cold_to_warm)
    table = Table(*head, f"cold / warm friction at 60 % dq_max{load}" if drift.mode == "time" else
                  f"d(friction)/dT at 60 % dq_max{load} (N m/K)",
                  title=f"friction drift ({drift.mode}), fitted with the model")
    ratio = drift.cold_to_warm(warm, speed, np.zeros(1)) if drift.mode == "time" else None
    for j in range(robot.n):
        if not drift.active[j]:
            table.add_row(str(j + 1), *["-"] * (len(head) - 1), "no drift (joint held still)")
        elif drift.mode == "time":
            t1, t2 = drift.time_constants[j] / 60.0
            table.add_row(str(j + 1), f"{t1:.4g}", f"{t2:.4g}", f"{ratio[j]:.3g}")
        else:
            zero = np.zeros((1, robot.n)) if load else None
            slope = drift.torque(speed[None, :], (drift.temperature_reference + 1.0)[None, :], zero)[0, j]
            table.add_row(str(j + 1), f"{drift.temperature_reference[j]:.4g}", f"{slope:.4g}")
    console.print(table)
    for source in entry.get("sources", []):
        console.print(f"[dim]note: {source['path']}: operating time from {source['how']}[/]")
    for note in drift.notes:
        console.print(f"[yellow]note:[/] {note}")


SEGMENTS_OVERRIDE = typer.Option(None, "--segments", help="gaps | auto (default: as in training, result.json)")
MAX_GAP_OVERRIDE = typer.Option(None, "--max-gap", help="gap threshold, multiple of the median step "
                                "(default: as in training)")


def _segment_override(segments, max_gap) -> dict:
    return {k: v for k, v in (("segments", segments), ("max_gap", max_gap)) if v is not None}


STAMP_OVERRIDE = typer.Option(None, "--stamp", help="ROS bags: header | receive (default: as in training)")


def _read_part(result, mapping, time_range, rows):
    """``mapping`` (None: the result's) reading only --time-range / --rows of each log, when given."""
    if time_range is None and rows is None:
        return mapping
    from dynid.data.columns import ColumnMapping
    return O.with_part(mapping or ColumnMapping.from_dict(result.get("column_mapping")), time_range, rows)


def _mapping_override(result, rename, columns, time_unit, degrees, motor_side, current_gain, negate=None,
                      ignore=None, topic=None, stamp=None):
    """The layout options given on the command line, else None (result.json's are used)."""
    if any(v not in (None, False, "s") for v in (rename, columns, time_unit, degrees, motor_side, current_gain,
                                                  negate, ignore, topic, stamp)):
        return O.mapping_from(rename, columns, time_unit, degrees, motor_side, current_gain, negate, ignore, topic,
                              stamp or "header")
    return None


@friendly_errors(outputs=("out",))
def predict(robot: str = robot_option(),
            params: Path = typer.Option(..., "--params", "-p", help="result.json from 'dynid identify'"),
            data: list[str] = O.DATA,
            out: Path = typer.Option(..., "--out", "-o", help="CSV or Parquet with t, tau1..taun (and 'segment', "
                                     "'source' columns for several segments or files)"),
            segments: str = SEGMENTS_OVERRIDE, max_gap: float = MAX_GAP_OVERRIDE,
            rename: str = O.RENAME, columns: str = O.COLUMNS, time_unit: str = O.TIME_UNIT,
            degrees: bool = O.DEGREES, motor_side: bool = O.MOTOR_SIDE, current_gain: str = O.CURRENT_GAIN,
            negate: str = O.NEGATE, ignore: str = O.IGNORE, topic: str = O.TOPIC, stamp: str = STAMP_OVERRIDE,
            time_range: str = O.TIME_RANGE, rows: str = O.ROWS, force: bool = O.FORCE_ROBOT,
            std: str = typer.Option(None, "--std", help="also write std1..stdn, the standard deviation of each "
                                    "predicted torque: 'model' (from the parameter covariance: the band of the "
                                    "noise-free torque) or 'measurement' (plus the residual variance: the band of "
                                    "a measured torque); docs/identification.md"),
            since_cold: str = O.SINCE_COLD, chunk_rows: int = O.CHUNK_ROWS) -> None:
    """Torques of an identified model on other logs, preprocessed as in training.

    The data layout and segment options default to those used by 'identify' (stored in result.json)."""
    from dynid.data.convert import write_stream
    from dynid.data.io import write_columns
    from dynid.data.sources import expand_sources
    from dynid.identify.prediction import prediction_columns, segment_column_needed
    from dynid.identify.result import load_result

    passive_openmp_workers()
    r = dynid.load_robot(robot)
    result = load_result(params, r, force)
    paths = expand_sources(data)
    if "drive" in result:  # acceleration-free model (dynid identify --drive)
        if len(paths) > 1:
            raise DataError(f"a --drive model predicts one log at a time; {len(paths)} files given")
        if time_range is not None or rows is not None:
            raise DataError("--time-range / --rows: not with a --drive model (cut the log instead)")
        from dynid.cli.drive_cmd import predict_drive
        predict_drive(r, result, paths[0], out, write_columns,
                      _mapping_override(result, rename, columns, time_unit, degrees, motor_side, current_gain, negate,
                                        ignore, topic, stamp))
        return
    mapping = _read_part(result, _mapping_override(result, rename, columns, time_unit, degrees, motor_side,
                                                   current_gain, negate, ignore, topic, stamp), time_range, rows)
    if std is not None:
        from dynid.identify.bands import KINDS
        if std not in KINDS:
            raise DataError(f"--std {std}: expected one of {list(KINDS)}")
    override = _segment_override(segments, max_gap)
    split = segment_column_needed(r, result, paths, mapping, override)
    from dynid.data.covariates import parse_since_cold
    notes: list[str] = []
    rows = write_stream(out, prediction_columns(r, result, paths, mapping, override, split, chunk_rows, std=std,
                                                since_cold=parse_since_cold(since_cold), notes=notes))
    for note in notes:  # why rows of a log have no prediction (NaN), or are on a uniform grid (irregular)
        console.print(f"[dim]note: {note}[/]", highlight=False)
    console.print(f"wrote [bold]{out}[/] ({rows} samples from {len(paths)} file(s))")


def _print_validation(report: dict, title: str, min_velocity: float, n: int) -> None:
    table = Table("joint", "RMSD", "relative RMSD", f"RMSD |dq|>={min_velocity:g}", "relative", title=title)
    moving = report.get("moving", {"rmsd": [None] * n, "relative_rmsd": [None] * n})
    for j in range(n):
        table.add_row(str(j + 1), _fmt(report["rmsd"][j]), _fmt(report["relative_rmsd"][j], ".3%"),
                      _fmt(moving["rmsd"][j]), _fmt(moving["relative_rmsd"][j], ".3%"))
    console.print(table)
    console.print(f"relative error ||tau - tau_hat|| / ||tau|| = {report['relative_error']:.4%}")


@friendly_errors(outputs=("json_out", "figure", "start_end_figure"))
def validate(robot: str = robot_option(),
             params: Path = typer.Option(..., "--params", "-p", help="result.json from 'dynid identify'"),
             data: list[str] = typer.Option(..., "--data", "-d", help="joint data file(s) with torques; repeatable; "
                                            "a quoted glob or a directory of Parquet files"),
             min_velocity: float = typer.Option(0.05, "--min-velocity",
                                                help="also report figures without samples slower than this (rad/s)"),
             per: str = typer.Option(None, "--per", help="cycle | stage: figures per cycle (or stage): "
                                     "self-verification with each cycle's own parameters, the result's "
                                     "per-cycle parameters on the same cycle, its model on every cycle "
                                     "(thesis Tables 5.1-5.3, F.x)"),
             skip_first: int = typer.Option(None, "--skip-first", help="--per cycle: statistics also without the "
                                            "first K cycles (thesis Table 5.3: 5 of 24; default scaled to the cycles "
                                            "present)"),
             figure: Path = typer.Option(None, "--figure", help="--per cycle: PNG of the relative RMSD per cycle "
                                         "(thesis Figs 5.4-5.7)"),
             json_out: Path = typer.Option(None, "--json", help="write the figures to this JSON file"),
             start_end_figure: Path = typer.Option(None, "--start-end-figure", help="--per cycle: PNG of the model "
                                                   "errors at the start and the end of the first cycle's warming "
                                                   "stage, own and the result's model (thesis Fig. 5.15)"),
             segments: str = SEGMENTS_OVERRIDE, max_gap: float = MAX_GAP_OVERRIDE,
             rename: str = O.RENAME, columns: str = O.COLUMNS, time_unit: str = O.TIME_UNIT,
             degrees: bool = O.DEGREES, motor_side: bool = O.MOTOR_SIDE, current_gain: str = O.CURRENT_GAIN,
             negate: str = O.NEGATE, ignore: str = O.IGNORE, topic: str = O.TOPIC, stamp: str = STAMP_OVERRIDE,
             time_range: str = O.TIME_RANGE, rows: str = O.ROWS, force: bool = O.FORCE_ROBOT, since_cold: str = O.SINCE_COLD, chunk_rows: int = O.CHUNK_ROWS) -> None:
    """RMSD and relative RMSD per joint (thesis eq. 5.1) of a model on one or more logs
    (self-validation on the training logs, cross-validation on others); with several files,
    also over all of them ('overall')."""
    from dynid.data.sources import expand_sources
    from dynid.identify.prediction import validate_sources
    from dynid.identify.result import load_result

    passive_openmp_workers()
    r = dynid.load_robot(robot)
    result = load_result(params, r, force)
    mismatch = command_warnings()
    mapping = _read_part(result, _mapping_override(result, rename, columns, time_unit, degrees, motor_side,
                                                   current_gain, negate, ignore, topic, stamp), time_range, rows)
    paths = expand_sources(data)
    if per is not None:
        from dynid.cli.cycles_cmd import validate_per
        from dynid.data.covariates import parse_since_cold
        validate_per(r, result, paths, mapping, per, min_velocity, skip_first, json_out, figure,
                     parse_since_cold(since_cold), start_end_figure)
        return
    from dynid.data.covariates import parse_since_cold
    reports = validate_sources(r, result, paths, mapping, _segment_override(segments, max_gap), min_velocity,
                               chunk_rows, since_cold=parse_since_cold(since_cold))
    for path, report in reports.items():
        title = f"all {len(paths)} files" if path == "overall" else f"{report['kind']}-validation on {path}"
        _print_validation(report, title, min_velocity, r.n)
        for note in report.get("notes", []):
            console.print(f"[dim]note: {note}[/]", soft_wrap=True)
    if json_out:
        from dynid.data.io import atomic_write_text
        if force and mismatch:
            reports["warnings"] = mismatch
        atomic_write_text(json_out, json.dumps(reports, indent=2) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")
