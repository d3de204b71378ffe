"""Excitation figures.

1. Thesis Table 4.1 trajectory vs an optimized one on er3a: cond, limit usage, and the OLS
   standard deviations of the base parameters from simulated noisy torques.

       .venv/bin/python bench/excite_compare.py --trajectory traj.json [--periods 3] [--noise 0.5]

   Both trajectories get the same duration (``--periods`` periods of 10 s at 100 Hz), the same
   torque noise (Gaussian, ``--noise`` N m on every joint, same seed) and the same model
   (rigid body + Coulomb/viscous friction + rotor inertia, base parameters of dynid.identify).

2. A 7-DoF arm with collision constraints (issue 16): wall and CPU time of
   ``optimize_excitation`` with the command's default counts, the floor, one box and a 5 cm
   clearance, and its cond against random feasible Fourier trajectories of the same family
   and duration (random points of the search's feasible parametrization, shrunk towards the
   start posture until the guaranteed clearance holds).

       .venv/bin/python bench/excite_compare.py --arm7 panda [--random 20] [--seed 0]

   panda: example-robot-data's Franka Emika Panda with the fingers locked (mesh capsules),
   acceleration limits of Franka's datasheet (15, 7.5, 10, 12.5, 15, 20, 20 rad/s^2,
   "Robot and interface specifications", Franka Control Interface documentation);
   iiwa: the KUKA iiwa 14 URDF of shared/real (kinematic-chain capsules; DYNID_SHARED or a
   parent directory holding shared/real/kuka_iiwa14), 10 rad/s^2 on every joint.
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


PANDA_DDQ = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]  # Franka datasheet [rad/s^2]
BOX = {"panda": ("table", [0.55, 0.0, 0.2], [0.3, 0.6, 0.4]), "iiwa": ("table", [0.6, 0.0, 0.25], [0.3, 0.6, 0.5])}


def arm7(name: str, random_count: int, seed: int) -> None:
    import os
    import sys
    import time
    from pathlib import Path

    from dynid.excite.geometry.scene import Box
    from dynid.excite.geometry.setup import GeometryOptions, build_geometry
    from dynid.excite.geometry.shrink import shrink_guaranteed
    from dynid.excite.limit_sources import LimitOptions, resolve_limits, robot_with_limits
    from dynid.excite.optimize import GEOMETRY_SAMPLES, OptimizeSettings, Problem, optimize_excitation
    from dynid.identify.threads import single_blas_thread

    if name == "panda":
        robot = dynid.load_robot("example:panda", lock={"panda_finger_joint1": 0.02})
        options = LimitOptions(ddq_max=PANDA_DDQ)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from shared_data import shared_path

        urdf = shared_path("real", "kuka_iiwa14", "urdf", "iiwa14.urdf")
        if urdf is None:
            raise SystemExit("iiwa: shared/real/kuka_iiwa14 not found (set DYNID_SHARED)")
        robot = dynid.load_robot(urdf)
        options = LimitOptions(ddq_max=10.0)
    limits = resolve_limits(robot, options).limits
    robot = robot_with_limits(robot, limits)
    box = Box(*BOX[name])
    geometry = build_geometry(robot, limits, GeometryOptions(clearance=0.05, boxes=(box,)))
    c = geometry.constraints
    print(f"{robot.name}: n = {robot.n}, {len(c.capsules)} capsules, {c.size} constraints (clearance 0.05 m, "
          f"floor z = 0, box '{box.name}'), load average {os.getloadavg()[0]:.2f}")
    wall, cpu = time.perf_counter(), time.process_time()
    model = ExcitationModel.of(robot)
    settings = OptimizeSettings(seed=seed, max_seconds=None)
    result = optimize_excitation(model, settings, geometry=c, start=geometry.start)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    report = evaluate_trajectory(model, result.trajectory)
    clearance = c.guaranteed_margins(result.trajectory, limits, GEOMETRY_SAMPLES)["guaranteed"].min() + 0.05
    print(f"optimized (seed {seed}, {settings.generations} generations, <= {settings.polish_iterations} polish "
          f"iterations): cond {report['cond']:.3f}, limits_ok {report['limits_ok']}, guaranteed min distance "
          f"{clearance:.4f} m, shrink {result.trajectory.metadata['optimization']['geometry_shrink']}; "
          f"wall {wall:.1f} s, CPU {cpu:.1f} s (model + search)")
    problem = Problem(model, settings, c, geometry.start)
    rng = np.random.default_rng(seed + 1000)
    conds = []
    with single_blas_thread():
        for z in rng.uniform(-1, 1, (random_count, problem.dim)):
            q0, coef = problem.project(z[None, :])
            traj, _, _ = shrink_guaranteed(problem.trajectory(q0[0], coef[0]), c, limits, geometry.start,
                                           GEOMETRY_SAMPLES)
            conds.append(evaluate_trajectory(model, traj)["cond"])
    conds = np.array(conds)
    print(f"{random_count} random feasible Fourier trajectories (N = 5, w_f = 2 pi 0.1, same 10 s period, "
          f"clearance guaranteed): cond median {np.median(conds):.3f}, best {conds.min():.3f}, "
          f"worst {conds.max():.3f}; optimized / median = {report['cond'] / np.median(conds):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trajectory")
    ap.add_argument("--periods", type=int, default=3)
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=None, help="noise seed (default 7) / optimization seed (default 0)")
    ap.add_argument("--arm7", choices=("panda", "iiwa"), help="the 7-DoF figures with collision constraints")
    ap.add_argument("--random", type=int, default=20, help="random feasible trajectories for --arm7")
    args = ap.parse_args()
    if args.arm7:
        arm7(args.arm7, args.random, 0 if args.seed is None else args.seed)
        return
    if not args.trajectory:
        ap.error("--trajectory (or --arm7) is required")
    args.seed = 7 if args.seed is None else args.seed
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
