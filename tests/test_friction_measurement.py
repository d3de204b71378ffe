"""Friction measurement from encoder positions only: velocities and accelerations estimated by
the data layer (50 Hz, 2^14-count motor encoders, default low-pass), torque noise 0.3 N m."""

import numpy as np

from dynid.data.preprocess import Preprocessing, prepare
from dynid.friction import analyze
from dynid.identify.model import ModelOptions
from dynid.simulate import Measurement, simulate_joint_data

from friction_helpers import COULOMB, DRIFT, VISCOUS, protocol, robot


def test_levels_and_friction_from_estimated_derivatives():
    r, p = robot(), protocol(3, 50.0)
    data, _, _ = simulate_joint_data(r, p["t"], p["q"], p["dq"], p["ddq"], ModelOptions(),
                                     np.column_stack([COULOMB, VISCOUS]), None,
                                     Measurement(0.3, encoder_counts=16384), seed=2, drift=DRIFT)
    assert data.dq is None and data.ddq is None
    data.cycle, data.stage = p["cycle"], p["stage"]
    result = analyze(r, prepare(data, Preprocessing()), fit_drifts=False)
    shares = np.array(p["summary"]["friction_speed_shares"])  # speeds the protocol used, / dq_max
    # every level holding its speed >= 0.4 s per stroke is found, and nothing else; shorter
    # plateaus (joint 3 at 100 %: 0.13 s, joint 5 at 100 %: 0.33 s: short ranges) may not
    # survive the 5 Hz low-pass of encoder-only velocities at 50 Hz
    cruise = np.array([[u["cruise"] for u in levels] for levels in p["summary"]["friction_levels"]])
    f = result.friction
    for j in range(r.n):
        dq_max = r.limit_array("dq_max")[j]
        found = np.asarray(result.levels[j]) / dq_max
        nearest = np.abs(found[:, None] - shares[j][None, :]).min(axis=1)
        assert np.all(nearest < 0.01 * found), (j, found, shares[j])
        for share in shares[j][cruise[j] >= 0.4]:
            assert np.min(np.abs(found - share)) < 0.01 * share, (j, found, share)
        m = f["joint"] == j
        assert m.sum() == 3 * found.size  # every level in every cycle, both directions
        v, t = f["speed"][m], f["time"][m]
        truth = (COULOMB[j] + VISCOUS[j] * v) * (1 + 0.5 * np.exp(-t / 900.0) + 0.4 * np.exp(-t / 200.0))
        assert np.abs(f["friction"][m] - truth).max() < 0.2  # means of ~100 samples, noise 0.3
