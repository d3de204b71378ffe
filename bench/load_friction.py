"""Figures of docs/friction.md "Load-dependent friction".

Simulated er3a (tests/test_load_friction.py's logs: 90 s at 100 Hz, 1 % torque noise and 0.5 %
ripple of the RMS torque, 2^16-count encoders, 1 % dropped rows), per draw: the friction model
``--friction auto`` chooses on a log whose Coulomb level grows with the load (Fl = 0.1) and on
one without (plain Coulomb-viscous truth), the held-out scores, Fl per joint with its standard
deviation and (Fl - 0.1) / std, and on a held-out log the RMS error against the true torque of
the load-dependent and the Coulomb-viscous fits. The truth is dynid's own simulator: MuJoCo has
no friction that grows with the transmitted torque. The real KUKA iiwa 14's scores of every
model (load-dependent included) are printed by bench/stribeck.py.

``--drift``: load-dependent friction that drifts from cold to warm (tests/test_load_drift.py's
logs: er3a, Fl = 0.1, Fc and Fv 1.8 times warm at the cold start, time constants 100 s and 10 s,
200 s at 25 Hz, 1 % noise), per draw the held-out relative error (another trajectory from a cold
start) of the combined model, the static load-dependent one and the drifting Coulomb-viscous one
(all ``wls``), the noise's share of the same torque, and the largest |value - truth| / std of
the combined model's Fc, Fl, Fv and their slow cold excess (the four largest).

``--std``: the standard deviations of the fixed point (identify/load_friction.py L3) against the
spread of the fixed point over ``--draws`` noise draws of one motion (20 s at 50 Hz, 1 % noise, OLS
with the true weights), for the er3a and the planar2 at Fl = 0.1 and 0.3: per case the spread over
the last linear fit's std and over the fixed point's std (median, range, the worst parameters).

``--identify``: the same through ``dynid.Identification`` (``wls``, --lowpass 0 --rest off, exact
dq and ddq) on tests/test_load_drift.py's motion without the drift (er3a, 200 s at 25 Hz, 1 %
noise, Fl = 0.1), ``--draws`` noise draws: per joint the spread of Fl over its mean reported std,
and the fit's noise estimate (wls sigma_j) over the simulated noise.

Usage: .venv/bin/python bench/load_friction.py [--draws 3] [--drift | --std | --identify]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from stribeck import dynid, predicted_and_true  # noqa: E402  (the CLI as a subprocess, as bench/stribeck.py runs it)


def simulated(draws: int) -> None:
    import dynid as lib
    from dynid.data.io import write_joint_data
    from dynid.identify.model import ModelOptions
    from realistic_logs import realistic_log
    from test_load_friction import F0, FL, HARMONICS, RATE, SECONDS, _load_model

    robot = lib.load_robot("er3a")
    load, theta = _load_model(robot)
    print(f"er3a, {SECONDS:g} s at {RATE:g} Hz, 1 % noise, Fl = {FL} on every joint; --friction auto, default cutoff")
    for draw in range(draws):
        with tempfile.TemporaryDirectory() as tmp:
            root, fits = Path(tmp), {}
            for name, options, th in (("load", load, theta), ("plain", ModelOptions(), None)):
                for part, seed in (("train", 30 + 2 * draw), ("test", 31 + 2 * draw)):
                    data, _, _ = realistic_log(robot, RATE, SECONDS, seed=seed, noise=0.01, encoder_counts=2**16,
                                               options=options, theta=th, f0=F0, harmonics=HARMONICS)
                    write_joint_data(root / f"{name}_{part}.csv", data)
                dynid("identify", "-r", "er3a", "--data", root / f"{name}_train.csv", "--friction", "auto", "--out",
                      root / f"{name}_auto.json")
                fits[name] = json.loads((root / f"{name}_auto.json").read_text())
            dynid("identify", "-r", "er3a", "--data", root / "load_train.csv", "--out", root / "cv.json")
            errors = {}
            for name in ("load_auto", "cv"):
                pred, tau, _ = predicted_and_true(robot, root, name, "load_test", 31 + 2 * draw, theta, load,
                                                  F0, HARMONICS)
                errors[name] = np.sqrt(np.nanmean((pred - tau) ** 2, axis=0))
            for name, fit in fits.items():
                s = fit["friction_selection"]["scores"]
                print(f"draw {draw}: {name} log -> {fit['friction']} (scores "
                      + ", ".join(f"{m} {v:.4f}" for m, v in s.items()) + ")")
            entries = {p["name"]: p for p in fits["load"]["base_parameters"]}
            fl = np.array([entries[f"Fl{j + 1}"]["value"] for j in range(6)])
            std = np.array([entries[f"Fl{j + 1}"]["std"] for j in range(6)])
            print("  Fl (std) per joint " + ", ".join(f"{v:.4f} ({s:.4f})" for v, s in zip(fl, std))
                  + "; (Fl - 0.1) / std " + ", ".join(f"{z:+.2f}" for z in (fl - FL) / std)
                  + f"; fixed point {fits['load']['friction_selection']['load_fit']['iterations']} iterations")
            print("  plain log's fixed point Fl " + ", ".join(f"{v:+.4f}" for v in
                                                             fits["plain"]["friction_selection"]["load_fit"]["Fl"]))
            print("  held-out RMS error against the true torque per joint: load-dependent "
                  + ", ".join(f"{e:.4f}" for e in errors["load_auto"]) + "; coulomb-viscous "
                  + ", ".join(f"{e:.4f}" for e in errors["cv"]) + " N m")


def drifting(draws: int) -> None:
    import dynid as lib
    from dynid.identify.model import parameter_slices
    from test_load_drift import R1, SECONDS, _log, _truth

    robot = lib.load_robot("er3a")
    options, theta, _ = _truth(robot)
    warm = theta[parameter_slices(robot, options)["friction"]].reshape(robot.n, 3)
    print("er3a, load-dependent friction drifting from cold (tests/test_load_drift.py), wls, --lowpass 0 --rest off")
    for draw in range(draws):
        t, q, dq, ddq, tau, _ = _log(robot, 10 + 2 * draw, SECONDS)
        held = _log(robot, 11 + 2 * draw, SECONDS / 2)
        errors, z = {}, {}
        for name, friction, mode in (("combined", "load-dependent", "time"), ("static load-dependent",
                                     "load-dependent", None), ("drifting coulomb-viscous", "coulomb-viscous", "time")):
            result = lib.Identification(robot, estimator="wls", friction=friction, friction_drift=mode, lowpass=0.0,
                                        rest="off").fit(t, q, tau, dq, ddq)
            errors[name] = result.validate(held[0], held[1], held[4], held[2], held[3],
                                           since_cold=0.0)["relative_error"]
            if name == "combined":
                values, std = dict(zip(result.names, result.values)), dict(zip(result.names, result.std))
                drift = {p["name"]: (p["value"], p["std"]) for p in result.document["friction_drift"]["parameters"]}
                for j in range(robot.n):
                    for k, f in enumerate(("Fc", "Fl", "Fv")):
                        z[f"{f}{j + 1}"] = (values[f"{f}{j + 1}"] - warm[j, k]) / std[f"{f}{j + 1}"]
                        value, s = drift[f"{f}{j + 1}_e1"]
                        z[f"{f}{j + 1}_e1"] = (value - R1[k] * warm[j, k]) / s
        noise = np.linalg.norm(held[4] - held[5]) / np.linalg.norm(held[4])
        print(f"draw {draw}: held-out relative error " + ", ".join(f"{m} {100 * e:.2f} %" for m, e in errors.items())
              + f"; noise {100 * noise:.2f} %")
        worst = sorted(z, key=lambda name: -abs(z[name]))[:4]
        print(f"  (value - truth) / std of {len(z)} coefficients: " + ", ".join(f"{m} {z[m]:+.2f}" for m in worst)
              + f"; beyond 3: {sum(abs(v) > 3 for v in z.values())}")


def fixed_point_spread(draws: int) -> None:
    import dynid as lib
    from dynid.identify.base import base_parameters
    from dynid.identify.load_friction import fit_load_torque, inertial_base_columns, load_slope, slope_gram
    from dynid.identify.model import ModelOptions, full_parameters, identification_regressor, load_parameters
    from dynid.identify.model import model_torques
    from dynid.identify.threads import single_blas_thread
    from dynid.simulate import default_friction, random_multisine

    for name in ("er3a", "planar2"):
        robot = lib.load_robot(name)
        n = robot.n
        for fl_true in (0.1, 0.3):
            options = ModelOptions("load-dependent")
            friction = default_friction(robot, options)
            friction[:, 1] = fl_true
            theta = full_parameters(robot, options, friction)
            options = ModelOptions("load-dependent", load_parameters=load_parameters(robot, options, theta))
            t = np.arange(0.0, 20.0, 0.02)
            q, dq, ddq = random_multisine(robot, seed=7, f0=0.1, harmonics=6).sample(t)
            tau0 = model_torques(robot, q, dq, ddq, theta, options)
            sigma = 0.01 * np.sqrt(np.mean(tau0**2, axis=0)) + 1e-3
            linear = ModelOptions()
            base = base_parameters(robot, linear)
            yb = identification_regressor(robot, q, dq, ddq, linear)[..., base.independent]
            inertial = inertial_base_columns(robot, linear, base)
            b, w, keep = base.rank, 1.0 / sigma**2, np.ones(dq.shape, dtype=bool)
            rng = np.random.default_rng(0)
            estimates, last, fixed = [], [], []
            with single_blas_thread():
                for draw in range(draws):
                    tau = tau0 + rng.normal(size=tau0.shape) * sigma
                    scaled = (yb * np.sqrt(w)[None, :, None]).reshape(-1, b)
                    beta0 = np.linalg.lstsq(scaled, (tau * np.sqrt(w)).reshape(-1), rcond=None)[0]
                    beta, fl, _ = fit_load_torque(lambda: [(yb, np.sign(dq), tau, keep)], n, inertial, beta0, w)
                    estimates.append(np.concatenate([beta, fl]))
                    if draw < 3:  # the reported std of the first draws (they hardly vary)
                        load = yb[..., inertial] @ beta[inertial]
                        a = np.concatenate([yb, np.zeros((t.size, n, n))], axis=2)
                        a[:, np.arange(n), b + np.arange(n)] = np.abs(load) * np.sign(dq)
                        normal = np.einsum("j,tja,tjb->ab", w, a, a)
                        cov = np.linalg.inv(normal)
                        gram = slope_gram([(a, load_slope(linear, fl, dq, load), keep)], n, b + n)
                        moving = np.concatenate([inertial, np.zeros(n, dtype=bool)])
                        cross = np.zeros_like(normal)
                        cross[:, moving] = np.einsum("j,jab->ab", w, gram[:, :, moving])
                        through = np.linalg.inv(np.eye(b + n) + np.linalg.solve(normal, cross))
                        last.append(np.sqrt(np.diag(cov)))
                        fixed.append(np.sqrt(np.diag(through @ cov @ through.T)))
            spread = np.std(estimates, axis=0, ddof=1)
            names = list(base.names) + [f"Fl{j + 1}" for j in range(n)]
            ratios = {"last fit": spread / np.mean(last, axis=0), "fixed point": spread / np.mean(fixed, axis=0)}
            print(f"{name}, Fl = {fl_true}, {draws} draws, {len(names)} parameters: spread / std "
                  + "; ".join(f"{k} median {np.median(r):.3f} range {r.min():.3f}-{r.max():.3f}"
                              for k, r in ratios.items()))
            worst = np.argsort(-np.abs(np.log(ratios["last fit"])))[:3]
            print("  worst of the last fit: " + ", ".join(
                f"{names[k]} {ratios['last fit'][k]:.3f} (fixed point {ratios['fixed point'][k]:.3f})" for k in worst))


def identified_spread(draws: int) -> None:
    import dynid as lib
    from dynid.simulate import Measurement, random_multisine, simulate_joint_data
    from test_load_drift import RATE, SECONDS, _truth

    robot = lib.load_robot("er3a")
    options, theta, _ = _truth(robot)
    t = np.arange(0.0, SECONDS, 1.0 / RATE)
    q, dq, ddq = random_multisine(robot, seed=12, f0=0.1, harmonics=6).sample(t)
    noise = 0.01 * np.sqrt(np.mean(lib.inverse_dynamics(robot, q, dq, ddq) ** 2, axis=0))
    fl, std, sigma = [], [], []
    for draw in range(draws):
        data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, options, theta=theta, seed=100 + draw,
                                         measurement=Measurement(tuple(noise)))
        result = lib.Identification(robot, estimator="wls", friction="load-dependent", lowpass=0.0,
                                    rest="off").fit(t, q, data.tau, dq, ddq)
        index = [result.names.index(f"Fl{j + 1}") for j in range(robot.n)]
        fl.append(np.asarray(result.values)[index])
        std.append(np.asarray(result.std)[index])
        sigma.append(result.document["fit"]["sigma"])
    ratio = np.std(fl, axis=0, ddof=1) / np.mean(std, axis=0)
    print(f"er3a, {SECONDS:g} s at {RATE:g} Hz, Fl = 0.1, wls, {draws} draws (sampling error of a ratio "
          f"{1 / np.sqrt(2 * (draws - 1)):.0%})")
    print("  Fl spread / reported std per joint: " + ", ".join(f"{v:.2f}" for v in ratio))
    print("  wls noise estimate / simulated noise per joint: "
          + ", ".join(f"{v:.2f}" for v in np.mean(sigma, axis=0) / noise))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--drift", action="store_true", help="load-dependent friction drifting from cold to warm")
    parser.add_argument("--std", action="store_true", help="the fixed point's std against the spread over draws")
    parser.add_argument("--identify", action="store_true", help="the same through dynid.Identification (wls)")
    args = parser.parse_args()
    start, cpu = time.time(), time.process_time()
    if args.identify:
        identified_spread(args.draws)
    elif args.std:
        fixed_point_spread(args.draws)
    else:
        drifting(args.draws) if args.drift else simulated(args.draws)
    print(f"{time.time() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU (this process; the identify runs "
          f"are subprocesses); load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
