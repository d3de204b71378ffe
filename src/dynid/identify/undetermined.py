"""Base parameters a log cannot determine: they keep the robot description's values.

The base parameters (base.py) are what the model's structure lets any rich motion identify.
A real log may still leave some of them undetermined, and least squares then returns a
number for them anyway: fitted to noise and model error, with a small standard deviation
(on the KUKA iiwa log whose joints 1-2 stand still: Izz1R = 1.2 +- 0.07 kg m^2 for a
description value of 0.06, Fv2 = 20 +- 0.2 N m s/rad). Such numbers are not reported as
estimates here.

A joint is **held still** when its position varies less than ``still_range`` over the fitted
samples (default 0.05 rad, or 0.005 m for a prismatic joint). What its motion would excite
cannot be identified: on random states of the moving joints, with every still joint held
at the middle of its range (dq = ddq = 0 there), the base regressor loses rank. An ordered
QR selection (base.py's method: a column is kept when its distance to the span of the
columns before it exceeds ``tol``) names the lost base parameters; the order puts the
terms without a prior first (torque offsets, friction, rotor inertias), then the rigid
body in base order, so that of a group the data cannot separate, a rigid-body term (whose
description value is a prior) is the one held. Example: with joint 2 held, the gravity
torque of ``mx2`` is a constant, indistinguishable from joint 2's torque offset: ``off2``
is estimated and ``mx2`` keeps its description value.

The undetermined parameters are fixed at ``prior = K theta_description`` (friction and
offsets 0, rotor inertias from the drives) and the others are estimated from the normal
equations of tau - W_U beta_U = W_D beta_D: an estimator option (``Estimator(fixed=found.index,
prior=found.prior)``, ``NormalEquations.reduce``); result.json marks them
``"determined": false`` with ``std: null`` and says why (``annotate``). The physically
consistent estimate fits them all (its constraints bound them) unless it is regularized toward
the description (regularized.py), which holds them there as the equality K_U theta = prior_U.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from dynid.errors import IllConditionedError
from dynid.identify.base import DEFAULT_TOL, BaseParameters, column_normalize, random_states
from dynid.identify.model import ModelOptions, full_parameters, identification_regressor

STILL_RANGE = 0.05  # rad; prismatic joints: a tenth of it in m
NO_PRIOR = ("off", "Fc", "Fv", "Ia")  # name stems of terms without a description value


@dataclass
class Undetermined:
    """Which base parameters a log leaves undetermined, and the values they keep.

    still: indices of the joints held still; held: their middle position; ranges: (n,)
    position range of every joint over the fitted samples; index: base parameter indices
    not determined; prior: (b,) the description's base parameters (K theta)."""

    still: list[int]
    held: np.ndarray
    ranges: np.ndarray
    index: np.ndarray
    prior: np.ndarray

    def __bool__(self) -> bool:
        return bool(self.index.size)

    def options(self) -> dict:
        """The estimator options that hold these parameters at the description's values."""
        return {"fixed": self.index, "prior": self.prior} if self.index.size else {}

    def reason(self, robot) -> str:
        joints = ", ".join(f"{j + 1} ({robot.joint_names[j]}, range {self.ranges[j]:.3g})" for j in self.still)
        return f"joint(s) {joints} held still: the log cannot determine what their motion excites"

    def to_dict(self, robot, base: BaseParameters) -> dict:
        return {"still_joints": [j + 1 for j in self.still], "held_at": self.held.tolist(),
                "position_range": self.ranges.tolist(),
                "parameters": [base.names[k] for k in self.index], "reason": self.reason(robot)}


def still_joints(robot, q_min: np.ndarray, q_max: np.ndarray, still_range: float = STILL_RANGE) -> list[int]:
    """Joints whose position range over the fit is below ``still_range`` (a tenth for prismatic)."""
    limit = np.where(robot.is_revolute, still_range, 0.1 * still_range)
    return [int(j) for j in np.flatnonzero(np.asarray(q_max) - np.asarray(q_min) < limit)]


def find_undetermined(robot, options: ModelOptions, base: BaseParameters, q_min: np.ndarray, q_max: np.ndarray,
                      still_range: float = STILL_RANGE, seed: int = 0, tol: float = DEFAULT_TOL) -> Undetermined:
    """The base parameters lost when the still joints are held (module docstring)."""
    q_min, q_max = np.asarray(q_min, dtype=float), np.asarray(q_max, dtype=float)
    still = still_joints(robot, q_min, q_max, still_range) if still_range > 0 else []
    held = 0.5 * (q_min + q_max)[still]
    prior = base.K @ full_parameters(robot, options)
    if not still:
        return Undetermined([], held, q_max - q_min, np.zeros(0, dtype=np.int64), prior)
    if len(still) == robot.n:
        raise IllConditionedError(f"the data do not excite the robot: every joint moves less than --still-range "
                                  f"{still_range:g} (position ranges {np.round(q_max - q_min, 6).tolist()})")
    samples = max(200, 4 * base.rank // robot.n)
    q, dq, ddq = random_states(robot, samples, seed)
    q[:, still], dq[:, still], ddq[:, still] = held, 0.0, 0.0
    w = identification_regressor(robot, q, dq, ddq, options)[..., base.independent].reshape(-1, base.rank)
    order = sorted(range(base.rank), key=lambda k: (not base.names[k].rstrip("0123456789R").startswith(NO_PRIOR), k))
    norms = np.linalg.norm(w, axis=0)
    zero = norms <= 1e-10 * norms.max()
    wn, _ = column_normalize(np.where(zero, 0.0, w)[:, order])
    r = scipy.linalg.qr(wn, mode="r")[0]
    scale = np.max(np.abs(np.diag(r)))
    lost = [order[i] for i in range(base.rank) if abs(r[i, i]) <= tol * scale or zero[order[i]]]
    return Undetermined(still, held, q_max - q_min, np.array(sorted(lost), dtype=np.int64), prior)


def annotate(result: dict, found: Undetermined, robot, base: BaseParameters, estimator: str) -> None:
    """Mark the undetermined base parameters in a result.json dictionary (std null, a note) and
    add ``undetermined`` and a warning naming them."""
    if not found:
        return
    held = "keeps the robot description's value" if estimator != "pc" or "regularization" in result else \
        "is chosen by the physical-consistency constraints, not by the data"
    for k in found.index:
        entry = result["base_parameters"][k]
        entry.update({"std": None, "relative_std": None, "determined": False,
                      "note": f"not determined by the data: {held}"})
    result["undetermined"] = found.to_dict(robot, base)
    names = [base.names[k] for k in found.index]
    result["warnings"].append(f"{found.reason(robot)}; {len(names)} base parameter(s) not determined, "
                              f"each {held}: {names}")
