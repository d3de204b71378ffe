"""Evaluation of a periodic excitation trajectory (``dynid excite evaluate``, docs/formats.md section 4).

- ``cond``: condition number of the column-normalized base regressor (rigid body +
  Coulomb/viscous friction + rotor inertia) over one period sampled at 100 Hz;
- ``max_ratio``: largest |value| / limit over the trajectory, from 10 000 instants per period
  (positions: distance from the middle of the range over half the range);
- ``limits_ok``: the guaranteed upper bounds of ``limits.periodic_ratio_bounds`` (sampled
  extrema widened by the analytic curvature bound) are all <= 1, so no instant between
  samples can exceed a limit either.
"""

from __future__ import annotations

import numpy as np

from dynid.excite.criteria import ExcitationModel, cond, neg_logdet
from dynid.excite.limits import KinematicLimits, periodic_ratio_bounds, sample_ratios, torque_ratio
from dynid.excite.prior import prior_torques

CONTRACT_RATE = 100.0  # Hz, docs/formats.md section 4
RATIO_SAMPLES = 10_000


def evaluate_trajectory(model: ExcitationModel, trajectory, rate: float = CONTRACT_RATE) -> dict:
    """The contract fields plus details (per-joint ratios, logdet, prior-model torque usage)."""
    robot = model.robot
    limits = KinematicLimits.of(robot)
    t = trajectory.sample_times(rate)
    q, dq, ddq = trajectory.evaluate(t)
    fine = np.arange(RATIO_SAMPLES) * (trajectory.period / RATIO_SAMPLES)
    ratios = sample_ratios(*trajectory.evaluate(fine), limits)
    bounds = periodic_ratio_bounds(trajectory, limits, RATIO_SAMPLES)
    tau_ratio = torque_ratio(prior_torques(robot, q, dq, ddq), limits)
    return {
        "cond": cond(model, q, dq, ddq),
        "limits_ok": bool(all(np.all(v <= 1.0) for v in bounds.values())),
        "max_ratio": {k: float(v.max()) for k, v in ratios.items()},
        "joint_ratio": {k: v.tolist() for k, v in ratios.items()},
        "guaranteed_ratio_bound": {k: float(v.max()) for k, v in bounds.items()},
        "neg_logdet": neg_logdet(model, q, dq, ddq),
        "base_parameters": model.b,
        "samples": int(t.size),
        "rate": rate,
        "period": trajectory.period,
        "torque": {"model": "robot description (rigid body + rotor inertia, no friction)",
                   "max_ratio": float(tau_ratio.max()), "joint_ratio": tau_ratio.tolist(),
                   "ok": bool(np.all(tau_ratio <= 1.0))},
        "model": model.options.to_dict(),
    }


def geometry_report(geometry, trajectory, limits, samples: int = RATIO_SAMPLES) -> dict:
    """Clearance and workspace of a trajectory (additive keys of ``evaluate``): the smallest
    distance over the capsule pairs at ``samples`` instants per period, where and when it
    occurs, and its guaranteed lower bound between the instants (``geometry.constraints``)."""
    c = geometry.constraints
    report = c.guaranteed_margins(trajectory, limits, samples)
    labels = c.labels()
    n_ws = 6 if c.workspace is not None else 0
    pairs = slice(0, c.size - n_ws)
    out = {}
    if c.size - n_ws > 0:
        distance = report["sampled"][pairs] + c.required[pairs]
        k = int(np.argmin(distance))
        guaranteed = report["guaranteed"][pairs] + c.required[pairs]
        out["clearance"] = {
            "required": c.clearance, "min_distance": float(distance[k]), "where": labels[k],
            "time": float(report["time"][k]), "q": report["q_at"][k].tolist(),
            "guaranteed_min_distance": float(guaranteed.min()),
            "ok": bool(report["guaranteed"][pairs].min() >= 0.0), "pairs": c.size - n_ws,
            "samples": samples, "bound": "sampled minimum, and a guaranteed lower bound between samples "
                                         "from the links' speed bounds"}
    else:
        out["clearance"] = {"required": c.clearance, "min_distance": None, "where": None, "time": None,
                            "guaranteed_min_distance": None, "ok": True, "pairs": 0, "samples": samples,
                            "bound": f"no pair to check: every link is within {c.exempt_apart} joints of the "
                                     "others and of the base (and floor)"}
    if n_ws:
        margin = report["sampled"][-n_ws:]
        k = int(np.argmin(margin))
        out["workspace"] = {"min_margin": float(margin[k]), "where": labels[c.size - n_ws + k],
                            "time": float(report["time"][c.size - n_ws + k]),
                            "guaranteed_min_margin": float(report["guaranteed"][-n_ws:].min()),
                            "ok": bool(report["guaranteed"][-n_ws:].min() >= 0.0), "samples": samples}
    return out


# identify refuses fits above this condition number (``identify --max-condition``, estimators.py)
MAX_CONDITION = 1e7


def unusable(report: dict, trajectory, robot, torque_limits: bool = False) -> tuple[list[str], list[str]]:
    """(problems, warnings) of a trajectory as an excitation for identification, one sentence each.
    Problems (it cannot serve): a condition number beyond what ``identify`` accepts; no joint that
    moves more than identify's still range (``identify.undetermined.STILL_RANGE``: limits of 1e-9
    give a well-conditioned but useless trajectory, its regressor columns being scaled alike); with
    torque limits, prior-model torques beyond tau_max. Warnings: some joints barely move (identify
    holds what only they excite at the description's values). Joints are named with the limits
    that hold them."""
    from dynid.identify.undetermined import STILL_RANGE

    problems, warnings_ = [], []
    limits = KinematicLimits.of(robot)
    q = trajectory.evaluate(np.arange(RATIO_SAMPLES) * (trajectory.period / RATIO_SAMPLES))[0]
    amplitude = 0.5 * (q.max(axis=0) - q.min(axis=0))
    still = np.where(robot.is_revolute, STILL_RANGE, 0.1 * STILL_RANGE)
    frozen = [j for j in range(robot.n) if amplitude[j] < still[j]]
    held = "; ".join(f"joint {j + 1} ({robot.joint_names[j]}) moves +-{amplitude[j]:.3g} only (its limits: range "
                     f"[{limits.q_min[j]:.3g}, {limits.q_max[j]:.3g}], dq_max {limits.dq_max[j]:.3g}, ddq_max "
                     f"{limits.ddq_max[j]:.3g})" for j in frozen[:4]) + (" ..." if len(frozen) > 4 else "")
    if not report["cond"] <= MAX_CONDITION:
        problems.append(f"cond {report['cond']:.3g} is beyond the {MAX_CONDITION:.0e} that identify accepts: the "
                        "trajectory cannot determine the base parameters" + (
                            f": {held} (a joint that must stay still is locked: --lock NAME=VALUE)" if frozen else ""))
    elif frozen and len(frozen) == robot.n:
        problems.append(f"no joint moves more than identify's still range ({STILL_RANGE:g} rad, "
                        f"{0.1 * STILL_RANGE:g} m): {held}")
    elif frozen:
        warnings_.append(f"{held}: below identify's still range ({STILL_RANGE:g} rad): what only these joints "
                         "excite keeps the robot description's values")
    if torque_limits and not report["torque"]["ok"]:
        ratio = np.asarray(report["torque"]["joint_ratio"])
        j = int(np.argmax(ratio))
        problems.append(f"the prior model's torques reach {ratio[j]:.6g} x tau_max on joint {j + 1} "
                        f"({robot.joint_names[j]}) although --torque-limits was asked: no trajectory within these "
                        "limits was found (gravity alone beyond tau_max? tau_max in other units?)")
    return problems, warnings_
