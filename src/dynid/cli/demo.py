"""dynid demo: the whole identification workflow on a builtin robot, with progress bars."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dynid.cli.common import console, friendly_errors


@friendly_errors(outputs=("out",), directories=("out",), command="demo")
def demo(robot: str = typer.Option("er3a", "--robot", "-r", help="builtin robot to run on (dynid robots)"),
         out: Path = typer.Option(Path("dynid-demo"), "--out", "-o",
                                  help="output directory, replaced as a whole when the run completes (only if "
                                       "missing, empty or an earlier demo output)"),
         seed: int = typer.Option(0, "--seed", help="seed of every random choice (optimizer, noise, validation)"),
         cycles: int = typer.Option(6, "--cycles", help="test cycles of the protocol (24 in the thesis)"),
         warming: float = typer.Option(20.0, "--warming", help="warming stage per cycle [s] (180 in the thesis)"),
         generations: int = typer.Option(10, "--generations", help="differential-evolution generations of the "
                                                                   "excitation search (fixed budget)"),
         noise: float = typer.Option(0.02, "--noise", help="torque noise std as a share of each joint's RMS torque"),
         force: bool = typer.Option(False, "--force", help="replace --out even if it is a directory the demo did "
                                                           "not write (everything in it is deleted)")
         ) -> None:
    """Run the whole workflow on a builtin robot: optimize an excitation, simulate the thesis
    protocol (cycles with friction drifting from cold to warm, sensor noise), identify (OLS, per
    cycle, physically consistent), validate on a separate trajectory, analyze friction drift,
    identify the KR500 bodies of the seed papers, export URDF/JSON, and write an HTML report."""
    from dynid.demo import STEPS, DemoSettings, abort, finish, start
    from dynid.errors import DataError

    if cycles < 2 or generations < 0 or not warming > 0 or not noise >= 0:
        raise DataError("--cycles must be >= 2, --generations >= 0, --warming > 0 s and --noise >= 0")
    settings = DemoSettings(robot=robot, seed=seed, cycles=cycles, warming=warming, generations=generations,
                            noise=noise)
    wall = time.perf_counter()
    ws = start(settings, out)
    ws.force = force
    console.print(f"[bold]dynid demo[/] on [cyan]{ws.robot.name}[/] (n = {ws.robot.n}): {ws.robot.description}")
    for note in ws.state["limits"].notes:
        console.print(f"note: {escape(note)}")
    try:
        with Progress(TextColumn("{task.description:<36}"), BarColumn(), TextColumn("{task.percentage:>3.0f} %"),
                      TimeElapsedColumn(), console=console) as bars:
            tasks = {name: bars.add_task(text, total=1.0, start=False) for name, text, _ in STEPS}
            for name, _, step in STEPS:
                bars.start_task(tasks[name])
                step(ws, lambda fraction, task=tasks[name]: bars.update(task, completed=min(float(fraction), 1.0)))
                bars.update(tasks[name], completed=1.0)
                bars.stop_task(tasks[name])
    except BaseException:
        abort(ws)
        raise
    target = finish(ws)
    _print_figures(ws.figures, time.perf_counter() - wall, ws.headline)
    if ws.trust:
        console.print(f"[bold]{escape(ws.trust)}[/]")
    for note in ws.notes:
        console.print(f"note: {escape(note)}")
    console.print(f"report: [bold]{(target / 'report.html').resolve()}[/]  (all files in {target}/)")


def _print_figures(figures: dict, seconds: float, headline: dict | None = None) -> None:
    """The headline figures first (bold), then the others in the order the steps wrote them."""
    table = Table("key figure", "value", title="dynid demo: key figures")
    for key, value in (headline or {}).items():
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        table.add_row(f"[bold]{escape(key)}[/]", f"[bold]{text}[/]", end_section=key == list(headline)[-1])
    for key, value in figures.items():
        if key in (headline or {}):
            continue
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        table.add_row(escape(key), text)
    table.add_row(escape("wall time [s]"), f"{seconds:.1f}")
    console.print(table)
