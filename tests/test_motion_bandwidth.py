"""The motion's bandwidth measured from logged positions (data/bandwidth.py, B1-B2): the
harmonics that carry the position's power, not the quantization, the noise or a structural
mode, on a log as a real controller writes it."""

from __future__ import annotations

import numpy as np

from dynid.data.bandwidth import motion_bandwidth
from dynid.data.columns import JointData


def _log(seconds: float, seed: int, rate: float = 5000.0, top: float = 1.25, mode_hz: float = 35.0,
         mode_rad: float = 2e-4, counts: float = 2 ** 14):
    """Joints 1-2: five harmonics of 0.25 Hz up to ``top`` of equal amplitude (0.2 rad), a lightly
    damped structural mode of ``mode_rad`` at ``mode_hz``, a ``counts``-count joint encoder and
    white noise; joint 3 held still (a 3 mrad wander at 0.1 Hz, its servo hunting 1 mrad at 4 Hz,
    as the real iiwa's held joints 1-2 do). Irregular time: 0.3 ms of
    jitter and 1 % of the samples dropped."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / rate) + rng.uniform(-0.3e-4, 0.3e-4, int(round(seconds * rate)))
    t = np.sort(t[rng.random(t.size) > 0.01])
    harmonics = np.linspace(top / 5.0, top, 5)
    q = np.zeros((t.size, 3))
    for j in range(2):
        phase = rng.uniform(0.0, 2.0 * np.pi, 5)
        q[:, j] = 0.2 * np.sin(2.0 * np.pi * harmonics[None, :] * t[:, None] + phase).sum(axis=1)
        q[:, j] += mode_rad * np.sin(2.0 * np.pi * mode_hz * t + rng.uniform(0, 6.3)) * (1.0 + 0.5 * np.sin(t))
    q[:, 2] = 0.003 * np.sin(2.0 * np.pi * 0.1 * t) + 0.001 * np.sin(2.0 * np.pi * 4.0 * t)
    q += rng.normal(0.0, 1e-5, q.shape)
    step = 2.0 * np.pi / counts
    return JointData(t, np.round(q / step) * step)


def test_the_bandwidth_is_the_highest_harmonic_of_the_motion_not_the_mode_or_the_quantization():
    """A 6 s, 5 kHz log: B (99 % of the position's power, B1) is the 1.25 Hz top harmonic, up to
    the Hann window's main lobe (2 / T = 0.33 Hz), although the 35 Hz mode's acceleration is
    larger than the motion's (2e-4 rad x (2 pi 35 Hz)^2 = 9.7 rad/s^2)."""
    data = _log(6.0, seed=1)
    b = motion_bandwidth([data], joints=[0, 1])
    assert 1.0 <= b <= 1.25 + 2.0 / 6.0, b
    assert motion_bandwidth([_log(6.0, seed=1, top=2.5)], joints=[0, 1]) >= 2.0  # twice as fast: twice B


def test_pieces_are_measured_each_on_its_own_grid_and_a_still_joint_is_left_out():
    """The same motion cut into three files (gaps between them: a cut log, never bridged) gives the
    same B within a bin of the shorter pieces; with the held-still joint counted, B is that of its
    servo hunting, which is why ``crossval`` passes only the moving joints (B2)."""
    data = _log(9.0, seed=2)
    whole = motion_bandwidth([data], joints=[0, 1])
    cut = [data.select((data.t >= a) & (data.t < b)) for a, b in ((0.0, 3.1), (3.3, 6.0), (6.4, 9.0))]
    assert abs(motion_bandwidth(cut, joints=[0, 1]) - whole) <= 2.0 / 2.7, (whole, motion_bandwidth(cut, [0, 1]))
    assert motion_bandwidth([data]) >= 4.0 > whole  # the still joint's hunting is no motion to keep
    assert motion_bandwidth([data], joints=[]) is None
    assert motion_bandwidth([data.select(slice(0, 10))]) is None  # too short for a spectrum


def test_coarse_joint_encoders_do_not_widen_the_band():
    """A 500-count encoder at the joint (0.0126 rad steps, larger than the motion moves in many
    samples at 500 Hz): its staircase is not white, yet it carries far under 1 % of the power."""
    data = _log(40.0, seed=3, rate=500.0, top=0.2, counts=500.0)
    assert 0.2 <= motion_bandwidth([data], joints=[0, 1]) <= 0.2 + 2.0 / 40.0
