"""dynid base-params ROBOT: the base parameters, their combinations and SVD diagnostics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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
                table: bool = typer.Option(False, "--table", help="print which parameter enters which joint, the "
                                           "QR diagonal of each joint's rows (thesis Table D.1) and a link's SVD "
                                           "(Table D.2)"),
                svd_link: int = typer.Option(2, "--svd-link", help="--table: the link of Table D.2 (its joint's rows)"),
                json_out: Path = typer.Option(None, "--json", help="write names, combinations and K to JSON")) -> None:
    """Print the base parameters of ROBOT (numerical QR on random states, thesis 3.2)."""
    from dynid.data.io import atomic_write_text
    from dynid.identify.base import base_parameters, identifiability_table

    r = load_selected(robot, joints, lock)
    options = O.model_from(friction, rotor_inertia, offset, smooth_sign, command="base-params")
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
        tables = _appendix_d(r, options, seed, min(svd_link, r.n))
    if json_out:
        d = base.to_dict()
        d.update({"robot": robot, "singular_values": s.tolist(), "condition_number": base.condition_number,
                  "model": options.to_dict()})
        if table:
            d.update(tables)
        atomic_write_text(json_out, json.dumps(d, indent=2) + "\n")
        console.print(f"wrote [bold]{json_out}[/]")



def _appendix_d(r, options, seed: int, link: int) -> dict:
    """Print thesis Tables D.1 (QR diagonal of each joint's unit-column rows) and D.2 (SVD of a
    link's parameters in its joint's rows, with friction and rotor inertia): identify.decomposition."""
    from dynid.identify.decomposition import ZERO, link_svd, qr_diagonal

    d1 = qr_diagonal(r, options, seed)
    t = Table("#", "parameter", *[f"joint {j + 1}" for j in range(r.n)],
              title=f"thesis Table D.1: r_ii of the QR of each joint's rows (unit columns); 0: |r_ii| <= {ZERO:g}")
    for k, name in enumerate(d1["names"]):
        t.add_row(str(k + 1), name, *["0" if z else f"{v:.4f}" for v, z in zip(d1["r"][k], d1["zero"][k])])
    console.print(t)
    d2 = link_svd(r, link, options, seed)
    t = Table("", *[str(i + 1) for i in range(len(d2["names"]))],
              title=f"thesis Table D.2: SVD of link {link} in joint {link}'s rows (unit columns): singular values S "
                    f"and the columns of V, cond(S) = {d2['condition_number']:.4g}")
    t.add_row("S", *[f"{v:.4g}" for v in d2["s"]])
    for i, name in enumerate(d2["names"]):
        t.add_row(f"V {name}", *[f"{v:.4f}" for v in d2["V"][i]])
    console.print(t)
    last = d2["V"][:, -1]
    if d2["s"][-1] <= 1e-10 * d2["s"][0]:
        pair = [d2["names"][i] for i in np.argsort(-np.abs(last))[:2]]
        console.print(f"smallest singular value {d2['s'][-1]:.3g}: its column of V is {last[np.abs(last).argmax()]:+.4f} "
                      f"on {pair[0]} and {last[np.argsort(-np.abs(last))[1]]:+.4f} on {pair[1]}: they act alike in joint "
                      f"{link}'s torque, one of them is not identifiable alone")
    return {"table_d1": {"names": d1["names"], "r": d1["r"].tolist(), "zero": d1["zero"].tolist()},
            "table_d2": {"link": link, "names": d2["names"], "s": d2["s"].tolist(), "V": d2["V"].tolist(),
                         "condition_number": d2["condition_number"]}}
