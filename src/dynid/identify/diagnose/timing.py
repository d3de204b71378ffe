"""Time alignment: a delay between the torque and the motion, and a logged velocity column
that lags (or is scaled against) the derivative of the positions.

Torque delay. With the base regressor W fixed at the motion samples i, shifting the torque by
k samples changes only the right-hand side of the normal equations:

    B_k = sum_i W_i^T tau_{i+k},   beta_k = A^-1 B_k,   RSS_k = C_k - B_k^T beta_k      (D1)

(A = sum_i W_i^T W_i once), so the residual over a range of shifts costs one product per
shift. The minimum over k (coarse steps, then every sample around the best, then a parabola
through the three samples around the minimum) estimates the delay d: the torque logged at
t + d belongs to the motion at t. ``identify --tau-delay d`` (alias ``--delay``) applies it.

Velocity column. The logged dq_j, filtered like q, is correlated with d/dt(q_j) (filtered q,
central differences) shifted by k samples; the best k is the column's lag, the least-squares
slope at that lag its scale (1 when the units agree; 57.3 for degrees, 1000 for a time
column in ms, the gear ratio for motor-side velocities).
"""

from __future__ import annotations

import numpy as np

from dataclasses import replace

from dynid.data.preprocess import prepare
from dynid.identify.diagnose.context import LogFit
from dynid.identify.diagnose.findings import Finding
from dynid.identify.physical import pseudo_solve

MAX_DELAY = 0.25  # s, largest delay looked for
MAX_COARSE = 60  # shifts of the coarse pass
ALIGNED_RMS_RATIO = 0.7  # a delay is found when the shifted torque's residual RMS is below this share of the logged one


def _shifts(limit: int) -> np.ndarray:
    step = max(1, -(-limit // (MAX_COARSE // 2)))
    return np.unique(np.concatenate([-np.arange(0, limit + 1, step), np.arange(0, limit + 1, step)])), step


def searched_shifts(values_of, limit: int, cost) -> dict:
    """{k: values_of(ks)[i]} over the coarse shifts (``_shifts``) and then every shift within one
    coarse step of the one of least ``cost(value)``; ``values_of`` maps a list of shifts to their
    values, in order."""
    coarse, step = _shifts(limit)
    out = dict(zip(coarse.tolist(), values_of(coarse.tolist())))
    best = min(out, key=lambda k: cost(out[k]))
    fine = [k for k in range(max(-limit, best - step), min(limit, best + step) + 1) if k not in out]
    if fine:
        out.update(zip(fine, values_of(fine)))
    return out


def _parabola(k: int, values: dict) -> float:
    """Vertex of the parabola through (k-1, k, k+1) (k itself when a neighbour is missing)."""
    if k - 1 not in values or k + 1 not in values:
        return float(k)
    a, b, c = values[k - 1], values[k], values[k + 1]
    den = a - 2 * b + c
    return float(k + 0.5 * (a - c) / den) if den > 0 else float(k)


def residual_by_shift(fit: LogFit, limit: int) -> tuple[dict, float]:
    """{k: RSS_k (D1)} over coarse shifts and every shift near the best; the refined best shift."""
    ok = _within_segment(fit, fit.rows, limit)
    rows, y = fit.rows[ok], fit.y[ok]
    a = np.einsum("inb,inc->bc", y, y)
    tau = fit.ready.tau

    def evaluate(ks):
        shifted = tau[rows[:, None] + np.asarray(ks)[None, :]]  # (m, K, n)
        b = np.einsum("inb,ikn->kb", y, shifted)
        c = np.einsum("ikn,ikn->k", shifted, shifted)
        betas = [pseudo_solve(a, b[j]) for j in range(len(ks))]
        return [float(c[j] - 2 * b[j] @ beta + beta @ a @ beta) for j, beta in enumerate(betas)]

    rss = searched_shifts(evaluate, limit, float)
    best = min(rss, key=rss.get)
    return rss, _parabola(best, rss)


def torque_delay(fit: LogFit) -> list[Finding]:
    if fit.est is None:
        return []
    limit = max(1, min(int(MAX_DELAY * fit.fs), (len(fit.ready) - 1) // 4))
    rss, shift = residual_by_shift(fit, limit)
    rows = len(fit.rows) * fit.robot.n
    delay = shift / fit.fs
    rms0, rms = np.sqrt(max(rss[0], 0.0) / rows), np.sqrt(max(min(rss.values()), 0.0) / rows)
    values = {"delay_s": delay, "samples": shift, "rms_residual_aligned": rms, "rms_residual_as_logged": rms0}
    if abs(shift) < 1.0 or rms > ALIGNED_RMS_RATIO * rms0:
        return []
    lag = "lags" if delay > 0 else "leads"
    return [Finding("torque delay", "alarm",
                    f"the torque {lag} the motion by {abs(delay) * 1e3:.3g} ms ({abs(shift):.3g} samples at "
                    f"{fit.fs:.4g} Hz): shifting it lowers the model's residual RMS from {rms0:.4g} to {rms:.4g} N m",
                    f"identify with --tau-delay {delay:.4g} (alias --delay: the torque logged at t + delay is the "
                    "one of the motion at t; result.json keeps it for predict and validate), or fix the logger's "
                    "time stamps", [], values)]


def _scale_cause(s: float, robot, j: int) -> str:
    for value, cause in ((180 / np.pi, "degrees per second (q in radians)"), (np.pi / 180, "q in degrees, dq in radians"),
                         (1000.0, "a time column in milliseconds"), (1e-3, "dq per millisecond"),
                         (robot.gear_ratios[j], "a motor-side velocity (gear ratio)"),
                         (1.0 / robot.gear_ratios[j], "a motor-side position (gear ratio)"), (-1.0, "opposite signs")):
        if abs(s / value - 1.0) < 0.05:
            return cause
    return "a unit or gain mismatch"


def velocity_column(fit: LogFit) -> list[Finding]:
    """Lag, scale and consistency of a logged dq column against d/dt(q) (module docstring)."""
    raw = fit.raw
    if raw.dq is None:
        return []
    logged = prepare(replace(raw, ddq=None, notes=[]), fit.prep).dq
    derived = fit.ready.dq
    limit = max(1, min(int(MAX_DELAY * fit.fs), (len(derived) - 1) // 4))
    index = fit.rows[_within_segment(fit, fit.rows, limit)]
    motion = np.sqrt(np.mean(derived[index] ** 2, axis=0))
    lags, scales, before, after = {}, {}, {}, {}
    for j in np.flatnonzero(motion > max(1e-3, 0.02 * motion.max())):
        e = derived[index, j] - derived[index, j].mean()
        ks, step = _shifts(limit)

        def corr(ks):
            x = logged[index[:, None] + np.asarray(ks)[None, :], j]
            x = x - x.mean(axis=0)
            return x.T @ e / np.maximum(np.linalg.norm(x, axis=0) * np.linalg.norm(e), 1e-300)

        r = dict(zip(ks.tolist(), np.abs(corr(ks))))
        k = max(r, key=r.get)
        fine = list(range(max(-limit, k - step), min(limit, k + step) + 1))
        r.update(zip(fine, np.abs(corr(fine))))
        k = max(r, key=r.get)
        lag = _parabola(k, {key: -v for key, v in r.items()})
        x = logged[index + k, j]
        lags[j], before[j], after[j] = lag, float(abs(corr([0])[0])), float(r[k])
        scales[j] = float(x @ derived[index, j] / max(derived[index, j] @ derived[index, j], 1e-300))
    out = []
    lagging = [j for j in lags if abs(lags[j]) >= 1.5 and after[j] - before[j] > 1e-3]
    if lagging:
        ms = [lags[j] / fit.fs * 1e3 for j in lagging]
        out.append(Finding(
            "velocity column lag", "alarm",
            f"the logged velocity of joint(s) {_joints(lagging)} lags d/dt(q) by {min(ms):.3g}..{max(ms):.3g} ms "
            f"({min(lags[j] for j in lagging):.3g}..{max(lags[j] for j in lagging):.3g} samples): correlation "
            f"{min(before[j] for j in lagging):.4f} as logged, {min(after[j] for j in lagging):.4f} after the shift",
            "--ignore dq: dynid then differentiates q with its zero-phase filter (a causally filtered velocity "
            "estimate lags the motion)",
            [int(j) + 1 for j in lagging], {"lag_ms": {str(j + 1): lags[j] / fit.fs * 1e3 for j in lags},
                                       "correlation_as_logged": {str(j + 1): before[j] for j in lags},
                                       "correlation_aligned": {str(j + 1): after[j] for j in lags}}))
    scaled = [j for j in scales if after[j] > 0.95 and abs(scales[j] - 1.0) > 0.05]
    if scaled:
        out.append(Finding("velocity column scale", "alarm",
                           "the logged velocity is " + ", ".join(f"{scales[j]:.4g} x d/dt(q{j + 1}) "
                                                                   f"({_scale_cause(scales[j], fit.robot, j)}?)"
                                                                   for j in scaled)
                           + f" (correlation at least {min(after[j] for j in scaled):.4f})",
                           "give the logged columns in SI units on the joint side (--degrees, --time-unit, "
                           "--motor-side), or --ignore dq", [int(j) + 1 for j in scaled],
                           {"scale": {str(j + 1): scales[j] for j in scaled}}))
    unrelated = [j for j in scales if after[j] < 0.9]
    if unrelated:
        out.append(Finding("velocity column", "alarm",
                           "the logged velocity of joint(s) " + _joints(unrelated) + " does not follow d/dt(q) "
                           f"(best correlation {max(after[j] for j in unrelated):.3f} over shifts of up to "
                           f"{MAX_DELAY * 1e3:.0f} ms)",
                           "check which signal the column holds; --ignore dq so that dynid differentiates q",
                           [int(j) + 1 for j in unrelated], {"correlation": {str(j + 1): after[j] for j in unrelated}}))
    return out


def _within_segment(fit: LogFit, rows: np.ndarray, limit: int) -> np.ndarray:
    """(m,) rows whose shifts by up to ``limit`` samples stay inside the log and their segment."""
    n_rows = len(fit.ready)
    ok = (rows - limit >= 0) & (rows + limit < n_rows)
    segment = fit.ready.segment
    if segment is not None:
        lo, hi = np.clip(rows - limit, 0, n_rows - 1), np.clip(rows + limit, 0, n_rows - 1)
        ok &= (segment[lo] == segment[rows]) & (segment[hi] == segment[rows])
    return ok


def _joints(js) -> str:
    return ", ".join(str(j + 1) for j in sorted(js))
