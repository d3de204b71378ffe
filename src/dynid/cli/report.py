"""dynid report: one self-contained HTML file from the files the other commands write."""

from __future__ import annotations

from pathlib import Path

import typer

from dynid.cli.common import console, friendly_errors

_FROM = typer.Option(None, "--from", help="directory with the files 'dynid demo' writes (result_ols.json, "
                                            "result_pc.json, excitation.json, train.csv, validation.csv, "
                                            "friction.json, multibody.json)")


@friendly_errors(outputs=("out",))
def report(source: Path = _FROM,
           out: Path = typer.Option(None, "--out", "-o", help="HTML file to write (default: DIR/report.html with "
                                                               "--from, else report.html)"),
           robot: str = typer.Option(None, "--robot", "-r", help="builtin name, .urdf or .yaml (default: the robot "
                                                                 "named in the result)"),
           result: Path = typer.Option(None, "--result", help="result.json of 'dynid identify' (any estimator)"),
           pc_result: Path = typer.Option(None, "--pc-result", help="result.json of 'dynid identify --estimator pc'"),
           drift_result: Path = typer.Option(None, "--drift-result", help="result.json of 'dynid identify "
                                             "--friction-drift' (shown beside the others)"),
           trajectory: Path = typer.Option(None, "--trajectory", help="excitation trajectory JSON "
                                                                       "('dynid excite optimize')"),
           data: Path = typer.Option(None, "--data", help="training joint data log (CSV/Parquet; t in s, q in rad, "
                                                           "tau in N m)"),
           validation: Path = typer.Option(None, "--validation", help="separate joint data log for cross-validation"),
           friction: Path = typer.Option(None, "--friction", help="friction drift analysis JSON"),
           multibody: Path = typer.Option(None, "--multibody", help="'dynid multibody identify' JSON"),
           diagnosis: Path = typer.Option(None, "--diagnosis", help="'dynid diagnose --json' findings"),
           payload: Path = typer.Option(None, "--payload", help="'dynid payload identify' JSON"),
           title: str = typer.Option(None, "--title", help="page title"),
           force: bool = typer.Option(False, "--force", help="report even if a result was identified on another "
                                      "robot than --robot (said in the report)")) -> None:
    """Write an HTML report (inline figures and styles, viewable offline): torques and residuals,
    parameters with standard deviations, identifiability, excitation, evolution across cycles,
    friction curves and drift, and the multibody per-body table. Sections without input show a note."""
    from dynid.files.outputs import refuse_if_input
    from dynid.errors import DataError
    from dynid.report import ReportInputs, build_report, write_report

    explicit = {"result": result, "pc_result": pc_result, "drift_result": drift_result, "trajectory": trajectory,
                "data": data,
                "validation": validation, "friction": friction, "multibody": multibody, "diagnosis": diagnosis,
                "payload": payload}
    if source is None and all(v is None for v in explicit.values()):
        raise DataError("no input: give --from DIR (a 'dynid demo' output) or files such as --result result.json")
    inputs = ReportInputs.gather(source, robot, **explicit)
    target = out or ((source / "report.html") if source is not None else Path("report.html"))
    refuse_if_input(target)  # the files found in --from DIR are inputs too
    text = build_report(inputs, title, progress=lambda name: console.print(f"[dim]section {name}[/]"), force=force)
    write_report(target, text)
    omitted = [s for s in ("pc_result", "trajectory", "validation", "friction", "multibody") if s in inputs.missing]
    console.print(f"wrote [bold]{target}[/] ({len(text) / 1e6:.1f} MB)"
                  + (f"; without {', '.join(omitted)} (noted in the report)" if omitted else ""))
