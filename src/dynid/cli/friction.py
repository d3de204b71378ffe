"""dynid friction analyze | identify | compare: friction measurement and its drift (thesis 5.2, 6.2)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from dynid.cli.common import console, friendly_errors, robot_option
from dynid.cli.option_checks import number_list
from dynid.errors import DataError

friction_app = typer.Typer(help="Friction measurement (thesis 5.2) and friction drift from cold to warm.",
                           no_args_is_help=True)


def _load(robot, data: Path, lowpass: float | None):
    """Joint data with dq, ddq: as written when the file has them (and no --lowpass), else prepared."""
    from dynid.data.io import load_joint_data
    from dynid.data.preprocess import Preprocessing, prepare

    d = load_joint_data(data, robot)
    if d.dq is None or d.ddq is None or lowpass is not None:
        d = prepare(d, Preprocessing(lowpass_hz=lowpass))
    return d


def _cycles(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError as exc:
        raise DataError(f"--validate-cycles: expected comma-separated cycle numbers, got '{text}'") from exc


@friction_app.command("analyze")
@friendly_errors(outputs=("out",))
def analyze(robot: str = robot_option(),
            data: Path = typer.Option(..., "--data", "-d", help="joint data file with t, q, tau, stage (cycle optional)"),
            out: Path = typer.Option(..., "--out", "-o", help="friction analysis JSON to write"),
            plot_dir: Path = typer.Option(None, "--plot-dir", help="write friction_velocity.png, friction_drift.png here"),
            gravity: str = typer.Option("auto", "--gravity",
                                        help="auto (remove for non-vertical axes, eq. 5.3) | all | none"),
            lowpass: float = typer.Option(None, "--lowpass", help="low-pass cutoff [Hz] before differentiation "
                                                                   "(used when dq/ddq are missing; default min(20, fs/10))"),
            seed: int = typer.Option(0, "--seed", help="seed of the eq. 5.4 multi-start")) -> None:
    """Friction per joint, speed level, direction and cycle; gravity removal; eq. 5.4 drift fits."""
    import numpy as np

    import dynid
    from dynid.friction import analyze as run

    from dynid.friction.io import read_temperatures

    r = dynid.load_robot(robot)
    d = _load(r, data, lowpass)
    temp = read_temperatures(data, r.n, d.t, required=False)
    result = run(r, d, gravity=gravity, seed=seed, temp=temp)
    result.to_json(out)
    table = Table("joint", "levels", "gravity", "cycles", "first → last cycle, top level [N m]", "t1 [s]", "t2 [s]",
                  title=f"friction of {r.name} ({data.name})")
    for j in range(r.n):
        levels = len(result.levels[j])
        f = result.friction
        cycles = np.unique(f["cycle"][f["joint"] == j])
        change, t1, t2 = "-", "-", "-"
        if levels and cycles.size:
            t, y = result.drift_points(j, levels - 1)
            if y.size:
                change = f"{y[0]:.3g} → {y[-1]:.3g}"
            fit = result.drift.get((j, levels - 1))
            if fit is not None:
                t1 = f"{fit['t1']:.4g} ± {1.96 * fit.std[2]:.2g}"
                t2 = f"{fit['t2']:.4g} ± {1.96 * fit.std[4]:.2g}"
        table.add_row(str(j + 1), str(levels), "removed" if j in result.gravity else "-", str(cycles.size),
                      change, t1, t2)
    console.print(table)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}")
    if plot_dir is not None:
        from dynid.friction.io import plot_analysis
        for path in plot_analysis(result, plot_dir):
            console.print(f"wrote {path}")
    console.print(f"wrote [bold]{out}[/]")


@friction_app.command("identify")
@friendly_errors(outputs=("out",))
def identify(robot: str = robot_option(),
             data: Path = typer.Option(..., "--data", "-d", help="multi-cycle joint data file (t, q, tau, cycle)"),
             out: Path = typer.Option(..., "--out", "-o", help="drift-aware model JSON to write"),
             drift: str = typer.Option("time", "--drift", help="time (eq. 5.4 bases) | temperature (temp1..tempn) | none"),
             time_constants: str = typer.Option(None, "--time-constants",
                                                help="T1,T2 [s]; default: searched (common to all joints)"),
             validate_cycles: str = typer.Option(None, "--validate-cycles",
                                                 help="e.g. 2,4,6: train on the other cycles, report RMSD of the "
                                                      "static and the drift-aware model on these"),
             friction: str = typer.Option("coulomb-viscous", "--friction", help="coulomb-viscous | polynomial | asymmetric"),
             rotor_inertia: bool = typer.Option(True, "--rotor-inertia/--no-rotor-inertia", help="rotor inertia I_a ddq per joint"),
             lowpass: float = typer.Option(None, "--lowpass", help="low-pass cutoff [Hz] (when dq/ddq are missing)"),
             seed: int = typer.Option(0, "--seed", help="seed of every random choice of the fit")) -> None:
    """Identify rigid body + friction whose coefficients drift with operating time or temperature."""
    import numpy as np

    import dynid
    from dynid.data.io import atomic_write_text
    from dynid.friction.drift_model import DriftModel, cross_validate
    from dynid.friction.io import read_temperatures
    from dynid.identify.model import ModelOptions

    r = dynid.load_robot(robot)
    d = _load(r, data, lowpass)
    temp = read_temperatures(data, r.n, d.t) if drift == "temperature" else None
    tc = None
    if time_constants is not None:
        tc = number_list(time_constants, "--time-constants", (2,), "time constants T1,T2 [s]")
        if min(tc) <= 0:
            raise DataError(f"--time-constants: expected two positive numbers T1,T2 [s], got '{time_constants}'")
    options = ModelOptions(friction=friction, rotor_inertia=rotor_inertia)
    report = {"robot": r.name, "n": r.n, "data": str(data)}
    cycles = _cycles(validate_cycles)
    if cycles is not None:
        cv = cross_validate(r, d, cycles, options, drift, temp, tc, seed)
        model = cv.pop("model")
        report["cross_validation"] = cv | ({"time_constants": model.time_constants_.tolist()} if drift == "time" else {})
        table = Table("joint", "RMSD static [N m]", f"RMSD drift ({drift}) [N m]", "ratio",
                      title=f"validation on cycles {cv['valid_cycles']} (trained on {cv['train_cycles']})")
        for j in range(r.n):
            table.add_row(str(j + 1), f"{cv['rmsd_static'][j]:.4g}", f"{cv['rmsd_drift'][j]:.4g}", f"{cv['ratio'][j]:.3f}")
        console.print(table)
    model = DriftModel(r, options, drift, tc, seed=seed).fit(d, temp=temp)
    residual = d.tau - model.predict(d, temp=temp)
    report["model"] = model.to_dict()
    report["fit"] = {"rmsd": np.sqrt(np.mean(residual**2, axis=0)).tolist()}
    atomic_write_text(out, json.dumps(report, indent=1))
    if drift == "time":
        console.print("time constants (s): " + ", ".join(f"{v:.4g}" for v in model.time_constants_[0]))
    console.print(f"wrote [bold]{out}[/]")


@friction_app.command("compare")
@friendly_errors(outputs=("out",))
def compare(first: list[Path] = typer.Option(..., "--first", help="friction analysis JSON of robot 1 (repeat per test)"),
            second: list[Path] = typer.Option(..., "--second", help="friction analysis JSON of robot 2 (repeat per test)"),
            out: Path = typer.Option(..., "--out", "-o", help="comparison JSON to write"),
            seed: int = typer.Option(0, "--seed", help="seed of the eq. 5.4 multi-start")) -> None:
    """Mix fits (eq. 5.4 over several tests) of two robots of one model, and their contrast."""
    from dynid.data.io import atomic_write_text
    from dynid.friction.compare import compare_robots

    from dynid.friction.io import read_friction_analysis

    result = compare_robots([read_friction_analysis(p) for p in first], [read_friction_analysis(p) for p in second],
                            seed)
    atomic_write_text(out, json.dumps(result, indent=1))
    table = Table("joint", "level", "speed", "warm a: 1 | 2 [N m]", "cold a+b+c: 1 | 2 (95 %) [N m]", "z (cold)",
                  title=f"robot 1 ({len(first)} tests) vs robot 2 ({len(second)} tests), eq. 5.4 mix fits")
    for row in result["levels"]:
        c = row["contrast"]
        table.add_row(str(row["joint"]), str(row["level"]), f"{row['speed']:.3g}",
                      f"{c['a']['first']:.3g} | {c['a']['second']:.3g}",
                      f"{c['cold']['first']:.3g} | {c['cold']['second']:.3g}"
                      f" (± {_half_width(row['first']['cold']['std'])} | {_half_width(row['second']['cold']['std'])})",
                      f"{c['cold']['z']:.1f}" + (" *" if c["cold"]["significant"] else ""))
    console.print(table)
    for note in result["notes"]:
        console.print(f"note: {note}", markup=False)
    console.print(f"wrote [bold]{out}[/]")


def _half_width(std: float | None) -> str:
    """95 % half-width of a value whose std may be undetermined (null in the JSON: singular fit)."""
    return "undetermined" if std is None else f"{1.96 * std:.2g}"
