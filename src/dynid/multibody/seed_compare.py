"""Our run of the seed-kr500 experiment beside the seeds' printed tables (``seed_tables``).

``compare(robot, data)``: identify every body from the body data at the seeds' five instants
(0.3 .. 1.5 s) by ordinary least squares (seed 000 eq. 56 / seed 001 eq. 27), and set beside
the printed values: the true values (Table 2), the identified ones (seed 000 Table 3 for
``kr500-rail``, seed 001 Table 2 for ``kr500``), their errors (Table 4 / Table 3) and the
multipliers of eq. 111 at 1.5 s, ours at rest (the printed ones are those of the robot at
rest: ``seed_tables``) and ours in motion.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError
from dynid.multibody import seed_tables as S

SEED_TIMES = (0.3, 0.6, 0.9, 1.2, 1.5)


def _seed_of(robot) -> str:
    if robot.name == "kr500-rail":
        return "000"
    if robot.name == "kr500":
        return "001"
    raise DataError(f"the seeds' tables describe the builtin kr500 / kr500-rail, not '{robot.name}'")


def _table(results) -> np.ndarray:
    """(6, 6) identified values of the seeds' bodies B1..B6 (the rail carriage left out)."""
    rows = [list(r.mass) + list(r.moments) for r in results if r.name != "carriage"]
    return np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)


def compare(robot, data, form_name: str = "quaternion") -> dict:
    """Side-by-side tables (module docstring) as JSON-ready lists (NaN -> None)."""
    from dynid.multibody.coordinates import angular_form
    from dynid.multibody.identification import identify, true_values
    from dynid.multibody.multipliers import multipliers_at

    seed = _seed_of(robot)
    idx = [int(np.argmin(np.abs(data.t - t))) for t in SEED_TIMES]
    form = angular_form(form_name)
    ours = _table(identify(robot, data.select(idx), form))
    truth = [tv for tv in true_values(robot) if tv["name"] != "carriage"]
    true = np.array([[tv["mass"]] * 3 + tv["moments"] for tv in truth])
    printed, printed_err = S.seed_identified(seed)
    body = [i for i, tv in enumerate(true_values(robot)) if tv["name"] != "carriage"]
    rest = multipliers_at(robot, data, form, 1.5, static=True)
    moving = multipliers_at(robot, data, form, 1.5)

    def lists(a):
        return np.where(np.isfinite(a), np.round(a, 10), None).tolist()

    return {"seed": seed, "robot": robot.name, "times": [float(data.t[i]) for i in idx],
            "params": list(S.PARAMS),
            "true": {"ours": lists(true), "printed": lists(S.true_table())},
            "identified": {"ours": lists(ours), "printed": lists(printed)},
            "errors": {"ours": lists(ours - true), "printed": lists(printed_err),
                       "summary_ours": S.error_summary(ours - true), "summary_printed": S.error_summary(printed_err)},
            "multipliers_1_5s": {"printed": lists(S.MULTIPLIERS_1_5S),
                                 "ours_at_rest": lists(rest.lam[body]), "ours_moving": lists(moving.lam[body]),
                                 "static_outboard_weights": S.static_outboard_weights().tolist()},
            "consistency": S.consistency()}
