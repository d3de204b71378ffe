"""Dropped cycles (issue 22 item 3): a real-time controller's missed cycles of a few ms never
split a log (they are resampled inside the segment); long gaps still do, each counted in a note."""

from __future__ import annotations

import json

import numpy as np

import dynid
from dynid.data.io import write_joint_data
from dynid.data.segments import Segmenter

from cli_helpers import runner
from realistic_logs import drop_cycles, realistic_log
from dynid.cli.main import app


def test_steps_up_to_the_bridge_never_split_and_are_counted():
    t = np.arange(0.0, 2.0, 0.001)
    t = np.delete(t, np.r_[500:509, 1200:1203])  # a 10 ms and a 4 ms step
    t = np.concatenate([t, t[-1] + 0.5 + np.arange(0.0, 1.0, 0.001)])  # and a 0.5 s gap
    segmenter = Segmenter("log.csv")
    ids, _ = segmenter(t, None, np.arange(1, t.size + 1))
    assert ids[-1] == 1 and np.count_nonzero(np.diff(ids)) == 1  # only the 0.5 s gap splits
    note = segmenter.summary()
    assert "2 segments, split at 1 gap(s)" in note and "2 step(s) of dropped samples (up to 10 ms) bridged" in note
    assert "20 ms" in note  # the rule says where the threshold lies
    strict = Segmenter("log.csv", bridge_gap=0.0)  # --bridge-gap 0: the old rule (5 x the median step)
    assert strict(t, None, np.arange(1, t.size + 1))[0][-1] == 2  # the 10 ms step splits too


def _identify_as_one_segment(tmp_path, data, lowpass):
    """identify planar2 on `data` written as one CSV; the result, asserted to be one segment."""
    write_joint_data(tmp_path / "log.csv", data)
    out = runner.invoke(app, ["identify", "-r", "planar2", "-d", str(tmp_path / "log.csv"), "--lowpass", lowpass,
                              "-o", str(tmp_path / "r.json")])
    assert out.exit_code == 0, out.output
    result = json.loads((tmp_path / "r.json").read_text())
    assert len(result["sources"][0]["segments"]) == 1
    return result


def test_a_1khz_log_with_dropped_cycles_keeps_its_samples(tmp_path):
    """0.5 % of a 20.5 s, 1 kHz log lost in runs of 2-9 ms (plus 1 % single samples): the fit
    keeps at least 99 % of the logged samples and the log stays one segment. Before: every drop
    longer than 5 ms split the log and cost two filter edges (3 fs / f_c samples each)."""
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 1000.0, 20.5, seed=7, encoder_counts=2 ** 16)
    data = drop_cycles(data, 0.005, seed=8)
    steps = np.diff(data.t)
    assert np.sum(steps > 0.0055) >= 5  # several drops longer than 5 x the 1 ms step
    result = _identify_as_one_segment(tmp_path, data, "10")
    assert result["fit"]["samples"] >= 0.99 * len(data), (result["fit"]["samples"], len(data))
    assert any("bridged by resampling" in note for note in result["data_notes"]), result["data_notes"]


def test_the_bridge_from_the_motion_keeps_cubic_interpolation_within_its_tolerance():
    """(S1)-(S2) of data/segments.py: across a step of the longest length bridged for a motion of
    bandwidth B, a cubic spline through a sine of frequency B sampled at 250 Hz errs by about
    SPLINE_TOLERANCE of its amplitude where the sine's fourth derivative peaks (within 40 %: (S1)
    is cubic Hermite interpolation's error; the spline's, with knots 4 ms apart beside the step,
    is 1.1-1.3 x it here), and by several
    times more over a step 1.5 x as long."""
    import scipy.interpolate

    from dynid.data.segments import SPLINE_TOLERANCE, bridge_for_motion

    for bandwidth in (0.5, 0.9, 1.5):
        gap = bridge_for_motion(bandwidth)
        centre = (0.25 + np.ceil(2.0 * bandwidth)) / bandwidth  # a crest of the sine, past 2 s
        errors = []
        for step in (gap, 1.5 * gap):
            before = centre - step / 2 - np.arange(500)[::-1] * 0.004
            after = centre + step / 2 + np.arange(500) * 0.004
            knots = np.concatenate([before, after])
            spline = scipy.interpolate.CubicSpline(knots, np.sin(2 * np.pi * bandwidth * knots))
            inside = np.linspace(centre - step / 2, centre + step / 2, 201)
            errors.append(np.max(np.abs(spline(inside) - np.sin(2 * np.pi * bandwidth * inside))))
        assert 0.8 * SPLINE_TOLERANCE <= errors[0] <= 1.4 * SPLINE_TOLERANCE < 3 * SPLINE_TOLERANCE < errors[1], \
            (bandwidth, gap, errors)
    assert bridge_for_motion(None) == 0.02 and bridge_for_motion(5.0) == 0.02 and bridge_for_motion(0.05) == 0.1


def test_a_slow_250hz_log_dropping_five_cycles_in_a_row_stays_whole(tmp_path):
    """A 250 Hz log of a slow motion (up to 0.5 Hz) whose controller drops 4-5 cycles in a row
    (steps of 20-24 ms): the steps are bridged (0.0396 / B > 24 ms) and the log stays one
    segment. Before: every step over the fixed 20 ms split it, each split costing two filter
    edges (a UR10 log like it: 11 segments, held-out error 1.76 % instead of 0.48 %)."""
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 250.0, 20.0, seed=9, f0=0.1, encoder_counts=2 ** 16, drop=0.0)
    data = drop_cycles(data, 0.02, seed=10, low=0.016, high=0.0199)
    steps = np.diff(data.t)
    assert np.sum(steps > 0.0201) >= 5  # several steps longer than the old 20 ms
    result = _identify_as_one_segment(tmp_path, data, "2")
    assert result["preprocessing"]["bridge_gap"] > steps.max(), (result["preprocessing"]["bridge_gap"], steps.max())
    assert result["gap_bridging"]["motion_bandwidth_hz"] < 1.0, result["gap_bridging"]
