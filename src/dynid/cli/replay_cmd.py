"""dynid replay: an exported MuJoCo model against its identification and a log (simulate/mujoco_check.py)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

import dynid
from dynid.cli.common import console, friendly_errors, robot_option


@friendly_errors(outputs=("out", "figure", "json_out"))
def replay(robot: str = robot_option("the robot identified: builtin name, .urdf or .yaml"),
           params: Path = typer.Option(..., "--params", "-p", help="result.json of 'dynid identify --estimator pc'"),
           mjcf: Path = typer.Option(..., "--mjcf", help="the MuJoCo model 'dynid export --mjcf' wrote from it"),
           data: Path = typer.Option(..., "--data", "-d", help="a joint data log (CSV or Parquet) with torques"),
           window: float = typer.Option(1.0, "--window", help="restart the simulation from the logged state every "
                                        "this many seconds (open-loop arms drift apart within seconds)"),
           out: Path = typer.Option(None, "--out", "-o", help="CSV or Parquet: t, q_sim1..n (under the logged "
                                    "torques), tau_mujoco1..n (MuJoCo's inverse dynamics)"),
           figure: Path = typer.Option(None, "--figure", help="PNG: logged vs simulated positions, logged vs "
                                       "dynid vs MuJoCo torques"),
           json_out: Path = typer.Option(None, "--json", help="the figures printed, as JSON"),
           force: bool = typer.Option(False, "--force", help="use a result identified on another robot")) -> None:
    """Check an exported MuJoCo model: its inverse dynamics against 'dynid predict' of the same result
    along the log, and its forward simulation under the logged (and the model's) torques against the
    logged motion."""
    import numpy as np

    from dynid.data.io import write_columns
    from dynid.export import identified_model
    from dynid.identify.result import load_result
    from dynid.simulate.mujoco_check import mujoco_check

    r = dynid.load_robot(robot)
    result = load_result(params, r, force)
    check = mujoco_check(r, result, identified_model(r, result, str(params)), mjcf, data, window)
    summary = check.summary()
    agree = summary["inverse_dynamics_agreement"]
    console.print(f"MuJoCo inverse dynamics of {mjcf} vs dynid predict: largest difference "
                  f"{max(agree):.2g} of the RMS torque (per joint {', '.join(f'{a:.1g}' for a in agree)})")
    for label, key in (("logged", "tracking_logged_torques"), ("model", "tracking_model_torques")):
        track = summary[key]
        if track["rms"] is not None:
            console.print(f"MuJoCo simulation under the {label} torques, restarted every {window:g} s "
                          f"({summary['restarts']} windows): position error RMS "
                          f"{', '.join(f'{v:.3g}' for v in track['rms'])}; largest "
                          f"{', '.join(f'{v:.3g}' for v in track['max'])} [rad | m]")
    if out is not None:
        columns = {"t": check.t}
        if check.q_logged_torques is not None:
            columns.update({f"q_sim{j + 1}": check.q_logged_torques[:, j] for j in range(r.n)})
        columns.update({f"tau_mujoco{j + 1}": check.tau_mujoco[:, j] for j in range(r.n)})
        write_columns(out, {k: np.asarray(v, dtype=float) for k, v in columns.items()})
        console.print(f"wrote [bold]{out}[/]")
    if figure is not None:
        from dynid.report.mujoco_figure import replay_figure
        replay_figure(check, figure, f"{r.name}: {mjcf} replaying {data}")
        console.print(f"wrote [bold]{figure}[/]")
    if json_out is not None:
        from dynid.data.io import atomic_write_text
        atomic_write_text(json_out, json.dumps(summary, indent=2) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")
