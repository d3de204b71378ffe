"""Coverage of the reported standard deviations with the default settings (docs/identification.md,
"What the standard deviations cover").

Simulated: one realistic log of a robot (tests/realistic_logs.resting_log: rests with static
friction, encoder quantization with jitter, dropped rows, drive ripple, friction in proportion to
each joint's torque), then ``--draws`` draws of torque noise (seeded), each identified through
``dynid.Identification`` with the defaults (ols, coulomb-viscous, --lowpass auto, --rest auto) and
with ``estimator="wls"``. The noise of joint j has the standard deviation ``--noise`` x its RMS
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

    .venv/bin/python bench/std_coverage.py [--draws 24] [--cases white,filtered] [--real]
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


def coverage(robot, data, scale, truth, rate, args, kind: str) -> None:
    import dynid

    sigma = args.noise * scale
    runs = {"ols": [], "wls": []}
    seconds = {"ols": 0.0, "wls": 0.0}
    kinds = {}
    for draw in range(args.draws):
        tau = data.tau + noise(data.tau.shape, sigma, rate, kind, args.corner, seed=1000 + draw)
        for estimator in runs:
            start = time.perf_counter()
            result = dynid.Identification(robot, estimator=estimator).fit(data.t, data.q, tau)
            seconds[estimator] += time.perf_counter() - start
            runs[estimator].append((np.array(result.values, dtype=float), np.array(result.std, dtype=float)))
            true = np.array([truth[name] for name in result.names])
            kinds[estimator] = (result.document.get("uncertainty") or {}).get("covariance", "white")
    for estimator, rows in runs.items():
        values, stds = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
        ok = np.all(np.isfinite(stds), axis=0) & (np.nanmean(stds, axis=0) > 0)
        ratio = np.std(values[:, ok], axis=0, ddof=1) / np.mean(stds[:, ok], axis=0)
        lo, mid, hi = np.percentile(ratio, [10, 50, 90])
        within = np.mean((ratio > 0.7) & (ratio < 1.3))
        z = np.sqrt(np.mean(((values - true) / stds)[:, ok] ** 2, axis=0))  # bias included
        print(f"  {kind:8s} {estimator}: spread/std median {mid:.2f}, 10-90 % {lo:.2f}-{hi:.2f}, "
              f"range {ratio.min():.2f}-{ratio.max():.2f}, {100 * within:.0f} % of {ratio.size} within 0.7-1.3; "
              f"RMS (x - truth)/std median {np.median(z):.2f}, 90 % {np.percentile(z, 90):.2f}, "
              f"largest {z.max():.1f}; {seconds[estimator] / args.draws:.2f} s per fit; "
              f"covariance: {kinds[estimator]}", flush=True)


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
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for part in ("joint_2_to_7_dynamic_motion", "joint_3_to_7_dynamic_motion"):
            path = Path(tmp) / f"{part}.parquet"
            out = CliRunner().invoke(app, ["convert", str(iiwa / part), "--signals", signals, "--out", str(path)])
            assert out.exit_code == 0, out.output
            for estimator in ("ols", "wls"):
                out_json = Path(tmp) / f"{part}_{estimator}.json"
                start = time.perf_counter()
                res = CliRunner().invoke(app, ["identify", "--robot", str(iiwa / "urdf" / "iiwa14.urdf"), "--data",
                                               str(path), "--negate", "tau", "--ignore", "dq", "--estimator",
                                               estimator, "--out", str(out_json)])
                assert res.exit_code == 0, res.output
                import json

                doc = json.loads(out_json.read_text())
                results[part, estimator] = (doc, time.perf_counter() - start)
        for estimator in ("ols", "wls"):
            (d1, s1), (d2, s2) = results["joint_2_to_7_dynamic_motion", estimator], \
                results["joint_3_to_7_dynamic_motion", estimator]
            p1 = {p["name"]: p for p in d1["base_parameters"]}
            p2 = {p["name"]: p for p in d2["base_parameters"]}
            z, names = [], []
            for name, p in p1.items():
                q = p2.get(name)
                if q is None or p["std"] is None or q["std"] is None:
                    continue
                if not any(f"{j}" in name for j in "34567") or any(name.endswith(f"{j}") for j in "12"):
                    continue
                z.append((p["value"] - q["value"]) / np.hypot(p["std"], q["std"]))
                names.append(name)
            z = np.abs(np.array(z))
            worst = np.argsort(-z)[:3]
            print(f"  real iiwa {estimator}: |z| of {z.size} parameters both logs determine: median {np.median(z):.2f} "
                  f"(1 std honest: 0.67), {100 * np.mean(z < 2):.0f} % below 2 (honest: 95 %), largest "
                  f"{', '.join(f'{names[k]} {z[k]:.1f}' for k in worst)}; "
                  f"{s1:.1f} s and {s2:.1f} s; covariance: {(d1.get('uncertainty') or {}).get('covariance', 'white')}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=24)
    parser.add_argument("--robot", default="er3a")
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--noise", type=float, default=0.01, help="torque noise, share of each joint's RMS torque")
    parser.add_argument("--corner", type=float, default=5.0, help="corner of the filtered noise [Hz]")
    parser.add_argument("--cases", default="white,filtered")
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
