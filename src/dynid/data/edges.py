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
   likewise for the other end. d and W are chosen per column and per end among the candidates
   d in 2..6, W = c fs / f_c with c in 0.5..3, on *trial edges*: the log is cut at 2, 2.5 and
   3 kernel reaches R = fs / f_c from its real end, each piece filtered from that cut with each
   candidate's polynomial, and its second differences over the R rows after the cut compared
   with those of the whole log there (the ideal filter's: two reaches from the real end, its
   edge error has decayed below 1 %; a cubic over one reach continues the far ends of the
   pieces and of the region they span); the candidate of least
   squared difference, summed over the three cuts, wins. This scores what the edge rows feed
   (accelerations, the most sensitive: inertia torques) on the log's own motion and noise next
   to the end. On a 1 kHz iiwa log (motion up to 1.25 Hz, a 2^14-count encoder, three files cut
   from it) the second differences over the reach next to each end came within 0.9-2.5 % (RMS,
   of the interior's RMS) of the same rows filtered inside the long log at 2-10 Hz, against
   2.5-9.1 % when the candidate was the one that best backcast the positions
   (``backcast_choices``: fitted to [m, m + W), scored on the m = fs / (2 f_c) samples before;
   still used where the log is shorter than the trial edges need, about 9 fs / f_c). The
   candidates differ only in the forward pass's initial state and the filter is linear, so each
   trial piece is filtered once and each candidate adds its state's response
   (``_state_responses``).
   **Coarse encoders.** A column whose nonzero increments are all whole multiples of the
   smallest, q (an encoder's count), carries a rounding error of variance sigma^2 = q^2 / 12
   (Widrow & Kollar, "Quantization Noise", 2008, ch. 4; ``quantization_noise``). The filter is
   linear, so the noise's part of a candidate's trial error is sigma^2 v_k, v_k its trial error
   on unit white noise alone (``unit_noise_errors``: mean of 32 seeded draws, once per filter
   and length). Where that part is at least half the least trial error (``NOISE_SHARE``), the
   least trial error picks the candidate that fitted the trial edges' noise best, not the one
   that continues the motion best; there each candidate is scored by its expected error, bias
   plus variance (the decomposition of the mean squared error, Hastie, Tibshirani & Friedman,
   "The Elements of Statistical Learning", 2009, eq. 7.9): the trial error of the log itself
   filtered (its noise removed) plus sigma^2 v_k. On kr500 multi-sines to 1 Hz at 1 kHz with
   500-count encoders (12.6 mrad), the accelerations within 0.6 s of the ends were 11.6-12.7 %
   off against 13.1-15.2 % with the least trial error at 1.5-3 Hz (12 logs); with 4096 and 16384
   counts 0.47-2.58 % against 0.53-2.65 % (``bench/coarse_edges.py``). Applied to every quantized column (``NOISE_SHARE = 0``) the rule moved the 200 Hz
   ``split`` case of ``bench/real_defaults.py`` from 0.78 % to 18 % (there the trial error is not
   mostly quantization noise: the filtered log's trial error then misses what the noise does).
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
1 / f_c. The cost is one more pass over K samples, the small fits, and at each end four
filter passes over about 9 fs / f_c samples (no more than the backcast search alone took:
0.12 s for 20 000 samples of 7 joints at 1 kHz and a 1 Hz cutoff).
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np
import scipy.signal

DEGREES = (2, 3, 4, 5, 6)
WINDOWS = (0.5, 1.0, 1.5, 2.0, 3.0)  # fit window W in units of fs / f_c
REACH = 0.5  # backcast distance in units of fs / f_c
TRIALS = (2.0, 2.5, 3.0)  # trial edges at these distances from the real end, in units of fs / f_c
NOISE_SHARE = 0.5  # quantization noise's least expected share of the best trial error for the expected-error rule
NOISE_DRAWS = 32  # unit white noise draws averaged for each candidate's variance (``unit_noise_errors``)
TRIAL_TAIL = 3.0  # a trial piece runs this far (units of fs / f_c) past its longest window
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


def backcast_choices(x: np.ndarray, fs: float, cutoff: float) -> list[tuple[int, int]]:
    """(degree, window samples) of the edge polynomial of each column of x (N, m) at its start
    by backcasting (module docstring, step 1: the candidate that best backcasts the first
    samples; for logs too short for the trial edges)."""
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


def _candidates(fs: float, cutoff: float) -> list[tuple[int, int]]:
    return [(d, int(max(d + 2, np.ceil(c * fs / cutoff)))) for d in DEGREES for c in WINDOWS]


def _backcast_polynomials(x: np.ndarray, fs: float, cutoff: float) -> dict:
    """{(degree, window): (columns, coefficients)} of the start of x chosen by backcasting."""
    head = int(np.ceil((REACH + max(WINDOWS)) * fs / cutoff)) + max(DEGREES) + 4
    return _grouped(x, backcast_choices(np.ascontiguousarray(x[:head]), fs, cutoff))


def _grouped(x: np.ndarray, choices: list[tuple[int, int]]) -> dict:
    """{(degree, window): (columns, coefficients)} of the polynomials ``choices`` at the start of x."""
    head = np.ascontiguousarray(x[:max(w for _, w in choices)])  # one memory layout: the same rounding
    groups: dict[tuple[int, int], list[int]] = {}
    for j, choice in enumerate(choices):
        groups.setdefault(choice, []).append(j)
    return {key: (cols, _fit(head[:, cols], key[0], key[1])) for key, cols in groups.items()}


@lru_cache(maxsize=64)
def _state_responses(sos_key: bytes, sections: int, length: int, rows: int) -> np.ndarray:
    """(rows, sections, 2): the first ``rows`` outputs of the forward-backward filter of a zero
    input of ``length`` samples whose forward pass starts from a unit state (one per entry of the
    (sections, 2) state); the backward pass starts from zero at the far end."""
    sos = np.frombuffer(sos_key).reshape(sections, 6).copy()  # sosfilt wants a writable array
    zi = np.eye(2 * sections).reshape(sections, 2, 2 * sections)
    forward, _ = scipy.signal.sosfilt(sos, np.zeros((length, 2 * sections)), axis=0, zi=zi)
    both = scipy.signal.sosfilt(sos, forward[::-1], axis=0)[::-1]
    return np.ascontiguousarray(both[:rows]).reshape(rows, sections, 2)


def quantization_noise(x: np.ndarray) -> np.ndarray:
    """(m,) standard deviation [units of x] of the quantization error of each column of x (N, m):
    q / sqrt(12) for a column whose nonzero increments are all whole multiples of their smallest, q
    (an encoder's count; the uniform rounding error's variance q^2 / 12, Widrow & Kollar,
    "Quantization Noise", 2008, ch. 4); 0 for a column that is not so quantized or stands still."""
    steps = np.abs(np.diff(x, axis=0))
    out = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        moves = steps[steps[:, j] > 1e-12 * max(1.0, float(np.max(np.abs(x[:, j])))), j]
        if moves.size < 2:
            continue
        q = float(np.min(moves))
        ratio = moves / q
        if np.all(np.abs(ratio - np.round(ratio)) < 1e-6 * np.maximum(1.0, ratio)):
            out[j] = q / np.sqrt(12.0)
    return out


def _trial_errors(region: np.ndarray, sos: np.ndarray, pad: int, reach: int, starts: list[int],
                  span: int, candidates: list[tuple[int, int]]) -> np.ndarray:
    """(candidates, m): the squared differences of second differences of each candidate's trial
    edges from the long log's (module docstring, step 1), summed over the cuts ``starts``."""
    # the ends of the region and the far ends of the pieces lie two reaches or more from the rows
    # scored: a plain cubic over one reach continues them
    far = lambda v: _grouped(v, [(3, reach)] * v.shape[1])  # noqa: E731
    reference = np.diff(_filter(region, sos, pad, far(region), far(region[::-1])), 2, axis=0)
    responses = _state_responses(sos.tobytes(), sos.shape[0], span + pad, reach + 2).reshape(reach + 2, -1)
    errors = np.zeros((len(candidates), region.shape[1]))
    for start in starts:
        piece = np.ascontiguousarray(region[start:start + span])
        base = _filter(piece, sos, pad, {}, far(piece[::-1]))[:reach + 2]
        for k, (d, w) in enumerate(candidates):
            state = steady_state(sos, _fit(piece, d, w), 1.0 / w)[0]
            y = base + responses @ state.reshape(responses.shape[1], -1)
            errors[k] += np.sum((np.diff(y, 2, axis=0) - reference[start:start + reach]) ** 2, axis=0)
    return errors


@lru_cache(maxsize=64)
def unit_noise_errors(sos_key: bytes, sections: int, pad: int, reach: int, starts: tuple[int, ...], span: int,
                      candidates: tuple[tuple[int, int], ...]) -> np.ndarray:
    """(candidates,): the expected trial error (``_trial_errors``) of each candidate on white noise of
    unit variance alone, the mean over NOISE_DRAWS seeded draws: its variance term per unit sigma^2
    (the filter is linear, so the noise's share of a trial error scales with sigma^2)."""
    sos = np.frombuffer(sos_key).reshape(sections, 6).copy()  # sosfilt wants a writable array
    noise = np.random.default_rng(0).standard_normal((starts[-1] + span, NOISE_DRAWS))
    return _trial_errors(noise, sos, pad, reach, list(starts), span, list(candidates)).mean(axis=1)


def _winners(errors: np.ndarray, rounding: np.ndarray) -> np.ndarray:
    """(m,) index of the least error of each column; within ``rounding`` of it (a joint standing
    still: every candidate continues its constant) the first: the lowest degree, the shortest window."""
    return np.argmax(errors <= errors.min(axis=0) + rounding, axis=0)


def trial_choices(x: np.ndarray, fs: float, cutoff: float, sos: np.ndarray,
                  pad: int) -> list[tuple[int, int]] | None:
    """(degree, window samples) of the edge polynomial of each column of x (N, m) at its start,
    chosen on trial edges (module docstring, step 1); None when x is too short for them."""
    reach = int(np.ceil(fs / cutoff))
    candidates = _candidates(fs, cutoff)
    span = max(w for _, w in candidates) + int(np.ceil(TRIAL_TAIL * reach))
    starts = [int(round(c * reach)) for c in TRIALS]
    if starts[-1] + span > x.shape[0]:
        return None
    region = np.ascontiguousarray(x[:starts[-1] + span])
    sos = np.ascontiguousarray(sos, dtype=float)
    errors = _trial_errors(region, sos, pad, reach, starts, span, candidates)
    rounding = (1e-12 * np.max(np.abs(region), axis=0)) ** 2 * reach * len(starts)
    # where an encoder's quantization noise makes up most of the trial error, the least error picks
    # the candidate that fitted the noise of the trial edges best: there, the least expected error,
    # bias (trial errors of the log filtered, its noise removed) plus variance (sigma^2 x the trial
    # error of unit white noise alone)
    sigma = quantization_noise(region)
    if np.any(sigma > 0):
        variance = unit_noise_errors(sos.tobytes(), sos.shape[0], pad, reach, tuple(starts), span,
                                     tuple(candidates))
        winners = _winners(errors, rounding)
        share = sigma ** 2 * variance[winners] / np.maximum(errors[winners, np.arange(x.shape[1])], 1e-300)
        noisy = np.flatnonzero((sigma > 0) & (share >= NOISE_SHARE))
    if np.any(sigma > 0) and noisy.size:
        part = np.ascontiguousarray(region[:, noisy])
        smooth = _filter(part, sos, pad, _grouped(part, [(3, reach)] * noisy.size),
                         _grouped(part[::-1], [(3, reach)] * noisy.size))
        errors[:, noisy] = _trial_errors(smooth, sos, pad, reach, starts, span, candidates) \
            + variance[:, None] * sigma[noisy] ** 2
    return [candidates[j] for j in _winners(errors, rounding)]


def _edge_polynomials(x: np.ndarray, fs: float, cutoff: float, sos: np.ndarray, pad: int) -> dict:
    """{(degree, window): (columns, coefficients)} of the edge polynomials at the start of x."""
    choices = trial_choices(x, fs, cutoff, sos, pad)
    return _backcast_polynomials(x, fs, cutoff) if choices is None else _grouped(x, choices)


def _filter(x: np.ndarray, sos: np.ndarray, pad: int, head: dict, tail: dict) -> np.ndarray:
    """Forward-backward filter of x (N, m), the forward pass started from the steady state of
    the ``head`` polynomials (columns absent: from rest), run on into the ``tail`` polynomials
    (reversed time, every column) for ``pad`` samples, the backward pass started from the
    steady state there (module docstring, step 2)."""
    count, columns = x.shape
    zi_forward = np.zeros((sos.shape[0], 2, columns))
    tail_values = np.empty((pad, columns))
    zi_backward = np.zeros((sos.shape[0], 2, columns))
    for (d, w), (cols, coef) in head.items():
        zi_forward[:, :, cols] = steady_state(sos, coef, 1.0 / w)[0]
    for (d, w), (cols, coef) in tail.items():
        h = 1.0 / w
        forward = affine_map(d, 0.0, -1.0) @ coef  # in reversed time u = -s: s = (i - N + 1) / w
        tail_values[:, cols] = ((np.arange(1, pad + 1) * h)[:, None] ** np.arange(d + 1)) @ forward
        _, out = steady_state(sos, forward, h)  # what the forward pass settles to in the tail
        zi_backward[:, :, cols] = steady_state(sos, affine_map(d, pad * h, -1.0) @ out, h)[0]
    y, _ = scipy.signal.sosfilt(sos, np.concatenate([x, tail_values]), axis=0, zi=zi_forward)
    y, _ = scipy.signal.sosfilt(sos, y[::-1], axis=0, zi=zi_backward)
    return y[::-1][:count]


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
    head = _edge_polynomials(flat, fs, cutoff, sos, pad)
    tail = _edge_polynomials(flat[::-1], fs, cutoff, sos, pad)
    out = np.ascontiguousarray(_filter(flat, sos, pad, head, tail))
    still = np.all(flat == flat[0], axis=0)  # the filter passes constants: a column standing still
    out[:, still] = flat[0, still]           # stays exactly still (no rounding turned into motion)
    return out.reshape(shape)
