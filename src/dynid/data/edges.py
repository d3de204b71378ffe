"""Zero-phase low-pass filtering without start-up transients at the ends of a log.

A zero-phase filter (forward, then backward: ``scipy.signal.sosfiltfilt``) needs the signal
before the first sample and after the last one. ``sosfiltfilt`` invents a short odd reflection
(a few dozen samples) and starts the filter from the steady state of a constant: the transient
that follows lasts about fs / f_c samples (1 s at a 1 Hz cutoff), and the positions, and even
more their derivatives, are wrong there. Measured on a 10 s, 500 Hz log at 1.5 Hz: the
predicted torque was 6.7 % off over all rows against 0.27 % on the interior (issue 22).

Here each end of the signal is continued by a polynomial, exactly:

1. **Edge polynomial.** p(s) of degree d, fitted by weighted least squares to the first W
   samples (s = i / W; weights 1 - i / W, the nearest samples count most); the last W samples
   likewise for the other end. d and W are chosen per column and per end by *backcasting*:
   each candidate (d in 2..6, W = c fs / f_c with c in 0.5..3) is fitted to the samples
   [m, m + W) and scored on how well it extrapolates to the m = fs / (2 f_c) samples before them,
   the distance over which the filter's kernel reaches past an edge. The choice adapts to the
   noise (a long window averages it) and to the motion (a short one follows it).
2. **Exact initial states.** The zero-phase Butterworth filter passes polynomials up to
   degree 2 x order - 1 unchanged (|H|^2 = 1 / (1 + (f / f_c)^(2 order)) is flat to that order
   at f = 0), and a linear filter's steady-state response to a polynomial input is a polynomial
   whose coefficients follow from the section coefficients:
       y[k] + a1 y[k-1] + a2 y[k-2] = b0 x[k] + b1 x[k-1] + b2 x[k-2]                    (E1)
   solved on polynomials (the shift x[k-1] = x(s - h), h = 1 / W, a triangular map). The state
   of each second-order section (transposed direct form II, as ``scipy.signal.sosfilt``) after
   the polynomial input has run forever is then exact:
       z1 = b2 x[-1] - a2 y[-1],  z0 = b1 x[-1] - a1 y[-1] + b2 x[-2] - a2 y[-2]          (E2)
   The forward pass starts from the state of the first edge's polynomial (as if the signal had
   followed it forever before the first sample); it runs on into the last edge's polynomial for
   K samples, until the transient of the junction has decayed below 1e-10 (K from the filter's
   slowest pole); the backward pass starts from the exact state of the forward output's
   steady-state polynomial there.

The result equals the ideal zero-phase filter of the signal continued by the two edge
polynomials (a cubic passes to 1e-11), with no transient at all; what remains at the edges is
the extrapolation error of the polynomials, small where the motion is smooth at the scale
1 / f_c. The cost is one more pass over K samples and the small fits.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np
import scipy.signal

DEGREES = (2, 3, 4, 5, 6)
WINDOWS = (0.5, 1.0, 1.5, 2.0, 3.0)  # fit window W in units of fs / f_c
REACH = 0.5  # backcast distance in units of fs / f_c
SETTLE_TOLERANCE = 1e-10


def settling_samples(sos: np.ndarray, tolerance: float = SETTLE_TOLERANCE) -> int:
    """Samples after which the slowest pole of ``sos`` has decayed below ``tolerance``."""
    radius = float(np.max(np.abs(scipy.signal.sos2zpk(sos)[1])))
    return int(np.ceil(np.log(tolerance) / np.log(radius))) if radius > 0 else 1


def affine_map(d: int, a: float, b: float) -> np.ndarray:
    """(d+1, d+1) T with coefficients of p(a + b u) = T @ coefficients of p(s) (ascending powers)."""
    out = np.zeros((d + 1, d + 1))
    for k in range(d + 1):
        for j in range(k + 1):
            out[j, k] = comb(k, j) * a ** (k - j) * b ** j
    return out


@lru_cache(maxsize=256)
def _steady_maps(sos_key: bytes, sections: int, d: int, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(Z (sections, 2, d+1), G (d+1, d+1)): the state (E2) before the sample at s = 0 and the
    output coefficients, both linear in the coefficients of a polynomial input of degree d
    sampled at s = k h that has run forever (eq. E1)."""
    sos = np.frombuffer(sos_key).reshape(sections, 6)
    shift = affine_map(d, -h, 1.0)  # p(s) -> p(s - h)
    shift2 = shift @ shift
    eye = np.eye(d + 1)
    at = lambda s: s ** np.arange(d + 1)  # noqa: E731 - evaluation row at s
    x, states = eye, []
    for b0, b1, b2, _, a1, a2 in sos:
        y = np.linalg.solve(eye + a1 * shift + a2 * shift2, (b0 * eye + b1 * shift + b2 * shift2) @ x)  # (E1)
        x1, x2, y1, y2 = at(-h) @ x, at(-2 * h) @ x, at(-h) @ y, at(-2 * h) @ y
        states.append(np.stack([b1 * x1 - a1 * y1 + b2 * x2 - a2 * y2, b2 * x1 - a2 * y1]))  # (E2)
        x = y
    return np.stack(states), x


def steady_state(sos: np.ndarray, coefficients: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(zi (sections, 2, m), output coefficients (d+1, m)) of ``sosfilt`` fed forever with the
    polynomials of ``coefficients`` (d+1, m) in s = k h, the next sample at s = 0."""
    sos = np.ascontiguousarray(sos, dtype=float)
    z, g = _steady_maps(sos.tobytes(), sos.shape[0], coefficients.shape[0] - 1, float(h))
    return np.einsum("skd,dm->skm", z, coefficients), g @ coefficients


@lru_cache(maxsize=256)
def _projector(d: int, w: int) -> np.ndarray:
    """(d+1, w) P with P @ x[start:start + w] the coefficients (ascending powers of s = (i - start)
    / w) of the least-squares polynomial weighted by 1 - (i - start) / w (module docstring, step 1)."""
    s = np.arange(w) / w
    weights = np.sqrt(1.0 - s)[:, None]
    return np.linalg.pinv((s[:, None] ** np.arange(d + 1)) * weights) * weights.T


def _fit(x: np.ndarray, d: int, w: int, start: int = 0) -> np.ndarray:
    """Coefficients (d+1, m) in s = (i - start) / w of the weighted fit to x[start:start + w]."""
    return _projector(d, w) @ x[start:start + w]


def edge_choices(x: np.ndarray, fs: float, cutoff: float) -> list[tuple[int, int]]:
    """(degree, window samples) of the edge polynomial of each column of x (N, m) at its start
    (module docstring, step 1: the candidate that best backcasts the first samples)."""
    count, columns = x.shape
    test = max(2, int(round(REACH * fs / cutoff)))
    best: list[tuple[int, int] | None] = [None] * columns
    errors = np.full(columns, np.inf)
    for d in DEGREES:
        for c in WINDOWS:
            w = int(max(d + 2, np.ceil(c * fs / cutoff)))
            if test + w > count:
                continue
            coef = _fit(x, d, w, start=test)
            s = -np.arange(test, 0, -1) / w  # the samples before the fit, s < 0
            error = np.sum(((s[:, None] ** np.arange(d + 1)) @ coef - x[:test]) ** 2, axis=0)
            better = error < errors
            errors[better] = error[better]
            for j in np.flatnonzero(better):
                best[j] = (d, w)
    fallback = (max(0, min(3, count - 2)), count)  # too few samples for any candidate: all of them
    return [b or fallback for b in best]


def _edge_polynomials(x: np.ndarray, fs: float, cutoff: float) -> tuple[list[tuple[int, int]], dict]:
    """Per column (degree, window) and {(degree, window): (columns, coefficients)} of the start of x."""
    head = int(np.ceil((REACH + max(WINDOWS)) * fs / cutoff)) + max(DEGREES) + 4
    x = np.ascontiguousarray(x[:head])  # the samples any candidate uses
    choices = edge_choices(x, fs, cutoff)
    groups: dict[tuple[int, int], list[int]] = {}
    for j, choice in enumerate(choices):
        groups.setdefault(choice, []).append(j)
    return choices, {key: (cols, _fit(x[:, cols], key[0], key[1])) for key, cols in groups.items()}


def lowpass_edges(x: np.ndarray, fs: float, cutoff: float, order: int = 4) -> np.ndarray:
    """Zero-phase Butterworth low-pass of x (N, ...) along time, each end continued by its edge
    polynomial with exact initial states (module docstring). The same as ``sosfiltfilt`` away
    from the ends (to 1e-10 of the signal)."""
    shape = x.shape
    flat = np.asarray(x, dtype=float).reshape(shape[0], -1)
    count, columns = flat.shape
    if count < 3 or columns == 0:
        return np.array(x, dtype=float)
    sos = scipy.signal.butter(order, cutoff, btype="low", fs=fs, output="sos")
    pad = settling_samples(sos)
    zi_forward = np.zeros((sos.shape[0], 2, columns))
    tail = np.empty((pad, columns))
    zi_backward = np.zeros((sos.shape[0], 2, columns))
    _, head_groups = _edge_polynomials(flat, fs, cutoff)
    for (d, w), (cols, coef) in head_groups.items():
        zi_forward[:, :, cols] = steady_state(sos, coef, 1.0 / w)[0]
    _, end_groups = _edge_polynomials(flat[::-1], fs, cutoff)
    for (d, w), (cols, coef) in end_groups.items():
        h = 1.0 / w
        forward = affine_map(d, 0.0, -1.0) @ coef  # in reversed time u = -s: s = (i - N + 1) / w
        tail[:, cols] = ((np.arange(1, pad + 1) * h)[:, None] ** np.arange(d + 1)) @ forward
        _, out = steady_state(sos, forward, h)  # what the forward pass settles to in the tail
        zi_backward[:, :, cols] = steady_state(sos, affine_map(d, pad * h, -1.0) @ out, h)[0]
    y, _ = scipy.signal.sosfilt(sos, np.concatenate([flat, tail]), axis=0, zi=zi_forward)
    y, _ = scipy.signal.sosfilt(sos, y[::-1], axis=0, zi=zi_backward)
    return np.ascontiguousarray(y[::-1][:count]).reshape(shape)
