"""Sign, scale and range of the logged torques, and the units of the log.

- Sign or scale per joint (against the description): the robot description's own rigid-body
  model (its inertials, gravity and the drives' rotor inertia; no friction) predicts tau_nom;
  per joint, the least-squares fit tau_j = s_j tau_nom_j + Fc sign(dq_j) + Fv dq_j + c_j and
  the partial correlation r_j of tau_j and tau_nom_j with friction and offset projected out. r_j near -1 is a
  flipped torque sign; |r_j| near 1 with s_j far from 1 a gear ratio or torque constant off by
  s_j. Joints whose torque the description barely explains (|r_j| < 0.7: friction-dominated,
  or a poor description) are not judged.
- Sign (against physics, without trusting the description): identified base parameters that
  are a single physical quantity that cannot be negative (a link mass m_i, a rotor inertia
  Ia_j, Coulomb or viscous friction Fc_j, Fv_j) and come out below zero by more than three
  standard deviations, with an effect of at least 2 % of some joint's RMS torque (a small
  bias of a parameter that is zero in truth is not a finding), point at the torque of that
  joint (its sign or an unmodeled effect).
- Clipping: a torque that sits at its extreme value over runs of samples has hit the range of
  the sensor or the current limit of the drive; those samples are wrong by an unknown amount.
- Units: a sample rate below 5 Hz that would be 20 Hz..50 kHz in milliseconds; revolute
  positions beyond 2 pi or far outside the limits (degrees given as radians).
"""

from __future__ import annotations

import math
import numpy as np

from dynid.data.plausibility import PositionRange
from dynid.identify.diagnose.context import LogFit
from dynid.identify.diagnose.findings import Finding
from dynid.identify.model import ModelOptions, full_parameters, model_torques

MIN_CORRELATION = 0.7
MATERIAL = 0.02  # share of a joint's RMS torque that a wrong-signed term must move to count


def nonnegative_names(robot, options: ModelOptions) -> dict[str, int]:
    """{base parameter name: joint or body number} of the single physical quantities that
    cannot be negative: link masses, rotor inertias, Coulomb and viscous friction (the first
    two terms of the coulomb-viscous and polynomial models)."""
    out = {f"m{i + 1}": i + 1 for i in range(getattr(robot, "n_bodies", robot.n))}
    friction = {"coulomb-viscous": ("Fc", "Fv"), "polynomial": ("Fc", "Fv")}.get(options.friction, ())
    for j in range(robot.n):
        out.update({f"{term}{j + 1}": j + 1 for term in friction + (("Ia",) if options.rotor_inertia else ())})
    return out


def description_fit(fit: LogFit) -> list[Finding]:
    """Sign or scale of each joint's torque against the description's rigid-body model."""
    nominal_model = ModelOptions("none", True, False)  # rigid body and the drives' rotor inertia
    theta = full_parameters(fit.robot, nominal_model)
    if not np.any(fit.robot.parameters() != 0):
        return []
    rows = fit.rows
    q, dq, ddq = fit.ready.q[rows], fit.ready.dq[rows], fit.ready.ddq[rows]
    nominal = model_torques(fit.robot, q, dq, ddq, theta, nominal_model)
    tau = fit.tau
    out, flips = [], []
    for j in range(fit.robot.n):
        # friction and sensor offset are not in the description: project them out of both sides
        # (Frisch-Waugh: the slope on tau_nom is that of the full regression)
        nuisance = np.column_stack([np.sign(dq[:, j]), dq[:, j], np.ones(len(rows))])
        x = nominal[:, j] - nuisance @ np.linalg.lstsq(nuisance, nominal[:, j], rcond=None)[0]
        y = tau[:, j] - nuisance @ np.linalg.lstsq(nuisance, tau[:, j], rcond=None)[0]
        if np.linalg.norm(x) <= 1e-6 * max(np.linalg.norm(nominal), 1e-300) or not np.any(y):
            continue
        r = float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))
        s = float(x @ y / (x @ x))
        if r <= -MIN_CORRELATION:
            flips.append((j, r, s))
        elif r >= MIN_CORRELATION and not 0.75 <= s <= 1.33:
            out.append(Finding("torque scale", "alarm",
                               f"the measured tau{j + 1} is {s:.3g} x the description's rigid-body torque "
                               f"(partial correlation {r:.3f}): a gear ratio, torque constant or current gain off "
                               "by that factor, or a wrong description",
                               f"check the joint's gain (--current-gain, --motor-side and the gear ratio of the "
                               f"description); a torque logged in another unit needs a factor {1 / s:.3g}",
                               [j + 1], {"slope": s, "correlation": r}))
    if flips:
        out.insert(0, Finding(
            "torque sign", "alarm",
            "the measured torque of joint(s) " + ", ".join(str(j + 1) for j, _, _ in flips) + " runs against the "
            "description's rigid-body model: correlation " + ", ".join(f"{r:.3f}" for _, r, _ in flips)
            + ", slope " + ", ".join(f"{s:.3g}" for _, _, s in flips),
            "--negate " + ",".join(f"tau{j + 1}" for j, _, _ in flips) + " (or --negate tau when all joints "
            "are flipped): the logger's sign convention differs from the description's (the torque the joint "
            "exerts on the link after it, positive about the joint axis)",
            [j + 1 for j, _, _ in flips], {"correlation": {str(j + 1): r for j, r, _ in flips},
                                           "slope": {str(j + 1): s for j, _, s in flips}}))
    return out


def negative_parameters(fit: LogFit) -> list[Finding]:
    """Identified masses, rotor inertias and friction coefficients below zero (> 3 std)."""
    if fit.est is None:
        return []
    bad = []
    rms_tau = np.sqrt(np.mean(fit.tau**2, axis=0))
    physical = nonnegative_names(fit.robot, fit.options)
    for k, (name, v, s) in enumerate(zip(fit.base.names, fit.est.coef_, fit.est.std_)):
        if name not in physical or not (v < -3.0 * s and v < 0):
            continue
        # a material effect too: the term moves some joint's torque by MATERIAL of its RMS
        share = np.sqrt(np.mean((fit.y[:, :, k] * v) ** 2, axis=0)) / np.maximum(rms_tau, 1e-12)
        if share.max() >= MATERIAL:
            bad.append((name, physical[name], float(v), float(s)))
    if not bad:
        return []
    joints = sorted({k for _, k, _, _ in bad})
    return [Finding("negative physical parameter", "alarm",
                    "identified " + ", ".join(f"{nm} = {v:.4g} +- {s:.2g}" for nm, _, v, s in bad)
                    + ": a mass, rotor inertia or friction coefficient cannot be negative", negative_fix(fit, bad),
                    joints, {nm: {"value": v, "std": s} for nm, _, v, s in bad})]


def negative_fix(fit: LogFit, bad: list[tuple]) -> str:
    """The fix that makes the negative parameters ``bad`` [(name, joint, value, std)] physical,
    found by refitting with each candidate: the named joint's torque negated, one offset per
    joint (when the model lacks them); the rotor inertia of a link-side torque sensor; else
    what to look at."""
    from dataclasses import replace

    from dynid.identify.diagnose.context import refit

    def cured(est, base) -> bool:
        if est is None:
            return False
        values = dict(zip(base.names, zip(est.coef_, est.std_)))
        return all(nm in values and not values[nm][0] < -3.0 * values[nm][1] for nm, _, _, _ in bad)

    joints = sorted({j for _, j, _, _ in bad if j <= fit.robot.n})
    if joints and cured(*refit(fit, negate=tuple(j - 1 for j in joints))):
        return ("--negate " + ",".join(f"tau{j}" for j in joints) + ": with the torque of joint(s) "
                + ", ".join(map(str, joints)) + " reversed the fit makes them positive (check that sign)")
    if not fit.options.offset and cured(*refit(fit, replace(fit.options, offset=True))):
        return "--offset: with one constant torque per joint the fit makes them positive (a sensor's zero)"
    if all(nm.startswith("Ia") for nm, _, _, _ in bad):
        return ("--no-rotor-inertia: a joint torque sensor on the link side does not see the motors' rotor "
                "inertia (or check the sign and gain of the joint's torque)")
    return ("check the sign and gain of the torque of the joint(s) named (or of the joint driving that link); "
            "neither reversing it nor offsets make them positive, so look for an effect the model lacks")


def clipped_torques(fit: LogFit) -> list[Finding]:
    """Runs of samples at a joint's extreme torque (saturated sensor or drive)."""
    tau = fit.raw.tau
    out = []
    for j in range(tau.shape[1]):
        for side, extreme in (("maximum", tau[:, j].max()), ("minimum", tau[:, j].min())):
            at = np.abs(tau[:, j] - extreme) <= 1e-9 * max(abs(extreme), 1e-12)
            count = int(at.sum())
            if count < max(5, 0.002 * len(tau)):
                continue
            edges = np.diff(np.concatenate([[0], at.astype(np.int8), [0]]))
            longest = int(np.max(np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)))
            if longest < 3:
                continue
            out.append(Finding("clipped torque", "alarm",
                               f"tau{j + 1} sits at its {side} {extreme:.4g} N m in {count} samples "
                               f"({100 * count / len(tau):.2g} %, runs of up to {longest}): the sensor range or the "
                               "drive's current limit was reached",
                               "leave those samples out (or the log's parts with them) and keep the excitation within "
                               "the torque range (slower or smaller motion)", [j + 1],
                               {"value": float(extreme), "samples": count, "longest_run": longest}))
    return out


def units(fit: LogFit) -> list[Finding]:
    """Time in milliseconds, positions in degrees."""
    out = []
    fs = fit.fs
    if fs < 5.0 and 20.0 <= fs * 1000.0 <= 50_000.0:
        out.append(Finding("time unit", "alarm",
                           f"the time column gives {fs:.3g} samples per second over {fit.raw.t[-1] - fit.raw.t[0]:.4g} "
                           f"s; in milliseconds it would be {fs * 1000:.4g} Hz over "
                           f"{(fit.raw.t[-1] - fit.raw.t[0]) / 1000:.4g} s",
                           "give the time unit: --time-unit ms", [], {"rate_hz": fs}))
    q = fit.raw.q
    revolute = np.asarray(fit.robot.is_revolute, dtype=bool)
    wide = [j for j in np.flatnonzero(revolute) if np.max(np.abs(q[:, j])) > 2 * math.pi + 0.3]
    span = PositionRange(fit.robot.n)
    span.update(q)
    messages = span.messages(fit.robot, fit.raw.source)
    far = [j for j in range(fit.robot.n) if any(f"q{j + 1} spans" in m for m in messages)]
    joints = sorted(set(wide) | set(far))
    if joints:
        out.append(Finding("position unit", "alarm",
                           "positions of joint(s) " + ", ".join(str(j + 1) for j in joints) + " reach "
                           + ", ".join(f"{np.max(np.abs(q[:, j])):.4g}" for j in joints)
                           + " (beyond 2 pi or far outside the joint limits): degrees given as radians?",
                           "--degrees (positions, velocities and accelerations of revolute joints in degrees)",
                           [int(j) + 1 for j in joints], {"max_abs": {str(j + 1): float(np.max(np.abs(q[:, j])))
                                                                 for j in joints}}))
    return out
