"""dynid base-params ROBOT: the base parameters, their combinations and SVD diagnostics."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from dynid.cli import data_options as O
from dynid.cli.common import JOINTS, LOCK, console, friendly_errors, load_selected


@friendly_errors(outputs=("json_out",))
def base_params(robot: str = typer.Argument(..., help="builtin name (dynid robots), example:NAME, .urdf or .yaml file"),
                joints: str = JOINTS, lock: str = LOCK,
                friction: str = O.FRICTION, offset: bool = O.OFFSET, rotor_inertia: bool = O.ROTOR,
                smooth_sign: float = O.SMOOTH_SIGN,
                tol: float = typer.Option(None, "--tol", help="relative QR pivot tolerance (default 1e-8)"),
                seed: int = typer.Option(0, "--seed", help="seed of the random states"),
                table: bool = typer.Option(False, "--table", help="print which parameter enters which joint"),
                json_out: Path = typer.Option(None, "--json", help="write names, combinations and K to JSON")) -> None:
    """Print the base parameters of ROBOT (numerical QR on random states, thesis 3.2)."""
    from dynid.data.io import atomic_write_text
    from dynid.identify.base import base_parameters, identifiability_table

    r = load_selected(robot, joints, lock)
    options = O.model_from(friction, rotor_inertia, offset, smooth_sign)
    base = base_parameters(r, options, seed=seed, tol=tol)
    out = Table("#", "base parameter", title=f"{r.name}: {base.rank} base parameters of {len(base.standard_names)}")
    for k, combo in enumerate(base.combinations):
        out.add_row(str(k + 1), combo)
    console.print(out)
    s = base.singular_values
    console.print(f"singular values of the normalized random-state regressor: largest {s[0]:.4g}, "
                  f"smallest kept {s[base.rank - 1]:.4g}, first dropped "
                  f"{s[base.rank] if base.rank < s.size else 0.0:.3g}")
    console.print(f"condition number of the normalized base regressor (random states): {base.condition_number:.4g}")
    if r.is_coupled:  # model eq. C1: a coupled motor's terms act on every joint its row of T touches
        from dynid.identify.model import motor_labels

        for k, label in enumerate(motor_labels(r)):
            if label.startswith("m"):
                touched = ", ".join(r.joint_names[j] for j in r.transmission_matrix[k].nonzero()[0])
                console.print(f"motor {k + 1} is coupled (q_m{k + 1} = T[{k + 1}] . q): its terms *{label} act on {touched}")
    if table:
        ident = identifiability_table(r, options, seed)
        t = Table("parameter", *[f"j{j + 1}" for j in range(r.n)], title="parameter enters joint torque")
        for k, name in enumerate(base.standard_names):
            t.add_row(name, *["x" if ident[j, k] else "." for j in range(r.n)])
        console.print(t)
    if json_out:
        d = base.to_dict()
        d.update({"robot": robot, "singular_values": s.tolist(), "condition_number": base.condition_number,
                  "model": options.to_dict()})
        atomic_write_text(json_out, json.dumps(d, indent=2) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")

