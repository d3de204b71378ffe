"""Compiled per-chunk scans of ``plausibility.LogChecks`` (the read path's hot part).

``LogChecks.update`` runs on every chunk of every log as it is read, in the reader thread of
the streaming identification (its critical path). Written with NumPy, the filled-stretch and
jump scans made several passes over (N, 2 n) temporaries, about 0.2 CPU-us per sample of a
6-DoF 1 kHz log; these kernels make one pass each and give the same booleans (same floating-point
operations in the same order: a second difference is (x[k+2] - x[k+1]) - (x[k+1] - x[k]) as
``np.diff(x, 2)`` computes it, a NaN makes its column's scale NaN as ``np.max`` does).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _column_scale(x, c, tolerance):
    """tolerance (max_k |x[k, c]| + 1e-9); NaN when the column holds a NaN (``np.max``)."""
    top = 0.0
    for k in range(x.shape[0]):
        a = abs(x[k, c])
        if math.isnan(a):
            return math.nan
        if a > top:
            top = a
    return tolerance * (top + 1e-9)


@nb.njit(cache=True, nogil=True)
def _collinear(x, k, scale):
    """Rows k, k+1, k+2 of every column of x change exactly linearly (|second difference| <= scale)."""
    for c in range(x.shape[1]):
        if not abs((x[k + 2, c] - x[k + 1, c]) - (x[k + 1, c] - x[k, c])) <= scale[c]:
            return False
    return True


@nb.njit(cache=True, nogil=True)
def filled_steps(q, tau, valid, tolerance):
    """good (N - 2,): rows k, k+1, k+2 of every position and torque are collinear (within
    ``tolerance`` times the column's largest magnitude), some position changes from k+1 to k+2,
    and steps k and k+1 are ``valid`` (N - 1,) (``LogChecks._filled``)."""
    count, n = q.shape
    good = np.zeros(max(count - 2, 0), dtype=np.bool_)
    if count < 3:
        return good
    q_scale, tau_scale = np.empty(n), np.empty(tau.shape[1])
    for c in range(n):
        q_scale[c] = _column_scale(q, c, tolerance)
    for c in range(tau.shape[1]):
        tau_scale[c] = _column_scale(tau, c, tolerance)
    for k in range(count - 2):
        if not (valid[k] and valid[k + 1]):
            continue
        moving = False
        for j in range(n):
            if q[k + 2, j] - q[k + 1, j] != 0:
                moving = True
                break
        good[k] = moving and _collinear(q, k, q_scale) and _collinear(tau, k, tau_scale)
    return good


@nb.njit(cache=True, nogil=True)
def any_jump(dq, valid, threshold):
    """Some |dq[k, j]| > threshold[j] on a ``valid`` step k (``LogChecks._jumps``)."""
    for k in range(dq.shape[0]):
        if valid[k]:
            for j in range(dq.shape[1]):
                if abs(dq[k, j]) > threshold[j]:
                    return True
    return False
