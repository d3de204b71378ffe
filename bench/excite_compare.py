"""Thesis Table 4.1 trajectory vs an optimized one on er3a: cond, limit usage, and the OLS
standard deviations of the base parameters from simulated noisy torques.

    .venv/bin/python bench/excite_compare.py --trajectory traj.json [--periods 3] [--noise 0.5]

Both trajectories get the same duration (``--periods`` periods of 10 s at 100 Hz), the same
torque noise (Gaussian, ``--noise`` N m on every joint, same seed) and the same model
(rigid body + Coulomb/viscous friction + rotor inertia, base parameters of dynid.identify).
"""

from __future__ import annotations

import argparse

import numpy as np

import dynid
from dynid.excite.criteria import ExcitationModel
from dynid.excite.evaluate import evaluate_trajectory
from dynid.excite.fileio import load_trajectory
from dynid.identify.base import base_regressor
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.simulate.joint_space import Measurement, simulate_joint_data


def ols_std(model, traj, periods, noise, seed):
    t = traj.sample_times(100.0, periods)
    q, dq, ddq = traj.evaluate(t)
    data, _, theta = simulate_joint_data(model.robot, t, q, dq, ddq, model.options,
                                         measurement=Measurement(tau_noise=noise), seed=seed)
    yb = base_regressor(model.robot, q, dq, ddq, model.options, model.base)
    est = OrdinaryLeastSquares(names=model.base.names).fit(yb, data.tau)
    return est, model.base.to_base(theta)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trajectory", required=True)
    ap.add_argument("--periods", type=int, default=3)
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    model = ExcitationModel.of(dynid.load_robot("er3a"))
    results = {}
    for name in ("thesis-table-4.1", args.trajectory):
        traj = load_trajectory(name, model.robot.n)
        report = evaluate_trajectory(model, traj)
        est, beta = ols_std(model, traj, args.periods, args.noise, args.seed)
        results[name] = est.std_
        print(f"{name}: cond {report['cond']:.4f}, limits_ok {report['limits_ok']}, max_ratio "
              + ", ".join(f"{k} {v:.3f}" for k, v in report["max_ratio"].items())
              + f"; median std {np.median(est.std_):.3g}, max |error| {np.abs(est.coef_ - beta).max():.3g}")
    ratio = results[args.trajectory] / results["thesis-table-4.1"]
    print(f"std(optimized) / std(thesis) over {ratio.size} base parameters: median {np.median(ratio):.3f}, "
          f"geometric mean {np.exp(np.mean(np.log(ratio))):.3f}, smaller for {int(np.sum(ratio < 1))}, "
          f"largest {ratio.max():.3f} ({model.base.names[int(np.argmax(ratio))]})")


if __name__ == "__main__":
    main()
