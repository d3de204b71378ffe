"""Cost of the seed papers' absolute-coordinate formulation: Cardan angles versus quaternions
(seed 001 claims quaternions are cheaper since no sine or cosine is evaluated), and the
constrained solve of eq. 111 per sample.

Prints microseconds per sample (best of several repeats) for the KR500, on this machine:
  - A^(0i) of all bodies (Cardan eq. 29 vs quaternion E R*^T),
  - the unconstrained body equations A_i, B_i (seed 000 eq. 35 vs seed 001 eq. 12),
  - the identification regressor ^idS (eq. 46 via Cardan rates vs seed 001 eq. 18),
  - constraint terms Phi, Phi_q, zeta, and eq. 111 solved forward (q_ddot, lambda) and inverse
    (tau, lambda), batched over N samples and one sample at a time (as in a time-stepping loop),
  - the recursive Newton-Euler inverse dynamics for scale.
Usage:  .venv/bin/python bench/multibody.py [--samples 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import dynid
from dynid.multibody import angular_form, body_coordinates, body_model, body_states, joint_reactions
from dynid.multibody.constrained import forward, inverse
from dynid.multibody.constraints import constraint_terms
from dynid.multibody.graph import graph, resultant_forces, resultant_moments, weighted_vectors_world
from dynid.multibody.identification import euler_regressor
from dynid.multibody.quaternion import Quaternion
from dynid.multibody.unconstrained import body_equations


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--single", type=int, default=200, help="samples for the one-at-a-time loop")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    robot = dynid.load_robot("kr500")
    model = body_model(robot)
    rng = np.random.default_rng(0)
    N = args.samples
    q, dq, ddq = rng.uniform(-1.2, 1.2, (N, 6)), rng.normal(0, 1, (N, 6)), rng.normal(0, 1, (N, 6))
    states = body_states(model, q, dq, ddq)
    force, moment = joint_reactions(model, q, dq, ddq)
    gr = graph(model)
    f_total = resultant_forces(gr, force) + model.mass[None, :, None] * robot.gravity
    m_total = resultant_moments(gr, weighted_vectors_world(gr, states.r, states.joint_point), force, moment)
    quat = Quaternion.from_rotation(states.rotation)
    print(f"dynid multibody benchmark: KR500 (6 bodies), N = {N} samples, best of {args.repeats}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, numpy {np.__version__}")
    print(f"{'quantity':58s} {'cardan':>12s} {'quaternion':>12s}   [us/sample]")
    coords = {name: body_coordinates(angular_form(name), states) for name in ("cardan", "quaternion")}
    rows = [
        ("coordinate transformation A^(0i), 6 bodies",
         lambda f, c: f.rotation(c[0][..., 3:])),
        ("unconstrained equations A_i, B_i (eq. 35 / eq. 12)",
         lambda f, c: body_equations(model, f, c[0], c[1], f_total, m_total)),
        ("identification regressor ^idS (eq. 46 / eq. 18)",
         lambda f, c: euler_regressor(f, quat, states.w, states.dw)),
        ("constraints Phi, Phi_q, zeta (eqs. 105-109)",
         lambda f, c: constraint_terms(model, f, c[0], c[1])),
        ("eq. 111 forward: q_ddot and lambda (batched)",
         lambda f, c: forward(model, f, c[0], c[1], np.zeros((N, 6)))),
        ("eq. 110 inverse: tau and lambda (batched)",
         lambda f, c: inverse(model, f, c[0], c[1], c[2])),
    ]
    for label, fn in rows:
        cost = {name: best(lambda: fn(angular_form(name), coords[name]), args.repeats) / N * 1e6
                for name in ("cardan", "quaternion")}
        print(f"{label:58s} {cost['cardan']:12.2f} {cost['quaternion']:12.2f}")
    M = args.single
    single = {}
    for name in ("cardan", "quaternion"):
        f, c = angular_form(name), coords[name]

        def loop():
            for s in range(M):
                forward(model, f, c[0][s:s + 1], c[1][s:s + 1], np.zeros((1, 6)), with_reactions=False)
        single[name] = best(loop, max(1, args.repeats // 2)) / M * 1e6
    print(f"{'eq. 111 forward, one sample per call (simulation step)':58s} "
          f"{single['cardan']:12.1f} {single['quaternion']:12.1f}")
    rnea = best(lambda: dynid.inverse_dynamics(robot, q, dq, ddq), args.repeats) / N * 1e6
    print(f"{'recursive Newton-Euler inverse dynamics (for scale)':58s} {rnea:12.2f}")


if __name__ == "__main__":
    main()
