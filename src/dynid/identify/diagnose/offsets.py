"""Torque offsets: a constant torque per joint that the model lacks.

A torque sensor's zero, a current sensor's offset or a gravity compensation left in the
logged torque add a constant to a joint's torque. Without ``--offset`` (identify's default)
the fit explains it with whatever parameters can carry a near-constant torque (the first
moments of a joint that moves little, Coulomb friction of a joint that mostly turns one way),
so they come out wrong. The check fits the model with and without one offset per joint on the
diagnosed rows and names the joints whose offset lowers the model's residual RMS by ``DROP``
and is at least ``MATERIAL`` of the joint's RMS torque (and beyond 3 std). Its value alone is
no evidence: where the offset and gravity take nearly the same shape (a joint turning over
a small range), any model error in that direction (drive ripple's mean over the motion)
moves it far beyond its white-noise std, without lowering the residual much. An alarm for
a ``--params`` result identified without ``--offset``, a warning otherwise (identify needs
``--offset`` for this log).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dynid.identify.diagnose.context import LogFit, refit
from dynid.identify.diagnose.findings import Finding
from dynid.identify.model import motor_labels

MATERIAL = 0.02  # share of a joint's RMS torque an offset must reach to count
DROP = 0.3  # and the share by which it must lower the joint's residual RMS


def residual_rms(fit: LogFit, est, base) -> np.ndarray:
    """(n,) RMS residual per joint of a fit (estimate, base) on the diagnosed rows."""
    y = fit.y if base is fit.base else _regressor(fit, base)
    return np.sqrt(np.mean((fit.tau - y @ est.coef_) ** 2, axis=0))


def _regressor(fit: LogFit, base) -> np.ndarray:
    from dynid.identify.base import base_regressor

    rows = fit.rows
    return base_regressor(fit.robot, fit.ready.q[rows], fit.ready.dq[rows], fit.ready.ddq[rows], base.options, base)


def torque_offsets(fit: LogFit) -> list[Finding]:
    """Joints whose torque carries a constant the model lacks (module docstring)."""
    if fit.est is None or (fit.from_result and fit.options.offset):
        return []  # nothing fitted, or a result that already has the offsets
    if fit.options.offset:
        with_offsets, without = (fit.est, fit.base), refit(fit, replace(fit.options, offset=False))
    else:
        with_offsets, without = refit(fit, replace(fit.options, offset=True)), (fit.est, fit.base)
    if with_offsets[0] is None or without[0] is None:
        return []
    est, base = with_offsets
    drop = 1.0 - residual_rms(fit, *with_offsets) / np.maximum(residual_rms(fit, *without), 1e-300)
    rms_tau = np.sqrt(np.mean(fit.tau**2, axis=0))
    found = {}
    for j, label in enumerate(motor_labels(fit.robot)):
        name = f"off{label}"
        if name not in base.names:
            continue
        k = base.names.index(name)
        v, s = float(est.coef_[k]), float(est.std_[k])
        if drop[j] >= DROP and abs(v) >= MATERIAL * rms_tau[j] and abs(v) > 3.0 * s:
            found[j] = (v, s, float(drop[j]))
    if not found:
        return []
    evidence = ("a constant torque the model lacks: " + ", ".join(
        f"tau{j + 1} {v:+.4g} +- {s:.2g} N m ({100 * abs(v) / rms_tau[j]:.2g} % of its RMS; the model's residual "
        f"{100 * u:.0f} % lower with it)"
        for j, (v, s, u) in found.items()) + " (a sensor's zero, a current offset)")
    values = {f"off{j + 1}": {"value": v, "std": s, "residual_drop": u} for j, (v, s, u) in found.items()}
    if fit.from_result:
        return [Finding("torque offset", "alarm", evidence + "; the result was identified without offsets",
                        "identify again with --offset (one constant torque per joint, kept in result.json for "
                        "predict and validate)", [j + 1 for j in found], values)]
    return [Finding("torque offset", "warning", evidence,
                    "identify with --offset (one constant torque per joint); without it the fit gives the constant "
                    "to other parameters", [j + 1 for j in found], values)]
