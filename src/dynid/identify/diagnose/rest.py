"""Rest-biased friction: a log whose joints stand still part of the time, fitted with the sign of
the filtered velocity there.

Standing still, a joint's filtered velocity is the filter's tail or noise, of no meaningful
sign; ``sign(dq)`` still gives those samples a full +-Fc, and their torque (what static
friction holds) does not follow it, so the fitted Coulomb coefficient falls towards zero by
about the share at rest (data/rest.py). The check finds the samples where each joint stands
still from its raw positions (``data.rest``: the position noise measured on this piece of
the log), then fits the model twice on the diagnosed rows: with the filtered velocity's sign
everywhere (``identify --rest off``) and with rest detection (velocity 0 at rest, each rest's
held torque an unknown of its own: the default ``--rest auto``, identify/rest_levels.py). A joint that stands still for at least
``MIN_SHARE`` of the log and whose Coulomb coefficient moves by more than three standard
deviations and ``MIN_CHANGE`` of its value is named, with both values.

The fix depends on what was identified: a result.json without rest detection (``--rest off``
or an older dynid, ``diagnose --params``) is biased: identify again with the default; without
a result, or with one that detected rest, the finding says what the default already does.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dynid.data.blocks import pieces
from dynid.data.preprocess import prepare
from dynid.data.rest import BAND_FACTOR, position_noise
from dynid.data.segments import piece_starts
from dynid.identify.base import base_regressor
from dynid.identify.diagnose.context import LogFit, fit_ols
from dynid.identify.diagnose.findings import Finding
from dynid.identify.model import motor_labels
from dynid.identify.pipeline import rest_rows
from dynid.identify.rest_levels import remove_levels

MIN_SHARE = 0.05  # of a joint's samples standing still
MIN_CHANGE = 0.1  # relative change of Fc between the two fits


def rest_friction(fit: LogFit) -> list[Finding]:
    """Coulomb coefficients biased by rest samples fitted with the filtered velocity's sign."""
    if fit.est is None or fit.options.friction not in ("coulomb-viscous", "polynomial"):
        return []
    noise = position_noise(pieces([fit.raw]), fit.prep)
    if noise["position_noise"] is None or float(np.max(noise["still_share"])) < MIN_SHARE:
        return []
    band = tuple(float(v) for v in BAND_FACTOR * noise["position_noise"])
    window = tuple(float(v) for v in noise["window_s"])
    names, labels = fit.base.names, motor_labels(fit.robot)
    coulomb = [names.index(f"Fc{label}") if f"Fc{label}" in names else -1 for label in labels]
    fits = {}
    for kind, prep in (("off", replace(fit.prep, rest_band=(), rest_window=())),
                       ("auto", replace(fit.prep, rest_band=band, rest_window=window))):
        ready = prepare(replace(fit.raw, dq=None, ddq=None, notes=[]), prep)
        rows = fit.rows[fit.rows < len(ready)]
        y = base_regressor(fit.robot, ready.q[rows], ready.dq[rows], ready.ddq[rows], fit.options, fit.base)
        tau = ready.tau[rows]
        if kind == "auto":  # each rest's held torque eliminated, as identify does (identify/rest_levels.py)
            y, tau = remove_levels(y, tau, rest_rows(fit.robot, ready.dq[rows]), piece_starts(ready.select(rows)))
        fits[kind] = fit_ols(y, tau, names, fit.found)[0]
        if fits[kind] is None:  # not fittable one way: not this check's finding
            return []
    biased, values = [], {}
    for j, k in enumerate(coulomb):
        if k < 0 or noise["still_share"][j] < MIN_SHARE:
            continue
        off, auto, std = fits["off"].coef_[k], fits["auto"].coef_[k], fits["auto"].std_[k]
        change = abs(off - auto)
        if change > 3.0 * std and change > MIN_CHANGE * abs(auto):
            biased.append(j)
            values[f"Fc{labels[j]}"] = {"still_share": float(noise["still_share"][j]), "rest_off": float(off),
                                        "rest_auto": float(auto), "std": float(std)}
    if not biased:
        return []
    detected = bool(fit.prep.rest_band)
    evidence = ("fitted with the filtered velocity's sign at rest (the filter's tail or noise there: sign() gives "
                "those samples a full +-Fc that their torque does not follow), " + "; ".join(
                    f"Fc{labels[j]} = {v['rest_off']:.4g} instead of {v['rest_auto']:.4g} +- {v['std']:.2g} "
                    f"(joint {j + 1} still {100 * v['still_share']:.0f} % of the log)"
                    for j, v in ((j, values[f"Fc{labels[j]}"]) for j in biased)))
    if fit.from_result and not detected:
        return [Finding("rest-biased friction", "alarm", evidence + "; the result was identified that way",
                        "identify again with the default --rest auto (standing still found on the raw positions: "
                        "velocity 0 there, no Coulomb torque, each rest's held torque a level of its own); --min-velocity or "
                        "--smooth-sign do not remove the random +-Fc predicted at rest",
                        [j + 1 for j in biased], values)]
    return [Finding("rest-biased friction", "info", evidence,
                    "nothing to do with identify's default --rest auto (it finds where joints stand still: velocity 0 "
                    "there, each rest's held torque a level of its own); never --rest off on this log",
                    [j + 1 for j in biased], values)]
