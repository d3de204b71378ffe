"""Friction at rest: ``--rest auto`` (the default) against the alternatives, on simulated logs of
robots that stand still part of the time, and on the real KUKA iiwa 14 log.

Simulated logs (tests/realistic_logs.resting_log): a random multi-sine that stops and rests
about 30 % of the time (simulate/rest.py: raised-cosine stops of 0.3 s; the whole robot, or
each joint on its own with ``--apart``), torque noise 0.2 % and drive ripple 0.5 % of the RMS
torque, 500-count motor encoders (2^17-count joint encoders on a robot without gear ratios)
with 0.3 counts of jitter, 1 % of rows dropped, friction 5 %
of each joint's torque, and at rest the static friction holding a torque within +-1.2 Fc per
rest ("random": uniform; "last": the sign of the last motion times a uniform share). For each
robot a training log and a held-out log (another seed) are written; the cutoff is chosen by
``--lowpass auto``'s cross-validation (with and without rest detection), then each way of
treating rest is fitted (OLS, the streaming pipeline) and predicts the held-out log. Printed
per robot and method:

- Fc err: the largest |Fc_hat / Fc - 1| over the joints whose Coulomb coefficient the default
  fit determines to 1 % (its std); Fc z: the largest |Fc_hat - Fc| / std over all joints;
- rest: RMS(predicted - measured) over the held-out samples at rest, over what the true model
  leaves there (RMS(measured - true model, which has no friction at rest)): 1 = as good as
  the truth (nothing can predict the held static friction);
- moving: held-out relative error of the samples in motion; all: over all interior samples.

Methods: the default ``--rest auto`` (data/rest.py: standing still found on the raw
positions, velocity 0 there, those samples left out of the fit); ``--rest off`` (the old
default: the filtered velocity's sign everywhere); ``--min-velocity`` (slow samples left out
of the fit, the sign of the filtered velocity in the prediction); ``--smooth-sign`` (tanh);
a dead zone of the friction sign (not a dynid option, patched in here to compare).

The real iiwa (``--iiwa``): trained on joint_2_to_7, held out joint_3_to_7, with the options of
docs/workflow-own-robot.md; printed the held-out relative RMSD per joint over all samples and
over those at rest (|dq| < 0.01 rad/s without rest detection).

    .venv/bin/python bench/rest_friction.py [--robots er3a tx40 scara5 example:ur5] [--rate 100]
                                            [--held random last] [--apart] [--iiwa] [--verbose]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/realistic_logs.py


def methods():
    """(label, model options change, preprocessing change, dead zone) of every way compared;
    the preprocessing change None is ``--rest auto`` (data/rest.py), the default."""
    out = [("default (--rest auto)", {}, None, 0.0),
           ("--rest off (old default)", {}, {}, 0.0)]
    out += [(f"--min-velocity {v:g}", {}, {"min_velocity": v}, 0.0) for v in (0.005, 0.02, 0.05)]
    out += [(f"--smooth-sign {v:g}", {"smooth_sign": v}, {}, 0.0) for v in (0.005, 0.02, 0.05)]
    out += [(f"dead zone {v:g}", {}, {}, v) for v in (0.005, 0.02)]
    return out


@contextlib.contextmanager
def dead_zone(velocity: float):
    """The friction sign 0 below ``velocity`` (a dead zone, not a dynid option: compared here)."""
    from dynid.identify import model

    original = model._sign
    if velocity > 0:
        model._sign = lambda dq, smooth: np.where(np.abs(dq) < velocity, 0.0, original(dq, smooth))
    try:
        yield
    finally:
        model._sign = original


def _sources(train) -> list:
    """One training log or a list of them, as a list."""
    return list(train) if isinstance(train, (list, tuple)) else [train]


def defaults(robot, train, options, prep, mapping):
    """(prep of the old default: cutoff by cross-validation, no rest detection; prep of the new
    default: rest bands measured, then the cutoff by cross-validation; rest_detection)."""
    from dynid.data.rest import choose_rest
    from dynid.identify import base_parameters
    from dynid.identify.crossval import auto_lowpass

    base, train = base_parameters(robot, options), _sources(train)
    old, _, _ = auto_lowpass(robot, train, options, base, prep, mapping)
    rest, info, _ = choose_rest(robot, train, prep, mapping)
    new, _, _ = auto_lowpass(robot, train, options, base, rest, mapping)
    return old, new, info


def fit_predict(robot, train, check, options, prep, mapping, dead: float, estimator: str):
    """(result, prediction of the held-out log) through the streaming pipeline, with ``prep`` as
    given (the library's ``Identification`` would measure the rest bands and choose the cutoff
    itself: ``defaults`` did that once for every method)."""
    from dynid.identify.identification import Identification
    from dynid.identify.pipeline import accumulate_sources
    from dynid.identify.prediction import predict_file
    from dynid.identify.result import build_result

    with dead_zone(dead), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idn = Identification(robot, estimator=estimator, friction=options.friction, offset=options.offset,
                             rotor_inertia=options.rotor_inertia, smooth_sign=options.smooth_sign)
        base = idn.base_parameters()
        acc = accumulate_sources(robot, _sources(train), options, base, mapping, prep)
        est = idn.solve(acc.ne, acc.q_min, acc.q_max, base).est
        result = build_result(robot.name, robot, options, base, est, acc.ne, prep, mapping, acc.samples, [],
                              str(_sources(train)[0]), {})
        return result, predict_file(robot, result, check, mapping)


def simulated(robot_name, rate, seconds, held, seed, folder, verbose=False, together=True, recordings=1,
              ends=0.0, noise=0.002):
    """One robot: the table of every method on ``recordings`` training logs (one fit) and a
    held-out log; ``ends`` [s] of rest at the start and end of each log, torque ``noise`` as a
    share of the RMS torque."""
    import dynid
    from dynid.data.columns import ColumnMapping
    from dynid.data.io import write_joint_data
    from dynid.data.preprocess import Preprocessing
    from dynid.identify import ModelOptions
    from dynid.identify.model import motor_labels
    from realistic_logs import resting_log

    robot = dynid.load_robot(robot_name)
    counts = 500.0 if np.all(np.abs(robot.gear_ratios) > 1) else 2.0**17  # motor encoders behind gears, or joint encoders
    paths, truth = {"train": []}, {}
    for kind, s in [("train", seed + k) for k in range(recordings)] + [("check", seed + 50)]:
        data, t, _, at_rest, tau_model, friction = resting_log(robot, rate, seconds, s, held=held, together=together,
                                                               encoder_counts=counts, ends=ends, noise=noise)
        path = folder / f"{robot_name.replace(':', '_')}_{kind}_{held}_{s}.parquet"
        write_joint_data(path, data)
        if kind == "train":
            paths["train"].append(path)
        else:
            paths[kind] = path
        truth[kind] = (t, tau_model, at_rest)
    fc_true = friction[:, 0]
    options, mapping = ModelOptions(), ColumnMapping()
    old, new, info = defaults(robot, paths["train"], options, Preprocessing(), mapping)
    print(f"\n{robot_name} at {rate:g} Hz, {recordings} x {seconds:g} s{f' (each at rest {ends:g} s at both ends)' if ends else ''}, "
          f"torque noise {100 * noise:g} %, held friction '{held}', "
          f"{'the robot rests' if together else 'each joint rests on its own'}, rest "
          f"{100 * float(truth['check'][2].mean()):.0f} % (held-out log); cutoff {old.lowpass_hz or 0:.3g} Hz "
          f"(--rest auto: {new.lowpass_hz or 0:.3g} Hz), rest bands "
          + ", ".join(f"{v:.2g}" for v in new.rest_band))
    print(f"  {'method':28s} {'Fc err':>8s} {'Fc z':>6s} {'rest':>6s} {'moving':>8s} {'all':>8s} {'worst':>8s}")
    labels = motor_labels(robot)
    rows, sure = [], None
    for label, model_change, prep_change, dead in methods():
        prep = new if prep_change is None else replace(old, **prep_change)
        result, pred = fit_predict(robot, paths["train"], paths["check"], replace(options, **model_change), prep,
                                   mapping, dead, "ols")
        values = {b["name"]: (b["value"], b["std"]) for b in result["base_parameters"]}
        fc = np.array([values[f"Fc{lab}"][0] for lab in labels])
        std = np.array([values[f"Fc{lab}"][1] for lab in labels])
        sure = std < 0.01 * fc_true if sure is None else sure  # determined to 1 % by the default's fit
        fc_err = float(np.max(np.abs(fc / fc_true - 1.0)[sure]))
        fc_z = float(np.max(np.abs(fc - fc_true) / std))
        t, tau_model, at_rest = truth["check"]
        index = np.searchsorted(t, pred["t"]).clip(0, len(t) - 1)
        keep = pred["interior"]
        tau, err = pred["tau"][keep], pred["tau_hat"][keep] - pred["tau"][keep]
        rest, model = at_rest[index][keep], tau_model[index][keep]
        rest_ratio = float(np.sqrt(np.sum(err[rest] ** 2) / np.sum((tau - model)[rest] ** 2)))
        moving_err = float(np.sqrt(np.sum(err[~rest] ** 2) / np.sum(tau[~rest] ** 2)))
        all_err = float(np.sqrt(np.sum(err**2) / np.sum(tau**2)))
        worst = float(np.max(np.sqrt(np.sum(err**2, axis=0) / np.sum(tau**2, axis=0))))  # the worst joint's
        rows.append((label, fc_err, fc_z, rest_ratio, moving_err, all_err, worst))
        print(f"  {label:28s} {100 * fc_err:7.2f}% {fc_z:6.1f} {rest_ratio:6.2f} {100 * moving_err:7.3f}% "
              f"{100 * all_err:7.3f}% {100 * worst:7.3f}%"
              + ("   Fc/true - 1 per joint: " + " ".join(f"{100 * v:+.1f}%" for v in fc / fc_true - 1.0)
                 if verbose else ""), flush=True)
    return rows


def real_iiwa():
    """Held-out figures on the real iiwa (docs/workflow-own-robot.md's options) per method."""
    import subprocess

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from iiwa_options import SIGNALS, shared_iiwa

    import dynid
    from dynid.data.columns import ColumnMapping
    from dynid.data.preprocess import Preprocessing
    from dynid.identify import ModelOptions

    shared = shared_iiwa()
    urdf = str(shared / "urdf" / "iiwa14.urdf")
    robot = dynid.load_robot(urdf)
    mapping = ColumnMapping(negate=("tau",), ignore=("dq",))
    with tempfile.TemporaryDirectory() as tmp:
        train, check = Path(tmp) / "train.parquet", Path(tmp) / "check.parquet"
        for name, out in (("joint_2_to_7_dynamic_motion", train), ("joint_3_to_7_dynamic_motion", check)):
            subprocess.run([sys.executable, "-m", "dynid.cli.main", "convert", str(shared / name), "--signals",
                            SIGNALS, "--out", str(out)], check=True, capture_output=True)
        options = ModelOptions(offset=True)
        old, new, info = defaults(robot, train, options, Preprocessing(tau_delay=0.02), mapping)
        print(f"\nreal KUKA iiwa 14 (train joint_2_to_7, held out joint_3_to_7; --negate tau --ignore dq --offset "
              f"--tau-delay 0.02, WLS); cutoff {old.lowpass_hz:.3g} Hz (--rest auto: {new.lowpass_hz:.3g} Hz); "
              "rest bands " + ", ".join(f"{v:.2g}" for v in new.rest_band))
        print(f"  {'method':28s} {'all':>7s} | held-out relative RMSD per joint, all samples | at rest (|dq| < 0.01)")
        _, off = fit_predict(robot, train, check, options, old, mapping, 0.0, "wls")
        rest_t, rest_mask = off["t"], np.abs(off["dq"]) < 0.01  # at rest: |dq| < 0.01 rad/s without rest detection
        for label, model_change, prep_change, dead in methods():
            prep = new if prep_change is None else replace(old, **prep_change)
            _, pred = fit_predict(robot, train, check, replace(options, **model_change), prep, mapping, dead, "wls")
            k = pred["interior"]
            tau, err = pred["tau"][k], pred["tau_hat"][k] - pred["tau"][k]
            rest = rest_mask[np.searchsorted(rest_t, pred["t"][k]).clip(0, len(rest_t) - 1)]
            rel = np.sqrt(np.sum(err**2, axis=0) / np.sum(tau**2, axis=0))
            rel_rest = np.sqrt(np.sum(np.where(rest, err**2, 0), axis=0) / np.sum(np.where(rest, tau**2, 0), axis=0))
            total = np.sqrt(np.sum(err**2) / np.sum(tau**2))
            print(f"  {label:28s} {100 * total:6.2f}% | " + " ".join(f"{100 * v:5.1f}" for v in rel) + " | "
                  + " ".join(f"{100 * v:5.1f}" for v in rel_rest), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["er3a", "tx40", "scara5", "example:ur5"])
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--held", nargs="+", default=["random", "last"])
    parser.add_argument("--apart", action="store_true", help="each joint rests on its own (default: the robot)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--recordings", type=int, default=1, help="training logs in one fit (seeds seed, seed+1, ...)")
    parser.add_argument("--ends", type=float, default=0.0, help="each log starts and ends at rest for this long [s]")
    parser.add_argument("--noise", type=float, default=0.002, help="torque noise, share of the RMS torque (0.002; "
                        "motor currents: 0.02)")
    parser.add_argument("--iiwa", action="store_true", help="also the real iiwa log (../shared/real)")
    parser.add_argument("--verbose", action="store_true", help="each joint's Coulomb error")
    args = parser.parse_args()
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for held in args.held:
            for name in args.robots:
                simulated(name, args.rate, args.seconds, held, args.seed, Path(tmp), args.verbose, not args.apart,
                          args.recordings, args.ends, args.noise)
    if args.iiwa:
        real_iiwa()
    print(f"\n{time.time() - start:.0f} s wall")


if __name__ == "__main__":
    main()
