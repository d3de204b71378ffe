"""Data that cannot determine the model is refused or flagged, never returned as confident numbers."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.errors import IllConditionedError
from dynid.identify import ModelOptions, base_parameters, base_regressor
from dynid.identify.estimators import OrdinaryLeastSquares, WeightedLeastSquares
from dynid.simulate import random_multisine, simulate_joint_data


def _log(robot, options, moving):
    """A multi-sine on the joints in ``moving``; the others stay at their middle position."""
    t = np.arange(0.0, 10.0, 0.01)
    q, dq, ddq = random_multisine(robot, seed=2).sample(t)
    still = np.setdiff1d(np.arange(robot.n), moving)
    q[:, still] = q[0, still]
    dq[:, still] = 0.0
    ddq[:, still] = 0.0
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, options)
    return base_regressor(robot, q, dq, ddq, options, base_parameters(robot, options)), data.tau


def test_a_log_where_most_joints_stand_still_is_refused_naming_parameters():
    robot = dynid.load_robot("er3a")
    options = ModelOptions()
    y, tau = _log(robot, options, moving=[0])
    names = base_parameters(robot, options).names
    with pytest.raises(IllConditionedError) as info:
        OrdinaryLeastSquares(names=names).fit(y, tau)
    message = str(info.value)
    assert any(name in message for name in names)


def test_a_poorly_exciting_log_is_fitted_with_warnings_and_large_relative_deviations():
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    t = np.arange(0.0, 1.0, 0.01)  # a tenth of the multi-sine's period, 2 % of the limits
    q, dq, ddq = random_multisine(robot, seed=3, fraction=0.02).sample(t)
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, options)
    base = base_parameters(robot, options)
    y = base_regressor(robot, q, dq, ddq, options, base)
    rng = np.random.default_rng(0)
    est = WeightedLeastSquares(names=base.names).fit(y, data.tau + rng.normal(size=data.tau.shape) * 0.05)
    assert est.cond_ > 1e3
    assert any("condition number" in w for w in est.warnings_)
    assert any("%sigma" in w for w in est.warnings_)
    assert np.max(est.rel_std_) > 50.0
