"""Friction drift on simulated er3a protocol logs with known truth: prints the figures of docs/friction.md.

    .venv/bin/python bench/friction_drift.py [--cycles 10] [--rate 20] [--noise 0.3] [--seed 1]

1. eq. 5.4 per level: share of the true (a, b, t1, c, t2) inside the 95 % intervals, median
   t1, t2 of joints 1-3;
2. cross-validation over cycles (train odd, validate even): RMSD of the static model and of
   the drift-aware models (time, temperature) per joint.
Truth: warm Coulomb 8, 10, 6, 3, 2, 1.5 N m, viscous 3, 4, 2, 1, 0.8, 0.5 N m s/rad, cold
excess 0.5 e^(-t/900 s) + 0.4 e^(-t/200 s); temperature 20 + 25 (1 - e^(-t/900 s)) deg C.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dynid
from dynid.excite.fileio import load_trajectory
from dynid.excite.protocol import ProtocolSettings, sample_protocol
from dynid.friction import analyze
from dynid.friction.drift_model import cross_validate
from dynid.identify.model import ModelOptions
from dynid.simulate import Measurement, simulate_joint_data
from dynid.simulate.drift import FrictionDrift, Warmup

COULOMB = np.array([8.0, 10.0, 6.0, 3.0, 2.0, 1.5])
VISCOUS = np.array([3.0, 4.0, 2.0, 1.0, 0.8, 0.5])
DRIFT = FrictionDrift(0.5, 900.0, 0.4, 200.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--rate", type=float, default=20.0)
    ap.add_argument("--noise", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    robot = dynid.load_robot("er3a")
    p = sample_protocol(robot, load_trajectory("thesis-table-4.1", robot.n, robot.name), args.cycles, args.rate,
                        ProtocolSettings(cycloid=False, warming_duration=60.0))
    data, _, _ = simulate_joint_data(robot, p["t"], p["q"], p["dq"], p["ddq"], ModelOptions(),
                                     np.column_stack([COULOMB, VISCOUS]), None, Measurement(args.noise),
                                     seed=args.seed, drift=DRIFT)
    data.cycle, data.stage = p["cycle"], p["stage"]
    print(f"{args.cycles} cycles at {args.rate:g} Hz, {len(data)} samples, {data.t[-1] / 60:.1f} min, "
          f"noise {args.noise} N m, seed {args.seed}")
    start = time.perf_counter()
    result = analyze(robot, data, seed=0)
    inside, t1, t2 = [], [], []
    for (j, level), fit in result.drift.items():
        a = COULOMB[j] + VISCOUS[j] * result.levels[j][level]
        inside.extend(fit.contains({"a": a, "b": 0.5 * a, "t1": 900.0, "c": 0.4 * a, "t2": 200.0}).values())
        if j < 3:
            t1.append(fit["t1"])
            t2.append(fit["t2"])
    print(f"analysis {time.perf_counter() - start:.1f} s: {len(result.drift)} levels fitted, "
          f"{100 * np.mean(inside):.1f} % of true parameters inside the 95 % intervals; "
          f"median t1 {np.median(t1):.0f} s (900), t2 {np.median(t2):.0f} s (200) over joints 1-3")
    valid = list(range(2, args.cycles + 1, 2))
    temp = Warmup(20.0, 25.0, 900.0).temperatures(data.t - data.t[0], robot.n)
    start = time.perf_counter()
    cv_time = cross_validate(robot, data, valid, mode="time")
    cv_temp = cross_validate(robot, data, valid, mode="temperature", temp=temp)
    print(f"cross-validation ({time.perf_counter() - start:.1f} s), train {cv_time['train_cycles']}, "
          f"validate {cv_time['valid_cycles']}; time constants {np.round(cv_time['model'].time_constants_[0], 1)} s")
    print("joint  RMSD static  drift(time)  drift(temperature)  [N m]")
    for j in range(robot.n):
        print(f"{j + 1:5d}  {cv_time['rmsd_static'][j]:11.3f}  {cv_time['rmsd_drift'][j]:11.3f}  "
              f"{cv_temp['rmsd_drift'][j]:18.3f}")


if __name__ == "__main__":
    main()
