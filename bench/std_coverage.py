"""Coverage of the reported standard deviations with the default settings (docs/identification.md,
"What the standard deviations cover").

Simulated: one realistic log of a robot (tests/realistic_logs.resting_log: rests with static
friction, encoder quantization with jitter, dropped rows, drive ripple, friction in proportion to
each joint's torque), then ``--draws`` draws of torque noise (seeded), each identified through
``dynid.Identification`` with the defaults (ols, coulomb-viscous, --lowpass auto, --rest auto) and
with each mode of ``--modes`` (``modes``: wls, irls, pc, --cycles (a few long cycles or many short
ones), --friction-drift temperature, --friction stribeck, one option changed each). The noise of joint j has the standard deviation ``--noise`` x its RMS
torque (joints differ by their torques: heteroscedastic), either white (``white``) or white
filtered by a 2nd-order Butterworth low-pass at ``--corner`` Hz, zero phase, rescaled to the same
standard deviation (``filtered``: a drive's current filter, ~fs / (2 corner) correlated samples).
Per base parameter, ratio = (spread of the estimates over the draws) / (mean reported std): 1 is
honest, < 1 std too large, > 1 std too small. Printed: the ratios' median, 10-90 % range, extremes
and the share within 0.7..1.3 (a 24-draw spread itself scatters by ~15 %); the RMS over the draws
of (estimate - truth) / std, which counts the bias the log's errors common to every draw leave
(drive ripple, quantization, rests; 1 is honest); and the covariance result.json reports.

Real: the KUKA iiwa 14 logs of shared/real (joint_2_to_7 and joint_3_to_7, the layout options of
docs/workflow-own-robot.md), each identified with the defaults: for the base parameters both
logs determine (joints 3-7 move in both), z = (x_1 - x_2) / sqrt(std_1^2 + std_2^2) (about
standard normal if the std are honest and the robot did not change between the logs; a model
error common to both logs leaves no trace in z).

    .venv/bin/python bench/std_coverage.py [--draws 24] [--cases white,filtered] [--modes ols,wls] [--real]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHORT_CYCLE = 0.5  # s, the cycles of mode "short"
sys.path.insert(0, str(ROOT / "tests"))


def clean_log(robot, rate: float, seconds: float, seed: int):
    """(JointData without torque noise, noise scale (n,), true base parameters {name: value}):
    tests/realistic_logs.resting_log."""
    from realistic_logs import resting_log

    from dynid.identify.base import base_parameters
    from dynid.identify.model import ModelOptions, full_parameters

    data, t, tau, at_rest, tau_model, friction = resting_log(robot, rate, seconds, seed=seed, noise=0.0)
    base = base_parameters(robot, ModelOptions())
    truth = dict(zip(base.names, base.to_base(full_parameters(robot, ModelOptions(), friction))))
    return data, np.sqrt(np.mean(tau_model ** 2, axis=0)), truth


def noise(shape, sigma: np.ndarray, rate: float, kind: str, corner: float, seed: int) -> np.ndarray:
    """(N, n) torque noise of standard deviation sigma (n,): white or low-pass filtered."""
    import scipy.signal

    rng = np.random.default_rng(seed)
    if kind != "filtered":
        return rng.normal(size=shape) * sigma
    pad = int(20 * rate / corner)  # the filter's edges left out: stationary noise
    e = scipy.signal.sosfiltfilt(scipy.signal.butter(2, corner, fs=rate, output="sos"),
                                 rng.normal(size=(shape[0] + 2 * pad, shape[1])), axis=0)
    return e[pad:pad + shape[0]] / e.std(axis=0) * sigma


def modes(data, seconds: float) -> dict:
    """{mode: (Identification options, more columns of the log)}: each estimator with the defaults
    otherwise; ``cycles``: the log cut into 10 cycles by time, cycles 1-4 and 7-10 identified (a gap
    between); ``drift``: ``--friction-drift temperature`` on a warm-up of every joint (25 to 45 C,
    time constant a third of the log; the log's friction does not drift: the drift coefficients'
    truth is 0); ``short``: many short runs, the log cut into cycles of ``SHORT_CYCLE`` s, every
    other one identified (``--cycles 1,3,5..``: 30 cycles of 0.5 s from 30 s)."""
    t = data.t - data.t[0]
    warm = 25.0 + 20.0 * (1.0 - np.exp(-3.0 * t / seconds))
    temps = {f"temp{j + 1}": warm for j in range(data.q.shape[1])}
    return {"ols": ({}, None), "wls": ({"estimator": "wls"}, None), "irls": ({"estimator": "irls"}, None),
            "pc": ({"estimator": "pc"}, None),
            "cycles": ({"cycles": "1-4,7-10"}, {"cycle": 1 + np.minimum((10 * t / seconds).astype(int), 9)}),
            "drift": ({"friction_drift": "temperature"}, temps), "stribeck": ({"friction": "stribeck"}, None),
            "short": ({"cycles": ",".join(str(c) for c in range(1, int(t[-1] // SHORT_CYCLE) + 2, 2))},
                      {"cycle": 1 + (t // SHORT_CYCLE).astype(int)})}


def coverage(robot, data, scale, truth, rate, args, kind: str) -> None:
    import dynid

    sigma = args.noise * scale
    table = modes(data, args.seconds)
    runs = {mode: [] for mode in args.modes.split(",")}
    seconds = {mode: 0.0 for mode in runs}
    kinds = {}
    for draw in range(args.draws):
        tau = data.tau + noise(data.tau.shape, sigma, rate, kind, args.corner, seed=1000 + draw)
        for mode in runs:
            options, columns = table[mode]
            start = time.perf_counter()
            result = dynid.Identification(robot, **options).fit(data.t, data.q, tau, columns=columns)
            seconds[mode] += time.perf_counter() - start
            drift = (result.document.get("friction_drift") or {}).get("parameters") or []
            names = list(result.names) + [p["name"] for p in drift]
            value = np.concatenate([result.values, [p["value"] for p in drift]]).astype(float)
            std = np.concatenate([result.std, [np.nan if p["std"] is None else p["std"] for p in drift]]).astype(float)
            white = (result.document.get("uncertainty") or {}).get("white_std") or result.std
            white = np.array([np.nan if w is None else w for w in white], dtype=float)
            white = np.concatenate([white, np.full(max(len(names) - white.size, 0), np.nan)])[:len(names)]
            runs[mode].append((value, std, names, white))
            kinds[mode] = (result.document.get("uncertainty") or {}).get("covariance", "white")
    for estimator, rows in runs.items():
        names = [name for name in rows[0][2] if all(name in r[2] for r in rows)]  # those of every draw (stribeck:
        if len(names) < len(rows[0][2]) or any(len(r[2]) != len(names) for r in rows):  # a joint's Fs may come and go)
            print(f"  {kind:8s} {estimator}: {len(names)} base parameters in every draw of {max(len(r[2]) for r in rows)}")
        rows = [(*(np.array([dict(zip(r[2], r[k]))[name] for name in names]) for k in (0, 1)), names,
                 np.array([dict(zip(r[2], r[3]))[name] for name in names])) for r in rows]
        # a drift coefficient ("Fc1_dT", from result "friction_drift") is 0: the log does not drift; Fs of
        # stribeck: no truth (NaN)
        true = np.array([truth.get(name, 0.0 if "_" in name else np.nan) for name in names])
        values, stds = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
        ok = np.all(np.isfinite(stds), axis=0) & (np.nanmean(stds, axis=0) > 0)
        ratio = np.std(values[:, ok], axis=0, ddof=1) / np.mean(stds[:, ok], axis=0)
        whites = np.array([r[3] for r in rows])[:, ok]
        to_white = np.nanmedian(np.std(values[:, ok], axis=0, ddof=1) / np.mean(whites, axis=0))
        lo, mid, hi = np.percentile(ratio, [10, 50, 90])
        within = np.mean((ratio > 0.7) & (ratio < 1.3))
        z = np.sqrt(np.mean(((values - true) / stds)[:, ok] ** 2, axis=0))  # bias included
        print(f"  {kind:8s} {estimator}: spread/std median {mid:.2f}, 10-90 % {lo:.2f}-{hi:.2f}, "
              f"range {ratio.min():.2f}-{ratio.max():.2f}, {100 * within:.0f} % of {ratio.size} within 0.7-1.3; "
              f"RMS (x - truth)/std median {np.nanmedian(z):.2f}, 90 % {np.nanpercentile(z, 90):.2f}, "
              f"largest {np.nanmax(z):.1f}; {seconds[estimator] / args.draws:.2f} s per fit; "
              f"covariance: {kinds[estimator]} (white-noise std: spread/std median {to_white:.2f})", flush=True)


def real(args) -> None:
    import dynid
    from shared_data import shared_path

    from dynid.cli.main import app
    from typer.testing import CliRunner

    iiwa = shared_path("real", "kuka_iiwa14")
    if iiwa is None:
        print("real: shared/real/kuka_iiwa14 not found (set DYNID_SHARED)")
        return
    signals = ("t=cur_traj_time_s.txt,q=joint_position_measured.txt,dq=joint_velocity_measured.txt,"
               "tau=joint_torque_measured.txt")
    estimators = [m for m in args.modes.split(",") if m in ("ols", "wls", "irls", "pc", "stribeck")]  # no cycles,
    with tempfile.TemporaryDirectory() as tmp:  # no temperatures in these logs
        results = {}
        for part in ("joint_2_to_7_dynamic_motion", "joint_3_to_7_dynamic_motion"):
            path = Path(tmp) / f"{part}.parquet"
            out = CliRunner().invoke(app, ["convert", str(iiwa / part), "--signals", signals, "--out", str(path)])
            assert out.exit_code == 0, out.output
            for estimator in estimators:
                out_json = Path(tmp) / f"{part}_{estimator}.json"
                start = time.perf_counter()
                option = ["--friction", "stribeck"] if estimator == "stribeck" else ["--estimator", estimator]
                res = CliRunner().invoke(app, ["identify", "--robot", str(iiwa / "urdf" / "iiwa14.urdf"), "--data",
                                               str(path), "--negate", "tau", "--ignore", "dq", *option, "--out",
                                               str(out_json)])
                assert res.exit_code == 0, res.output
                import json

                doc = json.loads(out_json.read_text())
                results[part, estimator] = (doc, time.perf_counter() - start)
        for estimator in estimators:
            (d1, s1), (d2, s2) = results["joint_2_to_7_dynamic_motion", estimator], \
                results["joint_3_to_7_dynamic_motion", estimator]
            p1 = {p["name"]: p for p in d1["base_parameters"]}
            p2 = {p["name"]: p for p in d2["base_parameters"]}
            z, names, white = [], [], []
            for name, p in p1.items():
                q = p2.get(name)
                if q is None or p["std"] is None or q["std"] is None:
                    continue
                if not any(f"{j}" in name for j in "34567") or any(name.endswith(f"{j}") for j in "12"):
                    continue
                z.append((p["value"] - q["value"]) / np.hypot(p["std"], q["std"]))
                names.append(name)
                w1, w2 = [(d.get("uncertainty") or {}).get("white_std") for d in (d1, d2)]
                if w1 and w2:  # the white-noise std of the same fits
                    i, k = list(p1).index(name), list(p2).index(name)
                    white.append(abs(p["value"] - q["value"]) / np.hypot(w1[i] or np.nan, w2[k] or np.nan))
            z = np.abs(np.array(z))
            worst = np.argsort(-z)[:3]
            print(f"  real iiwa {estimator}: |z| of {z.size} parameters both logs determine: median {np.median(z):.2f} "
                  f"(1 std honest: 0.67), {100 * np.mean(z < 2):.0f} % below 2 (honest: 95 %), largest "
                  f"{', '.join(f'{names[k]} {z[k]:.1f}' for k in worst)}; "
                  f"{s1:.1f} s and {s2:.1f} s; covariance: {(d1.get('uncertainty') or {}).get('covariance', 'white')}"
                  + (f" (white-noise std: median |z| {np.nanmedian(white):.2f}, {100 * np.nanmean(np.array(white) < 2):.0f} "
                     "% below 2)" if white else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=24)
    parser.add_argument("--robot", default="er3a")
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--noise", type=float, default=0.01, help="torque noise, share of each joint's RMS torque")
    parser.add_argument("--corner", type=float, default=5.0, help="corner of the filtered noise [Hz]")
    parser.add_argument("--cases", default="white,filtered")
    parser.add_argument("--modes", default="ols,wls", help="of ols,wls,irls,pc,cycles,drift,stribeck,short "
                        "(ols with --cycles and --friction-drift)")
    parser.add_argument("--real", action="store_true", help="also the real iiwa logs")
    parser.add_argument("--no-sim", action="store_true", help="only the real iiwa logs")
    args = parser.parse_args()
    import dynid
    from dynid.identify.threads import single_blas_thread

    print(f"{os.uname().nodename}; {args.draws} draws; {open('/proc/loadavg').read().split()[:3]} load")
    if not args.no_sim:
        robot = dynid.load_robot(args.robot)
        data, scale, truth = clean_log(robot, args.rate, args.seconds, seed=3)
        print(f"{args.robot}, {args.seconds:g} s at {args.rate:g} Hz ({len(data)} rows), noise {args.noise:g} x "
              f"each joint's RMS torque (filtered: {args.corner:g} Hz)")
        with single_blas_thread():
            for kind in args.cases.split(","):
                coverage(robot, data, scale, truth, args.rate, args, kind)
    if args.real or args.no_sim:
        real(args)


if __name__ == "__main__":
    main()
