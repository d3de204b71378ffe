"""dynid friction drift: eq. 5.4 per joint from every sample of a log, in the layout of the
thesis' Table 5.6 (``friction.drift_joint``)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from dynid.cli.common import console, friendly_errors, robot_option


def _v(x, spec=".4g") -> str:
    return "-" if x is None else format(x, spec)


@friendly_errors(outputs=("json_out",))
def friction_drift(robot: str = robot_option(),
                   data: Path = typer.Option(..., "--data", "-d", help="joint data log from a cold start (t, q, tau)"),
                   friction: str = typer.Option("polynomial", "--friction",
                                                help="polynomial (thesis eq. 3.10) | coulomb-viscous | asymmetric"),
                   share: float = typer.Option(0.6, "--share", help="speed level of the table, share of dq_max "
                                               "(Table 5.6: 0.6)"),
                   max_rows: int = typer.Option(8000, "--max-rows", help="samples used: half over the whole log, "
                                                "half over its first 10 minutes"),
                   lowpass: float = typer.Option(None, "--lowpass", help="low-pass cutoff [Hz] (when dq/ddq are missing)"),
                   rotor_inertia: bool = typer.Option(True, "--rotor-inertia/--no-rotor-inertia",
                                                      help="rotor inertia I_a ddq per joint"),
                   thesis: bool = typer.Option(False, "--thesis", help="print the thesis' Table 5.6 beside (er3a)"),
                   json_out: Path = typer.Option(None, "--json", help="write the table and the fits to this JSON")
                   ) -> None:
    """Friction drift of eq. 5.4 per joint, fitted to every sample (rigid body projected out, time
    constants per joint): a, b, t1, c, t2 at a speed level as in the thesis' Table 5.6. Fast
    time constants (below a cycle) are resolved from the first minutes of the log."""
    import json

    import dynid
    from dynid.cli.friction import _load
    from dynid.data.io import atomic_write_text
    from dynid.errors import DataError
    from dynid.friction.drift_joint import table
    from dynid.identify.drift_constants import fit_log
    from dynid.identify.model import ModelOptions

    if not 0 < share <= 1.5:
        raise DataError(f"--share: expected a share of dq_max in (0, 1.5], got {share}")
    if max_rows < 200:
        raise DataError(f"--max-rows: expected at least 200, got {max_rows}")
    r = dynid.load_robot(robot)
    d = _load(r, data, lowpass)
    options = ModelOptions(friction=friction, rotor_inertia=rotor_inertia)
    fits = fit_log(r, d, options, max_rows)
    result = table(fits, r, options, share)
    printed = None
    if thesis:
        from dynid.simulate.thesis_friction import TABLE_5_6, applies_to
        if not applies_to(r):
            raise DataError(f"--thesis: Table 5.6 is the er3a's, not '{r.name}'s")
        printed = TABLE_5_6
    cols = ["joint", "a (N m)", "b (N m)", "t1 (min)", "c (N m)", "t2 (min)"] + (["Table 5.6 a, b, t1, c, t2"] if thesis else [])
    out = Table(*cols, title=f"eq. 5.4 at {100 * share:g} % of dq_max, fitted to every sample of {data} (+- 1 std)")
    for k, row in enumerate(result["joints"]):
        cells = [f"{_v(row[p])} +- {_v(row['std'][p], '.2g')}" if row[p] is not None else "not determined"
                 for p in ("a", "b", "t1", "c", "t2")]
        if printed is not None:
            cells.append(", ".join(f"{v:.4g}" for v in printed[k]))
        out.add_row(str(row["joint"]), *cells)
    console.print(out)
    for row in result["joints"]:
        for note in row["notes"]:
            console.print(f"[yellow]note:[/] {note}")
    if json_out:
        atomic_write_text(json_out, json.dumps({"robot": r.name, "data": str(data), "friction": friction,
                                                **result}, indent=1) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")
