"""Throughput of dynid.regressor against Pinocchio's per-sample regressor called from Python.

Prints samples/s and us/sample for a 6-DoF robot (builtin er3a and the same kinematics as a
URDF loaded by Pinocchio) at N = 100 000, on this machine, in one run. Usage:

    .venv/bin/python bench/regressor.py [--samples 100000] [--pin-samples 20000]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pinocchio as pin

import dynid


def er3a_as_pinocchio(robot) -> pin.Model:
    """The same kinematic tree and inertias, built directly as a Pinocchio model."""
    model = pin.Model()
    ids = [0]
    for joint, link in zip(robot.joints, robot.links):
        placement = pin.SE3(joint.placement_rotation, joint.placement_translation)
        jid = model.addJoint(ids[joint.parent + 1], pin.JointModelRevoluteUnaligned(joint.axis),
                             placement, joint.name)
        theta = link.inertial
        dyn = theta[[0, 1, 2, 3, 4, 5, 7, 6, 8, 9]]  # Pinocchio order Ixx Ixy Iyy Ixz Iyz Izz
        model.appendBodyToJoint(jid, pin.Inertia.FromDynamicParameters(dyn), pin.SE3.Identity())
        ids.append(jid)
    model.gravity.linear = robot.gravity
    return model


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--pin-samples", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    robot = dynid.load_robot("er3a")
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.uniform(-2, 2, (3, args.samples, robot.n))
    dynid.regressor(robot, q[:10], dq[:10], ddq[:10])  # compile / load the cached kernel
    t_new = best_of(lambda: dynid.regressor(robot, q, dq, ddq), args.repeat)
    out = np.zeros((args.samples, robot.n, 10 * robot.n))
    t_out = best_of(lambda: dynid.regressor(robot, q, dq, ddq, out=out), args.repeat)

    model = er3a_as_pinocchio(robot)
    data = model.createData()
    m = args.pin_samples

    def pin_loop():
        for k in range(m):
            pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])

    t_pin = best_of(pin_loop, max(1, args.repeat // 2)) / m * args.samples
    y = dynid.regressor(robot, q[:200], dq[:200], ddq[:200])
    err = max(np.abs(pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])
                     .reshape(6, 6, 10)[:, :, [0, 1, 2, 3, 4, 5, 7, 6, 8, 9]].reshape(6, 60) - y[k]).max()
              for k in range(200))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}, pinocchio {pin.__version__}")
    print(f"robot: er3a (6 DoF), N = {args.samples}, max |Y_dynid - Y_pin| = {err:.1e}")
    rows = [("dynid.regressor (new output array)", t_new),
            ("dynid.regressor (reused out=)", t_out),
            (f"pinocchio computeJointTorqueRegressor per sample ({m} timed)", t_pin)]
    for name, t in rows:
        print(f"{name:62s} {args.samples / t:12,.0f} samples/s  {t / args.samples * 1e6:7.3f} us/sample")
    print(f"speed-up over Pinocchio: {t_pin / t_new:.1f}x (new array), {t_pin / t_out:.1f}x (reused out=)")


if __name__ == "__main__":
    main()
