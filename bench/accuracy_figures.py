"""Figures of docs/identification.md for payloads, prediction bands and essential parameters,
on simulated er3a / planar2 logs (tests/realistic_logs.py defects). Prints what it measures.

Usage: .venv/bin/python bench/accuracy_figures.py [--draws 30]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def payload(draws: int) -> None:
    import dynid
    from dynid.data.io import write_joint_data
    from dynid.data.preprocess import Preprocessing
    from dynid.identify import ModelOptions, base_parameters
    from dynid.identify.model import full_parameters, parameter_slices
    from dynid.identify.payload import flange_body, identify_payload
    from dynid.identify.pipeline import accumulate_sources, make_estimator
    from dynid.robot.inertia import from_mass_com_inertia
    from dynid.simulate import default_friction
    from realistic_logs import realistic_log

    robot = dynid.load_robot("er3a")
    options = ModelOptions()
    base = base_parameters(robot, options)
    prep = Preprocessing(lowpass_hz=4.0)
    mass, com = 2.0, np.array([0.012, -0.018, 0.065])
    phi = from_mass_com_inertia(mass, com, np.diag([0.004, 0.006, 0.003]))
    theta = full_parameters(robot, options, default_friction(robot, options))
    body = flange_body(robot)
    theta[parameter_slices(robot, options)["rigid"]][10 * body:10 * body + 10] += phi
    rows = {"one log": [], "two logs": []}
    with tempfile.TemporaryDirectory() as tmp:
        for draw in range(draws):
            kw = dict(encoder_counts=2**14, f0=0.1, harmonics=8)
            unloaded, _, _ = realistic_log(robot, 200.0, 90.0, seed=300 + draw, **kw)
            loaded, _, _ = realistic_log(robot, 200.0, 90.0, seed=400 + draw, theta=theta, **kw)
            u, l = Path(tmp) / "u.csv", Path(tmp) / "l.csv"
            write_joint_data(u, unloaded)
            write_joint_data(l, loaded)
            acc = accumulate_sources(robot, [u], options, base, prep=prep)
            est = make_estimator("ols", robot, options, base).fit_normal_equations(acc.ne)
            for mode, extra in (("one log", {"beta": est.coef_, "beta_cov": est.cov_}),
                                ("two logs", {"unloaded_paths": [u]})):
                out = identify_payload(robot, [l], options, base, prep, **extra).to_dict()
                c = np.array([v["value"] for v in out["com"]])
                rows[mode].append((out["mass"]["value"] / mass - 1.0, np.linalg.norm(c - com),
                                   (out["mass"]["value"] - mass) / out["mass"]["std"]))
    print(f"payload on er3a (2 kg, CoM {com.tolist()} m), {draws} draws of 90 s logs at 200 Hz with noise 0.2 %, "
          "ripple 0.5 %, 2^14-count encoders, 1 % dropped; low-pass 4 Hz:")
    for mode, r in rows.items():
        r = np.array(r)
        print(f"  {mode:9s} mass error max {100 * np.abs(r[:, 0]).max():.3f} % (mean {100 * r[:, 0].mean():+.3f} %), "
              f"CoM error max {1e3 * r[:, 1].max():.3f} mm, mass error / std: RMS {np.sqrt(np.mean(r[:, 2] ** 2)):.2f}")


def bands(draws: int) -> None:
    import dynid
    from dynid.data.preprocess import Preprocessing, prepare
    from dynid.identify import ModelOptions, base_parameters
    from dynid.identify.bands import torque_std
    from dynid.identify.estimators import WeightedLeastSquares
    from dynid.identify.pipeline import fit_data, regressor_arrays
    from realistic_logs import realistic_log

    for name, counts, cutoff in (("planar2", 0.0, 0.0), ("planar2", 2.0**16, 5.0), ("er3a", 0.0, 0.0),
                                 ("er3a", 2.0**14, 5.0)):
        robot = dynid.load_robot(name)
        options = ModelOptions()
        base = base_parameters(robot, options)
        prep = Preprocessing(lowpass_hz=cutoff)
        kw = dict(noise=0.02, ripple=0.0, encoder_counts=counts, drop=0.0)
        val, _, true = realistic_log(robot, 200.0, 20.0, seed=99, **kw)
        y, _, _ = regressor_arrays(robot, prepare(val, prep), options, base, prep)
        inner, inside = slice(300, -300), []
        for draw in range(draws):
            train, _, _ = realistic_log(robot, 200.0, 30.0, seed=100 + draw, **kw)
            est = fit_data(robot, train, options, base, WeightedLeastSquares(), prep)
            inside.append(np.abs(true[inner] - (y @ est.coef_)[inner]) <= 2.0 * torque_std(y, est.cov_)[inner])
        per_joint = np.mean(inside, axis=(0, 1))
        print(f"band: {name}, {'exact derivatives' if not counts else f'{counts:.0f}-count encoders, {cutoff:g} Hz'}, "
              f"{draws} draws: noise-free torque within +-2 sigma (model band) {100 * np.mean(inside):.1f} % "
              f"(per joint {', '.join(f'{100 * v:.1f}' for v in per_joint)} %)")


def essential() -> None:
    import dynid
    from dynid.data.preprocess import Preprocessing, prepare
    from dynid.identify import ModelOptions, base_parameters
    from dynid.identify.essential import essential_parameters
    from dynid.identify.estimators import WeightedLeastSquares
    from dynid.identify.normal_equations import NormalEquations
    from dynid.identify.pipeline import regressor_arrays
    from realistic_logs import realistic_log

    robot = dynid.load_robot("er3a")
    options = ModelOptions()
    base = base_parameters(robot, options)
    prep = Preprocessing(lowpass_hz=0.0)
    kw = dict(noise=0.02, ripple=0.0, encoder_counts=0.0, drop=0.0)
    train, _, _ = realistic_log(robot, 200.0, 60.0, seed=51, **kw)
    y, tau, mask = regressor_arrays(robot, prepare(train, prep), options, base, prep)
    ne = NormalEquations(robot.n, base.rank)
    ne.add(y, tau, mask)
    full = WeightedLeastSquares(names=base.names).fit_normal_equations(ne)
    ess = essential_parameters(ne, base.names, full.weights_)
    val, _, true = realistic_log(robot, 200.0, 20.0, seed=52, **kw)
    yv, _, _ = regressor_arrays(robot, prepare(val, prep), options, base, prep)
    index = [base.names.index(p["name"]) for p in ess["parameters"]]
    values = np.array([p["value"] for p in ess["parameters"]])
    err = lambda pred: 100 * np.linalg.norm(true - pred) / np.linalg.norm(true)  # noqa: E731
    print(f"essential: er3a, 60 s at 200 Hz, torque noise 2 % of RMS: {ess['count']} of {ess['of']} base parameters; "
          f"training relative error {100 * ess['relative_error']['essential']:.3f} % (all: "
          f"{100 * ess['relative_error']['base']:.3f} %); another trajectory against the noise-free torque: "
          f"{err(yv[..., index] @ values):.3f} % (all: {err(yv @ full.coef_):.3f} %); max %sigma "
          f"{max(p['relative_std'] for p in ess['parameters']):.1f} (all: {np.nanmax(full.rel_std_):.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=30)
    args = parser.parse_args()
    cpu = time.process_time()
    essential()
    bands(args.draws)
    payload(max(3, args.draws // 6))
    print(f"CPU {time.process_time() - cpu:.0f} s; cores: {os.cpu_count()}, load average at end: "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
