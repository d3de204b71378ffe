"""The still mask of ``prepare`` (step 3c): where a joint stands still, from its raw positions.

``still_mask`` is (R2) and (R3) of ``data.rest``, which measures the bands it is given and says
why; this module holds the mask alone so that ``prepare`` can apply it without the readers that
the measurement needs.
"""

from __future__ import annotations

import numpy as np
import scipy.ndimage

REST_WINDOW = 0.05  # s: W of (R2), at least
MIN_WINDOW = 3  # samples of W at least
TURN_BAND = 6.0  # K of (R3): a run's sides reach until the position leaves its level by K x b
TURN_DEGREE = 3  # the polynomial of the motion around a run (R3)
TURN_WINDOWS = 8  # a still run longer than this many W is a rest without the test (R3)


def window_samples(fs: float, window: float = REST_WINDOW) -> int:
    """W of (R2) in samples at rate fs [Hz]."""
    return max(MIN_WINDOW, int(round(window * fs)))


def context_samples(fs: float, window) -> int:
    """Samples on each side of a sample that its still flag depends on: the windows of (R2),
    and a run of up to ``TURN_WINDOWS`` W with its sides (as long as the run) for (R3)."""
    m = window_samples(fs, float(np.max(window)))
    return (2 * TURN_WINDOWS + 4) * m + 8


def still_mask(q: np.ndarray, fs: float, band, window=REST_WINDOW) -> np.ndarray:
    """(N, n) True where joint j's raw position q (N, n) stays within band[j] over window[j]
    seconds (one number: every joint) before or after the sample, in runs of at least that
    window (R2) that are not the turn of a motion passing through (R3).
    fs: the uniform rate of q [Hz]."""
    band = np.broadcast_to(np.asarray(band, dtype=float), (q.shape[1],))
    windows = np.broadcast_to(np.asarray(window, dtype=float), (q.shape[1],))
    out = np.zeros(q.shape, dtype=bool)
    for w in np.unique(windows):  # one pass per distinct window (a few), each over all samples
        cols = np.flatnonzero(windows == w)
        m = min(window_samples(fs, float(w)), q.shape[0])
        out[:, cols] = _still(q[:, cols], fs, m, band[cols])
        for j in cols:  # loop over joints, then over their runs (a few per turn or rest)
            _drop_turns(q[:, j], out[:, j], band[j], TURN_WINDOWS * m)
    return out


def _still(q: np.ndarray, fs: float, m: int, band: np.ndarray) -> np.ndarray:
    """(R2) of the joints q (N, k) that share a window of m samples."""

    def spread(origin: int) -> np.ndarray:
        """range of q over the m samples ending (origin > 0) or starting (origin < 0) at each
        sample; infinite where the window leaves the piece (the samples there are unknown)"""
        top = scipy.ndimage.maximum_filter1d(q, m, axis=0, mode="constant", cval=np.inf, origin=origin)
        return top - scipy.ndimage.minimum_filter1d(q, m, axis=0, mode="constant", cval=-np.inf, origin=origin)

    with np.errstate(invalid="ignore"):  # inf - inf never occurs: the two windows pad alike
        still = np.minimum(spread((m - 1) // 2), spread(-(m // 2))) <= band
    # a rest lasts: a still run shorter than the window is the apex of a swing or a trajectory
    # that passes through zero velocity, where friction still acts as in motion
    return scipy.ndimage.binary_opening(still, structure=np.ones((m, 1), dtype=bool))


def _drop_turns(q: np.ndarray, still: np.ndarray, band: float, longest: int) -> None:
    """(R3) in place on one joint: clear each still run of at most ``longest`` samples through
    which the motion around it passes (a turn or a slow passage), keep those where it paused."""
    runs, count = scipy.ndimage.label(still)
    for (run,) in scipy.ndimage.find_objects(runs):  # loop over the runs, each vectorized
        s, e = run.start, run.stop
        if e - s <= longest and not _paused(q, s, e, band):
            still[s:e] = False


def _paused(q: np.ndarray, s: int, e: int, band: float) -> bool:
    """(R3) for the still run q[s:e] of one joint: True when the motion around it is told
    better by a pause (time stopped over the run) than by the same curve running through it."""
    level = float(np.median(q[s:e]))
    a, z = max(0, s - (e - s)), min(q.size, e + (e - s))  # sides at most as long as the run
    left = np.flatnonzero(np.abs(q[a:s] - level) > TURN_BAND * band)
    right = np.flatnonzero(np.abs(q[e:z] - level) > TURN_BAND * band)
    a = a + int(left[-1]) if left.size else a  # ... and up to the first sample K b away
    z = e + int(right[0]) + 1 if right.size else z
    if (s - a) + (z - e) < TURN_DEGREE + 2:
        return True  # no motion around it to tell (a piece that rests throughout)
    i = np.arange(a, z)
    y = q[a:z] - level
    through = i - 0.5 * (s + e - 1)  # M_turn: real time
    paused = np.where(i < s, i - s, np.where(i >= e, i - (e - 1), 0))  # M_rest: the run's time removed
    return _residual(paused, y) <= _residual(through, y)


def _residual(x: np.ndarray, y: np.ndarray) -> float:
    """Sum of squares left by the least-squares polynomial of degree ``TURN_DEGREE`` y(x)."""
    scale = max(float(np.max(np.abs(x))), 1.0)
    basis = np.vander(x / scale, TURN_DEGREE + 1)
    coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
    r = y - basis @ coef
    return float(r @ r)
