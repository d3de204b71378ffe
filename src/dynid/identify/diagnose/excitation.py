"""The log's excitation and the gravity of the description.

- Excitation: the condition number of the column-normalized base regressor of the log
  (thesis eq. 2.13-2.16; above 1e3 the estimates are poorly determined), joints that barely
  move, and the base parameters with %sigma > 50. Which joint's motion would help is read from
  the parameters' own structure: a parameter of link i (m_i, mx_i, ..., Izz_i) is excited by
  the motion of joints 1..i, one of joint i (Fc_i, Fv_i, Ia_i, off_i) by joint i; among
  those joints the one that moves least, relative to its limits, is named (a heuristic: it
  does not weigh how strongly each joint enters the parameter's column).
- Gravity: the model is fitted with the description's gravity vector and with gravity of the
  same magnitude along each base axis; a direction whose residual is less than half of the
  description's means the description's gravity (mounting) is wrong for the data.
"""

from __future__ import annotations

import re

import numpy as np

from dynid.identify.base import base_parameters, base_regressor
from dynid.identify.diagnose.context import LogFit, fit_ols
from dynid.identify.diagnose.findings import Finding

WARN_CONDITION = 1e3
REL_STD_LIMIT = 50.0
NAME = re.compile(r"^([A-Za-z]+?)(\d+)R?$")
OWN_TERMS = ("Fc", "Fv", "Fv2", "Fv3", "Fcp", "Fcn", "Fvp", "Fvn", "Ia", "off", "Iam", "Fcm", "Fvm")


def motion_share(fit: LogFit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per joint: position range, RMS velocity and the smaller of both as a share of the limits."""
    q, dq = fit.ready.q[fit.rows], fit.ready.dq[fit.rows]
    span, rms = np.ptp(q, axis=0), np.sqrt(np.mean(dq**2, axis=0))
    r = fit.robot
    full = r.limit_array("q_max") - r.limit_array("q_min")
    full = np.where(np.isfinite(full), full, np.where(r.is_revolute, 2 * np.pi, 1.0))
    vmax = np.where(np.isfinite(r.limit_array("dq_max")), r.limit_array("dq_max"), np.where(r.is_revolute, 2.0, 0.5))
    return span, rms, np.minimum(span / full, rms / vmax)


def excitation(fit: LogFit) -> list[Finding]:
    out = []
    span, rms, share = motion_share(fit)
    still = [j for j in range(fit.robot.n) if span[j] < (0.05 if fit.robot.is_revolute[j] else 0.01)
             or share[j] < 0.02]
    held = [fit.base.names[k] for k in fit.found.index] if fit.found else []
    if still:
        out.append(Finding("joints barely moving", "warning",
                           "joint(s) " + ", ".join(f"{j + 1} (range {span[j]:.3g}, RMS velocity {rms[j]:.3g})"
                                                   for j in still)
                           + ": the parameters only they excite (their friction, rotor inertia, the inertia about "
                           "their axis) cannot be identified from this log"
                           + (f"; identify keeps these {len(held)} at the description's values: " + ", ".join(held)
                              if held else ""),
                           "add motion of these joints to the excitation (dynid excite optimize), or identify "
                           "without their parameters", [int(j) + 1 for j in still],
                           {"range": {str(j + 1): float(span[j]) for j in still}, "undetermined": held}))
    if fit.est is None:
        out.append(Finding("excitation", "warning", f"the model cannot be fitted to this log: {fit.problem}",
                           "a richer excitation (all joints, both directions, enough speed) or a smaller model",
                           [], {}))
        return out
    cond = float(fit.est.cond_)
    if cond > WARN_CONDITION:
        out.append(Finding("condition number", "warning",
                           f"condition number {cond:.3g} of the normalized base regressor of this log (> "
                           f"{WARN_CONDITION:g}): the estimates are poorly determined",
                           "an optimized excitation (dynid excite optimize) or more varied motion", [],
                           {"condition_number": cond}))
    poor = [(nm, float(v)) for nm, v in zip(fit.base.names, fit.est.rel_std_)
            if not v <= REL_STD_LIMIT and not nm.startswith("off")  # an offset is no matter of motion
            and nm not in held]  # named above
    if poor:
        helpers: dict[int, list[str]] = {}
        for nm, _ in poor:
            m = NAME.match(nm)
            if not m:
                continue
            i = int(m.group(2)) - 1
            candidates = [i] if m.group(1) in OWN_TERMS else list(range(min(i, fit.robot.n - 1) + 1))
            helpers.setdefault(min(candidates, key=lambda j: share[j]), []).append(nm)
        advice = "; ".join(f"joint {j + 1} (moves {100 * share[j]:.2g} % of its range/speed) for "
                           + ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")
                           for j, names in sorted(helpers.items()))
        out.append(Finding("poorly identified parameters", "info",
                           f"{len(poor)} of {len(fit.base.names)} base parameters have %sigma > {REL_STD_LIMIT:g}: "
                           + ", ".join(nm for nm, _ in poor[:12]) + (" ..." if len(poor) > 12 else ""),
                           "more motion of " + advice if advice else "a richer excitation",
                           sorted(int(j) + 1 for j in helpers), {"relative_std": dict(poor)}))
    return out


def gravity_direction(fit: LogFit) -> list[Finding]:
    """Residual with the description's gravity against gravity along each base axis."""
    if fit.est is None:
        return []
    robot, rows = fit.robot, fit.rows
    g = np.asarray(robot.gravity, dtype=float)
    if not np.any(g):
        return []
    own_fit = fit_ols(fit.y, fit.tau, fit.base.names)[0] if fit.found else fit.est  # all free, as below
    if own_fit is None:
        return []
    own = float(own_fit.rss_.sum())
    tried = {}
    for axis in range(3):
        for sign in (1.0, -1.0):
            alt = np.zeros(3)
            alt[axis] = sign * np.linalg.norm(g)
            if np.allclose(alt, g):
                continue
            other = robot.with_gravity(alt)
            base = base_parameters(other, fit.options)
            y = base_regressor(other, fit.ready.q[rows], fit.ready.dq[rows], fit.ready.ddq[rows], fit.options, base)
            est, _ = fit_ols(y, fit.tau, base.names)
            if est is not None:
                tried[tuple(alt.tolist())] = float(est.rss_.sum())
    if not tried:
        return []
    best = min(tried, key=tried.get)
    if tried[best] >= 0.5 * own:
        return []
    count = len(rows) * robot.n
    return [Finding("gravity direction", "alarm",
                    f"with gravity {list(best)} m/s^2 the model fits with residual RMS {np.sqrt(tried[best] / count):.4g} "
                    f"N m, with the description's {g.tolist()} only {np.sqrt(own / count):.4g} N m: the robot is "
                    "mounted otherwise than its description says",
                    "set the gravity vector of the description (robot YAML 'gravity:' or the mounting of the URDF "
                    "base) to the direction of gravity in the base frame", [],
                    {"description_gravity": g.tolist(), "best_gravity": list(best),
                     "rss": {str(k): v for k, v in tried.items()}, "rss_description": own})]
