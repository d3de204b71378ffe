"""Revolute angles logged within one turn (data/angles.py, W1): a joint that turns past the wrap
point jumps by 2 pi between two samples; the readers make the angle continuous again, in chunks of
any size, and the fit is the one of the continuous log (the same pose, so the same torques)."""

from __future__ import annotations

import json

import numpy as np

import dynid
from dynid.data.angles import AngleUnwrap
from dynid.data.columns import JointData
from dynid.data.io import write_joint_data

from cli_helpers import run_ok
from realistic_logs import realistic_log


def _wrapped_into(q: np.ndarray, center: float) -> np.ndarray:
    """q wrapped into [center - pi, center + pi): the same angles modulo 2 pi."""
    return (q - center + np.pi) % (2.0 * np.pi) - np.pi + center


def test_wraps_are_undone_in_any_chunking_and_each_segment_starts_again():
    t = np.arange(0.0, 20.0, 0.002)
    q = np.column_stack([3.0 * np.sin(0.7 * t) + 0.75 * t, 0.5 * np.sin(t)])  # q1 turns past +-pi 7 times
    logged = np.column_stack([_wrapped_into(q[:, 0], 0.0), q[:, 1]])
    segment = (t >= 12.0).astype(np.int64)
    for rows in (t.size, 777, 50):
        unwrap, out = AngleUnwrap([True, False]), []
        for a in range(0, t.size, rows):
            part = slice(a, a + rows)
            out.append(unwrap(JointData(t[part], logged[part], tau=np.zeros((t[part].size, 2)),
                                        segment=segment[part])).q)
        made = np.vstack(out)
        turns = np.round((made[:, 0] - q[:, 0]) / (2.0 * np.pi))
        assert np.allclose(made[:, 0] - q[:, 0], 2.0 * np.pi * turns, atol=1e-9)
        assert np.ptp(turns[segment == 0]) == 0 and np.ptp(turns[segment == 1]) == 0  # continuous in each
        assert np.array_equal(made[:, 1], q[:, 1])  # a joint that never steps beyond pi is left alone
        assert "q1 (7) wrap(s) undone" in unwrap.summary()


def test_a_log_whose_angle_wraps_fits_as_the_continuous_one(tmp_path):
    """planar2, 200 Hz, q1 logged within [c - pi, c + pi) while the motion crosses c + pi: the
    same base parameters as the continuous log (before, the 2 pi jumps differentiated into
    accelerations of ~1e5 rad/s^2 ruined the fit)."""
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 200.0, 20.0, seed=5, encoder_counts=2 ** 16, drop=0.0)
    q = data.q.copy()
    q[:, 0] = _wrapped_into(q[:, 0], float(np.median(q[:, 0])) + np.pi)
    assert np.max(np.abs(np.diff(q[:, 0]))) > 6.0  # it does wrap
    write_joint_data(tmp_path / "continuous.csv", data)
    write_joint_data(tmp_path / "wrapped.csv", JointData(data.t, q, tau=data.tau))
    values = {}
    for name in ("continuous", "wrapped"):
        out = run_ok("identify", "-r", "planar2", "-d", tmp_path / f"{name}.csv", "-o", tmp_path / f"{name}.json",
                     "--lowpass", "10")
        result = json.loads((tmp_path / f"{name}.json").read_text())
        values[name] = np.array([p["value"] for p in result["base_parameters"]])
    assert "wrap(s) undone" in " ".join(out.split())
    assert np.allclose(values["wrapped"], values["continuous"], rtol=1e-6, atol=1e-9), values
