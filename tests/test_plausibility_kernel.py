"""The compiled scans of LogChecks give the booleans of their NumPy definitions (filled stretches:
collinear rows of every position and torque while moving; jumps beyond a threshold), NaN included."""

import numpy as np

from dynid.data.plausibility import FLAT_TOLERANCE
from dynid.data.plausibility_kernel import any_jump, filled_steps


def filled_numpy(q, tau, valid):
    signals = np.concatenate([q, tau], axis=1)
    scale = FLAT_TOLERANCE * (np.max(np.abs(signals), axis=0) + 1e-9)
    flat = np.all(np.abs(np.diff(signals, 2, axis=0)) <= scale, axis=1)
    moving = np.any(np.diff(q, axis=0)[1:] != 0, axis=1)
    return flat & moving & valid[1:] & valid[:-1]


def log(seed, count=3000):
    rng = np.random.default_rng(seed)
    t = np.arange(count) * 1e-3
    q = np.sin(t[:, None] * rng.uniform(0.5, 3.0, 4)) + 1e-4 * rng.standard_normal((count, 4))
    tau = rng.standard_normal((count, 4))
    a, b = 500, 1700  # a stretch filled by linear interpolation
    w = np.linspace(0.0, 1.0, b - a)[:, None]
    q[a:b], tau[a:b] = q[a] * (1 - w) + q[b] * w, tau[a] * (1 - w) + tau[b] * w
    q[2000:2100] = q[2000]  # held still: collinear but not moving
    tau[2000:2100] = tau[2000]
    valid = rng.random(count - 1) > 0.01
    return q, tau, valid


def test_filled_steps_match_their_definition():
    for seed in range(3):
        q, tau, valid = log(seed)
        expected = filled_numpy(q, tau, valid)
        assert expected.sum() > 1000  # the filled stretch is found
        np.testing.assert_array_equal(filled_steps(q, tau, valid, FLAT_TOLERANCE), expected)
        q[800, 1], tau[2500, 3] = np.nan, np.nan  # a NaN column has no scale: nothing is flat
        np.testing.assert_array_equal(filled_steps(q, tau, valid, FLAT_TOLERANCE), filled_numpy(q, tau, valid))
        strided = np.asfortranarray(q)[::-1][::-1]  # layouts the readers hand over
        np.testing.assert_array_equal(filled_steps(strided, tau, valid, FLAT_TOLERANCE), filled_numpy(q, tau, valid))
    assert filled_steps(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(1, dtype=bool), FLAT_TOLERANCE).size == 0


def test_any_jump_matches_its_definition():
    rng = np.random.default_rng(1)
    dq = 1e-3 * rng.standard_normal((1000, 3))
    valid = np.ones(1000, dtype=bool)
    threshold = np.full(3, 0.1)
    assert not any_jump(dq, valid, threshold)
    dq[400, 2] = -0.5
    assert any_jump(dq, valid, threshold)
    valid[400] = False  # a step across a gap or a segment boundary is no jump
    assert not any_jump(dq, valid, threshold)
    dq[10, 0] = np.nan  # NaN is no jump (as |NaN| > threshold is False)
    assert any_jump(dq, valid, threshold) == bool(((np.abs(dq) > threshold) & valid[:, None]).any())
