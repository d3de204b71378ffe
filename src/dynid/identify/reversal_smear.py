"""Whether a log shows the friction flip smeared at velocity reversals, joint by joint (``data.reversals``).

A drive torque that stays continuous through a reversal makes the acceleration jump by 2 F / M
(``data.reversals``, V1), and the acceleration estimated from sampled positions smears the jump:
the rows near the reversal show less friction than there is. A torque that jumps itself (friction
compensated by a feed-forward of sign(dq_ref), or a log computed from a smooth trajectory by a
model) leaves the acceleration smooth, and the same rows carry the friction truly. What the
log does is measured, not assumed. With the Coulomb-viscous fit of the whole log (weights
1 / sigma_j^2; ``identify.stribeck`` step 3) and its residual r = tau - Y_b beta, the friction the
torque shows beyond the fit's on joint j's reversal rows R_j (``data.reversals.reversal_rows``,
within the span of a reversal, dq != 0, among the rows the friction fit uses) is compared with
that on the rows just outside them, O_j (up to twice the span from a reversal):

    z_j = (mean_{R_j} r sign(dq) - mean_{O_j} r sign(dq)) / (sigma_j sqrt(1/|R_j| + 1/|O_j|))  (V3)

in standard errors of white noise. The smear lowers the rows of R_j far more than those of O_j
(its error e is 0.28 of the step next to a reversal, 0.03 two samples away at 100 Hz and a
40 Hz cutoff: V2), while friction itself never falls towards zero velocity (Coulomb is flat,
a Stribeck curve rises to Fs, the viscous part is in the fit): so the test is one-sided, joint
j's reversal rows are left out when z_j < -``SMEAR_Z``. On the MuJoCo er3a logs
(tests/test_friction_mujoco.py), Coulomb-viscous or Stribeck friction, z is far below it on
joints 1-3; on logs whose torque is computed from a smooth trajectory (tests/test_stribeck.py)
the rows stay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.data.preprocess import Preprocessing
from dynid.data.reversals import reversal_rows
from dynid.files.outputs import json_floats
from dynid.identify.model import ModelOptions, log_regressor
from dynid.identify.pipeline import friction_fit_rows

SMEAR_Z = 3.0  # (V3): the reversal rows are left out below -SMEAR_Z standard errors
BLOCK = 8192  # rows per regressor evaluation


@dataclass(frozen=True)
class ReversalSmear:
    """(V3) per joint: ``z`` (n,) (NaN without reversal rows), ``rows`` (n,) |R_j|, ``joints`` (n,)
    bool: z_j < -SMEAR_Z."""

    z: np.ndarray
    rows: np.ndarray

    @property
    def joints(self) -> np.ndarray:
        return np.nan_to_num(self.z, nan=0.0) < -SMEAR_Z

    def to_dict(self) -> dict:
        return {"z": json_floats(self.z), "rows": self.rows.tolist(),
                "left_out": self.joints.tolist(), "threshold": -SMEAR_Z}


def reversal_smear(robot, readies, options: ModelOptions, base, prep: Preprocessing, spans: Preprocessing,
                   beta: np.ndarray, sigma: np.ndarray) -> ReversalSmear:
    """(V3) of prepared logs ``readies`` (``prep``: the rows the fit uses) with the Coulomb-viscous
    base parameters beta (b,) and each joint's noise sigma (n,); ``spans``: ``prep`` with every
    joint's reversal span (``data.reversals.with_reversals``). The regressor is evaluated on the
    reversal rows only."""
    n = robot.n
    sums, counts = np.zeros((2, n)), np.zeros((2, n), dtype=np.int64)  # [R; O]
    wide = tuple(2.0 * v for v in spans.reversal_span)
    for ready in readies:
        mask = friction_fit_rows(robot, ready, prep)
        near = reversal_rows(ready.dq, spans.reversal_span, spans.reversal_velocity)
        outer = reversal_rows(ready.dq, wide, spans.reversal_velocity) & ~near & mask & (ready.dq != 0)
        near &= mask & (ready.dq != 0)
        rows = np.flatnonzero((near | outer).any(axis=1))
        for s in range(0, rows.size, BLOCK):
            at = rows[s:s + BLOCK]
            y = log_regressor(robot, ready, at, options)
            seen = (ready.tau[at] - y[..., base.independent] @ beta) * np.sign(ready.dq[at])
            for k, rows_k in enumerate((near[at], outer[at])):
                sums[k] += np.sum(np.where(rows_k, seen, 0.0), axis=0)
                counts[k] += rows_k.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / counts
        z = (mean[0] - mean[1]) / (sigma * np.sqrt(1.0 / counts[0] + 1.0 / counts[1]))
    return ReversalSmear(np.where(counts.min(axis=0) > 0, z, np.nan), counts[0])
