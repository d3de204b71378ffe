"""Plausibility of fits and identified parameters: a confident number from nonsense is a defect
(issue 18 section 3); what is almost surely wrong warns (``DynidWarning``, one line in the CLI)
with its likely cause. The checks of the logs themselves are ``data/plausibility.py``.

- ``fit_warnings``: a fit or a prediction whose relative error is 100 % or more (the model
  explains none of the torque: swapped or foreign torque columns, a sign, a unit), a joint
  predicted far worse than by zero (150 %), measured torques that are a multiple of the model's
  (below 1/2 or above 2, or negative: a unit, gear ratios, a sign, another robot);
- ``description_warnings``: measured torques of opposite sign or ten times larger or smaller
  than the robot description's on the same motion (or one joint's of opposite sign);
- ``parameter_warnings``: identified friction or rotor inertia negative beyond its uncertainty
  (physically impossible: a torque of opposite sign, swapped columns).
"""

from __future__ import annotations

import math
import re

JOINT_NONSENSE = 1.5  # relative RMSD of one joint at which its fit is nonsense (noise alone gives ~1)
SCALE_RANGE = (0.5, 2.0)  # measured torque / model torque (least squares) outside: a scale or sign
MATERIAL = 0.1  # share of a joint's RMS torque above which a parameter's torque is material
DESCRIPTION_RANGE = (0.1, 10.0)  # measured torque / description's torque: descriptions are rougher than fits


def fit_warnings(relative_error: float | None, relative_rmsd, source: str, what: str = "the model",
                 torque_scale: float | None = None) -> list[str]:
    """Warnings about a fit or a prediction that explains none of the measured torque: a relative
    error ||tau - tau_hat|| / ||tau|| of 100 % or more over all joints (predicting zero would do as
    well), a joint whose relative RMSD is ``JOINT_NONSENSE`` or more (a joint whose torque is small
    against its noise stays near 100 %), or measured torques that are ``torque_scale`` = c times the
    model's (least squares over all joints) with c outside [1/2, 2] (a scale, not a model error)."""
    rel = [None if v is None or not math.isfinite(v) else float(v) for v in (relative_rmsd or [])]
    overall = relative_error is not None and math.isfinite(relative_error) and relative_error >= 1.0
    limit = 1.0 if overall else JOINT_NONSENSE
    worst = [f"{j + 1} ({v:.0%})" for j, v in enumerate(rel) if v is not None and v >= limit]
    out = []
    if overall or worst:
        head = (f"{what} explains none of the measured torque (relative error {relative_error:.0%}"
                + (f"; joint(s) {', '.join(worst)}" if worst else "") + ")") if overall else \
            f"{what} predicts joint(s) {', '.join(worst)} far worse than zero torque would (relative RMSD)"
        out.append(f"{source}: {head}: torque columns swapped or of another robot, a sign convention (--negate), a "
                   "unit, or the wrong result?")
    c = torque_scale
    if c is not None and math.isfinite(c) and not SCALE_RANGE[0] <= c <= SCALE_RANGE[1]:
        cause = ("of opposite sign: a driver logging the reaction torque (--negate tau)?" if c < 0 else
                 "a unit (N m vs mN m, currents without --current-gain), gear ratios (--motor-side) or another "
                 "robot's log?")
        out.append(f"{source}: the measured torques are {c:.3g} x {what}'s (least-squares scale over all joints): "
                   f"{cause}")
    return out


def description_warnings(scale: float | None, source: str, per_joint=None) -> list[str]:
    """Warnings about measured torques that are ``scale`` = c times the torques of the robot's own
    description on the same motion (least squares over all joints and fitted samples, friction
    left out): of opposite sign, or beyond ``DESCRIPTION_RANGE`` (a factor of ten). ``per_joint``:
    each joint's own c_j (None where the description predicts too little of the joint's torque to
    judge); when some joints agree in sign and others do not, the others are named (one --negate)."""
    out, c = [], scale
    judged = [(j + 1, cj) for j, cj in enumerate(per_joint or []) if cj is not None]
    flipped = [j for j, cj in judged if cj < 0]
    agreeing = [j for j, cj in judged if cj > 0]
    if flipped and agreeing:
        out.append(f"{source}: the torque of joint(s) {flipped} has the opposite sign of the robot description's on "
                   f"the same motion while joint(s) {agreeing} agree: logged with the other sign convention "
                   f"(--negate {','.join(f'tau{j}' for j in flipped)}) or swapped torque columns?")
    if c is not None and math.isfinite(c) and not DESCRIPTION_RANGE[0] <= c <= DESCRIPTION_RANGE[1]:
        causes = []
        if c < 0 and not (flipped and agreeing):
            causes.append("of opposite sign: a driver logging the reaction torque (--negate tau)")
        if not DESCRIPTION_RANGE[0] <= abs(c) <= DESCRIPTION_RANGE[1]:
            causes.append("a unit (mN m, N mm), motor-side torques (--motor-side), currents (--current-gain), "
                          "another robot's log, or a description whose inertial values are far off")
        if causes:
            out.append(f"{source}: the measured torques are {c:.3g} x those of the robot description on the same "
                       f"motion (least squares, friction left out): {'; '.join(causes)}? (dynid diagnose compares "
                       "joint by joint)")
    return out


def parameter_warnings(parameters: list[dict], friction: str = "coulomb-viscous", shares: dict | None = None) -> list[str]:
    """Identified rotor inertia (Ia) or, with Coulomb-viscous friction, a Coulomb or viscous
    coefficient (Fc, Fv) that stands alone as a base parameter, is negative by more than 3
    standard deviations and is material: its torque is at least ``MATERIAL`` (10 %) of its joint's
    RMS torque (``shares``: name -> that fraction; all are judged when None). Physically impossible
    (it would create energy) and too large for model bias. The polynomial and asymmetric models'
    terms may be negative in a positive friction curve: not judged."""
    stems = "Fc|Fv|Ia" if friction == "coulomb-viscous" else "Ia"
    bad = []
    for p in parameters:
        name, value, std = p.get("name", ""), p.get("value"), p.get("std")
        alone = p.get("combination") in (None, name, f"{name} = {name}")
        material = shares is None or shares.get(name, 0.0) >= MATERIAL
        if alone and material and re.fullmatch(rf"({stems})m?\d+", name or "") and value is not None and value < 0 \
                and (std is None or value < -3.0 * std):
            bad.append(f"{name} = {value:.4g}")
    if not bad:
        return []
    return [f"negative friction or rotor inertia {bad[:6]}, beyond 3 standard deviations and carrying 10 % or more of "
            "its joint's torque: physically impossible; a torque column of opposite sign (--negate), swapped torque "
            "columns, or a log of another robot?"]
