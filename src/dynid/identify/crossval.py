"""``--lowpass auto``: the low-pass cutoff chosen from the data by blocked cross-validation.

The cutoff trades two errors. Too high, and the noise of q (encoder quantization, sensor
noise) is differentiated twice into ddq: the regressor is noisy, the estimate biased
(errors in variables) and the prediction noisy. Too low, and the filter distorts the motion
itself. Where the optimum lies depends on the noise, the sample rate and the bandwidth of the
motion, so it is measured on the log rather than guessed:

1. folds: the training log (or, past ``budget`` rows, ``count`` evenly spread blocks of it,
   ``data.blocks.read_blocks``; several files in order; every file and block cut at its
   segment boundaries, ``data.segments``) is cut into K folds of *contiguous* time, never random
   samples, because neighbouring samples are correlated (blocked cross-validation for
   dependent data: Burman, Chow & Nolan 1994, Biometrika 81(2); Bergmeir & Benitez 2012,
   Information Sciences 191). Around a cut inside a block, ``gap`` samples on each side
   belong to no fold (h-block cross-validation, Burman et al.); a cut near the boundary of a
   file, segment or block (within a quarter of a fold) moves onto it, so that with enough
   files or segments the folds are whole ones (blocks of a long log are folds of their own).
   When rest detection found rests (``data.rest``), the cuts share out the *moving* rows (some
   joint not still, ``data.still`` R2-R3) equally rather than all rows: a fold that holds only
   rest says nothing of the cutoff (q is constant there, whatever the filter), and when it is
   the motion that is left out, the other folds cannot determine the parameters, so every
   candidate scores the same nonsense. The real iiwa's log cut to its first 20 s (one 2 s
   move, then rest; ``bench/real_defaults.py --cases iiwashort``): four of the five folds of
   equal rows held no motion and the choice, 1.86 Hz, predicted the other log 610 % off (the
   best hand setting: 18 %); with folds of equal motion, 28 Hz and 37 %. The shortest fold then
   bounds the grid (step 5);
2. per candidate cutoff f_c, each block is preprocessed exactly as ``identify`` does
   (``prepare`` with lowpass_hz = f_c), and its base regressor and torques go into one set of
   per-joint normal equations per fold, (A_k, B_k, C_k) (``RegressorGram``, the accumulator
   of the streaming path), over the samples every candidate keeps (the filter edges of the
   lowest cutoff are left out for all, so all candidates are scored on the same samples);
3. leave one fold out by subtraction: beta_-k = least squares of (A - A_k, B - B_k), and the
   held-out residual of fold k from its sums alone,
       RSS_k = C_k - 2 B_k^T beta_-k + beta_-k^T A_k beta_-k                        (CV1)
   The refit is the one ``identify`` makes. The base parameters that the log cannot determine
   because joints are held still (``identify.undetermined``: the same ``find_undetermined`` on
   the position ranges of the blocks, the same ``--still-range``) keep the description's values
   and only the others are fitted (``NormalEquations.reduce``): on the real iiwa, whose joints 1-2
   stand within 0.02-0.04 rad, least squares would otherwise fit the directions their tiny motion
   barely excites to noise in every refit. What the other folds still leave free (a joint that
   moves in one fold only) is solved with minimum norm (``physical.pseudo_solve``), so it does
   not stop the choice;
4. score(f_c) = sqrt(sum_k RSS_k / sum_k C_k), the held-out relative torque error of all
   joints (what ``validate`` prints as the relative error), against the measured torque: its
   noise adds the same expected amount to every candidate's score, so the order of the
   candidates is that of their error against the true torque;                      (CV2)
5. grid: a coarse logarithmic grid (steps of at most a factor 2) from f_lo to f_hi, then the
   two neighbours of the best at a factor sqrt 2. A best candidate on the edge of the grid
   extends it by one step in that direction while that improves the score (between
   max(0.1 Hz, f_lo's fold bound below) and 0.4 fs). Without knowledge of the motion f_lo =
   0.5 Hz and f_hi = min(50 Hz, 0.4 fs); when the excitation trajectory is known, its highest
   harmonic f_max narrows it to [2 f_max, min(40 f_max, 0.4 fs)] (the 4th-order Butterworth
   run forward and backward has the gain 1 / (1 + (f / f_c)^8) >= 0.996 for f <= f_c / 2).
   The folds bound f_lo, not the pieces: a fold of duration T_k must hold ``FOLD_PERIODS`` = 2
   periods of the lowest cutoff, f_lo >= 2 / T_k (its filter settles within the fold and its
   edges, fs / (2 f_c) samples since the filter has no start-up transient, ``data.edges``, take
   a quarter of it), and each fold must keep one period 1 / f_lo after the edges (a 9 s log at
   5 kHz: five folds of 1.8 s, f_lo = 1.1 Hz; before, a fixed second per fold and f_lo >= 30 /
   piece duration refused it, and a log cut into 5 s pieces by dropped cycles started the grid
   at 6 Hz). Pieces shorter than both edges of the lowest cutoff are left out;
6. choice: the lowest score, then among the candidates tied with it (the excess of held-out
   RSS, summed over the folds, within one standard error of that sum, estimated from the
   fold-by-fold differences: the one-standard-error rule, Hastie, Tibshirani & Friedman 2009,
   The Elements of Statistical Learning, sec. 7.10; paired differences, so each fold's own
   difficulty cancels) the *lowest at or above k B*, k = ``MOTION_MARGIN`` = 5 times the
   motion's bandwidth B, or the *highest* when the tie stays below k B. B is the excitation's
   highest harmonic when it is known, else the occupied bandwidth of the moving joints' q
   (``data.bandwidth``, B1-B2); k B itself is scored when the tie reaches above it. Why: a tie
   means the torque's noise hides the model's error (a 6 s, 5 kHz motor-side log: scores flat
   within 0.3 % from 3.3 to 25 Hz, model errors 10-20 x below the torque noise), so the folds
   cannot say which of the tied cutoffs is right, and physics can: what q holds above the
   motion's band is quantization, noise and the arm's vibration, none of it rigid-body motion,
   and each hertz of passband above it lets more of it into ddq (in that log a 30-40 Hz mode:
   25 Hz passes 20 % of it at 30 Hz). Below k B the filter distorts the motion: its gain
   1 / (1 + (f / f_c)^8) (4th order, forward and backward) misses 0.4 % of the top harmonic at
   f_c = 2 B, 2.6e-6 at 5 B; on that log (B = 1.375 Hz) the held-out error at 3 Hz = 2.2 B is
   1.4 x that at 6 Hz on interior rows and 3 x on all rows of a 3 s file (its edges: the lower
   the cutoff, the longer they are). k = 5 is the low end of the common practice of a cutoff
   5-10 x the motion's highest frequency (a rule of thumb; neither the thesis nor the seed
   papers give one; ``bench/cutoff_tie.py`` compares k = 3, 5, 10 and the old rule). A tie
   below k B keeps the old rule, the highest tied cutoff (less distortion, shorter edges); a
   cutoff the folds clearly reject is never taken for being above k B. result.json records B,
   its source and k B (``lowpass_selection.grid``: motion_bandwidth_hz,
   motion_bandwidth_source, passband_hz). The same search runs with the torque
   low-passed like the positions (Gautier's parallel filtering, ``Preprocessing.filter_torque``,
   ``prepare`` step 2b): the fit then uses the filtered torque, the score is still against the
   measured one (CV2 holds: the model's prediction is compared with the same data in both
   modes). Parallel filtering is kept only when its best beats the measured torque's best by
   more than a tie and by 1 % of the held-out RSS (its noise is no longer white, which the
   standard deviations assume; on the real iiwa it is consistently but only 0.05 % better).

The final fit then runs once more on the whole log with the chosen cutoff (the streaming
path), so the cost is one pass over at most ``budget`` rows per candidate, plus the fit.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dynid.data.bandwidth import motion_bandwidth
from dynid.data.blocks import pieces, read_blocks
from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import Preprocessing, edge_mask, edge_samples, prepare, sample_rate
from dynid.errors import DataError, IllConditionedError
from dynid.identify.threads import single_blas_thread
from dynid.identify.base import BaseParameters, identifiability_table
from dynid.identify.gram import RegressorGram
from dynid.identify.model import ModelOptions, own_columns
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.physical import pseudo_solve
from dynid.identify.pipeline import BLOCK, add_with_rests, stream_workers
from dynid.identify.rest_levels import RestLevels
from dynid.identify.undetermined import STILL_RANGE, Undetermined, find_undetermined

FOLDS = 5
BUDGET = 240_000  # rows of a long log the choice is made on
FOLD_PERIODS = 2.0  # a fold spans at least this many periods of the lowest cutoff (step 5)
MOTION_MARGIN = 5.0  # k of step 6: a tie goes down to k x the motion's bandwidth, not below
TORQUE_FILTER_GAIN = 0.01  # parallel filtering must lower the held-out RSS by this share, and beyond a tie (step 6)


class CrossValidationError(DataError):
    """The log cannot be cut into the folds cross-validation needs (``rate``: the log's sample
    rate [Hz] when known, for the fallback cutoff)."""

    def __init__(self, message: str, rate: float | None = None):
        super().__init__(message)
        self.rate = rate


@dataclass
class LowpassSelection:
    """Outcome of the cross-validation (``to_dict`` is what result.json stores)."""

    chosen_hz: float
    candidates_hz: list[float]
    scores: list[float | None]
    folds: int
    blocks: int
    samples: int
    grid: dict
    failures: dict = field(default_factory=dict)
    cpu_seconds: float = 0.0
    undetermined: list[str] = field(default_factory=list)
    filter_torque: bool = False
    torque_filtered: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        order = np.argsort(self.candidates_hz)
        return {"method": "blocked cross-validation", "chosen_hz": self.chosen_hz,
                "criterion": "held-out relative torque error, all joints (OLS refit without the fold)",
                "candidates_hz": [self.candidates_hz[k] for k in order],
                "scores": [self.scores[k] for k in order], "folds": self.folds, "blocks": self.blocks,
                "samples": self.samples, "grid": self.grid, "failures": self.failures,
                "cpu_seconds": self.cpu_seconds, "undetermined": list(self.undetermined),
                "filter_torque": self.filter_torque, "torque_filtered": dict(self.torque_filtered)}


def cutoff_grid(fs: float, fold_seconds: float, bandwidth: float | None = None,
                floor: float = 0.0) -> tuple[np.ndarray, dict]:
    """Coarse candidate cutoffs [Hz] (module docstring, step 5) and a description of the grid;
    fold_seconds: the duration of one fold (the lowest cutoff keeps ``FOLD_PERIODS`` periods in it);
    floor: a lowest cutoff the folds' edges impose (``select_lowpass``)."""
    top = 0.4 * fs
    if bandwidth is not None and bandwidth > 0:
        lo, hi = 2.0 * bandwidth, min(40.0 * bandwidth, top)
        source = f"excitation bandwidth {bandwidth:.4g} Hz"
    else:
        lo, hi = 0.5, min(50.0, top)
        source = "sample rate and log length (excitation unknown)"
    lo = min(max(lo, lowest_cutoff(fold_seconds), floor), hi)
    steps = max(1, math.ceil(math.log2(hi / lo))) if hi > lo else 0
    grid = lo * (hi / lo) ** (np.arange(steps + 1) / max(steps, 1)) if steps else np.array([lo])
    return grid, {"low_hz": float(lo), "high_hz": float(hi), "source": source, "fold_seconds": float(fold_seconds)}


def lowest_cutoff(fold_seconds: float) -> float:
    """The lowest cutoff [Hz] a fold of ``fold_seconds`` can score: ``FOLD_PERIODS`` of its periods
    fit in the fold (its filter settles, and its edges, fs / (2 f_c) samples, are a quarter of it)."""
    return FOLD_PERIODS / max(fold_seconds, 1e-9)


def fold_labels(lengths: list[int], folds: int, gap: int, weights: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Fold of every row of consecutive pieces (-1: in a gap). The rows are cut into ``folds``
    runs of about equal count (with ``weights``, (m,) per piece: of about equal total weight,
    e.g. the moving rows, step 1); a cut within a quarter of a fold of a piece boundary (another
    file or segment, or a block of a long log) moves onto it, otherwise ``gap`` rows on each
    side of the cut belong to no fold (module docstring, step 1)."""
    total = sum(lengths)
    bounds = np.cumsum([0] + list(lengths))
    if weights is None:  # every row weighs one: the cuts share out the rows
        weights = [np.ones(m) for m in lengths]
    mass = np.concatenate([np.zeros(1), np.cumsum(np.concatenate(weights).astype(float))])  # (total + 1,)
    at = mass[bounds]  # the weight up to each piece boundary
    targets = np.arange(1, folds) * mass[-1] / folds
    rows_at = np.searchsorted(mass, targets, side="left")  # the row where each share is reached
    span = 0.25 * (at[-1] / folds)
    cuts = []
    for c, r in zip(targets, rows_at):
        k = int(np.argmin(np.abs(at - c)))
        cuts.append((int(bounds[k]), True) if abs(at[k] - c) <= span else (int(r), False))
    edges = np.array([0] + [c for c, _ in cuts] + [total])
    labels = []
    for m, offset in zip(lengths, bounds[:-1]):
        g = offset + np.arange(m)
        lab = np.searchsorted(edges, g, side="right") - 1
        for c, on_boundary in cuts:
            if not on_boundary:
                lab[np.abs(g - c) < gap] = -1
        labels.append(np.minimum(lab, folds - 1))
    return labels


def moving_rows(blocks: list[JointData], prep: Preprocessing) -> list[np.ndarray] | None:
    """(m,) per block: True where some joint moves (not still by its rest band, ``data.still``
    R2-R3), the weights of motion-balanced folds (step 1); None without rest bands or when the
    blocks hold no rest (every row moves: the folds of equal row counts)."""
    if not prep.rest_band:
        return None
    from dynid.data.still import REST_WINDOW, still_mask

    out = [~np.all(still_mask(b.q, sample_rate(b.t), prep.rest_band, prep.rest_window or REST_WINDOW), axis=1)
           for b in blocks]
    moving = sum(int(m.sum()) for m in out)
    return None if moving == 0 or moving == sum(m.size for m in out) else out


def shortest_fold(blocks: list[JointData], labels: list[np.ndarray], folds: int) -> float:
    """Duration [s] of the shortest fold (its rows over the blocks' rate)."""
    counts = np.zeros(folds, dtype=np.int64)
    for lab in labels:
        counts += np.bincount(lab[lab >= 0], minlength=folds)[:folds]
    return float(counts.min()) / sample_rate(blocks[0].t)


def fold_equations(robot, blocks: list[JointData], labels: list[np.ndarray], options: ModelOptions,
                   base: BaseParameters, prep: Preprocessing, trim_prep: Preprocessing, folds: int,
                   table: np.ndarray) -> list[NormalEquations]:
    """Per-fold normal equations of the blocks preprocessed with ``prep`` (step 2); the
    samples near block ends that ``trim_prep`` (the lowest cutoff) trims are left out."""
    grams = [RegressorGram(robot, options, base, table) for _ in range(folds)]
    buffer = grams[0].new_buffer(BLOCK)  # one layout for every fold's accumulator
    columns = own_columns(robot, options)
    levels = [RestLevels(robot.n, base.rank) for _ in range(folds)] if prep.rest_band else None
    for raw, lab in zip(blocks, labels):
        ready = prepare(raw, prep, joint_columns=columns)
        keep = edge_mask(len(ready), edge_samples(trim_prep, sample_rate(ready.t)))
        # rows after resampling or decimation take the fold of the raw row at or after them
        fold = lab[np.clip(np.searchsorted(raw.t, ready.t), 0, len(raw) - 1)]
        for k in range(folds):
            rows = np.flatnonzero(keep & (fold == k))
            if rows.size:
                part = slice(rows[0], rows[-1] + 1)
                piece, used = ready.select(part), (fold[part] == k) & keep[part]
                # each rest's held torque, as identify does (rest_levels, H1)
                add_with_rests(robot, piece, options, prep, grams[k], buffer, used,
                               None if levels is None else levels[k], close=True)
    out = [g.to_normal_equations(base) for g in grams]
    return out if levels is None else [ne - lv.take() for ne, lv in zip(out, levels)]


def held_out_score(parts: list[NormalEquations], names, max_condition: float,
                   found: Undetermined | None = None,
                   scored: list[NormalEquations] | None = None) -> tuple[float, np.ndarray]:
    """(score (CV2), (folds, n) held-out RSS (CV1)) of leave-one-fold-out least-squares refits.

    ``found`` (``undetermined.find_undetermined``): those base parameters keep their prior values
    and the others are refitted, as ``identify`` does (module docstring, step 3). The refit is
    the minimum-norm least-squares solution on the directions the other folds determine
    (``physical.pseudo_solve``); a refit that determines nothing useful scores badly.
    ``scored``: the folds' equations of the same regressor with the measured torque, when
    ``parts`` hold a filtered one (the fit uses ``parts``, the residual ``scored``: step 6)."""
    total = sum(parts[1:], parts[0].copy())
    scored = scored or parts
    measured = sum(float(p.C.sum()) for p in scored)
    fixed = found.index if found else np.zeros(0, dtype=np.int64)
    free = np.setdiff1d(np.arange(total.b), fixed)
    rss = []
    for part in parts:
        train = total - part
        if int(train.rows.sum()) <= free.size:
            raise IllConditionedError(f"{int(train.rows.sum())} equations for {free.size} base parameters")
        beta = np.empty(total.b)
        if fixed.size:
            beta[fixed] = found.prior[fixed]
            beta[free] = pseudo_solve(*train.reduce(fixed, beta[fixed]).totals())
        else:
            beta = pseudo_solve(*train.totals())
        rss.append(scored[len(rss)].residual_ss(beta))
    rss = np.array(rss)
    return float(np.sqrt(rss.sum() / max(measured, 1e-300))), rss


def _check_blocks(blocks: list[JointData], labels: list[np.ndarray], folds: int, trim: int, lowest: float,
                  source: str) -> None:
    """Each fold must keep one period of the lowest cutoff once the filter edges are trimmed."""
    fs = sample_rate(blocks[0].t)
    counts = np.zeros(folds, dtype=np.int64)
    for raw, lab in zip(blocks, labels):
        keep = edge_mask(len(raw), trim)
        counts += np.bincount(lab[keep & (lab >= 0)], minlength=folds)[:folds]
    need = max(int(math.ceil(fs / lowest)), 20)
    if counts.min() < need:
        seconds = sum(float(b.t[-1] - b.t[0]) for b in blocks)
        raise CrossValidationError(
            f"{source}: {seconds:.3g} s of data are too short for {folds}-fold cross-validation of the low-pass "
            f"cutoff (the shortest fold keeps {counts.min()} samples after the filter edges, at least {need} "
            f"= one period of the lowest cutoff {lowest:.3g} Hz needed); give --lowpass HZ, fewer --cv-folds "
            "or a longer log", rate=fs)


def select_lowpass(robot, blocks: list[JointData], options: ModelOptions, base: BaseParameters,
                   prep: Preprocessing = Preprocessing(), folds: int = FOLDS, bandwidth: float | None = None,
                   max_condition: float = 1e7, workers: int | None = None, source: str = "log",
                   still_range: float = STILL_RANGE, torque_filter: bool | None = None) -> LowpassSelection:
    """Blocked cross-validation of the cutoff over in-memory blocks of a log (module docstring).
    ``still_range``: as ``identify --still-range`` (0: no joint counts as held still).
    ``torque_filter``: None = also try the torque filtered like the positions and keep it when
    it predicts the measured torque better (step 6); True/False = only that way."""
    if folds < 2:
        raise CrossValidationError(f"cross-validation needs at least 2 folds, got {folds}")
    if any(b.tau is None for b in blocks):
        raise DataError(f"{source}: no torques (tau1..taun) or currents (i1..in) to identify from")
    rows = sum(len(b) for b in blocks)
    blocks = [b for b in blocks if len(b) >= 3]
    if not blocks:
        raise CrossValidationError(f"{source}: {rows} usable rows; at least 3 are needed")
    cpu = time.process_time()
    fs = sample_rate(blocks[0].t)
    fold_seconds = sum(float(b.t[-1] - b.t[0]) for b in blocks) / folds
    moving = moving_rows(blocks, prep)
    if moving is not None:  # folds of equal motion: their durations differ, the shortest bounds the grid
        fold_seconds = min(fold_seconds, shortest_fold(blocks, fold_labels([len(b) for b in blocks], folds, 0,
                                                                             moving), folds))
    grid, info = cutoff_grid(fs, fold_seconds, bandwidth)
    while True:  # the lowest cutoff whose edges leave every fold one of its periods (step 5)
        trim_prep = replace(prep, lowpass_hz=float(grid[0]), trim=None)
        trim = edge_samples(trim_prep, fs / prep.decimate) * prep.decimate
        kept = [k for k, b in enumerate(blocks) if len(b) > 2 * trim + 2]  # pieces the lowest cutoff's edges empty
        usable = [blocks[k] for k in kept]
        gap = min(math.ceil(fs / grid[0]), max(sum(len(b) for b in usable) // (20 * folds), 1))
        weights = None if moving is None else [moving[k] for k in kept]
        labels = fold_labels([len(b) for b in usable], folds, gap, weights) if usable else []
        try:
            if not usable:
                raise CrossValidationError(f"{source}: every piece of the log is shorter than the filter edges "
                                           f"({2 * trim} samples) of a {grid[0]:.3g} Hz cutoff; give --lowpass HZ",
                                           rate=fs)
            _check_blocks(usable, labels, folds, trim, float(grid[0]), source)
            break
        except CrossValidationError:
            if grid[0] >= grid[-1]:
                raise
            grid, info = cutoff_grid(fs, fold_seconds, bandwidth, floor=float(grid[0]) * math.sqrt(2.0))
    blocks = usable
    found = _undetermined(robot, options, base, blocks, trim, still_range)
    table = identifiability_table(robot, options)
    parts, scores, rss, failures = {}, {}, {}, {}

    def equations(fc: float, filtered: bool) -> list[NormalEquations]:
        if (fc, filtered) not in parts:
            parts[fc, filtered] = fold_equations(robot, blocks, labels, options, base,
                                                 replace(prep, lowpass_hz=fc, filter_torque=filtered), trim_prep,
                                                 folds, table)
        return parts[fc, filtered]

    def evaluate(key: tuple[float, bool]) -> None:
        fc, filtered = key
        try:  # the fit on the (filtered) torque, scored against the measured one (step 6)
            scores[key], rss[key] = held_out_score(equations(fc, filtered), base.names, max_condition, found,
                                                   equations(fc, False) if filtered else None)
        except IllConditionedError as exc:  # a fold's complement does not determine the parameters
            scores[key], failures[f"{fc:.4g}" + (" (torque filtered)" if filtered else "")] = None, str(exc)

    def run(candidates, filtered: bool) -> None:
        todo = [(float(c), filtered) for c in candidates if (float(c), filtered) not in scores]
        if filtered:  # the measured-torque equations first: both modes' threads share them
            run(candidates, False)
        with single_blas_thread(), ThreadPoolExecutor(max(1, min(workers or stream_workers(), len(todo) or 1))) as pool:
            list(pool.map(evaluate, todo))

    floor, ceiling = max(0.1, lowest_cutoff(info["fold_seconds"]), float(grid[0]) / 2.0), 0.4 * fs
    modes = [False, True] if torque_filter is None else [bool(torque_filter)]
    for filtered in modes:
        _search(grid, filtered, scores, run, floor, ceiling)
    motion, motion_source = (bandwidth, "excitation") if bandwidth else \
        (motion_bandwidth(blocks, [j for j in range(robot.n) if j not in found.still]), "spectrum of q (B1-B2)")
    passband = MOTION_MARGIN * motion if motion else None  # step 6: the lowest cutoff a tie may go down to
    info.update(motion_bandwidth_hz=motion, motion_bandwidth_source=motion_source if motion else None,
                passband_hz=passband)
    if passband is not None and floor <= passband <= ceiling:
        for filtered in modes:  # the tie reaches above k B: score k B itself, the cutoff the rule wants
            if any(c > passband for c in _tie(scores, rss, filtered)):
                run([passband], filtered)
    best = _best(scores, rss, modes, passband)
    if best is None:
        raise CrossValidationError(f"{source}: no candidate cutoff could be scored: the log without one of its "
                                   f"{folds} folds does not determine the base parameters "
                                   f"({next(iter(failures.values()))}); give --lowpass HZ or a richer log", rate=fs)
    chosen, filtered = best
    measured = sorted(c for c, f in scores if not f)
    torque = sorted(c for c, f in scores if f)
    return LowpassSelection(chosen, measured, [scores[c, False] for c in measured], folds, len(blocks),
                            int(sum(len(b) for b in blocks)), info, failures, time.process_time() - cpu,
                            [base.names[k] for k in found.index], filtered,
                            {"candidates_hz": torque, "scores": [scores[c, True] for c in torque]})


def _search(grid: np.ndarray, filtered: bool, scores: dict, run, floor: float, ceiling: float) -> None:
    """Score the coarse grid, extend it past a best candidate on its edge while that improves,
    then the two neighbours of the best at a factor sqrt 2 (module docstring, step 5)."""
    run(grid, filtered)
    mine = lambda: {c: v for (c, f), v in scores.items() if f == filtered}  # noqa: E731
    best = _lowest(mine())
    ratio = (grid[-1] / grid[0]) ** (1.0 / (len(grid) - 1)) if len(grid) > 1 else 2.0
    while best is not None and (best == max(mine()) and best * ratio <= ceiling
                                or best == min(mine()) and best / ratio >= floor):
        run([best * ratio if best == max(mine()) else best / ratio], filtered)  # the best is on the edge: go past it
        if _lowest(mine()) == best:
            break
        best = _lowest(mine())
    if best is not None:
        step = math.sqrt(ratio)
        run([c for c in (best / step, best * step) if floor <= c <= ceiling], filtered)


def _lowest(scores: dict) -> float | None:
    valid = {c: s for c, s in scores.items() if s is not None and np.isfinite(s)}
    return min(valid, key=valid.get) if valid else None


def _tie(scores: dict, rss: dict, mode: bool) -> list[float]:
    """The cutoffs of ``mode`` (torque filtered or not) tied with its lowest score (the lowest
    included), in increasing order; [] when none could be scored."""
    best = _lowest({key: v for key, v in scores.items() if key[1] == mode})
    if best is None:
        return []
    return sorted(key[0] for key, v in scores.items() if key[1] == mode and v is not None and np.isfinite(v)
                  and (key == best or _tied(rss[key], rss[best])))


def _best(scores: dict, rss: dict, modes: list[bool], passband: float | None = None) -> tuple[float, bool] | None:
    """The (cutoff, torque filtered) to use: in each mode the lowest score, then among the
    candidates of that mode tied with it (the one-standard-error rule, Hastie, Tibshirani &
    Friedman 2009, sec. 7.10) the lowest at or above ``passband`` (``MOTION_MARGIN`` times the
    motion's bandwidth: the motion passes undistorted, and less of the noise and of the arm's
    vibration above it enters the regressor), or the highest when the tie stays below it (less
    distortion of the motion); the filtered torque only when it beats the measured one by more
    than a tie and by ``TORQUE_FILTER_GAIN`` of its held-out RSS (step 6: a filtered torque's
    noise is no longer white, which the parameters' standard deviations assume, so a consistent
    but negligible gain does not pay)."""
    chosen = {}
    for mode in modes:
        tied = _tie(scores, rss, mode)
        if tied:
            above = [c for c in tied if passband is not None and c >= passband]
            chosen[mode] = (min(above) if above else max(tied), mode)
    if not chosen:
        return None
    if len(chosen) == 2 and (rss[chosen[True]].sum() >= (1.0 - TORQUE_FILTER_GAIN) * rss[chosen[False]].sum()
                             or _tied(rss[chosen[False]], rss[chosen[True]])):
        return chosen[False]
    return chosen[True] if True in chosen else chosen[False]


def _tied(rss: np.ndarray, best: np.ndarray) -> bool:
    """Whether held-out RSS (folds, n) is within a tie of ``best``'s: the excess summed over folds
    is at most one standard error of that sum, from the fold-by-fold differences (paired: the
    folds' own difficulty cancels)."""
    difference = rss.sum(axis=1) - best.sum(axis=1)
    spread = float(np.std(difference, ddof=1) * math.sqrt(difference.size)) if difference.size > 1 else 0.0
    return float(difference.sum()) <= spread


def _undetermined(robot, options: ModelOptions, base: BaseParameters, blocks: list[JointData], trim: int,
                  still_range: float) -> Undetermined:
    """``find_undetermined`` on the position ranges of the blocks without their filter edges
    (``identify`` takes the ranges of its fitted samples: the same rows of a log that fits the
    budget, up to the filter's smoothing of q)."""
    inner = [b.q[trim:len(b) - trim] for b in blocks if len(b) > 2 * trim]
    q_min = np.min([q.min(axis=0) for q in inner], axis=0)
    q_max = np.max([q.max(axis=0) for q in inner], axis=0)
    return find_undetermined(robot, options, base, q_min, q_max, still_range)


def choose_lowpass(robot, paths, options: ModelOptions, base: BaseParameters, prep: Preprocessing = Preprocessing(),
                   mapping: ColumnMapping = ColumnMapping(), nan: str = "drop", folds: int = FOLDS,
                   bandwidth: float | None = None, max_condition: float = 1e7, budget: int = BUDGET,
                   chunk_rows: int = 50_000, still_range: float = STILL_RANGE,
                   torque_filter: bool | None = None) -> tuple[Preprocessing, LowpassSelection]:
    """(``prep`` with the chosen cutoff, the selection) for the log file(s) ``paths``: each file
    whole, or ``folds`` spread blocks of it past its share of ``budget`` rows
    (``data.blocks.read_blocks``), cut at segment boundaries."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    share = max(budget // len(paths), 1)
    blocks = pieces([b for p in paths for b in read_blocks(p, robot, mapping, nan, share, folds, chunk_rows, prep)])
    source = str(paths[0]) if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more file(s)"
    selection = select_lowpass(robot, blocks, options, base, prep, folds, bandwidth, max_condition, source=source,
                               still_range=still_range, torque_filter=torque_filter)
    return replace(prep, lowpass_hz=selection.chosen_hz, filter_torque=selection.filter_torque), selection


def auto_lowpass(robot, paths, options: ModelOptions, base: BaseParameters, prep: Preprocessing,
                 mapping: ColumnMapping = ColumnMapping(), nan: str = "drop", strict: bool = True,
                 folds: int = FOLDS, bandwidth: float | None = None, max_condition: float = 1e7,
                 chunk_rows: int = 50_000, still_range: float = STILL_RANGE,
                 torque_filter: bool | None = None) -> tuple[Preprocessing, dict, list[str]]:
    """The policy of ``identify``: (preprocessing, result.json "lowpass_selection", notes).

    ``strict`` (``--lowpass auto`` asked for): a log too short for the folds is an error.
    Otherwise (the default) such a log keeps the fixed default min(20 Hz, fs / 10), with a note,
    and that cutoff is written into the preprocessing (never ``lowpass_hz: null`` when the rate is
    known). ``torque_filter``: as ``select_lowpass`` (None: chosen by the cross-validation; the
    fallback keeps ``prep.filter_torque``)."""
    try:
        chosen, selection = choose_lowpass(robot, paths, options, base, prep, mapping, nan, folds, bandwidth,
                                           max_condition, chunk_rows=chunk_rows, still_range=still_range,
                                           torque_filter=torque_filter)
    except CrossValidationError as exc:
        if strict:
            raise
        fallback = replace(prep, lowpass_hz=None)
        cutoff = fallback.cutoff(exc.rate) if exc.rate else None
        note = (f"low-pass cutoff not cross-validated, fixed default min(20 Hz, fs/10) = "
                f"{cutoff:.4g} Hz used: {exc}" if cutoff else
                f"low-pass cutoff not cross-validated, fixed default min(20 Hz, fs/10) used: {exc}")
        record = {"method": "default min(20 Hz, fs/10)", "reason": str(exc), "chosen_hz": cutoff}
        return replace(fallback, lowpass_hz=cutoff), record, [note]
    return chosen, selection.to_dict(), []
