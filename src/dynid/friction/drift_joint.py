"""Eq. 5.4 per joint from every sample of a log, in the layout of the thesis' Table 5.6.

The fit itself (rigid body projected out, per-joint time constants by variable projection,
fast constants resolved from the first minutes) is ``identify.drift_constants``, which the
drift-aware identification (``identify.drift``) shares; ``table`` evaluates each joint's fit
at one speed level: a + b e^(-t/t1) + c e^(-t/t2) with a = F(v) f, b = F(v) d1, c = F(v) d2.
"""

from __future__ import annotations

from dynid.identify.drift_constants import JointDrift
from dynid.identify.model import ModelOptions


def table(fits: list[JointDrift], robot, options: ModelOptions, share: float = 0.6) -> dict:
    """The thesis' Table 5.6 layout at ``share`` x dq_max: per joint a, b, t1 [min], c, t2 [min]
    (std alongside; None where a time constant is undetermined)."""
    dq_max = robot.limit_array("dq_max")
    rows = []
    for fit in fits:
        lv = fit.level(share * dq_max[fit.joint], options)
        row = {"joint": fit.joint + 1, "a": lv["a"], "b": lv["b"], "c": lv["c"],
               "t1": lv["t1"] / 60.0 if fit.determined["t1"] else None,
               "t2": lv["t2"] / 60.0 if fit.determined["t2"] else None,
               "std": {"a": lv["std"]["a"], "b": lv["std"]["b"], "c": lv["std"]["c"],
                       "t1": lv["std"]["t1"] / 60.0, "t2": lv["std"]["t2"] / 60.0},
               "rmse": fit.rmse, "rows": fit.rows, "notes": fit.notes}
        rows.append(row)
    return {"share": share, "units": "a, b, c [N m]; t1, t2 [min]", "model": "a + b exp(-t/t1) + c exp(-t/t2) "
            "(thesis eq. 5.4) at constant speed share x dq_max", "joints": rows}
