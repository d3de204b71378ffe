"""Identification on groups of cycles compared with the per-cycle identification (thesis 5.1.5.2).

The thesis identifies its model on three groups of cycles ("units": late, spread, early; see
``cycle_groups.THESIS_UNITS``) and reads each unit's value against the per-cycle curve: the
late unit lands near the last cycles, the early one near the first, the spread one between
(Figs 5.13-5.14). Here each group's base parameters (OLS over the group's samples) are put
beside the mean of the per-cycle values over all cycles, over the first k and over the rest,
and the distance to each block is measured in per-cycle standard deviations,

    d_block = sqrt( (1/b) sum_p ((beta_group,p - mean_block,p) / std_all,p)^2 ),

so ``closest`` says which block a group resembles. One regressor pass: each cycle's normal
equations are formed once; a cycle's fit solves its own, a group's fit the sum of its cycles'
(the same least-squares problem as stacking the group's rows).
"""

from __future__ import annotations

import numpy as np

from dynid.data.columns import JointData
from dynid.data.preprocess import Preprocessing, prepare, segments
from dynid.errors import DataError
from dynid.files.outputs import json_floats
from dynid.identify.base import base_parameters
from dynid.identify.cycle_groups import parse_cycles
from dynid.identify.cycle_stats import default_skip_first, statistics_to_json, thesis_statistics
from dynid.identify.model import ModelOptions, own_columns
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.pipeline import make_estimator, regressor_arrays


def group_study(robot, data: JointData, specs: list[tuple[str, str]], options: ModelOptions = ModelOptions(),
                skip_first: int | None = None, prep: Preprocessing = Preprocessing()) -> dict:
    """Per-cycle OLS and OLS on each (name, selection) group of cycles; JSON-ready comparison.
    skip_first: the first cycles' block (None: ``cycle_stats.default_skip_first``)."""
    if data.cycle is None:
        raise DataError(f"{data.source}: no 'cycle' column; groups of cycles need the cycle of every sample")
    base = base_parameters(robot, options)
    ready = prepare(data, prep, joint_columns=own_columns(robot, options))

    def make():
        return make_estimator("ols", robot, options, base)

    equations, failed = {}, {}
    for label, idx in segments(ready, "cycle"):  # one regressor pass, cycle by cycle
        y, tau, mask = regressor_arrays(robot, ready.select(idx), options, base, prep)
        ne = NormalEquations(robot.n, base.rank)
        ne.add(y, tau, mask)
        equations[label] = ne

    def fit(labels):
        total = NormalEquations(robot.n, base.rank)
        for label in labels:
            total.merge(equations[label])
        return make().fit_normal_equations(total)

    labels, rows = [], []
    for label in equations:
        try:
            rows.append(fit([label]).coef_)
            labels.append(label)
        except (DataError, np.linalg.LinAlgError) as exc:  # a short or static cycle: reported, not fatal
            failed[label] = str(exc)
    if not rows:
        raise DataError(f"{data.source}: no cycle could be identified: {failed}")
    values = np.array(rows)
    skip_first = default_skip_first(len(values)) if skip_first is None else skip_first
    std_cycles = values.std(axis=0, ddof=1) if len(values) > 1 else np.zeros(values.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = 100.0 * std_cycles / np.abs(values.mean(axis=0))
    per = {"labels": labels, "values": values, "std": std_cycles, "relative_spread": spread, "failed": failed}
    if values.shape[0] <= skip_first:
        raise DataError(f"{data.source}: {values.shape[0]} cycles identified; need more than --skip-first "
                        f"{skip_first} to compare first and later cycles")
    blocks = {"all": values.mean(0), "first": values[:skip_first].mean(0), "rest": values[skip_first:].mean(0)}
    scale = np.where(per["std"] > 0, per["std"], np.inf)
    groups = {}
    column = np.asarray(ready.cycle).astype(np.int64)
    for name, selection in specs:
        cycles = parse_cycles(selection, column)
        est = fit([label for label in equations if int(float(label)) in cycles])
        distance = {k: float(np.sqrt(np.mean(((est.coef_ - m) / scale) ** 2))) for k, m in blocks.items()}
        groups[name] = {"selection": selection, "cycles": cycles, "values": json_floats(est.coef_),
                        "std": json_floats(est.std_), "distance": distance,
                        "closest": min(("first", "rest"), key=lambda k: distance[k])}
    return {"names": list(base.names), "skip_first": skip_first,
            "per_cycle": {"labels": per["labels"], "values": values.tolist(), "std": json_floats(per["std"]),
                          "relative_spread": json_floats(per["relative_spread"]), "failed": per["failed"],
                          "statistics": statistics_to_json(thesis_statistics(values, per["labels"], skip_first),
                                                           list(base.names))},
            "per_cycle_mean": {k: json_floats(v) for k, v in blocks.items()}, "groups": groups}


def figure_parameters(study: dict, count: int = 6) -> list[int]:
    """Indices of the parameters worth plotting against the groups: the largest cross-cycle
    spread among those whose mean magnitude is at least the median (tiny parameters are noise)."""
    values = np.abs(np.array(study["per_cycle"]["values"], dtype=float)).mean(axis=0)
    spread = np.nan_to_num(np.array(study["per_cycle"]["relative_spread"], dtype=float))
    big = values >= np.median(values)
    order = np.argsort(-np.where(big, spread, -np.inf))
    return [int(k) for k in order[:count] if big[k]]
