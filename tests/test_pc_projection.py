"""A physically consistent estimate meets its own constraints as every downstream check reads
them, whatever the solver's accuracy, and says how far the solver's answer had to move."""

from __future__ import annotations

import numpy as np

import dynid
from dynid.export.identified import identified_model
from dynid.identify import ModelOptions, base_parameters, base_regressor
from dynid.identify.physical import PhysicallyConsistent, link_lmi_margins
from dynid.robot.inertia import consistency_problems
from dynid.simulate import Measurement, random_multisine, simulate_joint_data


def test_pc_estimate_passes_the_export_check_when_the_solver_misses_the_lmis():
    """The Panda (fingers locked): its identified links end as thin rods (J1 + J2 = J3, on the
    boundary of the physical set). SCS (the fallback solver, tolerance ~1e-5; Clarabel's
    'optimal_inaccurate' is the same kind of answer) returns links that miss J >= 0 by up to
    1e-5 and that `dynid export` refused; the estimate is projected onto the constraints."""
    robot = dynid.load_robot("example:panda", lock={"panda_finger_joint1": 0.02})
    options = ModelOptions()
    base = base_parameters(robot, options)
    t = np.arange(0.0, 20.0, 0.01)
    q, dq, ddq = random_multisine(robot, seed=1).sample(t)
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, options, measurement=Measurement(tau_noise=1.0), seed=1)
    y = base_regressor(robot, q, dq, ddq, options, base)

    est = PhysicallyConsistent(robot=robot, options=options, base=base, solver="SCS").fit(y, data.tau)
    n = robot.n_bodies
    assert all(not consistency_problems(est.theta_[10 * i:10 * i + 10]) for i in range(n))
    assert np.all(link_lmi_margins(est.theta_, n) >= 0)
    np.testing.assert_allclose(base.K @ est.theta_, est.coef_)
    # what export reads: the result's standard parameters on the robot
    result = {"n": robot.n, "model": options.to_dict(), "estimator": "pc",
              "standard_parameters": [{"name": k, "value": float(v)} for k, v in zip(base.standard_names, est.theta_)]}
    identified_model(robot, result)  # refused (DataError: not physical) before the projection
    # reported, and small: the solver's answer was right to its tolerance
    moved = est.diagnostics()["physical_projection"]
    assert moved["links"] and 0 < moved["largest_change"] < 1e-3
    assert any("projected onto them" in w for w in est.warnings_)

    exact = PhysicallyConsistent(robot=robot, options=options, base=base).fit(y, data.tau)  # Clarabel: on the constraints
    assert exact.diagnostics()["physical_projection"]["largest_change"] < 1e-9
    assert not any("projected" in w for w in exact.warnings_)
