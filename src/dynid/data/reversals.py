"""Velocity reversals: the rows where a sign(dq) friction model cannot be fitted from the log.

Friction that depends on sign(dq) (Coulomb, Stribeck, load-dependent: ``identify.model``) flips
by 2 F (F = Fc, or Fs for Stribeck friction) when a joint's velocity reverses. The drive torque
is continuous there (a controller's output), so the joint's acceleration jumps
(Armstrong-Helouvry, Dupont & Canudas de Wit, "A survey of models, analysis tools and
compensation methods for the control of machines with friction", Automatica 30(7), 1994, sec. 2;
the thesis, sec. 3.2, friction as sign(dq) in the inverse dynamic model):

    M_jj Delta ddq_j = 2 F_j   at t_r, where dq_j(t_r) = 0 and changes sign                 (V1)

A log samples positions only; the acceleration the model needs is estimated from them
(``data.preprocess``: zero-phase low-pass, then differences), an estimator of finite span that
turns the step (V1) into a ramp: at a sample t_k near the reversal its estimate is off by
Delta ddq e(t_k - t_r), e the estimator's error on a unit acceleration step (e(0+) ~ -1/2). The
model then sees the friction torque F sign(dq) + M_jj Delta ddq e(t_k - t_r): at the samples next
to a reversal, friction about half as high as it is, whatever its true curve. Those samples
look like friction that falls towards zero velocity (a Stribeck fit with Fs < Fc, or a curve
shifted to higher velocities); on MuJoCo logs of the er3a (tests/test_friction_mujoco.py) the
friction seen at the sample on either side of a reversal was 0.6 Fc while the same samples with
MuJoCo's own velocity and acceleration gave Fc to the noise. A joint that sticks at a reversal
(the drive torque within +-Fs for a while: friction set-valued, Armstrong-Helouvry sec. 2.1,
"stick-slip") adds the samples of its dwell, whose velocity is zero within the noise and whose
sign(dq) is the noise's.

So a joint's *reversal rows* (``reversal_rows``) are left out of the friction fit and of the
held-out scores of every friction model alike (``identify.stribeck``), and of the final fit
(``Preprocessing.reversal_span``, applied by ``identify.pipeline.row_mask``), on the joints whose
log shows the smear (``identify.reversal_smear``, V3: a torque that jumps with the friction, as a
friction feed-forward or a log computed from a smooth trajectory makes it, leaves the
acceleration smooth and the rows informative):

1. slow rows: |dq_j| <= ``NOISE_FACTOR`` x the velocity noise s_dq,j, where the sign of the
   estimated velocity is the noise's; s_dq = s_q g_v, s_q the position noise (``data.rest``, R1:
   rest_band / ``BAND_FACTOR``), g_v the white-noise gain of the velocity estimator (its
   impulse response's 2-norm, ``velocity_gain``). Without a measured position noise (no rest
   detection) only rows with dq = 0 are slow;
2. reversal instants: a slow row, or the two rows between which dq changes sign (the instant
   lies between them; the filter also moves the estimated zero crossing off the true one when
   the acceleration differs on its two sides);
3. the rows within the estimator's span of them (``derivative_span``): the
   largest |t - t_r| at which |e| still exceeds ``STEP_SHARE`` of the step, measured by passing
   a unit acceleration step (q = max(t - t_r, 0)^2 / 2, t_r at four offsets between two
   samples) through the log's own preprocessing (filter, differences, decimation):

       span = max { |t_k - t_r| : |e(t_k - t_r)| > STEP_SHARE }                           (V2)

   (100 Hz log, 40 Hz cutoff: 1.5 samples, e = 0.28 on the sample on either side of t_r,
   0.03 on the next; 1 kHz, 20 Hz: 36 samples; 100 Hz, 10 Hz: 7). Rows of a streamed log are
   marked chunk by chunk: a reversal between two chunks is seen by neither (a few rows).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from dynid.data.columns import JointData
from dynid.data.preprocess import prepare_segment
from dynid.data.rest import BAND_FACTOR

STEP_SHARE = 0.02  # (V2): an acceleration error below this share of the step (a torque error below 0.04 F)
NOISE_FACTOR = 3.0  # slow rows: |dq| within this many standard deviations of the velocity noise (step 1)
OFFSETS = (0.0, 0.25, 0.5, 0.75)  # positions of t_r between two samples in (V2), in samples


def _estimate(prep, fs: float, q: np.ndarray) -> JointData:
    """The log's preprocessing of one joint's positions q (N,) on a grid of rate fs (no rest
    detection, no delay, no reversal rows: the estimator of dq and ddq alone)."""
    t = (np.arange(q.size) - q.size // 2) / fs
    return prepare_segment(JointData(t, q[:, None]), _estimator(prep))


def _estimator(prep):
    return replace(prep, rest_band=(), rest_window=(), tau_delay=0.0, resample_hz=None, reversal_span=(),
                   reversal_velocity=())


def _length(prep, fs: float) -> int:
    """Samples on each side of the probes: several reaches of the filter, at least 64."""
    fc = prep.cutoff(fs)
    reach = fs / fc if fc > 0 else 1.0
    return int(min(max(64, 12 * reach + 8 * prep.decimate + 2 * prep.savgol_window), 20_000))


@lru_cache(maxsize=64)
def derivative_span(prep, fs: float) -> float:
    """(V2): the span [s] around a velocity reversal within which the log's acceleration estimate
    is off by more than ``STEP_SHARE`` of the acceleration step the friction flip causes.
    fs: the rate of the log before decimation [Hz]."""
    m = _length(prep, fs)
    k = np.arange(-m, m + 1)
    span = 0.0
    for offset in OFFSETS:  # in samples of the prepared rate (after decimation)
        t_r = offset * prep.decimate / fs
        out = _estimate(prep, fs, 0.5 * np.square(np.maximum(k / fs - t_r, 0.0)))
        error = out.ddq[:, 0] - (out.t > t_r)
        inner = np.abs(out.t) < 0.5 * m / fs  # away from the probe's own edges
        far = np.abs(out.t - t_r)[inner & (np.abs(error) > STEP_SHARE)]
        span = max(span, float(far.max()) if far.size else 0.0)
    return span


@lru_cache(maxsize=64)
def velocity_gain(prep, fs: float) -> float:
    """g_v of step 1: the standard deviation of the estimated velocity per unit of white position
    noise (the 2-norm of the velocity estimator's impulse response at the log's rate; with
    decimation, over the responses of every phase) [1/s]."""
    m = _length(prep, fs)
    total = 0.0
    for p in range(prep.decimate):  # each phase of the kept samples: together every lag of the response
        impulse = np.zeros(2 * m + 1)
        impulse[m + p] = 1.0
        out = _estimate(prep, fs, impulse)
        inner = np.abs(out.t) < 0.5 * m / fs
        total += float(np.sum(np.square(out.dq[inner, 0])))
    return float(np.sqrt(total))


def with_reversals(prep, fs: float, joints: np.ndarray):
    """``prep`` with the reversal rows of ``joints`` (n,) bool set (``reversal_span`` in samples at
    the prepared rate, 0 for the other joints; ``reversal_velocity`` from the rest bands'
    position noise when measured); fs: the log's rate before decimation [Hz]."""
    plain = _estimator(prep)
    span = max(derivative_span(plain, fs) * fs / prep.decimate, 1e-9)
    slow = ()
    if prep.rest_band:
        slow = tuple(float(v) for v in NOISE_FACTOR * velocity_gain(plain, fs) * np.asarray(prep.rest_band)
                     / BAND_FACTOR)
    return replace(prep, reversal_span=tuple(span if j else 0.0 for j in joints), reversal_velocity=slow)


def reversal_rows(dq: np.ndarray, span, slow_velocity=()) -> np.ndarray:
    """(N, n) True at the reversal rows (steps 1-3) of prepared velocities dq (N, n) of rows on a
    uniform grid: within ``span`` (n,) samples of a slow row (|dq| at most ``slow_velocity``
    (n,), or dq = 0 without one) or of the two rows between which dq changes sign (the reversal
    lies somewhere between them); none for a joint of span 0."""
    n = dq.shape[1]
    span = np.broadcast_to(np.asarray(span, dtype=float), (n,))
    noise = np.broadcast_to(np.asarray(slow_velocity if len(slow_velocity) else 0.0, dtype=float), (n,))
    slow = np.abs(dq) <= noise
    sign = np.where(slow, 0.0, np.sign(dq))
    flip = sign[1:] * sign[:-1] < 0
    event = slow.copy()
    event[:-1] |= flip
    event[1:] |= flip
    k = np.arange(dq.shape[0], dtype=float)[:, None]
    marks = np.where(event, k, np.nan)
    before = _latest(marks)  # the nearest event at or before each row, and at or after it
    after = _latest(marks[::-1])[::-1]
    with np.errstate(invalid="ignore"):
        return ((k - before <= span) | (after - k <= span)) & (span > 0)


def _latest(events: np.ndarray) -> np.ndarray:
    """(N, n) the last non-NaN value of ``events`` (N, n) at or before each row (NaN where none)."""
    index = np.where(np.isnan(events), -1, np.arange(events.shape[0])[:, None])
    index = np.maximum.accumulate(index, axis=0)
    out = np.take_along_axis(events, np.maximum(index, 0), axis=0)
    return np.where(index >= 0, out, np.nan)
