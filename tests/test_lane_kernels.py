"""The SIMD-lane kernels (dynamics/lanes.py, sincos.py): their sin/cos is the C library's to an
ulp, and a large batch (parallel blocks, a partial last block, huge and non-finite angles)
agrees with Pinocchio sample by sample to 1e-9."""

import math

import numba as nb
import numpy as np
from oracles import pin_model, pin_regressor, pin_rnea
from urdf_factory import write_robot

import dynid
from dynid.dynamics.lanes import CHUNK, LANES, PARALLEL_MIN_SAMPLES
from dynid.dynamics.sincos import SINCOS_LIMIT, sincos


@nb.njit
def _sincos_all(x, s, c):
    for k in range(x.shape[0]):
        s[k], c[k] = sincos(x[k])


def test_sincos_within_an_ulp_of_the_c_library():
    rng = np.random.default_rng(3)
    quarter_turns = np.arange(-40, 41) * (math.pi / 4)  # the reduction's boundaries
    x = np.concatenate([rng.uniform(-7.0, 7.0, 100_000), rng.uniform(-SINCOS_LIMIT, SINCOS_LIMIT, 100_000),
                        quarter_turns, np.nextafter(quarter_turns, np.inf), [0.0, -0.0, 1e-300, -1e-8]])
    s, c = np.empty_like(x), np.empty_like(x)
    _sincos_all(x, s, c)
    for ours, libm in ((s, np.sin(x)), (c, np.cos(x))):
        ulps = np.abs(ours - libm) / np.spacing(np.maximum(np.abs(libm), np.finfo(float).tiny))
        assert ulps.max() <= 2.0
        assert np.abs(ours - libm).max() <= 2.3e-16


def test_large_batch_agrees_with_pinocchio_sample_by_sample(tmp_path):
    path = write_robot(tmp_path, "branched", seed=5)
    robot = dynid.load_robot(path).with_gravity([0.3, -1.2, -9.81])
    model = pin_model(path, [0.3, -1.2, -9.81])
    count = PARALLEL_MIN_SAMPLES + CHUNK // 2 + LANES // 3  # parallel, and a partial last block
    rng = np.random.default_rng(11)
    q, dq, ddq = rng.uniform(-2, 2, (3, count, robot.n))
    q[5, 1] = 3e6  # beyond the lane sin/cos range: the C library's
    q[700, 0] = -2.5e5
    y, tau = dynid.regressor(robot, q, dq, ddq), dynid.inverse_dynamics(robot, q, dq, ddq)
    pick = np.r_[0:40, 690:710, count - 40:count]
    for ours, theirs in ((y[pick], pin_regressor(model, q[pick], dq[pick], ddq[pick])),
                         (tau[pick], pin_rnea(model, q[pick], dq[pick], ddq[pick]))):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * max(1.0, np.abs(theirs).max()))
    np.testing.assert_allclose(y @ robot.parameters(), tau, rtol=0, atol=1e-9 * np.abs(tau).max())
    one = dynid.regressor(robot, q[:7], dq[:7], ddq[:7])  # the serial path gives the same numbers
    np.testing.assert_allclose(one, y[:7], rtol=0, atol=1e-12 * np.abs(y).max())


def test_non_finite_angle_poisons_only_its_sample():
    robot = dynid.load_robot("er3a")
    q, dq, ddq = np.random.default_rng(2).uniform(-1, 1, (3, 2 * LANES, robot.n))
    q[3, 2] = np.nan
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    assert np.isnan(tau[3]).any() and np.isfinite(np.delete(tau, 3, axis=0)).all()
