"""dynid simulate --experiment seed-kr500 [--digits 7] [--joint-acceleration A] [--tables]:
the seeds' KR500 body data, and their printed tables beside ours (``multibody.seed_compare``)."""

from __future__ import annotations

from rich.table import Table

from dynid.cli.common import console


def _f(x, spec=".4f") -> str:
    return "-" if x is None else format(x, spec)


def run_experiment(robot, experiment: str, body_data, digits, joint_acceleration, tables: bool) -> None:
    from dynid.errors import DataError
    from dynid.multibody.experiment import write_experiment_body_data

    if digits is not None and not 1 <= digits <= 17:
        raise DataError(f"--digits: expected 1..17 significant digits, got {digits}")
    info = write_experiment_body_data(robot, experiment, body_data, digits, joint_acceleration)
    console.print(f"wrote [bold]{body_data}[/] ({experiment}: {info['samples']} samples over {info['duration']:g} s, "
                  f"joints 1-2 at {info['joint_acceleration']:g} rad/s^2, "
                  + (f"{digits} significant digits)" if digits else "full precision)"))
    if tables:
        from dynid.multibody.bodydata import read_body_data
        from dynid.multibody.seed_compare import compare

        print_comparison(compare(robot, read_body_data(body_data)))


def print_comparison(c: dict) -> None:
    """Tables 2-4 and the multipliers, ours beside the seed's printed values."""
    names = ("Table 2 (true)", "Table 3 (identified)" if c["seed"] == "000" else "Table 2 (identified)",
             "Table 4 (errors)" if c["seed"] == "000" else "Table 3 (errors)")
    for title, key in zip(names, ("true", "identified", "errors")):
        table = Table("body", *[f"{p} ours | printed" for p in c["params"]],
                      title=f"seed {c['seed']} {title}: dynid | printed ({c['robot']}, t = "
                            f"{', '.join(f'{t:g}' for t in c['times'])} s)")
        for i, (ours, printed) in enumerate(zip(c[key]["ours"], c[key]["printed"])):
            table.add_row(f"B{i + 1}", *[f"{_f(a)} | {_f(b)}" for a, b in zip(ours, printed)])
        console.print(table)
    so, sp = c["errors"]["summary_ours"], c["errors"]["summary_printed"]
    console.print(f"errors: dynid max {so['max']:.4f} rms {so['rms']:.4f} ({so['count']} values); "
                  f"printed max {sp['max']:.4f} rms {sp['rms']:.4f} ({sp['count']} values)")
    m = c["multipliers_1_5s"]
    table = Table("body", "printed lambda_i1..i5", "dynid at rest", "dynid in motion",
                  title="multipliers of eq. 111 at 1.5 s (seed 000 eqs. 113-118; dynid's lambda_k1..3 is the "
                        "force on the outside body, the seed's lambda_i3 its negative)")
    for i in range(6):
        table.add_row(f"B{i + 1}", *[", ".join(_f(v, ".6e") for v in m[k][i])
                                      for k in ("printed", "ours_at_rest", "ours_moving")])
    console.print(table)
    for note in c["consistency"]:
        console.print(f"[yellow]seed discrepancy:[/] {note}")
