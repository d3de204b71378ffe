"""Velocity reversals (data/reversals.py): where the acceleration estimate smears the friction flip."""

from __future__ import annotations

import numpy as np

from dynid.data.columns import JointData
from dynid.data.preprocess import Preprocessing, prepare_segment
from dynid.data.reversals import STEP_SHARE, derivative_span, reversal_rows, velocity_gain


def test_the_rows_marked_at_a_reversal_are_those_whose_acceleration_estimate_is_off():
    """(V1-V2) through prepare itself: a joint whose velocity reverses at t_r while its
    acceleration steps from 3 to 1 rad/s^2 (the friction flip, V1) gets an acceleration estimate
    off by more than STEP_SHARE of the step only within the span of t_r, and reversal_rows marks
    the rows within the span of the two rows the estimated velocity changes sign between, every
    row off by more than twice STEP_SHARE among them."""
    for fs, cutoff in ((100.0, 40.0), (1000.0, 20.0)):
        prep = Preprocessing(lowpass_hz=cutoff)
        span = derivative_span(prep, fs)
        assert 0.5 / fs < span < 3.0 / cutoff, (fs, cutoff, span)
        t = np.arange(-int(fs), int(fs) + 1) / fs
        t_r = 0.37 / fs
        a = np.where(t < t_r, 3.0, 1.0)
        out = prepare_segment(JointData(t, (0.5 * a * np.square(t - t_r))[:, None]), prep)
        inner = np.abs(out.t) < 0.5
        error = np.abs(out.ddq[:, 0] - np.where(out.t < t_r, 3.0, 1.0)) / 2.0
        near = np.abs(out.t - t_r) <= span
        assert np.all(error[inner & ~near] <= STEP_SHARE + 1e-9), (fs, cutoff, error[inner & ~near].max())
        assert np.max(error[inner & near]) > 0.2, (fs, cutoff)
        marked = reversal_rows(out.dq, span * fs)[:, 0]
        flip = np.flatnonzero(np.diff(np.sign(out.dq[:, 0])))
        assert flip.size == 1 and abs(out.t[flip[0]] - t_r) < 0.1 * span + 1.0 / fs, (out.t[flip], t_r)
        pair = out.t[flip[0]:flip[0] + 2]  # the two rows the velocity changes sign between
        distance = np.min(np.abs(out.t[:, None] - pair[None, :]), axis=1)
        assert np.array_equal(marked, distance <= span + 1e-9), (fs, cutoff)
        # the filter moves the zero crossing of dq off t_r (by 2.8 ms at 1 kHz, 20 Hz: the slopes differ)
        assert np.all(marked[inner & (error > 2.0 * STEP_SHARE)]), (fs, cutoff)
        assert not reversal_rows(out.dq, 0.0)[:, 0].any()


def test_the_velocity_noise_gain_is_that_of_the_logs_own_velocity_estimate():
    """g_v (step 1): white position noise of unit std through prepare (low-pass, differences, and
    decimation by 4) gives velocities of std g_v, within 10 % (a finite sample)."""
    rng = np.random.default_rng(0)
    fs = 1000.0
    noise = rng.normal(size=(20000, 1))
    for decimate in (1, 4):
        prep = Preprocessing(lowpass_hz=10.0, decimate=decimate)
        out = prepare_segment(JointData(np.arange(noise.shape[0]) / fs, noise), prep)
        measured = np.std(out.dq[200 // decimate:-200 // decimate])
        assert abs(velocity_gain(prep, fs) / measured - 1.0) < 0.1, (decimate, velocity_gain(prep, fs), measured)
