"""Held-out validation of a fleet group, from normal equations alone (no second pass).

A group's normal equations are the sum of those of its folds (each file, or each block of
time of its one file), so leaving a fold k out is a subtraction, and the residual of any
parameter vector beta on fold k follows from fold k's own sums, per joint j
(``NormalEquations.residual_ss``; thesis eq. 2.9 written with sums):

    beta_-k = the group's fit on (A - A_k, B - B_k, C - C_k)                        (V1)
    RSS_kj  = C_kj - 2 B_kj^T beta_-k + beta_-k^T A_kj beta_-k                      (V2)

    validation_rmsd_j          = sqrt(sum_k RSS_kj / sum_k r_kj)          (thesis eq. 5.1, held out)
    validation_relative_rmsd_j = validation_rmsd_j / sqrt(sum_k C_kj / sum_k r_kj)
    validation_relative_error  = sqrt(sum_kj RSS_kj / sum_kj C_kj)

The refit (V1) is the group's own: the same estimator, and the base parameters the group's
data leave undetermined (``identify.undetermined``) keep the same prior values in every refit.

Folds (``fold_plan``, fixed when the tasks are made, so a fold's equations are summed where
its files are read and at most ``MAX_FOLDS`` sets travel with a group):

- two or more readable files: leave one file out (with more than ``MAX_FOLDS`` files, runs of
  consecutive files: file i of F is in fold i * MAX_FOLDS // F);
- one file: ``TIME_FOLDS`` contiguous blocks of equal duration of its time span (Parquet
  statistics), never random samples (neighbouring samples are correlated: blocked
  cross-validation, as ``identify.crossval``). The blocks only cut the sums: filters and
  derivatives run over the whole file as in the group's fit, so a filter's impulse response
  (about fs / f_c samples) couples the two sides of a cut; unlike ``identify.crossval`` no
  gap is left out there, which is negligible against blocks of minutes, not against blocks
  of a few filter lengths.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DynidError

MAX_FOLDS = 10
TIME_FOLDS = 5


def fold_plan(spans: list[tuple[float | None, float | None]]) -> list[tuple[int, tuple[float, ...]]]:
    """Per readable file of a group (its time span from the footer): (first fold, block cut
    times) (module docstring). A single file without a time span gets no cuts (one fold:
    no validation)."""
    count = len(spans)
    if count == 1:
        t0, t1 = spans[0]
        if t0 is None or t1 is None or not t1 > t0:
            return [(0, ())]
        return [(0, tuple(float(t0 + (t1 - t0) * k / TIME_FOLDS) for k in range(1, TIME_FOLDS)))]
    return [(i * min(count, MAX_FOLDS) // count, ()) for i in range(count)]


def add_folds(into: dict, first: int, blocks) -> None:
    """Add a file's block equations (``blocks``: its folds from ``first`` on) to ``into``
    (fold -> NormalEquations)."""
    for k, ne in enumerate(blocks):
        if first + k in into:
            into[first + k] += ne
        else:
            into[first + k] = ne.copy()


def fold_kind(files: int) -> str:
    """What the folds of a group of ``files`` readable files are."""
    if files == 1:
        return f"{TIME_FOLDS} blocks of time of its file"
    return "leave one file out" if files <= MAX_FOLDS else f"{MAX_FOLDS} runs of consecutive files"


def held_out(folds: dict, refit, kind: str = "") -> dict:
    """Validation figures (module docstring) of folds (fold -> NormalEquations); ``refit(ne)``
    returns the group's fit's beta on ``ne``. Keys of the result: validation_rmsd,
    validation_relative_rmsd (lists per joint), validation_relative_error, validation_folds,
    validation_kind (``kind``); and ``validation_error`` (why there are none) when there are
    fewer than two folds or a refit fails."""
    parts = [folds[k] for k in sorted(folds) if int(folds[k].rows.sum()) > 0]
    out = {"validation_rmsd": None, "validation_relative_rmsd": None, "validation_relative_error": None,
           "validation_folds": len(parts), "validation_kind": kind}
    if len(parts) < 2:
        out["validation_error"] = "fewer than 2 folds with samples (one file without a time span)"
        return out
    total = sum(parts[1:], parts[0].copy())
    rss = np.zeros(total.n)
    try:
        for k, part in enumerate(parts):
            rss += part.residual_ss(refit(total - part))                               # (V1), (V2)
    except (DynidError, np.linalg.LinAlgError) as exc:
        out["validation_error"] = f"the refit without fold {k + 1} of {len(parts)} failed: {' '.join(str(exc).split())}"
        return out
    rows = np.maximum(total.rows, 1)
    rmsd = np.sqrt(rss / rows)
    rms_tau = np.sqrt(total.C / rows)
    out["validation_rmsd"] = [float(v) for v in rmsd]
    out["validation_relative_rmsd"] = [float(v) if np.isfinite(v) else None
                                       for v in np.where(rms_tau > 0, rmsd / np.where(rms_tau > 0, rms_tau, 1), np.nan)]
    out["validation_relative_error"] = float(np.sqrt(rss.sum() / max(float(total.C.sum()), 1e-300)))
    return out
