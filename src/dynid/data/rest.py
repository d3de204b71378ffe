"""Standing still: where a joint is at rest, measured on its raw positions, not its filtered velocity.

A robot that stands still has, after the zero-phase filter, velocities of 1e-30 to a few
1e-3 rad/s: the filter's tails (it spreads each stop over ~2 / f_c seconds of the rest),
the flicker of an encoder count, the noise of a logged velocity. ``sign(dq)`` turns each
into a full +-Fc Coulomb torque of a sign that does not follow the torque: fitted, the
rest samples pull Fc towards zero (real logs with a third or more at rest gave Coulomb
coefficients 30-50 % low); predicted, every rest sample carries a random +-Fc. What holds a
joint at rest is static friction, some torque within +-Fs that the log cannot tell.

So ``prepare`` (step 3c) finds the samples where a joint stands still from its *raw*
position, which the filter has not spread, and sets its velocity there to 0 (what it is; the
acceleration stays the filtered one, which the ends of a stop need): the friction sign is then
0, the model predicts no Coulomb or viscous torque at rest, and ``identify`` gives the torque
each rest holds (an unknown static friction) an unknown level of its own, eliminated from the
normal equations (``identify.rest_levels``, H1).

1. position noise s_q per joint (``position_noise``): on pieces of the log (at most
   ``BUDGET`` rows, ``data.blocks``), resampled as ``identify`` does, the residual of a
   high low-pass, r = q - LP(q) at f_ref = ``REFERENCE_SHARE`` x fs (above any motion of an
   arm; what it removes is encoder quantization and sensor noise):

       s_q = RMS(r) / g_r,   g_r^2 = sum_k (delta_k - h_k)^2                          (R1)

   (h: LP's impulse response; g_r its white-noise gain), measured in windows of 0.5 s where
   the joint moves (a quantized joint at rest leaves r = 0, which would hide the noise), a
   low quantile of them (the noise is in every window; what the filter also removes of the
   motion itself, fast swings logged at a low rate, only adds to some). An encoder's count
   Q is a floor: a joint that moves slowly past a coarse count reads a staircase whose
   residual r sits at the steps alone (a 500-count joint encoder at 500 Hz on a 0.2 Hz
   swing: RMS(r) / g_r under 0.01 Q), while the position it reads is off by an error
   uniform over one count:

       s_q >= Q / sqrt(12),   Q = 1 % quantile of the raw log's nonzero |q[k+1] - q[k]|     (R1b)

   (``position_resolution``; about 0, so no floor, for a position that is not quantized; a
   joint whose noise (R1) cannot measure keeps 0, with a note);
2. still (``still_mask``): a joint stands still at a sample when its raw position stays
   within a band of b = ``BAND_FACTOR`` x s_q over the ``REST_WINDOW`` seconds before *or*
   after it (either side: the first and last samples of a rest count too)

       still_j(t) = min(range q_j[t - W, t], range q_j[t, t + W]) <= b_j                (R2)

   and a run of still samples shorter than W is not a rest but the apex of a swing
   or a trajectory passing through zero velocity (it stays within b for a moment, while
   friction acts as in motion): it is dropped (a binary opening).

   White noise of m samples spans about 2 sqrt(2 ln m) s_q (4.3 s_q for m = 10, 6.1 for
   500); a count's flicker one count (b = 8 s_q >= 2.3 Q by R1b: two counts of flicker
   stay still); so b = 8 s_q keeps a rest still, and a joint moving faster than b / W counts
   as moving. W is ``REST_WINDOW``, longer (up to ``MAX_WINDOW``) when a joint's band is
   coarse for its motion, so that b / W stays below ``SLOW_SHARE`` of the joint's RMS
   velocity: a coarse encoder (a count of 0.01 rad) needs a longer look to tell a slow joint
   from a still one;
3. turns (``data.still``, ``_paused``): a still run of (R2) is also where a swing turns, or a
   slow passage crawls, within b: a parabola q = q0 + a (t - t0)^2 / 2 stays within b for

       T = 2 sqrt(2 b / |a|)                                                          (R3a)

   (1-2 s at the apexes of a 0.2 Hz swing read by a 0.0126 rad count, b = 0.029 rad, a ~ 0.1
   rad/s^2), as long as a rest. What tells them apart is the motion around the run: a turn is
   part of it, one smooth curve through the run; a rest pauses it, the curve before the run
   goes on after it as if the run's time D = t_e - t_s had not passed. Over the run and its
   sides (each at most D long, and only up to where q leaves the run's level l by K b, K =
   ``TURN_BAND``: the motion near the run), two cubics of the same four coefficients are
   fitted to the raw q by least squares, one in real time, one in the time with the run
   removed:

       M_turn:  q(t) = p(t - t_m)                 t_m the run's middle
       M_rest:  q(t) = p(c(t)),  c = t - t_s before the run, 0 in it, t - t_e after       (R3)

   and the run is a rest when M_rest leaves the smaller sum of squares (a tie too: a run
   with no motion around it, a piece that rests throughout, stays a rest). Both models have
   as many parameters, so the sums compare directly (a likelihood ratio under the same
   noise). A rest entered from a motion of speed v shifts the motion after it by v D
   against a curve running through (many counts when v D is); a turn leaves M_rest a kink,
   the two slopes meeting at c = 0, which a cubic in c cannot follow. What stays ambiguous is a stop where the joint was already
   crawling, at a resolution coarser than what it moves during the stop. A run longer than
   ``TURN_WINDOWS`` W is a rest without the test (its decision must stay within the context
   a streamed window holds, ``data.still.context_samples``).

The bands are stored in result.json (``preprocessing.rest_band``, with ``rest_detection``
telling how they were measured), so ``predict`` and ``validate`` treat rest as ``identify``
did. ``--rest auto`` (the default) measures them; ``--rest off`` keeps the filtered
velocities everywhere (before: the only behaviour).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from dynid.data.blocks import pieces, read_blocks
from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import edge_samples, lowpass, prepare
from dynid.data.still import REST_WINDOW, still_mask

BUDGET = 240_000  # rows of a long log the noise is measured on (evenly spread blocks past it)
MAX_WINDOW = 0.5  # s: W of (R2), at most
SLOW_SHARE = 0.02  # b / W at most this share of a joint's RMS velocity (W permitting)
NOISE_WINDOW = 0.5  # s: windows of the noise measurement (at least 50 samples)
MOVING_SHARE = 0.05  # a window where the joint's mean speed is this share of its RMS speed moves
NOISE_QUANTILE = 0.05  # the quantile of the windows' noise taken (a low one: 0.6-0.8 x white noise's RMS)
BAND_FACTOR = 8.0  # b = this x the position noise (R2)
REFERENCE_SHARE = 0.4  # f_ref of (R1), a share of the sample rate
STEP_QUANTILE = 0.01  # Q of (R1b): this quantile of a raw log's nonzero position steps


def residual_gain(fs: float, cutoff: float, order: int = 4) -> float:
    """g_r of (R1): the white-noise gain of q - LP(q) at rate fs (zero-phase Butterworth)."""
    half = int(min(40.0 * fs / cutoff, 1_000_000)) + 8
    impulse = np.zeros(2 * half + 1)
    impulse[half] = 1.0
    return float(np.sqrt(np.sum((impulse - lowpass(impulse, fs, cutoff, order)) ** 2)))


def position_noise(blocks: list[JointData], prep) -> dict:
    """s_q (R1) per joint of raw pieces of a log, resampled as ``prepare`` does under ``prep``:
    {"position_noise": (n,), "rate_hz": float, "samples": int, "still_share": (n,) share of the
    samples still by (R2) with the bands it gives, "window_s": (n,) W, "rms_velocity": (n,)}.

    The residual's RMS is taken window by window (``NOISE_WINDOW``, from the median of r^2)
    over the samples where the joint moves (its speed at least ``MOVING_SHARE`` of its RMS
    speed: a quantized joint at rest leaves r = 0), in the windows where it moves half the
    time or more, and s_q is
    a low quantile (``NOISE_QUANTILE``) of them: the noise is the same in every window, what
    the filter removes of the motion itself (fast swings logged at a low rate, the corners of
    a stop) is not, and only adds."""
    raw_prep = replace(prep, lowpass_hz=0.0, decimate=1, tau_delay=0.0, trim=None, filter_torque=False,
                       rest_band=(), rest_window=())
    residuals, positions, trims, speeds, steps, fs, samples = [], [], [], [], [], None, 0
    for piece in blocks:
        if len(piece) < 3:
            continue
        steps.append(np.abs(np.diff(piece.q, axis=0)))  # the raw log's own steps, before resampling
        ready = prepare(replace(piece, dq=None, ddq=None, notes=[]), raw_prep)  # resampled, not filtered
        rate = float(ready.rate)
        trim = edge_samples(replace(raw_prep, lowpass_hz=REFERENCE_SHARE * rate), rate)
        if len(ready) <= 2 * trim + 2:
            continue
        fs = rate if fs is None else fs
        q = ready.q
        r = (q - lowpass(q, rate, REFERENCE_SHARE * rate, prep.filter_order))[trim:len(q) - trim]
        lag = max(1, int(round(0.1 * rate)))  # mean speeds over 0.1 s: whatever the noise
        speed = np.abs(q[np.minimum(np.arange(len(q)) + lag, len(q) - 1)] - q) * (rate / lag)
        speed = speed[trim:len(q) - trim]
        residuals.append(r)
        positions.append(q)
        trims.append(trim)
        speeds.append(speed)
        samples += len(r)
    if not positions:
        return {"position_noise": None, "rate_hz": fs, "samples": 0, "still_share": None}
    rms_velocity = np.sqrt(np.mean(np.concatenate(speeds) ** 2, axis=0))
    n, length = rms_velocity.size, max(20, int(round(NOISE_WINDOW * fs)))
    per_window = []  # (windows, n): RMS of each window's moving samples, NaN for a window that mostly rests
    for r, speed in zip(residuals, speeds):
        count = len(r) // length
        if count:
            moving = (speed[:count * length] >= MOVING_SHARE * rms_velocity).reshape(count, length, n)
            squares = np.where(moving, r[:count * length].reshape(count, length, n) ** 2, np.nan)
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a window without a moving sample: NaN
                rms = np.sqrt(np.nanmedian(squares, axis=1) / MEDIAN_CHI2)
            per_window.append(np.where(moving.mean(axis=1) >= 0.5, rms, np.nan))
    sigma = np.zeros(n)  # a joint with no window where it moves keeps 0: still only where q is constant
    if per_window:
        g_r = residual_gain(fs, REFERENCE_SHARE * fs, prep.filter_order)
        noise = np.concatenate(per_window)
        for j in range(n):  # loop over joints
            values = noise[np.isfinite(noise[:, j]), j]
            if values.size:
                sigma[j] = np.quantile(values, NOISE_QUANTILE) / g_r  # (R1)
    floor = position_resolution(np.concatenate(steps)) / math.sqrt(12.0)  # (R1b), where (R1) measured a noise
    sigma = np.where(sigma > 0, np.maximum(sigma, floor), 0.0)
    window = rest_window(BAND_FACTOR * sigma, rms_velocity)
    mask = np.concatenate([still_mask(p, fs, BAND_FACTOR * sigma, window)[k:len(p) - k]
                           for p, k in zip(positions, trims)])
    return {"position_noise": sigma, "rate_hz": fs, "samples": samples, "still_share": mask.mean(axis=0),
            "window_s": window, "rms_velocity": rms_velocity}


def position_resolution(steps: np.ndarray) -> np.ndarray:
    """Q of (R1b) per joint: the ``STEP_QUANTILE`` quantile of the nonzero steps |q[k+1] - q[k]|
    (N, n) of a raw log (an encoder's count; about 0 for a position that is not quantized)."""
    out = np.zeros(steps.shape[1])
    for j in range(steps.shape[1]):  # loop over joints
        moved = steps[steps[:, j] > 0.0, j]
        out[j] = np.quantile(moved, STEP_QUANTILE) if moved.size else 0.0
    return out


MEDIAN_CHI2 = 0.45493642311957  # the median of a chi-square variable of one degree of freedom


def rest_window(band: np.ndarray, rms_velocity: np.ndarray) -> np.ndarray:
    """(n,) W [s] of (R2) per joint: ``REST_WINDOW``, longer for a joint whose band b is coarse
    for its motion (b / W <= SLOW_SHARE x its RMS velocity), at most ``MAX_WINDOW``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(rms_velocity > 0, band / (SLOW_SHARE * rms_velocity), MAX_WINDOW)
    return np.clip(need, REST_WINDOW, MAX_WINDOW)


def choose_rest(robot, paths, prep, mapping: ColumnMapping = ColumnMapping(), nan: str = "drop",
                chunk_rows: int = 50_000, budget: int = BUDGET) -> tuple[object, dict, list[str]]:
    """``--rest auto``: (``prep`` with ``rest_band`` measured on the log file(s) ``paths``,
    result.json's "rest_detection", notes). A log whose noise cannot be measured (too short
    for the reference filter) keeps no rest detection, with a note."""
    paths = list(paths)
    share = max(budget // max(len(paths), 1), 1)
    blocks = pieces([b for p in paths for b in read_blocks(p, robot, mapping, nan, share, 5, chunk_rows, prep)])
    noise = position_noise(blocks, prep)
    if noise["position_noise"] is None:
        note = "rest not detected: the log is too short to measure its position noise"
        return replace(prep, rest_band=()), {"method": "off", "reason": note}, [note]
    band, window = BAND_FACTOR * noise["position_noise"], noise["window_s"]
    info = {"method": f"raw position within {BAND_FACTOR:g} x its noise over {REST_WINDOW:g}-{MAX_WINDOW:g} s "
                      "before or after, where the motion around pauses (not a turn passing through)",
            "rest_window": [_num(v) for v in window], "rest_band": [_num(v) for v in band],
            "position_noise": [_num(v) for v in noise["position_noise"]],
            "still_share": [_num(v) for v in noise["still_share"]], "samples": noise["samples"],
            "rate_hz": _num(noise["rate_hz"])}
    shares = "/".join(f"{100 * v:.0f}" for v in noise["still_share"])
    note = (f"standing still (--rest auto): {shares} % of the samples of joints 1-{len(band)} (raw position within "
            f"{BAND_FACTOR:g} x its noise over {_seconds(window)} s): velocity 0 there, no Coulomb torque, each "
            "rest's held torque fitted as a level of its own")
    notes = [note] if noise["still_share"].max() > 0 else []
    unmeasured = np.flatnonzero(noise["position_noise"] == 0)
    if unmeasured.size:  # no window where the joint moves half the time: (R1) has nothing to measure
        joints = ", ".join(str(j + 1) for j in unmeasured)
        notes.append(f"rest detection: joint(s) {joints} never move in a {NOISE_WINDOW:g} s window, so their position "
                     "noise is not measured: band 0, standing still only where the raw position is exactly constant")
    return (replace(prep, rest_band=tuple(float(v) for v in band), rest_window=tuple(float(v) for v in window)), info,
            notes)


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _seconds(window: np.ndarray) -> str:
    low, high = float(np.min(window)), float(np.max(window))
    return f"{low:.3g}" if high - low < 1e-9 else f"{low:.3g}-{high:.3g}"
