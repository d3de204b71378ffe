"""dynid demo: the end-to-end workflow on a builtin robot (grows as the product grows)."""

from __future__ import annotations

import time

import numpy as np
import typer
from rich.table import Table

import dynid
from dynid.cli.common import console, friendly_errors


@friendly_errors
def demo(robot: str = typer.Option("er3a", "--robot", "-r", help="builtin robot to run on"),
         samples: int = typer.Option(20000, help="samples of the random-state check"),
         seed: int = typer.Option(0, help="random seed")) -> None:
    """Run the workflow that exists so far on a builtin robot and print the key figures."""
    r = dynid.load_robot(robot)
    rng = np.random.default_rng(seed)
    console.print(f"[bold]dynid demo[/] on [cyan]{r.name}[/] (n = {r.n}): {r.description}")
    lo = np.where(np.isfinite(r.limit_array("q_min")), r.limit_array("q_min"), -np.pi)
    hi = np.where(np.isfinite(r.limit_array("q_max")), r.limit_array("q_max"), np.pi)
    q = rng.uniform(lo, hi, (samples, r.n))
    dq, ddq = rng.normal(size=(2, samples, r.n))
    t0 = time.perf_counter()
    tau = dynid.inverse_dynamics(r, q, dq, ddq)
    t1 = time.perf_counter()
    y = dynid.regressor(r, q, dq, ddq)
    t2 = time.perf_counter()
    m = dynid.mass_matrix(r, q)
    err = float(np.max(np.abs(y @ r.parameters() - tau)) / np.max(np.abs(tau)))
    eig = np.linalg.eigvalsh(m)
    table = Table("check", "value")
    table.add_row("samples", f"{samples}")
    table.add_row("inverse dynamics (RNEA)", f"{(t1 - t0) / samples * 1e6:.2f} us/sample")
    table.add_row("regressor Y (N, n, 10n)", f"{(t2 - t1) / samples * 1e6:.2f} us/sample (incl. compile on first run)")
    table.add_row("max |Y theta - tau| / max |tau|", f"{err:.2e}")
    table.add_row("min eigenvalue of M(q)", f"{eig.min():.4g} (positive definite: {bool(eig.min() > 0)})")
    console.print(table)
