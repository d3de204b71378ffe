"""The torque channel's delay chosen on the log (``identify --tau-delay auto``, the default).

A drive that filters its current or torque before logging it, or a logger that stamps the
torque and the positions in different threads, writes tau a few milliseconds after the motion
it belongs to. Fitted as logged, the model must explain tau(t) = tau_true(t - d) ~ tau_true(t) -
d dtau/dt with terms that have no time derivative in them: an error of d |dtau/dt|, which at
12 ms on a 1 Hz motion is ~7 % of the torque (bench/real_defaults.py --cases delay: 3.4 %
held out against 0.31 % with the delay given, 10.9x).

The delay is found as ``dynid diagnose`` measures it (``identify.diagnose.timing`` D1): with the
base regressor W fixed at the motion samples i, a torque shifted by k samples only changes the
right-hand side, B_k = sum_i W_i^T tau_{i+k}. Here it is scored held out, by blocked
cross-validation over contiguous folds f (the normal equations of the other folds by
subtraction, ``identify.normal_equations``):

    beta_{k,-f} = (A - A_f)^-1 (B_k - B_{k,f})                                           (T1)
    E_{k,f}     = C_{k,f} - 2 B_{k,f}^T beta_{k,-f} + beta_{k,-f}^T A_f beta_{k,-f}          (T2)

(C_{k,f} = sum over fold f of |tau_{i+k}|^2). The shift k* with the least E_k = sum_f E_{k,f}
is applied only when

- it explains most of the held-out residual: sqrt(E_k* / E_0) < 0.7, the rule by which
  ``dynid diagnose`` reports a delay (``diagnose.timing.ALIGNED_RMS_RATIO``). A shift that
  removes less would cut the held-out error by less than 30 %, and the shifts that model error
  prefers do remove a few percent: the random torques held at rest on a log resting half the
  time (-35 ms, 3 %) or jittered stamps (-26 ms, 3 %) made the prediction 3x worse once applied
  (bench/real_defaults.py --cases longrest,dupstamp); the undeclared 12 ms of ``--cases delay``
  removes 96 %;
- and it beats k = 0 by more than one standard error of the fold differences
  sum_f (E_{0,f} - E_{k*,f}) (the one-standard-error rule, Hastie, Tibshirani & Friedman, The
  Elements of Statistical Learning, 2nd ed., sec. 7.10).

Whole samples only (``data.preprocess`` step 3b moves tau by whole samples). The search covers
+-``MAX_DELAY`` (a torque that leads the positions, a position filter's lag, is a negative delay).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dynid.errors import DataError

FOLDS = 5


def held_out_by_shift(fits: list, limit: int, folds: int = FOLDS) -> dict[int, np.ndarray]:
    """{k: (folds,) held-out residual sums E_{k,f} (T1-T2)} over coarse shifts of up to ``limit``
    samples and every shift around the best, pooled over ``fits`` (``diagnose.context.LogFit``
    of the same rate; fold f pools the f-th contiguous block of each)."""
    from dynid.identify.diagnose.timing import _within_segment, searched_shifts
    from dynid.identify.normal_equations import spectrum

    pieces = []  # (fold, y, rows, tau)
    for fit in fits:
        ok = _within_segment(fit, fit.rows, limit)
        rows, y = fit.rows[ok], fit.y[ok]
        for f, part in enumerate(np.array_split(np.arange(rows.size), folds)):
            pieces.append((f, y[part], rows[part], fit.ready.tau))
    b_cols = pieces[0][1].shape[2]
    a_f = np.zeros((folds, b_cols, b_cols))
    for f, y, _, _ in pieces:
        a_f[f] += np.einsum("inb,inc->bc", y, y)
    a = a_f.sum(axis=0)
    other = [spectrum(a - a_f[f]).pseudo_inverse() for f in range(folds)]  # (A - A_f)^+, the same for every k

    def evaluate(ks):
        b_f = np.zeros((folds, len(ks), b_cols))
        c_f = np.zeros((folds, len(ks)))
        for f, y, rows, tau in pieces:
            shifted = tau[rows[:, None] + np.asarray(ks)[None, :]]  # (m, K, n)
            b_f[f] += np.einsum("inb,ikn->kb", y, shifted)
            c_f[f] += np.einsum("ikn,ikn->k", shifted, shifted)
        b = b_f.sum(axis=0)
        held = np.empty((len(ks), folds))
        for f in range(folds):
            beta = (b - b_f[f]) @ other[f]  # (K, b): (T1), A^+ symmetric
            held[:, f] = c_f[f] - 2.0 * np.sum(b_f[f] * beta, axis=1) + np.einsum("kb,bc,kc->k", beta, a_f[f], beta)
        return list(held)  # (T2)

    return searched_shifts(evaluate, limit, np.sum)


def chosen_shift(scores: dict[int, np.ndarray]) -> tuple[int, float, float]:
    """(k applied, the held-out gain sum_f (E_0 - E_k*), one standard error of it): k* when it
    explains most of the held-out residual and its gain exceeds one standard error (module
    docstring), else 0."""
    from dynid.identify.diagnose.timing import ALIGNED_RMS_RATIO

    best = min(scores, key=lambda k: scores[k].sum())
    diff = scores[0] - scores[best]
    gain = float(diff.sum())
    se = float(np.sqrt(diff.size) * np.std(diff, ddof=1)) if diff.size > 1 else np.inf
    most = scores[best].sum() < ALIGNED_RMS_RATIO ** 2 * scores[0].sum()
    return (best if best != 0 and most and gain > se else 0), gain, se


def choose_tau_delay(robot, sources: list, prep, mapping, nan: str = "drop") -> tuple[float, dict]:
    """(delay [s] to apply, result.json "delay_selection") for ``sources`` under ``prep`` (its own
    tau_delay ignored): the module docstring's rule on at most ``diagnose.context.BUDGET`` rows of
    each source (pooled over the sources of the first one's rate)."""
    from dynid.identify.diagnose.context import log_fit
    from dynid.identify.diagnose.timing import MAX_DELAY

    method = ("held-out residual of the torque shifted by whole samples (blocked cross-validation, "
              f"{FOLDS} folds): applied when its RMS falls below 0.7 of the logged one's by more than one "
              "standard error; diagnose's fit, coulomb-viscous with offsets")
    fits = []
    for source in sources:
        try:
            fit = log_fit(robot, source, mapping, nan, prep=replace(prep, lowpass_hz=None, tau_delay=0.0))
        except DataError:
            continue
        if fit.est is not None and (not fits or abs(fit.fs - fits[0].fs) < 1e-6 * fit.fs):
            fits.append(fit)
    if not fits:
        return 0.0, {"delay_s": 0.0, "method": method, "note": "no log could be fitted: no delay applied"}
    fs = fits[0].fs
    limit = min([int(MAX_DELAY * fs)] + [(len(fit.ready) - 1) // 4 for fit in fits])
    if limit < 1 or sum(fit.rows.size for fit in fits) < 4 * FOLDS:
        return 0.0, {"delay_s": 0.0, "method": method, "note": "log too short to compare shifts: no delay applied"}
    scores = held_out_by_shift(fits, limit)
    k, gain, se = chosen_shift(scores)
    best = min(scores, key=lambda s: scores[s].sum())
    return k / fs, {"delay_s": k / fs, "samples": int(k), "rate_hz": fs, "best_samples": int(best),
                    "held_out_as_logged": float(scores[0].sum()), "held_out_gain": gain, "standard_error": se,
                    "method": method}
