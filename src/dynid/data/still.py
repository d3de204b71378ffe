"""The still mask of ``prepare`` (step 3c): where a joint stands still, from its raw positions.

``still_mask`` is (R2) of ``data.rest``, which measures the bands it is given and says why;
this module holds the mask alone so that ``prepare`` can apply it without the readers that
the measurement needs.
"""

from __future__ import annotations

import numpy as np
import scipy.ndimage

REST_WINDOW = 0.05  # s: W of (R2), at least
MIN_WINDOW = 3  # samples of W at least


def window_samples(fs: float, window: float = REST_WINDOW) -> int:
    """W of (R2) in samples at rate fs [Hz]."""
    return max(MIN_WINDOW, int(round(window * fs)))


def still_mask(q: np.ndarray, fs: float, band, window=REST_WINDOW) -> np.ndarray:
    """(N, n) True where joint j's raw position q (N, n) stays within band[j] over window[j]
    seconds (one number: every joint) before or after the sample, in runs of at least that
    window (R2). fs: the uniform rate of q [Hz]."""
    band = np.broadcast_to(np.asarray(band, dtype=float), (q.shape[1],))
    windows = np.broadcast_to(np.asarray(window, dtype=float), (q.shape[1],))
    out = np.zeros(q.shape, dtype=bool)
    for w in np.unique(windows):  # one pass per distinct window (a few), each over all samples
        cols = np.flatnonzero(windows == w)
        out[:, cols] = _still(q[:, cols], fs, min(window_samples(fs, float(w)), q.shape[0]), band[cols])
    return out


def _still(q: np.ndarray, fs: float, m: int, band: np.ndarray) -> np.ndarray:
    """``still_mask`` of the joints q (N, k) that share a window of m samples."""

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
