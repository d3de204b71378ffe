"""``--regularize auto``: the weight of the entropic prior (regularized.py, eq. R2) chosen by
blocked cross-validation of the held-out torque error.

The folds are those of ``--lowpass auto`` (crossval.py, steps 1-2: contiguous blocks of time,
files and segments kept apart, gaps around cuts inside a piece, at most ``BUDGET`` rows of a
long log), preprocessed with the chosen cutoff. For each candidate weight w and each fold k,
the regularized estimate is refitted on the other folds (their normal equations: the sum minus
fold k) and scored on fold k by its residual from the fold's sums alone (crossval.py, CV1):

    RSS_k(w) = C_k - 2 B_k^T beta_-k(w) + beta_-k(w)^T A_k beta_-k(w)
    score(w) = sqrt(sum_k RSS_k(w) / sum_k C_k)                                     (R4)

the held-out relative torque error of all joints. The score falls as w falls, down to the
plateau where the data decide alone; the chosen weight is the largest whose score is within
``TIE`` of the smallest (the data cannot tell such weights apart, and the larger keeps more of
the prior). A small weight leaves the directions the data do not see at the prior all the same
(only the divergence acts there); the score decides the weakly determined ones. The search
walks decades from ``START``: down while a tenth of the weight scores better by more than
``TIE``, or, when already on the plateau, up while the score stays on it (within
``GRID_LIMITS``); then the weight sqrt(10) above the chosen one is tried. A typical log needs
4-5 weights x the folds refits.
The least-squares refits (OLS, the undetermined parameters held alike: crossval.py's
``held_out_score``) are scored alongside, for comparison (``ols_score``).

Base parameters that joints held still leave undetermined (undetermined.py, on the folds'
position ranges as crossval.py finds them) are held at the description's values in every refit,
as in the final fit. One estimator (one compiled convex program, regularized.py) serves every
fold and weight.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from dynid.data.blocks import pieces, read_blocks
from dynid.data.columns import ColumnMapping
from dynid.data.preprocess import Preprocessing, edge_samples, sample_rate
from dynid.errors import DataError, IllConditionedError
from dynid.identify.base import BaseParameters, identifiability_table
from dynid.identify.crossval import (
    BUDGET, FOLDS, _undetermined, fold_equations, fold_labels, held_out_score,
)
from dynid.identify.model import ModelOptions
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.regularized import EntropicPhysicallyConsistent
from dynid.identify.threads import single_blas_thread
from dynid.identify.undetermined import STILL_RANGE, Undetermined

START = 1e2  # the first weight tried (with START / 10)
GRID_LIMITS = (1e-4, 1e7)  # the weights tried stay within these
TIE = 1e-3  # scores within this share of the best are a tie: the largest weight wins


@dataclass
class WeightSelection:
    """Outcome of the cross-validation (``to_dict`` is what result.json stores as "regularization")."""

    chosen: float
    weights: list[float]
    scores: list[float | None]
    ols_score: float | None
    folds: int
    samples: int
    failures: dict = field(default_factory=dict)
    cpu_seconds: float = 0.0

    @property
    def edge(self) -> str | None:
        """"upper" when the chosen weight is the largest the search may try (the data do not move
        the link inertials off the description's by more than the score can see), "lower" for the
        smallest, else None."""
        if self.chosen == max(self.weights) and self.chosen * 10 > GRID_LIMITS[1]:
            return "upper"
        if self.chosen == min(self.weights) and self.chosen / 10 < GRID_LIMITS[0]:
            return "lower"
        return None

    def to_dict(self) -> dict:
        order = np.argsort(self.weights)
        return {"divergence": "entropic (log-det) divergence of pseudo-inertias, Lee, Wensing & Park 2020",
                "weight": self.chosen, "chosen_by": "blocked cross-validation",
                "criterion": "held-out relative torque error, all joints (refit without the fold)",
                "weights": [self.weights[k] for k in order], "scores": [self.scores[k] for k in order],
                "ols_score": self.ols_score, "edge": self.edge, "folds": self.folds, "samples": self.samples,
                "failures": self.failures, "cpu_seconds": self.cpu_seconds}


def held_out_scores(estimator, parts: list[NormalEquations], weights) -> tuple[dict, dict]:
    """({w: score (R4) or None}, {w: why it failed}) of the regularized ``estimator`` refitted with
    each weight on the complement of each fold in ``parts``."""
    total = sum(parts[1:], parts[0].copy())
    trains = [total - p for p in parts]
    scores, failures = {}, {}
    for w in weights:
        rss = 0.0
        try:
            for part, train in zip(parts, trains):
                estimator.weight = float(w)
                rss += float(part.residual_ss(estimator.fit_normal_equations(train).coef_).sum())
            scores[float(w)] = math.sqrt(rss / max(float(total.C.sum()), 1e-300))
        except IllConditionedError as exc:  # a fold's complement the program cannot fit
            scores[float(w)], failures[f"{w:.3g}"] = None, str(exc)
    return scores, failures


def select_weight(estimator, parts: list[NormalEquations], found: Undetermined | None = None) -> WeightSelection:
    """The weight of the module docstring for the ``EntropicPhysicallyConsistent`` ``estimator``
    (left fitted on the last fold tried; refit it on all data with the chosen weight); ``found``:
    the base parameters held at the description's values (by the estimator's ``fixed``), held in
    the least-squares refits too."""
    cpu = time.process_time()
    scores, failures = {}, {}

    def score(w: float) -> float | None:
        if w not in scores:
            got, why = held_out_scores(estimator, parts, [w])
            scores.update(got)
            failures.update(why)
        return scores[w]

    def tied(a, b) -> bool:  # a is no better than b by more than TIE (None: a failed)
        return a is None or (b is not None and a >= b * (1 - TIE))

    w = START
    if tied(score(w / 10), score(w)):  # already on the plateau of the data: go up while it stays there
        while w * 10 <= GRID_LIMITS[1] and not _rises(score(w * 10), scores):
            w *= 10
    else:  # the prior still costs accuracy: go down until the score stops improving
        w /= 10
        while w / 10 >= GRID_LIMITS[0] and not tied(score(w / 10), score(w)):
            w /= 10
    if not any(v is not None for v in scores.values()):
        raise DataError("--regularize auto: no weight could be scored (every refit without a fold failed: "
                        f"{next(iter(failures.values()))}); give --regularize WEIGHT")
    chosen = _largest_tied(scores)
    if chosen * math.sqrt(10) <= GRID_LIMITS[1]:
        score(chosen * math.sqrt(10))  # between the chosen decade and the next
    chosen = _largest_tied(scores)
    try:
        with single_blas_thread():
            ols = held_out_score(parts, None, float("inf"), found)[0]
    except IllConditionedError:
        ols = None
    return WeightSelection(chosen, list(scores), list(scores.values()), ols, len(parts),
                           int(sum(int(p.rows.max()) for p in parts)), failures, time.process_time() - cpu)


def _rises(value, scores: dict) -> bool:
    """``value`` is worse than the best score so far by more than TIE (None: failed)."""
    low = min((v for v in scores.values() if v is not None), default=None)
    return value is None or low is None or value > low * (1 + TIE)


def _largest_tied(scores: dict) -> float:
    valid = {w: s for w, s in scores.items() if s is not None}
    low = min(valid.values())
    return max(w for w, s in valid.items() if s <= low * (1 + TIE))


def fold_normal_equations(robot, paths, options: ModelOptions, base: BaseParameters, prep: Preprocessing,
                          mapping: ColumnMapping = ColumnMapping(), nan: str = "drop", folds: int = FOLDS,
                          chunk_rows: int = 50_000, still_range: float = STILL_RANGE
                          ) -> tuple[list[NormalEquations], Undetermined]:
    """(per-fold normal equations, the base parameters joints held still leave undetermined
    there) of the log file(s) ``paths`` preprocessed with ``prep`` (module docstring: the folds
    and the still joints of crossval.py)."""
    paths = [paths] if isinstance(paths, str) or not hasattr(paths, "__iter__") else list(paths)
    share = max(BUDGET // len(paths), 1)
    blocks = pieces([b for p in paths for b in read_blocks(p, robot, mapping, nan, share, folds, chunk_rows, prep)])
    blocks = [b for b in blocks if len(b) >= 3]
    if not blocks:
        raise DataError(f"{paths[0]}: no usable rows for the cross-validation of --regularize")
    fs = sample_rate(blocks[0].t)
    trim_prep = replace(prep, trim=None)
    trim = edge_samples(trim_prep, fs / prep.decimate) * prep.decimate
    blocks = [b for b in blocks if len(b) > 2 * trim + 2]
    if not blocks:
        raise DataError(f"{paths[0]}: every piece of the log is shorter than the filter edges; give --regularize "
                        "WEIGHT")
    cutoff = prep.lowpass_hz or min(20.0, fs / 10.0)
    gap = min(math.ceil(fs / cutoff), max(sum(len(b) for b in blocks) // (20 * folds), 1))
    labels = fold_labels([len(b) for b in blocks], folds, gap)
    with single_blas_thread():
        parts = fold_equations(robot, blocks, labels, options, base, prep, trim_prep, folds,
                               identifiability_table(robot, options))
    empty = [k for k, p in enumerate(parts) if int(p.rows.sum()) == 0]
    if empty:
        raise DataError(f"{paths[0]}: the log is too short for {folds}-fold cross-validation of --regularize (fold "
                        f"{empty[0] + 1} is empty); give --regularize WEIGHT or fewer --cv-folds")
    return parts, _undetermined(robot, options, base, blocks, trim, still_range)


def choose_weight(robot, paths, options: ModelOptions, base: BaseParameters, prep: Preprocessing,
                  mapping: ColumnMapping = ColumnMapping(), nan: str = "drop", folds: int = FOLDS,
                  chunk_rows: int = 50_000, still_range: float = STILL_RANGE, **estimator_options) -> WeightSelection:
    """``--regularize auto`` on the log file(s) ``paths``: the folds (``fold_normal_equations``),
    a regularized pc estimator (``estimator_options``: max_condition, bound, ... as for
    ``pipeline.make_estimator``) holding what joints held still leave undetermined, and the
    weight chosen by ``select_weight``."""
    parts, found = fold_normal_equations(robot, paths, options, base, prep, mapping, nan, folds, chunk_rows,
                                         still_range)
    held = found.options() if found else {}
    estimator = EntropicPhysicallyConsistent(base.names, robot=robot, options=options, base=base, weight=1.0,
                                             **held, **estimator_options)
    return select_weight(estimator, parts, found)
